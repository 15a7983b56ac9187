//! Health and readiness: `GET /readyz`, and the `healthcheck` client the container runs.
//!
//! `GET /healthz` (in [`crate::api`]) answers `ok` whenever the process serves HTTP at all.
//! `GET /readyz` answers `200 ready` only while the server wants new players: `503` before
//! [`crate::run`] has started serving and from the moment shutdown begins (during
//! `--drain-delay` the server still serves, so load balancers see it leave before it stops), and
//! while the room log cannot be written (a full disk: [`crate::store::Store::is_writable`]).
//!
//! [`check`] is what `dhumbal-server healthcheck` does: one plain HTTP/1.1 `GET` of the health
//! endpoint, with no HTTP client library, since the container image has nothing but the binary.

use std::io::{Read, Write};
use std::net::{IpAddr, Ipv4Addr, Ipv6Addr, SocketAddr, TcpStream};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

use axum::Router;
use axum::extract::State;
use axum::http::StatusCode;
use axum::routing::get;

use crate::AppState;

/// Whether the server wants new players now.
#[derive(Debug, Default)]
pub struct Readiness {
    /// True from when the server starts serving until shutdown begins.
    ready: AtomicBool,
}

impl Readiness {
    /// Marks the server ready (serving) or not (starting, or draining for shutdown).
    pub fn set(&self, ready: bool) {
        self.ready.store(ready, Ordering::SeqCst);
    }

    /// Whether the server is ready.
    pub fn is_ready(&self) -> bool {
        self.ready.load(Ordering::SeqCst)
    }
}

/// The readiness route.
pub fn routes() -> Router<Arc<AppState>> {
    Router::new().route("/readyz", get(readyz))
}

/// `GET /readyz`: `200` while serving, `503` while starting or draining, and while the room log
/// cannot be written (a full disk: its rooms wait, refusing moves, until it can).
async fn readyz(State(app): State<Arc<AppState>>) -> (StatusCode, &'static str) {
    if !app.readiness.is_ready() {
        (StatusCode::SERVICE_UNAVAILABLE, "not ready")
    } else if !app.rooms.store().is_writable() {
        (
            StatusCode::SERVICE_UNAVAILABLE,
            "not ready: the room log cannot be written",
        )
    } else {
        (StatusCode::OK, "ready")
    }
}

/// How long the health check waits for each step (connect, write, read).
const CHECK_TIMEOUT: Duration = Duration::from_secs(3);

/// GETs `path` from the server listening at `addr` (an unspecified address such as `0.0.0.0`
/// means this host's loopback) and returns `Ok` when it answers `200`.
pub fn check(addr: SocketAddr, path: &str) -> Result<(), String> {
    let target = match addr.ip() {
        IpAddr::V4(ip) if ip.is_unspecified() => {
            SocketAddr::new(Ipv4Addr::LOCALHOST.into(), addr.port())
        }
        IpAddr::V6(ip) if ip.is_unspecified() => {
            SocketAddr::new(Ipv6Addr::LOCALHOST.into(), addr.port())
        }
        _ => addr,
    };
    let mut stream = TcpStream::connect_timeout(&target, CHECK_TIMEOUT)
        .map_err(|e| format!("cannot connect to {target}: {e}"))?;
    stream
        .set_read_timeout(Some(CHECK_TIMEOUT))
        .and_then(|()| stream.set_write_timeout(Some(CHECK_TIMEOUT)))
        .map_err(|e| format!("cannot set timeouts: {e}"))?;
    let request = format!("GET {path} HTTP/1.1\r\nHost: {target}\r\nConnection: close\r\n\r\n");
    stream
        .write_all(request.as_bytes())
        .map_err(|e| format!("cannot send the request to {target}: {e}"))?;
    let mut answer = Vec::new();
    stream
        .take(64 * 1024)
        .read_to_end(&mut answer)
        .map_err(|e| format!("no answer from {target}: {e}"))?;
    let answer = String::from_utf8_lossy(&answer);
    let status = answer.lines().next().unwrap_or_default();
    match status.split_whitespace().nth(1) {
        Some("200") => Ok(()),
        _ => Err(format!("{target}{path} answered `{status}`")),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_closed_port_fails_the_check() {
        // Bind and drop a listener to find a port nobody listens on.
        let port = std::net::TcpListener::bind("127.0.0.1:0")
            .and_then(|l| l.local_addr())
            .expect("a free port")
            .port();
        let addr = SocketAddr::new(Ipv4Addr::UNSPECIFIED.into(), port);
        assert!(check(addr, "/healthz").is_err());
    }

    #[test]
    fn readiness_starts_false() {
        let readiness = Readiness::default();
        assert!(!readiness.is_ready());
        readiness.set(true);
        assert!(readiness.is_ready());
    }
}
