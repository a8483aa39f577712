//! [`Gateway`]: mounts upstreams and yields a [`Server`] whose tools and prompts are theirs
//! under namespaces, so that every transport, authentication, middleware and store of Wharf
//! applies to the gateway unchanged.

use std::collections::HashMap;
use std::sync::Arc;

use wharf_server::{Server, ServerBuilder};

use crate::error::{GatewayError, GatewayErrorKind};
use crate::mount::Mount;
use crate::names::{check_name, namespaced, uri_prefix};
use crate::proxy;
use crate::upstream::connect;

/// Builds a gateway: `Gateway::new("name", "1.0.0").mount(...).build().await` gives a
/// [`Server`] to serve like any other.
#[derive(Debug)]
pub struct Gateway {
    builder: ServerBuilder,
    mounts: Vec<Mount>,
    separator: String,
}

impl Gateway {
    /// A gateway that names itself `name` and `version` to its clients.
    pub fn new(name: impl Into<String>, version: impl Into<String>) -> Gateway {
        Gateway::with_builder(Server::builder(name, version))
    }

    /// A gateway built on `builder`: its options, layers, state and own components come with
    /// it (a gateway may offer tools of its own beside the upstreams').
    pub fn with_builder(builder: ServerBuilder) -> Gateway {
        Gateway { builder, mounts: Vec::new(), separator: "_".to_owned() }
    }

    /// Adds an upstream.
    pub fn mount(mut self, mount: Mount) -> Gateway {
        self.mounts.push(mount);
        self
    }

    /// What joins a namespace and a name (`docs_search`). Default `_`.
    pub fn separator(mut self, separator: impl Into<String>) -> Gateway {
        self.separator = separator.into();
        self
    }

    /// Reaches every upstream, lists its tools, prompts, resources and resource templates, and
    /// builds the server. Fails
    /// naming the mount when one cannot be reached, and naming both sources when two offer the
    /// same name once namespaced.
    pub async fn build(self) -> Result<Server, GatewayError> {
        let Gateway { mut builder, mounts, separator } = self;
        let mut names = HashMap::<String, HashMap<String, String>>::new();
        let mut seen_mounts = HashMap::new();
        for mount in &mounts {
            if mount.name.trim().is_empty() {
                return Err(GatewayError::new(GatewayErrorKind::Mount, "a mount needs a name"));
            }
            if seen_mounts.insert(mount.name.clone(), ()).is_some() {
                return Err(GatewayError::new(
                    GatewayErrorKind::Mount,
                    format!("two mounts are named `{}`", mount.name),
                ));
            }
            let namespace = mount.effective_namespace();
            let client = connect(mount).await?;
            let listing = |what: &str, err: wharf_client::ClientError| {
                GatewayError::new(
                    GatewayErrorKind::Upstream,
                    format!("the mount `{}` did not list its {what}: {err}", mount.name),
                )
            };
            let capabilities = client.capabilities().clone();
            let mount_name: Arc<str> = mount.name.as_str().into();
            if capabilities.tools.is_some() {
                for tool in client.list_tools().await.map_err(|err| listing("tools", err))? {
                    let name = namespaced(namespace, &separator, &tool.name);
                    claim(&mut names, "tool", &name, &mount.name, &tool.name)?;
                    builder = builder.tool(proxy::tool(mount_name.clone(), client.clone(), tool, name));
                }
            }
            if capabilities.prompts.is_some() {
                for prompt in client.list_prompts().await.map_err(|err| listing("prompts", err))? {
                    let name = namespaced(namespace, &separator, &prompt.name);
                    claim(&mut names, "prompt", &name, &mount.name, &prompt.name)?;
                    builder = builder.prompt(proxy::prompt(mount_name.clone(), client.clone(), prompt, name));
                }
            }
            if capabilities.resources.is_some() {
                let prefix: Arc<str> = uri_prefix(namespace)
                    .map_err(|why| {
                        GatewayError::new(GatewayErrorKind::Mount, format!("the mount `{}`: {why}", mount.name))
                    })?
                    .into();
                for resource in client.list_resources().await.map_err(|err| listing("resources", err))? {
                    let uri = format!("{prefix}{}", resource.uri);
                    claim(&mut names, "resource", &uri, &mount.name, &resource.uri)?;
                    builder =
                        builder.resource(proxy::resource(mount_name.clone(), client.clone(), resource, prefix.clone()));
                }
                for template in
                    client.list_resource_templates().await.map_err(|err| listing("resource templates", err))?
                {
                    let uri = format!("{prefix}{}", template.uri_template);
                    claim(&mut names, "resource template", &uri, &mount.name, &template.uri_template)?;
                    builder = builder.resource_template(proxy::template(
                        mount_name.clone(),
                        client.clone(),
                        template,
                        prefix.clone(),
                    ));
                }
            }
        }
        builder.build().map_err(|err| GatewayError::new(GatewayErrorKind::Server, err.to_string()))
    }
}

/// Records that the mount `mount` offers `name` (its own `original`) as a `kind`; an error
/// naming both mounts when another already does, or when the name is not one every client
/// accepts.
fn claim(
    names: &mut HashMap<String, HashMap<String, String>>,
    kind: &str,
    name: &str,
    mount: &str,
    original: &str,
) -> Result<(), GatewayError> {
    if matches!(kind, "tool" | "prompt") {
        check_name(name).map_err(|why| {
            GatewayError::new(GatewayErrorKind::Mount, format!("the mount `{mount}` offers the {kind} {why}"))
        })?;
    }
    let taken = names.entry(kind.to_owned()).or_default();
    if let Some(other) = taken.get(name) {
        return Err(GatewayError::new(
            GatewayErrorKind::Collision,
            format!(
                "the {kind} `{name}` is offered by the mounts `{other}` and `{mount}` (as `{original}`): give one a namespace"
            ),
        ));
    }
    taken.insert(name.to_owned(), mount.to_owned());
    Ok(())
}
