//! Logging: `tracing` lines filtered by `RUST_LOG` (default `info`), as text or as one JSON
//! object a line (`--log-format json`, for container log collectors).
//!
//! At the default level the server writes a line when it starts and stops, when a room opens
//! and closes, when people join and leave, when a match starts and ends, and for anything that
//! went wrong; never a line per message (refusals and bad messages are at `debug`).

use clap::ValueEnum;
use tracing::Subscriber;
use tracing_subscriber::EnvFilter;
use tracing_subscriber::fmt::MakeWriter;

/// How log lines are written.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, ValueEnum)]
pub enum LogFormat {
    /// Human-readable lines.
    #[default]
    Text,
    /// One JSON object a line.
    Json,
}

/// The filter from `RUST_LOG`, or `info` when it is unset or does not parse.
pub fn filter_from_env() -> EnvFilter {
    EnvFilter::try_from_default_env().unwrap_or_else(|_| EnvFilter::new("info"))
}

/// A subscriber that writes lines of `format`, passing `filter`, to `writer`.
pub fn subscriber<W>(
    format: LogFormat,
    filter: EnvFilter,
    writer: W,
) -> Box<dyn Subscriber + Send + Sync>
where
    W: for<'w> MakeWriter<'w> + Send + Sync + 'static,
{
    let builder = tracing_subscriber::fmt()
        .with_env_filter(filter)
        .with_writer(writer);
    match format {
        LogFormat::Text => Box::new(builder.finish()),
        LogFormat::Json => Box::new(builder.json().finish()),
    }
}

/// Sends the process's log lines, in `format`, to standard output.
pub fn init(format: LogFormat) {
    let subscriber = subscriber(format, filter_from_env(), std::io::stdout);
    if tracing::subscriber::set_global_default(subscriber).is_err() {
        eprintln!("a logger was already installed; keeping it");
    }
}
