//! An audit log of requests through `tracing`: who called what, and how it ended.

use std::time::Instant;

use crate::layer::{Layer, LayerFuture, McpRequest, Next};

/// Logs one event per request at INFO under the target `wharf::audit` (a [`Layer`]): the method,
/// the target, the principal, the session (its id's first 8 characters: a session id is the
/// only credential of a session without authentication, so the log never holds one whole), the
/// outcome (`ok`, `tool_error`, `error` with its
/// code, or `cancelled` when the request ended without an answer) and the time taken in
/// microseconds. Argument values are never logged unless
/// [`Audit::with_arguments`] asks for them.
///
/// By default it logs the requests that name a tool, prompt or resource, and `initialize`;
/// [`Audit::every_request`] logs all of them. Route the target where audit records belong with
/// a `tracing` filter, for example `WHARF_LOG=info,wharf::audit=info`.
#[derive(Debug, Clone, Default)]
pub struct Audit {
    arguments: bool,
    every_request: bool,
}

impl Audit {
    /// An audit log of targeted requests, without argument values.
    pub fn new() -> Audit {
        Audit::default()
    }

    /// Also logs the arguments of tool calls, as the client wrote them. They may hold secrets
    /// or personal data: turn this on only where the log may keep them.
    pub fn with_arguments(mut self) -> Audit {
        self.arguments = true;
        self
    }

    /// Logs every request, lists and pings included.
    pub fn every_request(mut self) -> Audit {
        self.every_request = true;
        self
    }
}

/// How many characters of a session id the log keeps: enough to follow a session through the
/// log, too few to take it over (as the HTTP request log keeps).
const SESSION_ID_SHOWN: usize = 8;

/// What the audit record of one request says; logged once, when the request ends, or as
/// `cancelled` if its future is dropped first (the client cancelled, or a layer outside gave up).
struct Record {
    id: String,
    method: &'static str,
    target: Option<String>,
    principal: Option<String>,
    /// The first characters of the session's id.
    session: Option<String>,
    transport: crate::session::Transport,
    arguments: Option<String>,
    started: Instant,
    done: bool,
}

impl Record {
    fn log(&mut self, outcome: &'static str, code: Option<i64>) {
        self.done = true;
        let micros = u64::try_from(self.started.elapsed().as_micros()).unwrap_or(u64::MAX);
        tracing::info!(
            target: "wharf::audit",
            id = %self.id,
            method = self.method,
            target = self.target.as_deref(),
            principal = self.principal.as_deref(),
            session = self.session.as_deref(),
            transport = ?self.transport,
            outcome,
            code,
            micros,
            arguments = self.arguments.as_deref(),
            "mcp request"
        );
    }
}

impl Drop for Record {
    fn drop(&mut self) {
        if !self.done {
            self.log("cancelled", None);
        }
    }
}

impl Layer for Audit {
    fn reads_transport_data(&self) -> bool {
        false
    }

    fn handle<'a>(&'a self, request: McpRequest<'a>, next: Next<'a>) -> LayerFuture<'a> {
        let audited = self.every_request || request.subject().is_some() || request.method() == "initialize";
        if !audited || !tracing::enabled!(target: "wharf::audit", tracing::Level::INFO) {
            return next.run(request);
        }
        let method = request.method();
        let target = request.subject().map(|target| target.as_str().to_owned());
        let principal = request.principal().map(|principal| principal.as_str().to_owned());
        let session = request.session_id().map(|id| id.chars().take(SESSION_ID_SHOWN).collect());
        let transport = request.transport();
        let arguments = self.arguments.then(|| request.tool_arguments().map(str::to_owned)).flatten();
        let record = Record {
            id: request.id().to_string(),
            method,
            target,
            principal,
            session,
            transport,
            arguments,
            started: Instant::now(),
            done: false,
        };
        LayerFuture::new(async move {
            let mut record = record;
            let answer = next.run(request).await;
            let (outcome, code) = match answer.error_object() {
                Some(error) => ("error", Some(error.code())),
                None if answer.is_tool_error() => ("tool_error", None),
                None => ("ok", None),
            };
            record.log(outcome, code);
            answer
        })
    }
}
