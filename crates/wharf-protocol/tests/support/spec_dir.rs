//! Where the official MCP schemas and examples are, for the tests that read them: the
//! repository's own copy in `mcp-spec/` at its root, found from this crate's manifest, so a
//! clone at any path tests with nothing beside it. Included with `#[path]` by the test files
//! of `wharf-protocol` and `wharf-server` that need it.

use std::path::{Path, PathBuf};

/// The repository's `mcp-spec` directory, holding `<revision>/schema.json` and
/// `<revision>/examples/`.
pub(crate) fn spec_dir() -> PathBuf {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../mcp-spec");
    assert!(
        dir.join("2026-07-28/schema.json").is_file(),
        "{} has no `2026-07-28/schema.json`: the repository's copy of the official schemas is missing",
        dir.display()
    );
    dir
}
