//! The room registry: room codes to room handles; creating rooms, and restoring them from the
//! store at start.

use std::collections::HashMap;
use std::sync::{Arc, Mutex, PoisonError};

use tracing::{error, info, warn};

use crate::code::new_code;
use crate::limits::AddressSlot;
use crate::metrics::Metrics;
use crate::room::record::{self, Entry, Setup, Snapshot};
use crate::room::{self, RoomCore, RoomHandle, RoomLog, Thinkers, Timing};
use crate::shutdown::Shutdown;
use crate::store::{Loaded, Store, StoreError, StoredRoom};

/// Every open room, by code. Cheap to share: lookups take a short lock and clone a handle.
#[derive(Debug)]
pub struct Registry {
    /// The rooms by code. Shared with each room's task, which removes its room when it closes.
    rooms: Arc<Mutex<HashMap<String, RoomHandle>>>,
    /// The most rooms held at once.
    max_rooms: usize,
    /// The server's shutdown: every room stops when it begins, and the server waits for them.
    shutdown: Shutdown,
    /// Where every room's log goes.
    store: Store,
    /// Where every room's slow bots think.
    thinkers: Thinkers,
}

/// Why a room could not be created.
#[derive(Debug, thiserror::Error)]
pub enum CreateError {
    /// The registry holds as many rooms as it may.
    #[error("the server holds as many rooms as it may")]
    Full,
    /// The room's setup could not be written to the store.
    #[error("the room could not be stored: {0}")]
    Store(#[from] StoreError),
}

/// What restoring the stored rooms did.
#[derive(Debug, Default, PartialEq, Eq)]
pub struct Restored {
    /// The rooms restored, by code.
    pub rooms: Vec<String>,
    /// The rooms set aside, with why: their logs stay on disk, and they are not served.
    pub set_aside: Vec<(String, String)>,
}

impl Registry {
    /// An empty registry that holds at most `max_rooms` rooms, each stopping at `shutdown` and
    /// logging to `store`; slow bots think in a pool sized for this machine.
    pub fn new(max_rooms: usize, shutdown: Shutdown, store: Store) -> Registry {
        Registry {
            rooms: Arc::new(Mutex::new(HashMap::new())),
            max_rooms,
            shutdown,
            store,
            thinkers: Thinkers::for_this_machine(),
        }
    }

    /// The rooms' store.
    pub fn store(&self) -> &Store {
        &self.store
    }

    /// Opens a room under a fresh code: writes its setup to the store, then starts it. `setup`'s
    /// code is replaced by the new code, which is returned. `creator` is the creating address's
    /// place under its cap, held until the room closes.
    pub async fn create(
        &self,
        mut setup: Setup,
        timing: Timing,
        metrics: Arc<Metrics>,
        creator: AddressSlot,
    ) -> Result<String, CreateError> {
        let code = {
            let rooms = self.lock();
            if rooms.len() >= self.max_rooms {
                return Err(CreateError::Full);
            }
            loop {
                let code = new_code();
                if !rooms.contains_key(&code) {
                    break code;
                }
            }
        };
        setup.code = code.clone();
        self.store
            .create_room(&code, record::encode(&setup))
            .await?;
        let core = room::new_core(&setup, timing, metrics);
        let log = RoomLog {
            store: self.store.clone(),
            code: code.clone(),
            seq: 0,
        };
        self.start(core, log, Some(creator));
        Ok(code)
    }

    /// Restores every room the store loaded, replaying its log; a room whose log does not
    /// replay is set aside (kept on disk, not served), and the others are restored.
    pub async fn restore(
        &self,
        loaded: Loaded,
        timing: Timing,
        metrics: &Arc<Metrics>,
    ) -> Restored {
        let mut restored = Restored {
            set_aside: loaded.set_aside,
            ..Restored::default()
        };
        for (code, why) in &loaded.kept_aside {
            warn!(room = %code, why, "a room set aside earlier is still in the store");
        }
        for stored in loaded.rooms {
            let code = stored.code.clone();
            let seq = stored.last_seq();
            match replay(&stored, timing, Arc::clone(metrics)) {
                Ok(core) => {
                    let log = RoomLog {
                        store: self.store.clone(),
                        code: code.clone(),
                        seq,
                    };
                    // A match that ended just before the process did may not have been kept.
                    if let Some(kept) = core.kept_match() {
                        log.keep_match(kept);
                    }
                    self.start(core, log, None);
                    restored.rooms.push(code);
                }
                Err(why) => {
                    error!(room = %code, why, "a room's log does not replay; it is set aside");
                    if let Err(e) = self.store.set_aside(&code, &why).await {
                        error!(room = %code, error = %e, "could not mark the room set aside");
                    }
                    restored.set_aside.push((code, why));
                }
            }
        }
        for (code, why) in &restored.set_aside {
            error!(room = %code, why, "room set aside, not restored");
        }
        info!(
            rooms = restored.rooms.len(),
            set_aside = restored.set_aside.len(),
            "rooms restored"
        );
        restored
    }

    /// Starts a room's task and registers it.
    fn start(&self, core: RoomCore, log: RoomLog, creator: Option<AddressSlot>) {
        let code = log.code.clone();
        let registry = Arc::downgrade(&self.rooms);
        let closing = code.clone();
        let on_close = Box::new(move || {
            drop(creator);
            if let Some(rooms) = registry.upgrade() {
                rooms
                    .lock()
                    .unwrap_or_else(PoisonError::into_inner)
                    .remove(&closing);
            }
        });
        let handle = room::spawn(core, log, self.thinkers.clone(), &self.shutdown, on_close);
        self.lock().insert(code, handle);
    }

    /// The room with this (canonical) code.
    pub fn get(&self, code: &str) -> Option<RoomHandle> {
        self.lock().get(code).cloned()
    }

    /// How many rooms are open.
    pub fn len(&self) -> usize {
        self.lock().len()
    }

    /// Whether no room is open.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, HashMap<String, RoomHandle>> {
        self.rooms.lock().unwrap_or_else(PoisonError::into_inner)
    }
}

/// A stored room's core, replayed from its log.
fn replay(stored: &StoredRoom, timing: Timing, metrics: Arc<Metrics>) -> Result<RoomCore, String> {
    let setup: Setup = record::decode(&stored.setup).map_err(|e| format!("its setup is {e}"))?;
    if setup.code != stored.code {
        return Err(format!("its setup names another room, {}", setup.code));
    }
    let snapshot = match &stored.snapshot {
        Some((seq, blob)) => Some(
            record::decode::<Snapshot>(blob)
                .map_err(|e| format!("its snapshot at input {seq} is {e}"))?,
        ),
        None => None,
    };
    let entries = stored
        .inputs
        .iter()
        .map(|(seq, blob)| {
            record::decode::<Entry>(blob)
                .map(|entry| (*seq, entry.records))
                .map_err(|e| format!("its input {seq} is {e}"))
        })
        .collect::<Result<Vec<_>, _>>()?;
    RoomCore::restore(
        &setup,
        snapshot,
        entries,
        timing,
        metrics,
        tokio::time::Instant::now(),
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::room::record::{FORMAT, Record, hash_secret};
    use crate::room::testing::{TIMING, setup};
    use crate::store::StoreConfig;
    use dhumbal_engine::{Action, Preset};

    fn entry(records: Vec<Record>) -> Vec<u8> {
        record::encode(&Entry {
            format: FORMAT,
            records,
        })
    }

    /// A log that does not replay (an action before any match; a blob of a newer format; a
    /// setup that is not JSON) sets that room aside, naming it and why; every other room is
    /// restored.
    #[tokio::test]
    async fn a_room_whose_log_does_not_replay_is_set_aside_and_the_others_restored() {
        let dir = tempfile::tempdir().unwrap();
        let config = StoreConfig::Sqlite {
            data_dir: dir.path().to_owned(),
        };
        let metrics = Arc::new(Metrics::new());
        let store = Store::open(&config, Arc::clone(&metrics)).unwrap();
        let seated = Record::Seated {
            seat: 0,
            name: "Asha".into(),
            token_hash: hash_secret("token"),
        };
        store
            .create_room(
                "GOODROOM22",
                record::encode(&setup("GOODROOM22", Preset::Standard.settings())),
            )
            .await
            .unwrap();
        store
            .append("GOODROOM22", 1, entry(vec![seated.clone()]))
            .await
            .unwrap();
        store
            .create_room(
                "BADACTION2",
                record::encode(&setup("BADACTION2", Preset::Standard.settings())),
            )
            .await
            .unwrap();
        let call = Record::Acted {
            seat: 0,
            action: Action::Call,
        };
        store
            .append("BADACTION2", 1, entry(vec![seated.clone()]))
            .await
            .unwrap();
        store
            .append("BADACTION2", 2, entry(vec![call]))
            .await
            .unwrap();
        store
            .create_room(
                "NEWFORMAT2",
                record::encode(&setup("NEWFORMAT2", Preset::Standard.settings())),
            )
            .await
            .unwrap();
        let future = record::encode(&Entry {
            format: FORMAT + 1,
            records: vec![seated],
        });
        store.append("NEWFORMAT2", 1, future).await.unwrap();
        store
            .create_room("NOTJSON222", b"{{{".to_vec())
            .await
            .unwrap();
        store.close().await;

        let store = Store::open(&config, Arc::clone(&metrics)).unwrap();
        let registry = Registry::new(100, Shutdown::new(), store.clone());
        let restored = registry
            .restore(store.load().unwrap(), TIMING, &metrics)
            .await;
        assert_eq!(restored.rooms, ["GOODROOM22"]);
        let mut aside = restored.set_aside.clone();
        aside.sort();
        let codes: Vec<&str> = aside.iter().map(|(c, _)| c.as_str()).collect();
        assert_eq!(codes, ["BADACTION2", "NEWFORMAT2", "NOTJSON222"]);
        assert!(aside[0].1.contains("input 2"), "{}", aside[0].1);
        assert!(aside[1].1.contains("format"), "{}", aside[1].1);
        assert!(aside[2].1.contains("setup"), "{}", aside[2].1);
        let summary = registry.get("GOODROOM22").unwrap().summary().await.unwrap();
        assert_eq!(summary.seats[0].name.as_deref(), Some("Asha"));
        // Set aside for good: the next start neither restores nor loses them.
        store.close().await;
        let store = Store::open(&config, Arc::clone(&metrics)).unwrap();
        let loaded = store.load().unwrap();
        let live: Vec<&str> = loaded.rooms.iter().map(|r| r.code.as_str()).collect();
        assert_eq!(live, ["GOODROOM22"]);
        assert_eq!(loaded.kept_aside.len(), 3);
    }
}
