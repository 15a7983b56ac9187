//! Watchers (spectators): how many a room lets in, their names, the host's power to remove one
//! or to turn watching off, and the room-wide limit on reactions.

use std::net::IpAddr;

use dhumbal_protocol::{CLOSE_REMOVED, CLOSE_WATCHING_OFF, ServerMessage, Watcher, codes};
use tokio::time::Instant;
use tracing::info;

use super::{ConnId, RoomCore};
use crate::error::Refusal;
use crate::room::record::{Record, hash_secret};

/// Reactions the whole room may show per second, and at most at once.
const ROOM_REACTIONS: (f64, f64) = (8.0, 16.0);

/// The watchers' share: reactions all the room's watchers together may show per second, and at
/// most at once. The rest of the room's budget is always the players'.
const WATCHER_REACTIONS: (f64, f64) = (4.0, 8.0);

/// A token bucket: `rate` tokens a second, at most `burst` held.
#[derive(Debug)]
struct Bucket {
    /// Tokens a second.
    rate: f64,
    /// The most held.
    burst: f64,
    /// Held now (as of `at`).
    tokens: f64,
    /// When `tokens` was counted.
    at: Instant,
}

impl Bucket {
    fn new((rate, burst): (f64, f64), now: Instant) -> Bucket {
        Bucket {
            rate,
            burst,
            tokens: burst,
            at: now,
        }
    }

    /// Refills to `now`; whether a token is held.
    fn has_one(&mut self, now: Instant) -> bool {
        if now > self.at {
            let refill = now.duration_since(self.at).as_secs_f64() * self.rate;
            self.tokens = (self.tokens + refill).min(self.burst);
            self.at = now;
        }
        self.tokens >= 1.0
    }
}

/// The room-wide reaction limit (on top of each connection's message rate): a budget for the
/// whole room and a smaller share of it for the watchers together, so that many watchers
/// cannot flood the table nor crowd out the players' reactions.
#[derive(Debug)]
pub(super) struct Reactions {
    /// Every reaction.
    room: Bucket,
    /// Watchers' reactions.
    watchers: Bucket,
}

impl Reactions {
    /// Full budgets, as of `now`.
    pub(super) fn new(now: Instant) -> Reactions {
        Reactions {
            room: Bucket::new(ROOM_REACTIONS, now),
            watchers: Bucket::new(WATCHER_REACTIONS, now),
        }
    }

    /// Takes one reaction's worth at `now`, a watcher's or a player's; whether it may be shown.
    fn take(&mut self, now: Instant, watcher: bool) -> bool {
        let room = self.room.has_one(now);
        let share = self.watchers.has_one(now);
        if !room || (watcher && !share) {
            return false;
        }
        self.room.tokens -= 1.0;
        if watcher {
            self.watchers.tokens -= 1.0;
        }
        true
    }
}

impl RoomCore {
    /// Who watches now, in the order they came.
    pub(super) fn watchers(&self) -> Vec<Watcher> {
        let mut watchers: Vec<Watcher> = self
            .clients
            .values()
            .filter_map(|c| {
                c.watcher.map(|id| Watcher {
                    id,
                    name: c.name.clone(),
                })
            })
            .collect();
        watchers.sort_by_key(|w| w.id);
        watchers
    }

    /// The key a removed watcher is kept out by: the SHA-256 of the room's code and the
    /// client's address (an IPv6 address by its /64, which one host has whole).
    pub(super) fn address_hash(&self, address: IpAddr) -> String {
        let address = match address {
            IpAddr::V6(v6) => match v6.to_ipv4_mapped() {
                Some(v4) => v4.to_string(),
                None => {
                    let s = v6.segments();
                    format!("{:x}:{:x}:{:x}:{:x}::/64", s[0], s[1], s[2], s[3])
                }
            },
            IpAddr::V4(v4) => v4.to_string(),
        };
        hash_secret(&format!("watcher/{}/{address}", self.code))
    }

    /// Whether the host removed a watcher from this address (and has not let it back).
    pub(super) fn is_removed_watcher(&self, address_hash: &str) -> bool {
        self.removed_watchers
            .iter()
            .any(|r| r.address_hash == address_hash)
    }

    /// Checks that one more may watch, as `name`: watching is on, the room has room for
    /// another watcher, and nobody in the room (seated or watching) goes by that name or one
    /// that looks like it.
    pub(super) fn admit_watcher(&self, name: &str) -> Result<(), Refusal> {
        if !self.watching {
            return Err(Refusal::WatchingOff);
        }
        let watching = self
            .clients
            .values()
            .filter(|c| c.watcher.is_some())
            .count();
        if watching >= self.timing.max_watchers {
            return Err(Refusal::WatchersFull);
        }
        self.require_unique_name(name, None)
    }

    /// Anyone in the room reacts, within the room-wide limit; everyone sees it beside the seat
    /// (a watcher's by name).
    pub(super) fn react(
        &mut self,
        seat: Option<usize>,
        watcher: String,
        reaction: dhumbal_protocol::Reaction,
    ) -> Result<(), Refusal> {
        if !self.reactions.take(self.now, seat.is_none()) {
            return Err(Refusal::TooManyReactions);
        }
        let name = match seat.and_then(|s| self.human(s)) {
            Some(human) => human.name.clone(),
            None => watcher,
        };
        self.broadcast(&ServerMessage::Reaction {
            seat,
            name,
            reaction,
        });
        Ok(())
    }

    /// Host only: removes a watcher, and every other watcher from the same address; nobody
    /// new comes in from it until the host lets it back.
    pub(super) fn remove_watcher(&mut self, seat: Option<usize>, id: u32) -> Result<(), Refusal> {
        self.require_host(seat)?;
        let Some((name, address_hash)) = self
            .clients
            .values()
            .find(|c| c.watcher == Some(id))
            .map(|c| (c.name.clone(), c.address_hash.clone()))
        else {
            return Err(Refusal::NoSuchWatcher(id));
        };
        self.commit(Record::WatcherRemoved {
            name: name.clone(),
            address_hash: address_hash.clone(),
        })
        .map_err(|e| self.internal(e))?;
        let gone: Vec<ConnId> = self
            .clients
            .iter()
            .filter(|(_, c)| c.watcher.is_some() && c.address_hash == address_hash)
            .map(|(conn, _)| *conn)
            .collect();
        let bye = ServerMessage::bye(
            codes::REMOVED,
            "the host removed you from watching this room",
        );
        for conn in gone {
            self.send_to(conn, &bye);
            self.clients.remove(&conn);
            self.outbox
                .close(conn, CLOSE_REMOVED, "removed by the host");
        }
        info!(room = %self.code, %name, "watcher removed by the host");
        self.broadcast_room();
        Ok(())
    }

    /// Host only: lets a removed watcher's address back in.
    pub(super) fn readmit_watcher(
        &mut self,
        seat: Option<usize>,
        removed: usize,
    ) -> Result<(), Refusal> {
        self.require_host(seat)?;
        if removed >= self.removed_watchers.len() {
            return Err(Refusal::NotRemoved(removed));
        }
        self.commit(Record::WatcherReadmitted { index: removed })
            .map_err(|e| self.internal(e))?;
        self.broadcast_room();
        Ok(())
    }

    /// Host only: allows watchers, or turns watching off (every watcher is told and closed).
    pub(super) fn set_watching(
        &mut self,
        seat: Option<usize>,
        allowed: bool,
    ) -> Result<(), Refusal> {
        self.require_host(seat)?;
        if self.watching == allowed {
            return Ok(());
        }
        self.commit(Record::WatchingSet { allowed })
            .map_err(|e| self.internal(e))?;
        if !allowed {
            let gone: Vec<ConnId> = self
                .clients
                .iter()
                .filter(|(_, c)| c.watcher.is_some())
                .map(|(conn, _)| *conn)
                .collect();
            let bye = ServerMessage::bye(
                codes::WATCHING_OFF,
                "the host turned watching off for this room",
            );
            for conn in gone {
                self.send_to(conn, &bye);
                self.clients.remove(&conn);
                self.outbox
                    .close(conn, CLOSE_WATCHING_OFF, "watching turned off");
            }
        }
        info!(room = %self.code, allowed, "watching set by the host");
        self.broadcast_room();
        Ok(())
    }
}
