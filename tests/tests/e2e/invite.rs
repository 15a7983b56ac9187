//! Invite links that reach a friend's phone: `GET /api/invite-base` and a room's QR code at
//! `GET /r/{code}/qr.svg`, whose SVG is decoded here (rebuilt as a picture from its path and
//! read with `rqrr`) to the link it stands for; and the server binary's startup line and its
//! refusal of a bad `--public-url`.

use std::net::{IpAddr, Ipv4Addr, SocketAddr};

use dhumbal_protocol::{ApiError, InviteBase, codes};
use dhumbal_server::Config;
use dhumbal_server::invite::parse_public_url;
use dhumbal_tests::TestServer;
use dhumbal_tests::http::exchange;
use dhumbal_tests::process::ServerProcess;
use dhumbal_tests::server::unlimited_rate;
use tokio::io::{AsyncReadExt, AsyncWriteExt};

use crate::common::{room_with, standard_for};

/// The binary the tests start (`tests/src/bin/server-under-test.rs`).
const SERVER: &str = env!("CARGO_BIN_EXE_server-under-test");

/// One `GET path` with this `Host` from `127.0.0.1`: the status, the `Content-Type` and the body.
async fn get_as(addr: SocketAddr, path: &str, host: &str, extra: &str) -> (u16, String, String) {
    let mut stream = tokio::net::TcpStream::connect(addr).await.unwrap();
    let request =
        format!("GET {path} HTTP/1.1\r\nHost: {host}\r\n{extra}Connection: close\r\n\r\n");
    stream.write_all(request.as_bytes()).await.unwrap();
    let mut answer = Vec::new();
    let read = stream.read_to_end(&mut answer);
    tokio::time::timeout(dhumbal_tests::PATIENCE, read)
        .await
        .expect("an answer in time")
        .unwrap();
    let answer = String::from_utf8(answer).unwrap();
    let (head, body) = answer.split_once("\r\n\r\n").expect("a head and a body");
    let status = head.split(' ').nth(1).unwrap().parse().unwrap();
    let content_type = head
        .lines()
        .find_map(|l| {
            let (name, value) = l.split_once(':')?;
            name.eq_ignore_ascii_case("content-type")
                .then(|| value.trim().to_owned())
        })
        .unwrap_or_default();
    assert!(
        !head
            .to_ascii_lowercase()
            .contains("transfer-encoding: chunked"),
        "a sized body: {head}"
    );
    (status, content_type, body.to_owned())
}

/// What the QR code the server drew for room `code` says, asked for with this `Host`.
async fn qr_says(addr: SocketAddr, code: &str, host: &str, extra: &str) -> String {
    let (status, content_type, svg) = get_as(addr, &format!("/r/{code}/qr.svg"), host, extra).await;
    assert_eq!(status, 200, "{svg}");
    assert_eq!(content_type, "image/svg+xml");
    dhumbal_tests::qr::decode_svg(&svg)
}

#[tokio::test]
async fn the_qr_code_says_the_rooms_link_on_the_hosts_wifi_address() {
    // 127.0.0.2 stands for the host's address on the Wi-Fi.
    let server = TestServer::with_config(Config {
        lan_address: Some(IpAddr::V4(Ipv4Addr::new(127, 0, 0, 2))),
        ..unlimited_rate()
    })
    .await;
    let addr = server.addr;
    let port = addr.port();
    let room = server.create_room(&room_with(standard_for(4))).await;
    let code = &room.code;
    // A page opened on this machine's loopback: the Wi-Fi address, in the link and the code.
    let wifi = format!("http://127.0.0.2:{port}");
    for host in [format!("127.0.0.1:{port}"), format!("localhost:{port}")] {
        assert_eq!(
            qr_says(addr, code, &host, "").await,
            format!("{wifi}/r/{code}")
        );
        let (status, _, body) = get_as(addr, "/api/invite-base", &host, "").await;
        assert_eq!(status, 200, "{body}");
        let base: InviteBase = serde_json::from_str(&body).unwrap();
        assert_eq!(base.base.as_deref(), Some(wifi.as_str()), "{host}");
    }
    // A lower-case code draws the room's own code.
    assert_eq!(
        qr_says(addr, &code.to_lowercase(), &format!("127.0.0.1:{port}"), "").await,
        format!("{wifi}/r/{code}")
    );
    // A page opened on any other host: its own origin, and the page is told to keep it.
    assert_eq!(
        qr_says(addr, code, "dhumbal.test:8080", "").await,
        format!("http://dhumbal.test:8080/r/{code}")
    );
    let (_, _, body) = get_as(addr, "/api/invite-base", "dhumbal.test:8080", "").await;
    assert_eq!(body, r#"{"base":null}"#);
    server.stop().await;
}

#[tokio::test]
async fn without_a_wifi_address_the_link_is_the_pages_own_and_a_public_url_wins() {
    let server = TestServer::start().await;
    let addr = server.addr;
    let room = server.create_room(&room_with(standard_for(4))).await;
    let code = &room.code;
    let own = format!("http://{addr}/r/{code}");
    assert_eq!(qr_says(addr, code, &addr.to_string(), "").await, own);
    let (_, _, body) = get_as(addr, "/api/invite-base", &addr.to_string(), "").await;
    assert_eq!(body, r#"{"base":null}"#);
    server.stop().await;

    // Behind a proxy on the internet: `--public-url`, whatever host the request names.
    let server = TestServer::with_config(Config {
        public_url: Some(parse_public_url("https://cards.example.org/").unwrap()),
        lan_address: Some(IpAddr::V4(Ipv4Addr::new(127, 0, 0, 2))),
        ..unlimited_rate()
    })
    .await;
    let addr = server.addr;
    let room = server.create_room(&room_with(standard_for(4))).await;
    let code = &room.code;
    for host in [addr.to_string(), "dhumbal.test".to_owned()] {
        assert_eq!(
            qr_says(addr, code, &host, "").await,
            format!("https://cards.example.org/r/{code}")
        );
        let (_, _, body) = get_as(addr, "/api/invite-base", &host, "").await;
        assert_eq!(body, r#"{"base":"https://cards.example.org"}"#);
    }
    server.stop().await;

    // A trusted proxy without `--public-url`: the host and scheme it names.
    let server = TestServer::with_config(Config {
        trusted_proxies: "127.0.0.1".parse().unwrap(),
        ..unlimited_rate()
    })
    .await;
    let addr = server.addr;
    let room = server.create_room(&room_with(standard_for(4))).await;
    let forwarded = "X-Forwarded-Host: cards.example.org\r\nX-Forwarded-Proto: https\r\n";
    assert_eq!(
        qr_says(addr, &room.code, "backend:8080", forwarded).await,
        format!("https://cards.example.org/r/{}", room.code)
    );
    server.stop().await;
}

#[tokio::test]
async fn a_qr_code_of_no_room_is_unknown_room_and_counts_as_a_failed_lookup() {
    let server = TestServer::with_config(Config {
        max_join_attempts: 3,
        ..unlimited_rate()
    })
    .await;
    let addr = server.addr;
    let room = server.create_room(&room_with(standard_for(4))).await;
    let host = addr.to_string();
    // From 127.0.0.2 (a guesser): a code of no room, a malformed one, and one too long.
    let guesser: IpAddr = Ipv4Addr::new(127, 0, 0, 2).into();
    for path in [
        "/r/ZZZZZZZZZ2/qr.svg".to_owned(),
        "/r/not%20a%20code!/qr.svg".to_owned(),
        format!("/r/{}/qr.svg", "A".repeat(300)),
    ] {
        let (status, body) = exchange(guesser, addr, "GET", &path, &[("host", &host)], "")
            .await
            .unwrap();
        assert_eq!(status, 404, "{path}: {body}");
        let error: ApiError = serde_json::from_str(&body).unwrap();
        assert_eq!(error.code, codes::UNKNOWN_ROOM, "{path}");
    }
    // Three failures: every lookup from that address is refused now, even of the real room, as
    // `GET /api/rooms/{code}` is; so the QR code is no way round the lookup cap.
    let real = format!("/r/{}/qr.svg", room.code);
    for path in [real.clone(), format!("/api/rooms/{}", room.code)] {
        let (status, body) = exchange(guesser, addr, "GET", &path, &[], "")
            .await
            .unwrap();
        assert_eq!(status, 429, "{path}: {body}");
        let error: ApiError = serde_json::from_str(&body).unwrap();
        assert_eq!(error.code, codes::TOO_MANY_ATTEMPTS);
    }
    // The lookups of unknown rooms by `GET /api/rooms/{code}` count towards the QR code's too.
    let other: IpAddr = Ipv4Addr::new(127, 0, 0, 3).into();
    for _ in 0..3 {
        let (status, _) = exchange(other, addr, "GET", "/api/rooms/ZZZZZZZZZ2", &[], "")
            .await
            .unwrap();
        assert_eq!(status, 404);
    }
    let (status, _) = exchange(other, addr, "GET", &real, &[], "").await.unwrap();
    assert_eq!(status, 429);
    // Anyone else still gets the room's QR code.
    assert_eq!(
        qr_says(addr, &room.code, &host, "").await,
        format!("http://{host}/r/{}", room.code)
    );
    server.stop().await;
}

#[test]
fn the_binary_prints_the_address_for_friends_and_refuses_a_bad_public_url() {
    let server = ServerProcess::start(SERVER, &["--store", "memory", "--lan-address", "127.0.0.2"]);
    let line = server.log_line("friends on the same Wi-Fi open");
    assert_eq!(
        line["fields"]["url"],
        format!("http://127.0.0.2:{}", server.addr.port())
    );
    drop(server);
    let server = ServerProcess::start(
        SERVER,
        &[
            "--store",
            "memory",
            "--public-url",
            "https://cards.example.org",
        ],
    );
    let line = server.log_line("invite links point to");
    assert_eq!(line["fields"]["url"], "https://cards.example.org");
    drop(server);

    for bad in [
        "https://cards.example.org/play",
        "cards.example.org",
        "ftp://x.example",
    ] {
        let out = std::process::Command::new(SERVER)
            .args([
                "--addr",
                "127.0.0.1:0",
                "--store",
                "memory",
                "--public-url",
                bad,
            ])
            .output()
            .expect("the server binary runs");
        assert!(!out.status.success(), "{bad} was taken");
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert!(
            stderr.contains("--public-url") && stderr.contains("is not a public URL"),
            "{bad}: {stderr}"
        );
    }
}
