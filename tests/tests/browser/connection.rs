//! Honest about its connection: a socket that goes silent is noticed within a few seconds (the
//! page asks with `ping`, the server answers `pong`), the page says "Reconnecting…" and comes
//! back by itself; while it cannot reach the server at all it says so plainly; back in the
//! foreground it checks at once. The network is cut with DevTools
//! (`Network.emulateNetworkConditions`, which blocks new connections), and a socket is stalled
//! from the page's side (every frame in either direction swallowed, the socket left open) so that
//! nothing but the page's own heartbeat can notice.

use crate::harness::*;

/// Run before the page's own scripts: `window.__stall()` makes every socket the page has opened
/// so far silent in both directions (its messages are swallowed, what it sends goes nowhere),
/// while it stays open, as a connection does behind a dead Wi-Fi router.
/// `window.__garble()` makes the next binary frame each of them hands the page bytes that do
/// not inflate (a block of the reserved type), as a broken proxy might.
const STALLABLE: &str = "window.__sockets = []; \
    window.__stall = () => window.__sockets.forEach((s) => { s.__stalled = true; }); \
    window.__garble = () => window.__sockets.forEach((s) => { s.__garble = true; }); \
    window.WebSocket = class extends window.WebSocket { \
      constructor(...args) { super(...args); window.__sockets.push(this); } \
      send(data) { if (!this.__stalled) super.send(data); } \
      addEventListener(type, listener, options) { \
        if (type !== 'message') return super.addEventListener(type, listener, options); \
        return super.addEventListener(type, (e) => { \
          if (this.__stalled) return; \
          if (this.__garble && e.data instanceof ArrayBuffer) { \
            this.__garble = false; \
            listener(new MessageEvent('message', { data: new Uint8Array([0xff, 0xff, 0xff, 0xff]).buffer })); \
            return; } \
          listener(e); }, options); } };";

/// Sets the page's network off or back on, through DevTools.
async fn network(b: &Browser, offline: bool) {
    b.cdp("Network.enable", json!({})).await;
    b.cdp(
        "Network.emulateNetworkConditions",
        json!({
            "offline": offline,
            "latency": 0,
            "downloadThroughput": -1,
            "uploadThroughput": -1,
        }),
    )
    .await;
}

/// A table of one person and three bots, started, on a page of `size` in `lang`.
async fn at_the_table(stage: &mut Stage, size: (u32, u32), lang: &str) -> (Browser, Snapshot) {
    let addr = stage.addr;
    let room = stage
        .server
        .create_room(&CreateRoom {
            settings: Some(standard(3)),
            ..CreateRoom::default()
        })
        .await;
    let b = stage.browser(size).await;
    b.before_each_page(&format!("localStorage.setItem('dhumbal.lang', '{lang}');"))
        .await;
    b.before_each_page(STALLABLE).await;
    b.host_room(addr, &room, "Asha").await;
    b.click("#start").await;
    let at = b
        .wait_until("the table", |s| s.screen == "table" && !s.hand.is_empty())
        .await;
    (b, at)
}

/// The banner's text as the page's language says "Reconnecting…" and "cannot reach".
fn words(lang: &str) -> (&'static str, &'static str) {
    if lang == "ne" {
        ("फेरि जोडिँदै छ", "सर्भरसम्म पुग्न सकिएन")
    } else {
        ("Reconnecting", "Can't reach the server")
    }
}

/// A socket stalled silently (open, but nothing gets through either way) is noticed by the
/// page's own heartbeat within a few seconds: "Reconnecting…", a new socket, and the seat back
/// with the same hand. On a phone in English and on a laptop in Nepali.
#[cfg_attr(
    missing_chromium,
    ignore = "needs Chromium: apt-get install chromium chromium-driver"
)]
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_silent_stall_is_noticed_and_the_page_comes_back_by_itself() {
    let mut stage = stage!(dhumbal_server::Config {
        bot_delay_ms: 200,
        ..dhumbal_tests::server::unlimited_rate()
    });
    for (size, lang) in [((360, 640), "en"), ((1280, 800), "ne")] {
        let (b, before) = at_the_table(&mut stage, size, lang).await;
        let (reconnecting, _) = words(lang);
        let cut = Instant::now();
        b.eval("window.__stall();").await;
        b.wait_until("the page to notice the stall", |s| {
            s.banner && s.banner_text.contains(reconnecting)
        })
        .await;
        println!(
            "{lang} at {size:?}: a silent stall noticed after {:.1} s",
            cut.elapsed().as_secs_f64()
        );
        let back = b
            .wait_until("the seat again", |s| {
                !s.banner && s.screen == "table" && !s.hand.is_empty()
            })
            .await;
        // The stalled socket was given up by the page (closed), and a new one brought it back.
        let sockets = b.eval("return window.__sockets.length;").await;
        assert!(sockets.as_u64().unwrap() >= 2, "a new socket: {sockets}");
        if back.round == before.round && back.phase == before.phase && back.my_turn {
            assert_eq!(back.hand, before.hand, "the same seat and hand");
        }
        b.assert_no_console_errors().await;
        b.close().await;
    }
}

/// A compressed frame that does not inflate (the page's socket is compressed) is not left to
/// silence the page while the socket stays open: the page gives the socket up, opens a new one
/// and is back in its seat with the same hand, with no console error.
#[cfg_attr(
    missing_chromium,
    ignore = "needs Chromium: apt-get install chromium chromium-driver"
)]
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_frame_that_does_not_inflate_is_given_up_and_the_page_comes_back() {
    let mut stage = stage!(dhumbal_server::Config {
        bot_delay_ms: 200,
        ..dhumbal_tests::server::unlimited_rate()
    });
    let (b, before) = at_the_table(&mut stage, (360, 640), "en").await;
    b.eval("window.__garble();").await;
    // The next frame (a bot's move, or the answer to the page's next ping) is garbled.
    b.until(
        "a new socket",
        "return window.__sockets.length >= 2 || window.__sockets.length;",
    )
    .await;
    let back = b
        .wait_until("the seat again", |s| {
            !s.banner && s.screen == "table" && !s.hand.is_empty()
        })
        .await;
    if back.round == before.round && back.phase == before.phase && back.my_turn {
        assert_eq!(back.hand, before.hand, "the same seat and hand");
    }
    b.assert_no_console_errors().await;
    b.close().await;
}

/// The network cut with DevTools: the page says "Reconnecting…", and when its attempts keep
/// failing that it cannot reach the server; with the network back it is in its seat again by
/// itself. Coming back to the foreground, it checks the connection at once (a `ping`
/// answered). On a phone in English and on a laptop in Nepali.
#[cfg_attr(
    missing_chromium,
    ignore = "needs Chromium: apt-get install chromium chromium-driver"
)]
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_cut_network_is_said_plainly_and_the_page_is_back_when_it_returns() {
    let mut stage = stage!(dhumbal_server::Config {
        bot_delay_ms: 200,
        ..dhumbal_tests::server::unlimited_rate()
    });
    let addr = stage.addr;
    for (size, lang) in [((360, 640), "en"), ((1280, 800), "ne")] {
        let (b, _) = at_the_table(&mut stage, size, lang).await;
        let (reconnecting, unreachable) = words(lang);

        // Back in the foreground: the page asks the server at once, and hears its answer.
        b.eval(
            "window.__pings = 0; window.__sockets.forEach((s) => { const send = s.send.bind(s); \
               s.send = (d) => { if (String(d).includes('\"ping\"')) window.__pings += 1; send(d); }; }); \
             document.dispatchEvent(new Event('visibilitychange'));",
        )
        .await;
        b.until(
            "a ping on coming back",
            "return window.__pings >= 1 || window.__pings;",
        )
        .await;
        assert!(!b.snapshot().await.banner, "a live connection stays quiet");

        // The network goes and the connection with it (Chromium's offline mode blocks new
        // connections but leaves an open socket alone, so the test drops that one as the
        // network would): the page notices, and then says plainly it cannot reach the server.
        let cut = Instant::now();
        network(&b, true).await;
        b.eval("window.__sockets.forEach((s) => s.close());").await;
        b.wait_until("the page to notice the cut", |s| {
            s.banner
                && (s.banner_text.contains(reconnecting) || s.banner_text.contains(unreachable))
        })
        .await;
        let noticed = cut.elapsed().as_secs_f64();
        b.wait_until("the page to say it cannot reach the server", |s| {
            s.banner && s.banner_text.contains(unreachable)
        })
        .await;
        println!(
            "{lang} at {size:?}: network cut noticed after {noticed:.1} s, said unreachable after {:.1} s",
            cut.elapsed().as_secs_f64()
        );
        // The network comes back: so does the page, to its seat.
        network(&b, false).await;
        b.wait_until("the seat again", |s| {
            !s.banner && s.screen == "table" && !s.hand.is_empty()
        })
        .await;
        b.assert_no_console_errors_but(|m| {
            refused_websocket(addr, m)
                || m.contains("ERR_INTERNET_DISCONNECTED")
                || m.contains("ERR_NAME_NOT_RESOLVED")
        })
        .await;
        b.close().await;
    }
}
