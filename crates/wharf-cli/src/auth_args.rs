//! How a command authorizes with a server over HTTP that asks for OAuth: the token file every
//! command reuses (refreshed when tokens expire), a browser login when a person is there, or
//! the client's own credentials.

use std::io::IsTerminal;
use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

use clap::Args;
use wharf::client::oauth::{Authorizer, FileTokenStore, LoopbackAuthorizer, OAuth, TokenStore, requested_scopes};

use crate::browser;

/// Where a client secret is read from (never the command line).
const CLIENT_SECRET_VARIABLE: &str = "WHARF_CLIENT_SECRET";

/// How long the person has to authorize in the browser.
const LOGIN_WAIT: Duration = Duration::from_secs(300);

/// How a command authorizes with a server that asks for OAuth.
#[derive(Debug, Args)]
pub(crate) struct AuthArgs {
    /// A client id registered with the authorization server beforehand (otherwise the client
    /// registers itself where the server allows it); a confidential client's secret is read
    /// from WHARF_CLIENT_SECRET.
    #[arg(long, value_name = "ID", env = "WHARF_CLIENT_ID")]
    client_id: Option<String>,
    /// Authorize as the client itself (the client credentials grant, with --client-id and the
    /// secret in WHARF_CLIENT_SECRET: other users of the machine can read command lines),
    /// without a person or a browser: for CI.
    #[arg(long, requires = "client_id")]
    client_credentials: bool,
    /// The file tokens are kept in between runs (mode 0600): $XDG_CONFIG_HOME/wharf/tokens.json
    /// or ~/.config/wharf/tokens.json unless set.
    #[arg(long, value_name = "FILE", env = "WHARF_TOKENS")]
    tokens: Option<PathBuf>,
}

impl AuthArgs {
    /// The token store these arguments name.
    pub(crate) fn store(&self) -> FileTokenStore {
        let path = self.tokens.clone().unwrap_or_else(|| {
            let config = std::env::var_os("XDG_CONFIG_HOME")
                .filter(|dir| !dir.is_empty())
                .map(PathBuf::from)
                .or_else(|| std::env::var_os("HOME").map(|home| PathBuf::from(home).join(".config")))
                .unwrap_or_else(|| PathBuf::from("."));
            config.join("wharf").join("tokens.json")
        });
        FileTokenStore::new(path)
    }

    /// OAuth for a command talking to `url`. A person's login starts only when `login` is
    /// true (`wharf login`, or a command run at a terminal); otherwise tokens already stored
    /// are used and refreshed, and a server that wants new ones ends the command with exit 5.
    /// `None` when there is nothing to authorize with: the server's 401 is then reported as
    /// it is.
    pub(crate) fn oauth(&self, url: &str, login: bool, scopes: &[String]) -> Result<Option<OAuth>, String> {
        let store = self.store();
        let secret = std::env::var(CLIENT_SECRET_VARIABLE).ok().filter(|secret| !secret.is_empty());
        let oauth = if self.client_credentials {
            let (Some(id), Some(secret)) = (&self.client_id, &secret) else {
                return Err(format!(
                    "--client-credentials needs --client-id and the secret in {CLIENT_SECRET_VARIABLE}"
                ));
            };
            OAuth::client_credentials(id, secret)
        } else if login {
            let opener: wharf::client::oauth::Opener = Arc::new(open_browser);
            let authorizer = LoopbackAuthorizer::bind(opener, LOGIN_WAIT)
                .map_err(|err| format!("cannot listen on a loopback port for the login: {err}"))?;
            OAuth::new(authorizer)
        } else if store.load(url).is_some() {
            OAuth::new(NoLogin { login: self.login_command(url) })
        } else {
            return Ok(None);
        };
        let scopes = scopes.iter().flat_map(|scopes| scopes.split_whitespace());
        let oauth = oauth.client_name("wharf").token_store(store).scopes(scopes);
        Ok(Some(match &self.client_id {
            Some(id) if !self.client_credentials => oauth.pre_registered(id, secret, None),
            _ => oauth,
        }))
    }

    /// `wharf login URL`, with the token file and client id these arguments name, as a shell
    /// reads it back.
    fn login_command(&self, url: &str) -> String {
        let mut command = format!("wharf login {}", shell_word(url));
        if let Some(tokens) = &self.tokens {
            command.push_str(&format!(" --tokens {}", shell_word(&tokens.to_string_lossy())));
        }
        if let Some(client_id) = &self.client_id {
            command.push_str(&format!(" --client-id {}", shell_word(client_id)));
        }
        command
    }

    /// The stored access token for `url`, for requests made by hand.
    pub(crate) fn stored_token(&self, url: &str) -> Option<String> {
        self.store().load(url).map(|tokens| tokens.access_token)
    }
}

/// True when a person is at the terminal to log in.
pub(crate) fn interactive() -> bool {
    std::io::stdin().is_terminal() && std::io::stderr().is_terminal()
}

/// Stands in for the browser when nobody is there to log in: refreshing stored tokens still
/// works, a new login is refused with the `wharf login` to run, with the scopes it must ask
/// for.
struct NoLogin {
    /// `wharf login URL` and the options that name the same store and client.
    login: String,
}

impl Authorizer for NoLogin {
    fn redirect_uri(&self) -> String {
        "http://127.0.0.1/callback".to_owned()
    }

    fn authorize(&self, url: String) -> std::pin::Pin<Box<dyn Future<Output = Result<String, String>> + Send + '_>> {
        // `offline_access` is asked for by every login where the server offers it.
        let scopes: Vec<String> =
            requested_scopes(&url).into_iter().filter(|scope| scope != "offline_access").collect();
        // `--scope=VALUE` where a value could be taken for an option.
        let scope_args: String = scopes
            .iter()
            .map(|scope| {
                let joiner = if scope.starts_with('-') { '=' } else { ' ' };
                format!(" --scope{joiner}{}", shell_word(scope))
            })
            .collect();
        let login = format!("{}{scope_args}", self.login);
        Box::pin(async move {
            Err(format!("the server wants a new authorization (a login, or more scopes): run `{login}` at a terminal"))
        })
    }
}

/// Prints the authorization URL and opens it with $BROWSER (a command, the URL its last
/// argument), or the desktop's opener.
fn open_browser(url: &str) -> Result<(), String> {
    eprintln!("wharf: to authorize, open this address in a browser (opening it now):\n  {url}");
    browser::open(url);
    Ok(())
}

/// `word` as a POSIX shell reads it back: as it is when it is plain, else single-quoted.
fn shell_word(word: &str) -> String {
    let plain = |c: char| c.is_ascii_alphanumeric() || ":._-/@%+=,".contains(c);
    if !word.is_empty() && word.chars().all(plain) {
        word.to_owned()
    } else {
        format!("'{}'", word.replace('\'', "'\\''"))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_refused_login_names_the_command_to_run_with_the_same_store_and_client() {
        let args = AuthArgs {
            client_id: Some("my client".to_owned()),
            client_credentials: false,
            tokens: Some(PathBuf::from("/tmp/my tokens.json")),
        };
        let refusing = NoLogin { login: args.login_command("https://mcp.test/mcp?tenant=a&b=c") };
        let authorization = "https://as.test/authorize?client_id=x&scope=mcp%20-odd%20offline_access".to_owned();
        let runtime = tokio::runtime::Builder::new_current_thread().build().unwrap();
        let refused = runtime.block_on(refusing.authorize(authorization)).unwrap_err();
        let expected = "run `wharf login 'https://mcp.test/mcp?tenant=a&b=c' --tokens '/tmp/my tokens.json' \
                        --client-id 'my client' --scope mcp --scope=-odd` at a terminal";
        assert!(refused.ends_with(expected), "{refused}");
    }

    #[test]
    fn scopes_are_quoted_only_when_a_shell_would_change_them() {
        assert_eq!(shell_word("demo:admin"), "demo:admin");
        assert_eq!(shell_word("https://api.test/read"), "https://api.test/read");
        assert_eq!(shell_word("a$b"), "'a$b'");
        assert_eq!(shell_word("it's"), "'it'\\''s'");
        assert_eq!(shell_word(""), "''");
    }
}
