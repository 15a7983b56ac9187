//! Bots and stand-ins: the bot whose turn it is, a person's stand-in when they are away or out of
//! time, the turn's clock, seats handed back, and the seat metrics.

use super::*;

impl RoomCore {
    /// Tells each person who got their seat back what the stand-in did for them.
    pub(super) fn tell_while_away(&mut self) {
        for (conn, summary) in std::mem::take(&mut self.while_away) {
            self.send_to(conn, &ServerMessage::WhileAway(summary));
        }
    }

    /// Gives seats back to their people where a stand-in's work is done: a person who returned
    /// (and is not marked away) gets it unless a turn is half played for them; a stand-in that
    /// played one timed-out turn leaves once that turn is over. Each person who gets their seat
    /// back hears what the stand-in did. Returns whether any seat changed hands.
    pub(super) fn hand_back(&mut self) -> bool {
        let turn = self.turn_being_played();
        let mid_turn = self
            .game
            .as_ref()
            .is_some_and(|g| matches!(g.phase(), Phase::Throw | Phase::Draw));
        let mut told = Vec::new();
        for (seat, occupant) in self.seats.iter_mut().enumerate() {
            let Seat::Human(human) = occupant else {
                continue;
            };
            if human.stand_in.is_none() {
                continue;
            }
            let finishing = turn == Some(seat) && mid_turn;
            let done = if human.timed_out_turn {
                turn != Some(seat)
            } else {
                human.conn.is_some() && !human.away && !finishing
            };
            if done {
                human.stand_in = None;
                human.timed_out_turn = false;
                info!(room = %self.code, seat, "seat handed back");
                let summary = std::mem::take(&mut human.while_away);
                told.push((human.conn, summary));
            }
        }
        let handed_back = !told.is_empty();
        for (conn, summary) in told {
            if let Some(conn) = conn.filter(|_| summary.turns > 0 || !summary.events.is_empty()) {
                self.while_away.push((conn, summary));
            }
        }
        handed_back
    }

    /// Brings the turn timer up to date after `events` (none for a change outside the game): a
    /// person's turn gets a fresh clock when it begins, keeps it through the turn, and has none
    /// while a stand-in plays it. Returns whether the clock started anew or stopped.
    pub(super) fn sync_clock(&mut self, events: &[Event]) -> bool {
        let before = self.turn_clock;
        let person = self
            .turn_being_played()
            .filter(|&seat| self.human(seat).is_some_and(|h| h.stand_in.is_none()));
        self.turn_clock = match (self.settings.turn_timer, person) {
            (Some(seconds), Some(seat)) => {
                let dealt = events.iter().any(|e| matches!(e, Event::Dealt { .. }));
                match before {
                    Some((running, due)) if running == seat && !dealt => Some((seat, due)),
                    _ => Some((seat, self.now + Duration::from_secs(seconds.into()))),
                }
            }
            _ => None,
        };
        self.turn_clock != before
    }

    /// The turn's clock as clients see it, now.
    pub(super) fn clock(&self) -> Option<TurnClock> {
        let (seat, due) = self.turn_clock?;
        let total = Duration::from_secs(self.settings.turn_timer?.into());
        Some(TurnClock {
            seat,
            left_ms: millis(due.saturating_duration_since(self.now)),
            total_ms: millis(total),
        })
    }

    /// New bots for every bot seat, told the current round's public log (after a replay).
    pub(super) fn rebuild_bots(&mut self) {
        let Some(game) = &self.game else {
            return;
        };
        for seat in &mut self.seats {
            if let Seat::Bot(bot) = seat {
                bot.bot = Some(bot_knowing(bot.difficulty, game));
            }
        }
    }

    /// The seat whose turn a bot plays now (a bot's seat, or an away person's stand-in).
    pub(super) fn bot_to_play(&self) -> Option<usize> {
        let seat = self.turn_being_played()?;
        match &self.seats[seat] {
            Seat::Bot(_)
            | Seat::Human(Human {
                stand_in: Some(_), ..
            }) => Some(seat),
            _ => None,
        }
    }

    /// The seat to play, while a round is being played.
    pub(super) fn turn_being_played(&self) -> Option<usize> {
        let game = self.game.as_ref()?;
        let playing = matches!(game.phase(), Phase::Start | Phase::Throw | Phase::Draw);
        (self.stage() == Stage::Playing && playing).then(|| game.turn())
    }

    /// An away person's turn has waited the grace period: a bot of the table's difficulty plays
    /// for them, knowing what the round's public log tells.
    pub(super) fn take_over(&mut self, seat: usize) {
        let difficulty = self.settings.difficulty;
        let Some(game) = &self.game else {
            return;
        };
        let Seat::Human(human) = &mut self.seats[seat] else {
            return;
        };
        if human.conn.is_some() || human.stand_in.is_some() {
            return;
        }
        human.stand_in = Some(bot_knowing(difficulty, game));
        self.metrics.bot_takeovers.increment(1);
        info!(room = %self.code, seat, "a bot plays for an away person");
        self.broadcast_room();
    }

    /// A connected person's turn timer ran out: a stand-in plays this turn, and after two in a
    /// row every turn until they act again. Everyone hears of it. (A person who has gone plays
    /// by the usual takeover, without counting.)
    pub(super) fn time_out(&mut self, seat: usize) {
        let difficulty = self.settings.difficulty;
        let Some(game) = &self.game else {
            return;
        };
        let Seat::Human(human) = &mut self.seats[seat] else {
            return;
        };
        if human.stand_in.is_some() {
            return;
        }
        if human.conn.is_none() {
            self.take_over(seat);
            return;
        }
        human.timeouts = human.timeouts.saturating_add(1);
        human.away = human.timeouts >= 2;
        human.timed_out_turn = !human.away;
        human.stand_in = Some(bot_knowing(difficulty, game));
        let notice = Notice::TimedOut {
            seat,
            name: human.name.clone(),
            away: human.away,
        };
        self.metrics.bot_takeovers.increment(1);
        info!(room = %self.code, seat, "a turn ran out of time");
        self.broadcast(&ServerMessage::Notice(notice));
        self.broadcast_room();
    }

    /// The bot whose turn it is chooses; its action is committed like anyone's.
    pub(super) fn bot_step(&mut self, entropy: &mut dyn Entropy) {
        let Some(seat) = self.bot_to_play() else {
            return;
        };
        let Some(game) = &self.game else {
            return;
        };
        let view = game.view(seat);
        let legal = game.legal_actions(seat);
        let bot = match &mut self.seats[seat] {
            Seat::Bot(BotSeat { bot: Some(bot), .. })
            | Seat::Human(Human {
                stand_in: Some(bot),
                ..
            }) => bot,
            _ => return,
        };
        // A bot must never stall the table: if it fails (panics, or chooses an illegal action),
        // log its mistake and play the first legal action for it.
        let chosen = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| bot.choose(&view)));
        let before = self.stage();
        let played = match chosen {
            Ok(action) => match self.commit(Record::Acted {
                seat,
                action: action.clone(),
            }) {
                Ok(events) => Some(events),
                Err(e) => {
                    warn!(room = %self.code, seat, ?action, error = %e, "bot chose an illegal action");
                    None
                }
            },
            Err(_) => {
                warn!(room = %self.code, seat, "bot failed to choose an action");
                None
            }
        };
        let events = match played {
            Some(events) => events,
            None => {
                let Some(first) = legal.into_iter().next() else {
                    return;
                };
                match self.commit(Record::Acted {
                    seat,
                    action: first,
                }) {
                    Ok(events) => events,
                    Err(e) => {
                        warn!(room = %self.code, seat, error = %e, "a legal action failed");
                        return;
                    }
                }
            }
        };
        let stand_in = self.note_stand_in_move(seat, &events);
        self.after_change(events, before, stand_in, entropy);
    }

    /// When `seat` is a person's, adds a stand-in's move to what they will be told and returns
    /// the seat (the events are the stand-in's); `None` for a bot's own seat.
    pub(super) fn note_stand_in_move(&mut self, seat: usize, events: &[Event]) -> Option<usize> {
        let next_turn = self.game.as_ref().map(Game::turn);
        let Seat::Human(human) = &mut self.seats[seat] else {
            return None;
        };
        let summary = &mut human.while_away;
        let mut round_ended = false;
        for event in events {
            match event {
                Event::RoundEnded { .. } => round_ended = true,
                Event::MatchEnded { .. } | Event::Dealt { .. } => {}
                _ => summary.events.push(event.clone()),
            }
        }
        if round_ended || next_turn != Some(seat) {
            summary.turns += 1;
        }
        summary.rounds_ended += u32::from(round_ended);
        Some(seat)
    }

    /// Brings the metrics' seat counts up to date with this room's seats (to zero when the room
    /// is `closing`).
    pub(super) fn report_seats(&mut self, closing: bool) {
        let (mut humans, mut bots) = (0, 0);
        if !closing {
            for seat in &self.seats {
                match seat {
                    Seat::Human(_) => humans += 1,
                    Seat::Bot(_) => bots += 1,
                    Seat::Empty => {}
                }
            }
        }
        let (was_humans, was_bots) = self.reported_seats;
        if humans != was_humans {
            self.metrics.seated(Seated::Human, humans - was_humans);
        }
        if bots != was_bots {
            self.metrics.seated(Seated::Bot, bots - was_bots);
        }
        self.reported_seats = (humans, bots);
    }

    /// Whether the timer due at `now` lets a bot that thinks (an expert, whose search takes
    /// milliseconds) choose: the actor then runs the step where it may block.
    pub fn thinking_bot_due(&self, now: Instant) -> bool {
        if self.bot_due.is_none_or(|due| due > now) {
            return false;
        }
        let Some(seat) = self.bot_to_play() else {
            return false;
        };
        match &self.seats[seat] {
            Seat::Bot(BotSeat { bot: Some(bot), .. })
            | Seat::Human(Human {
                stand_in: Some(bot),
                ..
            }) => bot.difficulty() == Difficulty::Expert,
            _ => false,
        }
    }
}
