//! The room's decisions, synchronous: seats, host, lobby, votes, the [`Game`], bots and
//! stand-ins. No channel, socket, task or web framework: [`RoomCore`] takes one input at a time
//! (a person's message, a join, a leave, a timer that fired) with the time and a source of
//! randomness ([`Entropy`]), and leaves behind what to send ([`Effect`]s, with the room's own
//! [`Text`]) and what changed for good ([`Record`]s). The actor ([`super::actor`]) appends the
//! records to the room's log, and only once that append has completed delivers the effects.
//!
//! Every durable change goes through one function, `RoomCore::apply`, live and in a replay
//! alike: the live path validates, draws what is random, and commits a record (apply it, keep
//! it for the log); [`RoomCore::restore`] applies the logged records, with no clock and no
//! bot's decision. Bots play in the core; their choices are logged as [`Record::Acted`] like
//! anyone's, so a replay never runs a bot. (`apply` makes no bot: the live path seats the bots a
//! record calls for, and a replay seats them at its end, each with a seed of its own from the
//! room's [`Entropy`], for the moves it will choose later; nothing replayed depends on it.)
//!
//! The room checks permission (a seat, the host, the stage) and then the rules (the engine),
//! and answers a refusal with an `error` to that client only, changing nothing.
//!
//! Its parts: the state is [`RoomCore`]'s fields, three of them parts with types of their own
//! (`Timers`, `Outbox`, and each person's `Cover`); the decisions are `impl RoomCore` blocks.
//! - this module: the room's state, its inputs ([`RoomCore::handle`], [`RoomCore::wake`],
//!   [`RoomCore::settle`]) and what the actor takes away;
//! - `coach`: who may ask the coach for a hint or a review, and the [`CoachJob`] it goes out as;
//! - `cover`: `Cover`, who plays a person's turns (they do, or a stand-in, and until when);
//! - `log`: `commit` and `apply`, snapshots;
//! - `lobby`: joining and leaving, seats, the host's checks, settings, removals, client seeds;
//! - `messages`: each client message, permission first, then the rules;
//! - `outbox`: `Outbox`, what the input being handled leaves for the actor: effects, records,
//!   the snapshot the log restarts from, and what stand-ins did to tell;
//! - `play`: the match, moves, what each change tells everyone, chat, votes, rematches;
//! - `stand_ins`: bots and their seeds, stand-ins for people away or out of time, the turn's
//!   clock;
//! - `tell`: sending to one client or all, and the room as each client sees it;
//! - `timers`: `Timers`, every timer of the room (its closing, the bot's next action, a
//!   takeover, the turn's clock) and which is due next;
//! - `watchers`: spectators, the host's power over them, and the room-wide reaction limit.

use std::collections::{HashMap, VecDeque};
use std::hash::{BuildHasherDefault, Hasher};
use std::net::IpAddr;
use std::sync::Arc;
use std::time::Duration;

use dhumbal_bots::{Bot, new_bot};
use dhumbal_engine::{ClientSeed, Difficulty, Game, Hex32, Phase, RuleError, Settings};
use dhumbal_protocol::{
    ChatLine, ClientMessage, Hello, MatchResult, MessageId, Stage, Told, seed_hex,
};
use rand::rngs::OsRng;
use rand::{Rng, TryRngCore};
use tokio::time::Instant;
use tracing::{debug, info};

mod coach;
mod cover;
mod lobby;
mod log;
mod messages;
mod outbox;
mod play;
mod stand_ins;
mod tell;
mod timers;
mod watchers;

pub use coach::{Ask, CoachJob};
pub use stand_ins::{ThinkJob, Thought, Ticket};

use self::cover::Cover;
use self::outbox::Outbox;
use self::timers::{Expired, Occupancy, Timers};
use super::client::{Batch, Text};
use super::record::{KeptMatch, LedgerRecord, Record, Setup, Snapshot};
use crate::metrics::Metrics;

/// A connection's number, unique for the server's lifetime.
pub type ConnId = u64;

/// A map keyed by connection, hashed by [`ConnHasher`].
pub type ConnMap<V> = HashMap<ConnId, V, BuildHasherDefault<ConnHasher>>;

/// The hash of a connection's number: the number times the golden ratio's 64-bit fraction, which
/// spreads consecutive numbers over every bit. The numbers are the server's own count, never a
/// client's choice, so nobody can pick ones that collide, and the standard map's SipHash (a
/// defence against that, at some hundred instructions a lookup, four lookups an action and more)
/// buys nothing here.
#[derive(Clone, Copy, Debug, Default)]
pub struct ConnHasher(u64);

impl Hasher for ConnHasher {
    fn finish(&self) -> u64 {
        self.0
    }

    fn write(&mut self, bytes: &[u8]) {
        // Only `write_u64` is used (a `ConnId`); anything else still hashes every byte.
        for &b in bytes {
            self.write_u64(self.0.rotate_left(8) ^ u64::from(b));
        }
    }

    fn write_u64(&mut self, n: u64) {
        self.0 = n.wrapping_mul(0x9E37_79B9_7F4A_7C15);
    }
}

/// Something to send, once the input that caused it is in the log.
#[derive(Debug)]
pub enum Effect {
    /// Send this text to a connection.
    Send {
        /// The connection.
        to: ConnId,
        /// The message (JSON).
        text: Text,
    },
    /// Close a connection with this code, after what is already queued for it; the room has
    /// let go of it.
    Close {
        /// The connection.
        to: ConnId,
        /// The close code.
        code: u16,
        /// The close reason.
        reason: &'static str,
    },
    /// Keep a finished match's hand history for its players to download.
    KeepMatch(Box<KeptMatch>),
    /// Let a bot think, away from the room's task (an expert's search takes milliseconds), and
    /// hand back what it chose as [`Input::Thought`].
    Think(Box<ThinkJob>),
    /// Ask the coach, away from the room's task, and send its answer to the one who asked.
    Coach(Box<CoachJob>),
}

/// What [`RoomCore::handle`] did with an input, for the caller.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Handled {
    /// A join, and the connection is in the room now (seated or watching): the caller keeps it.
    Joined,
    /// Anything else: the input was taken or refused (a refused join included).
    Taken,
}

/// Why a room is closing for good (its log is deleted).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Closing {
    /// Nobody was connected for `--idle-room-ttl`.
    Idle,
    /// The match never started within `--lobby-ttl`.
    LobbyExpired,
}

/// The randomness a room draws: match seeds, seat tokens and bots' seeds. The server's comes
/// from the operating system ([`OsEntropy`]); tests pass their own.
pub trait Entropy {
    /// A match seed.
    fn seed(&mut self) -> Result<[u8; 32], String>;
    /// A new secret seat token.
    fn token(&mut self) -> String;
    /// A new bot's seed, for the choices it makes (no secret: a bot sees only its seat's view).
    fn bot_seed(&mut self) -> u64;
}

/// The operating system's randomness.
#[derive(Clone, Copy, Debug, Default)]
pub struct OsEntropy;

impl Entropy for OsEntropy {
    fn seed(&mut self) -> Result<[u8; 32], String> {
        let mut seed = [0u8; 32];
        OsRng.try_fill_bytes(&mut seed).map_err(|e| e.to_string())?;
        Ok(seed)
    }

    fn token(&mut self) -> String {
        uuid::Uuid::new_v4().to_string()
    }

    /// From the thread's generator, seeded from the operating system.
    fn bot_seed(&mut self) -> u64 {
        rand::rng().random()
    }
}

/// The room's timings and limits.
#[derive(Clone, Copy, Debug)]
pub struct Timing {
    /// The most watchers (spectators) the room lets in at once (`--max-watchers`).
    pub max_watchers: usize,
    /// The delay before each bot action.
    pub bot_delay: Duration,
    /// How long a disconnected person's turn waits before a bot plays it for them.
    pub takeover_after: Duration,
    /// How long the room stays open with nobody connected.
    pub idle_ttl: Duration,
    /// How long the room stays open if its match never starts, whoever is connected.
    pub lobby_ttl: Duration,
    /// How long a room nobody has ever sat in stays open (while nobody is connected), so that
    /// rooms created and never used give their places back soon.
    pub unjoined_ttl: Duration,
    /// How long one second of a table's turn timer lasts: a second, except on a server for
    /// tests (`--test-turn-second-ms`), whose turns run out sooner.
    pub turn_second: Duration,
}

impl Timing {
    /// How long a turn timer of `seconds` lasts (what clients are told it lasts, too).
    pub fn turn_time(&self, seconds: u32) -> Duration {
        self.turn_second * seconds
    }
}

/// A connection's `hello`, as the room takes it ([`Input::Join`]) and as its task is sent it
/// ([`crate::room::Command::Join`]).
#[derive(Debug)]
pub struct Joining {
    /// The connection.
    pub conn: ConnId,
    /// The `hello` (boxed, as in [`dhumbal_protocol::ClientMessage`]: every input is moved at the
    /// size of its largest kind).
    pub hello: Box<Hello>,
    /// The `hello`'s `id`, echoed by an error.
    pub id: Option<MessageId>,
    /// Only a valid seat token gets in (the address failed too many lookups): any other hello
    /// is refused with `too_many_attempts`.
    pub token_only: bool,
    /// The client's address: a watcher the host removes is kept out by it.
    pub address: IpAddr,
}

/// One input for the room.
#[derive(Debug)]
pub enum Input {
    /// A connection's `hello`.
    Join(Joining),
    /// A message from a joined connection (its shape already checked).
    Message(Request),
    /// A connection has gone (it closed, or fell behind and was dropped).
    Leave {
        /// The connection.
        conn: ConnId,
    },
    /// A bot sent away to think ([`Effect::Think`]) has chosen. It plays only if the table has
    /// not moved meanwhile.
    Thought(Box<Thought>),
}

/// A message a joined connection sent, as the room takes it.
#[derive(Debug)]
pub struct Request {
    /// The connection.
    pub conn: ConnId,
    /// The message's `id`, echoed by an error.
    pub id: Option<MessageId>,
    /// The message (its shape already checked).
    pub message: ClientMessage,
}

/// A person in a seat.
struct Human {
    /// The name shown at the table.
    name: String,
    /// The SHA-256 of the seat's secret token: whoever presents the token takes the seat.
    token_hash: String,
    /// The connection playing the seat now; `None` while the person is away.
    conn: Option<ConnId>,
    /// Who plays their turns: they do, or a stand-in bot (and until when), with what it did
    /// for them to tell.
    cover: Cover,
    /// The randomness they added to the deals, in force from the next deal of the match whose
    /// commitment it answers.
    client_seed: Option<ClientSeed>,
    /// The commitment `client_seed` answers: it counts only for that match's deals. `None` only
    /// for a seed from a log written before protocol 4, which counted for the next deal
    /// whatever it answered (so that such a log replays as it was played).
    seed_answers: Option<Hex32>,
    /// Whether the host muted them: they read the chat but may not write in it.
    muted: bool,
}

impl Human {
    /// A person who has just sat down, not yet connected.
    fn new(name: String, token_hash: String) -> Human {
        Human {
            name,
            token_hash,
            conn: None,
            cover: Cover::default(),
            client_seed: None,
            seed_answers: None,
            muted: false,
        }
    }

    /// Forgets the last match's stand-in, time-outs and what a stand-in did.
    fn clear_absence(&mut self) {
        self.cover = Cover::default();
    }
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

impl Seat {
    /// The bot playing the seat now: a bot's own, or a person's stand-in.
    fn playing_bot(&mut self) -> Option<&mut Box<dyn Bot>> {
        match self {
            Seat::Bot(BotSeat { bot, .. }) => bot.as_mut(),
            Seat::Human(human) => human.cover.stand_in_mut().map(|s| &mut s.bot),
            Seat::Empty => None,
        }
    }
}

/// A connected client.
struct Client {
    /// Its seat, or `None` when watching.
    seat: Option<usize>,
    /// The name it gave in `hello`, used if it takes a seat later.
    name: String,
    /// While it watches, its number among the room's watchers.
    watcher: Option<u32>,
    /// The SHA-256 of the room's code and the client's address (its IPv6 /64), by which a
    /// removed watcher is kept out.
    address_hash: String,
    /// The version of the view it holds (see [`RoomCore::told`]), once it has been sent one.
    view_v: Option<u64>,
}

/// A watcher the host removed: nobody new comes in from their address until let back.
struct RemovedWatcher {
    /// The name they watched under.
    name: String,
    /// The SHA-256 of the room's code and their address.
    address_hash: String,
}

/// A person the host removed from the room.
struct Removed {
    /// The name they had.
    name: String,
    /// The hash of the seat token they had, refused until they are let back.
    token_hash: String,
}

/// Why a record could not be applied.
#[derive(Debug)]
enum ApplyError {
    /// The rules refused it.
    Rule(RuleError),
    /// It does not fit the room (a seat that is not there, a settings error, …).
    Invalid(String),
}

impl std::fmt::Display for ApplyError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            ApplyError::Rule(e) => write!(f, "the rules refuse it: {e}"),
            ApplyError::Invalid(why) => f.write_str(why),
        }
    }
}

/// A room's whole state and its decisions.
pub struct RoomCore {
    /// The room's code, for messages and logs.
    code: String,
    /// The hash of the secret whose holder is the host.
    host_secret_hash: String,
    /// The table's settings; the lobby may change them.
    settings: Settings,
    /// The settings the `room` message last showed and their JSON, written again only when
    /// they change (see [`RoomCore::broadcast_room`]).
    settings_json: Option<(Settings, String)>,
    /// Fixed deck orders (only with `--allow-test-decks`).
    decks: Option<Vec<Vec<dhumbal_engine::Card>>>,
    /// The room's timings.
    timing: Timing,
    /// The room's timers: its closing, the bot's next action, a takeover, the turn's clock.
    timers: Timers,
    /// Every seat, `settings.players` of them.
    seats: Vec<Seat>,
    /// The hash of the host's seat token, once the host has joined.
    host_token: Option<String>,
    /// The people the host removed, who may not come back until the host lets them.
    removed: Vec<Removed>,
    /// The seat-token hashes of the people removed during the current match, who sat in it and
    /// may download its hand history (rebuilt by a replay: the match's records follow the last
    /// snapshot).
    left_match: Vec<String>,
    /// Whether people may watch (the host may turn watching off).
    watching: bool,
    /// The watchers the host removed, whose address may not come back until let back.
    removed_watchers: Vec<RemovedWatcher>,
    /// How many watchers have come in (each gets the next number).
    watchers_seen: u32,
    /// The room-wide reaction limit.
    reactions: watchers::Reactions,
    /// Every connected client.
    clients: ConnMap<Client>,
    /// The match, once started.
    game: Option<Game>,
    /// How many matches the room has begun (the current one's number, once started).
    matches: u32,
    /// The room's ledger of its finished matches, one line per seat that has finished one, by
    /// seat (kept in snapshots; a replay of a match that ended counts it again).
    ledger: Vec<LedgerRecord>,
    /// The table's last chat lines, oldest first (at most [`CHAT_KEPT_LINES`]).
    chat: VecDeque<ChatLine>,
    /// The next match's seed, drawn ahead (at the room's creation, then as each match ends) so
    /// that its commitment is public before any client seed for it counts.
    next_seed: Option<[u8; 32]>,
    /// Between rounds, who has sent `ready`; after the match, who has asked for a rematch.
    votes: Vec<bool>,
    /// The bot thinking away from the room's task, if one is: the position it thinks about.
    thinking: Option<Ticket>,
    /// How many bots have been sent to think (each [`Ticket`] has its own number).
    tickets: u64,
    /// What every client holding the latest view was told of it: its version, the shared
    /// fields and each seat's own (the base of the next change's patches); `None` until a view
    /// is first told, and after a restart.
    told: Option<Told>,
    /// The frames written for many clients at once (a change's patches, the room's state),
    /// kept from message to message for their memory.
    batch: Batch,
    /// Which client each frame of `batch` goes to, in order.
    part_to: Vec<ConnId>,
    /// How many versions of the view the room has made (the latest's number; never reused).
    views_made: u64,
    /// The places in the round's log of the events stand-ins played (for `history`).
    stand_in_marks: Vec<usize>,
    /// The time of the input or timer being handled.
    now: Instant,
    /// Whether to see, once the input is handled, if every seat has agreed to go on (a vote, a
    /// departure, a round's end).
    agreement_due: bool,
    /// Why the room is closing for good, once it is.
    ending: Option<Closing>,
    /// The server's metrics.
    metrics: Arc<Metrics>,
    /// The seats held by people and by bots as last added to the metrics.
    reported_seats: (i64, i64),
    /// What the current input leaves behind: what to send, what to log, the snapshot the log
    /// restarts from, what stand-ins did to tell.
    outbox: Outbox,
    /// An empty list of events, kept for the memory of the next action's (the game adds its
    /// events to it: [`dhumbal_engine::Game::apply_into`]).
    spare_events: Vec<dhumbal_engine::Event>,
}

impl RoomCore {
    /// A new room, as set up.
    pub fn new(setup: &Setup, timing: Timing, metrics: Arc<Metrics>, now: Instant) -> RoomCore {
        let players = usize::from(setup.settings.players);
        RoomCore {
            code: setup.code.clone(),
            host_secret_hash: setup.host_secret_hash.clone(),
            seats: (0..players).map(|_| Seat::Empty).collect(),
            votes: vec![false; players],
            settings: setup.settings.clone(),
            settings_json: None,
            decks: setup.decks.clone(),
            timing,
            timers: Timers::new(timing, now),
            host_token: None,
            removed: Vec::new(),
            left_match: Vec::new(),
            watching: true,
            removed_watchers: Vec::new(),
            watchers_seen: 0,
            reactions: watchers::Reactions::new(now),
            clients: ConnMap::default(),
            game: None,
            matches: 0,
            ledger: Vec::new(),
            next_seed: setup.seed,
            chat: VecDeque::new(),
            thinking: None,
            tickets: 0,
            told: None,
            batch: Batch::default(),
            part_to: Vec::new(),
            views_made: 0,
            stand_in_marks: Vec::new(),
            now,
            agreement_due: false,
            ending: None,
            metrics,
            reported_seats: (0, 0),
            outbox: Outbox::default(),
            spare_events: Vec::new(),
        }
    }

    /// The room its log describes: the setup, the latest snapshot, then every entry's records
    /// in order. No clock is read and no bot decides (the bots seated get seeds from `entropy`
    /// for their later moves); nobody is connected, and the timers start afresh from `now`.
    /// Fails, naming the entry, when a record does not apply.
    pub fn restore(
        setup: &Setup,
        snapshot: Option<Snapshot>,
        entries: impl IntoIterator<Item = (u64, Vec<Record>)>,
        timing: Timing,
        metrics: Arc<Metrics>,
        now: Instant,
        entropy: &mut dyn Entropy,
    ) -> Result<RoomCore, String> {
        let mut core = RoomCore::new(setup, timing, metrics, now);
        if let Some(snapshot) = snapshot {
            core.load_snapshot(snapshot);
        }
        for (seq, records) in entries {
            for record in &records {
                core.apply(record)
                    .map_err(|e| format!("input {seq} ({record:?}) does not replay: {e}"))?;
            }
        }
        core.seat_bots(entropy);
        Ok(core)
    }

    /// Where the room stands, from its match: the lobby before one (or after `to_lobby`), then
    /// as its game's phase says.
    pub(super) fn stage(&self) -> Stage {
        match self.game.as_ref().map(Game::phase) {
            None => Stage::Lobby,
            Some(Phase::RoundOver) => Stage::BetweenRounds,
            Some(Phase::MatchOver) => Stage::MatchOver,
            Some(Phase::Start | Phase::Throw | Phase::Draw) => Stage::Playing,
        }
    }

    /// What to send, once this input's records are in the log.
    pub fn take_effects(&mut self) -> Vec<Effect> {
        self.outbox.take_effects()
    }

    /// A list [`RoomCore::take_effects`] gave, every effect taken out of it, back for the next
    /// input's effects (its memory kept).
    pub fn recycle_effects(&mut self, list: Vec<Effect>) {
        self.outbox.recycle_effects(list);
    }

    /// What this input changed for good, for the log.
    pub fn take_records(&mut self) -> Vec<Record> {
        self.outbox.take_records()
    }

    /// A list [`RoomCore::take_records`] gave, its records in the log, back for the next
    /// input's records (its memory kept).
    pub fn recycle_records(&mut self, list: Vec<Record>) {
        self.outbox.recycle_records(list);
    }

    /// The room as it stood before a rematch began in this input: the log restarts from it.
    pub fn take_snapshot(&mut self) -> Option<Snapshot> {
        self.outbox.take_snapshot()
    }

    /// Why the room is closing for good, once it is.
    pub fn ending(&self) -> Option<Closing> {
        self.ending
    }

    /// The room's timings (for a room put back as its log has it).
    pub fn timing(&self) -> Timing {
        self.timing
    }

    /// The server's metrics, shared (for a room put back as its log has it).
    pub fn shared_metrics(&self) -> Arc<Metrics> {
        Arc::clone(&self.metrics)
    }

    /// The room's code.
    pub fn code(&self) -> &str {
        &self.code
    }

    /// The server's metrics, which the room keeps up to date.
    pub fn metrics(&self) -> &Metrics {
        &self.metrics
    }

    /// The match being played (or the last one played), if any: read-only, for benchmarks
    /// that play as the clients would.
    pub fn game(&self) -> Option<&Game> {
        self.game.as_ref()
    }

    /// The next time something is due (a bot's action, a takeover, the room's closing).
    pub fn next_due(&self) -> Option<Instant> {
        self.timers.next_due(self.occupancy())
    }

    /// What the timers need to know of the room now.
    fn occupancy(&self) -> Occupancy {
        Occupancy {
            lobby: self.game.is_none(),
            connected: !self.clients.is_empty(),
        }
    }

    /// Handles one input, at `now`: whether it seated (or let watch) a joining connection.
    pub fn handle(&mut self, input: Input, now: Instant, entropy: &mut dyn Entropy) -> Handled {
        self.now = self.now.max(now);
        let joined = self.take_input(input, entropy);
        self.go_on_if_agreed(entropy);
        if joined {
            Handled::Joined
        } else {
            Handled::Taken
        }
    }

    /// One input, before the room goes on to what it made due.
    fn take_input(&mut self, input: Input, entropy: &mut dyn Entropy) -> bool {
        match input {
            Input::Join(Joining {
                conn,
                hello,
                id,
                token_only,
                address,
            }) => match self.join(conn, *hello, id.clone(), token_only, address, entropy) {
                Ok(()) => true,
                Err(refusal) => {
                    self.metrics.rejected(refusal.code());
                    self.outbox.push(Effect::Send {
                        to: conn,
                        text: refusal.message(id).to_json().into(),
                    });
                    false
                }
            },
            Input::Message(Request { conn, id, message }) => {
                let kind = message.type_name();
                // The clock was read as the input came (`handle`'s `now`): one read fewer.
                let started = self.now.into_std();
                let handled = self.on_message(conn, id.clone(), message, entropy);
                self.metrics.action_handled(started.elapsed());
                if let Err(refusal) = handled {
                    self.metrics.rejected(refusal.code());
                    debug!(room = %self.code, conn, kind, code = refusal.code(), "refused");
                    self.send_to(conn, &refusal.message(id));
                }
                false
            }
            Input::Leave { conn } => {
                self.remove_client(conn);
                false
            }
            Input::Thought(thought) => {
                self.on_thought(*thought, entropy);
                false
            }
        }
    }

    /// A timer fired at `now`: a takeover, a bot action, the room's closing.
    pub fn wake(&mut self, now: Instant, entropy: &mut dyn Entropy) {
        self.now = self.now.max(now);
        match self.timers.expired(self.occupancy(), now) {
            Some(Expired::Idle) => {
                info!(room = %self.code, "closing a room nobody has used for a while");
                self.ending = Some(Closing::Idle);
                return;
            }
            Some(Expired::Unjoined) => {
                info!(room = %self.code, "closing a room nobody has joined");
                self.ending = Some(Closing::Idle);
                return;
            }
            Some(Expired::Lobby) => {
                info!(room = %self.code, "closing a room whose match never started");
                self.expire();
                return;
            }
            None => {}
        }
        if let Some(seat) = self.timers.takeover_fired(now) {
            self.take_over(seat, entropy);
        }
        if let Some(seat) = self.timers.turn_clock_fired(now) {
            self.time_out(seat, entropy);
        }
        if self.timers.bot_fired(now) {
            self.bot_step(entropy);
        }
        self.go_on_if_agreed(entropy);
    }

    /// After every input and timer: hands seats back to people who returned, starts or stops
    /// the takeover timer of an away person's turn, schedules the next bot action, notes
    /// whether anyone is connected, and brings the seat metrics up to date.
    pub fn settle(&mut self, now: Instant) {
        self.now = self.now.max(now);
        self.timers.note_connected(!self.clients.is_empty(), now);
        let handed_back = self.hand_back();
        let turn = self.turn_being_played();
        let away_turn = turn.filter(|&seat| {
            self.human(seat)
                .is_some_and(|h| h.conn.is_none() && !h.cover.is_covered())
        });
        self.timers.wait_for_takeover(away_turn, now);
        if self
            .thinking
            .is_some_and(|ticket| !self.still_thinking(ticket))
        {
            // The table moved on (a person took their seat back, the match ended early): what
            // the bot chooses will not count, and the turn is scheduled afresh.
            self.thinking = None;
        }
        if self.bot_to_play().is_none() {
            self.timers.no_bot_turn();
        } else if self.thinking.is_none() {
            self.timers.bot_turn(now);
        }
        if self.sync_clock(&[]) {
            // The clock changed with no game change to carry it: a patch with the clock alone.
            self.tell_change(&[], None);
        }
        if handed_back {
            self.broadcast_room();
        }
        self.tell_while_away();
        self.report_seats(false);
    }

    /// Takes the room's seats out of the metrics: it is closing.
    pub fn close(&mut self) {
        self.report_seats(true);
    }
}

/// The match's result, once it is over: its standings, every round's result and the revealed
/// seeds.
fn match_result(game: &Game, number: u32) -> Option<MatchResult> {
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
        match_number: number,
        commitment: game.commitment().map(|c| c.to_string()),
        seed: game.revealed_match_seed().map(|s| Hex32(s).to_string()),
    })
}

/// A new bot of `difficulty`, with a seed from `entropy`, that has seen the current round's
/// public log.
fn bot_knowing(difficulty: Difficulty, game: &Game, entropy: &mut dyn Entropy) -> Box<dyn Bot> {
    let mut bot = new_bot(difficulty, entropy.bot_seed());
    for event in game.log() {
        bot.observe(event);
    }
    bot
}

/// A duration in whole milliseconds, for the wire.
fn millis(d: Duration) -> u64 {
    u64::try_from(d.as_millis()).unwrap_or(u64::MAX)
}

#[cfg(test)]
mod tests;
