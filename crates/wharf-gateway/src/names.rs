//! Names under a namespace: `NS_name` for tools and prompts, kept within the characters and
//! length the MCP tool-name rules allow, so that every client accepts them; resource URIs
//! under a namespace, reversibly.

use std::sync::Arc;

use wharf_protocol::VIEW_SCHEME;

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

/// How an upstream's resource URIs are listed on the gateway under its namespace `ns`: behind
/// `ns+` as a scheme prefix (`file:///a.txt` is `ns+file:///a.txt`, still a URI, its scheme
/// `ns+file`), except MCP Apps views, which hosts render only as `ui://`: `ui://app/main` is
/// `ui://ns/app/main`. Both ways are reversible; without a namespace a URI is listed as it is.
#[derive(Clone, Debug, Default)]
pub(crate) struct UriPrefix {
    /// `ns+`, or empty.
    scheme: Arc<str>,
    /// `ui://ns/`, or empty.
    view: Arc<str>,
}

impl UriPrefix {
    /// The prefix for `namespace`. `_` becomes `-`, which URI schemes may hold; a namespace that
    /// does not start with a letter cannot begin a scheme, and is refused.
    pub(crate) fn new(namespace: &str) -> Result<UriPrefix, String> {
        if namespace.is_empty() {
            return Ok(UriPrefix::default());
        }
        if !namespace.starts_with(|c: char| c.is_ascii_alphabetic()) {
            return Err(format!("the namespace `{namespace}` does not start with a letter, as a URI scheme must"));
        }
        let label = namespace.replace('_', "-").to_ascii_lowercase();
        Ok(UriPrefix { scheme: format!("{label}+").into(), view: format!("{VIEW_SCHEME}{label}/").into() })
    }

    /// True without a namespace: URIs are listed as they are.
    pub(crate) fn is_empty(&self) -> bool {
        self.scheme.is_empty()
    }

    /// The gateway's URI for the upstream's `uri` (or URI template).
    pub(crate) fn outward(&self, uri: &str) -> String {
        match uri.strip_prefix(VIEW_SCHEME) {
            _ if self.is_empty() => uri.to_owned(),
            Some(view) => format!("{}{view}", self.view),
            None => format!("{}{uri}", self.scheme),
        }
    }

    /// The upstream's URI for the gateway's `uri`; `None` when `uri` is not behind this prefix.
    pub(crate) fn inward(&self, uri: &str) -> Option<String> {
        if self.is_empty() {
            return Some(uri.to_owned());
        }
        if let Some(view) = uri.strip_prefix(&*self.view) {
            return Some(format!("{VIEW_SCHEME}{view}"));
        }
        uri.strip_prefix(&*self.scheme).map(str::to_owned)
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

    #[test]
    fn resource_uris_get_a_scheme_prefix_and_views_keep_theirs_both_ways() {
        let prefix = UriPrefix::new("Docs_2").unwrap();
        assert_eq!(prefix.outward("file:///a.txt"), "docs-2+file:///a.txt");
        assert_eq!(prefix.outward("ui://app/main"), "ui://docs-2/app/main");
        assert_eq!(prefix.inward("docs-2+file:///a.txt").as_deref(), Some("file:///a.txt"));
        assert_eq!(prefix.inward("ui://docs-2/app/main").as_deref(), Some("ui://app/main"));
        // Another namespace's, or no namespace's, is not behind it.
        assert_eq!(prefix.inward("file:///a.txt"), None);
        assert_eq!(prefix.inward("ui://docs/app/main"), None);
        assert_eq!(prefix.inward("ui://app/main"), None);
        let none = UriPrefix::new("").unwrap();
        assert!(none.is_empty());
        assert_eq!(none.outward("ui://app/main"), "ui://app/main");
        assert_eq!(none.inward("file:///a.txt").as_deref(), Some("file:///a.txt"));
        assert!(UriPrefix::new("2docs").is_err());
    }
}
