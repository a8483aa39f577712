//! What a handler sends the client while it works: progress, log messages, notifications and
//! requests, on the request's own stream (or the session's, once a 2025-11-25 request became a
//! task, marked as the task's).

use std::sync::PoisonError;
use std::time::Duration;

use serde::Serialize;
use serde_json::Value;
use wharf_protocol::{
    ElicitationCompleteParams, JsonRpc2, LoggingLevel, LoggingMessageParams, NotificationMessage, ProgressParams,
    ProtocolVersion, RequestMessage, ServerNotification, ServerRequest,
};

use super::RequestContext;
use crate::error::Error;
use crate::layer::{OutboundKind, OutboundMessage};
use crate::session::Outbound;
use crate::task::RELATED_TASK;

impl RequestContext {
    /// Reports progress. Does nothing unless the client sent a `progressToken`; values that do
    /// not increase are dropped, because the protocol requires progress to increase.
    pub async fn progress(&self, progress: f64, total: Option<f64>, message: Option<&str>) {
        let Some(token) = &self.inner.progress_token else { return };
        {
            let mut last = self.inner.last_progress.lock().unwrap_or_else(PoisonError::into_inner);
            if last.is_some_and(|last| progress <= last) {
                tracing::debug!(progress, "dropping progress that does not increase");
                return;
            }
            *last = Some(progress);
        }
        let params = ProgressParams {
            progress_token: token.clone(),
            progress,
            total,
            message: message.map(str::to_owned),
            meta: None,
        };
        self.notify(ServerNotification::Progress(params)).await;
    }

    /// Sends a log message to the client (`notifications/message`), if the client's level lets
    /// it through.
    pub async fn log(&self, level: LoggingLevel, logger: Option<&str>, data: impl Into<Value>) {
        if !self.logs_at(level) {
            return;
        }
        let params = LoggingMessageParams { level, logger: logger.map(str::to_owned), data: data.into(), meta: None };
        self.notify(ServerNotification::Message(params)).await;
    }

    /// Tells a 2025-11-25 client that the out-of-band flow of the URL elicitation
    /// `elicitation_id` finished (`notifications/elicitation/complete`), on the session rather
    /// than this request's stream, so it may come after the request ended. Returns false,
    /// sending nothing, on other revisions: on 2026-07-28 the client's retry is the signal.
    pub async fn complete_url_elicitation(&self, elicitation_id: &str) -> bool {
        if self.inner.version != ProtocolVersion::V2025_11_25 {
            return false;
        }
        let notification = ServerNotification::ElicitationComplete(ElicitationCompleteParams {
            elicitation_id: elicitation_id.to_owned(),
            meta: None,
        });
        let Ok(bytes) = self.encode_outgoing_notification(&notification) else { return false };
        self.observe(OutboundKind::Notification, notification.method(), &bytes);
        self.inner.session.outbound().send(bytes).await.is_ok()
    }

    /// Shows a message the handler sends to the server's layers.
    fn observe(&self, kind: OutboundKind, method: &str, bytes: &[u8]) {
        let layers = self.inner.server.layers();
        if layers.is_empty() {
            return;
        }
        let message = OutboundMessage { kind, method, request_id: &self.inner.id, bytes };
        for layer in layers {
            layer.outbound(&message);
        }
    }

    fn sink(&self) -> &Outbound {
        match &self.inner.sink {
            Some(sink) if self.inner.session_task.get().is_none() => sink,
            _ => self.inner.session.outbound(),
        }
    }

    /// Encodes a message the handler sends: a 2025-11-25 task's messages carry
    /// `_meta["io.modelcontextprotocol/related-task"]`, as that revision requires of every
    /// message about a task.
    fn encode_outgoing<T: Serialize>(&self, message: &T) -> Result<Vec<u8>, Error> {
        let encoded = match self.inner.session_task.get() {
            None => wharf_protocol::encode(message),
            Some(task) => {
                let message = related_to_task(message, &task.id).map_err(|err| Error::protocol(err.to_string()))?;
                wharf_protocol::encode(&message)
            }
        };
        encoded.map_err(|err| Error::protocol(err.to_string()))
    }

    fn encode_outgoing_notification(&self, notification: &ServerNotification) -> Result<Vec<u8>, Error> {
        self.encode_outgoing(&NotificationMessage {
            jsonrpc: JsonRpc2,
            method: notification.method(),
            params: Some(notification),
        })
    }

    pub(super) async fn send_request(
        &self,
        request: &ServerRequest,
        timeout: Duration,
    ) -> Result<Result<Value, wharf_protocol::ErrorObject>, Error> {
        let session = &self.inner.session;
        let (id, answer) = session.expect_answer();
        let message = RequestMessage { jsonrpc: JsonRpc2, id: &id, method: request.method(), params: Some(request) };
        let bytes = match self.encode_outgoing(&message) {
            Ok(bytes) => bytes,
            Err(err) => {
                session.forget_answer(&id);
                return Err(err);
            }
        };
        self.observe(OutboundKind::Request, request.method(), &bytes);
        if self.sink().send(bytes).await.is_err() {
            session.forget_answer(&id);
            return Err(Error::closed());
        }
        let outcome = tokio::time::timeout(timeout, answer).await;
        session.forget_answer(&id);
        match outcome {
            Ok(Ok(answer)) => Ok(answer),
            Ok(Err(_)) => Err(Error::closed()),
            Err(_) => Err(Error::timeout(format!("no answer to `{}` within {timeout:?}", request.method()))),
        }
    }

    /// Sends a notification on this request's stream. Failures mean the client went away, which
    /// the read loop notices on its own, so they are ignored here.
    pub(crate) async fn notify(&self, notification: ServerNotification) {
        match self.encode_outgoing_notification(&notification) {
            Ok(bytes) => {
                self.observe(OutboundKind::Notification, notification.method(), &bytes);
                let _ = self.sink().send(bytes).await;
            }
            Err(err) => tracing::warn!(%err, method = notification.method(), "a notification could not be encoded"),
        }
    }
}

/// `message` with `_meta["io.modelcontextprotocol/related-task"] = {taskId}` in its params
/// (made an object if it had none), keeping whatever `_meta` the params had.
fn related_to_task<T: Serialize>(message: &T, task_id: &str) -> Result<Value, serde_json::Error> {
    let mut message = serde_json::to_value(message)?;
    if let Value::Object(members) = &mut message {
        let params = members.entry("params").or_insert_with(|| Value::Object(Default::default()));
        if let Value::Object(params) = params {
            let meta = params.entry("_meta").or_insert_with(|| Value::Object(Default::default()));
            if let Value::Object(meta) = meta {
                meta.insert(RELATED_TASK.to_owned(), serde_json::json!({ "taskId": task_id }));
            }
        }
    }
    Ok(message)
}
