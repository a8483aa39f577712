//! Finding the first byte of a text that a JSON string cannot hold as it is (a quote, a
//! backslash or a control character), eight bytes at a time.
//!
//! Both directions need it: the encoder copies a string's text up to that byte in one piece,
//! and the hand-written decoder skips a string's text up to its closing quote or first escape.

const ONES: u64 = u64::from_le_bytes([0x01; 8]);
const HIGH_BITS: u64 = u64::from_le_bytes([0x80; 8]);

/// The top bit of each byte of `word` that is a quote, a backslash or a control character, and
/// possibly of bytes after the first such byte (never before it).
///
/// Each test is the classic "has a zero byte" trick: subtracting one from every byte borrows
/// into a byte's top bit where the byte was zero (or, for `< 0x20`, below 0x20); bytes with
/// their own top bit set (UTF-8 beyond ASCII) are masked out by `!x`. A borrow runs only
/// upwards, so the lowest bit set is exact.
#[inline]
fn special_bytes(word: u64) -> u64 {
    let quote = word ^ (ONES * u64::from(b'"'));
    let backslash = word ^ (ONES * u64::from(b'\\'));
    let found = (quote.wrapping_sub(ONES) & !quote)
        | (backslash.wrapping_sub(ONES) & !backslash)
        | (word.wrapping_sub(ONES * 0x20) & !word);
    found & HIGH_BITS
}

/// The same for four bytes.
#[inline]
fn special_bytes_in_half(word: u32) -> u32 {
    const ONES: u32 = u32::from_le_bytes([0x01; 4]);
    let quote = word ^ (ONES * u32::from(b'"'));
    let backslash = word ^ (ONES * u32::from(b'\\'));
    let found = (quote.wrapping_sub(ONES) & !quote)
        | (backslash.wrapping_sub(ONES) & !backslash)
        | (word.wrapping_sub(ONES * 0x20) & !word);
    found & u32::from_le_bytes([0x80; 4])
}

/// Where in a word read little-endian the lowest flagged byte is.
#[inline]
fn index_of(flags: u32) -> usize {
    (flags / 8) as usize
}

#[inline]
fn word_at(bytes: &[u8], at: usize) -> u64 {
    u64::from_le_bytes(bytes[at..at + 8].try_into().unwrap_or([0; 8]))
}

#[inline]
fn half_word_at(bytes: &[u8], at: usize) -> u32 {
    u32::from_le_bytes(bytes[at..at + 4].try_into().unwrap_or([0; 4]))
}

/// How many bytes at the start of `bytes` a JSON string holds as they are: the index of the
/// first quote, backslash or control character, or the length if there is none.
///
/// The tail of a text is read as one word that overlaps bytes already read, and a text shorter
/// than a word as two overlapping half words: most strings in a message are short. The bytes an
/// overlap reads again are plain, so the lowest flag in it is still exact.
#[inline]
pub(crate) fn plain_len(bytes: &[u8]) -> usize {
    let len = bytes.len();
    if len >= 8 {
        let mut at = 0;
        while at + 8 <= len {
            let found = special_bytes(word_at(bytes, at));
            if found != 0 {
                return at + index_of(found.trailing_zeros());
            }
            at += 8;
        }
        if at == len {
            return len;
        }
        let found = special_bytes(word_at(bytes, len - 8));
        return if found == 0 { len } else { len - 8 + index_of(found.trailing_zeros()) };
    }
    if len >= 4 {
        let found = special_bytes_in_half(half_word_at(bytes, 0));
        if found != 0 {
            return index_of(found.trailing_zeros());
        }
        let found = special_bytes_in_half(half_word_at(bytes, len - 4));
        return if found == 0 { len } else { len - 4 + index_of(found.trailing_zeros()) };
    }
    bytes.iter().position(|&byte| byte == b'"' || byte == b'\\' || byte < 0x20).unwrap_or(len)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_first_special_byte_is_found_exactly_wherever_it_stands() {
        for special in [b'"', b'\\', 0x00, 0x1F, b'\n'] {
            for len in 0..40 {
                for at in 0..=len {
                    // Plain bytes around it, among them bytes beyond ASCII and those next to
                    // the special ones in value.
                    let mut text: Vec<u8> =
                        (0..len).map(|index| [b'a', 0xC3, 0xA9, b'#', b' ', b']', 0x7F][index % 7]).collect();
                    text.insert(at, special);
                    // A second special byte after the first must not move the answer.
                    text.push(b'"');
                    assert_eq!(plain_len(&text), at, "{text:?}");
                }
                let plain: Vec<u8> = (0..len).map(|index| [b'a', 0xC3, 0xA9, b'!', b'#'][index % 5]).collect();
                assert_eq!(plain_len(&plain), len, "{plain:?}");
            }
        }
    }
}
