//! Redis under Sentinel, of a test's own: a primary and its replica (Debian's `redis-server`,
//! `WHARF_REDIS_SERVER` names another) watched by three sentinels (the same program with
//! `--sentinel`), on free loopback ports, in a temporary directory; all stopped when dropped.
//! The primary can be killed as a crash would, or the sentinels asked to fail it over.

use std::process::{Command, Stdio};
use std::time::Duration;

use crate::eventually::{eventually_blocking, until_blocking};
use crate::ports::free_port;
use crate::process::Process;
use crate::redis_cli::redis_cli;
use crate::redis_process;
use crate::temp_dir::TempDir;

/// The name the sentinels know the primary by.
pub const PRIMARY_NAME: &str = "wharf-test";

/// How long a node may stay silent before a sentinel counts it down: short, so that a test's
/// failover takes a few seconds, yet long enough that a busy machine does not count a slow
/// node down.
const DOWN_AFTER_MS: u64 = 1500;

/// A data node: its port, and its process while it runs.
#[derive(Debug)]
struct Node {
    port: u16,
    process: Option<Process>,
}

/// A running primary and replica, and three sentinels.
#[derive(Debug)]
pub struct RedisSentinel {
    nodes: Vec<Node>,
    sentinels: Vec<(u16, Process)>,
    dir: TempDir,
}

impl RedisSentinel {
    /// Starts a primary, its replica and three sentinels, and waits (at most 30 seconds) until
    /// the replica is in step and every sentinel knows the primary, its replica and the two
    /// other sentinels (without which they could not agree on a failover).
    pub fn start() -> RedisSentinel {
        let dir = TempDir::new("redis-sentinel");
        let mut sentinel = RedisSentinel { nodes: Vec::new(), sentinels: Vec::new(), dir };
        let (primary, replica) = (free_port(), free_port());
        sentinel.nodes.push(Node { port: primary, process: Some(sentinel.spawn_node(primary, None)) });
        sentinel.nodes.push(Node { port: replica, process: Some(sentinel.spawn_node(replica, Some(primary))) });
        for port in [primary, replica] {
            wait_for_pong(port);
        }
        sentinel.wait_until_replicated(replica);
        for _ in 0..3 {
            let port = free_port();
            let process = sentinel.spawn_sentinel(port, primary);
            sentinel.sentinels.push((port, process));
        }
        until_blocking(
            "every sentinel to know the primary, its replica and the others",
            Duration::from_secs(30),
            || {
                sentinel.sentinels.iter().all(|(port, _)| {
                    let knows = |what: &str, count: usize| {
                        redis_cli(*port, &["SENTINEL", what, PRIMARY_NAME])
                            .is_some_and(|listed| listed.lines().filter(|line| *line == "ip").count() == count)
                    };
                    knows("REPLICAS", 1) && knows("SENTINELS", 2)
                })
            },
        );
        sentinel
    }

    fn spawn_node(&self, port: u16, replica_of: Option<u16>) -> Process {
        let dir = self.dir.join(port.to_string());
        std::fs::create_dir_all(&dir).expect("a node's directory");
        let mut command = redis_process::persisting_node(port, &dir);
        // A replica synchronizes as soon as it asks.
        command.args(["--repl-diskless-sync-delay", "0"]);
        if let Some(primary) = replica_of {
            command.args(["--replicaof", "127.0.0.1", &primary.to_string()]);
        }
        redis_process::spawn(&mut command)
    }

    fn spawn_sentinel(&self, port: u16, primary: u16) -> Process {
        let dir = self.dir.join(format!("sentinel-{port}"));
        std::fs::create_dir_all(&dir).expect("a sentinel's directory");
        // A sentinel rewrites its configuration file as it learns: one of its own.
        let config = dir.join("sentinel.conf");
        let text = format!(
            "port {port}\nbind 127.0.0.1\ndir {dir}\n\
             sentinel monitor {PRIMARY_NAME} 127.0.0.1 {primary} 2\n\
             sentinel down-after-milliseconds {PRIMARY_NAME} {DOWN_AFTER_MS}\n\
             sentinel failover-timeout {PRIMARY_NAME} 5000\n\
             sentinel parallel-syncs {PRIMARY_NAME} 1\n",
            dir = dir.display()
        );
        std::fs::write(&config, text).expect("a sentinel's configuration");
        let program = std::env::var("WHARF_REDIS_SERVER").unwrap_or_else(|_| "redis-server".to_owned());
        let mut command = Command::new(program);
        command.arg(&config).arg("--sentinel").stdin(Stdio::null()).stdout(Stdio::null());
        let process = redis_process::spawn(&mut command);
        wait_for_pong(port);
        process
    }

    /// The sentinels' URLs, for `Redis::connect_sentinel` or `--redis-sentinel`.
    pub fn sentinels(&self) -> Vec<String> {
        self.sentinels.iter().map(|(port, _)| format!("redis://127.0.0.1:{port}/")).collect()
    }

    /// The port of the node the sentinels name the primary now.
    pub fn primary(&self) -> u16 {
        eventually_blocking("a sentinel to name the primary", Duration::from_secs(10), || {
            self.sentinels.iter().find_map(|(port, _)| named_primary(*port))
        })
    }

    /// The port of the other data node.
    pub fn replica(&self) -> u16 {
        let primary = self.primary();
        self.nodes.iter().map(|node| node.port).find(|port| *port != primary).expect("two data nodes")
    }

    /// Kills the primary (`SIGKILL`, as a crash), then waits (at most 30 seconds) until every
    /// sentinel names the replica in its place and it acts as the primary; its port.
    pub fn kill_primary(&mut self) -> u16 {
        let (primary, replica) = (self.primary(), self.replica());
        self.node(primary).process = None;
        self.wait_until_primary(replica);
        replica
    }

    /// Asks the sentinels to fail the primary over (`SENTINEL FAILOVER`, the replica promoted
    /// and the old primary made its replica), and waits until every sentinel names the new one,
    /// it acts as the primary and the old one replicates it; the new primary's port. A
    /// sentinel that refuses at first (the replica not yet in step) is asked again, for at
    /// most 30 seconds.
    pub fn fail_over(&self) -> u16 {
        let (primary, replica) = (self.primary(), self.replica());
        let (sentinel, _) = &self.sentinels[0];
        until_blocking("a sentinel to start a failover", Duration::from_secs(30), || {
            let started = redis_cli(*sentinel, &["SENTINEL", "FAILOVER", PRIMARY_NAME])
                .is_some_and(|answer| answer.trim() == "OK");
            if !started {
                std::thread::sleep(Duration::from_millis(200));
            }
            started
        });
        self.wait_until_primary(replica);
        self.wait_until_replicated(primary);
        replica
    }

    /// Starts the node on `port` again (killed before), as a replica of the primary now.
    pub fn restart(&mut self, port: u16) {
        let primary = self.primary();
        let process = self.spawn_node(port, Some(primary));
        self.node(port).process = Some(process);
        wait_for_pong(port);
        self.wait_until_replicated(port);
    }

    /// Stops both data nodes, as a crash of both would; the sentinels go on.
    pub fn stop_all(&mut self) {
        for node in &mut self.nodes {
            node.process = None;
        }
    }

    /// Starts both data nodes again (same ports, same data: the primary as before, the other
    /// its replica), and waits until the sentinels name the primary and the replica is in step.
    pub fn run_all(&mut self) {
        let primary = self.primary();
        let replica = self.nodes.iter().map(|node| node.port).find(|port| *port != primary).expect("two data nodes");
        for (port, replica_of) in [(primary, None), (replica, Some(primary))] {
            if self.node(port).process.is_none() {
                let process = self.spawn_node(port, replica_of);
                self.node(port).process = Some(process);
                wait_for_pong(port);
            }
        }
        let primary = self.primary();
        self.wait_until_primary(primary);
        let replica = self.nodes.iter().map(|node| node.port).find(|port| *port != primary).expect("two data nodes");
        self.wait_until_replicated(replica);
    }

    /// What `redis-cli` prints for `args` sent to the node (or sentinel) on `port`.
    pub fn command(&self, port: u16, args: &[&str]) -> Option<String> {
        redis_cli(port, args)
    }

    fn node(&mut self, port: u16) -> &mut Node {
        self.nodes.iter_mut().find(|node| node.port == port).expect("a data node of this setup")
    }

    /// Waits until every sentinel names `port` the primary and it says it is one.
    fn wait_until_primary(&self, port: u16) {
        until_blocking(&format!("every sentinel to name {port} the primary"), Duration::from_secs(30), || {
            self.sentinels.iter().all(|(sentinel, _)| named_primary(*sentinel) == Some(port))
                && redis_cli(port, &["ROLE"]).is_some_and(|role| role.starts_with("master"))
        });
    }

    /// Waits until the node on `port` replicates a primary, its link up.
    fn wait_until_replicated(&self, port: u16) {
        until_blocking(&format!("{port} to replicate its primary"), Duration::from_secs(30), || {
            redis_cli(port, &["INFO", "replication"]).is_some_and(|info| info.contains("master_link_status:up"))
        });
    }
}

/// The port of the primary that the sentinel on `sentinel` names.
fn named_primary(sentinel: u16) -> Option<u16> {
    let named = redis_cli(sentinel, &["SENTINEL", "GET-MASTER-ADDR-BY-NAME", PRIMARY_NAME])?;
    named.lines().nth(1)?.trim().parse().ok()
}

fn wait_for_pong(port: u16) {
    // As long as a node of the other kits may take, on a machine busy with other tests.
    until_blocking(&format!("redis-server to answer on port {port}"), Duration::from_secs(20), || {
        crate::redis_process::pong(port)
    });
}
