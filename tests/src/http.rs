//! A small HTTP/1.1 client, enough for the server's JSON API.

use std::net::{IpAddr, Ipv4Addr, SocketAddr};

use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpSocket;

/// Sends one request (`Connection: close`) and returns the status and the body.
pub async fn request(addr: SocketAddr, method: &str, path: &str, body: &str) -> (u16, String) {
    request_from(Ipv4Addr::LOCALHOST.into(), addr, method, path, body).await
}

/// Sends one request from the loopback address `from` (any of `127.0.0.0/8`) and returns the
/// status and the body.
pub async fn request_from(
    from: IpAddr,
    addr: SocketAddr,
    method: &str,
    path: &str,
    body: &str,
) -> (u16, String) {
    request_with(from, addr, method, path, &[], body).await
}

/// `GET path` with these extra headers (`("Authorization", "Bearer …")`).
pub async fn get_with(addr: SocketAddr, path: &str, headers: &[(&str, &str)]) -> (u16, String) {
    request_with(Ipv4Addr::LOCALHOST.into(), addr, "GET", path, headers, "").await
}

/// Sends one request with extra headers from the loopback address `from`, and returns the
/// status and the body.
async fn request_with(
    from: IpAddr,
    addr: SocketAddr,
    method: &str,
    path: &str,
    headers: &[(&str, &str)],
    body: &str,
) -> (u16, String) {
    let extra: String = headers
        .iter()
        .map(|(name, value)| format!("{name}: {value}\r\n"))
        .collect();
    let exchange = async {
        let socket = TcpSocket::new_v4().expect("a socket");
        socket
            .bind(SocketAddr::new(from, 0))
            .expect("bind a loopback address");
        let mut stream = socket.connect(addr).await.expect("connect to the server");
        let head = format!(
            "{method} {path} HTTP/1.1\r\nHost: {addr}\r\nContent-Type: application/json\r\n\
             {extra}Content-Length: {}\r\nConnection: close\r\n\r\n",
            body.len()
        );
        stream.write_all(head.as_bytes()).await.expect("send");
        stream.write_all(body.as_bytes()).await.expect("send");
        let mut answer = Vec::new();
        stream.read_to_end(&mut answer).await.expect("read");
        String::from_utf8(answer).expect("a UTF-8 answer")
    };
    let answer = crate::guarded("an HTTP answer", exchange).await;
    let (head, body) = answer.split_once("\r\n\r\n").expect("a head and a body");
    let status = head
        .split_whitespace()
        .nth(1)
        .and_then(|s| s.parse().ok())
        .expect("a status code");
    let chunked = head
        .lines()
        .any(|l| l.eq_ignore_ascii_case("transfer-encoding: chunked"));
    let body = if chunked {
        dechunk(body)
    } else {
        body.to_owned()
    };
    (status, body)
}

/// Joins the chunks of a chunked body.
fn dechunk(mut body: &str) -> String {
    let mut out = String::new();
    while let Some((size, rest)) = body.split_once("\r\n") {
        let size = usize::from_str_radix(size.trim(), 16).expect("a chunk size");
        if size == 0 {
            break;
        }
        out.push_str(&rest[..size]);
        body = &rest[size + 2..];
    }
    out
}

/// `GET path`.
pub async fn get(addr: SocketAddr, path: &str) -> (u16, String) {
    request(addr, "GET", path, "").await
}

/// `POST path` with a JSON body.
pub async fn post(addr: SocketAddr, path: &str, body: &str) -> (u16, String) {
    request(addr, "POST", path, body).await
}
