//! A value read from a YAML file with the place it was read at, and the JSON snapshot of a
//! file's values that a prepared suite keeps (`check::prepared`): a YAML file is read by
//! serde-saphyr at some 100 ns a byte, a third of a one-trial process, where the same values
//! come back from their JSON in a fraction of that. The main type is [`Spanned`];
//! [`snapshot`] and [`from_snapshot`] write and read a snapshot.

use std::cell::Cell;

use serde::{Deserialize, Deserializer, Serialize, Serializer};

thread_local! {
    static SNAPSHOT: Cell<bool> = const { Cell::new(false) };
}

/// A value and where it was written: the line and column serde-saphyr gives it in YAML, kept
/// as they were in a snapshot's JSON.
#[derive(Clone, Debug)]
pub(crate) struct Spanned<T> {
    /// The value.
    pub value: T,
    /// Where it was written.
    pub referenced: Place,
}

/// A 1-based line and column (0 when serde-saphyr knows none).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Place {
    line: u32,
    column: u32,
}

impl Place {
    /// The line, as serde-saphyr's location gives it.
    pub fn line(&self) -> u64 {
        u64::from(self.line)
    }

    /// The column, as serde-saphyr's location gives it.
    pub fn column(&self) -> u64 {
        u64::from(self.column)
    }
}

/// How a snapshot writes a spanned value: the value and its place, in short keys.
#[derive(Serialize, Deserialize)]
struct Snap<T> {
    v: T,
    l: u32,
    c: u32,
}

impl<'de, T: Deserialize<'de>> Deserialize<'de> for Spanned<T> {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        if SNAPSHOT.with(Cell::get) {
            let s = Snap::<T>::deserialize(d)?;
            return Ok(Self {
                value: s.v,
                referenced: Place {
                    line: s.l,
                    column: s.c,
                },
            });
        }
        let s = serde_saphyr::Spanned::<T>::deserialize(d)?;
        let at = |n: u64| u32::try_from(n).unwrap_or(u32::MAX);
        Ok(Self {
            value: s.value,
            referenced: Place {
                line: at(s.referenced.line()),
                column: at(s.referenced.column()),
            },
        })
    }
}

impl<T: Serialize> Serialize for Spanned<T> {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        Snap {
            v: &self.value,
            l: self.referenced.line,
            c: self.referenced.column,
        }
        .serialize(s)
    }
}

/// The JSON snapshot of `value` (as parsed from a file), when it reads back as the same
/// value: the JSON of what it reads back as is the same text. A value whose JSON is not
/// faithful (a float the JSON reader rounds otherwise) has none, and its file is parsed as
/// YAML each time.
pub(crate) fn snapshot<T>(value: &T) -> Option<String>
where
    T: Serialize + for<'de> Deserialize<'de>,
{
    let json = serde_json::to_string(value).ok()?;
    let again: T = from_snapshot(&json)?;
    (serde_json::to_string(&again).ok()? == json).then_some(json)
}

/// The value a [`snapshot`] was taken of; `None` when `json` is not one of its type.
pub(crate) fn from_snapshot<T: for<'de> Deserialize<'de>>(json: &str) -> Option<T> {
    struct Reset(bool);
    impl Drop for Reset {
        fn drop(&mut self) {
            SNAPSHOT.with(|s| s.set(self.0));
        }
    }
    let _reset = Reset(SNAPSHOT.with(|s| s.replace(true)));
    serde_json::from_str(json).ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[derive(Debug, Serialize, Deserialize)]
    struct Doc {
        name: Spanned<String>,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        limit: Option<Spanned<f64>>,
        items: Vec<Spanned<u32>>,
    }

    #[test]
    fn a_snapshot_reads_back_the_values_and_their_places() {
        let doc: Doc =
            serde_saphyr::from_str("name: veo\nlimit: 0.1\nitems:\n  - 3\n  - 4\n").unwrap();
        assert_eq!(
            (doc.name.referenced.line(), doc.name.referenced.column()),
            (1, 7)
        );
        let json = snapshot(&doc).unwrap();
        let back: Doc = from_snapshot(&json).unwrap();
        assert_eq!(format!("{back:?}"), format!("{doc:?}"));
        assert_eq!(back.items[1].referenced.line(), 5);
        // YAML is read as YAML again once the snapshot is read.
        let again: Doc = serde_saphyr::from_str("name: x\nitems: []\n").unwrap();
        assert_eq!(again.name.value, "x");
        assert!(from_snapshot::<Doc>("{\"name\": 3}").is_none());
    }
}
