//! End-to-end tests: a real server on `127.0.0.1:0`, real WebSocket clients.
//!
//! - `api` — the HTTP API: creating rooms, looking them up, refusals, the presets and the
//!   check of a room's settings, the health check.
//! - `matches` — whole matches: two people and two bots; fifty rooms at once. Every frame any
//!   client receives is scanned for cards its seat may not see.
//! - `bad_input` — each kind of bad input gets its own error and leaves the game as it was.
//! - `scores` — fixed test decks reproduce the standard table's worked examples exactly.
//! - `history` — a `state` leaves the history out; a late arrival gets it whole in `history`,
//!   equal to what the players kept from the events.
//! - `lobby` — seats, bots, presets and the host's powers before the match.
//! - `reconnect` — coming back with the seat token, stand-in bots for away people, spectators.
//! - `limits` — the message rate, the connection cap, pings, failed lookups per address, and
//!   the origin check.
//! - `routing` — the room's own socket, `/ws/{code}`: joining through it, a `hello` to another
//!   room refused without effect, `/ws` unchanged, the origin check on both.
//! - `shutdown` — graceful shutdown: `bye`, close 1001, and `run` returning.
//! - `redis_store` — the Redis store against a real `redis-server`: claims restore the log,
//!   fence off the node that held the room, refuse gaps and repeats; deletion, set-aside rooms,
//!   hand histories, and a restart of Redis.
//! - `shared_store` — two servers on one Redis: a room created on one, claimed by the other,
//!   and moved back (`room_moved`, close 4006) with everyone's seat, view and history.
//! - `durable` — a match survives a restart of the server (the SQLite room log); a room closed
//!   for good is not restored.
//! - `chat` — table chat and reactions: plain text to everyone, spectators read and react, the
//!   host mutes, the last 50 lines in `welcome`.
//! - `fairness` — the commitment before the first deal, client seeds bound into the deals, the
//!   seed revealed, and the hand history downloaded and verified.
//! - `ledger` — the room's ledger of its finished matches, counted seat by seat, after a
//!   restart too.
//! - `invite` — invite links that reach a friend's phone: the base for invites (`--public-url`,
//!   the host's Wi-Fi address for a page opened on loopback, else the page's own), the room's QR
//!   code decoded to its link, its 404 and lookup cap, and the binary's startup line.
//! - `patches` — protocol 5: one whole view, then a `patch` per change; a returning person
//!   gets the whole view first; `resync`; `ping` and `pong`; a protocol 4 page is refused.
//! - `coach` — protocol 6's coach: a hint on your turn at a table that allows hints, refusals
//!   everywhere else; the review of a finished match, your own seat at the table and any seat
//!   with the revealed seed over HTTP.
//! - `compressed` — the compressed socket (`?compress=deflate-raw`): the same match as a plain
//!   socket in a fraction of the bytes; any other compression refused at the upgrade.
//! - `common` — helpers shared by these tests.

mod api;
mod bad_input;
mod chat;
mod coach;
mod common;
mod compressed;
mod durable;
mod fairness;
mod history;
mod invite;
mod ledger;
mod limits;
mod lobby;
mod matches;
mod patches;
mod reconnect;
mod redis_store;
mod routing;
mod scores;
mod shared_store;
mod shutdown;
mod table;
