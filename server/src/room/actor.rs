//! The room's task: the IO around a [`RoomCore`]. It takes commands from the connections and
//! timers from the clock, hands each to the core, appends what the core changed for good to the
//! room's log, and only once that append has completed delivers what the core wants sent
//! (**validate → append → broadcast**). A client whose queue is full is dropped, which is one
//! more input for the core.
//!
//! An append that fails (a full disk, an I/O error) *pauses* the room, one server's store
//! (SQLite): nothing the failed input changed is ever shown to anyone; the person whose message
//! it was is told `error` `store_unavailable`, and every client `bye` `store_unavailable` and
//! close 1013 (come back after a pause); the room is put back as its log has it (the failed
//! input not applied) and stays known. While it waits, a `hello` is answered the same way, a
//! lookup describes the room as logged, and nothing is played (no bot, no timer). Once the store
//! can write again ([`Store::is_writable`]) the room is put back from its log once more, its
//! timers afresh as after a restart, and plays on as people come back. In a shared store
//! (Redis) an append that fails stops the room instead, and the next `hello` claims it again.
//!
//! In a shared store (Redis) the room also renews this node's lease on it every third of the
//! lease. When another node has claimed the room (an append is fenced, or a renewal finds the
//! room's epoch moved on) the room stops the same way, and every client is told `bye`
//! (`room_moved`) and closed with 4006: it reconnects, and the router sends it to the node that
//! holds the room now.

use tokio::sync::mpsc;
use tokio::time::Instant;
use tokio_util::sync::CancellationToken;

use crate::shutdown::Listener;
use tracing::{error, info, warn};

use super::client::ClientTx;
use super::core::{Closing, ConnId, ConnMap, Effect, Handled, Input, OsEntropy, RoomCore, Thought};
use super::record::{Entry, FORMAT, encode};
use super::think::Thinkers;
use super::{Command, RoomLog};
use crate::store::{Store, StoreError};

/// A room's task: its core, its clients' queues, and its log.
pub(super) struct Actor {
    /// The room's state and decisions.
    pub(super) core: RoomCore,
    /// The way to each connected client.
    pub(super) clients: ConnMap<ClientTx>,
    /// Where the room's inputs are appended.
    pub(super) log: RoomLog,
    /// Where its slow bots think.
    pub(super) thinkers: Thinkers,
    /// The way back from a thinking bot to this room.
    pub(super) thoughts: mpsc::UnboundedSender<Thought>,
    /// Set when the log could not be written (or the room moved): the room stops, or waits for
    /// its log ([`Stopped::Paused`]).
    pub(super) halted: Option<Stopped>,
    /// The connection and `id` of the message being handled, to tell it that its move was not
    /// made when the append fails.
    pub(super) asking: Option<(ConnId, Option<dhumbal_protocol::MessageId>)>,
}

/// What a client of a room that waits for its log is told: the move was not made; come back.
const PAUSED: &str = "the server cannot save moves just now (its disk is full or failing); \
                      nothing was lost and your last move was not made: coming back in a moment";

/// How often a room that waits for its log looks whether the store can write again.
const RESUME_EVERY: std::time::Duration = std::time::Duration::from_millis(500);

/// How a room's task ended.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum Stopped {
    /// The server is shutting down: the room's log stays, to be restored.
    Shutdown,
    /// The room closed for good; its log is deleted.
    Ended(Closing),
    /// The room's log could not be written; the room stopped as its log has it.
    LogFailed,
    /// Another node claimed the room (a shared store): it stopped here, its log stays, and its
    /// clients were told to reconnect.
    Moved,
    /// Not an end: an append failed in a store of this server alone, and the room waits for
    /// the store to write again ([`Actor::wait_for_the_log`]).
    Paused,
}

impl Actor {
    /// Runs the room until it closes or the server shuts down.
    pub(super) async fn run(
        mut self,
        mut inbox: mpsc::Receiver<Command>,
        mut thought: mpsc::UnboundedReceiver<Thought>,
        stop: Listener,
    ) -> Stopped {
        info!(room = %self.core.code(), "room opened");
        let stopping = stop.stopped();
        tokio::pin!(stopping);
        // Cancelled by the lease's renewals when another node has claimed the room.
        let moved = CancellationToken::new();
        let renewals = self.log.store.lease().map(|lease| {
            tokio::spawn(renew(
                self.log.store.clone(),
                self.log.code.clone(),
                lease,
                moved.clone(),
            ))
        });
        let mut entropy = OsEntropy;
        // Made once, and the timer reset only when what is due changes: a future made anew on
        // every turn registers itself (a lock, and the timer wheel) when polled and takes
        // itself out when dropped, once per action.
        let moving = moved.cancelled();
        let timer = tokio::time::sleep_until(Instant::now());
        tokio::pin!(moving, timer);
        // When the timer is set for, if it is.
        let mut armed: Option<Instant> = None;
        let stopped = loop {
            let due = self.core.next_due();
            if due != armed {
                if let Some(due) = due {
                    timer.as_mut().reset(due);
                }
                armed = due;
            }
            // In this order, the first ready wins: a command (what nearly every wake is for)
            // is taken without looking at the two tokens, each behind a lock. The inbox cannot
            // keep the rest waiting: tokio's budget makes a task that has received many
            // messages in a row find its channel empty once, and yield.
            tokio::select! {
                biased;
                command = inbox.recv() => match command {
                    Some(command) => self.command(command, &mut entropy).await,
                    None => break Stopped::Shutdown,
                },
                // The sender is the actor's own, so the channel never closes while it runs.
                Some(thought) = thought.recv() => {
                    self.core.handle(Input::Thought(Box::new(thought)), Instant::now(), &mut entropy);
                }
                () = &mut timer, if armed.is_some() => {
                    armed = None;
                    self.core.wake(Instant::now(), &mut entropy);
                    // Bots without a delay could otherwise play a whole round before the
                    // connections' writers get a turn to send it.
                    tokio::task::yield_now().await;
                }
                // The connections tell their clients `bye` themselves.
                () = &mut stopping => break Stopped::Shutdown,
                () = &mut moving => {
                    self.moved();
                    break Stopped::Moved;
                }
            }
            self.flush(&mut entropy).await;
            self.asking = None;
            if self.halted == Some(Stopped::Paused) {
                self.halted = None;
                match self.wait_for_the_log(&mut inbox, &mut thought, &stop).await {
                    Some(stopped) => break stopped,
                    None => {
                        // Put back with timers of its own: arm them afresh.
                        armed = None;
                        continue;
                    }
                }
            }
            if let Some(halted) = self.halted {
                break halted;
            }
            if let Some(ending) = self.core.ending() {
                break Stopped::Ended(ending);
            }
        };
        // Whoever asks the room anything from now on is told at once that it has gone.
        inbox.close();
        if let Some(renewals) = renewals {
            renewals.abort();
        }
        self.core.close();
        let code = self.core.code();
        match stopped {
            Stopped::Shutdown => info!(room = %code, "room stopped for the shutdown"),
            Stopped::Ended(ending) => {
                if let Err(e) = self.log.store.delete_room(code).await {
                    warn!(room = %code, error = %e, "could not delete the room's log");
                }
                info!(room = %code, ?ending, "room closed");
            }
            Stopped::LogFailed => error!(room = %code, "room stopped: its log failed"),
            Stopped::Paused => unreachable!("a paused room waits, it does not stop"),
            Stopped::Moved => {
                self.core.metrics().rooms_moved.increment(1);
                warn!(room = %code, "room stopped: another node has claimed it");
            }
        }
        if !matches!(stopped, Stopped::Ended(_)) {
            // Before the room leaves the registry: a claim of it here afterwards starts afresh.
            if let Err(e) = self.log.store.release(code).await {
                warn!(room = %code, error = %e, "could not give up the room's lease");
            }
        }
        stopped
    }

    /// One command from a connection (or the API).
    async fn command(&mut self, command: Command, entropy: &mut OsEntropy) {
        match command {
            Command::Join {
                joining,
                client,
                reply,
            } => {
                let conn = joining.conn;
                self.clients.insert(conn, client);
                let joined = self
                    .core
                    .handle(Input::Join(joining), Instant::now(), entropy)
                    == Handled::Joined;
                if !self.flush(entropy).await {
                    let _ = reply.send(false);
                    return;
                }
                if !joined {
                    self.clients.remove(&conn);
                }
                let _ = reply.send(joined);
            }
            Command::Message(request) => {
                // The change's frames will go to every client's socket: their lines are read
                // now, all at once, while the room works the change out.
                for client in self.clients.values() {
                    client.warm();
                }
                self.asking = Some((request.conn, request.id.clone()));
                self.core
                    .handle(Input::Message(request), Instant::now(), entropy);
            }
            Command::Leave { conn } => {
                // The connection's writer sends what is still queued for it (a `bye`, a close
                // frame) before it ends: the room does not cut it short.
                self.clients.remove(&conn);
                self.core
                    .handle(Input::Leave { conn }, Instant::now(), entropy);
            }
            Command::Summary { reply } => {
                let _ = reply.send(self.core.summary());
            }
        }
    }

    /// Settles the core, appends what it changed for good, then delivers what it wants sent;
    /// clients that fell behind are dropped (each one more input), until nothing is left.
    /// Returns `false` if the log could not be written (or the room has moved): the room must
    /// stop, and [`Actor::halted`] says why.
    async fn flush(&mut self, entropy: &mut OsEntropy) -> bool {
        if self.halted.is_some() {
            return false;
        }
        loop {
            self.core.settle(Instant::now());
            let entry = Entry {
                format: FORMAT,
                records: self.core.take_records(),
            };
            // A durable store answers after its commit, milliseconds later: the clients'
            // sockets, read ahead as the message arrived, are cold again by then.
            let waited = !entry.records.is_empty() && self.log.store.is_durable();
            let appended = if entry.records.is_empty() {
                Ok(())
            } else {
                let snapshot = self.core.take_snapshot();
                self.log.append(&entry, snapshot).await
            };
            // The list's memory makes the next input's.
            self.core.recycle_records(entry.records);
            match appended {
                Ok(()) => {}
                Err(StoreError::Fenced { .. }) => {
                    self.moved();
                    self.halted = Some(Stopped::Moved);
                    return false;
                }
                Err(_) if !self.log.store.is_shared() => {
                    self.pause();
                    self.halted = Some(Stopped::Paused);
                    return false;
                }
                Err(_) => {
                    self.fail();
                    self.halted = Some(Stopped::LogFailed);
                    return false;
                }
            }
            if waited {
                for client in self.clients.values() {
                    client.warm();
                }
            }
            let mut effects = self.core.take_effects();
            // A finished match's hand history is stored before anyone hears that the match
            // ended, so that a download after its `match_result` finds it, on any node.
            if effects.iter().any(|e| matches!(e, Effect::KeepMatch(_))) {
                // Once a match: the list is split anew, and its memory not kept this time.
                let (kept, rest): (Vec<_>, Vec<_>) = std::mem::take(&mut effects)
                    .into_iter()
                    .partition(|e| matches!(e, Effect::KeepMatch(_)));
                effects = rest;
                for effect in kept {
                    if let Effect::KeepMatch(kept) = effect {
                        self.log.keep_match(*kept).await;
                    }
                }
            }
            let dropped = self.deliver(&mut effects);
            self.core.recycle_effects(effects);
            if dropped.is_empty() {
                return true;
            }
            for conn in dropped {
                warn!(room = %self.core.code(), conn, "dropping a client that fell behind");
                self.core.metrics().slow_clients_dropped.increment(1);
                self.core
                    .handle(Input::Leave { conn }, Instant::now(), entropy);
            }
        }
    }

    /// Sends the core's effects; returns the clients that could not take theirs.
    fn deliver(&mut self, effects: &mut Vec<Effect>) -> Vec<ConnId> {
        let mut dropped = Vec::new();
        for effect in effects.drain(..) {
            match effect {
                Effect::Send { to, text } => {
                    if let Some(client) = self.clients.get(&to) {
                        if !client.send(text) {
                            self.clients.remove(&to);
                            dropped.push(to);
                        }
                    }
                }
                Effect::Close { to, code, reason } => {
                    if let Some(client) = self.clients.remove(&to) {
                        client.close(code, reason);
                    }
                }
                // Stored by `flush`, before anything is delivered.
                Effect::KeepMatch(_) => {}
                Effect::Think(job) => self.thinkers.think(*job, self.thoughts.clone()),
                Effect::Coach(job) => {
                    if let Some(client) = self.clients.get(&job.conn) {
                        self.thinkers.coach(*job, client.clone());
                    }
                }
            }
        }
        dropped
    }

    /// The log failed: nobody hears of what the room did since its last append, and every
    /// client is disconnected (they come back to the room as its log has it, after a restart).
    fn fail(&mut self) {
        self.core.take_effects();
        for (_, client) in self.clients.drain() {
            client.send_message(&dhumbal_protocol::ServerMessage::bye(
                dhumbal_protocol::codes::INTERNAL,
                "the server could not save this room; it has stopped",
            ));
            client.close(1011, "internal error");
        }
    }

    /// An append failed and the room will wait for its log: nobody hears of what the failed
    /// input did; whoever sent it is told that the move was not made, and every client is told
    /// to come back after a pause (`bye` `store_unavailable`, close 1013), as a `hello` is while
    /// a cluster's store is away.
    fn pause(&mut self) {
        use dhumbal_protocol::{CLOSE_TRY_AGAIN_LATER, ServerMessage, codes};
        self.core.take_effects();
        let asking = self.asking.take();
        for (conn, client) in self.clients.drain() {
            if let Some((_, id)) = asking.as_ref().filter(|(asker, _)| *asker == conn) {
                client.send_message(&ServerMessage::error(
                    codes::STORE_UNAVAILABLE,
                    PAUSED,
                    id.clone(),
                ));
            }
            client.send_message(&ServerMessage::bye(codes::STORE_UNAVAILABLE, PAUSED));
            client.close(CLOSE_TRY_AGAIN_LATER, "store unavailable");
        }
    }

    /// The room waits for its log: put back as its log has it (the failed input not applied),
    /// it answers lookups, refuses every `hello` with `store_unavailable` (then `bye` and close
    /// 1013), plays nothing, and looks every [`RESUME_EVERY`] whether the store can write again.
    /// Answers `None` once it can (the room put back from its log afresh, to play on), or how the
    /// room stopped meanwhile.
    async fn wait_for_the_log(
        &mut self,
        inbox: &mut mpsc::Receiver<Command>,
        thought: &mut mpsc::UnboundedReceiver<Thought>,
        stop: &Listener,
    ) -> Option<Stopped> {
        use dhumbal_protocol::{CLOSE_TRY_AGAIN_LATER, ServerMessage, codes};
        let code = self.log.code.clone();
        error!(
            room = %code,
            "room waiting: its log cannot be written; its moves are refused until it can"
        );
        self.core.metrics().rooms_paused.increment(1.0);
        let mut stopped = match self.put_back(thought).await {
            Err(Some(stopped)) => Some(stopped),
            _ => None,
        };
        let mut ticks = tokio::time::interval_at(Instant::now() + RESUME_EVERY, RESUME_EVERY);
        ticks.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
        while stopped.is_none() {
            tokio::select! {
                () = stop.stopped() => stopped = Some(Stopped::Shutdown),
                command = inbox.recv() => match command {
                    None => stopped = Some(Stopped::Shutdown),
                    Some(Command::Join { joining, client, reply }) => {
                        self.core.metrics().rejected(codes::STORE_UNAVAILABLE);
                        client.send_message(&ServerMessage::error(
                            codes::STORE_UNAVAILABLE,
                            PAUSED,
                            joining.id,
                        ));
                        client.send_message(&ServerMessage::bye(codes::STORE_UNAVAILABLE, PAUSED));
                        client.close(CLOSE_TRY_AGAIN_LATER, "store unavailable");
                        let _ = reply.send(false);
                    }
                    Some(Command::Summary { reply }) => {
                        let _ = reply.send(self.core.summary());
                    }
                    // From connections closed already.
                    Some(Command::Message(_) | Command::Leave { .. }) => {}
                },
                // A bot of the room as it was before it was put back: its move is not made.
                Some(_) = thought.recv() => {}
                _ = ticks.tick() => {
                    if !self.log.store.is_writable() {
                        continue;
                    }
                    match self.put_back(thought).await {
                        Ok(()) => {
                            info!(room = %code, "room resumed: its log can be written again");
                            self.core.metrics().rooms_paused.decrement(1.0);
                            return None;
                        }
                        Err(gone) => stopped = gone,
                    }
                }
            }
        }
        self.core.metrics().rooms_paused.decrement(1.0);
        stopped
    }

    /// Puts the room back as its log has it: a core replayed from the store (its timers
    /// afresh), the log's seq, and a fresh way back for thinking bots (those of the core that
    /// goes are not heard). `Err(None)` when the log cannot be read now (try again later);
    /// `Err(Some(LogFailed))` when the room is not in it or does not replay.
    async fn put_back(
        &mut self,
        thought: &mut mpsc::UnboundedReceiver<Thought>,
    ) -> Result<(), Option<Stopped>> {
        let code = self.log.code.clone();
        let stored = match self.log.store.reload(&code).await {
            Ok(Some(stored)) => stored,
            Ok(None) => {
                error!(room = %code, "a waiting room is not in its log any more");
                return Err(Some(Stopped::LogFailed));
            }
            Err(e) => {
                warn!(room = %code, error = %e, "could not read a waiting room's log; trying again");
                return Err(None);
            }
        };
        let core = crate::registry::replay(&stored, self.core.timing(), self.core.shared_metrics());
        match core {
            Ok(core) => {
                self.core.close();
                self.core = core;
                self.log.seq = stored.last_seq();
                let (thoughts, back) = mpsc::unbounded_channel();
                self.thoughts = thoughts;
                *thought = back;
                Ok(())
            }
            Err(why) => {
                error!(room = %code, why, "a waiting room's log does not replay");
                Err(Some(Stopped::LogFailed))
            }
        }
    }

    /// Another node holds the room now: nobody hears of what the room did since its last
    /// append, and every client is told to reconnect (the router sends it to that node).
    fn moved(&mut self) {
        self.core.take_effects();
        for (_, client) in self.clients.drain() {
            client.send_message(&dhumbal_protocol::ServerMessage::bye(
                dhumbal_protocol::codes::ROOM_MOVED,
                "this room has moved to another server; reconnecting",
            ));
            client.close(dhumbal_protocol::CLOSE_ROOM_MOVED, "room moved");
        }
    }
}

/// Renews this node's lease on room `code` every third of `lease`, until the room's task stops
/// it; cancels `moved` when a renewal finds that another node has claimed the room (or that it
/// is gone), so that a room where nothing is appended learns of it too. A renewal that fails
/// because Redis is away is tried again at the next one: the owner's lease only says which
/// node holds the room, and fencing, not the lease, keeps two nodes from writing one log.
async fn renew(store: Store, code: String, lease: std::time::Duration, moved: CancellationToken) {
    let period = lease / 3;
    let mut ticks = tokio::time::interval_at(Instant::now() + period, period);
    ticks.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
    loop {
        ticks.tick().await;
        match store.renew(&code).await {
            Ok(()) => {}
            Err(e @ StoreError::Fenced { .. }) => {
                warn!(room = %code, error = %e, "the room's lease is lost: another node holds it");
                moved.cancel();
                return;
            }
            Err(e) => warn!(room = %code, error = %e, "could not renew the room's lease"),
        }
    }
}

impl RoomLog {
    /// Appends one input's records as the log's next entry, and the snapshot the log restarts
    /// from if a rematch began in it. Answers why the entry was not written, if it was not.
    async fn append(
        &mut self,
        entry: &Entry,
        snapshot: Option<super::record::Snapshot>,
    ) -> Result<(), StoreError> {
        // The clock is read for the trace alone, and only when it is on.
        let started = tracing::enabled!(tracing::Level::TRACE).then(std::time::Instant::now);
        entry.encode_into(&mut self.text);
        self.seq += 1;
        if let Err(e) = self
            .store
            .append_at(&mut self.slot, &self.code, self.seq, &mut self.text)
            .await
        {
            error!(room = %self.code, seq = self.seq, error = %e, "appending to the room's log failed");
            return Err(e);
        }
        if let Some(snapshot) = snapshot {
            // The snapshot is the room before this entry: the log restarts from it.
            if let Err(e) = self
                .store
                .snapshot(&self.code, self.seq - 1, encode(&snapshot))
                .await
            {
                // The log is whole without it, only longer to replay.
                warn!(room = %self.code, error = %e, "writing a snapshot failed");
            }
        }
        tracing::trace!(
            room = %self.code,
            seq = self.seq,
            took = ?started.map(|s| s.elapsed()),
            "appended"
        );
        Ok(())
    }
}

impl RoomLog {
    /// Keeps a finished match's hand history, waiting until the store has it; a failure only
    /// costs the download, so it is logged and the room goes on.
    pub(crate) async fn keep_match(&self, kept: super::record::KeptMatch) {
        if let Err(e) = self.store.keep_match(kept).await {
            warn!(room = %self.code, error = %e, "could not keep the match's hand history");
        }
    }
}
