//! An API's answer as a tool's result: JSON as `structuredContent` when it is an object (and
//! as text), other text as text, an image as an image, other bytes as an embedded blob; a
//! status outside 2xx as an error result naming the status, with the start of the body.

use base64::Engine;
use serde_json::Value;
use wharf_protocol::{
    BlobResourceContents, CallToolResult, ContentBlock, EmbeddedResource, ImageContent, ResourceContents,
};

use crate::http::Answer;

/// How much of a failed answer's body an error result quotes, in characters.
const EXCERPT: usize = 2000;

/// What the call `method` `path` got back, as the tool's result.
pub(crate) fn tool_result(method: &str, path: &str, url: &str, answer: Answer) -> CallToolResult {
    let media = answer.content_type.as_deref().map(essence).unwrap_or_default();
    if !(200..300).contains(&answer.status) {
        let text = String::from_utf8_lossy(&answer.body);
        let excerpt: String = text.chars().take(EXCERPT).collect();
        let more = if text.chars().count() > EXCERPT { " …" } else { "" };
        return CallToolResult::error(format!("{method} {path} answered {}: {excerpt}{more}", answer.status));
    }
    if answer.body.is_empty() {
        return CallToolResult::text(format!("{method} {path} answered {} with no content", answer.status));
    }
    let is_json = media == "application/json" || media.ends_with("+json");
    if (is_json || media.is_empty())
        && let Ok(value) = serde_json::from_slice::<Value>(&answer.body)
    {
        let text = String::from_utf8_lossy(&answer.body).into_owned();
        let mut result = CallToolResult::text(text);
        if value.is_object() {
            result.structured_content = Some(value);
        }
        return result;
    }
    if media.starts_with("text/")
        || is_json
        || media.ends_with("+xml")
        || media == "application/xml"
        || media.is_empty()
    {
        return CallToolResult::text(String::from_utf8_lossy(&answer.body).into_owned());
    }
    let data = base64::engine::general_purpose::STANDARD.encode(&answer.body);
    let block = if media.starts_with("image/") {
        ContentBlock::Image(ImageContent { data, mime_type: media.to_owned(), annotations: None, meta: None })
    } else {
        let uri = url.split(['?', '#']).next().unwrap_or(url).to_owned();
        let contents = BlobResourceContents { uri, mime_type: Some(media.to_owned()), blob: data, meta: None };
        ContentBlock::Resource(EmbeddedResource {
            resource: ResourceContents::Blob(contents),
            annotations: None,
            meta: None,
        })
    };
    CallToolResult { content: vec![block], ..CallToolResult::default() }
}

/// A media type without its parameters, lower case.
fn essence(content_type: &str) -> &str {
    content_type.split(';').next().unwrap_or_default().trim()
}

#[cfg(test)]
mod tests {
    use bytes::Bytes;
    use serde_json::json;

    use super::*;

    fn answer(status: u16, content_type: &str, body: &'static [u8]) -> CallToolResult {
        let answer = Answer { status, content_type: Some(content_type.to_owned()), body: Bytes::from_static(body) };
        tool_result("GET", "/pets/1", "http://api/pets/1?key=secret", answer)
    }

    fn text(result: &CallToolResult) -> String {
        match &result.content[0] {
            ContentBlock::Text(text) => text.text.clone(),
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn answers_become_results_by_their_type() {
        let object = answer(200, "application/json; charset=utf-8", br#"{"id":1}"#);
        assert_eq!(object.structured_content, Some(json!({"id": 1})));
        assert_eq!(text(&object), r#"{"id":1}"#);
        let list = answer(200, "application/json", b"[1,2]");
        assert_eq!(list.structured_content, None);
        assert_eq!(text(&list), "[1,2]");
        assert_eq!(text(&answer(200, "text/plain", b"hello")), "hello");
        assert_eq!(text(&answer(204, "text/plain", b"")), "GET /pets/1 answered 204 with no content");
        let image = answer(200, "image/png", b"\x89PNG");
        assert!(matches!(&image.content[0], ContentBlock::Image(image) if image.mime_type == "image/png"));
        let blob = answer(200, "application/octet-stream", b"\x00\x01");
        let ContentBlock::Resource(embedded) = &blob.content[0] else { panic!("{blob:?}") };
        let ResourceContents::Blob(contents) = &embedded.resource else { panic!() };
        assert_eq!(contents.uri, "http://api/pets/1", "no query, which may hold a key");
    }

    #[test]
    fn a_failed_answer_is_an_error_result_naming_the_status() {
        let failed = answer(404, "application/json", br#"{"detail":"Not Found"}"#);
        assert_eq!(failed.is_error, Some(true));
        assert_eq!(text(&failed), r#"GET /pets/1 answered 404: {"detail":"Not Found"}"#);
        let long = Answer { status: 500, content_type: None, body: Bytes::from("x".repeat(5000)) };
        let excerpt = text(&tool_result("GET", "/", "http://api/", long));
        assert!(excerpt.ends_with(" …") && excerpt.len() < 2100, "{}", excerpt.len());
    }
}
