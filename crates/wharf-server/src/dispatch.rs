//! Request dispatch for both protocol eras: classifies each request as a 2025 session request
//! or a 2026-07-28 stateless request, checks what that era requires, runs the method, and
//! encodes the result the way the request's revision expects.

use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;
use std::task::Poll;

use serde::Serialize;
use serde_json::Value;
use wharf_protocol::{
    CacheScope, CallToolParams, CallToolResult, ClientNotification, ClientRequest, CompleteParams, CompleteResult,
    Completion, CompletionReference, DiscoverResult, EmptyResult, ErrorCode, ErrorMessage, GetPromptParams,
    GetPromptResult, InitializeParams, InitializeResult, InputRequiredResult, JsonObject, JsonRpc2, ListPromptsResult,
    ListResourceTemplatesResult, ListResourcesResult, ListToolsResult, ListenResult, PaginatedParams, ProtocolVersion,
    ReadResourceParams, ReadResourceResult, RequestId, RequestMeta, ResponseMessage, ResultType, TASKS_EXTENSION,
};

use crate::cancel::Cancellation;
use crate::completion::{CompletionCall, MAX_COMPLETION_VALUES};
use crate::context::{ContextParts, RequestContext, StreamControl, encode};
use crate::error::RpcError;
use crate::input::InputRound;
use crate::listen::listen;
use crate::panic::CatchUnwind;
use crate::principal::Principal;
use crate::prompt::prompt_for;
use crate::registry::page;
use crate::resource::{resource_for, template_for};
use crate::server::Server;
use crate::session::{Negotiated, Outbound, Session};
use crate::task::record::TaskRecord;
use crate::task::{Running, TaskSupport};
use crate::tool::extract::{Rejection, ToolCall};
use crate::tool::tool_for;

/// Handles one request and returns the encoded response.
pub(crate) async fn handle_request(
    server: Server,
    session: Arc<Session>,
    id: RequestId,
    request: ClientRequest,
    delivery: Delivery,
) -> Vec<u8> {
    match request_outcome(server, session, id.clone(), request, delivery).await {
        Ok(response) => response,
        Err(error) => encode_error(Some(&id), error),
    }
}

/// Handles one request: the encoded response, or the error to answer with, so that a transport
/// can choose a status code from it.
pub(crate) async fn request_outcome(
    server: Server,
    session: Arc<Session>,
    id: RequestId,
    request: ClientRequest,
    delivery: Delivery,
) -> Result<Vec<u8>, RpcError> {
    let method = request.method();
    let outcome = route(&server, &session, &id, request, delivery).await;
    if let Err(error) = &outcome {
        tracing::debug!(%id, method, code = error.code(), message = error.message(), "request failed");
    }
    outcome
}

/// Where a request's messages go and how it is stopped.
pub(crate) struct Delivery {
    /// Notifications and server-to-client requests about this request.
    pub(crate) sink: Outbound,
    pub(crate) cancel: Cancellation,
    /// Set by transports whose response stream a handler may close early (HTTP with SSE).
    pub(crate) stream: Option<Arc<StreamControl>>,
    /// Who the request acts for, when the transport knows.
    pub(crate) principal: Option<Principal>,
}

impl Delivery {
    pub(crate) fn new(sink: Outbound, cancel: Cancellation) -> Delivery {
        Delivery { sink, cancel, stream: None, principal: None }
    }
}

pub(crate) fn encode_error(id: Option<&RequestId>, error: RpcError) -> Vec<u8> {
    encode(&ErrorMessage { id, error: &error.into_object() })
}

/// True when the request is to be served statelessly, as 2026-07-28 defines.
pub(crate) fn is_stateless(request: &ClientRequest) -> bool {
    matches!(request, ClientRequest::Discover(_) | ClientRequest::Listen(_))
        || request.meta().is_some_and(RequestMeta::is_stateless_request)
}

async fn route(
    server: &Server,
    session: &Arc<Session>,
    id: &RequestId,
    mut request: ClientRequest,
    delivery: Delivery,
) -> Result<Vec<u8>, RpcError> {
    if is_stateless(&request) {
        // The request's `_meta` moves into the context; nothing reads it from the params later.
        let meta = std::mem::take(request.meta_mut());
        let version = check_stateless_meta(&meta)?;
        let input = InputRound::for_request(server.sealer(), delivery.principal.as_ref(), &mut request)?;
        // Checked above: the capabilities are there, and move out of the request.
        let capabilities = meta.client_capabilities.unwrap_or_default();
        if removed_in_stateless(request.method()) {
            return Err(removed_method(request.method(), version));
        }
        let context = RequestContext::new(ContextParts {
            id: id.clone(),
            server: server.clone(),
            session: session.clone(),
            version,
            client_capabilities: Arc::new(capabilities),
            client_info: meta.client_info.map(Arc::new),
            progress_token: meta.progress_token,
            log_level: meta.log_level,
            delivery,
            input,
        });
        return serve(server, &context, id, request).await;
    }

    match request {
        ClientRequest::Initialize(params) => initialize(server, session, id, *params),
        ClientRequest::Ping(_) => Ok(respond(id, &EmptyResult::default())),
        request => {
            let negotiated = session.negotiated().ok_or_else(|| {
                RpcError::invalid_request(
                    "Server not initialized: send `initialize` first, or send a stateless request that names \
                     `io.modelcontextprotocol/protocolVersion` in `_meta`",
                )
            })?;
            match &request {
                ClientRequest::SetLevel(params) => {
                    session.set_log_level(params.level);
                    return Ok(respond(id, &EmptyResult::default()));
                }
                ClientRequest::Subscribe(params) | ClientRequest::Unsubscribe(params) => {
                    require(server.registry().has_resources(), "resources", request.method())?;
                    if matches!(request, ClientRequest::Subscribe(_)) {
                        session.subscribe(&params.uri);
                    } else {
                        session.unsubscribe(&params.uri);
                    }
                    return Ok(respond(id, &EmptyResult::default()));
                }
                _ => {}
            }
            let meta = request.meta();
            let context = RequestContext::new(ContextParts {
                id: id.clone(),
                server: server.clone(),
                session: session.clone(),
                version: negotiated.version,
                client_capabilities: negotiated.client_capabilities.clone(),
                client_info: Some(negotiated.client_info.clone()),
                progress_token: meta.and_then(|meta| meta.progress_token.clone()),
                log_level: None,
                delivery,
                input: None,
            });
            serve(server, &context, id, request).await
        }
    }
}

/// True for the session methods that 2026-07-28 removed: a stateless request for one of them
/// is answered -32601 before its params are even read.
pub(crate) fn removed_in_stateless(method: &str) -> bool {
    matches!(method, "initialize" | "ping" | "logging/setLevel" | "resources/subscribe" | "resources/unsubscribe")
}

pub(crate) fn removed_method(method: &str, version: ProtocolVersion) -> RpcError {
    RpcError::method_not_found(format!("Method not found: `{method}` does not exist in protocol revision {version}"))
}

/// Checks the `_meta` every 2026-07-28 request must carry; the revision it names.
pub(crate) fn check_stateless_meta(meta: &RequestMeta) -> Result<ProtocolVersion, RpcError> {
    let requested = meta.protocol_version.as_deref().ok_or_else(|| {
        RpcError::invalid_params("Invalid params: `_meta` must carry `io.modelcontextprotocol/protocolVersion`")
    })?;
    let version = ProtocolVersion::parse(requested).filter(|version| version.is_stateless()).ok_or_else(|| {
        let supported: Vec<&str> = ProtocolVersion::ALL.iter().map(|version| version.as_str()).collect();
        RpcError::from(
            wharf_protocol::ErrorObject::new(ErrorCode::UNSUPPORTED_PROTOCOL_VERSION, "Unsupported protocol version")
                .with_data(serde_json::json!({ "supported": supported, "requested": requested })),
        )
    })?;
    if meta.client_capabilities.is_none() {
        return Err(RpcError::invalid_params(
            "Invalid params: `_meta` must carry `io.modelcontextprotocol/clientCapabilities`",
        ));
    }
    Ok(version)
}

fn initialize(
    server: &Server,
    session: &Arc<Session>,
    id: &RequestId,
    params: InitializeParams,
) -> Result<Vec<u8>, RpcError> {
    // Echo the client's revision when it is a session revision we serve; otherwise offer the
    // newest session revision and let the client decide.
    let version = ProtocolVersion::parse(&params.protocol_version)
        .filter(|version| !version.is_stateless())
        .unwrap_or(ProtocolVersion::LATEST_SESSION);
    let negotiated = Negotiated {
        version,
        client_capabilities: Arc::new(params.capabilities),
        client_info: Arc::new(params.client_info),
    };
    if !session.negotiate(negotiated) {
        return Err(RpcError::invalid_request("Invalid request: this session is already initialized"));
    }
    let mut capabilities = server.capabilities();
    // Extensions (2026-07-28 tasks among them) are negotiated per request, not in sessions;
    // 2025-11-25 has experimental tasks of its own instead. `tasks/list` lists only the tasks
    // of the asking session (or principal).
    if capabilities.extensions.take().is_some() && version == ProtocolVersion::V2025_11_25 {
        capabilities.tasks =
            Some(object(serde_json::json!({"list": {}, "cancel": {}, "requests": {"tools": {"call": {}}}})));
    }
    let result = InitializeResult {
        protocol_version: version.as_str().to_owned(),
        capabilities,
        server_info: server.info_for(version),
        instructions: server.instructions().map(str::to_owned),
        meta: None,
    };
    Ok(respond(id, &result))
}

fn require(present: bool, capability: &str, method: &str) -> Result<(), RpcError> {
    if present {
        Ok(())
    } else {
        Err(RpcError::method_not_found(format!(
            "Method not found: `{method}` needs the `{capability}` capability, which this server does not offer"
        )))
    }
}

/// Serves the methods both eras share.
async fn serve(
    server: &Server,
    context: &RequestContext,
    id: &RequestId,
    request: ClientRequest,
) -> Result<Vec<u8>, RpcError> {
    let version = context.protocol_version();
    let (tools, prompts, resources, completions) = {
        let registry = server.registry();
        (registry.has_tools(), registry.has_prompts(), registry.has_resources(), registry.has_completions())
    };
    let out = Finisher { server, id, version };
    match request {
        ClientRequest::Discover(_) => {
            let capabilities = server.registry().capabilities();
            let supported = ProtocolVersion::ALL.iter().map(|version| version.as_str().to_owned()).collect();
            Ok(out.cacheable(DiscoverResult {
                supported_versions: supported,
                capabilities,
                instructions: server.instructions().map(str::to_owned),
                ..DiscoverResult::default()
            }))
        }
        ClientRequest::ListTools(params) => {
            require(tools, "tools", "tools/list")?;
            Ok(out.cacheable(list_tools(server, version, &params)?))
        }
        ClientRequest::CallTool(params) => {
            require(tools, "tools", "tools/call")?;
            let support = server.registry().tool(&params.name).map(|tool| tool.task_support).unwrap_or_default();
            if version.is_stateless() && support != TaskSupport::Forbidden {
                return call_tool_or_task(server, context, params, support, &out).await;
            }
            if version == ProtocolVersion::V2025_11_25 {
                match (params.task.is_some(), support) {
                    (true, TaskSupport::Forbidden) => {
                        return Err(RpcError::method_not_found(format!(
                            "Method not found: tool `{}` does not run as a task",
                            params.name
                        )));
                    }
                    (true, _) => return legacy_task(server, context, params, &out).await,
                    (false, TaskSupport::Required) => {
                        return Err(RpcError::method_not_found(format!(
                            "Method not found: tool `{}` only runs as a task; call it with `task`",
                            params.name
                        )));
                    }
                    (false, _) => {}
                }
            }
            let outcome = call_tool(server, context, params).await;
            out.complete_or_input(context, outcome)
        }
        ClientRequest::GetTask(params) if version.is_stateless() => {
            require_tasks(context)?;
            let record = server.tasks().get(&params.task_id, principal(context)).await?;
            Ok(out.object(record.detailed()))
        }
        ClientRequest::UpdateTask(params) if version.is_stateless() => {
            require_tasks(context)?;
            server.tasks().update(&params.task_id, principal(context), params.input_responses).await?;
            Ok(out.object(JsonObject::new()))
        }
        ClientRequest::CancelTask(params) if version.is_stateless() => {
            require_tasks(context)?;
            server.tasks().cancel(&params.task_id, principal(context)).await?;
            Ok(out.object(JsonObject::new()))
        }
        ClientRequest::GetTask(params) if version == ProtocolVersion::V2025_11_25 => {
            let record = server.tasks().get(&params.task_id, Some(&session_owner(context))).await?;
            Ok(out.object(record.legacy_task()))
        }
        ClientRequest::CancelTask(params) if version == ProtocolVersion::V2025_11_25 => {
            let owner = session_owner(context);
            let record = server.tasks().get(&params.task_id, Some(&owner)).await?;
            if record.status.is_terminal() {
                return Err(RpcError::invalid_params(format!(
                    "Invalid params: task `{}` already ended; it cannot be cancelled",
                    params.task_id
                )));
            }
            server.tasks().cancel(&params.task_id, Some(&owner)).await?;
            let record = server.tasks().get(&params.task_id, Some(&owner)).await?;
            Ok(out.object(record.legacy_task()))
        }
        ClientRequest::ListTasks(params) if version == ProtocolVersion::V2025_11_25 => {
            let tasks = server.tasks().list(&session_owner(context)).await;
            let page_size = server.options().page_size;
            let start = match params.cursor.as_deref() {
                None => 0,
                Some(cursor) => cursor
                    .strip_prefix('t')
                    .and_then(|offset| offset.parse::<usize>().ok())
                    .filter(|offset| *offset <= tasks.len())
                    .ok_or_else(|| RpcError::invalid_params("Invalid params: not a cursor this server gave"))?,
            };
            let page: Vec<Value> =
                tasks.iter().skip(start).take(page_size).map(|task| Value::Object(task.legacy_task())).collect();
            let mut result = JsonObject::new();
            result.insert("tasks".to_owned(), Value::Array(page));
            if start + page_size < tasks.len() {
                result.insert("nextCursor".to_owned(), Value::from(format!("t{}", start + page_size)));
            }
            Ok(out.object(result))
        }
        ClientRequest::TaskResult(params) if version == ProtocolVersion::V2025_11_25 => {
            let record = server.tasks().wait(&params.task_id, Some(&session_owner(context))).await?;
            task_payload(&out, record)
        }
        ClientRequest::ListPrompts(params) => {
            require(prompts, "prompts", "prompts/list")?;
            Ok(out.cacheable(list_prompts(server, version, &params)?))
        }
        ClientRequest::GetPrompt(params) => {
            require(prompts, "prompts", "prompts/get")?;
            let outcome = get_prompt(server, context, params).await;
            out.complete_or_input(context, outcome)
        }
        ClientRequest::ListResources(params) => {
            require(resources, "resources", "resources/list")?;
            Ok(out.cacheable(list_resources(server, version, &params)?))
        }
        ClientRequest::ListResourceTemplates(params) => {
            require(resources, "resources", "resources/templates/list")?;
            Ok(out.cacheable(list_templates(server, version, &params)?))
        }
        ClientRequest::ReadResource(params) => {
            require(resources, "resources", "resources/read")?;
            let outcome = read_resource(server, context, params).await;
            if let Some(required) = context.input_required()? {
                return Ok(out.input_required(&required));
            }
            Ok(out.cacheable(outcome?))
        }
        ClientRequest::Complete(params) => {
            require(completions, "completions", "completion/complete")?;
            Ok(out.complete(complete(server, context, params).await?))
        }
        ClientRequest::Listen(params) => Ok(out.complete(listen(server, context, id, *params).await)),
        other => Err(RpcError::method_not_found(format!("Method not found: {}", other.method()))),
    }
}

fn object(value: Value) -> JsonObject {
    match value {
        Value::Object(object) => object,
        _ => JsonObject::new(),
    }
}

fn principal(context: &RequestContext) -> Option<&str> {
    context.principal().map(Principal::as_str)
}

/// The task methods need the client to have declared the tasks extension on this request.
fn require_tasks(context: &RequestContext) -> Result<(), RpcError> {
    let declared = context
        .client_capabilities()
        .extensions
        .as_ref()
        .is_some_and(|extensions| extensions.contains_key(TASKS_EXTENSION));
    if declared {
        return Ok(());
    }
    Err(RpcError::new(
        ErrorCode::MISSING_REQUIRED_CLIENT_CAPABILITY.0,
        format!("Missing required client capability: declare the `{TASKS_EXTENSION}` extension to use tasks"),
    )
    .with_data(serde_json::json!({"requiredCapabilities": {"extensions": {TASKS_EXTENSION: {}}}})))
}

/// A call of a tool that may run as a task: answered directly when the client has no tasks
/// or the handler finishes (or asks for input) at its first poll; otherwise the handler goes
/// on as a task and the answer is `CreateTaskResult`.
async fn call_tool_or_task(
    server: &Server,
    context: &RequestContext,
    params: CallToolParams,
    support: TaskSupport,
    out: &Finisher<'_>,
) -> Result<Vec<u8>, RpcError> {
    if let Err(missing) = require_tasks(context) {
        if support == TaskSupport::Required {
            return Err(missing);
        }
        let outcome = call_tool(server, context, params).await;
        return out.complete_or_input(context, outcome);
    }
    let (task_server, task_context) = (server.clone(), context.clone());
    let mut work = CatchUnwind::new(async move { call_tool(&task_server, &task_context, params).await });
    let first = std::future::poll_fn(|cx| Poll::Ready(Pin::new(&mut work).poll(cx))).await;
    match first {
        Poll::Ready(Ok(outcome)) => return out.complete_or_input(context, outcome),
        Poll::Ready(Err(panic)) => {
            return Err(RpcError::internal(format!("Internal error: the handler panicked: {panic}")));
        }
        Poll::Pending => {}
    }
    // Input is gathered before a task exists: a handler that asked for some while it also
    // waits on something else gets its answers first.
    if let Some(required) = context.input_required()? {
        return Ok(out.input_required(&required));
    }
    let owner = context.principal().map(|principal| principal.as_str().to_owned());
    let (record, running) =
        server.tasks().create(owner, context.cancellation().clone(), server.events(), None, false).await?;
    context.attach_task(running.clone());
    run_task(server, &record, running, work);
    Ok(out.task_created(&record))
}

/// Runs a task's work on its own, recording its outcome; the handle lets cancellation stop it.
fn run_task<F>(server: &Server, record: &TaskRecord, running: Arc<Running>, work: F)
where
    F: Future<Output = Result<Result<CallToolResult, RpcError>, String>> + Send + Unpin + 'static,
{
    let task_server = server.clone();
    let task_id = record.task_id.clone();
    let finishing = running.clone();
    let handle = tokio::spawn(async move {
        let outcome = finishing.run_within_ttl(work).await;
        finishing.finish(outcome).await;
        task_server.tasks().forget(&task_id);
    });
    running.set_abort(handle.abort_handle());
}

/// Who owns a 2025-11-25 task: the principal when there is one, else the session.
fn session_owner(context: &RequestContext) -> String {
    match context.principal() {
        Some(principal) => format!("principal:{}", principal.as_str()),
        None => format!("session:{}", context.session_id()),
    }
}

/// A 2025-11-25 task-augmented `tools/call`: the task starts at once and the answer is
/// `CreateTaskResult {task}`.
async fn legacy_task(
    server: &Server,
    context: &RequestContext,
    mut params: CallToolParams,
    out: &Finisher<'_>,
) -> Result<Vec<u8>, RpcError> {
    let requested_ttl = params
        .task
        .take()
        .and_then(|task| task.get("ttl").and_then(Value::as_u64))
        .map(std::time::Duration::from_millis);
    let (record, running) = server
        .tasks()
        .create(Some(session_owner(context)), context.cancellation().clone(), server.events(), requested_ttl, true)
        .await?;
    context.send_to_session();
    let (task_server, task_context) = (server.clone(), context.clone());
    let work = CatchUnwind::new(async move { call_tool(&task_server, &task_context, params).await });
    run_task(server, &record, running, work);
    let mut result = JsonObject::new();
    result.insert("task".to_owned(), Value::Object(record.legacy_task()));
    Ok(out.object(result))
}

/// What `tasks/result` answers: what the tool call would have answered, tied to its task.
fn task_payload(out: &Finisher<'_>, record: TaskRecord) -> Result<Vec<u8>, RpcError> {
    if let Some(error) = record.error {
        return Err(RpcError::from(error));
    }
    let Some(Value::Object(mut result)) = record.result else {
        return Err(RpcError::internal(format!("Internal error: task `{}` was cancelled", record.task_id)));
    };
    let mut meta = JsonObject::new();
    meta.insert(RELATED_TASK.to_owned(), serde_json::json!({ "taskId": record.task_id }));
    result.insert("_meta".to_owned(), Value::Object(meta));
    Ok(out.plain(&result))
}

/// `_meta` key tying a message to a 2025-11-25 task.
const RELATED_TASK: &str = "io.modelcontextprotocol/related-task";

/// Encodes results the way the request's revision expects.
struct Finisher<'a> {
    server: &'a Server,
    id: &'a RequestId,
    version: ProtocolVersion,
}

impl Finisher<'_> {
    /// A result that is never cached.
    fn complete<R: Serialize + Stamp>(&self, mut result: R) -> Vec<u8> {
        if !self.version.is_stateless() {
            return respond(self.id, &result);
        }
        result.set_result_type(ResultType::complete());
        if let Some(meta) = result.meta_mut() {
            // The handler filled in `_meta` itself; the server info joins what it set.
            meta.extend(self.server.server_info_meta().clone());
            return respond(self.id, &result);
        }
        // Otherwise `_meta` is written from bytes encoded once, when the server was built.
        respond(self.id, &WithMeta { result: &result, meta: self.server.server_info_meta_json() })
    }

    /// The handler's result, unless it asked for input it has no answer to yet: then that
    /// request, whatever the handler made of the missing answer.
    fn complete_or_input<R: Serialize + Stamp>(
        &self,
        context: &RequestContext,
        outcome: Result<R, RpcError>,
    ) -> Result<Vec<u8>, RpcError> {
        if let Some(required) = context.input_required()? {
            return Ok(self.input_required(&required));
        }
        Ok(self.complete(outcome?))
    }

    /// A result exactly as given.
    fn plain(&self, result: &JsonObject) -> Vec<u8> {
        respond(self.id, result)
    }

    /// A result built as a JSON object (the task methods' answers).
    fn object(&self, mut result: JsonObject) -> Vec<u8> {
        if !self.version.is_stateless() {
            return respond(self.id, &result);
        }
        result.insert("resultType".to_owned(), Value::from("complete"));
        respond(self.id, &WithMeta { result: &result, meta: self.server.server_info_meta_json() })
    }

    /// A `CreateTaskResult`: the task's members, flat, with `resultType: "task"`.
    fn task_created(&self, record: &TaskRecord) -> Vec<u8> {
        let mut result = record.task_members();
        result.insert("resultType".to_owned(), Value::from("task"));
        respond(self.id, &WithMeta { result: &result, meta: self.server.server_info_meta_json() })
    }

    /// An `InputRequiredResult`: never cached, and never with cache hints.
    fn input_required(&self, result: &InputRequiredResult) -> Vec<u8> {
        respond(self.id, &WithMeta { result, meta: self.server.server_info_meta_json() })
    }

    /// A result that carries cache hints on 2026-07-28.
    fn cacheable<R: Serialize + Stamp>(&self, mut result: R) -> Vec<u8> {
        if self.version.is_stateless() {
            let ttl = u64::try_from(self.server.options().cache_ttl.as_millis()).unwrap_or(u64::MAX);
            result.cache(ttl, CacheScope::Public);
        }
        self.complete(result)
    }
}

fn respond<R: Serialize>(id: &RequestId, result: &R) -> Vec<u8> {
    encode(&ResponseMessage { jsonrpc: JsonRpc2, id, result })
}

/// A result whose own `_meta` is empty, written with a pre-encoded `_meta` object.
#[derive(Serialize)]
struct WithMeta<'a, R> {
    #[serde(flatten)]
    result: &'a R,
    #[serde(rename = "_meta")]
    meta: &'a serde_json::value::RawValue,
}

/// The members every 2026-07-28 result carries.
trait Stamp {
    fn set_result_type(&mut self, result_type: ResultType);
    fn meta_mut(&mut self) -> Option<&mut JsonObject>;
    fn cache(&mut self, _ttl_ms: u64, _scope: CacheScope) {}
}

macro_rules! stamp {
    ($($result:ty),* ; cacheable: $($cacheable:ty),*) => {
        $(impl Stamp for $result {
            fn set_result_type(&mut self, result_type: ResultType) {
                self.result_type = Some(result_type);
            }
            fn meta_mut(&mut self) -> Option<&mut JsonObject> {
                self.meta.as_mut()
            }
        })*
        $(impl Stamp for $cacheable {
            fn set_result_type(&mut self, result_type: ResultType) {
                self.result_type = Some(result_type);
            }
            fn meta_mut(&mut self) -> Option<&mut JsonObject> {
                self.meta.as_mut()
            }
            fn cache(&mut self, ttl_ms: u64, scope: CacheScope) {
                self.ttl_ms = Some(ttl_ms);
                self.cache_scope = Some(scope);
            }
        })*
    };
}

stamp!(CallToolResult, GetPromptResult, CompleteResult, EmptyResult, ListenResult;
    cacheable: DiscoverResult, ListToolsResult, ListPromptsResult, ListResourcesResult, ListResourceTemplatesResult,
    ReadResourceResult);

/// One page of `map`'s enabled entries, each converted for the client's revision.
fn list_page<V, T>(
    server: &Server,
    map: &std::collections::BTreeMap<String, Arc<V>>,
    params: &PaginatedParams,
    enabled: impl Fn(&V) -> bool,
    convert: impl Fn(&V) -> T,
) -> Result<(Vec<T>, Option<String>), RpcError> {
    let (items, next_cursor) = page(map, params.cursor.as_deref(), server.options().page_size, enabled)?;
    Ok((items.into_iter().map(|item| convert(item)).collect(), next_cursor))
}

fn list_tools(
    server: &Server,
    version: ProtocolVersion,
    params: &PaginatedParams,
) -> Result<ListToolsResult, RpcError> {
    let registry = server.registry();
    let (tools, next_cursor) =
        list_page(server, &registry.tools, params, |tool| tool.enabled, |tool| tool_for(version, &tool.definition))?;
    Ok(ListToolsResult { tools, next_cursor, ..ListToolsResult::default() })
}

fn list_prompts(
    server: &Server,
    version: ProtocolVersion,
    params: &PaginatedParams,
) -> Result<ListPromptsResult, RpcError> {
    let registry = server.registry();
    let (prompts, next_cursor) = list_page(
        server,
        &registry.prompts,
        params,
        |prompt| prompt.enabled,
        |prompt| prompt_for(version, &prompt.definition),
    )?;
    Ok(ListPromptsResult { prompts, next_cursor, ..ListPromptsResult::default() })
}

fn list_resources(
    server: &Server,
    version: ProtocolVersion,
    params: &PaginatedParams,
) -> Result<ListResourcesResult, RpcError> {
    let registry = server.registry();
    let (resources, next_cursor) = list_page(
        server,
        &registry.resources,
        params,
        |resource| resource.enabled,
        |resource| resource_for(version, &resource.definition),
    )?;
    Ok(ListResourcesResult { resources, next_cursor, ..ListResourcesResult::default() })
}

fn list_templates(
    server: &Server,
    version: ProtocolVersion,
    params: &PaginatedParams,
) -> Result<ListResourceTemplatesResult, RpcError> {
    let registry = server.registry();
    let (resource_templates, next_cursor) = list_page(
        server,
        &registry.templates,
        params,
        |template| template.enabled,
        |template| template_for(version, &template.definition),
    )?;
    Ok(ListResourceTemplatesResult { resource_templates, next_cursor, ..ListResourceTemplatesResult::default() })
}

async fn call_tool(
    server: &Server,
    context: &RequestContext,
    params: CallToolParams,
) -> Result<CallToolResult, RpcError> {
    let version = context.protocol_version();
    let tool = server
        .registry()
        .tool(&params.name)
        .ok_or_else(|| RpcError::invalid_params(format!("Unknown tool: {}", params.name)))?;
    let invalid_arguments = |message: String| {
        let message = format!("Invalid arguments for tool `{}`: {message}", params.name);
        if version.tool_input_errors_are_results() {
            Ok(CallToolResult::error(message))
        } else {
            Err(RpcError::invalid_params(message))
        }
    };
    let schema = match &tool.schema {
        Ok(schema) => schema,
        Err(message) => return Err(RpcError::internal(message.clone())),
    };
    let mut arguments = params.arguments.unwrap_or_default();
    if let Err(message) = schema.prepare(&mut arguments) {
        return invalid_arguments(message);
    }
    let call =
        ToolCall { name: tool.definition.name.as_str().into(), arguments: Some(arguments), context: context.clone() };
    let result = match tool.handler.call(call).await {
        Ok(result) => result,
        Err(Rejection::InvalidArguments(message)) => return invalid_arguments(message),
        Err(Rejection::Rpc(error)) => return Err(error),
    };
    Ok(tool_result_for(version, result))
}

/// Adapts a tool result to the revision: structured content that a revision cannot carry is
/// dropped, keeping (or adding) its text mirror.
fn tool_result_for(version: ProtocolVersion, mut result: CallToolResult) -> CallToolResult {
    let Some(structured) = &result.structured_content else { return result };
    let keep = version.is_stateless() || (version.has_structured_output() && structured.is_object());
    let mirrored = result.content.iter().any(|block| matches!(block, wharf_protocol::ContentBlock::Text(_)));
    if !mirrored {
        result.content.push(wharf_protocol::ContentBlock::text(structured.to_string()));
    }
    if !keep {
        result.structured_content = None;
    }
    result
}

async fn get_prompt(
    server: &Server,
    context: &RequestContext,
    params: GetPromptParams,
) -> Result<GetPromptResult, RpcError> {
    let prompt = server
        .registry()
        .prompt(&params.name)
        .ok_or_else(|| RpcError::invalid_params(format!("Unknown prompt: {}", params.name)))?;
    prompt.render(params.arguments.unwrap_or_default(), context.clone()).await
}

async fn read_resource(
    server: &Server,
    context: &RequestContext,
    params: ReadResourceParams,
) -> Result<ReadResourceResult, RpcError> {
    let version = context.protocol_version();
    let not_found = || resource_not_found(version, &params.uri);
    let (resource, template) = {
        let registry = server.registry();
        match registry.resource(&params.uri) {
            Some(resource) => (Some(resource), None),
            None => (None, registry.match_template(&params.uri)),
        }
    };
    let contents = match (resource, template) {
        (Some(resource), _) => resource.read(context.clone()).await,
        (None, Some((template, variables))) => template.read(&params.uri, variables, context.clone()).await,
        (None, None) => return Err(not_found()),
    };
    let contents =
        contents.map_err(|error| if error.code() == ErrorCode::RESOURCE_NOT_FOUND.0 { not_found() } else { error })?;
    if contents.is_empty() {
        // An empty answer must not stand for a missing resource (SEP-2164).
        return Err(not_found());
    }
    Ok(ReadResourceResult { contents, ..ReadResourceResult::default() })
}

/// "Resource not found": `-32002` before 2026-07-28, `-32602` on it; both carry the URI.
fn resource_not_found(version: ProtocolVersion, uri: &str) -> RpcError {
    let code = if version.is_stateless() { ErrorCode::INVALID_PARAMS } else { ErrorCode::RESOURCE_NOT_FOUND };
    RpcError::new(code.0, format!("Resource not found: {uri}")).with_data(wharf_protocol::not_found_data(uri))
}

async fn complete(
    server: &Server,
    context: &RequestContext,
    params: CompleteParams,
) -> Result<CompleteResult, RpcError> {
    let argument = params.argument.name.clone();
    let handler = {
        let registry = server.registry();
        match &params.reference {
            CompletionReference::Prompt { name, .. } => {
                let prompt =
                    registry.prompt(name).ok_or_else(|| RpcError::invalid_params(format!("Unknown prompt: {name}")))?;
                let declared = prompt.definition.arguments.iter().flatten().any(|known| known.name == argument);
                if !declared {
                    return Err(RpcError::invalid_params(format!("Prompt `{name}` has no argument `{argument}`")));
                }
                prompt.completions.get(&argument).cloned()
            }
            CompletionReference::ResourceTemplate { uri } => {
                let template = registry
                    .template(uri)
                    .ok_or_else(|| RpcError::invalid_params(format!("Unknown resource template: {uri}")))?;
                let declared =
                    template.template.as_ref().is_ok_and(|parsed| parsed.variables().contains(&argument.as_str()));
                if !declared {
                    return Err(RpcError::invalid_params(format!("Template `{uri}` has no variable `{argument}`")));
                }
                template.completions.get(&argument).cloned()
            }
        }
    };
    let Some(handler) = handler else { return Ok(CompleteResult::default()) };
    let call = CompletionCall {
        argument,
        value: params.argument.value,
        arguments: params.context.and_then(|context| context.arguments).unwrap_or_default(),
        context: context.clone(),
    };
    let mut values = handler(call).await?;
    let total = values.len();
    values.truncate(MAX_COMPLETION_VALUES);
    let has_more = total > values.len();
    Ok(CompleteResult {
        completion: Completion { values, total: Some(total as u64), has_more: Some(has_more) },
        ..CompleteResult::default()
    })
}

/// Handles a notification from the client.
pub(crate) fn handle_notification(session: &Session, notification: ClientNotification) {
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

/// Turns a JSON value into the result object of a client's answer.
pub(crate) fn answer_value(raw: &serde_json::value::RawValue) -> Value {
    serde_json::from_str(raw.get()).unwrap_or(Value::Null)
}
