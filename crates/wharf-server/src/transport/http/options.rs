//! The knobs of the Streamable HTTP transport, with safe defaults.

use std::sync::Arc;
use std::time::Duration;

use super::auth::Authenticator;
use super::session_store::SessionStore;

/// Limits and protections of the Streamable HTTP transport.
///
/// The defaults are safe for a server on a developer's machine: only loopback `Host` and
/// `Origin` values are accepted, bodies are capped at 4 MiB and must arrive in time (headers and
/// body within 30 s each, the body at 1 KiB/s at least), and sessions are bounded in number and
/// expire when idle. A server reachable from elsewhere names its hosts with
/// [`HttpOptions::allowed_hosts`].
#[derive(Debug, Clone)]
pub struct HttpOptions {
    pub(crate) allowed_hosts: Option<Vec<String>>,
    pub(crate) allowed_origins: Option<Vec<String>>,
    pub(crate) max_body_bytes: usize,
    pub(crate) max_sessions: usize,
    pub(crate) session_idle_timeout: Duration,
    pub(crate) stream_buffer: usize,
    pub(crate) keep_alive: Duration,
    pub(crate) sse_retry: Duration,
    pub(crate) event_store_bytes: usize,
    pub(crate) header_read_timeout: Duration,
    pub(crate) body_read_timeout: Duration,
    pub(crate) min_body_rate: u64,
    pub(crate) cors: bool,
    pub(crate) always_stream: bool,
    pub(crate) path: String,
    pub(crate) shutdown_grace: Duration,
    pub(crate) metrics: Option<Arc<MetricsEndpoint>>,
    pub(crate) auth: Option<AuthHook>,
    pub(crate) session_store: Option<SharedSessions>,
}

/// A path that answers GET with metrics in the Prometheus text format.
pub(crate) struct MetricsEndpoint {
    pub(crate) path: String,
    pub(crate) render: Box<dyn Fn() -> String + Send + Sync>,
}

impl std::fmt::Debug for MetricsEndpoint {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("MetricsEndpoint").field("path", &self.path).finish_non_exhaustive()
    }
}

/// The authenticator an endpoint runs, shared by its clones.
#[derive(Clone)]
pub(crate) struct AuthHook(pub(crate) Arc<dyn Authenticator>);

impl std::fmt::Debug for AuthHook {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Authenticator").field("resource_metadata", &self.0.resource_metadata_url()).finish()
    }
}

/// The store an endpoint keeps its 2025 sessions in, shared by its clones.
#[derive(Clone, Debug)]
pub(crate) struct SharedSessions(pub(crate) Arc<dyn SessionStore>);

/// The hosts a server accepts by default: the loopback names, on any port.
pub(crate) const LOOPBACK_HOSTS: [&str; 4] = ["localhost", "127.0.0.1", "[::1]", "::1"];

impl Default for HttpOptions {
    fn default() -> HttpOptions {
        HttpOptions {
            allowed_hosts: Some(LOOPBACK_HOSTS.iter().map(|host| (*host).to_owned()).collect()),
            allowed_origins: Some(LOOPBACK_HOSTS.iter().map(|host| (*host).to_owned()).collect()),
            max_body_bytes: 4 * 1024 * 1024,
            max_sessions: 10_000,
            session_idle_timeout: Duration::from_secs(30 * 60),
            stream_buffer: 64,
            keep_alive: Duration::from_secs(15),
            sse_retry: Duration::from_millis(500),
            event_store_bytes: 1024 * 1024,
            header_read_timeout: Duration::from_secs(30),
            body_read_timeout: Duration::from_secs(30),
            min_body_rate: 1024,
            cors: false,
            always_stream: false,
            path: "/mcp".to_owned(),
            shutdown_grace: Duration::from_secs(10),
            metrics: None,
            auth: None,
            session_store: None,
        }
    }
}

impl HttpOptions {
    /// Authenticates every request with `authenticator` before anything reads it (the
    /// `wharf-auth` crate's OAuth resource server, or your own): a request it refuses gets its
    /// 401, 400 or 403 with a bearer challenge, and the principal it finds reaches handlers and
    /// owns the sessions it opens. The documents it publishes (the protected resource
    /// metadata) are served to anyone, at their own paths beside the endpoint.
    pub fn authenticate(mut self, authenticator: impl Authenticator) -> HttpOptions {
        self.auth = Some(AuthHook(Arc::new(authenticator)));
        self
    }

    /// Serves metrics for scrapers at `path` (`/metrics`), beside the MCP endpoint: a GET is
    /// answered with what `render` returns, as the Prometheus text format (for example
    /// `wharf::otel::Telemetry::prometheus_text`). The same `Host` and `Origin` checks apply.
    /// Off by default; only [`serve_http`](crate::serve_http) and its kin route it (an app that
    /// mounts [`McpService`](crate::McpService) routes its own).
    pub fn metrics_endpoint(
        mut self,
        path: impl Into<String>,
        render: impl Fn() -> String + Send + Sync + 'static,
    ) -> HttpOptions {
        self.metrics = Some(Arc::new(MetricsEndpoint { path: path.into(), render: Box::new(render) }));
        self
    }

    /// Keeps 2025 sessions in `store`, which every instance of the server shares, so that any
    /// instance serves any request of a session (the `wharf-redis` crate's store, or your own).
    /// Each request of a session then loads it from the store once; a session expires once no
    /// instance has heard from its client for the idle timeout, and `max_sessions` bounds the
    /// sessions of all instances together (the one heard from longest ago goes first) as well
    /// as the copies each instance holds. Off by default: sessions live in the instance that
    /// opened them.
    pub fn session_store(mut self, store: Arc<dyn SessionStore>) -> HttpOptions {
        self.session_store = Some(SharedSessions(store));
        self
    }

    /// The `Host` names (without port) the server answers to; anything else gets 403. The
    /// default is the loopback names, which protects a local server from DNS rebinding.
    pub fn allowed_hosts<I: IntoIterator<Item = S>, S: Into<String>>(mut self, hosts: I) -> HttpOptions {
        self.allowed_hosts = Some(hosts.into_iter().map(Into::into).collect());
        self
    }

    /// Adds a `Host` name to those the server answers to (the loopback names by default);
    /// for a server that is reached by another name.
    pub fn add_allowed_host(mut self, host: impl Into<String>) -> HttpOptions {
        if let Some(hosts) = &mut self.allowed_hosts {
            hosts.push(host.into());
        }
        self
    }

    /// True when only the loopback names are allowed (the default), so that a server bound to
    /// an address other machines reach would refuse every request they make.
    pub fn allows_only_loopback_hosts(&self) -> bool {
        self.allowed_hosts
            .as_ref()
            .is_some_and(|hosts| hosts.iter().all(|host| LOOPBACK_HOSTS.contains(&host.as_str())))
    }

    /// Accepts any `Host`. Only for servers behind a proxy that checks it.
    pub fn allow_any_host(mut self) -> HttpOptions {
        self.allowed_hosts = None;
        self
    }

    /// Adds a host name to those an `Origin` header may name (the loopback names by default).
    pub fn add_allowed_origin(mut self, host: impl Into<String>) -> HttpOptions {
        if let Some(hosts) = &mut self.allowed_origins {
            hosts.push(host.into());
        }
        self
    }

    /// The host names (without scheme or port) an `Origin` header may name; a request with any
    /// other `Origin` gets 403. Requests without `Origin` (clients that are not browsers) are
    /// accepted. The default is the loopback names.
    pub fn allowed_origins<I: IntoIterator<Item = S>, S: Into<String>>(mut self, hosts: I) -> HttpOptions {
        self.allowed_origins = Some(hosts.into_iter().map(Into::into).collect());
        self
    }

    /// Accepts any `Origin`.
    pub fn allow_any_origin(mut self) -> HttpOptions {
        self.allowed_origins = None;
        self
    }

    /// The largest request body, in bytes; larger bodies get 413. Default 4 MiB.
    pub fn max_body_bytes(mut self, bytes: usize) -> HttpOptions {
        self.max_body_bytes = bytes.max(1);
        self
    }

    /// The most 2025 sessions at once; when full, the session idle longest is evicted, and
    /// with none idle a new `initialize` gets 503. Default 10,000.
    pub fn max_sessions(mut self, sessions: usize) -> HttpOptions {
        self.max_sessions = sessions.max(1);
        self
    }

    /// How long a 2025 session may go without a request before it ends. Default 30 minutes.
    pub fn session_idle_timeout(mut self, timeout: Duration) -> HttpOptions {
        self.session_idle_timeout = timeout;
        self
    }

    /// How many messages a response stream buffers for a slow client before the handler
    /// waits. Default 64.
    pub fn stream_buffer(mut self, messages: usize) -> HttpOptions {
        self.stream_buffer = messages.max(1);
        self
    }

    /// How often a quiet SSE stream gets a comment line, so that proxies keep it open.
    /// Default 15 s.
    pub fn keep_alive(mut self, interval: Duration) -> HttpOptions {
        self.keep_alive = interval;
        self
    }

    /// The reconnection delay SSE streams announce with `retry`. Default 500 ms.
    pub fn sse_retry(mut self, delay: Duration) -> HttpOptions {
        self.sse_retry = delay;
        self
    }

    /// How many bytes of events each session keeps for clients that resume a stream with
    /// `Last-Event-ID`; the oldest are dropped first. Default 1 MiB.
    pub fn event_store_bytes(mut self, bytes: usize) -> HttpOptions {
        self.event_store_bytes = bytes;
        self
    }

    /// How long requests in flight may take to finish once a graceful shutdown begins
    /// ([`serve_http_until`](crate::serve_http_until)); connections still busy then are cut.
    /// Default 10 s.
    pub fn shutdown_grace(mut self, grace: Duration) -> HttpOptions {
        self.shutdown_grace = grace;
        self
    }

    /// How long a connection may take to send its request headers. Default 30 s.
    pub fn header_read_timeout(mut self, timeout: Duration) -> HttpOptions {
        self.header_read_timeout = timeout;
        self
    }

    /// The longest a request body may take to arrive, in all. A body still arriving then is
    /// answered 408 and the connection closed. Default 30 s.
    pub fn body_read_timeout(mut self, timeout: Duration) -> HttpOptions {
        self.body_read_timeout = timeout;
        self
    }

    /// The slowest a request body may arrive, in bytes per second on average since its headers,
    /// after a grace of 5 seconds: a client that trickles its body is answered 408 and the
    /// connection closed, long before the body's own deadline. Default 1024 (1 KiB/s); 0 turns
    /// the check off.
    pub fn min_body_rate(mut self, bytes_per_second: u64) -> HttpOptions {
        self.min_body_rate = bytes_per_second;
        self
    }

    /// Answers CORS preflight requests and exposes `Mcp-Session-Id` to browser clients whose
    /// `Origin` is allowed. Off by default.
    pub fn cors(mut self, enabled: bool) -> HttpOptions {
        self.cors = enabled;
        self
    }

    /// Answers every request of a 2025 session with an SSE stream when the client accepts one.
    /// By default a request is answered with `application/json` unless its handler sends
    /// notifications or requests before its result, which saves the client parsing a stream for
    /// most calls. 2026-07-28 requests always start that way, because their errors carry HTTP
    /// status codes that a stream, once begun, can no longer change.
    pub fn always_stream(mut self, enabled: bool) -> HttpOptions {
        self.always_stream = enabled;
        self
    }

    /// The endpoint's path when served with [`serve_http`](crate::serve_http). Default `/mcp`.
    pub fn path(mut self, path: impl Into<String>) -> HttpOptions {
        self.path = path.into();
        self
    }
}
