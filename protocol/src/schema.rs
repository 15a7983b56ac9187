//! The JSON Schema of the protocol, generated from the real types: the messages here and the
//! engine's wire types (cards, settings, views, events, results), which describe themselves with
//! the engine's `schemars` feature. `docs/protocol.schema.json` is [`json_schema`], committed; a
//! test keeps it current.

use schemars::generate::SchemaSettings;

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
    generator.subschema_for::<crate::Presets>();
    generator.subschema_for::<crate::CheckedSettings>();
    generator.subschema_for::<crate::InviteBase>();
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
