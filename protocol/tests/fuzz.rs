//! Fuzzing what arrives over the wire, on the stable toolchain, with proptest over arbitrary
//! input:
//!
//! - `parse_client_message` on arbitrary text, arbitrary bytes read lossily, soups of JSON-like
//!   tokens, arbitrary JSON values, and near-valid messages (a `type` from
//!   `ClientMessage::TYPES` or junk, known and unknown fields holding plausible values or random
//!   JSON of every kind: huge numbers, deep arrays, unicode, bad escapes), and on every valid
//!   envelope: nothing panics, every refusal has the code `bad_message` or `unknown_type` and a
//!   sentence, and every message read writes back to text that reads as the same envelope;
//! - `Settings` read with serde from arbitrary JSON and then validated, and `CreateRoom` bodies
//!   (settings and fixed decks included, which then go to `Game::with_decks`): nothing panics,
//!   and every refusal of the settings has a snake_case code.
//!
//! A bounded number of cases runs with the test suite. `DHUMBAL_FUZZ_CASES` sets the number of
//! cases of every property; a long run is
//!
//! ```text
//! DHUMBAL_FUZZ_CASES=200000 cargo test --release -p dhumbal-engine --test engine fuzz:: && DHUMBAL_FUZZ_CASES=200000 cargo test --release -p dhumbal-protocol --test fuzz
//! ```

use dhumbal_engine::arbitrary::{any_card, any_difficulty, any_preset, any_raw_settings};
use dhumbal_engine::{Game, Preset, Settings, SettingsError};
use dhumbal_protocol::codes::{BAD_MESSAGE, UNKNOWN_TYPE};
use dhumbal_protocol::{
    ClientEnvelope, ClientMessage, CreateRoom, DrawFrom, Hello, MessageId, draw_source,
    parse_client_message,
};
use proptest::prelude::*;
use serde_json::Value;

/// The proptest configuration of every property here: `default_cases` cases unless
/// `DHUMBAL_FUZZ_CASES` says otherwise, and no regression files written into the tree.
fn config(default_cases: u32) -> ProptestConfig {
    let cases = std::env::var("DHUMBAL_FUZZ_CASES")
        .ok()
        .and_then(|v| v.trim().parse().ok())
        .unwrap_or(default_cases);
    ProptestConfig {
        cases,
        failure_persistence: None,
        ..ProptestConfig::default()
    }
}

/// Whether `code` is a non-empty snake_case word: lowercase ASCII letters and single inner
/// underscores.
fn is_snake_case(code: &str) -> bool {
    !code.is_empty()
        && code.bytes().all(|b| b.is_ascii_lowercase() || b == b'_')
        && !code.starts_with('_')
        && !code.ends_with('_')
        && !code.contains("__")
}

// ----- JSON text -----

/// A JSON document as text is built: unlike [`Value`], it may repeat keys and hold raw tokens
/// (numbers beyond every integer type, bad escapes, deep nesting) that need not even be JSON.
#[derive(Clone, Debug)]
enum Json {
    Null,
    Bool(bool),
    /// A string, written with proper escapes.
    Text(String),
    /// Text written as it is: a number, an escaped string, a nest of arrays.
    Raw(String),
    Array(Vec<Json>),
    /// Keys in this order, repeats allowed.
    Object(Vec<(String, Json)>),
}

impl Json {
    fn write(&self, out: &mut String) {
        match self {
            Json::Null => out.push_str("null"),
            Json::Bool(b) => out.push_str(if *b { "true" } else { "false" }),
            Json::Text(s) => out.push_str(&serde_json::to_string(s).expect("strings serialize")),
            Json::Raw(raw) => out.push_str(raw),
            Json::Array(items) => {
                out.push('[');
                for (i, item) in items.iter().enumerate() {
                    if i > 0 {
                        out.push(',');
                    }
                    item.write(out);
                }
                out.push(']');
            }
            Json::Object(fields) => {
                out.push('{');
                for (i, (key, value)) in fields.iter().enumerate() {
                    if i > 0 {
                        out.push(',');
                    }
                    out.push_str(&serde_json::to_string(key).expect("strings serialize"));
                    out.push(':');
                    value.write(out);
                }
                out.push('}');
            }
        }
    }

    fn text(&self) -> String {
        let mut out = String::new();
        self.write(&mut out);
        out
    }

    /// The document of a JSON value.
    fn of(value: &Value) -> Json {
        match value {
            Value::Null => Json::Null,
            Value::Bool(b) => Json::Bool(*b),
            Value::Number(n) => Json::Raw(n.to_string()),
            Value::String(s) => Json::Text(s.clone()),
            Value::Array(items) => Json::Array(items.iter().map(Json::of).collect()),
            Value::Object(fields) => Json::Object(
                fields
                    .iter()
                    .map(|(k, v)| (k.clone(), Json::of(v)))
                    .collect(),
            ),
        }
    }
}

/// Every field name a client message or a room body has, and a few it has not.
const FIELDS: &[&str] = &[
    "id",
    "type",
    "protocol",
    "room",
    "name",
    "token",
    "spectator",
    "host_secret",
    "seat",
    "settings",
    "preset",
    "difficulty",
    "removed",
    "from",
    "card",
    "cards",
    "decks",
    "Type",
    "",
    "seat ",
    "__proto__",
];

/// Strings that mean something somewhere in the protocol, and near misses.
const WORDS: &[&str] = &[
    "hello",
    "take_seat",
    "set_settings",
    "set_preset",
    "add_bot",
    "clear_seat",
    "readmit",
    "start",
    "call",
    "draw",
    "throw",
    "ready",
    "rematch",
    "Hello",
    "HELLO",
    "hello ",
    " hello",
    "hello\u{0}",
    "dance",
    "",
    "stock",
    "pile",
    "floor",
    "standard",
    "household",
    "yaniv",
    "chess",
    "easy",
    "medium",
    "hard",
    "fixed",
    "until_one_remains",
    "tens",
    "sequential",
    "jack_zero",
    "instead",
    "on_top",
    "draw_then_throw",
    "throw_then_draw",
    "single_only",
    "any_card",
    "ends",
    "settlement",
    "cumulative",
    "AS",
    "10H",
    "KD",
    "QC",
    "RJ",
    "BJ",
    "1H",
    "ZZ",
    "10h",
    "CODE",
    "Asha",
    "🂡",
    "\u{202e}",
    "ａ",
];

/// Number-like raw tokens: the edges of every integer type, beyond them, floats, and non-JSON.
const NUMBERS: &[&str] = &[
    "0",
    "-0",
    "1",
    "-1",
    "2",
    "7",
    "0.0",
    "1.0",
    "1.5",
    "1e2",
    "1E2",
    "-1e2",
    "1e-400",
    "1e400",
    "-1e400",
    "255",
    "256",
    "4294967295",
    "4294967296",
    "9223372036854775807",
    "9223372036854775808",
    "-9223372036854775808",
    "-9223372036854775809",
    "18446744073709551615",
    "18446744073709551616",
    "123456789012345678901234567890123456789",
    "1.7976931348623157e308",
    "01",
    "+1",
    ".5",
    "NaN",
    "Infinity",
    "0x10",
];

/// Raw string tokens with escapes, good and bad.
const ESCAPED: &[&str] = &[
    r#""\u0000""#,
    r#""\ud83c\udca1""#,
    r#""\ud800""#,
    r#""\udc00\ud800""#,
    r#""\x41""#,
    r#""\"""#,
    r#""\\""#,
    r#""a\nb\tc""#,
    r#""\u00e9""#,
    "\"\u{7f}\"",
    "\"\u{1}\"",
    r#""unterminated"#,
];

/// A JSON leaf of any kind.
fn leaf() -> impl Strategy<Value = Json> {
    prop_oneof![
        4 => Just(Json::Null),
        4 => any::<bool>().prop_map(Json::Bool),
        4 => any::<i64>().prop_map(|n| Json::Raw(n.to_string())),
        4 => any::<u64>().prop_map(|n| Json::Raw(n.to_string())),
        4 => any::<f64>()
            .prop_filter("JSON has no NaN or infinities", |f| f.is_finite())
            .prop_map(|f| Json::Raw(format!("{f:?}"))),
        4 => (0u64..10).prop_map(|n| Json::Raw(n.to_string())),
        4 => prop::sample::select(NUMBERS).prop_map(|n| Json::Raw(n.to_owned())),
        2 => prop::sample::select(ESCAPED).prop_map(|s| Json::Raw(s.to_owned())),
        4 => prop::sample::select(WORDS).prop_map(|s| Json::Text(s.to_owned())),
        4 => any::<String>().prop_map(Json::Text),
        1 => (0usize..2000).prop_map(|n| Json::Text("é".repeat(n))),
        // Nests around serde_json's recursion limit of 128.
        1 => (1usize..300).prop_map(|depth| Json::Raw(format!(
            "{}{}",
            "[".repeat(depth),
            "]".repeat(depth)
        ))),
        1 => (1usize..200).prop_map(|depth| Json::Raw(format!(
            "{}1{}",
            r#"{"a":"#.repeat(depth),
            "}".repeat(depth)
        ))),
    ]
}

/// A key: a known field, a word, or anything.
fn key() -> impl Strategy<Value = String> {
    prop_oneof![
        3 => prop::sample::select(FIELDS).prop_map(str::to_owned),
        1 => prop::sample::select(WORDS).prop_map(str::to_owned),
        1 => any::<String>(),
    ]
}

/// Any JSON value, nested a few levels.
fn any_json() -> impl Strategy<Value = Json> {
    leaf().prop_recursive(4, 48, 6, |inner| {
        prop_oneof![
            prop::collection::vec(inner.clone(), 0..6).prop_map(Json::Array),
            prop::collection::vec((key(), inner), 0..6).prop_map(Json::Object),
        ]
    })
}

// ----- Plausible values -----

/// A card's text.
fn card_text() -> impl Strategy<Value = Json> {
    prop_oneof![
        4 => any_card().prop_map(|c| Json::Text(c.to_string())),
        1 => prop::sample::select(WORDS).prop_map(|s| Json::Text(s.to_owned())),
    ]
}

/// Settings built field by field from the full range of each field's type (often invalid), or
/// a preset's, or a preset's with a few fields changed.
fn any_settings() -> BoxedStrategy<Settings> {
    // Boxed, as are the other large strategies: their unboxed value trees take more stack
    // than a test thread has in a debug build.
    let near_preset = (
        any_preset(),
        2u8..=6,
        any::<bool>(),
        any::<bool>(),
        1u32..=500,
    )
        .prop_map(|(preset, players, seven, jokers, penalty)| Settings {
            players,
            cards: if seven { 7 } else { 5 },
            jokers: jokers || preset.settings().jokers_in_runs,
            penalty,
            ..preset.settings()
        });
    prop_oneof![
        3 => any_raw_settings(),
        1 => any_preset().prop_map(Preset::settings).boxed(),
        2 => near_preset.boxed(),
    ]
    .boxed()
}

/// How one field of an object is changed.
#[derive(Clone, Debug)]
enum Mutation {
    /// The field at this position is left out.
    Remove(usize),
    /// The field at this position takes this value.
    Replace(usize, Json),
    /// This field is added at the end (maybe a repeat of a known one).
    Add(String, Json),
}

fn mutation() -> impl Strategy<Value = Mutation> {
    prop_oneof![
        any::<usize>().prop_map(Mutation::Remove),
        (any::<usize>(), any_json()).prop_map(|(at, v)| Mutation::Replace(at, v)),
        (key(), any_json()).prop_map(|(k, v)| Mutation::Add(k, v)),
    ]
}

/// Applies mutations to an object's fields.
fn mutate(fields: &mut Vec<(String, Json)>, mutations: Vec<Mutation>) {
    for mutation in mutations {
        match mutation {
            Mutation::Remove(at) if !fields.is_empty() => {
                let at = at % fields.len();
                fields.remove(at);
            }
            Mutation::Replace(at, value) if !fields.is_empty() => {
                let at = at % fields.len();
                fields[at].1 = value;
            }
            Mutation::Add(key, value) => fields.push((key, value)),
            _ => {}
        }
    }
}

/// A settings object: some settings' JSON, usually with a few fields changed.
fn settings_json() -> impl Strategy<Value = Json> {
    (
        any_settings(),
        prop::collection::vec(mutation(), 0..3),
        any::<bool>(),
    )
        .prop_map(|(settings, mutations, keep)| {
            let value = serde_json::to_value(&settings).expect("settings serialize");
            let Json::Object(mut fields) = Json::of(&value) else {
                unreachable!("settings serialize as an object")
            };
            if !keep {
                mutate(&mut fields, mutations);
            }
            Json::Object(fields)
        })
}

/// A value that fits a field of a client message or a room body (or anything, for a field that
/// neither has).
fn fitting(name: &str) -> BoxedStrategy<Json> {
    match name {
        "protocol" => prop_oneof![
            (0u64..4).prop_map(|n| Json::Raw(n.to_string())),
            any::<u32>().prop_map(|n| Json::Raw(n.to_string())),
        ]
        .boxed(),
        "room" | "name" | "host_secret" => prop_oneof![
            prop::sample::select(WORDS).prop_map(|s| Json::Text(s.to_owned())),
            any::<String>().prop_map(Json::Text),
        ]
        .boxed(),
        "token" => prop_oneof![Just(Json::Null), any::<String>().prop_map(Json::Text)].boxed(),
        "spectator" => any::<bool>().prop_map(Json::Bool).boxed(),
        "seat" | "removed" => prop_oneof![
            (0u64..8).prop_map(|n| Json::Raw(n.to_string())),
            any::<u64>().prop_map(|n| Json::Raw(n.to_string())),
        ]
        .boxed(),
        "id" => prop_oneof![
            any::<u64>().prop_map(|n| Json::Raw(n.to_string())),
            any::<String>().prop_map(Json::Text),
        ]
        .boxed(),
        "settings" => settings_json().boxed(),
        "preset" => any_preset()
            .prop_map(|p| Json::Text(p.name().to_owned()))
            .boxed(),
        "difficulty" => prop_oneof![
            Just(Json::Null),
            any_difficulty().prop_map(|d| Json::Text(d.name().to_owned())),
        ]
        .boxed(),
        "from" => prop::sample::select(vec!["stock", "pile", "floor"])
            .prop_map(|s| Json::Text(s.to_owned()))
            .boxed(),
        "card" => prop_oneof![Just(Json::Null), card_text()].boxed(),
        "cards" => prop::collection::vec(card_text(), 0..7)
            .prop_map(Json::Array)
            .boxed(),
        "decks" => decks_json().boxed(),
        _ => any_json().boxed(),
    }
}

/// A value for a field of a client message: usually one that fits it, sometimes anything.
fn field_value(name: &str) -> BoxedStrategy<Json> {
    prop_oneof![4 => fitting(name), 1 => any_json()].boxed()
}

/// A known field with a value, or an unknown one with anything.
fn field() -> impl Strategy<Value = (String, Json)> {
    prop_oneof![
        5 => prop::sample::select(FIELDS)
            .prop_flat_map(|name| (Just(name.to_owned()), field_value(name))),
        1 => (key(), any_json()),
    ]
}

/// The fields of each type of client message.
fn fields_of(kind: &str) -> &'static [&'static str] {
    match kind {
        "hello" => &[
            "protocol",
            "room",
            "name",
            "token",
            "spectator",
            "host_secret",
        ],
        "take_seat" | "clear_seat" => &["seat"],
        "set_settings" => &["settings"],
        "set_preset" => &["preset"],
        "add_bot" => &["seat", "difficulty"],
        "readmit" => &["removed"],
        "draw" => &["from", "card"],
        "throw" => &["cards"],
        _ => &[],
    }
}

/// A client message that is nearly right: a `type` (usually one the protocol has), that type's
/// fields (each usually there, usually with a value that fits), a few other fields, maybe an
/// `id`, in any order.
fn near_valid_message() -> impl Strategy<Value = Json> {
    let kind = prop_oneof![
        8 => prop::sample::select(ClientMessage::TYPES.to_vec()).prop_map(str::to_owned),
        1 => prop::sample::select(WORDS).prop_map(str::to_owned),
    ];
    kind.prop_flat_map(|kind| {
        let own: Vec<BoxedStrategy<Option<(String, Json)>>> = fields_of(&kind)
            .iter()
            .map(|&name| {
                let value = prop_oneof![12 => fitting(name), 1 => any_json()];
                prop::option::weighted(0.9, value.prop_map(move |v| (name.to_owned(), v))).boxed()
            })
            .collect();
        let kind = prop_oneof![
            12 => Just(Json::Text(kind)),
            1 => any_json(),
        ];
        (
            kind,
            own,
            prop::collection::vec(field(), 0..3),
            prop::option::of(field_value("id")),
            any::<u64>(),
        )
    })
    .prop_map(|(kind, own, extra, id, order)| {
        let mut fields: Vec<(String, Json)> = own.into_iter().flatten().collect();
        if order % 2 == 0 {
            fields.extend(extra);
        }
        if let Some(id) = id {
            fields.push(("id".to_owned(), id));
        }
        let at = (order as usize / 2) % (fields.len() + 1);
        fields.insert(at, ("type".to_owned(), kind));
        Json::Object(fields)
    })
}

/// Text that looks a bit like JSON: a soup of its tokens.
fn json_soup() -> impl Strategy<Value = String> {
    const PARTS: &[&str] = &[
        "{",
        "}",
        "[",
        "]",
        ":",
        ",",
        "\"",
        "\"type\"",
        "\"hello\"",
        "\"throw\"",
        "\"cards\"",
        "\"AS\"",
        "\"id\"",
        "1",
        "-",
        "e",
        "null",
        "true",
        "nul",
        " ",
        "\n",
        "\\",
        "\\u",
        "é",
        "\u{0}",
        "\u{feff}",
    ];
    prop::collection::vec(prop::sample::select(PARTS), 0..24).prop_map(|parts| parts.concat())
}

/// Arbitrary text: any characters, any bytes read lossily, or JSON-like soup.
fn any_text() -> impl Strategy<Value = String> {
    prop_oneof![
        any::<String>(),
        prop::collection::vec(any::<u8>(), 0..64)
            .prop_map(|bytes| String::from_utf8_lossy(&bytes).into_owned()),
        json_soup(),
    ]
}

// ----- Valid messages -----

fn any_text_field() -> impl Strategy<Value = String> {
    prop_oneof![
        prop::sample::select(WORDS).prop_map(str::to_owned),
        any::<String>(),
    ]
}

fn any_message() -> BoxedStrategy<ClientMessage> {
    let hello = (
        any::<u32>(),
        any_text_field(),
        any_text_field(),
        prop::option::of(any_text_field()),
        any::<bool>(),
        prop::option::of(any_text_field()),
    )
        .prop_map(|(protocol, room, name, token, spectator, host_secret)| {
            ClientMessage::from(Hello {
                protocol,
                room,
                name,
                token,
                spectator,
                host_secret,
                client_seed: None,
            })
        });
    prop_oneof![
        hello.boxed(),
        any::<usize>().prop_map(|seat| ClientMessage::TakeSeat { seat }),
        any_settings().prop_map(|settings| ClientMessage::SetSettings {
            settings: settings.into(),
        }),
        any_preset().prop_map(|preset| ClientMessage::SetPreset { preset }),
        (any::<usize>(), prop::option::of(any_difficulty()))
            .prop_map(|(seat, difficulty)| ClientMessage::AddBot { seat, difficulty }),
        any::<usize>().prop_map(|seat| ClientMessage::ClearSeat { seat }),
        any::<usize>().prop_map(|removed| ClientMessage::Readmit { removed }),
        prop_oneof![
            Just(ClientMessage::Start),
            Just(ClientMessage::Call),
            Just(ClientMessage::Ready { client_seed: None }),
            Just(ClientMessage::Rematch { client_seed: None }),
        ],
        (
            prop_oneof![Just(DrawFrom::Stock), Just(DrawFrom::Pile)],
            prop::option::of(any_card()),
        )
            .prop_map(|(from, card)| ClientMessage::Draw { from, card }),
        prop::collection::vec(any_card(), 0..8).prop_map(|cards| ClientMessage::Throw { cards }),
    ]
    .boxed()
}

fn any_envelope() -> BoxedStrategy<ClientEnvelope> {
    (
        prop::option::of(prop_oneof![
            any::<u64>().prop_map(MessageId::Number),
            any_text_field().prop_map(MessageId::Text),
        ]),
        any_message(),
    )
        .prop_map(|(id, message)| ClientEnvelope { id, message })
        .boxed()
}

// ----- Checks -----

/// Checks settings that came over the wire: validation never panics and refuses with a
/// snake_case code and a sentence; the settings write back and read as themselves.
fn check_settings(settings: &Settings) {
    if let Err(err) = settings.validate() {
        check_settings_error(&err);
    }
    let text = serde_json::to_string(settings).expect("settings serialize");
    let again: Settings = serde_json::from_str(&text).expect("settings read back");
    assert_eq!(&again, settings);
}

fn check_settings_error(err: &SettingsError) {
    assert!(is_snake_case(err.code()), "bad code {:?}", err.code());
    assert!(
        !err.to_string().is_empty(),
        "{} has no sentence",
        err.code()
    );
}

/// Checks one message text against the parser.
fn check_message(text: &str) {
    // The quick way and the careful one read every text the same.
    assert_eq!(
        parse_client_message(text),
        dhumbal_protocol::parse_client_message_through_value(text),
        "{text:?}"
    );
    match parse_client_message(text) {
        Ok(envelope) => {
            let kind = envelope.message.type_name();
            assert!(ClientMessage::TYPES.contains(&kind));
            if let ClientMessage::Draw { from, card } = &envelope.message {
                assert!(draw_source(*from, *card).is_ok());
            }
            if let ClientMessage::SetSettings { settings } = &envelope.message {
                check_settings(settings);
            }
            let again = serde_json::to_string(&envelope).expect("an envelope serializes");
            assert_eq!(
                parse_client_message(&again).as_ref(),
                Ok(&envelope),
                "{text:?} read as {envelope:?}, which writes as {again:?}"
            );
        }
        Err(err) => {
            assert!(
                err.code == BAD_MESSAGE || err.code == UNKNOWN_TYPE,
                "the code {:?} of {text:?}",
                err.code
            );
            assert!(
                !err.message.is_empty(),
                "{text:?} was refused without a sentence"
            );
            let value: Option<Value> = serde_json::from_str(text).ok();
            let object = value.as_ref().and_then(Value::as_object);
            if err.code == UNKNOWN_TYPE {
                let kind = object.and_then(|o| o.get("type")).and_then(Value::as_str);
                assert!(
                    kind.is_some_and(|k| !ClientMessage::TYPES.contains(&k)),
                    "{text:?} is not of an unknown type"
                );
            }
            // The id is echoed exactly when it could be read.
            let id = object
                .and_then(|o| o.get("id"))
                .and_then(|id| serde_json::from_value::<MessageId>(id.clone()).ok());
            assert_eq!(err.id, id, "the id echoed for {text:?}");
        }
    }
}

/// Checks a room body against serde, and what the server does with it next.
fn check_create_room(text: &str) {
    let Ok(body) = serde_json::from_str::<CreateRoom>(text) else {
        return;
    };
    let again = serde_json::to_string(&body).expect("a body serializes");
    assert_eq!(
        serde_json::from_str::<CreateRoom>(&again).expect("a body reads back"),
        body
    );
    let settings = match (&body.settings, body.preset) {
        (Some(settings), _) => settings.clone(),
        (None, Some(preset)) => preset.settings(),
        (None, None) => Settings::default(),
    };
    check_settings(&settings);
    if let Some(decks) = body.decks {
        match Game::with_decks(settings.clone(), decks) {
            Ok(game) => game.validate_invariants().expect("a new game is sound"),
            Err(err) => check_settings_error(&err),
        }
    }
}

/// Fixed deck orders: whole packs, shuffled, sometimes mangled, as JSON.
fn decks_json() -> impl Strategy<Value = Json> {
    let deck = (
        any::<bool>(),
        any::<u64>(),
        0u8..6,
        prop::collection::vec(card_text(), 0..3),
    )
        .prop_map(|(jokers, seed, mangle, extra)| {
            let mut deck: Vec<Json> = dhumbal_engine::full_deck(jokers)
                .into_iter()
                .map(|c| Json::Text(c.to_string()))
                .collect();
            let mut state = seed;
            for i in (1..deck.len()).rev() {
                state = state
                    .wrapping_mul(6_364_136_223_846_793_005)
                    .wrapping_add(1_442_695_040_888_963_407);
                deck.swap(i, (state >> 33) as usize % (i + 1));
            }
            match mangle {
                0 => deck.extend(extra),
                1 => {
                    deck.pop();
                }
                _ => {}
            }
            Json::Array(deck)
        });
    prop_oneof![
        4 => prop::collection::vec(deck, 0..3).prop_map(Json::Array),
        1 => any_json(),
    ]
}

/// A room body: a few of its fields (or others), with values that fit or anything.
fn create_room_json() -> impl Strategy<Value = Json> {
    let field = prop_oneof![
        2 => field_value("settings").prop_map(|v| ("settings".to_owned(), v)),
        2 => field_value("preset").prop_map(|v| ("preset".to_owned(), v)),
        2 => field_value("decks").prop_map(|v| ("decks".to_owned(), v)),
        1 => (key(), any_json()),
    ];
    prop_oneof![
        6 => prop::collection::vec(field, 0..4).prop_map(Json::Object),
        1 => any_json(),
    ]
}

proptest! {
    #![proptest_config(config(2000))]

    /// Any text: no panic, a typed refusal or a message that round-trips.
    #[test]
    fn the_parser_takes_any_text(text in any_text()) {
        check_message(&text);
    }

    /// Any JSON value, nested a few levels, with every kind of leaf.
    #[test]
    fn the_parser_takes_any_json(json in any_json()) {
        check_message(&json.text());
    }

    /// Messages that are nearly right.
    #[test]
    fn the_parser_takes_near_valid_messages(json in near_valid_message()) {
        check_message(&json.text());
    }

    /// Every valid envelope reads back as itself, and any prefix of it or any byte changed in it
    /// is a typed refusal or some other message.
    #[test]
    fn every_envelope_round_trips(
        envelope in any_envelope(),
        cut in any::<usize>(),
        byte in any::<u8>(),
    ) {
        let text = serde_json::to_string(&envelope).expect("an envelope serializes");
        let parsed = parse_client_message(&text);
        match &envelope.message {
            ClientMessage::Draw { from: DrawFrom::Stock, card: Some(_) } => {
                let err = parsed.expect_err("a draw from the stock cannot name a card");
                prop_assert_eq!(err.code, BAD_MESSAGE);
                prop_assert_eq!(err.id, envelope.id.clone());
            }
            _ => prop_assert_eq!(parsed, Ok(envelope.clone())),
        }
        check_message(&text);
        let mut at = cut % (text.len() + 1);
        while !text.is_char_boundary(at) {
            at -= 1;
        }
        check_message(&text[..at]);
        let mut bytes = text.clone().into_bytes();
        if !bytes.is_empty() {
            let at = cut % bytes.len();
            bytes[at] = byte;
        }
        check_message(&String::from_utf8_lossy(&bytes));
    }

    /// Settings from any JSON, and from settings JSON with fields removed, changed or added.
    #[test]
    fn settings_from_any_json_validate_without_panic(
        json in prop_oneof![settings_json(), any_json()],
    ) {
        let text = json.text();
        if let Ok(settings) = serde_json::from_str::<Settings>(&text) {
            check_settings(&settings);
        }
    }

    /// Room bodies from any JSON.
    #[test]
    fn room_bodies_from_any_json_do_not_panic(json in create_room_json()) {
        check_create_room(&json.text());
    }
}
