//! Who a request acts for, as the authentication in front of the server established it: an
//! identity (issuer and subject), and the client, scopes and claims it came with.

use std::hash::{Hash, Hasher};
use std::sync::Arc;

use wharf_protocol::JsonObject;

/// The authenticated identity behind a request, for example an OAuth token's issuer and subject.
///
/// Its identity ([`Principal::as_str`]) is the issuer and the subject alone: two tokens of the
/// same user, a refreshed one with other scopes say, are the same principal, so they share a
/// session, its tasks and its `requestState`. The client id, scopes and claims are attributes
/// of the request, not of the identity, and do not take part in equality.
///
/// An authentication layer in front of the HTTP endpoint (`wharf_http::McpService`) inserts it into the
/// `http::Request`'s extensions (the `wharf-auth` crate does, from a verified bearer token);
/// handlers read it with [`RequestContext::principal`](crate::RequestContext::principal).
#[derive(Debug, Clone)]
pub struct Principal(Arc<Attributes>);

#[derive(Debug, Clone)]
struct Attributes {
    /// `subject`, or `issuer` and `subject` separated by a space (an issuer is a URL, which
    /// has none): one string, so that the identity is compared and hashed at once.
    identity: Box<str>,
    /// Where `subject` starts in `identity`.
    subject_at: usize,
    client_id: Option<Box<str>>,
    scopes: Box<[Box<str>]>,
    /// A granted scope covers only itself, not those below it.
    exact_scopes: bool,
    claims: Option<JsonObject>,
}

impl Principal {
    /// A principal with this identifier and no issuer.
    pub fn new(id: impl Into<String>) -> Principal {
        let identity: String = id.into();
        Principal(Arc::new(Attributes {
            identity: identity.into_boxed_str(),
            subject_at: 0,
            client_id: None,
            scopes: Box::new([]),
            exact_scopes: false,
            claims: None,
        }))
    }

    /// The principal `subject` of `issuer`, as an access token names them (`iss` and `sub`).
    pub fn issued(issuer: &str, subject: &str) -> Principal {
        Principal::new(format!("{issuer} {subject}")).changed(|attributes| attributes.subject_at = issuer.len() + 1)
    }

    /// With the OAuth client the request came through.
    pub fn with_client_id(self, client_id: impl Into<String>) -> Principal {
        self.changed(|attributes| attributes.client_id = Some(client_id.into().into_boxed_str()))
    }

    /// With the scopes its credentials grant.
    pub fn with_scopes<S: Into<String>>(self, scopes: impl IntoIterator<Item = S>) -> Principal {
        let scopes: Box<[Box<str>]> = scopes.into_iter().map(|scope| scope.into().into_boxed_str()).collect();
        self.changed(|attributes| attributes.scopes = scopes)
    }

    /// With its scopes matched exactly: a granted scope covers only itself, not the narrower
    /// ones below it that [`Principal::has_scope`] otherwise grants (`files` then does not
    /// cover `files:read`). For deployments whose issuer names scopes without a hierarchy
    /// (`wharf-auth`'s `ResourceServerBuilder::exact_scopes`, `wharf serve --auth-exact-scopes`).
    pub fn with_exact_scopes(self) -> Principal {
        self.changed(|attributes| attributes.exact_scopes = true)
    }

    /// With the verified claims of its credentials (an access token's payload).
    pub fn with_claims(self, claims: JsonObject) -> Principal {
        self.changed(|attributes| attributes.claims = Some(claims))
    }

    fn changed(self, change: impl FnOnce(&mut Attributes)) -> Principal {
        let mut attributes = Arc::unwrap_or_clone(self.0);
        change(&mut attributes);
        Principal(Arc::new(attributes))
    }

    /// The identity: the subject, preceded by the issuer and a space when there is one.
    /// Equal for every request of the same user of the same issuer.
    pub fn as_str(&self) -> &str {
        &self.0.identity
    }

    /// The issuer, for a principal made with [`Principal::issued`].
    pub fn issuer(&self) -> Option<&str> {
        let at = self.0.subject_at;
        (at > 0).then(|| &self.0.identity[..at - 1])
    }

    /// The subject: who within the issuer.
    pub fn subject(&self) -> &str {
        &self.0.identity[self.0.subject_at..]
    }

    /// The OAuth client the request came through, when known.
    pub fn client_id(&self) -> Option<&str> {
        self.0.client_id.as_deref()
    }

    /// The scopes granted.
    pub fn scopes(&self) -> impl Iterator<Item = &str> {
        self.0.scopes.iter().map(|scope| &**scope)
    }

    /// True when `scope` was granted, or a broader scope that implies it: `files` implies
    /// `files:read` and `files:read:own` (a scope covers those that extend it after a `:`), as
    /// 2026-07-28 asks servers to honour scope hierarchies. With
    /// [`Principal::with_exact_scopes`], only `scope` itself.
    pub fn has_scope(&self, scope: &str) -> bool {
        if self.0.exact_scopes {
            return self.0.scopes.iter().any(|granted| **granted == *scope);
        }
        self.0.scopes.iter().any(|granted| covers(granted, scope))
    }

    /// The verified claims, when the authentication kept them.
    pub fn claims(&self) -> Option<&JsonObject> {
        self.0.claims.as_ref()
    }
}

/// True when the scope `granted` is `required` or a broader scope above it.
fn covers(granted: &str, required: &str) -> bool {
    match required.strip_prefix(granted) {
        Some(rest) => rest.is_empty() || rest.starts_with(':'),
        None => false,
    }
}

impl PartialEq for Principal {
    fn eq(&self, other: &Principal) -> bool {
        self.0.identity == other.0.identity
    }
}

impl Eq for Principal {}

impl Hash for Principal {
    fn hash<H: Hasher>(&self, state: &mut H) {
        self.0.identity.hash(state);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_identity_is_the_issuer_and_subject_and_nothing_else() {
        let first = Principal::issued("https://issuer.example", "ann").with_scopes(["files:read"]);
        let refreshed = Principal::issued("https://issuer.example", "ann").with_scopes(["files:read", "files:write"]);
        assert_eq!(first, refreshed);
        assert_eq!(first.as_str(), "https://issuer.example ann");
        assert_eq!(first.issuer(), Some("https://issuer.example"));
        assert_eq!(first.subject(), "ann");
        assert!(refreshed.has_scope("files:write") && !first.has_scope("files:write"));
        assert_ne!(first, Principal::issued("https://other.example", "ann"));
        assert_ne!(first, Principal::new("ann"));
        let plain = Principal::new("a b");
        assert_eq!((plain.issuer(), plain.subject()), (None, "a b"));
    }

    #[test]
    fn a_broader_scope_implies_the_narrower_ones_below_it() {
        let principal = Principal::new("cy").with_scopes(["files", "mail:read"]);
        assert!(principal.has_scope("files") && principal.has_scope("files:read") && principal.has_scope("files:a:b"));
        assert!(principal.has_scope("mail:read") && !principal.has_scope("mail") && !principal.has_scope("mail:send"));
        assert!(!principal.has_scope("filesystem") && !principal.has_scope("file"));
        let exact = principal.with_exact_scopes();
        assert!(exact.has_scope("files") && exact.has_scope("mail:read"));
        assert!(!exact.has_scope("files:read"), "exact matching grants nothing below a scope");
    }

    #[test]
    fn the_client_id_is_kept() {
        let principal = Principal::new("bo").with_scopes(["a"]).with_client_id("cli");
        assert_eq!(principal.client_id(), Some("cli"));
        assert_eq!(principal.scopes().collect::<Vec<_>>(), ["a"]);
    }
}
