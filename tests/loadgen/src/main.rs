//! `loadgen`: a load benchmark of the Dhumbal server over real loopback sockets.
//!
//! It starts the server binary as a child process (`dhumbal-server`, by default the one built
//! beside `loadgen`), so that it can read the server's resident memory from `/proc`, and spreads
//! its client sockets over several loopback source addresses (127.0.0.2, 127.0.0.3, …) so that
//! ephemeral ports do not run out. Every run is bounded: in clients by its flags, in time by
//! `--seconds` and by a deadline on each connection. It prints figures and asserts nothing.
//!
//! - `loadgen play --rooms 500 --humans 4 --seconds 20` opens the rooms, seats `humans` people
//!   in each, starts the matches and plays random legal actions as fast as the server answers
//!   (bots have no delay; every seat here is a person), `ready` between rounds and `rematch`
//!   after each match. It prints the clients connected, actions per second, the latency from
//!   sending an action to receiving the state that results (p50, p99, max), errors, and the
//!   server's resident memory before and after. With `--echo` it then runs three bare
//!   baselines built from the same crates and prints the game's cost as ratios to each: the same
//!   workload against the room relay (`/ws-room-relay/{group}`: the same rooms of sockets taking
//!   turns, each message as large as what each client received per action in the game, handed
//!   to a task per room, as the game's are, which sends it to the whole room) and against the
//!   relay (`/ws-relay/{group}`: the same, each message sent to the whole room by the reader that
//!   read it), and the simplest one against the echo (`/ws-echo`: one action-sized message back
//!   to its sender); and the room relay's ratios to the relay, what a room's task costs alone;
//!   and the game's own work, what its action costs beyond the room relay's (in CPU, and in
//!   instructions and simulated misses with `--callgrind --cache-sim`).
//!   With `--callgrind` (and `--cache-sim`) it runs the server under Valgrind and prints each
//!   workload's instructions (and simulated cache misses) per action too: counts a busy machine
//!   cannot move.
//! - `loadgen play --store both --pairs 5` plays the game on the memory store, then on the
//!   SQLite log, five times over, each on a fresh server, printing each run and the log's cost
//!   as ratios (throughput, p99, the server's CPU per action, and the CPU of the store's writer
//!   and checkpointer threads, read from `/proc/PID/task`), then a Markdown table of each
//!   figure's median and range over the pairs, the ratios computed within each pair.
//! - `loadgen idle --connections 10000` opens that many WebSockets and holds them without a
//!   word, then prints how many are held and the server's memory per connection.
//! - `loadgen report --runs 3 --rooms 500 --humans 4 --seconds 15` measures every figure of the
//!   performance table of `docs/performance.md`: in each of `--runs` runs, `play --echo` saturated (no think
//!   time), then `play --echo` paced (`--think-ms`, 20 by default), then `idle` at
//!   `--idle-connections` (10000 by default), each on a fresh server and printing what it
//!   prints alone. At the end it prints a Markdown table to paste into `docs/performance.md`: for the game,
//!   the room relay, the relay and the echo, saturated and paced, the actions per second, the
//!   p50 and p99 latency, the server's CPU per action and its resident memory after the run, and
//!   the ratios of the game to each baseline and of the room relay to the relay, of the p99 and
//!   of the CPU per action (each computed within a run); and the memory per idle connection. Each cell is the median of the runs and
//!   their range, `median (min–max)`. Then the command line that produced it, and any errors or
//!   missing clients, run by run.
//!
//! Its parts: `server.rs` (the server process and what `/proc` and `/metrics` say of it),
//! `sockets.rs` (client sockets and their messages), `play.rs`, `idle.rs` and `report.rs` (one
//! mode each); this file holds the command line.

mod idle;
mod play;
mod report;
mod server;
mod sockets;

use std::net::SocketAddr;
use std::path::PathBuf;
use std::time::Duration;

use clap::{Args, Parser, Subcommand};
use dhumbal_engine::Difficulty;

use crate::idle::idle;
use crate::play::play;
use crate::report::report;

/// The command line.
#[derive(Debug, Parser)]
#[command(
    name = "loadgen",
    about = "Load benchmark of the Dhumbal server over loopback"
)]
struct Cli {
    /// What to measure.
    #[command(subcommand)]
    mode: Mode,
}

/// What to measure.
#[derive(Debug, Subcommand)]
enum Mode {
    /// Rooms of people playing random legal actions as fast as the server answers.
    Play(PlayArgs),
    /// Idle WebSocket connections held open: how many, and memory per connection.
    Idle(IdleArgs),
    /// Every figure of the performance table in `docs/performance.md`, as the median and range of several runs.
    Report(ReportArgs),
}

/// What every mode needs.
#[derive(Clone, Debug, Args)]
struct Common {
    /// The server binary to start (default: `dhumbal-server` beside this program).
    #[arg(long)]
    server: Option<PathBuf>,
    /// How many loopback source addresses to spread clients over (127.0.0.2 and up).
    #[arg(long, default_value_t = 8)]
    sources: u8,
    /// How many connections may be opening at once.
    #[arg(long, default_value_t = 128)]
    connecting: usize,
    /// Play against a server already running at this address (HAProxy in front of a cluster,
    /// say) instead of starting one: its rooms must allow this load (rate limits, room
    /// creations per address), and its CPU and memory are not measured. Not with `--echo`.
    #[arg(long)]
    connect: Option<SocketAddr>,
    /// The server's `--bot-delay-ms`: how long each bot waits before it acts (0: at once, which
    /// makes rooms with bots play as fast as the server lets them).
    #[arg(long, default_value_t = 0)]
    bot_delay_ms: u64,
    /// Run the server on CPU 0 alone and this program on the others (through `taskset`, from
    /// util-linux), so that the load generator never takes the server's CPU: the server then
    /// saturates its one core, and its figures are its own. Without it, both share every core,
    /// and whatever makes the load generator work harder counts against the server too.
    #[arg(long)]
    pin: bool,
    /// Run the server under Valgrind's callgrind (`valgrind` on the `PATH`), counting the
    /// instructions of the threads it spawns (its runtime's workers: every socket, room and
    /// connection task; the SQLite store's threads; counted from zero once the rooms are
    /// seated, so not the start-up's work), and print the instructions per action of
    /// each workload: a count a busy machine cannot move, where the CPU times move with the
    /// machine. Everything runs about 50 times slower, so use few rooms (`--rooms 40`).
    #[arg(long)]
    callgrind: bool,
    /// With `--callgrind`, copy each workload's count into this folder (made if missing) before
    /// the server's counts are removed, and print its path: for
    /// `callgrind_annotate --inclusive=yes <path>`, where the instructions went.
    #[arg(long, value_name = "DIR", requires = "callgrind")]
    callgrind_keep: Option<std::path::PathBuf>,
    /// With `--callgrind`, simulate the caches too (callgrind's `--cache-sim`, with the same
    /// caches on every machine: 32 KiB first-level instruction and data caches, 8-way, and a
    /// 2 MiB last level, 16-way, this machine's per-core second level) and print each
    /// workload's misses per action in each: where an action's time goes that instructions do
    /// not show (a miss in the last level costs tens of instructions' time). About twice as slow
    /// again.
    #[arg(long, requires = "callgrind")]
    cache_sim: bool,
}

/// The play mode's flags.
#[derive(Debug, Args)]
struct PlayArgs {
    #[command(flatten)]
    common: Common,
    /// Rooms to open.
    #[arg(long, default_value_t = 500)]
    rooms: usize,
    /// People seated in each room (2 to 6; every seat is a person).
    #[arg(long, default_value_t = 4)]
    humans: u8,
    /// Seconds of play once every room has started.
    #[arg(long, default_value_t = 20)]
    seconds: u64,
    /// Then run the same workload against the server's bare room relay, relay and echo, and
    /// print ratios.
    #[arg(long)]
    echo: bool,
    /// Milliseconds each player thinks before each action (0: act as soon as the state
    /// arrives, which keeps one action in flight per room and saturates the machine).
    #[arg(long, default_value_t = 0)]
    think_ms: u64,
    /// Where the server keeps its rooms: `memory`, `sqlite` (a fresh log in a temporary
    /// folder), or `both`: the game on each, one after the other, with the cost of the log as
    /// ratios (and the append latency from the server's `/metrics`).
    #[arg(long, value_enum, default_value_t = StoreChoice::Memory)]
    store: StoreChoice,
    /// With `--store both`: play this many pairs, memory then SQLite each time, each on a fresh
    /// server, and end with the median and range of each figure over the pairs (the ratio
    /// computed within each pair). On a shared machine one pair is noise; five say something.
    #[arg(long, default_value_t = 1)]
    pairs: usize,
    /// Beside the rooms of people, rooms of one person and three bots (of `--bots`): their bots
    /// play while the people's rooms are measured, so the people's figures show what the bots
    /// cost other rooms (compare `--bots expert` with `--bots hard`, which never searches). The
    /// person in each bot room is measured apart: how fast a room answers its person while its
    /// bots think.
    #[arg(long, default_value_t = 0)]
    bot_rooms: usize,
    /// The bots of the `--bot-rooms`.
    #[arg(long, value_enum, default_value_t = Bots::Expert)]
    bots: Bots,
    /// The people's sockets ask for the compressed stream (`?compress=deflate-raw`), as the web
    /// page does where the browser can inflate it; the bytes counted are the compressed ones.
    #[arg(long)]
    compress: bool,
}

/// The bots of the `--bot-rooms`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
enum Bots {
    /// Hard bots: microseconds a decision, in the room's task.
    Hard,
    /// Expert bots: a search of up to 50 ms a decision, on the server's thinking threads.
    Expert,
}

impl Bots {
    /// The engine's difficulty.
    fn difficulty(self) -> Difficulty {
        match self {
            Bots::Hard => Difficulty::Hard,
            Bots::Expert => Difficulty::Expert,
        }
    }
}

/// Where the server under load keeps its rooms.
#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
enum StoreChoice {
    /// `--store memory`.
    Memory,
    /// `--store sqlite` in a fresh temporary folder.
    Sqlite,
    /// Memory, then SQLite.
    Both,
}

/// The idle mode's flags.
#[derive(Debug, Args)]
struct IdleArgs {
    #[command(flatten)]
    common: Common,
    /// Connections to open and hold.
    #[arg(long, default_value_t = 10_000)]
    connections: usize,
    /// Seconds to hold them after the last one opened, before measuring.
    #[arg(long, default_value_t = IDLE_HOLD_SECONDS)]
    hold: u64,
}

/// The report mode's flags.
#[derive(Debug, Args)]
struct ReportArgs {
    #[command(flatten)]
    common: Common,
    /// Rooms to open in each play run.
    #[arg(long, default_value_t = 500)]
    rooms: usize,
    /// People seated in each room (2 to 6; every seat is a person).
    #[arg(long, default_value_t = 4)]
    humans: u8,
    /// Seconds of play of each workload (game, room relay, relay, echo) in each play run.
    #[arg(long, default_value_t = 15)]
    seconds: u64,
    /// Runs of each measure: the table gives their median and range.
    #[arg(long, default_value_t = 3)]
    runs: usize,
    /// Milliseconds each player thinks before each action in the paced runs.
    #[arg(long, default_value_t = 20)]
    think_ms: u64,
    /// Idle connections to open and hold in each idle run.
    #[arg(long, default_value_t = 10_000)]
    idle_connections: usize,
    /// The game's people ask for compressed sockets (`?compress=deflate-raw`), as the web page
    /// does: the bytes are the compressed ones, and the CPU includes the compression.
    #[arg(long)]
    compress: bool,
}

/// The most clients any play run may open.
const MAX_CLIENTS: usize = 20_000;
/// The most connections an idle run may hold (each also needs an open file here and one in the
/// server, under the limit on open files).
const MAX_IDLE_CONNECTIONS: usize = 100_000;
/// Seconds an idle run holds its connections, unless told otherwise.
const IDLE_HOLD_SECONDS: u64 = 2;
/// How long setting up (connecting, joining, starting) may take before the run gives up.
const SETUP_LIMIT: Duration = Duration::from_secs(120);

fn main() -> Result<(), String> {
    let cli = Cli::parse();
    // Raise the soft limit on open files to the hard one; the server inherits it.
    match rlimit::increase_nofile_limit(u64::MAX) {
        Ok(limit) => println!("open file limit: {limit}"),
        Err(e) => println!("open file limit unchanged: {e}"),
    }
    let runtime = tokio::runtime::Runtime::new().map_err(|e| e.to_string())?;
    match cli.mode {
        Mode::Play(args) => runtime.block_on(play(args)).map(drop),
        Mode::Idle(args) => runtime.block_on(idle(args)).map(drop),
        Mode::Report(args) => runtime.block_on(report(args)),
    }
}

#[cfg(test)]
mod tests {
    use clap::Parser;

    use crate::play::{Run, Tally, play, store_table};
    use crate::server::{
        Counts, Misses, callgrind_counts, histogram_quantile, stat_cpu_seconds, stat_cpu_split,
        store_cpu_seconds,
    };
    use crate::{Cli, Mode};

    /// A run of `actions` in 10 s, whose latencies are all `latency_us`, with these CPU times.
    pub(crate) fn run(actions: u64, latency_us: u64, cpu: f64, store_cpu: (f64, f64)) -> Run {
        let mut tally = Tally::new();
        tally.actions = actions;
        tally
            .latency
            .record_n(latency_us, actions)
            .expect("within bounds");
        Run {
            tally,
            seconds: 10.0,
            memory_before: (0, 0),
            memory_during: (0, 0),
            memory_after: (0, 0),
            cpu: (cpu, 0.0),
            server_system: 0.0,
            store_cpu,
            counts: None,
        }
    }

    #[test]
    fn callgrind_counts_are_read_from_its_summary() {
        let text = "# callgrind format\nversion: 1\ncmd: dhumbal-server\nevents: Ir\nsummary: 1491594646\nfn=(1) main\n";
        let only = Counts {
            instructions: 1_491_594_646,
            misses: None,
        };
        assert_eq!(callgrind_counts(text), Ok(only));
        assert_eq!(
            callgrind_counts("events: Ir\ntotals: 42\n").map(|c| c.instructions),
            Ok(42)
        );
        assert!(callgrind_counts("events: Ir\n").is_err());
        assert!(callgrind_counts("summary: 42\n").is_err());
        // With the cache simulated: the first-level misses of reads and writes together, and
        // the last level's of instructions and data.
        let simulated = "events: Ir Dr Dw I1mr D1mr D1mw ILmr DLmr DLmw\n\
                         summary: 1000 300 200 40 25 15 2 7 3\n";
        assert_eq!(
            callgrind_counts(simulated),
            Ok(Counts {
                instructions: 1000,
                misses: Some(Misses {
                    l1_instruction: 40,
                    l1_data: 40,
                    last_level: 12,
                }),
            })
        );
        // A simulation's header without one of its counts is an error, not a zero.
        assert!(callgrind_counts("events: Ir I1mr\nsummary: 1000 40\n").is_err());
        // Callgrind leaves out a total's trailing zeros: the events named and not given are 0.
        let short = "events: Ir Dr Dw I1mr D1mr D1mw ILmr DLmr DLmw\n\
                     summary: 1000 300 200 40 25 15 2 7\n";
        assert_eq!(
            callgrind_counts(short).map(|c| c.misses),
            Ok(Some(Misses {
                l1_instruction: 40,
                l1_data: 40,
                last_level: 9,
            }))
        );
        // The counted function never ran (inlined): an error naming it, not a count of 0.
        let nothing = callgrind_counts("events: Ir\nsummary: 0\n").unwrap_err();
        assert!(nothing.contains("thread_start"), "{nothing}");
    }

    #[test]
    fn quantiles_are_read_from_plain_and_labelled_histograms() {
        let text = "\
dhumbal_store_append_seconds_bucket{le=\"0.001\"} 90
dhumbal_store_append_seconds_bucket{le=\"0.005\"} 99
dhumbal_store_append_seconds_bucket{le=\"0.05\"} 100
dhumbal_store_append_seconds_bucket{le=\"+Inf\"} 100
dhumbal_store_hold_seconds_bucket{step=\"commit\",le=\"0.0001\"} 3
dhumbal_store_hold_seconds_bucket{step=\"commit\",le=\"0.001\"} 4
dhumbal_store_hold_seconds_bucket{step=\"commit\",le=\"+Inf\"} 4
dhumbal_store_hold_seconds_bucket{step=\"pass\",le=\"0.0001\"} 0
dhumbal_store_hold_seconds_bucket{step=\"pass\",le=\"+Inf\"} 0
";
        let append = "dhumbal_store_append_seconds";
        assert_eq!(histogram_quantile(text, append, 0.5), Some((0.001, 100)));
        assert_eq!(histogram_quantile(text, append, 0.99), Some((0.005, 100)));
        assert_eq!(histogram_quantile(text, append, 1.0), Some((0.05, 100)));
        let commit = "dhumbal_store_hold_seconds{step=\"commit\"}";
        assert_eq!(histogram_quantile(text, commit, 0.5), Some((0.0001, 4)));
        assert_eq!(histogram_quantile(text, commit, 1.0), Some((0.001, 4)));
        // No samples, no quantile; and no such series at all, none either.
        let pass = "dhumbal_store_hold_seconds{step=\"pass\"}";
        assert_eq!(histogram_quantile(text, pass, 0.5), None);
        let restart = "dhumbal_store_hold_seconds{step=\"restart\"}";
        assert_eq!(histogram_quantile(text, restart, 0.5), None);
    }

    #[test]
    fn cpu_time_is_read_past_a_name_with_spaces_and_parentheses() {
        // utime 250 and stime 150 ticks: fields 14 and 15.
        let stat = "4242 (dhumbal (x) y) S 1 2 3 4 5 6 7 8 9 10 250 150 0 0 20 0";
        assert!((stat_cpu_seconds(stat) - 4.0).abs() < 1e-9);
        assert_eq!(stat_cpu_split(stat), (2.5, 1.5));
        assert!(stat_cpu_seconds("").abs() < 1e-9);
    }

    #[test]
    fn the_store_threads_are_found_by_name() {
        let pid = std::process::id();
        let (stop, stopped) = std::sync::mpsc::channel::<()>();
        let (busy, worked) = std::sync::mpsc::channel();
        // A thread named as the store's writer, which works until its own CPU time shows.
        let writer = std::thread::Builder::new()
            .name("dhumbal-store".into())
            .spawn(move || {
                let own = || {
                    stat_cpu_seconds(
                        &std::fs::read_to_string("/proc/thread-self/stat").unwrap_or_default(),
                    )
                };
                let mut spun = 0_u64;
                while own() < 0.03 {
                    spun = std::hint::black_box(spun.wrapping_add(1));
                }
                busy.send(()).expect("the test waits");
                stopped.recv().ok();
            })
            .expect("a thread");
        worked.recv().expect("the thread worked");
        let (writer_cpu, checkpointer_cpu) = store_cpu_seconds(pid);
        stop.send(()).expect("the thread waits");
        writer.join().expect("the thread ends");
        assert!(writer_cpu >= 0.03, "{writer_cpu} s");
        assert!(checkpointer_cpu.abs() < 1e-9, "{checkpointer_cpu} s");
        // A server this program did not start has no pid to read.
        assert_eq!(store_cpu_seconds(0), (0.0, 0.0));
    }

    #[test]
    fn the_pairs_table_gives_medians_ranges_and_ratios_within_pairs() {
        // Three pairs, each memory then SQLite.
        let runs = [
            run(200_000, 40_000, 8.0, (0.0, 0.0)),
            run(160_000, 44_000, 8.0, (0.4, 0.03)),
            run(250_000, 50_000, 8.0, (0.0, 0.0)),
            run(225_000, 45_000, 8.0, (0.45, 0.05)),
            run(220_000, 40_000, 8.0, (0.0, 0.0)),
            run(165_000, 40_000, 8.0, (0.33, 0.02)),
        ];
        let table = store_table(&runs);
        let lines: Vec<&str> = table.lines().collect();
        assert_eq!(lines.len(), 7, "{table}");
        // Ratios 0.80, 0.90 and 0.75, each within its pair: the median is 0.80.
        assert_eq!(
            lines[2],
            "| actions/s | 22,000 (20,000–25,000) | 16,500 (16,000–22,500) | 0.80× (0.75×–0.90×) |"
        );
        assert!(
            lines[3].starts_with("| p99 latency (ms) | 40.0 (40.0–50.0) |"),
            "{}",
            lines[3]
        );
        // The store's own threads have no memory-store figure and no ratio.
        assert_eq!(
            lines[5],
            "| the writer's CPU per action (µs) | | 2.00 (2.00–2.50) | |"
        );
    }

    #[test]
    fn pairs_are_refused_where_they_mean_nothing() {
        let runtime = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .expect("a runtime");
        for flags in [
            &["--pairs", "2"][..],
            &["--pairs", "2", "--store", "sqlite"],
            &["--pairs", "2", "--store", "both", "--echo"],
            &["--pairs", "0", "--store", "both"],
        ] {
            let cli = Cli::try_parse_from(["loadgen", "play"].iter().chain(flags))
                .expect("the flags parse");
            let Mode::Play(args) = cli.mode else {
                panic!("not the play mode")
            };
            let refused = runtime.block_on(play(args)).err().expect("refused");
            assert!(refused.contains("--pairs"), "{flags:?}: {refused}");
        }
    }
}
