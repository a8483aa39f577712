//! What the client commands print: tables of what a server offers, and results as a person
//! reads them (text as it is, structured content pretty-printed, images and audio saved to
//! new files). What a server wrote reaches a terminal with its control characters escaped.

use std::fs::OpenOptions;
use std::io::{IsTerminal, Write};
use std::path::{Path, PathBuf};

use base64::Engine;
use wharf::protocol::{ContentBlock, ResourceContents};

use crate::terminal_text::{escaped, escaped_lines, json_escaped};

/// How many names past the first free-looking one a save tries before it gives up.
const MAX_SAVE_ATTEMPTS: usize = 1000;

/// Prints rows under a header, each column as wide as its widest cell, the last one cut to
/// the line's width. Cells are a server's names and descriptions: their control characters
/// are escaped.
pub(crate) fn table(out: &mut impl Write, header: &[&str], rows: &[Vec<String>]) -> std::io::Result<()> {
    let columns = header.len();
    let rows: Vec<Vec<String>> = rows
        .iter()
        .map(|row| {
            let last = columns.saturating_sub(1);
            row.iter()
                .enumerate()
                .map(|(at, cell)| if at < last { escaped(cell).into_owned() } else { cell.clone() })
                .collect()
        })
        .collect();
    let mut widths: Vec<usize> = header.iter().map(|title| title.chars().count()).collect();
    for row in &rows {
        for (at, cell) in row.iter().enumerate().take(columns.saturating_sub(1)) {
            widths[at] = widths[at].max(cell.chars().count());
        }
    }
    let line_width = std::env::var("COLUMNS").ok().and_then(|text| text.parse().ok()).unwrap_or(120usize);
    let mut print = |cells: &[String]| -> std::io::Result<()> {
        let mut line = String::new();
        for (at, cell) in cells.iter().enumerate() {
            if at + 1 == columns {
                let room = line_width.saturating_sub(line.chars().count()).max(20);
                line.push_str(&cut(cell, room));
            } else {
                line.push_str(&format!("{cell:<width$}  ", width = widths[at]));
            }
        }
        writeln!(out, "{}", line.trim_end())
    };
    print(&header.iter().map(|title| (*title).to_owned()).collect::<Vec<_>>())?;
    for row in &rows {
        print(row)?;
    }
    Ok(())
}

/// The first line of `text`, its control characters escaped, at most `room` characters, with
/// `…` when cut.
pub(crate) fn cut(text: &str, room: usize) -> String {
    let first = escaped(text.lines().next().unwrap_or("").trim()).into_owned();
    if first.chars().count() <= room && !text.trim().contains('\n') {
        return first;
    }
    let kept: String = first.chars().take(room.saturating_sub(1)).collect();
    format!("{kept}…")
}

/// How a tool's own text (a result's, a resource's, a prompt's) is printed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum ToolText {
    /// As the server wrote it.
    Raw,
    /// With its control characters escaped but for line ends and tabs.
    Escaped,
}

impl ToolText {
    /// Raw when asked (`--raw`), or when stdout is not a terminal (a file or a pipe takes the
    /// text as it is); escaped on a terminal.
    pub(crate) fn for_stdout(raw: bool) -> ToolText {
        if raw || !std::io::stdout().is_terminal() { ToolText::Raw } else { ToolText::Escaped }
    }

    fn show(self, text: &str) -> std::borrow::Cow<'_, str> {
        match self {
            ToolText::Raw => text.into(),
            ToolText::Escaped => escaped_lines(text),
        }
    }
}

/// Where binary content goes: numbered files in `directory`, named after what produced them.
pub(crate) struct Saver {
    directory: PathBuf,
    stem: String,
    saved: usize,
}

impl Saver {
    pub(crate) fn new(directory: &Path, stem: &str) -> Saver {
        let stem: String =
            stem.chars().map(|c| if c.is_ascii_alphanumeric() || c == '-' || c == '_' { c } else { '_' }).collect();
        Saver { directory: directory.to_owned(), stem, saved: 0 }
    }

    /// Decodes base64 `data` and writes it to a new file, the next number whose name is free;
    /// returns what to print about it. The file is created, never opened: a file or a link
    /// already at a name (a symlink planted to a file of the user's) is passed over.
    fn save(&mut self, data: &str, mime_type: &str) -> String {
        let mime_type = escaped(mime_type);
        let bytes = match base64::engine::general_purpose::STANDARD.decode(data.trim()) {
            Ok(bytes) => bytes,
            Err(err) => return format!("[{mime_type} content that is not valid base64: {err}]"),
        };
        for _ in 0..MAX_SAVE_ATTEMPTS {
            self.saved += 1;
            let path = self.directory.join(format!("{}-{}.{}", self.stem, self.saved, extension(&mime_type)));
            // `create_new` is O_CREAT | O_EXCL, which refuses a link at the name, dangling or not.
            let written = OpenOptions::new().write(true).create_new(true).open(&path).and_then(|mut file| {
                file.write_all(&bytes)?;
                file.flush()
            });
            match written {
                Ok(()) => return format!("[{mime_type}, {} bytes, saved to {}]", bytes.len(), path.display()),
                Err(err) if err.kind() == std::io::ErrorKind::AlreadyExists => continue,
                Err(err) => {
                    return format!("[{mime_type}, {} bytes, not saved: {}: {err}]", bytes.len(), path.display());
                }
            }
        }
        format!(
            "[{mime_type}, {} bytes, not saved: {} names in {} were taken]",
            bytes.len(),
            MAX_SAVE_ATTEMPTS,
            self.directory.display()
        )
    }
}

fn extension(mime_type: &str) -> &str {
    match mime_type {
        "image/png" => "png",
        "image/jpeg" => "jpg",
        "image/gif" => "gif",
        "image/webp" => "webp",
        "image/svg+xml" => "svg",
        "audio/wav" | "audio/x-wav" => "wav",
        "audio/mpeg" => "mp3",
        "audio/ogg" => "ogg",
        "application/pdf" => "pdf",
        _ => "bin",
    }
}

/// Prints content blocks: text as `text` says, resources' text, binary saved by `saver`.
pub(crate) fn content(
    out: &mut impl Write,
    blocks: &[ContentBlock],
    saver: &mut Saver,
    text: ToolText,
) -> std::io::Result<()> {
    for block in blocks {
        match block {
            ContentBlock::Text(content) => writeln!(out, "{}", text.show(&content.text))?,
            ContentBlock::Image(image) => writeln!(out, "{}", saver.save(&image.data, &image.mime_type))?,
            ContentBlock::Audio(audio) => writeln!(out, "{}", saver.save(&audio.data, &audio.mime_type))?,
            ContentBlock::ResourceLink(link) => {
                writeln!(out, "[resource link: {} ({})]", escaped(&link.uri), escaped(&link.name))?
            }
            ContentBlock::Resource(embedded) => resource(out, &embedded.resource, saver, text)?,
        }
    }
    Ok(())
}

/// Prints one resource's contents, its text as `text` says.
pub(crate) fn resource(
    out: &mut impl Write,
    contents: &ResourceContents,
    saver: &mut Saver,
    text: ToolText,
) -> std::io::Result<()> {
    match contents {
        ResourceContents::Text(contents) => writeln!(out, "{}", text.show(&contents.text)),
        ResourceContents::Blob(blob) => {
            let mime_type = blob.mime_type.as_deref().unwrap_or("application/octet-stream");
            writeln!(out, "{}", saver.save(&blob.blob, mime_type))
        }
    }
}

/// Prints `value` as indented JSON, every character a terminal acts on escaped.
pub(crate) fn json(out: &mut impl Write, value: &impl serde::Serialize) -> std::io::Result<()> {
    let text = serde_json::to_string_pretty(value).map_err(std::io::Error::other)?;
    writeln!(out, "{}", json_escaped(&text))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn columns_line_up_and_the_last_one_is_cut() {
        let mut out = Vec::new();
        let rows = vec![vec!["a".to_owned(), "short".to_owned()], vec!["longer".to_owned(), "x".repeat(300)]];
        table(&mut out, &["NAME", "DESCRIPTION"], &rows).unwrap();
        let text = String::from_utf8(out).unwrap();
        let lines: Vec<&str> = text.lines().collect();
        assert_eq!(lines[0], "NAME    DESCRIPTION");
        assert_eq!(lines[1], "a       short");
        assert!(lines[2].ends_with('…') && lines[2].chars().count() <= 120, "{}", lines[2]);
    }

    #[test]
    fn binary_content_is_saved_to_numbered_files() {
        let directory = std::env::temp_dir().join(format!("wharf-render-{}", std::process::id()));
        std::fs::create_dir_all(&directory).unwrap();
        let mut saver = Saver::new(&directory, "get image");
        let said = saver.save("aGVsbG8=", "image/png");
        let path = directory.join("get_image-1.png");
        assert!(said.contains("5 bytes") && said.contains(&path.display().to_string()), "{said}");
        assert_eq!(std::fs::read(&path).unwrap(), b"hello");
        assert!(saver.save("!!", "image/png").contains("not valid base64"));
        std::fs::remove_dir_all(&directory).unwrap();
    }
}
