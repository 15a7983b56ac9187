//! The polish pass of issue 15, each item on a phone (360×740) and a laptop (1280×800), and the
//! small phone (320×568) where the item is about it.

use crate::harness::*;
use dhumbal_engine::full_deck;
use dhumbal_protocol::{ClientMessage, DrawFrom};
use dhumbal_tests::Client;

/// A laptop's viewport, as the issue measured it.
const LAPTOP: (u32, u32) = (1280, 800);
/// The smallest phone the page is made for.
const SMALL: (u32, u32) = (320, 568);

/// A fixed deck (54 cards) for round 1 of four seats of five cards: seat 0 is dealt `mine`;
/// every other seat, the turned-up card and the stock's first cards are worth 6 or more, so no
/// bot can call and every card drawn from the stock early on is heavy.
fn deck_for(mine: [&str; 5]) -> Vec<Card> {
    deck_for_round(mine, 1)
}

/// [`deck_for`] for round `round`: the deal moves one seat on each round (round 2 is dealt by
/// seat 0, from seat 1 on).
fn deck_for_round(mine: [&str; 5], round: usize) -> Vec<Card> {
    let first = (round - 1) % 4;
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
            if i < 20 && (i + first) % 4 == 0 {
                mine[i / 4]
            } else {
                heavies.next().or_else(|| rest.next()).unwrap()
            }
        })
        .collect()
}

/// Seat 0's hand of the fixed decks that call on 3 at once (two jokers and three aces).
const LIGHT: [&str; 5] = ["RJ", "BJ", "AS", "AH", "AD"];

/// Hosts `room` as Asha, starts the match and waits for the page's first turn.
async fn start_playing(b: &Browser, addr: SocketAddr, room: &CreatedRoom) -> Snapshot {
    b.host_room(addr, room, "Asha").await;
    b.click("#start").await;
    b.wait_until("the page's turn", |s| s.screen == "table" && s.my_turn)
        .await
}

// ----- 1 and 2: nothing moves when a card is marked; Call and Throw keep their places -----

/// Every card and button at the table, the status line, the prompt, the hand, the seats, the pile
/// and the stock, each by its box on the page (rounded to 0.1 px).
const BOXES: &str = r#"
const out = {};
const box = (e) => { const b = e.getBoundingClientRect(); return [b.left + scrollX, b.top + scrollY, b.width, b.height].map((v) => Math.round(v * 10) / 10); };
[...document.querySelectorAll('#table .card, #table button, #status, #prompt, #hand, #seats .seat, #pile, #stock')]
  .filter((e) => e.checkVisibility())
  .forEach((e, i) => { out[`${i} ${e.tagName.toLowerCase()}#${e.id}[${e.dataset.card || ''}].${e.classList[0] || ''}`] = box(e); });
return out;
"#;

/// The actions' boxes on the page: Call (when shown), Throw and Sort hand, and the hint under Call.
const ACTIONS: &str = r#"
const box = (e) => { const b = e.getBoundingClientRect(); return [b.left + scrollX, b.top + scrollY, b.width, b.height].map((v) => Math.round(v * 10) / 10); };
const shown = (e) => Boolean(e) && e.checkVisibility();
const call = document.querySelector('#call');
const hint = document.querySelector('#call-hint');
return {
  call: shown(call) ? box(call) : null,
  throw: box(document.querySelector('#throw')),
  sort: box(document.querySelector('#sort')),
  hint: shown(hint) ? hint.textContent : null,
  describedBy: shown(call) ? call.getAttribute('aria-describedby') : null,
};
"#;

/// Fails unless the boxes are the same, naming those that moved.
fn assert_same_boxes(before: &Value, after: &Value, what: &str) {
    let (Some(before), Some(after)) = (before.as_object(), after.as_object()) else {
        panic!("boxes are maps: {before} {after}");
    };
    let mut moved: Vec<String> = before
        .iter()
        .filter(|(k, v)| after.get(*k) != Some(v))
        .map(|(k, v)| format!("{k}: {v} -> {:?}", after.get(k)))
        .collect();
    moved.extend(
        after
            .keys()
            .filter(|k| !before.contains_key(*k))
            .map(|k| format!("{k}: new")),
    );
    assert!(moved.is_empty(), "{what}: moved:\n{}", moved.join("\n"));
}

/// Items 1 and 2: a round where seat 0 holds exactly the call limit (5), then one where it holds
/// 3. Marking one, two and three cards moves no card, no button, nothing at the table; Call and
/// Throw stay in the same places whether Call shows or not, across turns and rounds; on 5 the
/// Call button says that a tie catches a caller, on 3 it does not.
async fn marking_moves_nothing_and_call_and_throw_stay_put(size: (u32, u32), label: &str) {
    let mut stage = stage!();
    let addr = stage.addr;
    let on_the_limit = deck_for(["RJ", "BJ", "AS", "2H", "2D"]);
    let room = room_with(
        &stage.server,
        standard(2),
        vec![on_the_limit, deck_for_round(LIGHT, 2)],
    )
    .await;
    let b = stage.browser(size).await;

    let s = start_playing(&b, addr, &room).await;
    assert_eq!(s.call.as_deref(), Some("Call on 5"), "{s:?}");
    let first = b.eval(ACTIONS).await;
    let hint = first["hint"].as_str().unwrap_or_default().to_lowercase();
    assert!(
        hint.contains("tie") && hint.contains("call"),
        "on the limit the Call button says a tie catches a caller: {first}"
    );
    assert_eq!(first["describedBy"], json!("call-hint"), "{first}");
    b.screenshot(&format!("polish-call-on-the-limit-{label}"))
        .await;

    // Drawn: Call goes, Throw and Sort hand stay where they were.
    b.click("#stock").await;
    let drawn = b.wait_until("the draw", |s| s.may_throw).await;
    let after_draw = b.eval(ACTIONS).await;
    assert_eq!(after_draw["call"], Value::Null, "{after_draw}");
    assert_eq!(after_draw["throw"], first["throw"], "Throw moved");
    assert_eq!(after_draw["sort"], first["sort"], "Sort hand moved");

    // Marking one, two, three cards (the last makes no group) and unmarking moves nothing.
    let before = b.eval(BOXES).await;
    for (card, count) in [("2H", 1), ("2D", 2), ("AS", 3)] {
        b.tap(card).await;
        let marked = b.snapshot().await;
        assert_eq!(marked.marked.len(), count, "{marked:?}");
        assert_same_boxes(
            &before,
            &b.eval(BOXES).await,
            &format!("{count} marked ({label})"),
        );
    }
    assert!(b.snapshot().await.status.contains("don't go together"));
    b.screenshot(&format!("polish-three-marked-{label}")).await;
    for card in ["AS", "2D", "2H"] {
        b.tap(card).await;
    }
    assert!(b.snapshot().await.marked.is_empty());
    assert_same_boxes(&before, &b.eval(BOXES).await, "all unmarked");

    // The drawn card goes back; on the next turn Call is back where it was, with its hint.
    let card = drawn
        .hand
        .iter()
        .find(|c| !s.hand.contains(c))
        .unwrap()
        .clone();
    b.tap(&card).await;
    b.click("#throw").await;
    b.wait_until("the next turn", |s| {
        s.my_turn && s.call.is_some() && !s.hand.contains(&card)
    })
    .await;
    let again = b.eval(ACTIONS).await;
    assert_eq!(again, first, "the next turn's actions");

    // Round 2 holds 3: Call in the same place, without the hint.
    b.click("#call").await;
    b.wait_until("the show", |s| s.score_open).await;
    b.click("#next-round").await;
    let s = b
        .wait_until("round 2", |s| {
            s.round == 2 && !s.score_open && s.my_turn && s.call.is_some()
        })
        .await;
    assert_eq!(s.call.as_deref(), Some("Call on 3"));
    let round2 = b.eval(ACTIONS).await;
    assert_eq!(round2["hint"], Value::Null, "under the limit: {round2}");
    assert_eq!(round2["call"], first["call"], "Call moved");
    assert_eq!(round2["throw"], first["throw"], "Throw moved");
    check_and_close(vec![b]).await;
}

browser_tests!(marking_moves_nothing_and_call_and_throw_stay_put {
    marking_moves_nothing_and_call_and_throw_stay_put_on_a_phone => (PHONE, "phone"),
    marking_moves_nothing_and_call_and_throw_stay_put_on_a_laptop => (LAPTOP, "laptop"),
});

// ----- 3: every screen opens at its top; every dialog's main button shows -----

/// `true` when the element `arguments[0]` is wholly inside the window and nothing covers its
/// middle; else why not.
const IN_VIEW: &str = r#"
const e = document.querySelector(arguments[0]);
if (!e || !e.checkVisibility()) return 'not shown';
const b = e.getBoundingClientRect();
if (b.top < 0 || b.left < 0 || b.bottom > innerHeight || b.right > innerWidth) {
  return `outside the ${innerWidth}x${innerHeight} window: ${JSON.stringify(b)}`;
}
const hit = document.elementFromPoint(b.left + b.width / 2, b.top + b.height / 2);
return hit === e || e.contains(hit) || `covered by ${hit ? hit.outerHTML.slice(0, 100) : 'nothing'}`;
"#;

async fn assert_in_view(b: &Browser, css: &str, what: &str) {
    let answer = b.execute(IN_VIEW, vec![json!(css)]).await.unwrap();
    assert_eq!(answer, json!(true), "{what}: {css}");
}

/// Item 3: the lobby scrolled to its bottom, Start: the table opens at its top with the seats in
/// view; How to play's Close, the round's Next round and the match's Rematch are each in view
/// without scrolling.
async fn screens_open_at_the_top_and_dialog_buttons_show(size: (u32, u32), label: &str) {
    let mut stage = stage!();
    let addr = stage.addr;
    let room = room_with(
        &stage.server,
        standard(2),
        vec![deck_for(LIGHT), deck_for_round(LIGHT, 2)],
    )
    .await;
    let b = stage.browser(size).await;
    b.host_room(addr, &room, "Asha").await;
    let scrolled = b
        .eval("window.scrollTo(0, document.documentElement.scrollHeight); return scrollY;")
        .await;
    assert!(
        scrolled.as_f64().unwrap() > 0.0,
        "the lobby is longer than the window"
    );
    // Start, as a tap would, without scrolling to the button.
    b.eval("document.querySelector('#start').click();").await;
    b.wait_until("the table", |s| s.screen == "table" && s.my_turn)
        .await;
    let top = b
        .eval(
            "const seat = document.querySelector('#seats .seat').getBoundingClientRect(); \
             return [scrollY, seat.top, seat.bottom <= innerHeight];",
        )
        .await;
    assert_eq!(top[0], json!(0), "the table opens at its top: {top}");
    assert!(
        top[1].as_f64().unwrap() >= 0.0 && top[2] == json!(true),
        "{top}"
    );
    b.assert_fits_the_width("the table").await;
    b.screenshot(&format!("polish-table-top-{label}")).await;

    b.click("#open-rules").await;
    assert_in_view(&b, "#rules-close", "How to play").await;
    b.click("#rules-close").await;

    b.click("#call").await;
    b.wait_until("the show", |s| s.score_open).await;
    assert_in_view(&b, "#next-round", "the round's result").await;
    b.assert_fits_the_width("the round's result").await;
    b.screenshot(&format!("polish-next-round-{label}")).await;
    b.click("#next-round").await;
    b.wait_until("round 2", |s| s.round == 2 && !s.score_open)
        .await;
    call_now(&b).await;
    assert_eq!(b.text("#score-title").await, "You win the match!");
    assert_in_view(&b, "#rematch", "the match's result").await;
    b.screenshot(&format!("polish-rematch-{label}")).await;
    check_and_close(vec![b]).await;
}

browser_tests!(screens_open_at_the_top_and_dialog_buttons_show {
    screens_open_at_the_top_and_dialog_buttons_show_on_a_small_phone => (SMALL, "small-phone"),
    screens_open_at_the_top_and_dialog_buttons_show_on_a_phone => (PHONE, "phone"),
    screens_open_at_the_top_and_dialog_buttons_show_on_a_laptop => (LAPTOP, "laptop"),
});

// ----- 5: your turn, in the tab's title, by sound and vibration, and cards that move -----

/// Run before the page's scripts: vibrations and tones are counted (not played), and every card
/// that flies across the table is recorded as `from>to`.
const SPIES: &str = r#"
window.__vibrations = [];
Object.defineProperty(navigator, 'vibrate', { configurable: true, value: (p) => { window.__vibrations.push(p); return true; } });
window.__tones = 0;
if (window.AudioContext) {
  const make = AudioContext.prototype.createOscillator;
  AudioContext.prototype.createOscillator = function () { window.__tones += 1; return make.call(this); };
}
window.__flights = [];
new MutationObserver((changes) => {
  for (const c of changes) for (const n of c.addedNodes) {
    if (n.classList && n.classList.contains('flying')) window.__flights.push(`${n.dataset.from}>${n.dataset.to}`);
  }
}).observe(document, { childList: true, subtree: true });
"#;

/// Item 5: the tab's title says whose turn it is; the sound and vibration are off until the
/// toggle turns them on (remembered across a reload); cards fly from the stock to the hand and
/// from a seat to the pile, and not at all when the system asks for reduced motion.
async fn your_turn_shows_in_the_title_and_by_an_optional_alert(size: (u32, u32), label: &str) {
    // Bots that take a moment, so that the page is seen waiting for them.
    let mut stage = stage!(dhumbal_server::Config {
        bot_delay_ms: 250,
        allow_test_decks: true,
        ..dhumbal_tests::server::unlimited_rate()
    });
    let addr = stage.addr;
    let room = room_with(&stage.server, standard(1), vec![deck_for(LIGHT)]).await;
    let b = stage.browser(size).await;
    b.before_each_page(SPIES).await;
    b.host_room(addr, &room, "Asha").await;
    let title = format!("Dhumbal \u{b7} {}", room.code);
    assert_eq!(b.eval("return document.title;").await, json!(title));
    b.click("#start").await;
    b.wait_until("the page's turn", |s| s.screen == "table" && s.my_turn)
        .await;
    let yours = format!("\u{25cf} Your turn \u{2014} {title}");
    b.until(
        "the title to say it is my turn",
        &format!("return document.title === {yours:?} || document.title;"),
    )
    .await;
    let alert = b
        .eval(
            "const a = document.querySelector('#turn-alert'); \
             return [a.getAttribute('aria-pressed'), localStorage.getItem('dhumbal.turnAlert'), window.__tones, window.__vibrations.length];",
        )
        .await;
    assert_eq!(alert, json!(["false", null, 0, 0]), "off by default");

    // A turn: the stock's card flies to the hand; then the bots' throws fly to the pile, and the
    // title is the room's again while they play.
    draw_and_throw_it_back(&b).await;
    b.until(
        "the title to be the room's",
        &format!("return document.title === {title:?} || document.title;"),
    )
    .await;
    // A bot's seat is marked as playing, legibly (item 11).
    assert_controls_and_contrast(&b, "the table while a bot plays").await;
    b.until(
        "cards to fly from the stock to the hand and from a seat to the pile",
        "return window.__flights.includes('stock>hand') && window.__flights.includes('seat>pile') || window.__flights;",
    )
    .await;

    // The alert on (from the table's menu): the next turn sounds and vibrates.
    open_table_menu(&b).await;
    b.click("#turn-alert").await;
    let on = b
        .eval(
            "return [document.querySelector('#turn-alert').getAttribute('aria-pressed'), localStorage.getItem('dhumbal.turnAlert')];",
        )
        .await;
    assert_eq!(on, json!(["true", "on"]));
    close_table_menu(&b).await;
    // On a loaded machine the bots may have played while the menu was open, and the turn that
    // began then began silent: play it, so that the turn waited for begins with the alert on.
    b.wait_until("the page's turn", |s| s.my_turn && s.may_draw)
        .await;
    draw_and_throw_it_back(&b).await;
    b.wait_until("the next turn", |s| s.my_turn && s.may_draw)
        .await;
    b.until(
        "a tone and a vibration",
        "return window.__tones > 0 && window.__vibrations.length > 0 || [window.__tones, window.__vibrations];",
    )
    .await;

    // Reduced motion: nothing flies.
    b.reduce_motion().await;
    let flown = b.eval("return window.__flights.length;").await;
    draw_and_throw_it_back(&b).await;
    b.wait_until("the next turn", |s| s.my_turn && s.may_draw)
        .await;
    assert_eq!(
        b.eval("return window.__flights.length;").await,
        flown,
        "nothing flies with reduced motion"
    );

    // A reload remembers the alert.
    b.refresh().await;
    b.wait_until("the table again", |s| s.screen == "table" && s.my_turn)
        .await;
    let kept = b
        .eval("return document.querySelector('#turn-alert').getAttribute('aria-pressed');")
        .await;
    assert_eq!(kept, json!("true"), "the alert is remembered");
    b.screenshot(&format!("polish-turn-alert-{label}")).await;
    check_and_close(vec![b]).await;
}

browser_tests!(your_turn_shows_in_the_title_and_by_an_optional_alert {
    your_turn_shows_in_the_title_and_by_an_optional_alert_on_a_phone => (PHONE, "phone"),
    your_turn_shows_in_the_title_and_by_an_optional_alert_on_a_laptop => (LAPTOP, "laptop"),
});

// ----- 6: after the match: Rematch (and who asked), Leave, Back to the lobby, Change settings -----

/// Which of the match-over dialog's buttons show.
const AFTER_MATCH: &str = "return ['#rematch', '#leave', '#to-lobby', '#change-settings'] \
    .filter((s) => { const e = document.querySelector(s); return e && e.checkVisibility(); });";

/// Item 6: Asha (the host) and Bina play a one-round match. Bina asks for a rematch and Asha sees
/// her name; Asha's Change settings takes both back to the lobby with the settings open, where
/// she changes the call limit; the next match over, Bina leaves (home, her seat forgotten on her
/// page) and Asha takes the table back to the lobby, where the seats stay.
async fn after_the_match(host_size: (u32, u32), guest_size: (u32, u32), label: &str) {
    let mut stage = stage!();
    let addr = stage.addr;
    let room = room_with(&stage.server, standard(1), vec![deck_for(LIGHT)]).await;
    let link = format!("http://{addr}{}", room.url);
    let asha = stage.browser(host_size).await;
    let bina = stage.browser(guest_size).await;
    asha.host_room(addr, &room, "Asha").await;
    bina.join_from_link(&link, "Bina", "#join-sit").await;
    asha.until_text("#lobby-seats", "Bina").await;
    asha.click("#start").await;
    call_now(&asha).await;
    bina.wait_until("the show", |s| s.score_open).await;

    assert_eq!(
        asha.eval(AFTER_MATCH).await,
        json!(["#rematch", "#leave", "#to-lobby", "#change-settings"]),
        "the host's buttons"
    );
    assert_eq!(
        bina.eval(AFTER_MATCH).await,
        json!(["#rematch", "#leave"]),
        "a guest's buttons"
    );
    bina.click("#rematch").await;
    asha.until_text("#rematch-asked", "Bina").await;
    let asked = asha.text("#rematch-asked").await;
    assert!(asked.contains("rematch"), "{asked}");
    asha.screenshot(&format!("polish-rematch-asked-{label}"))
        .await;

    // Change settings: both back in the lobby, the host's settings open and in view.
    asha.click("#change-settings").await;
    asha.wait_until("the lobby", |s| s.screen == "lobby" && !s.score_open)
        .await;
    bina.wait_until("the lobby", |s| s.screen == "lobby" && !s.score_open)
        .await;
    asha.until(
        "the settings to be open",
        "const f = document.activeElement; const r = f.getBoundingClientRect(); \
         return document.querySelector('#lobby-settings').contains(f) && r.top >= 0 && r.bottom <= innerHeight \
           || `focus on ${f.outerHTML.slice(0, 80)} at ${r.top}`;",
    )
    .await;
    let seats = bina.text("#lobby-seats").await;
    assert!(
        seats.contains("Asha") && seats.contains("Bina"),
        "the seats stay: {seats}"
    );
    asha.eval(
        "const l = document.querySelector('#lobby-settings #set-limit'); l.value = '6'; \
         l.dispatchEvent(new Event('change', { bubbles: true }));",
    )
    .await;
    bina.until_text("#lobby-settings", "call at 6 or less")
        .await;
    asha.screenshot(&format!("polish-change-settings-{label}"))
        .await;

    // The next match; Bina leaves, Asha goes back to the lobby.
    asha.click("#start").await;
    call_now(&asha).await;
    bina.wait_until("the show", |s| s.score_open).await;
    bina.click("#leave").await;
    bina.wait_until("the home page", |s| s.screen == "home")
        .await;
    let gone = bina
        .execute(
            "return [location.pathname, localStorage.getItem('dhumbal.room.' + arguments[0])];",
            vec![json!(room.code)],
        )
        .await
        .unwrap();
    assert_eq!(
        gone,
        json!(["/", null]),
        "Bina's seat is forgotten on her page"
    );
    asha.click("#to-lobby").await;
    asha.wait_until("the lobby", |s| s.screen == "lobby" && !s.score_open)
        .await;
    let seats = asha.text("#lobby-seats").await;
    assert!(
        seats.contains("Asha") && seats.contains("Bina"),
        "the seats stay: {seats}"
    );
    assert!(
        asha.find("#start").await.is_displayed().await.unwrap(),
        "the host may start again"
    );
    check_and_close(vec![asha, bina]).await;
}

browser_tests!(after_the_match {
    after_the_match_rematch_leave_back_to_the_lobby_and_change_settings_host_on_a_laptop => (LAPTOP, PHONE, "host-laptop"),
    after_the_match_rematch_leave_back_to_the_lobby_and_change_settings_host_on_a_phone => (PHONE, LAPTOP, "host-phone"),
});

// ----- 7: the pile's label says what may be taken -----

/// The label of each throw on the pile, with its cards and which of them may be taken.
const PILE_LABELS: &str = "return [...document.querySelectorAll('#pile .throw-group')].map((g) => ({ \
    label: g.querySelector('.pile-label').textContent, \
    cards: [...g.querySelectorAll('.card')].map((c) => c.dataset.card), \
    takeable: [...g.querySelectorAll('.card.takeable')].map((c) => c.dataset.card) }));";

/// Item 7: a household table (throw, then draw) of two: Asha (the page) and Bina (a client of
/// the protocol). A single previous throw says which card may be taken; Bina's pair, which may
/// not be picked up, says that nothing there may be taken.
async fn the_pile_says_what_may_be_taken(size: (u32, u32), label: &str) {
    let mut stage = stage!();
    let addr = stage.addr;
    let settings = Settings {
        players: 2,
        ..Preset::Household.settings()
    };
    // Dealt one at a time from seat 0: Asha KD 9S 4C 5D 3H, Bina 8S 8H 2C 6D QC; 7C turned up.
    let dealt = [
        "KD", "8S", "9S", "8H", "4C", "2C", "5D", "6D", "3H", "QC", "7C",
    ]
    .map(|c| c.parse::<Card>().unwrap());
    let deck: Vec<Card> = dealt
        .iter()
        .copied()
        .chain(full_deck(false).into_iter().filter(|c| !dealt.contains(c)))
        .collect();
    let room = room_with(&stage.server, settings, vec![deck]).await;
    let b = stage.browser(size).await;
    b.host_room(addr, &room, "Asha").await;
    let mut bina = Client::join(addr, &room.code, "Bina", None).await;
    b.until_text("#lobby-seats", "Bina").await;
    b.click("#start").await;

    // Asha throws first, then may take the turned-up card.
    let s = b
        .wait_until("Asha's throw", |s| s.screen == "table" && s.may_throw)
        .await;
    assert!(s.hand.contains(&"KD".to_owned()), "{s:?}");
    b.tap("KD").await;
    b.click("#throw").await;
    b.wait_until("the pick-up", |s| s.may_draw).await;
    let labels = b.eval(PILE_LABELS).await;
    let previous = &labels[0];
    assert_eq!(previous["takeable"], json!(["7C"]), "{labels}");
    let text = previous["label"].as_str().unwrap();
    assert!(
        text.contains("7\u{2663}") && text.contains("take"),
        "the label names the card that may be taken: {labels}"
    );
    b.click("#stock").await;

    // Bina throws her pair (not to be picked up at this table) and draws.
    bina.recv_state_where(|v| v.turn == 1 && v.phase == dhumbal_engine::Phase::Start)
        .await;
    bina.send(ClientMessage::Throw {
        cards: vec!["8S".parse().unwrap(), "8H".parse().unwrap()],
    })
    .await;
    bina.recv_state_where(|v| v.turn == 1 && v.phase == dhumbal_engine::Phase::Draw)
        .await;
    bina.send(ClientMessage::Draw {
        from: DrawFrom::Stock,
        card: None,
    })
    .await;

    // Asha throws; nothing of the pair may be taken, and the label says so.
    b.wait_until("Asha's turn", |s| s.my_turn && s.may_throw)
        .await;
    b.tap("4C").await;
    b.click("#throw").await;
    let s = b.wait_until("the pick-up", |s| s.may_draw).await;
    assert!(s.takeable.is_empty(), "{s:?}");
    let labels = b.eval(PILE_LABELS).await;
    let previous = labels
        .as_array()
        .unwrap()
        .iter()
        .find(|g| g["cards"] == json!(["8S", "8H"]))
        .unwrap_or_else(|| panic!("the pair on the pile: {labels}"));
    let text = previous["label"].as_str().unwrap();
    assert!(
        !text.contains("take one") && text.contains("can't be taken"),
        "the label says nothing there may be taken: {labels}"
    );
    b.screenshot(&format!("polish-pile-nothing-to-take-{label}"))
        .await;
    b.click("#stock").await;
    b.wait_until("Bina's turn", |s| !s.my_turn).await;
    check_and_close(vec![b]).await;
    bina.close().await;
}

browser_tests!(the_pile_says_what_may_be_taken {
    the_pile_says_what_may_be_taken_on_a_phone => (PHONE, "phone"),
    the_pile_says_what_may_be_taken_on_a_laptop => (LAPTOP, "laptop"),
});

// ----- 8: long names shorten with an ellipsis, in full on hover and on focus -----

/// The names at the head of the score table: text, title, tab stop, how they overflow.
const SCORE_NAMES: &str = r#"
return [...document.querySelectorAll('.score-table tr:first-child th .name-cut')].map((e) => {
  const s = getComputedStyle(e);
  return {
    text: e.textContent, title: e.title, tab: e.tabIndex, overflow: s.textOverflow, wrap: s.whiteSpace,
    cut: e.scrollWidth > e.clientWidth, lines: e.getClientRects().length,
    tall: e.getBoundingClientRect().height > parseFloat(s.fontSize) * 1.8,
  };
});
"#;

/// Item 8: a long name in the score table is one line, cut with an ellipsis on a phone, with
/// the whole name as its title (hover) and shown whole when focused.
async fn long_names_shorten_with_an_ellipsis(size: (u32, u32), label: &str) {
    let mut stage = stage!();
    let addr = stage.addr;
    let name = "Chandrabahadur Shrestha";
    let room = room_with(&stage.server, standard(1), vec![deck_for(LIGHT)]).await;
    let b = stage.browser(size).await;
    b.host_room(addr, &room, name).await;
    b.click("#start").await;
    call_now(&b).await;
    let names = b.eval(SCORE_NAMES).await;
    let names = names.as_array().unwrap();
    assert_eq!(names.len(), 4, "{names:?}");
    for n in names {
        assert_eq!(n["title"], n["text"], "the full name is the title: {n}");
        assert_eq!(n["tab"], json!(0), "a name can be focused: {n}");
        assert_eq!(n["overflow"], json!("ellipsis"), "{n}");
        assert_eq!(n["wrap"], json!("nowrap"), "{n}");
        assert_eq!(n["lines"], json!(1), "one line: {n}");
        assert_eq!(n["tall"], json!(false), "one line: {n}");
    }
    let long = &names[0];
    assert_eq!(long["text"], json!(name));
    if size == PHONE {
        assert_eq!(long["cut"], json!(true), "cut on a phone: {long}");
    }
    // Focused, the whole name shows.
    let focused = b
        .eval(
            "const e = document.querySelector('.score-table tr:first-child th .name-cut'); e.focus(); \
             const tip = document.querySelector('#name-tip'); \
             return [document.activeElement === e, tip && tip.checkVisibility() ? tip.textContent : null];",
        )
        .await;
    assert_eq!(focused, json!([true, name]), "the whole name on focus");
    b.screenshot(&format!("polish-long-name-{label}")).await;
    b.assert_fits_the_width("the score dialog").await;
    check_and_close(vec![b]).await;
}

browser_tests!(long_names_shorten_with_an_ellipsis {
    long_names_shorten_with_an_ellipsis_on_a_phone => (PHONE, "phone"),
    long_names_shorten_with_an_ellipsis_on_a_laptop => (LAPTOP, "laptop"),
});

// ----- 9: a reload keeps the hand's order and its marks -----

/// Item 9: sorted and with two cards marked, the hand is the same after a reload; a mark of a
/// card no longer in the hand is dropped.
async fn a_reload_keeps_the_order_and_the_marks(size: (u32, u32), label: &str) {
    let mut stage = stage!();
    let addr = stage.addr;
    let room = room_with(
        &stage.server,
        standard(1),
        vec![deck_for(["KD", "AS", "9C", "2H", "5S"])],
    )
    .await;
    let b = stage.browser(size).await;
    let s = start_playing(&b, addr, &room).await;
    let sorted = ["AS", "2H", "5S", "9C", "KD"].map(str::to_owned).to_vec();
    assert_ne!(s.hand, sorted, "dealt out of order");
    b.click("#sort").await;
    b.tap("9C").await;
    b.tap("2H").await;
    let before = b.snapshot().await;
    assert_eq!(before.hand, sorted);
    assert_eq!(before.marked, ["2H", "9C"].map(str::to_owned).to_vec());

    b.refresh().await;
    let after = b
        .wait_until("the table again", |s| {
            s.screen == "table" && s.hand.len() == 5
        })
        .await;
    assert_eq!(after.hand, before.hand, "the order after a reload");
    assert_eq!(after.marked, before.marked, "the marks after a reload");

    // A mark of a card that is not in the hand (any more) is dropped.
    let key = b
        .eval(
            "const k = Object.keys(sessionStorage).find((k) => k.startsWith('dhumbal.hand.')); \
             const v = JSON.parse(sessionStorage.getItem(k)); v.marked.push('QS'); \
             sessionStorage.setItem(k, JSON.stringify(v)); return k;",
        )
        .await;
    let key = key.as_str().unwrap().to_owned();
    assert!(key.contains(&room.code), "kept by room (and seat): {key}");
    b.refresh().await;
    let again = b
        .wait_until("the table again", |s| {
            s.screen == "table" && s.hand.len() == 5
        })
        .await;
    assert_eq!(again.hand, before.hand);
    assert_eq!(again.marked, before.marked);
    b.screenshot(&format!("polish-reload-keeps-marks-{label}"))
        .await;
    check_and_close(vec![b]).await;
}

browser_tests!(a_reload_keeps_the_order_and_the_marks {
    a_reload_keeps_the_order_and_the_marks_on_a_phone => (PHONE, "phone"),
    a_reload_keeps_the_order_and_the_marks_on_a_laptop => (LAPTOP, "laptop"),
});

// ----- 10: the home page puts joining first -----

/// Item 10: the box for a room's code comes first, in view at once, with Create room; the
/// settings are folded behind "Table settings"; a code typed there opens the room's join form.
async fn the_home_page_puts_joining_first(size: (u32, u32), label: &str) {
    let mut stage = stage!();
    let addr = stage.addr;
    let room = stage.server.create_room(&CreateRoom::default()).await;
    let b = stage.browser(size).await;
    b.open_home(addr).await;
    assert_in_view(&b, "#code-input", "the room code box").await;
    assert_in_view(&b, "#create", "Create room").await;
    let order = b
        .eval(
            "const a = document.querySelector('#code-form').getBoundingClientRect().top; \
             const c = document.querySelector('#home-form').getBoundingClientRect().top; return a < c;",
        )
        .await;
    assert_eq!(order, json!(true), "joining comes first");
    let shown = "return document.querySelector('#set-preset').checkVisibility();";
    assert_eq!(b.eval(shown).await, json!(false), "the settings are folded");
    assert_eq!(
        b.text("#home-settings-toggle").await.trim(),
        "Table settings"
    );
    b.screenshot(&format!("polish-home-{label}")).await;
    b.click("#home-settings-toggle").await;
    assert_eq!(b.eval(shown).await, json!(true), "the settings unfold");
    b.click("#home-settings-toggle").await;
    assert_eq!(b.eval(shown).await, json!(false), "and fold again");

    b.type_into("#code-input", &room.code).await;
    b.click("#code-form button[type='submit']").await;
    b.wait_until("the join form", |s| s.screen == "join").await;
    check_and_close(vec![b]).await;
}

browser_tests!(the_home_page_puts_joining_first {
    the_home_page_puts_joining_first_on_a_phone => (PHONE, "phone"),
    the_home_page_puts_joining_first_on_a_laptop => (LAPTOP, "laptop"),
});

// ----- 11: controls of 44 px, contrast of 4.5:1, one way to watch, notices, the minus sign -----

/// Every visible control (in the open dialog, when one is open) smaller than 44 × 44 px.
const SMALL_CONTROLS: &str = r#"
const dialog = document.querySelector('dialog[open]');
const small = [];
for (const e of document.querySelectorAll('button, input, select, textarea, summary, a.button-link, [role="button"]')) {
  if (!e.checkVisibility({ checkVisibilityCSS: true }) || (dialog && !dialog.contains(e))) continue;
  const b = e.getBoundingClientRect();
  if (b.width < 43.5 || b.height < 43.5) {
    small.push(`${e.tagName.toLowerCase()}#${e.id}.${e.className} "${(e.textContent || e.value || '').trim().slice(0, 30)}": ${b.width.toFixed(1)}x${b.height.toFixed(1)}`);
  }
}
return small;
"#;

/// Every visible text (a text node with a letter or a digit, a select's choice, an input's value
/// or placeholder; in the open dialog, when one is open; inactive controls aside, as WCAG allows)
/// whose contrast with its effective background is under 4.5:1.
///
/// The background is found by compositing each ancestor's background colour from the root in; a
/// gradient counts as each of its colour stops in turn (the worst one is the verdict), and an
/// ancestor's opacity blends the text and the background inside it with what is behind it.
const LOW_CONTRAST: &str = r#"
const dialog = document.querySelector('dialog[open]');
const rgba = (text) => (text.match(/rgba?\([^)]*\)/g) || []).map((c) => {
  const p = c.slice(c.indexOf('(') + 1, -1).split(/[\s,/]+/).filter(Boolean).map(Number);
  return [p[0], p[1], p[2], p.length > 3 ? p[3] : 1];
});
const over = (top, under) => {
  const a = top[3];
  return [0, 1, 2].map((i) => top[i] * a + under[i] * (1 - a)).concat(1);
};
const mix = (c, behind, o) => [0, 1, 2].map((i) => c[i] * o + behind[i] * (1 - o)).concat(1);
const lum = (c) => {
  const [r, g, b] = c.slice(0, 3).map((v) => { v /= 255; return v <= 0.03928 ? v / 12.92 : ((v + 0.055) / 1.055) ** 2.4; });
  return 0.2126 * r + 0.7152 * g + 0.0722 * b;
};
const ratio = (a, b) => { const [x, y] = [lum(a), lum(b)].sort((p, q) => q - p); return (x + 0.05) / (y + 0.05); };
/** The worst contrast of `color` (a computed colour) drawn in `e`. */
const worst = (e, color) => {
  const levels = [];
  for (let n = e; n; n = n.parentElement) {
    const s = getComputedStyle(n);
    levels.unshift({ bg: rgba(s.backgroundColor)[0] || [0, 0, 0, 0], stops: rgba(s.backgroundImage), opacity: Number(s.opacity) });
    if (n.tagName === 'DIALOG') break;
  }
  let worlds = [[]];
  for (const l of levels) if (l.stops.length) worlds = worlds.flatMap((w) => l.stops.map((stop) => [...w, stop]));
  let min = Infinity;
  for (const w of worlds.slice(0, 64)) {
    let k = 0;
    let backdrop = [255, 255, 255, 1];
    const behind = [];
    for (const l of levels) {
      behind.push(backdrop);
      if (l.stops.length) backdrop = over(w[k++], backdrop);
      backdrop = over(l.bg, backdrop);
    }
    let fg = over(color, backdrop);
    let bg = backdrop;
    for (let i = levels.length - 1; i >= 0; i -= 1) {
      if (levels[i].opacity < 1) {
        fg = mix(fg, behind[i], levels[i].opacity);
        bg = mix(bg, behind[i], levels[i].opacity);
      }
    }
    min = Math.min(min, ratio(fg, bg));
  }
  return min;
};
const inactive = (e) => e.closest('button:disabled, input:disabled, select:disabled, [aria-disabled="true"]');
const seen = (e) => e.checkVisibility({ checkOpacity: true, checkVisibilityCSS: true }) && (!dialog || dialog.contains(e));
const low = [];
const check = (e, color, text) => {
  const r = worst(e, color);
  if (r < 4.5) low.push(`${r.toFixed(2)}:1 ${e.tagName.toLowerCase()}#${e.id}.${typeof e.className === 'string' ? e.className : ''} "${text.trim().slice(0, 40)}"`);
};
const walker = document.createTreeWalker(document.body, NodeFilter.SHOW_TEXT);
for (let n = walker.nextNode(); n; n = walker.nextNode()) {
  const e = n.parentElement;
  if (!e || !/[\p{L}\p{N}]/u.test(n.textContent) || e.closest('option, script, style, noscript') || inactive(e) || !seen(e)) continue;
  const s = getComputedStyle(e);
  check(e, rgba(e.closest('svg') ? s.fill : s.color)[0], n.textContent);
}
for (const e of document.querySelectorAll('select, input:not([type="hidden"])')) {
  if (inactive(e) || !seen(e)) continue;
  if (e.tagName === 'SELECT' || e.value) check(e, rgba(getComputedStyle(e).color)[0], e.tagName === 'SELECT' ? e.selectedOptions[0]?.textContent || '' : e.value);
  else if (e.placeholder) check(e, rgba(getComputedStyle(e, '::placeholder').color)[0], e.placeholder);
}
return low;
"#;

/// Fails if the page shows a control under 44 px or a text under 4.5:1.
async fn assert_controls_and_contrast(b: &Browser, what: &str) {
    let small = b.eval(SMALL_CONTROLS).await;
    assert_eq!(small, json!([]), "{what}: controls under 44 px");
    let low = b.eval(LOW_CONTRAST).await;
    assert_eq!(low, json!([]), "{what}: text under 4.5:1");
}

/// Item 11: every control is at least 44 px and every text at least 4.5:1 on the home page
/// (folded and unfolded), the join form, the host's lobby, the table on the page's turn with a
/// card marked, How to play, the round's result and the match's.
async fn controls_and_contrast(size: (u32, u32), label: &str) {
    let mut stage = stage!();
    let addr = stage.addr;
    let other = stage.server.create_room(&CreateRoom::default()).await;
    let room = room_with(
        &stage.server,
        standard(2),
        vec![deck_for(LIGHT), deck_for_round(LIGHT, 2)],
    )
    .await;
    let b = stage.browser(size).await;
    b.open_home(addr).await;
    assert_controls_and_contrast(&b, "the home page").await;
    b.click("#home-settings-toggle").await;
    assert_controls_and_contrast(&b, "the home page's settings").await;
    b.open_join_form(&format!("http://{addr}{}", other.url))
        .await;
    assert_controls_and_contrast(&b, "the join form").await;

    b.host_room(addr, &room, "Asha").await;
    assert_controls_and_contrast(&b, "the host's lobby").await;
    b.click("#start").await;
    let s = b
        .wait_until("the page's turn", |s| s.screen == "table" && s.my_turn)
        .await;
    b.tap(&s.hand[0]).await;
    assert_controls_and_contrast(&b, "the table on the page's turn, a card marked").await;
    b.click("#open-rules").await;
    assert_controls_and_contrast(&b, "How to play").await;
    b.click("#rules-close").await;
    b.tap(&s.hand[0]).await;
    call_now(&b).await;
    assert_controls_and_contrast(&b, "the round's result").await;
    b.click("#next-round").await;
    b.wait_until("round 2", |s| s.round == 2 && !s.score_open)
        .await;
    call_now(&b).await;
    assert_controls_and_contrast(&b, "the match's result").await;
    b.screenshot(&format!("polish-match-over-{label}")).await;
    check_and_close(vec![b]).await;
}

browser_tests!(controls_and_contrast {
    every_control_is_44_px_and_every_text_4_5_to_1_on_a_phone => (PHONE, "phone"),
    every_control_is_44_px_and_every_text_4_5_to_1_on_a_laptop => (LAPTOP, "laptop"),
});

/// Item 11, the rest: "Link copied" goes when the match starts; the full room's page has one
/// button, to watch; the chart's axis writes a negative number with the minus sign.
async fn one_way_to_watch_no_stale_notice_and_the_minus_sign(size: (u32, u32), label: &str) {
    let mut stage = stage!();
    let addr = stage.addr;
    let room = room_with(&stage.server, standard(1), vec![deck_for(LIGHT)]).await;
    let b = stage.browser(size).await;
    b.host_room(addr, &room, "Asha").await;
    b.click("#copy").await;
    b.until(
        "the line under the link",
        "return document.querySelector('#invite-status').textContent !== '';",
    )
    .await;
    b.click("#start").await;
    b.wait_until("the table", |s| s.screen == "table").await;
    let shown = b
        .eval("return document.querySelector('#toast').classList.contains('show') || document.querySelector('#invite-status').checkVisibility();")
        .await;
    assert_eq!(shown, json!(false), "the lobby's notice stays behind");

    // The table is full (bots sit in the empty seats): one button, to watch.
    let chandra = stage.browser(size).await;
    chandra
        .open_join_form(&format!("http://{addr}{}", room.url))
        .await;
    let buttons = chandra
        .eval(
            "return [...document.querySelectorAll('#join-form button')].filter((e) => e.checkVisibility()).map((e) => e.id);",
        )
        .await;
    assert_eq!(buttons, json!(["join-full"]), "one way to watch");
    chandra.join_as("Chandra", "#join-full").await;
    chandra
        .wait_until("the table", |s| s.screen == "table")
        .await;

    call_now(&b).await;
    let axis = b
        .eval("return [...document.querySelectorAll('#score-dialog svg.chart .axis-label')].map((e) => e.textContent);")
        .await;
    let axis: Vec<String> = serde_json::from_value(axis).unwrap();
    assert!(
        axis.iter().any(|t| t.starts_with('\u{2212}')) && !axis.iter().any(|t| t.contains('-')),
        "the axis uses the minus sign: {axis:?}"
    );
    b.screenshot(&format!("polish-chart-{label}")).await;
    check_and_close(vec![b, chandra]).await;
}

browser_tests!(one_way_to_watch_no_stale_notice_and_the_minus_sign {
    one_way_to_watch_no_stale_notice_and_the_minus_sign_on_a_phone => (PHONE, "phone"),
    one_way_to_watch_no_stale_notice_and_the_minus_sign_on_a_laptop => (LAPTOP, "laptop"),
});
