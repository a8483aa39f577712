//! The stdio transport: the server reads messages from stdin and writes them to stdout.
//! Nothing else may reach stdout; logs go to stderr through `tracing`.

use crate::error::Error;
use crate::server::Server;
use crate::transport::connection::serve_connection;

/// Serves `server` on stdin and stdout until stdin closes and in-flight requests finish.
pub async fn serve_stdio(server: Server) -> Result<(), Error> {
    serve_connection(server, tokio::io::stdin(), tokio::io::stdout()).await
}
