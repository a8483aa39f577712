//! A Redis Cluster of a test's own: three primaries with a replica each (Debian's
//! `redis-server` in cluster mode, `WHARF_REDIS_SERVER` names another), on free loopback ports
//! (others for a node that found its own taken before it listened), joined by `redis-cli
//! --cluster create`; every node stopped, and its directory removed, when dropped. A node can
//! be killed as a crash would, or its replica told to take over.

use std::process::{Command, Stdio};
use std::time::Duration;

use crate::eventually::{eventually_blocking, until_blocking};
use crate::process::Process;
use crate::redis_cli::redis_cli as cli;
use crate::redis_process;
use crate::temp_dir::TempDir;

/// How long a node may stay silent before the others count it failed and elect its replica:
/// short, so that a test's failover takes a few seconds, yet long enough that a machine busy
/// with other tests does not count a slow node failed.
const NODE_TIMEOUT_MS: u64 = 2000;

/// One node: its port, its cluster bus's port, and its process while it runs.
#[derive(Debug)]
struct Node {
    port: u16,
    bus_port: u16,
    process: Option<Process>,
}

/// A running cluster of six nodes.
#[derive(Debug)]
pub struct RedisCluster {
    nodes: Vec<Node>,
    dir: TempDir,
}

impl RedisCluster {
    /// Starts six nodes, makes them a cluster of three primaries with one replica each, and
    /// waits (at most 30 seconds) until every node says the cluster is ok.
    pub fn start() -> RedisCluster {
        let dir = TempDir::new("redis-cluster");
        let mut cluster = RedisCluster { nodes: Vec::new(), dir };
        for _ in 0..6 {
            let ([port, bus_port], process) =
                redis_process::start_on_free_ports(|[port, bus_port]| cluster.node_command(port, bus_port));
            cluster.nodes.push(Node { port, bus_port, process: Some(process) });
        }
        let mut create = Command::new("redis-cli");
        create.args(["--cluster", "create"]);
        create.args(cluster.nodes.iter().map(|node| format!("127.0.0.1:{}", node.port)));
        create.args(["--cluster-replicas", "1", "--cluster-yes"]).stdin(Stdio::null()).stdout(Stdio::null());
        let created = create.status().expect("redis-cli must be installed for this test (scripts/test installs it)");
        assert!(created.success(), "redis-cli --cluster create failed");
        cluster.wait_until_ok();
        cluster
    }

    /// Starts the node on `port` again, and waits until it answers.
    fn spawn(&self, port: u16, bus_port: u16) -> Process {
        redis_process::start_on(self.node_command(port, bus_port), port)
    }

    /// The command that runs a node of this cluster on `port`.
    fn node_command(&self, port: u16, bus_port: u16) -> Command {
        let dir = self.dir.join(port.to_string());
        std::fs::create_dir_all(&dir).expect("a node's directory");
        let mut command = redis_process::persisting_node(port, &dir);
        command
            .args(["--cluster-enabled", "yes", "--cluster-config-file", "nodes.conf"])
            .args(["--cluster-node-timeout", &NODE_TIMEOUT_MS.to_string()])
            // A replica takes over however long ago it last heard from its primary: with a
            // short node timeout the default (ten of them) refuses a replica of an idle primary.
            .args(["--cluster-replica-validity-factor", "0"])
            // A replica synchronizes as soon as it asks (the default waits five seconds for
            // others to share the transfer).
            .args(["--repl-diskless-sync-delay", "0"])
            // The cluster bus needs a port of its own; the default (port + 10000) may not be free.
            .args(["--cluster-port", &bus_port.to_string()]);
        command
    }

    /// The nodes' URLs, for `Redis::connect_cluster` or `--redis-cluster`.
    pub fn seeds(&self) -> Vec<String> {
        self.nodes.iter().map(|node| format!("redis://127.0.0.1:{}/", node.port)).collect()
    }

    /// Waits (at most 30 seconds) until every running node says the cluster is ok and knows
    /// three primaries that answer, and every replica is in step with its primary.
    pub fn wait_until_ok(&self) {
        until_blocking("every node of the cluster to say it is ok", Duration::from_secs(30), || {
            self.running().all(|port| {
                let replicating = cli(port, &["INFO", "replication"])
                    .is_some_and(|info| info.contains("role:master") || info.contains("master_link_status:up"));
                replicating
                    && cli(port, &["CLUSTER", "INFO"]).is_some_and(|info| info.contains("cluster_state:ok"))
                    && self.primaries_seen_by(port).len() == 3
            })
        });
    }

    fn running(&self) -> impl Iterator<Item = u16> + '_ {
        self.nodes.iter().filter(|node| node.process.is_some()).map(|node| node.port)
    }

    /// The ports of the primaries that `port` knows and does not count failed.
    fn primaries_seen_by(&self, port: u16) -> Vec<u16> {
        let nodes = cli(port, &["CLUSTER", "NODES"]).unwrap_or_default();
        nodes
            .lines()
            .filter(|line| line.contains("master") && !line.contains("fail"))
            .filter_map(|line| line.split_whitespace().nth(1)?.split(['@', ':']).nth(1)?.parse().ok())
            .collect()
    }

    /// The port of the primary that holds `key`'s slot now, as a running node sees it.
    pub fn primary_of(&self, key: &str) -> u16 {
        let seen_from = self.running().next().expect("a running node");
        let slot: u16 = cli(seen_from, &["CLUSTER", "KEYSLOT", key])
            .and_then(|slot| slot.trim().parse().ok())
            .expect("CLUSTER KEYSLOT answers");
        let slots = cli(seen_from, &["CLUSTER", "NODES"]).unwrap_or_default();
        slots
            .lines()
            .filter(|line| line.contains("master") && !line.contains("fail"))
            .find_map(|line| {
                let fields: Vec<&str> = line.split_whitespace().collect();
                let port = fields.get(1)?.split(['@', ':']).nth(1)?.parse().ok()?;
                let holds = fields.iter().skip(8).any(|range| {
                    let (start, end) = range.split_once('-').unwrap_or((range, range));
                    matches!((start.parse::<u16>(), end.parse::<u16>()), (Ok(start), Ok(end)) if (start..=end).contains(&slot))
                });
                holds.then_some(port)
            })
            .unwrap_or_else(|| panic!("no primary holds slot {slot}"))
    }

    /// The port of the replica of the primary on `primary`.
    pub fn replica_of(&self, primary: u16) -> u16 {
        let id = cli(primary, &["CLUSTER", "MYID"]).expect("CLUSTER MYID answers").trim().to_owned();
        eventually_blocking("the primary's replica", Duration::from_secs(10), || {
            let replicas = cli(primary, &["CLUSTER", "REPLICAS", &id])?;
            replicas.lines().find_map(|line| line.split_whitespace().nth(1)?.split(['@', ':']).nth(1)?.parse().ok())
        })
    }

    /// Waits (at most 10 seconds) until the replica of the primary on `primary` has everything
    /// the primary had written when this was called: a write made without `WAIT` before then
    /// outlives the primary's death.
    pub fn wait_until_replicated(&self, primary: u16) {
        let replica = self.replica_of(primary);
        let offset = |port: u16, field: &str| {
            let info = cli(port, &["INFO", "replication"]).unwrap_or_default();
            info.lines().find_map(|line| line.trim().strip_prefix(field)?.parse::<u64>().ok())
        };
        let written = offset(primary, "master_repl_offset:").expect("the primary's replication offset");
        until_blocking("the replica to have what its primary wrote", Duration::from_secs(10), || {
            offset(replica, "slave_repl_offset:").is_some_and(|replicated| replicated >= written)
        });
    }

    /// Kills the node on `port` (`SIGKILL`, as a crash), then waits until the cluster is ok
    /// again without it: its replica elected in its place.
    pub fn kill(&mut self, port: u16) {
        let node = self.nodes.iter_mut().find(|node| node.port == port).expect("a node of this cluster");
        node.process = None;
        until_blocking("the other nodes to count it failed and elect its replica", Duration::from_secs(30), || {
            self.running().all(|seen_by| {
                let primaries = self.primaries_seen_by(seen_by);
                primaries.len() == 3 && !primaries.contains(&port)
            })
        });
        self.wait_until_ok();
    }

    /// Tells the replica on `replica` to take its primary's place (`CLUSTER FAILOVER`, the
    /// old primary agreeing), and waits until every node sees it has. A manual failover the
    /// primary does not finish in time (its replica catching up first) is asked for again,
    /// three times at most.
    pub fn fail_over_to(&self, replica: u16) {
        let seen_as_primary = || {
            cli(replica, &["ROLE"]).is_some_and(|role| role.starts_with("master"))
                && self.running().all(|seen_by| {
                    let primaries = self.primaries_seen_by(seen_by);
                    primaries.len() == 3 && primaries.contains(&replica)
                })
        };
        for _ in 0..3 {
            let answer = cli(replica, &["CLUSTER", "FAILOVER"]).unwrap_or_default();
            assert_eq!(answer.trim(), "OK", "CLUSTER FAILOVER on {replica}");
            let deadline = std::time::Instant::now() + Duration::from_secs(8);
            while !seen_as_primary() && std::time::Instant::now() < deadline {
                std::thread::sleep(Duration::from_millis(50));
            }
            if seen_as_primary() {
                self.wait_until_ok();
                return;
            }
        }
        panic!("{replica} is not a primary for every node: {}", self.views());
    }

    /// Starts the node on `port` again (killed before): it comes back as a replica of the one
    /// elected in its place.
    pub fn restart(&mut self, port: u16) {
        let bus_port = self.nodes.iter().find(|node| node.port == port).expect("a node of this cluster").bus_port;
        let process = self.spawn(port, bus_port);
        let node = self.nodes.iter_mut().find(|node| node.port == port).expect("a node of this cluster");
        node.process = Some(process);
        self.wait_until_ok();
    }

    /// Stops every node, as a crash of the whole cluster would.
    pub fn stop_all(&mut self) {
        for node in &mut self.nodes {
            node.process = None;
        }
    }

    /// Starts every node stopped again (same ports, same data), and waits until the cluster
    /// is ok.
    pub fn run_all(&mut self) {
        let stopped: Vec<(u16, u16)> =
            self.nodes.iter().filter(|node| node.process.is_none()).map(|node| (node.port, node.bus_port)).collect();
        for (port, bus_port) in stopped {
            let process = self.spawn(port, bus_port);
            if let Some(node) = self.nodes.iter_mut().find(|node| node.port == port) {
                node.process = Some(process);
            }
        }
        self.wait_until_ok();
    }

    /// Each running node's `CLUSTER NODES`, for a failure's message.
    fn views(&self) -> String {
        self.running()
            .map(|port| format!("\n{port} sees:\n{}", cli(port, &["CLUSTER", "NODES"]).unwrap_or_default()))
            .collect()
    }

    /// What `redis-cli` prints for `args` sent to the node on `port`.
    pub fn command(&self, port: u16, args: &[&str]) -> Option<String> {
        cli(port, args)
    }
}
