//! The access token of a request: from its one `Authorization` header, `Bearer` (RFC 6750 §2.1)
//! or, when the server takes them, `DPoP` (RFC 9449 §7.1), never from the query string, with
//! its syntax checked before anyone decodes it (a token verified before is found by its hash
//! first, and needs no second look).

use http::HeaderMap;
use http::header::AUTHORIZATION;
use wharf_http::AuthRefusal;

/// The longest token accepted; longer ones are refused before they are decoded.
pub(crate) const MAX_TOKEN_BYTES: usize = 16 * 1024;

/// How a request presents its token.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Scheme {
    Bearer,
    Dpop,
}

/// The token a request presents, as it came: its bytes not yet checked, for a token verified
/// before (found by its hash) needs no second look; [`Presented::checked`] looks at one that
/// was not.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Presented<'a> {
    pub(crate) scheme: Scheme,
    /// The token, after the scheme and the spaces that follow it.
    pub(crate) bytes: &'a [u8],
    /// The whole header value, to tell a value that is not text from a malformed token.
    value: &'a [u8],
}

/// The token a request presents, and its scheme. No `Authorization` header, or another scheme
/// than `Bearer` (and `DPoP` when `dpop`), is a request without credentials (401 without an
/// error code); two headers, or a token in the query string as well, a malformed request (400).
pub(crate) fn presented<'a>(
    headers: &'a HeaderMap,
    query: Option<&str>,
    dpop: bool,
) -> Result<Presented<'a>, AuthRefusal> {
    let mut values = headers.get_all(AUTHORIZATION).iter();
    let Some(value) = values.next() else {
        return Err(AuthRefusal::missing());
    };
    if values.next().is_some() {
        return Err(AuthRefusal::invalid_request("more than one Authorization header"));
    }
    // Read as bytes: a token is most of the header, on every request.
    let value = value.as_bytes();
    let (scheme, token) = match value.iter().position(|&byte| byte == b' ') {
        Some(space) => (&value[..space], &value[space + 1..]),
        None => (value, &b""[..]),
    };
    let scheme = if scheme.eq_ignore_ascii_case(b"bearer") {
        Scheme::Bearer
    } else if dpop && scheme.eq_ignore_ascii_case(b"dpop") {
        Scheme::Dpop
    } else if is_text(value) {
        return Err(AuthRefusal::missing());
    } else {
        return Err(not_text());
    };
    let bytes = &token[token.iter().take_while(|&&byte| byte == b' ').count()..];
    if query.is_some_and(has_access_token) {
        return Err(AuthRefusal::invalid_request("the token is sent in more than one way"));
    }
    Ok(Presented { scheme, bytes, value })
}

impl<'a> Presented<'a> {
    /// The token, its syntax checked: an empty or ill-formed token, or a header that is not
    /// text, is a malformed request (400); an oversized token an invalid one (401).
    pub(crate) fn checked(&self) -> Result<&'a str, AuthRefusal> {
        if self.bytes.is_empty() || !is_token68(self.bytes) {
            if !is_text(self.value) {
                return Err(not_text());
            }
            return Err(AuthRefusal::invalid_request("the bearer token is not a token68 value"));
        }
        if self.bytes.len() > MAX_TOKEN_BYTES {
            return Err(AuthRefusal::invalid_token("the token is too long"));
        }
        // ASCII, as token68 is.
        std::str::from_utf8(self.bytes).map_err(|_| not_text())
    }

    /// The token of bytes checked before (a token verified earlier, found by its hash): text
    /// without a second look at its syntax.
    pub(crate) fn known_good(&self) -> Result<&'a str, AuthRefusal> {
        std::str::from_utf8(self.bytes).map_err(|_| not_text())
    }

    /// True when the token may be looked up by its hash: no longer than any token accepted,
    /// so that an oversized one is not hashed before it is refused.
    pub(crate) fn may_be_known(&self) -> bool {
        self.bytes.len() <= MAX_TOKEN_BYTES
    }
}

#[cfg(test)]
pub(crate) fn token<'a>(
    headers: &'a HeaderMap,
    query: Option<&str>,
    dpop: bool,
) -> Result<(Scheme, &'a str), AuthRefusal> {
    let presented = presented(headers, query, dpop)?;
    Ok((presented.scheme, presented.checked()?))
}

fn not_text() -> AuthRefusal {
    AuthRefusal::invalid_request("the Authorization header is not text")
}

/// What `HeaderValue::to_str` takes: visible ASCII, spaces and tabs.
fn is_text(value: &[u8]) -> bool {
    value.iter().all(|&byte| byte == b'\t' || (b' '..=b'~').contains(&byte))
}

/// RFC 7235 `token68`'s characters before its trailing `=`, by byte.
const TOKEN68_BODY: [bool; 256] = {
    let mut table = [false; 256];
    let mut byte = 0;
    while byte < 256 {
        let b = byte as u8;
        table[byte] = b.is_ascii_alphanumeric() || matches!(b, b'-' | b'.' | b'_' | b'~' | b'+' | b'/');
        byte += 1;
    }
    table
};

/// RFC 7235 `token68`: `1*( ALPHA / DIGIT / "-" / "." / "_" / "~" / "+" / "/" ) *"="`.
fn is_token68(token: &[u8]) -> bool {
    let body = match token.iter().rposition(|&byte| byte != b'=') {
        Some(last) => &token[..=last],
        None => return false,
    };
    body.iter().all(|&byte| TOKEN68_BODY[usize::from(byte)])
}

/// True when the query string carries an `access_token` parameter (RFC 6750 §2.3), which this
/// server never reads.
fn has_access_token(query: &str) -> bool {
    query.split('&').any(|pair| pair.split('=').next() == Some("access_token"))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn headers(values: &[&str]) -> HeaderMap {
        let mut headers = HeaderMap::new();
        for value in values {
            headers.append(AUTHORIZATION, value.parse().unwrap());
        }
        headers
    }

    fn code(result: Result<(Scheme, &str), AuthRefusal>) -> Option<&'static str> {
        result.unwrap_err().error_code()
    }

    #[test]
    fn token68_is_its_grammar_byte_by_byte() {
        for byte in 0..=255u8 {
            let expected = byte.is_ascii_alphanumeric() || b"-._~+/".contains(&byte);
            assert_eq!(is_token68(&[byte]), expected, "byte {byte:#04x}");
        }
        assert!(is_token68(b"a") && is_token68(b"a==") && is_token68(&[b'x'; 200]));
        assert!(!is_token68(b"") && !is_token68(b"==") && !is_token68(b"a=b"));
        let mut long = vec![b'x'; 200];
        long[130] = b'!';
        assert!(!is_token68(&long), "a bad byte in a later chunk");
    }

    #[test]
    fn one_bearer_header_is_read_and_everything_else_refused() {
        let good = headers(&["Bearer abc.DEF-_~+/9=="]);
        assert_eq!(token(&good, None, false).unwrap(), (Scheme::Bearer, "abc.DEF-_~+/9=="));
        assert_eq!(token(&headers(&["bearer  abc"]), None, false).unwrap(), (Scheme::Bearer, "abc"));
        // `DPoP` only where the server takes it; elsewhere it is no credentials at all.
        assert_eq!(token(&headers(&["DPoP abc"]), None, true).unwrap(), (Scheme::Dpop, "abc"));
        assert_eq!(code(token(&headers(&["DPoP abc"]), None, false)), None);
        assert_eq!(code(token(&HeaderMap::new(), Some("access_token=abc"), false)), None, "the query is never read");
        assert_eq!(code(token(&headers(&["Basic YW5uOnB3"]), None, false)), None);
        assert_eq!(code(token(&headers(&["Bearer a", "Bearer b"]), None, false)), Some("invalid_request"));
        assert_eq!(code(token(&headers(&["Bearer"]), None, false)), Some("invalid_request"));
        assert_eq!(code(token(&headers(&["Bearer a b"]), None, false)), Some("invalid_request"));
        assert_eq!(code(token(&headers(&["Bearer ===="]), None, false)), Some("invalid_request"));
        assert_eq!(code(token(&good, Some("x=1&access_token=abc"), false)), Some("invalid_request"));
        assert_eq!(code(token(&headers(&["Bearer \tabc"]), None, false)), Some("invalid_request"));
        let raw = |bytes: &[u8]| {
            let mut headers = HeaderMap::new();
            headers.append(AUTHORIZATION, http::HeaderValue::from_bytes(bytes).unwrap());
            headers
        };
        // Bytes that are not text are refused as such, whatever the scheme.
        assert_eq!(code(token(&raw(b"Bearer ab\xffc"), None, false)), Some("invalid_request"));
        assert_eq!(code(token(&raw(b"Basic ab\xffc"), None, false)), Some("invalid_request"));
        let long = format!("Bearer {}", "a".repeat(MAX_TOKEN_BYTES + 1));
        assert_eq!(code(token(&headers(&[&long]), None, false)), Some("invalid_token"));
    }
}
