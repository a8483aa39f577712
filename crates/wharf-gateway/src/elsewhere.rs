//! A 2026-07-28 client's retry that lands on another replica than the one whose upstream
//! request waits for it (a load balancer sends each request where it likes): the answers it
//! brought are carried to the holder, which gives them to its upstream request and sends back
//! what the request does next, until it answers or asks again. Both sides are here: the
//! replica the retry reached, and the holder.

use std::collections::HashMap;
use std::sync::Arc;
use std::time::Duration;

use serde_json::Value;
use wharf_protocol::InputRequest;
use wharf_server::{RequestContext, RpcError};

use crate::parked::{ParkedRound, Parking};
use crate::relay::{from_object, to_object};
use crate::replica::{Answered, Event, Message, Replicas, decode};
use crate::step::{Step, ask_all, next_step, pass_log, pass_progress};

/// How often the holder says it still runs the request.
const ALIVE_EVERY: Duration = Duration::from_secs(5);
/// How many times the holder tries to send a request's last event when the bus fails.
const LAST_EVENT_ATTEMPTS: usize = 3;
/// How long the replica the retry reached waits for word from the holder before it gives up.
const SILENCE_LIMIT: Duration = Duration::from_secs(20);
/// How many times one retry goes back and forth (a request in a task is asked, and answered,
/// round after round).
const MAX_ROUNDS: usize = 64;

/// The error of a retry whose upstream request waits nowhere any more.
fn no_longer_waiting() -> RpcError {
    RpcError::invalid_params(
        "Invalid params: the upstream request this requestState continues is no longer waiting (no retry came in \
         time, or the gateway that held it stopped); call again without requestState",
    )
}

/// Listens, for as long as `parking` lives, to what the other replicas send this one: retries
/// of requests it holds, their cancellation, and what requests held elsewhere did.
pub(crate) fn listen_to_replicas(parking: &Arc<Parking>) {
    let Some(replicas) = parking.replicas() else { return };
    let mut messages = replicas.listen();
    let weak = Arc::downgrade(parking);
    let listener = tokio::spawn(async move {
        while let Some(bytes) = messages.recv().await {
            let Some(parking) = weak.upgrade() else { return };
            let Some(replicas) = parking.replicas() else { return };
            match decode(&bytes) {
                Some(Message::Continue { parked, answers, from, call }) => {
                    // Registered before it can end, so that its end finds it to remove.
                    let mut held = replicas.held();
                    let task = tokio::spawn(hold(parking.clone(), parked, answers, from.clone(), call));
                    held.insert((from, call), task.abort_handle());
                }
                Some(Message::Cancel { from, call }) => {
                    if let Some(task) = replicas.held().remove(&(from, call)) {
                        // The upstream request is dropped, and with it cancelled upstream.
                        task.abort();
                    }
                }
                Some(Message::Event { call, event }) => replicas.deliver(call, event),
                None => tracing::debug!("ignoring a message on the replicas' bus that no gateway wrote"),
            }
        }
    });
    parking.set_listener(listener.abort_handle());
}

/// The holder's side: takes the upstream request parked as `parked`, gives it `answers`, and
/// sends the replica `from` what it does next. When that replica is gone (it no longer
/// listens), the upstream request is dropped, and with it cancelled upstream.
async fn hold(parking: Arc<Parking>, parked: String, answers: HashMap<String, Answered>, from: String, call: u64) {
    let outcome = tokio::select! {
        event = drive(&parking, &parked, answers, &from, call) => Some(event),
        () = asker_gone(&parking, &from, call) => None,
    };
    match outcome {
        Some(event) => send_reliably(&parking, &from, call, event).await,
        None => tracing::debug!(%from, "the replica a held request was for is gone; the request is dropped"),
    }
    if let Some(replicas) = parking.replicas() {
        replicas.held().remove(&(from, call));
    }
}

/// Gives the upstream request parked as `parked` the answers, and follows it until it answers
/// or asks again: its last event.
async fn drive(
    parking: &Arc<Parking>,
    parked: &str,
    mut answers: HashMap<String, Answered>,
    from: &str,
    call: u64,
) -> Event {
    let Some(mut running) = parking.take(parked) else { return Event::Gone };
    for (key, question) in std::mem::take(&mut running.asked) {
        match answers.remove(&key) {
            Some(Answered::Result(value)) => drop(question.answer.send(Ok(value))),
            Some(Answered::Error(error)) => drop(question.answer.send(Err(error))),
            None => running.asked.push((key, question)),
        }
    }
    while running.asked.is_empty() {
        let event = match next_step(&mut running).await {
            Step::Progress(update) => Event::Progress(update),
            Step::Log(message) => Event::Log(message),
            Step::BecameTask => Event::BecameTask,
            Step::Questions(questions) => {
                running.asked = questions;
                continue;
            }
            Step::Done(Ok(value)) => return Event::Done(Answered::Result(value)),
            Step::Done(Err(err)) => return Event::Done(Answered::Error(to_object(&err))),
        };
        send(parking, from, call, event).await;
    }
    match parking.park(running) {
        Some(round) => Event::Asked { asked: round.asked, parked: round.parked },
        None => Event::Done(Answered::Error(to_object(&RpcError::internal(
            "Internal error: too many upstream requests wait for their clients' answers; retry later",
        )))),
    }
}

/// Says now and then to the replica `from` that its request still runs here; ends when that
/// replica no longer listens (twice in a row: it stopped).
async fn asker_gone(parking: &Parking, from: &str, call: u64) {
    let mut unheard = 0;
    while unheard < 2 {
        tokio::time::sleep(ALIVE_EVERY).await;
        match send(parking, from, call, Event::Alive).await {
            Some(false) => unheard += 1,
            // Heard, or the bus failed (which says nothing of the replica).
            Some(true) | None => unheard = 0,
        }
    }
}

/// Sends `event` to the replica `to`: whether it listens, `None` when the bus failed.
async fn send(parking: &Parking, to: &str, call: u64, event: Event) -> Option<bool> {
    let replicas = parking.replicas()?;
    match replicas.send(to, &Message::Event { call, event }).await {
        Ok(heard) => Some(heard),
        Err(err) => {
            tracing::warn!(error = %err, "could not tell another gateway replica what its request did");
            None
        }
    }
}

/// Sends a held request's last event, tried a few times when the bus fails: an answer lost here
/// would make its client call again.
async fn send_reliably(parking: &Parking, to: &str, call: u64, event: Event) {
    let Some(replicas) = parking.replicas() else { return };
    let message = Message::Event { call, event };
    for attempt in 0..LAST_EVENT_ATTEMPTS {
        match replicas.send(to, &message).await {
            Ok(_) => return,
            Err(err) if attempt + 1 == LAST_EVENT_ATTEMPTS => {
                tracing::warn!(error = %err, "could not tell another gateway replica how its request ended");
            }
            Err(_) => tokio::time::sleep(Duration::from_millis(200)).await,
        }
    }
}

/// The side of the replica a retry reached, whose upstream request is parked elsewhere (or
/// nowhere): the client's answers carried to the holder, and what the request does next
/// passed on, until it answers or the client is asked again.
pub(crate) async fn continue_elsewhere(
    context: &RequestContext,
    parking: &Arc<Parking>,
    mut round: ParkedRound,
) -> Result<Value, RpcError> {
    let (Some(replicas), Some(holder)) = (parking.replicas(), round.at.clone()) else {
        return Err(no_longer_waiting());
    };
    if holder == replicas.name() {
        return Err(no_longer_waiting());
    }
    for _ in 0..MAX_ROUNDS {
        // The answers the client gave go to the holder first: a request that lacks an input
        // may be answered at its next wait, so what is missing is asked for only after.
        let (given, still): (Vec<_>, Vec<_>) =
            std::mem::take(&mut round.asked).into_iter().partition(|(key, _)| context.has_input(key));
        let (mut answers, _) = settle(context, given).await;
        if answers.is_empty() {
            // Nothing for the holder yet: asked for now (in a task, the answers come). While
            // one is missing, nothing goes to the holder, and every question of the round stays
            // asked: an error the client answered one with is sent with the next retry.
            let missing;
            (answers, missing) = settle(context, still.clone()).await;
            if let Some(missing) = missing {
                round.asked = still;
                context.set_round_state(&round)?;
                return Err(missing);
            }
        }
        let mut call = Call::open(parking, replicas, &holder);
        let continued = Message::Continue {
            parked: round.parked.clone(),
            answers,
            from: replicas.name().to_owned(),
            call: call.id,
        };
        let reached = replicas.send(&holder, &continued).await.map_err(|err| {
            RpcError::internal(format!("Internal error: the gateway replica holding the upstream request: {err}"))
        })?;
        if !reached {
            call.finished = true;
            return Err(no_longer_waiting());
        }
        loop {
            let event = match tokio::time::timeout(SILENCE_LIMIT, call.events.recv()).await {
                Ok(Some(event)) => event,
                Ok(None) | Err(_) => {
                    return Err(RpcError::internal(
                        "the gateway replica holding the upstream request stopped answering; call again without \
                         requestState",
                    ));
                }
            };
            match event {
                Event::Progress(update) => pass_progress(context, update).await,
                Event::Log(message) => pass_log(context, message).await,
                Event::BecameTask => context.become_task_now(),
                Event::Alive => {}
                Event::Done(answer) => {
                    call.finished = true;
                    return match answer {
                        Answered::Result(value) => Ok(value),
                        Answered::Error(error) => Err(from_object(&error)),
                    };
                }
                Event::Gone => {
                    call.finished = true;
                    return Err(no_longer_waiting());
                }
                Event::Asked { asked, parked } => {
                    call.finished = true;
                    round = ParkedRound { parked, at: Some(holder.clone()), asked };
                    break;
                }
            }
        }
    }
    Err(RpcError::internal(format!("Internal error: the upstream request still asked after {MAX_ROUNDS} rounds")))
}

/// Asks `context`'s client `asked` ([`ask_all`]): the answers (and errors) to carry to the
/// holder, and, when some must be asked for in a new round, the error that asks for them.
async fn settle(
    context: &RequestContext,
    asked: Vec<(String, InputRequest)>,
) -> (HashMap<String, Answered>, Option<RpcError>) {
    let answered = ask_all(context, asked.iter().map(|(key, request)| (key.as_str(), request))).await;
    let (mut answers, mut missing) = (HashMap::new(), None);
    for ((key, _), answer) in asked.into_iter().zip(answered) {
        match answer {
            Ok(value) => drop(answers.insert(key, Answered::Result(value))),
            Err(err) if err.is_input_required() => missing = Some(err),
            Err(err) => drop(answers.insert(key, Answered::Error(to_object(&err)))),
        }
    }
    (answers, missing)
}

/// A call this replica waits on; dropped before it finished (its client cancelled), the
/// holder is told to drop the upstream request.
struct Call {
    parking: Arc<Parking>,
    holder: String,
    id: u64,
    events: tokio::sync::mpsc::UnboundedReceiver<Event>,
    finished: bool,
}

impl Call {
    fn open(parking: &Arc<Parking>, replicas: &Replicas, holder: &str) -> Call {
        let (id, events) = replicas.open_call();
        Call { parking: parking.clone(), holder: holder.to_owned(), id, events, finished: false }
    }
}

impl Drop for Call {
    fn drop(&mut self) {
        let Some(replicas) = self.parking.replicas() else { return };
        replicas.close_call(self.id);
        if self.finished {
            return;
        }
        let (parking, holder, call) = (self.parking.clone(), std::mem::take(&mut self.holder), self.id);
        tokio::spawn(async move {
            if let Some(replicas) = parking.replicas() {
                let from = replicas.name().to_owned();
                let _ = replicas.send(&holder, &Message::Cancel { from, call }).await;
            }
        });
    }
}
