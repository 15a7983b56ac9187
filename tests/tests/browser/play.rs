//! Serving the pages and playing whole rounds: bots, two people, reloads, restarts, rematches.

use crate::harness::*;
use dhumbal_engine::{full_deck, hand_total};
use dhumbal_tests::process::ServerProcess;
use std::collections::BTreeSet;

#[tokio::test]
async fn the_page_is_served_at_the_root_and_at_room_links_with_every_file_it_loads() {
    let server = TestServer::start().await;
    let (status, index) = dhumbal_tests::http::get(server.addr, "/").await;
    assert_eq!(status, 200);
    assert!(index.contains("<title>Dhumbal</title>"), "{index}");
    let (status, room_page) = dhumbal_tests::http::get(server.addr, "/r/ABCDEFGHJK").await;
    // The same page, but for its preloads: a room's link preloads the room's modules too.
    let without_preloads = |page: &str| {
        page.lines()
            .filter(|l| !l.starts_with("<link rel=\"modulepreload\""))
            .collect::<Vec<_>>()
            .join("\n")
    };
    assert_eq!(status, 200);
    assert_eq!(without_preloads(&room_page), without_preloads(&index));
    assert!(room_page.contains("/session.js\""), "{room_page}");
    let (status, replay) = dhumbal_tests::http::get(server.addr, "/replay").await;
    assert_eq!(status, 200);
    assert!(replay.contains("<title>Dhumbal replay</title>"), "{replay}");
    // Every file the pages load, and every module those load, is there.
    let mut queue = referenced_assets(&index);
    queue.extend(referenced_assets(&replay));
    let mut seen = BTreeSet::new();
    while let Some(name) = queue.pop() {
        if !seen.insert(name.clone()) {
            continue;
        }
        let path = dhumbal_server::web::asset_path(&name);
        // An icon is not text: asked for with HEAD, which answers no body.
        let method = if name.ends_with(".png") {
            "HEAD"
        } else {
            "GET"
        };
        let (status, body) = dhumbal_tests::http::request(server.addr, method, &path, "").await;
        assert_eq!(status, 200, "{path}");
        if name.ends_with(".js") {
            queue.extend(referenced_assets(&body));
        }
    }
    for expected in [
        "app.js",
        "install.js",
        "manifest.webmanifest",
        "icon-192.png",
        "style.css",
        "icon.svg",
        "cards.js",
        "table.js",
        "net.js",
        "fair.js",
        "replay.js",
        "score.js",
        "chat.js",
        "dom.js",
        "i18n.js",
        "messages-en.js",
        "messages-ne.js",
    ] {
        assert!(
            seen.contains(expected),
            "{expected} is not loaded: {seen:?}"
        );
    }
    let (status, _) = dhumbal_tests::http::get(server.addr, "/assets/nothing.js").await;
    assert_eq!(status, 404);
    let missing = dhumbal_server::web::asset_path("nothing.js");
    let (status, _) = dhumbal_tests::http::get(server.addr, &missing).await;
    assert_eq!(status, 404);
}
#[cfg_attr(
    missing_chromium,
    ignore = "needs Chromium: apt-get install chromium chromium-driver"
)]
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn one_player_plays_a_round_against_three_bots_to_the_score_dialog() {
    let mut stage = stage!();
    let b = stage.browser(PHONE).await;

    create_room(&b, stage.addr, "Asha").await;
    assert!(b.text("#lobby-seats").await.contains("Asha"));
    b.assert_fits_the_width("the lobby").await;
    b.screenshot("lobby-phone").await;
    b.click("#start").await;
    let first = b
        .wait_until("the table", |s| s.screen == "table" && s.round == 1)
        .await;
    assert_eq!(first.hand.len(), 5, "five cards dealt: {first:?}");
    let seats = b.text("#seats").await;
    assert_eq!(
        seats.matches("5 cards").count(),
        3,
        "three other seats: {seats}"
    );

    let mut took_from_pile = false;
    let mut refused_a_group = false;
    let mut dragged = false;
    let mut marked_throws = 0;
    let mut shot_table = false;
    let started = Instant::now();
    let end = loop {
        let s = my_turn_or_the_score(&b, started).await;
        if s.score_open {
            break s;
        }
        let total: u32 = s.hand.iter().map(|c| value(c)).sum();
        assert!(
            s.status.contains(&format!("Holding {total}")) && s.status.contains("call at 5"),
            "status line: {}",
            s.status
        );
        if let Some(call) = &s.call {
            assert_eq!(call, &format!("Call on {total}"));
            assert!(total <= 5, "Call offered on {total}");
            if dragged {
                b.click("#call").await;
                b.wait_until("the show", |s| s.score_open).await;
                continue;
            }
        }
        if s.may_draw {
            if !took_from_pile {
                assert_eq!(s.takeable.len(), 1, "the pile's top is takeable: {s:?}");
                let card = s.takeable[0].clone();
                b.click("#pile .card.takeable").await;
                let after = b.wait_until("the throw", |s| s.may_throw).await;
                assert_eq!(
                    after.barred.as_ref(),
                    Some(&card),
                    "the taken card is barred"
                );
                b.tap(&card).await;
                let refused = b
                    .wait_until("the barred notice", |s| s.toast.contains("can't go back"))
                    .await;
                assert!(refused.marked.is_empty(), "a barred card cannot be marked");
                took_from_pile = true;
            } else {
                b.click("#stock").await;
                b.wait_until("the throw", |s| !s.may_draw).await;
            }
            continue;
        }
        if !s.may_throw {
            tokio::time::sleep(Duration::from_millis(20)).await;
            continue;
        }
        let usable: Vec<&String> = s
            .hand
            .iter()
            .filter(|c| Some(*c) != s.barred.as_ref())
            .collect();
        if !refused_a_group {
            let a = usable[0];
            let other = usable
                .iter()
                .find(|c| c.parse::<Card>().unwrap().rank() != a.parse::<Card>().unwrap().rank());
            if let Some(other) = other {
                b.tap(a).await;
                b.tap(other).await;
                let bad = b.snapshot().await;
                assert_eq!(bad.marked.len(), 2);
                assert!(!bad.throw_enabled, "two ranks are no group: {bad:?}");
                assert_eq!(bad.throw_text, format!("Throw {}", value(a) + value(other)));
                assert!(bad.status.contains("don't go together"));
                b.tap(a).await;
                b.tap(other).await;
                assert!(b.snapshot().await.marked.is_empty());
                refused_a_group = true;
            }
        }
        let heaviest = usable.iter().max_by_key(|c| value(c)).copied().unwrap();
        if !dragged {
            b.drag_to_pile(heaviest).await;
            dragged = true;
        } else {
            // The heaviest set if there is one, else the heaviest card.
            let mut group: Vec<&String> = vec![heaviest];
            for c in &usable {
                let rank = c.parse::<Card>().unwrap().rank();
                let set: Vec<&String> = usable
                    .iter()
                    .filter(|o| o.parse::<Card>().unwrap().rank() == rank)
                    .copied()
                    .collect();
                let worth = |g: &[&String]| g.iter().map(|c| value(c)).sum::<u32>();
                if set.len() > 1 && worth(&set) > worth(&group) {
                    group = set;
                }
            }
            for c in &group {
                b.tap(c).await;
            }
            let ready = b.snapshot().await;
            let worth: u32 = group.iter().map(|c| value(c)).sum();
            assert_eq!(ready.throw_text, format!("Throw {worth}"));
            assert!(ready.throw_enabled, "a legal group: {ready:?}");
            if !shot_table {
                b.assert_fits_the_width("the table").await;
                b.screenshot("table-phone").await;
                shot_table = true;
            }
            b.click("#throw").await;
            marked_throws += 1;
        }
        let thrown_from = s.hand.len();
        b.wait_until("the throw to land", |s| {
            s.score_open || !s.may_throw || s.hand.len() < thrown_from
        })
        .await;
    };
    assert!(
        took_from_pile && refused_a_group && dragged,
        "every gesture was tried"
    );
    assert_eq!(end.phase, "round_over");

    // The score dialog: every hand face up, the four rows, the chart.
    let table: Value = b
        .eval(
            r#"return [...document.querySelectorAll('.score-table tr')].map((tr) => ({
                 cls: tr.className,
                 cells: [...tr.children].map((c) => c.textContent),
                 hands: [...tr.querySelectorAll('.mini-hand')].map((h) =>
                   [...h.querySelectorAll('.card')].map((c) => c.dataset.card)),
               }));"#,
        )
        .await;
    let rows = table.as_array().unwrap();
    let row = |cls: &str| -> Vec<String> {
        let r = rows
            .iter()
            .find(|r| r["cls"] == cls)
            .unwrap_or_else(|| panic!("no {cls} row"));
        r["cells"].as_array().unwrap()[1..]
            .iter()
            .map(|c| c.as_str().unwrap().to_owned())
            .collect()
    };
    let hands_row = rows.iter().find(|r| r["cls"] == "hands-row").unwrap();
    let hands: Vec<Vec<String>> = serde_json::from_value(hands_row["hands"].clone()).unwrap();
    assert_eq!(hands.len(), 4);
    let hand = row("row-hand");
    for (cards, shown) in hands.iter().zip(&hand) {
        let cards = self::cards(cards);
        assert_eq!(
            hand_total(&cards, CourtValues::Tens).to_string(),
            *shown,
            "the Hand row adds up the cards shown"
        );
    }
    assert_eq!(row("row-took").len(), 4);
    let paid: Vec<i64> = row("row-paid").iter().map(|t| score_number(t)).collect();
    let totals: Vec<i64> = row("row-total").iter().map(|t| score_number(t)).collect();
    assert_eq!(paid.iter().sum::<i64>(), 0, "the Paid row sums to zero");
    assert_eq!(paid, totals, "after round 1 the Total is the Paid row");
    let lines = b
        .eval("return document.querySelectorAll('#score-dialog svg.chart polyline').length;")
        .await;
    assert_eq!(lines, json!(4), "one line per seat in the chart");
    let ending = b.text("#score-dialog .ending").await;
    assert!(
        ending.contains("called") || ending.contains("Nobody called"),
        "{ending}"
    );
    b.assert_fits_the_width("the score dialog").await;
    let inner = b
        .eval("const w = document.querySelector('.score-wrap'); return [w.scrollWidth, w.clientWidth];")
        .await;
    assert!(
        inner[0].as_u64() <= inner[1].as_u64(),
        "every seat's column fits the phone: {inner}"
    );
    b.screenshot("score-dialog-phone").await;

    b.click("#next-round").await;
    let next = b
        .wait_until("round 2", |s| !s.score_open && s.round == 2)
        .await;
    assert_eq!(next.hand.len(), 5);
    // The page asked for the compressed socket: everything it was sent came that way.
    let (status, metrics) = dhumbal_tests::http::get(stage.addr, "/metrics").await;
    assert_eq!(status, 200);
    let sent = |framing: &str| -> f64 {
        let series = format!("dhumbal_bytes_out_total{{framing=\"{framing}\"}} ");
        metrics
            .lines()
            .find_map(|line| line.strip_prefix(series.as_str())?.parse().ok())
            .unwrap_or(0.0)
    };
    let (compressed, text) = (sent("deflate_raw"), sent("text"));
    assert!(
        compressed > 0.0 && text == 0.0,
        "compressed {compressed} bytes, text {text}"
    );
    let _ = writeln!(
        std::io::stderr(),
        "played round 1 through the page: {marked_throws} marked throws, ending: {ending}; \
         {compressed} bytes sent compressed"
    );
    check_and_close(vec![b]).await;
}

/// A name written as markup is shown as text, never run; and a person the host removes sees why
/// on their own page, while the host may let them back.
#[cfg_attr(
    missing_chromium,
    ignore = "needs Chromium: apt-get install chromium chromium-driver"
)]
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_name_with_markup_is_shown_as_text() {
    let mut stage = stage!();
    let host = stage.browser(DESKTOP).await;
    let guest = stage.browser(PHONE).await;
    let markup = "<img src=x onerror=f()>";

    let invite = create_room(&host, stage.addr, "Asha").await;
    guest.join_from_link(&invite, markup, "#join-sit").await;
    host.until_text("#lobby-seats", markup).await;
    for page in [&host, &guest] {
        let images = page
            .eval(
                "return document.querySelectorAll('#lobby-seats img, #lobby-seats b img').length;",
            )
            .await;
        assert_eq!(images, json!(0), "the name became an element");
    }

    // The host removes the guest: the guest's page says why and stays away.
    host.click(".lobby-seat[data-seat='1'] button").await;
    guest
        .wait_until("the removed page", |s| s.screen == "gone")
        .await;
    assert!(
        guest.text("#gone-why").await.contains("removed you"),
        "{}",
        guest.text("#gone-why").await
    );
    host.until_text("#lobby-removed", markup).await;
    host.click("#lobby-removed button").await;
    poll(
        "the removed list to empty",
        async || {
            let removed = host.find("#lobby-removed").await;
            removed.is_displayed().await.unwrap()
        },
        |shown| !shown,
    )
    .await;
    host.assert_no_console_errors().await;
    guest.assert_no_console_errors().await;
}

#[cfg_attr(
    missing_chromium,
    ignore = "needs Chromium: apt-get install chromium chromium-driver"
)]
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn two_people_in_one_room_each_see_only_their_own_hand_and_a_third_watches() {
    let mut stage = stage!();
    let asha = stage.browser(DESKTOP).await;
    let bina = stage.browser(PHONE).await;

    let invite = create_room(&asha, stage.addr, "Asha").await;
    bina.open_join_form(&invite).await;
    bina.assert_fits_the_width("the join form").await;
    bina.join_as("Bina", "#join-sit").await;
    bina.wait_until("the lobby", |s| s.screen == "lobby").await;
    asha.until_text("#lobby-seats", "Bina").await;
    assert!(!bina.find("#start").await.is_displayed().await.unwrap());
    // The host puts a hard bot in seat 3; Bina, not the host, has no such controls.
    asha.select(".lobby-seat[data-seat='2'] select", "hard")
        .await;
    asha.click(".lobby-seat[data-seat='2'] button").await;
    bina.until_text("#lobby-seats", "bot \u{b7} hard").await;
    let controls = bina
        .eval(
            "return document.querySelectorAll('#lobby-seats button, #lobby-seats select').length;",
        )
        .await;
    assert_eq!(
        controls,
        json!(1),
        "only Bina's own \"Move here\" to the empty seat"
    );
    asha.screenshot("lobby-desktop").await;
    let [a, b] = &start_and_deal(&[&asha, &bina]).await[..] else {
        unreachable!()
    };
    let mine: BTreeSet<&String> = a.hand.iter().collect();
    let theirs: BTreeSet<&String> = b.hand.iter().collect();
    assert!(mine.is_disjoint(&theirs), "{mine:?} and {theirs:?}");
    // Neither page holds the other's cards anywhere: not drawn, not hidden, not in an attribute.
    for (page, other) in [(&asha, &b.hand), (&bina, &a.hand)] {
        let source = page.client().source().await.unwrap();
        for card in other {
            assert!(
                !source.contains(&format!("data-card=\"{card}\"")),
                "{card} of another seat is in the page"
            );
        }
    }
    assert!(asha.text("#seats").await.contains("Bina"));
    assert!(asha.text("#seats").await.contains("bot \u{b7} hard"));
    assert!(bina.text("#seats").await.contains("Asha"));

    // Asha (seat 0) leads, with the keyboard alone: S draws from the stock, a digit marks the
    // card in that place, T throws. Bina sees it.
    assert!(a.my_turn && !b.my_turn);
    asha.keys("s").await;
    let a = asha.wait_until("the throw", |s| s.may_throw).await;
    assert_eq!(a.hand.len(), 6);
    let (place, heaviest) = a
        .hand
        .iter()
        .enumerate()
        .max_by_key(|(_, c)| value(c))
        .map(|(i, c)| (i, c.clone()))
        .unwrap();
    asha.keys(&(place + 1).to_string()).await;
    let a = asha.snapshot().await;
    assert_eq!(a.marked, vec![heaviest.clone()]);
    assert_eq!(a.throw_text, format!("Throw {}", value(&heaviest)));
    asha.keys("t").await;
    let label = bina
        .eval(&versioned(&format!(
            "return import('/assets/cards.js').then((m) => m.cardLabel('{heaviest}'));"
        )))
        .await;
    let label = label.as_str().unwrap().to_owned();
    let b = bina
        .wait_until("Asha's throw", |s| {
            s.my_turn && s.log.contains(&format!("Asha threw {label}."))
        })
        .await;
    // Bina takes it from the pile, and Asha's log says so.
    assert_eq!(b.takeable, vec![heaviest.clone()]);
    bina.click("#pile .card.takeable").await;
    asha.wait_until("Bina's pick-up", |s| {
        s.log.contains(&format!("Bina took {label} from the pile."))
    })
    .await;
    let b = bina.wait_until("Bina's throw", |s| s.may_throw).await;
    assert_eq!(b.barred.as_ref(), Some(&heaviest));
    // Bina marks a card with the keyboard: Space on the focused card, and Enter again unmarks;
    // the focus stays on that card through the redraws.
    let card = b.hand.iter().find(|c| **c != heaviest).unwrap().clone();
    let focused = "return document.activeElement.dataset.card || null;";
    bina.find(&format!("#hand .card[data-card='{card}']"))
        .await
        .send_keys(" ")
        .await
        .unwrap();
    assert_eq!(bina.snapshot().await.marked, vec![card.clone()]);
    assert_eq!(bina.eval(focused).await, json!(card));
    bina.press("\u{E007}").await;
    assert!(bina.snapshot().await.marked.is_empty());
    assert_eq!(bina.eval(focused).await, json!(card));
    asha.screenshot("table-desktop").await;
    bina.screenshot("table-phone-second-player").await;

    // A third person with the link finds the table full and watches: every seat, no hand.
    let chandra = stage.browser(PHONE).await;
    chandra.open_join_form(&invite).await;
    assert!(
        chandra
            .find("#join-full")
            .await
            .is_displayed()
            .await
            .unwrap()
    );
    assert!(
        !chandra
            .find("#join-sit")
            .await
            .is_displayed()
            .await
            .unwrap()
    );
    chandra.join_as("Chandra", "#join-full").await;
    let c = chandra
        .wait_until("the table", |s| s.screen == "table" && s.round == 1)
        .await;
    assert!(c.hand.is_empty() && c.status == "Watching", "{c:?}");
    let seats = chandra.text("#seats").await;
    assert!(seats.contains("Asha") && seats.contains("Bina"), "{seats}");
    let source = chandra.client().source().await.unwrap();
    for card in a.hand.iter().chain(&b.hand) {
        if Some(card) != b.barred.as_ref() {
            assert!(
                !source.contains(&format!("data-card=\"{card}\"")),
                "{card} of a seat is shown to a spectator"
            );
        }
    }

    check_and_close(vec![asha, bina, chandra]).await;
}

#[cfg_attr(
    missing_chromium,
    ignore = "needs Chromium: apt-get install chromium chromium-driver"
)]
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_reload_a_dropped_connection_or_a_second_tab_keeps_the_seat() {
    let mut stage = stage!();
    let b = stage.browser(PHONE).await;

    create_room(&b, stage.addr, "Asha").await;
    // The host changes the table in the lobby: three players, seven cards each.
    b.select("#lobby-settings #set-players", "3").await;
    b.until(
        "the lobby to show three seats",
        "return document.querySelectorAll('.lobby-seat').length === 3;",
    )
    .await;
    b.select("#lobby-settings #set-cards", "7").await;
    b.until(
        "the lobby to show seven cards",
        "return document.querySelector('#lobby-settings').textContent.includes('Seven makes') \
           && document.querySelector('#lobby-settings #set-cards').value === '7';",
    )
    .await;
    b.click("#start").await;
    let before = b
        .wait_until("the table", |s| s.screen == "table" && s.hand.len() == 7)
        .await;
    let token = b
        .eval("return Object.keys(localStorage).filter((k) => k.startsWith('dhumbal.room.')).map((k) => JSON.parse(localStorage.getItem(k)).token);")
        .await;
    assert!(
        token.as_array().unwrap().iter().any(|t| t.is_string()),
        "the seat token is kept in localStorage: {token}"
    );
    // From the next page load on, the page's sockets are kept where the test can drop them.
    b.before_each_page(KEEP_SOCKETS).await;
    b.refresh().await;
    let after = b
        .wait_until("the table again", |s| {
            s.screen == "table" && !s.hand.is_empty()
        })
        .await;
    let sorted = |h: &[String]| h.iter().cloned().collect::<BTreeSet<String>>();
    assert_eq!(sorted(&before.hand), sorted(&after.hand), "the same seat");
    // The round's log comes back too, from the history the server sends on arrival.
    assert!(!before.log.is_empty(), "the deal is in the log");
    assert_eq!(after.log, before.log, "the same log after the reload");
    assert!(!after.banner, "no reconnecting banner once back");
    assert!(after.my_turn, "seat 0 still leads");
    let seats = b.text("#seats").await;
    assert_eq!(seats.matches("bot").count(), 2, "{seats}");
    assert_eq!(seats.matches("7 cards").count(), 2, "{seats}");

    // Sort hand puts the lightest first; How to play shows this table's settings.
    b.click("#sort").await;
    let sorted_hand = b.snapshot().await.hand;
    let values: Vec<u32> = sorted_hand.iter().map(|c| value(c)).collect();
    assert!(values.is_sorted(), "sorted: {sorted_hand:?}");
    b.click("#open-rules").await;
    let rules = b.text("#rules-box").await;
    assert!(
        rules.contains("7 each") && rules.contains("With 5 or less in hand"),
        "{rules}"
    );
    b.click("#rules-close").await;

    // The connection drops: the banner says so, the page comes back to the same seat by itself.
    let dropped = b
        .eval("window.__sockets.forEach((s) => s.close()); return window.__sockets.length;")
        .await;
    assert_eq!(dropped, json!(1));
    b.wait_until("the reconnecting banner", |s| {
        s.banner && s.banner_text.contains("Reconnecting")
    })
    .await;
    let back = b
        .wait_until("the seat again", |s| !s.banner && !s.hand.is_empty())
        .await;
    assert_eq!(sorted(&back.hand), sorted(&before.hand));
    assert!(back.my_turn);

    // The same seat opened in a second tab takes it over; the first tab steps aside and says
    // so, and can take it back.
    let link = b.client().current_url().await.unwrap();
    let first = b.client().window().await.unwrap();
    let second = b.client().new_tab().await.unwrap();
    b.client().switch_to_window(&second).await.unwrap();
    b.goto(&link).await;
    let there = b
        .wait_until("the seat in the second tab", |s| {
            s.screen == "table" && !s.hand.is_empty()
        })
        .await;
    assert_eq!(sorted(&there.hand), sorted(&before.hand));
    b.client().switch_to_window(&first).await.unwrap();
    b.wait_until("the first tab to step aside", |s| {
        s.banner && s.banner_text.contains("open in another window")
    })
    .await;
    b.click("#banner button").await;
    b.wait_until("the seat back in the first tab", |s| {
        !s.banner && s.hand.len() == before.hand.len()
    })
    .await;
    b.client().switch_to_window(&second).await.unwrap();
    b.wait_until("the second tab to step aside", |s| {
        s.banner && s.banner_text.contains("open in another window")
    })
    .await;
    b.client().close_window().await.unwrap();
    b.client().switch_to_window(&first).await.unwrap();
    check_and_close(vec![b]).await;
}

/// Run before the page's own scripts: every WebSocket the page opens is kept in
/// `window.__sockets`, with its URL and when it was made (`performance.now()`) in
/// `window.__opened`, and when each closed in `window.__closedAt`.
const TIME_SOCKETS: &str = "window.__sockets = []; window.__opened = []; window.__closedAt = []; \
    window.WebSocket = class extends window.WebSocket { \
      constructor(...args) { super(...args); window.__sockets.push(this); \
        window.__opened.push([String(args[0]), performance.now()]); \
        this.addEventListener('close', () => window.__closedAt.push(performance.now())); } };";

/// What a cluster's server does to a room it no longer holds (`bye` `room_moved`, then close
/// 4006), played to the page: the server's side of it is stood in for by the page's socket
/// (a synthetic `bye`, then a close with 4006, which the server echoes). The page opens the
/// room's own socket, `/ws/{code}`; after a move it is back within 0.1 s (not the 0.2 s and more
/// of an ordinary drop), says nothing but "reconnecting…", and sits in the same seat with the
/// same cards. A second move within seconds is retried with the ordinary pause.
#[cfg_attr(
    missing_chromium,
    ignore = "needs Chromium: apt-get install chromium chromium-driver"
)]
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_room_that_moves_to_another_server_brings_the_page_back_at_once() {
    let mut stage = stage!();
    let b = stage.browser(PHONE).await;
    b.before_each_page(TIME_SOCKETS).await;
    let invite = create_room(&b, stage.addr, "Asha").await;
    let code = invite.rsplit('/').next().unwrap().to_owned();
    b.click("#start").await;
    let before = b
        .wait_until("the table", |s| s.screen == "table" && !s.hand.is_empty())
        .await;
    let urls: Vec<(String, f64)> = b.view("return window.__opened;").await;
    assert!(
        urls.iter()
            .all(|(url, _)| *url == format!("ws://{}/ws/{code}?compress=deflate-raw", stage.addr)),
        "the page opens the room's own socket: {urls:?}"
    );

    let moved = "const s = window.__sockets[window.__sockets.length - 1]; \
        s.dispatchEvent(new MessageEvent('message', { data: JSON.stringify({ type: 'bye', \
          reason: 'room_moved', message: 'this room has moved to another server' }) })); \
        s.close(4006, 'room moved'); return window.__sockets.length;";
    let sorted = |h: &[String]| h.iter().cloned().collect::<BTreeSet<String>>();
    // How long after the last close the next socket was made, in the page's own clock.
    let reopened_after = async |sockets: usize| -> f64 {
        let (opened, closed): (Vec<(String, f64)>, Vec<f64>) = b
            .wait_view(
                "the page to open its socket again",
                "return [window.__opened, window.__closedAt];",
                |(opened, _): &(Vec<(String, f64)>, Vec<f64>)| opened.len() > sockets,
            )
            .await;
        opened[sockets].1 - closed.last().copied().unwrap()
    };
    for (round, fast) in [(1, true), (2, false)] {
        let sockets: usize = serde_json::from_value(b.eval(moved).await).unwrap();
        let after = reopened_after(sockets).await;
        if fast {
            assert!(after < 190.0, "back {after} ms after the move");
        } else {
            assert!(
                after >= 190.0,
                "a second move at once waits as a drop does: {after} ms"
            );
        }
        let back = b
            .wait_until("the seat again", |s| !s.banner && s.screen == "table")
            .await;
        assert_eq!(sorted(&back.hand), sorted(&before.hand), "move {round}");
        assert!(
            !back.toast.contains("moved"),
            "a move says no more than reconnecting: {back:?}"
        );
    }
    let closes: Vec<f64> = b.view("return window.__closedAt;").await;
    assert_eq!(closes.len(), 2, "each move closed one socket: {closes:?}");
    check_and_close(vec![b]).await;
}

/// Run before the page's own scripts, with [`TIME_SOCKETS`]: while `window.__refuse` is above
/// 0, the next socket the page opens answers its `hello` as a cluster server does while Redis is
/// away (`error` `store_unavailable`, `bye` with that reason, close 1013), without the hello
/// reaching the server.
const REFUSE_HELLOS: &str = "window.__refuse = 0; \
    window.WebSocket = class extends window.WebSocket { \
      constructor(...args) { super(...args); const socket = this; \
        if (window.__refuse > 0) { window.__refuse -= 1; \
          this.send = (data) => { const id = JSON.parse(data).id ?? null; \
            const say = (m) => socket.dispatchEvent(new MessageEvent('message', { data: JSON.stringify(m) })); \
            say({ type: 'error', code: 'store_unavailable', message: 'the store is away', id }); \
            say({ type: 'bye', reason: 'store_unavailable', message: 'the store is away' }); \
            socket.dispatchEvent(new CloseEvent('close', { code: 1013, reason: 'store unavailable' })); \
            socket.close(1000); }; } } };";

/// A cluster server whose Redis is away refuses the page's `hello` with `store_unavailable` and
/// closes with 1013: the page says the server cannot reach its store, tries again with a pause
/// that grows from one refusal to the next (the pause starts short again only once a `welcome`
/// has come, not when a socket merely opens), and is back in its seat with its cards once the
/// store answers.
#[cfg_attr(
    missing_chromium,
    ignore = "needs Chromium: apt-get install chromium chromium-driver"
)]
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_hello_refused_while_the_store_is_away_is_tried_again_with_a_growing_pause() {
    let mut stage = stage!();
    let b = stage.browser(PHONE).await;
    b.before_each_page(TIME_SOCKETS).await;
    b.before_each_page(REFUSE_HELLOS).await;
    create_room(&b, stage.addr, "Asha").await;
    b.click("#start").await;
    let before = b
        .wait_until("the table", |s| s.screen == "table" && !s.hand.is_empty())
        .await;
    // The connection drops, and the next three hellos are refused.
    let sockets: usize = serde_json::from_value(
        b.eval(
            "window.__refuse = 3; const s = window.__sockets[window.__sockets.length - 1]; \
             s.close(4000, 'dropped'); return window.__sockets.length;",
        )
        .await,
    )
    .unwrap();
    b.wait_until("the refusal to be said, and reconnecting…", |s| {
        s.banner && s.toast.contains("can't reach its store")
    })
    .await;
    let opened: Vec<(String, f64)> = b
        .wait_view(
            "four sockets after the drop",
            "return window.__opened;",
            |opened: &Vec<(String, f64)>| opened.len() >= sockets + 4,
        )
        .await;
    // A refused socket closes as it opens, so the time from one socket to the next is the
    // pause after each refusal: 0.4-0.8 s, 0.8-1.6 s, 1.6-3.2 s (were the pause to start short
    // again at each opening, each would be 0.2-0.4 s).
    let gaps: Vec<f64> = (1..4)
        .map(|n| opened[sockets + n].1 - opened[sockets + n - 1].1)
        .collect();
    assert!(
        gaps[1] >= 750.0 && gaps[2] >= 1500.0,
        "the pause grows from one refusal to the next: {gaps:?} ms"
    );
    let back = b
        .wait_until("the seat again", |s| !s.banner && s.screen == "table")
        .await;
    let sorted = |h: &[String]| h.iter().cloned().collect::<BTreeSet<String>>();
    assert_eq!(sorted(&back.hand), sorted(&before.hand));
    check_and_close(vec![b]).await;
}

/// SIGTERM in the middle of a match, with rooms kept in SQLite: the real server binary tells the
/// page it is restarting and stops cleanly; the page says it is reconnecting; the server starts
/// again on the same address and data directory, and the page, untouched, comes back to its
/// seat and hand and finishes the match.
#[cfg_attr(
    missing_chromium,
    ignore = "needs Chromium: apt-get install chromium chromium-driver"
)]
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_sigterm_mid_match_and_a_restart_bring_the_page_back_to_its_seat_to_finish() {
    let Some(tools) = browser_tools() else {
        return;
    };
    let _turn = browser_turn().await;
    const SERVER: &str = env!("CARGO_BIN_EXE_server-under-test");
    let data = tempfile::tempdir().unwrap();
    let data_dir = data.path().display().to_string();
    let args = [
        "--store",
        "sqlite",
        "--data-dir",
        &data_dir,
        // Bots take a moment, so the restart falls on their turns, as the page waits.
        "--bot-delay-ms",
        "300",
        "--allow-test-decks",
    ];
    let mut server = tokio::task::block_in_place(|| ServerProcess::start(SERVER, &args));
    let addr = server.addr;

    // A fixed deck for a one-round match: seat 0 (the page) holds both jokers and three aces
    // (3), so it may call whenever it likes. The bots are dealt only cards worth 6 or more, and
    // so are the turned-up card and the stock's first 16 cards (more than this test draws), so
    // no bot's hand is ever light enough to call: the page ends the match when the test says.
    let settings = standard(1);
    let low = ["RJ", "BJ", "AS", "AH", "AD"].map(|c| c.parse::<Card>().unwrap());
    let heavy = |c: &Card| c.value(CourtValues::Tens) >= 6;
    let mut heavies = full_deck(true).into_iter().filter(heavy);
    let mut rest = full_deck(true)
        .into_iter()
        .filter(|c| !heavy(c) && !low.contains(c));
    let deck: Vec<Card> = (0..54)
        .map(|i| match i {
            i if i < 20 && i % 4 == 0 => low[i / 4],
            i if i < 37 => heavies.next().unwrap(),
            _ => rest.next().unwrap(),
        })
        .collect();
    assert_eq!(heavies.next(), None);
    let request = CreateRoom {
        settings: Some(settings),
        decks: Some(vec![deck]),
        ..CreateRoom::default()
    };
    let (status, body) = dhumbal_tests::http::post(
        addr,
        "/api/rooms",
        &serde_json::to_string(&request).unwrap(),
    )
    .await;
    assert_eq!(status, 201, "{body}");
    let room: CreatedRoom = serde_json::from_str(&body).unwrap();

    let driver = Driver::shared(tools);
    let b = driver.browser(PHONE).await;
    // The page that created a room keeps its host secret; do what it does, then open the link.
    b.keep_host_secret(addr, &room, "Asha").await;
    b.before_each_page(RECORD_CLOSES).await;
    b.goto(&format!("http://{addr}{}", room.url)).await;
    b.wait_until("the lobby", |s| s.screen == "lobby").await;
    b.click("#start").await;
    let first = b
        .wait_until("the table", |s| s.screen == "table" && s.my_turn)
        .await;
    assert_eq!(first.call.as_deref(), Some("Call on 3"));

    // Two turns through the page, then SIGTERM while the bots play.
    draw_and_throw_it_back(&b).await;
    draw_and_throw_it_back(&b).await;
    let before = b.snapshot().await;
    assert!(
        !before.my_turn && before.phase != "round_over",
        "{before:?}"
    );
    let seat = own_seat(&b).await;
    let token = stored_token(&b, &room.code).await;
    assert!(token.is_string(), "a seat token: {token}");
    tokio::task::block_in_place(|| {
        server.terminate();
        assert!(
            server.wait(),
            "the server exited with a failure after SIGTERM"
        );
        server.log_line("dhumbal server stopped");
    });
    let away = b
        .wait_until("the reconnecting banner", |s| {
            s.banner && s.banner_text.contains("Reconnecting")
        })
        .await;
    assert!(
        away.toast.contains("The server is restarting"),
        "the page says why: {away:?}"
    );
    assert_eq!(away.screen, "table", "the table stays on screen");
    assert_eq!(away.hand, before.hand, "the hand stays on screen");
    // The notice has faded in (0.2 s) for the picture.
    tokio::time::sleep(Duration::from_millis(300)).await;
    b.screenshot("restart-reconnecting").await;
    // Down for a moment longer, so the page tries more than once.
    tokio::time::sleep(Duration::from_millis(1500)).await;
    assert!(b.snapshot().await.banner, "still reconnecting");
    let closes = b.eval("return window.__closes;").await;
    let closes: Vec<u16> = serde_json::from_value(closes).unwrap();
    assert_eq!(
        closes.first(),
        Some(&1012),
        "the server closed with 1012 (service restart), then the attempts failed: {closes:?}"
    );
    assert!(closes.len() >= 2, "the page tried again: {closes:?}");

    let started = Instant::now();
    let server = tokio::task::block_in_place(|| ServerProcess::start_on(SERVER, addr, &args));
    assert_eq!(server.addr, addr);
    let sorted = |h: &[String]| h.iter().cloned().collect::<BTreeSet<String>>();
    let back = b
        .wait_until("the page back at its seat", |s| {
            !s.banner && s.screen == "table" && sorted(&s.hand) == sorted(&before.hand)
        })
        .await;
    let back_after = started.elapsed();
    assert_eq!(own_seat(&b).await, seat, "the same seat");
    assert_eq!(
        stored_token(&b, &room.code).await,
        token,
        "the same seat token"
    );
    assert_eq!(back.round, 1);
    assert!(!back.log.is_empty(), "the round's log comes back: {back:?}");

    // The restored match goes on: the bots finish their turns, the page plays one more, and
    // calls on its next.
    draw_and_throw_it_back(&b).await;
    let s = b
        .wait_until("the page's turn again", |s| s.my_turn && s.may_draw)
        .await;
    assert_eq!(s.call.as_deref(), Some("Call on 3"));
    b.click("#call").await;
    b.wait_until("the show", |s| s.score_open).await;
    assert_eq!(
        b.text("#score-dialog .ending").await,
        "Asha called on 3 and took the round."
    );
    assert_eq!(b.text("#score-title").await, "You win the match!");
    let standings = b.text("#score-dialog .standings").await;
    assert!(standings.starts_with("1. Asha +"), "{standings}");
    assert_eq!(standings.lines().count(), 4, "{standings}");
    let refused = b
        .assert_no_console_errors_but(|m| refused_websocket(addr, m))
        .await;
    let _ = writeln!(
        std::io::stderr(),
        "back at seat {seat} {back_after:?} after the restart; {} refused WebSocket attempts \
         logged while the server was down, the first: {:?}",
        refused.len(),
        refused.first()
    );
    b.close().await;
    drop(server);
}

#[cfg_attr(
    missing_chromium,
    ignore = "needs Chromium: apt-get install chromium chromium-driver"
)]
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_one_round_match_ends_with_standings_and_a_rematch() {
    let mut stage = stage!();
    // A fixed deck: seat 0 is dealt both jokers and three aces (3), so it may call at once and
    // nobody else can match it.
    let low = ["RJ", "BJ", "AS", "AH", "AD"].map(|c| c.parse::<Card>().unwrap());
    let mut rest = full_deck(true).into_iter().filter(|c| !low.contains(c));
    let deck: Vec<Card> = (0..54)
        .map(|i| {
            if i % 4 == 0 && i / 4 < 5 {
                low[i / 4]
            } else {
                rest.next().unwrap()
            }
        })
        .collect();
    let room = room_with(&stage.server, standard(1), vec![deck]).await;
    let b = stage.browser(DESKTOP).await;
    // The page that created a room keeps its host secret; do what it does, then open the link.
    b.host_room(stage.addr, &room, "Asha").await;
    b.click("#start").await;
    let s = b
        .wait_until("the call", |s| s.screen == "table" && s.call.is_some())
        .await;
    assert_eq!(s.call.as_deref(), Some("Call on 3"));
    assert!(s.status.contains("Holding 3"), "{}", s.status);
    b.click("#call").await;
    b.wait_until("the show", |s| s.score_open).await;
    let ending = b.text("#score-dialog .ending").await;
    assert_eq!(ending, "Asha called on 3 and took the round.");
    assert_eq!(b.text("#score-title").await, "You win the match!");
    let standings = b.text("#score-dialog .standings").await;
    assert!(standings.starts_with("1. Asha +"), "{standings}");
    assert_eq!(standings.lines().count(), 4, "{standings}");
    b.screenshot("match-over-desktop").await;
    b.click("#rematch").await;
    let again = b
        .wait_until("the rematch", |s| {
            !s.score_open && s.round == 1 && s.call.is_some()
        })
        .await;
    assert_eq!(again.hand.len(), 5);
    check_and_close(vec![b]).await;
}

#[cfg_attr(
    missing_chromium,
    ignore = "needs Chromium: apt-get install chromium chromium-driver"
)]
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_throw_then_draw_table_picks_up_from_the_previous_throw() {
    let mut stage = stage!();
    let b = stage.browser(PHONE).await;
    b.open_home(stage.addr).await;
    b.click("#home-settings-toggle").await;
    b.select("#set-preset", "household").await;
    create_room_here(&b, stage.addr, "Asha").await;
    b.click("#start").await;
    let s = b
        .wait_until("the table", |s| s.screen == "table" && s.may_throw)
        .await;
    assert!(!s.may_draw, "throw first: {s:?}");
    assert!(s.status.contains("no call limit"), "{}", s.status);
    // The turned-up card is the previous throw once Asha has thrown.
    let turned_up = b
        .eval("return [...document.querySelectorAll('#pile .card')].map((c) => c.dataset.card);")
        .await;
    let turned_up: Vec<String> = serde_json::from_value(turned_up).unwrap();
    assert_eq!(turned_up.len(), 1);
    let heaviest = s
        .hand
        .iter()
        .max_by_key(|c| c.parse::<Card>().unwrap().value(CourtValues::JackZero))
        .unwrap()
        .clone();
    b.drag_to_pile(&heaviest).await;
    let s = b
        .wait_until("the pick-up", |s| s.may_draw && !s.takeable.is_empty())
        .await;
    assert_eq!(
        s.takeable, turned_up,
        "the previous single throw may be taken"
    );
    b.assert_fits_the_width("a five-seat table").await;
    b.screenshot("throw-then-draw-phone").await;
    b.click("#pile .card.takeable").await;
    // Bots without delay may have played round to Asha again by now; the hand tells.
    b.wait_until("the pick-up to land", |s| {
        s.hand.contains(&turned_up[0]) && !s.hand.contains(&heaviest)
    })
    .await;
    check_and_close(vec![b]).await;
}
