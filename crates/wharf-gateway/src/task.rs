//! Tasks across the gateway: a mounted tool's call stays a plain call on the gateway until its
//! upstream answers with a task, or takes long; the gateway's call then goes on as a task of
//! its own, which follows the upstream's task to its end and cancels it when the gateway's
//! task is cancelled. A 2026-07-28 upstream's task (the extension `io.modelcontextprotocol/tasks`)
//! is polled, its input requests passed to the gateway's client and the answers back; a
//! 2025-11-25 upstream's task (experimental tasks) is asked for with `task` when the tool
//! needs one or the gateway's client has tasks, and awaited with `tasks/result`.

use std::collections::BTreeMap;
use std::sync::{Arc, Mutex, PoisonError};
use std::time::Duration;

use serde_json::{Value, json};
use wharf_client::{Client, RequestOptions};
use wharf_protocol::{ErrorObject, FromJson, InputRequest, TASKS_EXTENSION};
use wharf_server::{Layer, LayerFuture, McpRequest, Next, RequestContext, RpcError};

use crate::claims::Claims;
use crate::kind::Kind;
use crate::relay::ask_keyed;

/// How long a mounted tool's call that may become a task stays a plain call, unless its
/// upstream answers with a task first.
const STAY_A_CALL: Duration = Duration::from_secs(1);

/// The shortest and longest pause between two polls of an upstream's task.
const POLL_BOUNDS: (Duration, Duration) = (Duration::from_millis(20), Duration::from_secs(5));

/// How many times an upstream task is polled before the gateway gives up on it.
const MAX_POLLS: usize = 100_000;

/// Keeps the calls of mounted tools plain calls for a while: the gateway waiting for its
/// upstream is not the tool having to wait.
pub(crate) struct StayACall {
    pub(crate) claims: Arc<Mutex<Claims>>,
}

impl Layer for StayACall {
    fn reads_transport_data(&self) -> bool {
        false
    }

    fn handle<'a>(&'a self, mut request: McpRequest<'a>, next: Next<'a>) -> LayerFuture<'a> {
        if request.may_become_task()
            && let Some(tool) = request.tool_name()
            && self.claims.lock().unwrap_or_else(PoisonError::into_inner).holder(Kind::Tool, tool).is_some()
        {
            request.become_task_after(STAY_A_CALL);
        }
        next.run(request)
    }
}

/// True when the gateway's client declared the tasks extension on this request.
pub(crate) fn declares_tasks(context: &RequestContext) -> bool {
    context.client_capabilities().extensions.as_ref().is_some_and(|extensions| extensions.contains_key(TASKS_EXTENSION))
}

/// What a 2025-11-25 upstream listed of a tool's tasks (`execution.taskSupport`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum ListedTasks {
    Unlisted,
    Optional,
    Required,
}

impl ListedTasks {
    /// True when the call goes upstream as a task: the tool needs one, or may run as one and
    /// the gateway's client has tasks (the 2026-07-28 extension, or 2025-11-25 tasks).
    pub(crate) fn asks_for_task(self, context: &RequestContext) -> bool {
        match self {
            ListedTasks::Unlisted => false,
            ListedTasks::Required => true,
            ListedTasks::Optional => declares_tasks(context) || context.client_capabilities().tasks.is_some(),
        }
    }
}

/// Calls a tool of a 2025-11-25 upstream as a task (`params` without `task`), and awaits its
/// result; `created` hears that the upstream made the task (the gateway's call goes on as a
/// task then), and `options` place the upstream's questions with this request.
pub(crate) async fn call_as_session_task(
    client: &Client,
    mount: &str,
    mut params: Value,
    options: &RequestOptions,
    created: impl FnOnce(),
) -> Result<Value, wharf_client::ClientError> {
    if let Some(object) = params.as_object_mut() {
        object.insert("task".to_owned(), json!({}));
    }
    let answer = client.request_with("tools/call", params, options).await?;
    let Some(task_id) = answer.pointer("/task/taskId").and_then(Value::as_str).map(str::to_owned) else {
        // The upstream answered at once.
        return Ok(answer);
    };
    created();
    let mut guard =
        CancelUnlessDone { client: client.clone(), options: options.clone(), task_id: Some(task_id.clone()) };
    let result = client.request_with("tasks/result", json!({ "taskId": task_id }), options).await;
    if result.is_ok() {
        guard.task_id = None;
    } else {
        tracing::debug!(mount, task = %task_id, "an upstream task's result did not come");
    }
    result
}

/// Follows the upstream's task that `created` (its `CreateTaskResult`) describes to its end,
/// as a task of the gateway's own: the task's result, or its error.
pub(crate) async fn follow(
    context: &RequestContext,
    client: &Client,
    mount: &str,
    options: &RequestOptions,
    created: Value,
) -> Result<Value, RpcError> {
    let task_id =
        created.get("taskId").and_then(Value::as_str).map(str::to_owned).ok_or_else(|| {
            RpcError::internal(format!("the mount `{mount}` answered with a task without a `taskId`"))
        })?;
    context.become_task_now();
    let mut guard =
        CancelUnlessDone { client: client.clone(), options: options.clone(), task_id: Some(task_id.clone()) };
    let pause = created
        .get("pollIntervalMs")
        .and_then(Value::as_u64)
        .map_or(POLL_BOUNDS.0, Duration::from_millis)
        .clamp(POLL_BOUNDS.0, POLL_BOUNDS.1);
    let mut status = created;
    for _ in 0..MAX_POLLS {
        match status.get("status").and_then(Value::as_str) {
            Some("completed") => {
                guard.task_id = None;
                return Ok(status.get("result").cloned().unwrap_or(Value::Null));
            }
            Some("failed") => {
                guard.task_id = None;
                let error: ErrorObject = status
                    .get("error")
                    .cloned()
                    .and_then(|error| ErrorObject::from_json_value(error).ok())
                    .unwrap_or_else(|| ErrorObject::new(wharf_protocol::ErrorCode::INTERNAL_ERROR, "the task failed"));
                return Err(RpcError::from(error));
            }
            Some("cancelled") => {
                guard.task_id = None;
                return Err(RpcError::internal(format!("the mount `{mount}` cancelled the task")));
            }
            Some("input_required") => {
                let requests: BTreeMap<String, InputRequest> = status
                    .get("inputRequests")
                    .cloned()
                    .and_then(|requests| BTreeMap::from_json_value(requests).ok())
                    .unwrap_or_default();
                let answers = ask_all(context, requests).await?;
                let params = json!({ "taskId": task_id, "inputResponses": answers });
                client.request_with("tasks/update", params, options).await.map_err(|err| {
                    RpcError::internal(format!("the mount `{mount}` did not take the task's answers: {err}"))
                })?;
            }
            _ => tokio::time::sleep(pause).await,
        }
        status = client.request_with("tasks/get", json!({ "taskId": task_id }), options).await.map_err(|err| {
            RpcError::internal(format!("the mount `{mount}` did not say how its task is doing: {err}"))
        })?;
    }
    Err(RpcError::internal(format!("the mount `{mount}`'s task did not end after {MAX_POLLS} polls")))
}

/// Asks the gateway's client all of `requests` at once (a task shows them together), each
/// under its key; their answers by key.
async fn ask_all(
    context: &RequestContext,
    requests: BTreeMap<String, InputRequest>,
) -> Result<serde_json::Map<String, Value>, RpcError> {
    let asking: Vec<_> = requests
        .into_iter()
        .map(|(key, request)| {
            let context = context.clone();
            tokio::spawn(async move {
                let answer = ask_keyed(&context, &key, &request).await;
                (key, answer)
            })
        })
        .collect();
    let mut answers = serde_json::Map::new();
    for asked in asking {
        let (key, answer) =
            asked.await.map_err(|err| RpcError::internal(format!("Internal error: asking failed: {err}")))?;
        answers.insert(key, answer?);
    }
    Ok(answers)
}

/// Cancels the upstream's task when the gateway stops following it before its end.
struct CancelUnlessDone {
    client: Client,
    options: RequestOptions,
    task_id: Option<String>,
}

impl Drop for CancelUnlessDone {
    fn drop(&mut self) {
        if let Some(task_id) = self.task_id.take() {
            let (client, options) = (self.client.clone(), self.options.clone());
            tokio::spawn(async move {
                if let Err(err) = client.request_with("tasks/cancel", json!({ "taskId": task_id }), &options).await {
                    tracing::debug!(%err, "an upstream task could not be cancelled");
                }
            });
        }
    }
}
