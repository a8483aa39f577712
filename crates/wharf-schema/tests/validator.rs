//! What Wharf relies on beyond the suite's valid/invalid verdicts: where an error points (in
//! the value and in the schema), what it says, the schemas refused at build, and schemas that
//! refer to themselves forever.

use serde_json::json;
use wharf_schema::{Draft, Validator, meta};

#[test]
fn an_error_names_its_keyword_the_values_place_and_the_keywords_place_refs_followed() {
    let schema = json!({
        "type": "object",
        "properties": {"level": {"$ref": "#/$defs/Level"}, "a/b": {"type": "integer"}},
        "$defs": {"Level": {"oneOf": [{"const": "low"}, {"const": "high"}]}}
    });
    let validator = Validator::new(&schema).unwrap();
    let errors = validator.errors(&json!({"level": "medium", "a/b": "x"}));
    assert_eq!(errors.len(), 2, "{errors:?}");
    let level = errors.iter().find(|error| error.instance_path() == "/level").unwrap();
    assert_eq!(level.keyword(), "oneOf");
    assert_eq!(level.schema_location(), "/$defs/Level/oneOf");
    assert_eq!(level.instance(), &json!("medium"));
    let escaped = errors.iter().find(|error| error.instance_path() == "/a~1b").unwrap();
    assert_eq!(escaped.schema_location(), "/properties/a~1b/type");
    assert_eq!(escaped.to_string(), "\"x\" is not of type \"integer\"");
    assert!(validator.validate(&json!({"level": "low"})).is_ok());
}

#[test]
fn an_enum_error_carries_the_allowed_values() {
    let validator = Validator::new(&json!({"enum": ["a", "b", 3]})).unwrap();
    let error = validator.validate(&json!("c")).unwrap_err();
    assert_eq!(error.keyword(), "enum");
    assert_eq!(error.allowed(), Some(&json!(["a", "b", 3])));
    assert_eq!(error.to_string(), r#""c" is not one of "a", "b" or 3"#);
}

#[test]
fn messages_quote_a_long_value_cut_short_and_list_unexpected_properties() {
    let validator = Validator::new(&json!({"type": "integer"})).unwrap();
    let long = "x".repeat(10_000);
    let message = validator.validate(&json!(long)).unwrap_err().to_string();
    assert!(message.len() < 200 && message.ends_with("is not of type \"integer\""), "{message}");
    let closed = Validator::new(&json!({"properties": {"a": {}}, "additionalProperties": false})).unwrap();
    let error = closed.validate(&json!({"a": 1, "b": 2, "c": 3})).unwrap_err();
    assert_eq!(error.to_string(), r#"additional properties are not allowed ("b", "c" were unexpected)"#);
}

#[test]
fn every_error_is_found_up_to_a_hundred() {
    let validator = Validator::new(&json!({"items": {"type": "string"}})).unwrap();
    let items: Vec<i32> = (0..500).collect();
    assert_eq!(validator.errors(&json!(items)).len(), 100);
    assert!(!validator.is_valid(&json!([1])));
}

#[test]
fn formats_are_annotations_unless_asserted() {
    let schema = json!({"format": "date-time"});
    assert!(Validator::new(&schema).unwrap().is_valid(&json!("yesterday")));
    let asserting = Validator::options().assert_formats(true).build(&schema).unwrap();
    assert!(!asserting.is_valid(&json!("yesterday")));
    assert!(asserting.is_valid(&json!("2026-11-28T12:00:00Z")));
    assert_eq!(asserting.validate(&json!("yesterday")).unwrap_err().keyword(), "format");
}

#[test]
fn a_schema_that_is_not_one_or_refers_to_nothing_known_is_refused_at_build() {
    let made_up = json!({"type": "object", "properties": {"n": {"type": "float"}}});
    let error = Validator::new(&made_up).unwrap_err().to_string();
    assert!(error.contains("/properties/n/type"), "{error}");
    assert!(meta::validate(&made_up, Draft::Draft202012).is_err());
    assert!(meta::validate(&json!({"type": "object"}), Draft::Draft7).is_ok());
    let error = Validator::new(&json!({"$ref": "https://example.com/elsewhere.json"})).unwrap_err().to_string();
    assert!(error.contains("https://example.com/elsewhere.json"), "{error}");
    let error = Validator::new(&json!({"pattern": "(unclosed"})).unwrap_err().to_string();
    assert!(error.contains("(unclosed"), "{error}");
    // Without the check, a pointer to nothing is an error when it is followed.
    let dangling = Validator::options().check_schema(false).build(&json!({"$ref": "#/$defs/missing"})).unwrap();
    assert_eq!(dangling.validate(&json!(1)).unwrap_err().keyword(), "$ref");
}

#[test]
fn a_schema_that_refers_to_itself_without_end_is_refused_not_overflowed() {
    let validator = Validator::new(&json!({"$ref": "#", "type": "object"})).unwrap();
    let error = validator.validate(&json!({})).unwrap_err();
    assert_eq!(error.keyword(), "$ref");
    assert!(error.to_string().contains("nested deeper than"), "{error}");
    // A recursive schema that consumes the value is fine, however deep the value.
    let tree = Validator::new(&json!({"type": "object", "properties": {"child": {"$ref": "#"}}})).unwrap();
    let mut value = json!({});
    for _ in 0..120 {
        value = json!({"child": value});
    }
    assert!(tree.is_valid(&value));
    assert_eq!(tree.errors(&value), []);
}

#[test]
fn the_draft_a_schema_names_is_the_draft_it_is_read_in() {
    // Draft 7: `$ref` hides its siblings; 2020-12: it does not.
    let schema = |draft: &str| json!({"$schema": draft, "$ref": "#/definitions/any", "type": "string", "definitions": {"any": {}}});
    assert!(Validator::new(&schema("http://json-schema.org/draft-07/schema#")).unwrap().is_valid(&json!(1)));
    assert!(!Validator::new(&schema("https://json-schema.org/draft/2020-12/schema")).unwrap().is_valid(&json!(1)));
    // Draft 4: `exclusiveMaximum` is a flag of `maximum`.
    let draft4 = json!({"$schema": "http://json-schema.org/draft-04/schema#", "maximum": 3, "exclusiveMaximum": true});
    assert!(!Validator::new(&draft4).unwrap().is_valid(&json!(3)));
    assert_eq!(Draft::from_uri("https://json-schema.org/draft/2019-09/schema"), Some(Draft::Draft201909));
}

#[test]
fn a_bound_says_which_and_whether_it_is_exclusive() {
    let said = |schema: serde_json::Value, value: serde_json::Value| {
        Validator::new(&schema).unwrap().validate(&value).unwrap_err().to_string()
    };
    assert_eq!(said(json!({"maximum": 2}), json!(3)), "3 is greater than the maximum of 2");
    assert_eq!(said(json!({"minimum": 2}), json!(1.5)), "1.5 is less than the minimum of 2");
    assert_eq!(
        said(json!({"exclusiveMaximum": 2}), json!(2)),
        "2 is greater than or equal to the exclusive maximum of 2"
    );
    assert_eq!(said(json!({"exclusiveMinimum": 2}), json!(2)), "2 is less than or equal to the exclusive minimum of 2");
    let draft4 = json!({"$schema": "http://json-schema.org/draft-04/schema#", "minimum": 3, "exclusiveMinimum": true});
    assert_eq!(said(draft4, json!(3)), "3 is less than or equal to the minimum of 3");
    assert!(Validator::new(&json!({"maximum": 2})).unwrap().is_valid(&json!(2)));
}

#[test]
fn a_target_no_keyword_leads_to_is_read_in_the_draft_of_its_referrer() {
    // `x-hidden` is no keyword, so the walk never met `a`; it is still draft 7, where `$ref`
    // hides the `type` beside it.
    let schema = json!({
        "$schema": "http://json-schema.org/draft-07/schema#",
        "$ref": "#/x-hidden/a",
        "x-hidden": {"a": {"$ref": "#/definitions/any", "type": "string"}},
        "definitions": {"any": {}}
    });
    assert!(Validator::new(&schema).unwrap().is_valid(&json!(1)));
}
