//! The log: every durable change goes through `apply`, live and in a replay; snapshots.

use dhumbal_engine::{Action, Event, FairDeal, Game, Settings};
use dhumbal_protocol::{CHAT_KEPT_LINES, ChatLine, Stage};

use super::{ApplyError, BotSeat, Human, Removed, RemovedWatcher, RoomCore, Seat};
use crate::error::Refusal;
use crate::room::record::{
    FORMAT, LedgerRecord, Record, RemovedRecord, RemovedWatcherRecord, SeatRecord, Snapshot,
};

impl RoomCore {
    /// Applies a record and keeps it for the log. The live path's only way to change the
    /// room for good.
    pub(super) fn commit(&mut self, record: Record) -> Result<Vec<Event>, ApplyError> {
        let events = self.apply(&record)?;
        self.outbox.record(record);
        Ok(events)
    }

    /// Applies one record to the room's durable state, and returns the game's events it caused.
    /// Nothing is sent and no bot plays here: this is also the replay.
    pub(super) fn apply(&mut self, record: &Record) -> Result<Vec<Event>, ApplyError> {
        let invalid = |why: &str| Err(ApplyError::Invalid(why.to_owned()));
        match record {
            Record::Seated {
                seat,
                name,
                token_hash,
            } => {
                if !matches!(self.seats.get(*seat), Some(Seat::Empty)) {
                    return invalid("the seat is not empty");
                }
                self.seats[*seat] = Seat::Human(Human::new(name.clone(), token_hash.clone()));
                self.timers.someone_sat();
            }
            Record::HostIs { seat } => {
                let Some(human) = self.human(*seat) else {
                    return invalid("no person sits there");
                };
                self.host_token = Some(human.token_hash.clone());
            }
            Record::Moved { from, to } => {
                if !matches!(self.seats.get(*from), Some(Seat::Human(_)))
                    || !matches!(self.seats.get(*to), Some(Seat::Empty))
                {
                    return invalid("not a move from a person's seat to an empty one");
                }
                self.seats.swap(*from, *to);
                // Their line of the ledger goes with them (the empty seat's, if any, back).
                for row in &mut self.ledger {
                    if row.seat == *from {
                        row.seat = *to;
                    } else if row.seat == *to {
                        row.seat = *from;
                    }
                }
                self.ledger.sort_by_key(|row| row.seat);
            }
            Record::SettingsSet { settings } => return self.apply_settings(settings),
            Record::BotAdded { seat, difficulty } => {
                if !matches!(self.seats.get(*seat), Some(Seat::Empty | Seat::Bot(_))) {
                    return invalid("the seat is not empty");
                }
                self.seats[*seat] = Seat::Bot(BotSeat {
                    difficulty: *difficulty,
                    bot: None,
                });
            }
            Record::Cleared { seat } => return self.apply_cleared(*seat),
            Record::Readmitted { index } => {
                if *index >= self.removed.len() {
                    return invalid("nobody removed has that number");
                }
                self.removed.remove(*index);
            }
            Record::MatchBegun { seed } => return self.apply_match_begun(*seed),
            Record::Acted { seat, action } => return self.apply_acted(*seat, action),
            Record::Voted { seat } => {
                let Some(vote) = self.votes.get_mut(*seat) else {
                    return invalid("no such seat");
                };
                *vote = true;
            }
            Record::NextRound => return self.apply_next_round(),
            Record::SeedDrawn { seed } => self.next_seed = Some(*seed),
            Record::ToLobby => return self.apply_to_lobby(),
            Record::Said { seat, text } => return self.apply_said(*seat, text),
            Record::Muted { seat, muted } => {
                let Some(Seat::Human(human)) = self.seats.get_mut(*seat) else {
                    return invalid("no person sits there");
                };
                human.muted = *muted;
            }
            Record::WatcherRemoved { name, address_hash } => {
                self.removed_watchers.push(RemovedWatcher {
                    name: name.clone(),
                    address_hash: address_hash.clone(),
                });
            }
            Record::WatcherReadmitted { index } => {
                if *index >= self.removed_watchers.len() {
                    return invalid("no removed watcher has that number");
                }
                self.removed_watchers.remove(*index);
            }
            Record::WatchingSet { allowed } => self.watching = *allowed,
            Record::ClientSeed {
                seat,
                seed,
                commitment,
            } => {
                let Some(Seat::Human(human)) = self.seats.get_mut(*seat) else {
                    return invalid("no person sits there");
                };
                human.client_seed = Some(*seed);
                human.seed_answers = *commitment;
            }
        }
        Ok(Vec::new())
    }

    /// The room's durable state without its match: what the log restarts from at a rematch.
    pub(super) fn snapshot_now(&self) -> Snapshot {
        Snapshot {
            format: FORMAT,
            settings: self.settings.clone(),
            seats: self
                .seats
                .iter()
                .map(|seat| match seat {
                    Seat::Empty => SeatRecord::Empty,
                    Seat::Human(human) => SeatRecord::Human {
                        name: human.name.clone(),
                        token_hash: human.token_hash.clone(),
                        client_seed: human.client_seed,
                        client_seed_answers: human.seed_answers,
                        muted: human.muted,
                    },
                    Seat::Bot(bot) => SeatRecord::Bot {
                        difficulty: bot.difficulty,
                    },
                })
                .collect(),
            host: self.host_token.clone(),
            removed: self
                .removed
                .iter()
                .map(|r| RemovedRecord {
                    name: r.name.clone(),
                    token_hash: r.token_hash.clone(),
                })
                .collect(),
            matches: self.matches,
            next_seed: self.next_seed,
            chat: self.chat.iter().cloned().collect(),
            watching: self.watching,
            removed_watchers: self
                .removed_watchers
                .iter()
                .map(|r| RemovedWatcherRecord {
                    name: r.name.clone(),
                    address_hash: r.address_hash.clone(),
                })
                .collect(),
            ledger: self.ledger.clone(),
        }
    }

    /// Takes the durable state from a snapshot.
    pub(super) fn load_snapshot(&mut self, snapshot: Snapshot) {
        // A snapshot is taken as a match ends: people have sat here.
        self.timers.someone_sat();
        self.votes = vec![false; snapshot.seats.len()];
        self.seats = snapshot
            .seats
            .into_iter()
            .map(|seat| match seat {
                SeatRecord::Empty => Seat::Empty,
                SeatRecord::Human {
                    name,
                    token_hash,
                    client_seed,
                    client_seed_answers,
                    muted,
                } => Seat::Human(Human {
                    client_seed,
                    seed_answers: client_seed_answers,
                    muted,
                    ..Human::new(name, token_hash)
                }),
                SeatRecord::Bot { difficulty } => Seat::Bot(BotSeat {
                    difficulty,
                    bot: None,
                }),
            })
            .collect();
        self.settings = snapshot.settings;
        self.host_token = snapshot.host;
        self.matches = snapshot.matches;
        self.ledger = snapshot.ledger;
        self.ledger.sort_by_key(|row| row.seat);
        self.ledger.dedup_by_key(|row| row.seat);
        self.next_seed = snapshot.next_seed;
        self.chat = snapshot.chat.into();
        self.watching = snapshot.watching;
        self.removed_watchers = snapshot
            .removed_watchers
            .into_iter()
            .map(|r| RemovedWatcher {
                name: r.name,
                address_hash: r.address_hash,
            })
            .collect();
        self.removed = snapshot
            .removed
            .into_iter()
            .map(|r| Removed {
                name: r.name,
                token_hash: r.token_hash,
            })
            .collect();
    }

    /// A durable change the live path could not make: the room's own state broke a rule it
    /// checked a moment before. Logged, and answered as an internal error.
    pub(super) fn internal(&self, e: ApplyError) -> Refusal {
        Refusal::internal(
            &format!("room {}: a checked change did not apply", self.code),
            e,
        )
    }

    /// A match begins from `seed` (or the room's fixed decks): bots fill the empty seats.
    fn apply_match_begun(&mut self, seed: Option<[u8; 32]>) -> Result<Vec<Event>, ApplyError> {
        let number = self.matches + 1;
        let game = match (&self.decks, seed) {
            (Some(decks), _) => Game::with_decks(self.settings.clone(), decks.clone()),
            (None, Some(seed)) => {
                let deal = FairDeal {
                    seed,
                    room: self.code.clone(),
                    match_number: number,
                };
                let seeds = self.client_seeds_for(dhumbal_engine::fair::commitment(&seed));
                Game::fair(self.settings.clone(), deal, seeds)
            }
            (None, None) => {
                return Err(ApplyError::Invalid(
                    "a match without a seed or decks".to_owned(),
                ));
            }
        }
        .map_err(|e| ApplyError::Invalid(e.to_string()))?;
        self.matches = number;
        self.next_seed = None;
        self.left_match.clear();
        let difficulty = self.settings.difficulty;
        // Each bot is made afresh for the match, by the live path (`seat_bots`): no bot plays
        // in a replay.
        for seat in &mut self.seats {
            match seat {
                Seat::Empty => {
                    *seat = Seat::Bot(BotSeat {
                        difficulty,
                        bot: None,
                    });
                }
                Seat::Bot(bot) => bot.bot = None,
                // A stand-in remembers the last match; it is made afresh if needed.
                Seat::Human(human) => human.clear_absence(),
            }
        }
        let events = game.log().to_vec();
        self.game = Some(game);
        self.votes.fill(false);
        Ok(events)
    }

    /// A seat's move, by its person, a stand-in or a bot; the stage follows the game.
    fn apply_acted(&mut self, seat: usize, action: &Action) -> Result<Vec<Event>, ApplyError> {
        let Some(game) = &mut self.game else {
            return Err(ApplyError::Invalid("no match is being played".to_owned()));
        };
        let mut events = std::mem::take(&mut self.spare_events);
        if let Err(e) = game.apply_into(seat, action.clone(), &mut events) {
            self.spare_events = events;
            return Err(ApplyError::Rule(e));
        }
        for event in &events {
            if matches!(event, Event::RoundEnded { .. } | Event::MatchEnded { .. }) {
                self.votes.fill(false);
            }
            if let Event::MatchEnded { standings } = event {
                count_match(&mut self.ledger, standings);
            }
        }
        if self.stage() == Stage::MatchOver {
            // The next match's client seeds must come after its commitment.
            for seat in &mut self.seats {
                if let Seat::Human(human) = seat {
                    human.client_seed = None;
                    human.seed_answers = None;
                }
            }
        }
        Ok(events)
    }

    /// The lobby's new settings: seats added or taken away (never a person's).
    fn apply_settings(&mut self, settings: &Settings) -> Result<Vec<Event>, ApplyError> {
        settings
            .validate()
            .map_err(|e| ApplyError::Invalid(e.to_string()))?;
        let players = usize::from(settings.players);
        if self.seats[players.min(self.seats.len())..]
            .iter()
            .any(|s| matches!(s, Seat::Human(_)))
        {
            return Err(ApplyError::Invalid(
                "a person sits beyond the new seats".to_owned(),
            ));
        }
        self.seats.truncate(players);
        self.seats.resize_with(players, || Seat::Empty);
        self.votes = vec![false; players];
        self.settings = settings.clone();
        Ok(Vec::new())
    }

    /// A seat emptied; a person in it is removed (during a match a bot takes the seat).
    fn apply_cleared(&mut self, seat: usize) -> Result<Vec<Event>, ApplyError> {
        let Some(occupant) = self.seats.get_mut(seat) else {
            return Err(ApplyError::Invalid("no such seat".to_owned()));
        };
        // During a match a bot of the table's difficulty plays the seat from here on (made by
        // the live path, `seat_bots`).
        let replacement = match &self.game {
            Some(_) => Seat::Bot(BotSeat {
                difficulty: self.settings.difficulty,
                bot: None,
            }),
            None => Seat::Empty,
        };
        if let Seat::Human(human) = std::mem::replace(occupant, replacement) {
            // They sat in this match: its hand history stays theirs to download.
            if self.game.is_some() {
                self.left_match.push(human.token_hash.clone());
            }
            self.removed.push(Removed {
                name: human.name,
                token_hash: human.token_hash,
            });
        }
        Ok(Vec::new())
    }

    /// Everyone present agreed: the next round is dealt, with the client seeds in force.
    fn apply_next_round(&mut self) -> Result<Vec<Event>, ApplyError> {
        let Some(commitment) = self.game.as_ref().map(Game::commitment) else {
            return Err(ApplyError::Invalid("no match is being played".to_owned()));
        };
        let seeds = commitment.map_or_else(Vec::new, |c| self.client_seeds_for(c));
        let Some(game) = &mut self.game else {
            return Err(ApplyError::Invalid("no match is being played".to_owned()));
        };
        game.set_client_seeds(seeds);
        let events = game.next_round().map_err(ApplyError::Rule)?;
        self.votes.fill(false);
        Ok(events)
    }

    /// After the match, back to the lobby with the same people.
    fn apply_to_lobby(&mut self) -> Result<Vec<Event>, ApplyError> {
        if !matches!(self.stage(), Stage::MatchOver | Stage::Lobby) {
            return Err(ApplyError::Invalid("the match is not over".to_owned()));
        }
        self.game = None;
        self.votes.fill(false);
        for seat in &mut self.seats {
            if let Seat::Human(human) = seat {
                human.clear_absence();
            }
        }
        Ok(Vec::new())
    }

    /// A chat line, kept with the last ones.
    fn apply_said(&mut self, seat: usize, text: &str) -> Result<Vec<Event>, ApplyError> {
        let Some(human) = self.human(seat) else {
            return Err(ApplyError::Invalid("no person sits there".to_owned()));
        };
        let line = ChatLine {
            seat: Some(seat),
            name: human.name.clone(),
            text: text.to_owned(),
        };
        if self.chat.len() == CHAT_KEPT_LINES {
            self.chat.pop_front();
        }
        self.chat.push_back(line);
        Ok(Vec::new())
    }
}

/// Adds a finished match to the ledger: every seat played it, those in first place won it
/// (each of them, when the place is shared), and each adds its final Total to its points.
pub(super) fn count_match(ledger: &mut Vec<LedgerRecord>, standings: &[dhumbal_engine::Standing]) {
    for standing in standings {
        let at = match ledger.binary_search_by_key(&standing.seat, |row| row.seat) {
            Ok(at) => at,
            Err(at) => {
                ledger.insert(
                    at,
                    LedgerRecord {
                        seat: standing.seat,
                        ..LedgerRecord::default()
                    },
                );
                at
            }
        };
        let row = &mut ledger[at];
        row.played += 1;
        row.won += u32::from(standing.place == 1);
        row.points += standing.total;
    }
}
