//! `conformance-server --listen 127.0.0.1:PORT`: every fixture the official MCP conformance
//! suite expects, served over Streamable HTTP at `/mcp`, written the way a Wharf user would.

mod fixtures;
mod stateless;
mod tasks;

use std::net::SocketAddr;
use std::process::ExitCode;

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let address = match args.as_slice() {
        [flag, address] if flag == "--listen" => address.parse::<SocketAddr>(),
        [] => "127.0.0.1:3000".parse(),
        _ => {
            eprintln!("usage: conformance-server [--listen ADDRESS:PORT]");
            return ExitCode::from(2);
        }
    };
    let Ok(address) = address else {
        eprintln!("conformance-server: not an address like 127.0.0.1:3000");
        return ExitCode::from(2);
    };
    tracing_subscriber::fmt().with_writer(std::io::stderr).with_max_level(tracing::Level::WARN).with_ansi(false).init();
    let server = match fixtures::server() {
        Ok(server) => server,
        Err(err) => {
            eprintln!("conformance-server: {err}");
            return ExitCode::FAILURE;
        }
    };
    let runtime = match tokio::runtime::Runtime::new() {
        Ok(runtime) => runtime,
        Err(err) => {
            eprintln!("conformance-server: no runtime: {err}");
            return ExitCode::FAILURE;
        }
    };
    eprintln!("conformance-server: listening on http://{address}/mcp");
    // Every answer streams, as the official SDKs' servers do by default: the suite's stream
    // checks then have events to look at.
    let options = wharf::HttpOptions::default().always_stream(true);
    match runtime.block_on(wharf::serve_http(server, address, options)) {
        Ok(()) => ExitCode::SUCCESS,
        Err(err) => {
            eprintln!("conformance-server: {err}");
            ExitCode::FAILURE
        }
    }
}
