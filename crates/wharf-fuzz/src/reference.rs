//! The reference readings the fuzz targets hold Wharf to: serde_json's strict decoder, and a
//! plain tree of every member as written, from which the names given twice are read off.

use std::fmt;

use serde::de::{Deserialize, Deserializer, MapAccess, SeqAccess, Visitor};

/// A JSON value with every member kept in order, repeats included.
#[derive(Debug)]
enum Tree {
    Leaf,
    Array(Vec<Tree>),
    Object(Vec<(String, Tree)>),
}

struct TreeVisitor;

impl<'de> Visitor<'de> for TreeVisitor {
    type Value = Tree;

    fn expecting(&self, formatter: &mut fmt::Formatter<'_>) -> fmt::Result {
        formatter.write_str("any JSON value")
    }

    fn visit_bool<E>(self, _: bool) -> Result<Tree, E> {
        Ok(Tree::Leaf)
    }

    fn visit_i64<E>(self, _: i64) -> Result<Tree, E> {
        Ok(Tree::Leaf)
    }

    fn visit_u64<E>(self, _: u64) -> Result<Tree, E> {
        Ok(Tree::Leaf)
    }

    fn visit_f64<E>(self, _: f64) -> Result<Tree, E> {
        Ok(Tree::Leaf)
    }

    fn visit_str<E>(self, _: &str) -> Result<Tree, E> {
        Ok(Tree::Leaf)
    }

    fn visit_unit<E>(self) -> Result<Tree, E> {
        Ok(Tree::Leaf)
    }

    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Tree, A::Error> {
        let mut items = Vec::new();
        while let Some(item) = seq.next_element()? {
            items.push(item);
        }
        Ok(Tree::Array(items))
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Tree, A::Error> {
        let mut members = Vec::new();
        while let Some(member) = map.next_entry::<String, Tree>()? {
            members.push(member);
        }
        Ok(Tree::Object(members))
    }
}

impl<'de> Deserialize<'de> for Tree {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Tree, D::Error> {
        deserializer.deserialize_any(TreeVisitor)
    }
}

impl Tree {
    fn collect_repeats(&self, repeats: &mut Vec<String>) {
        match self {
            Tree::Leaf => {}
            Tree::Array(items) => items.iter().for_each(|item| item.collect_repeats(repeats)),
            Tree::Object(members) => {
                let mut names: Vec<&str> = members.iter().map(|(name, _)| name.as_str()).collect();
                names.sort_unstable();
                for pair in names.windows(2) {
                    if pair[0] == pair[1] && !repeats.iter().any(|repeat| repeat == pair[0]) {
                        repeats.push(pair[0].to_owned());
                    }
                }
                members.iter().for_each(|(_, value)| value.collect_repeats(repeats));
            }
        }
    }
}

/// How the reference reads a JSON text.
#[derive(Debug)]
pub enum Reading {
    /// Not JSON serde_json accepts (or holds a string no Rust string can hold).
    Malformed,
    /// JSON whose objects name these members more than once, at any depth.
    Repeats(Vec<String>),
    /// JSON with every member name unique: this value.
    Unique(serde_json::Value),
}

/// Reads `text` as the reference does.
pub fn read(text: &str) -> Reading {
    let Ok(tree) = serde_json::from_str::<Tree>(text) else { return Reading::Malformed };
    let mut repeats = Vec::new();
    tree.collect_repeats(&mut repeats);
    if !repeats.is_empty() {
        return Reading::Repeats(repeats);
    }
    match serde_json::from_str(text) {
        Ok(value) => Reading::Unique(value),
        Err(_) => Reading::Malformed,
    }
}
