//! The server's configuration: command-line flags, each with an environment variable.

use std::fmt;
use std::net::{IpAddr, SocketAddr};
use std::path::PathBuf;
use std::time::Duration;

use clap::Parser;

use crate::address::{ForwardedHeader, ForwardedHostHeader, Forwarding, TrustedProxies};
use crate::invite::{PublicUrl, parse_public_url};
use crate::room::Timing;
use crate::store::{RedisConfig, StoreConfig, SyncMode};

/// The default listen address: loopback only, so a laptop does not expose the game by accident.
pub const DEFAULT_ADDR: &str = "127.0.0.1:8080";
/// The default delay before each bot action, so people can follow the bots' play.
pub const DEFAULT_BOT_DELAY_MS: u64 = 800;
/// The default cap on rooms held at once.
pub const DEFAULT_MAX_ROOMS: usize = 1000;
/// The default cap on one WebSocket message from a client, in bytes.
pub const DEFAULT_MAX_MESSAGE_BYTES: usize = 16 * 1024;
/// The default grace period before a bot plays an away person's turn.
pub const DEFAULT_TAKEOVER_AFTER: Duration = Duration::from_secs(30);
/// The default time a room stays open with nobody connected.
pub const DEFAULT_IDLE_ROOM_TTL: Duration = Duration::from_secs(15 * 60);
/// The default length of each client's outbound queue, in messages.
pub const DEFAULT_CLIENT_QUEUE: usize = 256;
/// The default burst of messages a client may send at once before the rate limit applies.
pub const DEFAULT_MESSAGE_BURST: u32 = 20;
/// The default sustained rate of messages a client may send, per second.
pub const DEFAULT_MESSAGES_PER_SEC: u32 = 10;
/// The default number of messages over the rate limit after which a client is disconnected.
pub const DEFAULT_RATE_LIMIT_STRIKES: u32 = 20;
/// The default cap on WebSocket connections held at once.
pub const DEFAULT_MAX_CONNECTIONS: usize = 10_000;
/// The default interval between the server's pings on each WebSocket.
pub const DEFAULT_PING_INTERVAL: Duration = Duration::from_secs(20);
/// The default cap on lookups of unknown rooms per address per minute.
pub const DEFAULT_MAX_JOIN_ATTEMPTS: u32 = 20;
/// The default cap on connections (HTTP and WebSocket) one address holds at once.
pub const DEFAULT_MAX_CONNECTIONS_PER_ADDRESS: usize = 64;
/// The default number of rooms one address may create per minute.
pub const DEFAULT_ROOM_CREATIONS_PER_MINUTE: u32 = 10;
/// The default cap on open rooms created from one address.
pub const DEFAULT_MAX_ROOMS_PER_ADDRESS: usize = 20;
/// The default time a client has to send a request's headers, and the longest a kept-alive HTTP
/// connection waits idle for its next request.
pub const DEFAULT_HTTP_HEADER_TIMEOUT: Duration = Duration::from_secs(10);
/// The default time one HTTP request (its body included) may take.
pub const DEFAULT_HTTP_REQUEST_TIMEOUT: Duration = Duration::from_secs(30);
/// The default time a WebSocket has to say `hello`.
pub const DEFAULT_HELLO_TIMEOUT: Duration = Duration::from_secs(10);
/// The default cap on watchers (spectators) in one room at once.
pub const DEFAULT_MAX_WATCHERS: usize = 20;
/// The default folder of the room log: `./data`, beside wherever the server is started.
pub const DEFAULT_DATA_DIR: &str = "data";
/// The default lifetime of a room nobody ever sits in.
pub const DEFAULT_UNJOINED_ROOM_TTL: Duration = Duration::from_secs(5 * 60);
/// The default lifetime of a room whose match never starts.
pub const DEFAULT_LOBBY_TTL: Duration = Duration::from_secs(2 * 60 * 60);
/// `--keep-matches`: a week.
pub const DEFAULT_KEEP_MATCHES: Duration = Duration::from_secs(7 * 24 * 60 * 60);
/// `--lease`: how long a node's claim on a room holds without renewal (shared store only).
pub const DEFAULT_LEASE: Duration = Duration::from_secs(10);

/// How the server runs. Every flag can also be set through its environment variable.
#[derive(Clone, Debug, PartialEq, Eq, Parser)]
#[command(
    name = "dhumbal-server",
    version,
    about = "The Dhumbal (Jhyap) game server"
)]
pub struct Config {
    /// The address to listen on (`0.0.0.0:8080` in a container).
    #[arg(long, env = "DHUMBAL_ADDR", default_value = DEFAULT_ADDR)]
    pub addr: SocketAddr,
    /// Milliseconds a bot waits before each of its actions (0 plays instantly).
    #[arg(long, env = "DHUMBAL_BOT_DELAY_MS", default_value_t = DEFAULT_BOT_DELAY_MS)]
    pub bot_delay_ms: u64,
    /// How long a disconnected person's turn waits for them before a bot of the table's
    /// difficulty plays it for them (until they return): `30s`, `500ms`, `2m`, or seconds.
    #[arg(long, env = "DHUMBAL_TAKEOVER_AFTER", default_value = "30s", value_parser = parse_duration)]
    pub takeover_after: Duration,
    /// How long a room stays open with nobody connected before it is closed and its code
    /// forgotten.
    #[arg(long, env = "DHUMBAL_IDLE_ROOM_TTL", default_value = "15m", value_parser = parse_duration)]
    pub idle_room_ttl: Duration,
    /// The most rooms the server holds at once; creating another answers `too_many_rooms`.
    #[arg(long, env = "DHUMBAL_MAX_ROOMS", default_value_t = DEFAULT_MAX_ROOMS)]
    pub max_rooms: usize,
    /// The largest WebSocket message a client may send, in bytes; a larger one closes the
    /// socket with code 1009 (message too big).
    #[arg(long, env = "DHUMBAL_MAX_MESSAGE_BYTES", default_value_t = DEFAULT_MAX_MESSAGE_BYTES)]
    pub max_message_bytes: usize,
    /// How many messages may wait for a slow client; a client that falls further behind is
    /// disconnected so that its room never waits for it.
    #[arg(long, env = "DHUMBAL_CLIENT_QUEUE", default_value_t = DEFAULT_CLIENT_QUEUE)]
    pub client_queue: usize,
    /// Let `POST /api/rooms` fix the deck order (`decks`), for black-box tests. Never in
    /// production: a fixed deck is a known deck.
    #[arg(long, env = "DHUMBAL_ALLOW_TEST_DECKS")]
    pub allow_test_decks: bool,
    /// Makes one second of every table's turn timer last this many milliseconds, so that a
    /// test need not wait out a real turn. Hidden, and never for production: every timed turn
    /// runs out sooner than its table says.
    #[arg(long, env = "DHUMBAL_TEST_TURN_SECOND_MS", hide = true)]
    pub test_turn_second_ms: Option<u64>,
    /// How long the server keeps serving after a shutdown signal with `/readyz` answering 503,
    /// so that a load balancer stops sending people here first.
    #[arg(long, env = "DHUMBAL_DRAIN_DELAY", default_value = "0s", value_parser = parse_duration)]
    pub drain_delay: Duration,
    /// How many messages a client may send at once (a burst) before the rate limit applies.
    #[arg(long, env = "DHUMBAL_MESSAGE_BURST", default_value_t = DEFAULT_MESSAGE_BURST)]
    pub message_burst: u32,
    /// How many messages per second a client may send once its burst is spent; a message over
    /// the limit is refused with `rate_limited` and not handled.
    #[arg(long, env = "DHUMBAL_MESSAGES_PER_SEC", default_value_t = DEFAULT_MESSAGES_PER_SEC)]
    pub messages_per_sec: u32,
    /// How far over the rate limit a client may go (messages refused and not yet earned back)
    /// before it is told `bye` and closed with 1008 (policy violation).
    #[arg(long, env = "DHUMBAL_RATE_LIMIT_STRIKES", default_value_t = DEFAULT_RATE_LIMIT_STRIKES)]
    pub rate_limit_strikes: u32,
    /// The most WebSocket connections held at once; `GET /ws` beyond it answers 503
    /// `too_many_connections`.
    #[arg(long, env = "DHUMBAL_MAX_CONNECTIONS", default_value_t = DEFAULT_MAX_CONNECTIONS)]
    pub max_connections: usize,
    /// How often the server pings each WebSocket; a connection that sends nothing (not even a
    /// pong) for two and a half intervals is closed as dead and its seat kept for a reconnection. `0s`
    /// turns pings off.
    #[arg(long, env = "DHUMBAL_PING_INTERVAL", default_value = "20s", value_parser = parse_duration)]
    pub ping_interval: Duration,
    /// How many lookups of rooms that do not exist (`hello`, `GET /api/rooms/{code}`, a room's
    /// QR code) one address may make per minute; beyond it, its lookups answer `too_many_attempts` until the
    /// minute has passed, so room codes cannot be guessed by brute force.
    #[arg(long, env = "DHUMBAL_MAX_JOIN_ATTEMPTS", default_value_t = DEFAULT_MAX_JOIN_ATTEMPTS)]
    pub max_join_attempts: u32,
    /// Origins (such as `https://dhumbal.example`) whose pages may open the WebSocket besides
    /// the server's own, comma-separated. A browser upgrade from any other origin answers 403;
    /// clients that send no `Origin` (not browsers) are always allowed.
    #[arg(long, env = "DHUMBAL_ALLOWED_ORIGINS", value_delimiter = ',')]
    pub allowed_origins: Vec<String>,
    /// Serve `GET /ws-echo`, a WebSocket that echoes every message, with the same upgrade and
    /// limits as the game's: for WebSocket conformance suites; and `GET /ws-relay/{group}` and
    /// `GET /ws-room-relay/{group}` (through a task per group, as a room's), which send every
    /// message to each socket of its group: the load benchmark's bare baselines. Off in
    /// production.
    #[arg(long, env = "DHUMBAL_WS_ECHO")]
    pub ws_echo: bool,
    /// Compress each of the web client's files on its first request, not all of them at start.
    /// A start then spends nothing on files nobody asks for (a test harness's servers, which
    /// mostly never serve the page: the whole client at brotli's best quality is a second or
    /// two of CPU at every start), and the first request for each file waits for it.
    #[arg(long, env = "DHUMBAL_LAZY_WEB_COMPRESSION")]
    pub lazy_web_compression: bool,
    /// The most TCP connections (HTTP and WebSocket) held at once; beyond it a connection is
    /// answered 503 and closed. Unset: the process's file-descriptor limit less a reserve, so
    /// that the server never runs out of descriptors.
    #[arg(long, env = "DHUMBAL_MAX_TCP_CONNECTIONS")]
    pub max_tcp_connections: Option<usize>,
    /// The most connections (HTTP and WebSocket) one client address holds at once; beyond it
    /// another is answered 503 `too_many_connections`. Trusted proxies are not capped as peers;
    /// the clients behind them are, by their forwarded address.
    #[arg(long, env = "DHUMBAL_MAX_CONNECTIONS_PER_ADDRESS", default_value_t = DEFAULT_MAX_CONNECTIONS_PER_ADDRESS)]
    pub max_connections_per_address: usize,
    /// How many rooms one address may create per minute (and at once); beyond it
    /// `POST /api/rooms` answers 429 `rate_limited`.
    #[arg(long, env = "DHUMBAL_ROOM_CREATIONS_PER_MINUTE", default_value_t = DEFAULT_ROOM_CREATIONS_PER_MINUTE)]
    pub room_creations_per_minute: u32,
    /// How many rooms created from one address may be open at once; beyond it
    /// `POST /api/rooms` answers 429 `too_many_open_rooms`.
    #[arg(long, env = "DHUMBAL_MAX_ROOMS_PER_ADDRESS", default_value_t = DEFAULT_MAX_ROOMS_PER_ADDRESS)]
    pub max_rooms_per_address: usize,
    /// How long a client may take to send a request's headers, and how long a kept-alive HTTP
    /// connection may wait idle for its next request, before it is closed.
    #[arg(long, env = "DHUMBAL_HTTP_HEADER_TIMEOUT", default_value = "10s", value_parser = parse_duration)]
    pub http_header_timeout: Duration,
    /// How long one HTTP request, its body included, may take before it is answered 408.
    #[arg(long, env = "DHUMBAL_HTTP_REQUEST_TIMEOUT", default_value = "30s", value_parser = parse_duration)]
    pub http_request_timeout: Duration,
    /// How long a new WebSocket may take to say `hello` before it is told `bye`
    /// (`hello_timeout`) and closed with 4003. `0s` waits for ever.
    #[arg(long, env = "DHUMBAL_HELLO_TIMEOUT", default_value = "10s", value_parser = parse_duration)]
    pub hello_timeout: Duration,
    /// The most watchers (spectators) one room lets in at once; the next `hello` to watch is
    /// refused with `watchers_full`. `0` lets nobody watch.
    #[arg(long, env = "DHUMBAL_MAX_WATCHERS", default_value_t = DEFAULT_MAX_WATCHERS)]
    pub max_watchers: usize,
    /// How long a room whose match never starts stays open, however many are connected; then
    /// its clients are told `bye` (`room_expired`) and it closes.
    #[arg(long, env = "DHUMBAL_LOBBY_TTL", default_value = "2h", value_parser = parse_duration)]
    pub lobby_ttl: Duration,
    /// How long a room that nobody has ever taken a seat in stays open (while nobody is
    /// connected) before it closes and gives its place under `--max-rooms` back: rooms created
    /// and never used do not hold the server's places for the idle TTL.
    #[arg(long, env = "DHUMBAL_UNJOINED_ROOM_TTL", default_value = "5m", value_parser = parse_duration)]
    pub unjoined_room_ttl: Duration,
    /// How long a finished match's hand history is kept for its players to download and
    /// verify (`GET /api/rooms/{code}/matches/{n}/history`); then it is deleted.
    #[arg(long, env = "DHUMBAL_KEEP_MATCHES", default_value = "7d", value_parser = parse_duration)]
    pub keep_matches: Duration,
    /// Reverse proxies whose `Forwarded` / `X-Forwarded-For` headers name the client, as
    /// comma-separated networks (`10.0.0.0/8,::1`). Only from these peers are the headers
    /// believed; every per-address limit and the origin check then use the forwarded client
    /// and host.
    #[arg(long, env = "DHUMBAL_TRUSTED_PROXIES", default_value = "")]
    pub trusted_proxies: TrustedProxies,
    /// The one header the trusted proxies write the client's address in: `x-forwarded-for`
    /// (HAProxy's `option forwardfor`, nginx, Caddy) or `forwarded` (RFC 7239). Only it is read;
    /// the other is ignored, since a proxy passes a client's own copy of it through untouched.
    #[arg(
        long,
        env = "DHUMBAL_FORWARDED_HEADER",
        value_enum,
        default_value = "x-forwarded-for"
    )]
    pub forwarded_header: ForwardedHeader,
    /// The one header the trusted proxies write the host the browser asked for in, which the
    /// WebSocket's origin check reads: `x-forwarded-host`, `forwarded` (its `host=`), or `host`
    /// for a proxy that passes the browser's own `Host` on (HAProxy).
    #[arg(
        long,
        env = "DHUMBAL_FORWARDED_HOST_HEADER",
        value_enum,
        default_value = "x-forwarded-host"
    )]
    pub forwarded_host_header: ForwardedHostHeader,
    /// Serve `GET /metrics` on this address of its own (such as `127.0.0.1:9100`, reachable
    /// only by the operator's scraper) and not on the public `--addr`. Unset: `/metrics` is on
    /// `--addr`.
    #[arg(long, env = "DHUMBAL_METRICS_ADDRESS")]
    pub metrics_address: Option<SocketAddr>,
    /// Where rooms are kept so that they survive a restart: `sqlite` (a log in `--data-dir`),
    /// `memory` (nothing kept: every room ends with the process; for tests and benchmarks), or
    /// a Redis that every node of a cluster shares, as `redis://[user:password@]host[:port][/db]`
    /// (a room is then held by the node its people come to, which claims it from the log).
    #[arg(long, env = "DHUMBAL_STORE", default_value = "sqlite", value_parser = parse_store)]
    pub store: StoreKind,
    /// The folder of the SQLite room log (`dhumbal.db`); created if missing.
    #[arg(long, env = "DHUMBAL_DATA_DIR", default_value = DEFAULT_DATA_DIR)]
    pub data_dir: PathBuf,
    /// What a commit of the SQLite room log survives before anyone is told of it: `normal` (a
    /// killed process loses nothing anyone saw; a power cut or kernel crash may lose the last
    /// half second or so of moves) or `full` (the log is synced to the disk at every commit, so
    /// a power cut loses nothing anyone saw either, at a cost measured in docs/performance.md).
    #[arg(long, env = "DHUMBAL_SYNC", default_value = "normal", value_parser = SyncMode::parse)]
    pub sync: SyncMode,
    /// This node's id in a cluster (a shared store): recorded as the owner of the rooms it
    /// holds, and the `node` label of every metric. Unset: `<hostname>:<port>` (a random id if
    /// the hostname cannot be read) with a shared store, and no label otherwise.
    #[arg(long, env = "DHUMBAL_NODE_ID")]
    pub node_id: Option<String>,
    /// With a shared store, how long this node's claim on a room holds without being renewed;
    /// each room renews it every third of it, and stops (its clients told `room_moved`) when
    /// another node has claimed it since. An append that fails for want of Redis is tried again
    /// for this long.
    #[arg(long, env = "DHUMBAL_LEASE", default_value = "10s", value_parser = parse_lease)]
    pub lease: Duration,
    /// The address people open from outside, for a server behind a reverse proxy (such as
    /// `https://cards.example.org`: a scheme and a host, no path): the lobby's invite links and
    /// QR codes point there. Unset: see `--lan-address`.
    #[arg(long, env = "DHUMBAL_PUBLIC_URL", value_parser = parse_public_url)]
    pub public_url: Option<PublicUrl>,
    /// This machine's address on its network (such as `192.168.1.20`): a lobby opened on
    /// `localhost` or `127.0.0.1` shares invite links to `http://LAN-ADDRESS:PORT`, which friends
    /// on the same Wi-Fi can open. Unset: found by itself when `--addr` is `0.0.0.0` or `[::]`.
    #[arg(long, env = "DHUMBAL_LAN_ADDRESS")]
    pub lan_address: Option<IpAddr>,
}

/// Where rooms are kept (`--store`).
#[derive(Clone, PartialEq, Eq)]
pub enum StoreKind {
    /// A SQLite log in `--data-dir`: rooms survive restarts and crashes.
    Sqlite,
    /// Nothing kept.
    Memory,
    /// A Redis shared by a cluster, at this URL (`redis://…`).
    Redis(String),
}

impl fmt::Display for StoreKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            StoreKind::Sqlite => f.write_str("sqlite"),
            StoreKind::Memory => f.write_str("memory"),
            StoreKind::Redis(url) => f.write_str(&crate::store::redis::redacted(url)),
        }
    }
}

impl fmt::Debug for StoreKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            StoreKind::Sqlite => f.write_str("Sqlite"),
            StoreKind::Memory => f.write_str("Memory"),
            StoreKind::Redis(url) => f
                .debug_tuple("Redis")
                .field(&crate::store::redis::redacted(url))
                .finish(),
        }
    }
}

/// Reads `--store`: `sqlite`, `memory`, or a `redis://` URL.
pub fn parse_store(text: &str) -> Result<StoreKind, String> {
    let text = text.trim();
    match text.to_ascii_lowercase().as_str() {
        "sqlite" => return Ok(StoreKind::Sqlite),
        "memory" => return Ok(StoreKind::Memory),
        _ => {}
    }
    if text.starts_with("redis://") {
        ::redis::Client::open(text)
            .map_err(|e| format!("`{}`: {e}", crate::store::redis::redacted(text)))?;
        return Ok(StoreKind::Redis(text.to_owned()));
    }
    Err(format!(
        "`{}` is not a store: `sqlite`, `memory` or a `redis://host:port` URL",
        crate::store::redis::redacted(text)
    ))
}

/// Reads `--lease`: a duration of at least 30 ms (a room renews it every third of it).
pub fn parse_lease(text: &str) -> Result<Duration, String> {
    let lease = parse_duration(text)?;
    if lease < Duration::from_millis(30) {
        return Err(format!("a lease of `{text}` is too short: 30ms at least"));
    }
    Ok(lease)
}

impl Config {
    /// The delay before each bot action.
    pub fn bot_delay(&self) -> Duration {
        Duration::from_millis(self.bot_delay_ms)
    }

    /// Every room's timings.
    pub fn timing(&self) -> Timing {
        Timing {
            bot_delay: self.bot_delay(),
            takeover_after: self.takeover_after,
            idle_ttl: self.idle_room_ttl,
            lobby_ttl: self.lobby_ttl,
            unjoined_ttl: self.unjoined_room_ttl,
            max_watchers: self.max_watchers,
            turn_second: Duration::from_millis(self.test_turn_second_ms.unwrap_or(1000)),
        }
    }

    /// The store these flags choose.
    pub fn store_config(&self) -> StoreConfig {
        match &self.store {
            StoreKind::Sqlite => StoreConfig::Sqlite {
                data_dir: self.data_dir.clone(),
                sync: self.sync,
            },
            StoreKind::Memory => StoreConfig::Memory,
            StoreKind::Redis(url) => StoreConfig::Redis(RedisConfig {
                url: url.clone(),
                node: self.node(),
                lease: self.lease,
                room_ttl: self.idle_room_ttl.max(self.lease * 3),
                keep_matches: self.keep_matches,
            }),
        }
    }

    /// This node's id: `--node-id`, else `<hostname>:<port of --addr>`, else a random id.
    pub fn node(&self) -> String {
        if let Some(node) = self
            .node_id
            .as_deref()
            .map(str::trim)
            .filter(|n| !n.is_empty())
        {
            return node.to_owned();
        }
        match hostname() {
            Some(host) => format!("{host}:{}", self.addr.port()),
            None => uuid::Uuid::new_v4().to_string(),
        }
    }

    /// How the client's address and requested host are read behind `--trusted-proxies`.
    pub fn forwarding(&self) -> Forwarding<'_> {
        Forwarding {
            trusted: &self.trusted_proxies,
            header: self.forwarded_header,
            host_header: self.forwarded_host_header,
        }
    }

    /// The `node` label of the metrics: set with `--node-id` or a shared store.
    pub fn metrics_node(&self) -> Option<String> {
        (self.node_id.is_some() || matches!(self.store, StoreKind::Redis(_))).then(|| self.node())
    }
}

/// This machine's hostname, as the kernel has it (in a container, the container's).
fn hostname() -> Option<String> {
    ["/proc/sys/kernel/hostname", "/etc/hostname"]
        .iter()
        .find_map(|path| std::fs::read_to_string(path).ok())
        .or_else(|| std::env::var("HOSTNAME").ok())
        .map(|name| name.trim().to_owned())
        .filter(|name| !name.is_empty())
}

impl Default for Config {
    /// The defaults of every flag, without reading the command line or the environment.
    fn default() -> Config {
        Config {
            addr: DEFAULT_ADDR.parse().expect("the default address parses"),
            bot_delay_ms: DEFAULT_BOT_DELAY_MS,
            takeover_after: DEFAULT_TAKEOVER_AFTER,
            idle_room_ttl: DEFAULT_IDLE_ROOM_TTL,
            max_rooms: DEFAULT_MAX_ROOMS,
            max_message_bytes: DEFAULT_MAX_MESSAGE_BYTES,
            client_queue: DEFAULT_CLIENT_QUEUE,
            allow_test_decks: false,
            test_turn_second_ms: None,
            drain_delay: Duration::ZERO,
            message_burst: DEFAULT_MESSAGE_BURST,
            messages_per_sec: DEFAULT_MESSAGES_PER_SEC,
            rate_limit_strikes: DEFAULT_RATE_LIMIT_STRIKES,
            max_connections: DEFAULT_MAX_CONNECTIONS,
            ping_interval: DEFAULT_PING_INTERVAL,
            max_join_attempts: DEFAULT_MAX_JOIN_ATTEMPTS,
            allowed_origins: Vec::new(),
            ws_echo: false,
            lazy_web_compression: false,
            max_tcp_connections: None,
            max_connections_per_address: DEFAULT_MAX_CONNECTIONS_PER_ADDRESS,
            room_creations_per_minute: DEFAULT_ROOM_CREATIONS_PER_MINUTE,
            max_rooms_per_address: DEFAULT_MAX_ROOMS_PER_ADDRESS,
            http_header_timeout: DEFAULT_HTTP_HEADER_TIMEOUT,
            http_request_timeout: DEFAULT_HTTP_REQUEST_TIMEOUT,
            hello_timeout: DEFAULT_HELLO_TIMEOUT,
            max_watchers: DEFAULT_MAX_WATCHERS,
            lobby_ttl: DEFAULT_LOBBY_TTL,
            unjoined_room_ttl: DEFAULT_UNJOINED_ROOM_TTL,
            keep_matches: DEFAULT_KEEP_MATCHES,
            trusted_proxies: TrustedProxies::default(),
            forwarded_header: ForwardedHeader::default(),
            forwarded_host_header: ForwardedHostHeader::default(),
            metrics_address: None,
            store: StoreKind::Sqlite,
            data_dir: PathBuf::from(DEFAULT_DATA_DIR),
            sync: SyncMode::Normal,
            node_id: None,
            lease: DEFAULT_LEASE,
            public_url: None,
            lan_address: None,
        }
    }
}

/// Reads a duration as `humantime` does (`30s`, `500ms`, `2m`, `1h`, `7d`, `1h 30m`), or a bare
/// number of seconds.
pub fn parse_duration(text: &str) -> Result<Duration, String> {
    let text = text.trim();
    if !text.is_empty() && text.bytes().all(|b| b.is_ascii_digit()) {
        return text
            .parse()
            .map(Duration::from_secs)
            .map_err(|e| format!("`{text}`: {e}"));
    }
    humantime::parse_duration(text)
        .map_err(|_| format!("`{text}` is not a duration such as 30s, 500ms, 2m, 1h or 7d"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_defaults_match_the_flags_defaults() {
        let parsed = Config::try_parse_from(["dhumbal-server"]).unwrap();
        // The environment may set some flags; compare what it does not.
        if std::env::vars().all(|(k, _)| !k.starts_with("DHUMBAL_")) {
            assert_eq!(parsed, Config::default());
        }
        assert_eq!(Config::default().addr.to_string(), "127.0.0.1:8080");
    }

    #[test]
    fn flags_set_the_config() {
        let config = Config::try_parse_from([
            "dhumbal-server",
            "--addr",
            "0.0.0.0:9000",
            "--bot-delay-ms",
            "0",
            "--allow-test-decks",
            "--allowed-origins",
            "https://a.example,https://b.example",
            "--ping-interval",
            "5s",
            "--lazy-web-compression",
        ])
        .unwrap();
        assert_eq!(
            config.allowed_origins,
            ["https://a.example", "https://b.example"]
        );
        assert_eq!(config.ping_interval, Duration::from_secs(5));
        assert_eq!(config.addr.to_string(), "0.0.0.0:9000");
        assert_eq!(config.bot_delay(), Duration::ZERO);
        assert!(config.allow_test_decks);
        assert!(config.lazy_web_compression);
        assert!(!Config::default().lazy_web_compression);
    }

    #[test]
    fn the_test_turn_second_scales_turn_timers_and_is_not_in_the_help() {
        let config =
            Config::try_parse_from(["dhumbal-server", "--test-turn-second-ms", "50"]).unwrap();
        assert_eq!(config.timing().turn_time(15), Duration::from_millis(750));
        assert_eq!(
            Config::default().timing().turn_time(15),
            Duration::from_secs(15)
        );
        let help = <Config as clap::CommandFactory>::command()
            .render_long_help()
            .to_string();
        assert!(help.contains("--allow-test-decks"), "{help}");
        assert!(!help.contains("turn-second"), "{help}");
    }

    #[test]
    fn the_store_flag_takes_a_redis_url() {
        let config = Config::try_parse_from([
            "dhumbal-server",
            "--store",
            "redis://:secret@redis:6379/1",
            "--node-id",
            "node-a",
            "--lease",
            "3s",
            "--idle-room-ttl",
            "5s",
        ])
        .unwrap();
        assert_eq!(
            config.store,
            StoreKind::Redis("redis://:secret@redis:6379/1".into())
        );
        assert_eq!(config.store.to_string(), "redis://:***@redis:6379/1");
        assert!(!format!("{config:?}").contains("secret"));
        let StoreConfig::Redis(redis) = config.store_config() else {
            panic!("not the Redis store");
        };
        assert_eq!(redis.node, "node-a");
        assert_eq!(redis.lease, Duration::from_secs(3));
        // A room's keys outlive three leases at least.
        assert_eq!(redis.room_ttl, Duration::from_secs(9));
        assert_eq!(config.metrics_node().as_deref(), Some("node-a"));
        for store in ["memory", "sqlite", "SQLite"] {
            let config = Config::try_parse_from(["dhumbal-server", "--store", store]).unwrap();
            assert_ne!(config.store_config(), StoreConfig::Redis(redis.clone()));
        }
        assert!(Config::try_parse_from(["dhumbal-server", "--store", "postgres://db"]).is_err());
        assert!(Config::try_parse_from(["dhumbal-server", "--lease", "10ms"]).is_err());
        let plain = Config::default();
        assert_eq!(plain.metrics_node(), None);
        assert!(plain.node().ends_with(":8080"), "{}", plain.node());
    }

    #[test]
    fn the_edge_flags_name_one_header_and_a_metrics_address() {
        let config = Config::try_parse_from([
            "dhumbal-server",
            "--forwarded-header",
            "forwarded",
            "--forwarded-host-header",
            "host",
            "--metrics-address",
            "127.0.0.1:9100",
            "--unjoined-room-ttl",
            "90s",
        ])
        .unwrap();
        assert_eq!(config.forwarded_header, ForwardedHeader::Forwarded);
        assert_eq!(config.forwarded_host_header, ForwardedHostHeader::Host);
        assert_eq!(
            config.metrics_address,
            Some("127.0.0.1:9100".parse().unwrap())
        );
        assert_eq!(config.timing().unjoined_ttl, Duration::from_secs(90));
        let defaults = Config::default();
        assert_eq!(defaults.forwarded_header, ForwardedHeader::XForwardedFor);
        assert_eq!(
            defaults.forwarded_host_header,
            ForwardedHostHeader::XForwardedHost
        );
        assert_eq!(defaults.metrics_address, None);
        for bad in ["x-real-ip", "both", ""] {
            assert!(
                Config::try_parse_from(["dhumbal-server", "--forwarded-header", bad]).is_err(),
                "{bad}"
            );
        }
    }

    #[test]
    fn durations_read_with_their_units() {
        assert_eq!(parse_duration("30s"), Ok(Duration::from_secs(30)));
        assert_eq!(parse_duration("45"), Ok(Duration::from_secs(45)));
        assert_eq!(parse_duration("500ms"), Ok(Duration::from_millis(500)));
        assert_eq!(parse_duration("2m"), Ok(Duration::from_secs(120)));
        assert!(parse_duration("soon").is_err());
        assert_eq!(parse_duration("2h"), Ok(Duration::from_secs(7200)));
        assert_eq!(parse_duration("7d"), Ok(Duration::from_secs(7 * 86_400)));
        assert_eq!(parse_duration("1h 30m"), Ok(Duration::from_secs(5400)));
        assert!(parse_duration("5 fortnights").is_err());
        assert!(parse_duration("").is_err());
        assert_eq!(Config::default().takeover_after, Duration::from_secs(30));
    }
}
