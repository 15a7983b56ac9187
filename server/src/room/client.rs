//! The way from a room to one client: [`ClientTx`], the client's bounded queue of
//! [`Outgoing`] messages, which the room only ever `try_send`s on; and [`Text`], a message's
//! text, the room's own type, so that the core sends without knowing the web framework. The
//! connection (`conn`) makes the queue, and its writer turns each text into a WebSocket frame.
//! [`Direct`] is the socket itself, which the connection lends the sender: a text goes straight
//! onto it when it takes it at once and nothing queued is still unwritten, so that an action's
//! frames cost the room a write each, and the writer's task and queue only what a slow socket
//! leaves.

use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::task::{Context, Poll};

use bytes::{Bytes, BytesMut};
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
    /// Finish writing what was written straight to the socket ([`Direct::try_write`]) but did
    /// not all leave at once.
    Flush,
}

/// What became of a text offered straight to the socket ([`Direct::try_write`]).
#[derive(Debug)]
pub enum Attempt {
    /// It is on its way: written to the socket whole.
    Written,
    /// It is in the socket's buffer, but not all of it left: the writer must finish
    /// ([`Outgoing::Flush`]).
    Unflushed,
    /// The socket is busy (the writer has it, or something is queued before): queue it.
    Queue(Text),
    /// The socket failed.
    Failed,
}

/// A client's socket, which whoever sends to the client may write to straight away when
/// nothing is queued before: the room then writes its frames itself, one task and one queue
/// fewer for the action, and the writer task only takes over what the socket would not take
/// at once.
pub trait Direct: Send + Sync + std::fmt::Debug {
    /// Writes `text` to the socket now, if that takes no waiting and nothing queued before it is
    /// still unwritten.
    fn try_write(&self, text: Text) -> Attempt;
    /// Counts one message queued for the writer: until it is written, nothing goes straight.
    fn queued(&self);
    /// Takes back a count of [`Direct::queued`] (the queue refused the message).
    fn unqueued(&self);
    /// Reads what a straight write will read (the socket's lines), and nothing more: called for
    /// every client of a room before the room works out a change, so that the reads that miss
    /// the caches wait at once, beside one another and beside the room's work, rather than one
    /// after another as each frame is written.
    fn warm(&self) {}
}

/// The way to one client: its socket, its bounded outbound queue, and a token that disconnects
/// it.
#[derive(Clone, Debug)]
pub struct ClientTx {
    /// The client's outbound queue; the room only ever `try_send`s on it.
    pub queue: mpsc::Sender<Outgoing>,
    /// Kicked to disconnect the client at once (it fell behind, or its writer is stuck).
    pub kick: Kick,
    /// The socket itself, written to straight away when it takes a text at once (every real
    /// socket has one; the room's tests, which read the queue, do not).
    pub direct: Option<Arc<dyn Direct>>,
}

/// What disconnects one connection at once: a flag set once, which its reader waits on (and,
/// once the reader has ended, its task aborts the writer: [`crate::conn`]). The reader waits on
/// it every time it runs out of work: once its waker is registered, waiting costs a look at the
/// flag ([`crate::shutdown::FlagWait`]), where a `CancellationToken`'s wait took a lock each time. The flag is where
/// its holder keeps it ([`HoldsKick`]): a connection's is in its socket's first cache line, read
/// with the rest of what a straight write reads ([`Direct::try_write`] sends a kicked
/// connection nothing).
#[derive(Clone, Debug)]
pub struct Kick(Arc<dyn HoldsKick>);

/// [`Kick`]'s flag and the waker of the reader waiting on it.
#[derive(Debug, Default)]
pub struct KickState {
    /// Whether the connection was kicked.
    kicked: AtomicBool,
    /// The reader waiting for it.
    reader: AtomicWaker,
}

impl KickState {
    /// Kicks the connection: its reader wakes and ends (and aborts its writer). Kicking again
    /// does nothing more.
    pub fn cancel(&self) {
        self.kicked.store(true, Ordering::SeqCst);
        self.reader.wake();
    }

    /// Whether the connection was kicked.
    pub fn is_cancelled(&self) -> bool {
        self.kicked.load(Ordering::SeqCst)
    }
}

/// What holds a connection's [`KickState`]: the connection's socket, or the state alone
/// ([`Kick::new`]).
pub trait HoldsKick: Send + Sync + std::fmt::Debug {
    /// The flag and its waiter.
    fn kick_state(&self) -> &KickState;
}

impl HoldsKick for KickState {
    fn kick_state(&self) -> &KickState {
        self
    }
}

impl Default for Kick {
    fn default() -> Kick {
        Kick::new()
    }
}

impl Kick {
    /// A kick not yet given, its flag in an allocation of its own.
    pub fn new() -> Kick {
        Kick(Arc::new(KickState::default()))
    }

    /// The kick whose flag `holder` keeps.
    pub fn of(holder: Arc<dyn HoldsKick>) -> Kick {
        Kick(holder)
    }

    /// Kicks the connection: its reader wakes and ends (and aborts its writer). Kicking again
    /// does nothing more.
    pub fn cancel(&self) {
        self.0.kick_state().cancel();
    }

    /// Whether the connection was kicked.
    pub fn is_cancelled(&self) -> bool {
        self.0.kick_state().is_cancelled()
    }

    /// Waits until the connection is kicked (one task at a time: a second waiter takes the
    /// first one's place).
    pub fn kicked(&self) -> Kicked {
        Kicked {
            kick: self.clone(),
            registered: None,
        }
    }
}

/// [`Kick::kicked`]'s future.
#[derive(Debug)]
pub struct Kicked {
    /// The kick waited for.
    kick: Kick,
    /// The waker this wait last registered ([`crate::shutdown::FlagWait`]).
    registered: Option<std::task::Waker>,
}

impl Future for Kicked {
    type Output = ();

    fn poll(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<()> {
        let this = self.get_mut();
        let state = this.kick.0.kick_state();
        crate::shutdown::poll_flag(&state.kicked, &state.reader, &mut this.registered, cx)
    }
}

impl ClientTx {
    /// Sends a message without waiting: straight onto the socket when it takes it at once and
    /// nothing queued is still unwritten, otherwise into the queue; a client whose queue cannot
    /// take it is disconnected. Returns whether the client is still fine.
    pub fn send(&self, text: Text) -> bool {
        let text = match &self.direct {
            Some(direct) => match direct.try_write(text) {
                Attempt::Written => return true,
                Attempt::Unflushed => return self.push(Outgoing::Flush),
                Attempt::Failed => {
                    self.kick.cancel();
                    return false;
                }
                Attempt::Queue(text) => text,
            },
            None => text,
        };
        self.push(Outgoing::Text(text))
    }

    /// Queues a message for the writer; a client that cannot take it is disconnected.
    fn push(&self, outgoing: Outgoing) -> bool {
        if let Some(direct) = &self.direct {
            direct.queued();
        }
        match self.queue.try_send(outgoing) {
            Ok(()) => true,
            Err(_) => {
                if let Some(direct) = &self.direct {
                    direct.unqueued();
                }
                self.kick.cancel();
                false
            }
        }
    }

    /// Reads the client's socket's lines ahead of a write ([`Direct::warm`]).
    pub fn warm(&self) {
        if let Some(direct) = &self.direct {
            direct.warm();
        }
    }

    /// Closes the client's socket with this code and reason, after what is already queued.
    pub fn close(&self, code: u16, reason: &'static str) {
        self.push(Outgoing::Close(code, reason));
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

/// Several clients' frames, written one after another and shared out as [`Text`]s of one
/// allocation, which is used again: a room writes each change's patches (and each `room`
/// message's copies) into one, and each client's part is written to its socket (or held in its
/// queue until its writer is done with it). Both the text a batch is written in and the memory
/// its frames are shared out of are the thread's, used by every room that runs on it in turn:
/// once every part shared out before has been dropped (as it nearly always is by then, the room
/// having written it straight to the socket) the next batch takes the same memory back, so a
/// change costs no allocation and writes into memory the caches still hold; if a part is still
/// held, the next batch gets fresh memory, and the old is freed with its last part. A batch of
/// more than [`Batch::KEEP`] bytes (the room's state, told to every seat) is shared out of its
/// own buffer, so that a thread keeps at most that much between batches.
#[derive(Debug, Default)]
pub struct Batch {
    /// The frames being written.
    text: String,
    /// Where each frame written so far ends in `text`.
    ends: Vec<usize>,
    /// Whether `text` is the thread's (see [`Batch::text`]), until the batch is shared out.
    borrowed: bool,
}

impl Batch {
    /// The most memory a thread keeps for the next batch, in bytes: a change's patches for six
    /// seats and a few spectators, several times over.
    pub const KEEP: usize = 2048;

    /// Where the frame being written goes: write it at the end, then [`Batch::end_frame`].
    ///
    /// The text written in is the thread's, shared by the rooms that run on it, and given back
    /// by [`Batch::share`]: a room's own memory has left the caches by its next change
    /// (hundreds of rooms take turns), where the thread's was written by whichever room ran on
    /// it last: 21 fewer last-level misses an action, 5% (`loadgen play --callgrind
    /// --cache-sim`, docs/performance.md). So is the buffer the frames are shared out of
    /// ([`Batch::share`]).
    pub fn text(&mut self) -> &mut String {
        if !self.borrowed {
            self.trade_with_thread();
        }
        &mut self.text
    }

    /// Swaps `text` with the thread's (empty whenever no batch is being written on it).
    fn trade_with_thread(&mut self) {
        thread_local! {
            static SHARED: std::cell::RefCell<String> = std::cell::RefCell::default();
        }
        SHARED.with_borrow_mut(|local| std::mem::swap(&mut self.text, local));
        self.borrowed = !self.borrowed;
    }

    /// Ends the frame being written: it is what was written since the one before.
    pub fn end_frame(&mut self) {
        self.ends.push(self.text.len());
    }

    /// The frames written, each as a [`Text`], in order, sharing one buffer (the thread's, see
    /// [`Batch`]); the batch is left empty for the next. What was written after the last frame
    /// ended is dropped.
    pub fn share(&mut self) -> impl Iterator<Item = Text> + '_ {
        let len = self.ends.last().copied().unwrap_or(0);
        self.text.truncate(len);
        let all = if len > Self::KEEP {
            Bytes::from(std::mem::take(&mut self.text))
        } else {
            thread_local! {
                static FRAMES: std::cell::RefCell<BytesMut> = std::cell::RefCell::default();
            }
            let all = FRAMES.with_borrow_mut(|frames| {
                if frames.capacity() < len {
                    // Takes back the memory of the batches before if all their parts are
                    // dropped, else allocates afresh.
                    frames.reserve(Self::KEEP);
                }
                frames.extend_from_slice(self.text.as_bytes());
                frames.split().freeze()
            });
            self.text.clear();
            all
        };
        if self.borrowed {
            self.trade_with_thread();
        }
        let mut start = 0;
        self.ends.drain(..).map(move |end| {
            // Each end was the length of the `String` the frames were written into: a
            // character boundary, so every part is UTF-8.
            let text = Text(all.slice(start..end));
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
    async fn a_kick_wakes_its_waiter_and_any_that_waits_after() {
        let kick = Kick::new();
        let reader = tokio::spawn(kick.kicked());
        tokio::task::yield_now().await;
        assert!(!kick.is_cancelled());
        assert!(!reader.is_finished());
        kick.clone().cancel();
        reader.await.unwrap();
        assert!(kick.is_cancelled());
        kick.kicked().await;
        kick.cancel();
    }

    #[test]
    fn a_kick_not_given_leaves_its_waiter_pending() {
        let kick = Kick::new();
        let mut waiting = std::pin::pin!(kick.kicked());
        let mut cx = Context::from_waker(std::task::Waker::noop());
        assert!(waiting.as_mut().poll(&mut cx).is_pending());
        assert!(waiting.as_mut().poll(&mut cx).is_pending());
        kick.cancel();
        assert!(waiting.as_mut().poll(&mut cx).is_ready());
    }

    #[test]
    fn rooms_on_one_thread_write_their_batches_in_the_same_text() {
        std::thread::spawn(|| {
            let (mut one, mut other) = (Batch::default(), Batch::default());
            one.text().push_str(&"a".repeat(300));
            one.end_frame();
            let written = one.text.as_ptr();
            let texts: Vec<Text> = one.share().collect();
            assert_eq!(texts[0].as_str(), "a".repeat(300));
            assert_eq!(one.text.capacity(), 0, "the room keeps no text of its own");
            // The next room to write on this thread writes where the first did, from empty.
            let text = other.text();
            assert!(text.is_empty() && text.capacity() >= 300);
            assert_eq!(text.as_ptr(), written);
            text.push_str("{}");
            other.end_frame();
            let next: Vec<Text> = other.share().collect();
            assert_eq!(next[0].as_str(), "{}");
            assert_eq!(other.text.capacity(), 0);
            // The first room's part is its own: unchanged.
            assert_eq!(texts[0].as_str(), "a".repeat(300));
        })
        .join()
        .unwrap();
    }

    #[test]
    fn rooms_on_one_thread_share_their_frames_out_of_the_same_memory() {
        std::thread::spawn(|| {
            let (mut one, mut other) = (Batch::default(), Batch::default());
            one.text().push_str("{\"one\":1}");
            one.end_frame();
            let first: Vec<Text> = one.share().collect();
            let at = first[0].clone().into_bytes().as_ptr();
            drop(first);
            // The next room to share out on this thread goes on in the same memory.
            other.text().push_str("{\"other\":2}");
            other.end_frame();
            let next: Vec<Text> = other.share().collect();
            assert_eq!(next[0].as_str(), "{\"other\":2}");
            assert_eq!(next[0].clone().into_bytes().as_ptr(), at.wrapping_add(9));
        })
        .join()
        .unwrap();
    }

    #[test]
    fn a_batchs_frames_share_one_buffer_which_the_next_batch_takes_back() {
        let mut batch = Batch::default();
        for part in ["{\"a\":1}", "é", "", "{}"] {
            batch.text().push_str(part);
            batch.end_frame();
        }
        batch.text().push_str("not ended");
        let texts: Vec<Text> = batch.share().collect();
        let strs: Vec<&str> = texts.iter().map(Text::as_str).collect();
        assert_eq!(strs, ["{\"a\":1}", "é", "", "{}"]);
        let first = texts[0].clone().into_bytes().as_ptr();
        assert_eq!(
            texts[1].clone().into_bytes().as_ptr(),
            first.wrapping_add(7)
        );
        // The next batch goes on in the same memory.
        batch.text().push_str("{}");
        batch.end_frame();
        let next: Vec<Text> = batch.share().collect();
        assert_eq!(
            next[0].clone().into_bytes().as_ptr(),
            first.wrapping_add(11)
        );
        // Every part dropped: a batch that no longer fits after them is written where the
        // first was.
        drop((texts, next));
        let long = "b".repeat(Batch::KEEP - 5);
        batch.text().push_str(&long);
        batch.end_frame();
        let again: Vec<Text> = batch.share().collect();
        assert_eq!(again[0].as_str(), long);
        assert_eq!(again[0].clone().into_bytes().as_ptr(), first);
        // A part still held: a batch that does not fit is written elsewhere, and the part is
        // unchanged.
        batch.text().push_str("{\"c\":3}");
        batch.end_frame();
        let other: Vec<Text> = batch.share().collect();
        assert_eq!(other[0].as_str(), "{\"c\":3}");
        assert_ne!(other[0].clone().into_bytes().as_ptr(), first);
        assert_eq!(again[0].as_str(), long);
        assert_eq!(batch.share().count(), 0, "a batch starts empty");
        // A batch bigger than it keeps is shared out of its own buffer.
        let big = "x".repeat(Batch::KEEP + 1);
        batch.text().push_str(&big);
        batch.end_frame();
        let texts: Vec<Text> = batch.share().collect();
        assert_eq!(texts[0].as_str(), big);
        assert_eq!(batch.text.capacity(), 0);
    }
}
