//! What the server sends.
//!
//! After a successful `hello` a client gets `welcome`, then `room`, then (once the match has
//! started) `history` and `state`. From then on: `room` whenever the seats or the stage change,
//! one `state` after every change of the game carrying the public events that led to it (so an
//! action costs each client one frame), `match_result` at the end, and `error` answering a
//! message that was refused. A socket the server closes on purpose gets `bye` with the reason
//! just before the close frame.
//!
//! A `state` carries what changes turn by turn, not the history: the round's log and the match's
//! finished results come once in `history` when a client arrives, and the client keeps them up to
//! date from the events of every `state` (see [`ServerMessage::History`] and
//! [`crate::History`]). [`StateFrames`] builds one change's `state` for every client at once,
//! serialising what they share once.

use dhumbal_bots::coach::{Advice, Review};
use dhumbal_engine::{
    Card, ClientSeed, Difficulty, Event, Game, Hex32, RoundResult, SeatView, Settings, Standing,
};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use crate::client::MessageId;
use crate::patch::ViewPatch;

/// Everything the server sends.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum ServerMessage {
    /// The answer to a successful `hello`.
    Welcome(Welcome),
    /// The room: its seats, settings, host and stage. Sent on joining and after every change.
    Room(RoomState),
    /// The history so far, sent once to a client arriving in a started match (on joining,
    /// reconnecting or watching), just before its first `state`. The client keeps it from then
    /// on with the events of every `state`: each event is added to the log, except `dealt`,
    /// which starts a new log (of itself); a `dealt` for round 1 also starts a new match, with
    /// no results; each `round_ended` also adds its result to the results.
    History {
        /// The public log of the current round: its `dealt` event and every event since.
        log: Vec<Event>,
        /// Every finished round's result in this match, in order.
        results: Vec<RoundResult>,
        /// The places in `log` (from 0) of the events a stand-in bot played for a person who
        /// was away or out of time, so the log can name the stand-in, not the person.
        #[serde(default)]
        stand_in: Vec<usize>,
    },
    /// This seat's view of the game (a spectator's view for a spectator) after every change,
    /// with the public events that led to it.
    ///
    /// A client gets its whole view in a `state` when it arrives in a started match, after a
    /// `resync`, and when the server cannot tell what it holds; after every other change it gets
    /// a `patch` (see [`Patch`]).
    State {
        /// The view's version: the next `patch` carries `v + 1`.
        #[serde(default)]
        v: u64,
        /// The public events since this client's last `state` or `patch`, in order: a deal, a
        /// draw, a pick-up, a throw, a call, a reshuffle, a show (with every hand face up and the
        /// score rows), the match's end. Empty in the first `state` after `history`.
        events: Vec<Event>,
        /// The seat of the person for whom a stand-in bot played these events (they were away,
        /// out of time, or handed to a bot), `null` when the seat's own player played them.
        #[serde(default)]
        stand_in: Option<usize>,
        /// The turn's clock when the table has a turn timer and a person is to play: `null`
        /// otherwise.
        #[serde(default)]
        clock: Option<TurnClock>,
        /// Everything this seat may see and may do now, except the history (the round's log and
        /// the match's results: see `history`).
        view: Box<SeatView>,
    },
    /// After a change of the game: the public events that made it, and only what changed in
    /// this client's view (see [`Patch`]).
    Patch(Patch),
    /// The answer to a `ping`, with its `id`.
    Pong {
        /// The `ping`'s `id`, if it had one.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        id: Option<MessageId>,
    },
    /// The match is over.
    MatchResult(MatchResult),
    /// Someone said something at the table.
    Chat {
        /// The line.
        line: ChatLine,
    },
    /// Someone reacted: show it briefly beside their seat.
    Reaction {
        /// Their seat; `null` for a spectator.
        seat: Option<usize>,
        /// Their name.
        name: String,
        /// The reaction.
        reaction: crate::client::Reaction,
    },
    /// Something happened at the table that everyone should hear of: a turn ran out, the host
    /// handed a seat to a bot or removed a person.
    Notice(Notice),
    /// Sent to a person when their seat comes back to them: what a stand-in bot did for them
    /// while they were away (their turns, what it threw, whether it called).
    WhileAway(WhileAway),
    /// To this socket only: the server took this client seed (sent by this socket in `hello`,
    /// `ready`, `rematch` or `client_seed`), answering this commitment. It is the seat's seed in
    /// force from the next deal of that match, until a later `client_seed_taken`. Sent in order
    /// with everything else, so a `dealt` event after it carries this seed (or a later taken
    /// one) for the seat, and one before it does not (see `docs/fairness.md`).
    ClientSeedTaken {
        /// The match the commitment is for.
        match_number: u32,
        /// The commitment the seed answers.
        commitment: Hex32,
        /// The seed taken.
        client_seed: ClientSeed,
    },
    /// To you alone, the answer to `hint`: what the coach would do on your turn, and why, weighed
    /// from your view alone. `v` is the version of the view it weighed: a hint for a version you
    /// no longer hold (the table moved on) is stale, and the page drops it.
    Hint {
        /// The version of your view the hint is for.
        v: u64,
        /// The moves weighed, best first, and why the best is best.
        advice: Advice,
    },
    /// To you alone, the answer to `review`: the coach's review of one seat's decisions in the
    /// match that has just ended, each weighed from that seat's view at the time.
    Review {
        /// The match's number in the room.
        match_number: u32,
        /// The review.
        review: Review,
    },
    /// A message was refused; nothing changed.
    Error(ErrorMessage),
    /// The server is about to close this socket, and why (the close frame follows).
    Bye(Bye),
}

/// One change of the game as a client sees it: the events, and the fields of its view that
/// changed (see [`crate::patch`]). Applied to the view of version `v - 1` it gives the view of
/// version `v`; a client holding another version ignores it and sends `resync`.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct Patch {
    /// The view's version after this patch.
    pub v: u64,
    /// The public events that made the change, in order (as in `state`); left out when none.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub events: Vec<Event>,
    /// The seat of the person for whom a stand-in bot played these events; left out when the
    /// seat's own player played them.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub stand_in: Option<usize>,
    /// The turn's clock when the table has a turn timer and a person is to play; left out
    /// otherwise.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub clock: Option<TurnClock>,
    /// The fields of the view that changed, each with its whole new value.
    pub view: Box<ViewPatch>,
}

/// The clock of the turn being played, with a turn timer.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct TurnClock {
    /// Whose turn it is.
    pub seat: usize,
    /// Milliseconds left when the message was sent: a client counts down from when it arrives.
    pub left_ms: u64,
    /// The table's whole turn, in milliseconds (the `turn_timer` setting).
    pub total_ms: u64,
}

/// An announcement to the table.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum Notice {
    /// A person's turn timer ran out: a stand-in bot plays this turn for them. After two in a row
    /// (`away`) it goes on playing their turns until they act again.
    TimedOut {
        /// The seat.
        seat: usize,
        /// The person's name.
        name: String,
        /// Whether the seat is now marked away (the second timed-out turn in a row).
        away: bool,
    },
    /// The host handed this person's seat to a bot until they act again.
    HandedToBot {
        /// The seat.
        seat: usize,
        /// The person's name.
        name: String,
    },
    /// The host removed this person from the room; a bot plays their seat for the rest of the
    /// match.
    Removed {
        /// The seat.
        seat: usize,
        /// The person's name.
        name: String,
    },
    /// A person whose turns a stand-in played has taken their seat back.
    Back {
        /// The seat.
        seat: usize,
        /// The person's name.
        name: String,
    },
}

/// What a stand-in bot did for a person while they were away.
#[derive(Clone, Debug, PartialEq, Eq, Default, Serialize, Deserialize, JsonSchema)]
pub struct WhileAway {
    /// The turns it played for them.
    pub turns: u32,
    /// The public events of its moves, in order (draws, pick-ups, throws, a call; not the
    /// deals or shows between them).
    pub events: Vec<Event>,
    /// The rounds that ended while it played.
    pub rounds_ended: u32,
}

/// The last message on a socket the server closes: a stable reason and a sentence.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct Bye {
    /// The stable reason: `shutting_down` (the close code is 1001; reconnect with the seat
    /// token once the server is back) or `rate_limited` (1008; too many messages too fast).
    pub reason: String,
    /// A sentence for people.
    pub message: String,
}

/// The answer to a successful `hello`.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct Welcome {
    /// The protocol version the server speaks.
    pub protocol: u32,
    /// The room's code.
    pub room: String,
    /// Your seat, or `null` when watching.
    pub seat: Option<usize>,
    /// Your secret seat token: present it in a later `hello` to take this seat back. Keep it to
    /// yourself. `null` when watching.
    pub token: Option<String>,
    /// Whether you are the room's host.
    pub host: bool,
    /// The table's chat so far, its last lines (at most 50), oldest first: a reload shows the
    /// conversation (in the lobby too, where no `history` is sent).
    #[serde(default)]
    pub chat: Vec<ChatLine>,
}

/// Where a room stands.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum Stage {
    /// Seats are being taken and settings chosen.
    Lobby,
    /// A round is being played.
    Playing,
    /// A round has ended; the next deal waits for every connected person's `ready`.
    BetweenRounds,
    /// The match has ended; `rematch` starts another.
    MatchOver,
}

/// Who is in a seat.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum SeatKind {
    /// Nobody yet; a bot takes it when the match starts.
    Empty,
    /// A person.
    Human,
    /// A bot.
    Bot,
}

/// One seat as everyone in the room sees it.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct SeatInfo {
    /// The seat number, from 0.
    pub seat: usize,
    /// Empty, a person, or a bot.
    pub kind: SeatKind,
    /// The person's name, or the bot's.
    pub name: Option<String>,
    /// A bot's difficulty.
    pub difficulty: Option<Difficulty>,
    /// Whether the person is connected (bots always are; an empty seat is not).
    pub connected: bool,
    /// Between rounds: whether this seat has sent `ready` (bots always have). After the match:
    /// whether it has asked for a rematch.
    pub ready: bool,
    /// While a person is away and a bot plays their turns for them: that bot's difficulty.
    #[serde(default)]
    pub stand_in: Option<Difficulty>,
    /// Whether the host muted this person (they read the chat but may not write in it).
    #[serde(default)]
    pub muted: bool,
    /// Whether the person is marked away: they ran out of time on two turns in a row, or the
    /// host handed their seat to a bot. A stand-in plays their turns until they act again.
    #[serde(default)]
    pub away: bool,
}

/// One line of the table's chat.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct ChatLine {
    /// The seat of the person who said it.
    pub seat: Option<usize>,
    /// Their name.
    pub name: String,
    /// What they said: plain text, to be shown as text, never as markup.
    pub text: String,
}

/// The room: seats, settings, host, stage.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct RoomState {
    /// The room's code.
    pub code: String,
    /// Where the room stands.
    pub stage: Stage,
    /// Whether the match has started (any stage but the lobby).
    pub started: bool,
    /// The table's settings.
    pub settings: Settings,
    /// Every seat.
    pub seats: Vec<SeatInfo>,
    /// The host's seat, if the host is seated.
    pub host: Option<usize>,
    /// The seat of the client this message is sent to, `null` when watching.
    pub your_seat: Option<usize>,
    /// The names of the people the host removed, who may not come back until the host lets
    /// them (`readmit` names one by its place here).
    #[serde(default)]
    pub removed: Vec<String>,
    /// The current (or last) match's number and its commitment to the match seed, published
    /// before the first deal (see `docs/fairness.md`); `null` before the first match and for
    /// fixed test decks.
    #[serde(default)]
    pub fairness: Option<Fairness>,
    /// Whether the room lets people watch (the host's `set_watching`); `true` unless the host
    /// turned watching off.
    #[serde(default = "watching_allowed")]
    pub watching: bool,
    /// Who is watching now, in the order they came (the host's `remove_watcher` names one by
    /// its `id`).
    #[serde(default)]
    pub watchers: Vec<Watcher>,
    /// The names of the watchers the host removed, whose address may not come back until the
    /// host lets it (`readmit_watcher` names one by its place here).
    #[serde(default)]
    pub removed_watchers: Vec<String>,
    /// The room's running ledger: for each seat at which a match was played to its end, how
    /// many such matches, how many it won, and its points across them, seat by seat; empty
    /// before the first match ends. Kept with the room (through restarts) and counted per
    /// seat: a person who moves to another seat in the lobby takes their line with them.
    #[serde(default)]
    pub ledger: Vec<LedgerRow>,
}

impl RoomState {
    /// Writes this state's `room` message into `out`: the text
    /// `ServerMessage::Room(state).to_json()` makes, byte for byte (a test holds them equal),
    /// with `settings` the JSON of [`RoomState::settings`] made before (`serde_json::to_string`
    /// of them; a room keeps it until its settings change). The keys are written as they are
    /// (they need no escaping) and each value through `serde_json`: a room sends this message
    /// to every client at each vote, and most of serde's work on it was the settings and the
    /// keys.
    pub fn write_message(&self, settings: &str, out: &mut Vec<u8>) {
        /// Appends `value` as `serde_json` writes it.
        fn value<T: Serialize + ?Sized>(out: &mut Vec<u8>, value: &T) {
            serde_json::to_writer(&mut *out, value).expect("a room's values serialise");
        }
        /// Appends `[` each item written by `write`, comma-separated, `]`.
        fn list<T>(out: &mut Vec<u8>, items: &[T], write: impl Fn(&mut Vec<u8>, &T)) {
            out.push(b'[');
            for (i, item) in items.iter().enumerate() {
                if i > 0 {
                    out.push(b',');
                }
                write(out, item);
            }
            out.push(b']');
        }
        // Every field, named once: a field added to the state and not here fails to compile.
        let RoomState {
            code,
            stage,
            started,
            settings: _,
            seats,
            host,
            your_seat,
            removed,
            fairness,
            watching,
            watchers,
            removed_watchers,
            ledger,
        } = self;
        /// Appends `,"field":` and the field's value, for each field named.
        macro_rules! members {
            ($out:expr; $($field:ident),+) => {$(
                $out.extend_from_slice(concat!(",\"", stringify!($field), "\":").as_bytes());
                value($out, $field);
            )+};
        }
        out.extend_from_slice(br#"{"type":"room""#);
        members!(out; code, stage, started);
        out.extend_from_slice(br#","settings":"#);
        out.extend_from_slice(settings.as_bytes());
        out.extend_from_slice(br#","seats":"#);
        list(out, seats, |out, info| {
            let SeatInfo {
                seat,
                kind,
                name,
                difficulty,
                connected,
                ready,
                stand_in,
                muted,
                away,
            } = info;
            out.extend_from_slice(br#"{"seat":"#);
            value(out, seat);
            members!(out; kind, name, difficulty, connected, ready, stand_in, muted, away);
            out.push(b'}');
        });
        members!(out; host, your_seat, removed, fairness, watching, watchers, removed_watchers, ledger);
        out.push(b'}');
    }
}

/// One seat's line of the room's ledger (see [`RoomState::ledger`]).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct LedgerRow {
    /// The seat, from 0.
    pub seat: usize,
    /// The name at the seat now (a person's or a bot's), `null` while it is empty.
    pub name: Option<String>,
    /// The matches played to their end at this seat.
    pub played: u32,
    /// The matches this seat finished in first place (a shared first place counts for each
    /// seat that shares it).
    pub won: u32,
    /// The sum of its final Totals across those matches.
    pub points: i64,
}

/// A room lets people watch unless its host turned watching off.
fn watching_allowed() -> bool {
    true
}

/// Someone watching the room (a spectator).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct Watcher {
    /// The watcher's number in the room, from 1, for as long as they watch.
    pub id: u32,
    /// The name they gave (checked like a person's: no look-alike of anyone in the room).
    pub name: String,
}

/// A match's commitment, as the room shows it from its start.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct Fairness {
    /// The match's number in the room, from 1.
    pub match_number: u32,
    /// `SHA-256("dhumbal-fair-v1/commit" ‖ match seed)`, 64 hex digits.
    pub commitment: String,
}

/// The end of a match.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct MatchResult {
    /// The final standings, best first.
    pub standings: Vec<Standing>,
    /// Every round's result.
    pub results: Vec<RoundResult>,
    /// Every round's deck seed, 64 hex digits each. Empty when the room was dealt from fixed
    /// test decks.
    pub seeds: Vec<String>,
    /// The match's number in the room, from 1 (its hand history is
    /// `GET /api/rooms/{code}/matches/{match_number}/history`).
    #[serde(default)]
    pub match_number: u32,
    /// The commitment published at the match's start (`null` for fixed test decks).
    #[serde(default)]
    pub commitment: Option<String>,
    /// The match seed, revealed: anyone can now recompute the commitment and every deck (`null`
    /// for fixed test decks).
    #[serde(default)]
    pub seed: Option<String>,
}

/// A refusal: a stable code, a sentence, and the `id` of the message it answers.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct ErrorMessage {
    /// The stable code (see [`crate::codes`] and the engine's rule codes).
    pub code: String,
    /// A sentence for people.
    pub message: String,
    /// The `id` of the refused message, if it had one.
    pub id: Option<MessageId>,
}

impl ServerMessage {
    /// An `error` message.
    pub fn error(code: &str, message: impl Into<String>, id: Option<MessageId>) -> ServerMessage {
        ServerMessage::Error(ErrorMessage {
            code: code.to_owned(),
            message: message.into(),
            id,
        })
    }

    /// A `bye` message.
    pub fn bye(reason: &str, message: impl Into<String>) -> ServerMessage {
        ServerMessage::Bye(Bye {
            reason: reason.to_owned(),
            message: message.into(),
        })
    }

    /// The `history` a client arriving now needs: the current round's log and the match's
    /// finished results.
    pub fn history(game: &Game, stand_in: &[usize]) -> ServerMessage {
        ServerMessage::History {
            log: game.log().to_vec(),
            results: game.results().to_vec(),
            stand_in: stand_in.to_vec(),
        }
    }

    /// A `state` with `seat`'s view (a spectator's for `None`), without the history, and no
    /// events (for a client that has just been sent the `history`), with the turn's clock, at
    /// the view's version `v`.
    pub fn state(
        game: &Game,
        seat: Option<usize>,
        clock: Option<TurnClock>,
        v: u64,
    ) -> ServerMessage {
        ServerMessage::State {
            v,
            events: Vec::new(),
            stand_in: None,
            clock,
            view: Box::new(game.view_of(seat)),
        }
    }

    /// This message as JSON text.
    pub fn to_json(&self) -> String {
        // Room for the whole message from the start (a state is about 700 bytes), rather than
        // growing the buffer from nothing.
        let capacity = match self {
            ServerMessage::Error(_) | ServerMessage::Bye(_) => 128,
            _ => 1024,
        };
        let mut json = Vec::with_capacity(capacity);
        serde_json::to_writer(&mut json, self).expect("server messages always serialize");
        String::from_utf8(json).expect("serde_json writes UTF-8")
    }
}

/// One change's `state` messages, for every client of the game at once: the events and the
/// view's shared part (everything but the seat's own fields: its seat, hand, hand total, the
/// pile cards it may take, whether it may call, draw or throw) are serialised once, and each
/// client's message
/// adds only its own fields. Each message reads back as [`ServerMessage::State`] with those
/// events and the game's view for that seat, exactly as [`ServerMessage::to_json`] would write it.
#[derive(Clone, Debug)]
pub struct StateFrames {
    /// `{"type":"state","v":…,"events":[…],"view":`.
    head: String,
    /// The view's shared fields, from `"settings"` to the view's closing brace and the
    /// message's.
    shared: String,
}

/// A seat's own fields of its view, in the order [`SeatView`] declares them (first).
#[derive(Serialize)]
struct OwnFields<'a> {
    seat: Option<usize>,
    hand: &'a [Card],
    hand_total: u32,
    hand_values: Vec<u32>,
    takeable: &'a [Card],
    can_call: bool,
    can_draw: bool,
    can_throw: bool,
}

impl StateFrames {
    /// The shared part of the `state` every client gets after `events` changed `game`; a
    /// stand-in played them for `stand_in`; the turn's `clock`, if it has one; the view's
    /// version `v`.
    pub fn new(
        game: &Game,
        events: &[Event],
        stand_in: Option<usize>,
        clock: Option<TurnClock>,
        v: u64,
    ) -> StateFrames {
        // Built from `str`s, never from bytes, so that nothing is checked for UTF-8 again.
        let mut head = String::with_capacity(96 + 96 * events.len());
        head.push_str(r#"{"type":"state","v":"#);
        head.push_str(&v.to_string());
        head.push_str(r#","events":"#);
        head.push_str(&json(events));
        head.push_str(r#","stand_in":"#);
        head.push_str(&json(&stand_in));
        head.push_str(r#","clock":"#);
        head.push_str(&json(&clock));
        head.push_str(r#","view":"#);
        let public = json(&game.spectator_view());
        // The seat's own fields come first in a view, then `"settings"` and the shared rest.
        let at = public
            .find(r#","settings":"#)
            .expect("a view's shared part starts with its settings");
        let mut shared = String::with_capacity(public.len() - at + 1);
        shared.push_str(&public[at..]);
        shared.push('}');
        StateFrames { head, shared }
    }

    /// The `state` for a client in `seat` (a spectator for `None`).
    pub fn for_seat(&self, game: &Game, seat: Option<usize>) -> String {
        let hand = seat.map(|s| game.hand(s)).unwrap_or_default();
        let takeable = match seat {
            Some(s)
                if !matches!(
                    game.phase(),
                    dhumbal_engine::Phase::RoundOver | dhumbal_engine::Phase::MatchOver
                ) =>
            {
                game.takeable(s)
            }
            _ => Vec::new(),
        };
        let own = OwnFields {
            seat,
            hand,
            hand_total: dhumbal_engine::hand_total(hand, game.settings().court),
            hand_values: hand
                .iter()
                .map(|c| c.value(game.settings().court))
                .collect(),
            takeable: &takeable,
            can_call: seat.is_some_and(|s| game.can_call(s)),
            can_draw: seat.is_some_and(|s| game.can_draw(s)),
            can_throw: seat.is_some_and(|s| game.can_throw(s)),
        };
        let own = serde_json::to_string(&own).expect("a view's own fields serialize");
        // `{…own…}` without its closing brace, then the shared fields. The frame is made to
        // its exact length: a `String` whose capacity is its length becomes the socket's
        // message without another allocation.
        let own = &own[..own.len() - 1];
        let mut out = String::with_capacity(self.head.len() + own.len() + self.shared.len());
        out.push_str(&self.head);
        out.push_str(own);
        out.push_str(&self.shared);
        out
    }
}

/// A value as JSON (the parts of a `state`).
fn json<T: Serialize + ?Sized>(value: &T) -> String {
    serde_json::to_string(value).expect("the parts of a state serialise")
}

#[cfg(test)]
mod tests {
    use super::*;
    use dhumbal_engine::Preset;

    /// [`RoomState::write_message`] writes what serde writes of the `room` message, byte for
    /// byte: rooms at every stage and preset, every kind of seat, names and codes that need
    /// escaping, watchers, removals, a ledger, a commitment or none.
    #[test]
    fn a_room_message_is_written_as_serde_writes_it() {
        let stages = [
            Stage::Lobby,
            Stage::Playing,
            Stage::BetweenRounds,
            Stage::MatchOver,
        ];
        let difficulties = [
            Difficulty::Easy,
            Difficulty::Medium,
            Difficulty::Hard,
            Difficulty::Expert,
        ];
        let mut checked = 0;
        for (i, preset) in Preset::ALL.into_iter().cycle().take(12).enumerate() {
            let seats = (0..2 + i % 5)
                .map(|seat| SeatInfo {
                    seat,
                    kind: [SeatKind::Empty, SeatKind::Human, SeatKind::Bot][(seat + i) % 3],
                    name: (seat % 3 != 0).then(|| format!("Asha \"{seat}\" \\ \u{1F600}\n\u{7}")),
                    difficulty: (seat % 2 == 0).then_some(difficulties[(seat + i) % 4]),
                    connected: seat % 2 == 1,
                    ready: (seat + i) % 3 == 0,
                    stand_in: (seat == 1).then_some(difficulties[i % 4]),
                    muted: seat == 2,
                    away: (seat + i) % 4 == 1,
                })
                .collect();
            let state = RoomState {
                code: if i % 2 == 0 {
                    "ABCD".into()
                } else {
                    "A\"B</C>".into()
                },
                stage: stages[i % 4],
                started: i % 4 != 0,
                settings: preset.settings(),
                seats,
                host: (i % 3 != 0).then_some(i % 2),
                your_seat: (i % 4 != 3).then_some(i % 3),
                removed: (0..i % 3).map(|n| format!("gone {n} é")).collect(),
                fairness: (i % 2 == 1).then(|| Fairness {
                    match_number: i as u32,
                    commitment: "ab".repeat(32),
                }),
                watching: i % 5 != 0,
                watchers: (0..i % 4)
                    .map(|n| Watcher {
                        id: n as u32 + 1,
                        name: format!("watcher\t{n}"),
                    })
                    .collect(),
                removed_watchers: (0..i % 2).map(|n| format!("w{n}")).collect(),
                ledger: (0..i % 4)
                    .map(|seat| LedgerRow {
                        seat,
                        name: (seat != 1).then(|| format!("Bot {seat}")),
                        played: seat as u32 * 3,
                        won: seat as u32,
                        points: seat as i64 * -17 + 5,
                    })
                    .collect(),
            };
            let settings = serde_json::to_string(&state.settings).unwrap();
            let mut written = Vec::new();
            state.write_message(&settings, &mut written);
            assert_eq!(
                String::from_utf8(written).unwrap(),
                ServerMessage::Room(state).to_json(),
                "{preset:?}, case {i}"
            );
            checked += 1;
        }
        assert_eq!(checked, 12);
    }

    #[test]
    fn server_messages_round_trip() {
        let game = Game::new(Preset::Standard.settings(), [3; 32]).unwrap();
        let messages = vec![
            ServerMessage::Welcome(Welcome {
                protocol: 1,
                room: "ABC".into(),
                seat: Some(0),
                token: Some("t".into()),
                host: true,
                chat: vec![ChatLine {
                    seat: Some(0),
                    name: "Asha".into(),
                    text: "<b>hi</b>".into(),
                }],
            }),
            ServerMessage::Chat {
                line: ChatLine {
                    seat: Some(1),
                    name: "Bina".into(),
                    text: "namaste 🙏".into(),
                },
            },
            ServerMessage::Reaction {
                seat: None,
                name: "Dev".into(),
                reaction: crate::Reaction::Laugh,
            },
            ServerMessage::History {
                log: game.log().to_vec(),
                results: Vec::new(),
                stand_in: vec![0],
            },
            ServerMessage::State {
                v: 9,
                events: game.log().to_vec(),
                stand_in: Some(2),
                clock: Some(TurnClock {
                    seat: 1,
                    left_ms: 12_345,
                    total_ms: 30_000,
                }),
                view: Box::new(game.view(0)),
            },
            ServerMessage::error("not_host", "only the host may start", None),
            ServerMessage::bye(crate::codes::SHUTTING_DOWN, "the server is restarting"),
            ServerMessage::Notice(Notice::TimedOut {
                seat: 2,
                name: "Chandra".into(),
                away: true,
            }),
            ServerMessage::Notice(Notice::HandedToBot {
                seat: 1,
                name: "Bina".into(),
            }),
            ServerMessage::WhileAway(WhileAway {
                turns: 2,
                events: game.log().to_vec(),
                rounds_ended: 1,
            }),
            ServerMessage::Hint {
                v: 3,
                advice: dhumbal_bots::coach::advise(
                    &game.view(game.turn()),
                    game.public_history(),
                    None,
                    &dhumbal_bots::coach::CoachParams::HINT,
                    7,
                ),
            },
        ];
        for message in messages {
            let text = message.to_json();
            assert_eq!(
                serde_json::from_str::<ServerMessage>(&text).unwrap(),
                message
            );
        }
    }

    /// The examples of `hint` and `review` in `docs/protocol.md` are messages the server sends,
    /// written as the server writes them.
    #[test]
    fn the_documented_coach_answers_are_the_servers() {
        let doc = include_str!("../../docs/protocol.md");
        for kind in [
            "{\"type\":\"hint\",\"v\"",
            "{\"type\":\"review\",\"match_number\"",
        ] {
            let line = doc
                .lines()
                .find(|l| l.starts_with(kind))
                .unwrap_or_else(|| panic!("docs/protocol.md has no example starting {kind}"));
            let message: ServerMessage = serde_json::from_str(line).unwrap();
            assert_eq!(message.to_json(), line);
        }
    }

    /// Each seat's (and a spectator's) `state` from [`StateFrames`] is exactly the message
    /// [`ServerMessage::to_json`] writes for that seat's view and the change's events, at every
    /// step of whole matches of every preset.
    #[test]
    fn state_frames_give_every_seat_its_own_view_at_every_step() {
        use dhumbal_engine::{Phase, Rounds};
        for preset in Preset::ALL {
            for players in [2u8, 4, 6] {
                let settings = Settings {
                    players,
                    rounds: Rounds::Fixed(2),
                    ..preset.settings()
                };
                let mut game = Game::new(settings, [players; 32]).unwrap();
                let mut events = game.log().to_vec();
                for step in 0..5_000usize {
                    let stand_in = (step % 3 == 0).then_some(step % game.seats());
                    let clock = (step % 2 == 0).then(|| TurnClock {
                        seat: game.turn(),
                        left_ms: step as u64 * 7,
                        total_ms: 30_000,
                    });
                    let v = step as u64 * 3;
                    let frames = StateFrames::new(&game, &events, stand_in, clock, v);
                    let seats = (0..game.seats()).map(Some).chain([None]);
                    for seat in seats {
                        let expected = ServerMessage::State {
                            v,
                            events: events.clone(),
                            stand_in,
                            clock,
                            view: Box::new(game.view_of(seat)),
                        };
                        let frame = frames.for_seat(&game, seat);
                        assert_eq!(frame, expected.to_json(), "{preset:?} step {step} {seat:?}");
                        let decoded: ServerMessage = serde_json::from_str(&frame).unwrap();
                        assert_eq!(decoded, expected);
                    }
                    events = match game.phase() {
                        Phase::MatchOver => break,
                        Phase::RoundOver => game.next_round().unwrap(),
                        _ => {
                            let seat = game.turn();
                            let actions = game.legal_actions(seat);
                            let action = actions[(step * 5 + 3) % actions.len()].clone();
                            game.apply(seat, action).unwrap()
                        }
                    };
                }
                assert!(game.is_over(), "{preset:?} did not finish");
            }
        }
    }

    /// Chat text is trimmed and kept to one line of 1 to 200 characters of plain text.
    #[test]
    fn chat_text_is_one_line_of_plain_text() {
        use crate::clean_chat;
        assert_eq!(clean_chat("  namaste  ").as_deref(), Some("namaste"));
        assert_eq!(clean_chat("<b>hi</b>").as_deref(), Some("<b>hi</b>"));
        assert_eq!(
            clean_chat(&"क".repeat(200)).map(|t| t.chars().count()),
            Some(200)
        );
        for bad in [
            "",
            "   ",
            "two\nlines",
            "bell\u{7}",
            "\u{202e}reversed",
            &"a".repeat(201),
        ] {
            assert_eq!(clean_chat(bad), None, "{bad:?}");
        }
    }

    /// Chat follows the names' character rules: no bidirectional control, no character that
    /// renders as nothing, and a line shows at least one visible character.
    #[test]
    fn chat_refuses_hidden_and_direction_changing_characters() {
        use crate::clean_chat;
        for bad in [
            "\u{200F}hi",
            "hi\u{061C}",
            "\u{200E}",
            "\u{200B}",
            "\u{200B}\u{200B}\u{200B}",
            "a\u{200B}b",
            "hi\u{E0041}\u{E0042}",
            "\u{E0001}",
            "\u{FEFF}",
            "\u{3164}",
            "\u{2800}",
            "\u{2066}hi\u{2069}",
            "\u{200D}",
            "\u{FE0F}",
            "line\u{2028}break",
        ] {
            assert_eq!(clean_chat(bad), None, "{bad:?}");
        }
        // Emoji built with joiners and selectors, and text in any script, stay.
        for good in ["👨‍👩‍👧 ❤️", "नमस्ते", "مرحبا", "שלום", "ok 👍🏽"]
        {
            assert_eq!(clean_chat(good).as_deref(), Some(good), "{good:?}");
        }
    }
}
