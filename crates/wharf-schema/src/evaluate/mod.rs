//! A value checked against a schema, keyword by keyword, as the drafts define them: the
//! assertions, the applicators with the annotations `unevaluated*` needs, and the references
//! (`$ref`, `$dynamicRef`, `$recursiveRef`) followed through the registry. An object's members
//! are checked in `members.rs`, an array's items in `items.rs`; `wording.rs` words the errors.

use std::collections::HashSet;

use std::sync::Arc;

use serde_json::Value;

mod items;
mod members;
mod wording;

use crate::draft::Draft;
use crate::error::{ErrorDetail, ValidationError};
use crate::format;
use crate::keywords::{self as kw, Keywords};
use crate::path::{InstancePath, push_segment};
use crate::pattern;
use crate::registry::{Location, Reference, Registry, Scope};
use crate::uri::{resolve, split_fragment};
use crate::value::{compare, equal, has_type, is_multiple_of, length};

use self::wording::{as_count, listed, quoted};

/// How deep schemas may nest, references followed: past it, a schema that refers to itself
/// without consuming the value, or one nested without end, is refused instead of exhausting the
/// stack. A value serde_json reads nests at most 128 levels, each one or two schemas deep.
const MAX_DEPTH: usize = 512;

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
        if self.depth >= MAX_DEPTH {
            let message = || format!("schemas nested deeper than {MAX_DEPTH} levels, references followed");
            let keyword = if keywords.has(kw::REF) { "$ref" } else { "depth" };
            return (self.fail(keyword, instance, path, message), Evaluated::default());
        }
        let entered = self.dynamic.last().is_none_or(|top| !Arc::ptr_eq(top, &scope.base) && **top != *scope.base);
        if entered {
            self.dynamic.push(scope.base.clone());
        }
        self.depth += 1;
        let outcome = self.object(keywords, scope, instance, path);
        self.depth -= 1;
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
        let registry = self.registry;
        let Some(target) = registry.get(location) else {
            return (self.unresolved(keyword, uri, instance, path), Evaluated::default());
        };
        let document = std::mem::replace(&mut self.document, location.document);
        let mut pointer = std::mem::take(&mut self.pointer);
        self.pointer.push_str(&location.pointer);
        let outcome = self.inside(target, scope, instance, path);
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
