//! `wharf new NAME`: a ready crate (a tool, a prompt, a resource, an in-memory test, a README
//! with the client configuration) whose `cargo test` passes as it is; or, with `--folder`, a
//! folder that `wharf serve` serves.

use std::path::{Path, PathBuf};
use std::process::ExitCode;

use clap::Args;

use crate::exit;

/// `wharf new`'s arguments.
#[derive(Debug, Args)]
pub(crate) struct NewArgs {
    /// Where to create it; the last part of the path is the server's (and crate's) name.
    #[arg(value_name = "NAME")]
    path: PathBuf,
    /// Serve over Streamable HTTP (http://127.0.0.1:8080/mcp) instead of stdio.
    #[arg(long, conflicts_with = "folder")]
    http: bool,
    /// A folder server (skills, prompts, resources, command tools) instead of a Rust crate.
    #[arg(long)]
    folder: bool,
    /// Depend on the `wharf` crate at this path instead of the published version.
    #[arg(long, value_name = "PATH", conflicts_with = "folder")]
    wharf_path: Option<PathBuf>,
}

/// A file of a template and where it goes.
type File = (&'static str, &'static str);

const CRATE: [File; 5] = [
    ("Cargo.toml", include_str!("../templates/crate/Cargo.toml")),
    ("src/lib.rs", include_str!("../templates/crate/lib.rs")),
    ("tests/server.rs", include_str!("../templates/crate/tests.rs")),
    ("README.md", include_str!("../templates/crate/README.md")),
    (".gitignore", include_str!("../templates/crate/gitignore")),
];
const MAIN_STDIO: &str = include_str!("../templates/crate/main_stdio.rs");
const MAIN_HTTP: &str = include_str!("../templates/crate/main_http.rs");

const FOLDER: [File; 5] = [
    ("wharf.toml", include_str!("../templates/folder/wharf.toml")),
    ("prompts/greet.md", include_str!("../templates/folder/prompts/greet.md")),
    ("resources/notes.md", include_str!("../templates/folder/resources/notes.md")),
    ("skills/getting-started/SKILL.md", include_str!("../templates/folder/skills/getting-started/SKILL.md")),
    ("README.md", include_str!("../templates/folder/README.md")),
];

pub(crate) fn new(args: NewArgs) -> ExitCode {
    let Some(name) = args.path.file_name().and_then(|name| name.to_str()).map(str::to_owned) else {
        return exit::usage("new", "give the new server a name (a path whose last part is the name)");
    };
    if let Err(why) = check_name(&name) {
        return exit::usage("new", &why);
    }
    if args.path.exists() && std::fs::read_dir(&args.path).map(|mut entries| entries.next().is_some()).unwrap_or(true) {
        return exit::usage("new", &format!("{} exists and is not empty", args.path.display()));
    }
    let made = if args.folder { make_folder(&args.path, &name) } else { make_crate(&args, &name) };
    match made {
        Ok(next) => {
            println!("Created {} in {}.", if args.folder { "a folder server" } else { "a crate" }, args.path.display());
            println!("{next}");
            ExitCode::SUCCESS
        }
        Err(err) => {
            eprintln!("wharf new: {}: {err}", args.path.display());
            ExitCode::FAILURE
        }
    }
}

/// A crate's name: letters, digits, `-` and `_`, starting with a letter.
fn check_name(name: &str) -> Result<(), String> {
    let starts_well = name.chars().next().is_some_and(|first| first.is_ascii_alphabetic());
    if starts_well && name.chars().all(|next| next.is_ascii_alphanumeric() || next == '-' || next == '_') {
        Ok(())
    } else {
        Err(format!("`{name}` cannot name a crate: use letters, digits, `-` and `_`, starting with a letter"))
    }
}

fn make_crate(args: &NewArgs, name: &str) -> std::io::Result<String> {
    let wharf = match &args.wharf_path {
        Some(path) => {
            let path = std::fs::canonicalize(path)?;
            format!("{{ path = {} }}", serde_json::to_string(&path.to_string_lossy()).unwrap_or_default())
        }
        None => format!("\"{}\"", env!("CARGO_PKG_VERSION")),
    };
    let absolute = absolute(&args.path);
    let binary = absolute.join("target/release").join(name);
    let binary = binary.to_string_lossy();
    let (config, install, run, try_it) = if args.http {
        (
            serde_json::json!({"mcpServers": {name: {"type": "http", "url": "http://127.0.0.1:8080/mcp"}}}),
            format!("wharf install claude-code {name} --url http://127.0.0.1:8080/mcp"),
            "cargo run                 # serves http://127.0.0.1:8080/mcp (LISTEN=HOST:PORT to change)".to_owned(),
            "wharf list http://127.0.0.1:8080/mcp\nwharf call http://127.0.0.1:8080/mcp add a=2 b=3".to_owned(),
        )
    } else {
        (
            serde_json::json!({"mcpServers": {name: {"command": binary}}}),
            format!("wharf install claude-desktop {name} -- {binary}"),
            "cargo run                 # waits for an MCP client on stdin".to_owned(),
            "wharf list -- cargo run -q\nwharf call add a=2 b=3 -- cargo run -q".to_owned(),
        )
    };
    let config = serde_json::to_string_pretty(&config).unwrap_or_default();
    let fill = |text: &str| {
        text.replace("{{name}}", name)
            .replace("{{crate}}", &name.replace('-', "_"))
            .replace("{{wharf}}", &wharf)
            .replace("{{config}}", &config)
            .replace("{{install}}", &install)
            .replace("{{run}}", &run)
            .replace("{{try}}", &try_it)
    };
    for (path, template) in CRATE {
        write(&args.path.join(path), &fill(template))?;
    }
    write(&args.path.join("src/main.rs"), &fill(if args.http { MAIN_HTTP } else { MAIN_STDIO }))?;
    Ok(format!("Next: cd {} && cargo test", args.path.display()))
}

fn make_folder(path: &Path, name: &str) -> std::io::Result<String> {
    let install = format!("wharf install claude-desktop {name} -- wharf serve {}", absolute(path).display());
    for (file, template) in FOLDER {
        write(&path.join(file), &template.replace("{{name}}", name).replace("{{install}}", &install))?;
    }
    Ok(format!("Next: wharf list -- wharf serve {}", path.display()))
}

fn absolute(path: &Path) -> PathBuf {
    std::env::current_dir().map(|here| here.join(path)).unwrap_or_else(|_| path.to_path_buf())
}

fn write(path: &Path, contents: &str) -> std::io::Result<()> {
    if let Some(parent) = path.parent() {
        std::fs::create_dir_all(parent)?;
    }
    std::fs::write(path, contents)
}
