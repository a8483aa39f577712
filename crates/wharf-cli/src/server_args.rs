//! How every command that talks to a server names it: an `http(s)://` URL as the first
//! argument, or `-- COMMAND ARGS...` at the end of the line for a server over stdio; and the
//! options of the connection (headers, bearer token or OAuth, revision, timeout).

use std::process::ExitCode;
use std::time::Duration;

use clap::Args;
use wharf::client::{ClientHandler, ClientOptions, StderrMode, Target};
use wharf::protocol::{LoggingLevel, ProtocolVersion};

use crate::auth_args::{AuthArgs, interactive};
use crate::exit;

/// The connection options every client command shares.
#[derive(Debug, Args)]
pub(crate) struct ServerArgs {
    /// An HTTP header sent with every request, as `NAME: VALUE`. Repeat for several.
    #[arg(long = "header", short = 'H', value_name = "NAME: VALUE")]
    headers: Vec<String>,
    /// A bearer token sent as `Authorization: Bearer TOKEN` (prefer WHARF_BEARER_TOKEN: other
    /// users of the machine can read command lines).
    #[arg(long, value_name = "TOKEN", env = "WHARF_BEARER_TOKEN", hide_env_values = true)]
    bearer: Option<String>,
    /// Speak this revision (2024-11-05 ... 2026-07-28) instead of the newest the server
    /// supports.
    #[arg(long, value_name = "REVISION", value_parser = parse_version)]
    protocol_version: Option<ProtocolVersion>,
    /// Seconds a request may take before it is given up (and cancelled): 60 unless set (10 for
    /// `wharf check`).
    #[arg(long, value_name = "SECONDS")]
    timeout: Option<f64>,
    #[command(flatten)]
    auth: AuthArgs,
    /// A scope to ask for when logging in, beside those the server names (repeatable, or
    /// several separated by spaces): for tools that need more than the server asks at first.
    #[arg(long = "scope", value_name = "SCOPE")]
    scopes: Vec<String>,
    /// Discard what a server started over stdio writes on stderr (passed through otherwise).
    #[arg(long)]
    quiet_server: bool,
    /// The server to start, speaking MCP over stdio: everything after `--`.
    #[arg(last = true, value_name = "COMMAND")]
    command: Vec<String>,
}

fn parse_version(text: &str) -> Result<ProtocolVersion, String> {
    ProtocolVersion::parse(text).ok_or_else(|| {
        let known: Vec<&str> = ProtocolVersion::ALL.iter().map(|version| version.as_str()).collect();
        format!("not a revision this client speaks; these are: {}", known.join(", "))
    })
}

/// Where the server is, from the command's words: an `http(s)://` or `unix:PATH` first word is
/// the URL and is taken off; otherwise the command after `--`.
pub(crate) fn take_target(words: &mut Vec<String>, server: &ServerArgs) -> Result<Target, String> {
    let url = words.first().filter(|word| is_server_url(word)).cloned();
    match (url, server.command.split_first()) {
        (Some(_), Some(_)) => Err("name the server once: a URL or `-- COMMAND`, not both".to_owned()),
        (Some(url), None) => {
            words.remove(0);
            Ok(Target::url(url))
        }
        (None, Some((program, args))) => Ok(Target::command(program, args)),
        (None, None) => Err("no server: give its URL (http://HOST:PORT/mcp, or unix:PATH for a Unix socket) first, \
                              or its command after `--` (wharf list -- python3 server.py)"
            .to_owned()),
    }
}

/// The server of a command that takes nothing else (`check`, `lint`, `lock`, `tokens`, `bench`),
/// or the usage error it exits with: no server, or words beside it.
pub(crate) fn only_target(command: &str, words: &mut Vec<String>, server: &ServerArgs) -> Result<Target, ExitCode> {
    let target = take_target(words, server).map_err(|message| exit::usage(command, &message))?;
    if !words.is_empty() {
        return Err(exit::usage(command, &format!("unexpected `{}`: name the server only", words.join(" "))));
    }
    Ok(target)
}

/// True for what names a server by where it listens: `http://`, `https://`, `unix:PATH`.
pub(crate) fn is_server_url(word: &str) -> bool {
    word.starts_with("http://") || word.starts_with("https://") || word.starts_with("unix:")
}

impl ServerArgs {
    /// The client options these arguments describe, for `target`. A server over HTTP that asks
    /// for OAuth gets the stored tokens, or a browser login at a terminal.
    pub(crate) fn options(&self, target: &Target, handler: impl ClientHandler) -> Result<ClientOptions, String> {
        self.options_with(target, handler, interactive())
    }

    /// The client options of `wharf login`: a browser login whenever the server asks.
    pub(crate) fn options_logging_in(
        &self,
        target: &Target,
        handler: impl ClientHandler,
    ) -> Result<ClientOptions, String> {
        self.options_with(target, handler, true)
    }

    fn options_with(&self, target: &Target, handler: impl ClientHandler, login: bool) -> Result<ClientOptions, String> {
        let timeout = self.timeout(60.0)?;
        let mut options = ClientOptions::default()
            .client_info("wharf", env!("CARGO_PKG_VERSION"))
            .handler(handler)
            .timeout(timeout)
            .probe_timeout(timeout.min(Duration::from_secs(10)))
            .log_level(LoggingLevel::Info);
        if self.quiet_server {
            options = options.stderr(StderrMode::Discard);
        }
        if let Some(version) = self.protocol_version {
            options = options.protocol_version(version);
        }
        for header in &self.headers {
            let (name, value) =
                header.split_once(':').ok_or_else(|| format!("--header `{header}` is not `NAME: VALUE`"))?;
            options = options.header(name.trim(), value.trim());
        }
        match (&self.bearer, target) {
            (Some(token), _) => options = options.bearer(token),
            (None, Target::Url(url)) => {
                if let Some(oauth) = self.auth.oauth(url, login, &self.scopes)? {
                    options = options.oauth(oauth);
                }
            }
            (None, Target::Command { .. }) => {}
        }
        Ok(options)
    }
}

impl ServerArgs {
    /// `--timeout`, or `default` seconds.
    pub(crate) fn timeout(&self, default: f64) -> Result<Duration, String> {
        let seconds = self.timeout.unwrap_or(default);
        if !(seconds > 0.0 && seconds.is_finite()) {
            return Err("--timeout needs a positive number of seconds".to_owned());
        }
        Ok(Duration::from_secs_f64(seconds))
    }

    /// The revision `--protocol-version` names.
    pub(crate) fn protocol_version(&self) -> Option<ProtocolVersion> {
        self.protocol_version
    }

    /// The headers `--header` and `--bearer` (or the token stored for `url`) name, for raw
    /// requests.
    pub(crate) fn raw_headers(&self, url: &str) -> Vec<(String, String)> {
        let mut headers: Vec<(String, String)> = self
            .headers
            .iter()
            .filter_map(|header| header.split_once(':'))
            .map(|(name, value)| (name.trim().to_owned(), value.trim().to_owned()))
            .collect();
        if let Some(token) = self.bearer.clone().or_else(|| self.auth.stored_token(url)) {
            headers.push(("Authorization".to_owned(), format!("Bearer {token}")));
        }
        headers
    }

    /// How the commands authorize with OAuth.
    pub(crate) fn auth(&self) -> &AuthArgs {
        &self.auth
    }

    /// True with `--quiet-server`.
    pub(crate) fn quiet_server(&self) -> bool {
        self.quiet_server
    }
}

/// What stopped a command before its work was done: SIGINT or SIGTERM.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Stopped {
    signal: u8,
}

impl Stopped {
    /// Stopped by the signal numbered `signal`.
    pub(crate) fn by(signal: u8) -> Stopped {
        Stopped { signal }
    }

    /// Exits with the code a shell gives a process the signal ended (128 and its number), after
    /// saying so on stderr. At once: the work and its clients are gone already, and what the
    /// runtime still holds (a read of the terminal, say) is not waited for.
    pub(crate) fn exit(self, command: &str) -> ! {
        eprintln!("wharf {command}: stopped by a signal; the server it started is stopped too");
        std::process::exit(128 + i32::from(self.signal))
    }
}

/// Runs `work` on `runtime` unless SIGINT or SIGTERM comes first: the work is then dropped, and
/// with it the clients it made, each of which kills the server program it started. Without
/// this, SIGTERM sent to `wharf` alone (not its process group) ends it at once and leaves a
/// server that does not stop when its input ends running.
pub(crate) fn block_on_unless_stopped<T>(
    runtime: &tokio::runtime::Runtime,
    work: impl std::future::Future<Output = T>,
) -> Result<T, Stopped> {
    runtime.block_on(async {
        let Ok(mut signals) = wharf_demo::StopSignals::listen() else { return Ok(work.await) };
        tokio::select! {
            done = work => Ok(done),
            signal = signals.which() => Err(Stopped::by(signal)),
        }
    })
}

/// Connects on a runtime of its own thread: the commands make few requests at a time.
pub(crate) fn runtime() -> tokio::runtime::Runtime {
    tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap_or_else(|err| {
        eprintln!("wharf: could not start the async runtime: {err}");
        std::process::exit(1)
    })
}
