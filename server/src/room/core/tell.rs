//! Telling clients: one client or all, the room as everyone sees it, and the room's summary.

use dhumbal_engine::{Event, Hex32};
use dhumbal_protocol::{
    Fairness, LedgerRow, PatchFrames, RoomState, RoomSummary, SeatInfo, SeatKind, ServerMessage,
    Stage, StateFrames, Told,
};

use super::{ConnId, Effect, RoomCore, Seat};
use crate::room::client::Text;

impl RoomCore {
    pub(super) fn send_to(&mut self, conn: ConnId, message: &ServerMessage) {
        if self.clients.contains_key(&conn) {
            self.outbox.push(Effect::Send {
                to: conn,
                text: message.to_json().into(),
            });
        }
    }

    pub(super) fn broadcast(&mut self, message: &ServerMessage) {
        let text = Text::from(message.to_json());
        for conn in self.clients.keys() {
            self.outbox.push(Effect::Send {
                to: *conn,
                text: text.clone(),
            });
        }
    }

    /// A whole `state` for one client (arriving, or asking for it with `resync`): the view it
    /// holds from now on is the version every client was last told.
    pub(super) fn send_state(&mut self, conn: ConnId) {
        let Some(game) = &self.game else {
            return;
        };
        // What the clients were told is the game now (every change of the game is told as it
        // happens); should it not be, the view starts a new version, and the clients holding an
        // older one get a whole `state` at the next change.
        if !self.told.as_ref().is_some_and(|told| told.is_of(game)) {
            self.views_made += 1;
            self.told = Some(Told::of(game, self.views_made));
        }
        let v = self.views_made;
        let clock = self.clock();
        let Some(client) = self.clients.get_mut(&conn) else {
            return;
        };
        client.view_v = Some(v);
        let state = ServerMessage::state(game, client.seat, clock, v);
        self.send_to(conn, &state);
    }

    /// Tells every client one change of the game (`events`, played by a stand-in for
    /// `stand_in`, or none for a change of the turn's clock alone): a `patch` to each client
    /// holding the view last told, a whole `state` (with the events) to any other.
    pub(super) fn tell_change(&mut self, events: &[Event], stand_in: Option<usize>) {
        thread_local! {
            /// The memory the changes told on this thread were written in, in which the next
            /// change's patches are made: no allocation a change, and memory some room just
            /// used. A room's own would have left the caches by its next change, where hundreds
            /// of rooms take turns.
            static FRAMES: std::cell::RefCell<PatchFrames> = std::cell::RefCell::default();
        }
        FRAMES.with_borrow_mut(|frames| self.tell_change_in(frames, events, stand_in));
    }

    /// [`RoomCore::tell_change`], its patches made in `frames`.
    fn tell_change_in(
        &mut self,
        frames: &mut PatchFrames,
        events: &[Event],
        stand_in: Option<usize>,
    ) {
        let Some(game) = &self.game else {
            return;
        };
        let clock = self.clock();
        self.views_made += 1;
        let v = self.views_made;
        // The version the clients that get a patch hold; what they were told is brought up to
        // the game as the patches are made.
        let base = match &mut self.told {
            Some(told) if told.version + 1 == v => {
                frames.tell(told, game, events, stand_in, clock);
                // Every patch is written into one batch, sent out in parts of one buffer.
                self.batch
                    .text()
                    .reserve(frames.frame_len_hint() * self.clients.len());
                Some(v - 1)
            }
            _ => None,
        };
        let mut whole: Option<StateFrames> = None;
        self.part_to.clear();
        for (conn, client) in &mut self.clients {
            if base.is_some() && client.view_v == base {
                frames.write_for_seat(client.seat, self.batch.text());
                self.batch.end_frame();
                self.part_to.push(*conn);
            } else {
                let text = whole
                    .get_or_insert_with(|| StateFrames::new(game, events, stand_in, clock, v))
                    .for_seat(game, client.seat);
                self.outbox.push(Effect::Send {
                    to: *conn,
                    text: text.into(),
                });
            }
            client.view_v = Some(v);
        }
        if base.is_none() {
            self.told = Some(Told::of(game, v));
        }
        self.send_parts();
    }

    pub(super) fn seat_infos(&self) -> Vec<SeatInfo> {
        self.seats
            .iter()
            .enumerate()
            .map(|(i, seat)| {
                let ready = self.votes[i] || matches!(seat, Seat::Bot(_));
                match seat {
                    Seat::Empty => SeatInfo {
                        seat: i,
                        kind: SeatKind::Empty,
                        name: None,
                        difficulty: None,
                        connected: false,
                        ready,
                        stand_in: None,
                        muted: false,
                        away: false,
                    },
                    Seat::Human(human) => SeatInfo {
                        seat: i,
                        kind: SeatKind::Human,
                        name: Some(human.name.clone()),
                        difficulty: None,
                        connected: human.conn.is_some(),
                        ready,
                        stand_in: human.cover.stand_in().map(|s| s.bot.difficulty()),
                        muted: human.muted,
                        away: human.cover.is_away(),
                    },
                    Seat::Bot(bot) => SeatInfo {
                        seat: i,
                        kind: SeatKind::Bot,
                        name: Some(format!("Bot {}", i + 1)),
                        difficulty: Some(bot.difficulty),
                        connected: true,
                        ready,
                        stand_in: None,
                        muted: false,
                        away: false,
                    },
                }
            })
            .collect()
    }

    pub(super) fn host_seat(&self) -> Option<usize> {
        (0..self.seats.len()).find(|&s| self.is_host(s))
    }

    pub(super) fn room_state(&self, your_seat: Option<usize>) -> RoomState {
        RoomState {
            code: self.code.clone(),
            stage: self.stage(),
            started: self.stage() != Stage::Lobby,
            settings: self.settings.clone(),
            seats: self.seat_infos(),
            host: self.host_seat(),
            your_seat,
            removed: self.removed.iter().map(|r| r.name.clone()).collect(),
            fairness: self.fairness(),
            watching: self.watching,
            watchers: self.watchers(),
            removed_watchers: self
                .removed_watchers
                .iter()
                .map(|r| r.name.clone())
                .collect(),
            ledger: self.ledger_rows(),
        }
    }

    /// The ledger as the room shows it: each line with the name at its seat now.
    pub(super) fn ledger_rows(&self) -> Vec<LedgerRow> {
        let infos = self.seat_infos();
        self.ledger
            .iter()
            .map(|row| LedgerRow {
                seat: row.seat,
                name: infos.get(row.seat).and_then(|info| info.name.clone()),
                played: row.played,
                won: row.won,
                points: row.points,
            })
            .collect()
    }

    /// The commitment the room shows: the match being played's, or (in the lobby and after a
    /// match) the next one's.
    pub(super) fn fairness(&self) -> Option<Fairness> {
        let (number, commitment) = self.shown_commitment()?;
        Some(Fairness {
            match_number: number,
            commitment: commitment.to_string(),
        })
    }

    /// The match number and commitment the room shows (see [`RoomCore::fairness`]): the only
    /// commitment a client seed may answer now.
    pub(super) fn shown_commitment(&self) -> Option<(u32, Hex32)> {
        let playing = self.game.as_ref().filter(|g| !g.is_over());
        match (playing, self.next_seed) {
            (Some(game), _) => Some((self.matches, game.commitment()?)),
            (None, Some(seed)) => Some((self.matches + 1, dhumbal_engine::fair::commitment(&seed))),
            (None, None) => None,
        }
    }

    /// Tells every client the room (`room`), each with its own seat. The message is written
    /// once: each seated client's differs only in `your_seat`, spliced into the one text, and
    /// the spectators share one text.
    pub(super) fn broadcast_room(&mut self) {
        let state = self.room_state(None);
        if self
            .settings_json
            .as_ref()
            .is_none_or(|(shown, _)| *shown != state.settings)
        {
            let json = serde_json::to_string(&state.settings).expect("settings serialise");
            self.settings_json = Some((state.settings.clone(), json));
        }
        let settings = self.settings_json.as_ref().map_or("", |(_, json)| json);
        let mut bytes = Vec::with_capacity(2048);
        state.write_message(settings, &mut bytes);
        let json = String::from_utf8(bytes).expect("serde_json writes UTF-8");
        let Some((before, after)) = split_at_your_seat(&json) else {
            // Not reached: the room's state always has the key (a test holds it).
            return self.broadcast_room_one_by_one();
        };
        let seated = self.clients.values().filter(|c| c.seat.is_some()).count();
        // A batch this size has a buffer of its own (see `Batch`): made at its size at once.
        self.batch.text().reserve((json.len() + 2) * seated);
        let mut spectators: Option<Text> = None;
        self.part_to.clear();
        for (conn, client) in &self.clients {
            match client.seat {
                Some(seat) => {
                    let text = self.batch.text();
                    text.push_str(before);
                    text.push_str(itoa::Buffer::new().format(seat));
                    text.push_str(after);
                    self.batch.end_frame();
                    self.part_to.push(*conn);
                }
                None => self.outbox.push(Effect::Send {
                    to: *conn,
                    text: spectators
                        .get_or_insert_with(|| Text::from(json.as_str()))
                        .clone(),
                }),
            }
        }
        self.send_parts();
    }

    /// Sends each client in `part_to` its frame of the batch, in order.
    fn send_parts(&mut self) {
        for (conn, text) in self.part_to.iter().zip(self.batch.share()) {
            self.outbox.push(Effect::Send { to: *conn, text });
        }
    }

    /// [`RoomCore::broadcast_room`] the plain way: the message made and written for each client.
    fn broadcast_room_one_by_one(&mut self) {
        let state = self.room_state(None);
        let conns: Vec<(ConnId, Option<usize>)> =
            self.clients.iter().map(|(c, cl)| (*c, cl.seat)).collect();
        for (conn, seat) in conns {
            let message = ServerMessage::Room(RoomState {
                your_seat: seat,
                ..state.clone()
            });
            self.send_to(conn, &message);
        }
    }

    /// What someone about to join needs to know.
    pub fn summary(&self) -> RoomSummary {
        RoomSummary {
            exists: true,
            code: self.code.clone(),
            stage: self.stage(),
            started: self.stage() != Stage::Lobby,
            free_seats: if self.stage() == Stage::Lobby {
                self.seats
                    .iter()
                    .filter(|s| matches!(s, Seat::Empty))
                    .count()
            } else {
                0
            },
            seats: self.seat_infos(),
            settings: self.settings.clone(),
            watching: self.watching,
        }
    }

    /// The room's durable state in a comparable form (for the replay tests): settings, seats,
    /// host, removed people, stage, votes and the game.
    #[cfg(test)]
    pub(super) fn durable(
        &self,
    ) -> (
        crate::room::record::Snapshot,
        Stage,
        Vec<bool>,
        Option<dhumbal_engine::Game>,
    ) {
        (
            self.snapshot_now(),
            self.stage(),
            self.votes.clone(),
            self.game.clone(),
        )
    }
}

/// A `room` message written for no seat, around its `your_seat`'s value: what comes before the
/// value (the key included) and what comes after it. The first `"your_seat":null` is the key: in
/// a string value every `"` is escaped, so that text, whose second quote is not, can only end a
/// key, and no key before `your_seat` is a map's.
pub(super) fn split_at_your_seat(json: &str) -> Option<(&str, &str)> {
    const KEY: &str = "\"your_seat\":";
    // `memmem` looks with vector instructions: `str::find` took a tenth of the whole broadcast.
    let at = memchr::memmem::find(json.as_bytes(), b"\"your_seat\":null")?;
    Some((
        &json[..at + KEY.len()],
        &json[at + KEY.len() + "null".len()..],
    ))
}
