//! `wharf check SERVER`: a report card for any MCP server, in any language. It speaks to the
//! server in every era it claims, validates each answer against the revision's official
//! schema (and each notification it sends) and each advertised tool schema against the JSON
//! Schema meta-schema, calls every tool with valid arguments and then with arguments that
//! break one constraint of its schema at a time (`probes.rs`; strings for a `pattern` from
//! `pattern.rs`), progress extending a call's deadline, checks the MCP Apps
//! view a tool names, sends what a client should not (raw), holds an HTTP server's Server Card
//! against what it says once connected (`card.rs`), and reports each finding as pass, warn,
//! fail or skip.

mod apps;
mod card;
mod connected;
pub(crate) mod generate;
mod notifications;
mod pattern;
mod probes;
mod protocol;
mod raw;
mod report;
mod schemas;
mod settings;

use std::path::PathBuf;
use std::process::ExitCode;

use clap::Args;
use wharf::client::Target;

use crate::exit;
use crate::server_args::{ServerArgs, block_on_unless_stopped, only_target, runtime};
use report::Report;
use settings::{Elicitation, Settings};

#[derive(Debug, Args)]
pub(crate) struct CheckArgs {
    /// [URL]: the server, when it is reached over HTTP.
    #[arg(value_name = "[URL]")]
    words: Vec<String>,
    /// Print the report as JSON.
    #[arg(long)]
    json: bool,
    /// Also write the report as JUnit XML to this file, for CI.
    #[arg(long, value_name = "FILE")]
    junit: Option<PathBuf>,
    /// How to answer the server's elicitation requests.
    #[arg(long, value_enum, default_value = "decline")]
    elicitation: Elicitation,
    /// Answer the server's sampling requests with this text (refused unless set).
    #[arg(long, value_name = "TEXT")]
    sampling_reply: Option<String>,
    /// Also call the tools that declare themselves destructive (`destructiveHint: true`).
    #[arg(long)]
    include_destructive: bool,
    /// Also probe the constraints of destructive tools, with arguments their schemas refuse.
    #[arg(long)]
    probe_destructive: bool,
    /// Check listings and schemas only; call no tool.
    #[arg(long)]
    no_calls: bool,
    /// Arguments to call tools with instead of those made from their schemas: a JSON object
    /// whose members are tool names, each with its arguments (an object).
    #[arg(long, value_name = "FILE")]
    args_file: Option<PathBuf>,
    /// The longest a tool call may take while progress notifications keep coming (each one
    /// starts the timeout again), in seconds.
    #[arg(long, value_name = "SECONDS", default_value_t = 120.0)]
    max_timeout: f64,
    #[command(flatten)]
    server: ServerArgs,
}

/// The sample arguments in `path`: a JSON object of tool names, each with an object.
fn sample_arguments(path: &std::path::Path) -> Result<std::collections::BTreeMap<String, serde_json::Value>, String> {
    let text = std::fs::read_to_string(path).map_err(|err| format!("--args-file {}: {err}", path.display()))?;
    let samples: std::collections::BTreeMap<String, serde_json::Value> = serde_json::from_str(&text)
        .map_err(|err| format!("--args-file {}: not a JSON object of tool names: {err}", path.display()))?;
    if let Some((tool, _)) = samples.iter().find(|(_, arguments)| !arguments.is_object()) {
        return Err(format!("--args-file {}: the arguments of `{tool}` are not an object", path.display()));
    }
    Ok(samples)
}

pub(crate) fn check(mut args: CheckArgs) -> ExitCode {
    let target = match only_target("check", &mut args.words, &args.server) {
        Ok(target) => target,
        Err(exit) => return exit,
    };
    let timeout = match args.server.timeout(10.0) {
        Ok(timeout) => timeout,
        Err(message) => return exit::usage("check", &message),
    };
    let sample_arguments = match args.args_file.as_deref().map(sample_arguments).transpose() {
        Ok(samples) => samples.unwrap_or_default(),
        Err(message) => return exit::usage("check", &message),
    };
    if !(args.max_timeout.is_finite() && args.max_timeout > 0.0) {
        return exit::usage("check", "--max-timeout is a number of seconds above 0");
    }
    let settings = Settings {
        elicitation: args.elicitation,
        sampling_reply: args.sampling_reply.clone(),
        include_destructive: args.include_destructive,
        probe_destructive: args.probe_destructive,
        no_calls: args.no_calls,
        max_timeout: std::time::Duration::from_secs_f64(args.max_timeout).max(timeout),
        sample_arguments,
    };
    let mut report = Report { server: target.to_string(), checks: Vec::new() };
    let runtime = runtime();
    let connected =
        block_on_unless_stopped(&runtime, protocol::run(&mut report, &target, &args.server, &settings, timeout));
    let connected = match connected {
        Ok(connected) => connected,
        Err(stopped) => stopped.exit("check"),
    };
    if let Some(connected) = connected {
        let stateless = connected.stateless;
        let probed = block_on_unless_stopped(&runtime, async {
            match &target {
                Target::Command { program, args: arguments } => {
                    raw::stdio(&mut report, program, arguments, stateless, timeout, args.server.quiet_server()).await
                }
                Target::Url(url) => {
                    raw::http(&mut report, url, stateless, &args.server.raw_headers(url), timeout).await;
                    if url.starts_with("http://") || url.starts_with("https://") {
                        card::check(&mut report, url, &target, &args.server, connected, timeout).await;
                    }
                }
            }
        });
        if let Err(stopped) = probed {
            stopped.exit("check");
        }
    }
    // Work given up on at its deadline (arguments made from a schema) is not waited for.
    runtime.shutdown_background();
    let mut out = std::io::stdout().lock();
    let printed = if args.json { report.print_json(&mut out) } else { report.print_table(&mut out) };
    if let Err(err) = printed {
        eprintln!("wharf check: {err}");
    }
    if let Some(path) = &args.junit
        && let Err(err) = std::fs::write(path, report.junit())
    {
        eprintln!("wharf check: {}: {err}", path.display());
        return ExitCode::from(exit::USAGE);
    }
    if report.failed() { ExitCode::from(exit::TOOL_ERROR) } else { ExitCode::SUCCESS }
}
