//! The room registry: room codes to room handles; creating rooms, and restoring them from the
//! store at start.
//!
//! With a shared store (Redis) a node holds only the rooms its people have come to: creating a
//! room writes its setup to the store and holds nothing, and the first `hello` for a room this
//! node does not hold claims it from the store and restores it, as at start ([`Registry::find`]).
//! A room is described from the store on any node ([`Registry::summary`]).

use std::collections::HashMap;
use std::sync::{Arc, Mutex, PoisonError};

use dhumbal_protocol::RoomSummary;
use tracing::{error, info, warn};

use crate::code::new_code;
use crate::limits::AddressSlot;
use crate::metrics::Metrics;
use crate::room::core::OsEntropy;
use crate::room::record::{self, Entry, Setup, Snapshot};
use crate::room::{self, RoomCore, RoomHandle, RoomLog, Thinkers, Timing};
use crate::shutdown::Shutdown;
use crate::store::{Creator, Loaded, Store, StoreError, StoredRoom};

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
    /// Every room's timings (for the rooms restored or claimed).
    timing: Timing,
    /// The server's metrics.
    metrics: Arc<Metrics>,
    /// One lock per code being claimed, so that two sockets for one room do not claim it
    /// twice.
    claiming: Mutex<HashMap<String, Arc<tokio::sync::Mutex<()>>>>,
}

/// Why a room could not be created.
#[derive(Debug, thiserror::Error)]
pub enum CreateError {
    /// The registry holds as many rooms as it may.
    #[error("the server holds as many rooms as it may")]
    Full,
    /// Rooms created from the creator's address and still open, on every node of a cluster,
    /// are as many as one address may have.
    #[error("rooms created from this address are still open, as many as it may have")]
    TooManyOpen,
    /// The room's setup could not be written to the store.
    #[error("the room could not be stored: {0}")]
    Store(StoreError),
}

impl From<StoreError> for CreateError {
    fn from(error: StoreError) -> CreateError {
        match error {
            StoreError::TooManyOpen(_) => CreateError::TooManyOpen,
            error => CreateError::Store(error),
        }
    }
}

/// What restoring the stored rooms did.
#[derive(Debug, Default, PartialEq, Eq)]
pub struct Restored {
    /// The rooms restored, by code.
    pub rooms: Vec<String>,
    /// The rooms set aside, with why: their logs stay on disk, and they are not served.
    pub set_aside: Vec<(String, String)>,
}

impl Restored {
    /// A restore begun from what a load set aside (`set_aside`), warning of each room set aside
    /// before that load and still kept (`kept_aside`).
    fn begun(set_aside: Vec<(String, String)>, kept_aside: &[(String, String)]) -> Restored {
        for (code, why) in kept_aside {
            warn!(room = %code, why, "a room set aside earlier is still in the store");
        }
        Restored {
            set_aside,
            ..Restored::default()
        }
    }

    /// The restore done: logs each room set aside and how many were restored.
    fn logged(self) -> Restored {
        for (code, why) in &self.set_aside {
            error!(room = %code, why, "room set aside, not restored");
        }
        info!(
            rooms = self.rooms.len(),
            set_aside = self.set_aside.len(),
            "rooms restored"
        );
        self
    }
}

/// How many fresh codes creating a room tries when the store has each already.
const CODE_TRIES: usize = 3;

impl Registry {
    /// An empty registry that holds at most `max_rooms` rooms, each stopping at `shutdown` and
    /// logging to `store`; slow bots think in a pool sized for this machine. The rooms it
    /// restores or claims run with `timing` and count in `metrics`.
    pub fn new(
        max_rooms: usize,
        shutdown: Shutdown,
        store: Store,
        timing: Timing,
        metrics: Arc<Metrics>,
    ) -> Registry {
        Registry {
            rooms: Arc::new(Mutex::new(HashMap::new())),
            max_rooms,
            shutdown,
            store,
            thinkers: Thinkers::for_this_machine(),
            timing,
            metrics,
            claiming: Mutex::default(),
        }
    }

    /// The rooms' store.
    pub fn store(&self) -> &Store {
        &self.store
    }

    /// The pool where bots and the coach think.
    pub fn thinkers(&self) -> &Thinkers {
        &self.thinkers
    }

    /// Opens a room under a fresh code: writes its setup to the store, then starts it. `setup`'s
    /// code is replaced by the new code, which is returned. `creator` is the creating address's
    /// place under its cap, held until the room closes.
    ///
    /// With a shared store the room is only written: no node holds it until the first `hello`
    /// for its code claims it, on whichever node the router sends that to ([`Registry::find`]),
    /// and `creator`'s place is given back at once.
    pub async fn create(
        &self,
        mut setup: Setup,
        timing: Timing,
        metrics: Arc<Metrics>,
        creator: AddressSlot,
    ) -> Result<String, CreateError> {
        let mut tries = 0;
        let code = loop {
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
            tries += 1;
            // One server counts its creators' open rooms with `creator`, which the room holds
            // until it closes; a shared store counts them for every node.
            let counted = Creator {
                address: creator.ip(),
                most: creator.max(),
            };
            match self
                .store
                .create_room_for(&code, record::encode(&setup), counted)
                .await
            {
                Ok(()) => break code,
                // The code is taken in the store (a room set aside, or held by another node).
                Err(StoreError::Conflict(_)) if tries < CODE_TRIES => {}
                Err(e) => return Err(e.into()),
            }
        };
        if self.store.is_shared() {
            return Ok(code);
        }
        let core = room::new_core(&setup, timing, metrics);
        let log = RoomLog::new(self.store.clone(), code.clone(), 0);
        self.start(core, log, Some(creator));
        Ok(code)
    }

    /// Restores every room the store loaded, replaying its log; a room whose log does not
    /// replay is set aside (kept on disk, not served), and the others are restored.
    pub async fn restore(&self, loaded: Loaded) -> Restored {
        let mut restored = Restored::begun(loaded.set_aside, &loaded.kept_aside);
        for stored in loaded.rooms {
            let code = stored.code.clone();
            match self.revive(stored).await {
                Ok(()) => restored.rooms.push(code),
                Err(why) => restored.set_aside.push((code, why)),
            }
        }
        restored.logged()
    }

    /// Loads every room from the store and restores it, one room at a time: each room's log is
    /// replayed as the store hands it on and then dropped, so that the start holds the rooms
    /// as they are now, never all of their logs at once ([`Store::load_each`]). Rooms whose logs
    /// do not replay are set aside as in [`Registry::restore`]; the rooms start once all are
    /// replayed. Call it once, at start, before serving: it blocks the calling thread while the
    /// store reads.
    pub async fn load_and_restore(&self) -> Result<Restored, StoreError> {
        let mut replayed = Vec::new();
        let mut failed = Vec::new();
        let loaded = self.store.load_each(&mut |stored| match replay(
            &stored,
            self.timing,
            Arc::clone(&self.metrics),
        ) {
            Ok(core) => replayed.push((core, stored.last_seq())),
            Err(why) => failed.push((stored.code, why)),
        })?;
        let mut restored = Restored::begun(loaded.set_aside, &loaded.kept_aside);
        for (core, seq) in replayed {
            let code = core.code().to_owned();
            self.revived(core, code.clone(), seq).await;
            restored.rooms.push(code);
        }
        for (code, why) in failed {
            self.set_aside(&code, &why).await;
            restored.set_aside.push((code, why));
        }
        Ok(restored.logged())
    }

    /// Restores one room from its log and starts it, as at start and for a claim; a room whose
    /// log does not replay is set aside instead, and why is answered.
    async fn revive(&self, stored: StoredRoom) -> Result<(), String> {
        let code = stored.code.clone();
        match replay(&stored, self.timing, Arc::clone(&self.metrics)) {
            Ok(core) => {
                self.revived(core, code, stored.last_seq()).await;
                Ok(())
            }
            Err(why) => {
                self.set_aside(&code, &why).await;
                Err(why)
            }
        }
    }

    /// Starts a room replayed from its log, whose last input is `seq`.
    async fn revived(&self, core: RoomCore, code: String, seq: u64) {
        let log = RoomLog::new(self.store.clone(), code, seq);
        // A match that ended just before the process did may not have been kept.
        if let Some(kept) = core.kept_match() {
            log.keep_match(kept).await;
        }
        self.start(core, log, None);
        self.metrics.restores.increment(1);
    }

    /// Sets a room whose log does not replay aside.
    async fn set_aside(&self, code: &str, why: &str) {
        error!(room = %code, why, "a room's log does not replay; it is set aside");
        if let Err(e) = self.store.set_aside(code, why).await {
            error!(room = %code, error = %e, "could not mark the room set aside");
        }
    }

    /// The room with this (canonical) code: held here, or, with a shared store, claimed from
    /// the store now and restored as at start (every node that held it before is fenced off:
    /// its clients are told `room_moved` and come here). `None` when no such room is held here
    /// or in the store (or its log does not replay: it is set aside); an error when the store
    /// could not be reached.
    pub async fn find(&self, code: &str) -> Result<Option<RoomHandle>, StoreError> {
        if let Some(handle) = self.get(code) {
            return Ok(Some(handle));
        }
        if !self.store.is_shared() || self.shutdown.has_begun() {
            return Ok(None);
        }
        let gate = Arc::clone(
            self.claiming
                .lock()
                .unwrap_or_else(PoisonError::into_inner)
                .entry(code.to_owned())
                .or_default(),
        );
        let turn = gate.lock().await;
        // Another socket for the room may have claimed it while this one waited.
        let found = match self.get(code) {
            Some(handle) => Ok(Some(handle)),
            None => self.claim(code).await,
        };
        drop(turn);
        let mut claiming = self.claiming.lock().unwrap_or_else(PoisonError::into_inner);
        // Nobody else waits on this code's lock: it goes (the map holds one, this call another).
        if Arc::strong_count(&gate) <= 2 {
            claiming.remove(code);
        }
        found
    }

    /// Claims room `code` from the shared store and starts it here.
    async fn claim(&self, code: &str) -> Result<Option<RoomHandle>, StoreError> {
        let stored = match self.store.claim(code).await {
            Ok(Some(stored)) => stored,
            Ok(None) => return Ok(None),
            Err(StoreError::Conflict(why)) => {
                self.set_aside(code, &why).await;
                return Ok(None);
            }
            Err(e) => return Err(e),
        };
        Ok(self.revive(stored).await.ok().and_then(|()| self.get(code)))
    }

    /// What someone about to join needs to know of room `code`: from the room if it is held
    /// here; with a shared store, from its log as committed, replayed here without claiming it
    /// (people connected to it on another node then show as not connected). `None` for no such
    /// room.
    pub async fn summary(&self, code: &str) -> Option<RoomSummary> {
        if let Some(summary) = match self.get(code) {
            Some(handle) => handle.summary().await,
            None => None,
        } {
            return Some(summary);
        }
        if !self.store.is_shared() {
            return None;
        }
        match self.store.peek(code).await {
            Ok(Some(stored)) => match replay(&stored, self.timing, Arc::clone(&self.metrics)) {
                Ok(core) => Some(core.summary()),
                Err(why) => {
                    warn!(room = %code, why, "a room's log does not replay");
                    None
                }
            },
            Ok(None) => None,
            Err(e) => {
                warn!(room = %code, error = %e, "could not read a room from the store");
                None
            }
        }
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

/// A stored room's core, replayed from its log (at start, for a claim, and for a room whose
/// append failed, put back as its log has it).
pub(crate) fn replay(
    stored: &StoredRoom,
    timing: Timing,
    metrics: Arc<Metrics>,
) -> Result<RoomCore, String> {
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
            Entry::decode(blob)
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
        &mut OsEntropy,
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::room::record::{FORMAT, Record, hash_secret};
    use crate::room::testing::{TIMING, setup};
    use crate::store::StoreConfig;
    use dhumbal_engine::{Action, Preset};

    /// Creates the room `code` at the standard table in `store`.
    async fn create_standard(store: &Store, code: &str) {
        let setup = record::encode(&setup(code, Preset::Standard.settings()));
        store.create_room(code, setup).await.unwrap();
    }

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
        let config = StoreConfig::sqlite(dir.path());
        let (store, metrics) = crate::store::sqlite_for_tests(dir.path());
        let seated = Record::Seated {
            seat: 0,
            name: "Asha".into(),
            token_hash: hash_secret("token"),
        };
        create_standard(&store, "GOODROOM22").await;
        store
            .append("GOODROOM22", 1, entry(vec![seated.clone()]))
            .await
            .unwrap();
        create_standard(&store, "BADACTION2").await;
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
        create_standard(&store, "NEWFORMAT2").await;
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
        let registry = Registry::new(
            100,
            Shutdown::new(),
            store.clone(),
            TIMING,
            Arc::clone(&metrics),
        );
        let restored = registry.restore(store.load().unwrap()).await;
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
