//! The shared harness: Chromium through chromedriver, the page snapshot, and the helpers.

pub(crate) use std::io::Write as _;
pub(crate) use std::net::SocketAddr;
pub(crate) use std::path::{Path, PathBuf};
pub(crate) use std::process::{Command, Stdio};
pub(crate) use std::time::{Duration, Instant};

pub(crate) use crate::webdriver::{Client, CmdError, Element};
pub(crate) use dhumbal_engine::{Card, CourtValues, Preset, Rounds, Settings};
pub(crate) use dhumbal_protocol::{CreateRoom, CreatedRoom};
pub(crate) use dhumbal_tests::TestServer;
pub(crate) use dhumbal_tests::server::{fast_turns, test_config};
pub(crate) use serde::Deserialize;
pub(crate) use serde::de::DeserializeOwned;
pub(crate) use serde_json::{Value, json};

/// Where Debian puts the browser (package `chromium`).
pub(crate) const CHROMIUM: &str = "/usr/bin/chromium";
/// Where Debian puts Chromium's headless shell (package `chromium-headless-shell`): the same
/// Blink, V8 and network stack without the desktop browser around them, as Puppeteer and
/// Playwright use for headless tests. The suite runs in it when it is installed: on this 2-core
/// machine the suite took 121 s in it and 233 s in the full browser, both CPU-bound (the
/// browser's processes were nine tenths of the machine's CPU). The real binary, not Debian's
/// `/usr/bin` wrapper script, so that chromedriver's quit reaches the browser itself.
pub(crate) const HEADLESS_SHELL: &str = "/usr/lib/chromium/chromium-headless-shell";
/// Where Debian puts its WebDriver.
pub(crate) const CHROMEDRIVER: &str = "/usr/bin/chromedriver";
/// A phone's viewport, the narrowest the page is made for.
pub(crate) const PHONE: (u32, u32) = (360, 740);
/// A laptop's viewport.
pub(crate) const DESKTOP: (u32, u32) = (1280, 860);
/// How long any one wait may last before the test fails (a guard, not a measurement).
pub(crate) const WAIT: Duration = Duration::from_secs(30);

/// How many browser tests run at once: `DHUMBAL_BROWSER_TESTS`, or four. A browser test spends
/// most of its time waiting on its page (a 2-core machine ran the suite in 386 s two at a time
/// and 299 s four at a time, its CPU then saturated). The test runner's own threads bound it too
/// (`RUST_TEST_THREADS`, four in `.cargo/config.toml`).
fn browsers_at_once() -> u32 {
    std::env::var("DHUMBAL_BROWSER_TESTS")
        .ok()
        .and_then(|n| n.parse::<u32>().ok())
        .filter(|&n| n > 0)
        .unwrap_or(4)
}

/// The turns to run a browser test: [`browsers_at_once`] of them.
static TURNS: std::sync::LazyLock<tokio::sync::Semaphore> =
    std::sync::LazyLock::new(|| tokio::sync::Semaphore::new(browsers_at_once() as usize));

/// A turn to run a browser test beside others, held until dropped.
pub(crate) async fn browser_turn() -> tokio::sync::SemaphorePermit<'static> {
    TURNS
        .acquire()
        .await
        .expect("the semaphore is never closed")
}

/// Every turn at once, for a test that measures (a load's time) and must run alone.
pub(crate) async fn browser_turn_alone() -> tokio::sync::SemaphorePermit<'static> {
    TURNS
        .acquire_many(browsers_at_once())
        .await
        .expect("the semaphore is never closed")
}

/// What a browser test stands on: its turn ([`browser_turn`]), a server on a loopback port and
/// the test binary's chromedriver ([`Driver::shared`]). Dropped in that order's reverse: the
/// browsers (kept for the next test or closed), the server, then the turn.
pub(crate) struct Stage {
    pub(crate) driver: std::sync::Arc<Driver>,
    pub(crate) server: TestServer,
    pub(crate) addr: SocketAddr,
    _turn: tokio::sync::SemaphorePermit<'static>,
}

impl Stage {
    /// A stage with the test server's defaults, or `None` when the browser is not installed
    /// (see [`browser_tools`]).
    pub(crate) async fn start() -> Option<Stage> {
        Stage::with_config(test_config()).await
    }

    /// A stage whose server has this configuration, compressing the web client at its start
    /// as a real server does ([`serving_the_page`]).
    pub(crate) async fn with_config(config: dhumbal_server::Config) -> Option<Stage> {
        Stage::on(TestServer::with_config(serving_the_page(config))).await
    }

    /// A stage with the test server's defaults that no other browser test runs beside.
    pub(crate) async fn alone() -> Option<Stage> {
        let tools = browser_tools()?;
        let turn = browser_turn_alone().await;
        let server = TestServer::with_config(serving_the_page(test_config()));
        Stage::with(tools, turn, server).await
    }

    /// A stage with the test server's defaults whose windows open in this Chromium.
    pub(crate) async fn in_chromium(which: Chromium) -> Option<Stage> {
        let server = TestServer::with_config(serving_the_page(test_config()));
        Stage::on_in(which, server).await
    }

    async fn on(server: impl Future<Output = TestServer>) -> Option<Stage> {
        Stage::on_in(Chromium::Suite, server).await
    }

    async fn on_in(which: Chromium, server: impl Future<Output = TestServer>) -> Option<Stage> {
        let tools = tools_for(which)?;
        let turn = browser_turn().await;
        Stage::with(tools, turn, server).await
    }

    async fn with(
        tools: (PathBuf, PathBuf),
        turn: tokio::sync::SemaphorePermit<'static>,
        server: impl Future<Output = TestServer>,
    ) -> Option<Stage> {
        let server = server.await;
        let addr = server.addr;
        let driver = Driver::shared(tools);
        Some(Stage {
            driver,
            server,
            addr,
            _turn: turn,
        })
    }

    /// A new browser window of this size.
    pub(crate) async fn browser(&mut self, size: (u32, u32)) -> Browser {
        self.driver.browser(size).await
    }
}

/// `config` for a server whose page is opened: its web client compressed at its start, as a
/// real server's is (the test servers' default compresses each file on its first request), so
/// that a page's first load waits on the network, not on the compression. It is done once per
/// process.
pub(crate) fn serving_the_page(config: dhumbal_server::Config) -> dhumbal_server::Config {
    dhumbal_server::Config {
        lazy_web_compression: false,
        ..config
    }
}

/// The test's [`Stage`] (`stage!()`, `stage!(config)` for a server with this configuration
/// (`stage!(fast_turns(ms))` for one whose turn timers run fast, for a test that only needs a
/// turn to run out), `stage!(alone)` for one no other browser test runs beside, or
/// `stage!(in which)` for one whose windows open in this [`Chromium`]), or, when the browser is
/// not installed, a return from the test, which passes having said why.
macro_rules! stage {
    (in $which:expr) => {
        match Stage::in_chromium($which).await {
            Some(stage) => stage,
            None => return,
        }
    };
    (alone) => {
        match Stage::alone().await {
            Some(stage) => stage,
            None => return,
        }
    };
    () => {
        match Stage::start().await {
            Some(stage) => stage,
            None => return,
        }
    };
    ($config:expr) => {
        match Stage::with_config($config).await {
            Some(stage) => stage,
            None => return,
        }
    };
}
pub(crate) use stage;

/// Which Chromium a test's windows open in.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Chromium {
    /// The suite's: `DHUMBAL_CHROMIUM` if set, else the headless shell ([`HEADLESS_SHELL`]) if
    /// installed, else the full browser ([`CHROMIUM`]).
    Suite,
    /// The full browser, always: for the few tests that check, in what a player runs, what
    /// the whole suite checks in the shell (the layout at every size, installability).
    Full,
}

impl Chromium {
    /// What a screenshot's name ends with for this browser: nothing for the suite's, `-full`.
    pub(crate) fn suffix(self) -> &'static str {
        match self {
            Chromium::Suite => "",
            Chromium::Full => "-full",
        }
    }

    /// The browser binary to start.
    fn binary(self) -> PathBuf {
        match self {
            Chromium::Full => PathBuf::from(CHROMIUM),
            Chromium::Suite => std::env::var_os("DHUMBAL_CHROMIUM")
                .map(PathBuf::from)
                .or_else(|| Some(PathBuf::from(HEADLESS_SHELL)).filter(|p| p.exists()))
                .unwrap_or_else(|| PathBuf::from(CHROMIUM)),
        }
    }
}

/// Whether `binary` is Chromium's headless shell (by its file name, as chromedriver tells).
fn is_headless_shell(binary: &Path) -> bool {
    binary
        .file_name()
        .is_some_and(|name| name.to_string_lossy().contains("headless-shell"))
}

/// The suite's browser and its driver, or `None` (with the reason printed) when they are not
/// installed. Under `CI=true` a missing browser fails the test instead.
pub(crate) fn browser_tools() -> Option<(PathBuf, PathBuf)> {
    tools_for(Chromium::Suite)
}

/// This browser and its driver, as [`browser_tools`] says.
pub(crate) fn tools_for(which: Chromium) -> Option<(PathBuf, PathBuf)> {
    let chromium = which.binary();
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

/// What keeps a [`Driver`]'s chromedriver (`$1`, on port `$2`): it starts it, reads its stdin
/// until this test binary's end of the pipe closes (the binary exited, however it exited), then
/// asks chromedriver to shut down, which quits every browser it started.
const KEEPER: &str = r#"
"$1" --port="$2" --log-level=WARNING >/dev/null 2>&1 &
driver=$!
cat >/dev/null
{ exec 3<>"/dev/tcp/127.0.0.1/$2" &&
  printf 'GET /shutdown HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n' >&3 &&
  cat <&3 >/dev/null; } 2>/dev/null || kill "$driver"
wait "$driver"
"#;

/// The test binary's chromedrivers, one per Chromium binary.
static DRIVERS: std::sync::Mutex<Vec<std::sync::Arc<Driver>>> = std::sync::Mutex::new(Vec::new());

/// A chromedriver on a loopback port, one per Chromium binary for the whole test binary (see
/// [`KEEPER`]), and the headless shell's windows the tests are done with.
///
/// Starting a browser costs about 0.4 CPU-s; the suite opens over a hundred windows. A shell's
/// window a test is done with ([`Browser`]'s drop) is emptied (`about:blank`, what the test set
/// through [`Browser::before_each_page`] and [`Browser::reduce_motion`], the storage of every
/// origin it opened, the HTTP cache and the cookies) and kept for the next test that asks for a
/// window of its size. Every test's server has a port, hence an origin, of its own, so a page
/// never sees another test's storage even before it is cleared. A window a test changed in ways
/// a cleared one would still show (other DevTools commands, other windows, raw WebDriver: see
/// [`Browser::client`]) is closed instead, as is every window of the full browser (each has a
/// profile folder of its own) and every window of a failed test.
pub(crate) struct Driver {
    port: u16,
    chromium: PathBuf,
    /// Windows ready for another test: their size and their WebDriver session.
    idle: std::sync::Mutex<Vec<((u32, u32), String)>>,
    /// The write end of the pipe [`KEEPER`] reads, held open until the process exits.
    _lifeline: std::process::ChildStdin,
    /// [`KEEPER`]'s process, never waited for: it outlives this one by design.
    _keeper: std::process::Child,
}

impl Driver {
    /// The chromedriver for this Chromium, started on first use.
    pub(crate) fn shared((chromium, driver): (PathBuf, PathBuf)) -> std::sync::Arc<Driver> {
        let mut drivers = DRIVERS.lock().unwrap_or_else(|e| e.into_inner());
        if let Some(running) = drivers.iter().find(|d| d.chromium == chromium) {
            return running.clone();
        }
        let port = free_port();
        let mut keeper = Command::new("bash")
            .args(["-c", KEEPER, "keeper"])
            .arg(&driver)
            .arg(port.to_string())
            .stdin(Stdio::piped())
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .expect("bash starts chromedriver");
        let lifeline = keeper.stdin.take().expect("a piped stdin");
        let started = Instant::now();
        while std::net::TcpStream::connect(("127.0.0.1", port)).is_err() {
            assert!(started.elapsed() < WAIT, "chromedriver did not listen");
            std::thread::sleep(Duration::from_millis(50));
        }
        let running = std::sync::Arc::new(Driver {
            port,
            chromium,
            idle: std::sync::Mutex::new(Vec::new()),
            _lifeline: lifeline,
            _keeper: keeper,
        });
        drivers.push(running.clone());
        running
    }

    /// A headless browser window of this size: a kept one if there is one, else a new one with
    /// its own fresh profile.
    pub(crate) async fn browser(self: &std::sync::Arc<Self>, size: (u32, u32)) -> Browser {
        let kept = {
            let mut idle = self.idle.lock().unwrap_or_else(|e| e.into_inner());
            idle.iter()
                .position(|(s, _)| *s == size)
                .map(|i| idle.swap_remove(i).1)
        };
        if let Some(session) = kept {
            let client = Client::attach(self.port, &session);
            // What the last test's pages wrote to the console is not this test's (and a window
            // that answers is still there).
            match client.browser_log().await {
                Ok(_) => return self.window(client, session, size, None),
                Err(e) => {
                    println!("a kept window would not attach, starting another: {e}");
                    self.command("DELETE", &format!("/session/{session}"), "");
                }
            }
        }
        self.new_browser(size).await
    }

    /// A new browser process with one window of this size.
    async fn new_browser(self: &std::sync::Arc<Self>, (width, height): (u32, u32)) -> Browser {
        let mut args = vec![
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
        ];
        let mut profile = None;
        if is_headless_shell(&self.chromium) {
            // The shell started with a profile folder of ours never shows chromedriver a page
            // ("unable to discover open pages"); without one chromedriver gives each session a
            // fresh folder of its own and deletes it at the session's end: the same isolation.
        } else {
            let folder = tempfile::Builder::new()
                .prefix("dhumbal-browser-profile-")
                .tempdir()
                .expect("a temporary profile folder");
            args.push(format!("--user-data-dir={}", folder.path().display()));
            profile = Some(folder);
        }
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
        // Chromium now and then exits while starting on a loaded machine (chromedriver says
        // "session not created: Chrome instance exited"); a second start is a fresh process.
        let mut attempts = 0;
        let client = loop {
            attempts += 1;
            match Client::new_session(self.port, caps.clone()).await {
                Ok(client) => break client,
                Err(e) if attempts < 3 => {
                    println!("browser start {attempts} failed, trying again: {e}");
                    tokio::time::sleep(Duration::from_secs(1)).await;
                }
                Err(e) => panic!("a browser session starts: {e:?}"),
            }
        };
        // The session outlives this client: the window's drop decides whether it is kept.
        let session = client.session_id().to_owned();
        self.window(client, session, (width, height), profile)
    }

    fn window(
        self: &std::sync::Arc<Self>,
        client: Client,
        session: String,
        size: (u32, u32),
        profile: Option<tempfile::TempDir>,
    ) -> Browser {
        Browser {
            keep: std::sync::atomic::AtomicBool::new(profile.is_none()),
            client,
            session,
            size,
            driver: self.clone(),
            origins: std::sync::Mutex::new(Vec::new()),
            undo: std::sync::Mutex::new(Vec::new()),
            _profile: profile,
        }
    }

    /// Sends one WebDriver command and waits for its answer, from code that cannot wait
    /// asynchronously (a drop); whether chromedriver answered 200. chromedriver keeps the
    /// connection open after its answer, so the answer is read to its `Content-Length`.
    fn command(&self, method: &str, path: &str, body: &str) -> bool {
        use std::io::{BufRead as _, Read as _};
        let Ok(socket) = std::net::TcpStream::connect(("127.0.0.1", self.port)) else {
            return false;
        };
        let _ = socket.set_read_timeout(Some(WAIT));
        let request = format!(
            "{method} {path} HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n\
             Content-Length: {}\r\n\r\n{body}",
            body.len()
        );
        if (&socket).write_all(request.as_bytes()).is_err() {
            return false;
        }
        let mut answer = std::io::BufReader::new(&socket);
        let mut status = String::new();
        if answer.read_line(&mut status).is_err() {
            return false;
        }
        let mut length = 0;
        loop {
            let mut header = String::new();
            if answer.read_line(&mut header).is_err() || header.trim().is_empty() {
                break;
            }
            if let Some((name, value)) = header.split_once(':')
                && name.eq_ignore_ascii_case("content-length")
            {
                length = value.trim().parse().unwrap_or(0);
            }
        }
        let mut rest = vec![0; length];
        answer.read_exact(&mut rest).is_ok() && status.starts_with("HTTP/1.1 200")
    }

    /// Runs a DevTools command in `session`'s window, as [`Driver::command`].
    fn devtools(&self, session: &str, cmd: &str, params: Value) -> bool {
        let body = json!({ "cmd": cmd, "params": params }).to_string();
        self.command(
            "POST",
            &format!("/session/{session}/goog/cdp/execute"),
            &body,
        )
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

/// One headless browser window, kept for another test when dropped if it may be (see
/// [`Driver`]).
pub(crate) struct Browser {
    client: Client,
    /// Its WebDriver session.
    session: String,
    size: (u32, u32),
    driver: std::sync::Arc<Driver>,
    /// Whether it may be kept for another test: nothing was done to it that a cleared window
    /// would still show.
    keep: std::sync::atomic::AtomicBool,
    /// The origins it opened, whose storage is cleared before it is kept.
    origins: std::sync::Mutex<Vec<String>>,
    /// DevTools commands that undo what the test set (a script before each page, an emulated
    /// preference), run before it is kept.
    undo: std::sync::Mutex<Vec<(&'static str, Value)>>,
    /// The full browser's profile folder, deleted after the window is closed.
    _profile: Option<tempfile::TempDir>,
}

impl Drop for Browser {
    /// Keeps the window for the next test of its size once it is emptied (see [`Driver`]), or
    /// closes it: when it may not be kept, when emptying it failed, or when the test failed.
    fn drop(&mut self) {
        let session = &self.session;
        let driver = &self.driver;
        let origins = std::mem::take(&mut *self.origins.lock().unwrap_or_else(|e| e.into_inner()));
        let undo = std::mem::take(&mut *self.undo.lock().unwrap_or_else(|e| e.into_inner()));
        let kept = self.keep.load(std::sync::atomic::Ordering::Relaxed)
            && !std::thread::panicking()
            && driver.command(
                "POST",
                &format!("/session/{session}/url"),
                r#"{"url":"about:blank"}"#,
            )
            && undo
                .into_iter()
                .all(|(cmd, params)| driver.devtools(session, cmd, params))
            && origins.iter().all(|origin| {
                driver.devtools(
                    session,
                    "Storage.clearDataForOrigin",
                    json!({ "origin": origin, "storageTypes": "all" }),
                )
            })
            && driver.devtools(session, "Network.clearBrowserCache", json!({}))
            && driver.devtools(session, "Network.clearBrowserCookies", json!({}));
        if kept {
            let mut idle = driver.idle.lock().unwrap_or_else(|e| e.into_inner());
            idle.push((self.size, session.clone()));
        } else {
            driver.command("DELETE", &format!("/session/{session}"), "");
        }
    }
}

impl Browser {
    pub(crate) async fn goto(&self, url: &str) {
        if let Ok(parsed) = url::Url::parse(url) {
            let origin = parsed.origin().ascii_serialization();
            let mut origins = self.origins.lock().unwrap_or_else(|e| e.into_inner());
            if !origins.contains(&origin) {
                origins.push(origin);
            }
        }
        self.client.goto(url).await.unwrap();
    }

    /// The WebDriver client itself, for what the helpers do not do. The window is then closed
    /// at the end of the test, not kept: what the test did with it is not known.
    pub(crate) fn client(&self) -> &Client {
        self.keep.store(false, std::sync::atomic::Ordering::Relaxed);
        &self.client
    }

    /// Runs `script` in the page and returns what it returns.
    pub(crate) async fn execute(&self, script: &str, args: Vec<Value>) -> Result<Value, CmdError> {
        self.client.execute(script, args).await
    }

    /// Runs `script` in the page and returns what it passes to its callback (its last argument).
    pub(crate) async fn execute_async(
        &self,
        script: &str,
        args: Vec<Value>,
    ) -> Result<Value, CmdError> {
        self.client.execute_async(script, args).await
    }

    /// Reloads the page.
    pub(crate) async fn refresh(&self) {
        self.client.refresh().await.unwrap();
    }

    /// The page's title.
    pub(crate) async fn title(&self) -> String {
        self.client.title().await.unwrap()
    }

    /// Opens the home page and waits for it.
    pub(crate) async fn open_home(&self, addr: SocketAddr) {
        self.goto(&format!("http://{addr}/")).await;
        self.wait_until("the home page", |s| s.screen == "home")
            .await;
    }

    /// Opens a room's invite link and waits for its join form.
    pub(crate) async fn open_join_form(&self, link: &str) {
        self.goto(link).await;
        self.wait_until("the join form", |s| s.screen == "join")
            .await;
    }

    /// On the join form: types `name` and presses `button` (`#join-sit`, `#join-watch` or
    /// `#join-full`).
    pub(crate) async fn join_as(&self, name: &str, button: &str) {
        self.type_into("#join-name", name).await;
        self.click(button).await;
    }

    /// Opens a room's invite link and joins from its form as `name`, pressing `button`
    /// (`#join-sit` or `#join-watch`), then waits for the lobby.
    pub(crate) async fn join_from_link(&self, link: &str, name: &str, button: &str) {
        self.open_join_form(link).await;
        self.join_as(name, button).await;
        self.wait_until("the lobby", |s| s.screen == "lobby").await;
    }

    /// Does what the page that created `room` does: keeps its host secret (as `name`'s), on the
    /// server's origin, so that opening the room's link makes this page the host.
    pub(crate) async fn keep_host_secret(&self, addr: SocketAddr, room: &CreatedRoom, name: &str) {
        self.goto(&format!("http://{addr}/")).await;
        self.client
            .execute(
                "localStorage.setItem('dhumbal.room.' + arguments[0], JSON.stringify({ name: arguments[2], host_secret: arguments[1], token: null }));",
                vec![json!(room.code), json!(room.host_secret), json!(name)],
            )
            .await
            .unwrap();
    }

    /// Makes this page the host of `room` under `name` (as the page that created it would be),
    /// opens the room's link and waits for the lobby.
    pub(crate) async fn host_room(&self, addr: SocketAddr, room: &CreatedRoom, name: &str) {
        self.keep_host_secret(addr, room, name).await;
        self.goto(&format!("http://{addr}{}", room.url)).await;
        self.wait_until("the lobby", |s| s.screen == "lobby").await;
    }

    /// Switches the page's language with the control in its header, and waits for it.
    pub(crate) async fn switch_language(&self, lang: &str) {
        self.click(&format!("#lang-switch button[data-lang='{lang}']"))
            .await;
        self.until(
            "the language to switch",
            &format!("return document.documentElement.lang === '{lang}';"),
        )
        .await;
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
        poll(what, async || self.snapshot().await, done).await
    }

    /// What `script` (a function body) reads from the page, as a `T`.
    pub(crate) async fn view<T: DeserializeOwned>(&self, script: &str) -> T {
        serde_json::from_value(self.eval(script).await).unwrap()
    }

    /// Waits until what `script` reads satisfies `done`, and returns it.
    pub(crate) async fn wait_view<T: DeserializeOwned + std::fmt::Debug>(
        &self,
        what: &str,
        script: &str,
        done: impl Fn(&T) -> bool,
    ) -> T {
        poll(what, async || self.view(script).await, done).await
    }

    pub(crate) async fn find(&self, css: &str) -> Element {
        self.client
            .wait_for(css, WAIT, LOOK_EVERY)
            .await
            .unwrap_or_else(|e| panic!("no {css} on the page: {e}"))
    }

    /// Clicks what `css` finds, as [`Browser::act_on`] does.
    pub(crate) async fn click(&self, css: &str) {
        self.act_on("clicking", css, async |element| element.click().await)
            .await;
    }

    /// Types `text` into the field `css` finds, in place of what it held, as
    /// [`Browser::act_on`] does.
    pub(crate) async fn type_into(&self, css: &str, text: &str) {
        self.act_on("typing into", css, async |element| {
            element.clear().await?;
            element.send_keys(text).await
        })
        .await;
    }

    /// Does `act` to what `css` finds. An element the page re-rendered between the find and the
    /// act (a stale reference) is found again, and one the page does not show yet (its section
    /// still hidden while the page's script starts, "not interactable") is waited for: the test
    /// means whatever `css` names once the page shows it. Fails after [`WAIT`].
    async fn act_on(
        &self,
        doing: &str,
        css: &str,
        act: impl AsyncFn(Element) -> Result<(), CmdError>,
    ) {
        let started = Instant::now();
        loop {
            match act(self.find(css).await).await {
                Ok(()) => return,
                Err(e)
                    if (e.is("stale element reference") || e.is("element not interactable"))
                        && started.elapsed() < WAIT =>
                {
                    tokio::time::sleep(LOOK_EVERY).await;
                }
                Err(e) => panic!("{doing} {css}: {e}"),
            }
        }
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
        self.client
            .drag(&from, (0, -30), &pile, (0, 0))
            .await
            .unwrap();
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
        let entries = match self.client.browser_log().await {
            Ok(entries) => entries,
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
        poll(
            what,
            async || self.eval(script).await,
            |v| *v == json!(true),
        )
        .await;
    }

    /// Waits until `css` holds `text` (by `textContent`).
    pub(crate) async fn until_text(&self, css: &str, text: &str) {
        self.until(
            &format!("{css} to say {text:?}"),
            &format!(
                "const e = document.querySelector({css:?}); return Boolean(e) && e.textContent.includes({text:?}) || (e ? e.textContent : 'no element');"
            ),
        )
        .await;
    }

    /// Chooses `value` in the `<select>` at `css`.
    pub(crate) async fn select(&self, css: &str, value: &str) {
        self.find(css).await.select_by_value(value).await.unwrap();
    }

    /// Types keys into the element that has the focus.
    pub(crate) async fn press(&self, keys: &str) {
        let focused = self.client.active_element().await.unwrap();
        focused.send_keys(keys).await.unwrap();
    }

    /// Runs a Chrome DevTools command in this browser.
    pub(crate) async fn cdp(&self, cmd: &'static str, params: Value) {
        self.client().cdp(cmd, params).await.unwrap();
    }

    /// Runs `script` before the page's own scripts, on every page loaded from now on.
    /// Removed again before the window is kept for another test.
    pub(crate) async fn before_each_page(&self, script: &str) {
        let added = self
            .client
            .cdp(
                "Page.addScriptToEvaluateOnNewDocument",
                json!({ "source": script }),
            )
            .await
            .unwrap();
        self.undo_at_the_end(
            "Page.removeScriptToEvaluateOnNewDocument",
            json!({ "identifier": added["identifier"] }),
        );
    }

    /// Emulates a system that asks for reduced motion, until the window is kept for another
    /// test.
    pub(crate) async fn reduce_motion(&self) {
        self.client
            .cdp(
                "Emulation.setEmulatedMedia",
                json!({ "features": [{ "name": "prefers-reduced-motion", "value": "reduce" }] }),
            )
            .await
            .unwrap();
        self.undo_at_the_end("Emulation.setEmulatedMedia", json!({ "features": [] }));
    }

    /// A DevTools command that undoes what the test did, run before the window is kept.
    fn undo_at_the_end(&self, cmd: &'static str, params: Value) {
        let mut undo = self.undo.lock().unwrap_or_else(|e| e.into_inner());
        undo.push((cmd, params));
    }

    /// Done with the window: it is emptied and kept for another test, or closed (see the drop).
    pub(crate) async fn close(self) {
        tokio::task::block_in_place(|| drop(self));
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

/// The files a page or script names with `"/assets/{version}/…"` or `"./…"`.
pub(crate) fn referenced_assets(text: &str) -> Vec<String> {
    let mut names = Vec::new();
    let versioned = format!("/assets/{}/", dhumbal_server::web::version());
    for piece in text.split('"').skip(1).step_by(2) {
        let name = piece
            .strip_prefix(versioned.as_str())
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

/// Whether a console error is Chromium's own line for a room's WebSocket that could not connect
/// to `addr` (`WebSocket connection to 'ws://…/ws/{code}' failed: …`, or `…/ws/{code}?compress=
/// deflate-raw'`): what the page's reconnection attempts log while the server is down. Nothing
/// else is passed over.
pub(crate) fn refused_websocket(addr: SocketAddr, message: &str) -> bool {
    let opening = format!("WebSocket connection to 'ws://{addr}/ws/");
    message.find(&opening).is_some_and(|at| {
        let rest = &message[at + opening.len()..];
        rest.split_once("' failed").is_some_and(|(url, _)| {
            let code = url.strip_suffix("?compress=deflate-raw").unwrap_or(url);
            !code.is_empty() && code.bytes().all(|b| b.is_ascii_alphanumeric())
        })
    })
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
    let card = new_card(&turn, &drawn);
    assert!(value(&card) >= 6, "the stock's top is heavy: {card}");
    b.tap(&card).await;
    let ready = b.snapshot().await;
    assert_eq!(ready.marked, vec![card.clone()]);
    assert_eq!(ready.throw_text, format!("Throw {}", value(&card)));
    b.click("#throw").await;
    // Landed: the card has left the hand. (Not "no longer this page's turn": on a busy machine
    // the bots, who play at once, may bring the turn back before the page is looked at.)
    b.wait_until("the throw to land", |s| {
        !s.may_throw && !s.hand.contains(&card)
    })
    .await;
}

/// Reads with `read` until `done` accepts what it read, and returns that; fails after [`WAIT`],
/// saying what it waited for and what it read last.
pub(crate) async fn poll<T: std::fmt::Debug>(
    what: &str,
    mut read: impl AsyncFnMut() -> T,
    done: impl Fn(&T) -> bool,
) -> T {
    let started = Instant::now();
    loop {
        let seen = read().await;
        if done(&seen) {
            return seen;
        }
        assert!(
            started.elapsed() < WAIT,
            "waited too long for {what}; the page shows {seen:#?}"
        );
        tokio::time::sleep(LOOK_EVERY).await;
    }
}

/// How long a test waits between two looks at a page that is not there yet. Each look is a
/// WebDriver command through chromedriver to the page, and a wait for a turn timer or a
/// reconnection looks many times: at 25 ms (forty looks a second) the suite spent 291 CPU-s,
/// at 100 ms 249 and 266 in the same wall time, and with a pause growing from 25 ms to 100 ms 281
/// (`CI=true`, the suite's binary alone under a whole-machine CPU count, 2026-12-05).
pub(crate) const LOOK_EVERY: Duration = Duration::from_millis(100);

/// The room's code, from the invite link.
pub(crate) fn code_of(invite: &str) -> String {
    invite.rsplit('/').next().unwrap_or_default().to_owned()
}

/// The heaviest card of the hand that may be thrown (not the barred one).
pub(crate) fn heaviest(s: &Snapshot) -> String {
    s.hand
        .iter()
        .filter(|c| Some(*c) != s.barred.as_ref())
        .max_by_key(|c| value(c))
        .unwrap()
        .clone()
}

/// The card in the hand `after` that the hand `before` did not hold (the one just drawn).
pub(crate) fn new_card(before: &Snapshot, after: &Snapshot) -> String {
    after
        .hand
        .iter()
        .find(|c| !before.hand.contains(c))
        .expect("a new card in the hand")
        .clone()
}

/// Two people in one room: `host` creates it as Asha, `guest` sits down as Bina, and the host
/// waits to see her in the lobby. Returns the invite link.
pub(crate) async fn two_in_a_room(host: &Browser, guest: &Browser, addr: SocketAddr) -> String {
    let invite = create_room(host, addr, "Asha").await;
    guest.join_from_link(&invite, "Bina", "#join-sit").await;
    host.until_text("#lobby-seats", "Bina").await;
    invite
}

/// The host (the first page) starts the match; every page waits for the table and its five
/// cards. Returns what each page shows then.
pub(crate) async fn start_and_deal(pages: &[&Browser]) -> Vec<Snapshot> {
    pages[0].click("#start").await;
    let mut dealt = Vec::new();
    for page in pages {
        dealt.push(
            page.wait_until("the table", |s| s.screen == "table" && s.hand.len() == 5)
                .await,
        );
    }
    dealt
}

/// Plays this page's turns at a draw-then-throw table until the score dialog opens: it draws from
/// the stock, marks its heaviest card and throws it, and calls when it may. `first_throw`, when
/// given, runs once with the first heaviest card marked, before it is thrown, and the page calls
/// only after that. Returns the page's state on the turn it called, if it did.
pub(crate) async fn play_to_the_score(
    b: &Browser,
    first_throw: Option<impl AsyncFnOnce(&str)>,
) -> Option<Snapshot> {
    let mut first_throw = first_throw;
    let started = Instant::now();
    loop {
        let s = my_turn_or_the_score(b, started).await;
        if s.score_open {
            return None;
        }
        if s.call.is_some() && first_throw.is_none() {
            b.click("#call").await;
            b.wait_until("the show", |s| s.score_open).await;
            return Some(s);
        }
        if s.may_draw {
            b.click("#stock").await;
            b.wait_until("the draw", |s| !s.may_draw || s.score_open)
                .await;
            continue;
        }
        if s.may_throw {
            let heaviest = heaviest(&s);
            b.tap(&heaviest).await;
            if let Some(first_throw) = first_throw.take() {
                first_throw(&heaviest).await;
            }
            b.click("#throw").await;
            b.wait_until("the throw to land", |s| {
                s.score_open || !s.hand.contains(&heaviest)
            })
            .await;
        }
    }
}

/// Waits until it is this page's turn or the score dialog is open, and returns the page's state
/// then; fails once five minutes have passed since `started` (the round's start).
pub(crate) async fn my_turn_or_the_score(b: &Browser, started: Instant) -> Snapshot {
    loop {
        assert!(
            started.elapsed() < Duration::from_secs(300),
            "the round never ended"
        );
        let s = b.snapshot().await;
        if s.score_open || s.my_turn {
            return s;
        }
        tokio::time::sleep(LOOK_EVERY).await;
    }
}

/// No hook for [`play_to_the_score`]: the page calls as soon as it may.
pub(crate) const CALL_AT_ONCE: Option<fn(&str) -> std::future::Ready<()>> = None;

/// Fails on any error in the pages' consoles, then closes them.
pub(crate) async fn check_and_close(pages: Vec<Browser>) {
    for page in &pages {
        page.assert_no_console_errors().await;
    }
    for page in pages {
        page.close().await;
    }
}

/// Opens the table's menu (the throws, the direction, the deal commitment and the turn alert,
/// each explained) and waits for it.
pub(crate) async fn open_table_menu(b: &Browser) {
    b.click("#table-menu-open").await;
    b.until(
        "the table's menu",
        "return document.querySelector('#table-menu').open;",
    )
    .await;
}

/// Closes the table's menu with its Close button.
pub(crate) async fn close_table_menu(b: &Browser) {
    b.click("#table-menu-close").await;
    b.until(
        "the table's menu to close",
        "return !document.querySelector('#table-menu').open;",
    )
    .await;
}

/// The standard table with jokers (so that a hand of five can be worth as little as the fixed
/// decks need), over `rounds` rounds.
pub(crate) fn standard(rounds: u32) -> Settings {
    Settings {
        rounds: Rounds::Fixed(rounds),
        jokers: true,
        ..Preset::Standard.settings()
    }
}

/// A room on `server` with these settings and fixed decks.
pub(crate) async fn room_with(
    server: &TestServer,
    settings: Settings,
    decks: Vec<Vec<Card>>,
) -> CreatedRoom {
    server
        .create_room(&CreateRoom {
            settings: Some(settings),
            decks: Some(decks),
            ..CreateRoom::default()
        })
        .await
}

/// Two jokers and three aces: 3, light enough to call on at once, and no other hand dealt here
/// matches it.
pub(crate) const LIGHT: [&str; 5] = ["RJ", "BJ", "AS", "AH", "AD"];
/// 11: the other person's hand in [`two_called_rounds`].
pub(crate) const ELEVEN: [&str; 5] = ["2S", "2H", "2D", "2C", "3S"];
/// Bots' hands, 50 each: heavy, so that no bot calls.
pub(crate) const BOT3: [&str; 5] = ["KS", "KH", "KD", "KC", "QS"];
pub(crate) const BOT4: [&str; 5] = ["QH", "QD", "QC", "JS", "JH"];

/// The decks of a two-round match of two people (seats 0 and 1) and two bots: round 1 deals
/// seat 0 [`LIGHT`] and seat 1 [`ELEVEN`]; round 2 (dealt from seat 1) the other way round. The
/// person holding `LIGHT` calls at once: both end on +100, a shared first place.
pub(crate) fn two_called_rounds() -> Vec<Vec<Card>> {
    use crate::hand_order::deck_dealing;
    vec![
        deck_dealing([LIGHT, ELEVEN, BOT3, BOT4], 0),
        deck_dealing([ELEVEN, LIGHT, BOT3, BOT4], 1),
    ]
}

/// A finished match's hand history, played by the engine (each seat takes its first legal
/// action), as a file of it would hold: for the replay page.
pub(crate) fn a_hand_history() -> dhumbal_engine::HandHistory {
    use dhumbal_engine::{FairDeal, Game, Phase};
    let deal = FairDeal {
        seed: [7; 32],
        room: "ABCDE".into(),
        match_number: 1,
    };
    let mut game = Game::fair(Preset::Standard.settings(), deal, vec![None; 4]).unwrap();
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
    history.players = ["Asha", "Bina", "Chandra", "Dawa"]
        .map(String::from)
        .to_vec();
    history
}

/// Writes [`a_hand_history`] to a file in a new temporary folder, named as the page names its
/// download; the folder lives as long as the returned guard.
pub(crate) fn a_hand_history_file() -> (tempfile::TempDir, PathBuf) {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("dhumbal-ABCDE-1.json");
    std::fs::write(&file, serde_json::to_string(&a_hand_history()).unwrap()).unwrap();
    (dir, file)
}

/// Opens the replay page and loads `file` (a hand history) into it, waiting for the replay.
pub(crate) async fn open_replay(b: &Browser, addr: SocketAddr, file: &Path) {
    b.goto(&format!("http://{addr}/replay")).await;
    b.find("#replay-file")
        .await
        .send_keys(&file.display().to_string())
        .await
        .unwrap();
    b.until(
        "the replay",
        "return !document.querySelector('#replay').hidden;",
    )
    .await;
}

/// Calls at once and waits for the score dialog.
pub(crate) async fn call_now(b: &Browser) {
    b.wait_until("the call", |s| s.my_turn && s.call.is_some())
        .await;
    b.click("#call").await;
    b.wait_until("the show", |s| s.score_open).await;
}

/// One browser test for each list of arguments given to `body` (an async function), named as
/// listed: `browser_tests!(body { body_on_a_phone => (PHONE, "phone"), ... });`.
macro_rules! browser_tests {
    ($body:ident { $($test:ident => ($($arg:expr),* $(,)?)),+ $(,)? }) => {
        $(
            #[cfg_attr(missing_chromium, ignore = "needs Chromium: apt-get install chromium chromium-driver")]
            #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
            async fn $test() {
                $body($($arg),*).await;
            }
        )+
    };
}
pub(crate) use browser_tests;

// ----- Installable and light on the wire (install.rs): DevTools answers, versioned imports -----

impl Browser {
    /// Runs a Chrome DevTools command in this browser and returns its answer.
    pub(crate) async fn cdp_answer(&self, cmd: &'static str, params: Value) -> Value {
        self.client().cdp(cmd, params).await.unwrap()
    }
}

/// `script` with every `'/assets/NAME'` it imports written as this binary serves it
/// (`'/assets/{version}/NAME'`), so that a test's `import()` gets the very modules the page
/// loaded (the unversioned path redirects, and would load a second copy of the module).
pub(crate) fn versioned(script: &str) -> String {
    script.replace(
        "'/assets/",
        &format!("'/assets/{}/", dhumbal_server::web::version()),
    )
}
