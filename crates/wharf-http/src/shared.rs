//! What every request of an endpoint shares (the server, the options, the 2025 sessions), the
//! delivery of server events to those sessions, and finding the session a request names.

use std::sync::{Arc, OnceLock, Weak};

use http::{Response, StatusCode};
use tokio::sync::{mpsc, watch};
use wharf_protocol::{ErrorCode, FromJson, Incoming, ProtocolVersion};

use super::auth::Authenticator;
use super::body::McpBody;
use super::headers::SessionNaming;
use super::options::HttpOptions;
use super::reply;
use super::session_record;
use super::session_store::{Relayed, SessionStore};
use super::sessions::{HttpSession, SessionTable};
use wharf_server::contract::LazyQueue;
use wharf_server::contract::Principal;
use wharf_server::contract::Scopes;
use wharf_server::contract::Server;
use wharf_server::contract::ServerHooks;
use wharf_server::contract::SessionEndReason;
use wharf_server::contract::TaskRecord;
use wharf_server::contract::client_messages;
use wharf_server::contract::event_notification;
use wharf_server::contract::is_hex_id;
use wharf_server::contract::{ListKind, ServerEvent};

/// The state of one endpoint, shared by its requests.
#[derive(Debug)]
pub(crate) struct Shared {
    pub(crate) server: Server,
    /// True when a layer reads what the transport keeps of a request: a POST's headers and
    /// extensions are then kept for it ([`crate::HttpParts`]).
    pub(crate) keeps_http_parts: bool,
    pub(crate) options: HttpOptions,
    pub(crate) sessions: SessionTable,
    /// Set once the task that delivers server events to sessions runs.
    event_task: OnceLock<()>,
    /// Set once the task that takes the messages other instances relay runs.
    relay_task: OnceLock<()>,
    /// True once the endpoint is shutting down: standalone streams end.
    closing: watch::Sender<bool>,
    /// The queue of every stateless request's session, closed: such a request's messages go
    /// with its own answer, and nothing reaches its client outside it.
    pub(crate) no_outbound: Arc<LazyQueue>,
}

impl Shared {
    pub(crate) fn new(server: Server, options: HttpOptions, sessions: SessionTable) -> Shared {
        Shared {
            keeps_http_parts: server.layers().iter().any(|layer| layer.reads_transport_data()),
            server,
            options,
            sessions,
            event_task: OnceLock::new(),
            relay_task: OnceLock::new(),
            closing: watch::Sender::new(false),
            no_outbound: {
                let queue = Arc::new(LazyQueue::new(1));
                queue.close();
                queue
            },
        }
    }

    /// Begins a graceful shutdown: standalone streams and listeners end, each cleanly, so that
    /// only requests still being answered keep connections open.
    pub(crate) fn close(&self) {
        self.closing.send_replace(true);
        self.server.end_subscriptions();
    }

    /// What authenticates requests, when something does: its challenges name the metadata
    /// URL and the scopes every request needs.
    pub(crate) fn authenticator(&self) -> Option<&dyn Authenticator> {
        self.options.auth.as_ref().map(|auth| &*auth.0)
    }

    /// Tells when [`Shared::close`] has been called.
    pub(crate) fn closing(&self) -> watch::Receiver<bool> {
        self.closing.subscribe()
    }

    /// Starts, once, the task that hands this instance's sessions the client messages other
    /// instances relay, when a shared session store connects them.
    pub(crate) fn ensure_relay_task(self: &Arc<Self>) {
        let Some(store) = &self.options.session_store else { return };
        self.relay_task.get_or_init(|| {
            tokio::spawn(deliver_relayed(Arc::downgrade(self), store.0.relayed()));
        });
    }

    /// Starts, once, the task that turns server events into notifications for sessions.
    pub(crate) fn ensure_event_task(self: &Arc<Self>) {
        self.event_task.get_or_init(|| {
            tokio::spawn(deliver_events(Arc::downgrade(self), self.server.subscribe_events()));
        });
    }
}

/// Acts on what the other instances relay: a client's answer reaches the request here awaiting
/// it and a cancellation the request it names (through this instance's copy of the session, if
/// there is one); a message for a session's stream reaches it if the stream is open here;
/// resource, list and task changes reach this instance's clients and listeners; a component
/// enabled or disabled elsewhere is here too.
async fn deliver_relayed(shared: Weak<Shared>, mut relayed: mpsc::Receiver<Relayed>) {
    while let Some(relayed) = relayed.recv().await {
        let Some(shared) = shared.upgrade() else { return };
        let (session, message) = match relayed {
            Relayed::ClientMessage { session, message } => (session, message),
            Relayed::ResourceUpdated(uri) => {
                shared.server.relayed_resource_update(&uri);
                continue;
            }
            Relayed::ListChanged(list, scopes) => {
                if let Some(kind) = ListKind::named(&list) {
                    shared.server.relayed_list_change(kind, Scopes::new(scopes));
                }
                continue;
            }
            Relayed::ToStream { session, message } => {
                if let Some(copy) = shared.sessions.peek(&session) {
                    copy.deliver_to_stream(message);
                }
                continue;
            }
            Relayed::TaskChanged(record) => {
                match TaskRecord::from_json_bytes(&record) {
                    Ok(record) => shared.server.relayed_task_change(record),
                    Err(err) => tracing::debug!(%err, "ignoring a relayed task record that does not decode"),
                }
                continue;
            }
            Relayed::Toggled(list, key, enabled) => {
                if let Some(kind) = ListKind::named(&list) {
                    shared.server.relayed_toggle(kind, &key, enabled);
                }
                continue;
            }
        };
        let Some(http_session) = shared.sessions.peek(&session) else { continue };
        let session = &http_session.session;
        match Incoming::parse(&message) {
            Ok(Incoming::Response { id, result }) => {
                client_messages::answer(session, &id, Ok(result));
            }
            Ok(Incoming::Error { id: Some(id), error }) => {
                client_messages::answer(session, &id, Err(error));
            }
            Ok(Incoming::Notification { method, params }) => {
                client_messages::notification(session, &method, params);
            }
            _ => tracing::debug!("ignoring a relayed message that is neither an answer nor a notification"),
        }
    }
}

/// Hands list changes and resource updates to every session that should hear of them; a
/// session whose standalone queue is full misses the message (each says "look again"). With a
/// shared session store, what happened here is relayed to the other instances too, and a
/// session hears of it from the instance that holds its GET stream.
async fn deliver_events(shared: Weak<Shared>, mut events: tokio::sync::broadcast::Receiver<ServerEvent>) {
    loop {
        let event = match events.recv().await {
            Ok(event) => event,
            Err(tokio::sync::broadcast::error::RecvError::Lagged(_)) => continue,
            Err(tokio::sync::broadcast::error::RecvError::Closed) => return,
        };
        let Some(shared) = shared.upgrade() else { return };
        if let Some(store) = &shared.options.session_store
            && let Some(relayed) = to_relay(&event)
            && let Err(err) = store.0.relay(&relayed).await
        {
            tracing::warn!(%err, "a change could not be relayed to the other instances");
        }
        let capabilities = shared.server.capabilities();
        for http_session in shared.sessions.all() {
            let session = &http_session.session;
            if http_session.is_shared() && !http_session.has_stream_open() {
                // Every instance hears of the event: the one holding the stream tells it.
                continue;
            }
            if let (ServerEvent::ResourceUpdated { .. }, Some(store)) = (&event, &shared.options.session_store)
                && let Ok(Some(stored)) = store.0.load(session.id(), None).await
            {
                // The client may have subscribed through another instance since this one last
                // heard from it: its subscriptions are read afresh for the stream it holds here.
                session_record::refresh(session, &stored);
            }
            if let Some(notification) = event_notification(&capabilities, session, &event) {
                if http_session.is_shared() {
                    http_session.deliver_to_stream(notification);
                } else {
                    let _ = session.outbound().try_send(notification);
                }
            }
        }
    }
}

/// What the other instances of a fleet are told of an event that happened here: resource and
/// list changes, components enabled or disabled, and changes of the tasks running here.
fn to_relay(event: &ServerEvent) -> Option<Relayed> {
    match event {
        ServerEvent::ResourceUpdated { uri, relayed: false } => Some(Relayed::ResourceUpdated(uri.to_string())),
        ServerEvent::ListChanged { kind, scopes, relayed: false } => {
            Some(Relayed::ListChanged(kind.name().to_owned(), scopes.names().map(str::to_owned).collect()))
        }
        ServerEvent::Task { record, relayed: false } => serde_json::to_vec(&**record).ok().map(Relayed::TaskChanged),
        ServerEvent::Toggled { kind, key, enabled } => {
            Some(Relayed::Toggled(kind.name().to_owned(), key.to_string(), *enabled))
        }
        _ => None,
    }
}

/// Why a message could not be tied to a 2025 session.
pub(crate) enum SessionRefusal {
    UnsupportedVersion(String),
    Missing,
    Unknown,
    /// The shared session store did not answer.
    StoreUnavailable,
}

impl SessionRefusal {
    pub(crate) fn response(self) -> Response<McpBody> {
        match self {
            SessionRefusal::UnsupportedVersion(version) => reply::refuse(
                StatusCode::BAD_REQUEST,
                ErrorCode::INVALID_REQUEST,
                format!("Bad request: unsupported MCP-Protocol-Version {version}"),
            ),
            SessionRefusal::Missing => reply::refuse(
                StatusCode::BAD_REQUEST,
                ErrorCode::INVALID_REQUEST,
                "Bad request: the Mcp-Session-Id header is required; send `initialize` first to get one",
            ),
            SessionRefusal::Unknown => {
                reply::refuse(StatusCode::NOT_FOUND, ErrorCode::INVALID_REQUEST, "Session not found: initialize again")
            }
            SessionRefusal::StoreUnavailable => reply::store_unavailable(),
        }
    }
}

/// The 2025 session a message names: 400 without `Mcp-Session-Id`, 404 for an unknown or
/// ended session, 400 for an unsupported `MCP-Protocol-Version`, 503 while a shared session
/// store does not answer. A session belongs to the principal that opened it: to anyone else it
/// is unknown, so that a session id alone does not let another user in.
pub(crate) async fn named_session(
    shared: &Arc<Shared>,
    naming: SessionNaming<'_>,
    principal: Option<&Principal>,
) -> Result<Arc<HttpSession>, SessionRefusal> {
    if let Some(version) = naming.protocol_version
        && ProtocolVersion::parse_bytes(version).is_none()
    {
        return Err(SessionRefusal::UnsupportedVersion(String::from_utf8_lossy(version).into_owned()));
    }
    let id = naming.session_id.ok_or(SessionRefusal::Missing)?;
    let http_session = match &shared.options.session_store {
        None => shared.sessions.get(id).ok_or(SessionRefusal::Unknown)?,
        Some(store) => {
            // Not an id this server made (they are text): nothing to ask the store about.
            let id = std::str::from_utf8(id).map_err(|_| SessionRefusal::Unknown)?;
            stored_session(shared, &*store.0, id).await?
        }
    };
    if http_session.principal.as_ref() != principal {
        let shown = String::from_utf8_lossy(&id[..id.len().min(8)]);
        tracing::warn!(session = %shown, "a request named another principal's session");
        return Err(SessionRefusal::Unknown);
    }
    Ok(http_session)
}

/// A session of the shared store, loaded once per request (and now and then kept alive for
/// every instance by the same load): this instance's copy brought up to date, or a new copy of
/// a session another instance opened.
async fn stored_session(
    shared: &Arc<Shared>,
    store: &dyn SessionStore,
    id: &str,
) -> Result<Arc<HttpSession>, SessionRefusal> {
    if !is_hex_id(id) {
        // Not an id this server made: nothing to ask the store about.
        return Err(SessionRefusal::Unknown);
    }
    // The session's expiry is pushed out by the first request a copy serves, then by at most
    // one request in each eighth of the idle timeout: the others only read it.
    let idle = shared.options.session_idle_timeout;
    let refresh = shared.sessions.peek(id).is_none_or(|copy| shared.sessions.refresh_due(&copy));
    let stored = match store.load(id, refresh.then_some(idle)).await {
        Ok(Some(stored)) => stored,
        Ok(None) => {
            // Deleted elsewhere, or expired for every instance: this instance's copy ends too.
            shared.sessions.remove(id, SessionEndReason::Closed);
            return Err(SessionRefusal::Unknown);
        }
        Err(err) => {
            tracing::warn!(%err, "a session could not be loaded");
            return Err(SessionRefusal::StoreUnavailable);
        }
    };
    shared.ensure_relay_task();
    if let Some(local) = shared.sessions.get(id) {
        if refresh {
            shared.sessions.refreshed(&local);
        }
        session_record::refresh(&local.session, &stored);
        return Ok(local);
    }
    shared.ensure_event_task();
    match shared.sessions.adopt(id, |session| session_record::adopt(session, &stored)) {
        Ok(Some(adopted)) => Ok(adopted),
        Ok(None) => {
            tracing::warn!(session = %id.chars().take(8).collect::<String>(), "a stored session could not be read");
            Err(SessionRefusal::Unknown)
        }
        Err(_) => Err(SessionRefusal::StoreUnavailable),
    }
}
