//! Ending the idempotency key a call holds, for the routes a keyed call takes (directly, or as
//! a task): recorded with the outcome or the task, or given back when the call asked for input
//! first.

use wharf_protocol::CallToolResult;

use crate::context::RequestContext;
use crate::error::RpcError;
use crate::idempotency::{HeldKey, Recorded, RecordedTask};

/// Ends a held key with the call's outcome: recorded, unless the call asked the client for
/// input first (it runs again with the answers, under the same key).
pub(super) async fn settle(
    held: Option<HeldKey>,
    context: &RequestContext,
    outcome: &Result<CallToolResult, RpcError>,
) {
    let Some(held) = held else { return };
    let asked_for_input = context.lacks_input() || outcome.as_ref().is_err_and(RpcError::is_input_required);
    if asked_for_input {
        return held.release().await;
    }
    let recorded = match outcome {
        Ok(result) => Recorded::Result(result.clone()),
        Err(error) => Recorded::Error(error.clone().into_object()),
    };
    held.finish(&recorded).await;
}

/// Gives a held key back.
pub(super) async fn release(held: Option<HeldKey>) {
    if let Some(held) = held {
        held.release().await;
    }
}

/// Ends a held key with the task the call became.
pub(super) async fn became_task(held: Option<HeldKey>, task_id: &str, session_owned: bool) {
    if let Some(held) = held {
        held.finish(&Recorded::Task(RecordedTask { id: task_id.to_owned(), session_owned })).await;
    }
}
