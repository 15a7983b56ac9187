//! The stable error codes of the protocol.
//!
//! An `error` message carries one of these codes, a code of the engine's rules
//! (`not_your_turn`, `illegal_group`, … — see `dhumbal_engine::RuleError::code`), or a code of
//! the settings' validation (`bad_players`, … — see `dhumbal_engine::SettingsError::code`).
//! Codes never change meaning; new ones may be added.

/// The message is not JSON, not an object, has no `type`, or its fields do not fit its type.
pub const BAD_MESSAGE: &str = "bad_message";
/// The message's `type` is not one the server knows.
pub const UNKNOWN_TYPE: &str = "unknown_type";
/// The message is larger than the server accepts.
pub const TOO_BIG: &str = "too_big";
/// The `hello` names a protocol version the server does not speak.
pub const UNSUPPORTED_PROTOCOL: &str = "unsupported_protocol";
/// Something other than `hello` came before `hello`.
pub const HELLO_FIRST: &str = "hello_first";
/// A second `hello` on a socket that has already joined a room.
pub const ALREADY_JOINED: &str = "already_joined";
/// No room has this code.
pub const UNKNOWN_ROOM: &str = "unknown_room";
/// The `hello` names a room other than the one in the socket's path (`/ws/{code}`): a socket
/// opened for one room cannot join another (a load balancer routed it by the path's code).
pub const ROOM_MISMATCH: &str = "room_mismatch";
/// Every seat is taken (a `hello` may still watch with `spectator: true`).
pub const ROOM_FULL: &str = "room_full";
/// The seat token is not one this room gave out.
pub const BAD_TOKEN: &str = "bad_token";
/// The host secret is not this room's.
pub const BAD_HOST_SECRET: &str = "bad_host_secret";
/// The name is empty or too long.
pub const BAD_NAME: &str = "bad_name";
/// Only a seated player may do that; spectators only watch.
pub const NOT_SEATED: &str = "not_seated";
/// Only the host may do that.
pub const NOT_HOST: &str = "not_host";
/// The play message came from a seat whose turn it is not. (The engine's `not_your_turn`.)
pub const NOT_YOUR_TURN: &str = "not_your_turn";
/// The seat number is not at this table.
pub const NO_SUCH_SEAT: &str = "no_such_seat";
/// The seat is already occupied.
pub const SEAT_TAKEN: &str = "seat_taken";
/// A seat that would disappear with the new player count is held by a person.
pub const SEATS_OCCUPIED: &str = "seats_occupied";
/// The host cannot empty their own seat.
pub const OWN_SEAT: &str = "own_seat";
/// Lobby actions are only possible before the match starts.
pub const ALREADY_STARTED: &str = "already_started";
/// Play is only possible once the match has started.
pub const NOT_STARTED: &str = "not_started";
/// A bot is finishing this turn for a person who was away; the seat is theirs again from their
/// next turn.
pub const STAND_IN_PLAYING: &str = "stand_in_playing";
/// `ready` is only meaningful between rounds.
pub const NOT_BETWEEN_ROUNDS: &str = "not_between_rounds";
/// `rematch` is only meaningful once the match is over.
pub const MATCH_NOT_OVER: &str = "match_not_over";
/// Fixed decks are only accepted by a server started with `--allow-test-decks`.
pub const TEST_DECKS_DISABLED: &str = "test_decks_disabled";
/// The server holds as many rooms as it may.
pub const TOO_MANY_ROOMS: &str = "too_many_rooms";
/// The client sent more messages than the rate limit allows; the message was not handled.
/// A client that keeps on is told `bye` with this reason and closed with 1008.
pub const RATE_LIMITED: &str = "rate_limited";
/// Too many lookups of unknown rooms came from this address within the last minute; every
/// lookup from it (`hello`, `GET /api/rooms/{code}`) is refused until the minute has passed.
pub const TOO_MANY_ATTEMPTS: &str = "too_many_attempts";
/// The server holds as many connections as it may (the WebSocket upgrade, `GET /ws` or
/// `GET /ws/{code}`, answers 503).
pub const TOO_MANY_CONNECTIONS: &str = "too_many_connections";
/// A browser page from an origin the server does not allow tried to open the WebSocket
/// (`GET /ws` or `GET /ws/{code}` answers 403).
pub const FORBIDDEN_ORIGIN: &str = "forbidden_origin";
/// A WebSocket upgrade asked for a compression the server does not speak: `?compress=` takes
/// only `deflate-raw` (`GET /ws` or `GET /ws/{code}` answers 400).
pub const UNSUPPORTED_COMPRESSION: &str = "unsupported_compression";
/// `POST /api/rooms` was not sent as JSON (`Content-Type: application/json`).
pub const UNSUPPORTED_MEDIA_TYPE: &str = "unsupported_media_type";
/// Rooms created from the client's address are still open, as many as one address may have.
pub const TOO_MANY_OPEN_ROOMS: &str = "too_many_open_rooms";
/// The reason in `bye` when a WebSocket did not say `hello` in time (`--hello-timeout`); it is
/// then closed with 4003.
pub const HELLO_TIMEOUT: &str = "hello_timeout";
/// The reason in `bye` when a room whose match never started reached its lifetime
/// (`--lobby-ttl`) and closed; its sockets are then closed with 4004.
pub const ROOM_EXPIRED: &str = "room_expired";
/// The host removed this person from the room: the reason in their `bye` (their socket is then
/// closed with 4005), and the error when their seat token comes back. They may come back only
/// once the host lets them (`readmit`).
pub const REMOVED: &str = "removed";
/// Nobody removed from this room has that number (`readmit`).
pub const NOT_REMOVED: &str = "not_removed";
/// Another person at this table already goes by that name.
pub const NAME_TAKEN: &str = "name_taken";
/// The reason in `bye` when the server restarts and keeps its rooms (close code 1012): come back
/// with the seat token in a moment, to the same seat and cards.
pub const RESTARTING: &str = "restarting";
/// The reason in `bye` when this node no longer holds the room (in a cluster, another node has
/// claimed it; close code 4006): reconnect at once with the seat token, to the same seat.
pub const ROOM_MOVED: &str = "room_moved";
/// The reason in `bye` when the server shuts down and its rooms end with it (close code 1001).
pub const SHUTTING_DOWN: &str = "shutting_down";
/// A chat message must be 1 to 200 characters of plain text on one line.
pub const BAD_CHAT: &str = "bad_chat";
/// The host muted this person: they may read the chat but not write in it.
pub const MUTED: &str = "muted";
/// That seat holds no person (a bot or nobody): it cannot be muted.
pub const NOT_A_PERSON: &str = "not_a_person";
/// `back` came from a seat whose turns no stand-in bot is playing.
pub const NOT_AWAY: &str = "not_away";
/// `hand_to_bot` named a seat whose turns a bot already plays (until its person acts again).
pub const ALREADY_STAND_IN: &str = "already_stand_in";
/// A hand history was asked for without a credential that fits: the `Authorization: Bearer`
/// header must carry the seat token of someone who sat in the match, or its revealed seed.
pub const UNAUTHORIZED: &str = "unauthorized";
/// The server keeps no hand history of that match (never finished, or past `--keep-matches`).
pub const UNKNOWN_MATCH: &str = "unknown_match";
/// The server cannot reach the store that keeps the rooms just now (in a cluster, Redis): the
/// `hello` or the new room was refused and changed nothing. As a `bye` reason it comes right
/// after the refused `hello`, with close code 1013 (try again later): the client comes back by
/// itself, with a growing pause.
pub const STORE_UNAVAILABLE: &str = "store_unavailable";
/// Sent by a cluster's HAProxy (`docker/haproxy.cfg`), never by a server: a socket opened at
/// `/ws` is refused with HTTP 421, because only `/ws/{code}` reaches the node that holds the room.
pub const ROOM_PATH_REQUIRED: &str = "room_path_required";
/// A client seed named a commitment that is not the one the room shows now (the match moved on,
/// or the seed was chosen before the page saw the commitment): the seed was not taken, and a
/// `ready` or `rematch` carrying it changed nothing. Send a fresh seed for the commitment in the
/// latest `room`.
pub const STALE_COMMITMENT: &str = "stale_commitment";
/// The room has as many watchers as it may (`--max-watchers`): a `hello` to watch is refused.
pub const WATCHERS_FULL: &str = "watchers_full";
/// The host turned watching off for this room: a `hello` to watch is refused, and as the reason
/// in `bye` (close code 4007) it ends every watcher's socket when the host turns it off.
pub const WATCHING_OFF: &str = "watching_off";
/// No watcher of the room has that number (`remove_watcher`).
pub const NO_SUCH_WATCHER: &str = "no_such_watcher";
/// The room is getting more reactions than the table can follow just now (a room-wide limit,
/// with a smaller share for its watchers): this one was not shown.
pub const TOO_MANY_REACTIONS: &str = "too_many_reactions";
/// Something went wrong inside the server; it has been logged.
pub const INTERNAL: &str = "internal";
/// `hint` at a table whose `hints` setting is off.
pub const HINTS_OFF: &str = "hints_off";
/// The coach is busy: the server's thinking pool has no room for a hint or a review now; ask
/// again in a moment.
pub const COACH_BUSY: &str = "coach_busy";
/// `review` with no match over to review (the match is still being played, or none has ended
/// since the room last went back to the lobby).
pub const NO_REVIEW: &str = "no_review";
/// A seated person asked for the review of another seat: the room reviews your own seat only
/// (anyone may review any seat with the revealed match seed, `GET
/// /api/rooms/{code}/matches/{number}/review?seat=N`).
pub const NOT_YOUR_SEAT: &str = "not_your_seat";
