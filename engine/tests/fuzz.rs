//! Fuzzing the rules engine on the stable toolchain, with proptest over arbitrary input:
//!
//! - the card parser (`Card::from_str`, `parse_cards`, a card's serde form) on arbitrary text,
//!   arbitrary bytes read lossily and soups of card-like tokens: nothing panics, every refusal is
//!   a `ParseCardError` naming the bad text, and whatever parses prints back to the same text;
//! - `classify`, `group_ends` and `pickup_choices` on arbitrary card lists and arbitrary settings;
//! - `Game::apply` and `Game::next_round` with arbitrary actions (any seat, out-of-range ones too;
//!   every `Action` and `Source`; card lists with duplicates, jokers, cards not in the hand)
//!   interleaved with runs of legal play on arbitrary valid settings and seeds, so games go deep
//!   into rounds and matches: nothing panics, a refusal is a `RuleError` with a code that leaves
//!   the game exactly as it was, and the invariants hold after every accepted action;
//! - `Game::new` and `Game::with_decks` on settings built field by field from the full range of
//!   every field's type, and on arbitrary decks: either a typed `SettingsError` or a game whose
//!   invariants hold through random play.
//!
//! A bounded number of cases runs with the test suite. `DHUMBAL_FUZZ_CASES` sets the number of
//! cases of every property; a long run is
//!
//! ```text
//! DHUMBAL_FUZZ_CASES=200000 cargo test --release -p dhumbal-engine --test engine fuzz:: && DHUMBAL_FUZZ_CASES=200000 cargo test --release -p dhumbal-protocol --test fuzz
//! ```

use crate::common;

use common::{Rng, random_action};
use dhumbal_engine::arbitrary::{any_raw_settings, any_settings_full_range};
use dhumbal_engine::{
    Action, Card, Event, Game, Phase, RuleError, Settings, SettingsError, Source, THROW_CAP,
    classify, full_deck, group_ends, parse_cards, pickup_choices,
};
use proptest::prelude::*;

/// The proptest configuration of every property here: `default_cases` cases unless
/// `DHUMBAL_FUZZ_CASES` says otherwise, and no regression files written into the tree.
fn config(default_cases: u32) -> ProptestConfig {
    let cases = std::env::var("DHUMBAL_FUZZ_CASES")
        .ok()
        .and_then(|v| v.trim().parse().ok())
        .unwrap_or(default_cases);
    ProptestConfig {
        cases,
        failure_persistence: None,
        ..ProptestConfig::default()
    }
}

/// Whether `code` is a non-empty snake_case word: lowercase ASCII letters and single inner
/// underscores.
fn is_snake_case(code: &str) -> bool {
    !code.is_empty()
        && code.bytes().all(|b| b.is_ascii_lowercase() || b == b'_')
        && !code.starts_with('_')
        && !code.ends_with('_')
        && !code.contains("__")
}

/// Checks a refusal by the rules: a snake_case code and a sentence.
fn check_rule_error(err: &RuleError) {
    assert!(is_snake_case(err.code()), "bad code {:?}", err.code());
    assert!(
        !err.to_string().is_empty(),
        "{} has no sentence",
        err.code()
    );
}

/// Checks a refusal of settings: a snake_case code and a sentence.
fn check_settings_error(err: &SettingsError) {
    assert!(is_snake_case(err.code()), "bad code {:?}", err.code());
    assert!(
        !err.to_string().is_empty(),
        "{} has no sentence",
        err.code()
    );
}

// ----- Text -----

/// Pieces of card-like text: every rank and suit symbol, the jokers, near misses, whitespace of
/// every kind and a few non-ASCII characters.
const TOKENS: &[&str] = &[
    "A", "2", "3", "4", "5", "6", "7", "8", "9", "10", "J", "Q", "K", "S", "H", "D", "C", "RJ",
    "BJ", "R", "B", "0", "1", "01", "010", "11", "13", "1O", "a", "s", "h", "d", "c", "rj", "j",
    "q", "k", "x", "X", "+", "-", " ", "  ", "\t", "\n", "\r\n", "\u{a0}", "\u{3000}", "\u{0}",
    "\u{feff}", "\u{200b}", "♠", "♥", "♦", "♣", "🂡", "é", "\u{301}", "Ａ", "１０", "٣",
];

/// Text that is sometimes a card or a list of cards: a soup of [`TOKENS`].
fn card_soup() -> impl Strategy<Value = String> {
    prop::collection::vec(prop::sample::select(TOKENS), 0..12).prop_map(|parts| parts.concat())
}

/// Arbitrary text: any characters, any bytes read lossily, or a soup of card-like tokens.
fn any_text() -> impl Strategy<Value = String> {
    prop_oneof![
        any::<String>(),
        "\\PC{0,8}",
        prop::collection::vec(any::<u8>(), 0..24)
            .prop_map(|bytes| String::from_utf8_lossy(&bytes).into_owned()),
        card_soup(),
        card_soup(),
    ]
}

/// Checks one piece of text against the card parser and the card's serde form.
fn check_card_text(text: &str) {
    let parsed = text.parse::<Card>();
    match &parsed {
        Ok(card) => {
            // The notation is canonical: a card parses only from its own name.
            assert_eq!(card.to_string(), text);
            assert_eq!(card.to_string().parse::<Card>().as_ref(), Ok(card));
            assert_eq!(Card::from_index(card.index()), Some(*card));
            assert_eq!(card.rank().is_none(), card.is_joker());
            assert_eq!(card.suit().is_none(), card.is_joker());
        }
        Err(err) => {
            assert_eq!(err.0, text, "the error names the text");
            assert!(!err.to_string().is_empty());
        }
    }
    let json = serde_json::Value::String(text.to_owned());
    let from_json = serde_json::from_value::<Card>(json);
    assert_eq!(
        from_json.ok(),
        parsed.ok(),
        "serde and FromStr disagree on {text:?}"
    );
}

/// Checks a piece of text against `parse_cards`.
fn check_card_list(text: &str) {
    match parse_cards(text) {
        Ok(cards) => {
            assert_eq!(cards.len(), text.split_whitespace().count());
            let printed = cards
                .iter()
                .map(Card::to_string)
                .collect::<Vec<_>>()
                .join(" ");
            assert_eq!(parse_cards(&printed), Ok(cards.clone()), "{printed:?}");
            let words: Vec<&str> = text.split_whitespace().collect();
            assert_eq!(printed, words.join(" "), "the notation is canonical");
            let json = serde_json::to_string(&cards).expect("cards serialize");
            assert_eq!(
                serde_json::from_str::<Vec<Card>>(&json).expect("cards deserialize"),
                cards
            );
        }
        Err(err) => {
            assert!(
                text.split_whitespace().any(|word| word == err.0),
                "the error {:?} is not a word of {text:?}",
                err.0
            );
            assert!(err.0.parse::<Card>().is_err());
            assert!(!err.to_string().is_empty());
        }
    }
}

// ----- Settings -----

/// Either kind of settings: valid ones over the whole valid range of every field, or
/// field-by-field ones (mostly invalid).
fn valid_or_raw_settings() -> BoxedStrategy<Settings> {
    prop_oneof![any_settings_full_range(), any_raw_settings()].boxed()
}

// ----- Actions -----

/// Which seat an arbitrary action comes from.
#[derive(Clone, Debug)]
enum SeatPick {
    /// The seat to play.
    Turn,
    /// This many seats after the seat to play (wrapping at the table's size).
    After(usize),
    /// This seat number, whatever the table's size.
    Number(usize),
}

/// One card of an arbitrary action.
#[derive(Clone, Debug)]
enum CardPick {
    /// A card of the acting seat's hand (by position, wrapping), or any card if it has none.
    Hand(usize),
    /// A card of the pile's visible throws (by position, wrapping).
    Pile(usize),
    /// A card the seat to play may take from the pile now.
    Takeable(usize),
    /// The card barred this turn.
    Barred,
    /// This card, whatever the table plays with (jokers included).
    Any(usize),
}

/// Where an arbitrary draw comes from.
#[derive(Clone, Debug)]
enum SourcePick {
    Stock,
    Pile,
    Card(CardPick),
}

/// An arbitrary action, resolved against the game when it is applied.
#[derive(Clone, Debug)]
enum ActionPick {
    Call,
    Draw(SourcePick),
    Throw(Vec<CardPick>),
}

/// One step of a fuzzed game.
#[derive(Clone, Debug)]
enum Step {
    /// Up to this many random legal actions (and deals of the next round), from this seed.
    Legal(u64, u8),
    /// An arbitrary action from an arbitrary seat.
    Arbitrary(SeatPick, ActionPick),
    /// `next_round`, whatever the phase.
    NextRound,
    /// One of the seat to play's legal throws with its cards in an arbitrary order, maybe with a
    /// card added, dropped or repeated.
    MangledThrow(u64, u8),
}

fn seat_pick() -> impl Strategy<Value = SeatPick> {
    prop_oneof![
        4 => Just(SeatPick::Turn),
        2 => (0usize..8).prop_map(SeatPick::After),
        1 => prop_oneof![0usize..10, any::<usize>(), Just(usize::MAX)].prop_map(SeatPick::Number),
    ]
}

fn card_pick() -> impl Strategy<Value = CardPick> {
    prop_oneof![
        4 => (0usize..16).prop_map(CardPick::Hand),
        1 => (0usize..16).prop_map(CardPick::Pile),
        1 => (0usize..4).prop_map(CardPick::Takeable),
        1 => Just(CardPick::Barred),
        2 => (0usize..54).prop_map(CardPick::Any),
    ]
}

fn action_pick() -> impl Strategy<Value = ActionPick> {
    prop_oneof![
        1 => Just(ActionPick::Call),
        2 => prop_oneof![
            Just(SourcePick::Stock),
            Just(SourcePick::Pile),
            card_pick().prop_map(SourcePick::Card),
        ]
        .prop_map(ActionPick::Draw),
        3 => prop::collection::vec(card_pick(), 0..8).prop_map(ActionPick::Throw),
    ]
}

fn step() -> impl Strategy<Value = Step> {
    prop_oneof![
        5 => (any::<u64>(), 1u8..=32).prop_map(|(seed, n)| Step::Legal(seed, n)),
        5 => (seat_pick(), action_pick()).prop_map(|(seat, action)| Step::Arbitrary(seat, action)),
        1 => Just(Step::NextRound),
        2 => (any::<u64>(), any::<u8>()).prop_map(|(seed, how)| Step::MangledThrow(seed, how)),
    ]
}

fn resolve_seat(game: &Game, pick: &SeatPick) -> usize {
    match *pick {
        SeatPick::Turn => game.turn(),
        SeatPick::After(k) => (game.turn() + k) % game.seats(),
        SeatPick::Number(n) => n,
    }
}

fn resolve_card(game: &Game, seat: usize, pick: &CardPick) -> Card {
    let any = |i: usize| Card::from_index(i % 54).expect("an index below 54 is a card");
    let nth = |cards: &[Card], i: usize| cards.get(i % cards.len().max(1)).copied();
    let view = game.spectator_view();
    let card = match *pick {
        CardPick::Hand(i) if seat < game.seats() => nth(game.hand(seat), i),
        CardPick::Hand(_) => None,
        CardPick::Pile(i) => {
            let mut visible = view.previous_throw.clone();
            visible.extend(&view.top_throw);
            nth(&visible, i)
        }
        CardPick::Takeable(i) => nth(&game.takeable(game.turn()), i),
        CardPick::Barred => view.barred,
        CardPick::Any(i) => Some(any(i)),
    };
    card.unwrap_or_else(|| match *pick {
        CardPick::Hand(i) | CardPick::Pile(i) | CardPick::Takeable(i) | CardPick::Any(i) => any(i),
        CardPick::Barred => any(seat),
    })
}

fn resolve_action(game: &Game, seat: usize, pick: &ActionPick) -> Action {
    match pick {
        ActionPick::Call => Action::Call,
        ActionPick::Draw(SourcePick::Stock) => Action::Draw {
            from: Source::Stock,
        },
        ActionPick::Draw(SourcePick::Pile) => Action::Draw { from: Source::Pile },
        ActionPick::Draw(SourcePick::Card(card)) => Action::Draw {
            from: Source::PileCard(resolve_card(game, seat, card)),
        },
        ActionPick::Throw(cards) => Action::Throw {
            cards: cards
                .iter()
                .map(|card| resolve_card(game, seat, card))
                .collect(),
        },
    }
}

/// Whether a round is being played (not between rounds, not over).
fn playing(game: &Game) -> bool {
    matches!(game.phase(), Phase::Start | Phase::Throw | Phase::Draw)
}

/// Checks what may be asked of any game without a panic, from any seat.
fn check_queries(game: &Game, seats: &[usize]) {
    game.validate_invariants().expect("invariants hold");
    let _ = game.spectator_view();
    let _ = game.view_of(None);
    let _ = game.public_history();
    let _ = game.next_takeable();
    let _ = game.standings();
    let _ = game.revealed_seeds();
    for &seat in seats {
        let legal = game.legal_actions(seat);
        let _ = game.takeable(seat);
        let _ = game.can_call(seat);
        let _ = game.can_draw(seat);
        let _ = game.can_throw(seat);
        let mut groups = 0usize;
        game.for_each_legal_group(seat, |_| groups += 1);
        if seat < game.seats() {
            let _ = game.view(seat);
            let _ = game.view_of(Some(seat));
        } else {
            assert!(legal.is_empty(), "seat {seat} is not at the table");
        }
    }
    if playing(game) {
        assert!(
            !game.legal_actions(game.turn()).is_empty(),
            "the seat to play has no legal action in {:?}",
            game.phase()
        );
    }
}

/// Applies an action, checking that `check` predicted the outcome, that a refusal is typed and
/// changes nothing, and that an accepted action keeps the invariants and logs its events.
fn apply_checked(game: &mut Game, seat: usize, action: Action) -> Result<Vec<Event>, RuleError> {
    let before = game.clone();
    let predicted = game.check(seat, &action);
    let result = game.apply(seat, action.clone());
    match &result {
        Err(err) => {
            check_rule_error(err);
            assert_eq!(
                predicted.as_ref(),
                Err(err),
                "check disagrees on {action:?}"
            );
            assert_eq!(
                *game, before,
                "refused {action:?} by seat {seat} changed the game"
            );
            if let Action::Throw { cards } = &action {
                assert_eq!(before.check_throw(seat, cards).as_ref(), Err(err));
            }
        }
        Ok(events) => {
            assert_eq!(predicted, Ok(()), "check refused {action:?}, apply took it");
            assert!(!events.is_empty(), "{action:?} caused no event");
            assert!(
                game.log().ends_with(events),
                "{action:?}'s events are not logged"
            );
            if let Err(problem) = game.validate_invariants() {
                panic!("after {action:?} by seat {seat}: {problem}");
            }
            assert!(game.throws() <= THROW_CAP);
            let listed = before.legal_actions(seat);
            let listed = match &action {
                Action::Throw { cards } => listed.iter().any(|legal| match legal {
                    Action::Throw { cards: group } => {
                        let (mut a, mut b) = (group.clone(), cards.clone());
                        a.sort();
                        b.sort();
                        a == b
                    }
                    _ => false,
                }),
                _ => listed.contains(&action),
            };
            assert!(listed, "{action:?} was accepted but not listed as legal");
        }
    }
    result
}

/// `next_round`, checked like an action.
fn next_round_checked(game: &mut Game) {
    let before = game.clone();
    match game.next_round() {
        Ok(events) => {
            assert_eq!(before.phase(), Phase::RoundOver);
            assert!(matches!(events.first(), Some(Event::Dealt { .. })));
            assert_eq!(game.round(), before.round() + 1);
            game.validate_invariants()
                .expect("invariants hold after a deal");
        }
        Err(err) => {
            check_rule_error(&err);
            assert_ne!(before.phase(), Phase::RoundOver);
            assert_eq!(*game, before, "a refused next_round changed the game");
        }
    }
}

/// How random legal play treats calling.
#[derive(Clone, Copy, Debug)]
enum Calls {
    /// Never call while anything else is legal, so rounds run to the throw cap and the stock
    /// is reshuffled.
    Avoid,
    /// Call like any other legal action.
    Uniform,
    /// Call whenever it is legal half the time, so rounds end quickly and matches reach their
    /// later rounds and their end.
    Eager,
}

fn calls() -> impl Strategy<Value = Calls> {
    prop_oneof![Just(Calls::Avoid), Just(Calls::Uniform), Just(Calls::Eager)]
}

/// Plays up to `n` random legal actions, dealing the next round when one ends.
fn play_legal(game: &mut Game, rng: &mut Rng, calls: Calls, n: u8) {
    for _ in 0..n {
        match game.phase() {
            Phase::MatchOver => return,
            Phase::RoundOver => next_round_checked(game),
            _ => {
                let seat = game.turn();
                let action = match calls {
                    Calls::Eager if rng.below(2) == 0 && game.can_call(seat) => Action::Call,
                    Calls::Avoid => {
                        let mut action = random_action(game, rng);
                        for _ in 0..8 {
                            if action != Action::Call {
                                break;
                            }
                            action = random_action(game, rng);
                        }
                        action
                    }
                    _ => random_action(game, rng),
                };
                apply_checked(game, seat, action.clone())
                    .unwrap_or_else(|e| panic!("legal {action:?} was refused: {e}"));
            }
        }
    }
}

/// One of the seat to play's legal throws, reordered and maybe mangled.
fn mangled_throw(game: &Game, seed: u64, how: u8) -> Option<Action> {
    let mut rng = Rng(seed);
    let seat = game.turn();
    let mut groups = Vec::new();
    game.for_each_legal_group(seat, |group| groups.push(group.to_vec()));
    if groups.is_empty() {
        return None;
    }
    let mut cards = groups[rng.below(groups.len())].clone();
    for i in (1..cards.len()).rev() {
        cards.swap(i, rng.below(i + 1));
    }
    let deck = full_deck(true);
    match how % 8 {
        0 => cards.push(deck[rng.below(deck.len())]),
        1 => {
            let at = rng.below(cards.len());
            cards.remove(at);
        }
        2 => {
            let again = cards[rng.below(cards.len())];
            let at = rng.below(cards.len() + 1);
            cards.insert(at, again);
        }
        3 => {
            let hand = game.hand(seat);
            cards.push(hand[rng.below(hand.len())]);
        }
        _ => {}
    }
    Some(Action::Throw { cards })
}

/// Runs a fuzzed game: every step is checked, and so is every query after it.
fn run_game(settings: Settings, seed: [u8; 32], calls: Calls, steps: &[Step]) {
    let mut game = Game::new(settings, seed).expect("valid settings make a game");
    check_queries(&game, &[0, game.seats(), usize::MAX]);
    for step in steps {
        match step {
            Step::Legal(seed, n) => play_legal(&mut game, &mut Rng(*seed), calls, *n),
            Step::NextRound => next_round_checked(&mut game),
            Step::Arbitrary(seat, action) => {
                let seat = resolve_seat(&game, seat);
                let action = resolve_action(&game, seat, action);
                let _ = apply_checked(&mut game, seat, action);
            }
            Step::MangledThrow(seed, how) => {
                if let Some(action) = mangled_throw(&game, *seed, *how) {
                    let seat = game.turn();
                    let _ = apply_checked(&mut game, seat, action);
                }
            }
        }
        let turn = game.turn();
        check_queries(&game, &[turn, (turn + 1) % game.seats(), game.seats()]);
    }
}

/// The decks a table could be dealt from: shuffled packs, sometimes with a card dropped, doubled
/// or swapped for a joker, sometimes of the other pack size.
fn any_decks() -> impl Strategy<Value = Vec<Vec<Card>>> {
    let deck =
        (any::<bool>(), any::<u64>(), 0u8..8, 0usize..54).prop_map(|(jokers, seed, mangle, at)| {
            let mut deck = full_deck(jokers);
            let mut rng = Rng(seed);
            for i in (1..deck.len()).rev() {
                deck.swap(i, rng.below(i + 1));
            }
            let at = at % deck.len();
            match mangle {
                0 => {
                    deck.remove(at);
                }
                1 => deck.push(deck[at]),
                2 => deck[at] = Card::RED_JOKER,
                3 => deck.truncate(at),
                _ => {}
            }
            deck
        });
    prop::collection::vec(deck, 0..4)
}

/// Plays up to `n` random legal actions on a fresh game, checking everything as it goes.
fn play_fresh(game: &mut Game, seed: u64, calls: Calls, n: u8) {
    let mut rng = Rng(seed);
    check_queries(game, &[0, game.seats()]);
    for _ in 0..n / 8 {
        play_legal(game, &mut rng, calls, 8);
        check_queries(game, &[game.turn(), game.seats()]);
    }
}

proptest! {
    #![proptest_config(config(2000))]

    /// The card parser never panics; what parses prints back to itself.
    #[test]
    fn the_card_parser_takes_any_text(text in any_text()) {
        check_card_text(&text);
        check_card_list(&text);
        for word in text.split_whitespace() {
            check_card_text(word);
        }
    }

    /// Grouping and pick-up rules take any cards under any settings without a panic.
    #[test]
    fn groups_of_any_cards_are_classified(
        indices in prop::collection::vec(0usize..54, 0..10),
        settings in valid_or_raw_settings(),
    ) {
        let cards: Vec<Card> = indices.iter().filter_map(|&i| Card::from_index(i)).collect();
        let kind = classify(&cards, &settings);
        if cards.is_empty() {
            prop_assert_eq!(kind, None);
        }
        if let Some((first, last)) = group_ends(&cards, &settings) {
            prop_assert!(cards.contains(&first) && cards.contains(&last));
        }
        for card in pickup_choices(&settings, &cards) {
            prop_assert!(cards.contains(&card));
        }
    }
}

proptest! {
    // Each case plays hundreds of actions and checks every one, so fewer cases run by default.
    #![proptest_config(config(512))]

    /// Arbitrary actions mixed with legal play on any valid table: no panic, refusals are typed
    /// and change nothing, and the invariants hold throughout.
    #[test]
    fn arbitrary_actions_on_arbitrary_tables(
        settings in any_settings_full_range(),
        seed in any::<[u8; 32]>(),
        calls in calls(),
        steps in prop::collection::vec(step(), 0..120),
    ) {
        run_game(settings, seed, calls, &steps);
    }

}

proptest! {
    #![proptest_config(config(1000))]

    /// Settings from the full range of every field: a typed refusal, or a game that plays.
    #[test]
    fn any_settings_make_a_game_or_a_typed_error(
        settings in valid_or_raw_settings(),
        seed in any::<[u8; 32]>(),
        play in any::<u64>(),
        calls in calls(),
    ) {
        let validated = settings.validate();
        if let Err(err) = &validated {
            check_settings_error(err);
        }
        match Game::new(settings.clone(), seed) {
            Err(err) => {
                check_settings_error(&err);
                prop_assert_eq!(Err(err), validated);
            }
            Ok(mut game) => {
                prop_assert_eq!(validated, Ok(()));
                prop_assert_eq!(game.settings(), &settings);
                prop_assert_eq!(game.round(), 1);
                play_fresh(&mut game, play, calls, 64);
            }
        }
    }

    /// Explicit decks, right or wrong, on any settings: a typed refusal, or a game that plays.
    #[test]
    fn any_decks_make_a_game_or_a_typed_error(
        settings in valid_or_raw_settings(),
        decks in any_decks(),
        play in any::<u64>(),
        calls in calls(),
    ) {
        match Game::with_decks(settings.clone(), decks.clone()) {
            Err(err) => {
                check_settings_error(&err);
                if settings.validate().is_ok() {
                    prop_assert_eq!(err, SettingsError::Deck);
                }
            }
            Ok(mut game) => {
                prop_assert_eq!(settings.validate(), Ok(()));
                prop_assert!(!decks.is_empty());
                for deck in &decks {
                    prop_assert_eq!(deck.len(), settings.deck_size());
                }
                play_fresh(&mut game, play, calls, 64);
            }
        }
    }
}
