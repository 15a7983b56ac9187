//! The end of a match is a moment, on a phone (360×640) and a laptop
//! (1280×800): the match-over dialog's heading says who won (or who shared first place) before
//! anything else, and the room's ledger (played, won, points per seat) shows in the dialog and
//! in the lobby; after Verify the heading is still in view; the replay page's controls never
//! cover its stock or pile; the settings say "Difficulty"; a hand emptied at the show says so.
//! The match's end and the ledger, and the replay's controls, are checked by `a11y.rs`'s English
//! matches (the host on a phone, then on a laptop), which already play the match and open the
//! replay page they need.

use crate::hand_order::{LAPTOP, PHONE_640};
use crate::harness::*;
use dhumbal_engine::full_deck;
use dhumbal_protocol::{ClientMessage, DrawFrom};
use dhumbal_tests::Client;

/// The ledger's rows as the page shows them, in `scope`: name, played, won, points.
async fn ledger_rows(b: &Browser, scope: &str) -> Value {
    b.eval(&format!(
        "return [...document.querySelectorAll('{scope} .ledger-table tr')].slice(1).map((tr) => \
           [...tr.children].map((c) => c.textContent.trim()));"
    ))
    .await
}

/// The text of the first heading in the score dialog, and whether it is `#score-title`.
async fn first_heading(b: &Browser) -> Value {
    b.eval(
        "const h = document.querySelector('#score-dialog h1, #score-dialog h2, #score-dialog h3'); \
         return [h.textContent, h.id];",
    )
    .await
}

/// Before the match: the host's lobby shows no ledger.
pub(crate) async fn no_ledger_before_a_match_has_ended(asha: &Browser) {
    assert_eq!(
        asha.eval("return document.querySelector('#lobby-ledger').hidden;")
            .await,
        json!(true),
        "no ledger before a match has ended"
    );
}

/// From the match-over dialog of [`two_called_rounds`] in English, where Asha (the host) and
/// Bina share first place, on both people's pages: the heading names both first, then the
/// standings and the ledger; the lobby shows the ledger; then a one-round match that Asha
/// alone takes, whose dialog and lobby count it. Ends with both pages in the lobby.
pub(crate) async fn the_end_of_a_match_names_the_winner_and_the_room_keeps_a_ledger(
    asha: &Browser,
    bina: &Browser,
    label: &str,
) {
    // A shared first place: the heading names both, first; then the standings and the ledger.
    asha.wait_until("the match's end", |s| {
        s.score_open && s.phase == "match_over"
    })
    .await;
    asha.until_text("#score-title", "share first place").await;
    assert_eq!(
        first_heading(asha).await,
        json!(["You and Bina share first place", "score-title"])
    );
    bina.until_text("#score-title", "share first place").await;
    assert_eq!(
        first_heading(bina).await,
        json!(["You and Asha share first place", "score-title"])
    );
    let standings = asha.text("#score-dialog .standings").await;
    assert!(
        standings.starts_with("1. Asha +100") && standings.contains("1. Bina +100"),
        "{standings}"
    );
    let shared = json!([
        ["Asha", "1", "1", "+100"],
        ["Bina", "1", "1", "+100"],
        ["Bot 3", "1", "0", "\u{2212}100"],
        ["Bot 4", "1", "0", "\u{2212}100"],
    ]);
    for page in [asha, bina] {
        page.until(
            "the ledger in the dialog",
            "return document.querySelectorAll('#score-dialog .ledger-table tr').length === 5;",
        )
        .await;
        assert_eq!(ledger_rows(page, "#score-dialog").await, shared);
        page.assert_fits_the_width("the match's result").await;
    }
    asha.screenshot(&format!("ledger-shared-first-{label}"))
        .await;

    // One round this time: Asha alone takes the match.
    asha.click("#change-settings").await;
    asha.wait_until("the lobby", |s| s.screen == "lobby").await;
    bina.wait_until("the lobby", |s| s.screen == "lobby").await;
    for page in [asha, bina] {
        assert_eq!(ledger_rows(page, "#lobby-ledger").await, shared);
    }
    asha.eval(
        "const r = document.querySelector('#lobby-settings #set-rounds'); r.value = '1'; \
         r.dispatchEvent(new Event('change', { bubbles: true }));",
    )
    .await;
    bina.until_text("#lobby-settings", "1 round").await;
    asha.click("#start").await;
    call_now(asha).await;
    bina.wait_until("the match's end", |s| s.score_open).await;
    asha.until_text("#score-title", "You win").await;
    assert_eq!(
        first_heading(asha).await,
        json!(["You win the match!", "score-title"])
    );
    bina.until_text("#score-title", "Asha wins").await;
    assert_eq!(
        first_heading(bina).await,
        json!(["Asha wins the match", "score-title"])
    );
    let two = json!([
        ["Asha", "2", "2", "+211"],
        ["Bina", "2", "1", "+89"],
        ["Bot 3", "2", "0", "\u{2212}150"],
        ["Bot 4", "2", "0", "\u{2212}150"],
    ]);
    for page in [asha, bina] {
        page.until(
            "the ledger to count the second match",
            "const c = document.querySelector('#score-dialog .ledger-table tr:nth-child(2) td'); \
             return Boolean(c) && c.textContent === '2';",
        )
        .await;
        assert_eq!(ledger_rows(page, "#score-dialog").await, two);
    }
    bina.screenshot(&format!("ledger-winner-guest-{label}"))
        .await;

    // Back in the lobby, both pages show the ledger.
    asha.click("#to-lobby").await;
    for page in [asha, bina] {
        page.wait_until("the lobby", |s| s.screen == "lobby" && !s.score_open)
            .await;
        assert_eq!(ledger_rows(page, "#lobby-ledger").await, two);
        page.assert_fits_the_width("the lobby with its ledger")
            .await;
    }
    asha.eval("document.querySelector('#lobby-ledger').scrollIntoView();")
        .await;
    asha.screenshot(&format!("ledger-lobby-{label}")).await;
}

/// Where the dialog's heading and Verify's verdict are, against the window.
const IN_VIEW: &str = r#"
const box = (s) => { const r = document.querySelector(s).getBoundingClientRect(); return [r.top, r.bottom]; };
const shown = ([top, bottom]) => top >= 0 && bottom <= innerHeight && bottom > top;
return { title: shown(box('#score-title')), verdict: shown(box('#verify-result')), at: [box('#score-title'), box('#verify-result'), innerHeight] };
"#;

/// After Verify on a small phone the dialog's heading stays in view: the results scroll under
/// it to the verdict.
async fn verify_keeps_the_heading_in_view(size: (u32, u32), label: &str) {
    let mut stage = stage!();
    let addr = stage.addr;
    let room = stage
        .server
        .create_room(&CreateRoom {
            settings: Some(standard(1)),
            ..CreateRoom::default()
        })
        .await;
    let b = stage.browser(size).await;
    b.host_room(addr, &room, "Asha").await;
    b.click("#start").await;
    b.wait_until("the table", |s| s.screen == "table").await;
    play_to_the_score(&b, CALL_AT_ONCE).await;
    b.wait_until("the match's end", |s| s.phase == "match_over")
        .await;
    let heading = first_heading(&b).await;
    assert_eq!(heading[1], "score-title", "{heading}");
    let text = heading[0].as_str().unwrap();
    assert!(
        text.contains("win") || text.contains("share first place"),
        "the heading says who won: {text}"
    );
    b.click("#verify").await;
    b.until(
        "the verdict",
        "return document.querySelector('#verify-result').classList.contains('ok');",
    )
    .await;
    let seen = b.eval(IN_VIEW).await;
    assert_eq!(
        seen["title"],
        json!(true),
        "the heading after Verify: {seen}"
    );
    assert_eq!(
        seen["verdict"],
        json!(true),
        "the verdict after Verify: {seen}"
    );
    b.screenshot(&format!("ledger-after-verify-{label}")).await;
    check_and_close(vec![b]).await;
}

browser_tests!(verify_keeps_the_heading_in_view {
    verify_keeps_the_heading_in_view_on_a_phone => (PHONE_640, "phone"),
    verify_keeps_the_heading_in_view_on_a_laptop => (LAPTOP, "laptop"),
});

/// At every scroll position from the top of the page to its end, whether the replay's controls
/// overlap its stock or its pile: the overlaps found.
const CONTROLS_OVER: &str = r#"
const rect = (s) => document.querySelector(s).getBoundingClientRect();
const hit = (a, b) => a.left < b.right && b.left < a.right && a.top < b.bottom && b.top < a.bottom;
const max = Math.max(0, document.documentElement.scrollHeight - innerHeight);
const found = [];
for (let y = 0; ; y = Math.min(max, y + 40)) {
  scrollTo(0, y);
  const c = rect('.replay-controls');
  for (const s of ['#replay .stock-box', '#replay-pile']) {
    const r = rect(s);
    if (hit(c, r)) found.push(`${s} at scroll ${y}: controls ${Math.round(c.top)}-${Math.round(c.bottom)}, ${s} ${Math.round(r.top)}-${Math.round(r.bottom)}`);
  }
  if (y >= max) break;
}
scrollTo(0, 0);
return found;
"#;

/// The replay page's controls never cover the stock or the pile, at any scroll position, at the
/// deal and at the end of the match: on `b`, which opens `file` (a hand history) on the replay
/// page. Run by `a11y.rs`'s English matches, on the host's page (a phone, then a laptop).
pub(crate) async fn the_replay_controls_never_cover_the_stock_or_the_pile(
    b: &Browser,
    addr: SocketAddr,
    file: &Path,
    label: &str,
) {
    open_replay(b, addr, file).await;
    let at_the_deal = b.eval(CONTROLS_OVER).await;
    assert_eq!(at_the_deal, json!([]), "at the deal");
    b.screenshot(&format!("ledger-replay-deal-{label}")).await;
    for _ in 0..6 {
        b.click("#replay-forward").await;
    }
    assert_eq!(b.eval(CONTROLS_OVER).await, json!([]), "mid-round");
    b.keys("\u{e010}").await; // End
    assert_eq!(b.eval(CONTROLS_OVER).await, json!([]), "at the end");
    b.eval("scrollTo(0, document.documentElement.scrollHeight);")
        .await;
    b.screenshot(&format!("ledger-replay-end-{label}")).await;
    b.assert_fits_the_width("the replay page").await;
}

/// Item 6: the settings form labels the bots' level "Difficulty" (कठिनाइ in Nepali), and a hand
/// emptied at the show says "no cards" (पत्ती छैन) in the score table.
async fn difficulty_and_a_hand_emptied_at_the_show(size: (u32, u32), label: &str) {
    let mut stage = stage!();
    let addr = stage.addr;
    let settings = Settings {
        players: 2,
        ..standard(1)
    };
    // Dealt one at a time from seat 0: Asha 2♠ 2♥ 2♦ 2♣ 5♠, Bina A♠ A♥ A♦ A♣ 3♣; K♣ turned up;
    // then the stock: 5♥ (Asha), 3♦ (Bina), 5♦ (Asha).
    let top = [
        "2S", "AS", "2H", "AH", "2D", "AD", "2C", "AC", "5S", "3C", "KC", "5H", "3D", "5D",
    ]
    .map(|c| c.parse::<Card>().unwrap());
    let deck: Vec<Card> = top
        .iter()
        .copied()
        .chain(full_deck(true).into_iter().filter(|c| !top.contains(c)))
        .collect();
    let room = room_with(&stage.server, settings, vec![deck]).await;
    let b = stage.browser(size).await;
    b.host_room(addr, &room, "Asha").await;
    let label_of = "return document.querySelector('label[for=\"set-difficulty\"]').textContent;";
    assert_eq!(
        b.eval(label_of).await,
        json!("Difficulty"),
        "the lobby's form"
    );
    let mut bina = Client::join(addr, &room.code, "Bina", None).await;
    b.until_text("#lobby-seats", "Bina").await;
    b.click("#start").await;

    // Asha draws 5♥ and throws her four 2s; Bina draws 3♦ and throws her 3s.
    b.wait_until("Asha's draw", |s| s.screen == "table" && s.may_draw)
        .await;
    b.click("#stock").await;
    b.wait_until("Asha's throw", |s| s.may_throw).await;
    for card in ["2S", "2H", "2D", "2C"] {
        b.tap(card).await;
    }
    b.click("#throw").await;
    bina.recv_state_where(|v| v.turn == 1 && v.can_draw).await;
    bina.send(ClientMessage::Draw {
        from: DrawFrom::Stock,
        card: None,
    })
    .await;
    bina.recv_state_where(|v| v.turn == 1 && v.can_throw).await;
    bina.send(ClientMessage::Throw {
        cards: vec!["3C".parse().unwrap(), "3D".parse().unwrap()],
    })
    .await;
    // Asha draws 5♦ and throws her three 5s: her hand is empty; Bina calls on 4.
    b.wait_until("Asha's second draw", |s| s.my_turn && s.may_draw)
        .await;
    b.click("#stock").await;
    b.wait_until("Asha's second throw", |s| s.may_throw).await;
    for card in ["5S", "5H", "5D"] {
        b.tap(card).await;
    }
    b.click("#throw").await;
    b.wait_until("the empty hand", |s| s.hand.is_empty()).await;
    bina.recv_state_where(|v| v.turn == 1 && v.can_call).await;
    bina.send(ClientMessage::Call).await;
    b.wait_until("the show", |s| s.score_open).await;
    let cell = "return document.querySelector('#score-dialog .hands-row td').textContent;";
    b.until(
        "Asha's cell",
        "return document.querySelector('#score-dialog .hands-row td').textContent !== '';",
    )
    .await;
    assert_eq!(b.eval(cell).await, json!("no cards"));
    b.screenshot(&format!("ledger-no-cards-{label}")).await;

    // In Nepali: the dialog after a reload, then the settings of the home page.
    b.eval("localStorage.setItem('dhumbal.lang', 'ne');").await;
    b.refresh().await;
    b.wait_until("the show again", |s| s.score_open).await;
    b.until(
        "the Nepali cell",
        "return document.querySelector('#score-dialog .hands-row td').textContent === '\u{092A}\u{0924}\u{094D}\u{0924}\u{0940} \u{091B}\u{0948}\u{0928}';",
    )
    .await;
    b.goto(&format!("http://{addr}/")).await;
    b.wait_until("the home page", |s| s.screen == "home").await;
    b.until(
        "the Nepali label",
        &format!(
            "{} === '\u{0915}\u{0920}\u{093F}\u{0928}\u{093E}\u{0907}';",
            label_of.trim_end_matches(';')
        ),
    )
    .await;
    check_and_close(vec![b]).await;
    bina.close().await;
}

browser_tests!(difficulty_and_a_hand_emptied_at_the_show {
    difficulty_and_a_hand_emptied_at_the_show_on_a_phone => (PHONE_640, "phone"),
    difficulty_and_a_hand_emptied_at_the_show_on_a_laptop => (LAPTOP, "laptop"),
});
