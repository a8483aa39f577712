//! Run with `scripts/bench`, which builds `wharf` and this program with the `dist` profile.
//!
//! Drives Streamable HTTP `tools/call` echo against `wharf serve --http` and against a bare
//! hyper server (`bare-http-echo`) in the same run: 1, 16 and 64 concurrent clients, each on its
//! own keep-alive connection with one request outstanding, for modern stateless requests
//! (2026-07-28) and for 2025-11-25 sessions (one session per client). It prints throughput,
//! p50/p99 latency, the server's peak RSS and Wharf's throughput as a fraction of the bare
//! server's, then the same load beside 1, 1,000 and 10,000 idle 2025 sessions, with the resident
//! memory each idle session costs (`BENCH_ONLY_SESSIONS=1` runs that part alone). The baseline runs
//! twice, with the requests of each era (body and headers, a session's id included), and
//! answers a 2026-07-28 request with the bytes `wharf serve` writes (`resultType`, and its
//! `serverInfo` in `_meta`).
//!
//! With `BENCH_OIDC_ISSUER` naming the test OpenID provider (`interop/oidc`, which
//! `scripts/bench` starts), it also runs `wharf serve --http` as an OAuth resource server
//! against plain `wharf serve --http` at 64 clients, interleaved, every request carrying a
//! bearer token the provider issued, and prints auth on / auth off, and auth on / auth off
//! sent the same token (which it ignores); `BENCH_ONLY_AUTH=1` runs that part alone.
//!
//! With `BENCH_ONLY_GATEWAY=1` it instead runs `wharf gateway --http` in front of `wharf serve`
//! (a URL upstream, and a program on stdio) against `wharf serve --http` alone, and the bare
//! forwarder (`bare-forward`) in the gateway's place, interleaved.
//!
//! With `BENCH_REDIS_URL` naming a Redis and `BENCH_ONLY_REDIS=1` (`scripts/bench` starts a
//! `redis-server` for it), it instead runs `wharf serve --http --redis URL` (sessions and tasks
//! shared in Redis) against plain `wharf serve --http` at 64 clients, interleaved, in both
//! eras, and prints Redis / memory with the Redis commands each `tools/call` costs, counted by
//! Redis itself; a streamed answer's events kept in Redis before they are sent, against the
//! build before (`WHARF_BEFORE`); and with `BENCH_REDIS_CLUSTER` (the seeds of a Redis Cluster,
//! separated by spaces) the same on the cluster against one Redis.

use std::net::SocketAddr;
use std::sync::Arc;
use std::time::{Duration, Instant};

use wharf_bench::http::{Connection, ServerProcess};
use wharf_bench::measure::{
    EraRuns, Measurement, compared_build, cpu_time, median, median_cpu_ratio, median_ratio, peak_rss_kib, report,
    rss_kib,
};
use wharf_bench::stdio::{answer_line, server_info};

#[derive(Debug, Clone, Copy, PartialEq)]
enum Mode {
    /// The bare server, sent the 2025 request body and the headers of a session (an id it
    /// ignores, of a real one's length), as Wharf is.
    BareSession,
    /// The bare server, sent the 2026-07-28 request body.
    BareStateless,
    Session,
    /// A 2025 session calling the demo's `log`, answered as an SSE stream of three events (the
    /// priming event, the log message, the answer), each kept in the session store.
    SessionStreamed,
    Stateless,
}

impl Mode {
    /// True when the requests are 2026-07-28 ones, with their longer body and answer.
    fn stateless(self) -> bool {
        matches!(self, Mode::BareStateless | Mode::Stateless)
    }
}

/// What the bare server is sent as a session's id: 32 hexadecimal digits, as Wharf's are.
const IGNORED_SESSION_ID: &str = "0123456789abcdef0123456789abcdef";

const ACCEPT: (&str, &str) = ("Accept", "application/json, text/event-stream");
const JSON: (&str, &str) = ("Content-Type", "application/json");

fn stateless_body(id: usize) -> String {
    format!(
        r#"{{"jsonrpc":"2.0","id":{id},"method":"tools/call","params":{{"_meta":{{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{{}}}},"name":"echo","arguments":{{"message":"hello, wharf"}}}}}}"#
    )
}

fn streamed_body(id: usize) -> String {
    format!(
        r#"{{"jsonrpc":"2.0","id":{id},"method":"tools/call","params":{{"name":"log","arguments":{{"level":"error","message":"hello, wharf"}}}}}}"#
    )
}

fn session_body(id: usize) -> String {
    format!(
        r#"{{"jsonrpc":"2.0","id":{id},"method":"tools/call","params":{{"name":"echo","arguments":{{"message":"hello, wharf"}}}}}}"#
    )
}

const INITIALIZE: &str = r#"{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"bench","version":"1"}}}"#;
const INITIALIZED: &str = r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#;

/// Opens a 2025-11-25 session on `connection`, with `authorization` when it is given, and
/// returns its id.
async fn open_session(connection: &mut Connection, authorization: Option<&str>) -> String {
    let mut headers = vec![ACCEPT, JSON];
    headers.extend(authorization.map(|value| ("Authorization", value)));
    let response = connection.post("/mcp", &headers, INITIALIZE.as_bytes()).await.expect("initialize");
    assert_eq!(response.status, 200, "initialize: {}", String::from_utf8_lossy(&response.body));
    let session = response.session_id.expect("initialize answered without Mcp-Session-Id");
    headers.extend([("Mcp-Session-Id", session.as_str()), ("MCP-Protocol-Version", "2025-11-25")]);
    let response = connection.post("/mcp", &headers, INITIALIZED.as_bytes()).await.expect("initialized");
    assert_eq!(response.status, 202);
    session
}

/// One client: `count` requests, one at a time, on its own connection, with `authorization`
/// when it is given; returns the latencies.
async fn client(
    address: SocketAddr,
    mode: Mode,
    count: usize,
    first_id: usize,
    authorization: Option<Arc<str>>,
) -> Vec<Duration> {
    let mut connection = Connection::open(address).await.expect("connect");
    let session = match mode {
        Mode::Session | Mode::SessionStreamed => open_session(&mut connection, authorization.as_deref()).await,
        Mode::BareSession | Mode::BareStateless | Mode::Stateless => String::new(),
    };
    let mut headers: Vec<(&str, &str)> = match mode {
        Mode::Session | Mode::SessionStreamed => {
            vec![ACCEPT, JSON, ("Mcp-Session-Id", &session), ("MCP-Protocol-Version", "2025-11-25")]
        }
        Mode::BareSession => {
            vec![ACCEPT, JSON, ("Mcp-Session-Id", IGNORED_SESSION_ID), ("MCP-Protocol-Version", "2025-11-25")]
        }
        Mode::BareStateless | Mode::Stateless => vec![
            ACCEPT,
            JSON,
            ("MCP-Protocol-Version", "2026-07-28"),
            ("Mcp-Method", "tools/call"),
            ("Mcp-Name", "echo"),
        ],
    };
    if let Some(authorization) = &authorization {
        headers.push(("Authorization", authorization));
    }
    let mut latencies = Vec::with_capacity(count);
    for id in first_id..first_id + count {
        let body = match mode {
            Mode::SessionStreamed => streamed_body(id),
            _ if mode.stateless() => stateless_body(id),
            _ => session_body(id),
        };
        let sent = Instant::now();
        let response = connection.post("/mcp", &headers, body.as_bytes()).await.expect("a response");
        latencies.push(sent.elapsed());
        assert!(
            response.status == 200 && response.body.windows(8).any(|window| window == b"\"result\""),
            "request {id} failed with {}: {}",
            response.status,
            String::from_utf8_lossy(&response.body)
        );
    }
    latencies
}

/// Lets `clients` clients send `count` requests between them to the server at `address`, and
/// returns the elapsed time of the measured part with every request's latency.
fn load(
    runtime: &tokio::runtime::Runtime,
    address: SocketAddr,
    mode: Mode,
    clients: usize,
    count: usize,
    authorization: Option<Arc<str>>,
) -> (Duration, Vec<Duration>) {
    let per_client = count / clients;
    runtime.block_on(async move {
        let warm_up: Vec<_> = (0..clients)
            .map(|client_number| tokio::spawn(client(address, mode, 10, client_number * 10 + 1, authorization.clone())))
            .collect();
        for warm in warm_up {
            warm.await.expect("a warm-up client");
        }
        let started = Instant::now();
        let tasks: Vec<_> = (0..clients)
            .map(|client_number| {
                let first_id = 1_000 + client_number * per_client;
                tokio::spawn(client(address, mode, per_client, first_id, authorization.clone()))
            })
            .collect();
        let mut latencies = Vec::with_capacity(count);
        for task in tasks {
            latencies.extend(task.await.expect("a client"));
        }
        (started.elapsed(), latencies)
    })
}

/// Starts a fresh server, lets `clients` clients send `count` requests between them, and
/// measures. Each client first sends a few untimed requests, so connection and session set-up
/// are not part of the measurement.
fn run(
    runtime: &tokio::runtime::Runtime,
    program: &str,
    args: &[&str],
    mode: Mode,
    clients: usize,
    count: usize,
    authorization: Option<Arc<str>>,
) -> Measurement {
    let server = ServerProcess::start(program, args);
    let (elapsed, latencies) = load(runtime, server.address, mode, clients, count, authorization);
    Measurement::new(latencies.len(), elapsed, latencies, peak_rss_kib(server.pid()), cpu_time(server.pid()))
}

/// How many idle 2025 sessions the server holds beside the load's own, per configuration.
const IDLE_SESSIONS: [usize; 3] = [1, 1_000, 10_000];

/// Opens `count` 2025-11-25 sessions one after another on one connection, which then closes,
/// and returns the first one's id.
fn open_idle_sessions(runtime: &tokio::runtime::Runtime, address: SocketAddr, count: usize) -> String {
    runtime.block_on(async move {
        let mut connection = Connection::open(address).await.expect("connect");
        let first = open_session(&mut connection, None).await;
        for _ in 1..count {
            open_session(&mut connection, None).await;
        }
        first
    })
}

/// True when the session `id` still answers a ping: none was evicted to make room.
fn answers(runtime: &tokio::runtime::Runtime, address: SocketAddr, id: &str) -> bool {
    runtime.block_on(async move {
        let mut connection = Connection::open(address).await.expect("connect");
        let headers = [ACCEPT, JSON, ("Mcp-Session-Id", id), ("MCP-Protocol-Version", "2025-11-25")];
        let ping = br#"{"jsonrpc":"2.0","id":1,"method":"ping"}"#;
        connection.post("/mcp", &headers, ping).await.is_ok_and(|response| response.status == 200)
    })
}

/// Flat as sessions grow: `wharf serve --http` holding 1, 1,000 and 10,000 idle 2025 sessions
/// (initialized, their connection closed), then 64 session clients' load, round by round. It
/// prints each configuration's median run, its throughput against the one with a single idle
/// session, and the resident memory each idle session adds: measured in the same server, from
/// its first session opened to its last (one-time allocations, such as the table's first
/// growth, are the first session's).
fn compare_session_counts(runtime: &tokio::runtime::Runtime, wharf: &str, count: usize, rounds: usize) {
    // The limits are raised for the measurement: by default a client (here, one loopback
    // address) holds 100 sessions at most, and the server 10,000.
    let args = ["serve", "--http", "{addr}", "--max-sessions", "20000", "--max-sessions-per-client", "20000"];
    let mut runs: Vec<Vec<Measurement>> = IDLE_SESSIONS.iter().map(|_| Vec::new()).collect();
    let mut per_session: Vec<Vec<f64>> = IDLE_SESSIONS.iter().map(|_| Vec::new()).collect();
    for _ in 0..rounds {
        for (index, &idle) in IDLE_SESSIONS.iter().enumerate() {
            let server = ServerProcess::start(wharf, &args);
            let first = open_idle_sessions(runtime, server.address, 1);
            std::thread::sleep(Duration::from_millis(200));
            let before = rss_kib(server.pid());
            open_idle_sessions(runtime, server.address, idle - 1);
            std::thread::sleep(Duration::from_millis(200));
            let after = rss_kib(server.pid());
            assert!(answers(runtime, server.address, &first), "the first idle session was ended");
            if idle > 1 {
                per_session[index].push(after.saturating_sub(before) as f64 * 1024.0 / (idle - 1) as f64);
            }
            // The processor time of opening the idle sessions is not the load's.
            let opening = cpu_time(server.pid());
            let (elapsed, latencies) = load(runtime, server.address, Mode::Session, 64, count, None);
            let cpu = cpu_time(server.pid()).zip(opening).map(|(total, opening)| total.saturating_sub(opening));
            let measured = Measurement::new(latencies.len(), elapsed, latencies, peak_rss_kib(server.pid()), cpu);
            runs[index].push(measured);
        }
    }
    let single = runs[0].clone();
    for ((idle, runs), per_session) in IDLE_SESSIONS.iter().zip(runs).zip(per_session) {
        let ratio = median_ratio(&runs, &single);
        report(&format!("wharf --http, idle sessions: {idle}"), "64 clients", &median(runs), ratio);
        if !per_session.is_empty() {
            let mut sorted = per_session;
            sorted.sort_by(f64::total_cmp);
            let median = sorted[sorted.len() / 2];
            println!("  each idle 2025 session: {median:.0} bytes ({:.2} KiB) of resident memory", median / 1024.0);
        }
    }
}

/// The resource URL the authenticated server says it is, which tokens are issued for.
const RESOURCE: &str = "http://127.0.0.1/mcp";

/// A fresh access token for [`RESOURCE`] with the scope `mcp`, by client credentials from the
/// test provider at `issuer`, as an `Authorization` value.
fn bearer_token(runtime: &tokio::runtime::Runtime, issuer: &str) -> Arc<str> {
    let address: SocketAddr = issuer.trim_start_matches("http://").parse().expect("a loopback issuer");
    let form = format!("grant_type=client_credentials&scope=mcp&resource={RESOURCE}");
    // `wharf-test:wharf-test-secret`, the provider's test client.
    let basic = "Basic d2hhcmYtdGVzdDp3aGFyZi10ZXN0LXNlY3JldA==";
    let headers = [("Authorization", basic), ("Content-Type", "application/x-www-form-urlencoded")];
    let response = runtime.block_on(async {
        let mut connection = Connection::open(address).await.expect("connect to the provider");
        connection.post("/token", &headers, form.as_bytes()).await.expect("a token response")
    });
    assert_eq!(response.status, 200, "token: {}", String::from_utf8_lossy(&response.body));
    let body: serde_json::Value = serde_json::from_slice(&response.body).expect("a JSON token response");
    Arc::from(format!("Bearer {}", body["access_token"].as_str().expect("an access token")))
}

/// `wharf serve --http` with and without `--auth-issuer`, at 64 clients, round by round; every
/// authenticated request carries a token that is verified once and then found by its hash. The
/// server without auth is also sent the same token, which it ignores: against that, what auth
/// itself costs, apart from the 1 KB more each request carries.
fn compare_auth(runtime: &tokio::runtime::Runtime, wharf: &str, issuer: &str, count: usize, rounds: usize) {
    let plain = ["serve", "--http", "{addr}"];
    let guarded =
        ["serve", "--http", "{addr}", "--auth-issuer", issuer, "--auth-resource", RESOURCE, "--auth-scope", "mcp"];
    let clients = 64;
    for mode in [Mode::Stateless, Mode::Session] {
        let (mut off, mut ignored, mut on, mut on_before) = (Vec::new(), Vec::new(), Vec::new(), Vec::new());
        for _ in 0..rounds {
            let token = bearer_token(runtime, issuer);
            off.push(run(runtime, wharf, &plain, mode, clients, count, None));
            ignored.push(run(runtime, wharf, &plain, mode, clients, count, Some(token.clone())));
            on.push(run(runtime, wharf, &guarded, mode, clients, count, Some(token.clone())));
            // The build before a change, auth on, in the same rounds.
            if let Some((before, extra)) = compared_build() {
                let args: Vec<&str> = guarded.iter().copied().chain(extra.iter().map(String::as_str)).collect();
                on_before.push(run(runtime, &before, &args, mode, clients, count, Some(token)));
            }
        }
        let era = if mode == Mode::Stateless { "2026 stateless" } else { "2025 session" };
        let cpu = |runs: &[Measurement], baselines: &[Measurement]| {
            median_cpu_ratio(runs, baselines).map_or_else(|| "-".to_owned(), |ratio| format!("{ratio:.2}"))
        };
        println!(
            "  ({era}) processor time per request: auth on / off {}, auth on / off with the token sent {}",
            cpu(&on, &off),
            cpu(&on, &ignored)
        );
        let (ratio, ratio_ignored) = (median_ratio(&on, &off), median_ratio(&ignored, &off));
        report(&format!("wharf --http ({era}) auth off"), "64 clients", &median(off), 1.0);
        report(&format!("({era}) off, token sent"), "64 clients", &median(ignored), ratio_ignored);
        if !on_before.is_empty() {
            println!(
                "  ({era}) auth on, this build / the build before: processor time {}, throughput {:.2}",
                cpu(&on, &on_before),
                median_ratio(&on, &on_before)
            );
            report(&format!("before ({era}) auth on"), "64 clients", &median(on_before), 1.0);
        }
        report(&format!("wharf --http ({era}) auth on"), "64 clients", &median(on), ratio);
    }
}

fn main() {
    let target = std::env::var("WHARF_TARGET_DIR").unwrap_or_else(|_| "target/dist".to_owned());
    let wharf = format!("{target}/wharf");
    let bare = format!("{target}/bare-http-echo");
    // The build before a change, to compare with in the same rounds.
    let before = compared_build();
    let count: usize = std::env::var("BENCH_REQUESTS").ok().and_then(|n| n.parse().ok()).unwrap_or(40_000);
    let rounds: usize = std::env::var("BENCH_ROUNDS").ok().and_then(|n| n.parse().ok()).unwrap_or(3);
    let info = server_info(&answer_line(&wharf, &["serve"], &stateless_body(1)));
    // The load generator runs on one thread, so the servers keep the rest of the machine.
    let runtime = tokio::runtime::Builder::new_current_thread().enable_all().build().expect("a tokio runtime");
    // `BENCH_ONLY_GATEWAY=1` runs the gateway comparison alone.
    if std::env::var("BENCH_ONLY_GATEWAY").is_ok() {
        compare_gateway(&runtime, &wharf, &format!("{target}/bare-forward"), count, rounds);
        return;
    }
    // `BENCH_ONLY_SESSIONS=1` runs the comparison of idle session counts alone.
    if std::env::var("BENCH_ONLY_SESSIONS").is_ok() {
        compare_session_counts(&runtime, &wharf, count, rounds);
        return;
    }
    // `BENCH_ONLY_AUTH=1` runs the auth comparison alone.
    if let (Ok(issuer), Ok(_)) = (std::env::var("BENCH_OIDC_ISSUER"), std::env::var("BENCH_ONLY_AUTH")) {
        compare_auth(&runtime, &wharf, &issuer, count, rounds);
        return;
    }
    // `BENCH_ONLY_REDIS=1` runs the Redis comparison alone.
    if let (Ok(redis), Ok(_)) = (std::env::var("BENCH_REDIS_URL"), std::env::var("BENCH_ONLY_REDIS")) {
        compare_redis(&runtime, &wharf, &redis, count, rounds);
        return;
    }

    // `http-bench --against ADDRESS session|stateless CLIENTS REQUESTS` only sends load to a
    // server started by hand, under a profiler for instance, with `BENCH_AUTHORIZATION` if set.
    let args: Vec<String> = std::env::args().skip(1).collect();
    if let [flag, address, mode, clients, requests] = args.as_slice()
        && flag == "--against"
    {
        let address = address.parse().expect("an address like 127.0.0.1:8080");
        let mode = if mode == "session" { Mode::Session } else { Mode::Stateless };
        let (clients, requests) =
            (clients.parse().expect("a client count"), requests.parse().expect("a request count"));
        // `BENCH_AUTHORIZATION` is sent as every request's `Authorization` (`Bearer ...`).
        let authorization = std::env::var("BENCH_AUTHORIZATION").ok().map(Arc::from);
        let (elapsed, latencies) = load(&runtime, address, mode, clients, requests, authorization);
        let measured = Measurement::new(latencies.len(), elapsed, latencies, 0, None);
        report(&format!("{mode:?} against {address}"), &format!("{clients} clients"), &measured, 1.0);
        return;
    }

    for clients in [1usize, 16, 64] {
        let n = if clients == 1 { count / 4 } else { count };
        let mut runs = EraRuns::default();
        let wharf_args = ["serve", "--http", "{addr}"];
        for _ in 0..rounds {
            runs.bare_session.push(run(&runtime, &bare, &["{addr}", &info], Mode::BareSession, clients, n, None));
            runs.session.push(run(&runtime, &wharf, &wharf_args, Mode::Session, clients, n, None));
            runs.bare_stateless.push(run(&runtime, &bare, &["{addr}", &info], Mode::BareStateless, clients, n, None));
            runs.stateless.push(run(&runtime, &wharf, &wharf_args, Mode::Stateless, clients, n, None));
            if let Some((before, extra)) = &before {
                let args: Vec<&str> = wharf_args.iter().copied().chain(extra.iter().map(String::as_str)).collect();
                runs.before_session.push(run(&runtime, before, &args, Mode::Session, clients, n, None));
                runs.before_stateless.push(run(&runtime, before, &args, Mode::Stateless, clients, n, None));
            }
        }
        runs.report("bare hyper echo", "body", "wharf --http", &format!("{clients} clients"));
    }

    if let Ok(issuer) = std::env::var("BENCH_OIDC_ISSUER") {
        compare_auth(&runtime, &wharf, &issuer, count, rounds);
    }

    compare_session_counts(&runtime, &wharf, count, rounds);
}

/// `wharf serve --http` with and without `--redis`, at 64 clients, round by round, in both
/// eras; then the Redis commands one `tools/call` costs in each.
fn compare_redis(runtime: &tokio::runtime::Runtime, wharf: &str, redis_url: &str, count: usize, rounds: usize) {
    let plain = ["serve", "--http", "{addr}"];
    let shared = ["serve", "--http", "{addr}", "--redis", redis_url, "--redis-prefix", "bench"];
    let clients = 64;
    for mode in [Mode::Session, Mode::Stateless] {
        let (mut off, mut on, mut on_before) = (Vec::new(), Vec::new(), Vec::new());
        for _ in 0..rounds {
            off.push(run(runtime, wharf, &plain, mode, clients, count, None));
            on.push(run(runtime, wharf, &shared, mode, clients, count, None));
            // The build before a change, on Redis, in the same rounds.
            if let Some((before, extra)) = compared_build() {
                let args: Vec<&str> = shared.iter().copied().chain(extra.iter().map(String::as_str)).collect();
                on_before.push(run(runtime, &before, &args, mode, clients, count, None));
            }
        }
        let ratio = median_ratio(&on, &off);
        let cpu = |runs: &[Measurement], against: &[Measurement]| {
            median_cpu_ratio(runs, against).map_or_else(|| "-".to_owned(), |cpu| format!("{cpu:.3}"))
        };
        let era = if mode == Mode::Stateless { "2026 stateless" } else { "2025 session" };
        println!("  ({era}) server CPU per request, Redis / memory, per round (median): {}", cpu(&on, &off));
        if !on_before.is_empty() {
            println!(
                "  ({era}) Redis, this build / the build before: throughput {:.3}, server CPU per request {}",
                median_ratio(&on, &on_before),
                cpu(&on, &on_before)
            );
            let before_ratio = median_ratio(&on_before, &off);
            report(&format!("the build before ({era}) Redis"), "64 clients", &median(on_before), before_ratio);
        }
        report(&format!("wharf --http ({era}) memory"), "64 clients", &median(off), 1.0);
        report(&format!("wharf --http ({era}) Redis"), "64 clients", &median(on), ratio);
    }
    if let Ok(seeds) = std::env::var("BENCH_REDIS_CLUSTER") {
        compare_cluster(runtime, wharf, redis_url, &seeds, count, rounds);
    }
    // A streamed answer's events are kept in Redis before each is sent: three waits a call.
    let before = std::env::var("WHARF_BEFORE").ok();
    let (mut off, mut on, mut on_before) = (Vec::new(), Vec::new(), Vec::new());
    for _ in 0..rounds {
        off.push(run(runtime, wharf, &plain, Mode::SessionStreamed, clients, count / 2, None));
        on.push(run(runtime, wharf, &shared, Mode::SessionStreamed, clients, count / 2, None));
        if let Some(before) = &before {
            on_before.push(run(runtime, before, &shared, Mode::SessionStreamed, clients, count / 2, None));
        }
    }
    let cpu = |runs: &[Measurement], against: &[Measurement]| {
        median_cpu_ratio(runs, against).map_or_else(|| "-".to_owned(), |cpu| format!("{cpu:.3}"))
    };
    report("wharf --http (2025 session, streamed log) memory", "64 clients", &median(off.clone()), 1.0);
    report(
        "wharf --http (2025 session, streamed log) Redis",
        "64 clients",
        &median(on.clone()),
        median_ratio(&on, &off),
    );
    println!("  server CPU per request, Redis / memory, per round (median): {}", cpu(&on, &off));
    if !on_before.is_empty() {
        report(
            "wharf --http (2025 session, streamed log) Redis, build before",
            "64 clients",
            &median(on_before.clone()),
            median_ratio(&on_before, &off),
        );
        println!(
            "  this build / the build before, Redis: throughput {:.3}, server CPU per request {}",
            median_ratio(&on, &on_before),
            cpu(&on, &on_before)
        );
    }
    for mode in [Mode::Session, Mode::Stateless] {
        let server = ServerProcess::start(wharf, &shared);
        let calls = 1_000;
        // Counted around a client that only opens its session and around one that also calls
        // `calls` times, so that what opening a session costs drops out.
        let commands_around = |calls: usize| {
            let before = redis_commands(redis_url);
            runtime.block_on(client(server.address, mode, calls, 1, None));
            redis_commands(redis_url) - before
        };
        let opening = commands_around(0);
        let calling = commands_around(calls);
        let era = if mode == Mode::Stateless { "2026 stateless" } else { "2025 session" };
        println!(
            "Redis commands per tools/call ({era}): {:.2}; opening a session: {opening}",
            (calling - opening) as f64 / calls as f64
        );
    }
}

/// `wharf serve --http` with its stores on a Redis Cluster (`seeds`, separated by spaces)
/// against on one Redis, at 64 clients, interleaved, in both eras and for the streamed answer.
fn compare_cluster(
    runtime: &tokio::runtime::Runtime,
    wharf: &str,
    redis_url: &str,
    seeds: &str,
    count: usize,
    rounds: usize,
) {
    let one = ["serve", "--http", "{addr}", "--redis", redis_url, "--redis-prefix", "bench"];
    let mut cluster: Vec<&str> = vec!["serve", "--http", "{addr}", "--redis-prefix", "bench"];
    for seed in seeds.split_whitespace() {
        cluster.extend(["--redis-cluster", seed]);
    }
    for (mode, count) in [(Mode::Session, count), (Mode::Stateless, count), (Mode::SessionStreamed, count / 2)] {
        let (mut on_one, mut on_cluster) = (Vec::new(), Vec::new());
        for _ in 0..rounds {
            on_one.push(run(runtime, wharf, &one, mode, 64, count, None));
            on_cluster.push(run(runtime, wharf, &cluster, mode, 64, count, None));
        }
        let era = match mode {
            Mode::Stateless => "2026 stateless",
            Mode::SessionStreamed => "2025 session, streamed log",
            _ => "2025 session",
        };
        report(&format!("wharf --http ({era}) one Redis"), "64 clients", &median(on_one.clone()), 1.0);
        report(
            &format!("wharf --http ({era}) Redis Cluster"),
            "64 clients",
            &median(on_cluster.clone()),
            median_ratio(&on_cluster, &on_one),
        );
        let cpu = median_cpu_ratio(&on_cluster, &on_one).map_or_else(|| "-".to_owned(), |cpu| format!("{cpu:.3}"));
        println!("  server CPU per request, cluster / one Redis, per round (median): {cpu}");
    }
    // What waiting for a replica costs a session's opening: sessions opened one after another
    // on one connection, on the cluster with and without `--redis-wait-replicas 1`.
    let mut waiting = cluster.clone();
    waiting.extend(["--redis-wait-replicas", "1"]);
    let opening = |args: &[&str]| {
        let server = ServerProcess::start(wharf, args);
        let address = server.address;
        runtime.block_on(async move {
            let mut connection = Connection::open(address).await.expect("connect");
            open_session(&mut connection, None).await;
            let sessions = 2_000;
            let started = Instant::now();
            for _ in 0..sessions {
                open_session(&mut connection, None).await;
            }
            started.elapsed() / sessions
        })
    };
    let (mut without, mut with) = (Vec::new(), Vec::new());
    for _ in 0..rounds {
        without.push(opening(&cluster));
        with.push(opening(&waiting));
    }
    without.sort();
    with.sort();
    let (without, with) = (without[without.len() / 2], with[with.len() / 2]);
    println!(
        "opening a session on the cluster (median of {rounds} rounds of 2,000, one at a time): {:.0} µs, \
         {:.0} µs waiting for a replica ({:.2}x)",
        without.as_secs_f64() * 1e6,
        with.as_secs_f64() * 1e6,
        with.as_secs_f64() / without.as_secs_f64()
    );
}

/// `wharf gateway --http` in front of `wharf serve` (over HTTP, and as a program on stdio)
/// against `wharf serve --http` alone, at 1, 16 and 64 clients, round by round, in both eras:
/// throughput, and the processor time per call of the gateway and its upstream together against
/// the server's alone. The bare forwarder (`bare-forward`) stands in the gateway's place in the
/// same rounds: the floor of any forwarding on this machine, which the gateway is also compared
/// with.
fn compare_gateway(runtime: &tokio::runtime::Runtime, wharf: &str, forwarder: &str, count: usize, rounds: usize) {
    let dir = std::env::temp_dir().join(format!("wharf-gateway-bench-{}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("a temporary directory");
    let direct = ["serve", "--http", "{addr}"];
    for clients in [1usize, 16, 64] {
        let n = if clients == 1 { count / 4 } else { count };
        for mode in [Mode::Stateless, Mode::Session] {
            let mut alone = Vec::new();
            let (mut over_http, mut over_stdio) = (Vec::new(), Vec::new());
            let (mut bare_http, mut bare_stdio) = (Vec::new(), Vec::new());
            for _ in 0..rounds {
                alone.push(run(runtime, wharf, &direct, mode, clients, n, None));
                let upstream = ServerProcess::start(wharf, &direct);
                let url = format!("http://{}/mcp", upstream.address);
                let config = dir.join("http.toml");
                std::fs::write(&config, format!("[[mount]]\nname = \"up\"\nurl = {url:?}\nnamespace = \"\"\n"))
                    .unwrap();
                let gateway = ["gateway", &config.to_string_lossy(), "--http", "{addr}"].map(str::to_owned);
                over_http.push(run_with(runtime, wharf, &gateway, mode, clients, n, Some(upstream.pid())));
                let bare = ["{addr}", "url", &url].map(str::to_owned);
                bare_http.push(run_with(runtime, forwarder, &bare, mode, clients, n, Some(upstream.pid())));
                drop(upstream);
                let config = dir.join("stdio.toml");
                let mount = format!("command = [{wharf:?}, \"serve\"]");
                std::fs::write(&config, format!("[[mount]]\nname = \"up\"\n{mount}\nnamespace = \"\"\n")).unwrap();
                let gateway = ["gateway", &config.to_string_lossy(), "--http", "{addr}"].map(str::to_owned);
                over_stdio.push(run_with(runtime, wharf, &gateway, mode, clients, n, None));
                let mut bare: Vec<String> = ["{addr}", "command"].map(str::to_owned).into();
                bare.extend((mode == Mode::Session).then(|| "--initialize".to_owned()));
                bare.extend([wharf.to_owned(), "serve".to_owned()]);
                bare_stdio.push(run_with(runtime, forwarder, &bare, mode, clients, n, None));
            }
            let era = if mode == Mode::Stateless { "2026 stateless" } else { "2025 session" };
            let label = format!("{clients} clients");
            let cpu = |runs: &[Measurement], against: &[Measurement]| {
                median_cpu_ratio(runs, against).map_or_else(|| "-".to_owned(), |cpu| format!("{cpu:.2}"))
            };
            report(&format!("wharf serve --http ({era})"), &label, &median(alone.clone()), 1.0);
            for (upstream, gateway, bare) in [("HTTP", &over_http, &bare_http), ("stdio", &over_stdio, &bare_stdio)] {
                report(
                    &format!("bare forwarder, {upstream} upstream ({era})"),
                    &label,
                    &median(bare.clone()),
                    median_ratio(bare, &alone),
                );
                println!(
                    "  processor time per call, forwarder and upstream / serve alone (median): {}",
                    cpu(bare, &alone)
                );
                report(
                    &format!("gateway, {upstream} upstream ({era})"),
                    &label,
                    &median(gateway.clone()),
                    median_ratio(gateway, &alone),
                );
                println!(
                    "  processor time per call, gateway and upstream / serve alone (median): {}",
                    cpu(gateway, &alone)
                );
                println!(
                    "  gateway / bare forwarder: throughput {:.2}, processor time per call {}",
                    median_ratio(gateway, bare),
                    cpu(gateway, bare)
                );
            }
        }
    }
    let _ = std::fs::remove_dir_all(&dir);
}

/// [`run`] for a forwarder (`wharf gateway` or `bare-forward`), its processor time counted with
/// its upstream's: `upstream` when it runs apart, or the forwarder's children (a program on
/// stdio).
fn run_with(
    runtime: &tokio::runtime::Runtime,
    program: &str,
    args: &[String],
    mode: Mode,
    clients: usize,
    count: usize,
    upstream: Option<u32>,
) -> Measurement {
    let args: Vec<&str> = args.iter().map(String::as_str).collect();
    let server = ServerProcess::start(program, &args);
    let children = upstream.map_or_else(|| child_pids(server.pid()), |pid| vec![pid]);
    let before: Duration = children.iter().filter_map(|pid| cpu_time(*pid)).sum();
    let (elapsed, latencies) = load(runtime, server.address, mode, clients, count, None);
    let upstream_cpu = children.iter().filter_map(|pid| cpu_time(*pid)).sum::<Duration>().saturating_sub(before);
    let cpu = cpu_time(server.pid()).map(|forwarder| forwarder + upstream_cpu);
    Measurement::new(latencies.len(), elapsed, latencies, peak_rss_kib(server.pid()), cpu)
}

/// The processes `pid` started, from `/proc`.
fn child_pids(pid: u32) -> Vec<u32> {
    let path = format!("/proc/{pid}/task/{pid}/children");
    std::fs::read_to_string(path)
        .map(|text| text.split_whitespace().filter_map(|child| child.parse().ok()).collect())
        .unwrap_or_default()
}

/// How many commands the Redis at `url` (redis://HOST:PORT/) has processed, by `INFO stats`,
/// whose answer is one bulk string: `$LENGTH`, CRLF, the text, CRLF.
fn redis_commands(url: &str) -> i64 {
    use std::io::{BufRead, BufReader, Read, Write};
    let address = url.trim_start_matches("redis://").trim_end_matches('/');
    let mut stream = std::net::TcpStream::connect(address).expect("connect to Redis");
    stream.write_all(b"INFO stats\r\n").expect("ask Redis");
    let mut reader = BufReader::new(stream);
    let mut header = String::new();
    reader.read_line(&mut header).expect("Redis answers");
    let length: usize = header.trim().trim_start_matches('$').parse().expect("a bulk string");
    let mut text = vec![0u8; length];
    reader.read_exact(&mut text).expect("the whole answer");
    let text = String::from_utf8_lossy(&text);
    let count = text.lines().find_map(|line| line.strip_prefix("total_commands_processed:")).expect("a command count");
    count.trim().parse().expect("a number")
}
