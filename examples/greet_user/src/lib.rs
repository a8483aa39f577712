//! Run with: `cargo run -p example-greet-user`. Constrained arguments: a name of 1 to 100
//! characters, an age from 0 to 150, an optional `formal` flag; Wharf checks them before the
//! function runs.

use wharf::{Server, tool};

/// Greets a user, formally if asked.
#[tool(read_only)]
pub async fn greet_user(
    #[arg(description = "The user's name", min_length = 1, max_length = 100)] name: String,
    #[arg(description = "The user's age", min = 0, max = 150)] age: u32,
    #[arg(description = "Use a formal greeting")] formal: Option<bool>,
) -> String {
    if formal.unwrap_or(false) {
        format!("Good day, {name}. I understand you are {age} years of age.")
    } else {
        format!("Hi {name}! You're {age}.")
    }
}

/// The server: the `greet_user` tool.
pub fn server() -> Result<Server, wharf::Error> {
    Server::builder("greeter", "1.0.0").tool(greet_user_tool()).build()
}

#[cfg(test)]
mod tests {
    use serde_json::json;
    use wharf::testing::InMemoryClient;

    #[tokio::test]
    async fn greets_within_the_constraints() {
        let client = InMemoryClient::latest_session(super::server().unwrap()).await;
        let formal = client.call_tool("greet_user", json!({"name": "Ada", "age": 36, "formal": true})).await.unwrap();
        assert_eq!(
            serde_json::to_value(&formal.content).unwrap()[0]["text"],
            "Good day, Ada. I understand you are 36 years of age."
        );
        for bad in [
            json!({"name": "", "age": 3}),
            json!({"name": "Ada", "age": 151}),
            json!({"name": "x".repeat(101), "age": 3}),
        ] {
            assert_eq!(client.call_tool("greet_user", bad.clone()).await.unwrap().is_error, Some(true), "{bad}");
        }
    }
}
