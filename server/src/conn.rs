//! One WebSocket connection: a reader and a writer that only do IO.
//!
//! The writer task drains the connection's bounded outbound queue onto the socket, and pings the
//! client every `--ping-interval`. The reader (the connection's own task) checks each incoming
//! message's size (the socket refuses a message over the cap and is closed with 1009), rate
//! ([`RateLimit`]: `rate_limited`, then `bye` and 1008) and shape ([`parse_client_message`]),
//! handles `hello` by finding the room (counting codes of no room against the address,
//! [`crate::limits::JoinAttempts`]), and hands every other message to the room. A client that
//! sends nothing, not even a pong, for two and a half ping intervals is closed with 4002 as gone. Whichever
//! side ends first ends the other, and the room is told the connection has gone (its seat is
//! kept). When the server shuts down, the client is told `bye` and closed with 1001.

use std::net::IpAddr;
use std::sync::Arc;
use std::sync::atomic::Ordering;
use std::time::Duration;

use axum::extract::ws::{CloseFrame, Message, Utf8Bytes, WebSocket};
use dhumbal_protocol::{
    CLOSE_GOING_AWAY, CLOSE_NO_HELLO, CLOSE_NO_PONG, CLOSE_POLICY_VIOLATION, CLOSE_SERVICE_RESTART,
    CLOSE_TOO_BIG, ClientMessage, MessageId, PROTOCOL_VERSION, ServerMessage, codes,
    parse_client_message,
};
use futures_util::stream::SplitSink;
use futures_util::{SinkExt, StreamExt};
use tokio::sync::{mpsc, oneshot};
use tokio::time::{Instant, Interval, MissedTickBehavior};
use tokio_util::sync::CancellationToken;
use tracing::debug;

use crate::AppState;
use crate::code::normalize;
use crate::error::Refusal;
use crate::limits::{AddressSlot, RateLimit, Slot, Verdict};
use crate::listener::Held;
use crate::room::{Command, RoomHandle};

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
    /// Cancelled to disconnect the client at once (it fell behind, or its writer is stuck).
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

/// How long a socket closed for a message over the cap stays open so that the client can read
/// the close frame.
const CLOSE_LINGER: Duration = Duration::from_secs(1);

/// How long a closing connection's writer may take to flush what is left.
const WRITER_GRACE: Duration = Duration::from_secs(5);

/// The most queued messages one write to a socket carries.
const MAX_BATCH: usize = 64;

/// Writes `first` and every text already waiting in `outbox` (up to [`MAX_BATCH`]) to the socket,
/// then flushes once: an action's events and state leave in one write, not one each. A close
/// found in the queue is put in `held`, to be sent after. Returns how many messages went out, or
/// `None` if the socket failed.
pub(crate) async fn write_batch(
    sink: &mut SplitSink<WebSocket, Message>,
    first: Utf8Bytes,
    outbox: &mut mpsc::Receiver<Outgoing>,
    held: &mut Option<Outgoing>,
) -> Option<u64> {
    let mut text = first;
    let mut sent = 0;
    loop {
        sink.feed(Message::Text(text)).await.ok()?;
        sent += 1;
        if sent == MAX_BATCH as u64 {
            break;
        }
        match outbox.try_recv() {
            Ok(Outgoing::Text(more)) => text = more,
            Ok(other) => {
                *held = Some(other);
                break;
            }
            Err(_) => break,
        }
    }
    sink.flush().await.ok()?;
    Some(sent)
}

/// How a connection's reader loop ended.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Ending {
    /// The client went, or fell behind, or its seat was taken by another connection.
    Gone,
    /// The client sent a message over the size cap.
    TooBig,
    /// The client kept sending faster than the rate limit.
    RateAbuse,
    /// The client sent nothing, not even a pong, for two and a half ping intervals.
    Silent,
    /// The server is shutting down.
    Shutdown,
    /// The client did not say `hello` within `--hello-timeout`.
    NoHello,
}

/// A WebSocket's places under the caps, given back when it ends.
#[derive(Debug)]
pub struct Places {
    /// Its place under `--max-connections`.
    pub _server: Slot,
    /// Its place in its client address's count.
    pub _address: AddressSlot,
    /// Its TCP connection's places ([`crate::listener`]), when it came through the listener.
    pub _tcp: Option<Held>,
}

/// Serves one upgraded WebSocket from the client at `ip` until either side ends it or the
/// server shuts down. `places` are the connection's places under the caps, given back at the
/// end.
pub async fn serve(socket: WebSocket, app: Arc<AppState>, ip: IpAddr, places: Places) {
    let _places = places;
    let conn = app.next_conn.fetch_add(1, Ordering::Relaxed);
    app.metrics.connections.increment(1.0);
    let (mut sink, mut stream) = socket.split();
    let (queue, mut outbox) = mpsc::channel::<Outgoing>(app.config.client_queue);
    let kick = CancellationToken::new();
    let tx = ClientTx {
        queue,
        kick: kick.clone(),
    };

    let writer_kick = kick.clone();
    let metrics = Arc::clone(&app.metrics);
    let mut pings = pinger(app.config.ping_interval);
    let writer = tokio::spawn(async move {
        // A close taken off the queue while batching texts, to be sent after them.
        let mut held: Option<Outgoing> = None;
        // Made once: a cancellation future registers itself when first polled, not on every turn.
        let kicked = writer_kick.cancelled();
        tokio::pin!(kicked);
        loop {
            let next = if let Some(held) = held.take() {
                Some(held)
            } else {
                tokio::select! {
                biased;
                next = outbox.recv() => next,
                () = &mut kicked => None,
                () = tick(&mut pings) => {
                    let sent = tokio::select! {
                        sent = sink.send(Message::Ping(Default::default())) => sent.is_ok(),
                        () = &mut kicked => false,
                    };
                    if !sent {
                        break;
                    }
                    continue;
                }
                }
            };
            match next {
                Some(Outgoing::Text(text)) => {
                    // A socket that stops taking data must not keep this task alive once kicked.
                    let sent = tokio::select! {
                        sent = write_batch(&mut sink, text, &mut outbox, &mut held) => sent,
                        () = &mut kicked => None,
                    };
                    let Some(sent) = sent else {
                        break;
                    };
                    metrics.messages_out.increment(sent);
                }
                Some(Outgoing::Close(code, reason)) => {
                    let frame = CloseFrame {
                        code,
                        reason: reason.into(),
                    };
                    // Kicked once the reader has waited long enough for it.
                    tokio::select! {
                        _ = sink.send(Message::Close(Some(frame))) => {}
                        () = &mut kicked => {}
                    }
                    break;
                }
                None => {
                    // A socket that takes no more data must not keep this task alive.
                    let _ =
                        tokio::time::timeout(WRITER_GRACE, sink.send(Message::Close(None))).await;
                    break;
                }
            }
        }
        writer_kick.cancel();
    });

    let mut room: Option<RoomHandle> = None;
    let mut rate = RateLimit::new(
        app.config.message_burst,
        app.config.messages_per_sec,
        app.config.rate_limit_strikes,
    );
    // Anything from the client (a pong included) shows it is there; silence for two and a half
    // ping intervals (two pings unanswered, and half an interval for the last pong to arrive)
    // shows it is not.
    let silence = app.config.ping_interval * 5 / 2;
    let stop = app.shutdown.token();
    // Made once and reset, rather than made anew for every message: each registers itself when
    // first polled.
    let stopping = stop.cancelled();
    let kicked = kick.cancelled();
    let quiet = tokio::time::sleep(silence);
    // A socket that never says hello must not hold its place for ever.
    let hello_timeout = app.config.hello_timeout;
    let no_hello = tokio::time::sleep(hello_timeout);
    tokio::pin!(stopping, kicked, quiet, no_hello);
    let ending = loop {
        let frame = tokio::select! {
            biased;
            () = &mut stopping => break Ending::Shutdown,
            frame = stream.next() => frame,
            () = &mut kicked => break Ending::Gone,
            () = &mut quiet, if !silence.is_zero() => {
                break Ending::Silent;
            }
            () = &mut no_hello, if room.is_none() && !hello_timeout.is_zero() => {
                break Ending::NoHello;
            }
        };
        if !silence.is_zero() {
            quiet.as_mut().reset(Instant::now() + silence);
        }
        // Every frame but a close counts against the rate: pings too, or a client could make
        // the server answer pongs as fast as it sends pings.
        if matches!(
            frame,
            Some(Ok(Message::Text(_)
                | Message::Binary(_)
                | Message::Ping(_)
                | Message::Pong(_)))
        ) {
            app.metrics.messages_in.increment(1);
            match rate.check() {
                Verdict::Allow => {}
                Verdict::Refuse => {
                    refuse(&app, &tx, &Refusal::RateLimited, None);
                    continue;
                }
                Verdict::Close => break Ending::RateAbuse,
            }
        }
        let text = match frame {
            None => break Ending::Gone,
            // The socket answers the close frame on the next read, which then ends: reading on
            // until then closes cleanly instead of dropping the connection before the answer.
            Some(Ok(Message::Close(_))) => continue,
            Some(Err(e)) => {
                if is_too_big(e) {
                    let _ = tx
                        .queue
                        .try_send(Outgoing::Close(CLOSE_TOO_BIG, "message too big"));
                    break Ending::TooBig;
                }
                break Ending::Gone;
            }
            Some(Ok(Message::Text(text))) => text,
            Some(Ok(Message::Binary(_))) => {
                refuse(&app, &tx, &Refusal::Binary, None);
                continue;
            }
            Some(Ok(Message::Ping(_) | Message::Pong(_))) => continue,
        };
        let envelope = match parse_client_message(text.as_str()) {
            Ok(envelope) => envelope,
            Err(e) => {
                debug!(conn, code = e.code, "bad message");
                let id = e.id.clone();
                refuse(&app, &tx, &Refusal::from(e), id);
                continue;
            }
        };
        let id = envelope.id;
        match (envelope.message, &room) {
            (ClientMessage::Hello(hello), None) => {
                if hello.protocol != PROTOCOL_VERSION {
                    refuse(&app, &tx, &Refusal::UnsupportedProtocol, id);
                    continue;
                }
                // An address that failed too many lookups may still come back to its seat:
                // with a token, the room itself decides (a valid token is never refused).
                let blocked = app.join_attempts.check(ip).is_err();
                if blocked && hello.token.is_none() {
                    refuse(&app, &tx, &Refusal::TooManyAttempts, id);
                    continue;
                }
                let Some(handle) = app.rooms.get(&normalize(&hello.room)) else {
                    if blocked {
                        refuse(&app, &tx, &Refusal::TooManyAttempts, id);
                        continue;
                    }
                    app.join_attempts.fail(ip);
                    refuse(&app, &tx, &Refusal::UnknownRoom, id);
                    continue;
                };
                let (reply, joined) = oneshot::channel();
                let join = Command::Join {
                    conn,
                    hello,
                    id: id.clone(),
                    client: tx.clone(),
                    token_only: blocked,
                    reply,
                };
                if !handle.send(join).await {
                    // The room closed between the lookup and the hello.
                    refuse(&app, &tx, &Refusal::UnknownRoom, id);
                } else if joined.await == Ok(true) {
                    room = Some(handle);
                }
            }
            (ClientMessage::Hello(_), Some(_)) => {
                refuse(&app, &tx, &Refusal::AlreadyJoined, id);
            }
            (_, None) => {
                refuse(&app, &tx, &Refusal::HelloFirst, id);
            }
            (message, Some(handle)) => {
                if !handle.send(Command::Message { conn, id, message }).await {
                    // The room has closed (it stops when the server shuts down).
                    break if app.shutdown.has_begun() {
                        Ending::Shutdown
                    } else {
                        Ending::Gone
                    };
                }
            }
        }
    };
    match ending {
        Ending::Shutdown if app.rooms.store().is_durable() => {
            debug!(conn, "telling the client the server is restarting");
            tx.send_message(&ServerMessage::bye(
                codes::RESTARTING,
                "the server is restarting; you will be back in your seat in a moment",
            ));
            tx.close(CLOSE_SERVICE_RESTART, "server restarting");
        }
        Ending::Shutdown => {
            debug!(conn, "telling the client the server is shutting down");
            tx.send_message(&ServerMessage::bye(
                codes::SHUTTING_DOWN,
                "the server is shutting down; reconnect with your seat token in a moment",
            ));
            tx.close(CLOSE_GOING_AWAY, "server shutting down");
        }
        Ending::RateAbuse => {
            debug!(conn, "closing a connection that keeps sending too fast");
            app.metrics.rejected(codes::RATE_LIMITED);
            tx.send_message(&ServerMessage::bye(
                codes::RATE_LIMITED,
                "too many messages too fast, for too long",
            ));
            tx.close(CLOSE_POLICY_VIOLATION, "rate limit exceeded");
        }
        Ending::Silent => {
            debug!(conn, "closing a connection that answers no pings");
            tx.close(CLOSE_NO_PONG, "no answer to pings");
        }
        Ending::NoHello => {
            debug!(conn, "closing a connection that never said hello");
            app.metrics.rejected(codes::HELLO_TIMEOUT);
            tx.send_message(&ServerMessage::bye(
                codes::HELLO_TIMEOUT,
                "say hello first, within a few seconds of connecting",
            ));
            tx.close(CLOSE_NO_HELLO, "no hello");
        }
        Ending::Gone | Ending::TooBig => {}
    }
    // A room that is stopping for the shutdown need not hear of it.
    if let (Some(handle), false) = (room, ending == Ending::Shutdown) {
        handle.send(Command::Leave { conn }).await;
    }
    // Once the room has let go of the queue, the writer sends what is left (a close frame, say)
    // and ends; a writer stuck on a dead socket is stopped.
    drop(tx);
    let mut writer = writer;
    if tokio::time::timeout(WRITER_GRACE, &mut writer)
        .await
        .is_err()
    {
        kick.cancel();
        let _ = writer.await;
    }
    match ending {
        Ending::TooBig => {
            // The rest of the refused message is still unread; closing the TCP connection now
            // would reset it and could destroy the close frame on its way. Give the client time
            // to read it.
            tokio::time::sleep(CLOSE_LINGER).await;
        }
        Ending::Shutdown | Ending::RateAbuse | Ending::NoHello => {
            // Read on until the client answers the close frame (the stream then ends), so that
            // unread data does not reset the connection under the close frame.
            let _ = tokio::time::timeout(CLOSE_LINGER, async {
                while let Some(Ok(_)) = stream.next().await {}
            })
            .await;
        }
        Ending::Gone | Ending::Silent => {}
    }
    app.metrics.connections.decrement(1.0);
    debug!(conn, "connection closed");
}

/// The writer's ping timer: every `interval` from now, or never when `interval` is zero.
fn pinger(interval: Duration) -> Option<Interval> {
    (!interval.is_zero()).then(|| {
        let mut pings = tokio::time::interval_at(Instant::now() + interval, interval);
        pings.set_missed_tick_behavior(MissedTickBehavior::Delay);
        pings
    })
}

/// The next tick of the ping timer, or never.
async fn tick(pings: &mut Option<Interval>) {
    match pings {
        Some(pings) => {
            pings.tick().await;
        }
        None => std::future::pending().await,
    }
}

/// Sends a refusal (an `error`, echoing `id`) to the client and counts it.
fn refuse(app: &AppState, tx: &ClientTx, refusal: &Refusal, id: Option<MessageId>) {
    app.metrics.rejected(refusal.code());
    tx.send_message(&refusal.message(id));
}

/// Whether a read error is the socket refusing a message over the size cap.
fn is_too_big(error: axum::Error) -> bool {
    matches!(
        error
            .into_inner()
            .downcast::<tungstenite::Error>()
            .map(|e| *e),
        Ok(tungstenite::Error::Capacity(_))
    )
}
