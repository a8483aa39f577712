//! Run with: `cargo run -p example-prompts`. Two prompts: `code_review`, a static template
//! whose `style` completes to detailed or brief, and `time_based_greeting`, rendered by a
//! function.

use wharf::protocol::{PromptMessage, Role};
use wharf::{Server, content, prompt};

/// Review code for quality, naming and bugs.
#[prompt(
    describe(code = "The code to review", style = "How thorough the review is: detailed or brief"),
    optional(style),
    complete(style = ["detailed", "brief"])
)]
pub const CODE_REVIEW: &str = "Please give a {style} review of this code:\n\n{code}";

/// A greeting that fits the time of day.
#[prompt]
pub async fn time_based_greeting(
    #[arg(description = "Who to greet")] name: String,
    #[arg(description = "The hour, 0 to 23; now if left out")] hour: Option<String>,
) -> Result<Vec<PromptMessage>, String> {
    let hour: u64 = match hour {
        Some(hour) => hour.parse().map_err(|_| format!("`{hour}` is not an hour from 0 to 23"))?,
        None => std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(9, |now| now.as_secs() / 3600 % 24),
    };
    let greeting = match hour {
        5..=11 => "Good morning",
        12..=17 => "Good afternoon",
        _ => "Good evening",
    };
    Ok(vec![PromptMessage {
        role: Role::User,
        content: content::text(format!("Write a short '{greeting}, {name}!' message.")),
    }])
}

/// The server: both prompts.
pub fn server() -> Result<Server, wharf::Error> {
    Server::builder("prompts", "1.0.0").prompt(code_review_prompt()).prompt(time_based_greeting_prompt()).build()
}

#[cfg(test)]
mod tests {
    use serde_json::json;
    use wharf::protocol::ClientCapabilities;
    use wharf::testing::InMemoryClient;

    #[tokio::test]
    async fn renders_both_prompts_and_completes_the_style() {
        let client = InMemoryClient::stateless(super::server().unwrap(), ClientCapabilities::default());
        let review = client
            .request(
                "prompts/get",
                json!({"name": "code_review", "arguments": {"code": "fn main() {}", "style": "brief"}}),
            )
            .await
            .unwrap();
        assert_eq!(
            review["messages"][0]["content"]["text"],
            "Please give a brief review of this code:\n\nfn main() {}"
        );
        let styles = client
            .request(
                "completion/complete",
                json!({"ref": {"type": "ref/prompt", "name": "code_review"},
                "argument": {"name": "style", "value": "d"}}),
            )
            .await
            .unwrap();
        assert_eq!(styles["completion"]["values"], json!(["detailed"]));
        let greeting = client
            .request("prompts/get", json!({"name": "time_based_greeting", "arguments": {"name": "Ada", "hour": "8"}}))
            .await
            .unwrap();
        assert_eq!(greeting["messages"][0]["content"]["text"], "Write a short 'Good morning, Ada!' message.");
        let bad = client
            .request(
                "prompts/get",
                json!({"name": "time_based_greeting", "arguments": {"name": "Ada", "hour": "noon"}}),
            )
            .await;
        assert!(bad.is_err(), "a bad hour is an error");
    }
}
