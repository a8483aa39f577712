//! A value checked against a schema, keyword by keyword, as the drafts define them: the
//! assertions, the applicators with the annotations `unevaluated*` needs, and the references
//! (`$ref`, `$dynamicRef`, `$recursiveRef`) followed through the registry.

use std::collections::HashSet;
use std::fmt::Write as _;
use std::sync::Arc;

use serde_json::{Map, Value};

use crate::draft::Draft;
use crate::error::{ErrorDetail, ValidationError};
use crate::format;
use crate::path::{InstancePath, push_segment};
use crate::pattern;
use crate::registry::{Location, Registry, Scope};
use crate::uri::{resolve, split_fragment};
use crate::value::{compare, equal, has_type, is_multiple_of, length};

/// How many references may be followed inside one another: past it, a schema that refers to
/// itself without consuming the value is refused instead of recursing without end.
const MAX_DEPTH: usize = 256;

/// How much of a value a message quotes.
const QUOTED: usize = 120;

/// What the keywords of a valid schema evaluated of an object or an array, for
/// `unevaluatedProperties` and `unevaluatedItems` (kept only when some schema has them).
#[derive(Debug, Default)]
struct Evaluated<'i> {
    all_properties: bool,
    properties: HashSet<&'i str>,
    all_items: bool,
    /// Items `0..items` were evaluated.
    items: usize,
    item_indices: HashSet<usize>,
}

impl<'i> Evaluated<'i> {
    fn merge(&mut self, other: Evaluated<'i>) {
        self.all_properties |= other.all_properties;
        self.properties.extend(other.properties);
        self.all_items |= other.all_items;
        self.items = self.items.max(other.items);
        self.item_indices.extend(other.item_indices);
    }

    fn has_property(&self, name: &str) -> bool {
        self.all_properties || self.properties.contains(name)
    }

    fn has_item(&self, index: usize) -> bool {
        self.all_items || index < self.items || self.item_indices.contains(&index)
    }
}

/// One check of a value, with the errors it found.
pub(crate) struct Evaluator<'v> {
    registry: &'v Registry,
    formats: bool,
    /// Errors are kept at the top level; inside `anyOf`, `not`, `if`, ... only validity counts.
    collecting: bool,
    limit: usize,
    pub(crate) errors: Vec<ValidationError>,
    /// The document and JSON Pointer of the schema being evaluated.
    document: usize,
    pointer: String,
    /// The schema resources entered, outermost first (the dynamic scope).
    dynamic: Vec<Arc<str>>,
    depth: usize,
}

impl<'v> Evaluator<'v> {
    pub(crate) fn new(registry: &'v Registry, formats: bool, limit: usize) -> Evaluator<'v> {
        Evaluator {
            registry,
            formats,
            collecting: limit > 0,
            limit,
            errors: Vec::new(),
            document: 0,
            pointer: String::new(),
            dynamic: Vec::new(),
            depth: 0,
        }
    }

    /// Checks `instance` against the schema at `location`, in `scope`.
    pub(crate) fn root(&mut self, location: &Location, scope: Scope, instance: &Value) -> bool {
        let Some(schema) = self.registry.get(location) else { return false };
        self.document = location.document;
        self.pointer = location.pointer.clone();
        self.dynamic.push(scope.base.clone());
        self.inside(schema, &scope, instance, &InstancePath::Root).0
    }

    /// Records an error (when errors are kept) and answers false.
    fn fail(
        &mut self,
        keyword: &'static str,
        instance: &Value,
        path: &InstancePath<'_>,
        message: impl FnOnce() -> String,
    ) -> bool {
        self.fail_allowing(keyword, instance, path, message, None)
    }

    fn fail_allowing(
        &mut self,
        keyword: &'static str,
        instance: &Value,
        path: &InstancePath<'_>,
        message: impl FnOnce() -> String,
        allowed: Option<&Value>,
    ) -> bool {
        if self.collecting && self.errors.len() < self.limit {
            let mut schema_location = self.pointer.clone();
            if keyword != "false" {
                push_segment(&mut schema_location, keyword);
            }
            self.errors.push(ValidationError::new(ErrorDetail {
                keyword,
                instance: instance.clone(),
                instance_path: path.pointer(),
                schema_location,
                message: message(),
                allowed: allowed.cloned(),
            }));
        }
        false
    }

    /// True when no more errors are wanted: the rest of a schema can be skipped.
    fn done(&self, valid: bool) -> bool {
        !valid && (!self.collecting || self.errors.len() >= self.limit)
    }

    /// Evaluates `schema`, a child of the schema whose scope is `parent`, at the child's place
    /// `segments` (pushed onto the schema pointer).
    fn child<'i>(
        &mut self,
        segments: &[&str],
        schema: &'v Value,
        parent: &Scope,
        instance: &'i Value,
        path: &InstancePath<'_>,
    ) -> (bool, Evaluated<'i>) {
        let length = self.pointer.len();
        for segment in segments {
            push_segment(&mut self.pointer, segment);
        }
        let scope = match schema {
            Value::Object(object) => inner_scope(object, parent),
            _ => parent.clone(),
        };
        let outcome = self.inside(schema, &scope, instance, path);
        self.pointer.truncate(length);
        outcome
    }

    /// Evaluates `child` for validity alone, its errors not kept.
    fn quietly<'i>(
        &mut self,
        segments: &[&str],
        schema: &'v Value,
        parent: &Scope,
        instance: &'i Value,
        path: &InstancePath<'_>,
    ) -> (bool, Evaluated<'i>) {
        let collecting = std::mem::replace(&mut self.collecting, false);
        let outcome = self.child(segments, schema, parent, instance, path);
        self.collecting = collecting;
        outcome
    }

    /// Evaluates `schema`, whose own scope is `scope`.
    fn inside<'i>(
        &mut self,
        schema: &'v Value,
        scope: &Scope,
        instance: &'i Value,
        path: &InstancePath<'_>,
    ) -> (bool, Evaluated<'i>) {
        match schema {
            // `true` has no keywords, so it evaluates nothing as `unevaluated*` counts it.
            Value::Bool(true) => (true, Evaluated::default()),
            Value::Bool(false) => {
                let valid =
                    self.fail("false", instance, path, || format!("false schema does not allow {}", quoted(instance)));
                (valid, Evaluated::default())
            }
            Value::Object(object) => {
                let entered = self.dynamic.last().is_none_or(|top| **top != *scope.base);
                if entered {
                    self.dynamic.push(scope.base.clone());
                }
                let outcome = self.object(object, scope, instance, path);
                if entered {
                    self.dynamic.pop();
                }
                outcome
            }
            // Not a schema: the meta-schema refuses it; alone it allows everything.
            _ => (true, Evaluated::default()),
        }
    }

    fn object<'i>(
        &mut self,
        schema: &'v Map<String, Value>,
        scope: &Scope,
        instance: &'i Value,
        path: &InstancePath<'_>,
    ) -> (bool, Evaluated<'i>) {
        let mut evaluated = Evaluated::default();
        if scope.draft.ref_hides_siblings()
            && let Some(Value::String(reference)) = schema.get("$ref")
        {
            return self.reference("$ref", reference, scope, instance, path);
        }
        let mut valid = true;
        for keyword in ["$ref", "$dynamicRef", "$recursiveRef"] {
            if let Some(Value::String(reference)) = schema.get(keyword) {
                let (ok, inner) = match keyword {
                    "$ref" => self.reference("$ref", reference, scope, instance, path),
                    "$dynamicRef" if scope.draft == Draft::Draft202012 => {
                        self.dynamic_reference(reference, scope, instance, path)
                    }
                    "$recursiveRef" if scope.draft == Draft::Draft201909 => {
                        self.recursive_reference(reference, scope, instance, path)
                    }
                    _ => continue,
                };
                valid &= ok;
                if ok {
                    evaluated.merge(inner);
                }
                if self.done(valid) {
                    return (false, evaluated);
                }
            }
        }
        valid &= self.assertions(schema, scope, instance, path);
        if self.done(valid) {
            return (false, evaluated);
        }
        valid &= self.in_place(schema, scope, instance, path, &mut evaluated);
        if self.done(valid) {
            return (false, evaluated);
        }
        match instance {
            Value::Object(object) => valid &= self.properties(schema, scope, object, instance, path, &mut evaluated),
            Value::Array(items) => valid &= self.items(schema, scope, items, instance, path, &mut evaluated),
            _ => {}
        }
        if !valid {
            evaluated = Evaluated::default();
        }
        (valid, evaluated)
    }

    /// Follows `$ref` to its target.
    fn reference<'i>(
        &mut self,
        keyword: &'static str,
        reference: &str,
        scope: &Scope,
        instance: &'i Value,
        path: &InstancePath<'_>,
    ) -> (bool, Evaluated<'i>) {
        let uri = resolve(&scope.base, reference);
        self.follow(keyword, &uri, scope.draft, instance, path)
    }

    fn follow<'i>(
        &mut self,
        keyword: &'static str,
        uri: &str,
        draft: Draft,
        instance: &'i Value,
        path: &InstancePath<'_>,
    ) -> (bool, Evaluated<'i>) {
        let Some(location) = self.registry.locate(uri) else {
            return (
                self.fail(keyword, instance, path, || format!("`{uri}` cannot be resolved")),
                Evaluated::default(),
            );
        };
        if self.depth >= MAX_DEPTH {
            let message = || format!("references followed deeper than {MAX_DEPTH} schemas, at `{uri}`");
            return (self.fail(keyword, instance, path, message), Evaluated::default());
        }
        let Some(target) = self.registry.get(&location) else { return (false, Evaluated::default()) };
        let scope = self.registry.scope(&location, uri, draft);
        let document = std::mem::replace(&mut self.document, location.document);
        let pointer = std::mem::replace(&mut self.pointer, location.pointer);
        self.depth += 1;
        let outcome = self.inside(target, &scope, instance, path);
        self.depth -= 1;
        self.document = document;
        self.pointer = pointer;
        outcome
    }

    /// `$dynamicRef` (2020-12): to a `$dynamicAnchor`, the outermost resource of the dynamic
    /// scope that has one of the same name; else as `$ref`.
    fn dynamic_reference<'i>(
        &mut self,
        reference: &str,
        scope: &Scope,
        instance: &'i Value,
        path: &InstancePath<'_>,
    ) -> (bool, Evaluated<'i>) {
        let uri = resolve(&scope.base, reference);
        let (resource, name) = split_fragment(&uri);
        let mut target = uri.clone();
        if !name.is_empty()
            && !name.starts_with('/')
            && self.registry.is_dynamic_anchor(resource, &name)
            && let Some(outermost) = self.dynamic.iter().find(|base| self.registry.is_dynamic_anchor(base, &name))
        {
            target = format!("{outermost}#{name}");
        }
        self.follow("$dynamicRef", &target, scope.draft, instance, path)
    }

    /// `$recursiveRef` (2019-09): when its target has `"$recursiveAnchor": true`, the outermost
    /// resource of the dynamic scope that has it too.
    fn recursive_reference<'i>(
        &mut self,
        reference: &str,
        scope: &Scope,
        instance: &'i Value,
        path: &InstancePath<'_>,
    ) -> (bool, Evaluated<'i>) {
        let uri = resolve(&scope.base, reference);
        let (resource, _) = split_fragment(&uri);
        let mut target = uri.clone();
        if self.registry.is_recursive_anchor(resource)
            && let Some(outermost) = self.dynamic.iter().find(|base| self.registry.is_recursive_anchor(base))
        {
            target = outermost.to_string();
        }
        self.follow("$recursiveRef", &target, scope.draft, instance, path)
    }

    /// The keywords that test the value itself.
    fn assertions(
        &mut self,
        schema: &'v Map<String, Value>,
        scope: &Scope,
        instance: &Value,
        path: &InstancePath<'_>,
    ) -> bool {
        let mut valid = true;
        if let Some(expected) = schema.get("type") {
            let ok = match expected {
                Value::String(name) => has_type(instance, name),
                Value::Array(names) => {
                    names.iter().any(|name| name.as_str().is_some_and(|name| has_type(instance, name)))
                }
                _ => true,
            };
            if !ok {
                valid = self.fail("type", instance, path, || {
                    format!("{} is not of type {}", quoted(instance), listed(expected, "or"))
                });
            }
        }
        if let Some(Value::Array(options)) = schema.get("enum")
            && !options.iter().any(|option| equal(option, instance))
        {
            let allowed = schema.get("enum");
            let message =
                || format!("{} is not one of {}", quoted(instance), listed(&Value::Array(options.clone()), "or"));
            valid = self.fail_allowing("enum", instance, path, message, allowed);
        }
        if scope.draft >= Draft::Draft6
            && let Some(expected) = schema.get("const")
            && !equal(expected, instance)
        {
            valid = self.fail("const", instance, path, || format!("{} is not {}", quoted(instance), quoted(expected)));
        }
        if self.done(valid) {
            return false;
        }
        match instance {
            Value::Number(number) => valid &= self.number(schema, scope, number, instance, path),
            Value::String(text) => valid &= self.string(schema, text, instance, path),
            _ => {}
        }
        valid
    }

    fn number(
        &mut self,
        schema: &Map<String, Value>,
        scope: &Scope,
        number: &serde_json::Number,
        instance: &Value,
        path: &InstancePath<'_>,
    ) -> bool {
        use std::cmp::Ordering::{Equal, Greater, Less};
        let mut valid = true;
        let bound = |keyword: &str| schema.get(keyword).and_then(Value::as_number);
        let draft4 = scope.draft == Draft::Draft4;
        let flag = |keyword: &str| schema.get(keyword) == Some(&Value::Bool(true));
        if let Some(maximum) = bound("maximum") {
            let exclusive = draft4 && flag("exclusiveMaximum");
            let ok = match compare(number, maximum) {
                Some(Less) => true,
                Some(Equal) => !exclusive,
                _ => false,
            };
            if !ok {
                valid = self.fail("maximum", instance, path, || {
                    let or_equal = if exclusive { "or equal to " } else { "" };
                    format!("{instance} is greater than {or_equal}the maximum of {maximum}")
                });
            }
        }
        if let Some(minimum) = bound("minimum") {
            let exclusive = draft4 && flag("exclusiveMinimum");
            let ok = match compare(number, minimum) {
                Some(Greater) => true,
                Some(Equal) => !exclusive,
                _ => false,
            };
            if !ok {
                valid = self.fail("minimum", instance, path, || {
                    let or_equal = if exclusive { "or equal to " } else { "" };
                    format!("{instance} is less than {or_equal}the minimum of {minimum}")
                });
            }
        }
        if !draft4 {
            if let Some(maximum) = bound("exclusiveMaximum")
                && compare(number, maximum) != Some(Less)
            {
                valid = self.fail("exclusiveMaximum", instance, path, || {
                    format!("{instance} is greater than or equal to the exclusive maximum of {maximum}")
                });
            }
            if let Some(minimum) = bound("exclusiveMinimum")
                && compare(number, minimum) != Some(Greater)
            {
                valid = self.fail("exclusiveMinimum", instance, path, || {
                    format!("{instance} is less than or equal to the exclusive minimum of {minimum}")
                });
            }
        }
        if let Some(divisor) = bound("multipleOf")
            && divisor.as_f64().is_some_and(|divisor| divisor > 0.0)
            && !is_multiple_of(number, divisor)
        {
            valid = self.fail("multipleOf", instance, path, || format!("{instance} is not a multiple of {divisor}"));
        }
        valid
    }

    fn string(&mut self, schema: &Map<String, Value>, text: &str, instance: &Value, path: &InstancePath<'_>) -> bool {
        let mut valid = true;
        let count = |keyword: &str| schema.get(keyword).and_then(as_count);
        if let Some(maximum) = count("maxLength")
            && length(text) > maximum
        {
            valid = self.fail("maxLength", instance, path, || {
                format!("{} is longer than {maximum} characters", quoted(instance))
            });
        }
        if let Some(minimum) = count("minLength")
            && length(text) < minimum
        {
            valid = self.fail("minLength", instance, path, || {
                format!("{} is shorter than {minimum} characters", quoted(instance))
            });
        }
        if let Some(Value::String(expression)) = schema.get("pattern")
            && let Some(regex) = self.registry.regex(expression)
            && !pattern::matches(regex, text)
        {
            valid =
                self.fail("pattern", instance, path, || format!("{} does not match `{expression}`", quoted(instance)));
        }
        if self.formats
            && let Some(Value::String(name)) = schema.get("format")
            && !format::holds(name, text)
        {
            valid = self.fail("format", instance, path, || format!("{} is not a valid \"{name}\"", quoted(instance)));
        }
        valid
    }

    /// `allOf`, `anyOf`, `oneOf`, `not`, `if`/`then`/`else`, `dependentSchemas`: schemas
    /// applied to the same value.
    fn in_place<'i>(
        &mut self,
        schema: &'v Map<String, Value>,
        scope: &Scope,
        instance: &'i Value,
        path: &InstancePath<'_>,
        evaluated: &mut Evaluated<'i>,
    ) -> bool {
        let tracking = self.registry.uses_unevaluated;
        let mut valid = true;
        if let Some(Value::Array(branches)) = schema.get("allOf") {
            for (index, branch) in branches.iter().enumerate() {
                let (ok, inner) = self.child(&["allOf", &index.to_string()], branch, scope, instance, path);
                valid &= ok;
                evaluated.merge(inner);
                if self.done(valid) {
                    return false;
                }
            }
        }
        if let Some(Value::Array(branches)) = schema.get("anyOf") {
            let mut any = false;
            for (index, branch) in branches.iter().enumerate() {
                let (ok, inner) = self.quietly(&["anyOf", &index.to_string()], branch, scope, instance, path);
                if ok {
                    any = true;
                    evaluated.merge(inner);
                    if !tracking {
                        break;
                    }
                }
            }
            if !any {
                valid = self.fail("anyOf", instance, path, || {
                    format!("{} is not valid under any of the schemas listed in `anyOf`", quoted(instance))
                });
            }
        }
        if let Some(Value::Array(branches)) = schema.get("oneOf") {
            let mut matched = 0;
            for (index, branch) in branches.iter().enumerate() {
                let (ok, inner) = self.quietly(&["oneOf", &index.to_string()], branch, scope, instance, path);
                if ok {
                    matched += 1;
                    evaluated.merge(inner);
                    if matched > 1 {
                        break;
                    }
                }
            }
            if matched != 1 {
                valid = self.fail("oneOf", instance, path, || {
                    if matched == 0 {
                        format!("{} is not valid under any of the schemas listed in `oneOf`", quoted(instance))
                    } else {
                        format!("{} is valid under more than one of the schemas listed in `oneOf`", quoted(instance))
                    }
                });
            }
        }
        if let Some(negated) = schema.get("not") {
            let (ok, _) = self.quietly(&["not"], negated, scope, instance, path);
            if ok {
                valid = self.fail("not", instance, path, || {
                    format!("{} is allowed by the schema under `not`", quoted(instance))
                });
            }
        }
        if scope.draft >= Draft::Draft7
            && let Some(condition) = schema.get("if")
        {
            let (holds, inner) = self.quietly(&["if"], condition, scope, instance, path);
            let branch = if holds { "then" } else { "else" };
            if holds {
                evaluated.merge(inner);
            }
            if let Some(consequence) = schema.get(branch) {
                let (ok, inner) = self.child(&[branch], consequence, scope, instance, path);
                valid &= ok;
                evaluated.merge(inner);
            }
        }
        if let Value::Object(object) = instance {
            let keyword = if scope.draft >= Draft::Draft201909 { "dependentSchemas" } else { "dependencies" };
            if let Some(Value::Object(dependencies)) = schema.get(keyword) {
                for (name, dependency) in dependencies {
                    if !object.contains_key(name) {
                        continue;
                    }
                    match dependency {
                        Value::Array(required) if keyword == "dependencies" => {
                            valid &= self.required_all(object, required, "dependencies", instance, path);
                        }
                        Value::Object(_) | Value::Bool(_) => {
                            let (ok, inner) = self.child(&[keyword, name], dependency, scope, instance, path);
                            valid &= ok;
                            evaluated.merge(inner);
                        }
                        _ => {}
                    }
                }
            }
        }
        valid
    }

    fn required_all(
        &mut self,
        object: &Map<String, Value>,
        required: &[Value],
        keyword: &'static str,
        instance: &Value,
        path: &InstancePath<'_>,
    ) -> bool {
        let mut valid = true;
        for name in required.iter().filter_map(Value::as_str) {
            if !object.contains_key(name) {
                valid = self
                    .fail(keyword, instance, path, || format!("{} is a required property", quoted(&Value::from(name))));
                if self.done(valid) {
                    return false;
                }
            }
        }
        valid
    }

    /// The keywords of an object's members.
    fn properties<'i>(
        &mut self,
        schema: &'v Map<String, Value>,
        scope: &Scope,
        object: &'i Map<String, Value>,
        instance: &'i Value,
        path: &InstancePath<'_>,
        evaluated: &mut Evaluated<'i>,
    ) -> bool {
        let tracking = self.registry.uses_unevaluated;
        let mut valid = true;
        let count = |keyword: &str| schema.get(keyword).and_then(as_count);
        if let Some(maximum) = count("maxProperties")
            && object.len() > maximum
        {
            valid = self.fail("maxProperties", instance, path, || {
                format!("{} has more than {maximum} properties", quoted(instance))
            });
        }
        if let Some(minimum) = count("minProperties")
            && object.len() < minimum
        {
            valid = self.fail("minProperties", instance, path, || {
                format!("{} has fewer than {minimum} properties", quoted(instance))
            });
        }
        if let Some(Value::Array(required)) = schema.get("required") {
            valid &= self.required_all(object, required, "required", instance, path);
        }
        if scope.draft >= Draft::Draft201909
            && let Some(Value::Object(dependent)) = schema.get("dependentRequired")
        {
            for (name, required) in dependent {
                if object.contains_key(name)
                    && let Value::Array(required) = required
                {
                    valid &= self.required_all(object, required, "dependentRequired", instance, path);
                }
            }
        }
        if self.done(valid) {
            return false;
        }
        let properties = match schema.get("properties") {
            Some(Value::Object(properties)) => Some(properties),
            _ => None,
        };
        let patterns = match schema.get("patternProperties") {
            Some(Value::Object(patterns)) => Some(patterns),
            _ => None,
        };
        let additional = schema.get("additionalProperties");
        let mut unexpected: Vec<&str> = Vec::new();
        for (name, member) in object {
            let member_path = path.key(name);
            let mut matched = false;
            if let Some(property) = properties.and_then(|properties| properties.get(name)) {
                matched = true;
                let (ok, _) = self.child(&["properties", name], property, scope, member, &member_path);
                valid &= ok;
            }
            if let Some(patterns) = patterns {
                for (expression, property) in patterns {
                    if self.registry.regex(expression).is_some_and(|regex| pattern::matches(regex, name)) {
                        matched = true;
                        let (ok, _) =
                            self.child(&["patternProperties", expression], property, scope, member, &member_path);
                        valid &= ok;
                    }
                }
            }
            if !matched && let Some(additional) = additional {
                if *additional == Value::Bool(false) {
                    unexpected.push(name);
                    valid = false;
                } else {
                    let (ok, _) = self.child(&["additionalProperties"], additional, scope, member, &member_path);
                    valid &= ok;
                }
                matched = true;
            }
            if matched && tracking {
                evaluated.properties.insert(name);
            }
            if self.done(valid) {
                return false;
            }
        }
        if !unexpected.is_empty() {
            self.fail("additionalProperties", instance, path, || {
                format!("additional properties are not allowed ({} unexpected)", names(&unexpected))
            });
        }
        if let Some(names_schema) = schema.get("propertyNames")
            && scope.draft >= Draft::Draft6
        {
            for name in object.keys() {
                let key = Value::String(name.clone());
                let (ok, _) = self.child(&["propertyNames"], names_schema, scope, &key, path);
                valid &= ok;
                if self.done(valid) {
                    return false;
                }
            }
        }
        if let Some(unevaluated) = schema.get("unevaluatedProperties")
            && scope.draft.has_unevaluated()
        {
            let mut refused: Vec<&str> = Vec::new();
            for (name, member) in object {
                if evaluated.has_property(name) {
                    continue;
                }
                if *unevaluated == Value::Bool(false) {
                    refused.push(name);
                    valid = false;
                    continue;
                }
                let (ok, _) = self.child(&["unevaluatedProperties"], unevaluated, scope, member, &path.key(name));
                valid &= ok;
                evaluated.properties.insert(name);
            }
            if !refused.is_empty() {
                self.fail("unevaluatedProperties", instance, path, || {
                    format!("unevaluated properties are not allowed ({} unexpected)", names(&refused))
                });
            }
        }
        valid
    }

    /// The keywords of an array's items.
    fn items<'i>(
        &mut self,
        schema: &'v Map<String, Value>,
        scope: &Scope,
        items: &'i [Value],
        instance: &'i Value,
        path: &InstancePath<'_>,
        evaluated: &mut Evaluated<'i>,
    ) -> bool {
        let mut valid = true;
        let count = |keyword: &str| schema.get(keyword).and_then(as_count);
        if let Some(maximum) = count("maxItems")
            && items.len() > maximum
        {
            valid =
                self.fail("maxItems", instance, path, || format!("{} has more than {maximum} items", quoted(instance)));
        }
        if let Some(minimum) = count("minItems")
            && items.len() < minimum
        {
            valid = self
                .fail("minItems", instance, path, || format!("{} has fewer than {minimum} items", quoted(instance)));
        }
        if schema.get("uniqueItems") == Some(&Value::Bool(true))
            && let Some((first, second)) = repeated(items)
        {
            valid = self.fail("uniqueItems", instance, path, || {
                format!("{} has non-unique items (at {first} and {second})", quoted(instance))
            });
        }
        if self.done(valid) {
            return false;
        }
        // Positional schemas: `prefixItems` (2020-12), or `items` as an array (up to 2019-09),
        // then `items` (2020-12) or `additionalItems` for the rest.
        let (positional, positional_keyword, rest, rest_keyword) = if scope.draft.has_item_arrays() {
            match schema.get("items") {
                Some(Value::Array(positional)) => {
                    (Some(positional), "items", schema.get("additionalItems"), "additionalItems")
                }
                single => (None, "items", single, "items"),
            }
        } else {
            let positional = match schema.get("prefixItems") {
                Some(Value::Array(positional)) => Some(positional),
                _ => None,
            };
            (positional, "prefixItems", schema.get("items"), "items")
        };
        let mut covered = 0;
        if let Some(positional) = positional {
            for (index, (item, item_schema)) in items.iter().zip(positional).enumerate() {
                let (ok, _) =
                    self.child(&[positional_keyword, &index.to_string()], item_schema, scope, item, &path.index(index));
                valid &= ok;
                if self.done(valid) {
                    return false;
                }
            }
            covered = positional.len().min(items.len());
            evaluated.items = evaluated.items.max(covered);
        }
        if let Some(rest_schema) = rest {
            for (index, item) in items.iter().enumerate().skip(covered) {
                let (ok, _) = self.child(&[rest_keyword], rest_schema, scope, item, &path.index(index));
                valid &= ok;
                if self.done(valid) {
                    return false;
                }
            }
            evaluated.all_items = true;
        }
        if let Some(contains) = schema.get("contains")
            && scope.draft >= Draft::Draft6
        {
            valid &= self.contains(schema, scope, contains, items, instance, path, evaluated);
        }
        if let Some(unevaluated) = schema.get("unevaluatedItems")
            && scope.draft.has_unevaluated()
        {
            for (index, item) in items.iter().enumerate() {
                if evaluated.has_item(index) {
                    continue;
                }
                let (ok, _) = self.child(&["unevaluatedItems"], unevaluated, scope, item, &path.index(index));
                valid &= ok;
                if self.done(valid) {
                    return false;
                }
            }
            evaluated.all_items = true;
        }
        valid
    }

    #[allow(clippy::too_many_arguments)]
    fn contains<'i>(
        &mut self,
        schema: &'v Map<String, Value>,
        scope: &Scope,
        contains: &'v Value,
        items: &'i [Value],
        instance: &'i Value,
        path: &InstancePath<'_>,
        evaluated: &mut Evaluated<'i>,
    ) -> bool {
        let bounded = scope.draft >= Draft::Draft201909;
        let count = |keyword: &str| if bounded { schema.get(keyword).and_then(as_count) } else { None };
        let (minimum, maximum) = (count("minContains").unwrap_or(1), count("maxContains"));
        let mut matched = 0;
        for (index, item) in items.iter().enumerate() {
            let (ok, _) = self.quietly(&["contains"], contains, scope, item, &path.index(index));
            if ok {
                matched += 1;
                if scope.draft >= Draft::Draft202012 {
                    evaluated.item_indices.insert(index);
                }
            }
        }
        let mut valid = true;
        if matched < minimum {
            let keyword = if minimum == 1 || schema.get("minContains").is_none() { "contains" } else { "minContains" };
            valid = self.fail(keyword, instance, path, || {
                format!(
                    "{} has {matched} items matching the schema under `contains`, fewer than {minimum}",
                    quoted(instance)
                )
            });
        }
        if let Some(maximum) = maximum
            && matched > maximum
        {
            valid = self.fail("maxContains", instance, path, || {
                format!(
                    "{} has {matched} items matching the schema under `contains`, more than {maximum}",
                    quoted(instance)
                )
            });
        }
        valid
    }
}

/// The scope inside `schema`, a child of a schema whose scope is `parent`: its `$schema` and
/// its `$id` (which a draft-7 `$ref` beside it hides) change it.
fn inner_scope(schema: &Map<String, Value>, parent: &Scope) -> Scope {
    let draft = schema.get("$schema").and_then(Value::as_str).and_then(Draft::from_uri).unwrap_or(parent.draft);
    let hidden = draft.ref_hides_siblings() && schema.contains_key("$ref");
    match schema.get(draft.id_keyword()) {
        Some(Value::String(id)) if !(hidden || draft <= Draft::Draft7 && id.starts_with('#')) => {
            let resolved = resolve(&parent.base, id);
            Scope { base: Arc::from(split_fragment(&resolved).0), draft }
        }
        _ if draft != parent.draft => Scope { base: parent.base.clone(), draft },
        _ => parent.clone(),
    }
}

/// A non-negative whole number of a keyword (`maxLength: 2.0` counts as 2).
fn as_count(value: &Value) -> Option<usize> {
    let number = value.as_number()?;
    match number.as_u64() {
        Some(count) => Some(usize::try_from(count).unwrap_or(usize::MAX)),
        None => number.as_f64().filter(|float| *float >= 0.0 && float.fract() == 0.0).map(|float| float as usize),
    }
}

/// The first two positions of equal items, if any.
fn repeated(items: &[Value]) -> Option<(usize, usize)> {
    for (first, item) in items.iter().enumerate() {
        for (offset, other) in items[first + 1..].iter().enumerate() {
            if equal(item, other) {
                return Some((first, first + 1 + offset));
            }
        }
    }
    None
}

/// A value as a message quotes it: its JSON, cut short when long.
fn quoted(value: &Value) -> String {
    let mut text = value.to_string();
    if text.len() > QUOTED {
        let mut end = QUOTED;
        while !text.is_char_boundary(end) {
            end -= 1;
        }
        text.truncate(end);
        text.push_str("...");
    }
    text
}

/// `"a"`, `"a" or "b"`, `"a", "b" or "c"`, and past eight, how many more.
fn listed(values: &Value, conjunction: &str) -> String {
    let values: Vec<&Value> = match values {
        Value::Array(values) => values.iter().collect(),
        single => vec![single],
    };
    let shown: Vec<String> = values.iter().take(8).map(|value| quoted(value)).collect();
    let mut out = String::new();
    match shown.split_last() {
        None => out.push_str("nothing"),
        Some((only, [])) => out.push_str(only),
        Some((last, rest)) if values.len() <= 8 => {
            let _ = write!(out, "{} {conjunction} {last}", rest.join(", "));
        }
        Some(_) => {
            let _ = write!(out, "{}, {conjunction} {} more", shown.join(", "), values.len() - 8);
        }
    }
    out
}

/// Property names as a message lists them: `"a" was`, `"a", "b" were`.
fn names(names: &[&str]) -> String {
    let quoted: Vec<String> = names.iter().map(|name| Value::from(*name).to_string()).collect();
    let verb = if names.len() == 1 { "was" } else { "were" };
    format!("{} {verb}", quoted.join(", "))
}
