//! What a client does when a server asks something of it: elicitation (form and URL modes),
//! sampling and roots, whether the question comes as a 2025 server-to-client request or as an
//! input request of a 2026-07-28 `InputRequiredResult`.

use std::future::Future;
use std::pin::Pin;

use wharf_protocol::{
    ClientCapabilities, CreateMessageParams, CreateMessageResult, ElicitAction, ElicitParams, ElicitResult, ErrorCode,
    ErrorObject, ListRootsResult,
};

/// A boxed future that answers one question of the server.
pub type Answer<'a, T> = Pin<Box<dyn Future<Output = Result<T, ErrorObject>> + Send + 'a>>;

/// Answers the server's questions. Every method has a default that refuses politely, so an
/// implementation overrides only what it supports, and declares it in
/// [`ClientHandler::capabilities`] (servers ask only what clients declared).
pub trait ClientHandler: Send + Sync + 'static {
    /// The capabilities this handler supports, declared to the server.
    fn capabilities(&self) -> ClientCapabilities {
        ClientCapabilities::default()
    }

    /// Asks the user for input (`elicitation/create`). The default declines.
    fn elicit(&self, params: ElicitParams) -> Answer<'_, ElicitResult> {
        let _ = params;
        Box::pin(async { Ok(ElicitResult { action: ElicitAction::Decline, content: None, meta: None }) })
    }

    /// Asks the client's model for a message (`sampling/createMessage`). The default refuses
    /// with `-32601`, as a client without sampling does.
    fn create_message(&self, params: CreateMessageParams) -> Answer<'_, CreateMessageResult> {
        let _ = params;
        Box::pin(async { Err(unsupported("sampling/createMessage")) })
    }

    /// Lists the client's roots (`roots/list`). The default refuses with `-32601`.
    fn list_roots(&self) -> Answer<'_, ListRootsResult> {
        Box::pin(async { Err(unsupported("roots/list")) })
    }

    /// False while this handler, given to one request with
    /// [`RequestOptions::handler`](crate::RequestOptions::handler), cannot take a question the
    /// transport does not relate to a request (a gateway's request waiting between rounds for
    /// its own client): such a question then goes to another request in flight. True by
    /// default.
    fn takes_unrelated_questions(&self) -> bool {
        true
    }
}

/// The error a client answers a question it does not support with.
pub fn unsupported(method: &str) -> ErrorObject {
    ErrorObject::new(ErrorCode::METHOD_NOT_FOUND, format!("this client does not support `{method}`"))
}

/// The handler of a client that supports nothing: elicitation declined, the rest refused.
#[derive(Debug, Clone, Copy, Default)]
pub struct NoHandler;

impl ClientHandler for NoHandler {}
