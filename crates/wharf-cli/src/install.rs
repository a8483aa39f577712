//! `wharf install CLIENT NAME -- COMMAND ARGS...` (or `--url URL`): adds a server to the MCP
//! configuration file of Claude Code, Claude Desktop, Cursor or VS Code, in the place and shape
//! each documents, merged with what is there: the file is backed up first, the change shown as
//! a diff, and nothing written with `--dry-run`. `config_file.rs` reads and replaces the file
//! without writing through a link it did not make.

mod config_file;

use std::path::{Path, PathBuf};
use std::process::ExitCode;

use clap::{Args, ValueEnum};

use self::config_file::{ConfigFile, NotReplaced};
use crate::exit;
use crate::ordered_json::Json;

/// The clients `wharf install` knows.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub(crate) enum McpClient {
    /// Claude Code: `~/.claude.json` (user), or `.mcp.json` (project).
    ClaudeCode,
    /// Claude Desktop: `claude_desktop_config.json` (servers it starts; remote ones are added
    /// in its Connectors settings).
    ClaudeDesktop,
    /// Cursor: `~/.cursor/mcp.json` (user), or `.cursor/mcp.json` (project).
    Cursor,
    /// VS Code: `mcp.json` in the user profile, or `.vscode/mcp.json` (project).
    Vscode,
}

/// Whose configuration: the user's, or the project's in the current directory.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub(crate) enum Scope {
    User,
    Project,
}

/// `wharf install`'s arguments.
#[derive(Debug, Args)]
pub(crate) struct InstallArgs {
    /// The client whose configuration is changed.
    #[arg(value_enum)]
    client: McpClient,
    /// The server's name in that configuration (an entry of the same name is replaced).
    name: String,
    /// A server over Streamable HTTP at this URL, instead of a command.
    #[arg(long, value_name = "URL", conflicts_with = "command")]
    url: Option<String>,
    /// An environment variable for the server, as KEY=VALUE. Repeat for several.
    #[arg(long = "env", value_name = "KEY=VALUE")]
    env: Vec<String>,
    /// The user's configuration (the default), or the project's in the current directory.
    #[arg(long, value_enum, default_value = "user")]
    scope: Scope,
    /// Show the change without writing it.
    #[arg(long)]
    dry_run: bool,
    /// The server's command and arguments, after `--`.
    #[arg(last = true, value_name = "COMMAND")]
    command: Vec<String>,
}

pub(crate) fn install(args: InstallArgs) -> ExitCode {
    let entry = match entry(&args) {
        Ok(entry) => entry,
        Err(why) => return exit::usage("install", &why),
    };
    let file = match config_file(args.client, args.scope) {
        Ok(file) => file,
        Err(why) => return exit::usage("install", &why),
    };
    let project = if args.scope == Scope::Project { std::env::current_dir().ok() } else { None };
    let target = match ConfigFile::find(&file, project.as_deref()) {
        Ok(target) => target,
        Err(why) => {
            eprintln!("wharf install: {why}");
            return ExitCode::FAILURE;
        }
    };
    let key = servers_key(args.client);
    for _ in 0..config_file::ATTEMPTS {
        let snapshot = match target.read() {
            Ok(snapshot) => snapshot,
            Err(err) => {
                eprintln!("wharf install: cannot read {}: {err}", file.display());
                return ExitCode::FAILURE;
            }
        };
        let (config, replaced) = match merged(snapshot.text(), key, &args.name, &entry) {
            Ok(merged) => merged,
            Err(why) => return refuse(&file, &why),
        };
        let change = diff(&file, key, &args.name, replaced.as_ref().map(masked).as_ref(), &masked(&entry));
        if replaced.as_ref() == Some(&entry) {
            println!("{change}");
            println!("Nothing to change: {} already has this entry.", file.display());
            return ExitCode::SUCCESS;
        }
        if args.dry_run {
            println!("{change}");
            println!("(--dry-run: nothing written)");
            return ExitCode::SUCCESS;
        }
        let written = match target.link_target() {
            Some(real) => format!("{} (where the link {} leads)", real.display(), file.display()),
            None => file.display().to_string(),
        };
        match target.replace(&snapshot, &config.pretty()) {
            Ok(backup) => {
                println!("{change}");
                match backup {
                    Some(backup) => println!("Wrote {written} (the file before is {}).", backup.display()),
                    None => println!("Wrote {written}."),
                }
                println!("Restart {} (or reload its MCP servers) to use `{}`.", client_name(args.client), args.name);
                return ExitCode::SUCCESS;
            }
            // Another program wrote the file after it was read: merge into what it wrote.
            Err(NotReplaced::Changed) => continue,
            Err(NotReplaced::Failed(err)) => {
                eprintln!("wharf install: cannot write {written}: {err}");
                return ExitCode::FAILURE;
            }
        }
    }
    eprintln!(
        "wharf install: {} kept changing while it was being updated (another program is writing it); run again",
        file.display()
    );
    ExitCode::FAILURE
}

/// The configuration `text` holds with `entry` set as `name` under `key`, and the entry it
/// replaced; why not, for a file that is not the JSON object expected.
fn merged(text: Option<&str>, key: &str, name: &str, entry: &Json) -> Result<(Json, Option<Json>), String> {
    let mut config = match text.filter(|text| !text.trim().is_empty()) {
        None => Json::Object(Vec::new()),
        Some(text) => match serde_json::from_str::<Json>(text) {
            Ok(config @ Json::Object(_)) => config,
            Ok(_) => return Err("it is not a JSON object".to_owned()),
            Err(err) => return Err(format!("it is not valid JSON ({err})")),
        },
    };
    let Some(servers) = config.object_at(key).filter(|servers| matches!(servers, Json::Object(_))) else {
        return Err(format!("its `{key}` is not a JSON object"));
    };
    let replaced = servers.set(name, entry.clone());
    Ok((config, replaced))
}

fn refuse(file: &Path, why: &str) -> ExitCode {
    eprintln!("wharf install: {} is left as it is: {why}; fix or move it, then run again", file.display());
    ExitCode::FAILURE
}

/// The entry for the server, in the client's shape.
fn entry(args: &InstallArgs) -> Result<Json, String> {
    let string = |text: &str| Json::String(text.to_owned());
    let mut env = Vec::new();
    for pair in &args.env {
        let (key, value) = pair.split_once('=').ok_or_else(|| format!("--env `{pair}` is not KEY=VALUE"))?;
        env.push((key.to_owned(), string(value)));
    }
    let typed = matches!(args.client, McpClient::ClaudeCode | McpClient::Vscode);
    let mut members = Vec::new();
    match (&args.url, args.command.split_first()) {
        (Some(url), _) => {
            if args.client == McpClient::ClaudeDesktop {
                return Err("Claude Desktop's configuration file starts servers only; add a remote server in its \
                            Settings > Connectors, or give the command of a local one after `--`"
                    .to_owned());
            }
            if !(url.starts_with("http://") || url.starts_with("https://")) {
                return Err(format!("--url `{url}` is not an http(s) URL"));
            }
            if typed {
                members.push(("type".to_owned(), string("http")));
            }
            members.push(("url".to_owned(), string(url)));
            if !env.is_empty() {
                return Err("--env is for servers the client starts, not for --url".to_owned());
            }
        }
        (None, Some((program, arguments))) => {
            if typed {
                members.push(("type".to_owned(), string("stdio")));
            }
            members.push(("command".to_owned(), string(&absolute_if_path(program, true))));
            let arguments = arguments.iter().map(|argument| string(&absolute_if_path(argument, false))).collect();
            members.push(("args".to_owned(), Json::Array(arguments)));
            if !env.is_empty() {
                members.push(("env".to_owned(), Json::Object(env)));
            }
        }
        (None, None) => return Err("give the server's command after `--`, or --url".to_owned()),
    }
    Ok(Json::Object(members))
}

/// `word` made absolute when it names something relative to the current directory: clients
/// start servers from a directory of their own. A program is taken as a path only when it has
/// a `/` (else it is looked up on PATH); an argument when a file or directory of that name is
/// here.
fn absolute_if_path(word: &str, is_program: bool) -> String {
    let path = Path::new(word);
    let is_path = if is_program { word.contains('/') } else { !word.starts_with('-') && path.exists() };
    if !is_path || path.is_absolute() {
        return word.to_owned();
    }
    std::fs::canonicalize(path).map(|path| path.to_string_lossy().into_owned()).unwrap_or_else(|_| word.to_owned())
}

/// `entry` with the values of its `env` hidden, to be shown: they are often secrets.
fn masked(entry: &Json) -> Json {
    let mut shown = entry.clone();
    if let Some(Json::Object(variables)) = shown.get("env").cloned() {
        let hidden = variables.into_iter().map(|(name, _)| (name, Json::String("…".to_owned()))).collect();
        shown.set("env", Json::Object(hidden));
    }
    shown
}

/// The member holding the servers.
fn servers_key(client: McpClient) -> &'static str {
    if client == McpClient::Vscode { "servers" } else { "mcpServers" }
}

fn client_name(client: McpClient) -> &'static str {
    match client {
        McpClient::ClaudeCode => "Claude Code",
        McpClient::ClaudeDesktop => "Claude Desktop",
        McpClient::Cursor => "Cursor",
        McpClient::Vscode => "VS Code",
    }
}

/// Where the client keeps its configuration, as each documents it.
fn config_file(client: McpClient, scope: Scope) -> Result<PathBuf, String> {
    if scope == Scope::Project {
        let here = std::env::current_dir().map_err(|err| format!("no current directory: {err}"))?;
        return match client {
            McpClient::ClaudeCode => Ok(here.join(".mcp.json")),
            McpClient::Cursor => Ok(here.join(".cursor/mcp.json")),
            McpClient::Vscode => Ok(here.join(".vscode/mcp.json")),
            McpClient::ClaudeDesktop => Err("Claude Desktop has no project configuration; use --scope user".to_owned()),
        };
    }
    let home = std::env::var_os("HOME").map(PathBuf::from).ok_or("HOME is not set")?;
    // Application data: ~/Library/Application Support on macOS, %APPDATA% on Windows, the XDG
    // configuration directory elsewhere.
    let app_data = if cfg!(target_os = "macos") {
        home.join("Library/Application Support")
    } else if cfg!(windows) {
        std::env::var_os("APPDATA").map(PathBuf::from).unwrap_or_else(|| home.join("AppData/Roaming"))
    } else {
        std::env::var_os("XDG_CONFIG_HOME")
            .filter(|dir| !dir.is_empty())
            .map(PathBuf::from)
            .unwrap_or_else(|| home.join(".config"))
    };
    Ok(match client {
        McpClient::ClaudeCode => home.join(".claude.json"),
        McpClient::ClaudeDesktop => app_data.join("Claude/claude_desktop_config.json"),
        McpClient::Cursor => home.join(".cursor/mcp.json"),
        McpClient::Vscode => app_data.join("Code/User/mcp.json"),
    })
}

/// The change to the entry, as a unified diff of it.
fn diff(file: &Path, key: &str, name: &str, before: Option<&Json>, after: &Json) -> String {
    let mut text = format!("--- {}\n+++ {}\n@@ {key}.{name} @@\n", file.display(), file.display());
    let lines = |json: &Json| format!("{}: {}", serde_json::to_string(name).unwrap_or_default(), json.pretty());
    if let Some(before) = before {
        for line in lines(before).lines() {
            text.push_str(&format!("-{line}\n"));
        }
    }
    for line in lines(after).lines() {
        text.push_str(&format!("+{line}\n"));
    }
    text.pop();
    text
}
