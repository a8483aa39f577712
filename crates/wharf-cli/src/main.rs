//! The `wharf` command: `wharf serve` runs the demo MCP server over stdio, or over Streamable
//! HTTP with `--http`; `list`, `call`, `read` and `prompt` talk to any MCP server.

mod answers;
mod ballast;
mod call;
mod check;
mod demo;
mod exit;
mod list;
mod render;
mod serve;
mod server_args;
mod typed_args;

use std::process::ExitCode;

use clap::{Parser, Subcommand};

use crate::call::{CallArgs, PromptArgs, ReadArgs};
use crate::check::CheckArgs;
use crate::list::ListArgs;
use crate::serve::ServeArgs;

// Every request allocates a handful of small objects, which mimalloc serves faster than the
// system allocator; its v2 line, because the Rust binding calls aligned entry points that v3
// routes through a slower path; transparent huge pages off (`no_thp`), which would cost
// memory. The measurements are in benches/NOTES.md.
#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

/// wharf: build and serve Model Context Protocol servers.
#[derive(Debug, Parser)]
#[command(
    name = "wharf",
    version,
    arg_required_else_help = true,
    after_help = concat!(
        "A server is named the same way by every command: an http(s):// URL first, or its command after `--`\n",
        "(wharf call echo message=hi -- python3 server.py).\n\n",
        "Exit codes: 0 success; 1 the tool reported an error or a check failed; 2 bad command line;\n",
        "3 protocol error (JSON-RPC error, an answer that is not MCP, a timeout); 4 the server could not be\n",
        "started or reached; 5 authorization required.\n\n",
        "Logs go to stderr; set WHARF_LOG=debug (or info, warn, error) to see more."
    )
)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Debug, Subcommand)]
enum Command {
    /// Serve the built-in demo server over stdio (stdin/stdout), or over Streamable HTTP.
    Serve(ServeArgs),
    /// List what a server offers: tools, prompts, resources and templates.
    #[command(after_help = LIST_HELP)]
    List(ListArgs),
    /// Call a tool and print its result.
    #[command(after_help = CALL_HELP)]
    Call(CallArgs),
    /// Read a resource and print its contents.
    #[command(after_help = READ_HELP)]
    Read(ReadArgs),
    /// Render a prompt and print its messages.
    #[command(after_help = PROMPT_HELP)]
    Prompt(PromptArgs),
    /// Check any MCP server: lifecycle, schemas, every tool, bad input; a report card.
    #[command(after_help = CHECK_HELP)]
    Check(CheckArgs),
}

const CHECK_HELP: &str = concat!(
    "Examples:\n",
    "  wharf check -- wharf serve\n",
    "  wharf check http://127.0.0.1:8080/mcp --junit check.xml\n",
    "  wharf check --json -- python3 server.py\n\n",
    "Every answer is validated against the official schema of the revision spoken (in each era the server\n",
    "claims), every tool schema against the JSON Schema meta-schema, and every tool is called with arguments\n",
    "made from its schema: valid ones must not give protocol errors, invalid ones must give -32602 or a tool\n",
    "error. Tools marked destructiveHint are skipped unless --include-destructive. Raw probes send malformed\n",
    "JSON, unknown methods and ids of both types. Exit 1 when a check fails.",
);

const LIST_HELP: &str = concat!(
    "Examples:\n",
    "  wharf list -- wharf serve                      everything the demo offers, over stdio\n",
    "  wharf list http://127.0.0.1:8080/mcp tools     the tools of a server over HTTP\n",
    "  wharf list --json -- python3 server.py         JSON, for scripts\n\n",
    "The server is an http(s):// URL given first, or a command after `--` (started, spoken to over stdio).",
);

const CALL_HELP: &str = concat!(
    "Examples:\n",
    "  wharf call echo message=hello -- wharf serve\n",
    "  wharf call http://127.0.0.1:8080/mcp calculator operation=add a=2 b=3\n",
    "  wharf call search --args-json '{\"filters\": {\"lang\": \"rust\"}}' -- ./server\n\n",
    "Text is printed as it is, structured content as JSON, images and audio saved to files (--save-dir).\n",
    "Progress is drawn on stderr when it is a terminal; the server's log messages go to stderr.",
);

const READ_HELP: &str = concat!(
    "Examples:\n",
    "  wharf read config://app -- wharf serve\n",
    "  wharf read http://127.0.0.1:8080/mcp users://1/profile --json",
);

const PROMPT_HELP: &str = "Example:\n  wharf prompt code_review language=rust code='fn main() {}' -- wharf serve";

fn main() -> ExitCode {
    let cli = Cli::parse();
    match cli.command {
        Command::Serve(args) => serve::serve(args),
        Command::List(args) => list::list(args),
        Command::Call(args) => call::call(args),
        Command::Read(args) => call::read(args),
        Command::Prompt(args) => call::prompt(args),
        Command::Check(args) => check::check(args),
    }
}
