//! No axe-core violations (issue 31): axe-core (vendored in `vendor/axe.min.js`, MPL-2.0, its
//! LICENSE beside it) is injected into the page with WebDriver `execute`, never served by the
//! server and never needing the page's CSP loosened, and run on the home page (its settings
//! unfolded too), the join form, the host's and a friend's lobby, the table on a phone and a
//! laptop (its menu and How to play too), the score dialog after round 1, the match-over dialog
//! and the Replay page (before a file and stepping through one), in English and in Nepali.
//! Every violation is printed (its id, the elements it names and its help) and fails the test.
//! The English matches also check, from `ledger.rs`, the end of the match and the room's ledger,
//! and the replay page's controls, which need the same match and the same page.

use crate::hand_order::{LAPTOP, PHONE_640};
use crate::harness::*;
use crate::ledger::{
    no_ledger_before_a_match_has_ended,
    the_end_of_a_match_names_the_winner_and_the_room_keeps_a_ledger,
    the_replay_controls_never_cover_the_stock_or_the_pile,
};

/// axe-core itself, as published (`npm pack axe-core@4`).
const AXE: &str = include_str!("vendor/axe.min.js");

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
        b.execute(&format!("{AXE}\n;return typeof window.axe;"), vec![])
            .await
            .unwrap();
    }
    let found = b
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

/// A two-round match of two people and two bots ([`two_called_rounds`]), host at `host_size`
/// and the friend at `guest_size`, in `lang`: axe-core on every screen they pass; in English,
/// the end of the match and the room's ledger too.
async fn no_violations(host_size: (u32, u32), guest_size: (u32, u32), lang: &str, label: &str) {
    let mut stage = stage!();
    let addr = stage.addr;
    let room = room_with(&stage.server, standard(2), two_called_rounds()).await;
    let link = format!("http://{addr}{}", room.url);
    let asha = stage.browser(host_size).await;
    let bina = stage.browser(guest_size).await;
    let mut audit = Audit::default();

    // Home, folded and with its settings open.
    asha.open_home(addr).await;
    asha.switch_language(lang).await;
    audit.check(&asha, "home").await;
    asha.click("#home-settings-toggle").await;
    audit.check(&asha, "home with its settings").await;

    // The lobby: the host's (with the settings form) and a friend's.
    asha.keep_host_secret(addr, &room, "Asha").await;
    asha.goto(&link).await;
    asha.wait_until("the lobby", |s| s.screen == "lobby").await;
    bina.open_home(addr).await;
    bina.switch_language(lang).await;
    bina.open_join_form(&link).await;
    audit.check(&bina, "the join form").await;
    bina.join_as("Bina", "#join-sit").await;
    bina.wait_until("the lobby", |s| s.screen == "lobby").await;
    asha.until_text("#lobby-seats", "Bina").await;
    audit.check(&asha, "the host's lobby").await;
    audit.check(&bina, "a friend's lobby").await;
    no_ledger_before_a_match_has_ended(&asha).await;

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
    if lang == "en" {
        the_end_of_a_match_names_the_winner_and_the_room_keeps_a_ledger(&asha, &bina, label).await;
    }

    // The Replay page, before a file and with a finished match's hand history from a file.
    bina.goto(&format!("http://{addr}/replay")).await;
    bina.find("#replay-file").await;
    audit.check(&bina, "the replay page before a file").await;
    let (_dir, file) = a_hand_history_file();
    open_replay(&asha, addr, &file).await;
    audit.check(&asha, "the replay page").await;
    for _ in 0..3 {
        asha.click("#replay-forward").await;
    }
    audit.check(&asha, "the replay page, stepped on").await;
    if lang == "en" {
        the_replay_controls_never_cover_the_stock_or_the_pile(&asha, addr, &file, label).await;
    }

    check_and_close(vec![asha, bina]).await;
    audit.assert_clean();
}

browser_tests!(no_violations {
    no_axe_violations_in_english_host_on_a_phone => (PHONE_640, LAPTOP, "en", "en-phone"),
    no_axe_violations_in_english_host_on_a_laptop => (LAPTOP, PHONE_640, "en", "en-laptop"),
    no_axe_violations_in_nepali_host_on_a_phone => (PHONE_640, LAPTOP, "ne", "ne-phone"),
    no_axe_violations_in_nepali_host_on_a_laptop => (LAPTOP, PHONE_640, "ne", "ne-laptop"),
});
