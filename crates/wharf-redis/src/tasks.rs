//! [`RedisTaskStore`]: task records as JSON strings that expire with their `ttlMs` (a day for
//! a task without one), a set of task ids per owner for `tasks/list`, leases for the instances
//! that run tasks, and signals (`tasks/cancel`, `tasks/update`) to the instance running a task
//! on one pub/sub channel of the deployment.

use std::sync::Arc;
use std::time::Duration;

use tokio::sync::mpsc;
use wharf_protocol::FromJson;
use wharf_server::{StoreFuture, TaskRecord, TaskSignal, TaskStore, TaskStoreError};

use crate::commands::query_apart;
use crate::connection::{Redis, unix_millis, without_secrets};
use crate::subscription;

/// How long a record without a `ttlMs` is kept: every key has an expiry.
const UNBOUNDED_TTL: Duration = Duration::from_secs(24 * 60 * 60);
/// How long an instance vouches for a running task by default.
const DEFAULT_LEASE: Duration = Duration::from_secs(10);

/// Keeps task records in Redis for every instance of a server, and carries signals to the
/// instance running a task.
///
/// Records are not capped in number: each expires with its `ttlMs`, so finished tasks never
/// stand in the way of new ones. The quota of unfinished tasks per owner
/// ([`ServerOptions::max_tasks_per_owner`](wharf_server::ServerOptions::max_tasks_per_owner))
/// is held by each instance for the tasks it runs: a client reaching every instance of the
/// fleet may run that many on each.
#[derive(Debug, Clone)]
pub struct RedisTaskStore {
    redis: Redis,
    lease: Duration,
}

impl Redis {
    /// The store of task records, for
    /// [`ServerBuilder::task_store`](wharf_server::ServerBuilder::task_store), with leases of
    /// 10 seconds.
    pub fn task_store(&self) -> Arc<RedisTaskStore> {
        Arc::new(RedisTaskStore { redis: self.clone(), lease: DEFAULT_LEASE })
    }
}

impl RedisTaskStore {
    /// How long the instance running a task vouches for it at a time: a task whose instance
    /// died is failed this long after its last renewal, at most.
    pub fn with_lease(&self, lease: Duration) -> Arc<RedisTaskStore> {
        Arc::new(RedisTaskStore { redis: self.redis.clone(), lease: lease.max(Duration::from_millis(30)) })
    }
}

/// Milliseconds until the record may be forgotten.
fn remaining_ms(record: &TaskRecord) -> u64 {
    let ttl = record.ttl_ms.unwrap_or(UNBOUNDED_TTL.as_millis() as u64);
    let until = record.created_at_ms.saturating_add(ttl);
    until.saturating_sub(unix_millis()).max(1)
}

fn unavailable(err: &redis::RedisError) -> TaskStoreError {
    TaskStoreError::Unavailable(without_secrets(err))
}

fn encode(record: &TaskRecord) -> Result<String, TaskStoreError> {
    serde_json::to_string(record).map_err(|err| TaskStoreError::Unavailable(format!("a record did not encode: {err}")))
}

fn decode(text: &str) -> Option<TaskRecord> {
    TaskRecord::from_json(text).ok()
}

/// A signal on the wire: `c` and the task id, or `u`, the task id, a newline and the answers.
fn signal_payload(task_id: &str, signal: &TaskSignal) -> Option<Vec<u8>> {
    match signal {
        TaskSignal::Cancel => Some([b"c", task_id.as_bytes()].concat()),
        TaskSignal::Update(answers) => {
            let answers = serde_json::to_vec(answers).ok()?;
            Some([b"u", task_id.as_bytes(), b"\n", &answers].concat())
        }
        _ => None,
    }
}

fn signal_from(payload: &[u8]) -> Option<(String, TaskSignal)> {
    match payload.split_first()? {
        (b'c', task_id) => Some((std::str::from_utf8(task_id).ok()?.to_owned(), TaskSignal::Cancel)),
        (b'u', rest) => {
            let newline = rest.iter().position(|byte| *byte == b'\n')?;
            let task_id = std::str::from_utf8(&rest[..newline]).ok()?.to_owned();
            Some((task_id, TaskSignal::Update(serde_json::from_slice(&rest[newline + 1..]).ok()?)))
        }
        _ => None,
    }
}

impl TaskStore for RedisTaskStore {
    fn create(&self, record: TaskRecord) -> StoreFuture<'_, Result<(), TaskStoreError>> {
        Box::pin(async move {
            let text = encode(&record)?;
            let ttl = remaining_ms(&record);
            let owner = record.principal.as_deref().unwrap_or_default();
            let owned = self.redis.keys.tasks_of(owner);
            // The record and its owner's set: two slots on a cluster.
            let mut stored = redis::pipe();
            stored.cmd("SET").arg(self.redis.keys.task(&record.task_id)).arg(text).arg("PX").arg(ttl);
            let mut of_owner = redis::pipe();
            of_owner.atomic().cmd("SADD").arg(&owned).arg(&record.task_id);
            // The owner's set lives as long as its longest-lived task.
            of_owner.cmd("PEXPIRE").arg(&owned).arg(ttl).arg("NX");
            of_owner.cmd("PEXPIRE").arg(&owned).arg(ttl).arg("GT");
            query_apart(&self.redis.connection, &[stored, of_owner]).await.map_err(|err| unavailable(&err))?;
            self.redis.replicated(&self.redis.keys.task(&record.task_id)).await;
            Ok(())
        })
    }

    fn put(&self, record: TaskRecord) -> StoreFuture<'_, Result<(), TaskStoreError>> {
        Box::pin(async move {
            let text = encode(&record)?;
            let mut connection = self.redis.connection.clone();
            // Only a record that still exists is replaced, and its expiry stays as it was.
            let key = self.redis.keys.task(&record.task_id);
            redis::cmd("SET")
                .arg(&key)
                .arg(text)
                .arg("XX")
                .arg("KEEPTTL")
                .query_async::<Option<String>>(&mut connection)
                .await
                .map_err(|err| unavailable(&err))?;
            self.redis.replicated(&key).await;
            Ok(())
        })
    }

    fn get<'a>(&'a self, task_id: &'a str) -> StoreFuture<'a, Result<Option<TaskRecord>, TaskStoreError>> {
        Box::pin(async move {
            let mut connection = self.redis.connection.clone();
            let text: Option<String> = redis::cmd("GET")
                .arg(self.redis.keys.task(task_id))
                .query_async(&mut connection)
                .await
                .map_err(|err| unavailable(&err))?;
            Ok(text.as_deref().and_then(decode))
        })
    }

    fn list<'a>(&'a self, owner: &'a str) -> StoreFuture<'a, Vec<TaskRecord>> {
        Box::pin(async move {
            let mut connection = self.redis.connection.clone();
            let listed = async {
                let ids: Vec<String> =
                    redis::cmd("SMEMBERS").arg(self.redis.keys.tasks_of(owner)).query_async(&mut connection).await?;
                if ids.is_empty() {
                    return Ok(Vec::new());
                }
                // A part per task: each record is in its own task's slot.
                let parts: Vec<redis::Pipeline> = ids
                    .iter()
                    .map(|id| {
                        let mut get = redis::pipe();
                        get.cmd("GET").arg(self.redis.keys.task(id));
                        get
                    })
                    .collect();
                query_apart(&self.redis.connection, &parts).await
            };
            match listed.await {
                Ok(answers) => answers
                    .into_iter()
                    .filter_map(|answer| redis::from_redis_value::<(Option<String>,)>(answer).ok()?.0)
                    .filter_map(|text| decode(&text))
                    .filter(|record| record.principal.as_deref() == Some(owner))
                    .collect(),
                Err(err) => {
                    tracing::warn!(error = %without_secrets(&err), "task records could not be listed");
                    Vec::new()
                }
            }
        })
    }

    fn lease(&self) -> Option<Duration> {
        Some(self.lease)
    }

    fn signal<'a>(&'a self, task_id: &'a str, signal: &'a TaskSignal) -> StoreFuture<'a, Result<(), TaskStoreError>> {
        Box::pin(async move {
            let Some(payload) = signal_payload(task_id, signal) else { return Ok(()) };
            let channel = self.redis.keys.task_signals();
            subscription::publish(&self.redis, channel, payload).await.map(drop).map_err(|err| unavailable(&err))
        })
    }

    fn signals(&self) -> Option<mpsc::Receiver<(String, TaskSignal)>> {
        let (sender, receiver) = mpsc::channel(subscription::BUFFER);
        tokio::spawn(subscription::listen(self.redis.clone(), self.redis.keys.task_signals(), signal_from, sender));
        Some(receiver)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn signals_come_back_as_they_went() {
        let answers = serde_json::json!({"manager": {"action": "accept"}}).as_object().unwrap().clone();
        for signal in [TaskSignal::Cancel, TaskSignal::Update(answers)] {
            let payload = signal_payload("t1", &signal).unwrap();
            assert_eq!(signal_from(&payload), Some(("t1".to_owned(), signal)));
        }
        assert_eq!(signal_from(b"unoanswers"), None);
        assert_eq!(signal_from(b""), None);
    }
}
