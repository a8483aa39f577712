//! Forwarding one request of the gateway's client to an upstream, in the client's era, with
//! what the upstream sends meanwhile carried back: progress, log messages, and questions.
//!
//! - A client in a 2025 session is asked each question at once, whatever the upstream speaks.
//! - A 2026-07-28 client and a 2026-07-28 upstream: the upstream's `InputRequiredResult` is
//!   passed on under the same keys, its `requestState` kept in the gateway's own sealed state,
//!   and the client's retry retried upstream with the answers. Nothing waits in the gateway.
//! - A 2026-07-28 client and an upstream in a 2025 session: the upstream's question is asked in
//!   an `InputRequiredResult` while the upstream request waits, parked, for the client's retry,
//!   whose answer goes on to the upstream; the sealed `requestState` names the parked request.

use std::collections::HashSet;
use std::future::Future;
use std::sync::atomic::AtomicBool;
use std::sync::{Arc, LazyLock};

use serde::{Deserialize, Serialize};
use serde_json::value::RawValue;
use serde_json::{Value, json};
use tokio::sync::{mpsc, watch};
use wharf_client::{ClientError, RequestOptions};
use wharf_protocol::{
    Era, FromJson, InputRequest, InputRequiredResult, JsonObject, LoggingLevel, LoggingMessageParams,
    META_CLIENT_CAPABILITIES, META_PROTOCOL_PREFIX, ProgressParams, TASKS_EXTENSION,
};
use wharf_server::{RequestContext, RpcError};

use crate::elsewhere::continue_elsewhere;
use crate::link::Link;
use crate::parked::{AbortOnDrop, ParkedRound, Parking, Running};
use crate::relay::{Question, Relay, all_capabilities, ask_keyed, to_object};
use crate::step::{Step, ask_all, next_step, pass_log, pass_progress};
use crate::task::{ListedTasks, call_as_session_task, declares_tasks, follow};
use crate::upstream::answer_for;

/// The `_meta` that declares a request of the gateway's to a 2026-07-28 upstream may become a
/// task: every question, and tasks. Made once.
static DECLARED_WITH_TASKS: LazyLock<JsonObject> = LazyLock::new(|| {
    let mut capabilities = all_capabilities();
    capabilities.extensions = Some(serde_json::Map::from_iter([(TASKS_EXTENSION.to_owned(), json!({}))]));
    serde_json::Map::from_iter([(META_CLIENT_CAPABILITIES.to_owned(), json!(capabilities))])
});

/// How many rounds of input one request passes on before it is refused.
const MAX_ROUNDS: usize = 16;

/// What a round of a 2026-07-28 request passed on keeps in its sealed `requestState`: the
/// upstream's own state, and what the upstream asked, under its keys.
#[derive(Serialize, Deserialize)]
struct PassedRound {
    upstream_state: Option<String>,
    #[serde(deserialize_with = "wharf_protocol::through_value")]
    asked: Vec<(String, InputRequest)>,
}

/// An upstream's answer: as the upstream wrote it, to be decoded once into the gateway's own
/// type, or a `Value` already (after rounds, tasks and parking).
pub(crate) enum Answer {
    Raw(Box<RawValue>),
    Value(Value),
}

impl Answer {
    /// The answer as `T`. A raw answer's `resultType` and the protocol's `_meta` members are
    /// left out unread where it is plain JSON (the caller takes them out of a decoded one: see
    /// `proxy::as_ours`).
    pub(crate) fn decode<T: FromJson>(self) -> serde_json::Result<T> {
        match self {
            Answer::Raw(raw) => match wharf_protocol::without_protocol_members(raw.get()) {
                Some(kept) => T::from_json(&kept),
                None => T::from_json(raw.get()),
            },
            Answer::Value(value) => T::from_json_value(value),
        }
    }
}

/// What a 2026-07-28 answer says it is, read without building the rest of it.
#[derive(Deserialize)]
struct ResultKind<'a> {
    #[serde(rename = "resultType", borrow, default)]
    result_type: Option<std::borrow::Cow<'a, str>>,
}

/// The `resultType` of a raw 2026-07-28 answer when it is not a complete result; `None` when it
/// is (most answers: they name neither other kind anywhere and escape nothing, and are not
/// parsed for it).
fn incomplete_kind(raw: &RawValue) -> Option<String> {
    let text = raw.get();
    // An escaped `resultType` (`\u` anywhere) is read properly, as is any answer that names
    // one of the other kinds somewhere.
    if !text.contains("\"input_required\"") && !text.contains("\"task\"") && !text.contains("\\u") {
        return None;
    }
    let kind: ResultKind<'_> = serde_json::from_str(text).ok()?;
    kind.result_type.filter(|kind| kind == "input_required" || kind == "task").map(std::borrow::Cow::into_owned)
}

/// Sends `method` with `params` upstream for `context`'s request; its result, or the error
/// naming the mount.
pub(crate) async fn forward(
    context: &RequestContext,
    link: &Link,
    method: &'static str,
    params: Value,
    tasks: ListedTasks,
) -> Result<Answer, RpcError> {
    let mut options = RequestOptions::default();
    // The client's own `_meta` members go on (a trace context, its keys); the protocol's are
    // each hop's own.
    if let Some(members) = context.meta() {
        let passed: JsonObject = members
            .iter()
            .filter(|(key, _)| !key.starts_with(META_PROTOCOL_PREFIX))
            .map(|(k, v)| (k.clone(), v.clone()))
            .collect();
        if !passed.is_empty() {
            options = options.meta(passed);
        }
    }
    // A client that takes no log message (2026-07-28 without a level) leaves the upstream's to
    // the notification stream, which drops them; listeners only for what the client takes.
    let logs = context.logs_at(LoggingLevel::Emergency).then(|| {
        let (sender, logs) = mpsc::unbounded_channel();
        options = std::mem::take(&mut options).log_messages(sender);
        logs
    });
    let progress = context.wants_progress().then(|| {
        let (sender, progress) = mpsc::unbounded_channel();
        options = std::mem::take(&mut options).progress(sender);
        progress
    });
    let client = link.connection.client_for(session_owner(context).as_deref()).await?;
    if context.protocol_version().era() == Era::Session {
        // A 2025 client is asked at once.
        let options = options.handler(Relay::direct(context)).owner(owner(context));
        let mount = link.mount.clone();
        let upstream = async move {
            if tasks.asks_for_task(context) {
                let created = || context.become_task_now();
                // Boxed, as every rare path here: the common one's future stays small.
                Box::pin(call_as_session_task(&client, &mount, params, &options, created)).await.map(Answer::Value)
            } else {
                client.request_raw_with(method, &params, &options).await.map(Answer::Raw)
            }
        };
        return carry(context, Box::pin(upstream), progress, logs).await.map_err(|err| answer_for(&link.mount, &err));
    }
    options = options.owner(owner(context));
    if client.era() == Era::Stateless {
        // The upstream may make a task of the call only when the gateway's client could: the
        // gateway's upstream client declares every question but tasks, and this request adds
        // them when its own client has them.
        let options = if declares_tasks(context) {
            let mut members = options.meta_members();
            members.extend(DECLARED_WITH_TASKS.iter().map(|(key, value)| (key.clone(), value.clone())));
            options.meta(members)
        } else {
            options
        };
        let options = options.returns_input_required();
        return pass_rounds(context, link, &client, method, params, options, progress, logs).await;
    }
    let as_task = tasks.asks_for_task(context);
    let mount = link.mount.clone();
    let start = move |options: RequestOptions, became_task: watch::Sender<bool>| async move {
        if as_task {
            let created = move || {
                let _ = became_task.send(true);
            };
            call_as_session_task(&client, &mount, params, &options, created).await
        } else {
            client.request_with(method, params, &options).await
        }
    };
    Box::pin(park_rounds(context, link, start, options, progress, logs)).await.map(Answer::Value)
}

/// For whom a request is made: over stdio, which does not say which request an upstream's
/// question is for, requests of one owner may take each other's. The principal, else the
/// gateway's session or connection the request came on.
fn owner(context: &RequestContext) -> String {
    match context.principal() {
        Some(principal) => format!("principal {}", principal.as_str()),
        None => format!("session {}", context.session_id()),
    }
}

/// Whose upstream session a request uses on a mount that gives each client its own: its
/// principal's, else its 2025 session's; `None` (the shared one) for a 2026-07-28 request
/// without a principal.
pub(crate) fn session_owner(context: &RequestContext) -> Option<String> {
    match context.principal() {
        Some(principal) => Some(format!("principal {}", principal.as_str())),
        None if context.protocol_version().era() == Era::Session => Some(format!("session {}", context.session_id())),
        None => None,
    }
}

/// A 2026-07-28 client's request to a 2026-07-28 upstream, its rounds of input passed on.
#[allow(clippy::too_many_arguments, reason = "one request's parts, passed on")]
async fn pass_rounds(
    context: &RequestContext,
    link: &Link,
    client: &wharf_client::Client,
    method: &'static str,
    mut params: Value,
    options: RequestOptions,
    mut progress: Listener<ProgressParams>,
    mut logs: Listener<LoggingMessageParams>,
) -> Result<Answer, RpcError> {
    let mut round = context.round_state::<PassedRound>();
    for _ in 0..MAX_ROUNDS {
        if let Some(PassedRound { upstream_state, asked }) = round.take() {
            let mut responses = serde_json::Map::new();
            for (key, request) in &asked {
                responses.insert(key.clone(), Box::pin(ask_keyed(context, key, request)).await?);
            }
            let object = params.as_object_mut().ok_or_else(|| RpcError::internal("Internal error: params"))?;
            object.insert("inputResponses".to_owned(), Value::Object(responses));
            match upstream_state {
                Some(state) => object.insert("requestState".to_owned(), Value::String(state)),
                None => object.remove("requestState"),
            };
        }
        let upstream = Box::pin(client.request_raw_with(method, &params, &options));
        let raw = carry_borrowed(context, upstream, &mut progress, &mut logs)
            .await
            .map_err(|err| answer_for(&link.mount, &err))?;
        let malformed = |err: serde_json::Error| {
            RpcError::internal(format!("the mount `{}` answered with a malformed result: {err}", link.mount))
        };
        match incomplete_kind(&raw).as_deref() {
            None => return Ok(Answer::Raw(raw)),
            Some("task") => {
                let answer: Value = serde_json::from_str(raw.get()).map_err(malformed)?;
                let task_options = RequestOptions::default().meta(options.meta_members());
                let followed = Box::pin(follow(context, client, &link.mount, &task_options, answer)).await;
                return followed.map(Answer::Value);
            }
            Some(_) => {}
        }
        let needed = InputRequiredResult::from_json(raw.get()).map_err(|err| {
            RpcError::internal(format!("the mount `{}` asked for input malformed: {err}", link.mount))
        })?;
        let asked: Vec<(String, InputRequest)> = needed.input_requests.unwrap_or_default().into_iter().collect();
        let mut input_required = None;
        for (key, request) in &asked {
            // In a task the answer is awaited here; else the first ask of a key asks for it.
            if let Err(err) = Box::pin(ask_keyed(context, key, request)).await {
                if !err.is_input_required() {
                    return Err(err);
                }
                input_required = Some(err);
            }
        }
        round = Some(PassedRound { upstream_state: needed.request_state, asked });
        if let Some(input_required) = input_required {
            context.set_round_state(&round)?;
            return Err(input_required);
        }
    }
    Err(RpcError::internal(format!("the mount `{}` still asked for input after {MAX_ROUNDS} rounds", link.mount)))
}

/// A 2026-07-28 client's request to an upstream in a 2025 session, parked while the client is
/// asked the upstream's questions.
async fn park_rounds<F, Fut>(
    context: &RequestContext,
    link: &Link,
    start: F,
    options: RequestOptions,
    progress: Listener<ProgressParams>,
    logs: Listener<LoggingMessageParams>,
) -> Result<Value, RpcError>
where
    F: FnOnce(RequestOptions, watch::Sender<bool>) -> Fut,
    Fut: Future<Output = Result<Value, ClientError>> + Send + 'static,
{
    let parking = &link.parking;
    let mut running = match context.round_state::<ParkedRound>() {
        Some(round) => {
            let Some(mut running) = parking.take(&round.parked) else {
                // Parked by another replica, or no longer waiting.
                return continue_elsewhere(context, parking, round).await;
            };
            if let Err(input_required) = answer_asked(context, &mut running).await {
                return park(context, parking, running, input_required);
            }
            if *running.upstream_task.borrow_and_update() {
                // The input came before the work, which goes on as a task, as upstream.
                context.become_task_now();
            }
            running
        }
        None => {
            let (question_sender, questions) = mpsc::unbounded_channel();
            let parked = Arc::new(AtomicBool::new(false));
            let relay = Relay::Queued { questions: question_sender, parked: parked.clone() };
            let (became_task, upstream_task) = watch::channel(false);
            let task = AbortOnDrop(tokio::spawn(start(options.handler(Arc::new(relay)), became_task)));
            Running {
                mount: link.mount.clone(),
                task,
                questions,
                progress: progress.unwrap_or_else(closed),
                logs: logs.unwrap_or_else(closed),
                asked: Vec::new(),
                parked,
                keys: HashSet::new(),
                upstream_task,
                finished: None,
            }
        }
    };
    loop {
        match next_step(&mut running).await {
            Step::Progress(update) => pass_progress(context, update).await,
            Step::Log(message) => pass_log(context, message).await,
            // The upstream made a task of the call: so does the gateway. (A 2025-11-25 task
            // starts before it asks anything: its questions come in the task.)
            Step::BecameTask => context.become_task_now(),
            Step::Done(answer) => return answer,
            Step::Questions(questions) => {
                let asked = questions.iter().map(|(key, question)| (key.as_str(), &question.request));
                let answers = ask_all(context, asked).await;
                let mut input_required = None;
                for ((key, question), answer) in questions.into_iter().zip(answers) {
                    if let Ok(Some(asking)) = settle(&mut running, key, question, answer) {
                        input_required = Some(asking);
                    }
                }
                if let Some(input_required) = input_required {
                    return park(context, parking, running, input_required);
                }
            }
        }
    }
}

/// Parks `running` until the client's retry, which `input_required` asks for.
fn park(
    context: &RequestContext,
    parking: &Arc<Parking>,
    running: Running,
    input_required: RpcError,
) -> Result<Value, RpcError> {
    let round = parking.park(running).ok_or_else(|| {
        RpcError::internal("Internal error: too many upstream requests wait for their clients' answers; retry later")
    })?;
    context.set_round_state(&round)?;
    Err(input_required)
}

/// Gives the upstream the answers the client's retry brought; the error asking again when
/// some are still missing.
async fn answer_asked(context: &RequestContext, running: &mut Running) -> Result<(), RpcError> {
    let mut missing = None;
    for (key, question) in std::mem::take(&mut running.asked) {
        let answer = ask_keyed(context, &key, &question.request).await;
        if let Some(asking) = settle(running, key, question, answer)? {
            missing = Some(asking);
        }
    }
    missing.map_or(Ok(()), Err)
}

/// What became of `question`, asked of the client under `key`: its answer passed on upstream
/// (`Ok(None)`); still to be answered, kept, with the error that asks for it (`Ok(Some)`); or
/// the client's error, passed on upstream too (`Err`).
fn settle(
    running: &mut Running,
    key: String,
    question: Question,
    answer: Result<Value, RpcError>,
) -> Result<Option<RpcError>, RpcError> {
    match answer {
        Ok(value) => {
            let _ = question.answer.send(Ok(value));
            Ok(None)
        }
        Err(err) if err.is_input_required() => {
            running.asked.push((key, question));
            Ok(Some(err))
        }
        Err(err) => {
            let _ = question.answer.send(Err(to_object(&err)));
            Err(err)
        }
    }
}

/// What listens for one kind of what the upstream sends during a request, when the client
/// takes it.
type Listener<T> = Option<mpsc::UnboundedReceiver<T>>;

/// A receiver that has nothing, and never will.
fn closed<T>() -> mpsc::UnboundedReceiver<T> {
    mpsc::unbounded_channel().1
}

/// The next thing `listener` hears; `None` at once without one.
async fn heard<T>(listener: &mut Listener<T>) -> Option<T> {
    match listener {
        Some(receiver) => receiver.recv().await,
        None => None,
    }
}

/// Runs `upstream` here, passing on its progress and log messages until it answers.
async fn carry<T>(
    context: &RequestContext,
    upstream: impl Future<Output = Result<T, ClientError>>,
    mut progress: Listener<ProgressParams>,
    mut logs: Listener<LoggingMessageParams>,
) -> Result<T, ClientError> {
    carry_borrowed(context, upstream, &mut progress, &mut logs).await
}

/// [`carry`], the listeners kept for the next round.
async fn carry_borrowed<T>(
    context: &RequestContext,
    upstream: impl Future<Output = Result<T, ClientError>>,
    progress: &mut Listener<ProgressParams>,
    logs: &mut Listener<LoggingMessageParams>,
) -> Result<T, ClientError> {
    if progress.is_none() && logs.is_none() {
        return upstream.await;
    }
    tokio::pin!(upstream);
    let answer = loop {
        tokio::select! {
            biased;
            Some(update) = heard(progress) => pass_progress(context, update).await,
            Some(message) = heard(logs) => pass_log(context, message).await,
            answer = &mut upstream => break answer,
        }
    };
    // What the upstream sent before it answered arrived before its answer: pass it on first.
    while let Some(update) = progress.as_mut().and_then(|receiver| receiver.try_recv().ok()) {
        pass_progress(context, update).await;
    }
    while let Some(message) = logs.as_mut().and_then(|receiver| receiver.try_recv().ok()) {
        pass_log(context, message).await;
    }
    answer
}

#[cfg(test)]
mod tests {
    use super::*;

    fn kind(text: &str) -> Option<String> {
        incomplete_kind(&RawValue::from_string(text.to_owned()).unwrap())
    }

    #[test]
    fn an_answers_kind_is_read_only_when_it_may_not_be_complete_and_then_properly() {
        assert_eq!(kind(r#"{"resultType":"complete","content":[]}"#), None);
        // The word in a text is not the kind.
        assert_eq!(kind(r#"{"resultType":"complete","content":[{"type":"text","text":"task"}]}"#), None);
        assert_eq!(kind(r#"{"resultType":"input_required","inputRequests":{}}"#).as_deref(), Some("input_required"));
        // Written with an escape, it is still found.
        assert_eq!(kind(r#"{"resultType":"input\u005frequired"}"#).as_deref(), Some("input_required"));
        assert_eq!(kind(r#"{"resultType":"t\u0061sk","taskId":"1"}"#).as_deref(), Some("task"));
    }
}
