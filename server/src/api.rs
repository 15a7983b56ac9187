//! The HTTP routes: room creation and lookup, the WebSocket upgrade, and the health check.

use std::sync::Arc;

use axum::Json;
use axum::Router;
use axum::body::Bytes;
use axum::extract::ws::WebSocketUpgrade;
use axum::extract::{DefaultBodyLimit, Path, State};
use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};
use axum::routing::{get, post};
use dhumbal_engine::{Game, Preset};
use dhumbal_protocol::{ApiError, CreateRoom, CreatedRoom, codes};
use tracing::debug;

use crate::code::normalize;
use crate::conn;
use crate::room::RoomSetup;
use crate::{AppState, Config};

/// The largest request body the API reads.
const MAX_BODY_BYTES: usize = 64 * 1024;
/// The WebSocket read buffer: small, since messages are small (axum's default costs ~130 KB of
/// memory per idle connection).
const WS_READ_BUFFER: usize = 4 * 1024;
/// The WebSocket write buffer.
const WS_WRITE_BUFFER: usize = 4 * 1024;

/// The API's routes.
pub fn routes() -> Router<Arc<AppState>> {
    Router::new()
        .route("/api/rooms", post(create_room))
        .route("/api/rooms/{code}", get(room_summary))
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

/// `POST /api/rooms`: creates a room and answers its code, link and host secret.
async fn create_room(State(app): State<Arc<AppState>>, body: Bytes) -> Response {
    let request: CreateRoom = if body.iter().all(u8::is_ascii_whitespace) {
        CreateRoom::default()
    } else {
        match serde_json::from_slice(&body) {
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
    let setup = RoomSetup {
        code: String::new(),
        host_secret: uuid::Uuid::new_v4().to_string(),
        settings: settings.clone(),
        decks: request.decks,
        bot_delay: app.config.bot_delay(),
        takeover_after: app.config.takeover_after,
        idle_ttl: app.config.idle_room_ttl,
        metrics: Arc::clone(&app.metrics),
    };
    let host_secret = setup.host_secret.clone();
    let Ok(code) = app.rooms.create(setup) else {
        return refuse(
            StatusCode::SERVICE_UNAVAILABLE,
            codes::TOO_MANY_ROOMS,
            "the server holds as many rooms as it may; try again later",
        );
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

/// `GET /api/rooms/{code}`: what someone about to join needs to know.
async fn room_summary(State(app): State<Arc<AppState>>, Path(code): Path<String>) -> Response {
    let summary = match app.rooms.get(&normalize(&code)) {
        Some(handle) => handle.summary().await,
        None => None,
    };
    match summary {
        Some(summary) => Json(summary).into_response(),
        None => refuse(
            StatusCode::NOT_FOUND,
            codes::UNKNOWN_ROOM,
            "there is no room with that code",
        ),
    }
}

/// `GET /ws`: the WebSocket, with limits fit for small JSON messages.
async fn upgrade(State(app): State<Arc<AppState>>, ws: WebSocketUpgrade) -> Response {
    ws_limits(ws, &app.config).on_upgrade(move |socket| conn::serve(socket, app))
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
