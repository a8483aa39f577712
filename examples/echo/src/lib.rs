//! Run with: `cargo run -p example-echo`. The smallest useful server: one tool that sends its
//! message back.

use wharf::{Server, tool};

/// Echo a message back.
#[tool(read_only, idempotent)]
pub async fn echo(#[arg(description = "The message to send back")] message: String) -> String {
    message
}

/// The server: the `echo` tool.
pub fn server() -> Result<Server, wharf::Error> {
    Server::builder("echo", "1.0.0").tool(echo_tool()).build()
}

#[cfg(test)]
mod tests {
    use serde_json::json;
    use wharf::protocol::{ClientCapabilities, ContentBlock};
    use wharf::testing::InMemoryClient;

    #[tokio::test]
    async fn echoes_the_message() {
        let client = InMemoryClient::stateless(super::server().unwrap(), ClientCapabilities::default());
        let result = client.call_tool("echo", json!({"message": "hello"})).await.unwrap();
        assert!(matches!(&result.content[0], ContentBlock::Text(text) if text.text == "hello"));
        assert!(client.call_tool("echo", json!({})).await.unwrap().is_error == Some(true), "message is required");
    }
}
