//! A task's record, as stores keep it, and its shapes on the wire.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};
use serde_json::Value;
use wharf_protocol::{ErrorObject, FromJson, InputRequest, JsonObject};

use super::time::iso8601;

/// Where a task is in its life.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum TaskStatus {
    /// Running.
    #[default]
    Working,
    /// Waiting for answers to its input requests.
    InputRequired,
    /// Finished with a result (which may be a tool error, `isError: true`).
    Completed,
    /// Ended by a protocol error.
    Failed,
    /// Stopped at the client's request.
    Cancelled,
}

impl TaskStatus {
    /// True once the task can change no more.
    pub fn is_terminal(self) -> bool {
        matches!(self, TaskStatus::Completed | TaskStatus::Failed | TaskStatus::Cancelled)
    }

    fn as_str(self) -> &'static str {
        match self {
            TaskStatus::Working => "working",
            TaskStatus::InputRequired => "input_required",
            TaskStatus::Completed => "completed",
            TaskStatus::Failed => "failed",
            TaskStatus::Cancelled => "cancelled",
        }
    }
}

/// Everything known about one task.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct TaskRecord {
    /// The id clients poll with: 128 random bits in hex.
    pub task_id: String,
    /// The status.
    pub status: TaskStatus,
    /// A human-readable note on the status.
    pub status_message: Option<String>,
    /// Unix milliseconds of creation.
    pub created_at_ms: u64,
    /// Unix milliseconds of the last change.
    pub updated_at_ms: u64,
    /// How long after creation the record is kept; `None` keeps it.
    pub ttl_ms: Option<u64>,
    /// How often clients should poll.
    pub poll_interval_ms: Option<u64>,
    /// What the task waits for, by key, while `input_required`.
    #[serde(deserialize_with = "wharf_protocol::through_value")]
    pub input_requests: BTreeMap<String, InputRequest>,
    /// The tool's result, once completed.
    pub result: Option<Value>,
    /// The protocol error, once failed.
    pub error: Option<ErrorObject>,
    /// Who started the task; nobody else sees it.
    pub principal: Option<String>,
    /// The client the task counts against for the per-owner quotas: `principal:` and its
    /// identity, or `address:` and the network address of an anonymous caller, or `session:`
    /// and its 2025 session when the address is unknown. A full store makes room with the
    /// finished tasks of the owner holding the most.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub quota_owner: Option<String>,
    /// With a store that several instances share: the Unix millisecond until which the
    /// instance running the task vouches for it. It renews this while the handler runs; a task
    /// still unfinished past it lost its instance, and whoever reads it next fails it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub lease_until_ms: Option<u64>,
}

// Read by the stores of other crates (Redis, a replica's relay): decoded here, once.
impl FromJson for TaskRecord {
    #[inline(never)]
    fn from_json(text: &str) -> serde_json::Result<TaskRecord> {
        serde_json::from_str(text)
    }

    #[inline(never)]
    fn from_json_value(value: Value) -> serde_json::Result<TaskRecord> {
        serde_json::from_value(value)
    }

    #[inline(never)]
    fn from_json_ref(value: &Value) -> serde_json::Result<TaskRecord> {
        TaskRecord::deserialize(value)
    }
}

impl TaskRecord {
    /// True for a task left unfinished at `now` (Unix milliseconds) by an instance that
    /// stopped renewing its lease.
    pub fn is_abandoned(&self, now: u64) -> bool {
        !self.status.is_terminal() && self.lease_until_ms.is_some_and(|until| until < now)
    }

    /// True when the record's time to live has passed at `now` (Unix milliseconds).
    pub fn is_expired(&self, now: u64) -> bool {
        self.ttl_ms.is_some_and(|ttl| self.created_at_ms.saturating_add(ttl) < now)
    }

    /// The 2026-07-28 `Task` members (`CreateTaskResult` and notifications start from them).
    pub(crate) fn task_members(&self) -> JsonObject {
        let mut task = JsonObject::new();
        task.insert("taskId".to_owned(), Value::from(self.task_id.as_str()));
        task.insert("status".to_owned(), Value::from(self.status.as_str()));
        if let Some(message) = &self.status_message {
            task.insert("statusMessage".to_owned(), Value::from(message.as_str()));
        }
        task.insert("createdAt".to_owned(), Value::from(iso8601(self.created_at_ms)));
        task.insert("lastUpdatedAt".to_owned(), Value::from(iso8601(self.updated_at_ms)));
        task.insert("ttlMs".to_owned(), self.ttl_ms.map_or(Value::Null, Value::from));
        if let Some(interval) = self.poll_interval_ms {
            task.insert("pollIntervalMs".to_owned(), Value::from(interval));
        }
        task
    }

    /// The 2025-11-25 `Task` (experimental tasks): `ttl` and `pollInterval` under their old
    /// names.
    pub(crate) fn session_task(&self) -> JsonObject {
        let mut task = self.task_members();
        if let Some(ttl) = task.remove("ttlMs") {
            task.insert("ttl".to_owned(), ttl);
        }
        if let Some(interval) = task.remove("pollIntervalMs") {
            task.insert("pollInterval".to_owned(), interval);
        }
        task
    }

    /// The 2026-07-28 `DetailedTask`: the task, with what it waits for, its result or its
    /// error.
    pub(crate) fn detailed(&self) -> JsonObject {
        let mut task = self.task_members();
        match self.status {
            TaskStatus::InputRequired => {
                let requests = serde_json::to_value(&self.input_requests).unwrap_or(Value::Null);
                task.insert("inputRequests".to_owned(), requests);
            }
            TaskStatus::Completed => {
                task.insert("result".to_owned(), self.result.clone().unwrap_or(Value::Null));
            }
            TaskStatus::Failed => {
                task.insert("error".to_owned(), serde_json::to_value(&self.error).unwrap_or(Value::Null));
            }
            TaskStatus::Working | TaskStatus::Cancelled => {}
        }
        task
    }
}
