//! Arguments written into a request as the document says: a path parameter as exactly one
//! path segment (so that no value can change the path: `/`, `?`, `#`, `%`, control characters
//! are percent-encoded, and `.`, `..` and the empty segment are refused), query, header and
//! cookie values by their `style` and `explode`, and a form body.

use serde_json::Value;

/// The characters RFC 3986 lets stand unencoded in a segment or a query value.
fn is_unreserved(byte: u8) -> bool {
    byte.is_ascii_alphanumeric() || matches!(byte, b'-' | b'.' | b'_' | b'~')
}

/// `text` with every byte but the unreserved ones percent-encoded.
pub(crate) fn percent_encode(text: &str) -> String {
    let mut encoded = String::with_capacity(text.len());
    for &byte in text.as_bytes() {
        if is_unreserved(byte) {
            encoded.push(char::from(byte));
        } else {
            encoded.push('%');
            encoded.push(char::from(b"0123456789ABCDEF"[usize::from(byte >> 4)]));
            encoded.push(char::from(b"0123456789ABCDEF"[usize::from(byte & 0xF)]));
        }
    }
    encoded
}

/// A scalar as the text it stands for in a URL or header: a string as it is, a number or
/// boolean as JSON writes it, null as empty.
fn scalar_text(value: &Value) -> String {
    match value {
        Value::String(text) => text.clone(),
        Value::Null => String::new(),
        other => other.to_string(),
    }
}

/// The parts of a value by the `simple`/`form` rules: a scalar is one; an array its items; an
/// object its keys and values in turn (or `key=value` pairs when exploded).
fn parts(value: &Value, explode: bool) -> Vec<String> {
    match value {
        Value::Array(items) => items.iter().map(scalar_text).collect(),
        Value::Object(members) if explode => {
            members.iter().map(|(key, value)| format!("{key}={}", scalar_text(value))).collect()
        }
        Value::Object(members) => members.iter().flat_map(|(key, value)| [key.clone(), scalar_text(value)]).collect(),
        scalar => vec![scalar_text(scalar)],
    }
}

/// The path segment for a path parameter's `value` (style `simple`): percent-encoded whole, so
/// that it is one segment and nothing else; an error for a value that would be no segment or
/// a dot segment, which servers resolve against the path.
pub(crate) fn path_segment(name: &str, value: &Value) -> Result<String, String> {
    let text = parts(value, false).join(",");
    if text.is_empty() || text == "." || text == ".." {
        return Err(format!("the path parameter `{name}` cannot be `{text}`: it must name one path segment"));
    }
    Ok(percent_encode(&text))
}

/// The query pairs (already encoded) for the query parameter `name` of `value`, by `style`
/// (`form` when absent) and `explode` (true for `form` when absent).
pub(crate) fn query_pairs(name: &str, value: &Value, style: Option<&str>, explode: Option<bool>) -> Vec<String> {
    let style = style.unwrap_or("form");
    let explode = explode.unwrap_or(style == "form");
    let key = percent_encode(name);
    match (style, value) {
        ("deepObject", Value::Object(members)) => members
            .iter()
            .map(|(member, value)| {
                format!("{}={}", percent_encode(&format!("{name}[{member}]")), percent_encode(&scalar_text(value)))
            })
            .collect(),
        ("form", Value::Object(members)) if explode => members
            .iter()
            .map(|(member, value)| format!("{}={}", percent_encode(member), percent_encode(&scalar_text(value))))
            .collect(),
        ("form", Value::Array(items)) if explode => {
            items.iter().map(|item| format!("{key}={}", percent_encode(&scalar_text(item)))).collect()
        }
        (style, value) => {
            let separator = match style {
                "spaceDelimited" => " ",
                "pipeDelimited" => "|",
                _ => ",",
            };
            let joined: Vec<String> = parts(value, false).iter().map(|part| percent_encode(part)).collect();
            vec![format!("{key}={}", joined.join(&percent_encode(separator)))]
        }
    }
}

/// A header's value for `value` (style `simple`); an error for one holding a line break or
/// another control character, which could end the header and start another.
pub(crate) fn header_value(name: &str, value: &Value, explode: Option<bool>) -> Result<String, String> {
    let text = parts(value, explode.unwrap_or(false)).join(",");
    if text.chars().any(|c| c.is_control()) {
        return Err(format!("the header parameter `{name}` holds a control character (a line break, say)"));
    }
    Ok(text)
}

/// A cookie's `name=value` pair for `value` (style `form`), the value percent-encoded so that
/// it cannot end the cookie.
pub(crate) fn cookie_pair(name: &str, value: &Value) -> String {
    let joined: Vec<String> = parts(value, false).iter().map(|part| percent_encode(part)).collect();
    format!("{}={}", percent_encode(name), joined.join(","))
}

/// An `application/x-www-form-urlencoded` body for the object `value`: each member a pair,
/// arrays repeated, nested objects as JSON text.
pub(crate) fn form_body(value: &Value) -> String {
    let Value::Object(members) = value else { return String::new() };
    let mut pairs = Vec::new();
    for (key, value) in members {
        let key = percent_encode(key);
        match value {
            Value::Array(items) => {
                pairs.extend(items.iter().map(|item| format!("{key}={}", percent_encode(&form_text(item)))));
            }
            other => pairs.push(format!("{key}={}", percent_encode(&form_text(other)))),
        }
    }
    pairs.join("&")
}

fn form_text(value: &Value) -> String {
    match value {
        Value::Object(_) | Value::Array(_) => value.to_string(),
        scalar => scalar_text(scalar),
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn a_path_parameter_is_one_segment_whatever_it_holds() {
        for (value, segment) in [
            ("../admin", "..%2Fadmin"),
            ("..%2Fadmin", "..%252Fadmin"),
            ("a/b", "a%2Fb"),
            ("x?y=1#z", "x%3Fy%3D1%23z"),
            ("\u{0}", "%00"),
            ("http://evil.example/", "http%3A%2F%2Fevil.example%2F"),
            ("line\r\nbreak", "line%0D%0Abreak"),
            ("snow ☃", "snow%20%E2%98%83"),
            ("plain-1.2_~", "plain-1.2_~"),
        ] {
            assert_eq!(path_segment("id", &json!(value)).unwrap(), segment, "{value}");
        }
        for refused in ["", ".", ".."] {
            let err = path_segment("id", &json!(refused)).unwrap_err();
            assert!(err.contains("one path segment"), "{err}");
        }
        assert_eq!(path_segment("id", &json!(42)).unwrap(), "42");
        assert_eq!(path_segment("ids", &json!([1, 2])).unwrap(), "1%2C2");
    }

    #[test]
    fn query_values_follow_their_style_and_explode() {
        assert_eq!(query_pairs("q", &json!("a b&c"), None, None), ["q=a%20b%26c"]);
        assert_eq!(query_pairs("id", &json!([3, 4]), None, None), ["id=3", "id=4"]);
        assert_eq!(query_pairs("id", &json!([3, 4]), Some("form"), Some(false)), ["id=3%2C4"]);
        assert_eq!(query_pairs("id", &json!([3, 4]), Some("pipeDelimited"), None), ["id=3%7C4"]);
        assert_eq!(query_pairs("id", &json!([3, 4]), Some("spaceDelimited"), None), ["id=3%204"]);
        assert_eq!(query_pairs("f", &json!({"a": 1, "b": "x"}), None, None), ["a=1", "b=x"]);
        assert_eq!(query_pairs("f", &json!({"a": 1}), Some("deepObject"), Some(true)), ["f%5Ba%5D=1"]);
        assert_eq!(query_pairs("on", &json!(true), None, None), ["on=true"]);
    }

    #[test]
    fn header_values_cannot_break_the_header_and_cookies_cannot_break_the_cookie() {
        assert_eq!(header_value("X-Ids", &json!([1, 2]), None).unwrap(), "1,2");
        assert_eq!(header_value("X-Obj", &json!({"a": 1}), Some(true)).unwrap(), "a=1");
        let err = header_value("X-Trace", &json!("a\r\nX-Admin: 1"), None).unwrap_err();
        assert!(err.contains("control character"), "{err}");
        assert_eq!(cookie_pair("session", &json!("a; admin=1")), "session=a%3B%20admin%3D1");
    }

    #[test]
    fn a_form_body_writes_each_member() {
        assert_eq!(
            form_body(&json!({"name": "Rex & co", "tags": ["a", "b"], "n": 2})),
            "n=2&name=Rex%20%26%20co&tags=a&tags=b"
        );
    }
}
