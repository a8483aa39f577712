//! Names under a namespace: `NS_name` for tools and prompts, kept within the characters and
//! length the MCP tool-name rules allow, so that every client accepts them.

/// The longest tool name the specification recommends clients accept.
pub(crate) const MAX_NAME: usize = 128;

/// `name` under `namespace` joined by `separator`; `name` itself without a namespace.
pub(crate) fn namespaced(namespace: &str, separator: &str, name: &str) -> String {
    if namespace.is_empty() { name.to_owned() } else { format!("{namespace}{separator}{name}") }
}

/// `Ok` when `name` is one every client accepts: 1 to 128 of `A-Z a-z 0-9 _ -` (no dots, which
/// some clients refuse); else why not.
pub(crate) fn check_name(name: &str) -> Result<(), String> {
    if name.is_empty() || name.len() > MAX_NAME {
        return Err(format!("`{name}` is not 1 to {MAX_NAME} characters long"));
    }
    match name.chars().find(|c| !(c.is_ascii_alphanumeric() || *c == '_' || *c == '-')) {
        Some(c) => Err(format!("`{name}` holds `{c}`; names may hold only A-Z, a-z, 0-9, `_` and `-`")),
        None => Ok(()),
    }
}

/// What goes before an upstream's resource URIs under `namespace`: `ns+` (so that
/// `file:///a.txt` is listed as `ns+file:///a.txt`, still a URI, its scheme `ns+file`); empty
/// without a namespace. `_` becomes `-`, which URI schemes may hold; a namespace that does not
/// start with a letter cannot begin a scheme, and is refused.
pub(crate) fn uri_prefix(namespace: &str) -> Result<String, String> {
    if namespace.is_empty() {
        return Ok(String::new());
    }
    if !namespace.starts_with(|c: char| c.is_ascii_alphabetic()) {
        return Err(format!("the namespace `{namespace}` does not start with a letter, as a URI scheme must"));
    }
    Ok(format!("{}+", namespace.replace('_', "-").to_ascii_lowercase()))
}

/// True when `name` matches `pattern`, where `*` stands for any characters (none included) and
/// `?` for one.
pub(crate) fn glob_matches(pattern: &str, name: &str) -> bool {
    let (pattern, name): (Vec<char>, Vec<char>) = (pattern.chars().collect(), name.chars().collect());
    // The classic two-pointer walk: back up to the last `*` on a mismatch.
    let (mut at_pattern, mut at_name) = (0, 0);
    let mut star: Option<(usize, usize)> = None;
    while at_name < name.len() {
        match pattern.get(at_pattern) {
            Some('*') => {
                star = Some((at_pattern, at_name));
                at_pattern += 1;
            }
            Some(&expected) if expected == '?' || expected == name[at_name] => {
                at_pattern += 1;
                at_name += 1;
            }
            _ => match star {
                Some((star_at, matched)) => {
                    at_pattern = star_at + 1;
                    at_name = matched + 1;
                    star = Some((star_at, matched + 1));
                }
                None => return false,
            },
        }
    }
    pattern[at_pattern..].iter().all(|&rest| rest == '*')
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_are_joined_and_checked() {
        assert_eq!(namespaced("docs", "_", "search"), "docs_search");
        assert_eq!(namespaced("", "_", "search"), "search");
        assert!(check_name("docs_search-2").is_ok());
        assert!(check_name("docs.search").unwrap_err().contains('.'));
        assert!(check_name("").is_err() && check_name(&"x".repeat(129)).is_err());
    }

    #[test]
    fn globs_match_any_run_with_star_and_one_character_with_question_mark() {
        for (pattern, name) in [
            ("*", ""),
            ("search*", "search"),
            ("search*", "search_all"),
            ("*_all", "search_all"),
            ("s?arch", "search"),
            ("*e*e*", "deleted"),
            ("get", "get"),
        ] {
            assert!(glob_matches(pattern, name), "{pattern} matches {name}");
        }
        for (pattern, name) in
            [("search*", "research"), ("s?arch", "sarch"), ("get", "gets"), ("*_all", "all"), ("a*b", "ac")]
        {
            assert!(!glob_matches(pattern, name), "{pattern} does not match {name}");
        }
    }

    #[test]
    fn resource_uris_get_a_scheme_prefix() {
        assert_eq!(uri_prefix("Docs_2").unwrap(), "docs-2+");
        assert_eq!(uri_prefix("").unwrap(), "");
        assert!(uri_prefix("2docs").is_err());
    }
}
