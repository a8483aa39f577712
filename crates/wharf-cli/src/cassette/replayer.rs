//! What answers a replayed request, whatever transport it came by: the recorded exchanges of
//! every session, each request paired with its answer within its session. A request is matched
//! with an unused recorded one of the same method and the same params (volatile members aside:
//! ids, progress tokens, `requestState`, `_meta`; a redacted recorded value stands for any); the
//! server's messages recorded between that request and its answer are given back (progress
//! under the new request's token), then the recorded answer under the new request's id. A
//! request that matches none gets -32602 naming the closest recorded one.

use serde_json::{Value, json};

use super::{Cassette, Entry, REDACTED, Side, describe, normalized, request_key};

/// One recorded request: what it asked, what the server sent meanwhile, and its answer.
struct Exchange {
    key: (String, Value),
    request: Value,
    /// Server messages between the request and its answer: notifications, and questions.
    meanwhile: Vec<Value>,
    answer: Value,
    used: bool,
}

/// The recorded exchanges, in order.
fn exchanges(entries: &[Entry]) -> Vec<Exchange> {
    let mut exchanges = Vec::new();
    for (at, entry) in entries.iter().enumerate() {
        if entry.from != Side::Client || !entry.is_request() {
            continue;
        }
        let id = &entry.message["id"];
        let answered = entries[at + 1..]
            .iter()
            .position(|later| later.from == Side::Server && later.is_answer() && &later.message["id"] == id);
        let Some(offset) = answered else { continue };
        let meanwhile = entries[at + 1..at + 1 + offset]
            .iter()
            .filter(|between| between.from == Side::Server && between.message.get("method").is_some())
            .map(|between| between.message.clone())
            .collect();
        exchanges.push(Exchange {
            key: request_key(&entry.message),
            request: entry.message.clone(),
            meanwhile,
            answer: entries[at + 1 + offset].message.clone(),
            used: false,
        });
    }
    exchanges
}

/// `message` with its progress token replaced by `token`, for notifications of a request whose
/// token differs from the recorded one's.
fn with_progress_token(mut message: Value, recorded: &Value, token: &Value) -> Value {
    if message.get("method") == Some(&json!("notifications/progress"))
        && message.pointer("/params/progressToken") == Some(recorded)
    {
        message["params"]["progressToken"] = token.clone();
    }
    message
}

/// True when a request is the recorded one: the same method, and the same params where a
/// redacted recorded value stands for any.
fn same_request(recorded: &(String, Value), incoming: &(String, Value)) -> bool {
    recorded.0 == incoming.0 && matches(&recorded.1, &incoming.1)
}

fn matches(recorded: &Value, incoming: &Value) -> bool {
    match (recorded, incoming) {
        (Value::String(redacted), _) if redacted == REDACTED => true,
        (Value::Object(before), Value::Object(now)) => {
            before.len() == now.len()
                && before.iter().all(|(key, value)| now.get(key).is_some_and(|other| matches(value, other)))
        }
        (Value::Array(before), Value::Array(now)) => {
            before.len() == now.len() && before.iter().zip(now).all(|(value, other)| matches(value, other))
        }
        _ => recorded == incoming,
    }
}

/// The recorded exchanges, and which were used: what answers a replayed request, whatever
/// transport it came by.
pub(crate) struct Replayer {
    exchanges: Vec<Exchange>,
}

impl Replayer {
    /// The exchanges of every session of `cassette`, each paired within its session.
    pub(crate) fn new(cassette: &Cassette) -> Replayer {
        Replayer { exchanges: cassette.sessions().iter().flat_map(|session| exchanges(&session.entries)).collect() }
    }

    pub(crate) fn len(&self) -> usize {
        self.exchanges.len()
    }

    /// What the server sent while answering the recorded request like `request` (progress
    /// under `request`'s token; questions to the client, to be answered before going on), and
    /// the answer, under `request`'s id. A request like none recorded gets -32602 naming the
    /// closest.
    pub(crate) fn respond(&mut self, request: &Value) -> (Vec<Value>, Value) {
        let id = request.get("id").cloned().unwrap_or(Value::Null);
        let key = request_key(request);
        // An unused recorded request first; one used already answers the same again.
        let found = self
            .exchanges
            .iter()
            .position(|exchange| !exchange.used && same_request(&exchange.key, &key))
            .or_else(|| self.exchanges.iter().position(|exchange| same_request(&exchange.key, &key)));
        let Some(found) = found else {
            // The closest: one for the same tool, prompt or resource, else of the same method.
            let closest = self
                .exchanges
                .iter()
                .find(|exchange| describe(&exchange.request) == describe(request))
                .or_else(|| self.exchanges.iter().find(|exchange| exchange.key.0 == key.0))
                .map(|exchange| exchange.request["params"].clone());
            let hint = match closest {
                Some(params) => format!("; the closest recorded `{}` had params {}", key.0, normalized(&params)),
                None => format!("; the cassette has no `{}`", key.0),
            };
            let error =
                json!({"code": -32602, "message": format!("No recorded request matches {}{hint}", describe(request))});
            return (Vec::new(), json!({"jsonrpc": "2.0", "id": id, "error": error}));
        };
        let exchange = &mut self.exchanges[found];
        exchange.used = true;
        let recorded_token = exchange.request.pointer("/params/_meta/progressToken").cloned().unwrap_or(Value::Null);
        let token = request.pointer("/params/_meta/progressToken").cloned().unwrap_or(Value::Null);
        let meanwhile = exchange
            .meanwhile
            .iter()
            .map(|between| with_progress_token(between.clone(), &recorded_token, &token))
            .collect();
        let mut answer = exchange.answer.clone();
        answer["id"] = id;
        (meanwhile, answer)
    }
}
