//! Wharf's JSON encoder writes exactly the bytes `serde_json` writes, for every kind of value
//! serde knows, every string, the specification's own documents and Wharf's message types.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use serde::{Serialize, Serializer};
use serde_json::Value;
use serde_json::value::RawValue;
use wharf_protocol::*;
use wharf_testkit::schemas::spec_dir;

/// Encodes `value` with both encoders and insists on the same bytes (or on both failing).
#[track_caller]
fn assert_same<T: Serialize + ?Sized>(value: &T) {
    let theirs = serde_json::to_vec(value);
    let ours = encode(value);
    match (theirs, ours) {
        (Ok(theirs), Ok(ours)) => assert_eq!(
            String::from_utf8_lossy(&ours),
            String::from_utf8_lossy(&theirs),
            "Wharf's encoding differs from serde_json's"
        ),
        (Err(_), Err(_)) => {}
        (theirs, ours) => panic!("serde_json gave {theirs:?}, Wharf gave {ours:?}"),
    }
}

#[test]
fn every_ascii_character_and_some_beyond_are_written_as_serde_json_writes_them() {
    for byte in 0u8..=0x7F {
        assert_same(&(byte as char).to_string());
        assert_same(&(byte as char));
    }
    for text in ["é", "日本語", "emoji 🦀 here", "\u{2028}\u{2029}", "\u{7f}\u{80}\u{ff}", "\u{FEFF}bom"] {
        assert_same(text);
    }
}

/// The encoder looks at eight bytes at a time; an escape must be found at every position of a
/// word, in the first word, a later word and the tail, next to characters beyond ASCII.
#[test]
fn an_escape_is_found_wherever_it_stands() {
    for special in ['"', '\\', '\n', '\u{0}', '\u{1f}', '\u{8}', '\u{c}', '\r', '\t'] {
        for length in 0..40 {
            for at in 0..=length {
                let mut text: String = (0..length).map(|index| if index % 5 == 3 { 'ü' } else { 'a' }).collect();
                let at = text.char_indices().nth(at).map_or(text.len(), |(index, _)| index);
                text.insert(at, special);
                assert_same(&text);
            }
        }
    }
}

/// Every part of serde's data model.
#[derive(Serialize)]
enum Variants {
    Unit,
    Newtype(i32),
    Tuple(u8, String),
    Struct { name: &'static str, nested: Option<Box<Variants>> },
}

#[derive(Serialize)]
struct TupleStruct(i8, f32);

#[derive(Serialize)]
struct UnitStruct;

#[derive(Serialize)]
struct Newtype(String);

#[derive(Serialize)]
struct Everything {
    boolean: bool,
    small: (i8, i16, i32, i64, u8, u16, u32, u64),
    wide: (i128, u128),
    extremes: (i64, u64, i128, u128),
    floats: Vec<f64>,
    narrow_floats: Vec<f32>,
    character: char,
    nothing: Option<u8>,
    something: Option<&'static str>,
    unit: (),
    unit_struct: UnitStruct,
    newtype: Newtype,
    tuple_struct: TupleStruct,
    variants: Vec<Variants>,
    bytes: Bytes,
    empty_list: Vec<u8>,
    empty_map: BTreeMap<String, u8>,
    #[serde(rename = "renamed \"member\"\n")]
    escaped_member: u8,
    #[serde(flatten)]
    flattened: BTreeMap<String, Value>,
    raw: Box<RawValue>,
}

/// Bytes, which serde hands to `serialize_bytes` only when asked.
struct Bytes(Vec<u8>);

impl Serialize for Bytes {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.serialize_bytes(&self.0)
    }
}

#[test]
fn every_kind_of_value_is_written_as_serde_json_writes_it() {
    let everything = Everything {
        boolean: true,
        small: (-8, -16, -32, -64, 8, 16, 32, 64),
        wide: (-170_141_183_460_469_231_731_687_303_715_884_105_728, u128::MAX),
        extremes: (i64::MIN, u64::MAX, i128::MAX, 0),
        floats: vec![
            0.0,
            -0.0,
            1.5,
            -2.25e-300,
            1e300,
            f64::MAX,
            f64::MIN_POSITIVE,
            0.1 + 0.2,
            f64::NAN,
            f64::INFINITY,
        ],
        narrow_floats: vec![0.1, f32::MAX, f32::NEG_INFINITY, 3.0],
        character: '"',
        nothing: None,
        something: Some("x"),
        unit: (),
        unit_struct: UnitStruct,
        newtype: Newtype("inside".to_owned()),
        tuple_struct: TupleStruct(-1, 0.5),
        variants: vec![
            Variants::Unit,
            Variants::Newtype(7),
            Variants::Tuple(1, "two".to_owned()),
            Variants::Struct {
                name: "outer",
                nested: Some(Box::new(Variants::Struct { name: "inner", nested: None })),
            },
        ],
        bytes: Bytes(vec![0, 1, 127, 255]),
        empty_list: Vec::new(),
        empty_map: BTreeMap::new(),
        escaped_member: 1,
        flattened: BTreeMap::from([("extra".to_owned(), serde_json::json!({"a": [1, "b", null]}))]),
        raw: RawValue::from_string(r#"{"kept" : [1, 2]}"#.to_owned()).unwrap(),
    };
    assert_same(&everything);
    assert_same(&Bytes(Vec::new()));
    assert_same(&Variants::Unit);
    assert_same(&[(); 0]);
}

/// A map key of its own kind, to reach every way a key can be written.
#[derive(Serialize, PartialEq, Eq, PartialOrd, Ord)]
enum UnitKey {
    First,
    Second,
}

#[derive(Serialize)]
struct FloatKey(f64);

impl PartialEq for FloatKey {
    fn eq(&self, other: &FloatKey) -> bool {
        self.0.total_cmp(&other.0).is_eq()
    }
}

impl Eq for FloatKey {}

impl PartialOrd for FloatKey {
    fn partial_cmp(&self, other: &FloatKey) -> Option<std::cmp::Ordering> {
        Some(self.cmp(other))
    }
}

impl Ord for FloatKey {
    fn cmp(&self, other: &FloatKey) -> std::cmp::Ordering {
        self.0.total_cmp(&other.0)
    }
}

#[test]
fn map_keys_are_written_or_refused_as_serde_json_does() {
    assert_same(&BTreeMap::from([("plain", 1), ("with \"quote\"", 2), ("", 3)]));
    assert_same(&BTreeMap::from([(-5i64, "a"), (7, "b")]));
    assert_same(&BTreeMap::from([(u128::MAX, 1)]));
    assert_same(&BTreeMap::from([(true, 1), (false, 2)]));
    assert_same(&BTreeMap::from([('k', 1), ('"', 2)]));
    assert_same(&BTreeMap::from([(UnitKey::First, 1), (UnitKey::Second, 2)]));
    assert_same(&BTreeMap::from([(Some("opt"), 1)]));
    assert_same(&BTreeMap::from([(FloatKey(1.5), 1), (FloatKey(-0.0), 2)]));
    // Refused by both.
    assert_same(&BTreeMap::from([(FloatKey(f64::NAN), 1)]));
    assert_same(&BTreeMap::from([(vec![1], 1)]));
    assert_same(&BTreeMap::from([(None::<&str>, 1)]));
    assert_same(&BTreeMap::from([((), 1)]));
}

/// A generator of JSON values with awkward strings, deterministic so that a failure repeats.
struct Values(u64);

impl Values {
    fn next(&mut self) -> u64 {
        // xorshift64*
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_F491_4F6C_DD1D)
    }

    fn below(&mut self, bound: u64) -> u64 {
        self.next() % bound
    }

    fn string(&mut self) -> String {
        const PIECES: &[&str] =
            &["a", "Z", "0", " ", "\"", "\\", "/", "\n", "\u{1}", "\u{1f}", "é", "€", "🦀", "\u{7f}"];
        let length = self.below(24);
        (0..length).map(|_| PIECES[self.below(PIECES.len() as u64) as usize]).collect()
    }

    fn value(&mut self, depth: u32) -> Value {
        let kinds = if depth == 0 { 5 } else { 7 };
        match self.below(kinds) {
            0 => Value::Null,
            1 => Value::Bool(self.below(2) == 1),
            2 => match self.below(3) {
                0 => Value::from(self.next() as i64),
                1 => Value::from(self.next()),
                _ => Value::from(f64::from_bits(self.next() >> 2)),
            },
            3 | 4 => Value::String(self.string()),
            5 => Value::Array((0..self.below(5)).map(|_| self.value(depth - 1)).collect()),
            _ => Value::Object((0..self.below(5)).map(|_| (self.string(), self.value(depth - 1))).collect()),
        }
    }
}

#[test]
fn random_values_are_written_as_serde_json_writes_them() {
    let mut values = Values(0x9E37_79B9_7F4A_7C15);
    for _ in 0..3_000 {
        assert_same(&values.value(4));
    }
}

fn json_files(dir: &Path, found: &mut Vec<PathBuf>) {
    for entry in std::fs::read_dir(dir).unwrap_or_else(|err| panic!("cannot read {}: {err}", dir.display())) {
        let path = entry.unwrap().path();
        if path.is_dir() {
            json_files(&path, found);
        } else if path.extension().is_some_and(|extension| extension == "json") {
            found.push(path);
        }
    }
}

/// Every schema of every revision and every example message, as JSON values and (for the
/// examples) through Wharf's own types.
#[test]
fn the_specification_documents_are_written_as_serde_json_writes_them() {
    let mut files = Vec::new();
    json_files(&spec_dir(), &mut files);
    assert!(files.len() > 90, "only {} JSON files under mcp-spec", files.len());
    for path in &files {
        let value: Value = serde_json::from_slice(&std::fs::read(path).unwrap()).unwrap();
        assert_same(&value);
        // Wharf's types, where the document is one.
        if let Ok(result) = serde_json::from_value::<CallToolResult>(value["result"].clone()) {
            assert_same(&result);
        }
        if let Ok(tool) = serde_json::from_value::<Tool>(value.clone()) {
            assert_same(&tool);
        }
        if let Ok(params) = serde_json::from_value::<CallToolParams>(value["params"].clone()) {
            assert_same(&params);
        }
    }
}

#[test]
fn wharf_messages_are_written_as_serde_json_writes_them() {
    let arguments: ToolArguments = serde_json::from_str(r#"{"message": "hi\n", "n": [1, 2.5]}"#).unwrap();
    let params = CallToolParams { name: "echo".to_owned(), arguments: Some(arguments), ..Default::default() };
    let id = RequestId::from(3);
    assert_same(&RequestMessage { jsonrpc: JsonRpc2, id: &id, method: "tools/call", params: Some(&params) });
    let result = CallToolResult {
        content: vec![
            ContentBlock::text("line one\nline \"two\""),
            ContentBlock::Image(ImageContent {
                data: "iVBORw0KGgo=".to_owned(),
                mime_type: "image/png".to_owned(),
                annotations: None,
                meta: None,
            }),
        ],
        structured_content: Some(serde_json::json!({"sum": 3, "parts": [1.0, 2]})),
        is_error: Some(false),
        result_type: Some(ResultType::complete()),
        meta: Some(serde_json::Map::from_iter([(META_SERVER_INFO.to_owned(), serde_json::json!({"name": "w"}))])),
    };
    assert_same(&ResponseMessage { jsonrpc: JsonRpc2, id: &id, result: &result });
    assert_same(&ErrorObject::new(ErrorCode::INVALID_PARAMS, "Invalid params: \u{1} bad"));
}

#[test]
fn what_was_written_before_a_failure_stays_and_the_error_is_returned() {
    let mut out = b"prefix ".to_vec();
    let refused = encode_into(&mut out, &BTreeMap::from([(vec![1u8], 1)]));
    assert!(refused.is_err());
    assert!(out.starts_with(b"prefix {"), "{}", String::from_utf8_lossy(&out));
}

/// `CallToolResult` writes its common parts from literals; every combination of its members
/// still comes out as serde_json writes it.
#[test]
fn tool_results_written_by_hand_are_what_serde_json_writes() {
    let text = |text: &str| ContentBlock::text(text);
    let annotated = ContentBlock::Text(TextContent {
        text: "noted".to_owned(),
        annotations: Some(Annotations { priority: Some(0.5), ..Default::default() }),
        meta: None,
    });
    let with_meta = ContentBlock::Text(TextContent {
        text: "meta".to_owned(),
        annotations: None,
        meta: Some(serde_json::Map::from_iter([("k".to_owned(), Value::from(1))])),
    });
    let image = ContentBlock::Image(ImageContent {
        data: "AAAA".to_owned(),
        mime_type: "image/png".to_owned(),
        annotations: None,
        meta: None,
    });
    let contents = [
        vec![],
        vec![text("hello, wharf")],
        vec![text(""), text("two \"quoted\"\nlines\u{1}"), text("日本語 🦀")],
        vec![annotated, with_meta, image, text("last")],
    ];
    let structured = [None, Some(serde_json::json!({"sum": 3})), Some(serde_json::json!([1, "x"]))];
    let errors = [None, Some(true), Some(false)];
    let result_types = [None, Some(ResultType::complete())];
    let metas =
        [None, Some(serde_json::Map::from_iter([(META_SERVER_INFO.to_owned(), serde_json::json!({"name": "w"}))]))];
    let mut checked = 0;
    for content in &contents {
        for structured_content in &structured {
            for is_error in errors {
                for result_type in &result_types {
                    for meta in &metas {
                        let result = CallToolResult {
                            content: content.clone(),
                            structured_content: structured_content.clone(),
                            is_error,
                            result_type: result_type.clone(),
                            meta: meta.clone(),
                        };
                        let mut ours = b"[".to_vec();
                        result.encode_into(&mut ours).unwrap();
                        let theirs = [b"[".to_vec(), serde_json::to_vec(&result).unwrap()].concat();
                        assert_eq!(String::from_utf8_lossy(&ours), String::from_utf8_lossy(&theirs));
                        checked += 1;
                    }
                }
            }
        }
    }
    assert_eq!(checked, 4 * 3 * 3 * 2 * 2);
}
