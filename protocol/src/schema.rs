//! The JSON Schema of the protocol, and mirrors of the engine's wire types it is built from.
//!
//! The engine stays free of schema code, so its serde types (cards, settings, views, events,
//! results) are described here by mirror types that serialize exactly like them. The tests below
//! hold the mirrors to that: real engine values are read into the mirrors (which refuse unknown
//! fields) and written back unchanged. The messages themselves carry the engine's types and point
//! their schema at these mirrors with `#[schemars(with = …)]`.

use std::borrow::Cow;

use schemars::generate::SchemaSettings;
use schemars::{JsonSchema, Schema, SchemaGenerator, json_schema};
use serde::{Deserialize, Serialize};

/// A card: rank (`A`, `2`…`10`, `J`, `Q`, `K`) then suit (`S`, `H`, `D`, `C`); jokers `RJ`, `BJ`.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(transparent)]
pub(crate) struct Card(String);

impl JsonSchema for Card {
    fn schema_name() -> Cow<'static, str> {
        "Card".into()
    }

    fn json_schema(_: &mut SchemaGenerator) -> Schema {
        json_schema!({
            "type": "string",
            "description": "A card: rank (A, 2-10, J, Q, K) then suit (S, H, D, C), or a joker (RJ, BJ).",
            "pattern": "^(?:(?:A|[2-9]|10|J|Q|K)[SHDC]|RJ|BJ)$",
            "examples": ["10H", "QS", "AD", "RJ"]
        })
    }
}

/// 32 bytes as 64 hex digits: a client seed, a match seed, a commitment or a deck seed.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(transparent)]
pub(crate) struct ClientSeed(String);

impl JsonSchema for ClientSeed {
    fn schema_name() -> Cow<'static, str> {
        "Hex32".into()
    }

    fn json_schema(_: &mut SchemaGenerator) -> Schema {
        json_schema!({
            "type": "string",
            "description": "32 bytes as 64 hex digits (see docs/fairness.md).",
            "pattern": "^[0-9a-fA-F]{64}$"
        })
    }
}

/// The bots' difficulty.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub(crate) enum Difficulty {
    /// Remembers nothing, calls on the limit.
    Easy,
    /// Keeps pairs, calls 1 under the limit.
    Medium,
    /// Remembers every public fact, calls 2 under the limit.
    Hard,
    /// Models each opponent's hidden cards, calls when the call's expected value says so.
    Expert,
}

/// A named preset of settings.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub(crate) enum Preset {
    /// The standard table.
    Standard,
    /// The household guide's common Nepali rules.
    Household,
    /// Yaniv.
    Yaniv,
}

/// What the jack, queen and king are worth.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub(crate) enum CourtValues {
    /// 10 each.
    Tens,
    /// 11, 12, 13.
    Sequential,
    /// Jack 0, queen and king 10.
    JackZero,
}

/// The order of a turn's two halves.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub(crate) enum TurnOrder {
    /// Draw one card, then throw one legal group.
    DrawThenThrow,
    /// Throw one legal group, then draw.
    ThrowThenDraw,
}

/// Which card of the previous throw may be picked up.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub(crate) enum PickUp {
    /// Only a single-card throw.
    SingleOnly,
    /// Any one card.
    AnyCard,
    /// The first or the last card.
    Ends,
}

/// How a caught caller's penalty is charged.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub(crate) enum PenaltyMode {
    /// Instead of the hand.
    Instead,
    /// On top of the hand.
    OnTop,
}

/// A larger penalty for a caller undercut by a wide margin.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub(crate) struct DoublePenalty {
    /// The amount charged instead of the ordinary penalty.
    amount: u32,
    /// Charged when the caller exceeds the lightest other hand by more than this.
    margin: u32,
}

/// How rounds are scored.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub(crate) enum Scoring {
    /// Zero-sum settlement to the round's taker; higher is better.
    Settlement,
    /// Points added to a running total; lower is better.
    Cumulative,
}

/// How long a match lasts: `{"fixed": 3}` or `"until_one_remains"`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub(crate) enum Rounds {
    /// This many rounds.
    Fixed(u32),
    /// Until one player remains (needs elimination).
    UntilOneRemains,
}

/// Every setting of a table.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub(crate) struct Settings {
    /// Seats at the table, 2 to 6.
    players: u8,
    /// Cards dealt to each seat, 5 or 7.
    cards: u8,
    /// How long the match lasts.
    rounds: Rounds,
    /// A call is legal only at or under this total; `null` lets anyone call.
    call_limit: Option<u32>,
    /// What a caught caller is charged.
    penalty: u32,
    /// Whether the penalty replaces the caller's hand or is added to it.
    penalty_mode: PenaltyMode,
    /// An optional larger penalty.
    double_penalty: Option<DoublePenalty>,
    /// What the court cards are worth.
    court: CourtValues,
    /// Whether runs of 3+ in one suit may be thrown.
    runs: bool,
    /// Whether the two jokers are in the pack.
    jokers: bool,
    /// Whether jokers may stand in runs.
    jokers_in_runs: bool,
    /// Draw then throw, or throw then draw.
    turn_order: TurnOrder,
    /// Which card of the previous throw may be picked up.
    pickup: PickUp,
    /// Settlement or cumulative points.
    scoring: Scoring,
    /// With cumulative scoring: a total reaching this is out.
    elimination: Option<u32>,
    /// With cumulative scoring: a total landing on a multiple of 50 drops by 50.
    score_reset: bool,
    /// The bots' difficulty.
    difficulty: Difficulty,
    /// Seconds a person has for each turn (15, 30, 60 or 120) before a stand-in bot plays it;
    /// `null` or absent for no limit.
    #[serde(default)]
    turn_timer: Option<u32>,
}

/// Where a round stands.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub(crate) enum Phase {
    /// The start of a turn.
    Start,
    /// Drawn; must throw.
    Throw,
    /// Thrown; must draw (throw-then-draw tables).
    Draw,
    /// The round has ended; the next deal waits.
    RoundOver,
    /// The match has ended.
    MatchOver,
}

/// How a round ended.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(tag = "kind", rename_all = "snake_case", deny_unknown_fields)]
pub(crate) enum Ending {
    /// A seat called; `caught` when another hand matched or beat it.
    Call {
        /// The caller.
        caller: usize,
        /// Whether the caller was caught.
        caught: bool,
    },
    /// The throw cap ended the round.
    ThrowCap,
}

/// A round's result: every hand face up and the score rows, one entry per seat.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub(crate) struct RoundResult {
    /// The round's number, from 1.
    round: u32,
    /// The dealer.
    dealer: usize,
    /// How it ended.
    ending: Ending,
    /// The seat that took the round.
    taker: usize,
    /// Every hand at the show.
    hands: Vec<Vec<Card>>,
    /// The Hand row.
    hand: Vec<u32>,
    /// The Took row.
    took: Vec<u32>,
    /// The Paid row (settlement) or the points added (cumulative).
    paid: Vec<i64>,
    /// Seats whose total was reset by 50.
    reset: Vec<bool>,
    /// Every Total after the round.
    total: Vec<i64>,
    /// Seats that played the round.
    active: Vec<bool>,
    /// Seats eliminated by the round.
    eliminated: Vec<usize>,
}

/// One seat's place in the standings.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub(crate) struct Standing {
    /// The seat.
    seat: usize,
    /// Its place from 1; equal totals share a place.
    place: usize,
    /// Its final Total.
    total: i64,
    /// Whether it was eliminated.
    eliminated: bool,
}

/// A public event.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(tag = "type", rename_all = "snake_case", deny_unknown_fields)]
pub(crate) enum Event {
    /// A round was dealt.
    Dealt {
        /// The round's number.
        round: u32,
        /// The dealer.
        dealer: usize,
        /// The card turned up as the pile.
        pile_top: Card,
        /// The client seeds in force at the deal, in seat order (`null` for a seat without one).
        client_seeds: Vec<Option<ClientSeed>>,
    },
    /// A seat called.
    Called {
        /// The caller.
        seat: usize,
    },
    /// A seat drew from the stock.
    DrewFromStock {
        /// Who drew.
        seat: usize,
    },
    /// A seat took a card from the pile.
    TookFromPile {
        /// Who took it.
        seat: usize,
        /// The card.
        card: Card,
    },
    /// A seat threw a group (the last card lands on top).
    Threw {
        /// Who threw.
        seat: usize,
        /// The cards in landing order.
        cards: Vec<Card>,
    },
    /// The pile was shuffled into a new stock.
    Reshuffled {
        /// The new stock's size.
        stock: usize,
    },
    /// The round ended with a show.
    RoundEnded {
        /// The round's result.
        result: RoundResult,
    },
    /// The match ended.
    MatchEnded {
        /// The final standings.
        standings: Vec<Standing>,
    },
}

/// The game as one seat (or a spectator) may see it.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub(crate) struct SeatView {
    /// The seat; `null` for a spectator.
    seat: Option<usize>,
    /// The table's settings.
    settings: Settings,
    /// The round's number, from 1.
    round: u32,
    /// The dealer.
    dealer: usize,
    /// The seat to play.
    turn: usize,
    /// Where the round stands.
    phase: Phase,
    /// This seat's hand (empty for a spectator).
    hand: Vec<Card>,
    /// This seat's hand total.
    hand_total: u32,
    /// How many cards each seat holds.
    card_counts: Vec<usize>,
    /// Which seats are out of the match.
    eliminated: Vec<bool>,
    /// The pile's top card.
    pile_top: Option<Card>,
    /// The group on top of the pile as thrown.
    top_throw: Vec<Card>,
    /// Throw-then-draw: the previous player's throw.
    previous_throw: Vec<Card>,
    /// Pile cards this seat may take now.
    takeable: Vec<Card>,
    /// Cards in the pile.
    pile_size: usize,
    /// Cards in the stock.
    stock_size: usize,
    /// The card taken from the pile this turn, which cannot be thrown this turn.
    barred: Option<Card>,
    /// Throws made this deal.
    throws: u32,
    /// The throw cap.
    throw_cap: u32,
    /// Whether this seat may call now.
    can_call: bool,
    /// Every seat's running Total.
    totals: Vec<i64>,
}

/// The JSON Schema (draft 2020-12) of the whole protocol: `oneOf` a client message or a server
/// message, with the HTTP API's bodies in `$defs` as well. `docs/protocol.schema.json` is this
/// value, pretty-printed.
pub fn json_schema() -> serde_json::Value {
    let mut generator = SchemaSettings::draft2020_12().into_generator();
    let client = generator.subschema_for::<crate::ClientEnvelope>();
    let server = generator.subschema_for::<crate::ServerMessage>();
    generator.subschema_for::<crate::CreateRoom>();
    generator.subschema_for::<crate::CreatedRoom>();
    generator.subschema_for::<crate::RoomSummary>();
    generator.subschema_for::<crate::ApiError>();
    let defs = generator.take_definitions(true);
    serde_json::json!({
        "$schema": "https://json-schema.org/draft/2020-12/schema",
        "title": "dhumbal protocol",
        "description": format!(
            "Dhumbal protocol version {}: JSON messages over a WebSocket. A message is a client \
             message (ClientEnvelope) or a server message (ServerMessage). The HTTP API's bodies \
             are in $defs too.",
            crate::PROTOCOL_VERSION
        ),
        "oneOf": [client, server],
        "$defs": defs,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use dhumbal_engine::{Game, Preset};
    use serde::de::DeserializeOwned;

    fn event_type(event: &dhumbal_engine::Event) -> &'static str {
        use dhumbal_engine::Event as E;
        match event {
            E::Dealt { .. } => "dealt",
            E::Called { .. } => "called",
            E::DrewFromStock { .. } => "drew_from_stock",
            E::TookFromPile { .. } => "took_from_pile",
            E::Threw { .. } => "threw",
            E::Reshuffled { .. } => "reshuffled",
            E::RoundEnded { .. } => "round_ended",
            E::MatchEnded { .. } => "match_ended",
        }
    }

    /// Reads `value`'s JSON into the mirror `M` and writes it back: it must come out unchanged.
    fn mirrors<T: Serialize, M: Serialize + DeserializeOwned>(value: &T) {
        let json = serde_json::to_value(value).unwrap();
        let mirror: M = serde_json::from_value(json.clone())
            .unwrap_or_else(|e| panic!("the mirror does not read {json}: {e}"));
        assert_eq!(serde_json::to_value(&mirror).unwrap(), json);
    }

    #[test]
    fn the_mirrors_match_the_engine_wire_format() {
        let mut seen = std::collections::BTreeSet::new();
        for preset in Preset::ALL {
            mirrors::<_, Settings>(&preset.settings());
            mirrors::<_, Preset>(&preset);
            // Two rounds show every kind of event and result and keep the test quick.
            let two_rounds = dhumbal_engine::Settings {
                rounds: dhumbal_engine::Rounds::Fixed(2),
                ..preset.settings()
            };
            let mut game = Game::new(two_rounds, [preset as u8; 32]).unwrap();
            // Play whole matches with the first legal action, checking every view and event.
            for step in 0..20_000 {
                if game.is_over() {
                    break;
                }
                if game.phase() == dhumbal_engine::Phase::RoundOver {
                    for event in game.next_round().unwrap() {
                        mirrors::<_, Event>(&event);
                        seen.insert("dealt");
                    }
                    continue;
                }
                let seat = game.turn();
                mirrors::<_, SeatView>(&game.view(seat));
                mirrors::<_, SeatView>(&game.spectator_view());
                let actions = game.legal_actions(seat);
                // Alternate the choice so calls, pick-ups and throws all happen.
                let action = actions[step % actions.len()].clone();
                for event in game.apply(seat, action).unwrap() {
                    mirrors::<_, Event>(&event);
                    seen.insert(event_type(&event));
                }
            }
            assert!(game.is_over(), "{preset:?} did not finish");
            mirrors::<_, SeatView>(&game.view(0));
            for result in game.results() {
                mirrors::<_, RoundResult>(result);
            }
        }
        let every: std::collections::BTreeSet<&str> = [
            "dealt",
            "called",
            "drew_from_stock",
            "took_from_pile",
            "threw",
            "reshuffled",
            "round_ended",
            "match_ended",
        ]
        .into();
        assert_eq!(seen, every, "every kind of event went through the mirror");
    }

    #[test]
    fn the_committed_schema_is_current() {
        let path = concat!(env!("CARGO_MANIFEST_DIR"), "/../docs/protocol.schema.json");
        let fresh = serde_json::to_string_pretty(&json_schema()).unwrap() + "\n";
        if std::env::var_os("UPDATE_SCHEMA").is_some() {
            std::fs::write(path, &fresh).unwrap();
        }
        let committed = std::fs::read_to_string(path).unwrap_or_default();
        assert!(
            committed == fresh,
            "docs/protocol.schema.json is stale: run `UPDATE_SCHEMA=1 cargo test -p dhumbal-protocol` \
             and commit it"
        );
    }

    #[test]
    fn the_schema_describes_every_message_type() {
        let schema = json_schema();
        let text = schema.to_string();
        for kind in crate::ClientMessage::TYPES {
            assert!(text.contains(&format!("\"{kind}\"")), "{kind} is missing");
        }
        for kind in [
            "welcome",
            "room",
            "history",
            "state",
            "match_result",
            "error",
            "bye",
        ] {
            assert!(text.contains(&format!("\"{kind}\"")), "{kind} is missing");
        }
        assert!(schema["$defs"]["SeatView"].is_object());
        assert!(schema["$defs"]["Card"]["pattern"].is_string());
    }
}
