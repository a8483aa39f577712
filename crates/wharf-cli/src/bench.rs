//! `wharf bench SERVER --tool NAME`: a bounded load generator for any MCP server. A number of
//! requests (or a duration) with a set number in flight, pipelined on one stdio connection or
//! over keep-alive HTTP connections; a live progress line, then throughput, latency
//! percentiles, errors, and the CPU and memory of a server it started.

use std::io::{IsTerminal, Write};
use std::process::ExitCode;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, LazyLock, OnceLock};
use std::time::{Duration, Instant};

use clap::Args;
use memchr::memmem::Finder;
use serde::Serialize;
use serde_json::{Map, Value, json};
use wharf::client::{Client, ClientError, ErrorKind, PreparedRequest};
use wharf::protocol::Tool;

use crate::answers::Declining;
use crate::exit;
use crate::render;
use crate::server_args::{ServerArgs, block_on_unless_stopped, only_target, runtime};
use crate::suggest;
use crate::terminal_text::escaped;

/// The most requests in flight.
const MAX_IN_FLIGHT: usize = 4096;

/// Requests sent before measuring, to warm the server and the connections.
const WARMUP: u64 = 200;

/// Arguments as `--args-json` takes them, for messages.
const EXAMPLE_ARGUMENTS: &str = r#"'{"message":"hi"}'"#;

/// The most characters of the first error shown in the printed report (the JSON has it all).
const SHOWN_ERROR_CHARS: usize = 300;

#[derive(Debug, Args)]
pub(crate) struct BenchArgs {
    /// [URL]: the server, when it is reached over HTTP.
    #[arg(value_name = "[URL]")]
    words: Vec<String>,
    /// The tool to call.
    #[arg(long, value_name = "NAME")]
    tool: String,
    /// Its arguments, as a JSON object. (`--args`, this option's old name, works too.)
    #[arg(long, alias = "args", value_name = "JSON", default_value = "{}")]
    args_json: String,
    /// How many requests are in flight at once.
    #[arg(short = 'c', long, value_name = "N", default_value_t = 32)]
    concurrency: usize,
    /// How many requests to send (10,000 unless --duration is given).
    #[arg(short = 'n', long, value_name = "N", conflicts_with = "duration")]
    requests: Option<u64>,
    /// How long to send requests for: 10s, 500ms, 2m.
    #[arg(short = 'd', long, value_name = "DURATION", value_parser = parse_duration)]
    duration: Option<Duration>,
    /// Print the results as JSON.
    #[arg(long)]
    json: bool,
    #[command(flatten)]
    server: ServerArgs,
}

fn parse_duration(text: &str) -> Result<Duration, String> {
    let (number, unit) =
        text.trim().split_at(text.trim().find(|c: char| c.is_ascii_alphabetic()).unwrap_or(text.len()));
    let value: f64 = number.parse().map_err(|_| format!("`{text}` is not a duration like 10s, 500ms or 2m"))?;
    let seconds = match unit {
        "ms" => value / 1000.0,
        "s" | "" => value,
        "m" => value * 60.0,
        _ => return Err(format!("`{text}`: the unit is ms, s or m")),
    };
    if !(seconds > 0.0 && seconds <= 3600.0) {
        return Err("a duration between 1 ms and an hour".to_owned());
    }
    Ok(Duration::from_secs_f64(seconds))
}

/// What a run measured.
#[derive(Debug, Serialize)]
pub(crate) struct Results {
    target: String,
    tool: String,
    protocol_version: String,
    concurrency: usize,
    requests: u64,
    errors: u64,
    seconds: f64,
    requests_per_second: f64,
    /// What the first failed call said (the probe's, or the run's): the tool's text or the
    /// error's message; `null` when none failed.
    first_error: Option<String>,
    latency_ms: Latency,
    /// The server's CPU time over the run and its memory, when the bench started it.
    #[serde(skip_serializing_if = "Option::is_none")]
    server: Option<Usage>,
    /// This process's CPU time over the run.
    client_cpu_seconds: f64,
    client_cpu_us_per_request: f64,
}

#[derive(Debug, Serialize)]
struct Latency {
    p50: f64,
    p90: f64,
    p99: f64,
    max: f64,
}

#[derive(Debug, Serialize)]
struct Usage {
    cpu_seconds: f64,
    cpu_us_per_request: f64,
    rss_mib: f64,
    peak_rss_mib: f64,
}

/// How a run ends: after a number of requests, or at a time.
#[derive(Clone, Copy)]
enum Bound {
    Requests(u64),
    Until(Instant),
}

pub(crate) fn bench(mut args: BenchArgs) -> ExitCode {
    let target = match only_target("bench", &mut args.words, &args.server) {
        Ok(target) => target,
        Err(exit) => return exit,
    };
    if !(1..=MAX_IN_FLIGHT).contains(&args.concurrency) {
        return exit::usage("bench", &format!("-c takes 1 to {MAX_IN_FLIGHT}"));
    }
    let arguments = match serde_json::from_str(&args.args_json) {
        Ok(Value::Object(object)) => object,
        Ok(_) => return exit::usage("bench", &format!("--args-json must be a JSON object, like {EXAMPLE_ARGUMENTS}")),
        Err(err) => {
            return exit::usage(
                "bench",
                &format!("--args-json is not JSON ({err}); write an object, like {EXAMPLE_ARGUMENTS}"),
            );
        }
    };
    let options = match args.server.options(&target, Declining { tell: false }) {
        Ok(options) => options,
        Err(message) => return exit::usage("bench", &message),
    };
    let target_name = target.to_string();
    block_on_unless_stopped(&runtime(), async {
        let client = match Client::connect_with(target, options).await {
            Ok(client) => client,
            Err(err) => return exit::failure("bench", &err),
        };
        // The tools are listed first, as a client does, so that 2026-07-28 `Mcp-Param-*`
        // headers go with the calls; the request is encoded once.
        let listed = client.list_tools().await;
        let given = Value::Object(arguments.clone());
        let prepared = listed.and_then(|tools| {
            Ok((tools, client.prepare("tools/call", json!({"name": args.tool, "arguments": given}))?))
        });
        let (tools, params) = match prepared {
            Ok(prepared) => prepared,
            Err(err) => {
                client.close().await;
                return exit::failure("bench", &err);
            }
        };
        let described = tools.iter().find(|tool| tool.name == args.tool);
        let known: Vec<&str> = tools.iter().map(|tool| tool.name.as_str()).collect();
        if described.is_none() {
            let message = format!(
                "wharf bench: `{}` is not among the tools the server lists ({}){}",
                args.tool,
                known.join(", "),
                suggest::did_you_mean(&args.tool, known.iter().copied())
            );
            eprintln!("{}", escaped(&message));
        }
        // One call first, whose failure is shown: a run of nothing but errors says little.
        let probe = client.send_prepared(&params).await;
        let probe = probe.as_deref().map(serde_json::value::RawValue::get);
        let mut first_error = None;
        match probe {
            Ok(result) if succeeded(result) => {}
            // A name the server neither lists nor takes: there is nothing to measure.
            Err(err) if err.kind() != ErrorKind::Rpc || described.is_none() => {
                let code = exit::failure("bench", err);
                client.close().await;
                return code;
            }
            failed => {
                let text = failure_text(failed);
                eprintln!("wharf bench: the first call of `{}` failed: {}", args.tool, one_line(&text, usize::MAX));
                eprintln!("wharf bench: {}", escaped(&arguments_hint(&args.tool, described, &arguments)));
                first_error = Some(text);
            }
        }
        run_bounded(&client, &params, Bound::Requests(WARMUP), args.concurrency.min(WARMUP as usize), false).await;
        let bound = match (args.requests, args.duration) {
            (_, Some(duration)) => Bound::Until(Instant::now() + duration),
            (requests, None) => Bound::Requests(requests.unwrap_or(10_000)),
        };
        let pid = client.server_pid();
        let server_before = pid.and_then(cpu_seconds_of);
        let client_before = cpu_seconds_of_self();
        let started = Instant::now();
        let run = run_bounded(&client, &params, bound, args.concurrency, true).await;
        let (latencies, errors) = (run.latencies, run.errors);
        let seconds = started.elapsed().as_secs_f64();
        let client_cpu = cpu_seconds_of_self().zip(client_before).map_or(0.0, |(after, before)| after - before);
        let requests = latencies.len() as u64;
        let server = pid.and_then(|pid| {
            let cpu = cpu_seconds_of(pid)? - server_before?;
            let (rss, peak) = memory_of(pid)?;
            Some(Usage {
                cpu_seconds: cpu,
                cpu_us_per_request: per_request(cpu, requests),
                rss_mib: rss,
                peak_rss_mib: peak,
            })
        });
        let results = Results {
            target: target_name,
            tool: args.tool.clone(),
            protocol_version: client.protocol_version().as_str().to_owned(),
            concurrency: args.concurrency,
            requests,
            errors,
            seconds,
            requests_per_second: requests as f64 / seconds.max(1e-9),
            first_error: first_error.or(run.first_error),
            latency_ms: latency(latencies),
            server,
            client_cpu_seconds: client_cpu,
            client_cpu_us_per_request: per_request(client_cpu, requests),
        };
        client.close().await;
        let mut out = std::io::stdout().lock();
        let _ = if args.json { render::json(&mut out, &results) } else { print(&mut out, &results) };
        if results.errors > 0 { ExitCode::from(exit::TOOL_ERROR) } else { ExitCode::SUCCESS }
    })
    .unwrap_or_else(|stopped| stopped.exit("bench"))
}

fn per_request(seconds: f64, requests: u64) -> f64 {
    if requests == 0 { 0.0 } else { seconds * 1e6 / requests as f64 }
}

/// What a result says of how the call went, read without building the rest.
#[derive(serde::Deserialize)]
struct Outcome {
    #[serde(rename = "isError", default)]
    is_error: Option<bool>,
    #[serde(rename = "resultType", default)]
    result_type: Option<String>,
}

/// What a failed call said, for a person: the text of a tool error, why another result is
/// not a success, or the message of a request that failed.
fn failure_text(outcome: Result<&str, &ClientError>) -> String {
    let result = match outcome {
        Ok(result) => result,
        Err(err) => return err.to_string(),
    };
    let Ok(Value::Object(result)) = serde_json::from_str::<Value>(result) else {
        return format!("the result is not an object: {}", one_line(result, SHOWN_ERROR_CHARS));
    };
    if let Some(kind) = result.get("resultType").and_then(Value::as_str).filter(|kind| *kind != "complete") {
        return format!("the server asks for input (resultType `{kind}`), which wharf bench does not give");
    }
    let texts: Vec<&str> = result
        .get("content")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .filter_map(|block| block.get("text").and_then(Value::as_str))
        .collect();
    if texts.is_empty() { "a tool error, with no text".to_owned() } else { texts.join("\n") }
}

/// How to pass `tool`'s arguments, after a call with `given` failed: the properties its schema
/// names, and an `--args-json` with the required ones.
fn arguments_hint(tool: &str, described: Option<&Tool>, given: &Map<String, Value>) -> String {
    let going_on = "the run goes on, measuring the failing call";
    let Some(schema) = described.map(|tool| &tool.input_schema) else {
        return format!("pass the tool's arguments with --args-json, like {EXAMPLE_ARGUMENTS}; {going_on}");
    };
    let properties = schema.get("properties").and_then(Value::as_object);
    let required: Vec<&str> =
        schema.get("required").and_then(Value::as_array).into_iter().flatten().filter_map(Value::as_str).collect();
    let optional: Vec<&str> = properties
        .into_iter()
        .flat_map(|properties| properties.keys())
        .map(String::as_str)
        .filter(|name| !required.contains(name))
        .collect();
    let takes = match (required.as_slice(), optional.as_slice()) {
        ([], []) => format!("`{tool}` takes no arguments"),
        ([], optional) => format!("`{tool}` takes {}", optional.join(", ")),
        (required, []) => format!("`{tool}` takes {} (required)", required.join(", ")),
        (required, optional) => {
            format!("`{tool}` takes {} (required) and {}", required.join(", "), optional.join(", "))
        }
    };
    // Written by hand to keep the order of `required`, which a `Map` would sort.
    let members: Vec<String> = required
        .iter()
        .map(|name| {
            let property = properties.and_then(|properties| properties.get(*name));
            format!("{}:{}", Value::from(*name), example_value(property, schema))
        })
        .collect();
    let action = if given.is_empty() { "pass the arguments with" } else { "check the arguments given in" };
    let example = if members.is_empty() { String::new() } else { format!(", like '{{{}}}'", members.join(",")) };
    format!("{takes}; {action} --args-json{example}; {going_on}")
}

/// A value of the kind `property` describes, for an example: its first `enum` value or one
/// of its type, following a `$ref` into the schema's `$defs`.
fn example_value(property: Option<&Value>, schema: &Map<String, Value>) -> Value {
    let Some(mut property) = property else { return json!("...") };
    if let Some(name) = property.get("$ref").and_then(Value::as_str).and_then(|at| at.strip_prefix("#/$defs/"))
        && let Some(defined) = schema.get("$defs").and_then(|defs| defs.get(name))
    {
        property = defined;
    }
    if let Some(first) = property.get("enum").and_then(Value::as_array).and_then(|values| values.first()) {
        return first.clone();
    }
    let kind = match property.get("type") {
        Some(Value::Array(kinds)) => kinds.iter().filter_map(Value::as_str).find(|kind| *kind != "null"),
        Some(kind) => kind.as_str(),
        None => None,
    };
    match kind {
        Some("integer" | "number") => json!(1),
        Some("boolean") => json!(true),
        Some("array") => json!([]),
        Some("object") => json!({}),
        _ => json!("..."),
    }
}

/// `text` on one line, cut at `limit` characters.
fn one_line(text: &str, limit: usize) -> String {
    // What the server wrote, so its control characters are escaped too.
    let line = escaped(&text.split_whitespace().collect::<Vec<_>>().join(" ")).into_owned();
    match line.char_indices().nth(limit) {
        Some((at, _)) => format!("{}…", &line[..at]),
        None => line,
    }
}

/// The member names `succeeded` looks for, with their finders built once.
static IS_ERROR: LazyLock<Finder<'static>> = LazyLock::new(|| Finder::new(b"\"isError\""));
static RESULT_TYPE: LazyLock<Finder<'static>> = LazyLock::new(|| Finder::new(b"\"resultType\""));

/// True when a result is an object, complete and not a tool error. Every member named `isError`
/// or `resultType`, at any depth, is looked at first: when each says `false` or `"complete"`,
/// so does the top level's (or it has none), and the result need not be parsed; otherwise it
/// is.
fn succeeded(result: &str) -> bool {
    if !result.starts_with('{') {
        return false;
    }
    if every_member_says(result, &IS_ERROR, "false") && every_member_says(result, &RESULT_TYPE, "\"complete\"") {
        return true;
    }
    let outcome: Outcome = serde_json::from_str(result).unwrap_or(Outcome { is_error: Some(true), result_type: None });
    outcome.is_error != Some(true) && outcome.result_type.as_deref().is_none_or(|kind| kind == "complete")
}

/// True when every occurrence of the quoted name `key` followed by a colon (a member's name) is
/// followed by `value`. A quote inside a string is escaped, so a quoted name only appears as a
/// member's name, or as a string value (which no colon follows).
fn every_member_says(text: &str, key: &Finder<'_>, value: &str) -> bool {
    key.find_iter(text.as_bytes()).all(|at| {
        // The key is ASCII and ends with a quote, so what follows starts on a character boundary.
        match text[at + key.needle().len()..].trim_start().strip_prefix(':') {
            Some(rest) => rest.trim_start().starts_with(value),
            None => true,
        }
    })
}

/// What one bounded run saw.
struct Run {
    /// Every latency, in microseconds.
    latencies: Vec<u32>,
    /// How many calls failed.
    errors: u64,
    /// What the first failure said.
    first_error: Option<String>,
}

/// Sends requests until `bound`, `in_flight` at a time. `show` draws the progress line on a
/// terminal.
async fn run_bounded(client: &Client, params: &PreparedRequest, bound: Bound, in_flight: usize, show: bool) -> Run {
    let claimed = Arc::new(AtomicU64::new(0));
    let done = Arc::new(AtomicU64::new(0));
    let errors = Arc::new(AtomicU64::new(0));
    let first_error = Arc::new(OnceLock::new());
    let progress = (show && std::io::stderr().is_terminal()).then(|| {
        let done = done.clone();
        let errors = errors.clone();
        tokio::spawn(async move {
            let started = Instant::now();
            loop {
                tokio::time::sleep(Duration::from_millis(250)).await;
                let count = done.load(Ordering::Relaxed);
                let rate = count as f64 / started.elapsed().as_secs_f64();
                eprint!("\r\x1b[2K{count} requests, {rate:.0}/s, {} errors", errors.load(Ordering::Relaxed));
            }
        })
    });
    let mut workers = Vec::with_capacity(in_flight);
    for _ in 0..in_flight {
        let client = client.clone();
        let params = params.clone();
        let (claimed, done, errors, first_error) = (claimed.clone(), done.clone(), errors.clone(), first_error.clone());
        workers.push(tokio::spawn(async move {
            let mut latencies = Vec::new();
            loop {
                let go = match bound {
                    Bound::Requests(count) => claimed.fetch_add(1, Ordering::Relaxed) < count,
                    Bound::Until(deadline) => Instant::now() < deadline,
                };
                if !go {
                    break;
                }
                let started = Instant::now();
                let outcome = client.send_prepared(&params).await;
                latencies.push(started.elapsed().as_micros().min(u128::from(u32::MAX)) as u32);
                done.fetch_add(1, Ordering::Relaxed);
                let outcome = outcome.as_deref().map(serde_json::value::RawValue::get);
                if !matches!(outcome, Ok(result) if succeeded(result)) {
                    errors.fetch_add(1, Ordering::Relaxed);
                    // Only the first failure is read: an error path runs at full speed.
                    if first_error.get().is_none() {
                        let _ = first_error.set(failure_text(outcome));
                    }
                }
            }
            latencies
        }));
    }
    let mut latencies = Vec::new();
    for worker in workers {
        if let Ok(mut some) = worker.await {
            latencies.append(&mut some);
        }
    }
    if let Some(progress) = progress {
        progress.abort();
        eprint!("\r\x1b[2K");
    }
    let first_error = first_error.get().cloned();
    Run { latencies, errors: errors.load(Ordering::Relaxed), first_error }
}

fn latency(mut micros: Vec<u32>) -> Latency {
    micros.sort_unstable();
    let at = |share: f64| -> f64 {
        if micros.is_empty() {
            return 0.0;
        }
        let index = ((micros.len() as f64 * share).ceil() as usize).clamp(1, micros.len()) - 1;
        f64::from(micros[index]) / 1000.0
    };
    Latency { p50: at(0.50), p90: at(0.90), p99: at(0.99), max: at(1.0) }
}

/// A process's user and system CPU time, from /proc (Linux).
fn cpu_seconds_of(pid: u32) -> Option<f64> {
    cpu_seconds(&std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?)
}

fn cpu_seconds_of_self() -> Option<f64> {
    cpu_seconds(&std::fs::read_to_string("/proc/self/stat").ok()?)
}

/// utime and stime (fields 14 and 15, after the parenthesized command name), in clock ticks of
/// 1/100 s as Linux reports them.
fn cpu_seconds(stat: &str) -> Option<f64> {
    let after_name = &stat[stat.rfind(')')? + 2..];
    let fields: Vec<&str> = after_name.split_whitespace().collect();
    let user: f64 = fields.get(11)?.parse().ok()?;
    let system: f64 = fields.get(12)?.parse().ok()?;
    Some((user + system) / 100.0)
}

/// Resident memory now and at its peak, in MiB.
fn memory_of(pid: u32) -> Option<(f64, f64)> {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).ok()?;
    let field = |name: &str| -> Option<f64> {
        let line = status.lines().find(|line| line.starts_with(name))?;
        let kib: f64 = line.split_whitespace().nth(1)?.parse().ok()?;
        Some(kib / 1024.0)
    };
    Some((field("VmRSS:")?, field("VmHWM:")?))
}

fn print(out: &mut impl Write, results: &Results) -> std::io::Result<()> {
    writeln!(
        out,
        "wharf bench: tools/call {} on {} ({}), {} in flight",
        results.tool, results.target, results.protocol_version, results.concurrency
    )?;
    writeln!(out, "  requests     {} ({} errors)", results.requests, results.errors)?;
    if let Some(error) = &results.first_error {
        writeln!(out, "  first error  {}", one_line(error, SHOWN_ERROR_CHARS))?;
    }
    writeln!(out, "  duration     {:.3} s", results.seconds)?;
    writeln!(out, "  throughput   {:.0} requests/s", results.requests_per_second)?;
    let latency = &results.latency_ms;
    writeln!(
        out,
        "  latency      p50 {:.3} ms   p90 {:.3} ms   p99 {:.3} ms   max {:.3} ms",
        latency.p50, latency.p90, latency.p99, latency.max
    )?;
    if let Some(server) = &results.server {
        writeln!(
            out,
            "  server       CPU {:.3} s ({:.1} µs per request), RSS {:.1} MiB (peak {:.1} MiB)",
            server.cpu_seconds, server.cpu_us_per_request, server.rss_mib, server.peak_rss_mib
        )?;
    }
    writeln!(
        out,
        "  client       CPU {:.3} s ({:.1} µs per request)",
        results.client_cpu_seconds, results.client_cpu_us_per_request
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn durations_and_percentiles_read_as_expected() {
        assert_eq!(parse_duration("500ms").unwrap(), Duration::from_millis(500));
        assert_eq!(parse_duration("2m").unwrap(), Duration::from_secs(120));
        assert_eq!(parse_duration("1.5").unwrap(), Duration::from_millis(1500));
        assert!(parse_duration("5h").is_err() && parse_duration("x").is_err() && parse_duration("0s").is_err());
        let latency = latency((1..=100).map(|micros| micros * 1000).collect());
        assert_eq!((latency.p50, latency.p90, latency.p99, latency.max), (50.0, 90.0, 99.0, 100.0));
    }

    #[test]
    fn cpu_time_is_read_after_the_command_name() {
        let stat = "42 (a (weird) name) S 1 2 3 4 5 6 7 8 9 10 250 150 0 0";
        assert_eq!(cpu_seconds(stat), Some(4.0));
    }

    fn tool(schema: Value) -> Tool {
        serde_json::from_value(json!({"name": "calculator", "inputSchema": schema})).unwrap()
    }

    /// A run of nothing but errors shows what the first one said (issue 37).
    #[test]
    fn a_failed_call_is_told_by_what_it_said() {
        let tool_error = r#"{"content":[{"type":"text","text":"\"message\" is required"}],"isError":true}"#;
        assert_eq!(failure_text(Ok(tool_error)), "\"message\" is required");
        assert_eq!(failure_text(Ok(r#"{"content":[],"isError":true}"#)), "a tool error, with no text");
        let asking = r#"{"inputRequests":{},"resultType":"input_required"}"#;
        assert_eq!(
            failure_text(Ok(asking)),
            "the server asks for input (resultType `input_required`), which wharf bench does not give"
        );
        assert_eq!(failure_text(Ok("[]")), "the result is not an object: []");
        assert_eq!(one_line("two\n  lines", 100), "two lines");
        assert_eq!(one_line("abcdef", 3), "abc…");
    }

    #[test]
    fn the_hint_names_the_arguments_and_an_example_in_schema_order() {
        let calculator = tool(json!({
            "type": "object",
            "$defs": {"Operation": {"enum": ["add", "subtract"], "type": "string"}},
            "properties": {
                "operation": {"$ref": "#/$defs/Operation"}, "b": {"type": "number"},
                "a": {"type": ["integer", "null"]}, "precision": {"type": "integer"}
            },
            "required": ["operation", "b", "a"]
        }));
        assert_eq!(
            arguments_hint("calculator", Some(&calculator), &Map::new()),
            "`calculator` takes operation, b, a (required) and precision; pass the arguments with --args-json, \
             like '{\"operation\":\"add\",\"b\":1,\"a\":1}'; the run goes on, measuring the failing call"
        );
        let given = json!({"a": "x"}).as_object().cloned().unwrap();
        assert!(
            arguments_hint("calculator", Some(&calculator), &given)
                .contains("; check the arguments given in --args-json")
        );
        assert_eq!(
            arguments_hint("hidden", None, &Map::new()),
            "pass the tool's arguments with --args-json, like '{\"message\":\"hi\"}'; the run goes on, measuring \
             the failing call"
        );
        let bare = tool(json!({"type": "object"}));
        assert!(arguments_hint("calculator", Some(&bare), &Map::new()).starts_with("`calculator` takes no arguments;"));
    }

    #[test]
    fn args_json_is_the_name_and_args_still_works() {
        use clap::Parser;

        for flag in ["--args-json", "--args"] {
            let line = ["wharf", "bench", "--tool", "echo", flag, r#"{"message":"hi"}"#, "--", "wharf", "serve"];
            match crate::Cli::try_parse_from(line).unwrap().command {
                crate::Command::Bench(args) => assert_eq!(args.args_json, r#"{"message":"hi"}"#, "{flag}"),
                other => panic!("not bench: {other:?}"),
            }
        }
    }

    #[test]
    fn outcomes_are_read_exactly_with_or_without_the_parse() {
        let ok = [
            r#"{"content":[],"resultType":"complete"}"#,
            r#"{"content":[],"isError" : false}"#,
            r#"{"content":[{"type":"text","text":"\"isError\": true"}]}"#,
            r#"{"structuredContent":{"isError":true},"isError":false}"#,
            r#"{"structuredContent":{"resultType":"input_required"}}"#,
        ];
        let failed = [
            r#"{"content":[],"isError":true}"#,
            r#"{"content":[],"isError": true,"resultType":"complete"}"#,
            r#"{"inputRequests":{},"resultType":"input_required"}"#,
            "[]",
            "null",
        ];
        for result in ok {
            assert!(succeeded(result), "{result} succeeded");
        }
        for result in failed {
            assert!(!succeeded(result), "{result} failed");
        }
    }

    #[test]
    fn the_first_error_is_shown_on_one_line_with_the_servers_control_characters_escaped() {
        assert_eq!(
            one_line("bad\u{1b}]52;c;ZXZpbA==\u{7}\n  input", usize::MAX),
            "bad\\u{1b}]52;c;ZXZpbA==\\u{7} input"
        );
    }
}
