//! MCP Apps views from HTML: `apps/NAME.html` is the view `ui://apps/NAME`, served as
//! `text/html;profile=mcp-app`. Its optional YAML frontmatter (between `---` lines, taken off
//! before the page is served) names the command tools it draws, and gives its title,
//! description and `_meta.ui`: `csp`, `permissions`, `domain`, `prefersBorder`.

use serde::Deserialize;
use serde_json::Value;
use wharf_protocol::{ViewCsp, ViewMeta, ViewPermissions};
use wharf_server::{ResourceDef, yaml_frontmatter};

/// The URI of the view from `apps/NAME.html`.
pub(crate) fn view_uri(name: &str) -> String {
    format!("ui://apps/{name}")
}

/// The frontmatter of a view file.
#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
struct Frontmatter {
    title: Option<String>,
    description: Option<String>,
    /// The `[[tools]]` whose results the view draws.
    #[serde(default)]
    tools: Vec<String>,
    csp: Option<ViewCsp>,
    permissions: Option<ViewPermissions>,
    domain: Option<String>,
    #[serde(rename = "prefersBorder")]
    prefers_border: Option<bool>,
}

/// A view read from its file: the resource, and the tools it draws.
pub(crate) struct View {
    pub(crate) resource: ResourceDef,
    pub(crate) tools: Vec<String>,
}

/// The view named `name` that `text` (an `apps/*.html` file) describes.
pub(crate) fn view(name: &str, text: &str) -> Result<View, String> {
    let (frontmatter, page) = if text.starts_with("---") {
        let (frontmatter, body) = yaml_frontmatter(text).map_err(|err| err.to_string())?;
        let frontmatter: Frontmatter =
            serde_json::from_value(Value::Object(frontmatter)).map_err(|err| format!("its frontmatter: {err}"))?;
        (frontmatter, body.trim_start_matches(['\n', '\r']))
    } else {
        (Frontmatter::default(), text)
    };
    let uri = view_uri(name);
    if let Some(problem) = wharf_protocol::view_uri_problem(&uri) {
        return Err(problem);
    }
    let meta = ViewMeta {
        csp: frontmatter.csp,
        permissions: frontmatter.permissions,
        domain: frontmatter.domain,
        prefers_border: frontmatter.prefers_border,
    };
    if let Some(problem) = meta.problem() {
        return Err(problem);
    }
    let mut resource = ResourceDef::view(uri, name, page);
    if meta != ViewMeta::default() {
        resource = resource.view_meta(meta);
    }
    if let Some(title) = frontmatter.title {
        resource = resource.title(title);
    }
    if let Some(description) = frontmatter.description {
        resource = resource.description(description);
    }
    Ok(View { resource, tools: frontmatter.tools })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn frontmatter_gives_the_tools_and_the_metadata_and_is_not_served() {
        let text = "---\ntools: [roll]\ntitle: Dice\ncsp:\n  connectDomains: [\"https://api.example.com\"]\nprefersBorder: true\n---\n<!DOCTYPE html><p>dice</p>\n";
        let view = view("dice", text).expect("a view");
        assert_eq!(view.tools, ["roll"]);
        assert_eq!(view.resource.uri(), "ui://apps/dice");
    }

    #[test]
    fn a_page_without_frontmatter_is_a_view_of_no_tool() {
        let view = view("plain", "<!DOCTYPE html><p>plain</p>").expect("a view");
        assert!(view.tools.is_empty());
    }

    #[test]
    fn bad_frontmatter_is_named() {
        let wildcard = view("bad", "---\ncsp:\n  connectDomains: [\"https://*.example.com\"]\n---\n<p></p>");
        assert!(wildcard.err().is_some_and(|why| why.contains("wildcard")));
        let unknown = view("bad", "---\ntool: roll\n---\n<p></p>");
        assert!(unknown.err().is_some_and(|why| why.contains("unknown field `tool`")));
        let spaced = view("two words", "<p></p>");
        assert!(spaced.err().is_some_and(|why| why.contains("spaces")));
    }
}
