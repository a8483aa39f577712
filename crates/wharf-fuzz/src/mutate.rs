//! Byte-level damage to generated text: what a broken or hostile client sends after the
//! structure was right, including bytes that are not UTF-8.

use crate::rng::Rng;

/// Bytes that matter to a JSON reader, and some that are not UTF-8.
const INTERESTING: &[u8] = b"{}[]\":,\\u0-eE.+ \n\t\x00\x1f\x7f\x80\xbf\xc0\xc3\xe2\xed\xf0\xf4\xf8\xff";

/// Damages `bytes` in one to four places: a byte removed, replaced, inserted or duplicated, a
/// slice repeated, or the end cut off.
pub fn mutate(rng: &mut Rng, bytes: &mut Vec<u8>) {
    for _ in 0..1 + rng.below(4) {
        if bytes.is_empty() {
            bytes.push(*rng.pick(INTERESTING));
            continue;
        }
        let at = rng.below(bytes.len());
        match rng.below(6) {
            0 => {
                bytes.remove(at);
            }
            1 => bytes[at] = *rng.pick(INTERESTING),
            2 => bytes.insert(at, *rng.pick(INTERESTING)),
            3 => bytes[at] = rng.next_u64() as u8,
            4 => {
                let end = (at + 1 + rng.below(16)).min(bytes.len());
                let slice = bytes[at..end].to_vec();
                let to = rng.below(bytes.len());
                bytes.splice(to..to, slice);
            }
            _ => bytes.truncate(at),
        }
    }
}
