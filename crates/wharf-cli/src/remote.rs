//! What `wharf serve` and `wharf gateway` share: serving a server over stdio or Streamable
//! HTTP with the operator's options (allowed hosts and origins, OAuth resource server, Redis for
//! replicas, OpenTelemetry and the metrics scrape, the audit log), and the server builder's
//! part of them (layers, the task store, the keys that seal `requestState`).

use std::net::SocketAddr;
use std::sync::Arc;
use std::time::Duration;

use clap::Args;

/// The options of serving, as both commands take them.
#[derive(Debug, Args)]
#[command(group = clap::ArgGroup::new("listening").args(["http", "unix"]))]
pub(crate) struct RemoteArgs {
    /// Serve over Streamable HTTP at http://HOST:PORT/mcp instead of stdio (127.0.0.1:8080,
    /// localhost:8080, [::1]:8080; port 0 picks a free one).
    #[arg(long, value_name = "HOST:PORT", value_parser = http_address)]
    pub(crate) http: Option<String>,
    /// Serve over Streamable HTTP on a Unix socket at PATH instead (clients: `unix:PATH`): the
    /// file is made owner-only (0600, in a 0700 directory when the directory is made), refused
    /// if a live server has it, removed when the server stops; each request acts for the
    /// connecting user (`unix:uid:UID`).
    #[arg(long, value_name = "PATH", conflicts_with = "http")]
    pub(crate) unix: Option<std::path::PathBuf>,
    /// Publish no Server Card. By default an HTTP server publishes one (SEP-2127, a draft of
    /// the MCP specification) at <endpoint>/server-card and an AI Catalog naming it at
    /// /.well-known/ai-catalog.json: its name, title, version and description, its URL and the
    /// revisions it speaks, for anyone to read, even with --auth-issuer.
    #[arg(long, requires = "http")]
    pub(crate) no_server_card: bool,
    /// The Server Card's name, in reverse-DNS form (com.example/weather); by default
    /// local/NAME, NAME the server's.
    #[arg(long, value_name = "NAME", requires = "http", conflicts_with = "no_server_card")]
    pub(crate) server_card_name: Option<String>,
    /// Let only this user id in over --unix (repeatable; others get 403). Without it, whoever
    /// can open the socket file may connect: its owner, unless its mode is changed.
    #[arg(long = "unix-allow-uid", value_name = "UID", requires = "unix")]
    pub(crate) unix_allowed_uids: Vec<u32>,
    /// A Host name the HTTP server also answers to, besides the loopback names: needed when
    /// clients reach it by another name. Repeat for several.
    #[arg(long = "allowed-host", value_name = "NAME", requires = "listening")]
    pub(crate) allowed_hosts: Vec<String>,
    /// A host name browser pages may call from (their Origin), besides the loopback names.
    /// Repeat for several.
    #[arg(long = "allowed-origin", value_name = "NAME", requires = "listening")]
    pub(crate) allowed_origins: Vec<String>,
    /// Log one audit record per tool, prompt and resource request to stderr (target
    /// `wharf::audit`): who called what and how it ended, never argument values.
    #[arg(long)]
    pub(crate) audit: bool,
    /// Export OpenTelemetry spans and metrics over OTLP/HTTP to this base URL
    /// (http://127.0.0.1:4318: `/v1/traces` and `/v1/metrics` are appended). The standard
    /// OTEL_EXPORTER_OTLP_ENDPOINT and other OTEL_* variables work too.
    #[arg(long, value_name = "URL")]
    pub(crate) otlp_endpoint: Option<String>,
    /// Serve the request metrics at http://HOST:PORT/metrics for Prometheus to scrape. They
    /// need what /mcp needs: nothing, or with --auth-issuer a token the issuer gave (or, when
    /// WHARF_METRICS_TOKEN is set, that token instead, which alone opens them then:
    /// `Authorization: Bearer TOKEN`, Prometheus's `authorization` setting).
    #[arg(long, requires = "listening")]
    pub(crate) metrics: bool,
    /// Require an OAuth 2.1 access token from this issuer on every HTTP request: the server
    /// becomes a resource server, finds the issuer's keys from its URL alone, publishes its
    /// protected resource metadata, and adds the `admin_report` tool, which needs the scope
    /// `demo:admin` of its own. A granted scope also covers the narrower ones below it after a
    /// `:` (a token granting `demo` may use what needs `demo:admin`), as the 2026-07-28
    /// specification asks; --auth-exact-scopes turns that off.
    #[arg(long, value_name = "URL", requires = "listening")]
    pub(crate) auth_issuer: Option<String>,
    /// The URL clients call this MCP endpoint at, which tokens must be issued for (their
    /// `aud`): http://HOST:PORT/mcp as bound by default; set it behind a proxy or a public name.
    #[arg(long, value_name = "URL", requires = "auth_issuer")]
    pub(crate) auth_resource: Option<String>,
    /// Another audience tokens may be issued for instead of the resource URL. Repeat for several.
    #[arg(long = "auth-audience", value_name = "URL", requires = "auth_issuer")]
    pub(crate) auth_audiences: Vec<String>,
    /// A scope every request needs (a token without it gets 403 insufficient_scope). Repeat
    /// for several.
    #[arg(long = "auth-scope", value_name = "SCOPE", requires = "auth_issuer")]
    pub(crate) auth_scopes: Vec<String>,
    /// Match scopes exactly: a granted scope covers only itself, not the narrower ones below
    /// it (`demo` then does not grant `demo:admin`).
    #[arg(long, requires = "auth_issuer")]
    pub(crate) auth_exact_scopes: bool,
    /// Verify opaque tokens by asking the issuer (RFC 7662 introspection), as this client; its
    /// secret is read from WHARF_AUTH_CLIENT_SECRET, never from the command line, where other
    /// users of the machine could read it.
    #[arg(long, value_name = "CLIENT_ID", requires = "auth_issuer")]
    pub(crate) auth_introspection_client: Option<String>,
    /// Take DPoP-bound tokens (RFC 9449): each request presents its token with the `DPoP`
    /// scheme and a fresh proof by the key the token is bound to, used once (across every
    /// replica with --redis). `allowed` takes bearer tokens too; `required` takes only
    /// DPoP-bound ones. The protected resource metadata says which, and what algorithms.
    #[arg(long, value_name = "MODE", value_enum, requires = "auth_issuer")]
    pub(crate) auth_dpop: Option<DpopArg>,
    /// Give server nonces DPoP proofs must carry (RFC 9449 §8): a proof without the current
    /// one is answered 401 use_dpop_nonce with it in DPoP-Nonce. Replicas take each other's
    /// nonces when WHARF_DPOP_NONCE_KEY holds the same 64 hex digits; without it each makes
    /// its own, and a client moving between them is asked again.
    #[arg(long, requires = "auth_dpop")]
    pub(crate) auth_dpop_nonce: bool,
    /// Start even when the issuer's metadata and keys cannot be fetched at start (a warning
    /// says so; tokens are refused until they can be). By default the server refuses to start.
    #[arg(long, requires = "auth_issuer")]
    pub(crate) auth_lazy: bool,
    /// Keep 2025 sessions and task records in this Redis (or Valkey), redis://HOST:PORT/DB, so
    /// that several `wharf serve --http` instances behind a load balancer serve any request of
    /// any session or task. Unless WHARF_REQUEST_STATE_KEYS gives them, the key that seals the
    /// state of 2026-07-28 input rounds is shared through it too (made by the first instance,
    /// kept at PREFIX:request-state-key), so Redis must answer at start.
    /// A password goes in the URL (redis://:PASSWORD@HOST:PORT/) and is never logged.
    #[arg(long, value_name = "URL", requires = "listening", group = "shared_redis")]
    pub(crate) redis: Option<String>,
    /// Keep them on a Redis Cluster (or Valkey cluster) instead, as --redis does on one Redis:
    /// each URL (redis://HOST:PORT, repeatable) a node of the cluster to learn it from, one
    /// that answers being enough. Commands follow the slots' moves and failovers; pub/sub is
    /// sharded (SPUBLISH, SSUBSCRIBE).
    #[arg(long, value_name = "URL", requires = "listening", group = "shared_redis")]
    pub(crate) redis_cluster: Vec<String>,
    /// Keep them on a Redis that Sentinel manages instead: each URL (redis://HOST:PORT,
    /// repeatable, with the sentinel's own password if it needs one) a sentinel to ask where
    /// the primary named by --redis-sentinel-primary is. Commands follow a failover to the
    /// replica promoted in its place.
    #[arg(
        long,
        value_name = "URL",
        requires = "listening",
        group = "shared_redis",
        requires = "redis_sentinel_primary"
    )]
    pub(crate) redis_sentinel: Vec<String>,
    /// The primary's name, as the sentinels monitor it (`sentinel monitor NAME ...`), or a URL
    /// whose host is that name and which gives the data nodes' password and database
    /// (redis://:PASSWORD@NAME/DB).
    #[arg(long, value_name = "NAME", requires = "redis_sentinel")]
    pub(crate) redis_sentinel_primary: Option<String>,
    /// Make each write that must survive a Redis failover (a session opened, a task's record,
    /// an idempotency key claimed or finished, a large result's pages) wait until N replicas
    /// have it (WAIT, at most 250 ms; past that the request goes on and a warning is logged).
    /// Replication is asynchronous: without it, what a primary acknowledged just before it
    /// died can be missing from the replica that takes its place. 0 (the default) waits for
    /// none; set it only where every primary has N replicas.
    #[arg(long, value_name = "N", default_value_t = 0, requires = "shared_redis")]
    pub(crate) redis_wait_replicas: u32,
    /// The prefix of every Redis key this server writes, so that servers sharing one Redis
    /// keep apart.
    #[arg(long, value_name = "PREFIX", default_value = DEFAULT_REDIS_PREFIX, requires = "shared_redis")]
    pub(crate) redis_prefix: String,
    /// Hand no client more than N tokens of a tool result at once (counted as `wharf tokens`
    /// counts): a larger result is answered with its first part and a link to the whole, which
    /// the client reads in pages of at most N tokens (resources/read of wharf-result://ID?page=K),
    /// for an hour, as the principal or session that made the call. Claude Code takes 25000.
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u64).range(1024..))]
    pub(crate) max_result_tokens: Option<u64>,

    /// The most 2025 sessions held at once; when full, a new one ends the session idle longest
    /// of the client holding the most [default: 10000].
    #[arg(long, value_name = "N", requires = "listening", value_parser = clap::value_parser!(u64).range(1..))]
    pub(crate) max_sessions: Option<u64>,

    /// The most 2025 sessions one client may hold: one principal when requests are
    /// authenticated, else one address, loopback included (behind a reverse proxy every client
    /// has the proxy's). A client at its quota ends its own session idle longest [default: 100].
    #[arg(long, value_name = "N", requires = "listening", value_parser = clap::value_parser!(u64).range(1..))]
    pub(crate) max_sessions_per_client: Option<u64>,
}

/// The prefix of every Redis key, unless `--redis-prefix` names another.
const DEFAULT_REDIS_PREFIX: &str = "wharf";

impl RemoteArgs {
    /// The options as clap makes them when none is given: stdio, nothing shared or observed.
    pub(crate) fn unset() -> RemoteArgs {
        RemoteArgs {
            http: None,
            unix: None,
            no_server_card: false,
            server_card_name: None,
            unix_allowed_uids: Vec::new(),
            allowed_hosts: Vec::new(),
            allowed_origins: Vec::new(),
            audit: false,
            otlp_endpoint: None,
            metrics: false,
            auth_issuer: None,
            auth_resource: None,
            auth_audiences: Vec::new(),
            auth_scopes: Vec::new(),
            auth_exact_scopes: false,
            auth_introspection_client: None,
            auth_dpop: None,
            auth_dpop_nonce: false,
            auth_lazy: false,
            redis: None,
            redis_cluster: Vec::new(),
            redis_sentinel: Vec::new(),
            redis_sentinel_primary: None,
            redis_wait_replicas: 0,
            redis_prefix: DEFAULT_REDIS_PREFIX.to_owned(),
            max_result_tokens: None,
            max_sessions: None,
            max_sessions_per_client: None,
        }
    }
}

/// The secret DPoP nonces are made with: WHARF_DPOP_NONCE_KEY's 64 hex digits, else random.
fn dpop_nonce_secret() -> Result<[u8; 32], String> {
    let mut secret = [0_u8; 32];
    match std::env::var("WHARF_DPOP_NONCE_KEY") {
        Ok(text) => {
            let text = text.trim();
            let digits: Option<Vec<u8>> = (0..text.len())
                .step_by(2)
                .map(|at| text.get(at..at + 2).and_then(|pair| u8::from_str_radix(pair, 16).ok()))
                .collect();
            match digits {
                Some(bytes) if bytes.len() == 32 => secret.copy_from_slice(&bytes),
                _ => return Err("WHARF_DPOP_NONCE_KEY is not 64 hex digits".to_owned()),
            }
        }
        Err(_) => getrandom::fill(&mut secret).map_err(|err| format!("no randomness for the DPoP nonce key: {err}"))?,
    }
    Ok(secret)
}

/// `--auth-dpop`'s values.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub(crate) enum DpopArg {
    /// Bearer tokens, and DPoP-bound tokens with their proofs.
    Allowed,
    /// DPoP-bound tokens only.
    Required,
}

/// What is served, as the resource metadata and messages name it.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Served {
    /// The command, at the start of its messages: `wharf serve`.
    pub(crate) command: &'static str,
    /// The name in the protected resource metadata.
    pub(crate) resource_name: &'static str,
    /// Scopes its own tools need, listed as supported beside the required ones.
    pub(crate) scopes: &'static [&'static str],
    /// The service name of its telemetry.
    pub(crate) service: &'static str,
}

/// The server `builder` with what `args` ask of it: the audit and telemetry layers, the task
/// store in Redis, and the keys that seal `requestState` (from the environment, else shared
/// through Redis); `runtime` is the one that will serve.
pub(crate) fn prepare_builder(
    mut builder: wharf::ServerBuilder,
    args: &RemoteArgs,
    runtime: &tokio::runtime::Runtime,
    redis: Option<&wharf::redis::Redis>,
    telemetry: Option<&wharf::otel::Telemetry>,
) -> Result<wharf::ServerBuilder, String> {
    if args.audit {
        builder = builder.layer(wharf::middleware::Audit::new());
    }
    if let Some(telemetry) = telemetry {
        builder = builder.layer(telemetry.layer());
    }
    if let Some(redis) = redis {
        builder = builder
            .task_store(redis.task_store())
            .idempotency_store(redis.idempotency_store())
            .result_store(redis.result_store());
    }
    if let Some(tokens) = args.max_result_tokens {
        let tokens = usize::try_from(tokens).unwrap_or(usize::MAX);
        builder = builder.max_result(wharf::results::ResultBudget::tokens(tokens));
    }
    let keys = match std::env::var(STATE_KEYS_VARIABLE) {
        Ok(keys) => request_state_keys(&keys).map_err(|err| format!("{STATE_KEYS_VARIABLE}: {err}"))?,
        // Instances behind one load balancer must open each other's `requestState`: without
        // keys given, they share one through their Redis.
        Err(_) => match redis {
            Some(redis) => vec![runtime.block_on(shared_request_state_key(redis))?],
            None => Vec::new(),
        },
    };
    for (id, secret) in keys {
        builder = builder.request_state_key(&id, &secret);
    }
    Ok(builder)
}

/// The Redis `--redis` (or the cluster `--redis-cluster`, or Sentinel's primary
/// `--redis-sentinel`) names, connected on `runtime`; `None` without any.
pub(crate) fn redis(
    args: &RemoteArgs,
    runtime: &tokio::runtime::Runtime,
) -> Result<Option<wharf::redis::Redis>, String> {
    // The connection to Redis belongs to the runtime that will use it.
    let _entered = runtime.enter();
    let connected = match (args.redis.as_deref(), args.redis_cluster.as_slice(), args.redis_sentinel_primary.as_deref())
    {
        (Some(url), _, _) => wharf::redis::Redis::connect(url).map_err(|err| format!("--redis: {err}")),
        (None, [], Some(primary)) => wharf::redis::Redis::connect_sentinel(&args.redis_sentinel, primary)
            .map_err(|err| format!("--redis-sentinel: {err}")),
        (None, [], None) => return Ok(None),
        (None, seeds, _) => {
            wharf::redis::Redis::connect_cluster(seeds).map_err(|err| format!("--redis-cluster: {err}"))
        }
    };
    let waited = std::time::Duration::from_millis(250);
    connected.map(|redis| Some(redis.prefix(&args.redis_prefix).wait_for_replicas(args.redis_wait_replicas, waited)))
}

/// What the banner says of the OAuth the server requires: empty without `--auth-issuer`.
pub(crate) fn auth_summary(args: &RemoteArgs) -> String {
    match &args.auth_issuer {
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
            let dpop = match args.auth_dpop {
                Some(DpopArg::Allowed) => ", DPoP-bound tokens taken",
                Some(DpopArg::Required) => ", DPoP-bound tokens only",
                None => "",
            };
            format!("; OAuth on: tokens from {issuer}, {scopes}{exact}{dpop}{verified}")
        }
    }
}

/// What `--http` takes, for messages.
const HTTP_ADDRESS_FORM: &str =
    "write HOST:PORT, such as 127.0.0.1:8080, localhost:8080 or [::1]:8080 (port 0 picks a free one)";

/// `--http`'s value, if it has the form HOST:PORT: a malformed one is a wrong command line
/// (exit 2), while one that cannot be resolved or bound fails when the server starts.
pub(crate) fn http_address(text: &str) -> Result<String, String> {
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
pub(crate) const STATE_KEYS_VARIABLE: &str = "WHARF_REQUEST_STATE_KEYS";

/// The bearer token scrapers of `--metrics` send instead of a token of the issuer's.
const METRICS_TOKEN_VARIABLE: &str = "WHARF_METRICS_TOKEN";

/// How long Redis may take to give the shared `requestState` key at start.
const SHARED_KEY_DEADLINE: Duration = Duration::from_secs(10);

/// The keys in `text` (`ID=HEX` separated by commas), each secret decoded from hex.
pub(crate) fn request_state_keys(text: &str) -> Result<Vec<(String, Vec<u8>)>, String> {
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

/// Where an endpoint is to listen: a TCP address (`--http`) or a Unix socket (`--unix`).
#[derive(Debug, Clone, Copy)]
pub(crate) enum Listen<'a> {
    Tcp(&'a str),
    Unix(&'a std::path::Path),
}

/// A bound endpoint's listener, to serve a server on.
pub(crate) enum Listening {
    Tcp(tokio::net::TcpListener),
    Unix(tokio::net::UnixListener),
}

impl Listening {
    /// The server served on it, with `options`.
    pub(crate) fn serve(self, server: wharf::Server, options: wharf::HttpOptions) -> wharf::http::Serve {
        match self {
            Listening::Tcp(listener) => wharf::http::serve(listener, server).options(options),
            Listening::Unix(listener) => wharf::http::serve_unix(listener, server).options(options),
        }
    }
}

/// Where a bound endpoint is reached, as its banner names it.
#[derive(Debug, Clone)]
pub(crate) enum Reached {
    Tcp(SocketAddr),
    Unix(std::path::PathBuf),
}

impl Reached {
    /// Where `path` is reached: `http://HOST:PORT/PATH`; over a Unix socket, `unix:SOCKET`
    /// for the MCP endpoint (what `wharf call` takes) and `unix:SOCKET at PATH` for others.
    pub(crate) fn url(&self, path: &str) -> String {
        match self {
            Reached::Tcp(local) => format!("http://{local}{path}"),
            Reached::Unix(socket) if path == "/mcp" => format!("unix:{}", socket.display()),
            Reached::Unix(socket) => format!("unix:{} at {path}", socket.display()),
        }
    }
}

impl RemoteArgs {
    /// Where to listen, when not on stdio.
    pub(crate) fn listen(&self) -> Option<Listen<'_>> {
        match (&self.http, &self.unix) {
            (Some(address), _) => Some(Listen::Tcp(address)),
            (None, Some(path)) => Some(Listen::Unix(path)),
            (None, None) => None,
        }
    }
}

/// The listener `listen` names and the HTTP options the arguments describe for `served`; the
/// banner `banner` makes of where it is reached is printed once listening, and an error names
/// the address.
pub(crate) async fn prepare_http(
    listen: Listen<'_>,
    args: &RemoteArgs,
    served: &Served,
    redis: Option<&wharf::redis::Redis>,
    telemetry: Option<Arc<wharf::otel::Telemetry>>,
    banner: impl FnOnce(&Reached) -> String,
) -> Result<(Listening, wharf::HttpOptions), String> {
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
    for uid in &args.unix_allowed_uids {
        options = options.allow_unix_uid(*uid);
    }
    if let Some(sessions) = args.max_sessions {
        options = options.max_sessions(usize::try_from(sessions).unwrap_or(usize::MAX));
    }
    if let Some(sessions) = args.max_sessions_per_client {
        options = options.max_sessions_per_client(usize::try_from(sessions).unwrap_or(usize::MAX));
    }
    if let Some(redis) = redis {
        options = options.session_store(redis.session_store());
    }
    if matches!(listen, Listen::Tcp(_)) && !args.no_server_card {
        let mut card = wharf::http::ServerCard::new();
        if let Some(name) = &args.server_card_name {
            card = card.name(name);
        }
        // The URL tokens are issued for is the one clients use; without it, the card names the
        // URL its request came to.
        if let Some(resource) = &args.auth_resource {
            card = card.url(resource);
        }
        options = options.server_card(card);
    }
    let (listening, reached) = match listen {
        Listen::Tcp(address) => {
            let listener = bind(address).await?;
            let local = listener.local_addr().map_err(|err| format!("cannot listen on {address}: {err}"))?;
            if let Some(warning) = unreachable_warning(local, &options) {
                eprintln!("{}: warning: {warning}", served.command);
            }
            (Listening::Tcp(listener), Reached::Tcp(local))
        }
        Listen::Unix(path) => {
            let listener = wharf::http::bind_unix(path)
                .map_err(|err| format!("cannot listen on the Unix socket {}: {err}", path.display()))?;
            (Listening::Unix(listener), Reached::Unix(path.to_owned()))
        }
    };
    if let Some(issuer) = &args.auth_issuer {
        let auth = resource_server(issuer, &reached, args, served, redis)?;
        check_issuer(&auth, issuer, args.auth_lazy, served.command).await?;
        options = options.authenticate(auth);
    }
    eprintln!("{}", banner(&reached));
    Ok((listening, options))
}

/// How long the issuer's metadata and keys may take at start.
const ISSUER_CHECK_DEADLINE: Duration = Duration::from_secs(10);

/// Fetches the issuer's metadata and keys before serving: a mistyped or unreachable issuer stops
/// the start (or, with `--auth-lazy`, is a loud warning) instead of refusing every token later.
async fn check_issuer(
    auth: &wharf::auth::ResourceServer,
    issuer: &str,
    lazy: bool,
    command: &str,
) -> Result<(), String> {
    let problem = match tokio::time::timeout(ISSUER_CHECK_DEADLINE, auth.check_issuer()).await {
        Ok(Ok(())) => return Ok(()),
        Ok(Err(err)) => err.to_string(),
        Err(_) => format!("no answer within {} s", ISSUER_CHECK_DEADLINE.as_secs()),
    };
    let message = format!("the issuer {issuer} could not be reached for its metadata and keys: {problem}");
    if lazy {
        eprintln!(
            "{command}: WARNING: {message}; starting anyway (--auth-lazy): every token is refused until they can be fetched"
        );
        Ok(())
    } else {
        Err(format!(
            "{message}. Check --auth-issuer (it must be the issuer exactly as its tokens name it), or pass --auth-lazy to start anyway"
        ))
    }
}

/// The OAuth resource server `--auth-issuer` and its companions describe, for an endpoint
/// reached at `reached`; DPoP proofs are kept in `redis`, when there is one, for every replica.
pub(crate) fn resource_server(
    issuer: &str,
    reached: &Reached,
    args: &RemoteArgs,
    served: &Served,
    redis: Option<&wharf::redis::Redis>,
) -> Result<wharf::auth::ResourceServer, String> {
    let resource = match (&args.auth_resource, reached) {
        (Some(resource), _) => resource.clone(),
        (None, Reached::Tcp(local)) if local.ip().is_unspecified() => {
            return Err(format!(
                "listening on {local}, so the URL clients use is not known: name it with --auth-resource URL"
            ));
        }
        (None, Reached::Tcp(local)) => format!("http://{local}/mcp"),
        (None, Reached::Unix(socket)) => {
            return Err(format!(
                "listening on the Unix socket {}, which has no URL tokens can be issued for: name one with --auth-resource URL",
                socket.display()
            ));
        }
    };
    let mut scopes_supported = args.auth_scopes.clone();
    scopes_supported.extend(served.scopes.iter().map(|scope| (*scope).to_owned()));
    let mut builder = wharf::auth::ResourceServer::builder(resource)
        .issuer(issuer)
        .required_scopes(args.auth_scopes.iter().cloned())
        .scopes_supported(scopes_supported)
        .resource_name(served.resource_name);
    for audience in &args.auth_audiences {
        builder = builder.audience(audience);
    }
    if args.auth_exact_scopes {
        builder = builder.exact_scopes();
    }
    match args.auth_dpop {
        Some(DpopArg::Allowed) => builder = builder.dpop(wharf::auth::DpopMode::Allowed),
        Some(DpopArg::Required) => builder = builder.dpop(wharf::auth::DpopMode::Required),
        None => {}
    }
    if let (Some(_), Some(redis)) = (args.auth_dpop, redis) {
        builder = builder.dpop_replay_cache(redis.dpop_replay_cache());
    }
    if args.auth_dpop_nonce {
        builder = builder.dpop_nonces(dpop_nonce_secret()?);
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
pub(crate) fn unreachable_warning(local: SocketAddr, options: &wharf::HttpOptions) -> Option<String> {
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
pub(crate) async fn bind(address: &str) -> Result<tokio::net::TcpListener, String> {
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
pub(crate) fn bind_advice(kind: std::io::ErrorKind) -> &'static str {
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
fn init_logging(base: &str, audit: bool, telemetry: Option<&wharf::otel::Telemetry>) {
    let default = if audit { format!("{base},wharf::audit=info") } else { base.to_owned() };
    match telemetry {
        Some(telemetry) => wharf::logging::init_with_telemetry(&default, telemetry),
        None => wharf::logging::init_with_default(&default),
    }
}

/// Ends a command that served: the runtime first (shutting the exporters down blocks while
/// they send the rest), then telemetry; the exit code, what went wrong said on stderr.
pub(crate) fn finish(
    served: &Served,
    runtime: tokio::runtime::Runtime,
    telemetry: Option<Arc<wharf::otel::Telemetry>>,
    outcome: Result<(), String>,
) -> std::process::ExitCode {
    drop(runtime);
    if let Some(telemetry) = telemetry
        && let Err(err) = telemetry.shutdown()
    {
        eprintln!("{}: {err}", served.command);
    }
    match outcome {
        Ok(()) => std::process::ExitCode::SUCCESS,
        Err(message) => {
            eprintln!("{}: {message}", served.command);
            std::process::ExitCode::FAILURE
        }
    }
}

/// OpenTelemetry as `args` ask (for `served`), and the logs on stderr: `base` unless WHARF_LOG
/// or RUST_LOG say otherwise, the audit records with `--audit`; why not, when telemetry
/// cannot be set up.
pub(crate) fn start_observing(
    args: &RemoteArgs,
    served: &Served,
    base: &str,
) -> Result<Option<Arc<wharf::otel::Telemetry>>, String> {
    let telemetry = telemetry(args.otlp_endpoint.as_deref(), args.metrics, served.service)
        .map_err(|err| format!("OpenTelemetry could not be set up: {err}"))?
        .map(Arc::new);
    init_logging(base, args.audit, telemetry.as_deref());
    Ok(telemetry)
}

/// OpenTelemetry, when `--otlp-endpoint` or the standard variables name an endpoint, or
/// `--metrics` asks for the scrape endpoint.
fn telemetry(
    endpoint: Option<&str>,
    metrics: bool,
    service: &str,
) -> Result<Option<wharf::otel::Telemetry>, wharf::otel::TelemetryError> {
    if endpoint.is_none() && !wharf::otel::endpoint_in_environment() && !metrics {
        return Ok(None);
    }
    let mut builder = wharf::otel::Telemetry::builder(service);
    if metrics {
        builder = builder.prometheus();
    }
    if let Some(endpoint) = endpoint {
        builder = builder.otlp_endpoint(endpoint);
    }
    builder.build().map(Some)
}
