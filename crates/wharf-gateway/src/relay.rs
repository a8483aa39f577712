//! Who answers an upstream's questions during one forwarded request (elicitation, sampling,
//! roots): the gateway's own client, asked at once in its 2025 session, or, when that client
//! speaks 2026-07-28 and must be asked in an `InputRequiredResult`, a queue of questions the
//! forwarding request takes up and parks the upstream request on.

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};

use serde_json::Value;
use tokio::sync::{mpsc, oneshot};
use wharf_client::{Answer, ClientHandler};
use wharf_protocol::{
    ClientCapabilities, CreateMessageParams, CreateMessageResult, ElicitParams, ElicitResult, EmptyParams, ErrorCode,
    ErrorObject, FromJson, InputRequest, ListRootsResult, Root,
};
use wharf_server::{RequestContext, RpcError};

/// One question of the upstream, waiting for the gateway's client's answer.
pub(crate) struct Question {
    pub(crate) request: InputRequest,
    pub(crate) answer: oneshot::Sender<Result<Value, ErrorObject>>,
}

/// Answers the questions an upstream asks during one request of the gateway's client.
pub(crate) enum Relay {
    /// Asks the client at once: a server-to-client request in its 2025 session.
    Direct(RequestContext),
    /// Hands each question to the forwarding request, which asks for it in an
    /// `InputRequiredResult` (2026-07-28) and answers it when the client retries; `parked` is
    /// true while that request waits for the retry, and takes no question of another.
    Queued { questions: mpsc::UnboundedSender<Question>, parked: Arc<AtomicBool> },
}

impl Relay {
    /// A relay for `context`'s client, as the handler of the upstream request.
    pub(crate) fn direct(context: &RequestContext) -> Arc<dyn ClientHandler> {
        Arc::new(Relay::Direct(context.clone()))
    }

    async fn ask<T: FromJson>(&self, request: InputRequest) -> Result<T, ErrorObject> {
        let value = match self {
            Relay::Direct(context) => ask_now(context, request).await?,
            Relay::Queued { questions, .. } => {
                let (answer, answered) = oneshot::channel();
                questions.send(Question { request, answer }).map_err(|_| gone())?;
                answered.await.map_err(|_| gone())??
            }
        };
        T::from_json_value(value).map_err(|err| {
            ErrorObject::new(ErrorCode::INTERNAL_ERROR, format!("the gateway's client answered malformed: {err}"))
        })
    }
}

/// Asks `context`'s client `request`, under the key the upstream named, or one of the request's
/// own making; the answer as JSON.
pub(crate) async fn ask_now(context: &RequestContext, mut request: InputRequest) -> Result<Value, ErrorObject> {
    if let Some(key) = request.take_input_key() {
        return ask_keyed(context, &key, &request).await.map_err(|err| to_object(&err));
    }
    let answer = match request {
        InputRequest::Elicitation(params) => context.elicit(params).await.and_then(to_value),
        InputRequest::Sampling(params) => context.create_message(*params).await.and_then(to_value),
        InputRequest::ListRoots(_) => context.list_roots().await.and_then(to_value),
    };
    answer.map_err(|err| to_object(&err))
}

/// Asks `context`'s client `request` under `key`: the answer when the client gave it in an
/// earlier round, else the error that asks for it in this round's `InputRequiredResult`.
pub(crate) async fn ask_keyed(context: &RequestContext, key: &str, request: &InputRequest) -> Result<Value, RpcError> {
    let input = context.input(key);
    match request.clone() {
        InputRequest::Elicitation(params) => input.elicit(params).await.and_then(to_value),
        InputRequest::Sampling(params) => input.create_message(*params).await.and_then(to_value),
        InputRequest::ListRoots(_) => input.list_roots().await.and_then(to_value),
    }
}

fn to_value(answer: impl serde::Serialize) -> Result<Value, RpcError> {
    serde_json::to_value(answer).map_err(|err| RpcError::internal(format!("Internal error: {err}")))
}

/// The gateway's client's error, as the upstream is answered with it.
pub(crate) fn to_object(err: &RpcError) -> ErrorObject {
    let mut object = ErrorObject::new(ErrorCode(err.code()), err.message());
    object.data = err.data().cloned();
    object
}

/// An error object, as the gateway's own answer.
pub(crate) fn from_object(error: &ErrorObject) -> RpcError {
    let answer = RpcError::new(error.code.0, error.message.clone());
    match &error.data {
        Some(data) => answer.with_data(data.clone()),
        None => answer,
    }
}

fn gone() -> ErrorObject {
    ErrorObject::new(ErrorCode::INTERNAL_ERROR, "the gateway's client is gone: the request that asked has ended")
}

impl ClientHandler for Relay {
    fn capabilities(&self) -> ClientCapabilities {
        all_capabilities()
    }

    fn elicit(&self, params: ElicitParams) -> Answer<'_, ElicitResult> {
        Box::pin(self.ask(InputRequest::Elicitation(params)))
    }

    fn create_message(&self, params: CreateMessageParams) -> Answer<'_, CreateMessageResult> {
        Box::pin(self.ask(InputRequest::Sampling(Box::new(params))))
    }

    fn list_roots(&self) -> Answer<'_, ListRootsResult> {
        Box::pin(self.ask(InputRequest::ListRoots(Some(EmptyParams::default()))))
    }

    fn takes_unrelated_questions(&self) -> bool {
        match self {
            Relay::Direct(_) => true,
            Relay::Queued { parked, .. } => !parked.load(Ordering::Acquire),
        }
    }
}

/// What the gateway declares to its upstreams: every question a client can be asked, since
/// one of its own clients may answer it; one that cannot is refused when asked.
pub(crate) fn all_capabilities() -> ClientCapabilities {
    ALL_CAPABILITIES.clone()
}

static ALL_CAPABILITIES: std::sync::LazyLock<ClientCapabilities> = std::sync::LazyLock::new(|| {
    ClientCapabilities::from_json_value(serde_json::json!({
        "elicitation": { "form": {}, "url": {} },
        "sampling": {},
        "roots": { "listChanged": true },
    }))
    .unwrap_or_default()
});

/// The handler of questions no request of the gateway's clients can be found for (an
/// upstream on stdio asking while requests of several clients are in flight).
pub(crate) struct Unplaced {
    /// The roots the mount gives an upstream that asks outside a request, if it names any.
    pub(crate) roots: Option<Vec<Root>>,
}

impl ClientHandler for Unplaced {
    fn capabilities(&self) -> ClientCapabilities {
        all_capabilities()
    }

    fn elicit(&self, _: ElicitParams) -> Answer<'_, ElicitResult> {
        Box::pin(async { Err(unplaced("elicitation/create")) })
    }

    fn create_message(&self, _: CreateMessageParams) -> Answer<'_, CreateMessageResult> {
        Box::pin(async { Err(unplaced("sampling/createMessage")) })
    }

    fn list_roots(&self) -> Answer<'_, ListRootsResult> {
        let answer = match &self.roots {
            Some(roots) => Ok(ListRootsResult { roots: roots.clone(), meta: None }),
            None => Err(unplaced("roots/list")),
        };
        Box::pin(std::future::ready(answer))
    }
}

fn unplaced(method: &str) -> ErrorObject {
    ErrorObject::new(
        ErrorCode::INTERNAL_ERROR,
        format!(
            "the gateway cannot tell which of its clients `{method}` is for: it came outside a request, or while \
             requests of several clients were in flight"
        ),
    )
}
