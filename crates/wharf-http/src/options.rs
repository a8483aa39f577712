//! The knobs of the Streamable HTTP transport, with safe defaults.

use std::sync::Arc;
use std::time::Duration;

use super::auth::Authenticator;
use super::server_card::ServerCard;
use super::session_store::SessionStore;

/// Limits and protections of the Streamable HTTP transport.
///
/// The defaults are safe for a server on a developer's machine: only loopback `Host` and
/// `Origin` values are accepted, bodies are capped at 4 MiB and must arrive in time (headers and
/// body within 30 s each, the body at 1 KiB/s at least), sessions are bounded in number, in
/// all and per client, and expire when idle, and connections are bounded in all and per
/// address and closed when idle. A server reachable from elsewhere names its hosts with
/// [`HttpOptions::allowed_hosts`].
#[derive(Debug, Clone)]
pub struct HttpOptions {
    pub(crate) allowed_hosts: Option<Vec<String>>,
    pub(crate) allowed_origins: Option<Vec<String>>,
    pub(crate) max_body_bytes: usize,
    pub(crate) max_sessions: usize,
    pub(crate) max_sessions_per_client: usize,
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
    pub(crate) operator_endpoints: Vec<Arc<OperatorEndpoint>>,
    pub(crate) metrics_token: Option<MetricsToken>,
    pub(crate) auth: Option<AuthHook>,
    pub(crate) session_store: Option<SharedSessions>,
    // What one client can make the server hold: connections, and kept events.
    pub(crate) max_connections: usize,
    pub(crate) max_connections_per_address: usize,
    pub(crate) idle_timeout: Duration,
    pub(crate) event_store_total_bytes: usize,
    pub(crate) unix_allowed_uids: Option<Vec<u32>>,
    pub(crate) server_card: Option<ServerCard>,
}

/// The content type of the Prometheus text exposition format.
pub(crate) const PROMETHEUS_TEXT: &str = "text/plain; version=0.0.4; charset=utf-8";

/// A path for operators beside the MCP endpoint, answering GET with what `render` gives: the
/// metrics in the Prometheus text format, or the health as JSON.
pub(crate) struct OperatorEndpoint {
    pub(crate) path: String,
    pub(crate) content_type: &'static str,
    /// The body, and whether all is well (200) or not (503).
    pub(crate) render: Box<dyn Fn() -> (bool, String) + Send + Sync>,
}

impl std::fmt::Debug for OperatorEndpoint {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("OperatorEndpoint").field("path", &self.path).finish_non_exhaustive()
    }
}

/// The bearer token scrapers of the metrics endpoint send; never shown.
#[derive(Clone)]
pub(crate) struct MetricsToken(pub(crate) Arc<str>);

impl std::fmt::Debug for MetricsToken {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("MetricsToken(..)")
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
            max_sessions_per_client: 100,
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
            operator_endpoints: Vec::new(),
            metrics_token: None,
            auth: None,
            session_store: None,
            max_connections: 1000,
            max_connections_per_address: 200,
            idle_timeout: Duration::from_secs(10),
            event_store_total_bytes: 64 * 1024 * 1024,
            unix_allowed_uids: None,
            server_card: None,
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
    /// `wharf::otel::Telemetry::prometheus_text`). The same `Host` and `Origin` checks apply,
    /// and the same authentication: with [`HttpOptions::authenticate`], a scrape needs a token
    /// the authenticator accepts (401 with its challenge otherwise), unless
    /// [`HttpOptions::metrics_token`] names the scrapers' own. Off by default; only
    /// [`serve`](crate::serve) route it (an app that mounts
    /// [`McpService`](crate::McpService) routes its own).
    pub fn metrics_endpoint(
        mut self,
        path: impl Into<String>,
        render: impl Fn() -> String + Send + Sync + 'static,
    ) -> HttpOptions {
        let render = Box::new(move || (true, render()));
        let endpoint = OperatorEndpoint { path: path.into(), content_type: PROMETHEUS_TEXT, render };
        self.operator_endpoints.push(Arc::new(endpoint));
        self
    }

    /// Serves the server's health at `path` (`/health`), beside the MCP endpoint, for load
    /// balancers and operators: a GET is answered with the JSON `report` gives, with 200 when
    /// it says all is well and 503 otherwise (a gateway reports each of its mounts). The same
    /// checks and authentication apply as to the [metrics](HttpOptions::metrics_endpoint),
    /// whose token opens it too. Off by default; only [`serve`](crate::serve) routes it.
    pub fn health_endpoint(
        mut self,
        path: impl Into<String>,
        report: impl Fn() -> (bool, serde_json::Value) + Send + Sync + 'static,
    ) -> HttpOptions {
        let render = Box::new(move || {
            let (healthy, report) = report();
            (healthy, report.to_string())
        });
        let endpoint = OperatorEndpoint { path: path.into(), content_type: "application/json", render };
        self.operator_endpoints.push(Arc::new(endpoint));
        self
    }

    /// The bearer token scrapers of the [metrics endpoint](HttpOptions::metrics_endpoint) send
    /// (`Authorization: Bearer TOKEN`, Prometheus's `authorization` setting); it is then the
    /// only credential the endpoint accepts, with or without [`HttpOptions::authenticate`], and
    /// a request without it gets 401. Unset by default: the metrics need what the MCP endpoint
    /// needs (nothing, or a token the authenticator accepts).
    pub fn metrics_token(mut self, token: impl Into<String>) -> HttpOptions {
        self.metrics_token = Some(MetricsToken(Arc::from(token.into())));
        self
    }

    /// Keeps 2025 sessions in `store`, which every instance of the server shares, so that any
    /// instance serves any request of a session (the `wharf-redis` crate's store, or your own).
    /// Each request of a session then loads it from the store once; a session expires once no
    /// instance has heard from its client for the idle timeout, and `max_sessions` bounds the
    /// sessions of all instances together (the one heard from longest ago goes first) as well
    /// as the copies each instance holds, as `max_sessions_per_client` bounds each client's.
    /// Off by default: sessions live in the instance that opened them.
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

    /// The most 2025 sessions at once. When full, a new `initialize` evicts the session idle
    /// longest of the client holding the most sessions (so that one client cannot evict
    /// everyone else's), and with none idle it gets 503. Default 10,000.
    pub fn max_sessions(mut self, sessions: usize) -> HttpOptions {
        self.max_sessions = sessions.max(1);
        self
    }

    /// The most 2025 sessions one client may hold at once: one principal when requests are
    /// authenticated, else one network address (an IPv6 address by its /64), loopback
    /// included. A client at its quota that opens another session ends its own session idle
    /// longest; when all of its sessions are busy (a request running, a GET stream open), its
    /// `initialize` gets 429 with `Retry-After`, naming this limit. With a
    /// [`session_store`](HttpOptions::session_store), the store holds the quota for the whole
    /// fleet. Default 100.
    ///
    /// [`serve`](crate::serve) knows each connection's address; an app that mounts
    /// [`McpService`](crate::McpService) itself inserts the peer's `std::net::SocketAddr` into
    /// each request's extensions (without it, and without a principal, sessions are not
    /// counted per client). Behind a reverse proxy every client has the proxy's address:
    /// authenticate, or raise the quota.
    pub fn max_sessions_per_client(mut self, sessions: usize) -> HttpOptions {
        self.max_sessions_per_client = sessions.max(1);
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
    /// `Last-Event-ID`; the oldest are dropped first. Default 1 MiB. All sessions together
    /// keep at most [`event_store_total_bytes`](HttpOptions::event_store_total_bytes).
    pub fn event_store_bytes(mut self, bytes: usize) -> HttpOptions {
        self.event_store_bytes = bytes;
        self
    }

    /// How long requests in flight may take to finish once a graceful shutdown begins
    /// ([`Serve::with_graceful_shutdown`](crate::Serve::with_graceful_shutdown)); connections still busy then are cut.
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

    /// The endpoint's path when served with [`serve`](crate::serve). Default `/mcp`.
    pub fn path(mut self, path: impl Into<String>) -> HttpOptions {
        self.path = path.into();
        self
    }
}

/// What one client can make the server hold: connections, and the events kept for resuming.
impl HttpOptions {
    /// The most connections [`serve`](crate::serve) keep open at once.
    /// A connection past it is answered 503 (naming this limit) and closed without being read,
    /// and the server goes on serving the others. Keep it below the process's open-file limit
    /// (`ulimit -n`, often 1024), which every connection, file and socket shares: raise both
    /// together. An app that mounts [`McpService`](crate::McpService) bounds its own
    /// connections. Default 1,000.
    pub fn max_connections(mut self, connections: usize) -> HttpOptions {
        self.max_connections = connections.max(1);
        self
    }

    /// The most connections one client address may keep open at once (an IPv6 address counts
    /// by its /64, the block one host usually has; loopback is not exempt). Past it, that
    /// address's new connections are answered 503 and closed, while other addresses are
    /// still served. Behind a reverse proxy every connection comes from the proxy's address:
    /// raise this to [`max_connections`](HttpOptions::max_connections). Default 200.
    pub fn max_connections_per_address(mut self, connections: usize) -> HttpOptions {
        self.max_connections_per_address = connections.max(1);
        self
    }

    /// How long a connection may stay open with nothing to do: waiting for its first request,
    /// or a kept-alive connection for its next one (a response or stream being sent is not
    /// idle). It also bounds how long a request's head may take when it is shorter than
    /// [`header_read_timeout`](HttpOptions::header_read_timeout): both are hyper's timer for a
    /// head, which costs a request nothing more. Default 10 s.
    pub fn idle_timeout(mut self, timeout: Duration) -> HttpOptions {
        self.idle_timeout = timeout;
        self
    }

    /// How many bytes of events the built-in event store keeps for all sessions together,
    /// besides [`event_store_bytes`](HttpOptions::event_store_bytes) for each; past it the
    /// oldest events of any session go first, and resuming from one of those is answered as
    /// from any event no longer kept. Default 64 MiB.
    pub fn event_store_total_bytes(mut self, bytes: usize) -> HttpOptions {
        self.event_store_total_bytes = bytes;
        self
    }

    /// Lets the user `uid` in over a Unix socket ([`serve_unix`](crate::serve_unix)); once one
    /// is named, a peer of any other uid is answered 403 on every request. By default any user
    /// that can open the socket file (mode 0600: its owner) is let in.
    pub fn allow_unix_uid(mut self, uid: u32) -> HttpOptions {
        self.unix_allowed_uids.get_or_insert_with(Vec::new).push(uid);
        self
    }

    /// Publishes the server's Server Card (SEP-2127, a draft) at `<endpoint>/server-card` and
    /// `/.well-known/mcp/server-card.json`, and an AI Catalog naming it at
    /// `/.well-known/ai-catalog.json`: public documents, even when the endpoint authenticates,
    /// cacheable (a strong `ETag`, 304), open to every origin. Off by default.
    pub fn server_card(mut self, card: ServerCard) -> HttpOptions {
        self.server_card = Some(card);
        self
    }
}
