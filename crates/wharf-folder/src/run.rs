//! Running a command tool's program: started with its argv (never through a shell), in its
//! directory, with only the environment it was allowed (and the run's mark), in a process group
//! of its own that is killed, with everything the program started (`descendants.rs`), when the
//! call ends early (timed out, cancelled, which drops the call, or its output held open by what
//! it started); its output read up to a bound.

use std::path::PathBuf;
use std::process::Stdio;
use std::time::Duration;

use tokio::io::{AsyncRead, AsyncReadExt};

use crate::descendants::{RUN_MARK, kill_all, new_mark};

/// The most bytes kept of each of standard output and standard error.
const MAX_OUTPUT: usize = 1024 * 1024;

/// How long output may stay open after the program exits.
const OUTPUT_GRACE: Duration = Duration::from_millis(500);

/// One run of a program.
#[derive(Debug, Clone)]
pub(crate) struct Invocation {
    pub(crate) program: String,
    pub(crate) argv: Vec<String>,
    pub(crate) cwd: PathBuf,
    pub(crate) env: Vec<(String, String)>,
    pub(crate) timeout: Duration,
}

/// How a run ended.
#[derive(Debug)]
pub(crate) struct Outcome {
    /// The exit code; `None` when it was killed by a signal or timed out.
    pub(crate) code: Option<i32>,
    pub(crate) stdout: Vec<u8>,
    pub(crate) stderr: Vec<u8>,
    /// Output beyond the bound was dropped.
    pub(crate) truncated: bool,
    pub(crate) timed_out: bool,
}

/// Runs `invocation` to its end, or until its timeout.
pub(crate) async fn run(invocation: &Invocation) -> Result<Outcome, String> {
    let mut command = tokio::process::Command::new(&invocation.program);
    let mark = new_mark();
    command
        .args(&invocation.argv)
        .current_dir(&invocation.cwd)
        .env_clear()
        .envs(invocation.env.iter().cloned())
        .env(RUN_MARK, &mark)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .kill_on_drop(true);
    #[cfg(unix)]
    command.process_group(0);
    let mut child = command.spawn().map_err(|err| format!("could not start `{}`: {err}", invocation.program))?;
    let group = ProcessGroup(child.id().map(|leader| (leader, mark)));
    let stdout = tokio::spawn(read_bounded(child.stdout.take()));
    let stderr = tokio::spawn(read_bounded(child.stderr.take()));
    let Ok(status) = tokio::time::timeout(invocation.timeout, child.wait()).await else {
        return Ok(Outcome { code: None, stdout: Vec::new(), stderr: Vec::new(), truncated: false, timed_out: true });
    };
    let status = status.map_err(|err| format!("waiting for `{}` failed: {err}", invocation.program))?;
    // The program is done; what it started may still hold its output open. It gets a moment
    // to finish, and is then killed with the group, which closes the pipes.
    let outputs = async { (stdout.await, stderr.await) };
    tokio::pin!(outputs);
    let (stdout, stderr) = match tokio::time::timeout(OUTPUT_GRACE, &mut outputs).await {
        Ok(outputs) => {
            // Nothing of the group holds the output: the program was reaped and its id may be
            // anyone's soon, so no signal goes to it.
            group.disarm();
            outputs
        }
        Err(_) => {
            drop(group);
            tokio::time::timeout(OUTPUT_GRACE, &mut outputs)
                .await
                .map_err(|_| format!("`{}` exited, but what it started kept its output open", invocation.program))?
        }
    };
    let ((stdout, out_truncated), (stderr, err_truncated)) = (stdout.unwrap_or_default(), stderr.unwrap_or_default());
    Ok(Outcome { code: status.code(), stdout, stderr, truncated: out_truncated || err_truncated, timed_out: false })
}

/// Everything `pipe` gives until it ends, the first [`MAX_OUTPUT`] bytes kept; whether more
/// came. The rest is read and dropped, so that the program never blocks on a full pipe.
async fn read_bounded(pipe: Option<impl AsyncRead + Unpin + Send>) -> (Vec<u8>, bool) {
    let Some(mut pipe) = pipe else { return (Vec::new(), false) };
    let mut kept = Vec::new();
    let mut chunk = vec![0u8; 16 * 1024];
    let mut truncated = false;
    while let Ok(read) = pipe.read(&mut chunk).await {
        if read == 0 {
            break;
        }
        let room = MAX_OUTPUT.saturating_sub(kept.len());
        kept.extend_from_slice(&chunk[..read.min(room)]);
        truncated |= read > room;
    }
    (kept, truncated)
}

/// A process group and the run's mark, killed when the call ends early (timed out, cancelled,
/// or output held open): the program and whatever it started, in the group or out of it.
struct ProcessGroup(Option<(u32, String)>);

impl ProcessGroup {
    fn disarm(mut self) {
        self.0 = None;
    }
}

impl Drop for ProcessGroup {
    fn drop(&mut self) {
        // Gone already is fine: the group has ended by itself.
        if let Some((leader, mark)) = &self.0 {
            kill_all(*leader, mark);
        }
    }
}
