//! A real server on a loopback port.

use std::net::SocketAddr;

use dhumbal_protocol::{CreateRoom, CreatedRoom};
use dhumbal_server::Config;
use dhumbal_server::config::StoreKind;
use tokio::net::TcpListener;
use tokio::sync::oneshot;
use tokio::task::JoinHandle;

use crate::http;

/// A server listening on `127.0.0.1` at a port the system chose. Dropping it shuts it down.
pub struct TestServer {
    /// Where it listens.
    pub addr: SocketAddr,
    /// Completing this shuts the server down.
    shutdown: Option<oneshot::Sender<()>>,
    /// The server's task.
    task: Option<JoinHandle<std::io::Result<()>>>,
}

impl TestServer {
    /// A server for tests: bots play without delay, fixed test decks are allowed, and the
    /// message rate is not limited (test clients play whole matches as fast as the bots).
    pub async fn start() -> TestServer {
        TestServer::with_config(test_config()).await
    }

    /// [`TestServer::start`]'s server with fast turn timers: one second of a table's turn timer
    /// lasts `second_ms` milliseconds ([`fast_turns`]).
    pub async fn with_fast_turns(second_ms: u64) -> TestServer {
        TestServer::with_config(fast_turns(second_ms)).await
    }

    /// A server with this configuration (its `addr` is ignored: the server binds loopback port
    /// 0). A configuration that keeps the default store (SQLite in `./data`) gets the memory
    /// store instead, so that tests never share a database; a test of durability names its own
    /// `data_dir`.
    pub async fn with_config(mut config: Config) -> TestServer {
        if config.store == StoreKind::Sqlite
            && config.data_dir == std::path::Path::new(dhumbal_server::config::DEFAULT_DATA_DIR)
        {
            config.store = StoreKind::Memory;
        }
        let listener = TcpListener::bind("127.0.0.1:0")
            .await
            .expect("bind a loopback port");
        let addr = listener.local_addr().expect("the listener's address");
        let (shutdown, stop) = oneshot::channel::<()>();
        let task = tokio::spawn(dhumbal_server::run(listener, config, async move {
            let _ = stop.await;
        }));
        TestServer {
            addr,
            shutdown: Some(shutdown),
            task: Some(task),
        }
    }

    /// Creates a room with this request, panicking unless the server answers `201`.
    pub async fn create_room(&self, request: &CreateRoom) -> CreatedRoom {
        let body = serde_json::to_string(request).expect("a request serializes");
        let (status, body) = http::request(self.addr, "POST", "/api/rooms", &body).await;
        assert_eq!(status, 201, "room creation failed: {body}");
        serde_json::from_str(&body).expect("a created room")
    }

    /// Shuts the server down and waits for it to stop.
    pub async fn stop(mut self) {
        if let Some(shutdown) = self.shutdown.take() {
            let _ = shutdown.send(());
        }
        if let Some(task) = self.task.take() {
            task.await
                .expect("the server task ended cleanly")
                .expect("the server ran without an IO error");
        }
    }
}

/// [`TestServer::start`]'s configuration: bots play without delay, fixed test decks are
/// allowed, the message rate is not limited, and the web client's files are compressed when
/// first asked for (`--lazy-web-compression`: most test servers never serve the page, and
/// compressing it all at start costs a test build two CPU-seconds).
pub fn test_config() -> Config {
    Config {
        bot_delay_ms: 0,
        allow_test_decks: true,
        lazy_web_compression: true,
        ..unlimited_rate()
    }
}

/// [`test_config`] for a test that only needs a turn to run out: one second of a table's turn
/// timer lasts `second_ms` milliseconds (`--test-turn-second-ms`, never for production), and
/// what clients are told of the clock is scaled alike (a 15-second timer says
/// `15 * second_ms`). A test of the real countdown keeps real seconds.
pub fn fast_turns(second_ms: u64) -> Config {
    Config {
        test_turn_second_ms: Some(second_ms),
        ..test_config()
    }
}

/// The default configuration with a message rate and a room-creation rate no test reaches: for
/// tests that play at machine speed, and open many rooms from one address (the limits have
/// their own tests).
pub fn unlimited_rate() -> Config {
    Config {
        message_burst: u32::MAX,
        messages_per_sec: u32::MAX,
        room_creations_per_minute: u32::MAX,
        max_rooms_per_address: usize::MAX,
        ..Config::default()
    }
}

impl Drop for TestServer {
    fn drop(&mut self) {
        if let Some(shutdown) = self.shutdown.take() {
            let _ = shutdown.send(());
        }
        if let Some(task) = self.task.take() {
            task.abort();
        }
    }
}
