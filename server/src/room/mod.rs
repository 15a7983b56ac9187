//! A room: one actor task that owns the game, the seats, the bots and the room's clients, and
//! keeps a log from which the room comes back after a restart.
//!
//! - [`core`] — [`RoomCore`]: the room's decisions, synchronous and unit-tested without a
//!   runtime. One input at a time in; effects to send and records to log out.
//! - [`record`] — what the log holds: the setup, one entry of records per accepted input, and
//!   a snapshot at each rematch; secrets only as SHA-256 hashes.
//! - [`actor`] — the room's task: channels, timers and the log around the core, in the order
//!   **validate → append → broadcast**.
//! - [`client`] — the way to a client: its bounded queue ([`client::ClientTx`]) and the text
//!   the core sends ([`client::Text`]), the room's own type: the room knows nothing of the
//!   connections' module nor of the web framework.
//! - [`think`] — [`Thinkers`]: where a bot whose decision takes milliseconds (an expert) thinks,
//!   off the room's task, a bounded number at once.
//!
//! The rest of the server talks to a room through a cloneable [`RoomHandle`] over a bounded
//! channel. The room never waits for a client: every message to a client goes through that
//! client's bounded queue with `try_send`, and a client whose queue is full is disconnected.

pub mod actor;
pub mod client;
pub mod core;
pub mod record;
#[cfg(test)]
pub(crate) mod testing;
pub mod think;

use std::pin::Pin;
use std::sync::Arc;

use dhumbal_protocol::RoomSummary;
use futures_util::future::Either;
use tokio::sync::{mpsc, oneshot};
use tokio::time::Instant;

use self::client::ClientTx;
pub use self::core::{ConnId, Joining, Request, RoomCore, Timing};
use self::record::Setup;
use crate::metrics::Metrics;
use crate::shutdown::Shutdown;
use crate::store::Store;
pub use think::Thinkers;

/// How many commands may wait for a room before senders wait.
pub(crate) const ROOM_QUEUE: usize = 256;

/// What the rest of the server asks of a room.
#[derive(Debug)]
pub enum Command {
    /// A connection's `hello`: join the room. `reply` says whether it joined; either way, the
    /// answer (`welcome` or `error`) goes to `client`.
    Join {
        /// The `hello`, and who sent it from where.
        joining: Joining,
        /// The way to the client.
        client: ClientTx,
        /// Whether the client joined.
        reply: oneshot::Sender<bool>,
    },
    /// A message from a joined connection (its shape already checked).
    Message(Request),
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

/// How [`RoomHandle::offer`] went.
#[derive(Debug)]
pub enum Offer {
    /// The command is queued.
    Taken,
    /// The room has closed.
    Closed,
    /// The room's queue is full: the command, to wait with ([`RoomHandle::send_waiting`]).
    Full(Command),
}

/// A cloneable handle on a room's task.
#[derive(Clone, Debug)]
pub struct RoomHandle {
    commands: mpsc::Sender<Command>,
}

impl RoomHandle {
    /// Sends a command; `false` if the room has closed. The command is queued at once when
    /// the room's queue has room (nearly always), and only otherwise does the future wait, boxed:
    /// so that a connection's task, which awaits this for every message, stays small while it
    /// is idle (the command itself would otherwise be part of it).
    pub fn send(&self, command: Command) -> impl Future<Output = bool> + Send + '_ {
        match self.offer(command) {
            Offer::Taken => Either::Left(std::future::ready(true)),
            Offer::Closed => Either::Left(std::future::ready(false)),
            Offer::Full(command) => Either::Right(self.send_waiting(command)),
        }
    }

    /// Queues a command if the room's queue has room now, without waiting.
    pub fn offer(&self, command: Command) -> Offer {
        match self.commands.try_send(command) {
            Ok(()) => Offer::Taken,
            Err(mpsc::error::TrySendError::Closed(_)) => Offer::Closed,
            Err(mpsc::error::TrySendError::Full(command)) => Offer::Full(command),
        }
    }

    /// Sends a command once the room's queue has room; `false` if the room has closed. Boxed,
    /// so that whoever awaits it is not as large as the command and the wait all its life.
    pub fn send_waiting(
        &self,
        command: Command,
    ) -> Pin<Box<dyn Future<Output = bool> + Send + '_>> {
        Box::pin(async move { self.commands.send(command).await.is_ok() })
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
    /// The room's place in the store, once an append has found it.
    pub slot: crate::store::RoomSlot,
    /// Where an entry's text is written, kept from append to append for its memory when the
    /// store copies the text rather than keeping it (the memory store).
    text: Vec<u8>,
}

impl RoomLog {
    /// The log of room `code` in `store`, whose last entry is `seq` (0 for none).
    pub fn new(store: Store, code: String, seq: u64) -> RoomLog {
        RoomLog {
            store,
            code,
            seq,
            slot: crate::store::RoomSlot::default(),
            text: Vec::new(),
        }
    }
}

/// Starts a room's task from its core and returns its handle; its thinking bots think in
/// `thinkers`. `on_close` runs when the room's
/// task ends (the room closed, or the server is shutting down), to take it out of the registry;
/// `shutdown` waits for the task.
pub fn spawn(
    core: RoomCore,
    log: RoomLog,
    thinkers: Thinkers,
    shutdown: &Shutdown,
    on_close: Box<dyn FnOnce() + Send>,
) -> RoomHandle {
    let (commands, inbox) = mpsc::channel(ROOM_QUEUE);
    let (thoughts, thought) = mpsc::unbounded_channel();
    let actor = actor::Actor {
        core,
        clients: core::ConnMap::default(),
        log,
        thinkers,
        thoughts,
        halted: None,
        asking: None,
    };
    // Its own ear for the shutdown: waiting on it takes no lock.
    let stop = shutdown.listener();
    shutdown.spawn(async move {
        actor.run(inbox, thought, stop).await;
        on_close();
    });
    RoomHandle { commands }
}

/// A new room's core, as set up.
pub fn new_core(setup: &Setup, timing: Timing, metrics: Arc<Metrics>) -> RoomCore {
    RoomCore::new(setup, timing, metrics, Instant::now())
}

#[cfg(test)]
mod tests;
