//! URI references resolved against a base (RFC 3986, section 5), and the fragments of the
//! result: what a `$ref` or an `$id` means depends on the URI of the schema it is in.

/// The base of a schema that names no URI of its own.
pub(crate) const DEFAULT_BASE: &str = "json-schema:///";

/// The five parts of a URI reference; absent parts are `None`.
struct Parts<'a> {
    scheme: Option<&'a str>,
    authority: Option<&'a str>,
    path: &'a str,
    query: Option<&'a str>,
    fragment: Option<&'a str>,
}

fn parts(reference: &str) -> Parts<'_> {
    let (rest, fragment) = match reference.split_once('#') {
        Some((rest, fragment)) => (rest, Some(fragment)),
        None => (reference, None),
    };
    let (rest, query) = match rest.split_once('?') {
        Some((rest, query)) => (rest, Some(query)),
        None => (rest, None),
    };
    let scheme_end = rest.find(':').filter(|&end| {
        let scheme = &rest[..end];
        !scheme.is_empty()
            && scheme.starts_with(|c: char| c.is_ascii_alphabetic())
            && scheme.chars().all(|c| c.is_ascii_alphanumeric() || matches!(c, '+' | '-' | '.'))
            && !rest[..end].contains('/')
    });
    let (scheme, rest) = match scheme_end {
        Some(end) => (Some(&rest[..end]), &rest[end + 1..]),
        None => (None, rest),
    };
    let (authority, path) = match rest.strip_prefix("//") {
        Some(after) => {
            let end = after.find('/').unwrap_or(after.len());
            (Some(&after[..end]), &after[end..])
        }
        None => (None, rest),
    };
    Parts { scheme, authority, path, query, fragment }
}

/// Removes `.` and `..` segments from a path (RFC 3986, 5.2.4).
fn remove_dot_segments(path: &str) -> String {
    let mut output: Vec<&str> = Vec::new();
    let absolute = path.starts_with('/');
    let segments: Vec<&str> = path.split('/').collect();
    let last = segments.len().saturating_sub(1);
    for (index, segment) in segments.iter().enumerate() {
        if index == 0 && absolute {
            continue;
        }
        match *segment {
            "." => {
                if index == last {
                    output.push("");
                }
            }
            ".." => {
                output.pop();
                if index == last {
                    output.push("");
                }
            }
            other => output.push(other),
        }
    }
    let joined = output.join("/");
    if absolute { format!("/{joined}") } else { joined }
}

/// `reference` resolved against the absolute URI `base`.
pub(crate) fn resolve(base: &str, reference: &str) -> String {
    let r = parts(reference);
    let b = parts(base);
    let (scheme, authority, path, query);
    if r.scheme.is_some() {
        scheme = r.scheme;
        authority = r.authority;
        path = remove_dot_segments(r.path);
        query = r.query;
    } else {
        scheme = b.scheme;
        if r.authority.is_some() {
            authority = r.authority;
            path = remove_dot_segments(r.path);
            query = r.query;
        } else {
            authority = b.authority;
            if r.path.is_empty() {
                path = b.path.to_owned();
                query = r.query.or(b.query);
            } else {
                path = if r.path.starts_with('/') {
                    remove_dot_segments(r.path)
                } else if b.authority.is_some() && b.path.is_empty() {
                    remove_dot_segments(&format!("/{}", r.path))
                } else {
                    let directory = b.path.rfind('/').map_or("", |end| &b.path[..=end]);
                    remove_dot_segments(&format!("{directory}{}", r.path))
                };
                query = r.query;
            }
        }
    }
    let mut out = String::with_capacity(base.len() + reference.len());
    if let Some(scheme) = scheme {
        out.push_str(scheme);
        out.push(':');
    }
    if let Some(authority) = authority {
        out.push_str("//");
        out.push_str(authority);
    }
    out.push_str(&path);
    if let Some(query) = query {
        out.push('?');
        out.push_str(query);
    }
    if let Some(fragment) = r.fragment.filter(|fragment| !fragment.is_empty()) {
        out.push('#');
        out.push_str(fragment);
    }
    out
}

/// A URI split at its fragment: the URI without it, and the fragment, percent-decoded (empty
/// when there is none).
pub(crate) fn split_fragment(uri: &str) -> (&str, String) {
    match uri.split_once('#') {
        Some((resource, fragment)) => (resource, percent_decoded(fragment)),
        None => (uri, String::new()),
    }
}

fn percent_decoded(text: &str) -> String {
    if !text.contains('%') {
        return text.to_owned();
    }
    let bytes = text.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut index = 0;
    while index < bytes.len() {
        let hex = |at: usize| bytes.get(at).and_then(|&b| (b as char).to_digit(16));
        match (bytes[index], hex(index + 1), hex(index + 2)) {
            (b'%', Some(high), Some(low)) => {
                out.push((high * 16 + low) as u8);
                index += 3;
            }
            (byte, _, _) => {
                out.push(byte);
                index += 1;
            }
        }
    }
    String::from_utf8_lossy(&out).into_owned()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn references_resolve_as_rfc_3986_says() {
        let base = "http://a/b/c/d;p?q";
        for (reference, expected) in [
            ("g", "http://a/b/c/g"),
            ("./g", "http://a/b/c/g"),
            ("g/", "http://a/b/c/g/"),
            ("/g", "http://a/g"),
            ("//g", "http://g"),
            ("?y", "http://a/b/c/d;p?y"),
            ("#s", "http://a/b/c/d;p?q#s"),
            ("", "http://a/b/c/d;p?q"),
            ("../g", "http://a/b/g"),
            ("../..", "http://a/"),
            ("../../../g", "http://a/g"),
            ("g;x=1/../y", "http://a/b/c/y"),
            ("urn:x:y", "urn:x:y"),
        ] {
            assert_eq!(resolve(base, reference), expected, "{reference}");
        }
        assert_eq!(resolve(DEFAULT_BASE, "foo.json"), "json-schema:///foo.json");
        assert_eq!(resolve("urn:uuid:deadbeef", "#/$defs/a"), "urn:uuid:deadbeef#/$defs/a");
        assert_eq!(split_fragment("x#/a%25b"), ("x", "/a%b".to_owned()));
    }
}
