//! The `wharf-fuzz` command itself: its options, the run, and the report.

use std::path::PathBuf;
use std::process::ExitCode;
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use wharf_fuzz::{Budget, Finding, all_targets, replay, run};

struct Options {
    budget: Budget,
    seed: u64,
    save: PathBuf,
    corpus: PathBuf,
    targets: Vec<String>,
}

fn options() -> Result<Options, String> {
    let mut args = std::env::args().skip(1);
    let clock = SystemTime::now().duration_since(UNIX_EPOCH).map_or(0, |elapsed| elapsed.as_nanos() as u64);
    let mut options = Options {
        budget: Budget::Time(Duration::from_secs(60)),
        seed: clock,
        save: PathBuf::from("target/fuzz-findings"),
        corpus: PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("corpus"),
        targets: Vec::new(),
    };
    while let Some(arg) = args.next() {
        let mut number = |name: &str| -> Result<u64, String> {
            args.next().and_then(|value| value.parse().ok()).ok_or(format!("{name} wants a number"))
        };
        match arg.as_str() {
            "--seconds" => options.budget = Budget::Time(Duration::from_secs(number("--seconds")?)),
            "--cases" => options.budget = Budget::Cases(number("--cases")?),
            "--seed" => options.seed = number("--seed")?,
            "--save" => options.save = args.next().ok_or("--save wants a directory")?.into(),
            "--help" | "-h" => return Err(String::new()),
            name if !name.starts_with('-') => options.targets.push(name.to_owned()),
            other => return Err(format!("unknown option {other}")),
        }
    }
    Ok(options)
}

pub(crate) fn main() -> ExitCode {
    let options = match options() {
        Ok(options) => options,
        Err(message) => {
            let names: Vec<_> = all_targets().iter().map(|target| target.name()).collect();
            eprintln!("{message}\nusage: wharf-fuzz [--seconds N | --cases N] [--seed N] [--save DIR] [TARGET...]");
            eprintln!("targets: {}", names.join(" "));
            return ExitCode::from(2);
        }
    };
    let targets: Vec<_> = all_targets()
        .into_iter()
        .filter(|target| options.targets.is_empty() || options.targets.iter().any(|name| name == target.name()))
        .collect();
    if targets.is_empty() {
        eprintln!("wharf-fuzz: no such target");
        return ExitCode::from(2);
    }
    let share = match options.budget {
        Budget::Time(total) => Budget::Time(total / targets.len() as u32),
        Budget::Cases(total) => Budget::Cases(total / targets.len() as u64),
    };
    println!("wharf-fuzz: seed {}, {} targets, {share:?} each", options.seed, targets.len());
    let mut found: Vec<(&str, Finding)> = Vec::new();
    let mut total_cases = 0;
    let _ = std::fs::create_dir_all(&options.save);
    for (index, target) in targets.iter().enumerate() {
        let replayed = replay(target.as_ref(), &options.corpus.join(target.name()));
        found.extend(replayed.into_iter().map(|finding| (target.name(), finding)));
        let mut save = |finding: &Finding| {
            let path = options.save.join(format!("{}-{}", target.name(), hash(&finding.case)));
            let _ = std::fs::write(&path, &finding.case);
            let kind = finding.message.lines().next().unwrap_or("");
            println!("{:>13}: found: {kind} (case saved to {})", target.name(), path.display());
        };
        let report = run(target.as_ref(), options.seed.wrapping_add(index as u64), share, &mut save);
        total_cases += report.executions;
        let rate = report.executions as f64 / report.elapsed.as_secs_f64().max(1e-9);
        let outcomes: Vec<String> = report
            .outcomes
            .iter()
            .map(|(label, count)| format!("{label} {:.1}%", 100.0 * *count as f64 / report.executions.max(1) as f64))
            .collect();
        println!(
            "{:>13}: {} cases in {:.1} s ({rate:.0}/s), {} findings; {}",
            report.target,
            report.executions,
            report.elapsed.as_secs_f64(),
            report.findings.len(),
            outcomes.join(", ")
        );
        found.extend(report.findings.into_iter().map(|finding| (target.name(), finding)));
    }
    println!("wharf-fuzz: {total_cases} cases, {} findings", found.len());
    if found.is_empty() {
        return ExitCode::SUCCESS;
    }
    // Each run's findings were saved as they were made; a replayed one names its corpus file.
    for (target, finding) in &found {
        println!("\n== {target}: {}", finding.message);
    }
    ExitCode::FAILURE
}

/// A short name for a case, the same for the same bytes (FNV-1a).
fn hash(case: &[u8]) -> String {
    let hash = case
        .iter()
        .fold(0xcbf2_9ce4_8422_2325_u64, |hash, byte| (hash ^ u64::from(*byte)).wrapping_mul(0x100_0000_01b3));
    format!("{hash:016x}")
}
