//! Every refusal the server gives, in one place: [`Refusal`], one variant per reason, each with
//! its stable protocol code ([`Refusal::code`]), its sentence for people (its `Display`), and
//! the HTTP status it answers with where it can happen over HTTP ([`Refusal::status`]).
//!
//! The room, the connection and the HTTP API all refuse through it: a WebSocket client gets an
//! `error` message ([`Refusal::message`]), an HTTP client a JSON body with the status (its
//! [`IntoResponse`]). A failure inside the server (an OS error, a store that failed) is made
//! with [`Refusal::internal`], which logs the detail; the client only ever learns `internal`.

use std::fmt::Display;

use axum::Json;
use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};
use dhumbal_engine::{RuleError, SettingsError};
use dhumbal_protocol::{
    ApiError, ChatError, MessageId, PROTOCOL_VERSION, ParseError, ServerMessage, codes,
};

/// Why a request was refused. Nothing changed; only the sender is told.
#[derive(Debug, thiserror::Error)]
pub enum Refusal {
    // ----- The message itself -----
    /// The message does not parse, or its fields do not fit its type.
    #[error("{message}")]
    Parse {
        /// `bad_message` or `unknown_type`.
        code: &'static str,
        /// What is wrong.
        message: String,
    },
    /// A binary WebSocket message: the protocol is JSON in text messages.
    #[error("send JSON in text messages, not binary ones")]
    Binary,
    /// A body over HTTP that is not what the endpoint takes.
    #[error("{0}")]
    BadBody(String),
    /// An HTTP body that was not sent as JSON.
    #[error("send the room's request as JSON, with Content-Type: application/json")]
    UnsupportedMediaType,
    /// Too many messages too fast; this one was not handled.
    #[error("too many messages too fast; this one was not handled")]
    RateLimited,
    /// Rooms are being created too fast from one address.
    #[error("rooms are being created too fast from your address; wait a minute")]
    CreatingTooFast,

    // ----- Joining -----
    /// The `hello` names a protocol version this server does not speak.
    #[error("this server speaks protocol {PROTOCOL_VERSION}")]
    UnsupportedProtocol,
    /// A message other than `hello` came first.
    #[error(
        "say hello first: {{\"type\":\"hello\",\"protocol\":{PROTOCOL_VERSION},\"room\":…,\"name\":…,\"token\":null}}"
    )]
    HelloFirst,
    /// A second `hello` on a joined connection.
    #[error("this connection has already joined a room")]
    AlreadyJoined,
    /// No room has that code.
    #[error("there is no room with that code")]
    UnknownRoom,
    /// The `hello` names a room other than the one in the socket's path (`/ws/{code}`).
    #[error(
        "this socket was opened for another room: say hello to the room in its path (/ws/{{code}})"
    )]
    RoomMismatch,
    /// The address failed too many lookups; answered alike whether the room exists or not.
    #[error("too many room codes that do not exist came from your address; wait a minute")]
    TooManyAttempts,
    /// The host secret is not the room's.
    #[error("that is not this room's host secret")]
    BadHostSecret,
    /// The seat token is not one of the room's.
    #[error("that seat token is not one of this room's")]
    BadToken,
    /// The name cannot be used (empty, too long, invisible, reserved).
    #[error("{0}")]
    BadName(String),
    /// Another seated person goes by that name.
    #[error("someone at this table already goes by that name; choose another")]
    NameTaken,
    /// The host removed this person.
    #[error("the host removed you from this room; ask them to let you back")]
    Removed,
    /// The room has as many watchers as it may.
    #[error("this room has as many watchers as it may; try again later")]
    WatchersFull,
    /// The host turned watching off.
    #[error("the host has turned watching off for this room")]
    WatchingOff,
    /// Every seat is taken.
    #[error("every seat is taken; you can still watch (spectator: true)")]
    RoomFull,

    // ----- Permission and the room's stage -----
    /// A client seed named a commitment other than the one the room shows now.
    #[error(
        "this client seed answers a commitment the room does not show now; send a fresh seed for the commitment in the latest room"
    )]
    StaleCommitment,
    /// A spectator tried what only a seated person may do.
    #[error("you are watching; only seated players can do that")]
    NotSeated,
    /// Someone other than the host tried a host's action.
    #[error("only the host can do that")]
    NotHost,
    /// The seat is not at this table.
    #[error("there is no seat {0} at this table")]
    NoSuchSeat(usize),
    /// The seat is taken (by a person, for a bot; by anyone, for a person).
    #[error("seat {0} is taken")]
    SeatTaken(usize),
    /// Fewer seats would leave a seated person without one.
    #[error("a person sits in a seat the new settings would take away")]
    SeatsOccupied,
    /// The host tried to do to their own seat what is only for others' (empty, mute, hand to a
    /// bot).
    #[error("the host cannot do that to their own seat")]
    OwnSeat,
    /// The seat holds a bot or nobody, and the action is for a person.
    #[error("seat {0} holds no person")]
    NotAPerson(usize),
    /// A lobby action after the match started.
    #[error("the match has started; that is only possible in the lobby")]
    AlreadyStarted,
    /// A match action before the match started.
    #[error("the match has not started yet")]
    NotStarted,
    /// `ready` outside the pause between rounds.
    #[error("ready is for the pause between rounds")]
    NotBetweenRounds,
    /// An after-the-match action before the match is over.
    #[error("that is only possible once the match is over")]
    MatchNotOver,
    /// `hint` at a table whose hints setting is off.
    #[error("this table does not allow hints; the host can turn them on in the settings")]
    HintsOff,
    /// The thinking pool has no room for the coach now.
    #[error("the coach is busy just now; ask again in a moment")]
    CoachBusy,
    /// `review` with no finished match to review.
    #[error("there is no finished match to review here")]
    NoReview,
    /// A seated person asked for the review of another seat.
    #[error(
        "at the table you can review only your own seat; with the match seed you can review any"
    )]
    NotYourSeat,
    /// A bot is finishing the turn it began for this person.
    #[error("a bot is finishing this turn for you; your seat is yours again from your next turn")]
    StandInPlaying,
    /// `back` from someone no bot is playing for.
    #[error("no bot is playing for you: your seat is already yours")]
    NotAway,
    /// The seat is already marked away.
    #[error("a bot already plays seat {0} until its person acts again")]
    AlreadyStandIn(usize),
    /// Nobody removed has that number.
    #[error("nobody removed from this room is number {0}")]
    NotRemoved(usize),
    /// No watcher has that number.
    #[error("nobody watching this room is number {0}")]
    NoSuchWatcher(u32),
    /// The room-wide reaction limit.
    #[error("the table is getting more reactions than it can follow; this one was not shown")]
    TooManyReactions,
    /// The host muted this person.
    #[error("the host has muted you: you can read the chat but not write in it")]
    Muted,
    /// A chat line that is not one line of visible plain text of the right length.
    #[error("{0}")]
    BadChat(ChatError),

    // ----- The rules and the settings -----
    /// The engine refused the move.
    #[error("{0}")]
    Rule(#[from] RuleError),
    /// The settings cannot be played.
    #[error("{0}")]
    Settings(#[from] SettingsError),
    /// Fixed decks need `--allow-test-decks`.
    #[error("fixed decks need a server started with --allow-test-decks")]
    TestDecksDisabled,

    // ----- The server's limits -----
    /// The server holds as many rooms as it may.
    #[error("the server holds as many rooms as it may; try again later")]
    TooManyRooms,
    /// Rooms created from this address are still open, as many as it may have.
    #[error(
        "rooms created from your address are still open, as many as one address may have; play in one of them or wait for them to close"
    )]
    TooManyOpenRooms,
    /// The server, or the client's address, holds as many connections as it may.
    #[error("{0} holds as many connections as it may; try again later")]
    TooManyConnections(&'static str),
    /// A WebSocket asked for a compression (`?compress=…`) the server does not speak.
    #[error(
        "this server compresses a socket only as ?compress=deflate-raw; leave it out for text frames"
    )]
    UnsupportedCompression,
    /// A browser page of a foreign origin tried to open the game's WebSocket.
    #[error("pages of this origin may not open the game's WebSocket")]
    ForbiddenOrigin,
    /// The server is shutting down.
    #[error("the server is shutting down; try again in a moment")]
    ShuttingDown,
    /// The store that keeps the rooms (Redis, in a cluster) cannot be reached just now.
    #[error(
        "the server cannot reach the store that keeps the rooms just now; try again in a moment"
    )]
    StoreUnavailable,

    // ----- Hand histories -----
    /// No credential that fits was sent for a hand history.
    #[error(
        "send the seat token you played this match with, or its revealed seed, as `Authorization: Bearer …`"
    )]
    Unauthorized,
    /// No hand history of that match is kept for this credential: none is kept, or the
    /// credential is not one of its seat tokens or its seed (one answer for both).
    #[error(
        "this server keeps no hand history of that match for that credential: send the seat token you played it with, or its revealed seed"
    )]
    UnknownMatch,

    /// Something failed inside the server. Its detail was logged where it happened (see
    /// [`Refusal::internal`]) and never reaches the client.
    #[error("something went wrong on the server; it has been logged")]
    Internal,
}

impl Refusal {
    /// An internal failure: logs `detail` (an OS error, a store error, a broken invariant) with
    /// `context`, and gives the client nothing but `internal`.
    pub fn internal(context: &str, detail: impl Display) -> Refusal {
        tracing::error!(error = %detail, "{context}");
        Refusal::Internal
    }

    /// A store failure: `store_unavailable` when the store could not be reached (logged as a
    /// warning: it comes back by itself), [`Refusal::internal`] for anything else.
    pub fn store(context: &str, error: &crate::store::StoreError) -> Refusal {
        if error.is_unreachable() {
            tracing::warn!(%error, "{context}");
            Refusal::StoreUnavailable
        } else {
            Refusal::internal(context, error)
        }
    }

    /// The stable protocol code.
    pub fn code(&self) -> &'static str {
        match self {
            Refusal::Parse { code, .. } => code,
            Refusal::Binary | Refusal::BadBody(_) => codes::BAD_MESSAGE,
            Refusal::UnsupportedMediaType => codes::UNSUPPORTED_MEDIA_TYPE,
            Refusal::RateLimited | Refusal::CreatingTooFast => codes::RATE_LIMITED,
            Refusal::UnsupportedProtocol => codes::UNSUPPORTED_PROTOCOL,
            Refusal::HelloFirst => codes::HELLO_FIRST,
            Refusal::AlreadyJoined => codes::ALREADY_JOINED,
            Refusal::UnknownRoom => codes::UNKNOWN_ROOM,
            Refusal::RoomMismatch => codes::ROOM_MISMATCH,
            Refusal::TooManyAttempts => codes::TOO_MANY_ATTEMPTS,
            Refusal::BadHostSecret => codes::BAD_HOST_SECRET,
            Refusal::BadToken => codes::BAD_TOKEN,
            Refusal::BadName(_) => codes::BAD_NAME,
            Refusal::NameTaken => codes::NAME_TAKEN,
            Refusal::Removed => codes::REMOVED,
            Refusal::RoomFull => codes::ROOM_FULL,
            Refusal::WatchersFull => codes::WATCHERS_FULL,
            Refusal::WatchingOff => codes::WATCHING_OFF,
            Refusal::NoSuchWatcher(_) => codes::NO_SUCH_WATCHER,
            Refusal::TooManyReactions => codes::TOO_MANY_REACTIONS,
            Refusal::NotSeated => codes::NOT_SEATED,
            Refusal::StaleCommitment => codes::STALE_COMMITMENT,
            Refusal::NotHost => codes::NOT_HOST,
            Refusal::NoSuchSeat(_) => codes::NO_SUCH_SEAT,
            Refusal::SeatTaken(_) => codes::SEAT_TAKEN,
            Refusal::SeatsOccupied => codes::SEATS_OCCUPIED,
            Refusal::OwnSeat => codes::OWN_SEAT,
            Refusal::NotAPerson(_) => codes::NOT_A_PERSON,
            Refusal::AlreadyStarted => codes::ALREADY_STARTED,
            Refusal::NotStarted => codes::NOT_STARTED,
            Refusal::NotBetweenRounds => codes::NOT_BETWEEN_ROUNDS,
            Refusal::MatchNotOver => codes::MATCH_NOT_OVER,
            Refusal::HintsOff => codes::HINTS_OFF,
            Refusal::CoachBusy => codes::COACH_BUSY,
            Refusal::NoReview => codes::NO_REVIEW,
            Refusal::NotYourSeat => codes::NOT_YOUR_SEAT,
            Refusal::StandInPlaying => codes::STAND_IN_PLAYING,
            Refusal::NotAway => codes::NOT_AWAY,
            Refusal::AlreadyStandIn(_) => codes::ALREADY_STAND_IN,
            Refusal::NotRemoved(_) => codes::NOT_REMOVED,
            Refusal::Muted => codes::MUTED,
            Refusal::BadChat(_) => codes::BAD_CHAT,
            Refusal::Rule(e) => e.code(),
            Refusal::Settings(e) => e.code(),
            Refusal::TestDecksDisabled => codes::TEST_DECKS_DISABLED,
            Refusal::TooManyRooms => codes::TOO_MANY_ROOMS,
            Refusal::TooManyOpenRooms => codes::TOO_MANY_OPEN_ROOMS,
            Refusal::TooManyConnections(_) => codes::TOO_MANY_CONNECTIONS,
            Refusal::UnsupportedCompression => codes::UNSUPPORTED_COMPRESSION,
            Refusal::ForbiddenOrigin => codes::FORBIDDEN_ORIGIN,
            Refusal::ShuttingDown => codes::SHUTTING_DOWN,
            Refusal::StoreUnavailable => codes::STORE_UNAVAILABLE,
            Refusal::Unauthorized => codes::UNAUTHORIZED,
            Refusal::UnknownMatch => codes::UNKNOWN_MATCH,
            Refusal::Internal => codes::INTERNAL,
        }
    }

    /// The HTTP status it answers with over HTTP (refusals that only happen on a WebSocket
    /// answer 400 or 409 too, should one ever reach HTTP).
    pub fn status(&self) -> StatusCode {
        match self {
            Refusal::Parse { .. }
            | Refusal::Binary
            | Refusal::BadBody(_)
            | Refusal::UnsupportedProtocol
            | Refusal::HelloFirst
            | Refusal::RoomMismatch
            | Refusal::UnsupportedCompression
            | Refusal::BadName(_)
            | Refusal::BadChat(_)
            | Refusal::NoSuchSeat(_)
            | Refusal::Rule(_)
            | Refusal::Settings(_) => StatusCode::BAD_REQUEST,
            Refusal::UnsupportedMediaType => StatusCode::UNSUPPORTED_MEDIA_TYPE,
            Refusal::RateLimited
            | Refusal::CreatingTooFast
            | Refusal::TooManyAttempts
            | Refusal::TooManyOpenRooms
            | Refusal::TooManyReactions => StatusCode::TOO_MANY_REQUESTS,
            Refusal::UnknownRoom | Refusal::UnknownMatch => StatusCode::NOT_FOUND,
            Refusal::Unauthorized => StatusCode::UNAUTHORIZED,
            Refusal::BadHostSecret
            | Refusal::BadToken
            | Refusal::Removed
            | Refusal::NotSeated
            | Refusal::NotHost
            | Refusal::Muted
            | Refusal::HintsOff
            | Refusal::NotYourSeat
            | Refusal::WatchingOff
            | Refusal::ForbiddenOrigin
            | Refusal::TestDecksDisabled => StatusCode::FORBIDDEN,
            Refusal::TooManyRooms
            | Refusal::TooManyConnections(_)
            | Refusal::ShuttingDown
            | Refusal::CoachBusy
            | Refusal::StoreUnavailable => StatusCode::SERVICE_UNAVAILABLE,
            Refusal::Internal => StatusCode::INTERNAL_SERVER_ERROR,
            Refusal::AlreadyJoined
            | Refusal::NameTaken
            | Refusal::RoomFull
            | Refusal::WatchersFull
            | Refusal::NoSuchWatcher(_)
            | Refusal::SeatTaken(_)
            | Refusal::SeatsOccupied
            | Refusal::OwnSeat
            | Refusal::NotAPerson(_)
            | Refusal::AlreadyStarted
            | Refusal::NotStarted
            | Refusal::NotBetweenRounds
            | Refusal::MatchNotOver
            | Refusal::NoReview
            | Refusal::StandInPlaying
            | Refusal::NotAway
            | Refusal::AlreadyStandIn(_)
            | Refusal::NotRemoved(_)
            | Refusal::StaleCommitment => StatusCode::CONFLICT,
        }
    }

    /// The `error` message for a WebSocket client, echoing the refused message's `id`.
    pub fn message(&self, id: Option<MessageId>) -> ServerMessage {
        ServerMessage::error(self.code(), self.to_string(), id)
    }
}

impl From<ParseError> for Refusal {
    fn from(e: ParseError) -> Refusal {
        Refusal::Parse {
            code: e.code,
            message: e.message,
        }
    }
}

impl IntoResponse for Refusal {
    fn into_response(self) -> Response {
        let body = ApiError {
            code: self.code().to_owned(),
            message: self.to_string(),
        };
        (self.status(), Json(body)).into_response()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_internal_failure_reaches_the_client_as_internal_without_its_detail() {
        let os = std::io::Error::from_raw_os_error(28);
        let refusal = Refusal::internal("the room's log could not be written", &os);
        assert_eq!(refusal.code(), "internal");
        assert_eq!(refusal.status(), StatusCode::INTERNAL_SERVER_ERROR);
        let text = refusal.message(None).to_json();
        assert!(!text.contains("os error"), "{text}");
        assert!(!text.contains(&os.to_string()), "{text}");
        let body = refusal.into_response();
        assert_eq!(body.status(), StatusCode::INTERNAL_SERVER_ERROR);
    }

    #[test]
    fn every_refusal_has_a_protocol_code_and_a_sentence() {
        let all = [
            Refusal::Binary,
            Refusal::UnsupportedProtocol,
            Refusal::HelloFirst,
            Refusal::RoomMismatch,
            Refusal::OwnSeat,
            Refusal::NoSuchSeat(9),
            Refusal::TooManyConnections("your address"),
            Refusal::Settings(SettingsError::TurnTimer(45)),
            Refusal::Internal,
        ];
        for refusal in all {
            let code = refusal.code();
            assert!(
                code.chars().all(|c| c.is_ascii_lowercase() || c == '_'),
                "{code}"
            );
            let sentence = refusal.to_string();
            assert!(
                !sentence.is_empty() && !sentence.ends_with('.'),
                "{sentence}"
            );
        }
    }
}
