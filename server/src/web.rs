//! The web client: static files from `server/web/`, embedded in the binary.
//!
//! The page is served at `/` and at every room link `/r/{code}` (the same page; its script reads
//! the code from the path), the replay page at `/replay` (`/replay#CODE/N` names a match), and
//! their scripts, styles and icon under `/assets/`. Every answer
//! carries its content type, `Cache-Control: no-cache` with an `ETag` (so a browser revalidates
//! and gets `304 Not Modified` while the binary is unchanged, and a new binary is picked up at
//! once), `X-Content-Type-Options: nosniff`, and each page a Content-Security-Policy that allows
//! only this server.

use std::sync::OnceLock;

use axum::Router;
use axum::extract::Path;
use axum::http::{HeaderMap, HeaderValue, StatusCode, header};
use axum::response::{IntoResponse, Response};
use axum::routing::get;

/// One embedded file.
struct Asset {
    /// The file's name under `server/web/` and `/assets/`.
    name: &'static str,
    /// Its `Content-Type`.
    content_type: &'static str,
    /// Its bytes.
    body: &'static [u8],
}

macro_rules! asset {
    ($name:literal, $type:literal) => {
        Asset {
            name: $name,
            content_type: $type,
            body: include_bytes!(concat!("../web/", $name)),
        }
    };
}

/// Every file of the web client. A test checks that this lists every file in `server/web/`.
const ASSETS: &[Asset] = &[
    asset!("index.html", "text/html; charset=utf-8"),
    asset!("replay.html", "text/html; charset=utf-8"),
    asset!("style.css", "text/css; charset=utf-8"),
    asset!("alert.js", "text/javascript; charset=utf-8"),
    asset!("announce.js", "text/javascript; charset=utf-8"),
    asset!("app.js", "text/javascript; charset=utf-8"),
    asset!("cards.js", "text/javascript; charset=utf-8"),
    asset!("chat.js", "text/javascript; charset=utf-8"),
    asset!("deals.js", "text/javascript; charset=utf-8"),
    asset!("dock.js", "text/javascript; charset=utf-8"),
    asset!("dom.js", "text/javascript; charset=utf-8"),
    asset!("errors.js", "text/javascript; charset=utf-8"),
    asset!("fair.js", "text/javascript; charset=utf-8"),
    asset!("fair-memory.js", "text/javascript; charset=utf-8"),
    asset!("fair-scheme.js", "text/javascript; charset=utf-8"),
    asset!("fly.js", "text/javascript; charset=utf-8"),
    asset!("home.js", "text/javascript; charset=utf-8"),
    asset!("i18n.js", "text/javascript; charset=utf-8"),
    asset!("join.js", "text/javascript; charset=utf-8"),
    asset!("lobby.js", "text/javascript; charset=utf-8"),
    asset!("log.js", "text/javascript; charset=utf-8"),
    asset!("messages.js", "text/javascript; charset=utf-8"),
    asset!("net.js", "text/javascript; charset=utf-8"),
    asset!("page.js", "text/javascript; charset=utf-8"),
    asset!("replay.js", "text/javascript; charset=utf-8"),
    asset!("rules.js", "text/javascript; charset=utf-8"),
    asset!("score.js", "text/javascript; charset=utf-8"),
    asset!("session.js", "text/javascript; charset=utf-8"),
    asset!("settings.js", "text/javascript; charset=utf-8"),
    asset!("storage.js", "text/javascript; charset=utf-8"),
    asset!("table-clock.js", "text/javascript; charset=utf-8"),
    asset!("table-input.js", "text/javascript; charset=utf-8"),
    asset!("table-paint.js", "text/javascript; charset=utf-8"),
    asset!("table-seats.js", "text/javascript; charset=utf-8"),
    asset!("table-state.js", "text/javascript; charset=utf-8"),
    asset!("table.js", "text/javascript; charset=utf-8"),
    asset!("watchers.js", "text/javascript; charset=utf-8"),
    asset!("icon.svg", "image/svg+xml"),
];

/// The index page's asset number in [`ASSETS`].
const INDEX: usize = 0;

/// The replay page's asset number in [`ASSETS`].
const REPLAY: usize = 1;

/// Whether asset `i` is a page (served at its own path, with the Content-Security-Policy) rather
/// than a file under `/assets/`.
fn is_page(i: usize) -> bool {
    i == INDEX || i == REPLAY
}

/// What the page may load: only this server's own files and its WebSocket. The WebSocket's
/// origin is also named outright (from the request's `Host`), for browsers whose `'self'` does
/// not yet cover `ws:` and `wss:`.
fn content_security_policy(headers: &HeaderMap) -> HeaderValue {
    let host = headers
        .get(header::HOST)
        .and_then(|h| h.to_str().ok())
        .filter(|h| {
            !h.is_empty()
                && h.bytes()
                    .all(|b| b.is_ascii_alphanumeric() || b".-:[]".contains(&b))
        });
    let sockets = host
        .map(|h| format!(" ws://{h} wss://{h}"))
        .unwrap_or_default();
    let policy = format!(
        "default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self' data:; \
         connect-src 'self'{sockets}; base-uri 'none'; form-action 'self'; frame-ancestors 'none'"
    );
    HeaderValue::from_str(&policy)
        .unwrap_or_else(|_| HeaderValue::from_static("default-src 'self'"))
}

/// The routes of the web client: `/`, `/r/{code}`, `/replay` and `/assets/{file}`. Merge them
/// into the server's router.
pub fn routes<S: Clone + Send + Sync + 'static>() -> Router<S> {
    Router::new()
        .route("/", get(index))
        .route("/r/{code}", get(index))
        .route("/replay", get(replay))
        .route("/assets/{file}", get(asset))
}

/// The `ETag` of every asset, computed once.
fn etags() -> &'static [String] {
    static ETAGS: OnceLock<Vec<String>> = OnceLock::new();
    ETAGS.get_or_init(|| ASSETS.iter().map(|a| etag(a.body)).collect())
}

/// The `ETag` of a body that only changes with the binary: a 64-bit FNV-1a hash of its bytes,
/// quoted.
pub(crate) fn etag(body: &[u8]) -> String {
    let hash = body.iter().fold(0xcbf2_9ce4_8422_2325_u64, |h, &b| {
        (h ^ u64::from(b)).wrapping_mul(0x0100_0000_01b3)
    });
    format!("\"{hash:016x}\"")
}

/// Whether the request's `If-None-Match` names `etag` (or `*`): the client has this version.
pub(crate) fn is_fresh(headers: &HeaderMap, etag: &str) -> bool {
    headers
        .get(header::IF_NONE_MATCH)
        .and_then(|v| v.to_str().ok())
        .is_some_and(|v| v.split(',').any(|t| t.trim() == etag || t.trim() == "*"))
}

async fn index(headers: HeaderMap) -> Response {
    serve(INDEX, &headers)
}

async fn replay(headers: HeaderMap) -> Response {
    serve(REPLAY, &headers)
}

async fn asset(Path(file): Path<String>, headers: HeaderMap) -> Response {
    match ASSETS
        .iter()
        .enumerate()
        .position(|(i, a)| a.name == file && !is_page(i))
    {
        Some(i) => serve(i, &headers),
        None => (StatusCode::NOT_FOUND, "no such file").into_response(),
    }
}

/// Answers with asset `i`, or `304 Not Modified` when the browser already has this version.
fn serve(i: usize, headers: &HeaderMap) -> Response {
    let asset = &ASSETS[i];
    let etag = &etags()[i];
    let mut response = if is_fresh(headers, etag) {
        StatusCode::NOT_MODIFIED.into_response()
    } else {
        let mut r = asset.body.into_response();
        r.headers_mut().insert(
            header::CONTENT_TYPE,
            HeaderValue::from_static(asset.content_type),
        );
        r
    };
    let h = response.headers_mut();
    h.insert(header::CACHE_CONTROL, HeaderValue::from_static("no-cache"));
    if let Ok(value) = HeaderValue::from_str(etag) {
        h.insert(header::ETAG, value);
    }
    h.insert(
        header::X_CONTENT_TYPE_OPTIONS,
        HeaderValue::from_static("nosniff"),
    );
    if is_page(i) {
        h.insert(
            header::CONTENT_SECURITY_POLICY,
            content_security_policy(headers),
        );
        h.insert(
            header::REFERRER_POLICY,
            HeaderValue::from_static("no-referrer"),
        );
        // The CSP's `frame-ancestors` for browsers that do not read it: never in a frame.
        h.insert(header::X_FRAME_OPTIONS, HeaderValue::from_static("DENY"));
    }
    response
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_file_of_the_web_client_is_embedded_once() {
        let dir = concat!(env!("CARGO_MANIFEST_DIR"), "/web");
        let mut on_disk: Vec<String> = std::fs::read_dir(dir)
            .unwrap()
            .map(|e| e.unwrap().file_name().into_string().unwrap())
            .collect();
        on_disk.sort();
        let mut embedded: Vec<String> = ASSETS.iter().map(|a| a.name.to_owned()).collect();
        embedded.sort();
        assert_eq!(embedded, on_disk);
        assert_eq!(ASSETS[INDEX].name, "index.html");
        assert_eq!(ASSETS[REPLAY].name, "replay.html");
    }

    /// A block left open swallows every rule after it (a merge once left the laptop's
    /// `@media` block open, and the replay page's rules, written after it, never applied).
    #[test]
    fn the_stylesheet_closes_every_block_it_opens() {
        let css = ASSETS.iter().find(|a| a.name == "style.css").unwrap();
        let text = std::str::from_utf8(css.body).unwrap();
        let (mut depth, mut line, mut in_comment, mut quote) = (0i32, 1, false, None);
        let mut chars = text.chars().peekable();
        while let Some(c) = chars.next() {
            match (c, in_comment, quote) {
                ('\n', ..) => line += 1,
                ('*', true, _) if chars.peek() == Some(&'/') => {
                    chars.next();
                    in_comment = false;
                }
                (_, true, _) => {}
                ('/', false, None) if chars.peek() == Some(&'*') => {
                    chars.next();
                    in_comment = true;
                }
                ('"' | '\'', false, None) => quote = Some(c),
                ('\\', false, Some(_)) => {
                    chars.next();
                }
                (q, false, Some(open)) if q == open => quote = None,
                (_, false, Some(_)) => {}
                ('{', false, None) => depth += 1,
                ('}', false, None) => {
                    depth -= 1;
                    assert!(
                        depth >= 0,
                        "style.css closes a block it never opened, line {line}"
                    );
                }
                _ => {}
            }
        }
        assert!(
            !in_comment && quote.is_none(),
            "style.css ends inside a comment or a string"
        );
        assert_eq!(
            depth, 0,
            "style.css leaves {depth} block(s) open at its end"
        );
    }

    #[test]
    fn content_types_follow_the_extension() {
        for a in ASSETS {
            let expected = match a.name.rsplit('.').next() {
                Some("html") => "text/html",
                Some("css") => "text/css",
                Some("js") => "text/javascript",
                Some("svg") => "image/svg+xml",
                other => panic!("no content type for {other:?}"),
            };
            assert!(a.content_type.starts_with(expected), "{}", a.name);
        }
    }

    #[test]
    fn an_unchanged_file_answers_not_modified_and_a_changed_one_in_full() {
        let i = ASSETS.iter().position(|a| a.name == "app.js").unwrap();
        let mut headers = HeaderMap::new();
        let first = serve(i, &headers);
        assert_eq!(first.status(), StatusCode::OK);
        assert_eq!(first.headers()[header::CACHE_CONTROL], "no-cache");
        let etag = first.headers()[header::ETAG].clone();
        headers.insert(header::IF_NONE_MATCH, etag);
        assert_eq!(serve(i, &headers).status(), StatusCode::NOT_MODIFIED);
        headers.insert(header::IF_NONE_MATCH, HeaderValue::from_static("\"0\""));
        assert_eq!(serve(i, &headers).status(), StatusCode::OK);
        for page in [INDEX, REPLAY] {
            assert!(
                serve(page, &HeaderMap::new())
                    .headers()
                    .contains_key(header::CONTENT_SECURITY_POLICY)
            );
        }
    }

    #[test]
    fn the_page_may_open_its_own_websocket_and_nothing_else() {
        let mut headers = HeaderMap::new();
        headers.insert(header::HOST, HeaderValue::from_static("127.0.0.1:8080"));
        let policy = content_security_policy(&headers);
        let policy = policy.to_str().unwrap();
        assert!(
            policy.contains("connect-src 'self' ws://127.0.0.1:8080 wss://127.0.0.1:8080;"),
            "{policy}"
        );
        assert!(policy.contains("script-src 'self';"));
        // A Host that is not a plain host name adds nothing to the policy.
        headers.insert(header::HOST, HeaderValue::from_static("evil; script-src *"));
        let policy = content_security_policy(&headers);
        assert!(policy.to_str().unwrap().contains("connect-src 'self';"));
    }
}
