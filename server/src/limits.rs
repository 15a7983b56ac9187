//! Limits that protect the server from careless and hostile clients: each connection's message
//! rate ([`RateLimit`]), the number of connections held at once ([`Connections`]) and per address
//! ([`PerAddress`]), room creation per address ([`RoomCreations`]), and the lookups of unknown
//! rooms per address ([`JoinAttempts`]).
//!
//! Every per-address limit counts by [`address_key`]: an IPv4 address is itself, and an IPv6
//! address stands for its /64, since one host (one home, one phone, one cloud machine) is given a
//! whole /64 and may use any address in it.
//!
//! Every clock here is tokio's, so that tests on paused time can let a minute pass at once.

use std::collections::HashMap;
use std::net::IpAddr;
use std::sync::{Arc, Mutex, PoisonError};
use std::time::Duration;

use tokio::sync::{OwnedSemaphorePermit, Semaphore};
use tokio::time::Instant;

/// The key an address is counted under by every per-address limit: an IPv4 address (also when
/// written as `::ffff:a.b.c.d`) is itself; an IPv6 address is its /64 network (the low 64 bits
/// zero).
pub fn address_key(ip: IpAddr) -> IpAddr {
    match ip {
        IpAddr::V4(_) => ip,
        IpAddr::V6(v6) => match v6.to_ipv4_mapped() {
            Some(v4) => IpAddr::V4(v4),
            None => IpAddr::V6(std::net::Ipv6Addr::from(
                u128::from(v6) & !u128::from(u64::MAX),
            )),
        },
    }
}

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
        self.check_at(Instant::now())
    }

    /// Counts one message received at `now` (a clock read the caller had already made) and
    /// says what to do with it.
    pub fn check_at(&mut self, now: Instant) -> Verdict {
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

/// The WebSocket connections held at once, with a cap: a semaphore whose owned permits the
/// connections hold and give back when they end.
#[derive(Debug)]
pub struct Connections {
    /// One permit per connection that may still open.
    permits: Arc<Semaphore>,
    /// The cap.
    max: usize,
}

/// One connection's place in [`Connections`], given back when dropped.
pub type Slot = OwnedSemaphorePermit;

impl Connections {
    /// No connections yet, and at most `max`.
    pub fn new(max: usize) -> Connections {
        let max = max.min(Semaphore::MAX_PERMITS);
        Connections {
            permits: Arc::new(Semaphore::new(max)),
            max,
        }
    }

    /// A place for one more connection, or `None` when the server holds as many as it may.
    pub fn acquire(&self) -> Option<Slot> {
        Arc::clone(&self.permits).try_acquire_owned().ok()
    }

    /// How many connections are held now.
    pub fn held(&self) -> usize {
        self.max - self.permits.available_permits()
    }
}

/// Open connections counted per address, with a cap for each: so that one address cannot hold
/// every connection the server may hold.
#[derive(Debug)]
pub struct PerAddress {
    /// The most connections one address may hold.
    max: usize,
    /// The connections each address holds now (addresses holding none are forgotten).
    held: Arc<Mutex<HashMap<IpAddr, usize>>>,
}

/// One connection's place in its address's count, given back when dropped.
#[derive(Debug)]
pub struct AddressSlot {
    /// The count it is part of.
    held: Arc<Mutex<HashMap<IpAddr, usize>>>,
    /// Its address.
    ip: IpAddr,
    /// The most one address may hold.
    max: usize,
}

impl AddressSlot {
    /// The address it counts for ([`address_key`]: an IPv6 address's /64).
    pub fn ip(&self) -> IpAddr {
        self.ip
    }

    /// The most one address may hold (what a shared store counts against, across nodes).
    pub fn max(&self) -> usize {
        self.max
    }
}

impl PerAddress {
    /// No connections yet, and at most `max` for each address.
    pub fn new(max: usize) -> PerAddress {
        PerAddress {
            max,
            held: Arc::default(),
        }
    }

    /// A place for one more connection from `ip`, or `None` when it holds as many as it may.
    pub fn acquire(&self, ip: IpAddr) -> Option<AddressSlot> {
        let ip = address_key(ip);
        let mut held = self.held.lock().unwrap_or_else(PoisonError::into_inner);
        let count = held.entry(ip).or_insert(0);
        if *count >= self.max {
            return None;
        }
        *count += 1;
        Some(AddressSlot {
            held: Arc::clone(&self.held),
            ip,
            max: self.max,
        })
    }

    /// How many connections `ip` holds now.
    pub fn held(&self, ip: IpAddr) -> usize {
        let ip = address_key(ip);
        let held = self.held.lock().unwrap_or_else(PoisonError::into_inner);
        held.get(&ip).copied().unwrap_or(0)
    }
}

impl Drop for AddressSlot {
    fn drop(&mut self) {
        let mut held = self.held.lock().unwrap_or_else(PoisonError::into_inner);
        if let Some(count) = held.get_mut(&self.ip) {
            *count -= 1;
            if *count == 0 {
                held.remove(&self.ip);
            }
        }
    }
}

/// Why an address may not create a room now.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum CreationRefused {
    /// It has created rooms faster than the rate allows.
    TooFast,
    /// Rooms it created are still open, as many as one address may hold.
    TooMany,
}

/// Room creation per address: a rate (a token bucket of `per_minute` rooms, refilled at that
/// rate) and a cap on the rooms it created that are still open. So that one address cannot take
/// every room the server may hold.
#[derive(Debug)]
pub struct RoomCreations {
    /// Rooms one address may create per minute (and at once).
    per_minute: u32,
    /// The live rooms one address may hold.
    open: PerAddress,
    /// Each address's bucket: its tokens and when they were counted.
    buckets: Mutex<HashMap<IpAddr, (f64, Instant)>>,
}

impl RoomCreations {
    /// `per_minute` creations a minute and `max_open` open rooms for each address.
    pub fn new(per_minute: u32, max_open: usize) -> RoomCreations {
        RoomCreations {
            per_minute,
            open: PerAddress::new(max_open),
            buckets: Mutex::new(HashMap::new()),
        }
    }

    /// Whether `ip` may create a room now; if so, the slot it holds until the room closes.
    pub fn admit(&self, ip: IpAddr) -> Result<AddressSlot, CreationRefused> {
        let ip = address_key(ip);
        let now = Instant::now();
        let burst = f64::from(self.per_minute);
        let mut buckets = self.buckets.lock().unwrap_or_else(PoisonError::into_inner);
        if buckets.len() > PRUNE_ABOVE {
            // A bucket refilled to the brim is the same as no bucket.
            buckets.retain(|_, (_, at)| now.duration_since(*at) < Duration::from_secs(60));
        }
        let (tokens, at) = buckets.entry(ip).or_insert((burst, now));
        let earned = now.duration_since(*at).as_secs_f64() * burst / 60.0;
        *tokens = (*tokens + earned).min(burst);
        *at = now;
        if *tokens < 1.0 {
            return Err(CreationRefused::TooFast);
        }
        let slot = self.open.acquire(ip).ok_or(CreationRefused::TooMany)?;
        *tokens -= 1.0;
        Ok(slot)
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
        let ip = address_key(ip);
        let now = Instant::now();
        let windows = self.windows.lock().unwrap_or_else(PoisonError::into_inner);
        match windows.get(&ip) {
            Some(&(began, failures)) if now < began + ATTEMPT_WINDOW && failures >= self.max => {
                Err(Blocked)
            }
            _ => Ok(()),
        }
    }

    /// Counts a lookup by `ip` of a room that does not exist.
    pub fn fail(&self, ip: IpAddr) {
        let ip = address_key(ip);
        let now = Instant::now();
        let mut windows = self.windows.lock().unwrap_or_else(PoisonError::into_inner);
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

    #[test]
    fn each_address_holds_at_most_its_share() {
        let per = PerAddress::new(2);
        let (a, b): (IpAddr, IpAddr) = ([10, 0, 0, 1].into(), [10, 0, 0, 2].into());
        let one = per.acquire(a).unwrap();
        let _two = per.acquire(a).unwrap();
        assert!(per.acquire(a).is_none());
        let _other = per.acquire(b).unwrap();
        drop(one);
        assert_eq!(per.held(a), 1);
        assert!(per.acquire(a).is_some());
    }

    #[tokio::test(start_paused = true)]
    async fn room_creation_is_rated_and_capped_per_address() {
        let creations = RoomCreations::new(3, 4);
        let (a, b): (IpAddr, IpAddr) = ([10, 0, 0, 1].into(), [10, 0, 0, 2].into());
        let mut rooms: Vec<AddressSlot> = (0..3).map(|_| creations.admit(a).unwrap()).collect();
        assert_eq!(creations.admit(a).unwrap_err(), CreationRefused::TooFast);
        assert!(creations.admit(b).is_ok());
        // A minute refills the bucket; the open rooms are capped at four.
        tokio::time::advance(Duration::from_secs(60)).await;
        rooms.push(creations.admit(a).unwrap());
        assert_eq!(creations.admit(a).unwrap_err(), CreationRefused::TooMany);
        // A room closing gives its place back.
        rooms.pop();
        assert!(creations.admit(a).is_ok());
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

    /// Regression (issue 35, item 2): every per-address limit keyed the full address, and one
    /// IPv6 host holds a whole /64 of them. The addresses of one /64 count as one.
    #[test]
    fn an_ipv6_address_is_keyed_by_its_64() {
        let ip = |text: &str| text.parse::<IpAddr>().unwrap();
        assert_eq!(
            address_key(ip("2001:db8:1:2:3:4:5:6")),
            ip("2001:db8:1:2::")
        );
        assert_eq!(address_key(ip("2001:db8:1:2::")), ip("2001:db8:1:2::"));
        assert_eq!(address_key(ip("::1")), ip("::"));
        assert_eq!(address_key(ip("203.0.113.9")), ip("203.0.113.9"));
        assert_eq!(address_key(ip("::ffff:203.0.113.9")), ip("203.0.113.9"));
    }

    #[tokio::test(start_paused = true)]
    async fn the_addresses_of_one_ipv6_64_are_one_address() {
        let ip = |text: &str| text.parse::<IpAddr>().unwrap();
        let (a, b) = (
            ip("2001:db8:1:2::1"),
            ip("2001:db8:1:2:ffff:ffff:ffff:ffff"),
        );
        let next = ip("2001:db8:1:3::1");
        let per = PerAddress::new(1);
        let _held = per.acquire(a).unwrap();
        assert!(per.acquire(b).is_none());
        assert_eq!(per.held(b), 1);
        assert!(per.acquire(next).is_some());
        let creations = RoomCreations::new(1, 5);
        let _room = creations.admit(a).unwrap();
        assert_eq!(creations.admit(b).unwrap_err(), CreationRefused::TooFast);
        assert!(creations.admit(next).is_ok());
        let attempts = JoinAttempts::new(1);
        attempts.fail(a);
        assert_eq!(attempts.check(b), Err(Blocked));
        assert_eq!(attempts.check(next), Ok(()));
        // IPv4 keeps its whole address, written either way.
        let per = PerAddress::new(1);
        let _v4 = per.acquire(ip("192.0.2.1")).unwrap();
        assert!(per.acquire(ip("::ffff:192.0.2.1")).is_none());
        assert!(per.acquire(ip("192.0.2.2")).is_some());
    }
}
