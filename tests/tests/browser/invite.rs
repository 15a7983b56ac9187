//! An invite that works across the room: a host who opened the game at
//! `127.0.0.1` shares a link to the host's Wi-Fi address (127.0.0.2 stands for it here: a
//! forwarder on `127.0.0.2:PORT` to the server, as the Wi-Fi interface would be), which a second
//! browser opens, sits and plays a turn from; `--public-url` makes the link the public one; the
//! QR code beside the link loads, and says the same link; Share shows only where the browser has
//! a share sheet, and sends the link; Copy says "Copied".

use crate::harness::*;

use tokio::net::{TcpListener, TcpStream};

/// A small phone, as the issue measures: 360×640.
const SMALL_PHONE: (u32, u32) = (360, 640);
/// A laptop, as the issue measures: 1280×800.
const LAPTOP: (u32, u32) = (1280, 800);

/// Run before the page's scripts: a share sheet (`navigator.share`) that records what it was
/// given in `window.__shared`, as a phone's browser has.
const SHARE_SHEET: &str = "window.__shared = []; \
    navigator.share = async (data) => { window.__shared.push(data); };";

/// Run before the page's scripts: a clipboard that keeps what was written in `window.__copied`
/// (a headless browser's own may refuse without a user's permission).
const CLIPBOARD: &str = "window.__copied = []; \
    Object.defineProperty(navigator, 'clipboard', { configurable: true, value: { \
      writeText: async (text) => { window.__copied.push(text); } } });";

/// Connections to `127.0.0.2:port` carried to the server, as the host's Wi-Fi address would
/// carry them; stops accepting when dropped.
struct WifiAddress(tokio::task::JoinHandle<()>);

impl WifiAddress {
    async fn forward_to(server: SocketAddr) -> WifiAddress {
        let listener = TcpListener::bind(("127.0.0.2", server.port()))
            .await
            .expect("bind 127.0.0.2 at the server's port");
        WifiAddress(tokio::spawn(async move {
            while let Ok((mut inbound, _)) = listener.accept().await {
                tokio::spawn(async move {
                    if let Ok(mut outbound) = TcpStream::connect(server).await {
                        let _ = tokio::io::copy_bidirectional(&mut inbound, &mut outbound).await;
                    }
                });
            }
        }))
    }
}

impl Drop for WifiAddress {
    fn drop(&mut self) {
        self.0.abort();
    }
}

/// `config` with bots that play without delay.
fn server_config(config: dhumbal_server::Config) -> dhumbal_server::Config {
    dhumbal_server::Config {
        bot_delay_ms: 0,
        ..config
    }
}

/// The lobby's invite link, once the page has the server's base for it.
async fn invite_becomes(b: &Browser, expected: &str) {
    b.wait_view::<String>(
        &format!("the invite link {expected}"),
        "return document.querySelector('#invite').value;",
        |v| v == expected,
    )
    .await;
}

/// Checks the QR code beside the invite link: loaded, on screen, within the width, and saying
/// the link the field shows (its SVG fetched by the page and read here).
async fn the_qr_code_says_the_link(b: &Browser, what: &str) {
    b.until(
        &format!("the QR code to load ({what})"),
        "const q = document.querySelector('#invite-qr'); \
         return q.complete && q.naturalWidth > 0 && q.checkVisibility();",
    )
    .await;
    let (box_, width): (Vec<f64>, f64) = b
        .view(
            "const r = document.querySelector('#invite-qr').getBoundingClientRect(); \
             return [[r.left, r.top, r.width, r.height], document.documentElement.clientWidth];",
        )
        .await;
    assert!(
        box_[0] >= 0.0 && box_[0] + box_[2] <= width && box_[2] >= 120.0,
        "{what}: the QR code's box {box_:?} in a width of {width}"
    );
    let svg: String = b
        .view("return fetch(document.querySelector('#invite-qr').src).then((r) => r.text());")
        .await;
    let field: String = b
        .view("return document.querySelector('#invite').value;")
        .await;
    assert_eq!(dhumbal_tests::qr::decode_svg(&svg), field, "{what}");
    b.assert_fits_the_width(what).await;
}

/// On this page's turn at a draw-then-throw table: draws from the stock and throws the heaviest
/// card it may, and waits for the throw to land.
async fn play_a_turn(b: &Browser) {
    b.wait_until("the page's turn", |s| s.my_turn && s.may_draw)
        .await;
    b.click("#stock").await;
    let drawn = b.wait_until("the draw", |s| s.may_throw).await;
    let card = heaviest(&drawn);
    b.tap(&card).await;
    b.click("#throw").await;
    b.wait_until("the throw to land", |s| {
        !s.my_turn && !s.hand.contains(&card)
    })
    .await;
}

/// The host opens the game at `127.0.0.1` on a phone; the lobby's link and QR code name the
/// Wi-Fi address; a friend on a laptop opens that link, sits, and both play a turn.
#[cfg_attr(
    missing_chromium,
    ignore = "needs Chromium: apt-get install chromium chromium-driver"
)]
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_friend_opens_the_wifi_link_sits_and_plays() {
    let mut stage = stage!(server_config(dhumbal_server::Config {
        lan_address: Some(std::net::Ipv4Addr::new(127, 0, 0, 2).into()),
        ..dhumbal_tests::server::unlimited_rate()
    }));
    let addr = stage.addr;
    let _wifi = WifiAddress::forward_to(addr).await;
    let asha = stage.browser(SMALL_PHONE).await;
    asha.before_each_page(CLIPBOARD).await;
    asha.open_home(addr).await;
    asha.type_into("#home-name", "Asha").await;
    asha.click("#create").await;
    asha.wait_until("the lobby", |s| s.screen == "lobby").await;
    let code: String = asha
        .view("return location.pathname.split('/').pop();")
        .await;
    let link = format!("http://127.0.0.2:{}/r/{code}", addr.port());
    invite_becomes(&asha, &link).await;
    the_qr_code_says_the_link(&asha, "the host's lobby on a phone").await;
    let share_hidden = asha
        .eval("return document.querySelector('#share').hidden && !document.querySelector('#share').checkVisibility();")
        .await;
    assert_eq!(share_hidden, json!(true), "no share sheet, no Share button");
    asha.click("#copy").await;
    asha.until_text("#copy", "Copied").await;
    assert_eq!(asha.eval("return window.__copied;").await, json!([link]));
    // What Copy did is said on the line under the link, where it covers nothing (a floating
    // notice covered the room's title on a phone).
    asha.until_text("#invite-status", "Link copied").await;
    let covered = asha
        .eval(
            "const r = (s) => document.querySelector(s).getBoundingClientRect();              const hit = (a, b) => a.left < b.right && b.left < a.right && a.top < b.bottom && b.top < a.bottom;              const status = r('#invite-status');              const over = ['#lobby-title', '#invite', '#copy', '#invite-qr'].filter((s) => hit(status, r(s)));              return { toast: document.querySelector('#toast').classList.contains('show'), over, inside: status.top >= 0 && status.bottom <= innerHeight };",
        )
        .await;
    assert_eq!(
        covered,
        json!({ "toast": false, "over": [], "inside": true }),
        "the copy notice covers nothing"
    );
    asha.screenshot("invite-lobby-phone-360x640").await;

    // The friend opens the shared link: the Wi-Fi address, not 127.0.0.1.
    let bina = stage.browser(LAPTOP).await;
    bina.join_from_link(&link, "Bina", "#join-sit").await;
    let origin: String = bina.view("return location.origin;").await;
    assert_eq!(origin, format!("http://127.0.0.2:{}", addr.port()));
    invite_becomes(&bina, &link).await;
    the_qr_code_says_the_link(&bina, "the friend's lobby on a laptop").await;
    bina.screenshot("invite-lobby-laptop-1280x800").await;
    asha.until_text("#lobby-seats", "Bina").await;

    // Both play a turn: Asha leads from seat 0, Bina follows in seat 1.
    let dealt = start_and_deal(&[&asha, &bina]).await;
    assert!(dealt[0].my_turn, "Asha, in seat 0, leads");
    play_a_turn(&asha).await;
    play_a_turn(&bina).await;
    check_and_close(vec![asha, bina]).await;
}

/// With `--public-url`, the link and the QR code are the public ones at both sizes; Share is
/// hidden where the browser has no share sheet, and where it has one shares the title and link.
async fn the_public_url_is_shared(size: (u32, u32), label: &str) {
    let mut stage = stage!(server_config(dhumbal_server::Config {
        public_url: Some(
            dhumbal_server::invite::parse_public_url("https://cards.example.org").unwrap()
        ),
        ..dhumbal_tests::server::unlimited_rate()
    }));
    let addr = stage.addr;
    let room = stage
        .server
        .create_room(&CreateRoom {
            settings: Some(Preset::Standard.settings()),
            ..CreateRoom::default()
        })
        .await;
    let link = format!("https://cards.example.org/r/{}", room.code);

    // A browser without a share sheet (desktop Chromium): no Share button.
    let plain = stage.browser(size).await;
    plain.host_room(addr, &room, "Asha").await;
    invite_becomes(&plain, &link).await;
    the_qr_code_says_the_link(&plain, label).await;
    let share = plain
        .eval("const s = document.querySelector('#share'); return [typeof navigator.share, s.hidden, s.checkVisibility()];")
        .await;
    assert_eq!(share, json!(["undefined", true, false]), "{label}");
    plain
        .screenshot(&format!("invite-public-url-{label}"))
        .await;

    // A browser with one (a phone's): Share is there, and sends the link.
    let phone = stage.browser(size).await;
    phone.before_each_page(SHARE_SHEET).await;
    phone
        .join_from_link(&format!("http://{addr}{}", room.url), "Bina", "#join-sit")
        .await;
    invite_becomes(&phone, &link).await;
    phone
        .until(
            "the Share button",
            "const s = document.querySelector('#share'); return !s.hidden && s.checkVisibility() && s.textContent === 'Share';",
        )
        .await;
    phone.click("#share").await;
    let shared = phone
        .wait_view::<Value>("the share sheet", "return window.__shared;", |v| {
            v.as_array().is_some_and(|a| !a.is_empty())
        })
        .await;
    assert_eq!(shared[0]["url"], json!(link), "{label}");
    assert_eq!(shared[0]["title"], json!("Dhumbal"), "{label}");
    phone.screenshot(&format!("invite-share-{label}")).await;
    check_and_close(vec![plain, phone]).await;
}

browser_tests!(the_public_url_is_shared {
    the_public_url_is_the_link_and_share_sends_it_on_a_phone => (SMALL_PHONE, "phone-360x640"),
    the_public_url_is_the_link_and_share_sends_it_on_a_laptop => (LAPTOP, "laptop-1280x800"),
});
