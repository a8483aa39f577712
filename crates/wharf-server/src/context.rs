//! The request context handed to every handler: who is asking, in which revision, and the
//! channels back to the client (progress, logging, cancellation and requests for input).

use std::sync::{Arc, LazyLock, Mutex, OnceLock, PoisonError};
use std::time::Duration;

use serde::Serialize;
use serde::de::DeserializeOwned;
use serde_json::Value;
use wharf_protocol::{
    ClientCapabilities, CreateMessageParams, CreateMessageResult, ElicitParams, ElicitResult,
    ElicitationCompleteParams, ErrorCode, Implementation, InputRequest, InputRequiredResult, JsonRpc2, ListRootsResult,
    LoggingLevel, LoggingMessageParams, NotificationMessage, ProgressParams, ProgressToken, ProtocolVersion, RequestId,
    RequestMessage, ServerNotification, ServerRequest,
};

use crate::cancel::Cancellation;
use crate::dispatch::Delivery;
use crate::error::{Error, RpcError};
use crate::extensions::Extensions;
use crate::input::{Input, InputRound};
use crate::principal::Principal;
use crate::server::Server;
use crate::session::{Outbound, Session};
use crate::task::{RELATED_TASK, Running};

/// Everything a handler may want to know about the request it serves, and its ways to talk
/// back to the client while it works.
///
/// Cloning is cheap; all clones refer to the same request.
#[derive(Clone)]
pub struct RequestContext {
    inner: Arc<Inner>,
}

struct Inner {
    id: RequestId,
    server: Server,
    session: Arc<Session>,
    version: ProtocolVersion,
    client: Client,
    progress_token: Option<ProgressToken>,
    last_progress: Mutex<Option<f64>>,
    log_level: Option<LoggingLevel>,
    /// Where the request's messages go when not to the session's own queue.
    sink: Option<Outbound>,
    cancel: Cancellation,
    stream: Option<Arc<StreamControl>>,
    principal: Option<Principal>,
    /// Set on 2026-07-28 requests that may answer `InputRequiredResult`. Boxed: a round is
    /// larger than all the rest of the context, and most requests have none.
    input: Option<Box<InputRound>>,
    /// Set once the request became a task: input then waits for `tasks/update`.
    task: OnceLock<Arc<Running>>,
    /// Set once a 2025-11-25 request became a task: its response has been sent, so what the
    /// handler sends goes to the session instead, marked as the task's.
    legacy_task: OnceLock<LegacyTask>,
}

/// The 2025-11-25 task a request became.
struct LegacyTask {
    id: String,
    running: Arc<Running>,
}

/// Who the client is.
///
/// A session request reads what `initialize` negotiated from its session when asked, instead
/// of holding clones of it: every clone and drop of an `Arc` is an atomic operation, and a
/// pipelined `tools/call` made about forty of those.
pub(crate) enum Client {
    /// The session's client: [`Session::negotiated`].
    Session,
    /// What a stateless request's `_meta` said.
    Stated { capabilities: Arc<ClientCapabilities>, info: Option<Arc<Implementation>> },
}

/// The capabilities of a client that declared none.
static NO_CAPABILITIES: LazyLock<ClientCapabilities> = LazyLock::new(ClientCapabilities::default);

/// The parts a dispatcher fills in to make a [`RequestContext`].
pub(crate) struct ContextParts {
    pub(crate) id: RequestId,
    pub(crate) server: Server,
    pub(crate) session: Arc<Session>,
    pub(crate) version: ProtocolVersion,
    pub(crate) client: Client,
    pub(crate) progress_token: Option<ProgressToken>,
    pub(crate) log_level: Option<LoggingLevel>,
    pub(crate) delivery: Delivery,
    pub(crate) input: Option<Box<InputRound>>,
}

/// Lets a handler end its request's HTTP response stream before the response, so that the
/// client reconnects later and picks up the rest (SSE polling, protocol revision 2025-11-25).
#[derive(Debug, Default)]
pub(crate) struct StreamControl {
    close_requested: std::sync::atomic::AtomicBool,
    notify: tokio::sync::Notify,
}

impl StreamControl {
    fn request_close(&self) {
        self.close_requested.store(true, std::sync::atomic::Ordering::SeqCst);
        self.notify.notify_waiters();
    }

    /// Completes once the handler asked to close the stream.
    pub(crate) async fn close_requested(&self) {
        loop {
            let notified = self.notify.notified();
            if self.close_requested.load(std::sync::atomic::Ordering::SeqCst) {
                return;
            }
            notified.await;
        }
    }
}

impl RequestContext {
    pub(crate) fn new(parts: ContextParts) -> RequestContext {
        RequestContext {
            inner: Arc::new(Inner {
                id: parts.id,
                server: parts.server,
                session: parts.session,
                version: parts.version,
                client: parts.client,
                progress_token: parts.progress_token,
                last_progress: Mutex::new(None),
                log_level: parts.log_level,
                sink: parts.delivery.sink,
                cancel: parts.delivery.cancel,
                stream: parts.delivery.stream,
                principal: parts.delivery.principal,
                input: parts.input,
                task: OnceLock::new(),
                legacy_task: OnceLock::new(),
            }),
        }
    }

    /// The JSON-RPC id of the request.
    pub fn request_id(&self) -> &RequestId {
        &self.inner.id
    }

    /// The id of the connection (stdio) or session (HTTP) the request arrived on.
    pub fn session_id(&self) -> &str {
        self.inner.session.id()
    }

    /// The protocol revision of this request: the session's, or the one in `_meta`.
    pub fn protocol_version(&self) -> ProtocolVersion {
        self.inner.version
    }

    /// What the client declared it can do.
    pub fn client_capabilities(&self) -> &ClientCapabilities {
        match &self.inner.client {
            Client::Session => {
                self.inner.session.negotiated().map_or(&*NO_CAPABILITIES, |negotiated| &*negotiated.client_capabilities)
            }
            Client::Stated { capabilities, .. } => capabilities,
        }
    }

    /// The client's name and version, when it sent them.
    pub fn client_info(&self) -> Option<&Implementation> {
        match &self.inner.client {
            Client::Session => self.inner.session.negotiated().map(|negotiated| &*negotiated.client_info),
            Client::Stated { info, .. } => info.as_deref(),
        }
    }

    /// The server handling the request, for example to add or remove tools.
    pub fn server(&self) -> &Server {
        &self.inner.server
    }

    /// The user's own per-session data. On 2026-07-28 stateless requests every request is its
    /// own session as far as the protocol goes; the map then lives as long as the connection.
    pub fn extensions(&self) -> &Extensions {
        self.inner.session.extensions()
    }

    /// The request's cancellation signal.
    pub fn cancellation(&self) -> &Cancellation {
        &self.inner.cancel
    }

    /// Closes the HTTP response stream of this request before the response is ready, when the
    /// transport allows it (Streamable HTTP, sessions of revision 2025-11-25 and later). The
    /// client reconnects with `Last-Event-ID` and receives what the handler sends afterwards,
    /// the response included. Returns false, and does nothing, elsewhere.
    pub fn close_sse_stream(&self) -> bool {
        match &self.inner.stream {
            Some(stream) => {
                stream.request_close();
                true
            }
            None => false,
        }
    }

    /// True once the client cancelled the request.
    pub fn is_cancelled(&self) -> bool {
        self.inner.cancel.is_cancelled()
    }

    /// The `progressToken` the client sent, if it asked for progress notifications.
    pub fn progress_token(&self) -> Option<&ProgressToken> {
        self.inner.progress_token.as_ref()
    }

    /// True when the client asked for progress notifications (it sent a `progressToken`).
    pub fn wants_progress(&self) -> bool {
        self.inner.progress_token.is_some()
    }

    /// Reports progress. Does nothing unless the client sent a `progressToken`; values that do
    /// not increase are dropped, because the protocol requires progress to increase.
    pub async fn progress(&self, progress: f64, total: Option<f64>, message: Option<&str>) {
        let Some(token) = &self.inner.progress_token else { return };
        {
            let mut last = self.inner.last_progress.lock().unwrap_or_else(PoisonError::into_inner);
            if last.is_some_and(|last| progress <= last) {
                tracing::debug!(progress, "dropping progress that does not increase");
                return;
            }
            *last = Some(progress);
        }
        let params = ProgressParams {
            progress_token: token.clone(),
            progress,
            total,
            message: message.map(str::to_owned),
            meta: None,
        };
        self.notify(ServerNotification::Progress(params)).await;
    }

    /// True if a message at `level` would reach the client.
    pub fn logs_at(&self, level: LoggingLevel) -> bool {
        if self.inner.version.is_stateless() {
            // 2026-07-28: only when the request's `_meta` asked for a level.
            self.inner.log_level.is_some_and(|wanted| level >= wanted)
        } else {
            self.inner.session.log_level().is_none_or(|wanted| level >= wanted)
        }
    }

    /// Sends a log message to the client (`notifications/message`), if the client's level lets
    /// it through.
    pub async fn log(&self, level: LoggingLevel, logger: Option<&str>, data: impl Into<Value>) {
        if !self.logs_at(level) {
            return;
        }
        let params = LoggingMessageParams { level, logger: logger.map(str::to_owned), data: data.into(), meta: None };
        self.notify(ServerNotification::Message(params)).await;
    }

    /// Who the request acts for, when authentication in front of the server said so.
    pub fn principal(&self) -> Option<&Principal> {
        self.inner.principal.as_ref()
    }

    /// An input to ask the client for, under `key`: see [`Input`] for the methods, and for the
    /// rule that keys are unique within a request.
    ///
    /// In a 2025 session the request goes to the client at once and the answer comes back.
    /// On 2026-07-28, a first run finds no answer: the call returns an error for which
    /// [`RpcError::is_input_required`] is true, and Wharf answers the request with an
    /// `InputRequiredResult` asking for every input this run asked for. Ask for several in
    /// one round by awaiting them together (`tokio::join!`). The client's retry runs the
    /// handler again, and this time the answers are there.
    pub fn input(&self, key: impl Into<String>) -> Input<'_> {
        Input { context: self, key: key.into() }
    }

    /// Asks the user for input through the client (elicitation), under a key made from the
    /// order of asking; see [`RequestContext::input`].
    ///
    /// The client must have declared the `elicitation` capability (and `url` for URL mode).
    pub async fn elicit(&self, params: ElicitParams) -> Result<ElicitResult, RpcError> {
        self.input(self.auto_key()).elicit(params).await
    }

    /// Asks the client's model for a completion (sampling); see [`RequestContext::input`].
    pub async fn create_message(&self, params: CreateMessageParams) -> Result<CreateMessageResult, RpcError> {
        self.input(self.auto_key()).create_message(params).await
    }

    /// Asks the client for its filesystem roots; see [`RequestContext::input`].
    pub async fn list_roots(&self) -> Result<ListRootsResult, RpcError> {
        self.input(self.auto_key()).list_roots().await
    }

    /// What this handler kept for itself in the previous round of a 2026-07-28 request, with
    /// [`RequestContext::set_round_state`]. It travels inside the sealed `requestState`: the
    /// client cannot change it, but can read it, so keep secrets out of it.
    pub fn round_state<T: DeserializeOwned>(&self) -> Option<T> {
        let state = self.inner.input.as_ref()?.carried_state()?;
        T::deserialize(state).ok()
    }

    /// Keeps `state` for the next round of this request, if it asks for input (2026-07-28);
    /// without a call the previous round's state is kept. Does nothing in a 2025 session,
    /// where the handler runs once and keeps its state in its variables.
    pub fn set_round_state<T: Serialize>(&self, state: &T) -> Result<(), RpcError> {
        let Some(round) = &self.inner.input else { return Ok(()) };
        let value = serde_json::to_value(state)
            .map_err(|err| RpcError::internal(format!("Internal error: the round state cannot be encoded: {err}")))?;
        round.carry_state(value);
        Ok(())
    }

    fn auto_key(&self) -> String {
        match &self.inner.input {
            Some(round) => round.next_auto_key(),
            None => String::new(),
        }
    }

    /// The `InputRequiredResult` a 2026-07-28 request answers with, when its handler asked for
    /// input it has no answer to; the error, when the client answered with something malformed.
    pub(crate) fn input_required(&self) -> Result<Option<InputRequiredResult>, RpcError> {
        let Some(round) = self.inner.input.as_ref() else { return Ok(None) };
        let server = &self.inner.server;
        round.finish(server.sealer(), server.options().request_state_lifetime)
    }

    /// From now on, input this request asks for waits for the task's `tasks/update`.
    pub(crate) fn attach_task(&self, running: Arc<Running>) {
        let _ = self.inner.task.set(running);
    }

    /// From now on, what the handler sends goes to the session, with the task's id in its
    /// `_meta`: the request was answered with `CreateTaskResult` (2025-11-25 tasks), and its
    /// own stream is gone.
    pub(crate) fn became_task(&self, id: String, running: Arc<Running>) {
        let _ = self.inner.legacy_task.set(LegacyTask { id, running });
    }

    fn sink(&self) -> &Outbound {
        match &self.inner.sink {
            Some(sink) if self.inner.legacy_task.get().is_none() => sink,
            _ => self.inner.session.outbound(),
        }
    }

    /// Encodes a message the handler sends: a 2025-11-25 task's messages carry
    /// `_meta["io.modelcontextprotocol/related-task"]`, as that revision requires of every
    /// message about a task.
    fn encode_outgoing<T: Serialize>(&self, message: &T) -> Result<Vec<u8>, Error> {
        let encoded = match self.inner.legacy_task.get() {
            None => wharf_protocol::encode(message),
            Some(task) => {
                let message = related_to_task(message, &task.id).map_err(|err| Error::protocol(err.to_string()))?;
                wharf_protocol::encode(&message)
            }
        };
        encoded.map_err(|err| Error::protocol(err.to_string()))
    }

    fn encode_outgoing_notification(&self, notification: &ServerNotification) -> Result<Vec<u8>, Error> {
        self.encode_outgoing(&NotificationMessage {
            jsonrpc: JsonRpc2,
            method: notification.method(),
            params: Some(notification),
        })
    }

    pub(crate) async fn ask_input<R: DeserializeOwned>(
        &self,
        key: String,
        request: InputRequest,
    ) -> Result<R, RpcError> {
        self.check_client_can_answer(&request)?;
        let request = self.with_elicitation_id(request)?;
        if let Some(running) = self.inner.task.get() {
            let method = request.method();
            let answer = running.ask(key.clone(), request).await?;
            return parse_answer(&key, method, &answer);
        }
        if !self.inner.version.is_stateless() {
            return self.ask(ServerRequest::from(request)).await;
        }
        let Some(round) = &self.inner.input else {
            return Err(RpcError::internal(
                "Internal error: on 2026-07-28 only tools/call, prompts/get and resources/read can ask for input",
            ));
        };
        let request = match request {
            // 2026-07-28 elicitations carry no id: the round trip is the request itself.
            InputRequest::Elicitation(mut params) => {
                params.elicitation_id = None;
                InputRequest::Elicitation(params)
            }
            other => other,
        };
        let method = request.method();
        let answer = round.answer_or_ask(key.clone(), request)?;
        parse_answer(&key, method, &answer).inspect_err(|error| round.reject(error.clone()))
    }

    /// A 2025-11-25 URL elicitation carries an id, for `notifications/elicitation/complete`;
    /// Wharf makes one when the handler did not.
    fn with_elicitation_id(&self, request: InputRequest) -> Result<InputRequest, RpcError> {
        match request {
            InputRequest::Elicitation(mut params)
                if params.mode.as_deref() == Some("url")
                    && params.elicitation_id.is_none()
                    && self.inner.version == ProtocolVersion::V2025_11_25 =>
            {
                let mut bytes = [0u8; 16];
                getrandom::fill(&mut bytes)
                    .map_err(|err| RpcError::internal(format!("Internal error: no random source: {err}")))?;
                params.elicitation_id = Some(bytes.iter().map(|byte| format!("{byte:02x}")).collect());
                Ok(InputRequest::Elicitation(params))
            }
            other => Ok(other),
        }
    }

    /// Tells a 2025-11-25 client that the out-of-band flow of the URL elicitation
    /// `elicitation_id` finished (`notifications/elicitation/complete`), on the session rather
    /// than this request's stream, so it may come after the request ended. Returns false,
    /// sending nothing, on other revisions: on 2026-07-28 the client's retry is the signal.
    pub async fn complete_url_elicitation(&self, elicitation_id: &str) -> bool {
        if self.inner.version != ProtocolVersion::V2025_11_25 {
            return false;
        }
        let notification = ServerNotification::ElicitationComplete(ElicitationCompleteParams {
            elicitation_id: elicitation_id.to_owned(),
            meta: None,
        });
        let Ok(bytes) = self.encode_outgoing_notification(&notification) else { return false };
        self.inner.session.outbound().send(bytes).await.is_ok()
    }

    /// The error for a request that cannot go on until the user finishes URL elicitations
    /// (2025-11-25: `-32042` with the elicitations in `data`). On 2026-07-28 the elicitations
    /// are asked for in an `InputRequiredResult` instead (return the error all the same);
    /// earlier revisions have no URL elicitation, so it is an internal error there.
    pub fn url_elicitation_required(&self, elicitations: Vec<ElicitParams>) -> RpcError {
        match self.inner.version {
            ProtocolVersion::V2025_11_25 => {
                let mut listed = Vec::with_capacity(elicitations.len());
                for params in elicitations {
                    let request = self.with_elicitation_id(InputRequest::Elicitation(params));
                    if let Ok(InputRequest::Elicitation(params)) = request {
                        listed.push(params);
                    }
                }
                RpcError::new(
                    ErrorCode::URL_ELICITATION_REQUIRED.0,
                    "URL elicitation required: the user must finish the linked flow first",
                )
                .with_data(serde_json::json!({ "elicitations": listed }))
            }
            version if version.is_stateless() => {
                let Some(round) = &self.inner.input else {
                    return RpcError::internal("Internal error: this request cannot ask for input");
                };
                let mut asked = false;
                for params in elicitations {
                    let key = round.next_auto_key();
                    let mut params = params;
                    params.elicitation_id = None;
                    if let Err(error) = round.answer_or_ask(key, InputRequest::Elicitation(params)) {
                        if !error.is_input_required() {
                            return error;
                        }
                        asked = true;
                    }
                }
                if asked {
                    RpcError::internal(crate::input::INPUT_REQUIRED_MESSAGE)
                } else {
                    // Each was answered in an earlier round: the user consented, and it is for
                    // the handler to know whether the flows have finished.
                    RpcError::internal("Internal error: the URL elicitations were answered but are still required")
                }
            }
            version => {
                RpcError::internal(format!("Internal error: URL elicitation does not exist in revision {version}"))
            }
        }
    }

    /// Wharf never asks for what the client did not declare it can give.
    fn check_client_can_answer(&self, request: &InputRequest) -> Result<(), RpcError> {
        let caps = self.client_capabilities();
        match request {
            InputRequest::Elicitation(params) => {
                let url_mode = params.mode.as_deref() == Some("url");
                let supported =
                    if url_mode { caps.supports_url_elicitation() } else { caps.supports_form_elicitation() };
                if !supported {
                    let mode = if url_mode { "url" } else { "form" };
                    return Err(self.missing_capability(
                        &format!("the client did not declare elicitation in {mode} mode"),
                        serde_json::json!({ "elicitation": { mode: {} } }),
                    ));
                }
            }
            InputRequest::Sampling(_) if caps.sampling.is_none() => {
                return Err(self.missing_capability(
                    "the client did not declare the sampling capability",
                    serde_json::json!({ "sampling": {} }),
                ));
            }
            InputRequest::ListRoots(_) if caps.roots.is_none() => {
                return Err(self.missing_capability(
                    "the client did not declare the roots capability",
                    serde_json::json!({ "roots": {} }),
                ));
            }
            _ => {}
        }
        Ok(())
    }

    fn missing_capability(&self, why: &str, required: Value) -> RpcError {
        if self.inner.version.is_stateless() {
            RpcError::new(-32021, format!("Missing required client capability: {why}"))
                .with_data(serde_json::json!({ "requiredCapabilities": required }))
        } else {
            RpcError::invalid_request(format!("Cannot ask the client: {why}"))
        }
    }

    /// Sends a server-to-client request on this request's stream and awaits the answer.
    async fn ask<R: DeserializeOwned>(&self, request: ServerRequest) -> Result<R, RpcError> {
        let timeout = self.inner.server.options().client_request_timeout;
        let sending = self.send_request(&request, timeout);
        // A task waiting on its client is `input_required` meanwhile.
        let value = match self.inner.legacy_task.get() {
            Some(task) => task.running.awaiting_client(sending).await,
            None => sending.await,
        };
        let value = value.map_err(|err| {
            if err.is_timeout() {
                RpcError::internal(format!("The client did not answer `{}` in time", request.method()))
            } else {
                RpcError::internal(format!("The client could not answer `{}`: {err}", request.method()))
            }
        })?;
        match value {
            Ok(result) => serde_json::from_value(result).map_err(|err| {
                RpcError::internal(format!("The client's answer to `{}` is malformed: {err}", request.method()))
            }),
            Err(error) => Err(RpcError::from(error)),
        }
    }

    async fn send_request(
        &self,
        request: &ServerRequest,
        timeout: Duration,
    ) -> Result<Result<Value, wharf_protocol::ErrorObject>, Error> {
        let session = &self.inner.session;
        let (id, answer) = session.expect_answer();
        let message = RequestMessage { jsonrpc: JsonRpc2, id: &id, method: request.method(), params: Some(request) };
        let bytes = match self.encode_outgoing(&message) {
            Ok(bytes) => bytes,
            Err(err) => {
                session.forget_answer(&id);
                return Err(err);
            }
        };
        if self.sink().send(bytes).await.is_err() {
            session.forget_answer(&id);
            return Err(Error::closed());
        }
        let outcome = tokio::time::timeout(timeout, answer).await;
        session.forget_answer(&id);
        match outcome {
            Ok(Ok(answer)) => Ok(answer),
            Ok(Err(_)) => Err(Error::closed()),
            Err(_) => Err(Error::timeout(format!("no answer to `{}` within {timeout:?}", request.method()))),
        }
    }

    /// Sends a notification on this request's stream. Failures mean the client went away, which
    /// the read loop notices on its own, so they are ignored here.
    pub(crate) async fn notify(&self, notification: ServerNotification) {
        match self.encode_outgoing_notification(&notification) {
            Ok(bytes) => {
                let _ = self.sink().send(bytes).await;
            }
            Err(err) => tracing::warn!(%err, method = notification.method(), "a notification could not be encoded"),
        }
    }
}

/// `message` with `_meta["io.modelcontextprotocol/related-task"] = {taskId}` in its params
/// (made an object if it had none), keeping whatever `_meta` the params had.
fn related_to_task<T: Serialize>(message: &T, task_id: &str) -> Result<Value, serde_json::Error> {
    let mut message = serde_json::to_value(message)?;
    if let Value::Object(members) = &mut message {
        let params = members.entry("params").or_insert_with(|| Value::Object(Default::default()));
        if let Value::Object(params) = params {
            let meta = params.entry("_meta").or_insert_with(|| Value::Object(Default::default()));
            if let Value::Object(meta) = meta {
                meta.insert(RELATED_TASK.to_owned(), serde_json::json!({ "taskId": task_id }));
            }
        }
    }
    Ok(message)
}

/// The client's answer under `key` to an input request of `method`, as the handler's type.
fn parse_answer<R: DeserializeOwned>(key: &str, method: &str, answer: &Value) -> Result<R, RpcError> {
    R::deserialize(answer).map_err(|err| {
        RpcError::invalid_params(format!(
            "Invalid params: `inputResponses.{key}` is not a valid answer to {method}: {err}"
        ))
    })
}

/// Serializes a server notification as a JSON-RPC message.
pub(crate) fn encode_notification(notification: &ServerNotification) -> Vec<u8> {
    encode(&NotificationMessage { jsonrpc: JsonRpc2, method: notification.method(), params: Some(notification) })
}

pub(crate) fn encode<T: Serialize>(message: &T) -> Vec<u8> {
    let mut bytes = crate::message_buffer::take();
    encode_into(&mut bytes, message);
    bytes
}

/// Appends `value`'s JSON to `bytes`.
pub(crate) fn encode_into<T: Serialize + ?Sized>(bytes: &mut Vec<u8>, value: &T) {
    // Serializing our own types into memory cannot fail: every map key is a string.
    wharf_protocol::encode_into(bytes, value).unwrap_or_else(|err| unreachable!("serializing a message failed: {err}"));
}

impl std::fmt::Debug for RequestContext {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("RequestContext")
            .field("id", &self.inner.id)
            .field("session", &self.inner.session.id())
            .field("version", &self.inner.version)
            .finish_non_exhaustive()
    }
}
