//! Run with `scripts/bench`, which builds `wharf` and this program with the `dist` profile.
//!
//! Measures Wharf's client as a load generator: `wharf bench -- wharf serve` (the client
//! pipelining `tools/call` echo on one stdio connection, 32 in flight) against this crate's
//! dedicated driver on the same server with the same window, interleaved round by round; and
//! the client's own processor time per request against the bare serde loop's (what a server
//! that only parses a line and writes an answer spends). Prints the median of each round's
//! ratio, as the other programs do.

use std::process::Command;

use serde_json::Value;
use wharf_bench::stdio::{answer_line, drive, server_info, spawn, stateless_request};

/// One `wharf bench` run's figures.
struct BenchRun {
    requests_per_second: f64,
    client_cpu_us: f64,
}

fn wharf_bench(wharf: &str, count: usize) -> BenchRun {
    let output = Command::new(wharf)
        .args(["bench", "--tool", "echo", "--args", r#"{"message":"hello, wharf"}"#, "-c", "32", "-n"])
        .arg(count.to_string())
        .args(["--json", "--", wharf, "serve"])
        .output()
        .unwrap_or_else(|err| panic!("cannot run {wharf} bench: {err}"));
    assert!(output.status.success(), "wharf bench failed: {}", String::from_utf8_lossy(&output.stderr));
    let results: Value = serde_json::from_slice(&output.stdout).expect("wharf bench --json prints JSON");
    BenchRun {
        requests_per_second: results["requests_per_second"].as_f64().unwrap_or(0.0),
        client_cpu_us: results["client_cpu_us_per_request"].as_f64().unwrap_or(0.0),
    }
}

fn median(mut values: Vec<f64>) -> f64 {
    values.sort_by(f64::total_cmp);
    values[values.len() / 2]
}

fn main() {
    let target = std::env::var("WHARF_TARGET_DIR").unwrap_or_else(|_| "target/dist".to_owned());
    let wharf = format!("{target}/wharf");
    let bare = format!("{target}/bare-echo");
    let count: usize = std::env::var("BENCH_REQUESTS").ok().and_then(|n| n.parse().ok()).unwrap_or(100_000);
    let rounds: usize = std::env::var("BENCH_ROUNDS").ok().and_then(|n| n.parse().ok()).unwrap_or(5);
    let info = server_info(&answer_line(&wharf, &["serve"], &stateless_request(1)));

    let (mut dedicated, mut ours, mut throughput_ratios, mut cpu_ratios, mut client_cpu, mut bare_cpu) =
        (Vec::new(), Vec::new(), Vec::new(), Vec::new(), Vec::new(), Vec::new());
    for _ in 0..rounds {
        let driver = drive(spawn(&wharf, &["serve"]), &[], count, 32, stateless_request);
        let bench = wharf_bench(&wharf, count);
        let loop_run = drive(spawn(&bare, &[&info]), &[], count, 32, stateless_request);
        let loop_cpu = loop_run.server_cpu_per_request.map_or(0.0, |cpu| cpu.as_secs_f64() * 1e6);
        throughput_ratios.push(bench.requests_per_second / driver.throughput);
        if loop_cpu > 0.0 {
            cpu_ratios.push(bench.client_cpu_us / loop_cpu);
        }
        dedicated.push(driver.throughput);
        ours.push(bench.requests_per_second);
        client_cpu.push(bench.client_cpu_us);
        bare_cpu.push(loop_cpu);
    }
    println!(
        "wharf serve, 2026-07-28 tools/call echo, 32 in flight: dedicated driver {:.0} req/s, wharf bench {:.0} req/s, \
         ratio {:.2} (median of {rounds} rounds)",
        median(dedicated),
        median(ours),
        median(throughput_ratios)
    );
    if !cpu_ratios.is_empty() {
        println!(
            "client processor time per request: wharf bench's client {:.2} µs, the bare serde loop {:.2} µs, ratio {:.2}",
            median(client_cpu),
            median(bare_cpu),
            median(cpu_ratios)
        );
    }
}
