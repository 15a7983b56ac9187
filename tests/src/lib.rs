//! Helpers for the end-to-end tests of the Dhumbal server (the tests themselves are in
//! `tests/e2e/`).
//!
//! Every test starts a real server on `127.0.0.1:0` ([`TestServer`]), talks to its HTTP API with
//! a small HTTP/1.1 client ([`http`]), and plays through real WebSocket clients ([`Client`]).
//! Every frame a client receives is checked by a [`LeakCheck`]: before the show it may name no
//! card that its seat has not been shown.
//!
//! # Layout
//!
//! - [`server`] — [`TestServer`]: a server on a loopback port, stopped when dropped.
//! - [`http`] — `POST`/`GET` against the API.
//! - [`client`] — [`Client`]: a WebSocket client that keeps its seat, room and view.
//! - [`leaks`] — [`LeakCheck`]: the scan of every frame for cards the seat may not see.
//! - [`process`] — [`ServerProcess`](process::ServerProcess): the real server binary as a child
//!   process, for the tests that attack it (`tests/hostile.rs`).
//! - [`play`] — [`random_action`]: a random legal action chosen from a seat's view alone.
//! - [`redis`] — [`RedisServer`](redis::RedisServer): a throwaway `redis-server` on a free
//!   loopback port (skipped without one, but under `CI=true`), for the Redis store's tests and
//!   the cluster.
//! - [`watchdog`] — [`Watchdog`] and [`guarded`]: failure guards that also work under paused
//!   tokio time.
//! - [`crash`] — [`crash::run`]: the crash harness (SIGKILL the server while rooms play,
//!   restart it, check that no client loses what it had received), for the `crash` binary and
//!   `tests/crash.rs`.
//! - [`haproxy`] — [`Haproxy`](haproxy::Haproxy): HAProxy in front of server nodes, routing as
//!   `docker/haproxy.cfg` does, for the cluster test.
//! - [`qr`] — [`qr::decode_svg`]: the link in a QR code the server drew as SVG.
//! - [`cluster`] — [`cluster::run`]: three nodes on one Redis behind HAProxy, a node killed,
//!   restarted and paused while rooms play; every reconnection checked as the crash harness
//!   checks one.

pub mod client;
pub mod cluster;
pub mod crash;
pub mod haproxy;
pub mod http;
pub mod leaks;
pub mod play;
pub mod process;
pub mod qr;
pub mod redis;
pub mod server;
pub mod watchdog;

pub use client::Client;
pub use leaks::LeakCheck;
pub use play::{answer, random_action};
pub use server::TestServer;
pub use watchdog::{Watchdog, guarded};

/// How long a test waits for something it expects before failing (see [`guarded`]). Only a
/// guard against a hung test: nothing is asserted about how long things take.
pub const PATIENCE: std::time::Duration = std::time::Duration::from_secs(60);
