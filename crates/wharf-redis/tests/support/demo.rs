//! The demo server as the fleet's tests run it: `wharf serve` (the binary in `WHARF_BIN`) on a
//! free loopback port, and the requests they send it: 2026-07-28 calls and tasks, echoes, and
//! the progress a countdown streams.

use std::process::{Command, Stdio};
use std::time::Duration;

use serde_json::json;
use wharf_testkit::eventually::eventually_async;
use wharf_testkit::nginx::upstream;
use wharf_testkit::process::Process;
use wharf_testkit::raw_http::{self, Reply};

use super::{request, send_with};

/// Starts `wharf serve --http 127.0.0.1:0 ARGS` with `env`, and waits for the banner naming
/// its port.
pub fn wharf_serve(args: &[String], env: &[(&str, &str)]) -> (Process, u16) {
    let program = std::env::var("WHARF_BIN").expect("WHARF_BIN names the wharf binary (scripts/test sets it)");
    let mut command = Command::new(program);
    command.args(["serve", "--http", "127.0.0.1:0"]).args(args).env("WHARF_LOG", "warn");
    command.envs(env.iter().copied()).stdin(Stdio::null()).stdout(Stdio::null());
    let mut instance = Process::spawn(&mut command);
    let banner = instance.wait_for("http://127.0.0.1:");
    let port = banner.split("http://127.0.0.1:").nth(1).and_then(|rest| rest.split('/').next()?.parse().ok());
    (instance, port.unwrap_or_else(|| panic!("no port in the banner: {banner}")))
}

/// A 2026-07-28 request from a client that takes part in tasks, through the proxy.
pub async fn modern(port: u16, method: &str, name: &str, params: serde_json::Value) -> Reply {
    let mut params = params;
    params["_meta"] = json!({"io.modelcontextprotocol/protocolVersion": "2026-07-28",
        "io.modelcontextprotocol/clientCapabilities": {"extensions": {"io.modelcontextprotocol/tasks": {}}}});
    let headers = [("mcp-protocol-version", "2026-07-28"), ("mcp-method", method), ("mcp-name", name)];
    send_with(port, "POST", &headers, &request(1, method, params)).await
}

/// Starts the demo's countdown of `steps` as a task; its id, and the instance that runs it.
pub async fn start_task(port: u16, steps: u32) -> (String, String) {
    let params = json!({"name": "countdown", "arguments": {"steps": steps}});
    let created = modern(port, "tools/call", "countdown", params).await;
    assert_eq!(created.json()["result"]["resultType"], "task", "{created:?}");
    (created.json()["result"]["taskId"].as_str().unwrap().to_owned(), upstream(&created))
}

/// Polls the task through the proxy (each poll on the next instance) until it has `status`,
/// for at most `limit`.
pub async fn wait_for_task(port: u16, task_id: &str, status: &str, limit: Duration) -> serde_json::Value {
    eventually_async(&format!("task {task_id} to become {status}"), limit, || async {
        let got = modern(port, "tasks/get", task_id, json!({"taskId": task_id})).await;
        assert_eq!(got.status, 200, "{got:?}");
        (got.json()["result"]["status"] == status).then(|| got.json()["result"].clone())
    })
    .await
}

/// The `progress` values of the progress notifications in a response read as it came (its
/// head, and its body chunked or not, whole chunks only), in order. A chunk (nginx sends the
/// body chunked) may end in the middle of an event: the body is read de-chunked.
pub fn progress_values(response: &str) -> Vec<u64> {
    raw_http::parse(response.as_bytes())
        .body
        .lines()
        .filter_map(|line| line.strip_prefix("data: "))
        .filter_map(|data| serde_json::from_str::<serde_json::Value>(data).ok())
        .filter(|message| message["method"] == "notifications/progress")
        .filter_map(|message| message["params"]["progress"].as_f64())
        .map(|progress| progress as u64)
        .collect()
}

pub fn echo(id: u64) -> String {
    request(id, "tools/call", json!({"name": "echo", "arguments": {"message": format!("hello {id}")}}))
}
