//! Why an action is refused.
//!
//! Every refusal is a [`RuleError`] with a stable snake_case [`code`](RuleError::code) for the
//! wire and a sentence for people ([`Display`](std::fmt::Display)). A refused action never
//! changes the game.

use crate::card::Card;

/// Why the game refused an action. The game is unchanged.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum RuleError {
    /// The seat number is not at this table.
    #[error("there is no seat {0} at this table")]
    NoSuchSeat(usize),
    /// Another seat is to play.
    #[error("it is not your turn")]
    NotYourTurn,
    /// The round has ended; the next deal has not started.
    #[error("the round is over; wait for the next deal")]
    RoundOver,
    /// The match has ended.
    #[error("the match is over")]
    MatchOver,
    /// The next round can only be dealt once the current one has ended.
    #[error("the round is still being played")]
    RoundNotOver,
    /// A call is only allowed at the start of a turn, before drawing or throwing.
    #[error("you can only call at the start of your turn, before you draw or throw")]
    CallTooLate,
    /// The hand is over the table's call limit.
    #[error("you hold {total}, and a call needs {limit} or less")]
    OverLimit {
        /// The caller's hand total.
        total: u32,
        /// The table's call limit.
        limit: u32,
    },
    /// At a draw-then-throw table, the draw comes first.
    #[error("draw a card before you throw")]
    MustDrawFirst,
    /// At a throw-then-draw table, the throw comes first.
    #[error("throw before you draw")]
    MustThrowFirst,
    /// This turn's card has been drawn; now a group must be thrown.
    #[error("you have drawn already; throw now")]
    AlreadyDrew,
    /// This turn's group has been thrown; now a card must be drawn.
    #[error("you have thrown already; draw now")]
    AlreadyThrew,
    /// A throw must hold at least one card.
    #[error("throw at least one card")]
    EmptyThrow,
    /// The card is not in the player's hand.
    #[error("{0} is not in your hand")]
    NotInHand(Card),
    /// The same card is listed twice.
    #[error("{0} is listed twice")]
    DuplicateCard(Card),
    /// The card just taken from the pile cannot be thrown this turn, alone or in a group.
    #[error("{0} was just taken from the pile and cannot be thrown this turn")]
    BarredCard(Card),
    /// The cards are not a single, a set or (where allowed) a run.
    #[error(
        "those cards do not go together: throw one card, cards of one rank, or a run where runs are on"
    )]
    IllegalGroup,
    /// That card cannot be taken from the pile now.
    #[error("{0} cannot be taken from the pile")]
    NotTakeable(Card),
    /// Several cards of the previous throw may be taken; the draw must name one.
    #[error("more than one card can be taken from the pile; name the one you want")]
    ChoosePileCard,
    /// No card of the pile may be taken now (for example, the previous throw was a set).
    #[error("no card can be taken from the pile now; draw from the stock")]
    PileNotTakeable,
    /// The stock is empty and there is nothing under the pile's top to reshuffle.
    #[error("the stock is empty")]
    StockEmpty,
}

impl RuleError {
    /// The stable snake_case code of this error, for the wire and the web client.
    pub fn code(&self) -> &'static str {
        match self {
            RuleError::NoSuchSeat(_) => "no_such_seat",
            RuleError::NotYourTurn => "not_your_turn",
            RuleError::RoundOver => "round_over",
            RuleError::MatchOver => "match_over",
            RuleError::RoundNotOver => "round_not_over",
            RuleError::CallTooLate => "call_too_late",
            RuleError::OverLimit { .. } => "over_limit",
            RuleError::MustDrawFirst => "must_draw_first",
            RuleError::MustThrowFirst => "must_throw_first",
            RuleError::AlreadyDrew => "already_drew",
            RuleError::AlreadyThrew => "already_threw",
            RuleError::EmptyThrow => "empty_throw",
            RuleError::NotInHand(_) => "not_in_hand",
            RuleError::DuplicateCard(_) => "duplicate_card",
            RuleError::BarredCard(_) => "barred_card",
            RuleError::IllegalGroup => "illegal_group",
            RuleError::NotTakeable(_) => "not_takeable",
            RuleError::ChoosePileCard => "choose_pile_card",
            RuleError::PileNotTakeable => "pile_not_takeable",
            RuleError::StockEmpty => "stock_empty",
        }
    }
}
