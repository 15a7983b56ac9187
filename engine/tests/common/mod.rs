//! Helpers shared by the engine's integration tests: deck orders built from the hands a test
//! wants, card lists from text, and a small seeded generator for random legal play.

// Each test file uses its own subset of these helpers.
#![allow(dead_code)]

use dhumbal_engine::{
    Action, Card, Event, Game, Phase, Preset, RoundResult, RuleError, Settings, Source, full_deck,
    parse_cards,
};

/// Cards from text, such as `"AS 10H RJ"`.
pub(crate) fn cards(text: &str) -> Vec<Card> {
    parse_cards(text).expect("test cards parse")
}

/// One card from text.
pub(crate) fn card(text: &str) -> Card {
    text.parse().expect("test card parses")
}

/// A deck order (top card first) that deals `hands` (indexed by seat; `""` for a seat that is out
/// of the match) one card at a time starting from seat `first` and going round the table in its
/// direction (left, clockwise), then turns `pile`
/// up, then leaves `stock` on top of the stock in the order it will be drawn, followed by the
/// rest of the pack in canonical order.
pub(crate) fn deck(
    settings: &Settings,
    first: usize,
    hands: &[&str],
    pile: &str,
    stock: &str,
) -> Vec<Card> {
    let n = hands.len();
    assert_eq!(n, usize::from(settings.players), "one hand per seat");
    let hands: Vec<Vec<Card>> = hands.iter().map(|h| cards(h)).collect();
    for hand in hands.iter().filter(|h| !h.is_empty()) {
        assert_eq!(hand.len(), usize::from(settings.cards), "{hand:?}");
    }
    let mut order = Vec::new();
    for k in 0..usize::from(settings.cards) {
        // From `first` round the table in its direction.
        for seat in std::iter::once(first)
            .chain(settings.seats_after(first))
            .take(n)
        {
            let hand = &hands[seat];
            if !hand.is_empty() {
                order.push(hand[k]);
            }
        }
    }
    order.push(card(pile));
    order.extend(cards(stock));
    let mut sorted = order.clone();
    sorted.sort();
    sorted.dedup();
    assert_eq!(sorted.len(), order.len(), "a card is used twice: {order:?}");
    for c in full_deck(settings.jokers) {
        if !order.contains(&c) {
            order.push(c);
        }
    }
    assert_eq!(
        order.len(),
        settings.deck_size(),
        "a card is not in the pack"
    );
    order
}

/// A game of one deck order, used for every round.
pub(crate) fn game(
    settings: &Settings,
    first: usize,
    hands: &[&str],
    pile: &str,
    stock: &str,
) -> Game {
    let deck = deck(settings, first, hands, pile, stock);
    Game::with_decks(settings.clone(), vec![deck]).expect("valid test game")
}

/// A small deterministic generator (SplitMix64) for choosing random legal actions in tests.
#[derive(Clone, Debug)]
pub(crate) struct Rng(pub u64);

impl Rng {
    /// The next 64 random bits.
    pub(crate) fn next_u64(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }

    /// A number in `0..n` (`n > 0`).
    pub(crate) fn below(&mut self, n: usize) -> usize {
        (self.next_u64() % n as u64) as usize
    }

    /// A random 32-byte seed.
    pub(crate) fn seed(&mut self) -> [u8; 32] {
        let mut seed = [0u8; 32];
        for chunk in seed.chunks_mut(8) {
            chunk.copy_from_slice(&self.next_u64().to_le_bytes());
        }
        seed
    }
}

/// One random legal action of the seat to play (a throw's cards shuffled into a random order).
pub(crate) fn random_action(game: &Game, rng: &mut Rng) -> Action {
    let seat = game.turn();
    let actions = game.legal_actions(seat);
    assert!(
        !actions.is_empty(),
        "seat {seat} has no legal action in {:?}",
        game.phase()
    );
    let mut action = actions[rng.below(actions.len())].clone();
    if let Action::Throw { cards } = &mut action {
        for i in (1..cards.len()).rev() {
            cards.swap(i, rng.below(i + 1));
        }
    }
    action
}

/// Plays a whole match with random legal actions, checking the invariants after every step.
/// Returns the number of actions applied.
pub(crate) fn play_match(game: &mut Game, rng: &mut Rng, max_rounds: u32) -> usize {
    let mut applied = 0;
    while !game.is_over() {
        assert!(
            game.round() <= max_rounds,
            "the match did not end in {max_rounds} rounds"
        );
        if game.phase() == Phase::RoundOver {
            game.next_round().expect("the next round deals");
        } else {
            let seat = game.turn();
            let action = random_action(game, rng);
            game.apply(seat, action)
                .expect("a legal action is accepted");
            applied += 1;
        }
        game.validate_invariants().expect("invariants hold");
    }
    applied
}

/// The standard table's settings.
pub(crate) fn standard() -> Settings {
    Preset::Standard.settings()
}

/// Draw from the stock.
pub(crate) fn stock() -> Action {
    Action::Draw {
        from: Source::Stock,
    }
}

/// Draw the pile's one takeable card.
pub(crate) fn pile() -> Action {
    Action::Draw { from: Source::Pile }
}

/// Throw these cards, in this order.
pub(crate) fn throw(text: &str) -> Action {
    Action::Throw { cards: cards(text) }
}

/// Take this card from the pile.
pub(crate) fn take(text: &str) -> Action {
    Action::Draw {
        from: Source::PileCard(card(text)),
    }
}

/// Applies the action, checks the invariants, and returns the events.
pub(crate) fn ok(game: &mut Game, seat: usize, action: Action) -> Vec<Event> {
    let events = game
        .apply(seat, action.clone())
        .unwrap_or_else(|e| panic!("seat {seat} {action:?}: {e}"));
    game.validate_invariants().unwrap();
    events
}

/// Asserts the action is refused with this code, with a sentence, and changes nothing.
pub(crate) fn refused(game: &mut Game, seat: usize, action: Action, code: &str) -> RuleError {
    let before = game.clone();
    let err = game.apply(seat, action).unwrap_err();
    assert_eq!(err.code(), code, "{err}");
    assert!(!err.to_string().is_empty(), "{code} has no sentence");
    assert_eq!(*game, before, "a refused action changed the game");
    err
}

/// The last round's result.
pub(crate) fn last_result(game: &Game) -> &RoundResult {
    game.results().last().expect("a round has ended")
}

/// Asserts what a round's seats weighed (`hand`), were charged (`took`) and paid (`paid`), by
/// seat: all three at once, so that a failure shows every one.
pub(crate) fn assert_scored(result: &RoundResult, hand: &[u32], took: &[u32], paid: &[i64]) {
    assert_eq!(
        (&result.hand[..], &result.took[..], &result.paid[..]),
        (hand, took, paid),
        "(hand, took, paid)"
    );
}

/// A game of `settings` dealt `hands` from seat 0 with `pile` turned up, in which seat 0 calls
/// as its first action (its invariants checked after, as [`ok`] does): the round is over.
pub(crate) fn called_at_once(settings: &Settings, hands: &[&str], pile: &str) -> Game {
    let mut g = game(settings, 0, hands, pile, "");
    ok(&mut g, 0, Action::Call);
    g
}
