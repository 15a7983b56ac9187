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
        .client
        .execute(
            "return import('/assets/cards.js').then((m) => \
             arguments[0].map((g) => m.classify(g.cards, g.settings)));",
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
        .eval("return import('/assets/cards.js').then((m) => m.sortHand(['KH','RJ','AS','7D','2C'], 'tens'));")
        .await;
    assert_eq!(sorted, json!(["AS", "2C", "7D", "KH", "RJ"]));
    check_and_close(vec![b]).await;
}
