//! The room log in SQLite: `<data-dir>/dhumbal.db`, in WAL mode with `synchronous=NORMAL`
//! (`--sync normal`, the default) or `FULL` (`--sync full`: [`SyncMode`]).
//!
//! **One writer thread** owns the only connection. Callers queue their writes on a channel and
//! wait on a oneshot; the thread takes whatever is queued (up to [`MAX_BATCH`] writes, having
//! yielded its CPU once so that writes being made elsewhere join them), runs it in one
//! transaction and answers every write once that transaction has committed: group commit, so
//! that many rooms writing at once cost one commit, not one each. In WAL mode with
//! `synchronous=NORMAL` a commit is in the operating system's hands when it returns: a process
//! killed at any moment keeps every committed write (a power cut may lose the commits since the
//! WAL was last synced, never corrupt the file). With `synchronous=FULL` the WAL is synced at
//! every commit, before its writes are answered, so a power cut loses none of them either. [`SqliteStore::load_each`] runs on the same thread, so nothing else ever writes.
//!
//! The schema is versioned by `PRAGMA user_version`: `MIGRATIONS` lists the SQL steps in order,
//! and a database at version `v` gets steps `v..` in one transaction. A database of a version
//! newer than it knows is refused ([`StoreError::NewerSchema`]) after being read
//! through a read-only connection only, so it is never changed.
//!
//! A file that is not a usable database at all (not SQLite, a damaged header, a truncated file,
//! an unreadable list of rooms) is renamed `dhumbal.db.damaged-<unix-time>` with its `-wal` and
//! `-shm`, an error is logged naming the new path, and a fresh database is started. Damage that
//! touches some rooms only is found by [`SqliteStore::load_each`]: those rooms are set aside, the
//! others load. (A page of `log` that cannot be read sets every room aside: with no index by
//! room, nothing says whose inputs it held, and a room loaded without them would have gone back
//! in time.)
//!
//! # Schema (version 5)
//!
//! - `rooms(code, setup, created)`: one row per room, its setup.
//! - `log(id, code, seq, input)`: every room's inputs, in the order they were appended, with no
//!   index but the id. Since version 5 a trigger (`log_in_order`) refuses a row whose seq is not
//!   its room's next, by `heads(code, seq)`, each room's last seq: an input logged twice (or a
//!   gap) is impossible whoever writes it (the data directory's lock keeps a second server out;
//!   this keeps out anything else). A commit of many rooms' appends writes the end of one table: one or two
//!   pages of the WAL, where a table ordered by room would take a page for every room in the
//!   commit. Nothing is ever moved. Rows die when a snapshot covers them or their room is
//!   deleted (`DEAD`), and a pass collects them once they outnumber the live rows by
//!   [`CLEAN_AT`], a step of [`CLEAN_STEP`] ids after each commit, so that no append waits for
//!   a whole pass; a load collects them all at once. With no index by room, the writer keeps
//!   each room's last seq and snapshot seq in memory, and a load reads `log` once, sorted by
//!   room, handing each room on as soon as its rows are read (one room's rows held at a time).
//!   Until version 3 appends went to `recent` and were merged into `inputs(code, seq, input)`,
//!   ordered by room, in rounds of slices (found through an index on the code's first
//!   character): merging was a third of the writer's time, and it wrote every input twice.
//!   Measured under `loadgen play --store sqlite` (2 cores, the writer thread's CPU over 30 s of
//!   a 70 s run, passes collecting 1.2 million dead rows): 4.5 µs an append, against 7.0–9.0
//!   with the merges; the checkpointer's 0.3 µs against 1.0.
//! - `deleted(code)`: rooms deleted whose rows a pass has yet to collect. Their codes stay taken
//!   until then, so that a new room given one never takes the old room's rows for its own; a
//!   pass frees the rooms deleted before it began, once it has read its last id.
//! - `matches(code, number, finished, commitment, tokens, history)`: finished matches' hand
//!   histories, for `--keep-matches`.
//! - `snapshots(code, seq, state)`: the room's latest snapshot, covering its inputs up to `seq`.
//! - `set_aside(code, why, at)`: the rooms not to load again, with the reason and the time.
//! - `heads(code, seq)`: each room's last seq (a snapshot's, when no input follows it), kept by
//!   the trigger on `log`; a row a room, so that a commit touches few pages of it.
//! - `duplicates(id, code, seq, input)`: the second copies of inputs found by the migration to
//!   version 5 (two processes had written one log), kept on disk; their rooms are set aside.
//!
//! # The data directory
//!
//! [`SqliteStore::open`] first takes the folder's lock ([`LOCK_FILE`](super::LOCK_FILE), an exclusive `flock`
//! held while the writer runs) and refuses to start ([`StoreError::Locked`]) while another
//! process holds it; then it checks that a file can be made there and that the database can be
//! written, refusing a read-only folder or database ([`StoreError::Unwritable`]). A `-wal`
//! beside a database file that is missing or empty is moved aside with it as damaged, never
//! deleted (SQLite would take the empty file for a new database and delete the WAL).
//!
//! The WAL is checkpointed by a thread of its own (`checkpointer`), which asks the writer to
//! restart it when it has grown (`Writer::restart_wal`).
//!
//! # Its parts
//!
//! - this file: [`SqliteStore`], the handle the rest of the server calls, and the commands it
//!   queues for the writer;
//! - `schema.rs`: `MIGRATIONS`, the checks every start reads, and the
//!   migration;
//! - `open.rs`: the data directory's lock, the probes that it can be written, a damaged
//!   database moved aside;
//! - `writer.rs`: the writer thread (group commits, passes collecting dead rows, the WAL's
//!   checkpoints and restarts, the probes while the disk is full);
//! - `load.rs`: every room's log read back at start, or one room's on demand.

mod load;
mod open;
pub(super) mod schema;
mod writer;

use std::cell::{Cell, RefCell};
use std::path::Path;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc::{self, Sender, SyncSender};
use std::sync::{Arc, Mutex};
use std::thread::{self, JoinHandle};
use std::time::{Duration, Instant};

use rusqlite::ErrorCode;
use tokio::sync::oneshot;

use super::{Answered, DB_FILE, KeptMatch, Loaded, Pending, StoreError, StoredRoom, SyncMode};
use crate::metrics::Metrics;
use open::{
    Opening, lock, move_aside, open_database, orphaned_wal, probe_database, probe_folder,
    unwritable,
};
use writer::{Writer, checkpointer};

/// What makes a row of `log` dead, as an SQL condition on it: its room was deleted, or a
/// snapshot covers it.
const DEAD: &str = "(code IN (SELECT code FROM deleted)
     OR seq <= coalesce((SELECT s.seq FROM snapshots s WHERE s.code = log.code), 0))";

/// How many more dead rows `log` must hold than live ones before a pass collects them: a pass
/// reads every row, so this keeps it to two rows read or fewer for each one it deletes (small in
/// unit tests, so that they cross passes often).
#[cfg(not(test))]
pub const CLEAN_AT: u64 = 8_192;
/// How many more dead rows `log` must hold than live ones before a pass collects them (small in
/// unit tests, so that they cross passes often).
#[cfg(test)]
pub const CLEAN_AT: u64 = 3;

/// How many ids of `log` one step of a pass reads: one step, in a transaction of its own, after
/// each commit, so that no append waits for a whole pass (two in unit tests). Steps of 4,096
/// held the appends for 2.7 ms at the median and up to 13.6 ms; of 1,024, for 0.7 ms and up to
/// 6.6 ms, with the same paced p99 (`loadgen play --think-ms 20 --store sqlite`, two runs each).
#[cfg(not(test))]
pub const CLEAN_STEP: i64 = 1_024;
/// How many ids of `log` one step of a pass reads (two in unit tests).
#[cfg(test)]
pub const CLEAN_STEP: i64 = 2;

/// A row of `log` as read: its seq (unchecked) and its input.
type Row = (i64, Vec<u8>);

/// A pass over `log` under way, deleting its dead rows a step at a time.
#[derive(Debug)]
struct Pass {
    /// The first id the next step reads.
    next: i64,
    /// The pass's last id: rows appended since wait for the next pass.
    last: i64,
    /// The rooms deleted before the pass began: once it has read its last id, every row of
    /// theirs is gone and their codes may be used again.
    deleted: Vec<String>,
}

/// The most writes one transaction carries, so that one commit's latency stays bounded when a
/// burst is queued.
pub const MAX_BATCH: usize = 1024;

/// How long a statement waits for a lock another connection holds (only an operator's `sqlite3`
/// shell could hold one: the writer is the only connection that writes, and the checkpointer's
/// PASSIVE checkpoints never hold it off).
const BUSY_TIMEOUT: Duration = Duration::from_secs(5);

/// The SQLite store: the queue to the writer thread.
#[derive(Debug)]
pub struct SqliteStore {
    /// Where the writes go. Dropped with the last [`super::Store`] clone, which ends the writer
    /// once it has committed what was queued.
    commands: Sender<Command>,
    /// The writer thread, taken by [`SqliteStore::close`] to join it.
    writer: Mutex<Option<JoinHandle<()>>>,
    /// Whether the last commit (or probe) succeeded: false from a commit that failed for the
    /// database's own reason (a full disk, an I/O error) until a write succeeds again.
    writable: Arc<AtomicBool>,
}

/// What the writer sends back while it loads: each room as it is read, then the end.
enum Loading {
    /// A live room.
    Room(StoredRoom),
    /// The load's end: what it found besides the rooms (its `rooms` empty), or why it failed.
    Done(Result<Loaded, StoreError>),
}

/// How many rooms the writer may have read ahead of the caller, which replays each: the rooms
/// held at once during a load are these and the one the writer is reading.
const LOAD_AHEAD: usize = 2;

/// What the writer thread is asked.
enum Command {
    /// A write, answered once its transaction has ended.
    Write(Write),
    /// Read every room (after committing what was queued before), sending each as it is read.
    Load(SyncSender<Loading>),
    /// Commit what was queued, close the database, answer, and end.
    Close(oneshot::Sender<()>),
    /// Read a kept match (after committing what was queued before).
    FindMatch {
        code: String,
        number: u32,
        answer: oneshot::Sender<Result<Option<KeptMatch>, StoreError>>,
    },
    /// Read one room's log as committed (after committing what was queued before).
    Reload {
        code: String,
        answer: oneshot::Sender<Result<Option<StoredRoom>, StoreError>>,
    },
    /// Run something on the writer's connection (tests: a page cap to fill the disk).
    #[cfg(test)]
    With(Box<dyn FnOnce(&rusqlite::Connection) + Send>),
}

/// One queued write.
struct Write {
    /// What to write.
    op: Op,
    /// When it was called, for the append latency.
    started: Instant,
    /// Where its answer goes, with the buffer it took; the caller may have stopped listening.
    answer: oneshot::Sender<Answered>,
}

/// The writes.
#[derive(Debug)]
enum Op {
    /// A new room with its setup.
    Create { code: String, setup: Vec<u8> },
    /// The room's next input.
    Append {
        code: String,
        seq: u64,
        input: Vec<u8>,
    },
    /// The room's state after input `seq`; its inputs up to `seq` go.
    Snapshot {
        code: String,
        seq: u64,
        state: Vec<u8>,
    },
    /// Everything about the room goes.
    Delete { code: String },
    /// The room is marked not to load again.
    SetAside { code: String, why: String },
    /// A finished match's hand history, unless kept already.
    KeepMatch(Box<KeptMatch>),
    /// The hand histories of matches that ended more than this many seconds ago go.
    ForgetMatches { keep_secs: i64 },
}

impl SqliteStore {
    /// Opens (or creates) `<data_dir>/dhumbal.db`, moving an unusable file aside, migrates it and
    /// starts the writer thread.
    pub fn open(
        data_dir: &Path,
        sync: SyncMode,
        metrics: Arc<Metrics>,
    ) -> Result<SqliteStore, StoreError> {
        std::fs::create_dir_all(data_dir).map_err(|e| unwritable(data_dir, "creating it", e))?;
        // Before anything in the folder is read or changed: another process may be writing it.
        let lock = lock(data_dir)?;
        probe_folder(data_dir)?;
        let path = data_dir.join(DB_FILE);
        if let Some(orphan) = orphaned_wal(&path) {
            metrics.store_errors.increment(1);
            let moved = move_aside(&path)?;
            tracing::error!(
                path = %path.display(),
                moved_to = %moved.display(),
                wal_bytes = orphan,
                "the room log's database is empty or missing beside a WAL of {orphan} bytes \
                 (saved rooms, without the database they belong to): moved both to {} and \
                 started a fresh one; the rooms in them are not restored",
                moved.display()
            );
        }
        let conn = match open_database(&path, sync) {
            Ok(conn) => conn,
            Err(Opening::Damaged(error)) => {
                metrics.store_errors.increment(1);
                let moved = move_aside(&path)?;
                tracing::error!(
                    path = %path.display(),
                    moved_to = %moved.display(),
                    %error,
                    "the room log is not a usable database: moved it to {} and started a fresh \
                     one; the rooms in it are not restored",
                    moved.display()
                );
                open_database(&path, sync).map_err(Opening::into_error)?
            }
            Err(Opening::Failed(StoreError::Sqlite(error)))
                if matches!(
                    error.sqlite_error_code(),
                    Some(ErrorCode::ReadOnly | ErrorCode::PermissionDenied)
                ) =>
            {
                // SQLite opens a file it may not write read-only, and fails at the first write.
                return Err(StoreError::Unwritable {
                    dir: data_dir.to_owned(),
                    detail: format!("writing {DB_FILE}: {error}"),
                });
            }
            Err(Opening::Failed(error)) => return Err(error),
        };
        let writable = Arc::new(AtomicBool::new(probe_database(&conn, data_dir)?));
        let (commands, queue) = mpsc::channel();
        let (stop_checkpoints, stopped) = mpsc::channel();
        let checkpoint_path = path.clone();
        let restart = Arc::new(AtomicBool::new(false));
        let file = Arc::new(std::fs::File::open(&path).map_err(|e| StoreError::io(&path, e))?);
        let checkpoints = thread::Builder::new()
            .name("dhumbal-checkpoint".into())
            .spawn({
                let (restart, metrics, file) = (
                    Arc::clone(&restart),
                    Arc::clone(&metrics),
                    Arc::clone(&file),
                );
                move || checkpointer(&checkpoint_path, &file, &stopped, &restart, &metrics)
            })
            .map_err(|e| StoreError::io(&path, e))?;
        let (shared, folder) = (Arc::clone(&writable), data_dir.to_owned());
        let writer = thread::Builder::new()
            .name("dhumbal-store".into())
            .spawn(move || {
                Writer {
                    conn,
                    metrics,
                    positions: RefCell::default(),
                    live: Cell::default(),
                    dead: Cell::default(),
                    pass: RefCell::default(),
                    checkpoints: Some((stop_checkpoints, checkpoints)),
                    restart,
                    file,
                    lock,
                    writable: shared,
                    data_dir: folder,
                }
                .run(&queue)
            })
            .map_err(|e| StoreError::io(&path, e))?;
        Ok(SqliteStore {
            commands,
            writer: Mutex::new(Some(writer)),
            writable,
        })
    }

    /// Queues a write.
    fn write(&self, op: Op) -> Pending {
        let (answer, answered) = oneshot::channel();
        let write = Write {
            op,
            started: Instant::now(),
            answer,
        };
        match self.commands.send(Command::Write(write)) {
            Ok(()) => Pending::returning(answered),
            Err(_) => Pending::ready(Err(StoreError::Closed)),
        }
    }

    /// See [`super::Store::load_each`]; blocks until the writer has read every room, calling
    /// `each` on this thread as each arrives.
    pub fn load_each(&self, each: &mut dyn FnMut(StoredRoom)) -> Result<Loaded, StoreError> {
        let (answer, answered) = mpsc::sync_channel(LOAD_AHEAD);
        self.commands
            .send(Command::Load(answer))
            .map_err(|_| StoreError::Closed)?;
        loop {
            match answered.recv().map_err(|_| StoreError::Closed)? {
                Loading::Room(room) => each(room),
                Loading::Done(result) => return result,
            }
        }
    }

    /// See [`super::Store::create_room`].
    pub fn create_room(&self, code: &str, setup: Vec<u8>) -> Pending {
        self.write(Op::Create {
            code: code.to_owned(),
            setup,
        })
    }

    /// See [`super::Store::append`].
    pub fn append(&self, code: &str, seq: u64, input: Vec<u8>) -> Pending {
        self.write(Op::Append {
            code: code.to_owned(),
            seq,
            input,
        })
    }

    /// See [`super::Store::snapshot`].
    pub fn snapshot(&self, code: &str, seq: u64, state: Vec<u8>) -> Pending {
        self.write(Op::Snapshot {
            code: code.to_owned(),
            seq,
            state,
        })
    }

    /// See [`super::Store::delete_room`].
    pub fn delete_room(&self, code: &str) -> Pending {
        self.write(Op::Delete {
            code: code.to_owned(),
        })
    }

    /// See [`super::Store::set_aside`].
    pub fn set_aside(&self, code: &str, why: &str) -> Pending {
        self.write(Op::SetAside {
            code: code.to_owned(),
            why: why.to_owned(),
        })
    }

    /// See [`super::Store::keep_match`].
    pub fn keep_match(&self, kept: KeptMatch) -> Pending {
        self.write(Op::KeepMatch(Box::new(kept)))
    }

    /// See [`super::Store::find_match`].
    pub async fn find_match(
        &self,
        code: &str,
        number: u32,
    ) -> Result<Option<KeptMatch>, StoreError> {
        let (answer, answered) = oneshot::channel();
        let command = Command::FindMatch {
            code: code.to_owned(),
            number,
            answer,
        };
        self.commands
            .send(command)
            .map_err(|_| StoreError::Closed)?;
        answered.await.map_err(|_| StoreError::Closed)?
    }

    /// See [`super::Store::is_writable`].
    pub fn is_writable(&self) -> bool {
        self.writable.load(Ordering::SeqCst)
    }

    /// See [`super::Store::reload`].
    pub async fn reload(&self, code: &str) -> Result<Option<StoredRoom>, StoreError> {
        let (answer, answered) = oneshot::channel();
        let command = Command::Reload {
            code: code.to_owned(),
            answer,
        };
        self.commands
            .send(command)
            .map_err(|_| StoreError::Closed)?;
        answered.await.map_err(|_| StoreError::Closed)?
    }

    /// See [`super::Store::forget_matches`].
    pub fn forget_matches(&self, keep: Duration) -> Pending {
        let keep_secs = i64::try_from(keep.as_secs()).unwrap_or(i64::MAX);
        self.write(Op::ForgetMatches { keep_secs })
    }

    /// See [`super::Store::close`].
    pub async fn close(&self) {
        let writer = self
            .writer
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .take();
        let Some(writer) = writer else { return };
        let (answer, answered) = oneshot::channel();
        if self.commands.send(Command::Close(answer)).is_ok() {
            // An Err means the writer has ended without answering: it panicked.
            let _ = answered.await;
        }
        match tokio::task::spawn_blocking(move || writer.join()).await {
            Ok(Ok(())) => {}
            _ => tracing::error!("the room log's writer thread panicked"),
        }
    }

    /// Runs `f` on the writer's connection, after what was queued before.
    #[cfg(test)]
    pub(super) fn with_connection(&self, f: impl FnOnce(&rusqlite::Connection) + Send + 'static) {
        let (done, finished) = mpsc::sync_channel(1);
        let command = Command::With(Box::new(move |conn| {
            f(conn);
            let _ = done.send(());
        }));
        self.commands.send(command).expect("the writer is running");
        finished.recv().expect("the writer ran it");
    }
}
