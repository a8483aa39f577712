//! `wharf call` with a person at the terminal (a pseudo-terminal driven by
//! `fixtures/at_terminal.py`): the server's question is asked field by field and the answers
//! reach the tool; a "no" declines and Ctrl-D dismisses it. Elsewhere the question is declined
//! (`commands.rs`).
#![cfg(unix)]

use std::path::Path;
use std::process::Command;

const WHARF: &str = env!("CARGO_BIN_EXE_wharf");

/// Runs `wharf call greet_interactively -- wharf serve` on a terminal, typing `script`'s lines;
/// the exit code and what the terminal showed.
fn greet_at_terminal(script: serde_json::Value) -> (Option<i32>, String) {
    let fixture = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/at_terminal.py");
    let output = Command::new("python3")
        .arg(fixture)
        .arg(script.to_string())
        .args(["--", WHARF, "call", "greet_interactively", "--", WHARF, "serve"])
        .env_remove("WHARF_BEARER_TOKEN")
        .output()
        .unwrap();
    (output.status.code(), String::from_utf8_lossy(&output.stdout).replace("\r\n", "\n"))
}

#[test]
fn the_person_at_the_terminal_answers_the_servers_question() {
    let (code, shown) = greet_at_terminal(serde_json::json!([
        ["Your name (text, required): ", ""],
        ["This one is required.", ""],
        ["Your name (text, required): ", "Ann"],
        ["Send these answers? [Y/n] ", "y"],
    ]));
    assert_eq!(code, Some(0), "{shown}");
    assert!(shown.contains("wharf: the server asks: What is your name?"), "{shown}");
    assert!(shown.contains("Hello, Ann!"), "{shown}");
    assert!(!shown.contains("never shown"), "{shown}");
}

#[test]
fn no_declines_the_question_and_end_of_input_dismisses_it() {
    let (code, declined) = greet_at_terminal(serde_json::json!([
        ["Your name (text, required): ", "Ann"],
        ["Send these answers? [Y/n] ", "n"],
    ]));
    assert_eq!(code, Some(0), "{declined}");
    assert!(declined.contains("You declined to give your name."), "{declined}");

    let (code, dismissed) = greet_at_terminal(serde_json::json!([["Your name (text, required): ", null]]));
    assert_eq!(code, Some(0), "{dismissed}");
    assert!(dismissed.contains("You dismissed the question."), "{dismissed}");
}
