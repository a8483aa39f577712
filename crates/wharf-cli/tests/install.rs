//! `wharf install` against temporary home directories: each client's file in its place and
//! shape, merged with what is there (other servers and members kept in order, a same-named
//! entry replaced), the backup, `--dry-run`, project scope, and files it must not touch.

use std::path::Path;
use std::process::{Command, Output};

use serde_json::{Value, json};
use wharf_testkit::temp_dir::TempDir;

/// A temporary home, with a `work` directory to run from.
fn home(name: &str) -> TempDir {
    let home = TempDir::new(&format!("install-{name}"));
    std::fs::create_dir_all(home.path().join("work")).unwrap();
    home
}

/// Runs `wharf install ARGS` with `home` as HOME, from its `work` directory.
fn install(home: &TempDir, args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_wharf"))
        .arg("install")
        .args(args)
        .env("HOME", home.path())
        .env_remove("XDG_CONFIG_HOME")
        .env_remove("APPDATA")
        .current_dir(home.path().join("work"))
        .output()
        .unwrap()
}

/// The JSON file at `path` in `home`.
fn json_at(home: &TempDir, path: &str) -> Value {
    serde_json::from_str(&home.read(path)).unwrap()
}

fn stdout(output: &Output) -> String {
    String::from_utf8_lossy(&output.stdout).into_owned()
}

fn stderr(output: &Output) -> String {
    String::from_utf8_lossy(&output.stderr).into_owned()
}

#[test]
fn each_client_gets_its_own_file_and_shape() {
    let home = home("shapes");
    let local = ["--", "/usr/local/bin/my-server", "--verbose"];
    for (client, file, key, typed) in [
        ("claude-code", ".claude.json", "mcpServers", true),
        ("claude-desktop", ".config/Claude/claude_desktop_config.json", "mcpServers", false),
        ("cursor", ".cursor/mcp.json", "mcpServers", false),
        ("vscode", ".config/Code/User/mcp.json", "servers", true),
    ] {
        let mut args = vec![client, "mine", "--env", "TOKEN=abc"];
        args.extend(local);
        let done = install(&home, &args);
        assert!(done.status.success(), "{client}: {}", stderr(&done));
        let mut expected =
            json!({"command": "/usr/local/bin/my-server", "args": ["--verbose"], "env": {"TOKEN": "abc"}});
        if typed {
            expected["type"] = json!("stdio");
        }
        assert_eq!(json_at(&home, file)[key]["mine"], expected, "{client}");
        assert!(stdout(&done).contains("+  \"command\": \"/usr/local/bin/my-server\""), "{}", stdout(&done));
    }
    for (client, file, expected) in [
        ("claude-code", ".claude.json", json!({"type": "http", "url": "https://mcp.example.com/mcp"})),
        ("cursor", ".cursor/mcp.json", json!({"url": "https://mcp.example.com/mcp"})),
        ("vscode", ".config/Code/User/mcp.json", json!({"type": "http", "url": "https://mcp.example.com/mcp"})),
    ] {
        let done = install(&home, &[client, "remote", "--url", "https://mcp.example.com/mcp"]);
        assert!(done.status.success(), "{client}: {}", stderr(&done));
        let key = if client == "vscode" { "servers" } else { "mcpServers" };
        assert_eq!(json_at(&home, file)[key]["remote"], expected, "{client}");
    }
    let refused = install(&home, &["claude-desktop", "remote", "--url", "https://mcp.example.com/mcp"]);
    assert_eq!(refused.status.code(), Some(2));
    assert!(stderr(&refused).contains("Connectors"), "{}", stderr(&refused));
}

#[test]
fn what_is_there_is_kept_backed_up_and_replaced_only_by_name() {
    let home = home("merge");
    let before = "{\n  \"zeta\": 1,\n  \"mcpServers\": {\n    \"other\": {\"command\": \"x\"},\n    \"mine\": {\"command\": \"old\"}\n  },\n  \"alpha\": [true]\n}\n";
    home.write(".cursor/mcp.json", before);
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        std::fs::set_permissions(home.path().join(".cursor/mcp.json"), std::fs::Permissions::from_mode(0o600)).unwrap();
    }
    let dry = install(&home, &["cursor", "mine", "--dry-run", "--", "new-server"]);
    assert!(dry.status.success());
    assert!(
        stdout(&dry).contains("-  \"command\": \"old\"") && stdout(&dry).contains("+  \"command\": \"new-server\"")
    );
    assert_eq!(home.read(".cursor/mcp.json"), before, "--dry-run writes nothing");

    let done = install(&home, &["cursor", "mine", "--", "new-server"]);
    assert!(done.status.success(), "{}", stderr(&done));
    let text = home.read(".cursor/mcp.json");
    let order: Vec<usize> = ["\"zeta\"", "\"mcpServers\"", "\"other\"", "\"mine\"", "\"alpha\""]
        .iter()
        .map(|key| text.find(key).unwrap())
        .collect();
    assert!(order.windows(2).all(|pair| pair[0] < pair[1]), "members keep their order: {text}");
    let config: Value = serde_json::from_str(&text).unwrap();
    assert_eq!(config["mcpServers"]["other"], json!({"command": "x"}));
    assert_eq!(config["mcpServers"]["mine"], json!({"command": "new-server", "args": []}));
    assert_eq!(home.read(".cursor/mcp.json.wharf-backup"), before);
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        let mode = std::fs::metadata(home.path().join(".cursor/mcp.json")).unwrap().permissions().mode() & 0o777;
        assert_eq!(mode, 0o600, "the file keeps its permissions");
    }
    let again = install(&home, &["cursor", "mine", "--", "new-server"]);
    assert!(stdout(&again).contains("Nothing to change"), "{}", stdout(&again));
}

#[test]
fn project_scope_and_relative_paths() {
    let home = home("project");
    home.write("work/server.py", "print('hi')\n");
    let done = install(&home, &["claude-code", "py", "--scope", "project", "--", "python3", "server.py", "-v"]);
    assert!(done.status.success(), "{}", stderr(&done));
    let entry = &json_at(&home, "work/.mcp.json")["mcpServers"]["py"];
    assert_eq!(entry["command"], "python3", "a bare program is looked up on PATH");
    let script = entry["args"][0].as_str().unwrap();
    assert!(Path::new(script).is_absolute() && script.ends_with("work/server.py"), "{script}");
    assert_eq!(entry["args"][1], "-v");
    assert!(install(&home, &["vscode", "py", "--scope", "project", "--", "./server.py"]).status.success());
    assert!(json_at(&home, "work/.vscode/mcp.json")["servers"]["py"]["command"].as_str().unwrap().starts_with('/'));
    assert!(!home.path().join(".claude.json").exists(), "the user's file is untouched");
}

#[test]
fn files_that_are_not_json_objects_are_left_alone() {
    let home = home("broken");
    for broken in ["{ not json", "[1, 2]", "{\"mcpServers\": 3}"] {
        home.write(".claude.json", broken);
        let refused = install(&home, &["claude-code", "mine", "--", "x"]);
        assert_eq!(refused.status.code(), Some(1), "{broken}");
        assert!(stderr(&refused).contains("left as it is"), "{}", stderr(&refused));
        assert_eq!(home.read(".claude.json"), broken);
    }
    let nothing = install(&home, &["cursor", "mine"]);
    assert_eq!(nothing.status.code(), Some(2));
    let bad_env = install(&home, &["cursor", "mine", "--env", "NOEQUALS", "--", "x"]);
    assert_eq!(bad_env.status.code(), Some(2));
}

/// The mode bits of `path`, not following a link.
#[cfg(unix)]
fn mode(path: &Path) -> u32 {
    use std::os::unix::fs::PermissionsExt;
    std::fs::metadata(path).unwrap().permissions().mode() & 0o777
}

/// A cloned project holding `.mcp.json.wharf-backup -> hook`: the backup must not land in the
/// hook, nor make it executable (issue 38).
#[cfg(unix)]
#[test]
fn a_planted_backup_link_is_refused_and_what_it_names_is_untouched() {
    use std::os::unix::fs::{PermissionsExt, symlink};
    let home = home("backup-link");
    let project = home.path().join("work");
    home.write("work/.mcp.json", "{\"mcpServers\": {}}\n");
    std::fs::set_permissions(project.join(".mcp.json"), std::fs::Permissions::from_mode(0o755)).unwrap();
    home.write("hooks/pre-commit", "#!/bin/sh\necho original\n");
    std::fs::set_permissions(home.path().join("hooks/pre-commit"), std::fs::Permissions::from_mode(0o644)).unwrap();
    symlink(home.path().join("hooks/pre-commit"), project.join(".mcp.json.wharf-backup")).unwrap();

    let refused = install(&home, &["claude-code", "mine", "--scope", "project", "--", "x"]);
    assert_eq!(refused.status.code(), Some(1), "{}", stdout(&refused));
    assert!(
        stderr(&refused).contains(".mcp.json.wharf-backup") && stderr(&refused).contains("link"),
        "{}",
        stderr(&refused)
    );
    assert_eq!(home.read("hooks/pre-commit"), "#!/bin/sh\necho original\n");
    assert_eq!(mode(&home.path().join("hooks/pre-commit")), 0o644, "no mode is carried onto the link's target");
    assert_eq!(home.read("work/.mcp.json"), "{\"mcpServers\": {}}\n", "nothing is written");
    assert!(std::fs::symlink_metadata(project.join(".mcp.json.wharf-backup")).unwrap().file_type().is_symlink());
}

/// `.cursor -> elsewhere` and `.vscode -> elsewhere` in a project: nothing is written where
/// they point (issue 38).
#[cfg(unix)]
#[test]
fn a_project_directory_that_is_a_link_is_refused() {
    use std::os::unix::fs::symlink;
    let home = home("directory-link");
    let project = home.path().join("work");
    std::fs::create_dir_all(home.path().join("elsewhere")).unwrap();
    symlink(home.path().join("elsewhere"), project.join(".cursor")).unwrap();
    symlink(home.path().join("elsewhere"), project.join(".vscode")).unwrap();
    for client in ["cursor", "vscode"] {
        let refused = install(&home, &[client, "mine", "--scope", "project", "--", "x"]);
        assert_eq!(refused.status.code(), Some(1), "{client}: {}", stdout(&refused));
        assert!(stderr(&refused).contains("is a symbolic link"), "{client}: {}", stderr(&refused));
        assert!(std::fs::read_dir(home.path().join("elsewhere")).unwrap().next().is_none(), "{client}");
    }
}

/// A project's `.mcp.json` that is a link is refused with a message, never silently replaced
/// by a regular file, and what it names is untouched (issue 38).
#[cfg(unix)]
#[test]
fn a_project_config_that_is_a_link_is_refused() {
    use std::os::unix::fs::symlink;
    let home = home("config-link");
    let outside = "{\"mcpServers\": {\"kept\": {\"command\": \"y\"}}}\n";
    home.write("outside.json", outside);
    symlink(home.path().join("outside.json"), home.path().join("work/.mcp.json")).unwrap();
    let refused = install(&home, &["claude-code", "mine", "--scope", "project", "--", "x"]);
    assert_eq!(refused.status.code(), Some(1), "{}", stdout(&refused));
    assert!(stderr(&refused).contains(".mcp.json is a symbolic link"), "{}", stderr(&refused));
    assert_eq!(home.read("outside.json"), outside);
    assert!(std::fs::symlink_metadata(home.path().join("work/.mcp.json")).unwrap().file_type().is_symlink());
}

/// The user's `~/.claude.json` kept in a dotfiles repository behind a link: updated where the
/// link points, the link kept (issue 38).
#[cfg(unix)]
#[test]
fn a_user_config_that_is_a_link_is_updated_at_its_target() {
    use std::os::unix::fs::symlink;
    let home = home("dotfiles");
    home.write("dotfiles/claude.json", "{\"theme\": \"dark\"}\n");
    symlink(home.path().join("dotfiles/claude.json"), home.path().join(".claude.json")).unwrap();
    let done = install(&home, &["claude-code", "mine", "--", "/bin/x"]);
    assert!(done.status.success(), "{}", stderr(&done));
    assert!(std::fs::symlink_metadata(home.path().join(".claude.json")).unwrap().file_type().is_symlink());
    let config = json_at(&home, "dotfiles/claude.json");
    assert_eq!(config["theme"], "dark");
    assert_eq!(config["mcpServers"]["mine"]["command"], "/bin/x");
    assert!(stdout(&done).contains("dotfiles/claude.json"), "the message names where it wrote: {}", stdout(&done));
    assert_eq!(home.read(".claude.json.wharf-backup"), "{\"theme\": \"dark\"}\n");
    #[cfg(unix)]
    assert_eq!(mode(&home.path().join(".claude.json.wharf-backup")), 0o600, "a backup is its owner's only");
}

/// Installs running at once into one file each keep the others' entries (issue 38).
#[test]
fn installs_at_once_into_one_file_keep_every_entry() {
    let home = home("concurrent");
    home.write(".cursor/mcp.json", "{\"mcpServers\": {}}\n");
    let names: Vec<String> = (0..12).map(|index| format!("server-{index}")).collect();
    let running: Vec<_> = names
        .iter()
        .map(|name| {
            Command::new(env!("CARGO_BIN_EXE_wharf"))
                .args(["install", "cursor", name, "--", "/bin/x"])
                .env("HOME", home.path())
                .env_remove("XDG_CONFIG_HOME")
                .current_dir(home.path().join("work"))
                .stdout(std::process::Stdio::null())
                .stderr(std::process::Stdio::piped())
                .spawn()
                .unwrap()
        })
        .collect();
    for child in running {
        let output = child.wait_with_output().unwrap();
        assert!(output.status.success(), "{}", stderr(&output));
    }
    let config = json_at(&home, ".cursor/mcp.json");
    let kept: Vec<&String> = names.iter().filter(|name| config["mcpServers"].get(name.as_str()).is_some()).collect();
    assert_eq!(kept.len(), names.len(), "{config}");
}
