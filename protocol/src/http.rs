//! The JSON bodies of the HTTP API.
//!
//! - `POST /api/rooms` with a [`CreateRoom`] answers `201` with a [`CreatedRoom`].
//! - `GET /api/rooms/{code}` answers `200` with a [`RoomSummary`], or `404` with an [`ApiError`]
//!   whose code is `unknown_room`.
//!
//! Every refusal is an [`ApiError`] with a stable code.

use dhumbal_engine::{Card, Preset, Settings};
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
    /// Where to open the WebSocket: `/ws`.
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
}
