//! The schema: its versioned steps, and the migration of a database to the newest.

use std::path::Path;

use rusqlite::Connection;

use crate::store::StoreError;

/// The schema steps, in order: step `i` takes the database from version `i` to `i + 1`. Append
/// new steps; never edit one that has shipped.
pub(crate) const MIGRATIONS: &[&str] = &[
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

/// The database's schema version.
pub(super) fn user_version(conn: &Connection) -> rusqlite::Result<u32> {
    conn.pragma_query_value(None, "user_version", |row| row.get(0))
}

/// Reads what every start needs to read (the schema, the list of rooms), so that a file whose
/// header or room list is damaged is found before anything is written to it.
pub(super) fn check_readable(conn: &Connection, version: u32) -> rusqlite::Result<()> {
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
pub(crate) fn migrate(
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
