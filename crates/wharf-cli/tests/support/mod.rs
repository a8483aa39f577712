//! What the wire tests of the `wharf` binary share beyond the test kit: a running
//! `wharf serve --http`, on the kit's [`Process`], and the port its banner names.

#![allow(dead_code, unreachable_pub, reason = "each test crate uses a part")]

use std::process::{Command, Stdio};

use wharf_testkit::process::Process;

/// A running `wharf serve --http`, its stderr read line by line as it comes; killed when
/// dropped.
pub struct Serving {
    /// The process.
    pub process: Process,
    /// The port its banner names.
    pub port: u16,
}

impl Serving {
    /// Starts `wharf serve --http ADDRESS EXTRA...` with `WHARF_LOG` set to `log`, and waits (at
    /// most ten seconds) for its banner, which names the port it listens on.
    pub fn start(address: &str, extra: &[&str], log: &str) -> Serving {
        Serving::start_with_env(address, extra, &[("WHARF_LOG", log)])
    }

    /// [`Serving::start`] with the environment variables `env` set (`WHARF_LOG` among them).
    pub fn start_with_env(address: &str, extra: &[&str], env: &[(&str, &str)]) -> Serving {
        let mut process = Process::spawn(
            Command::new(env!("CARGO_BIN_EXE_wharf"))
                .args(["serve", "--http", address])
                .args(extra)
                .env_remove("RUST_LOG")
                .envs(env.iter().copied())
                .stdin(Stdio::null())
                .stdout(Stdio::null()),
        );
        let banner = process.wait_for("/mcp (Streamable HTTP)");
        let port = banner
            .split("http://")
            .nth(1)
            .and_then(|rest| rest.split("/mcp").next())
            .and_then(|authority| authority.rsplit(':').next().and_then(|port| port.parse().ok()));
        Serving { process, port: port.unwrap_or_else(|| panic!("no port in the banner: {banner}")) }
    }

    /// The first stderr line containing `wanted`, waiting at most ten seconds.
    pub fn wait_for(&mut self, wanted: &str) -> String {
        self.process.wait_for(wanted)
    }

    /// Waits for the process to end by itself (at most ten seconds) and returns its exit code
    /// and all it wrote on stderr.
    pub fn wait(self) -> (Option<i32>, String) {
        self.process.wait()
    }

    /// Sends it the signal `name` (`TERM`, `INT`).
    pub fn signal(&self, name: &str) {
        self.process.signal(name);
    }
}
