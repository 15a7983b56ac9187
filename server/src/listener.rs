//! The TCP listener: accepts connections, caps them, and serves each over HTTP/1.1 with
//! timeouts, until shutdown.
//!
//! - **Caps.** Every accepted connection takes a permit of a semaphore sized under the process's
//!   file-descriptor limit (`--max-tcp-connections`), and a place in its peer address's count
//!   (`--max-connections-per-address`; trusted proxies are not counted as peers). A connection
//!   over either cap is answered `503` with `too_many_connections` and closed, so that the
//!   descriptors the server needs for `/healthz` and for people already playing are never used
//!   up. A WebSocket keeps its permit for as long as it is open ([`TcpSlot`]).
//! - **Timeouts.** hyper's header-read timer runs from the moment a connection waits for a
//!   request's head: a connection that sends nothing, trickles its headers, or sits idle after a
//!   response is closed after `--http-header-timeout`. A whole request (its body included) has
//!   `--http-request-timeout` ([`crate::app`]'s timeout layer answers 408).
//! - **Shutdown.** When shutdown begins the listener stops accepting, and every HTTP connection
//!   is asked to finish gracefully: an idle one closes at once, and one in the middle of a
//!   request has [`HTTP_SHUTDOWN_GRACE`] to finish before it is dropped, so one half-sent request
//!   cannot hold the process up.

use std::net::SocketAddr;
use std::sync::{Arc, Mutex, PoisonError};
use std::time::Duration;

use axum::Router;
use axum::extract::ConnectInfo;
use hyper::body::Incoming;
use hyper::server::conn::http1;
use hyper_util::rt::{TokioIo, TokioTimer};
use tokio::io::AsyncWriteExt;
use tokio::net::{TcpListener, TcpStream};
use tokio::sync::{OwnedSemaphorePermit, Semaphore};
use tower::ServiceExt;
use tracing::{debug, warn};

use crate::AppState;
use crate::conn::{RawSocket, TcpIo};
use crate::error::Refusal;
use crate::limits::AddressSlot;

/// How long an HTTP request in progress when shutdown begins may take to finish.
pub const HTTP_SHUTDOWN_GRACE: Duration = Duration::from_secs(2);

/// The file descriptors kept back from the TCP cap: for the listener, logs, the store, and the
/// refusals of connections over the cap.
pub const DESCRIPTOR_RESERVE: u64 = 128;

/// How many refusals (a `503` written to a connection over a cap) may be under way at once;
/// beyond it an over-cap connection is closed without an answer.
const MAX_REFUSALS: usize = 64;

/// How long writing a refusal may take.
const REFUSAL_TIMEOUT: Duration = Duration::from_secs(1);

/// How long the accept loop pauses when accepting fails (no descriptors left, say), so that it
/// does not spin.
const ACCEPT_BACKOFF: Duration = Duration::from_millis(50);

/// The most TCP connections the server holds: `--max-tcp-connections`, and never more than the
/// process's descriptor limit less [`DESCRIPTOR_RESERVE`].
pub fn tcp_cap(configured: Option<usize>) -> usize {
    let limit = rlimit::getrlimit(rlimit::Resource::NOFILE)
        .map(|(soft, _)| soft)
        .unwrap_or(1024);
    let by_descriptors =
        usize::try_from(limit.saturating_sub(DESCRIPTOR_RESERVE).max(16)).unwrap_or(usize::MAX);
    configured.map_or(by_descriptors, |n| n.min(by_descriptors))
}

/// A TCP connection's places under the caps, held until the connection closes, and its stream.
/// A WebSocket upgrade takes the places out of the request ([`TcpSlot::take`]) and keeps them
/// for the socket's life, and writes its frames to the stream ([`TcpSlot::socket`]).
#[derive(Clone, Debug)]
pub struct TcpSlot {
    /// The places, until taken.
    held: Arc<Mutex<Option<Held>>>,
    /// The connection's stream.
    socket: RawSocket,
}

/// The permits one connection holds.
#[derive(Debug)]
pub struct Held {
    /// Its place under `--max-tcp-connections`.
    _permit: OwnedSemaphorePermit,
    /// Its place in its peer's count (none for a trusted proxy).
    _address: Option<AddressSlot>,
}

impl TcpSlot {
    /// Takes the connection's permits, for a task that outlives the HTTP connection.
    pub fn take(&self) -> Option<Held> {
        self.held
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .take()
    }

    /// The connection's stream, for a WebSocket to write its frames to straight.
    pub fn socket(&self) -> RawSocket {
        self.socket.clone()
    }
}

/// Accepts connections on `listener` and serves `router` on each until `app`'s shutdown
/// begins; returns once it has stopped accepting (the connections' tasks are tracked by the
/// shutdown, which [`crate::run`] waits for).
pub async fn serve(listener: TcpListener, router: Router, app: Arc<AppState>) {
    let permits = Arc::new(Semaphore::new(app.tcp_cap));
    let refusals = Arc::new(Semaphore::new(MAX_REFUSALS));
    let mut http = http1::Builder::new();
    http.timer(TokioTimer::new())
        .header_read_timeout(app.config.http_header_timeout)
        .keep_alive(true);
    let stop = app.shutdown.token();
    loop {
        let accepted = tokio::select! {
            biased;
            () = stop.cancelled() => break,
            accepted = listener.accept() => accepted,
        };
        let (stream, peer) = match accepted {
            Ok(accepted) => accepted,
            Err(e) => {
                warn!(error = %e, "accepting a connection failed");
                tokio::time::sleep(ACCEPT_BACKOFF).await;
                continue;
            }
        };
        // Without TCP_NODELAY a state sent right after its events waits for the client's
        // delayed ACK (~40 ms on Linux).
        if let Err(e) = stream.set_nodelay(true) {
            debug!(error = %e, "no TCP_NODELAY");
        }
        let Some(held) = admit(&app, &permits, peer) else {
            app.metrics.rejected(Refusal::TooManyConnections("").code());
            if let Ok(permit) = Arc::clone(&refusals).try_acquire_owned() {
                tokio::spawn(async move {
                    refuse(stream).await;
                    drop(permit);
                });
            }
            continue;
        };
        let task = connection(
            stream,
            peer,
            held,
            router.clone(),
            http.clone(),
            app.clone(),
        );
        app.shutdown.spawn(task);
    }
}

/// The permits for a connection from `peer`, or `None` when a cap is reached.
fn admit(app: &AppState, permits: &Arc<Semaphore>, peer: SocketAddr) -> Option<Held> {
    let address = if app.config.trusted_proxies.contains(peer.ip()) {
        None
    } else {
        let Some(slot) = app.tcp_per_address.acquire(peer.ip()) else {
            debug!(%peer, "connection refused: its address holds as many as it may");
            return None;
        };
        Some(slot)
    };
    let Ok(permit) = Arc::clone(permits).try_acquire_owned() else {
        warn!(
            max = app.tcp_cap,
            "connection refused: the server holds as many as it may"
        );
        return None;
    };
    Some(Held {
        _permit: permit,
        _address: address,
    })
}

/// Answers a connection over a cap with `503 too_many_connections` and closes it.
async fn refuse(mut stream: TcpStream) {
    let refusal = Refusal::TooManyConnections("the server or your address");
    let body = serde_json::to_string(&dhumbal_protocol::ApiError {
        code: refusal.code().into(),
        message: refusal.to_string(),
    })
    .unwrap_or_default();
    let answer = format!(
        "HTTP/1.1 503 Service Unavailable\r\ncontent-type: application/json\r\n\
         content-length: {}\r\nconnection: close\r\nretry-after: 5\r\n\r\n{body}",
        body.len()
    );
    let _ = tokio::time::timeout(REFUSAL_TIMEOUT, async {
        stream.write_all(answer.as_bytes()).await?;
        stream.shutdown().await
    })
    .await;
}

/// Serves one connection until it closes, or until shutdown and then at most
/// [`HTTP_SHUTDOWN_GRACE`].
async fn connection(
    stream: TcpStream,
    peer: SocketAddr,
    held: Held,
    router: Router,
    http: http1::Builder,
    app: Arc<AppState>,
) {
    let stream = TcpIo::new(stream);
    let slot = TcpSlot {
        held: Arc::new(Mutex::new(Some(held))),
        socket: stream.socket(),
    };
    let service = hyper::service::service_fn(move |mut request: hyper::Request<Incoming>| {
        request.extensions_mut().insert(ConnectInfo(peer));
        request.extensions_mut().insert(slot.clone());
        router.clone().oneshot(request)
    });
    let conn = http
        .serve_connection(TokioIo::new(stream), service)
        .with_upgrades();
    tokio::pin!(conn);
    let stop = app.shutdown.token();
    tokio::select! {
        served = conn.as_mut() => {
            if let Err(e) = served {
                debug!(%peer, error = %e, "HTTP connection ended");
            }
        }
        () = stop.cancelled() => {
            conn.as_mut().graceful_shutdown();
            if tokio::time::timeout(HTTP_SHUTDOWN_GRACE, conn).await.is_err() {
                debug!(%peer, "dropping an HTTP connection that did not finish in time");
            }
        }
    }
}
