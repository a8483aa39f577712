//! A `redis-server` process of a test's own (Debian's, which `scripts/test` installs;
//! `WHARF_REDIS_SERVER` names another): on a loopback port, in a directory of its own,
//! persisting every write at once, so that one stopped and run again keeps what it had. The
//! Redis test kits add what their kind of node needs.

use std::io::{Read, Write};
use std::net::TcpStream;
use std::path::Path;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use crate::ports::free_port;
use crate::process::Process;

/// How long a node just started may take to answer `PING`, on a machine busy with other tests.
const START_LIMIT: Duration = Duration::from_secs(20);

/// How many times a node is started on other ports when it could not listen on those it was
/// given.
const PORT_TRIES: usize = 3;

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

/// Whether a Redis on `port` answers `PING`.
pub fn pong(port: u16) -> bool {
    let Ok(mut stream) = TcpStream::connect(("127.0.0.1", port)) else { return false };
    let mut answer = [0u8; 7];
    stream.set_read_timeout(Some(Duration::from_secs(1))).is_ok()
        && stream.write_all(b"PING\r\n").is_ok()
        && stream.read_exact(&mut answer).is_ok()
        && &answer == b"+PONG\r\n"
}

/// Waits (at most 20 seconds) until the node `process` started on `port` answers `PING`; false
/// when it exits first, as one that could not listen on its port does. Panics at the limit.
pub fn until_answering(process: &mut Process, port: u16) -> bool {
    let deadline = Instant::now() + START_LIMIT;
    loop {
        if pong(port) {
            return true;
        }
        if process.child.try_wait().ok().flatten().is_some() {
            return false;
        }
        assert!(Instant::now() < deadline, "redis-server did not answer on port {port} in {START_LIMIT:?}");
        std::thread::sleep(Duration::from_millis(20));
    }
}

/// Starts a node with `command` on `port` (given before: a restart keeps its port), and waits
/// until it answers; panics when it exits first.
pub fn start_on(mut command: Command, port: u16) -> Process {
    let mut process = spawn(&mut command);
    assert!(
        until_answering(&mut process, port),
        "redis-server exited at start on port {port}: {}",
        process.stderr_so_far()
    );
    process
}

/// Starts a node on free loopback ports (as many as `ports` asks for), made by `command` for
/// them, and waits until it answers. A port found free may be taken by another process before
/// the node listens on it (an outgoing connection's own port, on a machine running many tests):
/// the node then exits, and is started again on other ports.
pub fn start_on_free_ports<const N: usize>(mut command: impl FnMut([u16; N]) -> Command) -> ([u16; N], Process) {
    for _ in 0..PORT_TRIES {
        let ports: [u16; N] = std::array::from_fn(|_| free_port());
        if (1..N).any(|index| ports[..index].contains(&ports[index])) {
            continue;
        }
        let mut process = spawn(&mut command(ports));
        if until_answering(&mut process, ports[0]) {
            return (ports, process);
        }
    }
    panic!("redis-server exited at start on {PORT_TRIES} sets of free ports")
}
