//! [`Scopes`]: the OAuth scopes a tool, prompt or resource requires of the principal that lists
//! or uses it.

use crate::principal::Principal;

/// The scopes a component requires: a principal sees it in lists and may use it only if its
/// credentials grant every one. A component that requires scopes is hidden from, and refused
/// to, requests without a principal (stdio, unless the embedding program sets one).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Scopes(Box<[Box<str>]>);

impl Scopes {
    /// The scopes named, in order, without repeats.
    pub fn new<S: Into<String>>(scopes: impl IntoIterator<Item = S>) -> Scopes {
        let mut kept: Vec<Box<str>> = Vec::new();
        for scope in scopes {
            let scope = scope.into().into_boxed_str();
            if !kept.contains(&scope) {
                kept.push(scope);
            }
        }
        Scopes(kept.into_boxed_slice())
    }

    /// True when nothing is required.
    pub(crate) fn is_empty(&self) -> bool {
        self.0.is_empty()
    }

    /// True when `principal` may see and use what requires these scopes.
    pub(crate) fn allow(&self, principal: Option<&Principal>) -> bool {
        self.0.is_empty() || principal.is_some_and(|principal| self.0.iter().all(|scope| principal.has_scope(scope)))
    }

    /// The scopes, in the order they were named.
    pub fn names(&self) -> impl Iterator<Item = &str> {
        self.0.iter().map(|scope| &**scope)
    }

    /// Checks that each scope is a `scope-token` of RFC 6749 §3.3: printable ASCII without
    /// spaces, `"` or `\`, so that it can stand in a scope list and a `WWW-Authenticate` header.
    pub(crate) fn check(&self) -> Result<(), String> {
        for scope in self.names() {
            if !is_scope_token(scope) {
                return Err(format!("the scope `{scope}` is not a valid OAuth scope (RFC 6749 §3.3)"));
            }
        }
        Ok(())
    }
}

/// True for an RFC 6749 §3.3 `scope-token`: one or more of `%x21 / %x23-5B / %x5D-7E`
/// (printable ASCII but space, `"` and `\`).
pub fn is_scope_token(scope: &str) -> bool {
    !scope.is_empty() && scope.bytes().all(|byte| matches!(byte, 0x21 | 0x23..=0x5b | 0x5d..=0x7e))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_principal_needs_every_scope_and_no_principal_none() {
        let scopes = Scopes::new(["files:read", "files:write", "files:read"]);
        assert_eq!(scopes.names().collect::<Vec<_>>(), ["files:read", "files:write"]);
        let reader = Principal::new("ann").with_scopes(["files:read"]);
        let writer = Principal::new("bo").with_scopes(["files:write", "files:read", "other"]);
        assert!(!scopes.allow(Some(&reader)));
        assert!(scopes.allow(Some(&writer)));
        assert!(!scopes.allow(None));
        assert!(Scopes::default().allow(None));
    }

    #[test]
    fn scope_tokens_are_checked() {
        assert!(Scopes::new(["files:read", "a!b#c"]).check().is_ok());
        for bad in ["", "two words", "quote\"", "back\\slash", "tab\t", "é"] {
            assert!(Scopes::new([bad]).check().is_err(), "{bad:?}");
        }
    }
}
