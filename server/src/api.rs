//! The HTTP routes: room creation and lookup, the presets and the check of a room's settings,
//! finished matches' hand histories and the coach's reviews of them, the WebSocket upgrade (`/ws`, or `/ws/{code}` with the room's
//! code in the path, so that a load balancer can route a room's sockets by it), and the health
//! check.

use std::sync::{Arc, OnceLock};

use axum::Router;
use axum::body::Bytes;
use axum::extract::ws::WebSocketUpgrade;
use axum::extract::{DefaultBodyLimit, Path, RawQuery, State};
use axum::http::{HeaderMap, HeaderValue, StatusCode, header};
use axum::response::{IntoResponse, Response};
use axum::routing::{get, post};
use axum::{Extension, Json};
use dhumbal_engine::{Card, Game, Preset, Settings};
use dhumbal_protocol::{CheckedSettings, CreateRoom, CreatedRoom, Presets};
use rand::TryRngCore;
use tracing::{debug, warn};

use crate::address::{ClientAddr, requested_host};
use crate::code::normalize;
use crate::conn;
use crate::error::Refusal;
use crate::limits::CreationRefused;
use crate::listener::TcpSlot;
use crate::origin;
use crate::registry::CreateError;
use crate::room::record::{self, Setup};
use crate::web;
use crate::{AppState, Config};

/// The largest request body the API reads.
const MAX_BODY_BYTES: usize = 64 * 1024;
/// The WebSocket read buffer, allocated for every connection: small, since a client's messages
/// are (a `hello` is about 150 bytes; a larger one grows it as it comes). axum's default costs
/// ~130 KB per idle connection; 4 KiB cost 10.5 KiB a connection in all, 1 KiB 7.6 KiB
/// (`loadgen idle`).
const WS_READ_BUFFER: usize = 1024;
/// The WebSocket write buffer.
const WS_WRITE_BUFFER: usize = 4 * 1024;

/// The API's routes.
pub fn routes() -> Router<Arc<AppState>> {
    Router::new()
        .route("/api/rooms", post(create_room))
        .route("/api/rooms/{code}", get(room_summary))
        .route("/api/presets", get(presets))
        .route("/api/settings/check", post(check_settings))
        .route(
            "/api/rooms/{code}/matches/{number}/history",
            get(match_history),
        )
        .route(
            "/api/rooms/{code}/matches/{number}/review",
            get(match_review),
        )
        .route("/ws", get(upgrade))
        .route("/ws/{code}", get(upgrade_room))
        .route("/healthz", get(healthz))
        .layer(DefaultBodyLimit::max(MAX_BODY_BYTES))
}

/// `POST /api/rooms`: creates a room and answers its code, link and host secret. The body must
/// be a JSON object sent as `application/json` (an empty body means `{}`): a page on another
/// site can send a plain form or text cross-site without asking, but not JSON. Each address may
/// create `--room-creations-per-minute` rooms a minute and hold `--max-rooms-per-address` open.
async fn create_room(
    State(app): State<Arc<AppState>>,
    client: ClientAddr,
    headers: HeaderMap,
    body: Bytes,
) -> Response {
    match create(&app, client, &headers, &body).await {
        Ok(created) => (StatusCode::CREATED, Json(created)).into_response(),
        Err(refusal) => refusal.into_response(),
    }
}

/// A room request that passed every check of the request itself: what the room would be.
struct Checked {
    /// The table's settings, valid.
    settings: Settings,
    /// Fixed decks that fit them, from a server that allows them.
    decks: Option<Vec<Vec<Card>>>,
}

/// Checks a request for a room as `POST /api/rooms` and `POST /api/settings/check` both do: a
/// JSON body ([`is_json`], [`parse_request`]), settings the engine accepts, and test decks only
/// where allowed and only whole packs.
fn check_request(config: &Config, headers: &HeaderMap, body: &[u8]) -> Result<Checked, Refusal> {
    if !is_json(headers) {
        return Err(Refusal::UnsupportedMediaType);
    }
    let request = parse_request(body)?;
    let settings = request
        .settings
        .unwrap_or_else(|| request.preset.unwrap_or(Preset::Standard).settings());
    settings.validate_new_table()?;
    if let Some(decks) = &request.decks {
        if !config.allow_test_decks {
            return Err(Refusal::TestDecksDisabled);
        }
        Game::with_decks(settings.clone(), decks.clone())?;
    }
    Ok(Checked {
        settings,
        decks: request.decks,
    })
}

/// Creates the room a request asks for: checked, then stored, then answered.
async fn create(
    app: &AppState,
    client: ClientAddr,
    headers: &HeaderMap,
    body: &[u8],
) -> Result<CreatedRoom, Refusal> {
    let Checked { settings, decks } = check_request(&app.config, headers, body)?;
    let host_secret = uuid::Uuid::new_v4().to_string();
    // The first match's seed: its commitment is public from the lobby on.
    let seed = match &decks {
        Some(_) => None,
        None => {
            let mut seed = [0u8; 32];
            rand::rngs::OsRng
                .try_fill_bytes(&mut seed)
                .map_err(|e| Refusal::internal("no randomness for a match seed", e))?;
            Some(seed)
        }
    };
    let setup = Setup {
        format: record::FORMAT,
        code: String::new(),
        host_secret_hash: record::hash_secret(&host_secret),
        settings: settings.clone(),
        decks,
        seed,
    };
    let creator = app.room_creations.admit(client.ip).map_err(|e| match e {
        CreationRefused::TooFast => Refusal::CreatingTooFast,
        CreationRefused::TooMany => Refusal::TooManyOpenRooms,
    })?;
    let timing = app.config.timing();
    let created = app
        .rooms
        .create(setup, timing, Arc::clone(&app.metrics), creator)
        .await;
    let code = created.map_err(|e| match e {
        CreateError::Full => Refusal::TooManyRooms,
        CreateError::TooManyOpen => Refusal::TooManyOpenRooms,
        CreateError::Store(e) => Refusal::store("a new room could not be stored", &e),
    })?;
    debug!(room = %code, "room created");
    Ok(CreatedRoom {
        url: format!("/r/{code}"),
        ws: format!("/ws/{code}"),
        code,
        host_secret,
        settings,
    })
}

/// The request in a body: a JSON object, or nothing (`{}`).
fn parse_request(body: &[u8]) -> Result<CreateRoom, Refusal> {
    if body.iter().all(u8::is_ascii_whitespace) {
        return Ok(CreateRoom::default());
    }
    let value: serde_json::Value = serde_json::from_slice(body)
        .map_err(|e| Refusal::BadBody(format!("the body is not JSON: {e}")))?;
    if !value.is_object() {
        return Err(Refusal::BadBody(
            "the body must be a JSON object, such as {\"preset\":\"standard\"}".into(),
        ));
    }
    serde_json::from_value(value)
        .map_err(|e| Refusal::BadBody(format!("the body does not fit: {e}")))
}

/// `POST /api/settings/check`: whether `POST /api/rooms` would accept this body, without creating
/// anything. The same body and the same checks ([`check_request`]), so the same refusal;
/// `200` with the room's settings when they pass. Neither the server's room cap nor the
/// address's creation limits are counted: it creates nothing, and a settings form may ask as
/// often as its fields change. It is as cheap as a room lookup, and bounded like every request by
/// the body limit, the request timeout and the connections an address may hold.
async fn check_settings(
    State(app): State<Arc<AppState>>,
    headers: HeaderMap,
    body: Bytes,
) -> Response {
    match check_request(&app.config, &headers, &body) {
        Ok(checked) => Json(CheckedSettings {
            ok: true,
            settings: checked.settings,
        })
        .into_response(),
        Err(refusal) => refusal.into_response(),
    }
}

/// `GET /api/presets`: every named preset's settings and the turn timers, from the engine
/// ([`Presets::from_engine`]).
async fn presets(headers: HeaderMap) -> Response {
    presets_answer(&headers)
}

/// The presets' JSON, or `304 Not Modified` when the client has this binary's. Like the web
/// client's files ([`web`]): `Cache-Control: no-cache` with an `ETag`, so a browser revalidates
/// each time and a new binary's presets are seen at once, together with its new scripts.
fn presets_answer(headers: &HeaderMap) -> Response {
    static BODY: OnceLock<(String, String)> = OnceLock::new();
    let (json, etag) = BODY.get_or_init(|| {
        let json = serde_json::to_string(&Presets::from_engine()).expect("presets serialise");
        let etag = web::etag(json.as_bytes());
        (json, etag)
    });
    let mut response = if web::is_fresh(headers, etag) {
        StatusCode::NOT_MODIFIED.into_response()
    } else {
        let mut r = json.clone().into_response();
        r.headers_mut().insert(
            header::CONTENT_TYPE,
            HeaderValue::from_static("application/json"),
        );
        r
    };
    let h = response.headers_mut();
    h.insert(header::CACHE_CONTROL, HeaderValue::from_static("no-cache"));
    if let Ok(value) = HeaderValue::from_str(etag) {
        h.insert(header::ETAG, value);
    }
    response
}

/// `GET /api/rooms/{code}`: what someone about to join needs to know. A code of no room counts
/// as a failed attempt of the caller's address ([`crate::limits::JoinAttempts`]).
async fn room_summary(
    State(app): State<Arc<AppState>>,
    client: ClientAddr,
    Path(code): Path<String>,
) -> Response {
    if app.join_attempts.check(client.ip).is_err() {
        return Refusal::TooManyAttempts.into_response();
    }
    // Held here, or (a shared store) read from the store on any node.
    let summary = app.rooms.summary(&normalize(&code)).await;
    match summary {
        Some(summary) => Json(summary).into_response(),
        None => {
            app.join_attempts.fail(client.ip);
            Refusal::UnknownRoom.into_response()
        }
    }
}

/// Who may read a kept match.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Reader {
    /// Someone who sat in it (their seat token) or saw its end (the revealed match seed).
    SatOrSaw,
    /// Only someone who presents the revealed match seed.
    SawTheEnd,
}

/// The kept match `number` of room `code` for the caller's `Authorization: Bearer` credential,
/// or the refusal to answer: `401 unauthorized` without any credential, whatever the room;
/// with one, `404 unknown_match` alike for a credential that does not fit and for a match (or
/// room) that is not kept, so that the answer never says whether a room exists. Each of those
/// counts as a failed lookup of the caller's address ([`crate::limits::JoinAttempts`]), and an
/// address blocked for failing too often is refused (`429 too_many_attempts`) as at every
/// lookup.
async fn kept_match_for(
    app: &AppState,
    client: &ClientAddr,
    code: &str,
    number: &str,
    headers: &HeaderMap,
    reader: Reader,
) -> Result<(String, u32, record::KeptMatch), Response> {
    if app.join_attempts.check(client.ip).is_err() {
        return Err(Refusal::TooManyAttempts.into_response());
    }
    let Some(credential) = headers
        .get(axum::http::header::AUTHORIZATION)
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.strip_prefix("Bearer "))
        .map(str::trim)
        .filter(|c| !c.is_empty())
    else {
        let mut response = Refusal::Unauthorized.into_response();
        response.headers_mut().insert(
            axum::http::header::WWW_AUTHENTICATE,
            axum::http::HeaderValue::from_static("Bearer"),
        );
        return Err(response);
    };
    // No such match, and a credential that does not fit it: one answer, and one failure.
    let refused = || {
        app.join_attempts.fail(client.ip);
        Refusal::UnknownMatch.into_response()
    };
    let Ok(number) = number.parse::<u32>() else {
        return Err(refused());
    };
    let code = normalize(code);
    let kept = match app.rooms.store().find_match(&code, number).await {
        Ok(Some(kept)) => kept,
        Ok(None) => return Err(refused()),
        Err(e) => {
            return Err(Refusal::store(
                &format!("room {code}: reading hand history {number} failed"),
                &e,
            )
            .into_response());
        }
    };
    let sat =
        reader == Reader::SatOrSaw && kept.token_hashes.contains(&record::hash_secret(credential));
    let saw_the_end = credential
        .parse::<dhumbal_engine::Hex32>()
        .is_ok_and(|seed| dhumbal_engine::fair::commitment(&seed.0).to_string() == kept.commitment);
    if !sat && !saw_the_end {
        return Err(refused());
    }
    Ok((code, number, kept))
}

/// `GET /api/rooms/{code}/matches/{number}/history`: a finished match's hand history, for
/// someone who sat in it (`Authorization: Bearer <seat token>`) or saw its end (`Bearer <the
/// revealed match seed>`); refused as [`kept_match_for`] says. See `docs/fairness.md`.
async fn match_history(
    State(app): State<Arc<AppState>>,
    client: ClientAddr,
    Path((code, number)): Path<(String, String)>,
    headers: HeaderMap,
) -> Response {
    let (code, number, kept) =
        match kept_match_for(&app, &client, &code, &number, &headers, Reader::SatOrSaw).await {
            Ok(found) => found,
            Err(refused) => return refused,
        };
    let disposition = format!("attachment; filename=\"dhumbal-{code}-{number}.json\"");
    (
        [
            (
                axum::http::header::CONTENT_TYPE,
                "application/json".to_owned(),
            ),
            (axum::http::header::CONTENT_DISPOSITION, disposition),
            (
                axum::http::header::CACHE_CONTROL,
                "private, no-store".to_owned(),
            ),
        ],
        kept.history,
    )
        .into_response()
}

/// The query of `GET …/review`.
#[derive(Debug, serde::Deserialize)]
struct ReviewQuery {
    /// The seat to review.
    seat: usize,
}

/// `GET /api/rooms/{code}/matches/{number}/review?seat=N`: the coach's review of one seat's
/// decisions in a finished match (the same object as the WebSocket's `review` message), for
/// anyone who presents the revealed match seed (`Authorization: Bearer <seed>`): everyone at
/// the table and every watcher saw it at the end, and with it the hand history shows every hand
/// anyway. Refused as [`kept_match_for`] says, with `400 no_such_seat` for a seat not at the
/// table, and `503 coach_busy` (with `Retry-After`) when the thinking pool is full. A review is
/// made once and kept.
async fn match_review(
    State(app): State<Arc<AppState>>,
    client: ClientAddr,
    Path((code, number)): Path<(String, String)>,
    query: Result<axum::extract::Query<ReviewQuery>, axum::extract::rejection::QueryRejection>,
    headers: HeaderMap,
) -> Response {
    let (code, number, kept) =
        match kept_match_for(&app, &client, &code, &number, &headers, Reader::SawTheEnd).await {
            Ok(found) => found,
            Err(refused) => return refused,
        };
    let Ok(axum::extract::Query(ReviewQuery { seat })) = query else {
        return Refusal::BadBody("name the seat to review: ?seat=N, from 0".into()).into_response();
    };
    let record: dhumbal_engine::HandHistory = match serde_json::from_str(&kept.history) {
        Ok(record) => record,
        Err(e) => {
            return Refusal::internal(
                &format!("room {code}: hand history {number} unreadable"),
                &e,
            )
            .into_response();
        }
    };
    if seat >= usize::from(record.settings.players) {
        return Refusal::NoSuchSeat(seat).into_response();
    }
    let work = move || {
        let review =
            dhumbal_bots::coach::review(&record, seat, &dhumbal_bots::coach::CoachParams::REVIEW)
                .map_err(|why| Refusal::internal("a kept match does not replay", &why))?;
        let message = dhumbal_protocol::ServerMessage::Review {
            match_number: number,
            review,
        };
        Ok(message.to_json().into())
    };
    match app
        .rooms
        .thinkers()
        .review((code, number, seat), work)
        .await
    {
        Ok(text) => (
            [
                (axum::http::header::CONTENT_TYPE, "application/json"),
                (axum::http::header::CACHE_CONTROL, "private, no-store"),
            ],
            text.as_str().to_owned(),
        )
            .into_response(),
        Err(refusal) => {
            let busy = matches!(refusal, Refusal::CoachBusy);
            let mut response = refusal.into_response();
            if busy {
                response.headers_mut().insert(
                    axum::http::header::RETRY_AFTER,
                    HeaderValue::from_static("2"),
                );
            }
            response
        }
    }
}

/// `GET /ws`: the WebSocket, for any room (its `hello` names it), with limits fit for small JSON
/// messages. Refused with 403 for a browser page of a foreign origin ([`origin`]), with 503 when
/// the server or the client's address holds as many connections as it may, or is shutting down.
async fn upgrade(
    State(app): State<Arc<AppState>>,
    client: ClientAddr,
    tcp: Option<Extension<TcpSlot>>,
    headers: HeaderMap,
    RawQuery(query): RawQuery,
    ws: WebSocketUpgrade,
) -> Response {
    open_socket(app, client, tcp, &headers, query, ws, None)
}

/// `GET /ws/{code}`: the WebSocket for the room `code`, so that a load balancer in front of
/// several servers can send every socket of a room to the same one by its path. Its `hello` must
/// name the same room (else `room_mismatch`, and nothing happens); a code of no room is answered
/// at `hello`, with `unknown_room`, as at `/ws`. Refused as `/ws` is.
async fn upgrade_room(
    State(app): State<Arc<AppState>>,
    client: ClientAddr,
    tcp: Option<Extension<TcpSlot>>,
    headers: HeaderMap,
    Path(code): Path<String>,
    RawQuery(query): RawQuery,
    ws: WebSocketUpgrade,
) -> Response {
    open_socket(app, client, tcp, &headers, query, ws, Some(code))
}

/// The checks and the upgrade of both WebSocket routes; `query` is the request's query string
/// (`compress=deflate-raw` asks for the compressed stream, [`conn::Framing`]), `path_room` the
/// code in the path of `/ws/{code}`, `tcp` the TCP connection's places and stream when it came
/// through the listener.
fn open_socket(
    app: Arc<AppState>,
    client: ClientAddr,
    tcp: Option<Extension<TcpSlot>>,
    headers: &HeaderMap,
    query: Option<String>,
    ws: WebSocketUpgrade,
    path_room: Option<String>,
) -> Response {
    let framing = match conn::Framing::from_query(query.as_deref()) {
        Ok(framing) => framing,
        Err(refusal) => return refusal.into_response(),
    };
    let host = requested_host(client.peer.ip(), headers, app.config.forwarding());
    if !origin::allowed(headers, host.as_deref(), &app.config.allowed_origins) {
        debug!(origin = ?headers.get(axum::http::header::ORIGIN), "foreign origin refused");
        return Refusal::ForbiddenOrigin.into_response();
    }
    if app.shutdown.has_begun() {
        return Refusal::ShuttingDown.into_response();
    }
    let Some(address) = app.ws_per_address.acquire(client.ip) else {
        debug!(client = %client.ip, "connection refused: the address holds as many as it may");
        return Refusal::TooManyConnections("your address").into_response();
    };
    let Some(slot) = app.connections.acquire() else {
        warn!(
            max = app.config.max_connections,
            "connection refused: the server is full"
        );
        return Refusal::TooManyConnections("the server").into_response();
    };
    // The socket outlives the HTTP connection: it keeps the TCP connection's places, and
    // writes to its stream.
    let raw = tcp.as_ref().map(|Extension(slot)| slot.socket());
    let tcp = tcp.and_then(|Extension(slot)| slot.take());
    let places = conn::Places::new(slot, address, tcp);
    ws_limits(ws, &app.config).on_upgrade(move |socket| {
        let shutdown = app.shutdown.clone();
        shutdown.track(conn::serve(
            socket, app, client.ip, path_room, framing, places, raw,
        ))
    })
}

/// Whether the request's body is declared JSON (`application/json`, or a `+json` type).
fn is_json(headers: &HeaderMap) -> bool {
    let Some(content_type) = headers
        .get(axum::http::header::CONTENT_TYPE)
        .and_then(|v| v.to_str().ok())
    else {
        return false;
    };
    let essence = content_type
        .split(';')
        .next()
        .unwrap_or_default()
        .trim()
        .to_ascii_lowercase();
    essence == "application/json"
        || essence
            .strip_prefix("application/")
            .is_some_and(|sub| sub.ends_with("+json"))
}

/// The WebSocket limits and buffer sizes of every socket the server accepts (the game's, and
/// the diagnostic echo's in [`crate::echo`]).
pub fn ws_limits(ws: WebSocketUpgrade, config: &Config) -> WebSocketUpgrade {
    let max = config.max_message_bytes;
    ws.max_message_size(max)
        .max_frame_size(max)
        .read_buffer_size(WS_READ_BUFFER)
        .write_buffer_size(WS_WRITE_BUFFER)
}

/// `GET /healthz`: the server is up.
async fn healthz() -> &'static str {
    "ok"
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_presets_answer_revalidates_by_its_etag() {
        let first = presets_answer(&HeaderMap::new());
        assert_eq!(first.status(), StatusCode::OK);
        assert_eq!(first.headers()[header::CONTENT_TYPE], "application/json");
        assert_eq!(first.headers()[header::CACHE_CONTROL], "no-cache");
        let etag = first.headers()[header::ETAG].clone();
        let mut headers = HeaderMap::new();
        headers.insert(header::IF_NONE_MATCH, etag);
        assert_eq!(presets_answer(&headers).status(), StatusCode::NOT_MODIFIED);
        headers.insert(header::IF_NONE_MATCH, HeaderValue::from_static("\"0\""));
        assert_eq!(presets_answer(&headers).status(), StatusCode::OK);
    }

    #[test]
    fn checking_a_request_refuses_as_creating_the_room_would() {
        let config = Config::default();
        let mut json = HeaderMap::new();
        json.insert(
            header::CONTENT_TYPE,
            HeaderValue::from_static("application/json"),
        );
        let code = |headers: &HeaderMap, body: &str| {
            check_request(&config, headers, body.as_bytes())
                .err()
                .map(|refusal| refusal.code())
        };
        assert_eq!(code(&json, ""), None);
        assert_eq!(code(&json, r#"{"preset":"yaniv"}"#), None);
        assert_eq!(
            code(&HeaderMap::new(), "{}"),
            Some("unsupported_media_type")
        );
        assert_eq!(code(&json, "{nope"), Some("bad_message"));
        assert_eq!(code(&json, "[]"), Some("bad_message"));
        let mut settings = Preset::Standard.settings();
        settings.turn_timer = Some(45);
        let body = serde_json::json!({ "settings": settings }).to_string();
        assert_eq!(code(&json, &body), Some("bad_turn_timer"));
        let body = serde_json::json!({ "decks": [dhumbal_engine::full_deck(false)] });
        assert_eq!(code(&json, &body.to_string()), Some("test_decks_disabled"));
        let checked = check_request(&config, &json, br#"{"preset":"household"}"#).unwrap();
        assert_eq!(checked.settings, Preset::Household.settings());
    }

    /// Issue 35, item 17: a new table playing the household guide's rules seats 2 to 5, as the
    /// guide's tables are for; the standard table still seats 6.
    #[test]
    fn a_new_table_with_the_guides_rules_seats_at_most_five() {
        let config = Config::default();
        let mut json = HeaderMap::new();
        json.insert(
            header::CONTENT_TYPE,
            HeaderValue::from_static("application/json"),
        );
        for (preset, players, refusal) in [
            (Preset::Household, 6, Some("guide_players")),
            (Preset::Yaniv, 6, Some("guide_players")),
            (Preset::Household, 5, None),
            (Preset::Standard, 6, None),
        ] {
            let settings = dhumbal_engine::Settings {
                players,
                ..preset.settings()
            };
            let body = serde_json::json!({ "settings": settings }).to_string();
            let got = check_request(&config, &json, body.as_bytes())
                .err()
                .map(|r| r.code());
            assert_eq!(got, refusal, "{preset:?} with {players}");
        }
    }
}
