//! JSON objects whose keys repeat are refused, at every nesting level.
//!
//! serde_json keeps the last of two equal keys (RFC 8259 leaves it to the reader), and a
//! derived struct ignores an unknown field however often it appears, so `{"id": 0, "id": 1}`
//! would silently be node 1. [`check`] walks the document once before it is read — as
//! serde's `IgnoredAny` does, building nothing but each object's set of keys — and names
//! the first key that repeats and where it sits (`nodes[2]`), with the parser's line and
//! column. Public for the other Zonal crates that read JSON (the policy crate's configs):
//! one walk for every input.

use std::cell::RefCell;
use std::collections::HashSet;
use std::fmt::{self, Write as _};

use serde::de::{self, DeserializeSeed, Deserializer, MapAccess, SeqAccess, Visitor};

/// A key that appears twice in one object.
#[derive(Debug)]
pub struct DuplicateKey {
    /// Where the object sits: `nodes[2]`, `a.b`, or empty for the top-level object.
    pub path: String,
    /// The repeated key.
    pub key: String,
    /// The parser's error, for its line and column (at the second occurrence).
    pub at: serde_json::Error,
}

/// Why a document failed the walk.
#[derive(Debug)]
pub enum KeyError {
    /// A key repeats.
    Duplicate(DuplicateKey),
    /// The document is not JSON (the parser's error, as reading it would give).
    Json(serde_json::Error),
}

/// Walks `text`: `Ok` when it is one JSON value whose objects have distinct keys.
///
/// # Errors
/// [`KeyError::Duplicate`] for the first repeated key, [`KeyError::Json`] for a document
/// that does not parse (nested deeper than serde_json's recursion limit included).
pub fn check(text: &str) -> Result<(), KeyError> {
    let path = RefCell::new(Vec::new());
    let found = RefCell::new(None);
    let mut de = serde_json::Deserializer::from_str(text);
    let walked = Walk {
        path: &path,
        found: &found,
    }
    .deserialize(&mut de)
    .and_then(|()| de.end());
    match (walked, found.into_inner()) {
        (Ok(()), _) => Ok(()),
        (Err(at), Some((path, key))) => Err(KeyError::Duplicate(DuplicateKey { path, key, at })),
        (Err(e), None) => Err(KeyError::Json(e)),
    }
}

/// One step of the path from the top to a value.
enum Segment {
    Key(String),
    Index(usize),
}

/// `nodes[2].cpus`; keys that are not plain identifiers are quoted (`["a b"]`).
fn render(path: &[Segment]) -> String {
    let mut out = String::new();
    for s in path {
        match s {
            Segment::Index(i) => {
                let _ = write!(out, "[{i}]");
            }
            Segment::Key(k)
                if !k.is_empty()
                    && k.chars()
                        .all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-') =>
            {
                if !out.is_empty() {
                    out.push('.');
                }
                out.push_str(k);
            }
            Segment::Key(k) => {
                let _ = write!(out, "[{k:?}]");
            }
        }
    }
    out
}

/// Visits one value and everything inside it.
#[derive(Clone, Copy)]
struct Walk<'a> {
    path: &'a RefCell<Vec<Segment>>,
    /// The first repeated key and its object's path, once found.
    found: &'a RefCell<Option<(String, String)>>,
}

impl<'de> DeserializeSeed<'de> for Walk<'_> {
    type Value = ();

    fn deserialize<D: Deserializer<'de>>(self, d: D) -> Result<(), D::Error> {
        d.deserialize_any(self)
    }
}

impl<'de> Visitor<'de> for Walk<'_> {
    type Value = ();

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("a JSON value")
    }

    fn visit_bool<E>(self, _: bool) -> Result<(), E> {
        Ok(())
    }

    fn visit_i64<E>(self, _: i64) -> Result<(), E> {
        Ok(())
    }

    fn visit_u64<E>(self, _: u64) -> Result<(), E> {
        Ok(())
    }

    fn visit_f64<E>(self, _: f64) -> Result<(), E> {
        Ok(())
    }

    fn visit_str<E>(self, _: &str) -> Result<(), E> {
        Ok(())
    }

    fn visit_unit<E>(self) -> Result<(), E> {
        Ok(())
    }

    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<(), A::Error> {
        self.path.borrow_mut().push(Segment::Index(0));
        let mut i = 0;
        while seq.next_element_seed(self)?.is_some() {
            i += 1;
            if let Some(Segment::Index(top)) = self.path.borrow_mut().last_mut() {
                *top = i;
            }
        }
        self.path.borrow_mut().pop();
        Ok(())
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<(), A::Error> {
        // A hashed set, not a list: an object of many keys costs linear time, not quadratic.
        let mut seen: HashSet<String> = HashSet::new();
        while let Some(key) = map.next_key::<String>()? {
            if seen.contains(&key) {
                let msg = format!("duplicate key {key:?}");
                *self.found.borrow_mut() = Some((render(&self.path.borrow()), key));
                return Err(de::Error::custom(msg));
            }
            self.path.borrow_mut().push(Segment::Key(key.clone()));
            map.next_value_seed(self)?;
            self.path.borrow_mut().pop();
            seen.insert(key);
        }
        Ok(())
    }
}

#[cfg(test)]
mod test {
    use super::*;

    fn duplicate(text: &str) -> (String, String, usize) {
        match check(text) {
            Err(KeyError::Duplicate(d)) => (d.path, d.key, d.at.line()),
            other => panic!("{text}: {other:?}"),
        }
    }

    #[test]
    fn repeated_keys_are_found_at_every_level_with_their_path() {
        assert_eq!(
            duplicate(r#"{"a": 1, "a": 2}"#),
            (String::new(), "a".into(), 1)
        );
        assert_eq!(
            duplicate("{\"nodes\": [{\"id\": 0},\n {\"id\": 1, \"x\": {}, \"id\": 2}]}"),
            ("nodes[1]".into(), "id".into(), 2)
        );
        assert_eq!(
            duplicate(r#"{"a": {"b c": [0, {"k": 1, "k": 1}]}}"#),
            (r#"a["b c"][1]"#.into(), "k".into(), 1)
        );
        // Keys equal once unescaped are the same key.
        assert_eq!(duplicate(r#"{"id": 0, "i\u0064": 1}"#).1, "id");
        // Ignored fields repeat just the same.
        assert_eq!(duplicate(r#"{"extra": 0, "extra": 0}"#).1, "extra");
    }

    #[test]
    fn distinct_keys_and_plain_values_pass() {
        for ok in [
            r#"{"a": 1, "b": {"a": 1}, "c": [{"a": 1}, {"a": 2}]}"#,
            "[1, 2.5, -3, true, null, \"s\"]",
            "{}",
            "7",
        ] {
            assert!(check(ok).is_ok(), "{ok}");
        }
    }

    #[test]
    fn malformed_and_too_deep_documents_are_parse_errors() {
        for bad in ["{\"a\": }", "[1, 2", "{} {}", &"[".repeat(10_000)] {
            assert!(matches!(check(bad), Err(KeyError::Json(_))), "{bad}");
        }
    }
}
