//! The {{name}} MCP server: a counter with an MCP Apps view. `show_counter` gives the model the
//! count as text and its view, `ui://{{name}}/counter`, the number to draw; the view's button
//! calls `increment`, a tool only the view may call. `src/main.rs` serves it; `tests/server.rs`
//! drives it in memory.

use std::sync::atomic::{AtomicU64, Ordering};

use serde_json::json;
use wharf::protocol::{CallToolResult, ViewMeta};
use wharf::{ResourceDef, Server, State, tool};

/// The count so far, shared by every call.
#[derive(Debug, Default)]
pub struct Counter(AtomicU64);

impl Counter {
    fn count(&self) -> u64 {
        self.0.load(Ordering::Relaxed)
    }

    fn add_one(&self) -> u64 {
        self.0.fetch_add(1, Ordering::Relaxed) + 1
    }
}

fn result(count: u64) -> CallToolResult {
    CallToolResult::for_view(format!("The count is {count}."), json!({"count": count}))
}

/// Show the counter; a host with MCP Apps draws it with a button that counts.
#[tool(read_only, ui = "ui://{{name}}/counter")]
pub async fn show_counter(counter: State<Counter>) -> CallToolResult {
    result(counter.count())
}

/// Add one to the counter (the view's button calls it).
#[tool(ui = "ui://{{name}}/counter", visibility = ["app"])]
pub async fn increment(counter: State<Counter>) -> CallToolResult {
    result(counter.add_one())
}

/// The server: the view and the two tools it belongs to.
pub fn server() -> Result<Server, wharf::Error> {
    let view = ResourceDef::view("ui://{{name}}/counter", "counter", include_str!("view.html"))
        .description("Draws the counter, with a button that counts")
        .view_meta(ViewMeta { prefers_border: Some(true), ..ViewMeta::default() });
    Server::builder("{{name}}", env!("CARGO_PKG_VERSION"))
        .state(Counter::default())
        .resource(view)
        .tool(show_counter_tool())
        .tool(increment_tool())
        .build()
}
