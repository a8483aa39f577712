//! Whom a per-client quota counts a session or a task against: the principal when the request
//! has one, else the network address it came from.

use std::net::IpAddr;
use std::sync::Arc;

use crate::principal::Principal;

/// The key of the client behind a request: `principal:` and the principal's identity, or
/// `address:` and the client's IP address; `None` when neither is known. An IPv6 client is
/// keyed by its /64, which one host commonly holds whole, so that it cannot take a fresh quota
/// per address. Loopback addresses are clients like any other.
pub fn client_key(principal: Option<&Principal>, address: Option<IpAddr>) -> Option<Arc<str>> {
    if let Some(principal) = principal {
        return Some(format!("principal:{}", principal.as_str()).into());
    }
    let address = match address? {
        IpAddr::V6(v6) => match v6.to_ipv4_mapped() {
            Some(v4) => IpAddr::V4(v4),
            None => {
                let segments = v6.segments();
                let prefix = format!("{:x}:{:x}:{:x}:{:x}::/64", segments[0], segments[1], segments[2], segments[3]);
                return Some(format!("address:{prefix}").into());
            }
        },
        v4 => v4,
    };
    Some(format!("address:{address}").into())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn key(principal: Option<&Principal>, address: &str) -> Option<String> {
        client_key(principal, Some(address.parse().unwrap())).map(|key| key.to_string())
    }

    #[test]
    fn a_principal_wins_and_addresses_key_anonymous_clients() {
        let alice = Principal::issued("https://issuer.example", "alice");
        assert_eq!(key(Some(&alice), "127.0.0.1").as_deref(), Some("principal:https://issuer.example alice"));
        assert_eq!(key(None, "127.0.0.2").as_deref(), Some("address:127.0.0.2"));
        assert_eq!(key(None, "::ffff:10.0.0.1").as_deref(), Some("address:10.0.0.1"));
        assert_eq!(client_key(None, None), None);
    }

    #[test]
    fn an_ipv6_client_is_keyed_by_its_64() {
        let one = key(None, "2001:db8:1:2:aaaa::1");
        assert_eq!(one.as_deref(), Some("address:2001:db8:1:2::/64"));
        assert_eq!(one, key(None, "2001:db8:1:2:ffff:ffff:ffff:ffff"));
        assert_ne!(one, key(None, "2001:db8:1:3::1"));
    }
}
