//! Strings that match a schema's `pattern`, for the common subset of regular expressions:
//! literals and escapes, `.`, classes (`[a-z0-9_-]`, `[^...]`, `\d`, `\w`, `\s`), groups
//! (capturing, `(?:...)`), alternation, the quantifiers `?`, `*`, `+`, `{n}`, `{n,}`, `{n,m}`
//! (lazy ones too), and the anchors `^` and `$`. Anything else (look-around, back-references,
//! Unicode classes) is refused, and what is made is confirmed against the schema by its caller,
//! so a pattern read wrongly costs a skipped call, never a wrong verdict.

/// One piece of a pattern.
#[derive(Debug, Clone)]
enum Node {
    /// One character from a set (a literal is a set of one).
    Class(Class),
    /// Pieces one after another.
    Sequence(Vec<Node>),
    /// One of several.
    Either(Vec<Node>),
    /// A piece repeated `min` to `max` times.
    Repeat(Box<Node>, u32, Option<u32>),
    /// `^` or `$`: matches no character.
    Anchor,
}

/// A set of characters: ranges, or everything printable but them.
#[derive(Debug, Clone)]
struct Class {
    ranges: Vec<(char, char)>,
    negated: bool,
}

impl Class {
    fn of(ranges: &[(char, char)]) -> Class {
        Class { ranges: ranges.to_vec(), negated: false }
    }

    fn contains(&self, c: char) -> bool {
        self.ranges.iter().any(|(low, high)| (*low..=*high).contains(&c)) != self.negated
    }

    /// A character of the set, preferring letters and digits.
    fn pick(&self) -> Option<char> {
        let preferred = ('a'..='z').chain('0'..='9').chain('A'..='Z').chain(" -_.@:/".chars());
        preferred
            .chain((' '..='~').chain(['é', 'ü']))
            .find(|c| self.contains(*c))
            .or_else(|| if self.negated { None } else { self.ranges.first().map(|(low, _)| *low) })
    }
}

const DIGITS: &[(char, char)] = &[('0', '9')];
const WORD: &[(char, char)] = &[('a', 'z'), ('A', 'Z'), ('0', '9'), ('_', '_')];
const SPACE: &[(char, char)] = &[(' ', ' '), ('\t', '\t'), ('\n', '\n'), ('\r', '\r')];

/// The longest a repetition is made, whatever the pattern allows.
const MAX_REPEAT: u32 = 64;

/// Reads a pattern into pieces.
struct Parser<'a> {
    chars: std::iter::Peekable<std::str::Chars<'a>>,
    depth: usize,
}

impl Parser<'_> {
    fn alternation(&mut self) -> Result<Node, String> {
        let mut options = vec![self.sequence()?];
        while self.chars.peek() == Some(&'|') {
            self.chars.next();
            options.push(self.sequence()?);
        }
        Ok(if options.len() == 1 { options.remove(0) } else { Node::Either(options) })
    }

    fn sequence(&mut self) -> Result<Node, String> {
        let mut pieces = Vec::new();
        while let Some(&c) = self.chars.peek() {
            if c == '|' || c == ')' {
                break;
            }
            let atom = self.atom()?;
            pieces.push(self.quantified(atom)?);
        }
        Ok(Node::Sequence(pieces))
    }

    fn atom(&mut self) -> Result<Node, String> {
        let c = self.chars.next().ok_or("the pattern ends early")?;
        Ok(match c {
            '^' | '$' => Node::Anchor,
            '.' => Node::Class(Class { ranges: vec![('\n', '\n')], negated: true }),
            '(' => {
                self.depth += 1;
                if self.depth > 32 {
                    return Err("groups nested too deep".to_owned());
                }
                if self.chars.peek() == Some(&'?') {
                    self.chars.next();
                    match self.chars.next() {
                        Some(':') => {}
                        Some('<') if self.chars.peek().is_some_and(|c| c.is_alphabetic()) => {
                            // A named group: its name up to `>`.
                            for c in self.chars.by_ref() {
                                if c == '>' {
                                    break;
                                }
                            }
                        }
                        _ => return Err("look-around and inline flags are not generated".to_owned()),
                    }
                }
                let inner = self.alternation()?;
                if self.chars.next() != Some(')') {
                    return Err("a group is not closed".to_owned());
                }
                self.depth -= 1;
                inner
            }
            '[' => Node::Class(self.class()?),
            '\\' => Node::Class(self.escape()?),
            '*' | '+' | '?' | '{' | ')' => return Err(format!("`{c}` where a character was expected")),
            literal => Node::Class(Class::of(&[(literal, literal)])),
        })
    }

    fn escape(&mut self) -> Result<Class, String> {
        let c = self.chars.next().ok_or("the pattern ends in `\\`")?;
        Ok(match c {
            'd' => Class::of(DIGITS),
            'w' => Class::of(WORD),
            's' => Class::of(SPACE),
            'D' => Class { ranges: DIGITS.to_vec(), negated: true },
            'W' => Class { ranges: WORD.to_vec(), negated: true },
            'S' => Class { ranges: SPACE.to_vec(), negated: true },
            'n' => Class::of(&[('\n', '\n')]),
            't' => Class::of(&[('\t', '\t')]),
            'r' => Class::of(&[('\r', '\r')]),
            c if c.is_ascii_digit() || matches!(c, 'b' | 'B' | 'p' | 'P' | 'u' | 'x' | 'k') => {
                return Err(format!("`\\{c}` is not generated"));
            }
            other => Class::of(&[(other, other)]),
        })
    }

    fn class(&mut self) -> Result<Class, String> {
        let negated = self.chars.peek() == Some(&'^');
        if negated {
            self.chars.next();
        }
        let mut ranges = Vec::new();
        let mut first = true;
        loop {
            let c = self.chars.next().ok_or("a class is not closed")?;
            if c == ']' && !first {
                break;
            }
            first = false;
            let low = match c {
                '\\' => {
                    let escaped = self.escape()?;
                    if escaped.negated || escaped.ranges.len() != 1 || escaped.ranges[0].0 != escaped.ranges[0].1 {
                        if escaped.negated {
                            return Err("a negated escape inside a class is not generated".to_owned());
                        }
                        ranges.extend(escaped.ranges);
                        continue;
                    }
                    escaped.ranges[0].0
                }
                '[' if self.chars.peek() == Some(&':') => return Err("POSIX classes are not generated".to_owned()),
                c => c,
            };
            let mut ahead = self.chars.clone();
            if ahead.next() == Some('-') && ahead.peek().is_some_and(|c| *c != ']') {
                self.chars.next();
                let high = match self.chars.next().ok_or("a class is not closed")? {
                    '\\' => self.escape()?.ranges.first().map(|range| range.0).ok_or("a bad range")?,
                    c => c,
                };
                if high < low {
                    return Err("a range runs backwards".to_owned());
                }
                ranges.push((low, high));
            } else {
                ranges.push((low, low));
            }
        }
        Ok(Class { ranges, negated })
    }

    fn quantified(&mut self, atom: Node) -> Result<Node, String> {
        let (min, max) = match self.chars.peek() {
            Some('?') => (0, Some(1)),
            Some('*') => (0, None),
            Some('+') => (1, None),
            Some('{') => {
                let mut ahead = self.chars.clone();
                ahead.next();
                let text: String = ahead.by_ref().take_while(|c| *c != '}').collect();
                let bounds =
                    text.split_once(',').map_or((text.as_str(), Some(text.as_str())), |(low, high)| (low, Some(high)));
                let Ok(min) = bounds.0.trim().parse::<u32>() else {
                    // Not a quantifier: a literal brace.
                    return Ok(atom);
                };
                let max = match bounds.1.map(str::trim) {
                    Some("") => None,
                    Some(high) => Some(high.parse::<u32>().map_err(|_| "a bad `{n,m}`")?),
                    None => Some(min),
                };
                self.chars = ahead;
                return Ok(Node::Repeat(Box::new(atom), min, max));
            }
            _ => return Ok(atom),
        };
        self.chars.next();
        if matches!(self.chars.peek(), Some('?' | '+')) {
            // Lazy or possessive: the same strings.
            self.chars.next();
        }
        Ok(Node::Repeat(Box::new(atom), min, max))
    }
}

/// Writes a string the node matches, each repetition made `extra` times past its minimum
/// (within its maximum and [`MAX_REPEAT`]).
fn write(node: &Node, extra: u32, out: &mut String) -> Result<(), String> {
    match node {
        Node::Anchor => {}
        Node::Class(class) => out.push(class.pick().ok_or("a class no character matches")?),
        Node::Sequence(pieces) => {
            for piece in pieces {
                write(piece, extra, out)?;
            }
        }
        Node::Either(options) => {
            // The first option that can be written.
            let mut last = Err("no option".to_owned());
            for option in options {
                let mut attempt = String::new();
                last = write(option, extra, &mut attempt);
                if last.is_ok() {
                    out.push_str(&attempt);
                    break;
                }
            }
            last?;
        }
        Node::Repeat(inner, min, max) => {
            let wanted = min.saturating_add(extra);
            let times = max.map_or(wanted, |max| wanted.min(max)).min(MAX_REPEAT.max(*min));
            if times > MAX_REPEAT * 4 {
                return Err(format!("a repetition of {times}"));
            }
            for _ in 0..times {
                write(inner, extra, out)?;
            }
        }
    }
    Ok(())
}

/// Strings `pattern` matches, shortest first (each repetition at its minimum, then once more,
/// and so on), or why none can be made. JSON Schema patterns are not anchored: an unanchored
/// pattern is matched by what it makes all the same.
pub(crate) fn strings_matching(pattern: &str) -> Result<Vec<String>, String> {
    let mut parser = Parser { chars: pattern.chars().peekable(), depth: 0 };
    let node = parser.alternation()?;
    if parser.chars.next().is_some() {
        return Err("an unmatched `)`".to_owned());
    }
    let mut made = Vec::new();
    for extra in [0, 1, 2, 4, 8, 16] {
        let mut out = String::new();
        write(&node, extra, &mut out)?;
        if !made.contains(&out) {
            made.push(out);
        }
    }
    Ok(made)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn first(pattern: &str) -> String {
        strings_matching(pattern).unwrap().remove(0)
    }

    #[test]
    fn common_patterns_are_matched() {
        assert_eq!(first("^[0-9]+$"), "0");
        assert_eq!(first("^\\d{3}-\\d{4}$"), "000-0000");
        assert_eq!(first("^[A-Z]{2}[0-9]{2,4}$"), "AA00");
        assert_eq!(first("^(red|green|blue)$"), "red");
        assert_eq!(first("^[a-z][a-z0-9_-]*$"), "a");
        assert_eq!(first("^[^@\\s]+@[^@\\s]+\\.[a-z]{2,}$"), "a@a.aa");
        assert_eq!(first("^v(?:\\d+\\.){2}\\d+$"), "v0.0.0");
        assert_eq!(first("x{2}y?"), "xx");
        assert_eq!(first("a.b"), "aab");
        let longer = strings_matching("^a+$").unwrap();
        assert_eq!(longer[1], "aa", "each repetition once more");
    }

    #[test]
    fn what_is_not_generated_says_so() {
        for pattern in ["^(?=a)b$", "(a)\\1", "\\p{L}+", "[[:alpha:]]", "a)", "[z-a]"] {
            assert!(strings_matching(pattern).is_err(), "{pattern}");
        }
    }
}
