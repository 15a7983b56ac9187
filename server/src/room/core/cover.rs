//! Who plays a person's turns: the person, or a stand-in bot, and until when. One enum says
//! what four fields once did (a stand-in, marked away, timed out on this turn, a count of
//! time-outs), so that only the states that happen can be held.
//!
//! - `Own` → `ThisTurn`: their turn timer ran out (they are connected); → `Away` instead when
//!   their last turn ran out of time too;
//! - `Own` → `UntilBack`: their turn waited the grace period while they were gone (a takeover);
//! - any but `Away` → `Away`: the host handed their seat to a bot;
//! - any with a stand-in → `UntilBack`: they said `back`;
//! - `ThisTurn` → `Own { timed_out: true }` once that turn is over; `UntilBack` → `Own` once
//!   they are connected and no turn of theirs is half played;
//! - any → `Own { timed_out: false }`: a move of their own, a new match, the table back in its
//!   lobby.

use dhumbal_bots::Bot;
use dhumbal_protocol::WhileAway;

/// A bot playing a person's turns for them, and what it has done for them (told when they have
/// their seat back).
pub(super) struct StandIn {
    /// The bot.
    pub(super) bot: Box<dyn Bot>,
    /// What it has played for them so far.
    pub(super) while_away: WhileAway,
}

impl StandIn {
    /// A stand-in that has done nothing yet.
    fn new(bot: Box<dyn Bot>) -> StandIn {
        StandIn {
            bot,
            while_away: WhileAway::default(),
        }
    }
}

/// Who plays a person's turns.
pub(super) enum Cover {
    /// They play their own turns. `timed_out`: their last turn ran out of time and they have
    /// not acted since, so that one more marks them away.
    Own {
        /// Their last turn ran out of time (one time-out in a row).
        timed_out: bool,
    },
    /// Their turn timer ran out: the stand-in plays just this turn, and leaves once the turn
    /// is over (their last turn having run out of time).
    ThisTurn(StandIn),
    /// The stand-in plays until they are connected and no turn of theirs is half played: their
    /// turn waited the grace period while they were gone, or they said `back`.
    UntilBack {
        /// The stand-in.
        stand_in: StandIn,
        /// As in [`Cover::Own`], for when they have their seat back.
        timed_out: bool,
    },
    /// Marked away: two turns in a row ran out of time, or the host handed their seat to a
    /// bot. The stand-in plays their turns until they act again (`back`, or a move).
    Away(StandIn),
}

impl Default for Cover {
    /// Their own turns, nothing counted.
    fn default() -> Cover {
        Cover::Own { timed_out: false }
    }
}

/// Whether a covered seat's stand-in has done its work, as [`Cover::hand_back`] is told.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) struct Handing {
    /// The turn being played is not this seat's (or no turn is).
    pub(super) turn_over: bool,
    /// The person is connected and no turn of theirs is half played.
    pub(super) free: bool,
}

impl Cover {
    /// The stand-in playing for them, if one is.
    pub(super) fn stand_in(&self) -> Option<&StandIn> {
        match self {
            Cover::Own { .. } => None,
            Cover::ThisTurn(stand_in)
            | Cover::UntilBack { stand_in, .. }
            | Cover::Away(stand_in) => Some(stand_in),
        }
    }

    /// The stand-in playing for them, to play or to tell.
    pub(super) fn stand_in_mut(&mut self) -> Option<&mut StandIn> {
        match self {
            Cover::Own { .. } => None,
            Cover::ThisTurn(stand_in)
            | Cover::UntilBack { stand_in, .. }
            | Cover::Away(stand_in) => Some(stand_in),
        }
    }

    /// Whether a stand-in plays for them.
    pub(super) fn is_covered(&self) -> bool {
        self.stand_in().is_some()
    }

    /// Whether they are marked away.
    pub(super) fn is_away(&self) -> bool {
        matches!(self, Cover::Away(_))
    }

    /// Their turn waited the grace period while they were gone: `bot` plays until they are
    /// back. Only from [`Cover::Own`] (a seat already covered stays as it is).
    pub(super) fn take_over(&mut self, bot: Box<dyn Bot>) {
        if let Cover::Own { timed_out } = *self {
            *self = Cover::UntilBack {
                stand_in: StandIn::new(bot),
                timed_out,
            };
        }
    }

    /// Their turn timer ran out: `bot` plays this turn, or, when their last turn ran out of
    /// time too, every turn until they act (marked away). Only from [`Cover::Own`]. Returns
    /// whether they are marked away now.
    pub(super) fn time_out(&mut self, bot: Box<dyn Bot>) -> bool {
        let Cover::Own { timed_out } = *self else {
            return self.is_away();
        };
        let stand_in = StandIn::new(bot);
        *self = if timed_out {
            Cover::Away(stand_in)
        } else {
            Cover::ThisTurn(stand_in)
        };
        timed_out
    }

    /// The host handed their seat to a bot: marked away, with the stand-in already playing for
    /// them or `bot()`. Returns `false` (changing nothing) if they are marked away already.
    pub(super) fn mark_away(&mut self, bot: impl FnOnce() -> Box<dyn Bot>) -> bool {
        let stand_in = match std::mem::take(self) {
            Cover::Away(stand_in) => {
                *self = Cover::Away(stand_in);
                return false;
            }
            Cover::Own { .. } => StandIn::new(bot()),
            Cover::ThisTurn(stand_in) | Cover::UntilBack { stand_in, .. } => stand_in,
        };
        *self = Cover::Away(stand_in);
        true
    }

    /// They said `back`: the stand-in leaves once they are connected and no turn of theirs is
    /// half played, and no time-out is counted. Returns `false` (changing nothing) if no
    /// stand-in plays for them.
    pub(super) fn back(&mut self) -> bool {
        match std::mem::take(self) {
            own @ Cover::Own { .. } => {
                *self = own;
                false
            }
            Cover::ThisTurn(stand_in)
            | Cover::UntilBack { stand_in, .. }
            | Cover::Away(stand_in) => {
                *self = Cover::UntilBack {
                    stand_in,
                    timed_out: false,
                };
                true
            }
        }
    }

    /// A move of their own: they play their turns again, no time-out counted. Returns what the
    /// stand-in did for them, if one covered.
    pub(super) fn own_move(&mut self) -> Option<WhileAway> {
        std::mem::take(self)
            .into_stand_in()
            .map(|stand_in| stand_in.while_away)
    }

    /// Gives the seat back if its stand-in's work is done: a stand-in for one timed-out turn
    /// once that turn is over; one until they are back once they are connected and no turn of
    /// theirs is half played; never one for a person marked away. Returns what the stand-in did
    /// for them, when it leaves.
    pub(super) fn hand_back(&mut self, handing: Handing) -> Option<WhileAway> {
        let timed_out = match self {
            Cover::ThisTurn(_) if handing.turn_over => true,
            Cover::UntilBack { timed_out, .. } if handing.free => *timed_out,
            Cover::Own { .. } | Cover::ThisTurn(_) | Cover::UntilBack { .. } | Cover::Away(_) => {
                return None;
            }
        };
        let stand_in = std::mem::replace(self, Cover::Own { timed_out }).into_stand_in();
        stand_in.map(|stand_in| stand_in.while_away)
    }

    /// The stand-in, taken out.
    fn into_stand_in(self) -> Option<StandIn> {
        match self {
            Cover::Own { .. } => None,
            Cover::ThisTurn(stand_in)
            | Cover::UntilBack { stand_in, .. }
            | Cover::Away(stand_in) => Some(stand_in),
        }
    }
}

#[cfg(test)]
mod tests {
    use dhumbal_bots::new_bot;
    use dhumbal_engine::Difficulty;

    use super::*;

    fn bot() -> Box<dyn Bot> {
        new_bot(Difficulty::Easy, 1)
    }

    /// What a state is, by name, for comparing.
    fn state(cover: &Cover) -> &'static str {
        match cover {
            Cover::Own { timed_out: false } => "own",
            Cover::Own { timed_out: true } => "own, timed out",
            Cover::ThisTurn(_) => "this turn",
            Cover::UntilBack {
                timed_out: false, ..
            } => "until back",
            Cover::UntilBack {
                timed_out: true, ..
            } => "until back, timed out",
            Cover::Away(_) => "away",
        }
    }

    const TURN_OVER: Handing = Handing {
        turn_over: true,
        free: false,
    };
    const FREE: Handing = Handing {
        turn_over: false,
        free: true,
    };
    const NEITHER: Handing = Handing {
        turn_over: false,
        free: false,
    };

    #[test]
    fn a_timed_out_turn_is_covered_for_that_turn_and_a_second_in_a_row_marks_away() {
        let mut cover = Cover::default();
        assert!(!cover.time_out(bot()));
        assert_eq!(state(&cover), "this turn");
        // Connected and free is not enough: the turn must be over.
        assert!(cover.hand_back(FREE).is_none());
        assert!(cover.hand_back(TURN_OVER).is_some());
        assert_eq!(state(&cover), "own, timed out");
        assert!(cover.time_out(bot()));
        assert_eq!(state(&cover), "away");
        assert!(cover.is_away() && cover.is_covered());
        // Away is never handed back on its own.
        for handing in [TURN_OVER, FREE, NEITHER] {
            assert!(cover.hand_back(handing).is_none());
        }
        // A covered seat takes no other stand-in.
        cover.take_over(bot());
        assert!(cover.time_out(bot()));
        assert_eq!(state(&cover), "away");
    }

    #[test]
    fn a_takeover_keeps_the_count_of_time_outs_until_the_seat_is_back() {
        let mut cover = Cover::Own { timed_out: true };
        cover.take_over(bot());
        assert_eq!(state(&cover), "until back, timed out");
        assert!(cover.hand_back(TURN_OVER).is_none());
        assert!(cover.hand_back(FREE).is_some());
        assert_eq!(state(&cover), "own, timed out");
    }

    #[test]
    fn back_and_an_own_move_clear_the_count_and_the_host_marks_away_once() {
        let mut cover = Cover::default();
        assert!(!cover.back());
        assert!(cover.own_move().is_none());
        assert!(cover.mark_away(bot));
        assert!(!cover.mark_away(|| unreachable!("already away")));
        assert!(cover.back());
        assert_eq!(state(&cover), "until back");
        // Marked away again, the stand-in playing stays.
        assert!(cover.mark_away(|| unreachable!("a stand-in plays already")));
        cover.stand_in_mut().expect("a stand-in").while_away.turns = 2;
        assert_eq!(cover.own_move().map(|summary| summary.turns), Some(2));
        assert_eq!(state(&cover), "own");
        let mut cover = Cover::Own { timed_out: true };
        cover.time_out(bot());
        assert!(cover.own_move().is_some());
        assert_eq!(state(&cover), "own");
    }
}
