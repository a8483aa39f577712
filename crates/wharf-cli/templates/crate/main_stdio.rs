//! Serves the {{name}} MCP server over stdio: the client starts this program (see README.md).

#[tokio::main]
async fn main() -> Result<(), wharf::Error> {
    // Logs go to stderr: over stdio, stdout belongs to the protocol.
    wharf::logging::init();
    wharf::serve_stdio({{crate}}::server()?).await
}
