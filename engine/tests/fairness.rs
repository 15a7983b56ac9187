//! The fair-deal scheme and hand histories: known answers (the same as `docs/fairness.md`), client
//! seeds that change the deck, a verifier that catches every kind of tampering, and a property:
//! the record of any played match verifies.

use crate::common;

use common::{Rng, random_action};
use dhumbal_engine::arbitrary::any_settings;
use dhumbal_engine::fair::{FairDeal, commitment, deck_seed, round_secret};
use dhumbal_engine::{
    Action, Event, Game, HandHistory, Hex32, Phase, Preset, Settings, Source, full_deck,
    shuffle::shuffle, verify,
};
use proptest::prelude::*;

/// The vectors' match seed: the bytes 0, 1, …, 31.
fn vector_seed() -> [u8; 32] {
    std::array::from_fn(|i| i as u8)
}

fn vector_deal() -> FairDeal {
    FairDeal {
        seed: vector_seed(),
        room: "ABCDE".into(),
        match_number: 1,
    }
}

/// Seat 0 sent 32 bytes of 0xaa, seat 1 none, seat 2 the bytes 32, 33, …, 63, seat 3 none.
fn vector_client_seeds() -> Vec<Option<Hex32>> {
    vec![
        Some(Hex32([0xaa; 32])),
        None,
        Some(Hex32(std::array::from_fn(|i| 32 + i as u8))),
        None,
    ]
}

fn hex(bytes: &[u8; 32]) -> String {
    Hex32(*bytes).to_string()
}

fn names(cards: &[dhumbal_engine::Card]) -> String {
    cards
        .iter()
        .map(ToString::to_string)
        .collect::<Vec<_>>()
        .join(" ")
}

#[test]
fn known_answers_match_the_documented_vectors() {
    let seed = vector_seed();
    assert_eq!(commitment(&seed).to_string(), VECTOR_COMMITMENT);
    assert_eq!(hex(&round_secret(&seed, 1)), VECTOR_ROUND_SECRET);
    let deck_seed = deck_seed(&vector_deal(), 1, &vector_client_seeds());
    assert_eq!(hex(&deck_seed), VECTOR_DECK_SEED);
    let mut deck = full_deck(false);
    shuffle(&mut deck, &deck_seed, 0);
    assert_eq!(names(&deck), VECTOR_DECK);
    assert_eq!(
        hex(&deck_seed_without_client_seeds()),
        VECTOR_DECK_SEED_NO_CLIENT_SEEDS
    );
    let mut reshuffled = full_deck(false)[..10].to_vec();
    shuffle(&mut reshuffled, &deck_seed, 1);
    assert_eq!(names(&reshuffled), VECTOR_RESHUFFLE);
}

fn deck_seed_without_client_seeds() -> [u8; 32] {
    deck_seed(&vector_deal(), 1, &[None, None, None, None])
}

/// The vectors, as `docs/fairness.md` states them.
const VECTOR_COMMITMENT: &str = "9d83879b0754c1f08b649e645d31f5e5f71555e6cd455856f855d61852e9ee6e";
const VECTOR_ROUND_SECRET: &str =
    "3b8a05af592926633f8239e8ab2ad0b330cf127f655efce367ef240d00190c9d";
const VECTOR_DECK_SEED: &str = "97c9ddadfd8d0c4ee11e3c46047f5238c223117a7779f410ff5ad6a7e4a2c772";
const VECTOR_DECK_SEED_NO_CLIENT_SEEDS: &str =
    "57c29e4300de057bca8c51e9ec2643860e34a62d8cfddbeddb643ba90deaa425";
const VECTOR_DECK: &str = "AC 10S 7D 5C AD 6H 2S 3S 6S 4C 8S 3D KC 10H QC 7S 8D 2C 9H 10C JH 5S 5D 8H 9C 2D 4H KS 3H 10D QH JS 4S 9S JC 6D JD 2H 9D KH 8C 6C AS KD AH 3C 4D QS 7C QD 7H 5H";
const VECTOR_RESHUFFLE: &str = "9S 7S 5S 6S 10S 3S 2S AS 4S 8S";

#[test]
fn the_game_deals_the_documented_deck_and_publishes_the_commitment() {
    let game = Game::fair(
        Preset::Standard.settings(),
        vector_deal(),
        vector_client_seeds(),
    )
    .unwrap();
    assert_eq!(game.commitment().unwrap().to_string(), VECTOR_COMMITMENT);
    assert_eq!(game.revealed_match_seed(), None, "the seed stays secret");
    assert_eq!(game.hand_history(), None, "so does the history");
    let Event::Dealt { client_seeds, .. } = &game.log()[0] else {
        panic!("the log starts with the deal");
    };
    assert_eq!(client_seeds, &vector_client_seeds());
    // Round 1 is dealt from the last seat's left, one card at a time, as docs/fairness.md says.
    let hands: Vec<String> = (0..4).map(|s| names(game.hand(s))).collect();
    assert_eq!(
        hands,
        [
            "AC AD 6S KC 8D",
            "10S 6H 4C 10H 2C",
            "7D 2S 8S QC 9H",
            "5C 3S 3D 7S 10C"
        ]
    );
    let Event::Dealt { pile_top, .. } = &game.log()[0] else {
        unreachable!()
    };
    assert_eq!(pile_top.to_string(), "JH");
}

#[test]
fn the_same_server_seed_with_other_client_seeds_deals_other_decks() {
    let deal = vector_deal();
    let hands = |seeds: Vec<Option<Hex32>>| {
        let game = Game::fair(Preset::Standard.settings(), deal.clone(), seeds).unwrap();
        (0..4).map(|s| game.hand(s).to_vec()).collect::<Vec<_>>()
    };
    let base = hands(vector_client_seeds());
    let mut one_changed = vector_client_seeds();
    one_changed[1] = Some(Hex32([1; 32]));
    assert_ne!(hands(one_changed), base);
    assert_ne!(hands(Vec::new()), base);
    assert_eq!(
        hands(vector_client_seeds()),
        base,
        "and the same ones the same"
    );
}

/// A whole match played with random legal actions, the client seeds changing between rounds.
fn played(settings: Settings, deal: FairDeal, choices: u64) -> (Game, Vec<Event>) {
    let mut rng = Rng(choices);
    let seats = usize::from(settings.players);
    let mut game = Game::fair(settings, deal, client_seeds(&mut rng, seats)).unwrap();
    let mut events = game.log().to_vec();
    while !game.is_over() {
        assert!(game.round() <= 60, "the match did not end");
        if game.phase() == Phase::RoundOver {
            game.set_client_seeds(client_seeds(&mut rng, seats));
            events.extend(game.next_round().unwrap());
        } else {
            let action = random_action(&game, &mut rng);
            events.extend(game.apply(game.turn(), action).unwrap());
        }
    }
    (game, events)
}

/// Some seats with a client seed, some without.
fn client_seeds(rng: &mut Rng, seats: usize) -> Vec<Option<Hex32>> {
    (0..seats)
        .map(|_| (rng.below(3) > 0).then(|| Hex32(rng.seed())))
        .collect()
}

fn record() -> HandHistory {
    let (game, _) = played(Preset::Standard.settings(), vector_deal(), 7);
    game.hand_history().expect("the match is over")
}

fn failures(record: &HandHistory) -> Vec<String> {
    let verification = verify(record);
    let mut out: Vec<String> = verification.seed.err().into_iter().collect();
    out.extend(verification.rounds.into_iter().filter_map(Result::err));
    out.extend(verification.end.err());
    out
}

#[test]
fn an_untouched_record_verifies() {
    let record = record();
    assert_eq!(record.rounds.len(), 3);
    assert_eq!(record.seed, Some(Hex32(vector_seed())));
    let verification = verify(&record);
    assert!(verification.is_ok(), "{verification:?}");
    assert_eq!(verification.rounds.len(), 3);
}

#[test]
fn a_record_with_one_card_moved_is_refused() {
    let mut record = record();
    let round = &mut record.rounds[1];
    let card = round.hands[0].pop().unwrap();
    round.hands[1].push(card);
    let why = failures(&record);
    assert!(why[0].contains("round 2's deal"), "{why:?}");
    assert!(why[0].contains("a dealt hand differs"), "{why:?}");
    assert!(verify(&record).rounds[0].is_ok());
    // A card drawn from the stock changed is caught too.
    let mut record = self::record();
    let step = record.rounds[0]
        .steps
        .iter_mut()
        .find(|s| s.card.is_some())
        .unwrap();
    step.card = Some(if step.card.unwrap().to_string() == "AS" {
        "2S".parse().unwrap()
    } else {
        "AS".parse().unwrap()
    });
    assert!(failures(&record)[0].contains("does not follow"));
}

#[test]
fn a_record_with_a_wrong_seed_is_refused() {
    let mut record = record();
    record.seed = Some(Hex32([9; 32]));
    let verification = verify(&record);
    assert!(!verification.is_ok());
    assert!(
        verification
            .seed
            .unwrap_err()
            .contains("does not match the commitment")
    );
}

#[test]
fn a_record_with_a_missing_client_seed_is_refused() {
    let mut record = record();
    let round = record
        .rounds
        .iter_mut()
        .find(|r| r.client_seeds.iter().any(Option::is_some))
        .expect("some round has a client seed");
    let seat = round.client_seeds.iter().position(Option::is_some).unwrap();
    round.client_seeds[seat] = None;
    let why = failures(&record);
    assert!(!why.is_empty());
    assert!(why[0].contains("its deck seed differs"), "{why:?}");
}

#[test]
fn a_record_with_a_changed_commitment_is_refused() {
    let mut record = record();
    record.commitment = Some(commitment(&[9; 32]));
    assert!(
        verify(&record)
            .seed
            .unwrap_err()
            .contains("does not match the commitment")
    );
}

#[test]
fn a_record_survives_json() {
    let record = record();
    let text = serde_json::to_string(&record).unwrap();
    let back: HandHistory = serde_json::from_str(&text).unwrap();
    assert_eq!(back, record);
    assert!(verify(&back).is_ok());
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(48))]

    /// For random tables, seeds and client seeds, the record of a played match verifies, and
    /// its events are exactly the events the game gave while it was played.
    #[test]
    fn every_played_match_verifies_and_its_events_replay(
        settings in any_settings(),
        seed in any::<[u8; 32]>(),
        match_number in 1u32..100,
        choices in any::<u64>(),
    ) {
        let deal = FairDeal { seed, room: "QWXYZ".into(), match_number };
        let (game, events) = played(settings, deal, choices);
        let record = game.hand_history().expect("over");
        let verification = verify(&record);
        prop_assert!(verification.is_ok(), "{:?}", verification);
        let recorded: Vec<Event> = record
            .rounds
            .iter()
            .flat_map(|round| {
                let dealt = Event::Dealt {
                    round: round.round,
                    dealer: round.dealer,
                    pile_top: round.pile_top,
                    client_seeds: round.client_seeds.clone(),
                };
                std::iter::once(dealt).chain(round.steps.iter().flat_map(|s| s.events.clone()))
            })
            .collect();
        prop_assert_eq!(recorded, events);
        let results: Vec<_> = record.rounds.iter().map(|r| r.result.clone().unwrap()).collect();
        prop_assert_eq!(results.as_slice(), game.results());
    }
}

/// The forgeries the outside review fed the page's verifier (issue 35): the engine's verifier
/// refuses each, since it replays the match rather than checking rounds one by one. One round
/// copied many times (same number again), a round dealt by the wrong seat, a round more than the
/// match has, and a reshuffle that shuffles less of the pile than the rule says.
#[test]
fn repeated_rounds_a_wrong_dealer_an_extra_round_and_a_short_reshuffle_are_refused() {
    let record = record();
    let mut repeated = record.clone();
    repeated.rounds = vec![record.rounds[0].clone(); 30];
    let why = failures(&repeated);
    assert!(
        why.iter()
            .any(|w| w.contains("round 1's deal") && w.contains("its number or dealer")),
        "{why:?}"
    );

    let mut wrong_dealer = record.clone();
    wrong_dealer.rounds[1].dealer = record.rounds[0].dealer;
    let why = failures(&wrong_dealer);
    assert!(
        why.iter()
            .any(|w| w.contains("round 2's deal") && w.contains("its number or dealer")),
        "{why:?}"
    );

    let mut extra = record.clone();
    let mut fourth = record.rounds[2].clone();
    fourth.round = 4;
    extra.rounds.push(fourth);
    assert!(verify(&extra).rounds[3].is_err(), "{:?}", failures(&extra));

    // A match nobody calls in runs its stock out: its first reshuffle, one card short.
    let mut game = Game::fair(Preset::Standard.settings(), vector_deal(), vec![None; 4]).unwrap();
    while !game.is_over() {
        if game.phase() == Phase::RoundOver {
            game.next_round().unwrap();
            continue;
        }
        let seat = game.turn();
        let legal = game.legal_actions(seat);
        let action = legal
            .iter()
            .find(|a| {
                matches!(
                    a,
                    Action::Draw {
                        from: Source::Stock
                    }
                )
            })
            .or_else(|| legal.iter().find(|a| matches!(a, Action::Throw { .. })))
            .unwrap_or(&legal[0])
            .clone();
        game.apply(seat, action).unwrap();
    }
    let mut short = game.hand_history().unwrap();
    assert!(verify(&short).is_ok());
    let step = short
        .rounds
        .iter_mut()
        .flat_map(|r| r.steps.iter_mut())
        .find(|s| s.reshuffled.is_some())
        .expect("a reshuffle");
    step.reshuffled.as_mut().unwrap().remove(0);
    let why = failures(&short);
    assert!(why.iter().any(|w| w.contains("does not follow")), "{why:?}");
}
