//! Where the official MCP schemas and examples are, for the tests that read them: `../shared`
//! beside the repository (as `scripts/test` expects), or `$WHARF_SHARED_DIR`. Included with
//! `#[path]` by the test files of `wharf-protocol` and `wharf-server` that need it.

use std::ffi::OsString;
use std::path::PathBuf;

/// The directory holding `mcp-spec/<revision>/schema.json`; a missing one fails the test with
/// where the schemas come from and how to point at them.
pub(crate) fn shared_dir() -> PathBuf {
    shared_dir_from(std::env::var_os("WHARF_SHARED_DIR")).unwrap_or_else(|message| panic!("{message}"))
}

/// [`shared_dir`] with the variable's value given.
#[allow(dead_code, reason = "only spec_examples.rs tests the message itself")]
pub(crate) fn shared_dir_from(variable: Option<OsString>) -> Result<PathBuf, String> {
    let (dir, from) = match variable {
        Some(dir) => (PathBuf::from(dir), "from WHARF_SHARED_DIR"),
        None => (PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../../shared"), "../shared beside the repository"),
    };
    if dir.join("mcp-spec").is_dir() {
        return Ok(dir);
    }
    Err(format!(
        "this test reads the official MCP JSON Schemas, and {} ({from}) has no `mcp-spec` directory. \
         They are each revision's `schema.json` and `examples/` from the specification repository \
         (github.com/modelcontextprotocol/modelcontextprotocol, `schema/<revision>/`), laid out as \
         `mcp-spec/<revision>/schema.json`; set WHARF_SHARED_DIR to the directory that holds `mcp-spec`.",
        dir.display()
    ))
}
