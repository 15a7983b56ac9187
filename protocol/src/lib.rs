//! The messages between a Dhumbal server and its clients: JSON over a WebSocket.
//!
//! Every message is a JSON object with a `type` tag in snake_case. A client sends
//! [`ClientMessage`]s (wrapped in a [`ClientEnvelope`] that may carry an `id`, echoed by any
//! `error` that answers it); the server sends [`ServerMessage`]s. The first message on a socket is
//! always `hello`, exactly like this:
//!
//! ```
//! use dhumbal_protocol::{ClientMessage, parse_client_message};
//!
//! let text = r#"{"type":"hello","protocol":2,"room":"CODE","name":"Asha","token":null}"#;
//! let envelope = parse_client_message(text).unwrap();
//! assert!(matches!(envelope.message, ClientMessage::Hello(_)));
//! ```
//!
//! The game's own values (cards, settings, a seat's view, public events, round results) travel in
//! the engine's serde form; [`json_schema`] describes all of it, and `docs/protocol.md` explains
//! every message with an example.
//!
//! # Layout
//!
//! - [`client`] — what a client may send ([`ClientMessage`]) and how it is parsed
//!   ([`parse_client_message`]), with the shape errors `bad_message` and `unknown_type`.
//! - [`server`] — what the server sends ([`ServerMessage`]) and the room description
//!   ([`RoomState`]).
//! - [`patch`] — the view as a patch: after a change each client gets only the fields of its
//!   view that changed ([`ViewPatch`]), built for every client at once by [`PatchFrames`].
//! - [`history`] — the round's log and the match's results as a client keeps them
//!   ([`History::follow`]), since a `state` does not repeat them.
//! - [`http`] — the JSON bodies of the HTTP API (`POST /api/rooms`, `GET /api/rooms/{code}`,
//!   `GET /api/presets`, `POST /api/settings/check`, `GET /api/invite-base`).
//! - [`coach`] — the coach's answers to `hint` and `review` ([`coach::Advice`],
//!   [`coach::Review`]): the bots crate's own types, re-exported, since the coach lives there.
//! - [`text`] — the character rules for names and chat lines.
//! - [`codes`] — the stable error codes of the protocol itself (the engine adds its rule codes).
//! - `schema` — the JSON Schema ([`json_schema`]), generated from the messages and the engine's own
//!   wire types (its `schemars` feature).

pub mod client;
/// The coach's answers (`hint`, `review`), the bots crate's own types on the wire.
pub use dhumbal_bots::coach;
pub mod codes;
pub mod history;
pub mod http;
pub mod patch;
mod schema;
pub mod server;
pub mod text;

pub use client::{
    CHAT_KEPT_LINES, CHAT_MAX_CHARS, ChatError, ClientEnvelope, ClientMessage, DrawFrom, Hello,
    MessageId, ParseError, Reaction, SeedAnswer, check_chat, clean_chat, draw_source,
    parse_client_message, parse_client_message_through_value,
};
pub use history::History;
pub use http::{
    ApiError, CheckedSettings, CreateRoom, CreatedRoom, InviteBase, Presets, RoomSummary,
};
pub use patch::{
    HeldView, OwnView, PatchFrames, Stale, Told, ViewPatch, write_action_json, write_cards_json,
    write_event_json,
};
pub use schema::json_schema;
pub use server::{
    Bye, ChatLine, ErrorMessage, Fairness, LedgerRow, MatchResult, Notice, Patch, RoomState,
    SeatInfo, SeatKind, ServerMessage, Stage, StateFrames, TurnClock, Watcher, Welcome, WhileAway,
};

/// The protocol's version. A `hello` carrying another version is refused with
/// [`codes::UNSUPPORTED_PROTOCOL`]. Version 4: a client seed names the commitment it answers
/// ([`SeedAnswer`]) and the server acknowledges each one it takes (`client_seed_taken`). Version
/// 5: after a change each client gets a `patch` of its view with a version number, instead of a
/// whole `state` ([`patch`]); `resync` asks for the whole view again; `ping` is answered with
/// `pong`, so a page can tell a stalled connection from a quiet one.
pub const PROTOCOL_VERSION: u32 = 6;

/// The WebSocket close code sent to a connection whose seat was taken back by another connection
/// presenting the same seat token (the newer connection wins).
pub const CLOSE_REPLACED: u16 = 4001;

/// The WebSocket close code sent when a client's message is over the size cap ("message too
/// big").
pub const CLOSE_TOO_BIG: u16 = 1009;

/// The WebSocket close code sent when a client's text frame is not UTF-8 ("invalid frame
/// payload data", RFC 6455 §7.4.1).
pub const CLOSE_INVALID_DATA: u16 = 1007;

/// The WebSocket close code ("going away") sent to every client when the server shuts down,
/// right after a `bye` with the reason `shutting_down`.
pub const CLOSE_GOING_AWAY: u16 = 1001;

/// The WebSocket close code ("policy violation") sent to a client that keeps sending faster than
/// the rate limit allows, right after a `bye` with the reason `rate_limited`.
pub const CLOSE_POLICY_VIOLATION: u16 = 1008;

/// The WebSocket close code sent to a connection that answered nothing, not even the server's
/// pings, for two and a half ping intervals: the server treats it as gone (the seat is kept for a
/// reconnection).
pub const CLOSE_NO_PONG: u16 = 4002;

/// The WebSocket close code ("service restart") sent to every client when a server that keeps
/// its rooms (`--store sqlite`) restarts, right after a `bye` with the reason `restarting`:
/// reconnect with the seat token, with a growing pause, until it is back.
pub const CLOSE_SERVICE_RESTART: u16 = 1012;

/// The WebSocket close code sent to a connection that did not say `hello` within
/// `--hello-timeout`, right after a `bye` with the reason `hello_timeout`.
pub const CLOSE_NO_HELLO: u16 = 4003;

/// The WebSocket close code sent to every client of a room that closed because its match never
/// started within `--lobby-ttl`, right after a `bye` with the reason `room_expired`.
pub const CLOSE_ROOM_EXPIRED: u16 = 4004;

/// The WebSocket close code sent to a person the host removed from the room, right after a
/// `bye` with the reason `removed`.
pub const CLOSE_REMOVED: u16 = 4005;

/// The WebSocket close code sent to every watcher of a room whose host turned watching off,
/// right after a `bye` with the reason `watching_off`.
pub const CLOSE_WATCHING_OFF: u16 = 4007;

/// The WebSocket close code sent to every client of a room this node no longer holds (in a
/// cluster, another node has claimed it), right after a `bye` with the reason `room_moved`: the
/// client reconnects at once, with its seat token, and finds the room where it now is.
pub const CLOSE_ROOM_MOVED: u16 = 4006;

/// The WebSocket close code (RFC 6455's "try again later") sent after a `hello` refused with
/// `store_unavailable`, right after a `bye` with that reason: the client reconnects by itself
/// after a growing pause.
pub const CLOSE_TRY_AGAIN_LATER: u16 = 1013;

/// Writes a 32-byte seed as 64 lowercase hex digits, the way `match_result` reveals seeds.
pub fn seed_hex(seed: &[u8; 32]) -> String {
    dhumbal_engine::Hex32(*seed).to_string()
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every complete JSON example in `docs/protocol.md` (one per line in a `json` block; lines
    /// shortened with `…` are left out) reads as the message or body it shows.
    #[test]
    fn the_examples_in_the_docs_are_real_messages() {
        let path = concat!(env!("CARGO_MANIFEST_DIR"), "/../docs/protocol.md");
        let docs = std::fs::read_to_string(path).unwrap();
        let mut in_json = false;
        let mut checked = 0;
        for line in docs.lines() {
            match line.trim() {
                "```json" => in_json = true,
                "```" => in_json = false,
                example if in_json && !example.is_empty() && !example.contains('…') => {
                    let fits = parse_client_message(example).is_ok()
                        || serde_json::from_str::<ServerMessage>(example).is_ok()
                        || serde_json::from_str::<CreateRoom>(example).is_ok()
                        || serde_json::from_str::<CreatedRoom>(example).is_ok()
                        || serde_json::from_str::<RoomSummary>(example).is_ok()
                        || serde_json::from_str::<Presets>(example).is_ok()
                        || serde_json::from_str::<CheckedSettings>(example).is_ok()
                        || serde_json::from_str::<ApiError>(example).is_ok();
                    assert!(
                        fits,
                        "this example in docs/protocol.md is not a message: {example}"
                    );
                    checked += 1;
                }
                _ => {}
            }
        }
        assert!(checked >= 20, "only {checked} examples were found");
    }

    /// Regression: `docs/protocol.md` said "Version 1" for a year after protocol 2. Its version
    /// line and every `"protocol":` in its examples name the version the server speaks.
    #[test]
    fn the_docs_name_the_protocol_version_the_server_speaks() {
        let path = concat!(env!("CARGO_MANIFEST_DIR"), "/../docs/protocol.md");
        let docs = std::fs::read_to_string(path).unwrap();
        let first = docs.lines().find(|l| l.starts_with("Version")).unwrap();
        assert!(
            first.starts_with(&format!("Version **{PROTOCOL_VERSION}**")),
            "docs/protocol.md says: {first}"
        );
        for (at, _) in docs.match_indices("\"protocol\":") {
            let rest = &docs[at + "\"protocol\":".len()..];
            let number: String = rest.chars().take_while(char::is_ascii_digit).collect();
            assert_eq!(
                number,
                PROTOCOL_VERSION.to_string(),
                "near {}",
                &docs[at..at + 20]
            );
        }
        // Regression (issue 35): the table of `hello`'s fields said `protocol` is `2` while the
        // server spoke 3. Every table row for a `protocol` field names the version too.
        let rows: Vec<&str> = docs
            .lines()
            .filter(|l| l.starts_with("| `protocol` |"))
            .collect();
        assert!(!rows.is_empty(), "no row for hello's protocol field");
        for row in rows {
            assert!(
                row.starts_with(&format!("| `protocol` | `{PROTOCOL_VERSION}`")),
                "docs/protocol.md says: {row}"
            );
        }
    }

    /// Every code in [`codes`] is in `docs/protocol.md`, and every close code the server sends is
    /// described among the basics' close codes: a client written from the docs knows each.
    #[test]
    fn the_docs_list_every_code_and_close_code() {
        let path = concat!(env!("CARGO_MANIFEST_DIR"), "/../docs/protocol.md");
        let docs = std::fs::read_to_string(path).unwrap();
        let source = include_str!("codes.rs");
        let mut listed = 0;
        for line in source.lines() {
            let Some(value) = line
                .trim()
                .strip_prefix("pub const ")
                .and_then(|rest| rest.split_once("&str = \""))
                .and_then(|(_, value)| value.strip_suffix("\";"))
            else {
                continue;
            };
            assert!(
                docs.contains(&format!("`{value}`")),
                "docs/protocol.md does not mention `{value}`"
            );
            listed += 1;
        }
        assert!(listed >= 40, "only {listed} codes were found in codes.rs");
        let basics = docs
            .split_once("\n## The basics\n")
            .and_then(|(_, rest)| rest.split_once("\n## ").map(|(basics, _)| basics))
            .expect("docs/protocol.md has a basics section");
        for close in [
            CLOSE_GOING_AWAY,
            CLOSE_POLICY_VIOLATION,
            CLOSE_TOO_BIG,
            CLOSE_INVALID_DATA,
            CLOSE_SERVICE_RESTART,
            CLOSE_REPLACED,
            CLOSE_NO_PONG,
            CLOSE_NO_HELLO,
            CLOSE_ROOM_EXPIRED,
            CLOSE_REMOVED,
            CLOSE_ROOM_MOVED,
        ] {
            assert!(
                basics.contains(&format!("`{close}`")),
                "docs/protocol.md's close codes do not describe {close}"
            );
        }
    }

    #[test]
    fn seeds_are_written_as_hex() {
        let mut seed = [0u8; 32];
        seed[0] = 0xab;
        seed[31] = 0x01;
        let hex = seed_hex(&seed);
        assert_eq!(hex.len(), 64);
        assert!(hex.starts_with("ab00"));
        assert!(hex.ends_with("0001"));
    }
}
