//! Streamable HTTP for Wharf servers: one endpoint that serves 2025 sessions and 2026-07-28
//! stateless requests, as a `tower::Service` ([`McpService`]) to mount in an existing hyper or
//! axum app, or served on a listener with [`serve_http`], [`serve_http_on`] and
//! [`serve_http_until`] (a graceful shutdown). [`HttpOptions`] holds the limits and protections,
//! all on by default: `Host` and `Origin` allowlists, bounded bodies, sessions, connections and
//! event buffers, random session ids.
//!
//! This crate reaches the engine (`wharf-server`) only through its transport contract,
//! `wharf_server::contract`, as the stdio transport does; `scripts/check-transport-contract`
//! keeps it so. HTTP-only request data (headers, extensions) reaches middleware as the request's
//! transport data, read with [`HttpRequest`].
//!
//! # Floors, from the bottom up
//! A file imports only from floors below its own.
//!
//! 1. **Pieces.** `auth.rs` ([`Authenticator`], the hook that authenticates every request, and
//!    the RFC 6750 challenges of its refusals), `body.rs` ([`McpBody`]), `sse.rs`, `headers.rs`,
//!    `request_parts.rs` ([`HttpParts`], [`HttpRequest`]), `events.rs` ([`EventStore`]; the
//!    built-in one bounded per session and in all, the oldest event of all going first),
//!    `session_store.rs` ([`SessionStore`]: 2025 sessions and their streams' events kept where
//!    every instance finds them; [`Relayed`], what one instance tells the others),
//!    `standalone.rs` (a session's standalone stream: its queue, held by one GET at a time; a
//!    new GET takes it over, keeping the stream's id and numbering), `connections.rs` (what
//!    `serve_http` keeps open: connections bounded in all and per address, one past either
//!    answered 503 unread; idle ones closed by hyper's timer for a request's head).
//! 2. **Sessions and options.** `options.rs` ([`HttpOptions`]), `session_record.rs` (a session
//!    as the store keeps it, and an instance's copy made or brought up to date from it),
//!    `sessions.rs` (random ids, idle expiry, the cap with oldest-idle eviction of the client
//!    holding the most, the quota per client, copies of shared sessions; every way a session
//!    leaves the table tells the server's layers).
//! 3. **Checks and replies.** `guard.rs` (the `Host` and `Origin` allowlists), `reply.rs`.
//! 4. **The endpoint's state.** `shared.rs` (what every request of an endpoint shares; the 2025
//!    session a request names; the closing signal that ends standalone streams and listeners in
//!    a graceful shutdown), `metrics.rs`.
//! 5. **Requests.** `respond.rs` (running a request into a JSON or SSE response), `streams.rs`
//!    (GET streams and resumption, DELETE).
//! 6. **Routing.** `post.rs` (POSTs routed by era and session).
//! 7. `lib.rs`: [`McpService`] and the `serve_http*` functions: the accept loop, and the
//!    graceful shutdown that lets each connection finish the request it is answering.

mod auth;
mod body;
mod connections;
mod events;
mod headers;
mod request_parts;
mod session_store;
mod sse;
mod standalone;

mod options;
mod session_record;
mod sessions;

mod guard;
mod reply;

mod metrics;
mod shared;

mod respond;
mod streams;

mod post;

use std::convert::Infallible;
use std::future::Future;
use std::net::{IpAddr, SocketAddr};
use std::pin::Pin;
use std::sync::Arc;
use std::task::{Context, Poll};

use http::{Method, Request, Response};
use tokio::net::TcpListener;

pub use auth::{AuthFuture, AuthRefusal, Authenticator};
pub use body::McpBody;
pub use events::{EventStore, MemoryEventStore};
pub use options::HttpOptions;
pub use request_parts::{HttpParts, HttpRequest};
pub use session_store::{Relayed, SessionChange, SessionLimits, SessionStore, SessionStoreError, StoredSession};

use connections::ConnectionLimits;
use sessions::SessionTable;
use shared::Shared;
use wharf_server::contract::{Error, Server, io_error};

/// The MCP endpoint as a `tower::Service`: mount it at a path of your own app, or serve it
/// with [`serve_http`].
///
/// It answers `POST` (messages of both eras), `GET` (the standalone stream of a 2025 session,
/// or resuming one with `Last-Event-ID`), `DELETE` (ending a 2025 session) and, when CORS is
/// on, `OPTIONS`. `Host` and `Origin` are checked on every request.
#[derive(Debug, Clone)]
pub struct McpService {
    shared: Arc<Shared>,
}

impl McpService {
    /// The endpoint for `server`, with `options`.
    pub fn new(server: Server, options: HttpOptions) -> McpService {
        let events: Arc<dyn EventStore> =
            Arc::new(MemoryEventStore::new(options.event_store_bytes).total_bytes(options.event_store_total_bytes));
        McpService::with_event_store(server, options, events)
    }

    /// The endpoint with an event store of your own, for example one shared by instances.
    pub fn with_event_store(server: Server, options: HttpOptions, events: Arc<dyn EventStore>) -> McpService {
        let store = options.session_store.as_ref().map(|store| store.0.clone());
        let caps = (options.max_sessions, options.max_sessions_per_client);
        let sessions = SessionTable::new(events, server.clone(), options.session_idle_timeout, caps, store);
        McpService { shared: Arc::new(Shared::new(server, options, sessions)) }
    }

    /// Handles one HTTP request. The client's `std::net::SocketAddr` in its extensions, when
    /// the app puts it there, counts its sessions and tasks per address
    /// ([`HttpOptions::max_sessions_per_client`]).
    pub async fn handle<B>(&self, request: Request<B>) -> Response<McpBody>
    where
        B: http_body::Body + Send + 'static,
        B::Data: Send,
        B::Error: std::fmt::Display,
    {
        let peer = request.extensions().get::<SocketAddr>().map(SocketAddr::ip);
        handle(self.shared.clone(), request, peer).await
    }

    /// [`handle`](McpService::handle) for a request from `peer`, known without an extension.
    async fn handle_from<B>(&self, request: Request<B>, peer: IpAddr) -> Response<McpBody>
    where
        B: http_body::Body + Send + 'static,
        B::Data: Send,
        B::Error: std::fmt::Display,
    {
        handle(self.shared.clone(), request, Some(peer)).await
    }

    /// True when `path` is a document the endpoint serves to anyone beside its own path (the
    /// protected resource metadata of [`HttpOptions::authenticate`]): an app that mounts the
    /// service routes those paths to it too.
    pub fn publishes(&self, path: &str) -> bool {
        self.shared.options.auth.as_ref().is_some_and(|auth| auth.0.public_document(path).is_some())
    }

    /// Begins a graceful shutdown of the endpoint: open standalone streams end and
    /// `subscriptions/listen` listeners get their result, so that an HTTP server in front
    /// (axum's graceful shutdown, say) finishes once the requests being answered are.
    /// [`serve_http_until`] calls it itself.
    pub fn close_streams(&self) {
        self.shared.close();
    }
}

impl<B> tower_service::Service<Request<B>> for McpService
where
    B: http_body::Body + Send + 'static,
    B::Data: Send,
    B::Error: std::fmt::Display,
{
    type Response = Response<McpBody>;
    type Error = Infallible;
    type Future = Pin<Box<dyn Future<Output = Result<Response<McpBody>, Infallible>> + Send>>;

    fn poll_ready(&mut self, _cx: &mut Context<'_>) -> Poll<Result<(), Infallible>> {
        Poll::Ready(Ok(()))
    }

    fn call(&mut self, request: Request<B>) -> Self::Future {
        let shared = self.shared.clone();
        let peer = request.extensions().get::<SocketAddr>().map(SocketAddr::ip);
        Box::pin(async move { Ok(handle(shared, request, peer).await) })
    }
}

async fn handle<B>(shared: Arc<Shared>, request: Request<B>, peer: Option<IpAddr>) -> Response<McpBody>
where
    B: http_body::Body + Send + 'static,
    B::Data: Send,
    B::Error: std::fmt::Display,
{
    if let Some(auth) = &shared.options.auth
        && let Some(document) = auth.0.public_document(request.uri().path())
    {
        return reply::public_document(&shared.options, &request, document);
    }
    if let Err(refusal) = guard::check(&shared.options, request.headers()) {
        tracing::warn!(?refusal, "refusing a request from an unexpected host or origin");
        return reply::forbidden(refusal);
    }
    let origin = shared.options.cors.then(|| request.headers().get(http::header::ORIGIN).cloned()).flatten();
    let logged = tracing::level_enabled!(tracing::Level::DEBUG).then(|| RequestLog::of(&request));
    let request = match &shared.options.auth {
        // A preflight carries no credentials; it is answered below, as without authentication.
        Some(auth) if !(request.method() == Method::OPTIONS && shared.options.cors) => {
            let (mut parts, body) = request.into_parts();
            match auth.0.authenticate(&parts).await {
                Ok(principal) => {
                    parts.extensions.insert(principal);
                    Request::from_parts(parts, body)
                }
                Err(refusal) => {
                    let mut response = reply::unauthenticated(&refusal, &*auth.0);
                    if shared.options.cors {
                        reply::add_cors(&shared.options, origin.as_ref(), &mut response);
                    }
                    if let Some(logged) = logged {
                        logged.finish(response.status());
                    }
                    return response;
                }
            }
        }
        _ => request,
    };
    let mut response = match *request.method() {
        Method::POST => post::handle(&shared, request, peer).await,
        Method::GET => streams::get(&shared, request).await,
        Method::DELETE => streams::delete(&shared, request).await,
        Method::OPTIONS if shared.options.cors => reply::preflight(),
        _ => reply::method_not_allowed(),
    };
    if shared.options.cors {
        reply::add_cors(&shared.options, origin.as_ref(), &mut response);
    }
    if let Some(logged) = logged {
        logged.finish(response.status());
    }
    response
}

/// What the debug log says of an HTTP request, taken before it is handled.
struct RequestLog {
    started: std::time::Instant,
    method: Method,
    /// The `Mcp-Method` header of a 2026-07-28 request.
    mcp_method: Option<String>,
    /// The session id's first 8 characters: enough to follow a session through the log, too
    /// few to take it over.
    session: Option<String>,
}

impl RequestLog {
    fn of<B>(request: &Request<B>) -> RequestLog {
        let header = |name: &str| request.headers().get(name).and_then(|value| value.to_str().ok());
        RequestLog {
            started: std::time::Instant::now(),
            method: request.method().clone(),
            mcp_method: header(headers::METHOD).map(str::to_owned),
            session: header(headers::SESSION_ID).map(|id| id.chars().take(8).collect()),
        }
    }

    fn finish(self, status: http::StatusCode) {
        tracing::debug!(
            http_method = %self.method,
            mcp_method = self.mcp_method.as_deref(),
            session = self.session.as_deref(),
            status = status.as_u16(),
            micros = self.started.elapsed().as_micros() as u64,
            "HTTP request"
        );
    }
}

/// Serves `server` over Streamable HTTP on `address` until the process ends; the address it
/// bound (the port port 0 picked) is logged at `info`.
pub async fn serve_http(server: Server, address: SocketAddr, options: HttpOptions) -> Result<(), Error> {
    let listener = TcpListener::bind(address).await.map_err(io_error)?;
    serve_http_on(server, listener, options).await
}

/// Serves `server` over Streamable HTTP on connections from `listener`, at the options' path;
/// other paths get 404. Connections are bounded by [`HttpOptions::max_connections`] and
/// [`HttpOptions::max_connections_per_address`], and closed after
/// [`HttpOptions::idle_timeout`] with nothing to do. Runs until the process ends; see
/// [`serve_http_until`] to stop. Logs the endpoint's URL at `info`.
pub async fn serve_http_on(server: Server, listener: TcpListener, options: HttpOptions) -> Result<(), Error> {
    if let Ok(local) = listener.local_addr() {
        tracing::info!("serving MCP over Streamable HTTP at http://{local}{}", options.path);
    }
    serve_http_until(server, listener, options, std::future::pending()).await
}

/// [`serve_http_on`] until `shutdown` completes, then a graceful shutdown: no new connections
/// or requests are accepted, standalone streams and listeners end cleanly, requests in flight
/// are answered, and connections close as they finish. Those still busy after
/// [`HttpOptions::shutdown_grace`] are cut. Returns once every connection is closed.
pub async fn serve_http_until(
    server: Server,
    listener: TcpListener,
    options: HttpOptions,
    shutdown: impl Future<Output = ()>,
) -> Result<(), Error> {
    // hyper's timer for a request's head runs whenever the connection waits for one, a
    // kept-alive connection's next request included (not while a response or stream is being
    // sent): at the idle timeout, it closes idle connections at no cost per request.
    let header_read_timeout = options.header_read_timeout.min(options.idle_timeout);
    let limits = ConnectionLimits::new(options.max_connections, options.max_connections_per_address);
    let grace = options.shutdown_grace;
    let path: Arc<str> = options.path.clone().into();
    let metrics = options.metrics.clone();
    let service = McpService::new(server, options);
    let mut connections = tokio::task::JoinSet::new();
    let mut shutdown = std::pin::pin!(shutdown);
    loop {
        let accepted = tokio::select! {
            accepted = listener.accept() => accepted,
            () = &mut shutdown => break,
        };
        // Finished connections are collected as new ones come, so the set stays small.
        while connections.try_join_next().is_some() {}
        let (stream, peer) = match accepted {
            Ok(accepted) => accepted,
            Err(err) => {
                // Running out of file descriptors and similar passing conditions must not end
                // the server; wait a moment and go on.
                tracing::warn!(%err, "accepting a connection failed");
                tokio::time::sleep(std::time::Duration::from_millis(50)).await;
                continue;
            }
        };
        let slot = match limits.admit(peer.ip()) {
            Ok(slot) => slot,
            Err(refusal) => {
                tracing::debug!(%peer, ?refusal, "refusing a connection past the connection limits");
                refusal.refuse(stream);
                continue;
            }
        };
        // Small messages go out at once instead of waiting for more to fill a packet.
        let _ = stream.set_nodelay(true);
        let service = service.clone();
        let path = path.clone();
        let metrics = metrics.clone();
        let mut closing = service.shared.closing();
        connections.spawn(async move {
            let _slot = slot;
            let handler = hyper::service::service_fn(move |request: Request<hyper::body::Incoming>| {
                let service = service.clone();
                let path = path.clone();
                let metrics = metrics.clone();
                async move {
                    if let Some(metrics) = metrics.filter(|metrics| request.uri().path() == metrics.path) {
                        return Ok(metrics::answer(&service.shared.options, &metrics, &request).await);
                    }
                    if request.uri().path() != &*path && !service.publishes(request.uri().path()) {
                        return Ok::<_, Infallible>(reply::not_found());
                    }
                    Ok(service.handle_from(request, peer.ip()).await)
                }
            });
            let connection = hyper::server::conn::http1::Builder::new()
                .timer(hyper_util::rt::TokioTimer::new())
                .header_read_timeout(header_read_timeout)
                .serve_connection(hyper_util::rt::TokioIo::new(stream), handler);
            let mut connection = std::pin::pin!(connection);
            let outcome = tokio::select! {
                outcome = connection.as_mut() => outcome,
                () = async { drop(closing.wait_for(|closing| *closing).await) } => {
                    // The request being answered finishes; no other is read.
                    connection.as_mut().graceful_shutdown();
                    connection.await
                }
            };
            if let Err(err) = outcome {
                tracing::debug!(%peer, %err, "an HTTP connection ended with an error");
            }
        });
    }
    drop(listener);
    tracing::info!(connections = connections.len(), "shutting down: answering the requests in flight");
    service.close_streams();
    let drained = tokio::time::timeout(grace, async { while connections.join_next().await.is_some() {} }).await;
    if drained.is_err() {
        tracing::warn!(
            connections = connections.len(),
            ?grace,
            "connections still busy after the grace period are cut"
        );
        connections.shutdown().await;
    }
    Ok(())
}
