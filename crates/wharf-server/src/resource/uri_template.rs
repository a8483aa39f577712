//! RFC 6570 URI templates, levels 1 to 3: parsing, expansion, and matching a URI back to its
//! variables.
//!
//! Matching never backtracks. Each expression consumes the longest run of characters its
//! operator allows, stopping early where the template's next literal begins (or, when the next
//! expression starts with its separator, as in `{?q}{&page}`, at the first pair it has no name
//! for, or after one piece per variable), so a URI is read once from left to right and the time is linear
//! in its length. A literal that starts with the separator of a several-variable expression
//! before it therefore ends that expression at its first separator.

use std::collections::BTreeMap;
use std::fmt;

/// The longest template accepted, in bytes.
pub(crate) const MAX_TEMPLATE_LEN: usize = 8 * 1024;
/// The most variables a template may have.
pub(crate) const MAX_VARIABLES: usize = 256;
/// The longest URI that is matched, in bytes.
pub(crate) const MAX_URI_LEN: usize = 64 * 1024;

/// A parsed URI template such as `users://{id}/profile` or `search://items{?q,limit}`.
#[derive(Clone, PartialEq, Eq)]
pub struct UriTemplate {
    source: String,
    parts: Vec<Part>,
}

#[derive(Debug, Clone, PartialEq, Eq)]
enum Part {
    Literal(String),
    Expression(Expression),
}

#[derive(Debug, Clone, PartialEq, Eq)]
struct Expression {
    operator: Operator,
    variables: Vec<String>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Operator {
    Simple,
    Reserved,
    Fragment,
    Label,
    Path,
    PathParameter,
    Query,
    QueryContinuation,
}

impl Operator {
    fn from_char(c: char) -> Option<Operator> {
        Some(match c {
            '+' => Operator::Reserved,
            '#' => Operator::Fragment,
            '.' => Operator::Label,
            '/' => Operator::Path,
            ';' => Operator::PathParameter,
            '?' => Operator::Query,
            '&' => Operator::QueryContinuation,
            _ => return None,
        })
    }

    fn prefix(self) -> &'static str {
        match self {
            Operator::Simple | Operator::Reserved => "",
            Operator::Fragment => "#",
            Operator::Label => ".",
            Operator::Path => "/",
            Operator::PathParameter => ";",
            Operator::Query => "?",
            Operator::QueryContinuation => "&",
        }
    }

    fn separator(self) -> char {
        match self {
            Operator::Simple | Operator::Reserved | Operator::Fragment => ',',
            Operator::Label => '.',
            Operator::Path => '/',
            Operator::PathParameter => ';',
            Operator::Query | Operator::QueryContinuation => '&',
        }
    }

    fn is_named(self) -> bool {
        matches!(self, Operator::PathParameter | Operator::Query | Operator::QueryContinuation)
    }

    fn allows_reserved(self) -> bool {
        matches!(self, Operator::Reserved | Operator::Fragment)
    }

    /// True when `c` can appear inside this expression's expansion.
    fn admits(self, c: char) -> bool {
        if is_unreserved(c) || c == '%' || c == self.separator() {
            return true;
        }
        if self.is_named() && c == '=' {
            return true;
        }
        self.allows_reserved() && is_reserved(c)
    }
}

fn is_unreserved(c: char) -> bool {
    c.is_ascii_alphanumeric() || matches!(c, '-' | '.' | '_' | '~')
}

fn is_reserved(c: char) -> bool {
    matches!(
        c,
        ':' | '/' | '?' | '#' | '[' | ']' | '@' | '!' | '$' | '&' | '\'' | '(' | ')' | '*' | '+' | ',' | ';' | '='
    )
}

/// Why a template could not be parsed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TemplateError(String);

impl fmt::Display for TemplateError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for TemplateError {}

impl UriTemplate {
    /// Parses a template.
    pub fn parse(source: &str) -> Result<UriTemplate, TemplateError> {
        if source.len() > MAX_TEMPLATE_LEN {
            return Err(TemplateError(format!("the template is longer than {MAX_TEMPLATE_LEN} bytes")));
        }
        let mut parts = Vec::new();
        let mut rest = source;
        let mut count = 0;
        while !rest.is_empty() {
            match rest.find('{') {
                Some(0) => {
                    let end =
                        rest.find('}').ok_or_else(|| TemplateError(format!("`{source}` has an unclosed `{{`")))?;
                    let expression = parse_expression(&rest[1..end], source)?;
                    count += expression.variables.len();
                    parts.push(Part::Expression(expression));
                    rest = &rest[end + 1..];
                }
                found => {
                    let end = found.unwrap_or(rest.len());
                    let literal = &rest[..end];
                    if literal.contains('}') {
                        return Err(TemplateError(format!("`{source}` has a `}}` without a matching `{{`")));
                    }
                    parts.push(Part::Literal(literal.to_owned()));
                    rest = &rest[end..];
                }
            }
        }
        if count > MAX_VARIABLES {
            return Err(TemplateError(format!("the template has more than {MAX_VARIABLES} variables")));
        }
        let template = UriTemplate { source: source.to_owned(), parts };
        let names = template.variables();
        for (index, name) in names.iter().enumerate() {
            if names[..index].contains(name) {
                return Err(TemplateError(format!("`{source}` names the variable `{name}` twice")));
            }
        }
        for pair in template.parts.windows(2) {
            if let [Part::Expression(_), Part::Expression(second)] = pair
                && second.operator.prefix().is_empty()
            {
                return Err(TemplateError(format!(
                    "`{source}` puts two expressions side by side with nothing to tell them apart; \
                     put a literal between them"
                )));
            }
        }
        Ok(template)
    }

    /// The template text.
    pub fn as_str(&self) -> &str {
        &self.source
    }

    /// The variable names, in order of appearance.
    pub fn variables(&self) -> Vec<&str> {
        self.parts
            .iter()
            .filter_map(|part| match part {
                Part::Expression(expression) => Some(expression.variables.iter().map(String::as_str)),
                Part::Literal(_) => None,
            })
            .flatten()
            .collect()
    }

    /// Expands the template. Absent variables expand to nothing, as RFC 6570 says.
    pub fn expand(&self, values: &BTreeMap<String, String>) -> String {
        let mut out = String::new();
        for part in &self.parts {
            match part {
                Part::Literal(literal) => out.push_str(literal),
                Part::Expression(expression) => {
                    let mut first = true;
                    for name in &expression.variables {
                        let Some(value) = values.get(name) else { continue };
                        out.push_str(if first { expression.operator.prefix() } else { "" });
                        if !first {
                            out.push(expression.operator.separator());
                        }
                        first = false;
                        if expression.operator.is_named() {
                            out.push_str(name);
                            if value.is_empty() {
                                if expression.operator != Operator::PathParameter {
                                    out.push('=');
                                }
                                continue;
                            }
                            out.push('=');
                        }
                        encode_into(&mut out, value, expression.operator.allows_reserved());
                    }
                }
            }
        }
        out
    }

    /// Matches `uri` against the template and returns the decoded variables, or `None` if the
    /// URI does not fit. Simple and path-style variables must not be empty.
    pub fn matches(&self, uri: &str) -> Option<BTreeMap<String, String>> {
        if uri.len() > MAX_URI_LEN {
            return None;
        }
        let mut values = BTreeMap::new();
        let mut rest = uri;
        for (index, part) in self.parts.iter().enumerate() {
            match part {
                Part::Literal(literal) => rest = rest.strip_prefix(literal.as_str())?,
                Part::Expression(expression) => {
                    let prefix = expression.operator.prefix();
                    if !prefix.is_empty() {
                        match rest.strip_prefix(prefix) {
                            Some(after) => rest = after,
                            None => continue,
                        }
                    }
                    let end = match self.parts.get(index + 1) {
                        Some(Part::Literal(literal)) => extent(rest, expression.operator, Some(literal)),
                        // `{?q,limit}{&page}`, `{/a,b}{/c}`: the next prefix is this expression's
                        // separator too, so the names (or the number of variables) tell where
                        // this one ends.
                        Some(Part::Expression(next))
                            if next.operator.prefix().starts_with(expression.operator.separator()) =>
                        {
                            shared_separator_extent(rest, expression)
                        }
                        Some(Part::Expression(next)) => extent(rest, expression.operator, Some(next.operator.prefix())),
                        None => extent(rest, expression.operator, None),
                    };
                    let (taken, after) = rest.split_at(end);
                    rest = after;
                    assign(expression, taken, &mut values)?;
                }
            }
        }
        rest.is_empty().then_some(values)
    }
}

/// How many bytes of `input` belong to an expression: the longest admitted run, cut at the
/// first place where the next literal starts. The literal is searched for once (in linear
/// time, however long and repetitive it is), not compared at every offset.
fn extent(input: &str, operator: Operator, next_literal: Option<&str>) -> usize {
    // UTF-8 text found in UTF-8 text starts at a character boundary.
    let literal_at = next_literal
        .filter(|literal| !literal.is_empty())
        .and_then(|literal| memchr::memmem::find(input.as_bytes(), literal.as_bytes()))
        .unwrap_or(input.len());
    let before_literal = &input[..literal_at];
    before_literal.char_indices().find(|&(_, c)| !operator.admits(c)).map_or(literal_at, |(offset, _)| offset)
}

/// How many bytes of `input` belong to an expression followed by one that starts with its
/// separator: of its admitted run, the `name=value` pairs up to the first whose name it does
/// not have (named operators), or one piece per variable at most.
fn shared_separator_extent(input: &str, expression: &Expression) -> usize {
    let separator = expression.operator.separator();
    let admitted = extent(input, expression.operator, None);
    let mut end = 0;
    for (index, piece) in input[..admitted].split(separator).enumerate() {
        let belongs = if expression.operator.is_named() {
            let name = piece.split_once('=').map_or(piece, |(name, _)| name);
            expression.variables.iter().any(|known| known == name)
        } else {
            index < expression.variables.len()
        };
        if !belongs {
            break;
        }
        end += piece.len() + separator.len_utf8();
    }
    // The separator before the first piece not taken belongs to the next expression.
    end.saturating_sub(separator.len_utf8()).min(admitted)
}

fn assign(expression: &Expression, taken: &str, values: &mut BTreeMap<String, String>) -> Option<()> {
    let separator = expression.operator.separator();
    if expression.operator.is_named() {
        for pair in taken.split(separator).filter(|pair| !pair.is_empty()) {
            let (name, value) = pair.split_once('=').unwrap_or((pair, ""));
            // The template expands each variable once: a URI that names one twice is not one
            // of its expansions, and which of the two values was meant cannot be told.
            if !expression.variables.iter().any(|known| known == name) || values.contains_key(name) {
                return None;
            }
            values.insert(name.to_owned(), decode(value)?);
        }
        return Some(());
    }
    let pieces: Vec<&str> =
        if expression.variables.len() == 1 { vec![taken] } else { taken.split(separator).collect() };
    if pieces.len() > expression.variables.len() {
        return None;
    }
    for (name, piece) in expression.variables.iter().zip(pieces) {
        if piece.is_empty() {
            return None;
        }
        values.insert(name.clone(), decode(piece)?);
    }
    Some(())
}

fn parse_expression(body: &str, source: &str) -> Result<Expression, TemplateError> {
    let mut chars = body.chars();
    let (operator, names) = match chars.next().and_then(Operator::from_char) {
        Some(operator) => (operator, chars.as_str()),
        None => (Operator::Simple, body),
    };
    if names.is_empty() {
        return Err(TemplateError(format!("`{source}` has an empty expression `{{{body}}}`")));
    }
    let mut variables = Vec::new();
    for name in names.split(',') {
        if name.contains(':') || name.ends_with('*') {
            return Err(TemplateError(format!(
                "`{source}` uses the level-4 modifier in `{name}`; only levels 1 to 3 are supported"
            )));
        }
        let valid =
            !name.is_empty() && name.chars().all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '.' || c == '%');
        if !valid {
            return Err(TemplateError(format!("`{source}` has an invalid variable name `{name}`")));
        }
        variables.push(name.to_owned());
    }
    Ok(Expression { operator, variables })
}

fn encode_into(out: &mut String, value: &str, allow_reserved: bool) {
    for byte in value.bytes() {
        let c = byte as char;
        if byte.is_ascii() && (is_unreserved(c) || (allow_reserved && is_reserved(c))) {
            out.push(c);
        } else {
            out.push_str(&format!("%{byte:02X}"));
        }
    }
}

fn decode(value: &str) -> Option<String> {
    let bytes = value.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut index = 0;
    while index < bytes.len() {
        if bytes[index] == b'%' {
            let hex = value.get(index + 1..index + 3)?;
            out.push(u8::from_str_radix(hex, 16).ok()?);
            index += 3;
        } else {
            out.push(bytes[index]);
            index += 1;
        }
    }
    String::from_utf8(out).ok()
}

impl fmt::Debug for UriTemplate {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "UriTemplate({:?})", self.source)
    }
}

impl fmt::Display for UriTemplate {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.source)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn vars(pairs: &[(&str, &str)]) -> BTreeMap<String, String> {
        pairs.iter().map(|(k, v)| (k.to_string(), v.to_string())).collect()
    }

    #[test]
    fn simple_variables_match_and_expand() {
        let template = UriTemplate::parse("users://{id}/profile").unwrap();
        assert_eq!(template.variables(), vec!["id"]);
        assert_eq!(template.matches("users://42/profile"), Some(vars(&[("id", "42")])));
        assert_eq!(template.matches("users://a%20b/profile"), Some(vars(&[("id", "a b")])));
        assert_eq!(template.matches("users:///profile"), None);
        assert_eq!(template.matches("users://42/settings"), None);
        assert_eq!(template.matches("users://4/2/profile"), None);
        assert_eq!(template.expand(&vars(&[("id", "a b")])), "users://a%20b/profile");
    }

    #[test]
    fn reserved_expansion_crosses_slashes_and_stops_at_the_next_literal() {
        let template = UriTemplate::parse("file:///{+path}.json").unwrap();
        assert_eq!(template.matches("file:///a/b/c.json"), Some(vars(&[("path", "a/b/c")])));
        assert_eq!(template.expand(&vars(&[("path", "a/b")])), "file:///a/b.json");
    }

    #[test]
    fn level_three_operators_round_trip() {
        let template = UriTemplate::parse("search://items{/category}{?q,limit}").unwrap();
        let values = vars(&[("category", "books"), ("q", "rust lang"), ("limit", "10")]);
        let uri = template.expand(&values);
        assert_eq!(uri, "search://items/books?q=rust%20lang&limit=10");
        assert_eq!(template.matches(&uri), Some(values));
        assert_eq!(template.matches("search://items/books"), Some(vars(&[("category", "books")])));
        assert_eq!(template.matches("search://items?evil=1"), None);
    }

    #[test]
    fn several_variables_in_one_expression() {
        let template = UriTemplate::parse("map://{x,y}").unwrap();
        assert_eq!(template.matches("map://1,2"), Some(vars(&[("x", "1"), ("y", "2")])));
        assert_eq!(template.matches("map://1,2,3"), None);
    }

    #[test]
    fn an_expression_continued_by_one_with_its_separator_matches_by_name_or_count() {
        let template = UriTemplate::parse("search://items{?q,limit}{&page}").unwrap();
        let values = template.matches("search://items?q=rust&limit=5&page=2").unwrap();
        assert_eq!(values.get("q").map(String::as_str), Some("rust"));
        assert_eq!(values.get("limit").map(String::as_str), Some("5"));
        assert_eq!(values.get("page").map(String::as_str), Some("2"));
        let values = template.matches("search://items?q=rust&page=2").unwrap();
        assert_eq!((values.get("limit"), values.get("page").map(String::as_str)), (None, Some("2")));
        assert_eq!(template.matches("search://items?q=rust&other=1"), None);
        assert_eq!(template.matches("search://items?q=rust&q=go"), None, "a variable named twice");
        let parameters = UriTemplate::parse("x://a{;p,q}{;r}").unwrap();
        let values = parameters.matches("x://a;p=1;q=2;r=3").unwrap();
        assert_eq!(values.len(), 3);
        let path = UriTemplate::parse("x://{/a,b}{/c}").unwrap();
        let values = path.matches("x:///1/2/3").unwrap();
        assert_eq!(values.get("c").map(String::as_str), Some("3"));
    }

    #[test]
    fn bad_templates_are_refused_with_a_reason() {
        for (template, reason) in [
            ("a://{id", "unclosed"),
            ("a://{}", "empty expression"),
            ("a://{id}{name}", "side by side"),
            ("a://{id:3}", "level-4"),
            ("a://{id}/{id}", "twice"),
            ("a://{bad name}", "invalid variable name"),
        ] {
            let err = UriTemplate::parse(template).unwrap_err();
            assert!(err.to_string().contains(reason), "{template}: {err}");
        }
    }

    #[test]
    fn matching_a_long_hostile_uri_is_linear() {
        let template = UriTemplate::parse("x://{+a}b{+c}d").unwrap();
        let uri = format!("x://{}", "b".repeat(MAX_URI_LEN - 10));
        // Every position is scanned once; this returns quickly with no match.
        assert_eq!(template.matches(&uri), None);
    }
}
