//! A large real document: GitHub's REST API description (`@octokit/openapi` from npm, 13 MB,
//! about a thousand operations), named by `WHARF_OCTOKIT_OPENAPI` (`scripts/test` installs it
//! and runs this test). Every operation becomes a tool, or is left out with a reason; every
//! generated schema is valid JSON Schema 2020-12 and compiles; names are unique and within the
//! rules.

use std::collections::HashSet;

use serde_json::Value;
use wharf_openapi::operations;

#[test]
#[ignore = "needs @octokit/openapi's api.github.com.json in WHARF_OCTOKIT_OPENAPI; scripts/test runs it"]
fn githubs_description_becomes_valid_tools() {
    let path = std::env::var("WHARF_OCTOKIT_OPENAPI").expect("WHARF_OCTOKIT_OPENAPI names api.github.com.json");
    let text = std::fs::read_to_string(&path).unwrap();
    let document: Value = serde_json::from_str(&text).unwrap();
    let operation_count: usize = document["paths"]
        .as_object()
        .unwrap()
        .values()
        .map(|item| {
            ["get", "put", "post", "delete", "options", "head", "patch", "trace"]
                .iter()
                .filter(|m| item.get(**m).is_some())
                .count()
        })
        .sum();
    let read = operations(&document).unwrap();
    assert!(operation_count > 900, "{operation_count} operations");
    assert_eq!(
        read.tools.len() + read.notes.iter().filter(|note| note.contains("is left out")).count(),
        operation_count,
        "{:?}",
        read.notes
    );
    assert!(read.tools.len() > 900, "{} tools; left out: {:?}", read.tools.len(), read.notes);
    let mut names = HashSet::new();
    for tool in &read.tools {
        assert!(names.insert(tool.name.clone()), "{} twice", tool.name);
        assert!(
            tool.name.len() <= 64 && tool.name.chars().all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-'),
            "{}",
            tool.name
        );
        let input = Value::Object(tool.input_schema.clone());
        wharf_schema::meta::validate(&input, wharf_schema::Draft::Draft202012)
            .unwrap_or_else(|err| panic!("{}: {err}", tool.name));
        wharf_schema::Validator::new(&input).unwrap_or_else(|err| panic!("{}: {err}", tool.name));
        if let Some(output) = &tool.output_schema {
            let output = Value::Object(output.clone());
            wharf_schema::meta::validate(&output, wharf_schema::Draft::Draft202012)
                .unwrap_or_else(|err| panic!("{} (output): {err}", tool.name));
        }
    }
    let get_repo = read.tools.iter().find(|tool| tool.operation_id.as_deref() == Some("repos/get")).unwrap();
    assert_eq!(get_repo.name, "repos_get");
    assert_eq!(get_repo.input_schema["required"], serde_json::json!(["owner", "repo"]));
    assert_eq!(get_repo.output_schema.as_ref().unwrap()["type"], "object");
}
