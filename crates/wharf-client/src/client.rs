//! The client: a connection to one server in the era it speaks, sending requests framed for
//! that era (2026-07-28 `_meta` on every request, or a 2025 session), timing them out,
//! cancelling them when they are dropped, and answering a 2026-07-28 `InputRequiredResult`
//! with the handler's answers before retrying.

use std::collections::HashMap;
use std::sync::atomic::{AtomicI64, Ordering};
use std::sync::{Arc, Mutex, PoisonError};

use bytes::Bytes;
use serde_json::value::RawValue;
use serde_json::{Map, Value, json};
use tokio::io::{AsyncRead, AsyncWrite};
use tokio::sync::mpsc;
use wharf_protocol::{
    DiscoverResult, Era, ErrorCode, FromJson, Implementation, InitializeResult, InputRequiredResult, JsonRpc2,
    NotificationMessage, ProtocolVersion, RequestId, RequestMessage, ServerCapabilities, ServerNotification,
    ServerRequest,
};

use crate::decoded::decoded;
use crate::error::ClientError;
use crate::options::{ClientOptions, RequestOptions, Target};
use crate::request_meta::WithMeta;
use crate::router::{self, Router};
use crate::transport::stdio::{Process, StdioLink};
use crate::transport::{Deadline, Head, Link, Outgoing};

/// How many times one request is retried with answers to its input requests.
const MAX_INPUT_ROUNDS: usize = 16;

/// A connection to one MCP server.
///
/// Cloning is cheap and every clone shares the connection; requests may run concurrently.
///
/// ```no_run
/// # async fn demo() -> Result<(), wharf_client::ClientError> {
/// use wharf_client::{Client, Target};
///
/// let client = Client::connect(Target::command("wharf", ["serve"])).await?;
/// for tool in client.list_tools().await? {
///     println!("{}", tool.name);
/// }
/// let result = client.call_tool("echo", serde_json::json!({"message": "hi"})).await?;
/// client.close().await;
/// # Ok(()) }
/// ```
#[derive(Clone)]
pub struct Client {
    inner: Arc<Inner>,
}

struct Inner {
    connection: Connection,
    handshake: Handshake,
    /// The `Mcp-Param-*` headers of each tool seen in `tools/list` (2026-07-28 over HTTP).
    tool_headers: Mutex<HashMap<String, Vec<(String, String)>>>,
}

/// How the client and server talk.
#[derive(Debug, Clone)]
pub(crate) enum Handshake {
    /// A 2025 session opened with `initialize`.
    Session(ProtocolVersion, Box<InitializeResult>),
    /// 2026-07-28: every request carries the client's `_meta`.
    Stateless(ProtocolVersion, Box<DiscoverResult>),
}

/// The router of a new connection, and the bounded queue of what goes to the server (the
/// router answers the server's requests into it too).
fn router_for(options: &ClientOptions) -> (Arc<Router>, mpsc::Sender<Bytes>, mpsc::Receiver<Bytes>) {
    let (answers, outgoing) = mpsc::channel::<Bytes>(options.max_queued_messages);
    let router = Arc::new(Router::new(
        options.handler.clone(),
        options.observer.clone(),
        answers.clone(),
        options.max_server_requests,
    ));
    (router, answers, outgoing)
}

impl std::fmt::Debug for Client {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Client").field("protocol_version", &self.protocol_version()).finish_non_exhaustive()
    }
}

impl Client {
    /// Connects to `target` with the default options.
    pub async fn connect(target: Target) -> Result<Client, ClientError> {
        Client::connect_with(target, ClientOptions::default()).await
    }

    /// Connects to `target`: starts the program or reaches the URL, then speaks the newest
    /// revision the server supports (or the one the options name).
    pub async fn connect_with(target: Target, options: ClientOptions) -> Result<Client, ClientError> {
        let (router, answers, outgoing) = router_for(&options);
        let (link, is_http): (Box<dyn Link>, bool) = match &target {
            Target::Command { program, args } => {
                let process =
                    Process { env: &options.env, current_dir: options.current_dir.as_deref(), stderr: options.stderr };
                (Box::new(StdioLink::spawn(program, args, &process, router.clone(), answers, outgoing)?), false)
            }
            #[cfg(feature = "http")]
            Target::Url(url) => {
                let headers = header_map(&options.headers)?;
                let link = crate::transport::http::HttpLink::new(
                    url,
                    headers,
                    router.clone(),
                    outgoing,
                    #[cfg(feature = "oauth")]
                    options.oauth.clone(),
                )?;
                (Box::new(link), true)
            }
            #[cfg(not(feature = "http"))]
            Target::Url(_) => return Err(ClientError::connect("HTTP needs wharf-client's `http` feature")),
        };
        Client::start(link, is_http, router, options).await
    }

    /// Speaks MCP over newline-delimited JSON on `reader` and `writer`: a byte stream the
    /// caller opened to a server (a socket, a pipe, or one end of an in-memory
    /// `tokio::io::duplex` whose other end a server in the same process serves), in the
    /// newest revision the server supports. Closing the client closes `writer`.
    pub async fn connect_stream<R, W>(reader: R, writer: W, options: ClientOptions) -> Result<Client, ClientError>
    where
        R: AsyncRead + Unpin + Send + 'static,
        W: AsyncWrite + Unpin + Send + 'static,
    {
        let (router, answers, outgoing) = router_for(&options);
        let link = StdioLink::over_stream(reader, writer, router.clone(), answers, outgoing);
        Client::start(Box::new(link), false, router, options).await
    }

    /// Negotiates over `link` and makes the client.
    async fn start(
        link: Box<dyn Link>,
        is_http: bool,
        router: Arc<Router>,
        options: ClientOptions,
    ) -> Result<Client, ClientError> {
        let base_meta = base_meta(&options);
        let base_meta_encoded = base_meta
            .iter()
            .filter_map(|(key, value)| Some((key.clone(), serde_json::value::to_raw_value(value).ok()?)))
            .collect();
        let connection =
            Connection { link, router, options, base_meta, base_meta_encoded, next_id: AtomicI64::new(0), is_http };
        let handshake = match connection.negotiate().await {
            Ok(handshake) => handshake,
            Err(err) => {
                connection.link.close().await;
                return Err(err);
            }
        };
        let client = Client { inner: Arc::new(Inner { connection, handshake, tool_headers: Mutex::default() }) };
        if let (Handshake::Session(..), Some(level)) =
            (&client.inner.handshake, client.inner.connection.options.log_level)
            && client.capabilities().logging.is_some()
        {
            client.set_log_level(level).await?;
        }
        Ok(client)
    }

    /// The revision the client and server speak.
    pub fn protocol_version(&self) -> ProtocolVersion {
        match &self.inner.handshake {
            Handshake::Session(version, _) | Handshake::Stateless(version, _) => *version,
        }
    }

    /// The era the client and server talk in: stateless on 2026-07-28, where every request
    /// stands alone, a session before.
    pub fn era(&self) -> Era {
        match self.inner.handshake {
            Handshake::Session(..) => Era::Session,
            Handshake::Stateless(..) => Era::Stateless,
        }
    }

    /// What the server can do.
    pub fn capabilities(&self) -> &ServerCapabilities {
        match &self.inner.handshake {
            Handshake::Session(_, init) => &init.capabilities,
            Handshake::Stateless(_, discover) => &discover.capabilities,
        }
    }

    /// The server's name and version, as it gave them.
    pub fn server_info(&self) -> Option<Implementation> {
        match &self.inner.handshake {
            Handshake::Session(_, init) => Some(init.server_info.clone()),
            Handshake::Stateless(_, discover) => discover
                .meta
                .as_ref()
                .and_then(|meta| meta.get(wharf_protocol::META_SERVER_INFO))
                .and_then(|info| Implementation::from_json_value(info.clone()).ok()),
        }
    }

    /// How to use the server, for a model.
    pub fn instructions(&self) -> Option<&str> {
        match &self.inner.handshake {
            Handshake::Session(_, init) => init.instructions.as_deref(),
            Handshake::Stateless(_, discover) => discover.instructions.as_deref(),
        }
    }

    /// The result of `initialize`, in a 2025 session.
    pub fn initialize_result(&self) -> Option<&InitializeResult> {
        match &self.inner.handshake {
            Handshake::Session(_, init) => Some(init),
            Handshake::Stateless(..) => None,
        }
    }

    /// The result of `server/discover`, on 2026-07-28.
    pub fn discover_result(&self) -> Option<&DiscoverResult> {
        match &self.inner.handshake {
            Handshake::Stateless(_, discover) => Some(discover),
            Handshake::Session(..) => None,
        }
    }

    /// The server's notifications from now on (progress, log messages, list changes, resource
    /// updates, task changes); a new stream replaces the previous one.
    pub fn notifications(&self) -> Notifications {
        Notifications { receiver: self.inner.connection.router.subscribe() }
    }

    /// What the server did that is not MCP (the first hundred), and how many in all: lines
    /// that are not JSON-RPC, answers to requests never sent, invalid notifications.
    pub fn anomalies(&self) -> (Vec<String>, usize) {
        self.inner.connection.router.anomalies()
    }

    /// True once the connection has ended: the server process exited, or the client was
    /// closed. Every request fails from then on.
    pub fn is_closed(&self) -> bool {
        self.inner.connection.router.is_closed()
    }

    /// The id of the server process, when the client started it.
    pub fn server_pid(&self) -> Option<u32> {
        self.inner.connection.link.server_pid()
    }

    /// The end of the server process's stderr, when it is captured.
    pub fn server_stderr(&self) -> Option<String> {
        self.inner.connection.link.server_stderr()
    }

    /// Ends the connection: a 2025 HTTP session is deleted; a server process has its stdin
    /// closed and is killed if it has not exited two seconds later.
    pub async fn close(&self) {
        self.inner.connection.link.close().await;
    }

    /// Sends a request and returns its raw result, or the error the server answered with. The
    /// request is framed for the era: on 2026-07-28 its `_meta` names the revision, the
    /// client's capabilities and info.
    pub async fn request(&self, method: &str, params: Value) -> Result<Value, ClientError> {
        let raw = self.request_raw(method, &params, &RequestOptions::default()).await?;
        decoded::<Value>(&raw)
    }

    /// Like [`Client::request`], with options, answering `InputRequiredResult`s.
    pub async fn request_with(
        &self,
        method: &str,
        params: Value,
        options: &RequestOptions,
    ) -> Result<Value, ClientError> {
        let raw = self.request_resolving(method, &params, options).await?;
        decoded::<Value>(&raw)
    }

    /// Like [`Client::request_with`], the result left as the server wrote it: for a caller
    /// that decodes it to its own type (or passes it on) without building a `Value` first. The
    /// params are borrowed: a caller that sends them again (another round) keeps them.
    pub async fn request_raw_with(
        &self,
        method: &str,
        params: &Value,
        options: &RequestOptions,
    ) -> Result<Box<RawValue>, ClientError> {
        self.request_resolving(method, params, options).await
    }

    /// Sends a notification.
    pub async fn notify(&self, method: &str, params: Value) -> Result<(), ClientError> {
        let params = if params.is_null() { None } else { Some(params) };
        let body = serde_json::to_vec(&NotificationMessage { jsonrpc: JsonRpc2, method, params })
            .map_err(|err| ClientError::invalid(err.to_string()))?;
        self.inner.connection.notify(Outgoing::notification(method, body.into())).await
    }

    /// Encodes a request once, framed for the era, to be sent many times with
    /// [`Client::send_prepared`]: what a load generator does to cost little per request.
    pub fn prepare(&self, method: &str, params: Value) -> Result<PreparedRequest, ClientError> {
        let headers = if self.inner.connection.is_http && self.era() == Era::Stateless && method == "tools/call" {
            self.param_headers(&params)
        } else {
            Vec::new()
        };
        self.inner.connection.sending().prepare(method, params, &self.inner.handshake, headers)
    }

    /// Sends a prepared request under a new id and returns its raw result. `InputRequiredResult`
    /// is not answered here: the result is returned as it is.
    pub async fn send_prepared(&self, prepared: &PreparedRequest) -> Result<Box<RawValue>, ClientError> {
        let sending = self.inner.connection.sending();
        let id = RequestId::number(sending.next_id.fetch_add(1, Ordering::Relaxed));
        let mut body = Vec::with_capacity(prepared.tail.len() + 40);
        body.extend_from_slice(br#"{"jsonrpc":"2.0","id":"#);
        body.extend_from_slice(itoa::Buffer::new().format(id.as_number().unwrap_or_default()).as_bytes());
        body.extend_from_slice(prepared.tail.as_bytes());
        let message = Outgoing { id: Some(id.clone()), head: prepared.head.clone(), body: body.into() };
        sending.exchange(id, message, &RequestOptions::default()).await
    }

    pub(crate) async fn request_raw(
        &self,
        method: &str,
        params: &Value,
        options: &RequestOptions,
    ) -> Result<Box<RawValue>, ClientError> {
        let era = &self.inner.handshake;
        let is_http = self.inner.connection.is_http;
        let sending = self.inner.connection.sending();
        let headers = if is_http && matches!(era, Handshake::Stateless(..)) && method == "tools/call" {
            self.param_headers(params)
        } else {
            Vec::new()
        };
        sending.send(method, params, options, Some(era), headers).await
    }

    /// Sends a request, answers the input requests of each `InputRequiredResult` with the
    /// handler and retries, until the result is complete.
    pub(crate) async fn request_resolving(
        &self,
        method: &str,
        params: &Value,
        options: &RequestOptions,
    ) -> Result<Box<RawValue>, ClientError> {
        if let Some(max_total) = options.progress_extends_to {
            return Box::pin(self.request_extended_by_progress(method, params, options, max_total)).await;
        }
        if options.returns_input_required {
            return self.request_raw(method, params, options).await;
        }
        // Copied only for a round after the first, which adds the answers to them.
        let mut params = std::borrow::Cow::Borrowed(params);
        for _ in 0..MAX_INPUT_ROUNDS {
            let raw = self.request_raw(method, &params, options).await?;
            if !raw.get().contains("\"input_required\"") {
                return Ok(raw);
            }
            let needed = match InputRequiredResult::from_json(raw.get()) {
                Ok(needed) if needed.result_type.0 == "input_required" => needed,
                _ => return Ok(raw),
            };
            let mut responses = Map::new();
            let handler = options.scope.handler.as_ref().unwrap_or(&self.inner.connection.options.handler);
            for (key, request) in needed.input_requests.unwrap_or_default() {
                // The handler sees the key, as a question of a Wharf server in a 2025 session
                // carries it: a gateway asks its own client under the same key.
                let request = ServerRequest::from(request.with_input_key(&key));
                let answer = router::answer(handler.as_ref(), request).await.map_err(ClientError::rpc_error)?;
                responses.insert(key, answer);
            }
            let object =
                params.to_mut().as_object_mut().ok_or_else(|| ClientError::invalid("params must be an object"))?;
            object.insert("inputResponses".to_owned(), Value::Object(responses));
            match needed.request_state {
                Some(state) => object.insert("requestState".to_owned(), Value::String(state)),
                None => object.remove("requestState"),
            };
        }
        Err(ClientError::invalid(format!("`{method}` still asked for input after {MAX_INPUT_ROUNDS} rounds")))
    }

    /// A request whose timeout counts from its last progress notification, given up on after
    /// `max_total` in all: the request is dropped (and so cancelled) when either passes.
    async fn request_extended_by_progress(
        &self,
        method: &str,
        params: &Value,
        options: &RequestOptions,
        max_total: std::time::Duration,
    ) -> Result<Box<RawValue>, ClientError> {
        let idle = options.timeout.unwrap_or(self.inner.connection.options.timeout);
        let (heard, progress) = tokio::sync::mpsc::unbounded_channel();
        let listener = options.progress.clone();
        let mut inner = options.clone();
        inner.progress = Some(heard);
        inner.progress_extends_to = None;
        inner.timeout = Some(max_total.max(idle));
        let request = self.request_resolving(method, params, &inner);
        crate::progress_deadline::extended_by_progress(method, idle, request, progress, listener).await
    }

    /// Remembers which arguments of each tool go into `Mcp-Param-*` headers, and takes out
    /// the tools whose `x-mcp-header` marks are invalid: a client must not call them.
    pub(crate) fn keep_valid_tools(&self, tools: &mut Vec<wharf_protocol::Tool>) {
        let mut known = self.inner.tool_headers.lock().unwrap_or_else(PoisonError::into_inner);
        tools.retain(|tool| match wharf_protocol::header_params(&tool.input_schema) {
            Ok(mirrored) => {
                let mirrored = mirrored.into_iter().map(|param| (param.property, param.header)).collect();
                known.insert(tool.name.clone(), mirrored);
                true
            }
            Err(why) => {
                self.inner
                    .connection
                    .router
                    .anomaly(format!("tool `{}` is left out: its x-mcp-header marks are invalid: {why}", tool.name));
                known.remove(&tool.name);
                false
            }
        });
    }

    fn param_headers(&self, params: &Value) -> Vec<(String, String)> {
        let Some(name) = params.get("name").and_then(Value::as_str) else { return Vec::new() };
        let known = self.inner.tool_headers.lock().unwrap_or_else(PoisonError::into_inner);
        let Some(mirrored) = known.get(name) else { return Vec::new() };
        let arguments = params.get("arguments");
        mirrored
            .iter()
            .filter_map(|(property, header)| {
                let value = match arguments?.get(property)? {
                    Value::String(text) => text.clone(),
                    Value::Number(number) => number.to_string(),
                    Value::Bool(flag) => flag.to_string(),
                    _ => return None,
                };
                Some((header.clone(), value))
            })
            .collect()
    }
}

/// The parts of a client that do not depend on its era, all it has while the era is chosen.
struct Connection {
    link: Box<dyn Link>,
    router: Arc<Router>,
    options: ClientOptions,
    /// The `_meta` members every 2026-07-28 request carries but the revision, built once.
    base_meta: Map<String, Value>,
    /// The same, each value encoded once, as requests are written.
    base_meta_encoded: Vec<(String, Box<RawValue>)>,
    next_id: AtomicI64,
    is_http: bool,
}

impl Connection {
    fn sending(&self) -> Sending<'_> {
        Sending {
            link: self.link.as_ref(),
            router: &self.router,
            options: &self.options,
            base_meta: &self.base_meta,
            base_meta_encoded: &self.base_meta_encoded,
            next_id: &self.next_id,
        }
    }

    /// Sends a notification, waiting at most the client's timeout for room to send it: a
    /// server that stops reading fills the queue.
    async fn notify(&self, message: Outgoing) -> Result<(), ClientError> {
        let deadline = Deadline::after(self.options.timeout);
        let sent = deadline.run(self.link.notify(message.clone())).await;
        sent.unwrap_or_else(|| Err(deadline.missed(&message)))
    }

    /// Chooses the era: `server/discover` first, and a 2025 session with `initialize` when the
    /// server does not know it; or the revision the options name.
    async fn negotiate(&self) -> Result<Handshake, ClientError> {
        match self.options.protocol_version {
            Some(version) if version.era() == Era::Stateless => self.discover(version, self.options.timeout).await,
            Some(version) => self.initialize(version).await,
            None => match self.probe().await? {
                Some(era) => Ok(era),
                None => self.initialize(ProtocolVersion::LATEST_SESSION).await,
            },
        }
    }

    /// `Some` era when the server answers `server/discover` as a 2026-07-28 server does; `None`
    /// when it is a 2025 server (any other answer, or none in time).
    async fn probe(&self) -> Result<Option<Handshake>, ClientError> {
        match self.discover(ProtocolVersion::LATEST, self.options.probe_timeout).await {
            Ok(era) => Ok(Some(era)),
            Err(err)
                if matches!(
                    err.kind(),
                    crate::ErrorKind::Connect | crate::ErrorKind::AuthRequired | crate::ErrorKind::Closed
                ) =>
            {
                Err(err)
            }
            Err(_) => Ok(None),
        }
    }

    /// `server/discover` at `version`; when the server answers that it does not support it
    /// (`-32022`) but names a 2026-era revision this client speaks, once more at that one.
    async fn discover(&self, version: ProtocolVersion, timeout: std::time::Duration) -> Result<Handshake, ClientError> {
        let options = RequestOptions::default().timeout(timeout);
        let mut version = version;
        let mut retried = false;
        loop {
            self.link.set_protocol_version(Some(version.as_str()));
            let stateless = Handshake::Stateless(version, Box::default());
            let answer =
                self.sending().send("server/discover", &json!({}), &options, Some(&stateless), Vec::new()).await;
            let err = match answer {
                Ok(raw) => {
                    let discover = decoded::<DiscoverResult>(&raw)?;
                    if !discover.supported_versions.iter().any(|supported| supported == version.as_str()) {
                        return Err(ClientError::invalid(format!(
                            "the server answered `server/discover` without `{version}` among its versions",
                            version = version.as_str()
                        )));
                    }
                    return Ok(Handshake::Stateless(version, Box::new(discover)));
                }
                Err(err) => err,
            };
            let supported = if err.code() == Some(ErrorCode::UNSUPPORTED_PROTOCOL_VERSION) {
                supported_versions(&err)
            } else {
                Vec::new()
            };
            match supported.into_iter().filter(|known| known.era() == Era::Stateless).max() {
                Some(named) if !retried => {
                    version = named;
                    retried = true;
                }
                _ => return Err(err),
            }
        }
    }

    async fn initialize(&self, version: ProtocolVersion) -> Result<Handshake, ClientError> {
        self.link.set_protocol_version(None);
        let params = json!({
            "protocolVersion": version.as_str(),
            "capabilities": self.options.declared_capabilities(),
            "clientInfo": self.options.client_info,
        });
        let raw = self.sending().send("initialize", &params, &RequestOptions::default(), None, Vec::new()).await?;
        let init = decoded::<InitializeResult>(&raw)?;
        let chosen = ProtocolVersion::parse(&init.protocol_version)
            .filter(|chosen| chosen.era() == Era::Session)
            .ok_or_else(|| {
                ClientError::invalid(format!(
                    "the server chose revision `{}`, which this client does not speak",
                    init.protocol_version
                ))
            })?;
        self.link.set_protocol_version(Some(chosen.as_str()));
        let initialized =
            NotificationMessage { jsonrpc: JsonRpc2, method: "notifications/initialized", params: None::<()> };
        let body = serde_json::to_vec(&initialized).map_err(|err| ClientError::invalid(err.to_string()))?;
        self.notify(Outgoing::notification("notifications/initialized", body.into())).await?;
        self.link.session_opened().await;
        Ok(Handshake::Session(chosen, Box::new(init)))
    }
}

/// The revisions a `-32022` error says the server supports, those this client knows.
fn supported_versions(error: &ClientError) -> Vec<ProtocolVersion> {
    let listed = error.rpc().and_then(|error| error.data.as_ref()).and_then(|data| data.get("supported"));
    listed
        .and_then(Value::as_array)
        .map(|list| list.iter().filter_map(Value::as_str).filter_map(ProtocolVersion::parse).collect())
        .unwrap_or_default()
}

/// What sending one request needs.
struct Sending<'a> {
    link: &'a dyn Link,
    router: &'a Router,
    options: &'a ClientOptions,
    base_meta: &'a Map<String, Value>,
    base_meta_encoded: &'a [(String, Box<RawValue>)],
    next_id: &'a AtomicI64,
}

impl Sending<'_> {
    /// Frames, sends and awaits one request; `era` is `None` while a session is being opened.
    async fn send(
        &self,
        method: &str,
        params: &Value,
        options: &RequestOptions,
        handshake: Option<&Handshake>,
        param_headers: Vec<(String, String)>,
    ) -> Result<Box<RawValue>, ClientError> {
        let id = RequestId::number(self.next_id.fetch_add(1, Ordering::Relaxed));
        let meta = self.meta(&id, options, handshake, false);
        if !meta.is_empty() && !params.is_object() {
            return Err(ClientError::invalid("params must be an object"));
        }
        if let Some(listener) = &options.progress {
            self.router.listen_progress(id.clone(), listener.clone());
        }
        if !options.scope.is_empty() {
            let mut scope = options.scope.clone();
            if method.starts_with("tasks/") {
                scope.task = params.get("taskId").and_then(Value::as_str).map(Into::into);
            }
            self.router.open_scope(id.clone(), scope);
        }
        let name = mcp_name(method, params);
        let stateless = matches!(handshake, Some(Handshake::Stateless(..)));
        // The client's own members, encoded once, go into every 2026-07-28 request's `_meta`.
        let base = if stateless { self.base_meta_encoded } else { &[] };
        let params = if params.as_object().is_some_and(Map::is_empty) && meta.is_empty() && !stateless {
            None
        } else {
            Some(WithMeta { params, meta: &meta, base })
        };
        // Room for a small request with the client's own members, written without growing.
        let mut body = Vec::with_capacity(512);
        wharf_protocol::encode_into(&mut body, &RequestMessage { jsonrpc: JsonRpc2, id: &id, method, params })
            .map_err(|err| ClientError::invalid(err.to_string()))?;
        let head = Arc::new(Head { method: method.to_owned(), name, param_headers });
        let message = Outgoing { id: Some(id.clone()), head, body: body.into() };
        self.exchange(id, message, options).await
    }

    /// Sends a framed request and waits for its answer, the request cancelled if it times out
    /// or the future is dropped.
    async fn exchange(
        &self,
        id: RequestId,
        message: Outgoing,
        options: &RequestOptions,
    ) -> Result<Box<RawValue>, ClientError> {
        let mut guard = CancelOnDrop { link: self.link, router: self.router, id: Some(id.clone()) };
        let deadline = Deadline::after(options.timeout.unwrap_or(self.options.timeout));
        let answer = self.link.request(message, deadline).await;
        if answer.as_ref().is_err_and(|err| err.kind() == crate::ErrorKind::Timeout) {
            // Given up on: the guard tells the server.
            self.router.forget(&id);
            return answer;
        }
        guard.id = None;
        if answer.is_err() || options.progress.is_some() || !options.scope.is_empty() {
            self.router.forget(&id);
        }
        answer
    }

    /// Frames a request once for many sends: all of it but the id.
    fn prepare(
        &self,
        method: &str,
        mut params: Value,
        handshake: &Handshake,
        param_headers: Vec<(String, String)>,
    ) -> Result<PreparedRequest, ClientError> {
        let meta = self.meta(&RequestId::number(0), &RequestOptions::default(), Some(handshake), true);
        if !meta.is_empty() {
            let object = params.as_object_mut().ok_or_else(|| ClientError::invalid("params must be an object"))?;
            object.insert("_meta".to_owned(), Value::Object(meta));
        }
        let name = mcp_name(method, &params);
        let method_text = serde_json::to_string(method).map_err(|err| ClientError::invalid(err.to_string()))?;
        let params_text = serde_json::to_string(&params).map_err(|err| ClientError::invalid(err.to_string()))?;
        let tail = format!(r#","method":{method_text},"params":{params_text}}}"#);
        let head = Arc::new(Head { method: method.to_owned(), name, param_headers });
        Ok(PreparedRequest { head, tail })
    }

    /// The `_meta` members of a request: its progress token and, on 2026-07-28, the client's
    /// revision, and `with_base`, its capabilities, info and log level.
    fn meta(
        &self,
        id: &RequestId,
        options: &RequestOptions,
        handshake: Option<&Handshake>,
        with_base: bool,
    ) -> Map<String, Value> {
        let mut meta = options.meta.clone().unwrap_or_default();
        if options.progress.is_some() {
            meta.insert("progressToken".to_owned(), json!(id));
        }
        if let Some(Handshake::Stateless(version, _)) = handshake {
            meta.insert(wharf_protocol::META_PROTOCOL_VERSION.to_owned(), json!(version.as_str()));
            // What the request's own `_meta` names wins: a gateway declares its client's
            // capabilities request by request.
            for (key, value) in self.base_meta.iter().filter(|_| with_base) {
                meta.entry(key.clone()).or_insert_with(|| value.clone());
            }
        }
        meta
    }
}

/// What `Mcp-Name` carries for `method` (2026-07-28): the tool or prompt name, the resource URI
/// or the task id.
fn mcp_name(method: &str, params: &Value) -> Option<String> {
    if !(matches!(method, "tools/call" | "prompts/get" | "resources/read") || method.starts_with("tasks/")) {
        return None;
    }
    ["name", "uri", "taskId"].iter().find_map(|key| params.get(*key).and_then(Value::as_str)).map(str::to_owned)
}

/// The client's capabilities, info and log level, as every 2026-07-28 request's `_meta` names
/// them.
fn base_meta(options: &ClientOptions) -> Map<String, Value> {
    let mut meta = Map::new();
    meta.insert(wharf_protocol::META_CLIENT_CAPABILITIES.to_owned(), json!(options.declared_capabilities()));
    meta.insert(wharf_protocol::META_CLIENT_INFO.to_owned(), json!(options.client_info));
    if let Some(level) = options.log_level {
        meta.insert(wharf_protocol::META_LOG_LEVEL.to_owned(), json!(level));
    }
    meta
}

/// A request encoded once: everything but its id (see [`Client::prepare`]).
#[derive(Debug, Clone)]
pub struct PreparedRequest {
    /// The method, and the 2026-07-28 `Mcp-Name` and `Mcp-Param-*` (over HTTP, when the tool
    /// was listed).
    head: Arc<Head>,
    /// What follows the id: `,"method":…,"params":…}`.
    tail: String,
}

/// Cancels a request whose future is dropped, or times out, before its answer, and forgets
/// its listeners.
struct CancelOnDrop<'a> {
    link: &'a dyn Link,
    router: &'a Router,
    id: Option<RequestId>,
}

impl Drop for CancelOnDrop<'_> {
    fn drop(&mut self) {
        if let Some(id) = self.id.take() {
            self.router.forget(&id);
            self.link.cancel(&id);
        }
    }
}

/// The server's notifications, in the order they arrived.
#[derive(Debug)]
pub struct Notifications {
    receiver: mpsc::Receiver<ServerNotification>,
}

impl Notifications {
    /// The next notification; `None` once the client is gone.
    pub async fn next(&mut self) -> Option<ServerNotification> {
        self.receiver.recv().await
    }

    /// A notification already received, without waiting.
    pub fn try_next(&mut self) -> Option<ServerNotification> {
        self.receiver.try_recv().ok()
    }
}

#[cfg(feature = "http")]
fn header_map(headers: &[(String, String)]) -> Result<http::HeaderMap, ClientError> {
    let mut map = http::HeaderMap::new();
    for (name, value) in headers {
        let name = http::header::HeaderName::from_bytes(name.as_bytes())
            .map_err(|_| ClientError::connect(format!("`{name}` is not a header name")))?;
        let value = http::HeaderValue::from_str(value)
            .map_err(|_| ClientError::connect(format!("the value of header `{name}` is not valid")))?;
        map.append(name, value);
    }
    Ok(map)
}
