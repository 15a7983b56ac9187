//! The shared harness: Chromium through chromedriver, the page snapshot, and the helpers.

pub(crate) use std::io::Write as _;
pub(crate) use std::net::SocketAddr;
pub(crate) use std::path::{Path, PathBuf};
pub(crate) use std::process::{Child, Command, Stdio};
pub(crate) use std::time::{Duration, Instant};

pub(crate) use dhumbal_engine::{Card, CourtValues};
pub(crate) use dhumbal_protocol::CreatedRoom;
pub(crate) use dhumbal_tests::TestServer;
pub(crate) use fantoccini::actions::{InputSource, MOUSE_BUTTON_LEFT, MouseActions, PointerAction};
pub(crate) use fantoccini::error::CmdError;
pub(crate) use fantoccini::wd::WebDriverCompatibleCommand;
pub(crate) use fantoccini::{Client, ClientBuilder, Locator};
pub(crate) use serde::Deserialize;
pub(crate) use serde_json::{Value, json};

/// Where Debian puts the browser.
pub(crate) const CHROMIUM: &str = "/usr/bin/chromium";
/// Where Debian puts its WebDriver.
pub(crate) const CHROMEDRIVER: &str = "/usr/bin/chromedriver";
/// A phone's viewport, the narrowest the page is made for.
pub(crate) const PHONE: (u32, u32) = (360, 740);
/// A laptop's viewport.
pub(crate) const DESKTOP: (u32, u32) = (1280, 860);
/// How long any one wait may last before the test fails (a guard, not a measurement).
pub(crate) const WAIT: Duration = Duration::from_secs(30);

/// Browser tests run one at a time: each starts a whole browser on a small machine.
pub(crate) static ONE_AT_A_TIME: tokio::sync::Mutex<()> = tokio::sync::Mutex::const_new(());

/// The browser and its driver, or `None` (with the reason printed) when they are not installed.
/// Under `CI=true` a missing browser fails the test instead.
pub(crate) fn browser_tools() -> Option<(PathBuf, PathBuf)> {
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
pub(crate) fn screenshot_dir() -> PathBuf {
    let dir = Path::new(env!("CARGO_TARGET_TMPDIR"))
        .parent()
        .map(|target| target.join("screenshots"))
        .unwrap_or_else(|| PathBuf::from("screenshots"));
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

/// A port nobody listens on right now, for chromedriver.
pub(crate) fn free_port() -> u16 {
    std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port()
}

/// A temporary folder removed on drop (a browser profile).
pub(crate) struct TempDir(PathBuf);

impl TempDir {
    pub(crate) fn new(label: &str) -> TempDir {
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
pub(crate) struct Driver {
    pub(crate) child: Child,
    pub(crate) port: u16,
    pub(crate) url: String,
    pub(crate) chromium: PathBuf,
    pub(crate) profiles: Vec<TempDir>,
}

impl Driver {
    pub(crate) async fn start((chromium, driver): (PathBuf, PathBuf)) -> Driver {
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
    pub(crate) async fn browser(&mut self, (width, height): (u32, u32)) -> Browser {
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
pub(crate) struct BrowserLog;

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
pub(crate) struct Cdp {
    pub(crate) cmd: &'static str,
    pub(crate) params: Value,
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
pub(crate) const KEEP_SOCKETS: &str = "window.__sockets = []; \
    window.WebSocket = class extends window.WebSocket { \
      constructor(...args) { super(...args); window.__sockets.push(this); } };";

/// Run before the page's own scripts: the close code of every WebSocket the page opened is kept
/// in `window.__closes`, in order.
pub(crate) const RECORD_CLOSES: &str = "window.__closes = []; \
    window.WebSocket = class extends window.WebSocket { \
      constructor(...args) { super(...args); \
        this.addEventListener('close', (e) => window.__closes.push(e.code)); } };";

/// What the page shows, read in one round trip (see [`SNAPSHOT`]).
#[derive(Debug, Deserialize)]
#[serde(rename_all = "camelCase")]
pub(crate) struct Snapshot {
    pub(crate) screen: String,
    pub(crate) phase: String,
    pub(crate) round: u32,
    pub(crate) my_turn: bool,
    pub(crate) may_draw: bool,
    pub(crate) may_throw: bool,
    pub(crate) hand: Vec<String>,
    pub(crate) marked: Vec<String>,
    pub(crate) barred: Option<String>,
    pub(crate) takeable: Vec<String>,
    pub(crate) status: String,
    pub(crate) call: Option<String>,
    pub(crate) throw_text: String,
    pub(crate) throw_enabled: bool,
    pub(crate) score_open: bool,
    pub(crate) banner: bool,
    pub(crate) banner_text: String,
    pub(crate) toast: String,
    pub(crate) log: String,
}

/// The page's state as the player sees it: which screen, the table's data attributes, the hand
/// and its marks, the buttons, the dialog, the banner and the last notice.
pub(crate) const SNAPSHOT: &str = r#"
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
pub(crate) struct Browser {
    pub(crate) client: Client,
}

impl Browser {
    pub(crate) async fn goto(&self, url: &str) {
        self.client.goto(url).await.unwrap();
    }

    /// Opens a room's invite link and joins from its form as `name`, pressing `button`
    /// (`#join-sit` or `#join-watch`), then waits for the lobby.
    pub(crate) async fn join_from_link(&self, link: &str, name: &str, button: &str) {
        self.goto(link).await;
        self.wait_until("the join form", |s| s.screen == "join")
            .await;
        self.type_into("#join-name", name).await;
        self.click(button).await;
        self.wait_until("the lobby", |s| s.screen == "lobby").await;
    }

    /// Does what the page that created `room` does: keeps its host secret (as Asha's), on the
    /// server's origin, so that opening the room's link makes this page the host.
    pub(crate) async fn keep_host_secret(&self, addr: SocketAddr, room: &CreatedRoom) {
        self.goto(&format!("http://{addr}/")).await;
        self.client
            .execute(
                "localStorage.setItem('dhumbal.room.' + arguments[0], JSON.stringify({ name: 'Asha', host_secret: arguments[1], token: null }));",
                vec![json!(room.code), json!(room.host_secret)],
            )
            .await
            .unwrap();
    }

    pub(crate) async fn snapshot(&self) -> Snapshot {
        let value = self.client.execute(SNAPSHOT, vec![]).await.unwrap();
        serde_json::from_value(value).unwrap()
    }

    /// Waits until the page's state satisfies `done`, and returns that state.
    pub(crate) async fn wait_until(
        &self,
        what: &str,
        done: impl Fn(&Snapshot) -> bool,
    ) -> Snapshot {
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

    pub(crate) async fn find(&self, css: &str) -> fantoccini::elements::Element {
        self.client
            .wait()
            .at_most(WAIT)
            .for_element(Locator::Css(css))
            .await
            .unwrap_or_else(|e| panic!("no {css} on the page: {e}"))
    }

    pub(crate) async fn click(&self, css: &str) {
        self.find(css).await.click().await.unwrap();
    }

    pub(crate) async fn type_into(&self, css: &str, text: &str) {
        let input = self.find(css).await;
        input.clear().await.unwrap();
        input.send_keys(text).await.unwrap();
    }

    pub(crate) async fn text(&self, css: &str) -> String {
        self.find(css).await.text().await.unwrap()
    }

    pub(crate) async fn eval(&self, script: &str) -> Value {
        self.client.execute(script, vec![]).await.unwrap()
    }

    /// Fails if the page is wider than the window (a phone would have to scroll sideways).
    pub(crate) async fn assert_fits_the_width(&self, what: &str) {
        let widths = self
            .eval("const d = document.documentElement; return [d.scrollWidth, d.clientWidth];")
            .await;
        assert!(
            widths[0].as_u64() <= widths[1].as_u64(),
            "{what} is wider than the window: {widths}"
        );
    }

    /// Types keys into the page, as a person at a keyboard would.
    pub(crate) async fn keys(&self, text: &str) {
        self.find("body").await.send_keys(text).await.unwrap();
    }

    /// Clicks a card of the hand (a tap: mark or unmark).
    pub(crate) async fn tap(&self, card: &str) {
        self.click(&format!("#hand .card[data-card='{card}']"))
            .await;
    }

    /// Drags a card of the hand onto the pile with the mouse.
    pub(crate) async fn drag_to_pile(&self, card: &str) {
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
    pub(crate) async fn screenshot(&self, name: &str) {
        let png = self.client.screenshot().await.unwrap();
        let path = screenshot_dir().join(format!("{name}.png"));
        std::fs::write(&path, png).unwrap();
        let _ = writeln!(std::io::stderr(), "screenshot: {}", path.display());
    }

    /// Fails on any error the page logged to the console (or any failed load).
    pub(crate) async fn assert_no_console_errors(&self) {
        self.assert_no_console_errors_but(|_| false).await;
    }

    /// Like [`Browser::assert_no_console_errors`], but passes over the errors whose message
    /// `expected` accepts, and returns those messages.
    pub(crate) async fn assert_no_console_errors_but(
        &self,
        expected: impl Fn(&str) -> bool,
    ) -> Vec<String> {
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
    pub(crate) async fn until(&self, what: &str, script: &str) {
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

    pub(crate) async fn close(self) {
        self.client.close().await.unwrap();
    }
}

pub(crate) fn cards(texts: &[String]) -> Vec<Card> {
    texts.iter().map(|t| t.parse().unwrap()).collect()
}

pub(crate) fn value(card: &str) -> u32 {
    card.parse::<Card>().unwrap().value(CourtValues::Tens)
}

/// A number as the score rows print it: `+38`, `−12` (a minus sign), `0`.
pub(crate) fn score_number(text: &str) -> i64 {
    let text = text.trim().replace('\u{2212}', "-").replace('+', "");
    text.parse()
        .unwrap_or_else(|_| panic!("not a score: {text:?}"))
}

/// The files a page or script names with `"/assets/…"` or `"./…"`.
pub(crate) fn referenced_assets(text: &str) -> Vec<String> {
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

/// Creates a room from the home page as `name`, landing in its lobby; returns the invite link.
pub(crate) async fn create_room(b: &Browser, addr: SocketAddr, name: &str) -> String {
    b.goto(&format!("http://{addr}/")).await;
    create_room_here(b, addr, name).await
}

/// Creates a room from the home page already open, with the settings it shows.
pub(crate) async fn create_room_here(b: &Browser, addr: SocketAddr, name: &str) -> String {
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

/// Whether a console error is Chromium's own line for a WebSocket that could not connect to
/// `addr` (`WebSocket connection to 'ws://…/ws' failed: …`): what the page's reconnection
/// attempts log while the server is down. Nothing else is passed over.
pub(crate) fn refused_websocket(addr: SocketAddr, message: &str) -> bool {
    message.contains(&format!("WebSocket connection to 'ws://{addr}/ws' failed"))
}

/// The seat this page plays: the one seat `#seats` leaves out (it shows the others).
pub(crate) async fn own_seat(b: &Browser) -> usize {
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
pub(crate) async fn stored_token(b: &Browser, code: &str) -> Value {
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
pub(crate) async fn draw_and_throw_it_back(b: &Browser) {
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
