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
use crate::keywords::{self as kw, Keywords};
use crate::path::{InstancePath, push_segment};
use crate::pattern;
use crate::registry::{Location, Reference, Registry, Scope};
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
    /// Few, and often none: a list costs less to make than a set.
    properties: Vec<&'i str>,
    all_items: bool,
    /// Items `0..items` were evaluated.
    items: usize,
    item_indices: Vec<usize>,
}

impl<'i> Evaluated<'i> {
    fn merge(&mut self, other: Evaluated<'i>) {
        if !other.all_properties
            && !other.all_items
            && other.items == 0
            && other.properties.is_empty()
            && other.item_indices.is_empty()
        {
            return;
        }
        self.all_properties |= other.all_properties;
        self.properties.extend(other.properties);
        self.all_items |= other.all_items;
        self.items = self.items.max(other.items);
        self.item_indices.extend(other.item_indices);
    }

    /// What was evaluated of an object's members, as a set to ask of each member.
    fn property_set(&self) -> HashSet<&'i str> {
        self.properties.iter().copied().collect()
    }

    /// What was evaluated of an array's items, as a set to ask of each item.
    fn item_set(&self) -> HashSet<usize> {
        self.item_indices.iter().copied().collect()
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
        let outcome = match schema {
            Value::Object(object) => {
                let keywords = Keywords::of(object);
                match inner_scope(&keywords, parent) {
                    Some(scope) => self.object_in(&keywords, &scope, instance, path),
                    None => self.object_in(&keywords, parent, instance, path),
                }
            }
            other => self.inside(other, parent, instance, path),
        };
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
            Value::Object(object) => self.object_in(&Keywords::of(object), scope, instance, path),
            // Not a schema: the meta-schema refuses it; alone it allows everything.
            _ => (true, Evaluated::default()),
        }
    }

    /// Evaluates a schema object, its resource entered into the dynamic scope if it is new.
    fn object_in<'i>(
        &mut self,
        keywords: &Keywords<'v>,
        scope: &Scope,
        instance: &'i Value,
        path: &InstancePath<'_>,
    ) -> (bool, Evaluated<'i>) {
        let entered = self.dynamic.last().is_none_or(|top| !Arc::ptr_eq(top, &scope.base) && **top != *scope.base);
        if entered {
            self.dynamic.push(scope.base.clone());
        }
        let outcome = self.object(keywords, scope, instance, path);
        if entered {
            self.dynamic.pop();
        }
        outcome
    }

    fn object<'i>(
        &mut self,
        schema: &Keywords<'v>,
        scope: &Scope,
        instance: &'i Value,
        path: &InstancePath<'_>,
    ) -> (bool, Evaluated<'i>) {
        let mut evaluated = Evaluated::default();
        let mut valid = true;
        if schema.has(kw::REF) || schema.has(kw::DYNAMIC_REF) || schema.has(kw::RECURSIVE_REF) {
            let (ok, inner) = self.references(schema, scope, instance, path);
            if scope.draft.ref_hides_siblings() && schema.has(kw::REF) {
                return (ok, inner);
            }
            valid &= ok;
            if ok {
                evaluated.merge(inner);
            }
            if self.done(valid) {
                return (false, evaluated);
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

    /// The schema's reference keywords (`$ref`, and `$dynamicRef` or `$recursiveRef` in their
    /// drafts; up to draft 7 `$ref` alone), each followed to its target.
    fn references<'i>(
        &mut self,
        schema: &Keywords<'v>,
        scope: &Scope,
        instance: &'i Value,
        path: &InstancePath<'_>,
    ) -> (bool, Evaluated<'i>) {
        let applies = |keyword: &str| match keyword {
            "$ref" => true,
            _ if scope.draft.ref_hides_siblings() && schema.has(kw::REF) => false,
            "$dynamicRef" => scope.draft == Draft::Draft202012,
            "$recursiveRef" => scope.draft == Draft::Draft201909,
            _ => false,
        };
        let registry = self.registry;
        let mut evaluated = Evaluated::default();
        let mut valid = true;
        match registry.info(self.document, &self.pointer) {
            Some(info) => {
                for reference in info.references.iter().filter(|reference| applies(reference.keyword)) {
                    let (ok, inner) = self.follow_resolved(reference, scope.draft, instance, path);
                    valid &= ok;
                    if ok {
                        evaluated.merge(inner);
                    }
                    if self.done(valid) {
                        return (false, evaluated);
                    }
                }
            }
            // A schema no keyword of the registry's walk led to (inside an unknown keyword):
            // its references are resolved now.
            None => {
                for keyword in ["$ref", "$dynamicRef", "$recursiveRef"] {
                    if let Some(Value::String(reference)) = schema.named(keyword)
                        && applies(keyword)
                    {
                        let uri = resolve(&scope.base, reference);
                        let (ok, inner) = self.follow_uri(keyword, &uri, scope.draft, instance, path);
                        valid &= ok;
                        if ok {
                            evaluated.merge(inner);
                        }
                        if self.done(valid) {
                            return (false, evaluated);
                        }
                    }
                }
            }
        }
        (valid, evaluated)
    }

    /// Follows a reference the registry resolved: to its target, or for a `$dynamicRef` to a
    /// `$dynamicAnchor` (a `$recursiveRef` to a `$recursiveAnchor`), to the outermost resource
    /// of the dynamic scope that has one of the same name.
    fn follow_resolved<'i>(
        &mut self,
        reference: &'v Reference,
        draft: Draft,
        instance: &'i Value,
        path: &InstancePath<'_>,
    ) -> (bool, Evaluated<'i>) {
        let registry = self.registry;
        let dynamic = match (&reference.dynamic_name, reference.recursive) {
            (Some(name), _) => {
                self.dynamic.iter().find(|base| registry.is_dynamic_anchor(base, name)).and_then(|base| {
                    let location = registry.anchor(base, name)?;
                    Some((registry.scope(&location, base, draft), location))
                })
            }
            (None, true) => self.dynamic.iter().find(|base| registry.is_recursive_anchor(base)).and_then(|base| {
                let location = registry.resource(base)?;
                Some((registry.scope(&location, base, draft), location))
            }),
            (None, false) => None,
        };
        match (&dynamic, &reference.target) {
            (Some((scope, location)), _) => {
                self.enter(reference.keyword, location, scope, &reference.uri, instance, path)
            }
            (None, Some(target)) => {
                self.enter(reference.keyword, &target.location, &target.scope, &reference.uri, instance, path)
            }
            (None, None) => (self.unresolved(reference.keyword, &reference.uri, instance, path), Evaluated::default()),
        }
    }

    /// Follows a reference to `uri`, resolved now.
    fn follow_uri<'i>(
        &mut self,
        keyword: &'static str,
        uri: &str,
        draft: Draft,
        instance: &'i Value,
        path: &InstancePath<'_>,
    ) -> (bool, Evaluated<'i>) {
        let registry = self.registry;
        let (resource, name) = split_fragment(uri);
        let dynamic_base = match keyword {
            "$dynamicRef"
                if !name.is_empty() && !name.starts_with('/') && registry.is_dynamic_anchor(resource, &name) =>
            {
                self.dynamic.iter().find(|base| registry.is_dynamic_anchor(base, &name)).cloned()
            }
            "$recursiveRef" if registry.is_recursive_anchor(resource) => {
                self.dynamic.iter().find(|base| registry.is_recursive_anchor(base)).cloned()
            }
            _ => None,
        };
        let location = match &dynamic_base {
            Some(base) if keyword == "$dynamicRef" => registry.anchor(base, &name),
            Some(base) => registry.resource(base),
            None => registry.locate(uri),
        };
        let Some(location) = location else {
            return (self.unresolved(keyword, uri, instance, path), Evaluated::default());
        };
        let scope = registry.scope(&location, uri, draft);
        self.enter(keyword, &location, &scope, uri, instance, path)
    }

    fn unresolved(&mut self, keyword: &'static str, uri: &str, instance: &Value, path: &InstancePath<'_>) -> bool {
        self.fail(keyword, instance, path, || format!("`{uri}` cannot be resolved"))
    }

    /// Evaluates the schema at `location`, reached by a reference to `uri`.
    #[allow(clippy::too_many_arguments)]
    fn enter<'i>(
        &mut self,
        keyword: &'static str,
        location: &Location,
        scope: &Scope,
        uri: &str,
        instance: &'i Value,
        path: &InstancePath<'_>,
    ) -> (bool, Evaluated<'i>) {
        if self.depth >= MAX_DEPTH {
            let message = || format!("references followed deeper than {MAX_DEPTH} schemas, at `{uri}`");
            return (self.fail(keyword, instance, path, message), Evaluated::default());
        }
        let registry = self.registry;
        let Some(target) = registry.get(location) else {
            return (self.unresolved(keyword, uri, instance, path), Evaluated::default());
        };
        let document = std::mem::replace(&mut self.document, location.document);
        let mut pointer = std::mem::take(&mut self.pointer);
        self.pointer.push_str(&location.pointer);
        self.depth += 1;
        let outcome = self.inside(target, scope, instance, path);
        self.depth -= 1;
        self.document = document;
        std::mem::swap(&mut self.pointer, &mut pointer);
        outcome
    }

    /// The keywords that test the value itself.
    fn assertions(&mut self, schema: &Keywords<'v>, scope: &Scope, instance: &Value, path: &InstancePath<'_>) -> bool {
        let mut valid = true;
        if let Some(expected) = schema.get(kw::TYPE) {
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
        if let Some(Value::Array(options)) = schema.get(kw::ENUM)
            && !options.iter().any(|option| equal(option, instance))
        {
            let allowed = schema.get(kw::ENUM);
            let message =
                || format!("{} is not one of {}", quoted(instance), listed(&Value::Array(options.clone()), "or"));
            valid = self.fail_allowing("enum", instance, path, message, allowed);
        }
        if scope.draft >= Draft::Draft6
            && let Some(expected) = schema.get(kw::CONST)
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
        schema: &Keywords<'v>,
        scope: &Scope,
        number: &serde_json::Number,
        instance: &Value,
        path: &InstancePath<'_>,
    ) -> bool {
        use std::cmp::Ordering::{Equal, Greater, Less};
        let mut valid = true;
        let bound = |place: usize| schema.get(place).and_then(Value::as_number);
        let draft4 = scope.draft == Draft::Draft4;
        // Draft 4's `exclusiveMaximum` is a flag of `maximum`; later ones, a bound of its own.
        let flag = |place: usize| draft4 && schema.get(place) == Some(&Value::Bool(true));
        let limits = [
            (kw::MAXIMUM, "maximum", Greater, flag(kw::EXCLUSIVE_MAXIMUM)),
            (kw::MINIMUM, "minimum", Less, flag(kw::EXCLUSIVE_MINIMUM)),
            (kw::EXCLUSIVE_MAXIMUM, "exclusiveMaximum", Greater, true),
            (kw::EXCLUSIVE_MINIMUM, "exclusiveMinimum", Less, true),
        ];
        for (place, keyword, beyond, exclusive) in limits {
            let own_keyword = place == kw::EXCLUSIVE_MAXIMUM || place == kw::EXCLUSIVE_MINIMUM;
            let Some(limit) = bound(place).filter(|_| !(draft4 && own_keyword)) else { continue };
            let within = match compare(number, limit) {
                Some(Equal) => !exclusive,
                Some(ordering) => ordering != beyond,
                None => false,
            };
            if !within {
                valid = self.fail(keyword, instance, path, || {
                    let side = if beyond == Greater { "greater" } else { "less" };
                    let or_equal = if exclusive { "or equal to " } else { "" };
                    let (kind, name) = match keyword {
                        "exclusiveMaximum" => ("exclusive ", "maximum"),
                        "exclusiveMinimum" => ("exclusive ", "minimum"),
                        name => ("", name),
                    };
                    format!("{instance} is {side} than {or_equal}the {kind}{name} of {limit}")
                });
            }
        }
        if let Some(divisor) = bound(kw::MULTIPLE_OF)
            && divisor.as_f64().is_some_and(|divisor| divisor > 0.0)
            && !is_multiple_of(number, divisor)
        {
            valid = self.fail("multipleOf", instance, path, || format!("{instance} is not a multiple of {divisor}"));
        }
        valid
    }

    fn string(&mut self, schema: &Keywords<'v>, text: &str, instance: &Value, path: &InstancePath<'_>) -> bool {
        let mut valid = true;
        let count = |place: usize| schema.get(place).and_then(as_count);
        if let Some(maximum) = count(kw::MAX_LENGTH)
            && length(text) > maximum
        {
            valid = self.fail("maxLength", instance, path, || {
                format!("{} is longer than {maximum} characters", quoted(instance))
            });
        }
        if let Some(minimum) = count(kw::MIN_LENGTH)
            && length(text) < minimum
        {
            valid = self.fail("minLength", instance, path, || {
                format!("{} is shorter than {minimum} characters", quoted(instance))
            });
        }
        if let Some(Value::String(expression)) = schema.get(kw::PATTERN)
            && let Some(regex) = self.registry.regex(expression)
            && !pattern::matches(regex, text)
        {
            valid =
                self.fail("pattern", instance, path, || format!("{} does not match `{expression}`", quoted(instance)));
        }
        if self.formats
            && let Some(Value::String(name)) = schema.get(kw::FORMAT)
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
        schema: &Keywords<'v>,
        scope: &Scope,
        instance: &'i Value,
        path: &InstancePath<'_>,
        evaluated: &mut Evaluated<'i>,
    ) -> bool {
        let tracking = self.registry.uses_unevaluated;
        let mut valid = true;
        if let Some(Value::Array(branches)) = schema.get(kw::ALL_OF) {
            for (index, branch) in branches.iter().enumerate() {
                let (ok, inner) = self.child(&["allOf", &index.to_string()], branch, scope, instance, path);
                valid &= ok;
                evaluated.merge(inner);
                if self.done(valid) {
                    return false;
                }
            }
        }
        if let Some(Value::Array(branches)) = schema.get(kw::ANY_OF) {
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
        if let Some(Value::Array(branches)) = schema.get(kw::ONE_OF) {
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
        if let Some(negated) = schema.get(kw::NOT) {
            let (ok, _) = self.quietly(&["not"], negated, scope, instance, path);
            if ok {
                valid = self.fail("not", instance, path, || {
                    format!("{} is allowed by the schema under `not`", quoted(instance))
                });
            }
        }
        if scope.draft >= Draft::Draft7
            && let Some(condition) = schema.get(kw::IF)
        {
            let (holds, inner) = self.quietly(&["if"], condition, scope, instance, path);
            let (branch, place) = if holds { ("then", kw::THEN) } else { ("else", kw::ELSE) };
            if holds {
                evaluated.merge(inner);
            }
            if let Some(consequence) = schema.get(place) {
                let (ok, inner) = self.child(&[branch], consequence, scope, instance, path);
                valid &= ok;
                evaluated.merge(inner);
            }
        }
        if let Value::Object(object) = instance {
            let (keyword, place) = if scope.draft >= Draft::Draft201909 {
                ("dependentSchemas", kw::DEPENDENT_SCHEMAS)
            } else {
                ("dependencies", kw::DEPENDENCIES)
            };
            if let Some(Value::Object(dependencies)) = schema.get(place) {
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
        schema: &Keywords<'v>,
        scope: &Scope,
        object: &'i Map<String, Value>,
        instance: &'i Value,
        path: &InstancePath<'_>,
        evaluated: &mut Evaluated<'i>,
    ) -> bool {
        let tracking = self.registry.uses_unevaluated;
        let mut valid = true;
        let count = |place: usize| schema.get(place).and_then(as_count);
        if let Some(maximum) = count(kw::MAX_PROPERTIES)
            && object.len() > maximum
        {
            valid = self.fail("maxProperties", instance, path, || {
                format!("{} has more than {maximum} properties", quoted(instance))
            });
        }
        if let Some(minimum) = count(kw::MIN_PROPERTIES)
            && object.len() < minimum
        {
            valid = self.fail("minProperties", instance, path, || {
                format!("{} has fewer than {minimum} properties", quoted(instance))
            });
        }
        if let Some(Value::Array(required)) = schema.get(kw::REQUIRED) {
            valid &= self.required_all(object, required, "required", instance, path);
        }
        if scope.draft >= Draft::Draft201909
            && let Some(Value::Object(dependent)) = schema.get(kw::DEPENDENT_REQUIRED)
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
        let properties = match schema.get(kw::PROPERTIES) {
            Some(Value::Object(properties)) => Some(properties),
            _ => None,
        };
        let patterns = match schema.get(kw::PATTERN_PROPERTIES) {
            Some(Value::Object(patterns)) => Some(patterns),
            _ => None,
        };
        let additional = schema.get(kw::ADDITIONAL_PROPERTIES);
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
                evaluated.properties.push(name);
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
        if let Some(names_schema) = schema.get(kw::PROPERTY_NAMES)
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
        if let Some(unevaluated) = schema.get(kw::UNEVALUATED_PROPERTIES)
            && scope.draft.has_unevaluated()
        {
            let mut refused: Vec<&str> = Vec::new();
            let seen = evaluated.property_set();
            for (name, member) in object {
                if evaluated.all_properties || seen.contains(name.as_str()) {
                    continue;
                }
                if *unevaluated == Value::Bool(false) {
                    refused.push(name);
                    valid = false;
                    continue;
                }
                let (ok, _) = self.child(&["unevaluatedProperties"], unevaluated, scope, member, &path.key(name));
                valid &= ok;
                evaluated.properties.push(name);
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
        schema: &Keywords<'v>,
        scope: &Scope,
        items: &'i [Value],
        instance: &'i Value,
        path: &InstancePath<'_>,
        evaluated: &mut Evaluated<'i>,
    ) -> bool {
        let mut valid = true;
        let count = |place: usize| schema.get(place).and_then(as_count);
        if let Some(maximum) = count(kw::MAX_ITEMS)
            && items.len() > maximum
        {
            valid =
                self.fail("maxItems", instance, path, || format!("{} has more than {maximum} items", quoted(instance)));
        }
        if let Some(minimum) = count(kw::MIN_ITEMS)
            && items.len() < minimum
        {
            valid = self
                .fail("minItems", instance, path, || format!("{} has fewer than {minimum} items", quoted(instance)));
        }
        if schema.get(kw::UNIQUE_ITEMS) == Some(&Value::Bool(true))
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
            match schema.get(kw::ITEMS) {
                Some(Value::Array(positional)) => {
                    (Some(positional), "items", schema.get(kw::ADDITIONAL_ITEMS), "additionalItems")
                }
                single => (None, "items", single, "items"),
            }
        } else {
            let positional = match schema.get(kw::PREFIX_ITEMS) {
                Some(Value::Array(positional)) => Some(positional),
                _ => None,
            };
            (positional, "prefixItems", schema.get(kw::ITEMS), "items")
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
        if let Some(contains) = schema.get(kw::CONTAINS)
            && scope.draft >= Draft::Draft6
        {
            valid &= self.contains(schema, scope, contains, items, instance, path, evaluated);
        }
        if let Some(unevaluated) = schema.get(kw::UNEVALUATED_ITEMS)
            && scope.draft.has_unevaluated()
        {
            let seen = evaluated.item_set();
            for (index, item) in items.iter().enumerate() {
                if evaluated.all_items || index < evaluated.items || seen.contains(&index) {
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
        schema: &Keywords<'v>,
        scope: &Scope,
        contains: &'v Value,
        items: &'i [Value],
        instance: &'i Value,
        path: &InstancePath<'_>,
        evaluated: &mut Evaluated<'i>,
    ) -> bool {
        let bounded = scope.draft >= Draft::Draft201909;
        let count = |place: usize| if bounded { schema.get(place).and_then(as_count) } else { None };
        let (minimum, maximum) = (count(kw::MIN_CONTAINS).unwrap_or(1), count(kw::MAX_CONTAINS));
        let mut matched = 0;
        for (index, item) in items.iter().enumerate() {
            let (ok, _) = self.quietly(&["contains"], contains, scope, item, &path.index(index));
            if ok {
                matched += 1;
                if scope.draft >= Draft::Draft202012 {
                    evaluated.item_indices.push(index);
                }
            }
        }
        let mut valid = true;
        if matched < minimum {
            let keyword =
                if minimum == 1 || schema.get(kw::MIN_CONTAINS).is_none() { "contains" } else { "minContains" };
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

/// The scope inside a schema with `keywords`, a child of a schema whose scope is `parent`,
/// when it differs: its `$schema` and its `$id` (which a draft-7 `$ref` beside it hides)
/// change it.
fn inner_scope(keywords: &Keywords<'_>, parent: &Scope) -> Option<Scope> {
    let draft = keywords.get(kw::SCHEMA).and_then(Value::as_str).and_then(Draft::from_uri).unwrap_or(parent.draft);
    let hidden = draft.ref_hides_siblings() && keywords.has(kw::REF);
    match keywords.get(if draft == Draft::Draft4 { kw::ID } else { kw::DOLLAR_ID }) {
        Some(Value::String(id)) if !(hidden || draft <= Draft::Draft7 && id.starts_with('#')) => {
            let resolved = resolve(&parent.base, id);
            Some(Scope { base: Arc::from(split_fragment(&resolved).0), draft })
        }
        _ if draft != parent.draft => Some(Scope { base: parent.base.clone(), draft }),
        _ => None,
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
