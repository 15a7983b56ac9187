//! The HTTP API.

use dhumbal_engine::{
    DoublePenalty, Preset, Rounds, Scoring, Settings, TURN_TIMERS, TurnOrder, full_deck,
};
use dhumbal_protocol::{
    ApiError, CheckedSettings, CreateRoom, CreatedRoom, Presets, RoomSummary, SeatKind, Stage,
    codes,
};
use dhumbal_server::Config;
use dhumbal_tests::http::{get, get_with, post};
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

#[tokio::test]
async fn the_presets_are_the_engines() {
    let server = TestServer::start().await;
    let (status, body) = get(server.addr, "/api/presets").await;
    assert_eq!(status, 200, "{body}");
    let presets: Presets = serde_json::from_str(&body).unwrap();
    let names: Vec<&str> = presets.presets.iter().map(|(p, _)| p.name()).collect();
    let engine: Vec<&str> = Preset::ALL.iter().map(|p| p.name()).collect();
    assert_eq!(names, engine, "every preset, in the engine's order");
    for (preset, settings) in &presets.presets {
        assert_eq!(*settings, preset.settings(), "{}", preset.name());
    }
    assert_eq!(presets.turn_timers, TURN_TIMERS);
    // The keys come in the engine's order in the text itself, for a client that iterates them.
    let value: serde_json::Value = serde_json::from_str(&body).unwrap();
    let mut previous = 0;
    for name in engine {
        let at = body.find(&format!("\"{name}\":{{")).unwrap();
        assert!(at > previous, "{name} is out of order: {body}");
        previous = at;
        // Every field spelled out, as the engine serialises it.
        let settings = serde_json::to_value(Preset::from_name(name).unwrap().settings()).unwrap();
        assert_eq!(value["presets"][name], settings);
    }
    // A client that has them revalidates and is told nothing changed.
    let (status, body) = get_with(server.addr, "/api/presets", &[("If-None-Match", "*")]).await;
    assert_eq!((status, body.as_str()), (304, ""));
    server.stop().await;
}

/// `POST path` with `body`, answered with a refusal: its status and code.
async fn refusal(server: &TestServer, path: &str, body: &str) -> (u16, String, String) {
    let (status, text) = post(server.addr, path, body).await;
    let error: ApiError =
        serde_json::from_str(&text).unwrap_or_else(|e| panic!("{path} {body}: {e}: {text}"));
    (status, error.code, error.message)
}

#[tokio::test]
async fn the_check_accepts_every_preset() {
    let server = TestServer::start().await;
    for preset in Preset::ALL {
        let bodies = [
            format!("{{\"preset\":\"{}\"}}", preset.name()),
            serde_json::json!({ "settings": preset.settings() }).to_string(),
        ];
        for body in bodies {
            let (status, text) = post(server.addr, "/api/settings/check", &body).await;
            assert_eq!(status, 200, "{body}: {text}");
            let checked: CheckedSettings = serde_json::from_str(&text).unwrap();
            assert_eq!(
                checked,
                CheckedSettings {
                    ok: true,
                    settings: preset.settings()
                }
            );
        }
    }
    // An empty body and `{}` are the standard table, as for a new room.
    for body in ["", "{}"] {
        let (status, text) = post(server.addr, "/api/settings/check", body).await;
        assert_eq!(status, 200, "{text}");
        let checked: CheckedSettings = serde_json::from_str(&text).unwrap();
        assert_eq!(checked.settings, Preset::Standard.settings());
    }
    // A good test deck passes on a server that allows them.
    let body = serde_json::json!({ "decks": [full_deck(false)] }).to_string();
    assert_eq!(post(server.addr, "/api/settings/check", &body).await.0, 200);
    server.stop().await;
}

#[tokio::test]
async fn the_check_refuses_as_creating_the_room_would() {
    let server = TestServer::start().await;
    // Each kind of settings the engine refuses: its code, a preset, and what is changed in it.
    type Case = (&'static str, Preset, fn(&mut Settings));
    let table: [Case; 16] = [
        ("bad_players", Preset::Standard, |s| s.players = 1),
        ("bad_players", Preset::Standard, |s| s.players = 7),
        ("bad_cards", Preset::Standard, |s| s.cards = 6),
        ("bad_rounds", Preset::Standard, |s| {
            s.rounds = Rounds::Fixed(0)
        }),
        ("until_one_needs_elimination", Preset::Standard, |s| {
            s.rounds = Rounds::UntilOneRemains;
        }),
        ("bad_call_limit", Preset::Standard, |s| {
            s.call_limit = Some(51)
        }),
        ("bad_penalty", Preset::Standard, |s| s.penalty = 0),
        ("bad_double_penalty", Preset::Standard, |s| {
            s.double_penalty = Some(DoublePenalty {
                amount: 25,
                margin: 5,
            });
        }),
        ("bad_double_penalty_margin", Preset::Standard, |s| {
            s.double_penalty = Some(DoublePenalty {
                amount: 50,
                margin: 51,
            });
        }),
        (
            "jokers_in_runs_needs_runs_and_jokers",
            Preset::Standard,
            |s| s.jokers_in_runs = true,
        ),
        ("pickup_needs_throw_first", Preset::Yaniv, |s| {
            s.turn_order = TurnOrder::DrawThenThrow;
        }),
        ("elimination_needs_cumulative", Preset::Household, |s| {
            s.scoring = Scoring::Settlement;
        }),
        ("bad_elimination", Preset::Household, |s| {
            s.elimination = Some(1001)
        }),
        ("score_reset_needs_cumulative", Preset::Standard, |s| {
            s.score_reset = true
        }),
        ("bad_turn_timer", Preset::Standard, |s| {
            s.turn_timer = Some(45)
        }),
        ("guide_players", Preset::Household, |s| s.players = 6),
    ];
    let mut cases: Vec<(&str, String)> = table
        .into_iter()
        .map(|(code, preset, change)| {
            let mut settings = preset.settings();
            change(&mut settings);
            (
                code,
                serde_json::json!({ "settings": settings }).to_string(),
            )
        })
        .collect();
    let mut short = full_deck(false);
    short.pop();
    cases.extend([
        (
            "bad_deck",
            serde_json::json!({ "decks": [short] }).to_string(),
        ),
        (codes::BAD_MESSAGE, "{nope".to_owned()),
        (codes::BAD_MESSAGE, "[]".to_owned()),
        (codes::BAD_MESSAGE, r#"{"colour":"red"}"#.to_owned()),
        (codes::BAD_MESSAGE, r#"{"preset":"chess"}"#.to_owned()),
        (
            codes::BAD_MESSAGE,
            r#"{"settings":{"players":4}}"#.to_owned(),
        ),
    ]);
    // Every case is tried, and every one that fails is named, not just the first.
    let mut failed = Vec::new();
    for (code, body) in &cases {
        let checked = refusal(&server, "/api/settings/check", body).await;
        let created = refusal(&server, "/api/rooms", body).await;
        if (checked.0, checked.1.as_str()) != (400, *code) {
            failed.push(format!("{body}: {checked:?}, not (400, {code:?})"));
        } else if checked != created {
            failed.push(format!(
                "{body}: the check says {checked:?}, the room {created:?}"
            ));
        }
    }
    assert!(
        failed.is_empty(),
        "{} of {} cases failed:\n{}",
        failed.len(),
        cases.len(),
        failed.join("\n")
    );
    server.stop().await;

    // Without --allow-test-decks, a deck is refused alike by both.
    let server = TestServer::with_config(Config {
        bot_delay_ms: 0,
        ..Config::default()
    })
    .await;
    let body = serde_json::json!({ "decks": [full_deck(false)] }).to_string();
    let checked = refusal(&server, "/api/settings/check", &body).await;
    assert_eq!(
        (checked.0, checked.1.as_str()),
        (403, codes::TEST_DECKS_DISABLED)
    );
    assert_eq!(checked, refusal(&server, "/api/rooms", &body).await);
    server.stop().await;
}

#[tokio::test]
async fn the_check_creates_nothing_and_counts_against_no_creation_limit() {
    let server = TestServer::with_config(Config {
        bot_delay_ms: 0,
        room_creations_per_minute: 1,
        ..Config::default()
    })
    .await;
    for _ in 0..20 {
        assert_eq!(post(server.addr, "/api/settings/check", "{}").await.0, 200);
    }
    assert_eq!(post(server.addr, "/api/rooms", "{}").await.0, 201);
    let (status, code, _) = refusal(&server, "/api/rooms", "{}").await;
    assert_eq!((status, code.as_str()), (429, codes::RATE_LIMITED));
    assert_eq!(post(server.addr, "/api/settings/check", "{}").await.0, 200);
    server.stop().await;
}

#[tokio::test]
async fn a_body_over_the_limit_is_refused_by_the_check_as_by_the_room() {
    let server = TestServer::start().await;
    // Valid JSON, but more than the 64 KiB the API reads.
    let body = format!("{{\"preset\":\"standard\"{}}}", " ".repeat(65 * 1024));
    let (checked, _) = post(server.addr, "/api/settings/check", &body).await;
    let (created, _) = post(server.addr, "/api/rooms", &body).await;
    assert_eq!((checked, created), (413, 413));
    // Just under the limit is read.
    let body = format!("{{\"preset\":\"standard\"{}}}", " ".repeat(60 * 1024));
    assert_eq!(post(server.addr, "/api/settings/check", &body).await.0, 200);
    server.stop().await;
}
