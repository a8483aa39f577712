//! What `redis-cli` (Debian's `redis-tools`, which `scripts/test` installs) prints for a
//! command sent to a node on a loopback port: how the Redis test kits ask and steer their nodes.

use std::process::{Command, Stdio};

/// What `redis-cli -h 127.0.0.1 -p PORT ARGS` prints, when it succeeds.
pub fn redis_cli(port: u16, args: &[&str]) -> Option<String> {
    let output = Command::new("redis-cli")
        .args(["-h", "127.0.0.1", "-p", &port.to_string()])
        .args(args)
        .stdin(Stdio::null())
        .stderr(Stdio::null())
        .output()
        .ok()?;
    output.status.success().then(|| String::from_utf8_lossy(&output.stdout).into_owned())
}
