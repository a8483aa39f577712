//! An upstream as the gateway holds it, and what it offers, kind by kind: each of its tools,
//! prompts, resources and templates made into the gateway's own under its namespaced name.

use std::collections::BTreeSet;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};

use wharf_server::{Error, PromptDef, ResourceDef, TemplateDef, ToolDef, Update};

use crate::kind::Kind;
use crate::link::Link;
use crate::mount::Policy;
use crate::names::{UriPrefix, namespaced};
use crate::proxy;
use crate::views::{is_view, links_a_view, tool_meta, view_meta};

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
    /// How its resource URIs are listed on the gateway.
    pub(crate) prefix: UriPrefix,
    /// Which of its tools and prompts are offered, and how.
    pub(crate) policy: Arc<Policy>,
    /// Whether some of its tools, as last listed, name a view: its tools are listed again with
    /// its resources, so that a link never names a view that went.
    pub(crate) links_views: Arc<AtomicBool>,
}

impl Upstream {
    /// The URIs of the views the upstream lists now, as it lists them.
    async fn views(&self, client: &wharf_client::Client) -> Result<BTreeSet<String>, String> {
        if client.capabilities().resources.is_none() {
            return Ok(BTreeSet::new());
        }
        let resources = client.list_resources().await.map_err(|err| err.to_string())?;
        Ok(resources.into_iter().filter(is_view).map(|resource| resource.uri).collect())
    }

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
            Kind::Tool => {
                let tools = client.list_tools().await.map_err(|err| err.to_string())?;
                let links = tools.iter().any(links_a_view);
                self.links_views.store(links, Ordering::Relaxed);
                let views = if links { self.views(client).await? } else { BTreeSet::new() };
                tools
                    .into_iter()
                    .filter(|tool| {
                        let read_only = tool.annotations.as_ref().and_then(|annotations| annotations.read_only_hint);
                        policy.offers_tool(&tool.name, read_only)
                    })
                    .map(|tool| {
                        let original = tool.name.clone();
                        let name = namespaced(&self.namespace, &self.separator, policy.renamed(&original));
                        let meta = tool_meta(&link.mount, &tool, prefix, &views);
                        let mut proxy = proxy::tool(link, client, tool, name.clone()).scopes(policy.scopes(&original));
                        if let Some(description) = policy.description(&original) {
                            proxy = proxy.description(description);
                        }
                        if let Some(meta) = meta {
                            proxy = proxy.meta(meta);
                        }
                        (name, original, Component::Tool(proxy))
                    })
                    .collect()
            }
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
                .filter_map(|resource| {
                    let (name, original) = (prefix.outward(&resource.uri), resource.uri.clone());
                    let meta = if is_view(&resource) {
                        view_meta(&link.mount, &resource, &name)?
                    } else {
                        resource.meta.clone()
                    };
                    let component = Component::Resource(proxy::resource(link, resource, name.clone(), prefix, meta));
                    Some((name, original, component))
                })
                .collect(),
            Kind::Template => client
                .list_resource_templates()
                .await
                .map_err(|err| err.to_string())?
                .into_iter()
                .map(|template| {
                    let (name, original) = (prefix.outward(&template.uri_template), template.uri_template.clone());
                    let component = Component::Template(proxy::template(link, client, template, name.clone(), prefix));
                    (name, original, component)
                })
                .collect(),
        })
    }
}
