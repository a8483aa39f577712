//! `wharf replay CASSETTE`: the cassette served as a server over stdio, in the era it was
//! recorded in. A client's request is matched with an unused recorded one of the same method and
//! the same params (volatile members aside: ids, progress tokens, `requestState`, `_meta`); the
//! server's messages recorded between that request and its answer are sent again (its questions
//! to the client waited on), then the recorded answer, under the request's own id. A request
//! that matches none gets -32602 naming the closest recorded one. Notifications are taken and
//! ignored.

use std::io::{BufRead, Write};
use std::path::PathBuf;
use std::process::ExitCode;

use clap::Args;
use serde_json::{Value, json};

use super::{Entry, REDACTED, Side, describe, normalized, read, request_key};
use crate::exit;

#[derive(Debug, Args)]
pub(crate) struct ReplayArgs {
    /// The cassette `wharf record` wrote.
    #[arg(value_name = "CASSETTE")]
    cassette: PathBuf,
}

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

fn send(out: &mut impl Write, message: &Value) -> std::io::Result<()> {
    writeln!(out, "{message}")?;
    out.flush()
}

pub(crate) fn replay(args: ReplayArgs) -> ExitCode {
    let entries = match read(&args.cassette) {
        Ok(entries) => entries,
        Err(why) => {
            eprintln!("wharf replay: {why}");
            return ExitCode::from(exit::USAGE);
        }
    };
    let mut recorded = exchanges(&entries);
    eprintln!("wharf replay: {} exchanges from {}", recorded.len(), args.cassette.display());
    let stdin = std::io::stdin();
    let mut input = stdin.lock().lines();
    let mut out = std::io::stdout().lock();
    while let Some(Ok(line)) = input.next() {
        let Ok(message) = serde_json::from_str::<Value>(&line) else {
            let _ = send(
                &mut out,
                &json!({"jsonrpc": "2.0", "id": null, "error": {"code": -32700, "message": "Parse error"}}),
            );
            continue;
        };
        let Some(id) = message.get("id").cloned().filter(|_| message.get("method").is_some()) else { continue };
        let key = request_key(&message);
        // An unused recorded request first; one used already answers the same again.
        let found = recorded
            .iter()
            .position(|exchange| !exchange.used && same_request(&exchange.key, &key))
            .or_else(|| recorded.iter().position(|exchange| same_request(&exchange.key, &key)));
        let Some(found) = found else {
            let closest = recorded
                .iter()
                .find(|exchange| exchange.key.0 == key.0)
                .map(|exchange| exchange.request["params"].clone());
            let hint = match closest {
                Some(params) => format!("; the closest recorded `{}` had params {}", key.0, normalized(&params)),
                None => format!("; the cassette has no `{}`", key.0),
            };
            let error =
                json!({"code": -32602, "message": format!("No recorded request matches {}{hint}", describe(&message))});
            let _ = send(&mut out, &json!({"jsonrpc": "2.0", "id": id, "error": error}));
            continue;
        };
        let exchange = &mut recorded[found];
        exchange.used = true;
        let recorded_token = exchange.request.pointer("/params/_meta/progressToken").cloned().unwrap_or(Value::Null);
        let token = message.pointer("/params/_meta/progressToken").cloned().unwrap_or(Value::Null);
        for between in exchange.meanwhile.clone() {
            let between = with_progress_token(between, &recorded_token, &token);
            if send(&mut out, &between).is_err() {
                return ExitCode::SUCCESS;
            }
            if between.get("id").is_some() {
                // A question to the client: its answer is read and passed over.
                for answer in input.by_ref() {
                    let Ok(answer) = answer else { return ExitCode::SUCCESS };
                    if serde_json::from_str::<Value>(&answer).is_ok_and(|answer| answer.get("id") == between.get("id"))
                    {
                        break;
                    }
                }
            }
        }
        let mut answer = exchange.answer.clone();
        answer["id"] = id;
        if send(&mut out, &answer).is_err() {
            break;
        }
    }
    ExitCode::SUCCESS
}
