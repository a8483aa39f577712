//! A remote MCP server behind OAuth 2.1: every request needs a bearer token from one issuer,
//! and each tool asks for a scope of its own.
//!
//! Run with:
//! `MCP_URL=https://notes.example.com/mcp OAUTH_ISSUER=https://id.example.com cargo run -p example-remote`
//! (`MCP_URL` is the URL clients call, which tokens must be issued for; `LISTEN` is the local
//! address, 127.0.0.1:8080 by default, behind the TLS proxy that serves `MCP_URL`). A client
//! without a token gets 401 with the metadata URL, finds the issuer there, gets a token with the
//! scope `mcp` and sees `list_notes` once its token grants `notes:read`.

use std::sync::Mutex;

use wharf::auth::ResourceServer;
use wharf::{HttpOptions, RequestContext, Server, tool};

/// The notes everyone shares; a real server would keep them per user and in a database.
static NOTES: Mutex<Vec<String>> = Mutex::new(Vec::new());

/// Who the request acts for, as the token said.
fn caller(context: &RequestContext) -> String {
    context.principal().map_or_else(|| "nobody".to_owned(), |principal| principal.subject().to_owned())
}

/// Lists the notes.
#[tool(read_only, scopes = ["notes:read"])]
async fn list_notes() -> String {
    NOTES.lock().unwrap_or_else(std::sync::PoisonError::into_inner).join("\n")
}

/// Adds a note, signed by its author.
#[tool(scopes = ["notes:write"])]
async fn add_note(text: String, context: RequestContext) -> String {
    let note = format!("{}: {text}", caller(&context));
    NOTES.lock().unwrap_or_else(std::sync::PoisonError::into_inner).push(note.clone());
    note
}

#[tokio::main]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    wharf::logging::init();
    let public_url = std::env::var("MCP_URL").unwrap_or_else(|_| "http://127.0.0.1:8080/mcp".to_owned());
    let issuer = std::env::var("OAUTH_ISSUER").map_err(|_| "set OAUTH_ISSUER to the issuer of the tokens")?;
    let listen = std::env::var("LISTEN").unwrap_or_else(|_| "127.0.0.1:8080".to_owned());

    let server = Server::builder("notes", "1.0.0").tool(list_notes_tool()).tool(add_note_tool()).build()?;
    let auth = ResourceServer::builder(public_url.as_str())
        .issuer(issuer)
        .required_scopes(["mcp"])
        .scopes_supported(["mcp", "notes:read", "notes:write"])
        .resource_name("Notes")
        .build()?;
    let public = wharf::auth::ResourceUrl::parse(&public_url)?;
    let options = HttpOptions::default().add_allowed_host(public.host()).authenticate(auth);
    let listener = tokio::net::TcpListener::bind(&listen).await?;
    eprintln!("notes: listening on {listen}, serving {public_url}");
    let stop = async {
        let _ = tokio::signal::ctrl_c().await;
    };
    wharf::http::serve(listener, server).options(options).with_graceful_shutdown(stop).await?;
    Ok(())
}
