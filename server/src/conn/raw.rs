//! The TCP stream under a connection, shared by the HTTP and WebSocket layers and by the room's
//! straight writes of whole frames.
//!
//! The listener serves every TCP connection over a [`TcpIo`], and hands each request the
//! same connection as a [`RawSocket`]. A WebSocket that takes it ([`RawSocket::enable`]) lets
//! whoever sends to the client write a server frame (a WebSocket header and the payload, in one
//! system call) straight onto the socket, without passing through the WebSocket library's own
//! per-connection buffer and locks: for a room, the last cold copy and the last lock of every
//! frame it sends.
//!
//! Two writers share one byte stream, so neither may start while the other has written part of
//! a frame. Once enabled, every write through the [`TcpIo`] (the WebSocket library's: its
//! pings, pongs, close frames and whatever the connection's writer task sends) and every
//! straight write takes the connection's lock for its system calls. What the socket did not
//! take of a straight frame is kept, and written before anything else: by the next write
//! through the [`TcpIo`], or by the writer task, which is told to finish it
//! ([`RawSocket::poll_finish`]) so that it is written even if nothing else is. Nothing goes
//! straight while the library has part of a frame left to write. A connection whose stream
//! nobody else holds (the diagnostic relays' sockets, once their request has gone) is read and
//! written as the stream itself is; one that is shared but never enabled (while its requests
//! hold it) takes no lock.

use std::io::{self, IoSlice};
use std::net::Shutdown;
use std::pin::Pin;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};
use std::task::{Context, Poll, Waker, ready};

use tokio::io::{AsyncRead, AsyncWrite, Interest, ReadBuf};
use tokio::net::TcpStream;

/// The largest frame a straight write copies whole into the thread's buffer ([`FRAME`]) to
/// send; a larger one goes in a vectored write of its header and its payload.
const COPY_UP_TO: usize = 4096;

thread_local! {
    /// Where a frame of at most [`COPY_UP_TO`] bytes is made whole before it is sent.
    static FRAME: std::cell::RefCell<Vec<u8>> = std::cell::RefCell::new(Vec::with_capacity(COPY_UP_TO));
}

/// A WebSocket opcode the server sends straight.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Opcode {
    /// A text frame.
    Text = 0x1,
    /// A binary frame (a piece of a compressed stream; compressed sockets do not write
    /// straight yet, their pieces being made under the writer's lock).
    Binary = 0x2,
}

/// A connection's TCP stream and what its two writers share: one cache line (its size is
/// held to 64 bytes by a test), since a straight write reads the lock, the state and the
/// stream's descriptor, and one line a frame is less to wait for than two.
#[derive(Debug)]
#[repr(align(64))]
struct Raw {
    /// The connection.
    tcp: TcpStream,
    /// Whether straight writes may happen: from then on every write takes `state`'s lock.
    enabled: AtomicBool,
    /// What the writers share.
    state: Mutex<State>,
}

/// What a connection's two writers share, under its lock: a word, since what they share is
/// there only while the socket is full.
#[derive(Debug, Default)]
struct State {
    /// What is kept only while the socket is full: made when a write first waits or is left
    /// in part, let go once the socket takes a write whole and nothing straight is left.
    full: Option<Box<Full>>,
}

/// What a connection's writers keep while its socket is full ([`State::full`]).
#[derive(Debug, Default)]
struct Full {
    /// Whether the last write through the [`TcpIo`] left part of what it was given (the
    /// library keeps it and writes it next): nothing goes straight until it is written.
    partial: bool,
    /// What a straight write left of its frame: nothing else is written until it is.
    rest: Vec<u8>,
    /// The writer task waiting in [`RawSocket::poll_finish`] for `rest` to be written, to be
    /// woken by whoever writes the last of it.
    finisher: Option<Waker>,
    /// The last write through the [`TcpIo`] that waited for the socket, woken too when `rest`
    /// is written: the socket's readiness wakes only the last task to wait for it, and the
    /// finisher may have taken its place.
    writer: Option<Waker>,
}

impl State {
    /// Whether a straight write left part of a frame that is not written yet.
    #[cfg(test)]
    fn unfinished(&self) -> bool {
        self.full.as_ref().is_some_and(|full| !full.rest.is_empty())
    }

    /// Whether either writer has part of a frame left: nothing may go straight.
    fn blocked(&self) -> bool {
        self.full
            .as_ref()
            .is_some_and(|full| full.partial || !full.rest.is_empty())
    }

    /// Whether the last write through the [`TcpIo`] left part of what it was given.
    #[cfg(test)]
    fn partial(&self) -> bool {
        self.full.as_ref().is_some_and(|full| full.partial)
    }

    /// What is kept while the socket is full, made if it is not there yet.
    fn full(&mut self) -> &mut Full {
        self.full.get_or_insert_with(Box::default)
    }
}

/// The flags of a straight write's `send`: a peer that has gone is an error (`EPIPE`), never a
/// signal.
#[cfg(any(target_os = "linux", target_os = "android"))]
const SEND_FLAGS: libc::c_int = libc::MSG_NOSIGNAL;
/// The flags of a straight write's `send` (the process ignores `SIGPIPE`, as Rust programs do).
#[cfg(not(any(target_os = "linux", target_os = "android")))]
const SEND_FLAGS: libc::c_int = 0;

impl Raw {
    /// The socket itself, for a straight write's `send`. The runtime's readiness for the stream
    /// is not looked at first (one more cold line a frame, and a frame goes straight only to a
    /// socket that took the last one); a `send` the socket refuses leaves the readiness set,
    /// and the next write through the runtime finds the socket full and waits for it.
    fn sock(&self) -> socket2::SockRef<'_> {
        socket2::SockRef::from(&self.tcp)
    }

    /// The writers' lock.
    fn state(&self) -> MutexGuard<'_, State> {
        self.state.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// Writes what a straight write left of its frame, if anything (`state` is under the
    /// lock); once it is all written, wakes the writer task if it waits for it.
    fn finish(&self, state: &mut State, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        let Some(full) = state.full.as_mut().filter(|full| !full.rest.is_empty()) else {
            return Poll::Ready(Ok(()));
        };
        while !full.rest.is_empty() {
            ready!(self.tcp.poll_write_ready(cx))?;
            match self.tcp.try_write(&full.rest) {
                Ok(0) => return Poll::Ready(Err(io::ErrorKind::WriteZero.into())),
                Ok(n) => {
                    full.rest.drain(..n);
                }
                Err(e) if e.kind() == io::ErrorKind::WouldBlock => {}
                Err(e) => return Poll::Ready(Err(e)),
            }
        }
        // Rare: the memory is not kept.
        let full = state.full.take().expect("looked at above");
        for waiting in [full.finisher, full.writer].into_iter().flatten() {
            waiting.wake();
        }
        Poll::Ready(Ok(()))
    }
}

/// How a straight write of a frame went.
#[derive(Debug, PartialEq, Eq)]
pub enum Wrote {
    /// All of it is on the socket.
    Whole,
    /// Part of it is; the rest waits for [`RawSocket::poll_finish`], and nothing else may be
    /// written before it.
    Part,
    /// None of it: the socket takes nothing now, or the other writer has part of a frame left.
    Nothing,
    /// The socket failed.
    Failed,
}

/// A connection's stream as a request sees it (an extension of every request the listener
/// serves): a WebSocket enables it to write frames straight.
#[derive(Clone, Debug)]
pub struct RawSocket(Arc<Raw>);

impl RawSocket {
    /// Lets frames go straight onto the socket from now on. Called before the WebSocket reads
    /// or writes anything, so that every write of the library after it takes the lock.
    pub fn enable(&self) {
        self.0.enabled.store(true, Ordering::SeqCst);
    }

    /// Reads the connection's line (the lock, the state, the descriptor: one cache line) ahead of a
    /// straight write.
    pub fn warm(&self) {
        std::hint::black_box(self.0.enabled.load(Ordering::Relaxed));
    }

    /// Writes a whole server frame of `payload` (unmasked, final) straight onto the socket in
    /// one system call (a `send` of the frame made whole in the thread's buffer, or for a frame
    /// over 4 KiB a vectored write), unless the other writer has part of a frame left. What the
    /// socket does not take of it goes before anything else written to the connection; the
    /// writer task must be told to finish it ([`RawSocket::poll_finish`]).
    pub fn try_frame(&self, opcode: Opcode, payload: &[u8]) -> Wrote {
        let mut head = [0u8; 10];
        let head = header(opcode, payload.len(), &mut head);
        let mut state = self.0.state();
        if state.blocked() {
            return Wrote::Nothing;
        }
        let whole = head.len() + payload.len();
        let wrote = if whole <= COPY_UP_TO {
            // One `send` of the frame made whole in the thread's buffer: a copy of a few hundred
            // bytes costs less than the kernel's `writev` takes over a `send`.
            FRAME.with_borrow_mut(|frame| {
                frame.clear();
                frame.extend_from_slice(head);
                frame.extend_from_slice(payload);
                self.0.sock().send_with_flags(frame, SEND_FLAGS)
            })
        } else {
            self.0
                .sock()
                .send_vectored_with_flags(&[IoSlice::new(head), IoSlice::new(payload)], SEND_FLAGS)
        };
        match wrote {
            Ok(n) if n == whole => Wrote::Whole,
            Ok(0) => Wrote::Nothing,
            Ok(n) => {
                let rest = &mut state.full().rest;
                if n < head.len() {
                    rest.extend_from_slice(&head[n..]);
                    rest.extend_from_slice(payload);
                } else {
                    rest.extend_from_slice(&payload[n - head.len()..]);
                }
                Wrote::Part
            }
            Err(e) if e.kind() == io::ErrorKind::WouldBlock => Wrote::Nothing,
            Err(_) => Wrote::Failed,
        }
    }

    /// Writes what a straight write left of its frame, if anything is still left, waiting for
    /// the socket to take it. A write through the [`TcpIo`] may write it meanwhile (the
    /// socket's readiness wakes only the last task to wait for it): whoever writes its last
    /// byte wakes this one.
    pub fn poll_finish(&self, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        let mut state = self.0.state();
        let finished = self.0.finish(&mut state, cx);
        if finished.is_pending() {
            state.full().finisher = Some(cx.waker().clone());
        }
        finished
    }
}

/// A WebSocket frame's header for a final, unmasked frame of `len` bytes, written in `out`.
// Each arm's length fits the field it is written in.
#[allow(clippy::cast_possible_truncation)]
fn header(opcode: Opcode, len: usize, out: &mut [u8; 10]) -> &[u8] {
    out[0] = 0x80 | opcode as u8;
    match len {
        0..=125 => {
            out[1] = len as u8;
            &out[..2]
        }
        126..=0xFFFF => {
            out[1] = 126;
            out[2..4].copy_from_slice(&(len as u16).to_be_bytes());
            &out[..4]
        }
        _ => {
            out[1] = 127;
            out[2..10].copy_from_slice(&(len as u64).to_be_bytes());
            &out[..10]
        }
    }
}

/// A TCP connection as the HTTP server reads and writes it, its stream shared with the
/// requests it serves ([`TcpIo::socket`]).
#[derive(Debug)]
pub struct TcpIo(Arc<Raw>);

impl TcpIo {
    /// The connection over `tcp`.
    pub fn new(tcp: TcpStream) -> TcpIo {
        TcpIo(Arc::new(Raw {
            tcp,
            enabled: AtomicBool::new(false),
            state: Mutex::new(State::default()),
        }))
    }

    /// The connection's stream, for a request to take.
    pub fn socket(&self) -> RawSocket {
        RawSocket(Arc::clone(&self.0))
    }

    /// Writes `bufs` (of `len` bytes in all) once the socket takes them; with straight writes
    /// enabled, under the writers' lock, after writing any straight frame's rest.
    fn poll_write_bufs(
        &mut self,
        cx: &mut Context<'_>,
        bufs: &[IoSlice<'_>],
        len: usize,
    ) -> Poll<io::Result<usize>> {
        if let Some(alone) = Arc::get_mut(&mut self.0) {
            // Nobody else holds the stream (a socket that does not write straight, once its
            // request has gone): the stream's own write.
            let tcp = Pin::new(&mut alone.tcp);
            return match bufs {
                [one] => tcp.poll_write(cx, one),
                _ => tcp.poll_write_vectored(cx, bufs),
            };
        }
        let raw = &*self.0;
        if !raw.enabled.load(Ordering::Acquire) {
            return poll_write_tcp(&raw.tcp, cx, bufs);
        }
        let mut state = raw.state();
        let wrote = match raw.finish(&mut state, cx) {
            Poll::Ready(Ok(())) => poll_write_tcp(&raw.tcp, cx, bufs),
            Poll::Ready(Err(e)) => return Poll::Ready(Err(e)),
            Poll::Pending => Poll::Pending,
        };
        match wrote {
            Poll::Ready(Ok(wrote)) if wrote < len => {
                state.full().partial = true;
                Poll::Ready(Ok(wrote))
            }
            Poll::Ready(Ok(wrote)) => {
                // The socket took the write whole, and nothing straight is left (it went
                // first): what was kept while it was full is let go.
                state.full = None;
                Poll::Ready(Ok(wrote))
            }
            Poll::Pending => {
                state.full().writer = Some(cx.waker().clone());
                Poll::Pending
            }
            failed => failed,
        }
    }
}

/// Writes `bufs` to `tcp` once it takes them.
fn poll_write_tcp(
    tcp: &TcpStream,
    cx: &mut Context<'_>,
    bufs: &[IoSlice<'_>],
) -> Poll<io::Result<usize>> {
    loop {
        ready!(tcp.poll_write_ready(cx))?;
        let wrote = match bufs {
            [one] => tcp.try_write(one),
            _ => tcp.try_write_vectored(bufs),
        };
        match wrote {
            Err(e) if e.kind() == io::ErrorKind::WouldBlock => {}
            wrote => return Poll::Ready(wrote),
        }
    }
}

impl AsyncRead for TcpIo {
    fn poll_read(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &mut ReadBuf<'_>,
    ) -> Poll<io::Result<()>> {
        let this = self.get_mut();
        if let Some(alone) = Arc::get_mut(&mut this.0) {
            return Pin::new(&mut alone.tcp).poll_read(cx, buf);
        }
        let tcp = &this.0.tcp;
        loop {
            ready!(tcp.poll_read_ready(cx))?;
            // A read that does not fill the buffer has emptied the socket: its readiness is
            // cleared as the stream's own reads clear it, or the next read would be a system
            // call that finds nothing.
            let mut emptied = false;
            let read = tcp.try_io(Interest::READABLE, || {
                let room = buf.remaining();
                let n = tcp.try_read_buf(buf)?;
                if n > 0 && n < room {
                    emptied = true;
                    return Err(io::ErrorKind::WouldBlock.into());
                }
                Ok(())
            });
            match read {
                Err(e) if e.kind() == io::ErrorKind::WouldBlock && !emptied => {}
                Err(e) if e.kind() == io::ErrorKind::WouldBlock => return Poll::Ready(Ok(())),
                read => return Poll::Ready(read),
            }
        }
    }
}

impl AsyncWrite for TcpIo {
    fn poll_write(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &[u8],
    ) -> Poll<io::Result<usize>> {
        self.get_mut()
            .poll_write_bufs(cx, &[IoSlice::new(buf)], buf.len())
    }

    fn poll_write_vectored(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        bufs: &[IoSlice<'_>],
    ) -> Poll<io::Result<usize>> {
        let len = bufs.iter().map(|b| b.len()).sum();
        self.get_mut().poll_write_bufs(cx, bufs, len)
    }

    fn is_write_vectored(&self) -> bool {
        true
    }

    fn poll_flush(self: Pin<&mut Self>, _: &mut Context<'_>) -> Poll<io::Result<()>> {
        // Nothing is buffered here: a straight frame's rest is the writer task's to finish.
        Poll::Ready(Ok(()))
    }

    fn poll_shutdown(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        let this = self.get_mut();
        if let Some(alone) = Arc::get_mut(&mut this.0) {
            return Pin::new(&mut alone.tcp).poll_shutdown(cx);
        }
        Poll::Ready(socket2::SockRef::from(&this.0.tcp).shutdown(Shutdown::Write))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    use futures_util::{SinkExt, StreamExt};
    use tokio::net::TcpListener;
    use tokio_tungstenite::WebSocketStream;
    use tokio_tungstenite::tungstenite::Message;
    use tokio_tungstenite::tungstenite::protocol::Role;

    /// What a straight write reads of a connection (the lock, the state, the descriptor) is one
    /// cache line.
    #[test]
    fn a_connection_shared_by_two_writers_is_one_cache_line() {
        assert_eq!(std::mem::size_of::<Raw>(), 64);
        assert_eq!(std::mem::align_of::<Raw>(), 64);
    }

    /// A connected pair on loopback: the server's end as the listener serves it, its stream
    /// shared with straight writes enabled, and the client's end.
    async fn pair() -> (TcpIo, RawSocket, TcpStream) {
        let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
        let client = TcpStream::connect(listener.local_addr().unwrap());
        let (client, accepted) = tokio::join!(client, listener.accept());
        let io = TcpIo::new(accepted.unwrap().0);
        let raw = io.socket();
        raw.enable();
        (io, raw, client.unwrap())
    }

    /// Reads `n` text messages as a WebSocket client does.
    async fn read_texts(client: &mut WebSocketStream<TcpStream>, n: usize) -> Vec<String> {
        let mut texts = Vec::new();
        while texts.len() < n {
            match client.next().await.unwrap().unwrap() {
                Message::Text(text) => texts.push(text.to_string()),
                other => panic!("not a text: {other:?}"),
            }
        }
        texts
    }

    /// A text of `len` bytes, told apart by `n`.
    fn text(n: usize, len: usize) -> String {
        let mut text = format!("{n}:");
        while text.len() < len {
            text.push(char::from(b'a' + (text.len() % 26) as u8));
        }
        text
    }

    #[tokio::test]
    async fn frames_written_straight_read_back_whole_at_every_length_form() {
        let (_io, raw, client) = pair().await;
        let mut client = WebSocketStream::from_raw_socket(client, Role::Client, None).await;
        // A length in the header's 7 bits, in 16 and in 64.
        let texts = [
            text(0, 5),
            text(1, 125),
            text(2, 126),
            text(3, 300),
            text(4, 70_000),
        ];
        for t in &texts {
            assert_eq!(raw.try_frame(Opcode::Text, t.as_bytes()), Wrote::Whole);
        }
        assert_eq!(read_texts(&mut client, texts.len()).await, texts);
        assert_eq!(header(Opcode::Binary, 3, &mut [0; 10]), [0x82, 3]);
    }

    #[tokio::test]
    async fn a_frame_the_socket_took_in_part_is_finished_before_anything_else() {
        let (io, raw, client) = pair().await;
        let mut server = WebSocketStream::from_raw_socket(io, Role::Server, None).await;
        // The client reads nothing yet: frames go straight until the socket takes only part of
        // one.
        let mut sent = Vec::new();
        loop {
            let t = text(sent.len(), 4093);
            match raw.try_frame(Opcode::Text, t.as_bytes()) {
                Wrote::Whole => sent.push(t),
                Wrote::Part => {
                    sent.push(t);
                    break;
                }
                Wrote::Nothing => break,
                Wrote::Failed => panic!("the socket failed"),
            }
            assert!(sent.len() < 100_000, "the socket never filled");
        }
        // Frames of a prime length: the socket's buffer does not end at one's end.
        assert!(raw.0.state().unfinished(), "no frame was left in part");
        // Nothing goes straight until the rest is written; the library's own frame goes after
        // it, whichever of the two writes it.
        assert_eq!(raw.try_frame(Opcode::Text, b"too soon"), Wrote::Nothing);
        let library = tokio::spawn(async move {
            server.send(Message::text("after")).await.unwrap();
            server
        });
        let finish = {
            let raw = raw.clone();
            tokio::spawn(async move { std::future::poll_fn(|cx| raw.poll_finish(cx)).await })
        };
        let mut client = WebSocketStream::from_raw_socket(client, Role::Client, None).await;
        let mut expected = sent.clone();
        expected.push("after".to_owned());
        assert_eq!(read_texts(&mut client, expected.len()).await, expected);
        // The writer task's wait ends, whoever wrote the rest.
        finish.await.unwrap().unwrap();
        let _server = library.await.unwrap();
        // And frames go straight again.
        assert_eq!(raw.try_frame(Opcode::Text, b"again"), Wrote::Whole);
        assert_eq!(read_texts(&mut client, 1).await, ["again"]);
    }

    #[tokio::test]
    async fn nothing_goes_straight_while_the_library_has_part_of_a_frame_left() {
        let (io, raw, client) = pair().await;
        let mut server = WebSocketStream::from_raw_socket(io, Role::Server, None).await;
        // A message far larger than the socket's buffers: the library writes part of it and
        // waits.
        let big = text(7, 16 << 20);
        let sending = {
            let big = big.clone();
            tokio::spawn(async move {
                server.send(Message::text(big)).await.unwrap();
                server
            })
        };
        while !raw.0.state().partial() {
            tokio::task::yield_now().await;
        }
        assert_eq!(raw.try_frame(Opcode::Text, b"not now"), Wrote::Nothing);
        let mut client = WebSocketStream::from_raw_socket(client, Role::Client, None).await;
        assert_eq!(read_texts(&mut client, 1).await, [big]);
        let _server = sending.await.unwrap();
        assert!(!raw.0.state().partial());
        assert_eq!(raw.try_frame(Opcode::Text, b"now"), Wrote::Whole);
        assert_eq!(read_texts(&mut client, 1).await, ["now"]);
    }
}
