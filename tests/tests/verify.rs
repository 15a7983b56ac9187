//! `dhumbal-server verify FILE`, run as the real binary: a played match's hand history checks
//! out (exit 0), a tampered one is a mismatch naming its round (exit 1), and a file that is not a
//! hand history is refused (exit 2).

use std::path::Path;
use std::process::{Command, Output};

use dhumbal_engine::{FairDeal, Game, HandHistory, Hex32, Phase, Preset};

/// The server's own command line, built from the same `main`.
const SERVER: &str = env!("CARGO_BIN_EXE_server-under-test");

/// A whole match at the household table, each seat taking its last legal action.
fn played() -> HandHistory {
    let deal = FairDeal {
        seed: [3; 32],
        room: "VERIFYME22".into(),
        match_number: 2,
    };
    let seeds = vec![Some(Hex32([9; 32])), None, Some(Hex32([4; 32])), None];
    let mut game = Game::fair(Preset::Household.settings(), deal, seeds).unwrap();
    while !game.is_over() {
        if game.phase() == Phase::RoundOver {
            game.set_client_seeds(vec![None, Some(Hex32([5; 32]))]);
            game.next_round().unwrap();
        } else {
            let seat = game.turn();
            let action = game.legal_actions(seat).pop().unwrap();
            game.apply(seat, action).unwrap();
        }
    }
    let mut history = game.hand_history().unwrap();
    history.players = ["Asha", "Bot 2", "Chandra", "Bot 4"]
        .map(String::from)
        .to_vec();
    history
}

fn run_verify(dir: &Path, name: &str, contents: &str) -> Output {
    let file = dir.join(name);
    std::fs::write(&file, contents).unwrap();
    Command::new(SERVER)
        .arg("verify")
        .arg(&file)
        .output()
        .expect("the server binary runs")
}

fn stdout(output: &Output) -> String {
    String::from_utf8_lossy(&output.stdout).into_owned()
}

#[test]
fn a_played_match_checks_out_and_a_tampered_one_does_not() {
    let dir = tempfile::tempdir().unwrap();
    let history = played();
    let rounds = history.rounds.len();
    assert!(rounds >= 2, "the household table plays several rounds");

    let good = run_verify(
        dir.path(),
        "good.json",
        &serde_json::to_string_pretty(&history).unwrap(),
    );
    let out = stdout(&good);
    assert_eq!(good.status.code(), Some(0), "{out}");
    assert!(out.contains("room VERIFYME22, match 2"), "{out}");
    assert!(out.contains("players Asha, Bot 2, Chandra, Bot 4"), "{out}");
    assert_eq!(out.matches(": checks out").count(), rounds + 2, "{out}");
    assert!(out.contains("verdict: every deal checks out"), "{out}");
    // What a file alone cannot prove is said, not implied.
    assert!(
        out.contains(
            "not checked here: whether each seat's client seed was the latest its page sent after \
             it saw the commitment and the server acknowledged"
        ),
        "{out}"
    );

    // One card of round 2's deal moved from seat 0 to seat 1.
    let mut moved = history.clone();
    let card = moved.rounds[1].hands[0].pop().unwrap();
    moved.rounds[1].hands[1].push(card);
    let bad = run_verify(
        dir.path(),
        "moved.json",
        &serde_json::to_string(&moved).unwrap(),
    );
    let out = stdout(&bad);
    assert_eq!(bad.status.code(), Some(1), "{out}");
    assert!(out.contains("round 1: checks out"), "{out}");
    assert!(
        out.contains("round 2: MISMATCH") && out.contains("a dealt hand differs"),
        "{out}"
    );
    assert!(out.contains("does NOT check out"), "{out}");

    // Another seed, with the commitment left as it was.
    let mut reseeded = history;
    reseeded.seed = Some(Hex32([8; 32]));
    let bad = run_verify(
        dir.path(),
        "seed.json",
        &serde_json::to_string(&reseeded).unwrap(),
    );
    let out = stdout(&bad);
    assert_eq!(bad.status.code(), Some(1), "{out}");
    assert!(
        out.contains("seed and commitment: MISMATCH: the seed does not match the commitment"),
        "{out}"
    );
}

#[test]
fn a_file_that_is_not_a_hand_history_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    let out = run_verify(dir.path(), "notes.json", "{\"format\": 3}");
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("not a hand history"), "{err}");
    let missing = Command::new(SERVER)
        .args(["verify", "/nonexistent/history.json"])
        .output()
        .unwrap();
    assert_eq!(missing.status.code(), Some(2));
}
