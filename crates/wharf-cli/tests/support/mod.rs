//! What the wire tests of the `wharf` binary share: a running `wharf serve --http` whose
//! stderr is read as it comes, and a temporary directory.

#![allow(dead_code, unreachable_pub, reason = "each test crate uses a part")]

use std::io::{BufRead, BufReader};
use std::process::{Child, Command, Stdio};
use std::sync::mpsc;
use std::time::{Duration, Instant};

/// A running `wharf serve --http`, with its stderr read line by line as it comes.
pub struct Serving {
    pub child: Child,
    pub port: u16,
    stderr: mpsc::Receiver<String>,
    seen: Vec<String>,
}

impl Serving {
    /// Starts `wharf serve --http ADDRESS EXTRA...` with `WHARF_LOG` set to `log`, and waits (at
    /// most ten seconds) for its banner, which names the port it listens on.
    pub fn start(address: &str, extra: &[&str], log: &str) -> Serving {
        Serving::start_with_env(address, extra, &[("WHARF_LOG", log)])
    }

    /// [`Serving::start`] with the environment variables `env` set (`WHARF_LOG` among them).
    pub fn start_with_env(address: &str, extra: &[&str], env: &[(&str, &str)]) -> Serving {
        let mut child = Command::new(env!("CARGO_BIN_EXE_wharf"))
            .args(["serve", "--http", address])
            .args(extra)
            .env_remove("RUST_LOG")
            .envs(env.iter().copied())
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        let (lines, stderr) = mpsc::channel();
        let reader = BufReader::new(child.stderr.take().unwrap());
        std::thread::spawn(move || {
            for line in reader.lines().map_while(Result::ok) {
                if lines.send(line).is_err() {
                    break;
                }
            }
        });
        let mut serving = Serving { child, port: 0, stderr, seen: Vec::new() };
        let banner = serving.wait_for("/mcp (Streamable HTTP)");
        let port = banner
            .split("http://")
            .nth(1)
            .and_then(|rest| rest.split("/mcp").next())
            .and_then(|authority| authority.rsplit(':').next().and_then(|port| port.parse().ok()));
        serving.port = port.unwrap_or_else(|| panic!("no port in the banner: {banner}"));
        serving
    }

    /// The first stderr line containing `wanted`, waiting at most ten seconds.
    pub fn wait_for(&mut self, wanted: &str) -> String {
        let deadline = Instant::now() + Duration::from_secs(10);
        loop {
            if let Some(line) = self.seen.iter().find(|line| line.contains(wanted)) {
                return line.clone();
            }
            let left = deadline.saturating_duration_since(Instant::now());
            match self.stderr.recv_timeout(left) {
                Ok(line) => self.seen.push(line),
                Err(_) => panic!("no {wanted:?} on stderr; saw {:#?}", self.seen),
            }
        }
    }

    /// Waits for the process to end by itself (at most ten seconds) and returns its exit code
    /// and all it wrote on stderr.
    pub fn wait(mut self) -> (Option<i32>, String) {
        let deadline = Instant::now() + Duration::from_secs(10);
        let status = loop {
            if let Some(status) = self.child.try_wait().unwrap() {
                break status;
            }
            if Instant::now() > deadline {
                let _ = self.child.kill();
                panic!("wharf serve did not stop; stderr: {:#?}", self.seen);
            }
            std::thread::sleep(Duration::from_millis(20));
        };
        while let Ok(line) = self.stderr.recv_timeout(Duration::from_secs(1)) {
            self.seen.push(line);
        }
        (status.code(), self.seen.join("\n"))
    }

    pub fn signal(&self, name: &str) {
        let sent = Command::new("kill").args([&format!("-{name}"), &self.child.id().to_string()]).status().unwrap();
        assert!(sent.success());
    }
}

impl Drop for Serving {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// A temporary directory for one test, removed when dropped.
pub struct Scratch(pub std::path::PathBuf);

impl Scratch {
    /// An empty directory named after the test and this process.
    pub fn new(name: &str) -> Scratch {
        let path = std::env::temp_dir().join(format!("wharf-cli-{name}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&path);
        std::fs::create_dir_all(&path).unwrap();
        Scratch(path)
    }

    pub fn path(&self) -> &std::path::Path {
        &self.0
    }

    /// Writes `text` at `path` inside, making its directories.
    pub fn write(&self, path: &str, text: &str) {
        let path = self.0.join(path);
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(path, text).unwrap();
    }

    /// The text at `path` inside.
    pub fn read(&self, path: &str) -> String {
        std::fs::read_to_string(self.0.join(path)).unwrap_or_else(|err| panic!("{path}: {err}"))
    }
}

impl Drop for Scratch {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}
