//! Fitting a result to its client's budget: a result over it keeps its small blocks, and each
//! large one (text, an image, audio, an embedded resource, and structured content the tool
//! declared no schema for) is kept in the [`ResultStore`] in pages and answered with a preview
//! (its first part, or the summary the tool put in `_meta["wharf/summary"]`), a note saying
//! how to read it, and a `resource_link` where the revision has them.

use std::sync::Arc;
use std::time::Duration;

use serde_json::Value;
use wharf_protocol::{CallToolResult, ContentBlock, ProtocolVersion, Resource, ResourceContents};

use super::budget::ResultBudget;
use super::store::{ResultStore, SpilledResult};

/// The `_meta` member in which a tool gives the preview of a result too large for its client.
pub const RESULT_SUMMARY_META: &str = "wharf/summary";

/// The scheme of the resources that hold large results.
pub(crate) const RESULT_SCHEME: &str = "wharf-result://";

/// Where a call's large blocks go, and for whom.
pub(crate) struct Spill<'a> {
    pub(crate) store: &'a Arc<dyn ResultStore>,
    pub(crate) ttl: Duration,
    /// Who may read them (see [`SpilledResult::owner`]).
    pub(crate) owner: String,
    pub(crate) tool: &'a str,
    pub(crate) version: ProtocolVersion,
    /// True when the tool declared an `outputSchema`: its structured content stays, as clients
    /// require it.
    pub(crate) has_output_schema: bool,
}

/// A large block, taken out of the result.
struct Taken {
    /// Text, or base64.
    body: String,
    binary: bool,
    mime_type: Option<String>,
}

/// True when `result` fits `budget`: measured in bytes without copying anything, and counted
/// in tokens only when it is over the budget in bytes.
pub(crate) fn fits(result: &CallToolResult, budget: ResultBudget, has_output_schema: bool) -> bool {
    let structured = result.structured_content.as_ref().filter(|_| !has_output_schema);
    let mut bytes: usize = result.content.iter().filter_map(block_body).map(str::len).sum();
    if let Some(structured) = structured {
        let mut counted = ByteCount(0);
        // Writing into a counter cannot fail.
        let _ = serde_json::to_writer(&mut counted, structured);
        bytes += counted.0;
    }
    if budget.fits_bytes(bytes) {
        return true;
    }
    let structured = structured.map(Value::to_string);
    budget.fits(&measured(result, structured.as_deref()))
}

/// A writer that only counts.
struct ByteCount(usize);

impl std::io::Write for ByteCount {
    fn write(&mut self, bytes: &[u8]) -> std::io::Result<usize> {
        self.0 += bytes.len();
        Ok(bytes.len())
    }

    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

/// The parts of `result` a budget counts.
fn measured<'a>(result: &'a CallToolResult, structured: Option<&'a str>) -> Vec<&'a str> {
    let mut parts: Vec<&str> = result.content.iter().filter_map(block_body).collect();
    parts.extend(structured);
    parts
}

/// The text or base64 a block carries, where it carries any.
fn block_body(block: &ContentBlock) -> Option<&str> {
    match block {
        ContentBlock::Text(text) => Some(&text.text),
        ContentBlock::Image(image) | ContentBlock::Audio(image) => Some(&image.data),
        ContentBlock::Resource(embedded) => match &embedded.resource {
            ResourceContents::Text(text) => Some(&text.text),
            ResourceContents::Blob(blob) => Some(&blob.blob),
        },
        ContentBlock::ResourceLink(_) => None,
    }
}

/// A block sorted by its size.
enum Sorted {
    Large(Taken),
    Small(ContentBlock),
}

/// The block as kept whole, when it is larger than `threshold`; otherwise the block as it is.
fn take_large(block: ContentBlock, threshold: usize) -> Sorted {
    if block_body(&block).is_none_or(|body| body.len() <= threshold) {
        return Sorted::Small(block);
    }
    Sorted::Large(match block {
        ContentBlock::Text(text) => Taken { body: text.text, binary: false, mime_type: Some("text/plain".to_owned()) },
        ContentBlock::Image(image) | ContentBlock::Audio(image) => {
            Taken { body: image.data, binary: true, mime_type: Some(image.mime_type) }
        }
        ContentBlock::Resource(embedded) => match embedded.resource {
            ResourceContents::Text(text) => Taken { body: text.text, binary: false, mime_type: text.mime_type },
            ResourceContents::Blob(blob) => Taken { body: blob.blob, binary: true, mime_type: blob.mime_type },
        },
        other @ ContentBlock::ResourceLink(_) => return Sorted::Small(other),
    })
}

/// `text` in pages of at most `bytes` each, cut between characters.
pub(crate) fn text_pages(text: &str, bytes: usize) -> Vec<Arc<str>> {
    let mut pages = Vec::new();
    let mut rest = text;
    while !rest.is_empty() {
        let mut end = bytes.min(rest.len());
        while !rest.is_char_boundary(end) {
            end -= 1;
        }
        pages.push(Arc::from(&rest[..end]));
        rest = &rest[end..];
    }
    pages
}

/// Base64 text in pages of at most `bytes`, each a whole number of four-character groups, so
/// that each page decodes alone and the decoded pages put together are the original bytes.
fn base64_pages(base64: &str, bytes: usize) -> Vec<Arc<str>> {
    text_pages(base64, (bytes / 4 * 4).max(4))
}

/// The bytes base64 text decodes to.
fn decoded_size(base64: &str) -> u64 {
    let padding = base64.bytes().rev().take_while(|byte| *byte == b'=').count();
    (base64.len() / 4 * 3).saturating_sub(padding) as u64
}

/// The first `bytes` of `text`, cut between characters.
fn preview_of(text: &str, bytes: usize) -> &str {
    let mut end = bytes.min(text.len());
    while !text.is_char_boundary(end) {
        end -= 1;
    }
    &text[..end]
}

impl Spill<'_> {
    /// `result` as it fits `budget`; unchanged when it already does.
    pub(crate) async fn fit(&self, mut result: CallToolResult, budget: ResultBudget) -> CallToolResult {
        if fits(&result, budget, self.has_output_schema) {
            return result;
        }
        let structured = match &result.structured_content {
            Some(structured) if !self.has_output_schema => Some(structured.to_string()),
            _ => None,
        };
        let Ok(id) = crate::random::hex_id() else {
            return CallToolResult::error(
                "The result is larger than this client takes, and no random source was there to keep it",
            );
        };
        let summary = result
            .meta
            .as_mut()
            .and_then(|meta| meta.remove(RESULT_SUMMARY_META))
            .and_then(|summary| summary.as_str().map(str::to_owned));
        let threshold = budget.preview_bytes();
        let mut kept = Vec::new();
        let mut taken = Vec::new();
        for block in std::mem::take(&mut result.content) {
            match take_large(block, threshold) {
                Sorted::Large(large) => taken.push(large),
                Sorted::Small(small) => kept.push(small),
            }
        }
        if let Some(structured) = structured.filter(|structured| structured.len() > threshold) {
            result.structured_content = None;
            taken.push(Taken { body: structured, binary: false, mime_type: Some("application/json".to_owned()) });
        }
        let preview = summary.unwrap_or_else(|| {
            let first_text =
                taken.iter().find(|large| !large.binary).map(|large| large.body.as_str()).unwrap_or_default();
            preview_of(first_text, threshold).to_owned()
        });
        let mut notes = Vec::new();
        let mut links = Vec::new();
        for (n, large) in taken.into_iter().enumerate() {
            let uri = format!("{RESULT_SCHEME}{id}-{n}");
            let page_bytes = budget.page_bytes();
            let (pages, size) = if large.binary {
                let size = decoded_size(&large.body);
                (base64_pages(&large.body, page_bytes), size)
            } else {
                (text_pages(&large.body, page_bytes), large.body.len() as u64)
            };
            let count = pages.len();
            let spilled = SpilledResult {
                owner: self.owner.clone(),
                mime_type: large.mime_type.clone(),
                binary: large.binary,
                pages,
                size,
            };
            if let Err(err) = self.store.put(&format!("{id}-{n}"), spilled, self.ttl).await {
                tracing::warn!(error = %err, tool = self.tool, "a large result could not be kept");
                return CallToolResult::error(format!(
                    "The result of `{}` ({size} bytes) is larger than this client takes ({}), and could not be kept for reading in pages: {err}",
                    self.tool,
                    budget.describe()
                ));
            }
            notes.push(format!(
                "[The whole {what} is {size} bytes, over this client's budget of {budget}: it is the resource {uri}, \
                 {count} page{s}. Read {uri}?page=1{through} with resources/read, within {minutes} minutes.]",
                what = if large.binary { "content" } else { "text" },
                budget = budget.describe(),
                s = if count == 1 { "" } else { "s" },
                through = if count > 1 { format!(" through {uri}?page={count}") } else { String::new() },
                minutes = self.ttl.as_secs().div_ceil(60),
            ));
            links.push(ContentBlock::ResourceLink(Resource {
                uri,
                name: format!("{}-result-{n}", self.tool),
                description: Some(format!("{count} pages, read with ?page=1 to ?page={count}")),
                mime_type: large.mime_type,
                size: Some(size),
                ..Resource::default()
            }));
        }
        let mut text = preview;
        for note in notes {
            text.push_str("\n\n");
            text.push_str(&note);
        }
        let mut content = vec![ContentBlock::text(text)];
        if self.version.has_structured_output() {
            // `resource_link` exists from 2025-06-18; before, the note names the URIs.
            content.extend(links);
        }
        content.extend(kept);
        result.content = content;
        let meta = result.meta.get_or_insert_with(Default::default);
        meta.insert("wharf/spilled".to_owned(), Value::Bool(true));
        result
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pages_are_cut_between_characters_and_put_together_are_the_whole() {
        let text = "aé€😀".repeat(100);
        let pages = text_pages(&text, 7);
        assert!(pages.iter().all(|page| page.len() <= 7 && !page.is_empty()));
        assert_eq!(pages.concat(), text);
        let base64 = "QUJDREVGR0g="; // "ABCDEFGH"
        assert_eq!(base64_pages(base64, 5).iter().map(|page| page.len()).collect::<Vec<_>>(), vec![4, 4, 4]);
        assert_eq!(decoded_size(base64), 8);
        assert_eq!(preview_of("aé", 2), "a");
    }
}
