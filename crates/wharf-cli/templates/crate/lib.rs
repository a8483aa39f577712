//! The {{name}} MCP server: its tools, prompts and resources. `src/main.rs` serves it;
//! `tests/server.rs` drives it in memory.

use wharf::{ResourceDef, Server, prompt, tool};

/// Add two numbers.
#[tool(read_only, idempotent)]
pub async fn add(
    #[arg(description = "The first number")] a: f64,
    #[arg(description = "The second number")] b: f64,
) -> String {
    (a + b).to_string()
}

/// Ask for a review of a piece of code.
#[prompt(describe(code = "The code to review"))]
pub const REVIEW: &str = "Please review this code. Point out bugs first, then style.\n\n{code}";

/// The server, with every tool, prompt and resource registered.
pub fn server() -> Result<Server, wharf::Error> {
    let about = ResourceDef::text("info://about", "about", "This server adds numbers and asks for code reviews.")
        .mime_type("text/plain")
        .description("What this server offers");
    Server::builder("{{name}}", env!("CARGO_PKG_VERSION"))
        .instructions("Use `add` to add two numbers; the `review` prompt asks for a code review.")
        .tool(add_tool())
        .prompt(review_prompt())
        .resource(about)
        .build()
}
