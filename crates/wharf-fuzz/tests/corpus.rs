//! The fuzz targets in `cargo test`: every saved case (the regressions the fuzzer found, and
//! hand-written ones for the defects of issue 20) still agrees with its reference, and a short
//! run of every target from a fixed seed finds nothing.

use std::path::PathBuf;

use wharf_fuzz::{Budget, all_targets, replay, run};

fn corpus() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("corpus")
}

#[test]
fn every_saved_case_agrees_with_its_reference() {
    let mut replayed = 0;
    for target in all_targets() {
        let dir = corpus().join(target.name());
        replayed += std::fs::read_dir(&dir).map_or(0, Iterator::count);
        let findings = replay(target.as_ref(), &dir);
        assert!(findings.is_empty(), "{}: {}", target.name(), findings[0].message);
    }
    assert!(replayed >= 10, "the corpus holds {replayed} cases; is {} in place?", corpus().display());
}

#[test]
fn a_short_run_of_every_target_finds_nothing() {
    for target in all_targets() {
        let report = run(target.as_ref(), 20_261_123, Budget::Cases(400), &mut |_| {});
        assert_eq!(report.executions, 400);
        assert!(report.findings.is_empty(), "{}: {}", target.name(), report.findings[0].message);
        // The generator reaches more than one way through the code under test.
        assert!(report.outcomes.len() >= 2, "{}: {:?}", target.name(), report.outcomes);
    }
}
