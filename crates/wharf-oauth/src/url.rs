//! An `http(s)` URL split as written, and whether it is secure enough to trust with OAuth.

/// A URL's scheme, authority and path, as written; the query and fragment are dropped.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct UrlParts<'a> {
    /// `http` or `https`, in the case written.
    pub scheme: &'a str,
    /// The host and port (and any user information), as written.
    pub authority: &'a str,
    /// The path, empty when there is none.
    pub path: &'a str,
}

impl<'a> UrlParts<'a> {
    /// Splits an absolute `http(s)://` URL; `None` for anything else.
    pub fn parse(url: &'a str) -> Option<UrlParts<'a>> {
        let (scheme, rest) = url.split_once("://")?;
        if !scheme.eq_ignore_ascii_case("http") && !scheme.eq_ignore_ascii_case("https") {
            return None;
        }
        let rest = rest.split(['?', '#']).next().unwrap_or("");
        let (authority, path) = match rest.find('/') {
            Some(slash) => (&rest[..slash], &rest[slash..]),
            None => (rest, ""),
        };
        (!authority.is_empty()).then_some(UrlParts { scheme, authority, path })
    }

    /// `scheme://authority`.
    pub fn origin(&self) -> String {
        format!("{}://{}", self.scheme, self.authority)
    }
}

/// True when `url` is `https`, or `http` to a loopback host (a server beside its client, as in
/// tests): the only URLs OAuth documents, tokens and credentials travel to.
pub fn is_secure_enough(url: &str) -> bool {
    let Some(parts) = UrlParts::parse(url) else { return false };
    parts.scheme.eq_ignore_ascii_case("https") || wharf_protocol::is_loopback_http(url)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn urls_are_split_as_written() {
        let split = UrlParts::parse("http://localhost:41/tenant1/?q=1").unwrap();
        assert_eq!((split.origin(), split.path), ("http://localhost:41".to_owned(), "/tenant1/"));
        assert_eq!(UrlParts::parse("http://localhost:41").unwrap().path, "");
        assert!(UrlParts::parse("ftp://x/").is_none());
        assert!(UrlParts::parse("https:///path").is_none());
    }

    #[test]
    fn only_https_or_loopback_http_is_trusted() {
        assert!(is_secure_enough("https://id.example.com"));
        assert!(is_secure_enough("http://localhost:8080/x"));
        assert!(is_secure_enough("http://127.0.0.1:9"));
        assert!(is_secure_enough("http://[::1]:9/"));
        assert!(!is_secure_enough("http://id.example.com"));
        assert!(!is_secure_enough("http://localhost.example.com"));
        assert!(!is_secure_enough("http://localhost:1@other-host/"), "the host follows the user information");
    }
}
