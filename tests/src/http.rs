//! One HTTP/1.1 client for the server's JSON API, on hyper's client connection (which reads
//! chunked and sized bodies alike), from any loopback source address. The tests use the
//! panicking helpers; the load generator uses [`exchange`], which returns its errors.

use std::net::{IpAddr, Ipv4Addr, SocketAddr};

use http_body_util::{BodyExt, Full};
use hyper::body::Bytes;
use hyper_util::rt::TokioIo;
use tokio::net::TcpSocket;

/// Sends one request from the loopback address `from` (any of `127.0.0.0/8`) with these extra
/// headers (a `Host` among them replaces the server's address) and a JSON `body` (empty for
/// none); returns the status and the body, or what failed.
pub async fn exchange(
    from: IpAddr,
    addr: SocketAddr,
    method: &str,
    path: &str,
    headers: &[(&str, &str)],
    body: &str,
) -> Result<(u16, String), String> {
    let socket = TcpSocket::new_v4().map_err(|e| format!("a socket: {e}"))?;
    socket
        .bind(SocketAddr::new(from, 0))
        .map_err(|e| format!("bind {from}: {e}"))?;
    let stream = socket
        .connect(addr)
        .await
        .map_err(|e| format!("connect to {addr}: {e}"))?;
    let (mut sender, connection) = hyper::client::conn::http1::handshake(TokioIo::new(stream))
        .await
        .map_err(|e| format!("HTTP handshake: {e}"))?;
    let driver = tokio::spawn(connection);
    let mut request = hyper::Request::builder()
        .method(method)
        .uri(path)
        .header(hyper::header::CONTENT_TYPE, "application/json");
    // The server's address, unless the caller names another `Host`.
    if !headers
        .iter()
        .any(|(name, _)| name.eq_ignore_ascii_case("host"))
    {
        request = request.header(hyper::header::HOST, addr.to_string());
    }
    for (name, value) in headers {
        request = request.header(*name, *value);
    }
    let request = request
        .body(Full::new(Bytes::from(body.to_owned())))
        .map_err(|e| format!("a request: {e}"))?;
    let response = sender
        .send_request(request)
        .await
        .map_err(|e| format!("{method} {path}: {e}"))?;
    let status = response.status().as_u16();
    let bytes = response
        .into_body()
        .collect()
        .await
        .map_err(|e| format!("the body of {method} {path}: {e}"))?
        .to_bytes();
    driver.abort();
    let text = String::from_utf8(bytes.to_vec()).map_err(|e| format!("a UTF-8 body: {e}"))?;
    Ok((status, text))
}

/// Sends one request and returns the status and the body; panics if the exchange fails or takes
/// longer than [`crate::PATIENCE`].
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
    let answer = exchange(from, addr, method, path, &[], body);
    crate::guarded("an HTTP answer", answer)
        .await
        .unwrap_or_else(|e| panic!("{e}"))
}

/// `GET path` with these extra headers (`("Authorization", "Bearer …")`).
pub async fn get_with(addr: SocketAddr, path: &str, headers: &[(&str, &str)]) -> (u16, String) {
    let answer = exchange(Ipv4Addr::LOCALHOST.into(), addr, "GET", path, headers, "");
    crate::guarded("an HTTP answer", answer)
        .await
        .unwrap_or_else(|e| panic!("{e}"))
}

/// `GET path`.
pub async fn get(addr: SocketAddr, path: &str) -> (u16, String) {
    request(addr, "GET", path, "").await
}

/// `POST path` with a JSON body.
pub async fn post(addr: SocketAddr, path: &str, body: &str) -> (u16, String) {
    request(addr, "POST", path, body).await
}
