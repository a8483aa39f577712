//! Who a request acts for, as the authentication in front of the server established it.

use std::sync::Arc;

/// The authenticated identity behind a request, for example an OAuth token's subject.
///
/// An authentication layer in front of [`McpService`](crate::McpService) inserts it into the
/// `http::Request`'s extensions; handlers read it with
/// [`RequestContext::principal`](crate::RequestContext::principal), and the `requestState` of
/// a multi round-trip request is only accepted back from the principal it was issued to.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct Principal(Arc<str>);

impl Principal {
    /// A principal with this identifier.
    pub fn new(id: impl Into<Arc<str>>) -> Principal {
        Principal(id.into())
    }

    /// The identifier.
    pub fn as_str(&self) -> &str {
        &self.0
    }
}
