//! Property tests over random mixes of every table option and random play from random seeds:
//! invariants after every step, zero-sum settlement, growing cumulative totals, rejected actions
//! that change nothing, `legal_actions` that lists exactly what `apply` accepts, rounds and
//! matches that end, views that hide other hands and say exactly what their seat may do, and
//! replays that reproduce the game.

use crate::common;

use common::{Rng, random_action};
use dhumbal_engine::arbitrary::any_settings;
use dhumbal_engine::{
    Action, Card, Event, Game, Phase, Preset, RuleError, Scoring, SeatView, Source, THROW_CAP,
    TurnOrder, classify, full_deck,
};
use proptest::prelude::*;

/// The most rounds a random match may take before the test calls it stuck.
const MAX_ROUNDS: u32 = 400;

/// Checks one round's result against the totals before it.
fn check_result(game: &Game, before: &[i64], events: &[Event]) {
    let Some(result) = events.iter().find_map(|e| match e {
        Event::RoundEnded { result } => Some(result),
        _ => None,
    }) else {
        return;
    };
    let settings = game.settings();
    assert_eq!(result.took[result.taker], 0, "the taker is charged nothing");
    assert!(result.active[result.taker]);
    for s in 0..game.seats() {
        if !result.active[s] {
            assert_eq!((result.took[s], result.paid[s]), (0, 0), "seat {s} is out");
        }
    }
    match settings.scoring {
        Scoring::Settlement => {
            assert_eq!(result.paid.iter().sum::<i64>(), 0, "Paid sums to zero");
            assert_eq!(result.total.iter().sum::<i64>(), 0, "Totals sum to zero");
            for (s, before) in before.iter().enumerate() {
                assert_eq!(result.total[s], before + result.paid[s]);
            }
        }
        Scoring::Cumulative => {
            for (s, &before) in before.iter().enumerate() {
                let took = i64::from(result.took[s]);
                if result.reset[s] {
                    assert!(settings.score_reset);
                    assert_eq!(result.total[s], before + took - 50);
                    assert_eq!((before + took) % 50, 0);
                } else {
                    assert!(result.total[s] >= before, "cumulative totals only grow");
                    assert_eq!(result.total[s], before + took);
                }
            }
        }
    }
    assert_eq!(result.total.as_slice(), game.totals());
}

/// Plays a whole match with random legal actions, calling `each` before every action. Checks
/// the invariants after every step, every round's scores, that every round ends within the
/// throw cap and that the match ends.
fn play(game: &mut Game, rng: &mut Rng, mut each: impl FnMut(&mut Game, &mut Rng)) {
    let mut actions_this_round = 0u32;
    while !game.is_over() {
        assert!(game.round() <= MAX_ROUNDS, "the match did not end");
        if game.phase() == Phase::RoundOver {
            let before = game.clone();
            assert_eq!(
                game.apply(game.turn(), Action::Call),
                Err(RuleError::RoundOver)
            );
            assert_eq!(*game, before);
            game.next_round().expect("the next round deals");
            actions_this_round = 0;
        } else {
            each(game, rng);
            let seat = game.turn();
            // Drawing blind is always possible when a draw is due: hands only shrink, so the
            // stock and the pile under what must stay on top never run out together, and the
            // `stock_empty` refusal cannot arise in play.
            let draw_due = matches!(
                (game.settings().turn_order, game.phase()),
                (TurnOrder::DrawThenThrow, Phase::Start) | (TurnOrder::ThrowThenDraw, Phase::Draw)
            );
            if draw_due {
                let stock = Action::Draw {
                    from: Source::Stock,
                };
                assert_eq!(game.check(seat, &stock), Ok(()));
            }
            let action = random_action(game, rng);
            let before = game.totals().to_vec();
            let events = game
                .apply(seat, action)
                .expect("a legal action is accepted");
            check_result(game, &before, &events);
            actions_this_round += 1;
            // A turn is at most two actions, and the cap ends the round at 200 throws.
            assert!(
                actions_this_round <= 2 * THROW_CAP + 1,
                "the round did not end"
            );
            assert!(game.throws() <= THROW_CAP);
        }
        game.validate_invariants().expect("invariants hold");
    }
}

/// A random action that is probably illegal: a wrong or missing seat, random or duplicated
/// cards, draws and calls at the wrong time.
fn wild_action(game: &Game, rng: &mut Rng) -> (usize, Action) {
    let seat = match rng.below(4) {
        0 => rng.below(game.seats() + 2),
        _ => game.turn(),
    };
    let pack = full_deck(true);
    let random_card = |rng: &mut Rng| {
        let hand = if seat < game.seats() {
            game.hand(seat)
        } else {
            &[]
        };
        if !hand.is_empty() && rng.below(3) > 0 {
            hand[rng.below(hand.len())]
        } else {
            pack[rng.below(pack.len())]
        }
    };
    let action = match rng.below(6) {
        0 => Action::Call,
        1 => Action::Draw {
            from: Source::Stock,
        },
        2 => Action::Draw { from: Source::Pile },
        3 => Action::Draw {
            from: Source::PileCard(random_card(rng)),
        },
        _ => {
            let n = rng.below(5);
            Action::Throw {
                cards: (0..n).map(|_| random_card(rng)).collect(),
            }
        }
    };
    (seat, action)
}

/// Whether `action` is listed, with a throw compared by its cards in hand order.
fn listed(game: &Game, seat: usize, legal: &[Action], action: &Action) -> bool {
    match action {
        Action::Throw { cards } => {
            let hand = game.hand(seat);
            let mut canonical = cards.clone();
            canonical.sort_by_key(|c| hand.iter().position(|h| h == c));
            let distinct = canonical.windows(2).all(|w| w[0] != w[1]);
            distinct
                && cards.iter().all(|c| hand.contains(c))
                && legal.contains(&Action::Throw { cards: canonical })
        }
        other => legal.contains(other),
    }
}

/// `apply` accepts `action` (on a copy) exactly when `legal_actions` lists it, and `check` agrees.
fn agrees(game: &Game, seat: usize, legal: &[Action], action: Action) {
    let listed = seat < game.seats() && listed(game, seat, legal, &action);
    let checked = game.check(seat, &action);
    let mut copy = game.clone();
    let applied = copy.apply(seat, action.clone());
    assert_eq!(
        applied.is_ok(),
        listed,
        "seat {seat} {action:?}: apply says {applied:?}"
    );
    assert_eq!(checked.is_ok(), listed, "check disagrees on {action:?}");
    if let Err(err) = applied {
        assert_eq!(copy, *game, "a refused {action:?} changed the game");
        assert_eq!(checked, Err(err));
    }
}

/// Every card that has been face up this round: the deal's pile card, every throw, every card
/// taken from the pile.
fn public_cards(game: &Game) -> Vec<Card> {
    let mut seen = Vec::new();
    for event in game.log() {
        match event {
            Event::Dealt { pile_top, .. } => seen.push(*pile_top),
            Event::Threw { cards, .. } => seen.extend(cards),
            Event::TookFromPile { card, .. } => seen.push(*card),
            _ => {}
        }
    }
    seen
}

/// No view shows a card another seat holds or the stock hides, unless the whole table has seen it
/// face up this round.
fn views_hide_other_hands(game: &Game) {
    if matches!(game.phase(), Phase::RoundOver | Phase::MatchOver) {
        return;
    }
    let public = public_cards(game);
    let barred = game.view(game.turn()).barred;
    let viewers = (0..game.seats())
        .map(|s| (Some(s), game.view(s)))
        .chain([(None, game.spectator_view())]);
    for (viewer, view) in viewers {
        let json = serde_json::to_string(&view).unwrap();
        // Every string in the JSON (card names included): the odd pieces between quotes, as no
        // string in a view holds an escaped quote.
        let strings: std::collections::HashSet<&str> = json.split('"').skip(1).step_by(2).collect();
        let visible = view.visible_cards();
        for other in (0..game.seats()).filter(|&o| Some(o) != viewer) {
            for card in game.hand(other) {
                if visible.contains(card) {
                    assert_eq!(
                        Some(*card),
                        barred,
                        "{viewer:?} sees {card} in seat {other}'s hand"
                    );
                }
            }
        }
        // No card the table has not seen face up this round is named, unless the viewer holds
        // it: not another seat's, not the stock's.
        let own = viewer.map(|s| game.hand(s)).unwrap_or_default();
        let pack = full_deck(game.settings().jokers);
        for card in pack
            .iter()
            .filter(|c| !public.contains(c) && !own.contains(c))
        {
            assert!(
                !strings.contains(card.to_string().as_str()),
                "{viewer:?}'s view names {card}, which is hidden from it"
            );
        }
    }
}

/// What each seat's view (and a spectator's) says it may do now is what it may do: `can_draw`,
/// `can_throw` and `can_call` are whether [`Game::legal_actions`] (which lists exactly what
/// `apply` accepts: see `legal_actions_lists_an_action_exactly_when_apply_accepts_it`) holds a
/// draw, a throw or the call for that seat. At a throw-then-draw table, `next_takeable` is what
/// the seat to play may take after any of its throws, which `apply` accepts; `standings` are
/// the game's; and `hand_values` add up to `hand_total`.
fn views_tell_what_each_seat_may_do(game: &Game) {
    for seat in 0..game.seats() {
        let view = game.view(seat);
        let legal = game.legal_actions(seat);
        let draws = legal.iter().any(|a| matches!(a, Action::Draw { .. }));
        let throws = legal.iter().any(|a| matches!(a, Action::Throw { .. }));
        assert_eq!(
            view.can_draw,
            draws,
            "seat {seat} can_draw in {:?}",
            game.phase()
        );
        assert_eq!(
            view.can_throw,
            throws,
            "seat {seat} can_throw in {:?}",
            game.phase()
        );
        assert_eq!(view.can_call, legal.contains(&Action::Call));
        assert_eq!(view.standings, game.standings());
        // Each card's worth, in the hand's order, adds up to the hand's total.
        assert_eq!(view.hand_values.len(), view.hand.len());
        assert_eq!(view.hand_values.iter().sum::<u32>(), view.hand_total);
    }
    let spectator = game.spectator_view();
    assert!(!spectator.can_draw && !spectator.can_throw && !spectator.can_call);
    assert_eq!(spectator.standings, game.standings());
    let seat = game.turn();
    let next = game.view(seat).next_takeable;
    assert_eq!(spectator.next_takeable, next);
    let throw_first_start =
        game.settings().turn_order == TurnOrder::ThrowThenDraw && game.phase() == Phase::Start;
    if !throw_first_start {
        assert!(
            next.is_empty(),
            "next_takeable outside a throw-first turn's start"
        );
        return;
    }
    for action in game.legal_actions(seat) {
        if let Action::Throw { .. } = action {
            let mut after = game.clone();
            after
                .apply(seat, action)
                .expect("a listed throw is accepted");
            assert_eq!(
                after.takeable(seat),
                next,
                "what may be taken after the throw"
            );
            for &card in &next {
                let take = Action::Draw {
                    from: Source::PileCard(card),
                };
                assert!(
                    after.clone().apply(seat, take).is_ok(),
                    "{card} may be taken"
                );
            }
        }
    }
}

/// One step of a recorded match.
#[derive(Clone, Debug, PartialEq)]
enum Step {
    Apply(usize, Action),
    NextRound,
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(40))]

    #[test]
    fn random_play_keeps_the_invariants_and_every_round_and_match_ends(
        settings in any_settings(),
        seed in any::<[u8; 32]>(),
        choices in any::<u64>(),
    ) {
        let mut game = Game::new(settings, seed).unwrap();
        game.validate_invariants().unwrap();
        let mut rng = Rng(choices);
        play(&mut game, &mut rng, |_, _| {});
        prop_assert!(game.is_over());
        prop_assert!(game.revealed_seeds().is_some());
        prop_assert_eq!(game.results().len() as u32, game.round());
        let standings = game.standings();
        prop_assert_eq!(standings.len(), game.seats());
        prop_assert!(standings.windows(2).all(|w| w[0].place <= w[1].place));
        prop_assert!(standings.iter().any(|s| s.place == 1));
    }

    #[test]
    fn rejected_actions_change_nothing(
        settings in any_settings(),
        seed in any::<[u8; 32]>(),
        choices in any::<u64>(),
    ) {
        let mut game = Game::new(settings, seed).unwrap();
        let mut rng = Rng(choices);
        play(&mut game, &mut rng, |game, rng| {
            for _ in 0..4 {
                let (seat, action) = wild_action(game, rng);
                let mut copy = game.clone();
                // Refused, the caller's list of events is left as it was too.
                let mut listed_events = vec![Event::Called { seat: 0 }];
                if copy.apply_into(seat, action.clone(), &mut listed_events).is_err() {
                    assert_eq!(listed_events, [Event::Called { seat: 0 }]);
                    assert_eq!(copy, *game);
                }
                let mut copy = game.clone();
                match copy.apply(seat, action.clone()) {
                    Ok(_) => assert!(
                        listed(game, seat, &game.legal_actions(seat), &action),
                        "{action:?} by {seat} was accepted but not listed"
                    ),
                    Err(err) => {
                        assert!(!err.to_string().is_empty());
                        assert_eq!(
                            copy, *game,
                            "{action:?} by {seat} was refused ({err}) but changed the game"
                        );
                    }
                }
            }
            let mut copy = game.clone();
            assert_eq!(copy.next_round().map(|_| ()), Err(RuleError::RoundNotOver));
            assert_eq!(copy, *game);
        });
        let before = game.clone();
        prop_assert_eq!(game.next_round().map(|_| ()), Err(RuleError::MatchOver));
        prop_assert_eq!(game.apply(0, Action::Call).map(|_| ()), Err(RuleError::MatchOver));
        prop_assert_eq!(game, before);
    }

}

proptest! {
    // These check a great deal at every step, so they run fewer cases.
    #![proptest_config(ProptestConfig::with_cases(24))]

    #[test]
    fn legal_actions_lists_an_action_exactly_when_apply_accepts_it(
        settings in any_settings(),
        seed in any::<[u8; 32]>(),
        choices in any::<u64>(),
    ) {
        let mut game = Game::new(settings, seed).unwrap();
        let mut rng = Rng(choices);
        let pack = full_deck(true);
        let mut steps = 0;
        play(&mut game, &mut rng, |game, rng| {
            // Every step of the first rounds, then a sample, to keep the test quick.
            steps += 1;
            if steps > 40 && rng.below(16) > 0 {
                return;
            }
            let seat = game.turn();
            let legal = game.legal_actions(seat);
            let mut unique = legal.clone();
            unique.dedup();
            assert_eq!(unique.len(), legal.len(), "each action once");
            agrees(game, seat, &legal, Action::Call);
            agrees(game, seat, &legal, Action::Draw { from: Source::Stock });
            agrees(game, seat, &legal, Action::Draw { from: Source::Pile });
            for &card in &pack {
                agrees(game, seat, &legal, Action::Draw { from: Source::PileCard(card) });
            }
            // Every subset of the hand, in hand order and in a random order.
            let hand = game.hand(seat).to_vec();
            for mask in 0u32..(1 << hand.len()) {
                let mut cards: Vec<Card> = (0..hand.len())
                    .filter(|i| mask & (1 << i) != 0)
                    .map(|i| hand[i])
                    .collect();
                agrees(game, seat, &legal, Action::Throw { cards: cards.clone() });
                for i in (1..cards.len()).rev() {
                    cards.swap(i, rng.below(i + 1));
                }
                agrees(game, seat, &legal, Action::Throw { cards });
            }
            // Throws are listed in the order of the subsets of the hand taken as binary numbers.
            let may_throw = matches!(
                (game.settings().turn_order, game.phase()),
                (TurnOrder::DrawThenThrow, Phase::Throw) | (TurnOrder::ThrowThenDraw, Phase::Start)
            );
            let barred = game.view(seat).barred;
            let mut naive = Vec::new();
            for mask in 1u32..(1 << hand.len()) {
                let group: Vec<Card> = (0..hand.len())
                    .filter(|i| mask & (1 << i) != 0)
                    .map(|i| hand[i])
                    .collect();
                let legal_group = classify(&group, game.settings()).is_some();
                if may_throw && legal_group && !barred.is_some_and(|b| group.contains(&b)) {
                    naive.push(group);
                }
            }
            let throws: Vec<Vec<Card>> = legal
                .iter()
                .filter_map(|a| match a {
                    Action::Throw { cards } => Some(cards.clone()),
                    _ => None,
                })
                .collect();
            assert_eq!(throws, naive);
            // The takeable cards are exactly the pile cards that may be drawn.
            for &card in &pack {
                assert_eq!(
                    game.takeable(seat).contains(&card),
                    legal.contains(&Action::Draw { from: Source::PileCard(card) })
                );
            }
            // Nobody else may do anything.
            for other in (0..game.seats() + 1).filter(|&o| o != seat) {
                assert!(game.legal_actions(other).is_empty());
                let other_legal = Vec::new();
                agrees(game, other, &other_legal, Action::Call);
                agrees(game, other, &other_legal, Action::Draw { from: Source::Stock });
                if other < game.seats() {
                    if let Some(&card) = game.hand(other).first() {
                        agrees(game, other, &other_legal, Action::Throw { cards: vec![card] });
                    }
                }
            }
            assert_eq!(game.can_call(seat), legal.contains(&Action::Call));
            assert_eq!(game.view(seat).can_call, legal.contains(&Action::Call));
        });
    }

    /// At every step of random games, every seat's view says exactly what that seat may do.
    #[test]
    fn every_view_says_what_its_seat_may_do(
        settings in any_settings(),
        seed in any::<[u8; 32]>(),
        choices in any::<u64>(),
    ) {
        let mut game = Game::new(settings, seed).unwrap();
        let mut rng = Rng(choices);
        loop {
            views_tell_what_each_seat_may_do(&game);
            match game.phase() {
                Phase::MatchOver => break,
                Phase::RoundOver => {
                    game.next_round().unwrap();
                }
                _ => {
                    let seat = game.turn();
                    let action = random_action(&game, &mut rng);
                    game.apply(seat, action).unwrap();
                }
            }
            prop_assert!(game.round() <= MAX_ROUNDS, "the match did not end");
        }
    }


    /// A view refreshed in place from an old one (another seat's, a step before) is exactly the
    /// view made anew (no field keeps anything of what it held), and the refresh names exactly
    /// the fields that differ.
    #[test]
    fn a_view_refreshed_in_place_is_the_view_made_anew(
        settings in any_settings(),
        seed in any::<[u8; 32]>(),
        choices in any::<u64>(),
    ) {
        let mut game = Game::new(settings, seed).unwrap();
        let mut rng = Rng(choices);
        let seats = game.seats();
        let whom = |i: usize| (i < seats).then_some(i);
        let mut kept: Vec<SeatView> = (0..=seats).map(|i| game.view_of(whom(i))).collect();
        let mut step = 0;
        play(&mut game, &mut rng, |game, _| {
            step += 1;
            for (i, view) in kept.iter_mut().enumerate() {
                // Each kept view is refreshed for the next seat round (the spectator's too).
                let seat = whom((i + step) % (seats + 1));
                let before = serde_json::to_value(&*view).unwrap();
                let changed = view.refresh(game, seat);
                assert_eq!(*view, game.view_of(seat), "step {step}, seat {seat:?}");
                // Exactly the fields that differ are said to have changed.
                let after = serde_json::to_value(&*view).unwrap();
                for &(name, bit) in dhumbal_engine::view::field::ALL {
                    assert_eq!(
                        changed.has(bit),
                        before[name] != after[name],
                        "step {step}, seat {seat:?}: {name}"
                    );
                }
            }
        });
        // And from the end of one match to the start of another, at another table.
        let other = Game::new(Preset::ALL[(choices % 3) as usize].settings(), seed).unwrap();
        for (i, view) in kept.iter_mut().enumerate() {
            let seat = (i < other.seats()).then_some(i);
            view.refresh(&other, seat);
            assert_eq!(*view, other.view_of(seat), "a new match, seat {seat:?}");
        }
    }

    #[test]
    fn no_view_shows_a_card_held_by_another_seat(
        settings in any_settings(),
        seed in any::<[u8; 32]>(),
        choices in any::<u64>(),
    ) {
        let mut game = Game::new(settings, seed).unwrap();
        let mut rng = Rng(choices);
        let mut steps = 0;
        play(&mut game, &mut rng, |game, rng| {
            steps += 1;
            if steps <= 40 || rng.below(32) == 0 {
                views_hide_other_hands(game);
            }
        });
    }

}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(40))]

    #[test]
    fn the_same_seed_and_actions_replay_to_an_equal_game(
        settings in any_settings(),
        seed in any::<[u8; 32]>(),
        choices in any::<u64>(),
    ) {
        let mut game = Game::new(settings.clone(), seed).unwrap();
        let mut rng = Rng(choices);
        let mut steps = Vec::new();
        let mut events = Vec::new();
        while !game.is_over() {
            let step = if game.phase() == Phase::RoundOver {
                events.push(game.next_round().unwrap());
                Step::NextRound
            } else {
                let seat = game.turn();
                let action = random_action(&game, &mut rng);
                events.push(game.apply(seat, action.clone()).unwrap());
                Step::Apply(seat, action)
            };
            steps.push(step);
        }
        // Replayed with `apply_into`, each action's events added to one list kept throughout.
        let mut replay = Game::new(settings, seed).unwrap();
        let mut kept = Vec::new();
        for (step, want) in steps.into_iter().zip(&events) {
            let got = match step {
                Step::NextRound => replay.next_round().unwrap(),
                Step::Apply(seat, action) => {
                    let start = kept.len();
                    replay.apply_into(seat, action, &mut kept).unwrap();
                    kept[start..].to_vec()
                }
            };
            prop_assert_eq!(&got, want);
        }
        prop_assert_eq!(replay, game);
    }
}
