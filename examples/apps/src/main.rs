//! Run with: `cargo run -p example-apps` (an MCP server on stdio; the server is in `src/lib.rs`).

#[tokio::main]
async fn main() -> Result<(), wharf::Error> {
    // Logs go to stderr; WHARF_LOG=debug (or RUST_LOG) shows every request.
    wharf::logging::init();
    wharf::serve_stdio(example_apps::server()?).await
}
