//! The web client: static files from `server/web/`, embedded in the binary.
//!
//! The page is served at `/` and at every room link `/r/{code}` (the same page; its script reads
//! the code from the path), the replay page at `/replay` (`/replay#CODE/N` names a match), the
//! page shown offline at `/offline`, the service worker at `/sw.js`, and every other file (scripts,
//! styles, icons, the web app manifest) under `/assets/{version}/`, where the version is a hash of
//! every file of the client: a new binary with any file changed has new names.
//!
//! - The files under `/assets/{version}/` are `Cache-Control: max-age=31536000, immutable`: a
//!   warm load asks nothing of the server for them. Another version answers 404, and
//!   `/assets/{file}` (no version) redirects to the current one.
//! - The pages and `/sw.js` are `no-cache` with a weak `ETag` (the browser revalidates and gets
//!   `304 Not Modified` while the binary is unchanged, and a new binary is picked up at once).
//!   The server writes each page's `/assets/` paths with the version at start, and adds a
//!   `<link rel="modulepreload">` before its module script for every module that script imports
//!   (read from the files' `import … from "./…"` lines), so the browser asks for the whole graph at
//!   once instead of import by import. The home page's script imports a room's modules lazily
//!   (`import("./…")`): `/` preloads only what home needs, `/r/{code}` those too. Each page
//!   preloads the words of one language, the one it will pick (`page_language`: the
//!   `dhumbal.lang` cookie, else `Accept-Language`), so each page is served in a variant per
//!   language. The index page carries the presets (`GET /api/presets`' JSON) in a data block,
//!   so its form waits for no second round trip. The server writes the version and the files to
//!   keep offline into `sw.js`'s `const BUILD` line.
//! - Every answer carries its content type and `X-Content-Type-Options: nosniff`, each page a
//!   Content-Security-Policy that allows only this server.
//! - Every text file goes br- or gzip-encoded (as the request's `Accept-Encoding` allows),
//!   compressed once per process at the best quality ([`precompress`]); the router's compression
//!   layer ([`crate::app`]) passes an encoded answer by and compresses the API's answers.

use std::borrow::Cow;
use std::collections::VecDeque;
use std::sync::OnceLock;

use axum::Router;
use axum::body::Bytes;
use axum::extract::Path;
use axum::http::{HeaderMap, HeaderValue, StatusCode, header};
use axum::response::{IntoResponse, Response};
use axum::routing::get;
use sha2::{Digest, Sha256};

/// One embedded file.
struct Asset {
    /// The file's name under `server/web/` and `/assets/{version}/`.
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
/// Scripts name no charset: module and worker scripts are always read as UTF-8.
const ASSETS: &[Asset] = &[
    asset!("index.html", "text/html; charset=utf-8"),
    asset!("replay.html", "text/html; charset=utf-8"),
    asset!("offline.html", "text/html; charset=utf-8"),
    asset!("sw.js", "text/javascript"),
    asset!("style.css", "text/css; charset=utf-8"),
    asset!("alert.js", "text/javascript"),
    asset!("announce.js", "text/javascript"),
    asset!("app.js", "text/javascript"),
    asset!("cards.js", "text/javascript"),
    asset!("chat.js", "text/javascript"),
    asset!("coach.js", "text/javascript"),
    asset!("deals.js", "text/javascript"),
    asset!("dock.js", "text/javascript"),
    asset!("dom.js", "text/javascript"),
    asset!("errors.js", "text/javascript"),
    asset!("fair.js", "text/javascript"),
    asset!("fair-memory.js", "text/javascript"),
    asset!("fair-scheme.js", "text/javascript"),
    asset!("fly.js", "text/javascript"),
    asset!("home.js", "text/javascript"),
    asset!("i18n.js", "text/javascript"),
    asset!("install.js", "text/javascript"),
    asset!("join.js", "text/javascript"),
    asset!("lobby.js", "text/javascript"),
    asset!("log.js", "text/javascript"),
    asset!("messages-en.js", "text/javascript"),
    asset!("messages-ne.js", "text/javascript"),
    asset!("net.js", "text/javascript"),
    asset!("offline.js", "text/javascript"),
    asset!("page.js", "text/javascript"),
    asset!("replay.js", "text/javascript"),
    asset!("rules.js", "text/javascript"),
    asset!("score.js", "text/javascript"),
    asset!("session.js", "text/javascript"),
    asset!("settings.js", "text/javascript"),
    asset!("storage.js", "text/javascript"),
    asset!("table-clock.js", "text/javascript"),
    asset!("table-input.js", "text/javascript"),
    asset!("table-paint.js", "text/javascript"),
    asset!("table-seats.js", "text/javascript"),
    asset!("table-state.js", "text/javascript"),
    asset!("table.js", "text/javascript"),
    asset!("watchers.js", "text/javascript"),
    asset!("icon.svg", "image/svg+xml"),
    asset!("icon-192.png", "image/png"),
    asset!("icon-512.png", "image/png"),
    asset!("manifest.webmanifest", "application/manifest+json"),
];

/// The index page's asset number in [`ASSETS`].
const INDEX: usize = 0;

/// The replay page's asset number in [`ASSETS`].
const REPLAY: usize = 1;

/// The offline page's asset number in [`ASSETS`]: what the service worker shows for a page it
/// cannot fetch.
const OFFLINE: usize = 2;

/// The service worker's asset number in [`ASSETS`], served at `/sw.js` (a worker controls only
/// the paths under its own, and it must control `/`).
const WORKER: usize = 3;

/// The room page's number among the served bodies ([`Built::bodies`], after [`ASSETS`]'): the
/// index page again, served at `/r/{code}`, whose preloads add the room's modules (what the
/// page's script imports lazily, with `import("./…")`), and which has no file of its own.
const ROOM: usize = ASSETS.len();

/// The languages the page speaks, each with its table: a page preloads the table of the language
/// it will pick ([`page_language`]), so that each page has a variant in each language.
const LANGUAGES: [(&str, &str); 2] = [("en", "messages-en.js"), ("ne", "messages-ne.js")];

/// The pages, each served in a variant per language: the first language's variant is the page's
/// own number, the others' come after [`ROOM`], in this order.
const PAGES: [usize; 4] = [INDEX, ROOM, REPLAY, OFFLINE];

/// How many bodies are served: every asset, the room page, and each page in each other language.
const SERVED: usize = ROOM + 1 + PAGES.len() * (LANGUAGES.len() - 1);

/// The served body of page `page` (one of [`PAGES`]) in language `language` (of [`LANGUAGES`]).
fn variant(page: usize, language: usize) -> usize {
    match PAGES.iter().position(|&p| p == page) {
        Some(k) if language > 0 => ROOM + 1 + (language - 1) * PAGES.len() + k,
        _ => page,
    }
}

/// The page (or asset) served body `i` is a variant of, and the variant's language.
fn variant_of(i: usize) -> (usize, usize) {
    if i <= ROOM {
        (i, 0)
    } else {
        let k = i - ROOM - 1;
        (PAGES[k % PAGES.len()], 1 + k / PAGES.len())
    }
}

/// The file served body `i` is made from: the room page is the index page.
fn source(i: usize) -> &'static Asset {
    let (i, _) = variant_of(i);
    &ASSETS[if i == ROOM { INDEX } else { i }]
}

/// The language (of [`LANGUAGES`]) a page will pick, as i18n.js's `pickLanguage` does: the one
/// chosen on this browser (the `dhumbal.lang` cookie the page keeps), else the first of the
/// browser's languages (`Accept-Language`, in its order) the page speaks, else English.
fn page_language(headers: &HeaderMap) -> usize {
    let known = |code: &str| LANGUAGES.iter().position(|(c, _)| *c == code);
    let chosen = headers
        .get_all(header::COOKIE)
        .iter()
        .filter_map(|v| v.to_str().ok())
        .flat_map(|v| v.split(';'))
        .filter_map(|c| c.trim().strip_prefix("dhumbal.lang="))
        .find_map(known);
    chosen
        .or_else(|| {
            headers
                .get_all(header::ACCEPT_LANGUAGE)
                .iter()
                .filter_map(|v| v.to_str().ok())
                .flat_map(|v| v.split(','))
                .filter(|item| {
                    !item.split(';').skip(1).any(|p| {
                        p.trim()
                            .strip_prefix("q=")
                            .and_then(|q| q.parse::<f32>().ok())
                            .is_some_and(|q| q <= 0.0)
                    })
                })
                .filter_map(|item| {
                    let tag = item.split(';').next()?.trim().to_ascii_lowercase();
                    known(tag.split('-').next()?)
                })
                .next()
        })
        .unwrap_or(0)
}

/// Where the offline page is served.
const OFFLINE_PATH: &str = "/offline";

/// Whether asset `i` is a page (served at its own path, with the Content-Security-Policy) rather
/// than a file under `/assets/`.
fn is_page(i: usize) -> bool {
    PAGES.contains(&variant_of(i).0)
}

/// Whether asset `i` is served at its own path and revalidated (a page, or the service worker)
/// rather than under `/assets/{version}/` for good.
fn is_own_path(i: usize) -> bool {
    is_page(i) || i == WORKER
}

/// The web client as it is served: its version, and each file's body (a page or the service
/// worker rewritten, see the module's doc) with its `ETag`.
struct Built {
    /// A hash of every file: the folder under `/assets/`.
    version: String,
    /// Each asset's body as served, in [`ASSETS`]' order, then the room page's ([`ROOM`]), then
    /// each page's in the other languages ([`variant`]).
    bodies: Vec<Bytes>,
    /// Each served body's `ETag`.
    etags: Vec<String>,
    /// Each served body compressed, made on its first request (or by [`precompress`]).
    encoded: Vec<Encoded>,
}

/// One body compressed, in each encoding the server sends.
#[derive(Default)]
struct Encoded {
    /// Brotli at its best quality (11).
    br: OnceLock<Bytes>,
    /// Gzip at its best level (9).
    gzip: OnceLock<Bytes>,
}

/// A content encoding the server sends its files in.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Encoding {
    /// `br`.
    Brotli,
    /// `gzip`.
    Gzip,
}

impl Encoding {
    /// Its `Content-Encoding` name.
    fn name(self) -> &'static str {
        match self {
            Encoding::Brotli => "br",
            Encoding::Gzip => "gzip",
        }
    }

    /// `body` in this encoding.
    fn compress(self, body: &[u8]) -> Bytes {
        use std::io::Write as _;
        let out = match self {
            Encoding::Brotli => {
                let mut w = brotli::CompressorWriter::new(Vec::new(), 4096, 11, 22);
                w.write_all(body).map(|()| w.into_inner())
            }
            Encoding::Gzip => {
                let mut w = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::best());
                w.write_all(body).and_then(|()| w.finish())
            }
        };
        // Writing to a `Vec` does not fail.
        Bytes::from(out.unwrap_or_default())
    }
}

/// The encoding to send a compressible file in: br if the request's `Accept-Encoding` accepts
/// it, else gzip if that, else none.
fn encoding_for(headers: &HeaderMap) -> Option<Encoding> {
    let accepted = headers
        .get_all(header::ACCEPT_ENCODING)
        .iter()
        .filter_map(|v| v.to_str().ok())
        .flat_map(|v| v.split(','))
        .filter_map(|item| {
            let mut parts = item.split(';').map(str::trim);
            let name = parts.next()?.to_ascii_lowercase();
            let refused = parts.any(|p| {
                p.strip_prefix("q=")
                    .and_then(|q| q.parse::<f32>().ok())
                    .is_some_and(|q| q <= 0.0)
            });
            (!refused).then_some(name)
        })
        .collect::<Vec<_>>();
    if accepted.iter().any(|e| e == "br") {
        Some(Encoding::Brotli)
    } else if accepted.iter().any(|e| e == "gzip") {
        Some(Encoding::Gzip)
    } else {
        None
    }
}

/// Whether asset `i` is worth compressing: text (not the PNGs, already compressed).
fn compressible(i: usize) -> bool {
    !source(i).content_type.starts_with("image/png")
}

/// Compresses every file in every encoding now, rather than on its first request: the server
/// calls this off its runtime at start ([`crate::run`]), so that no player's first load waits.
pub fn precompress() {
    let started = std::time::Instant::now();
    for i in (0..SERVED).filter(|&i| compressible(i)) {
        for encoding in [Encoding::Brotli, Encoding::Gzip] {
            encoded_body(i, encoding);
        }
    }
    tracing::info!(
        ms = started.elapsed().as_millis() as u64,
        "the web client's files are compressed"
    );
}

/// Asset `i`'s served body in `encoding`, compressed once.
fn encoded_body(i: usize, encoding: Encoding) -> Bytes {
    let built = built();
    let slot = match encoding {
        Encoding::Brotli => &built.encoded[i].br,
        Encoding::Gzip => &built.encoded[i].gzip,
    };
    slot.get_or_init(|| encoding.compress(&built.bodies[i]))
        .clone()
}

/// The web client as it is served, built once.
fn built() -> &'static Built {
    static BUILT: OnceLock<Built> = OnceLock::new();
    BUILT.get_or_init(|| {
        let version = hash_of_every_file();
        let bodies: Vec<Bytes> = (0..SERVED)
            .map(|i| {
                let a = source(i);
                let (page, language) = variant_of(i);
                match (is_page(i), i == WORKER, std::str::from_utf8(a.body)) {
                    (true, _, Ok(text)) => Bytes::from(rewrite_page(
                        text,
                        &version,
                        page == ROOM,
                        LANGUAGES[language].1,
                    )),
                    (_, true, Ok(text)) => Bytes::from(rewrite_worker(text, &version)),
                    _ => Bytes::from_static(a.body),
                }
            })
            .collect();
        let etags = bodies.iter().map(|b| etag(b)).collect();
        let encoded = bodies.iter().map(|_| Encoded::default()).collect();
        Built {
            version,
            bodies,
            etags,
            encoded,
        }
    })
}

/// The version of the web client: the first 12 hex digits of a SHA-256 over every file's name
/// and bytes.
fn hash_of_every_file() -> String {
    let mut hasher = Sha256::new();
    for a in ASSETS {
        hasher.update(a.name.as_bytes());
        hasher.update([0]);
        hasher.update((a.body.len() as u64).to_le_bytes());
        hasher.update(a.body);
    }
    hasher.finalize()[..6]
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect()
}

/// The version of the web client this binary serves: the folder under `/assets/`, which
/// changes whenever any file of the client does.
pub fn version() -> &'static str {
    &built().version
}

/// The path this binary serves a web client file at: `/assets/{version}/{name}`.
pub fn asset_path(name: &str) -> String {
    format!("/assets/{}/{name}", version())
}

/// The embedded file named `name` under `/assets/` (not a page nor the service worker).
fn find(name: &str) -> Option<usize> {
    ASSETS
        .iter()
        .enumerate()
        .position(|(i, a)| a.name == name && !is_own_path(i))
}

/// The modules `text` imports statically and relatively (`import … from "./x.js"` and
/// `import "./x.js"`), by file name, in the order written.
fn imports(text: &'static str) -> Vec<&'static str> {
    let mut found = Vec::new();
    for pattern in ["from \"./", "import \"./"] {
        let mut rest = text;
        while let Some(at) = rest.find(pattern) {
            rest = &rest[at + pattern.len()..];
            if let Some(end) = rest.find('"') {
                found.push((text.len() - rest.len(), &rest[..end]));
            }
        }
    }
    found.sort_unstable();
    found.into_iter().map(|(_, name)| name).collect()
}

/// The modules `text` imports lazily and relatively (`import("./x.js")` in code; not a JSDoc type's
/// `{import("./x.js").T}`, nor a line of a comment), by file name, in the order written.
fn lazy_imports(text: &'static str) -> Vec<&'static str> {
    const PATTERN: &str = "import(\"./";
    let mut found = Vec::new();
    for line in text.lines() {
        let code = line.trim_start();
        if code.starts_with("//") || code.starts_with('*') || code.starts_with("/*") {
            continue;
        }
        let mut rest = line;
        while let Some(at) = rest.find(PATTERN) {
            let typed = rest[..at].ends_with('{');
            rest = &rest[at + PATTERN.len()..];
            if let Some(end) = rest.find('"').filter(|_| !typed) {
                found.push(&rest[..end]);
            }
        }
    }
    found
}

/// Every embedded module that the modules `entry` itself imports lazily load (and that `entry`'s
/// graph does not already), breadth first. Only `entry`'s own: i18n.js's lazy imports are the
/// language tables, of which a page preloads only its own.
fn lazy_graph(entry: &str) -> Vec<&'static str> {
    let eager = module_graph(entry);
    let mut lazy: Vec<&'static str> = Vec::new();
    let text = find(entry).and_then(|i| std::str::from_utf8(ASSETS[i].body).ok());
    for module in text
        .map(lazy_imports)
        .unwrap_or_default()
        .into_iter()
        .flat_map(module_graph)
    {
        if !eager.contains(&module) && !lazy.contains(&module) {
            lazy.push(module);
        }
    }
    lazy
}

/// Every embedded module that loading `entry` loads, `entry` first, breadth first.
fn module_graph(entry: &str) -> Vec<&'static str> {
    let mut graph: Vec<&'static str> = Vec::new();
    let mut queue = VecDeque::from([entry.to_owned()]);
    while let Some(name) = queue.pop_front() {
        let Some(i) = find(&name) else { continue };
        let asset = &ASSETS[i];
        if graph.contains(&asset.name) {
            continue;
        }
        graph.push(asset.name);
        if let Ok(text) = std::str::from_utf8(asset.body) {
            queue.extend(imports(text).into_iter().map(str::to_owned));
        }
    }
    graph
}

/// The file a line `<script type="module" src="/assets/NAME">` loads.
fn module_script(line: &str) -> Option<&str> {
    line.trim()
        .strip_prefix("<script type=\"module\" src=\"/assets/")?
        .split('"')
        .next()
}

/// Every file a page loads: the `"/assets/NAME"` it names and every module its scripts import.
fn page_files(text: &str) -> Vec<&'static str> {
    let mut files: Vec<&'static str> = Vec::new();
    for piece in text.split('"').skip(1).step_by(2) {
        let Some(name) = piece.strip_prefix("/assets/") else {
            continue;
        };
        let more = if name.ends_with(".js") {
            module_graph(name)
        } else {
            find(name).map(|i| ASSETS[i].name).into_iter().collect()
        };
        for file in more {
            if !files.contains(&file) {
                files.push(file);
            }
        }
    }
    files
}

/// A page as served: a `<link rel="modulepreload">` for every module its module script imports
/// (before that script), for the language table `table` where it imports i18n.js, and for the
/// room page ([`ROOM`]) for every module the script imports lazily too; the presets in their data
/// block ([`with_presets`]); and every `"/assets/` path with the version.
fn rewrite_page(text: &str, version: &str, room: bool, table: &'static str) -> String {
    let mut page = String::with_capacity(text.len() + 4096);
    for line in text.split_inclusive('\n') {
        if let Some(entry) = module_script(line) {
            // The largest first: on a slow network its bytes start while the small ones wait
            // for their round trips.
            let mut modules = module_graph(entry).split_off(1);
            if modules.contains(&"i18n.js") {
                modules.push(table);
            }
            if room {
                modules.extend(lazy_graph(entry));
            }
            modules.sort_by_key(|m| std::cmp::Reverse(find(m).map_or(0, |i| ASSETS[i].body.len())));
            for module in modules {
                page.push_str("<link rel=\"modulepreload\" href=\"/assets/");
                page.push_str(module);
                page.push_str("\">\n");
            }
        }
        page.push_str(line);
    }
    with_presets(&page).replace("\"/assets/", &format!("\"/assets/{version}/"))
}

/// The data block the page reads the server's presets from, empty as written in the file.
const PRESETS_BLOCK: &str = "<script id=\"presets\" type=\"application/json\">null</script>";

/// `page` with the presets (`GET /api/presets`' JSON) in its data block, if it has one: the
/// settings form needs no second round trip. A data block is not a script (the browser runs
/// nothing in it, and the CSP needs no `unsafe-inline`); a `<` in it is written `\u003c`, so that
/// no text in it can close the block.
fn with_presets(page: &str) -> String {
    if !page.contains(PRESETS_BLOCK) {
        return page.to_owned();
    }
    let json = serde_json::to_string(&dhumbal_protocol::Presets::from_engine())
        .unwrap_or_else(|_| "null".to_owned())
        .replace('<', "\\u003c");
    page.replace(
        PRESETS_BLOCK,
        &PRESETS_BLOCK.replace(">null<", &format!(">{json}<")),
    )
}

/// The files the service worker keeps for offline use: the offline page and every file it loads
/// (under `/assets/{version}/`), with every language's table (it switches language offline).
fn offline_files(version: &str) -> Vec<String> {
    let page = std::str::from_utf8(ASSETS[OFFLINE].body).unwrap_or_default();
    let mut files = page_files(page);
    for (_, table) in LANGUAGES {
        if !files.contains(&table) {
            files.push(table);
        }
    }
    std::iter::once(OFFLINE_PATH.to_owned())
        .chain(
            files
                .into_iter()
                .map(|name| format!("/assets/{version}/{name}")),
        )
        .collect()
}

/// The service worker as served: its `const BUILD = …;` line names this version, the offline
/// page and the files to keep for it.
fn rewrite_worker(text: &str, version: &str) -> String {
    let build = serde_json::json!({
        "version": version,
        "offline": OFFLINE_PATH,
        "keep": offline_files(version),
    });
    text.split_inclusive('\n')
        .map(|line| {
            if line.starts_with("const BUILD =") {
                Cow::Owned(format!("const BUILD = {build};\n"))
            } else {
                Cow::Borrowed(line)
            }
        })
        .collect()
}

/// What the page may load: only this server's own files, its manifest, its service worker and
/// its WebSocket. The WebSocket's origin is also named outright (from the request's `Host`), for
/// browsers whose `'self'` does not yet cover `ws:` and `wss:`.
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
         connect-src 'self'{sockets}; worker-src 'self'; manifest-src 'self'; base-uri 'none'; \
         form-action 'self'; frame-ancestors 'none'"
    );
    HeaderValue::from_str(&policy)
        .unwrap_or_else(|_| HeaderValue::from_static("default-src 'self'"))
}

/// The routes of the web client: `/`, `/r/{code}`, `/replay`, `/offline`, `/sw.js`,
/// `/assets/{version}/{file}` and `/assets/{file}`. Merge them into the server's router.
pub fn routes<S: Clone + Send + Sync + 'static>() -> Router<S> {
    Router::new()
        .route("/", get(index))
        .route("/r/{code}", get(room))
        .route("/replay", get(replay))
        .route(OFFLINE_PATH, get(offline))
        .route("/sw.js", get(worker))
        .route("/assets/{version}/{file}", get(asset))
        .route("/assets/{file}", get(unversioned))
}

/// The weak `ETag` of a body that only changes with the binary: a 64-bit FNV-1a hash of its
/// bytes, quoted. Weak, because the compression layer may send the body encoded under the same
/// tag.
pub(crate) fn etag(body: &[u8]) -> String {
    let hash = body.iter().fold(0xcbf2_9ce4_8422_2325_u64, |h, &b| {
        (h ^ u64::from(b)).wrapping_mul(0x0100_0000_01b3)
    });
    format!("W/\"{hash:016x}\"")
}

/// Whether the request's `If-None-Match` names `etag` (or `*`): the client has this version. The
/// comparison is weak, as `If-None-Match` asks: `W/"x"` and `"x"` match.
pub(crate) fn is_fresh(headers: &HeaderMap, etag: &str) -> bool {
    let opaque = |tag: &str| tag.trim().trim_start_matches("W/").to_owned();
    let wanted = opaque(etag);
    headers
        .get(header::IF_NONE_MATCH)
        .and_then(|v| v.to_str().ok())
        .is_some_and(|v| v.split(',').any(|t| t.trim() == "*" || opaque(t) == wanted))
}

/// Page `page` in the variant of the language it will pick.
fn serve_page(page: usize, headers: &HeaderMap) -> Response {
    serve(variant(page, page_language(headers)), headers)
}

async fn index(headers: HeaderMap) -> Response {
    serve_page(INDEX, &headers)
}

async fn room(headers: HeaderMap) -> Response {
    serve_page(ROOM, &headers)
}

async fn replay(headers: HeaderMap) -> Response {
    serve_page(REPLAY, &headers)
}

async fn offline(headers: HeaderMap) -> Response {
    serve_page(OFFLINE, &headers)
}

async fn worker(headers: HeaderMap) -> Response {
    serve(WORKER, &headers)
}

async fn asset(Path((version, file)): Path<(String, String)>, headers: HeaderMap) -> Response {
    match find(&file) {
        Some(i) if version == built().version => serve(i, &headers),
        Some(_) => (StatusCode::NOT_FOUND, "no such version of the web client").into_response(),
        None => (StatusCode::NOT_FOUND, "no such file").into_response(),
    }
}

/// `/assets/{file}`, without a version: a redirect to this binary's version of the file, itself
/// never cached (the next binary redirects elsewhere).
async fn unversioned(Path(file): Path<String>) -> Response {
    let Some(i) = find(&file) else {
        return (StatusCode::NOT_FOUND, "no such file").into_response();
    };
    let mut response = StatusCode::TEMPORARY_REDIRECT.into_response();
    let h = response.headers_mut();
    if let Ok(location) = HeaderValue::from_str(&asset_path(ASSETS[i].name)) {
        h.insert(header::LOCATION, location);
    }
    h.insert(header::CACHE_CONTROL, HeaderValue::from_static("no-cache"));
    response
}

/// Answers with asset `i`: a page or the worker revalidated (`304 Not Modified` when the
/// browser already has this version), any other file for good.
fn serve(i: usize, headers: &HeaderMap) -> Response {
    let asset = source(i);
    let built = built();
    let etag = &built.etags[i];
    let revalidated = is_own_path(i);
    let mut response = if revalidated && is_fresh(headers, etag) {
        StatusCode::NOT_MODIFIED.into_response()
    } else {
        let encoding = encoding_for(headers).filter(|_| compressible(i));
        let body = match encoding {
            Some(encoding) => encoded_body(i, encoding),
            None => built.bodies[i].clone(),
        };
        let mut r = body.into_response();
        r.headers_mut().insert(
            header::CONTENT_TYPE,
            HeaderValue::from_static(asset.content_type),
        );
        if let Some(encoding) = encoding {
            r.headers_mut().insert(
                header::CONTENT_ENCODING,
                HeaderValue::from_static(encoding.name()),
            );
        }
        r
    };
    let h = response.headers_mut();
    if is_page(i) {
        // Its preloads follow the language the page will pick.
        h.insert(
            header::VARY,
            HeaderValue::from_static("accept-encoding, accept-language, cookie"),
        );
    } else if compressible(i) {
        h.insert(header::VARY, HeaderValue::from_static("accept-encoding"));
    }
    if revalidated {
        h.insert(header::CACHE_CONTROL, HeaderValue::from_static("no-cache"));
        if let Ok(value) = HeaderValue::from_str(etag) {
            h.insert(header::ETAG, value);
        }
    } else {
        h.insert(
            header::CACHE_CONTROL,
            HeaderValue::from_static("max-age=31536000, immutable"),
        );
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
        assert_eq!(ASSETS[OFFLINE].name, "offline.html");
        assert_eq!(ASSETS[WORKER].name, "sw.js");
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
                Some("png") => "image/png",
                Some("webmanifest") => "application/manifest+json",
                other => panic!("no content type for {other:?}"),
            };
            assert!(a.content_type.starts_with(expected), "{}", a.name);
        }
    }

    #[test]
    fn an_unchanged_page_answers_not_modified_and_a_changed_one_in_full() {
        for page in [INDEX, ROOM, REPLAY, OFFLINE, WORKER] {
            let mut headers = HeaderMap::new();
            let first = serve(page, &headers);
            assert_eq!(first.status(), StatusCode::OK);
            assert_eq!(first.headers()[header::CACHE_CONTROL], "no-cache");
            let etag = first.headers()[header::ETAG].clone();
            assert!(etag.to_str().unwrap().starts_with("W/\""), "{etag:?}");
            headers.insert(header::IF_NONE_MATCH, etag.clone());
            assert_eq!(serve(page, &headers).status(), StatusCode::NOT_MODIFIED);
            // The same tag, strong, still matches (If-None-Match compares weakly).
            let strong = etag.to_str().unwrap().trim_start_matches("W/").to_owned();
            headers.insert(
                header::IF_NONE_MATCH,
                HeaderValue::from_str(&strong).unwrap(),
            );
            assert_eq!(serve(page, &headers).status(), StatusCode::NOT_MODIFIED);
            headers.insert(header::IF_NONE_MATCH, HeaderValue::from_static("\"0\""));
            assert_eq!(serve(page, &headers).status(), StatusCode::OK);
            assert_eq!(
                serve(page, &HeaderMap::new())
                    .headers()
                    .contains_key(header::CONTENT_SECURITY_POLICY),
                page != WORKER
            );
        }
    }

    /// The router with the server's own layers ([`crate::app`]), on a memory store.
    fn app() -> Router {
        let metrics = std::sync::Arc::new(crate::metrics::Metrics::default());
        let store = crate::store::Store::open(
            &crate::store::StoreConfig::Memory,
            std::sync::Arc::clone(&metrics),
        )
        .unwrap();
        let state = crate::AppState::new(crate::Config::default(), store, metrics);
        crate::app(std::sync::Arc::new(state))
    }

    /// `GET path` with these headers through [`app`]: the answer's status, headers and body.
    async fn get(path: &str, headers: &[(&str, &str)]) -> (StatusCode, HeaderMap, Vec<u8>) {
        use http_body_util::BodyExt as _;
        use tower::ServiceExt as _;
        let mut request = axum::http::Request::get(path);
        for (name, value) in headers {
            request = request.header(*name, *value);
        }
        let response = app()
            .oneshot(request.body(axum::body::Body::empty()).unwrap())
            .await
            .unwrap();
        let (parts, body) = response.into_parts();
        let body = body.collect().await.unwrap().to_bytes().to_vec();
        (parts.status, parts.headers, body)
    }

    #[tokio::test]
    async fn a_versioned_file_is_cached_for_good_and_another_version_is_not_found() {
        let path = asset_path("app.js");
        assert_eq!(path, format!("/assets/{}/app.js", version()));
        assert_eq!(version().len(), 12);
        let (status, headers, body) = get(&path, &[]).await;
        assert_eq!(status, StatusCode::OK);
        assert_eq!(
            headers[header::CACHE_CONTROL],
            "max-age=31536000, immutable"
        );
        assert!(
            headers[header::CONTENT_TYPE]
                .to_str()
                .unwrap()
                .starts_with("text/javascript")
        );
        assert!(!headers.contains_key(header::ETAG));
        assert_eq!(body, ASSETS[find("app.js").unwrap()].body);
        // Another version (an older binary's), an unknown file, a page under /assets/: 404.
        for missing in [
            "/assets/000000000000/app.js".to_owned(),
            asset_path("nothing.js"),
            asset_path("index.html"),
            asset_path("sw.js"),
        ] {
            let (status, ..) = get(&missing, &[]).await;
            assert_eq!(status, StatusCode::NOT_FOUND, "{missing}");
        }
        // Without a version: a redirect, never cached, to this version's file.
        let (status, headers, _) = get("/assets/app.js", &[]).await;
        assert_eq!(status, StatusCode::TEMPORARY_REDIRECT);
        assert_eq!(headers[header::LOCATION], path.as_str());
        assert_eq!(headers[header::CACHE_CONTROL], "no-cache");
        let (status, ..) = get("/assets/nothing.js", &[]).await;
        assert_eq!(status, StatusCode::NOT_FOUND);
    }

    #[tokio::test]
    async fn a_compressed_answer_decodes_to_the_file() {
        use std::io::Read as _;
        let name = "messages-en.js";
        let file = ASSETS[find(name).unwrap()].body;
        let (status, headers, gzipped) =
            get(&asset_path(name), &[("accept-encoding", "gzip")]).await;
        assert_eq!(status, StatusCode::OK);
        assert_eq!(headers[header::CONTENT_ENCODING], "gzip");
        assert!(
            gzipped.len() * 3 < file.len(),
            "{} of {}",
            gzipped.len(),
            file.len()
        );
        let mut decoded = Vec::new();
        flate2::read::GzDecoder::new(gzipped.as_slice())
            .read_to_end(&mut decoded)
            .unwrap();
        assert_eq!(decoded, file);
        let (_, headers, brotli) = get(
            &asset_path(name),
            &[("accept-encoding", "gzip, deflate, br, zstd")],
        )
        .await;
        assert_eq!(headers[header::CONTENT_ENCODING], "br");
        assert_eq!(headers[header::VARY], "accept-encoding");
        assert!(
            brotli.len() < gzipped.len(),
            "{} {}",
            brotli.len(),
            gzipped.len()
        );
        let mut decoded = Vec::new();
        brotli::Decompressor::new(brotli.as_slice(), 4096)
            .read_to_end(&mut decoded)
            .unwrap();
        assert_eq!(decoded, file);
        // br refused (q=0): gzip.
        let (_, headers, _) = get(&asset_path(name), &[("accept-encoding", "br;q=0, gzip")]).await;
        assert_eq!(headers[header::CONTENT_ENCODING], "gzip");
        // A page, rewritten at start, decodes to the page as served.
        let (_, headers, page) = get("/", &[("accept-encoding", "gzip")]).await;
        assert_eq!(headers[header::CONTENT_ENCODING], "gzip");
        let mut decoded = Vec::new();
        flate2::read::GzDecoder::new(page.as_slice())
            .read_to_end(&mut decoded)
            .unwrap();
        assert_eq!(decoded, built().bodies[INDEX]);
        // A client that accepts no encoding gets the file as it is; so does a PNG, already
        // compressed.
        let (_, headers, plain) = get(&asset_path(name), &[]).await;
        assert!(!headers.contains_key(header::CONTENT_ENCODING));
        assert_eq!(plain, file);
        let (_, headers, png) =
            get(&asset_path("icon-512.png"), &[("accept-encoding", "gzip")]).await;
        assert!(!headers.contains_key(header::CONTENT_ENCODING));
        assert_eq!(png, ASSETS[find("icon-512.png").unwrap()].body);
        // The API's JSON too.
        let (status, headers, _) = get("/api/presets", &[("accept-encoding", "gzip")]).await;
        assert_eq!(status, StatusCode::OK);
        assert_eq!(headers[header::CONTENT_ENCODING], "gzip");
    }

    /// Modules of a room, which app.js imports lazily: a room's page preloads them, the home
    /// page does not.
    const ROOM_MODULES: [&str; 5] = [
        "session.js",
        "net.js",
        "table-paint.js",
        "lobby.js",
        "chat.js",
    ];

    /// The modules a served page preloads, by file name, in its order.
    fn preloads(page: &str) -> Vec<&str> {
        page.lines()
            .filter_map(|l| l.strip_prefix("<link rel=\"modulepreload\" href=\""))
            .map(|l| l.trim_end_matches("\">").rsplit('/').next().unwrap())
            .collect()
    }

    #[test]
    fn a_page_names_only_this_versions_files_and_preloads_every_module_its_script_imports() {
        let page = std::str::from_utf8(&built().bodies[INDEX]).unwrap();
        let prefix = format!("\"/assets/{}/", version());
        for piece in page.split('"').skip(1).step_by(2) {
            if piece.starts_with("/assets/") {
                assert!(piece.starts_with(&prefix[1..]), "{piece}");
            }
        }
        let preloaded = preloads(page);
        // Every module app.js loads, however deep (home.js imports settings.js, which imports
        // errors.js), and not app.js itself, which the page's script tag loads.
        for module in [
            "home.js",
            "settings.js",
            "errors.js",
            "messages-en.js",
            "install.js",
        ] {
            assert!(preloaded.contains(&module), "{module}: {preloaded:?}");
        }
        assert!(!preloaded.contains(&"app.js"));
        assert!(!preloaded.contains(&"replay.js"));
        // The home page needs no module of a room: app.js imports them lazily.
        for module in ROOM_MODULES {
            assert!(!preloaded.contains(&module), "{module}: {preloaded:?}");
        }
        let mut graph = module_graph("app.js").split_off(1);
        graph.push("messages-en.js");
        let mut sorted = preloaded.clone();
        graph.sort_unstable();
        sorted.sort_unstable();
        assert_eq!(sorted, graph);
        // Every preload comes before the script, inside <head>.
        let script = page.find("<script type=\"module\"").unwrap();
        assert!(page.rfind("modulepreload").unwrap() < script);
        assert!(script < page.find("</head>").unwrap());
        let replay = std::str::from_utf8(&built().bodies[REPLAY]).unwrap();
        assert!(replay.contains(&format!("{prefix}fair.js\"")));
        assert!(replay.contains(&format!("{prefix}manifest.webmanifest\"")));
    }

    /// A room's link preloads what the home page does and every module app.js imports lazily
    /// (the room's: session.js and all it imports), each once; the graph is read from the files,
    /// so that a module a change adds to the room is preloaded with it.
    #[test]
    fn a_rooms_page_preloads_the_rooms_modules_too() {
        let home = std::str::from_utf8(&built().bodies[INDEX]).unwrap();
        let room = std::str::from_utf8(&built().bodies[ROOM]).unwrap();
        let preloaded = preloads(room);
        let app = ASSETS[find("app.js").unwrap()].body;
        let lazy = lazy_imports(std::str::from_utf8(app).unwrap());
        assert_eq!(lazy, ["session.js", "score.js"]);
        let mut expected: Vec<&str> = module_graph("app.js").split_off(1);
        expected.push("messages-en.js");
        for module in lazy.into_iter().flat_map(module_graph) {
            if !expected.contains(&module) {
                expected.push(module);
            }
        }
        for module in ROOM_MODULES.into_iter().chain(["fair-scheme.js"]) {
            assert!(preloaded.contains(&module), "{module}: {preloaded:?}");
        }
        for module in preloads(home) {
            assert!(preloaded.contains(&module), "{module}: {preloaded:?}");
        }
        let mut sorted = preloaded.clone();
        sorted.sort_unstable();
        sorted.dedup();
        assert_eq!(sorted.len(), preloaded.len(), "{preloaded:?}");
        expected.sort_unstable();
        assert_eq!(sorted, expected);
        // The same page otherwise.
        let strip = |page: &str| {
            page.lines()
                .filter(|l| !l.starts_with("<link rel=\"modulepreload\""))
                .collect::<Vec<_>>()
                .join("\n")
        };
        assert_eq!(strip(home), strip(room));
    }

    /// Each page preloads the table of the language it will pick: the one chosen on this browser
    /// (its cookie), else the browser's first language the page speaks, else English.
    #[test]
    fn a_page_preloads_only_the_table_of_its_language() {
        let picked = |pairs: &[(&'static str, &str)]| {
            let mut headers = HeaderMap::new();
            for (name, value) in pairs {
                headers.append(
                    header::HeaderName::from_static(name),
                    HeaderValue::from_str(value).unwrap(),
                );
            }
            LANGUAGES[page_language(&headers)].0
        };
        assert_eq!(picked(&[]), "en");
        assert_eq!(
            picked(&[("accept-language", "ne-NP,ne;q=0.9,en;q=0.8")]),
            "ne"
        );
        assert_eq!(picked(&[("accept-language", "hi-IN, NE")]), "ne");
        assert_eq!(picked(&[("accept-language", "en-GB,ne")]), "en");
        assert_eq!(picked(&[("accept-language", "ne;q=0, en")]), "en");
        assert_eq!(picked(&[("accept-language", "fr")]), "en");
        let nepali_phone = ("accept-language", "ne-NP");
        assert_eq!(
            picked(&[nepali_phone, ("cookie", "a=b; dhumbal.lang=en")]),
            "en"
        );
        assert_eq!(
            picked(&[("cookie", "dhumbal.lang=ne"), ("accept-language", "en")]),
            "ne"
        );
        assert_eq!(picked(&[nepali_phone, ("cookie", "dhumbal.lang=xx")]), "ne");
        for page in PAGES {
            for (language, (_, table)) in LANGUAGES.iter().enumerate() {
                let i = variant(page, language);
                assert_eq!(variant_of(i), (page, language));
                let served = std::str::from_utf8(&built().bodies[i]).unwrap();
                let preloaded = preloads(served);
                assert!(preloaded.contains(table), "{page} {table}: {preloaded:?}");
                for (_, other) in LANGUAGES.iter().filter(|(_, t)| t != table) {
                    assert!(!preloaded.contains(other), "{page} {other}: {preloaded:?}");
                }
            }
        }
        assert_eq!(variant(WORKER, 1), WORKER);
    }

    #[test]
    fn the_lazy_imports_are_read_from_code_and_not_from_types_or_comments() {
        let text: &'static str = "const a = import(\"./a.js\");\n  Promise.all([import(\"./b.js\"), import(\"./c.js\")]);\n/** @returns {import(\"./d.js\").D} */\n// import(\"./e.js\")\n * import(\"./f.js\")\nimport { g } from \"./g.js\";\n";
        assert_eq!(lazy_imports(text), ["a.js", "b.js", "c.js"]);
        assert_eq!(imports(text), ["g.js"]);
    }

    /// The presets are in the page, as `GET /api/presets` answers them, in a data block the CSP
    /// lets be (it runs nothing); a `<` could not close the block.
    #[test]
    fn the_index_and_room_pages_carry_the_presets() {
        let json = serde_json::to_string(&dhumbal_protocol::Presets::from_engine()).unwrap();
        for page in [INDEX, ROOM] {
            let page = std::str::from_utf8(&built().bodies[page]).unwrap();
            let start = "<script id=\"presets\" type=\"application/json\">";
            let at = page.find(start).unwrap() + start.len();
            let block = &page[at..at + page[at..].find("</script>").unwrap()];
            let read: serde_json::Value = serde_json::from_str(block).unwrap();
            assert_eq!(
                read,
                serde_json::from_str::<serde_json::Value>(&json).unwrap()
            );
            assert!(read["presets"]["standard"].is_object(), "{read}");
            assert!(!block.contains('<'));
        }
        assert!(with_presets(&format!("a{PRESETS_BLOCK}b")).starts_with("a<script id=\"presets\""));
        assert_eq!(with_presets("no block"), "no block");
    }

    #[test]
    fn the_imports_are_read_from_every_form_the_files_use() {
        let text: &'static str = "import { a } from \"./a.js\";\nimport {\n  b,\n} from \"./b.js\";\nimport \"./c.js\";\n/** @param {import(\"./d.js\").D} d */\n";
        assert_eq!(imports(text), ["a.js", "b.js", "c.js"]);
    }

    #[test]
    fn the_worker_keeps_this_versions_offline_page_and_its_files_only() {
        let worker = std::str::from_utf8(&built().bodies[WORKER]).unwrap();
        let line = worker
            .lines()
            .find(|l| l.starts_with("const BUILD ="))
            .unwrap();
        let build: serde_json::Value = serde_json::from_str(
            line.trim_start_matches("const BUILD =")
                .trim_end_matches(';'),
        )
        .unwrap();
        assert_eq!(build["version"], version());
        assert_eq!(build["offline"], OFFLINE_PATH);
        let keep: Vec<&str> = build["keep"]
            .as_array()
            .unwrap()
            .iter()
            .map(|v| v.as_str().unwrap())
            .collect();
        assert_eq!(keep[0], OFFLINE_PATH);
        for name in [
            "offline.js",
            "i18n.js",
            "messages-en.js",
            "messages-ne.js",
            "storage.js",
            "style.css",
            "icon.svg",
        ] {
            assert!(
                keep.contains(&asset_path(name).as_str()),
                "{name}: {keep:?}"
            );
        }
        for path in &keep[1..] {
            assert!(
                path.starts_with(&format!("/assets/{}/", version())),
                "{path}"
            );
        }
        assert!(
            !keep
                .iter()
                .any(|p| p.contains("/api") || p.contains("/ws") || p.contains("/r/"))
        );
    }

    #[test]
    fn the_page_may_open_its_own_websocket_and_nothing_else() {
        let mut headers = HeaderMap::new();
        headers.insert(header::HOST, HeaderValue::from_static("127.0.0.1:8080"));
        let policy = content_security_policy(&headers);
        let policy = policy.to_str().unwrap();
        assert!(
            policy.contains("connect-src 'self' ws://127.0.0.1:8080 wss://127.0.0.1:8080; worker-src 'self'; manifest-src 'self';"),
            "{policy}"
        );
        assert!(policy.contains("script-src 'self';"));
        // A Host that is not a plain host name adds nothing to the policy.
        headers.insert(header::HOST, HeaderValue::from_static("evil; script-src *"));
        let policy = content_security_policy(&headers);
        assert!(policy.to_str().unwrap().contains("connect-src 'self';"));
    }
}
