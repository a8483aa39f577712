//! `wharf serve --unix PATH` on the wire, in raw HTTP bytes over the socket: the file made
//! owner-only in an owner-only directory, requests acting for the connecting user (its uid, gid
//! and pid), `Host` and `Origin` still checked, `wharf call unix:PATH` served, a live socket
//! kept from a second server and a stale one replaced, the file removed on shutdown, and a user
//! outside `--unix-allow-uid` refused. Run as root with `--ignored`, a second local user, made
//! by the test, is refused by the file's mode, then by its uid, and let in when allowed.

use std::io::{Read, Write};
use std::os::unix::fs::{MetadataExt, PermissionsExt};
use std::os::unix::net::UnixStream;
use std::path::Path;
use std::process::{Command, Stdio};
use std::time::Duration;

use serde_json::{Value, json};
use wharf_testkit::process::Process;
use wharf_testkit::raw_http::{JSON, Reply, parse, request_bytes};
use wharf_testkit::temp_dir::TempDir;

const WHARF: &str = env!("CARGO_BIN_EXE_wharf");

/// `wharf serve --unix PATH EXTRA...`, once its banner says it listens.
fn serve(path: &Path, extra: &[&str]) -> Process {
    let mut process = Process::spawn(
        Command::new(WHARF)
            .args(["serve", "--unix"])
            .arg(path)
            .args(extra)
            .env_remove("RUST_LOG")
            .stdin(Stdio::null())
            .stdout(Stdio::null()),
    );
    process.wait_for(&format!("at unix:{} (Streamable HTTP)", path.display()));
    process
}

/// One request over the socket, and the whole response.
fn exchange(path: &Path, method: &str, headers: &[(&str, &str)], body: &str) -> Reply {
    let mut stream = UnixStream::connect(path).unwrap_or_else(|err| panic!("{}: {err}", path.display()));
    stream.set_read_timeout(Some(Duration::from_secs(10))).unwrap();
    stream.write_all(request_bytes(0, method, "/mcp", headers, body).as_bytes()).unwrap();
    let mut raw = Vec::new();
    stream.read_to_end(&mut raw).unwrap();
    parse(&raw)
}

fn post(path: &Path, headers: &[(&str, &str)], message: &Value) -> Reply {
    let mut all = JSON.to_vec();
    all.extend_from_slice(headers);
    exchange(path, "POST", &all, &message.to_string())
}

/// A stateless 2026-07-28 `tools/call` of `tool`, as raw headers and body.
fn stateless_call(tool: &str) -> (Vec<(&str, &str)>, Value) {
    let headers = vec![("mcp-protocol-version", "2026-07-28"), ("mcp-method", "tools/call"), ("mcp-name", tool)];
    let call = json!({"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {"name": tool, "arguments": {},
        "_meta": {"io.modelcontextprotocol/protocolVersion": "2026-07-28", "io.modelcontextprotocol/clientCapabilities": {}}}});
    (headers, call)
}

fn text(reply: &Reply) -> String {
    let answer = if reply.body.starts_with('{') { reply.json() } else { reply.events().pop().unwrap() };
    answer["result"]["content"][0]["text"].as_str().unwrap_or_else(|| panic!("{answer}")).to_owned()
}

fn stop(process: Process) {
    process.signal("TERM");
    let (code, stderr) = process.wait_within(Duration::from_secs(10));
    assert_eq!(code, Some(0), "{stderr}");
}

#[test]
fn a_socket_server_answers_its_owner_as_the_connecting_user_and_cleans_up() {
    let dir = TempDir::new("unix");
    let socket = dir.join("run/mcp.sock");
    let server = serve(&socket, &[]);
    let mode = |path: &Path| std::fs::metadata(path).unwrap().permissions().mode() & 0o777;
    assert_eq!((mode(&socket), mode(&dir.join("run"))), (0o600, 0o700));
    let uid = std::fs::metadata(&socket).unwrap().uid();

    // A 2025 session: the principal is the connecting user, with this process's pid.
    let initialize = json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {"protocolVersion": "2025-11-25",
        "capabilities": {}, "clientInfo": {"name": "wire", "version": "1"}}});
    let opened = post(&socket, &[], &initialize);
    assert_eq!(opened.status, 200, "{opened:?}");
    let session = opened.header("mcp-session-id").unwrap().to_owned();
    let in_session = [("mcp-session-id", session.as_str()), ("mcp-protocol-version", "2025-11-25")];
    post(&socket, &in_session, &json!({"jsonrpc": "2.0", "method": "notifications/initialized"}));
    let call =
        json!({"jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": {"name": "whoami", "arguments": {}}});
    let whoami = text(&post(&socket, &in_session, &call));
    assert!(whoami.starts_with(&format!("unix:uid:{uid} ")), "{whoami}");
    let claims: Value = serde_json::from_str(whoami.split_once(' ').unwrap().1).unwrap();
    assert_eq!(claims["uid"], uid);
    assert_eq!(claims["pid"], std::process::id());
    // Stateless, the same user.
    let (headers, call) = stateless_call("whoami");
    assert!(text(&post(&socket, &headers, &call)).starts_with(&format!("unix:uid:{uid} ")));

    // DNS rebinding cannot reach a socket, but the checks stay on for what forwards to it.
    let (mut foreign, call) = stateless_call("echo");
    foreign.push(("host", "evil.example"));
    assert_eq!(post(&socket, &foreign, &call).status, 403);
    let (mut page, call) = stateless_call("echo");
    page.push(("origin", "http://evil.example"));
    assert_eq!(post(&socket, &page, &call).status, 403);

    // Wharf's own client, and a second server kept off a live socket.
    let target = format!("unix:{}", socket.display());
    let called = Command::new(WHARF).args(["call", &target, "echo", "message=over the socket"]).output().unwrap();
    assert_eq!(String::from_utf8_lossy(&called.stdout).trim(), "over the socket", "{called:?}");
    let second = Command::new(WHARF).args(["serve", "--unix"]).arg(&socket).output().unwrap();
    assert!(!second.status.success());
    assert!(String::from_utf8_lossy(&second.stderr).contains("already listens"), "{second:?}");

    stop(server);
    assert!(!socket.exists(), "the socket file is removed on shutdown");
}

#[test]
fn a_stale_socket_is_replaced_and_a_user_not_allowed_is_refused() {
    let dir = TempDir::new("unix-stale");
    let socket = dir.join("mcp.sock");
    let killed = serve(&socket, &[]);
    killed.signal("KILL");
    let _ = killed.wait_within(Duration::from_secs(10));
    assert!(socket.exists(), "a killed server leaves its socket file");
    let uid = std::fs::metadata(&socket).unwrap().uid();
    let someone_else = (uid + 4242).to_string();
    let guarded = serve(&socket, &["--unix-allow-uid", &someone_else]);
    let (headers, call) = stateless_call("echo");
    let refused = post(&socket, &headers, &call);
    assert_eq!(refused.status, 403, "{refused:?}");
    assert!(refused.body.contains(&format!("the user {uid} is not allowed")), "{refused:?}");
    stop(guarded);
    let allowed = serve(&socket, &["--unix-allow-uid", &someone_else, "--unix-allow-uid", &uid.to_string()]);
    assert_eq!(post(&socket, &headers, &call).status, 200);
    stop(allowed);
}

/// A local user made for the test, deleted when dropped.
struct LocalUser {
    name: String,
}

impl LocalUser {
    fn create() -> LocalUser {
        let name = format!("wharf-peer-{}", std::process::id());
        let made = Command::new("useradd")
            .args(["--system", "--no-create-home", "--shell", "/usr/sbin/nologin", &name])
            .status()
            .expect("useradd");
        assert!(made.success(), "useradd {name}");
        LocalUser { name }
    }

    /// The status line and body of a stateless `whoami` the user sends over the socket, with
    /// the system's python3 (the test's own binaries may be in a directory the user cannot
    /// enter): `refused: ...` when the socket cannot be opened.
    fn whoami(&self, socket: &Path) -> String {
        const SCRIPT: &str = r#"
import socket, sys
body = sys.argv[2].encode()
head = ("POST /mcp HTTP/1.1\r\nhost: localhost\r\nconnection: close\r\ncontent-type: application/json\r\n"
        "accept: application/json, text/event-stream\r\nmcp-protocol-version: 2026-07-28\r\n"
        "mcp-method: tools/call\r\nmcp-name: whoami\r\ncontent-length: %d\r\n\r\n" % len(body)).encode()
try:
    s = socket.socket(socket.AF_UNIX)
    s.connect(sys.argv[1])
except OSError as err:
    print("refused:", err.strerror)
    sys.exit(0)
s.sendall(head + body)
answer = b""
while chunk := s.recv(65536):
    answer += chunk
print(answer.decode())
"#;
        let (_, call) = stateless_call("whoami");
        let output = Command::new("runuser")
            .args(["-u", &self.name, "--", "python3", "-c", SCRIPT])
            .arg(socket)
            .arg(call.to_string())
            .output()
            .expect("runuser");
        assert!(output.status.success(), "{output:?}");
        String::from_utf8_lossy(&output.stdout).into_owned()
    }

    fn uid(&self) -> u32 {
        let id = Command::new("id").args(["-u", &self.name]).output().unwrap();
        String::from_utf8_lossy(&id.stdout).trim().parse().unwrap()
    }
}

impl Drop for LocalUser {
    fn drop(&mut self) {
        let _ = Command::new("userdel").arg(&self.name).status();
    }
}

#[test]
#[ignore = "needs root: creates a local user (scripts/test runs it)"]
fn another_local_user_is_refused_by_the_mode_then_by_the_uid_and_let_in_when_allowed() {
    let user = LocalUser::create();
    let dir = TempDir::new("unix-users");
    std::fs::set_permissions(dir.path(), std::fs::Permissions::from_mode(0o755)).unwrap();
    let socket = dir.join("mcp.sock");
    let owner = std::fs::metadata(dir.path()).unwrap().uid().to_string();

    let server = serve(&socket, &["--unix-allow-uid", &owner]);
    let by_mode = user.whoami(&socket);
    assert!(by_mode.starts_with("refused: Permission denied"), "{by_mode}");
    // An operator opens the file to others; the uid check still keeps them out.
    std::fs::set_permissions(&socket, std::fs::Permissions::from_mode(0o666)).unwrap();
    let by_uid = user.whoami(&socket);
    assert!(by_uid.starts_with("HTTP/1.1 403"), "{by_uid}");
    assert!(by_uid.contains(&format!("the user {} is not allowed", user.uid())), "{by_uid}");
    stop(server);

    let server = serve(&socket, &["--unix-allow-uid", &owner, "--unix-allow-uid", &user.uid().to_string()]);
    std::fs::set_permissions(&socket, std::fs::Permissions::from_mode(0o666)).unwrap();
    let allowed = user.whoami(&socket);
    assert!(allowed.starts_with("HTTP/1.1 200"), "{allowed}");
    assert!(allowed.contains(&format!("unix:uid:{} ", user.uid())), "{allowed}");
    stop(server);
}
