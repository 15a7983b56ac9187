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
    inputs: Inputs,
    /// Why it was set aside, once it is.
    set_aside: Option<String>,
    /// Whether it was deleted: a room task's handle to it ([`RoomSlot`]) may outlive it.
    deleted: bool,
}

impl Room {
    /// The last input's seq (or the snapshot's, or 0).
    fn last_seq(&self) -> u64 {
        self.inputs
            .last_seq()
            .or(self.snapshot.as_ref().map(|(seq, _)| *seq))
            .unwrap_or(0)
    }
}

/// A room's inputs, one after another in buffers of their own, each input its seq, its length
/// and its bytes: an append copies its bytes in and lets its own go, so that the next input's
/// text is made in memory the allocator has just had back (a buffer an input, every one kept,
/// had the allocator carve a new one from the heap for every action), and an input costs its
/// bytes and twelve more. A buffer is never grown: when an input does not fit in the last one,
/// the next is started, twice as large as the last up to [`CHUNK`], so that no append copies
/// what the room wrote before (growing one buffer, and a list of where each input was, copied
/// the whole log, cold, at every doubling), and a short log stays small.
#[derive(Debug, Default)]
struct Inputs {
    /// The inputs, in seq order, each as its seq and length (little-endian, 8 and 4 bytes) and
    /// its bytes, in buffers of at most [`CHUNK`] bytes (an input larger than that alone in
    /// one), none of them ever grown past the size it was made with.
    chunks: Vec<Vec<u8>>,
    /// The last input's seq.
    last: Option<u64>,
    /// How many inputs there are.
    count: usize,
}

/// The size of a room's first input buffer: most rooms' logs between two snapshots are a few
/// kilobytes (a match), and each buffer after is twice the last, up to [`CHUNK`].
const FIRST_CHUNK: usize = 1024;

/// The size a room's input buffers grow to.
const CHUNK: usize = 16 * 1024;

/// The bytes before each input's own in [`Inputs`]: its seq and its length.
const HEAD: usize = 12;

impl Inputs {
    /// Appends input `seq`.
    fn push(&mut self, seq: u64, input: &[u8]) {
        let whole = HEAD + input.len();
        let fits = self
            .chunks
            .last()
            .is_some_and(|chunk| chunk.capacity() - chunk.len() >= whole);
        if !fits {
            let size = self
                .chunks
                .last()
                .map_or(FIRST_CHUNK, |last| (last.capacity() * 2).min(CHUNK));
            self.chunks.push(Vec::with_capacity(size.max(whole)));
        }
        let bytes = self.chunks.last_mut().expect("a buffer was made above");
        bytes.extend_from_slice(&seq.to_le_bytes());
        // An input is far below 4 GiB: a client's message is at most a few kilobytes.
        #[allow(clippy::cast_possible_truncation)]
        bytes.extend_from_slice(&(input.len() as u32).to_le_bytes());
        bytes.extend_from_slice(input);
        self.last = Some(seq);
        self.count += 1;
    }

    /// The last input's seq.
    fn last_seq(&self) -> Option<u64> {
        self.last
    }

    /// Each input's seq and bytes, in order.
    fn iter(&self) -> impl Iterator<Item = (u64, &[u8])> {
        self.chunks.iter().flat_map(|chunk| {
            let mut rest = chunk.as_slice();
            std::iter::from_fn(move || {
                let (head, after) = rest.split_first_chunk::<HEAD>()?;
                let (seq, len) = head.split_at(8);
                let seq = u64::from_le_bytes(seq.try_into().expect("8 bytes"));
                let len = u32::from_le_bytes(len.try_into().expect("4 bytes")) as usize;
                let (input, after) = after.split_at(len);
                rest = after;
                Some((seq, input))
            })
        })
    }

    /// Drops the inputs up to and including `seq` (at a snapshot: the rest is copied anew,
    /// once a match).
    fn drop_through(&mut self, seq: u64) {
        let mut kept = Inputs::default();
        for (at, input) in self.iter().filter(|(at, _)| *at > seq) {
            kept.push(at, input);
        }
        *self = kept;
    }

    /// Each input's seq and bytes, in order.
    fn to_vec(&self) -> Vec<(u64, Vec<u8>)> {
        let mut list = Vec::with_capacity(self.count);
        list.extend(self.iter().map(|(seq, input)| (seq, input.to_vec())));
        list
    }
}

/// The rooms by code, each under a lock of its own. The codes are the server's own (random,
/// never a client's choice): foldhash hashes one in a few instructions where the standard
/// SipHash took a hundred.
type Rooms = HashMap<String, Arc<Mutex<Room>>, foldhash::fast::RandomState>;

/// A room's place in the memory store, kept by the room's task once its first append has
/// looked it up ([`MemoryStore::append_at`]): every append after it takes only the room's own
/// lock, not the map's that every room's task shares, and neither hashes the code nor reads
/// the map.
#[derive(Clone, Debug, Default)]
pub struct RoomSlot(Option<Arc<Mutex<Room>>>);

/// A room's lock, taken as it is if a panic poisoned it (every write checks before it changes
/// anything).
fn lock(room: &Mutex<Room>) -> MutexGuard<'_, Room> {
    room.lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner)
}

/// The memory store: every room's log under one lock.
#[derive(Debug)]
pub struct MemoryStore {
    /// Rooms by code ([`MemoryStore::load_each`] sorts the codes for a stable order).
    rooms: Mutex<Rooms>,
    /// For the append latency, so that the memory store's figures compare with SQLite's.
    metrics: Arc<Metrics>,
    /// Kept hand histories by (code, number), with when each was kept.
    matches: Mutex<HashMap<(String, u32), (KeptMatch, Instant)>>,
}

impl MemoryStore {
    /// An empty store.
    pub fn new(metrics: Arc<Metrics>) -> MemoryStore {
        MemoryStore {
            rooms: Mutex::default(),
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
    fn rooms(&self) -> MutexGuard<'_, Rooms> {
        self.rooms
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
    }

    /// The room `code`, if it is there.
    fn room(&self, code: &str) -> Option<Arc<Mutex<Room>>> {
        self.rooms().get(code).cloned()
    }

    /// `room` (of code `code`) if it is live, or [`StoreError::UnknownRoom`].
    fn live<'a>(room: &'a mut Room, code: &str) -> Result<&'a mut Room, StoreError> {
        if room.set_aside.is_some() || room.deleted {
            return Err(StoreError::UnknownRoom(code.to_owned()));
        }
        Ok(room)
    }

    /// See [`super::Store::reload`].
    pub fn reload(&self, code: &str) -> Option<StoredRoom> {
        let room = self.room(code)?;
        let room = lock(&room);
        if room.set_aside.is_some() || room.deleted {
            return None;
        }
        Some(StoredRoom {
            code: code.to_owned(),
            setup: room.setup.clone(),
            snapshot: room.snapshot.clone(),
            inputs: room.inputs.to_vec(),
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
            // One room copied at a time, no lock held while `each` replays it.
            let Some(room) = self.room(&code) else {
                continue;
            };
            let room = {
                let room = lock(&room);
                match &room.set_aside {
                    Some(why) => {
                        loaded.kept_aside.push((code, why.clone()));
                        continue;
                    }
                    None => StoredRoom {
                        code: code.clone(),
                        setup: room.setup.clone(),
                        snapshot: room.snapshot.clone(),
                        inputs: room.inputs.to_vec(),
                    },
                }
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
            Arc::new(Mutex::new(Room {
                setup,
                snapshot: None,
                inputs: Inputs::default(),
                set_aside: None,
                deleted: false,
            })),
        );
        Ok(())
    }

    /// See [`super::Store::append`].
    pub fn append(&self, code: &str, seq: u64, input: Vec<u8>) -> Result<(), StoreError> {
        self.append_at(&mut RoomSlot::default(), code, seq, &input)
    }

    /// [`MemoryStore::append`] through `slot`, the room's place as its task keeps it: looked up
    /// by its code the first time, and kept there for the next.
    pub fn append_at(
        &self,
        slot: &mut RoomSlot,
        code: &str,
        seq: u64,
        input: &[u8],
    ) -> Result<(), StoreError> {
        let started = Instant::now();
        if slot.0.is_none() {
            slot.0 = self.room(code);
        }
        let Some(room) = &slot.0 else {
            return Err(StoreError::UnknownRoom(code.to_owned()));
        };
        let mut room = lock(room);
        let room = Self::live(&mut room, code)?;
        check::next_seq(code, room.last_seq(), seq)?;
        room.inputs.push(seq, input);
        self.metrics.store_appended(started.elapsed());
        Ok(())
    }

    /// See [`super::Store::snapshot`].
    pub fn snapshot(&self, code: &str, seq: u64, state: Vec<u8>) -> Result<(), StoreError> {
        let Some(room) = self.room(code) else {
            return Err(StoreError::UnknownRoom(code.to_owned()));
        };
        let mut room = lock(&room);
        let room = Self::live(&mut room, code)?;
        let snapshot = room.snapshot.as_ref().map_or(0, |(seq, _)| *seq);
        check::snapshot_seq(code, room.last_seq(), snapshot, seq)?;
        room.inputs.drop_through(seq);
        room.snapshot = Some((seq, state));
        Ok(())
    }

    /// See [`super::Store::delete_room`].
    pub fn delete_room(&self, code: &str) -> Result<(), StoreError> {
        let removed = self.rooms().remove(code);
        if let Some(room) = removed {
            lock(&room).deleted = true;
        }
        Ok(())
    }

    /// See [`super::Store::set_aside`].
    pub fn set_aside(&self, code: &str, why: &str) -> Result<(), StoreError> {
        match self.room(code) {
            Some(room) => {
                lock(&room).set_aside = Some(why.to_owned());
                Ok(())
            }
            None => Err(StoreError::UnknownRoom(code.to_owned())),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Inputs kept in one buffer read back as they were appended, and a snapshot's cut drops
    /// exactly those up to its seq, wherever it falls.
    #[test]
    fn inputs_in_one_buffer_read_back_and_cut_as_a_list_would() {
        let made = |n: u64| -> Vec<(u64, Vec<u8>)> {
            (1..=n)
                .map(|seq| {
                    (
                        seq,
                        format!("input {seq}").repeat(seq as usize % 3).into_bytes(),
                    )
                })
                .collect()
        };
        for cut in 0..=8 {
            let mut inputs = Inputs::default();
            let mut list = made(7);
            for (seq, input) in &list {
                inputs.push(*seq, input);
            }
            assert_eq!(inputs.to_vec(), list);
            assert_eq!(inputs.last_seq(), Some(7));
            inputs.drop_through(cut);
            list.retain(|(seq, _)| *seq > cut);
            assert_eq!(inputs.to_vec(), list, "cut at {cut}");
            assert_eq!(inputs.last_seq(), list.last().map(|(seq, _)| *seq));
            inputs.push(8, b"after");
            list.push((8, b"after".to_vec()));
            assert_eq!(inputs.to_vec(), list, "appended after the cut at {cut}");
        }
    }

    /// Inputs over many buffers (and one larger than a buffer) read back in order, no buffer is
    /// ever moved (grown) once made, and a cut in the middle keeps the rest.
    #[test]
    fn inputs_over_many_buffers_read_back_in_order() {
        let mut inputs = Inputs::default();
        let mut list = Vec::new();
        let mut places: Vec<*const u8> = Vec::new();
        for seq in 1..=400u64 {
            let len = if seq == 200 {
                CHUNK * 2
            } else {
                (seq as usize * 37) % 300
            };
            let input: Vec<u8> = (0..len).map(|i| (i as u64 + seq) as u8).collect();
            inputs.push(seq, &input);
            list.push((seq, input));
            let now: Vec<*const u8> = inputs.chunks.iter().map(|c| c.as_ptr()).collect();
            assert_eq!(
                now[..places.len()],
                places[..],
                "a buffer moved at input {seq}"
            );
            places = now;
        }
        assert!(inputs.chunks.len() > 3, "{} buffers", inputs.chunks.len());
        assert_eq!(inputs.chunks[0].capacity(), FIRST_CHUNK);
        assert_eq!(inputs.chunks[1].capacity(), FIRST_CHUNK * 2);
        assert!(
            inputs
                .chunks
                .iter()
                .all(|c| c.capacity() <= CHUNK || c.len() == HEAD + CHUNK * 2)
        );
        assert_eq!(inputs.count, 400);
        assert_eq!(inputs.to_vec(), list);
        inputs.drop_through(250);
        list.retain(|(seq, _)| *seq > 250);
        assert_eq!(inputs.to_vec(), list);
    }

    /// A room's task appends through the room's place once it has found it; once the room is
    /// set aside or deleted, an append through that place is refused as one by code is, and
    /// changes nothing, even after a room of the same code is made anew.
    #[test]
    fn an_append_through_a_kept_place_is_checked_as_one_by_code() {
        let store = MemoryStore::new(Arc::new(Metrics::new()));
        let mut slot = RoomSlot::default();
        assert!(matches!(
            store.append_at(&mut slot, "ROOM", 1, b"a"),
            Err(StoreError::UnknownRoom(_))
        ));
        store.create_room("ROOM", b"setup".to_vec()).unwrap();
        store.append_at(&mut slot, "ROOM", 1, b"a").unwrap();
        store.append("ROOM", 2, b"b".to_vec()).unwrap();
        store.append_at(&mut slot, "ROOM", 3, b"c").unwrap();
        assert!(store.append_at(&mut slot, "ROOM", 5, b"e").is_err());
        assert_eq!(store.reload("ROOM").unwrap().inputs.len(), 3);
        store.create_room("OTHER", b"setup".to_vec()).unwrap();
        let mut other = RoomSlot::default();
        store.append_at(&mut other, "OTHER", 1, b"x").unwrap();
        store.set_aside("OTHER", "unreadable").unwrap();
        assert!(matches!(
            store.append_at(&mut other, "OTHER", 2, b"y"),
            Err(StoreError::UnknownRoom(_))
        ));
        store.delete_room("ROOM").unwrap();
        assert!(matches!(
            store.append_at(&mut slot, "ROOM", 4, b"d"),
            Err(StoreError::UnknownRoom(_))
        ));
        store.create_room("ROOM", b"again".to_vec()).unwrap();
        assert!(store.append_at(&mut slot, "ROOM", 1, b"a").is_err());
        assert!(store.reload("ROOM").unwrap().inputs.is_empty());
        store
            .append_at(&mut RoomSlot::default(), "ROOM", 1, b"a")
            .unwrap();
        assert_eq!(
            store.reload("ROOM").unwrap().inputs,
            vec![(1, b"a".to_vec())]
        );
    }

    /// The store answers a room's inputs through appends and snapshots, and refuses an append
    /// out of order without changing what it holds.
    #[test]
    fn a_room_reloads_as_appended_and_snapshotted() {
        let store = MemoryStore::new(Arc::new(Metrics::new()));
        store.create_room("ROOM", b"setup".to_vec()).unwrap();
        for seq in 1..=5 {
            store
                .append("ROOM", seq, vec![b'a' + seq as u8; seq as usize])
                .unwrap();
        }
        assert!(store.append("ROOM", 7, b"skipped".to_vec()).is_err());
        store.snapshot("ROOM", 3, b"state".to_vec()).unwrap();
        let room = store.reload("ROOM").unwrap();
        assert_eq!(room.snapshot, Some((3, b"state".to_vec())));
        assert_eq!(
            room.inputs,
            vec![(4, b"eeee".to_vec()), (5, b"fffff".to_vec())]
        );
        store.append("ROOM", 6, b"g".to_vec()).unwrap();
        assert_eq!(store.reload("ROOM").unwrap().inputs.len(), 3);
    }
}
