//! The demo's notes, a side effect to repeat safely: `note_add` appends one line to a file
//! (`wharf serve --demo-notes FILE`, which instances on one machine can share) or to memory,
//! once per idempotency key (the client's, else one derived from the caller and the text),
//! and `demo://notes` reads them.

use std::io::Write;
use std::path::PathBuf;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use wharf::idempotency::Idempotency;
use wharf::protocol::ToolAnnotations;
use wharf::{Args, Json, ResourceDef, ToolDef};

/// The resource that holds the notes.
pub const NOTES: &str = "demo://notes";

/// Where the notes go.
#[derive(Debug)]
pub(crate) struct Notes {
    file: Option<PathBuf>,
    memory: Mutex<String>,
}

impl Notes {
    /// Notes appended to `file` (made if missing), or kept in memory.
    pub(crate) fn new(file: Option<PathBuf>) -> Notes {
        Notes { file, memory: Mutex::default() }
    }

    fn append(&self, line: &str) -> std::io::Result<()> {
        let Some(path) = &self.file else {
            self.memory.lock().unwrap_or_else(std::sync::PoisonError::into_inner).push_str(line);
            return Ok(());
        };
        // One write of the whole line, opened to append: instances sharing the file never
        // interleave within a line.
        std::fs::OpenOptions::new().create(true).append(true).open(path)?.write_all(line.as_bytes())
    }

    fn read(&self) -> std::io::Result<String> {
        match &self.file {
            None => Ok(self.memory.lock().unwrap_or_else(std::sync::PoisonError::into_inner).clone()),
            Some(path) => match std::fs::read_to_string(path) {
                Err(err) if err.kind() == std::io::ErrorKind::NotFound => Ok(String::new()),
                other => other,
            },
        }
    }
}

#[derive(serde::Deserialize, schemars::JsonSchema)]
struct NoteArgs {
    /// The note, one line (line breaks become spaces).
    #[schemars(length(min = 1, max = 1000))]
    text: String,
    /// Hold the answer this many milliseconds after the note is written (to watch a repeated
    /// call wait for the first one's answer).
    #[serde(default)]
    #[schemars(range(max = 10000))]
    delay_ms: u64,
}

/// What `note_add` answers.
#[derive(serde::Serialize, schemars::JsonSchema)]
struct Noted {
    /// The line written.
    note: String,
    /// The process that wrote it.
    process: u32,
    /// When it was written, in Unix milliseconds.
    written_at_ms: u64,
}

/// The `note_add` tool and the `demo://notes` resource, its keys kept for `ttl`.
pub(crate) fn note_tool_and_resource(notes: Arc<Notes>, ttl: Duration) -> (ToolDef, ResourceDef) {
    let writer = notes.clone();
    let tool = ToolDef::new("note_add", move |Args(args): Args<NoteArgs>| {
        let notes = writer.clone();
        async move {
            let note = args.text.replace(['\r', '\n'], " ");
            notes.append(&format!("{note}\n")).map_err(|err| format!("The note was not written: {err}"))?;
            let now = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).unwrap_or_default();
            let noted =
                Noted { note, process: std::process::id(), written_at_ms: u64::try_from(now.as_millis()).unwrap_or(0) };
            tokio::time::sleep(Duration::from_millis(args.delay_ms)).await;
            Ok::<_, String>(Json(noted))
        }
    })
    .output::<Noted>()
    .description(
        "Append a line to the notes (demo://notes). Each call takes effect once: a repeated call with the same \
         `_meta[\"wharf/idempotencyKey\"]`, or without one the same text from the same caller, is answered with \
         the first call's result",
    )
    .annotations(ToolAnnotations {
        read_only_hint: Some(false),
        destructive_hint: Some(false),
        open_world_hint: Some(false),
        ..ToolAnnotations::default()
    })
    .idempotency(Idempotency::derived().ttl(ttl));
    let resource = ResourceDef::dynamic(NOTES, "notes", move |_call| {
        let notes = notes.clone();
        async move { notes.read().map_err(|err| wharf::RpcError::internal(format!("The notes do not read: {err}"))) }
    })
    .title("Notes")
    .description("The lines note_add wrote, one per call")
    .mime_type("text/plain");
    (tool, resource)
}
