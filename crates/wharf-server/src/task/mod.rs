//! Tasks (the 2026-07-28 extension `io.modelcontextprotocol/tasks`): a tool call that takes a
//! while becomes a task the client polls with `tasks/get`, answers with `tasks/update` and
//! stops with `tasks/cancel`.
//!
//! A tool opts in with [`ToolDef::task_support`](crate::ToolDef::task_support). When a client
//! that declared the extension calls it, the handler is polled once: if it finishes (or asks
//! for input through an `InputRequiredResult` round), the answer is immediate; if it has to
//! wait, it goes on as a task, its record is stored, and the answer is `CreateTaskResult`.
//! From then on, input the handler asks for parks the task in `input_required` until
//! `tasks/update` brings the answers, and cancellation reaches the handler through its
//! [`Cancellation`], and its future is dropped if it has not stopped two seconds later.
//!
//! Records live in a [`TaskStore`]; the instance that runs a task writes them, any instance
//! can read them. With a store several instances share, the instance running a task renews a
//! lease on it while the handler runs, so that a task whose instance died is failed rather
//! than left working; `tasks/cancel` and `tasks/update` for a task running elsewhere are
//! signalled to its instance through the store.

/// The `_meta` key tying a message to a 2025-11-25 task.
pub(crate) const RELATED_TASK: &str = "io.modelcontextprotocol/related-task";

pub(crate) mod record;
mod running_tasks;
pub(crate) mod store;
pub(crate) mod time;

use std::collections::{BTreeMap, HashMap};
use std::future::Future;
use std::sync::{Arc, Mutex, OnceLock, PoisonError, Weak};
use std::time::Duration;

use serde_json::Value;
use tokio::sync::{broadcast, oneshot, watch};
use tokio::task::AbortHandle;
use wharf_protocol::{CallToolResult, Era, ErrorCode, ErrorObject, InputRequest, JsonObject};

use crate::cancel::Cancellation;
use crate::error::RpcError;
use crate::events::ServerEvent;
use crate::input::check_answer;
use record::{TaskRecord, TaskStatus};
use running_tasks::RunningTasks;
use store::{TaskSignal, TaskStore, TaskStoreError};
use time::unix_millis;

/// How long a cancelled task's handler may take to stop on its own before it is dropped.
const CANCEL_GRACE: Duration = Duration::from_secs(2);

/// Whether a tool runs as a task for clients that support tasks.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub enum TaskSupport {
    /// Never: every call is answered directly (the default).
    #[default]
    Forbidden,
    /// When the client supports tasks and the handler has to wait.
    Optional,
    /// Always as a task; clients without tasks get -32021.
    Required,
}

/// The tasks of one server: where records are kept, and the tasks running here.
pub(crate) struct Tasks {
    store: Arc<dyn TaskStore>,
    running: Arc<RunningTasks<Running>>,
    ttl: Option<Duration>,
    poll_interval: Duration,
    /// Set once the task that takes other instances' signals runs.
    listening: OnceLock<()>,
}

/// A task running in this process.
pub(crate) struct Running {
    cancel: Cancellation,
    abort: Mutex<Option<AbortHandle>>,
    /// The authoritative record; held while it is written to the store, so writes keep their
    /// order.
    record: tokio::sync::Mutex<TaskRecord>,
    waiters: Mutex<HashMap<String, oneshot::Sender<Value>>>,
    store: Arc<dyn TaskStore>,
    events: broadcast::Sender<ServerEvent>,
    /// A 2025-11-25 task (of the session era): a tool result with `isError` ends it as `failed`.
    era: Era,
    /// How many requests a 2025-11-25 task's handler has sent the client and awaits answers to.
    awaiting_client: std::sync::atomic::AtomicUsize,
    /// Becomes true once the task ended, for `tasks/result`.
    finished: watch::Sender<bool>,
    /// Until when the lease last written to the store lasts (Unix ms; 0 without a lease): no
    /// other instance counts the task abandoned before then.
    lease_kept_until_ms: std::sync::atomic::AtomicU64,
}

impl std::fmt::Debug for Running {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Running").finish_non_exhaustive()
    }
}

/// How long a client refused a task for want of room is told to wait before trying again.
const TASK_RETRY: Duration = Duration::from_secs(5);

fn store_error(err: TaskStoreError) -> RpcError {
    match err {
        TaskStoreError::Full => RpcError::rate_limited(
            "Too many tasks: the task store holds as many unfinished tasks as it may; try again later",
            TASK_RETRY,
        ),
        err => RpcError::internal(format!("Internal error: {err}; try again shortly")),
    }
}

fn too_many_tasks(limit: usize) -> RpcError {
    RpcError::rate_limited(
        format!(
            "Too many tasks: this client already has {limit} unfinished tasks, the most one owner may run at once \
             (ServerOptions::max_tasks_per_owner); wait for one to finish, or cancel one"
        ),
        TASK_RETRY,
    )
}

fn unknown_task(task_id: &str) -> RpcError {
    RpcError::invalid_params(format!("Invalid params: no task `{task_id}`"))
}

fn random_id() -> Result<String, RpcError> {
    crate::random::hex_id().map_err(|err| RpcError::internal(format!("Internal error: no random source: {err}")))
}

impl Tasks {
    /// The tasks of a server keeping records in `store`, each owner running at most
    /// `max_per_owner` unfinished tasks at once.
    pub(crate) fn new(
        store: Arc<dyn TaskStore>,
        ttl: Option<Duration>,
        poll_interval: Duration,
        max_per_owner: usize,
    ) -> Tasks {
        let running = Arc::new(RunningTasks::new(max_per_owner));
        Tasks { store, running, ttl, poll_interval, listening: OnceLock::new() }
    }

    fn running(&self, task_id: &str) -> Option<Arc<Running>> {
        self.running.get(task_id)
    }

    pub(crate) fn forget(&self, task_id: &str) {
        self.running.remove(task_id);
    }

    /// Starts, once, taking the signals other instances send the tasks running here.
    fn listen_for_signals(&self) {
        self.listening.get_or_init(|| {
            if let Some(signals) = self.store.signals() {
                tokio::spawn(take_signals(Arc::downgrade(&self.running), signals));
            }
        });
    }

    /// Stores a new task and returns its record and the handle its handler asks for input
    /// through; the caller spawns the work with [`Tasks::run`]. `owner` is who may see it;
    /// `counted_against` the client whose quota of unfinished tasks it takes (`None`: none).
    pub(crate) async fn create(
        &self,
        owner: Option<String>,
        counted_against: Option<Arc<str>>,
        cancel: Cancellation,
        events: broadcast::Sender<ServerEvent>,
        requested_ttl: Option<Duration>,
        era: Era,
    ) -> Result<(TaskRecord, Arc<Running>), RpcError> {
        // A client may ask for a shorter life than the server's, never a longer one.
        let ttl = match (self.ttl, requested_ttl) {
            (Some(server), Some(client)) => Some(server.min(client)),
            (None, client) => client,
            (server, None) => server,
        };
        let quota_owner = counted_against.as_deref().map(str::to_owned);
        let slot = self.running.reserve(counted_against).ok_or_else(|| too_many_tasks(self.running.max_per_owner()))?;
        let now = unix_millis();
        let lease = self.store.lease();
        let record = TaskRecord {
            task_id: random_id()?,
            status: TaskStatus::Working,
            created_at_ms: now,
            updated_at_ms: now,
            ttl_ms: ttl.map(|ttl| ttl.as_millis() as u64),
            poll_interval_ms: Some(self.poll_interval.as_millis() as u64),
            principal: owner,
            quota_owner,
            lease_until_ms: lease.map(|lease| now + lease.as_millis() as u64),
            ..TaskRecord::default()
        };
        if lease.is_some() {
            self.listen_for_signals();
        }
        // The record is readable before the client hears of the task.
        self.store.create(record.clone()).await.map_err(store_error)?;
        let running = Arc::new(Running {
            cancel,
            abort: Mutex::new(None),
            record: tokio::sync::Mutex::new(record.clone()),
            waiters: Mutex::new(HashMap::new()),
            store: self.store.clone(),
            events,
            era,
            awaiting_client: std::sync::atomic::AtomicUsize::new(0),
            finished: watch::channel(false).0,
            lease_kept_until_ms: std::sync::atomic::AtomicU64::new(record.lease_until_ms.unwrap_or(0)),
        });
        slot.fill(record.task_id.clone(), running.clone());
        if let Some(lease) = lease {
            tokio::spawn(keep_lease(Arc::downgrade(&running), lease));
        }
        let _ = running.events.send(ServerEvent::Task { record: Arc::new(record.clone()), relayed: false });
        Ok((record, running))
    }

    /// The record of a task `principal` may see; one whose instance stopped renewing its lease
    /// is failed first.
    pub(crate) async fn get(&self, task_id: &str, principal: Option<&str>) -> Result<TaskRecord, RpcError> {
        match self.store.get(task_id).await.map_err(store_error)? {
            Some(record) if record.principal.as_deref() == principal => {
                if record.is_abandoned(unix_millis()) && self.running(task_id).is_none() {
                    return Ok(self.fail_abandoned(record).await);
                }
                Ok(record)
            }
            _ => Err(unknown_task(task_id)),
        }
    }

    /// Fails a task whose instance stopped renewing its lease (it died, or lost the store):
    /// nobody will finish it.
    async fn fail_abandoned(&self, mut record: TaskRecord) -> TaskRecord {
        tracing::warn!(task = %record.task_id, "a task's instance stopped renewing its lease; the task fails");
        record.status = TaskStatus::Failed;
        record.status_message = Some("The server instance running the task stopped".to_owned());
        record.error = Some(ErrorObject::new(
            ErrorCode::INTERNAL_ERROR,
            "Internal error: the server instance running the task stopped before it finished",
        ));
        record.input_requests.clear();
        record.lease_until_ms = None;
        record.updated_at_ms = unix_millis();
        if let Err(err) = self.store.put(record.clone()).await {
            tracing::warn!(task = %record.task_id, %err, "a failed task's record could not be written");
        }
        record
    }

    /// The tasks `owner` may see, newest first (2025-11-25 `tasks/list`).
    pub(crate) async fn list(&self, owner: &str) -> Vec<TaskRecord> {
        let mut records = self.store.list(owner).await;
        records.sort_by(|a, b| b.created_at_ms.cmp(&a.created_at_ms).then_with(|| a.task_id.cmp(&b.task_id)));
        records
    }

    /// The record once the task ended (2025-11-25 `tasks/result`).
    pub(crate) async fn wait(&self, task_id: &str, principal: Option<&str>) -> Result<TaskRecord, RpcError> {
        loop {
            let record = self.get(task_id, principal).await?;
            if record.status.is_terminal() {
                return Ok(record);
            }
            match self.running(task_id) {
                Some(running) => {
                    let mut finished = running.finished.subscribe();
                    let _ = finished.wait_for(|finished| *finished).await;
                }
                // Another instance runs it: poll its record.
                None => tokio::time::sleep(self.poll_interval).await,
            }
        }
    }

    /// Hands answers to the task's waiting handler; answers to keys it does not wait for are
    /// ignored.
    pub(crate) async fn update(
        &self,
        task_id: &str,
        principal: Option<&str>,
        responses: JsonObject,
    ) -> Result<(), RpcError> {
        let record = self.get(task_id, principal).await?;
        if let Some(running) = self.running(task_id) {
            return running.answer(responses).await;
        }
        if record.status.is_terminal() {
            return Ok(());
        }
        // Another instance runs it: the answers are checked here, against what its record
        // says it waits for, and sent there.
        let answered: JsonObject = awaited_answers(&record.input_requests, responses)?.into_iter().collect();
        if answered.is_empty() {
            return Ok(());
        }
        self.store.signal(task_id, &TaskSignal::Update(answered)).await.map_err(store_error)
    }

    /// Stops a task. Stopping one that already ended changes nothing.
    pub(crate) async fn cancel(&self, task_id: &str, principal: Option<&str>) -> Result<(), RpcError> {
        let record = self.get(task_id, principal).await?;
        if let Some(running) = self.running(task_id) {
            stop(&self.running, task_id, &running).await;
        } else if !record.status.is_terminal() {
            // Another instance runs it: the record says so at once, and that instance is told
            // to stop the handler.
            let mut cancelled = record;
            cancelled.status = TaskStatus::Cancelled;
            cancelled.status_message = Some(CANCELLED.to_owned());
            cancelled.input_requests.clear();
            cancelled.updated_at_ms = unix_millis();
            self.store.put(cancelled).await.map_err(store_error)?;
            self.store.signal(task_id, &TaskSignal::Cancel).await.map_err(store_error)?;
        }
        Ok(())
    }
}

const CANCELLED: &str = "Cancelled at the client's request";

/// The answers among `responses` to what the task waits for (`pending`), each checked
/// against the request it answers; answers to keys it does not wait for are left out.
fn awaited_answers(
    pending: &BTreeMap<String, InputRequest>,
    responses: JsonObject,
) -> Result<Vec<(String, Value)>, RpcError> {
    let mut answered = Vec::new();
    for (key, value) in responses {
        let Some(request) = pending.get(&key) else { continue };
        check_answer(&key, request.method(), &value)?;
        answered.push((key, value));
    }
    Ok(answered)
}

/// Cancels a task running here: its record says cancelled, its handler hears of it first, so
/// that it can stop cleanly, and one that has not stopped after the grace period is dropped
/// wherever it waits.
async fn stop(tasks: &RunningTasks<Running>, task_id: &str, running: &Running) {
    running.settle(TaskStatus::Cancelled, CANCELLED, |_| {}).await;
    running.cancel.cancel();
    if let Some(abort) = running.abort.lock().unwrap_or_else(PoisonError::into_inner).take() {
        tokio::spawn(async move {
            tokio::time::sleep(CANCEL_GRACE).await;
            abort.abort();
        });
    }
    tasks.remove(task_id);
}

/// Acts on what other instances signal the tasks running here, until the server is gone.
async fn take_signals(
    tasks: Weak<RunningTasks<Running>>,
    mut signals: tokio::sync::mpsc::Receiver<(String, TaskSignal)>,
) {
    while let Some((task_id, signal)) = signals.recv().await {
        let Some(tasks) = tasks.upgrade() else { return };
        let Some(running) = tasks.get(&task_id) else { continue };
        match signal {
            TaskSignal::Cancel => stop(&tasks, &task_id, &running).await,
            TaskSignal::Update(responses) => {
                if let Err(err) = running.answer(responses).await {
                    tracing::debug!(task = %task_id, ?err, "answers signalled for a task were refused");
                }
            }
        }
    }
}

/// Renews a running task's lease a few times within each lease, until the task ends.
async fn keep_lease(running: Weak<Running>, lease: Duration) {
    loop {
        tokio::time::sleep(lease / 3).await;
        let Some(running) = running.upgrade() else { return };
        if *running.finished.borrow() || !running.renew_lease(lease).await {
            return;
        }
    }
}

impl Running {
    /// Writes a lease that lasts `lease` from now; false once the task ended.
    async fn renew_lease(&self, lease: Duration) -> bool {
        let mut record = self.record.lock().await;
        if record.status.is_terminal() {
            return false;
        }
        record.lease_until_ms = Some(unix_millis() + lease.as_millis() as u64);
        match self.store.put(record.clone()).await {
            Ok(()) => self.kept(&record),
            Err(err) => tracing::warn!(task = %record.task_id, %err, "a task's lease could not be renewed"),
        }
        true
    }

    /// Notes that `record` is in the store now, with its lease.
    fn kept(&self, record: &TaskRecord) {
        if let Some(until) = record.lease_until_ms {
            self.lease_kept_until_ms.store(until, std::sync::atomic::Ordering::Relaxed);
        }
    }

    /// Writes `record`, the task's end, to the store: tried again while the store fails (a
    /// shared store failing over) for as long as the lease last kept holds, since past it
    /// another instance may count the task abandoned and fail it; for at most five seconds
    /// without a lease.
    async fn keep_end(&self, record: &TaskRecord) {
        let lease_kept_until = self.lease_kept_until_ms.load(std::sync::atomic::Ordering::Relaxed);
        let deadline = if lease_kept_until == 0 { unix_millis() + 5_000 } else { lease_kept_until };
        let mut pause = Duration::from_millis(100);
        loop {
            let Err(err) = self.store.put(record.clone()).await else { return };
            if unix_millis() + pause.as_millis() as u64 >= deadline {
                tracing::warn!(task = %record.task_id, %err, "a task's end could not be written: readers elsewhere will count it abandoned");
                return;
            }
            tracing::debug!(task = %record.task_id, %err, "a task's end could not be written yet; trying again");
            tokio::time::sleep(pause).await;
            pause = (pause * 2).min(Duration::from_secs(1));
        }
    }

    pub(crate) fn set_abort(&self, abort: AbortHandle) {
        *self.abort.lock().unwrap_or_else(PoisonError::into_inner) = Some(abort);
    }

    /// Writes the record after `change`, unless the task has already ended.
    async fn change(&self, change: impl FnOnce(&mut TaskRecord)) {
        self.change_when(|record| {
            change(record);
            true
        })
        .await;
    }

    /// Writes the record after `change` when it says it changed something, unless the task
    /// has already ended.
    async fn change_when(&self, change: impl FnOnce(&mut TaskRecord) -> bool) {
        let mut record = self.record.lock().await;
        if record.status.is_terminal() || !change(&mut record) {
            return;
        }
        record.updated_at_ms = unix_millis();
        if record.status.is_terminal() {
            // The end must be read wherever the client asks; a change on the way is written
            // over by the next.
            self.keep_end(&record).await;
        } else {
            match self.store.put(record.clone()).await {
                Ok(()) => self.kept(&record),
                Err(err) => tracing::warn!(task = %record.task_id, %err, "a task record could not be written"),
            }
        }
        let _ = self.events.send(ServerEvent::Task { record: Arc::new(record.clone()), relayed: false });
    }

    /// Ends the task with `status`, unless it already ended.
    async fn settle(&self, status: TaskStatus, message: &str, fill: impl FnOnce(&mut TaskRecord)) {
        self.change(|record| {
            record.status = status;
            record.status_message = Some(message.to_owned());
            record.input_requests.clear();
            fill(record);
        })
        .await;
        self.finished.send_replace(true);
    }

    /// Runs the task's work, but not past its `ttlMs`: after that nobody can read its outcome,
    /// so the handler is told to stop (its cancellation) and dropped after the grace period.
    pub(crate) async fn run_within_ttl<F>(&self, mut work: F) -> Result<Result<CallToolResult, RpcError>, String>
    where
        F: Future<Output = Result<Result<CallToolResult, RpcError>, String>> + Unpin,
    {
        let ttl = self.record.lock().await.ttl_ms.map(Duration::from_millis);
        let Some(ttl) = ttl else { return work.await };
        tokio::select! {
            outcome = &mut work => outcome,
            () = tokio::time::sleep(ttl) => {
                self.cancel.cancel();
                let _ = tokio::time::timeout(CANCEL_GRACE, &mut work).await;
                Ok(Err(RpcError::internal("Internal error: the task outlived its ttlMs and was stopped")))
            }
        }
    }

    /// Records the outcome of the task's handler.
    pub(crate) async fn finish(&self, outcome: Result<Result<CallToolResult, RpcError>, String>) {
        match outcome {
            Ok(Ok(result)) => {
                // 2025-11-25 calls a tool error a failure; the extension of 2026-07-28 reserves
                // `failed` for protocol errors.
                let status = if self.era == Era::Session && result.is_error == Some(true) {
                    TaskStatus::Failed
                } else {
                    TaskStatus::Completed
                };
                let result = serde_json::to_value(&result).unwrap_or(Value::Null);
                self.settle(status, "Completed", |record| record.result = Some(result)).await;
            }
            Ok(Err(error)) => {
                let error = error.into_object();
                self.settle(TaskStatus::Failed, "Failed", |record| record.error = Some(error)).await;
            }
            Err(panic) => {
                tracing::error!(panic = %panic, "a task's handler panicked");
                let error = ErrorObject::new(
                    ErrorCode::INTERNAL_ERROR,
                    format!("Internal error: the handler panicked: {panic}"),
                );
                self.settle(TaskStatus::Failed, "Failed", |record| record.error = Some(error)).await;
            }
        }
    }

    /// Awaits `answer`, the client's answer to a request a 2025-11-25 task's handler sent it,
    /// with the task `input_required` meanwhile: that revision's receivers move a task there
    /// while they need the requestor's input, and back to `working` once it came. Several
    /// requests may be out at once; the status follows their count.
    pub(crate) async fn awaiting_client<T>(&self, answer: impl Future<Output = T>) -> T {
        use std::sync::atomic::Ordering;
        self.awaiting_client.fetch_add(1, Ordering::SeqCst);
        self.follow_awaiting_client().await;
        let answer = answer.await;
        self.awaiting_client.fetch_sub(1, Ordering::SeqCst);
        self.follow_awaiting_client().await;
        answer
    }

    /// Sets the status from the count of requests out, read under the record's lock, so that
    /// the last change to run leaves the status the count calls for.
    async fn follow_awaiting_client(&self) {
        self.change_when(|record| {
            let waiting = self.awaiting_client.load(std::sync::atomic::Ordering::SeqCst) > 0;
            let (status, message) = if waiting {
                (TaskStatus::InputRequired, Some("Waiting for input".to_owned()))
            } else {
                (TaskStatus::Working, None)
            };
            let changed = record.status != status;
            record.status = status;
            record.status_message = message;
            changed
        })
        .await;
    }

    /// Parks the handler until `tasks/update` answers `request` under `key`.
    pub(crate) async fn ask(&self, key: String, request: InputRequest) -> Result<Value, RpcError> {
        let (sender, answer) = oneshot::channel();
        self.waiters.lock().unwrap_or_else(PoisonError::into_inner).insert(key.clone(), sender);
        self.change(|record| {
            record.input_requests.insert(key, request);
            record.status = TaskStatus::InputRequired;
            record.status_message = Some("Waiting for input".to_owned());
        })
        .await;
        tokio::select! {
            answer = answer => answer.map_err(|_| RpcError::internal("Internal error: the task ended while waiting for input")),
            () = self.cancel.cancelled() => Err(RpcError::internal("Internal error: the task was cancelled")),
        }
    }

    async fn answer(&self, responses: JsonObject) -> Result<(), RpcError> {
        let pending = self.record.lock().await.input_requests.clone();
        let answered = awaited_answers(&pending, responses)?;
        if answered.is_empty() {
            return Ok(());
        }
        let keys: Vec<String> = answered.iter().map(|(key, _)| key.clone()).collect();
        self.change(|record| {
            for key in &keys {
                record.input_requests.remove(key);
            }
            if record.input_requests.is_empty() {
                record.status = TaskStatus::Working;
                record.status_message = None;
            }
        })
        .await;
        let mut waiters = self.waiters.lock().unwrap_or_else(PoisonError::into_inner);
        for (key, value) in answered {
            if let Some(waiter) = waiters.remove(&key) {
                let _ = waiter.send(value);
            }
        }
        Ok(())
    }
}
