//! Whether a URL is plain HTTP to this machine: the only plain-HTTP URLs Wharf's OAuth code
//! talks to (an issuer or a server beside it, as in tests). One check, which the resource
//! server and the client share, reading the authority as RFC 3986 §3.2 does.

use std::net::IpAddr;

/// True for an `http` URL whose host is `localhost` or a loopback IP address
/// (`http://127.0.0.1:8080/…`, `http://[::1]/…`, `http://localhost/…`).
///
/// The host is what follows the last `@` of the authority, as every HTTP client reads it:
/// `http://localhost:1@other-host/` goes to `other-host`, whatever comes before the `@`. An
/// authority holding a character RFC 3986 does not allow there (a `\`, a space), or a port
/// that is not digits, is not taken as loopback: parsers read such URLs differently.
///
/// ```
/// assert!(wharf_protocol::is_loopback_http("http://127.0.0.1:9/token"));
/// assert!(!wharf_protocol::is_loopback_http("http://localhost:1@other-host/"));
/// ```
pub fn is_loopback_http(url: &str) -> bool {
    let Some((scheme, rest)) = url.split_once("://") else { return false };
    if !scheme.eq_ignore_ascii_case("http") {
        return false;
    }
    let authority = rest.split(['/', '?', '#']).next().unwrap_or_default();
    if !authority.bytes().all(is_authority_byte) {
        return false;
    }
    let host_and_port = authority.rsplit('@').next().unwrap_or_default();
    let (host, port) = match host_and_port.strip_prefix('[') {
        Some(bracketed) => match bracketed.split_once(']') {
            Some((host, "")) => (host, ""),
            Some((host, after)) => match after.strip_prefix(':') {
                Some(port) => (host, port),
                None => return false,
            },
            None => return false,
        },
        None => host_and_port.split_once(':').unwrap_or((host_and_port, "")),
    };
    if !port.bytes().all(|byte| byte.is_ascii_digit()) {
        return false;
    }
    host.eq_ignore_ascii_case("localhost") || host.parse::<IpAddr>().is_ok_and(|ip| ip.is_loopback())
}

/// A byte RFC 3986 allows in an authority: unreserved, percent-encoded, sub-delims, `:`, `@`,
/// and the brackets of an IP literal.
fn is_authority_byte(byte: u8) -> bool {
    byte.is_ascii_alphanumeric() || b"-._~%!$&'()*+,;=:@[]".contains(&byte)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn loopback_hosts_over_plain_http_are_recognised() {
        for url in [
            "http://127.0.0.1:8080/.well-known/openid-configuration",
            "http://[::1]:9/x",
            "http://localhost/x",
            "HTTP://LOCALHOST:3000",
            "http://127.0.0.2/",
            "http://user@localhost/",
            "http://localhost?q",
        ] {
            assert!(is_loopback_http(url), "{url}");
        }
    }

    /// The user information before `@` is not the host (issue 38).
    #[test]
    fn a_host_hidden_behind_user_information_or_odd_characters_is_not_loopback() {
        for url in [
            "http://localhost:1@other-host/",
            "http://127.0.0.1@other-host/",
            "http://[::1]@other-host/",
            "http://localhost@127.0.0.1.nip.io/",
            "http://other-host\\@localhost/",
            "http://localhost\\@other-host/",
            "http://localhost:80x/",
            "http://[::1]x/",
            "http://[::1/",
            "http://id.example.com/x",
            "http://127.0.0.1.nip.io/x",
            "http://localhost.evil/",
            "https://127.0.0.1/x",
            "localhost:80",
            "http:/localhost/",
        ] {
            assert!(!is_loopback_http(url), "{url}");
        }
    }
}
