//! Run with: `cargo run -p example-read-file`. Reads files under one root directory; a missing
//! file, or a path that leaves the root, is a tool error the model can read.

use std::path::{Component, Path, PathBuf};

use wharf::{Server, State, tool};

/// The directory the tool may read from.
#[derive(Debug)]
pub struct Root(pub PathBuf);

/// Reads a text file under the server's root directory.
#[tool(read_only)]
pub async fn read_file(
    #[arg(description = "A path relative to the root", min_length = 1)] path: String,
    root: State<Root>,
) -> Result<String, String> {
    let relative = Path::new(&path);
    if relative.components().any(|component| !matches!(component, Component::Normal(_))) {
        return Err(format!("`{path}` must stay inside the root: no `..`, no absolute paths"));
    }
    let full = root.0.0.join(relative);
    tokio::fs::read_to_string(&full).await.map_err(|err| format!("Cannot read `{path}`: {err}"))
}

/// The server, reading from `root`.
pub fn server_at(root: PathBuf) -> Result<Server, wharf::Error> {
    Server::builder("files", "1.0.0").state(Root(root)).tool(read_file_tool()).build()
}

/// The server, reading from the current directory.
pub fn server() -> Result<Server, wharf::Error> {
    server_at(std::env::current_dir().unwrap_or_else(|_| PathBuf::from(".")))
}

#[cfg(test)]
mod tests {
    use serde_json::json;
    use wharf::protocol::ClientCapabilities;
    use wharf::testing::InMemoryClient;

    #[tokio::test]
    async fn reads_files_and_reports_missing_ones_as_tool_errors() {
        let root = std::env::temp_dir().join(format!("wharf-read-file-{}", std::process::id()));
        std::fs::create_dir_all(&root).unwrap();
        std::fs::write(root.join("notes.txt"), "remember the milk").unwrap();
        let client = InMemoryClient::stateless(super::server_at(root.clone()).unwrap(), ClientCapabilities::default());
        let text = |result: &wharf::protocol::CallToolResult| {
            serde_json::to_value(&result.content).unwrap()[0]["text"].clone()
        };
        let read = client.call_tool("read_file", json!({"path": "notes.txt"})).await.unwrap();
        assert_eq!(text(&read), "remember the milk");
        let missing = client.call_tool("read_file", json!({"path": "nope.txt"})).await.unwrap();
        assert_eq!(missing.is_error, Some(true));
        assert!(text(&missing).as_str().unwrap().starts_with("Cannot read `nope.txt`"));
        let escape = client.call_tool("read_file", json!({"path": "../etc/passwd"})).await.unwrap();
        assert_eq!(escape.is_error, Some(true));
        std::fs::remove_dir_all(root).unwrap();
    }
}
