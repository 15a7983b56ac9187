//! Plays one match at the standard table (each seat takes its first legal action) from the
//! documented vector seed and prints its hand history as JSON: a sample for verifiers and the
//! replay page.
//!
//! `cargo run -p dhumbal-engine --example sample_history > history.json`

use dhumbal_engine::{FairDeal, Game, Hex32, Phase, Preset};

fn main() {
    let deal = FairDeal {
        seed: std::array::from_fn(|i| i as u8),
        room: "ABCDE".into(),
        match_number: 1,
    };
    let seeds = vec![Some(Hex32([0xaa; 32])), None, None, None];
    let mut game = Game::fair(Preset::Standard.settings(), deal, seeds).expect("a valid table");
    while !game.is_over() {
        if game.phase() == Phase::RoundOver {
            game.next_round().expect("the next round deals");
        } else {
            let seat = game.turn();
            let action = game.legal_actions(seat).remove(0);
            game.apply(seat, action).expect("a legal action");
        }
    }
    let mut history = game.hand_history().expect("the match is over");
    history.players = ["Asha", "Bikash", "Chandra", "Dawa"]
        .map(String::from)
        .to_vec();
    println!(
        "{}",
        serde_json::to_string_pretty(&history).expect("a history serialises")
    );
}
