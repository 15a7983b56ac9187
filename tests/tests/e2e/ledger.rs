//! The room's ledger over real sockets: two matches played to their end are counted seat by
//! seat (played, won, points), everyone hears it in the `room` that says the match is over, and
//! the ledger is still there after the server restarts on the same data directory.

use std::path::Path;

use dhumbal_engine::{Preset, Rounds, Settings, Standing};
use dhumbal_protocol::{ClientMessage, CreateRoom, Hello, LedgerRow, RoomState, Stage};
use dhumbal_server::Config;
use dhumbal_server::config::StoreKind;
use dhumbal_tests::{Client, TestServer, server::unlimited_rate};

use crate::common::{play_to_the_end, room_where};

/// A server whose rooms are kept in the SQLite log in `dir`.
async fn durable_server(dir: &Path) -> TestServer {
    TestServer::with_config(Config {
        store: StoreKind::Sqlite,
        data_dir: dir.to_owned(),
        bot_delay_ms: 0,
        ..unlimited_rate()
    })
    .await
}

/// The ledger these matches' final standings make, with the seats' names.
fn ledger_of(matches: &[Vec<Standing>], names: &[&str]) -> Vec<LedgerRow> {
    (0..names.len())
        .map(|seat| {
            let of_seat = || matches.iter().flatten().filter(move |s| s.seat == seat);
            LedgerRow {
                seat,
                name: Some(names[seat].to_owned()),
                played: u32::try_from(of_seat().count()).unwrap(),
                won: u32::try_from(of_seat().filter(|s| s.place == 1).count()).unwrap(),
                points: of_seat().map(|s| s.total).sum(),
            }
        })
        .collect()
}

/// The next `room` that says the match is over.
async fn match_over(client: &mut Client) -> RoomState {
    room_where(client, |room| room.stage == Stage::MatchOver).await
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn two_finished_matches_are_in_the_ledger_and_it_survives_a_restart() {
    let dir = tempfile::tempdir().unwrap();
    let server = durable_server(dir.path()).await;
    let settings = Settings {
        players: 3,
        rounds: Rounds::Fixed(1),
        ..Preset::Standard.settings()
    };
    let room = server
        .create_room(&CreateRoom {
            settings: Some(settings),
            ..CreateRoom::default()
        })
        .await;
    let mut asha = Client::join(server.addr, &room.code, "Asha", Some(&room.host_secret)).await;
    let mut bina = Client::join(server.addr, &room.code, "Bina", None).await;
    let lobby = room_where(&mut asha, |r| r.seats[1].name.is_some()).await;
    assert!(lobby.ledger.is_empty(), "nothing counted before a match");
    let names = ["Asha", "Bina", "Bot 3"];
    let mut standings = Vec::new();
    for number in 1..=2u64 {
        if number == 1 {
            asha.send(ClientMessage::Start).await;
        } else {
            asha.send(ClientMessage::Rematch { client_seed: None })
                .await;
            bina.send(ClientMessage::Rematch { client_seed: None })
                .await;
        }
        let ((a, result), (b, other)) = tokio::join!(
            play_to_the_end(asha, 10 * number),
            play_to_the_end(bina, 10 * number + 1)
        );
        (asha, bina) = (a, b);
        assert_eq!(result, other);
        assert_eq!(result.match_number, u32::try_from(number).unwrap());
        standings.push(result.standings.clone());
        let expected = ledger_of(&standings, &names);
        for client in [&mut asha, &mut bina] {
            let over = match_over(client).await;
            assert_eq!(over.ledger, expected, "after match {number}");
        }
    }
    let expected = ledger_of(&standings, &names);
    assert!(expected.iter().all(|row| row.played == 2));
    assert!(expected.iter().map(|row| row.won).sum::<u32>() >= 2);
    assert_eq!(expected.iter().map(|row| row.points).sum::<i64>(), 0);
    let tokens = [asha.token(), bina.token()];
    asha.close().await;
    bina.close().await;

    // The restart: the ledger comes back with the room (the first match's from the snapshot the
    // rematch cut the log at, the second's by replaying the match that followed it).
    server.stop().await;
    let server = durable_server(dir.path()).await;
    let mut asha = Client::connect(server.addr).await;
    asha.send(ClientMessage::from(Hello {
        token: tokens[0].clone(),
        ..dhumbal_tests::client::hello(&room.code, "Asha")
    }))
    .await;
    asha.expect_welcome().await;
    let restored = room_where(&mut asha, |_| true).await;
    assert_eq!(restored.stage, Stage::MatchOver);
    assert_eq!(restored.ledger, expected, "after the restart");

    // A third match, then another restart in its middle: the ledger stays the two matches'.
    let mut bina = Client::connect(server.addr).await;
    bina.send(ClientMessage::from(Hello {
        token: tokens[1].clone(),
        ..dhumbal_tests::client::hello(&room.code, "Bina")
    }))
    .await;
    bina.expect_welcome().await;
    asha.send(ClientMessage::Rematch { client_seed: None })
        .await;
    bina.send(ClientMessage::Rematch { client_seed: None })
        .await;
    let playing = room_where(&mut asha, |r| r.stage == Stage::Playing).await;
    assert_eq!(
        playing.ledger, expected,
        "a match being played is not counted"
    );
    asha.close().await;
    bina.close().await;
    server.stop().await;
    let server = durable_server(dir.path()).await;
    let mut asha = Client::connect(server.addr).await;
    asha.send(ClientMessage::from(Hello {
        token: tokens[0].clone(),
        ..dhumbal_tests::client::hello(&room.code, "Asha")
    }))
    .await;
    asha.expect_welcome().await;
    let restored = room_where(&mut asha, |_| true).await;
    assert_eq!(restored.stage, Stage::Playing);
    assert_eq!(restored.ledger, expected, "after a restart mid-match");
    server.stop().await;
}
