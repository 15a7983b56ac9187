//! The room log: what a room needs to come back after the process restarts.
//!
//! Every room is a replayable state machine (see "Durable rooms" in the design). Its log holds
//! its *setup* (settings, match seeds, seat-token and host-secret hashes), then its accepted
//! *inputs*, numbered 1, 2, 3, … per room, and now and then a *snapshot*: the state after input
//! `N`, which replaces the setup and the inputs up to `N` for replay, so that those inputs are
//! deleted. Every blob is opaque here; the room layer writes and reads them.
//!
//! The order is **validate → append → broadcast**: a room appends an input it has accepted and
//! sends the input's effects only once [`Store::append`] has answered, which it does once the
//! input has been committed.
//!
//! Three stores behind one [`Store`]:
//!
//! - [`StoreConfig::Sqlite`] ([`sqlite`]): the log in `<data-dir>/dhumbal.db`, SQLite in WAL mode
//!   with `synchronous=NORMAL`, written by one thread that commits whatever is queued in one
//!   transaction (group commit). Whatever was answered as committed survives the process being
//!   killed at any moment.
//! - [`StoreConfig::Memory`] ([`memory`]): the same checks and answers, nothing kept; every write
//!   completes at once. For tests and benchmarks.
//! - [`StoreConfig::Redis`] ([`redis`]): the log in a Redis shared by every node of a cluster. A
//!   room is *held* by one node at a time: the node that gets a socket for a room it does not
//!   hold *claims* it ([`Store::claim`]), which moves the room's epoch on and fences off every
//!   node that held it before: their appends answer [`StoreError::Fenced`], and so does their
//!   lease renewal ([`Store::renew`]). Nothing is loaded at start ([`Store::load`] answers no
//!   rooms): rooms are claimed when their people come.
//!
//! Writes ([`Store::create_room`], [`Store::append`], [`Store::snapshot`], [`Store::delete_room`],
//! [`Store::set_aside`]) are queued when called, not when first polled: each returns a
//! [`Pending`] future that only waits for the answer, so a write happens even if its future is
//! dropped, and (SQLite, memory) the writes of one caller commit in the order it called them.
//! Redis runs each write as it is called, side by side with the others: writes that a caller
//! awaits one after the other keep their order, so a room awaits each of its writes (its
//! appends, snapshots, deletion, and a finished match's hand history, stored before the match's
//! end is sent to anyone) before the next.
//!
//! Beside the rooms' logs, the store keeps finished matches' hand histories ([`KeptMatch`]) for
//! their players to download, for `--keep-matches` after the match ([`Store::keep_match`],
//! [`Store::find_match`], [`Store::forget_matches`]), whatever becomes of the room.
//!
//! A room that cannot be restored is *set aside*: its rows stay on disk, marked with the reason,
//! and it is never loaded again; every other room is restored. [`Store::load`] reports, in
//! [`Loaded::set_aside`], the rooms it set aside itself, and in [`Loaded::kept_aside`] those set
//! aside before (by an earlier load or by [`Store::set_aside`]), every start, so that a
//! forgotten damaged room stays visible in the logs until someone deletes it.

pub mod memory;
pub mod redis;
pub mod sqlite;

use std::fmt;
use std::future::Future;
use std::path::{Path, PathBuf};
use std::pin::Pin;
use std::sync::Arc;
use std::task::{Context, Poll};
use std::time::Duration;

use tokio::sync::oneshot;

use crate::metrics::Metrics;
/// A finished match's hand history, made by the room beside its records, as the store keeps it.
pub use crate::room::record::KeptMatch;
pub use memory::RoomSlot;

/// The database's file name inside `--data-dir`.
pub const DB_FILE: &str = "dhumbal.db";

/// The lock file inside `--data-dir`: held (an exclusive `flock`) by the one process that
/// writes the room log there, for as long as its store is open; it holds that process's id.
pub const LOCK_FILE: &str = "dhumbal.lock";

/// Which store: `--store memory`, the SQLite log in `--data-dir`, or `--store redis://…`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum StoreConfig {
    /// Nothing kept: rooms are lost when the process ends. For tests and benchmarks.
    Memory,
    /// The log in `<data_dir>/dhumbal.db` ([`DB_FILE`]); the folder is created if missing.
    Sqlite {
        /// The folder that holds the database and its `-wal` and `-shm` files.
        data_dir: PathBuf,
        /// When a commit is on the disk itself (`--sync`).
        sync: SyncMode,
    },
    /// The log in a Redis that every node of a cluster shares ([`redis`]).
    Redis(RedisConfig),
}

impl StoreConfig {
    /// The SQLite log in `data_dir`, with the default `--sync` (`normal`).
    pub fn sqlite(data_dir: &std::path::Path) -> StoreConfig {
        StoreConfig::Sqlite {
            data_dir: data_dir.to_owned(),
            sync: SyncMode::Normal,
        }
    }
}

/// A SQLite store in `dir` (the default `--sync`), with its metrics: for the tests of the store,
/// the registry and the room.
///
/// A store closed in this process lets go of the folder's lock, but not always at once: a store
/// dropped without `close` lets go when its writer thread ends, and a child process another test
/// spawns at that moment (`chattr`, say) holds a copy of every descriptor between its fork and
/// its exec, the lock file's too, and with it the `flock`. On a busy machine either is long
/// enough for a test that reopens its folder to find it locked by its own process id. That one
/// case is waited out (10 s at most); a lock another process holds is still an error.
#[cfg(test)]
pub(crate) fn sqlite_for_tests(dir: &std::path::Path) -> (Store, Arc<Metrics>) {
    let metrics = Arc::new(Metrics::new());
    let ours = format!("process {}", std::process::id());
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(10);
    loop {
        match Store::open(&StoreConfig::sqlite(dir), Arc::clone(&metrics)) {
            Ok(store) => return (store, metrics),
            Err(StoreError::Locked { holder, .. })
                if holder == ours && std::time::Instant::now() < deadline =>
            {
                std::thread::sleep(std::time::Duration::from_millis(10));
            }
            Err(error) => panic!("the store does not open: {error}"),
        }
    }
}

/// What a SQLite commit survives when it is answered (`--sync`): SQLite's `synchronous` in WAL
/// mode.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum SyncMode {
    /// `synchronous=NORMAL` (the default): a commit is in the operating system's hands when it
    /// is answered. A killed process loses nothing answered; a machine that loses power (or
    /// whose kernel crashes) may lose the commits since the WAL was last synced, which the
    /// checkpointer does every half second: the last fraction of a second of moves.
    #[default]
    Normal,
    /// `synchronous=FULL`: the WAL is synced to the disk at every commit before anyone is told
    /// of it, so a power cut loses nothing answered either (on a disk that honours fsync).
    /// Group commit shares each sync among the commit's writes.
    Full,
}

impl SyncMode {
    /// Reads `--sync`: `normal` or `full`.
    pub fn parse(text: &str) -> Result<SyncMode, String> {
        match text {
            "normal" => Ok(SyncMode::Normal),
            "full" => Ok(SyncMode::Full),
            _ => Err(format!(
                "`{text}` is not a sync setting: `normal` or `full`"
            )),
        }
    }

    /// SQLite's name for it.
    fn pragma(self) -> &'static str {
        match self {
            SyncMode::Normal => "NORMAL",
            SyncMode::Full => "FULL",
        }
    }
}

impl fmt::Display for SyncMode {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            SyncMode::Normal => "normal",
            SyncMode::Full => "full",
        })
    }
}

/// Where the Redis store is, who this node is, and how long what it writes lasts.
#[derive(Clone, PartialEq, Eq)]
pub struct RedisConfig {
    /// The server, as `redis://[user:password@]host[:port][/db]`.
    pub url: String,
    /// This node's id, recorded as the owner of the rooms it holds (and the `node` label of its
    /// metrics).
    pub node: String,
    /// How long a claim holds the room without being renewed (`--lease`). A room renews it every
    /// third of it; an append that fails for want of Redis is tried again for this long.
    pub lease: Duration,
    /// How long a room's keys stay once no node writes to them or renews its lease (no node
    /// holds the room): `--idle-room-ttl`, the time a room with nobody connected stays open
    /// (and at least three leases).
    pub room_ttl: Duration,
    /// How long a finished match's hand history is kept (`--keep-matches`): its key expires
    /// then.
    pub keep_matches: Duration,
}

impl fmt::Debug for RedisConfig {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("RedisConfig")
            .field("url", &redis::redacted(&self.url))
            .field("node", &self.node)
            .field("lease", &self.lease)
            .field("room_ttl", &self.room_ttl)
            .field("keep_matches", &self.keep_matches)
            .finish()
    }
}

/// Why the store could not do what it was asked. Cheap to clone, so that one failed commit can
/// answer every write it carried.
#[derive(Clone, Debug, thiserror::Error)]
pub enum StoreError {
    /// A file or folder could not be created, read or renamed.
    #[error("{path}: {source}")]
    Io {
        /// The file or folder.
        path: PathBuf,
        /// What the operating system said.
        source: Arc<std::io::Error>,
    },
    /// SQLite failed (a damaged page, an I/O error). The text is for logs, not for players.
    #[error("SQLite: {0}")]
    Sqlite(Arc<rusqlite::Error>),
    /// The disk (or the database's page cap) is full: the write was not made, and nothing
    /// committed before it was lost. The room that asked cannot go on durably.
    #[error("the disk is full: the write was not committed")]
    Full,
    /// The database was written by a newer version of the server: it is left as it is.
    #[error(
        "{path}: the database has schema version {found}, newer than the {known} this server \
         knows; it was not opened for writing and was not changed (run a newer server, or move \
         the file away to start afresh)"
    )]
    NewerSchema {
        /// The database file.
        path: PathBuf,
        /// Its `PRAGMA user_version`.
        found: u32,
        /// The newest version this binary knows.
        known: u32,
    },
    /// Another process holds the data directory's lock file ([`LOCK_FILE`]): two servers writing
    /// one room log would overwrite each other's rooms, so this one does not start.
    #[error(
        "{dir} is in use by another dhumbal-server ({holder}, which holds {dir}/{LOCK_FILE}); two \
         servers on one data directory would overwrite each other's rooms: stop the other one \
         first, or give this one a --data-dir of its own"
    )]
    Locked {
        /// The data directory.
        dir: PathBuf,
        /// Who holds it, as its lock file says (`process 1234`), for the message.
        holder: String,
    },
    /// The data directory (or the database in it) cannot be written: a read-only mount, an
    /// immutable folder, a file the server may not write. The server refuses to start rather
    /// than say it is ready and lose the first move of every room.
    #[error(
        "the data directory {dir} cannot be written ({detail}); the server keeps its rooms \
         there: make it writable, or give --data-dir a folder it can write"
    )]
    Unwritable {
        /// The data directory.
        dir: PathBuf,
        /// What failed, for the message.
        detail: String,
    },
    /// The store was closed ([`Store::close`]), or its writer thread has ended.
    #[error("the store is closed")]
    Closed,
    /// The write does not fit the room's log: a room that exists already, an input that is not
    /// the room's next, a snapshot of inputs not logged. A bug in the caller, never in the data.
    #[error("{0}")]
    Conflict(String),
    /// No such room in the log (never created, deleted, or set aside).
    #[error("room {0} is not in the store")]
    UnknownRoom(String),
    /// Redis: another node has claimed the room since this node did (or this node never held
    /// it), so this node may not write to its log any more. The room has moved: its clients
    /// reconnect and find it where it is now.
    #[error("room {code} is held by another node now: {detail}")]
    Fenced {
        /// The room's code.
        code: String,
        /// The epochs involved, for logs.
        detail: String,
    },
    /// Redis failed or could not be reached (for as long as the store tries again). The text is
    /// for logs, not for players.
    #[error("Redis: {0}")]
    Redis(Arc<::redis::RedisError>),
    /// Redis: the rooms created from this address and still open, on every node, are as many
    /// as one address may have ([`Creator::most`]); the room was not created.
    #[error("rooms created from {0} are still open, as many as one address may have")]
    TooManyOpen(std::net::IpAddr),
}

/// Who creates a room, for the cap on the rooms one address may have open at once
/// (`--max-rooms-per-address`). One server counts them itself; a shared store counts them for
/// every node ([`Store::create_room_for`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Creator {
    /// The client's address.
    pub address: std::net::IpAddr,
    /// The most rooms it may have open.
    pub most: usize,
}

impl StoreError {
    /// Whether the store could not be reached or cannot write just now (Redis down, or not
    /// answering for as long as the store tries again; a full disk): a failure that passes by
    /// itself, unlike damage. A client is told `store_unavailable`: try again in a moment.
    pub fn is_unreachable(&self) -> bool {
        matches!(self, StoreError::Redis(_) | StoreError::Full)
    }

    /// An I/O error about `path`.
    fn io(path: &Path, source: std::io::Error) -> StoreError {
        StoreError::Io {
            path: path.to_owned(),
            source: Arc::new(source),
        }
    }
}

impl From<rusqlite::Error> for StoreError {
    fn from(error: rusqlite::Error) -> StoreError {
        match error.sqlite_error_code() {
            Some(rusqlite::ErrorCode::DiskFull) => StoreError::Full,
            _ => StoreError::Sqlite(Arc::new(error)),
        }
    }
}

/// One room as loaded at start.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct StoredRoom {
    /// The room's code.
    pub code: String,
    /// The room's setup, as [`Store::create_room`] was given it.
    pub setup: Vec<u8>,
    /// The latest snapshot, if any: (the seq it covers, its blob). Replay starts from it.
    pub snapshot: Option<(u64, Vec<u8>)>,
    /// Every input after the snapshot (or after the setup), in seq order, seq starting at
    /// snapshot seq + 1 (or 1), without gaps.
    pub inputs: Vec<(u64, Vec<u8>)>,
}

impl StoredRoom {
    /// The seq of the room's last input (or of its snapshot; 0 for none): the next append is
    /// this + 1.
    pub fn last_seq(&self) -> u64 {
        self.inputs
            .last()
            .map(|(seq, _)| *seq)
            .or(self.snapshot.as_ref().map(|(seq, _)| *seq))
            .unwrap_or(0)
    }
}

/// What loading found.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Loaded {
    /// Every live room, by code.
    pub rooms: Vec<StoredRoom>,
    /// The rooms this load set aside because their logs do not load: (code, why). Each is
    /// kept on disk, marked, and not loaded again.
    pub set_aside: Vec<(String, String)>,
    /// The rooms set aside before this load (by an earlier load or [`Store::set_aside`]), still
    /// on disk: (code, why). Reported at every start until deleted.
    pub kept_aside: Vec<(String, String)>,
    /// The most inputs the load gathered at once before handing their room on: the largest
    /// room's (SQLite and memory read one room at a time), never the whole log's.
    pub most_inputs_held: usize,
}

/// A write queued in the store, resolving once it has committed (or failed). Dropping it does
/// not cancel the write. `Send`, `Unpin` and `'static`: it borrows nothing from the store.
#[must_use = "a write is committed only when its future answers Ok"]
pub struct Pending {
    /// The answer, already known (memory store, or a failure to queue), or still to come.
    state: PendingState,
}

/// What the SQLite writer answers a write: how it ended, and the buffer the write took (an
/// append's input, emptied; an empty list otherwise), handed back so that its memory makes the
/// room's next entry rather than being freed on the writer's thread.
pub(crate) type Answered = (Result<(), StoreError>, Vec<u8>);

/// Where [`Pending`]'s answer comes from.
enum PendingState {
    /// Known when the write was called; `None` once taken.
    Ready(Option<Result<(), StoreError>>),
    /// Sent by a task of the store (Redis) once the write has ended.
    Waiting(oneshot::Receiver<Result<(), StoreError>>),
    /// Sent by the SQLite writer once the write's transaction has ended, with its buffer.
    Returning(oneshot::Receiver<Answered>),
}

impl Pending {
    /// A write already answered.
    fn ready(result: Result<(), StoreError>) -> Pending {
        Pending {
            state: PendingState::Ready(Some(result)),
        }
    }

    /// A write whose answer a task of the store will send.
    fn waiting(answer: oneshot::Receiver<Result<(), StoreError>>) -> Pending {
        Pending {
            state: PendingState::Waiting(answer),
        }
    }

    /// A write whose answer the SQLite writer will send, with the buffer it took.
    fn returning(answer: oneshot::Receiver<Answered>) -> Pending {
        Pending {
            state: PendingState::Returning(answer),
        }
    }

    /// The answer once known, with the buffer the write took if the store hands it back.
    fn poll_answer(&mut self, cx: &mut Context<'_>) -> Poll<(Result<(), StoreError>, Vec<u8>)> {
        // The store dropped the answer without sending it only when it ended.
        match &mut self.state {
            PendingState::Ready(result) => Poll::Ready((
                result
                    .take()
                    .expect("a Pending is not polled after it answered"),
                Vec::new(),
            )),
            PendingState::Waiting(answer) => Pin::new(answer)
                .poll(cx)
                .map(|answer| (answer.unwrap_or(Err(StoreError::Closed)), Vec::new())),
            PendingState::Returning(answer) => Pin::new(answer)
                .poll(cx)
                .map(|answer| answer.unwrap_or((Err(StoreError::Closed), Vec::new()))),
        }
    }
}

impl fmt::Debug for Pending {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Pending").finish_non_exhaustive()
    }
}

impl Future for Pending {
    type Output = Result<(), StoreError>;

    fn poll(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Self::Output> {
        self.poll_answer(cx).map(|(result, _)| result)
    }
}

/// An append under way ([`Store::append_at`]): answers as [`Pending`] does, and once the store
/// hands back the buffer it took the input in (SQLite), puts it back in the caller's place, so
/// that the room writes its next entry into the same memory: no allocation on the room's
/// thread for it, and no free on the writer's.
#[must_use = "a write is committed only when its future answers Ok"]
pub struct Appending<'a> {
    /// The append's answer.
    pending: Pending,
    /// Where the input came from, and where its buffer goes back.
    buffer: &'a mut Vec<u8>,
}

impl fmt::Debug for Appending<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Appending").finish_non_exhaustive()
    }
}

impl Future for Appending<'_> {
    type Output = Result<(), StoreError>;

    fn poll(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Self::Output> {
        let this = self.get_mut();
        this.pending.poll_answer(cx).map(|(result, returned)| {
            if returned.capacity() > this.buffer.capacity() {
                *this.buffer = returned;
            }
            result
        })
    }
}

/// The room log, in SQLite, in Redis or in memory. Cheap to clone; every clone is the same store.
#[derive(Clone)]
pub struct Store {
    /// The store behind the API, shared by the clones. The SQLite writer thread ends once the
    /// last clone is dropped (after committing what was queued) or at [`Store::close`].
    backend: Arc<Backend>,
}

/// The three stores.
enum Backend {
    /// `--store memory`.
    Memory(memory::MemoryStore),
    /// The SQLite log.
    Sqlite(sqlite::SqliteStore),
    /// The log in Redis, shared by a cluster.
    Redis(redis::RedisStore),
}

impl fmt::Debug for Store {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let kind = match &*self.backend {
            Backend::Memory(_) => "memory",
            Backend::Sqlite(_) => "sqlite",
            Backend::Redis(_) => "redis",
        };
        f.debug_struct("Store").field("kind", &kind).finish()
    }
}

impl Store {
    /// Opens the store. For SQLite: creates the data folder if missing, opens (or creates)
    /// `dhumbal.db`, moves a file that is not a usable database aside (to
    /// `dhumbal.db.damaged-<unix-time>`, with an error log line) and starts a fresh one, runs
    /// the schema migrations this database lacks, and starts the writer thread. Refuses a
    /// database of a newer schema ([`StoreError::NewerSchema`]) without changing it. For
    /// Redis: checks the address and connects when first used (call it inside a Tokio runtime).
    pub fn open(config: &StoreConfig, metrics: Arc<Metrics>) -> Result<Store, StoreError> {
        let backend = match config {
            StoreConfig::Memory => Backend::Memory(memory::MemoryStore::new(metrics)),
            StoreConfig::Sqlite { data_dir, sync } => {
                Backend::Sqlite(sqlite::SqliteStore::open(data_dir, *sync, metrics)?)
            }
            StoreConfig::Redis(config) => {
                Backend::Redis(redis::RedisStore::open(config.clone(), metrics)?)
            }
        };
        Ok(Store {
            backend: Arc::new(backend),
        })
    }

    /// Every live room, and the rooms set aside. Call it once, at start, before serving: it
    /// blocks the calling thread until the writer has read the whole log. A room whose log does
    /// not load (a gap in its inputs, a missing setup, a damaged page) is set aside, reported in
    /// [`Loaded::set_aside`] with the reason, and every other room is loaded.
    ///
    /// Redis answers no rooms (each is claimed by the node its people come to), only the rooms
    /// set aside before, in [`Loaded::kept_aside`]; it waits a few seconds for Redis to answer,
    /// then fails.
    pub fn load(&self) -> Result<Loaded, StoreError> {
        let mut rooms = Vec::new();
        let mut loaded = self.load_each(&mut |room| rooms.push(room))?;
        loaded.rooms = rooms;
        Ok(loaded)
    }

    /// [`Store::load`], one room at a time: `each` gets every live room in turn, in the order
    /// of their codes, on the calling thread, and the answer's [`Loaded::rooms`] is empty. The
    /// store holds one room's inputs at a time (SQLite: and at most two more rooms read ahead,
    /// waiting for `each`), never the whole log, so a start's memory grows with what the rooms
    /// become, not with their logs.
    pub fn load_each(&self, each: &mut dyn FnMut(StoredRoom)) -> Result<Loaded, StoreError> {
        match &*self.backend {
            Backend::Memory(store) => Ok(store.load_each(each)),
            Backend::Sqlite(store) => store.load_each(each),
            Backend::Redis(store) => {
                let mut loaded = store.load()?;
                for room in std::mem::take(&mut loaded.rooms) {
                    each(room);
                }
                Ok(loaded)
            }
        }
    }

    /// Creates a room's log with its setup. [`StoreError::Conflict`] if the code is in the log
    /// already (live or set aside). Redis writes it with epoch 0 and no owner: no node holds it
    /// until one claims it ([`Store::claim`]).
    pub fn create_room(&self, code: &str, setup: Vec<u8>) -> Pending {
        match &*self.backend {
            Backend::Memory(store) => Pending::ready(store.create_room(code, setup)),
            Backend::Sqlite(store) => store.create_room(code, setup),
            Backend::Redis(store) => store.create_room_for(code, setup, None),
        }
    }

    /// [`Store::create_room`], counting the room against its creator's address: a shared store
    /// (Redis) refuses it with [`StoreError::TooManyOpen`] when rooms created from that address
    /// on any node and still open are [`Creator::most`] already. Memory and SQLite count nothing
    /// here: one server counts its creators itself.
    pub fn create_room_for(&self, code: &str, setup: Vec<u8>, creator: Creator) -> Pending {
        match &*self.backend {
            Backend::Redis(store) => store.create_room_for(code, setup, Some(creator)),
            _ => self.create_room(code, setup),
        }
    }

    /// Appends the room's input number `seq`; resolves once it is committed.
    /// [`StoreError::Conflict`] unless `seq` is the room's next (1 for the first input);
    /// [`StoreError::Full`] when the disk is full; [`StoreError::Fenced`] (Redis) when another
    /// node has claimed the room since this node did, or this node never claimed it.
    pub fn append(&self, code: &str, seq: u64, input: Vec<u8>) -> Pending {
        match &*self.backend {
            Backend::Memory(store) => Pending::ready(store.append(code, seq, input)),
            Backend::Sqlite(store) => store.append(code, seq, input),
            Backend::Redis(store) => store.append(code, seq, input),
        }
    }

    /// [`Store::append`] through `slot`, where a room's task keeps the room's place in the
    /// store: the memory store looks the room up once and then takes only the room's own lock
    /// ([`RoomSlot`]), and copies `input`, which is left to the caller for its memory; the
    /// others append by the room's code as [`Store::append`] does, and take `input` (leaving
    /// it empty): SQLite's writer hands its buffer back with the answer, into `input` again.
    pub fn append_at<'a>(
        &self,
        slot: &mut RoomSlot,
        code: &str,
        seq: u64,
        input: &'a mut Vec<u8>,
    ) -> Appending<'a> {
        let pending = match &*self.backend {
            Backend::Memory(store) => Pending::ready(store.append_at(slot, code, seq, input)),
            _ => self.append(code, seq, std::mem::take(input)),
        };
        Appending {
            pending,
            buffer: input,
        }
    }

    /// Records the room's state after input `seq` and deletes its inputs up to `seq`: replay
    /// starts from here. [`StoreError::Conflict`] if `seq` is past the room's last input or
    /// before its latest snapshot.
    pub fn snapshot(&self, code: &str, seq: u64, state: Vec<u8>) -> Pending {
        match &*self.backend {
            Backend::Memory(store) => Pending::ready(store.snapshot(code, seq, state)),
            Backend::Sqlite(store) => store.snapshot(code, seq, state),
            Backend::Redis(store) => store.snapshot(code, seq, state),
        }
    }

    /// Deletes everything about the room (a room closed for good, live or set aside). Deleting
    /// a room that is not there is not an error. Redis deletes a room this node claimed only
    /// while this node still holds it ([`StoreError::Fenced`] otherwise), and any other room
    /// as it is.
    pub fn delete_room(&self, code: &str) -> Pending {
        match &*self.backend {
            Backend::Memory(store) => Pending::ready(store.delete_room(code)),
            Backend::Sqlite(store) => store.delete_room(code),
            Backend::Redis(store) => store.delete_room(code),
        }
    }

    /// Sets the room aside: its rows stay on disk, marked with `why`, and it is never loaded
    /// again (only reported, in [`Loaded::kept_aside`]); writes to it answer
    /// [`StoreError::UnknownRoom`]. For a room whose log the room layer could not replay.
    pub fn set_aside(&self, code: &str, why: &str) -> Pending {
        match &*self.backend {
            Backend::Memory(store) => Pending::ready(store.set_aside(code, why)),
            Backend::Sqlite(store) => store.set_aside(code, why),
            Backend::Redis(store) => store.set_aside(code, why),
        }
    }

    /// Keeps a finished match's hand history, from now, unless one is kept for that match
    /// already (keeping it again, after a restart, changes nothing).
    pub fn keep_match(&self, kept: KeptMatch) -> Pending {
        match &*self.backend {
            Backend::Memory(store) => Pending::ready(store.keep_match(kept)),
            Backend::Sqlite(store) => store.keep_match(kept),
            Backend::Redis(store) => store.keep_match(kept),
        }
    }

    /// The hand history kept for match `number` of room `code`, if any (after every write
    /// queued before).
    pub async fn find_match(
        &self,
        code: &str,
        number: u32,
    ) -> Result<Option<KeptMatch>, StoreError> {
        match &*self.backend {
            Backend::Memory(store) => Ok(store.find_match(code, number)),
            Backend::Sqlite(store) => store.find_match(code, number).await,
            Backend::Redis(store) => store.find_match(code, number).await,
        }
    }

    /// Deletes the hand histories of matches that ended more than `keep` ago.
    pub fn forget_matches(&self, keep: std::time::Duration) -> Pending {
        match &*self.backend {
            Backend::Memory(store) => Pending::ready(store.forget_matches(keep)),
            Backend::Sqlite(store) => store.forget_matches(keep),
            Backend::Redis(store) => store.forget_matches(keep),
        }
    }

    /// Whether the store can write now: false from a commit that failed for the store's own
    /// reason (a full disk, an I/O error) until a write succeeds again, which a SQLite store
    /// tries by itself every second. `/readyz` answers 503 while it is false, and the rooms whose
    /// appends failed wait for it ([`crate::room`]). Always true for memory and Redis (whose
    /// rooms stop and are claimed again instead).
    pub fn is_writable(&self) -> bool {
        match &*self.backend {
            Backend::Sqlite(store) => store.is_writable(),
            Backend::Memory(_) | Backend::Redis(_) => true,
        }
    }

    /// One room's log as committed, to put a room back as its log has it after an append
    /// failed (SQLite, memory), without claiming it: [`Store::peek`] in a shared store. `None`
    /// when it is not a live room.
    pub async fn reload(&self, code: &str) -> Result<Option<StoredRoom>, StoreError> {
        match &*self.backend {
            Backend::Memory(store) => Ok(store.reload(code)),
            Backend::Sqlite(store) => store.reload(code).await,
            Backend::Redis(store) => store.peek(code).await,
        }
    }

    /// Whether what is committed survives the process: false for the memory store.
    pub fn is_durable(&self) -> bool {
        matches!(&*self.backend, Backend::Sqlite(_) | Backend::Redis(_))
    }

    /// Whether other nodes share this store (Redis): a room this node does not hold may be in
    /// it, to be claimed ([`Store::claim`]) or looked at ([`Store::peek`]).
    pub fn is_shared(&self) -> bool {
        matches!(&*self.backend, Backend::Redis(_))
    }

    /// This node's id in a shared store.
    pub fn node(&self) -> Option<&str> {
        match &*self.backend {
            Backend::Redis(store) => Some(store.node()),
            Backend::Memory(_) | Backend::Sqlite(_) => None,
        }
    }

    /// How long a claim holds without renewal, in a shared store: a room held here renews it
    /// ([`Store::renew`]) every third of it.
    pub fn lease(&self) -> Option<Duration> {
        match &*self.backend {
            Backend::Redis(store) => Some(store.lease()),
            Backend::Memory(_) | Backend::Sqlite(_) => None,
        }
    }

    /// Claims the room for this node: moves its epoch on (every node that held it before is
    /// fenced off from then), records this node as its owner with a lease, and answers its log
    /// to restore it from, as [`Store::load`] would have. From here on this node's appends carry
    /// the new epoch. `None` when no such room is in the store (or it is set aside); a log with
    /// a gap answers [`StoreError::Conflict`]. Only a shared store holds rooms it did not
    /// create: the others answer `None`.
    pub async fn claim(&self, code: &str) -> Result<Option<StoredRoom>, StoreError> {
        match &*self.backend {
            Backend::Redis(store) => store.claim(code).await,
            Backend::Memory(_) | Backend::Sqlite(_) => Ok(None),
        }
    }

    /// The room's log as committed, without claiming it (to describe a room held by another
    /// node). `None` when it is not in the store; always `None` but in a shared store.
    pub async fn peek(&self, code: &str) -> Result<Option<StoredRoom>, StoreError> {
        match &*self.backend {
            Backend::Redis(store) => store.peek(code).await,
            Backend::Memory(_) | Backend::Sqlite(_) => Ok(None),
        }
    }

    /// Renews this node's lease on a room it claimed. [`StoreError::Fenced`] when another node
    /// has claimed it since (the room must stop: it has moved); another error when Redis could
    /// not be reached (try again at the next renewal). Always `Ok` but in a shared store.
    pub async fn renew(&self, code: &str) -> Result<(), StoreError> {
        match &*self.backend {
            Backend::Redis(store) => store.renew(code).await,
            Backend::Memory(_) | Backend::Sqlite(_) => Ok(()),
        }
    }

    /// This node lets go of a room it held (the room stopped, and its log stays): it forgets the
    /// room's epoch, and gives up the owner's lease unless another node claimed the room since.
    /// Nothing to do but in a shared store.
    pub fn release(&self, code: &str) -> Pending {
        match &*self.backend {
            Backend::Redis(store) => store.release(code),
            Backend::Memory(_) | Backend::Sqlite(_) => Pending::ready(Ok(())),
        }
    }

    /// Commits every write queued before it, closes the database and ends the writer thread.
    /// Writes after it answer [`StoreError::Closed`]. Closing twice is harmless.
    pub async fn close(&self) {
        match &*self.backend {
            Backend::Memory(_) => {}
            Backend::Sqlite(store) => store.close().await,
            Backend::Redis(store) => store.close().await,
        }
    }
}

/// What the stores check before a write, from what they know of the room.
mod check {
    use super::StoreError;

    /// `seq` must follow `last`.
    pub(super) fn next_seq(code: &str, last: u64, seq: u64) -> Result<(), StoreError> {
        if seq == last + 1 {
            Ok(())
        } else {
            Err(StoreError::Conflict(format!(
                "room {code}: input {seq} is not the next; the last input is {last}"
            )))
        }
    }

    /// A snapshot at `seq` must cover logged inputs only, and not go back before the latest
    /// snapshot (`snapshot`).
    pub(super) fn snapshot_seq(
        code: &str,
        last: u64,
        snapshot: u64,
        seq: u64,
    ) -> Result<(), StoreError> {
        if seq > last {
            Err(StoreError::Conflict(format!(
                "room {code}: a snapshot at {seq} is past the last input, {last}"
            )))
        } else if seq < snapshot {
            Err(StoreError::Conflict(format!(
                "room {code}: a snapshot at {seq} is older than the latest, at {snapshot}"
            )))
        } else {
            Ok(())
        }
    }

    /// The room exists already.
    pub(super) fn exists(code: &str) -> StoreError {
        StoreError::Conflict(format!("room {code} is in the store already"))
    }
}

#[cfg(test)]
mod tests;
