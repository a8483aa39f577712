//! nginx in front of a fleet, as the README's deployment section configures it: each request
//! to the next instance in turn (round robin, no stickiness, no buffering of SSE), the
//! instance named in an `X-Upstream` header. A process on a free port in a directory of its
//! own, stopped when dropped.

use std::process::{Command, Stdio};
use std::time::Duration;

use crate::eventually::until_blocking;
use crate::ports::{accepts, free_port};
use crate::process::Process;
use crate::raw_http::Reply;
use crate::temp_dir::TempDir;

/// nginx proxying `/mcp` to the instances on the given loopback ports.
#[derive(Debug)]
pub struct Nginx {
    /// The port nginx listens on.
    pub port: u16,
    // Declared before the directory: nginx is stopped before what it writes to is removed.
    _process: Process,
    _dir: TempDir,
}

impl Nginx {
    /// Starts nginx (`WHARF_NGINX` names another program) in front of `upstreams` and waits
    /// until it accepts connections.
    pub fn start(upstreams: &[u16]) -> Nginx {
        let port = free_port();
        let dir = TempDir::new(&format!("nginx-{port}"));
        let servers: String = upstreams.iter().map(|port| format!("    server 127.0.0.1:{port};\n")).collect();
        let config = format!(
            "daemon off;\nmaster_process off;\npid {dir}/nginx.pid;\nerror_log {dir}/error.log warn;\n\
             events {{ worker_connections 256; }}\n\
             http {{\n  access_log off;\n  client_body_temp_path {dir}/body;\n  proxy_temp_path {dir}/proxy;\n\
             fastcgi_temp_path {dir}/fastcgi;\n  uwsgi_temp_path {dir}/uwsgi;\n  scgi_temp_path {dir}/scgi;\n\
             upstream wharf {{\n{servers}  }}\n\
             server {{\n    listen 127.0.0.1:{port};\n    location /mcp {{\n\
                   proxy_pass http://wharf;\n      proxy_http_version 1.1;\n      proxy_set_header Connection \"\";\n\
                   proxy_set_header Host $host;\n      proxy_buffering off;\n      proxy_read_timeout 1h;\n\
                   add_header X-Upstream $upstream_addr always;\n    }}\n  }}\n}}\n",
            dir = dir.path().display()
        );
        dir.write("nginx.conf", config);
        let program = std::env::var("WHARF_NGINX").unwrap_or_else(|_| "nginx".to_owned());
        let process = Process::try_spawn(
            Command::new(&program)
                .arg("-p")
                .arg(dir.path())
                .arg("-c")
                .arg(dir.join("nginx.conf"))
                .stdout(Stdio::null()),
        )
        .unwrap_or_else(|err| panic!("{program} must be installed for this test (scripts/test installs it): {err}"));
        until_blocking(&format!("nginx to listen on {port}"), Duration::from_secs(5), || accepts(port));
        Nginx { port, _process: process, _dir: dir }
    }
}

/// The instance nginx sent `reply`'s request to (`127.0.0.1:PORT`).
pub fn upstream(reply: &Reply) -> String {
    reply.header("x-upstream").unwrap_or_else(|| panic!("nginx names the instance: {reply:?}")).to_owned()
}
