//! Wire tests of `wharf serve --http`: raw HTTP/1.1 bytes against the real binary on a loopback
//! port, what it writes on stderr, and how it stops.

use std::io::Read;
use std::net::TcpListener;
use std::process::{Command, Stdio};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use wharf_testkit::ports::accepts;
use wharf_testkit::process::Process;
use wharf_testkit::raw_http::{self, JSON, Reply};
use wharf_testkit::stub_http::{Answer, Stub};

mod support;
use support::Serving;

/// A POST of `body` to `/mcp` with JSON's `Content-Type` and `Accept`, and `headers` (`Host`
/// among them, or `localhost:PORT`).
fn post_request(port: u16, headers: &[(&str, &str)], body: &str) -> String {
    raw_http::request_bytes(port, "POST", "/mcp", &[&JSON[..], headers].concat(), body)
}

/// Posts with `Connection: close` and reads the whole response.
fn post(port: u16, headers: &[(&str, &str)], body: &str) -> Reply {
    raw_http::exchange_blocking(port, &post_request(port, headers, body))
}

const INITIALIZE: &str = r#"{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"wire","version":"1"}}}"#;

/// Opens a 2025-11-25 session and returns its id.
fn session(port: u16) -> String {
    let response = post(port, &[], INITIALIZE);
    let id = response.header("mcp-session-id").unwrap_or_else(|| panic!("no session id in {response:?}")).to_owned();
    let initialized = r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#;
    let response = post(port, &session_headers(&id), initialized);
    assert_eq!(response.status, 202, "{response:?}");
    id
}

fn session_headers(id: &str) -> [(&'static str, &str); 2] {
    [("Mcp-Session-Id", id), ("MCP-Protocol-Version", "2025-11-25")]
}

/// At debug level every HTTP request is logged with its method, status and duration, and a
/// session by the first characters of its id only.
#[test]
fn at_debug_level_every_http_request_is_logged_without_the_whole_session_id() {
    let serving = Serving::start("127.0.0.1:0", &[], "debug");
    let port = serving.port;
    let session = session(port);
    let answered = post(port, &session_headers(&session), r#"{"jsonrpc":"2.0","id":1,"method":"ping"}"#);
    assert_eq!(answered.status, 200, "{answered:?}");
    serving.signal("TERM");
    let (code, stderr) = serving.wait();
    assert_eq!(code, Some(0), "{stderr}");
    let logged: Vec<&str> = stderr.lines().filter(|line| line.contains("HTTP request")).collect();
    assert_eq!(logged.len(), 3, "{stderr}");
    assert!(logged.iter().all(|line| line.contains("http_method=POST")), "{stderr}");
    assert!(logged[2].contains("status=200") && logged[2].contains(&format!("session=\"{}\"", &session[..8])));
    assert!(!stderr.contains(&session), "the whole session id is never logged: {stderr}");
    assert!(stderr.contains("request answered") && stderr.contains("method=\"ping\""), "{stderr}");
}

/// SIGTERM with a tool call in flight on its SSE stream: the call is answered, the stream ends
/// cleanly, new connections are refused, and the process exits 0.
#[test]
fn sigterm_answers_the_request_in_flight_then_exits_0() {
    let mut serving = Serving::start("localhost:0", &[], "info");
    let port = serving.port;
    let session = session(port);
    let countdown = r#"{"jsonrpc":"2.0","id":9,"method":"tools/call","params":{"name":"countdown","arguments":{"steps":20},"_meta":{"progressToken":"c"}}}"#;
    let mut call = raw_http::open_blocking(port, &post_request(port, &session_headers(&session), countdown));
    let mut stream = String::new();
    raw_http::read_until_blocking(&mut call, &mut stream, "notifications/progress");
    serving.signal("TERM");
    serving.wait_for("shutting down");
    call.read_to_string(&mut stream).unwrap();
    assert!(stream.contains(r#""id":9,"result""#) && stream.contains("Counted down 20 steps"), "{stream}");
    assert!(stream.ends_with("0\r\n\r\n"), "the stream ends with its last chunk: {stream}");
    let (code, stderr) = serving.wait();
    assert_eq!(code, Some(0), "{stderr}");
    assert!(stderr.contains("wharf serve: stopped"), "{stderr}");
    assert!(!accepts(port), "no connection is accepted after");
}

/// Host names are accepted as addresses; a port in use is one error naming the address, with
/// no banner; `--allowed-host` adds a name the server answers to.
#[test]
fn addresses_are_named_in_errors_and_allowed_hosts_are_answered() {
    let taken = TcpListener::bind("127.0.0.1:0").unwrap();
    let address = taken.local_addr().unwrap().to_string();
    let output = Command::new(env!("CARGO_BIN_EXE_wharf")).args(["serve", "--http", &address]).output().unwrap();
    assert_eq!(output.status.code(), Some(1));
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert_eq!(stderr.lines().count(), 1, "one error: {stderr}");
    assert!(stderr.contains(&format!("cannot listen on {address}")), "{stderr}");
    assert!(
        stderr.contains("; another program listens there: stop it, or pick another port (0 picks a free one)"),
        "{stderr}"
    );
    assert!(!stderr.contains("Streamable HTTP"), "no banner before listening: {stderr}");

    // A name clients use is allowed; the warning for a public address without one is
    // checked in main.rs, since tests listen on loopback only.
    let named = Serving::start("localhost:0", &["--allowed-host", "wharf.example"], "warn");
    let answered = post(named.port, &[("Host", "wharf.example")], INITIALIZE);
    assert_eq!(answered.status, 200, "{answered:?}");
    named.signal("INT");
    let (code, stderr) = named.wait();
    assert_eq!(code, Some(0), "{stderr}");
    assert!(!stderr.contains("warning"), "{stderr}");
}

/// An address that is not HOST:PORT is a wrong command line (exit 2, as documented), which says
/// the form; one that parses but cannot be bound stays a failure to start (exit 1), above
/// (issue 37).
#[test]
fn a_malformed_address_is_a_usage_error_that_shows_the_form() {
    for (address, why) in [("nonsense", "no port"), ("127.0.0.1:99999", "the port 99999 is past 65535")] {
        let output = Command::new(env!("CARGO_BIN_EXE_wharf")).args(["serve", "--http", address]).output().unwrap();
        assert_eq!(output.status.code(), Some(2), "{address}");
        let stderr = String::from_utf8_lossy(&output.stderr);
        let expected = format!(
            "error: invalid value '{address}' for '--http <HOST:PORT>': {why}; write HOST:PORT, such as \
             127.0.0.1:8080, localhost:8080 or [::1]:8080 (port 0 picks a free one)"
        );
        assert!(stderr.starts_with(&expected), "{stderr}");
    }
}

/// With `--http 127.0.0.1:0` the banner names the port bound, which answers; with
/// `--auth-issuer` it says whose tokens, and which scopes, every request needs (issue 37).
#[test]
fn the_banner_names_the_port_bound_and_the_issuer_and_scopes_required() {
    let plain = Serving::start("127.0.0.1:0", &[], "warn");
    assert_ne!(plain.port, 0);
    let answered = post(plain.port, &[], INITIALIZE);
    assert_eq!(answered.status, 200, "{answered:?}");

    let issuer = Issuer::start(Naming::Itself);
    let mut guarded = Serving::start("127.0.0.1:0", &["--auth-issuer", &issuer.url, "--auth-scope", "mcp"], "warn");
    let banner = guarded.wait_for("/mcp (Streamable HTTP)");
    assert_eq!(
        banner,
        format!(
            "wharf serve: the Wharf demo MCP server, at http://127.0.0.1:{}/mcp (Streamable HTTP); OAuth on: tokens \
             from {}, scope mcp required; Ctrl-C stops it",
            guarded.port, issuer.url
        )
    );
    assert!(issuer.asked().contains(&"/jwks".to_owned()), "its keys were fetched at start: {:?}", issuer.asked());
}

/// What a [`Issuer`]'s metadata names as the issuer.
#[derive(Clone, Copy)]
enum Naming {
    Itself,
    Another,
}

/// The smallest authorization server `wharf serve --auth-issuer` starts with: RFC 8414 metadata
/// and an empty key set, on a loopback port, answering until the test ends.
struct Issuer {
    url: String,
    asked: Arc<Mutex<Vec<String>>>,
}

impl Issuer {
    fn start(naming: Naming) -> Issuer {
        let stub = Stub::bind();
        let url = stub.url();
        let asked = Arc::new(Mutex::new(Vec::new()));
        let (named, log) = (
            if matches!(naming, Naming::Itself) { url.clone() } else { "https://elsewhere.example".to_owned() },
            asked.clone(),
        );
        stub.serve(move |request| {
            log.lock().unwrap().push(request.path.clone());
            match request.path.as_str() {
                "/.well-known/oauth-authorization-server" => {
                    Answer::json(200, format!(r#"{{"issuer":"{named}","jwks_uri":"{named}/jwks"}}"#))
                }
                "/jwks" => Answer::json(200, r#"{"keys":[]}"#),
                _ => Answer::json(404, "{}"),
            }
        });
        Issuer { url, asked }
    }

    fn asked(&self) -> Vec<String> {
        self.asked.lock().unwrap().clone()
    }
}

/// Runs `wharf serve --http 127.0.0.1:0 EXTRA...` until it stops by itself (at most 20 s).
fn serve_until_it_stops(extra: &[&str]) -> (Option<i32>, String) {
    Process::spawn(
        Command::new(env!("CARGO_BIN_EXE_wharf"))
            .args(["serve", "--http", "127.0.0.1:0"])
            .args(extra)
            .stdin(Stdio::null())
            .stdout(Stdio::null()),
    )
    .wait_within(Duration::from_secs(20))
}

/// A mistyped or unreachable issuer stops the start, naming what was tried and what to do
/// (issue 37); `--auth-lazy` starts anyway, saying so loudly.
#[test]
fn an_issuer_that_cannot_be_reached_stops_the_start() {
    let (code, stderr) = serve_until_it_stops(&["--auth-issuer", "http://127.0.0.1:1"]);
    assert_eq!(code, Some(1), "{stderr}");
    assert!(
        stderr.contains("wharf serve: the issuer http://127.0.0.1:1 could not be reached for its metadata and keys: "),
        "{stderr}"
    );
    assert!(stderr.contains("http://127.0.0.1:1/.well-known/oauth-authorization-server"), "each URL tried: {stderr}");
    assert!(stderr.contains("http://127.0.0.1:1/.well-known/openid-configuration"), "each URL tried: {stderr}");
    assert!(stderr.contains("or pass --auth-lazy to start anyway"), "{stderr}");
    assert!(!stderr.contains("/mcp (Streamable HTTP)"), "no banner: {stderr}");

    let another = Issuer::start(Naming::Another);
    let (code, stderr) = serve_until_it_stops(&["--auth-issuer", &another.url]);
    assert_eq!(code, Some(1), "{stderr}");
    assert!(
        stderr.contains(&format!(
            "/.well-known/oauth-authorization-server: it names the issuer https://elsewhere.example, not {}",
            another.url
        )),
        "{stderr}"
    );

    let mut lazy = Serving::start("127.0.0.1:0", &["--auth-issuer", "http://127.0.0.1:1", "--auth-lazy"], "warn");
    let warning = lazy.wait_for("WARNING");
    assert!(
        warning.contains("starting anyway (--auth-lazy): every token is refused until they can be fetched"),
        "{warning}"
    );
}

/// `wharf serve --help` says where the folder layout is described instead of pointing to itself
/// (issue 37).
#[test]
fn the_help_of_serve_says_where_the_folder_layout_is_described() {
    let output = Command::new(env!("CARGO_BIN_EXE_wharf")).args(["serve", "--help"]).output().unwrap();
    let help = String::from_utf8_lossy(&output.stdout);
    assert!(help.contains("The guide's crates/wharf/guide/folder.md describes each"), "{help}");
    assert!(help.contains("`wharf new NAME --folder` makes one to start from"), "{help}");
    assert!(!help.contains("see `wharf serve --help`"), "{help}");
}

/// A GET of `/metrics` with `authorization` (none when empty).
fn get_metrics(port: u16, authorization: &str) -> Reply {
    let headers: &[(&str, &str)] = if authorization.is_empty() { &[] } else { &[("Authorization", authorization)] };
    raw_http::send_blocking(port, "GET", "/metrics", headers, "")
}

/// `--metrics` with WHARF_METRICS_TOKEN: a scrape needs that token (issue 38).
#[test]
fn the_metrics_token_guards_the_metrics() {
    let serving = Serving::start_with_env(
        "127.0.0.1:0",
        &["--metrics"],
        &[("WHARF_METRICS_TOKEN", "scrape"), ("WHARF_LOG", "warn")],
    );
    let refused = get_metrics(serving.port, "");
    assert_eq!(refused.status, 401, "{refused:?}");
    assert_eq!(get_metrics(serving.port, "Bearer wrong").status, 401);
    let scraped = get_metrics(serving.port, "Bearer scrape");
    assert_eq!(scraped.status, 200, "{scraped:?}");
}

/// `--max-sessions-per-client 2`: a third session from the same address ends that client's
/// session idle longest, which then answers 404; `--max-sessions 3` holds the whole table to
/// three, the address's quota raised past it. Both need a listener.
#[test]
fn the_session_limits_are_set_from_the_command_line() {
    let ping = r#"{"jsonrpc":"2.0","id":1,"method":"ping"}"#;
    let status = |port: u16, id: &str| post(port, &session_headers(id), ping).status;

    let serving = Serving::start("127.0.0.1:0", &["--max-sessions-per-client", "2"], "warn");
    let (first, second) = (session(serving.port), session(serving.port));
    std::thread::sleep(Duration::from_millis(5));
    assert_eq!(status(serving.port, &second), 200);
    let third = session(serving.port);
    assert_eq!(status(serving.port, &first), 404, "the session idle longest is ended");
    assert_eq!((status(serving.port, &second), status(serving.port, &third)), (200, 200));
    serving.signal("TERM");
    assert_eq!(serving.wait().0, Some(0));

    let serving = Serving::start("127.0.0.1:0", &["--max-sessions", "3", "--max-sessions-per-client", "50"], "warn");
    let ids: Vec<String> = (0..4).map(|_| session(serving.port)).collect();
    let live = ids.iter().filter(|id| status(serving.port, id) == 200).count();
    assert_eq!(live, 3, "the table holds three");
    assert_eq!(status(serving.port, &ids[0]), 404, "the oldest went");
    serving.signal("TERM");
    assert_eq!(serving.wait().0, Some(0));

    let refused = Command::new(env!("CARGO_BIN_EXE_wharf"))
        .args(["serve", "--max-sessions", "3"])
        .stdin(Stdio::null())
        .output()
        .expect("wharf runs");
    assert_eq!(refused.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&refused.stderr).contains("--max-sessions"), "{refused:?}");
}
