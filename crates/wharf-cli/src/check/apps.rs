//! The MCP Apps checks (SEP-1865): a tool that names a view has well-formed `_meta.ui`, its view
//! exists, is `text/html;profile=mcp-app` and carries well-formed `_meta.ui` of its own; and a
//! call of such a tool still gives the model text, as the extension asks of every tool with a
//! view.

use std::time::{Duration, Instant};

use serde_json::{Value, json};
use wharf::client::{Client, RequestOptions};
use wharf::protocol::{APP_MIME_TYPE, ToolUiMeta, UI_META_KEY, ViewMeta};

use crate::check::report::{Outcome, Report};

/// The `_meta.ui` of a listed tool: `None` when it has none, an error when it is malformed.
pub(super) fn tool_ui(tool: &Value) -> Option<Result<ToolUiMeta, String>> {
    let ui = tool.get("_meta")?.get(UI_META_KEY)?;
    Some(serde_json::from_value(ui.clone()).map_err(|err| format!("its `_meta.ui` is malformed: {err}")))
}

/// Checks the view a tool names: reported as `NAME: view`.
pub(super) async fn view_checks(
    report: &mut Report,
    section: &str,
    client: &Client,
    name: &str,
    ui: Result<ToolUiMeta, String>,
    timeout: Duration,
) {
    let check = format!("{name}: view");
    let meta = match ui {
        Ok(meta) => meta,
        Err(why) => return report.add(section, check, Outcome::Fail, why),
    };
    if let Some(problem) = meta.problem() {
        return report.add(section, check, Outcome::Fail, problem);
    }
    let Some(uri) = meta.resource_uri else {
        return report.add(section, check, Outcome::Pass, "`_meta.ui` names no view");
    };
    let started = Instant::now();
    let options = RequestOptions::default().timeout(timeout);
    let read = client.request_with("resources/read", json!({"uri": uri}), &options).await;
    let took = started.elapsed();
    let (outcome, detail) = match read {
        Err(err) => (Outcome::Fail, format!("its view `{uri}` cannot be read: {err}")),
        Ok(read) => match view_problem(&uri, &read) {
            Some(problem) => (Outcome::Fail, problem),
            None => (Outcome::Pass, format!("`{uri}`, {APP_MIME_TYPE}")),
        },
    };
    report.add_timed(section, check, outcome, detail, took);
}

/// What is wrong with `read`, the answer to reading the view at `uri`, if anything.
fn view_problem(uri: &str, read: &Value) -> Option<String> {
    let Some(contents) = read.get("contents").and_then(Value::as_array).and_then(|contents| contents.first()) else {
        return Some(format!("its view `{uri}` has no contents"));
    };
    let mime_type = contents.get("mimeType").and_then(Value::as_str).unwrap_or("none");
    if mime_type != APP_MIME_TYPE {
        return Some(format!("its view `{uri}` is of type `{mime_type}`, not `{APP_MIME_TYPE}`"));
    }
    if contents.get("text").is_none() && contents.get("blob").is_none() {
        return Some(format!("its view `{uri}` has neither `text` nor `blob`"));
    }
    let ui = contents.get("_meta").and_then(|meta| meta.get(UI_META_KEY))?;
    match serde_json::from_value::<ViewMeta>(ui.clone()) {
        Err(err) => Some(format!("its view `{uri}` has malformed `_meta.ui`: {err}")),
        Ok(meta) => meta.problem().map(|problem| format!("its view `{uri}`: {problem}")),
    }
}

/// True when a successful result gives the model no text: a tool with a view must still
/// return meaningful `content` (SEP-1865, graceful degradation).
pub(super) fn gives_no_text(result: &Value) -> bool {
    let texts = result.get("content").and_then(Value::as_array).into_iter().flatten();
    !texts
        .filter(|block| block.get("type").and_then(Value::as_str) == Some("text"))
        .any(|block| block.get("text").and_then(Value::as_str).is_some_and(|text| !text.trim().is_empty()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_view_is_an_app_document_with_well_formed_metadata() {
        let read = |contents: Value| json!({"contents": [contents]});
        let good = read(json!({"uri": "ui://a/v", "mimeType": APP_MIME_TYPE, "text": "<!DOCTYPE html>"}));
        assert_eq!(view_problem("ui://a/v", &good), None);
        let html = read(json!({"uri": "ui://a/v", "mimeType": "text/html", "text": "<html>"}));
        assert!(view_problem("ui://a/v", &html).is_some_and(|problem| problem.contains("is of type `text/html`")));
        let empty = read(json!({"uri": "ui://a/v", "mimeType": APP_MIME_TYPE}));
        assert!(view_problem("ui://a/v", &empty).is_some_and(|problem| problem.contains("neither")));
        let wildcard = read(json!({"uri": "ui://a/v", "mimeType": APP_MIME_TYPE, "text": "",
            "_meta": {"ui": {"csp": {"frameDomains": ["https://*.example.com"]}}}}));
        assert!(view_problem("ui://a/v", &wildcard).is_some_and(|problem| problem.contains("wildcard")));
        let malformed = read(json!({"uri": "ui://a/v", "mimeType": APP_MIME_TYPE, "text": "",
            "_meta": {"ui": {"prefersBorder": "yes"}}}));
        assert!(view_problem("ui://a/v", &malformed).is_some_and(|problem| problem.contains("malformed")));
        assert!(
            view_problem("ui://a/v", &json!({"contents": []})).is_some_and(|problem| problem.contains("no contents"))
        );
    }

    #[test]
    fn a_result_without_nonblank_text_gives_the_model_nothing() {
        assert!(!gives_no_text(&json!({"content": [{"type": "text", "text": "Sunny"}]})));
        assert!(gives_no_text(&json!({"content": [], "structuredContent": {"t": 22}})));
        assert!(gives_no_text(&json!({"content": [{"type": "text", "text": "  "}]})));
        assert!(gives_no_text(&json!({"content": [{"type": "image", "data": "", "mimeType": "image/png"}]})));
    }
}
