//! MCP Apps (the `io.modelcontextprotocol/ui` extension): views served as `ui://` resources of
//! type `text/html;profile=mcp-app`, tools linked to them, and the checks
//! [`ServerBuilder::build`](crate::ServerBuilder::build) makes of both, so that a wiring mistake
//! stops the server before it runs.

use std::collections::BTreeMap;
use std::sync::Arc;

use wharf_protocol::{
    APP_MIME_TYPE, DEPRECATED_RESOURCE_URI_KEY, FromJson, JsonObject, ToolUiMeta, UI_META_KEY, ViewMeta, Visibility,
    view_uri_problem,
};

use crate::error::Error;
use crate::resource::ResourceDef;
use crate::tool::ToolDef;

impl ResourceDef {
    /// A view: `html`, a whole HTML5 document, served at `uri` (a `ui://` URI) as
    /// `text/html;profile=mcp-app`, for the tools that name it ([`ToolDef::view`]) to be
    /// rendered with. A file of the crate is `include_str!("view.html")`.
    ///
    /// ```
    /// use wharf_protocol::ViewMeta;
    /// use wharf_server::{ResourceDef, ToolDef};
    ///
    /// let view = ResourceDef::view("ui://weather/dashboard", "dashboard", "<!DOCTYPE html><html>...</html>")
    ///     .view_meta(ViewMeta { prefers_border: Some(true), ..ViewMeta::default() });
    /// let tool = ToolDef::new("get_weather", || async { "Sunny, 22 °C" }).view("ui://weather/dashboard");
    /// ```
    pub fn view(uri: impl Into<String>, name: impl Into<String>, html: impl Into<String>) -> ResourceDef {
        ResourceDef::text(uri, name, html).mime_type(APP_MIME_TYPE)
    }

    /// The view's `_meta.ui`: the origins it reaches (from which the host builds its content
    /// security policy), the browser features it asks for, its domain and border. Listed with
    /// the resource and sent with its contents; `build` refuses malformed origins.
    pub fn view_meta(mut self, meta: ViewMeta) -> ResourceDef {
        let value = serde_json::to_value(meta).unwrap_or_default();
        self.definition.meta.get_or_insert_with(JsonObject::new).insert(UI_META_KEY.to_owned(), value);
        self
    }
}

impl ToolDef {
    /// Links the tool to the view at `uri` ([`ResourceDef::view`]): a host that has the
    /// extension renders the tool's results with it, one that has not shows the result's text,
    /// which the tool must still give. `build` refuses a tool whose view is not registered.
    pub fn view(self, uri: impl Into<String>) -> ToolDef {
        let uri = uri.into();
        let mut tool = self.with_ui_meta(|meta| meta.resource_uri = Some(uri.clone()));
        // The flat key the extension deprecates, which hosts still read.
        tool.definition
            .meta
            .get_or_insert_with(JsonObject::new)
            .insert(DEPRECATED_RESOURCE_URI_KEY.to_owned(), uri.into());
        tool
    }

    /// Who may call the tool: [`Visibility::Model`] (the agent's list), [`Visibility::App`]
    /// (a view of this server); both when not said. An app-only tool is left out of the
    /// agent's list by the host, which also refuses a view's call of a model-only tool.
    pub fn visibility(self, callers: impl IntoIterator<Item = Visibility>) -> ToolDef {
        let callers: Vec<Visibility> = callers.into_iter().collect();
        self.with_ui_meta(move |meta| meta.visibility = Some(callers))
    }

    fn with_ui_meta(mut self, change: impl FnOnce(&mut ToolUiMeta)) -> ToolDef {
        let mut meta = self.ui_meta().and_then(Result::ok).unwrap_or_default();
        change(&mut meta);
        let value = serde_json::to_value(meta).unwrap_or_default();
        self.definition.meta.get_or_insert_with(JsonObject::new).insert(UI_META_KEY.to_owned(), value);
        self
    }

    /// The tool's `_meta.ui`, read back; `None` when it has none.
    fn ui_meta(&self) -> Option<Result<ToolUiMeta, serde_json::Error>> {
        let value = self.definition.meta.as_ref()?.get(UI_META_KEY)?;
        Some(ToolUiMeta::from_json_value(value.clone()))
    }
}

/// What is wrong with the views and the tools linked to them: a tool's view that is not
/// registered or not a view, malformed `_meta.ui` of a tool or a view, a view whose URI is not
/// `ui://`. Each message names the tool or view.
pub(crate) fn problems<'a>(
    tools: impl Iterator<Item = &'a ToolDef>,
    resources: &BTreeMap<String, Arc<ResourceDef>>,
) -> Vec<Error> {
    let mut problems = Vec::new();
    for tool in tools {
        let name = &tool.definition.name;
        let meta = match tool.ui_meta() {
            None => continue,
            Some(Ok(meta)) => meta,
            Some(Err(err)) => {
                problems.push(Error::registration(format!("tool `{name}`: its `_meta.ui` is malformed: {err}")));
                continue;
            }
        };
        if let Some(problem) = meta.problem() {
            problems.push(Error::registration(format!("tool `{name}`: {problem}")));
            continue;
        }
        let Some(uri) = &meta.resource_uri else { continue };
        match resources.get(uri) {
            None => problems.push(Error::registration(format!(
                "tool `{name}` names the view `{uri}`, which is not registered (a `ResourceDef::view`)"
            ))),
            Some(resource) if !resource.is_view() => problems.push(Error::registration(format!(
                "tool `{name}` names `{uri}` as its view, but that resource is not of type `{APP_MIME_TYPE}`"
            ))),
            Some(_) => {}
        }
    }
    for resource in resources.values().filter(|resource| resource.is_view()) {
        let uri = resource.uri();
        if let Some(problem) = view_uri_problem(uri) {
            problems.push(Error::registration(format!("view `{uri}`: {problem}")));
        }
        let Some(value) = resource.ui_meta() else { continue };
        match ViewMeta::from_json_value(value.clone()) {
            Ok(meta) => {
                if let Some(problem) = meta.problem() {
                    problems.push(Error::registration(format!("view `{uri}`: {problem}")));
                }
            }
            Err(err) => problems.push(Error::registration(format!("view `{uri}`: its `_meta.ui` is malformed: {err}"))),
        }
    }
    problems
}
