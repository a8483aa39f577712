//! `wharf list`, `call`, `read` and `prompt` against the real `wharf serve`, started by the
//! command over stdio (`-- wharf serve`) and reached over HTTP: what they print, and their exit
//! codes.

use std::process::{Command, Output};

use wharf_testkit::ports::free_port;

mod support;
use support::Serving;

const WHARF: &str = env!("CARGO_BIN_EXE_wharf");

fn wharf(args: &[&str]) -> Output {
    Command::new(WHARF).args(args).env_remove("WHARF_BEARER_TOKEN").output().unwrap()
}

/// `args` with the demo server over stdio after `--`.
fn over_stdio(args: &[&str]) -> Output {
    let mut line = args.to_vec();
    line.extend(["--", WHARF, "serve"]);
    wharf(&line)
}

fn stdout(output: &Output) -> String {
    String::from_utf8_lossy(&output.stdout).into_owned()
}

fn stderr(output: &Output) -> String {
    String::from_utf8_lossy(&output.stderr).into_owned()
}

#[test]
fn list_prints_a_table_of_each_kind_or_json() {
    let all = over_stdio(&["list"]);
    assert!(all.status.success(), "{}", stderr(&all));
    let text = stdout(&all);
    for wanted in [
        "TOOL",
        "calculator",
        "a* b* operation*",
        "PROMPT",
        "code_review",
        "RESOURCE",
        "config://app",
        "TEMPLATE",
        "users://{id}/profile",
        "ui://wharf-demo/dice",
        "text/html;profile=mcp-app",
    ] {
        assert!(text.contains(wanted), "{wanted} missing from\n{text}");
    }
    // A tool's view in a column of its own, marked when only views may call the tool.
    let row = |name: &str| text.lines().find(|line| line.starts_with(&format!("{name} "))).unwrap_or_default();
    assert!(text.lines().next().is_some_and(|header| header.contains(" VIEW ")), "{text}");
    assert!(row("roll_dice").contains("ui://wharf-demo/dice") && !row("roll_dice").contains("app only"), "{text}");
    assert!(row("roll_again").contains("ui://wharf-demo/dice (app only)"), "{text}");
    let tools = over_stdio(&["list", "tools", "--json"]);
    let listed: serde_json::Value = serde_json::from_slice(&tools.stdout).unwrap();
    assert!(listed.as_array().unwrap().iter().any(|tool| tool["name"] == "echo"));
    let wrong = over_stdio(&["list", "widgets"]);
    assert_eq!(wrong.status.code(), Some(2));
    assert!(stderr(&wrong).contains("`widgets` is not tools"), "{}", stderr(&wrong));
}

#[test]
fn call_types_arguments_by_the_schema_and_exits_by_the_outcome() {
    let added = over_stdio(&["call", "calculator", "operation=add", "a=2", "b=3.5"]);
    assert!(added.status.success(), "{}", stderr(&added));
    assert_eq!(stdout(&added).trim(), "5.5");
    let divided = over_stdio(&["call", "calculator", "operation=divide", "a=1", "b=0"]);
    assert_eq!(divided.status.code(), Some(1), "a tool error");
    assert!(stdout(&divided).contains("Division by zero"));
    let json = over_stdio(&["call", "echo", "--args-json", r#"{"message":"from json"}"#, "--json"]);
    let result: serde_json::Value = serde_json::from_slice(&json.stdout).unwrap();
    assert_eq!(result["content"][0]["text"], "from json");
    let logged = over_stdio(&["call", "log", "level=warning", "message=careful"]);
    assert!(stderr(&logged).contains("[warning] demo: careful"), "{}", stderr(&logged));
    let unknown = over_stdio(&["call", "nope"]);
    assert_eq!(unknown.status.code(), Some(3), "the server's refusal is a protocol error");
    assert!(
        stderr(&unknown).contains("`nope` is not among the tools the server lists (calculator, "),
        "{}",
        stderr(&unknown)
    );
    assert!(stderr(&unknown).contains("-32602"), "the server's answer is shown: {}", stderr(&unknown));
    let mistyped = over_stdio(&["call", "calculator", "operation=add", "a=two", "b=1"]);
    assert_eq!(mistyped.status.code(), Some(2));
    assert!(stderr(&mistyped).contains("`a` must be number"), "{}", stderr(&mistyped));
    let asked = over_stdio(&["call", "greet_interactively"]);
    assert!(stdout(&asked).contains("You declined"), "{}", stdout(&asked));
    assert!(stderr(&asked).contains("the server asked \"What is your name?\""));
}

#[test]
fn read_and_prompt_print_contents_and_messages() {
    let read = over_stdio(&["read", "users://2/profile"]);
    assert!(read.status.success(), "{}", stderr(&read));
    assert!(stdout(&read).contains("Alan Turing"));
    let missing = over_stdio(&["read", "users://9/profile"]);
    assert_eq!(missing.status.code(), Some(3), "a JSON-RPC error is a protocol error");
    let prompt = over_stdio(&["prompt", "code_review", "language=rust", "code=fn main() {}"]);
    assert!(prompt.status.success(), "{}", stderr(&prompt));
    assert!(stdout(&prompt).starts_with("[user]\nPlease review the following rust code"), "{}", stdout(&prompt));
}

#[test]
fn the_same_commands_work_over_http_in_both_eras() {
    let serving = Serving::start("127.0.0.1:0", &[], "warn");
    let url = format!("http://127.0.0.1:{}/mcp", serving.port);
    for version in ["2026-07-28", "2025-11-25", "2025-03-26"] {
        let called = wharf(&["call", &url, "echo", "message=over http", "--protocol-version", version]);
        assert!(called.status.success(), "{version}: {}", stderr(&called));
        assert_eq!(stdout(&called).trim(), "over http");
    }
    let listed = wharf(&["list", &url, "resources"]);
    assert!(stdout(&listed).contains("demo://clock"), "{}", stderr(&listed));
}

#[test]
fn what_cannot_be_reached_or_is_not_named_has_its_own_exit_code() {
    let port = free_port();
    let refused = wharf(&["list", &format!("http://127.0.0.1:{port}/mcp")]);
    assert_eq!(refused.status.code(), Some(4), "{}", stderr(&refused));
    let missing = wharf(&["call", "echo", "--", "/nonexistent/server"]);
    assert_eq!(missing.status.code(), Some(4));
    let unnamed = wharf(&["list"]);
    assert_eq!(unnamed.status.code(), Some(2));
    assert!(stderr(&unnamed).contains("no server"), "{}", stderr(&unnamed));
    let help = wharf(&["call", "--help"]);
    assert!(stdout(&help).contains("wharf call echo message=hello -- wharf serve"));
    let top = wharf(&["--help"]);
    assert!(stdout(&top).contains("Exit codes: 0 success"), "{}", stdout(&top));
}

#[test]
fn completion_scripts_name_every_command_for_each_shell() {
    let bash = wharf(&["completions", "bash"]);
    assert!(bash.status.success());
    let script = stdout(&bash);
    assert!(script.contains("complete -F _wharf") || script.contains("complete -o"), "{script}");
    for command in ["serve", "list", "call", "read", "prompt", "check", "tokens", "bench"] {
        assert!(script.contains(command), "{command} missing from the bash completions");
    }
    let zsh = wharf(&["completions", "zsh"]);
    assert!(stdout(&zsh).starts_with("#compdef wharf"), "{}", stdout(&zsh));
    let fish = wharf(&["completions", "fish"]);
    assert!(stdout(&fish).contains("complete -c wharf"), "{}", stdout(&fish));
    assert_eq!(wharf(&["completions", "tcsh"]).status.code(), Some(2));
}

/// A tool called without the arguments it needs: the first error and how to pass them are
/// shown, the run goes on, and the report and its JSON keep what the error said (issue 37).
#[test]
fn bench_shows_the_first_error_and_how_to_pass_arguments() {
    let failing = over_stdio(&["bench", "--tool", "echo", "-n", "20"]);
    assert_eq!(failing.status.code(), Some(1), "{}", stderr(&failing));
    let told = stderr(&failing);
    let said = "Invalid arguments for tool `echo`: \"message\" is a required property";
    assert!(told.contains(&format!("wharf bench: the first call of `echo` failed: {said}")), "{told}");
    assert!(
        told.contains(
            "wharf bench: `echo` takes message (required); pass the arguments with --args-json, like \
             '{\"message\":\"...\"}'; the run goes on, measuring the failing call"
        ),
        "{told}"
    );
    let report = stdout(&failing);
    assert!(report.contains("  requests     20 (20 errors)\n"), "{report}");
    assert!(report.contains(&format!("  first error  {said}\n")), "{report}");
    let json = over_stdio(&["bench", "--tool", "echo", "-n", "20", "--json"]);
    let results: serde_json::Value = serde_json::from_slice(&json.stdout).unwrap();
    assert_eq!(results["first_error"], said, "{results}");

    // `--args-json` is the name, as for `wharf call`; `--args` still works.
    for flag in ["--args-json", "--args"] {
        let passing = over_stdio(&["bench", "--tool", "echo", flag, r#"{"message":"hi"}"#, "-n", "20", "--json"]);
        assert_eq!(passing.status.code(), Some(0), "{flag}: {}", stderr(&passing));
        assert!(!stderr(&passing).contains("failed"), "{}", stderr(&passing));
        let results: serde_json::Value = serde_json::from_slice(&passing.stdout).unwrap();
        assert_eq!((results["errors"].as_u64(), &results["first_error"]), (Some(0), &serde_json::Value::Null));
    }
    let not_an_object = over_stdio(&["bench", "--tool", "echo", "--args-json", "[1]"]);
    assert_eq!(not_an_object.status.code(), Some(2));
    assert!(
        stderr(&not_an_object).contains(r#"--args-json must be a JSON object, like '{"message":"hi"}'"#),
        "{}",
        stderr(&not_an_object)
    );

    // A name the server neither lists nor takes ends the bench, with the likely one.
    let unknown = over_stdio(&["bench", "--tool", "ech", "-n", "20"]);
    assert_eq!(unknown.status.code(), Some(3), "{}", stderr(&unknown));
    assert!(
        stderr(&unknown).contains("wharf bench: `ech` is not among the tools the server lists (calculator, ")
            && stderr(&unknown).contains("); did you mean `echo`?\n"),
        "{}",
        stderr(&unknown)
    );
}

/// A mistyped tool or prompt name gets the closest one the server lists, before the call and
/// after the server's refusal; `--args` works for `--args-json` (issue 37).
#[test]
fn a_mistyped_name_gets_the_closest_one_the_server_lists() {
    let tool = over_stdio(&["call", "ech", "message=hi"]);
    assert_eq!(tool.status.code(), Some(3));
    let told = stderr(&tool);
    assert!(
        told.contains("wharf call: `ech` is not among the tools the server lists (calculator, countdown, echo, ")
            && told.contains("); did you mean `echo`? Calling `ech` anyway\n"),
        "{told}"
    );
    assert!(told.ends_with("wharf call: the server has no tool `ech`; did you mean `echo`?\n"), "{told}");
    let far = over_stdio(&["call", "weather"]);
    assert!(stderr(&far).contains("); calling it anyway\n") && !stderr(&far).contains("did you mean"));

    let prompt = over_stdio(&["prompt", "code_reveiw", "language=rust"]);
    assert_eq!(prompt.status.code(), Some(3));
    assert!(
        stderr(&prompt).ends_with(
            "wharf prompt: the server answered -32602: Unknown prompt: code_reveiw\n\
             wharf prompt: `code_reveiw` is not among the prompts the server lists (code_review); did you mean \
             `code_review`?\n"
        ),
        "{}",
        stderr(&prompt)
    );

    let aliased = over_stdio(&["call", "echo", "--args", r#"{"message":"by the old name"}"#]);
    assert_eq!(stdout(&aliased).trim(), "by the old name", "{}", stderr(&aliased));
}

/// SIGTERM sent to `wharf call` (or `list`, `check`, `lint`, `lock`, `tokens`, `bench`) alone,
/// not to its process group, while it waits for a server that never answers: the command exits
/// as the signal would have it (143) and the server it started does not outlive it, though
/// this one (`sleep`) would not stop when its input ends.
#[test]
fn sigterm_ends_a_command_and_the_server_it_started() {
    let dir = wharf_testkit::temp_dir::TempDir::new("call-sigterm");
    let pid_file = dir.join("pid");
    for command in [&["call", "echo"][..], &["list"][..], &["check"][..]] {
        let _ = std::fs::remove_file(&pid_file);
        let mut line = Command::new(WHARF);
        line.args(command).args(["--", "sh", "-c", "echo $$ > \"$0\"; exec sleep 60"]).arg(&pid_file);
        line.stdin(std::process::Stdio::null()).stdout(std::process::Stdio::null());
        let mut running = wharf_testkit::process::Process::spawn(&mut line);
        let server = running.started_program(&pid_file);
        let (code, stderr) = running.terminate_with(server);
        assert_eq!(code, Some(143), "{command:?}: {stderr}");
        assert!(stderr.contains("stopped by a signal"), "{command:?}: {stderr}");
    }
}
