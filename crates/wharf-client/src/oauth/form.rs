//! URL pieces OAuth needs without a URL library: percent-encoding of form and query values,
//! reading a query, and a URL's origin and path kept exactly as written (issuers and resources
//! are compared as strings, so nothing may be normalized).

/// Percent-encodes everything but RFC 3986's unreserved characters.
pub(crate) fn encode(value: &str) -> String {
    let mut encoded = String::with_capacity(value.len());
    for byte in value.bytes() {
        if byte.is_ascii_alphanumeric() || b"-._~".contains(&byte) {
            encoded.push(byte as char);
        } else {
            encoded.push_str(&format!("%{byte:02X}"));
        }
    }
    encoded
}

/// `key=value&...`, each part percent-encoded.
pub(crate) fn form(pairs: &[(&str, &str)]) -> String {
    pairs.iter().map(|(key, value)| format!("{}={}", encode(key), encode(value))).collect::<Vec<_>>().join("&")
}

/// Decodes `%XX` escapes, and `+` as a space (form encoding).
pub(crate) fn decode(text: &str) -> String {
    let bytes = text.as_bytes();
    let mut decoded = Vec::with_capacity(bytes.len());
    let mut at = 0;
    while at < bytes.len() {
        match bytes[at] {
            b'%' if at + 2 < bytes.len() => {
                match std::str::from_utf8(&bytes[at + 1..at + 3]).ok().and_then(|hex| u8::from_str_radix(hex, 16).ok())
                {
                    Some(byte) => {
                        decoded.push(byte);
                        at += 3;
                        continue;
                    }
                    None => decoded.push(b'%'),
                }
            }
            b'+' => decoded.push(b' '),
            byte => decoded.push(byte),
        }
        at += 1;
    }
    String::from_utf8_lossy(&decoded).into_owned()
}

/// The parameters of a URL's query, decoded, in order.
pub(crate) fn query_pairs(url: &str) -> Vec<(String, String)> {
    let query = url.split_once('?').map(|(_, query)| query).unwrap_or("");
    let query = query.split('#').next().unwrap_or("");
    query
        .split('&')
        .filter(|pair| !pair.is_empty())
        .map(|pair| match pair.split_once('=') {
            Some((key, value)) => (decode(key), decode(value)),
            None => (decode(pair), String::new()),
        })
        .collect()
}

/// The scopes an authorization request's URL asks for (its `scope` parameter): for an
/// authorizer that shows them, or names them in what it tells the person.
pub fn requested_scopes(authorization_url: &str) -> Vec<String> {
    query_pairs(authorization_url)
        .into_iter()
        .filter(|(key, _)| key == "scope")
        .flat_map(|(_, scope)| scope.split_whitespace().map(str::to_owned).collect::<Vec<_>>())
        .collect()
}

/// `url` with `pairs` added to its query.
pub(crate) fn with_query(url: &str, pairs: &[(&str, &str)]) -> String {
    let joiner = if url.contains('?') { '&' } else { '?' };
    format!("{url}{joiner}{}", form(pairs))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn values_round_trip_through_encoding() {
        let value = "a b&c=d/é?";
        assert_eq!(encode(value), "a%20b%26c%3Dd%2F%C3%A9%3F");
        assert_eq!(decode(&encode(value)), value);
        assert_eq!(decode("x+y%2"), "x y%2");
        assert_eq!(form(&[("scope", "a b"), ("k", "v")]), "scope=a%20b&k=v");
    }

    #[test]
    fn a_redirect_query_is_read_and_urls_are_split_as_written() {
        let pairs = query_pairs("http://localhost:3000/callback?code=abc&state=x%2By&iss=http%3A%2F%2Fh#frag");
        assert_eq!(pairs[0], ("code".to_owned(), "abc".to_owned()));
        assert_eq!(pairs[1], ("state".to_owned(), "x+y".to_owned()));
        assert_eq!(pairs[2], ("iss".to_owned(), "http://h".to_owned()));
        assert_eq!(with_query("https://as/authorize", &[("a", "1")]), "https://as/authorize?a=1");
        assert_eq!(with_query("https://as/authorize?x=2", &[("a", "1")]), "https://as/authorize?x=2&a=1");
        let authorize = with_query("https://as/authorize", &[("client_id", "c"), ("scope", "mcp demo:admin")]);
        assert_eq!(requested_scopes(&authorize), ["mcp", "demo:admin"]);
        assert!(requested_scopes("https://as/authorize?client_id=c").is_empty());
    }
}
