//! The lobby: seats, bots, presets and the host's powers.

use dhumbal_engine::{Difficulty, Preset};
use dhumbal_protocol::{
    CLOSE_REMOVED, ClientMessage, Hello, PROTOCOL_VERSION, RoomState, SeatKind, ServerMessage,
    Stage, codes,
};
use dhumbal_tests::client::Closed;
use dhumbal_tests::{Client, TestServer};

async fn next_room(client: &mut Client) -> RoomState {
    client
        .recv_until(|m| match m {
            ServerMessage::Room(room) => Some(room.clone()),
            _ => None,
        })
        .await
}

#[tokio::test]
async fn the_host_arranges_the_table_and_others_take_seats() {
    let server = TestServer::start().await;
    let room = server.create_room(&Default::default()).await;
    let mut host = Client::join(server.addr, &room.code, "Asha", Some(&room.host_secret)).await;
    let first = next_room(&mut host).await;
    assert_eq!(
        (first.host, first.your_seat, first.stage),
        (Some(0), Some(0), Stage::Lobby)
    );
    let mut guest = Client::join(server.addr, &room.code, "Bina", None).await;
    assert_eq!(next_room(&mut guest).await.your_seat, Some(1));

    // The guest moves to seat 3; seat 1 is free again.
    guest.send(ClientMessage::TakeSeat { seat: 3 }).await;
    let moved = next_room(&mut guest).await;
    assert_eq!(moved.your_seat, Some(3));
    assert_eq!(moved.seats[1].kind, SeatKind::Empty);
    guest.send(ClientMessage::TakeSeat { seat: 0 }).await;
    assert_eq!(guest.expect_error().await.code, codes::SEAT_TAKEN);
    guest.send(ClientMessage::TakeSeat { seat: 9 }).await;
    assert_eq!(guest.expect_error().await.code, codes::NO_SUCH_SEAT);

    // The host puts an easy bot in seat 1, then chooses the household preset (five seats).
    host.send(ClientMessage::AddBot {
        seat: 1,
        difficulty: Some(Difficulty::Easy),
    })
    .await;
    let with_bot = host
        .recv_until(|m| match m {
            ServerMessage::Room(r) if r.seats[1].kind == SeatKind::Bot => Some(r.clone()),
            _ => None,
        })
        .await;
    assert_eq!(with_bot.seats[1].difficulty, Some(Difficulty::Easy));
    host.send(ClientMessage::AddBot {
        seat: 3,
        difficulty: None,
    })
    .await;
    assert_eq!(host.expect_error().await.code, codes::SEAT_TAKEN);
    host.send(ClientMessage::SetPreset {
        preset: Preset::Household,
    })
    .await;
    let household = host
        .recv_until(|m| match m {
            ServerMessage::Room(r) if r.seats.len() == 5 => Some(r.clone()),
            _ => None,
        })
        .await;
    assert_eq!(household.settings, Preset::Household.settings());
    // Three seats would leave the person in seat 3 without a chair.
    let mut three = Preset::Standard.settings();
    three.players = 3;
    host.send(ClientMessage::SetSettings {
        settings: three.clone().into(),
    })
    .await;
    assert_eq!(host.expect_error().await.code, codes::SEATS_OCCUPIED);
    three.players = 4;
    three.cards = 6;
    host.send(ClientMessage::SetSettings {
        settings: three.into(),
    })
    .await;
    assert_eq!(host.expect_error().await.code, "bad_cards");

    // The host removes the guest: told why, closed with 4005, and listed as removed.
    let token = guest.token().expect("a seat token");
    host.send(ClientMessage::ClearSeat { seat: 3 }).await;
    let bye = guest
        .recv_until(|m| match m {
            ServerMessage::Bye(bye) => Some(bye.clone()),
            _ => None,
        })
        .await;
    assert_eq!(bye.reason, codes::REMOVED);
    assert_eq!(guest.expect_closed().await, Closed::Code(CLOSE_REMOVED));
    let cleared = host
        .recv_until(|m| match m {
            ServerMessage::Room(r) if !r.removed.is_empty() => Some(r.clone()),
            _ => None,
        })
        .await;
    assert_eq!(cleared.seats[3].kind, SeatKind::Empty);
    assert_eq!(cleared.removed, ["Bina"]);
    // Regression: a removed person took a seat again straight away. Their token is refused
    // until the host lets them back…
    let with_token = |token: &str| {
        ClientMessage::from(Hello {
            protocol: PROTOCOL_VERSION,
            room: room.code.clone(),
            name: "Bina".into(),
            token: Some(token.to_owned()),
            spectator: false,
            host_secret: None,
            client_seed: None,
        })
    };
    let mut back = Client::connect(server.addr).await;
    back.send(with_token(&token)).await;
    assert_eq!(back.expect_error().await.code, codes::REMOVED);
    guest = back;
    host.send(ClientMessage::Readmit { removed: 1 }).await;
    assert_eq!(host.expect_error().await.code, codes::NOT_REMOVED);
    host.send(ClientMessage::Readmit { removed: 0 }).await;
    let readmitted = next_room(&mut host).await;
    assert!(readmitted.removed.is_empty());
    // …and then, their old seat gone, they come back as anyone would.
    guest.send(with_token(&token)).await;
    assert_eq!(guest.expect_error().await.code, codes::BAD_TOKEN);
    guest
        .send(ClientMessage::from(Hello {
            protocol: PROTOCOL_VERSION,
            room: room.code.clone(),
            name: "Bina".into(),
            token: None,
            spectator: true,
            host_secret: None,
            client_seed: None,
        }))
        .await;
    let watching = guest.expect_welcome_skipping_rooms().await;
    assert_eq!(watching.seat, None);
    host.send(ClientMessage::ClearSeat { seat: 0 }).await;
    assert_eq!(host.expect_error().await.code, codes::OWN_SEAT);

    // A watcher who sits down gets a seat token of its own.
    guest.send(ClientMessage::TakeSeat { seat: 4 }).await;
    let welcome = guest.expect_welcome_skipping_rooms().await;
    assert_eq!(welcome.seat, Some(4));
    assert!(welcome.token.is_some());

    // Start: the empty seats get bots of the table's difficulty; the lobby is closed.
    host.send(ClientMessage::Start).await;
    let started = host
        .recv_until(|m| match m {
            ServerMessage::Room(r) if r.started => Some(r.clone()),
            _ => None,
        })
        .await;
    let kinds: Vec<SeatKind> = started.seats.iter().map(|s| s.kind).collect();
    assert_eq!(
        kinds,
        [
            SeatKind::Human,
            SeatKind::Bot,
            SeatKind::Bot,
            SeatKind::Bot,
            SeatKind::Human
        ]
    );
    host.send(ClientMessage::AddBot {
        seat: 1,
        difficulty: None,
    })
    .await;
    assert_eq!(
        host.expect_error_skipping_play().await.code,
        codes::ALREADY_STARTED
    );

    // Nobody new can sit now, but anyone with the code can watch, without a hand.
    let mut late = Client::connect(server.addr).await;
    let hello = Hello {
        protocol: PROTOCOL_VERSION,
        room: room.code.clone(),
        name: "Late".into(),
        token: None,
        spectator: false,
        host_secret: None,
        client_seed: None,
    };
    late.send(ClientMessage::from(hello.clone())).await;
    assert_eq!(late.expect_error().await.code, codes::ROOM_FULL);
    late.send(ClientMessage::from(Hello {
        spectator: true,
        ..hello
    }))
    .await;
    assert_eq!(late.expect_welcome().await.seat, None);
    let view = late.recv_state_where(|_| true).await;
    assert!(view.seat.is_none() && view.hand.is_empty());
    server.stop().await;
}

/// Names are compared as they look (their Unicode TR39 skeletons): a name that reads like a
/// seated person's, or like a bot's, is refused, whatever script its letters come from.
#[tokio::test]
async fn look_alike_names_do_not_take_seats() {
    let server = TestServer::start().await;
    let room = server
        .create_room(&dhumbal_protocol::CreateRoom::default())
        .await;
    let mut host = Client::join(server.addr, &room.code, "Asha", Some(&room.host_secret)).await;
    // Cyrillic А; Greek Α and Cyrillic ѕ; fullwidth.
    for taken in ["\u{410}sha", "\u{391}\u{455}ha", "\u{FF21}SHA"] {
        let mut client = Client::connect(server.addr).await;
        client.hello(&room.code, taken).await;
        assert_eq!(
            client.expect_error().await.code,
            codes::NAME_TAKEN,
            "{taken:?}"
        );
    }
    // Cyrillic о; a digit zero; Cyrillic В.
    for bot in ["B\u{43E}t 2", "B0t 3", "\u{412}ot"] {
        let mut client = Client::connect(server.addr).await;
        client.hello(&room.code, bot).await;
        assert_eq!(client.expect_error().await.code, codes::BAD_NAME, "{bot:?}");
    }
    // Nobody sat down meanwhile; a name of its own still does.
    let mut bina = Client::connect(server.addr).await;
    bina.hello(&room.code, "Bina").await;
    assert_eq!(bina.expect_welcome().await.seat, Some(1));
    let room_state = host
        .recv_until(|m| match m {
            ServerMessage::Room(r) if r.seats[1].name.is_some() => Some(r.clone()),
            _ => None,
        })
        .await;
    let names: Vec<_> = room_state
        .seats
        .iter()
        .filter_map(|s| s.name.clone())
        .collect();
    assert_eq!(names, ["Asha", "Bina"]);
    server.stop().await;
}

/// A watcher of `code` named `name`, from the loopback address `127.0.0.{from}`: its answer to
/// `hello`, and the client.
async fn watcher(
    addr: std::net::SocketAddr,
    code: &str,
    name: &str,
    from: u8,
) -> (Result<u32, String>, Client) {
    let ip = std::net::IpAddr::from([127, 0, 0, from]);
    let mut client = Client::connect_from(addr, ip, None)
        .await
        .expect("the socket opens");
    client
        .send(ClientMessage::from(Hello {
            spectator: true,
            ..dhumbal_tests::client::hello(code, name)
        }))
        .await;
    let answer = client
        .recv_until(|m| match m {
            ServerMessage::Welcome(_) => Some(Ok(())),
            ServerMessage::Error(e) => Some(Err(e.code.clone())),
            _ => None,
        })
        .await;
    let answer = match answer {
        Ok(()) => {
            let room = next_room(&mut client).await;
            let me = room.watchers.iter().rev().find(|w| w.name == name);
            Ok(me.expect("the room lists its new watcher").id)
        }
        Err(code) => Err(code),
    };
    (answer, client)
}

/// The `bye` reason and the close code that end a client's socket.
async fn ended(client: &mut Client) -> (String, Closed) {
    let reason = client
        .recv_until(|m| match m {
            ServerMessage::Bye(bye) => Some(bye.reason.clone()),
            _ => None,
        })
        .await;
    (reason, client.expect_closed().await)
}

/// Watchers: at most `--max-watchers` at once, named like people, removed by the host (with
/// their address, until let back), and all sent away when the host turns watching off.
#[tokio::test]
async fn the_host_keeps_the_watchers_in_hand() {
    let server = TestServer::with_config(dhumbal_server::config::Config {
        max_watchers: 2,
        ..dhumbal_tests::server::unlimited_rate()
    })
    .await;
    let addr = server.addr;
    let room = server
        .create_room(&dhumbal_protocol::CreateRoom::default())
        .await;
    let mut host = Client::join(addr, &room.code, "Asha", Some(&room.host_secret)).await;
    let mut guest = Client::join(addr, &room.code, "Bina", None).await;

    // Named like people: not a look-alike of a seated person, nor of another watcher.
    let (answer, _) = watcher(addr, &room.code, "\u{410}sha", 2).await;
    assert_eq!(answer, Err(codes::NAME_TAKEN.to_owned()));
    let (dev, mut dev_client) = watcher(addr, &room.code, "Dev", 2).await;
    let dev = dev.expect("Dev watches");
    let (answer, _) = watcher(addr, &room.code, "D\u{435}v", 3).await;
    assert_eq!(answer, Err(codes::NAME_TAKEN.to_owned()));
    let (other, mut other_client) = watcher(addr, &room.code, "Dev's friend", 2).await;
    assert!(other.is_ok());
    // The cap.
    let (answer, _) = watcher(addr, &room.code, "Ek", 3).await;
    assert_eq!(answer, Err(codes::WATCHERS_FULL.to_owned()));

    // Only the host removes a watcher; Dev and the other watcher from Dev's address go.
    guest
        .send(ClientMessage::RemoveWatcher { watcher: dev })
        .await;
    assert_eq!(guest.expect_error().await.code, codes::NOT_HOST);
    host.send(ClientMessage::RemoveWatcher { watcher: dev })
        .await;
    assert_eq!(
        ended(&mut dev_client).await,
        (codes::REMOVED.to_owned(), Closed::Code(CLOSE_REMOVED))
    );
    assert_eq!(
        ended(&mut other_client).await,
        (codes::REMOVED.to_owned(), Closed::Code(CLOSE_REMOVED))
    );
    let after = host
        .recv_until(|m| match m {
            ServerMessage::Room(r) if !r.removed_watchers.is_empty() => Some(r.clone()),
            _ => None,
        })
        .await;
    assert_eq!(after.removed_watchers, ["Dev"]);
    assert!(after.watchers.is_empty());
    // Nobody new from that address until the host lets it back; others may watch.
    let (answer, _) = watcher(addr, &room.code, "Someone", 2).await;
    assert_eq!(answer, Err(codes::REMOVED.to_owned()));
    let (ek, mut ek_client) = watcher(addr, &room.code, "Ek", 3).await;
    assert!(ek.is_ok());
    host.send(ClientMessage::ReadmitWatcher { removed: 0 })
        .await;
    host.recv_until(|m| match m {
        ServerMessage::Room(r) if r.removed_watchers.is_empty() => Some(()),
        _ => None,
    })
    .await;
    let (dev, mut dev_client) = watcher(addr, &room.code, "Dev", 2).await;
    assert!(dev.is_ok());

    // Watching off: the watchers are told and closed, the players stay and see it.
    guest
        .send(ClientMessage::SetWatching { allowed: false })
        .await;
    assert_eq!(guest.expect_error().await.code, codes::NOT_HOST);
    host.send(ClientMessage::SetWatching { allowed: false })
        .await;
    for client in [&mut ek_client, &mut dev_client] {
        assert_eq!(
            ended(client).await,
            (
                codes::WATCHING_OFF.to_owned(),
                Closed::Code(dhumbal_protocol::CLOSE_WATCHING_OFF)
            )
        );
    }
    let off = guest
        .recv_until(|m| match m {
            ServerMessage::Room(r) if !r.watching => Some(r.clone()),
            _ => None,
        })
        .await;
    assert!(off.watchers.is_empty());
    assert_eq!(off.seats[1].name.as_deref(), Some("Bina"));
    let (answer, _) = watcher(addr, &room.code, "Late", 4).await;
    assert_eq!(answer, Err(codes::WATCHING_OFF.to_owned()));
    host.send(ClientMessage::SetWatching { allowed: true })
        .await;
    host.recv_until(|m| match m {
        ServerMessage::Room(r) if r.watching => Some(()),
        _ => None,
    })
    .await;
    let (answer, _) = watcher(addr, &room.code, "Late", 4).await;
    assert!(answer.is_ok());
    server.stop().await;
}
