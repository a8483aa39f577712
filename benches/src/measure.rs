//! What a benchmark run measured, and reading a process's memory from `/proc`.

use std::time::Duration;

/// What one run measured.
#[derive(Debug, Clone)]
pub struct Measurement {
    /// Requests answered per second.
    pub throughput: f64,
    /// Median latency.
    pub p50: Duration,
    /// 99th-percentile latency.
    pub p99: Duration,
    /// The server's peak resident memory, in KiB.
    pub peak_rss_kib: u64,
    /// The server's processor time (user and system) per request, when known: unlike
    /// throughput, it hardly depends on how the load generator and the server share the cores.
    pub server_cpu_per_request: Option<Duration>,
}

impl Measurement {
    /// Summarizes `count` requests answered in `elapsed`, with one latency per request, and the
    /// server's processor time for the whole run when known (start-up included, which is small
    /// next to a run's work).
    pub fn new(
        count: usize,
        elapsed: Duration,
        mut latencies: Vec<Duration>,
        peak_rss_kib: u64,
        server_cpu: Option<Duration>,
    ) -> Measurement {
        assert!(!latencies.is_empty(), "a run without answers measured nothing");
        latencies.sort_unstable();
        Measurement {
            throughput: count as f64 / elapsed.as_secs_f64(),
            p50: latencies[latencies.len() / 2],
            p99: latencies[latencies.len() * 99 / 100],
            peak_rss_kib,
            server_cpu_per_request: server_cpu.map(|cpu| cpu / u32::try_from(count).unwrap_or(u32::MAX)),
        }
    }
}

/// The run with the median throughput: one run on a shared two-core machine varies by tens of
/// percent, so every configuration runs several times and the middle one is reported.
pub fn median(mut runs: Vec<Measurement>) -> Measurement {
    runs.sort_by(|a, b| a.throughput.total_cmp(&b.throughput));
    runs.swap_remove(runs.len() / 2)
}

/// Prints one line of a report: `measured` (the median run of its configuration) and `ratio`, its
/// throughput as a fraction of the baseline's.
pub fn report(label: &str, concurrency: &str, measured: &Measurement, ratio: f64) {
    let cpu = measured
        .server_cpu_per_request
        .map_or_else(|| "    -".to_owned(), |cpu| format!("{:>5.2}", cpu.as_secs_f64() * 1e6));
    println!(
        "{label:<30} {concurrency:<14} {:>9.0} req/s  p50 {:>7.1} µs  p99 {:>7.1} µs  peak RSS {:>6} KiB  \
         server CPU {cpu} µs/req  ratio {:>5.2}",
        measured.throughput,
        measured.p50.as_secs_f64() * 1e6,
        measured.p99.as_secs_f64() * 1e6,
        measured.peak_rss_kib,
        ratio,
    );
}

/// The median over rounds of `runs[i]`'s throughput divided by `baselines[i]`'s. Each round
/// measures the baseline and Wharf back to back, so a machine that is slower during one round
/// slows both alike; the median of the per-round ratios is steadier than the ratio of the
/// median throughputs on a shared machine, whose speed drifts by tens of percent.
pub fn median_ratio(runs: &[Measurement], baselines: &[Measurement]) -> f64 {
    let mut ratios: Vec<f64> = runs.iter().zip(baselines).map(|(run, base)| run.throughput / base.throughput).collect();
    ratios.sort_by(f64::total_cmp);
    ratios[ratios.len() / 2]
}

/// The median over rounds of `runs[i]`'s processor time per request divided by
/// `baselines[i]`'s (`None` when a run has none). Linux counts processor time in 10 ms ticks,
/// so a comparison within a few percent needs runs of a second or more (`BENCH_REQUESTS`).
pub fn median_cpu_ratio(runs: &[Measurement], baselines: &[Measurement]) -> Option<f64> {
    let mut ratios = runs
        .iter()
        .zip(baselines)
        .map(|(run, base)| Some(run.server_cpu_per_request?.as_secs_f64() / base.server_cpu_per_request?.as_secs_f64()))
        .collect::<Option<Vec<f64>>>()?;
    ratios.sort_by(f64::total_cmp);
    ratios.get(ratios.len() / 2).copied()
}

/// The runs of one configuration in both eras, each era's server beside a baseline fed that
/// era's requests, round by round.
#[derive(Debug, Default)]
pub struct EraRuns {
    /// The baseline, with 2025 requests.
    pub bare_session: Vec<Measurement>,
    /// Wharf in a 2025 session.
    pub session: Vec<Measurement>,
    /// The baseline, with 2026-07-28 requests.
    pub bare_stateless: Vec<Measurement>,
    /// Wharf serving 2026-07-28 requests.
    pub stateless: Vec<Measurement>,
    /// The build before a change (`WHARF_BEFORE`) in a 2025 session, when it is compared.
    pub before_session: Vec<Measurement>,
    /// The build before a change serving 2026-07-28 requests, when it is compared.
    pub before_stateless: Vec<Measurement>,
}

impl EraRuns {
    /// Prints four lines: each era's baseline, labelled `bare` and `what` its requests are
    /// ("lines", "body"), then Wharf, labelled `wharf`, with its ratio to that baseline.
    pub fn report(self, bare: &str, what: &str, wharf: &str, concurrency: &str) {
        let session_ratio = median_ratio(&self.session, &self.bare_session);
        let stateless_ratio = median_ratio(&self.stateless, &self.bare_stateless);
        let compared = !self.before_session.is_empty() && !self.before_stateless.is_empty();
        let before_ratios = compared.then(|| {
            (
                median_ratio(&self.before_session, &self.bare_session),
                median_ratio(&self.before_stateless, &self.bare_stateless),
                median_ratio(&self.session, &self.before_session),
                median_ratio(&self.stateless, &self.before_stateless),
            )
        });
        let cpu_ratios = compared.then(|| {
            (
                median_cpu_ratio(&self.session, &self.before_session),
                median_cpu_ratio(&self.stateless, &self.before_stateless),
            )
        });
        report(&format!("{bare} (2025 {what})"), concurrency, &median(self.bare_session), 1.0);
        report(&format!("{wharf} (2025 session)"), concurrency, &median(self.session), session_ratio);
        if let Some((before_session, ..)) = before_ratios {
            report(&format!("{wharf} before (2025)"), concurrency, &median(self.before_session), before_session);
        }
        report(&format!("{bare} (2026 {what})"), concurrency, &median(self.bare_stateless), 1.0);
        report(&format!("{wharf} (2026 stateless)"), concurrency, &median(self.stateless), stateless_ratio);
        if let Some((_, before_stateless, session, stateless)) = before_ratios {
            report(&format!("{wharf} before (2026)"), concurrency, &median(self.before_stateless), before_stateless);
            println!(
                "{concurrency}: this build / the build before, per round: session {session:.2}, stateless {stateless:.2}"
            );
        }
        if let Some((Some(session), Some(stateless))) = cpu_ratios {
            println!(
                "{concurrency}: server CPU per request, this build / the build before, per round: session \
                 {session:.3}, stateless {stateless:.3}"
            );
        }
    }
}

/// `VmHWM` (peak resident memory) of a process, in KiB (0 where `/proc` is not available).
pub fn peak_rss_kib(pid: u32) -> u64 {
    proc_status_kib(pid, "VmHWM:")
}

/// The processor time (user and system) a process has used so far, from `/proc/PID/stat`
/// (`None` where it cannot be read). Linux counts it in ticks of 1/100 s.
pub fn cpu_time(pid: u32) -> Option<Duration> {
    const TICKS_PER_SECOND: u64 = 100;
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    // The command name, in parentheses, may hold spaces; the fields after it are plain.
    let fields: Vec<&str> = stat.rsplit_once(')')?.1.split_whitespace().collect();
    let ticks = fields.get(11)?.parse::<u64>().ok()? + fields.get(12)?.parse::<u64>().ok()?;
    Some(Duration::from_millis(ticks * 1000 / TICKS_PER_SECOND))
}

/// `VmRSS` (resident memory now) of a process, in KiB (0 where `/proc` is not available).
pub fn rss_kib(pid: u32) -> u64 {
    proc_status_kib(pid, "VmRSS:")
}

fn proc_status_kib(pid: u32, field: &str) -> u64 {
    std::fs::read_to_string(format!("/proc/{pid}/status"))
        .ok()
        .and_then(|status| {
            status
                .lines()
                .find(|line| line.starts_with(field))
                .and_then(|line| line.split_whitespace().nth(1).and_then(|kib| kib.parse().ok()))
        })
        .unwrap_or(0)
}

/// The build to compare with in the same rounds: `WHARF_BEFORE` (the `wharf` binary of the
/// build before a change) and `WHARF_BEFORE_ARGS` (more arguments for it after `serve ...`,
/// split at spaces; `--pass-through-layer` with this build's own binary compares no layer with
/// one).
pub fn compared_build() -> Option<(String, Vec<String>)> {
    let program = std::env::var("WHARF_BEFORE").ok()?;
    let args = std::env::var("WHARF_BEFORE_ARGS").unwrap_or_default();
    Some((program, args.split_whitespace().map(str::to_owned).collect()))
}
