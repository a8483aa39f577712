//! A free loopback port, for a server or a real part (Redis, nginx) a test starts, and whether
//! something listens on one yet.

use std::net::{TcpListener, TcpStream};

/// A loopback port that was free a moment ago: the operating system's pick, released at once.
pub fn free_port() -> u16 {
    let listener = TcpListener::bind(("127.0.0.1", 0)).expect("bind a loopback port");
    listener.local_addr().expect("the bound address").port()
}

/// Whether something accepts connections on the loopback port `port` now: a process the test
/// started listens once this is true (wait for it with
/// [`until_blocking`](crate::eventually::until_blocking)).
pub fn accepts(port: u16) -> bool {
    TcpStream::connect(("127.0.0.1", port)).is_ok()
}
