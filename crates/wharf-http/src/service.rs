//! [`McpService`]: the endpoint as a `tower::Service`, to mount in an app or to serve with
//! [`serve`](crate::serve).

use std::convert::Infallible;
use std::future::Future;
use std::net::{IpAddr, SocketAddr};
use std::pin::Pin;
use std::sync::Arc;
use std::task::{Context, Poll};

use http::{Method, Request, Response};

use wharf_server::contract::{Principal, Server};

use crate::auth::{AuthRefusal, Authenticator};
use crate::body::McpBody;
use crate::connection_auth::ConnectionAuth;
use crate::discovery;
use crate::events::{EventStore, MemoryEventStore};
use crate::options::HttpOptions;
use crate::sessions::SessionTable;
use crate::shared::Shared;
use crate::{guard, headers, post, reply, streams};

/// The MCP endpoint as a `tower::Service`: mount it at a path of your own app, or serve it
/// with [`serve`](crate::serve).
///
/// It answers `POST` (messages of both eras), `GET` (the standalone stream of a 2025 session,
/// or resuming one with `Last-Event-ID`), `DELETE` (ending a 2025 session) and, when CORS is
/// on, `OPTIONS`. `Host` and `Origin` are checked on every request.
#[derive(Debug, Clone)]
pub struct McpService {
    pub(crate) shared: Arc<Shared>,
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
        handle(self.shared.clone(), request, peer, None).await
    }

    /// [`handle`](McpService::handle) for a request from `peer`, known without an extension,
    /// on a connection whose principal `connection_auth` remembers (with authentication on).
    /// The request's future itself, not one around it: a request's future is large, and each
    /// layer of `async` around it would move it once more.
    pub(crate) fn handle_from<B>(
        &self,
        request: Request<B>,
        peer: IpAddr,
        connection_auth: Option<Arc<ConnectionAuth>>,
    ) -> impl Future<Output = Response<McpBody>> + Send + use<B>
    where
        B: http_body::Body + Send + 'static,
        B::Data: Send,
        B::Error: std::fmt::Display,
    {
        handle(self.shared.clone(), request, Some(peer), connection_auth)
    }

    /// True when requests are authenticated: a connection then remembers its principal.
    pub(crate) fn authenticates(&self) -> bool {
        self.shared.options.auth.is_some()
    }

    /// True when `path` is a document the endpoint serves to anyone beside its own path (the
    /// protected resource metadata of [`HttpOptions::authenticate`], the Server Card and AI
    /// Catalog of [`HttpOptions::server_card`]): an app that mounts the service routes those
    /// paths to it too.
    pub fn publishes(&self, path: &str) -> bool {
        self.shared.options.auth.as_ref().is_some_and(|auth| auth.0.public_document(path).is_some())
            || discovery::publishes(&self.shared.options, path)
    }

    /// Begins a graceful shutdown of the endpoint: open standalone streams end and
    /// `subscriptions/listen` listeners get their result, so that an HTTP server in front
    /// (axum's graceful shutdown, say) finishes once the requests being answered are.
    /// [`serve`](crate::serve) calls it itself at a graceful shutdown.
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
        Box::pin(async move { Ok(handle(shared, request, peer, None).await) })
    }
}

async fn handle<B>(
    shared: Arc<Shared>,
    request: Request<B>,
    peer: Option<IpAddr>,
    connection_auth: Option<Arc<ConnectionAuth>>,
) -> Response<McpBody>
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
    if let Some(response) = discovery::answer(&shared.options, &shared.server, &request) {
        return response;
    }
    if let Err(refusal) = guard::check(&shared.options, request.headers()) {
        tracing::warn!(?refusal, "refusing a request from an unexpected host or origin");
        return reply::forbidden(refusal);
    }
    let origin = shared.options.cors.then(|| request.headers().get(http::header::ORIGIN).cloned()).flatten();
    let logged = tracing::level_enabled!(tracing::Level::DEBUG).then(|| RequestLog::of(&request));
    let (request, authenticated) = match &shared.options.auth {
        // A preflight carries no credentials; it is answered below, as without authentication.
        Some(auth) if !(request.method() == Method::OPTIONS && shared.options.cors) => {
            let (mut parts, body) = request.into_parts();
            let recalled = connection_auth.as_deref().and_then(|kept| kept.recall(&parts.headers, parts.uri.query()));
            let authenticated = match recalled {
                Some(principal) => Ok(principal),
                None => authenticate(&*auth.0, &parts, connection_auth.as_deref()).await,
            };
            match authenticated {
                Ok(principal) => {
                    // A POST is given its principal; middleware, GET and DELETE find it among
                    // the request's extensions.
                    if parts.method != Method::POST || shared.keeps_http_parts {
                        parts.extensions.insert(principal.clone());
                    }
                    (Request::from_parts(parts, body), Some(principal))
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
        _ => (request, None),
    };
    // The streams' methods are boxed: this future is as large as its largest branch, and a
    // POST's is moved whole at every layer it passes.
    let mut response = match *request.method() {
        Method::POST => post::handle(&shared, request, peer, authenticated).await,
        Method::GET => Box::pin(streams::get(&shared, request)).await,
        Method::DELETE => Box::pin(streams::delete(&shared, request)).await,
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

/// Asks `auth` for the request's principal, and has the connection remember it when the
/// authenticator allows.
async fn authenticate(
    auth: &dyn Authenticator,
    parts: &http::request::Parts,
    connection_auth: Option<&ConnectionAuth>,
) -> Result<Principal, AuthRefusal> {
    let principal = auth.authenticate(parts).await?;
    if let Some(kept) = connection_auth
        && let Some(until) = auth.reusable_until(parts, &principal)
    {
        kept.keep(&parts.headers, parts.uri.query(), &principal, until);
    }
    Ok(principal)
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
        let header = |name: &http::HeaderName| request.headers().get(name).and_then(|value| value.to_str().ok());
        RequestLog {
            started: std::time::Instant::now(),
            method: request.method().clone(),
            mcp_method: header(&headers::METHOD).map(str::to_owned),
            session: header(&headers::SESSION_ID).map(|id| id.chars().take(8).collect()),
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
