//! The `wharf` command: `wharf serve` runs the demo MCP server over stdio, or over Streamable
//! HTTP with `--http`; `list`, `call`, `read` and `prompt` talk to any MCP server.
//!
//! This is the only crate that prints or exits. What `wharf serve` runs is `wharf-demo`'s
//! (built for speed in the `dist` profile, which builds the rest for size); a folder is served
//! by `wharf-folder`; the other commands talk to servers through `wharf::client`. `build.rs`
//! compacts the official schemas `wharf check` compiles in, and packs the relative relocations
//! of the `dist` binary.
//!
//! # Floors, from the bottom up
//! A file imports only from floors below its own.
//!
//! 1. **Leaves.** `terminal_text.rs` (a server's text as it may be shown: control characters
//!    escaped), `browser.rs` (opening a page), `suggest.rs` ("did you mean"), `typed_args.rs`
//!    (`key=value` typed by the tool's schema), `ordered_json.rs` (JSON that keeps members in
//!    their written order), `serve.rs` (`wharf serve`: stdio, or HTTP until SIGINT or SIGTERM
//!    starts a graceful shutdown), `install/config_file.rs` (a client's configuration file read
//!    and replaced under a lock, never written through a link it did not make),
//!    `openapi.rs` (`wharf serve --openapi`: an API's document read, its operations the tools),
//!    `check/schemas.rs` (the official schemas of `mcp-spec/`, compacted and compiled in, and
//!    the meta-schema), `check/settings.rs`, `check/connected.rs` (what the check learnt of the
//!    server once connected), `check/pattern.rs` (strings matching a `pattern`,
//!    for the common subset of regular expressions), `cassette/mod.rs` (redaction, and how a
//!    request is matched; the format is `wharf::cassette`'s).
//! 2. `exit.rs` (the documented exit codes), `ask.rs` (a server's question asked at the
//!    terminal, each field read by its schema), `auth_args.rs` (the token file, the scopes to
//!    ask for, whether a command may open the browser), `render.rs` (tables, content, binary
//!    saved to new files, never through a link; a tool's own text raw only with `--raw` or off
//!    a terminal), `check/report.rs` (a table, JSON or JUnit), `check/generate.rs` (valid and
//!    invalid arguments from a schema, each confirmed against it, their sizes capped),
//!    `cassette/tape.rs` (the cassette being written: each message's revision and session),
//!    `cassette/tee.rs` (a response body passed on while its messages are written),
//!    `cassette/replayer.rs` (what answers a replayed request).
//! 3. `answers.rs` (the server's questions declined, or asked when a person is there; sampling
//!    refused), `server_args.rs` (a server named by a URL first or a command after `--`, with
//!    headers, bearer token or OAuth, revision and timeout), `new.rs` (`wharf new`: the
//!    templates under `templates/`, included at build time), `install.rs` (`wharf install`:
//!    each client's file and shape), `check/notifications.rs` (each notification validated
//!    against its definition), `check/raw.rs` (malformed lines and bodies sent below the
//!    client), `check/probes.rs` (arguments breaking one constraint at a time, each confirmed
//!    to pass with that constraint taken out), `surface.rs` (every listing a server offers,
//!    fetched whole), `cassette/loopback.rs` (the local HTTP servers of `record` and `replay`:
//!    loopback addresses, the `Host` and `Origin` guard, the accept loop).
//! 4. **The commands.** `gateway.rs` (`wharf gateway`: the servers a file mounts, behind one
//!    endpoint), `list.rs`, `call.rs` (`call`, `read`, `prompt`), `tokens.rs` (the
//!    catalog counted with the `o200k_base` tokenizer), `lint.rs` (`wharf lint`: what real
//!    clients refuse, each rule with its source), `lock.rs` (`wharf lock`: the surface in
//!    `mcp.lock`, differences classed breaking or additive), `bench.rs` (a bounded load generator
//!    reading the server's CPU and memory from `/proc`), `login.rs` (`wharf login` and
//!    `logout`), `check/protocol.rs` (the checks through the client, per era), `check/card.rs`
//!    (an HTTP server's Server Card held against what it says once connected),
//!    `cassette/record.rs` and `cassette/record_http.rs` (`wharf record`: a stdio or HTTP
//!    proxy writing the cassette), `cassette/replay.rs` and `cassette/replay_http.rs` (`wharf
//!    replay` over stdio or HTTP), `cassette/verify.rs` (`wharf verify`).
//! 5. `check/mod.rs` (`wharf check`).
//! 6. `main.rs`: parses and dispatches.

mod answers;
mod ask;
mod auth_args;
mod bench;
mod browser;
mod call;
mod cassette;
mod check;
mod exit;
mod gateway;
mod install;
mod lint;
mod list;
mod lock;
mod login;
mod new;
mod openapi;
mod ordered_json;
mod remote;
mod render;
mod serve;
mod server_args;
mod suggest;
mod surface;
mod terminal_text;
mod tokens;
mod typed_args;

use std::process::ExitCode;

use clap::{CommandFactory, Parser, Subcommand};

use crate::bench::BenchArgs;
use crate::call::{CallArgs, PromptArgs, ReadArgs};
use crate::cassette::record::RecordArgs;
use crate::cassette::replay::ReplayArgs;
use crate::cassette::verify::VerifyArgs;
use crate::check::CheckArgs;
use crate::gateway::GatewayArgs;
use crate::install::InstallArgs;
use crate::lint::LintArgs;
use crate::list::ListArgs;
use crate::lock::LockArgs;
use crate::login::{LoginArgs, LogoutArgs};
use crate::new::NewArgs;
use crate::serve::ServeArgs;
use crate::tokens::TokensArgs;

// The allocator is picked in `wharf-demo`, with the rest of what `wharf serve` runs.
use wharf_demo as _;

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
    Serve(Box<ServeArgs>),
    /// Serve the servers a file mounts behind one endpoint, over stdio or Streamable HTTP.
    #[command(after_help = GATEWAY_HELP)]
    Gateway(Box<GatewayArgs>),
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
    /// Record sessions with a server (over stdio, or HTTP with --url) to a cassette, passing every message on.
    Record(RecordArgs),
    /// Serve a cassette as a server (over stdio, or HTTP with --http): recorded answers to matching requests.
    Replay(ReplayArgs),
    /// Send a cassette's client side to a server and compare its answers with the recorded ones.
    Verify(VerifyArgs),
    /// What some real clients refuse or mangle in a server's tools, names and descriptions.
    Lint(LintArgs),
    /// Write a server's surface to mcp.lock, or check it against the file (--check) for CI.
    Lock(LockArgs),
    /// What a server's tools, prompts and resources cost in a model's context, in tokens.
    #[command(after_help = TOKENS_HELP)]
    Tokens(TokensArgs),
    /// Load-test a server: one tool called over and over, a number of calls in flight.
    #[command(after_help = BENCH_HELP)]
    Bench(BenchArgs),
    /// Create a new server: a Rust crate whose tests pass as it is, or a folder (--folder).
    #[command(after_help = NEW_HELP)]
    New(NewArgs),
    /// Add a server to the MCP configuration of Claude Code, Claude Desktop, Cursor or VS Code.
    #[command(after_help = INSTALL_HELP)]
    Install(InstallArgs),
    /// Log in to a server that asks for OAuth: a browser opens, the tokens are kept for later
    /// commands.
    #[command(after_help = LOGIN_HELP)]
    Login(LoginArgs),
    /// Forget the tokens kept for a server.
    Logout(LogoutArgs),
    /// Print the completion script of a shell: bash, zsh, fish, elvish or powershell.
    #[command(after_help = COMPLETIONS_HELP)]
    Completions {
        /// The shell.
        shell: clap_complete::Shell,
    },
}

const GATEWAY_HELP: &str = concat!(
    "The file mounts each server under a namespace:\n\n",
    "  [[mount]]\n",
    "  name = \"docs\"                      # in logs and errors; the namespace unless one is given\n",
    "  url = \"http://127.0.0.1:9000/mcp\"  # or: command = [\"python3\", \"server.py\"]\n",
    "  namespace = \"docs\"                 # its tools become docs_NAME; \"\" for none\n",
    "  revision = \"2025-11-25\"            # optional: the only revision spoken to it\n\n",
    "Examples:\n",
    "  wharf gateway gateway.toml                   over stdio, for a desktop client\n",
    "  wharf gateway gateway.toml --http 127.0.0.1:8080\n",
    "  wharf gateway gateway.toml --check           names each mistake in the file",
);

const NEW_HELP: &str = concat!(
    "Examples:\n",
    "  wharf new my-server            a crate: a #[tool], a prompt, a resource, a test; served over stdio\n",
    "  wharf new my-server --http     the same, served over Streamable HTTP\n",
    "  wharf new my-folder --folder   a folder for `wharf serve`: a command tool, a prompt, a resource, a skill\n\n",
    "The crate's README has the client configuration; `cargo test` passes in it as it is.",
);

const INSTALL_HELP: &str = concat!(
    "Examples:\n",
    "  wharf install claude-desktop my-server -- /path/to/my-server\n",
    "  wharf install claude-code notes -- wharf serve ./notes       paths here are made absolute\n",
    "  wharf install cursor remote --url https://mcp.example.com/mcp\n",
    "  wharf install vscode my-server --scope project --dry-run -- ./target/release/my-server\n\n",
    "The file is the one each client documents: ~/.claude.json (Claude Code; .mcp.json with --scope project),\n",
    "claude_desktop_config.json (Claude Desktop), ~/.cursor/mcp.json (Cursor), the user profile's mcp.json\n",
    "(VS Code; .vscode/mcp.json with --scope project). What is there is kept, an entry of the same name\n",
    "replaced; the file before is saved beside it as FILE.wharf-backup, and the change is shown as a diff.",
);

const LOGIN_HELP: &str = concat!(
    "Examples:\n",
    "  wharf login https://mcp.example.com/mcp\n",
    "  wharf login http://127.0.0.1:8080/mcp --client-id my-app    a client registered beforehand\n\n",
    "The browser ($BROWSER, or the desktop's) opens the authorization server's page; it sends you back to\n",
    "a port on 127.0.0.1 this command listens on. Tokens are kept in ~/.config/wharf/tokens.json (mode 0600,\n",
    "--tokens or WHARF_TOKENS to change) and used, and refreshed, by every later command for that URL.\n",
    "Commands run at a terminal log in by themselves when a server asks; elsewhere (CI) they exit 5 instead,\n",
    "or authorize as a machine with --client-credentials --client-id ID, the secret in WHARF_CLIENT_SECRET.",
);

const COMPLETIONS_HELP: &str = concat!(
    "Examples:\n",
    "  wharf completions bash > ~/.local/share/bash-completion/completions/wharf\n",
    "  wharf completions zsh > \"${fpath[1]}/_wharf\"\n",
    "  wharf completions fish > ~/.config/fish/completions/wharf.fish",
);

const BENCH_HELP: &str = concat!(
    "Examples:\n",
    "  wharf bench --tool echo --args-json '{\"message\":\"hi\"}' -- wharf serve\n",
    "  wharf bench http://127.0.0.1:8080/mcp --tool echo --args-json '{\"message\":\"hi\"}' -c 64 -d 10s\n\n",
    "Over stdio the calls are pipelined on the server's stdin; over HTTP they share keep-alive connections.\n",
    "The server's CPU time and memory are reported when wharf bench started it. Exit 1 if a call failed.",
);

const TOKENS_HELP: &str = concat!(
    "Examples:\n",
    "  wharf tokens -- wharf serve\n",
    "  wharf tokens http://127.0.0.1:8080/mcp --max-total 20000    fail CI past a budget\n\n",
    "Each definition is counted as tools/list gives it (what clients hand the model) with OpenAI's\n",
    "o200k_base tokenizer; tools whose description or schema is far above the median are named.",
);

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

/// `wharf serve`'s arguments alone. A desktop client starts a stdio server for every session,
/// and building every command's arguments to parse one command's was most of what start-up
/// did before the first request could be read.
#[derive(Debug, Parser)]
#[command(name = "wharf")]
struct ServeOnly {
    #[command(flatten)]
    args: ServeArgs,
}

/// The arguments of `wharf serve ...`: without clap for `wharf serve` alone and `wharf serve
/// DIR`, else when `ServeOnly` takes them; `None` for any other command and for what it refuses
/// (`--help` among it), which the whole command line then parses and answers as it always does.
fn serve_args_alone(args: impl Iterator<Item = std::ffi::OsString>) -> Option<ServeArgs> {
    let mut args = args.skip(1).peekable();
    if args.peek().is_none_or(|command| command != "serve") {
        return None;
    }
    let args: Vec<std::ffi::OsString> = args.collect();
    match &args[1..] {
        [] => return Some(ServeArgs::unset(None)),
        [folder] if !folder.as_encoded_bytes().starts_with(b"-") => {
            return Some(ServeArgs::unset(Some(folder.into())));
        }
        _ => {}
    }
    // The command's name stands where clap expects the program's.
    ServeOnly::try_parse_from(args).ok().map(|only| only.args)
}

fn main() -> ExitCode {
    if let Some(args) = serve_args_alone(std::env::args_os()) {
        return serve::serve(args);
    }
    let cli = Cli::parse();
    match cli.command {
        Command::Serve(args) => serve::serve(*args),
        Command::Gateway(args) => gateway::gateway(*args),
        Command::List(args) => list::list(args),
        Command::Call(args) => call::call(args),
        Command::Read(args) => call::read(args),
        Command::Prompt(args) => call::prompt(args),
        Command::Check(args) => check::check(args),
        Command::Tokens(args) => tokens::tokens(args),
        Command::Lint(args) => lint::lint(args),
        Command::Record(args) => cassette::record::record(args),
        Command::Replay(args) => cassette::replay::replay(args),
        Command::Verify(args) => cassette::verify::verify(args),
        Command::Lock(args) => lock::lock(args),
        Command::Bench(args) => bench::bench(args),
        Command::New(args) => new::new(args),
        Command::Install(args) => install::install(args),
        Command::Login(args) => login::login(args),
        Command::Logout(args) => login::logout(args),
        Command::Completions { shell } => {
            clap_complete::generate(shell, &mut Cli::command(), "wharf", &mut std::io::stdout());
            ExitCode::SUCCESS
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// What the whole command line makes of `line` when it names `serve`, as text to compare.
    fn parsed_whole(line: &[&str]) -> Option<String> {
        match Cli::try_parse_from(line).ok()?.command {
            Command::Serve(args) => Some(format!("{args:?}")),
            _ => None,
        }
    }

    #[test]
    fn serve_alone_takes_exactly_what_the_whole_command_line_takes_and_leaves_the_rest_to_it() {
        let taken: &[&[&str]] = &[
            &["wharf", "serve"],
            &["wharf", "serve", "--http", "127.0.0.1:0"],
            &["wharf", "serve", "--http", "127.0.0.1:0", "--auth-issuer", "https://id.example", "--auth-scope", "mcp"],
            &["wharf", "serve", "notes", "--no-watch"],
            &["wharf", "serve", "--idempotency-ttl", "60"],
        ];
        let left: &[&[&str]] = &[
            &["wharf", "serve", "--no-watch"],
            &["wharf", "serve", "--idempotency-ttl", "0"],
            &["wharf", "serve", "--unix", "/tmp/s", "--http", "127.0.0.1:0"],
            &["wharf", "serve", "--http"],
            &["wharf", "serve", "--bogus"],
            &["wharf", "serve", "one", "two"],
            &["wharf", "serve", "--help"],
            &["wharf", "serve", "--version"],
            &["wharf", "list", "--", "wharf", "serve"],
            &["wharf", "--version"],
            &["wharf"],
        ];
        // The lines taken without clap are what clap makes of them.
        for line in [&["wharf", "serve"][..], &["wharf", "serve", "notes"]] {
            let parsed = ServeOnly::try_parse_from(&line[1..]).expect("clap takes it").args;
            let folder = line.get(2).map(std::path::PathBuf::from);
            assert_eq!(format!("{:?}", ServeArgs::unset(folder)), format!("{parsed:?}"), "{line:?}");
        }
        for (line, expected_taken) in taken.iter().map(|line| (line, true)).chain(left.iter().map(|line| (line, false)))
        {
            let alone = serve_args_alone(line.iter().map(std::ffi::OsString::from)).map(|args| format!("{args:?}"));
            assert_eq!(alone.is_some(), expected_taken, "{line:?}");
            assert_eq!(alone, parsed_whole(line), "{line:?}");
        }
    }
}
