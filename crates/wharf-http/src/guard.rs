//! DNS-rebinding protection: the `Host` and `Origin` allowlists, checked on every request.

use http::header::{HOST, ORIGIN};
use http::{HeaderMap, HeaderValue};

use super::options::HttpOptions;

/// Why a request was refused.
#[derive(Debug, PartialEq, Eq)]
pub(crate) enum Refusal {
    Host,
    Origin,
}

/// Checks `Host` and `Origin` against the allowlists.
pub(crate) fn check(options: &HttpOptions, headers: &HeaderMap) -> Result<(), Refusal> {
    if options.allowed_hosts.is_none() && options.allowed_origins.is_none() {
        return Ok(());
    }
    let (host, origin) = host_and_origin(headers);
    check_host_value(options, host)?;
    if let (Some(allowed), Some(origin)) = (&options.allowed_origins, origin)
        && !origin_host(origin.as_bytes()).is_some_and(|host| is_listed(allowed, host))
    {
        return Err(Refusal::Origin);
    }
    Ok(())
}

/// Checks `Host` alone: for documents any web page may read.
pub(crate) fn check_host(options: &HttpOptions, headers: &HeaderMap) -> Result<(), Refusal> {
    check_host_value(options, headers.get(HOST))
}

fn check_host_value(options: &HttpOptions, host: Option<&HeaderValue>) -> Result<(), Refusal> {
    if let Some(allowed) = &options.allowed_hosts {
        let host = host.and_then(|value| authority_host(value.as_bytes()));
        if !host.is_some_and(|host| is_listed(allowed, host)) {
            return Err(Refusal::Host);
        }
    }
    Ok(())
}

/// The first `Host` and `Origin` values (as [`HeaderMap::get`] gives them), found in one pass
/// over the few headers of a request rather than by two lookups, each hashing its name.
fn host_and_origin(headers: &HeaderMap) -> (Option<&HeaderValue>, Option<&HeaderValue>) {
    let (mut host, mut origin) = (None, None);
    for (name, value) in headers {
        if *name == HOST {
            host.get_or_insert(value);
        } else if *name == ORIGIN {
            origin.get_or_insert(value);
        }
    }
    (host, origin)
}

/// True when `origin` may see responses (for CORS).
pub(crate) fn origin_allowed(options: &HttpOptions, origin: &str) -> bool {
    match &options.allowed_origins {
        None => true,
        Some(allowed) => origin_host(origin.as_bytes()).is_some_and(|host| is_listed(allowed, host)),
    }
}

/// True when `host` is one of `allowed`, in any case. Compared as bytes: a listed name is text,
/// so bytes equal to it are that text.
fn is_listed(allowed: &[String], host: &[u8]) -> bool {
    allowed.iter().any(|candidate| candidate.as_bytes().eq_ignore_ascii_case(host))
}

/// The host of an `Origin` value such as `http://localhost:3000`. Values with user info,
/// paths, or anything unusual are not parsed: refusing them is the safe reading.
fn origin_host(origin: &[u8]) -> Option<&[u8]> {
    let rest = origin.strip_prefix(b"http://").or_else(|| origin.strip_prefix(b"https://"))?;
    authority_host(rest)
}

/// The host of `host[:port]`, `[v6]` or `[v6]:port`, or None for anything else, including any
/// byte that has no place in an authority.
fn authority_host(authority: &[u8]) -> Option<&[u8]> {
    if authority.iter().any(|&byte| NOT_IN_AUTHORITY[usize::from(byte)]) {
        return None;
    }
    if authority.first() == Some(&b'[') {
        let end = authority.iter().position(|&byte| byte == b']')?;
        let (host, rest) = authority.split_at(end + 1);
        return (rest.is_empty() || valid_port(rest.strip_prefix(b":")?)).then_some(host);
    }
    match authority.iter().position(|&byte| byte == b':') {
        Some(at) => {
            let (host, port) = (&authority[..at], &authority[at + 1..]);
            (valid_port(port) && !host.is_empty()).then_some(host)
        }
        None => (!authority.is_empty()).then_some(authority),
    }
}

/// The bytes refused anywhere in an authority (user info, a path, a query or fragment, a space,
/// a backslash), as a table: one load per byte of the header.
const NOT_IN_AUTHORITY: [bool; 256] = {
    let mut table = [false; 256];
    let refused = b"@/?# \\";
    let mut at = 0;
    while at < refused.len() {
        table[refused[at] as usize] = true;
        at += 1;
    }
    table
};

fn valid_port(port: &[u8]) -> bool {
    !port.is_empty() && port.len() <= 5 && port.iter().all(u8::is_ascii_digit)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn headers(host: Option<&str>, origin: Option<&str>) -> HeaderMap {
        let mut headers = HeaderMap::new();
        if let Some(host) = host {
            headers.insert(HOST, host.parse().unwrap());
        }
        if let Some(origin) = origin {
            headers.insert(ORIGIN, origin.parse().unwrap());
        }
        headers
    }

    #[test]
    fn loopback_hosts_and_origins_pass_by_default() {
        let options = HttpOptions::default();
        for (host, origin) in [
            ("localhost:3000", None),
            ("127.0.0.1", Some("http://127.0.0.1:3000")),
            ("[::1]:8080", Some("https://localhost")),
            ("LOCALHOST:1", Some("http://[::1]:9")),
        ] {
            assert_eq!(check(&options, &headers(Some(host), origin)), Ok(()), "{host} {origin:?}");
        }
    }

    #[test]
    fn other_hosts_and_origins_are_refused() {
        let options = HttpOptions::default();
        for (host, origin, refusal) in [
            (Some("evil.example.com"), None, Refusal::Host),
            (None, None, Refusal::Host),
            (Some("user@localhost:3000"), None, Refusal::Host),
            (Some("localhost:abc"), None, Refusal::Host),
            (Some("localhost.evil.com"), None, Refusal::Host),
            (Some("localhost:80:90"), None, Refusal::Host),
            (Some(":80"), None, Refusal::Host),
            (Some(""), None, Refusal::Host),
            (Some("[::1]x"), None, Refusal::Host),
            (Some("localhost:123456"), None, Refusal::Host),
            (Some("localhost/x"), None, Refusal::Host),
            (Some("localhost?x"), None, Refusal::Host),
            (Some("localhost#x"), None, Refusal::Host),
            (Some("local host"), None, Refusal::Host),
            (Some("localhost\\x"), None, Refusal::Host),
            (Some("[::1]:80@x"), None, Refusal::Host),
            (Some("localhost"), Some("http://evil.example.com"), Refusal::Origin),
            (Some("localhost"), Some("http://user@localhost"), Refusal::Origin),
            (Some("localhost"), Some("null"), Refusal::Origin),
            (Some("localhost"), Some("file://localhost"), Refusal::Origin),
        ] {
            assert_eq!(check(&options, &headers(host, origin)), Err(refusal), "{host:?} {origin:?}");
        }
    }

    #[test]
    fn the_first_host_and_origin_of_several_decide() {
        let options = HttpOptions::default();
        let mut evil_first = headers(Some("evil.example.com"), Some("http://evil.example.com"));
        evil_first.append(HOST, "localhost".parse().unwrap());
        assert_eq!(check(&options, &evil_first), Err(Refusal::Host));
        let mut good_first = headers(Some("localhost"), Some("http://localhost"));
        good_first.append(HOST, "evil.example.com".parse().unwrap());
        good_first.append(ORIGIN, "http://evil.example.com".parse().unwrap());
        assert_eq!(check(&options, &good_first), Ok(()));
        good_first.insert(ORIGIN, "http://evil.example.com".parse().unwrap());
        good_first.append(ORIGIN, "http://localhost".parse().unwrap());
        assert_eq!(check(&options, &good_first), Err(Refusal::Origin));
    }

    #[test]
    fn allowlists_can_be_widened_or_turned_off() {
        let options = HttpOptions::default().allowed_hosts(["mcp.example.com"]).allow_any_origin();
        assert_eq!(check(&options, &headers(Some("mcp.example.com:443"), Some("https://any.where"))), Ok(()));
        assert_eq!(check(&options, &headers(Some("localhost"), None)), Err(Refusal::Host));
        let open = HttpOptions::default().allow_any_host();
        assert_eq!(check(&open, &headers(Some("anything"), None)), Ok(()));
    }
}
