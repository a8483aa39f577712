//! The demo's `long_report`: as many lines of text as asked, to see a result larger than a
//! client takes (`wharf serve --max-result-tokens N`) answered with a preview and a link, and
//! read in pages. Line `i` (from 1) is `format!("{i:07} {LINE_TEXT}\n")`, 64 bytes, so that a
//! reader can check the pages put together.

use wharf::{Args, ToolDef};

/// What follows each line's number.
const LINE_TEXT: &str = "the quick brown fox jumps over the lazy dog, once more.";

#[derive(serde::Deserialize, schemars::JsonSchema)]
struct ReportArgs {
    /// How many lines of 64 bytes (32768 lines make 2 MiB).
    #[schemars(range(min = 1, max = 200000))]
    lines: u32,
}

/// The report of `lines` lines.
fn report(lines: u32) -> String {
    let mut text = String::with_capacity(lines as usize * 64);
    for line in 1..=lines {
        text.push_str(&format!("{line:07} {LINE_TEXT}\n"));
    }
    text
}

/// The `long_report` tool.
pub(crate) fn long_report_tool() -> ToolDef {
    ToolDef::new("long_report", |Args(args): Args<ReportArgs>| async move { report(args.lines) })
        .description(
            "Write a report of as many 64-byte lines as asked (line i is its number in 7 digits, a space and a \
             fixed sentence): to see a result larger than the client takes arrive in pages",
        )
        .read_only()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_line_is_64_bytes_and_numbered() {
        let text = report(3);
        assert_eq!(text.len(), 192);
        assert!(text.lines().all(|line| line.len() == 63));
        assert!(text.starts_with("0000001 the quick") && text.contains("\n0000003 "));
    }
}
