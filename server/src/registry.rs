//! The room registry: room codes to room handles.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};

use crate::code::new_code;
use crate::limits::AddressSlot;
use crate::room::{self, RoomHandle, RoomSetup};
use crate::shutdown::Shutdown;

/// Every open room, by code. Cheap to share: lookups take a short lock and clone a handle.
#[derive(Debug)]
pub struct Registry {
    /// The rooms by code. Shared with each room's task, which removes its room when it closes.
    rooms: Arc<Mutex<HashMap<String, RoomHandle>>>,
    /// The most rooms held at once.
    max_rooms: usize,
    /// The server's shutdown: every room stops when it begins, and the server waits for them.
    shutdown: Shutdown,
}

/// The registry holds as many rooms as it may.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Full;

impl Registry {
    /// An empty registry that holds at most `max_rooms` rooms, each stopping at `shutdown`.
    pub fn new(max_rooms: usize, shutdown: Shutdown) -> Registry {
        Registry {
            rooms: Arc::new(Mutex::new(HashMap::new())),
            max_rooms,
            shutdown,
        }
    }

    /// Opens a room under a fresh code; `setup.code` is replaced by that code, which is returned.
    /// `creator` is the creating address's place under its cap, held until the room closes.
    pub fn create(&self, mut setup: RoomSetup, creator: AddressSlot) -> Result<String, Full> {
        let mut rooms = self
            .rooms
            .lock()
            .expect("the registry lock is never poisoned");
        if rooms.len() >= self.max_rooms {
            return Err(Full);
        }
        let code = loop {
            let code = new_code();
            if !rooms.contains_key(&code) {
                break code;
            }
        };
        setup.code = code.clone();
        let registry = Arc::downgrade(&self.rooms);
        let closing = code.clone();
        let on_close = Box::new(move || {
            drop(creator);
            if let Some(rooms) = registry.upgrade() {
                rooms
                    .lock()
                    .expect("the registry lock is never poisoned")
                    .remove(&closing);
            }
        });
        rooms.insert(code.clone(), room::spawn(setup, &self.shutdown, on_close));
        Ok(code)
    }

    /// The room with this (canonical) code.
    pub fn get(&self, code: &str) -> Option<RoomHandle> {
        let rooms = self
            .rooms
            .lock()
            .expect("the registry lock is never poisoned");
        rooms.get(code).cloned()
    }

    /// How many rooms are open.
    pub fn len(&self) -> usize {
        self.rooms
            .lock()
            .expect("the registry lock is never poisoned")
            .len()
    }

    /// Whether no room is open.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
}
