//! Installable, and light on the wire (issue 31): Chromium's own installability check passes on
//! a phone and a laptop (the manifest, its icons, the service worker); with the server out of
//! reach a page opens to the offline page, which says so in English and Nepali and opens the page
//! asked for by itself once the server answers; and a cold and a warm load on a phone's network
//! (DevTools throttling: 150 ms, 1.6 Mbps down, 750 kbps up, 4× slower CPU) print how long until
//! the home page's form is usable, and what crossed the wire (asserted: the bytes of a cold load,
//! and that a warm load asks nothing under `/assets/`).

use std::sync::{Arc, Mutex};

use crate::harness::*;

use tokio::io::{AsyncReadExt as _, AsyncWriteExt as _};
use tokio::net::{TcpListener, TcpStream};

/// A small phone, as the issue measures: 360×640.
const SMALL_PHONE: (u32, u32) = (360, 640);
/// A laptop, as the issue measures: 1280×800.
const LAPTOP: (u32, u32) = (1280, 800);

/// What crossed a [`Wire`]: the request lines the browser sent and the bytes it received.
#[derive(Debug, Default)]
struct Tally {
    /// Each request's method and path (`GET /`) and the bytes of its answer (headers and
    /// compressed body), in the order sent.
    requests: Vec<(String, u64)>,
    /// The bytes from the server to the browser.
    down: u64,
}

impl Tally {
    /// The bytes of the answers to the requests `include` accepts.
    fn bytes_of(&self, include: impl Fn(&str) -> bool) -> u64 {
        self.requests
            .iter()
            .filter(|(r, _)| include(r))
            .map(|(_, n)| n)
            .sum()
    }

    /// Whether any request asked for a path under `/assets/`.
    fn asked_for_files(&self) -> bool {
        self.requests.iter().any(|(r, _)| r.contains("/assets/"))
    }
}

/// Everything that crossed a [`Wire`] since it opened, and where [`Wire::take`] last cut it.
#[derive(Debug, Default)]
struct Log {
    all: Tally,
    /// The number of requests, and the bytes down, at the last cut.
    cut: (usize, u64),
}

/// A forwarder on a loopback port to the server that counts what crosses it, as the network
/// would carry it; dropping it closes the port and every connection through it (the server out
/// of reach).
struct Wire {
    addr: SocketAddr,
    log: Arc<Mutex<Log>>,
    task: tokio::task::JoinHandle<()>,
}

impl Wire {
    /// A wire on `port` (0 for any) of 127.0.0.1 to `server`, counting into `log`.
    async fn open(server: SocketAddr, port: u16, log: Arc<Mutex<Log>>) -> Wire {
        let listener = TcpListener::bind(("127.0.0.1", port))
            .await
            .expect("bind the wire's port");
        let addr = listener.local_addr().unwrap();
        let counted = Arc::clone(&log);
        let task = tokio::spawn(async move {
            // Dropped with the task: every connection through the wire ends with it.
            let mut connections = tokio::task::JoinSet::new();
            while let Ok((inbound, _)) = listener.accept().await {
                let Ok(outbound) = TcpStream::connect(server).await else {
                    continue;
                };
                connections.spawn(carry(inbound, outbound, Arc::clone(&counted)));
            }
        });
        Wire { addr, log, task }
    }

    /// What crossed since the last call.
    fn take(&self) -> Tally {
        let mut log = self.log.lock().unwrap();
        let (requests, down) = log.cut;
        let tally = Tally {
            requests: log.all.requests[requests..].to_vec(),
            down: log.all.down - down,
        };
        log.cut = (log.all.requests.len(), log.all.down);
        tally
    }
}

impl Drop for Wire {
    fn drop(&mut self) {
        self.task.abort();
    }
}

/// Carries one connection both ways, noting each request line and counting the bytes down, each
/// to the request it answers (HTTP/1.1: one request at a time on a connection).
async fn carry(inbound: TcpStream, outbound: TcpStream, log: Arc<Mutex<Log>>) {
    let (mut from_browser, mut to_browser) = inbound.into_split();
    let (mut from_server, mut to_server) = outbound.into_split();
    let current: Arc<Mutex<Option<usize>>> = Arc::default();
    let (up_log, up_current) = (Arc::clone(&log), Arc::clone(&current));
    let up = async move {
        let mut buf = vec![0u8; 16 * 1024];
        let mut line = Vec::new();
        while let Ok(n) = from_browser.read(&mut buf).await {
            if n == 0 {
                break;
            }
            for &b in &buf[..n] {
                line.push(b);
                if line.ends_with(b"\r\n") || line.len() > 4096 {
                    let text = String::from_utf8_lossy(&line);
                    if let Some(request) = text.trim_end().strip_suffix(" HTTP/1.1") {
                        if ["GET ", "POST ", "HEAD "]
                            .iter()
                            .any(|m| request.starts_with(m))
                        {
                            let mut log = up_log.lock().unwrap();
                            log.all.requests.push((request.to_owned(), 0));
                            *up_current.lock().unwrap() = Some(log.all.requests.len() - 1);
                        }
                    }
                    line.clear();
                }
            }
            if to_server.write_all(&buf[..n]).await.is_err() {
                break;
            }
        }
        let _ = to_server.shutdown().await;
    };
    let down = async move {
        let mut buf = vec![0u8; 16 * 1024];
        while let Ok(n) = from_server.read(&mut buf).await {
            if n == 0 || to_browser.write_all(&buf[..n]).await.is_err() {
                break;
            }
            let mut log = log.lock().unwrap();
            log.all.down += n as u64;
            if let Some(i) = *current.lock().unwrap() {
                log.all.requests[i].1 += n as u64;
            }
        }
        let _ = to_browser.shutdown().await;
    };
    tokio::join!(up, down);
}

/// Waits until this page is controlled by the site's service worker (installed, its offline
/// files kept, active).
async fn until_controlled(b: &Browser) {
    b.until(
        "the service worker to control the page",
        "return navigator.serviceWorker.ready.then((r) => Boolean(r.active) && \
           Boolean(navigator.serviceWorker.controller))",
    )
    .await;
}

async fn installable_on(size: (u32, u32), which: Chromium) {
    let mut stage = stage!(in which);
    let b = stage.browser(size).await;
    b.open_home(stage.addr).await;
    until_controlled(&b).await;
    let manifest = b.cdp_answer("Page.getAppManifest", json!({})).await;
    let url = manifest["url"].as_str().unwrap_or_default();
    assert_eq!(
        url,
        format!(
            "http://{}{}",
            stage.addr,
            dhumbal_server::web::asset_path("manifest.webmanifest")
        ),
        "{manifest:#}"
    );
    assert_eq!(manifest["errors"], json!([]), "{manifest:#}");
    let check = b
        .cdp_answer("Page.getInstallabilityErrors", json!({}))
        .await;
    assert_eq!(
        check["installabilityErrors"],
        json!([]),
        "Chromium's installability check: {check:#}"
    );
    // The manifest's icons load, one of them at least 144 px (what Chromium asks), maskable.
    let icons: Vec<Value> = b
        .view(
            "return fetch(document.querySelector('link[rel=manifest]').href) \
               .then((r) => r.json()).then((m) => Promise.all(m.icons.map((i) => \
                 fetch(new URL(i.src, document.querySelector('link[rel=manifest]').href)) \
                   .then((r) => ({ src: i.src, sizes: i.sizes, purpose: i.purpose, \
                                   status: r.status, type: r.headers.get('content-type') })))))",
        )
        .await;
    assert!(icons.iter().all(|i| i["status"] == 200), "{icons:#?}");
    assert!(
        icons.iter().any(|i| i["sizes"] == "512x512"
            && i["purpose"] == "maskable"
            && i["type"] == "image/png"),
        "{icons:#?}"
    );
    let full = which.suffix();
    b.screenshot(&format!("installable-{}x{}{full}", size.0, size.1))
        .await;
    b.assert_no_console_errors().await;
}

browser_tests!(installable_on {
    the_page_is_installable_on_a_phone => (SMALL_PHONE, Chromium::Suite),
    the_page_is_installable_on_a_laptop => (LAPTOP, Chromium::Suite),
    the_page_is_installable_on_a_phone_in_the_full_browser => (SMALL_PHONE, Chromium::Full),
});

/// Whether a console error is Chromium's line for a request that found nobody at `wire` (the
/// offline page's tries while the server is out of reach).
fn refused_at(wire: SocketAddr, message: &str) -> bool {
    message.contains(&format!("http://{wire}/")) && message.contains("ERR_CONNECTION_REFUSED")
}

async fn offline_on(size: (u32, u32)) {
    let mut stage = stage!();
    let room = stage.server.create_room(&CreateRoom::default()).await;
    let log: Arc<Mutex<Log>> = Arc::default();
    let wire = Wire::open(stage.addr, 0, Arc::clone(&log)).await;
    let addr = wire.addr;
    let b = stage.browser(size).await;
    b.open_home(addr).await;
    until_controlled(&b).await;
    // The server goes out of reach; the room's link opens to the offline page, not the
    // browser's own error page.
    drop(wire);
    b.goto(&format!("http://{addr}{}", room.url)).await;
    b.until_text("#offline h1", "No connection to the game")
        .await;
    b.until_text("#offline-status", "Trying again by itself every 5 seconds")
        .await;
    assert_eq!(b.text("#offline-retry").await, "Try again");
    assert_eq!(b.eval("return document.title").await, "Dhumbal");
    b.assert_fits_the_width("the offline page").await;
    b.screenshot(&format!("offline-{}x{}", size.0, size.1))
        .await;
    // Try again, still out of reach: it says it is trying, then waits again.
    b.click("#offline-retry").await;
    b.until_text("#offline-status", "Trying again by itself")
        .await;
    // In Nepali.
    b.click("#lang-switch button[data-lang='ne']").await;
    b.until_text("#offline h1", "खेलसँग जडान छैन").await;
    b.until_text("#offline-status", "हरेक 5 सेकेन्डमा").await;
    assert_eq!(b.text("#offline-retry").await, "फेरि प्रयास गर्नुहोस्");
    assert_eq!(b.eval("return document.documentElement.lang").await, "ne");
    b.screenshot(&format!("offline-ne-{}x{}", size.0, size.1))
        .await;
    // The server is back at the same address: the page opens the room's join form by itself.
    let wire = Wire::open(stage.server.addr, addr.port(), log).await;
    b.until(
        "the room's join form, by itself",
        "const join = document.getElementById('join'); return Boolean(join) && !join.hidden",
    )
    .await;
    b.wait_until("the join form", |s| s.screen == "join").await;
    assert!(!wire.take().requests.is_empty());
    b.assert_no_console_errors_but(|m| refused_at(addr, m))
        .await;
}

browser_tests!(offline_on {
    offline_a_room_link_says_so_and_comes_back_by_itself_on_a_phone => (SMALL_PHONE),
    offline_a_room_link_says_so_and_comes_back_by_itself_on_a_laptop => (LAPTOP),
});

/// Run before the page's scripts: `window.__usable` is the time (ms from the navigation's start,
/// `performance.now()`) of the first frame that shows the home page's form with its heading.
const USABLE: &str = "window.__usable = null; (function watch() { \
    const home = document.getElementById('home'); \
    const heading = home && home.querySelector('h1'); \
    if (home && !home.hidden && heading && heading.textContent && document.getElementById('create')) { \
      window.__usable = performance.now(); return; } \
    requestAnimationFrame(watch); })();";

/// A network and a CPU to load the page on.
struct Profile {
    name: &'static str,
    latency_ms: u32,
    down_bits: u32,
    up_bits: u32,
}

/// A phone's network, as the issue measures (150 ms, 1.6 Mbps down, 750 kbps up).
const PHONE_NETWORK: Profile = Profile {
    name: "phone (150 ms, 1.6 Mbps down, 750 kbps up, 4x CPU)",
    latency_ms: 150,
    down_bits: 1_600_000,
    up_bits: 750_000,
};

/// A slow network, as the issue measures (400 ms, 400 kbps).
const SLOW_NETWORK: Profile = Profile {
    name: "slow (400 ms, 400 kbps down and up, 4x CPU)",
    latency_ms: 400,
    down_bits: 400_000,
    up_bits: 400_000,
};

/// One load's figures.
#[derive(Debug)]
struct Load {
    usable_ms: f64,
    /// Where the time went: the navigation's milestones and the last file's arrival, in ms from
    /// the navigation's start (`performance` entries).
    timeline: String,
    tally: Tally,
}

/// The navigation's milestones and when the last of the page's files arrived, as text.
const TIMELINE: &str = "const n = performance.getEntriesByType('navigation')[0]; \
    const files = performance.getEntriesByType('resource'); \
    const last = files.reduce((m, r) => Math.max(m, r.responseEnd), 0); \
    const slowest = files.reduce((m, r) => r.responseEnd > (m ? m.responseEnd : 0) ? r : m, null); \
    const f = (x) => Math.round(x); \
    return `page's first byte ${f(n.responseStart)}, page in ${f(n.responseEnd)}, \
      DOM interactive ${f(n.domInteractive)}, DOMContentLoaded ${f(n.domContentLoadedEventEnd)}, \
      load ${f(n.loadEventEnd)}; ${files.length} files, the last in at ${f(last)} \
      (${slowest ? slowest.name.split('/').pop() : '-'}, asked at ${slowest ? f(slowest.startTime) : '-'})`;";

/// Opens the home page (already throttled) and waits until its form is usable and the page has
/// loaded; returns when it was usable and what crossed the wire.
async fn load(b: &Browser, wire: &Wire) -> Load {
    wire.take();
    b.goto(&format!("http://{}/", wire.addr)).await;
    let usable_ms: f64 = b
        .wait_view(
            "the home page's form",
            "return document.readyState === 'complete' ? window.__usable : null",
            |v: &Option<f64>| v.is_some(),
        )
        .await
        .unwrap_or_default();
    let timeline = b
        .eval(TIMELINE)
        .await
        .as_str()
        .unwrap_or_default()
        .to_owned();
    Load {
        usable_ms,
        timeline,
        tally: wire.take(),
    }
}

fn print_load(profile: &str, what: &str, load: &Load) {
    let mut largest = load.tally.requests.clone();
    largest.sort_by_key(|(_, n)| std::cmp::Reverse(*n));
    largest.truncate(6);
    let largest: Vec<String> = largest
        .iter()
        .map(|(r, n)| {
            format!(
                "{} {:.1} KB",
                r.rsplit('/').next().unwrap_or(r),
                *n as f64 / 1000.0
            )
        })
        .collect();
    println!(
        "load figures, {profile}, {what}: usable after {:.0} ms ({}), {:.1} KB down in {} \
         requests (largest: {}); requests: {:?}",
        load.usable_ms,
        load.timeline,
        load.tally.down as f64 / 1000.0,
        load.tally.requests.len(),
        largest.join(", "),
        load.tally
            .requests
            .iter()
            .map(|(r, _)| r.as_str())
            .collect::<Vec<_>>()
    );
}

/// Whether a request is the service worker's (its script, and what it keeps for offline that
/// the page had not loaded: the offline page, its script, and the other language's table, the
/// page here being English), not the page's.
fn the_workers(request: &str) -> bool {
    request == "GET /sw.js"
        || request == "GET /offline"
        || request.ends_with("/offline.js")
        || request.ends_with("/messages-ne.js")
}

/// Asks the server itself (not through the throttled browser) for the home page, the worker and
/// every file they name, br-encoded, and reads each answer to its end: the server compresses its
/// files once, at its start, off its runtime (`web::precompress`, a few seconds in a test build
/// on a busy machine), and a player's first visit finds that done. The loads measured here then
/// time the page and the network, not a server still compressing.
async fn compressed_on_the_server(addr: std::net::SocketAddr) {
    async fn fetch(addr: std::net::SocketAddr, path: &str, encoding: &str) -> Vec<u8> {
        let mut stream = TcpStream::connect(addr)
            .await
            .expect("connect to the server");
        let request = format!(
            "GET {path} HTTP/1.1\r\nHost: {addr}\r\nAccept-Encoding: {encoding}\r\n\
             Connection: close\r\n\r\n"
        );
        stream.write_all(request.as_bytes()).await.expect("send");
        let mut answer = Vec::new();
        stream.read_to_end(&mut answer).await.expect("read");
        answer
    }
    let mut named = String::new();
    for page in ["/", "/sw.js", "/offline"] {
        named.push_str(&String::from_utf8_lossy(
            &fetch(addr, page, "identity").await,
        ));
    }
    let files: std::collections::BTreeSet<&str> = named
        .split('"')
        .filter(|part| part.starts_with("/assets/"))
        .collect();
    assert!(files.len() >= 10, "the pages name their files: {files:?}");
    for file in files {
        fetch(addr, file, "br").await;
    }
}

async fn loads_on(profile: Profile) {
    // Alone: the load's times are printed, and a second browser beside it would move them.
    let mut stage = stage!(alone);
    compressed_on_the_server(stage.addr).await;
    let wire = Wire::open(stage.addr, 0, Arc::default()).await;
    let b = stage.browser(SMALL_PHONE).await;
    b.before_each_page(USABLE).await;
    b.cdp("Network.enable", json!({})).await;
    b.cdp(
        "Network.emulateNetworkConditions",
        json!({
            "offline": false,
            "latency": profile.latency_ms,
            "downloadThroughput": profile.down_bits / 8,
            "uploadThroughput": profile.up_bits / 8,
        }),
    )
    .await;
    b.cdp("Emulation.setCPUThrottlingRate", json!({ "rate": 4 }))
        .await;
    let cold = load(&b, &wire).await;
    print_load(profile.name, "cold", &cold);
    until_controlled(&b).await;
    let later = wire.take();
    let worker = cold.tally.bytes_of(the_workers) + later.down;
    println!(
        "load figures, {}, cold: the page {:.1} KB, the service worker's install {:.1} KB",
        profile.name,
        cold.tally.bytes_of(|r| !the_workers(r)) as f64 / 1000.0,
        worker as f64 / 1000.0,
    );
    let warm = load(&b, &wire).await;
    print_load(profile.name, "warm", &warm);
    // The same warm load with the service worker out of the way: every request under the
    // throttled network (DevTools may not slow the worker's own fetches).
    b.cdp("Network.setBypassServiceWorker", json!({ "bypass": true }))
        .await;
    let bypassed = load(&b, &wire).await;
    print_load(profile.name, "warm, service worker bypassed", &bypassed);
    // What noise cannot move: the bytes of a cold load (the page's, and the worker's few), and
    // a warm load that asks for no file under /assets/ (none revalidated), the page itself once.
    // The issue's target is 120 KB (it was 373 KB; 125 KB before the home page stopped loading
    // the room's modules and the other language's words, about 60 KB since).
    let page = cold.tally.bytes_of(|r| !the_workers(r));
    assert!(page <= 120_000, "a cold load sent {page} bytes: {cold:?}");
    // The home page loads none of a room's modules.
    for (r, _) in &cold.tally.requests {
        for room in ["/session.js", "/table.js", "/lobby.js", "/score.js"] {
            assert!(!r.ends_with(room), "the home page loaded {r}");
        }
    }
    // The worker keeps both languages' tables (the offline page switches language offline): the
    // one the page did not load is most of its install.
    assert!(
        worker <= 20_000,
        "the service worker's install sent {worker} bytes"
    );
    assert!(cold.tally.asked_for_files(), "{cold:?}");
    for warm in [&warm, &bypassed] {
        assert!(
            !warm.tally.asked_for_files(),
            "a warm load asked for files: {warm:?}"
        );
        let pages = warm.tally.requests.iter().filter(|(r, _)| r == "GET /");
        assert_eq!(pages.count(), 1, "{warm:?}");
    }
    b.assert_no_console_errors().await;
}

browser_tests!(loads_on {
    cold_and_warm_loads_on_a_phone_network_print_their_figures => (PHONE_NETWORK),
    cold_and_warm_loads_on_a_slow_network_print_their_figures => (SLOW_NETWORK),
});
