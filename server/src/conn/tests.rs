//! The connection without a socket: [`serve_streams`] over in-memory channels, with the clock
//! paused, so that the checks the reader and writer make can be seen one by one.

use std::net::{IpAddr, Ipv4Addr};
use std::pin::Pin;
use std::sync::Arc;
use std::time::Duration;

use axum::extract::ws::Message;
use dhumbal_protocol::{
    CLOSE_GOING_AWAY, CLOSE_NO_HELLO, CLOSE_NO_PONG, CLOSE_POLICY_VIOLATION, CLOSE_TOO_BIG,
    ServerMessage, codes,
};
use futures_util::{Sink, SinkExt, Stream, sink, stream};
use tokio::sync::mpsc;
use tokio::task::JoinHandle;

use super::serve_streams;
use crate::AppState;
use crate::config::Config;
use crate::metrics::Metrics;
use crate::room::testing::drain;
use crate::store::{Store, StoreConfig};

/// What the client side of a connection under test holds.
struct Client {
    /// Frames to the server (or read errors, as the socket would report them).
    to_server: mpsc::UnboundedSender<Result<Message, axum::Error>>,
    /// Frames the server wrote.
    from_server: mpsc::UnboundedReceiver<Message>,
    /// The connection's task: it ends when the connection does.
    served: JoinHandle<()>,
    /// The server's state.
    app: Arc<AppState>,
}

type BoxedSink = Pin<Box<dyn Sink<Message, Error = ()> + Send>>;
type BoxedStream = Pin<Box<dyn Stream<Item = Result<Message, axum::Error>> + Send>>;

/// A connection served over channels, with `config` (a sink that takes frames only while
/// `stalled` is false), opened at `/ws`.
fn connect(config: Config, stalled: bool) -> Client {
    connect_at(config, stalled, None)
}

/// A connection as [`connect`], opened at `/ws/{path_room}` when that is given.
fn connect_at(config: Config, stalled: bool, path_room: Option<&str>) -> Client {
    let metrics = Arc::new(Metrics::default());
    let store = Store::open(&StoreConfig::Memory, Arc::clone(&metrics)).unwrap();
    let app = Arc::new(AppState::new(config, store, metrics));
    let (to_server, inbound) = mpsc::unbounded_channel();
    let (outbound, from_server) = mpsc::unbounded_channel();
    let sink: BoxedSink = Box::pin(sink::unfold(
        outbound,
        move |out, frame: Message| async move {
            if stalled {
                std::future::pending::<()>().await;
            }
            out.send(frame).map_err(|_| ())?;
            Ok(out)
        },
    ));
    let stream: BoxedStream = Box::pin(stream::unfold(inbound, |mut inbound| async move {
        inbound.recv().await.map(|frame| (frame, inbound))
    }));
    let served = tokio::spawn(serve_streams(
        sink,
        stream,
        Arc::clone(&app),
        IpAddr::V4(Ipv4Addr::LOCALHOST),
        path_room.map(str::to_owned),
        super::Framing::Text,
        None,
    ));
    Client {
        to_server,
        from_server,
        served,
        app,
    }
}

impl Client {
    fn send(&self, frame: Message) {
        let _ = self.to_server.send(Ok(frame));
    }

    fn text(&self, text: &str) {
        self.send(Message::Text(text.into()));
    }

    /// The next text message from the server, decoded (pings skipped).
    async fn message(&mut self) -> ServerMessage {
        loop {
            match self.from_server.recv().await.expect("a frame") {
                Message::Text(text) => return serde_json::from_str(text.as_str()).unwrap(),
                Message::Ping(_) => {}
                other => panic!("expected a text message, got {other:?}"),
            }
        }
    }

    /// The next frame, which must be a close: its code.
    async fn close_code(&mut self) -> u16 {
        loop {
            match self.from_server.recv().await.expect("a frame") {
                Message::Close(Some(frame)) => return frame.code,
                Message::Ping(_) => {}
                other => panic!("expected a close, got {other:?}"),
            }
        }
    }

    /// Waits for the connection to end.
    async fn ended(self) {
        self.served.await.unwrap();
    }
}

fn error_code(message: &ServerMessage) -> &str {
    match message {
        ServerMessage::Error(e) => &e.code,
        other => panic!("expected an error, got {other:?}"),
    }
}

fn bye_reason(message: &ServerMessage) -> &str {
    match message {
        ServerMessage::Bye(bye) => &bye.reason,
        other => panic!("expected a bye, got {other:?}"),
    }
}

#[tokio::test(start_paused = true)]
async fn hello_comes_first_a_room_must_exist_and_binary_is_refused() {
    let mut client = connect(Config::default(), false);
    client.text(r#"{"type":"call","id":7}"#);
    let refused = client.message().await;
    assert_eq!(error_code(&refused), codes::HELLO_FIRST);
    let ServerMessage::Error(e) = refused else {
        unreachable!()
    };
    assert_eq!(e.id, Some(dhumbal_protocol::MessageId::Number(7)));
    client.text(r#"{"type":"nonsense"}"#);
    assert_eq!(error_code(&client.message().await), codes::UNKNOWN_TYPE);
    client.send(Message::Binary(vec![1, 2, 3].into()));
    assert_eq!(error_code(&client.message().await), codes::BAD_MESSAGE);
    let hello = format!(
        r#"{{"type":"hello","protocol":{},"room":"NOSUCHROOM","name":"Asha","token":null}}"#,
        dhumbal_protocol::PROTOCOL_VERSION
    );
    client.text(&hello);
    assert_eq!(error_code(&client.message().await), codes::UNKNOWN_ROOM);
    client.text(r#"{"type":"hello","protocol":1,"room":"X","name":"Asha","token":null}"#);
    assert_eq!(
        error_code(&client.message().await),
        codes::UNSUPPORTED_PROTOCOL
    );
    // Still no room after the hello timeout: told, then closed.
    assert_eq!(bye_reason(&client.message().await), codes::HELLO_TIMEOUT);
    assert_eq!(client.close_code().await, CLOSE_NO_HELLO);
    client.ended().await;
}

#[tokio::test(start_paused = true)]
async fn a_socket_opened_for_a_room_may_only_say_hello_to_that_room() {
    // One failed lookup is all an address may have: a counted one would block the next.
    let config = Config {
        max_join_attempts: 1,
        ..Config::default()
    };
    let mut client = connect_at(config, false, Some(" nosuchroom"));
    let hello = |room: &str| {
        format!(
            r#"{{"type":"hello","protocol":{},"room":"{room}","name":"Asha","token":null,"id":1}}"#,
            dhumbal_protocol::PROTOCOL_VERSION
        )
    };
    // Another room's code is refused before any lookup: no failed attempt is counted.
    for _ in 0..3 {
        client.text(&hello("OTHERROOM2"));
        assert_eq!(error_code(&client.message().await), codes::ROOM_MISMATCH);
    }
    let ip = IpAddr::V4(Ipv4Addr::LOCALHOST);
    assert!(client.app.join_attempts.check(ip).is_ok());
    // The path's own code (in any case) is looked up as at `/ws`: here it is no room's, which
    // counts.
    client.text(&hello("NoSuchRoom"));
    assert_eq!(error_code(&client.message().await), codes::UNKNOWN_ROOM);
    assert!(client.app.join_attempts.check(ip).is_err());
}

#[tokio::test(start_paused = true)]
async fn a_message_over_the_size_cap_closes_with_1009() {
    let mut client = connect(Config::default(), false);
    let too_long =
        tungstenite::Error::Capacity(tungstenite::error::CapacityError::MessageTooLong {
            size: 1 << 20,
            max_size: 1 << 14,
        });
    let _ = client.to_server.send(Err(axum::Error::new(too_long)));
    assert_eq!(client.close_code().await, CLOSE_TOO_BIG);
    client.ended().await;
}

#[tokio::test(start_paused = true)]
async fn the_rate_limit_refuses_then_says_bye_and_closes_with_1008() {
    let config = Config {
        message_burst: 3,
        messages_per_sec: 1,
        rate_limit_strikes: 2,
        ..Config::default()
    };
    let mut client = connect(config, false);
    for _ in 0..10 {
        client.send(Message::Ping(Default::default()));
    }
    let mut refused = 0;
    loop {
        let message = client.message().await;
        match message {
            ServerMessage::Error(e) if e.code == codes::RATE_LIMITED => refused += 1,
            ServerMessage::Bye(bye) => {
                assert_eq!(bye.reason, codes::RATE_LIMITED);
                break;
            }
            other => panic!("unexpected {other:?}"),
        }
    }
    assert!(refused >= 1, "refused {refused}");
    assert_eq!(client.close_code().await, CLOSE_POLICY_VIOLATION);
    client.ended().await;
}

#[tokio::test(start_paused = true)]
async fn the_shutdown_says_bye_then_closes_and_silence_closes_with_4002() {
    let mut client = connect(Config::default(), false);
    client.app.shutdown.begin();
    assert_eq!(bye_reason(&client.message().await), codes::SHUTTING_DOWN);
    assert_eq!(client.close_code().await, CLOSE_GOING_AWAY);
    client.ended().await;

    let config = Config {
        ping_interval: Duration::from_secs(10),
        hello_timeout: Duration::ZERO,
        ..Config::default()
    };
    let mut quiet = connect(config, false);
    // Two pings go unanswered; half an interval later the connection is closed as gone.
    assert_eq!(quiet.close_code().await, CLOSE_NO_PONG);
    quiet.ended().await;
}

/// The reader keeps the time for both tasks: the writer pings every interval, on time, and a
/// client that answers every ping stays connected however long it says nothing else.
#[tokio::test(start_paused = true)]
async fn pings_go_out_every_interval_and_a_client_that_answers_them_stays() {
    let config = Config {
        ping_interval: Duration::from_secs(10),
        hello_timeout: Duration::ZERO,
        ..Config::default()
    };
    let mut client = connect(config, false);
    let start = tokio::time::Instant::now();
    for n in 1..=6u32 {
        match client.from_server.recv().await.expect("a frame") {
            Message::Ping(_) => {}
            other => panic!("expected ping {n}, got {other:?}"),
        }
        assert_eq!(
            start.elapsed(),
            Duration::from_secs(10) * n,
            "ping {n} on time"
        );
        client.send(Message::Pong(Default::default()));
    }
    assert!(
        !client.served.is_finished(),
        "answered pings keep it connected"
    );
}

#[tokio::test(start_paused = true)]
async fn a_client_that_reads_nothing_is_dropped_once_its_queue_is_full() {
    // No timer of its own could end it: no pings, no hello timeout.
    let config = Config {
        client_queue: 2,
        ping_interval: Duration::ZERO,
        hello_timeout: Duration::ZERO,
        ..Config::default()
    };
    let client = connect(config, true);
    // Every refusal is queued for a socket that takes nothing: the queue fills, and the
    // connection is dropped rather than waited on (within an hour of the paused clock, which
    // only passes when nothing else can happen).
    for _ in 0..20 {
        client.text(r#"{"type":"call"}"#);
    }
    tokio::time::timeout(Duration::from_secs(3600), client.ended())
        .await
        .expect("the connection was dropped");
}

/// The largest a connection's task may be, in bytes, while it waits: each idle socket holds one.
/// Joining a room (a claim in a shared store, a restore) once made it 5,312 bytes, and an idle
/// connection 11.2 KiB in all (`loadgen idle`); with the join boxed and the room's queue tried
/// before it is awaited, 1,320 and 7.3 KiB; with a frame handled without awaiting (the join and
/// a full room's queue awaited apart), 1,000; with the hello timer boxed, 952.
const MAX_CONNECTION_FUTURE: usize = 2048;

#[test]
fn an_idle_connections_task_stays_small() {
    let metrics = Arc::new(Metrics::default());
    let store = Store::open(&StoreConfig::Memory, Arc::clone(&metrics)).unwrap();
    let app = Arc::new(AppState::new(Config::default(), store, metrics));
    let (_to_server, mut inbound) = mpsc::unbounded_channel::<Result<Message, axum::Error>>();
    let stream: BoxedStream = Box::pin(stream::poll_fn(move |cx| inbound.poll_recv(cx)));
    let sink: BoxedSink = Box::pin(sink::drain().sink_map_err(|_| ()));
    let served = serve_streams(
        sink,
        stream,
        app,
        IpAddr::V4(Ipv4Addr::LOCALHOST),
        None,
        super::Framing::Text,
        None,
    );
    let size = std::mem::size_of_val(&served);
    assert!(
        size <= MAX_CONNECTION_FUTURE,
        "a connection's task is {size} bytes (at most {MAX_CONNECTION_FUTURE}): box the large \
         future it awaits rarely"
    );
}

/// `?compress=deflate-raw` asks for the compressed stream; no `compress` is text frames; any
/// other value is refused with `unsupported_compression`, whatever else the query holds.
#[test]
fn the_query_chooses_the_framing_and_an_unknown_compression_is_refused() {
    use super::Framing;
    for (query, framing) in [
        (None, Framing::Text),
        (Some(""), Framing::Text),
        (Some("v=2&lang"), Framing::Text),
        (Some("compress=deflate-raw"), Framing::DeflateRaw),
        (Some("x=1&compress=deflate-raw"), Framing::DeflateRaw),
    ] {
        assert_eq!(Framing::from_query(query).unwrap(), framing, "{query:?}");
    }
    for query in [
        "compress",
        "compress=",
        "compress=gzip",
        "compress=DEFLATE-RAW",
    ] {
        let refused = Framing::from_query(Some(query)).unwrap_err();
        assert_eq!(refused.code(), "unsupported_compression", "{query}");
        assert_eq!(refused.status(), axum::http::StatusCode::BAD_REQUEST);
    }
}

/// The largest a connection's writer may be, in bytes: every action wakes four of them, and
/// each wake touches much of its future, gone cold since the connection's last action. It was
/// 616 bytes (as tests build it) while it also waited on the kick (a select around each wait
/// and each write), and 560 since.
const MAX_WRITER_FUTURE: usize = 576;

#[test]
fn a_writers_task_stays_small() {
    let sink: BoxedSink = Box::pin(sink::drain().sink_map_err(|_| ()));
    let (_queue, outbox) = mpsc::channel::<crate::room::client::Outgoing>(4);
    let socket = super::writer::Socket::new(sink, None, None, Arc::new(Metrics::default()));
    let writer = super::writer::run(Arc::new(socket), outbox);
    let size = std::mem::size_of_val(&writer);
    assert!(
        size <= MAX_WRITER_FUTURE,
        "a connection's writer is {size} bytes (at most {MAX_WRITER_FUTURE})"
    );
}

/// A socket's sending half for the tests of [`super::writer::Socket`]: it takes every frame at
/// once into its buffer, and lets the buffer out (into `sent`) only while its gate is open,
/// as a socket whose peer reads or does not.
#[derive(Clone, Default)]
struct Gated {
    /// Whether what is buffered may leave.
    open: Arc<std::sync::atomic::AtomicBool>,
    /// Frames taken but not yet out.
    buffered: Arc<std::sync::Mutex<Vec<Message>>>,
    /// Frames out, in order.
    sent: Arc<std::sync::Mutex<Vec<Message>>>,
    /// Who waits for the gate to open.
    waiting: Arc<futures_util::task::AtomicWaker>,
}

impl Gated {
    /// A gate that is `open` or not.
    fn new(open: bool) -> Gated {
        let gated = Gated::default();
        gated.open.store(open, std::sync::atomic::Ordering::SeqCst);
        gated
    }

    /// Opens the gate, waking whoever waits on it.
    fn open(&self) {
        self.open.store(true, std::sync::atomic::Ordering::SeqCst);
        self.waiting.wake();
    }

    /// The texts out so far.
    fn sent(&self) -> Vec<String> {
        let sent = self.sent.lock().unwrap();
        sent.iter()
            .map(|frame| match frame {
                Message::Text(text) => text.to_string(),
                other => format!("{other:?}"),
            })
            .collect()
    }
}

impl Sink<Message> for Gated {
    type Error = ();

    fn poll_ready(
        self: Pin<&mut Self>,
        _: &mut std::task::Context<'_>,
    ) -> std::task::Poll<Result<(), ()>> {
        std::task::Poll::Ready(Ok(()))
    }

    fn start_send(self: Pin<&mut Self>, frame: Message) -> Result<(), ()> {
        self.buffered.lock().unwrap().push(frame);
        Ok(())
    }

    fn poll_flush(
        self: Pin<&mut Self>,
        cx: &mut std::task::Context<'_>,
    ) -> std::task::Poll<Result<(), ()>> {
        self.waiting.register(cx.waker());
        if !self.open.load(std::sync::atomic::Ordering::SeqCst) {
            return std::task::Poll::Pending;
        }
        let out: Vec<Message> = self.buffered.lock().unwrap().drain(..).collect();
        self.sent.lock().unwrap().extend(out);
        std::task::Poll::Ready(Ok(()))
    }

    fn poll_close(
        self: Pin<&mut Self>,
        cx: &mut std::task::Context<'_>,
    ) -> std::task::Poll<Result<(), ()>> {
        self.poll_flush(cx)
    }
}

/// A client's way in over `sink`, as [`serve_streams`] makes it, with its queue's far end and
/// its socket (for its writer).
fn client_over(
    sink: Gated,
    deflater: Option<super::Deflater>,
) -> (
    crate::room::client::ClientTx,
    mpsc::Receiver<crate::room::client::Outgoing>,
    Arc<super::writer::Socket<Gated>>,
) {
    let socket = Arc::new(super::writer::Socket::new(
        sink,
        None,
        deflater,
        Arc::new(Metrics::default()),
    ));
    let kick = crate::room::client::Kick::of(
        Arc::clone(&socket) as Arc<dyn crate::room::client::HoldsKick>
    );
    let (queue, outbox) = mpsc::channel(8);
    let tx = crate::room::client::ClientTx {
        queue,
        kick,
        direct: Some(Arc::clone(&socket) as Arc<dyn crate::room::client::Direct>),
    };
    (tx, outbox, socket)
}

#[tokio::test]
async fn a_socket_that_takes_a_text_at_once_gets_it_straight_from_the_sender() {
    let sink = Gated::new(true);
    let (tx, mut outbox, _socket) = client_over(sink.clone(), None);
    assert!(tx.send("one".into()));
    assert!(tx.send("two".into()));
    // No writer runs: the sender wrote both, and queued nothing.
    assert_eq!(sink.sent(), ["one", "two"]);
    assert!(outbox.try_recv().is_err());
}

#[tokio::test]
async fn what_a_socket_does_not_take_at_once_its_writer_finishes_and_the_order_is_kept() {
    let sink = Gated::new(false);
    let (tx, mut outbox, socket) = client_over(sink.clone(), None);
    // Written into the socket's buffer, but not out: the writer is asked to finish it, and the
    // next text waits behind, in the queue.
    assert!(tx.send("one".into()));
    assert!(tx.send("two".into()));
    assert!(sink.sent().is_empty());
    assert!(matches!(
        outbox.try_recv(),
        Ok(crate::room::client::Outgoing::Flush)
    ));
    // Put the flush back in front, as the writer would find it.
    let (queue, writer_outbox) = mpsc::channel(8);
    queue
        .try_send(crate::room::client::Outgoing::Flush)
        .unwrap();
    while let Ok(next) = outbox.try_recv() {
        queue.try_send(next).unwrap();
    }
    drop(outbox);
    let writer = tokio::spawn(super::writer::run(Arc::clone(&socket), writer_outbox));
    tokio::task::yield_now().await;
    assert!(sink.sent().is_empty(), "the gate is shut");
    sink.open();
    while sink.sent().len() < 2 {
        tokio::task::yield_now().await;
    }
    // The writer has caught up: the next text goes straight again, after the others.
    tokio::task::yield_now().await;
    assert!(tx.send("three".into()));
    assert_eq!(sink.sent(), ["one", "two", "three"]);
    drop(queue);
    writer.abort();
}

#[tokio::test]
async fn once_the_writer_has_ended_nothing_more_goes_straight() {
    let sink = Gated::new(true);
    let (tx, mut outbox, socket) = client_over(sink.clone(), None);
    let ended = tokio::spawn({
        let socket = Arc::clone(&socket);
        async move {
            let (queue, outbox) = mpsc::channel(1);
            drop(queue);
            // A writer over a closed queue sends a close and ends.
            super::writer::run(socket, outbox).await;
        }
    });
    ended.await.unwrap();
    assert_eq!(sink.sent(), ["Close(None)"]);
    // Kicked (the writer ended): nothing more goes straight.
    assert!(tx.send("late".into()));
    assert_eq!(sink.sent(), ["Close(None)"]);
    assert_eq!(drain(&mut outbox), ["late"]);
}

#[tokio::test]
async fn a_close_queued_by_the_room_goes_after_what_it_wrote_and_nothing_goes_straight_after() {
    let sink = Gated::new(true);
    let (tx, mut outbox, _socket) = client_over(sink.clone(), None);
    assert!(tx.send("before".into()));
    tx.close(1000, "done");
    assert!(tx.send("after".into()));
    assert_eq!(sink.sent(), ["before"]);
    assert_eq!(drain(&mut outbox), ["close 1000", "after"]);
}

#[tokio::test]
async fn a_compressed_socket_gets_frames_of_its_one_stream_from_the_sender_and_the_writer_alike() {
    let sink = Gated::new(true);
    let (tx, outbox, socket) = client_over(sink.clone(), Some(super::Deflater::new()));
    assert!(tx.send("{\"a\":1}".into()));
    assert!(tx.send("{\"b\":2}".into()));
    // The writer takes a queued batch into the same stream.
    let (queue, writer_outbox) = mpsc::channel(8);
    drop(outbox);
    queue
        .try_send(crate::room::client::Outgoing::Text("{\"c\":3}".into()))
        .unwrap();
    queue
        .try_send(crate::room::client::Outgoing::Text("{\"d\":4}".into()))
        .unwrap();
    let writer = tokio::spawn(super::writer::run(Arc::clone(&socket), writer_outbox));
    while sink.sent.lock().unwrap().len() < 3 {
        tokio::task::yield_now().await;
    }
    let mut inflater = super::Inflater::new();
    let messages: Vec<Vec<String>> = sink
        .sent
        .lock()
        .unwrap()
        .iter()
        .map(|frame| match frame {
            Message::Binary(bytes) => inflater.messages(bytes).unwrap(),
            other => panic!("a compressed socket sent {other:?}"),
        })
        .collect();
    assert_eq!(
        messages,
        [
            vec!["{\"a\":1}"],
            vec!["{\"b\":2}"],
            vec!["{\"c\":3}", "{\"d\":4}"]
        ]
    );
    drop(queue);
    writer.abort();
}
