//! The cassette being written by `wharf record`: each message with when it passed, who sent it,
//! the revision it was sent in, its session, and over HTTP the exchange that carried it, secrets
//! redacted. Written a line at a time, so what passed before a proxy is killed is kept.

use std::collections::HashMap;
use std::io::Write;
use std::path::Path;
use std::sync::{Arc, Mutex, PoisonError};
use std::time::Instant;

use serde_json::Value;
use wharf::protocol::META_PROTOCOL_VERSION;

use super::{Entry, Redaction, Side, header};

/// What is known of a message beside itself, from the transport that carried it.
#[derive(Debug, Default, Clone)]
pub(crate) struct Carried {
    /// The session's label, over HTTP.
    pub(crate) session: Option<String>,
    /// The revision an HTTP request names in its `MCP-Protocol-Version` header.
    pub(crate) version_header: Option<String>,
    /// The HTTP exchange, redacted.
    pub(crate) http: Option<Value>,
}

/// The cassette file, and what the recording learned of each session's revision.
pub(crate) struct Tape {
    file: std::fs::File,
    started: Instant,
    redaction: Redaction,
    /// The revision each session negotiated (the key `None`: a stdio session).
    negotiated: HashMap<Option<String>, String>,
    /// The revision each client request named, by session and id, for its answer.
    asked_in: HashMap<(Option<String>, String), String>,
}

/// A tape written from several tasks.
pub(crate) type SharedTape = Arc<Mutex<Tape>>;

impl Tape {
    /// A new cassette at `path`, its header written.
    pub(crate) fn create(
        path: &Path,
        transport: &str,
        recorded: &[String],
        redaction: Redaction,
    ) -> Result<SharedTape, String> {
        let mut file = std::fs::File::create(path).map_err(|err| format!("{}: {err}", path.display()))?;
        writeln!(file, "{}", header(transport, recorded)).map_err(|err| format!("{}: {err}", path.display()))?;
        Ok(Arc::new(Mutex::new(Tape {
            file,
            started: Instant::now(),
            redaction,
            negotiated: HashMap::new(),
            asked_in: HashMap::new(),
        })))
    }

    /// Milliseconds since the recording began.
    pub(crate) fn now_ms(&self) -> u64 {
        u64::try_from(self.started.elapsed().as_millis()).unwrap_or(u64::MAX)
    }

    /// Writes `message`, sent by `from` at `at_ms`, secrets redacted.
    pub(crate) fn write(&mut self, from: Side, at_ms: u64, message: Value, carried: &Carried) {
        let era = self.era_of(from, &message, carried);
        let message = if message.is_null() { message } else { self.redaction.apply(message) };
        let entry = Entry { from, at_ms, message, era, session: carried.session.clone(), http: carried.http.clone() };
        let _ = self.file.write_all(format!("{}\n", entry.line()).as_bytes());
    }

    /// Writes the line `line` as it passed over stdio: a message, or a string when it is not JSON.
    pub(crate) fn write_line(&mut self, from: Side, line: &str) {
        let message = serde_json::from_str::<Value>(line).unwrap_or_else(|_| Value::from(line));
        let at_ms = self.now_ms();
        self.write(from, at_ms, message, &Carried::default());
    }

    /// The revision `message` was sent in: what a 2026-07-28 request names, else the HTTP
    /// header, else what its session negotiated (an `initialize` answer says it, and a request
    /// proposes one until then).
    fn era_of(&mut self, from: Side, message: &Value, carried: &Carried) -> Option<String> {
        let session = carried.session.clone();
        let id = message.get("id").map(Value::to_string);
        let named = message
            .pointer("/params/_meta")
            .and_then(|meta| meta.get(META_PROTOCOL_VERSION))
            .and_then(Value::as_str)
            .map(str::to_owned)
            .or_else(|| carried.version_header.clone());
        let is_request = message.get("method").is_some();
        if from == Side::Server && !is_request {
            let asked = id.as_ref().and_then(|id| self.asked_in.remove(&(session.clone(), id.clone())));
            if let Some(version) = message.pointer("/result/protocolVersion").and_then(Value::as_str) {
                self.negotiated.insert(session, version.to_owned());
                return Some(version.to_owned());
            }
            return asked.or(named).or_else(|| self.negotiated.get(&carried.session).cloned());
        }
        let era = named.or_else(|| self.negotiated.get(&session).cloned()).or_else(|| {
            (message.get("method") == Some(&Value::from("initialize")))
                .then(|| message.pointer("/params/protocolVersion").and_then(Value::as_str).map(str::to_owned))
                .flatten()
        });
        if from == Side::Client
            && is_request
            && let (Some(id), Some(era)) = (id, &era)
        {
            self.asked_in.insert((session, id), era.clone());
        }
        era
    }
}

/// Writes to a shared tape, whoever else holds it.
pub(crate) fn write(tape: &SharedTape, from: Side, at_ms: u64, message: Value, carried: &Carried) {
    tape.lock().unwrap_or_else(PoisonError::into_inner).write(from, at_ms, message, carried);
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn each_message_carries_the_revision_of_its_session_or_request() {
        let dir = std::env::temp_dir().join(format!("wharf-tape-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let path = dir.join("eras.cassette");
        let tape = Tape::create(&path, "http", &["x".to_owned()], Redaction::default()).unwrap();
        let one = Carried { session: Some("session-1".to_owned()), ..Carried::default() };
        let none = Carried::default();
        let initialize =
            json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {"protocolVersion": "2025-11-25"}});
        write(&tape, Side::Client, 0, initialize, &one);
        write(
            &tape,
            Side::Server,
            1,
            json!({"jsonrpc": "2.0", "id": 1, "result": {"protocolVersion": "2025-06-18"}}),
            &one,
        );
        write(&tape, Side::Client, 2, json!({"jsonrpc": "2.0", "id": 2, "method": "tools/list"}), &one);
        let stateless = json!({"jsonrpc": "2.0", "id": 2, "method": "tools/list",
            "params": {"_meta": {"io.modelcontextprotocol/protocolVersion": "2026-07-28"}}});
        write(&tape, Side::Client, 3, stateless, &none);
        write(&tape, Side::Server, 4, json!({"jsonrpc": "2.0", "id": 2, "result": {"tools": []}}), &none);
        write(&tape, Side::Server, 5, json!({"jsonrpc": "2.0", "id": 2, "result": {"tools": []}}), &one);
        let eras: Vec<(Option<String>, Option<String>)> = wharf::cassette::Cassette::read(&path)
            .unwrap()
            .entries
            .into_iter()
            .map(|entry| (entry.era, entry.session))
            .collect();
        let era = |era: &str, session: Option<&str>| (Some(era.to_owned()), session.map(str::to_owned));
        assert_eq!(
            eras,
            [
                era("2025-11-25", Some("session-1")),
                era("2025-06-18", Some("session-1")),
                era("2025-06-18", Some("session-1")),
                era("2026-07-28", None),
                era("2026-07-28", None),
                era("2025-06-18", Some("session-1")),
            ]
        );
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
