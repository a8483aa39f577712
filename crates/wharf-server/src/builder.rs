//! [`ServerBuilder`]: a server's identity, options and components, gathered before it serves;
//! registration problems are collected and reported together.

use std::sync::Arc;
use std::time::Duration;

use wharf_protocol::{Icon, Implementation};

use crate::error::Error;
use crate::extensions::Extensions;
use crate::idempotency::{IdempotencyStore, MemoryIdempotencyStore};
use crate::input::seal::{Sealer, StateKey};
use crate::large_result::{LargeResults, ResultBudget, ResultStore, pages_template};
use crate::layer::Layer;
use crate::offer::Offer;
use crate::options::ServerOptions;
use crate::prompt::PromptDef;
use crate::registry::Registry;
use crate::resource::{ResourceDef, TemplateDef};
use crate::server::{Server, ServerParts};
use crate::task::Tasks;
use crate::task::store::{MemoryTaskStore, TaskStore};
use crate::tool::ToolDef;

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
            idempotency_store: None,
            large_results: LargeResults::default(),
            layers: Vec::new(),
        }
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
    idempotency_store: Option<Arc<dyn IdempotencyStore>>,
    large_results: LargeResults,
    layers: Vec<Box<dyn Layer>>,
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

    /// The server's tunable behaviour, taken whole (see [`ServerOptions`] for each option and
    /// its default).
    pub fn options(mut self, options: ServerOptions) -> ServerBuilder {
        self.options = options;
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

    /// Where the keys of tools with [`Idempotency`](crate::Idempotency) are claimed. Default: a
    /// [`MemoryIdempotencyStore`] of 10,000 keys and results of up to 1 MiB, good for one
    /// process; instances behind one load balancer need a store they share (Redis).
    pub fn idempotency_store(mut self, store: Arc<dyn IdempotencyStore>) -> ServerBuilder {
        self.idempotency_store = Some(store);
        self
    }

    /// The most of a tool result any client is handed at once, for tools that set no budget of
    /// their own ([`ToolDef::max_result`](crate::ToolDef::max_result)): a result over it is
    /// answered with a preview and a `resource_link` to the whole, which the caller reads in
    /// pages (`resources/read` of `wharf-result://ID?page=N`, each page within the budget).
    /// Off by default.
    pub fn max_result(mut self, budget: ResultBudget) -> ServerBuilder {
        self.large_results.default = Some(budget);
        self
    }

    /// The most of a tool result the clients whose `clientInfo.name` matches `pattern` (`*`
    /// and `?` wildcards) take: it caps the tool's and the server's budget, and applies alone
    /// where they set none. Claude Code, for one, refuses results over 25,000 tokens.
    pub fn max_result_for_client(mut self, pattern: impl Into<String>, budget: ResultBudget) -> ServerBuilder {
        self.large_results.per_client.push((pattern.into(), budget));
        self
    }

    /// Where results over their budget are kept to be read in pages. Default: a
    /// [`MemoryResultStore`](crate::MemoryResultStore) of 256 MiB, good for one process; instances behind one load
    /// balancer need a store they share (Redis).
    pub fn result_store(mut self, store: Arc<dyn ResultStore>) -> ServerBuilder {
        self.large_results.store = store;
        self
    }

    /// How long a result over its budget can be read (default: an hour).
    pub fn result_pages_ttl(mut self, ttl: Duration) -> ServerBuilder {
        self.large_results.ttl = ttl;
        self
    }

    /// Shared state that tool handlers receive with the `State<S>` extractor.
    pub fn state<S: Send + Sync + 'static>(self, state: S) -> ServerBuilder {
        self.state.insert(state);
        self
    }

    /// Registers a tool.
    pub fn tool(mut self, tool: ToolDef) -> ServerBuilder {
        if let Err(err) = self.registry.add(tool) {
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
        if let Err(err) = self.registry.add(prompt) {
            self.errors.push(err);
        }
        self
    }

    /// Registers a resource.
    pub fn resource(mut self, resource: ResourceDef) -> ServerBuilder {
        if let Err(err) = self.registry.add(resource) {
            self.errors.push(err);
        }
        self
    }

    /// Serves `skills` (the Skills extension): each listed by `skills/list`, its `SKILL.md`
    /// among the resources, its files readable as `skill://` resources. Replaces skills given
    /// before; [`Server::set_skills`] replaces them while the server runs.
    #[cfg(feature = "skills")]
    pub fn skills(mut self, skills: crate::skills::Skills) -> ServerBuilder {
        match skills.compile() {
            Ok(compiled) => self.compiled_skills(compiled),
            Err(err) => {
                self.errors.push(err);
                self
            }
        }
    }

    /// Serves skills compiled before ([`Skills::compile`](crate::Skills::compile)).
    #[cfg(feature = "skills")]
    pub fn compiled_skills(mut self, skills: crate::skills::CompiledSkills) -> ServerBuilder {
        if let Err(err) = self.registry.install_skills(skills.0) {
            self.errors.push(err);
        }
        self
    }

    /// Declares `offer` in the capabilities even while no such component is registered: for a
    /// server that gains them later ([`Server::update`]), since a client reads the capabilities
    /// only at `initialize`.
    pub fn offer(mut self, offer: Offer) -> ServerBuilder {
        self.registry.offered.add(offer);
        self
    }

    /// Registers a resource template.
    pub fn resource_template(mut self, template: TemplateDef) -> ServerBuilder {
        if let Err(err) = self.registry.add(template) {
            self.errors.push(err);
        }
        self
    }

    /// Finishes the server, or reports every registration problem at once.
    pub fn build(mut self) -> Result<Server, Error> {
        #[cfg(feature = "apps")]
        let errors = {
            let mut errors = self.errors;
            let tools = self.registry.tools.values().map(|tool| &**tool);
            errors.extend(crate::apps::problems(tools, &self.registry.resources));
            errors
        };
        #[cfg(not(feature = "apps"))]
        let errors = self.errors;
        if !errors.is_empty() {
            let messages: Vec<String> = errors.iter().map(ToString::to_string).collect();
            return Err(Error::registration(messages.join("; ")));
        }
        if self.info.name.is_empty() {
            return Err(Error::registration("the server needs a name"));
        }
        let mut keys = self.state_keys.into_iter();
        let sealing = match keys.next() {
            Some(key) => key,
            None => StateKey::random()
                .map_err(|err| Error::registration(format!("no random source for the request state key: {err}")))?,
        };
        let sealer = Sealer::new(sealing, keys.collect());
        let budgeted =
            self.large_results.configured() || self.registry.tools.values().any(|tool| tool.max_result.is_some());
        if budgeted {
            // The pages of results over a budget are read through a template of their own.
            self.registry.add(pages_template(self.large_results.store.clone()))?;
        }
        let task_store = self.task_store.unwrap_or_else(|| Arc::new(MemoryTaskStore::new(10_000)));
        let options = &self.options;
        let tasks = Tasks::new(task_store, options.task_ttl, options.task_poll_interval, options.max_tasks_per_owner);
        Server::new(ServerParts {
            info: self.info,
            instructions: self.instructions,
            options: self.options,
            registry: self.registry,
            state: self.state,
            sealer,
            tasks,
            large_results: self.large_results,
            idempotency: self.idempotency_store.unwrap_or_else(|| Arc::new(MemoryIdempotencyStore::default())),
            layers: self.layers,
        })
    }

    /// Adds middleware around every request (see [`Layer`]). The first layer added is the
    /// outermost: it sees each request first and its answer last. A server without layers
    /// pays nothing for them.
    pub fn layer(mut self, layer: impl Layer) -> ServerBuilder {
        self.layers.push(Box::new(layer));
        self
    }
}

impl std::fmt::Debug for ServerBuilder {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ServerBuilder").field("info", &self.info).finish_non_exhaustive()
    }
}
