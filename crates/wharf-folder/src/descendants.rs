//! Everything a command tool's program started, found and killed when its call ends early: its
//! process group, every process descended from one found, and every process whose environment
//! carries the run's mark ([`RUN_MARK`]), which is how a grandchild is found that left the group
//! with `setsid` and whose parent has exited (it then belongs to no tree of ours). Each process
//! found is stopped before the next look, so that none forks out of reach, then all are killed.
//!
//! On Linux this reads `/proc`. A process that clears its environment and is orphaned before the
//! call ends, or that runs as another user, is not found; elsewhere only the group is killed.

use std::sync::OnceLock;
use std::sync::atomic::{AtomicU64, Ordering};

/// The environment variable that marks the processes of one run of a program.
pub(crate) const RUN_MARK: &str = "WHARF_TOOL_RUN";

/// A mark that no other run carries: this server's process, a count, and a number drawn once per
/// server, so that a server started later with the same process id marks its runs apart.
pub(crate) fn new_mark() -> String {
    static DRAWN: OnceLock<u64> = OnceLock::new();
    static RUNS: AtomicU64 = AtomicU64::new(0);
    let drawn = *DRAWN.get_or_init(|| {
        use std::hash::{BuildHasher, Hasher};
        std::collections::hash_map::RandomState::new().build_hasher().finish()
    });
    format!("{}-{}-{drawn:016x}", std::process::id(), RUNS.fetch_add(1, Ordering::Relaxed))
}

/// Kills the process group led by `leader` and every process of the run marked `mark`.
#[cfg(target_os = "linux")]
pub(crate) fn kill_all(leader: u32, mark: &str) {
    use nix::sys::signal::{Signal, kill, killpg};
    use nix::unistd::Pid;

    let Ok(leader) = i32::try_from(leader) else { return };
    // Nothing in the group forks while the rest is looked for.
    let _ = killpg(Pid::from_raw(leader), Signal::SIGSTOP);
    let found = find(leader, mark, |pid| {
        let _ = kill(Pid::from_raw(pid), Signal::SIGSTOP);
    });
    let _ = killpg(Pid::from_raw(leader), Signal::SIGKILL);
    for pid in found {
        let _ = kill(Pid::from_raw(pid), Signal::SIGKILL);
    }
}

/// Kills the process group led by `leader`: without `/proc`, nothing else can be found.
#[cfg(all(unix, not(target_os = "linux")))]
pub(crate) fn kill_all(leader: u32, _mark: &str) {
    use nix::sys::signal::{Signal, killpg};
    if let Ok(leader) = i32::try_from(leader) {
        let _ = killpg(nix::unistd::Pid::from_raw(leader), Signal::SIGKILL);
    }
}

#[cfg(not(unix))]
pub(crate) fn kill_all(_leader: u32, _mark: &str) {}

/// How many times `/proc` is read for processes that appeared since: each process found is
/// stopped, so a look that finds none new is the last.
#[cfg(target_os = "linux")]
const MAX_LOOKS: usize = 32;

/// The processes of the run: in the group of `leader`, marked with `mark`, or whose parent,
/// group or session is one found. `stop` is called on each as it is found.
#[cfg(target_os = "linux")]
fn find(leader: i32, mark: &str, mut stop: impl FnMut(i32)) -> std::collections::BTreeSet<i32> {
    let this_server = i32::try_from(std::process::id()).unwrap_or(-1);
    let needle = format!("{RUN_MARK}={mark}").into_bytes();
    let mut found = std::collections::BTreeSet::new();
    for _ in 0..MAX_LOOKS {
        let processes: Vec<Process> = processes()
            .into_iter()
            .filter(|process| process.pid != this_server && process.pid > 1 && !found.contains(&process.pid))
            .collect();
        let before = found.len();
        let mut marked: Vec<bool> = processes.iter().map(|process| carries(process.pid, &needle)).collect();
        // Until nothing more joins: a child of a process found is found, however deep.
        loop {
            let mut joined = false;
            for (process, marked) in processes.iter().zip(marked.iter_mut()) {
                let belongs = *marked
                    || process.group == leader
                    || [process.parent, process.group, process.session].iter().any(|id| found.contains(id));
                if belongs && found.insert(process.pid) {
                    stop(process.pid);
                    *marked = true;
                    joined = true;
                }
            }
            if !joined {
                break;
            }
        }
        if found.len() == before {
            break;
        }
    }
    found
}

/// One line of `/proc/PID/stat`, the ids that tie a process to others.
#[cfg(target_os = "linux")]
#[derive(Debug)]
struct Process {
    pid: i32,
    parent: i32,
    group: i32,
    session: i32,
}

/// Every process this server can see now.
#[cfg(target_os = "linux")]
fn processes() -> Vec<Process> {
    let Ok(entries) = std::fs::read_dir("/proc") else { return Vec::new() };
    entries
        .filter_map(Result::ok)
        .filter_map(|entry| entry.file_name().to_str().and_then(|name| name.parse::<i32>().ok()))
        .filter_map(|pid| {
            let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
            // After the command's name, which may hold anything, in parentheses.
            let mut fields = stat.get(stat.rfind(')')? + 1..)?.split_whitespace().skip(1);
            let mut next = || fields.next().and_then(|field| field.parse::<i32>().ok());
            Some(Process { pid, parent: next()?, group: next()?, session: next()? })
        })
        .collect()
}

/// True when the environment `pid` started with holds `needle` (`NAME=value`).
#[cfg(target_os = "linux")]
fn carries(pid: i32, needle: &[u8]) -> bool {
    std::fs::read(format!("/proc/{pid}/environ"))
        .is_ok_and(|environment| environment.split(|byte| *byte == 0).any(|variable| variable == needle))
}

#[cfg(all(test, target_os = "linux"))]
mod tests {
    use super::*;

    #[test]
    fn marks_differ_from_run_to_run() {
        let (first, second) = (new_mark(), new_mark());
        assert_ne!(first, second);
        assert!(first.starts_with(&format!("{}-", std::process::id())), "{first}");
    }

    #[test]
    fn this_process_is_seen_with_its_parent_group_and_session() {
        let me = i32::try_from(std::process::id()).unwrap();
        let seen = processes().into_iter().find(|process| process.pid == me).expect("this process is listed");
        assert_eq!(seen.parent, i32::try_from(std::os::unix::process::parent_id()).unwrap());
        assert_eq!(seen.group, nix::unistd::getpgrp().as_raw());
    }
}
