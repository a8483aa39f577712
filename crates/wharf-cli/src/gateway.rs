//! `wharf gateway CONFIG.toml`: the servers the file mounts, behind one endpoint, over stdio or
//! Streamable HTTP (`--http`, with the options `wharf serve` has and a health endpoint);
//! `--check` reads the file and names each mistake.

use std::collections::{BTreeMap, HashSet};
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::sync::Arc;
use std::time::Duration;

use clap::Args;
use serde::Deserialize;
use wharf::client::ClientOptions;
use wharf::client::oauth::OAuth;
use wharf::gateway::{Gateway, GatewayHandle, Health, Mount};
use wharf::protocol::ProtocolVersion;

use crate::remote::{self, Reached, RemoteArgs, Served, auth_summary, prepare_builder, prepare_http};

/// `wharf gateway`'s arguments.
#[derive(Debug, Args)]
pub(crate) struct GatewayArgs {
    /// The file that names the mounts: `[[mount]]` tables with name, url or command,
    /// namespace, revision, and the upstream's environment, directory, headers and timeout
    /// (crates/wharf/guide/gateway.md describes each).
    config: PathBuf,
    /// Read the file, name each mistake, and exit: 0 when it is sound, 1 otherwise.
    #[arg(long)]
    check: bool,
    #[command(flatten)]
    remote: RemoteArgs,
}

/// The file, as written.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct GatewayFile {
    #[serde(default)]
    mount: Vec<MountEntry>,
}

/// One `[[mount]]`.
#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
struct MountEntry {
    /// In logs, errors, the health endpoint, and the namespace unless `namespace` says
    /// otherwise.
    name: String,
    /// A Streamable HTTP endpoint.
    url: Option<String>,
    /// A program and its arguments, started and spoken to on stdio.
    command: Option<Vec<String>>,
    /// An HTTP API's OpenAPI document (a file, relative to this file, or an http(s) URL): its
    /// operations are the mount's tools, served in the gateway's process.
    openapi: Option<String>,
    /// Where an `openapi` mount's calls go: `http(s)://HOST[:PORT][/PREFIX]`.
    base_url: Option<String>,
    /// An `openapi` mount's credentials: each of the document's security schemes named, with
    /// the gateway's environment variable holding its value.
    #[serde(default)]
    credentials: BTreeMap<String, String>,
    /// What its names are listed under; `""` for none.
    namespace: Option<String>,
    /// The only revision spoken to this upstream.
    revision: Option<String>,
    /// The program's environment: these values, over the gateway's own environment.
    #[serde(default)]
    env: BTreeMap<String, String>,
    /// The program's environment: each variable set to the gateway's variable of the name
    /// given, read at start (secrets stay out of the file).
    #[serde(default)]
    env_from: BTreeMap<String, String>,
    /// The program's working directory; a relative one is the config file's directory's.
    cwd: Option<PathBuf>,
    /// Headers sent to a URL upstream with every request.
    #[serde(default)]
    headers: BTreeMap<String, String>,
    /// Headers sent to a URL upstream, each set to the gateway's environment variable named.
    #[serde(default)]
    headers_from: BTreeMap<String, String>,
    /// The gateway's environment variable holding a bearer token for a URL upstream
    /// (`Authorization: Bearer ...`). The gateway's own clients' tokens never go upstream.
    bearer_from: Option<String>,
    /// How long each request to the upstream may take, in seconds (60 unless given).
    timeout: Option<f64>,
    /// `"per-client"`: each client of the gateway (a 2025 session, a principal) gets an
    /// upstream session of its own, ended with it, for an upstream that keeps state per
    /// session; `"shared"` (the default): one serves all.
    sessions: Option<String>,
    /// OAuth client credentials for a URL upstream that asks for a token (401): the gateway
    /// gets its own, from the upstream's authorization server.
    oauth: Option<OAuthEntry>,
    /// Only the tools and prompts whose upstream names match one of these (`*`, `?`).
    #[serde(default)]
    include: Vec<String>,
    /// Not the tools and prompts whose upstream names match one of these.
    #[serde(default)]
    exclude: Vec<String>,
    /// Only the tools the upstream marks read-only (`readOnlyHint`).
    #[serde(default)]
    read_only: bool,
    /// New names (before the namespace) for tools and prompts, by upstream name.
    #[serde(default)]
    rename: BTreeMap<String, String>,
    /// Descriptions instead of the upstream's, by upstream name.
    #[serde(default)]
    descriptions: BTreeMap<String, String>,
    /// The OAuth scopes a principal needs to see and use the tools and prompts whose upstream
    /// names match each pattern (with `--auth-issuer`).
    #[serde(default)]
    scopes: BTreeMap<String, Vec<String>>,
    /// `"lazy"`: the upstream starts with the gateway's first request rather than with the
    /// gateway (`"at-start"`, the default).
    start: Option<String>,
    /// Directories (or `file://` URIs) the upstream is given when it asks for its roots outside
    /// any client's request (as a program does when it starts); a relative path is the config
    /// file's directory's.
    roots: Option<Vec<String>>,
}

/// `[mount.oauth]`: the gateway's own client credentials at the upstream's authorization server.
#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
struct OAuthEntry {
    /// The client id registered for the gateway.
    client_id: String,
    /// The gateway's environment variable holding the client secret.
    client_secret_from: String,
    /// Scopes to ask for.
    #[serde(default)]
    scopes: Vec<String>,
}

/// Reads `path` into mounts, each with its entry, or every mistake found, each naming its
/// mount.
fn read_config(path: &Path) -> Result<Vec<(MountEntry, Mount)>, Vec<String>> {
    let text = std::fs::read_to_string(path).map_err(|err| vec![format!("{}: {err}", path.display())])?;
    let file: GatewayFile = toml::from_str(&text).map_err(|err| vec![format!("{}: {err}", path.display())])?;
    if file.mount.is_empty() {
        return Err(vec![format!("{}: no [[mount]]: name at least one server to mount", path.display())]);
    }
    let base = path.parent().unwrap_or(Path::new("."));
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
        let before = mistakes.len();
        let mount = mount_of(&entry, &label, base, &mut mistakes);
        if let Some(mount) = mount.filter(|_| mistakes.len() == before) {
            mounts.push((entry, mount));
        }
    }
    if mistakes.is_empty() { Ok(mounts) } else { Err(mistakes) }
}

/// The mount `entry` describes; its mistakes, each starting with `label`, go to `mistakes`.
fn mount_of(entry: &MountEntry, label: &str, base: &Path, mistakes: &mut Vec<String>) -> Option<Mount> {
    let mut options = ClientOptions::default();
    let is_command = entry.command.is_some();
    let mount = match (&entry.url, &entry.command, &entry.openapi) {
        (Some(url), None, None) => Some(Mount::url(entry.name.clone(), url.clone())),
        (None, Some(command), None) => match command.split_first() {
            Some((program, args)) => Some(Mount::command(entry.name.clone(), program.clone(), args.to_vec())),
            None => {
                mistakes.push(format!("{label}: `command` is empty; give the program and its arguments"));
                None
            }
        },
        (None, None, Some(spec)) => match &entry.base_url {
            Some(base_url) => match crate::openapi::server_for_mount(spec, base, base_url, &entry.credentials) {
                Ok(server) => Some(Mount::server(entry.name.clone(), server)),
                Err(err) => {
                    mistakes.push(format!("{label}: {err}"));
                    None
                }
            },
            None => {
                mistakes.push(format!("{label}: an `openapi` mount needs `base_url`: where the API's calls go"));
                None
            }
        },
        (None, None, None) => {
            mistakes.push(format!(
                "{label}: give `url` (a Streamable HTTP endpoint), `command` (a program) or `openapi` (an API's document)"
            ));
            None
        }
        _ => {
            mistakes.push(format!("{label}: give one of `url`, `command` and `openapi`, not several"));
            None
        }
    };
    match entry.revision.as_deref().map(|text| (text, ProtocolVersion::parse(text))) {
        None => {}
        Some((_, Some(version))) => options = options.protocol_version(version),
        Some((text, None)) => {
            let known: Vec<&str> = ProtocolVersion::ALL.iter().map(|version| version.as_str()).collect();
            mistakes.push(format!("{label}: `revision = \"{text}\"` is none of {}", known.join(", ")));
        }
    }
    let environment = |variable: &str, mistakes: &mut Vec<String>| match std::env::var(variable) {
        Ok(value) => Some(value),
        Err(_) => {
            mistakes.push(format!("{label}: the environment variable `{variable}` is not set"));
            None
        }
    };
    let for_command =
        [("env", !entry.env.is_empty()), ("env_from", !entry.env_from.is_empty()), ("cwd", entry.cwd.is_some())];
    for (key, given) in [("base_url", entry.base_url.is_some()), ("credentials", !entry.credentials.is_empty())] {
        if given && entry.openapi.is_none() {
            mistakes.push(format!("{label}: `{key}` is for an `openapi` mount"));
        }
    }
    let for_url = [
        ("oauth", entry.oauth.is_some()),
        ("headers", !entry.headers.is_empty()),
        ("headers_from", !entry.headers_from.is_empty()),
        ("bearer_from", entry.bearer_from.is_some()),
    ];
    for (key, given) in for_command {
        if given && !is_command {
            mistakes.push(format!("{label}: `{key}` is for a `command` upstream"));
        }
    }
    for (key, given) in for_url {
        if given && entry.url.is_none() {
            mistakes.push(format!("{label}: `{key}` is for a `url` upstream"));
        }
    }
    for (name, value) in &entry.env {
        options = options.env(name, value);
    }
    for (name, variable) in &entry.env_from {
        if let Some(value) = environment(variable, mistakes) {
            options = options.env(name, value);
        }
    }
    if let Some(cwd) = &entry.cwd {
        let directory = base.join(cwd);
        if directory.is_dir() {
            options = options.current_dir(directory);
        } else {
            mistakes.push(format!("{label}: `cwd` {} is not a directory", directory.display()));
        }
    }
    for (name, value) in &entry.headers {
        options = options.header(name, value);
    }
    for (name, variable) in &entry.headers_from {
        if let Some(value) = environment(variable, mistakes) {
            options = options.header(name, value);
        }
    }
    if let Some(variable) = &entry.bearer_from
        && let Some(token) = environment(variable, mistakes)
    {
        options = options.bearer(token.trim());
    }
    if let Some(oauth) = &entry.oauth
        && let Some(secret) = environment(&oauth.client_secret_from, mistakes)
    {
        let grant = OAuth::client_credentials(&oauth.client_id, secret.trim()).scopes(oauth.scopes.iter().cloned());
        options = options.oauth(grant);
    }
    match entry.timeout {
        None => {}
        Some(seconds) if seconds.is_finite() && seconds > 0.0 && seconds <= 86_400.0 => {
            options = options.timeout(Duration::from_secs_f64(seconds));
        }
        Some(seconds) => mistakes.push(format!("{label}: `timeout = {seconds}` is not between 0 and 86400 seconds")),
    }
    let mut mount = mount?.client_options(options);
    if let Some(namespace) = &entry.namespace {
        mount = mount.namespace(namespace.clone());
    }
    match entry.start.as_deref() {
        None | Some("at-start") => {}
        Some("lazy") => mount = mount.start_lazily(),
        Some(other) => mistakes.push(format!("{label}: `start = \"{other}\"` is neither \"at-start\" nor \"lazy\"")),
    }
    match entry.sessions.as_deref() {
        None | Some("shared") => {}
        Some("per-client") => mount = mount.session_per_client(),
        Some(other) => {
            mistakes.push(format!("{label}: `sessions = \"{other}\"` is neither \"shared\" nor \"per-client\""));
        }
    }
    mount = mount.include(entry.include.iter().cloned()).exclude(entry.exclude.iter().cloned());
    if entry.read_only {
        mount = mount.read_only_tools();
    }
    for (name, new_name) in &entry.rename {
        mount = mount.rename(name, new_name);
    }
    for (name, description) in &entry.descriptions {
        mount = mount.describe(name, description);
    }
    for (pattern, scopes) in &entry.scopes {
        mount = mount.scopes(pattern, scopes.iter().cloned());
    }
    if let Some(roots) = &entry.roots {
        let mut uris = Vec::with_capacity(roots.len());
        for root in roots {
            if root.starts_with("file://") {
                uris.push(root.clone());
                continue;
            }
            match std::fs::canonicalize(base.join(root)) {
                Ok(directory) if directory.is_dir() => uris.push(file_uri(&directory)),
                _ => mistakes.push(format!("{label}: the root `{root}` is not a directory")),
            }
        }
        mount = mount.roots(uris);
    }
    Some(mount)
}

/// The `file://` URI of an absolute path, each byte outside RFC 3986's unreserved characters
/// and `/` percent-encoded (on Windows, from the path as UTF-8, its separators made `/`).
fn file_uri(path: &Path) -> String {
    #[cfg(unix)]
    let bytes = std::os::unix::ffi::OsStrExt::as_bytes(path.as_os_str()).to_vec();
    #[cfg(not(unix))]
    let bytes = format!("/{}", path.to_string_lossy().replace('\\', "/")).into_bytes();
    let mut uri = String::from("file://");
    for &byte in &bytes {
        if byte.is_ascii_alphanumeric() || b"-._~/".contains(&byte) {
            uri.push(char::from(byte));
        } else {
            uri.push_str(&format!("%{byte:02X}"));
        }
    }
    uri
}

/// What `wharf gateway` serves, as the resource metadata and messages name it.
const SERVED: Served =
    Served { command: "wharf gateway", resource_name: "Wharf gateway", scopes: &[], service: "wharf-gateway" };

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
    let remote = &args.remote;
    // The upstreams' stderr lines are logged under their mounts' names.
    let telemetry = match remote::start_observing(remote, &SERVED, "warn,wharf_client::server_stderr=info") {
        Ok(telemetry) => telemetry,
        Err(message) => {
            eprintln!("wharf gateway: {message}");
            return ExitCode::FAILURE;
        }
    };
    let runtime = match tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .on_thread_start(wharf_demo::hold_ballast_on_this_thread)
        .build()
    {
        Ok(runtime) => runtime,
        Err(err) => {
            eprintln!("wharf gateway: no runtime: {err}");
            return ExitCode::FAILURE;
        }
    };
    let outcome = run(&args, mounts, &runtime, telemetry.clone());
    remote::finish(&SERVED, runtime, telemetry, outcome)
}

/// Builds the gateway and serves it until stdin closes or a signal stops it.
fn run(
    args: &GatewayArgs,
    mounts: Vec<(MountEntry, Mount)>,
    runtime: &tokio::runtime::Runtime,
    telemetry: Option<Arc<wharf::otel::Telemetry>>,
) -> Result<(), String> {
    // Heard from before the first program starts: SIGTERM's default action would end the
    // gateway and leave its programs running, and a stdio client sends it to a gateway it
    // gives up on (the official SDKs, to one slow to exit and to the one they start only to
    // probe).
    let mut stop = {
        let _entered = runtime.enter();
        wharf_demo::StopSignals::listen().map_err(|err| format!("SIGINT and SIGTERM cannot be listened for: {err}"))?
    };
    let remote = &args.remote;
    let redis = remote::redis(remote, runtime)?;
    let builder = wharf::Server::builder("wharf-gateway", env!("CARGO_PKG_VERSION"));
    let builder = prepare_builder(builder, remote, runtime, redis.as_ref(), telemetry.as_deref())?;
    let entries: BTreeMap<String, MountEntry> =
        mounts.iter().map(|(entry, _)| (entry.name.clone(), entry.clone())).collect();
    let lazy = entries.values().filter(|entry| entry.start.as_deref() == Some("lazy")).count();
    let mut gateway = mounts.into_iter().map(|(_, mount)| mount).fold(Gateway::with_builder(builder), Gateway::mount);
    if let Some(redis) = &redis {
        // A client's retry may land on another replica than the one its upstream request waits on.
        gateway = gateway.replicas(redis.bus());
    }
    // Stopped while it starts, the programs already started are killed with the build.
    let built = runtime.block_on(async {
        tokio::select! {
            built = gateway.build_with_handle() => Some(built),
            () = stop.received() => None,
        }
    });
    let Some(built) = built else { return Ok(()) };
    let (server, handle) = built.map_err(|err| err.to_string())?;
    let health = handle.health();
    runtime.spawn(reload_on_change(args.config.clone(), entries, handle.clone()));
    let served = match remote.listen() {
        None => runtime.block_on(async {
            tokio::select! {
                served = wharf::serve_stdio(server) => served.map_err(|err| err.to_string()),
                () = stop.received() => Ok(()),
            }
        }),
        Some(listen) => {
            let mounted = args.config.display().to_string();
            let banner = |reached: &Reached| banner(&mounted, &health, lazy, remote, reached);
            let prepared = prepare_http(listen, remote, &SERVED, redis.as_ref(), telemetry, banner);
            let (listening, options) = runtime.block_on(prepared)?;
            let options = options.health_endpoint(HEALTH_PATH, move || (health.all_up(), health.report()));
            let shutdown = Box::pin(stop.shutdown(SERVED.command.to_owned()));
            wharf_demo::serve_http_until(runtime, listening.serve(server, options), SERVED.command, shutdown)
        }
    };
    // The upstreams are told the gateway is going (a program's stdin closed), not just killed.
    runtime.block_on(handle.close());
    served
}

/// How often the file is looked at for changes.
const RELOAD_POLL: Duration = Duration::from_secs(1);

/// Looks at the file every second; when it changed and is sound, mounts what it adds, unmounts
/// what it takes away and mounts again what it changes, leaving the other mounts (and their
/// clients' sessions) alone. A file with mistakes is reported and the gateway goes on as it is.
async fn reload_on_change(path: PathBuf, mut entries: BTreeMap<String, MountEntry>, handle: GatewayHandle) {
    let mut seen = std::fs::read(&path).ok();
    // What the file asks for but could not be mounted (its upstream was not up): tried again.
    let mut failed: Vec<(MountEntry, Mount)> = Vec::new();
    let mut retried = std::time::Instant::now();
    loop {
        tokio::time::sleep(RELOAD_POLL).await;
        let now = std::fs::read(&path).ok();
        if now.is_none() || now == seen {
            if !failed.is_empty() && retried.elapsed() >= RETRY_FAILED_MOUNTS {
                retried = std::time::Instant::now();
                failed = mount_each(&handle, &mut entries, std::mem::take(&mut failed)).await;
            }
            continue;
        }
        seen = now;
        let mounts = match read_config(&path) {
            Ok(mounts) => mounts,
            Err(mistakes) => {
                for mistake in mistakes {
                    eprintln!(
                        "wharf gateway: {} changed, but: {mistake}; the mounts stay as they were",
                        path.display()
                    );
                }
                continue;
            }
        };
        let wanted: HashSet<String> = mounts.iter().map(|(entry, _)| entry.name.clone()).collect();
        let gone: Vec<String> = entries.keys().filter(|name| !wanted.contains(*name)).cloned().collect();
        for name in gone {
            handle.unmount(&name).await;
            entries.remove(&name);
            eprintln!("wharf gateway: unmounted `{name}`");
        }
        let mut changed = Vec::new();
        for (entry, mount) in mounts {
            if entries.get(&entry.name) == Some(&entry) {
                continue;
            }
            if entries.remove(&entry.name).is_some() {
                handle.unmount(&entry.name).await;
            }
            changed.push((entry, mount));
        }
        retried = std::time::Instant::now();
        failed = mount_each(&handle, &mut entries, changed).await;
    }
}

/// How often mounts the file asks for but that could not be mounted are tried again.
const RETRY_FAILED_MOUNTS: Duration = Duration::from_secs(5);

/// Mounts each of `mounts`, recording those mounted in `entries`; those that could not be.
async fn mount_each(
    handle: &GatewayHandle,
    entries: &mut BTreeMap<String, MountEntry>,
    mounts: Vec<(MountEntry, Mount)>,
) -> Vec<(MountEntry, Mount)> {
    let mut failed = Vec::new();
    for (entry, mount) in mounts {
        match handle.mount(mount.clone()).await {
            Ok(()) => {
                eprintln!("wharf gateway: mounted `{}`", entry.name);
                entries.insert(entry.name.clone(), entry);
            }
            Err(err) => {
                eprintln!("wharf gateway: `{}` could not be mounted: {err}; trying again", entry.name);
                failed.push((entry, mount));
            }
        }
    }
    failed
}

/// Where the gateway's health is served beside `/mcp`.
const HEALTH_PATH: &str = "/health";

/// The line that says the gateway is up: its mounts, its URL, whose tokens it requires.
fn banner(config: &str, health: &Health, lazy: usize, remote: &RemoteArgs, reached: &Reached) -> String {
    let mounts = health.report()["mounts"].as_array().map_or(0, Vec::len);
    let lazy = if lazy > 0 { format!(" ({lazy} to start with the first request)") } else { String::new() };
    let auth = auth_summary(remote);
    format!(
        "wharf gateway: the {mounts} mounts{lazy} of {config}, at {} (Streamable HTTP), health at {}{auth}; Ctrl-C stops it",
        reached.url("/mcp"),
        reached.url(HEALTH_PATH)
    )
}
