//! `uri_template`: the RFC 6570 matcher, which reads a URI back into a template's variables
//! without backtracking. Held to two properties: a URI expanded from values it can tell apart
//! matches back to exactly those values, and no URI (up to the 64 KiB it reads) takes more
//! than a few milliseconds, whatever the template's literals (long, repetitive, prefixes of
//! one another) and the URI (their fragments repeated).

use std::collections::BTreeMap;
use std::time::{Duration, Instant};

use serde_json::{Value, json};
use wharf_server::UriTemplate;

use crate::rng::Rng;
use crate::target::Target;

/// The target.
pub(super) struct UriTemplates;

/// The longest a match may take, unless walking the URI's characters once takes more than a
/// twentieth of that (a debug build, a busy machine): then twenty such walks.
const LIMIT: Duration = Duration::from_millis(5);

/// How many walks over the URI's characters a match may take, at most.
const WALKS: u32 = 20;

/// The longest URI matched (beyond it, `matches` refuses at once).
const MAX_URI: usize = 64 * 1024;

const OPERATORS: &[&str] = &["", "", "+", "#", ".", "/", ";", "?", "&"];

/// Literal characters: none of them ever appears in an expanded value below.
const LITERAL_CHARS: &[&str] = &["x", "y", "z", ":", "/", "-", "_", "~", "!", "@", "://", "x/"];

/// The pieces values are made of: unreserved characters no literal uses, and characters every
/// operator percent-encodes.
const VALUE_PIECES: &[&str] = &["a", "b", "c", "0", "1", " ", "\u{e9}", "\u{1f600}"];

/// Pieces for operators that do not encode reserved characters, which could not be told from
/// literals: `%` too, since `%41` passes through them as it is.
const SIMPLE_ONLY_PIECES: &[&str] = &["%", "/", "?", "#", "&", "=", ",", "+"];

impl Target for UriTemplates {
    fn name(&self) -> &'static str {
        "uri_template"
    }

    fn generate(&self, rng: &mut Rng) -> Vec<u8> {
        let (template, operators) = template(rng);
        let case = if rng.one_in(2) {
            let values: BTreeMap<String, String> = operators
                .iter()
                .enumerate()
                .map(|(index, operator)| (format!("v{index}"), value(rng, operator)))
                .collect();
            json!({ "template": template, "values": values })
        } else {
            json!({ "template": template, "uri": hostile_uri(rng, &template) })
        };
        case.to_string().into_bytes()
    }

    fn check(&self, case: &[u8]) -> Result<&'static str, String> {
        let Ok(case) = serde_json::from_slice::<Value>(case) else { return Ok("unreadable case") };
        let Some(source) = case["template"].as_str() else { return Ok("unreadable case") };
        let Ok(template) = UriTemplate::parse(source) else { return Ok("template refused") };
        if let Ok(values) = serde_json::from_value::<BTreeMap<String, String>>(case["values"].clone()) {
            let uri = template.expand(&values);
            let matched = template.matches(&uri);
            if matched.as_ref() != Some(&values) {
                return Err(format!(
                    "an expanded URI does not match back to its values\ntemplate: {source}\nvalues: {values:?}\nuri: {uri}\nmatched: {matched:?}"
                ));
            }
            return Ok("round trip");
        }
        let Some(uri) = case["uri"].as_str() else { return Ok("unreadable case") };
        let (matched, took, limit) = timed_match(&template, uri);
        if took > limit && uri.len() <= MAX_URI {
            return Err(format!(
                "matching took too long\ntemplate: {source}\nuri: {} bytes, starting {:?}\ntook: {took:?} (limit {limit:?})",
                uri.len(),
                uri.chars().take(80).collect::<String>()
            ));
        }
        let variables = template.variables();
        if let Some(values) = &matched
            && !values.keys().all(|name| variables.contains(&name.as_str()))
        {
            return Err(format!("a match names a variable the template lacks\ntemplate: {source}\nuri: {uri}"));
        }
        Ok(if matched.is_some() { "hostile: matched" } else { "hostile: no match" })
    }
}

/// Matches, timing it, with the time it may take; a slow first try is repeated twice and the
/// fastest kept, so that a pause of the machine's is not taken for the matcher's.
fn timed_match(template: &UriTemplate, uri: &str) -> (Option<BTreeMap<String, String>>, Duration, Duration) {
    let mut fastest = Duration::MAX;
    let mut limit = LIMIT;
    let mut matched = None;
    for _ in 0..3 {
        let started = Instant::now();
        matched = template.matches(uri);
        fastest = fastest.min(started.elapsed());
        if fastest <= limit {
            break;
        }
        let started = Instant::now();
        std::hint::black_box(uri.chars().filter(char::is_ascii_alphanumeric).count());
        limit = limit.max(started.elapsed() * WALKS);
    }
    (matched, fastest, limit)
}

/// A template of literals and expressions (now and then two side by side, which the parser
/// refuses), and the operator of each variable `v0`, `v1`, ... in order.
fn template(rng: &mut Rng) -> (String, Vec<&'static str>) {
    let mut template = String::from(*rng.pick(&["", "x://", "file:///", "y:"]));
    let mut operators = Vec::new();
    for _ in 0..1 + rng.below(4) {
        if template.ends_with('}') && !rng.one_in(20) {
            template.push_str(&literal(rng));
        }
        let operator = *rng.pick(OPERATORS);
        template.push('{');
        template.push_str(operator);
        let variables = 1 + rng.below(3);
        for index in 0..variables {
            if index > 0 {
                template.push(',');
            }
            template.push_str(&format!("v{}", operators.len()));
            operators.push(operator);
        }
        template.push('}');
        // A literal that begins with the separator of the expression before it ends that
        // expression at its first separator: the matcher never backtracks, as documented.
        if variables > 1 && operator == "/" {
            template.push('x');
        }
        if rng.one_in(2) {
            template.push_str(&literal(rng));
        }
    }
    (template, operators)
}

/// A literal: short mostly, now and then long and repetitive.
fn literal(rng: &mut Rng) -> String {
    if rng.one_in(6) {
        let unit: String = (0..1 + rng.below(3)).map(|_| *rng.pick(LITERAL_CHARS)).collect();
        let times = 1 + if rng.one_in(4) { rng.below(3000) } else { rng.below(300) };
        let mut long = unit.repeat(times);
        let last = *rng.pick(LITERAL_CHARS);
        long.push_str(last);
        return long;
    }
    (0..1 + rng.below(4)).map(|_| *rng.pick(LITERAL_CHARS)).collect()
}

/// A value the operator's expansion keeps apart from the template's literals; never empty.
fn value(rng: &mut Rng, operator: &str) -> String {
    let encodes_reserved = !matches!(operator, "+" | "#");
    (0..1 + rng.below(6))
        .map(
            |_| {
                if encodes_reserved && rng.one_in(4) { *rng.pick(SIMPLE_ONLY_PIECES) } else { *rng.pick(VALUE_PIECES) }
            },
        )
        .collect()
}

/// A URI built to make a matcher work: the template's own text with a fragment of it repeated
/// up to (and now and then just past) the longest URI matched.
fn hostile_uri(rng: &mut Rng, template: &str) -> String {
    let chars: Vec<char> = template.chars().filter(|c| !matches!(c, '{' | '}')).collect();
    if chars.is_empty() {
        return "a".repeat(MAX_URI);
    }
    let start = rng.below(chars.len());
    let end = (start + 1 + rng.below(8)).min(chars.len());
    let fragment: String = chars[start..end].iter().collect();
    let prefix: String = chars[..start].iter().collect();
    let target_len = if rng.one_in(10) { MAX_URI + 1 } else { MAX_URI - rng.below(64) };
    let mut uri = prefix;
    while uri.len() + fragment.len() <= target_len {
        uri.push_str(&fragment);
    }
    if rng.one_in(2) {
        let tail: String = chars[start..].iter().collect();
        uri.push_str(&tail);
    }
    uri
}
