//! `wharf new NAME`: a ready crate (a tool, a prompt, a resource, an in-memory test, a README
//! with the client configuration) whose `cargo test` passes as it is; with `--app`, one whose
//! tool has an MCP Apps view; or, with `--folder`, a folder that `wharf serve` serves.

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
    /// A crate whose tool has an MCP Apps view (a counter, drawn with a button that counts
    /// through a tool only the view calls).
    #[arg(long, conflicts_with = "folder")]
    app: bool,
    /// Depend on the `wharf` crate at this path (a clone's `crates/wharf`). By default the
    /// crate depends on the sources this `wharf` was built from, while they are still there:
    /// Wharf is not published on crates.io yet.
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
/// What `--app` writes instead of the crate's library and test, and its view.
const APP: [File; 3] = [
    ("src/lib.rs", include_str!("../templates/app/lib.rs")),
    ("tests/server.rs", include_str!("../templates/app/tests.rs")),
    ("src/view.html", include_str!("../templates/app/view.html")),
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
    let made =
        if args.folder { make_folder(&args.path, &name).map_err(NewError::Io) } else { make_crate(&args, &name) };
    match made {
        Ok(next) => {
            println!("Created {} in {}.", if args.folder { "a folder server" } else { "a crate" }, args.path.display());
            println!("{next}");
            ExitCode::SUCCESS
        }
        Err(NewError::Usage(message)) => exit::usage("new", &message),
        Err(NewError::Io(err)) => {
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

/// The `wharf` crate's sources this binary was built from (a clone's `crates/wharf`).
fn built_from() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../wharf")
}

/// The value of the new crate's `wharf` dependency: the path given, or else the sources this
/// binary was built from; until Wharf is published there is no version to name instead.
fn dependency_on_wharf(given: Option<&Path>, built_from: &Path) -> Result<String, NewError> {
    let path = match given {
        Some(path) => std::fs::canonicalize(path)
            .map_err(|err| NewError::Usage(format!("--wharf-path {}: {err}", path.display())))?,
        None => std::fs::canonicalize(built_from).map_err(|_| {
            NewError::Usage(format!(
                "the new crate depends on Wharf's sources, which are not on crates.io yet, and the ones this \
                 `wharf` was built from ({}) are gone: pass --wharf-path PATH, the `crates/wharf` directory of a \
                 Wharf clone",
                built_from.display()
            ))
        })?,
    };
    let manifest = std::fs::read_to_string(path.join("Cargo.toml")).unwrap_or_default();
    if package_name(&manifest) != Some("wharf") {
        return Err(NewError::Usage(format!(
            "{} is not the `wharf` crate (its Cargo.toml does not name it): pass --wharf-path PATH, the \
             `crates/wharf` directory of a Wharf clone",
            path.display()
        )));
    }
    Ok(format!("{{ path = {} }}", serde_json::to_string(&path.to_string_lossy()).unwrap_or_default()))
}

/// The `name` of a manifest's `[package]` (not a binary's or a dependency's).
fn package_name(manifest: &str) -> Option<&str> {
    let mut in_package = false;
    for line in manifest.lines().map(str::trim) {
        if line.starts_with('[') {
            in_package = line == "[package]";
        } else if in_package && let Some(value) = line.strip_prefix("name") {
            return value.trim_start().strip_prefix('=')?.trim().strip_prefix('"')?.strip_suffix('"');
        }
    }
    None
}

/// Why a crate was not made: a wrong command line (exit 2), or a file that could not be written.
#[derive(Debug)]
enum NewError {
    Usage(String),
    Io(std::io::Error),
}

impl From<std::io::Error> for NewError {
    fn from(err: std::io::Error) -> NewError {
        NewError::Io(err)
    }
}

fn make_crate(args: &NewArgs, name: &str) -> Result<String, NewError> {
    let mut wharf = dependency_on_wharf(args.wharf_path.as_deref(), &built_from())?;
    if args.app {
        // `{ path = "..." }` with the feature that serves views.
        wharf = format!("{}, features = [\"apps\"] }}", wharf.trim_end_matches(" }"));
    }
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
    let (offers, try_it) = if args.app {
        (
            "a tool (`show_counter`) drawn by an MCP Apps view (`src/view.html`, served as \
             `ui://NAME/counter`), whose button calls `increment`, a tool only the view calls"
                .replace("NAME", name),
            try_it.replace("add a=2 b=3", "show_counter"),
        )
    } else {
        ("a tool (`add`), a prompt (`review`) and a resource (`info://about`)".to_owned(), try_it)
    };
    let fill = |text: &str| {
        text.replace("{{name}}", name)
            .replace("{{crate}}", &name.replace('-', "_"))
            .replace("{{wharf}}", &wharf)
            .replace("{{config}}", &config)
            .replace("{{install}}", &install)
            .replace("{{run}}", &run)
            .replace("{{try}}", &try_it)
            .replace("{{offers}}", &offers)
    };
    for (path, template) in CRATE {
        write(&args.path.join(path), &fill(template))?;
    }
    if args.app {
        for (path, template) in APP {
            write(&args.path.join(path), &fill(template))?;
        }
    }
    write(&args.path.join("src/main.rs"), &fill(if args.http { MAIN_HTTP } else { MAIN_STDIO }))?;
    Ok(format!("It depends on wharf = {wharf}.\nNext: cd {} && cargo test", args.path.display()))
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

#[cfg(test)]
mod tests {
    use super::*;

    fn usage(result: Result<String, NewError>) -> String {
        match result {
            Err(NewError::Usage(message)) => message,
            other => panic!("expected a usage error, got {other:?}"),
        }
    }

    #[test]
    fn by_default_the_crate_depends_on_the_sources_this_binary_was_built_from() {
        let line = dependency_on_wharf(None, &built_from()).unwrap();
        let sources = std::fs::canonicalize(built_from()).unwrap();
        assert_eq!(line, format!("{{ path = {} }}", serde_json::to_string(&sources.to_string_lossy()).unwrap()));
    }

    #[test]
    fn without_those_sources_it_says_what_to_pass() {
        let gone = std::env::temp_dir().join("wharf-sources-that-are-gone/crates/wharf");
        let message = usage(dependency_on_wharf(None, &gone));
        assert!(message.contains(&gone.display().to_string()), "{message}");
        assert!(message.contains("not on crates.io yet"), "{message}");
        assert!(message.contains("pass --wharf-path PATH, the `crates/wharf` directory of a Wharf clone"), "{message}");
    }

    #[test]
    fn a_path_that_is_not_the_wharf_crate_is_refused() {
        let elsewhere = Path::new(env!("CARGO_MANIFEST_DIR"));
        let message = usage(dependency_on_wharf(Some(elsewhere), &built_from()));
        assert!(message.contains("is not the `wharf` crate"), "{message}");
        let missing = usage(dependency_on_wharf(Some(Path::new("/nonexistent/wharf")), &built_from()));
        assert!(missing.starts_with("--wharf-path /nonexistent/wharf: "), "{missing}");
    }
}
