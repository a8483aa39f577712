//! What `wharf` does with a hostile server (`fixtures/hostile_server.py`, over stdio): a flood
//! of server-to-client requests while it stops reading (issue 38, item 7), terminal escape
//! sequences in everything it sends (item 9), schemas that ask `wharf check` for a million
//! characters (item 13), and binary content saved where a symlink was planted (item 14).
#![cfg(unix)]

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use wharf_testkit::temp_dir::TempDir;

const WHARF: &str = env!("CARGO_BIN_EXE_wharf");

fn fixture(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures").join(name)
}

/// What one run of `wharf` did, and the most memory it held while it ran.
struct Run {
    code: Option<i32>,
    stdout: String,
    stderr: String,
    took: Duration,
    peak_rss_kib: u64,
}

/// The resident memory of process `pid` in KiB, from /proc.
fn rss_kib(pid: u32) -> Option<u64> {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).ok()?;
    let line = status.lines().find(|line| line.starts_with("VmRSS:"))?;
    line.split_whitespace().nth(1)?.parse().ok()
}

/// Runs `wharf ARGS -- python3 hostile_server.py ATTACK` with `env`, stdin not a terminal,
/// sampling its memory; killed (and the test failed) past `deadline` or `max_rss_kib`.
fn wharf(scratch: &TempDir, args: &[&str], attack: &str, env: &[(&str, &str)], deadline: Duration) -> Run {
    wharf_limited(scratch, args, attack, env, deadline, u64::MAX)
}

fn wharf_limited(
    scratch: &TempDir,
    args: &[&str],
    attack: &str,
    env: &[(&str, &str)],
    deadline: Duration,
    max_rss_kib: u64,
) -> Run {
    let (out, err) = (scratch.path().join("stdout"), scratch.path().join("stderr"));
    let started = Instant::now();
    let mut child = Command::new(WHARF)
        .args(args)
        .args(["--", "python3"])
        .arg(fixture("hostile_server.py"))
        .arg(attack)
        .envs(env.iter().copied())
        .env_remove("WHARF_BEARER_TOKEN")
        .stdin(Stdio::null())
        .stdout(std::fs::File::create(&out).unwrap())
        .stderr(std::fs::File::create(&err).unwrap())
        .spawn()
        .unwrap();
    let mut peak_rss_kib = 0;
    let status = loop {
        if let Some(status) = child.try_wait().unwrap() {
            break status;
        }
        peak_rss_kib = peak_rss_kib.max(rss_kib(child.id()).unwrap_or(0));
        if started.elapsed() > deadline || peak_rss_kib > max_rss_kib {
            let _ = child.kill();
            let _ = child.wait();
            panic!(
                "wharf {args:?} ran {:?} and held {peak_rss_kib} KiB: killed; stderr: {}",
                started.elapsed(),
                std::fs::read_to_string(&err).unwrap_or_default()
            );
        }
        std::thread::sleep(Duration::from_millis(20));
    };
    Run {
        code: status.code(),
        stdout: std::fs::read_to_string(out).unwrap(),
        stderr: std::fs::read_to_string(err).unwrap(),
        took: started.elapsed(),
        peak_rss_kib,
    }
}

/// The line the flooding server appended to its report: how many pings it wrote, and whether
/// the client stopped reading them.
fn flood_report(scratch: &TempDir) -> (u64, bool) {
    let report = std::fs::read_to_string(scratch.path().join("report")).unwrap_or_default();
    let line = report.lines().next().unwrap_or_else(|| panic!("the server reported nothing"));
    let value = |key: &str| line.split_whitespace().find_map(|pair| pair.strip_prefix(key)).unwrap_or_default();
    (value("written=").parse().unwrap(), value("blocked=") == "True")
}

#[test]
fn a_server_that_floods_requests_and_stops_reading_is_held_back_and_the_call_times_out() {
    let scratch = TempDir::new("hostile-flood");
    let report = scratch.path().join("report");
    let env = [
        ("HOSTILE_REPORT", report.to_str().unwrap()),
        ("HOSTILE_FLOOD_PINGS", "100000"),
        ("HOSTILE_STALL_SECONDS", "1"),
    ];
    let run = wharf(&scratch, &["call", "flood", "--timeout", "2"], "flood", &env, Duration::from_secs(30));
    assert_eq!(run.code, Some(3), "{}", run.stderr);
    assert!(run.stderr.contains("no answer to `tools/call`"), "{}", run.stderr);
    // The client stopped reading once its answers could not be written: the server's pings
    // wait in the pipe, not in the client's memory.
    let (written, blocked) = flood_report(&scratch);
    assert!(blocked && written < 50_000, "the client read {written} pings it could not answer");
    eprintln!("flood: {written} pings written before the client stopped reading; peak {} KiB", run.peak_rss_kib);
}

/// The long flood of the attack script: pings for twenty seconds, the client's memory sampled.
/// Run with `cargo test -p wharf-cli --test hostile_server -- --ignored flood_for_twenty`.
#[test]
#[ignore = "floods for twenty seconds: run by scripts/attack"]
fn a_flood_for_twenty_seconds_leaves_the_clients_memory_flat() {
    let scratch = TempDir::new("hostile-long-flood");
    let report = scratch.path().join("report");
    let env = [
        ("HOSTILE_REPORT", report.to_str().unwrap()),
        ("HOSTILE_FLOOD_PINGS", "1000000000"),
        ("HOSTILE_FLOOD_SECONDS", "20"),
        ("HOSTILE_STALL_SECONDS", "30"),
    ];
    let args = ["call", "flood", "--timeout", "21"];
    let run = wharf_limited(&scratch, &args, "flood", &env, Duration::from_secs(60), 256 * 1024);
    assert_eq!(run.code, Some(3), "{}", run.stderr);
    let (written, _) = flood_report(&scratch);
    eprintln!(
        "twenty-second flood: {written} pings written, wharf call's peak resident memory {} KiB, ended after {:?}",
        run.peak_rss_kib, run.took
    );
    assert!(run.peak_rss_kib < 64 * 1024, "peak {} KiB", run.peak_rss_kib);
}

/// Runs `wharf ARGS -- python3 hostile_server.py ATTACK` on a pseudo-terminal
/// (`fixtures/at_terminal.py`); what the terminal showed.
fn at_terminal(args: &[&str], attack: &str) -> (Option<i32>, String) {
    let output = Command::new("python3")
        .arg(fixture("at_terminal.py"))
        .arg("[]")
        .arg("--")
        .arg(WHARF)
        .args(args)
        .args(["--", "python3"])
        .arg(fixture("hostile_server.py"))
        .arg(attack)
        .env_remove("WHARF_BEARER_TOKEN")
        .output()
        .unwrap();
    (output.status.code(), String::from_utf8_lossy(&output.stdout).replace("\r\n", "\n"))
}

/// The sequences the server hides in its text, none of which may reach a terminal as they are.
const RAW: [&str; 4] = ["\x1b]52;", "\x1b]0;pwned", "\rFORGED", "\x1b[2J"];

fn assert_escaped(shown: &str) {
    for raw in RAW {
        assert!(!shown.contains(raw), "{raw:?} reached the terminal: {shown:?}");
    }
    assert!(!shown.contains('\u{9b}'), "a C1 control reached the terminal: {shown:?}");
}

#[test]
fn names_descriptions_and_log_messages_from_a_server_are_escaped_on_a_terminal() {
    let (code, shown) = at_terminal(&["list"], "escapes");
    assert_eq!(code, Some(0), "{shown}");
    assert_escaped(&shown);
    assert!(shown.contains("evil\\u{1b}]52;c;ZXZpbA==\\u{7}"), "{shown}");
    assert!(shown.contains("safe\\rFORGED \\u{1b}[2J\\u{9b}2J"), "{shown}");

    let (code, shown) = at_terminal(&["call", "show"], "escapes");
    assert_eq!(code, Some(0), "{shown}");
    assert_escaped(&shown);
    assert!(shown.contains("log\\u{1b}]0;pwned\\u{7}: logged\\u{1b}]52;"), "the log message: {shown}");
    assert!(shown.contains("\\u{1b}]0;pwned\\u{7}hello\\rFORGED\\u{1b}]52;c;ZXZpbA==\\u{7}"), "the text: {shown}");
    assert!(shown.contains("\nsecond line\tend"), "line ends and tabs are the text's own: {shown}");
}

#[test]
fn a_tools_own_text_is_raw_when_asked_or_when_stdout_is_not_a_terminal() {
    let (code, shown) = at_terminal(&["call", "show", "--raw"], "escapes");
    assert_eq!(code, Some(0), "{shown}");
    assert!(shown.contains("\x1b]0;pwned\x07hello\rFORGED\x1b]52;c;ZXZpbA==\x07"), "{shown:?}");
    assert!(shown.contains("log\\u{1b}]0;pwned\\u{7}: logged"), "log messages stay escaped: {shown}");

    let scratch = TempDir::new("hostile-raw-pipe");
    let run = wharf(&scratch, &["call", "show"], "escapes", &[], Duration::from_secs(30));
    assert_eq!(run.code, Some(0), "{}", run.stderr);
    assert_eq!(run.stdout, "\x1b]0;pwned\x07hello\rFORGED\x1b]52;c;ZXZpbA==\x07\nsecond line\tend\n");
    assert!(run.stderr.contains("logged\\u{1b}]52;"), "{:?}", run.stderr);

    // A table is for a person wherever it goes; JSON escapes what JSON may.
    let listed = wharf(&scratch, &["list", "tools"], "escapes", &[], Duration::from_secs(30));
    assert_escaped(&listed.stdout);
    let json = wharf(&scratch, &["list", "tools", "--json"], "escapes", &[], Duration::from_secs(30));
    assert_escaped(&json.stdout);
    assert!(json.stdout.contains(r"FORGED \u001b[2J\u009b2J"), "{}", json.stdout);
    let tools: serde_json::Value = serde_json::from_str(&json.stdout).unwrap();
    assert_eq!(tools[1]["description"], "safe\rFORGED \x1b[2J\u{9b}2J", "the same value");
}

#[test]
fn a_symlink_planted_at_the_next_save_name_is_not_followed() {
    let scratch = TempDir::new("hostile-save");
    let victim = scratch.path().join("victim");
    std::fs::write(&victim, "precious").unwrap();
    std::os::unix::fs::symlink(&victim, scratch.path().join("snap-1.png")).unwrap();
    // A link to where nothing is yet must not make it either.
    let absent = scratch.path().join("absent");
    std::os::unix::fs::symlink(&absent, scratch.path().join("snap-2.png")).unwrap();
    let dir = scratch.path().to_str().unwrap().to_owned();
    let run = wharf(&scratch, &["call", "snap", "--save-dir", &dir], "image", &[], Duration::from_secs(30));
    assert_eq!(run.code, Some(0), "{}", run.stderr);
    assert_eq!(std::fs::read_to_string(&victim).unwrap(), "precious");
    assert!(!absent.exists(), "the dangling link's target was created");
    let saved = scratch.path().join("snap-3.png");
    assert_eq!(std::fs::read(&saved).unwrap(), b"hello");
    assert!(run.stdout.contains(&format!("saved to {}", saved.display())), "{}", run.stdout);
}

#[test]
fn wharf_check_caps_what_it_makes_from_a_schema_and_ends_within_its_timeout() {
    let scratch = TempDir::new("hostile-check");
    let run = wharf(&scratch, &["check", "--json", "--timeout", "5"], "huge", &[], Duration::from_secs(60));
    assert!(run.took < Duration::from_secs(5), "wharf check took {:?}", run.took);
    let report: serde_json::Value =
        serde_json::from_str(&run.stdout).unwrap_or_else(|err| panic!("{err}: {}", run.stderr));
    let checks = report["checks"].as_array().unwrap();
    for tool in ["long_text", "many_items"] {
        let call = checks
            .iter()
            .find(|check| check["name"].as_str().is_some_and(|name| name.ends_with(&format!("{tool}: call"))))
            .unwrap_or_else(|| panic!("no call check of {tool}: {report:#}"));
        assert_eq!(call["outcome"], "skip", "{call}");
        assert!(call["detail"].as_str().unwrap().contains("capped"), "{call}");
    }
}
