//! The connection's reader: each incoming frame's rate ([`RateLimit`]: `rate_limited`, then
//! `bye` and 1008), size (over the cap the socket refuses it; closed with 1009) and shape
//! ([`parse_client_message`]); `hello` through [`super::hello`] (which must name the room of
//! the socket's path, if it has one); every other message to the room. It also notices silence (no frame, not even a pong, for two and a half ping intervals),
//! a missing `hello`, a kick and the server's shutdown, and says goodbye as each requires.

use std::net::IpAddr;
use std::sync::Arc;

use axum::extract::ws::{Message, Utf8Bytes};
use dhumbal_protocol::{
    CLOSE_GOING_AWAY, CLOSE_INVALID_DATA, CLOSE_NO_HELLO, CLOSE_NO_PONG, CLOSE_POLICY_VIOLATION,
    CLOSE_SERVICE_RESTART, CLOSE_TOO_BIG, CLOSE_TRY_AGAIN_LATER, ClientMessage, Hello, MessageId,
    ServerMessage, codes, parse_client_message,
};
use futures_util::{Stream, StreamExt};
use tokio::time::Instant;
use tracing::debug;

use super::{ClientTx, Outgoing, hello};
use crate::AppState;
use crate::error::Refusal;
use crate::limits::{RateLimit, Verdict};
use crate::room::client::Kick;
use crate::room::{Command, Offer, Request, RoomHandle};

/// How a connection's reader ended.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum ReaderEnd {
    /// The client went, or fell behind, or its seat was taken by another connection.
    Gone,
    /// The client sent a message over the size cap.
    TooBig,
    /// The client sent a text frame that is not UTF-8.
    NotUtf8,
    /// The client kept sending faster than the rate limit.
    RateAbuse,
    /// The client sent nothing, not even a pong, for two and a half ping intervals.
    Silent,
    /// The server is shutting down.
    Shutdown,
    /// The client did not say `hello` within `--hello-timeout`.
    NoHello,
    /// The `hello` was refused because the store could not be reached: the client comes back.
    StoreUnavailable,
}

/// What a frame leaves its reader to wait for.
enum Then {
    /// Nothing: the connection goes on, or ends so.
    Done(Option<ReaderEnd>),
    /// Joining the room a `hello` names.
    Join(Box<Hello>, Option<MessageId>),
    /// The room's queue, full, to take this command.
    Wait(Command),
}

/// One connection's reading side.
pub(super) struct Reader {
    /// The connection's number, for the room and the log.
    pub(super) conn: u64,
    /// The server: its rooms, limits, metrics and shutdown.
    app: Arc<AppState>,
    /// The client's address, for the failed-lookup count.
    ip: IpAddr,
    /// The room code of the socket's path (`/ws/{code}`, normalised), which `hello` must name;
    /// `None` for a socket opened at `/ws`.
    path_room: Option<String>,
    /// The way back to the client: errors, `bye`, the close.
    pub(super) tx: ClientTx,
    /// The room the connection joined, once it has.
    pub(super) room: Option<RoomHandle>,
    /// The client's message rate.
    rate: RateLimit,
}

impl Reader {
    /// A reader for a new connection that has not said `hello` yet, opened for the room
    /// `path_room` (`/ws/{code}`) or for any (`/ws`).
    pub(super) fn new(
        conn: u64,
        app: Arc<AppState>,
        ip: IpAddr,
        path_room: Option<String>,
        tx: ClientTx,
    ) -> Reader {
        let rate = RateLimit::new(
            app.config.message_burst,
            app.config.messages_per_sec,
            app.config.rate_limit_strikes,
        );
        Reader {
            conn,
            app,
            ip,
            path_room,
            tx,
            room: None,
            rate,
        }
    }

    /// Reads until the client goes, misbehaves, falls silent, never says `hello`, is kicked,
    /// or the server shuts down.
    pub(super) async fn run<R>(&mut self, stream: &mut R, kick: &Kick) -> ReaderEnd
    where
        R: Stream<Item = Result<Message, axum::Error>> + Unpin,
    {
        // Anything from the client (a pong included) shows it is there; silence for two and a
        // half ping intervals (two pings unanswered, and half an interval for the last pong to
        // arrive) shows it is not.
        let ping_every = self.app.config.ping_interval;
        let silence = ping_every * 5 / 2;
        let hello_timeout = self.app.config.hello_timeout;
        // Its own ear for the shutdown: waiting on it takes no lock, not even one of its own.
        let stop = self.app.shutdown.listener();
        // Made once and reset, rather than made anew for every message: each registers itself
        // when first polled.
        let stopping = stop.stopped();
        let kicked = kick.kicked();
        // The connection's one timer: it fires at the next ping, or when the client will have
        // been silent too long if that comes first. It is not moved on for every frame (each
        // move is a trip to the timer wheel): when it fires, it is set for whichever comes next.
        // The writer has no timer of its own: the reader queues it each ping.
        let mut heard = Instant::now();
        let mut next_ping = heard + ping_every;
        let beat = tokio::time::sleep(ping_every);
        // Boxed, and let go once the connection has joined: a timer is some hundred bytes, and
        // the task's state is read a dozen lines a frame; one it no longer waits on would sit
        // among them.
        let mut no_hello =
            (!hello_timeout.is_zero()).then(|| Box::pin(tokio::time::sleep(hello_timeout)));
        tokio::pin!(stopping, kicked, beat);
        loop {
            // A frame that is there is read first, so that the shutdown is only looked at when
            // the socket has nothing: a client cannot keep the socket ready for long, past the
            // rate limit.
            let frame = tokio::select! {
                biased;
                frame = stream.next() => frame,
                () = &mut stopping => return ReaderEnd::Shutdown,
                () = &mut kicked => return ReaderEnd::Gone,
                () = &mut beat, if !ping_every.is_zero() => {
                    let now = Instant::now();
                    if heard + silence <= now {
                        return ReaderEnd::Silent;
                    }
                    if next_ping <= now {
                        // A queue too full to take a ping is one the room is about to find
                        // full, and drop the client for.
                        let _ = self.tx.queue.try_send(Outgoing::Ping);
                        next_ping = now + ping_every;
                    }
                    beat.as_mut().reset(next_ping.min(heard + silence));
                    continue;
                }
                () = async { no_hello.as_mut().expect("looked at first").await },
                    if self.room.is_none() && no_hello.is_some() => {
                    return ReaderEnd::NoHello;
                }
            };
            // One clock read a frame, for the silence and the rate.
            let now = Instant::now();
            if !ping_every.is_zero() {
                heard = now;
            }
            // Handled without waiting, but for a `hello` and a room whose queue is full: the
            // task's state then holds no frame's future between frames, and a frame reads
            // fewer of its lines.
            let ending = match self.on_frame(frame, now) {
                Then::Done(ending) => ending,
                Then::Join(hello, id) => self.join(hello, id).await,
                Then::Wait(command) => self.wait_for_room(command).await,
            };
            if let Some(ending) = ending {
                return ending;
            }
            if no_hello.is_some() && self.room.is_some() {
                no_hello = None;
            }
        }
    }

    /// One frame (or the end of the stream), read at `now`: counted against the rate, then
    /// handled, or left to wait for ([`Then`]).
    fn on_frame(&mut self, frame: Option<Result<Message, axum::Error>>, now: Instant) -> Then {
        // Every frame but a close counts against the rate: pings too, or a client could make
        // the server answer pongs as fast as it sends pings.
        if let Some(Ok(
            Message::Text(_) | Message::Binary(_) | Message::Ping(_) | Message::Pong(_),
        )) = frame
        {
            self.app.metrics.messages_in.increment(1);
            match self.rate.check_at(now) {
                Verdict::Allow => {}
                Verdict::Refuse => {
                    self.refuse(&Refusal::RateLimited, None);
                    return Then::Done(None);
                }
                Verdict::Close => return Then::Done(Some(ReaderEnd::RateAbuse)),
            }
        }
        let ending = match frame {
            None => Some(ReaderEnd::Gone),
            Some(Ok(Message::Text(text))) => return self.on_text(text),
            Some(Ok(Message::Binary(_))) => {
                self.refuse(&Refusal::Binary, None);
                None
            }
            // The socket answers the close frame on the next read, which then ends: reading on
            // until then closes cleanly instead of dropping the connection before the answer.
            Some(Ok(Message::Close(_) | Message::Ping(_) | Message::Pong(_))) => None,
            Some(Err(e)) => match read_error(e) {
                ReadError::TooBig => {
                    self.tx.close(CLOSE_TOO_BIG, "message too big");
                    Some(ReaderEnd::TooBig)
                }
                ReadError::NotUtf8 => {
                    self.app.metrics.rejected(codes::BAD_MESSAGE);
                    self.tx.close(CLOSE_INVALID_DATA, "text is not UTF-8");
                    Some(ReaderEnd::NotUtf8)
                }
                ReadError::Other => Some(ReaderEnd::Gone),
            },
        };
        Then::Done(ending)
    }

    /// A text message: parsed, then `hello` joins a room and anything else goes to it.
    fn on_text(&mut self, text: Utf8Bytes) -> Then {
        let envelope = match parse_client_message(text.as_str()) {
            Ok(envelope) => envelope,
            Err(e) => {
                debug!(conn = self.conn, code = e.code, "bad message");
                let id = e.id.clone();
                self.refuse(&Refusal::from(e), id);
                return Then::Done(None);
            }
        };
        let id = envelope.id;
        match (envelope.message, &self.room) {
            (ClientMessage::Ping, _) => {
                // Answered here, in order with what the room sends: a page that hears its pong
                // knows the connection and the server are alive.
                self.tx.send_message(&ServerMessage::Pong { id });
                Then::Done(None)
            }
            (ClientMessage::Hello(hello), None) => Then::Join(hello, id),
            (ClientMessage::Hello(_), Some(_)) => {
                self.refuse(&Refusal::AlreadyJoined, id);
                Then::Done(None)
            }
            (_, None) => {
                self.refuse(&Refusal::HelloFirst, id);
                Then::Done(None)
            }
            (message, Some(room)) => {
                let conn = self.conn;
                match room.offer(Command::Message(Request { conn, id, message })) {
                    Offer::Taken => Then::Done(None),
                    Offer::Full(command) => Then::Wait(command),
                    Offer::Closed => Then::Done(Some(self.room_closed())),
                }
            }
        }
    }

    /// Joins the room `hello` names, or tells the client why not.
    async fn join(&mut self, hello: Box<Hello>, id: Option<MessageId>) -> Option<ReaderEnd> {
        // Boxed: joining (a claim in a shared store, a room restored) is a large future, and
        // every connection's task would otherwise be that large all its life.
        let joined = Box::pin(hello::join(
            &self.app,
            self.conn,
            self.ip,
            &self.tx,
            self.path_room.as_deref(),
            hello,
            id.clone(),
        ))
        .await;
        match joined {
            Ok(room) => self.room = room,
            Err(refusal) => {
                self.refuse(&refusal, id);
                if matches!(refusal, Refusal::StoreUnavailable) {
                    return Some(ReaderEnd::StoreUnavailable);
                }
            }
        }
        None
    }

    /// Waits for the room's queue to take `command` (it was full).
    async fn wait_for_room(&mut self, command: Command) -> Option<ReaderEnd> {
        let room = self.room.as_ref()?;
        if room.send_waiting(command).await {
            return None;
        }
        Some(self.room_closed())
    }

    /// How the connection ends when its room has closed (it stops when the server shuts down).
    fn room_closed(&self) -> ReaderEnd {
        if self.app.shutdown.has_begun() {
            ReaderEnd::Shutdown
        } else {
            ReaderEnd::Gone
        }
    }

    /// Sends a refusal (an `error`, echoing `id`) to the client and counts it.
    fn refuse(&self, refusal: &Refusal, id: Option<MessageId>) {
        self.app.metrics.rejected(refusal.code());
        self.tx.send_message(&refusal.message(id));
    }

    /// Tells the client why the server ends the connection (`bye`, then the close frame), where
    /// the ending calls for it.
    pub(super) fn farewell(&self, ending: ReaderEnd) {
        let (reason, sentence, code, close) = match ending {
            ReaderEnd::Shutdown if self.app.rooms.store().is_durable() => (
                codes::RESTARTING,
                "the server is restarting; you will be back in your seat in a moment",
                CLOSE_SERVICE_RESTART,
                "server restarting",
            ),
            ReaderEnd::Shutdown => (
                codes::SHUTTING_DOWN,
                "the server is shutting down; reconnect with your seat token in a moment",
                CLOSE_GOING_AWAY,
                "server shutting down",
            ),
            ReaderEnd::RateAbuse => (
                codes::RATE_LIMITED,
                "too many messages too fast, for too long",
                CLOSE_POLICY_VIOLATION,
                "rate limit exceeded",
            ),
            ReaderEnd::StoreUnavailable => (
                codes::STORE_UNAVAILABLE,
                "the server cannot reach the store that keeps the rooms just now; coming back in a moment",
                CLOSE_TRY_AGAIN_LATER,
                "store unavailable",
            ),
            ReaderEnd::NoHello => (
                codes::HELLO_TIMEOUT,
                "say hello first, within a few seconds of connecting",
                CLOSE_NO_HELLO,
                "no hello",
            ),
            ReaderEnd::Silent => {
                debug!(
                    conn = self.conn,
                    "closing a connection that answers no pings"
                );
                self.tx.close(CLOSE_NO_PONG, "no answer to pings");
                return;
            }
            ReaderEnd::Gone | ReaderEnd::TooBig | ReaderEnd::NotUtf8 => return,
        };
        debug!(conn = self.conn, reason, "saying goodbye");
        if matches!(ending, ReaderEnd::RateAbuse | ReaderEnd::NoHello) {
            self.app.metrics.rejected(reason);
        }
        self.tx.send_message(&ServerMessage::bye(reason, sentence));
        self.tx.close(code, close);
    }
}

/// What a read error was, as far as the client is told.
enum ReadError {
    /// The socket refused a message over the size cap.
    TooBig,
    /// A text frame was not UTF-8.
    NotUtf8,
    /// Anything else: the connection is gone.
    Other,
}

/// Sorts a read error of the socket.
fn read_error(error: axum::Error) -> ReadError {
    match error
        .into_inner()
        .downcast::<tungstenite::Error>()
        .map(|e| *e)
    {
        Ok(tungstenite::Error::Capacity(_)) => ReadError::TooBig,
        Ok(tungstenite::Error::Utf8(_)) => ReadError::NotUtf8,
        _ => ReadError::Other,
    }
}
