//! The MIME type of a file served as a resource, from its name: what skills and folders of
//! resources serve without being told.

/// The MIME type of a file named `name`; `text/plain` for an unknown extension when its
/// contents are text, `application/octet-stream` when they are not.
pub fn mime_type_for(name: &str, is_text: bool) -> &'static str {
    let extension = name.rsplit_once('.').map(|(_, extension)| extension.to_ascii_lowercase()).unwrap_or_default();
    let known = match extension.as_str() {
        "md" | "markdown" => "text/markdown",
        "txt" | "text" | "log" => "text/plain",
        "html" | "htm" => "text/html",
        "css" => "text/css",
        "csv" => "text/csv",
        "tsv" => "text/tab-separated-values",
        "js" | "mjs" | "cjs" => "text/javascript",
        "ts" => "text/x-typescript",
        "py" => "text/x-python",
        "rs" => "text/x-rust",
        "go" => "text/x-go",
        "java" => "text/x-java",
        "c" | "h" => "text/x-c",
        "sh" | "bash" => "text/x-shellscript",
        "json" => "application/json",
        "jsonl" | "ndjson" => "application/x-ndjson",
        "yaml" | "yml" => "application/yaml",
        "toml" => "application/toml",
        "xml" => "application/xml",
        "sql" => "application/sql",
        "svg" => "image/svg+xml",
        "png" => "image/png",
        "jpg" | "jpeg" => "image/jpeg",
        "gif" => "image/gif",
        "webp" => "image/webp",
        "ico" => "image/vnd.microsoft.icon",
        "pdf" => "application/pdf",
        "zip" => "application/zip",
        "gz" => "application/gzip",
        "wasm" => "application/wasm",
        "mp3" => "audio/mpeg",
        "wav" => "audio/wav",
        "ogg" => "audio/ogg",
        "mp4" => "video/mp4",
        _ => "",
    };
    match known {
        "" if is_text => "text/plain",
        "" => "application/octet-stream",
        known => known,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn types_come_from_the_extension_and_else_from_the_contents() {
        assert_eq!(mime_type_for("SKILL.md", true), "text/markdown");
        assert_eq!(mime_type_for("scripts/extract.PY", true), "text/x-python");
        assert_eq!(mime_type_for("logo.png", false), "image/png");
        assert_eq!(mime_type_for("Makefile", true), "text/plain");
        assert_eq!(mime_type_for("data.bin", false), "application/octet-stream");
    }
}
