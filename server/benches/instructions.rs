//! Instructions per operation of the hot paths, counted under Valgrind's callgrind: figures that
//! a busy or noisy machine cannot move, to compare across days (the wall-clock benches beside
//! this one are for ratios within one run).
//!
//! - `engine apply`: one [`Game::apply`] of a random legal action, through whole matches of the
//!   standard table (four seats).
//! - `frames, 4 seats`: one change's whole `state` frames for a table of four, as protocol 4 sent
//!   after every action and protocol 5 sends to a client that holds no view ([`StateFrames::new`]
//!   and a [`StateFrames::for_seat`] per seat).
//! - `patches, 4 seats`: one change's `patch` frames for a table of four, as the room builds them
//!   after an action under protocol 5 ([`PatchFrames::tell`], which brings what was told up to
//!   the game in place, in the memory of the last change's patches, and a
//!   [`PatchFrames::for_seat`] per seat).
//! - `compress, 4 seats`: the same patch frames, each compressed by its seat's own stream, as
//!   the writer of a compressed socket does ([`Deflater::frame`]; the patches are built outside
//!   the count).
//! - `room action`: what the room's task does with one client message, as
//!   `cargo bench -p dhumbal-server --bench room` times it: parse the text, handle it (the rules,
//!   the records), settle, encode the log entry, take the snapshot and the effects. Every
//!   message of whole matches of four people, `ready` and `rematch` votes included.
//!
//! Run with `cargo bench -p dhumbal-server --bench instructions` (needs `valgrind` on the
//! `PATH`). The binary runs each case again under
//! `valgrind --tool=callgrind --collect-atstart=no --toggle-collect=<the case's function>`, so
//! that only the measured function (and what it calls) is counted, never the setup or the choice
//! of the next action, and prints a table. Everything random is seeded, the room's entropy
//! included, so the same binary counts the same instructions each run (the room's action within
//! about 0.1%: see `RUNS`).

mod common;

use std::hint::black_box;
use std::path::Path;
use std::process::Command;

use common::{Clients, random_action, room_action, seated_room, text};
use dhumbal_engine::{Action, Event, Game, Phase, Preset};
use dhumbal_protocol::{ClientMessage, PatchFrames, StateFrames, Told};
use dhumbal_server::conn::Deflater;
use dhumbal_server::room::RoomCore;
use dhumbal_server::room::core::{Effect, Entropy};
use rand::SeedableRng;
use rand::rngs::StdRng;

/// How many times each case is counted: the room's clients are in a `HashMap` with random
/// keys, so the order in which it builds their frames (and so the allocator's path) differs
/// from run to run, by about 0.1% of the room's count; the engine's and the frames' counts are
/// exact. The table shows the median and the spread.
const RUNS: usize = 3;

/// The environment variable that tells a run under Valgrind which case to play.
const CASE_VAR: &str = "DHUMBAL_INSTRUCTIONS_CASE";

/// A case: its name in the table, its name for [`CASE_VAR`], the function Valgrind counts, and
/// how many operations it counts (one call of that function each).
struct Case {
    title: &'static str,
    key: &'static str,
    function: &'static str,
    operations: usize,
    run: fn(usize),
}

/// Every case, in the table's order.
const CASES: [Case; 5] = [
    Case {
        title: "engine apply",
        key: "engine",
        function: "counted_engine_apply",
        operations: 20_000,
        run: run_engine,
    },
    Case {
        title: "frames, 4 seats",
        key: "frames",
        function: "counted_frames",
        operations: 5_000,
        run: run_frames,
    },
    Case {
        title: "patches, 4 seats",
        key: "patches",
        function: "counted_patches",
        operations: 5_000,
        run: run_patches,
    },
    Case {
        title: "compress, 4 seats",
        key: "compress",
        function: "counted_compress",
        operations: 5_000,
        run: run_compress,
    },
    Case {
        title: "room action",
        key: "room",
        function: "counted_room_action",
        operations: 10_000,
        run: run_room,
    },
];

// ---------------------------------------------------------------------------------------------
// The counted functions: never inlined, so that callgrind sees each call.

/// One engine action.
#[inline(never)]
fn counted_engine_apply(game: &mut Game, seat: usize, action: Action) -> Vec<Event> {
    game.apply(seat, action).expect("a legal action")
}

/// One change's frames for every seat of the table.
#[inline(never)]
fn counted_frames(game: &Game, events: &[Event]) -> Vec<String> {
    let frames = StateFrames::new(game, events, None, None, 1);
    (0..game.seats())
        .map(|seat| frames.for_seat(game, Some(seat)))
        .collect()
}

/// One change's patches for every seat of the table, from what they were `told` before (brought
/// up to the game), made in the memory of the last change's `frames`; returns them.
#[inline(never)]
fn counted_patches(
    told: &mut Told,
    frames: &mut PatchFrames,
    game: &Game,
    events: &[Event],
) -> Vec<String> {
    frames.tell(told, game, events, None, None);
    (0..game.seats())
        .map(|seat| frames.for_seat(Some(seat)))
        .collect()
}

/// One change's patch frames, each through its seat's compressed stream.
#[inline(never)]
fn counted_compress(streams: &mut [Deflater], texts: &[String]) -> Vec<Vec<u8>> {
    streams
        .iter_mut()
        .zip(texts)
        .map(|(stream, text)| stream.frame([text.as_bytes()]))
        .collect()
}

/// What the room's task does with one client text. Returns the effects, dropped outside the
/// count as the connections' writers drop what they sent.
#[inline(never)]
fn counted_room_action(
    core: &mut RoomCore,
    entropy: &mut Counter,
    conn: u64,
    text: &str,
) -> Vec<Effect> {
    room_action(core, entropy, conn, text)
}

// ---------------------------------------------------------------------------------------------
// The cases.

/// Plays `n` engine actions through as many standard matches as it takes, calling `each` with
/// the game and the action's events after each.
fn play(n: usize, mut each: impl FnMut(&Game, &[Event])) {
    let mut rng = StdRng::seed_from_u64(2026);
    let mut matches = 0u8;
    let mut game = Game::new(Preset::Standard.settings(), [matches; 32]).expect("valid preset");
    let mut done = 0;
    while done < n {
        match game.phase() {
            Phase::MatchOver => {
                matches = matches.wrapping_add(1);
                game = Game::new(Preset::Standard.settings(), [matches; 32]).expect("valid");
            }
            Phase::RoundOver => {
                game.next_round().expect("the round is over");
            }
            _ => {
                let (seat, action) = random_action(&game, &mut rng);
                let events = counted_engine_apply(&mut game, seat, action);
                each(&game, &events);
                done += 1;
            }
        }
    }
}

/// `n` engine actions.
fn run_engine(n: usize) {
    play(n, |_, events| {
        black_box(events);
    });
}

/// `n` changes' frames (the engine's work for them is counted only in its own case).
fn run_frames(n: usize) {
    play(n, |game, events| {
        black_box(counted_frames(game, events));
    });
}

/// `n` changes' patches, each from what the change before told.
fn run_patches(n: usize) {
    let mut told: Option<Told> = None;
    // The memory of the last change's patches, in which the next change's are made, as the
    // room does.
    let mut frames = PatchFrames::default();
    play(n, |game, events| {
        let told = told.get_or_insert_with(|| Told::of(game, 0));
        black_box(counted_patches(told, &mut frames, game, events));
    });
}

/// `n` changes' patches, each compressed by its seat's stream (the patches built outside the
/// count).
fn run_compress(n: usize) {
    let mut told: Option<Told> = None;
    let mut frames = PatchFrames::default();
    let mut streams: Vec<Deflater> = Vec::new();
    play(n, |game, events| {
        let told = told.get_or_insert_with(|| Told::of(game, 0));
        let texts = counted_patches(told, &mut frames, game, events);
        streams.resize_with(texts.len(), Deflater::new);
        black_box(counted_compress(&mut streams, &texts));
    });
}

/// Entropy from a counter: the same seeds and tokens every run, so that every match after the
/// first (whose seed the room draws) is the same each run too.
struct Counter(u8);

impl Entropy for Counter {
    fn seed(&mut self) -> Result<[u8; 32], String> {
        self.0 = self.0.wrapping_add(1);
        Ok([self.0; 32])
    }

    fn token(&mut self) -> String {
        self.0 = self.0.wrapping_add(1);
        format!("token-{:02x}", self.0)
    }

    /// From the counter, without moving it: the seeds and tokens stay as they were.
    fn bot_seed(&mut self) -> u64 {
        self.0.into()
    }
}

/// `n` client messages to a room of four people (connection `n` in seat `n`, the first the
/// host) through whole matches.
fn run_room(n: usize) {
    let mut entropy = Counter(100);
    let mut core = seated_room(&mut entropy);
    drop(counted_room_action(
        &mut core,
        &mut entropy,
        0,
        &text(&ClientMessage::Start),
    ));
    let mut clients = Clients::new(2026);
    // The `start` above was the first counted message.
    for _ in 1..n {
        let (conn, message) = clients.next(&core);
        drop(counted_room_action(&mut core, &mut entropy, conn, &message));
    }
}

// ---------------------------------------------------------------------------------------------
// The driver.

/// The instructions callgrind counted, from the `totals:` (or `summary:`) line of its output.
fn counted(out: &Path) -> Result<u64, String> {
    let text = std::fs::read_to_string(out).map_err(|e| format!("{}: {e}", out.display()))?;
    text.lines()
        .find_map(|line| {
            line.strip_prefix("totals:")
                .or_else(|| line.strip_prefix("summary:"))
        })
        .and_then(|rest| rest.split_whitespace().next())
        .and_then(|n| n.parse().ok())
        .ok_or_else(|| format!("{}: no totals line", out.display()))
}

/// Runs `case` under callgrind and returns the instructions its function executed.
fn measure(case: &Case, dir: &Path) -> Result<u64, String> {
    let exe = std::env::current_exe().map_err(|e| e.to_string())?;
    let out = dir.join(format!("callgrind.{}.out", case.key));
    let status = Command::new("valgrind")
        .arg("--tool=callgrind")
        .arg("--collect-atstart=no")
        .arg(format!("--toggle-collect=*{}*", case.function))
        .arg(format!("--callgrind-out-file={}", out.display()))
        .arg("--quiet")
        .arg(&exe)
        .env(CASE_VAR, case.key)
        .status()
        .map_err(|e| format!("cannot run valgrind (is it installed?): {e}"))?;
    if !status.success() {
        return Err(format!("valgrind on case {}: {status}", case.key));
    }
    counted(&out)
}

fn main() {
    // Under Valgrind: play the one case asked for and stop.
    if let Ok(key) = std::env::var(CASE_VAR) {
        let case = CASES
            .iter()
            .find(|c| c.key == key)
            .unwrap_or_else(|| panic!("no case {key:?}"));
        (case.run)(case.operations);
        return;
    }
    // `cargo bench` passes `--bench`; a filter picks cases by key or title.
    let filter: Vec<String> = std::env::args()
        .skip(1)
        .filter(|a| !a.starts_with("--"))
        .collect();
    let dir = std::env::temp_dir().join(format!("dhumbal-instructions-{}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("a directory for callgrind's output");
    println!(
        "| case | operations | instructions per operation (median of {RUNS} runs) | runs' spread |"
    );
    println!("|---|---|---|---|");
    let mut failed = false;
    for case in &CASES {
        if !filter.is_empty()
            && !filter
                .iter()
                .any(|f| case.key.contains(f.as_str()) || case.title.contains(f.as_str()))
        {
            continue;
        }
        match (0..RUNS)
            .map(|_| measure(case, &dir))
            .collect::<Result<Vec<u64>, String>>()
        {
            Ok(mut totals) => {
                totals.sort_unstable();
                let median = totals[totals.len() / 2];
                let spread = (totals[totals.len() - 1] - totals[0]) as f64 / median as f64;
                println!(
                    "| {} | {} | {:.0} | {:.2}% |",
                    case.title,
                    case.operations,
                    median as f64 / case.operations as f64,
                    spread * 100.0
                );
            }
            Err(e) => {
                eprintln!("{e}");
                failed = true;
            }
        }
    }
    let _ = std::fs::remove_dir_all(&dir);
    if failed {
        std::process::exit(1);
    }
}
