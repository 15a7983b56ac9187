//! Reading a [`SeatView`]: which half of the turn it is and what may be drawn.
//!
//! Everything here is computed from the view alone, the same way a human reads the table.

use dhumbal_engine::{Action, Card, Phase, SeatView, Settings, Source, TurnOrder, pickup_choices};

/// Which decision the seat faces.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Step {
    /// Draw-then-throw, start of the turn: call, or draw.
    CallOrDraw,
    /// Draw-then-throw, after the draw: throw a group.
    Throw,
    /// Throw-then-draw, start of the turn: call, or throw a group.
    CallOrThrow,
    /// Throw-then-draw, after the throw: draw a card.
    Draw,
}

/// The decision the seat faces in this view (meaningful when `view.my_turn()`).
pub fn step(view: &SeatView) -> Step {
    match (view.settings.turn_order, view.phase) {
        (TurnOrder::DrawThenThrow, Phase::Start) => Step::CallOrDraw,
        (TurnOrder::ThrowThenDraw, Phase::Start) => Step::CallOrThrow,
        (TurnOrder::ThrowThenDraw, Phase::Draw) => Step::Draw,
        _ => Step::Throw,
    }
}

/// Whether a card can be drawn from the stock now (an empty stock is refilled from the pile,
/// which needs cards under the part of the pile that stays).
pub fn stock_drawable(view: &SeatView) -> bool {
    let kept = match view.settings.turn_order {
        TurnOrder::DrawThenThrow => 1,
        TurnOrder::ThrowThenDraw => view.top_throw.len(),
    };
    view.stock_size > 0 || view.pile_size > kept
}

/// At a throw-then-draw table, before throwing: the cards of the current top throw that may be
/// picked up once this seat has thrown (the top throw then becomes the previous throw).
pub fn pickable_after_throw(settings: &Settings, top_throw: &[Card]) -> Vec<Card> {
    pickup_choices(settings, top_throw)
}

/// The draw of `card` from the pile, or from the stock for `None`. Falls back to whatever is
/// possible when the wished source is not (a pile card that cannot be taken, an empty stock).
///
/// With an empty hand at a draw-then-throw table it never takes from the pile: the card taken
/// could not be thrown this turn, and there would be nothing else to throw.
pub fn draw(view: &SeatView, card: Option<Card>) -> Action {
    let pile_ok = !(view.hand.is_empty() && view.settings.turn_order == TurnOrder::DrawThenThrow);
    let from = match card {
        Some(card) if view.takeable.contains(&card) && pile_ok => Source::PileCard(card),
        _ if stock_drawable(view) || view.takeable.is_empty() => Source::Stock,
        _ => Source::PileCard(view.takeable[0]),
    };
    Action::Draw { from }
}

/// The seat this view belongs to (bots are only ever given seat views).
pub fn me(view: &SeatView) -> usize {
    view.seat.unwrap_or(view.turn)
}

/// The seats still playing this round other than `me`, in play order from `me`'s left.
pub fn opponents(view: &SeatView) -> Vec<usize> {
    let n = view.card_counts.len();
    let me = me(view);
    (1..n)
        .map(|k| (me + k) % n)
        .filter(|&s| !view.eliminated.get(s).copied().unwrap_or(false))
        .collect()
}

/// The next seat to play after `me`.
pub fn next_player(view: &SeatView) -> usize {
    opponents(view).first().copied().unwrap_or_else(|| me(view))
}
