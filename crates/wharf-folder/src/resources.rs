//! Resources from files: every file under `resources/` is a resource named by its path there,
//! at `SCHEME://PATH` (the scheme from `wharf.toml`, `resource` unless set), with the MIME type
//! its extension gives, as text when it is UTF-8 and as a blob when it is not.

use wharf_server::{ResourceDef, file_path_in_uri, mime_type_for};

/// The resource at `path` (below `resources/`) whose contents are `bytes`, its URI the path
/// percent-encoded as skills' files are.
pub(crate) fn resource(scheme: &str, path: &str, bytes: Vec<u8>) -> Result<ResourceDef, String> {
    let uri = format!("{scheme}://{}", file_path_in_uri(path)?);
    Ok(match String::from_utf8(bytes) {
        Ok(text) => ResourceDef::text(uri, path, text).mime_type(mime_type_for(path, true)),
        Err(not_text) => ResourceDef::bytes(uri, path, not_text.into_bytes()).mime_type(mime_type_for(path, false)),
    })
}

/// Checks a URI scheme: a letter, then letters, digits, `+`, `-` or `.`; not `skill`, whose
/// URIs are the skills'.
pub(crate) fn check_scheme(scheme: &str) -> Result<(), String> {
    if scheme == "skill" {
        return Err("`skill` is the scheme of the skills in skills/; choose another".to_owned());
    }
    let mut characters = scheme.chars();
    let valid = characters.next().is_some_and(|first| first.is_ascii_lowercase())
        && characters.all(|next| next.is_ascii_lowercase() || next.is_ascii_digit() || matches!(next, '+' | '-' | '.'));
    if valid { Ok(()) } else { Err(format!("`{scheme}` is not a URI scheme (lowercase letters, digits, + - .)")) }
}
