//! Issue 30, items 1 and 4 and the host's tag of item 6: the table in a player's hand. At every
//! phone and laptop size the issue names, every control of a turn is inside the window and none
//! covers another (a notice included); the round's whole log scrolls; after the page was hidden
//! the moves it missed are summarised and at most one card flies; the seats say who the host is.

use crate::harness::*;
use dhumbal_engine::full_deck;

/// The sizes of the issue: four phones upright, one on its side, a laptop and a big screen.
const SIZES: [(u32, u32); 7] = [
    (360, 640),
    (375, 667),
    (390, 844),
    (412, 915),
    (740, 360),
    (1280, 800),
    (1920, 1080),
];

/// A fixed deck (54 cards) for four seats of five cards: seat 0 is dealt `mine`; every other
/// seat, the turned-up card and the stock's first cards are worth 6 or more, so no bot calls
/// early and each card drawn from the stock is heavy.
fn deck_for(mine: [&str; 5]) -> Vec<Card> {
    let mine: Vec<Card> = mine.iter().map(|c| c.parse().unwrap()).collect();
    let heavy = |c: &Card| c.value(CourtValues::Tens) >= 6;
    let mut heavies = full_deck(true)
        .into_iter()
        .filter(|c| heavy(c) && !mine.contains(c));
    let mut rest = full_deck(true)
        .into_iter()
        .filter(|c| !heavy(c) && !mine.contains(c));
    (0..54)
        .map(|i| {
            if i < 20 && i % 4 == 0 {
                mine[i / 4]
            } else {
                heavies.next().or_else(|| rest.next()).unwrap()
            }
        })
        .collect()
}

/// Seat 0's hand: worth 3, so Call shows on every turn.
const LIGHT: [&str; 5] = ["RJ", "BJ", "AS", "AH", "AD"];

/// Sets the window's viewport as a phone (narrower than 500 px) or a screen of this size would
/// have it, and waits for the page to be laid out again.
pub(crate) async fn resize(b: &Browser, (width, height): (u32, u32)) {
    b.cdp(
        "Emulation.setDeviceMetricsOverride",
        json!({ "width": width, "height": height, "deviceScaleFactor": 1, "mobile": width < 500 }),
    )
    .await;
    b.until(
        "the new viewport",
        &format!(
            "return (innerWidth === {width} && innerHeight === {height}) || [innerWidth, innerHeight];"
        ),
    )
    .await;
    // Two frames: the resize observers and the layout have run.
    b
        .execute_async(
            "const done = arguments[0]; requestAnimationFrame(() => requestAnimationFrame(() => done(true)));",
            vec![],
        )
        .await
        .unwrap();
}

/// Every control of a turn by its box in the window (the hand as the box round its cards), and
/// whether the page scrolls: `{boxes: {name: [left, top, right, bottom]}, scroll: [x, y]}`.
const CONTROLS: &str = r#"
const box = (e) => { const b = e.getBoundingClientRect(); return [b.left, b.top, b.right, b.bottom]; };
const shown = (e) => Boolean(e) && e.checkVisibility({ opacityProperty: true, visibilityProperty: true });
const boxes = {};
const cards = [...document.querySelectorAll('#hand .card')].map(box);
if (cards.length) boxes.hand = [Math.min(...cards.map((c) => c[0])), Math.min(...cards.map((c) => c[1])), Math.max(...cards.map((c) => c[2])), Math.max(...cards.map((c) => c[3]))];
for (const [name, css] of [['stock', '#stock'], ['pile', '#pile'], ['call', '#call'], ['sort', '#sort'], ['throw', '#throw'], ['round info', '#table .round-info'], ['menu', '#table-menu-open'], ['toast', '#toast']]) {
  const e = document.querySelector(css);
  if (shown(e) && !(css === '#toast' && !e.classList.contains('show'))) boxes[name] = box(e);
}
document.querySelectorAll('#seats .seat').forEach((e) => { boxes[`seat ${e.dataset.seat}`] = box(e); });
return { boxes, scroll: [scrollX, scrollY], wide: document.documentElement.scrollWidth > innerWidth };
"#;

/// What [`CONTROLS`] reads.
#[derive(Debug, Deserialize)]
struct Controls {
    boxes: std::collections::BTreeMap<String, [f64; 4]>,
    scroll: [f64; 2],
    wide: bool,
}

/// Fails unless every box of `c` is inside a window of `size` and no two overlap; `want` lists
/// the boxes that must be there.
fn assert_laid_out(c: &Controls, (width, height): (u32, u32), want: &[&str], what: &str) {
    let (w, h) = (f64::from(width), f64::from(height));
    let mut problems = Vec::new();
    for name in want {
        if !c.boxes.contains_key(*name) {
            problems.push(format!("{name} is not shown"));
        }
    }
    if c.scroll != [0.0, 0.0] || c.wide {
        problems.push(format!("the page scrolled or is too wide: {:?}", c.scroll));
    }
    for (name, b) in &c.boxes {
        if b[0] < -0.5 || b[1] < -0.5 || b[2] > w + 0.5 || b[3] > h + 0.5 || b[2] <= b[0] {
            problems.push(format!(
                "{name} {b:?} is not inside the {width}x{height} window"
            ));
        }
    }
    let names: Vec<&String> = c.boxes.keys().collect();
    for (i, a) in names.iter().enumerate() {
        for b in &names[i + 1..] {
            let (p, q) = (c.boxes[*a], c.boxes[*b]);
            let across = p[2].min(q[2]) - p[0].max(q[0]);
            let down = p[3].min(q[3]) - p[1].max(q[1]);
            if across > 0.5 && down > 0.5 {
                problems.push(format!("{a} {p:?} overlaps {b} {q:?}"));
            }
        }
    }
    assert!(
        problems.is_empty(),
        "{what} at {width}x{height}:\n{}",
        problems.join("\n")
    );
}

/// Shows a notice as the page does (`page.js`'s `notice`), a long one.
async fn show_toast(b: &Browser) {
    b
        .execute_async(
            &versioned("const done = arguments[0]; import('/assets/page.js').then((m) => { \
               m.notice('Only the top card of the pile can be taken, and this notice is a long one.'); \
               done(true); });"),
            vec![],
        )
        .await
        .unwrap();
    b.until(
        "the notice to show",
        "return getComputedStyle(document.querySelector('#toast')).opacity === '1';",
    )
    .await;
}

/// Whether the table menu's Close is inside the window and not covered.
const IN_VIEW: &str = "const e = document.querySelector('#table-menu-close'); const r = e.getBoundingClientRect(); \
    const hit = document.elementFromPoint(r.left + r.width / 2, r.top + r.height / 2); \
    return r.top >= 0 && r.bottom <= innerHeight && (hit === e || e.contains(hit)) || [r.top, r.bottom, innerHeight];";

/// Run before the page's scripts: the most cards in flight at once (`window.__mostFlying`), and
/// every flight (`window.__flights`).
const FLIGHTS: &str = r#"
window.__flights = 0;
window.__mostFlying = 0;
new MutationObserver(() => {
  const now = document.querySelectorAll('.card.flying').length;
  window.__mostFlying = Math.max(window.__mostFlying, now);
}).observe(document, { childList: true, subtree: true });
new MutationObserver((changes) => {
  for (const c of changes) for (const n of c.addedNodes) if (n.classList && n.classList.contains('flying')) window.__flights += 1;
}).observe(document, { childList: true, subtree: true });
"#;

/// Item 1: on this seat's turn, at each size, the hand, the stock, the pile, Call, Sort hand and
/// Throw, the round's line, the table's menu and every seat are inside the window without
/// scrolling and none covers another: at the turn's start (Call shows), then with a card drawn
/// and marked (Throw enabled) while a long notice shows. Then the round's result keeps Next
/// round in view on a small phone. In the suite's Chromium, and again in the full browser (the
/// suite runs in the headless shell where it is installed: see `harness::HEADLESS_SHELL`).
async fn every_control_on_screen(which: Chromium) {
    let mut stage = stage!(in which);
    let full = which.suffix();
    let addr = stage.addr;
    let room = room_with(&stage.server, standard(2), vec![deck_for(LIGHT)]).await;
    let b = stage.browser(DESKTOP).await;
    b.host_room(addr, &room, "Asha").await;
    b.click("#start").await;
    b.wait_until("the page's turn", |s| {
        s.screen == "table" && s.my_turn && s.may_draw && s.call.is_some()
    })
    .await;
    let start = [
        "hand",
        "stock",
        "pile",
        "call",
        "sort",
        "throw",
        "round info",
        "menu",
    ];
    for size in SIZES {
        resize(&b, size).await;
        let c: Controls = b.view(CONTROLS).await;
        assert_laid_out(&c, size, &start, "the turn's start");
        b.screenshot(&format!("layout-start-{}x{}{full}", size.0, size.1))
            .await;
    }

    b.click("#stock").await;
    let drawn = b
        .wait_until("the drawn card", |s| s.may_throw && s.hand.len() == 6)
        .await;
    b.tap(&heaviest(&drawn)).await;
    b.wait_until("Throw enabled", |s| s.throw_enabled).await;
    let marked = [
        "hand",
        "stock",
        "pile",
        "sort",
        "throw",
        "round info",
        "menu",
        "toast",
    ];
    for size in SIZES {
        resize(&b, size).await;
        show_toast(&b).await;
        let c: Controls = b.view(CONTROLS).await;
        assert_laid_out(&c, size, &marked, "a marked card and a notice");
        b.screenshot(&format!("layout-marked-{}x{}{full}", size.0, size.1))
            .await;
    }

    // The table's menu on a small phone: each thing it holds explained, Close in view.
    resize(&b, (360, 640)).await;
    open_table_menu(&b).await;
    let menu = b.text("#table-menu").await;
    for said in [
        "/200",
        "If nobody calls by 200 throws",
        "Clockwise",
        "Turn alert: off",
        "A sound and a vibration",
        "How to play",
        "Round log",
    ] {
        assert!(menu.contains(said), "the menu says {said:?}: {menu}");
    }
    let close = b.eval(IN_VIEW).await;
    assert_eq!(close, json!(true), "Close in view");
    b.screenshot(&format!("layout-menu-360x640{full}")).await;
    close_table_menu(&b).await;

    b.click("#throw").await;
    b.wait_until("the next turn", |s| s.my_turn && s.call.is_some())
        .await;
    call_now(&b).await;
    let next = b
        .eval(
            "const e = document.querySelector('#next-round'); const r = e.getBoundingClientRect(); \
             const hit = document.elementFromPoint(r.left + r.width / 2, r.top + r.height / 2); \
             return r.top >= 0 && r.bottom <= innerHeight && (hit === e || e.contains(hit)) || [r.top, r.bottom, innerHeight];",
        )
        .await;
    assert_eq!(next, json!(true), "Next round in view at 360x640");
    b.screenshot(&format!("layout-score-360x640{full}")).await;
    check_and_close(vec![b]).await;
}

browser_tests!(every_control_on_screen {
    every_control_of_a_turn_is_on_screen_at_every_size => (Chromium::Suite),
    every_control_of_a_turn_is_on_screen_at_every_size_in_the_full_browser => (Chromium::Full),
});

/// The round's log: how many lines, the first, and whether it scrolls and shows its newest.
const LOG: &str = r#"
const log = document.querySelector('#log');
const lines = [...log.querySelectorAll('li')].map((l) => l.textContent);
return { lines, scrolls: log.scrollHeight > log.clientHeight, bottom: log.scrollTop + log.clientHeight >= log.scrollHeight - 2, top: log.scrollTop };
"#;

/// What [`LOG`] reads.
#[derive(Debug, Deserialize)]
struct Log {
    lines: Vec<String>,
    scrolls: bool,
    bottom: bool,
    top: f64,
}

/// Item 4: after four turns of each seat the log holds every line of the round (the deal and a
/// line for each draw and throw), scrolls and shows its newest line; scrolled up by the player,
/// it stays where it was when the table is drawn again; on a phone it opens from the table's
/// menu, in view.
async fn the_whole_round_log_scrolls(size: (u32, u32), label: &str) {
    // Bots that take a moment, so that the page is seen waiting for them.
    let mut stage = stage!(dhumbal_server::Config {
        bot_delay_ms: 100,
        allow_test_decks: true,
        ..dhumbal_tests::server::unlimited_rate()
    });
    let addr = stage.addr;
    let room = room_with(&stage.server, standard(1), vec![deck_for(LIGHT)]).await;
    let b = stage.browser(size).await;
    b.host_room(addr, &room, "Asha").await;
    b.click("#start").await;
    for _ in 0..4 {
        draw_and_throw_it_back(&b).await;
    }
    b.wait_until("the fifth turn", |s| s.my_turn && s.may_draw)
        .await;
    // Each of four seats drew (or took) and threw four times, after the deal.
    let log: Log = b.view(LOG).await;
    assert!(log.lines.len() > 32, "every line of the round: {log:#?}");
    assert!(log.lines[0].contains("dealt"), "the deal first: {log:#?}");
    assert!(
        log.scrolls && log.bottom,
        "it scrolls, newest in view: {log:#?}"
    );

    b.eval("document.querySelector('#log').scrollTop = 0;")
        .await;
    draw_and_throw_it_back(&b).await;
    let kept: Log = b.view(LOG).await;
    assert!(
        kept.top < 1.0 && kept.lines.len() > log.lines.len(),
        "scrolled up, it stays: {kept:#?}"
    );

    b.click("#table-menu-open").await;
    b.click("#table-menu-log").await;
    let seen = b
        .eval(
            "const r = document.querySelector('#log').getBoundingClientRect(); \
             const log = document.querySelector('#log'); \
             return r.top >= 0 && r.bottom <= innerHeight + 1 && log.scrollTop + log.clientHeight >= log.scrollHeight - 2 || [r.top, r.bottom, innerHeight];",
        )
        .await;
    assert_eq!(seen, json!(true), "the log in view from the menu");
    b.screenshot(&format!("layout-log-{label}")).await;
    check_and_close(vec![b]).await;
}

browser_tests!(the_whole_round_log_scrolls {
    the_whole_round_log_scrolls_on_a_phone => ((360, 640), "phone"),
    the_whole_round_log_scrolls_on_a_laptop => ((1280, 800), "laptop"),
});

/// Run before the page's scripts: while `window.__asleep` the page's WebSocket messages wait (as
/// a frozen phone's do), and `window.__wake()` hands them over at once, one task each.
const SLEEP: &str = r#"
window.__asleep = false;
window.__held = [];
window.WebSocket = class extends window.WebSocket {
  constructor(...args) {
    super(...args);
    this.addEventListener('message', (e) => {
      if (!window.__asleep || e.__replayed) return;
      e.stopImmediatePropagation();
      window.__held.push([this, e.data]);
    });
  }
};
// Woken, the held messages are handed on one task each, in order, and anything that arrives
// meanwhile waits behind them, as a browser never reorders a socket's messages (a compressed
// socket's frames only make sense in order).
window.__wake = () => {
  const next = () => {
    const held = window.__held.shift();
    if (held === undefined) {
      window.__asleep = false;
      return;
    }
    const e = new MessageEvent('message', { data: held[1] });
    e.__replayed = true;
    held[0].dispatchEvent(e);
    setTimeout(next, 0);
  };
  setTimeout(next, 0);
};
const hide = (hidden) => {
  Object.defineProperty(document, 'visibilityState', { configurable: true, get: () => (hidden ? 'hidden' : 'visible') });
  Object.defineProperty(document, 'hidden', { configurable: true, get: () => hidden });
  document.dispatchEvent(new Event('visibilitychange'));
};
window.__sleep = () => { hide(true); window.__asleep = true; };
window.__wakeUp = () => { hide(false); window.__wake(); };
"#;

/// Item 4: the page goes to sleep after this seat's throw (hidden, its messages held as a frozen
/// phone's are) while the three bots play; woken, it gets every message at once. A notice says
/// what happened meanwhile, naming the bots' moves, at most one card flies at a time and none is
/// left over the table.
async fn a_woken_page_summarises_what_it_missed(size: (u32, u32), label: &str) {
    let mut stage = stage!(dhumbal_server::Config {
        bot_delay_ms: 150,
        allow_test_decks: true,
        ..dhumbal_tests::server::unlimited_rate()
    });
    let addr = stage.addr;
    let room = room_with(&stage.server, standard(1), vec![deck_for(LIGHT)]).await;
    let b = stage.browser(size).await;
    b.before_each_page(FLIGHTS).await;
    b.before_each_page(SLEEP).await;
    b.host_room(addr, &room, "Asha").await;
    b.click("#start").await;
    draw_and_throw_it_back(&b).await;
    b.wait_until("the next turn", |s| s.my_turn && s.may_draw)
        .await;
    // Cards fly while the page is awake.
    let awake = b.eval("return window.__flights;").await;
    assert!(awake.as_u64().unwrap() > 0, "cards fly: {awake}");

    b.click("#stock").await;
    let drawn = b
        .wait_until("the drawn card", |s| s.may_throw && s.hand.len() == 6)
        .await;
    b.tap(&heaviest(&drawn)).await;
    b.eval("window.__sleep(); document.querySelector('#throw').click();")
        .await;
    // The three bots play while the page sleeps: their states wait.
    b.until(
        "the bots' states to wait",
        "return window.__held.length >= 6 || window.__held.length;",
    )
    .await;
    let before = b
        .view::<Vec<String>>(
            "return [...document.querySelectorAll('#log li')].map((l) => l.textContent);",
        )
        .await;
    b.eval("window.__mostFlying = 0; window.__wakeUp();").await;
    b.wait_until("the turn again", |s| s.my_turn && s.may_draw)
        .await;
    let toast = b
        .wait_view::<String>(
            "a summary of what happened",
            "return document.querySelector('#toast').textContent;",
            |t| t.starts_with("While you were away"),
        )
        .await;
    assert!(
        toast.matches("threw").count() >= 3,
        "the summary names the bots' throws: {toast}"
    );
    b.until(
        "every flight to land",
        "return document.querySelectorAll('.card.flying').length === 0 || document.querySelectorAll('.card.flying').length;",
    )
    .await;
    let most = b.eval("return window.__mostFlying;").await;
    assert!(
        most.as_u64().unwrap() <= 1,
        "at most one card in the air at once after a wake: {most}"
    );
    let after = b
        .view::<Vec<String>>(
            "return [...document.querySelectorAll('#log li')].map((l) => l.textContent);",
        )
        .await;
    assert!(
        after.iter().any(|l| l.starts_with("While you were away")) && after.len() > before.len(),
        "the log keeps the summary: {after:#?}"
    );
    b.screenshot(&format!("layout-woken-{label}")).await;
    check_and_close(vec![b]).await;
}

browser_tests!(a_woken_page_summarises_what_it_missed {
    a_woken_page_summarises_what_it_missed_on_a_phone => ((360, 640), "phone"),
    a_woken_page_summarises_what_it_missed_on_a_laptop => ((1280, 800), "laptop"),
});

/// Item 6: a guest's table says which seat is the host's, in words a screen reader reads, in
/// English and in Nepali; the host's own page says it of its own seat.
#[cfg_attr(
    missing_chromium,
    ignore = "needs Chromium: apt-get install chromium chromium-driver"
)]
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_seats_say_which_one_is_the_host() {
    let mut stage = stage!();
    let addr = stage.addr;
    let asha = stage.browser(DESKTOP).await;
    let link = create_room(&asha, addr, "Asha").await;
    let bina = stage.browser((360, 640)).await;
    bina.join_from_link(&link, "Bina", "#join-sit").await;
    asha.until(
        "Bina in the lobby",
        "return document.querySelector('#lobby-seats').textContent.includes('Bina');",
    )
    .await;
    asha.click("#start").await;
    bina.wait_until("the table", |s| s.screen == "table").await;
    let tags = "return [...document.querySelectorAll('#seats .seat')].map((s) => { \
        const tag = s.querySelector('.host-tag'); \
        return [s.querySelector('.seat-name').textContent, tag ? tag.textContent : null]; });";
    let seen = bina.eval(tags).await;
    let host_seats: Vec<&Value> = seen
        .as_array()
        .unwrap()
        .iter()
        .filter(|s| !s[1].is_null())
        .collect();
    assert_eq!(host_seats.len(), 1, "one seat is the host's: {seen}");
    let name = host_seats[0][0].as_str().unwrap();
    assert!(name.contains("Asha"), "{seen}");
    assert!(
        host_seats[0][1].as_str().unwrap().contains("host"),
        "{seen}"
    );
    let mine = asha
        .eval("const t = document.querySelector('#table > .mine .host-tag'); return t ? t.textContent : null;")
        .await;
    assert!(mine.as_str().is_some_and(|t| t.contains("host")), "{mine}");

    bina.click("#lang-switch button[data-lang='ne']").await;
    bina.until(
        "the tag in Nepali",
        "const t = document.querySelector('#seats .host-tag'); return Boolean(t) && t.textContent.includes('आयोजक') || (t && t.textContent);",
    )
    .await;
    bina.screenshot("layout-host-tag-phone").await;
    check_and_close(vec![asha, bina]).await;
}

/// Run before the page's scripts: `window.__cut()` closes the page's socket, and until
/// `window.__online()` the socket it opens again waits before it may say hello (as one that is
/// still connecting would), so that the page comes back once the bots have played.
const CUT: &str = r#"
window.__offline = false;
window.__sockets = [];
window.__waiting = [];
window.WebSocket = class extends window.WebSocket {
  constructor(...args) {
    super(...args);
    window.__sockets.push(this);
    this.addEventListener('open', (e) => {
      if (!window.__offline || e.__replayed) return;
      e.stopImmediatePropagation();
      window.__waiting.push(this);
    });
  }
};
window.__cut = () => { window.__offline = true; for (const s of window.__sockets) s.close(); };
window.__online = () => {
  window.__offline = false;
  for (const s of window.__waiting.splice(0)) { const e = new Event('open'); e.__replayed = true; s.dispatchEvent(e); }
};
"#;

/// Item 4: the page's connection drops after this seat's throw and comes back once the three
/// bots have played: the view that jumps three turns is summarised in a notice naming their
/// throws, and at most one card flies.
#[cfg_attr(
    missing_chromium,
    ignore = "needs Chromium: apt-get install chromium chromium-driver"
)]
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_page_that_reconnects_summarises_what_it_missed() {
    let mut stage = stage!(dhumbal_server::Config {
        bot_delay_ms: 150,
        allow_test_decks: true,
        ..dhumbal_tests::server::unlimited_rate()
    });
    let addr = stage.addr;
    let room = room_with(&stage.server, standard(1), vec![deck_for(LIGHT)]).await;
    let b = stage.browser((360, 640)).await;
    b.before_each_page(FLIGHTS).await;
    b.before_each_page(CUT).await;
    b.host_room(addr, &room, "Asha").await;
    b.click("#start").await;
    b.wait_until("the page's turn", |s| s.my_turn && s.may_draw)
        .await;
    // A watcher, to know when the bots have played.
    let mut watcher = dhumbal_tests::Client::connect(addr).await;
    watcher
        .send(dhumbal_protocol::ClientMessage::from(
            dhumbal_protocol::Hello {
                spectator: true,
                ..dhumbal_tests::client::hello(&room.code, "Dev")
            },
        ))
        .await;
    watcher.expect_welcome().await;

    b.click("#stock").await;
    let drawn = b
        .wait_until("the drawn card", |s| s.may_throw && s.hand.len() == 6)
        .await;
    b.tap(&heaviest(&drawn)).await;
    b.eval("document.querySelector('#throw').click(); window.__cut();")
        .await;
    watcher.recv_state_where(|v| v.turn != 0).await;
    watcher.recv_state_where(|v| v.turn == 0).await;
    b.until(
        "the page's new socket to wait",
        "return window.__waiting.length > 0 || window.__sockets.length;",
    )
    .await;
    b.eval("window.__mostFlying = 0; window.__online();").await;
    let toast = b
        .wait_view::<String>(
            "a summary of what happened",
            "return document.querySelector('#toast').textContent;",
            |t| t.starts_with("While you were away"),
        )
        .await;
    assert!(
        toast.matches("threw").count() >= 3,
        "the summary names the bots' throws: {toast}"
    );
    b.wait_until("the turn again", |s| s.my_turn && s.may_draw && !s.banner)
        .await;
    let most = b.eval("return window.__mostFlying;").await;
    assert!(
        most.as_u64().unwrap() <= 1,
        "at most one card in the air at once: {most}"
    );
    b.screenshot("layout-reconnected-phone").await;
    watcher.close().await;
    check_and_close(vec![b]).await;
}
