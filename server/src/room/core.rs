//! A room: one actor task that owns the game, the seats, the bots and the room's clients.
//!
//! The task (`Room`) owns everything and is the only code that touches it; the rest of the
//! server talks to it through a cloneable [`RoomHandle`] over a bounded channel. The room never
//! waits for a client: every message to a client goes through that client's bounded queue with
//! `try_send`, and a client whose queue is full is disconnected.
//!
//! Every client message reaches the room already checked for size and shape. The room checks
//! permission (a seat, the host, the stage) and then the rules (the engine), and answers a
//! refusal with an `error` to that client only, changing nothing.

use std::collections::HashMap;
use std::sync::Arc;
use std::time::Duration;

use axum::extract::ws::Utf8Bytes;
use dhumbal_bots::{Bot, new_bot};
use dhumbal_engine::{Action, Card, Difficulty, Event, Game, Phase, Settings};
use dhumbal_protocol::{
    CLOSE_REMOVED, CLOSE_REPLACED, CLOSE_ROOM_EXPIRED, ClientMessage, Hello, MatchResult,
    MessageId, RoomState, RoomSummary, SeatInfo, SeatKind, ServerMessage, Stage, Welcome, codes,
    draw_source, seed_hex,
};
use rand::TryRngCore;
use rand::rngs::OsRng;
use tokio::sync::{mpsc, oneshot};
use tokio::time::Instant;
use tokio_util::sync::CancellationToken;
use tracing::{debug, info, warn};

use crate::metrics::{Metrics, Seated};
use crate::names;
use crate::shutdown::Shutdown;

/// How many commands may wait for a room before senders wait.
const ROOM_QUEUE: usize = 256;

/// A connection's number, unique for the server's lifetime.
pub type ConnId = u64;

/// What a connection's writer task sends on the socket.
#[derive(Debug)]
pub enum Outgoing {
    /// A text message (JSON).
    Text(Utf8Bytes),
    /// Close the socket with this code and reason.
    Close(u16, &'static str),
}

/// The way to one client: its bounded outbound queue, and a token that disconnects it.
#[derive(Clone, Debug)]
pub struct ClientTx {
    /// The client's outbound queue; the room only ever `try_send`s on it.
    pub queue: mpsc::Sender<Outgoing>,
    /// Cancelled to disconnect the client (it fell behind, or another connection took its seat).
    pub kick: CancellationToken,
}

impl ClientTx {
    /// Queues a message without waiting; a client that cannot take it is disconnected.
    /// Returns whether the client is still fine.
    pub fn send(&self, text: Utf8Bytes) -> bool {
        match self.queue.try_send(Outgoing::Text(text)) {
            Ok(()) => true,
            Err(_) => {
                self.kick.cancel();
                false
            }
        }
    }

    /// Closes the client's socket with this code and reason, after what is already queued.
    pub fn close(&self, code: u16, reason: &'static str) {
        if self.queue.try_send(Outgoing::Close(code, reason)).is_err() {
            self.kick.cancel();
        }
    }

    /// Queues one server message.
    pub fn send_message(&self, message: &ServerMessage) -> bool {
        self.send(message.to_json().into())
    }
}

/// What the rest of the server asks of a room.
#[derive(Debug)]
pub enum Command {
    /// A connection's `hello`: join the room. `reply` says whether it joined; either way, the
    /// answer (`welcome` or `error`) goes to `client`.
    Join {
        /// The connection.
        conn: ConnId,
        /// The `hello`.
        hello: Hello,
        /// The `hello`'s `id`, echoed by an error.
        id: Option<MessageId>,
        /// The way to the client.
        client: ClientTx,
        /// The client's address failed too many lookups: only a valid seat token gets in, and
        /// any other hello is refused with `too_many_attempts`.
        token_only: bool,
        /// Whether the client joined.
        reply: oneshot::Sender<bool>,
    },
    /// A message from a joined connection (its shape already checked).
    Message {
        /// The connection.
        conn: ConnId,
        /// The message's `id`.
        id: Option<MessageId>,
        /// The message.
        message: ClientMessage,
    },
    /// A connection has gone.
    Leave {
        /// The connection.
        conn: ConnId,
    },
    /// Describe the room for someone about to join.
    Summary {
        /// Where the answer goes.
        reply: oneshot::Sender<RoomSummary>,
    },
}

/// A cloneable handle on a room's task.
#[derive(Clone, Debug)]
pub struct RoomHandle {
    commands: mpsc::Sender<Command>,
}

impl RoomHandle {
    /// Sends a command; `false` if the room has closed.
    pub async fn send(&self, command: Command) -> bool {
        self.commands.send(command).await.is_ok()
    }

    /// The room's summary, or `None` if it has closed.
    pub async fn summary(&self) -> Option<RoomSummary> {
        let (reply, answer) = oneshot::channel();
        if !self.send(Command::Summary { reply }).await {
            return None;
        }
        answer.await.ok()
    }
}

/// What a new room is made of.
#[derive(Clone, Debug)]
pub struct RoomSetup {
    /// The room's code.
    pub code: String,
    /// The secret whose holder is the host.
    pub host_secret: String,
    /// The table's settings (already validated).
    pub settings: Settings,
    /// Fixed deck orders, for tests.
    pub decks: Option<Vec<Vec<Card>>>,
    /// The delay before each bot action.
    pub bot_delay: Duration,
    /// How long a disconnected person's turn waits before a bot plays it for them.
    pub takeover_after: Duration,
    /// How long the room stays open with nobody connected.
    pub idle_ttl: Duration,
    /// How long the room stays open if its match never starts, whoever is connected.
    pub lobby_ttl: Duration,
    /// The server's metrics, which the room keeps up to date.
    pub metrics: Arc<Metrics>,
}

/// Starts a room's task and returns its handle. `on_close` runs when the room closes (after
/// `idle_ttl` without anyone connected, or when `shutdown` begins), to take it out of the
/// registry; `shutdown` waits for the task.
pub fn spawn(
    setup: RoomSetup,
    shutdown: &Shutdown,
    on_close: Box<dyn FnOnce() + Send>,
) -> RoomHandle {
    let (commands, inbox) = mpsc::channel(ROOM_QUEUE);
    let room = Room::new(setup);
    let stop = shutdown.token();
    shutdown.spawn(async move {
        room.run(inbox, stop).await;
        on_close();
    });
    RoomHandle { commands }
}

/// A person in a seat.
struct Human {
    /// The name shown at the table.
    name: String,
    /// The seat's secret token: whoever presents it in a `hello` takes the seat.
    token: String,
    /// The connection playing the seat now; `None` while the person is away.
    conn: Option<ConnId>,
    /// The bot playing the seat while the person is away, from when their turn waited longer
    /// than the grace period until the start of their first turn after they return.
    stand_in: Option<Box<dyn Bot>>,
}

/// A bot in a seat.
struct BotSeat {
    /// The difficulty chosen for it.
    difficulty: Difficulty,
    /// The bot itself, made when the match starts (it learns from the match's events).
    bot: Option<Box<dyn Bot>>,
}

/// Who is in a seat.
enum Seat {
    Empty,
    Human(Human),
    Bot(BotSeat),
}

/// A person the host removed from the room.
struct Removed {
    /// The name they had.
    name: String,
    /// The seat token they had, refused until they are let back.
    token: String,
}

/// A connected client.
struct Client {
    /// The way to it.
    tx: ClientTx,
    /// Its seat, or `None` when watching.
    seat: Option<usize>,
    /// The name it gave in `hello`, used if it takes a seat later.
    name: String,
}

/// A refusal: code and sentence.
struct Refusal {
    code: &'static str,
    message: String,
}

impl Refusal {
    fn new(code: &'static str, message: impl Into<String>) -> Refusal {
        Refusal {
            code,
            message: message.into(),
        }
    }
}

/// The room's task: owns its game, seats, bots and clients.
struct Room {
    /// The room's code, for messages and logs.
    code: String,
    /// Whoever presents this in `hello` becomes the host.
    host_secret: String,
    /// The table's settings; the lobby may change them.
    settings: Settings,
    /// Fixed deck orders (only with `--allow-test-decks`).
    decks: Option<Vec<Vec<Card>>>,
    /// How long a bot waits before each action.
    bot_delay: Duration,
    /// How long a disconnected person's turn waits before a stand-in bot plays it.
    takeover_after: Duration,
    /// How long the room stays open with nobody connected.
    idle_ttl: Duration,
    /// Since when nobody has been connected (`None` while someone is).
    idle_since: Option<Instant>,
    /// When the room closes if its match has not started by then.
    lobby_due: Instant,
    /// The people the host removed (their names and seat tokens), who may not come back until
    /// the host lets them.
    removed: Vec<Removed>,
    /// Every seat, `settings.players` of them.
    seats: Vec<Seat>,
    /// The host's seat token, once the host has joined.
    host_token: Option<String>,
    /// Every connected client.
    clients: HashMap<ConnId, Client>,
    /// The match, once started.
    game: Option<Game>,
    /// Where the room stands.
    stage: Stage,
    /// Between rounds, who has sent `ready`; after the match, who has asked for a rematch.
    votes: Vec<bool>,
    /// When the bot whose turn it is acts next.
    bot_due: Option<Instant>,
    /// The seat of an away person whose turn it is, and when a stand-in bot takes it over.
    takeover_due: Option<(usize, Instant)>,
    /// Clients found disconnected while sending, removed once the current command is done.
    dead: Vec<ConnId>,
    /// The server's metrics.
    metrics: Arc<Metrics>,
    /// The seats held by people and by bots as last added to the metrics.
    reported_seats: (i64, i64),
}

fn refuse_rule(e: dhumbal_engine::RuleError) -> Refusal {
    Refusal::new(e.code(), e.to_string())
}

impl Room {
    fn new(setup: RoomSetup) -> Room {
        let players = usize::from(setup.settings.players);
        Room {
            code: setup.code,
            host_secret: setup.host_secret,
            seats: (0..players).map(|_| Seat::Empty).collect(),
            votes: vec![false; players],
            settings: setup.settings,
            decks: setup.decks,
            bot_delay: setup.bot_delay,
            takeover_after: setup.takeover_after,
            idle_ttl: setup.idle_ttl,
            idle_since: Some(Instant::now()),
            lobby_due: Instant::now() + setup.lobby_ttl,
            removed: Vec::new(),
            host_token: None,
            clients: HashMap::new(),
            game: None,
            stage: Stage::Lobby,
            bot_due: None,
            takeover_due: None,
            dead: Vec::new(),
            metrics: setup.metrics,
            reported_seats: (0, 0),
        }
    }

    async fn run(mut self, mut inbox: mpsc::Receiver<Command>, stop: CancellationToken) {
        info!(room = %self.code, "room opened");
        let stopping = stop.cancelled();
        tokio::pin!(stopping);
        loop {
            let idle_due = self.idle_since.map(|since| since + self.idle_ttl);
            // Only a room whose match never started has a lifetime of its own.
            let lobby_due = self.game.is_none().then_some(self.lobby_due);
            let due = [
                self.bot_due,
                self.takeover_due.map(|(_, due)| due),
                idle_due,
                lobby_due,
            ]
            .into_iter()
            .flatten()
            .min();
            tokio::select! {
                // The connections tell their clients `bye` themselves.
                () = &mut stopping => {
                    info!(room = %self.code, "closing the room: the server is shutting down");
                    break;
                }
                command = inbox.recv() => match command {
                    Some(command) => self.handle(command),
                    None => break,
                },
                () = sleep_until(due) => {
                    if idle_due.is_some_and(|due| due <= Instant::now()) {
                        info!(room = %self.code, "closing a room nobody has used for a while");
                        break;
                    }
                    if lobby_due.is_some_and(|due| due <= Instant::now()) {
                        info!(room = %self.code, "closing a room whose match never started");
                        self.expire();
                        break;
                    }
                    self.wake();
                    // Bots without a delay could otherwise play a whole round before the
                    // connections' writers get a turn to send it.
                    tokio::task::yield_now().await;
                }
            }
            self.reap();
            self.review_seats();
            self.reap();
            self.report_seats(false);
        }
        self.report_seats(true);
        info!(room = %self.code, "room closed");
    }

    fn handle(&mut self, command: Command) {
        match command {
            Command::Join {
                conn,
                hello,
                id,
                client,
                token_only,
                reply,
            } => {
                let joined = match self.join(conn, hello, client.clone(), token_only) {
                    Ok(()) => true,
                    Err(refusal) => {
                        self.metrics.rejected(refusal.code);
                        client.send_message(&ServerMessage::error(
                            refusal.code,
                            refusal.message,
                            id,
                        ));
                        false
                    }
                };
                let _ = reply.send(joined);
            }
            Command::Message { conn, id, message } => {
                let kind = message.type_name();
                let started = std::time::Instant::now();
                let handled = self.on_message(conn, message);
                self.metrics.action_handled(started.elapsed());
                if let Err(refusal) = handled {
                    self.metrics.rejected(refusal.code);
                    debug!(room = %self.code, conn, kind, code = refusal.code, "refused");
                    self.send_to(
                        conn,
                        &ServerMessage::error(refusal.code, refusal.message, id),
                    );
                }
            }
            Command::Leave { conn } => self.remove_client(conn),
            Command::Summary { reply } => {
                let _ = reply.send(self.summary());
            }
        }
    }

    // ----- Joining and leaving -----

    fn join(
        &mut self,
        conn: ConnId,
        hello: Hello,
        tx: ClientTx,
        token_only: bool,
    ) -> Result<(), Refusal> {
        let holds_seat = hello
            .token
            .as_ref()
            .is_some_and(|t| self.seat_of_token(t).is_some());
        if token_only && !holds_seat {
            // Answered as if the room were not looked up at all: no hint whether it exists.
            return Err(Refusal::new(
                codes::TOO_MANY_ATTEMPTS,
                "too many room codes that do not exist came from your address; wait a minute",
            ));
        }
        if let Some(token) = &hello.token {
            if self.removed.iter().any(|r| r.token == *token) {
                return Err(Refusal::new(
                    codes::REMOVED,
                    "the host removed you from this room; ask them to let you back",
                ));
            }
        }
        let name = names::clean_name(&hello.name)
            .map_err(|e| Refusal::new(codes::BAD_NAME, e.to_string()))?;
        let claims_host = match &hello.host_secret {
            Some(secret) if *secret == self.host_secret => true,
            Some(_) => {
                return Err(Refusal::new(
                    codes::BAD_HOST_SECRET,
                    "that is not this room's host secret",
                ));
            }
            None => false,
        };
        let seat = if let Some(token) = &hello.token {
            let seat = self.seat_of_token(token).ok_or_else(|| {
                Refusal::new(
                    codes::BAD_TOKEN,
                    "that seat token is not one of this room's",
                )
            })?;
            // A second connection with the token replaces the first.
            if let Seat::Human(human) = &mut self.seats[seat] {
                if let Some(old) = human.conn.replace(conn) {
                    if let Some(old_client) = self.clients.remove(&old) {
                        old_client
                            .tx
                            .close(CLOSE_REPLACED, "another connection took this seat");
                    }
                }
            }
            Some(seat)
        } else if hello.spectator {
            None
        } else {
            let free = (self.stage == Stage::Lobby)
                .then(|| self.seats.iter().position(|s| matches!(s, Seat::Empty)))
                .flatten()
                .ok_or_else(|| {
                    Refusal::new(
                        codes::ROOM_FULL,
                        "every seat is taken; you can still watch (spectator: true)",
                    )
                })?;
            self.require_unique_name(&name)?;
            self.seats[free] = Seat::Human(Human {
                name: name.clone(),
                token: new_token(),
                conn: Some(conn),
                stand_in: None,
            });
            Some(free)
        };
        let token = seat.and_then(|s| self.human(s).map(|h| h.token.clone()));
        if claims_host && token.is_some() {
            self.host_token = token.clone();
        }
        info!(room = %self.code, conn, ?seat, "joined");
        self.clients.insert(conn, Client { tx, seat, name });
        self.idle_since = None;
        let welcome = ServerMessage::Welcome(Welcome {
            protocol: dhumbal_protocol::PROTOCOL_VERSION,
            room: self.code.clone(),
            seat,
            host: token.is_some() && token == self.host_token,
            token,
        });
        self.send_to(conn, &welcome);
        self.broadcast_room();
        if let Some(game) = &self.game {
            let history = ServerMessage::history(game);
            let result = match_result(game).map(ServerMessage::MatchResult);
            self.send_to(conn, &history);
            self.send_state(conn);
            // Arriving after the match: its standings and seeds too.
            if let Some(result) = result {
                self.send_to(conn, &result);
            }
        }
        Ok(())
    }

    /// The seat whose person holds this token.
    fn seat_of_token(&self, token: &str) -> Option<usize> {
        self.seats
            .iter()
            .position(|s| matches!(s, Seat::Human(h) if h.token == token))
    }

    /// Refuses a name another seated person already goes by.
    fn require_unique_name(&self, name: &str) -> Result<(), Refusal> {
        let name = names::folded(name);
        let taken = self
            .seats
            .iter()
            .any(|s| matches!(s, Seat::Human(h) if names::folded(&h.name) == name));
        if taken {
            return Err(Refusal::new(
                codes::NAME_TAKEN,
                "someone at this table already goes by that name; choose another",
            ));
        }
        Ok(())
    }

    /// The room's lifetime without a match has passed: every client is told and closed.
    fn expire(&mut self) {
        let bye = ServerMessage::bye(
            codes::ROOM_EXPIRED,
            "this room's match never started, and the room has closed; create a new one",
        );
        for client in self.clients.values() {
            client.tx.send_message(&bye);
            client.tx.close(CLOSE_ROOM_EXPIRED, "room expired");
        }
        self.clients.clear();
    }

    fn remove_client(&mut self, conn: ConnId) {
        // The connection's writer sends what is still queued for it (a `bye`, a close frame)
        // before it ends: the room does not cut it short.
        let Some(client) = self.clients.remove(&conn) else {
            return;
        };
        if self.clients.is_empty() {
            self.idle_since = Some(Instant::now());
        }
        if let Some(seat) = client.seat {
            if let Seat::Human(human) = &mut self.seats[seat] {
                if human.conn == Some(conn) {
                    human.conn = None;
                }
            }
        }
        info!(room = %self.code, conn, seat = ?client.seat, "left");
        self.broadcast_room();
        self.advance_if_all_voted();
    }

    /// Removes the clients found disconnected while sending, until none is left.
    fn reap(&mut self) {
        while let Some(conn) = self.dead.pop() {
            warn!(room = %self.code, conn, "dropping a client that fell behind");
            self.metrics.slow_clients_dropped.increment(1);
            self.remove_client(conn);
        }
    }

    // ----- Client messages: permission, then the rules -----

    fn on_message(&mut self, conn: ConnId, message: ClientMessage) -> Result<(), Refusal> {
        let Some(client) = self.clients.get(&conn) else {
            return Ok(());
        };
        let seat = client.seat;
        match message {
            ClientMessage::Hello(_) => Err(Refusal::new(
                codes::ALREADY_JOINED,
                "this connection has already joined a room",
            )),
            ClientMessage::TakeSeat { seat: to } => self.take_seat(conn, to),
            ClientMessage::SetSettings { settings } => {
                self.require_host(seat)?;
                self.require_lobby()?;
                self.change_settings(settings)
            }
            ClientMessage::SetPreset { preset } => {
                self.require_host(seat)?;
                self.require_lobby()?;
                self.change_settings(preset.settings())
            }
            ClientMessage::AddBot {
                seat: at,
                difficulty,
            } => {
                self.require_host(seat)?;
                self.require_lobby()?;
                self.require_seat(at)?;
                if matches!(self.seats[at], Seat::Human(_)) {
                    return Err(Refusal::new(
                        codes::SEAT_TAKEN,
                        format!("seat {at} is taken by a person"),
                    ));
                }
                self.seats[at] = Seat::Bot(BotSeat {
                    difficulty: difficulty.unwrap_or(self.settings.difficulty),
                    bot: None,
                });
                self.broadcast_room();
                Ok(())
            }
            ClientMessage::ClearSeat { seat: at } => {
                self.require_host(seat)?;
                self.require_lobby()?;
                self.require_seat(at)?;
                if seat == Some(at) {
                    return Err(Refusal::new(
                        codes::OWN_SEAT,
                        "the host cannot empty their own seat",
                    ));
                }
                if let Seat::Human(human) = std::mem::replace(&mut self.seats[at], Seat::Empty) {
                    self.remove_person(human);
                }
                self.broadcast_room();
                Ok(())
            }
            ClientMessage::Readmit { removed } => {
                self.require_host(seat)?;
                if removed >= self.removed.len() {
                    return Err(Refusal::new(
                        codes::NOT_REMOVED,
                        format!("nobody removed from this room is number {removed}"),
                    ));
                }
                let person = self.removed.remove(removed);
                info!(room = %self.code, name = %person.name, "let back in");
                self.broadcast_room();
                Ok(())
            }
            ClientMessage::Start => {
                self.require_host(seat)?;
                self.require_lobby()?;
                self.start()
            }
            ClientMessage::Call => self.play(seat, Action::Call),
            ClientMessage::Draw { from, card } => {
                let from =
                    draw_source(from, card).map_err(|e| Refusal::new(codes::BAD_MESSAGE, e))?;
                self.play(seat, Action::Draw { from })
            }
            ClientMessage::Throw { cards } => self.play(seat, Action::Throw { cards }),
            ClientMessage::Ready => {
                let seat = self.require_seated(seat)?;
                if self.stage != Stage::BetweenRounds {
                    return Err(Refusal::new(
                        codes::NOT_BETWEEN_ROUNDS,
                        "ready is for the pause between rounds",
                    ));
                }
                self.vote(seat);
                Ok(())
            }
            ClientMessage::Rematch => {
                let seat = self.require_seated(seat)?;
                if self.stage != Stage::MatchOver {
                    return Err(Refusal::new(
                        codes::MATCH_NOT_OVER,
                        "a rematch can only be asked for once the match is over",
                    ));
                }
                self.vote(seat);
                Ok(())
            }
        }
    }

    /// The host cleared a person's seat: they are removed from the room, told so and closed,
    /// and their token refused until the host lets them back.
    fn remove_person(&mut self, human: Human) {
        if let Some(client) = human.conn.and_then(|c| self.clients.remove(&c)) {
            client.tx.send_message(&ServerMessage::bye(
                codes::REMOVED,
                "the host removed you from this room",
            ));
            client.tx.close(CLOSE_REMOVED, "removed by the host");
        }
        info!(room = %self.code, name = %human.name, "removed by the host");
        self.removed.push(Removed {
            name: human.name,
            token: human.token,
        });
        if self.clients.is_empty() {
            self.idle_since = Some(Instant::now());
        }
    }

    fn require_seated(&self, seat: Option<usize>) -> Result<usize, Refusal> {
        seat.ok_or_else(|| {
            Refusal::new(
                codes::NOT_SEATED,
                "you are watching; only seated players can do that",
            )
        })
    }

    fn require_host(&self, seat: Option<usize>) -> Result<(), Refusal> {
        let is_host = seat
            .and_then(|s| self.human(s))
            .is_some_and(|h| Some(&h.token) == self.host_token.as_ref());
        if is_host {
            Ok(())
        } else {
            Err(Refusal::new(codes::NOT_HOST, "only the host can do that"))
        }
    }

    fn require_lobby(&self) -> Result<(), Refusal> {
        if self.stage == Stage::Lobby {
            Ok(())
        } else {
            Err(Refusal::new(
                codes::ALREADY_STARTED,
                "the match has started; that is only possible in the lobby",
            ))
        }
    }

    fn require_seat(&self, seat: usize) -> Result<(), Refusal> {
        if seat < self.seats.len() {
            Ok(())
        } else {
            Err(Refusal::new(
                codes::NO_SUCH_SEAT,
                format!("there is no seat {seat} at this table"),
            ))
        }
    }

    fn human(&self, seat: usize) -> Option<&Human> {
        match self.seats.get(seat) {
            Some(Seat::Human(human)) => Some(human),
            _ => None,
        }
    }

    fn take_seat(&mut self, conn: ConnId, to: usize) -> Result<(), Refusal> {
        self.require_lobby()?;
        self.require_seat(to)?;
        let client = &self.clients[&conn];
        let from = client.seat;
        if from == Some(to) {
            return Ok(());
        }
        if !matches!(self.seats[to], Seat::Empty) {
            return Err(Refusal::new(
                codes::SEAT_TAKEN,
                format!("seat {to} is taken"),
            ));
        }
        let human = match from {
            Some(from) => match std::mem::replace(&mut self.seats[from], Seat::Empty) {
                Seat::Human(human) => human,
                _ => unreachable!("a client's seat holds that client"),
            },
            None => {
                self.require_unique_name(&client.name)?;
                Human {
                    name: client.name.clone(),
                    token: new_token(),
                    conn: Some(conn),
                    stand_in: None,
                }
            }
        };
        let token = human.token.clone();
        self.seats[to] = Seat::Human(human);
        if let Some(client) = self.clients.get_mut(&conn) {
            client.seat = Some(to);
        }
        if from.is_none() {
            // Someone who was watching sat down: they need their seat token.
            let welcome = ServerMessage::Welcome(Welcome {
                protocol: dhumbal_protocol::PROTOCOL_VERSION,
                room: self.code.clone(),
                seat: Some(to),
                host: self.host_token.as_ref() == Some(&token),
                token: Some(token),
            });
            self.send_to(conn, &welcome);
        }
        self.broadcast_room();
        Ok(())
    }

    fn change_settings(&mut self, settings: Settings) -> Result<(), Refusal> {
        settings
            .validate()
            .map_err(|e| Refusal::new(e.code(), e.to_string()))?;
        let players = usize::from(settings.players);
        if self.seats[players.min(self.seats.len())..]
            .iter()
            .any(|s| matches!(s, Seat::Human(_)))
        {
            return Err(Refusal::new(
                codes::SEATS_OCCUPIED,
                format!(
                    "a person sits beyond seat {}; ask them to move first",
                    players - 1
                ),
            ));
        }
        self.seats.truncate(players);
        self.seats.resize_with(players, || Seat::Empty);
        self.votes = vec![false; players];
        self.settings = settings;
        self.broadcast_room();
        Ok(())
    }

    // ----- The match -----

    fn new_game(&self) -> Result<Game, Refusal> {
        let game = match &self.decks {
            Some(decks) => Game::with_decks(self.settings.clone(), decks.clone()),
            None => {
                let mut seed = [0u8; 32];
                OsRng.try_fill_bytes(&mut seed).map_err(|e| {
                    // The detail is for the log; the client learns only that it failed.
                    tracing::error!(room = %self.code, error = %e, "no randomness for a shuffle");
                    Refusal::new(
                        codes::INTERNAL,
                        "something went wrong on the server; it has been logged",
                    )
                })?;
                Game::new(self.settings.clone(), seed)
            }
        };
        game.map_err(|e| Refusal::new(e.code(), e.to_string()))
    }

    fn start(&mut self) -> Result<(), Refusal> {
        let game = self.new_game()?;
        let difficulty = self.settings.difficulty;
        for seat in &mut self.seats {
            if matches!(seat, Seat::Empty) {
                *seat = Seat::Bot(BotSeat {
                    difficulty,
                    bot: None,
                });
            }
        }
        info!(room = %self.code, "match started");
        self.begin_match(game);
        Ok(())
    }

    /// Seats the bots for a new match, and tells everyone about its first deal.
    fn begin_match(&mut self, game: Game) {
        for seat in &mut self.seats {
            match seat {
                Seat::Bot(bot) => bot.bot = Some(new_bot(bot.difficulty, rand::random())),
                // A stand-in remembers the last match; it is made afresh if it is needed again.
                Seat::Human(human) => human.stand_in = None,
                Seat::Empty => {}
            }
        }
        let events = game.log().to_vec();
        self.game = Some(game);
        self.stage = Stage::Playing;
        self.votes.fill(false);
        self.broadcast_room();
        self.after_change(events);
    }

    fn play(&mut self, seat: Option<usize>, action: Action) -> Result<(), Refusal> {
        let seat = self.require_seated(seat)?;
        if self.human(seat).is_some_and(|h| h.stand_in.is_some()) {
            return Err(Refusal::new(
                codes::STAND_IN_PLAYING,
                "a bot is finishing this turn for you; your seat is yours again from your next turn",
            ));
        }
        let Some(game) = &mut self.game else {
            return Err(Refusal::new(
                codes::NOT_STARTED,
                "the match has not started yet",
            ));
        };
        let events = game.apply(seat, action).map_err(refuse_rule)?;
        self.after_change(events);
        Ok(())
    }

    /// After the game changed: tell everyone the events, the results and their new views; move
    /// the stage on; let the next bot play.
    fn after_change(&mut self, events: Vec<Event>) {
        let mut stage = self.stage;
        for event in &events {
            for seat in &mut self.seats {
                match seat {
                    Seat::Bot(BotSeat { bot: Some(bot), .. })
                    | Seat::Human(Human {
                        stand_in: Some(bot),
                        ..
                    }) => bot.observe(event),
                    _ => {}
                }
            }
            self.broadcast(&ServerMessage::Event {
                event: event.clone(),
            });
            match event {
                Event::RoundEnded { result } => {
                    self.broadcast(&ServerMessage::RoundResult {
                        result: result.clone(),
                    });
                    stage = Stage::BetweenRounds;
                }
                Event::MatchEnded { .. } => {
                    if let Some(result) = self.game.as_ref().and_then(match_result) {
                        self.broadcast(&ServerMessage::MatchResult(result));
                    }
                    stage = Stage::MatchOver;
                    self.metrics.matches_finished.increment(1);
                    info!(room = %self.code, "match over");
                }
                _ => {}
            }
        }
        let conns: Vec<ConnId> = self.clients.keys().copied().collect();
        for conn in conns {
            self.send_state(conn);
        }
        if stage != self.stage {
            self.stage = stage;
            self.votes.fill(false);
            self.broadcast_room();
            self.advance_if_all_voted();
        }
    }

    /// Records a seat's `ready` (between rounds) or `rematch` (after the match).
    fn vote(&mut self, seat: usize) {
        if !self.votes[seat] {
            self.votes[seat] = true;
            self.broadcast_room();
        }
        self.advance_if_all_voted();
    }

    /// Whether a seat has agreed to go on: bots always have; a person who is away is not waited
    /// for.
    fn agreed(&self, seat: usize) -> bool {
        match &self.seats[seat] {
            Seat::Human(human) => self.votes[seat] || human.conn.is_none(),
            Seat::Bot(_) | Seat::Empty => true,
        }
    }

    fn advance_if_all_voted(&mut self) {
        if !matches!(self.stage, Stage::BetweenRounds | Stage::MatchOver) {
            return;
        }
        if !(0..self.seats.len()).all(|s| self.agreed(s)) {
            return;
        }
        match self.stage {
            Stage::BetweenRounds => {
                let game = self.game.as_mut().expect("between rounds of a match");
                match game.next_round() {
                    Ok(events) => {
                        self.stage = Stage::Playing;
                        self.votes.fill(false);
                        self.broadcast_room();
                        self.after_change(events);
                    }
                    Err(e) => warn!(room = %self.code, error = %e, "could not deal"),
                }
            }
            Stage::MatchOver => {
                // Only when somebody asked: a room whose people are all away waits for them.
                if !self.votes.iter().any(|v| *v) {
                    return;
                }
                match self.new_game() {
                    Ok(game) => {
                        info!(room = %self.code, "rematch");
                        self.begin_match(game);
                    }
                    Err(e) => warn!(room = %self.code, error = %e.message, "no rematch"),
                }
            }
            Stage::Lobby | Stage::Playing => {}
        }
    }

    // ----- Bots -----

    /// The seat whose turn a bot plays now (a bot's seat, or an away person's stand-in).
    fn bot_to_play(&self) -> Option<usize> {
        let seat = self.turn_being_played()?;
        match &self.seats[seat] {
            Seat::Bot(_)
            | Seat::Human(Human {
                stand_in: Some(_), ..
            }) => Some(seat),
            _ => None,
        }
    }

    /// The seat to play, while a round is being played.
    fn turn_being_played(&self) -> Option<usize> {
        let game = self.game.as_ref()?;
        let playing = matches!(game.phase(), Phase::Start | Phase::Throw | Phase::Draw);
        (self.stage == Stage::Playing && playing).then(|| game.turn())
    }

    /// After every command and timer: hands seats back to people who returned, starts or stops
    /// the takeover timer of an away person's turn, and schedules the next bot action.
    fn review_seats(&mut self) {
        let turn = self.turn_being_played();
        let mid_turn = self
            .game
            .as_ref()
            .is_some_and(|g| matches!(g.phase(), Phase::Throw | Phase::Draw));
        let mut handed_back = false;
        for (seat, occupant) in self.seats.iter_mut().enumerate() {
            if let Seat::Human(human) = occupant {
                // A returned person gets the seat back unless a turn is half played for them.
                let finishing = turn == Some(seat) && mid_turn;
                if human.conn.is_some() && human.stand_in.is_some() && !finishing {
                    human.stand_in = None;
                    handed_back = true;
                    info!(room = %self.code, seat, "seat handed back");
                }
            }
        }
        let away_turn = turn.filter(|&seat| {
            self.human(seat)
                .is_some_and(|h| h.conn.is_none() && h.stand_in.is_none())
        });
        self.takeover_due = match (away_turn, self.takeover_due) {
            (Some(seat), Some((waiting, due))) if waiting == seat => Some((seat, due)),
            (Some(seat), _) => Some((seat, Instant::now() + self.takeover_after)),
            (None, _) => None,
        };
        if self.bot_to_play().is_none() {
            self.bot_due = None;
        } else if self.bot_due.is_none() {
            self.bot_due = Some(Instant::now() + self.bot_delay);
        }
        if handed_back {
            self.broadcast_room();
        }
    }

    /// A timer fired: a takeover, a bot action, or both.
    fn wake(&mut self) {
        let now = Instant::now();
        if let Some((seat, due)) = self.takeover_due {
            if due <= now {
                self.takeover_due = None;
                self.take_over(seat);
            }
        }
        if self.bot_due.is_some_and(|due| due <= now) {
            self.bot_due = None;
            self.bot_step();
        }
    }

    /// An away person's turn has waited the grace period: a bot of the table's difficulty plays
    /// for them, knowing what the round's public log tells.
    fn take_over(&mut self, seat: usize) {
        let difficulty = self.settings.difficulty;
        let Some(game) = &self.game else {
            return;
        };
        let Seat::Human(human) = &mut self.seats[seat] else {
            return;
        };
        if human.conn.is_some() || human.stand_in.is_some() {
            return;
        }
        let mut bot = new_bot(difficulty, rand::random());
        for event in game.log() {
            bot.observe(event);
        }
        human.stand_in = Some(bot);
        self.metrics.bot_takeovers.increment(1);
        info!(room = %self.code, seat, "a bot plays for an away person");
        self.broadcast_room();
    }

    fn bot_step(&mut self) {
        let Some(seat) = self.bot_to_play() else {
            return;
        };
        let game = self.game.as_mut().expect("a bot plays in a match");
        let view = game.view(seat);
        let bot = match &mut self.seats[seat] {
            Seat::Bot(BotSeat { bot: Some(bot), .. })
            | Seat::Human(Human {
                stand_in: Some(bot),
                ..
            }) => bot,
            _ => return,
        };
        // A bot must never stall the table: if it fails (panics, or chooses an illegal action),
        // log its mistake and play the first legal action for it.
        let chosen = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| bot.choose(&view)));
        let played = match chosen {
            Ok(action) => match game.apply(seat, action.clone()) {
                Ok(events) => Some(events),
                Err(e) => {
                    warn!(room = %self.code, seat, ?action, error = %e, "bot chose an illegal action");
                    None
                }
            },
            Err(_) => {
                warn!(room = %self.code, seat, "bot failed to choose an action");
                None
            }
        };
        let events = match played {
            Some(events) => events,
            None => {
                let fallback = game.legal_actions(seat).into_iter().next();
                match fallback.map(|a| game.apply(seat, a)) {
                    Some(Ok(events)) => events,
                    _ => return,
                }
            }
        };
        self.after_change(events);
    }

    /// Brings the metrics' seat counts up to date with this room's seats (to zero when the room
    /// is `closing`).
    fn report_seats(&mut self, closing: bool) {
        let (mut humans, mut bots) = (0, 0);
        if !closing {
            for seat in &self.seats {
                match seat {
                    Seat::Human(_) => humans += 1,
                    Seat::Bot(_) => bots += 1,
                    Seat::Empty => {}
                }
            }
        }
        let (was_humans, was_bots) = self.reported_seats;
        if humans != was_humans {
            self.metrics.seated(Seated::Human, humans - was_humans);
        }
        if bots != was_bots {
            self.metrics.seated(Seated::Bot, bots - was_bots);
        }
        self.reported_seats = (humans, bots);
    }

    // ----- Telling clients -----

    fn send_to(&mut self, conn: ConnId, message: &ServerMessage) {
        if let Some(client) = self.clients.get(&conn) {
            if !client.tx.send_message(message) {
                self.dead.push(conn);
            }
        }
    }

    fn broadcast(&mut self, message: &ServerMessage) {
        let text: Utf8Bytes = message.to_json().into();
        for (conn, client) in &self.clients {
            if !client.tx.send(text.clone()) {
                self.dead.push(*conn);
            }
        }
    }

    fn send_state(&mut self, conn: ConnId) {
        let (Some(game), Some(client)) = (&self.game, self.clients.get(&conn)) else {
            return;
        };
        let state = ServerMessage::state(game, client.seat);
        self.send_to(conn, &state);
    }

    fn seat_infos(&self) -> Vec<SeatInfo> {
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
                    },
                    Seat::Human(human) => SeatInfo {
                        seat: i,
                        kind: SeatKind::Human,
                        name: Some(human.name.clone()),
                        difficulty: None,
                        connected: human.conn.is_some(),
                        ready,
                        stand_in: human.stand_in.as_ref().map(|b| b.difficulty()),
                    },
                    Seat::Bot(bot) => SeatInfo {
                        seat: i,
                        kind: SeatKind::Bot,
                        name: Some(format!("Bot {}", i + 1)),
                        difficulty: Some(bot.difficulty),
                        connected: true,
                        ready,
                        stand_in: None,
                    },
                }
            })
            .collect()
    }

    fn host_seat(&self) -> Option<usize> {
        let token = self.host_token.as_ref()?;
        (0..self.seats.len()).find(|&s| self.human(s).is_some_and(|h| h.token == *token))
    }

    fn room_state(&self, your_seat: Option<usize>) -> RoomState {
        RoomState {
            code: self.code.clone(),
            stage: self.stage,
            started: self.stage != Stage::Lobby,
            settings: self.settings.clone(),
            seats: self.seat_infos(),
            host: self.host_seat(),
            your_seat,
            removed: self.removed.iter().map(|r| r.name.clone()).collect(),
        }
    }

    fn broadcast_room(&mut self) {
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

    fn summary(&self) -> RoomSummary {
        RoomSummary {
            exists: true,
            code: self.code.clone(),
            stage: self.stage,
            started: self.stage != Stage::Lobby,
            free_seats: if self.stage == Stage::Lobby {
                self.seats
                    .iter()
                    .filter(|s| matches!(s, Seat::Empty))
                    .count()
            } else {
                0
            },
            seats: self.seat_infos(),
            settings: self.settings.clone(),
        }
    }
}

/// The match's result, once it is over: its standings, every round's result and the revealed
/// seeds.
fn match_result(game: &Game) -> Option<MatchResult> {
    if game.phase() != Phase::MatchOver {
        return None;
    }
    Some(MatchResult {
        standings: game.standings(),
        results: game.results().to_vec(),
        seeds: game
            .revealed_seeds()
            .unwrap_or_default()
            .iter()
            .map(seed_hex)
            .collect(),
    })
}

/// A new secret seat token.
fn new_token() -> String {
    uuid::Uuid::new_v4().to_string()
}

/// Sleeps until `due`, or forever when there is nothing due.
async fn sleep_until(due: Option<Instant>) {
    match due {
        Some(due) => tokio::time::sleep_until(due).await,
        None => std::future::pending().await,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use dhumbal_engine::Preset;

    fn setup() -> RoomSetup {
        RoomSetup {
            code: "TESTROOM23".into(),
            host_secret: "secret".into(),
            settings: Settings {
                players: 2,
                ..Preset::Standard.settings()
            },
            decks: None,
            bot_delay: Duration::ZERO,
            takeover_after: Duration::from_secs(3600),
            idle_ttl: Duration::from_secs(3600),
            lobby_ttl: Duration::from_secs(3600),
            metrics: Arc::default(),
        }
    }

    fn client(capacity: usize) -> (ClientTx, mpsc::Receiver<Outgoing>) {
        let (queue, outbox) = mpsc::channel(capacity);
        let tx = ClientTx {
            queue,
            kick: CancellationToken::new(),
        };
        (tx, outbox)
    }

    async fn join(room: &RoomHandle, conn: ConnId, hello: Hello, client: ClientTx) -> bool {
        let (reply, joined) = oneshot::channel();
        let sent = room
            .send(Command::Join {
                conn,
                hello,
                id: None,
                client,
                token_only: false,
                reply,
            })
            .await;
        sent && joined.await == Ok(true)
    }

    fn hello(spectator: bool, host_secret: Option<&str>) -> Hello {
        Hello {
            protocol: dhumbal_protocol::PROTOCOL_VERSION,
            room: "TESTROOM23".into(),
            name: "Asha".into(),
            token: None,
            spectator,
            host_secret: host_secret.map(str::to_owned),
        }
    }

    #[tokio::test]
    async fn a_client_that_falls_behind_is_dropped_and_the_room_goes_on() {
        let room = spawn(setup(), &Shutdown::new(), Box::new(|| {}));
        // A client that never reads, with room for two messages: welcome and room fill it.
        let (slow, _never_read) = client(2);
        assert!(join(&room, 1, hello(true, None), slow.clone()).await);
        assert!(!slow.kick.is_cancelled());
        // The next message for it (a room update when the host joins) does not fit: it is
        // dropped, and the room does not wait for it.
        let (host, mut outbox) = client(64);
        assert!(join(&room, 2, hello(false, Some("secret")), host).await);
        room.summary().await.expect("the room answers");
        assert!(slow.kick.is_cancelled());
        // The game goes on for those who keep up.
        room.send(Command::Message {
            conn: 2,
            id: None,
            message: ClientMessage::Start,
        })
        .await;
        loop {
            let Some(Outgoing::Text(text)) = outbox.recv().await else {
                panic!("the host's queue closed");
            };
            if text.as_str().starts_with(r#"{"type":"state""#) {
                break;
            }
        }
    }

    #[test]
    fn a_full_queue_disconnects_the_client() {
        let (tx, _outbox) = client(1);
        assert!(tx.send("one".into()));
        assert!(!tx.kick.is_cancelled());
        assert!(!tx.send("two".into()));
        assert!(tx.kick.is_cancelled());
    }
}
