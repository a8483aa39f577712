//! A folder served through the in-memory client: every kind of file, the problems of a broken
//! folder, command tools that fail, time out or leave children behind (in sessions of their own
//! too), the environment they get, reloads while a client is connected, and files swapped for
//! links, FIFOs and larger files while the folder is read (at length with `--ignored`, run by
//! `scripts/attack`).

use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use serde_json::{Value, json};
use wharf_folder::{Loaded, watch};
use wharf_protocol::{ClientCapabilities, ProtocolVersion};
use wharf_server::testing::InMemoryClient;
use wharf_testkit::eventually::{eventually, eventually_async, next_notification_of, until};
use wharf_testkit::temp_dir::TempDir;

const TOOLS: &str = r#"
[server]
name = "test-folder"
instructions = "For tests."

[resources]
scheme = "docs"

[[tools]]
name = "shout"
description = "Upper-case a text"
command = ["python3", "-c", "import sys; print(sys.argv[1].upper())", "{text}"]
read_only = true

[tools.arguments.text]
required = true

[[tools]]
name = "measure"
command = ["python3", "-c", "import json, sys; print(json.dumps({'length': len(sys.argv[1])}))", "{text}"]
output = "json"
output_schema = { type = "object", properties = { length = { type = "integer" } }, required = ["length"] }

[tools.arguments.text]
required = true

[[tools]]
name = "fail"
command = ["python3", "-c", "import sys; sys.stderr.write('it broke'); sys.exit(3)"]

[[tools]]
name = "linger"
description = "Starts a child that would outlive it, then waits"
command = ["sh", "-c", "sleep 60 & echo $! > {pidfile}; wait"]
timeout = 0.5

[tools.arguments.pidfile]
required = true

[[tools]]
name = "wait"
description = "Starts a child, then waits for it: only a cancellation ends it early"
command = ["sh", "-c", "sleep 60 & echo $! > {pidfile}; wait"]
timeout = 120

[tools.arguments.pidfile]
required = true

[[tools]]
name = "detach"
description = "Exits at once, leaving a child that holds its output"
command = ["sh", "-c", "sleep 60 & echo $! > {pidfile}; echo started"]

[tools.arguments.pidfile]
required = true

[[tools]]
name = "home_hidden"
command = ["sh", "-c", "echo \"[$HOME]\""]

[[tools]]
name = "home_passed"
command = ["sh", "-c", "echo \"[$HOME]\""]
env = ["HOME"]
"#;

fn example(name: &str) -> TempDir {
    let folder = TempDir::new(name);
    folder.write("wharf.toml", TOOLS);
    folder.write(
        "prompts/review.md",
        "---\ndescription: Review code\narguments:\n  - name: language\n    required: true\n    completion: [rust, go]\n---\nReview this {language} code.\n",
    );
    folder.write("prompts/plain.md", "No frontmatter, no arguments.\n");
    folder.write("resources/guide.md", "# Guide\n");
    folder.write("resources/nested/data.json", "{\"a\": 1}\n");
    folder.write("resources/.hidden", "never\n");
    folder.write("skills/notes/SKILL.md", "---\nname: notes\ndescription: Take notes\n---\n# Notes\n");
    folder.write("skills/notes/references/how.md", "How.\n");
    folder
}

async fn client(folder: &Path) -> (InMemoryClient, wharf_server::Server) {
    let server = Loaded::load(folder).unwrap().builder().build().unwrap();
    (InMemoryClient::latest_session(server.clone()).await, server)
}

fn text(result: &Value) -> String {
    result["content"][0]["text"].as_str().unwrap_or_default().to_owned()
}

#[tokio::test]
async fn a_folder_serves_its_tools_prompts_resources_and_skills() {
    let folder = example("serves");
    let (client, _server) = client(folder.path()).await;

    let shouted = client.request("tools/call", json!({"name": "shout", "arguments": {"text": "a; rm -rf /"}})).await;
    assert_eq!(text(&shouted.unwrap()).trim(), "A; RM -RF /", "the argument is one argv element, never shell");
    let measured =
        client.request("tools/call", json!({"name": "measure", "arguments": {"text": "four"}})).await.unwrap();
    assert_eq!(measured["structuredContent"], json!({"length": 4}));
    let tools = client.request("tools/list", json!({})).await.unwrap();
    let measure = tools["tools"].as_array().unwrap().iter().find(|tool| tool["name"] == "measure").unwrap().clone();
    assert_eq!(measure["outputSchema"]["required"], json!(["length"]));
    let shout = tools["tools"].as_array().unwrap().iter().find(|tool| tool["name"] == "shout").unwrap().clone();
    assert_eq!(shout["inputSchema"]["required"], json!(["text"]));
    assert_eq!(shout["annotations"]["readOnlyHint"], true);

    let prompt = client.request("prompts/get", json!({"name": "review", "arguments": {"language": "rust"}})).await;
    assert_eq!(prompt.unwrap()["messages"][0]["content"]["text"], "Review this rust code.\n");
    let completed = client
        .request(
            "completion/complete",
            json!({"ref": {"type": "ref/prompt", "name": "review"}, "argument": {"name": "language", "value": "r"}}),
        )
        .await
        .unwrap();
    assert_eq!(completed["completion"]["values"], json!(["rust"]));
    let plain = client.request("prompts/get", json!({"name": "plain"})).await.unwrap();
    assert_eq!(plain["messages"][0]["content"]["text"], "No frontmatter, no arguments.\n");

    let resources = client.request("resources/list", json!({})).await.unwrap();
    let uris: Vec<&str> =
        resources["resources"].as_array().unwrap().iter().map(|resource| resource["uri"].as_str().unwrap()).collect();
    assert_eq!(uris, ["docs://guide.md", "docs://nested/data.json", "skill://notes/SKILL.md"]);
    let data = client.request("resources/read", json!({"uri": "docs://nested/data.json"})).await.unwrap();
    assert_eq!(data["contents"][0]["mimeType"], "application/json");
    let skill = client.request("resources/read", json!({"uri": "skill://notes/references/how.md"})).await.unwrap();
    assert_eq!(skill["contents"][0]["text"], "How.\n");
}

#[tokio::test]
async fn command_tools_fail_time_out_and_take_their_children_with_them() {
    let folder = example("fails");
    let (client, _server) = client(folder.path()).await;
    let failed = client.request("tools/call", json!({"name": "fail", "arguments": {}})).await.unwrap();
    assert_eq!(failed["isError"], true);
    assert!(text(&failed).contains("exited with 3") && text(&failed).contains("it broke"), "{failed}");

    let pidfile = folder.path().join("child.pid");
    let started = Instant::now();
    let lingered = client
        .request("tools/call", json!({"name": "linger", "arguments": {"pidfile": pidfile.to_str().unwrap()}}))
        .await
        .unwrap();
    assert!(started.elapsed() < Duration::from_secs(10), "the timeout cut it: {:?}", started.elapsed());
    assert_eq!(lingered["isError"], true);
    assert!(text(&lingered).contains("did not finish"), "{lingered}");
    let child: u32 = std::fs::read_to_string(&pidfile).unwrap().trim().parse().unwrap();
    gone(child, "the child it started to be killed too").await;

    let detached_pid = folder.path().join("detached.pid");
    let started = Instant::now();
    let detached = client
        .request("tools/call", json!({"name": "detach", "arguments": {"pidfile": detached_pid.to_str().unwrap()}}))
        .await
        .unwrap();
    assert!(started.elapsed() < Duration::from_secs(5), "not held for the timeout: {:?}", started.elapsed());
    assert_eq!(text(&detached).trim(), "started", "{detached}");
    let child: u32 = std::fs::read_to_string(&detached_pid).unwrap().trim().parse().unwrap();
    gone(child, "what held the output to be killed with the group").await;

    let hidden = client.request("tools/call", json!({"name": "home_hidden", "arguments": {}})).await.unwrap();
    assert_eq!(text(&hidden).trim(), "[]", "only allowed variables reach the program");
    let passed = client.request("tools/call", json!({"name": "home_passed", "arguments": {}})).await.unwrap();
    assert_eq!(text(&passed).trim(), format!("[{}]", std::env::var("HOME").unwrap_or_default()));
}

/// Waits (at most five seconds) for the process `pid` to be gone or a zombie; fails saying
/// `what` did not happen otherwise.
async fn gone(pid: u32, what: &str) {
    until(what, Duration::from_secs(5), || {
        let status = std::fs::read_to_string(format!("/proc/{pid}/status")).unwrap_or_default();
        status.is_empty() || status.contains("State:\tZ")
    })
    .await;
}

#[tokio::test]
async fn a_cancelled_call_kills_its_program_and_what_it_started() {
    let folder = example("cancel");
    let (client, _server) = client(folder.path()).await;
    let pidfile = folder.path().join("waiting.pid");
    let id = wharf_protocol::RequestId::number(77);
    let answer = client
        .start_request(id, "tools/call", json!({"name": "wait", "arguments": {"pidfile": pidfile.to_str().unwrap()}}))
        .await;
    let child = pid_in(&pidfile).await;
    client.notify("notifications/cancelled", json!({"requestId": 77, "reason": "changed my mind"})).await;
    gone(child, "the cancelled call's child to be killed with its group").await;
    drop(answer);
}

#[tokio::test]
async fn a_broken_folder_is_refused_with_every_problem_and_its_file() {
    let folder = TempDir::new("broken");
    folder.write(
        "wharf.toml",
        "[[tools]]\nname = \"a\"\ncommand = [\"cat\", \"{nope}\"]\n\n[[tools]]\nname = \"b\"\ncommand = [\"{program}\"]\n\n\
         [tools.arguments.program]\nrequired = true\n",
    );
    folder.write("prompts/bad.md", "---\narguments: 3\n---\nbody\n");
    folder.write("skills/x/SKILL.md", "---\nname: y\ndescription: wrong name\n---\n");
    let problems = Loaded::load(folder.path()).unwrap_err().problems().to_vec();
    let all = problems.join("\n");
    assert!(all.contains("tool `a`") && all.contains("`{nope}`"), "{all}");
    assert!(all.contains("tool `b`") && all.contains("written out"), "{all}");
    assert!(all.contains("bad.md") && all.contains("frontmatter"), "{all}");
    assert!(all.contains("skills") && all.contains("last segment"), "{all}");
    folder.write("wharf.toml", "[server\n");
    let unreadable = Loaded::load(folder.path()).unwrap_err().to_string();
    assert!(unreadable.contains("wharf.toml"), "{unreadable}");
    assert!(Loaded::load(folder.path().join("missing")).is_err());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn changes_to_the_folder_are_served_at_once_and_a_broken_one_is_not() {
    let folder = example("reload");
    let loaded = Loaded::load(folder.path()).unwrap();
    let served = loaded.summary().clone();
    let server = loaded.builder().build().unwrap();
    let (client, _) =
        InMemoryClient::session(server.clone(), ProtocolVersion::LATEST_SESSION, ClientCapabilities::default())
            .await
            .unwrap();
    let _watching = watch(server, folder.path(), served).unwrap();
    client.request("resources/subscribe", json!({"uri": "docs://guide.md"})).await.unwrap();

    folder.write("resources/guide.md", "# Guide, edited\n");
    let updated = next_notification_of(&client, "notifications/resources/updated").await;
    assert_eq!(updated["params"]["uri"], "docs://guide.md");
    let read = client.request("resources/read", json!({"uri": "docs://guide.md"})).await.unwrap();
    assert_eq!(read["contents"][0]["text"], "# Guide, edited\n");

    folder.write("prompts/new.md", "A new prompt.\n");
    next_notification_of(&client, "notifications/prompts/list_changed").await;
    let prompts = client.request("prompts/list", json!({})).await.unwrap();
    assert_eq!(prompts["prompts"].as_array().unwrap().len(), 3);

    // A broken version is not served: the one before goes on.
    folder.write("wharf.toml", "[[tools]]\nname = \"broken\"\n");
    tokio::time::sleep(Duration::from_millis(800)).await;
    let tools = client.request("tools/list", json!({})).await.unwrap();
    assert_eq!(tools["tools"].as_array().unwrap().len(), 8, "the tools before are still served");
    let shouted = client.request("tools/call", json!({"name": "shout", "arguments": {"text": "still"}})).await.unwrap();
    assert_eq!(text(&shouted).trim(), "STILL");

    // Fixed, with one tool fewer and the skill edited.
    folder.write("wharf.toml", TOOLS.replace("name = \"fail\"", "name = \"fails\""));
    next_notification_of(&client, "notifications/tools/list_changed").await;
    let tools = client.request("tools/list", json!({})).await.unwrap();
    let names: Vec<&str> =
        tools["tools"].as_array().unwrap().iter().map(|tool| tool["name"].as_str().unwrap()).collect();
    assert!(names.contains(&"fails") && !names.contains(&"fail"), "{names:?}");
    folder.write("skills/notes/references/how.md", "How, edited.\n");
    let size_of_how = || async {
        let skill = client.request("skills/get", json!({"uri": "skill://notes/SKILL.md"})).await.ok()?;
        let files = skill["skill"]["resources"].as_array()?.clone();
        let how = files.into_iter().find(|file| file["uri"] == "skill://notes/references/how.md")?;
        (how["size"] == "How, edited.\n".len()).then_some(())
    };
    eventually_async("the skill to be re-hashed after the change", Duration::from_secs(5), size_of_how).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_watched_folder_offers_every_kind_from_the_start_and_sessions_see_what_it_gains() {
    let folder = TempDir::new("gains");
    folder.write("wharf.toml", "[server]\nname = \"gains\"\n");
    let loaded = Loaded::load(folder.path()).unwrap();
    let served = loaded.summary().clone();

    // Served as it is, an empty folder offers nothing.
    let unwatched = Loaded::load(folder.path()).unwrap().builder().build().unwrap();
    let (plain, init) =
        InMemoryClient::session(unwatched, ProtocolVersion::LATEST_SESSION, ClientCapabilities::default())
            .await
            .unwrap();
    assert!(init.capabilities.prompts.is_none() && init.capabilities.tools.is_none());
    assert_eq!(plain.request("prompts/list", json!({})).await.unwrap_err().code.0, -32601);

    let server = loaded.builder_for_watching().build().unwrap();
    let (client, init) =
        InMemoryClient::session(server.clone(), ProtocolVersion::LATEST_SESSION, ClientCapabilities::default())
            .await
            .unwrap();
    let capabilities = serde_json::to_value(&init.capabilities).unwrap();
    for kind in ["tools", "prompts"] {
        assert_eq!(capabilities[kind]["listChanged"], true, "{capabilities}");
    }
    assert_eq!(capabilities["resources"], json!({"subscribe": true, "listChanged": true}));
    assert_eq!(capabilities["completions"], json!({}));
    assert_eq!(capabilities["extensions"]["io.modelcontextprotocol/skills"], json!({"directoryRead": true}));
    for (method, list) in [("tools/list", "tools"), ("prompts/list", "prompts"), ("resources/list", "resources")] {
        let answer = client.request(method, json!({})).await.unwrap();
        assert_eq!(answer[list], json!([]), "{method}");
    }
    assert_eq!(client.request("skills/list", json!({})).await.unwrap()["skills"], json!([]));
    let _watching = watch(server, folder.path(), served).unwrap();

    folder.write(
        "prompts/hello.md",
        "---\narguments:\n  - name: who\n    completion: [world, moon]\n---\nHello {who}.\n",
    );
    next_notification_of(&client, "notifications/prompts/list_changed").await;
    let prompts = client.request("prompts/list", json!({})).await.unwrap();
    assert_eq!(prompts["prompts"][0]["name"], "hello");
    let completed = client
        .request(
            "completion/complete",
            json!({"ref": {"type": "ref/prompt", "name": "hello"}, "argument": {"name": "who", "value": "m"}}),
        )
        .await
        .unwrap();
    assert_eq!(completed["completion"]["values"], json!(["moon"]));

    folder.write("skills/later/SKILL.md", "---\nname: later\ndescription: Came later\n---\n# Later\n");
    next_notification_of(&client, "notifications/resources/list_changed").await;
    let skills = client.request("skills/list", json!({})).await.unwrap();
    assert_eq!(skills["skills"][0]["frontmatter"]["name"], "later", "{skills}");

    folder
        .write("wharf.toml", "[server]\nname = \"gains\"\n\n[[tools]]\nname = \"hi\"\ncommand = [\"echo\", \"hi\"]\n");
    next_notification_of(&client, "notifications/tools/list_changed").await;
    let said = client.request("tools/call", json!({"name": "hi", "arguments": {}})).await.unwrap();
    assert_eq!(text(&said).trim(), "hi");
}

// Issue 38: files that change while a folder is read, links, and names that cannot be served.

/// What a file outside the folder holds, which a link must never serve.
const OUTSIDE: &str = "outside the folder\n";

/// The resource `uri` in a fresh read of `folder`, when it loads: its contents.
async fn read_once(folder: &Path, uri: &str) -> Option<Value> {
    let server = Loaded::load(folder).ok()?.builder().build().ok()?;
    let client = InMemoryClient::stateless(server, ClientCapabilities::default());
    client.request("resources/read", json!({"uri": uri})).await.ok()
}

/// `resources/swap.txt` in a fresh read of `folder`, when it loads: its contents.
async fn read_swapped(folder: PathBuf) -> Option<Value> {
    read_once(&folder, "docs://swap.txt").await
}

/// `resources/swap.txt` in a fresh read of `folder`, when it loads: its entry in the list.
async fn list_swapped(folder: PathBuf) -> Option<Value> {
    let server = Loaded::load(folder).ok()?.builder().build().ok()?;
    let client = InMemoryClient::stateless(server, ClientCapabilities::default());
    let listed = client.request("resources/list", json!({})).await.ok()?;
    listed["resources"].as_array()?.iter().find(|resource| resource["uri"] == "docs://swap.txt").cloned()
}

/// Swaps `resources/swap.txt` between a file of `inside` and what `other` makes, over and over,
/// until `stop` is set; how many swaps it made.
fn swap_until(
    folder: &Path,
    stop: std::sync::Arc<std::sync::atomic::AtomicBool>,
    other: impl Fn(&Path) + Send + 'static,
) -> std::thread::JoinHandle<u64> {
    let resources = folder.join("resources");
    std::thread::spawn(move || {
        let (target, staged) = (resources.join("swap.txt"), resources.join(".staged"));
        let mut swaps = 0;
        while !stop.load(std::sync::atomic::Ordering::Relaxed) {
            std::fs::write(&staged, "inside\n").unwrap();
            std::fs::rename(&staged, &target).unwrap();
            let _ = std::fs::remove_file(&staged);
            other(&staged);
            std::fs::rename(&staged, &target).unwrap();
            swaps += 2;
        }
        swaps
    })
}

/// Reads `folder` again and again (for `budget`) with `read` while a thread swaps
/// `resources/swap.txt`, and hands every answer to `check`; how many reads and swaps.
async fn race<Read: Future<Output = Option<Value>>>(
    folder: &Path,
    budget: Duration,
    other: impl Fn(&Path) + Send + 'static,
    read: impl Fn(PathBuf) -> Read,
    check: impl Fn(&Value),
) -> (usize, u64) {
    let stop = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(false));
    let swapper = swap_until(folder, stop.clone(), other);
    let started = Instant::now();
    let mut reads = 0;
    while started.elapsed() < budget {
        if let Some(answer) = read(folder.to_path_buf()).await {
            check(&answer);
        }
        reads += 1;
    }
    stop.store(true, std::sync::atomic::Ordering::Relaxed);
    (reads, swapper.join().unwrap())
}

fn racing_folder(name: &str) -> (TempDir, TempDir) {
    let folder = TempDir::new(name);
    folder.write("wharf.toml", "[resources]\nscheme = \"docs\"\n");
    folder.write("resources/swap.txt", "inside\n");
    folder.write("resources/other.md", "# Other\n");
    let outside = TempDir::new(&format!("{name}-outside"));
    outside.write("secret.txt", OUTSIDE);
    (folder, outside)
}

fn never_outside(read: &Value) {
    assert_ne!(read["contents"][0]["text"], OUTSIDE, "a file outside the folder was served");
}

/// Swaps a file for a link out of the folder while the folder is read, for `budget`.
async fn swap_for_a_link(name: &str, budget: Duration) {
    let (folder, outside) = racing_folder(name);
    let secret = outside.path().join("secret.txt");
    let link = move |staged: &Path| std::os::unix::fs::symlink(&secret, staged).unwrap();
    let (reads, swaps) = race(folder.path(), budget, link, read_swapped, never_outside).await;
    eprintln!("a link out of the folder: {reads} reads of the folder, {swaps} swaps, the outside file never served");
}

/// Swaps a file for one of 100 MiB while the folder is read, for `budget`.
async fn swap_for_a_larger_file(name: &str, budget: Duration) {
    let (folder, outside) = racing_folder(name);
    let master = outside.path().join("large");
    std::fs::File::create(&master).unwrap().set_len(100 * 1024 * 1024).unwrap();
    let large = move |staged: &Path| std::fs::hard_link(&master, staged).unwrap();
    let (reads, swaps) = race(folder.path(), budget, large, list_swapped, |listed| {
        assert!(listed["size"].as_u64().unwrap() <= 16 * 1024 * 1024, "served past the cap: {listed}");
    })
    .await;
    eprintln!("a larger file: {reads} reads of the folder, {swaps} swaps, nothing served past 16 MiB");
}

/// Swaps a file for a FIFO while the folder is read, for `budget`, and fails when one read of the
/// folder takes more than five seconds; how many reads there were.
fn swap_for_a_fifo(folder: &Path, budget: Duration) -> usize {
    let stop = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(false));
    let fifos = TempDir::new(&format!("{}-fifo", folder.file_name().unwrap().to_string_lossy()));
    let master = fifos.path().join("fifo");
    assert!(std::process::Command::new("mkfifo").arg(&master).status().unwrap().success());
    let fifo = move |staged: &Path| std::fs::hard_link(&master, staged).unwrap();
    let swapper = swap_until(folder, stop.clone(), fifo);
    let (done, finished) = std::sync::mpsc::channel();
    let path = folder.to_path_buf();
    // On a thread of its own, so that a read that hangs is seen as one rather than hanging the test.
    std::thread::spawn(move || {
        let started = Instant::now();
        let mut reads = 0;
        while started.elapsed() < budget {
            let _ = Loaded::load(&path);
            reads += 1;
            let _ = done.send(reads);
        }
    });
    let mut reads = 0;
    loop {
        match finished.recv_timeout(Duration::from_secs(5)) {
            Ok(count) => reads = count,
            Err(std::sync::mpsc::RecvTimeoutError::Disconnected) => break,
            Err(std::sync::mpsc::RecvTimeoutError::Timeout) => panic!("reading the folder hung after {reads} reads"),
        }
    }
    stop.store(true, std::sync::atomic::Ordering::Relaxed);
    let swaps = swapper.join().unwrap();
    eprintln!("a FIFO: {reads} reads of the folder, {swaps} swaps, none hung");
    reads
}

#[tokio::test]
async fn a_file_swapped_for_a_link_out_of_the_folder_while_it_is_read_is_never_served() {
    swap_for_a_link("swap-link", Duration::from_secs(2)).await;
}

#[tokio::test]
async fn a_file_swapped_for_a_larger_one_while_it_is_read_is_never_served_past_the_cap() {
    swap_for_a_larger_file("swap-large", Duration::from_secs(2)).await;
}

#[tokio::test]
async fn a_file_swapped_for_a_fifo_while_it_is_read_never_hangs_the_reading() {
    let (folder, _outside) = racing_folder("swap-fifo");
    swap_for_a_fifo(folder.path(), Duration::from_secs(2));
}

/// How long each attack below runs: `WHARF_ATTACK_SECONDS`, 30 unless set.
fn attack_budget() -> Duration {
    let seconds = std::env::var("WHARF_ATTACK_SECONDS").ok().and_then(|text| text.parse().ok()).unwrap_or(30);
    Duration::from_secs(seconds)
}

// The attacks of issue 38 at length, for `scripts/attack`:
// `cargo test -p wharf-folder --test folder -- --ignored --nocapture --test-threads 1`.

#[tokio::test]
#[ignore = "slow: run by scripts/attack"]
async fn attack_a_file_swapped_for_a_link_out_of_the_folder() {
    swap_for_a_link("attack-link", attack_budget()).await;
}

#[tokio::test]
#[ignore = "slow: run by scripts/attack"]
async fn attack_a_file_swapped_for_one_past_the_cap() {
    swap_for_a_larger_file("attack-large", attack_budget()).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
#[ignore = "slow: run by scripts/attack"]
async fn attack_a_file_swapped_for_a_fifo_while_the_watched_folder_reloads() {
    let (folder, _outside) = racing_folder("attack-fifo");
    let loaded = Loaded::load(folder.path()).unwrap();
    let served = loaded.summary().clone();
    let server = loaded.builder_for_watching().build().unwrap();
    let (client, _) =
        InMemoryClient::session(server.clone(), ProtocolVersion::LATEST_SESSION, ClientCapabilities::default())
            .await
            .unwrap();
    let _watching = watch(server, folder.path(), served).unwrap();
    let path = folder.path().to_path_buf();
    tokio::task::spawn_blocking(move || swap_for_a_fifo(&path, attack_budget())).await.unwrap();
    // The watcher still reloads: what is written now is served.
    folder.write("resources/after.md", "# After\n");
    eventually_async("the watched folder to go on reloading", Duration::from_secs(10), || async {
        client.request("resources/read", json!({"uri": "docs://after.md"})).await.ok()
    })
    .await;
}

#[tokio::test]
async fn the_folders_own_directories_are_never_reached_through_a_link() {
    let outside = TempDir::new("top-links-outside");
    outside.write("secret.txt", OUTSIDE);
    outside.write("prompt.md", "A prompt from outside.\n");
    outside.write("skill/SKILL.md", "---\nname: skill\ndescription: From outside\n---\n");
    for directory in ["resources", "prompts", "skills", "wharf.toml"] {
        let folder = TempDir::new(&format!("top-link-{directory}"));
        std::os::unix::fs::symlink(outside.path(), folder.path().join(directory)).unwrap();
        let refused = Loaded::load(folder.path()).map(|loaded| loaded.summary().describe());
        let problems = refused.expect_err("a folder whose own directory is a link is refused").problems().join("\n");
        assert!(problems.contains(directory) && problems.contains("symbolic link"), "{problems}");
    }

    // The folder's own path may be a link: it is the operator's to name.
    let folder = example("linked-folder");
    let link = outside.path().join("linked-folder");
    std::os::unix::fs::symlink(folder.path(), &link).unwrap();
    assert_eq!(Loaded::load(&link).unwrap().summary().describe(), "8 tools, 2 prompts, 2 resources, skills");

    // A hard link is the file it links, served as one (making it takes access to that file).
    std::fs::hard_link(outside.path().join("secret.txt"), folder.path().join("resources/hard.txt")).unwrap();
    let read = read_once(folder.path(), "docs://hard.txt").await.unwrap();
    assert_eq!(read["contents"][0]["text"], OUTSIDE);
}

#[tokio::test]
async fn a_name_that_is_not_utf8_or_holds_a_control_character_is_left_out_and_the_rest_served() {
    use std::os::unix::ffi::OsStrExt;
    let odd = |folder: &TempDir, directory: &str, name: &[u8]| {
        let path = folder.path().join(directory).join(std::ffi::OsStr::from_bytes(name));
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(path, "odd\n").unwrap();
    };
    let plant = |folder: &TempDir| {
        for directory in ["resources", "resources/nested", "prompts", "skills/notes", "skills/notes/references"] {
            odd(folder, directory, b"Icon\r");
            odd(folder, directory, b"caf\xe9.md");
            odd(folder, directory, b"tab\there.md");
        }
    };
    let folder = example("odd-names");
    plant(&folder);
    let loaded = Loaded::load(folder.path()).expect("the odd names are left out, the rest is served");
    assert_eq!(loaded.summary().describe(), "8 tools, 2 prompts, 2 resources, skills");
    let (client, _server) = client(folder.path()).await;
    let skill = client.request("resources/read", json!({"uri": "skill://notes/references/how.md"})).await.unwrap();
    assert_eq!(skill["contents"][0]["text"], "How.\n");

    // A reload is not stopped by them either.
    let folder = example("odd-names-reload");
    let loaded = Loaded::load(folder.path()).unwrap();
    let served = loaded.summary().clone();
    let server = loaded.builder_for_watching().build().unwrap();
    let (client, _) =
        InMemoryClient::session(server.clone(), ProtocolVersion::LATEST_SESSION, ClientCapabilities::default())
            .await
            .unwrap();
    let _watching = watch(server, folder.path(), served).unwrap();
    plant(&folder);
    folder.write("resources/added.md", "# Added\n");
    next_notification_of(&client, "notifications/resources/list_changed").await;
    let added = client.request("resources/read", json!({"uri": "docs://added.md"})).await.unwrap();
    assert_eq!(added["contents"][0]["text"], "# Added\n");
}

const ESCAPING: &str = r#"
[[tools]]
name = "escape"
description = "A grandchild that leaves the process group, then a wait that only the timeout ends"
command = ["sh", "-c", "setsid sleep 300 & echo $! > {pidfile}; wait"]
timeout = 0.5

[tools.arguments.pidfile]
required = true

[[tools]]
name = "orphan"
description = "A grandchild that leaves the process group and whose parent is gone"
command = ["sh", "-c", "(setsid sleep 300 > /dev/null 2>&1 & echo $! > {pidfile}); sleep 60"]
timeout = 0.5

[tools.arguments.pidfile]
required = true

[[tools]]
name = "escape_and_hold"
description = "Exits at once, its grandchild in a session of its own holding the output"
command = ["sh", "-c", "setsid sleep 300 & echo $! > {pidfile}; echo started"]

[tools.arguments.pidfile]
required = true

[[tools]]
name = "escape_and_wait"
description = "A grandchild that leaves the process group, then a wait that only a cancellation ends"
command = ["sh", "-c", "setsid sleep 300 & echo $! > {pidfile}; wait"]
timeout = 120

[tools.arguments.pidfile]
required = true
"#;

/// The pid a tool wrote to `pidfile`, waiting at most ten seconds for it.
async fn pid_in(pidfile: &Path) -> u32 {
    eventually("the program to start", Duration::from_secs(10), || {
        std::fs::read_to_string(pidfile).ok().and_then(|text| text.trim().parse::<u32>().ok())
    })
    .await
}

/// Kills `pid` when the test fails before the server did.
struct Reap(u32);

impl Drop for Reap {
    fn drop(&mut self) {
        let _ = std::process::Command::new("kill").args(["-9", &self.0.to_string()]).status();
    }
}

#[tokio::test]
async fn a_grandchild_that_calls_setsid_is_killed_with_the_call() {
    let folder = TempDir::new("setsid");
    folder.write("wharf.toml", ESCAPING);
    let (client, _server) = client(folder.path()).await;
    for tool in ["escape", "orphan", "escape_and_hold"] {
        let pidfile = folder.path().join(format!("{tool}.pid"));
        let answer = client
            .request("tools/call", json!({"name": tool, "arguments": {"pidfile": pidfile.to_str().unwrap()}}))
            .await
            .unwrap();
        let grandchild = pid_in(&pidfile).await;
        let _reap = Reap(grandchild);
        gone(grandchild, &format!("{tool}: the grandchild in a session of its own to be killed too ({answer})")).await;
    }

    let pidfile = folder.path().join("cancelled.pid");
    let id = wharf_protocol::RequestId::number(78);
    let answer = client
        .start_request(
            id,
            "tools/call",
            json!({"name": "escape_and_wait", "arguments": {"pidfile": pidfile.to_str().unwrap()}}),
        )
        .await;
    let grandchild = pid_in(&pidfile).await;
    let _reap = Reap(grandchild);
    client.notify("notifications/cancelled", json!({"requestId": 78})).await;
    gone(grandchild, "the cancelled call's grandchild in a session of its own to be killed too").await;
    drop(answer);
}

#[test]
fn a_grandchild_that_calls_setsid_is_killed_when_the_server_stops() {
    let folder = TempDir::new("setsid-stop");
    folder.write("wharf.toml", ESCAPING);
    let pidfile = folder.path().join("stopped.pid");
    let serving = tokio::runtime::Builder::new_multi_thread().worker_threads(1).enable_all().build().unwrap();
    let (grandchild, client, answer) = serving.block_on(async {
        let (client, _server) = client(folder.path()).await;
        let arguments = json!({"pidfile": pidfile.to_str().unwrap()});
        let answer = client
            .start_request(
                wharf_protocol::RequestId::number(79),
                "tools/call",
                json!({"name": "escape_and_wait", "arguments": arguments}),
            )
            .await;
        (pid_in(&pidfile).await, client, answer)
    });
    let _reap = Reap(grandchild);
    // The server stops: its runtime ends, and the call with it.
    drop(serving);
    let waiting = tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap();
    waiting.block_on(gone(grandchild, "the grandchild in a session of its own to die with the server"));
    drop((client, answer));
}
