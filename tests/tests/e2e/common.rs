//! Helpers shared by the end-to-end tests.

use dhumbal_engine::{Card, Phase, Preset, Settings, full_deck, parse_cards};
use dhumbal_protocol::{ClientMessage, CreateRoom, MatchResult, RoomState, ServerMessage};
use dhumbal_tests::{Client, random_action};
use rand::SeedableRng;
use rand::rngs::StdRng;

/// A request for a room with these settings.
pub(crate) fn room_with(settings: Settings) -> CreateRoom {
    CreateRoom {
        settings: Some(settings),
        ..CreateRoom::default()
    }
}

/// The standard table with `players` seats.
pub(crate) fn standard_for(players: u8) -> Settings {
    Settings {
        players,
        ..Preset::Standard.settings()
    }
}

/// A full 52-card deck starting with these cards (top first), the rest in canonical order.
pub(crate) fn deck_starting(cards: &str) -> Vec<Card> {
    let mut deck = parse_cards(cards).expect("test cards parse");
    let rest: Vec<Card> = full_deck(false)
        .into_iter()
        .filter(|c| !deck.contains(c))
        .collect();
    deck.extend(rest);
    deck
}

/// Plays a client's seat to the end of the match with random legal actions chosen from its
/// views, sending `ready` at every pause between rounds. Any `error` fails the test.
pub(crate) async fn play_to_the_end(client: Client, seed: u64) -> (Client, MatchResult) {
    play_from(client, seed, false).await
}

/// As [`play_to_the_end`], starting from the last view the client has received, which a test
/// that was waiting for something else may have passed over.
pub(crate) async fn play_on_to_the_end(client: Client, seed: u64) -> (Client, MatchResult) {
    play_from(client, seed, true).await
}

async fn play_from(mut client: Client, seed: u64, from_last: bool) -> (Client, MatchResult) {
    let mut rng = StdRng::seed_from_u64(seed);
    let mut ready_for_round = 0;
    let mut latest = (from_last && client.has_view()).then(|| client.view().clone());
    loop {
        if let Some(view) = latest.take() {
            if view.my_turn() {
                client.send(random_action(&view, &mut rng)).await;
            } else if view.phase == Phase::RoundOver && ready_for_round < view.round {
                ready_for_round = view.round;
                client
                    .send(ClientMessage::Ready { client_seed: None })
                    .await;
            }
        }
        match client.recv().await {
            ServerMessage::State { view, .. } => latest = Some(*view),
            ServerMessage::MatchResult(result) => return (client, result),
            ServerMessage::Error(error) => panic!("a legal action was refused: {error:?}"),
            _ => {}
        }
    }
}

/// The next `room` for which `pick` holds.
pub(crate) async fn room_where(
    client: &mut Client,
    pick: impl Fn(&RoomState) -> bool,
) -> RoomState {
    client
        .recv_until(|m| match m {
            ServerMessage::Room(room) if pick(room) => Some(room.clone()),
            _ => None,
        })
        .await
}
