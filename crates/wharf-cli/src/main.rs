//! The `wharf` command: `wharf serve` runs an MCP server over stdio, or over Streamable HTTP
//! with `--http`.

mod ballast;
mod demo;

use std::io::IsTerminal;
use std::process::ExitCode;

// Every request allocates a handful of small objects, which mimalloc serves faster than the
// system allocator; its v2 line, because the Rust binding calls aligned entry points that v3
// routes through a slower path; transparent huge pages off (`no_thp`), which would cost
// memory. The measurements are in benches/NOTES.md.
#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

const USAGE: &str = "\
wharf: build and serve Model Context Protocol servers

Usage:
  wharf serve                    Serve the built-in demo server over stdio (stdin/stdout)
  wharf serve --http ADDR:PORT   Serve it over Streamable HTTP at http://ADDR:PORT/mcp
  wharf --version                Print the version
  wharf --help                   Print this help

Logs go to stderr; set WHARF_LOG=debug (or info, warn, error) to see more.";

const CLIENT_CONFIG: &str = r#"{
  "mcpServers": {
    "wharf-demo": { "command": "wharf", "args": ["serve"] }
  }
}"#;

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    match args.iter().map(String::as_str).collect::<Vec<_>>().as_slice() {
        ["serve"] => serve(None),
        ["serve", "--http", address] => match address.parse() {
            Ok(address) => serve(Some(address)),
            Err(err) => {
                eprintln!("wharf: `{address}` is not an address like 127.0.0.1:8080: {err}");
                ExitCode::from(2)
            }
        },
        ["--version" | "-V"] => {
            println!("wharf {}", env!("CARGO_PKG_VERSION"));
            ExitCode::SUCCESS
        }
        ["--help" | "-h" | "help"] | [] => {
            println!("{USAGE}");
            ExitCode::SUCCESS
        }
        other => {
            eprintln!("wharf: unknown arguments {other:?}\n\n{USAGE}");
            ExitCode::from(2)
        }
    }
}

fn serve(http: Option<std::net::SocketAddr>) -> ExitCode {
    init_logging();
    if http.is_none() && std::io::stdin().is_terminal() {
        // A person ran `wharf serve` by hand; stdout must stay clean for the protocol, so the
        // explanation goes to stderr.
        eprintln!(
            "wharf serve: the Wharf demo MCP server, speaking MCP over stdio.\n\
             It is waiting for an MCP client on stdin; press Ctrl-D to stop.\n\n\
             To use it from Claude Desktop or Claude Code, add this to the client's configuration:\n{CLIENT_CONFIG}\n"
        );
    }
    let server = match demo::server() {
        Ok(server) => server,
        Err(err) => {
            eprintln!("wharf: the demo server could not be built: {err}");
            return ExitCode::FAILURE;
        }
    };
    // Over stdio the transport reads and answers on a thread of its own; the runtime has one
    // thread for the requests that wait, which the demo's handlers rarely do, so more workers
    // would only add wake-ups. HTTP serves many connections at once and uses every core.
    let runtime = match http {
        None => tokio::runtime::Builder::new_current_thread().enable_all().build(),
        Some(_) => tokio::runtime::Builder::new_multi_thread().enable_all().build(),
    };
    let runtime = match runtime {
        Ok(runtime) => runtime,
        Err(err) => {
            eprintln!("wharf: could not start the async runtime: {err}");
            return ExitCode::FAILURE;
        }
    };
    let outcome = match http {
        None => {
            let options = wharf::stdio::StdioOptions::default().read_thread_setup(ballast::hold);
            runtime.block_on(wharf::stdio::serve_stdio_with(server, options))
        }
        Some(address) => {
            eprintln!("wharf serve: the Wharf demo MCP server, at http://{address}/mcp (Streamable HTTP)");
            runtime.block_on(wharf::serve_http(server, address, wharf::HttpOptions::default()))
        }
    };
    match outcome {
        Ok(()) => ExitCode::SUCCESS,
        Err(err) => {
            tracing::error!(%err, "the transport failed");
            eprintln!("wharf: {err}");
            ExitCode::FAILURE
        }
    }
}

fn init_logging() {
    wharf::logging::init_with_default("warn");
}
