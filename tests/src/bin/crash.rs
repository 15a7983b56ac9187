//! `crash`: the crash harness (issue 13). It starts the real server, plays rooms of all three
//! presets (people and bots), kills the server with SIGKILL at random moments, restarts it on
//! the same address and data directory, and checks that every client gets back everything it
//! had received; then it plays every match to its end and checks the engine's invariants. It
//! prints a summary and exits non-zero if anything acknowledged was lost or a check failed.
//! See [`dhumbal_tests::crash`].
//!
//! ```sh
//! cargo build --release -p dhumbal-tests --bins && target/release/crash --kills 100
//! ```

use std::path::PathBuf;
use std::process::ExitCode;
use std::time::Duration;

use clap::Parser;
use dhumbal_tests::crash::{Options, run};

/// The command line.
#[derive(Debug, Parser)]
#[command(
    name = "crash",
    about = "SIGKILL the Dhumbal server while rooms play; check nothing acknowledged is lost"
)]
struct Cli {
    /// How many times to kill the server.
    #[arg(long, default_value_t = 100)]
    kills: u32,
    /// How many rooms to play.
    #[arg(long, default_value_t = 20)]
    rooms: usize,
    /// The seed of the harness's random choices (random if not given).
    #[arg(long)]
    seed: Option<u64>,
    /// The server binary (default: `server-under-test` beside this program).
    #[arg(long)]
    server: Option<PathBuf>,
    /// The shortest play between a restart and the next kill, in milliseconds.
    #[arg(long, default_value_t = 50)]
    min_play_ms: u64,
    /// The longest play between a restart and the next kill, in milliseconds.
    #[arg(long, default_value_t = 400)]
    max_play_ms: u64,
    /// The longest a person thinks before a move, in milliseconds (0: as fast as the server
    /// answers).
    #[arg(long, default_value_t = 0)]
    think_ms: u64,
    /// Print only the summary, not a line per kill.
    #[arg(long)]
    quiet: bool,
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    let server = match cli.server {
        Some(server) => server,
        None => match std::env::current_exe() {
            Ok(exe) => exe.with_file_name("server-under-test"),
            Err(e) => {
                eprintln!("cannot find this program's path: {e}");
                return ExitCode::FAILURE;
            }
        },
    };
    if !server.is_file() {
        eprintln!(
            "no server binary at {} (build it: cargo build --release -p dhumbal-tests --bins)",
            server.display()
        );
        return ExitCode::FAILURE;
    }
    let mut options = Options::new(server, cli.seed.unwrap_or_else(rand::random));
    options.kills = cli.kills;
    options.rooms = cli.rooms;
    options.min_play = Duration::from_millis(cli.min_play_ms);
    options.max_play = Duration::from_millis(cli.max_play_ms.max(cli.min_play_ms));
    options.think = Duration::from_millis(cli.think_ms);
    options.verbose = !cli.quiet;
    let runtime = match tokio::runtime::Runtime::new() {
        Ok(runtime) => runtime,
        Err(e) => {
            eprintln!("cannot start the runtime: {e}");
            return ExitCode::FAILURE;
        }
    };
    println!(
        "crash: {} kills, {} rooms, seed {}, server {}",
        options.kills,
        options.rooms,
        options.seed,
        options.server.display()
    );
    let report = runtime.block_on(run(&options));
    println!("{report}");
    if report.passed() {
        ExitCode::SUCCESS
    } else {
        ExitCode::FAILURE
    }
}
