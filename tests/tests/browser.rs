//! Browser tests of the web client: a real server on a loopback port, and Debian's Chromium
//! (`/usr/bin/chromium`) driven headless through its `chromedriver` over WebDriver (fantoccini).
//!
//! - One player creates a room, plays a whole round against three bots through the page (taking
//!   from the pile, a barred card, a refused group, a drag onto the pile, marked throws) to the
//!   score dialog, checks its rows and chart, and presses Next round.
//! - Two browsers join one room as two people (the host sets a bot, the guest has no host
//!   controls); each sees only its own hand and what the other did, playing by keyboard and
//!   mouse; a third browser finds the table full and watches, seeing no hand.
//! - A reload keeps the seat and the hand; a dropped connection shows "Reconnecting…" and comes
//!   back by itself; the seat opened in a second tab moves there, and the first tab says so and
//!   can take it back.
//! - SIGTERM mid-match, with rooms kept in SQLite: the real server binary stops, the page says it
//!   is reconnecting, and once the server is started again on the same address and data
//!   directory the page comes back by itself to the same seat and hand and finishes the match.
//! - A one-round match (from a fixed deck) ends with the standings, and Rematch deals again.
//! - A throw-then-draw table: throw first, then pick up the previous single throw.
//! - The settings page, How to play with the table's own settings, and the page's group rules
//!   against the engine's on thousands of groups.
//! - Without a browser: the page at `/` and `/r/{code}`, the replay page at `/replay`, and every
//!   file they load.
//! - Provably fair deals: the page's `fair.js` gives every known-answer vector of
//!   `docs/fairness.md`; after a whole one-round match against three bots, Verify the deals says
//!   the deal checks out, the hand history from the endpoint passes `dhumbal-server verify` (and
//!   fails it, and the page's check, with one card changed); the replay page steps through a
//!   history from a file on a phone (and from the server), every hand face up.
//!
//! - Table chat and reactions: a line with markup in it stays text on both pages (one a phone,
//!   whose folded panel counts it unread and covers neither the hand nor the actions); a reaction
//!   shows beside the seat that sent it and goes; a reload shows the chat again (from
//!   `welcome`). Hide chat hides every line and count (remembered across a reload) while
//!   reactions still show; the host mutes a person from the lobby's seat list (her input is
//!   disabled and she is told why) and unmutes her from the table's chat panel; a spectator
//!   reads and reacts (beside the chat) but has no input.
//!
//! Every test also fails on any error in the browser's console (the restart test passes over
//! only Chromium's own lines for the page's WebSocket attempts refused while the server is
//! down). Screenshots go to `<target>/screenshots/` (the path is printed). Without Chromium the
//! tests print why and pass, unless `CI=true`, where a missing browser is a failure. They bind
//! loopback only and run one at a time.

use std::collections::BTreeSet;
use std::io::Write as _;
use std::net::SocketAddr;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use dhumbal_engine::{
    Card, CourtValues, Preset, Rounds, Settings, classify, full_deck, hand_total,
};
use dhumbal_protocol::{CreateRoom, CreatedRoom};
use dhumbal_tests::TestServer;
use dhumbal_tests::process::ServerProcess;
use fantoccini::actions::{InputSource, MOUSE_BUTTON_LEFT, MouseActions, PointerAction};
use fantoccini::error::CmdError;
use fantoccini::wd::WebDriverCompatibleCommand;
use fantoccini::{Client, ClientBuilder, Locator};
use serde::Deserialize;
use serde_json::{Value, json};

/// Where Debian puts the browser.
const CHROMIUM: &str = "/usr/bin/chromium";
/// Where Debian puts its WebDriver.
const CHROMEDRIVER: &str = "/usr/bin/chromedriver";
/// A phone's viewport, the narrowest the page is made for.
const PHONE: (u32, u32) = (360, 740);
/// A laptop's viewport.
const DESKTOP: (u32, u32) = (1280, 860);
/// How long any one wait may last before the test fails (a guard, not a measurement).
const WAIT: Duration = Duration::from_secs(30);

/// Browser tests run one at a time: each starts a whole browser on a small machine.
static ONE_AT_A_TIME: tokio::sync::Mutex<()> = tokio::sync::Mutex::const_new(());

/// The browser and its driver, or `None` (with the reason printed) when they are not installed.
/// Under `CI=true` a missing browser fails the test instead.
fn browser_tools() -> Option<(PathBuf, PathBuf)> {
    let chromium = PathBuf::from(CHROMIUM);
    let driver = PathBuf::from(CHROMEDRIVER);
    let missing: Vec<&Path> = [chromium.as_path(), driver.as_path()]
        .into_iter()
        .filter(|p| !p.exists())
        .collect();
    if missing.is_empty() {
        return Some((chromium, driver));
    }
    let reason = format!(
        "{} not installed (apt-get install chromium chromium-driver)",
        missing
            .iter()
            .map(|p| p.display().to_string())
            .collect::<Vec<_>>()
            .join(" and ")
    );
    assert!(
        std::env::var("CI").as_deref() != Ok("true"),
        "{reason}: with CI=true the browser tests must run"
    );
    // Straight to stderr, past the test harness's capture, so the skip is seen.
    let _ = writeln!(std::io::stderr(), "skipping browser test: {reason}");
    None
}

/// The folder screenshots are written to, created and printed on first use.
fn screenshot_dir() -> PathBuf {
    let dir = Path::new(env!("CARGO_TARGET_TMPDIR"))
        .parent()
        .map(|target| target.join("screenshots"))
        .unwrap_or_else(|| PathBuf::from("screenshots"));
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

/// A port nobody listens on right now, for chromedriver.
fn free_port() -> u16 {
    std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port()
}

/// A temporary folder removed on drop (a browser profile).
struct TempDir(PathBuf);

impl TempDir {
    fn new(label: &str) -> TempDir {
        let path = std::env::temp_dir().join(format!(
            "dhumbal-browser-{}-{label}-{}",
            std::process::id(),
            free_port()
        ));
        std::fs::create_dir_all(&path).unwrap();
        TempDir(path)
    }
}

impl Drop for TempDir {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

/// A chromedriver process on a loopback port, killed on drop.
struct Driver {
    child: Child,
    port: u16,
    url: String,
    chromium: PathBuf,
    profiles: Vec<TempDir>,
}

impl Driver {
    async fn start((chromium, driver): (PathBuf, PathBuf)) -> Driver {
        let port = free_port();
        let child = Command::new(driver)
            .arg(format!("--port={port}"))
            .arg("--log-level=WARNING")
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .expect("chromedriver starts");
        let url = format!("http://127.0.0.1:{port}");
        let started = Instant::now();
        while tokio::net::TcpStream::connect(("127.0.0.1", port))
            .await
            .is_err()
        {
            assert!(started.elapsed() < WAIT, "chromedriver did not listen");
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
        Driver {
            child,
            port,
            url,
            chromium,
            profiles: Vec::new(),
        }
    }

    /// A new headless browser window of this size, with its own fresh profile.
    async fn browser(&mut self, (width, height): (u32, u32)) -> Browser {
        let profile = TempDir::new("profile");
        let args = vec![
            "--headless".to_owned(),
            "--no-sandbox".to_owned(),
            "--disable-gpu".to_owned(),
            "--disable-quic".to_owned(),
            "--no-first-run".to_owned(),
            "--disable-background-networking".to_owned(),
            "--disable-component-update".to_owned(),
            "--disable-sync".to_owned(),
            "--disable-dev-shm-usage".to_owned(),
            "--hide-scrollbars".to_owned(),
            format!("--window-size={width},{height}"),
            format!("--user-data-dir={}", profile.0.display()),
        ];
        self.profiles.push(profile);
        let mut options = json!({ "binary": self.chromium, "args": args });
        if width < 500 {
            // A headless window is never narrower than 500 px; emulate the phone's viewport.
            options["mobileEmulation"] = json!({
                "deviceMetrics": { "width": width, "height": height, "pixelRatio": 1.0, "touch": false }
            });
        }
        let caps = json!({
            "browserName": "chrome",
            "goog:chromeOptions": options,
            "goog:loggingPrefs": { "browser": "ALL" },
        });
        let Value::Object(caps) = caps else {
            unreachable!()
        };
        let connector = hyper_util::client::legacy::connect::HttpConnector::new();
        let client = ClientBuilder::new(connector)
            .capabilities(caps)
            .connect(&self.url)
            .await
            .expect("a browser session starts");
        Browser { client }
    }
}

impl Drop for Driver {
    /// Asks chromedriver to shut down, which quits every browser it started (also when a test
    /// failed before closing its sessions), then makes sure it is gone.
    fn drop(&mut self) {
        let shutdown = std::net::TcpStream::connect(("127.0.0.1", self.port)).and_then(|mut s| {
            s.set_read_timeout(Some(Duration::from_secs(10)))?;
            s.write_all(b"GET /shutdown HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n")?;
            std::io::copy(&mut s, &mut std::io::sink())
        });
        let asked = Instant::now();
        while shutdown.is_ok() && asked.elapsed() < Duration::from_secs(10) {
            if let Ok(Some(_)) = self.child.try_wait() {
                return;
            }
            std::thread::sleep(Duration::from_millis(50));
        }
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// chromedriver's command for the browser's console log since the last call.
#[derive(Debug)]
struct BrowserLog;

impl WebDriverCompatibleCommand for BrowserLog {
    fn endpoint(
        &self,
        base_url: &url::Url,
        session_id: Option<&str>,
    ) -> Result<url::Url, url::ParseError> {
        base_url.join(&format!(
            "session/{}/se/log",
            session_id.unwrap_or_default()
        ))
    }

    fn method_and_body(&self, _request_url: &url::Url) -> (http::Method, Option<String>) {
        (http::Method::POST, Some(r#"{"type":"browser"}"#.to_owned()))
    }
}

/// A Chrome DevTools command, through chromedriver.
#[derive(Debug)]
struct Cdp {
    cmd: &'static str,
    params: Value,
}

impl WebDriverCompatibleCommand for Cdp {
    fn endpoint(
        &self,
        base_url: &url::Url,
        session_id: Option<&str>,
    ) -> Result<url::Url, url::ParseError> {
        base_url.join(&format!(
            "session/{}/goog/cdp/execute",
            session_id.unwrap_or_default()
        ))
    }

    fn method_and_body(&self, _request_url: &url::Url) -> (http::Method, Option<String>) {
        let body = json!({ "cmd": self.cmd, "params": self.params });
        (http::Method::POST, Some(body.to_string()))
    }
}

/// Run before the page's own scripts: every WebSocket the page opens is kept in
/// `window.__sockets`, so a test can drop the connection as a network would.
const KEEP_SOCKETS: &str = "window.__sockets = []; \
    window.WebSocket = class extends window.WebSocket { \
      constructor(...args) { super(...args); window.__sockets.push(this); } };";

/// Run before the page's own scripts: the close code of every WebSocket the page opened is kept
/// in `window.__closes`, in order.
const RECORD_CLOSES: &str = "window.__closes = []; \
    window.WebSocket = class extends window.WebSocket { \
      constructor(...args) { super(...args); \
        this.addEventListener('close', (e) => window.__closes.push(e.code)); } };";

/// What the page shows, read in one round trip (see [`SNAPSHOT`]).
#[derive(Debug, Deserialize)]
#[serde(rename_all = "camelCase")]
struct Snapshot {
    screen: String,
    phase: String,
    round: u32,
    my_turn: bool,
    may_draw: bool,
    may_throw: bool,
    hand: Vec<String>,
    marked: Vec<String>,
    barred: Option<String>,
    takeable: Vec<String>,
    status: String,
    call: Option<String>,
    throw_text: String,
    throw_enabled: bool,
    score_open: bool,
    banner: bool,
    banner_text: String,
    toast: String,
    log: String,
}

/// The page's state as the player sees it: which screen, the table's data attributes, the hand
/// and its marks, the buttons, the dialog, the banner and the last notice.
const SNAPSHOT: &str = r#"
const q = (s) => document.querySelector(s);
const all = (s) => [...document.querySelectorAll(s)].map((e) => e.dataset.card);
const t = q('#table');
const call = q('#call');
const th = q('#throw');
const barred = q('#hand .card.barred');
return {
  screen: document.body.dataset.screen || '',
  phase: t.dataset.phase || '',
  round: Number(t.dataset.round || 0),
  myTurn: t.dataset.myTurn === 'true',
  mayDraw: t.dataset.mayDraw === 'true',
  mayThrow: t.dataset.mayThrow === 'true',
  hand: all('#hand .card'),
  marked: all('#hand .card.marked'),
  barred: barred ? barred.dataset.card : null,
  takeable: all('#pile .card.takeable'),
  status: q('#status') ? q('#status').textContent : '',
  call: call && !call.hidden ? call.textContent : null,
  throwText: th ? th.textContent : '',
  throwEnabled: th ? !th.disabled : false,
  scoreOpen: q('#score-dialog').open,
  banner: !q('#banner').hidden,
  bannerText: q('#banner').textContent,
  toast: q('#toast').textContent,
  log: q('#log') ? q('#log').textContent : '',
};
"#;

/// One headless browser window.
struct Browser {
    client: Client,
}

impl Browser {
    async fn goto(&self, url: &str) {
        self.client.goto(url).await.unwrap();
    }

    /// Opens a room's invite link and joins from its form as `name`, pressing `button`
    /// (`#join-sit` or `#join-watch`), then waits for the lobby.
    async fn join_from_link(&self, link: &str, name: &str, button: &str) {
        self.goto(link).await;
        self.wait_until("the join form", |s| s.screen == "join")
            .await;
        self.type_into("#join-name", name).await;
        self.click(button).await;
        self.wait_until("the lobby", |s| s.screen == "lobby").await;
    }

    /// Does what the page that created `room` does: keeps its host secret (as Asha's), on the
    /// server's origin, so that opening the room's link makes this page the host.
    async fn keep_host_secret(&self, addr: SocketAddr, room: &CreatedRoom) {
        self.goto(&format!("http://{addr}/")).await;
        self.client
            .execute(
                "localStorage.setItem('dhumbal.room.' + arguments[0], JSON.stringify({ name: 'Asha', host_secret: arguments[1], token: null }));",
                vec![json!(room.code), json!(room.host_secret)],
            )
            .await
            .unwrap();
    }

    async fn snapshot(&self) -> Snapshot {
        let value = self.client.execute(SNAPSHOT, vec![]).await.unwrap();
        serde_json::from_value(value).unwrap()
    }

    /// Waits until the page's state satisfies `done`, and returns that state.
    async fn wait_until(&self, what: &str, done: impl Fn(&Snapshot) -> bool) -> Snapshot {
        let started = Instant::now();
        loop {
            let snapshot = self.snapshot().await;
            if done(&snapshot) {
                return snapshot;
            }
            assert!(
                started.elapsed() < WAIT,
                "waited too long for {what}; the page shows {snapshot:#?}"
            );
            tokio::time::sleep(Duration::from_millis(25)).await;
        }
    }

    async fn find(&self, css: &str) -> fantoccini::elements::Element {
        self.client
            .wait()
            .at_most(WAIT)
            .for_element(Locator::Css(css))
            .await
            .unwrap_or_else(|e| panic!("no {css} on the page: {e}"))
    }

    async fn click(&self, css: &str) {
        self.find(css).await.click().await.unwrap();
    }

    async fn type_into(&self, css: &str, text: &str) {
        let input = self.find(css).await;
        input.clear().await.unwrap();
        input.send_keys(text).await.unwrap();
    }

    async fn text(&self, css: &str) -> String {
        self.find(css).await.text().await.unwrap()
    }

    async fn eval(&self, script: &str) -> Value {
        self.client.execute(script, vec![]).await.unwrap()
    }

    /// Fails if the page is wider than the window (a phone would have to scroll sideways).
    async fn assert_fits_the_width(&self, what: &str) {
        let widths = self
            .eval("const d = document.documentElement; return [d.scrollWidth, d.clientWidth];")
            .await;
        assert!(
            widths[0].as_u64() <= widths[1].as_u64(),
            "{what} is wider than the window: {widths}"
        );
    }

    /// Types keys into the page, as a person at a keyboard would.
    async fn keys(&self, text: &str) {
        self.find("body").await.send_keys(text).await.unwrap();
    }

    /// Clicks a card of the hand (a tap: mark or unmark).
    async fn tap(&self, card: &str) {
        self.click(&format!("#hand .card[data-card='{card}']"))
            .await;
    }

    /// Drags a card of the hand onto the pile with the mouse.
    async fn drag_to_pile(&self, card: &str) {
        let from = self.find(&format!("#hand .card[data-card='{card}']")).await;
        let pile = self.find("#pile").await;
        let mouse = MouseActions::new("mouse".into())
            .then(PointerAction::MoveToElement {
                element: from,
                duration: None,
                x: 0.0,
                y: 0.0,
            })
            .then(PointerAction::Down {
                button: MOUSE_BUTTON_LEFT,
            })
            .then(PointerAction::MoveBy {
                duration: Some(Duration::from_millis(60)),
                x: 0.0,
                y: -30.0,
            })
            .then(PointerAction::MoveToElement {
                element: pile,
                duration: Some(Duration::from_millis(150)),
                x: 0.0,
                y: 0.0,
            })
            .then(PointerAction::Up {
                button: MOUSE_BUTTON_LEFT,
            });
        self.client.perform_actions(mouse).await.unwrap();
        self.client.release_actions().await.unwrap();
    }

    /// Writes a screenshot to the screenshot folder and prints where.
    async fn screenshot(&self, name: &str) {
        let png = self.client.screenshot().await.unwrap();
        let path = screenshot_dir().join(format!("{name}.png"));
        std::fs::write(&path, png).unwrap();
        let _ = writeln!(std::io::stderr(), "screenshot: {}", path.display());
    }

    /// Fails on any error the page logged to the console (or any failed load).
    async fn assert_no_console_errors(&self) {
        self.assert_no_console_errors_but(|_| false).await;
    }

    /// Like [`Browser::assert_no_console_errors`], but passes over the errors whose message
    /// `expected` accepts, and returns those messages.
    async fn assert_no_console_errors_but(&self, expected: impl Fn(&str) -> bool) -> Vec<String> {
        let entries = match self.client.issue_cmd(BrowserLog).await {
            Ok(entries) => entries,
            Err(CmdError::Standard(e)) => panic!("the browser log is unavailable: {e}"),
            Err(e) => panic!("the browser log is unavailable: {e}"),
        };
        let mut passed = Vec::new();
        let mut errors: Vec<&Value> = Vec::new();
        for entry in entries.as_array().into_iter().flatten() {
            if entry["level"] != "SEVERE" {
                continue;
            }
            match entry["message"].as_str() {
                Some(message) if expected(message) => passed.push(message.to_owned()),
                _ => errors.push(entry),
            }
        }
        assert!(errors.is_empty(), "console errors: {errors:#?}");
        passed
    }

    /// Waits until `script` (a function body) returns `true` on the page; on timeout fails with
    /// what `script` returned last.
    async fn until(&self, what: &str, script: &str) {
        let started = Instant::now();
        loop {
            let value = self.eval(script).await;
            if value == json!(true) {
                return;
            }
            assert!(
                started.elapsed() < WAIT,
                "waited too long for {what}; the page answers {value}"
            );
            tokio::time::sleep(Duration::from_millis(25)).await;
        }
    }

    async fn close(self) {
        self.client.close().await.unwrap();
    }
}

fn cards(texts: &[String]) -> Vec<Card> {
    texts.iter().map(|t| t.parse().unwrap()).collect()
}

fn value(card: &str) -> u32 {
    card.parse::<Card>().unwrap().value(CourtValues::Tens)
}

/// A number as the score rows print it: `+38`, `−12` (a minus sign), `0`.
fn score_number(text: &str) -> i64 {
    let text = text.trim().replace('\u{2212}', "-").replace('+', "");
    text.parse()
        .unwrap_or_else(|_| panic!("not a score: {text:?}"))
}

/// The files a page or script names with `"/assets/…"` or `"./…"`.
fn referenced_assets(text: &str) -> Vec<String> {
    let mut names = Vec::new();
    for piece in text.split('"').skip(1).step_by(2) {
        let name = piece
            .strip_prefix("/assets/")
            .or_else(|| piece.strip_prefix("./"));
        if let Some(name) = name.filter(|n| !n.contains('/') && n.contains('.')) {
            names.push(name.to_owned());
        }
    }
    names
}

#[tokio::test]
async fn the_page_is_served_at_the_root_and_at_room_links_with_every_file_it_loads() {
    let server = TestServer::start().await;
    let (status, index) = dhumbal_tests::http::get(server.addr, "/").await;
    assert_eq!(status, 200);
    assert!(index.contains("<title>Dhumbal</title>"), "{index}");
    let (status, room_page) = dhumbal_tests::http::get(server.addr, "/r/ABCDEFGHJK").await;
    assert_eq!((status, room_page.as_str()), (200, index.as_str()));
    let (status, replay) = dhumbal_tests::http::get(server.addr, "/replay").await;
    assert_eq!(status, 200);
    assert!(replay.contains("<title>Dhumbal replay</title>"), "{replay}");
    // Every file the pages load, and every module those load, is there.
    let mut queue = referenced_assets(&index);
    queue.extend(referenced_assets(&replay));
    let mut seen = BTreeSet::new();
    while let Some(name) = queue.pop() {
        if !seen.insert(name.clone()) {
            continue;
        }
        let (status, body) =
            dhumbal_tests::http::get(server.addr, &format!("/assets/{name}")).await;
        assert_eq!(status, 200, "/assets/{name}");
        if name.ends_with(".js") {
            queue.extend(referenced_assets(&body));
        }
    }
    for expected in [
        "app.js",
        "style.css",
        "icon.svg",
        "cards.js",
        "table.js",
        "net.js",
        "fair.js",
        "replay.js",
        "score.js",
        "chat.js",
        "dom.js",
    ] {
        assert!(
            seen.contains(expected),
            "{expected} is not loaded: {seen:?}"
        );
    }
    let (status, _) = dhumbal_tests::http::get(server.addr, "/assets/nothing.js").await;
    assert_eq!(status, 404);
}

/// Creates a room from the home page as `name`, landing in its lobby; returns the invite link.
async fn create_room(b: &Browser, addr: SocketAddr, name: &str) -> String {
    b.goto(&format!("http://{addr}/")).await;
    create_room_here(b, addr, name).await
}

/// Creates a room from the home page already open, with the settings it shows.
async fn create_room_here(b: &Browser, addr: SocketAddr, name: &str) -> String {
    b.type_into("#home-name", name).await;
    b.click("#create").await;
    b.wait_until("the lobby", |s| s.screen == "lobby").await;
    let invite = b
        .find("#invite")
        .await
        .prop("value")
        .await
        .unwrap()
        .unwrap_or_default();
    assert!(
        invite.starts_with(&format!("http://{addr}/r/")),
        "invite link {invite}"
    );
    invite
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn one_player_plays_a_round_against_three_bots_to_the_score_dialog() {
    let Some(tools) = browser_tools() else {
        return;
    };
    let _one = ONE_AT_A_TIME.lock().await;
    let server = TestServer::start().await;
    let addr = server.addr;
    let mut driver = Driver::start(tools).await;
    let b = driver.browser(PHONE).await;

    create_room(&b, addr, "Asha").await;
    assert!(b.text("#lobby-seats").await.contains("Asha"));
    b.assert_fits_the_width("the lobby").await;
    b.screenshot("lobby-phone").await;
    b.click("#start").await;
    let first = b
        .wait_until("the table", |s| s.screen == "table" && s.round == 1)
        .await;
    assert_eq!(first.hand.len(), 5, "five cards dealt: {first:?}");
    let seats = b.text("#seats").await;
    assert_eq!(
        seats.matches("5 cards").count(),
        3,
        "three other seats: {seats}"
    );

    let mut took_from_pile = false;
    let mut refused_a_group = false;
    let mut dragged = false;
    let mut marked_throws = 0;
    let mut shot_table = false;
    let started = Instant::now();
    let end = loop {
        assert!(
            started.elapsed() < Duration::from_secs(300),
            "the round never ended"
        );
        let s = b.snapshot().await;
        if s.score_open {
            break s;
        }
        if !s.my_turn {
            tokio::time::sleep(Duration::from_millis(20)).await;
            continue;
        }
        let total: u32 = s.hand.iter().map(|c| value(c)).sum();
        assert!(
            s.status.contains(&format!("Holding {total}")) && s.status.contains("call at 5"),
            "status line: {}",
            s.status
        );
        if let Some(call) = &s.call {
            assert_eq!(call, &format!("Call on {total}"));
            assert!(total <= 5, "Call offered on {total}");
            if dragged {
                b.click("#call").await;
                b.wait_until("the show", |s| s.score_open).await;
                continue;
            }
        }
        if s.may_draw {
            if !took_from_pile {
                assert_eq!(s.takeable.len(), 1, "the pile's top is takeable: {s:?}");
                let card = s.takeable[0].clone();
                b.click("#pile .card.takeable").await;
                let after = b.wait_until("the throw", |s| s.may_throw).await;
                assert_eq!(
                    after.barred.as_ref(),
                    Some(&card),
                    "the taken card is barred"
                );
                b.tap(&card).await;
                let refused = b
                    .wait_until("the barred notice", |s| s.toast.contains("can't go back"))
                    .await;
                assert!(refused.marked.is_empty(), "a barred card cannot be marked");
                took_from_pile = true;
            } else {
                b.click("#stock").await;
                b.wait_until("the throw", |s| !s.may_draw).await;
            }
            continue;
        }
        if !s.may_throw {
            tokio::time::sleep(Duration::from_millis(20)).await;
            continue;
        }
        let usable: Vec<&String> = s
            .hand
            .iter()
            .filter(|c| Some(*c) != s.barred.as_ref())
            .collect();
        if !refused_a_group {
            let a = usable[0];
            let other = usable
                .iter()
                .find(|c| c.parse::<Card>().unwrap().rank() != a.parse::<Card>().unwrap().rank());
            if let Some(other) = other {
                b.tap(a).await;
                b.tap(other).await;
                let bad = b.snapshot().await;
                assert_eq!(bad.marked.len(), 2);
                assert!(!bad.throw_enabled, "two ranks are no group: {bad:?}");
                assert_eq!(bad.throw_text, format!("Throw {}", value(a) + value(other)));
                assert!(bad.status.contains("don't go together"));
                b.tap(a).await;
                b.tap(other).await;
                assert!(b.snapshot().await.marked.is_empty());
                refused_a_group = true;
            }
        }
        let heaviest = usable.iter().max_by_key(|c| value(c)).copied().unwrap();
        if !dragged {
            b.drag_to_pile(heaviest).await;
            dragged = true;
        } else {
            // The heaviest set if there is one, else the heaviest card.
            let mut group: Vec<&String> = vec![heaviest];
            for c in &usable {
                let rank = c.parse::<Card>().unwrap().rank();
                let set: Vec<&String> = usable
                    .iter()
                    .filter(|o| o.parse::<Card>().unwrap().rank() == rank)
                    .copied()
                    .collect();
                let worth = |g: &[&String]| g.iter().map(|c| value(c)).sum::<u32>();
                if set.len() > 1 && worth(&set) > worth(&group) {
                    group = set;
                }
            }
            for c in &group {
                b.tap(c).await;
            }
            let ready = b.snapshot().await;
            let worth: u32 = group.iter().map(|c| value(c)).sum();
            assert_eq!(ready.throw_text, format!("Throw {worth}"));
            assert!(ready.throw_enabled, "a legal group: {ready:?}");
            if !shot_table {
                b.assert_fits_the_width("the table").await;
                b.screenshot("table-phone").await;
                shot_table = true;
            }
            b.click("#throw").await;
            marked_throws += 1;
        }
        let thrown_from = s.hand.len();
        b.wait_until("the throw to land", |s| {
            s.score_open || !s.may_throw || s.hand.len() < thrown_from
        })
        .await;
    };
    assert!(
        took_from_pile && refused_a_group && dragged,
        "every gesture was tried"
    );
    assert_eq!(end.phase, "round_over");

    // The score dialog: every hand face up, the four rows, the chart.
    let table: Value = b
        .eval(
            r#"return [...document.querySelectorAll('.score-table tr')].map((tr) => ({
                 cls: tr.className,
                 cells: [...tr.children].map((c) => c.textContent),
                 hands: [...tr.querySelectorAll('.mini-hand')].map((h) =>
                   [...h.querySelectorAll('.card')].map((c) => c.dataset.card)),
               }));"#,
        )
        .await;
    let rows = table.as_array().unwrap();
    let row = |cls: &str| -> Vec<String> {
        let r = rows
            .iter()
            .find(|r| r["cls"] == cls)
            .unwrap_or_else(|| panic!("no {cls} row"));
        r["cells"].as_array().unwrap()[1..]
            .iter()
            .map(|c| c.as_str().unwrap().to_owned())
            .collect()
    };
    let hands_row = rows.iter().find(|r| r["cls"] == "hands-row").unwrap();
    let hands: Vec<Vec<String>> = serde_json::from_value(hands_row["hands"].clone()).unwrap();
    assert_eq!(hands.len(), 4);
    let hand = row("row-hand");
    for (cards, shown) in hands.iter().zip(&hand) {
        let cards = self::cards(cards);
        assert_eq!(
            hand_total(&cards, CourtValues::Tens).to_string(),
            *shown,
            "the Hand row adds up the cards shown"
        );
    }
    assert_eq!(row("row-took").len(), 4);
    let paid: Vec<i64> = row("row-paid").iter().map(|t| score_number(t)).collect();
    let totals: Vec<i64> = row("row-total").iter().map(|t| score_number(t)).collect();
    assert_eq!(paid.iter().sum::<i64>(), 0, "the Paid row sums to zero");
    assert_eq!(paid, totals, "after round 1 the Total is the Paid row");
    let lines = b
        .eval("return document.querySelectorAll('#score-dialog svg.chart polyline').length;")
        .await;
    assert_eq!(lines, json!(4), "one line per seat in the chart");
    let ending = b.text("#score-dialog .ending").await;
    assert!(
        ending.contains("called") || ending.contains("Nobody called"),
        "{ending}"
    );
    b.assert_fits_the_width("the score dialog").await;
    let inner = b
        .eval("const w = document.querySelector('.score-wrap'); return [w.scrollWidth, w.clientWidth];")
        .await;
    assert!(
        inner[0].as_u64() <= inner[1].as_u64(),
        "every seat's column fits the phone: {inner}"
    );
    b.screenshot("score-dialog-phone").await;

    b.click("#next-round").await;
    let next = b
        .wait_until("round 2", |s| !s.score_open && s.round == 2)
        .await;
    assert_eq!(next.hand.len(), 5);
    let _ = writeln!(
        std::io::stderr(),
        "played round 1 through the page: {marked_throws} marked throws, ending: {ending}"
    );
    b.assert_no_console_errors().await;
    b.close().await;
}

/// A name written as markup is shown as text, never run; and a person the host removes sees why
/// on their own page, while the host may let them back.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_name_with_markup_is_shown_as_text() {
    let Some(tools) = browser_tools() else {
        return;
    };
    let _one = ONE_AT_A_TIME.lock().await;
    let server = TestServer::start().await;
    let addr = server.addr;
    let mut driver = Driver::start(tools).await;
    let host = driver.browser(DESKTOP).await;
    let guest = driver.browser(PHONE).await;
    let markup = "<img src=x onerror=f()>";

    let invite = create_room(&host, addr, "Asha").await;
    guest.goto(&invite).await;
    guest
        .wait_until("the join form", |s| s.screen == "join")
        .await;
    guest.type_into("#join-name", markup).await;
    guest.click("#join-sit").await;
    guest.wait_until("the lobby", |s| s.screen == "lobby").await;
    let started = Instant::now();
    while !host.text("#lobby-seats").await.contains(markup) {
        assert!(
            started.elapsed() < WAIT,
            "the host never saw the name as text"
        );
        tokio::time::sleep(Duration::from_millis(25)).await;
    }
    for page in [&host, &guest] {
        let images = page
            .eval(
                "return document.querySelectorAll('#lobby-seats img, #lobby-seats b img').length;",
            )
            .await;
        assert_eq!(images, json!(0), "the name became an element");
    }

    // The host removes the guest: the guest's page says why and stays away.
    host.click(".lobby-seat[data-seat='1'] button").await;
    guest
        .wait_until("the removed page", |s| s.screen == "gone")
        .await;
    assert!(
        guest.text("#gone-why").await.contains("removed you"),
        "{}",
        guest.text("#gone-why").await
    );
    let started = Instant::now();
    while !host.text("#lobby-removed").await.contains(markup) {
        assert!(
            started.elapsed() < WAIT,
            "the host never saw the removed list"
        );
        tokio::time::sleep(Duration::from_millis(25)).await;
    }
    host.click("#lobby-removed button").await;
    let started = Instant::now();
    while host
        .find("#lobby-removed")
        .await
        .is_displayed()
        .await
        .unwrap()
    {
        assert!(started.elapsed() < WAIT, "the removed list never emptied");
        tokio::time::sleep(Duration::from_millis(25)).await;
    }
    host.assert_no_console_errors().await;
    guest.assert_no_console_errors().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn two_people_in_one_room_each_see_only_their_own_hand_and_a_third_watches() {
    let Some(tools) = browser_tools() else {
        return;
    };
    let _one = ONE_AT_A_TIME.lock().await;
    let server = TestServer::start().await;
    let addr = server.addr;
    let mut driver = Driver::start(tools).await;
    let asha = driver.browser(DESKTOP).await;
    let bina = driver.browser(PHONE).await;

    let invite = create_room(&asha, addr, "Asha").await;
    bina.goto(&invite).await;
    bina.wait_until("the join form", |s| s.screen == "join")
        .await;
    bina.assert_fits_the_width("the join form").await;
    bina.type_into("#join-name", "Bina").await;
    bina.click("#join-sit").await;
    bina.wait_until("the lobby", |s| s.screen == "lobby").await;
    let started = Instant::now();
    while !asha.text("#lobby-seats").await.contains("Bina") {
        assert!(started.elapsed() < WAIT, "Asha never saw Bina sit down");
        tokio::time::sleep(Duration::from_millis(25)).await;
    }
    assert!(!bina.find("#start").await.is_displayed().await.unwrap());
    // The host puts a hard bot in seat 3; Bina, not the host, has no such controls.
    asha.find(".lobby-seat[data-seat='2'] select")
        .await
        .select_by_value("hard")
        .await
        .unwrap();
    asha.click(".lobby-seat[data-seat='2'] button").await;
    let started = Instant::now();
    while !bina.text("#lobby-seats").await.contains("bot \u{b7} hard") {
        assert!(started.elapsed() < WAIT, "Bina never saw the hard bot");
        tokio::time::sleep(Duration::from_millis(25)).await;
    }
    let controls = bina
        .eval(
            "return document.querySelectorAll('#lobby-seats button, #lobby-seats select').length;",
        )
        .await;
    assert_eq!(
        controls,
        json!(1),
        "only Bina's own \"Move here\" to the empty seat"
    );
    asha.screenshot("lobby-desktop").await;
    asha.click("#start").await;

    let a = asha
        .wait_until("the table", |s| s.screen == "table" && s.hand.len() == 5)
        .await;
    let b = bina
        .wait_until("the table", |s| s.screen == "table" && s.hand.len() == 5)
        .await;
    let mine: BTreeSet<&String> = a.hand.iter().collect();
    let theirs: BTreeSet<&String> = b.hand.iter().collect();
    assert!(mine.is_disjoint(&theirs), "{mine:?} and {theirs:?}");
    // Neither page holds the other's cards anywhere: not drawn, not hidden, not in an attribute.
    for (page, other) in [(&asha, &b.hand), (&bina, &a.hand)] {
        let source = page.client.source().await.unwrap();
        for card in other {
            assert!(
                !source.contains(&format!("data-card=\"{card}\"")),
                "{card} of another seat is in the page"
            );
        }
    }
    assert!(asha.text("#seats").await.contains("Bina"));
    assert!(asha.text("#seats").await.contains("bot \u{b7} hard"));
    assert!(bina.text("#seats").await.contains("Asha"));

    // Asha (seat 0) leads, with the keyboard alone: S draws from the stock, a digit marks the
    // card in that place, T throws. Bina sees it.
    assert!(a.my_turn && !b.my_turn);
    asha.keys("s").await;
    let a = asha.wait_until("the throw", |s| s.may_throw).await;
    assert_eq!(a.hand.len(), 6);
    let (place, heaviest) = a
        .hand
        .iter()
        .enumerate()
        .max_by_key(|(_, c)| value(c))
        .map(|(i, c)| (i, c.clone()))
        .unwrap();
    asha.keys(&(place + 1).to_string()).await;
    let a = asha.snapshot().await;
    assert_eq!(a.marked, vec![heaviest.clone()]);
    assert_eq!(a.throw_text, format!("Throw {}", value(&heaviest)));
    asha.keys("t").await;
    let label = bina
        .eval(&format!(
            "return import('/assets/cards.js').then((m) => m.cardLabel('{heaviest}'));"
        ))
        .await;
    let label = label.as_str().unwrap().to_owned();
    let b = bina
        .wait_until("Asha's throw", |s| {
            s.my_turn && s.log.contains(&format!("Asha threw {label}."))
        })
        .await;
    // Bina takes it from the pile, and Asha's log says so.
    assert_eq!(b.takeable, vec![heaviest.clone()]);
    bina.click("#pile .card.takeable").await;
    asha.wait_until("Bina's pick-up", |s| {
        s.log.contains(&format!("Bina took {label} from the pile."))
    })
    .await;
    let b = bina.wait_until("Bina's throw", |s| s.may_throw).await;
    assert_eq!(b.barred.as_ref(), Some(&heaviest));
    // Bina marks a card with the keyboard: Space on the focused card, and Enter again unmarks;
    // the focus stays on that card through the redraws.
    let card = b.hand.iter().find(|c| **c != heaviest).unwrap().clone();
    let focused = "return document.activeElement.dataset.card || null;";
    bina.find(&format!("#hand .card[data-card='{card}']"))
        .await
        .send_keys(" ")
        .await
        .unwrap();
    assert_eq!(bina.snapshot().await.marked, vec![card.clone()]);
    assert_eq!(bina.eval(focused).await, json!(card));
    bina.client
        .active_element()
        .await
        .unwrap()
        .send_keys("\u{E007}")
        .await
        .unwrap();
    assert!(bina.snapshot().await.marked.is_empty());
    assert_eq!(bina.eval(focused).await, json!(card));
    asha.screenshot("table-desktop").await;
    bina.screenshot("table-phone-second-player").await;

    // A third person with the link finds the table full and watches: every seat, no hand.
    let chandra = driver.browser(PHONE).await;
    chandra.goto(&invite).await;
    chandra
        .wait_until("the join form", |s| s.screen == "join")
        .await;
    assert!(
        chandra
            .find("#join-full")
            .await
            .is_displayed()
            .await
            .unwrap()
    );
    assert!(
        !chandra
            .find("#join-sit")
            .await
            .is_displayed()
            .await
            .unwrap()
    );
    chandra.type_into("#join-name", "Chandra").await;
    chandra.click("#join-full").await;
    let c = chandra
        .wait_until("the table", |s| s.screen == "table" && s.round == 1)
        .await;
    assert!(c.hand.is_empty() && c.status == "Watching", "{c:?}");
    let seats = chandra.text("#seats").await;
    assert!(seats.contains("Asha") && seats.contains("Bina"), "{seats}");
    let source = chandra.client.source().await.unwrap();
    for card in a.hand.iter().chain(&b.hand) {
        if Some(card) != b.barred.as_ref() {
            assert!(
                !source.contains(&format!("data-card=\"{card}\"")),
                "{card} of a seat is shown to a spectator"
            );
        }
    }

    asha.assert_no_console_errors().await;
    bina.assert_no_console_errors().await;
    chandra.assert_no_console_errors().await;
    asha.close().await;
    bina.close().await;
    chandra.close().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_reload_a_dropped_connection_or_a_second_tab_keeps_the_seat() {
    let Some(tools) = browser_tools() else {
        return;
    };
    let _one = ONE_AT_A_TIME.lock().await;
    let server = TestServer::start().await;
    let addr = server.addr;
    let mut driver = Driver::start(tools).await;
    let b = driver.browser(PHONE).await;

    create_room(&b, addr, "Asha").await;
    // The host changes the table in the lobby: three players, seven cards each.
    b.find("#lobby-settings #set-players")
        .await
        .select_by_value("3")
        .await
        .unwrap();
    let started = Instant::now();
    while b
        .eval("return document.querySelectorAll('.lobby-seat').length;")
        .await
        != json!(3)
    {
        assert!(
            started.elapsed() < WAIT,
            "the lobby never showed three seats"
        );
        tokio::time::sleep(Duration::from_millis(25)).await;
    }
    b.find("#lobby-settings #set-cards")
        .await
        .select_by_value("7")
        .await
        .unwrap();
    let started = Instant::now();
    while !b.text("#lobby-settings").await.contains("Seven makes")
        || b.find("#lobby-settings #set-cards")
            .await
            .prop("value")
            .await
            .unwrap()
            .as_deref()
            != Some("7")
    {
        assert!(
            started.elapsed() < WAIT,
            "the lobby never showed seven cards"
        );
        tokio::time::sleep(Duration::from_millis(25)).await;
    }
    b.click("#start").await;
    let before = b
        .wait_until("the table", |s| s.screen == "table" && s.hand.len() == 7)
        .await;
    let token = b
        .eval("return Object.keys(localStorage).filter((k) => k.startsWith('dhumbal.room.')).map((k) => JSON.parse(localStorage.getItem(k)).token);")
        .await;
    assert!(
        token.as_array().unwrap().iter().any(|t| t.is_string()),
        "the seat token is kept in localStorage: {token}"
    );
    // From the next page load on, the page's sockets are kept where the test can drop them.
    b.client
        .issue_cmd(Cdp {
            cmd: "Page.addScriptToEvaluateOnNewDocument",
            params: json!({ "source": KEEP_SOCKETS }),
        })
        .await
        .unwrap();
    b.client.refresh().await.unwrap();
    let after = b
        .wait_until("the table again", |s| {
            s.screen == "table" && !s.hand.is_empty()
        })
        .await;
    let sorted = |h: &[String]| h.iter().cloned().collect::<BTreeSet<String>>();
    assert_eq!(sorted(&before.hand), sorted(&after.hand), "the same seat");
    // The round's log comes back too, from the history the server sends on arrival.
    assert!(!before.log.is_empty(), "the deal is in the log");
    assert_eq!(after.log, before.log, "the same log after the reload");
    assert!(!after.banner, "no reconnecting banner once back");
    assert!(after.my_turn, "seat 0 still leads");
    let seats = b.text("#seats").await;
    assert_eq!(seats.matches("bot").count(), 2, "{seats}");
    assert_eq!(seats.matches("7 cards").count(), 2, "{seats}");

    // Sort hand puts the lightest first; How to play shows this table's settings.
    b.click("#sort").await;
    let sorted_hand = b.snapshot().await.hand;
    let values: Vec<u32> = sorted_hand.iter().map(|c| value(c)).collect();
    assert!(values.is_sorted(), "sorted: {sorted_hand:?}");
    b.click("#open-rules").await;
    let rules = b.text("#rules-box").await;
    assert!(
        rules.contains("7 each") && rules.contains("With 5 or less in hand"),
        "{rules}"
    );
    b.click("#rules-close").await;

    // The connection drops: the banner says so, the page comes back to the same seat by itself.
    let dropped = b
        .eval("window.__sockets.forEach((s) => s.close()); return window.__sockets.length;")
        .await;
    assert_eq!(dropped, json!(1));
    b.wait_until("the reconnecting banner", |s| {
        s.banner && s.banner_text.contains("Reconnecting")
    })
    .await;
    let back = b
        .wait_until("the seat again", |s| !s.banner && !s.hand.is_empty())
        .await;
    assert_eq!(sorted(&back.hand), sorted(&before.hand));
    assert!(back.my_turn);

    // The same seat opened in a second tab takes it over; the first tab steps aside and says
    // so, and can take it back.
    let link = b.client.current_url().await.unwrap().to_string();
    let first = b.client.window().await.unwrap();
    let second = b.client.new_window(true).await.unwrap().handle;
    b.client.switch_to_window(second.clone()).await.unwrap();
    b.goto(&link).await;
    let there = b
        .wait_until("the seat in the second tab", |s| {
            s.screen == "table" && !s.hand.is_empty()
        })
        .await;
    assert_eq!(sorted(&there.hand), sorted(&before.hand));
    b.client.switch_to_window(first.clone()).await.unwrap();
    b.wait_until("the first tab to step aside", |s| {
        s.banner && s.banner_text.contains("open in another window")
    })
    .await;
    b.click("#banner button").await;
    b.wait_until("the seat back in the first tab", |s| {
        !s.banner && s.hand.len() == before.hand.len()
    })
    .await;
    b.client.switch_to_window(second).await.unwrap();
    b.wait_until("the second tab to step aside", |s| {
        s.banner && s.banner_text.contains("open in another window")
    })
    .await;
    b.client.close_window().await.unwrap();
    b.client.switch_to_window(first).await.unwrap();
    b.assert_no_console_errors().await;
    b.close().await;
}

/// Whether a console error is Chromium's own line for a WebSocket that could not connect to
/// `addr` (`WebSocket connection to 'ws://…/ws' failed: …`): what the page's reconnection
/// attempts log while the server is down. Nothing else is passed over.
fn refused_websocket(addr: SocketAddr, message: &str) -> bool {
    message.contains(&format!("WebSocket connection to 'ws://{addr}/ws' failed"))
}

/// The seat this page plays: the one seat `#seats` leaves out (it shows the others).
async fn own_seat(b: &Browser) -> usize {
    let others = b
        .eval("return [...document.querySelectorAll('#seats .seat')].map((e) => Number(e.dataset.seat));")
        .await;
    let others: Vec<usize> = serde_json::from_value(others).unwrap();
    let mine: Vec<usize> = (0..=others.len()).filter(|s| !others.contains(s)).collect();
    assert_eq!(
        mine.len(),
        1,
        "one seat of {} is this page's",
        others.len() + 1
    );
    mine[0]
}

/// The seat token the page keeps for the room.
async fn stored_token(b: &Browser, code: &str) -> Value {
    b.client
        .execute(
            "return JSON.parse(localStorage.getItem('dhumbal.room.' + arguments[0])).token;",
            vec![json!(code)],
        )
        .await
        .unwrap()
}

/// On this page's turn at a draw-then-throw table: takes the stock's top card, marks it and
/// throws it (it is the heaviest in the hand), and waits for the throw to land.
async fn draw_and_throw_it_back(b: &Browser) {
    let turn = b
        .wait_until("the page's turn", |s| s.my_turn && s.may_draw)
        .await;
    b.click("#stock").await;
    let drawn = b
        .wait_until("the drawn card", |s| {
            s.may_throw && s.hand.len() == turn.hand.len() + 1
        })
        .await;
    let card = drawn
        .hand
        .iter()
        .find(|c| !turn.hand.contains(c))
        .expect("a new card in the hand")
        .clone();
    assert!(value(&card) >= 6, "the stock's top is heavy: {card}");
    b.tap(&card).await;
    let ready = b.snapshot().await;
    assert_eq!(ready.marked, vec![card.clone()]);
    assert_eq!(ready.throw_text, format!("Throw {}", value(&card)));
    b.click("#throw").await;
    b.wait_until("the throw to land", |s| {
        !s.my_turn && !s.hand.contains(&card)
    })
    .await;
}

/// SIGTERM in the middle of a match, with rooms kept in SQLite: the real server binary tells the
/// page it is restarting and stops cleanly; the page says it is reconnecting; the server starts
/// again on the same address and data directory, and the page, untouched, comes back to its
/// seat and hand and finishes the match.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_sigterm_mid_match_and_a_restart_bring_the_page_back_to_its_seat_to_finish() {
    let Some(tools) = browser_tools() else {
        return;
    };
    let _one = ONE_AT_A_TIME.lock().await;
    const SERVER: &str = env!("CARGO_BIN_EXE_server-under-test");
    let data = tempfile::tempdir().unwrap();
    let data_dir = data.path().display().to_string();
    let args = [
        "--store",
        "sqlite",
        "--data-dir",
        &data_dir,
        // Bots take a moment, so the restart falls on their turns, as the page waits.
        "--bot-delay-ms",
        "300",
        "--allow-test-decks",
    ];
    let mut server = tokio::task::block_in_place(|| ServerProcess::start(SERVER, &args));
    let addr = server.addr;

    // A fixed deck for a one-round match: seat 0 (the page) holds both jokers and three aces
    // (3), so it may call whenever it likes. The bots are dealt only cards worth 6 or more, and
    // so are the turned-up card and the stock's first 16 cards (more than this test draws), so
    // no bot's hand is ever light enough to call: the page ends the match when the test says.
    let settings = Settings {
        rounds: Rounds::Fixed(1),
        jokers: true,
        ..Preset::Standard.settings()
    };
    let low = ["RJ", "BJ", "AS", "AH", "AD"].map(|c| c.parse::<Card>().unwrap());
    let heavy = |c: &Card| c.value(CourtValues::Tens) >= 6;
    let mut heavies = full_deck(true).into_iter().filter(heavy);
    let mut rest = full_deck(true)
        .into_iter()
        .filter(|c| !heavy(c) && !low.contains(c));
    let deck: Vec<Card> = (0..54)
        .map(|i| match i {
            i if i < 20 && i % 4 == 0 => low[i / 4],
            i if i < 37 => heavies.next().unwrap(),
            _ => rest.next().unwrap(),
        })
        .collect();
    assert_eq!(heavies.next(), None);
    let request = CreateRoom {
        settings: Some(settings),
        decks: Some(vec![deck]),
        ..CreateRoom::default()
    };
    let (status, body) = dhumbal_tests::http::post(
        addr,
        "/api/rooms",
        &serde_json::to_string(&request).unwrap(),
    )
    .await;
    assert_eq!(status, 201, "{body}");
    let room: CreatedRoom = serde_json::from_str(&body).unwrap();

    let mut driver = Driver::start(tools).await;
    let b = driver.browser(PHONE).await;
    // The page that created a room keeps its host secret; do what it does, then open the link.
    b.keep_host_secret(addr, &room).await;
    b.client
        .issue_cmd(Cdp {
            cmd: "Page.addScriptToEvaluateOnNewDocument",
            params: json!({ "source": RECORD_CLOSES }),
        })
        .await
        .unwrap();
    b.goto(&format!("http://{addr}{}", room.url)).await;
    b.wait_until("the lobby", |s| s.screen == "lobby").await;
    b.click("#start").await;
    let first = b
        .wait_until("the table", |s| s.screen == "table" && s.my_turn)
        .await;
    assert_eq!(first.call.as_deref(), Some("Call on 3"));

    // Two turns through the page, then SIGTERM while the bots play.
    draw_and_throw_it_back(&b).await;
    draw_and_throw_it_back(&b).await;
    let before = b.snapshot().await;
    assert!(
        !before.my_turn && before.phase != "round_over",
        "{before:?}"
    );
    let seat = own_seat(&b).await;
    let token = stored_token(&b, &room.code).await;
    assert!(token.is_string(), "a seat token: {token}");
    tokio::task::block_in_place(|| {
        server.terminate();
        assert!(
            server.wait(),
            "the server exited with a failure after SIGTERM"
        );
        server.log_line("dhumbal server stopped");
    });
    let away = b
        .wait_until("the reconnecting banner", |s| {
            s.banner && s.banner_text.contains("Reconnecting")
        })
        .await;
    assert!(
        away.toast.contains("The server is restarting"),
        "the page says why: {away:?}"
    );
    assert_eq!(away.screen, "table", "the table stays on screen");
    assert_eq!(away.hand, before.hand, "the hand stays on screen");
    // The notice has faded in (0.2 s) for the picture.
    tokio::time::sleep(Duration::from_millis(300)).await;
    b.screenshot("restart-reconnecting").await;
    // Down for a moment longer, so the page tries more than once.
    tokio::time::sleep(Duration::from_millis(1500)).await;
    assert!(b.snapshot().await.banner, "still reconnecting");
    let closes = b.eval("return window.__closes;").await;
    let closes: Vec<u16> = serde_json::from_value(closes).unwrap();
    assert_eq!(
        closes.first(),
        Some(&1012),
        "the server closed with 1012 (service restart), then the attempts failed: {closes:?}"
    );
    assert!(closes.len() >= 2, "the page tried again: {closes:?}");

    let started = Instant::now();
    let server = tokio::task::block_in_place(|| ServerProcess::start_on(SERVER, addr, &args));
    assert_eq!(server.addr, addr);
    let sorted = |h: &[String]| h.iter().cloned().collect::<BTreeSet<String>>();
    let back = b
        .wait_until("the page back at its seat", |s| {
            !s.banner && s.screen == "table" && sorted(&s.hand) == sorted(&before.hand)
        })
        .await;
    let back_after = started.elapsed();
    assert_eq!(own_seat(&b).await, seat, "the same seat");
    assert_eq!(
        stored_token(&b, &room.code).await,
        token,
        "the same seat token"
    );
    assert_eq!(back.round, 1);
    assert!(!back.log.is_empty(), "the round's log comes back: {back:?}");

    // The restored match goes on: the bots finish their turns, the page plays one more, and
    // calls on its next.
    draw_and_throw_it_back(&b).await;
    let s = b
        .wait_until("the page's turn again", |s| s.my_turn && s.may_draw)
        .await;
    assert_eq!(s.call.as_deref(), Some("Call on 3"));
    b.click("#call").await;
    b.wait_until("the show", |s| s.score_open).await;
    assert_eq!(
        b.text("#score-dialog .ending").await,
        "Asha called on 3 and took the round."
    );
    assert_eq!(b.text("#score-title").await, "Match over");
    let standings = b.text("#score-dialog .standings").await;
    assert!(standings.starts_with("1. Asha +"), "{standings}");
    assert_eq!(standings.lines().count(), 4, "{standings}");
    let refused = b
        .assert_no_console_errors_but(|m| refused_websocket(addr, m))
        .await;
    let _ = writeln!(
        std::io::stderr(),
        "back at seat {seat} {back_after:?} after the restart; {} refused WebSocket attempts \
         logged while the server was down, the first: {:?}",
        refused.len(),
        refused.first()
    );
    b.close().await;
    drop(server);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_one_round_match_ends_with_standings_and_a_rematch() {
    let Some(tools) = browser_tools() else {
        return;
    };
    let _one = ONE_AT_A_TIME.lock().await;
    let server = TestServer::start().await;
    let addr = server.addr;
    // A fixed deck: seat 0 is dealt both jokers and three aces (3), so it may call at once and
    // nobody else can match it.
    let settings = Settings {
        rounds: Rounds::Fixed(1),
        jokers: true,
        ..Preset::Standard.settings()
    };
    let low = ["RJ", "BJ", "AS", "AH", "AD"].map(|c| c.parse::<Card>().unwrap());
    let mut rest = full_deck(true).into_iter().filter(|c| !low.contains(c));
    let deck: Vec<Card> = (0..54)
        .map(|i| {
            if i % 4 == 0 && i / 4 < 5 {
                low[i / 4]
            } else {
                rest.next().unwrap()
            }
        })
        .collect();
    let room = server
        .create_room(&CreateRoom {
            settings: Some(settings),
            decks: Some(vec![deck]),
            ..CreateRoom::default()
        })
        .await;
    let mut driver = Driver::start(tools).await;
    let b = driver.browser(DESKTOP).await;
    // The page that created a room keeps its host secret; do what it does, then open the link.
    b.keep_host_secret(addr, &room).await;
    b.goto(&format!("http://{addr}{}", room.url)).await;
    b.wait_until("the lobby", |s| s.screen == "lobby").await;
    b.click("#start").await;
    let s = b
        .wait_until("the call", |s| s.screen == "table" && s.call.is_some())
        .await;
    assert_eq!(s.call.as_deref(), Some("Call on 3"));
    assert!(s.status.contains("Holding 3"), "{}", s.status);
    b.click("#call").await;
    b.wait_until("the show", |s| s.score_open).await;
    let ending = b.text("#score-dialog .ending").await;
    assert_eq!(ending, "Asha called on 3 and took the round.");
    assert_eq!(b.text("#score-title").await, "Match over");
    let standings = b.text("#score-dialog .standings").await;
    assert!(standings.starts_with("1. Asha +"), "{standings}");
    assert_eq!(standings.lines().count(), 4, "{standings}");
    b.screenshot("match-over-desktop").await;
    b.click("#rematch").await;
    let again = b
        .wait_until("the rematch", |s| {
            !s.score_open && s.round == 1 && s.call.is_some()
        })
        .await;
    assert_eq!(again.hand.len(), 5);
    b.assert_no_console_errors().await;
    b.close().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_throw_then_draw_table_picks_up_from_the_previous_throw() {
    let Some(tools) = browser_tools() else {
        return;
    };
    let _one = ONE_AT_A_TIME.lock().await;
    let server = TestServer::start().await;
    let addr = server.addr;
    let mut driver = Driver::start(tools).await;
    let b = driver.browser(PHONE).await;
    b.goto(&format!("http://{addr}/")).await;
    b.wait_until("the home page", |s| s.screen == "home").await;
    b.find("#set-preset")
        .await
        .select_by_value("household")
        .await
        .unwrap();
    create_room_here(&b, addr, "Asha").await;
    b.click("#start").await;
    let s = b
        .wait_until("the table", |s| s.screen == "table" && s.may_throw)
        .await;
    assert!(!s.may_draw, "throw first: {s:?}");
    assert!(s.status.contains("no call limit"), "{}", s.status);
    // The turned-up card is the previous throw once Asha has thrown.
    let turned_up = b
        .eval("return [...document.querySelectorAll('#pile .card')].map((c) => c.dataset.card);")
        .await;
    let turned_up: Vec<String> = serde_json::from_value(turned_up).unwrap();
    assert_eq!(turned_up.len(), 1);
    let heaviest = s
        .hand
        .iter()
        .max_by_key(|c| c.parse::<Card>().unwrap().value(CourtValues::JackZero))
        .unwrap()
        .clone();
    b.drag_to_pile(&heaviest).await;
    let s = b
        .wait_until("the pick-up", |s| s.may_draw && !s.takeable.is_empty())
        .await;
    assert_eq!(
        s.takeable, turned_up,
        "the previous single throw may be taken"
    );
    b.assert_fits_the_width("a five-seat table").await;
    b.screenshot("throw-then-draw-phone").await;
    b.click("#pile .card.takeable").await;
    // Bots without delay may have played round to Asha again by now; the hand tells.
    b.wait_until("the pick-up to land", |s| {
        s.hand.contains(&turned_up[0]) && !s.hand.contains(&heaviest)
    })
    .await;
    b.assert_no_console_errors().await;
    b.close().await;
}

/// A group of cards and the settings to judge it under, sent to the page.
fn sample_groups() -> Vec<(Vec<Card>, Settings)> {
    let deck: Vec<Card> = (0..54).filter_map(Card::from_index).collect();
    let tables: Vec<Settings> = [
        (false, false, false),
        (true, false, false),
        (false, true, false),
        (true, true, false),
        (true, true, true),
    ]
    .into_iter()
    .map(|(runs, jokers, jokers_in_runs)| Settings {
        runs,
        jokers,
        jokers_in_runs,
        ..Preset::Standard.settings()
    })
    .collect();
    // A small deterministic generator: the same groups every run.
    let mut state = 0x9e37_79b9_7f4a_7c15_u64;
    let mut next = move |n: usize| {
        state ^= state << 13;
        state ^= state >> 7;
        state ^= state << 17;
        (state % n as u64) as usize
    };
    let mut groups = Vec::new();
    for i in 0..3000 {
        let settings = tables[i % tables.len()].clone();
        let len = 1 + next(5);
        let mut group: Vec<Card> = Vec::new();
        match i % 3 {
            // Anything at all.
            0 => {
                while group.len() < len {
                    let c = deck[next(deck.len())];
                    if !group.contains(&c) {
                        group.push(c);
                    }
                }
            }
            // Near-sets: one rank, sometimes a stray card or a joker.
            1 => {
                let rank = next(13);
                for suit in 0..4 {
                    if group.len() < len && next(3) > 0 {
                        group.push(deck[suit * 13 + rank]);
                    }
                }
                if next(3) == 0 {
                    group.push(deck[52 + next(2)]);
                }
                if next(4) == 0 {
                    let c = deck[next(52)];
                    if !group.contains(&c) {
                        group.push(c);
                    }
                }
            }
            // Near-runs: consecutive ranks of one suit with gaps, jokers, a wrong suit.
            _ => {
                let suit = next(4);
                let start = next(13);
                for k in 0..len + 1 {
                    let rank = (start + k) % 13;
                    match next(6) {
                        0 => {}
                        1 => {
                            let j = deck[52 + next(2)];
                            if !group.contains(&j) {
                                group.push(j);
                            }
                        }
                        2 => group.push(deck[((suit + 1) % 4) * 13 + rank]),
                        _ => group.push(deck[suit * 13 + rank]),
                    }
                }
                group.dedup();
                let mut seen = BTreeSet::new();
                group.retain(|c| seen.insert(*c));
            }
        }
        if group.is_empty() {
            group.push(deck[next(52)]);
        }
        // Shuffle the listed order: it must not matter.
        for k in (1..group.len()).rev() {
            group.swap(k, next(k + 1));
        }
        groups.push((group, settings));
    }
    groups
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_settings_page_the_rules_page_and_the_pages_group_rules() {
    let Some(tools) = browser_tools() else {
        return;
    };
    let _one = ONE_AT_A_TIME.lock().await;
    let server = TestServer::start().await;
    let addr = server.addr;
    let mut driver = Driver::start(tools).await;
    let b = driver.browser(PHONE).await;
    b.goto(&format!("http://{addr}/")).await;
    b.wait_until("the home page", |s| s.screen == "home").await;

    // Every setting has a one-line explanation.
    let fields = b
        .eval(
            "return [...document.querySelectorAll('#home-settings .field')].map((f) => \
             [f.querySelector('label').textContent, f.querySelector('.note').textContent.length]);",
        )
        .await;
    let fields = fields.as_array().unwrap();
    assert!(fields.len() >= 20, "{fields:?}");
    for f in fields {
        assert!(f[1].as_u64().unwrap() > 20, "{f} has no explanation");
    }
    b.assert_fits_the_width("the settings page").await;
    b.screenshot("settings-phone").await;

    // A preset fills every setting; How to play shows the table's own settings.
    b.find("#set-preset")
        .await
        .select_by_value("yaniv")
        .await
        .unwrap();
    let limit = b.find("#set-limit").await.prop("value").await.unwrap();
    assert_eq!(limit.as_deref(), Some("7"));
    let penalty = b.find("#set-penalty").await.prop("value").await.unwrap();
    assert_eq!(penalty.as_deref(), Some("30"));
    b.click("#home-rules").await;
    // It opens at its top, its title focused (not Close, at the bottom).
    let opened = b
        .eval("const d = document.querySelector('#rules-dialog'); return [d.scrollTop, document.querySelector('#rules-box').scrollTop, document.activeElement.id];")
        .await;
    assert_eq!(opened, json!([0, 0, "rules-title"]));
    let rules = b.text("#rules-box").await;
    for expected in [
        "With 7 or less in hand",
        "30 on top of your hand",
        "Throw, then draw",
        "wild in sets and runs",
    ] {
        assert!(rules.contains(expected), "How to play lacks {expected:?}");
    }
    b.assert_fits_the_width("How to play").await;
    b.screenshot("rules-phone").await;
    b.click("#rules-close").await;

    // The page's group rules (which enable the Throw button) agree with the engine's.
    let groups = sample_groups();
    let payload: Vec<Value> = groups
        .iter()
        .map(|(cards, settings)| json!({ "cards": cards, "settings": settings }))
        .collect();
    let expected: Vec<Value> = groups
        .iter()
        .map(|(cards, settings)| serde_json::to_value(classify(cards, settings)).unwrap())
        .collect();
    let got = b
        .client
        .execute(
            "return import('/assets/cards.js').then((m) => \
             arguments[0].map((g) => m.classify(g.cards, g.settings)));",
            vec![Value::Array(payload)],
        )
        .await
        .unwrap();
    let got = got.as_array().unwrap();
    assert_eq!(got.len(), groups.len());
    let kinds: BTreeSet<String> = expected.iter().map(|k| k.to_string()).collect();
    assert_eq!(
        kinds.len(),
        4,
        "the sample holds every kind and refusals: {kinds:?}"
    );
    for ((group, settings), (want, have)) in groups.iter().zip(expected.iter().zip(got)) {
        assert_eq!(
            want, have,
            "{group:?} with runs {} jokers {} jokers in runs {}",
            settings.runs, settings.jokers, settings.jokers_in_runs
        );
    }
    // And sorting puts the lightest first and the jokers last.
    let sorted = b
        .eval("return import('/assets/cards.js').then((m) => m.sortHand(['KH','RJ','AS','7D','2C'], 'tens'));")
        .await;
    assert_eq!(sorted, json!(["AS", "2C", "7D", "KH", "RJ"]));
    b.assert_no_console_errors().await;
    b.close().await;
}

/// The browser's own `fair.js` (WebCrypto's SHA-256 and HMAC, the page's ChaCha20, shuffle and
/// deal) gives every known-answer vector of `docs/fairness.md`.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_pages_fair_deal_code_gives_every_known_answer_of_the_fairness_document() {
    let Some(tools) = browser_tools() else {
        return;
    };
    let _one = ONE_AT_A_TIME.lock().await;
    let server = TestServer::start().await;
    let addr = server.addr;
    let mut driver = Driver::start(tools).await;
    let b = driver.browser(DESKTOP).await;
    b.goto(&format!("http://{addr}/")).await;
    b.wait_until("the home page", |s| s.screen == "home").await;
    let got = b
        .client
        .execute_async(
            r#"const done = arguments[arguments.length - 1];
            import('/assets/fair.js').then(async (f) => {
              const hex = (from) => Array.from({ length: 32 }, (_, i) => (from + i).toString(16).padStart(2, '0')).join('');
              const seed = hex(0);
              const clientSeeds = ['aa'.repeat(32), null, hex(0x20), null];
              const deckSeed = await f.deckSeed(seed, 'ABCDE', 1, 1, clientSeeds);
              const deck = f.deck(deckSeed, false);
              const dealt = f.deal(deck, 3, [true, true, true, true], 5);
              done({
                commitment: await f.commitment(seed),
                roundSecret: await f.roundSecret(seed, 1),
                deckSeed,
                noClientSeeds: await f.deckSeed(seed, 'ABCDE', 1, 1, [null, null, null, null]),
                deck: deck.join(' '),
                stream1: f.shuffle(f.canonicalPack(false).slice(0, 10), deckSeed, 1).join(' '),
                hands: dealt.hands.map((h) => h.join(' ')),
                pileTop: dealt.pileTop,
                stockTop: dealt.stock[0],
                clientSeed: f.newClientSeed(),
              });
            }).catch((e) => done({ error: String(e) }));"#,
            vec![],
        )
        .await
        .unwrap();
    assert_eq!(got.get("error"), None, "{got}");
    let want = json!({
        "commitment": "9d83879b0754c1f08b649e645d31f5e5f71555e6cd455856f855d61852e9ee6e",
        "roundSecret": "3b8a05af592926633f8239e8ab2ad0b330cf127f655efce367ef240d00190c9d",
        "deckSeed": "97c9ddadfd8d0c4ee11e3c46047f5238c223117a7779f410ff5ad6a7e4a2c772",
        "noClientSeeds": "57c29e4300de057bca8c51e9ec2643860e34a62d8cfddbeddb643ba90deaa425",
        "deck": "AC 10S 7D 5C AD 6H 2S 3S 6S 4C 8S 3D KC 10H QC 7S 8D 2C 9H 10C JH 5S 5D 8H 9C 2D \
                 4H KS 3H 10D QH JS 4S 9S JC 6D JD 2H 9D KH 8C 6C AS KD AH 3C 4D QS 7C QD 7H 5H",
        "stream1": "9S 7S 5S 6S 10S 3S 2S AS 4S 8S",
        "hands": ["AC AD 6S KC 8D", "10S 6H 4C 10H 2C", "7D 2S 8S QC 9H", "5C 3S 3D 7S 10C"],
        "pileTop": "JH",
        "stockTop": "5S",
    });
    for (key, value) in want.as_object().unwrap() {
        assert_eq!(&got[key], value, "{key}");
    }
    let client_seed = got["clientSeed"].as_str().unwrap();
    assert!(
        client_seed.len() == 64
            && client_seed
                .bytes()
                .all(|b| b.is_ascii_digit() || (b'a'..=b'f').contains(&b)),
        "a client seed is 64 lowercase hex digits: {client_seed}"
    );
    b.assert_no_console_errors().await;
    b.close().await;
}

/// A finished match's hand history, played by the engine from the documented vector seed (each
/// seat takes its first legal action, as `engine/examples/sample_history.rs` does), with a name
/// written as markup.
fn sample_history() -> dhumbal_engine::HandHistory {
    use dhumbal_engine::{FairDeal, Game, Hex32, Phase};
    let deal = FairDeal {
        seed: std::array::from_fn(|i| i as u8),
        room: "ABCDE".into(),
        match_number: 1,
    };
    let seeds = vec![Some(Hex32([0xaa; 32])), None, None, None];
    let mut game = Game::fair(Preset::Standard.settings(), deal, seeds).unwrap();
    while !game.is_over() {
        if game.phase() == Phase::RoundOver {
            game.next_round().unwrap();
        } else {
            let seat = game.turn();
            let action = game.legal_actions(seat).remove(0);
            game.apply(seat, action).unwrap();
        }
    }
    let mut history = game.hand_history().unwrap();
    history.players = ["Asha", "<b>Bikash</b>", "Chandra", "Dawa"]
        .map(String::from)
        .to_vec();
    history
}

/// What the replay page shows, read in one round trip.
const REPLAY_SNAPSHOT: &str = r#"
const r = document.querySelector('#replay');
return {
  shown: !r.hidden,
  frame: Number(r.dataset.frame || -1),
  frames: Number(r.dataset.frames || 0),
  round: Number(r.dataset.round || 0),
  hands: [...document.querySelectorAll('#replay-seats .replay-seat')].map((s) =>
    [...s.querySelectorAll('.replay-hand .card')].map((c) => c.classList.contains('face') ? c.dataset.card : 'back')),
  names: [...document.querySelectorAll('#replay-seats .seat-name')].map((n) => n.textContent),
  bold: document.querySelectorAll('#replay-seats .seat-name b').length,
  line: document.querySelector('#replay-line').textContent,
  stock: document.querySelector('#replay-stock').textContent,
  pile: [...document.querySelectorAll('#replay-pile .card')].map((c) => c.dataset.card),
  check: document.querySelector('#replay-check').textContent,
  scores: document.querySelectorAll('#replay-scores tr').length,
};
"#;

/// The replay page opens a hand history from a file on a phone, steps forwards and backwards by
/// button and by arrow key and by round, every hand face up, and checks the deals itself.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_replay_page_steps_through_a_history_file_on_a_phone_every_hand_face_up() {
    let Some(tools) = browser_tools() else {
        return;
    };
    let _one = ONE_AT_A_TIME.lock().await;
    let server = TestServer::start().await;
    let addr = server.addr;
    let history = sample_history();
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("dhumbal-ABCDE-1.json");
    std::fs::write(&file, serde_json::to_string_pretty(&history).unwrap()).unwrap();

    let mut driver = Driver::start(tools).await;
    let b = driver.browser(PHONE).await;
    b.goto(&format!("http://{addr}/replay")).await;
    assert_eq!(
        b.client.title().await.unwrap(),
        "Dhumbal replay",
        "the replay page is served at /replay"
    );
    b.assert_fits_the_width("the replay page before a file")
        .await;
    b.find("#replay-file")
        .await
        .send_keys(&file.display().to_string())
        .await
        .unwrap();
    let snapshot = || async { b.eval(REPLAY_SNAPSHOT).await };
    let started = Instant::now();
    let mut s = snapshot().await;
    while !(s["shown"] == json!(true) && s["check"].as_str().unwrap().contains("check out")) {
        assert!(started.elapsed() < WAIT, "the replay never loaded: {s}");
        tokio::time::sleep(Duration::from_millis(50)).await;
        s = snapshot().await;
    }
    assert_eq!(s["check"], "All 3 deals check out.", "{s}");
    let steps: usize = history.rounds.iter().map(|r| r.steps.len() + 2).sum();
    assert_eq!(
        s["frames"],
        json!(steps),
        "a deal, every step and a show per round"
    );
    assert_eq!(s["frame"], 0);
    let dealt: Vec<Vec<String>> = history.rounds[0]
        .hands
        .iter()
        .map(|h| h.iter().map(|c| c.to_string()).collect())
        .collect();
    assert_eq!(s["hands"], json!(dealt), "every hand face up as dealt: {s}");
    assert_eq!(s["bold"], 0, "a name written as markup is shown as text");
    assert!(
        s["names"][1].as_str().unwrap().contains("<b>Bikash</b>"),
        "{s}"
    );
    assert_eq!(s["pile"], json!([history.rounds[0].pile_top.to_string()]));
    let stock = 52 - 4 * 5 - 1;
    assert_eq!(s["stock"], format!("Stock \u{b7} {stock}"));
    b.assert_fits_the_width("the replay page").await;
    let heights = b
        .eval("return [...document.querySelectorAll('.replay-controls button')].map((e) => e.getBoundingClientRect().height);")
        .await;
    for h in heights.as_array().unwrap() {
        assert!(
            h.as_f64().unwrap() >= 44.0,
            "a button under 44 px: {heights}"
        );
    }
    b.screenshot("replay-phone").await;

    // Forward: the first player draws from the stock, and the line says who and what.
    let first = &history.rounds[0].steps[0];
    let drawn = first.card.unwrap().to_string();
    b.click("#replay-forward").await;
    let s = snapshot().await;
    assert_eq!(s["frame"], 1);
    let mover = &history.players[first.seat];
    assert!(
        s["line"].as_str().unwrap().starts_with(mover.as_str())
            && s["line"].as_str().unwrap().contains("from the stock"),
        "{s}"
    );
    assert_eq!(s["hands"][first.seat].as_array().unwrap().len(), 6, "{s}");
    assert!(
        s["hands"][first.seat]
            .as_array()
            .unwrap()
            .contains(&json!(drawn))
    );
    assert_eq!(s["stock"], format!("Stock \u{b7} {}", stock - 1));
    // Forward again (the throw), then back twice with the arrow key: the deal again.
    b.click("#replay-forward").await;
    let s = snapshot().await;
    assert_eq!(s["frame"], 2);
    assert_eq!(s["hands"][first.seat].as_array().unwrap().len(), 5, "{s}");
    b.keys("\u{e012}\u{e012}").await; // ArrowLeft twice
    let s = snapshot().await;
    assert_eq!(s["frame"], 0);
    assert_eq!(s["hands"], json!(dealt));
    b.keys("\u{e014}").await; // ArrowRight
    assert_eq!(snapshot().await["frame"], 1);

    // By round: the next round's deal, with round 1's scores.
    b.click("#replay-next-round").await;
    let s = snapshot().await;
    assert_eq!(s["round"], 2, "{s}");
    assert_eq!(s["scores"], 2, "a header and round 1's totals: {s}");
    let dealt2: Vec<Vec<String>> = history.rounds[1]
        .hands
        .iter()
        .map(|h| h.iter().map(|c| c.to_string()).collect())
        .collect();
    assert_eq!(s["hands"], json!(dealt2));
    b.click("#replay-prev-round").await;
    assert_eq!(snapshot().await["round"], 1);
    // The end: the last show, every round's totals.
    b.keys("\u{e010}").await; // End
    let s = snapshot().await;
    assert_eq!(s["frame"], json!(steps - 1));
    assert_eq!(s["scores"], 4, "{s}");
    assert!(
        s["line"].as_str().unwrap().starts_with("Round 3 over."),
        "{s}"
    );
    let shown: Vec<Vec<String>> = history.rounds[2]
        .result
        .as_ref()
        .unwrap()
        .hands
        .iter()
        .map(|h| h.iter().map(|c| c.to_string()).collect())
        .collect();
    let mut have: Vec<Vec<String>> = serde_json::from_value(s["hands"].clone()).unwrap();
    let mut want = shown;
    for h in have.iter_mut().chain(want.iter_mut()) {
        h.sort();
    }
    assert_eq!(have, want, "the hands at the end are the show's");
    b.assert_fits_the_width("the replay page at the end").await;
    b.screenshot("replay-phone-end").await;
    b.assert_no_console_errors().await;
    b.close().await;
}

/// Runs the server binary's `verify` subcommand on a hand history file: its exit status's
/// success and what it printed.
fn verify_file(file: &Path) -> (bool, String) {
    let out = Command::new(env!("CARGO_BIN_EXE_server-under-test"))
        .arg("verify")
        .arg(file)
        .output()
        .expect("the server binary runs");
    (
        out.status.success(),
        String::from_utf8_lossy(&out.stdout).into_owned(),
    )
}

/// Clicks "Verify the deals" and waits for the page's verdict: its class and its text.
async fn verdict(b: &Browser) -> Value {
    b.click("#verify").await;
    let started = Instant::now();
    loop {
        let v = b
            .eval("const v = document.querySelector('#verify-result'); return [v.className, v.textContent];")
            .await;
        if !v[0].as_str().unwrap().contains("checking") && !v[1].as_str().unwrap().is_empty() {
            return v;
        }
        assert!(started.elapsed() < WAIT, "no verdict: {v}");
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
}

/// A whole one-round match against three bots from a fair deal, watched by a friend: the table
/// shows the commitment from the first deal; after the match, Verify the deals checks every deal
/// in the player's page and in the spectator's (with the revealed seed) and says so; the hand history downloaded with the seat's token passes `dhumbal-server verify` and,
/// with one card changed, fails it (and the page's own check); Replay opens it from the server.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn after_a_fair_match_the_page_verifies_every_deal_and_the_cli_agrees() {
    let Some(tools) = browser_tools() else {
        return;
    };
    let _one = ONE_AT_A_TIME.lock().await;
    let server = TestServer::start().await;
    let addr = server.addr;
    let settings = Settings {
        rounds: Rounds::Fixed(1),
        ..Preset::Standard.settings()
    };
    let room = server
        .create_room(&CreateRoom {
            settings: Some(settings),
            ..CreateRoom::default()
        })
        .await;
    let mut driver = Driver::start(tools).await;
    let b = driver.browser(PHONE).await;
    b.keep_host_secret(addr, &room).await;
    b.goto(&format!("http://{addr}{}", room.url)).await;
    b.wait_until("the lobby", |s| s.screen == "lobby").await;
    // A friend watches: after the match, the revealed seed lets them verify too.
    let watcher = driver.browser(DESKTOP).await;
    let link = format!("http://{addr}{}", room.url);
    watcher.join_from_link(&link, "Wangmo", "#join-watch").await;
    b.click("#start").await;
    b.wait_until("the table", |s| s.screen == "table" && s.round == 1)
        .await;
    // The commitment, shown at the table from the first deal.
    let shown = b
        .eval("const c = document.querySelector('#commitment'); return [c.hidden, c.textContent, c.dataset.commitment, c.title];")
        .await;
    let commitment = shown[2].as_str().unwrap_or_default().to_owned();
    assert_eq!(shown[0], false, "{shown}");
    assert_eq!(commitment.len(), 64, "{shown}");
    assert_eq!(
        shown[1],
        format!(
            "Deal commitment {}\u{2026}{}",
            &commitment[..4],
            &commitment[60..]
        )
    );
    assert!(shown[3].as_str().unwrap().contains(&commitment), "{shown}");
    b.assert_fits_the_width("the table with its commitment")
        .await;
    let seat = own_seat(&b).await;

    // Play the round: call when allowed, else draw from the stock and throw the heaviest card.
    let started = Instant::now();
    loop {
        assert!(
            started.elapsed() < Duration::from_secs(300),
            "the round never ended"
        );
        let s = b.snapshot().await;
        if s.score_open {
            break;
        }
        if !s.my_turn {
            tokio::time::sleep(Duration::from_millis(20)).await;
            continue;
        }
        if s.call.is_some() {
            b.click("#call").await;
            b.wait_until("the show", |s| s.score_open).await;
            break;
        }
        if s.may_draw {
            b.click("#stock").await;
            b.wait_until("the draw", |s| !s.may_draw || s.score_open)
                .await;
            continue;
        }
        if s.may_throw {
            let heaviest = s
                .hand
                .iter()
                .filter(|c| Some(*c) != s.barred.as_ref())
                .max_by_key(|c| value(c))
                .unwrap()
                .clone();
            b.tap(&heaviest).await;
            b.click("#throw").await;
            b.wait_until("the throw to land", |s| {
                s.score_open || !s.hand.contains(&heaviest)
            })
            .await;
        }
    }
    assert_eq!(b.text("#score-title").await, "Match over");

    // Verify the deals, in the page; and in the spectator's, with the revealed seed.
    assert_eq!(
        verdict(&b).await,
        json!(["verdict ok", "The deal checks out."])
    );
    watcher
        .wait_until("the spectator's match over", |s| s.score_open)
        .await;
    assert_eq!(
        verdict(&watcher).await,
        json!(["verdict ok", "The deal checks out."])
    );
    b.assert_fits_the_width("the match-over dialog").await;
    b.screenshot("verified-phone").await;
    b.click("#download-history").await;
    let replay = b
        .find("#replay-link")
        .await
        .attr("href")
        .await
        .unwrap()
        .unwrap_or_default();
    assert_eq!(replay, format!("/replay#{}/1", room.code));

    // The hand history, as the endpoint gives it to this seat.
    let token = stored_token(&b, &room.code).await;
    let text = b
        .client
        .execute_async(
            "const done = arguments[arguments.length - 1]; \
             fetch(`/api/rooms/${arguments[0]}/matches/1/history`, \
               { headers: { authorization: `Bearer ${arguments[1]}` } }) \
             .then((r) => r.text()).then(done, (e) => done(String(e)));",
            vec![json!(room.code), token],
        )
        .await
        .unwrap();
    let text = text.as_str().unwrap().to_owned();
    let mut history: Value = serde_json::from_str(&text).unwrap_or_else(|_| panic!("{text}"));
    assert_eq!(history["commitment"], json!(commitment));
    assert_eq!(history["players"][seat], "Asha");
    assert_eq!(history["rounds"].as_array().unwrap().len(), 1);
    assert!(
        history["rounds"][0]["client_seeds"][seat].is_string(),
        "the page's own client seed was used for its seat: {}",
        history["rounds"][0]["client_seeds"]
    );
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join(format!("dhumbal-{}-1.json", room.code));
    std::fs::write(&file, &text).unwrap();
    let (ok, out) = tokio::task::block_in_place(|| verify_file(&file));
    assert!(ok && out.contains("checks out"), "verify failed: {out}");

    // One card changed: the command line and the page both say it does not check out.
    let deck = history["rounds"][0]["deck"].as_array_mut().unwrap();
    deck.swap(0, 1);
    let tampered = dir.path().join("tampered.json");
    std::fs::write(&tampered, serde_json::to_string(&history).unwrap()).unwrap();
    let (ok, out) = tokio::task::block_in_place(|| verify_file(&tampered));
    assert!(!ok, "a changed card passed verify: {out}");
    assert!(out.contains("MISMATCH"), "{out}");
    let page = b
        .client
        .execute_async(
            "const done = arguments[arguments.length - 1]; \
             import('/assets/fair.js').then((f) => f.verifyHistory(arguments[0], null)) \
             .then((v) => done([v.ok, v.summary]), (e) => done([null, String(e)]));",
            vec![history.clone()],
        )
        .await
        .unwrap();
    assert_eq!(page[0], false, "{page}");
    assert!(
        page[1]
            .as_str()
            .unwrap()
            .starts_with("Round 1 does not check out: its deck is not the one"),
        "{page}"
    );
    b.assert_no_console_errors().await;

    // Replay: from the server, with the seat's token this browser keeps.
    b.goto(&format!("http://{addr}{replay}")).await;
    let started = Instant::now();
    loop {
        let s = b.eval(REPLAY_SNAPSHOT).await;
        if s["shown"] == json!(true) && s["check"] == "The deal checks out." {
            assert_eq!(s["hands"][seat].as_array().unwrap().len(), 5, "{s}");
            break;
        }
        assert!(started.elapsed() < WAIT, "the replay never loaded: {s}");
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    assert!(
        b.text("#replay-source")
            .await
            .starts_with("From the server")
    );
    b.assert_no_console_errors().await;
    b.close().await;
}

/// What the chat panel shows, as the person sees it (in one round trip).
const CHAT: &str = r#"
const q = (s) => document.querySelector(s);
const shown = (e) => Boolean(e) && !e.closest('[hidden]') && e.getClientRects().length > 0;
const badge = q('#chat-unread');
return {
  lines: shown(q('#chat-lines')) ? [...document.querySelectorAll('#chat-lines .chat-line')].map((l) => l.textContent) : [],
  kept: [...document.querySelectorAll('#chat-lines .chat-line')].map((l) => l.textContent),
  badge: shown(badge) ? badge.textContent : null,
  form: shown(q('#chat-form')),
  input_enabled: !q('#chat-input').disabled,
  muted_note: shown(q('#chat-muted')) ? q('#chat-muted').textContent : null,
  reactions: [...document.querySelectorAll('#reactions button')].filter(shown).length,
  elements_in_lines: document.querySelectorAll('#chat-lines .chat-text *, #chat img').length,
  small_controls: [...document.querySelectorAll('#chat button, #chat input')].filter(shown)
    .filter((e) => e.getBoundingClientRect().height < 44).map((e) => e.id || e.textContent),
};
"#;

/// The chat panel as the person sees it (see [`CHAT`]).
#[derive(Debug, Deserialize)]
struct ChatView {
    /// The lines shown (none while the panel is folded or the chat hidden).
    lines: Vec<String>,
    /// The lines the page holds, shown or not.
    kept: Vec<String>,
    badge: Option<String>,
    form: bool,
    input_enabled: bool,
    muted_note: Option<String>,
    reactions: usize,
    elements_in_lines: usize,
    small_controls: Vec<String>,
}

impl Browser {
    async fn chat(&self) -> ChatView {
        serde_json::from_value(self.eval(CHAT).await).unwrap()
    }

    async fn wait_chat(&self, what: &str, done: impl Fn(&ChatView) -> bool) -> ChatView {
        let started = Instant::now();
        loop {
            let chat = self.chat().await;
            if done(&chat) {
                return chat;
            }
            assert!(
                started.elapsed() < WAIT,
                "waited too long for {what}; the chat shows {chat:#?}"
            );
            tokio::time::sleep(Duration::from_millis(25)).await;
        }
    }

    /// Types a line into the chat and presses Enter.
    async fn say(&self, text: &str) {
        self.type_into("#chat-input", text).await;
        self.find("#chat-input")
            .await
            .send_keys("\u{E007}")
            .await
            .unwrap();
    }

    /// Waits until `seat`'s place (`css`, with `{seat}` replaced) shows the reaction `emoji`.
    async fn wait_reaction(&self, css: &str, emoji: &str) {
        let script = format!(
            "const b = document.querySelector({:?}); return Boolean(b) && b.textContent === {:?};",
            format!("{css} .reaction-bubble"),
            emoji
        );
        self.until(&format!("{emoji} beside {css}"), &script).await;
    }
}

/// Fails if an element of `covered` (CSS selectors) overlaps the chat panel on the page.
async fn assert_chat_covers_nothing(b: &Browser, covered: &[&str]) {
    let overlaps = b
        .client
        .execute(
            "const c = document.querySelector('#chat').getBoundingClientRect(); \
             return arguments[0].filter((css) => [...document.querySelectorAll(css)].some((e) => { \
               const r = e.getBoundingClientRect(); \
               return r.width > 0 && r.left < c.right && c.left < r.right && r.top < c.bottom && c.top < r.bottom; }));",
            vec![json!(covered)],
        )
        .await
        .unwrap();
    assert_eq!(overlaps, json!([]), "the chat panel covers these");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_chat_line_with_markup_stays_text_a_reaction_shows_beside_its_seat_and_a_reload_keeps_the_chat()
 {
    let Some(tools) = browser_tools() else {
        return;
    };
    let _one = ONE_AT_A_TIME.lock().await;
    let server = TestServer::start().await;
    let addr = server.addr;
    let mut driver = Driver::start(tools).await;
    let asha = driver.browser(PHONE).await;
    let bina = driver.browser(DESKTOP).await;
    let markup = "<b>hi</b> & <img src=x onerror=alert(1)>";

    let invite = create_room(&asha, addr, "Asha").await;
    bina.join_from_link(&invite, "Bina", "#join-sit").await;
    asha.until(
        "Bina in the lobby",
        "return document.querySelector('#lobby-seats').textContent.includes('Bina');",
    )
    .await;
    asha.click("#start").await;
    asha.wait_until("the table", |s| s.screen == "table" && s.hand.len() == 5)
        .await;
    bina.wait_until("the table", |s| s.screen == "table" && s.hand.len() == 5)
        .await;

    // On the phone the chat folds to a bar and the reactions, below the hand and the actions;
    // on the desktop it is open beside the table. Every control is a thumb's height.
    let a = asha.chat().await;
    assert!(a.lines.is_empty() && !a.form && a.reactions == 6, "{a:#?}");
    assert!(a.small_controls.is_empty(), "{a:#?}");
    assert_chat_covers_nothing(&asha, &["#hand", "#hand .card", ".actions button", "#pile"]).await;
    asha.assert_fits_the_width("the table with the chat").await;
    let b = bina.chat().await;
    assert!(b.form && b.input_enabled && b.reactions == 6, "{b:#?}");
    assert!(b.small_controls.is_empty(), "{b:#?}");
    assert_chat_covers_nothing(&bina, &["#hand", ".actions button", "#pile", "#seats"]).await;

    // Bina says something with markup in it: both pages show it as text, no element made; the
    // folded panel on Asha's phone counts it.
    bina.say(markup).await;
    let line = format!("Bina: {markup}");
    let b = bina
        .wait_chat("Bina's own line", |c| c.lines.contains(&line))
        .await;
    assert_eq!(b.elements_in_lines, 0, "{b:#?}");
    assert_eq!(
        bina.eval("return document.querySelector('#chat-input').value;")
            .await,
        json!("")
    );
    asha.wait_chat("the unread count", |c| c.badge.as_deref() == Some("1"))
        .await;
    asha.click("#chat-toggle").await;
    let a = asha
        .wait_chat("Bina's line", |c| c.lines.contains(&line))
        .await;
    assert_eq!(a.elements_in_lines, 0, "{a:#?}");
    assert_eq!(a.badge, None, "{a:#?}");
    assert!(a.form && a.small_controls.is_empty(), "{a:#?}");
    assert_eq!(
        asha.eval("return document.querySelector('#chat-lines .chat-text').textContent;")
            .await,
        json!(markup)
    );
    assert_chat_covers_nothing(&asha, &["#hand .card", ".actions button"]).await;
    asha.assert_fits_the_width("the table with the chat open")
        .await;

    // A reaction shows beside the seat that sent it, on both pages, then goes.
    bina.click("#reactions button[data-reaction='laugh']").await;
    asha.wait_reaction("#seats .seat[data-seat='1']", "\u{1F602}")
        .await;
    bina.wait_reaction("#table > .mine[data-seat='1']", "\u{1F602}")
        .await;
    for page in [&asha, &bina] {
        assert_eq!(
            page.eval("return document.querySelectorAll('#chat .reaction-bubble, #hand .reaction-bubble').length;")
                .await,
            json!(0),
            "a bubble went into the chat or the hand"
        );
    }
    tokio::time::sleep(Duration::from_millis(400)).await;
    asha.screenshot("chat-table-phone").await;
    asha.click("#reactions button[data-reaction='fire']").await;
    bina.wait_reaction("#seats .seat[data-seat='0']", "\u{1F525}")
        .await;
    bina.screenshot("chat-table-desktop").await;
    asha.until(
        "the reaction to go",
        "return document.querySelector('#seats .reaction-bubble') === null;",
    )
    .await;

    // Asha answers; after a reload both lines are there again, from the welcome.
    asha.say("ha, hello Bina").await;
    bina.wait_chat("Asha's answer", |c| {
        c.lines.last().map(String::as_str) == Some("Asha: ha, hello Bina")
    })
    .await;
    asha.client.refresh().await.unwrap();
    asha.wait_until("the table again", |s| {
        s.screen == "table" && s.hand.len() == 5
    })
    .await;
    let a = asha
        .wait_chat("the chat after the reload", |c| c.lines.len() == 2)
        .await;
    assert_eq!(
        a.lines,
        vec![line.clone(), "Asha: ha, hello Bina".to_owned()]
    );
    assert_eq!(a.elements_in_lines, 0, "{a:#?}");
    assert_eq!(a.badge, None, "{a:#?}");

    asha.assert_no_console_errors().await;
    bina.assert_no_console_errors().await;
    asha.close().await;
    bina.close().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn hide_chat_hides_every_line_a_muted_person_cannot_write_and_a_spectator_only_reacts() {
    let Some(tools) = browser_tools() else {
        return;
    };
    let _one = ONE_AT_A_TIME.lock().await;
    let server = TestServer::start().await;
    let addr = server.addr;
    let mut driver = Driver::start(tools).await;
    let asha = driver.browser(DESKTOP).await;
    let bina = driver.browser(PHONE).await;

    let invite = create_room(&asha, addr, "Asha").await;
    bina.join_from_link(&invite, "Bina", "#join-sit").await;
    asha.until(
        "Bina in the lobby",
        "return document.querySelector('#lobby-seats').textContent.includes('Bina');",
    )
    .await;

    // The lobby has the chat too: Bina's folded panel counts Asha's line.
    asha.say("welcome, Bina").await;
    bina.wait_chat("the unread count", |c| c.badge.as_deref() == Some("1"))
        .await;
    bina.assert_fits_the_width("the lobby with the chat").await;

    // Hide chat: no line, no count, no input; reactions still show; remembered on a reload.
    bina.click("#chat-hide").await;
    let b = bina
        .wait_chat("the chat hidden", |c| c.badge.is_none())
        .await;
    assert!(b.lines.is_empty() && !b.form && b.reactions == 6, "{b:#?}");
    bina.client.refresh().await.unwrap();
    bina.wait_until("the lobby again", |s| s.screen == "lobby")
        .await;
    bina.wait_chat("the chat back from the welcome", |c| c.kept.len() == 1)
        .await;
    asha.say("are you there?").await;
    bina.wait_chat("the second line kept", |c| c.kept.len() == 2)
        .await;
    let b = bina.chat().await;
    assert!(b.lines.is_empty() && b.badge.is_none() && !b.form, "{b:#?}");
    assert!(bina.text("#chat").await.contains("Chat is hidden"));
    asha.click("#reactions button[data-reaction='wow']").await;
    bina.wait_reaction(".lobby-seat[data-seat='0']", "\u{1F62E}")
        .await;
    asha.wait_reaction(".lobby-seat[data-seat='0']", "\u{1F62E}")
        .await;
    bina.screenshot("chat-hidden-lobby-phone").await;
    bina.click("#chat-hide").await;
    bina.click("#chat-toggle").await;
    let b = bina
        .wait_chat("the chat shown again", |c| c.lines.len() == 2)
        .await;
    assert_eq!(b.lines, vec!["Asha: welcome, Bina", "Asha: are you there?"]);
    assert!(b.form && b.input_enabled && b.badge.is_none(), "{b:#?}");

    // The host mutes Bina in the lobby's seat list: her input is disabled and she is told why.
    asha.click(".lobby-seat[data-seat='1'] button.mute").await;
    let b = bina
        .wait_chat("Bina muted", |c| c.muted_note.is_some())
        .await;
    assert!(!b.input_enabled, "{b:#?}");
    assert!(
        b.muted_note.as_deref().unwrap().contains("muted you"),
        "{b:#?}"
    );
    asha.until(
        "the Unmute button",
        "const b = document.querySelector(\".lobby-seat[data-seat='1'] button.mute\"); return Boolean(b) && b.textContent === 'Unmute';",
    )
    .await;
    assert!(bina.text("#lobby-seats").await.contains("muted"));
    bina.screenshot("chat-muted-lobby-phone").await;

    // A third person watches: reads the chat and reacts, but has no input; a spectator's
    // reaction shows in the chat area.
    let chandra = driver.browser(PHONE).await;
    chandra.goto(&invite).await;
    chandra
        .wait_until("the join form", |s| s.screen == "join")
        .await;
    chandra.type_into("#join-name", "Chandra").await;
    chandra.click("#join-watch").await;
    chandra
        .wait_until("the lobby", |s| s.screen == "lobby")
        .await;
    let c = chandra
        .wait_chat("the chat so far", |c| c.kept.len() == 2)
        .await;
    assert!(!c.form && c.reactions == 6, "{c:#?}");
    chandra.click("#chat-toggle").await;
    let c = chandra.wait_chat("the lines", |c| c.lines.len() == 2).await;
    assert!(!c.form && c.muted_note.is_none(), "{c:#?}");
    chandra
        .click("#reactions button[data-reaction='clap']")
        .await;
    asha.until(
        "Chandra's reaction in the chat",
        "return document.querySelector('#loose-reactions').textContent.includes('Chandra \u{1F44F}');",
    )
    .await;

    // At the table the host's chat panel has Unmute; Bina may write again.
    asha.click("#start").await;
    asha.wait_until("the table", |s| s.screen == "table" && s.hand.len() == 5)
        .await;
    bina.wait_until("the table", |s| s.screen == "table" && s.hand.len() == 5)
        .await;
    assert!(!bina.chat().await.input_enabled);
    assert!(asha.text("#seats").await.contains("muted"));
    assert_eq!(
        asha.text("#chat-moderation button[data-seat='1']").await,
        "Unmute Bina"
    );
    asha.click("#chat-moderation button[data-seat='1']").await;
    bina.wait_chat("Bina unmuted", |c| {
        c.input_enabled && c.muted_note.is_none()
    })
    .await;
    bina.say("thanks!").await;
    asha.wait_chat("Bina's line", |c| {
        c.lines.last().map(String::as_str) == Some("Bina: thanks!")
    })
    .await;
    assert_eq!(
        asha.text("#chat-moderation button[data-seat='1']").await,
        "Mute Bina"
    );
    asha.screenshot("chat-host-table-desktop").await;

    asha.assert_no_console_errors().await;
    bina.assert_no_console_errors().await;
    chandra.assert_no_console_errors().await;
    asha.close().await;
    bina.close().await;
    chandra.close().await;
}
