//! RESP2, the few parts of Redis's protocol Wharf's own connection speaks: a command written as
//! an array of bulk strings, and a reply read from a buffer once all of it has arrived, its
//! strings left as slices of the bytes read.

use bytes::{Bytes, BytesMut};

/// The longest bulk string a reply may hold: far above anything the stores keep in the reply
/// this connection reads, far below what would let a broken peer make Wharf allocate at will.
const MAX_BULK: usize = 64 << 20;
/// The most elements of an array.
const MAX_ELEMENTS: usize = 1 << 20;
/// How deeply arrays may nest.
const MAX_DEPTH: usize = 8;
/// The longest line: a type, a length or a status, never a bulk string's content.
const MAX_LINE: usize = 64 << 10;

/// One reply.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Reply {
    /// `+OK`.
    Status(Bytes),
    /// `-ERR ...`: the command failed.
    Error(Bytes),
    /// `:1`.
    Integer(i64),
    /// `$3 foo`, or `None` for `$-1`.
    Bulk(Option<Bytes>),
    /// `*2 ...`, or `None` for `*-1`.
    Array(Option<Vec<Reply>>),
}

/// Bytes that are not a reply.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Malformed(pub(crate) &'static str);

impl std::fmt::Display for Malformed {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "Redis answered with bytes that are not a reply: {}", self.0)
    }
}

/// Appends the command `parts` (its name, then its arguments) to `out`.
pub(crate) fn command(out: &mut Vec<u8>, parts: &[&[u8]]) {
    let mut digits = itoa::Buffer::new();
    out.push(b'*');
    out.extend_from_slice(digits.format(parts.len()).as_bytes());
    out.extend_from_slice(b"\r\n");
    for part in parts {
        out.push(b'$');
        out.extend_from_slice(digits.format(part.len()).as_bytes());
        out.extend_from_slice(b"\r\n");
        out.extend_from_slice(part);
        out.extend_from_slice(b"\r\n");
    }
}

/// The first reply in `buffer`, taken out of it; `None` while it has not all arrived.
pub(crate) fn take_reply(buffer: &mut BytesMut) -> Result<Option<Reply>, Malformed> {
    let Some(length) = reply_length(buffer, 0, 0)? else { return Ok(None) };
    let frame = buffer.split_to(length).freeze();
    let (reply, read) = build(&frame, 0)?;
    debug_assert_eq!(read, length);
    Ok(Some(reply))
}

/// The length of the reply starting at `at`, if all of it is in `bytes`.
fn reply_length(bytes: &[u8], at: usize, depth: usize) -> Result<Option<usize>, Malformed> {
    let Some((kind, number, after)) = header(bytes, at)? else { return Ok(None) };
    match kind {
        b'+' | b'-' | b':' => Ok(Some(after - at)),
        b'$' => match bulk_length(number)? {
            None => Ok(Some(after - at)),
            Some(length) => {
                let end = after + length + 2;
                if bytes.len() < end {
                    return Ok(None);
                }
                if &bytes[end - 2..end] != b"\r\n" {
                    return Err(Malformed("a bulk string not ended by CRLF"));
                }
                Ok(Some(end - at))
            }
        },
        b'*' => {
            let Some(elements) = array_length(number)? else { return Ok(Some(after - at)) };
            if depth >= MAX_DEPTH {
                return Err(Malformed("arrays nested too deeply"));
            }
            let mut end = after;
            for _ in 0..elements {
                let Some(length) = reply_length(bytes, end, depth + 1)? else { return Ok(None) };
                end += length;
            }
            Ok(Some(end - at))
        }
        _ => Err(Malformed("an unknown type")),
    }
}

/// The reply starting at `at` of a frame known to be whole, and where it ends.
fn build(frame: &Bytes, at: usize) -> Result<(Reply, usize), Malformed> {
    let Some((kind, number, after)) = header(frame, at)? else { return Err(Malformed("a reply cut short")) };
    let line = || frame.slice(at + 1..after - 2);
    Ok(match kind {
        b'+' => (Reply::Status(line()), after),
        b'-' => (Reply::Error(line()), after),
        b':' => (Reply::Integer(integer(&frame[at + 1..after - 2])?), after),
        b'$' => match bulk_length(number)? {
            None => (Reply::Bulk(None), after),
            Some(length) => (Reply::Bulk(Some(frame.slice(after..after + length))), after + length + 2),
        },
        _ => match array_length(number)? {
            None => (Reply::Array(None), after),
            Some(elements) => {
                let mut items = Vec::with_capacity(elements);
                let mut end = after;
                for _ in 0..elements {
                    let (item, next) = build(frame, end)?;
                    items.push(item);
                    end = next;
                }
                (Reply::Array(Some(items)), end)
            }
        },
    })
}

/// A reply's first line from `at`: its type byte, the line read as a number where the type
/// has one, and where the next line starts; `None` while the line is incomplete.
fn header(bytes: &[u8], at: usize) -> Result<Option<(u8, i64, usize)>, Malformed> {
    let Some(&kind) = bytes.get(at) else { return Ok(None) };
    let Some(newline) = newline_at(&bytes[at..]) else {
        // A line longer than any header or status Redis writes is not waited for.
        return if bytes.len() - at > MAX_LINE { Err(Malformed("a line without an end")) } else { Ok(None) };
    };
    let end = at + newline;
    if end == at || bytes[end - 1] != b'\r' {
        return Err(Malformed("a line not ended by CRLF"));
    }
    let number = match kind {
        b'$' | b'*' => integer(&bytes[at + 1..end - 1])?,
        _ => 0,
    };
    Ok(Some((kind, number, end + 1)))
}

fn newline_at(bytes: &[u8]) -> Option<usize> {
    bytes.iter().position(|byte| *byte == b'\n')
}

fn integer(digits: &[u8]) -> Result<i64, Malformed> {
    let not_one = Malformed("a number that is not one");
    let (negative, digits) = match digits.split_first() {
        Some((b'-', rest)) => (true, rest),
        _ => (false, digits),
    };
    if digits.is_empty() || digits.len() > 19 {
        return Err(not_one);
    }
    let mut value: i64 = 0;
    for digit in digits {
        if !digit.is_ascii_digit() {
            return Err(not_one);
        }
        value = value
            .checked_mul(10)
            .and_then(|value| value.checked_add(i64::from(digit - b'0')))
            .ok_or(not_one.clone())?;
    }
    Ok(if negative { -value } else { value })
}

fn bulk_length(number: i64) -> Result<Option<usize>, Malformed> {
    length(number, MAX_BULK, Malformed("a bulk string's length out of bounds"))
}

fn array_length(number: i64) -> Result<Option<usize>, Malformed> {
    length(number, MAX_ELEMENTS, Malformed("an array's length out of bounds"))
}

/// A length as its header gives it: `None` for -1 (nil), else within `0..=most`.
fn length(number: i64, most: usize, out_of_bounds: Malformed) -> Result<Option<usize>, Malformed> {
    if number == -1 {
        return Ok(None);
    }
    usize::try_from(number).ok().filter(|length| *length <= most).map(Some).ok_or(out_of_bounds)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn read_all(bytes: &[u8]) -> Vec<Reply> {
        let mut buffer = BytesMut::from(bytes);
        let mut replies = Vec::new();
        while let Some(reply) = take_reply(&mut buffer).unwrap() {
            replies.push(reply);
        }
        assert!(buffer.is_empty(), "left: {buffer:?}");
        replies
    }

    fn bulk(text: &str) -> Reply {
        Reply::Bulk(Some(Bytes::copy_from_slice(text.as_bytes())))
    }

    #[test]
    fn a_command_is_an_array_of_bulk_strings() {
        let mut out = Vec::new();
        command(&mut out, &[b"HGETALL", b"wharf:{ab}:session"]);
        assert_eq!(out, b"*2\r\n$7\r\nHGETALL\r\n$18\r\nwharf:{ab}:session\r\n");
        command(&mut out, &[b"PING", b""]);
        assert!(out.ends_with(b"*2\r\n$4\r\nPING\r\n$0\r\n\r\n"));
    }

    #[test]
    fn every_kind_of_reply_is_read() {
        let replies = read_all(
            b":9223372036854775807\r\n+OK\r\n-ERR wrong\r\n:-42\r\n$5\r\nhe\r\no\r\n$-1\r\n$0\r\n\r\n*-1\r\n*0\r\n*2\r\n$1\r\na\r\n*1\r\n:7\r\n",
        );
        assert_eq!(
            replies,
            vec![
                Reply::Integer(i64::MAX),
                Reply::Status(Bytes::from_static(b"OK")),
                Reply::Error(Bytes::from_static(b"ERR wrong")),
                Reply::Integer(-42),
                bulk("he\r\no"),
                Reply::Bulk(None),
                bulk(""),
                Reply::Array(None),
                Reply::Array(Some(vec![])),
                Reply::Array(Some(vec![bulk("a"), Reply::Array(Some(vec![Reply::Integer(7)]))])),
            ]
        );
    }

    #[test]
    fn a_reply_is_taken_only_once_all_of_it_arrived() {
        let whole: &[u8] = b"*2\r\n$6\r\nopened\r\n$3\r\n{x}\r\n";
        for cut in 0..whole.len() {
            let mut buffer = BytesMut::from(&whole[..cut]);
            assert_eq!(take_reply(&mut buffer), Ok(None), "cut at {cut}");
            assert_eq!(buffer.len(), cut, "nothing taken from a partial reply");
            buffer.extend_from_slice(&whole[cut..]);
            assert_eq!(take_reply(&mut buffer).unwrap(), Some(Reply::Array(Some(vec![bulk("opened"), bulk("{x}")]))));
        }
    }

    #[test]
    fn bytes_that_are_no_reply_are_refused() {
        for bad in [
            &b"?1\r\n"[..],
            b"$3\r\nabcd\r\n",
            b"$x\r\n",
            b"+OK\n",
            b"$-2\r\n",
            b"*-5\r\n",
            b"$99999999999\r\n",
            b":\r\n",
            b":-\r\n",
            b":+1\r\n",
            b":99999999999999999999\r\n",
            b"*1\r\n*1\r\n*1\r\n*1\r\n*1\r\n*1\r\n*1\r\n*1\r\n*1\r\n:1\r\n",
        ] {
            assert!(take_reply(&mut BytesMut::from(bad)).is_err(), "{:?}", String::from_utf8_lossy(bad));
        }
    }
}
