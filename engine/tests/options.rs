//! The household guide's options (`seeds/003_…`), each played from explicit deck orders, and the
//! three presets played through whole matches.

use crate::common;

use common::{
    Rng, assert_scored, called_at_once, card, cards, deck, game, last_result, ok, pile, play_match,
    refused, standard, stock, take, throw,
};
use dhumbal_engine::{
    Action, Card, CourtValues, DoublePenalty, Ending, Event, Game, PenaltyMode, Phase, PickUp,
    Preset, Rounds, Scoring, Settings, TurnOrder,
};

/// Heavy hands for seats that only need to hold something: 44 and 50 under J/Q/K 10.
const HEAVY: [&str; 2] = ["8H 8D 8C 10C 10D", "JS JH JD JC 10H"];

/// A table of `players` that throws first and then draws, with this pick-up rule and runs on.
fn throw_first(players: u8, pickup: PickUp) -> Settings {
    Settings {
        players,
        turn_order: TurnOrder::ThrowThenDraw,
        pickup,
        runs: true,
        ..standard()
    }
}

/// Cumulative scoring with no call limit.
fn cumulative(players: u8) -> Settings {
    Settings {
        players,
        call_limit: None,
        scoring: Scoring::Cumulative,
        ..standard()
    }
}

// ----- Turn order and pick-up -----

/// Three seats that throw first, single cards only to pick up: seat 0 holds a run of hearts and
/// a pair of nines, the eight of spades is turned up, and the aces of spades and diamonds lie
/// on top of the stock.
fn three_throwing_first() -> Game {
    game(
        &throw_first(3, PickUp::SingleOnly),
        0,
        &["4H 5H 6H 9S 9C", "KS KH 2C 3C 7D", HEAVY[0]],
        "8S",
        "AS AD",
    )
}

#[test]
fn throw_then_draw_throws_first_then_draws_from_the_stock_or_the_previous_throw() {
    let mut g = three_throwing_first();
    refused(&mut g, 0, stock(), "must_throw_first");
    refused(&mut g, 0, take("8S"), "must_throw_first");
    assert!(g.takeable(0).is_empty());
    ok(&mut g, 0, throw("9S 9C"));
    assert_eq!(g.phase(), Phase::Draw);
    refused(&mut g, 0, throw("4H"), "already_threw");
    refused(&mut g, 0, Action::Call, "call_too_late");
    // The new throw is on top; the previous throw (here the card turned up at the deal) is kept
    // apart, and only it may be picked up.
    let view = g.view(0);
    assert_eq!(view.top_throw, cards("9S 9C"));
    assert_eq!(view.previous_throw, cards("8S"));
    assert_eq!(view.takeable, cards("8S"));
    assert_eq!(view.pile_top, Some(card("9C")));
    refused(&mut g, 0, take("9C"), "not_takeable");
    let events = ok(&mut g, 0, pile());
    assert_eq!(
        events,
        vec![Event::TookFromPile {
            seat: 0,
            card: card("8S")
        }]
    );
    assert_eq!(g.hand(0), cards("4H 5H 6H 8S").as_slice());
    assert_eq!((g.turn(), g.phase()), (1, Phase::Start));
    // Seat 1 throws a pair; seat 0's pair under it cannot be picked up (single only), so the
    // stock it is.
    ok(&mut g, 1, throw("KS KH"));
    assert_eq!(g.view(1).previous_throw, cards("9S 9C"));
    assert!(g.takeable(1).is_empty());
    refused(&mut g, 1, pile(), "pile_not_takeable");
    assert_eq!(g.legal_actions(1), vec![stock()]);
    ok(&mut g, 1, stock());
    assert_eq!(g.hand(1), cards("2C 3C 7D AS").as_slice());
    // Seat 2 throws one card; seat 1's pair is not takeable; it draws the ace of diamonds.
    ok(&mut g, 2, throw("10C"));
    assert!(g.takeable(2).is_empty());
    ok(&mut g, 2, stock());
    // Seat 0 throws its run and picks up seat 2's single ten.
    ok(&mut g, 0, throw("4H 5H 6H"));
    assert_eq!(g.takeable(0), cards("10C"));
    ok(&mut g, 0, take("10C"));
    assert_eq!(g.hand(0), cards("8S 10C").as_slice());
}

/// A throw-first table where seat 0 throws `first_throw` and draws blind, then seat 1 throws the
/// king of spades, so that seat 1 is to draw with seat 0's throw as the previous throw.
fn previous_throw_is(pickup: PickUp, first_throw: &str) -> Game {
    let settings = throw_first(2, pickup);
    let mut g = game(
        &settings,
        0,
        &["9S 9C 9H 4H 5H", "KS KH 2C 3C 6H"],
        "8S",
        "AS AD",
    );
    ok(&mut g, 0, throw(first_throw));
    ok(&mut g, 0, stock());
    ok(&mut g, 1, throw("KS"));
    g
}

#[test]
fn pick_up_any_card_of_a_previous_set_when_allowed() {
    let mut g = previous_throw_is(PickUp::AnyCard, "9S 9C 9H");
    assert_eq!(g.takeable(1), cards("9S 9C 9H"));
    refused(&mut g, 1, pile(), "choose_pile_card");
    refused(&mut g, 1, take("KS"), "not_takeable");
    let legal = g.legal_actions(1);
    for c in ["9S", "9C", "9H"] {
        assert!(legal.contains(&take(c)), "{c} is listed");
    }
    assert!(!legal.contains(&pile()));
    let events = ok(&mut g, 1, take("9C"));
    assert_eq!(
        events,
        vec![Event::TookFromPile {
            seat: 1,
            card: card("9C")
        }]
    );
    assert!(g.hand(1).contains(&card("9C")));
    // The taken card is gone from the pile; the rest of the set and the new top stay.
    let view = g.view(0);
    assert_eq!(view.pile_size, 4);
    assert_eq!(view.pile_top, Some(card("KS")));
    assert_eq!(view.top_throw, cards("KS"));
}

#[test]
fn pick_up_of_a_previous_set_is_refused_when_single_only() {
    let mut g = previous_throw_is(PickUp::SingleOnly, "9S 9C 9H");
    assert!(g.takeable(1).is_empty());
    refused(&mut g, 1, take("9C"), "pile_not_takeable");
    refused(&mut g, 1, take("9H"), "pile_not_takeable");
    refused(&mut g, 1, pile(), "pile_not_takeable");
    assert_eq!(g.legal_actions(1), vec![stock()]);
    // A single may be picked up.
    let mut g = previous_throw_is(PickUp::SingleOnly, "9H");
    assert_eq!(g.takeable(1), cards("9H"));
    ok(&mut g, 1, pile());
    assert!(g.hand(1).contains(&card("9H")));
}

/// Under the "ends" pick-up, seat 0 throws the run 4-5-6 of diamonds listed as `thrown`: seat 1
/// may take its first or last card (it takes `taken`), never the 5 in its middle.
fn run_thrown_offers_its_ends(thrown: &str, taken: &str) {
    let mut g = game(
        &throw_first(2, PickUp::Ends),
        0,
        &["4D 5D 6D 9H 9C", "KS KH 2C 3C 6H"],
        "8S",
        "AS",
    );
    ok(&mut g, 0, throw(thrown));
    ok(&mut g, 0, stock());
    ok(&mut g, 1, throw("2C"));
    assert_eq!(g.takeable(1), cards("4D 6D"), "{thrown}");
    refused(&mut g, 1, take("5D"), "not_takeable");
    ok(&mut g, 1, take(taken));
}

#[test]
fn pick_up_ends_allows_the_first_and_last_card_only() {
    let mut g = previous_throw_is(PickUp::Ends, "9S 9C 9H");
    assert_eq!(g.takeable(1), cards("9S 9H"));
    refused(&mut g, 1, take("9C"), "not_takeable");
    refused(&mut g, 1, pile(), "choose_pile_card");
    ok(&mut g, 1, take("9S"));
    // A run, as listed: 4 and 6 are its ends, the 5 is not.
    run_thrown_offers_its_ends("4D 5D 6D", "6D");
    // The same run listed out of order still offers its lowest and highest cards, never the
    // middle one (the order only decides which card lies on top).
    run_thrown_offers_its_ends("6D 4D 5D", "4D");
    // A single is its own first and last card.
    let mut g = previous_throw_is(PickUp::Ends, "9H");
    assert_eq!(g.takeable(1), cards("9H"));
    ok(&mut g, 1, pile());
}

#[test]
fn throw_then_draw_reshuffle_keeps_the_whole_top_throw() {
    let settings = throw_first(2, PickUp::AnyCard);
    let mut g = game(
        &settings,
        0,
        &["9S 9C 9H 4H 5H", "KS KH 2C 3C 6H"],
        "8S",
        "",
    );
    let mut rng = Rng(11);
    // Throw the largest legal group and draw blind, until the stock is empty.
    while g.view(0).stock_size > 0 {
        let seat = g.turn();
        let mut best = Vec::new();
        g.for_each_legal_group(seat, |group| {
            if group.len() > best.len() || rng.below(3) == 0 && group.len() == best.len() {
                best = group.to_vec();
            }
        });
        ok(&mut g, seat, Action::Throw { cards: best });
        ok(&mut g, seat, stock());
    }
    let seat = g.turn();
    let pile_before = g.view(seat).pile_size;
    let group = match g
        .legal_actions(seat)
        .into_iter()
        .max_by_key(|a| match a {
            Action::Throw { cards } => cards.len(),
            _ => 0,
        })
        .unwrap()
    {
        Action::Throw { cards } => cards,
        other => panic!("{other:?}"),
    };
    ok(
        &mut g,
        seat,
        Action::Throw {
            cards: group.clone(),
        },
    );
    let events = ok(&mut g, seat, stock());
    // Everything that was under the new throw goes back as the stock.
    assert_eq!(events[0], Event::Reshuffled { stock: pile_before });
    let kept = group.len();
    let view = g.view(seat);
    assert_eq!(view.pile_size, kept, "the whole top throw stays");
    assert_eq!(view.top_throw, group);
}

// ----- What a view says a seat may do -----

/// Whether `seat`'s view says it may draw, and whether it may throw, now.
fn may(g: &Game, seat: usize) -> (bool, bool) {
    let view = g.view(seat);
    (view.can_draw, view.can_throw)
}

#[test]
fn a_view_says_when_its_seat_may_draw_or_throw_at_draw_then_throw() {
    let settings = Settings {
        players: 3,
        call_limit: Some(15),
        ..standard()
    };
    let mut g = game(
        &settings,
        0,
        &["AS AH 2S 2H 9H", "KS KH 2C 3C 7D", HEAVY[0]],
        "8S",
        "AD AC",
    );
    assert_eq!(may(&g, 0), (true, false));
    assert_eq!((may(&g, 1), may(&g, 2)), ((false, false), (false, false)));
    let spectator = g.spectator_view();
    assert!(!spectator.can_draw && !spectator.can_throw);
    refused(&mut g, 0, throw("9H"), "must_draw_first");
    refused(&mut g, 1, stock(), "not_your_turn");
    refused(&mut g, 1, throw("KS"), "not_your_turn");
    ok(&mut g, 0, pile());
    // Drawn: it may throw (any card but the barred one), and may not draw again.
    assert_eq!(may(&g, 0), (false, true));
    refused(&mut g, 0, stock(), "already_drew");
    refused(&mut g, 0, throw("8S"), "barred_card");
    assert!(
        g.view(0).next_takeable.is_empty(),
        "only at throw-then-draw"
    );
    ok(&mut g, 0, throw("9H"));
    assert_eq!((may(&g, 0), may(&g, 1)), ((false, false), (true, false)));
    ok(&mut g, 1, stock());
    ok(&mut g, 1, throw("KS KH"));
    ok(&mut g, 2, stock());
    ok(&mut g, 2, throw("10C"));
    // Seat 0 holds 14, under the limit: it may call, or draw.
    let view = g.view(0);
    assert_eq!(
        (view.can_call, view.can_draw, view.can_throw),
        (true, true, false)
    );
    ok(&mut g, 0, Action::Call);
    assert_eq!(g.phase(), Phase::RoundOver);
    for seat in 0..3 {
        assert_eq!(may(&g, seat), (false, false));
        refused(&mut g, seat, stock(), "round_over");
        refused(&mut g, seat, throw("8S"), "round_over");
    }
    // The standings follow the Totals as they stand.
    let view = g.spectator_view();
    assert_eq!(view.standings, g.standings());
    assert_ne!(g.totals(), [0, 0, 0]);
    for standing in &view.standings {
        assert_eq!(standing.total, g.totals()[standing.seat]);
    }
    assert_eq!(view.standings[0].place, 1);
}

#[test]
fn a_view_says_when_its_seat_may_draw_or_throw_at_throw_then_draw() {
    let mut g = three_throwing_first();
    assert_eq!(may(&g, 0), (false, true));
    assert_eq!((may(&g, 1), may(&g, 2)), ((false, false), (false, false)));
    // The card turned up at the deal is a single throw: it may be picked up after the throw.
    assert_eq!(g.view(0).next_takeable, cards("8S"));
    assert_eq!(g.view(1).next_takeable, cards("8S"));
    assert_eq!(g.spectator_view().next_takeable, cards("8S"));
    refused(&mut g, 0, stock(), "must_throw_first");
    ok(&mut g, 0, throw("9S 9C"));
    assert_eq!(may(&g, 0), (true, false));
    assert!(g.view(0).next_takeable.is_empty());
    assert_eq!(g.view(0).takeable, cards("8S"));
    refused(&mut g, 0, throw("4H"), "already_threw");
    ok(&mut g, 0, pile());
    assert_eq!((may(&g, 0), may(&g, 1)), ((false, false), (false, true)));
    // Seat 0's throw was a pair: under single-only, nothing of it may be picked up.
    assert!(g.view(1).next_takeable.is_empty());
    ok(&mut g, 1, throw("KS KH"));
    assert!(g.takeable(1).is_empty());
    refused(&mut g, 1, pile(), "pile_not_takeable");
    // The stock is still there to draw from.
    assert_eq!(may(&g, 1), (true, false));
    ok(&mut g, 1, stock());
}

#[test]
fn next_takeable_is_what_the_pick_up_rule_offers_once_the_seat_has_thrown() {
    for (pickup, first_throw, offered) in [
        (PickUp::SingleOnly, "9S", "9S"),
        (PickUp::SingleOnly, "9S 9C", ""),
        (PickUp::AnyCard, "9C 9S", "9C 9S"),
        (PickUp::AnyCard, "5H 4H 6H", "5H 4H 6H"),
        (PickUp::Ends, "9S", "9S"),
        (PickUp::Ends, "9C 9S", "9C 9S"),
        // A run's ends are its lowest and highest cards, whatever order it was listed in.
        (PickUp::Ends, "5H 4H 6H", "4H 6H"),
    ] {
        let settings = throw_first(2, pickup);
        let mut g = game(
            &settings,
            0,
            &["9S 9C 4H 5H 6H", "KS KH 2C 3C 7D"],
            "8S",
            "AS AD",
        );
        assert_eq!(g.view(0).next_takeable, cards("8S"), "{pickup:?}");
        ok(&mut g, 0, throw(first_throw));
        ok(&mut g, 0, stock());
        let offered = cards(offered);
        let case = format!("{pickup:?} after {first_throw}");
        assert_eq!(g.view(1).next_takeable, offered, "{case}");
        assert_eq!(g.view(0).next_takeable, offered, "{case}");
        assert_eq!(g.spectator_view().next_takeable, offered, "{case}");
        ok(&mut g, 1, throw("KS"));
        assert_eq!(g.takeable(1), offered, "{case}");
        assert!(g.view(1).next_takeable.is_empty(), "{case}");
        for &card in &offered {
            let take = Action::Draw {
                from: dhumbal_engine::Source::PileCard(card),
            };
            assert!(g.clone().apply(1, take).is_ok(), "{case}: {card}");
        }
    }
}

// ----- Card values, call limit, penalties -----

#[test]
fn court_values_jack_zero_queen_ten_king_ten() {
    let settings = Settings {
        court: CourtValues::JackZero,
        ..standard()
    };
    let mut g = game(
        &settings,
        0,
        &[
            "JS JH JD JC AS",
            "QS QH KS KH 2S",
            HEAVY[0],
            "9S 9H 9D 9C 7S",
        ],
        "3S",
        "",
    );
    assert_eq!(g.view(0).hand_total, 1);
    assert_eq!(g.view(1).hand_total, 42);
    assert_eq!(g.view(2).hand_total, 44);
    // The view says what each card is worth, in the hand's order.
    assert_eq!(g.view(0).hand_values, [0, 0, 0, 0, 1]);
    assert_eq!(g.view(1).hand_values, [10, 10, 10, 10, 2]);
    assert!(g.spectator_view().hand_values.is_empty());
    // Four jacks and an ace are 1, so a dealt hand calls at once.
    ok(&mut g, 0, Action::Call);
    assert_eq!(last_result(&g).hand, vec![1, 42, 44, 43]);
}

#[test]
fn no_call_limit_lets_any_hand_call() {
    let settings = Settings {
        players: 2,
        call_limit: None,
        ..standard()
    };
    let mut g = game(&settings, 0, &["KS KH KD KC QS", HEAVY[0]], "3S", "");
    assert!(g.view(0).can_call);
    ok(&mut g, 0, Action::Call);
    let result = last_result(&g);
    assert_eq!(
        result.ending,
        Ending::Call {
            caller: 0,
            caught: true
        }
    );
    assert_eq!(result.took, vec![25, 0]);
}

#[test]
fn penalty_on_top_charges_the_hand_and_the_penalty() {
    let settings = Settings {
        players: 2,
        call_limit: None,
        penalty: 30,
        penalty_mode: PenaltyMode::OnTop,
        ..standard()
    };
    let g = called_at_once(&settings, &["KS KH KD KC QS", HEAVY[0]], "3S");
    let result = last_result(&g);
    assert_scored(result, &[50, 44], &[80, 0], &[-80, 80]);
}

#[test]
fn double_penalty_at_margin_five_no_and_six_yes() {
    let settings = Settings {
        players: 2,
        call_limit: None,
        double_penalty: Some(DoublePenalty {
            amount: 50,
            margin: 5,
        }),
        ..standard()
    };
    // Seat 1 holds 8; seat 0 calls on 13 (undercut by 5) and on 14 (undercut by 6).
    for (caller, margin, charged) in [("3H 3D 3C 2H 2D", 5, 25), ("4H 3D 3C 2H 2D", 6, 50)] {
        let g = called_at_once(&settings, &[caller, "AS AH AD 2S 3S"], "KC");
        let result = last_result(&g);
        assert_eq!(result.hand[0] - result.hand[1], margin);
        assert_eq!(result.took, vec![charged, 0], "margin {margin}");
    }
}

// ----- Cumulative scoring -----

#[test]
fn cumulative_winning_caller_scores_nothing_and_the_others_add_their_hands() {
    let g = called_at_once(
        &cumulative(3),
        &["AS AH 2S 2H 3S", HEAVY[0], HEAVY[1]],
        "KC",
    );
    let result = last_result(&g);
    assert_eq!(result.took, vec![0, 44, 50]);
    assert_eq!(result.paid, vec![0, 44, 50]);
    assert_eq!(g.totals(), &[0, 44, 50]);
    // Low is good: the caller leads the standings.
    assert_eq!(g.standings()[0].seat, 0);
}

#[test]
fn cumulative_caught_caller_adds_the_penalty_and_the_others_nothing() {
    let g = called_at_once(
        &cumulative(3),
        &["KS KH KD KC QS", HEAVY[0], HEAVY[1]],
        "QC",
    );
    let result = last_result(&g);
    assert_eq!(result.taker, 1);
    assert_eq!(result.hand, vec![50, 44, 50]);
    assert_eq!(result.took, vec![25, 0, 0]);
    assert_eq!(g.totals(), &[25, 0, 0]);
}

#[test]
fn cumulative_tie_only_the_caller_is_penalised() {
    // Seat 0 calls on 10; seats 1 and 2 hold 10 as well.
    let settings = Settings {
        jokers: true,
        ..cumulative(3)
    };
    let g = called_at_once(
        &settings,
        &["AS AH AD 3S 4S", "AC 2S 2H 2D 3H", "RJ BJ 2C 4H 4D"],
        "KC",
    );
    let result = last_result(&g);
    assert_eq!(result.hand, vec![10, 10, 10]);
    assert_eq!(result.took, vec![25, 0, 0]);
    assert_eq!(g.totals(), &[25, 0, 0]);
}

#[test]
fn cumulative_totals_add_up_over_rounds() {
    let settings = Settings {
        rounds: Rounds::Fixed(2),
        ..cumulative(2)
    };
    let decks = vec![
        deck(&settings, 0, &["AS AH 2S 2H 3S", HEAVY[0]], "KC", ""),
        deck(&settings, 1, &[HEAVY[1], "AS AH 2S 2H 3S"], "KC", ""),
    ];
    let mut g = Game::with_decks(settings, decks).unwrap();
    ok(&mut g, 0, Action::Call);
    g.next_round().unwrap();
    ok(&mut g, 1, Action::Call);
    assert_eq!(g.totals(), &[50, 44]);
    assert!(g.is_over());
    let places: Vec<(usize, usize)> = g.standings().iter().map(|s| (s.seat, s.place)).collect();
    assert_eq!(places, vec![(1, 1), (0, 2)]);
}

// ----- Elimination and the end of the match -----

fn eliminating(players: u8, rounds: Rounds, threshold: u32) -> Settings {
    Settings {
        rounds,
        elimination: Some(threshold),
        ..cumulative(players)
    }
}

/// The first deal of both three-seat matches that eliminate at 40: seat 0 calls on 9 and is
/// right, seat 1 is charged its 44 and goes out, seat 2 its 18.
fn seat_one_goes_out(settings: &Settings) -> Vec<Card> {
    deck(
        settings,
        0,
        &["AS AH 2S 2H 3S", HEAVY[0], "4S 4H 4D 3H 3D"],
        "KC",
        "",
    )
}

#[test]
fn elimination_mid_match_and_play_continues_with_fewer_seats() {
    let settings = eliminating(3, Rounds::Fixed(3), 40);
    let decks = vec![
        seat_one_goes_out(&settings),
        // Round 2: seat 1 is out, so only seats 2 and 0 are dealt, starting from seat 2.
        deck(
            &settings,
            2,
            &["AS AH 2S 2H 3S", "", "5S 5H 5D 6S 6H"],
            "KC",
            "9S 9H",
        ),
    ];
    let mut g = Game::with_decks(settings, decks).unwrap();
    ok(&mut g, 0, Action::Call);
    let result = last_result(&g);
    assert_eq!(result.total, vec![0, 44, 18]);
    assert_eq!(result.eliminated, vec![1]);
    assert_eq!(g.eliminated(), &[false, true, false]);
    assert_eq!(g.phase(), Phase::RoundOver, "two players remain");
    g.next_round().unwrap();
    g.validate_invariants().unwrap();
    // The deal skips the eliminated seat: seat 0 deals, seat 2 (its next active left) leads.
    assert_eq!((g.dealer(), g.turn()), (0, 2));
    let view = g.view(1);
    assert!(view.hand.is_empty());
    assert_eq!(view.card_counts, vec![5, 0, 5]);
    assert_eq!(view.stock_size, 52 - 10 - 1);
    assert_eq!(g.hand(2), cards("5S 5H 5D 6S 6H").as_slice());
    refused(&mut g, 1, Action::Call, "not_your_turn");
    assert!(g.legal_actions(1).is_empty());
    ok(&mut g, 2, stock());
    ok(&mut g, 2, throw("9S"));
    // Turns skip seat 1.
    assert_eq!(g.turn(), 0);
    ok(&mut g, 0, stock());
    ok(&mut g, 0, throw("9H"));
    assert_eq!(g.turn(), 2);
    // Seat 2 calls on 27 against 9 and is caught: 18 + 25 = 43 puts it out, and with one player
    // left the match ends before its third round.
    ok(&mut g, 2, Action::Call);
    let result = last_result(&g);
    assert!(!result.active[1]);
    assert_eq!(result.took, vec![0, 0, 25]);
    assert_eq!(result.total, vec![0, 44, 43]);
    assert_eq!(result.eliminated, vec![2]);
    assert!(g.is_over());
    assert_eq!(g.round(), 2);
    let standings = g.standings();
    assert_eq!((standings[0].seat, standings[0].place), (0, 1));
    assert!(standings[1..].iter().all(|s| s.eliminated));
}

#[test]
fn match_ends_when_one_player_remains() {
    let settings = eliminating(2, Rounds::Fixed(10), 30);
    let mut g = game(&settings, 0, &["AS AH 2S 2H 3S", HEAVY[0]], "KC", "");
    let events = ok(&mut g, 0, Action::Call);
    assert!(g.is_over());
    let Some(Event::MatchEnded { standings }) = events.last() else {
        panic!("the match ended: {events:?}");
    };
    assert_eq!(standings[0].seat, 0);
    assert!(standings[1].eliminated);
    assert_eq!(g.next_round().unwrap_err().code(), "match_over");
}

#[test]
fn rounds_until_one_remains() {
    let settings = eliminating(3, Rounds::UntilOneRemains, 40);
    let decks = vec![
        seat_one_goes_out(&settings),
        deck(
            &settings,
            2,
            &["AS AH 2S 3S 3H", "", "AD AC 2D 2C 3D"],
            "KC",
            "",
        ),
        deck(
            &settings,
            0,
            &["AD AC 2D 2C 3D", "", "KS KH KD KC QS"],
            "QC",
            "",
        ),
    ];
    let mut g = Game::with_decks(settings, decks).unwrap();
    // Round 1: seat 1 goes out (44); round 2: seat 2 calls right, seat 0 adds 10; round 3 (dealt
    // by seat 2, skipping seat 1): seat 0 calls right and seat 2 adds 50 → 68, out.
    ok(&mut g, 0, Action::Call);
    g.next_round().unwrap();
    ok(&mut g, 2, Action::Call);
    assert_eq!(g.totals(), &[10, 44, 18]);
    assert_eq!(g.phase(), Phase::RoundOver);
    g.next_round().unwrap();
    assert_eq!((g.dealer(), g.turn()), (2, 0));
    ok(&mut g, 0, Action::Call);
    assert_eq!(g.totals(), &[10, 44, 68]);
    assert!(g.is_over());
    assert_eq!(g.eliminated(), &[false, true, true]);
    assert_eq!(g.standings()[0].seat, 0);
}

// ----- Jokers in runs, score reset -----

#[test]
fn jokers_in_runs_fill_a_gap_or_extend_a_run() {
    let on = Settings {
        runs: true,
        jokers: true,
        jokers_in_runs: true,
        ..standard()
    };
    let hand = "4H RJ 6H 9S 9C";
    let mut g = game(
        &on,
        0,
        &[hand, HEAVY[0], HEAVY[1], "QS QH QD QC KS"],
        "KC",
        "BJ",
    );
    ok(&mut g, 0, stock());
    let mut gap = g.clone();
    ok(&mut gap, 0, throw("4H RJ 6H"));
    let mut extend = g.clone();
    ok(&mut extend, 0, throw("4H RJ 6H BJ"));
    // Beside one real card, two jokers are a set, not a run; and a joker still goes in sets.
    let mut set = g.clone();
    ok(&mut set, 0, throw("9S BJ 9C"));
    let off = Settings {
        jokers_in_runs: false,
        ..on
    };
    let mut g = game(
        &off,
        0,
        &[hand, HEAVY[0], HEAVY[1], "QS QH QD QC KS"],
        "KC",
        "BJ",
    );
    ok(&mut g, 0, stock());
    refused(&mut g, 0, throw("4H RJ 6H"), "illegal_group");
    refused(&mut g, 0, throw("4H RJ 6H BJ"), "illegal_group");
}

#[test]
fn score_reset_on_an_exact_multiple_of_fifty() {
    let settings = Settings {
        rounds: Rounds::Fixed(2),
        score_reset: true,
        ..cumulative(3)
    };
    let decks = vec![
        deck(
            &settings,
            0,
            &["AS AH 2S 2H 3S", "10S 10H 10D 10C QS", "KS KH KD 5C 5D"],
            "KC",
            "",
        ),
        deck(
            &settings,
            1,
            &["9S 9H 9D 9C 8S", "AS AH 2S 2H 3S", "AC AD 2C 3C 3D"],
            "KC",
            "",
        ),
    ];
    let mut g = Game::with_decks(settings.clone(), decks.clone()).unwrap();
    ok(&mut g, 0, Action::Call);
    let result = last_result(&g);
    // Seat 1 lands exactly on 50 and drops to 0; seat 2's 40 stays.
    assert_eq!(result.took, vec![0, 50, 40]);
    assert_eq!(result.reset, vec![false, true, false]);
    assert_eq!(result.paid, vec![0, 0, 40]);
    assert_eq!(g.totals(), &[0, 0, 40]);
    g.next_round().unwrap();
    ok(&mut g, 1, Action::Call);
    // Seat 2 goes from 40 to exactly 50 and drops to 0; seat 0's 44 stays.
    let result = last_result(&g);
    assert_eq!(result.reset, vec![false, false, true]);
    assert_eq!(g.totals(), &[44, 0, 0]);
    // Without the reset, the same play keeps the 50s.
    let plain = Settings {
        score_reset: false,
        ..settings
    };
    let mut g = Game::with_decks(plain, decks).unwrap();
    ok(&mut g, 0, Action::Call);
    g.next_round().unwrap();
    ok(&mut g, 1, Action::Call);
    assert_eq!(g.totals(), &[44, 50, 50]);
}

// ----- Presets -----

#[test]
fn presets_are_documented_values_with_stable_names() {
    let household = Preset::Household.settings();
    assert_eq!(household.court, CourtValues::JackZero);
    assert_eq!(household.turn_order, TurnOrder::ThrowThenDraw);
    assert_eq!(household.pickup, PickUp::SingleOnly);
    assert!(household.runs);
    assert_eq!(household.call_limit, None);
    assert_eq!(household.penalty, 25);
    assert_eq!(household.scoring, Scoring::Cumulative);
    assert_eq!(household.elimination, Some(100));
    assert_eq!(household.players, 5);
    let yaniv = Preset::Yaniv.settings();
    assert_eq!(yaniv.pickup, PickUp::Ends);
    assert_eq!(yaniv.court, CourtValues::Tens);
    assert_eq!(yaniv.call_limit, Some(7));
    assert_eq!(
        (yaniv.penalty, yaniv.penalty_mode),
        (30, PenaltyMode::OnTop)
    );
    assert!(yaniv.runs && yaniv.jokers && yaniv.jokers_in_runs && yaniv.score_reset);
    assert_eq!(yaniv.elimination, Some(200));
    for preset in Preset::ALL {
        assert_eq!(Preset::from_name(preset.name()), Some(preset));
    }
}

#[test]
fn presets_play_full_matches_to_the_end() {
    for preset in Preset::ALL {
        for seed in 0..4u64 {
            let mut rng = Rng(seed * 1000 + 7);
            let settings = preset.settings();
            let mut g = Game::new(settings.clone(), rng.seed()).unwrap();
            let applied = play_match(&mut g, &mut rng, 1000);
            assert!(applied > 0);
            assert!(g.is_over(), "{} seed {seed}", preset.name());
            let remaining = g.eliminated().iter().filter(|out| !**out).count();
            match settings.rounds {
                Rounds::Fixed(n) => {
                    assert!(g.round() <= n);
                    assert!(g.round() == n || remaining <= 1);
                }
                Rounds::UntilOneRemains => assert_eq!(remaining, 1),
            }
            assert_eq!(g.results().len() as u32, g.round());
            assert!(g.revealed_seeds().is_some());
            assert!(matches!(g.log().last(), Some(Event::MatchEnded { .. })));
        }
    }
}
