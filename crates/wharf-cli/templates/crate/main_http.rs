//! Serves the {{name}} MCP server over Streamable HTTP at http://127.0.0.1:8080/mcp (set
//! LISTEN=HOST:PORT to change it).

#[tokio::main]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    wharf::logging::init();
    let address = std::env::var("LISTEN").unwrap_or_else(|_| "127.0.0.1:8080".to_owned());
    let listener = tokio::net::TcpListener::bind(address).await?;
    wharf::serve_http(listener, {{crate}}::server()?).await?;
    Ok(())
}
