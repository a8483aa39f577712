//! `wharf login` takes the time the person needs (issue 38, item 8): a browser slower than
//! the request deadline still completes the login, with one browser and one authorization;
//! and a local process that connects to the loopback callback port and sends nothing does
//! not hold the real callback back. The server and its authorization server are
//! `fixtures/oauth_server.py`, the browser `fixtures/slow_browser.py`.
#![cfg(unix)]

use std::io::{BufRead, BufReader, Read};
use std::path::Path;
use std::process::{Command, Stdio};
use std::time::Duration;

use wharf_testkit::eventually::eventually_blocking;
use wharf_testkit::process::Process;
use wharf_testkit::temp_dir::TempDir;

fn fixture(name: &str) -> String {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures").join(name).display().to_string()
}

/// Starts the server that wants a token (killed when dropped); its `/mcp` URL.
fn guarded_server() -> (Process, String) {
    let mut server = Process::spawn(Command::new("python3").arg(fixture("oauth_server.py")).stdout(Stdio::piped()));
    let mut port = String::new();
    BufReader::new(server.child.stdout.take().unwrap()).read_line(&mut port).unwrap();
    (server, format!("http://127.0.0.1:{}/mcp", port.trim()))
}

#[test]
fn a_browser_slower_than_the_deadline_and_a_silent_connection_to_the_callback_do_not_stop_a_login() {
    let (_server, url) = guarded_server();
    let scratch = TempDir::new("login-wait");
    let log = scratch.path().join("browser.log");
    // The request deadline is one second; the person takes two and a half.
    let mut login = Process::spawn(
        Command::new(env!("CARGO_BIN_EXE_wharf"))
            .args(["login", &url, "--timeout", "1", "--client-id", "wharf-test", "--tokens"])
            .arg(scratch.path().join("tokens.json"))
            .env("BROWSER", format!("python3 '{}'", fixture("slow_browser.py").replace('\'', r"'\''")))
            .env("SLOW_BROWSER_SECONDS", "2.5")
            .env("WHARF_TEST_BROWSER_LOG", &log)
            .env_remove("WHARF_BEARER_TOKEN")
            .env_remove("WHARF_CLIENT_ID")
            .env_remove("WHARF_CLIENT_SECRET")
            .stdin(Stdio::null())
            .stdout(Stdio::piped()),
    );
    // What it prints is short: it fits in the pipe, read once it has ended.
    let mut printed = login.child.stdout.take().unwrap();
    let (code, stderr) = login.wait_within(Duration::from_secs(40));
    let mut stdout = String::new();
    printed.read_to_string(&mut stdout).unwrap();
    assert_eq!(code, Some(0), "{stdout}\n{stderr}");
    assert!(stdout.contains(&format!("Logged in to {url}")), "{stdout}");
    assert_eq!(stderr.matches("to authorize, open this address").count(), 1, "one authorization: {stderr}");
    // The callback was answered before the login's port gave up on the silent connection (10
    // seconds): it was not served after it.
    let visits = eventually_blocking("the browser's visit to be logged", Duration::from_secs(10), || {
        std::fs::read_to_string(&log).ok().filter(|visits| visits.ends_with('\n'))
    });
    let (status, seconds) = visits.trim().split_once(' ').unwrap_or_else(|| panic!("one visit: {visits:?}"));
    assert_eq!(status, "200", "{visits}");
    assert!(seconds.parse::<f64>().unwrap() < 10.0, "answered {seconds} s after the silent connection");
}
