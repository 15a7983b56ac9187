//! The web client in Nepali (नेपाली): a whole round with no English word left on the screen, the
//! language remembered and switched back on every page, and the two message tables alike.

use crate::friends::{
    assert_clock_takes_no_room, choose_two_seats_and_15_s, slow_bots, unfold_home_settings,
};
use crate::harness::*;

/// Every English-looking word the page shows now, with where it is: each visible text node, the
/// `aria-label`, `title` and `placeholder` of each visible element, and the document's title.
///
/// A word is English-looking when it has a Latin letter. Left out on purpose, and small:
/// - text whose nearest `lang` is not `ne`: the language switch's "English" (`lang="en"`) and the
///   romanised Nepali words of How to play (`lang="ne-Latn"`);
/// - text marked `translate="no"` (room codes, the commitment's digits, the shuffle seeds) and
///   keys of the keyboard (`<kbd>`: 1-9, T, S, Page Up… as printed on the keys);
/// - the corners of a card's face (`.corner`: A, K, Q, J as printed on the cards), and a card's
///   short label in a sentence, an index and a suit (`Q♠`, `10♥`);
/// - a SHA-256 value in full (64 hex digits: the commitment's tooltip);
/// - the room's code (`arguments[0]`), which the document's title carries.
const ENGLISH_WORDS: &str = r#"
const code = arguments[0] || null;
const CARD = /^(?:10|[2-9AJQK])[♠♥♦♣]$/u;
const HASH = /^[0-9a-f]{64}$/;
const PUNCT = /^[\s.,;:!?()"'‘’“”«»‹›·—–\-…।|/+−=]+|[\s.,;:!?()"'‘’“”«»‹›·—–\-…।|/+−=]+$/gu;
const found = [];
const visible = (e) => e.checkVisibility({ visibilityProperty: true, checkVisibilityCSS: true });
const shown = (e) => {
  if (e.closest('option')) return visible(e.closest('select'));
  if (e.closest('svg')) return visible(e.closest('svg'));
  return visible(e);
};
const excused = (e) => {
  const lang = e.closest('[lang]');
  return (lang && lang.lang !== 'ne') || e.closest('[translate="no"], kbd, .corner, script, style, noscript');
};
const words = (text, where) => {
  for (const raw of text.split(/\s+/)) {
    const word = raw.replace(PUNCT, '');
    if (!/[A-Za-z]/.test(word) || CARD.test(word) || HASH.test(word) || word === code) continue;
    found.push(`${where}: ${word} (in "${text.trim().slice(0, 80)}")`);
  }
};
const walker = document.createTreeWalker(document.body, NodeFilter.SHOW_TEXT);
for (let n = walker.nextNode(); n; n = walker.nextNode()) {
  const e = n.parentElement;
  if (!e || !n.textContent.trim() || excused(e) || !shown(e)) continue;
  words(n.textContent, `${e.tagName.toLowerCase()}${e.id ? '#' + e.id : ''}`);
}
for (const e of document.body.querySelectorAll('[aria-label], [title], [placeholder]')) {
  if (excused(e) || !shown(e)) continue;
  for (const a of ['aria-label', 'title', 'placeholder']) {
    if (e.hasAttribute(a)) words(e.getAttribute(a), `${e.tagName.toLowerCase()}${e.id ? '#' + e.id : ''}[${a}]`);
  }
}
words(document.title, 'title');
return found;
"#;

/// Fails if the page shows an English word (see [`ENGLISH_WORDS`]), or is not marked Nepali.
async fn assert_no_english(b: &Browser, what: &str, code: Option<&str>) {
    let lang = b.eval("return document.documentElement.lang;").await;
    assert_eq!(lang, json!("ne"), "{what}: <html lang>");
    let found = b.execute(ENGLISH_WORDS, vec![json!(code)]).await.unwrap();
    let found: Vec<String> = serde_json::from_value(found).unwrap();
    assert!(
        found.is_empty(),
        "{what} shows English words:\n{}",
        found.join("\n")
    );
    assert_fits(b, what).await;
}

/// Fails if the page is wider than the window, naming the elements that stick out (the longer
/// words of one language are where a layout made for the other breaks).
async fn assert_fits(b: &Browser, what: &str) {
    let out = b
        .eval(
            "const d = document.documentElement; if (d.scrollWidth <= d.clientWidth) return []; \
             return [...document.body.querySelectorAll('*')] \
               .filter((e) => e.getBoundingClientRect().right > d.clientWidth + 0.5 && e.checkVisibility() \
                 && ![...e.children].some((c) => c.getBoundingClientRect().right > d.clientWidth + 0.5)) \
               .slice(0, 8).map((e) => `${e.tagName.toLowerCase()}#${e.id}.${e.className}: ${e.textContent.slice(0, 60)}`);",
        )
        .await;
    assert_eq!(out, json!([]), "{what} is wider than the window");
}

/// In Nepali, chosen with the control on the home page: How to play, the lobby, the table in the
/// middle of a round (with a card marked), How to play again from the table, and the score
/// dialog each show no English word. On a phone the match is the standard table's three rounds
/// (round 1's dialog, with Next round); on a desktop it is a one-round match (set in the form),
/// whose dialog has the standings, the seeds and Verify the deals, and then the replay page of
/// the match.
async fn a_round_in_nepali(size: (u32, u32), label: &str) {
    let mut stage = stage!();
    let addr = stage.addr;
    let b = stage.browser(size).await;
    let one_round = label == "desktop";

    b.open_home(addr).await;
    b.switch_language("ne").await;
    assert_eq!(b.text("#create").await, "कोठा बनाउनुहोस्");
    if one_round {
        // A one-round match: the rounds field, as a person sets it (a change event).
        b.eval(
            "const r = document.querySelector('#set-rounds'); r.value = '1'; \
             r.dispatchEvent(new Event('change', { bubbles: true }));",
        )
        .await;
        assert_eq!(
            b.eval("return document.querySelector('#set-preset').value;")
                .await,
            json!("custom")
        );
    }
    assert_no_english(&b, "the home page", None).await;
    b.screenshot(&format!("nepali-home-{label}")).await;

    // How to play, with the table's own words in Devanagari and romanised.
    b.click("#home-rules").await;
    let rules = b.text("#rules-box").await;
    for word in [
        "धुम्बल",
        "झ्याप",
        "थुप्रो",
        "फालेको पत्ती",
        "जरिवाना",
        "सिक्वेन्स",
        "हलुका",
        "फाल्नु",
    ] {
        assert!(rules.contains(word), "How to play lacks {word}");
    }
    let romanised = b
        .eval("return [...document.querySelectorAll('#rules-box .words [lang=\"ne-Latn\"]')].map((e) => e.textContent);")
        .await;
    for word in ["Thupro", "Phaleko patti", "Jhyap", "Dhumbal"] {
        assert!(
            romanised.as_array().unwrap().contains(&json!(word)),
            "How to play lacks {word}: {romanised}"
        );
    }
    assert_no_english(&b, "How to play", None).await;
    b.screenshot(&format!("nepali-rules-{label}")).await;
    b.eval("document.querySelector('#rules-words').scrollIntoView();")
        .await;
    b.screenshot(&format!("nepali-words-{label}")).await;
    b.click("#rules-close").await;

    // The lobby.
    let invite = create_room_here(&b, addr, "आशा").await;
    let code = code_of(&invite);
    assert!(b.text("#lobby-seats").await.contains("आशा"));
    assert_no_english(&b, "the lobby", Some(&code)).await;
    b.screenshot(&format!("nepali-lobby-{label}")).await;

    // The table, mid-round: scanned once with a card marked, then How to play from the table.
    b.click("#start").await;
    b.wait_until("the table", |s| s.screen == "table" && s.round == 1)
        .await;
    let mut scanned = false;
    let scan = async |heaviest: &str| {
        let marked = b.snapshot().await;
        assert_eq!(marked.throw_text, format!("फाल्नुहोस् {}", value(heaviest)));
        assert!(marked.status.contains("हातमा"), "{marked:?}");
        assert!(marked.log.contains("ले"), "the log is in Nepali: {marked:?}");
        assert_no_english(&b, "the table", Some(&code)).await;
        b.screenshot(&format!("nepali-table-{label}")).await;
        b.click("#open-rules").await;
        assert_no_english(&b, "How to play at the table", Some(&code)).await;
        b.click("#rules-close").await;
        scanned = true;
    };
    if let Some(s) = play_to_the_score(&b, Some(scan)).await {
        assert!(s.call.as_deref().unwrap().contains("कल"), "{s:?}");
    }
    assert!(scanned, "the table was seen mid-round");

    // The score dialog.
    let title = b.text("#score-title").await;
    if one_round {
        // The match's heading says who won it.
        assert!(
            ["विजेता", "जित्नुभयो", "बराबर"]
                .iter()
                .any(|w| title.contains(w)),
            "{title}"
        );
        b.click("#verify").await;
        b.until(
            "the verdict",
            "const v = document.querySelector('#verify-result'); \
             return v.classList.contains('ok') && v.textContent === 'बाँड ठीक छ।';",
        )
        .await;
    } else {
        assert_eq!(title, "बाजी 1 को नतिजा");
        assert_eq!(b.text("#next-round").await, "अर्को बाजी");
    }
    let rows = b
        .eval("return [...document.querySelectorAll('.score-table th:first-child')].map((e) => e.textContent);")
        .await;
    assert_eq!(
        rows,
        json!(["पत्ती", "हात", "लागेको", "लेनदेन", "जम्मा"]),
        "the score rows"
    );
    assert_no_english(&b, "the score dialog", Some(&code)).await;
    b.screenshot(&format!("nepali-score-{label}")).await;
    b.assert_no_console_errors().await;

    if one_round {
        // The replay page of the match, from the server, in the language chosen.
        b.goto(&format!("http://{addr}/replay#{code}/1")).await;
        b.until(
            "the replay",
            "return !document.querySelector('#replay').hidden && \
             document.querySelector('#replay-check').classList.contains('ok');",
        )
        .await;
        b.click("#replay-forward").await;
        assert_no_english(&b, "the replay page", Some(&code)).await;
        b.screenshot(&format!("nepali-replay-{label}")).await;
        b.assert_no_console_errors().await;
    }
    b.close().await;
}

browser_tests!(a_round_in_nepali {
    a_round_in_nepali_shows_no_english_word_on_a_phone => (PHONE, "phone"),
    a_one_round_match_in_nepali_shows_no_english_word_on_a_desktop => (DESKTOP, "desktop"),
});

/// At a table with a 15-second turn timer, in Nepali, on a phone: the countdown on the page's own
/// seat, the host's menu on the other person's seat (and its confirmation), the banner when the
/// time runs out, the notice (a line of the log), the log's line naming the bot that plays the
/// turn, and the summary of what it did each show no English word. The other person (Bina, on a
/// desktop in English) only sits there; her name is written in Devanagari, as names are the
/// people's own words.
#[cfg_attr(
    missing_chromium,
    ignore = "needs Chromium: apt-get install chromium chromium-driver"
)]
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_timed_table_in_nepali_shows_no_english_word_on_a_phone() {
    // Bots that take a moment, so that the banner is seen while the stand-in plays; a turn
    // timer whose seconds last 600 ms (the 15-second turn runs out in 9 s, time enough for the
    // host's menu first). `friends.rs` checks the real countdown.
    let mut stage = stage!(dhumbal_server::Config {
        test_turn_second_ms: Some(600),
        ..slow_bots()
    });
    let addr = stage.addr;
    let asha = stage.browser(PHONE).await;
    let bina = stage.browser(DESKTOP).await;

    asha.open_home(addr).await;
    asha.switch_language("ne").await;
    unfold_home_settings(&asha).await;
    choose_two_seats_and_15_s(&asha).await;
    let invite = create_room_here(&asha, addr, "आशा").await;
    let code = code_of(&invite);
    bina.join_from_link(&invite, "बिना", "#join-sit").await;
    asha.until_text("#lobby-seats", "बिना").await;
    assert_no_english(&asha, "the lobby of a timed table", Some(&code)).await;
    let dealt = start_and_deal(&[&asha, &bina]).await;
    assert!(dealt[0].my_turn, "Asha, in seat 0, leads");

    // The countdown on her own seat, in words and for a screen reader.
    let a = asha
        .wait_friends("Asha's clock", |f| {
            f.clocks == ["mine"] && f.seconds.is_some()
        })
        .await;
    let left = a.seconds.unwrap();
    assert_eq!(
        a.clock_text.as_deref(),
        Some(format!("{left} सेकेन्ड").as_str()),
        "{a:#?}"
    );
    assert_eq!(
        a.clock_label.as_deref(),
        Some(format!("{left} सेकेन्ड बाँकी").as_str()),
        "{a:#?}"
    );
    assert_no_english(&asha, "the table with the countdown", Some(&code)).await;
    assert_clock_takes_no_room(&asha, "the countdown in Nepali").await;
    asha.screenshot("nepali-clock-phone").await;

    // The host's menu on Bina's seat, and the confirmation of a removal (cancelled).
    asha.click("#seats .seat[data-seat='1']").await;
    let a = asha
        .wait_friends("the host's menu", |f| f.menu.is_some())
        .await;
    assert_eq!(
        a.menu.as_deref(),
        Some(&["कम्प्युटरलाई दिनुहोस्".to_owned(), "कोठाबाट हटाउनुहोस्".to_owned()][..])
    );
    assert_no_english(&asha, "the host's menu", Some(&code)).await;
    asha.screenshot("nepali-host-menu-phone").await;
    asha.click("#seat-menu button[data-action='remove']").await;
    let a = asha
        .wait_friends("the confirmation", |f| f.focused == "remove-yes")
        .await;
    assert!(
        a.menu_text
            .as_deref()
            .unwrap()
            .contains("बिनालाई कोठाबाट हटाउने?"),
        "{a:#?}"
    );
    assert_no_english(&asha, "the host's confirmation", Some(&code)).await;
    asha.click("#seat-menu button[data-action='cancel']").await;
    asha.wait_friends("the menu again", |f| f.focused == "remove")
        .await;
    asha.click("#prompt").await;
    asha.wait_friends("the menu to close", |f| f.menu.is_none())
        .await;

    // Time runs out: the banner, and the notice in the log.
    let a = asha.wait_stand_in_banner().await;
    assert_eq!(
        a.banner.as_deref(),
        Some("तपाईंको समय सकियो \u{2014} यो पालो तपाईंको सट्टा कम्प्युटरले खेल्दै छ।")
    );
    assert!(
        a.logged("तपाईंको समय सकियो: यो पालो तपाईंको सट्टा कम्प्युटरले खेल्छ।"),
        "{a:#?}"
    );
    assert_no_english(
        &asha,
        "the table with the banner and the notice",
        Some(&code),
    )
    .await;
    asha.screenshot("nepali-timed-out-phone").await;

    // The bot plays the turn, and the log names it.
    let a = asha
        .wait_friends("the stand-in's throw", |f| {
            f.log
                .iter()
                .any(|l| l.starts_with("तपाईंको सट्टा कम्प्युटरले ") && l.ends_with(" फाल्नुभयो।"))
        })
        .await;
    assert!(
        a.logged("तपाईंको सट्टा कम्प्युटरले थुप्रोबाट तान्नुभयो।")
            || a.logged_start("तपाईंको सट्टा कम्प्युटरले फालेको पत्तीबाट "),
        "{a:#?}"
    );
    assert_no_english(&asha, "the log naming the bot", Some(&code)).await;

    // The seat is hers again, with what the bot did.
    let a = asha.wait_while_away().await;
    let summary = a.while_away.clone().unwrap();
    assert!(
        summary.starts_with("तपाईंको सट्टा कम्प्युटरले 1 पालो खेल्यो। त्यसले ") && summary.contains(" फाल्यो"),
        "{summary}"
    );
    assert_eq!(asha.text("#while-away h2").await, "तपाईं नहुँदा");
    assert!(
        a.log.iter().any(|l| l.starts_with("तपाईंको सट्टा कम्प्युटरले ")),
        "the log still names the bot: {a:#?}"
    );
    assert_no_english(&asha, "the while-away summary", Some(&code)).await;
    asha.screenshot("nepali-while-away-phone").await;

    check_and_close(vec![asha, bina]).await;
}

/// The language follows the browser's (`ne…` is Nepali), is remembered across a reload, and
/// switches back and forth live in the lobby and at the table without losing the page's state;
/// the replay page switches too.
#[cfg_attr(
    missing_chromium,
    ignore = "needs Chromium: apt-get install chromium chromium-driver"
)]
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_language_is_remembered_switches_back_live_and_on_the_replay_page() {
    let mut stage = stage!();
    let addr = stage.addr;

    // A browser that asks for Nepali first gets Nepali, with nothing chosen yet.
    let b = stage.browser(DESKTOP).await;
    b.cdp("Emulation.setUserAgentOverride", json!({ "userAgent": "Mozilla/5.0 (X11; Linux x86_64) Chrome", "acceptLanguage": "ne-NP,ne,en" })).await;
    b.open_home(addr).await;
    assert_eq!(
        b.eval("return [navigator.languages[0], document.documentElement.lang, localStorage.getItem('dhumbal.lang')];")
            .await,
        json!(["ne-NP", "ne", null])
    );
    assert_eq!(b.text("#create").await, "कोठा बनाउनुहोस्");
    // The choice itself, for each kind of browser.
    let picked = b
        .eval(
            &versioned("return import('/assets/i18n.js').then((m) => [\
               m.pickLanguage(null, ['ne-NP', 'en']), m.pickLanguage(null, ['NE']), \
               m.pickLanguage(null, ['en-GB', 'ne']), m.pickLanguage(null, ['hi-IN', 'ne']), \
               m.pickLanguage(null, ['fr']), m.pickLanguage(null, []), \
               m.pickLanguage('en', ['ne']), m.pickLanguage('ne', ['en']), m.pickLanguage('xx', ['ne'])]);"),
        )
        .await;
    assert_eq!(
        picked,
        json!(["ne", "ne", "en", "ne", "en", "en", "en", "ne", "ne"])
    );
    b.close().await;

    // An English browser: English, until the control says otherwise, which a reload keeps.
    let b = stage.browser(DESKTOP).await;
    b.open_home(addr).await;
    assert_eq!(
        b.eval("return document.documentElement.lang;").await,
        json!("en")
    );
    assert_eq!(b.text("#create").await, "Create room");
    assert_eq!(
        b.text("#lang-switch button[aria-pressed='true']").await,
        "English"
    );
    // A name typed before the switch stays in its field.
    b.type_into("#home-name", "Asha").await;
    b.switch_language("ne").await;
    assert_eq!(b.text("#create").await, "कोठा बनाउनुहोस्");
    assert_eq!(b.text("#home-rules").await, "कसरी खेल्ने");
    assert_eq!(b.title().await, "धुम्बल");
    assert_eq!(
        b.find("#home-name")
            .await
            .prop("value")
            .await
            .unwrap()
            .as_deref(),
        Some("Asha")
    );
    assert_eq!(
        b.text("#lang-switch button[aria-pressed='true']").await,
        "नेपाली"
    );
    b.refresh().await;
    b.wait_until("the home page", |s| s.screen == "home").await;
    assert_eq!(
        b.eval("return [document.documentElement.lang, localStorage.getItem('dhumbal.lang')];")
            .await,
        json!(["ne", "ne"])
    );
    assert_eq!(b.text("#create").await, "कोठा बनाउनुहोस्");

    // The lobby, switched live: same room, same seats, the other language.
    let invite = create_room_here(&b, addr, "Asha").await;
    let code = code_of(&invite);
    assert_eq!(b.text("#lobby-title").await, format!("कोठा {code}"));
    assert_eq!(b.text("#start").await, "सुरु गर्नुहोस् (3 ठाउँमा कम्प्युटर)");
    b.switch_language("en").await;
    assert_eq!(b.text("#lobby-title").await, format!("Room {code}"));
    assert_eq!(b.text("#start").await, "Start (bots take 3 seats)");
    assert_eq!(
        b.eval("return document.querySelector('#lobby-settings .field label').textContent;")
            .await,
        json!("Preset"),
        "the host's settings form is drawn again"
    );
    assert_eq!(b.title().await, format!("Dhumbal \u{b7} {code}"));

    // The table, switched live mid-turn: the same hand, in the same order, with its mark.
    b.click("#start").await;
    let turn = b
        .wait_until("the page's turn", |s| {
            s.screen == "table" && s.my_turn && s.may_draw
        })
        .await;
    b.click("#stock").await;
    let drawn = b.wait_until("the draw", |s| s.may_throw).await;
    let card = new_card(&turn, &drawn);
    b.tap(&card).await;
    let before = b.snapshot().await;
    assert!(before.status.contains("Holding"), "{before:?}");
    b.switch_language("ne").await;
    let after = b.snapshot().await;
    assert_eq!(
        (&after.hand, &after.marked),
        (&before.hand, &before.marked),
        "the switch keeps the hand and its mark"
    );
    assert_eq!(after.throw_text, format!("फाल्नुहोस् {}", value(&card)));
    assert!(after.status.contains("हातमा"), "{after:?}");
    assert!(
        b.text("#prompt").await.starts_with("अब फाल्नुहोस्"),
        "{}",
        b.text("#prompt").await
    );
    assert!(b.text("#seats").await.contains("कम्प्युटर"));
    assert_eq!(
        b.eval(
            "return document.querySelector('#hand .card .card-name').textContent.includes(' of ');"
        )
        .await,
        json!(false),
        "the cards' names are in Nepali"
    );
    b.switch_language("en").await;
    let back = b.snapshot().await;
    assert_eq!(back.throw_text, format!("Throw {}", value(&card)));
    assert_eq!(back.marked, before.marked);
    assert!(back.status.contains("Holding"), "{back:?}");
    b.click("#throw").await;
    b.wait_until("the throw to land", |s| !s.hand.contains(&card))
        .await;

    // The replay page: English as chosen last; switched to Nepali and back, and remembered.
    b.goto(&format!("http://{addr}/replay")).await;
    b.find("#replay-file").await;
    assert_eq!(b.text("h1").await, "Replay a match");
    assert_eq!(b.title().await, "Dhumbal replay");
    b.switch_language("ne").await;
    assert_eq!(b.text("h1").await, "खेल फेरि हेर्नुहोस्");
    assert_eq!(b.title().await, "धुम्बल: खेल फेरि हेर्नुहोस्");
    assert!(b.text("#replay-source").await.contains("खोल्नुहोस्"));
    assert_eq!(
        b.eval("return document.querySelectorAll('#replay-keys kbd').length;")
            .await,
        json!(6)
    );
    assert_no_english(&b, "the replay page", None).await;
    b.refresh().await;
    b.find("#replay-file").await;
    b.until(
        "the replay page in Nepali",
        "return document.querySelector('h1').textContent === 'खेल फेरि हेर्नुहोस्';",
    )
    .await;
    b.switch_language("en").await;
    assert_eq!(b.text("h1").await, "Replay a match");
    assert!(
        b.text("#replay-source")
            .await
            .starts_with("Open a hand history")
    );
    check_and_close(vec![b]).await;
}

/// The English and the Nepali tables have the same keys, in the same order, with the same
/// `{params}` in each message (and plural forms where a message has them); every Nepali message
/// is written in Devanagari, with no Latin word but the technical names listed here.
#[cfg_attr(
    missing_chromium,
    ignore = "needs Chromium: apt-get install chromium chromium-driver"
)]
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_english_and_nepali_tables_have_the_same_keys_and_params() {
    let mut stage = stage!();
    let b = stage.browser(DESKTOP).await;
    b.open_home(stage.addr).await;
    let report = b
        .eval(
            &versioned(r#"return Promise.all([import('/assets/i18n.js'), import('/assets/rules.js')]).then(([i18n, { WORDS }]) =>
  Promise.all([i18n.messagesOf('en'), i18n.messagesOf('ne')]).then(([EN, NE]) => {
  const problems = [];
  const forms = (m) => (typeof m === 'object' ? Object.values(m) : [m]);
  const params = (m) => [...new Set(forms(m).flatMap((f) => [...f.matchAll(/\{(\w+)\}/g)].map((x) => x[1])))].sort().join(',');
  const en = Object.keys(EN);
  const ne = Object.keys(NE);
  if (en.join('\n') !== ne.join('\n')) {
    problems.push(`only in EN: ${en.filter((k) => !(k in NE)).join(' ')}`);
    problems.push(`only in NE: ${ne.filter((k) => !(k in EN)).join(' ')}`);
    problems.push(`first out of order: ${en.find((k, i) => ne[i] !== k)}`);
  }
  // Technical names a Nepali sentence keeps as they are written.
  const TECHNICAL = new Set(['JSON', 'WebCrypto', 'https', 'localhost', 'SHA-256', 'ChaCha20',
    'dhumbal-server', 'verify', 'dhumbal-hand-history/1', 'A-2-3', 'Q-K-A']);
  for (const key of en) {
    if (!(key in NE)) continue;
    if (params(EN[key]) !== params(NE[key])) problems.push(`${key}: {${params(EN[key])}} and {${params(NE[key])}}`);
    for (const m of [EN[key], NE[key]]) {
      if (typeof m === 'object' && typeof m.other !== 'string') problems.push(`${key}: plural forms without "other"`);
    }
    for (const f of forms(NE[key])) {
      const text = f.replace(/\{\w+\}/g, '');
      if (/[a-zA-Z\u0900-\u097F]/.test(text) && !/[\u0900-\u097F]/.test(text)) problems.push(`${key}: not in Devanagari: ${f}`);
      for (const raw of text.split(/\s+/)) {
        const word = raw.replace(/^[(`"“‘]+|[)`"”’.,;:!?।]+$/g, '');
        if (/[A-Za-z]/.test(word) && !TECHNICAL.has(word)) problems.push(`${key}: Latin word ${word}`);
      }
    }
  }
  for (const w of WORDS) {
    if (!/^[\u0900-\u097F ,]+$/.test(w.word)) problems.push(`word ${w.key} is not Devanagari: ${w.word}`);
    if (!/^[A-Za-z ,]+$/.test(w.roman)) problems.push(`word ${w.key} is not romanised: ${w.roman}`);
    if (!(`words.${w.key}` in EN)) problems.push(`word ${w.key} has no meaning`);
  }
  return { keys: en.length, problems };
}));"#),
        )
        .await;
    assert_eq!(report["problems"], json!([]), "{report}");
    assert!(report["keys"].as_u64().unwrap() > 400, "{report}");
    // And the glossary of How to play names every word of the standard table's own glossary.
    let words = b
        .eval(&versioned(
            "return import('/assets/rules.js').then((m) => m.WORDS.map((w) => w.word));",
        ))
        .await;
    for word in [
        "धुम्बल",
        "झ्याप",
        "कल",
        "हलुका, भारी",
        "थुप्रो",
        "फालेको पत्ती",
        "फाल्नु",
        "सिक्वेन्स",
        "जरिवाना",
    ] {
        assert!(
            words.as_array().unwrap().contains(&json!(word)),
            "{word}: {words}"
        );
    }
    // And `t` itself: plural forms by count, params filled, the other language after a switch.
    let said = b
        .eval(
            &versioned("return import('/assets/i18n.js').then((m) => { \
               const en = [m.t('seat.cards', { count: 1 }), m.t('seat.cards', { count: 5 }), \
                 m.t('lobby.startWithBots', { count: 1 }), m.t('log.took', { who: 'Asha', card: '7\u{2665}' })]; \
               return m.setLanguage('ne').then(() => { \
               const code = document.createElement('span'); \
               const parts = m.tNodes('join.title', { code }); \
               const ne = [m.t('seat.cards', { count: 1 }), m.t('seat.cards', { count: 5 }), \
                 m.t('log.took', { who: 'आशा', card: '7\u{2665}' }), document.documentElement.lang, \
                 parts.length, parts.indexOf(code)]; \
               return m.setLanguage('en').then(() => [en, ne, m.language()]); }); });"),
        )
        .await;
    assert_eq!(
        said,
        json!([
            [
                "1 card",
                "5 cards",
                "Start (bots take 1 seat)",
                "Asha took 7\u{2665} from the pile."
            ],
            [
                "1 पत्ती",
                "5 पत्ती",
                "आशाले फालेको पत्तीबाट 7\u{2665} उठाउनुभयो।",
                "ne",
                3,
                1
            ],
            "en"
        ])
    );
    check_and_close(vec![b]).await;
}
