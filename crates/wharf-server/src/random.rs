//! Unguessable identifiers: 128 bits from the operating system's random source, written as 32
//! lowercase hex digits (visible ASCII, as `Mcp-Session-Id` requires). Session ids, task ids and
//! URL elicitation ids are made here.

/// A new random identifier, or why the random source failed.
pub fn hex_id() -> Result<String, getrandom::Error> {
    let mut bytes = [0u8; 16];
    getrandom::fill(&mut bytes)?;
    let mut id = String::with_capacity(32);
    for byte in bytes {
        id.push(char::from_digit(u32::from(byte >> 4), 16).unwrap_or('0'));
        id.push(char::from_digit(u32::from(byte & 0xf), 16).unwrap_or('0'));
    }
    Ok(id)
}

/// True for text that [`hex_id`] could have made.
pub fn is_hex_id(text: &str) -> bool {
    text.len() == 32 && text.bytes().all(|byte| byte.is_ascii_digit() || (b'a'..=b'f').contains(&byte))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ids_are_32_lowercase_hex_digits_and_differ() {
        let first = hex_id().unwrap();
        let second = hex_id().unwrap();
        assert_eq!(first.len(), 32);
        assert!(first.bytes().all(|byte| byte.is_ascii_digit() || (b'a'..=b'f').contains(&byte)), "{first}");
        assert!(is_hex_id(&first) && !is_hex_id("abc") && !is_hex_id(&first.to_uppercase()));
        assert_ne!(first, second);
    }
}
