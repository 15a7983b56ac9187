//! Fixed test decks reproduce the standard table's worked examples exactly.

use dhumbal_engine::{Card, Ending, Event, Phase, RoundResult, parse_cards};
use dhumbal_protocol::{ClientMessage, CreateRoom, DrawFrom};
use dhumbal_tests::{Client, TestServer};

use crate::common::{deck_starting, standard_for};

/// Waits until it is `seat`'s turn in `phase`, then sends `message`.
async fn act(clients: &mut [Client], seat: usize, phase: Phase, message: ClientMessage) {
    clients[seat]
        .recv_state_where(|v| v.my_turn() && v.phase == phase)
        .await;
    clients[seat].send(message).await;
}

fn draw_stock() -> ClientMessage {
    ClientMessage::Draw {
        from: DrawFrom::Stock,
        card: None,
    }
}

fn throw(cards: &str) -> ClientMessage {
    ClientMessage::Throw {
        cards: parse_cards(cards).unwrap(),
    }
}

/// Seats `players` people at a room dealt from `deck`, starts, and returns them by seat.
async fn table(server: &TestServer, players: u8, deck: Vec<Card>) -> Vec<Client> {
    let room = server
        .create_room(&CreateRoom {
            settings: Some(standard_for(players)),
            decks: Some(vec![deck]),
            ..CreateRoom::default()
        })
        .await;
    let mut clients =
        vec![Client::join(server.addr, &room.code, "Host", Some(&room.host_secret)).await];
    for i in 1..players {
        clients.push(Client::join(server.addr, &room.code, &format!("P{i}"), None).await);
    }
    clients[0].send(ClientMessage::Start).await;
    clients
}

async fn round_result(client: &mut Client) -> RoundResult {
    client
        .recv_event(|e| match e {
            Event::RoundEnded { result } => Some((**result).clone()),
            _ => None,
        })
        .await
}

#[tokio::test]
async fn four_hands_of_4_12_19_7_with_nobody_caught() {
    let server = TestServer::start().await;
    // Dealt one at a time from seat 0: seat s gets cards s, s+4, s+8, …
    //   seat 0: KS KH KD 2S 2H   seat 1: 2D 2C 4S 4H 9S
    //   seat 2: 3H 3D 3C 5S 5H   seat 3: AS AH AD AC 3S
    // then the pile card 6S, and the stock KC 9H 7S 8S …
    let deck = deck_starting(
        "KS 2D 3H AS  KH 2C 3D AH  KD 4S 3C AD  2S 4H 5S AC  2H 9S 5H 3S  6S  KC 9H 7S 8S",
    );
    let mut clients = table(&server, 4, deck).await;
    act(&mut clients, 0, Phase::Start, draw_stock()).await;
    act(&mut clients, 0, Phase::Throw, throw("KS KH KD KC")).await; // keeps 2S 2H: 4
    act(&mut clients, 1, Phase::Start, draw_stock()).await;
    act(&mut clients, 1, Phase::Throw, throw("9S 9H")).await; // keeps 2D 2C 4S 4H: 12
    act(&mut clients, 2, Phase::Start, draw_stock()).await;
    act(&mut clients, 2, Phase::Throw, throw("7S")).await; // keeps 19
    act(&mut clients, 3, Phase::Start, draw_stock()).await;
    act(&mut clients, 3, Phase::Throw, throw("8S")).await; // keeps 7
    act(&mut clients, 0, Phase::Start, ClientMessage::Call).await;
    for client in &mut clients {
        let result = round_result(client).await;
        assert_eq!(
            result.ending,
            Ending::Call {
                caller: 0,
                caught: false
            }
        );
        assert_eq!(result.hand, vec![4, 12, 19, 7]);
        assert_eq!(result.took, vec![0, 12, 19, 7]);
        assert_eq!(result.paid, vec![38, -12, -19, -7]);
        assert_eq!(result.total, vec![38, -12, -19, -7]);
        assert_eq!(result.taker, 0);
    }
    server.stop().await;
}

#[tokio::test]
async fn two_hands_of_4_and_the_caller_caught() {
    let server = TestServer::start().await;
    //   seat 0: KS KH KD 2S 2H   seat 1: QS QH QD 2D 2C
    // then the pile card 6S, and the stock KC QC …
    let deck = deck_starting("KS QS  KH QH  KD QD  2S 2D  2H 2C  6S  KC QC");
    let mut clients = table(&server, 2, deck).await;
    act(&mut clients, 0, Phase::Start, draw_stock()).await;
    act(&mut clients, 0, Phase::Throw, throw("KS KH KD KC")).await;
    act(&mut clients, 1, Phase::Start, draw_stock()).await;
    act(&mut clients, 1, Phase::Throw, throw("QS QH QD QC")).await;
    act(&mut clients, 0, Phase::Start, ClientMessage::Call).await;
    for client in &mut clients {
        let result = round_result(client).await;
        assert_eq!(
            result.ending,
            Ending::Call {
                caller: 0,
                caught: true
            }
        );
        assert_eq!(result.hand, vec![4, 4]);
        assert_eq!(result.took, vec![25, 0]);
        assert_eq!(result.paid, vec![-25, 25]);
        assert_eq!(result.taker, 1);
        assert_eq!(result.hands[0], parse_cards("2S 2H").unwrap());
    }
    server.stop().await;
}
