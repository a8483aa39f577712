//! Arguments that break one constraint of a tool's input schema at a time, each made from the
//! valid arguments: a value outside `enum` or `const`, past `minimum`/`maximum` (exclusive too),
//! off `multipleOf`, too short or long for `minLength`/`maxLength`, against `pattern`, a
//! checkable `format`, too few or many items, repeated items where `uniqueItems`, a `required`
//! member missing, an undeclared one where `additionalProperties` is false, a wrong type; in
//! nested objects and in an array's first item too. Each is confirmed to break the schema, and
//! to pass it once that one constraint is taken out, so that a tool which runs with it is
//! known to have ignored exactly that constraint.

use serde_json::{Value, json};

use crate::check::pattern::strings_matching;
use crate::check::schemas::{matches_schema, matches_schema_with_formats};

/// The most probes made for one tool.
const MAX_PROBES: usize = 40;
/// How deep nested objects and arrays are probed.
const MAX_DEPTH: usize = 3;

/// Arguments that break one constraint.
#[derive(Debug, Clone)]
pub(crate) struct Probe {
    pub(crate) arguments: Value,
    /// Where the value is, as `a.b[0]`.
    pub(crate) argument: String,
    /// The constraint broken, as the schema says it (`maximum 10`).
    pub(crate) constraint: String,
    /// The value that breaks it, short, for a report (`(left out)` for a missing member).
    pub(crate) shown: String,
    /// A `format`, which JSON Schema 2020-12 only asserts when a validator chooses to: a tool
    /// that accepts such a value is warned of, not failed.
    pub(crate) format_only: bool,
}

/// One step of a path into the arguments.
#[derive(Debug, Clone)]
enum Step {
    Key(String),
    Index(usize),
}

fn path_text(path: &[Step]) -> String {
    let mut text = String::new();
    for step in path {
        match step {
            Step::Key(key) if text.is_empty() => text.push_str(key),
            Step::Key(key) => {
                text.push('.');
                text.push_str(key);
            }
            Step::Index(index) => text.push_str(&format!("[{index}]")),
        }
    }
    text
}

fn value_at<'a>(mut value: &'a Value, path: &[Step]) -> Option<&'a Value> {
    for step in path {
        value = match step {
            Step::Key(key) => value.get(key)?,
            Step::Index(index) => value.get(index)?,
        };
    }
    Some(value)
}

/// `arguments` with the value at `path` replaced by `new` (`None` removes it).
fn with_value(arguments: &Value, path: &[Step], new: Option<Value>) -> Option<Value> {
    let mut arguments = arguments.clone();
    let (last, parent_path) = path.split_last()?;
    let mut parent = &mut arguments;
    for step in parent_path {
        parent = match step {
            Step::Key(key) => parent.get_mut(key)?,
            Step::Index(index) => parent.get_mut(index)?,
        };
    }
    match (last, new) {
        (Step::Key(key), Some(new)) => {
            parent.as_object_mut()?.insert(key.clone(), new);
        }
        (Step::Key(key), None) => {
            parent.as_object_mut()?.remove(key);
        }
        (Step::Index(index), Some(new)) => *parent.get_mut(index)? = new,
        (Step::Index(_), None) => return None,
    }
    Some(arguments)
}

/// The pointer a schema at `pointer` stands for, its local `$ref`s followed.
fn resolved(root: &Value, pointer: &str) -> Option<String> {
    let mut current = pointer.to_owned();
    for _ in 0..8 {
        match root.pointer(&current)?.get("$ref").and_then(Value::as_str) {
            Some(reference) => current = reference.strip_prefix('#')?.to_owned(),
            None => return Some(current),
        }
    }
    None
}

fn escape(key: &str) -> String {
    key.replace('~', "~0").replace('/', "~1")
}

/// How a constraint is taken out of a schema, to confirm a probe breaks only it.
#[derive(Clone, Copy)]
enum Relax<'a> {
    /// The keyword removed.
    Remove(&'a str),
    /// A name taken out of `required`.
    Required(&'a str),
    /// `additionalProperties` allowed.
    Additional,
}

struct Prober<'a> {
    root: &'a Value,
    valid: &'a Value,
    made: Vec<Probe>,
}

impl Prober<'_> {
    /// Keeps `arguments` when they break the schema and pass it with the constraint at
    /// `pointer` relaxed.
    fn offer(&mut self, pointer: &str, relax: Relax<'_>, path: &[Step], arguments: Option<Value>, constraint: String) {
        let Some(arguments) = arguments else { return };
        if self.made.len() >= MAX_PROBES {
            return;
        }
        let mut relaxed = self.root.clone();
        let Some(schema) = relaxed.pointer_mut(pointer).and_then(Value::as_object_mut) else { return };
        match relax {
            Relax::Remove(keyword) => {
                schema.remove(keyword);
            }
            Relax::Required(name) => {
                if let Some(Value::Array(required)) = schema.get_mut("required") {
                    required.retain(|known| known != name);
                }
            }
            Relax::Additional => {
                schema.insert("additionalProperties".to_owned(), Value::Bool(true));
            }
        }
        let format_only = matches!(relax, Relax::Remove("format"));
        let broken = if format_only {
            matches_schema(self.root, &arguments).is_ok() && matches_schema_with_formats(self.root, &arguments).is_err()
        } else {
            matches_schema(self.root, &arguments).is_err() && matches_schema(&relaxed, &arguments).is_ok()
        };
        if broken {
            let shown = value_at(&arguments, path).map_or_else(
                || "(left out)".to_owned(),
                |value| crate::render::cut(&value.to_string(), 60).to_string(),
            );
            self.made.push(Probe { arguments, argument: path_text(path), constraint, shown, format_only });
        }
    }

    fn object(&mut self, pointer: &str, path: &[Step], depth: usize) {
        let Some(schema) = self.root.pointer(pointer) else { return };
        if !value_at(self.valid, path).is_some_and(Value::is_object) {
            return;
        }
        let required: Vec<String> = schema
            .get("required")
            .and_then(Value::as_array)
            .map(|names| names.iter().filter_map(Value::as_str).map(str::to_owned).collect())
            .unwrap_or_default();
        for name in &required {
            let at = [path, &[Step::Key(name.clone())]].concat();
            let without = with_value(self.valid, &at, None);
            self.offer(pointer, Relax::Required(name), &at, without, format!("required `{name}`"));
        }
        if schema.get("additionalProperties") == Some(&Value::Bool(false)) {
            let at = [path, &[Step::Key("wharf_check_undeclared".to_owned())]].concat();
            let extra = with_value(self.valid, &at, Some(json!(true)));
            self.offer(pointer, Relax::Additional, &at, extra, "additionalProperties: false".to_owned());
        }
        let properties: Vec<String> = schema
            .get("properties")
            .and_then(Value::as_object)
            .map(|known| known.keys().cloned().collect())
            .unwrap_or_default();
        for name in properties.iter().take(24) {
            let Some(property) = resolved(self.root, &format!("{pointer}/properties/{}", escape(name))) else {
                continue;
            };
            let at = [path, &[Step::Key(name.clone())]].concat();
            // An optional member the valid arguments leave out is probed on its own.
            let mut prober_valid = None;
            if value_at(self.valid, &at).is_none() {
                let Some(value) = crate::check::generate::value_for(self.root, &property) else { continue };
                prober_valid = with_value(self.valid, &at, Some(value));
                if prober_valid.as_ref().is_none_or(|made| matches_schema(self.root, made).is_err()) {
                    continue;
                }
            }
            match prober_valid {
                Some(made) => {
                    let mut inner = Prober { root: self.root, valid: &made, made: std::mem::take(&mut self.made) };
                    inner.value(&property, &at, depth);
                    self.made = inner.made;
                }
                None => self.value(&property, &at, depth),
            }
        }
    }

    fn value(&mut self, pointer: &str, path: &[Step], depth: usize) {
        let Some(schema) = self.root.pointer(pointer).cloned() else { return };
        let Some(base) = value_at(self.valid, path).cloned() else { return };
        let number = |key: &str| schema.get(key).and_then(Value::as_f64);
        let integer = schema.get("type") == Some(&json!("integer"));
        // Past a bound by one step of `multipleOf` where there is one, so that only the bound
        // is broken.
        let step = number("multipleOf").unwrap_or(if integer { 1.0 } else { 0.5 });
        let put = |value: Value| with_value(self.valid, path, Some(value));
        let as_number = |value: f64| if integer { json!(value as i64) } else { json!(value) };
        if let Some(kind) = schema.get("type").and_then(Value::as_str) {
            let wrong = match kind {
                "string" => json!(12345),
                "integer" | "number" => json!("not a number"),
                "boolean" => json!("not a boolean"),
                "array" => json!({"not": "an array"}),
                "object" => json!("not an object"),
                _ => Value::Null,
            };
            self.offer(pointer, Relax::Remove("type"), path, put(wrong), format!("type {kind}"));
        }
        if let Some(options) = schema.get("enum").and_then(Value::as_array) {
            let outside = if options.iter().all(Value::is_number) {
                let highest = options.iter().filter_map(Value::as_f64).fold(f64::MIN, f64::max);
                as_number(highest + 1.0)
            } else {
                json!("wharf-check-not-in-enum")
            };
            self.offer(pointer, Relax::Remove("enum"), path, put(outside), "enum".to_owned());
        }
        if let Some(constant) = schema.get("const") {
            let other = if constant.is_string() { json!("wharf-check-not-the-const") } else { json!("not the const") };
            self.offer(pointer, Relax::Remove("const"), path, put(other), "const".to_owned());
        }
        for (key, value) in [
            ("minimum", number("minimum").map(|low| low - step)),
            ("exclusiveMinimum", number("exclusiveMinimum")),
            ("maximum", number("maximum").map(|high| high + step)),
            ("exclusiveMaximum", number("exclusiveMaximum")),
        ] {
            if let Some(value) = value {
                let bound = schema.get(key).cloned().unwrap_or_default();
                self.offer(pointer, Relax::Remove(key), path, put(as_number(value)), format!("{key} {bound}"));
            }
        }
        if let (Some(multiple), Some(base_number)) = (number("multipleOf"), base.as_f64())
            && !(integer && multiple <= 1.0)
        {
            let off = if integer { base_number + 1.0 } else { base_number + multiple / 2.0 };
            let bound = schema.get("multipleOf").cloned().unwrap_or_default();
            self.offer(pointer, Relax::Remove("multipleOf"), path, put(as_number(off)), format!("multipleOf {bound}"));
        }
        if let Some(text) = base.as_str() {
            self.strings(pointer, &schema, path, text);
        }
        if let Some(items) = base.as_array() {
            self.arrays(pointer, &schema, path, items, depth);
        }
        if base.is_object() && depth < MAX_DEPTH && schema.get("properties").is_some() {
            self.object(pointer, path, depth + 1);
        }
    }

    fn strings(&mut self, pointer: &str, schema: &Value, path: &[Step], text: &str) {
        let put = |value: String| with_value(self.valid, path, Some(Value::String(value)));
        let count = text.chars().count();
        if let Some(least) = schema.get("minLength").and_then(Value::as_u64).filter(|least| *least > 0) {
            let short: String = text.chars().take(least as usize - 1).collect();
            self.offer(pointer, Relax::Remove("minLength"), path, put(short), format!("minLength {least}"));
        }
        if let Some(most) = schema.get("maxLength").and_then(Value::as_u64) {
            let longer = schema
                .get("pattern")
                .and_then(Value::as_str)
                .and_then(|pattern| strings_matching(pattern).ok())
                .and_then(|made| made.into_iter().find(|made| made.chars().count() as u64 > most));
            let long = longer.unwrap_or_else(|| {
                let mut long = text.to_owned();
                long.extend(std::iter::repeat_n('x', (most as usize + 1).saturating_sub(count)));
                long
            });
            self.offer(pointer, Relax::Remove("maxLength"), path, put(long), format!("maxLength {most}"));
        }
        if let Some(pattern) = schema.get("pattern").and_then(Value::as_str) {
            // The valid text's length kept, so that only the pattern is broken.
            let same_length = |c: char| std::iter::repeat_n(c, count.max(1)).collect::<String>();
            let candidates =
                [same_length('!'), text.to_uppercase(), same_length('0'), same_length('a'), same_length(' ')];
            let fixed = ["wharf check ✗", "!", "a", ""].map(str::to_owned);
            for candidate in candidates.into_iter().chain(fixed) {
                let before = self.made.len();
                let constraint = format!("pattern {pattern}");
                self.offer(pointer, Relax::Remove("pattern"), path, put(candidate), constraint);
                if self.made.len() > before {
                    break;
                }
            }
        }
        if let Some(format) = schema.get("format").and_then(Value::as_str) {
            let wrong = match format {
                "email" => "not-an-email",
                "uri" | "iri" => "not a uri",
                "date" => "2026-13-45",
                "date-time" => "yesterday at noon",
                "time" => "25:99",
                "uuid" => "not-a-uuid",
                "ipv4" => "999.1.1.1",
                "ipv6" => "not:an:ipv6::address::",
                "hostname" => "-not a host-",
                _ => return,
            };
            self.offer(pointer, Relax::Remove("format"), path, put(wrong.to_owned()), format!("format {format}"));
        }
    }

    fn arrays(&mut self, pointer: &str, schema: &Value, path: &[Step], items: &[Value], depth: usize) {
        let put = |value: Vec<Value>| with_value(self.valid, path, Some(Value::Array(value)));
        let item = items.first().cloned().or_else(|| {
            let items_pointer = resolved(self.root, &format!("{pointer}/items"))?;
            crate::check::generate::value_for(self.root, &items_pointer)
        });
        if let Some(least) = schema.get("minItems").and_then(Value::as_u64).filter(|least| *least > 0) {
            let fewer = items[..(least as usize - 1).min(items.len())].to_vec();
            self.offer(pointer, Relax::Remove("minItems"), path, put(fewer), format!("minItems {least}"));
        }
        if let (Some(most), Some(item)) = (schema.get("maxItems").and_then(Value::as_u64), &item)
            && most < 64
        {
            // Items that differ, so that `uniqueItems` holds while `maxItems` does not.
            let mut more = items.to_vec();
            while more.len() as u64 <= most {
                more.push(variant(item, more.len()));
            }
            self.offer(pointer, Relax::Remove("maxItems"), path, put(more), format!("maxItems {most}"));
        }
        if schema.get("uniqueItems") == Some(&Value::Bool(true))
            && let Some(item) = &item
        {
            let mut repeated = items.to_vec();
            repeated.push(item.clone());
            if repeated.len() < 2 {
                repeated.push(item.clone());
            }
            self.offer(pointer, Relax::Remove("uniqueItems"), path, put(repeated), "uniqueItems".to_owned());
        }
        if !items.is_empty()
            && depth < MAX_DEPTH
            && let Some(items_pointer) = resolved(self.root, &format!("{pointer}/items"))
        {
            let at = [path, &[Step::Index(0)]].concat();
            self.value(&items_pointer, &at, depth + 1);
        }
    }
}

/// `item`, made different by `n` where its type allows.
fn variant(item: &Value, n: usize) -> Value {
    match item {
        Value::String(text) => Value::String(format!("{text}{n}")),
        Value::Number(number) if number.is_i64() => json!(number.as_i64().unwrap_or(0) + n as i64),
        Value::Number(number) => json!(number.as_f64().unwrap_or(0.0) + n as f64),
        other => other.clone(),
    }
}

/// Probes of `schema`'s constraints, each from `valid` (arguments the schema accepts) with one
/// constraint broken; at most 40.
pub(crate) fn probes(schema: &Value, valid: &Value) -> Vec<Probe> {
    let Some(root_pointer) = resolved(schema, "") else { return Vec::new() };
    let mut prober = Prober { root: schema, valid, made: Vec::new() };
    prober.object(&root_pointer, &[], 0);
    prober.made
}

#[cfg(test)]
mod tests {
    use super::*;

    fn constraints(schema: &Value, valid: &Value) -> Vec<String> {
        probes(schema, valid).into_iter().map(|probe| format!("{}: {}", probe.argument, probe.constraint)).collect()
    }

    #[test]
    fn each_constraint_is_broken_alone() {
        let schema = json!({"type": "object", "additionalProperties": false, "required": ["color", "level", "name", "tags"],
            "properties": {
                "color": {"type": "string", "enum": ["red", "green"]},
                "level": {"type": "integer", "minimum": 0, "maximum": 10, "multipleOf": 2},
                "name": {"type": "string", "minLength": 2, "maxLength": 5, "pattern": "^[a-z]+$"},
                "tags": {"type": "array", "items": {"type": "string"}, "minItems": 1, "maxItems": 2, "uniqueItems": true},
                "mail": {"type": "string", "format": "email"}}});
        let valid = json!({"color": "red", "level": 2, "name": "ab", "tags": ["x"]});
        let made = constraints(&schema, &valid);
        for wanted in [
            "color: required `color`",
            "wharf_check_undeclared: additionalProperties: false",
            "color: enum",
            "level: minimum 0",
            "level: maximum 10",
            "level: multipleOf 2",
            "level: type integer",
            "name: minLength 2",
            "name: maxLength 5",
            "name: pattern ^[a-z]+$",
            "tags: minItems 1",
            "tags: maxItems 2",
            "tags: uniqueItems",
            "tags[0]: type string",
            "mail: type string",
        ] {
            assert!(made.iter().any(|made| made == wanted), "{wanted} not among {made:#?}");
        }
        assert!(made.iter().any(|made| made == "mail: format email"), "an optional member is probed: {made:#?}");
        for probe in probes(&schema, &valid) {
            assert!(matches_schema(&schema, &probe.arguments).is_err() || probe.format_only, "{probe:?}");
        }
    }

    #[test]
    fn nested_objects_and_refs_are_probed() {
        let schema = json!({"type": "object", "required": ["where"], "properties": {"where": {"$ref": "#/$defs/place"}},
            "$defs": {"place": {"type": "object", "required": ["lat"], "properties": {"lat": {"type": "number", "minimum": -90, "maximum": 90}}}}});
        let made = constraints(&schema, &json!({"where": {"lat": 1}}));
        assert!(made.contains(&"where.lat: maximum 90".to_owned()), "{made:#?}");
        assert!(made.contains(&"where.lat: required `lat`".to_owned()), "{made:#?}");
    }
}
