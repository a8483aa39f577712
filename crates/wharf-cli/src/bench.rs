//! `wharf bench SERVER --tool NAME`: a bounded load generator for any MCP server. A number of
//! requests (or a duration) with a set number in flight, pipelined on one stdio connection or
//! over keep-alive HTTP connections; a live progress line, then throughput, latency
//! percentiles, errors, and the CPU and memory of a server it started.

use std::io::{IsTerminal, Write};
use std::process::ExitCode;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, LazyLock};
use std::time::{Duration, Instant};

use clap::Args;
use memchr::memmem::Finder;
use serde::Serialize;
use serde_json::{Value, json};
use wharf::client::{Client, PreparedRequest};

use crate::answers::Declining;
use crate::exit;
use crate::render;
use crate::server_args::{ServerArgs, runtime, take_target};

/// The most requests in flight.
const MAX_IN_FLIGHT: usize = 4096;

/// Requests sent before measuring, to warm the server and the connections.
const WARMUP: u64 = 200;

#[derive(Debug, Args)]
pub(crate) struct BenchArgs {
    /// [URL]: the server, when it is reached over HTTP.
    #[arg(value_name = "[URL]")]
    words: Vec<String>,
    /// The tool to call.
    #[arg(long, value_name = "NAME")]
    tool: String,
    /// Its arguments, as a JSON object.
    #[arg(long, value_name = "JSON", default_value = "{}")]
    args: String,
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
    let target = match take_target(&mut args.words, &args.server) {
        Ok(target) => target,
        Err(message) => return exit::usage("bench", &message),
    };
    if !args.words.is_empty() {
        return exit::usage("bench", &format!("unexpected `{}`: name the server only", args.words.join(" ")));
    }
    if !(1..=MAX_IN_FLIGHT).contains(&args.concurrency) {
        return exit::usage("bench", &format!("-c takes 1 to {MAX_IN_FLIGHT}"));
    }
    let arguments: Value = match serde_json::from_str(&args.args) {
        Ok(Value::Object(object)) => Value::Object(object),
        _ => return exit::usage("bench", "--args must be a JSON object"),
    };
    let options = match args.server.options(&target, Declining { tell: false }) {
        Ok(options) => options,
        Err(message) => return exit::usage("bench", &message),
    };
    let target_name = target.to_string();
    runtime().block_on(async {
        let client = match Client::connect_with(target, options).await {
            Ok(client) => client,
            Err(err) => return exit::failure("bench", &err),
        };
        // The tools are listed first, as a client does, so that 2026-07-28 `Mcp-Param-*`
        // headers go with the calls; the request is encoded once.
        let listed = client.list_tools().await;
        let prepared =
            listed.and_then(|_| client.prepare("tools/call", json!({"name": args.tool, "arguments": arguments})));
        let params = match prepared {
            Ok(prepared) => prepared,
            Err(err) => {
                client.close().await;
                return exit::failure("bench", &err);
            }
        };
        if let Err(err) = call(&client, &params).await {
            client.close().await;
            return exit::failure("bench", &err);
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
        let (latencies, errors) = run_bounded(&client, &params, bound, args.concurrency, true).await;
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

/// One call; `Ok(false)` for a tool error, or a server asking for input (which a load
/// generator does not give).
async fn call(client: &Client, request: &PreparedRequest) -> Result<bool, wharf::client::ClientError> {
    let result = client.send_prepared(request).await?;
    Ok(succeeded(result.get()))
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

/// Sends requests until `bound`, `in_flight` at a time; every latency in microseconds, and how
/// many failed. `show` draws the progress line on a terminal.
async fn run_bounded(
    client: &Client,
    params: &PreparedRequest,
    bound: Bound,
    in_flight: usize,
    show: bool,
) -> (Vec<u32>, u64) {
    let claimed = Arc::new(AtomicU64::new(0));
    let done = Arc::new(AtomicU64::new(0));
    let errors = Arc::new(AtomicU64::new(0));
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
        let (claimed, done, errors) = (claimed.clone(), done.clone(), errors.clone());
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
                let ok = matches!(call(&client, &params).await, Ok(true));
                latencies.push(started.elapsed().as_micros().min(u128::from(u32::MAX)) as u32);
                done.fetch_add(1, Ordering::Relaxed);
                if !ok {
                    errors.fetch_add(1, Ordering::Relaxed);
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
    (latencies, errors.load(Ordering::Relaxed))
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
}
