//! The settings page, How to play, and the page's group rules against the engine's.

use crate::harness::*;
use dhumbal_engine::classify;
use std::collections::BTreeSet;

/// A group of cards and the settings to judge it under, sent to the page.
fn sample_groups() -> Vec<(Vec<Card>, Settings)> {
    let deck: Vec<Card> = (0..54).filter_map(Card::from_index).collect();
    let tables: Vec<Settings> = [
        (false, false, false),
        (true, false, false),
        (false, true, false),
        (true, true, false),
        (true, true, true),
    ]
    .into_iter()
    .map(|(runs, jokers, jokers_in_runs)| Settings {
        runs,
        jokers,
        jokers_in_runs,
        ..Preset::Standard.settings()
    })
    .collect();
    // A small deterministic generator: the same groups every run.
    let mut state = 0x9e37_79b9_7f4a_7c15_u64;
    let mut next = move |n: usize| {
        state ^= state << 13;
        state ^= state >> 7;
        state ^= state << 17;
        (state % n as u64) as usize
    };
    let mut groups = Vec::new();
    for i in 0..3000 {
        let settings = tables[i % tables.len()].clone();
        let len = 1 + next(5);
        let mut group: Vec<Card> = Vec::new();
        match i % 3 {
            // Anything at all.
            0 => {
                while group.len() < len {
                    let c = deck[next(deck.len())];
                    if !group.contains(&c) {
                        group.push(c);
                    }
                }
            }
            // Near-sets: one rank, sometimes a stray card or a joker.
            1 => {
                let rank = next(13);
                for suit in 0..4 {
                    if group.len() < len && next(3) > 0 {
                        group.push(deck[suit * 13 + rank]);
                    }
                }
                if next(3) == 0 {
                    group.push(deck[52 + next(2)]);
                }
                if next(4) == 0 {
                    let c = deck[next(52)];
                    if !group.contains(&c) {
                        group.push(c);
                    }
                }
            }
            // Near-runs: consecutive ranks of one suit with gaps, jokers, a wrong suit.
            _ => {
                let suit = next(4);
                let start = next(13);
                for k in 0..len + 1 {
                    let rank = (start + k) % 13;
                    match next(6) {
                        0 => {}
                        1 => {
                            let j = deck[52 + next(2)];
                            if !group.contains(&j) {
                                group.push(j);
                            }
                        }
                        2 => group.push(deck[((suit + 1) % 4) * 13 + rank]),
                        _ => group.push(deck[suit * 13 + rank]),
                    }
                }
                group.dedup();
                let mut seen = BTreeSet::new();
                group.retain(|c| seen.insert(*c));
            }
        }
        if group.is_empty() {
            group.push(deck[next(52)]);
        }
        // Shuffle the listed order: it must not matter.
        for k in (1..group.len()).rev() {
            group.swap(k, next(k + 1));
        }
        groups.push((group, settings));
    }
    groups
}

#[cfg_attr(
    missing_chromium,
    ignore = "needs Chromium: apt-get install chromium chromium-driver"
)]
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_settings_page_the_rules_page_and_the_pages_group_rules() {
    let mut stage = stage!();
    let b = stage.browser(PHONE).await;
    b.open_home(stage.addr).await;
    // The settings are folded behind "Table settings".
    b.click("#home-settings-toggle").await;

    // Every setting has a one-line explanation.
    let fields = b
        .eval(
            "return [...document.querySelectorAll('#home-settings .field')].map((f) => \
             [f.querySelector('label').textContent, f.querySelector('.note').textContent.length]);",
        )
        .await;
    let fields = fields.as_array().unwrap();
    assert!(fields.len() >= 20, "{fields:?}");
    for f in fields {
        assert!(f[1].as_u64().unwrap() > 20, "{f} has no explanation");
    }
    b.assert_fits_the_width("the settings page").await;
    b.screenshot("settings-phone").await;

    // A preset fills every setting; How to play shows the table's own settings.
    b.select("#set-preset", "yaniv").await;
    let limit = b.find("#set-limit").await.prop("value").await.unwrap();
    assert_eq!(limit.as_deref(), Some("7"));
    let penalty = b.find("#set-penalty").await.prop("value").await.unwrap();
    assert_eq!(penalty.as_deref(), Some("30"));
    b.click("#home-rules").await;
    // It opens at its top, its title focused (not Close, at the bottom).
    let opened = b
        .eval("const d = document.querySelector('#rules-dialog'); return [d.scrollTop, document.querySelector('#rules-box').scrollTop, document.activeElement.id];")
        .await;
    assert_eq!(opened, json!([0, 0, "rules-title"]));
    let rules = b.text("#rules-box").await;
    for expected in [
        "With 7 or less in hand",
        "30 on top of your hand",
        "Throw, then draw",
        "wild in sets and runs",
    ] {
        assert!(rules.contains(expected), "How to play lacks {expected:?}");
    }
    b.assert_fits_the_width("How to play").await;
    b.screenshot("rules-phone").await;
    b.click("#rules-close").await;

    // The page's group rules (which enable the Throw button) agree with the engine's.
    let groups = sample_groups();
    let payload: Vec<Value> = groups
        .iter()
        .map(|(cards, settings)| json!({ "cards": cards, "settings": settings }))
        .collect();
    let expected: Vec<Value> = groups
        .iter()
        .map(|(cards, settings)| serde_json::to_value(classify(cards, settings)).unwrap())
        .collect();
    let got = b
        .execute(
            &versioned(
                "return import('/assets/cards.js').then((m) => \
             arguments[0].map((g) => m.classify(g.cards, g.settings)));",
            ),
            vec![Value::Array(payload)],
        )
        .await
        .unwrap();
    let got = got.as_array().unwrap();
    assert_eq!(got.len(), groups.len());
    let kinds: BTreeSet<String> = expected.iter().map(|k| k.to_string()).collect();
    assert_eq!(
        kinds.len(),
        4,
        "the sample holds every kind and refusals: {kinds:?}"
    );
    for ((group, settings), (want, have)) in groups.iter().zip(expected.iter().zip(got)) {
        assert_eq!(
            want, have,
            "{group:?} with runs {} jokers {} jokers in runs {}",
            settings.runs, settings.jokers, settings.jokers_in_runs
        );
    }
    // And sorting puts the lightest first and the jokers last.
    let sorted = b
        .eval(&versioned("return import('/assets/cards.js').then((m) => m.sortHand(['KH','RJ','AS','7D','2C'], { KH: 10, RJ: 0, AS: 1, '7D': 7, '2C': 2 }));"))
        .await;
    assert_eq!(sorted, json!(["AS", "2C", "7D", "KH", "RJ"]));
    check_and_close(vec![b]).await;
}

/// Sets a field of the settings form at `css` as a person does (a change event).
async fn set_field(b: &Browser, css: &str, value: &str) {
    b.execute(
        "const f = document.querySelector(arguments[0]); f.value = arguments[1]; \
             f.dispatchEvent(new Event('change', { bubbles: true }));",
        vec![json!(css), json!(value)],
    )
    .await
    .unwrap();
}

/// Waits until the form in `box_css` shows `error` (empty: none) and Create room is enabled
/// exactly when there is none.
async fn until_form_says(b: &Browser, box_css: &str, error: &str, creates: bool) {
    let create = if creates {
        "const c = [...document.querySelectorAll('#create, #create-bottom')].every((e) => e.disabled === (error !== ''));"
    } else {
        "const c = true;"
    };
    b.until(
        &format!("the form to say {error:?}"),
        &format!(
            "const error = {error:?}; const e = document.querySelector('{box_css} .form-error'); {create} \
             return Boolean(e) && e.textContent === error && c || (e ? e.textContent : 'no form');"
        ),
    )
    .await;
}

/// The settings form's problems are the server's (`POST /api/settings/check`), in the page's
/// words: the home page's Create room is off exactly while the server refuses the settings, and
/// the host's lobby form sends a change only once the server finds it playable.
#[cfg_attr(
    missing_chromium,
    ignore = "needs Chromium: apt-get install chromium chromium-driver"
)]
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_settings_form_says_what_the_server_refuses() {
    let mut stage = stage!();
    let addr = stage.addr;
    let b = stage.browser(PHONE).await;
    b.open_home(addr).await;
    b.click("#home-settings-toggle").await;
    until_form_says(&b, "#home-settings", "", true).await;
    set_field(&b, "#set-rounds", "0").await;
    until_form_says(&b, "#home-settings", "Rounds must be 1 to 100.", true).await;
    // A number no table can take at all (the server cannot even read it) is the form's problem.
    set_field(&b, "#set-rounds", "-3").await;
    until_form_says(
        &b,
        "#home-settings",
        "A number here is not one a table can take: use whole numbers within the limits shown.",
        true,
    )
    .await;
    set_field(&b, "#set-rounds", "2").await;
    until_form_says(&b, "#home-settings", "", true).await;
    // A refusal that names another setting: the doubled penalty must beat the penalty.
    set_field(&b, "#set-double", "on").await;
    set_field(&b, "#set-double-amount", "10").await;
    until_form_says(
        &b,
        "#home-settings",
        "The doubled penalty must be more than the penalty (25) and at most 500.",
        true,
    )
    .await;
    set_field(&b, "#set-double", "off").await;
    until_form_says(&b, "#home-settings", "", true).await;
    let invite = create_room_here(&b, addr, "Asha").await;
    let code = invite.rsplit('/').next().unwrap().to_owned();

    // In the lobby: a refused change stays in the form, and the room keeps its settings.
    set_field(&b, "#lobby-settings #set-limit", "99").await;
    until_form_says(
        &b,
        "#lobby-settings",
        "The call limit must be 0 to 50.",
        false,
    )
    .await;
    let limit = || async {
        let (status, body) = dhumbal_tests::http::get(addr, &format!("/api/rooms/{code}")).await;
        assert_eq!(status, 200, "{body}");
        serde_json::from_str::<Value>(&body).unwrap()["settings"]["call_limit"].clone()
    };
    assert_eq!(limit().await, json!(5));
    set_field(&b, "#lobby-settings #set-limit", "6").await;
    until_form_says(&b, "#lobby-settings", "", false).await;
    poll(
        "the room's new limit",
        async || limit().await,
        |v| *v == json!(6),
    )
    .await;

    // The refused checks are the only lines in the console: Chromium's for their 400s.
    let refused = b
        .assert_no_console_errors_but(|m| m.contains("/api/settings/check") && m.contains("400"))
        .await;
    assert!(!refused.is_empty(), "the checks were refused");
    b.close().await;
}

/// The order of the other seats round the table, as the page draws them.
async fn seat_order(b: &Browser) -> Value {
    b.eval(
        "return [...document.querySelectorAll('#seats .seat')].map((e) => Number(e.dataset.seat));",
    )
    .await
}

/// Issue 35, items 16 to 18, as the page shows them: the settings form offers the direction of
/// play and what a reshuffle keeps, How to play says what the engine does for the table's own
/// settings, the household form cannot seat six, and a counter-clockwise table shows its
/// direction, draws the seats in its order and plays that way (Asha, then seats 3, 2 and 1).
#[cfg_attr(
    missing_chromium,
    ignore = "needs Chromium: apt-get install chromium chromium-driver"
)]
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_counter_clockwise_table_shows_its_direction_and_plays_that_way() {
    let mut stage = stage!();
    let b = stage.browser(PHONE).await;
    b.open_home(stage.addr).await;
    b.click("#home-settings-toggle").await;

    // The household preset keeps the top card at a reshuffle, Yaniv the top throw; How to play
    // says so.
    b.select("#set-preset", "household").await;
    let keeps = b.find("#set-reshuffle").await.prop("value").await.unwrap();
    assert_eq!(keeps.as_deref(), Some("top_card"));
    b.click("#home-rules").await;
    let rules = b.text("#rules-box").await;
    assert!(
        rules.contains("everything under the pile's top card is shuffled into a new stock"),
        "{rules}"
    );
    assert!(rules.contains("Clockwise"), "{rules}");
    b.click("#rules-close").await;
    b.select("#set-preset", "yaniv").await;
    let keeps = b.find("#set-reshuffle").await.prop("value").await.unwrap();
    assert_eq!(keeps.as_deref(), Some("top_throw"));
    b.click("#home-rules").await;
    let rules = b.text("#rules-box").await;
    assert!(
        rules.contains("the top throw stays as it was thrown"),
        "{rules}"
    );
    b.click("#rules-close").await;

    // Six at a household table: the server's refusal, in the page's words.
    b.select("#set-preset", "household").await;
    set_field(&b, "#set-players", "6").await;
    until_form_says(
        &b,
        "#home-settings",
        "The household guide's rules are for 2 to 5 players.",
        true,
    )
    .await;
    set_field(&b, "#set-players", "5").await;
    until_form_says(&b, "#home-settings", "", true).await;
    // The check's 400 is the one console line that refusal leaves.
    let refused = b
        .assert_no_console_errors_but(|m| m.contains("/api/settings/check") && m.contains("400"))
        .await;
    assert!(!refused.is_empty(), "the server never refused six");

    // Counter-clockwise, from the form: How to play says which way the deal and the turns go.
    b.select("#set-preset", "standard").await;
    set_field(&b, "#set-direction", "counter_clockwise").await;
    until_form_says(&b, "#home-settings", "", true).await;
    b.click("#home-rules").await;
    let rules = b.text("#rules-box").await;
    for expected in ["Counter-clockwise", "one at a time from the dealer's right"] {
        assert!(rules.contains(expected), "How to play lacks {expected:?}");
    }
    b.click("#rules-close").await;

    // A counter-clockwise table from a fixed deck that no hand can call on for a turn round.
    let settings = Settings {
        rounds: Rounds::Fixed(1),
        direction: dhumbal_engine::Direction::CounterClockwise,
        ..Preset::Standard.settings()
    };
    let room = room_with(
        &stage.server,
        settings.clone(),
        vec![dhumbal_engine::full_deck(false)],
    )
    .await;
    b.host_room(stage.addr, &room, "Asha").await;
    b.click("#start").await;
    b.wait_until("the table", |s| {
        s.screen == "table" && s.my_turn && s.may_draw
    })
    .await;
    // The direction is in the table's menu, said in a sentence there too.
    open_table_menu(&b).await;
    assert_eq!(
        b.text("#play-direction").await,
        "\u{21ba} Counter-clockwise"
    );
    let title = b.find("#play-direction").await.attr("title").await.unwrap();
    assert_eq!(
        title.as_deref(),
        Some("Play goes counter-clockwise: after you, the seat on your right plays.")
    );
    assert!(
        b.text("#table-menu")
            .await
            .contains(title.as_deref().unwrap()),
        "the menu explains the direction"
    );
    close_table_menu(&b).await;
    assert_eq!(seat_order(&b).await, json!([3, 2, 1]));
    // Seat 1 dealt the first round.
    let dealer = b
        .eval("return Number(document.querySelector('#seats .dealer').closest('.seat').dataset.seat);")
        .await;
    assert_eq!(dealer, json!(1));
    b.click("#stock").await;
    let drawn = b.wait_until("the draw", |s| s.may_throw).await;
    let card = heaviest(&drawn);
    b.tap(&card).await;
    b.click("#throw").await;
    // Round the table the other way: seats 3, 2 and 1 (Bot 4, Bot 3, Bot 2) play, then Asha.
    let back = b
        .wait_until("Asha's next turn", |s| s.my_turn && s.may_draw)
        .await;
    // From Asha's throw on (the whole round's log says who dealt first).
    let from = back
        .log
        .find("You threw")
        .expect("Asha's throw is in the log");
    let after = &back.log[from..];
    let at = |name: &str| {
        after
            .find(name)
            .unwrap_or_else(|| panic!("{name} is not in the log: {}", back.log))
    };
    assert!(
        at("Bot 4") < at("Bot 3") && at("Bot 3") < at("Bot 2"),
        "{}",
        back.log
    );
    b.assert_fits_the_width("a counter-clockwise table").await;
    b.screenshot("counter-clockwise-phone").await;

    // The page's deal check (fair.js) deals a counter-clockwise deck as the engine does.
    let deck = dhumbal_engine::full_deck(false);
    let game = dhumbal_engine::Game::with_decks(settings.clone(), vec![deck.clone()]).unwrap();
    let engine: Vec<Vec<Card>> = (0..4).map(|s| game.hand(s).to_vec()).collect();
    let page = b
        .execute(
            &versioned(
                "return import('/assets/fair.js').then((m) => \
             m.deal(arguments[0], 1, [true, true, true, true], 5, 'counter_clockwise').hands);",
            ),
            vec![json!(deck)],
        )
        .await
        .unwrap();
    assert_eq!(page, json!(engine));
    check_and_close(vec![b]).await;
}
