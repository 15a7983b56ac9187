//! Talking at the table: chat lines reach everyone as plain text, spectators read and react but
//! do not write, the host mutes and unmutes, refused lines change nothing, and a newcomer (or a
//! reload) gets the last 50 lines in its `welcome`.

use dhumbal_protocol::{
    CHAT_KEPT_LINES, ChatLine, ClientMessage, Hello, Reaction, ServerMessage, codes,
};
use dhumbal_tests::client::hello;
use dhumbal_tests::{Client, TestServer, server::unlimited_rate};

use crate::common::{room_with, standard_for};

/// The next chat line `client` receives.
async fn next_line(client: &mut Client) -> ChatLine {
    client
        .recv_until(|m| match m {
            ServerMessage::Chat { line } => Some(line.clone()),
            _ => None,
        })
        .await
}

/// The next error `client` receives (skipping everything else).
async fn next_error(client: &mut Client) -> String {
    client
        .recv_until(|m| match m {
            ServerMessage::Error(error) => Some(error.code.clone()),
            _ => None,
        })
        .await
}

#[tokio::test]
async fn chat_lines_reach_the_table_as_text_and_the_host_can_mute() {
    let server = TestServer::with_config(unlimited_rate()).await;
    let addr = server.addr;
    let room = server.create_room(&room_with(standard_for(3))).await;
    let mut host = Client::join(addr, &room.code, "Asha", Some(&room.host_secret)).await;
    let mut guest = Client::join(addr, &room.code, "Bina", None).await;
    let mut watcher = Client::connect(addr).await;
    watcher
        .send(ClientMessage::from(Hello {
            spectator: true,
            ..hello(&room.code, "Dev")
        }))
        .await;
    watcher.expect_welcome().await;

    // A line with markup is kept as it was said: it is text, and clients show it as text.
    let said = "  <b>hi</b> & <img src=x onerror=alert(1)>  ";
    guest.send(ClientMessage::Chat { text: said.into() }).await;
    for client in [&mut host, &mut guest, &mut watcher] {
        let line = next_line(client).await;
        assert_eq!(line.seat, Some(1));
        assert_eq!(line.name, "Bina");
        assert_eq!(line.text, said.trim());
    }

    // Refused lines: nothing is said.
    for bad in ["", "   ", "two\nlines", &"x".repeat(201)] {
        guest.send(ClientMessage::Chat { text: bad.into() }).await;
        assert_eq!(next_error(&mut guest).await, codes::BAD_CHAT, "{bad:?}");
    }
    watcher
        .send(ClientMessage::Chat {
            text: "may I?".into(),
        })
        .await;
    assert_eq!(next_error(&mut watcher).await, codes::NOT_SEATED);

    // Anyone reacts, a spectator too; everyone sees who.
    watcher
        .send(ClientMessage::React {
            reaction: Reaction::Laugh,
        })
        .await;
    guest
        .send(ClientMessage::React {
            reaction: Reaction::Clap,
        })
        .await;
    let seen: Vec<(Option<usize>, String, Reaction)> = {
        let mut seen = Vec::new();
        while seen.len() < 2 {
            let reaction = host
                .recv_until(|m| match m {
                    ServerMessage::Reaction {
                        seat,
                        name,
                        reaction,
                    } => Some((*seat, name.clone(), *reaction)),
                    _ => None,
                })
                .await;
            seen.push(reaction);
        }
        seen
    };
    assert_eq!(
        seen,
        [
            (None, "Dev".to_owned(), Reaction::Laugh),
            (Some(1), "Bina".to_owned(), Reaction::Clap)
        ]
    );
    // The set is fixed.
    guest
        .send_text(r#"{"type":"react","reaction":"rocket"}"#)
        .await;
    assert_eq!(next_error(&mut guest).await, codes::BAD_MESSAGE);

    // Only the host mutes, and only a person; the room says who is muted.
    guest
        .send(ClientMessage::Mute {
            seat: 0,
            muted: true,
        })
        .await;
    assert_eq!(next_error(&mut guest).await, codes::NOT_HOST);
    host.send(ClientMessage::Mute {
        seat: 2,
        muted: true,
    })
    .await;
    assert_eq!(next_error(&mut host).await, codes::NOT_A_PERSON);
    host.send(ClientMessage::Mute {
        seat: 1,
        muted: true,
    })
    .await;
    let room_state = guest
        .recv_until(|m| match m {
            ServerMessage::Room(room) if room.seats[1].muted => Some(room.clone()),
            _ => None,
        })
        .await;
    assert!(!room_state.seats[0].muted);
    guest
        .send(ClientMessage::Chat {
            text: "hello?".into(),
        })
        .await;
    assert_eq!(next_error(&mut guest).await, codes::MUTED);
    host.send(ClientMessage::Mute {
        seat: 1,
        muted: false,
    })
    .await;
    guest
        .recv_until(|m| match m {
            ServerMessage::Room(room) if !room.seats[1].muted => Some(()),
            _ => None,
        })
        .await;
    guest
        .send(ClientMessage::Chat {
            text: "thanks".into(),
        })
        .await;
    assert_eq!(next_line(&mut host).await.text, "thanks");

    // The room keeps the last 50 lines; a newcomer (or a reload) gets them in its welcome.
    for n in 0..CHAT_KEPT_LINES + 5 {
        host.send(ClientMessage::Chat {
            text: format!("line {n}"),
        })
        .await;
        next_line(&mut host).await;
    }
    let mut late = Client::connect(addr).await;
    late.send(ClientMessage::from(Hello {
        spectator: true,
        ..hello(&room.code, "Ek")
    }))
    .await;
    let welcome = late.expect_welcome().await;
    assert_eq!(welcome.chat.len(), CHAT_KEPT_LINES);
    assert_eq!(welcome.chat[0].text, "line 5");
    assert_eq!(
        welcome.chat.last().map(|l| l.text.as_str()),
        Some(format!("line {}", CHAT_KEPT_LINES + 4).as_str())
    );
    server.stop().await;
}

/// Chat follows the names' character rules: a line with a bidirectional control, a character
/// that renders as nothing, or nothing visible at all is refused with `bad_chat` to the sender
/// alone, and nobody hears anything; the next good line is the next one everyone gets.
#[tokio::test]
async fn hidden_and_direction_changing_characters_stay_out_of_the_chat() {
    let server = TestServer::with_config(unlimited_rate()).await;
    let addr = server.addr;
    let room = server.create_room(&room_with(standard_for(3))).await;
    let mut host = Client::join(addr, &room.code, "Asha", Some(&room.host_secret)).await;
    let mut guest = Client::join(addr, &room.code, "Bina", None).await;
    for bad in [
        "\u{200F}hello",
        "abc\u{061C}",
        "\u{200B}",
        "\u{200B}\u{200B}",
        "gg\u{E0067}\u{E0067}",
        "\u{2067}evil\u{2069}",
        "\u{3164}",
    ] {
        guest.send(ClientMessage::Chat { text: bad.into() }).await;
        // The answer is the refusal, never the line said to the table.
        let answer = guest
            .recv_until(|m| match m {
                ServerMessage::Error(error) => Some(Ok(error.code.clone())),
                ServerMessage::Chat { line } => Some(Err(line.text.clone())),
                _ => None,
            })
            .await;
        assert_eq!(answer, Ok(codes::BAD_CHAT.to_owned()), "{bad:?}");
    }
    guest
        .send(ClientMessage::Chat {
            text: "नमस्ते 👋🏽".into(),
        })
        .await;
    let line = next_line(&mut host).await;
    assert_eq!(line.text, "नमस्ते 👋🏽");
    // The refused lines were never kept: a newcomer's welcome has only the good one.
    let mut late = Client::connect(addr).await;
    late.send(ClientMessage::from(Hello {
        spectator: true,
        ..hello(&room.code, "Ek")
    }))
    .await;
    let welcome = late.expect_welcome().await;
    let kept: Vec<&str> = welcome.chat.iter().map(|l| l.text.as_str()).collect();
    assert_eq!(kept, ["नमस्ते 👋🏽"]);
    server.stop().await;
}
