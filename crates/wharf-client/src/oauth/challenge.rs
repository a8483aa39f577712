//! `WWW-Authenticate` challenges (RFC 9110 §11.6.1, RFC 6750 §3): the scheme and the
//! parameters an MCP client acts on (`resource_metadata`, `scope`, `error`).

/// One challenge, its parameter names lower-cased.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub(crate) struct Challenge {
    /// `Bearer` or `DPoP`.
    pub(crate) scheme: String,
    pub(crate) params: Vec<(String, String)>,
}

impl Challenge {
    pub(crate) fn param(&self, name: &str) -> Option<&str> {
        self.params.iter().find(|(key, _)| key == name).map(|(_, value)| value.as_str())
    }

    /// The scopes the challenge names, in order.
    pub(crate) fn scopes(&self) -> Vec<String> {
        self.param("scope").map(|scope| scope.split_whitespace().map(str::to_owned).collect()).unwrap_or_default()
    }
}

/// The first `Bearer` or `DPoP` challenge of a header value, or the first challenge of any
/// scheme.
pub(crate) fn parse(header: &str) -> Option<Challenge> {
    let challenges = all(header);
    let preferred = challenges.iter().position(|challenge| {
        challenge.scheme.eq_ignore_ascii_case("bearer") || challenge.scheme.eq_ignore_ascii_case("dpop")
    });
    preferred.map(|at| challenges[at].clone()).or_else(|| challenges.into_iter().next())
}

/// Every challenge of a header value: `Scheme name=value, name="quoted, value", Other ...`.
fn all(header: &str) -> Vec<Challenge> {
    let mut challenges: Vec<Challenge> = Vec::new();
    let mut rest = header.trim();
    while !rest.is_empty() {
        rest = rest.trim_start_matches([',', ' ', '\t']);
        // A token followed by `=` is a parameter of the current challenge; otherwise it starts
        // a new challenge.
        let token_end = rest.find(|c: char| c == '=' || c == ',' || c.is_whitespace()).unwrap_or(rest.len());
        let token = &rest[..token_end];
        if token.is_empty() {
            break;
        }
        let after = rest[token_end..].trim_start();
        if let (Some(value_text), Some(current)) = (after.strip_prefix('='), challenges.last_mut()) {
            let value_text = value_text.trim_start();
            let (value, remaining) = if let Some(quoted) = value_text.strip_prefix('"') {
                let mut value = String::new();
                let mut chars = quoted.char_indices();
                let mut end = quoted.len();
                while let Some((at, c)) = chars.next() {
                    match c {
                        '\\' => {
                            if let Some((_, escaped)) = chars.next() {
                                value.push(escaped);
                            }
                        }
                        '"' => {
                            end = at + 1;
                            break;
                        }
                        c => value.push(c),
                    }
                }
                (value, &quoted[end.min(quoted.len())..])
            } else {
                let end = value_text.find(',').unwrap_or(value_text.len());
                (value_text[..end].trim().to_owned(), &value_text[end..])
            };
            current.params.push((token.to_ascii_lowercase(), value));
            rest = remaining;
        } else {
            challenges.push(Challenge { scheme: token.to_owned(), params: Vec::new() });
            rest = after;
        }
    }
    challenges
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parameters_are_read_in_any_order_quoted_or_not() {
        let challenge = parse(
            r#"Bearer error="insufficient_scope", scope="mcp:read mcp:write", resource_metadata="http://h/.well-known/oauth-protected-resource/mcp""#,
        )
        .unwrap();
        assert_eq!(challenge.scheme, "Bearer");
        assert_eq!(challenge.param("error"), Some("insufficient_scope"));
        assert_eq!(challenge.scopes(), ["mcp:read", "mcp:write"]);
        assert_eq!(challenge.param("resource_metadata"), Some("http://h/.well-known/oauth-protected-resource/mcp"));
        let bare = parse("DPoP resource_metadata=http://h/x, error=invalid_token").unwrap();
        assert_eq!(bare.scheme, "DPoP");
        assert_eq!(bare.param("resource_metadata"), Some("http://h/x"));
        assert_eq!(bare.param("error"), Some("invalid_token"));
    }

    #[test]
    fn the_bearer_challenge_is_chosen_among_several() {
        let chosen = parse(r#"Basic realm="x", Bearer scope="a""#).unwrap();
        assert_eq!((chosen.scheme.as_str(), chosen.scopes()), ("Bearer", vec!["a".to_owned()]));
        let escaped = parse(r#"Bearer error_description="say \"hi\", then go""#).unwrap();
        assert_eq!(escaped.param("error_description"), Some(r#"say "hi", then go"#));
        assert!(parse("").is_none());
    }
}
