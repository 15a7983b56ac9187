//! Opening the data directory: its lock, the checks that it can be written, and a damaged
//! database moved aside.

use std::path::{Path, PathBuf};
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use rusqlite::{Connection, ErrorCode, OpenFlags};

use super::BUSY_TIMEOUT;
use super::schema::{MIGRATIONS, check_readable, migrate, user_version};
use crate::store::{DB_FILE, LOCK_FILE, StoreError, SyncMode};

/// Why [`open_database`] failed.
pub(super) enum Opening {
    /// The file is not a usable database: move it aside and start afresh.
    Damaged(StoreError),
    /// Anything else (a newer schema, a folder we may not write): refuse to start.
    Failed(StoreError),
}

impl Opening {
    /// The error to give the caller.
    pub(super) fn into_error(self) -> StoreError {
        match self {
            Opening::Damaged(error) => error,
            Opening::Failed(error) => error,
        }
    }
}

/// Sorts an error met while opening.
pub(super) fn opening(error: impl Into<StoreError>) -> Opening {
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

/// Opens the database for the writer: checks it through a read-only connection first (a newer
/// schema is refused unchanged; a damaged file is reported as such), then opens it for writing
/// in WAL mode and migrates it.
pub(super) fn open_database(path: &Path, sync: SyncMode) -> Result<Connection, Opening> {
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
pub(super) fn check_database(path: &Path, known: u32) -> Result<(), Opening> {
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
pub(super) fn sidecar(path: &Path, tail: &str) -> PathBuf {
    let mut name = path.as_os_str().to_owned();
    name.push(tail);
    PathBuf::from(name)
}

/// Renames the damaged database `path` (and its `-wal` and `-shm`) to
/// `<path>.damaged-<unix-time>` (with `.1`, `.2`, … if taken) and answers the new path.
pub(super) fn move_aside(path: &Path) -> Result<PathBuf, StoreError> {
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
pub(super) fn lock(data_dir: &Path) -> Result<std::fs::File, StoreError> {
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
pub(super) fn probe_folder(data_dir: &Path) -> Result<(), StoreError> {
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
pub(super) fn probe_database(conn: &Connection, data_dir: &Path) -> Result<bool, StoreError> {
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
pub(super) fn probe_write(conn: &Connection) -> rusqlite::Result<()> {
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
pub(super) const PROBE_BYTES: usize = 256 * 1024;

/// How often a store that could not write tries again.
#[cfg(not(test))]
pub(super) const PROBE_EVERY: Duration = Duration::from_secs(1);
/// How often a store that could not write tries again (often in unit tests).
#[cfg(test)]
pub(super) const PROBE_EVERY: Duration = Duration::from_millis(50);

/// An I/O error about the data directory: [`StoreError::Unwritable`] when it says the folder
/// (or a file in it) may not be written, else [`StoreError::Io`].
pub(super) fn unwritable(data_dir: &Path, doing: &str, error: std::io::Error) -> StoreError {
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
pub(super) fn orphaned_wal(path: &Path) -> Option<u64> {
    let wal = std::fs::metadata(sidecar(path, "-wal")).ok()?.len();
    let database = std::fs::metadata(path).map_or(0, |meta| meta.len());
    (wal > 0 && database == 0).then_some(wal)
}

/// A seq as SQLite stores it (an `i64`).
pub(super) fn sql_seq(code: &str, seq: u64) -> Result<i64, StoreError> {
    i64::try_from(seq)
        .map_err(|_| StoreError::Conflict(format!("room {code}: seq {seq} is out of range")))
}

/// The seq in column `column`; a negative one is damage.
pub(super) fn read_seq(row: &rusqlite::Row<'_>, column: usize) -> rusqlite::Result<u64> {
    let seq: i64 = row.get(column)?;
    u64::try_from(seq).map_err(|_| rusqlite::Error::IntegralValueOutOfRange(column, seq))
}
