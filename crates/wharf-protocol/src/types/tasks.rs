//! Tasks: long-running tool calls that the client polls. The 2026-07-28 extension
//! `io.modelcontextprotocol/tasks` (flat `CreateTaskResult`, `tasks/get|update|cancel`) and the
//! experimental tasks of 2025-11-25 share these params.

use serde::{Deserialize, Serialize};

use crate::types::common::JsonObject;
use crate::types::request_meta::RequestMeta;

/// The extension id of 2026-07-28 tasks, in `capabilities.extensions`.
pub const TASKS_EXTENSION: &str = "io.modelcontextprotocol/tasks";

/// Params of `tasks/get`, `tasks/cancel` and (2025-11-25) `tasks/result`.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct TaskIdParams {
    /// The task.
    pub task_id: String,
    /// Request metadata.
    #[serde(rename = "_meta", default, skip_serializing_if = "Option::is_none")]
    pub meta: Option<Box<RequestMeta>>,
}

/// Params of `tasks/update` (2026-07-28): answers to a task's input requests.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct UpdateTaskParams {
    /// The task.
    pub task_id: String,
    /// Answers by the keys of the task's `inputRequests`; some may be left for later.
    #[serde(default, deserialize_with = "crate::types::unique::object")]
    pub input_responses: JsonObject,
    /// Request metadata.
    #[serde(rename = "_meta", default, skip_serializing_if = "Option::is_none")]
    pub meta: Option<Box<RequestMeta>>,
}
