//! The suite's WebDriver client: the W3C commands the tests send chromedriver, each one HTTP
//! exchange ([`dhumbal_tests::http::exchange`]) with a JSON body and a JSON answer.
//!
//! - [`Client`]: a session (a window), opened or attached to by its id; pages, scripts,
//!   screenshots, tabs, pointer actions, the console log and DevTools commands.
//! - [`Element`]: an element of the page, found by a CSS selector.
//! - [`CmdError`]: what chromedriver refused (its W3C error code and message), or a failed
//!   exchange.
//!
//! Dropping a client leaves its session open: the harness decides whether a window is kept for
//! the next test or closed (see `harness::Driver`).

use std::net::{Ipv4Addr, SocketAddr};
use std::time::{Duration, Instant};

use base64::Engine as _;
use serde_json::{Value, json};

/// The key under which WebDriver names an element.
const ELEMENT: &str = "element-6066-11e4-a52e-4f735466cecf";

/// What a WebDriver command failed with.
#[derive(Debug)]
pub(crate) enum CmdError {
    /// chromedriver refused the command.
    Standard(WebDriverError),
    /// The exchange failed, or its answer was not WebDriver's JSON.
    Transport(String),
}

/// chromedriver's refusal of a command.
#[derive(Debug)]
pub(crate) struct WebDriverError {
    /// The W3C error code (`"no such element"`, `"stale element reference"`, …).
    pub(crate) error: String,
    /// chromedriver's sentence.
    pub(crate) message: String,
}

impl std::fmt::Display for CmdError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            CmdError::Standard(e) => write!(f, "{}: {}", e.error, e.message),
            CmdError::Transport(why) => write!(f, "no WebDriver answer: {why}"),
        }
    }
}

impl CmdError {
    /// Whether chromedriver refused with this W3C error code.
    pub(crate) fn is(&self, code: &str) -> bool {
        matches!(self, CmdError::Standard(e) if e.error == code)
    }
}

/// One WebDriver session at a chromedriver. Cloning it names the same session.
#[derive(Clone, Debug)]
pub(crate) struct Client {
    /// chromedriver's address.
    driver: SocketAddr,
    /// The session's id.
    session: String,
}

impl Client {
    /// Opens a session (a new browser) at the chromedriver on `port` with these capabilities.
    pub(crate) async fn new_session(port: u16, capabilities: Value) -> Result<Client, CmdError> {
        let driver = SocketAddr::from((Ipv4Addr::LOCALHOST, port));
        let body = json!({ "capabilities": { "alwaysMatch": capabilities } });
        let value = exchange(driver, "POST", "/session", Some(body)).await?;
        match value["sessionId"].as_str() {
            Some(session) => Ok(Client::attach(port, session)),
            None => Err(CmdError::Transport(format!(
                "a session without an id: {value}"
            ))),
        }
    }

    /// The session `session` at the chromedriver on `port` (not checked: its first command is).
    pub(crate) fn attach(port: u16, session: &str) -> Client {
        Client {
            driver: SocketAddr::from((Ipv4Addr::LOCALHOST, port)),
            session: session.to_owned(),
        }
    }

    /// The session's id.
    pub(crate) fn session_id(&self) -> &str {
        &self.session
    }

    /// Sends the session's command `path` (`url`, `element/…/click`) and returns its value.
    async fn cmd(&self, method: &str, path: &str, body: Option<Value>) -> Result<Value, CmdError> {
        let path = format!("/session/{}/{path}", self.session);
        exchange(self.driver, method, &path, body).await
    }

    /// Opens `url` and waits for it to load.
    pub(crate) async fn goto(&self, url: &str) -> Result<(), CmdError> {
        self.cmd("POST", "url", Some(json!({ "url": url })))
            .await
            .map(drop)
    }

    /// Reloads the page.
    pub(crate) async fn refresh(&self) -> Result<(), CmdError> {
        self.cmd("POST", "refresh", Some(json!({}))).await.map(drop)
    }

    /// The page's title.
    pub(crate) async fn title(&self) -> Result<String, CmdError> {
        string(self.cmd("GET", "title", None).await?)
    }

    /// The page's markup as it is now.
    pub(crate) async fn source(&self) -> Result<String, CmdError> {
        string(self.cmd("GET", "source", None).await?)
    }

    /// The page's address.
    pub(crate) async fn current_url(&self) -> Result<String, CmdError> {
        string(self.cmd("GET", "url", None).await?)
    }

    /// Runs `script` (a function body, `arguments` holding `args`) and returns what it returns.
    pub(crate) async fn execute(&self, script: &str, args: Vec<Value>) -> Result<Value, CmdError> {
        let body = json!({ "script": script, "args": args });
        self.cmd("POST", "execute/sync", Some(body)).await
    }

    /// Runs `script` and returns what it passes to its callback (its last argument).
    pub(crate) async fn execute_async(
        &self,
        script: &str,
        args: Vec<Value>,
    ) -> Result<Value, CmdError> {
        let body = json!({ "script": script, "args": args });
        self.cmd("POST", "execute/async", Some(body)).await
    }

    /// A PNG of the window.
    pub(crate) async fn screenshot(&self) -> Result<Vec<u8>, CmdError> {
        let encoded = string(self.cmd("GET", "screenshot", None).await?)?;
        base64::engine::general_purpose::STANDARD
            .decode(encoded)
            .map_err(|e| CmdError::Transport(format!("a screenshot that is not base64: {e}")))
    }

    /// The first element `css` selects.
    pub(crate) async fn find(&self, css: &str) -> Result<Element, CmdError> {
        let found = self.cmd("POST", "element", Some(by_css(css))).await?;
        self.element(found)
    }

    /// The first element `css` selects once there is one, looking every `every` for at most
    /// `at_most`.
    pub(crate) async fn wait_for(
        &self,
        css: &str,
        at_most: Duration,
        every: Duration,
    ) -> Result<Element, CmdError> {
        let started = Instant::now();
        loop {
            match self.find(css).await {
                Err(e) if e.is("no such element") && started.elapsed() < at_most => {
                    tokio::time::sleep(every).await;
                }
                found => return found,
            }
        }
    }

    /// The element that has the focus.
    pub(crate) async fn active_element(&self) -> Result<Element, CmdError> {
        let found = self.cmd("GET", "element/active", None).await?;
        self.element(found)
    }

    /// The element WebDriver named in `found`.
    fn element(&self, found: Value) -> Result<Element, CmdError> {
        match found[ELEMENT].as_str() {
            Some(id) => Ok(Element {
                client: self.clone(),
                id: id.to_owned(),
            }),
            None => Err(CmdError::Transport(format!("not an element: {found}"))),
        }
    }

    /// The handle of the tab the session is in.
    pub(crate) async fn window(&self) -> Result<String, CmdError> {
        string(self.cmd("GET", "window", None).await?)
    }

    /// Opens a new tab and returns its handle (the session stays in its tab).
    pub(crate) async fn new_tab(&self) -> Result<String, CmdError> {
        let opened = self
            .cmd("POST", "window/new", Some(json!({ "type": "tab" })))
            .await?;
        string(opened["handle"].clone())
    }

    /// Moves the session to the tab `handle`.
    pub(crate) async fn switch_to_window(&self, handle: &str) -> Result<(), CmdError> {
        self.cmd("POST", "window", Some(json!({ "handle": handle })))
            .await
            .map(drop)
    }

    /// Closes the session's tab.
    pub(crate) async fn close_window(&self) -> Result<(), CmdError> {
        self.cmd("DELETE", "window", None).await.map(drop)
    }

    /// Drags with the mouse: from `from`'s middle, a nudge by `nudge` (60 ms, so that the page
    /// sees a drag begin), then to `to`'s middle moved by `offset` (150 ms), and releases the
    /// button there.
    pub(crate) async fn drag(
        &self,
        from: &Element,
        nudge: (i64, i64),
        to: &Element,
        offset: (i64, i64),
    ) -> Result<(), CmdError> {
        let steps = json!([
            { "type": "pointerMove", "origin": from.reference(), "x": 0, "y": 0, "duration": 0 },
            { "type": "pointerDown", "button": 0 },
            { "type": "pointerMove", "origin": "pointer", "x": nudge.0, "y": nudge.1, "duration": 60 },
            { "type": "pointerMove", "origin": to.reference(), "x": offset.0, "y": offset.1, "duration": 150 },
            { "type": "pointerUp", "button": 0 },
        ]);
        let actions = json!({ "actions": [{
            "type": "pointer",
            "id": "mouse",
            "parameters": { "pointerType": "mouse" },
            "actions": steps,
        }] });
        self.cmd("POST", "actions", Some(actions)).await?;
        self.cmd("DELETE", "actions", None).await.map(drop)
    }

    /// What the page wrote to the console since the last call (chromedriver's log entries).
    pub(crate) async fn browser_log(&self) -> Result<Value, CmdError> {
        self.cmd("POST", "se/log", Some(json!({ "type": "browser" })))
            .await
    }

    /// Runs the Chrome DevTools command `cmd` and returns its answer.
    pub(crate) async fn cdp(&self, cmd: &str, params: Value) -> Result<Value, CmdError> {
        let body = json!({ "cmd": cmd, "params": params });
        self.cmd("POST", "goog/cdp/execute", Some(body)).await
    }
}

/// An element of a session's page.
#[derive(Clone, Debug)]
pub(crate) struct Element {
    client: Client,
    id: String,
}

impl Element {
    /// Sends the element's command `path` (`click`, `attribute/href`).
    async fn cmd(&self, method: &str, path: &str, body: Option<Value>) -> Result<Value, CmdError> {
        let path = format!("element/{}/{path}", self.id);
        self.client.cmd(method, &path, body).await
    }

    /// How a command names this element.
    fn reference(&self) -> Value {
        json!({ ELEMENT: self.id })
    }

    /// Clicks its middle.
    pub(crate) async fn click(&self) -> Result<(), CmdError> {
        self.cmd("POST", "click", Some(json!({}))).await.map(drop)
    }

    /// Empties a field.
    pub(crate) async fn clear(&self) -> Result<(), CmdError> {
        self.cmd("POST", "clear", Some(json!({}))).await.map(drop)
    }

    /// Types `text` into it (WebDriver's key codes, `"\u{E007}"` for Enter, among the text).
    pub(crate) async fn send_keys(&self, text: &str) -> Result<(), CmdError> {
        self.cmd("POST", "value", Some(json!({ "text": text })))
            .await
            .map(drop)
    }

    /// Its text as shown.
    pub(crate) async fn text(&self) -> Result<String, CmdError> {
        string(self.cmd("GET", "text", None).await?)
    }

    /// Its attribute `name`, if it has one.
    pub(crate) async fn attr(&self, name: &str) -> Result<Option<String>, CmdError> {
        optional(self.cmd("GET", &format!("attribute/{name}"), None).await?)
    }

    /// Its DOM property `name` as text (a string as it is, another value as JSON), if set.
    pub(crate) async fn prop(&self, name: &str) -> Result<Option<String>, CmdError> {
        optional(self.cmd("GET", &format!("property/{name}"), None).await?)
    }

    /// Whether it is shown.
    pub(crate) async fn is_displayed(&self) -> Result<bool, CmdError> {
        let shown = self.cmd("GET", "displayed", None).await?;
        shown
            .as_bool()
            .ok_or_else(|| CmdError::Transport(format!("not a boolean: {shown}")))
    }

    /// Chooses its `<option>` of this value (it is a `<select>`).
    pub(crate) async fn select_by_value(&self, value: &str) -> Result<(), CmdError> {
        let css = format!("option[value={value:?}]");
        let option = self.cmd("POST", "element", Some(by_css(&css))).await?;
        self.client.element(option)?.click().await
    }
}

/// A find command's body: the first element `css` selects.
fn by_css(css: &str) -> Value {
    json!({ "using": "css selector", "value": css })
}

/// A value that must be a string.
fn string(value: Value) -> Result<String, CmdError> {
    match value {
        Value::String(text) => Ok(text),
        other => Err(CmdError::Transport(format!("not a string: {other}"))),
    }
}

/// A string, `null` for none, or another value written as JSON.
fn optional(value: Value) -> Result<Option<String>, CmdError> {
    Ok(match value {
        Value::Null => None,
        Value::String(text) => Some(text),
        other => Some(other.to_string()),
    })
}

/// One command to chromedriver at `driver`: its answer's `value`, or its refusal.
async fn exchange(
    driver: SocketAddr,
    method: &str,
    path: &str,
    body: Option<Value>,
) -> Result<Value, CmdError> {
    let body = body.map(|b| b.to_string()).unwrap_or_default();
    let (status, answer) =
        dhumbal_tests::http::exchange(Ipv4Addr::LOCALHOST.into(), driver, method, path, &[], &body)
            .await
            .map_err(CmdError::Transport)?;
    let mut answer: Value = serde_json::from_str(&answer)
        .map_err(|e| CmdError::Transport(format!("{method} {path}: {e}: {answer}")))?;
    let value = answer["value"].take();
    if status == 200 {
        return Ok(value);
    }
    match (value["error"].as_str(), value["message"].as_str()) {
        (Some(error), Some(message)) => Err(CmdError::Standard(WebDriverError {
            error: error.to_owned(),
            message: message.to_owned(),
        })),
        _ => Err(CmdError::Transport(format!(
            "{method} {path}: status {status}: {value}"
        ))),
    }
}
