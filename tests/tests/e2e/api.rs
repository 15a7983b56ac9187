//! The HTTP API.

use dhumbal_protocol::{ApiError, CreateRoom, CreatedRoom, RoomSummary, SeatKind, Stage, codes};
use dhumbal_server::Config;
use dhumbal_tests::http::{get, post};
use dhumbal_tests::{Client, TestServer};

#[tokio::test]
async fn a_room_is_created_and_described() {
    let server = TestServer::start().await;
    let (status, body) = post(server.addr, "/api/rooms", r#"{"preset":"standard"}"#).await;
    assert_eq!(status, 201, "{body}");
    let room: CreatedRoom = serde_json::from_str(&body).unwrap();
    assert_eq!(room.code.len(), 10);
    assert!(
        room.code
            .bytes()
            .all(|b| dhumbal_server::code::ALPHABET.contains(&b))
    );
    assert_eq!(room.url, format!("/r/{}", room.code));
    assert_eq!(room.settings.players, 4);
    assert!(!room.host_secret.is_empty());

    let (status, body) = get(server.addr, &format!("/api/rooms/{}", room.code)).await;
    assert_eq!(status, 200, "{body}");
    let summary: RoomSummary = serde_json::from_str(&body).unwrap();
    assert!(summary.exists && !summary.started);
    assert_eq!(summary.stage, Stage::Lobby);
    assert_eq!(summary.free_seats, 4);

    // Someone sits down; a lower-case code finds the same room.
    let _asha = Client::join(server.addr, &room.code, "Asha", None).await;
    let path = format!("/api/rooms/{}", room.code.to_lowercase());
    let (status, body) = get(server.addr, &path).await;
    assert_eq!(status, 200);
    let summary: RoomSummary = serde_json::from_str(&body).unwrap();
    assert_eq!(summary.free_seats, 3);
    assert_eq!(summary.seats[0].kind, SeatKind::Human);
    assert_eq!(summary.seats[0].name.as_deref(), Some("Asha"));
    assert!(summary.seats[0].connected);

    // An empty body makes a standard room too.
    let (status, _) = post(server.addr, "/api/rooms", "").await;
    assert_eq!(status, 201);
    server.stop().await;
}

#[tokio::test]
async fn refusals_carry_their_codes() {
    let server = TestServer::with_config(Config {
        bot_delay_ms: 0,
        max_rooms: 2,
        ..Config::default()
    })
    .await;
    let addr = server.addr;
    let refused = |status: u16, body: String, want_status: u16, code: &str| {
        assert_eq!(status, want_status, "{body}");
        let error: ApiError = serde_json::from_str(&body).unwrap();
        assert_eq!(error.code, code, "{}", error.message);
    };
    let (status, body) = get(addr, "/api/rooms/NOSUCHROOM").await;
    refused(status, body, 404, codes::UNKNOWN_ROOM);
    let (status, body) = post(addr, "/api/rooms", "{nope").await;
    refused(status, body, 400, codes::BAD_MESSAGE);
    let mut settings = dhumbal_engine::Preset::Standard.settings();
    settings.players = 9;
    let request = serde_json::to_string(&CreateRoom {
        settings: Some(settings),
        ..CreateRoom::default()
    })
    .unwrap();
    let (status, body) = post(addr, "/api/rooms", &request).await;
    refused(status, body, 400, "bad_players");
    // This server was not started with --allow-test-decks.
    let request = serde_json::to_string(&CreateRoom {
        decks: Some(vec![dhumbal_engine::full_deck(false)]),
        ..CreateRoom::default()
    })
    .unwrap();
    let (status, body) = post(addr, "/api/rooms", &request).await;
    refused(status, body, 403, codes::TEST_DECKS_DISABLED);
    // Two rooms fit, a third does not.
    for _ in 0..2 {
        assert_eq!(post(addr, "/api/rooms", "{}").await.0, 201);
    }
    let (status, body) = post(addr, "/api/rooms", "{}").await;
    refused(status, body, 503, codes::TOO_MANY_ROOMS);
    server.stop().await;
}

#[tokio::test]
async fn a_test_deck_must_be_a_whole_pack() {
    let server = TestServer::start().await;
    let mut deck = dhumbal_engine::full_deck(false);
    deck.pop();
    let request = serde_json::to_string(&CreateRoom {
        decks: Some(vec![deck]),
        ..CreateRoom::default()
    })
    .unwrap();
    let (status, body) = post(server.addr, "/api/rooms", &request).await;
    assert_eq!(status, 400, "{body}");
    assert!(body.contains("bad_deck"));
    server.stop().await;
}

#[tokio::test]
async fn the_health_check_answers() {
    let server = TestServer::start().await;
    assert_eq!(get(server.addr, "/healthz").await, (200, "ok".to_owned()));
    server.stop().await;
}

#[tokio::test(start_paused = true)]
async fn a_room_nobody_is_in_closes_after_its_idle_time() {
    let _watchdog = dhumbal_tests::Watchdog::start(
        "a_room_nobody_is_in_closes_after_its_idle_time",
        std::time::Duration::from_secs(120),
    );
    let idle = std::time::Duration::from_secs(60);
    let server = TestServer::with_config(Config {
        bot_delay_ms: 0,
        idle_room_ttl: idle,
        ..Config::default()
    })
    .await;
    let unused = server.create_room(&CreateRoom::default()).await;
    let used = server.create_room(&CreateRoom::default()).await;
    let asha = Client::join(server.addr, &used.code, "Asha", None).await;

    // Paused time: this sleep lets the idle time pass at once.
    tokio::time::sleep(idle + std::time::Duration::from_secs(1)).await;
    let (status, _) = get(server.addr, &format!("/api/rooms/{}", unused.code)).await;
    assert_eq!(status, 404, "a room nobody joined is closed");
    let (status, _) = get(server.addr, &format!("/api/rooms/{}", used.code)).await;
    assert_eq!(status, 200, "a room with someone in it stays open");

    // Once the last person leaves, the idle time starts again.
    asha.close().await;
    tokio::time::sleep(idle / 2).await;
    assert_eq!(
        get(server.addr, &format!("/api/rooms/{}", used.code))
            .await
            .0,
        200
    );
    tokio::time::sleep(idle).await;
    assert_eq!(
        get(server.addr, &format!("/api/rooms/{}", used.code))
            .await
            .0,
        404
    );
    server.stop().await;
}
