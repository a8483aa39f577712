//! `wharf lint` against a server with one seeded problem of each kind it knows
//! (fixtures/lint_server.py): each is found once, with its source; and `wharf lock` on the
//! folder example: written, unchanged passes, then a removed tool is breaking and a new
//! optional argument additive.

use std::process::{Command, Output};

use serde_json::Value;
use wharf_testkit::temp_dir::TempDir;

const WHARF: &str = env!("CARGO_BIN_EXE_wharf");

fn wharf(args: &[&str]) -> Output {
    Command::new(WHARF).args(args).output().unwrap()
}

#[test]
fn lint_finds_each_seeded_problem_and_names_its_source() {
    let fixture = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/fixtures/lint_server.py");
    let output = wharf(&["lint", "--json", "--", "python3", fixture]);
    assert_eq!(output.status.code(), Some(1), "findings exit 1: {}", String::from_utf8_lossy(&output.stderr));
    let report: Value = serde_json::from_slice(&output.stdout).unwrap();
    let mut found: Vec<String> = report["findings"]
        .as_array()
        .unwrap()
        .iter()
        .map(|finding| {
            assert!(!finding["source"].as_str().unwrap().is_empty(), "{finding}");
            format!("{} {}", finding["rule"].as_str().unwrap(), finding["at"].as_str().unwrap())
        })
        .collect();
    found.sort();
    assert_eq!(
        found,
        [
            "description-length instructions",
            "description-length tool `wordy`",
            "input-schema-root-combinator tool `either`",
            "missing-annotations tool `unmarked`",
            "server-and-tool-name-length tool `a_tool_whose_name_makes_sixty_one`",
            "structured-result-without-text tool `structured`",
            "tool-name tool `dotted.name`",
        ]
    );
}

#[test]
fn lock_check_classes_a_removed_tool_as_breaking_and_a_new_optional_argument_as_additive() {
    let dir = TempDir::new("lock");
    let folder = dir.join("server");
    let example = concat!(env!("CARGO_MANIFEST_DIR"), "/../../examples/folder");
    let copied = Command::new("cp").arg("-r").arg(example).arg(&folder).status().unwrap();
    assert!(copied.success());
    let lock = dir.join("mcp.lock");
    let (lock, folder) = (lock.to_str().unwrap(), folder.to_str().unwrap());
    let serve = ["--", WHARF, "serve", "--no-watch", folder];
    let written = wharf(&[&["lock", "-o", lock][..], &serve[..]].concat());
    assert!(written.status.success(), "{}", String::from_utf8_lossy(&written.stderr));
    let locked: Value = serde_json::from_str(&std::fs::read_to_string(lock).unwrap()).unwrap();
    assert!(locked["tools"]["count_words"]["inputSchema"]["properties"]["text"].is_object(), "{locked}");
    let unchanged = wharf(&[&["lock", "--check", "-o", lock][..], &serve[..]].concat());
    assert!(unchanged.status.success(), "{}", String::from_utf8_lossy(&unchanged.stdout));
    // Remove `text_stats`, and give `count_words` an optional argument.
    let manifest = format!("{folder}/wharf.toml");
    let text = std::fs::read_to_string(&manifest).unwrap();
    let without = text.split("[[tools]]\nname = \"text_stats\"").next().unwrap().to_owned();
    let with_optional = without.replace(
        "[tools.arguments.text]\ndescription = \"The text whose words are counted\"\nrequired = true\n",
        "[tools.arguments.text]\ndescription = \"The text whose words are counted\"\nrequired = true\n\n[tools.arguments.language]\ndescription = \"The text's language\"\n",
    );
    assert_ne!(with_optional, without, "the manifest's layout changed: {text}");
    std::fs::write(&manifest, with_optional).unwrap();
    let changed = wharf(&[&["lock", "--check", "--json", "-o", lock][..], &serve[..]].concat());
    assert_eq!(changed.status.code(), Some(1), "{}", String::from_utf8_lossy(&changed.stderr));
    let report: Value = serde_json::from_slice(&changed.stdout).unwrap();
    let changes: Vec<String> = report["changes"]
        .as_array()
        .unwrap()
        .iter()
        .map(|change| format!("{}: {}", change["kind"].as_str().unwrap(), change["what"].as_str().unwrap()))
        .collect();
    assert!(changes.contains(&"breaking: tool `text_stats` removed".to_owned()), "{changes:#?}");
    assert!(
        changes.contains(&"additive: tool `count_words`: new optional argument `language`".to_owned()),
        "{changes:#?}"
    );
    assert_eq!(report["breaking"], 1, "{changes:#?}");
}
