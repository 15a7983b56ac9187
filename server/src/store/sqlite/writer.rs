//! The writer thread: group commits, the passes collecting dead rows, the WAL's checkpoints
//! and restarts, and the probes of a log that could not be written.

use std::cell::{Cell, RefCell};
use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc::{self, Receiver, Sender};
use std::thread::{self, JoinHandle};
use std::time::{Duration, Instant};

use rusqlite::{
    Connection, ErrorCode, OptionalExtension, Transaction, TransactionBehavior, params,
};

use super::open::{PROBE_BYTES, PROBE_EVERY, probe_write, sql_seq};
use super::{
    BUSY_TIMEOUT, CLEAN_AT, CLEAN_STEP, Command, DEAD, Loading, MAX_BATCH, Op, Pass, Write,
};
use crate::metrics::{Hold, Metrics};
use crate::store::{KeptMatch, StoreError, check};

/// The writer thread's state: the only connection that writes.
pub(super) struct Writer {
    /// The database, in WAL mode.
    pub(super) conn: Connection,
    /// Commits, errors and append latency.
    pub(super) metrics: Arc<Metrics>,
    /// Each live room's last seq and snapshot seq as committed or written in the open
    /// transaction: `log` has no index by room, so this is the only place an append finds
    /// them. Only this thread writes, so it cannot go stale; it is forgotten (`None`) whenever
    /// a transaction rolls back or the connection is used for anything else, and read again
    /// from the database, for every room in one pass over `log`, when next needed.
    pub(super) positions: RefCell<Option<HashMap<String, (u64, u64)>>>,
    /// Rows of `log` that live rooms still need (no snapshot covers them), as far as this
    /// thread knows.
    pub(super) live: Cell<u64>,
    /// Dead rows in `log` (covered by a snapshot, or of a deleted room), as far as this thread
    /// knows: when they outnumber the live ones by [`CLEAN_AT`], a pass collects them.
    pub(super) dead: Cell<u64>,
    /// The pass over `log` under way, if one is.
    pub(super) pass: RefCell<Option<Pass>>,
    /// The checkpointer thread and the way to stop it, stopped before the writer closes.
    pub(super) checkpoints: Option<(Sender<()>, JoinHandle<()>)>,
    /// Set by the checkpointer when the WAL should be restarted ([`Writer::restart_wal`]).
    pub(super) restart: Arc<AtomicBool>,
    /// The database file, opened outside SQLite for the checkpointer to sync
    /// ([`checkpointer`]). Closing a descriptor drops every POSIX lock the process holds on the
    /// file, SQLite's included, so it is closed only after the connection: this field comes after
    /// `conn`, and [`Writer::close`] closes the connection before the rest of the writer goes.
    pub(super) file: Arc<std::fs::File>,
    /// The data directory's lock ([`LOCK_FILE`](crate::store::LOCK_FILE)), held while the writer runs: let go last, once
    /// the database is closed.
    pub(super) lock: std::fs::File,
    /// Whether the last commit succeeded ([`SqliteStore::is_writable`](super::SqliteStore::is_writable)).
    pub(super) writable: Arc<AtomicBool>,
    /// The data directory, where a probe makes a file to see that the disk has room.
    pub(super) data_dir: PathBuf,
}

/// How often the WAL is checkpointed into the database.
#[cfg(not(test))]
pub(super) const CHECKPOINT_EVERY: Duration = Duration::from_millis(500);
/// How often the WAL is checkpointed into the database (often in unit tests, so that a short
/// test sees many checkpoints).
#[cfg(test)]
pub(super) const CHECKPOINT_EVERY: Duration = Duration::from_millis(20);

/// How many frames the WAL may hold after a checkpoint before the checkpointer has the writer
/// restart it (64 MiB of 4 KiB pages, the `journal_size_limit`). A RESTART holds the appends for
/// 9–14 ms at the median (`loadgen play --think-ms 20 --store sqlite`): most of it is the fsync of
/// the database file, whose pages the PASSIVE checkpoints copied without syncing it (they sync
/// it only when they copy everything). At 4,096 frames that came 21–27 times in 15 s of that
/// load; at 16,384, 7–9 times.
#[cfg(not(test))]
pub(super) const RESTART_AT: i64 = 16_384;
/// How many frames the WAL may hold after a checkpoint before the checkpointer restarts it (few
/// in unit tests).
#[cfg(test)]
pub(super) const RESTART_AT: i64 = 64;

/// Checkpoints the WAL into the database every [`CHECKPOINT_EVERY`], on a connection of its own,
/// until `stop` is signalled or dropped; sets `restart` when the writer should restart the WAL,
/// and makes none of its own while that restart waits for the writer.
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
pub(super) fn checkpointer(
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
        if restart.load(Ordering::Relaxed) {
            // The writer has yet to make the RESTART asked for: a PASSIVE checkpoint running
            // when it tries would hold the checkpoint lock, and SQLite answers a RESTART that
            // finds it held with SQLITE_BUSY at once, busy handler or not. Under a slow disk
            // the two met at nearly every try and the WAL grew past 30 MB in a unit test.
            continue;
        }
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
    pub(super) fn run(self, queue: &Receiver<Command>) {
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
                        // A caller that stopped listening stops nothing: the load still ends
                        // (it sets rooms aside and cleans the log).
                        let loaded = self.load(&mut |room| {
                            let _ = answer.send(Loading::Room(room));
                        });
                        let _ = answer.send(Loading::Done(loaded));
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
    pub(super) fn clean_all(&self) -> rusqlite::Result<()> {
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
    pub(super) fn immediate(&self) -> rusqlite::Result<Transaction<'_>> {
        Transaction::new_unchecked(&self.conn, TransactionBehavior::Immediate)
    }

    /// A pass's statement failed (its transaction rolled back): logs it. The dead rows stay
    /// until enough more die (or the next load).
    pub(super) fn clean_failed(&self, error: &rusqlite::Error) {
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
            Ok(_) => {
                // Again after the next commit, before any PASSIVE checkpoint (which waits).
                self.restart.store(true, Ordering::Relaxed);
                tracing::debug!("restarting the room log's WAL was busy; trying again later");
            }
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
            // An append's buffer goes back to its room, emptied, to hold the room's next entry.
            let buffer = match write.op {
                Op::Append { mut input, .. } => {
                    if answer.is_ok() {
                        self.metrics.store_appended(write.started.elapsed());
                    }
                    input.clear();
                    input
                }
                _ => Vec::new(),
            };
            let _ = write.answer.send((answer, buffer));
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
    pub(super) fn mark(&self, code: &str, why: &str) -> rusqlite::Result<()> {
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
    pub(super) fn forget_positions(&self) {
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
}
