//! [`Server`] and [`ServerBuilder`]: the server's identity, options and registry, and the
//! run-time API for changing what it offers.

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, PoisonError, RwLock, RwLockReadGuard, RwLockWriteGuard};
use std::time::Duration;

use tokio::sync::{broadcast, watch};
use wharf_protocol::{Icon, Implementation, JsonObject, META_SERVER_INFO, ProtocolVersion, ServerCapabilities};

use crate::error::Error;
use crate::extensions::Extensions;
use crate::input::seal::{Sealer, StateKey};
use crate::prompt::PromptDef;
use crate::registry::{ListKind, Registry};
use crate::resource::{ResourceDef, TemplateDef};
use crate::task::Tasks;
use crate::task::record::TaskRecord;
use crate::task::store::{MemoryTaskStore, TaskStore};
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
}

/// Tunable behaviour. Every option has a documented default.
#[derive(Debug, Clone)]
#[non_exhaustive]
pub struct ServerOptions {
    /// Items per page of every list. Default: 100.
    pub page_size: usize,
    /// How long to wait for the client to answer a server-to-client request (sampling,
    /// elicitation, roots). Default: 60 seconds.
    pub client_request_timeout: Duration,
    /// The `ttlMs` cache hint on 2026-07-28 lists, discovery and reads. Default: 0 (clients
    /// revalidate every time), because components can change at run time.
    pub cache_ttl: Duration,
    /// The longest stdio line accepted, in bytes. Default: 10 MiB.
    pub max_line_bytes: usize,
    /// Messages queued for one client before handlers wait. Default: 1024.
    pub outbound_queue: usize,
    /// Requests one connection may have in flight; beyond that the server stops reading until
    /// one finishes, so a client that pipelines without limit cannot make it grow without
    /// bound. Default: 64.
    pub max_in_flight: usize,
    /// How long the `requestState` of an `InputRequiredResult` stays valid (2026-07-28). The
    /// client's retry must come within it. Default: 10 minutes.
    pub request_state_lifetime: Duration,
    /// How long task records are kept after creation (`ttlMs`). Default: 1 hour.
    pub task_ttl: Option<Duration>,
    /// How often clients are told to poll tasks (`pollIntervalMs`). Default: 500 ms.
    pub task_poll_interval: Duration,
}

impl Default for ServerOptions {
    fn default() -> ServerOptions {
        ServerOptions {
            page_size: 100,
            client_request_timeout: Duration::from_secs(60),
            cache_ttl: Duration::ZERO,
            max_line_bytes: 10 * 1024 * 1024,
            outbound_queue: 1024,
            max_in_flight: 64,
            request_state_lifetime: Duration::from_secs(600),
            task_ttl: Some(Duration::from_secs(3600)),
            task_poll_interval: Duration::from_millis(500),
        }
    }
}

/// Something that every connection may need to hear about.
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum ServerEvent {
    ListChanged(ListKind),
    ResourceUpdated(Arc<str>),
    /// A task changed.
    Task(Arc<TaskRecord>),
}

impl Server {
    /// Starts building a server with its name and version.
    pub fn builder(name: impl Into<String>, version: impl Into<String>) -> ServerBuilder {
        ServerBuilder {
            info: Implementation { name: name.into(), version: version.into(), ..Implementation::default() },
            instructions: None,
            options: ServerOptions::default(),
            registry: Registry::default(),
            state: Extensions::new(),
            errors: Vec::new(),
            state_keys: Vec::new(),
            task_store: None,
        }
    }

    /// Seals `requestState` with the key named `id` from now on, and keeps accepting the key
    /// that sealed until now, so that requests in flight still finish. Give every instance
    /// of a deployment the same keys (see [`ServerBuilder::request_state_key`]).
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
    pub fn options(&self) -> &ServerOptions {
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

    fn registry_mut(&self) -> RwLockWriteGuard<'_, Registry> {
        self.shared.registry.write().unwrap_or_else(PoisonError::into_inner)
    }

    pub(crate) fn state<S: Send + Sync + 'static>(&self) -> Option<Arc<S>> {
        self.shared.state.get::<S>()
    }

    pub(crate) fn subscribe_events(&self) -> broadcast::Receiver<ServerEvent> {
        self.shared.events.subscribe()
    }

    pub(crate) fn next_connection_id(&self) -> String {
        format!("conn-{}", self.shared.next_connection.fetch_add(1, Ordering::Relaxed))
    }

    fn changed(&self, kind: ListKind) {
        // No receivers just means no client is connected.
        let _ = self.shared.events.send(ServerEvent::ListChanged(kind));
    }

    /// Adds a tool while the server runs; connected clients get `notifications/tools/list_changed`.
    pub fn add_tool(&self, tool: ToolDef) -> Result<(), Error> {
        self.registry_mut().add_tool(tool)?;
        self.changed(ListKind::Tools);
        Ok(())
    }

    /// Removes a tool; returns false if there was none by that name.
    pub fn remove_tool(&self, name: &str) -> bool {
        let removed = self.registry_mut().tools.remove(name).is_some();
        if removed {
            self.changed(ListKind::Tools);
        }
        removed
    }

    /// Enables or disables a tool; returns false if there is none by that name.
    pub fn set_tool_enabled(&self, name: &str, enabled: bool) -> bool {
        let changed = set_enabled(&mut self.registry_mut().tools, name, enabled, |tool| &mut tool.enabled);
        self.finish_toggle(changed, ListKind::Tools)
    }

    /// Adds a prompt while the server runs.
    pub fn add_prompt(&self, prompt: PromptDef) -> Result<(), Error> {
        self.registry_mut().add_prompt(prompt)?;
        self.changed(ListKind::Prompts);
        Ok(())
    }

    /// Removes a prompt; returns false if there was none by that name.
    pub fn remove_prompt(&self, name: &str) -> bool {
        let removed = self.registry_mut().prompts.remove(name).is_some();
        if removed {
            self.changed(ListKind::Prompts);
        }
        removed
    }

    /// Enables or disables a prompt; returns false if there is none by that name.
    pub fn set_prompt_enabled(&self, name: &str, enabled: bool) -> bool {
        let changed = set_enabled(&mut self.registry_mut().prompts, name, enabled, |prompt| &mut prompt.enabled);
        self.finish_toggle(changed, ListKind::Prompts)
    }

    /// Adds a resource while the server runs.
    pub fn add_resource(&self, resource: ResourceDef) -> Result<(), Error> {
        self.registry_mut().add_resource(resource)?;
        self.changed(ListKind::Resources);
        Ok(())
    }

    /// Removes a resource; returns false if there was none with that URI.
    pub fn remove_resource(&self, uri: &str) -> bool {
        let removed = self.registry_mut().resources.remove(uri).is_some();
        if removed {
            self.changed(ListKind::Resources);
        }
        removed
    }

    /// Enables or disables a resource; returns false if there is none with that URI.
    pub fn set_resource_enabled(&self, uri: &str, enabled: bool) -> bool {
        let changed = set_enabled(&mut self.registry_mut().resources, uri, enabled, |resource| &mut resource.enabled);
        self.finish_toggle(changed, ListKind::Resources)
    }

    /// Adds a resource template while the server runs.
    pub fn add_resource_template(&self, template: TemplateDef) -> Result<(), Error> {
        self.registry_mut().add_template(template)?;
        self.changed(ListKind::Resources);
        Ok(())
    }

    /// Removes a resource template; returns false if there was none with that template.
    pub fn remove_resource_template(&self, uri_template: &str) -> bool {
        let removed = self.registry_mut().templates.remove(uri_template).is_some();
        if removed {
            self.changed(ListKind::Resources);
        }
        removed
    }

    /// Enables or disables a resource template; returns false if there is none.
    pub fn set_resource_template_enabled(&self, uri_template: &str, enabled: bool) -> bool {
        let changed =
            set_enabled(&mut self.registry_mut().templates, uri_template, enabled, |template| &mut template.enabled);
        self.finish_toggle(changed, ListKind::Resources)
    }

    /// Tells every client subscribed to `uri` that the resource changed
    /// (`notifications/resources/updated`).
    pub fn notify_resource_updated(&self, uri: &str) {
        let _ = self.shared.events.send(ServerEvent::ResourceUpdated(uri.into()));
    }

    fn finish_toggle(&self, changed: Option<bool>, kind: ListKind) -> bool {
        match changed {
            Some(true) => {
                self.changed(kind);
                true
            }
            Some(false) => true,
            None => false,
        }
    }
}

/// Sets an entry's `enabled` flag. `None` if absent; `Some(changed)` otherwise.
fn set_enabled<V: Clone>(
    map: &mut std::collections::BTreeMap<String, Arc<V>>,
    key: &str,
    enabled: bool,
    flag: impl Fn(&mut V) -> &mut bool,
) -> Option<bool> {
    // `make_mut` copies the entry if a running handler still holds it, so that handler keeps
    // the definition it started with.
    let slot = flag(Arc::make_mut(map.get_mut(key)?));
    let changed = *slot != enabled;
    *slot = enabled;
    Some(changed)
}

impl std::fmt::Debug for Server {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Server").field("info", &self.shared.info).finish_non_exhaustive()
    }
}

/// Builds a [`Server`]. Registration problems are collected and reported together by
/// [`ServerBuilder::build`].
#[must_use]
pub struct ServerBuilder {
    info: Implementation,
    instructions: Option<String>,
    options: ServerOptions,
    registry: Registry,
    state: Extensions,
    errors: Vec<Error>,
    /// Sealing keys, the first seals; empty means a random key for this process.
    state_keys: Vec<StateKey>,
    task_store: Option<Arc<dyn TaskStore>>,
}

impl ServerBuilder {
    /// A human-readable name.
    pub fn title(mut self, title: impl Into<String>) -> ServerBuilder {
        self.info.title = Some(title.into());
        self
    }

    /// A description of the server.
    pub fn description(mut self, description: impl Into<String>) -> ServerBuilder {
        self.info.description = Some(description.into());
        self
    }

    /// The server's website.
    pub fn website_url(mut self, url: impl Into<String>) -> ServerBuilder {
        self.info.website_url = Some(url.into());
        self
    }

    /// Adds an icon.
    pub fn icon(mut self, icon: Icon) -> ServerBuilder {
        self.info.icons.get_or_insert_with(Vec::new).push(icon);
        self
    }

    /// How to use the server, for the model.
    pub fn instructions(mut self, instructions: impl Into<String>) -> ServerBuilder {
        self.instructions = Some(instructions.into());
        self
    }

    /// Items per page of every list. Default: 100.
    pub fn page_size(mut self, page_size: usize) -> ServerBuilder {
        self.options.page_size = page_size.max(1);
        self
    }

    /// How long to wait for the client to answer sampling, elicitation and roots requests.
    /// Default: 60 seconds.
    pub fn client_request_timeout(mut self, timeout: Duration) -> ServerBuilder {
        self.options.client_request_timeout = timeout;
        self
    }

    /// The `ttlMs` cache hint of 2026-07-28 results. Default: 0.
    pub fn cache_ttl(mut self, ttl: Duration) -> ServerBuilder {
        self.options.cache_ttl = ttl;
        self
    }

    /// The longest stdio line accepted, in bytes. Default: 10 MiB.
    pub fn max_line_bytes(mut self, bytes: usize) -> ServerBuilder {
        self.options.max_line_bytes = bytes.max(64);
        self
    }

    /// Requests one connection may have in flight before the server stops reading (1 to 65,536).
    /// Default: 64.
    pub fn max_in_flight(mut self, requests: usize) -> ServerBuilder {
        self.options.max_in_flight = requests.clamp(1, 1 << 16);
        self
    }

    /// The key that seals `requestState` (2026-07-28 multi round-trip requests), named `id`.
    /// Without one, each process makes a random key, so only it understands its state; servers
    /// behind a load balancer must share a key. Call again to add keys that are still
    /// accepted: the first key seals, the others only open.
    pub fn request_state_key(mut self, id: &str, secret: &[u8]) -> ServerBuilder {
        if secret.len() < 32 {
            self.errors.push(Error::registration(format!(
                "the request state key `{id}` has {} bytes; use at least 32 random bytes",
                secret.len()
            )));
        }
        self.state_keys.push(StateKey::new(id, secret));
        self
    }

    /// Where task records are kept. Default: a [`MemoryTaskStore`] for 10,000 live tasks.
    pub fn task_store(mut self, store: Arc<dyn TaskStore>) -> ServerBuilder {
        self.task_store = Some(store);
        self
    }

    /// How long a task's record is kept after it was created (`ttlMs`); `None` keeps records
    /// as long as the store does. Default: 1 hour.
    pub fn task_ttl(mut self, ttl: Option<Duration>) -> ServerBuilder {
        self.options.task_ttl = ttl;
        self
    }

    /// How long the `requestState` of an `InputRequiredResult` stays valid. Default: 10 minutes.
    pub fn request_state_lifetime(mut self, lifetime: Duration) -> ServerBuilder {
        self.options.request_state_lifetime = lifetime;
        self
    }

    /// Shared state that tool handlers receive with the `State<S>` extractor.
    pub fn state<S: Send + Sync + 'static>(self, state: S) -> ServerBuilder {
        self.state.insert(state);
        self
    }

    /// Registers a tool.
    pub fn tool(mut self, tool: ToolDef) -> ServerBuilder {
        if let Err(err) = self.registry.add_tool(tool) {
            self.errors.push(err);
        }
        self
    }

    /// Registers several tools, such as the `tool_defs()` of an impl block under `#[tool]`.
    pub fn tools(self, tools: impl IntoIterator<Item = ToolDef>) -> ServerBuilder {
        tools.into_iter().fold(self, ServerBuilder::tool)
    }

    /// Registers a prompt.
    pub fn prompt(mut self, prompt: PromptDef) -> ServerBuilder {
        if let Err(err) = self.registry.add_prompt(prompt) {
            self.errors.push(err);
        }
        self
    }

    /// Registers a resource.
    pub fn resource(mut self, resource: ResourceDef) -> ServerBuilder {
        if let Err(err) = self.registry.add_resource(resource) {
            self.errors.push(err);
        }
        self
    }

    /// Registers a resource template.
    pub fn resource_template(mut self, template: TemplateDef) -> ServerBuilder {
        if let Err(err) = self.registry.add_template(template) {
            self.errors.push(err);
        }
        self
    }

    /// Finishes the server, or reports every registration problem at once.
    pub fn build(self) -> Result<Server, Error> {
        if !self.errors.is_empty() {
            let messages: Vec<String> = self.errors.iter().map(ToString::to_string).collect();
            return Err(Error::registration(messages.join("; ")));
        }
        if self.info.name.is_empty() {
            return Err(Error::registration("the server needs a name"));
        }
        let mut server_info_meta = JsonObject::new();
        server_info_meta
            .insert(META_SERVER_INFO.to_owned(), serde_json::to_value(&self.info).unwrap_or(serde_json::Value::Null));
        let server_info_meta_json = serde_json::value::to_raw_value(&server_info_meta)
            .map_err(|err| Error::registration(format!("the server info cannot be encoded: {err}")))?;
        let (events, _) = broadcast::channel(64);
        let mut keys = self.state_keys.into_iter();
        let sealing = match keys.next() {
            Some(key) => key,
            None => StateKey::random()
                .map_err(|err| Error::registration(format!("no random source for the request state key: {err}")))?,
        };
        let sealer = Sealer::new(sealing, keys.collect());
        let task_store = self.task_store.unwrap_or_else(|| Arc::new(MemoryTaskStore::new(10_000)));
        let tasks = Tasks::new(task_store, self.options.task_ttl, self.options.task_poll_interval);
        Ok(Server {
            shared: Arc::new(Shared {
                info: self.info,
                server_info_meta,
                server_info_meta_json,
                instructions: self.instructions,
                options: self.options,
                registry: RwLock::new(self.registry),
                events,
                state: self.state,
                next_connection: AtomicU64::new(1),
                sealer,
                subscriptions_epoch: watch::channel(0).0,
                tasks,
            }),
        })
    }
}

impl std::fmt::Debug for ServerBuilder {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ServerBuilder").field("info", &self.info).finish_non_exhaustive()
    }
}
