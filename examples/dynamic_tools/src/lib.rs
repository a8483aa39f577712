//! Run with: `cargo run -p example-dynamic-tools`. Components change while the server runs:
//! the `enable_admin` tool registers an `admin_report` tool, and every connected client hears
//! `notifications/tools/list_changed` (a 2025 session directly, a 2026-07-28 client on its
//! `subscriptions/listen` stream).

use wharf::{RequestContext, Server, tool};

/// A report only administrators need.
#[tool(read_only)]
pub async fn admin_report() -> String {
    "All systems nominal.".to_owned()
}

/// Unlocks the administrator tools.
#[tool]
pub async fn enable_admin(context: RequestContext) -> String {
    match context.server().add_tool(admin_report_tool()) {
        Ok(()) => "The admin_report tool is now available.".to_owned(),
        Err(_) => "The admin tools are already enabled.".to_owned(),
    }
}

/// The server: `enable_admin`, which adds `admin_report`.
pub fn server() -> Result<Server, wharf::Error> {
    Server::builder("dynamic", "1.0.0").tool(enable_admin_tool()).build()
}

#[cfg(test)]
mod tests {
    use std::time::Duration;

    use serde_json::json;
    use wharf::testing::InMemoryClient;

    #[tokio::test]
    async fn adding_a_tool_tells_the_client_its_list_changed() {
        let client = InMemoryClient::latest_session(super::server().unwrap()).await;
        assert_eq!(client.list_tools().await.unwrap().tools.len(), 1);
        client.call_tool("enable_admin", json!({})).await.unwrap();
        let notification = client.next_notification(Duration::from_secs(5)).await.unwrap();
        assert_eq!(notification["method"], "notifications/tools/list_changed");
        let names: Vec<String> = client.list_tools().await.unwrap().tools.into_iter().map(|tool| tool.name).collect();
        assert_eq!(names, ["admin_report", "enable_admin"]);
        let again = client.call_tool("enable_admin", json!({})).await.unwrap();
        assert_eq!(again.first_text(), Some("The admin tools are already enabled."));
    }
}
