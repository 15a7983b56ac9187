//! The Dhumbal game server: private rooms over WebSocket, one actor task per room, bots in empty
//! seats, and each seat told only what it may see.
//!
//! [`run`] serves the HTTP API and the WebSocket on a listener the caller has bound (tests bind
//! `127.0.0.1:0`) until a shutdown future completes. The binary ([`cli`], run by `src/main.rs`)
//! adds the command line ([`Config`]), logging and signals.
//!
//! # Layout
//!
//! - [`cli`] — the binary's `main`: flags, logging, signals, the `healthcheck` subcommand.
//! - [`config`] — [`Config`]: flags and environment variables.
//! - [`listener`] — accepting TCP connections under caps, and serving HTTP/1.1 on each with
//!   header, idle and request timeouts and a shutdown deadline.
//! - [`address`] — the client's address and requested host, read through `--trusted-proxies`.
//! - [`api`] — the routes: `POST /api/rooms`, `GET /api/rooms/{code}`, `GET /api/presets`,
//!   `POST /api/settings/check`, `GET /ws` and `GET /ws/{code}`, `GET /healthz`.
//! - [`health`] — `GET /readyz` and the `healthcheck` client.
//! - [`invite`] — where invite links point (`--public-url`, the host's address on its network,
//!   or the page's origin): `GET /api/invite-base`, and a room's QR code at `GET /r/{code}/qr.svg`.
//! - [`logging`] — text or JSON log lines.
//! - [`error`] — [`Refusal`](error::Refusal): every refusal, with its protocol code, sentence and
//!   HTTP status, used by the room, the connection and the API; internal failures are logged,
//!   never shown.
//! - [`metrics`] — `GET /metrics`: the server's own Prometheus metrics (on `--metrics-address`
//!   instead, when it is set).
//! - [`echo`] — `GET /ws-echo`, a diagnostic echo for WebSocket conformance, and the load
//!   benchmark's two relays, `GET /ws-relay/{group}` and `GET /ws-room-relay/{group}` (`--ws-echo`
//!   only).
//! - [`conn`] — one WebSocket connection: a writer (the queue onto the socket, pings), a reader
//!   (size, rate and shape checks, `bye` as each ending requires) and the `hello` step, generic
//!   over a sink and a stream so that its tests need no socket.
//! - [`limits`] — the message rate, connection caps (server-wide and per address), room creation
//!   per address, and failed room lookups per address.
//! - [`origin`] — the `Origin` check of the WebSocket upgrade.
//! - [`shutdown`] — graceful shutdown: the signal every connection and room hears, and the
//!   tracker [`run`] waits on.
//! - [`registry`] — room codes to room handles.
//! - [`store`] — the room log (setup, numbered inputs, snapshots), in SQLite, in a Redis that
//!   several nodes share, or in memory.
//! - [`room`] — a room: its synchronous core (seats, host, lobby, the
//!   [`Game`](dhumbal_engine::Game), bots, rounds and rematches; permission and rule checks;
//!   per-seat views), the records of its log, the actor that does its IO, and the pool where
//!   expert bots think off the room's task.
//! - [`names`] — people's names: normalised, visible, not posing as a bot.
//! - [`code`] — unguessable room codes.
//! - [`web`] — the web client, embedded, at `/`, `/r/{code}`, `/replay`, `/offline`, `/sw.js` and
//!   `/assets/{version}/`, cached for good under versioned names.

pub mod address;
pub mod api;
pub mod cli;
pub mod code;
pub mod config;
pub mod conn;
pub mod echo;
pub mod error;
pub mod health;
pub mod invite;
pub mod limits;
pub mod listener;
pub mod logging;
pub mod metrics;
pub mod names;
pub mod origin;
pub mod registry;
pub mod room;
pub mod shutdown;
pub mod store;
pub mod web;

/// Section `heading` (its `## heading` line) of `docs/operations.md`, up to the next section:
/// for the tests that hold the operator's tables (flags, metrics) to the code.
#[cfg(test)]
pub(crate) fn operations_doc_section(heading: &str) -> String {
    let path = concat!(env!("CARGO_MANIFEST_DIR"), "/../docs/operations.md");
    let doc = std::fs::read_to_string(path).expect("docs/operations.md");
    doc.split(&format!("\n## {heading}\n"))
        .nth(1)
        .and_then(|rest| rest.split("\n## ").next())
        .unwrap_or_else(|| panic!("docs/operations.md has a {heading} section"))
        .to_owned()
}

use std::future::Future;
use std::sync::Arc;
use std::sync::atomic::AtomicU64;

use axum::Router;
use tokio::net::TcpListener;

pub use config::Config;
use registry::Registry;

/// What every request handler shares.
#[derive(Debug)]
pub struct AppState {
    /// The configuration the server was started with.
    pub config: Config,
    /// Every open room.
    pub rooms: Registry,
    /// The next connection's number.
    pub next_conn: AtomicU64,
    /// Whether the server wants new players (`GET /readyz`).
    pub readiness: health::Readiness,
    /// This server's metrics (`GET /metrics`).
    pub metrics: Arc<metrics::Metrics>,
    /// The most TCP connections held at once ([`listener::tcp_cap`]).
    pub tcp_cap: usize,
    /// The TCP connections each peer address holds, against `--max-connections-per-address`.
    pub tcp_per_address: limits::PerAddress,
    /// The WebSocket connections held, against `--max-connections`.
    pub connections: limits::Connections,
    /// The WebSocket connections each client address holds (behind a trusted proxy, by the
    /// forwarded address), against `--max-connections-per-address`.
    pub ws_per_address: limits::PerAddress,
    /// Rooms created per client address, against `--room-creations-per-minute` and
    /// `--max-rooms-per-address`.
    pub room_creations: limits::RoomCreations,
    /// Failed room lookups per address, against `--max-join-attempts`.
    pub join_attempts: limits::JoinAttempts,
    /// The shutdown signal, and the connections' and rooms' tasks that [`run`] waits for.
    pub shutdown: shutdown::Shutdown,
}

impl AppState {
    /// Fresh state for a server with this configuration, keeping its rooms in `store`.
    pub fn new(config: Config, store: store::Store, metrics: Arc<metrics::Metrics>) -> AppState {
        let shutdown = shutdown::Shutdown::new();
        AppState {
            rooms: Registry::new(
                config.max_rooms,
                shutdown.clone(),
                store,
                config.timing(),
                Arc::clone(&metrics),
            ),
            tcp_cap: listener::tcp_cap(config.max_tcp_connections),
            tcp_per_address: limits::PerAddress::new(config.max_connections_per_address),
            connections: limits::Connections::new(config.max_connections),
            ws_per_address: limits::PerAddress::new(config.max_connections_per_address),
            room_creations: limits::RoomCreations::new(
                config.room_creations_per_minute,
                config.max_rooms_per_address,
            ),
            join_attempts: limits::JoinAttempts::new(config.max_join_attempts),
            shutdown,
            config,
            next_conn: AtomicU64::new(1),
            readiness: health::Readiness::default(),
            metrics,
        }
    }
}

/// How often hand histories past `--keep-matches` are deleted.
const MATCH_UPKEEP_INTERVAL: std::time::Duration = std::time::Duration::from_secs(60 * 60);

/// The whole application: every route, with its state.
pub fn app(state: Arc<AppState>) -> Router {
    let mut router = api::routes()
        .merge(web::routes())
        .merge(invite::routes())
        .merge(health::routes());
    // With `--metrics-address`, `/metrics` is served there ([`run`]) and not here.
    if state.config.metrics_address.is_none() {
        router = router.merge(metrics::routes());
    }
    if state.config.ws_echo {
        router = router.merge(echo::routes());
    }
    let timeout = tower_http::timeout::TimeoutLayer::with_status_code(
        axum::http::StatusCode::REQUEST_TIMEOUT,
        state.config.http_request_timeout,
    );
    // The API's JSON and `/metrics` go gzip- or br-encoded to a client that accepts it (the web
    // client's files come encoded already, [`web`]); an answer with no body (a WebSocket
    // upgrade, a `304`) or an image goes as it is.
    let compression = tower_http::compression::CompressionLayer::new();
    router.layer(timeout).layer(compression).with_state(state)
}

/// Serves `GET /metrics` alone on `addr` (`--metrics-address`) until shutdown begins. Fails
/// when the address cannot be bound, so that the server does not start without its metrics.
async fn serve_metrics(addr: std::net::SocketAddr, state: &Arc<AppState>) -> std::io::Result<()> {
    let listener = TcpListener::bind(addr)
        .await
        .map_err(|e| std::io::Error::new(e.kind(), format!("the metrics address {addr}: {e}")))?;
    tracing::info!(addr = %listener.local_addr()?, "metrics listening");
    let router = metrics::routes().with_state(Arc::clone(state));
    let stop = state.shutdown.token();
    state.shutdown.spawn(async move {
        let served = axum::serve(listener, router)
            .with_graceful_shutdown(async move { stop.cancelled().await })
            .await;
        if let Err(e) = served {
            tracing::warn!(error = %e, "the metrics address stopped serving");
        }
    });
    Ok(())
}

/// Logs the address friends should open: `--public-url`, or the host's address on its network.
fn announce_invites(config: &Config) {
    if let Some(public) = &config.public_url {
        tracing::info!(url = %public, "invite links point to");
    } else if let Some(lan) = config.lan_address {
        let url = format!(
            "http://{}",
            std::net::SocketAddr::new(lan, config.addr.port())
        );
        tracing::info!(url = %url, "friends on the same Wi-Fi open");
    } else if config.addr.ip().is_loopback() {
        tracing::info!(
            port = config.addr.port(),
            "only this machine can open the game: to let friends on the same Wi-Fi in, start with --addr 0.0.0.0:PORT"
        );
    } else if config.addr.ip().is_unspecified() {
        tracing::info!(
            "a page opened on localhost shares links to localhost: set --public-url to the address friends open (in a container, the host's: http://192.168.1.20:8080)"
        );
    }
}

/// Serves the application on `listener` until `shutdown` completes, then shuts down gracefully:
/// readiness turns false, the server keeps serving for `--drain-delay`, then it stops accepting,
/// every WebSocket client is told `bye` and closed with 1001, every HTTP connection finishes its
/// request (at most [`listener::HTTP_SHUTDOWN_GRACE`]), every room stops, and `run` returns once
/// they have. If some are still running [`shutdown::SHUTDOWN_GRACE`] after the shutdown began, `run`
/// gives up on them and answers a `TimedOut` error.
pub async fn run(
    listener: TcpListener,
    mut config: Config,
    shutdown: impl Future<Output = ()> + Send + 'static,
) -> std::io::Result<()> {
    // The address it really listens on (a test binds port 0): the default node id names it.
    config.addr = listener.local_addr()?;
    // Where a lobby opened on this machine's loopback sends friends ([`invite`]).
    config.lan_address =
        invite::lan_address(config.addr.ip(), config.lan_address, invite::discover);
    announce_invites(&config);
    let metrics = Arc::new(metrics::Metrics::for_node(config.metrics_node().as_deref()));
    let store = store::Store::open(&config.store_config(), Arc::clone(&metrics))
        .map_err(|e| std::io::Error::other(format!("the room store: {e}")))?;
    // Every room in the store is back before the server says it is ready, loaded and replayed
    // one room at a time.
    let state = Arc::new(AppState::new(config, store.clone(), Arc::clone(&metrics)));
    state
        .rooms
        .load_and_restore()
        .await
        .map_err(|e| std::io::Error::other(format!("loading the rooms: {e}")))?;
    let draining = Arc::clone(&state);
    let shutdown = async move {
        shutdown.await;
        // Not ready from now on; keep serving for the drain delay so that load balancers see it.
        draining.readiness.set(false);
        tokio::time::sleep(draining.config.drain_delay).await;
        draining.shutdown.begin();
    };
    // The web client's files compressed before anyone asks for them, off the runtime.
    if !state.config.lazy_web_compression {
        std::thread::spawn(web::precompress);
    }
    let router = app(Arc::clone(&state));
    if let Some(addr) = state.config.metrics_address {
        serve_metrics(addr, &state).await?;
    }
    // The histogram's recorded values wait in memory until they are drained: drain them on a
    // timer, so that a server nobody scrapes does not grow with every action.
    // Hand histories past `--keep-matches` are deleted at start and every hour.
    let upkeep = Arc::clone(&state);
    state.shutdown.spawn(async move {
        let stop = upkeep.shutdown.token();
        let mut ticks = tokio::time::interval(metrics::UPKEEP_INTERVAL);
        let mut hours = tokio::time::interval(MATCH_UPKEEP_INTERVAL);
        loop {
            tokio::select! {
                () = stop.cancelled() => break,
                _ = ticks.tick() => upkeep.metrics.upkeep(),
                _ = hours.tick() => {
                    let keep = upkeep.config.keep_matches;
                    if let Err(e) = upkeep.rooms.store().forget_matches(keep).await {
                        tracing::warn!(error = %e, "could not delete old hand histories");
                    }
                }
            }
        }
    });
    state.readiness.set(true);
    let signal = tokio::spawn(shutdown);
    listener::serve(listener, router, Arc::clone(&state)).await;
    signal.abort();
    // Every HTTP connection, WebSocket and room is a tracked task.
    let finished = state.shutdown.wait(shutdown::SHUTDOWN_GRACE).await;
    // Whatever the rooms appended is committed before the process ends.
    store.close().await;
    if finished {
        Ok(())
    } else {
        Err(std::io::Error::new(
            std::io::ErrorKind::TimedOut,
            format!(
                "{} connections or rooms were still running {:?} after the shutdown began",
                state.shutdown.running(),
                shutdown::SHUTDOWN_GRACE
            ),
        ))
    }
}
