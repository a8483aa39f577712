//! Layers that watch: a recorder of what every request and message looked like, in order, and
//! a keeper of the session ends layers hear of.

use std::sync::{Arc, Mutex};
use std::time::Duration;

use wharf_protocol::{Era, ProtocolVersion};
use wharf_server::{Layer, LayerFuture, McpRequest, Next, OutboundMessage, SessionEnd, SessionEndReason, Transport};

/// Writes what it sees into a shared log, named so that the order of layers shows.
#[derive(Debug)]
pub struct Recorder {
    /// How its lines start.
    pub name: &'static str,
    /// Where it writes.
    pub log: Arc<Mutex<Vec<String>>>,
}

impl Recorder {
    fn push(&self, line: String) {
        self.log.lock().unwrap().push(line);
    }
}

impl Layer for Recorder {
    fn handle<'a>(&'a self, request: McpRequest<'a>, next: Next<'a>) -> LayerFuture<'a> {
        LayerFuture::new(async move {
            let target = request.subject().map(|target| format!("{target:?}")).unwrap_or_default();
            let version = request.protocol_version().map(|version| version.as_str()).unwrap_or("-");
            self.push(format!(
                "{} before {} {target} stateless={} version={version} session={} transport={:?}",
                self.name,
                request.method(),
                request.era() == Era::Stateless,
                request.session_id().is_some(),
                request.transport(),
            ));
            let answer = next.run(request).await;
            let outcome = match answer.error_object() {
                Some(error) => format!("error {}", error.code()),
                None if answer.is_tool_error() => "tool_error".to_owned(),
                None => "ok".to_owned(),
            };
            self.push(format!("{} after {outcome}", self.name));
            answer
        })
    }

    fn outbound(&self, message: &OutboundMessage<'_>) {
        let text = std::str::from_utf8(message.bytes()).unwrap();
        assert!(text.contains(message.method()), "{text}");
        self.push(format!("{} sent {:?} {} for {}", self.name, message.kind(), message.method(), message.request_id()));
    }
}

/// The lines written so far, taken out of the log.
pub fn recorded(log: &Arc<Mutex<Vec<String>>>) -> Vec<String> {
    std::mem::take(&mut *log.lock().unwrap())
}

/// What a layer heard of a session that ended: id, reason, revision, transport, duration.
pub type Ended = (String, SessionEndReason, ProtocolVersion, Transport, Duration);

/// Keeps what it hears of sessions that end.
#[derive(Clone, Default, Debug)]
pub struct SessionEnds(Arc<Mutex<Vec<Ended>>>);

impl SessionEnds {
    /// What it heard so far, taken out.
    pub fn take(&self) -> Vec<Ended> {
        std::mem::take(&mut *self.0.lock().unwrap())
    }
}

impl Layer for SessionEnds {
    fn handle<'a>(&'a self, request: McpRequest<'a>, next: Next<'a>) -> LayerFuture<'a> {
        next.run(request)
    }

    fn session_ended(&self, end: &SessionEnd<'_>) {
        let entry = (end.id().to_owned(), end.reason(), end.protocol_version(), end.transport(), end.duration());
        self.0.lock().unwrap().push(entry);
    }
}
