//! `include_view!("DIR")`: an MCP Apps view written as a directory of assets (`index.html`, the
//! scripts and style sheets it links by relative path), inlined into one HTML document when the
//! crate is built, since a host renders a view from a single resource. Each file read is also
//! named to the compiler (`include_bytes!`), so that editing one rebuilds the crate.

use std::path::{Component, Path, PathBuf};

use proc_macro2::{Span, TokenStream};
use quote::quote;
use syn::LitStr;

/// The largest asset inlined, so that a mistake (a video linked as a script) fails clearly.
const MAX_ASSET: u64 = 8 * 1024 * 1024;

pub(crate) fn expand(input: TokenStream) -> syn::Result<TokenStream> {
    let directory: LitStr = syn::parse2(input)?;
    let span = directory.span();
    let base = std::env::var("CARGO_MANIFEST_DIR")
        .map(PathBuf::from)
        .map_err(|_| syn::Error::new(span, "include_view! needs CARGO_MANIFEST_DIR (run through cargo)"))?;
    let root = View { base, directory: directory.value() };
    let mut read = Vec::new();
    let index = root.read_text("index.html", &mut read).map_err(|why| syn::Error::new(span, why))?;
    let html = inline(&index, &root, &mut read).map_err(|why| syn::Error::new(span, why))?;
    let tracked = read.iter().map(|path| {
        let path = LitStr::new(&path.to_string_lossy(), Span::call_site());
        quote! { const _: &[u8] = ::core::include_bytes!(#path); }
    });
    Ok(quote! { { #(#tracked)* #html } })
}

/// The view's directory: the crate's, and the directory named in it.
struct View {
    base: PathBuf,
    directory: String,
}

impl View {
    /// The file `relative` of the view's directory, read as UTF-8; it must stay inside the
    /// directory. Messages name it from the crate's directory, wherever the crate is.
    fn read_text(&self, relative: &str, read: &mut Vec<PathBuf>) -> Result<String, String> {
        let named = format!("{}/{relative}", self.directory.trim_end_matches('/'));
        let inside =
            Path::new(relative).components().all(|part| matches!(part, Component::Normal(_) | Component::CurDir));
        if !inside {
            return Err(format!("`{relative}` is outside the view's directory: link files inside it"));
        }
        let path = self.base.join(&named);
        let size = std::fs::metadata(&path).map_err(|err| format!("{named}: {}", reason(&err)))?.len();
        if size > MAX_ASSET {
            return Err(format!("{named}: {size} bytes, more than a view's asset may be ({MAX_ASSET})"));
        }
        let text = std::fs::read_to_string(&path).map_err(|err| format!("{named}: {}", reason(&err)))?;
        read.push(path.canonicalize().unwrap_or(path));
        Ok(text)
    }
}

/// An I/O error in words that do not depend on the platform's message.
fn reason(err: &std::io::Error) -> String {
    match err.kind() {
        std::io::ErrorKind::NotFound => "no such file".to_owned(),
        std::io::ErrorKind::InvalidData => "not UTF-8 text".to_owned(),
        _ => err.to_string(),
    }
}

/// True for a link to a file of the view's own directory: no scheme, not protocol-relative,
/// not absolute, not a fragment.
fn is_local(link: &str) -> bool {
    !(link.is_empty()
        || link.contains("://")
        || link.starts_with("//")
        || link.starts_with('/')
        || link.starts_with('#')
        || link.starts_with("data:"))
}

/// The value of attribute `name` in a tag's text (`<script src="a.js" defer>`), quoted or not.
fn attribute<'a>(tag: &'a str, name: &str) -> Option<&'a str> {
    let lower = tag.to_ascii_lowercase();
    let mut from = 0;
    while let Some(found) = lower[from..].find(name) {
        let at = from + found;
        from = at + name.len();
        let before_ok = lower[..at].ends_with(|c: char| c.is_ascii_whitespace());
        let rest = tag[from..].trim_start();
        if !before_ok || !rest.starts_with('=') {
            continue;
        }
        let value = rest[1..].trim_start();
        return match value.chars().next() {
            Some(quote @ ('"' | '\'')) => value[1..].split(quote).next(),
            _ => value.split(|c: char| c.is_ascii_whitespace() || c == '>').next(),
        };
    }
    None
}

/// `html` with every local `<script src>` and `<link rel="stylesheet" href>` replaced by the
/// file's contents, in a `<script>` or `<style>` element.
fn inline(html: &str, root: &View, read: &mut Vec<PathBuf>) -> Result<String, String> {
    let mut out = String::with_capacity(html.len());
    let mut rest = html;
    while let Some(open) = rest.find('<') {
        out.push_str(&rest[..open]);
        rest = &rest[open..];
        let Some(close) = rest.find('>') else { break };
        let tag = &rest[..=close];
        let name = tag[1..].split(|c: char| c.is_ascii_whitespace() || c == '>' || c == '/').next().unwrap_or("");
        let name = name.to_ascii_lowercase();
        if name == "script"
            && let Some(source) = attribute(tag, "src").filter(|source| is_local(source))
        {
            let script = root.read_text(source, read)?;
            // The element's own end tag goes with it.
            let after = &rest[close + 1..];
            let end = after.to_ascii_lowercase().find("</script>").map_or(0, |end| end + "</script>".len());
            let module = attribute(tag, "type").is_some_and(|kind| kind.eq_ignore_ascii_case("module"));
            out.push_str(if module { "<script type=\"module\">" } else { "<script>" });
            // A script must not end its element early.
            out.push_str(&script.replace("</script", "<\\/script"));
            out.push_str("</script>");
            rest = &after[end..];
            continue;
        }
        if name == "link"
            && attribute(tag, "rel").is_some_and(|rel| rel.eq_ignore_ascii_case("stylesheet"))
            && let Some(href) = attribute(tag, "href").filter(|href| is_local(href))
        {
            let style = root.read_text(href, read)?;
            out.push_str("<style>");
            out.push_str(&style.replace("</style", "<\\/style"));
            out.push_str("</style>");
            rest = &rest[close + 1..];
            continue;
        }
        out.push_str(tag);
        rest = &rest[close + 1..];
    }
    out.push_str(rest);
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn attributes_are_read_quoted_or_not() {
        assert_eq!(attribute("<script src=\"app.js\" defer>", "src"), Some("app.js"));
        assert_eq!(attribute("<link rel=stylesheet href='a b.css'>", "href"), Some("a b.css"));
        assert_eq!(attribute("<link rel=stylesheet href='a.css'>", "rel"), Some("stylesheet"));
        assert_eq!(attribute("<script data-src=\"x.js\">", "src"), None, "a longer name is not it");
        assert_eq!(attribute("<script>", "src"), None);
    }

    #[test]
    fn a_link_out_of_the_directory_or_to_a_missing_file_is_refused_by_name() {
        let view = View { base: PathBuf::from(env!("CARGO_MANIFEST_DIR")), directory: "src".to_owned() };
        let mut read = Vec::new();
        let escaped = inline("<script src=\"../Cargo.toml\"></script>", &view, &mut read).unwrap_err();
        assert_eq!(escaped, "`../Cargo.toml` is outside the view's directory: link files inside it");
        let missing = inline("<link rel=stylesheet href=nope.css>", &view, &mut read).unwrap_err();
        assert_eq!(missing, "src/nope.css: no such file");
        let inlined = inline("<p>x</p><script src=\"lib.rs\"></script><p>y</p>", &view, &mut read).unwrap();
        assert!(inlined.starts_with("<p>x</p><script>//! Attribute macros") && inlined.ends_with("</script><p>y</p>"));
        assert_eq!(read.len(), 1, "the file inlined is tracked");
    }

    #[test]
    fn only_files_of_the_directory_are_local() {
        assert!(is_local("app.js") && is_local("./lib/app.js"));
        for remote in ["https://cdn.example.com/a.js", "//cdn.example.com/a.js", "/abs.js", "#x", "data:text/js,1"] {
            assert!(!is_local(remote), "{remote}");
        }
    }
}
