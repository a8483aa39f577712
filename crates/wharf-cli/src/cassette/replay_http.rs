//! `wharf replay CASSETTE --http HOST:PORT`: the cassette served over Streamable HTTP at `/mcp`
//! on a loopback address. A request is answered as `replayer.rs` finds it: in JSON when the server
//! sent nothing meanwhile, else as an SSE stream of what it sent (its questions waiting for the
//! client's answer, POSTed as in any 2025 session) and then the answer. An `initialize` opens a
//! session with a random id; a request naming a session not opened here gets 404. There is no
//! standalone stream (GET gets 405), as the spec allows.

use std::collections::{HashMap, HashSet};
use std::convert::Infallible;
use std::path::Path;
use std::pin::Pin;
use std::process::ExitCode;
use std::sync::{Arc, Mutex, PoisonError};
use std::task::{Context, Poll};
use std::time::Duration;

use bytes::Bytes;
use http::header::{ALLOW, CONTENT_TYPE};
use http::{HeaderValue, Method, Request, Response, StatusCode};
use http_body::{Body, Frame};
use http_body_util::{BodyExt, Either, Full, Limited};
use hyper::body::Incoming;
use serde_json::{Value, json};
use tokio::sync::{mpsc, oneshot};

use super::loopback::{declares_more_than, refusal, serve};
use super::replayer::Replayer;
use crate::server_args::runtime;

/// The largest request body read.
const MAX_REQUEST_BYTES: usize = 4 * 1024 * 1024;

/// How long a replayed question waits for the client's answer.
const ANSWER_WAIT: Duration = Duration::from_secs(60);

/// The path the cassette is served at.
const ENDPOINT: &str = "/mcp";

/// An SSE stream's events as a task sends them.
struct EventBody(mpsc::Receiver<Bytes>);

impl Body for EventBody {
    type Data = Bytes;
    type Error = Infallible;

    fn poll_frame(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Option<Result<Frame<Bytes>, Infallible>>> {
        self.0.poll_recv(cx).map(|event| event.map(|bytes| Ok(Frame::data(bytes))))
    }
}

type ReplayBody = Either<Full<Bytes>, EventBody>;

/// A replayed question: the session it was asked in, and its id as JSON text.
type QuestionKey = (Option<String>, String);

/// What every request shares.
struct Replaying {
    replayer: Mutex<Replayer>,
    sessions: Mutex<HashSet<String>>,
    /// Replayed questions waiting for the client's answer, by session and id.
    questions: Mutex<HashMap<QuestionKey, oneshot::Sender<()>>>,
}

fn respond(status: StatusCode, content_type: &'static str, body: String) -> Response<ReplayBody> {
    let mut response = Response::new(Either::Left(Full::new(Bytes::from(body))));
    *response.status_mut() = status;
    response.headers_mut().insert(CONTENT_TYPE, HeaderValue::from_static(content_type));
    response
}

fn json_error(status: StatusCode, code: i64, message: &str) -> Response<ReplayBody> {
    let error = json!({"jsonrpc": "2.0", "id": null, "error": {"code": code, "message": message}});
    respond(status, "application/json", error.to_string())
}

fn event(message: &Value) -> Bytes {
    Bytes::from(format!("event: message\ndata: {message}\n\n"))
}

fn new_session_id() -> Result<String, getrandom::Error> {
    let mut bytes = [0_u8; 16];
    getrandom::fill(&mut bytes)?;
    Ok(bytes.iter().map(|byte| format!("{byte:02x}")).collect())
}

impl Replaying {
    async fn handle(self: Arc<Self>, request: Request<Incoming>) -> Result<Response<ReplayBody>, Infallible> {
        if let Some(why) = refusal(request.headers()) {
            return Ok(respond(StatusCode::FORBIDDEN, "text/plain; charset=utf-8", format!("{why}\n")));
        }
        if request.uri().path() != ENDPOINT {
            return Ok(respond(
                StatusCode::NOT_FOUND,
                "text/plain; charset=utf-8",
                format!("the endpoint is {ENDPOINT}\n"),
            ));
        }
        let session = request.headers().get("mcp-session-id").and_then(|id| id.to_str().ok()).map(str::to_owned);
        if let Some(id) = &session
            && !self.sessions.lock().unwrap_or_else(PoisonError::into_inner).contains(id)
        {
            return Ok(json_error(StatusCode::NOT_FOUND, -32001, "Session not found"));
        }
        match *request.method() {
            Method::POST => Ok(self.post(session, request).await),
            Method::DELETE => {
                if let Some(id) = &session {
                    self.sessions.lock().unwrap_or_else(PoisonError::into_inner).remove(id);
                }
                Ok(respond(StatusCode::OK, "text/plain; charset=utf-8", String::new()))
            }
            _ => {
                let mut refused = respond(
                    StatusCode::METHOD_NOT_ALLOWED,
                    "text/plain; charset=utf-8",
                    "a replayed server has no standalone stream\n".to_owned(),
                );
                refused.headers_mut().insert(ALLOW, HeaderValue::from_static("POST, DELETE"));
                Ok(refused)
            }
        }
    }

    async fn post(self: Arc<Self>, session: Option<String>, request: Request<Incoming>) -> Response<ReplayBody> {
        let too_large = declares_more_than(request.headers(), MAX_REQUEST_BYTES);
        let body = if too_large {
            Err(())
        } else {
            Limited::new(request.into_body(), MAX_REQUEST_BYTES).collect().await.map_err(|_| ())
        };
        let Ok(body) = body else {
            return json_error(StatusCode::PAYLOAD_TOO_LARGE, -32600, "The request body is too large");
        };
        let Ok(message) = serde_json::from_slice::<Value>(&body.to_bytes()) else {
            return json_error(StatusCode::BAD_REQUEST, -32700, "Parse error");
        };
        let (has_id, method) = (message.get("id").is_some(), message.get("method").and_then(Value::as_str));
        match (has_id, method) {
            // The client's answer to a replayed question.
            (true, None) if message.get("result").is_some() || message.get("error").is_some() => {
                let key = (session, message["id"].to_string());
                if let Some(waiting) = self.questions.lock().unwrap_or_else(PoisonError::into_inner).remove(&key) {
                    let _ = waiting.send(());
                }
                respond(StatusCode::ACCEPTED, "text/plain; charset=utf-8", String::new())
            }
            (false, Some(_)) => respond(StatusCode::ACCEPTED, "text/plain; charset=utf-8", String::new()),
            (true, Some(method)) => {
                let opened = if method == "initialize" {
                    match new_session_id() {
                        Ok(id) => Some(id),
                        Err(_) => return json_error(StatusCode::INTERNAL_SERVER_ERROR, -32603, "No random session id"),
                    }
                } else {
                    None
                };
                let (meanwhile, answer) =
                    self.replayer.lock().unwrap_or_else(PoisonError::into_inner).respond(&message);
                let mut response = if meanwhile.is_empty() {
                    respond(StatusCode::OK, "application/json", answer.to_string())
                } else {
                    self.clone().stream(session.or_else(|| opened.clone()), meanwhile, answer)
                };
                if let Some(id) = opened {
                    self.sessions.lock().unwrap_or_else(PoisonError::into_inner).insert(id.clone());
                    if let Ok(value) = HeaderValue::from_str(&id) {
                        response.headers_mut().insert("mcp-session-id", value);
                    }
                }
                response
            }
            _ => json_error(StatusCode::BAD_REQUEST, -32600, "Invalid Request: not a JSON-RPC message"),
        }
    }

    /// Forgets the question `key` waits on, if any.
    fn forget(&self, key: Option<&QuestionKey>) {
        if let Some(key) = key {
            self.questions.lock().unwrap_or_else(PoisonError::into_inner).remove(key);
        }
    }

    /// An SSE response: `meanwhile`, each question waiting for its answer, then `answer`.
    fn stream(self: Arc<Self>, session: Option<String>, meanwhile: Vec<Value>, answer: Value) -> Response<ReplayBody> {
        let (events, receiver) = mpsc::channel(16);
        tokio::spawn(async move {
            for between in meanwhile {
                let key = between.get("id").map(|id| (session.clone(), id.to_string()));
                let answered = key.clone().map(|key| {
                    let (told, answered) = oneshot::channel();
                    self.questions.lock().unwrap_or_else(PoisonError::into_inner).insert(key, told);
                    answered
                });
                if events.send(event(&between)).await.is_err() {
                    self.forget(key.as_ref());
                    return;
                }
                if let Some(answered) = answered
                    && tokio::time::timeout(ANSWER_WAIT, answered).await.is_err()
                {
                    // Never answered: its slot goes, as an answered one's does.
                    self.forget(key.as_ref());
                }
            }
            let _ = events.send(event(&answer)).await;
        });
        let mut response = Response::new(Either::Right(EventBody(receiver)));
        response.headers_mut().insert(CONTENT_TYPE, HeaderValue::from_static("text/event-stream"));
        response.headers_mut().insert("cache-control", HeaderValue::from_static("no-cache"));
        response
    }
}

/// Serves `replayer` over Streamable HTTP on `address` until SIGINT or SIGTERM.
pub(crate) fn replay_http(replayer: Replayer, address: &str, cassette: &Path) -> ExitCode {
    let exchanges = replayer.len();
    let replaying =
        Arc::new(Replaying { replayer: Mutex::new(replayer), sessions: Mutex::default(), questions: Mutex::default() });
    let banner = |local: &str| {
        format!(
            "wharf replay: {exchanges} exchanges from {}, at http://{local}{ENDPOINT} (Streamable HTTP); Ctrl-C stops it",
            cassette.display()
        )
    };
    let handle = move |request| replaying.clone().handle(request);
    runtime().block_on(serve(address, "--http", "wharf replay", banner, handle))
}
