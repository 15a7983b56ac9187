//! Watchers as the pages see them: the host's list of who watches, Remove and Let back, and the
//! "Allow watchers" switch; the watcher's page says why it was sent away, and the room's link
//! offers no way to watch while watching is off.

use crate::harness::*;

/// Waits until the host's page lists a watcher named `name` (or, `false`, lists none so named).
async fn wait_watcher(b: &Browser, name: &str, listed: bool) {
    let script = format!(
        "return Boolean(document.querySelector('#lobby-watchers li[data-watcher-name=\"{name}\"]')) === {listed};"
    );
    b.until(&format!("{name} listed: {listed}"), &script).await;
}

/// The host (on a phone) removes a watcher, who is told so and cannot come straight back; Let
/// back lets them watch again; then the host turns watching off, and the watcher's page says so
/// while both pages show that watching is off.
#[cfg_attr(
    missing_chromium,
    ignore = "needs Chromium: apt-get install chromium chromium-driver"
)]
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_host_removes_a_watcher_and_turns_watching_off() {
    let mut stage = stage!();
    let asha = stage.browser(PHONE).await;
    let dev = stage.browser(DESKTOP).await;
    let invite = create_room(&asha, stage.addr, "Asha").await;
    let code = code_of(&invite);
    asha.until_text(
        "#lobby-watchers .watchers-state",
        "Anyone with the link may watch.",
    )
    .await;

    dev.join_from_link(&invite, "Dev", "#join-watch").await;
    wait_watcher(&asha, "Dev", true).await;
    dev.until_text(
        "#lobby-watchers .watchers-state",
        "Anyone with the link may watch.",
    )
    .await;
    // Only the host has the controls.
    let dev_controls = dev
        .eval("return document.querySelectorAll('#lobby-watchers button, #lobby-watchers input').length;")
        .await;
    assert_eq!(dev_controls, json!(0));
    asha.assert_fits_the_width("the lobby with a watcher").await;
    let remove = asha
        .find("#lobby-watchers li[data-watcher-name='Dev'] button[data-remove-watcher]")
        .await;
    assert_eq!(
        remove.attr("aria-label").await.unwrap().as_deref(),
        Some("Remove Dev from watching")
    );
    remove.click().await.unwrap();

    // Dev's page says why; the host's lists Dev among the removed watchers.
    dev.wait_until("the removed page", |s| s.screen == "gone")
        .await;
    assert_eq!(
        dev.text("#gone-title").await,
        format!("Removed from room {code}")
    );
    wait_watcher(&asha, "Dev", false).await;
    asha.until_text(
        "#lobby-watchers .watchers-removed li .who",
        "Dev \u{b7} removed from watching",
    )
    .await;
    // Coming straight back is refused.
    dev.open_join_form(&invite).await;
    dev.join_as("Dev", "#join-watch").await;
    dev.wait_until("the removed page again", |s| s.screen == "gone")
        .await;
    assert_eq!(
        dev.text("#gone-why").await,
        "The host removed you from this room. You can come back only if they let you."
    );

    // Let back: Dev watches again.
    asha.click("#lobby-watchers button[data-readmit-watcher='0']")
        .await;
    asha.until(
        "no removed watchers",
        "return !document.querySelector('#lobby-watchers .watchers-removed');",
    )
    .await;
    dev.join_from_link(&invite, "Dev", "#join-watch").await;
    wait_watcher(&asha, "Dev", true).await;

    // Watching off: Dev's page says so, and the host's page shows it.
    asha.click("#lobby-watchers input[data-watching]").await;
    dev.wait_until("the watching-off page", |s| s.screen == "gone")
        .await;
    assert_eq!(
        dev.text("#gone-title").await,
        format!("Not watching room {code}")
    );
    assert_eq!(
        dev.text("#gone-why").await,
        "The host has turned watching off for this room."
    );
    asha.until_text(
        "#lobby-watchers .watchers-state",
        "The host has turned watching off.",
    )
    .await;
    wait_watcher(&asha, "Dev", false).await;
    let checked = asha
        .eval("return document.querySelector('#lobby-watchers input[data-watching]').checked;")
        .await;
    assert_eq!(checked, json!(false));
    // The room's link offers no way to watch while it is off, and says why.
    dev.open_join_form(&invite).await;
    dev.until_text("#join-info", "The host has turned watching off.")
        .await;
    let offered = dev
        .eval("return ['#join-watch', '#join-full'].filter((s) => !document.querySelector(s).hidden);")
        .await;
    assert_eq!(offered, json!([]));
    asha.screenshot("watchers-off-phone").await;
    asha.assert_no_console_errors().await;
    dev.close().await;
    asha.close().await;
}
