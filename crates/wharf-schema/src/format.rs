//! `format`, asserted when a validator is asked to: dates and times (RFC 3339), e-mail
//! addresses, host names, IP addresses, URIs and IRIs (RFC 3986, 3987), URI templates, JSON
//! Pointers, regular expressions and UUIDs. A format this crate does not know holds for any
//! string, as the drafts say.

use std::net::Ipv6Addr;

use crate::pattern;

/// True when `text` is a valid `format`.
pub(crate) fn holds(format: &str, text: &str) -> bool {
    match format {
        "date" => is_date(text),
        "time" => is_time(text),
        "date-time" => is_date_time(text),
        "duration" => is_duration(text),
        "email" => is_email(text, false),
        "idn-email" => is_email(text, true),
        "hostname" => is_hostname(text, false),
        "idn-hostname" => is_hostname(text, true),
        "ipv4" => is_ipv4(text),
        "ipv6" => text.is_ascii() && text.parse::<Ipv6Addr>().is_ok(),
        "uri" => is_uri(text, false, false),
        "uri-reference" => is_uri(text, true, false),
        "iri" => is_uri(text, false, true),
        "iri-reference" => is_uri(text, true, true),
        "uri-template" => is_uri_template(text),
        "json-pointer" => is_json_pointer(text),
        "relative-json-pointer" => is_relative_json_pointer(text),
        "regex" => pattern::compile(text).is_ok(),
        "uuid" => is_uuid(text),
        _ => true,
    }
}

/// `len` ASCII digits at the start of `text`, as a number.
fn digits(text: &str, len: usize) -> Option<u32> {
    let part = text.get(..len)?;
    part.bytes().all(|b| b.is_ascii_digit()).then(|| part.parse().ok())?
}

fn is_leap_year(year: u32) -> bool {
    year.is_multiple_of(4) && (!year.is_multiple_of(100) || year.is_multiple_of(400))
}

fn is_date(text: &str) -> bool {
    let bytes = text.as_bytes();
    if bytes.len() != 10 || bytes[4] != b'-' || bytes[7] != b'-' {
        return false;
    }
    let (Some(year), Some(month), Some(day)) = (digits(text, 4), digits(&text[5..], 2), digits(&text[8..], 2)) else {
        return false;
    };
    let days = match month {
        1 | 3 | 5 | 7 | 8 | 10 | 12 => 31,
        4 | 6 | 9 | 11 => 30,
        2 if is_leap_year(year) => 29,
        2 => 28,
        _ => return false,
    };
    (1..=days).contains(&day)
}

/// `HH:MM:SS[.frac](Z|±HH:MM)`; a leap second only where it is 23:59:60 in UTC.
fn is_time(text: &str) -> bool {
    let bytes = text.as_bytes();
    if bytes.len() < 9 || bytes[2] != b':' || bytes[5] != b':' {
        return false;
    }
    let (Some(hour), Some(minute), Some(second)) = (digits(text, 2), digits(&text[3..], 2), digits(&text[6..], 2))
    else {
        return false;
    };
    let mut rest = &text[8..];
    if let Some(fraction) = rest.strip_prefix('.') {
        let length = fraction.bytes().take_while(u8::is_ascii_digit).count();
        if length == 0 {
            return false;
        }
        rest = &fraction[length..];
    }
    let offset_minutes: i64 = if rest.eq_ignore_ascii_case("z") {
        0
    } else {
        let sign = match rest.as_bytes().first() {
            Some(b'+') => 1,
            Some(b'-') => -1,
            _ => return false,
        };
        let offset = &rest[1..];
        if offset.len() != 5 || offset.as_bytes()[2] != b':' {
            return false;
        }
        let (Some(hours), Some(minutes)) = (digits(offset, 2), digits(&offset[3..], 2)) else { return false };
        if hours > 23 || minutes > 59 {
            return false;
        }
        sign * i64::from(hours * 60 + minutes)
    };
    if hour > 23 || minute > 59 || second > 60 {
        return false;
    }
    if second == 60 {
        let utc = (i64::from(hour * 60 + minute) - offset_minutes).rem_euclid(24 * 60);
        return utc == 23 * 60 + 59;
    }
    true
}

fn is_date_time(text: &str) -> bool {
    text.len() > 11 && text.is_char_boundary(10) && {
        let (date, rest) = text.split_at(10);
        is_date(date) && matches!(rest.as_bytes()[0], b'T' | b't') && is_time(&rest[1..])
    }
}

/// ISO 8601 durations as RFC 3339's appendix A writes them: `P1Y2M3DT4H5M6S`, `P2W`.
fn is_duration(text: &str) -> bool {
    let Some(rest) = text.strip_prefix('P') else { return false };
    if let Some(weeks) = rest.strip_suffix('W') {
        return !weeks.is_empty() && weeks.bytes().all(|b| b.is_ascii_digit());
    }
    let (date, time) = match rest.split_once('T') {
        Some((date, time)) => (date, Some(time)),
        None => (rest, None),
    };
    let parts_in_order = |text: &str, units: &[u8]| -> Option<usize> {
        let mut count = 0;
        let mut next_unit = 0;
        let mut number = 0;
        for byte in text.bytes() {
            if byte.is_ascii_digit() {
                number += 1;
                continue;
            }
            let position = units.iter().position(|&unit| unit == byte)?;
            if number == 0 || position < next_unit {
                return None;
            }
            next_unit = position + 1;
            number = 0;
            count += 1;
        }
        (number == 0).then_some(count)
    };
    let Some(date_parts) = parts_in_order(date, b"YMD") else { return false };
    match time {
        Some(time) => parts_in_order(time, b"HMS").is_some_and(|parts| parts > 0),
        None => date_parts > 0,
    }
}

/// `local@domain`: a dot-atom or a quoted string, at a host name or an address literal.
fn is_email(text: &str, international: bool) -> bool {
    let Some(at) = text.rfind('@') else { return false };
    let (local, domain) = (&text[..at], &text[at + 1..]);
    let local_ok = if let Some(quoted) = local.strip_prefix('"').and_then(|rest| rest.strip_suffix('"')) {
        !quoted.contains(['"', '\\']) || quoted.contains("\\\"")
    } else {
        !local.is_empty()
            && !local.starts_with('.')
            && !local.ends_with('.')
            && !local.contains("..")
            && local.chars().all(|c| {
                c.is_ascii_alphanumeric() || "!#$%&'*+-/=?^_`{|}~.".contains(c) || (international && !c.is_ascii())
            })
    };
    if !local_ok {
        return false;
    }
    if let Some(literal) = domain.strip_prefix('[').and_then(|rest| rest.strip_suffix(']')) {
        return match literal.strip_prefix("IPv6:") {
            Some(address) => address.parse::<Ipv6Addr>().is_ok(),
            None => is_ipv4(literal),
        };
    }
    is_hostname(domain, international)
}

fn is_hostname(text: &str, international: bool) -> bool {
    let text = text.strip_suffix('.').unwrap_or(text);
    if text.is_empty() || text.len() > 253 {
        return false;
    }
    text.split('.').all(|label| {
        let length = if international { label.chars().count() } else { label.len() };
        (1..=63).contains(&length)
            && !label.starts_with('-')
            && !label.ends_with('-')
            && (international || !(label.len() >= 4 && &label[2..4] == "--" && !label.starts_with("xn")))
            && label.chars().all(|c| {
                c.is_ascii_alphanumeric() || c == '-' || (international && !c.is_ascii() && c.is_alphanumeric())
            })
    })
}

fn is_ipv4(text: &str) -> bool {
    let octets: Vec<&str> = text.split('.').collect();
    octets.len() == 4
        && octets.iter().all(|octet| {
            !octet.is_empty()
                && octet.len() <= 3
                && octet.bytes().all(|b| b.is_ascii_digit())
                && (octet.len() == 1 || !octet.starts_with('0'))
                && octet.parse::<u16>().is_ok_and(|value| value <= 255)
        })
}

/// A URI (or IRI, with characters beyond ASCII), absolute unless `relative` is allowed.
fn is_uri(text: &str, relative: bool, international: bool) -> bool {
    let allowed = |c: char| {
        c.is_ascii_alphanumeric()
            || "-._~:/?#[]@!$&'()*+,;=%".contains(c)
            || (international && !c.is_ascii() && !c.is_control())
    };
    if !text.chars().all(allowed) || !valid_percent_escapes(text) {
        return false;
    }
    let (before_fragment, fragment) = match text.split_once('#') {
        Some((before, fragment)) => (before, Some(fragment)),
        None => (text, None),
    };
    if fragment.is_some_and(|fragment| fragment.contains(['#', '[', ']'])) {
        return false;
    }
    let scheme_end = before_fragment.find(':').filter(|&end| !before_fragment[..end].contains(['/', '?']));
    let rest = match scheme_end {
        Some(end) => {
            let scheme = &before_fragment[..end];
            if scheme.is_empty()
                || !scheme.starts_with(|c: char| c.is_ascii_alphabetic())
                || !scheme.chars().all(|c| c.is_ascii_alphanumeric() || "+-.".contains(c))
            {
                return false;
            }
            &before_fragment[end + 1..]
        }
        None if relative => before_fragment,
        None => return false,
    };
    let (hierarchy, _query) = rest.split_once('?').unwrap_or((rest, ""));
    if let Some(after) = hierarchy.strip_prefix("//") {
        let authority = &after[..after.find('/').unwrap_or(after.len())];
        let host_port = authority.rsplit_once('@').map_or(authority, |(_, host)| host);
        let (host, port) = if let Some(literal) = host_port.strip_prefix('[') {
            let Some((inside, after)) = literal.split_once(']') else { return false };
            if inside.parse::<Ipv6Addr>().is_err() && !inside.starts_with(['v', 'V']) {
                return false;
            }
            ("", after.strip_prefix(':').unwrap_or(if after.is_empty() { "" } else { "x" }))
        } else {
            host_port.split_once(':').unwrap_or((host_port, ""))
        };
        if host.contains(['[', ']']) || !port.bytes().all(|b| b.is_ascii_digit()) {
            return false;
        }
        let path = &after[authority.len()..];
        return !path.contains(['[', ']']);
    }
    // Without an authority, a relative reference's first segment may not hold a colon.
    let colon_first = scheme_end.is_none() && hierarchy.split('/').next().is_some_and(|first| first.contains(':'));
    !(hierarchy.contains(['[', ']']) || colon_first)
}

fn valid_percent_escapes(text: &str) -> bool {
    let bytes = text.as_bytes();
    bytes.iter().enumerate().all(|(index, &byte)| {
        byte != b'%'
            || (bytes.get(index + 1).is_some_and(u8::is_ascii_hexdigit)
                && bytes.get(index + 2).is_some_and(u8::is_ascii_hexdigit))
    })
}

/// RFC 6570: expressions in braces, neither nested nor left open.
fn is_uri_template(text: &str) -> bool {
    let mut open = false;
    for c in text.chars() {
        match c {
            '{' if open => return false,
            '{' => open = true,
            '}' if !open => return false,
            '}' => open = false,
            _ => {}
        }
    }
    !open
}

fn is_json_pointer(text: &str) -> bool {
    (text.is_empty() || text.starts_with('/')) && {
        let bytes = text.as_bytes();
        bytes.iter().enumerate().all(|(index, &byte)| byte != b'~' || matches!(bytes.get(index + 1), Some(b'0' | b'1')))
    }
}

fn is_relative_json_pointer(text: &str) -> bool {
    let length = text.bytes().take_while(u8::is_ascii_digit).count();
    if length == 0 || (length > 1 && text.starts_with('0')) {
        return false;
    }
    let rest = &text[length..];
    // An index adjustment (`1+2`, `0-1`) may follow the number (draft 2020-12's optional form).
    let rest = match rest.strip_prefix(['+', '-']) {
        Some(adjusted) => {
            let adjustment = adjusted.bytes().take_while(u8::is_ascii_digit).count();
            if adjustment == 0 || (adjustment > 1 && adjusted.starts_with('0')) {
                return false;
            }
            &adjusted[adjustment..]
        }
        None => rest,
    };
    rest == "#" || is_json_pointer(rest)
}

fn is_uuid(text: &str) -> bool {
    let bytes = text.as_bytes();
    bytes.len() == 36
        && bytes.iter().enumerate().all(|(index, &byte)| {
            if matches!(index, 8 | 13 | 18 | 23) { byte == b'-' } else { byte.is_ascii_hexdigit() }
        })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn formats_hold_for_what_their_rfcs_allow() {
        for (format, good, bad) in [
            ("date", "2024-02-29", "2023-02-29"),
            ("time", "23:59:60Z", "22:59:60Z"),
            ("date-time", "1985-04-12T23:20:50.52Z", "1985-04-12 23:20:50Z"),
            ("duration", "P1Y2M3DT4H5M6S", "P1DT"),
            ("email", "joe.bloggs@example.com", "joe..bloggs@example.com"),
            ("hostname", "www.example.com", "-a.example.com"),
            ("ipv4", "192.168.0.1", "192.168.00.1"),
            ("ipv6", "::ffff:192.168.0.1", "12345::"),
            ("uri", "http://example.com/a?b#c", "//example.com"),
            ("uri-reference", "../a/b", "\\\\WINDOWS"),
            ("uri-template", "http://example.com/{id}", "http://example.com/{id"),
            ("json-pointer", "/a~1b/0", "a/b"),
            ("relative-json-pointer", "0#", "-1"),
            ("regex", "^a+$", "(unclosed"),
            ("uuid", "2eb8aa08-aa98-11ea-b4aa-73b441d16380", "2eb8aa08aa9811eab4aa73b441d16380"),
        ] {
            assert!(holds(format, good), "{format}: {good}");
            assert!(!holds(format, bad), "{format}: {bad}");
        }
        assert!(holds("unknown-format", "anything"));
    }
}
