//! Loading: every live room's log read back at start, one room at a time (and one room's on
//! demand).

use std::collections::{BTreeSet, HashSet};

use rusqlite::OptionalExtension;

use super::Row;
use super::open::read_seq;
use super::writer::Writer;
use crate::store::{Loaded, StoreError, StoredRoom};

/// The page cache's size while a load sorts the log (`PRAGMA cache_size`: negative, KiB), which
/// bounds the memory of SQLite's sorter: 8 MiB, where the writer's usual cache is 64.
const LOAD_CACHE_SIZE: i64 = -8192;

impl Writer {
    /// One room's log as committed: `None` when it is not a live room (never created, deleted,
    /// or set aside). Reads every row of `log`, which has no index by room.
    pub(super) fn reload(&self, code: &str) -> Result<Option<StoredRoom>, StoreError> {
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

    /// Every live room, handed to `each` one at a time in the order of their codes; sets aside
    /// (and reports) the rooms whose logs do not load, and the inputs or snapshots whose room
    /// has no setup. The answer's `rooms` is empty: they went to `each`.
    ///
    /// `log` has no index by room, so it is read once, sorted by room (SQLite's sorter, which
    /// spills to temporary files past its cache): the load gathers one room's rows at a time,
    /// never the whole log, and the sort reads every row of `log` before the first room is
    /// handed on, so a page that cannot be read sets every room aside, as before any room went.
    pub(super) fn load(&self, each: &mut dyn FnMut(StoredRoom)) -> Result<Loaded, StoreError> {
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
        let mut orphans = BTreeSet::new();
        {
            // The rooms' codes and the log's groups, both in code order, merged: a room with
            // no group has no inputs, a group with no room is an orphan's.
            let mut rooms = codes.iter().peekable();
            // `code` and its rows (`None`: the end of the log), the rooms before it getting
            // `before` (no inputs; or, at the end, why the log could not be read).
            let mut visit = |code: Option<&str>,
                             log: Result<Vec<Row>, String>,
                             before: &Result<Vec<Row>, String>,
                             loaded: &mut Loaded| {
                while let Some(room) =
                    rooms.next_if(|room| code.is_none_or(|code| room.as_str() < code))
                {
                    self.hand_on(room, before.clone(), &aside, loaded, each);
                }
                let Some(code) = code else { return };
                match rooms.next_if(|room| room.as_str() == code) {
                    Some(room) => self.hand_on(room, log, &aside, loaded, each),
                    None if !deleted.contains(code) && !aside.contains(code) => {
                        orphans.insert(code.to_owned());
                    }
                    None => {}
                }
            };
            let none = Ok(Vec::new());
            // SQLite's sorter holds up to the page cache's size in memory before it spills to
            // temporary files: a small cache for the sort, the usual one again after.
            let cache: rusqlite::Result<i64> =
                self.conn
                    .pragma_query_value(None, "cache_size", |row| row.get(0));
            if cache.is_ok() {
                let _ = self.conn.pragma_update(None, "cache_size", LOAD_CACHE_SIZE);
            }
            let read = self.read_log_by_room(
                &mut |code, rows, loaded: &mut Loaded| {
                    loaded.most_inputs_held = loaded.most_inputs_held.max(rows.len());
                    visit(Some(code), Ok(rows), &none, loaded);
                },
                &mut loaded,
            );
            if let Ok(cache) = cache {
                let _ = self.conn.pragma_update(None, "cache_size", cache);
            }
            // Should the log not read to its end, no room left can be sure of its inputs.
            let rest = read
                .map(|()| Vec::new())
                .map_err(|error| format!("its inputs cannot be read: {error}"));
            visit(None, Ok(Vec::new()), &rest, &mut loaded);
        }
        let snapshotted: rusqlite::Result<Vec<String>> = self
            .conn
            .prepare("SELECT code FROM snapshots WHERE code NOT IN (SELECT code FROM rooms)")
            .and_then(|mut orphans| orphans.query_map([], |row| row.get(0))?.collect());
        match snapshotted {
            Ok(snapshotted) => orphans.extend(snapshotted),
            Err(error) => {
                self.metrics.store_errors.increment(1);
                tracing::error!(%error, "the room log's snapshots could not be listed");
            }
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

    /// One room of the rooms table, with its rows of `log` (or why they could not be read):
    /// handed to `each` if it loads, noted set aside if not, skipped if it was set aside before.
    fn hand_on(
        &self,
        code: &str,
        log: Result<Vec<Row>, String>,
        aside: &HashSet<String>,
        loaded: &mut Loaded,
        each: &mut dyn FnMut(StoredRoom),
    ) {
        if aside.contains(code) {
            return;
        }
        match self.load_room(code, log) {
            Ok(room) => each(room),
            Err(why) => loaded.set_aside.push((code.to_owned(), why)),
        }
    }

    /// Marks these rooms set aside, in one transaction.
    fn mark_all(&self, rooms: &[(String, String)]) -> rusqlite::Result<()> {
        let tx = self.immediate()?;
        for (code, why) in rooms {
            self.mark(code, why)?;
        }
        tx.commit()
    }

    /// Every row of `log`, room by room in the order of their codes, each room's in the order
    /// appended: `group` gets each room's code and rows as soon as the next room's first row
    /// is read, so only one room's rows are ever gathered.
    fn read_log_by_room(
        &self,
        group: &mut dyn FnMut(&str, Vec<Row>, &mut Loaded),
        loaded: &mut Loaded,
    ) -> rusqlite::Result<()> {
        let mut statement = self
            .conn
            .prepare("SELECT code, seq, input FROM log ORDER BY code, id")?;
        let mut rows = statement.query([])?;
        let mut gathering: Option<(String, Vec<Row>)> = None;
        while let Some(row) = rows.next()? {
            let code = row.get_ref(0)?.as_str()?;
            let row_of = (row.get(1)?, row.get(2)?);
            match &mut gathering {
                Some((current, rows)) if current == code => rows.push(row_of),
                _ => {
                    let next = (code.to_owned(), vec![row_of]);
                    if let Some((code, rows)) = gathering.replace(next) {
                        group(&code, rows, loaded);
                    }
                }
            }
        }
        if let Some((code, rows)) = gathering {
            group(&code, rows, loaded);
        }
        Ok(())
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
