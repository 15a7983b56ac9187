//! Seats and the lobby: joining and leaving, taking seats, the host's checks, the settings,
//! removing people, and the client seeds people bring.

use std::net::IpAddr;

use dhumbal_engine::{ClientSeed, Hex32, Settings};
use dhumbal_protocol::{
    CLOSE_REMOVED, CLOSE_REPLACED, CLOSE_ROOM_EXPIRED, Hello, MessageId, PROTOCOL_VERSION,
    SeedAnswer, ServerMessage, Stage, Welcome, codes,
};
use tracing::info;

use super::{Client, Closing, ConnId, Entropy, Human, RoomCore, Seat, match_result};
use crate::error::Refusal;
use crate::names;
use crate::room::record::{Record, hash_secret};

impl RoomCore {
    /// The client seeds in force for a deal of the match with this commitment, in seat order:
    /// each person's latest seed that answers it (`None` for bots, empty seats and people who
    /// sent none after they were shown it). A seed from a log older than protocol 4 answers
    /// nothing recorded and counts as it did then.
    pub(super) fn client_seeds_for(&self, commitment: Hex32) -> Vec<Option<ClientSeed>> {
        self.seats
            .iter()
            .map(|seat| match seat {
                Seat::Human(human)
                    if human
                        .seed_answers
                        .is_none_or(|answers| answers == commitment) =>
                {
                    human.client_seed
                }
                Seat::Human(_) | Seat::Empty | Seat::Bot(_) => None,
            })
            .collect()
    }

    /// Checks that a client seed answers the commitment the room shows now: a seed chosen
    /// before its page saw that commitment (or for another match) never counts.
    pub(super) fn check_client_seed(&self, answer: Option<&SeedAnswer>) -> Result<(), Refusal> {
        match (answer, self.shown_commitment()) {
            (None, _) => Ok(()),
            (Some(answer), Some((_, shown))) if answer.commitment == shown => Ok(()),
            (Some(_), _) => Err(Refusal::StaleCommitment),
        }
    }

    /// Takes a person's client seed (already checked with [`RoomCore::check_client_seed`]),
    /// logs it if it is new, and tells the socket that sent it that it is the seat's seed in
    /// force (`client_seed_taken`).
    pub(super) fn take_client_seed(
        &mut self,
        conn: ConnId,
        seat: usize,
        answer: Option<SeedAnswer>,
    ) -> Result<(), Refusal> {
        let Some(answer) = answer else { return Ok(()) };
        self.check_client_seed(Some(&answer))?;
        let Some((match_number, commitment)) = self.shown_commitment() else {
            return Err(Refusal::StaleCommitment);
        };
        let in_force = self.human(seat).is_some_and(|h| {
            h.client_seed == Some(answer.seed) && h.seed_answers == Some(commitment)
        });
        if !in_force {
            self.commit(Record::ClientSeed {
                seat,
                seed: answer.seed,
                commitment: Some(commitment),
            })
            .map_err(|e| self.internal(e))?;
        }
        self.send_to(
            conn,
            &ServerMessage::ClientSeedTaken {
                match_number,
                commitment,
                client_seed: answer.seed,
            },
        );
        Ok(())
    }

    /// A connection's `hello`: its seat back by token, a free seat in the lobby, or a place to
    /// watch; the host if it holds the host secret. It is then told everything it may see.
    pub(super) fn join(
        &mut self,
        conn: ConnId,
        hello: Hello,
        hello_id: Option<MessageId>,
        token_only: bool,
        address: IpAddr,
        entropy: &mut dyn Entropy,
    ) -> Result<(), Refusal> {
        let token_hash = hello.token.as_deref().map(hash_secret);
        let holds_seat = token_hash
            .as_ref()
            .is_some_and(|t| self.seat_of_token(t).is_some());
        if token_only && !holds_seat {
            // Answered as if the room were not looked up at all: no hint whether it exists.
            return Err(Refusal::TooManyAttempts);
        }
        if let Some(hash) = &token_hash {
            if self.removed.iter().any(|r| r.token_hash == *hash) {
                return Err(Refusal::Removed);
            }
        }
        let address_hash = self.address_hash(address);
        if token_hash.is_none() && self.is_removed_watcher(&address_hash) {
            // A removed watcher's address: nobody new from it until the host lets it back.
            return Err(Refusal::Removed);
        }
        let name = names::clean_name(&hello.name).map_err(|e| Refusal::BadName(e.to_string()))?;
        let claims_host = match &hello.host_secret {
            Some(secret) if hash_secret(secret) == self.host_secret_hash => true,
            Some(_) => return Err(Refusal::BadHostSecret),
            None => false,
        };
        let (seat, token) = match &token_hash {
            Some(hash) => (Some(self.seat_back(conn, hash)?), hello.token.clone()),
            None if hello.spectator => {
                self.admit_watcher(&name)?;
                (None, None)
            }
            None => {
                let (seat, token) = self.new_seat(conn, &name, entropy)?;
                (Some(seat), Some(token))
            }
        };
        if let (true, Some(seat)) = (claims_host, seat) {
            let is_host = self.human(seat).map(|h| &h.token_hash) == self.host_token.as_ref();
            if !is_host {
                self.commit(Record::HostIs { seat })
                    .map_err(|e| self.internal(e))?;
            }
        }
        info!(room = %self.code, conn, ?seat, "joined");
        let watcher = seat.is_none().then(|| {
            self.watchers_seen += 1;
            self.watchers_seen
        });
        self.clients.insert(
            conn,
            Client {
                seat,
                name,
                watcher,
                address_hash,
                view_v: None,
            },
        );
        self.greet(conn, seat, token);
        // The seed after everything the newcomer is told of the room: a deal it hears of in
        // `history` was dealt before this seed was taken.
        if let (Some(seat), Some(answer)) = (seat, hello.client_seed) {
            if let Err(refusal) = self.take_client_seed(conn, seat, Some(answer)) {
                // The seat is theirs all the same; only the seed is not taken.
                self.send_to(conn, &refusal.message(hello_id));
            }
        }
        Ok(())
    }

    /// The seat whose token this is, for `conn` now: a second connection with the token
    /// replaces the first.
    fn seat_back(&mut self, conn: ConnId, token_hash: &str) -> Result<usize, Refusal> {
        let seat = self.seat_of_token(token_hash).ok_or(Refusal::BadToken)?;
        if let Seat::Human(human) = &mut self.seats[seat] {
            if let Some(old) = human.conn.replace(conn) {
                if self.clients.remove(&old).is_some() {
                    self.outbox
                        .close(old, CLOSE_REPLACED, "another connection took this seat");
                }
            }
        }
        Ok(seat)
    }

    /// The first empty seat, in the lobby, for a newcomer called `name`: its number and the
    /// secret token that takes it back (only its hash is kept).
    fn new_seat(
        &mut self,
        conn: ConnId,
        name: &str,
        entropy: &mut dyn Entropy,
    ) -> Result<(usize, String), Refusal> {
        let free = (self.stage() == Stage::Lobby)
            .then(|| self.seats.iter().position(|s| matches!(s, Seat::Empty)))
            .flatten()
            .ok_or(Refusal::RoomFull)?;
        self.require_unique_name(name, None)?;
        let token = entropy.token();
        self.commit(Record::Seated {
            seat: free,
            name: name.to_owned(),
            token_hash: hash_secret(&token),
        })
        .map_err(|e| self.internal(e))?;
        if let Seat::Human(human) = &mut self.seats[free] {
            human.conn = Some(conn);
        }
        Ok((free, token))
    }

    /// Tells a client that has just joined: `welcome`, the room (to everyone), and in a started
    /// match the history and its view (after the match, its result too).
    fn greet(&mut self, conn: ConnId, seat: Option<usize>, token: Option<String>) {
        let host = seat.is_some_and(|s| self.is_host(s));
        let welcome = ServerMessage::Welcome(Welcome {
            protocol: PROTOCOL_VERSION,
            room: self.code.clone(),
            seat,
            host,
            token,
            chat: self.chat.iter().cloned().collect(),
        });
        self.send_to(conn, &welcome);
        self.broadcast_room();
        if let Some(game) = &self.game {
            let result = match_result(game, self.matches).map(ServerMessage::MatchResult);
            self.resync(conn);
            // Arriving after the match: its standings and seeds too.
            if let Some(result) = result {
                self.send_to(conn, &result);
            }
        }
    }

    /// The history and the whole view, for a client arriving in a started match or asking for
    /// them again (`resync`); nothing in the lobby.
    pub(super) fn resync(&mut self, conn: ConnId) {
        if let Some(game) = &self.game {
            let history = ServerMessage::history(game, &self.stand_in_marks);
            self.send_to(conn, &history);
            self.send_state(conn);
        }
    }

    /// The seat whose person holds the token with this hash.
    pub(super) fn seat_of_token(&self, token_hash: &str) -> Option<usize> {
        self.seats
            .iter()
            .position(|s| matches!(s, Seat::Human(h) if h.token_hash == token_hash))
    }

    /// Whether the person in `seat` is the host.
    pub(super) fn is_host(&self, seat: usize) -> bool {
        self.human(seat)
            .is_some_and(|h| Some(&h.token_hash) == self.host_token.as_ref())
    }

    /// Refuses a name another seated person or another watcher (not `except`, the one asking)
    /// already goes by, or one that looks like it.
    pub(super) fn require_unique_name(
        &self,
        name: &str,
        except: Option<ConnId>,
    ) -> Result<(), Refusal> {
        let seated = self
            .seats
            .iter()
            .any(|s| matches!(s, Seat::Human(h) if names::same_name(&h.name, name)));
        let watching = self.clients.iter().any(|(conn, c)| {
            Some(*conn) != except && c.watcher.is_some() && names::same_name(&c.name, name)
        });
        let taken = seated || watching;
        if taken {
            return Err(Refusal::NameTaken);
        }
        Ok(())
    }

    /// The room's lifetime without a match has passed: every client is told and closed.
    pub(super) fn expire(&mut self) {
        let bye = ServerMessage::bye(
            codes::ROOM_EXPIRED,
            "this room's match never started, and the room has closed; create a new one",
        );
        let conns: Vec<ConnId> = self.clients.keys().copied().collect();
        for conn in conns {
            self.send_to(conn, &bye);
            self.outbox.close(conn, CLOSE_ROOM_EXPIRED, "room expired");
        }
        self.clients.clear();
        self.ending = Some(Closing::LobbyExpired);
    }

    pub(super) fn remove_client(&mut self, conn: ConnId) {
        let Some(client) = self.clients.remove(&conn) else {
            return;
        };
        if let Some(seat) = client.seat {
            if let Seat::Human(human) = &mut self.seats[seat] {
                if human.conn == Some(conn) {
                    human.conn = None;
                }
            }
        }
        info!(room = %self.code, conn, seat = ?client.seat, "left");
        self.broadcast_room();
        self.agreement_due = true;
    }

    /// Tells a removed person's connection why it closes, and lets go of it.
    pub(super) fn tell_removed(&mut self, conn: Option<ConnId>) {
        let Some(conn) = conn.filter(|c| self.clients.contains_key(c)) else {
            return;
        };
        self.send_to(
            conn,
            &ServerMessage::bye(codes::REMOVED, "the host removed you from this room"),
        );
        self.clients.remove(&conn);
        self.outbox
            .close(conn, CLOSE_REMOVED, "removed by the host");
    }

    pub(super) fn require_seated(&self, seat: Option<usize>) -> Result<usize, Refusal> {
        seat.ok_or(Refusal::NotSeated)
    }

    pub(super) fn require_host(&self, seat: Option<usize>) -> Result<(), Refusal> {
        if seat.is_some_and(|s| self.is_host(s)) {
            Ok(())
        } else {
            Err(Refusal::NotHost)
        }
    }

    pub(super) fn require_lobby(&self) -> Result<(), Refusal> {
        if self.stage() == Stage::Lobby {
            Ok(())
        } else {
            Err(Refusal::AlreadyStarted)
        }
    }

    pub(super) fn require_seat(&self, seat: usize) -> Result<(), Refusal> {
        if seat < self.seats.len() {
            Ok(())
        } else {
            Err(Refusal::NoSuchSeat(seat))
        }
    }

    /// A seat of the table that is not the actor's own (`seat`): what the host's acts on
    /// another person (clear, hand to a bot, mute) are allowed on.
    pub(super) fn require_other_seat(&self, seat: Option<usize>, at: usize) -> Result<(), Refusal> {
        self.require_seat(at)?;
        if seat == Some(at) {
            return Err(Refusal::OwnSeat);
        }
        Ok(())
    }

    pub(super) fn human(&self, seat: usize) -> Option<&Human> {
        match self.seats.get(seat) {
            Some(Seat::Human(human)) => Some(human),
            _ => None,
        }
    }

    pub(super) fn take_seat(
        &mut self,
        conn: ConnId,
        to: usize,
        entropy: &mut dyn Entropy,
    ) -> Result<(), Refusal> {
        self.require_lobby()?;
        self.require_seat(to)?;
        let client = &self.clients[&conn];
        let from = client.seat;
        if from == Some(to) {
            return Ok(());
        }
        if !matches!(self.seats[to], Seat::Empty) {
            return Err(Refusal::SeatTaken(to));
        }
        let token = match from {
            Some(from) => {
                self.commit(Record::Moved { from, to })
                    .map_err(|e| self.internal(e))?;
                None
            }
            None => {
                let name = client.name.clone();
                self.require_unique_name(&name, Some(conn))?;
                let token = entropy.token();
                self.commit(Record::Seated {
                    seat: to,
                    name,
                    token_hash: hash_secret(&token),
                })
                .map_err(|e| self.internal(e))?;
                if let Seat::Human(human) = &mut self.seats[to] {
                    human.conn = Some(conn);
                }
                Some(token)
            }
        };
        if let Some(client) = self.clients.get_mut(&conn) {
            client.seat = Some(to);
            client.watcher = None;
            // Its view was a watcher's: the next change tells it the whole of its seat's.
            client.view_v = None;
        }
        if let Some(token) = token {
            // Someone who was watching sat down: they need their seat token.
            let welcome = ServerMessage::Welcome(Welcome {
                protocol: PROTOCOL_VERSION,
                room: self.code.clone(),
                seat: Some(to),
                host: self.is_host(to),
                token: Some(token),
                chat: self.chat.iter().cloned().collect(),
            });
            self.send_to(conn, &welcome);
        }
        self.broadcast_room();
        Ok(())
    }

    pub(super) fn change_settings(&mut self, settings: Settings) -> Result<(), Refusal> {
        settings.validate_new_table().map_err(Refusal::Settings)?;
        let players = usize::from(settings.players);
        if self.seats[players.min(self.seats.len())..]
            .iter()
            .any(|s| matches!(s, Seat::Human(_)))
        {
            return Err(Refusal::SeatsOccupied);
        }
        self.commit(Record::SettingsSet { settings })
            .map_err(|e| self.internal(e))?;
        self.broadcast_room();
        Ok(())
    }
}
