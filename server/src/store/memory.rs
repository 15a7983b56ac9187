//! `--store memory`: the room log's checks and answers, with nothing kept. Every write completes
//! at once, under one lock; [`MemoryStore::load_each`] answers what this process wrote.

use std::collections::HashMap;
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::{Duration, Instant};

use super::{KeptMatch, Loaded, StoreError, StoredRoom, check};
use crate::metrics::Metrics;

/// One room's log in memory.
#[derive(Debug)]
struct Room {
    /// As created.
    setup: Vec<u8>,
    /// The latest snapshot: (seq, state).
    snapshot: Option<(u64, Vec<u8>)>,
    /// The inputs after the snapshot, in seq order.
    inputs: Vec<(u64, Vec<u8>)>,
    /// Why it was set aside, once it is.
    set_aside: Option<String>,
}

impl Room {
    /// The last input's seq (or the snapshot's, or 0).
    fn last_seq(&self) -> u64 {
        self.inputs
            .last()
            .map(|(seq, _)| *seq)
            .or(self.snapshot.as_ref().map(|(seq, _)| *seq))
            .unwrap_or(0)
    }
}

/// The memory store: every room's log under one lock.
#[derive(Debug)]
pub struct MemoryStore {
    /// Rooms by code ([`MemoryStore::load_each`] sorts the codes for a stable order).
    rooms: Mutex<HashMap<String, Room>>,
    /// For the append latency, so that the memory store's figures compare with SQLite's.
    metrics: Arc<Metrics>,
    /// Kept hand histories by (code, number), with when each was kept.
    matches: Mutex<HashMap<(String, u32), (KeptMatch, Instant)>>,
}

impl MemoryStore {
    /// An empty store.
    pub fn new(metrics: Arc<Metrics>) -> MemoryStore {
        MemoryStore {
            rooms: Mutex::new(HashMap::new()),
            metrics,
            matches: Mutex::default(),
        }
    }

    /// The kept matches, taken as they are if a panic poisoned the lock (each write is one
    /// map operation).
    fn matches(&self) -> MutexGuard<'_, HashMap<(String, u32), (KeptMatch, Instant)>> {
        self.matches
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
    }

    /// See [`super::Store::keep_match`].
    pub fn keep_match(&self, kept: KeptMatch) -> Result<(), StoreError> {
        self.matches()
            .entry((kept.code.clone(), kept.number))
            .or_insert_with(|| (kept, Instant::now()));
        Ok(())
    }

    /// See [`super::Store::find_match`].
    pub fn find_match(&self, code: &str, number: u32) -> Option<KeptMatch> {
        self.matches()
            .get(&(code.to_owned(), number))
            .map(|(kept, _)| kept.clone())
    }

    /// See [`super::Store::forget_matches`].
    pub fn forget_matches(&self, keep: Duration) -> Result<(), StoreError> {
        self.matches().retain(|_, (_, at)| at.elapsed() <= keep);
        Ok(())
    }

    /// The rooms; a panic elsewhere while holding the lock leaves them consistent (every write
    /// checks before it changes anything), so a poisoned lock is taken as it is.
    fn rooms(&self) -> MutexGuard<'_, HashMap<String, Room>> {
        self.rooms
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
    }

    /// The live room `code`, or [`StoreError::UnknownRoom`].
    fn live<'a>(
        rooms: &'a mut HashMap<String, Room>,
        code: &str,
    ) -> Result<&'a mut Room, StoreError> {
        match rooms.get_mut(code) {
            Some(room) if room.set_aside.is_none() => Ok(room),
            _ => Err(StoreError::UnknownRoom(code.to_owned())),
        }
    }

    /// See [`super::Store::reload`].
    pub fn reload(&self, code: &str) -> Option<StoredRoom> {
        let rooms = self.rooms();
        let room = rooms.get(code).filter(|room| room.set_aside.is_none())?;
        Some(StoredRoom {
            code: code.to_owned(),
            setup: room.setup.clone(),
            snapshot: room.snapshot.clone(),
            inputs: room.inputs.clone(),
        })
    }

    /// Every live room, handed to `each` one at a time in the order of their codes, and the
    /// rooms set aside (all in [`Loaded::kept_aside`]: nothing in memory is ever damaged).
    pub fn load_each(&self, each: &mut dyn FnMut(StoredRoom)) -> Loaded {
        let mut loaded = Loaded::default();
        let codes: Vec<String> = {
            let rooms = self.rooms();
            let mut codes: Vec<String> = rooms.keys().cloned().collect();
            codes.sort();
            codes
        };
        for code in codes {
            // One room copied at a time, the lock not held while `each` replays it.
            let room = match self.rooms().get(&code) {
                None => continue,
                Some(room) => match &room.set_aside {
                    Some(why) => {
                        loaded.kept_aside.push((code, why.clone()));
                        continue;
                    }
                    None => StoredRoom {
                        code: code.clone(),
                        setup: room.setup.clone(),
                        snapshot: room.snapshot.clone(),
                        inputs: room.inputs.clone(),
                    },
                },
            };
            loaded.most_inputs_held = loaded.most_inputs_held.max(room.inputs.len());
            each(room);
        }
        loaded
    }

    /// See [`super::Store::create_room`].
    pub fn create_room(&self, code: &str, setup: Vec<u8>) -> Result<(), StoreError> {
        let mut rooms = self.rooms();
        if rooms.contains_key(code) {
            return Err(check::exists(code));
        }
        rooms.insert(
            code.to_owned(),
            Room {
                setup,
                snapshot: None,
                inputs: Vec::new(),
                set_aside: None,
            },
        );
        Ok(())
    }

    /// See [`super::Store::append`].
    pub fn append(&self, code: &str, seq: u64, input: Vec<u8>) -> Result<(), StoreError> {
        let started = Instant::now();
        let mut rooms = self.rooms();
        let room = Self::live(&mut rooms, code)?;
        check::next_seq(code, room.last_seq(), seq)?;
        room.inputs.push((seq, input));
        self.metrics.store_appended(started.elapsed());
        Ok(())
    }

    /// See [`super::Store::snapshot`].
    pub fn snapshot(&self, code: &str, seq: u64, state: Vec<u8>) -> Result<(), StoreError> {
        let mut rooms = self.rooms();
        let room = Self::live(&mut rooms, code)?;
        let snapshot = room.snapshot.as_ref().map_or(0, |(seq, _)| *seq);
        check::snapshot_seq(code, room.last_seq(), snapshot, seq)?;
        room.inputs.retain(|(input, _)| *input > seq);
        room.snapshot = Some((seq, state));
        Ok(())
    }

    /// See [`super::Store::delete_room`].
    pub fn delete_room(&self, code: &str) -> Result<(), StoreError> {
        self.rooms().remove(code);
        Ok(())
    }

    /// See [`super::Store::set_aside`].
    pub fn set_aside(&self, code: &str, why: &str) -> Result<(), StoreError> {
        match self.rooms().get_mut(code) {
            Some(room) => {
                room.set_aside = Some(why.to_owned());
                Ok(())
            }
            None => Err(StoreError::UnknownRoom(code.to_owned())),
        }
    }
}
