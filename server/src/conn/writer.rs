//! The connection's socket and its writer. [`Socket`] is the socket's sending half under a
//! lock, which whoever sends to the client (the room, the reader) writes to straight away when
//! it takes a frame at once and nothing queued before is still unwritten ([`Direct`]); on a
//! plain socket that came through the listener the frame goes onto the TCP stream itself, from
//! the buffer it was made in, and the lock is not taken ([`super::raw`]). The
//! writer drains the client's bounded outbound queue onto the socket, batching what is already
//! queued into one write, finishes what a sender wrote but the socket did not take at once
//! ([`Outgoing::Flush`]), and pings the client when the reader, which keeps the connection's one
//! timer, queues a ping. It ends when the queue closes, a close is sent, the socket fails, or
//! the connection is kicked.

use std::pin::Pin;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::task::{Context, Poll, Waker};
use std::time::Duration;

use axum::extract::ws::{CloseFrame, Message, Utf8Bytes};
use futures_util::{Sink, SinkExt};
use tokio::sync::{Mutex, mpsc};

use super::Outgoing;
use super::deflate::Deflater;
use super::raw::{Opcode, RawSocket, Wrote};
use crate::metrics::Metrics;
use crate::room::client::{Attempt, Direct, HoldsKick, KickState, Text};

/// How long a closing connection's writer may take to flush what is left.
pub(super) const WRITER_GRACE: Duration = Duration::from_secs(5);

/// The most queued messages one write to a socket carries.
const MAX_BATCH: usize = 64;

/// A connection's socket, shared by its writer and by whoever sends to the client, who may
/// write to it straight away ([`Direct`]) when nothing queued before is still unwritten: a room
/// then writes an action's frames itself, one task and one queue fewer each. Whoever holds the
/// lock writes; the writer takes over what the socket would not take at once.
///
/// What a straight write reads comes first, in the struct's first cache line (laid out in
/// order, and aligned to a line): read from two lines, it was one more to wait for a frame.
#[repr(C, align(64))]
pub(super) struct Socket<S> {
    /// The TCP stream under the socket, when a text frame is written to it straight (a plain
    /// socket that came through the listener): the frame leaves from the buffer it was made in,
    /// without `wire`'s lock and copy ([`super::raw`]).
    raw: Option<RawSocket>,
    /// Messages queued for the writer through [`Direct::queued`] and not yet written: while
    /// any is, nothing goes straight, so the client gets its messages in the order sent.
    queued: AtomicUsize,
    /// The connection's kick (its [`Kick`] holds this socket): a kicked connection is sent
    /// nothing more.
    kick: KickState,
    /// Where what is written is counted.
    metrics: Arc<Metrics>,
    /// Whether anything has been sent since the last ping.
    busy: AtomicBool,
    /// The socket's sending half and its compressed stream.
    wire: Mutex<Wire<S>>,
}

/// What is written to under [`Socket`]'s lock.
struct Wire<S> {
    /// The socket's sending half.
    sink: S,
    /// The socket's compressed stream, if it asked for one: each write is a frame of it.
    deflater: Option<Deflater>,
}

impl<S> Socket<S> {
    /// A socket over `sink`, its messages compressed into `deflater`'s stream if it is given;
    /// a sender writes text frames straight to `raw`, if it is given, rather than through `sink`.
    pub(super) fn new(
        sink: S,
        raw: Option<RawSocket>,
        deflater: Option<Deflater>,
        metrics: Arc<Metrics>,
    ) -> Socket<S> {
        Socket {
            wire: Mutex::new(Wire { sink, deflater }),
            raw,
            busy: AtomicBool::new(false),
            queued: AtomicUsize::new(0),
            kick: KickState::default(),
            metrics,
        }
    }

    /// Counts `n` queued messages written.
    fn written(&self, n: usize) {
        self.queued.fetch_sub(n, Ordering::Release);
    }

    /// Counts `sent` messages written in `bytes` of payload.
    fn count(&self, sent: u64, bytes: u64, deflated: bool) {
        self.metrics.messages_out.increment(sent);
        if deflated {
            self.metrics.bytes_out_deflate.increment(bytes);
        } else {
            self.metrics.bytes_out_text.increment(bytes);
        }
    }
}

impl<S> std::fmt::Debug for Socket<S> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Socket")
            .field("queued", &self.queued)
            .finish_non_exhaustive()
    }
}

impl<S: Send> HoldsKick for Socket<S> {
    fn kick_state(&self) -> &KickState {
        &self.kick
    }
}

impl<S: Sink<Message> + Unpin + Send> Direct for Socket<S> {
    fn try_write(&self, text: Text) -> Attempt {
        if self.queued.load(Ordering::Acquire) != 0 || self.kick.is_cancelled() {
            return Attempt::Queue(text);
        }
        if let Some(raw) = &self.raw {
            // Nothing queued is unwritten, so the writer has nothing of its own under way.
            let attempt = match raw.try_frame(Opcode::Text, text.as_bytes()) {
                Wrote::Whole => Attempt::Written,
                Wrote::Part => Attempt::Unflushed,
                Wrote::Nothing => return Attempt::Queue(text),
                Wrote::Failed => return Attempt::Failed,
            };
            self.busy.store(true, Ordering::Relaxed);
            self.count(1, text.len() as u64, false);
            return attempt;
        }
        let Ok(mut wire) = self.wire.try_lock() else {
            return Attempt::Queue(text);
        };
        let wire = &mut *wire;
        let mut sink = Pin::new(&mut wire.sink);
        // Nobody is to be woken: what the socket does not take now, the writer takes over.
        let mut cx = Context::from_waker(Waker::noop());
        match sink.as_mut().poll_ready(&mut cx) {
            Poll::Ready(Ok(())) => {}
            Poll::Ready(Err(_)) => return Attempt::Failed,
            Poll::Pending => return Attempt::Queue(text),
        }
        let (message, bytes) = match &mut wire.deflater {
            Some(deflater) => {
                let frame = deflater.frame([text.as_bytes()]);
                let bytes = frame.len();
                (Message::Binary(frame.into()), bytes)
            }
            None => {
                let bytes = text.len();
                (frame(text), bytes)
            }
        };
        if sink.as_mut().start_send(message).is_err() {
            return Attempt::Failed;
        }
        self.busy.store(true, Ordering::Relaxed);
        self.count(1, bytes as u64, wire.deflater.is_some());
        match sink.poll_flush(&mut cx) {
            Poll::Ready(Ok(())) => Attempt::Written,
            Poll::Ready(Err(_)) => Attempt::Failed,
            Poll::Pending => Attempt::Unflushed,
        }
    }

    fn queued(&self) {
        self.queued.fetch_add(1, Ordering::AcqRel);
    }

    fn unqueued(&self) {
        self.written(1);
    }

    fn warm(&self) {
        std::hint::black_box(self.queued.load(Ordering::Relaxed));
        if let Some(raw) = &self.raw {
            raw.warm();
        }
    }
}

/// Writes `first` and every text already waiting in `outbox` (up to [`MAX_BATCH`]) to the socket,
/// then flushes once: an action's state leaves in one write with whatever else is queued. A close
/// found in the queue is put in `held`, to be sent after. On a compressed socket (`deflater`) the
/// texts go in one binary frame of its stream, gathered first in `texts` (empty before and after,
/// kept by the caller from batch to batch for its memory); otherwise each is fed to the socket as
/// it is taken, and `texts` is not touched (a list is one more piece of memory a batch would
/// touch, gone cold since the connection's last batch). Returns how many messages went out and
/// their payload bytes, or `None` if the socket failed.
pub(crate) async fn write_batch<S: Sink<Message> + Unpin>(
    sink: &mut S,
    first: Text,
    outbox: &mut mpsc::Receiver<Outgoing>,
    held: &mut Option<Outgoing>,
    deflater: Option<&mut Deflater>,
    texts: &mut Vec<Text>,
) -> Option<(u64, u64)> {
    let Some(deflater) = deflater else {
        let mut sent = 1;
        let mut bytes = first.len();
        sink.feed(frame(first)).await.ok()?;
        while sent < MAX_BATCH {
            match next_text(outbox, held) {
                Some(more) => {
                    sent += 1;
                    bytes += more.len();
                    sink.feed(frame(more)).await.ok()?;
                }
                None => break,
            }
        }
        sink.flush().await.ok()?;
        return Some((sent as u64, bytes as u64));
    };
    texts.clear();
    texts.push(first);
    while texts.len() < MAX_BATCH {
        match next_text(outbox, held) {
            Some(more) => texts.push(more),
            None => break,
        }
    }
    let sent = texts.len() as u64;
    let frame = deflater.frame(texts.iter().map(Text::as_bytes));
    texts.clear();
    let bytes = frame.len();
    sink.send(Message::Binary(frame.into())).await.ok()?;
    Some((sent, bytes as u64))
}

/// The next text already waiting in `outbox`, if the next thing there is a text; anything else
/// (a ping, a close) is put in `held`, to be sent after the batch.
fn next_text(outbox: &mut mpsc::Receiver<Outgoing>, held: &mut Option<Outgoing>) -> Option<Text> {
    match outbox.try_recv() {
        Ok(Outgoing::Text(text)) => Some(text),
        Ok(other) => {
            *held = Some(other);
            None
        }
        Err(_) => None,
    }
}

/// A text as a WebSocket text frame. axum checks again that its bytes are UTF-8 (safe code
/// cannot skip that): one read of the text, and no copy.
fn frame(text: Text) -> Message {
    let text = Utf8Bytes::try_from(text.into_bytes()).expect("a Text is UTF-8");
    Message::Text(text)
}

/// Runs the writer until the queue closes, a close frame is sent or the socket fails; then
/// kicks the connection, so that the reader ends too.
///
/// The writer does not wait on the kick itself: a kicked connection's task aborts its writer
/// ([`super::serve_streams`]), which ends it at once even in the middle of a write to a socket
/// that takes no more data. So the writer's loop is the relay's, a queue and a socket: waiting
/// on the kick too would register the writer's waker with it every time the queue runs dry,
/// and keep a larger future, one more piece of each connection's memory to touch an action
/// (`loadgen play --callgrind --cache-sim`, docs/performance.md).
pub(super) async fn run<S: Sink<Message> + Unpin + Send>(
    socket: Arc<Socket<S>>,
    mut outbox: mpsc::Receiver<Outgoing>,
) {
    // A close taken off the queue while batching texts, to be sent after them.
    let mut held: Option<Outgoing> = None;
    // A batch's texts, on a compressed socket: the list kept for its memory.
    let mut texts = Vec::new();
    loop {
        let next = match held.take() {
            Some(held) => Some(held),
            None => outbox.recv().await,
        };
        let Some(next) = next else {
            // A socket that takes no more data must not keep this task alive.
            let mut wire = socket.wire.lock().await;
            let _ = tokio::time::timeout(WRITER_GRACE, wire.sink.send(Message::Close(None))).await;
            break;
        };
        let mut wire = socket.wire.lock().await;
        let wire = &mut *wire;
        match next {
            Outgoing::Text(text) => {
                let deflated = wire.deflater.is_some();
                let sent = write_batch(
                    &mut wire.sink,
                    text,
                    &mut outbox,
                    &mut held,
                    wire.deflater.as_mut(),
                    &mut texts,
                )
                .await;
                let Some((sent, bytes)) = sent else {
                    break;
                };
                socket.written(sent as usize);
                socket.busy.store(true, Ordering::Relaxed);
                socket.count(sent, bytes, deflated);
            }
            Outgoing::Ping => {
                // A socket quiet for a whole ping interval lets go of its batch's list and its
                // compressed stream's memory: an idle socket holds neither.
                if !socket.busy.swap(false, Ordering::Relaxed) {
                    texts = Vec::new();
                    if let Some(deflater) = &mut wire.deflater {
                        deflater.forget();
                    }
                }
                if wire
                    .sink
                    .send(Message::Ping(Default::default()))
                    .await
                    .is_err()
                {
                    break;
                }
            }
            Outgoing::Flush => {
                // What a sender wrote straight and the socket did not take all of: the rest of
                // its frame, or what the library holds.
                if let Some(raw) = &socket.raw {
                    if std::future::poll_fn(|cx| raw.poll_finish(cx))
                        .await
                        .is_err()
                    {
                        break;
                    }
                }
                if wire.sink.flush().await.is_err() {
                    break;
                }
                socket.written(1);
            }
            Outgoing::Close(code, reason) => {
                let frame = CloseFrame {
                    code,
                    reason: reason.into(),
                };
                // Aborted if the reader has waited long enough for it.
                let _ = wire.sink.send(Message::Close(Some(frame))).await;
                break;
            }
        }
    }
    socket.kick.cancel();
}

#[cfg(test)]
mod tests {
    use super::*;

    /// What a straight write reads of a socket (the kick's flag included) is in its first
    /// cache line.
    #[test]
    fn a_straight_write_reads_one_line_of_the_socket() {
        assert_eq!(std::mem::align_of::<Socket<()>>(), 64);
        for (field, at) in [
            ("raw", std::mem::offset_of!(Socket<()>, raw)),
            ("queued", std::mem::offset_of!(Socket<()>, queued)),
            (
                "the end of kick",
                std::mem::offset_of!(Socket<()>, kick) + std::mem::size_of::<KickState>() - 1,
            ),
            ("metrics", std::mem::offset_of!(Socket<()>, metrics)),
            ("busy", std::mem::offset_of!(Socket<()>, busy)),
        ] {
            assert!(at < 64, "{field} at {at}");
        }
    }
}
