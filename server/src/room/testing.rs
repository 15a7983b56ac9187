//! What the room's tests (and the connection's) share: timings, a room's setup, and what a
//! client's queue holds (tests only).

use std::time::Duration;

use tokio::sync::mpsc;

use dhumbal_engine::Settings;

use super::Timing;
use super::client::Outgoing;
use super::record::{FORMAT, Setup, hash_secret};

/// Timings for tests: bots play at once, nothing else fires on its own.
pub(crate) const TIMING: Timing = Timing {
    bot_delay: Duration::ZERO,
    takeover_after: Duration::from_secs(30),
    idle_ttl: Duration::from_secs(900),
    lobby_ttl: Duration::from_secs(7200),
    unjoined_ttl: Duration::from_secs(900),
    max_watchers: 20,
    turn_second: Duration::from_secs(1),
};

/// The setup of a room with this code and these settings, whose host secret is `secret`.
pub(crate) fn setup(code: &str, settings: Settings) -> Setup {
    Setup {
        format: FORMAT,
        code: code.into(),
        host_secret_hash: hash_secret("secret"),
        settings,
        decks: None,
        seed: Some([5; 32]),
    }
}

/// Everything queued for a client, as text (closes as `close <code>`).
pub(crate) fn drain(outbox: &mut mpsc::Receiver<Outgoing>) -> Vec<String> {
    let mut seen = Vec::new();
    while let Ok(outgoing) = outbox.try_recv() {
        seen.push(match outgoing {
            Outgoing::Text(text) => text.to_string(),
            Outgoing::Close(code, _) => format!("close {code}"),
            Outgoing::Ping => "ping".to_owned(),
            Outgoing::Flush => "flush".to_owned(),
        });
    }
    seen
}
