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
}
