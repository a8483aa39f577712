//! Run with: `cargo run -p example-apps`. An MCP Apps view: `show_votes` returns the votes of a
//! poll, as text for the model and as data that its view, `ui://poll/dashboard`, draws as bars;
//! the view's buttons call `vote`, a tool only the view may call. A host without MCP Apps shows
//! the text.

use std::sync::Mutex;

use serde_json::json;
use wharf::protocol::{CallToolResult, ViewMeta, Visibility};
use wharf::{Args, ResourceDef, Server, State, ToolDef};

/// Where the dashboard is served.
pub const DASHBOARD: &str = "ui://poll/dashboard";

/// The poll's choices, in the order they are drawn.
pub const CHOICES: [&str; 3] = ["rust", "python", "typescript"];

/// The votes so far, by choice.
#[derive(Debug, Default)]
pub struct Poll {
    votes: Mutex<[u32; 3]>,
}

impl Poll {
    /// The votes as the tools give them: a line for the model, the counts for the view.
    fn result(&self) -> CallToolResult {
        let votes = *self.votes.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
        let summary: Vec<String> =
            CHOICES.iter().zip(votes).map(|(choice, count)| format!("{choice} {count}")).collect();
        let bars: Vec<_> =
            CHOICES.iter().zip(votes).map(|(choice, count)| json!({"choice": choice, "votes": count})).collect();
        CallToolResult::for_view(format!("Votes: {}", summary.join(", ")), json!({"bars": bars}))
    }
}

#[derive(serde::Deserialize, schemars::JsonSchema)]
struct VoteArgs {
    /// The choice voted for: `rust`, `python` or `typescript`.
    choice: String,
}

/// The server: the dashboard, `show_votes` drawn by it, and `vote`, which only the view calls.
pub fn server() -> Result<Server, wharf::Error> {
    let dashboard = ResourceDef::view(DASHBOARD, "poll-dashboard", include_str!("dashboard.html"))
        .title("Poll dashboard")
        .description("The poll's votes as bars, with a button to vote for each choice")
        .view_meta(ViewMeta { prefers_border: Some(true), ..ViewMeta::default() });
    let show_votes = ToolDef::new("show_votes", |State(poll): State<Poll>| async move { poll.result() })
        .description("Show the poll's votes; a host with MCP Apps draws them as bars")
        .read_only()
        .view(DASHBOARD);
    let vote = ToolDef::new("vote", |State(poll): State<Poll>, Args(args): Args<VoteArgs>| async move {
        let Some(at) = CHOICES.iter().position(|choice| *choice == args.choice) else {
            return CallToolResult::error(format!("`{}` is not a choice: {}", args.choice, CHOICES.join(", ")));
        };
        poll.votes.lock().unwrap_or_else(std::sync::PoisonError::into_inner)[at] += 1;
        poll.result()
    })
    .description("Vote for a choice (the dashboard's buttons call it)")
    .view(DASHBOARD)
    .visibility([Visibility::App]);
    Server::builder("poll", "1.0.0").state(Poll::default()).resource(dashboard).tool(show_votes).tool(vote).build()
}

#[cfg(test)]
mod tests {
    use serde_json::json;
    use wharf::protocol::{ClientCapabilities, ProtocolVersion};
    use wharf::testing::InMemoryClient;

    #[tokio::test]
    async fn the_dashboard_draws_the_votes_and_its_buttons_vote() {
        let client = InMemoryClient::stateless(super::server().unwrap(), ClientCapabilities::default());
        let discovered = client.request("server/discover", json!({})).await.unwrap();
        assert_eq!(discovered["capabilities"]["extensions"]["io.modelcontextprotocol/ui"], json!({}));
        let tools = client.request("tools/list", json!({})).await.unwrap();
        let ui = |name: &str| {
            tools["tools"].as_array().unwrap().iter().find(|tool| tool["name"] == name).unwrap()["_meta"]["ui"].clone()
        };
        assert_eq!(ui("show_votes"), json!({"resourceUri": "ui://poll/dashboard"}));
        assert_eq!(ui("vote"), json!({"resourceUri": "ui://poll/dashboard", "visibility": ["app"]}));

        let page = client.request("resources/read", json!({"uri": "ui://poll/dashboard"})).await.unwrap();
        assert_eq!(page["contents"][0]["mimeType"], "text/html;profile=mcp-app");
        assert!(page["contents"][0]["text"].as_str().unwrap().contains("ui/initialize"));

        let voted = client.request("tools/call", json!({"name": "vote", "arguments": {"choice": "rust"}})).await;
        assert_eq!(voted.unwrap()["structuredContent"]["bars"][0], json!({"choice": "rust", "votes": 1}));
        let shown = client.request("tools/call", json!({"name": "show_votes", "arguments": {}})).await.unwrap();
        assert_eq!(shown["content"][0]["text"], "Votes: rust 1, python 0, typescript 0", "text for the model");
        let wrong = client.request("tools/call", json!({"name": "vote", "arguments": {"choice": "cobol"}})).await;
        assert_eq!(wrong.unwrap()["isError"], true);
    }

    #[tokio::test]
    async fn a_2024_client_gets_the_text_without_the_view_s_data() {
        let (client, _) = InMemoryClient::session(
            super::server().unwrap(),
            ProtocolVersion::V2024_11_05,
            ClientCapabilities::default(),
        )
        .await
        .unwrap();
        let shown = client.request("tools/call", json!({"name": "show_votes", "arguments": {}})).await.unwrap();
        assert_eq!(shown["content"][0]["text"], "Votes: rust 0, python 0, typescript 0");
        assert!(shown.get("structuredContent").is_none(), "2024-11-05 has no structured content");
    }
}
