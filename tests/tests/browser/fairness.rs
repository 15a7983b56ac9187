//! Provably fair deals: known answers, verify after a match, the replay page.

use crate::harness::*;

/// The browser's own `fair.js` (WebCrypto's SHA-256 and HMAC, the page's ChaCha20, shuffle and
/// deal) gives every known-answer vector of `docs/fairness.md`.
#[cfg_attr(
    missing_chromium,
    ignore = "needs Chromium: apt-get install chromium chromium-driver"
)]
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_pages_fair_deal_code_gives_every_known_answer_of_the_fairness_document() {
    let mut stage = stage!();
    let b = stage.browser(DESKTOP).await;
    b.open_home(stage.addr).await;
    let got = b
        .execute_async(
            &versioned(r#"const done = arguments[arguments.length - 1];
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
            }).catch((e) => done({ error: String(e) }));"#),
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
#[cfg_attr(
    missing_chromium,
    ignore = "needs Chromium: apt-get install chromium chromium-driver"
)]
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
        b.title().await,
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
#[cfg_attr(
    missing_chromium,
    ignore = "needs Chromium: apt-get install chromium chromium-driver"
)]
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
    // The match's heading says who won it.
    let title = b.text("#score-title").await;
    assert!(
        title.contains("win") || title.contains("share first place"),
        "{title}"
    );

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
        .execute_async(
            &versioned(
                "const done = arguments[arguments.length - 1]; \
             import('/assets/fair.js').then((f) => f.verifyHistory(arguments[0], null)) \
             .then((v) => done([v.ok, v.summary]), (e) => done([null, String(e)]));",
            ),
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

/// A match played from the vector seed where nobody calls (every seat draws from the stock and
/// throws its first legal group), so the stock runs out and is reshuffled: every round is
/// played to the throw cap. Its client seeds: `seat0` for seat 0, none for the others.
fn reshuffling_history(seat0: Option<dhumbal_engine::Hex32>) -> dhumbal_engine::HandHistory {
    use dhumbal_engine::{Action, FairDeal, Game, Phase, Source};
    let deal = FairDeal {
        seed: std::array::from_fn(|i| i as u8),
        room: "ABCDE".into(),
        match_number: 1,
    };
    let settings = Settings {
        rounds: Rounds::Fixed(2),
        ..Preset::Standard.settings()
    };
    let mut game = Game::fair(settings, deal, vec![seat0, None, None, None]).unwrap();
    while !game.is_over() {
        if game.phase() == Phase::RoundOver {
            game.set_client_seeds(vec![seat0, None, None, None]);
            game.next_round().unwrap();
        } else {
            let seat = game.turn();
            let legal = game.legal_actions(seat);
            let action = legal
                .iter()
                .find(|a| {
                    matches!(
                        a,
                        Action::Draw {
                            from: Source::Stock
                        }
                    )
                })
                .or_else(|| legal.iter().find(|a| matches!(a, Action::Throw { .. })))
                .unwrap_or(&legal[0])
                .clone();
            game.apply(seat, action).unwrap();
        }
    }
    game.hand_history().unwrap()
}

/// Runs the page's own verifier (`fair.js`'s `verifyHistory`) on each history, with nothing
/// seen: each one's `[ok, summary]`. A history with a `repeat` of `n` has its first round copied
/// to make `n` rounds first (in the page, to keep the request small).
async fn page_verdicts(b: &Browser, histories: Vec<Value>) -> Vec<Value> {
    let got = b
        .execute_async(
            &versioned("const done = arguments[arguments.length - 1]; \
             import('/assets/fair.js').then(async (f) => { \
               const out = []; \
               for (const h of arguments[0]) { \
                 if (h.repeat) { h.rounds = Array.from({ length: h.repeat }, () => h.rounds[0]); delete h.repeat; } \
                 const v = await f.verifyHistory(h, null); out.push([v.ok, v.summary]); } \
               done(out); \
             }).catch((e) => done([[null, String(e)]]));"),
            vec![Value::Array(histories)],
        )
        .await
        .unwrap();
    got.as_array().unwrap().clone()
}

/// Forged hand histories that follow the deck seeds card for card but break the match's shape
/// are refused by the page's verifier, as by the engine's: one round copied many times (the same
/// round number again and again), a dealer who did not move on as the rules say, a reshuffle
/// that left more of the pile on top than the table's rule keeps, and one more round than the
/// match has. The honest record checks out.
#[cfg_attr(
    missing_chromium,
    ignore = "needs Chromium: apt-get install chromium chromium-driver"
)]
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_pages_verifier_refuses_repeated_rounds_a_wrong_dealer_and_a_reshuffle_keeping_too_much()
 {
    use dhumbal_engine::{Card, Event, shuffle::shuffle};
    let mut stage = stage!();
    let b = stage.browser(DESKTOP).await;
    b.open_home(stage.addr).await;
    let honest = reshuffling_history(None);
    assert!(dhumbal_engine::verify(&honest).is_ok());

    // 1. Round 1 copied 3,000 times (a table of one fixed round, so no count gives it away).
    let mut repeated = honest.clone();
    repeated.settings.rounds = Rounds::Fixed(3000);
    repeated.rounds.truncate(1);
    let mut repeated = serde_json::to_value(repeated).unwrap();
    repeated["repeat"] = json!(3000);

    // 2. Round 2 dealt by the same seat as round 1 (its deal, from that dealer, is consistent;
    // the round stops before play).
    let mut wrong_dealer = honest.clone();
    {
        let r1 = wrong_dealer.rounds[0].dealer;
        let r2 = &mut wrong_dealer.rounds[1];
        r2.dealer = r1;
        let mut hands = vec![Vec::new(); 4];
        let mut at = 0;
        for _ in 0..5 {
            for k in 1..=4 {
                hands[(r1 + k) % 4].push(r2.deck[at]);
                at += 1;
            }
        }
        r2.hands = hands;
        r2.pile_top = r2.deck[at];
        r2.steps.clear();
        r2.result = None;
    }
    assert!(dhumbal_engine::verify(&wrong_dealer).rounds[1].is_err());

    // 3. The first reshuffle shuffles one card fewer, which stays on the pile under its top;
    // the round stops at that draw, whose card is the top of that smaller stock.
    let mut kept_too_much = honest.clone();
    {
        let (r, k) = kept_too_much
            .rounds
            .iter()
            .enumerate()
            .find_map(|(r, round)| {
                round
                    .steps
                    .iter()
                    .position(|s| s.reshuffled.is_some())
                    .map(|k| (r, k))
            })
            .expect("a reshuffle in a match nobody calls");
        let round = &mut kept_too_much.rounds[r];
        let step = &mut round.steps[k];
        let mut cards: Vec<Card> = step.reshuffled.clone().unwrap();
        cards.remove(0);
        step.reshuffled = Some(cards.clone());
        let seed = round.deck_seed.unwrap().0;
        shuffle(&mut cards, &seed, 1);
        step.card = Some(*cards.last().unwrap());
        for e in &mut step.events {
            if let Event::Reshuffled { stock } = e {
                *stock = cards.len();
            }
        }
        round.steps.truncate(k + 1);
        round.result = None;
        kept_too_much.rounds.truncate(r + 1);
    }
    assert!(!dhumbal_engine::verify(&kept_too_much).is_ok());

    // 4. One round more than the match has: round 2 again, numbered 3.
    let mut extra = honest.clone();
    let mut third = extra.rounds[1].clone();
    third.round = 3;
    extra.rounds.push(third);

    let mut histories = [&honest, &wrong_dealer, &kept_too_much, &extra]
        .map(|h| serde_json::to_value(h).unwrap())
        .to_vec();
    histories.insert(1, repeated);
    let verdicts = page_verdicts(&b, histories).await;
    assert_eq!(
        verdicts[0],
        json!([true, "All 2 deals check out."]),
        "{verdicts:?}"
    );
    let said = |i: usize| verdicts[i][1].as_str().unwrap_or_default().to_owned();
    assert_eq!(verdicts[1][0], false, "{}", said(1));
    assert!(
        said(1).starts_with("Round 1 does not check out: it is numbered 1 where round 2 should be"),
        "{}",
        said(1)
    );
    assert_eq!(verdicts[2][0], false, "{}", said(2));
    assert!(
        said(2).contains("Round 2 does not check out: its dealer is seat"),
        "{}",
        said(2)
    );
    assert_eq!(verdicts[3][0], false, "{}", said(3));
    assert!(
        said(3).contains("the reshuffle left cards on the pile that the table's rule shuffles in"),
        "{}",
        said(3)
    );
    assert_eq!(verdicts[4][0], false, "{}", said(4));
    assert!(
        said(4).starts_with(
            "Round 3 does not check out: the record has 3 rounds, but the match has 2"
        ),
        "{}",
        said(4)
    );
    check_and_close(vec![b]).await;
}

/// A ground match: a dishonest server dealt this seat with a seed other than the latest one the
/// page sent after it was shown the match's commitment and the server acknowledged. The page's
/// memory is made as the page makes it: a `hello` seed answering the commitment it remembered
/// (which the room no longer showed), then the match's commitment, then two seeds sent and
/// acknowledged. Dealt with the hello seed, the first acknowledged seed, or none, the page
/// refuses the match and says why; dealt with the latest acknowledged seed, it checks out.
#[cfg_attr(
    missing_chromium,
    ignore = "needs Chromium: apt-get install chromium chromium-driver"
)]
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_page_refuses_a_deal_whose_seed_is_not_its_latest_acknowledged_one() {
    use dhumbal_engine::{FairDeal, Game, Hex32, Phase};
    let mut stage = stage!();
    let b = stage.browser(DESKTOP).await;
    b.open_home(stage.addr).await;
    let committed = dhumbal_engine::fair::commitment(&std::array::from_fn(|i| i as u8));
    let seeds = b
        .execute_async(
            &versioned("const done = arguments[arguments.length - 1]; \
             import('/assets/fair.js').then((f) => { \
               const m = new f.Memory('GROUND'); \
               m.sawCommitment(1, 'ab'.repeat(32)); \
               const hello = m.helloSeed(); \
               m.newConnection(); \
               m.sawCommitment(1, arguments[0]); \
               const first = m.freshSeed(arguments[0]); m.taken(first.commitment, first.seed); \
               const latest = m.freshSeed(arguments[0]); m.taken(latest.commitment, latest.seed); \
               m.sawDeal(1, { round: 1 }); \
               done([hello.seed, hello.commitment, first.seed, latest.seed, f.isHex32(hello.seed)]); \
             }).catch((e) => done([String(e)]));"),
            vec![json!(committed.to_string())],
        )
        .await
        .unwrap();
    assert_eq!(seeds[4], true, "{seeds}");
    assert_eq!(
        seeds[1],
        "ab".repeat(32),
        "the hello seed answers what the page remembered"
    );
    let seed_of = |i: usize| -> Option<Hex32> { Some(seeds[i].as_str().unwrap().parse().unwrap()) };
    // A one-round match from the vector seed, dealing seat 0 with `seat0`.
    let history = |seat0: Option<Hex32>| {
        let deal = FairDeal {
            seed: std::array::from_fn(|i| i as u8),
            room: "ABCDE".into(),
            match_number: 1,
        };
        let settings = Settings {
            rounds: Rounds::Fixed(1),
            ..Preset::Standard.settings()
        };
        let mut game = Game::fair(settings, deal, vec![seat0, None, None, None]).unwrap();
        while game.phase() != Phase::MatchOver {
            let seat = game.turn();
            let action = game.legal_actions(seat).remove(0);
            game.apply(seat, action).unwrap();
        }
        serde_json::to_value(game.hand_history().unwrap()).unwrap()
    };
    let cases = [seed_of(0), seed_of(2), None, seed_of(3)];
    let mut verdicts = Vec::new();
    for seat0 in cases {
        let got = b
            .execute_async(
                &versioned("const done = arguments[arguments.length - 1]; \
                 import('/assets/fair.js').then(async (f) => { \
                   const v = await f.verifyHistory(arguments[0], new f.Memory('GROUND').seen(1, 0)); \
                   done([v.ok, v.summary]); \
                 }).catch((e) => done([null, String(e)]));"),
                vec![history(seat0)],
            )
            .await
            .unwrap();
        verdicts.push(got);
    }
    let short = |i: usize| {
        let s = seeds[i].as_str().unwrap();
        format!("{}\u{2026}{}", &s[..4], &s[60..])
    };
    for (i, want) in [(0, short(0)), (1, short(2)), (2, "none".to_owned())] {
        assert_eq!(verdicts[i][0], false, "case {i}: {}", verdicts[i]);
        assert_eq!(
            verdicts[i][1],
            format!(
                "Round 1 does not check out: your seat's client seed is {want}, not {}, the latest \
                 one this page sent after it was shown the commitment and the server acknowledged \
                 before this deal.",
                short(3)
            ),
            "case {i}"
        );
    }
    assert_eq!(verdicts[3], json!([true, "The deal checks out."]));
    check_and_close(vec![b]).await;
}

/// An honest match of two rounds, with the page reloaded in the middle of round 1 (its `hello`
/// then carries a seed for the commitment it remembered, acknowledged after the history) and
/// `Next` between rounds (a fresh seed first): the page verifies every deal against its own
/// record, and each deal carried for its seat a seed this page sent after seeing the commitment.
#[cfg_attr(
    missing_chromium,
    ignore = "needs Chromium: apt-get install chromium chromium-driver"
)]
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_match_with_a_reload_and_a_second_round_verifies_against_the_pages_own_record() {
    let mut stage = stage!();
    let addr = stage.addr;
    let room = stage
        .server
        .create_room(&CreateRoom {
            settings: Some(standard(2)),
            ..CreateRoom::default()
        })
        .await;
    let b = stage.browser(DESKTOP).await;
    b.host_room(addr, &room, "Asha").await;
    b.click("#start").await;
    b.wait_until("the table", |s| s.screen == "table" && s.round == 1)
        .await;
    b.refresh().await;
    b.wait_until("the table again", |s| s.screen == "table" && s.round == 1)
        .await;
    play_to_the_score(&b, CALL_AT_ONCE).await;
    b.click("#next-round").await;
    b.wait_until("round 2", |s| !s.score_open && s.round == 2)
        .await;
    play_to_the_score(&b, CALL_AT_ONCE).await;
    // The match's heading says who won it.
    let title = b.text("#score-title").await;
    assert!(
        title.contains("win") || title.contains("share first place"),
        "{title}"
    );
    assert_eq!(
        verdict(&b).await,
        json!(["verdict ok", "All 2 deals check out."])
    );
    // Each deal carried a seed of this page's for its seat, answering the match's commitment.
    let record = b
        .eval(&format!(
            "return JSON.parse(sessionStorage.getItem('dhumbal.fair.{}'));",
            room.code
        ))
        .await;
    let commitment = record["matches"]["1"]["commitment"]
        .as_str()
        .unwrap()
        .to_owned();
    let taken: Vec<String> = record["seeds"][commitment.as_str()]
        .as_array()
        .unwrap()
        .iter()
        .filter(|s| s["state"] == "taken")
        .map(|s| s["seed"].as_str().unwrap().to_owned())
        .collect();
    for round in ["1", "2"] {
        let allowed = record["matches"]["1"]["allowed"][round]["seed"]
            .as_str()
            .unwrap_or_else(|| panic!("no seed for round {round}: {record}"));
        assert!(taken.iter().any(|s| s == allowed), "{record}");
    }
    check_and_close(vec![b]).await;
}
