//! What the room's tests share: timings and a room's setup (tests only).

use std::time::Duration;

use dhumbal_engine::Settings;

use super::Timing;
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
