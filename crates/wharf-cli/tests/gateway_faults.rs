//! `wharf gateway --http` when its upstreams fail, as an operator meets it: a program killed
//! with SIGKILL in the middle of a call (the call fails naming the mount, the mount comes back,
//! the next call works, the other mounts never notice), an upstream slower than its mount's
//! deadline, and the health endpoint saying which mount is down and how often it restarted.

use std::process::Command;
use std::time::Duration;

use serde_json::{Value, json};
use wharf_client::protocol::CallToolResult;
use wharf_client::{Client, Target};
use wharf_testkit::process::Process;
use wharf_testkit::raw_http::send_blocking;
use wharf_testkit::temp_dir::TempDir;

/// The port the gateway's banner names.
fn port_of(banner: &str) -> u16 {
    let after = banner.split("http://127.0.0.1:").nth(1).expect("a URL in the banner");
    after.split('/').next().unwrap().parse().unwrap()
}

/// Starts `wharf gateway DIR/gateway.toml --http` on a free port, and waits until its banner
/// says it serves its `mounts` mounts.
fn start(dir: &TempDir, mounts: usize) -> (Process, u16) {
    let mut gateway = Process::spawn(
        Command::new(env!("CARGO_BIN_EXE_wharf"))
            .arg("gateway")
            .arg(dir.join("gateway.toml"))
            .args(["--http", "127.0.0.1:0"])
            .env_remove("RUST_LOG")
            .env_remove("WHARF_LOG"),
    );
    let port = port_of(&gateway.wait_for(&format!("wharf gateway: the {mounts} mounts")));
    (gateway, port)
}

/// Stops the gateway as a service manager does, and checks it exits cleanly.
fn stop(gateway: Process) {
    gateway.signal("TERM");
    let (code, _) = gateway.wait_within(Duration::from_secs(10));
    assert_eq!(code, Some(0));
}

fn health(port: u16) -> (u16, Value) {
    let reply = send_blocking(port, "GET", "/health", &[], "");
    (reply.status, reply.json())
}

fn mount<'a>(report: &'a Value, name: &str) -> &'a Value {
    report["mounts"].as_array().unwrap().iter().find(|mount| mount["name"] == name).unwrap()
}

fn text(result: &CallToolResult) -> String {
    serde_json::to_value(&result.content).unwrap()[0]["text"].as_str().unwrap_or_default().to_owned()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_killed_upstream_comes_back_and_a_slow_one_meets_its_deadline() {
    let dir = TempDir::new("gateway-faults");
    let wharf = env!("CARGO_BIN_EXE_wharf");
    dir.write(
        "gateway.toml",
        format!(
            "[[mount]]\nname = \"steady\"\ncommand = [{wharf:?}, \"serve\"]\n\n\
             [[mount]]\nname = \"victim\"\ncommand = [{wharf:?}, \"serve\"]\n\n\
             [[mount]]\nname = \"slow\"\ncommand = [{wharf:?}, \"serve\"]\ntimeout = 1\n"
        ),
    );
    let (mut gateway, port) = start(&dir, 3);
    let (status, report) = tokio::task::spawn_blocking(move || health(port)).await.unwrap();
    assert_eq!((status, report["status"].as_str()), (200, Some("up")), "{report}");
    let victim_pid = mount(&report, "victim")["pid"].as_u64().expect("the victim's pid");

    let client = Client::connect(Target::url(format!("http://127.0.0.1:{port}/mcp"))).await.unwrap();
    let long = client.call_tool("victim_countdown", json!({"steps": 250}));
    let kill = async {
        tokio::time::sleep(Duration::from_millis(400)).await;
        let killed = Command::new("kill").args(["-KILL", &victim_pid.to_string()]).status().unwrap();
        assert!(killed.success());
    };
    let (cut, ()) = tokio::join!(long, kill);
    let cut = cut.expect_err("the call in flight fails");
    assert!(cut.to_string().contains("`victim`"), "the error names the mount: {cut}");

    // The other mounts never noticed.
    let steady = client.call_tool("steady_echo", json!({"message": "still here"})).await.unwrap();
    assert_eq!(text(&steady), "still here");

    // The victim is down for a moment, then back, and its next call works.
    let mut came_back = None;
    for _ in 0..100 {
        match client.call_tool("victim_echo", json!({"message": "back"})).await {
            Ok(result) => {
                came_back = Some(text(&result));
                break;
            }
            Err(err) => {
                // Down, or (a call that raced the end of its connection) not answered: named.
                let said = err.to_string();
                let clear =
                    said.contains("the mount `victim` is down") || said.contains("the mount `victim` did not answer");
                assert!(clear, "a clear error while down: {said}");
                tokio::time::sleep(Duration::from_millis(100)).await;
            }
        }
    }
    assert_eq!(came_back.as_deref(), Some("back"), "the mount came back");
    let (status, report) = tokio::task::spawn_blocking(move || health(port)).await.unwrap();
    assert_eq!(status, 200, "{report}");
    let victim = mount(&report, "victim");
    assert_eq!((victim["state"].as_str(), victim["restarts"].as_u64()), (Some("up"), Some(1)), "{report}");
    assert_ne!(victim["pid"].as_u64(), Some(victim_pid), "a new process");
    let logged = gateway.stderr_so_far();
    assert!(logged.contains("a mount is down") && logged.contains("victim"), "the log says so: {logged}");

    // The slow mount's deadline is one second: a five-second countdown is cut, naming it.
    let started = std::time::Instant::now();
    let late = client.call_tool("slow_countdown", json!({"steps": 250})).await.expect_err("past the deadline");
    assert!(started.elapsed() < Duration::from_secs(4), "cut at the deadline, not the end");
    assert!(late.to_string().contains("`slow`") && late.to_string().contains("1s"), "{late}");
    let quick = client.call_tool("slow_echo", json!({"message": "in time"})).await.unwrap();
    assert_eq!(text(&quick), "in time");
    drop(client);
    stop(gateway);
}

/// The file changes while the gateway serves: a mount added appears, one taken away goes, one
/// whose table is unchanged keeps its process and its clients' session; a file with a mistake
/// changes nothing.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_file_reloads_without_touching_unchanged_mounts() {
    let dir = TempDir::new("gateway-reload");
    let wharf = env!("CARGO_BIN_EXE_wharf");
    let table = |name: &str| format!("[[mount]]\nname = \"{name}\"\ncommand = [{wharf:?}, \"serve\"]\n\n");
    dir.write("gateway.toml", table("kept") + &table("dropped"));
    let (mut gateway, port) = start(&dir, 2);
    let (_, report) = tokio::task::spawn_blocking(move || health(port)).await.unwrap();
    let kept_pid = mount(&report, "kept")["pid"].as_u64().unwrap();
    // A 2025 session, which must outlive the reload.
    let options =
        wharf_client::ClientOptions::default().protocol_version(wharf_client::protocol::ProtocolVersion::V2025_11_25);
    let client = Client::connect_with(Target::url(format!("http://127.0.0.1:{port}/mcp")), options).await.unwrap();
    assert_eq!(text(&client.call_tool("dropped_echo", json!({"message": "a"})).await.unwrap()), "a");

    dir.write("gateway.toml", table("kept") + &table("added") + "[[mount]]\nname = \"broken\"\n");
    gateway.wait_for("changed, but: mount `broken`");
    assert_eq!(text(&client.call_tool("dropped_echo", json!({"message": "b"})).await.unwrap()), "b", "unchanged");

    dir.write("gateway.toml", table("kept") + &table("added"));
    gateway.wait_for("wharf gateway: mounted `added`");
    gateway.wait_for("wharf gateway: unmounted `dropped`");
    assert_eq!(text(&client.call_tool("added_echo", json!({"message": "new"})).await.unwrap()), "new");
    client.call_tool("dropped_echo", json!({"message": "c"})).await.expect_err("gone");
    assert_eq!(text(&client.call_tool("kept_echo", json!({"message": "same"})).await.unwrap()), "same");
    let (_, report) = tokio::task::spawn_blocking(move || health(port)).await.unwrap();
    assert_eq!(mount(&report, "kept")["pid"].as_u64(), Some(kept_pid), "the unchanged mount kept its process");
    let names: Vec<&str> = report["mounts"].as_array().unwrap().iter().map(|m| m["name"].as_str().unwrap()).collect();
    assert_eq!(names, ["kept", "added"], "{report}");

    // A mount whose upstream is not up yet is tried again until it is.
    let late_port = std::net::TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap().port();
    let late = format!("[[mount]]\nname = \"late\"\nurl = \"http://127.0.0.1:{late_port}/mcp\"\n");
    dir.write("gateway.toml", table("kept") + &table("added") + &late);
    gateway.wait_for("`late` could not be mounted");
    let upstream = Process::spawn(
        Command::new(wharf).args(["serve", "--http", &format!("127.0.0.1:{late_port}")]).env_remove("RUST_LOG"),
    );
    gateway.wait_for("wharf gateway: mounted `late`");
    assert_eq!(text(&client.call_tool("late_echo", json!({"message": "at last"})).await.unwrap()), "at last");
    drop(upstream);
    drop(client);
    stop(gateway);
}

/// An upstream that misbehaves: the gateway starts all the same (the tool whose schema no
/// server can compile is left out, logged), a malformed answer and an answer past the line
/// limit are errors naming the mount (the gateway's memory stays bounded, and the mount comes
/// back), an answer that never comes meets the deadline, and the well-behaved tool goes on.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_hostile_upstream_gets_named_errors_and_bounded_memory() {
    let dir = TempDir::new("gateway-hostile");
    let fixture = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/hostile_upstream.py");
    dir.write(
        "gateway.toml",
        format!(
            "[[mount]]\nname = \"hostile\"\ncommand = [\"python3\", {:?}]\ntimeout = 2\n",
            fixture.display().to_string()
        ),
    );
    let (mut gateway, port) = start(&dir, 1);
    let client = Client::connect(Target::url(format!("http://127.0.0.1:{port}/mcp"))).await.unwrap();
    let names: Vec<String> = client.list_tools().await.unwrap().into_iter().map(|tool| tool.name).collect();
    assert_eq!(names, ["hostile_echo", "hostile_hang", "hostile_huge", "hostile_shapeless"], "floaty left out");
    assert!(gateway.stderr_so_far().contains("hostile_floaty"), "and the log says which");

    let shapeless = client.call_tool("hostile_shapeless", json!({})).await.unwrap_err().to_string();
    assert!(shapeless.contains("`hostile`") && shapeless.contains("malformed"), "{shapeless}");

    let started = std::time::Instant::now();
    let hang = client.call_tool("hostile_hang", json!({})).await.unwrap_err().to_string();
    assert!(hang.contains("`hostile`") && started.elapsed() < Duration::from_secs(6), "{hang}");

    let huge = client.call_tool("hostile_huge", json!({})).await.unwrap_err().to_string();
    assert!(huge.contains("`hostile`"), "{huge}");
    let status = std::fs::read_to_string(format!("/proc/{}/status", gateway.id())).unwrap();
    let peak_kib: u64 = status
        .lines()
        .find_map(|line| line.strip_prefix("VmHWM:"))
        .and_then(|kib| kib.split_whitespace().next()?.parse().ok())
        .unwrap();
    // The line is cut at the client's 64 MiB limit, not read whole (80 MiB, held twice).
    assert!(peak_kib < 300 * 1024, "the gateway's memory stayed bounded: peak {peak_kib} KiB");

    // The mount comes back after the connection it cut, and the well-behaved tool answers.
    let mut echoed = None;
    for _ in 0..100 {
        if let Ok(result) = client.call_tool("hostile_echo", json!({"message": "still here"})).await {
            echoed = Some(text(&result));
            break;
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    assert_eq!(echoed.as_deref(), Some("still here"));
    drop(client);
    stop(gateway);
}

/// With `sessions = "per-client"`, each client's upstream session is a program of its own; when
/// that program dies, the client's next calls get a new one.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_clients_own_upstream_program_is_replaced_when_it_dies() {
    let dir = TempDir::new("gateway-own");
    let wharf = env!("CARGO_BIN_EXE_wharf");
    dir.write(
        "gateway.toml",
        format!("[[mount]]\nname = \"own\"\ncommand = [{wharf:?}, \"serve\"]\nsessions = \"per-client\"\n"),
    );
    let (gateway, port) = start(&dir, 1);
    let options =
        wharf_client::ClientOptions::default().protocol_version(wharf_client::protocol::ProtocolVersion::V2025_11_25);
    let client = Client::connect_with(Target::url(format!("http://127.0.0.1:{port}/mcp")), options).await.unwrap();
    assert_eq!(text(&client.call_tool("own_echo", json!({"message": "mine"})).await.unwrap()), "mine");
    let (_, report) = tokio::task::spawn_blocking(move || health(port)).await.unwrap();
    let own = mount(&report, "own");
    assert_eq!(own["client_sessions"], 1, "{report}");
    let first = own["client_pids"][0].as_u64().unwrap();
    assert_ne!(own["pid"].as_u64(), Some(first), "the client's own program, not the shared one");
    assert!(Command::new("kill").args(["-KILL", &first.to_string()]).status().unwrap().success());
    let mut answered = None;
    for _ in 0..50 {
        if let Ok(result) = client.call_tool("own_echo", json!({"message": "again"})).await {
            answered = Some(text(&result));
            break;
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    assert_eq!(answered.as_deref(), Some("again"));
    let (_, report) = tokio::task::spawn_blocking(move || health(port)).await.unwrap();
    let second = mount(&report, "own")["client_pids"][0].as_u64().unwrap();
    assert_ne!(second, first, "a new program: {report}");
    drop(client);
    stop(gateway);
}

/// An upstream that asks for its roots as it starts, outside any client's request: given the
/// mount's `roots` (paths made `file://` URIs, a space percent-encoded), refused without them.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_upstream_asking_for_roots_on_its_own_gets_the_mounts_roots() {
    let dir = TempDir::new("gateway-roots");
    std::fs::create_dir_all(dir.join("a project")).unwrap();
    let fixture = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/rooted_upstream.py");
    let program = format!("command = [\"python3\", {:?}]", fixture.display().to_string());
    dir.write(
        "gateway.toml",
        format!(
            "[[mount]]\nname = \"rooted\"\n{program}\nroots = [\"a project\", \"file:///srv/shared\"]\n\n\
             [[mount]]\nname = \"bare\"\n{program}\n"
        ),
    );
    let (gateway, port) = start(&dir, 2);
    let client = Client::connect(Target::url(format!("http://127.0.0.1:{port}/mcp"))).await.unwrap();
    let mut told = Vec::new();
    for tool in ["rooted_roots", "bare_roots"] {
        let answer = wharf_testkit::eventually::eventually_async(
            &format!("{tool} to be answered"),
            Duration::from_secs(10),
            || async {
                let said = text(&client.call_tool(tool, json!({})).await.unwrap());
                (!said.contains("pending")).then_some(said)
            },
        )
        .await;
        told.push(serde_json::from_str::<Value>(&answer).unwrap());
    }
    let project = std::fs::canonicalize(dir.join("a project")).unwrap().display().to_string().replace(' ', "%20");
    assert_eq!(
        told[0]["roots"],
        json!([{"uri": format!("file://{project}")}, {"uri": "file:///srv/shared"}]),
        "{told:?}"
    );
    assert_eq!(told[1]["error"]["code"], -32603, "without roots the gateway cannot say: {told:?}");
    stop(gateway);
}

/// An HTTP upstream restarted (redeployed) forgets the gateway's 2025 session: the next calls
/// open a new one, without the operator doing anything.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_http_upstream_that_forgot_its_session_is_reconnected() {
    let dir = TempDir::new("gateway-redeployed");
    let upstream_port = wharf_testkit::ports::free_port();
    let serve = || {
        let mut upstream = Process::spawn(
            Command::new(env!("CARGO_BIN_EXE_wharf"))
                .args(["serve", "--http", &format!("127.0.0.1:{upstream_port}")])
                .env("WHARF_LOG", "warn"),
        );
        upstream.wait_for("http://127.0.0.1:");
        upstream
    };
    let upstream = serve();
    dir.write(
        "gateway.toml",
        format!(
            "[[mount]]\nname = \"web\"\nurl = \"http://127.0.0.1:{upstream_port}/mcp\"\nrevision = \"2025-11-25\"\n"
        ),
    );
    let (gateway, port) = start(&dir, 1);
    let client = Client::connect(Target::url(format!("http://127.0.0.1:{port}/mcp"))).await.unwrap();
    let echo = |message: &'static str| client.call_tool("web_echo", json!({"message": message}));
    assert_eq!(text(&echo("before").await.unwrap()), "before");

    upstream.signal("KILL");
    let _ = upstream.wait();
    let _redeployed = serve();
    let after = wharf_testkit::eventually::eventually_async(
        "the gateway to reach the new upstream",
        Duration::from_secs(15),
        || async { echo("after").await.ok().map(|result| text(&result)) },
    )
    .await;
    assert_eq!(after, "after");
    stop(gateway);
}

/// `start = "lazy"`: the program is not started with the gateway (the health endpoint says
/// `lazy`, the banner says so), but with the first request, whose answer lists its tools.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_lazy_mount_starts_its_program_with_the_first_request() {
    let dir = TempDir::new("gateway-lazy");
    let wharf = env!("CARGO_BIN_EXE_wharf");
    dir.write(
        "gateway.toml",
        format!(
            "[[mount]]\nname = \"eager\"\ncommand = [{wharf:?}, \"serve\"]\n\n\
             [[mount]]\nname = \"lazy\"\ncommand = [{wharf:?}, \"serve\"]\nstart = \"lazy\"\n"
        ),
    );
    let (mut gateway, port) = start(&dir, 2);
    assert!(gateway.stderr_so_far().contains("(1 to start with the first request)"));
    let names = |report: &Value| -> Vec<String> {
        report["mounts"].as_array().unwrap().iter().map(|mount| mount["name"].as_str().unwrap().to_owned()).collect()
    };
    let (status, before) = tokio::task::spawn_blocking(move || health(port)).await.unwrap();
    assert_eq!(names(&before), ["eager", "lazy"], "{before}");
    assert_eq!((status, mount(&before, "lazy")["state"].as_str()), (200, Some("lazy")), "not started: {before}");

    let client = Client::connect(Target::url(format!("http://127.0.0.1:{port}/mcp"))).await.unwrap();
    let tools: Vec<String> = client.list_tools().await.unwrap().into_iter().map(|tool| tool.name).collect();
    assert!(tools.contains(&"lazy_echo".to_owned()) && tools.contains(&"eager_echo".to_owned()), "{tools:?}");
    let (_, after) = tokio::task::spawn_blocking(move || health(port)).await.unwrap();
    assert_eq!(names(&after), ["eager", "lazy"], "{after}");
    assert_eq!(mount(&after, "lazy")["state"], "up", "{after}");
    assert!(mount(&after, "lazy")["pid"].as_u64().is_some(), "its program runs: {after}");
    stop(gateway);
}
