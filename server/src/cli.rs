//! The `dhumbal-server` command line: what the binary (`src/main.rs`) runs.
//!
//! Reads the configuration from flags and the environment ([`crate::Config`]; `--help`
//! lists them), logs with `tracing` (filtered by `RUST_LOG`, default `info`; one JSON object a
//! line with `--log-format json`), binds the listen address and serves until Ctrl-C or SIGTERM.
//!
//! `dhumbal-server healthcheck` instead GETs `/healthz` from the server at `--addr` and exits 0
//! when it answers 200, 1 otherwise: the container's health check, which needs no curl.
//!
//! `dhumbal-server verify FILE` checks a hand history (`docs/fairness.md`) with the engine itself
//! and prints each round's verdict: exit 0 when everything checks out, 1 on any mismatch, 2 when
//! the file cannot be read as a hand history.

use std::process::ExitCode;

use clap::{Parser, Subcommand};

use crate::logging::{self, LogFormat};
use crate::{Config, health, run};
use tokio::net::TcpListener;
use tracing::info;

/// How often a worker of the runtime takes its next task from the shared queue rather than its
/// own: every 2nd task (tokio tunes it between about 2 and 127 by itself otherwise). A worker's
/// own queue holds 256 tasks; at saturation the rest (sockets made ready together, rooms woken
/// by the log's writer) wait in the shared queue, and under tokio's own tuning they waited
/// behind many rounds of the worker's own: `loadgen play --rooms 500 --humans 4 --echo`, the
/// game's p99 72 ms (relay 19 ms) by default, 42 ms (relay 14 ms) with this, the same
/// throughput and CPU; paced (`--think-ms 20`) and with the SQLite log no change. Before every
/// task (1), the p99.9 of the game was 0.7 s: the workers' own queues starved then.
pub const GLOBAL_QUEUE_INTERVAL: u32 = 2;

/// The command line: the server's configuration, and an optional subcommand.
#[derive(Debug, Parser)]
#[command(
    name = "dhumbal-server",
    version,
    about = "The Dhumbal (Jhyap) game server"
)]
struct Cli {
    /// What to do instead of serving.
    #[command(subcommand)]
    command: Option<Command>,
    /// How log lines are written.
    #[arg(long, env = "DHUMBAL_LOG_FORMAT", value_enum, default_value_t = LogFormat::Text)]
    log_format: LogFormat,
    /// The server's configuration.
    #[command(flatten)]
    config: Config,
}

/// The subcommands.
#[derive(Debug, Subcommand)]
enum Command {
    /// GET /healthz from the server at --addr (0.0.0.0 means this host) and exit 0 if it answers
    /// 200, 1 otherwise.
    Healthcheck,
    /// Check a hand history (downloaded after a match) with the engine: the seed against the
    /// commitment, and every round replayed. Exits 0 when it checks out, 1 on any mismatch, 2
    /// when the file cannot be read.
    Verify {
        /// The hand history's JSON file.
        file: std::path::PathBuf,
    },
}

/// Runs the command line: serves until Ctrl-C or SIGTERM, or runs a subcommand. The binary's
/// `main`, here so that the tests can build the same program ([`crate`] is all it needs).
pub fn main() -> ExitCode {
    let cli = Cli::parse();
    if let Some(Command::Verify { file }) = &cli.command {
        return verify(file);
    }
    if let Some(Command::Healthcheck) = cli.command {
        return match health::check(cli.config.addr, "/healthz") {
            Ok(()) => ExitCode::SUCCESS,
            Err(e) => {
                eprintln!("unhealthy: {e}");
                ExitCode::FAILURE
            }
        };
    }
    logging::init(cli.log_format);
    let runtime = match tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .global_queue_interval(GLOBAL_QUEUE_INTERVAL)
        .build()
    {
        Ok(runtime) => runtime,
        Err(e) => {
            eprintln!("cannot start the runtime: {e}");
            return ExitCode::FAILURE;
        }
    };
    match runtime.block_on(serve(cli.config)) {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            tracing::error!(error = %e, "the server failed");
            ExitCode::FAILURE
        }
    }
}

/// `dhumbal-server verify FILE`: prints the verdicts and answers the exit status.
fn verify(file: &std::path::Path) -> ExitCode {
    let record = std::fs::read_to_string(file)
        .map_err(|e| e.to_string())
        .and_then(|text| {
            serde_json::from_str::<dhumbal_engine::HandHistory>(&text).map_err(|e| e.to_string())
        });
    let record = match record {
        Ok(record) => record,
        Err(e) => {
            eprintln!("{}: not a hand history: {e}", file.display());
            return ExitCode::from(2);
        }
    };
    let verification = dhumbal_engine::verify(&record);
    println!("{}", verdicts(file, &record, &verification));
    if verification.is_ok() {
        ExitCode::SUCCESS
    } else {
        ExitCode::FAILURE
    }
}

/// The report `verify` prints: what the file is, then one line per check.
fn verdicts(
    file: &std::path::Path,
    record: &dhumbal_engine::HandHistory,
    verification: &dhumbal_engine::Verification,
) -> String {
    let line = |what: &str, verdict: &Result<(), String>| match verdict {
        Ok(()) => format!("{what}: checks out"),
        Err(why) => format!("{what}: MISMATCH: {why}"),
    };
    let mut lines = vec![format!(
        "{}: room {}, match {}, {} rounds, players {}",
        file.display(),
        record.room,
        record.match_number,
        record.rounds.len(),
        record.players.join(", ")
    )];
    lines.push(line("seed and commitment", &verification.seed));
    for (round, verdict) in record.rounds.iter().zip(&verification.rounds) {
        lines.push(line(&format!("round {}", round.round), verdict));
    }
    lines.push(line("standings", &verification.end));
    // The file holds the seeds the server says it used; only each page knows what it sent.
    lines.push(
        "not checked here: whether each seat's client seed was the latest its page sent after it \
         saw the commitment and the server acknowledged (only that page's own record can tell: \
         its Verify the deals checks it; see docs/fairness.md)"
            .to_owned(),
    );
    lines.push(if verification.is_ok() {
        "verdict: every deal checks out".to_owned()
    } else {
        "verdict: the record does NOT check out".to_owned()
    });
    lines.join("\n")
}

/// Binds the listen address and serves until a shutdown signal.
async fn serve(config: Config) -> std::io::Result<()> {
    // Every connection is a descriptor: take all the process may have (the soft limit is often
    // 1,024 while the hard limit is far higher). The listener caps connections below it.
    match rlimit::increase_nofile_limit(u64::MAX) {
        Ok(limit) => info!(limit, "file descriptors"),
        Err(e) => tracing::warn!(error = %e, "could not raise the file-descriptor limit"),
    }
    let listener = TcpListener::bind(config.addr).await?;
    info!(addr = %listener.local_addr()?, "dhumbal server listening");
    run(listener, config, shutdown_signal()).await?;
    info!("dhumbal server stopped");
    Ok(())
}

/// Completes on Ctrl-C or, on Unix, SIGTERM.
async fn shutdown_signal() {
    let ctrl_c = async {
        if tokio::signal::ctrl_c().await.is_err() {
            std::future::pending::<()>().await;
        }
    };
    #[cfg(unix)]
    let terminate = async {
        match tokio::signal::unix::signal(tokio::signal::unix::SignalKind::terminate()) {
            Ok(mut signal) => {
                signal.recv().await;
            }
            Err(_) => std::future::pending::<()>().await,
        }
    };
    #[cfg(not(unix))]
    let terminate = std::future::pending::<()>();
    tokio::select! {
        () = ctrl_c => {},
        () = terminate => {},
    }
}

#[cfg(test)]
mod tests {
    use super::Cli;

    /// The flags table of `docs/operations.md` names exactly the flags `dhumbal-server --help`
    /// shows, so that the operator's page cannot drift from the code.
    #[test]
    fn the_operations_doc_lists_every_flag() {
        use clap::CommandFactory as _;
        let table = crate::operations_doc_section("Flags");
        let documented: std::collections::BTreeSet<String> = table
            .lines()
            .filter_map(|line| line.strip_prefix("| `--"))
            .filter_map(|rest| rest.split('`').next())
            .map(str::to_owned)
            .collect();
        let shown: std::collections::BTreeSet<String> = Cli::command()
            .get_arguments()
            .filter(|arg| !arg.is_hide_set())
            .filter_map(|arg| arg.get_long())
            .filter(|&long| long != "help")
            .map(str::to_owned)
            .collect();
        assert_eq!(documented, shown);
    }
}
