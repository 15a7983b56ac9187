//! Playing with friends: the turn timer (chosen in the settings form, counting down on the seat
//! whose turn it is), a turn that runs out and the stand-in bot that plays it, and the host's
//! powers during a match (hand a seat to a bot, remove a person, let them back). Each test has a
//! phone (360×740) and a laptop (1280×800) at the table.

use crate::harness::*;

/// A laptop's viewport.
const LAPTOP: (u32, u32) = (1280, 800);

/// A server whose bots take a moment (1.5 s a move), so that a stand-in's banner is seen while
/// it plays.
pub(crate) fn slow_bots() -> dhumbal_server::Config {
    dhumbal_server::Config {
        bot_delay_ms: 1500,
        allow_test_decks: true,
        ..dhumbal_tests::server::unlimited_rate()
    }
}

/// What the page shows of the turn's clock, the stand-in, the notices and the host's menu, in
/// one round trip.
pub(crate) const FRIENDS: &str = r#"
const q = (s) => document.querySelector(s);
const shown = (e) => Boolean(e) && !e.closest('[hidden]') && e.getClientRects().length > 0;
const clocks = [...document.querySelectorAll('.turn-clock')];
const clock = clocks[0] || null;
const where = (c) => c.parentElement.classList.contains('mine') ? 'mine' : `seat ${c.parentElement.dataset.seat}`;
const banner = q('#stand-in-banner');
const away = q('#while-away');
const toast = q('#toast');
return {
  clocks: clocks.map(where),
  seconds: clock ? Number(clock.dataset.seconds) : null,
  urgent: Boolean(clock && clock.classList.contains('urgent')),
  clock_label: clock ? clock.getAttribute('aria-label') : null,
  clock_text: clock ? clock.querySelector('.turn-clock-secs').textContent : null,
  banner: shown(banner) ? banner.querySelector('.stand-in-text').textContent : null,
  im_back: shown(q('#im-back')),
  while_away: shown(away) ? away.querySelector('.while-away-text').textContent : null,
  log: [...document.querySelectorAll('#log li')].map((l) => l.textContent),
  toast: toast.classList.contains('show') ? toast.textContent : null,
  stand_ins: [...document.querySelectorAll('#seats .seat.stand-in')].map((s) => Number(s.dataset.seat)),
  seats: [...document.querySelectorAll('#seats .seat')].map((s) => [Number(s.dataset.seat), s.textContent]),
  menu: shown(q('#seat-menu')) ? [...document.querySelectorAll('#seat-menu button')].map((b) => b.textContent) : null,
  menu_text: shown(q('#seat-menu')) ? q('#seat-menu').textContent : null,
  focused: document.activeElement ? (document.activeElement.dataset.action || document.activeElement.id || '') : '',
  small_controls: [...document.querySelectorAll('#seat-menu button, #dock button, #table-removed button')].filter(shown)
    .filter((e) => e.getBoundingClientRect().height < 44).map((e) => e.textContent),
  removed: shown(q('#table-removed')) ? q('#table-removed').textContent : null,
};
"#;

/// What [`FRIENDS`] reads.
#[derive(Debug, Deserialize)]
pub(crate) struct Friends {
    /// Where each clock is: `mine` (this page's own seat) or `seat N`.
    pub(crate) clocks: Vec<String>,
    pub(crate) seconds: Option<u64>,
    pub(crate) urgent: bool,
    pub(crate) clock_label: Option<String>,
    /// The seconds the clock shows, in words.
    pub(crate) clock_text: Option<String>,
    /// The stand-in banner's words, when it shows.
    pub(crate) banner: Option<String>,
    pub(crate) im_back: bool,
    /// The while-away summary's words, when it shows.
    pub(crate) while_away: Option<String>,
    pub(crate) log: Vec<String>,
    pub(crate) toast: Option<String>,
    /// The other seats a stand-in bot plays.
    pub(crate) stand_ins: Vec<usize>,
    pub(crate) seats: Vec<(usize, String)>,
    /// The host's menu's buttons, when it is open.
    pub(crate) menu: Option<Vec<String>>,
    pub(crate) menu_text: Option<String>,
    pub(crate) focused: String,
    pub(crate) small_controls: Vec<String>,
    pub(crate) removed: Option<String>,
}

impl Friends {
    pub(crate) fn logged(&self, line: &str) -> bool {
        self.log.iter().any(|l| l == line)
    }

    pub(crate) fn logged_start(&self, start: &str) -> bool {
        self.log.iter().any(|l| l.starts_with(start))
    }

    pub(crate) fn seat(&self, seat: usize) -> &str {
        self.seats
            .iter()
            .find(|(s, _)| *s == seat)
            .map(|(_, text)| text.as_str())
            .unwrap_or_default()
    }
}

impl Browser {
    pub(crate) async fn friends(&self) -> Friends {
        self.view(FRIENDS).await
    }

    pub(crate) async fn wait_friends(
        &self,
        what: &str,
        done: impl Fn(&Friends) -> bool,
    ) -> Friends {
        self.wait_view(what, FRIENDS, done).await
    }

    /// Waits for the banner that says a stand-in plays this page's seat (the clock gone).
    pub(crate) async fn wait_stand_in_banner(&self) -> Friends {
        self.wait_friends("the stand-in banner", |f| {
            f.banner.is_some() && f.clocks.is_empty()
        })
        .await
    }

    /// Waits for the summary of what the stand-in did, the seat back (no banner).
    pub(crate) async fn wait_while_away(&self) -> Friends {
        self.wait_friends("the while-away summary", |f| {
            f.while_away.is_some() && f.banner.is_none()
        })
        .await
    }
}

/// Takes every clock off the page for a moment and says what moved: nothing may (the clock's
/// room is kept whether it shows or not). Returns how many clocks there were and what moved.
const CLOCK_TAKES_NO_ROOM: &str = r#"
const places = ['#seats', '#pile', '#stock', '#hand', '#prompt', '#table > .mine', '#table .actions', '#log',
  ...[...document.querySelectorAll('#seats .seat')].map((s) => `#seats .seat[data-seat="${s.dataset.seat}"]`),
  ...[...document.querySelectorAll('#hand .card')].map((c) => `#hand .card[data-card="${c.dataset.card}"]`)];
const boxes = () => places.map((css) => {
  const r = document.querySelector(css).getBoundingClientRect();
  return `${css} ${r.left} ${r.top} ${r.width} ${r.height}`;
});
const before = boxes();
const clocks = [...document.querySelectorAll('.turn-clock')].map((c) => [c, c.parentElement, c.nextSibling]);
for (const [c] of clocks) c.remove();
const without = boxes();
for (const [c, parent, next] of clocks) parent.insertBefore(c, next);
return { clocks: clocks.length, moved: before.filter((b, i) => b !== without[i]) };
"#;

/// The animations of the clock's bar and of its seat (urgent), by name.
const CLOCK_MOTION: &str = "const c = document.querySelector('.turn-clock'); \
    return [getComputedStyle(c.querySelector('i')).animationName, getComputedStyle(c.parentElement).animationName];";

pub(crate) async fn assert_clock_takes_no_room(b: &Browser, what: &str) {
    let seen = b.eval(CLOCK_TAKES_NO_ROOM).await;
    assert_eq!(seen["clocks"], json!(1), "{what}: one clock");
    assert_eq!(seen["moved"], json!([]), "{what}: the clock moved these");
}

/// Plays this page's turn at a draw-then-throw table: the stock's top card, then the heaviest
/// card it may throw.
pub(crate) async fn play_a_turn(b: &Browser) {
    b.wait_until("the page's turn", |s| s.my_turn && s.may_draw)
        .await;
    b.click("#stock").await;
    let drawn = b.wait_until("the drawn card", |s| s.may_throw).await;
    let card = heaviest(&drawn);
    b.tap(&card).await;
    b.click("#throw").await;
    // (Bots without a delay may bring the turn round to this page again at once.)
    b.wait_until("the throw to land", |s| {
        !s.may_throw && !s.hand.contains(&card)
    })
    .await;
}

/// On the home page: unfolds the table's settings (as a person would, when they are folded).
pub(crate) async fn unfold_home_settings(b: &Browser) {
    b.find("#home-settings").await;
    b.eval(
        "const fold = document.querySelector('#home-settings').closest('details'); \
         if (fold && !fold.open) fold.querySelector('summary').click(); return null;",
    )
    .await;
}

/// In the settings form: a table of two with a 15-second turn timer.
pub(crate) async fn choose_two_seats_and_15_s(b: &Browser) {
    b.select("#set-players", "2").await;
    b.select("#set-turn-timer", "15").await;
}

/// Two people at a table with a 15-second turn timer, chosen in the settings form. The clock
/// counts down on the seat whose turn it is, on both pages, taking no room; it turns urgent in
/// the last five seconds. Asha (on a phone) lets it run out: she sees the banner, both hear of
/// it, the log names the bot that plays her turn ("A bot (for you)…", "A bot (for Asha)…"), and
/// once her seat is back she reads what the bot did. Bina's turn has its clock on the other
/// seat; after a reload Asha's log still names the bot.
#[cfg_attr(
    missing_chromium,
    ignore = "needs Chromium: apt-get install chromium chromium-driver"
)]
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_turn_that_runs_out_is_played_by_a_bot_the_log_names_with_a_countdown_on_both_pages() {
    // Bots that take a moment, so that the banner is seen while the stand-in plays.
    let mut stage = stage!(slow_bots());
    let addr = stage.addr;
    let asha = stage.browser(PHONE).await;
    let bina = stage.browser(LAPTOP).await;

    // The settings form: a turn timer, with its one-line explanation.
    asha.goto(&format!("http://{addr}/")).await;
    // The home page may fold its settings away: unfold them as a person would.
    unfold_home_settings(&asha).await;
    let options = asha
        .eval("return [...document.querySelectorAll('#set-turn-timer option')].map((o) => [o.value, o.textContent]);")
        .await;
    assert_eq!(
        options,
        json!([
            ["off", "Off (no limit)"],
            ["15", "15 s"],
            ["30", "30 s"],
            ["60", "60 s"],
            ["120", "2 min"]
        ])
    );
    assert_eq!(
        asha.eval("return document.querySelector('#set-turn-timer').value;")
            .await,
        json!("off"),
        "the standard table has no timer"
    );
    assert!(
        asha.text("#set-turn-timer-note")
            .await
            .contains("a bot plays that turn")
    );
    choose_two_seats_and_15_s(&asha).await;
    asha.assert_fits_the_width("the settings form").await;
    let invite = create_room_here(&asha, addr, "Asha").await;

    // In the lobby the host's form keeps it; Bina's summary and How to play say it.
    bina.join_from_link(&invite, "Bina", "#join-sit").await;
    assert_eq!(
        asha.eval("return document.querySelector('#lobby-settings #set-turn-timer').value;")
            .await,
        json!("15")
    );
    bina.until(
        "the timer in the summary",
        "return document.querySelector('#lobby-settings').textContent.includes('15 s a turn');",
    )
    .await;
    bina.click("#lobby-rules").await;
    bina.until(
        "the timer in How to play",
        "return [...document.querySelectorAll('#rules-box .rules-settings tr')].some((r) => \
           r.textContent.startsWith('Turn timer15 s a turn. When it runs out a bot plays that turn for you'));",
    )
    .await;
    bina.click("#rules-close").await;
    asha.until_text("#lobby-seats", "Bina").await;
    let dealt = start_and_deal(&[&asha, &bina]).await;
    assert!(dealt[0].my_turn, "Asha, in seat 0, leads");

    // The clock: on Asha's own seat on her page, on seat 0 on Bina's, counting down.
    let a = asha
        .wait_friends("Asha's clock", |f| f.clocks == ["mine"])
        .await;
    let left = a.seconds.unwrap();
    assert!((10..=15).contains(&left), "{a:#?}");
    assert!(!a.urgent, "{a:#?}");
    assert_eq!(
        a.clock_label.as_deref(),
        Some(format!("{left} seconds left").as_str())
    );
    let b = bina
        .wait_friends("Asha's clock on her seat", |f| f.clocks == ["seat 0"])
        .await;
    let left = b.seconds.unwrap();
    bina.wait_friends("the clock to tick", |f| f.seconds.is_some_and(|s| s < left))
        .await;
    assert_clock_takes_no_room(&asha, "Asha's page").await;
    assert_clock_takes_no_room(&bina, "Bina's page").await;
    asha.assert_fits_the_width("the table with the clock").await;
    asha.screenshot("friends-clock-phone").await;
    bina.screenshot("friends-clock-laptop").await;

    // The last five seconds are urgent, on both pages.
    let a = asha
        .wait_friends("the urgent clock", |f| {
            f.urgent && f.seconds.is_some_and(|s| s <= 5)
        })
        .await;
    assert!(a.seconds.unwrap() > 0, "{a:#?}");
    bina.wait_friends("the urgent clock", |f| f.urgent).await;
    assert_clock_takes_no_room(&asha, "Asha's urgent clock").await;
    asha.screenshot("friends-clock-urgent-phone").await;
    // The bar glides and the seat pulses; with reduced motion the bar steps by whole seconds and
    // nothing pulses.
    assert_eq!(
        bina.eval(CLOCK_MOTION).await,
        json!(["turn-clock-run", "clock-pulse"])
    );
    bina.reduce_motion().await;
    assert_eq!(bina.eval(CLOCK_MOTION).await, json!(["none", "none"]));
    bina.until(
        "the bar at its whole seconds",
        "const c = document.querySelector('.turn-clock'); \
         const shown = new DOMMatrix(getComputedStyle(c.querySelector('i')).transform).a; \
         return Math.abs(shown - Number(c.dataset.seconds) * 1000 / 15000) < 0.01;",
    )
    .await;

    // Time runs out: Asha's page says a bot plays this turn for her (no I'm back: the seat comes
    // back after it), and both pages say so in the log; Bina's shows the bot on Asha's seat.
    let a = asha.wait_stand_in_banner().await;
    assert_eq!(
        a.banner.as_deref(),
        Some("Your time ran out \u{2014} a bot is playing this turn for you.")
    );
    assert!(!a.im_back, "{a:#?}");
    assert!(
        a.clocks.is_empty(),
        "a stand-in's turn has no clock: {a:#?}"
    );
    assert!(
        a.logged("You ran out of time: a bot plays this turn for you."),
        "{a:#?}"
    );
    asha.assert_fits_the_width("the table with the banner")
        .await;
    asha.screenshot("friends-timed-out-phone").await;
    let b = bina
        .wait_friends("the notice and the bot on Asha's seat", |f| {
            f.logged("Asha ran out of time: a bot plays this turn.") && f.stand_ins == [0]
        })
        .await;
    assert!(
        b.seat(0).contains("out of time \u{b7} a bot plays"),
        "{b:#?}"
    );
    bina.screenshot("friends-timed-out-laptop").await;

    // The bot plays the turn and the logs name it.
    let a = asha
        .wait_friends("the stand-in's throw", |f| {
            f.logged_start("A bot (for you) threw ")
        })
        .await;
    assert!(
        a.logged("A bot (for you) drew from the stock.") || a.logged_start("A bot (for you) took "),
        "{a:#?}"
    );
    let b = bina
        .wait_friends("the stand-in's throw", |f| {
            f.logged_start("A bot (for Asha) threw ")
        })
        .await;
    assert!(!b.log.iter().any(|l| l.starts_with("Asha threw")), "{b:#?}");

    // Asha's seat is hers again, and she reads what the bot did for her.
    let a = asha.wait_while_away().await;
    let summary = a.while_away.clone().unwrap();
    assert!(
        summary.starts_with("A bot played 1 turn for you. It ") && summary.contains("threw "),
        "{summary}"
    );
    assert!(
        asha.text("#while-away h2")
            .await
            .contains("While you were away")
    );
    assert!(a.small_controls.is_empty(), "{a:#?}");
    asha.assert_fits_the_width("the table with the summary")
        .await;
    asha.screenshot("friends-while-away-phone").await;
    asha.click("#while-away-ok").await;
    asha.wait_friends("the summary to go", |f| f.while_away.is_none())
        .await;
    bina.wait_friends("Asha's seat back", |f| f.stand_ins.is_empty())
        .await;

    // Bina's turn: her clock is on her own seat, and on seat 1 on Asha's page. She plays.
    bina.wait_friends("Bina's clock", |f| f.clocks == ["mine"])
        .await;
    asha.wait_friends("Bina's clock on her seat", |f| f.clocks == ["seat 1"])
        .await;
    assert_clock_takes_no_room(&bina, "Bina's own clock").await;
    // The host's menu on that seat leaves its clock running.
    asha.click("#seats .seat[data-seat='1']").await;
    asha.wait_friends("the menu over a running clock", |f| {
        f.menu.is_some() && f.clocks == ["seat 1"]
    })
    .await;
    asha.click("#prompt").await;
    asha.wait_friends("the menu to close", |f| {
        f.menu.is_none() && f.clocks == ["seat 1"]
    })
    .await;
    play_a_turn(&bina).await;

    // After a reload Asha's log still names the bot (the history marks its moves).
    asha.refresh().await;
    asha.wait_until("the table again", |s| s.screen == "table" && s.my_turn)
        .await;
    let a = asha
        .wait_friends("the log after a reload", |f| {
            f.logged_start("A bot (for you) threw ")
        })
        .await;
    assert!(a.logged_start("Bina threw "), "{a:#?}");
    assert_eq!(a.clocks, ["mine"], "{a:#?}");

    check_and_close(vec![asha, bina]).await;
}

/// The host (on a laptop) hands Bina's seat to a bot from its menu, by keyboard: both hear of
/// it, Bina (on a phone) sees that she is marked away, the bot plays her turn (her log names it),
/// and she presses I'm back: the seat is hers again, with what the bot did.
#[cfg_attr(
    missing_chromium,
    ignore = "needs Chromium: apt-get install chromium chromium-driver"
)]
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_host_hands_a_seat_to_a_bot_and_the_person_comes_back() {
    let mut stage = stage!();
    let asha = stage.browser(LAPTOP).await;
    let bina = stage.browser(PHONE).await;

    two_in_a_room(&asha, &bina, stage.addr).await;
    start_and_deal(&[&asha, &bina]).await;
    // No turn timer at the standard table: no clock anywhere.
    assert!(asha.friends().await.clocks.is_empty());
    // Bina is no host: her seats open no menu.
    assert_eq!(
        bina.eval("return document.querySelectorAll('#seats .seat.has-menu, #seats .seat[role=\"button\"]').length;")
            .await,
        json!(0)
    );

    // Asha opens Bina's seat's menu from the keyboard: the first item has the focus.
    let seat = asha.find("#seats .seat[data-seat='1']").await;
    assert_eq!(
        asha.eval("return document.querySelector(\"#seats .seat[data-seat='1'] .seat-menu-name\").textContent;")
            .await,
        json!("Host actions for Bina:")
    );
    seat.send_keys("\u{E007}").await.unwrap();
    let a = asha
        .wait_friends("the host's menu", |f| f.menu.is_some())
        .await;
    assert_eq!(
        a.menu.as_deref(),
        Some(
            &[
                "Hand to a bot".to_owned(),
                "Remove from the room".to_owned()
            ][..]
        )
    );
    assert_eq!(a.focused, "hand");
    assert!(a.small_controls.is_empty(), "{a:#?}");
    // (The seat is drawn anew with its menu: find it again.)
    assert_eq!(
        asha.eval("return document.querySelector('#seats .seat[data-seat=\"1\"]').getAttribute('aria-expanded');")
            .await,
        json!("true")
    );
    asha.screenshot("friends-host-menu-laptop").await;
    // Escape closes it and gives the focus back to the seat; Enter opens it again.
    asha.press("\u{E00C}").await;
    let a = asha
        .wait_friends("the menu to close", |f| f.menu.is_none())
        .await;
    assert_eq!(
        asha.eval("return document.activeElement.dataset.seat || null;")
            .await,
        json!("1"),
        "{a:#?}"
    );
    asha.press("\u{E007}").await;
    asha.wait_friends("the menu again", |f| f.focused == "hand")
        .await;
    asha.press("\u{E007}").await;

    // Both hear of it; Bina is marked away and may say she is back.
    let b = bina
        .wait_friends("the away banner", |f| f.banner.is_some())
        .await;
    assert_eq!(
        b.banner.as_deref(),
        Some("You're marked away \u{2014} a bot is playing for you.")
    );
    assert!(b.im_back && b.small_controls.is_empty(), "{b:#?}");
    assert!(b.logged("The host handed your seat to a bot."), "{b:#?}");
    assert_eq!(
        b.toast.as_deref(),
        Some("The host handed your seat to a bot."),
        "{b:#?}"
    );
    bina.assert_fits_the_width("the table with the away banner")
        .await;
    bina.screenshot("friends-handed-phone").await;
    let a = asha
        .wait_friends("the notice and the bot on Bina's seat", |f| {
            f.logged("The host handed Bina's seat to a bot.") && f.stand_ins == [1]
        })
        .await;
    assert!(
        a.seat(1).contains("away \u{b7} a medium bot plays"),
        "{a:#?}"
    );
    assert!(a.menu.is_none(), "the menu closed: {a:#?}");
    // The menu of a seat a bot already plays says so.
    asha.click("#seats .seat[data-seat='1']").await;
    let a = asha
        .wait_friends("the menu of an away seat", |f| f.menu.is_some())
        .await;
    assert!(
        a.menu_text
            .as_deref()
            .unwrap()
            .contains("A bot is playing for Bina"),
        "{a:#?}"
    );
    assert_eq!(
        a.menu.as_deref(),
        Some(&["Remove from the room".to_owned()][..])
    );
    // A press elsewhere closes it.
    asha.click("#prompt").await;
    asha.wait_friends("the menu to close", |f| f.menu.is_none())
        .await;

    // Asha plays; the bot plays Bina's turn, and Bina's log names it.
    play_a_turn(&asha).await;
    bina.wait_friends("the stand-in's throw", |f| {
        f.logged_start("A bot (for you) threw ")
    })
    .await;
    asha.wait_until("Asha's turn again", |s| s.my_turn).await;
    let a = asha.friends().await;
    assert!(a.logged_start("A bot (for Bina) threw "), "{a:#?}");

    // Bina is back: the seat is hers again at once (the bot is not mid-turn), with a summary.
    bina.click("#im-back").await;
    let b = bina
        .wait_friends("the seat back", |f| {
            f.banner.is_none() && f.while_away.is_some()
        })
        .await;
    assert!(
        b.while_away
            .as_deref()
            .unwrap()
            .starts_with("A bot played 1 turn for you. It "),
        "{b:#?}"
    );
    assert!(b.logged("You're back in your seat."), "{b:#?}");
    bina.screenshot("friends-back-phone").await;
    asha.wait_friends("Bina back", |f| {
        f.logged("Bina is back.") && f.stand_ins.is_empty()
    })
    .await;

    check_and_close(vec![asha, bina]).await;
}

/// The host (on a phone) removes Bina mid-match, after a confirmation that says she can only
/// come back if the host lets her: Bina's page (a laptop) says why, the host hears of it and a
/// bot plays the seat, and the host's Let back works during the match.
#[cfg_attr(
    missing_chromium,
    ignore = "needs Chromium: apt-get install chromium chromium-driver"
)]
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_host_removes_a_person_mid_match_and_a_bot_plays_their_seat() {
    let mut stage = stage!();
    let asha = stage.browser(PHONE).await;
    let bina = stage.browser(LAPTOP).await;

    let invite = two_in_a_room(&asha, &bina, stage.addr).await;
    start_and_deal(&[&asha, &bina]).await;

    // A tap on Bina's seat opens the menu, under the seat and within the phone's width.
    asha.click("#seats .seat[data-seat='1']").await;
    let a = asha
        .wait_friends("the host's menu", |f| f.menu.is_some())
        .await;
    assert!(a.small_controls.is_empty(), "{a:#?}");
    asha.assert_fits_the_width("the table with the host's menu")
        .await;
    asha.click("#seat-menu button[data-action='remove']").await;
    let a = asha
        .wait_friends("the confirmation", |f| f.focused == "remove-yes")
        .await;
    assert!(
        a.menu_text.as_deref().unwrap().contains(
            "Remove Bina from the room? A bot plays their seat for the rest of the match, and they can only come back if you let them."
        ),
        "{a:#?}"
    );
    assert_eq!(
        a.menu.as_deref(),
        Some(&["Remove Bina".to_owned(), "Cancel".to_owned()][..])
    );
    asha.assert_fits_the_width("the confirmation").await;
    asha.screenshot("friends-remove-confirm-phone").await;
    // Cancel goes back to the menu; then remove for good.
    asha.click("#seat-menu button[data-action='cancel']").await;
    asha.wait_friends("the menu again", |f| f.focused == "remove")
        .await;
    asha.click("#seat-menu button[data-action='remove']").await;
    asha.click("#seat-menu button[data-action='remove-yes']")
        .await;

    // Bina's page says why.
    bina.wait_until("the removed page", |s| s.screen == "gone")
        .await;
    let code = code_of(&invite);
    assert_eq!(
        bina.text("#gone-title").await,
        format!("Removed from room {code}")
    );
    assert_eq!(
        bina.text("#gone-why").await,
        "The host removed you from this room. You can come back only if they let you."
    );
    bina.screenshot("friends-removed-laptop").await;

    // Asha hears of it, and a bot plays the seat.
    let a = asha
        .wait_friends("the notice and the bot", |f| {
            f.logged("The host removed Bina; a bot plays their seat.")
                && f.seat(1).contains("Bot 2")
        })
        .await;
    assert!(a.seat(1).contains("bot \u{b7} medium"), "{a:#?}");
    assert!(a.menu.is_none(), "{a:#?}");
    assert_eq!(
        asha.eval("return document.querySelectorAll('#seats .seat.has-menu').length;")
            .await,
        json!(0),
        "no person is left to act on"
    );
    // The host may let her back during the match.
    assert_eq!(a.removed.as_deref(), Some("Bina \u{b7} removedLet back"));
    assert!(a.small_controls.is_empty(), "{a:#?}");
    asha.screenshot("friends-removed-host-phone").await;
    asha.click("#table-removed button").await;
    asha.wait_friends("the list to go", |f| f.removed.is_none())
        .await;
    asha.assert_fits_the_width("the table after the removal")
        .await;

    check_and_close(vec![asha, bina]).await;
}

/// A spectator (a laptop) joins a table with a 15-second turn timer with Watch, and sees the
/// turn's clock on the seat whose turn it is, counting down and taking no room: Asha's (seat 0),
/// then, once she has played, Bina's (seat 1). The spectator has no clock of its own and no
/// host's menu.
#[cfg_attr(
    missing_chromium,
    ignore = "needs Chromium: apt-get install chromium chromium-driver"
)]
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_spectator_sees_the_countdown_on_the_seat_whose_turn_it_is() {
    let mut stage = stage!();
    let addr = stage.addr;
    let asha = stage.browser(PHONE).await;
    let bina = stage.browser(LAPTOP).await;
    let chandra = stage.browser(LAPTOP).await;

    asha.open_home(addr).await;
    unfold_home_settings(&asha).await;
    choose_two_seats_and_15_s(&asha).await;
    let invite = create_room_here(&asha, addr, "Asha").await;
    // Chandra watches (a seat is still free, so Watch is one of the join form's buttons).
    chandra
        .join_from_link(&invite, "Chandra", "#join-watch")
        .await;
    bina.join_from_link(&invite, "Bina", "#join-sit").await;
    asha.until_text("#lobby-seats", "Bina").await;
    start_and_deal(&[&asha, &bina]).await;
    let c = chandra
        .wait_until("the table", |s| s.screen == "table" && s.round == 1)
        .await;
    assert!(c.hand.is_empty() && c.status == "Watching", "{c:?}");

    // Asha's turn: the clock on seat 0 of the spectator's page, ticking.
    let c = chandra
        .wait_friends("Asha's clock on her seat", |f| f.clocks == ["seat 0"])
        .await;
    let left = c.seconds.unwrap();
    assert!((10..=15).contains(&left), "{c:#?}");
    assert_eq!(
        c.clock_label.as_deref(),
        Some(format!("{left} seconds left").as_str())
    );
    assert_eq!(c.clock_text.as_deref(), Some(format!("{left} s").as_str()));
    chandra
        .wait_friends("the clock to tick", |f| f.seconds.is_some_and(|s| s < left))
        .await;
    assert_clock_takes_no_room(&chandra, "the spectator's page").await;
    assert_eq!(
        chandra
            .eval("return document.querySelectorAll('#seats .seat.has-menu, #seat-menu').length;")
            .await,
        json!(0),
        "a spectator has no host's menu"
    );
    chandra
        .assert_fits_the_width("the table with the clock")
        .await;
    chandra.screenshot("friends-clock-spectator-laptop").await;

    // Asha plays: the clock moves to Bina's seat.
    play_a_turn(&asha).await;
    let c = chandra
        .wait_friends("Bina's clock on her seat", |f| f.clocks == ["seat 1"])
        .await;
    assert!(c.seconds.is_some_and(|s| (10..=15).contains(&s)), "{c:#?}");
    assert!(!c.urgent, "{c:#?}");
    assert_clock_takes_no_room(&chandra, "the spectator's page on Bina's turn").await;

    check_and_close(vec![asha, bina, chandra]).await;
}
