//! What a screen reader hears (issue 31): through the page's polite live region (`#announcer`),
//! every move at the table is said once, in words, in the page's language: this page's own turn
//! with its hand and what it is worth, its draw naming the card drawn (as that card's button
//! names it), its throw, every bot's draw, pick-up and throw, a turn that ran out and what the
//! stand-in then did, the call, the show with every hand and who took the round, and the match's
//! end. Arriving at the home page, the lobby and the table puts the focus on that screen's
//! heading. On a phone in English and on a laptop in Nepali.

use crate::hand_order::{LAPTOP, PHONE_640, deck_dealing};
use crate::harness::*;

/// The first bot's hand (the others hold [`BOT3`] and [`BOT4`]): heavy, so that it does not
/// call.
const BOT2: [&str; 5] = ["2S", "9H", "9D", "9C", "10S"];

/// Run before the page's own scripts: every line added to the live region is kept, in order,
/// in `window.__heard` (what a screen reader is given to say).
pub(crate) const RECORD_HEARD: &str = "window.__heard = []; \
    document.addEventListener('DOMContentLoaded', () => { \
      const region = document.getElementById('announcer'); \
      if (region) new MutationObserver((changes) => { for (const c of changes) \
        for (const n of c.addedNodes) window.__heard.push(n.textContent); }) \
        .observe(region, { childList: true }); });";

/// What the live region has been given to say since the page loaded.
pub(crate) async fn heard(b: &Browser) -> Vec<String> {
    b.view("return window.__heard || [];").await
}

/// How many of `lines` are exactly `line`.
fn times(lines: &[String], line: &str) -> usize {
    lines.iter().filter(|l| l.as_str() == line).count()
}

/// The message `key` with `params`, in the page's language (i18n.js's `t`).
async fn words(b: &Browser, key: &str, params: Value) -> String {
    let said = b
        .execute_async(
            "const done = arguments[arguments.length - 1]; \
             import('/assets/i18n.js').then((m) => done(m.t(arguments[0], arguments[1])));",
            vec![json!(key), params],
        )
        .await
        .unwrap();
    said.as_str().unwrap().to_owned()
}

/// The name a card of the hand is read by (its button's words).
async fn card_name(b: &Browser, card: &str) -> String {
    b.view(&format!(
        "return document.querySelector(\"#hand .card[data-card='{card}'] .card-name\").textContent;"
    ))
    .await
}

/// The focused element: its tag and id, and the screen it is on.
async fn focused(b: &Browser) -> Value {
    b.eval(
        "const a = document.activeElement; const s = a && a.closest('section'); \
         return [a ? a.tagName : null, a ? a.id : null, s ? s.id : null];",
    )
    .await
}

/// How long one second of the turn timer lasts here: the 15-second turn that runs out takes 9 s,
/// and the page's own turns (each a score of WebDriver round trips) still have time on a busy
/// machine.
const SECOND_MS: u64 = 600;

/// A one-round match with a 15-second turn timer (fast: [`SECOND_MS`]) against three bots, in
/// `lang`.
async fn a_round_heard(size: (u32, u32), lang: &str, label: &str) {
    let mut stage = stage!(fast_turns(SECOND_MS));
    let addr = stage.addr;
    let settings = Settings {
        turn_timer: Some(15),
        ..standard(1)
    };
    let decks = vec![deck_dealing([LIGHT, BOT2, BOT3, BOT4], 0)];
    let room = room_with(&stage.server, settings, decks).await;
    let b = stage.browser(size).await;
    b.before_each_page(RECORD_HEARD).await;

    // Home, then the lobby, then the table: each time the focus is on the screen's heading.
    b.open_home(addr).await;
    b.switch_language(lang).await;
    b.open_home(addr).await;
    assert_eq!(focused(&b).await, json!(["H1", "", "home"]), "home");
    b.host_room(addr, &room, "Asha").await;
    assert_eq!(
        focused(&b).await,
        json!(["H1", "lobby-title", "lobby"]),
        "the lobby"
    );
    b.click("#start").await;
    let turn = b
        .wait_until("the first turn", |s| s.screen == "table" && s.my_turn)
        .await;
    assert_eq!(
        focused(&b).await,
        json!(["H1", "table-title", "table"]),
        "the table"
    );

    // This page's turn: said with the hand in words and what it is worth.
    let mut hand_names = Vec::new();
    for card in &turn.hand {
        hand_names.push(card_name(&b, card).await);
    }
    let your_turn = words(
        &b,
        "say.yourTurn",
        json!({ "cards": hand_names.join(", "), "total": 3 }),
    )
    .await;
    poll(
        "the turn to be said",
        async || heard(&b).await,
        |h| h.contains(&your_turn),
    )
    .await;

    // Its draw, naming the card drawn as its button does, then what the hand is worth.
    b.click("#stock").await;
    let drawn = b
        .wait_until("the drawn card", |s| s.may_throw && s.hand.len() == 6)
        .await;
    let card = new_card(&turn, &drawn);
    let name = card_name(&b, &card).await;
    let you_drew = words(&b, "say.youDrew", json!({ "card": name })).await;
    let worth = words(&b, "say.holding", json!({ "total": 3 + value(&card) })).await;
    let h = poll(
        "the draw to be said",
        async || heard(&b).await,
        |h| h.contains(&you_drew),
    )
    .await;
    assert_eq!(times(&h, &you_drew), 1, "said once: {h:#?}");
    assert_eq!(h.last(), Some(&worth), "then the hand's worth: {h:#?}");

    // Its throw.
    b.tap(&card).await;
    b.click("#throw").await;
    let you = words(&b, "log.you", json!({})).await;
    let you_threw = words(&b, "log.threw", json!({ "who": you, "cards": name })).await;
    poll(
        "the throw to be said",
        async || heard(&b).await,
        |h| h.contains(&you_threw),
    )
    .await;

    // The bots' turns, then this page's second, which runs out: a stand-in plays it.
    let timed_out = words(&b, "notice.timedOutYou", json!({})).await;
    let h = poll(
        "the turn to run out and be said",
        async || heard(&b).await,
        |h| h.contains(&timed_out),
    )
    .await;
    assert_eq!(times(&h, &timed_out), 1, "said once: {h:#?}");
    let started = Instant::now();
    let s = loop {
        let s = my_turn_or_the_score(&b, started).await;
        let h = heard(&b).await;
        let stand_in = words(&b, "log.botForYou", json!({})).await;
        let by_stand_in = h.iter().filter(|l| l.starts_with(&stand_in)).count();
        if s.score_open || (s.call.is_some() && by_stand_in > 0) {
            break s;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    };
    if !s.score_open {
        b.click("#call").await;
        b.wait_until("the show", |s| s.score_open).await;
    }
    b.screenshot(&format!("heard-show-{label}")).await;

    // The show, the round's taker and the match's end, each said once.
    let h = poll(
        "the match's end to be said",
        async || heard(&b).await,
        |h| h.iter().any(|l| l.contains(&words_sync_match_over(lang))),
    )
    .await;
    let show: Vec<&String> = h
        .iter()
        .filter(|l| l.starts_with(show_opening(lang)))
        .collect();
    assert_eq!(show.len(), 1, "the show said once: {h:#?}");
    for n in &hand_names {
        assert!(show[0].contains(n.as_str()), "the show names {n}: {show:?}");
    }
    let log: Vec<String> = b
        .view("return [...document.querySelectorAll('#log li')].map((li) => li.textContent);")
        .await;
    // Every bot's move, once: as many lines say each bot's name as the log has for it.
    for bot in 2..=4 {
        let bot_name = words(&b, "seat.bot", json!({ "n": bot })).await;
        let said = h.iter().filter(|l| l.starts_with(&bot_name)).count();
        let logged = log.iter().filter(|l| l.starts_with(&bot_name)).count();
        assert!(logged > 0, "{bot_name} moved: {log:#?}");
        assert_eq!(
            said, logged,
            "{bot_name}'s moves, each said once: {h:#?} {log:#?}"
        );
    }
    // In words: no card's symbol is said.
    for line in &h {
        assert!(
            !line.contains(['\u{2660}', '\u{2665}', '\u{2666}', '\u{2663}']),
            "a card said by its symbol: {line}"
        );
    }
    println!("heard ({label}), {} lines:", h.len());
    for line in &h {
        println!("  {line}");
    }

    // A reshuffle is said in words, as the log says it.
    let reshuffled: String = b
        .execute_async(
            "const done = arguments[arguments.length - 1]; \
             import('/assets/announce.js').then((m) => done(m.eventWords({ type: 'reshuffled', stock: 30 }, [], 0, false, {}).join(' ')));",
            vec![],
        )
        .await
        .unwrap()
        .as_str()
        .unwrap()
        .to_owned();
    assert_eq!(
        reshuffled,
        words(&b, "log.reshuffled", json!({ "count": 30 })).await
    );
    check_and_close(vec![b]).await;
}

/// The opening of the show's sentence in `lang` (`say.show` before its `{hands}`).
fn show_opening(lang: &str) -> &'static str {
    if lang == "ne" {
        "हात देखाइयो:"
    } else {
        "The show:"
    }
}

/// The match's end, as the page says it in `lang` (`log.matchOver`).
fn words_sync_match_over(lang: &str) -> String {
    if lang == "ne" {
        "खेल सकियो।".to_owned()
    } else {
        "The match is over.".to_owned()
    }
}

browser_tests!(a_round_heard {
    a_round_is_heard_in_english_on_a_phone => (PHONE_640, "en", "en-phone"),
    a_round_is_heard_in_nepali_on_a_laptop => (LAPTOP, "ne", "ne-laptop"),
});
