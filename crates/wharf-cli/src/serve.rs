//! `wharf serve`: the demo server over stdio, or over Streamable HTTP with `--http`, with
//! its options (auth, Redis, telemetry, audit).

use std::io::IsTerminal;
use std::process::ExitCode;

use clap::Args;

use crate::openapi::OpenApiArgs;
use crate::remote::{self, Reached, RemoteArgs, Served, auth_summary, prepare_builder, prepare_http};

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
    /// Append the demo's notes (the `note_add` tool, `demo://notes`) to this file, which
    /// instances on one machine may share; without it they are kept in memory.
    #[arg(long, value_name = "FILE", conflicts_with_all = ["folder", "spec"])]
    demo_notes: Option<std::path::PathBuf>,
    /// How long the demo's `note_add` remembers an idempotency key and the answer it gave, in
    /// seconds: a repeated call within it is answered without a second note.
    #[arg(long, value_name = "SECONDS", default_value_t = DEFAULT_IDEMPOTENCY_TTL_SECONDS, value_parser = clap::value_parser!(u64).range(1..))]
    idempotency_ttl: u64,
    #[command(flatten)]
    pub(crate) openapi: OpenApiArgs,
    #[command(flatten)]
    pub(crate) remote: RemoteArgs,
    /// Installs one layer that passes every request on, to measure what the layer chain costs
    /// (scripts/bench).
    #[arg(long, hide = true)]
    pass_through_layer: bool,
}

/// How long `note_add` remembers a key, unless `--idempotency-ttl` says: a day.
const DEFAULT_IDEMPOTENCY_TTL_SECONDS: u64 = 86_400;

impl ServeArgs {
    /// What clap makes of `wharf serve` alone, or of `wharf serve DIR` (`folder`), made without
    /// it: what a desktop client starts for every session, where building the command line
    /// was most of start-up's own work.
    pub(crate) fn unset(folder: Option<std::path::PathBuf>) -> ServeArgs {
        ServeArgs {
            folder,
            no_watch: false,
            demo_notes: None,
            idempotency_ttl: DEFAULT_IDEMPOTENCY_TTL_SECONDS,
            openapi: OpenApiArgs::unset(),
            remote: RemoteArgs::unset(),
            pass_through_layer: false,
        }
    }
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

/// What `wharf serve` serves, as the resource metadata and messages name it.
const SERVED: Served = Served {
    command: "wharf serve",
    resource_name: "Wharf demo server",
    scopes: &[wharf_demo::ADMIN_SCOPE],
    service: "wharf-demo",
};

pub(crate) fn serve(args: ServeArgs) -> ExitCode {
    let remote = &args.remote;
    let telemetry = match remote::start_observing(remote, &SERVED, "warn") {
        Ok(telemetry) => telemetry,
        Err(message) => {
            eprintln!("wharf serve: {message}");
            return ExitCode::FAILURE;
        }
    };
    let folder = match args.folder.as_deref().map(wharf_folder::Loaded::load).transpose() {
        Ok(folder) => folder,
        Err(err) => {
            for problem in err.problems() {
                eprintln!("wharf serve: {problem}");
            }
            return ExitCode::FAILURE;
        }
    };
    if remote.listen().is_none() && std::io::stdin().is_terminal() {
        // A person ran `wharf serve` by hand; stdout must stay clean for the protocol, so the
        // explanation goes to stderr.
        let (what, config) = match (&args.folder, &args.openapi.spec) {
            (Some(folder), _) => (format!("the folder {}", folder.display()), client_config_for(folder)),
            (None, Some(spec)) => (format!("the API of {spec}"), CLIENT_CONFIG.to_owned()),
            (None, None) => ("the Wharf demo MCP server".to_owned(), CLIENT_CONFIG.to_owned()),
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
        None if args.openapi.spec.is_some() => match crate::openapi::builder(&args.openapi) {
            Ok(builder) => builder,
            Err(message) => {
                eprintln!("wharf serve: {message}");
                return ExitCode::FAILURE;
            }
        },
        None => wharf_demo::builder_with(&wharf_demo::DemoOptions {
            notes_file: args.demo_notes.clone(),
            idempotency_ttl: std::time::Duration::from_secs(args.idempotency_ttl),
        }),
    };
    if remote.auth_issuer.is_some() && args.folder.is_none() && args.openapi.spec.is_none() {
        builder = wharf_demo::with_authenticated_tools(builder);
    }
    if remote.unix.is_some() && args.folder.is_none() && args.openapi.spec.is_none() {
        builder = wharf_demo::with_whoami(builder);
    }
    // Over stdio the transport reads and answers on a thread of its own; the runtime has one
    // thread for the requests that wait, which the demo's handlers rarely do, so more workers
    // would only add wake-ups. HTTP serves many connections at once and uses every core.
    let runtime = match remote.listen() {
        None => tokio::runtime::Builder::new_current_thread().enable_all().build(),
        Some(_) => tokio::runtime::Builder::new_multi_thread()
            .enable_all()
            .on_thread_start(wharf_demo::hold_ballast_on_this_thread)
            .build(),
    };
    let runtime = match runtime {
        Ok(runtime) => runtime,
        Err(err) => {
            eprintln!("wharf: could not start the async runtime: {err}");
            return ExitCode::FAILURE;
        }
    };
    let prepared = remote::redis(remote, &runtime).and_then(|redis| {
        let builder = prepare_builder(builder, remote, &runtime, redis.as_ref(), telemetry.as_deref())?;
        Ok((redis, builder))
    });
    let (redis, mut builder) = match prepared {
        Ok(prepared) => prepared,
        Err(err) => {
            eprintln!("wharf serve: {err}");
            return ExitCode::FAILURE;
        }
    };
    if args.pass_through_layer {
        builder = builder.layer(wharf::middleware::layer_fn(|request, next| next.run(request)));
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
    let outcome = match remote.listen() {
        // A command tool's program runs in a process group of its own, which a signal sent to
        // the server's group does not reach, and which SIGTERM's default action would leave
        // running: a folder's server stops on either signal and kills the programs still
        // running. The demo starts none, and its start-up stays without the listeners.
        None if args.folder.is_some() => {
            let listening = {
                let _entered = runtime.enter();
                wharf_demo::StopSignals::listen()
            };
            match listening {
                Ok(mut stop) => {
                    wharf_demo::serve_stdio_until(&runtime, server, Box::pin(async move { stop.received().await }))
                }
                Err(err) => Err(format!("SIGINT and SIGTERM cannot be listened for: {err}")),
            }
        }
        None => wharf_demo::serve_stdio(&runtime, server),
        Some(listen) => {
            let banner = |reached: &Reached| banner(&args, reached);
            let prepared = prepare_http(listen, remote, &SERVED, redis.as_ref(), telemetry.clone(), banner);
            match runtime.block_on(prepared) {
                Ok((listening, options)) => {
                    wharf_demo::serve_http(&runtime, listening.serve(server, options), SERVED.command)
                }
                Err(message) => Err(message),
            }
        }
    };
    remote::finish(&SERVED, runtime, telemetry, outcome)
}

/// The line that says the server is up: what it serves, at which URL (with the port bound, when
/// port 0 was asked for), and whose tokens it requires.
fn banner(args: &ServeArgs, reached: &Reached) -> String {
    let what = match (&args.folder, &args.openapi.spec) {
        (Some(folder), _) => format!("the folder {}", folder.display()),
        (None, Some(spec)) => format!("the API of {spec}"),
        (None, None) => "the Wharf demo MCP server".to_owned(),
    };
    let auth = auth_summary(&args.remote);
    format!("wharf serve: {what}, at {} (Streamable HTTP){auth}; Ctrl-C stops it", reached.url("/mcp"))
}

#[cfg(test)]
mod tests {
    use clap::Parser;

    use super::*;
    use crate::remote::{bind_advice, http_address, request_state_keys, resource_server, unreachable_warning};
    use crate::{Cli, Command};

    fn serve_args(line: &[&str]) -> ServeArgs {
        match Cli::try_parse_from(line).unwrap().command {
            Command::Serve(args) => *args,
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
        let public = Reached::Tcp("0.0.0.0:8080".parse().unwrap());
        let refused = resource_server(issuer, &public, &args.remote, &SERVED, None).unwrap_err();
        assert!(refused.contains("--auth-resource"), "{refused}");
        let loopback = Reached::Tcp("127.0.0.1:8080".parse().unwrap());
        let bound = resource_server(issuer, &loopback, &args.remote, &SERVED, None).unwrap();
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
        assert_eq!(
            resource_server(issuer, &public, &named.remote, &SERVED, None).unwrap().resource().as_str(),
            "https://mcp.example.com/mcp"
        );
        let untrusted =
            serve_args(&["wharf", "serve", "--http", "127.0.0.1:0", "--auth-issuer", "http://id.example.com"]);
        let refused =
            resource_server("http://id.example.com", &loopback, &untrusted.remote, &SERVED, None).unwrap_err();
        assert!(refused.contains("neither https nor a loopback"), "{refused}");
        assert!(Cli::try_parse_from(["wharf", "serve", "--auth-issuer", issuer]).is_err(), "auth needs --http");
        // Over a Unix socket, auth works, with the URL tokens are issued for named.
        let unix = serve_args(&["wharf", "serve", "--unix", "/tmp/wharf.sock", "--auth-issuer", issuer]);
        let socket = Reached::Unix("/tmp/wharf.sock".into());
        let refused = resource_server(issuer, &socket, &unix.remote, &SERVED, None).unwrap_err();
        assert!(refused.contains("--auth-resource"), "{refused}");
        assert!(Cli::try_parse_from(["wharf", "serve", "--unix", "a.sock", "--http", "127.0.0.1:0"]).is_err());
        assert!(Cli::try_parse_from(["wharf", "serve", "--unix-allow-uid", "5"]).is_err(), "needs --unix");
        assert!(
            Cli::try_parse_from(["wharf", "serve", "--redis", "redis://127.0.0.1/"]).is_err(),
            "Redis needs --http"
        );
        let shared = serve_args(&["wharf", "serve", "--http", "127.0.0.1:0", "--redis", "redis://127.0.0.1:1/"]);
        assert_eq!(
            (shared.remote.redis.as_deref(), shared.remote.redis_prefix.as_str()),
            (Some("redis://127.0.0.1:1/"), "wharf")
        );
        let on_cluster = ["wharf", "serve", "--http", "127.0.0.1:0", "--redis-cluster", "redis://127.0.0.1:1/"];
        let cluster = serve_args(&[&on_cluster[..], &["--redis-cluster", "redis://127.0.0.1:2/"]].concat());
        assert_eq!(cluster.remote.redis_cluster, ["redis://127.0.0.1:1/", "redis://127.0.0.1:2/"]);
        assert!(
            Cli::try_parse_from([&on_cluster[..], &["--redis", "redis://127.0.0.1:3/"]].concat()).is_err(),
            "one or the other"
        );
        assert!(
            Cli::try_parse_from(["wharf", "serve", "--redis-cluster", "redis://127.0.0.1:1/"]).is_err(),
            "needs --http"
        );
        assert!(
            Cli::try_parse_from(["wharf", "serve", "--http", "127.0.0.1:0", "--redis-prefix", "p"]).is_err(),
            "a prefix needs a Redis"
        );
        let on_sentinel = ["wharf", "serve", "--http", "127.0.0.1:0", "--redis-sentinel", "redis://127.0.0.1:1/"];
        let sentinel = serve_args(&[&on_sentinel[..], &["--redis-sentinel-primary", "main"]].concat());
        assert_eq!(
            (sentinel.remote.redis_sentinel.as_slice(), sentinel.remote.redis_sentinel_primary.as_deref()),
            (&["redis://127.0.0.1:1/".to_owned()][..], Some("main"))
        );
        assert!(Cli::try_parse_from(on_sentinel).is_err(), "Sentinel needs the primary's name");
        let named_only = ["wharf", "serve", "--http", "127.0.0.1:0", "--redis-sentinel-primary", "main"];
        assert!(Cli::try_parse_from(named_only).is_err(), "a name needs sentinels");
        assert!(
            Cli::try_parse_from([&on_cluster[..], &on_sentinel[3..], &["--redis-sentinel-primary", "main"]].concat())
                .is_err(),
            "a cluster or Sentinel, not both"
        );
        let waiting = serve_args(&[&on_cluster[..], &["--redis-wait-replicas", "1"]].concat());
        assert_eq!((waiting.remote.redis_wait_replicas, cluster.remote.redis_wait_replicas), (1, 0));
        let without_redis = ["wharf", "serve", "--http", "127.0.0.1:0", "--redis-wait-replicas", "1"];
        assert!(Cli::try_parse_from(without_redis).is_err(), "waiting for replicas needs a Redis");
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
        let local = Reached::Tcp("127.0.0.1:41234".parse().unwrap());
        let plain = serve_args(&["wharf", "serve", "--http", "127.0.0.1:0"]);
        assert_eq!(
            banner(&plain, &local),
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
            banner(&guarded, &local),
            "wharf serve: the Wharf demo MCP server, at http://127.0.0.1:41234/mcp (Streamable HTTP); OAuth on: \
             tokens from http://127.0.0.1:9/realms/main, scopes mcp read required; Ctrl-C stops it"
        );
        let open = serve_args(&["wharf", "serve", "--http", "127.0.0.1:0", "--auth-issuer", "http://127.0.0.1:9"]);
        assert!(banner(&open, &local).contains("; OAuth on: tokens from http://127.0.0.1:9, no scope required;"));
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
        let local = Reached::Tcp("127.0.0.1:41234".parse().unwrap());
        assert!(
            banner(&exact, &local).contains("no scope required, scopes matched exactly;"),
            "{}",
            banner(&exact, &local)
        );
        assert!(resource_server("http://127.0.0.1:9", &local, &exact.remote, &SERVED, None).is_ok());
        assert!(
            Cli::try_parse_from(["wharf", "serve", "--http", "127.0.0.1:0", "--auth-exact-scopes"]).is_err(),
            "exact scopes need an issuer"
        );
    }

    #[test]
    fn a_public_address_with_only_loopback_hosts_is_warned_about() {
        let public: std::net::SocketAddr = "0.0.0.0:8080".parse().unwrap();
        let loopback: std::net::SocketAddr = "127.0.0.1:8080".parse().unwrap();
        let defaults = wharf::HttpOptions::default();
        let warning = unreachable_warning(public, &defaults).expect("a warning");
        assert!(warning.contains("0.0.0.0:8080") && warning.contains("--allowed-host"), "{warning}");
        assert!(unreachable_warning(loopback, &defaults).is_none());
        let named = wharf::HttpOptions::default().add_allowed_host("wharf.example");
        assert!(unreachable_warning(public, &named).is_none());
        assert!(unreachable_warning(public, &wharf::HttpOptions::default().allow_any_host()).is_none());
    }
}
