//! What a client sends besides requests: notifications, and answers to the requests the server
//! sent it. Transports hand them over as they decoded them.

use serde_json::value::RawValue;
use wharf_protocol::{ClientNotification, ErrorCode, ErrorObject, RequestId, value_from_str};

use crate::session::Session;

/// Handles a notification from the client; one that does not decode is ignored, as
/// notifications are never answered. False only for a cancellation of a request that is not
/// running here (it may run on another instance of the server).
pub fn notification(session: &Session, method: &str, params: Option<&RawValue>) -> bool {
    let notification = match ClientNotification::decode(method, params) {
        Ok(notification) => notification,
        Err(error) => {
            tracing::debug!(%method, %error, "ignoring a notification");
            return true;
        }
    };
    match notification {
        ClientNotification::Initialized(_) => session.mark_initialized(),
        ClientNotification::Cancelled(params) => {
            if let Some(id) = params.request_id {
                let cancelled = session.cancel(&id);
                tracing::debug!(%id, cancelled, reason = params.reason.as_deref(), "cancellation requested");
                return cancelled;
            }
        }
        // Progress on server-to-client requests and roots changes need no action: Wharf asks
        // for roots afresh each time a handler wants them.
        _ => {}
    }
    true
}

/// Hands the client's answer (a result, or an error) to the request of the server's it
/// answers; an answer to no pending request is ignored. A result that gives a member twice is
/// handed over as an error: no reading of it is the one the client meant. False when no request
/// here awaited it.
pub fn answer(session: &Session, id: &RequestId, answer: Result<&RawValue, ErrorObject>) -> bool {
    let answer = answer.and_then(|raw| {
        value_from_str(raw.get()).map_err(|err| {
            ErrorObject::new(
                ErrorCode::INVALID_PARAMS,
                format!("Invalid params: the client's answer is malformed: {err}"),
            )
        })
    });
    let awaited = session.answer(id, answer);
    if !awaited {
        tracing::debug!(%id, "a response to no pending request here");
    }
    awaited
}

/// Logs an error response that names no request: the client could not read one of ours.
pub fn unaddressed_error(error: &ErrorObject) {
    tracing::warn!(code = error.code.0, message = %error.message, "the client reported an error");
}
