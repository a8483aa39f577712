//! Where task records live: the [`TaskStore`] trait, and [`MemoryTaskStore`], bounded and in
//! memory, which forgets each task once its `ttlMs` has passed, and finished tasks sooner when
//! it needs the room.

use std::collections::HashMap;
use std::future::Future;
use std::pin::Pin;
use std::sync::Mutex;

use tokio::sync::mpsc;
use wharf_protocol::JsonObject;

use super::record::TaskRecord;
use super::time::unix_millis;

/// What the store methods return: a boxed future, so that stores can do I/O (a database, a
/// cache shared by instances) without tying Wharf to one async runtime's traits.
pub type StoreFuture<'a, T> = Pin<Box<dyn Future<Output = T> + Send + 'a>>;

/// Why a store refused a record.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum TaskStoreError {
    /// The store holds as many live tasks as it may.
    Full,
    /// The store could not be reached or written; the text says why.
    Unavailable(String),
}

impl std::fmt::Display for TaskStoreError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            TaskStoreError::Full => f.write_str("the task store is full"),
            TaskStoreError::Unavailable(why) => write!(f, "the task store is unavailable: {why}"),
        }
    }
}

/// What a request on one instance asks of a task that another instance runs.
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub enum TaskSignal {
    /// `tasks/cancel`: the record already says cancelled; the handler is to stop.
    Cancel,
    /// `tasks/update`: answers for the handler, by input key, already checked.
    Update(JsonObject),
}

/// Keeps task records. The instance that runs a task writes its record on every change
/// (creation, status, input requests, outcome); any instance answers `tasks/get` from it.
///
/// A record must stay readable for its `ttl_ms` after creation, and may be forgotten after.
pub trait TaskStore: Send + Sync + 'static {
    /// Stores a new record. It must be readable by [`TaskStore::get`] once this completes:
    /// `CreateTaskResult` is only sent after.
    fn create(&self, record: TaskRecord) -> StoreFuture<'_, Result<(), TaskStoreError>>;
    /// Replaces a record.
    fn put(&self, record: TaskRecord) -> StoreFuture<'_, Result<(), TaskStoreError>>;
    /// The record of `task_id`, `None` when it is unknown or expired; an error when the store
    /// cannot tell (a client is then told to try again, never that the task does not exist).
    fn get<'a>(&'a self, task_id: &'a str) -> StoreFuture<'a, Result<Option<TaskRecord>, TaskStoreError>>;
    /// The live records whose `principal` is `owner`, in any order.
    fn list<'a>(&'a self, owner: &'a str) -> StoreFuture<'a, Vec<TaskRecord>>;

    /// How long the instance running a task vouches for it at a time, with a store several
    /// instances share: it renews the lease a few times within that span, and a task whose
    /// lease ran out is failed. `None` (the default) for a store of one process.
    fn lease(&self) -> Option<std::time::Duration> {
        None
    }

    /// Tells the instance running `task_id` of `signal`. Stores of one process need not, as
    /// every task runs where it is asked about.
    fn signal<'a>(&'a self, task_id: &'a str, signal: &'a TaskSignal) -> StoreFuture<'a, Result<(), TaskStoreError>> {
        let _ = (task_id, signal);
        Box::pin(std::future::ready(Ok(())))
    }

    /// The signals other instances send the tasks this one runs; `None` for a store of one
    /// process. Called once, within the server's async runtime.
    fn signals(&self) -> Option<mpsc::Receiver<(String, TaskSignal)>> {
        None
    }
}

/// Task records in memory, at most `capacity` of them; expired records are dropped as new ones
/// come in, and never returned.
///
/// When it is full, a new task takes the place of a finished one (completed, failed or
/// cancelled): the one that finished longest ago of the owner (`TaskRecord::quota_owner`)
/// holding the most records, so that one client's flood of tasks makes room with its own
/// before anyone else's results. Only unfinished tasks fill it for good, and the server holds
/// each owner to a quota of those
/// ([`ServerOptions::max_tasks_per_owner`](crate::ServerOptions::max_tasks_per_owner)).
#[derive(Debug)]
pub struct MemoryTaskStore {
    capacity: usize,
    records: Mutex<HashMap<String, TaskRecord>>,
}

impl MemoryTaskStore {
    /// A store for at most `capacity` tasks.
    pub fn new(capacity: usize) -> MemoryTaskStore {
        MemoryTaskStore { capacity: capacity.max(1), records: Mutex::new(HashMap::new()) }
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, HashMap<String, TaskRecord>> {
        self.records.lock().unwrap_or_else(std::sync::PoisonError::into_inner)
    }
}

impl TaskStore for MemoryTaskStore {
    fn create(&self, record: TaskRecord) -> StoreFuture<'_, Result<(), TaskStoreError>> {
        let outcome = {
            let mut records = self.lock();
            if records.len() >= self.capacity {
                let now = unix_millis();
                records.retain(|_, record| !record.is_expired(now));
            }
            if records.len() >= self.capacity
                && let Some(finished) = fairest_finished(&records, record.quota_owner.as_deref())
            {
                records.remove(&finished);
            }
            if records.len() >= self.capacity {
                Err(TaskStoreError::Full)
            } else {
                records.insert(record.task_id.clone(), record);
                Ok(())
            }
        };
        Box::pin(std::future::ready(outcome))
    }

    fn put(&self, record: TaskRecord) -> StoreFuture<'_, Result<(), TaskStoreError>> {
        self.lock().insert(record.task_id.clone(), record);
        Box::pin(std::future::ready(Ok(())))
    }

    fn get<'a>(&'a self, task_id: &'a str) -> StoreFuture<'a, Result<Option<TaskRecord>, TaskStoreError>> {
        let found = {
            let mut records = self.lock();
            match records.get(task_id) {
                Some(record) if record.is_expired(unix_millis()) => {
                    records.remove(task_id);
                    None
                }
                other => other.cloned(),
            }
        };
        Box::pin(std::future::ready(Ok(found)))
    }

    fn list<'a>(&'a self, owner: &'a str) -> StoreFuture<'a, Vec<TaskRecord>> {
        let now = unix_millis();
        let owned = self
            .lock()
            .values()
            .filter(|record| record.principal.as_deref() == Some(owner) && !record.is_expired(now))
            .cloned()
            .collect();
        Box::pin(std::future::ready(owned))
    }
}

/// A finished task: when it finished, and its id.
type Finished<'a> = (u64, &'a String);

/// The finished task to forget for room for a task of `newcomer`: the one that finished
/// longest ago of the owner holding the most records (the newcomer's included) among those
/// with a finished one.
fn fairest_finished(records: &HashMap<String, TaskRecord>, newcomer: Option<&str>) -> Option<String> {
    // Per owner: how many records it holds, and its finished one that finished first.
    let mut owners: HashMap<Option<&str>, (usize, Option<Finished<'_>>)> = HashMap::new();
    owners.entry(newcomer).or_default().0 += 1;
    for (id, record) in records {
        let (held, oldest) = owners.entry(record.quota_owner.as_deref()).or_default();
        *held += 1;
        if record.status.is_terminal() && oldest.is_none_or(|(finished, _)| record.updated_at_ms < finished) {
            *oldest = Some((record.updated_at_ms, id));
        }
    }
    owners
        .into_values()
        .filter_map(|(held, oldest)| oldest.map(|(finished, id)| (held, std::cmp::Reverse(finished), id)))
        .max()
        .map(|(_, _, id)| id.clone())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::task::record::TaskStatus;

    fn record(id: &str, ttl_ms: Option<u64>, created_at_ms: u64) -> TaskRecord {
        TaskRecord {
            task_id: id.to_owned(),
            status: TaskStatus::Working,
            created_at_ms,
            updated_at_ms: created_at_ms,
            ttl_ms,
            ..TaskRecord::default()
        }
    }

    #[tokio::test]
    async fn records_expire_after_their_ttl_and_the_store_is_bounded() {
        let store = MemoryTaskStore::new(2);
        let now = unix_millis();
        store.create(record("old", Some(10), now - 1_000)).await.unwrap();
        store.create(record("kept", None, now)).await.unwrap();
        assert!(store.get("old").await.unwrap().is_none(), "past its ttl");
        assert!(store.get("kept").await.unwrap().is_some());
        store.create(record("new", Some(60_000), now)).await.unwrap();
        assert_eq!(store.create(record("one-too-many", None, now)).await, Err(TaskStoreError::Full));
        assert!(store.get("new").await.unwrap().is_some());
    }

    #[tokio::test]
    async fn finished_tasks_make_room_the_biggest_owners_first() {
        let store = MemoryTaskStore::new(4);
        let now = unix_millis();
        let owned = |id: &str, owner: &str, status: TaskStatus, at: u64| TaskRecord {
            status,
            updated_at_ms: at,
            quota_owner: Some(owner.to_owned()),
            ..record(id, None, now)
        };
        store.create(owned("other-done", "b", TaskStatus::Completed, now - 50)).await.unwrap();
        store.create(owned("flood-1", "a", TaskStatus::Completed, now - 10)).await.unwrap();
        store.create(owned("flood-2", "a", TaskStatus::Working, now)).await.unwrap();
        store.create(owned("flood-3", "a", TaskStatus::Cancelled, now - 5)).await.unwrap();
        store.create(owned("flood-4", "a", TaskStatus::Working, now)).await.unwrap();
        assert!(store.get("flood-1").await.unwrap().is_none(), "the biggest owner's oldest finished task made room");
        assert!(store.get("other-done").await.unwrap().is_some());
        store.create(owned("flood-5", "a", TaskStatus::Working, now)).await.unwrap();
        assert!(store.get("flood-3").await.unwrap().is_none());
        // Only the other owner's finished task is left to forget; then unfinished ones fill it.
        store.create(owned("other-new", "b", TaskStatus::Working, now)).await.unwrap();
        assert!(store.get("other-done").await.unwrap().is_none());
        assert_eq!(store.create(owned("full", "c", TaskStatus::Working, now)).await, Err(TaskStoreError::Full));
    }
}
