//! [`Server`]: the server's identity, options and registry, shared by every connection, and
//! the run-time API for changing what it offers.

use std::any::Any;
use std::panic::{AssertUnwindSafe, catch_unwind};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, PoisonError, RwLock, RwLockReadGuard, RwLockWriteGuard};
use std::time::Instant;

use tokio::sync::{broadcast, watch};
use wharf_protocol::{Implementation, JsonObject, META_SERVER_INFO, ProtocolVersion, ServerCapabilities};

use crate::context::RequestContext;
use crate::error::Error;
use crate::events::{ListKind, ServerEvent};
use crate::extensions::Extensions;
use crate::idempotency::IdempotencyStore;
use crate::input::seal::{Sealer, StateKey};
use crate::large_result::settings::LargeResults;
use crate::layer::Layer;
use crate::options::ServerOptions;
use crate::prompt::PromptDef;
use crate::recent_client::RecentClient;
use crate::registry::{Component, Registry};
use crate::resource::{ResourceDef, TemplateDef};
use crate::scopes::Scopes;
use crate::server_core::ServerCore;
use crate::session::Session;
use crate::session_end::{SessionEnd, SessionEndReason};
use crate::task::Tasks;
use crate::tool::ToolDef;

/// An MCP server: what it is, what it offers, and how it behaves.
///
/// A `Server` is cheap to clone; clones share the registry, so a tool added through one clone
/// is visible to every connection. Serve it with [`serve_stdio`](crate::serve_stdio) or
/// [`serve_connection`](crate::serve_connection).
#[derive(Clone)]
pub struct Server {
    shared: Arc<Shared>,
}

struct Shared {
    info: Implementation,
    server_info_meta: JsonObject,
    /// `server_info_meta` encoded once, for results that have no `_meta` of their own.
    server_info_meta_json: Box<serde_json::value::RawValue>,
    instructions: Option<String>,
    options: ServerOptions,
    registry: RwLock<Registry>,
    events: broadcast::Sender<ServerEvent>,
    state: Extensions,
    next_connection: AtomicU64,
    sealer: Sealer,
    /// Bumped to end every open `subscriptions/listen` stream gracefully.
    subscriptions_epoch: watch::Sender<u64>,
    tasks: Tasks,
    /// Where the keys of idempotent calls are claimed.
    idempotency: Arc<dyn IdempotencyStore>,
    large_results: LargeResults,
    layers: Vec<Box<dyn Layer>>,
    recent_client: RecentClient,
}

/// What a server is made of, as the builder hands it over.
pub(crate) struct ServerParts {
    pub(crate) info: Implementation,
    pub(crate) instructions: Option<String>,
    pub(crate) options: ServerOptions,
    pub(crate) registry: Registry,
    pub(crate) state: Extensions,
    pub(crate) sealer: Sealer,
    pub(crate) tasks: Tasks,
    pub(crate) idempotency: Arc<dyn IdempotencyStore>,
    pub(crate) large_results: LargeResults,
    pub(crate) layers: Vec<Box<dyn Layer>>,
}

impl Server {
    /// The server made of `parts`.
    pub(crate) fn new(parts: ServerParts) -> Result<Server, Error> {
        let mut server_info_meta = JsonObject::new();
        server_info_meta
            .insert(META_SERVER_INFO.to_owned(), serde_json::to_value(&parts.info).unwrap_or(serde_json::Value::Null));
        let server_info_meta_json = serde_json::value::to_raw_value(&server_info_meta)
            .map_err(|err| Error::registration(format!("the server info cannot be encoded: {err}")))?;
        let (events, _) = broadcast::channel(64);
        Ok(Server {
            shared: Arc::new(Shared {
                info: parts.info,
                server_info_meta,
                server_info_meta_json,
                instructions: parts.instructions,
                options: parts.options,
                registry: RwLock::new(parts.registry),
                events,
                state: parts.state,
                next_connection: AtomicU64::new(1),
                sealer: parts.sealer,
                subscriptions_epoch: watch::channel(0).0,
                tasks: parts.tasks,
                idempotency: parts.idempotency,
                large_results: parts.large_results,
                layers: parts.layers,
                recent_client: RecentClient::default(),
            }),
        })
    }

    /// The middleware around every request, outermost first.
    pub(crate) fn layers(&self) -> &[Box<dyn Layer>] {
        &self.shared.layers
    }

    /// Tells the layers that `session` ended at `ended_at`, if `initialize` opened it. A layer
    /// that panics here is logged and the others still hear of it.
    pub(crate) fn end_session(&self, session: &Session, reason: SessionEndReason, ended_at: Instant) {
        let layers = self.layers();
        if layers.is_empty() {
            return;
        }
        let Some(negotiated) = session.negotiated() else { return };
        let duration = ended_at.saturating_duration_since(negotiated.at);
        let end = SessionEnd::new(session, negotiated.version, reason, duration);
        for layer in layers {
            if catch_unwind(AssertUnwindSafe(|| layer.session_ended(&end))).is_err() {
                tracing::error!(session = %session.id(), "a layer panicked on hearing that a session ended");
            }
        }
    }

    /// The last client declaration, which sessions declaring the same share.
    pub(crate) fn recent_client(&self) -> &RecentClient {
        &self.shared.recent_client
    }

    /// What a request reaches of this server.
    pub(crate) fn core(&self) -> Arc<dyn ServerCore> {
        self.shared.clone()
    }
    /// Seals `requestState` with the key named `id` from now on, and keeps accepting the key
    /// that sealed until now, so that requests in flight still finish. Give every instance
    /// of a deployment the same keys (see [`ServerBuilder::request_state_key`](crate::ServerBuilder::request_state_key)).
    pub fn rotate_request_state_key(&self, id: &str, secret: &[u8]) {
        self.shared.sealer.rotate(StateKey::new(id, secret));
    }

    /// Stops accepting `requestState` sealed with the key named `id` (unless it is the key
    /// that seals now).
    pub fn retire_request_state_key(&self, id: &str) {
        self.shared.sealer.retire(id);
    }

    /// Ends every `subscriptions/listen` stream open now, gracefully: each listener is
    /// answered with its result, as before a shutdown or a deployment. Clients listen again.
    pub fn end_subscriptions(&self) {
        self.shared.subscriptions_epoch.send_modify(|epoch| *epoch += 1);
    }

    /// Changes when [`Server::end_subscriptions`] is called.
    pub(crate) fn subscriptions_ending(&self) -> watch::Receiver<u64> {
        self.shared.subscriptions_epoch.subscribe()
    }

    pub(crate) fn tasks(&self) -> &Tasks {
        &self.shared.tasks
    }

    /// Where the keys of idempotent calls are claimed.
    pub(crate) fn idempotency(&self) -> &Arc<dyn IdempotencyStore> {
        &self.shared.idempotency
    }

    pub(crate) fn events(&self) -> broadcast::Sender<ServerEvent> {
        self.shared.events.clone()
    }

    pub(crate) fn sealer(&self) -> &Sealer {
        &self.shared.sealer
    }

    /// The server's name and version.
    pub fn info(&self) -> &Implementation {
        &self.shared.info
    }

    /// The server's options.
    pub(crate) fn options(&self) -> &ServerOptions {
        &self.shared.options
    }

    pub(crate) fn instructions(&self) -> Option<&str> {
        self.shared.instructions.as_deref()
    }

    pub(crate) fn server_info_meta(&self) -> &JsonObject {
        &self.shared.server_info_meta
    }

    pub(crate) fn server_info_meta_json(&self) -> &serde_json::value::RawValue {
        &self.shared.server_info_meta_json
    }

    /// The implementation info as a client of `version` may see it.
    pub(crate) fn info_for(&self, version: ProtocolVersion) -> Implementation {
        let mut info = self.shared.info.clone();
        if !version.has_titles() {
            info.title = None;
        }
        if !version.has_icons() {
            info.description = None;
            info.website_url = None;
            info.icons = None;
        }
        info
    }

    /// The capabilities derived from what is registered now.
    pub fn capabilities(&self) -> ServerCapabilities {
        self.registry().capabilities()
    }

    pub(crate) fn registry(&self) -> RwLockReadGuard<'_, Registry> {
        self.shared.registry.read().unwrap_or_else(PoisonError::into_inner)
    }

    pub(crate) fn registry_mut(&self) -> RwLockWriteGuard<'_, Registry> {
        self.shared.registry.write().unwrap_or_else(PoisonError::into_inner)
    }

    /// Tells connected clients (and, in a fleet, the other instances) of `event`; nobody
    /// listening just means no client is connected.
    pub(crate) fn send_event(&self, event: ServerEvent) {
        let _ = self.shared.events.send(event);
    }

    pub(crate) fn subscribe_events(&self) -> broadcast::Receiver<ServerEvent> {
        self.shared.events.subscribe()
    }

    pub(crate) fn next_connection_id(&self) -> String {
        format!("conn-{}", self.shared.next_connection.fetch_add(1, Ordering::Relaxed))
    }

    /// Runs `change` on the registry and tells connected clients when it changed a list: the
    /// change gives the scopes of the component it touched.
    fn change_registry<R>(&self, kind: ListKind, change: impl FnOnce(&mut Registry) -> (R, Option<Scopes>)) -> R {
        let (outcome, changed) = change(&mut self.registry_mut());
        if let Some(scopes) = changed {
            // No receivers just means no client is connected.
            let _ = self.shared.events.send(ServerEvent::ListChanged { kind, scopes, relayed: false });
        }
        outcome
    }

    fn add<C: Component>(&self, component: C) -> Result<(), Error> {
        let scopes = component.scopes().clone();
        self.change_registry(C::LIST, |registry| {
            let added = registry.add(component);
            let changed = added.is_ok().then_some(scopes);
            (added, changed)
        })
    }

    fn remove<C: Component>(&self, key: &str) -> bool {
        self.change_registry(C::LIST, |registry| {
            let scopes = C::entries(registry).get(key).map(|component| component.scopes().clone());
            let removed = registry.remove::<C>(key);
            (removed, scopes.filter(|_| removed))
        })
    }

    fn set_enabled<C: Component>(&self, key: &str, enabled: bool) -> bool {
        self.change_registry(C::LIST, |registry| {
            let scopes = C::entries(registry).get(key).map(|component| component.scopes().clone());
            match registry.set_enabled::<C>(key, enabled) {
                Some(changed) => {
                    if changed {
                        let toggled = ServerEvent::Toggled { kind: C::LIST, key: key.into(), enabled };
                        let _ = self.shared.events.send(toggled);
                    }
                    (true, scopes.filter(|_| changed))
                }
                None => (false, None),
            }
        })
    }

    fn is_enabled<C: Component>(&self, key: &str) -> Option<bool> {
        C::entries(&self.registry()).get(key).map(|component| component.enabled())
    }

    /// Enables or disables here what another instance of the server enabled or disabled; its
    /// clients hear of it from the list change relayed next.
    pub(crate) fn relayed_toggle(&self, kind: ListKind, key: &str, enabled: bool) {
        let mut registry = self.registry_mut();
        let _ = match kind {
            ListKind::Tools => registry.set_enabled::<ToolDef>(key, enabled),
            ListKind::Prompts => registry.set_enabled::<PromptDef>(key, enabled),
            ListKind::Resources => registry
                .set_enabled::<ResourceDef>(key, enabled)
                .or_else(|| registry.set_enabled::<TemplateDef>(key, enabled)),
        };
    }

    /// Adds a tool while the server runs; connected clients get `notifications/tools/list_changed`.
    pub fn add_tool(&self, tool: ToolDef) -> Result<(), Error> {
        self.add(tool)
    }

    /// Removes a tool; returns false if there was none by that name.
    pub fn remove_tool(&self, name: &str) -> bool {
        self.remove::<ToolDef>(name)
    }

    /// Enables or disables a tool; returns false if there is none by that name. With a shared
    /// session store, every instance of the server does the same.
    pub fn set_tool_enabled(&self, name: &str, enabled: bool) -> bool {
        self.set_enabled::<ToolDef>(name, enabled)
    }

    /// Whether the tool of this name is enabled; `None` if there is none.
    pub fn is_tool_enabled(&self, name: &str) -> Option<bool> {
        self.is_enabled::<ToolDef>(name)
    }

    /// Adds a prompt while the server runs.
    pub fn add_prompt(&self, prompt: PromptDef) -> Result<(), Error> {
        self.add(prompt)
    }

    /// Removes a prompt; returns false if there was none by that name.
    pub fn remove_prompt(&self, name: &str) -> bool {
        self.remove::<PromptDef>(name)
    }

    /// Enables or disables a prompt; returns false if there is none by that name. With a
    /// shared session store, every instance of the server does the same.
    pub fn set_prompt_enabled(&self, name: &str, enabled: bool) -> bool {
        self.set_enabled::<PromptDef>(name, enabled)
    }

    /// Whether the prompt of this name is enabled; `None` if there is none.
    pub fn is_prompt_enabled(&self, name: &str) -> Option<bool> {
        self.is_enabled::<PromptDef>(name)
    }

    /// Adds a resource while the server runs.
    pub fn add_resource(&self, resource: ResourceDef) -> Result<(), Error> {
        self.add(resource)
    }

    /// Removes a resource; returns false if there was none with that URI.
    pub fn remove_resource(&self, uri: &str) -> bool {
        self.remove::<ResourceDef>(uri)
    }

    /// Enables or disables a resource; returns false if there is none with that URI. With a
    /// shared session store, every instance of the server does the same.
    pub fn set_resource_enabled(&self, uri: &str, enabled: bool) -> bool {
        self.set_enabled::<ResourceDef>(uri, enabled)
    }

    /// Adds a resource template while the server runs.
    pub fn add_resource_template(&self, template: TemplateDef) -> Result<(), Error> {
        self.add(template)
    }

    /// Removes a resource template; returns false if there was none with that template.
    pub fn remove_resource_template(&self, uri_template: &str) -> bool {
        self.remove::<TemplateDef>(uri_template)
    }

    /// Enables or disables a resource template; returns false if there is none.
    pub fn set_resource_template_enabled(&self, uri_template: &str, enabled: bool) -> bool {
        self.set_enabled::<TemplateDef>(uri_template, enabled)
    }

    /// Serves `skills` instead of the skills before, all at once: a request sees the old set
    /// or the new one, never a mix. Clients are told the resource list changed when the skills
    /// or their `SKILL.md` names and descriptions did, and subscribers of a changed or removed
    /// file that it changed. Invalid skills are refused with the reason, and the skills before
    /// go on being served.
    #[cfg(feature = "skills")]
    pub fn set_skills(&self, skills: crate::skills::Skills) -> Result<(), Error> {
        let compiled = skills.compile()?;
        self.update(|update| update.set_compiled_skills(compiled))
    }

    /// Tells every client subscribed to `uri` that the resource changed
    /// (`notifications/resources/updated`).
    pub fn notify_resource_updated(&self, uri: &str) {
        let _ = self.shared.events.send(ServerEvent::ResourceUpdated { uri: uri.into(), relayed: false });
    }

    /// Tells this instance's listeners and sessions that watch it that a task running on
    /// another instance of the server changed.
    pub(crate) fn relayed_task_change(&self, record: crate::task::record::TaskRecord) {
        let _ = self.shared.events.send(ServerEvent::Task { record: Arc::new(record), relayed: true });
    }

    /// Tells this instance's clients and listeners that may see it that a list changed on
    /// another instance of the server.
    pub(crate) fn relayed_list_change(&self, kind: ListKind, scopes: Scopes) {
        let _ = self.shared.events.send(ServerEvent::ListChanged { kind, scopes, relayed: true });
    }

    /// Tells this instance's clients subscribed to `uri` that another instance of the server
    /// changed the resource.
    pub(crate) fn relayed_resource_update(&self, uri: &str) {
        let _ = self.shared.events.send(ServerEvent::ResourceUpdated { uri: uri.into(), relayed: true });
    }
}

impl ServerCore for Shared {
    fn layers(&self) -> &[Box<dyn Layer>] {
        &self.layers
    }

    fn options(&self) -> &ServerOptions {
        &self.options
    }

    fn sealer(&self) -> &Sealer {
        &self.sealer
    }

    fn state(&self) -> &Extensions {
        &self.state
    }

    fn large_results(&self) -> &LargeResults {
        &self.large_results
    }

    fn into_any(self: Arc<Self>) -> Arc<dyn Any + Send + Sync> {
        self
    }
}

impl RequestContext {
    /// The server handling the request, for example to add or remove tools.
    pub fn server(&self) -> Server {
        let shared = self.server_core().clone().into_any().downcast::<Shared>();
        Server { shared: shared.unwrap_or_else(|_| unreachable!("every request context holds a `Server`")) }
    }
}

impl std::fmt::Debug for Server {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Server").field("info", &self.shared.info).finish_non_exhaustive()
    }
}
