//! The JSON bodies of the HTTP API.
//!
//! - `POST /api/rooms` with a [`CreateRoom`] answers `201` with a [`CreatedRoom`].
//! - `GET /api/rooms/{code}` answers `200` with a [`RoomSummary`], or `404` with an [`ApiError`]
//!   whose code is `unknown_room`.
//! - `GET /api/presets` answers `200` with [`Presets`]: every named preset's settings and the
//!   turn timers a table may have.
//! - `POST /api/settings/check` with a [`CreateRoom`] answers `200` with [`CheckedSettings`]
//!   when creating a room with that body would pass every check of its request, or with the
//!   [`ApiError`] creating the room would give.
//!
//! - `GET /api/invite-base` answers `200` with [`InviteBase`]: where the room links a page shares
//!   should point.
//!
//! Every refusal is an [`ApiError`] with a stable code.

use std::collections::BTreeMap;

use dhumbal_engine::{Card, Preset, Settings, TURN_TIMERS};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use crate::server::{SeatInfo, Stage};

/// The body of `POST /api/rooms`. An empty body, `{}`, or `{"preset":"standard"}` all create a
/// standard table.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct CreateRoom {
    /// Start from this preset (`standard` when neither this nor `settings` is given).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub preset: Option<Preset>,
    /// Every setting of the table; wins over `preset`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub settings: Option<Settings>,
    /// Fixed deck orders (top card first), one per round in turn: only accepted by a server
    /// started with `--allow-test-decks`, for black-box tests.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub decks: Option<Vec<Vec<Card>>>,
}

/// The answer to `POST /api/rooms`.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct CreatedRoom {
    /// The room's code: share it, or the link.
    pub code: String,
    /// The room's link, `/r/{code}`.
    pub url: String,
    /// Where to open the room's WebSocket: `/ws/{code}` (its `hello` must name this room; `/ws`
    /// takes any room's `hello` too).
    pub ws: String,
    /// The host's secret: present it in `hello` as `host_secret` to be the room's host. Do not
    /// share it.
    pub host_secret: String,
    /// The table's settings.
    pub settings: Settings,
}

/// The answer to `GET /api/rooms/{code}`: what someone about to join needs to know.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct RoomSummary {
    /// Always `true` (an unknown room answers `404`).
    pub exists: bool,
    /// The room's code.
    pub code: String,
    /// Where the room stands.
    pub stage: Stage,
    /// Whether the match has started.
    pub started: bool,
    /// Every seat.
    pub seats: Vec<SeatInfo>,
    /// How many seats a newcomer could take now.
    pub free_seats: usize,
    /// The table's settings.
    pub settings: Settings,
    /// Whether the room lets people watch (its host may turn watching off).
    #[serde(default = "watching_allowed")]
    pub watching: bool,
}

/// A room lets people watch unless its host turned watching off.
fn watching_allowed() -> bool {
    true
}

/// The answer to `GET /api/presets`: what a settings form offers, straight from the engine.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct Presets {
    /// Every named preset's settings, every field spelled out, keyed by the preset's name in the
    /// engine's order (`standard`, the default, first; then `household`, `yaniv`).
    #[serde(with = "in_order")]
    #[schemars(with = "BTreeMap<Preset, Settings>")]
    pub presets: Vec<(Preset, Settings)>,
    /// The turn timers a table may have, in seconds, shortest first (`null`, no timer, is
    /// allowed too).
    pub turn_timers: Vec<u32>,
}

impl Presets {
    /// Every preset of the engine ([`Preset::ALL`]) and its [`TURN_TIMERS`].
    pub fn from_engine() -> Presets {
        Presets {
            presets: Preset::ALL.into_iter().map(|p| (p, p.settings())).collect(),
            turn_timers: TURN_TIMERS.to_vec(),
        }
    }
}

/// [`Presets::presets`] as a JSON object whose keys keep the list's order.
mod in_order {
    use std::fmt;

    use dhumbal_engine::{Preset, Settings};
    use serde::de::{Error, MapAccess, Visitor};
    use serde::{Deserializer, Serializer};

    pub(super) fn serialize<S: Serializer>(
        presets: &[(Preset, Settings)],
        serializer: S,
    ) -> Result<S::Ok, S::Error> {
        serializer.collect_map(presets.iter().map(|(preset, settings)| (preset, settings)))
    }

    pub(super) fn deserialize<'de, D: Deserializer<'de>>(
        deserializer: D,
    ) -> Result<Vec<(Preset, Settings)>, D::Error> {
        struct InOrder;
        impl<'de> Visitor<'de> for InOrder {
            type Value = Vec<(Preset, Settings)>;

            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("an object of preset names to settings")
            }

            fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Self::Value, A::Error> {
                let mut presets: Vec<(Preset, Settings)> = Vec::new();
                while let Some((preset, settings)) = map.next_entry::<Preset, Settings>()? {
                    if presets.iter().any(|(p, _)| *p == preset) {
                        return Err(A::Error::custom(format!(
                            "the preset {} is named twice",
                            preset.name()
                        )));
                    }
                    presets.push((preset, settings));
                }
                Ok(presets)
            }
        }
        deserializer.deserialize_map(InOrder)
    }
}

/// The answer to `POST /api/settings/check` when creating a room with the same body would pass
/// every check of its request (whether the server has room for it, and the address's creation
/// limits, are not checked: they change from one moment to the next).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct CheckedSettings {
    /// Always `true` (a refused body answers `400` with an [`ApiError`]).
    pub ok: bool,
    /// The settings the room would have: the body's `settings`, or its preset's.
    pub settings: Settings,
}

/// The answer to `GET /api/invite-base`: the origin a page puts before `/r/{code}` in the room
/// links it shares. A page opened on `127.0.0.1` must not share links to `127.0.0.1`, which on a
/// friend's phone is the phone itself.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct InviteBase {
    /// The server's `--public-url` (`https://cards.example.org`); for a page opened on a
    /// loopback host, the host's address on its network (`http://192.168.1.20:8080`); `null` when
    /// the page's own origin is right. Never ends in `/`.
    #[serde(default)]
    pub base: Option<String>,
}

/// A refusal by the HTTP API.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct ApiError {
    /// The stable code (see [`crate::codes`]; settings errors use the engine's codes).
    pub code: String,
    /// A sentence for people.
    pub message: String,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn room_creation_bodies_read_as_documented() {
        let body: CreateRoom = serde_json::from_str(r#"{"preset":"standard"}"#).unwrap();
        assert_eq!(body.preset, Some(Preset::Standard));
        let body: CreateRoom = serde_json::from_str("{}").unwrap();
        assert_eq!(body, CreateRoom::default());
        assert!(serde_json::from_str::<CreateRoom>(r#"{"preset":"chess"}"#).is_err());
        assert!(serde_json::from_str::<CreateRoom>(r#"{"colour":"red"}"#).is_err());
    }

    #[test]
    fn the_presets_keep_the_engines_order_on_the_wire_and_back() {
        let presets = Presets::from_engine();
        let text = serde_json::to_string(&presets).unwrap();
        let at = |name: &str| text.find(&format!("\"{name}\":{{")).unwrap();
        assert!(
            at("standard") < at("household") && at("household") < at("yaniv"),
            "{text}"
        );
        assert!(text.ends_with(r#""turn_timers":[15,30,60,120]}"#), "{text}");
        let back: Presets = serde_json::from_str(&text).unwrap();
        assert_eq!(back, presets);
        let twice = r#"{"presets":{"standard":STD,"standard":STD},"turn_timers":[]}"#.replace(
            "STD",
            &serde_json::to_string(&Preset::Standard.settings()).unwrap(),
        );
        assert!(serde_json::from_str::<Presets>(&twice).is_err());
    }

    /// The example of `GET /api/presets` in `docs/protocol.md` is what the server answers.
    #[test]
    fn the_documented_presets_are_the_engines() {
        let path = concat!(env!("CARGO_MANIFEST_DIR"), "/../docs/protocol.md");
        let docs = std::fs::read_to_string(path).unwrap();
        let example = docs
            .lines()
            .find(|l| l.starts_with(r#"{"presets":"#))
            .expect("docs/protocol.md shows the presets");
        assert_eq!(
            example,
            serde_json::to_string(&Presets::from_engine()).unwrap(),
            "docs/protocol.md shows stale presets"
        );
    }
}
