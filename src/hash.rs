//! Hashers for the engines' maps, whose keys come from the suite's own files or are hashes
//! already made: SipHash's resistance to chosen keys buys nothing there and cost a tenth of a
//! short run's evaluation. A map keyed by a transcript's values (identical calls) compares
//! keys by value on a hash match, so a collision costs time, never a wrong answer. Beside
//! them, the byte comparisons the engines make most ([`same_bytes`]) and a call's arguments'
//! identity ([`identity`]): its arguments as one run of bytes, told equal by one comparison.

/// A name's bytes mixed a word (eight bytes) at a time, as rustc's FxHash mixes them: a tool
/// name or an id comes from the suite's own files, where SipHash's resistance to chosen keys
/// buys nothing and costs most of a lookup (and FNV-1a's byte at a time, most of the rest).
/// Equal hashes are compared by value: a collision costs time, never a wrong answer.
#[derive(Default)]
pub(crate) struct NameHasher(u64);

impl NameHasher {
    fn mix(&mut self, word: u64) {
        self.0 = mix(self.0, word);
    }
}

/// One word into a hash: FxHash's rotate and xor, then a multiply whose high half is folded
/// into its low one (as foldhash does). FxHash's plain multiply carries a word's change only
/// upwards, and the next rotate brings its top bits round to where the next word's low ones
/// land: "Note 1092" and "Note 1019" hashed alike. The folded product mixes both ways, for
/// the same one `mul` instruction on x86-64.
fn mix(hash: u64, word: u64) -> u64 {
    let product = u128::from(hash.rotate_left(5) ^ word) * 0x51_7c_c1_b7_27_22_0a_95;
    (product as u64) ^ (product >> 64) as u64
}

impl std::hash::Hasher for NameHasher {
    fn write(&mut self, bytes: &[u8]) {
        let mut words = bytes.chunks_exact(8);
        for w in &mut words {
            self.mix(u64::from_le_bytes(w.try_into().expect("eight bytes")));
        }
        let rest = words.remainder();
        if !rest.is_empty() {
            let mut last = [0u8; 8];
            last[..rest.len()].copy_from_slice(rest);
            // The length too, in the last byte as a UTF-8 continuation byte (0x80–0xBF): "a"
            // and "a\0" differ, and no name of eight bytes ends as a shorter one padded does
            // (after a seven-byte name's last byte, a continuation byte is not UTF-8; a marker
            // of plain `len << 59` made "Note 10" hash as "Note 108").
            self.mix(u64::from_le_bytes(last) ^ ((0x80 | (rest.len() as u64) << 3) << 56));
        }
    }

    fn write_u8(&mut self, n: u8) {
        self.mix(u64::from(n));
    }

    fn write_usize(&mut self, n: usize) {
        self.mix(n as u64);
    }

    fn write_u64(&mut self, n: u64) {
        self.mix(n);
    }

    fn finish(&self) -> u64 {
        // A product's low bits depend only on the word's low bits: the table picks its bucket
        // from the low bits, so the high ones (where "step-10" and "step-11" differ) are
        // rotated down, as rustc-hash 2 does.
        self.0.rotate_left(26)
    }
}

/// A map keyed by a pair of indices (a workflow step and a call), hashed with [`PairHasher`].
pub(crate) type PairMap<V> = std::collections::HashMap<(usize, usize), V, Hashed>;

/// The hasher of a map keyed by indices or by a hash already made ([`PairHasher`]).
pub(crate) type Hashed = std::hash::BuildHasherDefault<PairHasher>;

/// Values kept per (workflow step, call) pair of one turn, each made the first time it is
/// asked. A turn of up to [`PairCache::DENSE`] pairs keeps them in one table (one allocation,
/// no hashing: the usual turn of a few calls); a larger one in a [`PairMap`], holding only
/// the pairs asked (a long run's walk asks one per call, not steps × calls).
pub(crate) struct PairCache<V> {
    calls: usize,
    /// Steps × calls when the pairs are kept in one table, else 0.
    dense: usize,
    table: std::cell::RefCell<Vec<Option<V>>>,
    map: std::cell::RefCell<PairMap<V>>,
}

impl<V: Clone> PairCache<V> {
    /// The most pairs a turn keeps in one table.
    const DENSE: usize = 1024;

    /// An empty cache for a turn of `steps` workflow steps and `calls` calls (nothing
    /// allocated until a value is kept).
    pub(crate) fn new(steps: usize, calls: usize) -> Self {
        Self {
            calls,
            dense: Some(steps.saturating_mul(calls))
                .filter(|&n| n <= Self::DENSE)
                .unwrap_or(0),
            table: Default::default(),
            map: Default::default(),
        }
    }

    /// Whether the pairs are kept in one table (a turn of a few calls).
    pub(crate) fn is_dense(&self) -> bool {
        self.dense > 0
    }

    /// `f` of the value kept for `key`, if any.
    pub(crate) fn peek<T>(&self, (w, j): (usize, usize), f: impl FnOnce(&V) -> T) -> Option<T> {
        if self.dense > 0 {
            self.table
                .borrow()
                .get(w * self.calls + j)
                .and_then(Option::as_ref)
                .map(f)
        } else {
            self.map.borrow().get(&(w, j)).map(f)
        }
    }

    /// Keeps `v` for `key`.
    pub(crate) fn insert(&self, (w, j): (usize, usize), v: V) {
        if self.dense > 0 {
            let mut table = self.table.borrow_mut();
            if table.is_empty() {
                table.resize_with(self.dense, || None);
            }
            table[w * self.calls + j] = Some(v);
        } else {
            // (Grown as asked: a step's own call at its place, most of a long run, is kept
            // nowhere — its answers are known — so a run asks about the few calls that
            // differ, and a row for each step it does not follow.)
            self.map.borrow_mut().insert((w, j), v);
        }
    }

    /// The value for `key`, made by `make` and kept the first time it is asked (`make` may
    /// ask the cache for other keys: no borrow is held while it runs).
    pub(crate) fn get(&self, key: (usize, usize), make: impl FnOnce() -> V) -> V {
        if let Some(v) = self.peek(key, V::clone) {
            return v;
        }
        let v = make();
        self.insert(key, v.clone());
        v
    }
}

/// Keys of a few small numbers, or one hash already made: one multiply per word (SipHash was
/// a tenth of a short run's evaluation as the pairing caches' hasher).
#[derive(Default)]
pub(crate) struct PairHasher(u64);

impl std::hash::Hasher for PairHasher {
    fn write(&mut self, bytes: &[u8]) {
        for b in bytes {
            self.write_u64(u64::from(*b));
        }
    }

    fn write_usize(&mut self, n: usize) {
        self.write_u64(n as u64);
    }

    fn write_u64(&mut self, n: u64) {
        self.0 = mix(self.0, n);
    }

    fn finish(&self) -> u64 {
        self.0
    }
}

/// A value per name (a turn's tools): a short list searched in place while the names are
/// few (a turn's usual handful of tools: no allocation, no hashing), a map past
/// [`NameMap::LIST`] distinct names, so a long run with many tools stays linear.
pub(crate) enum NameMap<'a, V> {
    List(smallvec::SmallVec<[(&'a str, V); 8]>),
    Map(std::collections::HashMap<&'a str, V, std::hash::BuildHasherDefault<NameHasher>>),
}

/// Byte-string equality without a call into libc's `memcmp`: argument names and values are short,
/// and the call costs more than the comparison (this was a third of the fast path's time; a turn's
/// per-tool counts compare a tool name per call).
#[inline]
pub(crate) fn same_bytes(a: &[u8], b: &[u8]) -> bool {
    let n = a.len();
    if n != b.len() {
        return false;
    }
    let u64_at = |s: &[u8], i: usize| u64::from_ne_bytes(s[i..i + 8].try_into().expect("8 bytes"));
    let u32_at = |s: &[u8], i: usize| u32::from_ne_bytes(s[i..i + 4].try_into().expect("4 bytes"));
    if n > 16 {
        // Whole words, then the last word (overlapping the one before).
        (0..n / 8).all(|w| u64_at(a, w * 8) == u64_at(b, w * 8))
            && u64_at(a, n - 8) == u64_at(b, n - 8)
    } else if n >= 8 {
        // The first and the last word, overlapping: no loop for most names.
        u64_at(a, 0) == u64_at(b, 0) && u64_at(a, n - 8) == u64_at(b, n - 8)
    } else if n >= 4 {
        u32_at(a, 0) == u32_at(b, 0) && u32_at(a, n - 4) == u32_at(b, n - 4)
    } else {
        a.iter().zip(b).all(|(p, q)| p == q)
    }
}

/// Whether `name` is one of a few `names`, looked through one by one with [`same_bytes`]
/// (the lookup of a map or a binary search costs more than a few comparisons).
#[inline]
pub(crate) fn among<'n>(mut names: impl Iterator<Item = &'n str>, name: &str) -> bool {
    names.any(|n| same_bytes(n.as_bytes(), name.as_bytes()))
}

/// Byte-wise order of two names (as `BTreeMap<String, _>` orders its keys): equal ones, the
/// common case, through [`same_bytes`].
#[inline]
pub(crate) fn order(a: &[u8], b: &[u8]) -> std::cmp::Ordering {
    if same_bytes(a, b) {
        std::cmp::Ordering::Equal
    } else {
        a.cmp(b)
    }
}

/// A call's arguments written as one run of bytes, equal exactly where the arguments are by
/// `serde_json`'s `==`: each value tagged with its kind, each string, array and object with
/// its length, numbers by kind and bits (`-0.0` written as `0.0`, which `==` takes it for), an
/// object's members in key order. Made once where the call is read, so a call is told from
/// its step's own by one comparison of bytes lying together (walking the two `serde_json`
/// maps was most of a long right run's evaluation).
pub(crate) fn identity(arguments: &serde_json::Value) -> Box<[u8]> {
    let mut out = Vec::with_capacity(64);
    write_value(&mut out, arguments);
    out.into_boxed_slice()
}

/// A length in seven bits a byte, the high bit set on every byte but the last (LEB128): one
/// byte for a name, and no length the prefix of another.
fn write_len(out: &mut Vec<u8>, mut n: usize) {
    while n >= 0x80 {
        out.push((n & 0x7f) as u8 | 0x80);
        n >>= 7;
    }
    out.push(n as u8);
}

fn write_str(out: &mut Vec<u8>, s: &str) {
    write_len(out, s.len());
    out.extend_from_slice(s.as_bytes());
}

fn write_value(out: &mut Vec<u8>, v: &serde_json::Value) {
    use serde_json::Value;
    match v {
        Value::Null => out.push(0),
        Value::Bool(b) => out.push(1 + u8::from(*b)),
        Value::Number(n) => {
            if let Some(u) = n.as_u64() {
                out.push(3);
                out.extend_from_slice(&u.to_le_bytes());
            } else if let Some(i) = n.as_i64() {
                out.push(4);
                out.extend_from_slice(&i.to_le_bytes());
            } else {
                let f = n.as_f64().unwrap_or_default();
                out.push(5);
                out.extend_from_slice(&(if f == 0.0 { 0.0f64 } else { f }).to_bits().to_le_bytes());
            }
        }
        Value::String(s) => {
            out.push(6);
            write_str(out, s);
        }
        Value::Array(items) => {
            out.push(7);
            write_len(out, items.len());
            items.iter().for_each(|item| write_value(out, item));
        }
        Value::Object(members) => {
            out.push(8);
            write_len(out, members.len());
            for (k, v) in members {
                write_str(out, k);
                write_value(out, v);
            }
        }
    }
}

/// Two names equal, through [`same_bytes`].
#[inline]
fn same_name(a: &str, b: &str) -> bool {
    same_bytes(a.as_bytes(), b.as_bytes())
}

/// How many items each name has (a turn's calls or steps per tool).
pub(crate) type NameCounts<'a> = NameMap<'a, u32>;

impl<'a, V: Copy + Default> NameMap<'a, V> {
    /// The most distinct names kept in the list.
    const LIST: usize = 8;

    /// No name yet.
    pub(crate) fn new() -> Self {
        Self::List(smallvec::SmallVec::new())
    }

    /// `name`'s value, when it has one.
    pub(crate) fn get(&self, name: &str) -> Option<V> {
        match self {
            Self::List(list) => list
                .iter()
                .find(|(k, _)| same_name(k, name))
                .map(|(_, v)| *v),
            Self::Map(map) => map.get(name).copied(),
        }
    }

    /// `name`'s value, made the default when it had none.
    pub(crate) fn entry(&mut self, name: &'a str) -> &mut V {
        if let Self::List(list) = self
            && list.len() == Self::LIST
            && !list.iter().any(|(k, _)| same_name(k, name))
        {
            *self = Self::Map(list.drain(..).collect());
        }
        match self {
            Self::List(list) => {
                let at = match list.iter().position(|(k, _)| same_name(k, name)) {
                    Some(at) => at,
                    None => {
                        list.push((name, V::default()));
                        list.len() - 1
                    }
                };
                &mut list[at].1
            }
            Self::Map(map) => map.entry(name).or_default(),
        }
    }
}

impl<'a> NameMap<'a, u32> {
    /// The count of each of `names`. A run of one name (a long run's calls of one tool) is
    /// counted in place and added once: each name of it costs a comparison with the one
    /// before, not a lookup.
    pub(crate) fn of(names: impl IntoIterator<Item = &'a str>) -> Self {
        let mut counts = Self::new();
        let mut run: Option<(&'a str, u32)> = None;
        for name in names {
            match &mut run {
                Some((last, n)) if same_name(last, name) => *n += 1,
                _ => {
                    if let Some((last, n)) = run.replace((name, 1)) {
                        *counts.entry(last) += n;
                    }
                }
            }
        }
        if let Some((last, n)) = run {
            *counts.entry(last) += n;
        }
        counts
    }

    /// How many items `name` has.
    pub(crate) fn count(&self, name: &str) -> u32 {
        self.get(name).unwrap_or(0)
    }

    /// Each name with its count, in no particular order.
    pub(crate) fn counts(&self) -> impl Iterator<Item = (&'a str, u32)> + '_ {
        let (list, map) = match self {
            Self::List(list) => (Some(list), None),
            Self::Map(map) => (None, Some(map)),
        };
        let listed = list.into_iter().flatten().map(|&(k, n)| (k, n));
        listed.chain(map.into_iter().flatten().map(|(&k, &n)| (k, n)))
    }
}

/// A hash two JSON values share whenever any of the engines' comparisons finds them equal:
/// `==`, numbers by value at any depth (`1` and `1.0`), a boolean as the number Python takes
/// it for (`True == 1`, as ADK's literal match does), an object's members in any order.
/// Coarser than each of those, so a differing hash rules equality out and an equal one still
/// needs the comparison. (JSON has no NaN: every number equals itself.)
pub(crate) fn value_hash(v: &serde_json::Value) -> u64 {
    use serde_json::Value;
    let number = |f: f64| mix(2, if f == 0.0 { 0 } else { f.to_bits() });
    match v {
        Value::Null => mix(0, 0),
        Value::Bool(b) => number(if *b { 1.0 } else { 0.0 }),
        Value::Number(n) => number(n.as_f64().unwrap_or(0.0)),
        Value::String(s) => mix(3, name_hash(s)),
        Value::Array(items) => items
            .iter()
            .fold(mix(4, items.len() as u64), |h, i| mix(h, value_hash(i))),
        Value::Object(m) => map_hash(m),
    }
}

/// An object's [`value_hash`], from its map (a call's arguments).
pub(crate) fn map_hash(m: &serde_json::Map<String, serde_json::Value>) -> u64 {
    object_hash(
        m.iter()
            .map(|(k, v)| member_hash(name_hash(k), value_hash(v))),
    )
}

/// A call's hash from its tool's name and its arguments' [`value_hash`] (or an arguments
/// map's [`map_hash`], the same): what two identical calls share.
pub(crate) fn call_hash(tool: &str, arguments: u64) -> u64 {
    member_hash(name_hash(tool), arguments)
}

/// One member of an object from its name's [`name_hash`] and its value's [`value_hash`]:
/// what [`object_hash`] sums.
pub(crate) fn member_hash(name: u64, value: u64) -> u64 {
    mix(name, value)
}

/// An object's [`value_hash`] from its members' [`member_hash`]es, in any order.
pub(crate) fn object_hash(members: impl ExactSizeIterator<Item = u64>) -> u64 {
    let n = members.len() as u64;
    members.fold(mix(5, n), u64::wrapping_add)
}

/// A string's hash ([`NameHasher`]).
pub(crate) fn name_hash(s: &str) -> u64 {
    bytes_hash(s.as_bytes())
}

/// A run of bytes' hash ([`NameHasher`]): a call's arguments' identity.
pub(crate) fn bytes_hash(b: &[u8]) -> u64 {
    use std::hash::Hasher;
    let mut h = NameHasher::default();
    h.write(b);
    h.finish()
}

/// A workflow step's values hashed ([`value_hash`]), compiled once per scenario: what rules
/// a call out before any comparison.
#[derive(Debug)]
pub(crate) struct StepKey {
    /// The step's arguments' hash: a call that is the step literally has the same.
    pub(crate) arguments: u64,
    /// Per parameter the step compares (in the oracle's order), what a call's value must hash
    /// to where the step compares it exactly.
    pub(crate) exact: Box<[Exact]>,
}

/// What a call's value of one parameter must hash to ([`StepKey::exact`]).
#[derive(Debug)]
pub(crate) enum Exact {
    /// The step's policy decides: nothing ruled out by the hash.
    Compared,
    /// The step compares the parameter exactly and has no value of it: no value matches.
    Absent,
    /// The parameter's name's hash ([`name_hash`]), the hash of the step's value (which an
    /// equal value has), and the value (a copy: compared where the hashes agree).
    Hash {
        name: u64,
        value: u64,
        want: serde_json::Value,
    },
}

#[cfg(test)]
mod tests {
    use super::NameCounts;

    /// Two calls' [`super::identity`] is the same exactly where their arguments are `==`, for
    /// values that differ anywhere: a key, a string's length or a byte
    /// in any word of it, a number's kind or sign, an array's length, a nesting, where one
    /// value's bytes end and the next begin, a length past one byte's worth.
    #[test]
    fn identity_is_equality() {
        use serde_json::json;
        let values = [
            json!(null),
            json!(true),
            json!(1),
            json!(1.0),
            json!(-1),
            json!("a"),
            json!("abcd"),
            json!("abce"),
            json!("abcdefgh"),
            json!("abcdefgi"),
            json!("bbcdefgh"),
            json!("a long value of twenty-four"),
            json!("a long value of twenty-fouR"),
            json!("a long valuE of twenty-four"),
            json!([]),
            json!([1, "a"]),
            json!([1, "b"]),
            json!([1, "a", null]),
            json!({}),
            json!({"a": 1}),
            json!({"b": 1}),
            json!({"a": 1.0}),
            json!({"a": 1, "b": [1, {"c": "x"}]}),
            json!({"a": 1, "b": [1, {"c": "y"}]}),
            json!({"a": 1, "b": [1, {"d": "x"}]}),
            json!(0.0),
            json!(-0.0),
            json!(0),
            json!(u64::MAX),
            json!(-1.5),
            json!(["ab"]),
            json!(["a", "b"]),
            json!({"a": "b"}),
            json!({"ab": ""}),
            json!({"a": [], "b": []}),
            json!({"a": [[]], "b": []}),
            json!("x".repeat(200)),
            json!(format!("{}y", "x".repeat(199))),
            json!([null, false]),
            json!([false, null]),
            // Alike byte for byte were a string's length left out: the key's bytes run on
            // into the tag of a string value.
            json!({"k\u{6}v": null}),
            json!({"k": "v\u{0}"}),
        ];
        let mut equal = 0;
        for a in &values {
            for b in &values {
                assert_eq!(
                    super::identity(a) == super::identity(b),
                    a == b,
                    "{a} / {b}"
                );
                equal += usize::from(a == b);
            }
        }
        // Each value equals itself, and `0.0` and `-0.0` each other (as `==` has them).
        assert_eq!(equal, values.len() + 2);
    }

    /// Numbered names hash apart: the length marked in a short name's padding once made
    /// "Note 10" hash as "Note 108", and FxHash's upward-only multiply "Note 1092" as
    /// "Note 1019" (a long run's steps then looked alike to the pairing, which fell back to
    /// the Hungarian algorithm).
    #[test]
    fn numbered_names_hash_apart() {
        for prefix in ["Note ", "call_", "step-", "n", "id-0000"] {
            let mut seen = std::collections::HashMap::new();
            for i in 0..20_000 {
                let name = format!("{prefix}{i}");
                if let Some(other) = seen.insert(super::name_hash(&name), name.clone()) {
                    panic!("{name:?} and {other:?} hash alike");
                }
            }
        }
    }

    /// Counts, and the names listed with them, agree whether the names fit the list or spill
    /// into the map.
    #[test]
    fn name_counts_are_the_same_in_the_list_and_the_map() {
        // Each name three times: spread out, in one run, and in runs broken by other names
        // (a run of one name is counted in place, then added).
        let orders: [fn(usize, usize) -> usize; 3] = [
            |i, distinct| i % distinct,
            |i, _| i / 3,
            |i, distinct| {
                if i % 3 == 2 {
                    (i / 3 + 1) % distinct
                } else {
                    i / 3 % distinct
                }
            },
        ];
        for (distinct, order) in [1, 8, 9, 40]
            .into_iter()
            .flat_map(|d| orders.iter().map(move |o| (d, o)))
        {
            let names: Vec<String> = (0..3 * distinct)
                .map(|i| format!("t{}", order(i, distinct)))
                .collect();
            let counts = NameCounts::of(names.iter().map(String::as_str));
            assert_eq!(matches!(counts, NameCounts::Map(_)), distinct > 8);
            for i in 0..distinct {
                assert_eq!(counts.count(&format!("t{i}")), 3);
            }
            assert_eq!(counts.count("absent"), 0);
            let mut listed: Vec<(&str, u32)> = counts.counts().collect();
            listed.sort_unstable();
            let distinct_names: Vec<String> = (0..distinct).map(|i| format!("t{i}")).collect();
            let mut expected: Vec<(&str, u32)> =
                distinct_names.iter().map(|n| (n.as_str(), 3)).collect();
            expected.sort_unstable();
            assert_eq!(listed, expected, "{names:?}");
        }
    }
}
