//! Table chat and reactions.

use crate::harness::*;

/// What the chat panel shows, as the person sees it (in one round trip).
const CHAT: &str = r#"
const q = (s) => document.querySelector(s);
const shown = (e) => Boolean(e) && !e.closest('[hidden]') && e.getClientRects().length > 0;
const badge = q('#chat-unread');
return {
  lines: shown(q('#chat-lines')) ? [...document.querySelectorAll('#chat-lines .chat-line')].map((l) => l.textContent) : [],
  kept: [...document.querySelectorAll('#chat-lines .chat-line')].map((l) => l.textContent),
  badge: shown(badge) ? badge.textContent : null,
  form: shown(q('#chat-form')),
  input_enabled: !q('#chat-input').disabled,
  muted_note: shown(q('#chat-muted')) ? q('#chat-muted').textContent : null,
  reactions: [...document.querySelectorAll('#reactions button')].filter(shown).length,
  elements_in_lines: document.querySelectorAll('#chat-lines .chat-text *, #chat img').length,
  small_controls: [...document.querySelectorAll('#chat button, #chat input')].filter(shown)
    .filter((e) => e.getBoundingClientRect().height < 44).map((e) => e.id || e.textContent),
};
"#;

/// The chat panel as the person sees it (see [`CHAT`]).
#[derive(Debug, Deserialize)]
struct ChatView {
    /// The lines shown (none while the panel is folded or the chat hidden).
    lines: Vec<String>,
    /// The lines the page holds, shown or not.
    kept: Vec<String>,
    badge: Option<String>,
    form: bool,
    input_enabled: bool,
    muted_note: Option<String>,
    reactions: usize,
    elements_in_lines: usize,
    small_controls: Vec<String>,
}

impl Browser {
    async fn chat(&self) -> ChatView {
        self.view(CHAT).await
    }

    async fn wait_chat(&self, what: &str, done: impl Fn(&ChatView) -> bool) -> ChatView {
        self.wait_view(what, CHAT, done).await
    }

    /// Types a line into the chat and presses Enter.
    async fn say(&self, text: &str) {
        self.type_into("#chat-input", text).await;
        self.find("#chat-input")
            .await
            .send_keys("\u{E007}")
            .await
            .unwrap();
    }

    /// Waits until `seat`'s place (`css`, with `{seat}` replaced) shows the reaction `emoji`.
    async fn wait_reaction(&self, css: &str, emoji: &str) {
        let script = format!(
            "const b = document.querySelector({:?}); return Boolean(b) && b.textContent === {:?};",
            format!("{css} .reaction-bubble"),
            emoji
        );
        self.until(&format!("{emoji} beside {css}"), &script).await;
    }
}

/// Fails if an element of `covered` (CSS selectors) overlaps the chat panel on the page.
async fn assert_chat_covers_nothing(b: &Browser, covered: &[&str]) {
    let overlaps = b
        .execute(
            "const c = document.querySelector('#chat').getBoundingClientRect(); \
             return arguments[0].filter((css) => [...document.querySelectorAll(css)].some((e) => { \
               const r = e.getBoundingClientRect(); \
               return r.width > 0 && r.left < c.right && c.left < r.right && r.top < c.bottom && c.top < r.bottom; }));",
            vec![json!(covered)],
        )
        .await
        .unwrap();
    assert_eq!(overlaps, json!([]), "the chat panel covers these");
}

#[cfg_attr(
    missing_chromium,
    ignore = "needs Chromium: apt-get install chromium chromium-driver"
)]
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_chat_line_with_markup_stays_text_a_reaction_shows_beside_its_seat_and_a_reload_keeps_the_chat()
 {
    let mut stage = stage!();
    let asha = stage.browser(PHONE).await;
    let bina = stage.browser(DESKTOP).await;
    let markup = "<b>hi</b> & <img src=x onerror=alert(1)>";

    two_in_a_room(&asha, &bina, stage.addr).await;
    start_and_deal(&[&asha, &bina]).await;

    // On the phone the chat folds to a bar and the reactions, below the hand and the actions;
    // on the desktop it is open beside the table. Every control is a thumb's height.
    let a = asha.chat().await;
    assert!(a.lines.is_empty() && !a.form && a.reactions == 6, "{a:#?}");
    assert!(a.small_controls.is_empty(), "{a:#?}");
    assert_chat_covers_nothing(&asha, &["#hand", "#hand .card", ".actions button", "#pile"]).await;
    asha.assert_fits_the_width("the table with the chat").await;
    let b = bina.chat().await;
    assert!(b.form && b.input_enabled && b.reactions == 6, "{b:#?}");
    assert!(b.small_controls.is_empty(), "{b:#?}");
    assert_chat_covers_nothing(&bina, &["#hand", ".actions button", "#pile", "#seats"]).await;

    // Bina says something with markup in it: both pages show it as text, no element made; the
    // folded panel on Asha's phone counts it.
    bina.say(markup).await;
    let line = format!("Bina: {markup}");
    let b = bina
        .wait_chat("Bina's own line", |c| c.lines.contains(&line))
        .await;
    assert_eq!(b.elements_in_lines, 0, "{b:#?}");
    assert_eq!(
        bina.eval("return document.querySelector('#chat-input').value;")
            .await,
        json!("")
    );
    asha.wait_chat("the unread count", |c| c.badge.as_deref() == Some("1"))
        .await;
    asha.click("#chat-toggle").await;
    let a = asha
        .wait_chat("Bina's line", |c| c.lines.contains(&line))
        .await;
    assert_eq!(a.elements_in_lines, 0, "{a:#?}");
    assert_eq!(a.badge, None, "{a:#?}");
    assert!(a.form && a.small_controls.is_empty(), "{a:#?}");
    assert_eq!(
        asha.eval("return document.querySelector('#chat-lines .chat-text').textContent;")
            .await,
        json!(markup)
    );
    assert_chat_covers_nothing(&asha, &["#hand .card", ".actions button"]).await;
    asha.assert_fits_the_width("the table with the chat open")
        .await;

    // A reaction shows beside the seat that sent it, on both pages, then goes.
    bina.click("#reactions button[data-reaction='laugh']").await;
    asha.wait_reaction("#seats .seat[data-seat='1']", "\u{1F602}")
        .await;
    bina.wait_reaction("#table > .mine[data-seat='1']", "\u{1F602}")
        .await;
    for page in [&asha, &bina] {
        assert_eq!(
            page.eval("return document.querySelectorAll('#chat .reaction-bubble, #hand .reaction-bubble').length;")
                .await,
            json!(0),
            "a bubble went into the chat or the hand"
        );
    }
    tokio::time::sleep(Duration::from_millis(400)).await;
    asha.screenshot("chat-table-phone").await;
    asha.click("#reactions button[data-reaction='fire']").await;
    bina.wait_reaction("#seats .seat[data-seat='0']", "\u{1F525}")
        .await;
    bina.screenshot("chat-table-desktop").await;
    asha.until(
        "the reaction to go",
        "return document.querySelector('#seats .reaction-bubble') === null;",
    )
    .await;

    // Asha answers; after a reload both lines are there again, from the welcome.
    asha.say("ha, hello Bina").await;
    bina.wait_chat("Asha's answer", |c| {
        c.lines.last().map(String::as_str) == Some("Asha: ha, hello Bina")
    })
    .await;
    asha.refresh().await;
    asha.wait_until("the table again", |s| {
        s.screen == "table" && s.hand.len() == 5
    })
    .await;
    let a = asha
        .wait_chat("the chat after the reload", |c| c.lines.len() == 2)
        .await;
    assert_eq!(
        a.lines,
        vec![line.clone(), "Asha: ha, hello Bina".to_owned()]
    );
    assert_eq!(a.elements_in_lines, 0, "{a:#?}");
    assert_eq!(a.badge, None, "{a:#?}");

    check_and_close(vec![asha, bina]).await;
}

#[cfg_attr(
    missing_chromium,
    ignore = "needs Chromium: apt-get install chromium chromium-driver"
)]
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn hide_chat_hides_every_line_a_muted_person_cannot_write_and_a_spectator_only_reacts() {
    let mut stage = stage!();
    let asha = stage.browser(DESKTOP).await;
    let bina = stage.browser(PHONE).await;

    let invite = two_in_a_room(&asha, &bina, stage.addr).await;

    // The lobby has the chat too: Bina's folded panel counts Asha's line.
    asha.say("welcome, Bina").await;
    bina.wait_chat("the unread count", |c| c.badge.as_deref() == Some("1"))
        .await;
    bina.assert_fits_the_width("the lobby with the chat").await;

    // Hide chat: no line, no count, no input; reactions still show; remembered on a reload.
    bina.click("#chat-hide").await;
    let b = bina
        .wait_chat("the chat hidden", |c| c.badge.is_none())
        .await;
    assert!(b.lines.is_empty() && !b.form && b.reactions == 6, "{b:#?}");
    bina.refresh().await;
    bina.wait_until("the lobby again", |s| s.screen == "lobby")
        .await;
    bina.wait_chat("the chat back from the welcome", |c| c.kept.len() == 1)
        .await;
    asha.say("are you there?").await;
    bina.wait_chat("the second line kept", |c| c.kept.len() == 2)
        .await;
    let b = bina.chat().await;
    assert!(b.lines.is_empty() && b.badge.is_none() && !b.form, "{b:#?}");
    assert!(bina.text("#chat").await.contains("Chat is hidden"));
    asha.click("#reactions button[data-reaction='wow']").await;
    bina.wait_reaction(".lobby-seat[data-seat='0']", "\u{1F62E}")
        .await;
    asha.wait_reaction(".lobby-seat[data-seat='0']", "\u{1F62E}")
        .await;
    bina.screenshot("chat-hidden-lobby-phone").await;
    bina.click("#chat-hide").await;
    bina.click("#chat-toggle").await;
    let b = bina
        .wait_chat("the chat shown again", |c| c.lines.len() == 2)
        .await;
    assert_eq!(b.lines, vec!["Asha: welcome, Bina", "Asha: are you there?"]);
    assert!(b.form && b.input_enabled && b.badge.is_none(), "{b:#?}");

    // The host mutes Bina in the lobby's seat list: her input is disabled and she is told why.
    asha.click(".lobby-seat[data-seat='1'] button.mute").await;
    let b = bina
        .wait_chat("Bina muted", |c| c.muted_note.is_some())
        .await;
    assert!(!b.input_enabled, "{b:#?}");
    assert!(
        b.muted_note.as_deref().unwrap().contains("muted you"),
        "{b:#?}"
    );
    asha.until(
        "the Unmute button",
        "const b = document.querySelector(\".lobby-seat[data-seat='1'] button.mute\"); return Boolean(b) && b.textContent === 'Unmute';",
    )
    .await;
    assert!(bina.text("#lobby-seats").await.contains("muted"));
    bina.screenshot("chat-muted-lobby-phone").await;

    // A third person watches: reads the chat and reacts, but has no input; a spectator's
    // reaction shows in the chat area.
    let chandra = stage.browser(PHONE).await;
    chandra
        .join_from_link(&invite, "Chandra", "#join-watch")
        .await;
    let c = chandra
        .wait_chat("the chat so far", |c| c.kept.len() == 2)
        .await;
    assert!(!c.form && c.reactions == 6, "{c:#?}");
    chandra.click("#chat-toggle").await;
    let c = chandra.wait_chat("the lines", |c| c.lines.len() == 2).await;
    assert!(!c.form && c.muted_note.is_none(), "{c:#?}");
    chandra
        .click("#reactions button[data-reaction='clap']")
        .await;
    asha.until(
        "Chandra's reaction in the chat",
        "return document.querySelector('#loose-reactions').textContent.includes('Chandra \u{1F44F}');",
    )
    .await;

    // At the table the host's chat panel has Unmute; Bina may write again.
    start_and_deal(&[&asha, &bina]).await;
    assert!(!bina.chat().await.input_enabled);
    assert!(asha.text("#seats").await.contains("muted"));
    assert_eq!(
        asha.text("#chat-moderation button[data-seat='1']").await,
        "Unmute Bina"
    );
    asha.click("#chat-moderation button[data-seat='1']").await;
    bina.wait_chat("Bina unmuted", |c| {
        c.input_enabled && c.muted_note.is_none()
    })
    .await;
    bina.say("thanks!").await;
    asha.wait_chat("Bina's line", |c| {
        c.lines.last().map(String::as_str) == Some("Bina: thanks!")
    })
    .await;
    assert_eq!(
        asha.text("#chat-moderation button[data-seat='1']").await,
        "Mute Bina"
    );
    asha.screenshot("chat-host-table-desktop").await;

    check_and_close(vec![asha, bina, chandra]).await;
}
