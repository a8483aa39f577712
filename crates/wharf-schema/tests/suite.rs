//! The official JSON Schema Test Suite (json-schema-org), every required test of drafts 4, 6,
//! 7, 2019-09 and 2020-12, and the optional `format` tests with formats asserted. The suite is
//! not kept in this repository: `scripts/test` takes it from the `jsonschema` package on PyPI
//! (its source release carries it) and names its `json` directory in
//! `WHARF_JSON_SCHEMA_SUITE`.

use std::fs;
use std::path::{Path, PathBuf};

use serde_json::Value;
use wharf_schema::{Draft, Validator};

/// Tests this crate does not pass, each with the reason: the list the suite holds it to.
const KNOWN: &[(&str, &str)] = &[
    (
        "Draft202012/vocabulary: schema that uses custom metaschema with with no validation vocabulary",
        "a custom meta-schema's `$vocabulary` is not read: every vocabulary of the draft applies",
    ),
    (
        "Draft201909/vocabulary: schema that uses custom metaschema with with no validation vocabulary",
        "a custom meta-schema's `$vocabulary` is not read: every vocabulary of the draft applies",
    ),
    (
        "Draft202012/idn-hostname:",
        "`idn-hostname` checks label lengths and characters, not IDNA 2008's contextual rules (RFC 5892)",
    ),
    (
        "Draft201909/idn-hostname:",
        "`idn-hostname` checks label lengths and characters, not IDNA 2008's contextual rules (RFC 5892)",
    ),
    (
        "Draft7/idn-hostname:",
        "`idn-hostname` checks label lengths and characters, not IDNA 2008's contextual rules (RFC 5892)",
    ),
];

fn suite() -> PathBuf {
    PathBuf::from(
        std::env::var("WHARF_JSON_SCHEMA_SUITE").expect("WHARF_JSON_SCHEMA_SUITE names the suite's json directory"),
    )
}

/// Every file under `directory`, recursively, with its path relative to `root`.
fn files(root: &Path, directory: &Path, found: &mut Vec<(String, PathBuf)>) {
    let Ok(entries) = fs::read_dir(directory) else { return };
    for entry in entries.flatten() {
        let path = entry.path();
        if path.is_dir() {
            files(root, &path, found);
        } else {
            let relative = path.strip_prefix(root).unwrap().to_string_lossy().replace('\\', "/");
            found.push((relative, path));
        }
    }
}

/// The documents the suite serves at `http://localhost:1234/`.
fn remotes(json: &Path) -> Vec<(String, Value)> {
    let root = json.join("remotes");
    let mut found = Vec::new();
    files(&root, &root, &mut found);
    found
        .into_iter()
        .filter(|(name, _)| name.ends_with(".json"))
        .map(|(name, path)| {
            let document = serde_json::from_str(&fs::read_to_string(path).unwrap()).unwrap();
            (format!("http://localhost:1234/{name}"), document)
        })
        .collect()
}

/// Runs the tests of the files in `directory` (not below it); the failures, by name.
fn run(directory: &Path, draft: Draft, formats: bool, remotes: &[(String, Value)], ran: &mut usize) -> Vec<String> {
    let mut failures = Vec::new();
    let mut names: Vec<PathBuf> = fs::read_dir(directory).unwrap().flatten().map(|entry| entry.path()).collect();
    names.sort();
    for file in names.into_iter().filter(|path| path.extension().is_some_and(|ext| ext == "json")) {
        let stem = file.file_stem().unwrap().to_string_lossy().into_owned();
        let cases: Vec<Value> = serde_json::from_str(&fs::read_to_string(&file).unwrap()).unwrap();
        for case in cases {
            let mut options = Validator::options().draft(draft).assert_formats(formats).check_schema(false);
            for (uri, document) in remotes {
                options = options.document(uri.clone(), document.clone());
            }
            let name = format!("{draft:?}/{stem}: {}", case["description"].as_str().unwrap());
            let validator = match options.build(&case["schema"]) {
                Ok(validator) => validator,
                Err(err) => {
                    failures.push(format!("{name}: does not build: {err}"));
                    continue;
                }
            };
            for test in case["tests"].as_array().unwrap() {
                *ran += 1;
                let expected = test["valid"].as_bool().unwrap();
                let valid = validator.is_valid(&test["data"]);
                let errors = validator.errors(&test["data"]);
                let test_name = format!("{name}: {}", test["description"].as_str().unwrap());
                if valid != expected {
                    failures.push(format!("{test_name}: valid {valid}, expected {expected}"));
                } else if errors.is_empty() != expected {
                    failures.push(format!("{test_name}: is_valid and errors disagree ({errors:?})"));
                }
            }
        }
    }
    failures
}

#[test]
#[ignore = "needs the official JSON Schema Test Suite: scripts/test fetches it and runs this"]
fn every_required_test_of_every_draft_and_the_format_tests_pass() {
    let json = suite();
    let remotes = remotes(&json);
    let mut failures = Vec::new();
    let mut ran = 0;
    for (directory, draft) in [
        ("draft2020-12", Draft::Draft202012),
        ("draft2019-09", Draft::Draft201909),
        ("draft7", Draft::Draft7),
        ("draft6", Draft::Draft6),
        ("draft4", Draft::Draft4),
    ] {
        let tests = json.join("tests").join(directory);
        failures.extend(run(&tests, draft, false, &remotes, &mut ran));
        failures.extend(run(&tests.join("optional").join("format"), draft, true, &remotes, &mut ran));
    }
    let unexpected: Vec<&String> =
        failures.iter().filter(|failure| !KNOWN.iter().any(|(known, _)| failure.starts_with(known))).collect();
    eprintln!("{ran} tests, {} failed, {} of them unexpectedly", failures.len(), unexpected.len());
    for failure in &unexpected {
        eprintln!("  {failure}");
    }
    assert!(ran > 5000, "the suite holds thousands of tests; ran {ran}");
    assert!(unexpected.is_empty(), "{} tests failed", unexpected.len());
}
