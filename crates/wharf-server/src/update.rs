//! [`Update`]: several components added and removed as one change, which requests see whole or
//! not at all, and which tells clients of each list it changed once.

use std::collections::BTreeMap;
use std::sync::Arc;

use crate::error::Error;
use crate::events::{ListKind, ServerEvent};
use crate::prompt::PromptDef;
use crate::registry::{Component, Registry};
use crate::resource::{ResourceDef, TemplateDef};
use crate::scopes::Scopes;
use crate::server::Server;
use crate::tool::ToolDef;

/// The components of a server being changed together; see [`Server::update`].
pub struct Update {
    registry: Registry,
    updated: Vec<String>,
}

impl std::fmt::Debug for Update {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Update").field("updated", &self.updated).finish_non_exhaustive()
    }
}

impl Update {
    /// Adds a tool; its name must be new.
    pub fn add_tool(&mut self, tool: ToolDef) -> Result<(), Error> {
        self.registry.add(tool)
    }

    /// Removes a tool; false if there was none of that name.
    pub fn remove_tool(&mut self, name: &str) -> bool {
        self.registry.remove::<ToolDef>(name)
    }

    /// Adds a prompt; its name must be new.
    pub fn add_prompt(&mut self, prompt: PromptDef) -> Result<(), Error> {
        self.registry.add(prompt)
    }

    /// Removes a prompt; false if there was none of that name.
    pub fn remove_prompt(&mut self, name: &str) -> bool {
        self.registry.remove::<PromptDef>(name)
    }

    /// Adds a resource; its URI must be new.
    pub fn add_resource(&mut self, resource: ResourceDef) -> Result<(), Error> {
        self.registry.add(resource)
    }

    /// Removes a resource; false if there was none at that URI.
    pub fn remove_resource(&mut self, uri: &str) -> bool {
        self.registry.remove::<ResourceDef>(uri)
    }

    /// Adds a resource template; its template must be new.
    pub fn add_resource_template(&mut self, template: TemplateDef) -> Result<(), Error> {
        self.registry.add(template)
    }

    /// Removes a resource template; false if there was none.
    pub fn remove_resource_template(&mut self, uri_template: &str) -> bool {
        self.registry.remove::<TemplateDef>(uri_template)
    }

    /// Serves `skills` instead of the skills before (see [`Server::set_skills`]). They are
    /// compiled here, every file hashed, while requests wait: compile them before the update
    /// ([`Skills::compile`](crate::Skills::compile)) to serve them at once.
    #[cfg(feature = "skills")]
    pub fn set_skills(&mut self, skills: crate::skills::Skills) -> Result<(), Error> {
        self.set_compiled_skills(skills.compile()?)
    }

    /// Serves skills compiled before.
    #[cfg(feature = "skills")]
    pub fn set_compiled_skills(&mut self, skills: crate::skills::CompiledSkills) -> Result<(), Error> {
        let updated = self.registry.install_skills(skills.0)?;
        self.updated.extend(updated);
        Ok(())
    }

    /// Serves no skills any more: the extension is no longer declared.
    #[cfg(feature = "skills")]
    pub fn clear_skills(&mut self) {
        let gone = self.registry.remove_skills();
        self.updated.extend(gone);
    }

    /// Tells the subscribers of `uri`, once the change is made, that its contents changed.
    pub fn resource_updated(&mut self, uri: impl Into<String>) {
        self.updated.push(uri.into());
    }

    /// The names of the tools registered now, in order.
    pub fn tool_names(&self) -> Vec<String> {
        self.registry.tools.keys().cloned().collect()
    }

    /// The names of the prompts registered now, in order.
    pub fn prompt_names(&self) -> Vec<String> {
        self.registry.prompts.keys().cloned().collect()
    }

    /// The URIs of the resources registered now, in order.
    pub fn resource_uris(&self) -> Vec<String> {
        self.registry.resources.keys().cloned().collect()
    }
}

impl Server {
    /// Makes several changes at once: `change` adds and removes components on a copy of the
    /// registry, which replaces the registry only if it returns `Ok` (and, with the `apps`
    /// feature, every tool's view is still there and well formed). A request sees the
    /// components from before or after, never a mix; on an error nothing changed. Clients are
    /// told once of each list whose listed definitions differ afterwards, and subscribers of
    /// each resource named with [`Update::resource_updated`].
    ///
    /// Requests wait while `change` runs: it should do nothing slow, and must not call this
    /// server's other methods, which would wait for it for ever.
    pub fn update(&self, change: impl FnOnce(&mut Update) -> Result<(), Error>) -> Result<(), Error> {
        let mut registry = self.registry_mut();
        let mut update = Update { registry: registry.clone(), updated: Vec::new() };
        change(&mut update)?;
        // The views and the tools linked to them are checked as `build` checks them: an update
        // that leaves a tool without its view changes nothing.
        #[cfg(feature = "apps")]
        {
            let tools = update.registry.tools.values().map(|tool| &**tool);
            let problems = crate::apps::problems(tools, &update.registry.resources);
            if !problems.is_empty() {
                let messages: Vec<String> = problems.iter().map(ToString::to_string).collect();
                return Err(Error::registration(messages.join("; ")));
            }
        }
        let changed = [
            (
                ListKind::Tools,
                listed(&registry.tools, |tool| &tool.definition)
                    != listed(&update.registry.tools, |tool| &tool.definition),
            ),
            (
                ListKind::Prompts,
                listed(&registry.prompts, |prompt| &prompt.definition)
                    != listed(&update.registry.prompts, |prompt| &prompt.definition),
            ),
            (
                ListKind::Resources,
                listed(&registry.resources, |resource| &resource.definition)
                    != listed(&update.registry.resources, |resource| &resource.definition)
                    || listed(&registry.templates, |template| &template.definition)
                        != listed(&update.registry.templates, |template| &template.definition),
            ),
        ];
        *registry = update.registry;
        drop(registry);
        for (kind, changed) in changed {
            if changed {
                self.send_event(ServerEvent::ListChanged { kind, scopes: Scopes::default(), relayed: false });
            }
        }
        for uri in update.updated {
            self.notify_resource_updated(&uri);
        }
        Ok(())
    }
}

/// What a list shows of each enabled component, by key, to compare two registries.
fn listed<'a, C: Component, D: PartialEq>(
    entries: &'a BTreeMap<String, Arc<C>>,
    definition: impl Fn(&'a C) -> &'a D,
) -> Vec<(&'a str, &'a D)> {
    entries
        .iter()
        .filter(|(_, component)| component.enabled())
        .map(|(key, component)| (key.as_str(), definition(component)))
        .collect()
}
