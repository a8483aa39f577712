//! The registry of tools, prompts, resources and resource templates, kept sorted by name so
//! that every list is in a deterministic order and cursors stay valid while it changes.

use std::collections::BTreeMap;
use std::sync::Arc;

use base64::Engine as _;
use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use wharf_protocol::{ListChangedCapability, ResourcesCapability, ServerCapabilities};

use crate::error::{Error, RpcError};
use crate::events::ListKind;
use crate::offer::Offered;
use crate::prompt::PromptDef;
use crate::resource::{ResourceDef, TemplateDef};
use crate::scopes::Scopes;
#[cfg(feature = "skills")]
use crate::skills::catalog::Catalog;
use crate::task::TaskSupport;
use crate::tool::ToolDef;

/// Everything the server offers; cloned (the components are shared) to be changed as a whole.
#[derive(Default, Clone)]
pub(crate) struct Registry {
    pub(crate) tools: BTreeMap<String, Arc<ToolDef>>,
    pub(crate) prompts: BTreeMap<String, Arc<PromptDef>>,
    pub(crate) resources: BTreeMap<String, Arc<ResourceDef>>,
    pub(crate) templates: BTreeMap<String, Arc<TemplateDef>>,
    /// How many components require scopes: while any does, what a principal is shown depends
    /// on who it is.
    scoped: usize,
    /// Kinds declared even while none is registered.
    pub(crate) offered: Offered,
    /// The skills served, whose `SKILL.md`s are among `resources` too.
    #[cfg(feature = "skills")]
    pub(crate) skills: Option<Arc<Catalog>>,
}

/// One kind of component, as the registry keeps it: adding, removing, enabling and listing
/// are one path for all four kinds.
pub(crate) trait Component: Clone + Send + Sync + 'static {
    /// The list a change of this kind touches.
    const LIST: ListKind;
    /// What the component is called in messages.
    const WHAT: &'static str;
    /// The key it is registered under: its name, URI or URI template.
    fn key(&self) -> &str;
    /// Whether it is listed and served.
    fn enabled(&self) -> bool;
    /// Sets whether it is listed and served.
    fn set_enabled(&mut self, enabled: bool);
    /// Checks everything that can be wrong with the definition.
    fn validate(&mut self) -> Result<(), Error>;
    /// What a principal must be granted to see and use it.
    fn scopes(&self) -> &Scopes;
    /// The registered components of this kind.
    fn entries(registry: &Registry) -> &BTreeMap<String, Arc<Self>>;
    /// The registered components of this kind, to change.
    fn entries_mut(registry: &mut Registry) -> &mut BTreeMap<String, Arc<Self>>;
}

macro_rules! component {
    ($component:ty, $list:expr, $what:literal, $entries:ident, $key:ident) => {
        impl Component for $component {
            const LIST: ListKind = $list;
            const WHAT: &'static str = $what;

            fn key(&self) -> &str {
                self.$key()
            }

            fn enabled(&self) -> bool {
                self.enabled
            }

            fn set_enabled(&mut self, enabled: bool) {
                self.enabled = enabled;
            }

            fn validate(&mut self) -> Result<(), Error> {
                <$component>::validate(self)
            }

            fn scopes(&self) -> &Scopes {
                &self.scopes
            }

            fn entries(registry: &Registry) -> &BTreeMap<String, Arc<Self>> {
                &registry.$entries
            }

            fn entries_mut(registry: &mut Registry) -> &mut BTreeMap<String, Arc<Self>> {
                &mut registry.$entries
            }
        }
    };
}

component!(ToolDef, ListKind::Tools, "tool", tools, name);
component!(PromptDef, ListKind::Prompts, "prompt", prompts, name);
component!(ResourceDef, ListKind::Resources, "resource", resources, uri);
component!(TemplateDef, ListKind::Resources, "resource template", templates, uri_template);

impl Registry {
    /// Registers a component; its key must be new.
    pub(crate) fn add<C: Component>(&mut self, mut component: C) -> Result<(), Error> {
        component.validate()?;
        let key = component.key().to_owned();
        component.scopes().check().map_err(|message| Error::registration(format!("{} `{key}`: {message}", C::WHAT)))?;
        if C::entries_mut(self).contains_key(&key) {
            return Err(Error::registration(format!("{} `{key}` is registered twice; names must be unique", C::WHAT)));
        }
        self.scoped += usize::from(!component.scopes().is_empty());
        C::entries_mut(self).insert(key, Arc::new(component));
        Ok(())
    }

    /// Removes a component; false if there was none under `key`.
    pub(crate) fn remove<C: Component>(&mut self, key: &str) -> bool {
        let Some(removed) = C::entries_mut(self).remove(key) else { return false };
        self.scoped -= usize::from(!removed.scopes().is_empty());
        true
    }

    /// True while some component requires scopes, so that lists and reads differ by principal.
    pub(crate) fn is_scoped(&self) -> bool {
        self.scoped > 0
    }

    /// Sets a component's `enabled` flag: `None` if there is none under `key`, else whether
    /// the flag changed.
    pub(crate) fn set_enabled<C: Component>(&mut self, key: &str, enabled: bool) -> Option<bool> {
        // `make_mut` copies the entry if a running handler still holds it, so that handler
        // keeps the definition it started with.
        let component = Arc::make_mut(C::entries_mut(self).get_mut(key)?);
        let changed = component.enabled() != enabled;
        component.set_enabled(enabled);
        Some(changed)
    }

    pub(crate) fn tool(&self, name: &str) -> Option<&Arc<ToolDef>> {
        self.tools.get(name).filter(|tool| tool.enabled)
    }

    pub(crate) fn prompt(&self, name: &str) -> Option<Arc<PromptDef>> {
        self.prompts.get(name).filter(|prompt| prompt.enabled).cloned()
    }

    pub(crate) fn resource(&self, uri: &str) -> Option<Arc<ResourceDef>> {
        self.resources.get(uri).filter(|resource| resource.enabled).cloned()
    }

    pub(crate) fn template(&self, uri_template: &str) -> Option<Arc<TemplateDef>> {
        self.templates.get(uri_template).filter(|template| template.enabled).cloned()
    }

    /// The first enabled template that matches `uri`, with its variables.
    pub(crate) fn match_template(&self, uri: &str) -> Option<(Arc<TemplateDef>, BTreeMap<String, String>)> {
        self.templates
            .values()
            .filter(|template| template.enabled)
            .find_map(|template| template.matches(uri).map(|variables| (template.clone(), variables)))
    }

    pub(crate) fn has_tools(&self) -> bool {
        self.offered.tools || !self.tools.is_empty()
    }

    pub(crate) fn has_prompts(&self) -> bool {
        self.offered.prompts || !self.prompts.is_empty()
    }

    pub(crate) fn has_resources(&self) -> bool {
        #[cfg(feature = "skills")]
        if self.skills.is_some() {
            // Skill files are read as resources, even when there are no skills yet.
            return true;
        }
        self.offered.resources || !self.resources.is_empty() || !self.templates.is_empty()
    }

    pub(crate) fn has_task_tools(&self) -> bool {
        self.tools.values().any(|tool| tool.task_support != TaskSupport::Forbidden)
    }

    pub(crate) fn has_completions(&self) -> bool {
        self.offered.completions
            || self.prompts.values().any(|prompt| !prompt.completions.is_empty())
            || self.templates.values().any(|template| !template.completions.is_empty())
    }

    /// The capabilities that follow from what is registered. Components can change at run
    /// time, so list changes are always offered (to sessions, and on 2026-07-28 to listeners),
    /// and so are resource subscriptions.
    pub(crate) fn capabilities(&self) -> ServerCapabilities {
        let list_changed_capability = || ListChangedCapability { list_changed: Some(true) };
        ServerCapabilities {
            logging: Some(Default::default()),
            completions: self.has_completions().then(Default::default),
            tools: self.has_tools().then(list_changed_capability),
            prompts: self.has_prompts().then(list_changed_capability),
            resources: self
                .has_resources()
                .then_some(ResourcesCapability { subscribe: Some(true), list_changed: Some(true) }),
            extensions: self.extensions(),
            ..ServerCapabilities::default()
        }
    }

    /// The extensions served: tasks where a tool supports them, skills where there are any, MCP
    /// Apps where there is a view.
    fn extensions(&self) -> Option<wharf_protocol::JsonObject> {
        let mut extensions = wharf_protocol::JsonObject::new();
        if self.has_task_tools() {
            extensions.insert(wharf_protocol::TASKS_EXTENSION.to_owned(), serde_json::json!({}));
        }
        #[cfg(feature = "skills")]
        if let Some(skills) = &self.skills {
            let settings =
                if skills.directory_read { serde_json::json!({"directoryRead": true}) } else { serde_json::json!({}) };
            extensions.insert(wharf_protocol::SKILLS_EXTENSION.to_owned(), settings);
        }
        #[cfg(feature = "apps")]
        if self.resources.values().any(|resource| resource.is_view()) {
            extensions.insert(wharf_protocol::UI_EXTENSION.to_owned(), serde_json::json!({}));
        }
        (!extensions.is_empty()).then_some(extensions)
    }

    /// Serves no skills: their `SKILL.md`s leave the resources. Returns the files that were
    /// served.
    #[cfg(feature = "skills")]
    pub(crate) fn remove_skills(&mut self) -> Vec<String> {
        let Some(previous) = self.skills.take() else { return Vec::new() };
        for uri in previous.entries.keys() {
            self.resources.remove(uri);
        }
        previous.file_uris()
    }

    /// Serves `catalog` instead of the skills before, each `SKILL.md` listed as a resource;
    /// refused, with nothing changed, when one of them is a URI another resource has. Returns
    /// the files whose contents changed, or which are gone.
    #[cfg(feature = "skills")]
    pub(crate) fn install_skills(&mut self, catalog: Catalog) -> Result<Vec<String>, Error> {
        let previous = self.skills.take();
        let was_skill = |uri: &str| previous.as_ref().is_some_and(|previous| previous.entry(uri).is_some());
        if let Some(taken) = catalog.entries.keys().find(|uri| self.resources.contains_key(*uri) && !was_skill(uri)) {
            self.skills = previous;
            return Err(Error::registration(format!("the skill file {taken} is already a registered resource")));
        }
        let mut updated = Vec::new();
        if let Some(previous) = &previous {
            for uri in previous.entries.keys() {
                self.resources.remove(uri);
            }
            updated = previous.changed_files(&catalog);
        }
        for (uri, entry) in &catalog.entries {
            let listed = ResourceDef::text(uri.clone(), entry.name.clone(), entry.skill_md.clone())
                .mime_type("text/markdown")
                .description(entry.description.clone());
            self.resources.insert(uri.clone(), Arc::new(listed));
        }
        self.skills = Some(Arc::new(catalog));
        Ok(updated)
    }
}

/// One page of a list: the items after the cursor, and the cursor of the next page.
pub(crate) fn page<'a, V>(
    map: &'a BTreeMap<String, Arc<V>>,
    cursor: Option<&str>,
    size: usize,
    enabled: impl Fn(&V) -> bool,
) -> Result<(Vec<&'a Arc<V>>, Option<String>), RpcError> {
    let after = cursor.map(decode_cursor).transpose()?;
    let range = match &after {
        Some(key) => map.range::<str, _>((std::ops::Bound::Excluded(key.as_str()), std::ops::Bound::Unbounded)),
        None => map.range::<str, _>(..),
    };
    let mut items = Vec::new();
    let mut last_key = None;
    let mut more = false;
    for (key, value) in range.filter(|(_, value)| enabled(value)) {
        if items.len() == size {
            more = true;
            break;
        }
        items.push(value);
        last_key = Some(key);
    }
    let next = if more { last_key.map(|key| encode_cursor(key)) } else { None };
    Ok((items, next))
}

pub(crate) fn encode_cursor(key: &str) -> String {
    URL_SAFE_NO_PAD.encode(format!("v1:{key}"))
}

pub(crate) fn decode_cursor(cursor: &str) -> Result<String, RpcError> {
    let invalid = || RpcError::invalid_params(format!("Invalid cursor: `{cursor}` was not issued by this server"));
    let bytes = URL_SAFE_NO_PAD.decode(cursor).map_err(|_| invalid())?;
    let text = String::from_utf8(bytes).map_err(|_| invalid())?;
    text.strip_prefix("v1:").map(str::to_owned).ok_or_else(invalid)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pages_follow_each_other_and_bad_cursors_are_refused() {
        let map: BTreeMap<String, Arc<u32>> = (0..5).map(|n| (format!("k{n}"), Arc::new(n))).collect();
        let (first, next) = page(&map, None, 2, |_| true).unwrap();
        assert_eq!(first.iter().map(|v| ***v).collect::<Vec<_>>(), vec![0, 1]);
        let (second, next) = page(&map, next.as_deref(), 2, |_| true).unwrap();
        assert_eq!(second.iter().map(|v| ***v).collect::<Vec<_>>(), vec![2, 3]);
        let (third, next) = page(&map, next.as_deref(), 2, |_| true).unwrap();
        assert_eq!(third.iter().map(|v| ***v).collect::<Vec<_>>(), vec![4]);
        assert_eq!(next, None);
        assert_eq!(page(&map, Some("garbage!"), 2, |_| true).unwrap_err().code(), -32602);
        assert_eq!(page(&map, Some(&URL_SAFE_NO_PAD.encode("v2:x")), 2, |_| true).unwrap_err().code(), -32602);
    }

    #[test]
    fn disabled_items_are_skipped() {
        let map: BTreeMap<String, Arc<u32>> = (0..4).map(|n| (format!("k{n}"), Arc::new(n))).collect();
        let (items, next) = page(&map, None, 10, |v| v % 2 == 0).unwrap();
        assert_eq!(items.iter().map(|v| ***v).collect::<Vec<_>>(), vec![0, 2]);
        assert_eq!(next, None);
    }
}
