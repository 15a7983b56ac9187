//! The actor around the core: validate, append, then broadcast; and the room's timers, on a
//! paused clock (no socket, no real waiting).

use super::*;
use crate::room::client::Outgoing;

use crate::room::testing::{TIMING, drain, setup};
use crate::store::StoreConfig;
use dhumbal_engine::Preset;
use dhumbal_protocol::{ClientMessage, Hello, PROTOCOL_VERSION};
use std::time::Duration;

/// Joins a client, returning whether it joined and what it was sent.
async fn join(room: &RoomHandle, conn: ConnId, name: &str) -> (bool, mpsc::Receiver<Outgoing>) {
    join_as(room, conn, name, false).await
}

/// Joins a client (as the host, with the host's secret, if `host`).
async fn join_as(
    room: &RoomHandle,
    conn: ConnId,
    name: &str,
    host: bool,
) -> (bool, mpsc::Receiver<Outgoing>) {
    let (queue, outbox) = mpsc::channel(64);
    let client = ClientTx {
        queue,
        kick: crate::room::client::Kick::new(),
        direct: None,
    };
    let (reply, joined) = oneshot::channel();
    let hello = Hello {
        protocol: PROTOCOL_VERSION,
        room: "STOREROOM2".into(),
        name: name.into(),
        token: None,
        spectator: false,
        host_secret: host.then(|| "secret".to_owned()),
        client_seed: None,
    };
    room.send(Command::Join {
        joining: Joining {
            conn,
            hello: hello.into(),
            id: None,
            token_only: false,
            address: std::net::Ipv4Addr::LOCALHOST.into(),
        },
        client,
        reply,
    })
    .await;
    (joined.await.unwrap_or(false), outbox)
}

#[tokio::test]
async fn what_is_appended_is_sent_and_what_is_not_never_is() {
    let dir = tempfile::tempdir().unwrap();
    let (store, metrics) = crate::store::sqlite_for_tests(dir.path());
    let shutdown = Shutdown::new();
    let log = RoomLog::new(store.clone(), "STOREROOM2".into(), 0);
    store
        .create_room(
            "STOREROOM2",
            record::encode(&setup("STOREROOM2", Preset::Standard.settings())),
        )
        .await
        .unwrap();
    let room = spawn(
        new_core(
            &setup("STOREROOM2", Preset::Standard.settings()),
            TIMING,
            Arc::clone(&metrics),
        ),
        log,
        Thinkers::new(1),
        &shutdown,
        Box::new(|| {}),
    );
    // A join is a seat taken: appended, then welcomed.
    let (joined, mut outbox) = join(&room, 1, "Asha").await;
    assert!(joined);
    let sent = drain(&mut outbox);
    assert!(sent[0].contains(r#""type":"welcome""#), "{sent:?}");
    let loaded = store.load().unwrap();
    assert_eq!(loaded.rooms[0].inputs.len(), 1, "the seat is in the log");

    // The log fails (the store is gone): the next join's seat is never announced, and the
    // room waits for its log, telling its clients to come back after a pause.
    store.close().await;
    let (joined, mut second) = join(&room, 2, "Bina").await;
    assert!(!joined);
    let sent = drain(&mut second);
    assert!(
        sent.iter().all(|m| !m.contains(r#""type":"welcome""#)),
        "{sent:?}"
    );
    let first = drain(&mut outbox);
    assert!(
        first
            .iter()
            .any(|m| m.contains(r#""reason":"store_unavailable""#)),
        "{first:?}"
    );
    assert_eq!(first.last().map(String::as_str), Some("close 1013"));
    assert!(
        first.iter().all(|m| !m.contains(r#""type":"room""#)),
        "nobody hears of the seat that was not logged: {first:?}"
    );
    shutdown.begin();
    assert!(
        shutdown.wait(Duration::from_secs(5)).await,
        "the room stopped"
    );
}

/// A room on the memory store with `timing`, its shutdown, and word of when its task ends.
async fn memory_room(
    settings: dhumbal_engine::Settings,
    timing: Timing,
) -> (RoomHandle, Shutdown, oneshot::Receiver<()>) {
    memory_room_thinking_in(settings, timing, Thinkers::new(1)).await
}

/// The same, its bots thinking in `thinkers`.
async fn memory_room_thinking_in(
    settings: dhumbal_engine::Settings,
    timing: Timing,
    thinkers: Thinkers,
) -> (RoomHandle, Shutdown, oneshot::Receiver<()>) {
    let metrics = Arc::new(Metrics::new());
    let store = Store::open(&StoreConfig::Memory, Arc::clone(&metrics)).unwrap();
    let shutdown = Shutdown::new();
    let (ended, closed) = oneshot::channel();
    let log = RoomLog::new(store.clone(), "STOREROOM2".into(), 0);
    let setup = setup("STOREROOM2", settings);
    store
        .create_room("STOREROOM2", record::encode(&setup))
        .await
        .unwrap();
    let core = RoomCore::new(&setup, timing, metrics, Instant::now());
    let room = spawn(
        core,
        log,
        thinkers,
        &shutdown,
        Box::new(move || {
            let _ = ended.send(());
        }),
    );
    (room, shutdown, closed)
}

/// A message's `type`.
fn kind(text: &str) -> String {
    let value: serde_json::Value = serde_json::from_str(text).unwrap_or_default();
    value["type"].as_str().unwrap_or("close").to_owned()
}

/// Whether a message tells a change of the game: a whole `state` or a `patch`.
fn tells_change(text: &str) -> bool {
    matches!(kind(text).as_str(), "state" | "patch")
}

/// The view as `sent` leaves it (the fields it told, at least): each `state`'s view replaces it,
/// each `patch`'s fields replace the view's.
fn view_in(sent: &[String]) -> serde_json::Value {
    let mut view = serde_json::Map::new();
    for text in sent.iter().filter(|m| tells_change(m)) {
        let value: serde_json::Value = serde_json::from_str(text).unwrap();
        let told = value["view"].as_object().expect("a view").clone();
        if value["type"] == "state" {
            view = told;
        } else {
            view.extend(told);
        }
    }
    assert!(!view.is_empty(), "no state among {sent:?}");
    serde_json::Value::Object(view)
}

/// The seat to play, from the views told in `sent`.
fn turn_in(sent: &[String]) -> usize {
    usize::try_from(view_in(sent)["turn"].as_u64().unwrap()).unwrap()
}

/// Seats Asha (the host, seat 0) and Bina (seat 1) at a two-seat table and starts the match.
/// Returns the room, its shutdown, and each person's queue, in seat order, with what they were
/// sent so far drained; and the seat to play.
async fn two_people_playing(
    settings: dhumbal_engine::Settings,
) -> (RoomHandle, Shutdown, Vec<mpsc::Receiver<Outgoing>>, usize) {
    let settings = dhumbal_engine::Settings {
        players: 2,
        ..settings
    };
    let (room, shutdown, _closed) = memory_room(settings, TIMING).await;
    let (joined, mut asha) = join_as(&room, 1, "Asha", true).await;
    assert!(joined);
    let (joined, mut bina) = join(&room, 2, "Bina").await;
    assert!(joined);
    room.send(Command::Message(Request {
        conn: 1,
        id: None,
        message: ClientMessage::Start,
    }))
    .await;
    // Let the room handle it (the clock is paused: nothing else is due).
    tokio::time::sleep(Duration::from_millis(1)).await;
    let sent = drain(&mut asha);
    drain(&mut bina);
    let turn = turn_in(&sent);
    (room, shutdown, vec![asha, bina], turn)
}

#[tokio::test(start_paused = true)]
async fn a_room_nobody_is_in_closes_after_its_idle_time() {
    let timing = Timing {
        idle_ttl: Duration::from_secs(600),
        ..TIMING
    };
    let (room, _shutdown, mut closed) = memory_room(Preset::Standard.settings(), timing).await;
    let (joined, _outbox) = join_as(&room, 1, "Asha", true).await;
    assert!(joined);
    room.send(Command::Leave { conn: 1 }).await;
    tokio::time::sleep(Duration::from_secs(599)).await;
    assert!(closed.try_recv().is_err(), "open until its idle time is up");
    assert!(room.summary().await.is_some());
    tokio::time::sleep(Duration::from_secs(2)).await;
    assert!(closed.await.is_ok(), "closed");
    assert!(room.summary().await.is_none());
}

/// Regression (issue 35, item 2): a room nobody joined held its place under `--max-rooms` for
/// the whole idle time. It closes after `unjoined_ttl`; a room someone sat in keeps the idle
/// time.
#[tokio::test(start_paused = true)]
async fn a_room_nobody_joined_closes_after_its_unjoined_time() {
    let timing = Timing {
        idle_ttl: Duration::from_secs(600),
        unjoined_ttl: Duration::from_secs(60),
        ..TIMING
    };
    let (room, _shutdown, mut closed) = memory_room(Preset::Standard.settings(), timing).await;
    tokio::time::sleep(Duration::from_secs(59)).await;
    assert!(
        closed.try_recv().is_err(),
        "open until its unjoined time is up"
    );
    tokio::time::sleep(Duration::from_secs(2)).await;
    assert!(closed.await.is_ok(), "closed");
    assert!(room.summary().await.is_none());

    let (room, _shutdown, mut closed) = memory_room(Preset::Standard.settings(), timing).await;
    let (joined, _outbox) = join_as(&room, 1, "Asha", true).await;
    assert!(joined);
    room.send(Command::Leave { conn: 1 }).await;
    tokio::time::sleep(Duration::from_secs(120)).await;
    assert!(
        closed.try_recv().is_err(),
        "someone sat here: the idle time holds"
    );
    assert!(room.summary().await.is_some());
}

#[tokio::test(start_paused = true)]
async fn a_lobby_that_never_starts_expires() {
    let timing = Timing {
        lobby_ttl: Duration::from_secs(3600),
        ..TIMING
    };
    let (room, _shutdown, mut closed) = memory_room(Preset::Standard.settings(), timing).await;
    let (joined, mut asha) = join_as(&room, 1, "Asha", true).await;
    assert!(joined);
    tokio::time::sleep(Duration::from_secs(3599)).await;
    assert!(closed.try_recv().is_err());
    drain(&mut asha);
    tokio::time::sleep(Duration::from_secs(2)).await;
    assert!(closed.await.is_ok(), "closed");
    let sent = drain(&mut asha);
    assert!(
        sent.iter().any(|m| m.contains("room_expired")),
        "Asha is told why: {sent:?}"
    );
}

#[tokio::test(start_paused = true)]
async fn an_away_persons_turn_goes_to_a_stand_in_after_the_grace() {
    let (room, _shutdown, mut queues, turn) = two_people_playing(Preset::Standard.settings()).await;
    // The person to play goes away; the other watches.
    room.send(Command::Leave {
        conn: ConnId::try_from(turn + 1).unwrap(),
    })
    .await;
    let watcher = &mut queues[1 - turn];
    tokio::time::sleep(Duration::from_secs(29)).await;
    let sent = drain(watcher);
    assert!(
        sent.iter().all(|m| !tells_change(m)),
        "nobody plays during the grace: {sent:?}"
    );
    tokio::time::sleep(Duration::from_secs(2)).await;
    let sent = drain(watcher);
    assert!(
        sent.iter().any(|m| tells_change(m)),
        "a stand-in played the turn: {sent:?}"
    );
}

#[tokio::test(start_paused = true)]
async fn a_turn_out_of_time_is_played_by_a_stand_in_and_everyone_hears() {
    let settings = dhumbal_engine::Settings {
        turn_timer: Some(15),
        ..Preset::Standard.settings()
    };
    let (_room, _shutdown, mut queues, _turn) = two_people_playing(settings).await;
    tokio::time::sleep(Duration::from_secs(14)).await;
    for queue in &mut queues {
        let sent = drain(queue);
        assert!(sent.iter().all(|m| kind(m) != "notice"), "{sent:?}");
    }
    tokio::time::sleep(Duration::from_secs(2)).await;
    for queue in &mut queues {
        let sent = drain(queue);
        assert!(
            sent.iter()
                .any(|m| kind(m) == "notice" && m.contains("timed_out")),
            "{sent:?}"
        );
        assert!(sent.iter().any(|m| tells_change(m)), "{sent:?}");
    }
}

/// A draw from the stock.
fn from_the_stock() -> ClientMessage {
    ClientMessage::Draw {
        from: dhumbal_protocol::DrawFrom::Stock,
        card: None,
    }
}

/// Sends `message` for Asha (conn 1) and lets the room handle it.
async fn asha_says(room: &RoomHandle, message: ClientMessage) {
    room.send(Command::Message(Request {
        conn: 1,
        id: None,
        message,
    }))
    .await;
    tokio::time::sleep(Duration::from_millis(1)).await;
}

#[tokio::test(start_paused = true)]
async fn a_room_answers_its_person_while_its_expert_thinks() {
    let settings = dhumbal_engine::Settings {
        players: 2,
        difficulty: dhumbal_engine::Difficulty::Expert,
        ..Preset::Standard.settings()
    };
    // The expert never gets a thread: it thinks for ever.
    let (room, _shutdown, _closed) =
        memory_room_thinking_in(settings, TIMING, Thinkers::stalled()).await;
    let (joined, mut asha) = join_as(&room, 1, "Asha", true).await;
    assert!(joined);
    asha_says(&room, ClientMessage::Start).await;
    let mut sent = drain(&mut asha);
    // Asha plays her turn if it is hers: a card from the stock, then her first card.
    if turn_in(&sent) == 0 {
        asha_says(&room, from_the_stock()).await;
        let view = view_in(&drain(&mut asha));
        let card = serde_json::from_value(view["hand"][0].clone()).unwrap();
        asha_says(&room, ClientMessage::Throw { cards: vec![card] }).await;
        sent = drain(&mut asha);
    }
    assert_eq!(turn_in(&sent), 1, "the expert's turn");
    tokio::time::sleep(Duration::from_secs(60)).await;
    assert!(drain(&mut asha).is_empty(), "the expert is still thinking");
    asha_says(
        &room,
        ClientMessage::Chat {
            text: "take your time".into(),
        },
    )
    .await;
    let sent = drain(&mut asha);
    assert!(
        sent.iter()
            .any(|m| kind(m) == "chat" && m.contains("take your time")),
        "the room answered at once: {sent:?}"
    );
    // And a move out of turn is refused as usual, changing nothing.
    asha_says(&room, from_the_stock()).await;
    let sent = drain(&mut asha);
    assert!(
        sent.iter().all(|m| kind(m) == "error"),
        "only a refusal: {sent:?}"
    );
    assert_eq!(sent.len(), 1);
}

/// Every message a connection sends crosses the room's queue as a [`Command`], an action (a few
/// bytes of data) as much as a `hello`: the rare large messages (`hello`, `set_settings`, a
/// join) are boxed, so that each slot of the queue, and each move of a command, is 104 bytes
/// rather than the 248 it was with the `hello` inline.
#[test]
fn commands_are_moved_at_the_size_of_a_small_message() {
    use std::mem::size_of;
    assert!(size_of::<dhumbal_protocol::ClientMessage>() <= 72);
    assert!(size_of::<super::core::Input>() <= 112);
    assert!(size_of::<Command>() <= 112);
}
