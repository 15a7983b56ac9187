//! Whose request is this: the client's address, read through trusted reverse proxies.
//!
//! Every per-address limit (connections, room creation, failed lookups) counts by the client's
//! address. Without a proxy that is the TCP peer. Behind a reverse proxy every peer is the
//! proxy, so the proxy's `Forwarded` (RFC 7239) or `X-Forwarded-For` header names the client;
//! but anyone can send those headers, so they are read only when the peer is one of
//! `--trusted-proxies`. The chain is read from the right (the hop nearest this server) and the
//! first address that is not itself a trusted proxy is the client's. A trusted proxy's
//! `Forwarded: host=` or `X-Forwarded-Host` also names the host the browser asked for, which the
//! WebSocket's origin check compares the page's origin with.

use std::net::{IpAddr, SocketAddr};
use std::str::FromStr;
use std::sync::Arc;

use axum::extract::{ConnectInfo, FromRequestParts};
use axum::http::HeaderMap;
use axum::http::header::{FORWARDED, HOST};
use axum::http::request::Parts;
use ipnet::IpNet;

use crate::AppState;

/// The networks whose peers are reverse proxies whose forwarding headers are believed.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct TrustedProxies(pub Vec<IpNet>);

impl TrustedProxies {
    /// Whether `ip` is a trusted proxy.
    pub fn contains(&self, ip: IpAddr) -> bool {
        let ip = canonical(ip);
        self.0.iter().any(|net| net.contains(&ip))
    }
}

impl FromStr for TrustedProxies {
    type Err = String;

    /// Reads a comma-separated list of networks (`10.0.0.0/8`) or single addresses.
    fn from_str(text: &str) -> Result<TrustedProxies, String> {
        text.split(',')
            .map(str::trim)
            .filter(|part| !part.is_empty())
            .map(|part| {
                part.parse::<IpNet>()
                    .or_else(|_| part.parse::<IpAddr>().map(IpNet::from))
                    .map_err(|_| {
                        format!("`{part}` is not a network such as 10.0.0.0/8 or an address")
                    })
            })
            .collect::<Result<_, _>>()
            .map(TrustedProxies)
    }
}

/// An IPv4 address written as IPv6 (`::ffff:a.b.c.d`) is the IPv4 address.
fn canonical(ip: IpAddr) -> IpAddr {
    match ip {
        IpAddr::V6(v6) => v6.to_ipv4_mapped().map_or(ip, IpAddr::V4),
        IpAddr::V4(_) => ip,
    }
}

/// The client's address: the peer's, or when the peer is a trusted proxy, the nearest untrusted
/// address its forwarding headers name (`Forwarded` first, then `X-Forwarded-For`).
pub fn client_ip(peer: IpAddr, headers: &HeaderMap, trusted: &TrustedProxies) -> IpAddr {
    let peer = canonical(peer);
    if !trusted.contains(peer) {
        return peer;
    }
    let chain = forwarded_for(headers);
    let chain = if chain.is_empty() {
        x_forwarded_for(headers)
    } else {
        chain
    };
    // From the nearest hop outwards: the first that is not a proxy of ours is the client. A
    // header we cannot read ends the walk at the last address we could trust.
    let mut client = peer;
    for hop in chain.into_iter().rev() {
        let Some(ip) = hop else {
            break;
        };
        client = canonical(ip);
        if !trusted.contains(client) {
            break;
        }
    }
    client
}

/// The `for=` addresses of every `Forwarded` header, in order (`None` for one that is not an
/// address, such as `unknown` or an obfuscated name).
fn forwarded_for(headers: &HeaderMap) -> Vec<Option<IpAddr>> {
    forwarded_params(headers, "for")
        .into_iter()
        .map(|value| parse_node(&value))
        .collect()
}

/// The values of one parameter of every element of every `Forwarded` header, in order.
fn forwarded_params(headers: &HeaderMap, name: &str) -> Vec<String> {
    let mut values = Vec::new();
    for header in headers.get_all(FORWARDED) {
        let Ok(header) = header.to_str() else {
            values.push(String::new());
            continue;
        };
        for element in header.split(',') {
            for pair in element.split(';') {
                if let Some((key, value)) = pair.split_once('=') {
                    if key.trim().eq_ignore_ascii_case(name) {
                        values.push(value.trim().trim_matches('"').to_owned());
                    }
                }
            }
        }
    }
    values
}

/// The addresses of every `X-Forwarded-For` header, in order.
fn x_forwarded_for(headers: &HeaderMap) -> Vec<Option<IpAddr>> {
    headers
        .get_all("x-forwarded-for")
        .iter()
        .flat_map(|header| match header.to_str() {
            Ok(text) => text.split(',').map(parse_node).collect(),
            Err(_) => vec![None],
        })
        .collect()
}

/// An address as a forwarding header writes it: `192.0.2.1`, `192.0.2.1:4711`, `[2001:db8::1]`
/// or `[2001:db8::1]:4711`.
fn parse_node(text: &str) -> Option<IpAddr> {
    let text = text.trim();
    if let Ok(ip) = text.parse::<IpAddr>() {
        return Some(ip);
    }
    if let Ok(addr) = text.parse::<SocketAddr>() {
        return Some(addr.ip());
    }
    let inner = text.strip_prefix('[')?.split(']').next()?;
    inner.parse().ok()
}

/// The host the browser asked for: a trusted proxy's `Forwarded: host=` or `X-Forwarded-Host`
/// (the nearest), else the `Host` header.
pub fn requested_host(
    peer: IpAddr,
    headers: &HeaderMap,
    trusted: &TrustedProxies,
) -> Option<String> {
    if trusted.contains(peer) {
        let forwarded = forwarded_params(headers, "host").pop();
        let x_forwarded = || {
            let header = headers.get_all("x-forwarded-host").iter().next_back()?;
            let last = header.to_str().ok()?.split(',').next_back()?;
            Some(last.trim().to_owned())
        };
        if let Some(host) = forwarded.filter(|h| !h.is_empty()).or_else(x_forwarded) {
            return Some(host);
        }
    }
    Some(headers.get(HOST)?.to_str().ok()?.to_owned())
}

/// The client's address, as an extractor: [`client_ip`] of the connection's peer under the
/// server's `--trusted-proxies`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ClientAddr {
    /// The client's address.
    pub ip: IpAddr,
    /// The TCP peer (the client, or the proxy in front of it).
    pub peer: SocketAddr,
}

impl FromRequestParts<Arc<AppState>> for ClientAddr {
    type Rejection = std::convert::Infallible;

    async fn from_request_parts(
        parts: &mut Parts,
        app: &Arc<AppState>,
    ) -> Result<ClientAddr, Self::Rejection> {
        // Every connection the server accepts carries its peer; a router driven without one (a
        // unit test) is its own loopback client.
        let peer = parts
            .extensions
            .get::<ConnectInfo<SocketAddr>>()
            .map_or(SocketAddr::from(([127, 0, 0, 1], 0)), |info| info.0);
        let ip = client_ip(peer.ip(), &parts.headers, &app.config.trusted_proxies);
        Ok(ClientAddr { ip, peer })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use axum::http::HeaderValue;

    fn headers(pairs: &[(&'static str, &str)]) -> HeaderMap {
        let mut headers = HeaderMap::new();
        for (name, value) in pairs {
            headers.append(*name, HeaderValue::from_str(value).unwrap());
        }
        headers
    }

    fn ip(text: &str) -> IpAddr {
        text.parse().unwrap()
    }

    #[test]
    fn forwarding_headers_from_an_untrusted_peer_are_ignored() {
        let trusted: TrustedProxies = "10.0.0.0/8".parse().unwrap();
        let h = headers(&[
            ("x-forwarded-for", "203.0.113.9"),
            ("forwarded", "for=198.51.100.1"),
        ]);
        assert_eq!(client_ip(ip("192.0.2.7"), &h, &trusted), ip("192.0.2.7"));
        assert_eq!(
            client_ip(ip("192.0.2.7"), &h, &TrustedProxies::default()),
            ip("192.0.2.7")
        );
    }

    #[test]
    fn a_trusted_proxy_names_the_client_nearest_untrusted_hop_first() {
        let trusted: TrustedProxies = "10.0.0.0/8, 192.0.2.1".parse().unwrap();
        // The client forged the first entry; the proxies appended the rest.
        let h = headers(&[("x-forwarded-for", "1.2.3.4, 203.0.113.9, 10.1.1.1")]);
        assert_eq!(client_ip(ip("10.0.0.5"), &h, &trusted), ip("203.0.113.9"));
        let h = headers(&[
            ("forwarded", "for=1.2.3.4"),
            (
                "forwarded",
                "for=\"[2001:db8::7]:4711\";proto=https, for=192.0.2.1",
            ),
        ]);
        assert_eq!(client_ip(ip("10.0.0.5"), &h, &trusted), ip("2001:db8::7"));
        // No header: the proxy itself.
        assert_eq!(
            client_ip(ip("10.0.0.5"), &HeaderMap::new(), &trusted),
            ip("10.0.0.5")
        );
        // An unreadable hop stops the walk at the last trusted one.
        let h = headers(&[("forwarded", "for=203.0.113.9, for=unknown")]);
        assert_eq!(client_ip(ip("10.0.0.5"), &h, &trusted), ip("10.0.0.5"));
        // IPv4 written as IPv6.
        assert_eq!(
            client_ip(
                ip("::ffff:10.0.0.5"),
                &headers(&[("x-forwarded-for", "203.0.113.9")]),
                &trusted
            ),
            ip("203.0.113.9")
        );
    }

    #[test]
    fn the_requested_host_comes_from_a_trusted_proxy_only() {
        let trusted: TrustedProxies = "10.0.0.0/8".parse().unwrap();
        let h = headers(&[
            ("host", "backend:8080"),
            ("x-forwarded-host", "dhumbal.example"),
        ]);
        assert_eq!(
            requested_host(ip("10.0.0.5"), &h, &trusted).as_deref(),
            Some("dhumbal.example")
        );
        assert_eq!(
            requested_host(ip("192.0.2.7"), &h, &trusted).as_deref(),
            Some("backend:8080")
        );
        let h = headers(&[
            ("host", "backend"),
            ("forwarded", "host=play.example;proto=https"),
        ]);
        assert_eq!(
            requested_host(ip("10.0.0.5"), &h, &trusted).as_deref(),
            Some("play.example")
        );
    }

    #[test]
    fn trusted_proxies_parse_networks_and_addresses() {
        let trusted: TrustedProxies = "10.0.0.0/8,::1, 192.0.2.1".parse().unwrap();
        assert!(trusted.contains(ip("10.9.9.9")));
        assert!(trusted.contains(ip("::1")));
        assert!(trusted.contains(ip("192.0.2.1")));
        assert!(!trusted.contains(ip("192.0.2.2")));
        assert!("10.0.0.0/33".parse::<TrustedProxies>().is_err());
        assert!("proxy".parse::<TrustedProxies>().is_err());
    }
}
