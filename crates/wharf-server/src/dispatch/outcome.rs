//! The one response every request gets: its answer, its error, or, when its handler panicked,
//! an internal error, so that the connection lives on.

use std::pin::Pin;
use std::sync::Arc;

use wharf_protocol::{ClientRequest, DecodeError, RequestId};

use crate::delivery::Delivery;
use crate::error::RpcError;
use crate::panic::CatchUnwind;
use crate::server::Server;
use crate::session::Session;
use crate::wire::encode_error;

use super::request_outcome;

/// What a request's work ended with: its response or error, or the message of its panic.
pub type Outcome = Result<Result<Vec<u8>, RpcError>, String>;

/// The response a request's work produced: its answer, its error, or an internal error if it
/// panicked.
pub fn response_or_panic(outcome: Outcome, id: &RequestId) -> Vec<u8> {
    match outcome {
        Ok(Ok(response)) => response,
        Ok(Err(error)) => encode_error(Some(id), error),
        Err(panic) => encode_error(Some(id), panic_error(id, &panic)),
    }
}

/// The internal error a request whose handler panicked is answered with.
pub fn panic_error(id: &RequestId, panic: &str) -> RpcError {
    tracing::error!(%id, panic = %panic, "a handler panicked");
    RpcError::internal(format!("Internal error: the handler panicked: {panic}"))
}

/// The error response to a message that could not be decoded.
pub fn decode_error_response(error: DecodeError) -> Vec<u8> {
    encode_error(error.id.as_ref(), RpcError::from(error.error))
}

/// A request's work as a transport holds it: [`request_outcome`] with its panics caught, boxed.
pub type RequestWork = Pin<Box<dyn Future<Output = Outcome> + Send>>;

/// The work of a request, to poll where the transport likes (first in place, then as a task of
/// its own if it waits). Boxed here, behind a function that is not generic: an `async` body is
/// compiled in every crate that awaits it, as a generic is, so a transport awaiting
/// [`request_outcome`] itself would compile the whole engine again.
pub fn request_work(
    server: Server,
    session: Arc<Session>,
    id: RequestId,
    request: ClientRequest,
    delivery: Delivery,
) -> RequestWork {
    Box::pin(CatchUnwind::new(request_outcome(server, session, id, request, delivery)))
}

/// Handles a request to completion in the caller's task, for requests that are neither
/// registered as in flight nor cancellable (`initialize`, and requests inside a batch).
pub async fn answer_now(
    server: &Server,
    session: &Arc<Session>,
    id: &RequestId,
    request: wharf_protocol::ClientRequest,
    delivery: Delivery,
) -> Vec<u8> {
    let work = request_outcome(server.clone(), session.clone(), id.clone(), request, delivery);
    response_or_panic(CatchUnwind::new(work).await, id)
}
