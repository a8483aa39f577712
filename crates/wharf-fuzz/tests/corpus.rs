//! The fuzz targets in `cargo test`: every saved case (the regressions the fuzzer found, and
//! hand-written ones for the defects of issue 20) still agrees with its reference, and a short
//! run of every target from a fixed seed finds nothing.
//! Runs only with `--cfg fuzzing` (`scripts/fuzz` runs it).

#![cfg(fuzzing)]

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

/// Values nested around serde_json's depth limit (128), in every place the one-pass reader
/// hands a value to serde on its own: the two readers must agree at each depth (the 30-minute
/// run found `inputResponses` read one level shallower than the strict path reads it).
#[test]
fn values_nested_at_serde_jsons_depth_limit_are_read_alike_by_both_readers() {
    let incoming = all_targets().into_iter().find(|target| target.name() == "incoming").unwrap();
    let meta = r#""io.modelcontextprotocol/protocolVersion":"2026-07-28""#;
    let places: [&dyn Fn(&str) -> String; 8] = [
        &|deep| {
            format!(
                r#"{{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{{"name":"t","arguments":{{"a":{deep}}}}}}}"#
            )
        },
        &|deep| {
            format!(
                r#"{{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{{"name":"t","inputResponses":{{"a":{deep}}}}}}}"#
            )
        },
        &|deep| {
            format!(r#"{{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{{"name":"t","task":{{"a":{deep}}}}}}}"#)
        },
        &|deep| format!(r#"{{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{{"name":"t","other":{deep}}}}}"#),
        &|deep| {
            format!(
                r#"{{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{{"name":"t","_meta":{{{meta},"x":{deep}}}}}}}"#
            )
        },
        &|deep| {
            format!(
                r#"{{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{{"name":"t","_meta":{{{meta},"io.modelcontextprotocol/clientCapabilities":{{"a":{deep}}}}}}}}}"#
            )
        },
        &|deep| format!(r#"{{"jsonrpc":"2.0","id":1,"method":"ping","params":{{"a":{deep}}}}}"#),
        &|deep| format!(r#"{{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{{"name":"t"}},"extra":{deep}}}"#),
    ];
    for depth in 118..134 {
        let deep = format!("{}1{}", "[".repeat(depth), "]".repeat(depth));
        for place in &places {
            let message = place(&deep);
            if let Err(disagreement) = wharf_fuzz::runner::check(incoming.as_ref(), message.as_bytes()) {
                panic!("depth {depth}: {disagreement}");
            }
        }
    }
}
