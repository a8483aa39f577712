//! A `redis-server` process of a test's own (Debian's, which `scripts/test` installs;
//! `WHARF_REDIS_SERVER` names another): on a loopback port, in a directory of its own,
//! persisting every write at once, so that one stopped and run again keeps what it had. The
//! Redis test kits add what their kind of node needs.

use std::path::Path;
use std::process::{Command, Stdio};

use crate::process::Process;

/// The command that runs a persisting node on `port`, its files in `dir`.
pub fn persisting_node(port: u16, dir: &Path) -> Command {
    let program = std::env::var("WHARF_REDIS_SERVER").unwrap_or_else(|_| "redis-server".to_owned());
    let mut command = Command::new(program);
    command
        .args(["--port", &port.to_string(), "--bind", "127.0.0.1", "--save", ""])
        .args(["--appendonly", "yes", "--appendfsync", "always"])
        .arg("--dir")
        .arg(dir)
        .stdin(Stdio::null())
        .stdout(Stdio::null());
    command
}

/// Starts `command`, or panics saying what to install.
pub fn spawn(command: &mut Command) -> Process {
    let program = command.get_program().to_string_lossy().into_owned();
    Process::try_spawn(command)
        .unwrap_or_else(|err| panic!("{program} must be installed for this test (scripts/test installs it): {err}"))
}
