//! The HTTP routes: room creation and lookup, finished matches' hand histories, the WebSocket
//! upgrade, and the health check.

use std::sync::Arc;

use axum::Router;
use axum::body::Bytes;
use axum::extract::ws::WebSocketUpgrade;
use axum::extract::{DefaultBodyLimit, Path, State};
use axum::http::{HeaderMap, StatusCode};
use axum::response::{IntoResponse, Response};
use axum::routing::{get, post};
use axum::{Extension, Json};
use dhumbal_engine::{Game, Preset};
use dhumbal_protocol::{ApiError, CreateRoom, CreatedRoom, codes};
use rand::TryRngCore;
use tracing::{debug, warn};

use crate::address::{ClientAddr, requested_host};
use crate::code::normalize;
use crate::conn;
use crate::limits::CreationRefused;
use crate::listener::TcpSlot;
use crate::origin;
use crate::registry::CreateError;
use crate::room::record::{self, Setup};
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
        .route(
            "/api/rooms/{code}/matches/{number}/history",
            get(match_history),
        )
        .route("/ws", get(upgrade))
        .route("/healthz", get(healthz))
        .layer(DefaultBodyLimit::max(MAX_BODY_BYTES))
}

fn refuse(status: StatusCode, code: &str, message: impl Into<String>) -> Response {
    let body = ApiError {
        code: code.to_owned(),
        message: message.into(),
    };
    (status, Json(body)).into_response()
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
    if !is_json(&headers) {
        return refuse(
            StatusCode::UNSUPPORTED_MEDIA_TYPE,
            codes::UNSUPPORTED_MEDIA_TYPE,
            "send the room's request as JSON, with Content-Type: application/json",
        );
    }
    let request: CreateRoom = if body.iter().all(u8::is_ascii_whitespace) {
        CreateRoom::default()
    } else {
        let value: serde_json::Value = match serde_json::from_slice(&body) {
            Ok(value) => value,
            Err(e) => {
                return refuse(
                    StatusCode::BAD_REQUEST,
                    codes::BAD_MESSAGE,
                    format!("the body is not JSON: {e}"),
                );
            }
        };
        if !value.is_object() {
            return refuse(
                StatusCode::BAD_REQUEST,
                codes::BAD_MESSAGE,
                "the body must be a JSON object, such as {\"preset\":\"standard\"}",
            );
        }
        match serde_json::from_value(value) {
            Ok(request) => request,
            Err(e) => {
                return refuse(
                    StatusCode::BAD_REQUEST,
                    codes::BAD_MESSAGE,
                    format!("the body does not fit: {e}"),
                );
            }
        }
    };
    let settings = request
        .settings
        .unwrap_or_else(|| request.preset.unwrap_or(Preset::Standard).settings());
    if let Err(e) = settings.validate() {
        return refuse(StatusCode::BAD_REQUEST, e.code(), e.to_string());
    }
    if let Some(decks) = &request.decks {
        if !app.config.allow_test_decks {
            return refuse(
                StatusCode::FORBIDDEN,
                codes::TEST_DECKS_DISABLED,
                "fixed decks need a server started with --allow-test-decks",
            );
        }
        if let Err(e) = Game::with_decks(settings.clone(), decks.clone()) {
            return refuse(StatusCode::BAD_REQUEST, e.code(), e.to_string());
        }
    }
    let host_secret = uuid::Uuid::new_v4().to_string();
    // The first match's seed: its commitment is public from the lobby on.
    let seed = match &request.decks {
        Some(_) => None,
        None => {
            let mut seed = [0u8; 32];
            if let Err(e) = rand::rngs::OsRng.try_fill_bytes(&mut seed) {
                tracing::error!(error = %e, "no randomness for a match seed");
                return refuse(
                    StatusCode::INTERNAL_SERVER_ERROR,
                    codes::INTERNAL,
                    "something went wrong on the server; it has been logged",
                );
            }
            Some(seed)
        }
    };
    let setup = Setup {
        format: record::FORMAT,
        code: String::new(),
        host_secret_hash: record::hash_secret(&host_secret),
        settings: settings.clone(),
        decks: request.decks,
        seed,
    };
    let creator = match app.room_creations.admit(client.ip) {
        Ok(slot) => slot,
        Err(CreationRefused::TooFast) => {
            return refuse(
                StatusCode::TOO_MANY_REQUESTS,
                codes::RATE_LIMITED,
                "rooms are being created too fast from your address; wait a minute",
            );
        }
        Err(CreationRefused::TooMany) => {
            return refuse(
                StatusCode::TOO_MANY_REQUESTS,
                codes::TOO_MANY_OPEN_ROOMS,
                "rooms created from your address are still open, as many as one address may \
                 have; play in one of them or wait for them to close",
            );
        }
    };
    let created = app
        .rooms
        .create(
            setup,
            app.config.timing(),
            Arc::clone(&app.metrics),
            creator,
        )
        .await;
    let code = match created {
        Ok(code) => code,
        Err(CreateError::Full) => {
            return refuse(
                StatusCode::SERVICE_UNAVAILABLE,
                codes::TOO_MANY_ROOMS,
                "the server holds as many rooms as it may; try again later",
            );
        }
        Err(CreateError::Store(e)) => {
            // The detail is for the log; the client learns only that it failed.
            tracing::error!(error = %e, "a new room could not be stored");
            return refuse(
                StatusCode::INTERNAL_SERVER_ERROR,
                codes::INTERNAL,
                "something went wrong on the server; it has been logged",
            );
        }
    };
    debug!(room = %code, "room created");
    let created = CreatedRoom {
        url: format!("/r/{code}"),
        ws: "/ws".into(),
        code,
        host_secret,
        settings,
    };
    (StatusCode::CREATED, Json(created)).into_response()
}

/// `GET /api/rooms/{code}`: what someone about to join needs to know. A code of no room counts
/// as a failed attempt of the caller's address ([`crate::limits::JoinAttempts`]).
async fn room_summary(
    State(app): State<Arc<AppState>>,
    client: ClientAddr,
    Path(code): Path<String>,
) -> Response {
    if app.join_attempts.check(client.ip).is_err() {
        return refuse(
            StatusCode::TOO_MANY_REQUESTS,
            codes::TOO_MANY_ATTEMPTS,
            "too many room codes that do not exist came from your address; wait a minute",
        );
    }
    let summary = match app.rooms.get(&normalize(&code)) {
        Some(handle) => handle.summary().await,
        None => None,
    };
    match summary {
        Some(summary) => Json(summary).into_response(),
        None => {
            app.join_attempts.fail(client.ip);
            refuse(
                StatusCode::NOT_FOUND,
                codes::UNKNOWN_ROOM,
                "there is no room with that code",
            )
        }
    }
}

/// `GET /api/rooms/{code}/matches/{number}/history`: a finished match's hand history, for
/// someone who sat in it (`Authorization: Bearer <seat token>`) or saw its end (`Bearer <the
/// revealed match seed>`). `401 unauthorized` without a credential that fits, `404
/// unknown_match` when none is kept (see `docs/fairness.md`).
async fn match_history(
    State(app): State<Arc<AppState>>,
    Path((code, number)): Path<(String, String)>,
    headers: HeaderMap,
) -> Response {
    let unauthorized = || {
        let mut response = refuse(
            StatusCode::UNAUTHORIZED,
            codes::UNAUTHORIZED,
            "send the seat token you played this match with, or its revealed seed, as \
             `Authorization: Bearer …`",
        );
        response.headers_mut().insert(
            axum::http::header::WWW_AUTHENTICATE,
            axum::http::HeaderValue::from_static("Bearer"),
        );
        response
    };
    let Some(credential) = headers
        .get(axum::http::header::AUTHORIZATION)
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.strip_prefix("Bearer "))
        .map(str::trim)
        .filter(|c| !c.is_empty())
    else {
        return unauthorized();
    };
    let unknown = || {
        refuse(
            StatusCode::NOT_FOUND,
            codes::UNKNOWN_MATCH,
            "this server keeps no hand history of that match",
        )
    };
    let Ok(number) = number.parse::<u32>() else {
        return unknown();
    };
    let code = normalize(&code);
    let kept = match app.rooms.store().find_match(&code, number).await {
        Ok(Some(kept)) => kept,
        Ok(None) => return unknown(),
        Err(e) => {
            warn!(room = %code, number, error = %e, "reading a hand history failed");
            return refuse(
                StatusCode::INTERNAL_SERVER_ERROR,
                codes::INTERNAL,
                "something went wrong on the server; it has been logged",
            );
        }
    };
    let sat = kept.token_hashes.contains(&record::hash_secret(credential));
    let saw_the_end = credential
        .parse::<dhumbal_engine::Hex32>()
        .is_ok_and(|seed| dhumbal_engine::fair::commitment(&seed.0).to_string() == kept.commitment);
    if !sat && !saw_the_end {
        return unauthorized();
    }
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

/// `GET /ws`: the WebSocket, with limits fit for small JSON messages. Refused with 403 for a
/// browser page of a foreign origin ([`origin`]), with 503 when the server or the client's
/// address holds as many connections as it may, or is shutting down.
async fn upgrade(
    State(app): State<Arc<AppState>>,
    client: ClientAddr,
    tcp: Option<Extension<TcpSlot>>,
    headers: HeaderMap,
    ws: WebSocketUpgrade,
) -> Response {
    let host = requested_host(client.peer.ip(), &headers, &app.config.trusted_proxies);
    if !origin::allowed(&headers, host.as_deref(), &app.config.allowed_origins) {
        debug!(origin = ?headers.get(axum::http::header::ORIGIN), "foreign origin refused");
        return refuse(
            StatusCode::FORBIDDEN,
            codes::FORBIDDEN_ORIGIN,
            "pages of this origin may not open the game's WebSocket",
        );
    }
    if app.shutdown.has_begun() {
        return refuse(
            StatusCode::SERVICE_UNAVAILABLE,
            codes::SHUTTING_DOWN,
            "the server is shutting down; try again in a moment",
        );
    }
    let Some(address) = app.ws_per_address.acquire(client.ip) else {
        debug!(client = %client.ip, "connection refused: the address holds as many as it may");
        return refuse(
            StatusCode::SERVICE_UNAVAILABLE,
            codes::TOO_MANY_CONNECTIONS,
            "your address holds as many connections as it may; close one and try again",
        );
    };
    let Some(slot) = app.connections.acquire() else {
        warn!(
            max = app.config.max_connections,
            "connection refused: the server is full"
        );
        return refuse(
            StatusCode::SERVICE_UNAVAILABLE,
            codes::TOO_MANY_CONNECTIONS,
            "the server holds as many connections as it may; try again later",
        );
    };
    // The socket outlives the HTTP connection: it keeps the TCP connection's places.
    let tcp = tcp.and_then(|Extension(slot)| slot.take());
    let places = conn::Places {
        _server: slot,
        _address: address,
        _tcp: tcp,
    };
    ws_limits(ws, &app.config).on_upgrade(move |socket| {
        let shutdown = app.shutdown.clone();
        shutdown.track(conn::serve(socket, app, client.ip, places))
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
