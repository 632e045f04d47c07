//! Strict JSON for everything a client sends (HTTP bodies, tool `input`, the CLI's
//! `--input`): one value and nothing after it, and no object with the same key twice.
//!
//! Owns those two checks only. `serde_json` accepts trailing data when a caller forgets
//! `Deserializer::end`, and keeps the last of duplicate keys in a `Value`; an agent host
//! reading the first `command` of two would run another command than the one judged,
//! so a duplicate anywhere is refused before anything is decided. Keys are compared
//! once decoded (`"k"` and `"\u006b"` are the same key).

use std::collections::HashSet;
use std::fmt;

use serde::de::{self, DeserializeOwned, DeserializeSeed, MapAccess, SeqAccess, Visitor};

/// Why a text is not strict JSON: syntax, trailing data, a duplicate key or a wrong
/// shape, with the position (and field path where there is one) in `Display`.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{0}")]
pub struct StrictJsonError(pub String);

/// Decodes `bytes` as one `T`: the whole text must be one value (whitespace after it
/// is fine), without duplicate keys at any depth. Errors name the field path when
/// decoding `T` fails.
pub fn from_slice<T: DeserializeOwned>(bytes: &[u8]) -> Result<T, StrictJsonError> {
    let mut de = serde_json::Deserializer::from_slice(bytes);
    let value = serde_path_to_error::deserialize(&mut de).map_err(|e| {
        let path = e.path().to_string();
        let inner = e.into_inner();
        if path.is_empty() || path == "." {
            StrictJsonError(inner.to_string())
        } else {
            StrictJsonError(format!("at `{path}`: {inner}"))
        }
    })?;
    de.end().map_err(|e| StrictJsonError(e.to_string()))?;
    check_duplicates(bytes)?;
    Ok(value)
}

/// `from_slice` for text.
pub fn from_str<T: DeserializeOwned>(text: &str) -> Result<T, StrictJsonError> {
    from_slice(text.as_bytes())
}

/// Refuses an object with a key twice, naming the key and where it is.
pub fn check_duplicates(bytes: &[u8]) -> Result<(), StrictJsonError> {
    let mut de = serde_json::Deserializer::from_slice(bytes);
    let mut path = Vec::new();
    Walk { path: &mut path }
        .deserialize(&mut de)
        .map_err(|e| StrictJsonError(e.to_string()))
}

/// Walks any JSON value, keeping the path to report a duplicate at. serde_json's own
/// recursion limit (128) bounds the depth.
struct Walk<'a> {
    path: &'a mut Vec<String>,
}

impl Walk<'_> {
    fn at(&self) -> String {
        if self.path.is_empty() {
            "the top level".to_string()
        } else {
            format!("`{}`", self.path.join("."))
        }
    }
}

impl<'de> DeserializeSeed<'de> for Walk<'_> {
    type Value = ();
    fn deserialize<D: de::Deserializer<'de>>(self, d: D) -> Result<(), D::Error> {
        d.deserialize_any(self)
    }
}

impl<'de> Visitor<'de> for Walk<'_> {
    type Value = ();

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("any JSON value")
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<(), A::Error> {
        let mut seen = HashSet::new();
        while let Some(key) = map.next_key::<String>()? {
            if seen.contains(&key) {
                return Err(de::Error::custom(format!(
                    "duplicate key `{key}` in {}",
                    self.at()
                )));
            }
            self.path.push(key.clone());
            map.next_value_seed(Walk {
                path: &mut *self.path,
            })?;
            self.path.pop();
            seen.insert(key);
        }
        Ok(())
    }

    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<(), A::Error> {
        let mut i = 0usize;
        loop {
            self.path.push(i.to_string());
            let more = seq.next_element_seed(Walk {
                path: &mut *self.path,
            })?;
            self.path.pop();
            if more.is_none() {
                return Ok(());
            }
            i += 1;
        }
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
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::Value;

    #[test]
    fn refuses_trailing_data_and_duplicates_anywhere() {
        assert!(from_str::<Value>("{\"a\": 1} \n").is_ok());
        let e = from_str::<Value>("{\"a\": 1} x").unwrap_err();
        assert!(e.0.contains("trailing characters"), "{e}");
        let e = from_str::<Value>("{\"a\": 1}{\"a\": 1}").unwrap_err();
        assert!(e.0.contains("trailing characters"), "{e}");
        let e = from_str::<Value>(r#"{"a": {"b": [1, {"c": 1, "c": 2}]}}"#).unwrap_err();
        assert!(e.0.contains("duplicate key `c` in `a.b.1`"), "{e}");
        let e = from_str::<Value>(r#"{"k": 1, "\u006b": 2}"#).unwrap_err();
        assert!(e.0.contains("duplicate key `k` in the top level"), "{e}");
        // The same key in sibling objects is fine.
        assert!(from_str::<Value>(r#"[{"a": 1}, {"a": 2}]"#).is_ok());
        // Deep nesting is an error, not a stack overflow.
        let deep = "[".repeat(100_000);
        assert!(from_str::<Value>(&deep).is_err());
    }
}
