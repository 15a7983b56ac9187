//! The room's decisions, synchronous: seats, host, lobby, votes, the [`Game`], bots and
//! stand-ins. No channel, socket or task: [`RoomCore`] takes one input at a time (a person's
//! message, a join, a leave, a timer that fired) with the time and a source of randomness, and
//! leaves behind what to send ([`Effect`]s) and what changed for good ([`Record`]s). The actor
//! ([`super::actor`]) appends the records to the room's log, and only once that append has
//! completed delivers the effects.
//!
//! Every durable change goes through one function, `RoomCore::apply`, live and in a replay alike: the live
//! path validates, draws what is random, and commits a record (apply it, keep it for the log);
//! [`RoomCore::restore`] applies the logged records, with no randomness, clock or bot. Bots play
//! in the core; their choices are logged as [`Record::Acted`] like anyone's, so a replay never
//! runs a bot.
//!
//! The room checks permission (a seat, the host, the stage) and then the rules (the engine),
//! and answers a refusal with an `error` to that client only, changing nothing.

use std::collections::{HashMap, VecDeque};
use std::sync::Arc;
use std::time::Duration;

use axum::extract::ws::Utf8Bytes;
use dhumbal_bots::{Bot, new_bot};
use dhumbal_engine::{
    Action, ClientSeed, Difficulty, Event, FairDeal, Game, Hex32, Phase, RuleError, Settings,
};
use dhumbal_protocol::{
    CHAT_KEPT_LINES, CLOSE_REMOVED, CLOSE_REPLACED, CLOSE_ROOM_EXPIRED, ChatLine, ClientMessage,
    Fairness, Hello, MatchResult, MessageId, Notice, PROTOCOL_VERSION, RoomState, RoomSummary,
    SeatInfo, SeatKind, ServerMessage, Stage, StateFrames, TurnClock, Welcome, WhileAway,
    clean_chat, codes, draw_source, seed_hex,
};
use rand::TryRngCore;
use rand::rngs::OsRng;
use tokio::time::Instant;
use tracing::{debug, info, warn};

use super::record::{FORMAT, Record, RemovedRecord, SeatRecord, Setup, Snapshot, hash_secret};
use crate::error::Refusal;
use crate::metrics::{Metrics, Seated};
use crate::names;
use crate::store::KeptMatch;

/// A connection's number, unique for the server's lifetime.
pub type ConnId = u64;

/// Something to send, once the input that caused it is in the log.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Effect {
    /// Send this text to a connection.
    Send {
        /// The connection.
        to: ConnId,
        /// The message (JSON).
        text: Utf8Bytes,
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
}

/// Why a room is closing for good (its log is deleted).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Ending {
    /// Nobody was connected for `--idle-room-ttl`.
    Idle,
    /// The match never started within `--lobby-ttl`.
    LobbyExpired,
}

/// The randomness a room draws: match seeds and seat tokens. The server's comes from the
/// operating system ([`OsEntropy`]); tests pass their own.
pub trait Entropy {
    /// A match seed.
    fn seed(&mut self) -> Result<[u8; 32], String>;
    /// A new secret seat token.
    fn token(&mut self) -> String;
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
}

/// The room's timings.
#[derive(Clone, Copy, Debug)]
pub struct Timing {
    /// The delay before each bot action.
    pub bot_delay: Duration,
    /// How long a disconnected person's turn waits before a bot plays it for them.
    pub takeover_after: Duration,
    /// How long the room stays open with nobody connected.
    pub idle_ttl: Duration,
    /// How long the room stays open if its match never starts, whoever is connected.
    pub lobby_ttl: Duration,
}

/// One input for the room.
#[derive(Debug)]
pub enum Input {
    /// A connection's `hello`.
    Join {
        /// The connection.
        conn: ConnId,
        /// The `hello`.
        hello: Hello,
        /// The `hello`'s `id`, echoed by an error.
        id: Option<MessageId>,
        /// Only a valid seat token gets in (the address failed too many lookups).
        token_only: bool,
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
    /// A connection has gone (it closed, or fell behind and was dropped).
    Leave {
        /// The connection.
        conn: ConnId,
    },
}

/// A person in a seat.
struct Human {
    /// The name shown at the table.
    name: String,
    /// The SHA-256 of the seat's secret token: whoever presents the token takes the seat.
    token_hash: String,
    /// The connection playing the seat now; `None` while the person is away.
    conn: Option<ConnId>,
    /// The bot playing the seat while the person is away, from when their turn waited longer
    /// than the grace period until the start of their first turn after they return.
    stand_in: Option<Box<dyn Bot>>,
    /// The randomness they added to the deals, in force from the next deal.
    client_seed: Option<ClientSeed>,
    /// Whether the host muted them: they read the chat but may not write in it.
    muted: bool,
    /// Marked away: they ran out of time on two turns in a row, or the host handed their seat to
    /// a bot. The stand-in plays their turns until they act again (`back`, or a move).
    away: bool,
    /// The stand-in plays just this turn: the person's turn timer ran out.
    timed_out_turn: bool,
    /// Their turns in a row that ran out of time.
    timeouts: u8,
    /// What the stand-in did for them, told to them when the seat comes back.
    while_away: WhileAway,
}

impl Human {
    /// A person who has just sat down, not yet connected.
    fn new(name: String, token_hash: String) -> Human {
        Human {
            name,
            token_hash,
            conn: None,
            stand_in: None,
            client_seed: None,
            muted: false,
            away: false,
            timed_out_turn: false,
            timeouts: 0,
            while_away: WhileAway::default(),
        }
    }
}

impl Human {
    /// Forgets the last match's time-outs and what a stand-in did.
    fn clear_absence(&mut self) {
        self.away = false;
        self.timed_out_turn = false;
        self.timeouts = 0;
        self.while_away = WhileAway::default();
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

/// A connected client.
struct Client {
    /// Its seat, or `None` when watching.
    seat: Option<usize>,
    /// The name it gave in `hello`, used if it takes a seat later.
    name: String,
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
    /// Fixed deck orders (only with `--allow-test-decks`).
    decks: Option<Vec<Vec<dhumbal_engine::Card>>>,
    /// The room's timings.
    timing: Timing,
    /// Since when nobody has been connected (`None` while someone is).
    idle_since: Option<Instant>,
    /// When the room closes if its match has not started by then.
    lobby_due: Instant,
    /// Every seat, `settings.players` of them.
    seats: Vec<Seat>,
    /// The hash of the host's seat token, once the host has joined.
    host_token: Option<String>,
    /// The people the host removed, who may not come back until the host lets them.
    removed: Vec<Removed>,
    /// Every connected client.
    clients: HashMap<ConnId, Client>,
    /// The match, once started.
    game: Option<Game>,
    /// How many matches the room has begun (the current one's number, once started).
    matches: u32,
    /// The table's last chat lines, oldest first (at most [`CHAT_KEPT_LINES`]).
    chat: VecDeque<ChatLine>,
    /// The next match's seed, drawn ahead (at the room's creation, then as each match ends) so
    /// that its commitment is public before any client seed for it counts.
    next_seed: Option<[u8; 32]>,
    /// Where the room stands.
    stage: Stage,
    /// Between rounds, who has sent `ready`; after the match, who has asked for a rematch.
    votes: Vec<bool>,
    /// When the bot whose turn it is acts next.
    bot_due: Option<Instant>,
    /// The seat of an away person whose turn it is, and when a stand-in bot takes it over.
    takeover_due: Option<(usize, Instant)>,
    /// With a turn timer: the seat of the person whose turn it is, and when their time runs out.
    turn_clock: Option<(usize, Instant)>,
    /// The places in the round's log of the events stand-ins played (for `history`).
    stand_in_marks: Vec<usize>,
    /// The time of the input or timer being handled.
    now: Instant,
    /// What stand-ins did for people who just got their seats back, to tell them once the
    /// change's `state` has gone out.
    while_away: Vec<(ConnId, WhileAway)>,
    /// Why the room is closing for good, once it is.
    ending: Option<Ending>,
    /// The server's metrics.
    metrics: Arc<Metrics>,
    /// The seats held by people and by bots as last added to the metrics.
    reported_seats: (i64, i64),
    /// What to send once the current input is in the log.
    effects: Vec<Effect>,
    /// What the current input changed for good.
    records: Vec<Record>,
    /// The room as it stood before a rematch began in the current input, for the log to restart
    /// from.
    snapshot: Option<Snapshot>,
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
            decks: setup.decks.clone(),
            timing,
            idle_since: Some(now),
            lobby_due: now + timing.lobby_ttl,
            host_token: None,
            removed: Vec::new(),
            clients: HashMap::new(),
            game: None,
            matches: 0,
            next_seed: setup.seed,
            chat: VecDeque::new(),
            stage: Stage::Lobby,
            bot_due: None,
            takeover_due: None,
            turn_clock: None,
            stand_in_marks: Vec::new(),
            now,
            while_away: Vec::new(),
            ending: None,
            metrics,
            reported_seats: (0, 0),
            effects: Vec::new(),
            records: Vec::new(),
            snapshot: None,
        }
    }

    /// The room its log describes: the setup, the latest snapshot, then every entry's records
    /// in order. No randomness, clock or bot is used; nobody is connected, and the timers start
    /// afresh from `now`. Fails, naming the entry, when a record does not apply.
    pub fn restore(
        setup: &Setup,
        snapshot: Option<Snapshot>,
        entries: impl IntoIterator<Item = (u64, Vec<Record>)>,
        timing: Timing,
        metrics: Arc<Metrics>,
        now: Instant,
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
        core.rebuild_bots();
        Ok(core)
    }

    // ----- What the actor takes away -----

    /// What to send, once this input's records are in the log.
    pub fn take_effects(&mut self) -> Vec<Effect> {
        std::mem::take(&mut self.effects)
    }

    /// What this input changed for good, for the log.
    pub fn take_records(&mut self) -> Vec<Record> {
        std::mem::take(&mut self.records)
    }

    /// The room as it stood before a rematch began in this input: the log restarts from it.
    pub fn take_snapshot(&mut self) -> Option<Snapshot> {
        self.snapshot.take()
    }

    /// Why the room is closing for good, once it is.
    pub fn ending(&self) -> Option<Ending> {
        self.ending
    }

    /// The room's code.
    pub fn code(&self) -> &str {
        &self.code
    }

    /// The server's metrics, which the room keeps up to date.
    pub fn metrics(&self) -> &Metrics {
        &self.metrics
    }

    /// The next time something is due (a bot's action, a takeover, the room's closing).
    pub fn next_due(&self) -> Option<Instant> {
        let idle_due = self.idle_since.map(|since| since + self.timing.idle_ttl);
        // Only a room whose match never started has a lifetime of its own.
        let lobby_due = self.game.is_none().then_some(self.lobby_due);
        [
            self.bot_due,
            self.takeover_due.map(|(_, due)| due),
            self.turn_clock.map(|(_, due)| due),
            idle_due,
            lobby_due,
        ]
        .into_iter()
        .flatten()
        .min()
    }

    // ----- Inputs -----

    /// Handles one input, at `now`. For a join, returns whether the connection joined.
    pub fn handle(&mut self, input: Input, now: Instant, entropy: &mut dyn Entropy) -> bool {
        self.now = self.now.max(now);
        match input {
            Input::Join {
                conn,
                hello,
                id,
                token_only,
            } => match self.join(conn, hello, token_only, entropy) {
                Ok(()) => true,
                Err(refusal) => {
                    self.metrics.rejected(refusal.code());
                    self.effects.push(Effect::Send {
                        to: conn,
                        text: refusal.message(id).to_json().into(),
                    });
                    false
                }
            },
            Input::Message { conn, id, message } => {
                let kind = message.type_name();
                let started = std::time::Instant::now();
                let handled = self.on_message(conn, message, entropy);
                self.metrics.action_handled(started.elapsed());
                if let Err(refusal) = handled {
                    self.metrics.rejected(refusal.code());
                    debug!(room = %self.code, conn, kind, code = refusal.code(), "refused");
                    self.send_to(conn, &refusal.message(id));
                }
                false
            }
            Input::Leave { conn } => {
                self.remove_client(conn, entropy);
                false
            }
        }
    }

    /// A timer fired at `now`: a takeover, a bot action, the room's closing.
    pub fn wake(&mut self, now: Instant, entropy: &mut dyn Entropy) {
        self.now = self.now.max(now);
        if self
            .idle_since
            .is_some_and(|since| since + self.timing.idle_ttl <= now)
        {
            info!(room = %self.code, "closing a room nobody has used for a while");
            self.ending = Some(Ending::Idle);
            return;
        }
        if self.game.is_none() && self.lobby_due <= now {
            info!(room = %self.code, "closing a room whose match never started");
            self.expire();
            return;
        }
        if let Some((seat, due)) = self.takeover_due {
            if due <= now {
                self.takeover_due = None;
                self.take_over(seat);
            }
        }
        if let Some((seat, due)) = self.turn_clock {
            if due <= now {
                self.turn_clock = None;
                self.time_out(seat);
            }
        }
        if self.bot_due.is_some_and(|due| due <= now) {
            self.bot_due = None;
            self.bot_step(entropy);
        }
    }

    /// After every input and timer: hands seats back to people who returned, starts or stops
    /// the takeover timer of an away person's turn, schedules the next bot action, notes
    /// whether anyone is connected, and brings the seat metrics up to date.
    pub fn settle(&mut self, now: Instant) {
        self.now = self.now.max(now);
        if self.clients.is_empty() {
            self.idle_since.get_or_insert(now);
        } else {
            self.idle_since = None;
        }
        let handed_back = self.hand_back();
        let turn = self.turn_being_played();
        let away_turn = turn.filter(|&seat| {
            self.human(seat)
                .is_some_and(|h| h.conn.is_none() && h.stand_in.is_none())
        });
        self.takeover_due = match (away_turn, self.takeover_due) {
            (Some(seat), Some((waiting, due))) if waiting == seat => Some((seat, due)),
            (Some(seat), _) => Some((seat, now + self.timing.takeover_after)),
            (None, _) => None,
        };
        if self.bot_to_play().is_none() {
            self.bot_due = None;
        } else if self.bot_due.is_none() {
            self.bot_due = Some(now + self.timing.bot_delay);
        }
        if self.sync_clock(&[]) {
            // The clock changed with no game change to carry it: a fresh `state` for everyone.
            let conns: Vec<ConnId> = self.clients.keys().copied().collect();
            for conn in conns {
                self.send_state(conn);
            }
        }
        if handed_back {
            self.broadcast_room();
        }
        self.tell_while_away();
        self.report_seats(false);
    }

    /// Tells each person who got their seat back what the stand-in did for them.
    fn tell_while_away(&mut self) {
        for (conn, summary) in std::mem::take(&mut self.while_away) {
            self.send_to(conn, &ServerMessage::WhileAway(summary));
        }
    }

    /// Gives seats back to their people where a stand-in's work is done: a person who returned
    /// (and is not marked away) gets it unless a turn is half played for them; a stand-in that
    /// played one timed-out turn leaves once that turn is over. Each person who gets their seat
    /// back hears what the stand-in did. Returns whether any seat changed hands.
    fn hand_back(&mut self) -> bool {
        let turn = self.turn_being_played();
        let mid_turn = self
            .game
            .as_ref()
            .is_some_and(|g| matches!(g.phase(), Phase::Throw | Phase::Draw));
        let mut told = Vec::new();
        for (seat, occupant) in self.seats.iter_mut().enumerate() {
            let Seat::Human(human) = occupant else {
                continue;
            };
            if human.stand_in.is_none() {
                continue;
            }
            let finishing = turn == Some(seat) && mid_turn;
            let done = if human.timed_out_turn {
                turn != Some(seat)
            } else {
                human.conn.is_some() && !human.away && !finishing
            };
            if done {
                human.stand_in = None;
                human.timed_out_turn = false;
                info!(room = %self.code, seat, "seat handed back");
                let summary = std::mem::take(&mut human.while_away);
                told.push((human.conn, summary));
            }
        }
        let handed_back = !told.is_empty();
        for (conn, summary) in told {
            if let Some(conn) = conn.filter(|_| summary.turns > 0 || !summary.events.is_empty()) {
                self.while_away.push((conn, summary));
            }
        }
        handed_back
    }

    /// Brings the turn timer up to date after `events` (none for a change outside the game): a
    /// person's turn gets a fresh clock when it begins, keeps it through the turn, and has none
    /// while a stand-in plays it. Returns whether the clock started anew or stopped.
    fn sync_clock(&mut self, events: &[Event]) -> bool {
        let before = self.turn_clock;
        let person = self
            .turn_being_played()
            .filter(|&seat| self.human(seat).is_some_and(|h| h.stand_in.is_none()));
        self.turn_clock = match (self.settings.turn_timer, person) {
            (Some(seconds), Some(seat)) => {
                let dealt = events.iter().any(|e| matches!(e, Event::Dealt { .. }));
                match before {
                    Some((running, due)) if running == seat && !dealt => Some((seat, due)),
                    _ => Some((seat, self.now + Duration::from_secs(seconds.into()))),
                }
            }
            _ => None,
        };
        self.turn_clock != before
    }

    /// The turn's clock as clients see it, now.
    fn clock(&self) -> Option<TurnClock> {
        let (seat, due) = self.turn_clock?;
        let total = Duration::from_secs(self.settings.turn_timer?.into());
        Some(TurnClock {
            seat,
            left_ms: millis(due.saturating_duration_since(self.now)),
            total_ms: millis(total),
        })
    }

    /// Takes the room's seats out of the metrics: it is closing.
    pub fn close(&mut self) {
        self.report_seats(true);
    }

    // ----- The log: every durable change goes through `apply` -----

    /// Applies a record and keeps it for the log. The live path's only way to change the
    /// room for good.
    fn commit(&mut self, record: Record) -> Result<Vec<Event>, ApplyError> {
        let events = self.apply(&record)?;
        self.records.push(record);
        Ok(events)
    }

    /// Applies one record to the room's durable state, and returns the game's events it caused.
    /// Nothing is sent and no bot plays here: this is also the replay.
    fn apply(&mut self, record: &Record) -> Result<Vec<Event>, ApplyError> {
        let invalid = |why: &str| Err(ApplyError::Invalid(why.to_owned()));
        match record {
            Record::Seated {
                seat,
                name,
                token_hash,
            } => {
                if !matches!(self.seats.get(*seat), Some(Seat::Empty)) {
                    return invalid("the seat is not empty");
                }
                self.seats[*seat] = Seat::Human(Human::new(name.clone(), token_hash.clone()));
            }
            Record::HostIs { seat } => {
                let Some(human) = self.human(*seat) else {
                    return invalid("no person sits there");
                };
                self.host_token = Some(human.token_hash.clone());
            }
            Record::Moved { from, to } => {
                if !matches!(self.seats.get(*from), Some(Seat::Human(_)))
                    || !matches!(self.seats.get(*to), Some(Seat::Empty))
                {
                    return invalid("not a move from a person's seat to an empty one");
                }
                self.seats.swap(*from, *to);
            }
            Record::SettingsSet { settings } => {
                settings
                    .validate()
                    .map_err(|e| ApplyError::Invalid(e.to_string()))?;
                let players = usize::from(settings.players);
                if self.seats[players.min(self.seats.len())..]
                    .iter()
                    .any(|s| matches!(s, Seat::Human(_)))
                {
                    return invalid("a person sits beyond the new seats");
                }
                self.seats.truncate(players);
                self.seats.resize_with(players, || Seat::Empty);
                self.votes = vec![false; players];
                self.settings = settings.clone();
            }
            Record::BotAdded { seat, difficulty } => {
                if !matches!(self.seats.get(*seat), Some(Seat::Empty | Seat::Bot(_))) {
                    return invalid("the seat is not empty");
                }
                self.seats[*seat] = Seat::Bot(BotSeat {
                    difficulty: *difficulty,
                    bot: None,
                });
            }
            Record::Cleared { seat } => {
                let Some(occupant) = self.seats.get_mut(*seat) else {
                    return invalid("no such seat");
                };
                // During a match a bot of the table's difficulty plays the seat from here on.
                let replacement = match &self.game {
                    Some(game) => Seat::Bot(BotSeat {
                        difficulty: self.settings.difficulty,
                        bot: Some(bot_knowing(self.settings.difficulty, game)),
                    }),
                    None => Seat::Empty,
                };
                if let Seat::Human(human) = std::mem::replace(occupant, replacement) {
                    self.removed.push(Removed {
                        name: human.name,
                        token_hash: human.token_hash,
                    });
                }
            }
            Record::Readmitted { index } => {
                if *index >= self.removed.len() {
                    return invalid("nobody removed has that number");
                }
                self.removed.remove(*index);
            }
            Record::MatchBegun { seed } => {
                let number = self.matches + 1;
                let game = match (&self.decks, seed) {
                    (Some(decks), _) => Game::with_decks(self.settings.clone(), decks.clone()),
                    (None, Some(seed)) => {
                        let deal = FairDeal {
                            seed: *seed,
                            room: self.code.clone(),
                            match_number: number,
                        };
                        Game::fair(self.settings.clone(), deal, self.client_seeds())
                    }
                    (None, None) => return invalid("a match without a seed or decks"),
                }
                .map_err(|e| ApplyError::Invalid(e.to_string()))?;
                self.matches = number;
                self.next_seed = None;
                let difficulty = self.settings.difficulty;
                for seat in &mut self.seats {
                    match seat {
                        Seat::Empty => {
                            *seat = Seat::Bot(BotSeat {
                                difficulty,
                                bot: Some(new_bot(difficulty, rand::random())),
                            });
                        }
                        Seat::Bot(bot) => bot.bot = Some(new_bot(bot.difficulty, rand::random())),
                        // A stand-in remembers the last match; it is made afresh if needed.
                        Seat::Human(human) => {
                            human.stand_in = None;
                            human.clear_absence();
                        }
                    }
                }
                let events = game.log().to_vec();
                self.game = Some(game);
                self.stage = Stage::Playing;
                self.votes.fill(false);
                return Ok(events);
            }
            Record::Acted { seat, action } => {
                let Some(game) = &mut self.game else {
                    return invalid("no match is being played");
                };
                let events = game
                    .apply(*seat, action.clone())
                    .map_err(ApplyError::Rule)?;
                for event in &events {
                    let stage = match event {
                        Event::RoundEnded { .. } => Stage::BetweenRounds,
                        Event::MatchEnded { .. } => Stage::MatchOver,
                        _ => continue,
                    };
                    self.stage = stage;
                    self.votes.fill(false);
                }
                if self.stage == Stage::MatchOver {
                    // The next match's client seeds must come after its commitment.
                    for seat in &mut self.seats {
                        if let Seat::Human(human) = seat {
                            human.client_seed = None;
                        }
                    }
                }
                return Ok(events);
            }
            Record::Voted { seat } => {
                let Some(vote) = self.votes.get_mut(*seat) else {
                    return invalid("no such seat");
                };
                *vote = true;
            }
            Record::NextRound => {
                let seeds = self.client_seeds();
                let Some(game) = &mut self.game else {
                    return invalid("no match is being played");
                };
                game.set_client_seeds(seeds);
                let events = game.next_round().map_err(ApplyError::Rule)?;
                self.stage = Stage::Playing;
                self.votes.fill(false);
                return Ok(events);
            }
            Record::SeedDrawn { seed } => self.next_seed = Some(*seed),
            Record::ToLobby => {
                if !matches!(self.stage, Stage::MatchOver | Stage::Lobby) {
                    return invalid("the match is not over");
                }
                self.game = None;
                self.stage = Stage::Lobby;
                self.votes.fill(false);
                for seat in &mut self.seats {
                    if let Seat::Human(human) = seat {
                        human.stand_in = None;
                        human.clear_absence();
                    }
                }
            }
            Record::Said { seat, text } => {
                let Some(human) = self.human(*seat) else {
                    return invalid("no person sits there");
                };
                let line = ChatLine {
                    seat: Some(*seat),
                    name: human.name.clone(),
                    text: text.clone(),
                };
                if self.chat.len() == CHAT_KEPT_LINES {
                    self.chat.pop_front();
                }
                self.chat.push_back(line);
            }
            Record::Muted { seat, muted } => {
                let Some(Seat::Human(human)) = self.seats.get_mut(*seat) else {
                    return invalid("no person sits there");
                };
                human.muted = *muted;
            }
            Record::ClientSeed { seat, seed } => {
                let Some(Seat::Human(human)) = self.seats.get_mut(*seat) else {
                    return invalid("no person sits there");
                };
                human.client_seed = Some(*seed);
            }
        }
        Ok(Vec::new())
    }

    /// The client seeds in force, in seat order (`None` for bots, empty seats and people who
    /// sent none).
    fn client_seeds(&self) -> Vec<Option<ClientSeed>> {
        self.seats
            .iter()
            .map(|seat| match seat {
                Seat::Human(human) => human.client_seed,
                Seat::Empty | Seat::Bot(_) => None,
            })
            .collect()
    }

    /// Takes a person's client seed, if they sent one and it is new.
    fn take_client_seed(&mut self, seat: usize, seed: Option<ClientSeed>) -> Result<(), Refusal> {
        let Some(seed) = seed else { return Ok(()) };
        if self
            .human(seat)
            .is_some_and(|h| h.client_seed == Some(seed))
        {
            return Ok(());
        }
        self.commit(Record::ClientSeed { seat, seed })
            .map(drop)
            .map_err(|e| self.internal(e))
    }

    /// The room's durable state without its match: what the log restarts from at a rematch.
    fn snapshot_now(&self) -> Snapshot {
        Snapshot {
            format: FORMAT,
            settings: self.settings.clone(),
            seats: self
                .seats
                .iter()
                .map(|seat| match seat {
                    Seat::Empty => SeatRecord::Empty,
                    Seat::Human(human) => SeatRecord::Human {
                        name: human.name.clone(),
                        token_hash: human.token_hash.clone(),
                        client_seed: human.client_seed,
                        muted: human.muted,
                    },
                    Seat::Bot(bot) => SeatRecord::Bot {
                        difficulty: bot.difficulty,
                    },
                })
                .collect(),
            host: self.host_token.clone(),
            removed: self
                .removed
                .iter()
                .map(|r| RemovedRecord {
                    name: r.name.clone(),
                    token_hash: r.token_hash.clone(),
                })
                .collect(),
            matches: self.matches,
            next_seed: self.next_seed,
            chat: self.chat.iter().cloned().collect(),
        }
    }

    /// Takes the durable state from a snapshot.
    fn load_snapshot(&mut self, snapshot: Snapshot) {
        self.votes = vec![false; snapshot.seats.len()];
        self.seats = snapshot
            .seats
            .into_iter()
            .map(|seat| match seat {
                SeatRecord::Empty => Seat::Empty,
                SeatRecord::Human {
                    name,
                    token_hash,
                    client_seed,
                    muted,
                } => Seat::Human(Human {
                    client_seed,
                    muted,
                    ..Human::new(name, token_hash)
                }),
                SeatRecord::Bot { difficulty } => Seat::Bot(BotSeat {
                    difficulty,
                    bot: None,
                }),
            })
            .collect();
        self.settings = snapshot.settings;
        self.host_token = snapshot.host;
        self.matches = snapshot.matches;
        self.next_seed = snapshot.next_seed;
        self.chat = snapshot.chat.into();
        self.removed = snapshot
            .removed
            .into_iter()
            .map(|r| Removed {
                name: r.name,
                token_hash: r.token_hash,
            })
            .collect();
    }

    /// New bots for every bot seat, told the current round's public log (after a replay).
    fn rebuild_bots(&mut self) {
        let Some(game) = &self.game else {
            return;
        };
        for seat in &mut self.seats {
            if let Seat::Bot(bot) = seat {
                bot.bot = Some(bot_knowing(bot.difficulty, game));
            }
        }
    }

    /// A durable change the live path could not make: the room's own state broke a rule it
    /// checked a moment before. Logged, and answered as an internal error.
    fn internal(&self, e: ApplyError) -> Refusal {
        Refusal::internal(
            &format!("room {}: a checked change did not apply", self.code),
            e,
        )
    }

    // ----- Joining and leaving -----

    fn join(
        &mut self,
        conn: ConnId,
        hello: Hello,
        token_only: bool,
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
        let name = names::clean_name(&hello.name).map_err(|e| Refusal::BadName(e.to_string()))?;
        let claims_host = match &hello.host_secret {
            Some(secret) if hash_secret(secret) == self.host_secret_hash => true,
            Some(_) => {
                return Err(Refusal::BadHostSecret);
            }
            None => false,
        };
        let (seat, token) = if let Some(hash) = &token_hash {
            let seat = self.seat_of_token(hash).ok_or_else(|| Refusal::BadToken)?;
            // A second connection with the token replaces the first.
            if let Seat::Human(human) = &mut self.seats[seat] {
                if let Some(old) = human.conn.replace(conn) {
                    if self.clients.remove(&old).is_some() {
                        self.effects.push(Effect::Close {
                            to: old,
                            code: CLOSE_REPLACED,
                            reason: "another connection took this seat",
                        });
                    }
                }
            }
            (Some(seat), hello.token.clone())
        } else if hello.spectator {
            (None, None)
        } else {
            let free = (self.stage == Stage::Lobby)
                .then(|| self.seats.iter().position(|s| matches!(s, Seat::Empty)))
                .flatten()
                .ok_or_else(|| Refusal::RoomFull)?;
            self.require_unique_name(&name)?;
            let token = entropy.token();
            self.commit(Record::Seated {
                seat: free,
                name: name.clone(),
                token_hash: hash_secret(&token),
            })
            .map_err(|e| self.internal(e))?;
            if let Seat::Human(human) = &mut self.seats[free] {
                human.conn = Some(conn);
            }
            (Some(free), Some(token))
        };
        if let (true, Some(seat)) = (claims_host, seat) {
            let is_host = self.human(seat).map(|h| &h.token_hash) == self.host_token.as_ref();
            if !is_host {
                self.commit(Record::HostIs { seat })
                    .map_err(|e| self.internal(e))?;
            }
        }
        if let Some(seat) = seat {
            self.take_client_seed(seat, hello.client_seed)?;
        }
        info!(room = %self.code, conn, ?seat, "joined");
        self.clients.insert(conn, Client { seat, name });
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
            let history = ServerMessage::history(game, &self.stand_in_marks);
            let result = match_result(game, self.matches).map(ServerMessage::MatchResult);
            self.send_to(conn, &history);
            self.send_state(conn);
            // Arriving after the match: its standings and seeds too.
            if let Some(result) = result {
                self.send_to(conn, &result);
            }
        }
        Ok(())
    }

    /// The seat whose person holds the token with this hash.
    fn seat_of_token(&self, token_hash: &str) -> Option<usize> {
        self.seats
            .iter()
            .position(|s| matches!(s, Seat::Human(h) if h.token_hash == token_hash))
    }

    /// Whether the person in `seat` is the host.
    fn is_host(&self, seat: usize) -> bool {
        self.human(seat)
            .is_some_and(|h| Some(&h.token_hash) == self.host_token.as_ref())
    }

    /// Refuses a name another seated person already goes by.
    fn require_unique_name(&self, name: &str) -> Result<(), Refusal> {
        let name = names::folded(name);
        let taken = self
            .seats
            .iter()
            .any(|s| matches!(s, Seat::Human(h) if names::folded(&h.name) == name));
        if taken {
            return Err(Refusal::NameTaken);
        }
        Ok(())
    }

    /// The room's lifetime without a match has passed: every client is told and closed.
    fn expire(&mut self) {
        let bye = ServerMessage::bye(
            codes::ROOM_EXPIRED,
            "this room's match never started, and the room has closed; create a new one",
        );
        let conns: Vec<ConnId> = self.clients.keys().copied().collect();
        for conn in conns {
            self.send_to(conn, &bye);
            self.effects.push(Effect::Close {
                to: conn,
                code: CLOSE_ROOM_EXPIRED,
                reason: "room expired",
            });
        }
        self.clients.clear();
        self.ending = Some(Ending::LobbyExpired);
    }

    fn remove_client(&mut self, conn: ConnId, entropy: &mut dyn Entropy) {
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
        self.advance_if_all_voted(entropy);
    }

    // ----- Client messages: permission, then the rules -----

    fn on_message(
        &mut self,
        conn: ConnId,
        message: ClientMessage,
        entropy: &mut dyn Entropy,
    ) -> Result<(), Refusal> {
        let Some(client) = self.clients.get(&conn) else {
            return Ok(());
        };
        let seat = client.seat;
        match message {
            ClientMessage::Hello(_) => Err(Refusal::AlreadyJoined),
            ClientMessage::TakeSeat { seat: to } => self.take_seat(conn, to, entropy),
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
                    return Err(Refusal::SeatTaken(at));
                }
                let difficulty = difficulty.unwrap_or(self.settings.difficulty);
                self.commit(Record::BotAdded {
                    seat: at,
                    difficulty,
                })
                .map_err(|e| self.internal(e))?;
                self.broadcast_room();
                Ok(())
            }
            ClientMessage::ClearSeat { seat: at } => {
                self.require_host(seat)?;
                self.require_seat(at)?;
                if seat == Some(at) {
                    return Err(Refusal::OwnSeat);
                }
                let person = match &self.seats[at] {
                    Seat::Human(human) => Some((human.conn, human.name.clone())),
                    _ => None,
                };
                if self.stage != Stage::Lobby && person.is_none() {
                    return Err(Refusal::NotAPerson(at));
                }
                self.commit(Record::Cleared { seat: at })
                    .map_err(|e| self.internal(e))?;
                if let Some((conn, name)) = person {
                    self.tell_removed(conn);
                    info!(room = %self.code, %name, "removed by the host");
                    if self.stage != Stage::Lobby {
                        self.broadcast(&ServerMessage::Notice(Notice::Removed { seat: at, name }));
                    }
                }
                self.broadcast_room();
                Ok(())
            }
            ClientMessage::HandToBot { seat: at } => {
                self.require_host(seat)?;
                if self.game.is_none() {
                    return Err(Refusal::NotStarted);
                }
                self.require_seat(at)?;
                if seat == Some(at) {
                    return Err(Refusal::OwnSeat);
                }
                let difficulty = self.settings.difficulty;
                let Some(Seat::Human(human)) = self.seats.get_mut(at) else {
                    return Err(Refusal::NotAPerson(at));
                };
                if human.away {
                    return Err(Refusal::AlreadyStandIn(at));
                }
                human.away = true;
                human.timed_out_turn = false;
                if human.stand_in.is_none() {
                    if let Some(game) = &self.game {
                        human.stand_in = Some(bot_knowing(difficulty, game));
                    }
                }
                let name = human.name.clone();
                info!(room = %self.code, seat = at, "handed to a bot by the host");
                self.broadcast(&ServerMessage::Notice(Notice::HandedToBot {
                    seat: at,
                    name,
                }));
                self.broadcast_room();
                Ok(())
            }
            ClientMessage::Back => {
                let at = self.require_seated(seat)?;
                let Some(Seat::Human(human)) = self.seats.get_mut(at) else {
                    return Err(Refusal::NotSeated);
                };
                if human.stand_in.is_none() {
                    return Err(Refusal::NotAway);
                }
                human.away = false;
                human.timed_out_turn = false;
                human.timeouts = 0;
                let name = human.name.clone();
                info!(room = %self.code, seat = at, "back");
                self.broadcast(&ServerMessage::Notice(Notice::Back { seat: at, name }));
                // The seat comes back when `settle` finds the stand-in's turn done.
                Ok(())
            }
            ClientMessage::Readmit { removed } => {
                self.require_host(seat)?;
                if removed >= self.removed.len() {
                    return Err(Refusal::NotRemoved(removed));
                }
                let name = self.removed[removed].name.clone();
                self.commit(Record::Readmitted { index: removed })
                    .map_err(|e| self.internal(e))?;
                info!(room = %self.code, %name, "let back in");
                self.broadcast_room();
                Ok(())
            }
            ClientMessage::Start => {
                self.require_host(seat)?;
                self.require_lobby()?;
                self.begin_match(entropy)
            }
            ClientMessage::Call => self.play(seat, Action::Call, entropy),
            ClientMessage::Draw { from, card } => {
                let from = draw_source(from, card).map_err(|e| Refusal::BadBody(e.to_owned()))?;
                self.play(seat, Action::Draw { from }, entropy)
            }
            ClientMessage::Throw { cards } => self.play(seat, Action::Throw { cards }, entropy),
            ClientMessage::Ready { client_seed } => {
                let seat = self.require_seated(seat)?;
                if self.stage != Stage::BetweenRounds {
                    return Err(Refusal::NotBetweenRounds);
                }
                self.take_client_seed(seat, client_seed)?;
                self.vote(seat, entropy)
            }
            ClientMessage::Chat { text } => {
                let seat = self.require_seated(seat)?;
                self.say(seat, &text)
            }
            ClientMessage::React { reaction } => {
                let name = match seat.and_then(|s| self.human(s)) {
                    Some(human) => human.name.clone(),
                    None => client.name.clone(),
                };
                self.broadcast(&ServerMessage::Reaction {
                    seat,
                    name,
                    reaction,
                });
                Ok(())
            }
            ClientMessage::Mute { seat: at, muted } => {
                self.require_host(seat)?;
                self.require_seat(at)?;
                if seat == Some(at) {
                    return Err(Refusal::OwnSeat);
                }
                if self.human(at).is_none() {
                    return Err(Refusal::NotAPerson(at));
                }
                self.commit(Record::Muted { seat: at, muted })
                    .map_err(|e| self.internal(e))?;
                self.broadcast_room();
                Ok(())
            }
            ClientMessage::ClientSeed { client_seed } => {
                let seat = self.require_seated(seat)?;
                self.take_client_seed(seat, Some(client_seed))
            }
            ClientMessage::ToLobby => {
                self.require_host(seat)?;
                if self.stage != Stage::MatchOver {
                    return Err(Refusal::MatchNotOver);
                }
                self.commit(Record::ToLobby).map_err(|e| self.internal(e))?;
                // The log restarts from the room in its lobby.
                self.snapshot = Some(self.snapshot_now());
                self.lobby_due = self.now + self.timing.lobby_ttl;
                info!(room = %self.code, "back to the lobby");
                self.broadcast_room();
                Ok(())
            }
            ClientMessage::Rematch { client_seed } => {
                let seat = self.require_seated(seat)?;
                if self.stage != Stage::MatchOver {
                    return Err(Refusal::MatchNotOver);
                }
                self.take_client_seed(seat, client_seed)?;
                self.vote(seat, entropy)
            }
        }
    }

    /// Tells a removed person's connection why it closes, and lets go of it.
    fn tell_removed(&mut self, conn: Option<ConnId>) {
        let Some(conn) = conn.filter(|c| self.clients.contains_key(c)) else {
            return;
        };
        self.send_to(
            conn,
            &ServerMessage::bye(codes::REMOVED, "the host removed you from this room"),
        );
        self.clients.remove(&conn);
        self.effects.push(Effect::Close {
            to: conn,
            code: CLOSE_REMOVED,
            reason: "removed by the host",
        });
    }

    fn require_seated(&self, seat: Option<usize>) -> Result<usize, Refusal> {
        seat.ok_or_else(|| Refusal::NotSeated)
    }

    fn require_host(&self, seat: Option<usize>) -> Result<(), Refusal> {
        if seat.is_some_and(|s| self.is_host(s)) {
            Ok(())
        } else {
            Err(Refusal::NotHost)
        }
    }

    fn require_lobby(&self) -> Result<(), Refusal> {
        if self.stage == Stage::Lobby {
            Ok(())
        } else {
            Err(Refusal::AlreadyStarted)
        }
    }

    fn require_seat(&self, seat: usize) -> Result<(), Refusal> {
        if seat < self.seats.len() {
            Ok(())
        } else {
            Err(Refusal::NoSuchSeat(seat))
        }
    }

    fn human(&self, seat: usize) -> Option<&Human> {
        match self.seats.get(seat) {
            Some(Seat::Human(human)) => Some(human),
            _ => None,
        }
    }

    fn take_seat(
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
                self.require_unique_name(&name)?;
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

    fn change_settings(&mut self, settings: Settings) -> Result<(), Refusal> {
        settings.validate().map_err(Refusal::Settings)?;
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

    // ----- The match -----

    /// Begins a match (the first, or a rematch): draws its seed, deals, tells everyone.
    fn begin_match(&mut self, entropy: &mut dyn Entropy) -> Result<(), Refusal> {
        let seed = match (&self.decks, self.next_seed) {
            (Some(_), _) => None,
            (None, Some(seed)) => Some(seed),
            // Only if no seed could be drawn when the last match ended.
            (None, None) => Some(entropy.seed().map_err(|e| {
                Refusal::internal(
                    &format!("room {}: no randomness for a shuffle", self.code),
                    e,
                )
            })?),
        };
        if self.game.is_some() {
            // A rematch: the log restarts from the room as it stands.
            self.snapshot = Some(self.snapshot_now());
        }
        let before = self.stage;
        let events = match self.commit(Record::MatchBegun { seed }) {
            Ok(events) => events,
            Err(e) => return Err(self.internal(e)),
        };
        info!(room = %self.code, ?before, "match started");
        self.broadcast_room();
        self.after_change(events, Stage::Playing, None, entropy);
        Ok(())
    }

    fn play(
        &mut self,
        seat: Option<usize>,
        action: Action,
        entropy: &mut dyn Entropy,
    ) -> Result<(), Refusal> {
        let seat = self.require_seated(seat)?;
        if self.game.is_none() {
            return Err(Refusal::NotStarted);
        }
        let covered = self.human(seat).is_some_and(|h| h.stand_in.is_some());
        if covered && self.stand_in_mid_turn(seat) {
            return Err(Refusal::StandInPlaying);
        }
        let before = self.stage;
        let events = self
            .commit(Record::Acted { seat, action })
            .map_err(|e| match e {
                ApplyError::Rule(e) => Refusal::Rule(e),
                other => self.internal(other),
            })?;
        // A move of their own: they are here, whoever was covering for them.
        if let Some(Seat::Human(human)) = self.seats.get_mut(seat) {
            human.timeouts = 0;
            human.away = false;
            human.timed_out_turn = false;
            if covered {
                human.stand_in = None;
                let summary = std::mem::take(&mut human.while_away);
                if let Some(conn) = human.conn {
                    self.while_away.push((conn, summary));
                }
                self.broadcast_room();
            }
        }
        self.after_change(events, before, None, entropy);
        Ok(())
    }

    /// Whether a stand-in has begun the turn being played in `seat` (drawn or thrown), so that
    /// it must finish it.
    fn stand_in_mid_turn(&self, seat: usize) -> bool {
        self.turn_being_played() == Some(seat)
            && self
                .game
                .as_ref()
                .is_some_and(|g| matches!(g.phase(), Phase::Throw | Phase::Draw))
    }

    /// After the game changed: tell everyone, in one `state` each, the events and their new
    /// views (the shared part serialised once); at the match's end its result; move on if
    /// everyone has already agreed; let the next bot play.
    fn after_change(
        &mut self,
        events: Vec<Event>,
        before: Stage,
        stand_in: Option<usize>,
        entropy: &mut dyn Entropy,
    ) {
        let mut match_over = false;
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
            match_over |= matches!(event, Event::MatchEnded { .. });
        }
        if events.iter().any(|e| matches!(e, Event::Dealt { .. })) {
            self.stand_in_marks.clear();
        }
        if let (Some(_), Some(game)) = (stand_in, &self.game) {
            let len = game.log().len();
            self.stand_in_marks
                .extend(len.saturating_sub(events.len())..len);
        }
        // A returning person's seat is theirs before the turn's clock is set and sent.
        if self.hand_back() {
            self.broadcast_room();
        }
        self.sync_clock(&events);
        let clock = self.clock();
        if let Some(game) = &self.game {
            let frames = StateFrames::new(game, &events, stand_in, clock);
            for (conn, client) in &self.clients {
                self.effects.push(Effect::Send {
                    to: *conn,
                    text: frames.for_seat(game, client.seat).into(),
                });
            }
        }
        self.tell_while_away();
        if match_over {
            let number = self.matches;
            if let Some(result) = self.game.as_ref().and_then(|g| match_result(g, number)) {
                self.broadcast(&ServerMessage::MatchResult(result));
            }
            if let Some(kept) = self.kept_match() {
                self.effects.push(Effect::KeepMatch(Box::new(kept)));
            }
            self.metrics.matches_finished.increment(1);
            info!(room = %self.code, "match over");
            self.draw_next_seed(entropy);
        }
        if self.stage != before {
            self.broadcast_room();
            self.advance_if_all_voted(entropy);
        }
    }

    /// A seated person's chat line: checked, logged, then sent to everyone in the room.
    fn say(&mut self, seat: usize, text: &str) -> Result<(), Refusal> {
        if self.human(seat).is_some_and(|h| h.muted) {
            return Err(Refusal::Muted);
        }
        let text = clean_chat(text).ok_or_else(|| Refusal::BadChat)?;
        self.commit(Record::Said { seat, text })
            .map_err(|e| self.internal(e))?;
        if let Some(line) = self.chat.back().cloned() {
            self.broadcast(&ServerMessage::Chat { line });
        }
        Ok(())
    }

    /// Draws the next match's seed as a match ends, so that its commitment is public before any
    /// client seed for it counts. Without randomness the rematch draws one at its start.
    fn draw_next_seed(&mut self, entropy: &mut dyn Entropy) {
        if self.decks.is_some() {
            return;
        }
        match entropy.seed() {
            Ok(seed) => {
                if let Err(e) = self.commit(Record::SeedDrawn { seed }) {
                    warn!(room = %self.code, error = %e, "could not keep the next match's seed");
                }
            }
            Err(e) => tracing::error!(room = %self.code, error = %e, "no randomness for a seed"),
        }
    }

    /// The finished match's hand history, with the seats' names, for the store to keep; `None`
    /// before the match is over and for fixed test decks (nothing to verify).
    pub fn kept_match(&self) -> Option<KeptMatch> {
        let game = self.game.as_ref()?;
        let mut history = game.hand_history()?;
        let commitment = history.commitment?.to_string();
        history.players = self
            .seat_infos()
            .into_iter()
            .map(|s| s.name.unwrap_or_default())
            .collect();
        let token_hashes = self
            .seats
            .iter()
            .filter_map(|seat| match seat {
                Seat::Human(human) => Some(human.token_hash.clone()),
                Seat::Empty | Seat::Bot(_) => None,
            })
            .collect();
        Some(KeptMatch {
            code: self.code.clone(),
            number: self.matches,
            commitment,
            token_hashes,
            history: serde_json::to_string(&history).expect("a hand history serialises"),
        })
    }

    /// Records a seat's `ready` (between rounds) or `rematch` (after the match).
    fn vote(&mut self, seat: usize, entropy: &mut dyn Entropy) -> Result<(), Refusal> {
        if !self.votes[seat] {
            self.commit(Record::Voted { seat })
                .map_err(|e| self.internal(e))?;
            self.broadcast_room();
        }
        self.advance_if_all_voted(entropy);
        Ok(())
    }

    /// Whether a seat has agreed to go on: bots always have; a person who is away is not waited
    /// for.
    fn agreed(&self, seat: usize) -> bool {
        match &self.seats[seat] {
            Seat::Human(human) => self.votes[seat] || human.conn.is_none(),
            Seat::Bot(_) | Seat::Empty => true,
        }
    }

    fn advance_if_all_voted(&mut self, entropy: &mut dyn Entropy) {
        if !matches!(self.stage, Stage::BetweenRounds | Stage::MatchOver) {
            return;
        }
        if !(0..self.seats.len()).all(|s| self.agreed(s)) {
            return;
        }
        match self.stage {
            Stage::BetweenRounds => match self.commit(Record::NextRound) {
                Ok(events) => {
                    self.broadcast_room();
                    self.after_change(events, Stage::Playing, None, entropy);
                }
                Err(e) => warn!(room = %self.code, error = %e, "could not deal"),
            },
            Stage::MatchOver => {
                // Only when somebody asked: a room whose people are all away waits for them.
                if !self.votes.iter().any(|v| *v) {
                    return;
                }
                info!(room = %self.code, "rematch");
                if let Err(e) = self.begin_match(entropy) {
                    warn!(room = %self.code, error = %e, "no rematch");
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
        human.stand_in = Some(bot_knowing(difficulty, game));
        self.metrics.bot_takeovers.increment(1);
        info!(room = %self.code, seat, "a bot plays for an away person");
        self.broadcast_room();
    }

    /// A connected person's turn timer ran out: a stand-in plays this turn, and after two in a
    /// row every turn until they act again. Everyone hears of it. (A person who has gone plays
    /// by the usual takeover, without counting.)
    fn time_out(&mut self, seat: usize) {
        let difficulty = self.settings.difficulty;
        let Some(game) = &self.game else {
            return;
        };
        let Seat::Human(human) = &mut self.seats[seat] else {
            return;
        };
        if human.stand_in.is_some() {
            return;
        }
        if human.conn.is_none() {
            self.take_over(seat);
            return;
        }
        human.timeouts = human.timeouts.saturating_add(1);
        human.away = human.timeouts >= 2;
        human.timed_out_turn = !human.away;
        human.stand_in = Some(bot_knowing(difficulty, game));
        let notice = Notice::TimedOut {
            seat,
            name: human.name.clone(),
            away: human.away,
        };
        self.metrics.bot_takeovers.increment(1);
        info!(room = %self.code, seat, "a turn ran out of time");
        self.broadcast(&ServerMessage::Notice(notice));
        self.broadcast_room();
    }

    /// The bot whose turn it is chooses; its action is committed like anyone's.
    fn bot_step(&mut self, entropy: &mut dyn Entropy) {
        let Some(seat) = self.bot_to_play() else {
            return;
        };
        let Some(game) = &self.game else {
            return;
        };
        let view = game.view(seat);
        let legal = game.legal_actions(seat);
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
        let before = self.stage;
        let played = match chosen {
            Ok(action) => match self.commit(Record::Acted {
                seat,
                action: action.clone(),
            }) {
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
                let Some(first) = legal.into_iter().next() else {
                    return;
                };
                match self.commit(Record::Acted {
                    seat,
                    action: first,
                }) {
                    Ok(events) => events,
                    Err(e) => {
                        warn!(room = %self.code, seat, error = %e, "a legal action failed");
                        return;
                    }
                }
            }
        };
        let stand_in = self.note_stand_in_move(seat, &events);
        self.after_change(events, before, stand_in, entropy);
    }

    /// When `seat` is a person's, adds a stand-in's move to what they will be told and returns
    /// the seat (the events are the stand-in's); `None` for a bot's own seat.
    fn note_stand_in_move(&mut self, seat: usize, events: &[Event]) -> Option<usize> {
        let next_turn = self.game.as_ref().map(Game::turn);
        let Seat::Human(human) = &mut self.seats[seat] else {
            return None;
        };
        let summary = &mut human.while_away;
        let mut round_ended = false;
        for event in events {
            match event {
                Event::RoundEnded { .. } => round_ended = true,
                Event::MatchEnded { .. } | Event::Dealt { .. } => {}
                _ => summary.events.push(event.clone()),
            }
        }
        if round_ended || next_turn != Some(seat) {
            summary.turns += 1;
        }
        summary.rounds_ended += u32::from(round_ended);
        Some(seat)
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
        if self.clients.contains_key(&conn) {
            self.effects.push(Effect::Send {
                to: conn,
                text: message.to_json().into(),
            });
        }
    }

    fn broadcast(&mut self, message: &ServerMessage) {
        let text: Utf8Bytes = message.to_json().into();
        for conn in self.clients.keys() {
            self.effects.push(Effect::Send {
                to: *conn,
                text: text.clone(),
            });
        }
    }

    fn send_state(&mut self, conn: ConnId) {
        let (Some(game), Some(client)) = (&self.game, self.clients.get(&conn)) else {
            return;
        };
        let state = ServerMessage::state(game, client.seat, self.clock());
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
                        stand_in: human.stand_in.as_ref().map(|b| b.difficulty()),
                        muted: human.muted,
                        away: human.away,
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

    fn host_seat(&self) -> Option<usize> {
        (0..self.seats.len()).find(|&s| self.is_host(s))
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
            fairness: self.fairness(),
        }
    }

    /// The commitment the room shows: the match being played's, or (in the lobby and after a
    /// match) the next one's.
    fn fairness(&self) -> Option<Fairness> {
        let playing = self.game.as_ref().filter(|g| !g.is_over());
        let (number, commitment) = match (playing, self.next_seed) {
            (Some(game), _) => (self.matches, game.commitment()?),
            (None, Some(seed)) => (self.matches + 1, dhumbal_engine::fair::commitment(&seed)),
            (None, None) => return None,
        };
        Some(Fairness {
            match_number: number,
            commitment: commitment.to_string(),
        })
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

    /// What someone about to join needs to know.
    pub fn summary(&self) -> RoomSummary {
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

    /// The room's durable state in a comparable form (for the replay tests): settings, seats,
    /// host, removed people, stage, votes and the game.
    #[cfg(test)]
    fn durable(&self) -> (Snapshot, Stage, Vec<bool>, Option<Game>) {
        (
            self.snapshot_now(),
            self.stage,
            self.votes.clone(),
            self.game.clone(),
        )
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

/// A new bot of `difficulty` that has seen the current round's public log.
fn bot_knowing(difficulty: Difficulty, game: &Game) -> Box<dyn Bot> {
    let mut bot = new_bot(difficulty, rand::random());
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
mod tests {
    //! The core without a runtime: inputs in, effects and records out, and a replay of the
    //! records that gives the same room.

    use super::*;
    use crate::room::testing::{TIMING, setup};
    use dhumbal_engine::{Preset, Rounds};
    use rand::rngs::StdRng;
    use rand::{Rng, SeedableRng};

    /// Randomness from a seed, for tests that replay.
    struct TestEntropy(StdRng);

    impl Entropy for TestEntropy {
        fn seed(&mut self) -> Result<[u8; 32], String> {
            Ok(self.0.random())
        }

        fn token(&mut self) -> String {
            format!("token-{:x}", self.0.random::<u64>())
        }
    }

    fn hello(name: &str, token: Option<String>, host: bool) -> Hello {
        Hello {
            protocol: PROTOCOL_VERSION,
            room: "TESTROOM23".into(),
            name: name.into(),
            token,
            spectator: false,
            host_secret: host.then(|| "secret".to_owned()),
            client_seed: Some(Hex32([name.len() as u8; 32])),
        }
    }

    /// A room being played, with its log as the actor would write it.
    struct Played {
        setup: Setup,
        core: RoomCore,
        entropy: TestEntropy,
        now: Instant,
        log: Vec<(u64, Vec<Record>)>,
        snapshot: Option<(u64, Snapshot)>,
    }

    impl Played {
        fn new(settings: Settings, seed: u64) -> Played {
            let now = Instant::now();
            let setup = setup("TESTROOM23", settings);
            Played {
                core: RoomCore::new(&setup, TIMING, Arc::default(), now),
                setup,
                entropy: TestEntropy(StdRng::seed_from_u64(seed)),
                now,
                log: Vec::new(),
                snapshot: None,
            }
        }

        /// What the actor does after every input: settle, log the records, take the effects.
        fn step(&mut self) -> Vec<Effect> {
            self.core.settle(self.now);
            let records = self.core.take_records();
            if !records.is_empty() {
                let seq = self.log.last().map_or(0, |(s, _)| *s) + 1;
                if let Some(snapshot) = self.core.take_snapshot() {
                    self.snapshot = Some((seq - 1, snapshot));
                    self.log.clear();
                }
                self.log.push((seq, records));
            }
            self.core.take_effects()
        }

        fn input(&mut self, input: Input) -> (bool, Vec<Effect>) {
            let joined = self.core.handle(input, self.now, &mut self.entropy);
            (joined, self.step())
        }

        fn message(&mut self, conn: ConnId, message: ClientMessage) -> Vec<Effect> {
            self.input(Input::Message {
                conn,
                id: None,
                message,
            })
            .1
        }

        /// Lets time pass until the next timer and fires it.
        fn tick(&mut self) -> Vec<Effect> {
            if let Some(due) = self.core.next_due() {
                self.now = self.now.max(due);
            }
            self.core.wake(self.now, &mut self.entropy);
            self.step()
        }

        fn restored(&self) -> RoomCore {
            RoomCore::restore(
                &self.setup,
                self.snapshot.as_ref().map(|(_, s)| s.clone()),
                self.log.clone(),
                TIMING,
                Arc::default(),
                self.now,
            )
            .expect("the log replays")
        }
    }

    /// The errors among the effects for `conn`.
    fn errors(effects: &[Effect], conn: ConnId) -> Vec<String> {
        effects
            .iter()
            .filter_map(|e| match e {
                Effect::Send { to, text } if *to == conn => {
                    let value: serde_json::Value = serde_json::from_str(text.as_str()).ok()?;
                    (value["type"] == "error").then(|| value["code"].as_str().unwrap().to_owned())
                }
                _ => None,
            })
            .collect()
    }

    fn join(played: &mut Played, conn: ConnId, hello: Hello) -> (bool, Vec<Effect>) {
        played.input(Input::Join {
            conn,
            hello,
            id: None,
            token_only: false,
        })
    }

    #[test]
    fn a_refused_input_changes_nothing_and_logs_nothing() {
        let mut played = Played::new(Preset::Standard.settings(), 1);
        assert!(join(&mut played, 1, hello("Asha", None, true)).0);
        let entries = played.log.len();
        let before = played.core.durable();
        // Not the host, not started, no such seat: each refused, none logged.
        assert!(join(&mut played, 2, hello("Bina", None, false)).0);
        let entries_after_join = played.log.len();
        assert_eq!(entries_after_join, entries + 1);
        let before_refusals = played.core.durable();
        for message in [
            ClientMessage::Start,
            ClientMessage::Call,
            ClientMessage::TakeSeat { seat: 9 },
            ClientMessage::Readmit { removed: 0 },
        ] {
            let effects = played.message(2, message);
            assert_eq!(errors(&effects, 2).len(), 1, "{effects:?}");
        }
        assert_eq!(played.log.len(), entries_after_join);
        assert_eq!(played.core.durable(), before_refusals);
        assert_ne!(before, before_refusals);
    }

    #[test]
    fn nothing_is_sent_to_anyone_but_through_effects() {
        let mut played = Played::new(Preset::Standard.settings(), 2);
        let (joined, effects) = join(&mut played, 1, hello("Asha", None, true));
        assert!(joined);
        // welcome, then room: both for the joining connection, none sent yet.
        assert!(
            effects
                .iter()
                .all(|e| matches!(e, Effect::Send { to: 1, .. })),
            "{effects:?}"
        );
        assert_eq!(effects.len(), 2);
        // Its records hold the token's hash, never the token.
        let Some((_, records)) = played.log.last() else {
            panic!("nothing logged");
        };
        let welcome: serde_json::Value = match &effects[0] {
            Effect::Send { text, .. } => serde_json::from_str(text.as_str()).unwrap(),
            Effect::Close { .. } | Effect::KeepMatch(_) => panic!("not a message"),
        };
        let token = welcome["token"].as_str().unwrap();
        let logged = serde_json::to_string(records).unwrap();
        assert!(!logged.contains(token), "{logged}");
        assert!(logged.contains(&hash_secret(token)), "{logged}");
    }

    /// Plays a room to its end (or `steps` inputs) with people who join, sit, leave, come back,
    /// act at random and vote, and bots; after every input the replay of the log so far equals
    /// the room.
    /// Returns whether a rematch cut the log short along the way.
    fn replay_equals_the_room(settings: Settings, seed: u64, steps: usize) -> bool {
        let mut played = Played::new(settings, seed);
        let mut rng = StdRng::seed_from_u64(seed ^ 0x5eed);
        let (_, effects) = join(&mut played, 1, hello("Asha", None, true));
        let token = effects.iter().find_map(|e| match e {
            Effect::Send { text, .. } => serde_json::from_str::<serde_json::Value>(text.as_str())
                .ok()?["token"]
                .as_str()
                .map(str::to_owned),
            Effect::Close { .. } | Effect::KeepMatch(_) => None,
        });
        join(&mut played, 2, hello("Bina", None, false));
        played.message(
            1,
            ClientMessage::AddBot {
                seat: 2,
                difficulty: Some(Difficulty::Easy),
            },
        );
        played.message(1, ClientMessage::Start);
        let mut next_conn = 10;
        let mut asha = Some(1);
        for _ in 0..steps {
            // Now and then Asha drops and comes back with her token.
            if rng.random_ratio(1, 20) {
                if let Some(conn) = asha.take() {
                    played.input(Input::Leave { conn });
                } else {
                    next_conn += 1;
                    let (joined, _) =
                        join(&mut played, next_conn, hello("Asha", token.clone(), true));
                    assert!(joined);
                    asha = Some(next_conn);
                }
            }
            // Now and then Bina says something, and the host mutes or unmutes her.
            if rng.random_ratio(1, 10) {
                played.message(
                    2,
                    ClientMessage::Chat {
                        text: format!("line {}", rng.random::<u16>()),
                    },
                );
            }
            if let (Some(conn), true) = (asha, rng.random_ratio(1, 30)) {
                let muted = rng.random();
                played.message(conn, ClientMessage::Mute { seat: 1, muted });
            }
            let game = played.core.game.clone().expect("a match");
            let turn = game.turn();
            let phase = game.phase();
            let conn_of = |seat: usize| match seat {
                0 => asha,
                1 => Some(2),
                _ => None,
            };
            match phase {
                Phase::RoundOver => {
                    for seat in 0..2 {
                        if let Some(conn) = conn_of(seat) {
                            let client_seed = rng.random::<bool>().then(|| Hex32(rng.random()));
                            played.message(conn, ClientMessage::Ready { client_seed });
                        }
                    }
                    played.tick();
                }
                Phase::MatchOver => {
                    // Now and then the host takes the table back to the lobby and starts again
                    // from there (the log restarts at the lobby).
                    if let (Some(conn), true) = (asha, rng.random_ratio(1, 2)) {
                        played.message(conn, ClientMessage::ToLobby);
                        assert_eq!(played.core.stage, Stage::Lobby);
                        assert_eq!(played.restored().durable(), played.core.durable());
                        played.message(conn, ClientMessage::Start);
                        continue;
                    }
                    for seat in 0..2 {
                        if let Some(conn) = conn_of(seat) {
                            let client_seed = rng.random::<bool>().then(|| Hex32(rng.random()));
                            played.message(conn, ClientMessage::Rematch { client_seed });
                        }
                    }
                    played.tick();
                }
                _ => match conn_of(turn) {
                    Some(conn)
                        if played
                            .core
                            .human(turn)
                            .is_some_and(|h| h.stand_in.is_none()) =>
                    {
                        let legal = game.legal_actions(turn);
                        let action = legal[rng.random_range(0..legal.len())].clone();
                        let message = match action {
                            Action::Call => ClientMessage::Call,
                            Action::Throw { cards } => ClientMessage::Throw { cards },
                            Action::Draw { from } => match from {
                                dhumbal_engine::Source::Stock => ClientMessage::Draw {
                                    from: dhumbal_protocol::DrawFrom::Stock,
                                    card: None,
                                },
                                dhumbal_engine::Source::Pile => ClientMessage::Draw {
                                    from: dhumbal_protocol::DrawFrom::Pile,
                                    card: None,
                                },
                                dhumbal_engine::Source::PileCard(card) => ClientMessage::Draw {
                                    from: dhumbal_protocol::DrawFrom::Pile,
                                    card: Some(card),
                                },
                            },
                        };
                        let effects = played.message(conn, message);
                        assert!(errors(&effects, conn).is_empty(), "{effects:?}");
                    }
                    // A bot, or a stand-in for someone away.
                    _ => {
                        played.tick();
                    }
                },
            }
            assert_eq!(played.restored().durable(), played.core.durable());
        }
        played.snapshot.is_some()
    }

    #[test]
    fn the_log_replays_to_the_same_room_at_every_step() {
        let standard = Settings {
            players: 3,
            rounds: Rounds::Fixed(2),
            ..Preset::Standard.settings()
        };
        let household = Settings {
            players: 3,
            ..Preset::Household.settings()
        };
        let yaniv = Settings {
            players: 3,
            ..Preset::Yaniv.settings()
        };
        let mut rematches = 0;
        for (i, settings) in [standard, household, yaniv].into_iter().enumerate() {
            rematches += usize::from(replay_equals_the_room(settings, 40 + i as u64, 400));
        }
        assert!(
            rematches > 0,
            "no match ended in a rematch: the snapshot went untested"
        );
    }

    #[test]
    fn a_log_that_does_not_replay_names_its_input() {
        let played = Played::new(Preset::Standard.settings(), 3);
        let bad = vec![(
            1,
            vec![Record::Acted {
                seat: 0,
                action: Action::Call,
            }],
        )];
        let Err(why) = RoomCore::restore(
            &setup("TESTROOM23", Preset::Standard.settings()),
            None,
            bad,
            TIMING,
            Arc::default(),
            played.now,
        ) else {
            panic!("an action before the match replayed");
        };
        assert!(why.contains("input 1"), "{why}");
    }

    /// Everything sent to `conn` among the effects, as JSON.
    fn sent(effects: &[Effect], conn: ConnId) -> Vec<serde_json::Value> {
        effects
            .iter()
            .filter_map(|e| match e {
                Effect::Send { to, text } if *to == conn => {
                    serde_json::from_str(text.as_str()).ok()
                }
                _ => None,
            })
            .collect()
    }

    /// A two-seat standard table with a turn timer: Asha (the host, connection 1) and Bina
    /// (connection 2), started.
    fn timed_table(seed: u64) -> Played {
        let settings = Settings {
            players: 2,
            turn_timer: Some(15),
            ..Preset::Standard.settings()
        };
        let mut played = Played::new(settings, seed);
        assert!(join(&mut played, 1, hello("Asha", None, true)).0);
        assert!(join(&mut played, 2, hello("Bina", None, false)).0);
        let effects = played.message(1, ClientMessage::Start);
        assert!(errors(&effects, 1).is_empty(), "{effects:?}");
        played
    }

    /// Whose turn it is.
    fn turn(played: &Played) -> usize {
        played.core.game.as_ref().unwrap().turn()
    }

    /// Plays one legal move for `seat`'s person (the first legal action that is not a call).
    fn move_for(played: &mut Played, seat: usize) -> Vec<Effect> {
        let game = played.core.game.as_ref().unwrap();
        let action = game
            .legal_actions(seat)
            .into_iter()
            .find(|a| *a != Action::Call)
            .unwrap();
        let message = match action {
            Action::Draw { from } => ClientMessage::Draw {
                from: match from {
                    dhumbal_engine::Source::Stock => dhumbal_protocol::DrawFrom::Stock,
                    _ => dhumbal_protocol::DrawFrom::Pile,
                },
                card: None,
            },
            Action::Throw { cards } => ClientMessage::Throw { cards },
            Action::Call => unreachable!(),
        };
        played.message(seat as ConnId + 1, message)
    }

    /// The last `state` among `messages`.
    fn last_state(messages: &[serde_json::Value]) -> &serde_json::Value {
        messages
            .iter()
            .rev()
            .find(|m| m["type"] == "state")
            .expect("a state")
    }

    #[test]
    fn a_turn_runs_out_a_stand_in_plays_it_and_the_seat_comes_back_with_a_summary() {
        let mut played = timed_table(11);
        let seat = turn(&played);
        let other = 1 - seat;
        let (me, them) = (seat as ConnId + 1, other as ConnId + 1);
        // The clock is in the state both people got when the match began.
        let due = played.core.turn_clock.unwrap();
        assert_eq!(due.0, seat);
        let clock = played.core.clock().unwrap();
        assert_eq!((clock.seat, clock.total_ms), (seat, 15_000));
        // Time runs out: everyone hears it, and a stand-in covers this one turn.
        let effects = played.tick();
        assert_eq!(played.now, due.1);
        let notices: Vec<_> = sent(&effects, them)
            .into_iter()
            .filter(|m| m["type"] == "notice")
            .collect();
        assert_eq!(notices.len(), 1, "{effects:?}");
        assert_eq!(notices[0]["kind"], "timed_out");
        assert_eq!(notices[0]["away"], false);
        // Its move refuses nothing of mine until it has begun; it plays the turn out.
        let mut effects = Vec::new();
        while turn(&played) == seat {
            effects.extend(played.tick());
        }
        let mine = sent(&effects, me);
        let states: Vec<_> = mine.iter().filter(|m| m["type"] == "state").collect();
        assert!(states.iter().all(|s| s["stand_in"] == seat), "{states:?}");
        // The seat is mine again, and I am told what it did; the other person's clock runs.
        let summary = mine.iter().find(|m| m["type"] == "while_away").unwrap();
        assert_eq!(summary["turns"], 1);
        assert_eq!(summary["events"].as_array().unwrap().len(), 2, "{summary}");
        assert_eq!(last_state(&mine)["clock"]["seat"], other);
        assert!(played.core.human(seat).unwrap().stand_in.is_none());
        // The history marks the stand-in's moves.
        assert_eq!(played.core.stand_in_marks.len(), 2);
        // The other person moves; my new turn has a fresh, whole clock.
        while turn(&played) == other {
            let effects = move_for(&mut played, other);
            assert!(errors(&effects, them).is_empty(), "{effects:?}");
        }
        let clock = played.core.clock().unwrap();
        assert_eq!((clock.seat, clock.left_ms), (seat, 15_000));
        // A move of my own resets the count of timed-out turns.
        let effects = move_for(&mut played, seat);
        assert!(errors(&effects, me).is_empty(), "{effects:?}");
        assert_eq!(played.core.human(seat).unwrap().timeouts, 0);
    }

    #[test]
    fn two_timed_out_turns_mark_a_person_away_until_they_are_back() {
        let mut played = timed_table(12);
        let seat = turn(&played);
        let other = 1 - seat;
        let me = seat as ConnId + 1;
        let mut away_notice = None;
        for _ in 0..2 {
            // My turn runs out; the stand-in plays it; the other person moves.
            while turn(&played) == seat {
                let effects = played.tick();
                if let Some(n) = sent(&effects, me)
                    .into_iter()
                    .find(|m| m["type"] == "notice")
                {
                    away_notice = Some(n);
                }
            }
            while turn(&played) == other {
                move_for(&mut played, other);
            }
        }
        assert_eq!(away_notice.unwrap()["away"], true);
        let human = played.core.human(seat).unwrap();
        assert!(human.away && human.stand_in.is_some());
        // Marked away, the stand-in plays this turn too, with no clock for it.
        assert!(played.core.turn_clock.is_none());
        let room = played.core.room_state(Some(seat));
        assert!(room.seats[seat].away);
        // `back` from someone no bot covers is refused; mine is taken, and the seat is mine
        // again at once since the stand-in has not begun the turn, with a fresh clock.
        let effects = played.message(other as ConnId + 1, ClientMessage::Back);
        assert_eq!(errors(&effects, other as ConnId + 1), ["not_away"]);
        let effects = played.message(me, ClientMessage::Back);
        assert!(errors(&effects, me).is_empty(), "{effects:?}");
        let human = played.core.human(seat).unwrap();
        assert!(!human.away && human.stand_in.is_none());
        assert_eq!(played.core.turn_clock.map(|c| c.0), Some(seat));
        let mine = sent(&effects, me);
        assert_eq!(last_state(&mine)["clock"]["seat"], seat);
        assert!(mine.iter().any(|m| m["type"] == "while_away"));
    }

    #[test]
    fn a_person_marked_away_who_moves_at_the_start_of_their_turn_has_their_seat_back() {
        let mut played = timed_table(13);
        // The host hands Bina's seat to a bot; we wait until that seat's turn begins.
        let bina = 1;
        let effects = played.message(1, ClientMessage::HandToBot { seat: bina });
        assert!(errors(&effects, 1).is_empty(), "{effects:?}");
        let notice = sent(&effects, 2)
            .into_iter()
            .find(|m| m["type"] == "notice")
            .unwrap();
        assert_eq!(
            (notice["kind"].as_str(), notice["seat"].as_u64()),
            (Some("handed_to_bot"), Some(1))
        );
        // Get to the start of Bina's turn without the bot moving: Asha moves if it is hers.
        while turn(&played) != bina {
            move_for(&mut played, 0);
        }
        // The stand-in is due but has not moved yet: Bina's own move takes her seat back.
        assert!(played.core.human(bina).unwrap().stand_in.is_some());
        let effects = move_for(&mut played, bina);
        assert!(errors(&effects, 2).is_empty(), "{effects:?}");
        let human = played.core.human(bina).unwrap();
        assert!(!human.away && human.stand_in.is_none());
    }

    #[test]
    fn the_host_hands_a_seat_to_a_bot_or_removes_a_person_only_as_the_rules_allow() {
        let settings = Settings {
            players: 3,
            ..Preset::Standard.settings()
        };
        let mut played = Played::new(settings, 14);
        assert!(join(&mut played, 1, hello("Asha", None, true)).0);
        assert!(join(&mut played, 2, hello("Bina", None, false)).0);
        // Not before the match.
        let effects = played.message(1, ClientMessage::HandToBot { seat: 1 });
        assert_eq!(errors(&effects, 1), ["not_started"]);
        played.message(1, ClientMessage::Start);
        let before = played.core.durable();
        let entries = played.log.len();
        for (conn, message, code) in [
            (2, ClientMessage::HandToBot { seat: 0 }, "not_host"),
            (1, ClientMessage::HandToBot { seat: 0 }, "own_seat"),
            (1, ClientMessage::HandToBot { seat: 2 }, "not_a_person"),
            (1, ClientMessage::HandToBot { seat: 7 }, "no_such_seat"),
            (1, ClientMessage::ClearSeat { seat: 2 }, "not_a_person"),
            (1, ClientMessage::ClearSeat { seat: 0 }, "own_seat"),
            (2, ClientMessage::ClearSeat { seat: 0 }, "not_host"),
        ] {
            let effects = played.message(conn, message.clone());
            assert_eq!(errors(&effects, conn), [code], "{message:?}");
        }
        let effects = played.message(1, ClientMessage::HandToBot { seat: 1 });
        assert!(errors(&effects, 1).is_empty());
        let effects = played.message(1, ClientMessage::HandToBot { seat: 1 });
        assert_eq!(errors(&effects, 1), ["already_stand_in"]);
        assert_eq!(played.log.len(), entries);
        assert_eq!(played.core.durable(), before);
        // Removing Bina mid-match: she is told and closed, a bot plays her seat, and the log
        // replays to the same room.
        let effects = played.message(1, ClientMessage::ClearSeat { seat: 1 });
        assert!(errors(&effects, 1).is_empty(), "{effects:?}");
        let to_bina = sent(&effects, 2);
        assert!(
            to_bina
                .iter()
                .any(|m| m["type"] == "bye" && m["reason"] == "removed")
        );
        let to_asha = sent(&effects, 1);
        assert!(
            to_asha
                .iter()
                .any(|m| m["type"] == "notice" && m["kind"] == "removed" && m["name"] == "Bina"),
            "{to_asha:?}"
        );
        assert!(matches!(played.core.seats[1], Seat::Bot(_)));
        assert_eq!(played.core.removed.len(), 1);
        assert_eq!(played.restored().durable(), played.core.durable());
        // The bot plays on: the match still finishes with Asha moving.
        for _ in 0..2_000 {
            if played.core.game.as_ref().unwrap().is_over() {
                break;
            }
            if played.core.stage == Stage::BetweenRounds {
                played.message(1, ClientMessage::Ready { client_seed: None });
            } else if turn(&played) == 0 {
                move_for(&mut played, 0);
            } else {
                played.tick();
            }
        }
        assert!(played.core.game.as_ref().unwrap().is_over());
    }
}
