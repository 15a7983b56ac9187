//! The connection's writer: it drains the client's bounded outbound queue onto the socket,
//! batching what is already queued into one write, and pings the client when the reader, which
//! keeps the connection's one timer, queues a ping. It ends when the queue closes, a close is
//! sent, the socket fails, or the connection is kicked.

use std::sync::Arc;
use std::time::Duration;

use axum::extract::ws::{CloseFrame, Message, Utf8Bytes};
use futures_util::{Sink, SinkExt};
use tokio::sync::mpsc;

use super::Outgoing;
use super::deflate::Deflater;
use crate::metrics::Metrics;
use crate::room::client::{Kick, Text};

/// How long a closing connection's writer may take to flush what is left.
pub(super) const WRITER_GRACE: Duration = Duration::from_secs(5);

/// The most queued messages one write to a socket carries.
const MAX_BATCH: usize = 64;

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
/// kicks the connection, so that the reader ends too. `deflater` is the socket's compressed
/// stream, if it asked for one.
///
/// The writer does not wait on the kick itself: a kicked connection's task aborts its writer
/// ([`super::serve_streams`]), which ends it at once even in the middle of a write to a socket
/// that takes no more data. So the writer's loop is the relay's, a queue and a socket: waiting
/// on the kick too would register the writer's waker with it every time the queue runs dry,
/// and keep a larger future, one more piece of each connection's memory to touch an action
/// (`loadgen play --callgrind --cache-sim`, docs/performance.md).
pub(super) async fn run<S: Sink<Message> + Unpin>(
    mut sink: S,
    mut outbox: mpsc::Receiver<Outgoing>,
    kick: Kick,
    metrics: Arc<Metrics>,
    mut deflater: Option<Deflater>,
) {
    // A close taken off the queue while batching texts, to be sent after them.
    let mut held: Option<Outgoing> = None;
    // Whether nothing has been sent since the last ping.
    let mut quiet = false;
    // A batch's texts, on a compressed socket: the list kept for its memory.
    let mut texts = Vec::new();
    loop {
        let next = match held.take() {
            Some(held) => Some(held),
            None => outbox.recv().await,
        };
        match next {
            Some(Outgoing::Text(text)) => {
                let sent = write_batch(
                    &mut sink,
                    text,
                    &mut outbox,
                    &mut held,
                    deflater.as_mut(),
                    &mut texts,
                )
                .await;
                let Some((sent, bytes)) = sent else {
                    break;
                };
                quiet = false;
                metrics.messages_out.increment(sent);
                if deflater.is_some() {
                    metrics.bytes_out_deflate.increment(bytes);
                } else {
                    metrics.bytes_out_text.increment(bytes);
                }
            }
            Some(Outgoing::Ping) => {
                // A socket quiet for a whole ping interval lets go of its batch's list and its
                // compressed stream's memory: an idle socket holds neither.
                if quiet {
                    texts = Vec::new();
                    if let Some(deflater) = &mut deflater {
                        deflater.forget();
                    }
                }
                quiet = true;
                if sink.send(Message::Ping(Default::default())).await.is_err() {
                    break;
                }
            }
            Some(Outgoing::Close(code, reason)) => {
                let frame = CloseFrame {
                    code,
                    reason: reason.into(),
                };
                // Aborted if the reader has waited long enough for it.
                let _ = sink.send(Message::Close(Some(frame))).await;
                break;
            }
            None => {
                // A socket that takes no more data must not keep this task alive.
                let _ = tokio::time::timeout(WRITER_GRACE, sink.send(Message::Close(None))).await;
                break;
            }
        }
    }
    kick.cancel();
}
