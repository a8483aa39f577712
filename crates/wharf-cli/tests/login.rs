//! `wharf login`, the stored tokens and `wharf logout`, against `wharf serve --auth-issuer` and
//! the real OpenID provider `scripts/test` starts (`interop/oidc/provider.mjs`, named in
//! `WHARF_TEST_OIDC_DIR`). The browser is `fixtures/headless_browser.py`, which follows the
//! provider's login and consent pages back to the port `wharf login` listens on.

mod support;

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

use serde_json::Value;
use support::Serving;
use wharf_testkit::process::Process;
use wharf_testkit::temp_dir::TempDir;

/// What one run of `wharf` did.
struct Run {
    code: Option<i32>,
    stdout: String,
    stderr: String,
}

/// Where `wharf` keeps the tokens, in `scratch`.
fn tokens(scratch: &TempDir) -> PathBuf {
    scratch.path().join("config").join("tokens.json")
}

/// What the headless browser visited.
fn browser_log(scratch: &TempDir) -> String {
    std::fs::read_to_string(scratch.path().join("browser.log")).unwrap_or_default()
}

/// Runs `wharf ARGS --tokens FILE` with the headless browser as $BROWSER, stdin not a
/// terminal; killed after a minute.
fn wharf(scratch: &TempDir, args: &[&str]) -> Run {
    wharf_with_secret(scratch, args, None)
}

/// Like [`wharf`], with WHARF_CLIENT_SECRET set to `secret`.
fn wharf_with_secret(scratch: &TempDir, args: &[&str], secret: Option<&str>) -> Run {
    let fixture = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/headless_browser.py");
    // Runs may be at once: each writes files of its own.
    static RUNS: AtomicUsize = AtomicUsize::new(0);
    let run = RUNS.fetch_add(1, Ordering::Relaxed);
    let out = scratch.path().join(format!("stdout-{run}"));
    let running = Process::spawn(
        Command::new(env!("CARGO_BIN_EXE_wharf"))
            .args(args)
            .arg("--tokens")
            .arg(tokens(scratch))
            .env("BROWSER", format!("python3 '{}'", fixture.display().to_string().replace('\'', r"'\''")))
            .env("WHARF_TEST_BROWSER_LOG", scratch.path().join("browser.log"))
            .env_remove("WHARF_BEARER_TOKEN")
            .env_remove("WHARF_CLIENT_ID")
            .env_remove("WHARF_CLIENT_SECRET")
            .envs(secret.map(|secret| ("WHARF_CLIENT_SECRET", secret)))
            .stdin(Stdio::null())
            .stdout(std::fs::File::create(&out).unwrap()),
    );
    let (code, stderr) = running.wait_within(Duration::from_secs(60));
    Run { code, stdout: std::fs::read_to_string(out).unwrap(), stderr }
}

fn issuer() -> String {
    let dir = std::env::var("WHARF_TEST_OIDC_DIR").expect("WHARF_TEST_OIDC_DIR names the provider's directory");
    let port = std::fs::read_to_string(format!("{dir}/port")).unwrap();
    format!("http://127.0.0.1:{}", port.trim())
}

fn serve_behind(issuer: &str) -> (Serving, String) {
    let serving = Serving::start("127.0.0.1:0", &["--auth-issuer", issuer, "--auth-scope", "mcp"], "info");
    let url = format!("http://127.0.0.1:{}/mcp", serving.port);
    (serving, url)
}

#[test]
#[ignore = "needs the OpenID provider scripts/test starts (WHARF_TEST_OIDC_DIR)"]
fn a_login_in_the_browser_is_kept_and_used_by_later_commands_until_logout() {
    let issuer = issuer();
    let (_serving, url) = serve_behind(&issuer);
    let scratch = TempDir::new("login-browser");

    // Nothing stored, nobody at a terminal: the server's 401 ends the command, no browser.
    let refused = wharf(&scratch, &["list", &url, "tools"]);
    assert_eq!(refused.code, Some(5), "{}", refused.stderr);
    assert!(refused.stderr.contains("WWW-Authenticate: Bearer"), "{}", refused.stderr);
    assert!(refused.stderr.contains("wharf login"), "the way out is named: {}", refused.stderr);
    assert_eq!(browser_log(&scratch), "");

    // The login: registration, the browser through login and consent, the code exchanged.
    let login = wharf(&scratch, &["login", &url]);
    assert_eq!(login.code, Some(0), "{}\n{}", login.stdout, login.stderr);
    assert!(login.stdout.contains(&format!("Logged in to {url} (issuer {issuer}")), "{}", login.stdout);
    assert!(login.stderr.contains("/auth?"), "the address is printed for the person: {}", login.stderr);
    let visits = browser_log(&scratch);
    assert_eq!(visits.lines().count(), 1, "{visits}");
    assert!(visits.starts_with("http://127.0.0.1:") && visits.contains("/callback True"), "{visits}");

    let stored: Value = serde_json::from_str(&std::fs::read_to_string(tokens(&scratch)).unwrap()).unwrap();
    let entry = &stored[url.as_str()];
    assert_eq!(entry["issuer"], issuer.as_str());
    assert!(entry["access_token"].as_str().is_some_and(|token| token.len() > 20), "{entry}");
    assert!(entry["scope"].as_str().is_some_and(|scope| scope.split(' ').any(|one| one == "mcp")), "{entry}");
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        let mode = std::fs::metadata(tokens(&scratch)).unwrap().permissions().mode() & 0o777;
        assert_eq!(mode, 0o600, "the token file is its owner's only");
        let dir_mode = std::fs::metadata(tokens(&scratch).parent().unwrap()).unwrap().permissions().mode() & 0o777;
        assert_eq!(dir_mode, 0o700);
    }
    assert!(!login.stderr.contains(entry["access_token"].as_str().unwrap()), "the token is never printed");

    // A later command uses the stored token: no browser.
    let call = wharf(&scratch, &["call", &url, "echo", "message=from the store"]);
    assert_eq!(call.code, Some(0), "{}", call.stderr);
    assert_eq!(call.stdout.trim(), "from the store");
    assert_eq!(browser_log(&scratch).lines().count(), 1, "no second login");

    // More scope needs a person: without one, exit 5 and the login to run, with the scopes.
    let step_up = wharf(&scratch, &["call", &url, "admin_report"]);
    assert_eq!(step_up.code, Some(5), "{}\n{}", step_up.stdout, step_up.stderr);
    // It names the same token file (the command was given one), and the scopes to ask for.
    let login_again =
        format!("wharf login {url} --tokens {} --scope demo:admin --scope mcp`", tokens(&scratch).display());
    assert!(step_up.stderr.contains(&login_again), "{}", step_up.stderr);
    assert_eq!(browser_log(&scratch).lines().count(), 1, "no browser without a person");

    // That login asks for the scope up front; the call then goes through.
    let login = wharf(&scratch, &["login", &url, "--scope", "demo:admin", "--scope", "mcp"]);
    assert_eq!(login.code, Some(0), "{}\n{}", login.stdout, login.stderr);
    assert!(login.stdout.contains("demo:admin"), "the scopes granted are shown: {}", login.stdout);
    assert_eq!(browser_log(&scratch).lines().count(), 2);
    let admin = wharf(&scratch, &["call", &url, "admin_report"]);
    assert_eq!(admin.code, Some(0), "{}\n{}", admin.stdout, admin.stderr);
    assert!(admin.stdout.contains("demo:admin"), "{}", admin.stdout);

    // Logged out: the store forgets the server, which refuses again.
    let logout = wharf(&scratch, &["logout", &url]);
    assert_eq!(logout.code, Some(0), "{}", logout.stderr);
    assert!(logout.stdout.contains("Forgot the tokens of 1 server."), "{}", logout.stdout);
    let stored: Value = serde_json::from_str(&std::fs::read_to_string(tokens(&scratch)).unwrap()).unwrap();
    assert!(stored.get(url.as_str()).is_none(), "{stored}");
    assert_eq!(wharf(&scratch, &["list", &url]).code, Some(5));
}

#[test]
#[ignore = "needs the OpenID provider scripts/test starts (WHARF_TEST_OIDC_DIR)"]
fn commands_run_at_once_spend_the_refresh_token_once() {
    let issuer = issuer();
    let (_serving, url) = serve_behind(&issuer);
    let scratch = TempDir::new("login-refresh");
    let login = wharf(&scratch, &["login", &url]);
    assert_eq!(login.code, Some(0), "{}\n{}", login.stdout, login.stderr);

    // The access token stops working (as an expired one would); the refresh token is good.
    let mut stored: Value = serde_json::from_str(&std::fs::read_to_string(tokens(&scratch)).unwrap()).unwrap();
    let before = stored[url.as_str()].clone();
    assert!(before["refresh_token"].is_string(), "the provider issues refresh tokens: {before}");
    stored[url.as_str()]["access_token"] = Value::from("no-longer-valid");
    std::fs::write(tokens(&scratch), serde_json::to_vec(&stored).unwrap()).unwrap();

    // Six commands at once meet the 401 together. The provider rotates refresh tokens and
    // revokes the grant when one is used twice, so only one of them may refresh; the others
    // take what it stored.
    let runs: Vec<Run> = std::thread::scope(|threads| {
        let started: Vec<_> = (0..6)
            .map(|index| {
                let (scratch, url) = (&scratch, &url);
                threads.spawn(move || wharf(scratch, &["call", url, "echo", &format!("message=run {index}")]))
            })
            .collect();
        started.into_iter().map(|run| run.join().unwrap()).collect()
    });
    for (index, run) in runs.iter().enumerate() {
        assert_eq!(run.code, Some(0), "run {index}: {}\n{}", run.stdout, run.stderr);
        assert_eq!(run.stdout.trim(), format!("run {index}"));
    }
    let after: Value = serde_json::from_str(&std::fs::read_to_string(tokens(&scratch)).unwrap()).unwrap();
    let after = &after[url.as_str()];
    assert_ne!(after["access_token"], "no-longer-valid");
    assert_ne!(after["refresh_token"], before["refresh_token"], "rotated");
    assert_eq!(browser_log(&scratch).lines().count(), 1, "no second login");
    // The grant survived: one more command works with what is stored.
    let later = wharf(&scratch, &["call", &url, "echo", "message=later"]);
    assert_eq!(later.code, Some(0), "{}", later.stderr);
}

#[test]
#[ignore = "needs the OpenID provider scripts/test starts (WHARF_TEST_OIDC_DIR)"]
fn client_credentials_authorize_without_a_person() {
    let issuer = issuer();
    let (_serving, url) = serve_behind(&issuer);
    let scratch = TempDir::new("login-machine");
    let credentials = ["--client-credentials", "--client-id", "wharf-test"];
    let mut args = vec!["call", &url, "echo", "message=machine"];
    args.extend(credentials);
    let call = wharf_with_secret(&scratch, &args, Some("wharf-test-secret"));
    assert_eq!(call.code, Some(0), "{}", call.stderr);
    assert_eq!(call.stdout.trim(), "machine");
    assert_eq!(browser_log(&scratch), "", "no browser");

    // A wrong secret, and nothing stored to fall back on.
    let fresh = TempDir::new("login-wrong-secret");
    let wrong =
        wharf_with_secret(&fresh, &["list", &url, "--client-credentials", "--client-id", "wharf-test"], Some("no"));
    assert_eq!(wrong.code, Some(5), "{}\n{}", wrong.stdout, wrong.stderr);
    assert!(!wrong.stderr.contains("wharf-test-secret"));
}

/// `wharf gateway` in front of a server that wants tokens: the mount's `[mount.oauth]` client
/// credentials get the gateway a token of its own from the upstream's issuer, with the secret
/// read from the environment; without them the upstream cannot be mounted.
#[test]
#[ignore = "needs the OpenID provider scripts/test starts (WHARF_TEST_OIDC_DIR)"]
fn a_gateway_mount_authorizes_with_its_own_client_credentials() {
    let issuer = issuer();
    let (_serving, url) = serve_behind(&issuer);
    let scratch = TempDir::new("gateway-oauth");
    let mount = format!("[[mount]]\nname = \"guarded\"\nurl = \"{url}\"\n");
    scratch.write("plain.toml", &mount);
    scratch.write(
        "gateway.toml",
        format!("{mount}\n[mount.oauth]\nclient_id = \"wharf-test\"\nclient_secret_from = \"WHARF_TEST_GATEWAY_SECRET\"\nscopes = [\"mcp\"]\n"),
    );
    let wharf = env!("CARGO_BIN_EXE_wharf");
    // The gateway's stderr passes through `wharf call`'s, which shows why a start failed.
    let call = |config: &str| {
        Command::new(wharf)
            .args(["call", "guarded_echo", "message=through", "--", wharf, "gateway"])
            .arg(scratch.path().join(config))
            .env("WHARF_TEST_GATEWAY_SECRET", "wharf-test-secret")
            .env_remove("WHARF_BEARER_TOKEN")
            .output()
            .unwrap()
    };
    let called = call("gateway.toml");
    let stdout = String::from_utf8_lossy(&called.stdout);
    assert!(
        called.status.success() && stdout.starts_with("through"),
        "{stdout} {}",
        String::from_utf8_lossy(&called.stderr)
    );
    let refused = call("plain.toml");
    assert!(!refused.status.success(), "no credentials, no mount");
    assert!(String::from_utf8_lossy(&refused.stderr).contains("guarded"), "the error names the mount");
    assert!(!String::from_utf8_lossy(&called.stderr).contains("wharf-test-secret"), "the secret is never shown");
}
