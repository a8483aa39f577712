//! The client against servers that are not Wharf's: the reference servers written with the
//! official Python SDK and TypeScript SDK (v1 and v2) in `interop/`, over stdio and Streamable
//! HTTP, in both eras where they speak them. Ignored by default: `scripts/test` runs it once it
//! has installed the SDKs (`cargo test -p wharf-cli --test sdk_servers -- --ignored`).

use std::process::{Command, Stdio};
use std::time::Duration;

use serde_json::json;
use tokio::sync::mpsc;
use wharf_client::protocol::{
    ClientCapabilities, ContentBlock, ElicitAction, ElicitParams, ElicitResult, ElicitationCapability, Era,
    ProtocolVersion, ResourceContents,
};
use wharf_client::{Answer, Client, ClientHandler, ClientOptions, RequestOptions, StderrMode, Target};
use wharf_testkit::eventually::until_blocking;
use wharf_testkit::ports::{accepts, free_port};
use wharf_testkit::process::Process;

/// Accepts every elicitation with the name "Ada".
struct Ada;

impl ClientHandler for Ada {
    fn capabilities(&self) -> ClientCapabilities {
        ClientCapabilities { elicitation: Some(ElicitationCapability::default()), ..ClientCapabilities::default() }
    }

    fn elicit(&self, _params: ElicitParams) -> Answer<'_, ElicitResult> {
        Box::pin(async {
            Ok(ElicitResult {
                action: ElicitAction::Accept,
                content: json!({"name": "Ada"}).as_object().cloned(),
                meta: None,
            })
        })
    }
}

/// One reference server: how to start it.
struct Reference {
    name: &'static str,
    program: String,
    script: String,
    /// It speaks 2026-07-28.
    stateless: bool,
    /// Over HTTP its 2025 era is served request by request, without the session a question
    /// to the client needs.
    asks_only_in_sessions_over_stdio: bool,
}

fn interop() -> String {
    concat!(env!("CARGO_MANIFEST_DIR"), "/../../interop").to_owned()
}

fn references() -> Vec<Reference> {
    let dir = interop();
    vec![
        Reference {
            name: "python",
            program: format!("{dir}/py/.venv/bin/python"),
            script: format!("{dir}/py/server.py"),
            stateless: true,
            asks_only_in_sessions_over_stdio: false,
        },
        Reference {
            name: "typescript v1",
            program: "node".to_owned(),
            script: format!("{dir}/ts/server.mjs"),
            stateless: false,
            asks_only_in_sessions_over_stdio: false,
        },
        Reference {
            name: "typescript v2",
            program: "node".to_owned(),
            script: format!("{dir}/ts/server-v2.mjs"),
            stateless: true,
            asks_only_in_sessions_over_stdio: true,
        },
    ]
}

/// A reference server over HTTP (stopped when dropped), and its URL.
fn start_http(reference: &Reference) -> (Process, String) {
    let port = free_port();
    let running = Process::try_spawn(
        Command::new(&reference.program)
            .args([reference.script.as_str(), "--http", &port.to_string()])
            .stdin(Stdio::null())
            .stdout(Stdio::null()),
    )
    .unwrap_or_else(|err| panic!("{}: {err}", reference.name));
    until_blocking(&format!("{} to listen on {port}", reference.name), Duration::from_secs(20), || accepts(port));
    (running, format!("http://127.0.0.1:{port}/mcp"))
}

fn text(content: &[ContentBlock]) -> String {
    content
        .iter()
        .filter_map(|block| match block {
            ContentBlock::Text(text) => Some(text.text.as_str()),
            _ => None,
        })
        .collect()
}

/// Everything the reference servers offer, through the client.
async fn exercise(label: &str, client: &Client, elicitation_possible: bool) {
    let tools = client.list_tools().await.unwrap_or_else(|err| panic!("{label}: {err}"));
    let names: Vec<&str> = tools.iter().map(|tool| tool.name.as_str()).collect();
    for wanted in ["add", "echo", "slow_count", "ask_name", "fail"] {
        assert!(names.contains(&wanted), "{label}: {wanted} missing from {names:?}");
    }
    let sum = client.call_tool("add", json!({"a": 2, "b": 3})).await.unwrap_or_else(|err| panic!("{label}: {err}"));
    assert_eq!(text(&sum.content), "5", "{label}");
    let (progress, mut steps) = mpsc::unbounded_channel();
    let counted = client
        .call_tool_with("slow_count", json!({"steps": 3}), &RequestOptions::default().progress(progress))
        .await
        .unwrap_or_else(|err| panic!("{label}: {err}"));
    assert_ne!(counted.is_error, Some(true), "{label}: {counted:?}");
    let mut seen = 0;
    while steps.try_recv().is_ok() {
        seen += 1;
    }
    assert_eq!(seen, 3, "{label}: three progress notifications");
    let greeted = client.call_tool("ask_name", json!({})).await.unwrap_or_else(|err| panic!("{label}: {err}"));
    if elicitation_possible {
        assert_eq!(text(&greeted.content), "Hello, Ada", "{label}");
    }
    let failed = client.call_tool("fail", json!({})).await.unwrap_or_else(|err| panic!("{label}: {err}"));
    assert_eq!(failed.is_error, Some(true), "{label}: a tool error is a result");
    let prompt =
        client.get_prompt("greet", json!({"name": "Ada"})).await.unwrap_or_else(|err| panic!("{label}: {err}"));
    assert!(serde_json::to_string(&prompt.messages).unwrap().contains("Ada"), "{label}");
    let readme = client.read_resource("ref://readme").await.unwrap_or_else(|err| panic!("{label}: {err}"));
    assert!(
        matches!(&readme.contents[0], ResourceContents::Text(contents) if contents.text.contains("reference")),
        "{label}"
    );
    let item = client.read_resource("ref://items/7").await.unwrap_or_else(|err| panic!("{label}: {err}"));
    assert!(matches!(&item.contents[0], ResourceContents::Text(contents) if contents.text.contains('7')), "{label}");
    assert!(client.anomalies().0.is_empty(), "{label}: {:?}", client.anomalies());
}

fn options(version: Option<ProtocolVersion>) -> ClientOptions {
    let options = ClientOptions::default().handler(Ada).stderr(StderrMode::Discard).timeout(Duration::from_secs(20));
    match version {
        Some(version) => options.protocol_version(version),
        None => options,
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
#[ignore = "needs the SDKs in interop/, which scripts/test installs"]
async fn the_client_drives_the_official_sdk_servers_over_both_transports_in_both_eras() {
    for reference in references() {
        for version in [None, Some(ProtocolVersion::V2025_11_25)] {
            let expected = if reference.stateless && version.is_none() {
                ProtocolVersion::V2026_07_28
            } else {
                ProtocolVersion::V2025_11_25
            };
            let target = Target::command(reference.program.clone(), [reference.script.clone()]);
            let label = format!("{} over stdio at {}", reference.name, expected.as_str());
            let client =
                Client::connect_with(target, options(version)).await.unwrap_or_else(|err| panic!("{label}: {err}"));
            assert_eq!(client.protocol_version(), expected, "{label}");
            exercise(&label, &client, true).await;
            client.close().await;

            let (_server, url) = start_http(&reference);
            let label = format!("{} over HTTP at {}", reference.name, expected.as_str());
            let client = Client::connect_with(Target::url(url), options(version))
                .await
                .unwrap_or_else(|err| panic!("{label}: {err}"));
            assert_eq!(client.protocol_version(), expected, "{label}");
            let possible = !reference.asks_only_in_sessions_over_stdio || expected.era() == Era::Stateless;
            exercise(&label, &client, possible).await;
            client.close().await;
        }
    }
}

/// `wharf check` against `interop/py/lax_server.py` (the official Python SDK's low-level
/// server), whose tools each ignore one constraint of their own schema: each is found, named
/// by tool, argument and constraint, in both eras; the tool that ignores nothing passes.
#[test]
#[ignore = "needs the SDKs in interop/, which scripts/test installs"]
fn wharf_check_names_each_constraint_a_tool_ignores() {
    let dir = interop();
    let output = Command::new(env!("CARGO_BIN_EXE_wharf"))
        .args(["check", "--json", "--quiet-server", "--"])
        .arg(format!("{dir}/py/.venv/bin/python"))
        .arg(format!("{dir}/py/lax_server.py"))
        .output()
        .unwrap();
    assert_eq!(output.status.code(), Some(1), "a failed check exits 1: {}", String::from_utf8_lossy(&output.stderr));
    let report: serde_json::Value = serde_json::from_slice(&output.stdout).unwrap();
    let checks = report["checks"].as_array().unwrap();
    let with = |outcome: &str| -> Vec<String> {
        checks
            .iter()
            .filter(|check| check["outcome"] == outcome && check["section"] != "wire (stdio)")
            .map(|check| format!("{} | {}", check["name"].as_str().unwrap(), check["detail"].as_str().unwrap()))
            .collect()
    };
    let failures = with("fail");
    let mut names: Vec<&str> = failures.iter().map(|failure| failure.split(" | ").next().unwrap()).collect();
    names.sort_unstable();
    assert_eq!(
        names,
        [
            "paint: color enum",
            "paint: color enum",
            "set_volume: level maximum 10",
            "set_volume: level maximum 10",
            "tag: name pattern ^[a-z]{2,8}$",
            "tag: name pattern ^[a-z]{2,8}$",
        ],
        "one failure per ignored constraint, in each era: {failures:#?}"
    );
    assert!(failures.iter().any(|failure| failure.contains("`level` = 11 breaks `maximum 10`, yet the tool ran")));
    let passes = with("pass");
    assert!(passes.iter().any(|pass| pass.starts_with("strict: constraints | 5 of 5 probes refused")), "{passes:#?}");
    // The pattern's tool was called with a name made to match it, and ran.
    assert!(passes.iter().any(|pass| pass.starts_with("tag: call")), "{passes:#?}");
}
