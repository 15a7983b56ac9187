//! The coach in the page (issue 32), on a phone (360×640) in English, a laptop in Nepali and a
//! phone on its side (740×360): at
//! a table that allows hints the host's settings say so, Hint stands on this seat's turn (on
//! screen, beside the hand), says what the coach would do in the page's language and through
//! the live region; after the match, Review my play in the match-over dialog shows where the
//! points went, and Replay reviews any seat (the bot's here) with the history's seed; axe-core
//! finds nothing to fault in any of them.

use crate::a11y::axe_violations;
use crate::hand_order::{LAPTOP, PHONE_640};
use crate::harness::*;
use crate::heard::{RECORD_HEARD, heard};
use crate::layout::resize;

/// The opening of a hint in `lang` (`coach.hint`).
fn hint_opening(lang: &str) -> &'static str {
    if lang == "ne" {
        "सुझाव:"
    } else {
        "Hint:"
    }
}

/// The review's heading in `lang` (`coach.reviewTitle`).
fn review_title(lang: &str) -> &'static str {
    if lang == "ne" {
        "प्रशिक्षकको समीक्षा"
    } else {
        "The coach's review"
    }
}

/// A one-round match of two seats (this page and a hard bot) with hints on, dealt at random (a
/// review needs a fair deal to replay), in `lang`.
async fn the_coach_hints_and_reviews(size: (u32, u32), lang: &str, label: &str) {
    let mut stage = stage!();
    let addr = stage.addr;
    let settings = Settings {
        players: 2,
        hints: true,
        difficulty: dhumbal_engine::Difficulty::Hard,
        ..standard(1)
    };
    let room = stage
        .server
        .create_room(&CreateRoom {
            settings: Some(settings),
            ..CreateRoom::default()
        })
        .await;
    let b = stage.browser(size).await;
    // A phone on its side: the viewport itself at that size, as the layout tests set it (a
    // window of 740×360 would leave the page less).
    if size.0 > size.1 {
        resize(&b, size).await;
    }
    b.before_each_page(RECORD_HEARD).await;
    b.open_home(addr).await;
    b.switch_language(lang).await;
    b.host_room(addr, &room, "Asha").await;
    // The host's settings show the hints on; the summary everyone reads says so.
    b.until(
        "the hints setting",
        "const c = document.querySelector('#set-hints'); return c !== null && c.value === 'true';",
    )
    .await;
    b.click("#start").await;

    // This page's turn: Hint stands on screen beside the hand, and answers in words.
    let turn = b
        .wait_until("the first turn", |s| s.screen == "table" && s.my_turn)
        .await;
    b.screenshot(&format!("coach-{label}-turn")).await;
    let on_screen: Value = b
        .eval(
            "const h = document.getElementById('hint').getBoundingClientRect(); \
             const t = document.getElementById('throw').getBoundingClientRect(); \
             return [h.top >= 0 && h.bottom <= innerHeight && h.left >= 0 && h.right <= innerWidth, \
                     t.bottom <= innerHeight];",
        )
        .await;
    assert_eq!(on_screen, json!([true, true]), "Hint and Throw on screen");
    b.click("#hint").await;
    let opening = hint_opening(lang);
    b.until_text("#hint-text", opening).await;
    let said: String = b
        .view("return document.getElementById('hint-text').textContent;")
        .await;
    assert!(said.starts_with(opening), "{said}");
    for card in &turn.hand {
        assert!(!said.contains(card.as_str()), "a card as a code in {said}");
    }
    poll(
        "the hint to be heard",
        async || heard(&b).await,
        |h| h.iter().any(|l| l == &said),
    )
    .await;
    b.screenshot(&format!("coach-{label}-hint")).await;
    let found = axe_violations(&b).await;
    assert!(found.is_empty(), "the table with a hint: {found:#?}");

    // The match's end: Review my play shows where the points went.
    play_to_the_score(&b, CALL_AT_ONCE).await;
    b.wait_until("the match's end", |s| {
        s.score_open && s.phase == "match_over"
    })
    .await;
    b.click("#review-play").await;
    b.until_text("#coach-review-title", review_title(lang))
        .await;
    let summary: String = b
        .view("return document.querySelector('#coach-review .coach-summary').textContent;")
        .await;
    assert!(!summary.is_empty());
    b.screenshot(&format!("coach-{label}-review")).await;
    let found = axe_violations(&b).await;
    assert!(found.is_empty(), "the review: {found:#?}");

    // Replay, from the server: the bot's seat reviewed, with the seed the history holds.
    b.goto(&format!("http://{addr}/replay#{}/1", room.code))
        .await;
    b.until(
        "the replay to load",
        "return !document.getElementById('replay').hidden && !document.getElementById('replay-coach').hidden;",
    )
    .await;
    b.eval("document.getElementById('replay-review-seat').value = '1'; return null;")
        .await;
    b.click("#replay-review").await;
    b.until_text("#coach-review-title", review_title(lang))
        .await;
    b.screenshot(&format!("coach-{label}-replay")).await;
    let found = axe_violations(&b).await;
    assert!(found.is_empty(), "the review on Replay: {found:#?}");
    check_and_close(vec![b]).await;
}

browser_tests!(the_coach_hints_and_reviews {
    the_coach_hints_and_reviews_in_english_on_a_phone => (PHONE_640, "en", "en-phone"),
    the_coach_hints_and_reviews_in_nepali_on_a_laptop => (LAPTOP, "ne", "ne-laptop"),
    the_coach_hints_and_reviews_on_a_phone_on_its_side => ((740, 360), "en", "en-landscape"),
});
