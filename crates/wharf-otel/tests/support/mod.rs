//! What the telemetry tests share: a server with one tool and one prompt behind the layer.

use wharf_otel::Telemetry;
use wharf_server::{PromptDef, Server, ToolDef};

/// `echo` and `greet`, each call seen by `telemetry`'s layer.
pub(crate) fn server(telemetry: &Telemetry) -> Server {
    Server::builder("otel-attributes", "1.0.0")
        .tool(ToolDef::new("echo", || async { "echoed" }))
        .prompt(PromptDef::new("greet", |_| async { "Hello".to_owned() }))
        .layer(telemetry.layer())
        .build()
        .unwrap()
}
