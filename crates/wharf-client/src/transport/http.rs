//! Streamable HTTP: every message is a POST to the server's endpoint, answered with JSON or
//! with a stream of server-sent events that ends with the answer. A 2025 session also keeps
//! the `Mcp-Session-Id` the server gave, opens the GET stream for what the server sends
//! outside requests, resumes a cut stream with `Last-Event-ID`, and ends with DELETE.

use std::sync::{Arc, Mutex, PoisonError};
use std::time::Duration;
#[cfg(feature = "oauth")]
use std::time::Instant;

use bytes::Bytes;
use http::header::{ACCEPT, AUTHORIZATION, CONTENT_TYPE, HeaderValue, WWW_AUTHENTICATE};
use http::{HeaderMap, Method, Request, Response, StatusCode, Uri};
use http_body_util::{BodyExt, Full, Limited};
use hyper::body::Incoming;
use hyper_util::client::legacy::Client;
use hyper_util::rt::TokioExecutor;
use serde_json::value::RawValue;
use tokio::sync::{Semaphore, mpsc, oneshot};
use tokio::task::JoinHandle;
use wharf_protocol::{CancelledParams, Envelope, JsonRpc2, NotificationMessage, RequestId};

use crate::error::{ClientError, ErrorKind};
use crate::router::{Router, excerpt};
use crate::transport::connector::{Connector, connector};
use crate::transport::sse::{Decoder, Event};
use crate::transport::{BoxFuture, Deadline, Link, Outgoing};

/// How long an idle connection is kept for the next request.
const IDLE_CONNECTION_KEPT: std::time::Duration = std::time::Duration::from_secs(4);

/// The largest JSON answer read.
const MAX_JSON_BODY: usize = 64 * 1024 * 1024;

/// How often a cut stream is resumed in a row without receiving anything, before giving up.
const MAX_RESUMPTIONS: u32 = 5;

/// The wait before resuming a stream when the server named none.
const DEFAULT_RETRY: Duration = Duration::from_millis(500);

/// How long opening a session waits for the server to answer its GET stream.
const STANDALONE_WAIT: Duration = Duration::from_secs(5);

/// How many answers to the server's requests are POSTed at once; the others wait in the queue.
const ANSWERS_POSTED_AT_ONCE: usize = 4;

/// How many times one message is sent again after an authorization.
#[cfg(feature = "oauth")]
const MAX_AUTHORIZATIONS: u32 = 3;

/// The URL requests over a Unix socket name: the socket is the server's, whatever the host.
const UNIX_ENDPOINT: &str = "http://localhost/mcp";

/// The socket path of a `unix:PATH` target.
fn unix_socket(url: &str) -> Option<&str> {
    url.strip_prefix("unix:").filter(|path| !path.is_empty())
}

#[cfg(unix)]
fn unix_connector(path: &str) -> Result<Connector, ClientError> {
    Connector::unix(path)
}

#[cfg(not(unix))]
fn unix_connector(_: &str) -> Result<Connector, ClientError> {
    Err(ClientError::connect("unix: targets need a Unix system"))
}

const SESSION_HEADER: &str = "mcp-session-id";
const VERSION_HEADER: &str = "mcp-protocol-version";
const LAST_EVENT_HEADER: &str = "last-event-id";

/// The headers that authorize one request.
#[derive(Debug, Default)]
struct Credentials {
    authorization: Option<String>,
    dpop: Option<String>,
}

pub(crate) struct HttpLink {
    shared: Arc<Shared>,
    answering: JoinHandle<()>,
    standalone: Mutex<Option<JoinHandle<()>>>,
}

struct Shared {
    client: Client<Connector, Full<Bytes>>,
    url: Uri,
    headers: HeaderMap,
    session: Mutex<Option<HeaderValue>>,
    version: Mutex<Option<&'static str>>,
    router: Arc<Router>,
    #[cfg(feature = "oauth")]
    oauth: Option<Arc<crate::oauth::OAuthState>>,
}

impl HttpLink {
    /// A link to the endpoint at `url`, sending `headers` (authorization, custom ones) with
    /// every request; the router's answers to the server's questions arrive on `answers`.
    pub(crate) fn new(
        url: &str,
        headers: HeaderMap,
        router: Arc<Router>,
        answers: mpsc::Receiver<Bytes>,
        #[cfg(feature = "oauth")] oauth: Option<crate::oauth::OAuth>,
    ) -> Result<HttpLink, ClientError> {
        #[cfg(feature = "oauth")]
        let oauth = match oauth {
            Some(oauth) => Some(Arc::new(crate::oauth::OAuthState::new(oauth, url).map_err(ClientError::connect)?)),
            None => None,
        };
        // A Unix socket's endpoint is reached at /mcp, named `localhost` as a local server expects.
        let (url, connector) = match unix_socket(url) {
            Some(path) => (UNIX_ENDPOINT, unix_connector(path)?),
            None => (url, connector()?),
        };
        let url: Uri = url.parse().map_err(|err| ClientError::connect(format!("`{url}` is not a URL: {err}")))?;
        match url.scheme_str() {
            Some("http") => {}
            Some("https") if cfg!(feature = "tls") => {}
            Some("https") => return Err(ClientError::connect("https:// needs wharf-client's `tls` feature")),
            _ => return Err(ClientError::connect(format!("`{url}` is not an http:// or https:// URL"))),
        }
        let shared = Arc::new(Shared {
            // Idle connections are dropped before servers drop theirs (Wharf's after 10 s, Node's
            // after 5 s), so a request is rarely sent on a connection the server is closing.
            client: Client::builder(TokioExecutor::new()).pool_idle_timeout(IDLE_CONNECTION_KEPT).build(connector),
            url,
            headers,
            session: Mutex::default(),
            version: Mutex::default(),
            router,
            #[cfg(feature = "oauth")]
            oauth,
        });
        let answering = tokio::spawn(send_answers(shared.clone(), answers));
        Ok(HttpLink { shared, answering, standalone: Mutex::default() })
    }

    /// Opens the GET stream of a 2025 session, on which the server sends what belongs to no
    /// request; a server without one answers 405, and the client does without.
    /// Returns once the server answered the GET (or a few seconds passed), so that what the
    /// server sends on it right after is not missed.
    pub(crate) async fn open_standalone_stream(&self) {
        let shared = self.shared.clone();
        let (opened, answered) = oneshot::channel();
        let task = tokio::spawn(async move { shared.follow_standalone(opened).await });
        if let Some(previous) = lock(&self.standalone).replace(task) {
            previous.abort();
        }
        let _ = tokio::time::timeout(STANDALONE_WAIT, answered).await;
    }
}

impl Shared {
    fn request(&self, method: Method, body: Bytes) -> http::request::Builder {
        let mut request = Request::builder().method(method).uri(self.url.clone());
        if let Some(headers) = request.headers_mut() {
            headers.extend(self.headers.clone());
            headers.insert(ACCEPT, HeaderValue::from_static("application/json, text/event-stream"));
            if !body.is_empty() {
                headers.insert(CONTENT_TYPE, HeaderValue::from_static("application/json"));
            }
            if let Some(session) = lock(&self.session).clone() {
                headers.insert(SESSION_HEADER, session);
            }
            if let Some(version) = *lock(&self.version) {
                headers.insert(VERSION_HEADER, HeaderValue::from_static(version));
            }
        }
        request
    }

    /// Sends a request with the OAuth token, when the client authorizes with OAuth.
    async fn send(&self, request: http::request::Builder, body: Bytes) -> Result<Response<Incoming>, ClientError> {
        let method = request.method_ref().cloned().unwrap_or(Method::GET);
        let credentials = self.credentials(&method).await;
        self.send_as(request, body, &credentials).await
    }

    /// The `Authorization` header and DPoP proof that authorize a `method` request now.
    async fn credentials(&self, method: &Method) -> Credentials {
        #[cfg(feature = "oauth")]
        if let Some(oauth) = &self.oauth {
            let headers = Box::pin(oauth.headers(method.as_str())).await;
            return Credentials { authorization: headers.authorization, dpop: headers.dpop };
        }
        let _ = method;
        Credentials::default()
    }

    async fn send_as(
        &self,
        mut request: http::request::Builder,
        body: Bytes,
        credentials: &Credentials,
    ) -> Result<Response<Incoming>, ClientError> {
        if let Some(authorization) = &credentials.authorization {
            request = request.header(AUTHORIZATION, authorization);
        }
        if let Some(proof) = &credentials.dpop {
            request = request.header("dpop", proof);
        }
        let request = request.body(Full::new(body)).map_err(|err| ClientError::connect(err.to_string()))?;
        let response = self
            .client
            .request(request)
            .await
            .map_err(|err| ClientError::connect(format!("{}: {}", self.url, error_chain(&err))))?;
        if let Some(session) = response.headers().get(SESSION_HEADER) {
            let mut kept = lock(&self.session);
            if kept.is_none() {
                *kept = Some(session.clone());
            }
        }
        Ok(response)
    }

    /// POSTs a message, whose answer is awaited until `deadline` when it has one; with OAuth,
    /// a refusal (401, 403 `insufficient_scope`) is acted on and the message sent again, a few
    /// times at most.
    async fn post(
        &self,
        message: &Outgoing,
        deadline: Option<&mut Deadline>,
    ) -> Result<Response<Incoming>, ClientError> {
        // The rare paths are boxed, so that a plain request's future, moved and boxed with
        // every request, stays small: authorization, and reading a stream.
        #[cfg(feature = "oauth")]
        if let Some(oauth) = &self.oauth {
            return Box::pin(self.post_authorized(oauth, message, deadline)).await;
        }
        let credentials = self.credentials(&Method::POST).await;
        let sending = self.send_as(self.post_request(message), message.body.clone(), &credentials);
        within(deadline.as_deref(), message, sending).await
    }

    /// [`Shared::post`] with OAuth. An authorization is the person's time, not the server's:
    /// the deadline moves back by as long as it took.
    #[cfg(feature = "oauth")]
    async fn post_authorized(
        &self,
        oauth: &crate::oauth::OAuthState,
        message: &Outgoing,
        mut deadline: Option<&mut Deadline>,
    ) -> Result<Response<Incoming>, ClientError> {
        let mut authorizations = 0;
        loop {
            let credentials = self.credentials(&Method::POST).await;
            let sending = self.send_as(self.post_request(message), message.body.clone(), &credentials);
            let response = within(deadline.as_deref(), message, sending).await?;
            if !is_refusal(&response) || authorizations >= MAX_AUTHORIZATIONS {
                return Ok(response);
            }
            authorizations += 1;
            let status = response.status().as_u16();
            let header =
                |name: &str| response.headers().get(name).and_then(|value| value.to_str().ok()).map(str::to_owned);
            let (challenge, nonce) = (header(WWW_AUTHENTICATE.as_str()), header("dpop-nonce"));
            drop(response);
            let sent_with = credentials.authorization.as_deref();
            let began = Instant::now();
            let authorized = oauth.refused(status, challenge.as_deref(), nonce.as_deref(), sent_with).await;
            if let Some(deadline) = deadline.as_deref_mut() {
                deadline.extend(began.elapsed());
            }
            authorized.map_err(|why| {
                ClientError::new(ErrorKind::AuthRequired, format!("authorization failed: {why}"))
                    .with_http_status(status)
                    .with_www_authenticate(challenge)
            })?;
        }
    }

    fn post_request(&self, message: &Outgoing) -> http::request::Builder {
        let mut request = self.request(Method::POST, message.body.clone());
        if lock(&self.version).is_some_and(|version| version >= "2026-07-28") {
            let head = &message.head;
            if !head.method.is_empty() {
                request = request.header("mcp-method", &head.method);
            }
            if let Some(name) = &head.name {
                request = request.header("mcp-name", header_text(name));
            }
            for (name, value) in &head.param_headers {
                request = request.header(format!("mcp-param-{name}"), header_text(value));
            }
        }
        request
    }

    /// Reads the answer to request `id` from `response`.
    async fn answer(&self, id: &RequestId, response: Response<Incoming>) -> Result<Box<RawValue>, ClientError> {
        let status = response.status();
        if !status.is_success() {
            return Err(Box::pin(self.refusal(id, response)).await);
        }
        match content_type(response.headers()).as_str() {
            "text/event-stream" => Box::pin(self.read_stream(id, response.into_body(), None)).await,
            "application/json" => {
                let body = read_body(response.into_body()).await?;
                match Envelope::parse(&body) {
                    Ok(Envelope::Response { id: answered, result }) if &answered == id => Ok(result.to_owned()),
                    Ok(Envelope::Error { id: Some(answered), error }) if &answered == id => {
                        Err(ClientError::rpc_error(error))
                    }
                    Ok(other) => {
                        self.router.route(other, Some(id)).await;
                        Err(ClientError::invalid(format!("the JSON answer to request {id} was another message")))
                    }
                    Err(err) => Err(ClientError::invalid(format!(
                        "the answer to request {id} is not JSON-RPC ({}): {}",
                        err.error.message,
                        excerpt(&body)
                    ))),
                }
            }
            other => Err(ClientError::invalid(format!(
                "the server answered request {id} with {status} and content type `{other}`"
            ))
            .with_http_status(status.as_u16())),
        }
    }

    /// The error an unsuccessful answer stands for: the JSON-RPC error in its body when there
    /// is one, else its status.
    async fn refusal(&self, id: &RequestId, response: Response<Incoming>) -> ClientError {
        let status = response.status();
        let challenge =
            response.headers().get(WWW_AUTHENTICATE).and_then(|value| value.to_str().ok()).map(str::to_owned);
        let body = read_body(response.into_body()).await.unwrap_or_default();
        if status == StatusCode::UNAUTHORIZED
            || (status == StatusCode::FORBIDDEN
                && challenge.as_deref().is_some_and(|c| c.contains("insufficient_scope")))
        {
            return ClientError::new(
                ErrorKind::AuthRequired,
                format!("the server answered {status}: authorization needed"),
            )
            .with_http_status(status.as_u16())
            .with_www_authenticate(challenge);
        }
        let error = match Envelope::parse(&body) {
            Ok(Envelope::Error { id: answered, error }) if answered.as_ref().is_none_or(|answered| answered == id) => {
                ClientError::rpc_error(error)
            }
            _ => ClientError::new(ErrorKind::Http, format!("the server answered {status}: {}", excerpt(&body))),
        };
        if status == StatusCode::NOT_FOUND && lock(&self.session).is_some() {
            // The session is over for good, whatever the body says (a new one starts with
            // `initialize`): the client is closed, so that its owner connects again.
            *lock(&self.session) = None;
            self.router.close_all();
            let why = match error.rpc() {
                Some(error) => format!("the server ended the session (404: {})", error.message),
                None => "the server ended the session (404)".to_owned(),
            };
            return ClientError::closed(why).with_http_status(404);
        }
        error.with_http_status(status.as_u16()).with_www_authenticate(challenge)
    }

    /// Reads events until the answer to `id`, routing everything else; a stream cut before the
    /// answer is resumed with GET and `Last-Event-ID` when its events had ids.
    async fn read_stream(
        &self,
        id: &RequestId,
        mut body: Incoming,
        mut last_event: Option<String>,
    ) -> Result<Box<RawValue>, ClientError> {
        let mut retry = DEFAULT_RETRY;
        let mut resumptions = 0;
        loop {
            let mut decoder = Decoder::default();
            let mut received = false;
            while let Some(frame) = body.frame().await {
                let frame = match frame {
                    Ok(frame) => frame,
                    Err(_) => break,
                };
                let Some(chunk) = frame.data_ref() else { continue };
                let events = decoder.push(chunk).map_err(ClientError::invalid)?;
                for event in events {
                    received = true;
                    remember(&event, &mut last_event, &mut retry);
                    if let Some(answer) = self.event(id, &event).await {
                        return answer;
                    }
                }
            }
            if received {
                resumptions = 0;
            }
            let Some(from) = last_event.clone() else {
                return Err(ClientError::closed(format!("the stream ended before the answer to request {id}")));
            };
            resumptions += 1;
            if resumptions > MAX_RESUMPTIONS {
                return Err(ClientError::closed(format!(
                    "the stream of request {id} was resumed {MAX_RESUMPTIONS} times without an event"
                )));
            }
            tokio::time::sleep(retry).await;
            let request = self.request(Method::GET, Bytes::new()).header(LAST_EVENT_HEADER, &from);
            let response = self.send(request, Bytes::new()).await?;
            if !response.status().is_success() {
                return Err(Box::pin(self.refusal(id, response)).await);
            }
            body = response.into_body();
        }
    }

    /// Routes one event; `Some` when it is the answer to `id`.
    async fn event(&self, id: &RequestId, event: &Event) -> Option<Result<Box<RawValue>, ClientError>> {
        if !event.is_message() || event.data.trim().is_empty() {
            return None;
        }
        match Envelope::parse(event.data.as_bytes()) {
            Ok(Envelope::Response { id: answered, result }) if &answered == id => Some(Ok(result.to_owned())),
            Ok(Envelope::Error { id: Some(answered), error }) if &answered == id => {
                Some(Err(ClientError::rpc_error(error)))
            }
            Ok(other) => {
                self.router.route(other, Some(id)).await;
                None
            }
            Err(err) => {
                self.router.anomaly(format!(
                    "the server sent an event that is not JSON-RPC ({}): {}",
                    err.error.message,
                    excerpt(event.data.as_bytes())
                ));
                None
            }
        }
    }

    /// Follows the session's GET stream while the session lasts, reopening it when it ends.
    async fn follow_standalone(&self, opened: oneshot::Sender<()>) {
        let mut opened = Some(opened);
        let mut last_event: Option<String> = None;
        let mut retry = DEFAULT_RETRY;
        let mut empty_in_a_row = 0;
        while empty_in_a_row <= MAX_RESUMPTIONS {
            let mut request = self.request(Method::GET, Bytes::new());
            if let Some(from) = &last_event {
                request = request.header(LAST_EVENT_HEADER, from);
            }
            let response = self.send(request, Bytes::new()).await;
            if let Some(opened) = opened.take() {
                let _ = opened.send(());
            }
            let Ok(response) = response else { return };
            if !response.status().is_success() || content_type(response.headers()) != "text/event-stream" {
                tracing::debug!(target: "wharf_client", "no GET stream: the server answered {}", response.status());
                return;
            }
            let mut body = response.into_body();
            let mut decoder = Decoder::default();
            let mut received = false;
            while let Some(Ok(frame)) = body.frame().await {
                let Some(chunk) = frame.data_ref() else { continue };
                let Ok(events) = decoder.push(chunk) else { return };
                for event in events {
                    received = true;
                    remember(&event, &mut last_event, &mut retry);
                    if event.is_message() && !event.data.trim().is_empty() {
                        self.router.route_bytes(event.data.as_bytes()).await;
                    }
                }
            }
            empty_in_a_row = if received { 0 } else { empty_in_a_row + 1 };
            tokio::time::sleep(retry).await;
        }
    }
}

impl Link for HttpLink {
    fn request(&self, message: Outgoing, deadline: Deadline) -> BoxFuture<'_, Result<Box<RawValue>, ClientError>> {
        Box::pin(async move {
            let id = message.id.clone().ok_or_else(|| ClientError::invalid("a request needs an id"))?;
            let mut deadline = deadline;
            let response = self.shared.post(&message, Some(&mut deadline)).await?;
            within(Some(&deadline), &message, self.shared.answer(&id, response)).await
        })
    }

    fn notify(&self, message: Outgoing) -> BoxFuture<'_, Result<(), ClientError>> {
        Box::pin(async move {
            let response = self.shared.post(&message, None).await?;
            let status = response.status();
            if status.is_success() {
                return Ok(());
            }
            let body = read_body(response.into_body()).await.unwrap_or_default();
            Err(ClientError::new(
                ErrorKind::Http,
                format!("the server refused a notification with {status}: {}", excerpt(&body)),
            )
            .with_http_status(status.as_u16()))
        })
    }

    fn cancel(&self, id: &RequestId) {
        // On 2026-07-28 closing the response stream is the cancellation, and dropping the
        // request did that; a 2025 session is told.
        if lock(&self.shared.session).is_none() {
            return;
        }
        let params = CancelledParams { request_id: Some(id.clone()), reason: None, meta: None };
        let message =
            NotificationMessage { jsonrpc: JsonRpc2, method: "notifications/cancelled", params: Some(params) };
        let Ok(body) = serde_json::to_vec(&message) else { return };
        let shared = self.shared.clone();
        if let Ok(runtime) = tokio::runtime::Handle::try_current() {
            runtime.spawn(async move {
                let outgoing = Outgoing::notification("notifications/cancelled", Bytes::from(body));
                let _ = shared.post(&outgoing, None).await;
            });
        }
    }

    fn set_protocol_version(&self, version: Option<&'static str>) {
        *lock(&self.shared.version) = version;
    }

    fn session_opened(&self) -> BoxFuture<'_, ()> {
        Box::pin(self.open_standalone_stream())
    }

    fn close(&self) -> BoxFuture<'_, ()> {
        Box::pin(async move {
            if let Some(task) = lock(&self.standalone).take() {
                task.abort();
            }
            if lock(&self.shared.session).is_some() {
                let request = self.shared.request(Method::DELETE, Bytes::new());
                let _ = tokio::time::timeout(Duration::from_secs(5), self.shared.send(request, Bytes::new())).await;
                *lock(&self.shared.session) = None;
            }
            self.shared.router.close_all();
        })
    }
}

impl Drop for HttpLink {
    fn drop(&mut self) {
        self.answering.abort();
        if let Some(task) = lock(&self.standalone).take() {
            task.abort();
        }
    }
}

/// POSTs each answer to the server's questions as it comes, a few at once: while they are
/// all under way, the others wait in the router's bounded queue.
async fn send_answers(shared: Arc<Shared>, mut answers: mpsc::Receiver<Bytes>) {
    let posting = Arc::new(Semaphore::new(ANSWERS_POSTED_AT_ONCE));
    while let Some(body) = answers.recv().await {
        let Ok(permit) = posting.clone().acquire_owned().await else { return };
        let shared = shared.clone();
        tokio::spawn(async move {
            let outgoing = Outgoing::notification("", body);
            match shared.post(&outgoing, None).await {
                Ok(response) if response.status().is_success() => {}
                Ok(response) => {
                    shared.router.anomaly(format!("the server refused an answer with {}", response.status()))
                }
                Err(err) => shared.router.anomaly(format!("an answer could not be sent: {err}")),
            }
            drop(permit);
        });
    }
}

/// Runs `work`, a step of sending `message`, until `deadline` when there is one.
async fn within<T>(
    deadline: Option<&Deadline>,
    message: &Outgoing,
    work: impl Future<Output = Result<T, ClientError>>,
) -> Result<T, ClientError> {
    match deadline {
        Some(deadline) => deadline.run(work).await.unwrap_or_else(|| Err(deadline.missed(message))),
        None => work.await,
    }
}

/// A 401, or a 403 whose challenge asks for more scopes: what authorization can answer.
#[cfg(feature = "oauth")]
fn is_refusal(response: &Response<Incoming>) -> bool {
    let challenge = response.headers().get(WWW_AUTHENTICATE).and_then(|value| value.to_str().ok()).unwrap_or("");
    response.status() == StatusCode::UNAUTHORIZED
        || (response.status() == StatusCode::FORBIDDEN && challenge.contains("insufficient_scope"))
}

fn remember(event: &Event, last_event: &mut Option<String>, retry: &mut Duration) {
    if let Some(id) = &event.id {
        *last_event = Some(id.clone());
    }
    if let Some(millis) = event.retry {
        *retry = Duration::from_millis(millis.min(60_000));
    }
}

async fn read_body(body: Incoming) -> Result<Bytes, ClientError> {
    Limited::new(body, MAX_JSON_BODY)
        .collect()
        .await
        .map(|collected| collected.to_bytes())
        .map_err(|err| ClientError::closed(format!("the answer could not be read: {err}")))
}

fn content_type(headers: &HeaderMap) -> String {
    let value = headers.get(CONTENT_TYPE).and_then(|value| value.to_str().ok()).unwrap_or("");
    value.split(';').next().unwrap_or("").trim().to_ascii_lowercase()
}

/// A header value as 2026-07-28 sends it: as it is when it is printable ASCII without
/// surrounding spaces, else `=?base64?…?=`.
pub(crate) fn header_text(value: &str) -> String {
    let plain = !value.is_empty()
        && value.bytes().all(|byte| (0x20..0x7f).contains(&byte))
        && value.trim() == value
        && !(value.starts_with("=?base64?") && value.ends_with("?="));
    if plain || value.is_empty() {
        return value.to_owned();
    }
    use base64::Engine;
    format!("=?base64?{}?=", base64::engine::general_purpose::STANDARD.encode(value))
}

fn error_chain(error: &dyn std::error::Error) -> String {
    let mut text = error.to_string();
    let mut source = error.source();
    while let Some(cause) = source {
        text.push_str(": ");
        text.push_str(&cause.to_string());
        source = cause.source();
    }
    text
}

fn lock<T>(mutex: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    mutex.lock().unwrap_or_else(PoisonError::into_inner)
}
