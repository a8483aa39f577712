//! `wharf check` against real servers: the demo over stdio and HTTP (it must pass, in both
//! eras), a deliberately flawed server (fixtures/flawed_server.py), whose every flaw must
//! be reported, a hanging tool included, within the timeout, and one whose MCP Apps views are
//! wired wrong (fixtures/miswired_app.py).

use std::process::{Command, Output};
use std::time::{Duration, Instant};

use serde_json::Value;
use wharf_testkit::temp_dir::TempDir;

mod support;
use support::Serving;

const WHARF: &str = env!("CARGO_BIN_EXE_wharf");

fn check(args: &[&str]) -> Output {
    Command::new(WHARF).arg("check").args(args).env_remove("WHARF_BEARER_TOKEN").output().unwrap()
}

fn report(output: &Output) -> Value {
    serde_json::from_slice(&output.stdout)
        .unwrap_or_else(|err| panic!("not JSON ({err}): {}", String::from_utf8_lossy(&output.stdout)))
}

/// The checks of `report` with `outcome`, as `section / name: detail`.
fn with_outcome(report: &Value, outcome: &str) -> Vec<String> {
    report["checks"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|check| check["outcome"] == outcome)
        .map(|check| {
            format!(
                "{} / {}: {}",
                check["section"].as_str().unwrap(),
                check["name"].as_str().unwrap(),
                check["detail"].as_str().unwrap()
            )
        })
        .collect()
}

fn names(report: &Value) -> Vec<String> {
    report["checks"].as_array().unwrap().iter().map(|check| check["name"].as_str().unwrap().to_owned()).collect()
}

#[test]
fn the_demo_passes_over_stdio_in_both_eras() {
    let output = check(&["--json", "--", WHARF, "serve"]);
    let report = report(&output);
    assert_eq!(output.status.code(), Some(0), "failures: {:#?}", with_outcome(&report, "fail"));
    assert_eq!(report["summary"]["failed"], 0);
    let sections: Vec<&str> =
        report["checks"].as_array().unwrap().iter().filter_map(|check| check["section"].as_str()).collect();
    for wanted in ["2026-07-28 (stateless)", "2025-11-25 (session)", "wire (stdio)"] {
        assert!(sections.contains(&wanted), "no {wanted} section");
    }
    let names = names(&report);
    for wanted in [
        "echo: call",
        "echo: constraints",
        "calculator: schemas",
        "malformed JSON",
        "string id kept",
        "unknown revision",
    ] {
        assert!(names.iter().any(|name| name == wanted), "no check {wanted}: {names:?}");
    }
    // The demo's `summarize` needs sampling, which the check refuses by default: a warning.
    assert!(with_outcome(&report, "warn").iter().any(|warning| warning.contains("summarize: call")));
    let replied = report_of(&check(&["--json", "--sampling-reply", "short", "--", WHARF, "serve"]));
    assert!(with_outcome(&replied, "warn").is_empty(), "{:#?}", with_outcome(&replied, "warn"));
}

fn report_of(output: &Output) -> Value {
    report(output)
}

#[test]
fn the_demo_passes_over_http_and_junit_is_written() {
    let serving = Serving::start("127.0.0.1:0", &[], "warn");
    let url = format!("http://127.0.0.1:{}/mcp", serving.port);
    let dir = TempDir::new("check-junit");
    let junit = dir.join("report.xml");
    let output = check(&["--json", "--junit", junit.to_str().unwrap(), &url]);
    let report = report(&output);
    assert_eq!(output.status.code(), Some(0), "failures: {:#?}", with_outcome(&report, "fail"));
    let names = names(&report);
    for wanted in ["malformed body", "wrong content type", "foreign Origin refused", "unknown revision", "server alive"]
    {
        assert!(names.iter().any(|name| name == wanted), "no check {wanted}: {names:?}");
    }
    // The Server Card wharf serve publishes agrees with what it says once connected.
    let card: Vec<(&str, &str)> = report["checks"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|check| check["section"] == "server card")
        .map(|check| (check["name"].as_str().unwrap(), check["outcome"].as_str().unwrap()))
        .collect();
    let every =
        ["fetched", "media type", "schema", "version", "name", "revisions", "revalidation", "CORS", "AI Catalog"];
    assert_eq!(card, every.map(|name| (name, "pass")), "{:#?}", report["checks"]);
    let xml = dir.read("report.xml");
    assert!(xml.starts_with("<?xml") && xml.contains("<testsuite name=\"wire (http)\""), "{xml}");
    assert!(xml.contains("failures=\"0\""));
    let session = report_of(&check(&["--json", "--protocol-version", "2025-11-25", &url]));
    assert_eq!(session["summary"]["failed"], 0, "{:#?}", with_outcome(&session, "fail"));
    assert!(names_of(&session).iter().any(|name| name == "version negotiation"));
}

fn names_of(report: &Value) -> Vec<String> {
    names(report)
}

#[test]
fn a_flawed_server_gets_every_flaw_reported_and_its_hang_is_cut_short() {
    let fixture = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/fixtures/flawed_server.py");
    let started = Instant::now();
    let output = check(&["--json", "--timeout", "1", "--", "python3", fixture]);
    assert!(started.elapsed() < Duration::from_secs(30), "the check took {:?}", started.elapsed());
    assert_eq!(output.status.code(), Some(1), "a failed check exits 1");
    let report = report(&output);
    let failures = with_outcome(&report, "fail").join("\n");
    for wanted in [
        "floaty: schemas: inputSchema is not JSON Schema",
        "hang: call",
        "shapeless: call",
        "not a valid CallToolResult",
        "string id kept: the request's id was the string \"1\"; the answer's is 1",
        "this line is not JSON-RPC",
        "notification notifications/progress: ",
        "notification notifications/message: ",
    ] {
        assert!(failures.contains(wanted), "{wanted:?} not among the failures:\n{failures}");
    }
    let warnings = with_outcome(&report, "warn").join("\n");
    assert!(warnings.contains("malformed JSON: no answer"), "{warnings}");
    assert!(warnings.contains("wipe: repeated calls: destructive, yet neither idempotentHint nor idempotency keys"));
    assert!(with_outcome(&report, "pass").iter().any(|pass| pass.contains("echo: call")));
    assert!(
        with_outcome(&report, "skip").iter().any(|skip| skip.contains("2026-07-28")),
        "the server claims no 2026 era"
    );
}

#[test]
fn a_server_whose_views_are_wired_wrong_fails_naming_each_tool() {
    let fixture = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/fixtures/miswired_app.py");
    let output = check(&["--json", "--timeout", "5", "--", "python3", fixture]);
    assert_eq!(output.status.code(), Some(1), "a failed check exits 1");
    let report = report(&output);
    let failures = with_outcome(&report, "fail").join("\n");
    for wanted in [
        "weather: view: its view `ui://app/missing` cannot be read",
        "chart: view: its view `ui://app/chart` is of type `text/html`, not `text/html;profile=mcp-app`",
        "mute: call: the tool has a view but its result gives the model no text",
    ] {
        assert!(failures.contains(wanted), "{wanted:?} not among the failures:\n{failures}");
    }
    let passes = with_outcome(&report, "pass").join("\n");
    assert!(passes.contains("good: view: `ui://app/ok`"), "{passes}");
    assert!(passes.contains("good: call"), "{passes}");
    assert!(!failures.contains("good:"), "the well-wired tool fails nothing:\n{failures}");
}

#[test]
fn sample_arguments_from_a_file_are_used_and_a_wrong_one_is_named() {
    let dir = wharf_testkit::temp_dir::TempDir::new("args-file");
    dir.write("args.json", r#"{"calculator": {"operation": "divide", "a": 1, "b": 0}, "echo": {"message": 5}}"#);
    let file = dir.join("args.json");
    let output = check(&["--json", "--args-file", file.to_str().unwrap(), "--", env!("CARGO_BIN_EXE_wharf"), "serve"]);
    let report = report(&output);
    let passes = with_outcome(&report, "pass").join("\n");
    assert!(passes.contains("calculator: call: the tool reported an error: Division by zero"), "{passes}");
    let warnings = with_outcome(&report, "warn").join("\n");
    assert!(
        warnings.contains("echo: sample arguments: the sample arguments from --args-file do not match"),
        "{warnings}"
    );
    let bad = dir.join("bad.json");
    std::fs::write(&bad, r#"{"echo": "not an object"}"#).unwrap();
    let refused = check(&["--args-file", bad.to_str().unwrap(), "--", env!("CARGO_BIN_EXE_wharf"), "serve"]);
    assert_eq!(refused.status.code(), Some(2), "a usage error");
    assert!(String::from_utf8_lossy(&refused.stderr).contains("the arguments of `echo` are not an object"));
}
