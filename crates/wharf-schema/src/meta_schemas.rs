//! The meta-schemas of the drafts, as json-schema.org publishes them (minified, in `meta/`),
//! kept in the crate: a schema may `$ref` them, and a schema is checked against its draft's.

use serde_json::Value;

use crate::draft::Draft;

/// The text of each meta-schema document by its URI, vocabularies included.
const DOCUMENTS: &[(&str, &str)] = &[
    ("http://json-schema.org/draft-04/schema", include_str!("../meta/draft4.json")),
    ("http://json-schema.org/draft-06/schema", include_str!("../meta/draft6.json")),
    ("http://json-schema.org/draft-07/schema", include_str!("../meta/draft7.json")),
    ("https://json-schema.org/draft/2019-09/schema", include_str!("../meta/draft201909.json")),
    ("https://json-schema.org/draft/2019-09/meta/applicator", include_str!("../meta/draft201909-applicator.json")),
    ("https://json-schema.org/draft/2019-09/meta/content", include_str!("../meta/draft201909-content.json")),
    ("https://json-schema.org/draft/2019-09/meta/core", include_str!("../meta/draft201909-core.json")),
    ("https://json-schema.org/draft/2019-09/meta/format", include_str!("../meta/draft201909-format.json")),
    ("https://json-schema.org/draft/2019-09/meta/meta-data", include_str!("../meta/draft201909-meta-data.json")),
    ("https://json-schema.org/draft/2019-09/meta/validation", include_str!("../meta/draft201909-validation.json")),
    ("https://json-schema.org/draft/2020-12/schema", include_str!("../meta/draft202012.json")),
    ("https://json-schema.org/draft/2020-12/meta/applicator", include_str!("../meta/draft202012-applicator.json")),
    ("https://json-schema.org/draft/2020-12/meta/content", include_str!("../meta/draft202012-content.json")),
    ("https://json-schema.org/draft/2020-12/meta/core", include_str!("../meta/draft202012-core.json")),
    (
        "https://json-schema.org/draft/2020-12/meta/format-annotation",
        include_str!("../meta/draft202012-format-annotation.json"),
    ),
    (
        "https://json-schema.org/draft/2020-12/meta/format-assertion",
        include_str!("../meta/draft202012-format-assertion.json"),
    ),
    ("https://json-schema.org/draft/2020-12/meta/meta-data", include_str!("../meta/draft202012-meta-data.json")),
    ("https://json-schema.org/draft/2020-12/meta/unevaluated", include_str!("../meta/draft202012-unevaluated.json")),
    ("https://json-schema.org/draft/2020-12/meta/validation", include_str!("../meta/draft202012-validation.json")),
];

/// The meta-schema document at `uri` (without its fragment), and its draft.
pub(crate) fn document(uri: &str) -> Option<(Value, Draft)> {
    let text = DOCUMENTS.iter().find(|(known, _)| *known == uri)?.1;
    let document: Value = serde_json::from_str(text).ok()?;
    let draft = Draft::named_by(&document)?;
    Some((document, draft))
}

/// The URI of `draft`'s meta-schema.
pub(crate) fn meta_schema_uri(draft: Draft) -> &'static str {
    match draft {
        Draft::Draft4 => DOCUMENTS[0].0,
        Draft::Draft6 => DOCUMENTS[1].0,
        Draft::Draft7 => DOCUMENTS[2].0,
        Draft::Draft201909 => DOCUMENTS[3].0,
        Draft::Draft202012 => DOCUMENTS[10].0,
    }
}
