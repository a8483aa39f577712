//! A `redis-server` of a test's own (Debian's, which `scripts/test` installs;
//! `WHARF_REDIS_SERVER` names another), on a free loopback port, writing to a temporary
//! directory; stopped, and its directory removed, when dropped.

use std::io::{Read, Write};
use std::net::TcpStream;
use std::time::Duration;

use crate::eventually::until_blocking;
use crate::ports::free_port;
use crate::process::Process;
use crate::redis_process;
use crate::temp_dir::TempDir;

/// A running `redis-server` that persists every write (append-only, synced at once), so that
/// one stopped and run again keeps what it had.
#[derive(Debug)]
pub struct RedisServer {
    /// Its loopback port.
    pub port: u16,
    dir: TempDir,
    process: Option<Process>,
}

impl RedisServer {
    /// Starts one and waits (at most five seconds) until it answers `PING`.
    pub fn start() -> RedisServer {
        let port = free_port();
        let mut server = RedisServer { port, dir: TempDir::new(&format!("redis-{port}")), process: None };
        server.run();
        server
    }

    /// Its URL, for `Redis::connect` or `--redis`.
    pub fn url(&self) -> String {
        format!("redis://127.0.0.1:{}/", self.port)
    }

    /// Starts the process (again, after [`RedisServer::stop`]: same port, same data) and waits
    /// until it answers.
    pub fn run(&mut self) {
        let mut command = redis_process::persisting_node(self.port, self.dir.path());
        let process = redis_process::spawn(&mut command);
        self.process = Some(process);
        let port = self.port;
        until_blocking(&format!("redis-server to answer PING on port {port}"), Duration::from_secs(5), || pong(port));
    }

    /// Stops the process, as a crash would.
    pub fn stop(&mut self) {
        // Dropping the process kills and reaps it.
        self.process = None;
    }
}

/// Whether a Redis on `port` answers `PING`.
fn pong(port: u16) -> bool {
    let Ok(mut stream) = TcpStream::connect(("127.0.0.1", port)) else { return false };
    let mut answer = [0u8; 7];
    stream.set_read_timeout(Some(Duration::from_secs(1))).is_ok()
        && stream.write_all(b"PING\r\n").is_ok()
        && stream.read_exact(&mut answer).is_ok()
        && &answer == b"+PONG\r\n"
}
