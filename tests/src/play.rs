//! Choosing a random legal action from a seat's view alone, the way a client would.

use dhumbal_engine::{Card, Phase, SeatView, TurnOrder};
use dhumbal_protocol::{ClientMessage, DrawFrom};
use rand::Rng;
use rand::seq::IndexedRandom;

/// What a random player sends in answer to a new view, if anything: a random legal action on its
/// turn, and `ready` once per finished round (`ready_for` remembers the last round it was sent
/// for).
pub fn answer(view: &SeatView, rng: &mut impl Rng, ready_for: &mut u32) -> Option<ClientMessage> {
    if view.my_turn() {
        Some(random_action(view, rng))
    } else if view.phase == Phase::RoundOver && *ready_for < view.round {
        *ready_for = view.round;
        Some(ClientMessage::Ready { client_seed: None })
    } else {
        None
    }
}

/// A random legal action for the seat whose turn it is, read from its view: a call when the view
/// allows one (half the time), a draw from the stock or a takeable pile card, or a throw of one
/// card or of cards of one rank (never the barred card). Works for tables without runs and
/// jokers, which is every table the tests play.
pub fn random_action(view: &SeatView, rng: &mut impl Rng) -> ClientMessage {
    assert!(view.my_turn(), "it is not this seat's turn");
    let draw_first = view.settings.turn_order == TurnOrder::DrawThenThrow;
    let drawing = match view.phase {
        Phase::Start => draw_first,
        Phase::Draw => true,
        _ => false,
    };
    if view.phase == Phase::Start && view.can_call && rng.random_bool(0.5) {
        return ClientMessage::Call;
    }
    if drawing {
        let stock_ok = view.stock_size > 0 || view.pile_size > view.top_throw.len().max(1);
        if !view.takeable.is_empty() && (!stock_ok || rng.random_bool(0.3)) {
            let card = *view.takeable.choose(rng).expect("a takeable card");
            return ClientMessage::Draw {
                from: DrawFrom::Pile,
                card: Some(card),
            };
        }
        return ClientMessage::Draw {
            from: DrawFrom::Stock,
            card: None,
        };
    }
    let groups = throwable_groups(&view.hand, view.barred);
    ClientMessage::Throw {
        cards: groups
            .choose(rng)
            .expect("a hand always has a throw")
            .clone(),
    }
}

/// Every single card and every set of one rank (all of that rank held) in `hand`, leaving out
/// the barred card.
pub fn throwable_groups(hand: &[Card], barred: Option<Card>) -> Vec<Vec<Card>> {
    let cards: Vec<Card> = hand
        .iter()
        .copied()
        .filter(|c| Some(*c) != barred)
        .collect();
    let mut groups: Vec<Vec<Card>> = cards.iter().map(|c| vec![*c]).collect();
    let mut ranks: Vec<_> = cards.iter().filter_map(|c| c.rank()).collect();
    ranks.sort();
    ranks.dedup();
    for rank in ranks {
        let set: Vec<Card> = cards
            .iter()
            .copied()
            .filter(|c| c.rank() == Some(rank))
            .collect();
        if set.len() >= 2 {
            groups.push(set);
        }
    }
    groups
}
