//! Cassettes (what `wharf record` writes: one JSON object a line, a header then each message
//! with who sent it) read, compared and replayed against a server in memory: a recorded session
//! as a unit test. [`Cassette::verify`] sends the recorded client side to a [`Server`] through
//! an [`InMemoryClient`], answers its questions as the client did, and reports each answer that
//! differs from the recorded one, volatile members aside ([`normalized`]).

use std::path::Path;

use serde_json::Value;
use wharf_protocol::{ErrorObject, FromJson, RequestId};

use crate::server::Server;
use crate::testing::InMemoryClient;

/// The cassette format's version, in its header.
pub const CASSETTE_VERSION: u64 = 1;

/// Who sent a recorded message.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CassetteSide {
    /// The client.
    Client,
    /// The server.
    Server,
}

/// One recorded message.
#[derive(Debug, Clone, PartialEq)]
pub struct CassetteEntry {
    /// Who sent it.
    pub from: CassetteSide,
    /// Milliseconds since the recording began.
    pub at_ms: u64,
    /// The message.
    pub message: Value,
    /// The protocol revision it was sent in, when known: what the session negotiated, or what
    /// a 2026-07-28 request names.
    pub era: Option<String>,
    /// The 2025 session it belongs to over HTTP (its `Mcp-Session-Id`); none over stdio and
    /// for stateless requests. JSON-RPC ids are unique only within one session.
    pub session: Option<String>,
    /// Over HTTP, the exchange that carried it, secrets redacted: the request's method, path and
    /// headers for the client's messages, the status and headers for the server's.
    pub http: Option<Value>,
}

impl CassetteEntry {
    /// True for a request: a method and an id.
    pub fn is_request(&self) -> bool {
        self.message.get("method").is_some() && self.message.get("id").is_some()
    }

    /// True for an answer: an id and no method.
    pub fn is_answer(&self) -> bool {
        self.message.get("method").is_none() && self.message.get("id").is_some()
    }

    /// An entry of `message` sent by `from` at `at_ms`, with nothing known of its era, session
    /// or HTTP exchange.
    pub fn new(from: CassetteSide, at_ms: u64, message: Value) -> CassetteEntry {
        CassetteEntry { from, at_ms, message, era: None, session: None, http: None }
    }

    /// The entry's line in a cassette.
    pub fn line(&self) -> String {
        let from = match self.from {
            CassetteSide::Client => "client",
            CassetteSide::Server => "server",
        };
        let mut line = serde_json::json!({"t": self.at_ms, "from": from});
        for (key, value) in [
            ("era", self.era.clone().map(Value::from)),
            ("session", self.session.clone().map(Value::from)),
            ("http", self.http.clone()),
        ] {
            if let Some(value) = value {
                line[key] = value;
            }
        }
        line["message"] = self.message.clone();
        line.to_string()
    }
}

/// A recorded session.
#[derive(Debug, Clone, PartialEq)]
pub struct Cassette {
    /// The header: the format's version, the transport, the command recorded.
    pub header: Value,
    /// The messages, in the order they passed.
    pub entries: Vec<CassetteEntry>,
}

/// An answer that differs from the recorded one.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CassetteDifference {
    /// The request, as `tools/call NAME`.
    pub request: String,
    /// Where the answers first differ, and both values.
    pub detail: String,
}

/// Members that differ from one run to the next: ids and tokens, sealed state, times, `_meta`
/// (server info).
const VOLATILE: [&str; 8] =
    ["requestState", "progressToken", "taskId", "createdAt", "lastUpdatedAt", "sessionId", "timestamp", "_meta"];

/// `value` without its volatile members, at any depth, for comparing two runs.
pub fn normalized(value: &Value) -> Value {
    match value {
        Value::Object(object) => Value::Object(
            object
                .iter()
                .filter(|(key, _)| !VOLATILE.contains(&key.as_str()))
                .map(|(key, value)| (key.clone(), normalized(value)))
                .collect(),
        ),
        Value::Array(items) => Value::Array(items.iter().map(normalized).collect()),
        other => other.clone(),
    }
}

/// The first place two values differ, as a JSON pointer with both values (cut short).
pub fn first_difference(path: &str, recorded: &Value, now: &Value) -> Option<String> {
    match (recorded, now) {
        (Value::Object(before), Value::Object(after)) => before.keys().chain(after.keys()).find_map(|key| {
            let (old, new) = (before.get(key).unwrap_or(&Value::Null), after.get(key).unwrap_or(&Value::Null));
            first_difference(&format!("{path}/{key}"), old, new)
        }),
        (Value::Array(before), Value::Array(after)) if before.len() == after.len() => before
            .iter()
            .zip(after)
            .enumerate()
            .find_map(|(at, (old, new))| first_difference(&format!("{path}/{at}"), old, new)),
        _ if recorded == now => None,
        _ => {
            let cut = |value: &Value| {
                let text = value.to_string();
                if text.chars().count() > 120 {
                    format!("{}…", text.chars().take(120).collect::<String>())
                } else {
                    text
                }
            };
            Some(format!("{}: recorded {}, now {}", if path.is_empty() { "/" } else { path }, cut(recorded), cut(now)))
        }
    }
}

/// A request as a person names it: its method, and the tool, prompt or resource.
pub fn describe_request(message: &Value) -> String {
    let method = message.get("method").and_then(Value::as_str).unwrap_or_default();
    let params = message.get("params");
    let name =
        ["name", "uri"].iter().find_map(|key| params.and_then(|params| params.get(*key)).and_then(Value::as_str));
    match name {
        Some(name) => format!("{method} {name}"),
        None => method.to_owned(),
    }
}

impl Cassette {
    /// The cassette in `text`, or what is wrong with it.
    pub fn parse(text: &str) -> Result<Cassette, String> {
        let mut lines = text.lines();
        let header: Value = lines
            .next()
            .and_then(|line| serde_json::from_str(line).ok())
            .ok_or("not a cassette: its first line is not a header")?;
        if header.get("cassette").and_then(Value::as_u64) != Some(CASSETTE_VERSION) {
            return Err(format!("not a cassette of version {CASSETTE_VERSION}"));
        }
        let mut entries = Vec::new();
        for (number, line) in lines.enumerate().filter(|(_, line)| !line.trim().is_empty()) {
            let value: Value = serde_json::from_str(line).map_err(|err| format!("line {}: {err}", number + 2))?;
            let from = match value.get("from").and_then(Value::as_str) {
                Some("client") => CassetteSide::Client,
                Some("server") => CassetteSide::Server,
                _ => return Err(format!("line {}: no `from`", number + 2)),
            };
            let text = |key: &str| value.get(key).and_then(Value::as_str).map(str::to_owned);
            entries.push(CassetteEntry {
                from,
                at_ms: value.get("t").and_then(Value::as_u64).unwrap_or(0),
                message: value.get("message").cloned().unwrap_or(Value::Null),
                era: text("era"),
                session: text("session"),
                http: value.get("http").cloned(),
            });
        }
        Ok(Cassette { header, entries })
    }

    /// The cassette in the file at `path`.
    pub fn read(path: &Path) -> Result<Cassette, String> {
        let text = std::fs::read_to_string(path).map_err(|err| format!("{}: {err}", path.display()))?;
        Cassette::parse(&text).map_err(|why| format!("{}: {why}", path.display()))
    }

    /// The cassette cut into its sessions, in the order each began: one for each `Mcp-Session-Id`
    /// recorded over HTTP, and one for the messages of no session (all of a stdio recording; the
    /// stateless requests of an HTTP one). Each is replayed or verified on a connection of its
    /// own, since JSON-RPC ids are unique only within a session.
    pub fn sessions(&self) -> Vec<Cassette> {
        let mut sessions: Vec<Cassette> = Vec::new();
        for entry in &self.entries {
            let found = sessions.iter_mut().find(|session| session.entries[0].session == entry.session);
            match found {
                Some(session) => session.entries.push(entry.clone()),
                None => sessions.push(Cassette { header: self.header.clone(), entries: vec![entry.clone()] }),
            }
        }
        sessions
    }

    /// The client's recorded answer to the server's recorded questions of `method`, in order.
    fn answers_to(&self, method: &str) -> Vec<Value> {
        self.entries
            .iter()
            .filter(|entry| {
                entry.from == CassetteSide::Server && entry.is_request() && entry.message["method"] == method
            })
            .filter_map(|question| {
                self.entries
                    .iter()
                    .find(|answer| {
                        answer.from == CassetteSide::Client
                            && answer.is_answer()
                            && answer.message["id"] == question.message["id"]
                    })
                    .map(|answer| answer.message.clone())
            })
            .collect()
    }

    /// Sends the recorded client side to `server` in memory, in order, each session on a
    /// connection of its own ([`Cassette::sessions`]), and returns the answers that differ from
    /// the recorded ones: empty when the server still answers as recorded.
    pub async fn verify(&self, server: Server) -> Vec<CassetteDifference> {
        let mut differences = Vec::new();
        for session in self.sessions() {
            differences.extend(session.verify_one_session(server.clone()).await);
        }
        differences
    }

    async fn verify_one_session(&self, server: Server) -> Vec<CassetteDifference> {
        let client = InMemoryClient::connect(server);
        let answers: std::sync::Mutex<std::collections::HashMap<String, Vec<Value>>> = std::sync::Mutex::default();
        let recorded_answers: std::collections::HashMap<String, Vec<Value>> =
            ["elicitation/create", "sampling/createMessage", "roots/list", "ping"]
                .iter()
                .map(|method| ((*method).to_owned(), self.answers_to(method)))
                .collect();
        *answers.lock().unwrap_or_else(std::sync::PoisonError::into_inner) = recorded_answers;
        let answers = std::sync::Arc::new(answers);
        let responder = answers.clone();
        client.on_request(move |request| {
            let mut queued = responder.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
            let next = queued.get_mut(request.method()).filter(|left| !left.is_empty()).map(|left| left.remove(0));
            match next {
                Some(answer) if answer.get("result").is_some() => Ok(answer["result"].clone()),
                Some(answer) => Err(ErrorObject::from_json_value(answer["error"].clone()).unwrap_or_else(|_| {
                    ErrorObject::new(wharf_protocol::ErrorCode::INTERNAL_ERROR, "a recorded error")
                })),
                None => Err(ErrorObject::new(wharf_protocol::ErrorCode::METHOD_NOT_FOUND, "not in the cassette")),
            }
        });
        let mut differences = Vec::new();
        let mut live_state: Option<Value> = None;
        for (at, entry) in self.entries.iter().enumerate() {
            if entry.from != CassetteSide::Client || entry.is_answer() {
                continue;
            }
            let method = entry.message.get("method").and_then(Value::as_str).unwrap_or_default();
            let mut params = entry.message.get("params").cloned().unwrap_or(Value::Null);
            if params.get("requestState").is_some()
                && let Some(state) = &live_state
            {
                params["requestState"] = state.clone();
            }
            if !entry.is_request() {
                client.notify(method, params).await;
                continue;
            }
            let id = match &entry.message["id"] {
                Value::String(id) => RequestId::string(id.clone()),
                other => RequestId::number(other.as_i64().unwrap_or(0)),
            };
            let now = match client.request_with_id(id, method, params).await {
                Ok(result) => {
                    if let Some(state) = result.get("requestState") {
                        live_state = Some(state.clone());
                    }
                    serde_json::json!({"result": result})
                }
                Err(error) => serde_json::json!({"error": error}),
            };
            let recorded = self.entries[at + 1..].iter().find(|later| {
                later.from == CassetteSide::Server && later.is_answer() && later.message["id"] == entry.message["id"]
            });
            let Some(recorded) = recorded else { continue };
            let mut before = normalized(&recorded.message);
            if let Value::Object(object) = &mut before {
                object.remove("id");
                object.remove("jsonrpc");
            }
            if let Some(detail) = first_difference("", &before, &normalized(&now)) {
                differences.push(CassetteDifference { request: describe_request(&entry.message), detail });
            }
        }
        let _ = client.close().await;
        differences
    }
}
