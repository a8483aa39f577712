//! The connections [`serve`](crate::serve) keeps open, bounded in number in all and
//! per client address: one past either is answered 503 and closed unread.

use std::collections::HashMap;
use std::net::IpAddr;
use std::sync::{Arc, Mutex, PoisonError};

use wharf_server::contract::client_key;

/// How many connections are open, in all and from each client address.
#[derive(Debug)]
pub(crate) struct ConnectionLimits {
    max: usize,
    per_address: usize,
    open: Mutex<OpenConnections>,
}

#[derive(Debug, Default)]
struct OpenConnections {
    total: usize,
    by_address: HashMap<Arc<str>, usize>,
}

/// A connection's place among those open, given back when it is dropped.
#[derive(Debug)]
pub(crate) struct ConnectionSlot {
    limits: Arc<ConnectionLimits>,
    address: Arc<str>,
}

/// Which bound a connection is past.
#[derive(Debug, Clone, Copy)]
pub(crate) enum Refusal {
    Total(usize),
    PerAddress(usize),
}

impl ConnectionLimits {
    pub(crate) fn new(max: usize, per_address: usize) -> Arc<ConnectionLimits> {
        Arc::new(ConnectionLimits { max, per_address, open: Mutex::default() })
    }

    /// A place for a connection from `peer`, held until the slot is dropped; or the bound it
    /// is past.
    pub(crate) fn admit(self: &Arc<Self>, peer: IpAddr) -> Result<ConnectionSlot, Refusal> {
        let address = client_key(None, Some(peer)).unwrap_or_else(|| Arc::from(""));
        let mut open = self.open.lock().unwrap_or_else(PoisonError::into_inner);
        if open.total >= self.max {
            return Err(Refusal::Total(self.max));
        }
        let from_address = open.by_address.entry(address.clone()).or_default();
        if *from_address >= self.per_address {
            return Err(Refusal::PerAddress(self.per_address));
        }
        *from_address += 1;
        open.total += 1;
        Ok(ConnectionSlot { limits: self.clone(), address })
    }
}

impl Drop for ConnectionSlot {
    fn drop(&mut self) {
        let mut open = self.limits.open.lock().unwrap_or_else(PoisonError::into_inner);
        open.total -= 1;
        if let Some(from_address) = open.by_address.get_mut(&self.address) {
            *from_address -= 1;
            if *from_address == 0 {
                open.by_address.remove(&self.address);
            }
        }
    }
}

impl Refusal {
    /// The 503 a refused connection is answered with before it is closed, without reading
    /// what it sent and without waiting for it: what the socket does not take at once is not
    /// sent.
    pub(crate) fn response(self) -> String {
        let message = match self {
            Refusal::Total(limit) => format!(
                "Service unavailable: the server has {limit} connections open, its limit \
                 (HttpOptions::max_connections); try again later\n"
            ),
            Refusal::PerAddress(limit) => format!(
                "Service unavailable: {limit} connections from this address are open, the limit per address \
                 (HttpOptions::max_connections_per_address); close one or try again later\n"
            ),
        };
        format!(
            "HTTP/1.1 503 Service Unavailable\r\nconnection: close\r\nretry-after: 1\r\ncontent-type: text/plain\r\n\
             content-length: {}\r\n\r\n{message}",
            message.len()
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn connections_are_bounded_in_all_and_per_address_and_slots_come_back() {
        let limits = ConnectionLimits::new(3, 2);
        let (one, two): (IpAddr, IpAddr) = ("127.0.0.1".parse().unwrap(), "127.0.0.2".parse().unwrap());
        let first = limits.admit(one).unwrap();
        let _second = limits.admit(one).unwrap();
        assert!(matches!(limits.admit(one), Err(Refusal::PerAddress(2))));
        let _third = limits.admit(two).unwrap();
        assert!(matches!(limits.admit(two), Err(Refusal::Total(3))));
        drop(first);
        assert!(limits.admit(one).is_ok());
        // An IPv6 host counts by its /64.
        let limits = ConnectionLimits::new(10, 1);
        let _v6 = limits.admit("2001:db8::1".parse().unwrap()).unwrap();
        assert!(limits.admit("2001:db8::2".parse().unwrap()).is_err());
    }
}
