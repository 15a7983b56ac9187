//! Operations end to end: `/metrics` counts what happened, `/readyz` turns 503 while draining,
//! the health check client, the diagnostic echo and relays, and a clean WebSocket close.
//!
//! Each test starts its own server, and each server has its own metrics, so the tests may run
//! side by side in this binary without seeing each other's counts.

use std::net::SocketAddr;
use std::time::Duration;

use dhumbal_engine::{Preset, Settings};
use dhumbal_protocol::{ClientMessage, CreateRoom, ServerMessage, codes};
use dhumbal_server::config::StoreKind;
use dhumbal_server::{Config, health};
use dhumbal_tests::server::unlimited_rate;
use dhumbal_tests::{Client, PATIENCE, TestServer, answer, guarded, http, random_action};
use futures_util::{SinkExt, StreamExt};
use rand::SeedableRng;
use rand::rngs::StdRng;
use tokio::net::TcpListener;
use tokio::sync::oneshot;
use tokio_tungstenite::connect_async;
use tokio_tungstenite::tungstenite::Message;

/// A room for two at the standard table.
fn room_for_two() -> CreateRoom {
    CreateRoom {
        settings: Some(Settings {
            players: 2,
            ..Preset::Standard.settings()
        }),
        ..CreateRoom::default()
    }
}

/// The server's metrics, scraped.
async fn scrape(addr: SocketAddr) -> String {
    let (status, body) = http::get(addr, "/metrics").await;
    assert_eq!(status, 200, "GET /metrics: {body}");
    body
}

/// The value of `series` (a name with its labels, as written) in a scrape; 0 when absent.
fn value(scrape: &str, series: &str) -> f64 {
    scrape
        .lines()
        .find_map(|line| line.strip_prefix(series)?.strip_prefix(' ')?.parse().ok())
        .unwrap_or(0.0)
}

/// Scrapes until `holds` is true of the scrape (the server updates some gauges just after it
/// answers, when a connection's task ends).
async fn scrape_until(addr: SocketAddr, what: &str, holds: impl Fn(&str) -> bool) -> String {
    guarded(what, async {
        loop {
            let text = scrape(addr).await;
            if holds(&text) {
                return text;
            }
            tokio::time::sleep(Duration::from_millis(10)).await;
        }
    })
    .await
}

#[tokio::test]
async fn metrics_count_messages_refusals_seats_and_a_whole_match() {
    let server = TestServer::start().await;
    let before = scrape(server.addr).await;
    assert_eq!(value(&before, "dhumbal_rooms"), 0.0);
    assert_eq!(value(&before, "dhumbal_messages_in_total"), 0.0);
    assert!(before.contains("# TYPE dhumbal_action_seconds histogram"));

    let room = server.create_room(&room_for_two()).await;
    let mut host = Client::join(server.addr, &room.code, "Asha", Some(&room.host_secret)).await;
    let mut sent = 1; // the hello
    // Two refusals: `ready` in the lobby, and a message of no known type.
    host.send(ClientMessage::Ready { client_seed: None }).await;
    sent += 1;
    assert_eq!(host.expect_error().await.code, codes::NOT_BETWEEN_ROUNDS);
    host.send_text(r#"{"type":"juggle"}"#).await;
    sent += 1;
    let unknown = host.expect_error().await.code;

    let lobby = scrape(server.addr).await;
    assert_eq!(value(&lobby, "dhumbal_rooms"), 1.0);
    assert_eq!(value(&lobby, "dhumbal_connections"), 1.0);
    assert_eq!(value(&lobby, r#"dhumbal_seated{kind="human"}"#), 1.0);
    assert_eq!(value(&lobby, r#"dhumbal_seated{kind="bot"}"#), 0.0);

    // Play the whole match against the bot the start puts in the empty seat.
    host.send(ClientMessage::Start).await;
    sent += 1;
    let mut rng = StdRng::seed_from_u64(7);
    let mut ready_for = 0;
    let mut checked_seats = false;
    loop {
        match host.recv().await {
            ServerMessage::State { view, .. } => {
                if !checked_seats {
                    let playing = scrape(server.addr).await;
                    assert_eq!(value(&playing, r#"dhumbal_seated{kind="human"}"#), 1.0);
                    assert_eq!(value(&playing, r#"dhumbal_seated{kind="bot"}"#), 1.0);
                    checked_seats = true;
                }
                if let Some(message) = answer(&view, &mut rng, &mut ready_for) {
                    host.send(message).await;
                    sent += 1;
                }
            }
            ServerMessage::MatchResult(_) => break,
            ServerMessage::Error(error) => panic!("a legal action was refused: {error:?}"),
            _ => {}
        }
    }

    let after = scrape(server.addr).await;
    assert_eq!(value(&after, "dhumbal_messages_in_total"), f64::from(sent));
    // Every message but the hello and the unknown one reached the room and was timed there.
    assert_eq!(
        value(&after, "dhumbal_action_seconds_count"),
        f64::from(sent - 2)
    );
    assert!(value(&after, "dhumbal_action_seconds_sum") > 0.0);
    let received = u32::try_from(host.received.len()).expect("a count");
    assert!(value(&after, "dhumbal_messages_out_total") >= f64::from(received));
    assert_eq!(
        value(
            &after,
            r#"dhumbal_rejected_messages_total{code="not_between_rounds"}"#
        ),
        1.0
    );
    assert_eq!(
        value(
            &after,
            &format!(r#"dhumbal_rejected_messages_total{{code="{unknown}"}}"#)
        ),
        1.0
    );
    assert_eq!(value(&after, "dhumbal_matches_finished_total"), 1.0);
    assert_eq!(value(&after, "dhumbal_bot_takeovers_total"), 0.0);
    assert_eq!(value(&after, "dhumbal_slow_clients_dropped_total"), 0.0);

    host.close().await;
    let gone = scrape_until(server.addr, "the connection to be counted out", |text| {
        value(text, "dhumbal_connections") == 0.0
    })
    .await;
    // The person keeps the seat (they may come back), and the room stays open.
    assert_eq!(value(&gone, r#"dhumbal_seated{kind="human"}"#), 1.0);
    assert_eq!(value(&gone, "dhumbal_rooms"), 1.0);
}

#[tokio::test]
async fn a_takeover_is_counted() {
    let server = TestServer::with_config(Config {
        bot_delay_ms: 0,
        takeover_after: Duration::from_millis(50),
        ..unlimited_rate()
    })
    .await;
    let room = server.create_room(&room_for_two()).await;
    let mut host = Client::join(server.addr, &room.code, "Asha", Some(&room.host_secret)).await;
    let guest = Client::join(server.addr, &room.code, "Bina", None).await;
    host.send(ClientMessage::Start).await;
    guest.close().await;
    // The host plays on; when the away guest's turn has waited, a bot plays it.
    let mut rng = StdRng::seed_from_u64(11);
    loop {
        match host.recv().await {
            ServerMessage::State { view, .. } if view.my_turn() => {
                host.send(random_action(&view, &mut rng)).await;
            }
            ServerMessage::Room(room) if room.seats[1].stand_in.is_some() => break,
            ServerMessage::Error(error) => panic!("a legal action was refused: {error:?}"),
            _ => {}
        }
    }
    let text = scrape(server.addr).await;
    assert_eq!(value(&text, "dhumbal_bot_takeovers_total"), 1.0);
    assert_eq!(value(&text, r#"dhumbal_seated{kind="human"}"#), 2.0);
}

#[tokio::test]
async fn readiness_turns_false_while_draining_and_health_stays_ok() {
    let listener = TcpListener::bind("127.0.0.1:0")
        .await
        .expect("bind a loopback port");
    let addr = listener.local_addr().expect("the listener's address");
    let (shutdown, stop) = oneshot::channel::<()>();
    let config = Config {
        drain_delay: PATIENCE * 2,
        store: StoreKind::Memory,
        ..Config::default()
    };
    let server = tokio::spawn(dhumbal_server::run(listener, config, async move {
        let _ = stop.await;
    }));
    assert_eq!(http::get(addr, "/readyz").await.0, 200);
    assert_eq!(http::get(addr, "/healthz").await.0, 200);
    let checked = tokio::task::spawn_blocking(move || {
        (
            health::check(addr, "/healthz"),
            health::check(addr, "/readyz"),
        )
    })
    .await
    .expect("the check ran");
    assert_eq!(checked, (Ok(()), Ok(())));

    shutdown.send(()).expect("the server is running");
    guarded("readiness to turn false", async {
        while http::get(addr, "/readyz").await.0 != 503 {
            tokio::time::sleep(Duration::from_millis(10)).await;
        }
    })
    .await;
    // Still serving while it drains: alive, and the API answers.
    assert_eq!(http::get(addr, "/healthz").await.0, 200);
    let (healthy, ready) = tokio::task::spawn_blocking(move || {
        (
            health::check(addr, "/healthz"),
            health::check(addr, "/readyz"),
        )
    })
    .await
    .expect("the check ran");
    assert_eq!(healthy, Ok(()));
    assert!(ready.is_err(), "a draining server is not ready: {ready:?}");
    server.abort();
}

#[tokio::test]
async fn the_echo_route_is_off_unless_asked_for() {
    let off = TestServer::start().await;
    assert_eq!(http::get(off.addr, "/ws-echo").await.0, 404);
    let on = TestServer::with_config(Config {
        ws_echo: true,
        ..Config::default()
    })
    .await;
    let (mut ws, _) = guarded(
        "the echo WebSocket to open",
        connect_async(format!("ws://{}/ws-echo", on.addr)),
    )
    .await
    .expect("the echo WebSocket opens");
    ws.send(Message::text("namaste")).await.expect("sent");
    let echoed = guarded("the echo", ws.next()).await;
    assert!(matches!(echoed, Some(Ok(Message::Text(t))) if t.as_str() == "namaste"));
}

#[tokio::test]
async fn the_relay_sends_a_message_to_its_whole_group_and_no_other() {
    relay_sends_to_its_whole_group("ws-relay").await;
}

#[tokio::test]
async fn the_room_relay_sends_a_message_to_its_whole_group_and_no_other() {
    relay_sends_to_its_whole_group("ws-room-relay").await;
}

/// The diagnostic relay at `/{route}/{group}`, served only with `--ws-echo`: a message reaches
/// every socket of its group, the sender's too, and no other; a member that leaves is no longer
/// sent to; a group all of whose members have left starts afresh.
async fn relay_sends_to_its_whole_group(route: &'static str) {
    let off = TestServer::start().await;
    assert_eq!(http::get(off.addr, &format!("/{route}/a")).await.0, 404);
    let on = TestServer::with_config(Config {
        ws_echo: true,
        ..Config::default()
    })
    .await;
    let open = |group: &'static str| {
        let url = format!("ws://{}/{route}/{group}", on.addr);
        async move {
            guarded("a relay WebSocket to open", connect_async(url))
                .await
                .expect("the relay WebSocket opens")
                .0
        }
    };
    let (mut a1, mut a2, mut b) = (open("a").await, open("a").await, open("b").await);
    a1.send(Message::text("to a")).await.expect("sent");
    b.send(Message::text("to b")).await.expect("sent");
    for (ws, expected) in [(&mut a1, "to a"), (&mut a2, "to a"), (&mut b, "to b")] {
        let got = guarded("the relayed message", ws.next()).await;
        assert!(
            matches!(&got, Some(Ok(Message::Text(t))) if t.as_str() == expected),
            "expected {expected:?}, got {got:?}"
        );
    }
    // A member that leaves is no longer sent to; the group goes on.
    a1.close(None).await.expect("closed");
    a2.send(Message::text("again")).await.expect("sent");
    let got = guarded("the relayed message", a2.next()).await;
    assert!(matches!(&got, Some(Ok(Message::Text(t))) if t.as_str() == "again"));
    // Once everyone has left, the group's name is free and a new member has it to itself.
    a2.close(None).await.expect("closed");
    while let Some(Ok(_)) = guarded("the socket to end", a2.next()).await {}
    let mut a3 = open("a").await;
    a3.send(Message::text("afresh")).await.expect("sent");
    let got = guarded("the relayed message", a3.next()).await;
    assert!(matches!(&got, Some(Ok(Message::Text(t))) if t.as_str() == "afresh"));
    // The sender's copy was its only one: the next message it reads is its next one's.
    a3.send(Message::text("once")).await.expect("sent");
    let got = guarded("the relayed message", a3.next()).await;
    assert!(matches!(&got, Some(Ok(Message::Text(t))) if t.as_str() == "once"));
}

#[tokio::test]
async fn a_close_from_the_client_is_answered_before_the_socket_ends() {
    let server = TestServer::start().await;
    let (mut ws, _) = guarded(
        "the WebSocket to open",
        connect_async(format!("ws://{}/ws", server.addr)),
    )
    .await
    .expect("the WebSocket opens");
    ws.send(Message::Close(None))
        .await
        .expect("the close is sent");
    // The server answers with its own close frame, then ends the connection: no reset.
    let answer = guarded("the close answer", ws.next()).await;
    assert!(
        matches!(answer, Some(Ok(Message::Close(_)))),
        "expected a close frame, got {answer:?}"
    );
    let end = guarded("the socket to end", ws.next()).await;
    assert!(end.is_none(), "expected the end of the socket, got {end:?}");
}
