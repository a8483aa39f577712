//! Every schema a validator may reach, indexed once when it is built: the documents, the
//! resources their `$id`s name, their anchors, the base URI and draft in force at each schema,
//! and their patterns compiled. A `$ref` is then a lookup.

use std::collections::{HashMap, HashSet};
use std::sync::Arc;

use fancy_regex::Regex;
use serde_json::{Map, Value};

use crate::draft::Draft;
use crate::error::SchemaError;
use crate::meta_schemas;
use crate::path::push_segment;
use crate::pattern;
use crate::uri::{resolve, split_fragment};

/// A schema's place: a document, and a JSON Pointer into it.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub(crate) struct Location {
    pub(crate) document: usize,
    pub(crate) pointer: String,
}

/// What is in force inside a schema: the base its references resolve against, and its draft.
#[derive(Debug, Clone)]
pub(crate) struct Scope {
    pub(crate) base: Arc<str>,
    pub(crate) draft: Draft,
}

/// Where a reference leads: the schema's place and what is in force inside it.
#[derive(Debug, Clone)]
pub(crate) struct Target {
    pub(crate) location: Location,
    pub(crate) scope: Scope,
}

/// A reference keyword of a schema, resolved once every document is known.
#[derive(Debug, Clone)]
pub(crate) struct Reference {
    pub(crate) keyword: &'static str,
    /// The absolute URI it names.
    pub(crate) uri: String,
    pub(crate) target: Option<Target>,
    /// For `$dynamicRef`: the anchor's name, when its first target is a `$dynamicAnchor` of
    /// that name (the dynamic scope may then lead elsewhere).
    pub(crate) dynamic_name: Option<String>,
    /// For `$recursiveRef`: true when its first target has `"$recursiveAnchor": true`.
    pub(crate) recursive: bool,
}

/// What the registry knows of a schema: what is in force inside it, and its references.
#[derive(Debug)]
pub(crate) struct SchemaInfo {
    pub(crate) scope: Scope,
    pub(crate) references: Vec<Reference>,
}

#[derive(Debug, Default)]
pub(crate) struct Registry {
    documents: Vec<Value>,
    /// Each resource by its absolute URI, without a fragment.
    resources: HashMap<String, Location>,
    /// Each plain-name anchor, by resource and name.
    anchors: HashMap<String, HashMap<String, Location>>,
    /// The `$dynamicAnchor`s among them.
    dynamic_anchors: HashMap<String, HashSet<String>>,
    /// The resources whose root has `"$recursiveAnchor": true` (2019-09).
    recursive_anchors: HashSet<String>,
    /// Each schema a keyword leads to, by document and JSON Pointer.
    schemas: Vec<HashMap<String, SchemaInfo>>,
    regexes: HashMap<String, Regex>,
    /// The references met and not yet resolved: document, pointer, keyword, absolute URI.
    pending: Vec<(usize, String, &'static str, String)>,
    /// True when some schema uses `unevaluatedItems` or `unevaluatedProperties`: only then is
    /// what each keyword evaluated kept.
    pub(crate) uses_unevaluated: bool,
}

impl Registry {
    /// Adds a document, found under `uri` (or its own `$id`), in `draft` unless it names its own.
    pub(crate) fn add(&mut self, uri: &str, document: Value, draft: Draft) -> Result<usize, SchemaError> {
        let index = self.documents.len();
        let (uri, _) = split_fragment(uri);
        let root = Location { document: index, pointer: String::new() };
        self.resources.entry(uri.to_owned()).or_insert_with(|| root.clone());
        self.schemas.push(HashMap::new());
        let mut walk = Walk { registry: self, document: index, pointer: String::new() };
        walk.schema(&document, &Arc::from(uri), draft)?;
        self.documents.push(document);
        Ok(index)
    }

    /// Loads the meta-schemas that references lead to, refuses a reference of document `own`
    /// to an unknown resource (one in a document given beside it fails when followed), and
    /// resolves every reference.
    pub(crate) fn complete(&mut self, own: usize) -> Result<(), SchemaError> {
        let mut checked = 0;
        while checked < self.pending.len() {
            let (document, _, _, reference) = &self.pending[checked];
            let (document, reference) = (*document, reference.clone());
            checked += 1;
            let (resource, _) = split_fragment(&reference);
            if self.resources.contains_key(resource) {
                continue;
            }
            match meta_schemas::document(resource) {
                Some((meta_schema, draft)) => {
                    self.add(resource, meta_schema, draft)?;
                }
                None if document == own => {
                    return Err(SchemaError::new(format!("a `$ref` leads to `{reference}`, which is not known")));
                }
                None => {}
            }
        }
        for (document, pointer, keyword, uri) in std::mem::take(&mut self.pending) {
            let (resource, name) = split_fragment(&uri);
            // A target no keyword led to is read in the draft of the schema referring to it.
            let referrer = self.info(document, &pointer).map_or(Draft::Draft202012, |info| info.scope.draft);
            let target = self.locate(&uri).map(|location| {
                let scope = self.scope(&location, &uri, referrer);
                Target { location, scope }
            });
            let dynamic_name = (keyword == "$dynamicRef"
                && !name.is_empty()
                && !name.starts_with('/')
                && self.is_dynamic_anchor(resource, &name))
            .then_some(name);
            let recursive = keyword == "$recursiveRef" && self.is_recursive_anchor(resource);
            let reference = Reference { keyword, uri: uri.clone(), target, dynamic_name, recursive };
            if let Some(info) = self.schemas[document].get_mut(&pointer) {
                info.references.push(reference);
            }
        }
        Ok(())
    }

    /// The schema at `location`.
    pub(crate) fn get(&self, location: &Location) -> Option<&Value> {
        self.documents.get(location.document)?.pointer(&location.pointer)
    }

    /// What the registry knows of the schema at `pointer` in `document`.
    pub(crate) fn info(&self, document: usize, pointer: &str) -> Option<&SchemaInfo> {
        self.schemas.get(document)?.get(pointer)
    }

    /// Where the absolute URI `uri` leads: a resource, a JSON Pointer into one, or an anchor.
    pub(crate) fn locate(&self, uri: &str) -> Option<Location> {
        let (resource, fragment) = split_fragment(uri);
        if fragment.is_empty() {
            return self.resources.get(resource).cloned();
        }
        if fragment.starts_with('/') {
            let root = self.resources.get(resource)?;
            let location = Location { document: root.document, pointer: format!("{}{fragment}", root.pointer) };
            return self.get(&location).is_some().then_some(location);
        }
        self.anchor(resource, &fragment)
    }

    /// The schema of the plain-name anchor `name` in `resource`.
    pub(crate) fn anchor(&self, resource: &str, name: &str) -> Option<Location> {
        self.anchors.get(resource)?.get(name).cloned()
    }

    /// What is in force inside the schema at `location`, reached by a reference to `uri`.
    pub(crate) fn scope(&self, location: &Location, uri: &str, fallback: Draft) -> Scope {
        match self.info(location.document, &location.pointer) {
            Some(info) => info.scope.clone(),
            // A place no keyword leads to (inside an unknown keyword): the resource's base.
            None => Scope { base: Arc::from(split_fragment(uri).0), draft: fallback },
        }
    }

    pub(crate) fn is_dynamic_anchor(&self, resource: &str, name: &str) -> bool {
        self.dynamic_anchors.get(resource).is_some_and(|names| names.contains(name))
    }

    pub(crate) fn is_recursive_anchor(&self, resource: &str) -> bool {
        self.recursive_anchors.contains(resource)
    }

    /// The root of the resource `uri`.
    pub(crate) fn resource(&self, uri: &str) -> Option<Location> {
        self.resources.get(uri).cloned()
    }

    pub(crate) fn regex(&self, pattern: &str) -> Option<&Regex> {
        self.regexes.get(pattern)
    }

    fn add_anchor(&mut self, resource: &str, name: &str, location: Location) {
        self.anchors.entry(resource.to_owned()).or_default().insert(name.to_owned(), location);
    }
}

/// A walk over one document's schemas, indexing them.
struct Walk<'r> {
    registry: &'r mut Registry,
    document: usize,
    pointer: String,
}

impl Walk<'_> {
    fn schema(&mut self, value: &Value, base: &Arc<str>, draft: Draft) -> Result<(), SchemaError> {
        let Value::Object(object) = value else { return Ok(()) };
        let draft = Draft::named_by(value).unwrap_or(draft);
        let here = Location { document: self.document, pointer: self.pointer.clone() };
        let mut base = base.clone();
        let hides_siblings = draft.ref_hides_siblings() && object.contains_key("$ref");
        if let Some(Value::String(id)) = object.get(draft.id_keyword())
            && !hides_siblings
        {
            if draft <= Draft::Draft7
                && let Some(name) = id.strip_prefix('#')
            {
                self.registry.add_anchor(&base, name, here.clone());
            } else {
                let resolved = resolve(&base, id);
                let (resource, fragment) = split_fragment(&resolved);
                base = Arc::from(resource);
                self.registry.resources.entry(resource.to_owned()).or_insert_with(|| here.clone());
                if !fragment.is_empty() {
                    self.registry.add_anchor(resource, &fragment, here.clone());
                }
            }
        }
        if draft >= Draft::Draft201909
            && let Some(Value::String(anchor)) = object.get("$anchor")
        {
            self.registry.add_anchor(&base, anchor, here.clone());
        }
        if draft == Draft::Draft202012
            && let Some(Value::String(anchor)) = object.get("$dynamicAnchor")
        {
            self.registry.add_anchor(&base, anchor, here.clone());
            self.registry.dynamic_anchors.entry(base.to_string()).or_default().insert(anchor.clone());
        }
        if draft == Draft::Draft201909 && object.get("$recursiveAnchor") == Some(&Value::Bool(true)) {
            self.registry.recursive_anchors.insert(base.to_string());
        }
        if let Some(Value::String(pattern)) = object.get("pattern") {
            self.pattern(pattern)?;
        }
        if let Some(Value::Object(patterns)) = object.get("patternProperties") {
            for pattern in patterns.keys() {
                self.pattern(pattern)?;
            }
        }
        for keyword in ["$ref", "$dynamicRef", "$recursiveRef"] {
            if let Some(Value::String(reference)) = object.get(keyword) {
                let uri = resolve(&base, reference);
                self.registry.pending.push((self.document, self.pointer.clone(), keyword, uri));
            }
        }
        if draft.has_unevaluated()
            && (object.contains_key("unevaluatedItems") || object.contains_key("unevaluatedProperties"))
        {
            self.registry.uses_unevaluated = true;
        }
        let info = SchemaInfo { scope: Scope { base: base.clone(), draft }, references: Vec::new() };
        self.registry.schemas[self.document].insert(here.pointer, info);
        self.children(object, &base, draft)
    }

    /// The schemas inside a schema, by the keywords that hold schemas (a value inside `enum`
    /// or an unknown keyword is not one, whatever it looks like).
    fn children(&mut self, object: &Map<String, Value>, base: &Arc<str>, draft: Draft) -> Result<(), SchemaError> {
        for (keyword, value) in object {
            match (keyword.as_str(), value) {
                (
                    "properties" | "patternProperties" | "$defs" | "definitions" | "dependentSchemas" | "dependencies",
                    Value::Object(map),
                ) => {
                    for (name, child) in map {
                        self.at(&[keyword, name], child, base, draft)?;
                    }
                }
                ("allOf" | "anyOf" | "oneOf" | "prefixItems" | "items", Value::Array(items)) => {
                    for (index, child) in items.iter().enumerate() {
                        self.at(&[keyword, &index.to_string()], child, base, draft)?;
                    }
                }
                (
                    "items"
                    | "additionalItems"
                    | "additionalProperties"
                    | "contains"
                    | "propertyNames"
                    | "if"
                    | "then"
                    | "else"
                    | "not"
                    | "unevaluatedItems"
                    | "unevaluatedProperties"
                    | "contentSchema",
                    child,
                ) => self.at(&[keyword], child, base, draft)?,
                _ => {}
            }
        }
        Ok(())
    }

    fn at(&mut self, segments: &[&str], child: &Value, base: &Arc<str>, draft: Draft) -> Result<(), SchemaError> {
        let length = self.pointer.len();
        for segment in segments {
            push_segment(&mut self.pointer, segment);
        }
        let walked = self.schema(child, base, draft);
        self.pointer.truncate(length);
        walked
    }

    fn pattern(&mut self, pattern: &str) -> Result<(), SchemaError> {
        if !self.registry.regexes.contains_key(pattern) {
            let regex = pattern::compile(pattern)
                .map_err(|err| SchemaError::new(format!("`{pattern}` is not a regular expression: {err}")))?;
            self.registry.regexes.insert(pattern.to_owned(), regex);
        }
        Ok(())
    }
}
