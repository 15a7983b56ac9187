//! The server's log lines at the default level, in the JSON format the binary writes with
//! `--log-format json`: one line per room opened and closed and per match started and ended,
//! and no line per message.
//!
//! A logger is global to the process, so this is a binary of its own with a single test.

use std::io::Write;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use dhumbal_engine::{Preset, Settings};
use dhumbal_protocol::{ClientMessage, CreateRoom, ServerMessage};
use dhumbal_server::Config;
use dhumbal_server::logging::{self, LogFormat};
use dhumbal_tests::server::unlimited_rate;
use dhumbal_tests::{Client, TestServer, answer, guarded};
use rand::SeedableRng;
use rand::rngs::StdRng;
use tracing_subscriber::EnvFilter;
use tracing_subscriber::fmt::MakeWriter;

/// Log lines collected in memory.
#[derive(Clone, Default)]
struct Lines(Arc<Mutex<Vec<u8>>>);

impl Write for Lines {
    fn write(&mut self, bytes: &[u8]) -> std::io::Result<usize> {
        self.0
            .lock()
            .expect("not poisoned")
            .extend_from_slice(bytes);
        Ok(bytes.len())
    }

    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

impl<'w> MakeWriter<'w> for Lines {
    type Writer = Lines;

    fn make_writer(&'w self) -> Lines {
        self.clone()
    }
}

impl Lines {
    /// Every line so far, parsed as JSON.
    fn parsed(&self) -> Vec<serde_json::Value> {
        let bytes = self.0.lock().expect("not poisoned").clone();
        String::from_utf8(bytes)
            .expect("UTF-8 lines")
            .lines()
            .map(|line| serde_json::from_str(line).expect("every line is one JSON object"))
            .collect()
    }

    /// How many lines carry this message.
    fn count(&self, message: &str) -> usize {
        self.parsed()
            .iter()
            .filter(|line| line["fields"]["message"] == message)
            .count()
    }
}

#[tokio::test]
async fn json_lines_for_rooms_and_matches_and_none_per_message() {
    let lines = Lines::default();
    let subscriber = logging::subscriber(LogFormat::Json, EnvFilter::new("info"), lines.clone());
    tracing::subscriber::set_global_default(subscriber).expect("the only logger");

    let server = TestServer::with_config(Config {
        bot_delay_ms: 0,
        idle_room_ttl: Duration::from_millis(200),
        ..unlimited_rate()
    })
    .await;
    let room = server
        .create_room(&CreateRoom {
            settings: Some(Settings {
                players: 2,
                ..Preset::Standard.settings()
            }),
            ..CreateRoom::default()
        })
        .await;
    let mut host = Client::join(server.addr, &room.code, "Asha", Some(&room.host_secret)).await;
    host.send(ClientMessage::Start).await;
    let mut sent = 2;
    let mut rng = StdRng::seed_from_u64(3);
    let mut ready_for = 0;
    loop {
        match host.recv().await {
            ServerMessage::State { view, .. } => {
                if let Some(message) = answer(&view, &mut rng, &mut ready_for) {
                    host.send(message).await;
                    sent += 1;
                }
            }
            ServerMessage::MatchResult(_) => break,
            ServerMessage::Error(error) => panic!("a legal action was refused: {error:?}"),
            _ => {}
        }
    }
    // With nobody left in it, the room closes after its idle time.
    let received = host.received.len();
    host.close().await;
    guarded("the room to close", async {
        while lines.count("room closed") == 0 {
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
    })
    .await;

    let every = lines.parsed();
    let room_lines = every
        .iter()
        .filter(|line| line["fields"]["room"] == room.code.as_str())
        .count();
    assert_eq!(lines.count("room opened"), 1);
    assert_eq!(lines.count("room closed"), 1);
    assert_eq!(lines.count("match started"), 1);
    assert_eq!(lines.count("match over"), 1);
    for line in &every {
        assert!(line["timestamp"].is_string() && line["level"].is_string());
    }
    // However many messages a match takes, the room logs a handful of lines: opened, joined,
    // started, over, left, closed.
    assert!(
        room_lines <= 10,
        "{room_lines} lines about the room for {sent} messages sent and {} received: {every:#?}",
        received
    );
}
