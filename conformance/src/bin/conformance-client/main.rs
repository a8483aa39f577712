//! `conformance-client URL`: the client the official MCP client conformance suite runs, one
//! process per scenario. The suite names the scenario in `MCP_CONFORMANCE_SCENARIO`, the
//! revision in `MCP_CONFORMANCE_PROTOCOL_VERSION` and any inputs in `MCP_CONFORMANCE_CONTEXT`;
//! each scenario drives `wharf::client` the way an application would.

mod answers;
mod scenarios;

use std::process::ExitCode;

use wharf::protocol::ProtocolVersion;

/// What the suite tells the client.
struct Invocation {
    url: String,
    scenario: String,
    version: ProtocolVersion,
    context: serde_json::Value,
}

fn invocation() -> Result<Invocation, String> {
    let url = std::env::args().skip(1).last().ok_or("usage: conformance-client URL (the suite appends it)")?;
    let scenario = std::env::var("MCP_CONFORMANCE_SCENARIO").map_err(|_| "MCP_CONFORMANCE_SCENARIO is not set")?;
    let version = std::env::var("MCP_CONFORMANCE_PROTOCOL_VERSION").unwrap_or_else(|_| "2025-11-25".to_owned());
    let version = ProtocolVersion::parse(&version)
        .ok_or_else(|| format!("MCP_CONFORMANCE_PROTOCOL_VERSION `{version}` is unknown"))?;
    let context = match std::env::var("MCP_CONFORMANCE_CONTEXT") {
        Ok(text) => serde_json::from_str(&text).map_err(|err| format!("MCP_CONFORMANCE_CONTEXT is not JSON: {err}"))?,
        Err(_) => serde_json::Value::Null,
    };
    Ok(Invocation { url, scenario, version, context })
}

fn main() -> ExitCode {
    let invocation = match invocation() {
        Ok(invocation) => invocation,
        Err(message) => {
            eprintln!("conformance-client: {message}");
            return ExitCode::from(2);
        }
    };
    let runtime = match tokio::runtime::Builder::new_current_thread().enable_all().build() {
        Ok(runtime) => runtime,
        Err(err) => {
            eprintln!("conformance-client: no runtime: {err}");
            return ExitCode::FAILURE;
        }
    };
    match runtime.block_on(scenarios::run(&invocation)) {
        Ok(()) => ExitCode::SUCCESS,
        Err(message) => {
            eprintln!("conformance-client {}: {message}", invocation.scenario);
            ExitCode::FAILURE
        }
    }
}
