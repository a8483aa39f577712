//! Run with: `cargo run -p example-production` (the server is in `src/lib.rs`). Audit records
//! go to stderr with the other logs; `WHARF_LOG=info` shows them.

#[tokio::main]
async fn main() -> Result<(), wharf::Error> {
    wharf::logging::init();
    let server = example_production::server()?;
    let address = "127.0.0.1:8080".parse().expect("a socket address");
    eprintln!("production example: http://{address}/mcp");
    wharf::serve_http(server, address, wharf::HttpOptions::default()).await
}
