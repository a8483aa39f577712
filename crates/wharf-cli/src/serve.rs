//! `wharf serve`: the demo server over stdio, or over Streamable HTTP with `--http`, with
//! its options (auth, Redis, telemetry, audit).

use std::io::IsTerminal;
use std::net::SocketAddr;
use std::process::ExitCode;
use std::sync::Arc;
use std::time::Duration;

use clap::Args;

#[derive(Debug, Args)]
pub(crate) struct ServeArgs {
    /// Serve this folder instead of the demo: prompts/NAME.md are prompts (YAML frontmatter, a
    /// template body), every file under resources/ a resource, skills/**/SKILL.md skills, and
    /// the [[tools]] of wharf.toml (or tools.toml) command tools. The guide's
    /// crates/wharf/guide/folder.md describes each; `wharf new NAME --folder` makes one to start
    /// from.
    #[arg(value_name = "DIR")]
    folder: Option<std::path::PathBuf>,
    /// Serve the folder as it is now, without reloading it when it changes.
    #[arg(long, requires = "folder")]
    no_watch: bool,
    /// Serve over Streamable HTTP at http://HOST:PORT/mcp instead of stdio (127.0.0.1:8080,
    /// localhost:8080, [::1]:8080; port 0 picks a free one).
    #[arg(long, value_name = "HOST:PORT", value_parser = http_address)]
    http: Option<String>,
    /// A Host name the HTTP server also answers to, besides the loopback names: needed when
    /// clients reach it by another name. Repeat for several.
    #[arg(long = "allowed-host", value_name = "NAME", requires = "http")]
    allowed_hosts: Vec<String>,
    /// A host name browser pages may call from (their Origin), besides the loopback names.
    /// Repeat for several.
    #[arg(long = "allowed-origin", value_name = "NAME", requires = "http")]
    allowed_origins: Vec<String>,
    /// Log one audit record per tool, prompt and resource request to stderr (target
    /// `wharf::audit`): who called what and how it ended, never argument values.
    #[arg(long)]
    audit: bool,
    /// Export OpenTelemetry spans and metrics over OTLP/HTTP to this base URL
    /// (http://127.0.0.1:4318: `/v1/traces` and `/v1/metrics` are appended). The standard
    /// OTEL_EXPORTER_OTLP_ENDPOINT and other OTEL_* variables work too.
    #[arg(long, value_name = "URL")]
    otlp_endpoint: Option<String>,
    /// Serve the request metrics at http://HOST:PORT/metrics for Prometheus to scrape. They
    /// need what /mcp needs: nothing, or with --auth-issuer a token the issuer gave (or, when
    /// WHARF_METRICS_TOKEN is set, that token instead, which alone opens them then:
    /// `Authorization: Bearer TOKEN`, Prometheus's `authorization` setting).
    #[arg(long, requires = "http")]
    metrics: bool,
    /// Require an OAuth 2.1 access token from this issuer on every HTTP request: the server
    /// becomes a resource server, finds the issuer's keys from its URL alone, publishes its
    /// protected resource metadata, and adds the `admin_report` tool, which needs the scope
    /// `demo:admin` of its own. A granted scope also covers the narrower ones below it after a
    /// `:` (a token granting `demo` may use what needs `demo:admin`), as the 2026-07-28
    /// specification asks; --auth-exact-scopes turns that off.
    #[arg(long, value_name = "URL", requires = "http")]
    auth_issuer: Option<String>,
    /// The URL clients call this MCP endpoint at, which tokens must be issued for (their
    /// `aud`): http://HOST:PORT/mcp as bound by default; set it behind a proxy or a public name.
    #[arg(long, value_name = "URL", requires = "auth_issuer")]
    auth_resource: Option<String>,
    /// Another audience tokens may be issued for instead of the resource URL. Repeat for several.
    #[arg(long = "auth-audience", value_name = "URL", requires = "auth_issuer")]
    auth_audiences: Vec<String>,
    /// A scope every request needs (a token without it gets 403 insufficient_scope). Repeat
    /// for several.
    #[arg(long = "auth-scope", value_name = "SCOPE", requires = "auth_issuer")]
    auth_scopes: Vec<String>,
    /// Match scopes exactly: a granted scope covers only itself, not the narrower ones below
    /// it (`demo` then does not grant `demo:admin`).
    #[arg(long, requires = "auth_issuer")]
    auth_exact_scopes: bool,
    /// Verify opaque tokens by asking the issuer (RFC 7662 introspection), as this client; its
    /// secret is read from WHARF_AUTH_CLIENT_SECRET, never from the command line, where other
    /// users of the machine could read it.
    #[arg(long, value_name = "CLIENT_ID", requires = "auth_issuer")]
    auth_introspection_client: Option<String>,
    /// Start even when the issuer's metadata and keys cannot be fetched at start (a warning
    /// says so; tokens are refused until they can be). By default the server refuses to start.
    #[arg(long, requires = "auth_issuer")]
    auth_lazy: bool,
    /// Keep 2025 sessions and task records in this Redis (or Valkey), redis://HOST:PORT/DB, so
    /// that several `wharf serve --http` instances behind a load balancer serve any request of
    /// any session or task. Unless WHARF_REQUEST_STATE_KEYS gives them, the key that seals the
    /// state of 2026-07-28 input rounds is shared through it too (made by the first instance,
    /// kept at PREFIX:request-state-key), so Redis must answer at start.
    /// A password goes in the URL (redis://:PASSWORD@HOST:PORT/) and is never logged.
    #[arg(long, value_name = "URL", requires = "http")]
    redis: Option<String>,
    /// The prefix of every Redis key this server writes, so that servers sharing one Redis
    /// keep apart.
    #[arg(long, value_name = "PREFIX", default_value = "wharf", requires = "redis")]
    redis_prefix: String,
    /// Installs one layer that passes every request on, to measure what the layer chain costs
    /// (scripts/bench).
    #[arg(long, hide = true)]
    pass_through_layer: bool,
}

/// What `--http` takes, for messages.
const HTTP_ADDRESS_FORM: &str =
    "write HOST:PORT, such as 127.0.0.1:8080, localhost:8080 or [::1]:8080 (port 0 picks a free one)";

/// `--http`'s value, if it has the form HOST:PORT: a malformed one is a wrong command line
/// (exit 2), while one that cannot be resolved or bound fails when the server starts.
fn http_address(text: &str) -> Result<String, String> {
    let Some((host, port)) = text.rsplit_once(':') else {
        return Err(format!("no port; {HTTP_ADDRESS_FORM}"));
    };
    if host.is_empty() {
        return Err(format!("no host before the port; {HTTP_ADDRESS_FORM}"));
    }
    if host.contains(':') && !(host.starts_with('[') && host.ends_with(']')) {
        return Err(format!("an IPv6 address goes in brackets, [::1]:8080; {HTTP_ADDRESS_FORM}"));
    }
    match port.parse::<u16>() {
        Ok(_) => Ok(text.to_owned()),
        Err(_) if !port.is_empty() && port.bytes().all(|byte| byte.is_ascii_digit()) => {
            Err(format!("the port {port} is past 65535; {HTTP_ADDRESS_FORM}"))
        }
        Err(_) => Err(format!("`{port}` is not a port number; {HTTP_ADDRESS_FORM}")),
    }
}

/// Where instances behind one load balancer find the keys that seal `requestState`, so that
/// state sealed by one instance opens on the others: `ID=HEX,...`, the first key sealing and
/// the others only opening (to rotate, put a new key first and keep the old one after it until
/// the state it sealed has expired). An environment variable, because other users of the
/// machine can read command lines. Without it, instances sharing a Redis share a key made
/// there.
const STATE_KEYS_VARIABLE: &str = "WHARF_REQUEST_STATE_KEYS";

/// The bearer token scrapers of `--metrics` send instead of a token of the issuer's.
const METRICS_TOKEN_VARIABLE: &str = "WHARF_METRICS_TOKEN";

/// How long Redis may take to give the shared `requestState` key at start.
const SHARED_KEY_DEADLINE: Duration = Duration::from_secs(10);

/// The keys in `text` (`ID=HEX` separated by commas), each secret decoded from hex.
fn request_state_keys(text: &str) -> Result<Vec<(String, Vec<u8>)>, String> {
    text.split(',')
        .filter(|key| !key.trim().is_empty())
        .map(|key| {
            let (id, hex) = key.trim().split_once('=').ok_or("each key is ID=HEX")?;
            if id.is_empty() {
                return Err("a key needs an id before `=`".to_owned());
            }
            let secret = (0..hex.len())
                .step_by(2)
                .map(|at| hex.get(at..at + 2).and_then(|pair| u8::from_str_radix(pair, 16).ok()))
                .collect::<Option<Vec<u8>>>()
                .ok_or_else(|| format!("the secret of key `{id}` is not hex"))?;
            Ok((id.to_owned(), secret))
        })
        .collect()
}

const CLIENT_CONFIG: &str = r#"{
  "mcpServers": {
    "wharf-demo": { "command": "wharf", "args": ["serve"] }
  }
}"#;

/// The client configuration that starts `wharf serve` on `folder`.
fn client_config_for(folder: &std::path::Path) -> String {
    let path = std::fs::canonicalize(folder).unwrap_or_else(|_| folder.to_path_buf());
    let name = path.file_name().map(|name| name.to_string_lossy().into_owned()).unwrap_or_else(|| "folder".to_owned());
    let config = serde_json::json!({"mcpServers": {name: {"command": "wharf", "args": ["serve", path]}}});
    serde_json::to_string_pretty(&config).unwrap_or_default()
}

pub(crate) fn serve(args: ServeArgs) -> ExitCode {
    let telemetry = match telemetry(args.otlp_endpoint.as_deref(), args.metrics) {
        Ok(telemetry) => telemetry.map(Arc::new),
        Err(err) => {
            eprintln!("wharf serve: OpenTelemetry could not be set up: {err}");
            return ExitCode::FAILURE;
        }
    };
    init_logging(args.audit, telemetry.as_deref());
    let folder = match args.folder.as_deref().map(wharf_folder::Loaded::load).transpose() {
        Ok(folder) => folder,
        Err(err) => {
            for problem in err.problems() {
                eprintln!("wharf serve: {problem}");
            }
            return ExitCode::FAILURE;
        }
    };
    if args.http.is_none() && std::io::stdin().is_terminal() {
        // A person ran `wharf serve` by hand; stdout must stay clean for the protocol, so the
        // explanation goes to stderr.
        let (what, config) = match &args.folder {
            Some(folder) => (format!("the folder {}", folder.display()), client_config_for(folder)),
            None => ("the Wharf demo MCP server".to_owned(), CLIENT_CONFIG.to_owned()),
        };
        eprintln!(
            "wharf serve: {what}, speaking MCP over stdio.\n\
             It is waiting for an MCP client on stdin; press Ctrl-D to stop.\n\n\
             To use it from Claude Desktop or Claude Code, add this to the client's configuration:\n{config}\n"
        );
    }
    let served = folder.as_ref().map(|folder| folder.summary().clone());
    let mut builder = match folder {
        Some(folder) if args.no_watch => folder.builder(),
        Some(folder) => folder.builder_for_watching(),
        None => wharf_demo::builder(),
    };
    if args.auth_issuer.is_some() && args.folder.is_none() {
        builder = wharf_demo::with_authenticated_tools(builder);
    }
    if args.audit {
        builder = builder.layer(wharf::middleware::Audit::new());
    }
    if let Some(telemetry) = &telemetry {
        builder = builder.layer(telemetry.layer());
    }
    if args.pass_through_layer {
        builder = builder.layer(wharf::middleware::layer_fn(|request, next| next.run(request)));
    }
    // Over stdio the transport reads and answers on a thread of its own; the runtime has one
    // thread for the requests that wait, which the demo's handlers rarely do, so more workers
    // would only add wake-ups. HTTP serves many connections at once and uses every core.
    let runtime = match &args.http {
        None => tokio::runtime::Builder::new_current_thread().enable_all().build(),
        Some(_) => tokio::runtime::Builder::new_multi_thread().enable_all().build(),
    };
    let runtime = match runtime {
        Ok(runtime) => runtime,
        Err(err) => {
            eprintln!("wharf: could not start the async runtime: {err}");
            return ExitCode::FAILURE;
        }
    };
    // The connection to Redis belongs to the runtime that will use it.
    let redis = match args.redis.as_deref().map(|url| {
        let _entered = runtime.enter();
        wharf::redis::Redis::connect(url)
    }) {
        None => None,
        Some(Ok(redis)) => Some(redis.prefix(&args.redis_prefix)),
        Some(Err(err)) => {
            eprintln!("wharf serve: --redis: {err}");
            return ExitCode::FAILURE;
        }
    };
    if let Some(redis) = &redis {
        builder = builder.task_store(redis.task_store());
    }
    let keys = match std::env::var(STATE_KEYS_VARIABLE) {
        Ok(keys) => request_state_keys(&keys).map_err(|err| format!("{STATE_KEYS_VARIABLE}: {err}")),
        // Instances behind one load balancer must open each other's `requestState`: without
        // keys given, they share one through their Redis.
        Err(_) => match &redis {
            Some(redis) => runtime.block_on(shared_request_state_key(redis)).map(|key| vec![key]),
            None => Ok(Vec::new()),
        },
    };
    match keys {
        Ok(keys) => {
            for (id, secret) in keys {
                builder = builder.request_state_key(&id, &secret);
            }
        }
        Err(err) => {
            eprintln!("wharf serve: {err}");
            return ExitCode::FAILURE;
        }
    }
    let server = match builder.build() {
        Ok(server) => server,
        Err(err) => {
            eprintln!("wharf serve: the server could not be built: {err}");
            return ExitCode::FAILURE;
        }
    };
    // The folder is watched on the runtime that serves it, for as long as it serves.
    let _watching = match (&args.folder, served) {
        (Some(folder), Some(served)) if !args.no_watch => {
            let _entered = runtime.enter();
            match wharf_folder::watch(server.clone(), folder, served) {
                Ok(watching) => Some(watching),
                Err(err) => {
                    eprintln!("wharf serve: {err}");
                    return ExitCode::FAILURE;
                }
            }
        }
        _ => None,
    };
    let outcome = match &args.http {
        None => wharf_demo::serve_stdio(&runtime, server),
        Some(address) => match runtime.block_on(prepare_http(address, &args, redis.as_ref(), telemetry.clone())) {
            Ok((listener, options)) => wharf_demo::serve_http(&runtime, server, listener, options),
            Err(message) => Err(message),
        },
    };
    // The runtime ends first: shutting the exporters down blocks while they send the rest.
    drop(runtime);
    if let Some(telemetry) = telemetry
        && let Err(err) = telemetry.shutdown()
    {
        eprintln!("wharf serve: {err}");
    }
    match outcome {
        Ok(()) => ExitCode::SUCCESS,
        Err(message) => {
            eprintln!("wharf serve: {message}");
            ExitCode::FAILURE
        }
    }
}

/// The key that seals `requestState` on every instance sharing `redis`, or what to do when
/// Redis does not give it.
async fn shared_request_state_key(redis: &wharf::redis::Redis) -> Result<(String, Vec<u8>), String> {
    let shared = tokio::time::timeout(SHARED_KEY_DEADLINE, redis.shared_request_state_key()).await;
    let problem = match shared {
        Ok(Ok(key)) => return Ok(key),
        Ok(Err(err)) => err.to_string(),
        Err(_) => format!("no answer within {} s", SHARED_KEY_DEADLINE.as_secs()),
    };
    Err(format!(
        "--redis: the key that seals the state of 2026-07-28 input rounds could not be shared through Redis \
         ({problem}); start Redis, or give every instance the same keys in {STATE_KEYS_VARIABLE} (ID=HEX, 32 \
         random bytes or more)"
    ))
}

/// The listener at `address` and the HTTP options the arguments describe; the banner is printed
/// once listening, and an error names the address.
async fn prepare_http(
    address: &str,
    args: &ServeArgs,
    redis: Option<&wharf::redis::Redis>,
    telemetry: Option<Arc<wharf::otel::Telemetry>>,
) -> Result<(tokio::net::TcpListener, wharf::HttpOptions), String> {
    let mut options = wharf::HttpOptions::default();
    if let Some(telemetry) = telemetry.filter(|_| args.metrics) {
        options = options.metrics_endpoint("/metrics", move || telemetry.prometheus_text());
        if let Ok(token) = std::env::var(METRICS_TOKEN_VARIABLE).map(|token| token.trim().to_owned())
            && !token.is_empty()
        {
            options = options.metrics_token(token);
        }
    }
    for host in &args.allowed_hosts {
        options = options.add_allowed_host(host);
    }
    for origin in &args.allowed_origins {
        options = options.add_allowed_origin(origin);
    }
    if let Some(redis) = redis {
        options = options.session_store(redis.session_store());
    }
    let listener = bind(address).await?;
    let local = listener.local_addr().map_err(|err| format!("cannot listen on {address}: {err}"))?;
    if let Some(issuer) = &args.auth_issuer {
        let auth = resource_server(issuer, local, args)?;
        check_issuer(&auth, issuer, args.auth_lazy).await?;
        options = options.authenticate(auth);
    }
    if let Some(warning) = unreachable_warning(local, &options) {
        eprintln!("wharf serve: warning: {warning}");
    }
    eprintln!("{}", banner(args, local));
    Ok((listener, options))
}

/// How long the issuer's metadata and keys may take at start.
const ISSUER_CHECK_DEADLINE: Duration = Duration::from_secs(10);

/// Fetches the issuer's metadata and keys before serving: a mistyped or unreachable issuer stops
/// the start (or, with `--auth-lazy`, is a loud warning) instead of refusing every token later.
async fn check_issuer(auth: &wharf::auth::ResourceServer, issuer: &str, lazy: bool) -> Result<(), String> {
    let problem = match tokio::time::timeout(ISSUER_CHECK_DEADLINE, auth.check_issuer()).await {
        Ok(Ok(())) => return Ok(()),
        Ok(Err(err)) => err.to_string(),
        Err(_) => format!("no answer within {} s", ISSUER_CHECK_DEADLINE.as_secs()),
    };
    let message = format!("the issuer {issuer} could not be reached for its metadata and keys: {problem}");
    if lazy {
        eprintln!(
            "wharf serve: WARNING: {message}; starting anyway (--auth-lazy): every token is refused until they can be fetched"
        );
        Ok(())
    } else {
        Err(format!(
            "{message}. Check --auth-issuer (it must be the issuer exactly as its tokens name it), or pass --auth-lazy to start anyway"
        ))
    }
}

/// The line that says the server is up: what it serves, at which URL (with the port bound, when
/// port 0 was asked for), and whose tokens it requires.
fn banner(args: &ServeArgs, local: SocketAddr) -> String {
    let what = match &args.folder {
        Some(folder) => format!("the folder {}", folder.display()),
        None => "the Wharf demo MCP server".to_owned(),
    };
    let auth = match &args.auth_issuer {
        None => String::new(),
        Some(issuer) => {
            let scopes = match args.auth_scopes.as_slice() {
                [] => "no scope required".to_owned(),
                [scope] => format!("scope {scope} required"),
                scopes => format!("scopes {} required", scopes.join(" ")),
            };
            let verified = match &args.auth_introspection_client {
                Some(client) => format!(", verified by introspection as {client}"),
                None => String::new(),
            };
            let exact = if args.auth_exact_scopes { ", scopes matched exactly" } else { "" };
            format!("; OAuth on: tokens from {issuer}, {scopes}{exact}{verified}")
        }
    };
    format!("wharf serve: {what}, at http://{local}/mcp (Streamable HTTP){auth}; Ctrl-C stops it")
}

/// The OAuth resource server `--auth-issuer` and its companions describe, for an endpoint
/// listening at `local`.
fn resource_server(issuer: &str, local: SocketAddr, args: &ServeArgs) -> Result<wharf::auth::ResourceServer, String> {
    let resource = match &args.auth_resource {
        Some(resource) => resource.clone(),
        None if local.ip().is_unspecified() => {
            return Err(format!(
                "listening on {local}, so the URL clients use is not known: name it with --auth-resource URL"
            ));
        }
        None => format!("http://{local}/mcp"),
    };
    let mut scopes_supported = args.auth_scopes.clone();
    scopes_supported.push(wharf_demo::ADMIN_SCOPE.to_owned());
    let mut builder = wharf::auth::ResourceServer::builder(resource)
        .issuer(issuer)
        .required_scopes(args.auth_scopes.iter().cloned())
        .scopes_supported(scopes_supported)
        .resource_name("Wharf demo server");
    for audience in &args.auth_audiences {
        builder = builder.audience(audience);
    }
    if args.auth_exact_scopes {
        builder = builder.exact_scopes();
    }
    if let Some(client) = &args.auth_introspection_client {
        let secret = std::env::var("WHARF_AUTH_CLIENT_SECRET").map_err(|_| {
            "--auth-introspection-client needs the client's secret in WHARF_AUTH_CLIENT_SECRET".to_owned()
        })?;
        builder = builder.introspection(client, secret);
    }
    builder.build().map_err(|err| format!("the OAuth resource server could not be set up: {err}"))
}

/// The warning for a server that other machines can reach but whose requests would all be
/// refused, since it answers only to the loopback host names.
fn unreachable_warning(local: SocketAddr, options: &wharf::HttpOptions) -> Option<String> {
    (!local.ip().is_loopback() && options.allows_only_loopback_hosts()).then(|| {
        format!(
            "listening on {local}, which other machines can reach, but only loopback Host names (localhost, \
             127.0.0.1, [::1]) are allowed, so their requests get 403; add --allowed-host NAME for each name \
             clients use"
        )
    })
}

/// Listens on the first address `address` (HOST:PORT, checked by [`http_address`]) resolves to
/// that can be bound. Errors name the address and say what to try.
async fn bind(address: &str) -> Result<tokio::net::TcpListener, String> {
    let candidates: Vec<SocketAddr> = tokio::net::lookup_host(address)
        .await
        .map_err(|err| format!("cannot find the host of --http {address} ({err}); name it by IP, like 127.0.0.1:8080"))?
        .collect();
    let mut last_error = None;
    for candidate in &candidates {
        match tokio::net::TcpListener::bind(candidate).await {
            Ok(listener) => return Ok(listener),
            Err(err) => last_error = Some(err),
        }
    }
    Err(match last_error {
        Some(err) => format!("cannot listen on {address}: {err}{}", bind_advice(err.kind())),
        None => format!("`{address}` resolves to no address; name the host by IP, like 127.0.0.1:8080"),
    })
}

/// What to try when an address cannot be bound.
fn bind_advice(kind: std::io::ErrorKind) -> &'static str {
    match kind {
        std::io::ErrorKind::AddrInUse => {
            "; another program listens there: stop it, or pick another port (0 picks a free one)"
        }
        std::io::ErrorKind::PermissionDenied => "; ports below 1024 need privileges: pick a higher one",
        std::io::ErrorKind::AddrNotAvailable => {
            "; no network interface of this machine has that address: try 127.0.0.1 or 0.0.0.0"
        }
        _ => "",
    }
}

/// Logs warnings and errors to stderr unless WHARF_LOG or RUST_LOG say otherwise; `--audit`
/// adds the audit records. With telemetry, spans also go to its exporter.
fn init_logging(audit: bool, telemetry: Option<&wharf::otel::Telemetry>) {
    let default = if audit { "warn,wharf::audit=info" } else { "warn" };
    match telemetry {
        Some(telemetry) => wharf::logging::init_with_telemetry(default, telemetry),
        None => wharf::logging::init_with_default(default),
    }
}

/// OpenTelemetry, when `--otlp-endpoint` or the standard variables name an endpoint, or
/// `--metrics` asks for the scrape endpoint.
fn telemetry(
    endpoint: Option<&str>,
    metrics: bool,
) -> Result<Option<wharf::otel::Telemetry>, wharf::otel::TelemetryError> {
    if endpoint.is_none() && !wharf::otel::endpoint_in_environment() && !metrics {
        return Ok(None);
    }
    let mut builder = wharf::otel::Telemetry::builder("wharf-demo");
    if metrics {
        builder = builder.prometheus();
    }
    if let Some(endpoint) = endpoint {
        builder = builder.otlp_endpoint(endpoint);
    }
    builder.build().map(Some)
}

#[cfg(test)]
mod tests {
    use clap::Parser;

    use super::*;
    use crate::{Cli, Command};

    fn serve_args(line: &[&str]) -> ServeArgs {
        match Cli::try_parse_from(line).unwrap().command {
            Command::Serve(args) => args,
            other => panic!("not serve: {other:?}"),
        }
    }

    #[test]
    fn request_state_keys_are_ids_and_hex_secrets_the_first_one_sealing() {
        let keys = request_state_keys("new=00ff10, old=0a0b").unwrap();
        assert_eq!(keys, vec![("new".to_owned(), vec![0, 255, 16]), ("old".to_owned(), vec![10, 11])]);
        assert!(request_state_keys("nokey").is_err());
        assert!(request_state_keys("=00").is_err());
        assert!(request_state_keys("k=0g").unwrap_err().contains("not hex"));
        assert!(request_state_keys("k=123").is_err(), "an odd number of digits");
    }

    #[test]
    fn the_auth_flags_make_a_resource_server_for_the_bound_address_or_the_named_url() {
        let issuer = "http://127.0.0.1:9";
        let args = serve_args(&["wharf", "serve", "--http", "0.0.0.0:0", "--auth-issuer", issuer]);
        let public: SocketAddr = "0.0.0.0:8080".parse().unwrap();
        let refused = resource_server(issuer, public, &args).unwrap_err();
        assert!(refused.contains("--auth-resource"), "{refused}");
        let loopback: SocketAddr = "127.0.0.1:8080".parse().unwrap();
        let bound = resource_server(issuer, loopback, &args).unwrap();
        assert_eq!(bound.resource().as_str(), "http://127.0.0.1:8080/mcp");
        let named = serve_args(&[
            "wharf",
            "serve",
            "--http",
            "0.0.0.0:0",
            "--auth-issuer",
            issuer,
            "--auth-resource",
            "https://MCP.example.com/mcp/",
            "--auth-scope",
            "mcp",
        ]);
        assert_eq!(resource_server(issuer, public, &named).unwrap().resource().as_str(), "https://mcp.example.com/mcp");
        let untrusted =
            serve_args(&["wharf", "serve", "--http", "127.0.0.1:0", "--auth-issuer", "http://id.example.com"]);
        let refused = resource_server("http://id.example.com", loopback, &untrusted).unwrap_err();
        assert!(refused.contains("neither https nor a loopback"), "{refused}");
        assert!(Cli::try_parse_from(["wharf", "serve", "--auth-issuer", issuer]).is_err(), "auth needs --http");
        assert!(
            Cli::try_parse_from(["wharf", "serve", "--redis", "redis://127.0.0.1/"]).is_err(),
            "Redis needs --http"
        );
        let shared = serve_args(&["wharf", "serve", "--http", "127.0.0.1:0", "--redis", "redis://127.0.0.1:1/"]);
        assert_eq!((shared.redis.as_deref(), shared.redis_prefix.as_str()), (Some("redis://127.0.0.1:1/"), "wharf"));
        assert!(
            Cli::try_parse_from(["wharf", "serve", "--http", "127.0.0.1:0", "--auth-scope", "mcp"]).is_err(),
            "a scope needs an issuer"
        );
    }

    /// A malformed `--http` is a wrong command line, exit 2, not 1 as for a server that failed
    /// (issue 37).
    #[test]
    fn an_http_address_is_host_colon_port_or_a_usage_error_saying_so() {
        for good in ["127.0.0.1:8080", "localhost:0", "[::1]:8080", "0.0.0.0:65535", "wharf.example:80"] {
            assert_eq!(http_address(good).as_deref(), Ok(good));
        }
        let cases = [
            ("nonsense", "no port; write HOST:PORT, such as 127.0.0.1:8080"),
            ("127.0.0.1:99999", "the port 99999 is past 65535; write HOST:PORT"),
            ("127.0.0.1:http", "`http` is not a port number; write HOST:PORT"),
            (":8080", "no host before the port"),
            ("::1:8080", "an IPv6 address goes in brackets, [::1]:8080"),
        ];
        for (bad, expected) in cases {
            let error = http_address(bad).unwrap_err();
            assert!(error.starts_with(expected), "{bad}: {error}");
        }
        let refused = Cli::try_parse_from(["wharf", "serve", "--http", "nonsense"]).unwrap_err();
        assert_eq!(refused.exit_code(), 2);
        assert!(bind_advice(std::io::ErrorKind::AddrInUse).contains("pick another port"));
    }

    #[test]
    fn the_banner_names_the_bound_url_and_whose_tokens_it_requires() {
        let local: SocketAddr = "127.0.0.1:41234".parse().unwrap();
        let plain = serve_args(&["wharf", "serve", "--http", "127.0.0.1:0"]);
        assert_eq!(
            banner(&plain, local),
            "wharf serve: the Wharf demo MCP server, at http://127.0.0.1:41234/mcp (Streamable HTTP); Ctrl-C stops it"
        );
        let guarded = serve_args(&[
            "wharf",
            "serve",
            "--http",
            "127.0.0.1:0",
            "--auth-issuer",
            "http://127.0.0.1:9/realms/main",
            "--auth-scope",
            "mcp",
            "--auth-scope",
            "read",
        ]);
        assert_eq!(
            banner(&guarded, local),
            "wharf serve: the Wharf demo MCP server, at http://127.0.0.1:41234/mcp (Streamable HTTP); OAuth on: \
             tokens from http://127.0.0.1:9/realms/main, scopes mcp read required; Ctrl-C stops it"
        );
        let open = serve_args(&["wharf", "serve", "--http", "127.0.0.1:0", "--auth-issuer", "http://127.0.0.1:9"]);
        assert!(banner(&open, local).contains("; OAuth on: tokens from http://127.0.0.1:9, no scope required;"));
    }

    /// The scope hierarchy is said in `--help`, with the flag that turns it off, and the
    /// banner says when it is off (issue 38).
    #[test]
    fn the_scope_hierarchy_is_explained_and_can_be_turned_off() {
        let help = Cli::try_parse_from(["wharf", "serve", "--help"]).unwrap_err().to_string();
        assert!(help.contains("a token granting `demo` may use what needs `demo:admin`"), "{help}");
        assert!(help.contains("--auth-exact-scopes"), "{help}");
        assert!(help.contains("WHARF_METRICS_TOKEN"), "{help}");
        let exact = serve_args(&[
            "wharf",
            "serve",
            "--http",
            "127.0.0.1:0",
            "--auth-issuer",
            "http://127.0.0.1:9",
            "--auth-exact-scopes",
        ]);
        let local: SocketAddr = "127.0.0.1:41234".parse().unwrap();
        assert!(
            banner(&exact, local).contains("no scope required, scopes matched exactly;"),
            "{}",
            banner(&exact, local)
        );
        assert!(resource_server("http://127.0.0.1:9", local, &exact).is_ok());
        assert!(
            Cli::try_parse_from(["wharf", "serve", "--http", "127.0.0.1:0", "--auth-exact-scopes"]).is_err(),
            "exact scopes need an issuer"
        );
    }

    #[test]
    fn a_public_address_with_only_loopback_hosts_is_warned_about() {
        let public: SocketAddr = "0.0.0.0:8080".parse().unwrap();
        let loopback: SocketAddr = "127.0.0.1:8080".parse().unwrap();
        let defaults = wharf::HttpOptions::default();
        let warning = unreachable_warning(public, &defaults).expect("a warning");
        assert!(warning.contains("0.0.0.0:8080") && warning.contains("--allowed-host"), "{warning}");
        assert!(unreachable_warning(loopback, &defaults).is_none());
        let named = wharf::HttpOptions::default().add_allowed_host("wharf.example");
        assert!(unreachable_warning(public, &named).is_none());
        assert!(unreachable_warning(public, &wharf::HttpOptions::default().allow_any_host()).is_none());
    }
}
