//! JSON-RPC batches, which only sessions of revision 2025-03-26 may send: every message in
//! one is handled in order, and the responses to its requests go back in one array.

use std::sync::Arc;

use wharf_protocol::Incoming;

use super::answer::{answer_now, decode_error_response};
use super::client_messages;
use crate::delivery::Delivery;
use crate::error::RpcError;
use crate::server::Server;
use crate::session::Session;
use crate::wire::encode_error;

/// The error a batch outside a 2025-03-26 session is refused with.
pub(crate) fn batches_refused() -> RpcError {
    RpcError::invalid_request(
        "Invalid request: JSON-RPC batches are accepted only in sessions of protocol revision 2025-03-26",
    )
}

/// True when the session may send batches.
pub(crate) fn allows_batches(session: &Session) -> bool {
    session.negotiated().is_some_and(|negotiated| negotiated.version.allows_batches())
}

/// Handles the messages of a batch in order and returns the array of the responses to its
/// requests, or `None` when it held only notifications and responses (which get no answer).
/// Each request gets the delivery `delivery` makes: who it acts for, as the batch does.
pub(crate) async fn answer_batch(
    server: &Server,
    session: &Arc<Session>,
    items: &[Vec<u8>],
    delivery: impl Fn() -> Delivery,
) -> Option<Vec<u8>> {
    let mut responses: Vec<Vec<u8>> = Vec::new();
    for item in items {
        match Incoming::parse(item) {
            Err(error) => responses.push(decode_error_response(error)),
            Ok(Incoming::Request { id, request }) => {
                responses.push(answer_now(server, session, &id, request, delivery()).await);
            }
            Ok(Incoming::Refused { id, error, .. }) => responses.push(encode_error(Some(&id), RpcError::from(error))),
            Ok(Incoming::Notification { method, params }) => {
                client_messages::notification(session, &method, params);
            }
            Ok(Incoming::Response { id, result }) => {
                client_messages::answer(session, &id, Ok(result));
            }
            Ok(Incoming::Error { id: Some(id), error }) => {
                client_messages::answer(session, &id, Err(error));
            }
            Ok(Incoming::Error { id: None, error }) => client_messages::unaddressed_error(&error),
        }
    }
    if responses.is_empty() {
        return None;
    }
    let mut array = Vec::with_capacity(responses.iter().map(Vec::len).sum::<usize>() + responses.len() + 2);
    array.push(b'[');
    for (index, response) in responses.iter().enumerate() {
        if index > 0 {
            array.push(b',');
        }
        array.extend_from_slice(response);
    }
    array.push(b']');
    Some(array)
}
