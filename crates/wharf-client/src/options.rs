//! How a client connects: to which server ([`Target`]), as whom, declaring what, with which
//! revision, and the options of one request ([`RequestOptions`]).

use std::sync::Arc;
use std::time::Duration;

use serde_json::value::RawValue;

use tokio::sync::mpsc;
use wharf_protocol::{
    ClientCapabilities, Implementation, JsonObject, LoggingLevel, LoggingMessageParams, ProgressParams, ProtocolVersion,
};

use crate::handler::{ClientHandler, NoHandler};
use crate::router::{NotificationObserver, Scope};
use crate::transport::stdio::StderrMode;

/// A server to connect to.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Target {
    /// A program the client starts, speaking MCP on its stdin and stdout.
    Command {
        /// The program.
        program: String,
        /// Its arguments.
        args: Vec<String>,
    },
    /// A Streamable HTTP endpoint (`http://` or, with the `tls` feature, `https://`), or
    /// `unix:PATH`: the endpoint `/mcp` on the Unix socket at PATH.
    Url(String),
}

impl Target {
    /// A program and its arguments: `["python3", "server.py"]`.
    pub fn command(program: impl Into<String>, args: impl IntoIterator<Item = impl Into<String>>) -> Target {
        Target::Command { program: program.into(), args: args.into_iter().map(Into::into).collect() }
    }

    /// An HTTP endpoint.
    pub fn url(url: impl Into<String>) -> Target {
        Target::Url(url.into())
    }

    /// The endpoint `/mcp` of a server on the Unix socket at `path` (`wharf serve --unix`,
    /// `wharf_http::serve_unix`).
    pub fn unix(path: impl AsRef<std::path::Path>) -> Target {
        Target::Url(format!("unix:{}", path.as_ref().display()))
    }
}

impl std::fmt::Display for Target {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Target::Command { program, args } if args.is_empty() => f.write_str(program),
            Target::Command { program, args } => write!(f, "{program} {}", args.join(" ")),
            Target::Url(url) => f.write_str(url),
        }
    }
}

/// What the client says of itself and how it behaves, for
/// [`Client::connect_with`](crate::Client::connect_with).
#[derive(Clone)]
pub struct ClientOptions {
    pub(crate) client_info: Implementation,
    pub(crate) handler: Arc<dyn ClientHandler>,
    pub(crate) capabilities: Option<ClientCapabilities>,
    pub(crate) protocol_version: Option<ProtocolVersion>,
    pub(crate) timeout: Duration,
    pub(crate) probe_timeout: Duration,
    pub(crate) headers: Vec<(String, String)>,
    pub(crate) stderr: StderrMode,
    pub(crate) env: Vec<(String, String)>,
    pub(crate) current_dir: Option<std::path::PathBuf>,
    pub(crate) log_level: Option<LoggingLevel>,
    pub(crate) observer: Option<NotificationObserver>,
    pub(crate) max_server_requests: usize,
    pub(crate) max_queued_messages: usize,
    #[cfg(feature = "oauth")]
    pub(crate) oauth: Option<crate::oauth::OAuth>,
}

impl Default for ClientOptions {
    fn default() -> ClientOptions {
        ClientOptions {
            client_info: Implementation {
                name: "wharf-client".to_owned(),
                version: env!("CARGO_PKG_VERSION").to_owned(),
                ..Implementation::default()
            },
            handler: Arc::new(NoHandler),
            capabilities: None,
            protocol_version: None,
            timeout: Duration::from_secs(60),
            probe_timeout: Duration::from_secs(10),
            headers: Vec::new(),
            stderr: StderrMode::default(),
            env: Vec::new(),
            current_dir: None,
            log_level: None,
            observer: None,
            max_server_requests: 16,
            max_queued_messages: 64,
            #[cfg(feature = "oauth")]
            oauth: None,
        }
    }
}

impl std::fmt::Debug for ClientOptions {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ClientOptions")
            .field("client_info", &self.client_info)
            .field("protocol_version", &self.protocol_version)
            .field("timeout", &self.timeout)
            .field("max_server_requests", &self.max_server_requests)
            .field("max_queued_messages", &self.max_queued_messages)
            .field("headers", &self.headers.iter().map(|(name, _)| name).collect::<Vec<_>>())
            .field("env", &self.env.iter().map(|(name, _)| name).collect::<Vec<_>>())
            .field("current_dir", &self.current_dir)
            .finish_non_exhaustive()
    }
}

impl ClientOptions {
    /// The client's name and version, sent to the server.
    pub fn client_info(mut self, name: impl Into<String>, version: impl Into<String>) -> ClientOptions {
        self.client_info.name = name.into();
        self.client_info.version = version.into();
        self
    }

    /// Answers the server's questions (elicitation, sampling, roots) with `handler`, and
    /// declares what it supports.
    pub fn handler(mut self, handler: impl ClientHandler) -> ClientOptions {
        self.handler = Arc::new(handler);
        self
    }

    /// Declares these capabilities instead of the handler's.
    pub fn capabilities(mut self, capabilities: ClientCapabilities) -> ClientOptions {
        self.capabilities = Some(capabilities);
        self
    }

    /// Speaks this revision, instead of the newest the server supports.
    pub fn protocol_version(mut self, version: ProtocolVersion) -> ClientOptions {
        self.protocol_version = Some(version);
        self
    }

    /// Calls `observer` with the method and raw params of every notification the server sends,
    /// before it is decoded (and whether or not it decodes): for tools that inspect the wire.
    pub fn observe_notifications(
        mut self,
        observer: impl Fn(&str, Option<&RawValue>) + Send + Sync + 'static,
    ) -> ClientOptions {
        self.observer = Some(Arc::new(observer));
        self
    }

    /// How long a request may wait for its answer (60 s unless set). The time a person takes
    /// to authorize the client (an OAuth login in the browser) does not count.
    pub fn timeout(mut self, timeout: Duration) -> ClientOptions {
        self.timeout = timeout;
        self
    }

    /// How long the first request waits before the server is taken for one that predates
    /// `server/discover` (10 s unless set; as with [`ClientOptions::timeout`], the time a
    /// person takes to authorize does not count).
    pub fn probe_timeout(mut self, timeout: Duration) -> ClientOptions {
        self.probe_timeout = timeout;
        self
    }

    /// How many of the server's requests (elicitation, sampling, roots, pings) the client
    /// handles at once (16 unless set; at least 1). One more is refused at once with `-32000`,
    /// a message that names this limit, so that a server that asks without end cannot make the
    /// client hold all its questions.
    pub fn max_server_requests(mut self, max: usize) -> ClientOptions {
        self.max_server_requests = max.max(1);
        self
    }

    /// How many messages may wait to be sent to the server (64 unless set; at least 1): over
    /// stdio every message, over HTTP the answers to the server's requests. When they are that
    /// many, senders wait, and the client stops reading what the server sends until the server
    /// takes what it was sent: a server that stops reading cannot make the client keep its
    /// answers without end.
    pub fn max_queued_messages(mut self, max: usize) -> ClientOptions {
        self.max_queued_messages = max.max(1);
        self
    }

    /// Sends this HTTP header with every request.
    pub fn header(mut self, name: impl Into<String>, value: impl Into<String>) -> ClientOptions {
        self.headers.push((name.into(), value.into()));
        self
    }

    /// Sends `Authorization: Bearer TOKEN` with every HTTP request.
    pub fn bearer(self, token: impl AsRef<str>) -> ClientOptions {
        let value = format!("Bearer {}", token.as_ref());
        self.header("authorization", value)
    }

    /// Sets `name` to `value` in the environment of a server program the client starts (the
    /// rest of the environment is this process's).
    pub fn env(mut self, name: impl Into<String>, value: impl Into<String>) -> ClientOptions {
        self.env.push((name.into(), value.into()));
        self
    }

    /// Starts a server program in `directory` instead of this process's working directory.
    pub fn current_dir(mut self, directory: impl Into<std::path::PathBuf>) -> ClientOptions {
        self.current_dir = Some(directory.into());
        self
    }

    /// What becomes of a server process's stderr (passed through unless set).
    pub fn stderr(mut self, mode: StderrMode) -> ClientOptions {
        self.stderr = mode;
        self
    }

    /// Asks for log messages at `level` and above: on 2026-07-28 with every request, in a
    /// 2025 session with `logging/setLevel` once connected.
    pub fn log_level(mut self, level: LoggingLevel) -> ClientOptions {
        self.log_level = Some(level);
        self
    }

    /// Authorizes with OAuth when an HTTP server asks (401), instead of failing.
    #[cfg(feature = "oauth")]
    pub fn oauth(mut self, oauth: crate::oauth::OAuth) -> ClientOptions {
        self.oauth = Some(oauth);
        self
    }

    pub(crate) fn declared_capabilities(&self) -> ClientCapabilities {
        self.capabilities.clone().unwrap_or_else(|| self.handler.capabilities())
    }
}

/// Options of one request.
#[derive(Clone, Default)]
pub struct RequestOptions {
    pub(crate) progress: Option<mpsc::UnboundedSender<ProgressParams>>,
    pub(crate) timeout: Option<Duration>,
    pub(crate) meta: Option<JsonObject>,
    pub(crate) scope: Scope,
    pub(crate) returns_input_required: bool,
    /// With progress, the longest the request may take in all: each progress notification
    /// starts the timeout again, up to this.
    pub(crate) progress_extends_to: Option<Duration>,
}

impl std::fmt::Debug for RequestOptions {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("RequestOptions")
            .field("progress", &self.progress.is_some())
            .field("timeout", &self.timeout)
            .field("meta", &self.meta)
            .field("handler", &self.scope.handler.is_some())
            .field("log", &self.scope.log.is_some())
            .field("owner", &self.scope.owner)
            .field("returns_input_required", &self.returns_input_required)
            .field("progress_extends_to", &self.progress_extends_to)
            .finish()
    }
}

impl RequestOptions {
    /// Asks for progress notifications, which `listener` receives.
    pub fn progress(mut self, listener: mpsc::UnboundedSender<ProgressParams>) -> RequestOptions {
        self.progress = Some(listener);
        self
    }

    /// Waits this long for the answer instead of the client's timeout.
    pub fn timeout(mut self, timeout: Duration) -> RequestOptions {
        self.timeout = Some(timeout);
        self
    }

    /// Lets progress extend the deadline: the timeout counts from the last progress
    /// notification rather than from the start, and the request is given up on anyway once
    /// `max_total` has passed (as the official SDKs' `resetTimeoutOnProgress` and
    /// `maxTotalTimeout`). Asks for progress when no listener was given.
    pub fn progress_extends_timeout(mut self, max_total: Duration) -> RequestOptions {
        self.progress_extends_to = Some(max_total);
        self
    }

    /// Adds these members to the request's `_meta`. On 2026-07-28 they win over the members the
    /// client adds to every request: a gateway declares, request by request, what its own
    /// client can do (`io.modelcontextprotocol/clientCapabilities`).
    pub fn meta(mut self, meta: JsonObject) -> RequestOptions {
        self.meta = Some(meta);
        self
    }

    /// The members [`RequestOptions::meta`] adds to the request's `_meta`.
    pub fn meta_members(&self) -> JsonObject {
        self.meta.clone().unwrap_or_default()
    }

    /// Answers the server's questions of this request with `handler` instead of the client's:
    /// the input requests of its 2026-07-28 rounds, and in a 2025 session the server's requests
    /// related to it. Over HTTP a request is related when it comes on this request's stream; on
    /// stdio, which does not say, when this is the only request in flight with a handler of its
    /// own, or all of those were made for one [`RequestOptions::owner`]. A question that cannot
    /// be placed goes to the client's handler.
    pub fn handler(mut self, handler: Arc<dyn ClientHandler>) -> RequestOptions {
        self.scope.handler = Some(handler);
        self
    }

    /// Sends the log messages (`notifications/message`) the server relates to this request to
    /// `listener` instead of the notification stream, placed as [`RequestOptions::handler`]
    /// places questions.
    pub fn log_messages(mut self, listener: mpsc::UnboundedSender<LoggingMessageParams>) -> RequestOptions {
        self.scope.log = Some(listener);
        self
    }

    /// Returns a 2026-07-28 `InputRequiredResult` as the request's result, for the caller to
    /// answer and retry with (a gateway passes the rounds on to its own client), instead of
    /// answering it with the handler and retrying.
    pub fn returns_input_required(mut self) -> RequestOptions {
        self.returns_input_required = true;
        self
    }

    /// Whom this request is made for (a user, a session of a gateway's client): where the
    /// transport does not say which request a question or log message is related to, requests
    /// of one owner may take each other's; requests without an owner, or of several, take
    /// none that could be another's.
    pub fn owner(mut self, owner: impl Into<Arc<str>>) -> RequestOptions {
        self.scope.owner = Some(owner.into());
        self
    }
}
