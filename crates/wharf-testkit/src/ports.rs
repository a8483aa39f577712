//! A free loopback port, for a server or a real part (Redis, nginx) a test starts.

use std::net::TcpListener;

/// A loopback port that was free a moment ago: the operating system's pick, released at once.
pub fn free_port() -> u16 {
    let listener = TcpListener::bind(("127.0.0.1", 0)).expect("bind a loopback port");
    listener.local_addr().expect("the bound address").port()
}
