//! An upstream as the gateway holds it, and what it offers, kind by kind: each of its tools,
//! prompts, resources and templates made into the gateway's own under its namespaced name.

use std::sync::Arc;

use wharf_protocol::VIEW_SCHEME;
use wharf_server::{Error, PromptDef, ResourceDef, TemplateDef, ToolDef, Update};

use crate::kind::Kind;
use crate::link::Link;
use crate::mount::Policy;
use crate::names::namespaced;
use crate::proxy;

/// One of the gateway's components standing for an upstream's.
pub(crate) enum Component {
    Tool(ToolDef),
    Prompt(PromptDef),
    Resource(ResourceDef),
    Template(TemplateDef),
}

impl Component {
    pub(crate) fn add(self, update: &mut Update) -> Result<(), Error> {
        match self {
            Component::Tool(tool) => update.add_tool(tool),
            Component::Prompt(prompt) => update.add_prompt(prompt),
            Component::Resource(resource) => update.add_resource(resource),
            Component::Template(template) => update.add_resource_template(template),
        }
    }
}

/// Adds each of `components` (each the gateway's `name` for an upstream's component of `mount`)
/// to `update`, leaving out those the server refuses (an invalid schema, say), each logged
/// with why: one bad component does not keep the rest of a mount from being served. Never
/// fails.
pub(crate) fn add_each(update: &mut Update, mount: &str, components: Vec<(String, Component)>) -> Result<(), Error> {
    for (name, component) in components {
        if let Err(err) = component.add(update) {
            tracing::warn!(mount, component = %name, %err, "an upstream's component is left out: the gateway cannot serve it");
        }
    }
    Ok(())
}

/// Removes the gateway's component of `kind` listed as `name`.
pub(crate) fn remove(update: &mut Update, kind: Kind, name: &str) {
    let _ = match kind {
        Kind::Tool => update.remove_tool(name),
        Kind::Prompt => update.remove_prompt(name),
        Kind::Resource => update.remove_resource(name),
        Kind::Template => update.remove_resource_template(name),
    };
}

/// One mounted upstream: its client, and the names its components take on the gateway.
#[derive(Clone)]
pub(crate) struct Upstream {
    pub(crate) link: Link,
    pub(crate) namespace: String,
    pub(crate) separator: String,
    /// What goes before its resource URIs.
    pub(crate) prefix: Arc<str>,
    /// Which of its tools and prompts are offered, and how.
    pub(crate) policy: Arc<Policy>,
}

impl Upstream {
    /// What the upstream offers of `kind` now, each with the name it takes on the gateway and
    /// the name it has upstream; nothing when the upstream does not offer the kind at all.
    pub(crate) async fn list(&self, kind: Kind) -> Result<Vec<(String, String, Component)>, String> {
        let client = &self.link.client().map_err(|down| down.message().to_owned())?;
        let capabilities = client.capabilities();
        let offered = match kind {
            Kind::Tool => capabilities.tools.is_some(),
            Kind::Prompt => capabilities.prompts.is_some(),
            Kind::Resource | Kind::Template => capabilities.resources.is_some(),
        };
        if !offered {
            return Ok(Vec::new());
        }
        let (link, prefix, policy) = (&self.link, &self.prefix, &self.policy);
        Ok(match kind {
            Kind::Tool => client
                .list_tools()
                .await
                .map_err(|err| err.to_string())?
                .into_iter()
                .filter(|tool| {
                    let read_only = tool.annotations.as_ref().and_then(|annotations| annotations.read_only_hint);
                    policy.offers_tool(&tool.name, read_only)
                })
                .map(|tool| {
                    let original = tool.name.clone();
                    let name = namespaced(&self.namespace, &self.separator, policy.renamed(&original));
                    let mut proxy = proxy::tool(link, client, tool, name.clone()).scopes(policy.scopes(&original));
                    if let Some(description) = policy.description(&original) {
                        proxy = proxy.description(description);
                    }
                    (name, original, Component::Tool(proxy))
                })
                .collect(),
            Kind::Prompt => client
                .list_prompts()
                .await
                .map_err(|err| err.to_string())?
                .into_iter()
                .filter(|prompt| policy.offers(&prompt.name))
                .map(|prompt| {
                    let original = prompt.name.clone();
                    let name = namespaced(&self.namespace, &self.separator, policy.renamed(&original));
                    let mut proxy = proxy::prompt(link, client, prompt, name.clone()).scopes(policy.scopes(&original));
                    if let Some(description) = policy.description(&original) {
                        proxy = proxy.description(description);
                    }
                    (name, original, Component::Prompt(proxy))
                })
                .collect(),
            Kind::Resource => client
                .list_resources()
                .await
                .map_err(|err| err.to_string())?
                .into_iter()
                // An MCP Apps view behind a namespace would lose the `ui://` hosts render by:
                // it is not offered (see the guide's gateway chapter).
                .filter(|resource| prefix.is_empty() || !resource.uri.starts_with(VIEW_SCHEME))
                .map(|resource| {
                    let (name, original) = (format!("{prefix}{}", resource.uri), resource.uri.clone());
                    let component = Component::Resource(proxy::resource(link, resource, prefix.clone()));
                    (name, original, component)
                })
                .collect(),
            Kind::Template => client
                .list_resource_templates()
                .await
                .map_err(|err| err.to_string())?
                .into_iter()
                .map(|template| {
                    let (name, original) =
                        (format!("{prefix}{}", template.uri_template), template.uri_template.clone());
                    let component = Component::Template(proxy::template(link, client, template, prefix.clone()));
                    (name, original, component)
                })
                .collect(),
        })
    }
}
