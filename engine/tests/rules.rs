//! The standard table (`seeds/000_…`), one test per rule paragraph, each played from an explicit
//! deck order through the public API.

use crate::common;

use common::{
    assert_scored, called_at_once, card, cards, deck, game, last_result, pile, refused, standard,
    stock, take, throw,
};
use dhumbal_engine::{
    Action, Card, CourtValues, Ending, Event, Game, Phase, Rounds, RuleError, Settings, THROW_CAP,
    full_deck, hand_total,
};

fn with_players(players: u8) -> Settings {
    Settings {
        players,
        ..standard()
    }
}

/// Heavy hands for seats 1–3 (44, 50 and 48) that no test needs to look at.
const FILLER: [&str; 3] = ["8H 8D 8C 10C 10D", "JS JH JD JC 10H", "QH QD QC 10S 8S"];

/// A standard four-seat game where seat 0 holds `hand` and the others hold [`FILLER`].
fn seat_zero_holds(settings: &Settings, hand: &str, pile: &str, stock: &str) -> Game {
    game(
        settings,
        0,
        &[hand, FILLER[0], FILLER[1], FILLER[2]],
        pile,
        stock,
    )
}

// ----- What you need; the deal -----

#[test]
fn one_pack_of_52_and_the_two_jokers_only_when_turned_on() {
    for (jokers, size) in [(false, 52), (true, 54)] {
        let settings = Settings {
            jokers,
            ..standard()
        };
        let game = Game::new(settings, [3; 32]).unwrap();
        let view = game.spectator_view();
        let dealt: usize = view.card_counts.iter().sum();
        assert_eq!(dealt + view.pile_size + view.stock_size, size);
        game.validate_invariants().unwrap();
    }
}

#[test]
fn deal_is_one_at_a_time_from_the_dealers_left() {
    let pack = full_deck(false);
    let game = Game::with_decks(standard(), vec![pack.clone()]).unwrap();
    // Round 1 is dealt by seat 3, so seat 0 gets the first card, seat 1 the second, …
    for seat in 0..4 {
        let want: Vec<Card> = (0..5).map(|k| pack[k * 4 + seat]).collect();
        assert_eq!(game.hand(seat), want.as_slice(), "seat {seat}");
    }
}

#[test]
fn next_card_turned_up_is_the_pile_and_four_at_five_leave_31_in_the_stock() {
    let pack = full_deck(false);
    let mut game = Game::with_decks(standard(), vec![pack.clone()]).unwrap();
    let view = game.view(0);
    assert_eq!(view.pile_top, Some(pack[20]));
    assert_eq!(view.pile_size, 1);
    assert_eq!(view.stock_size, 31);
    // The stock's top is the card after the pile.
    game.apply(0, stock()).unwrap();
    assert!(game.hand(0).contains(&pack[21]));
}

#[test]
fn seven_cards_may_be_dealt_instead() {
    let settings = Settings {
        cards: 7,
        ..standard()
    };
    let view = Game::new(settings, [1; 32]).unwrap().view(0);
    assert_eq!(view.card_counts, vec![7; 4]);
    assert_eq!(view.stock_size, 52 - 28 - 1);
}

#[test]
fn round_one_is_dealt_by_the_last_seat_so_seat_zero_leads() {
    for players in 2..=6 {
        let game = Game::new(with_players(players), [9; 32]).unwrap();
        let last = usize::from(players) - 1;
        assert_eq!(game.dealer(), last);
        assert_eq!(game.turn(), 0);
        assert_eq!(game.phase(), Phase::Start);
        assert!(matches!(
            game.log()[0],
            Event::Dealt { round: 1, dealer, .. } if dealer == last
        ));
    }
}

#[test]
fn the_seat_on_the_dealers_left_plays_first_then_play_goes_left() {
    let mut game = Game::new(with_players(3), [4; 32]).unwrap();
    refused(&mut game, 1, stock(), "not_your_turn");
    refused(&mut game, 2, stock(), "not_your_turn");
    refused(&mut game, 3, stock(), "no_such_seat");
    game.apply(0, stock()).unwrap();
    let first = game.hand(0)[0];
    game.apply(0, Action::Throw { cards: vec![first] }).unwrap();
    assert_eq!(game.turn(), 1);
}

#[test]
fn dealer_moves_left_each_round() {
    let settings = Settings {
        players: 3,
        rounds: Rounds::Fixed(5),
        call_limit: None,
        ..standard()
    };
    let mut game = Game::new(settings, [5; 32]).unwrap();
    let mut dealers = Vec::new();
    let mut leaders = Vec::new();
    loop {
        dealers.push(game.dealer());
        leaders.push(game.turn());
        let seat = game.turn();
        game.apply(seat, Action::Call).unwrap();
        if game.is_over() {
            break;
        }
        game.next_round().unwrap();
    }
    assert_eq!(dealers, vec![2, 0, 1, 2, 0]);
    assert_eq!(leaders, vec![0, 1, 2, 0, 1]);
}

// ----- What the cards are worth -----

#[test]
fn ace_is_one_numbers_their_own_and_courts_ten_each() {
    let g = game(
        &standard(),
        0,
        &[
            "AS 2H KD 9C QS",
            "JH 10S 5D 3C 4H",
            "AH AD AC 2S 2D",
            "KS KH KC QH QD",
        ],
        "7S",
        "",
    );
    assert_eq!(g.view(0).hand_total, 1 + 2 + 10 + 9 + 10);
    assert_eq!(g.view(1).hand_total, 10 + 10 + 5 + 3 + 4);
    assert_eq!(g.view(2).hand_total, 7);
    assert_eq!(g.view(3).hand_total, 50);
    // "An ace, a two and a king come to 13."
    assert_eq!(hand_total(&cards("AS 2H KD"), CourtValues::Tens), 13);
}

#[test]
fn a_printed_joker_is_worth_nothing() {
    let settings = Settings {
        jokers: true,
        ..standard()
    };
    let g = seat_zero_holds(&settings, "RJ BJ AS AH 2S", "9S", "");
    assert_eq!(g.view(0).hand_total, 4);
}

#[test]
fn court_cards_can_be_eleven_twelve_thirteen_and_the_ace_stays_one() {
    let settings = Settings {
        court: CourtValues::Sequential,
        ..standard()
    };
    let g = seat_zero_holds(&settings, "9C QS KH AH 2H", "9S", "");
    assert_eq!(g.view(0).hand_total, 9 + 12 + 13 + 1 + 2);
    // The filler hands hold jacks (11) and queens (12).
    assert_eq!(g.view(1).hand_total, 8 * 3 + 10 * 2);
    assert_eq!(g.view(2).hand_total, 11 * 4 + 10);
    assert_eq!(g.view(3).hand_total, 12 * 3 + 10 + 8);
}

// ----- A turn -----

#[test]
fn call_only_before_drawing() {
    let settings = Settings {
        call_limit: Some(50),
        ..standard()
    };
    let mut g = seat_zero_holds(&settings, "AS AH 2S 2H 9H", "9S", "KC");
    assert!(g.can_call(0));
    g.apply(0, stock()).unwrap();
    assert!(!g.can_call(0));
    refused(&mut g, 0, Action::Call, "call_too_late");
    g.apply(0, throw("KC")).unwrap();
    // The call waits for the next turn: seat 1 may call at the start of its own, seat 0 not.
    assert!(g.can_call(1));
    assert!(!g.can_call(0));
    refused(&mut g, 0, Action::Call, "not_your_turn");
}

#[test]
fn call_only_at_or_under_the_limit() {
    // Four aces and a two are 6, over the standard limit of 5.
    let mut g = seat_zero_holds(&standard(), "AS AH AD AC 2S", "9S", "KC");
    assert_eq!(g.view(0).hand_total, 6);
    let err = refused(&mut g, 0, Action::Call, "over_limit");
    assert_eq!(err, RuleError::OverLimit { total: 6, limit: 5 });
    assert!(!g.view(0).can_call);
    // At a limit of 6 the same hand is on the limit, which is enough to call.
    let settings = Settings {
        call_limit: Some(6),
        ..standard()
    };
    let mut g = seat_zero_holds(&settings, "AS AH AD AC 2S", "9S", "KC");
    assert!(g.view(0).can_call);
    g.apply(0, Action::Call).unwrap();
    assert_eq!(g.phase(), Phase::RoundOver);
}

#[test]
fn exactly_one_draw_then_one_group() {
    let mut g = seat_zero_holds(&standard(), "AS AH 2S 2H 9H", "9S", "KC KD");
    refused(&mut g, 0, throw("9H"), "must_draw_first");
    g.apply(0, stock()).unwrap();
    refused(&mut g, 0, stock(), "already_drew");
    refused(&mut g, 0, pile(), "already_drew");
    assert_eq!(g.hand(0).len(), 6);
    let events = g.apply(0, throw("KC")).unwrap();
    assert_eq!(
        events,
        vec![Event::Threw {
            seat: 0,
            cards: cards("KC")
        }]
    );
    assert_eq!(g.hand(0).len(), 5);
    // Throwing ends the turn.
    assert_eq!((g.turn(), g.phase()), (1, Phase::Start));
}

#[test]
fn throw_at_least_one_card_and_no_passing_or_keeping_the_extra_card() {
    let mut g = seat_zero_holds(&standard(), "AS AH 2S 2H 9H", "9S", "KC");
    g.apply(0, stock()).unwrap();
    refused(&mut g, 0, throw(""), "empty_throw");
    // The only legal actions are throws: no pass.
    let actions = g.legal_actions(0);
    assert!(!actions.is_empty());
    assert!(actions.iter().all(|a| matches!(a, Action::Throw { .. })));
    refused(&mut g, 0, throw("3S"), "not_in_hand");
    refused(&mut g, 0, throw("AS AS"), "duplicate_card");
}

#[test]
fn taking_from_the_pile_is_public_and_the_stock_is_blind() {
    let mut g = seat_zero_holds(&standard(), "AS AH 2S 2H 9H", "9S", "KC");
    let events = g.apply(0, stock()).unwrap();
    assert_eq!(events, vec![Event::DrewFromStock { seat: 0 }]);
    for other in 1..4 {
        let json = serde_json::to_string(&g.view(other)).unwrap();
        assert!(!json.contains("\"KC\""), "seat {other} sees the blind card");
    }
    g.apply(0, throw("KC")).unwrap();
    let events = g.apply(1, pile()).unwrap();
    assert_eq!(
        events,
        vec![Event::TookFromPile {
            seat: 1,
            card: card("KC")
        }]
    );
    assert!(g.public_history().log.contains(&Event::TookFromPile {
        seat: 1,
        card: card("KC")
    }));
}

#[test]
fn empty_stock_reshuffles_everything_under_the_top() {
    let settings = with_players(2);
    let mut g = game(&settings, 0, &["AS AH 2S 2H 9H", FILLER[0]], "9S", "");
    assert_eq!(g.view(0).stock_size, 41);
    // Each seat draws blind and throws the card it drew, until the stock is empty.
    for _ in 0..41 {
        let seat = g.turn();
        g.apply(seat, stock()).unwrap();
        let drawn = *g.hand(seat).last().unwrap();
        g.apply(seat, Action::Throw { cards: vec![drawn] }).unwrap();
        g.validate_invariants().unwrap();
    }
    let view = g.view(0);
    assert_eq!((view.stock_size, view.pile_size), (0, 42));
    let top = view.pile_top.unwrap();
    let seat = g.turn();
    let events = g.apply(seat, stock()).unwrap();
    assert_eq!(
        events,
        vec![
            Event::Reshuffled { stock: 41 },
            Event::DrewFromStock { seat }
        ]
    );
    let view = g.view(seat);
    assert_eq!(view.pile_top, Some(top), "the top card stays");
    assert_eq!((view.pile_size, view.stock_size), (1, 40));
    g.validate_invariants().unwrap();
}

// ----- What you may throw together -----

#[test]
fn one_card_and_two_or_more_of_one_rank_are_legal() {
    let mut g = seat_zero_holds(&standard(), "KS KH KD 2S 9H", "9S", "KC");
    g.apply(0, stock()).unwrap();
    refused(&mut g, 0, throw("KS 2S"), "illegal_group");
    let before = g.clone();
    g.apply(0, throw("KS KH KD KC")).unwrap();
    assert_eq!(g.hand(0), cards("2S 9H").as_slice());
    let mut g = before.clone();
    g.apply(0, throw("9H")).unwrap();
    let mut g = before;
    g.apply(0, throw("KH KD")).unwrap();
}

#[test]
fn part_sets_are_legal() {
    let mut g = seat_zero_holds(&standard(), "7H 7D 7C 2S 9H", "9S", "KC");
    g.apply(0, stock()).unwrap();
    g.apply(0, throw("7H 7C")).unwrap();
    assert_eq!(g.hand(0), cards("7D 2S 9H KC").as_slice());
}

#[test]
fn runs_only_when_on_ace_low_no_wrap() {
    let hand = "4H 5H 6H QS KS";
    let mut off = seat_zero_holds(&standard(), hand, "9S", "AS");
    off.apply(0, stock()).unwrap();
    refused(&mut off, 0, throw("4H 5H 6H"), "illegal_group");
    let runs = Settings {
        runs: true,
        ..standard()
    };
    let mut on = seat_zero_holds(&runs, hand, "9S", "AS");
    on.apply(0, stock()).unwrap();
    refused(&mut on, 0, throw("QS KS AS"), "illegal_group");
    refused(&mut on, 0, throw("KS AS"), "illegal_group");
    refused(&mut on, 0, throw("4H 5H"), "illegal_group");
    let mut listed_freely = on.clone();
    listed_freely.apply(0, throw("6H 4H 5H")).unwrap();
    on.apply(0, throw("4H 5H 6H")).unwrap();
    assert_eq!(on.hand(0), cards("QS KS AS").as_slice());
    // Ace low: A-2-3 of one suit is a run.
    let mut low = seat_zero_holds(&runs, "AD 2D 3D QS KS", "9S", "AS");
    low.apply(0, stock()).unwrap();
    refused(&mut low, 0, throw("AD 2D 3D AS"), "illegal_group");
    low.apply(0, throw("AD 2D 3D")).unwrap();
}

#[test]
fn jokers_in_sets_never_in_runs_pair_of_jokers() {
    let settings = Settings {
        jokers: true,
        runs: true,
        ..standard()
    };
    let hand = "RJ 4H 6H 7S QS";
    let mut g = seat_zero_holds(&settings, hand, "9S", "BJ");
    g.apply(0, stock()).unwrap();
    refused(&mut g, 0, throw("4H RJ 6H"), "illegal_group");
    let mut set = g.clone();
    set.apply(0, throw("7S RJ")).unwrap();
    let mut pair = g.clone();
    pair.apply(0, throw("RJ BJ")).unwrap();
    assert_eq!(pair.view(0).hand_total, 4 + 6 + 7 + 10);
    let mut alone = g;
    alone.apply(0, throw("BJ")).unwrap();
}

#[test]
fn card_taken_from_pile_is_barred_even_inside_a_group() {
    let runs = Settings {
        runs: true,
        ..standard()
    };
    let mut g = seat_zero_holds(&runs, "7S 7H 5D 6D 9H", "7D", "7C");
    g.apply(0, pile()).unwrap();
    assert_eq!(g.view(0).barred, Some(card("7D")));
    let err = refused(&mut g, 0, throw("7D"), "barred_card");
    assert_eq!(err, RuleError::BarredCard(card("7D")));
    refused(&mut g, 0, throw("7S 7H 7D"), "barred_card");
    refused(&mut g, 0, throw("5D 6D 7D"), "barred_card");
    // Nothing the seat may throw holds the barred card.
    for action in g.legal_actions(0) {
        if let Action::Throw { cards } = action {
            assert!(!cards.contains(&card("7D")), "{cards:?}");
        }
    }
    g.apply(0, throw("7S 7H")).unwrap();
    // The bar lasts for this turn only.
    assert_eq!(g.view(0).barred, None);
}

#[test]
fn card_drawn_from_the_stock_is_not_barred() {
    let mut g = seat_zero_holds(&standard(), "7S 7H 5D 6D 9H", "7D", "7C");
    g.apply(0, stock()).unwrap();
    assert_eq!(g.view(0).barred, None);
    g.apply(0, throw("7S 7H 7C")).unwrap();
}

#[test]
fn group_lands_in_listed_order_last_on_top() {
    let mut g = seat_zero_holds(&standard(), "7S 7H 7D 6D 9H", "2D", "KC");
    g.apply(0, stock()).unwrap();
    g.apply(0, throw("7D 7S 7H")).unwrap();
    let view = g.view(1);
    assert_eq!(view.pile_top, Some(card("7H")));
    assert_eq!(view.top_throw, cards("7D 7S 7H"));
    assert_eq!(view.takeable, cards("7H"));
    // Only the top can be taken: not the others of the set, not the card under it.
    let err = refused(&mut g, 1, take("7S"), "not_takeable");
    assert_eq!(err, RuleError::NotTakeable(card("7S")));
    refused(&mut g, 1, take("2D"), "not_takeable");
    g.apply(1, take("7H")).unwrap();
    assert_eq!(g.view(2).pile_top, Some(card("7S")));
}

// ----- Calling -----

/// A standard table of `players` seats with this call limit.
fn limit(players: u8, limit: u32) -> Settings {
    Settings {
        players,
        call_limit: Some(limit),
        ..standard()
    }
}

#[test]
fn a_right_call_shows_every_hand_and_takes_the_round_for_nothing() {
    let mut g = game(
        &limit(3, 6),
        0,
        &["AS AH AD AC 2S", FILLER[0], FILLER[1]],
        "9S",
        "",
    );
    let events = g.apply(0, Action::Call).unwrap();
    assert_eq!(events[0], Event::Called { seat: 0 });
    let Event::RoundEnded { result } = &events[1] else {
        panic!("the call ends the round: {events:?}");
    };
    assert_eq!(
        result.ending,
        Ending::Call {
            caller: 0,
            caught: false
        }
    );
    assert_eq!(result.taker, 0);
    assert_eq!(result.hands[1], cards(FILLER[0]));
    assert_eq!(result.hands[2], cards(FILLER[1]));
    assert_scored(result, &[6, 44, 50], &[0, 44, 50], &[94, -44, -50]);
    // After the show, every seat sees every hand.
    assert_eq!(
        g.public_history().results[0].hands[0],
        cards("AS AH AD AC 2S")
    );
    assert_eq!(g.phase(), Phase::RoundOver);
}

#[test]
fn equal_is_enough_to_catch() {
    // Seat 0 calls on 10, on the limit; seat 1 holds 10 as well.
    let g = called_at_once(
        &limit(3, 10),
        &["AS AH 2S 2H 4S", "AD AC 2D 2C 4H", FILLER[1]],
        "9D",
    );
    let result = last_result(&g);
    assert_eq!(
        result.ending,
        Ending::Call {
            caller: 0,
            caught: true
        }
    );
    assert_eq!(result.taker, 1);
    assert_scored(result, &[10, 10, 50], &[25, 0, 50], &[-25, 75, -50]);
}

#[test]
fn a_caught_caller_is_charged_the_penalty_and_the_round_goes_to_the_lightest() {
    // Seat 0 calls on 10 and is beaten by seat 1's 8.
    let g = called_at_once(
        &limit(3, 10),
        &["AS AH 2S 3S 3H", "AD AC 2D 2C 2H", FILLER[1]],
        "9D",
    );
    let result = last_result(&g);
    assert_eq!(result.taker, 1);
    assert_scored(result, &[10, 8, 50], &[25, 0, 50], &[-25, 75, -50]);
    assert_eq!(g.totals(), &[-25, 75, -50]);
}

#[test]
fn a_dealt_hand_may_call_as_the_first_action() {
    // Without jokers five cards weigh at least 6; with them, a dealt hand can be under 5.
    let settings = Settings {
        jokers: true,
        ..standard()
    };
    let mut g = seat_zero_holds(&settings, "RJ BJ AS AH 2S", "9S", "");
    assert_eq!(g.legal_actions(0)[0], Action::Call);
    g.apply(0, Action::Call).unwrap();
    assert_eq!(g.log()[1], Event::Called { seat: 0 });
    assert_eq!(last_result(&g).taker, 0);
    assert_eq!(g.throws(), 0);
}

// ----- How a round ends -----

#[test]
fn throw_cap_ends_the_round_after_200_throws() {
    // Nobody calls: every seat draws blind and throws what it drew, so the hands never change.
    let hands = [
        "9S 9H 9D 9C 2S", // 38
        "AS AH 3S 3H 4S", // 12
        "AD AC 3D 3C 4H", // 12
        "KS KH KD KC QS", // 50
    ];
    let mut g = game(&standard(), 0, &hands, "2H", "");
    let mut reshuffles = 0;
    for n in 1..=THROW_CAP {
        assert_eq!(g.phase(), Phase::Start, "throw {n}");
        let seat = g.turn();
        let events = g.apply(seat, stock()).unwrap();
        reshuffles += events
            .iter()
            .filter(|e| matches!(e, Event::Reshuffled { .. }))
            .count();
        let drawn = *g.hand(seat).last().unwrap();
        g.apply(seat, Action::Throw { cards: vec![drawn] }).unwrap();
        assert_eq!(g.throws(), n);
    }
    assert!(
        reshuffles >= 6,
        "the pile went back under {reshuffles} times"
    );
    assert_eq!(g.phase(), Phase::RoundOver);
    let result = last_result(&g);
    assert_eq!(result.ending, Ending::ThrowCap);
    // The lightest takes the round (the tie is walked from the dealer's left: seat 1 before 2);
    // nobody is penalised, everyone else is charged the hand.
    assert_eq!(result.taker, 1);
    assert_scored(
        result,
        &[38, 12, 12, 50],
        &[38, 0, 12, 50],
        &[-38, 100, -12, -50],
    );
    refused(&mut g, 2, stock(), "round_over");
    // The count starts again at zero with every deal.
    g.next_round().unwrap();
    assert_eq!(g.throws(), 0);
}

#[test]
fn tie_walks_from_the_dealers_left() {
    // Round 2 is dealt by seat 0, so seat 1 leads and calls on 19; seats 3 and 0 tie on 12.
    // Walking from the dealer's left (1, 2, 3, 0), seat 3 is met first and takes the round, and
    // seat 0, which lost the tie, is charged its hand in full.
    let settings = Settings {
        call_limit: Some(20),
        ..standard()
    };
    let round_one = deck(
        &settings,
        0,
        &["AS AH 2S 3S 3H", FILLER[0], FILLER[1], FILLER[2]],
        "9D",
        "",
    );
    let round_two = deck(
        &settings,
        1,
        &[
            "AS AH 3S 3H 4S",
            "5S 5H 5D 2S 2H",
            FILLER[2],
            "AD AC 3D 3C 4H",
        ],
        "9D",
        "",
    );
    let mut g = Game::with_decks(settings, vec![round_one, round_two]).unwrap();
    g.apply(0, Action::Call).unwrap();
    g.next_round().unwrap();
    assert_eq!((g.dealer(), g.turn()), (0, 1));
    g.apply(1, Action::Call).unwrap();
    let result = last_result(&g);
    assert_eq!(result.taker, 3);
    assert_scored(
        result,
        &[12, 19, 48, 12],
        &[12, 25, 48, 0],
        &[-12, -25, -48, 85],
    );
}

#[test]
fn the_round_waits_for_next_round_and_a_match_is_three_rounds() {
    let mut g = Game::new(
        Settings {
            call_limit: None,
            ..standard()
        },
        [8; 32],
    )
    .unwrap();
    assert_eq!(g.next_round().unwrap_err().code(), "round_not_over");
    for round in 1..=3 {
        assert_eq!(g.round(), round);
        let seat = g.turn();
        g.apply(seat, Action::Call).unwrap();
        if round < 3 {
            assert_eq!(g.phase(), Phase::RoundOver);
            let next = (seat + 1) % 4;
            refused(&mut g, next, Action::Call, "round_over");
            refused(&mut g, seat, stock(), "round_over");
            let events = g.next_round().unwrap();
            assert!(matches!(events[0], Event::Dealt { .. }));
        }
    }
    assert!(g.is_over());
    assert_eq!(g.phase(), Phase::MatchOver);
    assert!(matches!(g.log().last(), Some(Event::MatchEnded { .. })));
    refused(&mut g, 0, Action::Call, "match_over");
    let err = g.next_round().unwrap_err();
    assert_eq!(err.code(), "match_over");
    assert!(!err.to_string().is_empty());
    assert_eq!(g.results().len(), 3);
}

// ----- Keeping score -----

#[test]
fn worked_example_four_twelve_nineteen_seven_nobody_caught() {
    // Each seat draws one card and throws a set to reach the example's hands, then seat 0 calls.
    let mut g = game(
        &standard(),
        0,
        &[
            "2S 2H 9S 9H 9D",
            "AS AH 10S 5H 5D",
            "AD 8S 10H 6S 6H",
            "AC 3S 3H 4S 4H",
        ],
        "KC",
        "9C 5C 6D 4D",
    );
    for (seat, set) in ["9S 9H 9D 9C", "5H 5D 5C", "6S 6H 6D", "4S 4H 4D"]
        .into_iter()
        .enumerate()
    {
        g.apply(seat, stock()).unwrap();
        g.apply(seat, throw(set)).unwrap();
    }
    g.apply(0, Action::Call).unwrap();
    let result = last_result(&g);
    assert_scored(
        result,
        &[4, 12, 19, 7],
        &[0, 12, 19, 7],
        &[38, -12, -19, -7],
    );
    assert_eq!(result.paid.iter().sum::<i64>(), 0);
    assert_eq!(g.totals(), &[38, -12, -19, -7]);
}

#[test]
fn worked_example_caught_caller_at_four_and_four() {
    let mut g = game(
        &with_players(2),
        0,
        &["2S 2H 9S 9H 9D", "AS 3S 5H 5D 5S"],
        "KC",
        "9C 5C",
    );
    g.apply(0, stock()).unwrap();
    g.apply(0, throw("9S 9H 9D 9C")).unwrap();
    g.apply(1, stock()).unwrap();
    g.apply(1, throw("5H 5D 5S 5C")).unwrap();
    g.apply(0, Action::Call).unwrap();
    let result = last_result(&g);
    assert_eq!(
        result.ending,
        Ending::Call {
            caller: 0,
            caught: true
        }
    );
    assert_scored(result, &[4, 4], &[25, 0], &[-25, 25]);
}

#[test]
fn match_of_three_rounds_goes_to_the_highest_total_and_equal_totals_share_a_place() {
    // Three seats, a limit high enough for dealt hands to call; each round's leader calls.
    // Round 1 (seat 0 leads): 10 against 20 and 20. Round 2 (seat 1): the same. Round 3
    // (seat 2): 10 against 15 and 15. Totals: +5, +5, −10.
    let settings = Settings {
        players: 3,
        call_limit: Some(10),
        ..standard()
    };
    let ten = "AS 2S 3S 2H 2D";
    let twenty_a = "5S 5H 5D 3H 2C";
    let twenty_b = "6S 6H 6D AH AD";
    let decks = vec![
        deck(&settings, 0, &[ten, twenty_a, twenty_b], "KC", ""),
        deck(&settings, 1, &[twenty_b, ten, twenty_a], "KC", ""),
        deck(
            &settings,
            2,
            &["3C 3D 3H 5C AC", "4S 4H 4D 2C AH", ten],
            "KC",
            "",
        ),
    ];
    let mut g = Game::with_decks(settings, decks).unwrap();
    let mut totals = vec![0i64; 3];
    for round in 0..3 {
        g.apply(round, Action::Call).unwrap();
        let result = last_result(&g);
        assert_eq!(result.taker, round);
        for (total, paid) in totals.iter_mut().zip(&result.paid) {
            *total += paid;
        }
        // The Total is the running sum of Paid, and the table sums to nothing.
        assert_eq!(result.total, totals);
        assert_eq!(totals.iter().sum::<i64>(), 0);
        if round < 2 {
            g.next_round().unwrap();
        }
    }
    assert_eq!(g.totals(), &[5, 5, -10]);
    assert!(g.is_over());
    let places: Vec<(usize, usize, i64)> = g
        .standings()
        .iter()
        .map(|s| (s.seat, s.place, s.total))
        .collect();
    assert_eq!(places, vec![(0, 1, 5), (1, 1, 5), (2, 3, -10)]);
    let Some(Event::MatchEnded { standings }) = g.log().last() else {
        panic!("the match ended");
    };
    assert_eq!(standings, &g.standings());
}

#[test]
fn the_match_goes_to_the_highest_total_not_the_most_rounds_won() {
    // Seat 1 wins two small rounds; seat 0 wins one big one and the match.
    let settings = Settings {
        players: 2,
        call_limit: Some(50),
        ..standard()
    };
    let small = "AS 2S 3S 2H 2D"; // 10
    let eleven = "AH AD 3H 3D 3C"; // 11
    let heavy = "KS KH KD KC QS"; // 50
    let decks = vec![
        deck(&settings, 0, &[eleven, small], "9C", ""),
        deck(&settings, 1, &[eleven, small], "9C", ""),
        deck(&settings, 0, &[small, heavy], "9C", ""),
    ];
    let mut g = Game::with_decks(settings, decks).unwrap();
    // Round 1: seat 0 calls on 11 and is caught by 10.
    g.apply(0, Action::Call).unwrap();
    g.next_round().unwrap();
    // Round 2: seat 1 calls on 10 and is right.
    g.apply(1, Action::Call).unwrap();
    g.next_round().unwrap();
    // Round 3: seat 0 calls on 10 against 50.
    g.apply(0, Action::Call).unwrap();
    let takers: Vec<usize> = g.results().iter().map(|r| r.taker).collect();
    assert_eq!(takers, vec![1, 1, 0]);
    assert_eq!(g.totals(), &[-25 - 11 + 50, 25 + 11 - 50]);
    assert_eq!(g.standings()[0].seat, 0);
    assert_eq!(g.standings()[0].place, 1);
}

// ----- Things worth knowing -----

/// Two seats, runs on: seat 0 draws the 7 and throws a run of six, emptying its hand, and the
/// round goes on; seat 1 draws and throws the 9 of diamonds. Seat 0 is to play, holding nothing.
fn emptied_hand() -> Game {
    let settings = Settings {
        players: 2,
        runs: true,
        ..standard()
    };
    let mut g = game(&settings, 0, &["2S 3S 4S 5S 6S", FILLER[0]], "KC", "7S 9D");
    g.apply(0, stock()).unwrap();
    g.apply(0, throw("2S 3S 4S 5S 6S 7S")).unwrap();
    assert!(g.hand(0).is_empty());
    assert_eq!((g.turn(), g.phase()), (1, Phase::Start));
    g.apply(1, stock()).unwrap();
    g.apply(1, throw("9D")).unwrap();
    g
}

#[test]
fn emptied_hand_can_call_next_turn() {
    // On its next turn, a hand of nothing may call, and nothing is lighter than nothing.
    let mut g = emptied_hand();
    let view = g.view(0);
    assert_eq!((view.hand_total, view.can_call), (0, true));
    g.apply(0, Action::Call).unwrap();
    assert_eq!(last_result(&g).taker, 0);
    assert_eq!(last_result(&g).paid, vec![44, -44]);
}

/// Regression: an emptied hand could take the pile's top, which is then barred, and was left
/// with nothing it could throw — a turn that could never end.
#[test]
fn an_empty_hand_taking_from_the_pile_was_left_with_no_legal_throw() {
    let mut g = emptied_hand();
    assert!(g.takeable(0).is_empty());
    refused(&mut g, 0, pile(), "pile_not_takeable");
    refused(&mut g, 0, take("9D"), "pile_not_takeable");
    assert_eq!(g.legal_actions(0), vec![Action::Call, stock()]);
    // Drawing blind is still allowed, and the drawn card can be thrown.
    g.apply(0, stock()).unwrap();
    assert!(!g.legal_actions(0).is_empty());
}

#[test]
fn card_counts_are_public() {
    let settings = Settings {
        players: 3,
        runs: true,
        ..standard()
    };
    let mut g = game(
        &settings,
        0,
        &["2S 3S 4S 9H 9D", FILLER[0], FILLER[1]],
        "KC",
        "5S",
    );
    g.apply(0, stock()).unwrap();
    g.apply(0, throw("2S 3S 4S 5S")).unwrap();
    for seat in 0..3 {
        assert_eq!(g.view(seat).card_counts, vec![2, 5, 5]);
    }
    assert_eq!(g.spectator_view().card_counts, vec![2, 5, 5]);
    assert!(g.spectator_view().hand.is_empty());
}

// ----- The settings -----

#[test]
fn settings_are_validated_before_a_table_plays_them() {
    let bad = [
        (
            Settings {
                players: 1,
                ..standard()
            },
            "bad_players",
        ),
        (
            Settings {
                players: 7,
                ..standard()
            },
            "bad_players",
        ),
        (
            Settings {
                cards: 6,
                ..standard()
            },
            "bad_cards",
        ),
        (
            Settings {
                rounds: Rounds::Fixed(0),
                ..standard()
            },
            "bad_rounds",
        ),
        (
            Settings {
                penalty: 0,
                ..standard()
            },
            "bad_penalty",
        ),
        (
            Settings {
                call_limit: Some(51),
                ..standard()
            },
            "bad_call_limit",
        ),
    ];
    for (settings, code) in bad {
        let err = Game::new(settings.clone(), [0; 32]).unwrap_err();
        assert_eq!(err.code(), code, "{settings:?}");
        assert!(!err.to_string().is_empty());
    }
    for players in 2..=6 {
        for cards in [5, 7] {
            let settings = Settings {
                players,
                cards,
                ..standard()
            };
            Game::new(settings, [players; 32]).unwrap();
        }
    }
}

#[test]
fn explicit_decks_must_hold_the_whole_pack() {
    let settings = standard();
    let mut short = full_deck(false);
    short.pop();
    assert_eq!(
        Game::with_decks(settings.clone(), vec![short])
            .unwrap_err()
            .code(),
        "bad_deck"
    );
    assert_eq!(
        Game::with_decks(settings.clone(), vec![])
            .unwrap_err()
            .code(),
        "bad_deck"
    );
    let jokers = Settings {
        jokers: true,
        ..settings
    };
    assert_eq!(
        Game::with_decks(jokers, vec![full_deck(false)])
            .unwrap_err()
            .code(),
        "bad_deck"
    );
}

#[test]
fn every_rule_error_has_a_code_and_a_sentence() {
    // The codes the other tests provoke, listed once so a new error cannot go untested.
    let errors = [
        RuleError::NoSuchSeat(9),
        RuleError::NotYourTurn,
        RuleError::RoundOver,
        RuleError::MatchOver,
        RuleError::RoundNotOver,
        RuleError::CallTooLate,
        RuleError::OverLimit { total: 6, limit: 5 },
        RuleError::MustDrawFirst,
        RuleError::MustThrowFirst,
        RuleError::AlreadyDrew,
        RuleError::AlreadyThrew,
        RuleError::EmptyThrow,
        RuleError::NotInHand(card("AS")),
        RuleError::DuplicateCard(card("AS")),
        RuleError::BarredCard(card("AS")),
        RuleError::IllegalGroup,
        RuleError::NotTakeable(card("AS")),
        RuleError::ChoosePileCard,
        RuleError::PileNotTakeable,
        RuleError::StockEmpty,
    ];
    let mut codes: Vec<&str> = errors.iter().map(RuleError::code).collect();
    for (err, code) in errors.iter().zip(&codes) {
        assert!(!err.to_string().is_empty(), "{code}");
        assert!(
            code.chars().all(|c| c.is_ascii_lowercase() || c == '_'),
            "{code}"
        );
    }
    codes.sort();
    codes.dedup();
    assert_eq!(codes.len(), errors.len(), "codes are distinct");
}
