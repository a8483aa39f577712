//! Tasks in dispatch: whether a `tools/call` runs as a task (2026-07-28 extension, or
//! 2025-11-25 experimental tasks) and the `tasks/*` methods of both.

use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;
use std::task::Poll;

use serde_json::Value;
use wharf_protocol::{
    CallToolParams, CallToolResult, ClientRequest, Era, ErrorCode, JsonObject, ProtocolVersion, TASKS_EXTENSION,
};

use super::finish::Finisher;
use super::methods::call_tool;
use super::settle::{became_task, release, settle};
use crate::client_key::client_key;
use crate::context::RequestContext;
use crate::error::RpcError;
use crate::idempotency::HeldKey;
use crate::layer::ToolFacts;
use crate::panic::CatchUnwind;
use crate::principal::Principal;
use crate::registry::{decode_cursor, encode_cursor};
use crate::server::Server;
use crate::task::record::TaskRecord;
use crate::task::{RELATED_TASK, Running, TaskSupport};
use crate::tool::ToolDef;

/// How a `tools/call` runs, decided before anything is awaited. The task routes' futures are
/// several times the size of a direct call's, so their callers box them.
pub(super) enum CallRoute {
    /// Called right away, its result answered.
    Direct,
    /// The 2026-07-28 tasks extension decides on the first poll ([`call_tool_or_task`]).
    StatelessTask,
    /// A 2025-11-25 task-augmented call ([`session_task`]).
    LegacyTask,
}

/// How `tools/call` runs in the request's revision: directly, or as a task where the revision
/// and the tool allow; an error where the call and the tool's task support disagree.
pub(super) fn call_route(
    context: &RequestContext,
    tool: &ToolDef,
    params: &CallToolParams,
) -> Result<CallRoute, RpcError> {
    let version = context.protocol_version();
    let support = tool.task_support;
    if version.era() == Era::Stateless && support != TaskSupport::Forbidden {
        return Ok(CallRoute::StatelessTask);
    }
    if version == ProtocolVersion::V2025_11_25 {
        match (params.task.is_some(), support) {
            (true, TaskSupport::Forbidden) => {
                return Err(RpcError::method_not_found(format!(
                    "Method not found: tool `{}` does not run as a task",
                    params.name
                )));
            }
            (true, _) => return Ok(CallRoute::LegacyTask),
            (false, TaskSupport::Required) => {
                return Err(RpcError::method_not_found(format!(
                    "Method not found: tool `{}` only runs as a task; call it with `task`",
                    params.name
                )));
            }
            (false, _) => {}
        }
    }
    Ok(CallRoute::Direct)
}

/// What middleware is told of a `tools/call`'s tool before the call runs: whether the server
/// has it, and whether the call may become a task (a stateless call of a tool that may run as
/// one, from a client that declared the tasks extension on it); and the tool, so that the call
/// does not look it up again.
pub(super) fn tool_facts(server: &Server, request: &ClientRequest) -> (ToolFacts, Option<Arc<ToolDef>>) {
    let ClientRequest::CallTool(params) = request else { return (ToolFacts::default(), None) };
    let Some(tool) = server.registry().tool(&params.name).cloned() else {
        return (ToolFacts::default(), None);
    };
    let declared = params
        .meta
        .as_deref()
        .and_then(|meta| meta.client_capabilities.as_ref())
        .is_some_and(|capabilities| declares_tasks(capabilities));
    let may_become_task = declared && request.era() == Era::Stateless && tool.task_support != TaskSupport::Forbidden;
    (ToolFacts { known: true, may_become_task }, Some(tool))
}

/// True when the client capabilities declare the tasks extension.
pub(super) fn declares_tasks(capabilities: &wharf_protocol::ClientCapabilities) -> bool {
    capabilities.extensions.as_ref().is_some_and(|extensions| extensions.contains_key(TASKS_EXTENSION))
}

/// True for the `tasks/*` methods, which [`serve_task_method`] answers.
pub(super) fn is_task_method(request: &ClientRequest) -> bool {
    matches!(
        request,
        ClientRequest::GetTask(_)
            | ClientRequest::UpdateTask(_)
            | ClientRequest::CancelTask(_)
            | ClientRequest::TaskResult(_)
            | ClientRequest::ListTasks(_)
    )
}

/// The `tasks/*` methods of the request's revision: 2026-07-28 tasks are owned by the
/// principal and need the extension on each request; 2025-11-25 tasks are owned by the session.
/// Other revisions, and methods a revision does not have, get -32601.
pub(super) async fn serve_task_method(
    server: &Server,
    context: &RequestContext,
    request: ClientRequest,
    out: &Finisher<'_>,
) -> Result<Vec<u8>, RpcError> {
    let version = context.protocol_version();
    let tasks = server.tasks();
    if version.era() == Era::Stateless {
        let principal = context.principal().map(Principal::as_str);
        match request {
            ClientRequest::GetTask(params) => {
                require_tasks(context)?;
                return Ok(out.object(tasks.get(&params.task_id, principal).await?.detailed()));
            }
            ClientRequest::UpdateTask(params) => {
                require_tasks(context)?;
                tasks.update(&params.task_id, principal, params.input_responses).await?;
                return Ok(out.object(JsonObject::new()));
            }
            ClientRequest::CancelTask(params) => {
                require_tasks(context)?;
                tasks.cancel(&params.task_id, principal).await?;
                return Ok(out.object(JsonObject::new()));
            }
            other => return Err(no_such_method(&other, version)),
        }
    }
    if version != ProtocolVersion::V2025_11_25 {
        return Err(no_such_method(&request, version));
    }
    let owner_id = session_owner(context);
    let owner = Some(owner_id.as_str());
    match request {
        ClientRequest::GetTask(params) => Ok(out.object(tasks.get(&params.task_id, owner).await?.session_task())),
        ClientRequest::CancelTask(params) => {
            if tasks.get(&params.task_id, owner).await?.status.is_terminal() {
                return Err(RpcError::invalid_params(format!(
                    "Invalid params: task `{}` already ended; it cannot be cancelled",
                    params.task_id
                )));
            }
            tasks.cancel(&params.task_id, owner).await?;
            Ok(out.object(tasks.get(&params.task_id, owner).await?.session_task()))
        }
        ClientRequest::TaskResult(params) => task_payload(out, tasks.wait(&params.task_id, owner).await?),
        ClientRequest::ListTasks(params) => {
            let listed = tasks.list(&owner_id).await;
            let start =
                match params.cursor.as_deref() {
                    None => 0,
                    Some(cursor) => decode_cursor(cursor)?
                        .parse::<usize>()
                        .ok()
                        .filter(|offset| *offset <= listed.len())
                        .ok_or_else(|| RpcError::invalid_params("Invalid params: not a cursor this server gave"))?,
                };
            let page_size = server.options().page_size;
            let page: Vec<Value> =
                listed.iter().skip(start).take(page_size).map(|task| Value::Object(task.session_task())).collect();
            let mut result = JsonObject::new();
            result.insert("tasks".to_owned(), Value::Array(page));
            if start + page_size < listed.len() {
                result.insert("nextCursor".to_owned(), Value::from(encode_cursor(&(start + page_size).to_string())));
            }
            Ok(out.object(result))
        }
        other => Err(no_such_method(&other, version)),
    }
}

fn no_such_method(request: &ClientRequest, version: ProtocolVersion) -> RpcError {
    RpcError::method_not_found(format!("Method not found: `{}` does not exist in revision {version}", request.method()))
}

/// The task methods need the client to have declared the tasks extension on this request.
fn require_tasks(context: &RequestContext) -> Result<(), RpcError> {
    if declares_tasks(context.client_capabilities()) {
        return Ok(());
    }
    Err(tasks_missing())
}

/// The refusal of a request that needs the tasks extension its client did not declare.
fn tasks_missing() -> RpcError {
    RpcError::new(
        ErrorCode::MISSING_REQUIRED_CLIENT_CAPABILITY.0,
        format!("Missing required client capability: declare the `{TASKS_EXTENSION}` extension to use tasks"),
    )
    .with_data(serde_json::json!({"requiredCapabilities": {"extensions": {TASKS_EXTENSION: {}}}}))
}

/// A call of a tool that may run as a task: answered directly when the client has no tasks
/// or the handler finishes (or asks for input) at its first poll; otherwise the handler goes
/// on as a task and the answer is `CreateTaskResult`. A held idempotency key is finished with
/// the outcome, or with the task.
pub(super) async fn call_tool_or_task(
    server: &Server,
    context: &RequestContext,
    tool: Arc<ToolDef>,
    params: Box<CallToolParams>,
    out: &Finisher<'_>,
    held: Option<HeldKey>,
) -> Result<Vec<u8>, RpcError> {
    // Checked without making the refusal: most clients declare no tasks, and most tools do
    // not require them.
    if !declares_tasks(context.client_capabilities()) {
        if tool.task_support == TaskSupport::Required {
            release(held).await;
            return Err(tasks_missing());
        }
        let outcome = call_tool(context, &tool, params).await;
        settle(held, context, &outcome).await;
        return out.complete_or_input(context, outcome);
    }
    let task_context = context.clone();
    let mut work = CatchUnwind::new(async move { call_tool(&task_context, &tool, params).await });
    let first = match context.task_after() {
        None => std::future::poll_fn(|cx| Poll::Ready(Pin::new(&mut work).poll(cx))).await,
        // Middleware asked for the call to stay a call for a while (a timeout that turns long
        // calls into tasks); a handler that asks for input meanwhile is answered at once.
        Some(wait) => {
            let mut deadline = std::pin::pin!(tokio::time::sleep(wait));
            std::future::poll_fn(|cx| match Pin::new(&mut work).poll(cx) {
                Poll::Ready(done) => Poll::Ready(Poll::Ready(done)),
                Poll::Pending
                    if context.lacks_input() || context.wants_task_now() || deadline.as_mut().poll(cx).is_ready() =>
                {
                    Poll::Ready(Poll::Pending)
                }
                Poll::Pending => Poll::Pending,
            })
            .await
        }
    };
    match first {
        Poll::Ready(Ok(outcome)) => {
            settle(held, context, &outcome).await;
            return out.complete_or_input(context, outcome);
        }
        Poll::Ready(Err(panic)) => {
            let error = RpcError::internal(format!("Internal error: the handler panicked: {panic}"));
            settle(held, context, &Err(error.clone())).await;
            return Err(error);
        }
        Poll::Pending => {}
    }
    // Input is gathered before a task exists: a handler that asked for some while it also
    // waits on something else gets its answers first.
    if let Some(required) = context.input_required()? {
        release(held).await;
        return Ok(out.input_required(&required));
    }
    let owner = context.principal().map(|principal| principal.as_str().to_owned());
    let counted_against = quota_owner(context);
    let (record, running) = server
        .tasks()
        .create(owner, counted_against, context.cancellation().clone(), server.events(), None, Era::Stateless)
        .await?;
    context.attach_task(running.clone());
    became_task(held, &record.task_id, false).await;
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
pub(super) fn session_owner(context: &RequestContext) -> String {
    match context.principal() {
        Some(principal) => format!("principal:{}", principal.as_str()),
        None => format!("session:{}", context.session_id()),
    }
}

/// Whom a new task counts against for the quota of unfinished tasks: the principal, else the
/// client's address, else the session (a stdio connection's, or a 2025 session's); `None` for
/// a stateless request whose address is unknown (an app that mounts the endpoint without it).
fn quota_owner(context: &RequestContext) -> Option<Arc<str>> {
    client_key(context.principal(), context.client_address()).or_else(|| {
        let session = context.session_id();
        (!session.is_empty()).then(|| format!("session:{session}").into())
    })
}

/// A 2025-11-25 task-augmented `tools/call`: the task starts at once and the answer is
/// `CreateTaskResult {task}`. A held idempotency key is finished with the task.
pub(super) async fn session_task(
    server: &Server,
    context: &RequestContext,
    tool: Arc<ToolDef>,
    mut params: Box<CallToolParams>,
    out: &Finisher<'_>,
    held: Option<HeldKey>,
) -> Result<Vec<u8>, RpcError> {
    let requested_ttl = params
        .task
        .take()
        .and_then(|task| task.get("ttl").and_then(Value::as_u64))
        .map(std::time::Duration::from_millis);
    let counted_against = quota_owner(context);
    let cancel = context.cancellation().clone();
    let created = server
        .tasks()
        .create(Some(session_owner(context)), counted_against, cancel, server.events(), requested_ttl, Era::Session)
        .await;
    let (record, running) = match created {
        Ok(created) => created,
        Err(error) => {
            release(held).await;
            return Err(error);
        }
    };
    became_task(held, &record.task_id, true).await;
    context.became_task(record.task_id.clone(), running.clone());
    let task_context = context.clone();
    let work = CatchUnwind::new(async move { call_tool(&task_context, &tool, params).await });
    run_task(server, &record, running, work);
    let mut result = JsonObject::new();
    result.insert("task".to_owned(), Value::Object(record.session_task()));
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
    // The result keeps the `_meta` its handler gave it; the task's id joins it.
    let meta = result.entry("_meta").or_insert_with(|| Value::Object(JsonObject::new()));
    if let Value::Object(meta) = meta {
        meta.insert(RELATED_TASK.to_owned(), serde_json::json!({ "taskId": record.task_id }));
    }
    Ok(out.plain(&result))
}
