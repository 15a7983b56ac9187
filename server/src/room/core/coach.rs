//! The coach at the table: a hint on your turn ([`ClientMessage::Hint`]) and a review of the match
//! that has just ended ([`ClientMessage::Review`]).
//!
//! The core decides who may ask for what (the table's `hints` setting, whose turn it is, which
//! seat a person may review) and hands the work out as an [`Effect::Coach`]: weighing moves takes
//! milliseconds, a review of a match up to a second or two, far too long for a room's task. The
//! job holds only what the asker may know: for a hint, the seat's own view and the public
//! history; for a review, the finished match's hand history, every card of which the table has
//! seen at the end, and which [`dhumbal_bots::coach::review`] reads one seat's view at a time.
//! The answer changes nothing at the table, so nothing is logged: it goes straight to the one
//! connection that asked ([`CoachJob::run`] makes its text).
//!
//! [`ClientMessage::Hint`]: dhumbal_protocol::ClientMessage::Hint
//! [`ClientMessage::Review`]: dhumbal_protocol::ClientMessage::Review

use dhumbal_bots::coach::{CoachParams, advise, review};
use dhumbal_engine::{HandHistory, PublicHistory, RuleError, SeatView};
use dhumbal_protocol::{MessageId, ServerMessage};

use super::{ConnId, Effect, RoomCore};
use crate::error::Refusal;
use crate::room::client::Text;

/// What the coach is asked.
#[derive(Debug)]
pub enum Ask {
    /// A hint for the seat on its turn.
    Hint {
        /// The version of the asker's view it weighs (the page drops a hint for another).
        v: u64,
        /// The seat's view.
        view: Box<SeatView>,
        /// The table's public history.
        history: Box<PublicHistory>,
    },
    /// A review of one seat's decisions in a finished match.
    Review {
        /// The match's number in the room.
        match_number: u32,
        /// The seat to review.
        seat: usize,
        /// The match, every card face up.
        history: Box<HandHistory>,
    },
}

/// Work for the coach, and who asked.
#[derive(Debug)]
pub struct CoachJob {
    /// The connection that asked, which alone hears the answer.
    pub conn: ConnId,
    /// The asking message's `id`, echoed by a `coach_busy` refusal.
    pub id: Option<MessageId>,
    /// The room's code (a review is cached by it).
    pub code: String,
    /// What is asked.
    pub ask: Ask,
}

impl CoachJob {
    /// Where a review's answer is cached: the room, the match and the seat (`None` for a hint,
    /// which is never cached).
    pub fn cache_key(&self) -> Option<(String, u32, usize)> {
        match &self.ask {
            Ask::Hint { .. } => None,
            Ask::Review {
                match_number, seat, ..
            } => Some((self.code.clone(), *match_number, *seat)),
        }
    }

    /// Does the work (milliseconds for a hint, up to a second or two for a review: run it
    /// where blocking is allowed) and returns the message for the asker.
    pub fn run(self) -> Text {
        let message = match self.ask {
            Ask::Hint { v, view, history } => {
                let seed = u64::from(view.round) << 32 ^ u64::from(view.throws);
                let advice = advise(&view, &history, None, &CoachParams::HINT, seed);
                ServerMessage::Hint { v, advice }
            }
            Ask::Review {
                match_number,
                seat,
                history,
            } => match review(&history, seat, &CoachParams::REVIEW) {
                Ok(review) => ServerMessage::Review {
                    match_number,
                    review,
                },
                Err(why) => {
                    tracing::error!(code = %self.code, match_number, seat, %why, "a kept match does not replay");
                    Refusal::Internal.message(self.id)
                }
            },
        };
        message.to_json().into()
    }
}

impl RoomCore {
    /// `hint`: the seat's person, on their turn, at a table that allows hints.
    pub(super) fn ask_hint(
        &mut self,
        conn: ConnId,
        id: Option<MessageId>,
        seat: Option<usize>,
    ) -> Result<(), Refusal> {
        let seat = self.require_seated(seat)?;
        if !self.settings.hints {
            return Err(Refusal::HintsOff);
        }
        let game = self.game.as_ref().ok_or(Refusal::NotStarted)?;
        let view = game.view(seat);
        if game.is_over() || !view.my_turn() {
            return Err(Refusal::Rule(RuleError::NotYourTurn));
        }
        let v = self
            .clients
            .get(&conn)
            .and_then(|c| c.view_v)
            .unwrap_or_default();
        let job = CoachJob {
            conn,
            id,
            code: self.code.clone(),
            ask: Ask::Hint {
                v,
                view: Box::new(view),
                history: Box::new(game.public_history().clone()),
            },
        };
        self.outbox.push(Effect::Coach(Box::new(job)));
        Ok(())
    }

    /// `review`: once the match is over, a seated person's own seat, or any seat for a watcher
    /// (who saw every hand and the revealed seed at the end).
    pub(super) fn ask_review(
        &mut self,
        conn: ConnId,
        id: Option<MessageId>,
        seat: Option<usize>,
        asked: Option<usize>,
    ) -> Result<(), Refusal> {
        let game = self
            .game
            .as_ref()
            .filter(|g| g.is_over())
            .ok_or(Refusal::NoReview)?;
        let target = match (seat, asked) {
            (Some(mine), None) => mine,
            (Some(mine), Some(asked)) if asked == mine => mine,
            (Some(_), Some(_)) => return Err(Refusal::NotYourSeat),
            (None, Some(asked)) => asked,
            (None, None) => return Err(Refusal::NotSeated),
        };
        if target >= game.seats() {
            return Err(Refusal::NoSuchSeat(target));
        }
        // Fixed test decks keep no hand history: nothing to replay.
        let history = game.hand_history().ok_or(Refusal::NoReview)?;
        let job = CoachJob {
            conn,
            id,
            code: self.code.clone(),
            ask: Ask::Review {
                match_number: self.matches,
                seat: target,
                history: Box::new(history),
            },
        };
        self.outbox.push(Effect::Coach(Box::new(job)));
        Ok(())
    }
}
