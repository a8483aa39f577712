//! What an upstream request in a 2025 session does next while a 2026-07-28 client's rounds go
//! on: something it sent meanwhile (progress, a log message, that it became a task), the
//! questions it asked together, each under its key, or its answer. Whichever replica holds the
//! request takes its steps one at a time.

use std::future::Future;
use std::pin::Pin;
use std::task::Poll;
use std::time::Duration;

use serde_json::Value;
use wharf_protocol::{InputRequest, LoggingMessageParams, ProgressParams};
use wharf_server::{RequestContext, RpcError};

use crate::parked::Running;
use crate::relay::{Question, ask_keyed};
use crate::upstream::answer_for;

/// How long the gateway waits for more of an upstream's questions after one, to ask them of
/// its client in one round.
const QUESTION_WINDOW: Duration = Duration::from_millis(20);

/// The most questions asked of the client in one round.
const MAX_QUESTIONS_AT_ONCE: usize = 64;

/// The next thing an upstream request did.
pub(crate) enum Step {
    Progress(ProgressParams),
    Log(LoggingMessageParams),
    /// The upstream made a task of the call (a 2025-11-25 upstream).
    BecameTask,
    /// Questions asked together, each under a key not used before in this request.
    Questions(Vec<(String, Question)>),
    /// Its answer, once everything it sent before has been taken.
    Done(Result<Value, RpcError>),
}

/// Waits for `running`'s next step.
pub(crate) async fn next_step(running: &mut Running) -> Step {
    let first = loop {
        if let Some(step) = after_the_answer(running) {
            return step;
        }
        tokio::select! {
            biased;
            Some(update) = running.progress.recv() => return Step::Progress(update),
            Some(message) = running.logs.recv() => return Step::Log(message),
            Some(question) = running.questions.recv() => break question,
            Ok(()) = running.upstream_task.changed() => return Step::BecameTask,
            joined = &mut running.task.0 => {
                let mount = &running.mount;
                running.finished = Some(match joined {
                    Ok(answer) => answer.map_err(|err| answer_for(mount, &err)),
                    Err(err) => Err(RpcError::internal(format!("the request to the mount `{mount}` failed: {err}"))),
                });
            }
        }
    };
    let mut questions = vec![first];
    // Questions the upstream asks together arrive one after another: the client is asked in
    // one round for those that come within a moment of each other.
    while questions.len() < MAX_QUESTIONS_AT_ONCE {
        match tokio::time::timeout(QUESTION_WINDOW, running.questions.recv()).await {
            Ok(Some(question)) => questions.push(question),
            _ => break,
        }
    }
    let keyed = questions
        .into_iter()
        .map(|mut question| {
            let key = match question.request.take_input_key() {
                Some(key) if !running.keys.contains(&key) => key,
                _ => (running.keys.len() + 1..)
                    .map(|n| format!("q{n}"))
                    .find(|key| !running.keys.contains(key))
                    .unwrap_or_default(),
            };
            running.keys.insert(key.clone());
            (key, question)
        })
        .collect();
    Step::Questions(keyed)
}

/// Once the upstream answered (its task is never polled again): what it sent before, then
/// the answer; `None` while it runs.
fn after_the_answer(running: &mut Running) -> Option<Step> {
    running.finished.as_ref()?;
    if let Ok(update) = running.progress.try_recv() {
        return Some(Step::Progress(update));
    }
    if let Ok(message) = running.logs.try_recv() {
        return Some(Step::Log(message));
    }
    running.finished.take().map(Step::Done)
}

/// Asks `context`'s client every question of `asked` at once, in this task: each one's
/// answer, or the error that asks for it. In a task each waits for its answer, and the task
/// shows them all; in a round each is answered or asked for at its first poll, so all of them
/// are before this returns, with no wait between (a request that lacks an input may be
/// answered at its next wait).
pub(crate) async fn ask_all<'a>(
    context: &'a RequestContext,
    asked: impl IntoIterator<Item = (&'a str, &'a InputRequest)>,
) -> Vec<Result<Value, RpcError>> {
    type Asking<'a> = Pin<Box<dyn Future<Output = Result<Value, RpcError>> + Send + 'a>>;
    let mut asking: Vec<Asking<'a>> =
        asked.into_iter().map(|(key, request)| Box::pin(ask_keyed(context, key, request)) as Asking<'a>).collect();
    let mut answers: Vec<Option<Result<Value, RpcError>>> = asking.iter().map(|_| None).collect();
    std::future::poll_fn(|cx| {
        let mut waiting = false;
        for (question, answer) in asking.iter_mut().zip(answers.iter_mut()) {
            if answer.is_none() {
                match question.as_mut().poll(cx) {
                    Poll::Ready(answered) => *answer = Some(answered),
                    Poll::Pending => waiting = true,
                }
            }
        }
        if waiting { Poll::Pending } else { Poll::Ready(()) }
    })
    .await;
    answers
        .into_iter()
        .map(|answer| answer.unwrap_or_else(|| Err(RpcError::internal("Internal error: unasked"))))
        .collect()
}

/// Passes on the upstream's progress to `context`'s client. (Boxed, as the log message's: the
/// futures that may pass them on stay small for the calls that pass nothing.)
pub(crate) async fn pass_progress(context: &RequestContext, update: ProgressParams) {
    Box::pin(context.progress(update.progress, update.total, update.message.as_deref())).await;
}

/// Passes on the upstream's log message to `context`'s client.
pub(crate) async fn pass_log(context: &RequestContext, message: LoggingMessageParams) {
    Box::pin(context.log(message.level, message.logger.as_deref(), message.data)).await;
}
