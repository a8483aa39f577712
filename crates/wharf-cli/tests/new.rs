//! `wharf new`: the crate it writes (its `cargo test` runs in `scripts/test`), the folder it
//! writes served by `wharf serve`, and what it refuses.

use std::process::{Command, Output};

use wharf_testkit::temp_dir::TempDir;

/// Runs `wharf ARGS` in `dir`.
fn wharf(dir: &TempDir, args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_wharf")).args(args).current_dir(dir.path()).output().unwrap()
}

#[test]
fn a_crate_with_a_tool_a_prompt_a_resource_a_test_and_the_client_configuration() {
    let dir = TempDir::new("new-crate");
    let wharf_crate = concat!(env!("CARGO_MANIFEST_DIR"), "/../wharf");
    let made = wharf(&dir, &["new", "my-server", "--wharf-path", wharf_crate]);
    assert!(made.status.success(), "{}", String::from_utf8_lossy(&made.stderr));
    let manifest = dir.read("my-server/Cargo.toml");
    assert!(manifest.contains("name = \"my-server\"") && manifest.contains("wharf = { path = \"/"), "{manifest}");
    let lib = dir.read("my-server/src/lib.rs");
    assert!(lib.contains("#[tool(") && lib.contains("#[prompt(") && lib.contains("ResourceDef::text"), "{lib}");
    assert!(dir.read("my-server/src/main.rs").contains("serve_stdio(my_server::server()?)"));
    assert!(dir.read("my-server/tests/server.rs").contains("InMemoryClient::stateless"));
    let readme = dir.read("my-server/README.md");
    assert!(
        readme.contains("\"mcpServers\"") && readme.contains("wharf install claude-desktop my-server -- /"),
        "{readme}"
    );
    assert!(!readme.contains("{{"), "every placeholder filled: {readme}");

    let http = wharf(&dir, &["new", "web", "--http"]);
    assert!(http.status.success());
    assert!(dir.read("web/src/main.rs").contains("serve_http(listener, web::server()?)"));
    let sources = std::fs::canonicalize(concat!(env!("CARGO_MANIFEST_DIR"), "/../wharf")).unwrap();
    let dependency = format!("wharf = {{ path = {} }}", serde_json::to_string(&sources.to_string_lossy()).unwrap());
    assert!(dir.read("web/Cargo.toml").contains(&dependency), "without --wharf-path, the sources it was built from");
    assert!(String::from_utf8_lossy(&http.stdout).contains(&format!("It depends on {dependency}.")));
    assert!(dir.read("web/README.md").contains("--url http://127.0.0.1:8080/mcp"));

    // A tool with an MCP Apps view (`cargo test` in it runs in scripts/first-steps).
    let app = wharf(&dir, &["new", "poll", "--app", "--wharf-path", wharf_crate]);
    assert!(app.status.success(), "{}", String::from_utf8_lossy(&app.stderr));
    assert!(dir.read("poll/Cargo.toml").contains(", features = [\"apps\"] }"), "{}", dir.read("poll/Cargo.toml"));
    let lib = dir.read("poll/src/lib.rs");
    assert!(lib.contains("ui = \"ui://poll/counter\"") && lib.contains("visibility = [\"app\"]"), "{lib}");
    assert!(dir.read("poll/src/view.html").contains("ui/initialize"));
    assert!(dir.read("poll/tests/server.rs").contains("poll::server()"));
    let readme = dir.read("poll/README.md");
    assert!(readme.contains("show_counter") && !readme.contains("{{"), "{readme}");
    let folder_app = wharf(&dir, &["new", "both", "--app", "--folder"]);
    assert_eq!(folder_app.status.code(), Some(2), "--app is a crate's");

    let again = wharf(&dir, &["new", "my-server"]);
    assert_eq!(again.status.code(), Some(2), "an existing, non-empty directory is left alone");
    assert!(String::from_utf8_lossy(&again.stderr).contains("not empty"));
    let bad = wharf(&dir, &["new", "9lives"]);
    assert_eq!(bad.status.code(), Some(2));
}

#[test]
fn a_folder_that_wharf_serve_serves() {
    let dir = TempDir::new("new-folder");
    assert!(wharf(&dir, &["new", "notes", "--folder"]).status.success());
    let binary = env!("CARGO_BIN_EXE_wharf");
    let listed = wharf(&dir, &["list", "--json", "--", binary, "serve", "notes"]);
    assert!(listed.status.success(), "{}", String::from_utf8_lossy(&listed.stderr));
    let listed: serde_json::Value = serde_json::from_slice(&listed.stdout).unwrap();
    let names = |kind: &str, key: &str| -> Vec<String> {
        listed[kind].as_array().unwrap().iter().map(|item| item[key].as_str().unwrap().to_owned()).collect()
    };
    assert_eq!(names("tools", "name"), ["today"]);
    assert_eq!(names("prompts", "name"), ["greet"]);
    assert_eq!(names("resources", "uri"), ["notes://notes.md", "skill://getting-started/SKILL.md"]);
    let called = wharf(&dir, &["call", "today", "format=%Y", "--", binary, "serve", "notes"]);
    assert!(called.status.success(), "{}", String::from_utf8_lossy(&called.stderr));
    assert_eq!(String::from_utf8_lossy(&called.stdout).trim().len(), 4, "a year");
}
