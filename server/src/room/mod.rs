//! A room: one actor task that owns the game, the seats, the bots and the room's clients, and
//! keeps a log from which the room comes back after a restart.
//!
//! - [`core`] — [`RoomCore`]: the room's decisions, synchronous and unit-tested without a
//!   runtime. One input at a time in; effects to send and records to log out.
//! - [`record`] — what the log holds: the setup, one entry of records per accepted input, and
//!   a snapshot at each rematch; secrets only as SHA-256 hashes.
//! - [`actor`] — the room's task: channels, timers and the log around the core, in the order
//!   **validate → append → broadcast**.
//!
//! The rest of the server talks to a room through a cloneable [`RoomHandle`] over a bounded
//! channel. The room never waits for a client: every message to a client goes through that
//! client's bounded queue with `try_send`, and a client whose queue is full is disconnected.

pub mod actor;
pub mod core;
pub mod record;
#[cfg(test)]
pub(crate) mod testing;

use std::sync::Arc;

use dhumbal_protocol::{ClientMessage, Hello, MessageId, RoomSummary};
use tokio::sync::{mpsc, oneshot};
use tokio::time::Instant;

pub use self::core::{ConnId, RoomCore, Timing};
use self::record::Setup;
use crate::conn::ClientTx;
use crate::metrics::Metrics;
use crate::shutdown::Shutdown;
use crate::store::Store;

/// How many commands may wait for a room before senders wait.
const ROOM_QUEUE: usize = 256;

/// What the rest of the server asks of a room.
#[derive(Debug)]
pub enum Command {
    /// A connection's `hello`: join the room. `reply` says whether it joined; either way, the
    /// answer (`welcome` or `error`) goes to `client`.
    Join {
        /// The connection.
        conn: ConnId,
        /// The `hello`.
        hello: Hello,
        /// The `hello`'s `id`, echoed by an error.
        id: Option<MessageId>,
        /// The way to the client.
        client: ClientTx,
        /// The client's address failed too many lookups: only a valid seat token gets in, and
        /// any other hello is refused with `too_many_attempts`.
        token_only: bool,
        /// Whether the client joined.
        reply: oneshot::Sender<bool>,
    },
    /// A message from a joined connection (its shape already checked).
    Message {
        /// The connection.
        conn: ConnId,
        /// The message's `id`.
        id: Option<MessageId>,
        /// The message.
        message: ClientMessage,
    },
    /// A connection has gone.
    Leave {
        /// The connection.
        conn: ConnId,
    },
    /// Describe the room for someone about to join.
    Summary {
        /// Where the answer goes.
        reply: oneshot::Sender<RoomSummary>,
    },
}

/// A cloneable handle on a room's task.
#[derive(Clone, Debug)]
pub struct RoomHandle {
    commands: mpsc::Sender<Command>,
}

impl RoomHandle {
    /// Sends a command; `false` if the room has closed.
    pub async fn send(&self, command: Command) -> bool {
        self.commands.send(command).await.is_ok()
    }

    /// The room's summary, or `None` if it has closed.
    pub async fn summary(&self) -> Option<RoomSummary> {
        let (reply, answer) = oneshot::channel();
        if !self.send(Command::Summary { reply }).await {
            return None;
        }
        answer.await.ok()
    }
}

/// Where a room's log goes: the store, the room's code, and the number of its last entry.
#[derive(Clone, Debug)]
pub struct RoomLog {
    /// The store.
    pub store: Store,
    /// The room's code.
    pub code: String,
    /// The number of the last entry appended (0 for none).
    pub seq: u64,
}

/// Starts a room's task from its core and returns its handle. `on_close` runs when the room's
/// task ends (the room closed, or the server is shutting down), to take it out of the registry;
/// `shutdown` waits for the task.
pub fn spawn(
    core: RoomCore,
    log: RoomLog,
    shutdown: &Shutdown,
    on_close: Box<dyn FnOnce() + Send>,
) -> RoomHandle {
    let (commands, inbox) = mpsc::channel(ROOM_QUEUE);
    let actor = actor::Actor {
        core,
        clients: std::collections::HashMap::new(),
        log,
    };
    let stop = shutdown.token();
    shutdown.spawn(async move {
        actor.run(inbox, stop).await;
        on_close();
    });
    RoomHandle { commands }
}

/// A new room's core, as set up.
pub fn new_core(setup: &Setup, timing: Timing, metrics: Arc<Metrics>) -> RoomCore {
    RoomCore::new(setup, timing, metrics, Instant::now())
}

#[cfg(test)]
mod tests {
    //! The actor around the core: validate, append, then broadcast.

    use super::*;
    use crate::conn::Outgoing;

    use crate::room::testing::{TIMING, setup};
    use crate::store::StoreConfig;
    use dhumbal_engine::Preset;
    use dhumbal_protocol::PROTOCOL_VERSION;
    use std::time::Duration;
    use tokio_util::sync::CancellationToken;

    /// Joins a client, returning whether it joined and what it was sent.
    async fn join(room: &RoomHandle, conn: ConnId, name: &str) -> (bool, mpsc::Receiver<Outgoing>) {
        let (queue, outbox) = mpsc::channel(64);
        let client = ClientTx {
            queue,
            kick: CancellationToken::new(),
        };
        let (reply, joined) = oneshot::channel();
        let hello = Hello {
            protocol: PROTOCOL_VERSION,
            room: "STOREROOM2".into(),
            name: name.into(),
            token: None,
            spectator: false,
            host_secret: None,
            client_seed: None,
        };
        room.send(Command::Join {
            conn,
            hello,
            id: None,
            client,
            token_only: false,
            reply,
        })
        .await;
        (joined.await.unwrap_or(false), outbox)
    }

    /// Everything queued for a client, as text (closes as `close <code>`).
    fn drain(outbox: &mut mpsc::Receiver<Outgoing>) -> Vec<String> {
        let mut seen = Vec::new();
        while let Ok(outgoing) = outbox.try_recv() {
            seen.push(match outgoing {
                Outgoing::Text(text) => text.to_string(),
                Outgoing::Close(code, _) => format!("close {code}"),
            });
        }
        seen
    }

    #[tokio::test]
    async fn what_is_appended_is_sent_and_what_is_not_never_is() {
        let dir = tempfile::tempdir().unwrap();
        let config = StoreConfig::Sqlite {
            data_dir: dir.path().to_owned(),
        };
        let metrics = Arc::new(Metrics::new());
        let store = Store::open(&config, Arc::clone(&metrics)).unwrap();
        let shutdown = Shutdown::new();
        let log = RoomLog {
            store: store.clone(),
            code: "STOREROOM2".into(),
            seq: 0,
        };
        store
            .create_room(
                "STOREROOM2",
                record::encode(&setup("STOREROOM2", Preset::Standard.settings())),
            )
            .await
            .unwrap();
        let room = spawn(
            new_core(
                &setup("STOREROOM2", Preset::Standard.settings()),
                TIMING,
                Arc::clone(&metrics),
            ),
            log,
            &shutdown,
            Box::new(|| {}),
        );
        // A join is a seat taken: appended, then welcomed.
        let (joined, mut outbox) = join(&room, 1, "Asha").await;
        assert!(joined);
        let sent = drain(&mut outbox);
        assert!(sent[0].contains(r#""type":"welcome""#), "{sent:?}");
        let loaded = store.load().unwrap();
        assert_eq!(loaded.rooms[0].inputs.len(), 1, "the seat is in the log");

        // The log fails (the store is gone): the next join's seat is never announced, and the
        // room stops, telling its clients why.
        store.close().await;
        let (joined, mut second) = join(&room, 2, "Bina").await;
        assert!(!joined);
        let sent = drain(&mut second);
        assert!(
            sent.iter().all(|m| !m.contains(r#""type":"welcome""#)),
            "{sent:?}"
        );
        let first = drain(&mut outbox);
        assert!(
            first.iter().any(|m| m.contains(r#""reason":"internal""#)),
            "{first:?}"
        );
        assert_eq!(first.last().map(String::as_str), Some("close 1011"));
        assert!(
            first.iter().all(|m| !m.contains(r#""type":"room""#)),
            "nobody hears of the seat that was not logged: {first:?}"
        );
        shutdown.begin();
        assert!(
            shutdown.wait(Duration::from_secs(5)).await,
            "the room stopped"
        );
    }
}
