//! A child process a test starts (a `wharf` binary, a real server), its stderr read line by
//! line as it comes, killed and reaped when dropped.

use std::io::{BufRead, BufReader};
use std::process::{Child, Command, Stdio};
use std::sync::mpsc;
use std::time::{Duration, Instant};

/// How long [`Process::wait_for`] and [`Process::wait`] wait.
const LIMIT: Duration = Duration::from_secs(10);

/// A running child whose stderr is read on a thread.
#[derive(Debug)]
pub struct Process {
    /// The child; its stdin and stdout are as the command set them.
    pub child: Child,
    stderr: mpsc::Receiver<String>,
    seen: Vec<String>,
}

impl Process {
    /// Spawns `command` with its stderr piped (stdin and stdout as the command says).
    pub fn spawn(command: &mut Command) -> Process {
        Process::try_spawn(command).unwrap_or_else(|err| panic!("{command:?}: {err}"))
    }

    /// [`Process::spawn`], giving the error when the program cannot be started, for a test to
    /// say what to install.
    pub fn try_spawn(command: &mut Command) -> std::io::Result<Process> {
        let mut child = command.stderr(Stdio::piped()).spawn()?;
        let (lines, stderr) = mpsc::channel();
        let reader = BufReader::new(child.stderr.take().expect("stderr is piped"));
        std::thread::spawn(move || {
            for line in reader.lines().map_while(Result::ok) {
                if lines.send(line).is_err() {
                    break;
                }
            }
        });
        Ok(Process { child, stderr, seen: Vec::new() })
    }

    /// The first stderr line containing `wanted`, waiting at most ten seconds.
    pub fn wait_for(&mut self, wanted: &str) -> String {
        let deadline = Instant::now() + LIMIT;
        loop {
            if let Some(line) = self.seen.iter().find(|line| line.contains(wanted)) {
                return line.clone();
            }
            let left = deadline.saturating_duration_since(Instant::now());
            match self.stderr.recv_timeout(left) {
                Ok(line) => self.seen.push(line),
                Err(_) => panic!("no {wanted:?} on stderr; saw {:#?}", self.seen),
            }
        }
    }

    /// Every stderr line read so far.
    pub fn stderr_so_far(&mut self) -> String {
        while let Ok(line) = self.stderr.try_recv() {
            self.seen.push(line);
        }
        self.seen.join("\n")
    }

    /// Waits for the process to end by itself (at most ten seconds, else it is killed and the
    /// test fails) and returns its exit code and all it wrote on stderr.
    pub fn wait(self) -> (Option<i32>, String) {
        self.wait_within(LIMIT)
    }

    /// [`Process::wait`], for at most `limit`: a command that takes its time (a login, a run
    /// against a slow server).
    pub fn wait_within(mut self, limit: Duration) -> (Option<i32>, String) {
        let deadline = Instant::now() + limit;
        let status = loop {
            if let Some(status) = self.child.try_wait().unwrap() {
                break status;
            }
            if Instant::now() > deadline {
                let _ = self.child.kill();
                panic!("the process did not stop in {limit:?}; stderr: {}", self.stderr_so_far());
            }
            std::thread::sleep(Duration::from_millis(20));
        };
        while let Ok(line) = self.stderr.recv_timeout(Duration::from_secs(1)) {
            self.seen.push(line);
        }
        (status.code(), self.seen.join("\n"))
    }

    /// The process id.
    pub fn id(&self) -> u32 {
        self.child.id()
    }

    /// Sends the signal `name` (`TERM`, `INT`, ...) with `kill`.
    pub fn signal(&self, name: &str) {
        let sent = Command::new("kill").args([&format!("-{name}"), &self.child.id().to_string()]).status().unwrap();
        assert!(sent.success(), "kill -{name} failed");
    }

    /// The pid a program this process started wrote to `path` (a shell's `echo $$ > PATH`),
    /// waiting ten seconds at most for it; the program is checked to be running.
    pub fn started_program(&mut self, path: &std::path::Path) -> u32 {
        let deadline = Instant::now() + LIMIT;
        loop {
            if let Some(pid) = std::fs::read_to_string(path).ok().and_then(|text| text.trim().parse::<u32>().ok()) {
                assert!(is_running(pid), "the program {pid} is not running: {}", self.stderr_so_far());
                return pid;
            }
            assert!(Instant::now() < deadline, "no program wrote its pid to {path:?}: {}", self.stderr_so_far());
            std::thread::sleep(Duration::from_millis(20));
        }
    }

    /// Sends SIGTERM, waits for the process to end (ten seconds at most), and checks that
    /// `program`, which it started, ended within five seconds of it. Its exit code and stderr.
    pub fn terminate_with(self, program: u32) -> (Option<i32>, String) {
        self.signal("TERM");
        let (code, stderr) = self.wait();
        assert!(ended_within_five_seconds(program), "the program {program} outlived its parent: {stderr}");
        (code, stderr)
    }
}

/// Whether the process `pid` exists and has not ended (a zombie has ended). On Linux, by
/// `/proc`.
pub fn is_running(pid: u32) -> bool {
    match std::fs::read_to_string(format!("/proc/{pid}/stat")) {
        // The state follows the command's name, which is in parentheses.
        Ok(stat) => stat.rsplit_once(')').is_some_and(|(_, rest)| !rest.trim_start().starts_with('Z')),
        Err(_) => false,
    }
}

/// Waits, five seconds at most, for the process `pid` to end; whether it did.
pub fn ended_within_five_seconds(pid: u32) -> bool {
    let deadline = Instant::now() + Duration::from_secs(5);
    while is_running(pid) && Instant::now() < deadline {
        std::thread::sleep(Duration::from_millis(20));
    }
    !is_running(pid)
}

/// Runs `command` to its end with `input` written to its stdin (on a thread, so that a full
/// stdout pipe cannot block the writer), stdin then closed; its stdout, stderr and status.
pub fn run_with_input(command: &mut Command, input: &[u8]) -> (String, String, std::process::ExitStatus) {
    let mut child = command
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap_or_else(|err| panic!("{command:?}: {err}"));
    let mut stdin = child.stdin.take().expect("stdin is piped");
    let input = input.to_vec();
    let writer = std::thread::spawn(move || {
        use std::io::Write;
        // A program that exits before reading all of it closes the pipe: not the test's concern.
        let _ = stdin.write_all(&input);
    });
    let output = child.wait_with_output().unwrap_or_else(|err| panic!("{command:?}: {err}"));
    writer.join().expect("the writer thread");
    (
        String::from_utf8_lossy(&output.stdout).into_owned(),
        String::from_utf8_lossy(&output.stderr).into_owned(),
        output.status,
    )
}

/// Runs `command` with `messages` written to its stdin as JSON lines; the messages it wrote on
/// stdout (each line parsed), and its stderr. Panics, with its stderr, when it does not exit
/// successfully.
pub fn run_json_lines(command: &mut Command, messages: &[serde_json::Value]) -> (Vec<serde_json::Value>, String) {
    let input: Vec<u8> = messages.iter().flat_map(|message| format!("{message}\n").into_bytes()).collect();
    let (stdout, stderr, status) = run_with_input(command, &input);
    assert!(status.success(), "{command:?} exited with {status}: {stderr}");
    let written = stdout
        .lines()
        .map(|line| serde_json::from_str(line).unwrap_or_else(|err| panic!("not JSON ({err}): {line}")))
        .collect();
    (written, stderr)
}

/// A child that speaks JSON lines on stdin and stdout, asked one request at a time; killed
/// and reaped when dropped.
#[derive(Debug)]
pub struct JsonLines {
    child: Child,
    stdout: BufReader<std::process::ChildStdout>,
}

impl JsonLines {
    /// Spawns `command` with piped stdin and stdout (stderr discarded).
    pub fn spawn(command: &mut Command) -> JsonLines {
        let mut child = command
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .unwrap_or_else(|err| panic!("{command:?}: {err}"));
        let stdout = BufReader::new(child.stdout.take().expect("stdout is piped"));
        JsonLines { child, stdout }
    }

    /// Writes `message` as a line and gives the response with its id (messages before it,
    /// such as notifications, are passed over).
    pub fn ask(&mut self, message: &serde_json::Value) -> serde_json::Value {
        use std::io::Write;
        let stdin = self.child.stdin.as_mut().expect("stdin is piped");
        writeln!(stdin, "{message}").expect("the child reads its stdin");
        loop {
            let mut line = String::new();
            let read = self.stdout.read_line(&mut line).expect("the child's stdout reads");
            assert!(read > 0, "the child ended before answering {message}");
            let answer: serde_json::Value =
                serde_json::from_str(&line).unwrap_or_else(|err| panic!("not JSON ({err}): {line}"));
            if answer.get("method").is_none() && answer["id"] == message["id"] {
                return answer;
            }
        }
    }
}

impl Drop for JsonLines {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

impl Drop for Process {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}
