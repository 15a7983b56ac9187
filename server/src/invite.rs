//! Invitations: where the room links the lobby shares point, and their QR code.
//!
//! A page opened at `http://127.0.0.1:8080` would share links to `127.0.0.1`, which on a
//! friend's phone is the phone itself. So the base of an invite link is, in order:
//!
//! 1. `--public-url`, for a server on the internet behind a reverse proxy;
//! 2. for a page opened on a loopback host (`localhost`, `127.0.0.1`, `[::1]`), the host's
//!    address on its network, `http://LAN-ADDRESS:PORT`: `--lan-address`, or, when the server
//!    listens on every address (`0.0.0.0` or `[::]`), the address this machine's route to the
//!    internet leaves from ([`probe`]: a UDP socket connected to a documentation address, whose
//!    local address is read; no packet is sent), except in a container, whose own address no
//!    phone can open;
//! 3. otherwise the page's own origin, which friends reach already.
//!
//! `GET /api/invite-base` tells the page the base (`null` for its own origin), and
//! `GET /r/{code}/qr.svg` draws a room's invite link as a QR code, in SVG. The QR code is a room
//! lookup like `GET /api/rooms/{code}`: a code of no room answers `404 unknown_room` and counts
//! as a failed lookup of the caller's address ([`crate::limits::JoinAttempts`]).

use std::fmt;
use std::net::{IpAddr, Ipv4Addr, Ipv6Addr, SocketAddr, UdpSocket};
use std::sync::Arc;

use axum::Json;
use axum::Router;
use axum::extract::{Path, State};
use axum::http::{HeaderMap, HeaderValue, header};
use axum::response::{IntoResponse, Response};
use axum::routing::get;
use dhumbal_protocol::InviteBase;
use qrcode::QrCode;
use qrcode::render::svg;

use crate::address::{ClientAddr, requested_host, requested_scheme};
use crate::code::normalize;
use crate::error::Refusal;
use crate::{AppState, Config};

/// `--public-url`: the origin people reach the server at from outside (`https://cards.example.org`),
/// kept without a trailing `/`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PublicUrl(String);

impl PublicUrl {
    /// The origin, such as `https://cards.example.org` or `http://203.0.113.5:8080`.
    pub fn as_str(&self) -> &str {
        &self.0
    }
}

impl fmt::Display for PublicUrl {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

/// Reads `--public-url`: an `http` or `https` URL of a host (and port), with nothing after it but
/// an optional trailing `/`: no path, query, fragment or user name.
pub fn parse_public_url(text: &str) -> Result<PublicUrl, String> {
    let text = text.trim();
    let bad = |why: &str| {
        Err(format!(
            "`{text}` is not a public URL ({why}): give the scheme and host people open, \
             such as https://cards.example.org or http://203.0.113.5:8080"
        ))
    };
    let Ok(url) = url::Url::parse(text) else {
        return bad("it does not parse as a URL");
    };
    if !matches!(url.scheme(), "http" | "https") {
        return bad("the scheme must be http or https");
    }
    if url.host_str().is_none_or(str::is_empty) {
        return bad("it names no host");
    }
    if !url.username().is_empty() || url.password().is_some() {
        return bad("it may not hold a user name or password");
    }
    if url.path() != "/" || url.query().is_some() || url.fragment().is_some() {
        return bad("it may not have a path, query or fragment");
    }
    Ok(PublicUrl(url.origin().ascii_serialization()))
}

/// Whether people on the host's network could open a link to `ip`: not loopback, unspecified,
/// multicast or broadcast, and (IPv6) not link-local, which a browser's URL cannot name.
pub fn reachable(ip: IpAddr) -> bool {
    match ip {
        IpAddr::V4(v4) => {
            !(v4.is_loopback() || v4.is_unspecified() || v4.is_multicast() || v4.is_broadcast())
        }
        IpAddr::V6(v6) => {
            let link_local = (v6.segments()[0] & 0xffc0) == 0xfe80;
            !(v6.is_loopback() || v6.is_unspecified() || v6.is_multicast() || link_local)
        }
    }
}

/// The host's address on its network, for the invite links of pages opened on a loopback host:
/// `explicit` (`--lan-address`) when given; else, only when the server listens on every address
/// (`bound` is `0.0.0.0` or `[::]`), what `probe` finds for IPv4 (a server on `[::]` takes IPv4
/// too), then for IPv6 on `[::]`, if it is [`reachable`]. A server bound to one address gets
/// none: a loopback one is not reachable by anyone else, and a page opened on any other one
/// already has the right origin.
pub fn lan_address(
    bound: IpAddr,
    explicit: Option<IpAddr>,
    probe: impl Fn(IpAddr) -> Option<IpAddr>,
) -> Option<IpAddr> {
    if explicit.is_some() {
        return explicit;
    }
    if !bound.is_unspecified() {
        return None;
    }
    let mut families = vec![IpAddr::V4(Ipv4Addr::UNSPECIFIED)];
    if bound.is_ipv6() {
        families.push(IpAddr::V6(Ipv6Addr::UNSPECIFIED));
    }
    families
        .into_iter()
        .filter_map(probe)
        .find(|ip| reachable(*ip))
}

/// The address this machine's route to the internet leaves from, for the family of `family`: a
/// UDP socket bound to it and connected to a documentation address (`192.0.2.1`,
/// `2001:db8::1`; RFC 5737 and 3849), whose local address is read. Connecting a UDP socket sends
/// nothing; it only asks the routing table. `None` when there is no such route.
pub fn probe(family: IpAddr) -> Option<IpAddr> {
    let (bind, target): (SocketAddr, SocketAddr) = match family {
        IpAddr::V4(_) => (
            (Ipv4Addr::UNSPECIFIED, 0).into(),
            (Ipv4Addr::new(192, 0, 2, 1), 9).into(),
        ),
        IpAddr::V6(_) => (
            (Ipv6Addr::UNSPECIFIED, 0).into(),
            (Ipv6Addr::new(0x2001, 0xdb8, 0, 0, 0, 0, 0, 1), 9).into(),
        ),
    };
    let socket = UdpSocket::bind(bind).ok()?;
    socket.connect(target).ok()?;
    Some(socket.local_addr().ok()?.ip())
}

/// Whether this process runs in a container (Docker's `/.dockerenv`, Podman's
/// `/run/.containerenv`), where the address [`probe`] finds is the container's own, which no
/// phone can open: there `--lan-address` or `--public-url` names the host's.
pub fn in_container() -> bool {
    ["/.dockerenv", "/run/.containerenv"]
        .iter()
        .any(|p| std::path::Path::new(p).exists())
}

/// [`probe`], except in a container ([`in_container`]), where it finds nothing.
pub fn discover(family: IpAddr) -> Option<IpAddr> {
    if in_container() { None } else { probe(family) }
}

/// Whether a `Host` (`localhost:8080`, `127.0.0.1`, `[::1]:8080`) names this machine's loopback.
pub fn is_loopback_host(host: &str) -> bool {
    let name = match host.strip_prefix('[') {
        Some(rest) => rest.split(']').next().unwrap_or_default(),
        None => match host.rsplit_once(':') {
            Some((name, port)) if port.bytes().all(|b| b.is_ascii_digit()) => name,
            _ => host,
        },
    };
    let name = name.trim_end_matches('.').to_ascii_lowercase();
    name == "localhost"
        || name.ends_with(".localhost")
        || name.parse::<IpAddr>().is_ok_and(|ip| ip.is_loopback())
}

/// Whether a `Host` is a plain host and port, fit to write into a link.
fn plain_host(host: &str) -> bool {
    !host.is_empty()
        && host
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b".-:[]".contains(&b))
}

/// The base of invite links for a page opened on `host`, or `None` when the page's own origin is
/// right (see the [module](self)).
pub fn base_for(config: &Config, host: Option<&str>) -> Option<String> {
    if let Some(public) = &config.public_url {
        return Some(public.as_str().to_owned());
    }
    let lan = config.lan_address?;
    host.filter(|h| is_loopback_host(h))
        .map(|_| format!("http://{}", SocketAddr::new(lan, config.addr.port())))
}

/// The invite link of room `code` for a request with these headers from `client`: the
/// [`base_for`] its host, else its own origin (`http`, or the scheme a trusted proxy names).
pub fn invite_url(config: &Config, client: ClientAddr, headers: &HeaderMap, code: &str) -> String {
    let host = requested_host(client.peer.ip(), headers, config.forwarding());
    let base = base_for(config, host.as_deref()).unwrap_or_else(|| {
        let scheme = requested_scheme(client.peer.ip(), headers, config.forwarding());
        match host.filter(|h| plain_host(h)) {
            Some(host) => format!("{scheme}://{host}"),
            None => format!("http://{}", config.addr),
        }
    });
    format!("{base}/r/{code}")
}

/// The QR code of `text`, as an SVG image: black modules on white, with the quiet zone the
/// standard asks for around them.
pub fn qr_svg(text: &str) -> Option<String> {
    let code = QrCode::new(text.as_bytes()).ok()?;
    Some(
        code.render::<svg::Color<'_>>()
            .min_dimensions(256, 256)
            .dark_color(svg::Color("#000"))
            .light_color(svg::Color("#fff"))
            .quiet_zone(true)
            .build(),
    )
}

/// The invitation's routes: `GET /api/invite-base` and `GET /r/{code}/qr.svg`.
pub fn routes() -> Router<Arc<AppState>> {
    Router::new()
        .route("/api/invite-base", get(invite_base))
        .route("/r/{code}/qr.svg", get(qr))
}

/// `GET /api/invite-base`: the base the page puts before `/r/{code}` in the links it shares.
async fn invite_base(
    State(app): State<Arc<AppState>>,
    client: ClientAddr,
    headers: HeaderMap,
) -> Response {
    let host = requested_host(client.peer.ip(), &headers, app.config.forwarding());
    let base = base_for(&app.config, host.as_deref());
    let mut response = Json(InviteBase { base }).into_response();
    // It depends on the host the page was opened on.
    response
        .headers_mut()
        .insert(header::CACHE_CONTROL, HeaderValue::from_static("no-store"));
    response
}

/// `GET /r/{code}/qr.svg`: the room's invite link as a QR code (`image/svg+xml`). A lookup: an
/// address blocked for failing too often gets `429 too_many_attempts`, a code of no room
/// `404 unknown_room`, counted as a failure.
async fn qr(
    State(app): State<Arc<AppState>>,
    client: ClientAddr,
    headers: HeaderMap,
    Path(code): Path<String>,
) -> Response {
    if app.join_attempts.check(client.ip).is_err() {
        return Refusal::TooManyAttempts.into_response();
    }
    let Some(summary) = app.rooms.summary(&normalize(&code)).await else {
        app.join_attempts.fail(client.ip);
        return Refusal::UnknownRoom.into_response();
    };
    let url = invite_url(&app.config, client, &headers, &summary.code);
    let Some(svg) = qr_svg(&url) else {
        return Refusal::internal("a QR code", format!("{url} does not fit a QR code"))
            .into_response();
    };
    let mut response = svg.into_response();
    let h = response.headers_mut();
    h.insert(
        header::CONTENT_TYPE,
        HeaderValue::from_static("image/svg+xml"),
    );
    h.insert(header::CACHE_CONTROL, HeaderValue::from_static("no-store"));
    h.insert(
        header::X_CONTENT_TYPE_OPTIONS,
        HeaderValue::from_static("nosniff"),
    );
    // Opened on its own, the image may run and load nothing.
    h.insert(
        header::CONTENT_SECURITY_POLICY,
        HeaderValue::from_static("default-src 'none'"),
    );
    response
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ip(text: &str) -> IpAddr {
        text.parse().unwrap()
    }

    #[test]
    fn a_public_url_is_a_scheme_and_a_host_and_nothing_more() {
        for (given, kept) in [
            ("https://cards.example.org", "https://cards.example.org"),
            ("https://cards.example.org/", "https://cards.example.org"),
            ("HTTPS://Cards.Example.org", "https://cards.example.org"),
            ("http://203.0.113.5:8080", "http://203.0.113.5:8080"),
            (
                "https://cards.example.org:443/",
                "https://cards.example.org",
            ),
            ("http://[2001:db8::5]:8080/", "http://[2001:db8::5]:8080"),
            (" https://cards.example.org ", "https://cards.example.org"),
        ] {
            assert_eq!(
                parse_public_url(given).map(|u| u.to_string()),
                Ok(kept.to_owned()),
                "{given}"
            );
        }
        for bad in [
            "",
            "cards.example.org",
            "ftp://cards.example.org",
            "https://",
            "https://cards.example.org/play",
            "https://cards.example.org/r/",
            "https://cards.example.org?x=1",
            "https://cards.example.org/?",
            "https://cards.example.org#top",
            "https://me@cards.example.org",
            "https://me:pw@cards.example.org",
            "file:///srv",
            "javascript:alert(1)",
        ] {
            let refused = parse_public_url(bad).expect_err(bad);
            assert!(refused.contains("is not a public URL"), "{refused}");
        }
    }

    #[test]
    fn the_public_url_flag_is_checked_at_start() {
        use clap::Parser;
        let config = Config::try_parse_from([
            "dhumbal-server",
            "--public-url",
            "https://cards.example.org/",
        ])
        .unwrap();
        assert_eq!(
            config.public_url.as_ref().map(PublicUrl::as_str),
            Some("https://cards.example.org")
        );
        let refused =
            Config::try_parse_from(["dhumbal-server", "--public-url", "https://x.example/app"])
                .unwrap_err()
                .to_string();
        assert!(refused.contains("--public-url"), "{refused}");
        assert!(refused.contains("may not have a path"), "{refused}");
        let config =
            Config::try_parse_from(["dhumbal-server", "--lan-address", "192.168.1.20"]).unwrap();
        assert_eq!(config.lan_address, Some(ip("192.168.1.20")));
        assert_eq!(Config::default().public_url, None);
        assert_eq!(Config::default().lan_address, None);
    }

    #[test]
    fn the_lan_address_is_probed_only_on_every_address_and_must_be_reachable() {
        let wifi = ip("192.168.1.20");
        let v6 = ip("2001:db8:1::20");
        // A probe that finds the Wi-Fi address for IPv4 and a global IPv6 address.
        let found = |family: IpAddr| Some(if family.is_ipv4() { wifi } else { v6 });
        assert_eq!(lan_address(ip("0.0.0.0"), None, found), Some(wifi));
        assert_eq!(lan_address(ip("::"), None, found), Some(wifi));
        // Bound to one address: nothing probed.
        let never = |_: IpAddr| -> Option<IpAddr> { panic!("probed") };
        assert_eq!(lan_address(ip("127.0.0.1"), None, never), None);
        assert_eq!(lan_address(ip("192.168.1.20"), None, never), None);
        assert_eq!(lan_address(ip("::1"), None, never), None);
        // `--lan-address` wins, whatever the bind address.
        let given = ip("10.1.2.3");
        assert_eq!(
            lan_address(ip("127.0.0.1"), Some(given), never),
            Some(given)
        );
        assert_eq!(lan_address(ip("0.0.0.0"), Some(given), never), Some(given));
        // No route: none. Only IPv4 on 0.0.0.0; IPv6 on [::] when IPv4 has none.
        assert_eq!(lan_address(ip("0.0.0.0"), None, |_| None), None);
        let only_v6 = |family: IpAddr| family.is_ipv6().then_some(v6);
        assert_eq!(lan_address(ip("0.0.0.0"), None, only_v6), None);
        assert_eq!(lan_address(ip("::"), None, only_v6), Some(v6));
        // What a friend cannot open is passed over.
        for useless in ["127.0.1.1", "0.0.0.0", "224.0.0.1", "255.255.255.255"] {
            let probe = |_: IpAddr| Some(ip(useless));
            assert_eq!(lan_address(ip("0.0.0.0"), None, probe), None, "{useless}");
        }
        let link_local = |family: IpAddr| family.is_ipv6().then(|| ip("fe80::1"));
        assert_eq!(lan_address(ip("::"), None, link_local), None);
    }

    #[test]
    fn loopback_hosts_are_known_with_or_without_a_port() {
        for host in [
            "localhost",
            "localhost:8080",
            "LOCALHOST.:8080",
            "dhumbal.localhost:8080",
            "127.0.0.1",
            "127.0.0.1:8080",
            "127.0.0.2:41000",
            "[::1]:8080",
            "[::1]",
        ] {
            assert!(is_loopback_host(host), "{host}");
        }
        for host in [
            "192.168.1.20:8080",
            "cards.example.org",
            "localhost.example.org",
            "[2001:db8::5]:8080",
            "",
        ] {
            assert!(!is_loopback_host(host), "{host}");
        }
    }

    #[test]
    fn the_base_is_the_public_url_else_the_lan_address_for_a_loopback_page_else_the_page() {
        let mut config = Config {
            addr: "0.0.0.0:8080".parse().unwrap(),
            lan_address: Some(ip("192.168.1.20")),
            ..Config::default()
        };
        assert_eq!(
            base_for(&config, Some("127.0.0.1:8080")).as_deref(),
            Some("http://192.168.1.20:8080")
        );
        assert_eq!(
            base_for(&config, Some("localhost:8080")).as_deref(),
            Some("http://192.168.1.20:8080")
        );
        assert_eq!(base_for(&config, Some("192.168.1.20:8080")), None);
        assert_eq!(base_for(&config, None), None);
        config.lan_address = Some(ip("2001:db8:1::20"));
        assert_eq!(
            base_for(&config, Some("[::1]:8080")).as_deref(),
            Some("http://[2001:db8:1::20]:8080")
        );
        config.lan_address = None;
        assert_eq!(base_for(&config, Some("127.0.0.1:8080")), None);
        config.public_url = Some(parse_public_url("https://cards.example.org").unwrap());
        for host in [Some("127.0.0.1:8080"), Some("10.0.0.5"), None] {
            assert_eq!(
                base_for(&config, host).as_deref(),
                Some("https://cards.example.org")
            );
        }
    }

    #[test]
    fn the_qr_code_is_an_svg_image() {
        let svg = qr_svg("http://192.168.1.20:8080/r/ABCDEFGH23").unwrap();
        assert!(
            svg.contains("<svg xmlns=\"http://www.w3.org/2000/svg\""),
            "{svg}"
        );
        assert!(svg.ends_with("</svg>"));
        assert!(!svg.contains("<script"));
    }
}
