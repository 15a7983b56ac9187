//! What a client may send, and how the server reads it.
//!
//! A message is checked for its shape before anything else: [`parse_client_message`] turns text
//! into a [`ClientEnvelope`] or a [`ParseError`] whose code is `bad_message` (not JSON, not an
//! object, no `type`, or fields that do not fit) or `unknown_type` (a `type` the protocol does
//! not have). Permission and the rules are checked later, by the room.

use dhumbal_engine::{Card, ClientSeed, Difficulty, Hex32, Preset, Settings, Source};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use crate::codes;

/// The optional `id` a client puts on a message; an `error` answering that message echoes it.
#[derive(Clone, Debug, PartialEq, Eq, Hash, Serialize, JsonSchema)]
#[serde(untagged)]
pub enum MessageId {
    /// A number.
    Number(u64),
    /// A string.
    Text(String),
}

/// Read as serde's derive reads an untagged enum of these two variants (a whole number from 0,
/// or a string; anything else refused with the derive's own sentence), without first buffering
/// the value into serde's `Content`, which the derive does for every `id` of every message.
impl<'de> Deserialize<'de> for MessageId {
    fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> Result<MessageId, D::Error> {
        /// Takes a number or a string.
        struct IdVisitor;

        /// What the derive says of a value that fits neither variant.
        const UNTAGGED: &str = "data did not match any variant of untagged enum MessageId";

        impl<'v> serde::de::Visitor<'v> for IdVisitor {
            type Value = MessageId;

            fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                f.write_str(UNTAGGED)
            }

            fn visit_u64<E: serde::de::Error>(self, n: u64) -> Result<MessageId, E> {
                Ok(MessageId::Number(n))
            }

            fn visit_i64<E: serde::de::Error>(self, n: i64) -> Result<MessageId, E> {
                u64::try_from(n)
                    .map(MessageId::Number)
                    .map_err(|_| E::custom(UNTAGGED))
            }

            fn visit_str<E: serde::de::Error>(self, s: &str) -> Result<MessageId, E> {
                Ok(MessageId::Text(s.to_owned()))
            }

            fn visit_string<E: serde::de::Error>(self, s: String) -> Result<MessageId, E> {
                Ok(MessageId::Text(s))
            }

            fn visit_bool<E: serde::de::Error>(self, _: bool) -> Result<MessageId, E> {
                Err(E::custom(UNTAGGED))
            }

            fn visit_f64<E: serde::de::Error>(self, _: f64) -> Result<MessageId, E> {
                Err(E::custom(UNTAGGED))
            }

            fn visit_unit<E: serde::de::Error>(self) -> Result<MessageId, E> {
                Err(E::custom(UNTAGGED))
            }

            fn visit_seq<A: serde::de::SeqAccess<'v>>(self, _: A) -> Result<MessageId, A::Error> {
                Err(serde::de::Error::custom(UNTAGGED))
            }

            fn visit_map<A: serde::de::MapAccess<'v>>(self, _: A) -> Result<MessageId, A::Error> {
                Err(serde::de::Error::custom(UNTAGGED))
            }
        }

        deserializer.deserialize_any(IdVisitor)
    }
}

/// A client message with its optional `id`: `{"type": …, "id": 7, …}`.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct ClientEnvelope {
    /// Echoed by an `error` answering this message.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub id: Option<MessageId>,
    /// The message.
    #[serde(flatten)]
    pub message: ClientMessage,
}

impl From<ClientMessage> for ClientEnvelope {
    fn from(message: ClientMessage) -> ClientEnvelope {
        ClientEnvelope { id: None, message }
    }
}

/// The first message on a socket: join a room, take a seat back with its token, or watch.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct Hello {
    /// The protocol version the client speaks: [`crate::PROTOCOL_VERSION`].
    pub protocol: u32,
    /// The room's code.
    pub room: String,
    /// The name shown at the table (1 to 24 characters).
    pub name: String,
    /// The seat token from an earlier `welcome`, to take that seat back; `null` to join anew.
    pub token: Option<String>,
    /// Watch instead of taking a seat: the view shows no hand until the show.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub spectator: bool,
    /// The secret from `POST /api/rooms`, which makes this player the room's host.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub host_secret: Option<String>,
    /// Randomness of this person's own for the deals, with the commitment it answers, in force
    /// from the next deal while they hold a seat (see [`SeedAnswer`] and `docs/fairness.md`).
    /// It counts only if it names the commitment the room shows now; otherwise the seat still
    /// joins, the seed is not taken, and an `error` `stale_commitment` says so. Ignored when
    /// watching.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub client_seed: Option<SeedAnswer>,
}

/// A client seed and the commitment it answers: `{"seed": "<64 hex>", "commitment": "<64 hex>"}`.
///
/// The server takes it only if `commitment` is the one the room shows now (`room.fairness`:
/// the match being played's, or in the lobby and after a match the next one's), and then says
/// so to this socket with `client_seed_taken`, in order with everything else it sends. So a
/// seed always comes after the commitment it counts for, and the page knows which of its
/// seeds is the latest the server took: the one the next deal must carry.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct SeedAnswer {
    /// 32 bytes of the person's own randomness, as 64 hex digits.
    pub seed: ClientSeed,
    /// The commitment (64 hex digits) the page was shown before it chose the seed.
    pub commitment: Hex32,
}

/// The quick reactions: a fixed set, so that a reaction carries no text of its own.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum Reaction {
    /// 👍
    ThumbsUp,
    /// 😂
    Laugh,
    /// 😮
    Wow,
    /// 😢
    Sad,
    /// 🔥
    Fire,
    /// 👏
    Clap,
}

/// The most characters a chat line may hold.
pub const CHAT_MAX_CHARS: usize = 200;

/// How many chat lines a room keeps (and sends in `welcome`).
pub const CHAT_KEPT_LINES: usize = 50;

/// Why a chat line was refused; every reason answers `bad_chat`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ChatError {
    /// Nothing visible is left.
    Blank,
    /// Longer than [`CHAT_MAX_CHARS`].
    TooLong,
    /// A line break: a chat line is one line.
    LineBreak,
    /// A control, bidirectional control or invisible character (the names' rules,
    /// [`crate::text`]).
    Invisible,
}

impl std::fmt::Display for ChatError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        if *self == ChatError::TooLong {
            return write!(
                f,
                "a chat message may be at most {CHAT_MAX_CHARS} characters"
            );
        }
        f.write_str(match self {
            ChatError::Blank | ChatError::TooLong => {
                "a chat message needs at least one visible character"
            }
            ChatError::LineBreak => "a chat message is one line of plain text",
            ChatError::Invisible => {
                "a chat message may not hold invisible or direction-changing characters"
            }
        })
    }
}

impl std::error::Error for ChatError {}

/// A chat message's text made fit for the table, or why it is refused: trimmed, 1 to
/// [`CHAT_MAX_CHARS`] characters on one line, under the same character rules as names (no
/// control, bidirectional-control or invisible character, [`crate::text`]), and showing at
/// least one visible character.
pub fn check_chat(text: &str) -> Result<String, ChatError> {
    let text = text.trim();
    if text.chars().count() > CHAT_MAX_CHARS {
        return Err(ChatError::TooLong);
    }
    let mut previous = None;
    for c in text.chars() {
        if matches!(
            c,
            '\n' | '\r' | '\u{0B}' | '\u{0C}' | '\u{85}' | '\u{2028}' | '\u{2029}'
        ) {
            return Err(ChatError::LineBreak);
        }
        if crate::text::hides(c, previous) {
            return Err(ChatError::Invisible);
        }
        previous = Some(c);
    }
    if !crate::text::shows_something(text) {
        return Err(ChatError::Blank);
    }
    Ok(text.to_owned())
}

/// [`check_chat`]'s text, `None` when nothing fit is left.
pub fn clean_chat(text: &str) -> Option<String> {
    check_chat(text).ok()
}

/// Where a `draw` takes its card from.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum DrawFrom {
    /// The top of the face-down stock.
    Stock,
    /// The pile: its top card, or the named `card` of the previous throw.
    Pile,
}

/// Everything a client may send.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum ClientMessage {
    // Boxed, as the rare large message, so that every other message (an action is a few bytes)
    // is moved and queued at its own size, not the `hello`'s 168 bytes.
    /// Join a room (the first message on a socket).
    Hello(Box<Hello>),
    /// Lobby: move to this empty seat.
    TakeSeat {
        /// The seat, from 0.
        seat: usize,
    },
    /// Lobby, host only: play with these settings.
    SetSettings {
        // Boxed, as the `hello` is.
        /// Every setting of the table.
        settings: Box<Settings>,
    },
    /// Lobby, host only: play with a named preset's settings.
    SetPreset {
        /// `standard`, `household` or `yaniv`.
        preset: Preset,
    },
    /// Lobby, host only: put a bot in an empty seat (or change a bot's difficulty).
    AddBot {
        /// The seat, from 0.
        seat: usize,
        /// The bot's difficulty; the table's difficulty when left out.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        difficulty: Option<Difficulty>,
    },
    /// Host only: empty a seat. In the lobby a bot leaves and the seat is empty; a person is
    /// removed from the room (told `bye` with `removed`, closed with 4005, their seat token
    /// refused) until the host lets them back with `readmit`. Once the match has started only a
    /// person can be removed, and a bot of the table's difficulty takes their seat for the rest
    /// of the match; everyone is told with a `notice`.
    ClearSeat {
        /// The seat, from 0.
        seat: usize,
    },
    /// During a match, host only: a bot plays the turns of the person in this seat from now on,
    /// until that person acts again (`back`, or a move at the start of their turn). Everyone is
    /// told with a `notice`.
    HandToBot {
        /// The seat, from 0.
        seat: usize,
    },
    /// During a match: the person whose turns a stand-in bot is playing (they were away, ran
    /// out of time twice in a row, or the host handed their seat to a bot) takes their seat back;
    /// a turn the bot has begun is finished by it.
    Back,
    /// Host only: let a removed person back into the room (their seat token works again).
    Readmit {
        /// Their place in the room's `removed` list, from 0.
        removed: usize,
    },
    /// Lobby, host only: start the match; bots fill every empty seat.
    Start,
    /// Play: call (at the start of your turn, at or under the limit).
    Call,
    /// Play: draw one card.
    Draw {
        /// `stock` or `pile`.
        from: DrawFrom,
        /// With `pile`: the card to take, where several could be taken (or to be explicit).
        #[serde(default, skip_serializing_if = "Option::is_none")]
        card: Option<Card>,
    },
    /// Play: throw one legal group; the cards land in this order, the last on top.
    Throw {
        /// The cards, in the order they land.
        cards: Vec<Card>,
    },
    /// Between rounds: this seat has read the result and is ready for the next deal.
    Ready {
        /// A fresh client seed for the next deal, with the commitment it answers (see
        /// [`SeedAnswer`]). One naming another commitment refuses the whole message.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        client_seed: Option<SeedAnswer>,
    },
    /// Any time while seated: randomness of your own for the deals, in force from the next deal
    /// (see `hello`). The web client sends a fresh one whenever the room shows a new
    /// commitment, so that its seed is chosen after the server's.
    ClientSeed {
        /// The seed, with the commitment it answers (see [`SeedAnswer`]).
        client_seed: SeedAnswer,
    },
    /// A seated person says something at the table: 1 to 200 characters, plain text.
    Chat {
        /// What they say.
        text: String,
    },
    /// Anyone in the room (seated or watching) reacts, shown briefly beside their seat.
    React {
        /// One of the fixed reactions.
        reaction: Reaction,
    },
    /// Host only: mute (or unmute) the person in a seat, who may then read the chat but not
    /// write in it.
    Mute {
        /// The seat, from 0.
        seat: usize,
        /// `true` to mute, `false` to let them speak again.
        muted: bool,
    },
    /// Host only: remove a watcher (a spectator) from the room. Every watcher from that address
    /// gets a `bye` with the reason `removed` and is closed with 4005, and nobody new comes in
    /// from the address (to watch or to sit) until the host lets them back
    /// (`readmit_watcher`).
    RemoveWatcher {
        /// The watcher's number in the room's `watchers` list (its `id`).
        watcher: u32,
    },
    /// Host only: let a removed watcher's address back in.
    ReadmitWatcher {
        /// Their place in the room's `removed_watchers` list, from 0.
        removed: usize,
    },
    /// Host only: allow watchers, or turn watching off. Off, every watcher gets a `bye` with
    /// the reason `watching_off` and is closed with 4007, and a `hello` to watch is refused with
    /// `watching_off`, until the host allows watchers again.
    SetWatching {
        /// `true` to allow watchers, `false` to turn watching off.
        allowed: bool,
    },
    /// After the match, host only: back to the lobby with the same people, where the settings
    /// and seats can be changed before the next match (`start` begins it).
    ToLobby,
    /// After the match: this seat wants another match in the same room.
    Rematch {
        /// A fresh client seed for the next match's first deal, answering the next match's
        /// commitment (see [`SeedAnswer`]). One naming another commitment refuses the whole
        /// message.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        client_seed: Option<SeedAnswer>,
    },
    /// Send the whole view again: this client's view is not the version a `patch` built on (it
    /// missed one). Answered with `history` and a whole `state`; in the lobby, with nothing.
    Resync,
    /// Are you there? Answered at once with `pong` (carrying this message's `id`), before or
    /// after `hello`. A page sends one every few seconds and when it comes back to the
    /// foreground, so it can tell a stalled connection from a quiet table. Counted against the
    /// message rate like any message.
    Ping,
    /// On your turn, at a table whose `hints` setting is on: ask the coach what it would do.
    /// Answered with `hint` (to you alone) once it has weighed the moves, usually within a tenth
    /// of a second; refused with `hints_off`, `not_your_turn`, `not_seated`, or `coach_busy` when
    /// the server's thinking pool is full.
    Hint,
    /// Once a match is over, while the room still shows it: ask the coach to review your own
    /// decisions in it (a watcher names the `seat`, which a seated person may leave out or must
    /// name as their own). Answered with `review` (to you alone); refused with `no_review` (no
    /// match over to review), `not_your_seat`, `no_such_seat`, or `coach_busy`.
    Review {
        /// The seat to review; your own when left out.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        seat: Option<usize>,
    },
}

impl From<Hello> for ClientMessage {
    /// A `hello` as the message it is.
    fn from(hello: Hello) -> ClientMessage {
        ClientMessage::Hello(Box::new(hello))
    }
}

impl ClientMessage {
    /// Every `type` a client may send.
    pub const TYPES: [&'static str; 27] = [
        "hello",
        "take_seat",
        "set_settings",
        "set_preset",
        "add_bot",
        "clear_seat",
        "hand_to_bot",
        "back",
        "readmit",
        "start",
        "call",
        "draw",
        "throw",
        "ready",
        "client_seed",
        "chat",
        "react",
        "mute",
        "remove_watcher",
        "readmit_watcher",
        "set_watching",
        "to_lobby",
        "rematch",
        "resync",
        "ping",
        "hint",
        "review",
    ];

    /// This message's `type`.
    pub fn type_name(&self) -> &'static str {
        match self {
            ClientMessage::Hello(_) => "hello",
            ClientMessage::TakeSeat { .. } => "take_seat",
            ClientMessage::SetSettings { .. } => "set_settings",
            ClientMessage::SetPreset { .. } => "set_preset",
            ClientMessage::AddBot { .. } => "add_bot",
            ClientMessage::ClearSeat { .. } => "clear_seat",
            ClientMessage::HandToBot { .. } => "hand_to_bot",
            ClientMessage::Back => "back",
            ClientMessage::Readmit { .. } => "readmit",
            ClientMessage::Start => "start",
            ClientMessage::Call => "call",
            ClientMessage::Draw { .. } => "draw",
            ClientMessage::Throw { .. } => "throw",
            ClientMessage::Ready { .. } => "ready",
            ClientMessage::ClientSeed { .. } => "client_seed",
            ClientMessage::Chat { .. } => "chat",
            ClientMessage::React { .. } => "react",
            ClientMessage::Mute { .. } => "mute",
            ClientMessage::RemoveWatcher { .. } => "remove_watcher",
            ClientMessage::ReadmitWatcher { .. } => "readmit_watcher",
            ClientMessage::SetWatching { .. } => "set_watching",
            ClientMessage::ToLobby => "to_lobby",
            ClientMessage::Rematch { .. } => "rematch",
            ClientMessage::Resync => "resync",
            ClientMessage::Ping => "ping",
            ClientMessage::Hint => "hint",
            ClientMessage::Review { .. } => "review",
        }
    }
}

/// Turns a `draw`'s `from` and `card` into the engine's [`Source`], or says why they do not fit.
pub fn draw_source(from: DrawFrom, card: Option<Card>) -> Result<Source, &'static str> {
    match (from, card) {
        (DrawFrom::Stock, None) => Ok(Source::Stock),
        (DrawFrom::Stock, Some(_)) => Err("a draw from the stock cannot name a card"),
        (DrawFrom::Pile, None) => Ok(Source::Pile),
        (DrawFrom::Pile, Some(card)) => Ok(Source::PileCard(card)),
    }
}

/// Why a message's shape was refused. `code` is `bad_message` or `unknown_type`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ParseError {
    /// [`codes::BAD_MESSAGE`] or [`codes::UNKNOWN_TYPE`].
    pub code: &'static str,
    /// A sentence saying what is wrong.
    pub message: String,
    /// The message's `id`, when it could be read, so the error can echo it.
    pub id: Option<MessageId>,
}

/// Reads a client message: JSON, an object, a known `type`, fields that fit it.
pub fn parse_client_message(text: &str) -> Result<ClientEnvelope, ParseError> {
    quick_parse(text).map_or_else(|| parse_client_message_through_value(text), Ok)
}

/// Just a message's `type` and `id`, read without building anything else.
#[derive(Deserialize)]
struct Tag<'a> {
    /// The `type`, if it is a string.
    #[serde(rename = "type", borrow, default)]
    kind: Option<std::borrow::Cow<'a, str>>,
    /// The `id`, if there is one.
    #[serde(default)]
    id: Option<MessageId>,
}

/// A move (a `draw` or a `throw`) read in one pass: its `type`, its `id` and every field either
/// move has. Any other field fails it, and the message goes the way of any other: a field passed
/// over here would be read there (a number out of range, nesting past `serde_json`'s limit).
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct Move<'a> {
    /// The `type`, a string.
    #[serde(rename = "type", borrow)]
    kind: std::borrow::Cow<'a, str>,
    /// The `id`, if there is one.
    #[serde(default)]
    id: Option<MessageId>,
    /// A `draw`'s, as [`ClientMessage::Draw`]'s.
    #[serde(default)]
    from: Option<DrawFrom>,
    /// A `draw`'s, as [`ClientMessage::Draw`]'s.
    #[serde(default)]
    card: Option<Card>,
    /// A `throw`'s, as [`ClientMessage::Throw`]'s.
    #[serde(default)]
    cards: Option<Vec<Card>>,
}

impl Move<'_> {
    /// The message, if this is a `draw` with only a draw's fields or a `throw` with only a
    /// throw's: what [`ClientEnvelope`] reads of the same text. `None` for anything else.
    fn envelope(self) -> Option<ClientEnvelope> {
        let message = match (self.kind.as_ref(), self.from, self.card, self.cards) {
            ("draw", Some(from), card, None) => ClientMessage::Draw { from, card },
            ("throw", None, None, Some(cards)) => ClientMessage::Throw { cards },
            _ => return None,
        };
        Some(ClientEnvelope {
            id: self.id,
            message,
        })
    }
}

/// The way a well-formed message takes. A move, most of a room's messages, is read in one pass
/// into its own fields ([`Move`]): read as the internally tagged `ClientMessage`, it would
/// first be buffered whole into serde's `Content` and read again from there. Any other message
/// has a first look at its `type` (a string naming a message: serde would take a number there
/// as a variant's index) and its `id`, and then the text is read straight into a
/// [`ClientMessage`], which passes over the `id` as it does any field it does not know (the
/// envelope's flattening would buffer the whole message once more).
/// `None` for anything else, which [`parse_client_message_through_value`] then reads again to
/// say what is wrong: a message this accepts, that reads the same (the fuzz tests hold the two
/// equal on every input they make). It saves about 4,000 instructions of a room's action
/// (`cargo bench -p dhumbal-server --bench instructions`).
fn quick_parse(text: &str) -> Option<ClientEnvelope> {
    // An object: serde reads a struct, and an internally tagged enum, from an array too
    // (`["ready"]`), which a message is not.
    if !text.trim_start().starts_with('{') {
        return None;
    }
    let envelope = match plain_move(text).or_else(|| {
        serde_json::from_str::<Move<'_>>(text)
            .ok()
            .and_then(Move::envelope)
    }) {
        Some(envelope) => envelope,
        None => read_by_type(text)?,
    };
    if let ClientMessage::Draw { from, card } = &envelope.message {
        draw_source(*from, *card).ok()?;
    }
    Some(envelope)
}

/// A move written as the clients write one, read byte by byte: `{"type":"draw","from":"stock"}`
/// or `"pile"`, then maybe `,"card":` and a card or `null`; or `{"type":"throw","cards":[…]}`
/// with one card or more; either maybe with `,"id":` and a whole number, and nothing else (no
/// space, no escape, no other order). It reads what `serde_json` reads of the same text (a test
/// holds them equal, and the fuzz tests hold the whole parse to the way through a `Value`);
/// `None` for any other text, which goes the general way. Most of a room's messages take this
/// way, at a fraction of the general one's instructions.
fn plain_move(text: &str) -> Option<ClientEnvelope> {
    let mut rest = text.strip_prefix(r#"{"type":""#)?;
    let message = if let Some(after) = rest.strip_prefix(r#"draw","from":""#) {
        let (from, after) = match after.strip_prefix(r#"stock""#) {
            Some(after) => (DrawFrom::Stock, after),
            None => (DrawFrom::Pile, after.strip_prefix(r#"pile""#)?),
        };
        rest = after;
        let mut card = None;
        if let Some(after) = rest.strip_prefix(r#","card":"#) {
            rest = match after.strip_prefix("null") {
                Some(after) => after,
                None => {
                    let (read, after) = plain_card(after)?;
                    card = Some(read);
                    after
                }
            };
        }
        ClientMessage::Draw { from, card }
    } else {
        rest = rest.strip_prefix(r#"throw","cards":["#)?;
        let mut cards = Vec::with_capacity(2);
        loop {
            let (card, after) = plain_card(rest)?;
            cards.push(card);
            rest = after.get(1..)?;
            match after.as_bytes()[0] {
                b',' => {}
                b']' => break,
                _ => return None,
            }
        }
        ClientMessage::Throw { cards }
    };
    let id = match rest.strip_prefix(r#","id":"#) {
        Some(after) => {
            let digits = after.bytes().take_while(u8::is_ascii_digit).count();
            // JSON writes no leading zero; `u64` holds the rest, or it is not this way's.
            if digits == 0 || (digits > 1 && after.starts_with('0')) {
                return None;
            }
            let number = after[..digits].parse().ok()?;
            rest = &after[digits..];
            Some(MessageId::Number(number))
        }
        None => None,
    };
    (rest == "}").then_some(ClientEnvelope { id, message })
}

/// A card's name in quotes at the start of `text` (letters and digits only: no escape), and
/// what follows it.
fn plain_card(text: &str) -> Option<(Card, &str)> {
    let inner = text.strip_prefix('"')?;
    let len = inner.bytes().take(4).position(|b| b == b'"')?;
    let name = &inner[..len];
    if !name.bytes().all(|b| b.is_ascii_alphanumeric()) {
        return None;
    }
    Some((name.parse().ok()?, &inner[len + 1..]))
}

/// A message read by its `type` ([`Tag`]) and then as the [`ClientMessage`] it names.
fn read_by_type(text: &str) -> Option<ClientEnvelope> {
    let tag: Tag<'_> = serde_json::from_str(text).ok()?;
    let kind = tag.kind?;
    if !ClientMessage::TYPES.contains(&kind.as_ref()) {
        return None;
    }
    Some(ClientEnvelope {
        id: tag.id,
        message: serde_json::from_str(text).ok()?,
    })
}

/// Reads a client message as [`parse_client_message`] does, always through a
/// [`serde_json::Value`]: the way that says exactly what is wrong with one that does not parse,
/// which `parse_client_message` takes for anything its quicker way does not read. Public so that
/// the fuzz tests can hold the two ways equal.
pub fn parse_client_message_through_value(text: &str) -> Result<ClientEnvelope, ParseError> {
    let value: serde_json::Value = serde_json::from_str(text).map_err(|e| ParseError {
        code: codes::BAD_MESSAGE,
        message: format!("the message is not JSON: {e}"),
        id: None,
    })?;
    let serde_json::Value::Object(object) = &value else {
        return Err(ParseError {
            code: codes::BAD_MESSAGE,
            message: "a message must be a JSON object with a \"type\"".into(),
            id: None,
        });
    };
    let id = object
        .get("id")
        .and_then(|id| serde_json::from_value::<MessageId>(id.clone()).ok());
    let Some(kind) = object.get("type") else {
        return Err(ParseError {
            code: codes::BAD_MESSAGE,
            message: "a message must have a \"type\"".into(),
            id,
        });
    };
    let Some(kind) = kind.as_str() else {
        return Err(ParseError {
            code: codes::BAD_MESSAGE,
            message: "the \"type\" must be a string".into(),
            id,
        });
    };
    if !ClientMessage::TYPES.contains(&kind) {
        return Err(ParseError {
            code: codes::UNKNOWN_TYPE,
            message: format!(
                "there is no message type \"{}\"; the types are {}",
                kind.chars().take(40).collect::<String>(),
                ClientMessage::TYPES.join(", ")
            ),
            id,
        });
    }
    let kind = kind.to_owned();
    let envelope: ClientEnvelope = serde_json::from_value(value).map_err(|e| ParseError {
        code: codes::BAD_MESSAGE,
        message: format!("a \"{kind}\" message does not fit: {e}"),
        id: id.clone(),
    })?;
    if let ClientMessage::Draw { from, card } = &envelope.message {
        draw_source(*from, *card).map_err(|e| ParseError {
            code: codes::BAD_MESSAGE,
            message: e.into(),
            id: id.clone(),
        })?;
    }
    Ok(envelope)
}

#[cfg(test)]
mod tests {
    use super::*;
    use dhumbal_engine::parse_cards;

    /// A move read as a plain struct reads as the tagged message would, and one with any other
    /// field goes the tagged way: a field nested past `serde_json`'s limit, or a number out of
    /// range, is refused as it always was (the fuzz tests found the first).
    #[test]
    fn a_move_reads_as_the_tagged_message_would() {
        let deep = format!("{}1{}", r#"{"a":"#.repeat(200), "}".repeat(200));
        for text in [
            r#"{"type":"throw","cards":["7H","7S"],"id":3}"#.to_owned(),
            r#"{"id":"x","type":"draw","from":"pile","card":"QS"}"#.to_owned(),
            r#"{"type":"draw","from":"stock","card":null}"#.to_owned(),
            r#"{"type":"throw","cards":["7H"],"cards":["7S"]}"#.to_owned(),
            r#"{"type":"throw","cards":["7H"],"extra":1e400}"#.to_owned(),
            format!(r#"{{"type":"throw","cards":["7H"],"extra":{deep}}}"#),
            format!(r#"{{"type":"draw","from":"stock","extra":{deep}}}"#),
            r#"{"type":"draw","from":"stock","card":"QS"}"#.to_owned(),
            r#"{"type":"draw","from":null}"#.to_owned(),
            r#"{"type":"draw","cards":["7H"],"from":"stock"}"#.to_owned(),
            r#"{"type":"throw","cards":["7H"],"from":"stock"}"#.to_owned(),
            r#"{"type":"throw","cards":["7H"],"card":null}"#.to_owned(),
            r#"{"type":"throw","cards":["7h"]}"#.to_owned(),
            r#"{"type":"throw","cards":[7]}"#.to_owned(),
            r#"{"type":"throw","cards":["7H"],"id":-1}"#.to_owned(),
            r#"{"type":"throw","cards":["7H"],"id":1.5}"#.to_owned(),
            r#"{"type":"throw","cards":["7H"],"id":null}"#.to_owned(),
            r#"{"type":"dr\u0061w","from":"pile"}"#.to_owned(),
            r#"{"type":"call","from":"pile"}"#.to_owned(),
            r#"{"type":"call","id":7}"#.to_owned(),
            r#"{"type":1,"from":"pile"}"#.to_owned(),
        ] {
            assert_eq!(
                parse_client_message(&text),
                parse_client_message_through_value(&text),
                "{text}"
            );
        }
        assert!(
            parse_client_message(&format!(r#"{{"type":"throw","cards":["7H"],"x":{deep}}}"#))
                .is_err()
        );
    }

    /// An `id` reads as the untagged enum serde derives would read it, and is refused where that
    /// is, with its sentence.
    #[test]
    fn a_message_id_reads_as_the_derived_untagged_enum_would() {
        /// The derive, under the same name (its sentence names the enum).
        mod derived {
            #[derive(Debug, serde::Deserialize)]
            #[serde(untagged)]
            pub(super) enum MessageId {
                Number(u64),
                Text(String),
            }
        }
        use derived::MessageId as Derived;
        let derived = |d: Derived| match d {
            Derived::Number(n) => MessageId::Number(n),
            Derived::Text(s) => MessageId::Text(s),
        };
        for text in [
            "0",
            "7",
            "18446744073709551615",
            "18446744073709551616",
            "-1",
            "1.5",
            "1e3",
            r#""x""#,
            r#""\u00e9""#,
            "true",
            "null",
            "[1]",
            r#"{"a":1}"#,
        ] {
            let ours = serde_json::from_str::<MessageId>(text).map_err(|e| e.is_data());
            let theirs = serde_json::from_str::<Derived>(text)
                .map(derived)
                .map_err(|e| e.is_data());
            assert_eq!(ours, theirs, "{text}");
            let value: serde_json::Value = serde_json::from_str(text).unwrap();
            let ours =
                serde_json::from_value::<MessageId>(value.clone()).map_err(|e| e.to_string());
            let theirs = serde_json::from_value::<Derived>(value)
                .map(derived)
                .map_err(|e| e.to_string());
            assert_eq!(ours, theirs, "{text}");
        }
    }

    /// A move written as the clients write one reads as `serde_json` reads it, and anything
    /// near it goes the general way and reads the same as through a `Value`.
    #[test]
    fn a_plain_move_reads_as_serde_reads_it() {
        let deck = dhumbal_engine::full_deck(true);
        let mut texts = Vec::new();
        for (i, card) in deck.iter().enumerate() {
            let (card, next) = (card.name(), deck[(i + 7) % deck.len()].name());
            let far = u64::MAX - i as u64;
            texts.extend([
                format!(r#"{{"type":"throw","cards":["{card}"]}}"#),
                format!(r#"{{"type":"throw","cards":["{card}","{next}"],"id":{i}}}"#),
                format!(r#"{{"type":"draw","from":"pile","card":"{card}"}}"#),
                format!(r#"{{"type":"draw","from":"stock","card":"{card}"}}"#),
                format!(r#"{{"type":"draw","from":"pile","card":"{card}","id":{far}}}"#),
            ]);
        }
        for text in &texts {
            assert!(plain_move(text).is_some(), "{text}");
        }
        let near = [
            r#"{"type":"draw","from":"stock"}"#,
            r#"{"type":"draw","from":"pile"}"#,
            r#"{"type":"draw","from":"stock","card":null}"#,
            r#"{"type":"draw","from":"stock","id":0}"#,
            r#"{"type":"draw","from":"stock","id":01}"#,
            r#"{"type":"draw","from":"stock","id":18446744073709551616}"#,
            r#"{"type":"draw","from":"stock","id":-1}"#,
            r#"{"type":"draw","from":"stock","id":}"#,
            r#"{"type":"draw","from":"stock"} "#,
            r#"{"type":"draw","from":"stock"}}"#,
            r#"{"type":"draw","from":"stocks"}"#,
            r#"{"type":"draw","from":"pile","card":"ZZ"}"#,
            r#"{"type":"draw","from":"pile","card":"10H"#,
            r#"{"type":"draw","from":"pile","card":"Q\u0053"}"#,
            r#"{"type":"throw","cards":[]}"#,
            r#"{"type":"throw","cards":["7H",]}"#,
            r#"{"type":"throw","cards":["7H""7S"]}"#,
            r#"{"type":"throw","cards":["7H"],"cards":["7S"]}"#,
            r#"{"type":"throw","cards":["7H"]"#,
            r#"{"type":"throw","cards":["7H""#,
            r#"{"type":"throw","cards":["7H"],"id":"x"}"#,
            r#"{"type":"throw","cards":["7H"],"id":3,"id":4}"#,
            r#"{"type":"throw","cards":["é"]}"#,
            r#"{"type":"throw","cards":["7H"] }"#,
        ];
        for text in texts.iter().map(String::as_str).chain(near) {
            assert_eq!(
                parse_client_message(text),
                parse_client_message_through_value(text),
                "{text}"
            );
            if let Some(read) = plain_move(text) {
                let serde: ClientEnvelope = serde_json::from_str(text).unwrap();
                assert_eq!(read, serde, "{text}");
            }
        }
    }

    #[test]
    fn the_hello_of_the_issue_parses_exactly() {
        let text = r#"{"type":"hello","protocol":1,"room":"CODE","name":"Asha","token":null}"#;
        let envelope = parse_client_message(text).unwrap();
        let hello = Hello {
            protocol: 1,
            room: "CODE".into(),
            name: "Asha".into(),
            token: None,
            spectator: false,
            host_secret: None,
            client_seed: None,
        };
        assert_eq!(envelope.message, ClientMessage::from(hello.clone()));
        assert_eq!(envelope.id, None);
        assert_eq!(
            serde_json::to_string(&ClientEnvelope::from(ClientMessage::from(hello))).unwrap(),
            text
        );
    }

    #[test]
    fn every_message_round_trips_and_its_type_is_listed() {
        let messages = vec![
            ClientMessage::TakeSeat { seat: 2 },
            ClientMessage::SetSettings {
                settings: Preset::Yaniv.settings().into(),
            },
            ClientMessage::SetPreset {
                preset: Preset::Household,
            },
            ClientMessage::AddBot {
                seat: 1,
                difficulty: Some(Difficulty::Hard),
            },
            ClientMessage::ClearSeat { seat: 1 },
            ClientMessage::Start,
            ClientMessage::Call,
            ClientMessage::Draw {
                from: DrawFrom::Pile,
                card: Some("QS".parse().unwrap()),
            },
            ClientMessage::Throw {
                cards: parse_cards("3S 3H").unwrap(),
            },
            ClientMessage::Ready { client_seed: None },
            ClientMessage::Rematch { client_seed: None },
        ];
        for message in messages {
            let envelope = ClientEnvelope {
                id: Some(MessageId::Number(9)),
                message,
            };
            let text = serde_json::to_string(&envelope).unwrap();
            let value: serde_json::Value = serde_json::from_str(&text).unwrap();
            assert_eq!(value["type"], envelope.message.type_name());
            assert!(ClientMessage::TYPES.contains(&envelope.message.type_name()));
            assert_eq!(parse_client_message(&text).unwrap(), envelope, "{text}");
        }
    }

    #[test]
    fn shape_errors_have_their_codes_and_echo_the_id() {
        let cases = [
            ("{not json", codes::BAD_MESSAGE, None),
            ("[1,2]", codes::BAD_MESSAGE, None),
            // A message is an object, not an array that serde would read as one.
            (r#"["ready"]"#, codes::BAD_MESSAGE, None),
            (r#" ["rematch", null]"#, codes::BAD_MESSAGE, None),
            (
                r#"{"id":3}"#,
                codes::BAD_MESSAGE,
                Some(MessageId::Number(3)),
            ),
            (
                r#"{"type":5,"id":"a"}"#,
                codes::BAD_MESSAGE,
                Some(MessageId::Text("a".into())),
            ),
            (
                r#"{"type":"dance","id":4}"#,
                codes::UNKNOWN_TYPE,
                Some(MessageId::Number(4)),
            ),
            (
                r#"{"type":"throw","cards":["ZZ"],"id":5}"#,
                codes::BAD_MESSAGE,
                Some(MessageId::Number(5)),
            ),
            (r#"{"type":"take_seat"}"#, codes::BAD_MESSAGE, None),
            (
                r#"{"type":"draw","from":"stock","card":"AS"}"#,
                codes::BAD_MESSAGE,
                None,
            ),
            (
                r#"{"type":"draw","from":"floor"}"#,
                codes::BAD_MESSAGE,
                None,
            ),
        ];
        // Every case is tried, and every one that fails is named, not just the first.
        let failed: Vec<String> = cases
            .iter()
            .filter_map(|(text, code, id)| match parse_client_message(text) {
                Ok(message) => Some(format!("{text}: parsed as {message:?}")),
                Err(e) if (e.code, &e.id) != (*code, id) => Some(format!(
                    "{text}: {} {:?} ({}), not {code}",
                    e.code, e.id, e.message
                )),
                Err(_) => None,
            })
            .collect();
        assert!(
            failed.is_empty(),
            "{} of {} cases failed:\n{}",
            failed.len(),
            cases.len(),
            failed.join("\n")
        );
    }
}
