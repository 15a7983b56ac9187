//! Loading: every live room's log read back at start (and one room's on demand).

use std::collections::{HashMap, HashSet};

use rusqlite::OptionalExtension;

use super::Row;
use super::open::read_seq;
use super::writer::Writer;
use crate::store::{Loaded, StoreError, StoredRoom};

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

    /// Every live room; sets aside (and reports) the rooms whose logs do not load, and the
    /// inputs or snapshots whose room has no setup.
    pub(super) fn load(&self) -> Result<Loaded, StoreError> {
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
