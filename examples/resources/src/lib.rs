//! Run with: `cargo run -p example-resources`. Resources of every kind: static JSON
//! (`config://app`), markdown (`docs://readme`), dynamic JSON (`stats://server`), HTML
//! (`dashboard://main`) and a template with completion (`user://{username}/profile`).

use std::sync::atomic::{AtomicU64, Ordering};

use serde_json::json;
use wharf::{ResourceDef, RpcError, Server, completion::CompletionCall, resource, resource_template};

static READS: AtomicU64 = AtomicU64::new(0);

const USERS: &[&str] = &["alice", "albert", "bob"];

/// Live statistics about this server.
#[resource("stats://server", mime_type = "application/json")]
pub async fn stats() -> serde_json::Value {
    json!({"reads": READS.fetch_add(1, Ordering::Relaxed) + 1, "users": USERS.len()})
}

/// The main dashboard.
#[resource("dashboard://main", mime_type = "text/html")]
pub async fn dashboard() -> String {
    format!("<html><body><h1>Dashboard</h1><p>{} users</p></body></html>", USERS.len())
}

async fn usernames(call: CompletionCall) -> Vec<String> {
    USERS.iter().filter(|user| user.starts_with(&call.value)).map(|user| (*user).to_owned()).collect()
}

/// A user's public profile.
#[resource_template("user://{username}/profile", mime_type = "application/json")]
pub async fn profile(#[arg(complete_with = usernames)] username: String) -> Result<serde_json::Value, RpcError> {
    if !USERS.contains(&username.as_str()) {
        return Err(RpcError::resource_not_found(&format!("user://{username}/profile")));
    }
    Ok(json!({"username": username, "joined": 2024}))
}

/// The server: two static resources, two dynamic ones and the profile template.
pub fn server() -> Result<Server, wharf::Error> {
    Server::builder("resources", "1.0.0")
        .resource(
            ResourceDef::text("config://app", "config", json!({"theme": "dark", "language": "en"}).to_string())
                .description("The application's configuration")
                .mime_type("application/json"),
        )
        .resource(
            ResourceDef::text("docs://readme", "readme", "# Resources example\n\nEvery kind of MCP resource.\n")
                .description("How to use this server")
                .mime_type("text/markdown"),
        )
        .resource(stats_resource())
        .resource(dashboard_resource())
        .resource_template(profile_template())
        .build()
}

#[cfg(test)]
mod tests {
    use serde_json::{Value, json};
    use wharf::testing::InMemoryClient;

    async fn read(client: &InMemoryClient, uri: &str) -> Value {
        client.request("resources/read", json!({"uri": uri})).await.unwrap()["contents"][0].clone()
    }

    #[tokio::test]
    async fn serves_every_kind_of_resource() {
        let client = InMemoryClient::latest_session(super::server().unwrap()).await;
        let listed = client.request("resources/list", json!({})).await.unwrap();
        assert_eq!(listed["resources"].as_array().unwrap().len(), 4);
        assert_eq!(read(&client, "config://app").await["mimeType"], "application/json");
        assert!(read(&client, "docs://readme").await["text"].as_str().unwrap().starts_with("# Resources"));
        assert_eq!(read(&client, "dashboard://main").await["mimeType"], "text/html");
        let first: Value =
            serde_json::from_str(read(&client, "stats://server").await["text"].as_str().unwrap()).unwrap();
        let second: Value =
            serde_json::from_str(read(&client, "stats://server").await["text"].as_str().unwrap()).unwrap();
        assert_eq!(second["reads"].as_u64().unwrap(), first["reads"].as_u64().unwrap() + 1, "dynamic");
        let alice: Value =
            serde_json::from_str(read(&client, "user://alice/profile").await["text"].as_str().unwrap()).unwrap();
        assert_eq!(alice["username"], "alice");
        let nobody = client.request("resources/read", json!({"uri": "user://nobody/profile"})).await.unwrap_err();
        assert_eq!(nobody.code.0, -32002);
        let names = client
            .request(
                "completion/complete",
                json!({"ref": {"type": "ref/resource", "uri": "user://{username}/profile"},
                "argument": {"name": "username", "value": "al"}}),
            )
            .await
            .unwrap();
        assert_eq!(names["completion"]["values"], json!(["alice", "albert"]));
    }
}
