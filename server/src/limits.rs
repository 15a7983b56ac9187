//! Limits that protect the server from careless and hostile clients: each connection's message
//! rate ([`RateLimit`]), the number of WebSocket connections held at once ([`Connections`]), and
//! the lookups of unknown rooms per address ([`JoinAttempts`]).
//!
//! Every clock here is tokio's, so that tests on paused time can let a minute pass at once.

use std::collections::HashMap;
use std::net::IpAddr;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use tokio::time::Instant;

/// What the rate limit says about one message.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Verdict {
    /// Within the limit: handle it.
    Allow,
    /// Over the limit: refuse it with `rate_limited`, handling nothing.
    Refuse,
    /// Over the limit for too long: close the connection.
    Close,
}

/// A token bucket for one connection's messages: `burst` messages at once, then `per_sec` a
/// second. A refused message costs a token too, so the bucket goes into debt; a client that
/// keeps sending faster than the rate sinks deeper, and once it is more than `strikes` messages
/// in debt it is closed. A client that slows down earns its way back.
#[derive(Debug)]
pub struct RateLimit {
    /// The most tokens the bucket holds (the burst).
    burst: f64,
    /// Tokens earned per second.
    per_sec: f64,
    /// How deep in debt the bucket may go before the connection is closed.
    strikes: f64,
    /// The tokens now; below 1 a message is refused, below `-strikes` the connection closes.
    tokens: f64,
    /// When `tokens` was last brought up to date.
    updated: Instant,
}

impl RateLimit {
    /// A full bucket.
    pub fn new(burst: u32, per_sec: u32, strikes: u32) -> RateLimit {
        RateLimit {
            burst: f64::from(burst),
            per_sec: f64::from(per_sec),
            strikes: f64::from(strikes),
            tokens: f64::from(burst),
            updated: Instant::now(),
        }
    }

    /// Counts one message received now and says what to do with it.
    pub fn check(&mut self) -> Verdict {
        let now = Instant::now();
        let earned = now.duration_since(self.updated).as_secs_f64() * self.per_sec;
        self.tokens = (self.tokens + earned).min(self.burst);
        self.updated = now;
        self.tokens -= 1.0;
        if self.tokens >= 0.0 {
            Verdict::Allow
        } else if self.tokens >= -self.strikes {
            Verdict::Refuse
        } else {
            Verdict::Close
        }
    }
}

/// The count of WebSocket connections held, with a cap.
#[derive(Debug)]
pub struct Connections {
    /// Connections held now (shared with every [`Slot`]).
    held: Arc<AtomicUsize>,
    /// The most held at once.
    max: usize,
}

/// One connection's place in [`Connections`], given back when dropped.
#[derive(Debug)]
pub struct Slot {
    /// The count it is part of.
    held: Arc<AtomicUsize>,
}

impl Connections {
    /// No connections yet, and at most `max`.
    pub fn new(max: usize) -> Connections {
        Connections {
            held: Arc::new(AtomicUsize::new(0)),
            max,
        }
    }

    /// A place for one more connection, or `None` when the server holds as many as it may.
    pub fn acquire(&self) -> Option<Slot> {
        self.held
            .fetch_update(Ordering::SeqCst, Ordering::SeqCst, |held| {
                (held < self.max).then_some(held + 1)
            })
            .ok()
            .map(|_| Slot {
                held: Arc::clone(&self.held),
            })
    }

    /// How many connections are held now.
    pub fn held(&self) -> usize {
        self.held.load(Ordering::SeqCst)
    }
}

impl Drop for Slot {
    fn drop(&mut self) {
        self.held.fetch_sub(1, Ordering::SeqCst);
    }
}

/// How long the failed lookups of one address count against it.
pub const ATTEMPT_WINDOW: Duration = Duration::from_secs(60);

/// Above this many addresses, the ones whose window has passed are forgotten.
const PRUNE_ABOVE: usize = 1024;

/// Failed lookups of room codes (codes of no room) per address, so that codes cannot be found
/// by trying many: an address that fails `max` times within [`ATTEMPT_WINDOW`] of its first
/// failure is refused every lookup, good code or bad, until that window has passed.
#[derive(Debug)]
pub struct JoinAttempts {
    /// The most failures an address may have in one window.
    max: u32,
    /// Each address's current window: when it began, and the failures in it.
    windows: Mutex<HashMap<IpAddr, (Instant, u32)>>,
}

/// The address has failed too often; lookups are refused until the window has passed.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Blocked;

impl JoinAttempts {
    /// No failures yet; at most `max` per address per window.
    pub fn new(max: u32) -> JoinAttempts {
        JoinAttempts {
            max,
            windows: Mutex::new(HashMap::new()),
        }
    }

    /// Whether `ip` may look a room up now.
    pub fn check(&self, ip: IpAddr) -> Result<(), Blocked> {
        let now = Instant::now();
        let windows = self
            .windows
            .lock()
            .expect("the attempts lock is never poisoned");
        match windows.get(&ip) {
            Some(&(began, failures)) if now < began + ATTEMPT_WINDOW && failures >= self.max => {
                Err(Blocked)
            }
            _ => Ok(()),
        }
    }

    /// Counts a lookup by `ip` of a room that does not exist.
    pub fn fail(&self, ip: IpAddr) {
        let now = Instant::now();
        let mut windows = self
            .windows
            .lock()
            .expect("the attempts lock is never poisoned");
        if windows.len() > PRUNE_ABOVE {
            windows.retain(|_, (began, _)| now < *began + ATTEMPT_WINDOW);
        }
        let window = windows.entry(ip).or_insert((now, 0));
        if now >= window.0 + ATTEMPT_WINDOW {
            *window = (now, 0);
        }
        window.1 = window.1.saturating_add(1);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test(start_paused = true)]
    async fn a_burst_then_the_rate_then_a_close() {
        let mut limit = RateLimit::new(3, 2, 2);
        for _ in 0..3 {
            assert_eq!(limit.check(), Verdict::Allow);
        }
        assert_eq!(limit.check(), Verdict::Refuse);
        assert_eq!(limit.check(), Verdict::Refuse);
        assert_eq!(limit.check(), Verdict::Close);
        // Slowing down earns the way back: 3 tokens of debt, 2 a second.
        let mut limit = RateLimit::new(3, 2, 2);
        for _ in 0..5 {
            limit.check();
        }
        tokio::time::advance(Duration::from_millis(1500)).await;
        assert_eq!(limit.check(), Verdict::Allow);
        assert_eq!(limit.check(), Verdict::Refuse);
    }

    #[test]
    fn connections_are_capped_and_given_back() {
        let connections = Connections::new(2);
        let one = connections.acquire().unwrap();
        let two = connections.acquire().unwrap();
        assert!(connections.acquire().is_none());
        drop(one);
        assert_eq!(connections.held(), 1);
        assert!(connections.acquire().is_some());
        drop(two);
        assert_eq!(connections.held(), 0);
    }

    #[tokio::test(start_paused = true)]
    async fn failed_lookups_block_an_address_for_the_rest_of_the_window() {
        let attempts = JoinAttempts::new(2);
        let (a, b) = ([127, 0, 0, 1].into(), [127, 0, 0, 2].into());
        attempts.fail(a);
        assert_eq!(attempts.check(a), Ok(()));
        attempts.fail(a);
        assert_eq!(attempts.check(a), Err(Blocked));
        assert_eq!(attempts.check(b), Ok(()));
        tokio::time::advance(ATTEMPT_WINDOW).await;
        assert_eq!(attempts.check(a), Ok(()));
        attempts.fail(a);
        assert_eq!(attempts.check(a), Ok(()));
    }
}
