//! [`Mount`]: one upstream server under a name and a namespace: a program started on stdio, a
//! Streamable HTTP URL, or a `Server` in this process; and which of its tools and prompts the
//! gateway offers, under which names and descriptions, to whom.

use std::collections::BTreeMap;

use wharf_client::{ClientOptions, Target};
use wharf_protocol::Root;
use wharf_server::Server;
use wharf_server::glob_matches;

/// Where an upstream is.
#[derive(Debug, Clone)]
pub(crate) enum Source {
    /// A program started and spoken to on its stdin and stdout, or a URL.
    Target(Target),
    /// A server in this process, spoken to over an in-memory stream.
    InProcess(Server),
}

/// One upstream and how its tools and prompts appear on the gateway.
#[derive(Debug, Clone)]
pub struct Mount {
    pub(crate) name: String,
    pub(crate) source: Source,
    pub(crate) namespace: Option<String>,
    pub(crate) options: ClientOptions,
    pub(crate) policy: Policy,
    pub(crate) session_per_client: bool,
    pub(crate) roots: Option<Vec<Root>>,
    pub(crate) lazy: bool,
}

/// Which of a mount's tools and prompts the gateway offers, and how: by their upstream names.
#[derive(Debug, Clone, Default)]
pub(crate) struct Policy {
    include: Vec<String>,
    exclude: Vec<String>,
    read_only: bool,
    renames: BTreeMap<String, String>,
    descriptions: BTreeMap<String, String>,
    scopes: Vec<(String, Vec<String>)>,
}

impl Policy {
    /// True when the tool or prompt the upstream calls `name` is offered by name.
    pub(crate) fn offers(&self, name: &str) -> bool {
        let included = self.include.is_empty() || self.include.iter().any(|pattern| glob_matches(pattern, name));
        let excluded = self.exclude.iter().any(|pattern| glob_matches(pattern, name));
        included && !excluded
    }

    /// True when the tool the upstream calls `name`, read-only or not as its annotations say
    /// (`readOnlyHint`, unknown when absent), is offered.
    pub(crate) fn offers_tool(&self, name: &str, read_only: Option<bool>) -> bool {
        self.offers(name) && (!self.read_only || read_only == Some(true))
    }

    /// The name the gateway gives it, before the namespace.
    pub(crate) fn renamed<'a>(&'a self, name: &'a str) -> &'a str {
        self.renames.get(name).map_or(name, String::as_str)
    }

    /// The description the gateway gives it instead of the upstream's.
    pub(crate) fn description(&self, name: &str) -> Option<&str> {
        self.descriptions.get(name).map(String::as_str)
    }

    /// The scopes a principal needs to see and use it: those of every pattern it matches.
    pub(crate) fn scopes(&self, name: &str) -> Vec<String> {
        let mut scopes: Vec<String> = self
            .scopes
            .iter()
            .filter(|(pattern, _)| glob_matches(pattern, name))
            .flat_map(|(_, scopes)| scopes.iter().cloned())
            .collect();
        scopes.sort();
        scopes.dedup();
        scopes
    }
}

impl Mount {
    /// A program the gateway starts and speaks to on its stdin and stdout. The mount's name
    /// is its namespace unless [`Mount::namespace`] says otherwise.
    pub fn command<S: Into<String>>(
        name: impl Into<String>,
        program: impl Into<String>,
        args: impl IntoIterator<Item = S>,
    ) -> Mount {
        Mount::new(name.into(), Source::Target(Target::command(program, args)))
    }

    /// A Streamable HTTP endpoint.
    pub fn url(name: impl Into<String>, url: impl Into<String>) -> Mount {
        Mount::new(name.into(), Source::Target(Target::url(url)))
    }

    /// A server in this process: composition in code.
    pub fn server(name: impl Into<String>, server: Server) -> Mount {
        Mount::new(name.into(), Source::InProcess(server))
    }

    fn new(name: String, source: Source) -> Mount {
        Mount {
            name,
            source,
            namespace: None,
            options: ClientOptions::default(),
            policy: Policy::default(),
            session_per_client: false,
            roots: None,
            lazy: false,
        }
    }

    /// The namespace its tools and prompts are listed under (`NS_name`); `""` mounts them as
    /// they are, which is allowed when no name collides. Default: the mount's name.
    pub fn namespace(mut self, namespace: impl Into<String>) -> Mount {
        self.namespace = Some(namespace.into());
        self
    }

    /// How the gateway's client speaks to the upstream (its revision, timeout, headers, ...).
    pub fn client_options(mut self, options: ClientOptions) -> Mount {
        self.options = options;
        self
    }

    /// Offers only the tools and prompts whose upstream names match one of `patterns` (`*`
    /// stands for any characters, `?` for one). Every one unless called.
    pub fn include<S: Into<String>>(mut self, patterns: impl IntoIterator<Item = S>) -> Mount {
        self.policy.include.extend(patterns.into_iter().map(Into::into));
        self
    }

    /// Leaves out the tools and prompts whose upstream names match one of `patterns`.
    pub fn exclude<S: Into<String>>(mut self, patterns: impl IntoIterator<Item = S>) -> Mount {
        self.policy.exclude.extend(patterns.into_iter().map(Into::into));
        self
    }

    /// Offers only the tools the upstream marks read-only (`readOnlyHint`).
    pub fn read_only_tools(mut self) -> Mount {
        self.policy.read_only = true;
        self
    }

    /// Offers the upstream's tool or prompt `name` as `new_name` (before the namespace).
    pub fn rename(mut self, name: impl Into<String>, new_name: impl Into<String>) -> Mount {
        self.policy.renames.insert(name.into(), new_name.into());
        self
    }

    /// Describes the upstream's tool or prompt `name` with `description` instead of its own.
    pub fn describe(mut self, name: impl Into<String>, description: impl Into<String>) -> Mount {
        self.policy.descriptions.insert(name.into(), description.into());
        self
    }

    /// Requires `scopes` of whoever lists or uses the tools and prompts whose upstream names
    /// match `pattern`: a principal lacking one does not see them and is refused if it names
    /// them (with the gateway as an OAuth resource server; requests without a principal never
    /// see them). The gateway's clients' tokens never go upstream.
    pub fn scopes<S: Into<String>>(mut self, pattern: impl Into<String>, scopes: impl IntoIterator<Item = S>) -> Mount {
        self.policy.scopes.push((pattern.into(), scopes.into_iter().map(Into::into).collect()));
        self
    }

    /// Gives each client of the gateway an upstream session of its own, for an upstream that
    /// keeps state per session: a 2025 session's own (ended with it), or a principal's. By
    /// default one upstream session serves every client. Requests that belong to neither (a
    /// 2026-07-28 request without a principal) use the shared one.
    pub fn session_per_client(mut self) -> Mount {
        self.session_per_client = true;
        self
    }

    /// The roots the upstream is given when it asks for them (`roots/list`) and no request of
    /// one client of the gateway's can be told to ask: outside any request, as a program does
    /// when it starts, or on stdio while requests of several clients are in flight. `file://`
    /// URIs of the directories it may work in. A question that comes with one client's request
    /// still goes to that client. Without roots, such a question is refused: the gateway cannot
    /// tell whose client to ask.
    pub fn roots<S: Into<String>>(mut self, uris: impl IntoIterator<Item = S>) -> Mount {
        let roots = uris.into_iter().map(|uri| Root { uri: uri.into(), name: None, meta: None }).collect();
        self.roots = Some(roots);
        self
    }

    /// Starts the upstream when the gateway's first request comes (any request: its answer
    /// already counts the mount's tools, prompts and resources) rather than when the gateway is
    /// built: a gateway of many servers that is rarely used starts none of them until it is.
    /// A lazy mount that cannot be started then is left out and logged, and the other mounts
    /// serve. (Mounts added to a running gateway with [`GatewayHandle::mount`](crate::GatewayHandle::mount)
    /// start at once.)
    pub fn start_lazily(mut self) -> Mount {
        self.lazy = true;
        self
    }

    /// The mount's name, as logs and errors give it.
    pub fn name(&self) -> &str {
        &self.name
    }

    pub(crate) fn effective_namespace(&self) -> &str {
        self.namespace.as_deref().unwrap_or(&self.name)
    }
}
