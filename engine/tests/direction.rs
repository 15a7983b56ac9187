//! The turn-order direction and what a reshuffle keeps (issue 35, items 16 to 18): a
//! counter-clockwise round deals, plays and passes the deal the other way; the household
//! table's reshuffle keeps exactly the pile's top card, as its guide says; the guide's tables
//! seat 2 to 5; and settings stored before these options keep their old rules.

use crate::common;

use common::{Rng, cards, ok, random_action, refused, stock};
use dhumbal_engine::arbitrary::any_settings;
use dhumbal_engine::{
    Action, Direction, Event, Game, Phase, Preset, ReshuffleKeeps, Scoring, Settings, Source,
    TurnOrder,
};
use proptest::prelude::*;

/// A random legal action other than a call (a household table may call at any total, which
/// would end most rounds long before the stock runs out), or the call when nothing else is legal.
fn no_call(game: &Game, rng: &mut Rng) -> Action {
    let seat = game.turn();
    let others: Vec<Action> = game
        .legal_actions(seat)
        .into_iter()
        .filter(|a| *a != Action::Call)
        .collect();
    if others.is_empty() {
        return random_action(game, rng);
    }
    others[rng.below(others.len())].clone()
}

/// Plays household matches, throwing a group of two or more whenever the stock is empty and one
/// is in hand (so the top throw is bigger than one card when the pile is reshuffled), and checks
/// every reshuffle: the pile keeps exactly its top card and everything else becomes the stock.
/// Returns how many reshuffles followed a throw of two or more cards.
fn household_reshuffles(players: u8, seed: u64) -> usize {
    let settings = Settings {
        players,
        ..Preset::Household.settings()
    };
    let mut rng = Rng(seed);
    let mut game = Game::new(settings, rng.seed()).unwrap();
    let mut after_a_group = 0;
    while !game.is_over() {
        if game.phase() == Phase::RoundOver {
            game.next_round().unwrap();
            continue;
        }
        let seat = game.turn();
        let view = game.view(seat);
        let action = match game.legal_actions(seat).into_iter().find(|a| {
            view.stock_size == 0
                && view.phase == Phase::Start
                && matches!(a, Action::Throw { cards } if cards.len() > 1)
        }) {
            Some(group) => group,
            None if view.phase == Phase::Draw && view.stock_size == 0 && game.can_draw(seat) => {
                Action::Draw {
                    from: Source::Stock,
                }
            }
            None => no_call(&game, &mut rng),
        };
        let before = game.view(seat);
        let events = match game.apply(seat, action.clone()) {
            Ok(events) => events,
            // The stock may not be drawable (everything but the top is in hands).
            Err(_) => game.apply(seat, no_call(&game, &mut rng)).unwrap(),
        };
        game.validate_invariants().unwrap();
        if let Some(stock) = events.iter().find_map(|e| match e {
            Event::Reshuffled { stock } => Some(*stock),
            _ => None,
        }) {
            let after = game.view(seat);
            assert_eq!(after.pile_size, 1, "the pile keeps exactly its top card");
            assert_eq!(after.pile_top, before.pile_top, "the top card stays on top");
            assert_eq!(
                stock,
                before.pile_size - 1,
                "everything under the top is shuffled"
            );
            assert_eq!(
                after.top_throw,
                before.pile_top.into_iter().collect::<Vec<_>>()
            );
            if before.top_throw.len() > 1 {
                after_a_group += 1;
            }
        }
    }
    after_a_group
}

#[test]
fn the_household_reshuffle_keeps_exactly_the_top_card() {
    let mut after_a_group = 0;
    for (k, players) in (2..=5).cycle().take(24).enumerate() {
        after_a_group += household_reshuffles(players, 3516 + k as u64);
    }
    assert!(
        after_a_group > 0,
        "no reshuffle came after a throw of two or more cards"
    );
}

/// The standard table of four, counter-clockwise.
fn counter_clockwise() -> Settings {
    Settings {
        direction: Direction::CounterClockwise,
        ..Preset::Standard.settings()
    }
}

#[test]
fn a_counter_clockwise_round_deals_plays_and_passes_the_deal_the_other_way() {
    let settings = counter_clockwise();
    assert_eq!(
        settings.first_dealer(),
        1,
        "seat 1 deals round 1, so seat 0 leads"
    );
    // Seat 0 is dealt first, then 3, 2, 1, one card at a time.
    let hands = [
        "AS 2S 3S 4S 5S",
        "AH 2H 3H 4H 5H",
        "AD 2D 3D 4D 5D",
        "AC 2C 3C 4C 5C",
    ];
    let deck = common::deck(&settings, 0, &hands, "KS", "");
    assert_eq!(
        &deck[..8],
        cards("AS AC AD AH 2S 2C 2D 2H").as_slice(),
        "one card at a time from seat 0 to seat 3, 2 and 1"
    );
    let mut g = Game::with_decks(settings.clone(), vec![deck]).unwrap();
    assert_eq!((g.round(), g.dealer(), g.turn()), (1, 1, 0));
    for (seat, hand) in hands.iter().enumerate() {
        assert_eq!(g.hand(seat), cards(hand).as_slice(), "seat {seat}'s hand");
    }
    assert_eq!(g.view(2).play_order, vec![0, 3, 2, 1]);
    // Play goes 0, 3, 2, 1 and back to 0.
    for (seat, next) in [(0, 3), (3, 2), (2, 1), (1, 0)] {
        refused(&mut g, (seat + 1) % 4, stock(), "not_your_turn");
        ok(&mut g, seat, stock());
        let card = g.hand(seat)[0];
        ok(&mut g, seat, Action::Throw { cards: vec![card] });
        assert_eq!(g.turn(), next, "after seat {seat}");
    }
    // Play the round out; then the deal passes to seat 0 (the seat after seat 1
    // counter-clockwise), and seat 3 leads.
    while g.phase() != Phase::RoundOver {
        let seat = g.turn();
        if g.can_call(seat) {
            ok(&mut g, seat, Action::Call);
        } else {
            ok(&mut g, seat, stock());
            let card = *g
                .hand(seat)
                .iter()
                .max_by_key(|c| c.value(g.settings().court))
                .unwrap();
            ok(&mut g, seat, Action::Throw { cards: vec![card] });
        }
    }
    g.next_round().unwrap();
    assert_eq!((g.round(), g.dealer(), g.turn()), (2, 0, 3));
    g.validate_invariants().unwrap();
}

#[test]
fn ties_are_walked_from_the_seat_after_the_dealer_in_the_tables_direction() {
    // Seat 0 calls at 29 and is caught; seats 2 and 3 tie for lightest at 10. Clockwise (dealer
    // 3) the walk goes 0, 1, 2: seat 2 takes the round; counter-clockwise (dealer 1) it goes 0,
    // 3: seat 3 does.
    let hands = [
        "5S 5H 6S 6H 7S",
        "KS KH KD KC QS",
        "AS AH 2S 3C 3D",
        "AD AC 2H 2D 4S",
    ];
    for (direction, dealer, taker) in [
        (Direction::Clockwise, 3, 2),
        (Direction::CounterClockwise, 1, 3),
    ] {
        let settings = Settings {
            direction,
            call_limit: None,
            ..Preset::Standard.settings()
        };
        let mut g = common::game(&settings, 0, &hands, "9C", "");
        assert_eq!(g.dealer(), dealer);
        ok(&mut g, 0, Action::Call);
        let result = common::last_result(&g);
        assert_eq!(result.taker, taker, "{direction:?}");
        assert_eq!(
            result.took[5 - taker],
            10,
            "the other tied seat is charged in full"
        );
    }
}

#[test]
fn settings_stored_before_the_options_keep_their_old_rules() {
    let strip = |settings: &Settings| {
        let mut json = serde_json::to_value(settings).unwrap();
        let object = json.as_object_mut().unwrap();
        object.remove("direction");
        object.remove("reshuffle_keeps");
        serde_json::from_value::<Settings>(json).unwrap()
    };
    for preset in Preset::ALL {
        let old = strip(&preset.settings());
        assert_eq!(old.direction, Direction::Clockwise, "{preset:?}");
        let kept = match old.turn_order {
            TurnOrder::DrawThenThrow => ReshuffleKeeps::TopCard,
            TurnOrder::ThrowThenDraw => ReshuffleKeeps::TopThrow,
        };
        assert_eq!(old.reshuffle_keeps, kept, "{preset:?}");
    }
    // The household preset now keeps the top card; a household room stored before plays on as
    // it was played, keeping the top throw.
    assert_eq!(
        Preset::Household.settings().reshuffle_keeps,
        ReshuffleKeeps::TopCard
    );
    assert_eq!(
        strip(&Preset::Household.settings()).reshuffle_keeps,
        ReshuffleKeeps::TopThrow
    );
    assert_eq!(
        Preset::Yaniv.settings().reshuffle_keeps,
        ReshuffleKeeps::TopThrow
    );
    // Both new fields go out by name, and an unknown value is refused.
    let json = serde_json::to_value(counter_clockwise()).unwrap();
    assert_eq!(json["direction"], "counter_clockwise");
    assert_eq!(json["reshuffle_keeps"], "top_card");
    let mut bad = json.clone();
    bad["direction"] = "widdershins".into();
    assert!(serde_json::from_value::<Settings>(bad).is_err());
}

#[test]
fn the_guides_tables_seat_two_to_five() {
    for preset in Preset::ALL {
        for players in 2..=6u8 {
            let settings = Settings {
                players,
                ..preset.settings()
            };
            // A stored table of six still plays (and replays).
            settings.validate().unwrap();
            let new = settings.validate_new_table();
            if preset == Preset::Standard || players <= 5 {
                new.unwrap();
            } else {
                let err = new.unwrap_err();
                assert_eq!(err.code(), "guide_players", "{preset:?}");
                assert!(err.to_string().contains("2 to 5"), "{err}");
            }
        }
    }
    // Either guide-only rule alone makes a table the guide's.
    for settings in [
        Settings {
            players: 6,
            turn_order: TurnOrder::ThrowThenDraw,
            ..Preset::Standard.settings()
        },
        Settings {
            players: 6,
            scoring: Scoring::Cumulative,
            ..Preset::Standard.settings()
        },
    ] {
        assert_eq!(
            settings.validate_new_table().unwrap_err().code(),
            "guide_players"
        );
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(24))]

    /// Every game ends and every card stays in exactly one place, under both directions and
    /// both reshuffle rules (the invariants are checked after every step by `play_match`).
    #[test]
    fn every_match_ends_and_keeps_its_cards_under_both_directions_and_reshuffles(
        settings in any_settings(),
        seed in any::<[u8; 32]>(),
        choices in any::<u64>(),
    ) {
        for direction in [Direction::Clockwise, Direction::CounterClockwise] {
            for reshuffle_keeps in [ReshuffleKeeps::TopCard, ReshuffleKeeps::TopThrow] {
                let settings = Settings { direction, reshuffle_keeps, ..settings.clone() };
                let mut game = Game::new(settings.clone(), seed).unwrap();
                prop_assert_eq!(game.dealer(), settings.first_dealer());
                prop_assert_eq!(game.turn(), 0);
                let mut rng = Rng(choices);
                common::play_match(&mut game, &mut rng, 400);
                prop_assert!(game.is_over());
            }
        }
    }
}
