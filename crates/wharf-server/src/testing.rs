//! An in-memory MCP client that drives a server without processes or ports, for tests.
//!
//! The client talks to the server through the same newline-delimited transport that stdio
//! uses, over an in-memory pipe, so tests exercise the real decoding, dispatch and encoding.

use std::collections::HashMap;
use std::sync::atomic::{AtomicI64, Ordering};
use std::sync::{Arc, Mutex, PoisonError};
use std::time::Duration;

use serde_json::{Value, json};
use tokio::io::{AsyncBufReadExt, AsyncWriteExt, BufReader, DuplexStream, WriteHalf};
use tokio::sync::{mpsc, oneshot};
use tokio::task::JoinHandle;
use wharf_protocol::{
    CallToolResult, ClientCapabilities, ErrorCode, ErrorObject, FromJson, InitializeResult, ListToolsResult,
    ProtocolVersion, RequestId, ServerRequest,
};

use crate::error::Error;
use crate::server::Server;
use crate::transport::connection::serve_connection;

type Pending = Arc<Mutex<HashMap<RequestId, oneshot::Sender<Result<Value, ErrorObject>>>>>;
type Responder = Arc<dyn Fn(&ServerRequest) -> Result<Value, ErrorObject> + Send + Sync>;

/// How the client frames its requests.
#[derive(Debug, Clone)]
enum Mode {
    /// Requests are sent as given.
    Raw,
    /// Every request carries 2026-07-28 `_meta`.
    Stateless { capabilities: Value, log_level: Option<String> },
}

/// A test client connected to a server in memory.
///
/// ```
/// # async fn demo(server: wharf_server::Server) {
/// use wharf_server::testing::InMemoryClient;
/// use wharf_protocol::{ClientCapabilities, ProtocolVersion};
///
/// let (client, _init) =
///     InMemoryClient::session(server, ProtocolVersion::V2025_11_25, ClientCapabilities::default()).await.unwrap();
/// let tools = client.list_tools().await.unwrap();
/// # }
/// ```
pub struct InMemoryClient {
    writer: Arc<tokio::sync::Mutex<Option<WriteHalf<DuplexStream>>>>,
    pending: Pending,
    notifications: tokio::sync::Mutex<mpsc::UnboundedReceiver<Value>>,
    received: Arc<Mutex<Vec<Value>>>,
    sent: Mutex<Vec<Value>>,
    responder: Arc<Mutex<Option<Responder>>>,
    next_id: AtomicI64,
    mode: Mode,
    server_task: Mutex<Option<JoinHandle<Result<(), Error>>>>,
    reader_task: JoinHandle<()>,
}

impl InMemoryClient {
    /// Connects without any handshake; requests are sent exactly as given.
    pub fn connect(server: Server) -> InMemoryClient {
        let (client_side, server_side) = tokio::io::duplex(1 << 20);
        let (server_read, server_write) = tokio::io::split(server_side);
        let server_task = tokio::spawn(serve_connection(server, server_read, server_write));
        let (client_read, client_write) = tokio::io::split(client_side);
        let pending: Pending = Arc::default();
        let received = Arc::new(Mutex::new(Vec::new()));
        let responder: Arc<Mutex<Option<Responder>>> = Arc::default();
        let (notify_tx, notify_rx) = mpsc::unbounded_channel();
        let (answer_tx, answer_rx) = mpsc::unbounded_channel::<Vec<u8>>();
        let reader_task = tokio::spawn(read_loop(
            BufReader::new(client_read),
            pending.clone(),
            received.clone(),
            responder.clone(),
            notify_tx,
            answer_tx,
        ));
        let client = InMemoryClient {
            writer: Arc::new(tokio::sync::Mutex::new(Some(client_write))),
            pending,
            notifications: tokio::sync::Mutex::new(notify_rx),
            received,
            sent: Mutex::new(Vec::new()),
            responder,
            next_id: AtomicI64::new(1),
            mode: Mode::Raw,
            server_task: Mutex::new(Some(server_task)),
            reader_task,
        };
        client.spawn_answer_writer(answer_rx);
        client
    }

    /// Connects and opens a 2025-era session with `initialize` and `notifications/initialized`.
    pub async fn session(
        server: Server,
        version: ProtocolVersion,
        capabilities: ClientCapabilities,
    ) -> Result<(InMemoryClient, InitializeResult), ErrorObject> {
        let client = InMemoryClient::connect(server);
        let result = client
            .request(
                "initialize",
                json!({
                    "protocolVersion": version.as_str(),
                    "capabilities": capabilities,
                    "clientInfo": {"name": "wharf-test-client", "version": "0.0.0"}
                }),
            )
            .await?;
        let result = InitializeResult::from_json_value(result)
            .map_err(|err| ErrorObject::new(ErrorCode::INTERNAL_ERROR, err.to_string()))?;
        client.notify("notifications/initialized", json!({})).await;
        Ok((client, result))
    }

    /// Connects and opens a session of the newest session revision (2025-11-25) with no
    /// optional capabilities: the usual start of a test.
    ///
    /// # Panics
    ///
    /// If the server refuses to initialize, which is a failed test anyway.
    pub async fn latest_session(server: Server) -> InMemoryClient {
        let opened =
            InMemoryClient::session(server, ProtocolVersion::LATEST_SESSION, ClientCapabilities::default()).await;
        opened.unwrap_or_else(|error| panic!("the server refused to initialize: {}", error.message)).0
    }

    /// Connects as a 2026-07-28 client: every request carries `_meta` with the protocol
    /// version, these capabilities and client info.
    pub fn stateless(server: Server, capabilities: ClientCapabilities) -> InMemoryClient {
        let mut client = InMemoryClient::connect(server);
        client.mode = Mode::Stateless {
            capabilities: serde_json::to_value(capabilities).unwrap_or_else(|_| json!({})),
            log_level: None,
        };
        client
    }

    /// On a stateless client, asks for log messages at `level` and above on every request.
    pub fn with_log_level(mut self, level: &str) -> InMemoryClient {
        if let Mode::Stateless { log_level, .. } = &mut self.mode {
            *log_level = Some(level.to_owned());
        }
        self
    }

    /// Answers server-to-client requests (sampling, elicitation, roots, ping) with `responder`.
    /// Without one, they are answered with `-32601`.
    pub fn on_request(&self, responder: impl Fn(&ServerRequest) -> Result<Value, ErrorObject> + Send + Sync + 'static) {
        *self.responder.lock().unwrap_or_else(PoisonError::into_inner) = Some(Arc::new(responder));
    }

    fn spawn_answer_writer(&self, mut answers: mpsc::UnboundedReceiver<Vec<u8>>) {
        // The reader task cannot write (the writer is shared with the request path), so it
        // hands answers to server requests over to this task.
        let writer = self.writer.clone();
        tokio::spawn(async move {
            while let Some(mut line) = answers.recv().await {
                line.push(b'\n');
                if let Some(writer) = writer.lock().await.as_mut() {
                    let _ = writer.write_all(&line).await;
                    let _ = writer.flush().await;
                }
            }
        });
    }

    /// Sends a request and waits for its result, or the error the server answered with.
    pub async fn request(&self, method: &str, params: Value) -> Result<Value, ErrorObject> {
        let id = RequestId::number(self.next_id.fetch_add(1, Ordering::Relaxed));
        self.request_with_id(id, method, params).await
    }

    /// Sends a request with a chosen id.
    pub async fn request_with_id(&self, id: RequestId, method: &str, params: Value) -> Result<Value, ErrorObject> {
        let answer = self.start_request(id, method, params).await;
        match tokio::time::timeout(Duration::from_secs(30), answer).await {
            Ok(Ok(result)) => result,
            Ok(Err(_)) => Err(ErrorObject::new(ErrorCode::INTERNAL_ERROR, "the connection closed")),
            Err(_) => Err(ErrorObject::new(ErrorCode::INTERNAL_ERROR, format!("no answer to `{method}` in 30 s"))),
        }
    }

    /// Sends a request and returns the receiver of its answer without waiting.
    pub async fn start_request(
        &self,
        id: RequestId,
        method: &str,
        params: Value,
    ) -> oneshot::Receiver<Result<Value, ErrorObject>> {
        let (sender, receiver) = oneshot::channel();
        self.pending.lock().unwrap_or_else(PoisonError::into_inner).insert(id.clone(), sender);
        let params = self.frame(params);
        self.send_json(&json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params})).await;
        receiver
    }

    fn frame(&self, params: Value) -> Value {
        let Mode::Stateless { capabilities, log_level } = &self.mode else { return params };
        let mut params = match params {
            Value::Object(object) => object,
            _ => serde_json::Map::new(),
        };
        let meta = params.entry("_meta").or_insert_with(|| json!({}));
        if let Value::Object(meta) = meta {
            meta.entry("io.modelcontextprotocol/protocolVersion").or_insert_with(|| json!("2026-07-28"));
            meta.entry("io.modelcontextprotocol/clientCapabilities").or_insert_with(|| capabilities.clone());
            meta.entry("io.modelcontextprotocol/clientInfo")
                .or_insert_with(|| json!({"name": "wharf-test-client", "version": "0.0.0"}));
            if let Some(level) = log_level {
                meta.entry("io.modelcontextprotocol/logLevel").or_insert_with(|| json!(level));
            }
        }
        Value::Object(params)
    }

    /// Sends a notification.
    pub async fn notify(&self, method: &str, params: Value) {
        self.send_json(&json!({"jsonrpc": "2.0", "method": method, "params": params})).await;
    }

    /// Sends one raw line, exactly as given (a newline is added).
    pub async fn send_line(&self, line: &str) {
        if let Ok(message) = serde_json::from_str::<Value>(line) {
            self.sent.lock().unwrap_or_else(PoisonError::into_inner).push(message);
        }
        let mut bytes = line.as_bytes().to_vec();
        bytes.push(b'\n');
        self.write(&bytes).await;
    }

    async fn send_json(&self, message: &Value) {
        self.sent.lock().unwrap_or_else(PoisonError::into_inner).push(message.clone());
        let mut bytes = serde_json::to_vec(message).unwrap_or_default();
        bytes.push(b'\n');
        self.write(&bytes).await;
    }

    async fn write(&self, bytes: &[u8]) {
        if let Some(writer) = self.writer.lock().await.as_mut() {
            let _ = writer.write_all(bytes).await;
            let _ = writer.flush().await;
        }
    }

    /// The next notification from the server, waiting up to `timeout`.
    pub async fn next_notification(&self, timeout: Duration) -> Option<Value> {
        let mut notifications = self.notifications.lock().await;
        tokio::time::timeout(timeout, notifications.recv()).await.ok().flatten()
    }

    /// Every message received from the server so far, in order.
    pub fn received(&self) -> Vec<Value> {
        self.received.lock().unwrap_or_else(PoisonError::into_inner).clone()
    }

    /// Every request and notification this client sent, in order, raw lines included when
    /// they are valid JSON.
    pub fn sent(&self) -> Vec<Value> {
        self.sent.lock().unwrap_or_else(PoisonError::into_inner).clone()
    }

    /// `tools/list`.
    pub async fn list_tools(&self) -> Result<ListToolsResult, ErrorObject> {
        typed(self.request("tools/list", json!({})).await?)
    }

    /// `tools/call`, answering the server's requests for input in either era (see
    /// [`InMemoryClient::request_resolving_input`]).
    pub async fn call_tool(&self, name: &str, arguments: Value) -> Result<CallToolResult, ErrorObject> {
        typed(self.request_resolving_input("tools/call", json!({"name": name, "arguments": arguments})).await?)
    }

    /// Sends a request and, while the server answers it with an `InputRequiredResult`
    /// (2026-07-28), answers each input request with the [`on_request`](Self::on_request)
    /// responder and sends the request again with `inputResponses` and `requestState`, as a
    /// client does. Returns the final result; at most 16 rounds.
    pub async fn request_resolving_input(&self, method: &str, params: Value) -> Result<Value, ErrorObject> {
        let mut params = params;
        for _ in 0..16 {
            let result = self.request(method, params.clone()).await?;
            if result.get("resultType").and_then(Value::as_str) != Some("input_required") {
                return Ok(result);
            }
            let mut responses = serde_json::Map::new();
            let requests = result.get("inputRequests").and_then(Value::as_object).cloned().unwrap_or_default();
            for (key, request) in requests {
                let input_method = request.get("method").and_then(Value::as_str).unwrap_or_default();
                let input_params = request.get("params").map(|params| {
                    serde_json::value::to_raw_value(params).unwrap_or_else(|err| unreachable!("a value encodes: {err}"))
                });
                let decoded = ServerRequest::decode(input_method, input_params.as_deref())
                    .map_err(|err| ErrorObject::new(ErrorCode::INVALID_PARAMS, err.to_string()))?;
                let responder = self.responder.lock().unwrap_or_else(PoisonError::into_inner).clone();
                let Some(responder) = responder else {
                    return Err(ErrorObject::new(
                        ErrorCode::INTERNAL_ERROR,
                        format!("the server asked for `{input_method}` and the test client has no responder"),
                    ));
                };
                responses.insert(key, responder(&decoded)?);
            }
            if let Value::Object(object) = &mut params {
                object.insert("inputResponses".to_owned(), Value::Object(responses));
                if let Some(state) = result.get("requestState") {
                    object.insert("requestState".to_owned(), state.clone());
                }
            }
        }
        Err(ErrorObject::new(ErrorCode::INTERNAL_ERROR, format!("`{method}` still asked for input after 16 rounds")))
    }

    /// Closes the client's side and waits for the server to finish.
    pub async fn close(&self) -> Result<(), Error> {
        if let Some(mut writer) = self.writer.lock().await.take() {
            let _ = writer.shutdown().await;
        }
        let task = self.server_task.lock().unwrap_or_else(PoisonError::into_inner).take();
        match task {
            Some(task) => task.await.map_err(|err| Error::protocol(err.to_string()))?,
            None => Ok(()),
        }
    }
}

impl Drop for InMemoryClient {
    fn drop(&mut self) {
        self.reader_task.abort();
    }
}

impl std::fmt::Debug for InMemoryClient {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("InMemoryClient").field("mode", &self.mode).finish_non_exhaustive()
    }
}

fn typed<T: FromJson>(value: Value) -> Result<T, ErrorObject> {
    T::from_json_value(value)
        .map_err(|err| ErrorObject::new(ErrorCode::INTERNAL_ERROR, format!("malformed result: {err}")))
}

async fn read_loop(
    mut reader: BufReader<tokio::io::ReadHalf<DuplexStream>>,
    pending: Pending,
    received: Arc<Mutex<Vec<Value>>>,
    responder: Arc<Mutex<Option<Responder>>>,
    notifications: mpsc::UnboundedSender<Value>,
    answers: mpsc::UnboundedSender<Vec<u8>>,
) {
    let mut line = String::new();
    loop {
        line.clear();
        match reader.read_line(&mut line).await {
            Ok(0) | Err(_) => break,
            Ok(_) => {}
        }
        let Ok(message) = serde_json::from_str::<Value>(line.trim_end()) else { continue };
        received.lock().unwrap_or_else(PoisonError::into_inner).push(message.clone());
        let messages = match message {
            Value::Array(items) => items,
            single => vec![single],
        };
        for message in messages {
            route(message, &pending, &responder, &notifications, &answers);
        }
    }
    pending.lock().unwrap_or_else(PoisonError::into_inner).clear();
}

fn route(
    message: Value,
    pending: &Pending,
    responder: &Arc<Mutex<Option<Responder>>>,
    notifications: &mpsc::UnboundedSender<Value>,
    answers: &mpsc::UnboundedSender<Vec<u8>>,
) {
    let id = message.get("id").and_then(|id| serde_json::from_value::<RequestId>(id.clone()).ok());
    match (message.get("method").and_then(Value::as_str), id) {
        (Some(method), Some(id)) => {
            let raw = message.get("params").and_then(|params| serde_json::value::to_raw_value(params).ok());
            let answer = match ServerRequest::decode(method, raw.as_deref()) {
                Ok(request) => match responder.lock().unwrap_or_else(PoisonError::into_inner).clone() {
                    Some(responder) => responder(&request),
                    None => Err(ErrorObject::new(ErrorCode::METHOD_NOT_FOUND, "the test client answers no requests")),
                },
                Err(error) => Err(error.to_error_object()),
            };
            let reply = match answer {
                Ok(result) => json!({"jsonrpc": "2.0", "id": id, "result": result}),
                Err(error) => json!({"jsonrpc": "2.0", "id": id, "error": error}),
            };
            let _ = answers.send(serde_json::to_vec(&reply).unwrap_or_default());
        }
        (Some(_), None) => {
            let _ = notifications.send(message);
        }
        (None, Some(id)) => {
            let sender = pending.lock().unwrap_or_else(PoisonError::into_inner).remove(&id);
            if let Some(sender) = sender {
                let answer = match (message.get("result"), message.get("error")) {
                    (Some(result), _) => Ok(result.clone()),
                    (None, Some(error)) => Err(ErrorObject::from_json_value(error.clone())
                        .unwrap_or_else(|_| ErrorObject::new(ErrorCode::INTERNAL_ERROR, "malformed error response"))),
                    (None, None) => Err(ErrorObject::new(ErrorCode::INTERNAL_ERROR, "empty response")),
                };
                let _ = sender.send(answer);
            }
        }
        (None, None) => {}
    }
}
