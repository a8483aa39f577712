//! A folder served through the in-memory client: every kind of file, the problems of a broken
//! folder, command tools that fail, time out or leave children behind, the environment they
//! get, and reloads while a client is connected.

use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use serde_json::{Value, json};
use wharf_folder::{Loaded, watch};
use wharf_protocol::{ClientCapabilities, ProtocolVersion};
use wharf_server::testing::InMemoryClient;

/// A temporary folder, removed when dropped.
struct Scratch(PathBuf);

impl Scratch {
    fn new(name: &str) -> Scratch {
        let path = std::env::temp_dir().join(format!("wharf-folder-{name}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&path);
        std::fs::create_dir_all(&path).unwrap();
        Scratch(path)
    }

    fn write(&self, path: &str, contents: &str) {
        let path = self.0.join(path);
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(path, contents).unwrap();
    }

    fn path(&self) -> &Path {
        &self.0
    }
}

impl Drop for Scratch {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

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

fn example(name: &str) -> Scratch {
    let folder = Scratch::new(name);
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
    assert!(gone(child).await, "the child it started was killed too");

    let detached_pid = folder.path().join("detached.pid");
    let started = Instant::now();
    let detached = client
        .request("tools/call", json!({"name": "detach", "arguments": {"pidfile": detached_pid.to_str().unwrap()}}))
        .await
        .unwrap();
    assert!(started.elapsed() < Duration::from_secs(5), "not held for the timeout: {:?}", started.elapsed());
    assert_eq!(text(&detached).trim(), "started", "{detached}");
    let child: u32 = std::fs::read_to_string(&detached_pid).unwrap().trim().parse().unwrap();
    assert!(gone(child).await, "what held the output was killed with the group");

    let hidden = client.request("tools/call", json!({"name": "home_hidden", "arguments": {}})).await.unwrap();
    assert_eq!(text(&hidden).trim(), "[]", "only allowed variables reach the program");
    let passed = client.request("tools/call", json!({"name": "home_passed", "arguments": {}})).await.unwrap();
    assert_eq!(text(&passed).trim(), format!("[{}]", std::env::var("HOME").unwrap_or_default()));
}

/// Waits (at most five seconds) for the process `pid` to be gone or a zombie.
async fn gone(pid: u32) -> bool {
    let deadline = Instant::now() + Duration::from_secs(5);
    loop {
        let status = std::fs::read_to_string(format!("/proc/{pid}/status")).unwrap_or_default();
        if status.is_empty() || status.contains("State:\tZ") {
            return true;
        }
        if Instant::now() > deadline {
            return false;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
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
    let deadline = Instant::now() + Duration::from_secs(10);
    let child = loop {
        if let Some(pid) = std::fs::read_to_string(&pidfile).ok().and_then(|text| text.trim().parse::<u32>().ok()) {
            break pid;
        }
        assert!(Instant::now() < deadline, "the program did not start");
        tokio::time::sleep(Duration::from_millis(20)).await;
    };
    client.notify("notifications/cancelled", json!({"requestId": 77, "reason": "changed my mind"})).await;
    assert!(gone(child).await, "the cancelled call's child is killed with its group");
    drop(answer);
}

#[tokio::test]
async fn a_broken_folder_is_refused_with_every_problem_and_its_file() {
    let folder = Scratch::new("broken");
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

/// The next notification of `method`, waiting at most five seconds.
async fn next_of(client: &InMemoryClient, method: &str) -> Option<Value> {
    let deadline = Instant::now() + Duration::from_secs(5);
    while Instant::now() < deadline {
        if let Some(notification) = client.next_notification(Duration::from_millis(200)).await
            && notification["method"] == method
        {
            return Some(notification);
        }
    }
    None
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
    let updated = next_of(&client, "notifications/resources/updated").await.expect("the subscriber is told");
    assert_eq!(updated["params"]["uri"], "docs://guide.md");
    let read = client.request("resources/read", json!({"uri": "docs://guide.md"})).await.unwrap();
    assert_eq!(read["contents"][0]["text"], "# Guide, edited\n");

    folder.write("prompts/new.md", "A new prompt.\n");
    assert!(next_of(&client, "notifications/prompts/list_changed").await.is_some());
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
    folder.write("wharf.toml", &TOOLS.replace("name = \"fail\"", "name = \"fails\""));
    assert!(next_of(&client, "notifications/tools/list_changed").await.is_some());
    let tools = client.request("tools/list", json!({})).await.unwrap();
    let names: Vec<&str> =
        tools["tools"].as_array().unwrap().iter().map(|tool| tool["name"].as_str().unwrap()).collect();
    assert!(names.contains(&"fails") && !names.contains(&"fail"), "{names:?}");
    folder.write("skills/notes/references/how.md", "How, edited.\n");
    tokio::time::sleep(Duration::from_millis(800)).await;
    let skill = client.request("skills/get", json!({"uri": "skill://notes/SKILL.md"})).await.unwrap();
    let how = skill["skill"]["resources"]
        .as_array()
        .unwrap()
        .iter()
        .find(|file| file["uri"] == "skill://notes/references/how.md")
        .cloned();
    assert_eq!(how.unwrap()["size"], "How, edited.\n".len(), "re-hashed after the change");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_watched_folder_offers_every_kind_from_the_start_and_sessions_see_what_it_gains() {
    let folder = Scratch::new("gains");
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
    assert!(next_of(&client, "notifications/prompts/list_changed").await.is_some());
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
    assert!(next_of(&client, "notifications/resources/list_changed").await.is_some());
    let skills = client.request("skills/list", json!({})).await.unwrap();
    assert_eq!(skills["skills"][0]["frontmatter"]["name"], "later", "{skills}");

    folder
        .write("wharf.toml", "[server]\nname = \"gains\"\n\n[[tools]]\nname = \"hi\"\ncommand = [\"echo\", \"hi\"]\n");
    assert!(next_of(&client, "notifications/tools/list_changed").await.is_some());
    let said = client.request("tools/call", json!({"name": "hi", "arguments": {}})).await.unwrap();
    assert_eq!(text(&said).trim(), "hi");
}
