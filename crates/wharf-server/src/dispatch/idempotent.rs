//! `tools/call` of a tool that takes effect once ([`Idempotency`](crate::Idempotency)): the
//! call's key is claimed in the server's store before the handler runs. The call that wins the
//! claim runs and records its outcome (or the task it became); every other call with the key
//! is answered from the record, waits a bounded time for a call still running, or hears that
//! the outcome of a call whose instance died is unknown. Only tools that opt in come here.

use std::sync::Arc;
use std::time::{Duration, Instant};

use serde_json::Value;
use wharf_protocol::{CallToolParams, CallToolResult, Era, ErrorCode, FromJson, TASKS_EXTENSION};

use super::finish::Finisher;
use super::methods::{Fitting, StartedCall, start_call, tool_result_for};
use super::settle::{release, settle};
use super::tasks::{self, CallRoute};
use crate::context::RequestContext;
use crate::error::RpcError;
use crate::idempotency::{
    Claimed, HeldKey, IDEMPOTENCY_KEY_META, IDEMPOTENT_REPLAY_META, IdempotencyStoreError, KeySource, Recorded,
    arguments_fingerprint, derived_key,
};
use crate::input::digest;
use crate::panic::CatchUnwind;
use crate::principal::Principal;
use crate::server::Server;
use crate::tool::ToolDef;

/// The code of the answer to a duplicate whose first call is still running after the wait:
/// a server error, with `retryAfterSeconds`, as a rate limit's.
const CALL_IN_PROGRESS: i64 = -32000;
/// The code of the answer to a call whose key was claimed by a call that never finished.
const OUTCOME_UNKNOWN: i64 = -32005;
/// The longest a key may be, in bytes.
const MAX_KEY_BYTES: usize = 255;

/// The key a call is known by in the store, and as the client named it (for messages).
struct CallKey {
    stored: String,
    shown: String,
}

/// Serves a call of a tool with idempotency: keyed when the client sent a key or the tool
/// derives one, else routed as any call.
pub(super) async fn call(
    server: &Server,
    context: &RequestContext,
    tool: Arc<ToolDef>,
    params: Box<CallToolParams>,
    route: CallRoute,
    out: &Finisher<'_>,
) -> Result<Vec<u8>, RpcError> {
    let Some(policy) = tool.idempotency.clone() else {
        return route_call(server, context, tool, params, route, out, None).await;
    };
    let arguments = match &params.arguments {
        Some(arguments) => Value::Object(arguments.to_object().map_err(|err| {
            RpcError::invalid_params(format!("Invalid params: the arguments of `{}` do not read: {err}", params.name))
        })?),
        None => Value::Object(wharf_protocol::JsonObject::new()),
    };
    let caller = context.principal().map(Principal::as_str).unwrap_or_default();
    let sent = context.meta().and_then(|meta| meta.get(IDEMPOTENCY_KEY_META));
    let Some(key) = call_key(&params.name, sent, policy.keys, caller, &arguments)? else {
        return route_call(server, context, tool, params, route, out, None).await;
    };
    let fingerprint = arguments_fingerprint(&params.name, &arguments);
    let store = server.idempotency();
    let started = Instant::now();
    let mut pause = Duration::from_millis(20);
    loop {
        let claimed = store.claim(&key.stored, &fingerprint, policy.lease, policy.ttl).await.map_err(store_error)?;
        match claimed {
            Claimed::Run => break,
            Claimed::Finished(recorded) => {
                return replay(server, context, &tool, &key, &recorded, &route, policy.wait, out).await;
            }
            Claimed::Running if started.elapsed() + pause <= policy.wait => {
                tokio::time::sleep(pause).await;
                pause = (pause * 2).min(Duration::from_millis(250));
            }
            Claimed::Running => return Err(in_progress(&key, policy.lease)),
            Claimed::Conflict => {
                return Err(RpcError::invalid_params(format!(
                    "Invalid params: the idempotency key `{}` was used with other arguments; a new call needs a new key",
                    key.shown
                ))
                .with_data(serde_json::json!({ IDEMPOTENCY_KEY_META: key.shown })));
            }
            Claimed::OutcomeUnknown => return Err(outcome_unknown(&key)),
        }
    }
    tracing::debug!(tool = %params.name, "an idempotency key was claimed");
    let held = HeldKey::new(store.clone(), key.stored, policy.lease);
    route_call(server, context, tool, params, route, out, Some(held)).await
}

/// The call's key: the one the client `sent`, or one derived where the tool says so; `None`
/// when it has neither. Keys are kept per caller and tool, so that one caller's key never
/// answers another.
fn call_key(
    tool: &str,
    sent: Option<&Value>,
    keys: KeySource,
    caller: &str,
    arguments: &Value,
) -> Result<Option<CallKey>, RpcError> {
    match sent {
        Some(Value::String(key)) if !key.is_empty() && key.len() <= MAX_KEY_BYTES => {
            let parts = [Value::from(caller), Value::from(tool), Value::from(key.as_str())];
            let stored = format!("key:{}", digest::of(&parts));
            Ok(Some(CallKey { stored, shown: key.clone() }))
        }
        Some(_) => Err(RpcError::invalid_params(format!(
            "Invalid params: `_meta[\"{IDEMPOTENCY_KEY_META}\"]` must be a string of 1 to {MAX_KEY_BYTES} bytes"
        ))),
        None if keys == KeySource::ClientOrDerived => {
            let stored = derived_key(caller, tool, arguments);
            let shown = format!("derived from the arguments of `{tool}`");
            Ok(Some(CallKey { stored, shown }))
        }
        None => Ok(None),
    }
}

/// Runs the call the way its route says; `held`, when the call holds a key, is finished with
/// the outcome or the task the call became, or released when the call ended before it could
/// take effect.
async fn route_call(
    server: &Server,
    context: &RequestContext,
    tool: Arc<ToolDef>,
    params: Box<CallToolParams>,
    route: CallRoute,
    out: &Finisher<'_>,
    held: Option<HeldKey>,
) -> Result<Vec<u8>, RpcError> {
    match route {
        CallRoute::Direct => {
            let started = match start_call(context, &tool, params) {
                Ok(started) => started,
                Err(error) => {
                    release(held).await;
                    return Err(error);
                }
            };
            let outcome = match started {
                StartedCall::Running(future, fitting) => {
                    let outcome = match CatchUnwind::new(future).await {
                        Ok(outcome) => outcome,
                        Err(panic) => Err(RpcError::internal(format!("Internal error: the handler panicked: {panic}"))),
                    };
                    (outcome, fitting)
                }
                refused @ StartedCall::Refused(_) => {
                    release(held).await;
                    let outcome = refused.finish(context).await;
                    return out.complete_or_input(context, outcome);
                }
            };
            let (outcome, fitting) = outcome;
            settle(held, context, &outcome).await;
            let mut outcome = outcome.map(|result| tool_result_for(context.protocol_version(), result));
            if let (Ok(result), Some(fitting)) = (&mut outcome, fitting) {
                *result = fitting.fit(context, std::mem::take(result)).await;
            }
            if let Ok(result) = &outcome
                && result.is_error == Some(true)
            {
                context.mark_tool_error();
            }
            out.complete_or_input(context, outcome)
        }
        CallRoute::StatelessTask => tasks::call_tool_or_task(server, context, tool, params, out, held).await,
        CallRoute::LegacyTask => tasks::session_task(server, context, tool, params, out, held).await,
    }
}

/// Answers a call whose key holds a recorded outcome, without running the handler.
#[allow(clippy::too_many_arguments, reason = "the call's parts, each needed once")]
async fn replay(
    server: &Server,
    context: &RequestContext,
    tool: &Arc<ToolDef>,
    key: &CallKey,
    recorded: &str,
    route: &CallRoute,
    wait: Duration,
    out: &Finisher<'_>,
) -> Result<Vec<u8>, RpcError> {
    tracing::debug!("a call was answered from its idempotency key's record");
    let Some(recorded) = Recorded::from_text(recorded) else {
        return Err(RpcError::internal(format!(
            "Internal error: the record of the idempotency key `{}` does not read",
            key.shown
        )));
    };
    let task = match recorded {
        Recorded::Result(result) => return Ok(out.complete(replayed(context, tool, result).await)),
        Recorded::Error(error) => return Err(RpcError::from(error)),
        Recorded::Task(task) => task,
    };
    let owner = if task.session_owned {
        tasks::session_owner(context)
    } else {
        context.principal().map(|principal| principal.as_str().to_owned()).unwrap_or_default()
    };
    let owner = (task.session_owned || context.principal().is_some()).then_some(owner.as_str());
    let wants_task = match route {
        CallRoute::LegacyTask => true,
        CallRoute::StatelessTask => tasks::declares_tasks(context.client_capabilities()),
        CallRoute::Direct => false,
    };
    let record = server.tasks().get(&task.id, owner).await?;
    if wants_task {
        if context.protocol_version().era() == Era::Stateless {
            return Ok(out.task_created(&record));
        }
        let mut result = wharf_protocol::JsonObject::new();
        result.insert("task".to_owned(), Value::Object(record.session_task()));
        return Ok(out.object(result));
    }
    // A plain call whose key's first call became a task: answered with the task's result.
    let Ok(ended) = tokio::time::timeout(wait, server.tasks().wait(&task.id, owner)).await else {
        return Err(in_progress(key, wait).with_data(serde_json::json!({
            IDEMPOTENCY_KEY_META: key.shown,
            "taskId": task.id,
            "extension": TASKS_EXTENSION,
        })));
    };
    let ended = ended?;
    if let Some(error) = ended.error {
        return Err(RpcError::from(error));
    }
    let result = ended
        .result
        .and_then(|result| CallToolResult::from_json_value(result).ok())
        .ok_or_else(|| RpcError::internal(format!("Internal error: task `{}` was cancelled", task.id)))?;
    Ok(out.complete(replayed(context, tool, result).await))
}

/// A recorded result as the request's revision sees it and fitted to its client's budget,
/// marked as answered from the record.
async fn replayed(context: &RequestContext, tool: &Arc<ToolDef>, result: CallToolResult) -> CallToolResult {
    let mut result = tool_result_for(context.protocol_version(), result);
    if let Some(fitting) = Fitting::of(context, tool) {
        result = fitting.fit(context, result).await;
    }
    result.meta.get_or_insert_with(Default::default).insert(IDEMPOTENT_REPLAY_META.to_owned(), Value::Bool(true));
    if result.is_error == Some(true) {
        context.mark_tool_error();
    }
    result
}

/// The answer to a duplicate whose first call is still running.
fn in_progress(key: &CallKey, retry_after: Duration) -> RpcError {
    let seconds = crate::error::retry_after_seconds(retry_after);
    RpcError::new(
        CALL_IN_PROGRESS,
        format!(
            "A call with the idempotency key `{}` is still running; try again later with the same key for its result",
            key.shown
        ),
    )
    .with_data(serde_json::json!({ IDEMPOTENCY_KEY_META: key.shown, "retryAfterSeconds": seconds }))
}

/// The answer to a call whose key's first call stopped before it finished.
fn outcome_unknown(key: &CallKey) -> RpcError {
    RpcError::new(
        OUTCOME_UNKNOWN,
        format!(
            "The call with the idempotency key `{}` was running on an instance that stopped before it finished: whether it took effect is unknown, and it is not run again",
            key.shown
        ),
    )
    .with_data(serde_json::json!({ IDEMPOTENCY_KEY_META: key.shown, "outcome": "unknown" }))
}

/// A store that could not answer: nothing runs, so nothing runs twice.
fn store_error(error: IdempotencyStoreError) -> RpcError {
    RpcError::new(ErrorCode::INTERNAL_ERROR.0, format!("Internal error: the call was not run: {error}"))
}
