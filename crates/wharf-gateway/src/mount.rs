//! [`Mount`]: one upstream server under a name and a namespace: a program started on stdio, a
//! Streamable HTTP URL, or a `Server` in this process.

use wharf_client::{ClientOptions, Target};
use wharf_server::Server;

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
        Mount { name, source, namespace: None, options: ClientOptions::default() }
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

    /// The mount's name, as logs and errors give it.
    pub fn name(&self) -> &str {
        &self.name
    }

    pub(crate) fn effective_namespace(&self) -> &str {
        self.namespace.as_deref().unwrap_or(&self.name)
    }
}
