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

/// The seats still playing this round other than `me`, in play order from the seat after `me`
/// in the table's direction (the engine's [`dhumbal_engine::Direction::seats_after`]).
pub fn opponents(view: &SeatView) -> Vec<usize> {
    let n = view.card_counts.len();
    let me = me(view);
    view.settings
        .direction
        .seats_after(me, n)
        .filter(|&s| s != me)
        .filter(|&s| !view.eliminated.get(s).copied().unwrap_or(false))
        .collect()
}

/// The next seat to play after `me`, in the table's direction.
pub fn next_player(view: &SeatView) -> usize {
    opponents(view).first().copied().unwrap_or_else(|| me(view))
}

#[cfg(test)]
mod tests {
    use dhumbal_engine::{Direction, Game, Preset, Settings};

    use super::{next_player, opponents};

    #[test]
    fn the_next_player_and_the_opponents_follow_the_tables_direction() {
        for (direction, order) in [
            (Direction::Clockwise, [1, 2, 3]),
            (Direction::CounterClockwise, [3, 2, 1]),
        ] {
            let settings = Settings {
                direction,
                ..Preset::Standard.settings()
            };
            let game = Game::new(settings, [3; 32]).unwrap();
            let view = game.view(0);
            assert_eq!(opponents(&view), order, "{direction:?}");
            assert_eq!(next_player(&view), order[0], "{direction:?}");
            // From seat 2, counter-clockwise: 1, 0, 3.
            let view = game.view(2);
            let from_two: Vec<usize> = order.iter().map(|s| (s + 2) % 4).collect();
            assert_eq!(opponents(&view), from_two, "{direction:?}");
        }
    }
}
