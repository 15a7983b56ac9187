//! Two servers sharing one Redis (skipped without `redis-server`, but under `CI=true`): a room
//! created on one node is described by the other from the store and claimed by it when its
//! people come there; when someone comes to the first node, that node claims it back, the other
//! is fenced off and tells its clients `room_moved` (close 4006), and they find their seats,
//! views and history on the node that holds the room now, and play on.

use std::net::SocketAddr;
use std::time::Duration;

use dhumbal_protocol::{
    CLOSE_ROOM_MOVED, CLOSE_TRY_AGAIN_LATER, ClientMessage, Hello, RoomSummary, ServerMessage,
    codes,
};
use dhumbal_server::Config;
use dhumbal_server::config::StoreKind;
use dhumbal_tests::client::{Closed, hello, room_path};
use dhumbal_tests::redis::RedisServer;
use dhumbal_tests::{Client, TestServer, answer, http, server::unlimited_rate};
use rand::SeedableRng;
use rand::rngs::StdRng;

use crate::common::{room_with, standard_for};

/// A node on `redis`, named `id`, with a short lease so that a move is noticed at once.
async fn node(redis: &RedisServer, id: &str) -> TestServer {
    TestServer::with_config(Config {
        store: StoreKind::Redis(redis.url()),
        node_id: Some(id.to_owned()),
        lease: Duration::from_millis(600),
        bot_delay_ms: 0,
        ..unlimited_rate()
    })
    .await
}

/// The value of `series` on the node `id` at `addr`.
async fn metric(addr: SocketAddr, series: &str, id: &str) -> f64 {
    let (status, text) = http::get(addr, "/metrics").await;
    assert_eq!(status, 200);
    let name = format!("{series}{{node=\"{id}\"}} ");
    text.lines()
        .find_map(|line| line.strip_prefix(&name)?.parse().ok())
        .unwrap_or_else(|| panic!("no {series} on {id}"))
}

/// Answers the client's turns (a few at most) until nothing more comes for a while: the table
/// is at rest, waiting for someone.
async fn play_a_little(mut client: Client, seed: u64) -> (Client, usize) {
    let mut rng = StdRng::seed_from_u64(seed);
    let (mut ready, mut acted) = (0, 0);
    while let Ok(message) = tokio::time::timeout(Duration::from_millis(500), client.recv()).await {
        if let (ServerMessage::State { view, .. }, true) = (message, acted < 4) {
            if let Some(reply) = answer(&view, &mut rng, &mut ready) {
                client.send(reply).await;
                acted += 1;
            }
        }
    }
    (client, acted)
}

/// Reads until the server says `bye`, and answers its reason and the close code that follows.
async fn moved(client: &mut Client) -> (String, Closed) {
    let bye = client
        .recv_until(|m| match m {
            ServerMessage::Bye(bye) => Some(bye.clone()),
            _ => None,
        })
        .await;
    (bye.reason, client.expect_closed().await)
}

#[cfg_attr(
    missing_redis,
    ignore = "needs redis-server: apt-get install redis-server"
)]
#[tokio::test]
async fn a_room_created_on_one_node_is_played_on_another_and_moves_back() {
    let Some(redis) = RedisServer::start_or_skip("shared_store::a_room_moves") else {
        return;
    };
    let a = node(&redis, "node-a").await;
    let b = node(&redis, "node-b").await;
    let room = a.create_room(&room_with(standard_for(2))).await;
    // Creating a room writes it to the store; no node holds it until its people come.
    assert_eq!(metric(a.addr, "dhumbal_rooms", "node-a").await, 0.0);
    let (status, body) = http::get(b.addr, &format!("/api/rooms/{}", room.code)).await;
    assert_eq!(status, 200, "{body}");
    let summary: RoomSummary = serde_json::from_str(&body).unwrap();
    assert_eq!(
        (summary.code.as_str(), summary.free_seats),
        (room.code.as_str(), 2)
    );

    // Asha (the host) and Bina come to B: B claims the room, and they play.
    let mut asha = Client::join(b.addr, &room.code, "Asha", Some(&room.host_secret)).await;
    let bina = Client::join(b.addr, &room.code, "Bina", None).await;
    assert_eq!(
        metric(b.addr, "dhumbal_room_claims_total", "node-b").await,
        1.0
    );
    assert_eq!(metric(b.addr, "dhumbal_rooms", "node-b").await, 1.0);
    asha.send(ClientMessage::Start).await;
    let ((asha, asha_acted), (bina, bina_acted)) =
        tokio::join!(play_a_little(asha, 7), play_a_little(bina, 8));
    assert!(asha_acted + bina_acted > 0, "nobody played");
    let (mut asha, mut bina) = (asha, bina);
    // A describes the room from the store as B has it: the match has started.
    let (status, body) = http::get(a.addr, &format!("/api/rooms/{}", room.code)).await;
    assert_eq!(status, 200, "{body}");
    let summary: RoomSummary = serde_json::from_str(&body).unwrap();
    assert!(summary.started);
    assert_eq!(summary.seats[1].name.as_deref(), Some("Bina"));
    let before = [
        (
            asha.view.clone().unwrap(),
            asha.history.clone(),
            asha.token(),
        ),
        (
            bina.view.clone().unwrap(),
            bina.history.clone(),
            bina.token(),
        ),
    ];

    // Chandra looks in through A: A claims the room back, and B, fenced off, sends its
    // people to reconnect.
    let mut chandra = Client::connect(a.addr).await;
    chandra
        .send(ClientMessage::from(Hello {
            spectator: true,
            ..hello(&room.code, "Chandra")
        }))
        .await;
    chandra.expect_welcome().await;
    for client in [&mut asha, &mut bina] {
        let (reason, closed) = moved(client).await;
        assert_eq!(reason, codes::ROOM_MOVED);
        assert_eq!(closed, Closed::Code(CLOSE_ROOM_MOVED));
    }
    assert_eq!(
        metric(a.addr, "dhumbal_room_claims_total", "node-a").await,
        1.0
    );
    assert_eq!(
        metric(a.addr, "dhumbal_room_restores_total", "node-a").await,
        1.0
    );
    assert_eq!(
        metric(b.addr, "dhumbal_rooms_moved_total", "node-b").await,
        1.0
    );
    // The room leaves B's registry as its task ends, a moment after the sockets closed.
    dhumbal_tests::guarded("B to let go of the room", async {
        while metric(b.addr, "dhumbal_rooms", "node-b").await != 0.0 {
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
    })
    .await;

    // They come back to A with their tokens: the same seats, views and history.
    let mut back = Vec::new();
    for ((view, history, token), name) in before.into_iter().zip(["Asha", "Bina"]) {
        let mut client = Client::connect(a.addr).await;
        client
            .send(ClientMessage::from(Hello {
                token,
                ..hello(&room.code, name)
            }))
            .await;
        let welcome = client.expect_welcome().await;
        assert_eq!(welcome.seat, view.seat, "{name}'s seat");
        let restored = client.recv_state_where(|_| true).await;
        assert_eq!(restored, view, "{name}'s view");
        assert_eq!(client.history, history, "{name}'s history");
        back.push(client);
    }
    // And play on, on A: whoever the table waits for answers the view they came back to.
    let mut acted = 0;
    let mut playing = Vec::new();
    for (seed, mut client) in (20..).zip(back) {
        let view = client.view().clone();
        if let Some(reply) = answer(&view, &mut StdRng::seed_from_u64(seed), &mut 0) {
            client.send(reply).await;
            acted += 1;
        }
        playing.push(client);
    }
    assert!(acted > 0, "the table waits for nobody");
    let bina = playing.pop().unwrap();
    let asha = playing.pop().unwrap();
    tokio::join!(play_a_little(asha, 11), play_a_little(bina, 12));
    assert!(metric(a.addr, "dhumbal_store_append_seconds_count", "node-a").await >= 1.0);
    assert_eq!(
        metric(a.addr, "dhumbal_fenced_appends_total", "node-a").await,
        0.0
    );
    a.stop().await;
    b.stop().await;
}

/// While Redis is away, a `hello` for a room the node does not hold is refused with
/// `store_unavailable`, then `bye` with that reason and close 1013 (try again later), and a new
/// room is refused with 503 `store_unavailable`: nothing changes. Once Redis is back, the same
/// `hello` finds the room.
#[cfg_attr(
    missing_redis,
    ignore = "needs redis-server: apt-get install redis-server"
)]
#[tokio::test]
async fn without_redis_a_hello_is_told_to_come_back_and_finds_the_room_after() {
    let Some(mut redis) = RedisServer::start_or_skip("shared_store::without_redis") else {
        return;
    };
    let a = node(&redis, "node-a").await;
    let request = room_with(standard_for(2));
    let room = a.create_room(&request).await;
    redis.stop();

    let mut asha = Client::connect_to(a.addr, &room_path(&room.code)).await;
    asha.hello(&room.code, "Asha").await;
    let error = asha.expect_error().await;
    assert_eq!(error.code, codes::STORE_UNAVAILABLE, "{}", error.message);
    let (reason, closed) = moved(&mut asha).await;
    assert_eq!(reason, codes::STORE_UNAVAILABLE);
    assert_eq!(closed, Closed::Code(CLOSE_TRY_AGAIN_LATER));
    let body = serde_json::to_string(&request).unwrap();
    let (status, answer) = http::post(a.addr, "/api/rooms", &body).await;
    assert_eq!(status, 503, "{answer}");
    assert!(answer.contains(codes::STORE_UNAVAILABLE), "{answer}");
    assert_eq!(metric(a.addr, "dhumbal_rooms", "node-a").await, 0.0);

    redis.restart();
    let asha = Client::join(a.addr, &room.code, "Asha", Some(&room.host_secret)).await;
    assert_eq!(asha.seat(), Some(0));
    assert_eq!(metric(a.addr, "dhumbal_rooms", "node-a").await, 1.0);
    a.stop().await;
}

/// `--max-rooms-per-address` counts for the whole cluster: rooms created from one address on
/// either node, and still open, count together, and a room that has closed (here: expired
/// unclaimed) no longer counts.
#[cfg_attr(
    missing_redis,
    ignore = "needs redis-server: apt-get install redis-server"
)]
#[tokio::test]
async fn the_rooms_an_address_may_have_open_are_counted_across_nodes() {
    let Some(redis) = RedisServer::start_or_skip("shared_store::rooms_per_address") else {
        return;
    };
    let capped = |id: &str| {
        TestServer::with_config(Config {
            store: StoreKind::Redis(redis.url()),
            node_id: Some(id.to_owned()),
            lease: Duration::from_millis(300),
            idle_room_ttl: Duration::from_millis(900),
            max_rooms_per_address: 2,
            ..unlimited_rate()
        })
    };
    let (a, b) = (capped("node-a").await, capped("node-b").await);
    let body = serde_json::to_string(&room_with(standard_for(2))).unwrap();
    for node in [&a, &b] {
        let (status, answer) = http::post(node.addr, "/api/rooms", &body).await;
        assert_eq!(status, 201, "{answer}");
    }
    for node in [&a, &b] {
        let (status, answer) = http::post(node.addr, "/api/rooms", &body).await;
        assert_eq!(status, 429, "{answer}");
        assert!(answer.contains(codes::TOO_MANY_OPEN_ROOMS), "{answer}");
    }
    // Nobody came to either room: their keys expire, and they count no more.
    let give_up = std::time::Instant::now() + Duration::from_secs(10);
    loop {
        tokio::time::sleep(Duration::from_millis(300)).await;
        let (status, answer) = http::post(b.addr, "/api/rooms", &body).await;
        if status == 201 {
            break;
        }
        assert_eq!(status, 429, "{answer}");
        assert!(
            std::time::Instant::now() < give_up,
            "the expired rooms still count"
        );
    }
    a.stop().await;
    b.stop().await;
}
