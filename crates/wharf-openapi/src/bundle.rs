//! References to other documents, followed only when allowed: each document a `$ref` names
//! (a file beside the document, or a URL) is read once and put inside the root document under
//! `x-wharf-external`, every reference rewritten to point there, so that the rest of the crate
//! reads one document. A document read from a URL never reaches a file; at most 64 are read.

use std::collections::HashMap;
use std::path::{Component, Path, PathBuf};

use serde_json::{Map, Value};

use crate::error::{OpenApiError, OpenApiErrorKind};
use crate::http::Http;

/// Where the documents read are put in the root document.
const EXTERNAL: &str = "x-wharf-external";

/// The most documents read besides the root.
const MAX_DOCUMENTS: usize = 64;

/// The largest document read.
const MAX_DOCUMENT_BYTES: usize = 64 * 1024 * 1024;

/// Where a document was read from.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Location {
    File(PathBuf),
    Url(String),
}

impl Location {
    /// Where `reference` (a `$ref` without its fragment) leads from a document read here;
    /// an error for a file named by a document read from a URL.
    fn join(&self, reference: &str) -> Result<Location, String> {
        if reference.starts_with("http://") || reference.starts_with("https://") {
            return Ok(Location::Url(reference.to_owned()));
        }
        match self {
            Location::File(path) => {
                let beside = path.parent().unwrap_or(Path::new(".")).join(reference.trim_start_matches("file://"));
                Ok(Location::File(normalized(&beside)))
            }
            Location::Url(_) if reference.starts_with("file:") => {
                Err(format!("`{reference}`: a document read from a URL cannot name a file"))
            }
            Location::Url(url) => Ok(Location::Url(join_url(url, reference))),
        }
    }

    fn label(&self) -> String {
        match self {
            Location::File(path) => path.display().to_string(),
            Location::Url(url) => url.clone(),
        }
    }
}

/// `path` with `.` and `..` resolved, without touching the file system.
fn normalized(path: &Path) -> PathBuf {
    let mut parts: Vec<Component<'_>> = Vec::new();
    for part in path.components() {
        match part {
            Component::CurDir => {}
            Component::ParentDir if matches!(parts.last(), Some(Component::Normal(_))) => {
                parts.pop();
            }
            other => parts.push(other),
        }
    }
    parts.iter().collect()
}

/// `reference` resolved against `base` (RFC 3986, for the paths documents use).
fn join_url(base: &str, reference: &str) -> String {
    let (scheme, rest) = base.split_once("://").unwrap_or(("http", base));
    let authority_end = rest.find('/').unwrap_or(rest.len());
    let (authority, path) = rest.split_at(authority_end);
    let path = path.split(['?', '#']).next().unwrap_or_default();
    let joined = if reference.starts_with('/') {
        reference.to_owned()
    } else {
        format!("{}{reference}", &path[..path.rfind('/').map_or(0, |at| at + 1)])
    };
    let mut segments: Vec<&str> = Vec::new();
    for segment in joined.split('/') {
        match segment {
            "." => {}
            ".." => {
                if segments.len() > 1 {
                    segments.pop();
                }
            }
            other => segments.push(other),
        }
    }
    let path = segments.join("/");
    let path = if path.starts_with('/') { path } else { format!("/{path}") };
    format!("{scheme}://{authority}{path}")
}

/// Reads the document at `location`: JSON, or YAML.
async fn load(location: &Location, http: &Http) -> Result<Value, String> {
    let text = match location {
        Location::File(path) => std::fs::read_to_string(path).map_err(|err| err.to_string())?,
        Location::Url(url) => http.fetch(url, MAX_DOCUMENT_BYTES).await?,
    };
    if text.trim_start().starts_with('{') {
        serde_json::from_str(&text).map_err(|err| err.to_string())
    } else {
        wharf_frontmatter::yaml_document(&text).map_err(|err| err.to_string())
    }
}

/// `root`, read at `location`, with every document its references name (and theirs) inside
/// it and the references rewritten to them.
pub(crate) async fn bundle(mut root: Value, location: &Location) -> Result<Value, OpenApiError> {
    let http = Http::new().map_err(|why| OpenApiError::new(OpenApiErrorKind::Unreachable, why))?;
    let mut known: HashMap<String, usize> = HashMap::new();
    let mut documents: Vec<(Location, Value)> = Vec::new();
    let mut pending: Vec<(String, Location)> = Vec::new();
    rewrite(&mut root, location, None, &mut known, &mut pending)?;
    while let Some((label, next)) = pending.pop() {
        let index = known[&label];
        let mut document = load(&next, &http).await.map_err(|why| {
            OpenApiError::new(
                OpenApiErrorKind::Reference,
                format!("`{label}`, which a `$ref` names, could not be read: {why}"),
            )
        })?;
        rewrite(&mut document, &next, Some(index), &mut known, &mut pending)?;
        documents.push((next, document));
        if known.len() > MAX_DOCUMENTS {
            return Err(OpenApiError::new(
                OpenApiErrorKind::Reference,
                format!("the document's references name more than {MAX_DOCUMENTS} other documents"),
            ));
        }
    }
    if let Value::Object(object) = &mut root
        && !documents.is_empty()
    {
        let mut external = Map::new();
        for (location, document) in documents {
            external.insert(known[&location.label()].to_string(), document);
        }
        object.insert(EXTERNAL.to_owned(), Value::Object(external));
    }
    Ok(root)
}

/// Rewrites the references in `value`, part of the document read at `location` (the root, or
/// the external document `index`): its own to where it is put, others to where theirs will
/// be, which are queued in `pending` when met first.
fn rewrite(
    value: &mut Value,
    location: &Location,
    index: Option<usize>,
    known: &mut HashMap<String, usize>,
    pending: &mut Vec<(String, Location)>,
) -> Result<(), OpenApiError> {
    match value {
        Value::Object(object) => {
            if let Some(Value::String(reference)) = object.get_mut("$ref") {
                let (document, fragment) = reference.split_once('#').unwrap_or((reference.as_str(), ""));
                let target = if document.is_empty() {
                    index
                } else {
                    let joined =
                        location.join(document).map_err(|why| OpenApiError::new(OpenApiErrorKind::Reference, why))?;
                    let label = joined.label();
                    let next = known.len();
                    let found = *known.entry(label.clone()).or_insert_with(|| {
                        pending.push((label, joined));
                        next
                    });
                    Some(found)
                };
                if let Some(target) = target {
                    *reference = format!("#/{EXTERNAL}/{target}{fragment}");
                }
            }
            for member in object.values_mut() {
                rewrite(member, location, index, known, pending)?;
            }
        }
        Value::Array(items) => {
            for item in items {
                rewrite(item, location, index, known, pending)?;
            }
        }
        _ => {}
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn references_are_resolved_against_where_their_document_was_read() {
        assert_eq!(
            join_url("http://a.example/api/v1/openapi.json", "schemas.yaml"),
            "http://a.example/api/v1/schemas.yaml"
        );
        assert_eq!(
            join_url("http://a.example/api/v1/openapi.json", "../common/x.json"),
            "http://a.example/api/common/x.json"
        );
        assert_eq!(join_url("http://a.example/api/openapi.json", "/x.json"), "http://a.example/x.json");
        assert_eq!(join_url("http://a.example/openapi.json", "../../../x.json"), "http://a.example/x.json");
        let file = Location::File(PathBuf::from("/specs/api/openapi.yaml"));
        assert_eq!(file.join("../common/pet.yaml").unwrap(), Location::File(PathBuf::from("/specs/common/pet.yaml")));
        let url = Location::Url("http://a.example/openapi.json".to_owned());
        assert!(url.join("file:///etc/passwd").unwrap_err().contains("cannot name a file"));
    }

    #[tokio::test]
    async fn documents_named_by_references_are_put_inside_the_root_once() {
        let dir = std::env::temp_dir().join(format!("wharf-openapi-bundle-{}", std::process::id()));
        std::fs::create_dir_all(dir.join("common")).unwrap();
        std::fs::write(
            dir.join("common/pet.yaml"),
            "Pet:\n  type: object\n  properties:\n    owner: {$ref: 'person.json#/Person'}\n    friend: {$ref: '#/Pet'}\n",
        )
        .unwrap();
        std::fs::write(dir.join("common/person.json"), r#"{"Person": {"type": "string"}}"#).unwrap();
        let root = json!({"a": {"$ref": "common/pet.yaml#/Pet"}, "b": {"$ref": "./common/pet.yaml#/Pet"}, "c": {"$ref": "#/a"}});
        let bundled = bundle(root, &Location::File(dir.join("openapi.json"))).await.unwrap();
        std::fs::remove_dir_all(&dir).unwrap();
        assert_eq!(bundled["a"], json!({"$ref": "#/x-wharf-external/0/Pet"}));
        assert_eq!(bundled["b"], bundled["a"], "one document read once");
        assert_eq!(bundled["c"], json!({"$ref": "#/a"}));
        let pet = &bundled["x-wharf-external"]["0"]["Pet"]["properties"];
        assert_eq!(pet["owner"], json!({"$ref": "#/x-wharf-external/1/Person"}));
        assert_eq!(pet["friend"], json!({"$ref": "#/x-wharf-external/0/Pet"}));
        assert_eq!(bundled["x-wharf-external"]["1"]["Person"], json!({"type": "string"}));
        let missing =
            bundle(json!({"$ref": "nope.json#/x"}), &Location::File(PathBuf::from("/nonexistent/openapi.json"))).await;
        assert!(missing.unwrap_err().to_string().contains("could not be read"));
    }
}
