//! The hand keeps its order, on a phone (360×640) and a laptop (1280×800):
//! Sort hand turns on sorted mode, in which a drawn card goes where it sorts (jokers last), and
//! the mode is remembered across a reload; a card dragged sideways within the hand stays where
//! it was dropped (sorted mode ends), a drawn card then goes to the end, and Shift+Left moves
//! the focused card one place.

use crate::harness::*;
use dhumbal_engine::full_deck;

/// A phone of the size the issue measured: 640 px once the browser's bars are drawn.
pub(crate) const PHONE_640: (u32, u32) = (360, 640);
/// A laptop's viewport, as the issue measured it.
pub(crate) const LAPTOP: (u32, u32) = (1280, 800);

/// A fixed deck (54 cards) for a round of four seats of five cards, dealt from `first`
/// (round 1: seat 0; round 2: seat 1): each seat is dealt its hand of `hands` (seat by seat);
/// then the turned-up card and the stock, heavy cards (6 and more) first.
pub(crate) fn deck_dealing(hands: [[&str; 5]; 4], first: usize) -> Vec<Card> {
    let hands: Vec<Vec<Card>> = hands
        .iter()
        .map(|h| h.iter().map(|c| c.parse().unwrap()).collect())
        .collect();
    let dealt: Vec<Card> = hands.iter().flatten().copied().collect();
    let heavy = |c: &Card| c.value(CourtValues::Tens) >= 6;
    let free = || full_deck(true).into_iter().filter(|c| !dealt.contains(c));
    let mut rest = free().filter(heavy).chain(free().filter(|c| !heavy(c)));
    (0..54)
        .map(|i| {
            if i < 20 {
                hands[(first + i) % 4][i / 4]
            } else {
                rest.next().unwrap()
            }
        })
        .collect()
}

/// A hand's cards in sorted order: lightest first, equal values by rank then suit (♠ ♥ ♦ ♣),
/// jokers last (the red one first).
fn sorted(hand: &[String]) -> Vec<String> {
    const RANKS: [&str; 13] = [
        "A", "2", "3", "4", "5", "6", "7", "8", "9", "10", "J", "Q", "K",
    ];
    let key = |c: &String| -> (u8, u32, usize, usize) {
        match c.as_str() {
            "RJ" => (1, 0, 0, 0),
            "BJ" => (1, 0, 0, 1),
            _ => {
                let (rank, suit) = c.split_at(c.len() - 1);
                let rank = RANKS.iter().position(|r| *r == rank).unwrap();
                (0, value(c), rank, "SHDC".find(suit).unwrap())
            }
        }
    };
    let mut out = hand.to_vec();
    out.sort_by_key(key);
    out
}

/// Whether Sort hand is pressed (sorted mode on).
async fn sort_pressed(b: &Browser) -> bool {
    b.eval("return document.querySelector('#sort').getAttribute('aria-pressed') === 'true';")
        .await
        == json!(true)
}

/// On this page's turn: draws from the stock and returns the hand then, and the card drawn.
async fn draw(b: &Browser) -> (Snapshot, String) {
    let turn = b
        .wait_until("the page's turn", |s| s.my_turn && s.may_draw)
        .await;
    b.click("#stock").await;
    let drawn = b
        .wait_until("the drawn card", |s| {
            s.may_throw && s.hand.len() == turn.hand.len() + 1
        })
        .await;
    let card = new_card(&turn, &drawn);
    (drawn, card)
}

/// Throws the heaviest card and waits for the throw to land.
async fn throw_heaviest(b: &Browser, s: &Snapshot) {
    let card = heaviest(s);
    b.tap(&card).await;
    b.click("#throw").await;
    b.wait_until("the throw to land", |s| !s.hand.contains(&card))
        .await;
}

/// Drags a card of the hand sideways and drops it just right of `onto`'s middle (so it goes
/// after `onto`).
async fn drag_after(b: &Browser, card: &str, onto: &str) {
    let from = b.find(&format!("#hand .card[data-card='{card}']")).await;
    let to = b.find(&format!("#hand .card[data-card='{onto}']")).await;
    b.client().drag(&from, (20, 0), &to, (8, 0)).await.unwrap();
}

async fn the_hand_keeps_its_order(size: (u32, u32), label: &str) {
    let mut stage = stage!();
    let addr = stage.addr;
    // Asha holds a joker, which is worth nothing and still sorts last; nobody can call.
    let hands = [
        ["KD", "RJ", "9C", "AS", "3H"],
        ["KS", "KH", "KC", "QS", "QH"],
        ["QD", "QC", "JS", "JH", "JD"],
        ["JC", "10S", "10H", "10D", "10C"],
    ];
    let room = room_with(&stage.server, standard(1), vec![deck_dealing(hands, 0)]).await;
    let b = stage.browser(size).await;
    b.host_room(addr, &room, "Asha").await;
    b.click("#start").await;
    let s = b
        .wait_until("the page's turn", |s| s.screen == "table" && s.my_turn)
        .await;
    assert!(!sort_pressed(&b).await, "sorted mode is off at first");
    assert_ne!(s.hand, sorted(&s.hand), "dealt out of order");

    // Sort hand: sorted, the joker last; a drawn card goes where it sorts.
    b.click("#sort").await;
    let s = b.snapshot().await;
    assert_eq!(s.hand, ["AS", "3H", "9C", "KD", "RJ"].map(str::to_owned));
    assert!(sort_pressed(&b).await, "Sort hand is pressed");
    let (s, card) = draw(&b).await;
    assert_eq!(
        s.hand,
        sorted(&s.hand),
        "the drawn {card} went where it sorts"
    );
    assert_eq!(s.hand.last().map(String::as_str), Some("RJ"));
    b.screenshot(&format!("hand-sorted-after-a-draw-{label}"))
        .await;
    throw_heaviest(&b, &s).await;

    // A reload: still sorted mode, and the next draw sorts in too.
    b.refresh().await;
    b.wait_until("the table again", |s| s.screen == "table")
        .await;
    assert!(sort_pressed(&b).await, "sorted mode after a reload");
    let (s, card) = draw(&b).await;
    assert_eq!(
        s.hand,
        sorted(&s.hand),
        "after the reload, {card} sorted in"
    );
    throw_heaviest(&b, &s).await;

    // The player's own order: the lightest card dragged to the end stays there; sorted mode
    // ends, and a drawn card goes to the end.
    let s = b.snapshot().await;
    let first = s.hand[0].clone();
    let last = s.hand.last().unwrap().clone();
    drag_after(&b, &first, &last).await;
    let mut mine: Vec<String> = s.hand[1..].to_vec();
    mine.push(first.clone());
    let moved = b
        .wait_until("the card moved", |s| s.hand != sorted(&s.hand))
        .await;
    assert_eq!(moved.hand, mine, "{first} dropped after {last}");
    assert!(moved.marked.is_empty(), "a drag is not a tap");
    assert!(!sort_pressed(&b).await, "sorted mode ends");
    let (s, card) = draw(&b).await;
    let mut expected = mine.clone();
    expected.push(card.clone());
    assert_eq!(s.hand, expected, "the arrangement stays, {card} at the end");
    b.screenshot(&format!("hand-arranged-after-a-draw-{label}"))
        .await;

    // Shift+Left moves the focused card one place to the left.
    b.eval(&format!(
        "document.querySelector(\"#hand .card[data-card='{card}']\").focus();"
    ))
    .await;
    b.press("\u{e008}\u{e012}\u{e000}").await;
    let s = b.snapshot().await;
    let n = expected.len();
    expected.swap(n - 1, n - 2);
    assert_eq!(s.hand, expected, "Shift+Left moved {card}");
    let focused = b
        .eval("return document.activeElement.dataset.card || null;")
        .await;
    assert_eq!(focused, json!(card), "the moved card keeps the focus");

    // And sorted mode stays off after a reload.
    b.refresh().await;
    let again = b
        .wait_until("the table again", |s| {
            s.screen == "table" && s.hand.len() == expected.len()
        })
        .await;
    assert_eq!(again.hand, expected, "the arrangement after a reload");
    assert!(!sort_pressed(&b).await);
    check_and_close(vec![b]).await;
}

browser_tests!(the_hand_keeps_its_order {
    the_hand_keeps_its_order_on_a_phone => (PHONE_640, "phone"),
    the_hand_keeps_its_order_on_a_laptop => (LAPTOP, "laptop"),
});
