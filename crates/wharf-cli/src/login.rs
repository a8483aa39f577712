//! `wharf login` (the browser, a loopback redirect, the tokens kept on disk) and `wharf logout`.

use std::process::ExitCode;

use clap::Args;
use wharf::client::oauth::TokenStore;
use wharf::client::{Client, Target};

use crate::answers::Declining;
use crate::auth_args::AuthArgs;
use crate::exit;
use crate::server_args::{ServerArgs, runtime, take_target};

/// `wharf login URL`.
#[derive(Debug, Args)]
pub(crate) struct LoginArgs {
    /// The server's URL.
    #[arg(value_name = "URL", required = true)]
    words: Vec<String>,
    #[command(flatten)]
    server: ServerArgs,
}

/// `wharf logout URL`.
#[derive(Debug, Args)]
pub(crate) struct LogoutArgs {
    #[command(flatten)]
    auth: AuthArgs,
    /// The server's URL; every server with --all.
    #[arg(value_name = "URL", required_unless_present = "all")]
    url: Option<String>,
    /// Forget the tokens of every server.
    #[arg(long)]
    all: bool,
}

/// Logs in anew: the stored tokens of the server are forgotten, the browser opens, and the new
/// ones are kept.
pub(crate) fn login(mut args: LoginArgs) -> ExitCode {
    let target = match take_target(&mut args.words, &args.server) {
        Ok(Target::Url(url)) if args.words.is_empty() => Target::Url(url),
        Ok(_) | Err(_) => return exit::usage("login", "give the server's http(s):// URL, and nothing else"),
    };
    let url = target.to_string();
    let store = args.server.auth().store();
    if let Err(err) = store.remove(&url) {
        eprintln!("wharf login: cannot update {}: {err}", store.path().display());
        return ExitCode::from(exit::CONNECTION_FAILED);
    }
    let options = match args.server.options_logging_in(&target, Declining { tell: true }) {
        Ok(options) => options,
        Err(message) => return exit::usage("login", &message),
    };
    runtime().block_on(async {
        let client = match Client::connect_with(target, options).await {
            Ok(client) => client,
            Err(err) => return exit::failure("login", &err),
        };
        // The first request may go through without a token when the server asks for one
        // only for some requests; listing the tools makes sure.
        let listed = client.list_tools().await;
        client.close().await;
        if let Err(err) = listed {
            return exit::failure("login", &err);
        }
        match store.load(&url) {
            Some(tokens) => {
                let scope = tokens.scope.as_deref().unwrap_or("as the server chose");
                println!("Logged in to {url} (issuer {}, scopes: {scope}).", tokens.issuer);
                println!("Tokens are kept in {}.", store.path().display());
                ExitCode::SUCCESS
            }
            None => {
                println!("{url} did not ask for authorization; nothing is stored.");
                ExitCode::SUCCESS
            }
        }
    })
}

/// Forgets the stored tokens of one server, or of all.
pub(crate) fn logout(args: LogoutArgs) -> ExitCode {
    let store = args.auth.store();
    let servers = match (&args.url, args.all) {
        (_, true) => store.servers(),
        (Some(url), false) => vec![url.clone()],
        (None, false) => return exit::usage("logout", "give the server's URL, or --all"),
    };
    let mut forgotten = 0;
    for server in &servers {
        match store.remove(server) {
            Ok(true) => forgotten += 1,
            Ok(false) => eprintln!("wharf logout: no tokens were kept for {server}"),
            Err(err) => {
                eprintln!("wharf logout: cannot update {}: {err}", store.path().display());
                return ExitCode::from(exit::CONNECTION_FAILED);
            }
        }
    }
    println!("Forgot the tokens of {forgotten} server{}.", if forgotten == 1 { "" } else { "s" });
    ExitCode::SUCCESS
}
