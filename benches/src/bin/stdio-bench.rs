//! Run with `scripts/bench`, which builds `wharf` and this program with the `dist` profile.
//!
//! Drives `tools/call` echo over stdio against `wharf serve` and against the bare serde loop,
//! pipelined with 1 and 32 requests in flight, and prints throughput, p50/p99 latency, peak RSS
//! and Wharf's throughput as a fraction of the baseline's. The baseline runs twice, once with
//! the lines of each era: 2026-07-28 requests are twice as long and their answers, which carry
//! `resultType` and `serverInfo`, four times as long, for the baseline (which writes the very
//! bytes `wharf serve` writes) as for Wharf. Each configuration runs several
//! times, interleaved with the others: the run with the median throughput is shown, and the
//! ratio is the median of each round's ratio, because one run on a shared two-core machine
//! varies by tens of percent.

use wharf_bench::measure::{EraRuns, compared_build, median_ratio};
use wharf_bench::stdio::{answer_line, drive, server_info, session_request, session_setup, spawn, stateless_request};

fn main() {
    let target = std::env::var("WHARF_TARGET_DIR").unwrap_or_else(|_| "target/dist".to_owned());
    let wharf = format!("{target}/wharf");
    let bare = format!("{target}/bare-echo");
    // The build before a change, to compare with in the same rounds.
    let before = compared_build();
    let count: usize = std::env::var("BENCH_REQUESTS").ok().and_then(|n| n.parse().ok()).unwrap_or(100_000);

    let rounds: usize = std::env::var("BENCH_ROUNDS").ok().and_then(|n| n.parse().ok()).unwrap_or(3);
    // The baseline is to write what Wharf writes; a session answer needs an initialized
    // session, so the stateless answers are the ones compared.
    let request = stateless_request(1);
    let ours = answer_line(&wharf, &["serve"], &request);
    let info = server_info(&ours);
    let theirs = answer_line(&bare, &[&info], &request);
    assert_eq!(theirs.len(), ours.len(), "the baseline's answer is not the size of Wharf's:\n{theirs}{ours}");

    for window in [1usize, 32] {
        let n = if window == 1 { count / 5 } else { count };
        let mut runs = EraRuns::default();
        for _ in 0..rounds {
            runs.bare_session.push(drive(spawn(&bare, &[&info]), &[], n, window, session_request));
            runs.session.push(drive(spawn(&wharf, &["serve"]), &session_setup(), n, window, session_request));
            runs.bare_stateless.push(drive(spawn(&bare, &[&info]), &[], n, window, stateless_request));
            runs.stateless.push(drive(spawn(&wharf, &["serve"]), &[], n, window, stateless_request));
            if let Some((before, extra)) = &before {
                let args: Vec<&str> = std::iter::once("serve").chain(extra.iter().map(String::as_str)).collect();
                runs.before_session.push(drive(spawn(before, &args), &session_setup(), n, window, session_request));
                runs.before_stateless.push(drive(spawn(before, &args), &[], n, window, stateless_request));
            }
        }
        let in_flight = format!("{window} in flight");
        let longer_lines = median_ratio(&runs.bare_stateless, &runs.bare_session);
        runs.report("bare serde loop", "lines", "wharf serve", &in_flight);
        println!("{in_flight}: the bare loop answers 2026 lines at {longer_lines:.2} of its 2025 throughput");
    }
}
