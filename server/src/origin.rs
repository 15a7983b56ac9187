//! The origin check of the WebSocket upgrade.
//!
//! A browser sends the `Origin` of the page that opens a WebSocket, and the page may be anyone's:
//! without a check, any site a player visits could open a socket to this server in the player's
//! name. An upgrade is allowed when it has no `Origin` (not a browser: a bot, a test, `websocat`),
//! when its origin is the server's own (its host and port are the host the browser asked for: the
//! request's `Host`, or behind a trusted proxy its forwarded host, [`crate::address`]), or when
//! the origin is one of `--allowed-origins`. Anything else is refused with 403 `forbidden_origin`.

use axum::http::HeaderMap;
use axum::http::header::ORIGIN;

/// Whether an upgrade with these headers, asking for `host`, may go ahead, given the extra
/// allowed origins.
pub fn allowed(headers: &HeaderMap, host: Option<&str>, allowed_origins: &[String]) -> bool {
    let Some(origin) = headers.get(ORIGIN) else {
        return true;
    };
    let Ok(origin) = origin.to_str() else {
        return false;
    };
    let origin = origin.trim().trim_end_matches('/').to_ascii_lowercase();
    if allowed_origins
        .iter()
        .any(|a| a.trim().trim_end_matches('/').eq_ignore_ascii_case(&origin))
    {
        return true;
    }
    let Some(host) = host else {
        return false;
    };
    same_host(&origin, host)
}

/// Whether the origin (`scheme://host[:port]`, lowercase) names the same host and port as the
/// `Host` header.
fn same_host(origin: &str, host: &str) -> bool {
    let Some((scheme, authority)) = origin.split_once("://") else {
        return false;
    };
    let default_port = match scheme {
        "http" | "ws" => ":80",
        "https" | "wss" => ":443",
        _ => return false,
    };
    let host = host.trim().to_ascii_lowercase();
    let strip = |a: &str| a.strip_suffix(default_port).unwrap_or(a).to_owned();
    strip(authority) == strip(&host)
}

#[cfg(test)]
mod tests {
    use super::*;
    use axum::http::HeaderValue;
    use axum::http::header::HOST;

    /// The check as a request with these headers, asking for its `Host`, meets it.
    fn allowed(headers: &HeaderMap, allowed_origins: &[String]) -> bool {
        let host = headers.get(HOST).and_then(|h| h.to_str().ok());
        super::allowed(headers, host, allowed_origins)
    }

    fn headers(origin: Option<&str>, host: &str) -> HeaderMap {
        let mut headers = HeaderMap::new();
        headers.insert(HOST, HeaderValue::from_str(host).unwrap());
        if let Some(origin) = origin {
            headers.insert(ORIGIN, HeaderValue::from_str(origin).unwrap());
        }
        headers
    }

    #[test]
    fn same_origin_and_no_origin_are_allowed() {
        assert!(allowed(&headers(None, "127.0.0.1:8080"), &[]));
        assert!(allowed(
            &headers(Some("http://127.0.0.1:8080"), "127.0.0.1:8080"),
            &[]
        ));
        assert!(allowed(
            &headers(Some("https://Dhumbal.example"), "dhumbal.example"),
            &[]
        ));
        assert!(allowed(
            &headers(Some("https://dhumbal.example"), "dhumbal.example:443"),
            &[]
        ));
    }

    #[test]
    fn foreign_origins_are_refused_unless_listed() {
        let foreign = headers(Some("https://evil.example"), "dhumbal.example");
        assert!(!allowed(&foreign, &[]));
        assert!(allowed(&foreign, &["https://evil.example/".to_owned()]));
        // Another port is another origin.
        assert!(!allowed(
            &headers(Some("http://127.0.0.1:9999"), "127.0.0.1:8080"),
            &[]
        ));
        assert!(!allowed(&headers(Some("null"), "127.0.0.1:8080"), &[]));
    }
}
