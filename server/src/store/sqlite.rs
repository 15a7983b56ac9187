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
//! every commit, before its writes are answered, so a power cut loses none of them either. [`SqliteStore::load`] runs on the same thread, so nothing else ever writes.
//!
//! The schema is versioned by `PRAGMA user_version`: [`MIGRATIONS`] lists the SQL steps in order,
//! and a database at version `v` gets steps `v..` in one transaction. A database of a version
//! newer than [`MIGRATIONS`] knows is refused ([`StoreError::NewerSchema`]) after being read
//! through a read-only connection only, so it is never changed.
//!
//! A file that is not a usable database at all (not SQLite, a damaged header, a truncated file,
//! an unreadable list of rooms) is renamed `dhumbal.db.damaged-<unix-time>` with its `-wal` and
//! `-shm`, an error is logged naming the new path, and a fresh database is started. Damage that
//! touches some rooms only is found by [`SqliteStore::load`]: those rooms are set aside, the
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
//!   each room's last seq and snapshot seq in memory, and a load reads `log` once, gathering
//!   each room's rows.
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
//! [`SqliteStore::open`] first takes the folder's lock ([`LOCK_FILE`], an exclusive `flock`
//! held while the writer runs) and refuses to start ([`StoreError::Locked`]) while another
//! process holds it; then it checks that a file can be made there and that the database can be
//! written, refusing a read-only folder or database ([`StoreError::Unwritable`]). A `-wal`
//! beside a database file that is missing or empty is moved aside with it as damaged, never
//! deleted (SQLite would take the empty file for a new database and delete the WAL).
//!
//! The WAL is checkpointed by a thread of its own (`checkpointer`), which asks the writer to
//! restart it when it has grown (`Writer::restart_wal`).

use std::cell::{Cell, RefCell};
use std::collections::{HashMap, HashSet};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc::{self, Receiver, Sender, SyncSender};
use std::sync::{Arc, Mutex};
use std::thread::{self, JoinHandle};
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use rusqlite::{
    Connection, ErrorCode, OpenFlags, OptionalExtension, Transaction, TransactionBehavior, params,
};
use tokio::sync::oneshot;

use super::{
    DB_FILE, KeptMatch, LOCK_FILE, Loaded, Pending, StoreError, StoredRoom, SyncMode, check,
};
use crate::metrics::{Hold, Metrics};

/// The schema steps, in order: step `i` takes the database from version `i` to `i + 1`. Append
/// new steps; never edit one that has shipped.
pub const MIGRATIONS: &[&str] = &[
    // 1: the room log.
    "CREATE TABLE rooms (
         code TEXT PRIMARY KEY NOT NULL,
         setup BLOB NOT NULL,
         created INTEGER NOT NULL
     ) STRICT;
     CREATE TABLE inputs (
         code TEXT NOT NULL,
         seq INTEGER NOT NULL,
         input BLOB NOT NULL,
         PRIMARY KEY (code, seq)
     ) STRICT, WITHOUT ROWID;
     CREATE TABLE snapshots (
         code TEXT PRIMARY KEY NOT NULL,
         seq INTEGER NOT NULL,
         state BLOB NOT NULL
     ) STRICT;
     CREATE TABLE set_aside (
         code TEXT PRIMARY KEY NOT NULL,
         why TEXT NOT NULL,
         at INTEGER NOT NULL
     ) STRICT;",
    // 2: finished matches' hand histories, kept for `--keep-matches`.
    "CREATE TABLE matches (
         code TEXT NOT NULL,
         number INTEGER NOT NULL,
         finished INTEGER NOT NULL,
         commitment TEXT NOT NULL,
         tokens TEXT NOT NULL,
         history TEXT NOT NULL,
         PRIMARY KEY (code, number)
     ) STRICT;
     CREATE INDEX matches_by_finish ON matches (finished);",
    // 3: appends land in `recent`, in arrival order, and are merged into `inputs` in bulk.
    "CREATE TABLE recent (
         id INTEGER PRIMARY KEY,
         code TEXT NOT NULL,
         seq INTEGER NOT NULL,
         input BLOB NOT NULL
     ) STRICT;
     CREATE INDEX recent_by_slice ON recent (unicode(code) % 8);",
    // 4: one table, `log`, in arrival order: no merge into `inputs`, and no index to keep. An
    // input in both tables (merged, not yet deleted from `recent`) is the same in both: it is
    // kept once.
    "DROP INDEX recent_by_slice;
     DELETE FROM recent WHERE EXISTS
         (SELECT 1 FROM inputs i WHERE i.code = recent.code AND i.seq = recent.seq);
     INSERT INTO recent (code, seq, input) SELECT code, seq, input FROM inputs ORDER BY code, seq;
     DROP TABLE inputs;
     ALTER TABLE recent RENAME TO log;
     CREATE TABLE deleted (code TEXT PRIMARY KEY NOT NULL) STRICT;",
    // 5: no input logged twice (two processes once wrote one log). Any second copy there is
    // (every copy after the first appended) moves to `duplicates`, kept on disk, and its room is
    // set aside: which copy the players saw is not known. From here on `heads` holds each room's
    // last seq and a trigger refuses any input that is not its room's next. (A unique index on
    // `log (code, seq)` would do it too, but writes a page for every room in a commit; `heads`
    // is a row a room, hundreds of rooms to a page.)
    "CREATE TABLE duplicates (
         id INTEGER PRIMARY KEY,
         code TEXT NOT NULL,
         seq INTEGER NOT NULL,
         input BLOB NOT NULL
     ) STRICT;
     INSERT INTO duplicates (id, code, seq, input)
         SELECT l.id, l.code, l.seq, l.input FROM log l
         JOIN (SELECT code, seq, min(id) AS first FROM log
               GROUP BY code, seq HAVING count(*) > 1) d
             ON d.code = l.code AND d.seq = l.seq AND l.id > d.first;
     DELETE FROM log WHERE id IN (SELECT id FROM duplicates);
     INSERT OR IGNORE INTO set_aside (code, why, at)
         SELECT code, 'two processes wrote its log at once: input ' || min(seq) ||
                ' is logged twice (the later copies are kept in the table duplicates)',
                unixepoch()
         FROM duplicates GROUP BY code;
     CREATE TABLE heads (code TEXT PRIMARY KEY NOT NULL, seq INTEGER NOT NULL) STRICT;
     INSERT INTO heads (code, seq)
         SELECT r.code, max(coalesce((SELECT max(seq) FROM log l WHERE l.code = r.code), 0),
                            coalesce((SELECT seq FROM snapshots s WHERE s.code = r.code), 0))
         FROM rooms r;
     DELETE FROM heads WHERE seq = 0;
     CREATE TRIGGER log_in_order BEFORE INSERT ON log
     BEGIN
         SELECT RAISE(ABORT, 'an input that is not its room''s next')
         WHERE NEW.seq IS NOT coalesce((SELECT seq FROM heads WHERE code = NEW.code), 0) + 1;
         INSERT INTO heads (code, seq) VALUES (NEW.code, NEW.seq)
             ON CONFLICT (code) DO UPDATE SET seq = excluded.seq;
     END;",
];

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

/// What the writer thread is asked.
enum Command {
    /// A write, answered once its transaction has ended.
    Write(Write),
    /// Read every room (after committing what was queued before).
    Load(SyncSender<Result<Loaded, StoreError>>),
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
    With(Box<dyn FnOnce(&Connection) + Send>),
}

/// One queued write.
struct Write {
    /// What to write.
    op: Op,
    /// When it was called, for the append latency.
    started: Instant,
    /// Where its answer goes; the caller may have stopped listening.
    answer: oneshot::Sender<Result<(), StoreError>>,
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
            Ok(()) => Pending::waiting(answered),
            Err(_) => Pending::ready(Err(StoreError::Closed)),
        }
    }

    /// See [`super::Store::load`]; blocks until the writer has read every room.
    pub fn load(&self) -> Result<Loaded, StoreError> {
        let (answer, answered) = mpsc::sync_channel(1);
        self.commands
            .send(Command::Load(answer))
            .map_err(|_| StoreError::Closed)?;
        answered.recv().map_err(|_| StoreError::Closed)?
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
    pub(super) fn with_connection(&self, f: impl FnOnce(&Connection) + Send + 'static) {
        let (done, finished) = mpsc::sync_channel(1);
        let command = Command::With(Box::new(move |conn| {
            f(conn);
            let _ = done.send(());
        }));
        self.commands.send(command).expect("the writer is running");
        finished.recv().expect("the writer ran it");
    }
}

/// Why [`open_database`] failed.
enum Opening {
    /// The file is not a usable database: move it aside and start afresh.
    Damaged(StoreError),
    /// Anything else (a newer schema, a folder we may not write): refuse to start.
    Failed(StoreError),
}

impl Opening {
    /// The error to give the caller.
    fn into_error(self) -> StoreError {
        match self {
            Opening::Damaged(error) => error,
            Opening::Failed(error) => error,
        }
    }
}

/// Sorts an error met while opening.
fn opening(error: impl Into<StoreError>) -> Opening {
    let error = error.into();
    match &error {
        StoreError::Sqlite(sqlite)
            if matches!(
                sqlite.sqlite_error_code(),
                Some(ErrorCode::NotADatabase | ErrorCode::DatabaseCorrupt)
            ) =>
        {
            Opening::Damaged(error)
        }
        _ => Opening::Failed(error),
    }
}

/// The database's schema version.
fn user_version(conn: &Connection) -> rusqlite::Result<u32> {
    conn.pragma_query_value(None, "user_version", |row| row.get(0))
}

/// Opens the database for the writer: checks it through a read-only connection first (a newer
/// schema is refused unchanged; a damaged file is reported as such), then opens it for writing
/// in WAL mode and migrates it.
fn open_database(path: &Path, sync: SyncMode) -> Result<Connection, Opening> {
    let known = u32::try_from(MIGRATIONS.len()).expect("a few migrations");
    if path.exists() {
        // A read-only connection to a WAL database creates the `-wal` and `-shm` files it finds
        // missing (and leaves them): remove those it made, so that a refused file is left as it
        // was found and a damaged one is moved aside alone.
        let sidecars = [sidecar(path, "-wal"), sidecar(path, "-shm")];
        let made: Vec<bool> = sidecars.iter().map(|file| !file.exists()).collect();
        let checked = check_database(path, known);
        for (file, made) in sidecars.iter().zip(made) {
            if made {
                let _ = std::fs::remove_file(file);
            }
        }
        checked?;
    }
    let mut conn = Connection::open(path).map_err(opening)?;
    conn.busy_timeout(BUSY_TIMEOUT).map_err(opening)?;
    let mode: String = conn
        .pragma_update_and_check(None, "journal_mode", "WAL", |row| row.get(0))
        .map_err(opening)?;
    if !mode.eq_ignore_ascii_case("wal") {
        return Err(Opening::Failed(StoreError::Conflict(format!(
            "{}: SQLite would not use WAL mode (it answered {mode})",
            path.display()
        ))));
    }
    conn.pragma_update(None, "synchronous", sync.pragma())
        .map_err(opening)?;
    // Measured under load (`loadgen play --store both`): with SQLite's defaults the writer spent
    // a third of its time checkpointing the WAL every 1,000 pages (and every append queued
    // behind a checkpoint waited for its fsync), and a fifth reading pages back through pread.
    // So the writer never checkpoints: a thread of its own does ([`checkpointer`]); and a
    // larger page cache and reads through mmap spare the preads.
    for (pragma, value) in [
        ("cache_size", "-65536"),
        ("mmap_size", "268435456"),
        ("wal_autocheckpoint", "0"),
        ("journal_size_limit", "67108864"),
    ] {
        conn.pragma_update(None, pragma, value).map_err(opening)?;
    }
    migrate(&mut conn, path, MIGRATIONS).map_err(opening)?;
    Ok(conn)
}

/// Checks the database through a read-only connection: a newer schema is refused, a damaged
/// file is reported as such, and nothing is written.
fn check_database(path: &Path, known: u32) -> Result<(), Opening> {
    let conn = Connection::open_with_flags(
        path,
        OpenFlags::SQLITE_OPEN_READ_ONLY | OpenFlags::SQLITE_OPEN_NO_MUTEX,
    )
    .map_err(opening)?;
    let found = user_version(&conn).map_err(opening)?;
    if found > known {
        return Err(Opening::Failed(StoreError::NewerSchema {
            path: path.to_owned(),
            found,
            known,
        }));
    }
    check_readable(&conn, found).map_err(opening)
}

/// `path` with `tail` appended to its name: its `-wal` or `-shm`.
fn sidecar(path: &Path, tail: &str) -> PathBuf {
    let mut name = path.as_os_str().to_owned();
    name.push(tail);
    PathBuf::from(name)
}

/// Reads what every start needs to read (the schema, the list of rooms), so that a file whose
/// header or room list is damaged is found before anything is written to it.
fn check_readable(conn: &Connection, version: u32) -> rusqlite::Result<()> {
    conn.query_row("SELECT count(*) FROM sqlite_schema", [], |row| {
        row.get::<_, i64>(0)
    })?;
    if version >= 1 {
        let mut rooms = conn.prepare("SELECT code FROM rooms")?;
        let mut rows = rooms.query([])?;
        while rows.next()?.is_some() {}
        conn.query_row("SELECT count(*) FROM set_aside", [], |row| {
            row.get::<_, i64>(0)
        })?;
    }
    Ok(())
}

/// Brings the database from its `user_version` to `steps.len()`, running the missing steps in
/// order in one transaction (all or none). Refuses a version newer than `steps` knows.
pub(super) fn migrate(
    conn: &mut Connection,
    path: &Path,
    steps: &[&str],
) -> Result<(), StoreError> {
    let known = u32::try_from(steps.len()).expect("a few migrations");
    let tx = conn.transaction_with_behavior(rusqlite::TransactionBehavior::Immediate)?;
    let found = user_version(&tx)?;
    if found > known {
        return Err(StoreError::NewerSchema {
            path: path.to_owned(),
            found,
            known,
        });
    }
    if found == known {
        return Ok(());
    }
    for step in &steps[found as usize..] {
        tx.execute_batch(step)?;
    }
    tx.pragma_update(None, "user_version", known)?;
    tx.commit()?;
    tracing::info!(path = %path.display(), from = found, to = known, "migrated the room log");
    if found < 5 && known >= 5 {
        // Step 5 set aside the rooms two processes had written at once.
        let twice: rusqlite::Result<Vec<String>> = conn
            .prepare("SELECT DISTINCT code FROM duplicates ORDER BY code")
            .and_then(|mut rooms| rooms.query_map([], |row| row.get(0))?.collect());
        for code in twice.unwrap_or_default() {
            tracing::error!(
                room = %code,
                "room {code}'s log holds inputs logged twice (two processes wrote it at once): \
                 set aside, its rows kept on disk"
            );
        }
    }
    Ok(())
}

/// Renames the damaged database `path` (and its `-wal` and `-shm`) to
/// `<path>.damaged-<unix-time>` (with `.1`, `.2`, … if taken) and answers the new path.
fn move_aside(path: &Path) -> Result<PathBuf, StoreError> {
    let now = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |since| since.as_secs());
    let name = |tail: &str| sidecar(path, tail);
    let mut target = name(&format!(".damaged-{now}"));
    let mut n = 0;
    while target.exists() {
        n += 1;
        target = name(&format!(".damaged-{now}.{n}"));
    }
    // An orphaned WAL may have no database beside it at all.
    if path.exists() {
        std::fs::rename(path, &target).map_err(|e| StoreError::io(path, e))?;
    }
    for tail in ["-wal", "-shm"] {
        let from = name(tail);
        if from.exists() {
            let mut to = target.clone().into_os_string();
            to.push(tail);
            std::fs::rename(&from, &to).map_err(|e| StoreError::io(&from, e))?;
        }
    }
    Ok(target)
}

/// Takes the data directory's lock: creates [`LOCK_FILE`] if missing, locks it (an exclusive
/// `flock`, let go when the file is closed or the process ends, however it ends) and writes this
/// process's id in it. [`StoreError::Locked`] when another process holds it.
fn lock(data_dir: &Path) -> Result<std::fs::File, StoreError> {
    use std::io::{Read, Seek, Write};
    let path = data_dir.join(LOCK_FILE);
    let mut file = std::fs::OpenOptions::new()
        .read(true)
        .write(true)
        .create(true)
        .truncate(false)
        .open(&path)
        .map_err(|e| unwritable(data_dir, &format!("opening {LOCK_FILE}"), e))?;
    match rustix::fs::flock(&file, rustix::fs::FlockOperation::NonBlockingLockExclusive) {
        Ok(()) => {}
        Err(rustix::io::Errno::WOULDBLOCK) => {
            let mut holder = String::new();
            let _ = file.read_to_string(&mut holder);
            let holder = match holder.trim().parse::<u32>() {
                Ok(pid) => format!("process {pid}"),
                Err(_) => "a process whose id its lock file does not say".to_owned(),
            };
            return Err(StoreError::Locked {
                dir: data_dir.to_owned(),
                holder,
            });
        }
        Err(e) => return Err(StoreError::io(&path, e.into())),
    }
    let written = file
        .set_len(0)
        .and_then(|()| file.rewind())
        .and_then(|()| writeln!(file, "{}", std::process::id()));
    written.map_err(|e| unwritable(data_dir, &format!("writing {LOCK_FILE}"), e))?;
    Ok(file)
}

/// Checks that a file can be made in the data directory (the WAL and `-shm` are made there):
/// creates, syncs and removes a small one. A read-only or immutable folder is
/// [`StoreError::Unwritable`]; a full disk is not refused here (the rooms wait for space, as
/// they would if it filled later).
fn probe_folder(data_dir: &Path) -> Result<(), StoreError> {
    use std::io::Write;
    let probe = data_dir.join(format!(".dhumbal-probe-{}", std::process::id()));
    let made = std::fs::OpenOptions::new()
        .write(true)
        .create(true)
        .truncate(true)
        .open(&probe)
        .and_then(|mut file| {
            file.write_all(b"probe")?;
            file.sync_all()
        });
    let removed = std::fs::remove_file(&probe);
    match made.and(removed) {
        Ok(()) => Ok(()),
        Err(e) if e.kind() == std::io::ErrorKind::StorageFull => {
            let _ = std::fs::remove_file(&probe);
            tracing::error!(
                dir = %data_dir.display(),
                "the data directory's disk is full: rooms will wait for space before they \
                 take a move"
            );
            Ok(())
        }
        Err(e) => Err(unwritable(data_dir, "making a file in it", e)),
    }
}

/// Checks that the database can be written: a transaction that changes the schema and changes
/// it back, committed (so written to the WAL). A database SQLite could open only read-only is
/// [`StoreError::Unwritable`]; a full disk is not refused here.
fn probe_database(conn: &Connection, data_dir: &Path) -> Result<bool, StoreError> {
    let Err(error) = probe_write(conn) else {
        return Ok(true);
    };
    match error.sqlite_error_code() {
        Some(ErrorCode::DiskFull) => {
            tracing::error!(
                dir = %data_dir.display(),
                "the room log's disk is full: rooms will wait for space before they take a move"
            );
            Ok(false)
        }
        Some(ErrorCode::ReadOnly | ErrorCode::CannotOpen | ErrorCode::PermissionDenied) => {
            Err(StoreError::Unwritable {
                dir: data_dir.to_owned(),
                detail: format!("writing {DB_FILE}: {error}"),
            })
        }
        _ => Err(error.into()),
    }
}

/// A write to the database that leaves nothing behind: a transaction that makes a table and
/// drops it, committed (so written to the WAL).
fn probe_write(conn: &Connection) -> rusqlite::Result<()> {
    let probed = conn.execute_batch(
        "BEGIN IMMEDIATE;
         CREATE TABLE write_probe (x);
         DROP TABLE write_probe;
         COMMIT;",
    );
    if probed.is_err() && !conn.is_autocommit() {
        let _ = conn.execute_batch("ROLLBACK");
    }
    probed
}

/// How much room a probe of a store that could not write asks of the disk before the store
/// counts as writable again: some pages of WAL for the next commits, not one byte.
const PROBE_BYTES: usize = 256 * 1024;

/// How often a store that could not write tries again.
#[cfg(not(test))]
const PROBE_EVERY: Duration = Duration::from_secs(1);
/// How often a store that could not write tries again (often in unit tests).
#[cfg(test)]
const PROBE_EVERY: Duration = Duration::from_millis(50);

/// An I/O error about the data directory: [`StoreError::Unwritable`] when it says the folder
/// (or a file in it) may not be written, else [`StoreError::Io`].
fn unwritable(data_dir: &Path, doing: &str, error: std::io::Error) -> StoreError {
    use std::io::ErrorKind;
    match error.kind() {
        ErrorKind::ReadOnlyFilesystem | ErrorKind::PermissionDenied => StoreError::Unwritable {
            dir: data_dir.to_owned(),
            detail: format!("{doing}: {error}"),
        },
        _ => StoreError::io(data_dir, error),
    }
}

/// The size of a WAL that the database `path` cannot have written: a non-empty `-wal` beside a
/// database file that is missing or empty. SQLite would take the database for a new one and
/// delete the WAL, and every room in it with it.
fn orphaned_wal(path: &Path) -> Option<u64> {
    let wal = std::fs::metadata(sidecar(path, "-wal")).ok()?.len();
    let database = std::fs::metadata(path).map_or(0, |meta| meta.len());
    (wal > 0 && database == 0).then_some(wal)
}

/// A seq as SQLite stores it (an `i64`).
fn sql_seq(code: &str, seq: u64) -> Result<i64, StoreError> {
    i64::try_from(seq)
        .map_err(|_| StoreError::Conflict(format!("room {code}: seq {seq} is out of range")))
}

/// The seq in column `column`; a negative one is damage.
fn read_seq(row: &rusqlite::Row<'_>, column: usize) -> rusqlite::Result<u64> {
    let seq: i64 = row.get(column)?;
    u64::try_from(seq).map_err(|_| rusqlite::Error::IntegralValueOutOfRange(column, seq))
}

/// The writer thread's state: the only connection that writes.
struct Writer {
    /// The database, in WAL mode.
    conn: Connection,
    /// Commits, errors and append latency.
    metrics: Arc<Metrics>,
    /// Each live room's last seq and snapshot seq as committed or written in the open
    /// transaction: `log` has no index by room, so this is the only place an append finds
    /// them. Only this thread writes, so it cannot go stale; it is forgotten (`None`) whenever
    /// a transaction rolls back or the connection is used for anything else, and read again
    /// from the database, for every room in one pass over `log`, when next needed.
    positions: RefCell<Option<HashMap<String, (u64, u64)>>>,
    /// Rows of `log` that live rooms still need (no snapshot covers them), as far as this
    /// thread knows.
    live: Cell<u64>,
    /// Dead rows in `log` (covered by a snapshot, or of a deleted room), as far as this thread
    /// knows: when they outnumber the live ones by [`CLEAN_AT`], a pass collects them.
    dead: Cell<u64>,
    /// The pass over `log` under way, if one is.
    pass: RefCell<Option<Pass>>,
    /// The checkpointer thread and the way to stop it, stopped before the writer closes.
    checkpoints: Option<(Sender<()>, JoinHandle<()>)>,
    /// Set by the checkpointer when the WAL should be restarted ([`Writer::restart_wal`]).
    restart: Arc<AtomicBool>,
    /// The database file, opened outside SQLite for the checkpointer to sync
    /// ([`checkpointer`]). Closing a descriptor drops every POSIX lock the process holds on the
    /// file, SQLite's included, so it is closed only after the connection: this field comes after
    /// `conn`, and [`Writer::close`] closes the connection before the rest of the writer goes.
    file: Arc<std::fs::File>,
    /// The data directory's lock ([`LOCK_FILE`]), held while the writer runs: let go last, once
    /// the database is closed.
    lock: std::fs::File,
    /// Whether the last commit succeeded ([`SqliteStore::is_writable`]).
    writable: Arc<AtomicBool>,
    /// The data directory, where a probe makes a file to see that the disk has room.
    data_dir: PathBuf,
}

/// How often the WAL is checkpointed into the database.
#[cfg(not(test))]
const CHECKPOINT_EVERY: Duration = Duration::from_millis(500);
/// How often the WAL is checkpointed into the database (often in unit tests, so that a short
/// test sees many checkpoints).
#[cfg(test)]
const CHECKPOINT_EVERY: Duration = Duration::from_millis(20);

/// How many frames the WAL may hold after a checkpoint before the checkpointer has the writer
/// restart it (64 MiB of 4 KiB pages, the `journal_size_limit`). A RESTART holds the appends for
/// 9–14 ms at the median (`loadgen play --think-ms 20 --store sqlite`): most of it is the fsync of
/// the database file, whose pages the PASSIVE checkpoints copied without syncing it (they sync
/// it only when they copy everything). At 4,096 frames that came 21–27 times in 15 s of that
/// load; at 16,384, 7–9 times.
#[cfg(not(test))]
const RESTART_AT: i64 = 16_384;
/// How many frames the WAL may hold after a checkpoint before the checkpointer restarts it (few
/// in unit tests).
#[cfg(test)]
const RESTART_AT: i64 = 64;

/// Checkpoints the WAL into the database every [`CHECKPOINT_EVERY`], on a connection of its own,
/// until `stop` is signalled or dropped; sets `restart` when the writer should restart the WAL.
///
/// A PASSIVE checkpoint copies what it can without ever making the writer wait, and the writer
/// starts the WAL afresh by itself when it finds everything in it copied. Under a steady stream
/// of commits it never does: each checkpoint ends behind the commits made while it copied, and
/// the WAL grew by 50 MB a second under `loadgen play --store sqlite` (690 MB after 14 s). So
/// when a PASSIVE checkpoint leaves [`RESTART_AT`] frames or more, it asks the writer for a
/// RESTART checkpoint ([`Writer::restart_wal`]). The writer makes it between two commits: it
/// copies what the PASSIVE one could not, syncs the database file, and makes the next commit
/// write the WAL from its start. (A RESTART made here instead would have to win the
/// write lock from a writer that takes it again at once: in a test it never did.)
///
/// A PASSIVE checkpoint that does not copy everything never syncs the database file, so the
/// RESTART had all their copies to sync, and held the appends for 12–46 ms
/// (`loadgen play --think-ms 20 --store sqlite`, 25 s, two runs). After each checkpoint this
/// thread syncs the file itself (`file`, a descriptor of its own: SQLite's are out of reach),
/// and the RESTART took 0.8–7.8 ms; the paced p99.9 was 32–39 ms against 42–59.
fn checkpointer(
    path: &Path,
    file: &std::fs::File,
    stop: &Receiver<()>,
    restart: &AtomicBool,
    metrics: &Metrics,
) {
    let conn = match Connection::open(path) {
        Ok(conn) => conn,
        Err(error) => {
            tracing::error!(%error, "the room log's checkpointer could not open the database");
            return;
        }
    };
    let _ = conn.busy_timeout(BUSY_TIMEOUT);
    while let Err(mpsc::RecvTimeoutError::Timeout) = stop.recv_timeout(CHECKPOINT_EVERY) {
        // The first column is 1 when another checkpoint (the writer's RESTART) held it off, the
        // second the WAL's size in frames.
        match conn.query_row("PRAGMA wal_checkpoint(PASSIVE)", [], |row| {
            Ok((row.get::<_, i64>(0)?, row.get::<_, i64>(1)?))
        }) {
            Ok((1, _)) => {}
            Ok((_, frames)) => {
                #[expect(clippy::cast_precision_loss, reason = "a gauge")]
                metrics.store_wal_frames.set(frames.max(0) as f64);
                // What the checkpoint copied is synced here, off the writer's thread, so that
                // the writer's RESTART has little left to sync while the appends wait.
                if let Err(error) = file.sync_data() {
                    tracing::warn!(%error, "syncing the room log's database file failed");
                }
                if frames >= RESTART_AT {
                    restart.store(true, Ordering::Relaxed);
                }
            }
            Err(error) => tracing::warn!(%error, "checkpointing the room log failed; trying again"),
        }
    }
}

impl Writer {
    /// Serves `queue` until [`Command::Close`] or until every sender is gone, committing what
    /// is queued in batches.
    fn run(self, queue: &Receiver<Command>) {
        let mut batch = Vec::new();
        loop {
            let command = if self.writable.load(Ordering::SeqCst) {
                match queue.recv() {
                    Ok(command) => command,
                    Err(_) => break,
                }
            } else {
                // The last commit failed: nothing may be waiting to be written for the store to
                // find out that it can write again, so it tries by itself.
                match queue.recv_timeout(PROBE_EVERY) {
                    Ok(command) => command,
                    Err(mpsc::RecvTimeoutError::Timeout) => {
                        self.probe();
                        continue;
                    }
                    Err(mpsc::RecvTimeoutError::Disconnected) => break,
                }
            };
            // Before a batch is committed, the writer gives up its CPU once, so that the
            // appends other threads are making join this batch rather than each waking the
            // writer for one of its own. Measured (`loadgen play --store sqlite`, 2 cores):
            // 14 to 19 appends a commit instead of 3 or 4, and 6 µs of the writer's CPU an
            // append instead of 10. On an idle machine it returns at once.
            let mut yielded = false;
            let mut next = Some(command);
            while let Some(command) = next.take() {
                match command {
                    Command::Write(write) => {
                        batch.push(write);
                        if batch.len() < MAX_BATCH {
                            next = queue.try_recv().ok().or_else(|| {
                                if yielded {
                                    return None;
                                }
                                yielded = true;
                                thread::yield_now();
                                queue.try_recv().ok()
                            });
                        }
                    }
                    Command::Load(answer) => {
                        self.commit(&mut batch);
                        let _ = answer.send(self.load());
                    }
                    Command::Close(answer) => {
                        self.commit(&mut batch);
                        self.close();
                        let _ = answer.send(());
                        return;
                    }
                    Command::FindMatch {
                        code,
                        number,
                        answer,
                    } => {
                        self.commit(&mut batch);
                        let _ = answer.send(self.find_match(&code, number));
                    }
                    Command::Reload { code, answer } => {
                        self.commit(&mut batch);
                        let _ = answer.send(self.reload(&code));
                    }
                    #[cfg(test)]
                    Command::With(f) => {
                        self.commit(&mut batch);
                        f(&self.conn);
                        self.forget_positions();
                    }
                }
            }
            self.commit(&mut batch);
            self.clean_some();
            if self.restart.swap(false, Ordering::Relaxed) {
                self.restart_wal();
            }
        }
        self.close();
    }

    /// After a commit: takes the next step of the pass over `log` under way, or starts one
    /// once its dead rows outnumber the live ones by [`CLEAN_AT`]. A step reads [`CLEAN_STEP`]
    /// ids and deletes the dead rows among them, in a transaction of its own; the pass's last
    /// step also forgets the rooms deleted before it began, whose rows are all gone then.
    fn clean_some(&self) {
        let mut pass = self.pass.borrow_mut();
        if pass.is_none() {
            if self.dead.get() < self.live.get().saturating_add(CLEAN_AT) {
                return;
            }
            match self.start_pass() {
                Ok(started) => *pass = started,
                Err(error) => return self.clean_failed(&error),
            }
        }
        let Some(current) = pass.as_mut() else {
            // Nothing in `log`: nothing is dead.
            self.dead.set(0);
            return;
        };
        let upto = current
            .next
            .saturating_add(CLEAN_STEP - 1)
            .min(current.last);
        let end = upto >= current.last;
        let started = Instant::now();
        let stepped = (|| -> rusqlite::Result<usize> {
            let tx = self.immediate()?;
            let collected = tx
                .prepare_cached(&format!(
                    "DELETE FROM log WHERE id BETWEEN ?1 AND ?2 AND {DEAD}"
                ))?
                .execute([current.next, upto])?;
            if end {
                let mut forget = tx.prepare_cached("DELETE FROM deleted WHERE code = ?1")?;
                for code in &current.deleted {
                    forget.execute([code])?;
                }
            }
            tx.commit()?;
            Ok(collected)
        })();
        self.metrics.store_held(Hold::Pass, started.elapsed());
        match stepped {
            Ok(collected) => {
                let collected = u64::try_from(collected).unwrap_or(u64::MAX);
                self.metrics.store_collected.increment(collected);
                self.dead.set(self.dead.get().saturating_sub(collected));
                if end {
                    // Rows that died during the pass behind it wait for the next one.
                    self.dead.set(0);
                    *pass = None;
                } else {
                    current.next = upto + 1;
                }
            }
            Err(error) => {
                *pass = None;
                self.clean_failed(&error);
            }
        }
    }

    /// A new pass over what `log` holds now; `None` if it holds nothing, when the rooms deleted
    /// have no rows left and are forgotten at once.
    fn start_pass(&self) -> rusqlite::Result<Option<Pass>> {
        let ids: (Option<i64>, Option<i64>) = self
            .conn
            .prepare_cached("SELECT min(id), max(id) FROM log")?
            .query_row([], |row| Ok((row.get(0)?, row.get(1)?)))?;
        let (Some(first), Some(last)) = ids else {
            self.conn.execute_batch("DELETE FROM deleted")?;
            return Ok(None);
        };
        let deleted = self
            .conn
            .prepare_cached("SELECT code FROM deleted")?
            .query_map([], |row| row.get(0))?
            .collect::<rusqlite::Result<_>>()?;
        Ok(Some(Pass {
            next: first,
            last,
            deleted,
        }))
    }

    /// Deletes every dead row of `log` and forgets every deleted room, in one transaction (at
    /// load, before anything is appended).
    fn clean_all(&self) -> rusqlite::Result<()> {
        let tx = self.immediate()?;
        let collected = tx.execute(&format!("DELETE FROM log WHERE {DEAD}"), [])?;
        tx.execute_batch("DELETE FROM deleted")?;
        tx.commit()?;
        self.metrics
            .store_collected
            .increment(u64::try_from(collected).unwrap_or(u64::MAX));
        self.dead.set(0);
        Ok(())
    }

    /// A transaction that takes the write lock at once, rolled back unless committed.
    fn immediate(&self) -> rusqlite::Result<Transaction<'_>> {
        Transaction::new_unchecked(&self.conn, TransactionBehavior::Immediate)
    }

    /// A pass's statement failed (its transaction rolled back): logs it. The dead rows stay
    /// until enough more die (or the next load).
    fn clean_failed(&self, error: &rusqlite::Error) {
        self.dead.set(0);
        self.metrics.store_errors.increment(1);
        tracing::error!(%error, "collecting the room log's dead inputs failed; trying again later");
    }

    /// Copies the rest of the WAL into the database and has the next commit write the WAL from
    /// its start (see [`checkpointer`]). Between two commits nothing else holds a lock; should
    /// the checkpointer be copying after all, SQLite answers busy and the next request tries
    /// again.
    fn restart_wal(&self) {
        // The first column is 1 when the checkpoint could not finish.
        let started = Instant::now();
        let restarted = self
            .conn
            .query_row("PRAGMA wal_checkpoint(RESTART)", [], |row| {
                row.get::<_, i64>(0)
            });
        self.metrics.store_held(Hold::Restart, started.elapsed());
        match restarted {
            Ok(0) => {}
            Ok(_) => tracing::debug!("restarting the room log's WAL was busy; trying again later"),
            Err(error) => {
                self.metrics.store_errors.increment(1);
                tracing::warn!(%error, "restarting the room log's WAL failed; trying again later");
            }
        }
    }

    /// Closes the connection (the last one checkpoints the WAL into the database).
    fn close(mut self) {
        // The checkpointer first, so that the writer's connection is the last: closing it copies
        // the WAL into the database and removes it.
        if let Some((stop, thread)) = self.checkpoints.take() {
            let _ = stop.send(());
            let _ = thread.join();
        }
        if let Err((_, error)) = self.conn.close() {
            tracing::error!(%error, "closing the room log failed");
        }
        // Only now: closing it drops the process's POSIX locks on the file, SQLite's too.
        drop(self.file);
        // And the data directory is free for another process only once all of it is closed.
        drop(self.lock);
    }

    /// Runs `batch` in one transaction and answers each write once it has committed (or
    /// failed). A write refused for its own reason (a conflict) is answered so and the others
    /// commit; a failure of the transaction itself (a full disk, an I/O error) answers every
    /// write with it.
    fn commit(&self, batch: &mut Vec<Write>) {
        if batch.is_empty() {
            return;
        }
        let mut answers = Vec::with_capacity(batch.len());
        let started = Instant::now();
        let outcome = self.transaction(batch, &mut answers);
        self.metrics.store_held(Hold::Commit, started.elapsed());
        let count = |n: usize| u64::try_from(n).unwrap_or(u64::MAX);
        match outcome {
            Ok(()) => {
                self.metrics.store_commits.increment(1);
                if !self.writable.swap(true, Ordering::SeqCst) {
                    tracing::info!("the room log can be written again");
                }
            }
            Err(error) => {
                if self.writable.swap(false, Ordering::SeqCst) {
                    tracing::error!(
                        %error,
                        "the room log cannot be written: rooms wait (their moves refused, \
                         `/readyz` 503) until it can; trying again every {PROBE_EVERY:?}"
                    );
                }
                if !self.conn.is_autocommit() {
                    // Nothing of the batch may stay; a failed rollback leaves it uncommitted.
                    let _ = self.conn.execute_batch("ROLLBACK");
                }
                // What the batch wrote is gone: forget the positions it moved.
                self.forget_positions();
                tracing::error!(%error, writes = batch.len(), "a room log commit failed");
                answers.resize_with(batch.len(), || Ok(()));
                for answer in &mut answers {
                    if answer.is_ok() {
                        *answer = Err(error.clone());
                    }
                }
            }
        }
        let failed = answers.iter().filter(|answer| answer.is_err()).count();
        if failed > 0 {
            self.metrics.store_errors.increment(count(failed));
        }
        for (write, answer) in batch.drain(..).zip(answers) {
            if answer.is_ok() && matches!(write.op, Op::Append { .. }) {
                self.metrics.store_appended(write.started.elapsed());
            }
            let _ = write.answer.send(answer);
        }
    }

    /// The batch's transaction: each write's own answer goes to `answers`; an error here is the
    /// transaction's.
    fn transaction(
        &self,
        batch: &[Write],
        answers: &mut Vec<Result<(), StoreError>>,
    ) -> Result<(), StoreError> {
        if !self.conn.is_autocommit() {
            // The rollback of a failed batch failed too: try again, or nothing commits again.
            self.conn.execute_batch("ROLLBACK")?;
        }
        self.conn.execute_batch("BEGIN IMMEDIATE")?;
        for write in batch {
            let answer = self.apply(&write.op);
            if answer.is_err() && self.conn.is_autocommit() {
                // SQLite rolled the whole transaction back (a full disk, an I/O error).
                return Err(answer.expect_err("an error"));
            }
            if let Err(StoreError::Full) = answer {
                return Err(StoreError::Full);
            }
            answers.push(answer);
        }
        self.conn.execute_batch("COMMIT")?;
        Ok(())
    }

    /// Makes one write; an error leaves nothing of it behind (the writes of several statements
    /// run in a savepoint).
    fn apply(&self, op: &Op) -> Result<(), StoreError> {
        match op {
            Op::Create { code, setup } => self.create(code, setup),
            Op::Append { code, seq, input } => {
                let (last, snapshot) = self.position(code)?;
                check::next_seq(code, last, *seq)?;
                self.conn
                    .prepare_cached("INSERT INTO log (code, seq, input) VALUES (?1, ?2, ?3)")?
                    .execute(params![code, sql_seq(code, *seq)?, input])
                    .map_err(|error| match error.sqlite_error_code() {
                        // The schema's own guard (`log_by_input`): never reached while the
                        // positions are right.
                        Some(ErrorCode::ConstraintViolation) => StoreError::Conflict(format!(
                            "room {code}: input {seq} is in the log already"
                        )),
                        _ => error.into(),
                    })?;
                self.live.set(self.live.get() + 1);
                if let Some(position) = self
                    .positions
                    .borrow_mut()
                    .as_mut()
                    .and_then(|positions| positions.get_mut(code.as_str()))
                {
                    *position = (*seq, snapshot);
                }
                Ok(())
            }
            Op::Snapshot { code, seq, state } => self.snapshot(code, *seq, state),
            Op::Delete { code } => {
                // A room known never to have appended has no rows to wait for.
                let logged = self.positions.borrow().as_ref().is_none_or(|positions| {
                    positions
                        .get(code.as_str())
                        .is_none_or(|(last, _)| *last > 0)
                });
                self.savepoint(|conn| {
                    // The room's rows in `log` are dead now, and go with the next pass (or
                    // load); until then its code stays taken, so that a new room given it
                    // never takes them for its own.
                    if logged {
                        conn.prepare_cached(
                            "INSERT OR IGNORE INTO deleted (code) SELECT ?1
                             WHERE EXISTS (SELECT 1 FROM rooms WHERE code = ?1)
                                OR EXISTS (SELECT 1 FROM set_aside WHERE code = ?1)",
                        )?
                        .execute([code])?;
                    }
                    for table in ["snapshots", "set_aside", "heads", "rooms"] {
                        conn.prepare_cached(&format!("DELETE FROM {table} WHERE code = ?1"))?
                            .execute([code])?;
                    }
                    Ok(())
                })?;
                if let Some((last, snapshot)) = self.drop_position(code) {
                    self.dead.set(self.dead.get() + (last - snapshot));
                }
                Ok(())
            }
            Op::KeepMatch(kept) => self.keep_match(kept),
            Op::ForgetMatches { keep_secs } => {
                self.conn
                    .prepare_cached("DELETE FROM matches WHERE finished < unixepoch() - ?1")?
                    .execute([keep_secs])?;
                Ok(())
            }
            Op::SetAside { code, why } => {
                self.drop_position(code);
                let known: bool = self
                    .conn
                    .prepare_cached("SELECT EXISTS (SELECT 1 FROM rooms WHERE code = ?1)")?
                    .query_row([code], |row| row.get(0))?;
                if !known {
                    return Err(StoreError::UnknownRoom(code.clone()));
                }
                self.mark(code, why)?;
                Ok(())
            }
        }
    }

    /// A new room: its code must be free (of rooms, of rooms set aside, and of rooms deleted
    /// whose rows a pass has yet to collect).
    fn create(&self, code: &str, setup: &[u8]) -> Result<(), StoreError> {
        let taken: bool = self
            .conn
            .prepare_cached(
                "SELECT EXISTS (SELECT 1 FROM rooms WHERE code = ?1)
                     OR EXISTS (SELECT 1 FROM set_aside WHERE code = ?1)
                     OR EXISTS (SELECT 1 FROM deleted WHERE code = ?1)",
            )?
            .query_row([code], |row| row.get(0))?;
        if taken {
            return Err(check::exists(code));
        }
        self.conn
            .prepare_cached(
                "INSERT INTO rooms (code, setup, created) VALUES (?1, ?2, unixepoch())",
            )?
            .execute(params![code, setup])?;
        if let Some(positions) = self.positions.borrow_mut().as_mut() {
            positions.insert(code.to_owned(), (0, 0));
        }
        Ok(())
    }

    /// A snapshot at `seq`: the inputs it covers are dead, for the next pass to collect.
    fn snapshot(&self, code: &str, seq: u64, state: &[u8]) -> Result<(), StoreError> {
        let (last, snapshot) = self.position(code)?;
        check::snapshot_seq(code, last, snapshot, seq)?;
        self.conn
            .prepare_cached(
                "INSERT OR REPLACE INTO snapshots (code, seq, state) VALUES (?1, ?2, ?3)",
            )?
            .execute(params![code, sql_seq(code, seq)?, state])?;
        let covered = seq - snapshot;
        self.live.set(self.live.get().saturating_sub(covered));
        self.dead.set(self.dead.get() + covered);
        if let Some(position) = self
            .positions
            .borrow_mut()
            .as_mut()
            .and_then(|positions| positions.get_mut(code))
        {
            *position = (last, seq);
        }
        Ok(())
    }

    /// A finished match's hand history (kept once: a second copy changes nothing).
    fn keep_match(&self, kept: &KeptMatch) -> Result<(), StoreError> {
        self.conn
            .prepare_cached(
                "INSERT OR IGNORE INTO matches
                     (code, number, finished, commitment, tokens, history)
                     VALUES (?1, ?2, unixepoch(), ?3, ?4, ?5)",
            )?
            .execute(params![
                kept.code,
                kept.number,
                kept.commitment,
                kept.token_hashes.join(" "),
                kept.history
            ])?;
        Ok(())
    }

    /// A kept match.
    fn find_match(&self, code: &str, number: u32) -> Result<Option<KeptMatch>, StoreError> {
        let found = self
            .conn
            .prepare_cached(
                "SELECT commitment, tokens, history FROM matches WHERE code = ?1 AND number = ?2",
            )?
            .query_row(params![code, number], |row| {
                let tokens: String = row.get(1)?;
                Ok(KeptMatch {
                    code: code.to_owned(),
                    number,
                    commitment: row.get(0)?,
                    token_hashes: tokens.split_whitespace().map(str::to_owned).collect(),
                    history: row.get(2)?,
                })
            })
            .optional()?;
        Ok(found)
    }

    /// Marks the room set aside.
    fn mark(&self, code: &str, why: &str) -> rusqlite::Result<()> {
        self.conn
            .prepare_cached(
                "INSERT OR REPLACE INTO set_aside (code, why, at) VALUES (?1, ?2, unixepoch())",
            )?
            .execute([code, why])?;
        Ok(())
    }

    /// Runs `f` in a savepoint: all of it, or none of it when it fails.
    fn savepoint(
        &self,
        f: impl FnOnce(&Connection) -> rusqlite::Result<()>,
    ) -> Result<(), StoreError> {
        self.conn.execute_batch("SAVEPOINT write")?;
        match f(&self.conn) {
            Ok(()) => {
                self.conn.execute_batch("RELEASE write")?;
                Ok(())
            }
            Err(error) => {
                if !self.conn.is_autocommit() {
                    self.conn
                        .execute_batch("ROLLBACK TO write; RELEASE write")?;
                }
                Err(error.into())
            }
        }
    }

    /// The live room's last seq and its snapshot's seq (0 for none), or
    /// [`StoreError::UnknownRoom`].
    fn position(&self, code: &str) -> Result<(u64, u64), StoreError> {
        if self.positions.borrow().is_none() {
            let positions = self.read_positions()?;
            self.live.set(
                positions
                    .values()
                    .map(|(last, snapshot)| last - snapshot)
                    .sum(),
            );
            *self.positions.borrow_mut() = Some(positions);
        }
        self.positions
            .borrow()
            .as_ref()
            .and_then(|positions| positions.get(code).copied())
            .ok_or_else(|| StoreError::UnknownRoom(code.to_owned()))
    }

    /// Every live room's last seq and snapshot seq, from the database: one pass over `log`.
    fn read_positions(&self) -> rusqlite::Result<HashMap<String, (u64, u64)>> {
        // A negative seq is damage that the next load will set aside; until then it counts as
        // none.
        let seq = |seq: i64| u64::try_from(seq).unwrap_or(0);
        self.conn
            .prepare_cached(
                "SELECT r.code, coalesce(l.last, 0),
                        coalesce((SELECT s.seq FROM snapshots s WHERE s.code = r.code), 0)
                 FROM rooms r
                 LEFT JOIN (SELECT code, max(seq) AS last FROM log GROUP BY code) l
                     ON l.code = r.code
                 WHERE r.code NOT IN (SELECT code FROM set_aside)",
            )?
            .query_map([], |row| {
                let (last, snapshot) = (seq(row.get(1)?), seq(row.get(2)?));
                Ok((row.get(0)?, (last.max(snapshot), snapshot)))
            })?
            .collect()
    }

    /// Forgets every room's position, to be read again from the database when next needed.
    fn forget_positions(&self) {
        *self.positions.borrow_mut() = None;
    }

    /// Forgets the room's position (deleted or set aside), answering what it was if it was
    /// known; its rows are no longer live.
    fn drop_position(&self, code: &str) -> Option<(u64, u64)> {
        let dropped = self
            .positions
            .borrow_mut()
            .as_mut()
            .and_then(|positions| positions.remove(code));
        if let Some((last, snapshot)) = dropped {
            self.live
                .set(self.live.get().saturating_sub(last - snapshot));
        }
        dropped
    }

    /// A store that could not write tries again: the disk must take a file of [`PROBE_BYTES`]
    /// in the data directory, and the database a committed write. Once both do, the store is
    /// writable again, and the rooms waiting for it resume.
    fn probe(&self) {
        use std::io::Write;
        let file = self
            .data_dir
            .join(format!(".dhumbal-probe-{}", std::process::id()));
        let room = std::fs::File::create(&file).and_then(|mut probe| {
            probe.write_all(&[0; PROBE_BYTES])?;
            probe.sync_all()
        });
        let _ = std::fs::remove_file(&file);
        if let Err(error) = room {
            tracing::debug!(%error, "the room log's disk has no room yet");
            return;
        }
        match probe_write(&self.conn) {
            Ok(()) => {
                self.forget_positions();
                self.writable.store(true, Ordering::SeqCst);
                tracing::info!("the room log can be written again");
            }
            Err(error) => tracing::debug!(%error, "the room log cannot be written yet"),
        }
    }

    /// One room's log as committed: `None` when it is not a live room (never created, deleted,
    /// or set aside). Reads every row of `log`, which has no index by room.
    fn reload(&self, code: &str) -> Result<Option<StoredRoom>, StoreError> {
        let live: bool = self
            .conn
            .prepare_cached(
                "SELECT EXISTS (SELECT 1 FROM rooms WHERE code = ?1)
                     AND NOT EXISTS (SELECT 1 FROM set_aside WHERE code = ?1)",
            )?
            .query_row([code], |row| row.get(0))?;
        if !live {
            return Ok(None);
        }
        let rows: Vec<Row> = self
            .conn
            .prepare_cached("SELECT seq, input FROM log WHERE code = ?1 ORDER BY id")?
            .query_map([code], |row| Ok((row.get(0)?, row.get(1)?)))?
            .collect::<rusqlite::Result<_>>()?;
        self.load_room(code, Ok(rows))
            .map(Some)
            .map_err(StoreError::Conflict)
    }

    /// Every live room; sets aside (and reports) the rooms whose logs do not load, and the
    /// inputs or snapshots whose room has no setup.
    fn load(&self) -> Result<Loaded, StoreError> {
        // Loading may set rooms aside; and a load starts clean: no pass under way, no dead row
        // left, every deleted room's code free.
        self.forget_positions();
        *self.pass.borrow_mut() = None;
        if let Err(error) = self.clean_all() {
            self.clean_failed(&error);
        }
        let mut loaded = Loaded::default();
        let mut aside = HashSet::new();
        {
            let mut kept = self
                .conn
                .prepare("SELECT code, why FROM set_aside ORDER BY code")?;
            let rows = kept.query_map([], |row| Ok((row.get(0)?, row.get(1)?)))?;
            for row in rows {
                let (code, why): (String, String) = row?;
                aside.insert(code.clone());
                loaded.kept_aside.push((code, why));
            }
        }
        let codes: Vec<String> = self
            .conn
            .prepare("SELECT code FROM rooms ORDER BY code")?
            .query_map([], |row| row.get(0))?
            .collect::<rusqlite::Result<_>>()?;
        let deleted: HashSet<String> = self
            .conn
            .prepare("SELECT code FROM deleted")?
            .query_map([], |row| row.get(0))?
            .collect::<rusqlite::Result<_>>()?;
        // All of `log` in one pass, each room's rows gathered: it has no index by room. Should
        // it not read to its end, no room can be sure of its inputs.
        let mut logs = self
            .read_log()
            .map_err(|error| format!("its inputs cannot be read: {error}"));
        for code in &codes {
            if aside.contains(code) {
                continue;
            }
            let log = match &mut logs {
                Ok(logs) => Ok(logs.remove(code).unwrap_or_default()),
                Err(why) => Err(why.clone()),
            };
            match self.load_room(code, log) {
                Ok(room) => loaded.rooms.push(room),
                Err(why) => loaded.set_aside.push((code.clone(), why)),
            }
        }
        let snapshotted: rusqlite::Result<Vec<String>> = self
            .conn
            .prepare("SELECT code FROM snapshots WHERE code NOT IN (SELECT code FROM rooms)")
            .and_then(|mut orphans| orphans.query_map([], |row| row.get(0))?.collect());
        let mut orphans: std::collections::BTreeSet<String> = match snapshotted {
            Ok(orphans) => orphans.into_iter().collect(),
            Err(error) => {
                self.metrics.store_errors.increment(1);
                tracing::error!(%error, "the room log's snapshots could not be listed");
                std::collections::BTreeSet::new()
            }
        };
        if let Ok(logs) = logs {
            let rooms: HashSet<&String> = codes.iter().collect();
            orphans.extend(
                logs.into_keys()
                    .filter(|code| !rooms.contains(code) && !deleted.contains(code)),
            );
        }
        for code in orphans.into_iter().filter(|code| !aside.contains(code)) {
            let why = "the room's inputs or snapshot are logged but its setup is not";
            loaded.set_aside.push((code, why.to_owned()));
        }
        if !loaded.set_aside.is_empty() {
            let n = u64::try_from(loaded.set_aside.len()).unwrap_or(u64::MAX);
            self.metrics.store_errors.increment(n);
            for (code, why) in &loaded.set_aside {
                tracing::error!(
                    room = %code,
                    why = %why,
                    "room {code} cannot be restored from the room log: set aside (kept on \
                     disk, not loaded again)"
                );
            }
            if let Err(error) = self.mark_all(&loaded.set_aside) {
                tracing::error!(
                    %error,
                    "the rooms set aside could not be marked; they will be found again at the \
                     next start"
                );
            }
        }
        Ok(loaded)
    }

    /// Marks these rooms set aside, in one transaction.
    fn mark_all(&self, rooms: &[(String, String)]) -> rusqlite::Result<()> {
        let tx = self.immediate()?;
        for (code, why) in rooms {
            self.mark(code, why)?;
        }
        tx.commit()
    }

    /// Every row of `log`, gathered by room, each room's in the order appended.
    fn read_log(&self) -> rusqlite::Result<HashMap<String, Vec<Row>>> {
        let mut logs: HashMap<String, Vec<Row>> = HashMap::new();
        let mut statement = self
            .conn
            .prepare("SELECT code, seq, input FROM log ORDER BY id")?;
        let mut rows = statement.query([])?;
        while let Some(row) = rows.next()? {
            let code: String = row.get(0)?;
            logs.entry(code)
                .or_default()
                .push((row.get(1)?, row.get(2)?));
        }
        Ok(logs)
    }

    /// One room's log from its rows in `log` (or why they could not be read), or why it does
    /// not load.
    fn load_room(&self, code: &str, log: Result<Vec<Row>, String>) -> Result<StoredRoom, String> {
        let unreadable =
            |what: &str, error: rusqlite::Error| format!("its {what} cannot be read: {error}");
        let setup: Vec<u8> = self
            .conn
            .query_row("SELECT setup FROM rooms WHERE code = ?1", [code], |row| {
                row.get(0)
            })
            .map_err(|e| unreadable("setup", e))?;
        let snapshot: Option<(u64, Vec<u8>)> = self
            .conn
            .query_row(
                "SELECT seq, state FROM snapshots WHERE code = ?1",
                [code],
                |row| Ok((read_seq(row, 0)?, row.get(1)?)),
            )
            .optional()
            .map_err(|e| unreadable("snapshot", e))?;
        let after = snapshot.as_ref().map_or(0, |(seq, _)| *seq);
        let mut inputs = Vec::new();
        for (seq, input) in log? {
            let seq = u64::try_from(seq)
                .map_err(|_| format!("its inputs cannot be read: input {seq} is out of range"))?;
            if seq > after {
                inputs.push((seq, input));
            }
        }
        inputs.sort_by_key(|(seq, _)| *seq);
        for (expected, (seq, _)) in (after + 1..).zip(&inputs) {
            if *seq < expected {
                return Err(format!("input {seq} is logged twice"));
            }
            if *seq != expected {
                return Err(format!(
                    "input {expected} is missing from its log (the next logged input is {seq})"
                ));
            }
        }
        Ok(StoredRoom {
            code: code.to_owned(),
            setup,
            snapshot,
            inputs,
        })
    }
}
