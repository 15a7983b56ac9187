//! The compressed socket (`/ws/{code}?compress=deflate-raw`): the same messages as a socket of
//! text frames, as binary frames of one raw DEFLATE stream, in a fraction of the bytes; any other
//! compression is refused at the upgrade.

use std::net::{IpAddr, Ipv4Addr};

use dhumbal_engine::Phase;
use dhumbal_protocol::{ApiError, ClientMessage, Hello, ServerMessage, codes};
use dhumbal_tests::client::{hello, room_path};
use dhumbal_tests::{Client, TestServer};

use crate::common::{play_on_to_the_end, play_to_the_end, room_with, standard_for};

/// A watcher of `code` on a compressed socket or a plain one, before the match starts.
async fn watcher(server: &TestServer, code: &str, name: &str, compressed: bool) -> Client {
    let path = room_path(code);
    let mut client = if compressed {
        Client::connect_compressed(server.addr, &path).await
    } else {
        Client::connect_to(server.addr, &path).await
    };
    client
        .send(ClientMessage::from(Hello {
            spectator: true,
            ..hello(code, name)
        }))
        .await;
    client.expect_welcome_skipping_rooms().await;
    client
}

/// What a client was told of the game: every view (a `patch` is kept as the `state` it makes)
/// and the match's result, in order.
fn told(client: &Client) -> Vec<&ServerMessage> {
    client
        .received
        .iter()
        .filter(|m| {
            matches!(
                m,
                ServerMessage::State { .. } | ServerMessage::MatchResult(_)
            )
        })
        .collect()
}

/// A whole match with a person and a watcher on compressed sockets beside a person and a
/// watcher on plain ones: the two watchers are told exactly the same views and result, every
/// compressed frame inflates to whole messages that build on each other (the client checks each
/// patch), and the compressed watcher reads a fraction of the plain one's bytes.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_compressed_socket_is_told_the_same_match_in_a_fraction_of_the_bytes() {
    let server = TestServer::start().await;
    let room = server.create_room(&room_with(standard_for(4))).await;
    let mut asha = Client::connect_compressed(server.addr, &room_path(&room.code)).await;
    asha.send(ClientMessage::from(Hello {
        host_secret: Some(room.host_secret.clone()),
        ..hello(&room.code, "Asha")
    }))
    .await;
    asha.expect_welcome().await;
    let bina = Client::join(server.addr, &room.code, "Bina", None).await;
    let dev = watcher(&server, &room.code, "Dev", false).await;
    let eve = watcher(&server, &room.code, "Eve", true).await;
    asha.send(ClientMessage::Start).await;
    let asha = tokio::spawn(play_on_to_the_end(asha, 1));
    let bina = tokio::spawn(play_to_the_end(bina, 2));
    let watch = |mut client: Client| async move {
        loop {
            if let ServerMessage::MatchResult(_) = client.recv().await {
                return client;
            }
        }
    };
    let (dev, eve) = (tokio::spawn(watch(dev)), tokio::spawn(watch(eve)));
    let (asha, _) = asha.await.unwrap();
    let (bina, _) = bina.await.unwrap();
    let (dev, eve) = (dev.await.unwrap(), eve.await.unwrap());

    assert_eq!(asha.view().phase, Phase::MatchOver);
    assert_eq!(bina.view().phase, Phase::MatchOver);
    assert!(asha.patches > 50, "Asha followed {} patches", asha.patches);
    let (plain, compressed) = (told(&dev), told(&eve));
    assert!(plain.len() > 50, "{} views", plain.len());
    assert_eq!(
        plain, compressed,
        "the two watchers were told the same match"
    );
    assert!(
        eve.bytes * 3 < dev.bytes,
        "compressed {} bytes against {} plain",
        eve.bytes,
        dev.bytes
    );
    println!(
        "one standard match, watched: {} bytes plain, {} compressed ({:.1}× fewer); Asha \
         (compressed) {} bytes, Bina (plain) {}",
        dev.bytes,
        eve.bytes,
        dev.bytes as f64 / eve.bytes as f64,
        asha.bytes,
        bina.bytes
    );
    server.stop().await;
}

/// `?compress=` with anything but `deflate-raw` is refused at the upgrade with `400
/// unsupported_compression` and a sentence, on both socket routes; other parameters are left
/// alone, and the socket still works after a refusal.
#[tokio::test]
async fn an_unknown_compression_is_refused_at_the_upgrade() {
    let server = TestServer::start().await;
    let room = server
        .create_room(&dhumbal_protocol::CreateRoom::default())
        .await;
    let from = IpAddr::V4(Ipv4Addr::LOCALHOST);
    let path = room_path(&room.code);
    for refused in [
        "/ws?compress=gzip".to_owned(),
        format!("{path}?compress="),
        format!("{path}?v=1&compress=deflate"),
    ] {
        let Err((status, body)) = Client::connect_to_with(server.addr, &refused, from, &[]).await
        else {
            panic!("{refused} was upgraded");
        };
        assert_eq!(status, 400, "{refused}");
        let error: ApiError = serde_json::from_str(&body).expect("an ApiError");
        assert_eq!(error.code, codes::UNSUPPORTED_COMPRESSION, "{refused}");
        assert!(error.message.contains("deflate-raw"), "{}", error.message);
    }
    let mut asha = Client::connect_compressed(server.addr, &format!("{path}?v=1&x")).await;
    asha.send(ClientMessage::from(hello(&room.code, "Asha")))
        .await;
    asha.expect_welcome().await;
    assert!(asha.bytes > 0);
    server.stop().await;
}
