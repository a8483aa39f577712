//! MCP Apps across the gateway: a tool's link to its view (`_meta.ui.resourceUri`, and the
//! flat key hosts still read) follows the view to its URI on the gateway, and what the
//! gateway's server would refuse (a link to a view the mount does not serve, malformed
//! `_meta.ui`) is left out and logged, so that one upstream's mistake does not keep the rest of
//! its mount from being served.

use std::collections::BTreeSet;

use wharf_protocol::{
    APP_MIME_TYPE, DEPRECATED_RESOURCE_URI_KEY, FromJson, JsonObject, Resource, Tool, ToolUiMeta, UI_META_KEY,
    ViewMeta, view_uri_problem,
};

use crate::names::UriPrefix;

/// True when `tool` names a view.
pub(crate) fn links_a_view(tool: &Tool) -> bool {
    tool.meta
        .as_ref()
        .is_some_and(|meta| meta.contains_key(UI_META_KEY) || meta.contains_key(DEPRECATED_RESOURCE_URI_KEY))
}

/// True when `resource` is a view a host can render.
pub(crate) fn is_view(resource: &Resource) -> bool {
    resource.mime_type.as_deref() == Some(APP_MIME_TYPE)
}

/// The `_meta` of the mount's `tool` as the gateway lists it: its view under the gateway's URI
/// when `views` (the mount's, as it lists them upstream) has it; without the link otherwise.
pub(crate) fn tool_meta(mount: &str, tool: &Tool, prefix: &UriPrefix, views: &BTreeSet<String>) -> Option<JsonObject> {
    let mut meta = tool.meta.clone()?;
    let served = |uri: &str| {
        let found = views.contains(uri);
        if !found {
            tracing::warn!(mount, tool = %tool.name, view = uri, "a tool's view is not served by its mount: the link is left out");
        }
        found
    };
    if let Some(value) = meta.remove(UI_META_KEY) {
        match ToolUiMeta::from_json_value(value) {
            Ok(mut ui) => {
                ui.resource_uri = ui.resource_uri.filter(|uri| served(uri)).map(|uri| prefix.outward(&uri));
                match ui.problem() {
                    None => {
                        meta.insert(UI_META_KEY.to_owned(), serde_json::to_value(ui).unwrap_or_default());
                    }
                    Some(problem) => {
                        tracing::warn!(mount, tool = %tool.name, problem, "a tool's `_meta.ui` is left out")
                    }
                }
            }
            Err(err) => tracing::warn!(mount, tool = %tool.name, %err, "a tool's malformed `_meta.ui` is left out"),
        }
    }
    if let Some(value) = meta.remove(DEPRECATED_RESOURCE_URI_KEY)
        && let Some(uri) = value.as_str()
        && served(uri)
    {
        meta.insert(DEPRECATED_RESOURCE_URI_KEY.to_owned(), prefix.outward(uri).into());
    }
    (!meta.is_empty()).then_some(meta)
}

/// Whether the mount's view `resource` can be served as `listed`, and its `_meta` as the gateway
/// lists it (malformed `_meta.ui` left out); `None` when it cannot be served (its URI is not
/// a view's).
pub(crate) fn view_meta(mount: &str, resource: &Resource, listed: &str) -> Option<Option<JsonObject>> {
    if let Some(problem) = view_uri_problem(listed) {
        tracing::warn!(mount, view = %resource.uri, problem, "a view is left out");
        return None;
    }
    let Some(mut meta) = resource.meta.clone() else { return Some(None) };
    if let Some(value) = meta.get(UI_META_KEY) {
        let problem = match ViewMeta::from_json_value(value.clone()) {
            Ok(ui) => ui.problem(),
            Err(err) => Some(err.to_string()),
        };
        if let Some(problem) = problem {
            tracing::warn!(mount, view = %resource.uri, problem, "a view's malformed `_meta.ui` is left out");
            meta.remove(UI_META_KEY);
        }
    }
    Some((!meta.is_empty()).then_some(meta))
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    fn tool(meta: serde_json::Value) -> Tool {
        serde_json::from_value(json!({"name": "roll", "inputSchema": {"type": "object"}, "_meta": meta})).unwrap()
    }

    #[test]
    fn a_tools_view_follows_it_under_the_namespace_and_a_missing_one_is_left_out() {
        let prefix = UriPrefix::new("demo").unwrap();
        let views = BTreeSet::from(["ui://dice/view".to_owned()]);
        let linked = tool(json!({"ui": {"resourceUri": "ui://dice/view", "visibility": ["model", "app"]},
            "ui/resourceUri": "ui://dice/view", "other": 1}));
        assert!(links_a_view(&linked));
        let meta = tool_meta("demo", &linked, &prefix, &views).unwrap();
        assert_eq!(meta["ui"], json!({"resourceUri": "ui://demo/dice/view", "visibility": ["model", "app"]}));
        assert_eq!(meta["ui/resourceUri"], "ui://demo/dice/view");
        assert_eq!(meta["other"], 1);

        let meta = tool_meta("demo", &linked, &prefix, &BTreeSet::new()).unwrap();
        assert_eq!(meta["ui"], json!({"visibility": ["model", "app"]}));
        assert!(!meta.contains_key("ui/resourceUri"));

        // An empty visibility would be refused by the server: the `ui` member goes.
        let malformed = tool(json!({"ui": {"visibility": []}}));
        assert_eq!(tool_meta("demo", &malformed, &prefix, &views), None);
        assert!(!links_a_view(&tool(json!({"other": 1}))));
    }

    #[test]
    fn a_views_malformed_meta_is_left_out_and_a_uri_that_is_not_a_views_leaves_the_view_out() {
        let view: Resource = serde_json::from_value(json!({"uri": "ui://dice/view", "name": "dice",
            "mimeType": APP_MIME_TYPE, "_meta": {"ui": {"csp": {"connectDomains": ["https://a.example/path"]}}, "x": 1}}))
        .unwrap();
        assert!(is_view(&view));
        assert_eq!(
            view_meta("demo", &view, "ui://demo/dice/view"),
            Some(Some(JsonObject::from_iter([("x".to_owned(), json!(1))])))
        );
        assert_eq!(view_meta("demo", &view, "demo+ui://dice/view"), None);
    }
}
