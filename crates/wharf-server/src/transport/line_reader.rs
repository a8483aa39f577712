//! Reads newline-delimited messages with a bound on line length. An oversized line is
//! discarded up to its newline, and reading goes on with the next line.

use tokio::io::{AsyncBufRead, AsyncBufReadExt};

/// One read from the stream.
#[derive(Debug, PartialEq, Eq)]
pub(crate) enum Line {
    /// A complete line is in the buffer (without its newline).
    Complete,
    /// A line longer than the limit was skipped.
    TooLong,
    /// The stream ended.
    Eof,
}

pub(crate) async fn read_line<R: AsyncBufRead + Unpin>(
    reader: &mut R,
    buffer: &mut Vec<u8>,
    max: usize,
) -> std::io::Result<Line> {
    buffer.clear();
    let mut discarding = false;
    loop {
        let available = reader.fill_buf().await?;
        if available.is_empty() {
            return Ok(if discarding {
                Line::TooLong
            } else if buffer.is_empty() {
                Line::Eof
            } else {
                // The last line had no newline; it is still a message.
                Line::Complete
            });
        }
        let (chunk, found_newline) = match memchr::memchr(b'\n', available) {
            Some(index) => (&available[..index], true),
            None => (available, false),
        };
        if !discarding {
            if buffer.len() + chunk.len() > max {
                discarding = true;
                buffer.clear();
            } else {
                buffer.extend_from_slice(chunk);
            }
        }
        let consumed = chunk.len() + usize::from(found_newline);
        reader.consume(consumed);
        if found_newline {
            return Ok(if discarding { Line::TooLong } else { Line::Complete });
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn long_lines_are_skipped_and_the_next_line_is_read() {
        let input = b"short\nthis line is far too long\nok\nlast".to_vec();
        let mut reader = tokio::io::BufReader::with_capacity(4, &input[..]);
        let mut buffer = Vec::new();
        let mut seen = Vec::new();
        loop {
            match read_line(&mut reader, &mut buffer, 10).await.unwrap() {
                Line::Eof => break,
                Line::TooLong => seen.push("<too long>".to_owned()),
                Line::Complete => seen.push(String::from_utf8(buffer.clone()).unwrap()),
            }
        }
        assert_eq!(seen, vec!["short", "<too long>", "ok", "last"]);
    }
}
