//! DNS-rebinding protection: the `Host` and `Origin` allowlists, checked on every request.

use http::HeaderMap;
use http::header::{HOST, ORIGIN};

use super::options::HttpOptions;

/// Why a request was refused.
#[derive(Debug, PartialEq, Eq)]
pub(crate) enum Refusal {
    Host,
    Origin,
}

/// Checks `Host` and `Origin` against the allowlists.
pub(crate) fn check(options: &HttpOptions, headers: &HeaderMap) -> Result<(), Refusal> {
    check_host(options, headers)?;
    if let (Some(allowed), Some(origin)) = (&options.allowed_origins, headers.get(ORIGIN))
        && !origin_host(origin.as_bytes()).is_some_and(|host| is_listed(allowed, host))
    {
        return Err(Refusal::Origin);
    }
    Ok(())
}

/// Checks `Host` alone: for documents any web page may read.
pub(crate) fn check_host(options: &HttpOptions, headers: &HeaderMap) -> Result<(), Refusal> {
    if let Some(allowed) = &options.allowed_hosts {
        let host = headers.get(HOST).and_then(|value| authority_host(value.as_bytes()));
        if !host.is_some_and(|host| is_listed(allowed, host)) {
            return Err(Refusal::Host);
        }
    }
    Ok(())
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

/// The host of `host[:port]`, `[v6]` or `[v6]:port`, or None for anything else: read in one
/// pass, which finds the first `:` (a port follows it, unless the host is bracketed) and any
/// byte that has no place in an authority.
fn authority_host(authority: &[u8]) -> Option<&[u8]> {
    let mut colon = None;
    for (at, &byte) in authority.iter().enumerate() {
        match byte {
            b'@' | b'/' | b'?' | b'#' | b' ' | b'\\' => return None,
            b':' if colon.is_none() => colon = Some(at),
            _ => {}
        }
    }
    if authority.first() == Some(&b'[') {
        let end = authority.iter().position(|&byte| byte == b']')?;
        let (host, rest) = authority.split_at(end + 1);
        return (rest.is_empty() || valid_port(rest.strip_prefix(b":")?)).then_some(host);
    }
    match colon {
        Some(at) => {
            let (host, port) = (&authority[..at], &authority[at + 1..]);
            (valid_port(port) && !host.is_empty()).then_some(host)
        }
        None => (!authority.is_empty()).then_some(authority),
    }
}

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
            (Some("localhost"), Some("http://evil.example.com"), Refusal::Origin),
            (Some("localhost"), Some("http://user@localhost"), Refusal::Origin),
            (Some("localhost"), Some("null"), Refusal::Origin),
            (Some("localhost"), Some("file://localhost"), Refusal::Origin),
        ] {
            assert_eq!(check(&options, &headers(host, origin)), Err(refusal), "{host:?} {origin:?}");
        }
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
