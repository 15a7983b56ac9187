//! The limits that protect the server: the message rate, the connection cap, pings that find
//! dead connections, the cap on failed room lookups per address, and the origin check. Timers
//! run on paused tokio time (guarded by a [`Watchdog`]); clients on other loopback addresses
//! (`127.0.0.2`, …) show what is counted per address.

use std::net::{IpAddr, Ipv4Addr};
use std::time::Duration;

use dhumbal_protocol::{
    ApiError, CLOSE_NO_PONG, CLOSE_POLICY_VIOLATION, ClientMessage, Hello, PROTOCOL_VERSION,
    RoomSummary, SeatKind, ServerMessage, codes,
};
use dhumbal_server::Config;
use dhumbal_tests::client::Closed;
use dhumbal_tests::{Client, TestServer, Watchdog, http};

use crate::common::{room_with, standard_for};

/// How long a paused-time test may run, in real time, before the watchdog ends it.
const LIMIT: Duration = Duration::from_secs(120);

/// The loopback address `127.0.0.n`.
fn loopback(n: u8) -> IpAddr {
    Ipv4Addr::new(127, 0, 0, n).into()
}

/// The room's summary, as anyone may look it up.
async fn summary(server: &TestServer, code: &str) -> RoomSummary {
    let (status, body) = http::get(server.addr, &format!("/api/rooms/{code}")).await;
    assert_eq!(status, 200, "{body}");
    serde_json::from_str(&body).expect("a room summary")
}

/// The next message other than a room update, which must be an `error` with this code.
async fn expect_code(client: &mut Client, code: &str) {
    assert_eq!(client.expect_error().await.code, code);
}

#[tokio::test(start_paused = true)]
async fn messages_over_the_rate_are_refused_unhandled_then_the_socket_closes_with_1008() {
    let _watchdog = Watchdog::start("messages_over_the_rate…", LIMIT);
    let server = TestServer::with_config(Config {
        message_burst: 5,
        messages_per_sec: 1,
        rate_limit_strikes: 3,
        // No other timer runs, so paused time moves only when this test sleeps.
        ping_interval: Duration::ZERO,
        ..Config::default()
    })
    .await;
    let room = server.create_room(&room_with(standard_for(2))).await;
    // The hello is the first of the burst of five.
    let mut host = Client::join(server.addr, &room.code, "Asha", Some(&room.host_secret)).await;
    // Four more within the burst are handled (`ready` in the lobby is refused by the room).
    for _ in 0..4 {
        host.send(ClientMessage::Ready { client_seed: None }).await;
        expect_code(&mut host, codes::NOT_BETWEEN_ROUNDS).await;
    }
    // The next one is over the rate: refused before the room sees it, and nothing changes.
    host.send(ClientMessage::AddBot {
        seat: 1,
        difficulty: None,
    })
    .await;
    expect_code(&mut host, codes::RATE_LIMITED).await;
    assert_eq!(
        summary(&server, &room.code).await.seats[1].kind,
        SeatKind::Empty
    );

    // Slowing down earns messages back, one a second.
    tokio::time::sleep(Duration::from_secs(3)).await;
    host.send(ClientMessage::AddBot {
        seat: 1,
        difficulty: None,
    })
    .await;
    host.recv_until(|m| match m {
        ServerMessage::Room(room) if room.seats[1].kind == SeatKind::Bot => Some(()),
        ServerMessage::Error(e) => panic!("the add_bot was refused: {e:?}"),
        _ => None,
    })
    .await;

    // Persistent abuse: one more within the rate, three refused, and the next closes the socket.
    for _ in 0..5 {
        host.send(ClientMessage::Ready { client_seed: None }).await;
    }
    expect_code(&mut host, codes::NOT_BETWEEN_ROUNDS).await;
    for _ in 0..3 {
        expect_code(&mut host, codes::RATE_LIMITED).await;
    }
    match host.recv().await {
        ServerMessage::Bye(bye) => assert_eq!(bye.reason, codes::RATE_LIMITED),
        other => panic!("expected a bye, got {other:?}"),
    }
    assert_eq!(
        host.expect_closed().await,
        Closed::Code(CLOSE_POLICY_VIOLATION)
    );
    server.stop().await;
}

#[tokio::test]
async fn connections_beyond_the_cap_are_refused_with_503_until_one_ends() {
    let server = TestServer::with_config(Config {
        max_connections: 2,
        ..Config::default()
    })
    .await;
    let local = loopback(1);
    let first = Client::connect_from(server.addr, local, None)
        .await
        .unwrap();
    let _second = Client::connect_from(server.addr, local, None)
        .await
        .unwrap();
    let Err((status, body)) = Client::connect_from(server.addr, local, None).await else {
        panic!("a third connection was accepted");
    };
    assert_eq!(status, 503);
    let error: ApiError = serde_json::from_str(&body).expect("an ApiError body");
    assert_eq!(error.code, codes::TOO_MANY_CONNECTIONS);
    // The HTTP API still answers while the WebSocket is full.
    assert_eq!(http::get(server.addr, "/healthz").await.0, 200);

    // Once a connection ends its place is free again (its task ends just after the close).
    first.close().await;
    dhumbal_tests::guarded("a place to come free", async {
        while Client::connect_from(server.addr, local, None)
            .await
            .is_err()
        {
            tokio::task::yield_now().await;
        }
    })
    .await;
    server.stop().await;
}

#[tokio::test(start_paused = true)]
async fn a_client_that_answers_no_pings_is_closed_and_keeps_its_seat() {
    let _watchdog = Watchdog::start("a_client_that_answers_no_pings…", LIMIT);
    // The default ping interval (20 s) and no bot ever taking a seat over.
    let server = TestServer::with_config(Config {
        takeover_after: Duration::from_secs(24 * 3600),
        ..Config::default()
    })
    .await;
    let room = server.create_room(&room_with(standard_for(2))).await;
    let mut host = Client::join(server.addr, &room.code, "Asha", Some(&room.host_secret)).await;
    let token = host.token();
    let mut guest = Client::join(server.addr, &room.code, "Bina", None).await;

    // The host stops reading, so it answers no ping. The guest reads (and so answers every
    // ping) while it waits to see the host marked away, 50 paused seconds later.
    let room_state = guest
        .recv_until(|m| match m {
            ServerMessage::Room(r) if !r.seats[0].connected => Some(r.clone()),
            _ => None,
        })
        .await;
    assert!(
        room_state.seats[1].connected,
        "the guest answered its pings"
    );
    assert_eq!(
        host.expect_closed_unanswered().await,
        Closed::Code(CLOSE_NO_PONG)
    );

    // The seat was kept: the token takes it back.
    let mut back = Client::connect(server.addr).await;
    back.send(ClientMessage::from(Hello {
        protocol: PROTOCOL_VERSION,
        room: room.code.clone(),
        name: "Asha".into(),
        token,
        spectator: false,
        host_secret: None,
        client_seed: None,
    }))
    .await;
    assert_eq!(back.expect_welcome().await.seat, Some(0));
    guest
        .recv_until(|m| match m {
            ServerMessage::Room(r) if r.seats[0].connected => Some(()),
            _ => None,
        })
        .await;
    server.stop().await;
}

#[tokio::test(start_paused = true)]
async fn lookups_of_unknown_rooms_are_capped_per_address_for_a_minute() {
    let _watchdog = Watchdog::start("lookups_of_unknown_rooms…", LIMIT);
    let server = TestServer::with_config(Config {
        max_join_attempts: 3,
        // No ping or hello timers: paused time moves only when this test sleeps.
        ping_interval: Duration::ZERO,
        hello_timeout: Duration::ZERO,
        ..Config::default()
    })
    .await;
    let room = server.create_room(&room_with(standard_for(4))).await;
    let path = format!("/api/rooms/{}", room.code);

    // From 127.0.0.2, three hellos for rooms that do not exist…
    let guesser = loopback(2);
    let mut guessing = Client::connect_from(server.addr, guesser, None)
        .await
        .unwrap();
    for guess in ["ZZZZZZZZZ2", "ZZZZZZZZZ3", "ZZZZZZZZZ4"] {
        guessing.hello(guess, "Guess").await;
        expect_code(&mut guessing, codes::UNKNOWN_ROOM).await;
    }
    // …and from then on every lookup from it is refused, even of the real code.
    guessing.hello(&room.code, "Guess").await;
    expect_code(&mut guessing, codes::TOO_MANY_ATTEMPTS).await;
    let (status, body) = http::request_from(guesser, server.addr, "GET", &path, "").await;
    assert_eq!(status, 429, "{body}");
    assert!(body.contains(codes::TOO_MANY_ATTEMPTS), "{body}");

    // Other addresses are not affected.
    let (status, _) = http::request_from(loopback(3), server.addr, "GET", &path, "").await;
    assert_eq!(status, 200);
    let mut other = Client::connect_from(server.addr, loopback(3), None)
        .await
        .unwrap();
    other.hello(&room.code, "Bina").await;
    other.expect_welcome().await;

    // Failed lookups over HTTP count the same way.
    let prober = loopback(4);
    for _ in 0..3 {
        let (status, _) =
            http::request_from(prober, server.addr, "GET", "/api/rooms/ZZZZZZZZZ5", "").await;
        assert_eq!(status, 404);
    }
    let (status, _) = http::request_from(prober, server.addr, "GET", &path, "").await;
    assert_eq!(status, 429);

    // Once the minute has passed, the address may try again.
    tokio::time::sleep(Duration::from_secs(61)).await;
    guessing.hello(&room.code, "Guess").await;
    guessing.expect_welcome_skipping_rooms().await;
    let (status, _) = http::request_from(prober, server.addr, "GET", &path, "").await;
    assert_eq!(status, 200);
    server.stop().await;
}

#[tokio::test]
async fn browser_upgrades_from_foreign_origins_are_refused_with_403() {
    let server = TestServer::with_config(Config {
        allowed_origins: vec!["https://friends.example".into()],
        ..Config::default()
    })
    .await;
    let local = loopback(1);
    let Err((status, body)) =
        Client::connect_from(server.addr, local, Some("https://evil.example")).await
    else {
        panic!("a foreign origin was let in");
    };
    assert_eq!(status, 403);
    let error: ApiError = serde_json::from_str(&body).expect("an ApiError body");
    assert_eq!(error.code, codes::FORBIDDEN_ORIGIN);
    // Another port of the same host is another origin.
    let other_port = format!("http://127.0.0.1:{}", server.addr.port() + 1);
    assert!(
        Client::connect_from(server.addr, local, Some(&other_port))
            .await
            .is_err()
    );

    // The server's own origin (the page it serves), a listed origin, and no origin at all.
    let own = format!("http://{}", server.addr);
    let room = server.create_room(&room_with(standard_for(4))).await;
    for (origin, name) in [
        (Some(own.as_str()), "Asha"),
        (Some("https://friends.example"), "Bina"),
        (None, "Chandra"),
    ] {
        let mut client = Client::connect_from(server.addr, local, origin)
            .await
            .unwrap_or_else(|refused| panic!("{origin:?} was refused: {refused:?}"));
        client.hello(&room.code, name).await;
        client.expect_welcome_skipping_rooms().await;
    }
    server.stop().await;
}
