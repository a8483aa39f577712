//! `wharf gateway CONFIG.toml`: the servers the file mounts, behind one endpoint, over stdio or
//! Streamable HTTP (`--http`); `--check` reads the file and names each mistake.

use std::collections::HashSet;
use std::path::{Path, PathBuf};
use std::process::ExitCode;

use clap::Args;
use serde::Deserialize;
use wharf::client::ClientOptions;
use wharf::gateway::{Gateway, Mount};
use wharf::protocol::ProtocolVersion;

/// `wharf gateway`'s arguments.
#[derive(Debug, Args)]
pub(crate) struct GatewayArgs {
    /// The file that names the mounts (`[[mount]]` tables: name, url or command, namespace,
    /// revision).
    config: PathBuf,
    /// Serve over Streamable HTTP at ADDRESS (`127.0.0.1:8080`; port 0 picks one) instead of
    /// stdio.
    #[arg(long, value_name = "ADDRESS")]
    http: Option<String>,
    /// Read the file, name each mistake, and exit: 0 when it is sound, 1 otherwise.
    #[arg(long)]
    check: bool,
}

/// The file, as written.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct GatewayFile {
    #[serde(default)]
    mount: Vec<MountEntry>,
}

/// One `[[mount]]`.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct MountEntry {
    /// In logs, errors and the namespace unless `namespace` says otherwise.
    name: String,
    /// A Streamable HTTP endpoint.
    url: Option<String>,
    /// A program and its arguments, started and spoken to on stdio.
    command: Option<Vec<String>>,
    /// What its names are listed under; `""` for none.
    namespace: Option<String>,
    /// The only revision spoken to this upstream.
    revision: Option<String>,
}

/// Reads `path` into mounts, or every mistake found, each naming its mount.
fn read_config(path: &Path) -> Result<Vec<Mount>, Vec<String>> {
    let text = std::fs::read_to_string(path).map_err(|err| vec![format!("{}: {err}", path.display())])?;
    let file: GatewayFile = toml::from_str(&text).map_err(|err| vec![format!("{}: {err}", path.display())])?;
    if file.mount.is_empty() {
        return Err(vec![format!("{}: no [[mount]]: name at least one server to mount", path.display())]);
    }
    let mut mistakes = Vec::new();
    let mut mounts = Vec::new();
    let mut names = HashSet::new();
    for (index, entry) in file.mount.into_iter().enumerate() {
        let label = if entry.name.trim().is_empty() {
            format!("mount {}", index + 1)
        } else {
            format!("mount `{}`", entry.name)
        };
        if entry.name.trim().is_empty() {
            mistakes.push(format!("{label}: `name` is empty"));
        } else if !names.insert(entry.name.clone()) {
            mistakes.push(format!("{label}: another mount has this name"));
        }
        let mount = match (&entry.url, &entry.command) {
            (Some(url), None) => Some(Mount::url(entry.name.clone(), url.clone())),
            (None, Some(command)) => match command.split_first() {
                Some((program, args)) => Some(Mount::command(entry.name.clone(), program.clone(), args.to_vec())),
                None => {
                    mistakes.push(format!("{label}: `command` is empty; give the program and its arguments"));
                    None
                }
            },
            (Some(_), Some(_)) => {
                mistakes.push(format!("{label}: give `url` or `command`, not both"));
                None
            }
            (None, None) => {
                mistakes.push(format!("{label}: give `url` (a Streamable HTTP endpoint) or `command` (a program)"));
                None
            }
        };
        let revision = match entry.revision.as_deref().map(|text| (text, ProtocolVersion::parse(text))) {
            None => None,
            Some((_, Some(version))) => Some(version),
            Some((text, None)) => {
                let known: Vec<&str> = ProtocolVersion::ALL.iter().map(|version| version.as_str()).collect();
                mistakes.push(format!("{label}: `revision = \"{text}\"` is none of {}", known.join(", ")));
                None
            }
        };
        if let Some(mut mount) = mount {
            if let Some(namespace) = entry.namespace {
                mount = mount.namespace(namespace);
            }
            if let Some(version) = revision {
                mount = mount.client_options(ClientOptions::default().protocol_version(version));
            }
            mounts.push(mount);
        }
    }
    if mistakes.is_empty() { Ok(mounts) } else { Err(mistakes) }
}

/// Runs `wharf gateway`.
pub(crate) fn gateway(args: GatewayArgs) -> ExitCode {
    let mounts = match read_config(&args.config) {
        Ok(mounts) => mounts,
        Err(mistakes) => {
            for mistake in mistakes {
                eprintln!("wharf gateway: {mistake}");
            }
            return ExitCode::FAILURE;
        }
    };
    if args.check {
        eprintln!("wharf gateway: {} is sound: {} mounts", args.config.display(), mounts.len());
        return ExitCode::SUCCESS;
    }
    wharf::logging::init();
    let runtime = match tokio::runtime::Builder::new_multi_thread().enable_all().build() {
        Ok(runtime) => runtime,
        Err(err) => {
            eprintln!("wharf gateway: no runtime: {err}");
            return ExitCode::FAILURE;
        }
    };
    let outcome = runtime.block_on(async {
        let gateway = mounts.into_iter().fold(Gateway::new("wharf-gateway", env!("CARGO_PKG_VERSION")), Gateway::mount);
        let server = gateway.build().await.map_err(|err| err.to_string())?;
        match &args.http {
            None => wharf::serve_stdio(server).await.map_err(|err| err.to_string()),
            Some(address) => {
                let listener =
                    tokio::net::TcpListener::bind(address).await.map_err(|err| format!("{address}: {err}"))?;
                let local = listener.local_addr().map_err(|err| err.to_string())?;
                eprintln!("wharf gateway: at http://{local}/mcp (Streamable HTTP); Ctrl-C stops it");
                let stop = async {
                    let _ = tokio::signal::ctrl_c().await;
                };
                wharf::serve_http(listener, server).with_graceful_shutdown(stop).await.map_err(|err| err.to_string())
            }
        }
    });
    match outcome {
        Ok(()) => ExitCode::SUCCESS,
        Err(message) => {
            eprintln!("wharf gateway: {message}");
            ExitCode::FAILURE
        }
    }
}
