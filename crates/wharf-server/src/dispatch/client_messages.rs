//! What a client sends besides requests: notifications, and answers to the requests the server
//! sent it. Transports hand them over as they decoded them.

use serde_json::value::RawValue;
use wharf_protocol::{ClientNotification, ErrorCode, ErrorObject, RequestId, value_from_str};

use crate::session::Session;

/// Handles a notification from the client; one that does not decode is ignored, as
/// notifications are never answered.
pub(crate) fn notification(session: &Session, method: &str, params: Option<&RawValue>) {
    let notification = match ClientNotification::decode(method, params) {
        Ok(notification) => notification,
        Err(error) => {
            tracing::debug!(%method, %error, "ignoring a notification");
            return;
        }
    };
    match notification {
        ClientNotification::Initialized(_) => session.mark_initialized(),
        ClientNotification::Cancelled(params) => {
            if let Some(id) = params.request_id {
                let cancelled = session.cancel(&id);
                tracing::debug!(%id, cancelled, reason = params.reason.as_deref(), "cancellation requested");
            }
        }
        // Progress on server-to-client requests and roots changes need no action: Wharf asks
        // for roots afresh each time a handler wants them.
        _ => {}
    }
}

/// Hands the client's answer (a result, or an error) to the request of the server's it
/// answers; an answer to no pending request is ignored. A result that gives a member twice is
/// handed over as an error: no reading of it is the one the client meant.
pub(crate) fn answer(session: &Session, id: &RequestId, answer: Result<&RawValue, ErrorObject>) {
    let answer = answer.and_then(|raw| {
        value_from_str(raw.get()).map_err(|err| {
            ErrorObject::new(
                ErrorCode::INVALID_PARAMS,
                format!("Invalid params: the client's answer is malformed: {err}"),
            )
        })
    });
    if !session.answer(id, answer) {
        tracing::debug!(%id, "ignoring a response to no pending request");
    }
}

/// Logs an error response that names no request: the client could not read one of ours.
pub(crate) fn unaddressed_error(error: &ErrorObject) {
    tracing::warn!(code = error.code.0, message = %error.message, "the client reported an error");
}
