//! No axe-core violations (issue 31): axe-core (vendored in `vendor/axe.min.js`, MPL-2.0, its
//! LICENSE beside it) is injected into the page with WebDriver `execute`, never served by the
//! server and never needing the page's CSP loosened, and run on the home page (its settings
//! unfolded too), the join form, the host's and a friend's lobby, the table on a phone and a
//! laptop (its menu and How to play too), the score dialog after round 1, the match-over dialog
//! and the Replay page (before a file and stepping through one), in English and in Nepali.
//! Every violation is printed (its id, the elements it names and its help) and fails the test.

use crate::hand_order::{LAPTOP, PHONE_640, deck_dealing};
use crate::harness::*;

/// axe-core itself, as published (`npm pack axe-core@4`).
const AXE: &str = include_str!("vendor/axe.min.js");

/// Two jokers and three aces: 3, a call at once that nobody can match.
const LIGHT: [&str; 5] = ["RJ", "BJ", "AS", "AH", "AD"];
/// 11: the other person's hand.
const ELEVEN: [&str; 5] = ["2S", "2H", "2D", "2C", "3S"];
/// The bots' hands: 50 each.
const BOT3: [&str; 5] = ["KS", "KH", "KD", "KC", "QS"];
const BOT4: [&str; 5] = ["QH", "QD", "QC", "JS", "JH"];

/// Runs axe-core on the whole document and returns its violations, one line each: the rule's
/// id, the elements it names and its help.
pub(crate) async fn axe_violations(b: &Browser) -> Vec<String> {
    let loaded = b
        .eval("return typeof window.axe === 'object';")
        .await
        .as_bool()
        .unwrap_or(false);
    if !loaded {
        // The script defines `axe` on the window (its UMD wrapper sees no module system here).
        b.client
            .execute(&format!("{AXE}\n;return typeof window.axe;"), vec![])
            .await
            .unwrap();
    }
    let found = b
        .client
        .execute_async(
            "const done = arguments[arguments.length - 1]; \
             window.axe.run(document, { resultTypes: ['violations'] }).then((r) => done(r.violations.map((v) => \
               `${v.id} [${v.impact}]: ${v.help} on ${v.nodes.map((n) => n.target.join(' ')).join(', ')}`))) \
               .catch((e) => done([`axe failed: ${e}`]));",
            vec![],
        )
        .await
        .unwrap();
    serde_json::from_value(found).unwrap()
}

/// Collects the violations of each screen, printing them as they come; fails at the end.
#[derive(Default)]
pub(crate) struct Audit {
    failures: Vec<String>,
}

impl Audit {
    /// Runs axe-core on what `b` shows now, which the test calls `what`.
    pub(crate) async fn check(&mut self, b: &Browser, what: &str) {
        let found = axe_violations(b).await;
        println!("axe on {what}: {} violations", found.len());
        for v in &found {
            println!("  {v}");
            self.failures.push(format!("{what}: {v}"));
        }
    }

    /// Fails with every violation seen.
    pub(crate) fn assert_clean(self) {
        assert!(
            self.failures.is_empty(),
            "axe-core violations:\n{}",
            self.failures.join("\n")
        );
    }
}

/// A finished match's hand history, played by the engine (each seat takes its first legal
/// action), as a file of it would hold.
fn a_history() -> dhumbal_engine::HandHistory {
    use dhumbal_engine::{FairDeal, Game, Phase};
    let deal = FairDeal {
        seed: [7; 32],
        room: "ABCDE".into(),
        match_number: 1,
    };
    let mut game = Game::fair(Preset::Standard.settings(), deal, vec![None; 4]).unwrap();
    while !game.is_over() {
        if game.phase() == Phase::RoundOver {
            game.next_round().unwrap();
        } else {
            let seat = game.turn();
            let action = game.legal_actions(seat).remove(0);
            game.apply(seat, action).unwrap();
        }
    }
    let mut history = game.hand_history().unwrap();
    history.players = ["Asha", "Bina", "Chandra", "Dawa"]
        .map(String::from)
        .to_vec();
    history
}

/// Switches the page's language with the control in its header, and waits for it.
async fn switch_to(b: &Browser, lang: &str) {
    b.click(&format!("#lang-switch button[data-lang='{lang}']"))
        .await;
    b.until(
        "the language to switch",
        &format!("return document.documentElement.lang === '{lang}';"),
    )
    .await;
}

/// A two-round match of two people and two bots, host at `host_size` and the friend at
/// `guest_size`, in `lang`: axe-core on every screen they pass.
async fn no_violations(host_size: (u32, u32), guest_size: (u32, u32), lang: &str, label: &str) {
    let mut stage = stage!();
    let addr = stage.addr;
    let decks = vec![
        deck_dealing([LIGHT, ELEVEN, BOT3, BOT4], 0),
        deck_dealing([ELEVEN, LIGHT, BOT3, BOT4], 1),
    ];
    let room = room_with(&stage.server, standard(2), decks).await;
    let link = format!("http://{addr}{}", room.url);
    let asha = stage.browser(host_size).await;
    let bina = stage.browser(guest_size).await;
    let mut audit = Audit::default();

    // Home, folded and with its settings open.
    asha.open_home(addr).await;
    switch_to(&asha, lang).await;
    audit.check(&asha, "home").await;
    asha.click("#home-settings-toggle").await;
    audit.check(&asha, "home with its settings").await;

    // The lobby: the host's (with the settings form) and a friend's.
    asha.keep_host_secret(addr, &room, "Asha").await;
    asha.goto(&link).await;
    asha.wait_until("the lobby", |s| s.screen == "lobby").await;
    bina.open_home(addr).await;
    switch_to(&bina, lang).await;
    bina.open_join_form(&link).await;
    audit.check(&bina, "the join form").await;
    bina.join_as("Bina", "#join-sit").await;
    bina.wait_until("the lobby", |s| s.screen == "lobby").await;
    asha.until_text("#lobby-seats", "Bina").await;
    audit.check(&asha, "the host's lobby").await;
    audit.check(&bina, "a friend's lobby").await;

    // The table, on both pages, then with a card marked.
    asha.click("#start").await;
    for page in [&asha, &bina] {
        page.wait_until("the table", |s| s.screen == "table" && s.hand.len() == 5)
            .await;
    }
    asha.wait_until("the host's turn", |s| s.my_turn).await;
    audit.check(&asha, "the table (host, its turn)").await;
    audit.check(&bina, "the table (friend)").await;
    asha.tap("AS").await;
    audit.check(&asha, "the table with a card marked").await;
    asha.keys("\u{e00c}").await;
    // The table's menu and How to play, each a dialog over the table.
    open_table_menu(&asha).await;
    audit.check(&asha, "the table's menu").await;
    close_table_menu(&asha).await;
    asha.click("#open-rules").await;
    asha.until(
        "How to play",
        "return document.querySelector('#rules-dialog').open;",
    )
    .await;
    audit.check(&asha, "How to play").await;
    asha.click("#rules-close").await;

    // Round 1's score dialog; round 2; the match-over dialog.
    call_now(&asha).await;
    bina.wait_until("round 1's result", |s| s.score_open).await;
    audit.check(&asha, "the score dialog").await;
    for page in [&asha, &bina] {
        page.click("#next-round").await;
    }
    call_now(&bina).await;
    for page in [&asha, &bina] {
        page.wait_until("the match's end", |s| {
            s.score_open && s.phase == "match_over"
        })
        .await;
    }
    asha.until(
        "the ledger in the dialog",
        "return document.querySelectorAll('#score-dialog .ledger-table tr').length === 5;",
    )
    .await;
    audit.check(&asha, "the match-over dialog (host)").await;
    audit.check(&bina, "the match-over dialog (friend)").await;
    asha.screenshot(&format!("a11y-match-over-{label}")).await;

    // The Replay page, before a file and with a finished match's hand history from a file.
    bina.goto(&format!("http://{addr}/replay")).await;
    bina.find("#replay-file").await;
    audit.check(&bina, "the replay page before a file").await;
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("dhumbal-ABCDE-1.json");
    std::fs::write(&file, serde_json::to_string(&a_history()).unwrap()).unwrap();
    asha.goto(&format!("http://{addr}/replay")).await;
    asha.find("#replay-file")
        .await
        .send_keys(&file.display().to_string())
        .await
        .unwrap();
    asha.until(
        "the replay",
        "return !document.querySelector('#replay').hidden;",
    )
    .await;
    audit.check(&asha, "the replay page").await;
    for _ in 0..3 {
        asha.click("#replay-forward").await;
    }
    audit.check(&asha, "the replay page, stepped on").await;

    check_and_close(vec![asha, bina]).await;
    audit.assert_clean();
}

browser_tests!(no_violations {
    no_axe_violations_in_english_host_on_a_phone => (PHONE_640, LAPTOP, "en", "en-phone"),
    no_axe_violations_in_english_host_on_a_laptop => (LAPTOP, PHONE_640, "en", "en-laptop"),
    no_axe_violations_in_nepali_host_on_a_phone => (PHONE_640, LAPTOP, "ne", "ne-phone"),
    no_axe_violations_in_nepali_host_on_a_laptop => (LAPTOP, PHONE_640, "ne", "ne-laptop"),
});
