//! Runs a target for a time or a number of cases, catching panics as findings, and replays
//! saved cases.

use std::collections::BTreeMap;
use std::panic::{AssertUnwindSafe, catch_unwind};
use std::path::Path;
use std::time::{Duration, Instant};

use crate::rng::Rng;
use crate::target::Target;

/// How long a run goes on.
#[derive(Debug, Clone, Copy)]
pub enum Budget {
    /// For this long.
    Time(Duration),
    /// For this many cases.
    Cases(u64),
}

/// A case on which Wharf and the reference disagree, or which made Wharf panic.
#[derive(Debug, Clone)]
pub struct Finding {
    /// The case, as the target reads it.
    pub case: Vec<u8>,
    /// What went wrong; its first line is the kind of disagreement.
    pub message: String,
}

/// What a run did.
#[derive(Debug)]
pub struct Report {
    /// The target's name.
    pub target: &'static str,
    /// Cases checked.
    pub executions: u64,
    /// How the cases went, by the target's labels.
    pub outcomes: BTreeMap<&'static str, u64>,
    /// Disagreements and panics, one per kind (the first line of the message).
    pub findings: Vec<Finding>,
    /// How long the run took.
    pub elapsed: Duration,
}

/// The most findings of distinct kinds kept from one run.
const MAX_FINDINGS: usize = 20;

/// Checks one case, turning a panic into a finding.
pub fn check(target: &dyn Target, case: &[u8]) -> Result<&'static str, String> {
    match catch_unwind(AssertUnwindSafe(|| target.check(case))) {
        Ok(outcome) => outcome,
        Err(panic) => {
            let message = panic
                .downcast_ref::<String>()
                .cloned()
                .or_else(|| panic.downcast_ref::<&str>().map(|text| (*text).to_owned()))
                .unwrap_or_default();
            Err(format!("panicked\n{message}"))
        }
    }
}

/// Runs `target` on generated cases from `seed` until the budget is spent; `found` hears of
/// each finding of a new kind as it is made (a long run's findings are not lost to a crash).
pub fn run(target: &dyn Target, seed: u64, budget: Budget, found: &mut dyn FnMut(&Finding)) -> Report {
    let mut rng = Rng::new(seed);
    let started = Instant::now();
    let mut report = Report {
        target: target.name(),
        executions: 0,
        outcomes: BTreeMap::new(),
        findings: Vec::new(),
        elapsed: Duration::ZERO,
    };
    loop {
        let done = match budget {
            Budget::Time(limit) => report.executions.is_multiple_of(16) && started.elapsed() >= limit,
            Budget::Cases(cases) => report.executions >= cases,
        };
        if done {
            break;
        }
        let case = target.generate(&mut rng);
        report.executions += 1;
        match check(target, &case) {
            Ok(label) => *report.outcomes.entry(label).or_default() += 1,
            Err(message) => {
                let kind = message.lines().next().unwrap_or_default();
                let seen = report.findings.iter().any(|found| found.message.lines().next() == Some(kind));
                if !seen && report.findings.len() < MAX_FINDINGS {
                    let finding = Finding { case, message };
                    found(&finding);
                    report.findings.push(finding);
                }
            }
        }
    }
    report.elapsed = started.elapsed();
    report
}

/// Checks every saved case in `dir` (one file per case); missing directories hold none.
pub fn replay(target: &dyn Target, dir: &Path) -> Vec<Finding> {
    let Ok(entries) = std::fs::read_dir(dir) else { return Vec::new() };
    let mut paths: Vec<_> = entries.filter_map(|entry| entry.ok().map(|entry| entry.path())).collect();
    paths.sort();
    let mut findings = Vec::new();
    for path in paths {
        let case = std::fs::read(&path).unwrap_or_default();
        if let Err(message) = check(target, &case) {
            findings.push(Finding { case, message: format!("{}: {message}", path.display()) });
        }
    }
    findings
}
