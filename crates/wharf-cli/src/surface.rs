//! What a server offers, fetched whole: every page of its tools, prompts, resources and
//! templates, and its instructions. `wharf tokens` counts it, `wharf lint` judges it and
//! `wharf lock` keeps it.

use serde_json::{Value, json};
use wharf::client::{Client, ClientError};

/// Every listing of one kind the server offers, as `(name, definition)` pairs.
pub(crate) async fn listed(
    client: &Client,
    method: &str,
    key: &str,
    name: &str,
) -> Result<Vec<(String, Value)>, ClientError> {
    let mut items = Vec::new();
    let mut cursor: Option<String> = None;
    loop {
        let params = match &cursor {
            Some(cursor) => json!({"cursor": cursor}),
            None => json!({}),
        };
        let page = client.request(method, params).await?;
        for item in page.get(key).and_then(Value::as_array).into_iter().flatten() {
            let label = item.get(name).and_then(Value::as_str).unwrap_or_default().to_owned();
            items.push((label, item.clone()));
        }
        match page.get("nextCursor").and_then(Value::as_str) {
            Some(next) if Some(next) != cursor.as_deref() && items.len() < 100_000 => cursor = Some(next.to_owned()),
            _ => return Ok(items),
        }
    }
}

/// A server's whole surface.
#[derive(Debug, Default)]
pub(crate) struct Surface {
    pub(crate) server_name: String,
    pub(crate) instructions: Option<String>,
    pub(crate) tools: Vec<(String, Value)>,
    pub(crate) prompts: Vec<(String, Value)>,
    pub(crate) resources: Vec<(String, Value)>,
    pub(crate) templates: Vec<(String, Value)>,
}

/// Everything `client`'s server lists, for the capabilities it declares.
pub(crate) async fn fetch(client: &Client) -> Result<Surface, ClientError> {
    let capabilities = client.capabilities().clone();
    let mut surface = Surface {
        server_name: client.server_info().map(|info| info.name).unwrap_or_default(),
        instructions: client.instructions().map(str::to_owned),
        ..Surface::default()
    };
    if capabilities.tools.is_some() {
        surface.tools = listed(client, "tools/list", "tools", "name").await?;
    }
    if capabilities.prompts.is_some() {
        surface.prompts = listed(client, "prompts/list", "prompts", "name").await?;
    }
    if capabilities.resources.is_some() {
        surface.resources = listed(client, "resources/list", "resources", "uri").await?;
        surface.templates = listed(client, "resources/templates/list", "resourceTemplates", "uriTemplate").await?;
    }
    Ok(surface)
}
