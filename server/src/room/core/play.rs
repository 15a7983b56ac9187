//! The match: beginning it, moves, what every change tells everyone, chat, votes between rounds
//! and after the match, and the kept hand history.

use dhumbal_engine::{Action, Event, Phase};
use dhumbal_protocol::{SeedAnswer, ServerMessage, Stage, check_chat};
use tracing::{info, warn};

use super::{ApplyError, ConnId, Effect, Entropy, RoomCore, Seat, match_result};
use crate::error::Refusal;
use crate::room::record::{KeptMatch, Record, hand_history_json_with};

impl RoomCore {
    /// Begins a match (the first, or a rematch): draws its seed, deals, tells everyone.
    pub(super) fn begin_match(&mut self, entropy: &mut dyn Entropy) -> Result<(), Refusal> {
        let seed = match (&self.decks, self.next_seed) {
            (Some(_), _) => None,
            (None, Some(seed)) => Some(seed),
            // Only if no seed could be drawn when the last match ended.
            (None, None) => Some(entropy.seed().map_err(|e| {
                Refusal::internal(
                    &format!("room {}: no randomness for a shuffle", self.code),
                    e,
                )
            })?),
        };
        if self.game.is_some() {
            // A rematch: the log restarts from the room as it stands.
            self.outbox.restart_log_from(self.snapshot_now());
        }
        let before = self.stage();
        let events = match self.commit(Record::MatchBegun { seed }) {
            Ok(events) => events,
            Err(e) => return Err(self.internal(e)),
        };
        info!(room = %self.code, ?before, "match started");
        self.broadcast_room();
        self.after_change(events, Stage::Playing, None, entropy);
        // The match's bots, once the deal is told: they know it from the round's log.
        self.seat_bots(entropy);
        Ok(())
    }

    pub(super) fn play(
        &mut self,
        seat: Option<usize>,
        action: Action,
        entropy: &mut dyn Entropy,
    ) -> Result<(), Refusal> {
        let seat = self.require_seated(seat)?;
        if self.game.is_none() {
            return Err(Refusal::NotStarted);
        }
        let covered = self.human(seat).is_some_and(|h| h.cover.is_covered());
        if covered && self.stand_in_mid_turn(seat) {
            return Err(Refusal::StandInPlaying);
        }
        let before = self.stage();
        let events = self
            .commit(Record::Acted { seat, action })
            .map_err(|e| match e {
                ApplyError::Rule(e) => Refusal::Rule(e),
                other => self.internal(other),
            })?;
        // A move of their own: they are here, whoever was covering for them.
        if let Some(Seat::Human(human)) = self.seats.get_mut(seat) {
            if let Some(summary) = human.cover.own_move() {
                if let Some(conn) = human.conn {
                    self.outbox.while_away(conn, summary);
                }
                self.broadcast_room();
            }
        }
        self.after_change(events, before, None, entropy);
        Ok(())
    }

    /// Whether a stand-in has begun the turn being played in `seat` (drawn or thrown), so that
    /// it must finish it.
    pub(super) fn stand_in_mid_turn(&self, seat: usize) -> bool {
        self.turn_being_played() == Some(seat)
            && self
                .game
                .as_ref()
                .is_some_and(|g| matches!(g.phase(), Phase::Throw | Phase::Draw))
    }

    /// A list of events told, back for the next action's memory.
    fn recycle_events(&mut self, mut events: Vec<Event>) {
        events.clear();
        if events.capacity() > self.spare_events.capacity() {
            self.spare_events = events;
        }
    }

    /// After the game changed: tell everyone, in one `patch` each, the events and what changed
    /// in their views (the shared part compared and serialised once); at the match's end its result; move on if
    /// everyone has already agreed; let the next bot play.
    pub(super) fn after_change(
        &mut self,
        events: Vec<Event>,
        before: Stage,
        stand_in: Option<usize>,
        entropy: &mut dyn Entropy,
    ) {
        let mut match_over = false;
        for event in &events {
            for seat in &mut self.seats {
                if let Some(bot) = seat.playing_bot() {
                    bot.observe(event);
                }
            }
            match_over |= matches!(event, Event::MatchEnded { .. });
        }
        if events.iter().any(|e| matches!(e, Event::Dealt { .. })) {
            self.stand_in_marks.clear();
        }
        if let (Some(_), Some(game)) = (stand_in, &self.game) {
            let len = game.log().len();
            self.stand_in_marks
                .extend(len.saturating_sub(events.len())..len);
        }
        // A returning person's seat is theirs before the turn's clock is set and sent.
        if self.hand_back() {
            self.broadcast_room();
        }
        self.sync_clock(&events);
        self.tell_change(&events, stand_in);
        self.recycle_events(events);
        self.tell_while_away();
        if match_over {
            let number = self.matches;
            if let Some(result) = self.game.as_ref().and_then(|g| match_result(g, number)) {
                self.broadcast(&ServerMessage::MatchResult(result));
            }
            if let Some(kept) = self.kept_match() {
                self.outbox.push(Effect::KeepMatch(Box::new(kept)));
            }
            self.metrics.matches_finished.increment(1);
            info!(room = %self.code, "match over");
            self.draw_next_seed(entropy);
        }
        if self.stage() != before {
            self.broadcast_room();
            self.agreement_due = true;
        }
    }

    /// A seated person's chat line: checked, logged, then sent to everyone in the room.
    pub(super) fn say(&mut self, seat: usize, text: &str) -> Result<(), Refusal> {
        if self.human(seat).is_some_and(|h| h.muted) {
            return Err(Refusal::Muted);
        }
        let text = check_chat(text).map_err(Refusal::BadChat)?;
        self.commit(Record::Said { seat, text })
            .map_err(|e| self.internal(e))?;
        if let Some(line) = self.chat.back().cloned() {
            self.broadcast(&ServerMessage::Chat { line });
        }
        Ok(())
    }

    /// Draws the next match's seed as a match ends, so that its commitment is public before any
    /// client seed for it counts. Without randomness the rematch draws one at its start.
    pub(super) fn draw_next_seed(&mut self, entropy: &mut dyn Entropy) {
        if self.decks.is_some() {
            return;
        }
        match entropy.seed() {
            Ok(seed) => {
                if let Err(e) = self.commit(Record::SeedDrawn { seed }) {
                    warn!(room = %self.code, error = %e, "could not keep the next match's seed");
                }
            }
            Err(e) => tracing::error!(room = %self.code, error = %e, "no randomness for a seed"),
        }
    }

    /// The finished match's hand history, with the seats' names, for the store to keep; `None`
    /// before the match is over and for fixed test decks (nothing to verify).
    pub fn kept_match(&self) -> Option<KeptMatch> {
        let game = self.game.as_ref()?;
        let mut history = game.hand_history_head()?;
        let commitment = history.commitment?.to_string();
        history.players = self
            .seat_infos()
            .into_iter()
            .map(|s| s.name.unwrap_or_default())
            .collect();
        let token_hashes = self
            .seats
            .iter()
            .filter_map(|seat| match seat {
                Seat::Human(human) => Some(human.token_hash.clone()),
                Seat::Empty | Seat::Bot(_) => None,
            })
            .chain(self.left_match.iter().cloned())
            .collect();
        Some(KeptMatch {
            code: self.code.clone(),
            number: self.matches,
            commitment,
            token_hashes,
            history: hand_history_json_with(&history, game.rounds_so_far()),
        })
    }

    /// A `ready` or a `rematch` from `conn` (in `seat`, if seated), with the client seed it
    /// may carry: taken only at the stage it belongs to (`at`, else its refusal).
    pub(super) fn vote_at(
        &mut self,
        conn: ConnId,
        seat: Option<usize>,
        client_seed: Option<SeedAnswer>,
        at: (Stage, Refusal),
    ) -> Result<(), Refusal> {
        let seat = self.require_seated(seat)?;
        let (stage, refusal) = at;
        if self.stage() != stage {
            return Err(refusal);
        }
        self.check_client_seed(client_seed.as_ref())?;
        self.take_client_seed(conn, seat, client_seed)?;
        self.vote(seat)
    }

    /// Records a seat's `ready` (between rounds) or `rematch` (after the match).
    pub(super) fn vote(&mut self, seat: usize) -> Result<(), Refusal> {
        if !self.votes[seat] {
            self.commit(Record::Voted { seat })
                .map_err(|e| self.internal(e))?;
            self.broadcast_room();
        }
        self.agreement_due = true;
        Ok(())
    }

    /// Whether a seat has agreed to go on: bots always have; a person who is away is not waited
    /// for.
    pub(super) fn agreed(&self, seat: usize) -> bool {
        match &self.seats[seat] {
            Seat::Human(human) => self.votes[seat] || human.conn.is_none(),
            Seat::Bot(_) | Seat::Empty => true,
        }
    }

    /// Once an input is handled, as often as a step makes it due again: the next round, or the
    /// rematch, if every seat has agreed to go on. (A deal or a rematch is a change of its own,
    /// told like any other, rather than a change inside the one that made it due.)
    pub(super) fn go_on_if_agreed(&mut self, entropy: &mut dyn Entropy) {
        while std::mem::take(&mut self.agreement_due) {
            self.advance_if_all_voted(entropy);
        }
    }

    fn advance_if_all_voted(&mut self, entropy: &mut dyn Entropy) {
        if !matches!(self.stage(), Stage::BetweenRounds | Stage::MatchOver) {
            return;
        }
        if !(0..self.seats.len()).all(|s| self.agreed(s)) {
            return;
        }
        match self.stage() {
            Stage::BetweenRounds => match self.commit(Record::NextRound) {
                Ok(events) => {
                    self.broadcast_room();
                    self.after_change(events, Stage::Playing, None, entropy);
                }
                Err(e) => warn!(room = %self.code, error = %e, "could not deal"),
            },
            Stage::MatchOver => {
                // Only when somebody asked: a room whose people are all away waits for them.
                if !self.votes.iter().any(|v| *v) {
                    return;
                }
                info!(room = %self.code, "rematch");
                if let Err(e) = self.begin_match(entropy) {
                    warn!(room = %self.code, error = %e, "no rematch");
                }
            }
            Stage::Lobby | Stage::Playing => {}
        }
    }
}
