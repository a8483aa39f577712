//! Tool names: the snake_case form of an identifier, and the pattern names must match.

/// `getWeather` → `get_weather`; `HTTPStatus` → `http_status`; snake_case stays as it is.
pub(crate) fn snake_case(ident: &str) -> String {
    let chars: Vec<char> = ident.chars().collect();
    let mut out = String::with_capacity(ident.len() + 4);
    for (index, &c) in chars.iter().enumerate() {
        if c.is_uppercase() {
            let previous = index.checked_sub(1).map(|i| chars[i]);
            let next = chars.get(index + 1);
            let starts_word = previous.is_some_and(|p| p.is_lowercase() || p.is_ascii_digit())
                || (previous.is_some_and(char::is_uppercase) && next.is_some_and(|n| n.is_lowercase()));
            if starts_word && !out.ends_with('_') {
                out.push('_');
            }
            out.extend(c.to_lowercase());
        } else {
            out.push(c);
        }
    }
    out
}

/// `^[A-Za-z0-9_.-]{1,128}$`, the tool names every revision accepts.
pub(crate) fn valid_tool_name(name: &str) -> bool {
    (1..=128).contains(&name.len())
        && name.bytes().all(|byte| byte.is_ascii_alphanumeric() || matches!(byte, b'_' | b'-' | b'.'))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn identifiers_become_snake_case() {
        assert_eq!(snake_case("getWeather"), "get_weather");
        assert_eq!(snake_case("get_weather"), "get_weather");
        assert_eq!(snake_case("HTTPStatus"), "http_status");
        assert_eq!(snake_case("parseV2Data"), "parse_v2_data");
        assert_eq!(snake_case("echo"), "echo");
    }

    #[test]
    fn names_follow_the_pattern() {
        assert!(valid_tool_name("get_weather.v2-beta"));
        assert!(!valid_tool_name("has space"));
        assert!(!valid_tool_name(""));
    }
}
