//! The `wharf` command: `wharf serve` runs an MCP server over stdio.

mod demo;

use std::io::IsTerminal;
use std::process::ExitCode;

// Every request allocates a few dozen small objects; mimalloc serves them several times faster
// than the system allocator (200k pipelined echo calls: 0.50 s -> 0.31 s). Transparent huge
// pages are off for it (the `no_thp` feature), or its arenas would cost 8 MiB more memory.
#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

const USAGE: &str = "\
wharf: build and serve Model Context Protocol servers

Usage:
  wharf serve       Serve the built-in demo server over stdio (stdin/stdout)
  wharf --version   Print the version
  wharf --help      Print this help

Logs go to stderr; set WHARF_LOG=debug (or info, warn, error) to see more.";

const CLIENT_CONFIG: &str = r#"{
  "mcpServers": {
    "wharf-demo": { "command": "wharf", "args": ["serve"] }
  }
}"#;

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    match args.iter().map(String::as_str).collect::<Vec<_>>().as_slice() {
        ["serve"] => serve(),
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

fn serve() -> ExitCode {
    init_logging();
    if std::io::stdin().is_terminal() {
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
    // One runtime thread: stdin and stdout have threads of their own, and the demo's handlers
    // are short, so a second worker only adds wake-ups. Measured at 32 requests in flight: the
    // same throughput as two workers and 1.4 MiB less peak memory.
    let runtime = match tokio::runtime::Builder::new_current_thread().enable_all().build() {
        Ok(runtime) => runtime,
        Err(err) => {
            eprintln!("wharf: could not start the async runtime: {err}");
            return ExitCode::FAILURE;
        }
    };
    match runtime.block_on(wharf::serve_stdio(server)) {
        Ok(()) => ExitCode::SUCCESS,
        Err(err) => {
            tracing::error!(%err, "the stdio transport failed");
            ExitCode::FAILURE
        }
    }
}

fn init_logging() {
    let level = match std::env::var("WHARF_LOG").as_deref() {
        Ok("trace") => tracing::Level::TRACE,
        Ok("debug") => tracing::Level::DEBUG,
        Ok("info") => tracing::Level::INFO,
        Ok("error") => tracing::Level::ERROR,
        _ => tracing::Level::WARN,
    };
    tracing_subscriber::fmt().with_writer(std::io::stderr).with_max_level(level).with_ansi(false).init();
}
