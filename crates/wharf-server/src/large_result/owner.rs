//! Whose a call's large results are: its principal's, else its session's.

use crate::context::RequestContext;

/// The owner of a call's large results: its principal, else its session; empty when it has
/// neither (a stateless request without authentication), when the unguessable link is the key.
pub(crate) fn owner_of(context: &RequestContext) -> String {
    match context.principal() {
        Some(principal) => format!("principal:{}", principal.as_str()),
        None if !context.session_id().is_empty() => format!("session:{}", context.session_id()),
        None => String::new(),
    }
}
