//! Provably fair deals: known answers, verify after a match, the replay page.

use crate::harness::*;

/// The browser's own `fair.js` (WebCrypto's SHA-256 and HMAC, the page's ChaCha20, shuffle and
/// deal) gives every known-answer vector of `docs/fairness.md`.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_pages_fair_deal_code_gives_every_known_answer_of_the_fairness_document() {
    let mut stage = stage!();
    let b = stage.browser(DESKTOP).await;
    b.open_home(stage.addr).await;
    let got = b
        .client
        .execute_async(
            r#"const done = arguments[arguments.length - 1];
            import('/assets/fair.js').then(async (f) => {
              const hex = (from) => Array.from({ length: 32 }, (_, i) => (from + i).toString(16).padStart(2, '0')).join('');
              const seed = hex(0);
              const clientSeeds = ['aa'.repeat(32), null, hex(0x20), null];
              const deckSeed = await f.deckSeed(seed, 'ABCDE', 1, 1, clientSeeds);
              const deck = f.deck(deckSeed, false);
              const dealt = f.deal(deck, 3, [true, true, true, true], 5);
              done({
                commitment: await f.commitment(seed),
                roundSecret: await f.roundSecret(seed, 1),
                deckSeed,
                noClientSeeds: await f.deckSeed(seed, 'ABCDE', 1, 1, [null, null, null, null]),
                deck: deck.join(' '),
                stream1: f.shuffle(f.canonicalPack(false).slice(0, 10), deckSeed, 1).join(' '),
                hands: dealt.hands.map((h) => h.join(' ')),
                pileTop: dealt.pileTop,
                stockTop: dealt.stock[0],
                clientSeed: f.newClientSeed(),
              });
            }).catch((e) => done({ error: String(e) }));"#,
            vec![],
        )
        .await
        .unwrap();
    assert_eq!(got.get("error"), None, "{got}");
    let want = json!({
        "commitment": "9d83879b0754c1f08b649e645d31f5e5f71555e6cd455856f855d61852e9ee6e",
        "roundSecret": "3b8a05af592926633f8239e8ab2ad0b330cf127f655efce367ef240d00190c9d",
        "deckSeed": "97c9ddadfd8d0c4ee11e3c46047f5238c223117a7779f410ff5ad6a7e4a2c772",
        "noClientSeeds": "57c29e4300de057bca8c51e9ec2643860e34a62d8cfddbeddb643ba90deaa425",
        "deck": "AC 10S 7D 5C AD 6H 2S 3S 6S 4C 8S 3D KC 10H QC 7S 8D 2C 9H 10C JH 5S 5D 8H 9C 2D \
                 4H KS 3H 10D QH JS 4S 9S JC 6D JD 2H 9D KH 8C 6C AS KD AH 3C 4D QS 7C QD 7H 5H",
        "stream1": "9S 7S 5S 6S 10S 3S 2S AS 4S 8S",
        "hands": ["AC AD 6S KC 8D", "10S 6H 4C 10H 2C", "7D 2S 8S QC 9H", "5C 3S 3D 7S 10C"],
        "pileTop": "JH",
        "stockTop": "5S",
    });
    for (key, value) in want.as_object().unwrap() {
        assert_eq!(&got[key], value, "{key}");
    }
    let client_seed = got["clientSeed"].as_str().unwrap();
    assert!(
        client_seed.len() == 64
            && client_seed
                .bytes()
                .all(|b| b.is_ascii_digit() || (b'a'..=b'f').contains(&b)),
        "a client seed is 64 lowercase hex digits: {client_seed}"
    );
    check_and_close(vec![b]).await;
}

/// A finished match's hand history, played by the engine from the documented vector seed (each
/// seat takes its first legal action, as `engine/examples/sample_history.rs` does), with a name
/// written as markup.
fn sample_history() -> dhumbal_engine::HandHistory {
    use dhumbal_engine::{FairDeal, Game, Hex32, Phase};
    let deal = FairDeal {
        seed: std::array::from_fn(|i| i as u8),
        room: "ABCDE".into(),
        match_number: 1,
    };
    let seeds = vec![Some(Hex32([0xaa; 32])), None, None, None];
    let mut game = Game::fair(Preset::Standard.settings(), deal, seeds).unwrap();
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
    history.players = ["Asha", "<b>Bikash</b>", "Chandra", "Dawa"]
        .map(String::from)
        .to_vec();
    history
}

/// What the replay page shows, read in one round trip.
const REPLAY_SNAPSHOT: &str = r#"
const r = document.querySelector('#replay');
return {
  shown: !r.hidden,
  frame: Number(r.dataset.frame || -1),
  frames: Number(r.dataset.frames || 0),
  round: Number(r.dataset.round || 0),
  hands: [...document.querySelectorAll('#replay-seats .replay-seat')].map((s) =>
    [...s.querySelectorAll('.replay-hand .card')].map((c) => c.classList.contains('face') ? c.dataset.card : 'back')),
  names: [...document.querySelectorAll('#replay-seats .seat-name')].map((n) => n.textContent),
  bold: document.querySelectorAll('#replay-seats .seat-name b').length,
  line: document.querySelector('#replay-line').textContent,
  stock: document.querySelector('#replay-stock').textContent,
  pile: [...document.querySelectorAll('#replay-pile .card')].map((c) => c.dataset.card),
  check: document.querySelector('#replay-check').textContent,
  scores: document.querySelectorAll('#replay-scores tr').length,
};
"#;

/// The replay page opens a hand history from a file on a phone, steps forwards and backwards by
/// button and by arrow key and by round, every hand face up, and checks the deals itself.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_replay_page_steps_through_a_history_file_on_a_phone_every_hand_face_up() {
    let mut stage = stage!();
    let addr = stage.addr;
    let history = sample_history();
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("dhumbal-ABCDE-1.json");
    std::fs::write(&file, serde_json::to_string_pretty(&history).unwrap()).unwrap();

    let b = stage.browser(PHONE).await;
    b.goto(&format!("http://{addr}/replay")).await;
    assert_eq!(
        b.client.title().await.unwrap(),
        "Dhumbal replay",
        "the replay page is served at /replay"
    );
    b.assert_fits_the_width("the replay page before a file")
        .await;
    b.find("#replay-file")
        .await
        .send_keys(&file.display().to_string())
        .await
        .unwrap();
    let snapshot = || async { b.eval(REPLAY_SNAPSHOT).await };
    let s = poll("the replay to load", snapshot, |s| {
        s["shown"] == json!(true) && s["check"].as_str().unwrap().contains("check out")
    })
    .await;
    assert_eq!(s["check"], "All 3 deals check out.", "{s}");
    let steps: usize = history.rounds.iter().map(|r| r.steps.len() + 2).sum();
    assert_eq!(
        s["frames"],
        json!(steps),
        "a deal, every step and a show per round"
    );
    assert_eq!(s["frame"], 0);
    let dealt: Vec<Vec<String>> = history.rounds[0]
        .hands
        .iter()
        .map(|h| h.iter().map(|c| c.to_string()).collect())
        .collect();
    assert_eq!(s["hands"], json!(dealt), "every hand face up as dealt: {s}");
    assert_eq!(s["bold"], 0, "a name written as markup is shown as text");
    assert!(
        s["names"][1].as_str().unwrap().contains("<b>Bikash</b>"),
        "{s}"
    );
    assert_eq!(s["pile"], json!([history.rounds[0].pile_top.to_string()]));
    let stock = 52 - 4 * 5 - 1;
    assert_eq!(s["stock"], format!("Stock \u{b7} {stock}"));
    b.assert_fits_the_width("the replay page").await;
    let heights = b
        .eval("return [...document.querySelectorAll('.replay-controls button')].map((e) => e.getBoundingClientRect().height);")
        .await;
    for h in heights.as_array().unwrap() {
        assert!(
            h.as_f64().unwrap() >= 44.0,
            "a button under 44 px: {heights}"
        );
    }
    b.screenshot("replay-phone").await;

    // Forward: the first player draws from the stock, and the line says who and what.
    let first = &history.rounds[0].steps[0];
    let drawn = first.card.unwrap().to_string();
    b.click("#replay-forward").await;
    let s = snapshot().await;
    assert_eq!(s["frame"], 1);
    let mover = &history.players[first.seat];
    assert!(
        s["line"].as_str().unwrap().starts_with(mover.as_str())
            && s["line"].as_str().unwrap().contains("from the stock"),
        "{s}"
    );
    assert_eq!(s["hands"][first.seat].as_array().unwrap().len(), 6, "{s}");
    assert!(
        s["hands"][first.seat]
            .as_array()
            .unwrap()
            .contains(&json!(drawn))
    );
    assert_eq!(s["stock"], format!("Stock \u{b7} {}", stock - 1));
    // Forward again (the throw), then back twice with the arrow key: the deal again.
    b.click("#replay-forward").await;
    let s = snapshot().await;
    assert_eq!(s["frame"], 2);
    assert_eq!(s["hands"][first.seat].as_array().unwrap().len(), 5, "{s}");
    b.keys("\u{e012}\u{e012}").await; // ArrowLeft twice
    let s = snapshot().await;
    assert_eq!(s["frame"], 0);
    assert_eq!(s["hands"], json!(dealt));
    b.keys("\u{e014}").await; // ArrowRight
    assert_eq!(snapshot().await["frame"], 1);

    // By round: the next round's deal, with round 1's scores.
    b.click("#replay-next-round").await;
    let s = snapshot().await;
    assert_eq!(s["round"], 2, "{s}");
    assert_eq!(s["scores"], 2, "a header and round 1's totals: {s}");
    let dealt2: Vec<Vec<String>> = history.rounds[1]
        .hands
        .iter()
        .map(|h| h.iter().map(|c| c.to_string()).collect())
        .collect();
    assert_eq!(s["hands"], json!(dealt2));
    b.click("#replay-prev-round").await;
    assert_eq!(snapshot().await["round"], 1);
    // The end: the last show, every round's totals.
    b.keys("\u{e010}").await; // End
    let s = snapshot().await;
    assert_eq!(s["frame"], json!(steps - 1));
    assert_eq!(s["scores"], 4, "{s}");
    assert!(
        s["line"].as_str().unwrap().starts_with("Round 3 over."),
        "{s}"
    );
    let shown: Vec<Vec<String>> = history.rounds[2]
        .result
        .as_ref()
        .unwrap()
        .hands
        .iter()
        .map(|h| h.iter().map(|c| c.to_string()).collect())
        .collect();
    let mut have: Vec<Vec<String>> = serde_json::from_value(s["hands"].clone()).unwrap();
    let mut want = shown;
    for h in have.iter_mut().chain(want.iter_mut()) {
        h.sort();
    }
    assert_eq!(have, want, "the hands at the end are the show's");
    b.assert_fits_the_width("the replay page at the end").await;
    b.screenshot("replay-phone-end").await;
    check_and_close(vec![b]).await;
}

/// Runs the server binary's `verify` subcommand on a hand history file: its exit status's
/// success and what it printed.
fn verify_file(file: &Path) -> (bool, String) {
    let out = Command::new(env!("CARGO_BIN_EXE_server-under-test"))
        .arg("verify")
        .arg(file)
        .output()
        .expect("the server binary runs");
    (
        out.status.success(),
        String::from_utf8_lossy(&out.stdout).into_owned(),
    )
}

/// Clicks "Verify the deals" and waits for the page's verdict: its class and its text.
async fn verdict(b: &Browser) -> Value {
    b.click("#verify").await;
    let read = async || {
        b.eval("const v = document.querySelector('#verify-result'); return [v.className, v.textContent];")
            .await
    };
    poll("the verdict", read, |v| {
        !v[0].as_str().unwrap().contains("checking") && !v[1].as_str().unwrap().is_empty()
    })
    .await
}

/// A whole one-round match against three bots from a fair deal, watched by a friend: the table
/// shows the commitment from the first deal; after the match, Verify the deals checks every deal
/// in the player's page and in the spectator's (with the revealed seed) and says so; the hand history downloaded with the seat's token passes `dhumbal-server verify` and,
/// with one card changed, fails it (and the page's own check); Replay opens it from the server.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn after_a_fair_match_the_page_verifies_every_deal_and_the_cli_agrees() {
    let mut stage = stage!();
    let addr = stage.addr;
    let settings = Settings {
        rounds: Rounds::Fixed(1),
        ..Preset::Standard.settings()
    };
    let room = stage
        .server
        .create_room(&CreateRoom {
            settings: Some(settings),
            ..CreateRoom::default()
        })
        .await;
    let b = stage.browser(PHONE).await;
    b.host_room(addr, &room, "Asha").await;
    // A friend watches: after the match, the revealed seed lets them verify too.
    let watcher = stage.browser(DESKTOP).await;
    let link = format!("http://{addr}{}", room.url);
    watcher.join_from_link(&link, "Wangmo", "#join-watch").await;
    b.click("#start").await;
    b.wait_until("the table", |s| s.screen == "table" && s.round == 1)
        .await;
    // The commitment, shown at the table from the first deal.
    let shown = b
        .eval("const c = document.querySelector('#commitment'); return [c.hidden, c.textContent, c.dataset.commitment, c.title];")
        .await;
    let commitment = shown[2].as_str().unwrap_or_default().to_owned();
    assert_eq!(shown[0], false, "{shown}");
    assert_eq!(commitment.len(), 64, "{shown}");
    assert_eq!(
        shown[1],
        format!(
            "Deal commitment {}\u{2026}{}",
            &commitment[..4],
            &commitment[60..]
        )
    );
    assert!(shown[3].as_str().unwrap().contains(&commitment), "{shown}");
    b.assert_fits_the_width("the table with its commitment")
        .await;
    let seat = own_seat(&b).await;

    // Play the round: call when allowed, else draw from the stock and throw the heaviest card.
    play_to_the_score(&b, CALL_AT_ONCE).await;
    assert_eq!(b.text("#score-title").await, "Match over");

    // Verify the deals, in the page; and in the spectator's, with the revealed seed.
    assert_eq!(
        verdict(&b).await,
        json!(["verdict ok", "The deal checks out."])
    );
    watcher
        .wait_until("the spectator's match over", |s| s.score_open)
        .await;
    assert_eq!(
        verdict(&watcher).await,
        json!(["verdict ok", "The deal checks out."])
    );
    b.assert_fits_the_width("the match-over dialog").await;
    b.screenshot("verified-phone").await;
    b.click("#download-history").await;
    let replay = b
        .find("#replay-link")
        .await
        .attr("href")
        .await
        .unwrap()
        .unwrap_or_default();
    assert_eq!(replay, format!("/replay#{}/1", room.code));

    // The hand history, as the endpoint gives it to this seat.
    let token = stored_token(&b, &room.code).await;
    let text = b
        .client
        .execute_async(
            "const done = arguments[arguments.length - 1]; \
             fetch(`/api/rooms/${arguments[0]}/matches/1/history`, \
               { headers: { authorization: `Bearer ${arguments[1]}` } }) \
             .then((r) => r.text()).then(done, (e) => done(String(e)));",
            vec![json!(room.code), token],
        )
        .await
        .unwrap();
    let text = text.as_str().unwrap().to_owned();
    let mut history: Value = serde_json::from_str(&text).unwrap_or_else(|_| panic!("{text}"));
    assert_eq!(history["commitment"], json!(commitment));
    assert_eq!(history["players"][seat], "Asha");
    assert_eq!(history["rounds"].as_array().unwrap().len(), 1);
    assert!(
        history["rounds"][0]["client_seeds"][seat].is_string(),
        "the page's own client seed was used for its seat: {}",
        history["rounds"][0]["client_seeds"]
    );
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join(format!("dhumbal-{}-1.json", room.code));
    std::fs::write(&file, &text).unwrap();
    let (ok, out) = tokio::task::block_in_place(|| verify_file(&file));
    assert!(ok && out.contains("checks out"), "verify failed: {out}");

    // One card changed: the command line and the page both say it does not check out.
    let deck = history["rounds"][0]["deck"].as_array_mut().unwrap();
    deck.swap(0, 1);
    let tampered = dir.path().join("tampered.json");
    std::fs::write(&tampered, serde_json::to_string(&history).unwrap()).unwrap();
    let (ok, out) = tokio::task::block_in_place(|| verify_file(&tampered));
    assert!(!ok, "a changed card passed verify: {out}");
    assert!(out.contains("MISMATCH"), "{out}");
    let page = b
        .client
        .execute_async(
            "const done = arguments[arguments.length - 1]; \
             import('/assets/fair.js').then((f) => f.verifyHistory(arguments[0], null)) \
             .then((v) => done([v.ok, v.summary]), (e) => done([null, String(e)]));",
            vec![history.clone()],
        )
        .await
        .unwrap();
    assert_eq!(page[0], false, "{page}");
    assert!(
        page[1]
            .as_str()
            .unwrap()
            .starts_with("Round 1 does not check out: its deck is not the one"),
        "{page}"
    );
    b.assert_no_console_errors().await;

    // Replay: from the server, with the seat's token this browser keeps.
    b.goto(&format!("http://{addr}{replay}")).await;
    let s = poll(
        "the replay to load",
        async || b.eval(REPLAY_SNAPSHOT).await,
        |s| s["shown"] == json!(true) && s["check"] == "The deal checks out.",
    )
    .await;
    assert_eq!(s["hands"][seat].as_array().unwrap().len(), 5, "{s}");
    assert!(
        b.text("#replay-source")
            .await
            .starts_with("From the server")
    );
    check_and_close(vec![b]).await;
}
