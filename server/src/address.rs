//! Whose request is this: the client's address, read through trusted reverse proxies.
//!
//! Every per-address limit (connections, room creation, failed lookups) counts by the client's
//! address. Without a proxy that is the TCP peer. Behind a reverse proxy every peer is the
//! proxy, so the header the proxy writes names the client: `X-Forwarded-For`, or `Forwarded`
//! (RFC 7239), whichever `--forwarded-header` names, and only that one. Anyone can send either
//! header, and proxies append to the one they write while passing the other through untouched
//! (HAProxy, nginx and Caddy all pass a client's own `Forwarded` on), so the other is never
//! read; and the named one is read only when the peer is one of `--trusted-proxies`. The chain
//! is read from the right (the hop nearest this server) and the first address that is not itself
//! a trusted proxy is the client's. The header named by `--forwarded-host-header`
//! (`X-Forwarded-Host`, `Forwarded: host=`, or none: `host`) names the host the browser asked
//! for, which the WebSocket's origin check compares the page's origin with.

use std::net::{IpAddr, SocketAddr};
use std::str::FromStr;
use std::sync::Arc;

use axum::extract::{ConnectInfo, FromRequestParts};
use axum::http::HeaderMap;
use axum::http::header::{FORWARDED, HOST};
use axum::http::request::Parts;
use ipnet::IpNet;

use crate::AppState;

/// The header a trusted proxy writes the client's address in (`--forwarded-header`): the only
/// one read.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, clap::ValueEnum)]
pub enum ForwardedHeader {
    /// `X-Forwarded-For: client, proxy1, …` (HAProxy's `option forwardfor`, nginx, Caddy).
    #[default]
    XForwardedFor,
    /// `Forwarded: for=client, for=proxy1` (RFC 7239).
    Forwarded,
}

/// The header a trusted proxy writes the requested host in (`--forwarded-host-header`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, clap::ValueEnum)]
pub enum ForwardedHostHeader {
    /// `X-Forwarded-Host` (Caddy, many nginx setups).
    #[default]
    XForwardedHost,
    /// `Forwarded: host=` (RFC 7239).
    Forwarded,
    /// None: the proxy passes the browser's own `Host` on (HAProxy), which is read.
    Host,
}

/// How the client's address and host are read: which peers are proxies, and the headers they
/// write.
#[derive(Clone, Copy, Debug)]
pub struct Forwarding<'a> {
    /// The proxies whose headers are believed.
    pub trusted: &'a TrustedProxies,
    /// The header naming the client's address.
    pub header: ForwardedHeader,
    /// The header naming the requested host.
    pub host_header: ForwardedHostHeader,
}

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
/// address the proxy's header ([`ForwardedHeader`], and only that one) names.
pub fn client_ip(peer: IpAddr, headers: &HeaderMap, forwarding: Forwarding<'_>) -> IpAddr {
    let trusted = forwarding.trusted;
    let peer = canonical(peer);
    if !trusted.contains(peer) {
        return peer;
    }
    let chain = match forwarding.header {
        ForwardedHeader::Forwarded => forwarded_for(headers),
        ForwardedHeader::XForwardedFor => x_forwarded_for(headers),
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

/// The host the browser asked for: a trusted proxy's header ([`ForwardedHostHeader`], the
/// nearest value, and only that header), else the `Host` header.
pub fn requested_host(
    peer: IpAddr,
    headers: &HeaderMap,
    forwarding: Forwarding<'_>,
) -> Option<String> {
    if forwarding.trusted.contains(peer) {
        let host = match forwarding.host_header {
            ForwardedHostHeader::Forwarded => forwarded_params(headers, "host").pop(),
            ForwardedHostHeader::XForwardedHost => (|| {
                let header = headers.get_all("x-forwarded-host").iter().next_back()?;
                let last = header.to_str().ok()?.split(',').next_back()?;
                Some(last.trim().to_owned())
            })(),
            ForwardedHostHeader::Host => None,
        };
        if let Some(host) = host.filter(|h| !h.is_empty()) {
            return Some(host);
        }
    }
    Some(headers.get(HOST)?.to_str().ok()?.to_owned())
}

/// The scheme the browser asked for: `https` when a trusted proxy says so (`Forwarded: proto=`
/// when `--forwarded-host-header forwarded`, else `X-Forwarded-Proto`, the nearest value), else
/// `http`, which is all this server speaks itself.
pub fn requested_scheme(
    peer: IpAddr,
    headers: &HeaderMap,
    forwarding: Forwarding<'_>,
) -> &'static str {
    if !forwarding.trusted.contains(peer) {
        return "http";
    }
    let proto = match forwarding.host_header {
        ForwardedHostHeader::Forwarded => forwarded_params(headers, "proto").pop(),
        ForwardedHostHeader::XForwardedHost | ForwardedHostHeader::Host => headers
            .get_all("x-forwarded-proto")
            .iter()
            .next_back()
            .and_then(|v| v.to_str().ok())
            .and_then(|v| v.split(',').next_back())
            .map(|v| v.trim().to_owned()),
    };
    match proto {
        Some(p) if p.eq_ignore_ascii_case("https") => "https",
        _ => "http",
    }
}

/// The client's address, as an extractor: [`client_ip`] of the connection's peer under the
/// server's `--trusted-proxies` and `--forwarded-header`.
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
        let ip = client_ip(peer.ip(), &parts.headers, app.config.forwarding());
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

    /// Reading `header` and `host_header` from the proxies `trusted`.
    fn via(
        trusted: &TrustedProxies,
        header: ForwardedHeader,
        host_header: ForwardedHostHeader,
    ) -> Forwarding<'_> {
        Forwarding {
            trusted,
            header,
            host_header,
        }
    }

    /// The defaults: `X-Forwarded-For` and `X-Forwarded-Host`.
    fn xff(trusted: &TrustedProxies) -> Forwarding<'_> {
        via(
            trusted,
            ForwardedHeader::default(),
            ForwardedHostHeader::default(),
        )
    }

    /// RFC 7239 `Forwarded` for both.
    fn rfc(trusted: &TrustedProxies) -> Forwarding<'_> {
        via(
            trusted,
            ForwardedHeader::Forwarded,
            ForwardedHostHeader::Forwarded,
        )
    }

    #[test]
    fn forwarding_headers_from_an_untrusted_peer_are_ignored() {
        let trusted: TrustedProxies = "10.0.0.0/8".parse().unwrap();
        let h = headers(&[
            ("x-forwarded-for", "203.0.113.9"),
            ("forwarded", "for=198.51.100.1"),
        ]);
        for forwarding in [xff(&trusted), rfc(&trusted)] {
            assert_eq!(client_ip(ip("192.0.2.7"), &h, forwarding), ip("192.0.2.7"));
        }
        let nobody = TrustedProxies::default();
        assert_eq!(
            client_ip(ip("192.0.2.7"), &h, xff(&nobody)),
            ip("192.0.2.7")
        );
    }

    #[test]
    fn a_trusted_proxy_names_the_client_nearest_untrusted_hop_first() {
        let trusted: TrustedProxies = "10.0.0.0/8, 192.0.2.1".parse().unwrap();
        // The client forged the first entry; the proxies appended the rest.
        let h = headers(&[("x-forwarded-for", "1.2.3.4, 203.0.113.9, 10.1.1.1")]);
        assert_eq!(
            client_ip(ip("10.0.0.5"), &h, xff(&trusted)),
            ip("203.0.113.9")
        );
        let h = headers(&[
            ("forwarded", "for=1.2.3.4"),
            (
                "forwarded",
                "for=\"[2001:db8::7]:4711\";proto=https, for=192.0.2.1",
            ),
        ]);
        assert_eq!(
            client_ip(ip("10.0.0.5"), &h, rfc(&trusted)),
            ip("2001:db8::7")
        );
        // No header: the proxy itself.
        assert_eq!(
            client_ip(ip("10.0.0.5"), &HeaderMap::new(), xff(&trusted)),
            ip("10.0.0.5")
        );
        // An unreadable hop stops the walk at the last trusted one.
        let h = headers(&[("forwarded", "for=203.0.113.9, for=unknown")]);
        assert_eq!(client_ip(ip("10.0.0.5"), &h, rfc(&trusted)), ip("10.0.0.5"));
        // IPv4 written as IPv6.
        assert_eq!(
            client_ip(
                ip("::ffff:10.0.0.5"),
                &headers(&[("x-forwarded-for", "203.0.113.9")]),
                xff(&trusted)
            ),
            ip("203.0.113.9")
        );
    }

    /// Regression (issue 35, item 1): `Forwarded: for=` was read ahead of `X-Forwarded-For`,
    /// and HAProxy, nginx and Caddy pass a client's own `Forwarded` through untouched while they
    /// append to `X-Forwarded-For`: the client chose its address. Only the named header is read.
    #[test]
    fn only_the_header_the_proxy_writes_is_read() {
        let trusted: TrustedProxies = "10.0.0.0/8".parse().unwrap();
        // The client sent its own `Forwarded`; HAProxy appended the client's real address.
        let h = headers(&[
            ("forwarded", "for=198.51.100.1"),
            ("x-forwarded-for", "203.0.113.9"),
        ]);
        assert_eq!(
            client_ip(ip("10.0.0.5"), &h, xff(&trusted)),
            ip("203.0.113.9")
        );
        // A proxy that writes `Forwarded` and passes a client's `X-Forwarded-For` on.
        let h = headers(&[
            ("x-forwarded-for", "198.51.100.1"),
            ("forwarded", "for=203.0.113.9"),
        ]);
        assert_eq!(
            client_ip(ip("10.0.0.5"), &h, rfc(&trusted)),
            ip("203.0.113.9")
        );
        // The named header missing: the proxy itself, never the other header.
        let h = headers(&[("forwarded", "for=198.51.100.1")]);
        assert_eq!(client_ip(ip("10.0.0.5"), &h, xff(&trusted)), ip("10.0.0.5"));
        // The same for the host.
        let h = headers(&[
            ("host", "dhumbal.example"),
            ("forwarded", "host=evil.example"),
            ("x-forwarded-host", "evil.example"),
        ]);
        let host = |forwarding| requested_host(ip("10.0.0.5"), &h, forwarding);
        let only_host = via(
            &trusted,
            ForwardedHeader::XForwardedFor,
            ForwardedHostHeader::Host,
        );
        assert_eq!(host(only_host).as_deref(), Some("dhumbal.example"));
        let h = headers(&[
            ("host", "dhumbal.example"),
            ("forwarded", "host=evil.example"),
        ]);
        assert_eq!(
            requested_host(ip("10.0.0.5"), &h, xff(&trusted)).as_deref(),
            Some("dhumbal.example")
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
            requested_host(ip("10.0.0.5"), &h, xff(&trusted)).as_deref(),
            Some("dhumbal.example")
        );
        assert_eq!(
            requested_host(ip("192.0.2.7"), &h, xff(&trusted)).as_deref(),
            Some("backend:8080")
        );
        let h = headers(&[
            ("host", "backend"),
            ("forwarded", "host=play.example;proto=https"),
        ]);
        assert_eq!(
            requested_host(ip("10.0.0.5"), &h, rfc(&trusted)).as_deref(),
            Some("play.example")
        );
    }

    #[test]
    fn the_requested_scheme_is_https_only_when_a_trusted_proxy_says_so() {
        let trusted: TrustedProxies = "10.0.0.0/8".parse().unwrap();
        let h = headers(&[("x-forwarded-proto", "https")]);
        assert_eq!(requested_scheme(ip("10.0.0.5"), &h, xff(&trusted)), "https");
        // Anyone else's header is not believed.
        assert_eq!(requested_scheme(ip("192.0.2.7"), &h, xff(&trusted)), "http");
        // With `Forwarded` named, only its `proto=`.
        assert_eq!(requested_scheme(ip("10.0.0.5"), &h, rfc(&trusted)), "http");
        let h = headers(&[("forwarded", "host=play.example;proto=https")]);
        assert_eq!(requested_scheme(ip("10.0.0.5"), &h, rfc(&trusted)), "https");
        let h = headers(&[("x-forwarded-proto", "https, http")]);
        assert_eq!(requested_scheme(ip("10.0.0.5"), &h, xff(&trusted)), "http");
        assert_eq!(
            requested_scheme(ip("10.0.0.5"), &HeaderMap::new(), xff(&trusted)),
            "http"
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
