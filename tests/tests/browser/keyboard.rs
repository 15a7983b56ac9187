//! Played by keyboard alone (issue 31): a whole two-round match against three bots, every key
//! sent to the element that has the focus, counting the presses of each turn (printed). After a
//! draw the focus is on the card just drawn in the hand; after a throw, on the stock (where the
//! next turn begins), so a draw-and-throw turn takes at most three presses (draw, mark, throw).
//! The focus ring shows over the stock's and a marked card's gold outline (and, at the first
//! turn, over every state's: the takeable stock, a takeable pile card, a marked card of the
//! hand); the shortcut keys are written on the table itself and given to a screen reader
//! (`aria-keyshortcuts`, the hand described by them). On a phone in English and on a laptop in
//! Nepali.

use crate::hand_order::{LAPTOP, PHONE_640};
use crate::harness::*;

/// The most presses a turn that draws from the stock and throws one card may take.
const DRAW_AND_THROW_PRESSES: usize = 3;

/// The keys WebDriver sends for Enter.
const ENTER: &str = "\u{e007}";

/// The focused element: its id, the card it is (if one) and where it is.
#[derive(Debug, Deserialize)]
struct Focus {
    id: String,
    card: Option<String>,
    in_hand: bool,
    /// Whether it is in the score dialog.
    in_score: bool,
    /// Its `box-shadow`, which carries the focus ring.
    ring: String,
}

const FOCUS: &str = "const a = document.activeElement; \
    return { id: a.id || '', card: a.dataset ? a.dataset.card || null : null, \
      in_hand: Boolean(a.closest('#hand')), in_score: Boolean(a.closest('#score-dialog')), ring: getComputedStyle(a).boxShadow };";

async fn focus(b: &Browser) -> Focus {
    b.view(FOCUS).await
}

/// Whether a `box-shadow` is the focus ring (its blue, outside the state's outline).
fn is_ring(shadow: &str) -> bool {
    shadow.contains("rgb(29, 78, 216)")
}

/// Presses `keys` on the focused element and counts them in `count`.
async fn press(b: &Browser, keys: &str, count: &mut usize) {
    b.press(keys).await;
    *count += 1;
}

async fn a_match_by_keyboard(size: (u32, u32), lang: &str, label: &str) {
    let mut stage = stage!();
    let addr = stage.addr;
    let room = stage
        .server
        .create_room(&CreateRoom {
            settings: Some(standard(2)),
            ..CreateRoom::default()
        })
        .await;
    let b = stage.browser(size).await;
    b.open_home(addr).await;
    b.switch_language(lang).await;
    b.host_room(addr, &room, "Asha").await;
    b.click("#start").await;
    b.wait_until("the table", |s| s.screen == "table" && s.hand.len() == 5)
        .await;

    // The shortcut keys, on the table and for a screen reader.
    let keys: Value = b
        .eval(
            "const k = document.querySelector('#table-keys'); \
             return [!k.hidden && k.getBoundingClientRect().height > 0, \
               [...k.querySelectorAll('kbd')].map((e) => e.textContent), \
               document.querySelector('#hand').getAttribute('aria-describedby'), \
               ['#stock', '#throw', '#call', '#sort'].map((s) => document.querySelector(s).getAttribute('aria-keyshortcuts'))];",
        )
        .await;
    assert_eq!(
        keys,
        json!([
            true,
            ["1-9", "T", "S", "P", "C", "O", "N"],
            "table-keys",
            ["S", "T", "C", "O"]
        ]),
        "the keys on the table"
    );

    the_focus_ring_shows_over_every_state(&b, label).await;

    let started = Instant::now();
    let mut turns: Vec<usize> = Vec::new();
    // The turns that began with the focus on the stock, and those of them where it showed its ring.
    let mut on_stock = (0, 0);
    loop {
        let s = my_turn_or_the_score(&b, started).await;
        if s.score_open {
            if s.phase == "match_over" {
                break;
            }
            // Next round, by its key.
            let mut count = 0;
            press(&b, "n", &mut count).await;
            println!("{label}: the score dialog closed with {count} press");
            b.wait_until("the next round", |s| !s.score_open && s.round == 2)
                .await;
            continue;
        }
        let mut count = 0;
        if s.call.is_some() {
            press(&b, "c", &mut count).await;
            b.wait_until("the show", |s| s.score_open).await;
            println!("{label}: called with {count} press");
            continue;
        }
        if !s.may_draw {
            tokio::time::sleep(Duration::from_millis(20)).await;
            continue;
        }
        // The draw: Enter on the stock when the focus is there (after the last throw), else S.
        let at = focus(&b).await;
        if at.id == "stock" {
            on_stock.0 += 1;
            if is_ring(&at.ring) {
                on_stock.1 += 1;
            }
            press(&b, ENTER, &mut count).await;
        } else {
            press(&b, "s", &mut count).await;
        }
        let drawn = b
            .wait_until("the draw", |d| d.may_throw || d.score_open)
            .await;
        if drawn.score_open {
            continue;
        }
        let card = new_card(&s, &drawn);
        let at = b
            .wait_view::<Focus>("the focus on the drawn card", FOCUS, |f| f.in_hand)
            .await;
        assert_eq!(at.card.as_deref(), Some(card.as_str()), "after the draw");
        // Mark the heaviest: Enter if it has the focus, else its number.
        let heaviest = heaviest(&drawn);
        if at.card.as_deref() == Some(heaviest.as_str()) {
            press(&b, ENTER, &mut count).await;
        } else {
            let place = drawn.hand.iter().position(|c| *c == heaviest).unwrap() + 1;
            press(&b, &place.to_string(), &mut count).await;
        }
        let marked = b
            .wait_until("the mark", |m| m.marked == vec![heaviest.clone()])
            .await;
        assert!(marked.throw_enabled, "{marked:?}");
        if at.card.as_deref() == Some(heaviest.as_str()) {
            // A marked card with the focus: the ring shows over its gold outline.
            let ring = focus(&b).await.ring;
            assert!(is_ring(&ring), "no focus ring on the marked card: {ring}");
        }
        press(&b, "t", &mut count).await;
        let landed = b
            .wait_until("the throw to land", |t| {
                t.score_open || !t.hand.contains(&heaviest)
            })
            .await;
        if !landed.score_open {
            let after = b
                .wait_view::<Focus>("the focus on the stock", FOCUS, |f| {
                    f.id == "stock" || f.in_hand || f.in_score
                })
                .await;
            // (A bot may call straight after: the score dialog has the focus then.)
            assert!(
                after.id == "stock" || after.in_score,
                "after the throw: {after:?}"
            );
        }
        println!(
            "{label}: turn {} (round {}): {count} presses",
            turns.len() + 1,
            s.round
        );
        turns.push(count);
    }
    println!("{label}: presses per draw-and-throw turn: {turns:?}");
    assert!(!turns.is_empty(), "the page played a turn");
    assert!(
        turns.iter().all(|&n| n <= DRAW_AND_THROW_PRESSES),
        "a draw-and-throw turn took more than {DRAW_AND_THROW_PRESSES} presses: {turns:?}"
    );
    println!(
        "{label}: {} turns began on the stock, its ring shown on {}",
        on_stock.0, on_stock.1
    );
    assert_eq!(
        on_stock.0, on_stock.1,
        "the focus ring on the takeable stock"
    );
    assert!(
        on_stock.0 + 1 >= turns.len(),
        "every turn but the first began on the stock: {on_stock:?} of {}",
        turns.len()
    );
    b.screenshot(&format!("keyboard-match-over-{label}")).await;
    check_and_close(vec![b]).await;
}

/// The focus ring shows over every state's outline at the page's first turn, before it draws:
/// the takeable stock, a takeable pile card, a marked card of the hand (marked, then unmarked
/// again, so that the turn goes on as it began).
async fn the_focus_ring_shows_over_every_state(b: &Browser, label: &str) {
    let s = b
        .wait_until("the page's turn to draw", |s| s.my_turn && s.may_draw)
        .await;
    // Focused as by the keyboard (so that `:focus-visible` holds): a key pressed first.
    b.press("\u{e008}").await;
    let rings: Vec<String> = b
        .view(
            "const out = []; \
             for (const sel of ['#stock', '#pile .card.takeable']) { \
               const e = document.querySelector(sel); if (!e) continue; \
               e.focus({ focusVisible: true }); out.push(`${sel} ${getComputedStyle(e).boxShadow}`); } \
             return out;",
        )
        .await;
    assert!(!rings.is_empty());
    for ring in &rings {
        assert!(is_ring(ring), "no focus ring: {ring}");
    }
    let first = s.hand[0].clone();
    b.tap(&first).await;
    b.wait_until("the mark", |m| m.marked == vec![first.clone()])
        .await;
    b.press("\u{e008}").await;
    let ring: String = b
        .view(&format!(
            "const e = document.querySelector(\"#hand .card[data-card='{first}']\"); \
             e.focus({{ focusVisible: true }}); return getComputedStyle(e).boxShadow;"
        ))
        .await;
    assert!(is_ring(&ring), "no focus ring on a marked card: {ring}");
    b.screenshot(&format!("keyboard-ring-{label}")).await;
    b.tap(&first).await;
    b.wait_until("the mark to go", |m| m.marked.is_empty())
        .await;
}

browser_tests!(a_match_by_keyboard {
    a_match_is_played_by_keyboard_alone_on_a_phone => (PHONE_640, "en", "en-phone"),
    a_match_is_played_by_keyboard_alone_on_a_laptop_in_nepali => (LAPTOP, "ne", "ne-laptop"),
});
