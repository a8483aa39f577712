//! A `redis-server` of a test's own (Debian's, which `scripts/test` installs;
//! `WHARF_REDIS_SERVER` names another), on a free loopback port (another one when that was
//! taken before it listened), writing to a temporary
//! directory; stopped, and its directory removed, when dropped.

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
        let dir = TempDir::new("redis");
        let ([port], process) =
            redis_process::start_on_free_ports(|[port]| redis_process::persisting_node(port, dir.path()));
        RedisServer { port, dir, process: Some(process) }
    }

    /// Its URL, for `Redis::connect` or `--redis`.
    pub fn url(&self) -> String {
        format!("redis://127.0.0.1:{}/", self.port)
    }

    /// Starts the process (again, after [`RedisServer::stop`]: same port, same data) and waits
    /// until it answers.
    pub fn run(&mut self) {
        let command = redis_process::persisting_node(self.port, self.dir.path());
        self.process = Some(redis_process::start_on(command, self.port));
    }

    /// Stops the process, as a crash would.
    pub fn stop(&mut self) {
        // Dropping the process kills and reaps it.
        self.process = None;
    }
}
