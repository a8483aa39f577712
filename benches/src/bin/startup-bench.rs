//! Run with `scripts/bench`, which builds `wharf` and this program with the `dist` profile.
//!
//! Start-up, as a desktop client pays it for every session it opens: `wharf serve` started with
//! a client's first messages already waiting on its stdin, timed from the start of the process
//! to the answer of its first `tools/call` (with the processor time used until then), and to its
//! exit once its stdin ends. The
//! bare serde loop (`bare-echo`) is started the same way in the same rounds, and with
//! `WHARF_BEFORE` the build before a change too. Both eras: a 2025-11-25 session (initialize,
//! initialized, the call) and one 2026-07-28 stateless call. Each round runs every program
//! once, back to back, and a ratio is the median of the per-round ratios.

use std::io::{BufRead, BufReader, Write};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use wharf_bench::measure::compared_build;
use wharf_bench::stdio::{session_request, session_setup, stateless_request};

/// The call's id, which its answer carries: `"id":7,`.
const CALL_ID: usize = 7;

/// One start of a program.
#[derive(Debug, Clone, Copy)]
struct Start {
    /// From the spawn to the call's answer read from its stdout.
    answered: Duration,
    /// From the spawn to its exit (its stdin ends once the call is answered).
    exited: Duration,
    /// Its processor time until the call was answered, user and system.
    cpu: Duration,
}

/// The processor time `pid`'s threads have used so far, from the scheduler's nanosecond
/// counts (`/proc/PID/task/*/schedstat`).
fn cpu_so_far(pid: u32) -> Duration {
    let tasks = std::fs::read_dir(format!("/proc/{pid}/task")).expect("the program's threads");
    tasks
        .filter_map(|task| std::fs::read_to_string(task.ok()?.path().join("schedstat")).ok())
        .filter_map(|stat| stat.split_whitespace().next()?.parse::<u64>().ok())
        .map(Duration::from_nanos)
        .sum()
}

/// Starts `program args` with the lines of `input` already waiting on its stdin (a pipe that
/// stays open until the call is answered, so that the program is still there to be read) and
/// times it.
fn start(program: &str, args: &[&str], input: &[u8]) -> Start {
    let (reader, mut writer) = std::io::pipe().expect("a pipe");
    writer.write_all(input).expect("the input fits in the pipe");
    let began = Instant::now();
    let mut child = Command::new(program)
        .args(args)
        .stdin(reader)
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .unwrap_or_else(|err| panic!("{program}: {err}"));
    let marker = format!("\"id\":{CALL_ID},");
    let mut stdout = BufReader::new(child.stdout.take().expect("piped stdout"));
    let mut line = String::new();
    let answered = loop {
        line.clear();
        let read = stdout.read_line(&mut line).expect("the program's stdout");
        assert!(read > 0, "{program} ended without answering the call");
        if line.contains(&marker) {
            break began.elapsed();
        }
    };
    let cpu = cpu_so_far(child.id());
    drop(writer);
    // Whatever else it writes is read, so that it never blocks on a full pipe.
    std::io::copy(&mut stdout, &mut std::io::sink()).expect("the program's stdout");
    let status = child.wait().expect("the program exits");
    let exited = began.elapsed();
    assert!(status.success(), "{program} {args:?}: {status}");
    Start { answered, exited, cpu }
}

fn median(mut values: Vec<f64>) -> f64 {
    values.sort_by(f64::total_cmp);
    values[values.len() / 2]
}

/// The median over rounds of `field(runs[i]) / field(baselines[i])`.
fn paired_ratio(runs: &[Start], baselines: &[Start], field: fn(&Start) -> Duration) -> f64 {
    median(runs.iter().zip(baselines).map(|(run, base)| field(run).as_secs_f64() / field(base).as_secs_f64()).collect())
}

fn report(label: &str, runs: &[Start], baselines: &[Start]) {
    let ms = |field: fn(&Start) -> Duration| median(runs.iter().map(|run| field(run).as_secs_f64() * 1e3).collect());
    println!(
        "{label:<34} answer {:>5.2} ms ({:>4.2}x)  exit {:>5.2} ms ({:>4.2}x)  CPU {:>5.2} ms ({:>4.2}x)",
        ms(|run| run.answered),
        paired_ratio(runs, baselines, |run| run.answered),
        ms(|run| run.exited),
        paired_ratio(runs, baselines, |run| run.exited),
        ms(|run| run.cpu),
        paired_ratio(runs, baselines, |run| run.cpu),
    );
}

fn main() {
    let target = std::env::var("WHARF_TARGET_DIR").unwrap_or_else(|_| "target/dist".to_owned());
    let wharf = format!("{target}/wharf");
    let bare = format!("{target}/bare-echo");
    let before = compared_build();
    let rounds: usize = std::env::var("BENCH_STARTS").ok().and_then(|n| n.parse().ok()).unwrap_or(30);

    let lines =
        |lines: Vec<String>| lines.iter().flat_map(|line| [line.as_bytes(), b"\n"]).flatten().copied().collect();
    let session: Vec<u8> = lines(session_setup().into_iter().chain([session_request(CALL_ID)]).collect());
    let stateless: Vec<u8> = lines(vec![stateless_request(CALL_ID)]);

    println!("{rounds} starts of each, interleaved; ratios against the bare loop (medians of per-round ratios)");
    for (era, input) in [("2025 session", &session), ("2026 stateless", &stateless)] {
        let (mut bare_runs, mut wharf_runs, mut before_runs) = (Vec::new(), Vec::new(), Vec::new());
        for _ in 0..rounds {
            bare_runs.push(start(&bare, &[], input));
            wharf_runs.push(start(&wharf, &["serve"], input));
            if let Some((before, extra)) = &before {
                let args: Vec<&str> = ["serve"].into_iter().chain(extra.iter().map(String::as_str)).collect();
                before_runs.push(start(before, &args, input));
            }
        }
        report(&format!("bare serde loop, {era}"), &bare_runs, &bare_runs);
        report(&format!("wharf serve, {era}"), &wharf_runs, &bare_runs);
        if !before_runs.is_empty() {
            report(&format!("the build before, {era}"), &before_runs, &bare_runs);
            report(&format!("this build / the build before, {era}"), &wharf_runs, &before_runs);
        }
    }
}
