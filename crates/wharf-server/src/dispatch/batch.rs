//! JSON-RPC batches, which only sessions of revision 2025-03-26 may send: every message in
//! one is handled in order, and the responses to its requests go back in one array. Both the
//! number of messages and the size of that array are bounded, so that one batch cannot make
//! the server hold without bound.

use std::pin::Pin;
use std::sync::Arc;

use wharf_protocol::{Incoming, RequestId};

use super::client_messages;
use super::outcome::{answer_now, decode_error_response};
use crate::delivery::Delivery;
use crate::error::RpcError;
use crate::message_buffer;
use crate::server::Server;
use crate::session::Session;
use crate::wire::encode_error;

/// The error a batch outside a 2025-03-26 session is refused with.
pub fn batches_refused() -> RpcError {
    RpcError::invalid_request(
        "Invalid request: JSON-RPC batches are accepted only in sessions of protocol revision 2025-03-26",
    )
}

/// True when the session may send batches.
pub fn allows_batches(session: &Session) -> bool {
    session.negotiated().is_some_and(|negotiated| negotiated.version.allows_batches())
}

/// Refuses a batch of `len` messages when it is longer than the server's limit, before any of
/// it is handled.
pub fn check_batch_len(server: &Server, len: usize) -> Result<(), RpcError> {
    let limit = server.options().max_batch_len;
    if len <= limit {
        return Ok(());
    }
    Err(RpcError::invalid_request(format!(
        "Invalid request: the batch holds {len} messages, more than the batch limit of {limit} \
         (ServerOptions::max_batch_len); send fewer at once"
    )))
}

/// Handles the messages of a batch in order and returns the array of the responses to its
/// requests, or `None` when it held only notifications and responses (which get no answer).
/// Each request gets the delivery `delivery` makes: who it acts for, as the batch does. The
/// array stays within the server's answer limit but for the errors that replace the responses
/// past it.
///
/// Boxed here, behind a function that is not generic, so that the engine below it is compiled
/// once, in this crate, whichever transport awaits it (`outcome::request_work` says why).
pub fn answer_batch<'a>(
    server: &'a Server,
    session: &'a Arc<Session>,
    items: &'a [Vec<u8>],
    delivery: &'a (dyn Fn() -> Delivery + Send + Sync),
) -> Pin<Box<dyn Future<Output = Option<Vec<u8>>> + Send + 'a>> {
    Box::pin(answer_items(server, session, items, delivery))
}

async fn answer_items(
    server: &Server,
    session: &Arc<Session>,
    items: &[Vec<u8>],
    delivery: &(dyn Fn() -> Delivery + Send + Sync),
) -> Option<Vec<u8>> {
    let mut answer = BatchAnswer::new(server.options().max_batch_answer_bytes);
    for item in items {
        match Incoming::parse(item) {
            Err(error) => answer.push(decode_error_response(error)),
            Ok(Incoming::Request { id, request }) => {
                let response = answer_now(server, session, &id, request, delivery()).await;
                answer.push_within_limit(&id, response);
            }
            Ok(Incoming::Refused { id, error, .. }) => answer.push(encode_error(Some(&id), RpcError::from(error))),
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
    answer.finish()
}

/// The JSON array of a batch's responses, written as each is made, so that no response is
/// kept beside it.
struct BatchAnswer {
    array: Vec<u8>,
    limit: usize,
}

impl BatchAnswer {
    fn new(limit: usize) -> BatchAnswer {
        BatchAnswer { array: Vec::new(), limit }
    }

    fn push(&mut self, response: Vec<u8>) {
        self.array.push(if self.array.is_empty() { b'[' } else { b',' });
        self.array.extend_from_slice(&response);
        message_buffer::give_back(response);
    }

    /// Adds a request's response, or, when it would take the array past the limit, an
    /// internal error that says so.
    fn push_within_limit(&mut self, id: &RequestId, response: Vec<u8>) {
        // The separator before it and the closing bracket count too.
        let room = self.limit.saturating_sub(self.array.len() + 2);
        if response.len() <= room {
            self.push(response);
            return;
        }
        let size = response.len();
        drop(response);
        tracing::debug!(%id, size, limit = self.limit, "a response in a batch is past the batch answer limit");
        let error = RpcError::internal(format!(
            "Internal error: the request was handled, but its response of {size} bytes would take the batch's \
             answer past the limit of {} bytes (ServerOptions::max_batch_answer_bytes); send the request on \
             its own",
            self.limit
        ));
        self.push(encode_error(Some(id), error));
    }

    /// The array, or `None` when nothing in the batch is answered.
    fn finish(mut self) -> Option<Vec<u8>> {
        if self.array.is_empty() {
            return None;
        }
        self.array.push(b']');
        Some(self.array)
    }
}
