//! `proptest` strategies for the engine's types, for the property tests of this crate and of the
//! crates built on it (only with the `proptest` feature, which a crate turns on in its
//! dev-dependencies).
//!
//! - [`any_settings`] — the tables a property test plays: any valid table, every option in every
//!   mix, with numbers kept small so that random play finishes a match quickly.
//! - [`any_settings_full_range`] — any valid table over the whole valid range of every field.
//! - [`any_raw_settings`] — settings built field by field from the whole range of each field's
//!   type, mostly invalid: for what must refuse them.
//! - [`any_preset`], [`any_difficulty`], [`any_direction`], [`any_reshuffle_keeps`],
//!   [`any_card`] — one value of each.
//!
//! The settings strategies are boxed: their value trees are large, and unboxed they take more
//! stack than a test thread has in a debug build.

use proptest::prelude::*;

use crate::card::{CARD_KINDS, Card};
use crate::settings::{
    CourtValues, Difficulty, Direction, DoublePenalty, MAX_CALL_LIMIT, MAX_ELIMINATION,
    MAX_PENALTY, MAX_ROUNDS, PenaltyMode, PickUp, Preset, ReshuffleKeeps, Rounds, Scoring,
    Settings, TURN_TIMERS, TurnOrder,
};

/// Any valid table: every option in every mix, with ranges kept small enough that random play
/// finishes a match quickly (1 to 3 rounds, or until one remains with elimination at 10 to 120;
/// a penalty of 1 to 40; a call limit of at most 15). Options that need another option are only
/// turned on with it, so that no case is spent on settings the engine refuses.
pub fn any_settings() -> BoxedStrategy<Settings> {
    valid_tables(Numbers {
        rounds: (1u32..=3).boxed(),
        call_limit: prop::option::of(0u32..=15).boxed(),
        penalty: (1u32..=40).boxed(),
        double: prop::option::of((1u32..=40, 0u32..=8)).boxed(),
        double_amount: |penalty, extra| Some(penalty + extra),
        elimination: prop::option::of(10u32..=120).boxed(),
    })
}

/// Any valid table, over the whole valid range of every field, with the number of rounds
/// usually small (1 to 3 three times in four) so that most matches end soon.
pub fn any_settings_full_range() -> BoxedStrategy<Settings> {
    valid_tables(Numbers {
        rounds: prop_oneof![3 => 1u32..=3, 1 => 1u32..=MAX_ROUNDS].boxed(),
        call_limit: prop::option::of(prop_oneof![0u32..=15, 0u32..=MAX_CALL_LIMIT]).boxed(),
        penalty: prop_oneof![1u32..=40, 1u32..=MAX_PENALTY].boxed(),
        double: prop::option::of((any::<u32>(), 0u32..=MAX_CALL_LIMIT)).boxed(),
        // Anything above the penalty, up to the most a penalty may be.
        double_amount: |penalty, drawn| {
            (penalty < MAX_PENALTY).then(|| penalty + 1 + drawn % (MAX_PENALTY - penalty))
        },
        elimination: prop::option::of(prop_oneof![10u32..=120, 1u32..=MAX_ELIMINATION]).boxed(),
    })
}

/// Where the numbers of a valid table are drawn from; every other field is drawn alike.
struct Numbers {
    /// A fixed number of rounds.
    rounds: BoxedStrategy<u32>,
    /// The call limit.
    call_limit: BoxedStrategy<Option<u32>>,
    /// The penalty.
    penalty: BoxedStrategy<u32>,
    /// A doubled penalty: a number `double_amount` makes its amount from, and its margin.
    double: BoxedStrategy<Option<(u32, u32)>>,
    /// The doubled penalty's amount from the penalty and the number drawn (`None`: no doubled
    /// penalty after all).
    double_amount: fn(u32, u32) -> Option<u32>,
    /// The elimination threshold, at a cumulative table.
    elimination: BoxedStrategy<Option<u32>>,
}

/// Valid tables whose numbers come from `numbers`.
fn valid_tables(numbers: Numbers) -> BoxedStrategy<Settings> {
    let double_amount = numbers.double_amount;
    (
        (
            2u8..=6,
            any::<bool>(),
            numbers.rounds,
            any::<bool>(),
            numbers.call_limit,
            numbers.penalty,
            any::<bool>(),
            numbers.double,
        ),
        (
            any_court(),
            any::<bool>(),
            any::<bool>(),
            any::<bool>(),
            any::<bool>(),
            any_pickup(),
            any::<bool>(),
            numbers.elimination,
            any::<bool>(),
            any_difficulty(),
            any_turn_timer(),
        ),
        (any_direction(), any_reshuffle_keeps()),
    )
        .prop_map(
            move |(
                (players, seven, rounds, until_one, call_limit, penalty, on_top, double),
                (
                    court,
                    runs,
                    jokers,
                    jokers_in_runs,
                    throw_first,
                    pickup,
                    cumulative,
                    elimination,
                    score_reset,
                    difficulty,
                    turn_timer,
                ),
                (direction, reshuffle_keeps),
            )| {
                let double_penalty = double.and_then(|(drawn, margin)| {
                    double_amount(penalty, drawn).map(|amount| DoublePenalty { amount, margin })
                });
                table(Drawn {
                    players,
                    seven,
                    rounds,
                    until_one,
                    call_limit,
                    penalty,
                    on_top,
                    double_penalty,
                    court,
                    runs,
                    jokers,
                    jokers_in_runs,
                    throw_first,
                    pickup,
                    cumulative,
                    elimination,
                    score_reset,
                    difficulty,
                    turn_timer,
                    direction,
                    reshuffle_keeps,
                })
            },
        )
        .boxed()
}

/// Settings built field by field, each from the whole range of its type or near the edges of
/// its valid range: mostly invalid.
pub fn any_raw_settings() -> BoxedStrategy<Settings> {
    (
        (
            any_u8(),
            any_u8(),
            prop_oneof![
                any_u32().prop_map(Rounds::Fixed),
                Just(Rounds::UntilOneRemains)
            ],
            prop::option::of(any_u32()),
            any_u32(),
            prop_oneof![Just(PenaltyMode::Instead), Just(PenaltyMode::OnTop)],
            prop::option::of(
                (any_u32(), any_u32())
                    .prop_map(|(amount, margin)| DoublePenalty { amount, margin }),
            ),
            any_court(),
        ),
        (
            any::<bool>(),
            any::<bool>(),
            any::<bool>(),
            prop_oneof![
                Just(TurnOrder::DrawThenThrow),
                Just(TurnOrder::ThrowThenDraw)
            ],
            any_pickup(),
            prop_oneof![Just(Scoring::Settlement), Just(Scoring::Cumulative)],
            prop::option::of(any_u32()),
            any::<bool>(),
            any_difficulty(),
            prop::option::of(any_u32()),
            any_direction(),
            any_reshuffle_keeps(),
        ),
    )
        .prop_map(
            |(
                (players, cards, rounds, call_limit, penalty, penalty_mode, double_penalty, court),
                (
                    runs,
                    jokers,
                    jokers_in_runs,
                    turn_order,
                    pickup,
                    scoring,
                    elimination,
                    score_reset,
                    difficulty,
                    turn_timer,
                    direction,
                    reshuffle_keeps,
                ),
            )| Settings {
                players,
                cards,
                rounds,
                call_limit,
                penalty,
                penalty_mode,
                double_penalty,
                court,
                runs,
                jokers,
                jokers_in_runs,
                turn_order,
                pickup,
                scoring,
                elimination,
                score_reset,
                difficulty,
                turn_timer,
                direction,
                reshuffle_keeps,
                // Anything at all: with and without hints (the engine ignores them).
                hints: difficulty == Difficulty::Easy,
            },
        )
        .boxed()
}

/// Any preset.
pub fn any_preset() -> impl Strategy<Value = Preset> {
    prop::sample::select(Preset::ALL.to_vec())
}

/// Any bot difficulty.
pub fn any_difficulty() -> impl Strategy<Value = Difficulty> {
    prop_oneof![
        Just(Difficulty::Easy),
        Just(Difficulty::Medium),
        Just(Difficulty::Hard),
        Just(Difficulty::Expert),
    ]
}

/// Any card of the pack with jokers.
pub fn any_card() -> impl Strategy<Value = Card> {
    (0..CARD_KINDS).prop_map(|i| Card::from_index(i).expect("an index below 54 is a card"))
}

/// Any court values.
fn any_court() -> impl Strategy<Value = CourtValues> {
    prop_oneof![
        Just(CourtValues::Tens),
        Just(CourtValues::Sequential),
        Just(CourtValues::JackZero),
    ]
}

/// Either direction of play.
pub fn any_direction() -> impl Strategy<Value = Direction> {
    prop_oneof![
        Just(Direction::Clockwise),
        Just(Direction::CounterClockwise)
    ]
}

/// Either rule for what a reshuffle keeps.
pub fn any_reshuffle_keeps() -> impl Strategy<Value = ReshuffleKeeps> {
    prop_oneof![
        Just(ReshuffleKeeps::TopCard),
        Just(ReshuffleKeeps::TopThrow)
    ]
}

/// Any pick-up rule.
fn any_pickup() -> impl Strategy<Value = PickUp> {
    prop_oneof![
        Just(PickUp::SingleOnly),
        Just(PickUp::AnyCard),
        Just(PickUp::Ends),
    ]
}

/// No turn timer, or any of the valid ones.
fn any_turn_timer() -> impl Strategy<Value = Option<u32>> {
    prop::option::of(prop::sample::select(TURN_TIMERS.to_vec()))
}

/// A `u8` from its full range, or near the valid values often enough to hit them.
fn any_u8() -> impl Strategy<Value = u8> {
    prop_oneof![any::<u8>(), 0u8..=8]
}

/// A `u32` from its full range, or near the edges of the valid ranges often enough to hit them.
fn any_u32() -> impl Strategy<Value = u32> {
    prop_oneof![
        any::<u32>(),
        Just(u32::MAX),
        0u32..=60,
        90u32..=110,
        480u32..=520,
        990u32..=1010,
    ]
}

/// The options of a table as a strategy draws them; [`table`] makes them one valid
/// [`Settings`].
struct Drawn {
    players: u8,
    /// Seven cards instead of five.
    seven: bool,
    /// Rounds, when the match does not run until one remains.
    rounds: u32,
    /// Play until one remains (only with elimination).
    until_one: bool,
    call_limit: Option<u32>,
    penalty: u32,
    /// The penalty on top of the hand instead of in place of it.
    on_top: bool,
    /// The double penalty, already above the penalty.
    double_penalty: Option<DoublePenalty>,
    court: CourtValues,
    runs: bool,
    jokers: bool,
    /// Jokers in runs (only with both).
    jokers_in_runs: bool,
    /// Throw, then draw.
    throw_first: bool,
    /// The pick-up rule (only when throwing first).
    pickup: PickUp,
    /// Cumulative scoring.
    cumulative: bool,
    /// Elimination at this total (only with cumulative scoring).
    elimination: Option<u32>,
    /// Score reset (only with cumulative scoring).
    score_reset: bool,
    difficulty: Difficulty,
    turn_timer: Option<u32>,
    direction: Direction,
    reshuffle_keeps: ReshuffleKeeps,
}

/// The valid table the drawn options describe (options that need another are dropped without
/// it); panics if it is not valid, since these strategies must only make valid tables.
fn table(drawn: Drawn) -> Settings {
    let elimination = drawn.elimination.filter(|_| drawn.cumulative);
    let settings = Settings {
        players: drawn.players,
        cards: if drawn.seven { 7 } else { 5 },
        rounds: if drawn.until_one && elimination.is_some() {
            Rounds::UntilOneRemains
        } else {
            Rounds::Fixed(drawn.rounds)
        },
        call_limit: drawn.call_limit,
        penalty: drawn.penalty,
        penalty_mode: if drawn.on_top {
            PenaltyMode::OnTop
        } else {
            PenaltyMode::Instead
        },
        double_penalty: drawn.double_penalty,
        court: drawn.court,
        runs: drawn.runs,
        jokers: drawn.jokers,
        jokers_in_runs: drawn.jokers_in_runs && drawn.runs && drawn.jokers,
        turn_order: if drawn.throw_first {
            TurnOrder::ThrowThenDraw
        } else {
            TurnOrder::DrawThenThrow
        },
        pickup: if drawn.throw_first {
            drawn.pickup
        } else {
            PickUp::SingleOnly
        },
        scoring: if drawn.cumulative {
            Scoring::Cumulative
        } else {
            Scoring::Settlement
        },
        elimination,
        score_reset: drawn.score_reset && drawn.cumulative,
        difficulty: drawn.difficulty,
        turn_timer: drawn.turn_timer,
        direction: drawn.direction,
        reshuffle_keeps: drawn.reshuffle_keeps,
        // The engine ignores hints; tying them to one difficulty draws tables with and without
        // them (for the settings' JSON) at no cost to the strategies' shrinking.
        hints: drawn.difficulty == Difficulty::Expert,
    };
    if let Err(e) = settings.validate() {
        panic!("a settings strategy made an invalid table ({e}): {settings:?}");
    }
    settings
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::strategy::ValueTree;
    use proptest::test_runner::TestRunner;

    /// The valid strategies make only valid tables, and cover both turn orders and every
    /// pick-up rule; the raw one makes invalid ones too.
    #[test]
    fn the_settings_strategies_make_what_they_say() {
        let mut runner = TestRunner::deterministic();
        for strategy in [any_settings(), any_settings_full_range()] {
            let mut pickups = Vec::new();
            for _ in 0..500 {
                let settings = strategy.new_tree(&mut runner).unwrap().current();
                assert!(settings.validate().is_ok(), "{settings:?}");
                if !pickups.contains(&settings.pickup) {
                    pickups.push(settings.pickup);
                }
            }
            assert_eq!(pickups.len(), 3, "{pickups:?}");
        }
        let raw = any_raw_settings();
        let invalid = (0..200)
            .filter(|_| {
                raw.new_tree(&mut runner)
                    .unwrap()
                    .current()
                    .validate()
                    .is_err()
            })
            .count();
        assert!(invalid > 100, "{invalid} of 200 raw settings were invalid");
    }
}
