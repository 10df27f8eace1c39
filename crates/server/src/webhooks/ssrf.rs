//! Where webhooks may be sent (SSRF protection, contracts §2 `url_not_allowed` and §8).
//!
//! A customer chooses the URL we POST to, so without a guard the service could be made to call its own
//! loopback, the cloud metadata address or any host of the private network it runs in. The guard works at two
//! moments:
//!
//! 1. **Registration** ([`check_target`]): the URL must be `http`/`https`, carry no credentials nor port 0, and
//!    its host must be a public address, or a name whose every resolved address is public.
//! 2. **Delivery** ([`GuardedResolver`] and [`literal_target`]): the client resolves names through a resolver
//!    that drops forbidden answers, so the address that is checked is the address that is dialed and a name
//!    that resolves to a private address later (DNS rebinding) is never contacted. A URL whose host is an IP
//!    literal never reaches a resolver, so it is checked before sending.
//!
//! Hosts are judged after the URL parser has normalised them: `url` (the WHATWG parser reqwest also uses)
//! turns every IPv4 spelling (`2130706433`, `0x7f.1`, `0177.0.0.1`, `127.1`, percent-encoded or full-width
//! digits) into one [`Ipv4Addr`], so [`forbidden`] only ever sees addresses, never spellings.
//!
//! `allow_private_webhook_targets` lifts the address checks (never the scheme and credential checks), for
//! development and tests only.
//!
//! This module knows nothing of HTTP frameworks; the API maps [`Rejected`] to 400 `url_not_allowed`.

use std::{
    fmt,
    net::{IpAddr, Ipv4Addr, Ipv6Addr, SocketAddr},
    str::FromStr,
    sync::Arc,
};

use ipnet::{Ipv4Net, Ipv6Net};
use reqwest::dns::{Addrs, Name, Resolve, Resolving};
use url::{Host, Url};

/// Longest accepted URL, in bytes.
pub const MAX_URL_LEN: usize = 2048;

const fn v4(a: u8, b: u8, c: u8, d: u8, len: u8) -> Ipv4Net {
    Ipv4Net::new_assert(Ipv4Addr::new(a, b, c, d), len)
}

#[allow(clippy::too_many_arguments)]
const fn v6(s: [u16; 8], len: u8) -> Ipv6Net {
    Ipv6Net::new_assert(Ipv6Addr::new(s[0], s[1], s[2], s[3], s[4], s[5], s[6], s[7]), len)
}

/// Forbidden IPv4 ranges and why. Everything else is public.
const V4_FORBIDDEN: &[(Ipv4Net, &str)] = &[
    (v4(0, 0, 0, 0, 8), "unspecified (\"this network\")"),
    (v4(10, 0, 0, 0, 8), "private"),
    (v4(100, 64, 0, 0, 10), "carrier-grade NAT (shared)"),
    (v4(127, 0, 0, 0, 8), "loopback"),
    (v4(169, 254, 0, 0, 16), "link-local"),
    (v4(172, 16, 0, 0, 12), "private"),
    (v4(192, 0, 0, 0, 24), "IETF protocol assignments"),
    (v4(192, 0, 2, 0, 24), "documentation"),
    (v4(192, 88, 99, 0, 24), "6to4 relay anycast"),
    (v4(192, 168, 0, 0, 16), "private"),
    (v4(198, 18, 0, 0, 15), "benchmarking"),
    (v4(198, 51, 100, 0, 24), "documentation"),
    (v4(203, 0, 113, 0, 24), "documentation"),
    (v4(224, 0, 0, 0, 4), "multicast"),
    (v4(240, 0, 0, 0, 4), "reserved or broadcast"),
];

/// Forbidden IPv6 ranges and why. Ranges that embed an IPv4 address are handled in [`forbidden`] first.
const V6_FORBIDDEN: &[(Ipv6Net, &str)] = &[
    (v6([0, 0, 0, 0, 0, 0, 0, 0], 128), "unspecified"),
    (v6([0, 0, 0, 0, 0, 0, 0, 1], 128), "loopback"),
    // Deprecated IPv4-compatible addresses (::a.b.c.d): no legitimate receiver uses them.
    (v6([0, 0, 0, 0, 0, 0, 0, 0], 96), "IPv4-compatible"),
    (v6([0x64, 0xff9b, 1, 0, 0, 0, 0, 0], 48), "local-use NAT64"),
    (v6([0x100, 0, 0, 0, 0, 0, 0, 0], 64), "discard-only"),
    // Teredo embeds an obfuscated IPv4 address that could be private.
    (v6([0x2001, 0, 0, 0, 0, 0, 0, 0], 32), "Teredo"),
    (v6([0x2001, 2, 0, 0, 0, 0, 0, 0], 48), "benchmarking"),
    (v6([0x2001, 0xdb8, 0, 0, 0, 0, 0, 0], 32), "documentation"),
    (v6([0x3fff, 0, 0, 0, 0, 0, 0, 0], 20), "documentation"),
    (v6([0xfc00, 0, 0, 0, 0, 0, 0, 0], 7), "unique-local"),
    (v6([0xfe80, 0, 0, 0, 0, 0, 0, 0], 10), "link-local"),
    (v6([0xfec0, 0, 0, 0, 0, 0, 0, 0], 10), "site-local"),
    (v6([0xff00, 0, 0, 0, 0, 0, 0, 0], 8), "multicast"),
];

const NAT64: Ipv6Net = v6([0x64, 0xff9b, 0, 0, 0, 0, 0, 0], 96);
/// IPv4-translated addresses (`::ffff:0:a.b.c.d`, stateless IP/ICMP translation): some hosts reach the IPv4
/// address through them.
const TRANSLATED: Ipv6Net = v6([0, 0, 0, 0, 0xffff, 0, 0, 0], 96);
const SIX_TO_FOUR: Ipv6Net = v6([0x2002, 0, 0, 0, 0, 0, 0, 0], 16);

/// Why `ip` may not receive webhooks, or `None` when it is a public address.
///
/// IPv6 forms that carry an IPv4 address (IPv4-mapped `::ffff:a.b.c.d`, IPv4-translated `::ffff:0:a.b.c.d`,
/// NAT64 `64:ff9b::a.b.c.d`, 6to4 `2002:aabb:ccdd::`) are judged by the IPv4 address they lead to; the
/// IPv4-compatible (`::a.b.c.d`) and Teredo (`2001::/32`) ranges are refused whole.
pub fn forbidden(ip: IpAddr) -> Option<&'static str> {
    match ip {
        IpAddr::V4(a) => V4_FORBIDDEN
            .iter()
            .find(|(net, _)| net.contains(&a))
            .map(|(_, why)| *why),
        IpAddr::V6(a) => {
            if let Some(inner) = a.to_ipv4_mapped() {
                return forbidden(IpAddr::V4(inner));
            }
            let s = a.segments();
            if NAT64.contains(&a) || TRANSLATED.contains(&a) {
                let inner = Ipv4Addr::from(u128::from(a) as u32);
                return forbidden(IpAddr::V4(inner));
            }
            if SIX_TO_FOUR.contains(&a) {
                let inner = Ipv4Addr::from((u32::from(s[1]) << 16) | u32::from(s[2]));
                return forbidden(IpAddr::V4(inner));
            }
            V6_FORBIDDEN
                .iter()
                .find(|(net, _)| net.contains(&a))
                .map(|(_, why)| *why)
        }
    }
}

/// Ends every refusal of a private or loopback target: how a development server may allow them.
const ALLOW_HINT: &str = "; a development server may allow private and loopback targets with \
     --allow-private-webhook-targets (allow_private_webhook_targets), never in production";

/// Why a URL may not receive webhooks; the message is the client-facing `detail`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Rejected(pub String);

impl fmt::Display for Rejected {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for Rejected {}

fn reject(msg: impl Into<String>) -> Rejected {
    Rejected(msg.into())
}

/// The host of a parsed URL, as the guard sees it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Target {
    /// An IP literal (the resolver is never consulted for it).
    Ip(IpAddr),
    /// A name, lower-case, without a trailing dot.
    Name(String),
}

/// Parses and checks what does not need DNS: `http`/`https`, a host, no credentials, no port 0, a sane length,
/// and for an IP literal (unless `allow_private`) a public address. Names that are loopback by definition
/// (`localhost`, `*.localhost`) are refused here too.
pub fn parse_url(raw: &str, allow_private: bool) -> Result<(Url, Target), Rejected> {
    let raw = raw.trim();
    if raw.is_empty() {
        return Err(reject("url must be an absolute http or https URL"));
    }
    if raw.len() > MAX_URL_LEN {
        return Err(reject(format!("url must be at most {MAX_URL_LEN} characters")));
    }
    let url = Url::parse(raw).map_err(|e| reject(format!("url is not a valid URL: {e}")))?;
    if !matches!(url.scheme(), "http" | "https") {
        return Err(reject("url must use http or https"));
    }
    if !url.username().is_empty() || url.password().is_some() {
        return Err(reject("url must not contain credentials"));
    }
    // Port 0 cannot be dialed anywhere, so such a registration could never deliver; refused like the other
    // unusable URLs rather than logged as failing on every event (and, like them, with private targets allowed).
    if url.port() == Some(0) {
        return Err(reject("url must not use port 0"));
    }
    let target = match url.host() {
        None => return Err(reject("url must have a host")),
        Some(Host::Ipv4(a)) => Target::Ip(IpAddr::V4(a)),
        Some(Host::Ipv6(a)) => Target::Ip(IpAddr::V6(a)),
        Some(Host::Domain(d)) => Target::Name(d.trim_end_matches('.').to_ascii_lowercase()),
    };
    if !allow_private {
        match &target {
            Target::Ip(ip) => {
                if let Some(why) = forbidden(*ip) {
                    return Err(reject(format!(
                        "url host {ip} is a forbidden address ({why}){ALLOW_HINT}"
                    )));
                }
            }
            Target::Name(n) if n == "localhost" || n.ends_with(".localhost") => {
                return Err(reject(format!("url host {n} is a loopback name{ALLOW_HINT}")));
            }
            Target::Name(_) => {}
        }
    }
    Ok((url, target))
}

/// The registration check: [`parse_url`], then, for a name and unless `allow_private`, every address it
/// resolves to through `resolver` must be public (a name that does not resolve is refused too).
pub async fn check_target(raw: &str, resolver: &dyn Resolve, allow_private: bool) -> Result<Url, Rejected> {
    let (url, target) = parse_url(raw, allow_private)?;
    let Target::Name(name) = target else {
        return Ok(url);
    };
    if allow_private {
        return Ok(url);
    }
    let Ok(dns_name) = Name::from_str(&name) else {
        return Err(reject(format!("url host {name} is not a valid host name")));
    };
    let addrs: Vec<SocketAddr> = match resolver.resolve(dns_name).await {
        Ok(addrs) => addrs.collect(),
        Err(e) => return Err(reject(format!("url host {name} could not be resolved: {e}"))),
    };
    if addrs.is_empty() {
        return Err(reject(format!("url host {name} has no address")));
    }
    if let Some((ip, why)) = addrs.iter().find_map(|a| forbidden(a.ip()).map(|why| (a.ip(), why))) {
        return Err(reject(format!(
            "url host {name} resolves to {ip}, a forbidden address ({why}){ALLOW_HINT}"
        )));
    }
    Ok(url)
}

/// The check made at delivery for a URL whose host is an IP literal (which no resolver sees).
/// `Err` carries the reason the attempt is blocked.
pub fn literal_target(url: &Url, allow_private: bool) -> Result<(), Blocked> {
    if allow_private {
        return Ok(());
    }
    let ip = match url.host() {
        Some(Host::Ipv4(a)) => IpAddr::V4(a),
        Some(Host::Ipv6(a)) => IpAddr::V6(a),
        _ => return Ok(()),
    };
    match forbidden(ip) {
        Some(why) => Err(Blocked(format!("{ip} is a forbidden address ({why})"))),
        None => Ok(()),
    }
}

/// A delivery target that resolved only to forbidden addresses: it was not contacted.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Blocked(pub String);

impl fmt::Display for Blocked {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "blocked: {}", self.0)
    }
}

impl std::error::Error for Blocked {}

/// Whether `err` (any error chain, e.g. from reqwest) was caused by a [`Blocked`] resolution.
pub fn is_blocked(err: &(dyn std::error::Error + 'static)) -> Option<Blocked> {
    let mut cur: Option<&(dyn std::error::Error + 'static)> = Some(err);
    while let Some(e) = cur {
        if let Some(b) = e.downcast_ref::<Blocked>() {
            return Some(b.clone());
        }
        cur = e.source();
    }
    None
}

/// The resolver of the delivery client: asks `inner` and drops every forbidden answer; when nothing is left
/// the connection fails with [`Blocked`]. With `allow_private` it passes every answer through.
#[derive(Clone)]
pub struct GuardedResolver {
    inner: Arc<dyn Resolve>,
    allow_private: bool,
}

impl GuardedResolver {
    pub fn new(inner: Arc<dyn Resolve>, allow_private: bool) -> Self {
        GuardedResolver { inner, allow_private }
    }
}

impl Resolve for GuardedResolver {
    fn resolve(&self, name: Name) -> Resolving {
        let inner = self.inner.clone();
        let allow_private = self.allow_private;
        Box::pin(async move {
            let host = name.as_str().to_string();
            let answers: Vec<SocketAddr> = inner.resolve(name).await?.collect();
            if allow_private {
                return Ok(Box::new(answers.into_iter()) as Addrs);
            }
            let total = answers.len();
            let public: Vec<SocketAddr> = answers.into_iter().filter(|a| forbidden(a.ip()).is_none()).collect();
            if public.is_empty() && total > 0 {
                return Err(Box::new(Blocked(format!("{host} resolves only to forbidden addresses"))) as _);
            }
            Ok(Box::new(public.into_iter()) as Addrs)
        })
    }
}

/// The operating system's resolver (`getaddrinfo` through tokio), the default inner resolver.
#[derive(Debug, Clone, Copy, Default)]
pub struct SystemResolver;

impl Resolve for SystemResolver {
    fn resolve(&self, name: Name) -> Resolving {
        let host = name.as_str().to_string();
        Box::pin(async move {
            let addrs: Vec<SocketAddr> = tokio::net::lookup_host((host.as_str(), 0)).await?.collect();
            Ok(Box::new(addrs.into_iter()) as Addrs)
        })
    }
}

/// A resolver with fixed answers, for tests and benchmarks: names it does not know fail to resolve.
#[derive(Debug, Clone, Default)]
pub struct StaticResolver {
    entries: std::collections::HashMap<String, Vec<IpAddr>>,
}

impl StaticResolver {
    pub fn new() -> Self {
        StaticResolver::default()
    }

    /// Answers `name` with `ips`.
    pub fn with(mut self, name: &str, ips: &[IpAddr]) -> Self {
        self.entries.insert(name.to_ascii_lowercase(), ips.to_vec());
        self
    }
}

impl Resolve for StaticResolver {
    fn resolve(&self, name: Name) -> Resolving {
        let answer = self.entries.get(&name.as_str().to_ascii_lowercase()).cloned();
        let host = name.as_str().to_string();
        Box::pin(async move {
            match answer {
                Some(ips) => Ok(Box::new(ips.into_iter().map(|ip| SocketAddr::new(ip, 0))) as Addrs),
                None => Err(format!("unknown host {host}").into()),
            }
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ip(s: &str) -> IpAddr {
        s.parse().unwrap_or_else(|e| panic!("{s}: {e}"))
    }

    /// Every forbidden range, at its edges, and public neighbours just outside.
    #[test]
    fn refusals_name_the_development_option() {
        for url in [
            "http://127.0.0.1/h",
            "http://localhost/h",
            "http://[::ffff:0:169.254.169.254]/",
        ] {
            let Err(Rejected(detail)) = parse_url(url, false) else {
                panic!("{url} accepted")
            };
            assert!(detail.contains("--allow-private-webhook-targets"), "{detail}");
        }
        assert!(parse_url("http://127.0.0.1/h", true).is_ok());
    }

    #[test]
    fn forbidden_and_allowed_addresses() {
        let forbidden_cases = [
            // IPv4
            ("0.0.0.0", "unspecified"),
            ("0.255.255.255", "unspecified"),
            ("10.0.0.0", "private"),
            ("10.255.255.255", "private"),
            ("100.64.0.0", "carrier-grade NAT"),
            ("100.127.255.255", "carrier-grade NAT"),
            ("127.0.0.1", "loopback"),
            ("127.255.255.254", "loopback"),
            ("169.254.169.254", "link-local"),
            ("172.16.0.1", "private"),
            ("172.31.255.255", "private"),
            ("192.0.0.8", "IETF"),
            ("192.0.2.1", "documentation"),
            ("192.88.99.1", "6to4 relay"),
            ("192.168.0.1", "private"),
            ("192.168.255.255", "private"),
            ("198.18.0.0", "benchmarking"),
            ("198.19.255.255", "benchmarking"),
            ("198.51.100.7", "documentation"),
            ("203.0.113.9", "documentation"),
            ("224.0.0.1", "multicast"),
            ("239.255.255.250", "multicast"),
            ("240.0.0.1", "reserved"),
            ("255.255.255.255", "broadcast"),
            // IPv6
            ("::", "unspecified"),
            ("::1", "loopback"),
            ("::7f00:1", "IPv4-compatible"),
            ("::8.8.8.8", "IPv4-compatible"),
            ("fc00::1", "unique-local"),
            ("fdff:ffff::1", "unique-local"),
            ("fe80::1", "link-local"),
            ("febf::1", "link-local"),
            ("fec0::1", "site-local"),
            ("ff02::1", "multicast"),
            ("ff0e::1", "multicast"),
            ("2001:db8::1", "documentation"),
            ("3fff::1", "documentation"),
            ("2001:2::1", "benchmarking"),
            ("2001::1", "Teredo"),
            ("100::1", "discard"),
            ("64:ff9b:1::1", "local-use NAT64"),
            // IPv4-mapped, NAT64 and 6to4 forms of forbidden IPv4 addresses
            ("::ffff:127.0.0.1", "loopback"),
            ("::ffff:7f00:1", "loopback"),
            ("::ffff:10.1.2.3", "private"),
            ("::ffff:169.254.169.254", "link-local"),
            ("::ffff:0.0.0.1", "unspecified"),
            ("::ffff:0:169.254.169.254", "link-local"),
            ("::ffff:0:127.0.0.1", "loopback"),
            ("::ffff:0:a00:1", "private"),
            ("::169.254.169.254", "IPv4-compatible"),
            ("::8.8.8.8", "IPv4-compatible"),
            ("2001:0:4136:e378:8000:63bf:3fff:fdd2", "Teredo"),
            ("64:ff9b::a9fe:a9fe", "link-local"),
            ("2002:a9fe:a9fe::1", "link-local"),
            ("64:ff9b::127.0.0.1", "loopback"),
            ("64:ff9b::a00:1", "private"),
            ("64:ff9b::100.64.0.1", "carrier-grade NAT"),
            ("2002:7f00:1::", "loopback"),
            ("2002:c0a8:101::1", "private"),
            ("2002:a9fe:a9fe::", "link-local"),
        ];
        for (addr, why) in forbidden_cases {
            let got = forbidden(ip(addr));
            assert!(
                got.is_some_and(|g| g.contains(why)),
                "{addr} should be forbidden as {why}, got {got:?}"
            );
        }
        let allowed = [
            "1.1.1.1",
            "8.8.8.8",
            "9.255.255.255",
            "11.0.0.0",
            "100.63.255.255",
            "100.128.0.0",
            "126.255.255.255",
            "128.0.0.0",
            "169.253.255.255",
            "172.15.255.255",
            "172.32.0.0",
            "192.0.1.1",
            "192.167.255.255",
            "192.169.0.0",
            "198.17.255.255",
            "198.20.0.0",
            "223.255.255.255",
            "93.184.216.34",
            "2001:4860:4860::8888",
            "2606:4700:4700::1111",
            "2a00:1450:4001::1",
            "::ffff:8.8.8.8",
            "64:ff9b::808:808",
            "2002:808:808::1",
            "2001:3::1",
            "fb00::1",
            "fe00::1",
        ];
        for addr in allowed {
            assert_eq!(forbidden(ip(addr)), None, "{addr} should be allowed");
        }
    }

    /// Every spelling the URL parser accepts for a forbidden host is refused, with the address it means.
    #[test]
    fn urls_in_every_spelling() {
        let refused = [
            ("http://127.0.0.1/", "127.0.0.1"),
            ("http://127.1/", "127.0.0.1"),
            ("http://127.0.1/", "127.0.0.1"),
            ("http://2130706433/", "127.0.0.1"),
            ("http://0x7f000001/", "127.0.0.1"),
            ("http://0x7f.1/", "127.0.0.1"),
            ("http://0x7F.0x0.0x0.0x1/", "127.0.0.1"),
            ("http://0177.0.0.1/", "127.0.0.1"),
            ("http://017700000001/", "127.0.0.1"),
            ("http://127.0.0.1./", "127.0.0.1"),
            ("http://%31%32%37.0.0.1/", "127.0.0.1"),
            ("http://\u{ff11}\u{ff12}\u{ff17}.0.0.1/", "127.0.0.1"),
            ("https://0/", "0.0.0.0"),
            ("http://0.0.0.0:8080/", "0.0.0.0"),
            ("http://10.1/", "10.0.0.1"),
            ("http://192.168.257/", "192.168.1.1"),
            ("http://3232235777/", "192.168.1.1"),
            ("http://169.254.169.254/latest/meta-data/", "169.254.169.254"),
            ("http://0xa9fea9fe/", "169.254.169.254"),
            ("http://100.64.1.1/", "100.64.1.1"),
            ("http://198.18.0.1/", "198.18.0.1"),
            ("http://255.255.255.255/", "255.255.255.255"),
            ("http://224.0.0.1/", "224.0.0.1"),
            ("http://[::1]/", "::1"),
            ("http://[0:0:0:0:0:0:0:1]/", "::1"),
            ("http://[::]/", "::"),
            ("http://[::ffff:127.0.0.1]/", "::ffff:127.0.0.1"),
            ("http://[::ffff:7f00:1]/", "::ffff:127.0.0.1"),
            ("http://[0:0:0:0:0:ffff:127.0.0.1]/", "::ffff:127.0.0.1"),
            ("http://[::127.0.0.1]/", "::7f00:1"),
            ("http://[64:ff9b::10.0.0.1]/", "64:ff9b::a00:1"),
            ("http://[2002:c0a8:101::]/", "2002:c0a8:101::"),
            ("http://[fd00::1]/", "fd00::1"),
            ("http://[fe80::1]/", "fe80::1"),
            ("http://[ff02::1]/", "ff02::1"),
            ("http://[2001:db8::1]/", "2001:db8::1"),
            ("http://[2001:2::1]/", "2001:2::1"),
        ];
        for (url, addr) in refused {
            let err = parse_url(url, false).expect_err(url);
            assert!(err.0.contains(addr), "{url}: {err}");
            // Lifted by allow_private.
            assert!(parse_url(url, true).is_ok(), "{url} with allow_private");
        }
        let names = [
            "http://localhost/",
            "http://LOCALHOST:8080/x",
            "http://api.localhost/",
            "http://localhost./",
        ];
        for url in names {
            assert!(
                parse_url(url, false).expect_err(url).0.contains("loopback name"),
                "{url}"
            );
        }
        let malformed = [
            "",
            "   ",
            "example.com/hook",
            "ftp://example.com/",
            "file:///etc/passwd",
            "javascript:alert(1)",
            "gopher://example.com/",
            "ws://example.com/",
            "http://",
            "http://256.0.0.1/",
            "http://[::1/",
            "http://exa mple.com/",
        ];
        for url in malformed {
            assert!(parse_url(url, false).is_err(), "{url:?} should be refused");
            assert!(
                parse_url(url, true).is_err(),
                "{url:?} should be refused even with allow_private"
            );
        }
        for url in [
            "http://user:pass@example.com/",
            "https://user@example.com/",
            "https://:pw@example.com/",
        ] {
            assert!(parse_url(url, true).expect_err(url).0.contains("credentials"), "{url}");
        }
        assert!(parse_url(&format!("https://example.com/{}", "a".repeat(MAX_URL_LEN)), false).is_err());

        let ok = [
            ("https://example.com/hook", Target::Name("example.com".into())),
            ("HTTPS://Example.COM./hook?x=1#f", Target::Name("example.com".into())),
            ("http://93.184.216.34:8080/x", Target::Ip(ip("93.184.216.34"))),
            ("http://1572395042/", Target::Ip(ip("93.184.216.34"))),
            ("http://[2606:4700:4700::1111]/", Target::Ip(ip("2606:4700:4700::1111"))),
            ("http://[::ffff:8.8.8.8]/", Target::Ip(ip("::ffff:8.8.8.8"))),
        ];
        for (url, target) in ok {
            let (_, got) = parse_url(url, false).unwrap_or_else(|e| panic!("{url}: {e}"));
            assert_eq!(got, target, "{url}");
        }
    }

    /// Port 0 is refused in every spelling of it, for names and addresses alike, even with private targets
    /// allowed; a URL without a port or with any other port is not.
    #[tokio::test]
    async fn port_zero_is_refused() {
        let r = StaticResolver::new().with("public.test", &[ip("93.184.216.34")]);
        for url in [
            "http://public.test:0/hook",
            "https://public.test:0/",
            "http://public.test:00/",
            "http://93.184.216.34:0/",
            "http://[2606:4700:4700::1111]:0/",
            "http://127.0.0.1:0/",
            "http://localhost:0/",
        ] {
            for allow_private in [false, true] {
                let err = check_target(url, &r, allow_private).await.expect_err(url);
                assert_eq!(
                    err.0, "url must not use port 0",
                    "{url} (allow_private {allow_private})"
                );
            }
        }
        for url in [
            "http://public.test/",
            "http://public.test:1/",
            "https://public.test:443/",
            "http://public.test:65535/",
        ] {
            assert!(check_target(url, &r, false).await.is_ok(), "{url}");
        }
    }

    #[tokio::test]
    async fn registration_resolves_names() {
        let r = StaticResolver::new()
            .with("public.test", &[ip("93.184.216.34"), ip("2606:4700::1")])
            .with("rebind.test", &[ip("93.184.216.34"), ip("10.0.0.1")])
            .with("internal.test", &[ip("127.0.0.1")])
            .with("empty.test", &[]);
        assert!(check_target("https://public.test/x", &r, false).await.is_ok());
        for (url, msg) in [
            ("https://rebind.test/", "10.0.0.1"),
            ("https://internal.test/", "127.0.0.1, a forbidden address (loopback)"),
            ("https://empty.test/", "no address"),
            ("https://unknown.test/", "could not be resolved"),
        ] {
            let err = check_target(url, &r, false).await.expect_err(url);
            assert!(err.0.contains(msg), "{url}: {err}");
        }
        // allow_private: no resolution at all.
        assert!(check_target("https://unknown.test/", &r, true).await.is_ok());
    }

    #[tokio::test]
    async fn the_guarded_resolver_drops_forbidden_answers() {
        let inner = Arc::new(
            StaticResolver::new()
                .with("mixed.test", &[ip("10.0.0.1"), ip("93.184.216.34"), ip("::1")])
                .with("private.test", &[ip("127.0.0.1"), ip("::ffff:192.168.0.1")]),
        );
        let guarded = GuardedResolver::new(inner.clone(), false);
        let got: Vec<IpAddr> = guarded
            .resolve(Name::from_str("mixed.test").unwrap())
            .await
            .unwrap()
            .map(|a| a.ip())
            .collect();
        assert_eq!(got, [ip("93.184.216.34")]);
        let Err(err) = guarded.resolve(Name::from_str("private.test").unwrap()).await else {
            panic!("private.test must be blocked");
        };
        assert!(is_blocked(err.as_ref()).is_some(), "{err}");
        // Lifted by allow_private.
        let open = GuardedResolver::new(inner, true);
        assert_eq!(
            open.resolve(Name::from_str("private.test").unwrap())
                .await
                .unwrap()
                .count(),
            2
        );
    }

    #[test]
    fn literal_targets_are_checked_at_delivery() {
        let url = |s: &str| Url::parse(s).unwrap();
        assert!(literal_target(&url("http://127.0.0.1:9/"), false).is_err());
        assert!(literal_target(&url("http://[::ffff:10.0.0.1]/"), false).is_err());
        assert!(literal_target(&url("http://127.0.0.1:9/"), true).is_ok());
        assert!(literal_target(&url("http://93.184.216.34/"), false).is_ok());
        assert!(
            literal_target(&url("http://localhost/"), false).is_ok(),
            "names go through the resolver"
        );
    }
}
