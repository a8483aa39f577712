//! `wharf check SERVER`: a report card for any MCP server, in any language. It speaks to the
//! server in every era it claims, validates each answer against the revision's official
//! schema (and each notification it sends) and each advertised tool schema against the JSON
//! Schema meta-schema, calls every tool with valid and invalid arguments, checks the MCP Apps
//! view a tool names, sends what a client should not (raw), and reports
//! each finding as pass, warn, fail or skip.

mod apps;
mod generate;
mod notifications;
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
use crate::server_args::{ServerArgs, runtime, take_target};
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
    /// Check listings and schemas only; call no tool.
    #[arg(long)]
    no_calls: bool,
    #[command(flatten)]
    server: ServerArgs,
}

pub(crate) fn check(mut args: CheckArgs) -> ExitCode {
    let target = match take_target(&mut args.words, &args.server) {
        Ok(target) => target,
        Err(message) => return exit::usage("check", &message),
    };
    if !args.words.is_empty() {
        return exit::usage("check", &format!("unexpected `{}`: name the server only", args.words.join(" ")));
    }
    let timeout = match args.server.timeout(10.0) {
        Ok(timeout) => timeout,
        Err(message) => return exit::usage("check", &message),
    };
    let settings = Settings {
        elicitation: args.elicitation,
        sampling_reply: args.sampling_reply.clone(),
        include_destructive: args.include_destructive,
        no_calls: args.no_calls,
    };
    let mut report = Report { server: target.to_string(), checks: Vec::new() };
    let runtime = runtime();
    let stateless = runtime.block_on(protocol::run(&mut report, &target, &args.server, &settings, timeout));
    if let Some(stateless) = stateless {
        runtime.block_on(async {
            match &target {
                Target::Command { program, args: arguments } => {
                    raw::stdio(&mut report, program, arguments, stateless, timeout, args.server.quiet_server()).await
                }
                Target::Url(url) => {
                    raw::http(&mut report, url, stateless, &args.server.raw_headers(url), timeout).await
                }
            }
        });
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
