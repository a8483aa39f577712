//! `wharf login`, the stored tokens and `wharf logout`, against `wharf serve --auth-issuer` and
//! the real OpenID provider `scripts/test` starts (`interop/oidc/provider.mjs`, named in
//! `WHARF_TEST_OIDC_DIR`). The browser is `fixtures/headless_browser.py`, which follows the
//! provider's login and consent pages back to the port `wharf login` listens on.

mod support;

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use serde_json::Value;
use support::{Scratch, Serving};

/// What one run of `wharf` did.
struct Run {
    code: Option<i32>,
    stdout: String,
    stderr: String,
}

/// Where `wharf` keeps the tokens, in `scratch`.
fn tokens(scratch: &Scratch) -> PathBuf {
    scratch.path().join("config").join("tokens.json")
}

/// What the headless browser visited.
fn browser_log(scratch: &Scratch) -> String {
    std::fs::read_to_string(scratch.path().join("browser.log")).unwrap_or_default()
}

/// Runs `wharf ARGS --tokens FILE` with the headless browser as $BROWSER, stdin not a
/// terminal; killed after a minute.
fn wharf(scratch: &Scratch, args: &[&str]) -> Run {
    wharf_with_secret(scratch, args, None)
}

/// Like [`wharf`], with WHARF_CLIENT_SECRET set to `secret`.
fn wharf_with_secret(scratch: &Scratch, args: &[&str], secret: Option<&str>) -> Run {
    let fixture = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/headless_browser.py");
    let (out, err) = (scratch.path().join("stdout"), scratch.path().join("stderr"));
    let mut child = Command::new(env!("CARGO_BIN_EXE_wharf"))
        .args(args)
        .arg("--tokens")
        .arg(tokens(scratch))
        .env("BROWSER", format!("python3 {}", fixture.display()))
        .env("WHARF_TEST_BROWSER_LOG", scratch.path().join("browser.log"))
        .env_remove("WHARF_BEARER_TOKEN")
        .env_remove("WHARF_CLIENT_ID")
        .env_remove("WHARF_CLIENT_SECRET")
        .envs(secret.map(|secret| ("WHARF_CLIENT_SECRET", secret)))
        .stdin(Stdio::null())
        .stdout(std::fs::File::create(&out).unwrap())
        .stderr(std::fs::File::create(&err).unwrap())
        .spawn()
        .unwrap();
    let deadline = Instant::now() + Duration::from_secs(60);
    let status = loop {
        if let Some(status) = child.try_wait().unwrap() {
            break status;
        }
        if Instant::now() > deadline {
            let _ = child.kill();
            panic!("wharf {args:?} did not finish: {}", std::fs::read_to_string(&err).unwrap_or_default());
        }
        std::thread::sleep(Duration::from_millis(20));
    };
    Run {
        code: status.code(),
        stdout: std::fs::read_to_string(out).unwrap(),
        stderr: std::fs::read_to_string(err).unwrap(),
    }
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
    let scratch = Scratch::new("login-browser");

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

    // More scope needs a person: without one, exit 5 and what to run.
    let step_up = wharf(&scratch, &["call", &url, "admin_report"]);
    assert_eq!(step_up.code, Some(5), "{}\n{}", step_up.stdout, step_up.stderr);
    assert!(step_up.stderr.contains("wharf login"), "{}", step_up.stderr);

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
fn client_credentials_authorize_without_a_person() {
    let issuer = issuer();
    let (_serving, url) = serve_behind(&issuer);
    let scratch = Scratch::new("login-machine");
    let credentials = ["--client-credentials", "--client-id", "wharf-test"];
    let mut args = vec!["call", &url, "echo", "message=machine"];
    args.extend(credentials);
    let call = wharf_with_secret(&scratch, &args, Some("wharf-test-secret"));
    assert_eq!(call.code, Some(0), "{}", call.stderr);
    assert_eq!(call.stdout.trim(), "machine");
    assert_eq!(browser_log(&scratch), "", "no browser");

    // A wrong secret, and nothing stored to fall back on.
    let fresh = Scratch::new("login-wrong-secret");
    let wrong =
        wharf_with_secret(&fresh, &["list", &url, "--client-credentials", "--client-id", "wharf-test"], Some("no"));
    assert_eq!(wrong.code, Some(5), "{}\n{}", wrong.stdout, wrong.stderr);
    assert!(!wrong.stderr.contains("wharf-test-secret"));
}
