//! The way from a room to one client: [`ClientTx`], the client's bounded queue of
//! [`Outgoing`] messages, which the room only ever `try_send`s on; and [`Text`], a message's
//! text, the room's own type, so that the core sends without knowing the web framework. The
//! connection (`conn`) makes the queue, and its writer turns each text into a WebSocket frame.

use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::task::{Context, Poll};

use bytes::Bytes;
use dhumbal_protocol::ServerMessage;
use futures_util::task::AtomicWaker;
use tokio::sync::mpsc;

/// What a connection's writer task sends on the socket.
#[derive(Debug)]
pub enum Outgoing {
    /// A text message (JSON).
    Text(Text),
    /// Close the socket with this code and reason.
    Close(u16, &'static str),
    /// Ping the client (its reader keeps the time: a connection has one timer, not two).
    Ping,
}

/// The way to one client: its bounded outbound queue, and a token that disconnects it.
#[derive(Clone, Debug)]
pub struct ClientTx {
    /// The client's outbound queue; the room only ever `try_send`s on it.
    pub queue: mpsc::Sender<Outgoing>,
    /// Kicked to disconnect the client at once (it fell behind, or its writer is stuck).
    pub kick: Kick,
}

/// What disconnects one connection at once: a flag set once, which its reader and its writer
/// each wait on. A connection's two tasks wait on it every time they run out of work, several
/// times an action: waiting costs a look at the flag and an atomic swap of the task's waker,
/// where a `CancellationToken`'s wait took a lock each time.
#[derive(Clone, Debug, Default)]
pub struct Kick(Arc<KickState>);

/// [`Kick`]'s flag and the waker of each side waiting on it.
#[derive(Debug, Default)]
struct KickState {
    kicked: AtomicBool,
    reader: AtomicWaker,
    writer: AtomicWaker,
}

/// Which of a connection's tasks waits on its [`Kick`]: each has a waker of its own.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Side {
    /// The task reading the socket.
    Reader,
    /// The task writing to it.
    Writer,
}

impl Kick {
    /// A kick not yet given.
    pub fn new() -> Kick {
        Kick::default()
    }

    /// Kicks the connection: both its tasks wake and end. Kicking again does nothing more.
    pub fn cancel(&self) {
        self.0.kicked.store(true, Ordering::SeqCst);
        self.0.reader.wake();
        self.0.writer.wake();
    }

    /// Whether the connection was kicked.
    pub fn is_cancelled(&self) -> bool {
        self.0.kicked.load(Ordering::SeqCst)
    }

    /// Waits until the connection is kicked, as `side` (one task at a time for each side: a
    /// second waiter on the same side takes the first one's place).
    pub fn kicked(&self, side: Side) -> Kicked {
        Kicked {
            kick: self.clone(),
            side,
        }
    }
}

/// [`Kick::kicked`]'s future.
#[derive(Debug)]
pub struct Kicked {
    kick: Kick,
    side: Side,
}

impl Future for Kicked {
    type Output = ();

    fn poll(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<()> {
        let state = &self.kick.0;
        let waker = match self.side {
            Side::Reader => &state.reader,
            Side::Writer => &state.writer,
        };
        crate::shutdown::poll_flag(&state.kicked, waker, cx)
    }
}

impl ClientTx {
    /// Queues a message without waiting; a client that cannot take it is disconnected.
    /// Returns whether the client is still fine.
    pub fn send(&self, text: Text) -> bool {
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

/// A message's text (JSON), for one client or many: always UTF-8, since it is built only from
/// a `String` or a `&str`, and cheap to clone for a broadcast (the clones share its bytes).
#[derive(Clone, PartialEq, Eq)]
pub struct Text(Bytes);

impl Text {
    /// The text. It is checked to be UTF-8 on the way (safe code cannot skip the check), so
    /// this is for tests and logs, not for the way to a client.
    pub fn as_str(&self) -> &str {
        std::str::from_utf8(&self.0).expect("a Text is built from a str")
    }

    /// Its length in bytes.
    pub fn len(&self) -> usize {
        self.0.len()
    }

    /// Whether it is empty.
    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }

    /// Its bytes (UTF-8), to compress.
    pub fn as_bytes(&self) -> &[u8] {
        &self.0
    }

    /// Its bytes (UTF-8), shared with its clones.
    pub fn into_bytes(self) -> Bytes {
        self.0
    }
}

impl Text {
    /// `buffer` shared out as consecutive texts, the `n`th ending at `ends[n]`: several frames
    /// written into one buffer, as one allocation that each frame holds a part of (the buffer
    /// is freed when the last is dropped). Each end must be a character boundary of `buffer` and
    /// at least the end before it.
    pub fn split(buffer: String, ends: &[usize]) -> impl Iterator<Item = Text> {
        let mut start = 0;
        for &end in ends {
            assert!(
                start <= end && buffer.is_char_boundary(end),
                "a text ends at {end}: not a character boundary after {start} of its buffer"
            );
            start = end;
        }
        let bytes = Bytes::from(buffer);
        let mut start = 0;
        ends.iter().map(move |&end| {
            let text = Text(bytes.slice(start..end));
            start = end;
            text
        })
    }
}

impl From<String> for Text {
    /// Takes the string's buffer, without copying it.
    fn from(text: String) -> Text {
        Text(Bytes::from(text))
    }
}

impl From<&str> for Text {
    /// Copies the text.
    fn from(text: &str) -> Text {
        Text(Bytes::copy_from_slice(text.as_bytes()))
    }
}

impl std::fmt::Display for Text {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

impl std::fmt::Debug for Text {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        std::fmt::Debug::fmt(self.as_str(), f)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_text_is_its_string_and_its_clones_share_the_bytes() {
        let text = Text::from(String::from("{\"type\":\"pong\"}"));
        let copy = text.clone();
        assert_eq!(copy.as_str(), "{\"type\":\"pong\"}");
        assert_eq!(text.len(), 15);
        assert_eq!(
            text.clone().into_bytes().as_ptr(),
            copy.into_bytes().as_ptr()
        );
        assert_eq!(Text::from("é").to_string(), "é");
        assert_eq!(format!("{:?}", Text::from("a\"b")), "\"a\\\"b\"");
    }

    #[tokio::test]
    async fn a_kick_wakes_both_sides_waiting_and_any_that_wait_after() {
        let kick = Kick::new();
        let reader = tokio::spawn(kick.kicked(Side::Reader));
        let writer = tokio::spawn(kick.kicked(Side::Writer));
        tokio::task::yield_now().await;
        assert!(!kick.is_cancelled());
        assert!(!reader.is_finished() && !writer.is_finished());
        kick.clone().cancel();
        reader.await.unwrap();
        writer.await.unwrap();
        assert!(kick.is_cancelled());
        kick.kicked(Side::Reader).await;
        kick.cancel();
    }

    #[test]
    fn a_kick_not_given_leaves_its_waiter_pending() {
        let kick = Kick::new();
        let mut waiting = std::pin::pin!(kick.kicked(Side::Writer));
        let mut cx = Context::from_waker(std::task::Waker::noop());
        assert!(waiting.as_mut().poll(&mut cx).is_pending());
        assert!(waiting.as_mut().poll(&mut cx).is_pending());
        kick.cancel();
        assert!(waiting.as_mut().poll(&mut cx).is_ready());
    }

    #[test]
    fn texts_split_from_one_buffer_share_it() {
        let texts: Vec<Text> = Text::split("{\"a\":1}é{}".into(), &[7, 9, 9, 11]).collect();
        let strs: Vec<&str> = texts.iter().map(Text::as_str).collect();
        assert_eq!(strs, ["{\"a\":1}", "é", "", "{}"]);
        assert_eq!(
            texts[1].clone().into_bytes().as_ptr(),
            texts[0].clone().into_bytes().as_ptr().wrapping_add(7)
        );
    }

    #[test]
    #[should_panic(expected = "not a character boundary")]
    fn a_text_split_inside_a_character_is_refused() {
        let _ = Text::split("é".into(), &[1]).count();
    }
}
