//! Places in JSON text, which `serde_json::Value` forgets: where the member or element a JSON
//! pointer names starts, and which objects repeat a key.
//!
//! Both walk the text once, without building a tree, so they cost nothing until an error needs
//! a place. They expect text `serde_json` has accepted (so well-formed, nested at most 128
//! deep); on anything else they give up (`None`, or the duplicates found so far) rather than
//! panic.

use std::collections::HashMap;

/// Where a pointer's target is, as byte offsets into the text.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Place {
    /// The opening quote of the member's key, when the target is an object member.
    pub key: Option<usize>,
    /// The first byte of the value.
    pub value: usize,
}

impl Place {
    /// Where an error about the target points: its key when it has one (the caret for an
    /// unknown parameter belongs under its name), else its value.
    pub fn start(&self) -> usize {
        self.key.unwrap_or(self.value)
    }
}

/// A key an object has twice: which object, and both places.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Duplicate {
    /// The JSON pointer of the repeated member (`/tools/0/name`).
    pub pointer: String,
    /// The first occurrence's key (byte offset of its opening quote).
    pub first: usize,
    /// The repeat's key.
    pub second: usize,
}

/// A value's compact JSON text, as its `Display` (`serde_json`'s compact serialization)
/// writes it: [`push_text`] into a new string.
pub(crate) fn text(v: &serde_json::Value) -> String {
    let mut out = String::new();
    push_text(&mut out, v);
    out
}

/// A value's compact JSON text onto `out`, written in place as `serde_json` writes it: scalars
/// as they are (strings escaped as it escapes them), arrays and objects piece by piece —
/// `[1,"a"]`, `{"k":true}`, members in the map's order — with nothing allocated (`Display`
/// goes through the formatter a few bytes at a time: most of what worded a value mismatch).
pub(crate) fn push_text(out: &mut String, v: &serde_json::Value) {
    use serde_json::Value;
    use std::fmt::Write;
    match v {
        Value::Null => out.push_str("null"),
        Value::Bool(b) => out.push_str(if *b { "true" } else { "false" }),
        // `Number`'s `Display` is its serialization (itoa, ryu).
        Value::Number(n) => {
            let _ = write!(out, "{n}");
        }
        Value::String(s) => push_string(out, s),
        Value::Array(items) => {
            out.push('[');
            for (i, item) in items.iter().enumerate() {
                if i > 0 {
                    out.push(',');
                }
                push_text(out, item);
            }
            out.push(']');
        }
        Value::Object(members) => {
            out.push('{');
            for (i, (k, item)) in members.iter().enumerate() {
                if i > 0 {
                    out.push(',');
                }
                push_string(out, k);
                out.push(':');
                push_text(out, item);
            }
            out.push('}');
        }
    }
}

/// A JSON string onto `out`, quoted and escaped in place as `serde_json` escapes it: `\"`,
/// `\\`, `\b`, `\f`, `\n`, `\r`, `\t`, any other control character as `\u00xx`.
fn push_string(out: &mut String, s: &str) {
    use std::fmt::Write;
    out.reserve(s.len() + 2);
    out.push('"');
    // Most strings need no escape: copied whole after one scan.
    if !s.bytes().any(|b| b < 0x20 || b == b'"' || b == b'\\') {
        out.push_str(s);
        out.push('"');
        return;
    }
    let mut start = 0;
    for (i, b) in s.bytes().enumerate() {
        let escaped = match b {
            b'"' => "\\\"",
            b'\\' => "\\\\",
            b'\n' => "\\n",
            b'\r' => "\\r",
            b'\t' => "\\t",
            0x08 => "\\b",
            0x0c => "\\f",
            0..=0x1f => "",
            _ => continue,
        };
        // (Every byte escaped is ASCII: `i` is a character boundary.)
        out.push_str(&s[start..i]);
        if escaped.is_empty() {
            let _ = write!(out, "\\u{b:04x}");
        } else {
            out.push_str(escaped);
        }
        start = i + 1;
    }
    out.push_str(&s[start..]);
    out.push('"');
}

/// A JSON Pointer token for a key (`~` → `~0`, `/` → `~1`).
pub(crate) fn escape(k: &str) -> String {
    let mut out = String::with_capacity(k.len());
    push_token(&mut out, k);
    out
}

/// The pointer to key `k` of the object at pointer `at` (`""`: the root): `at/k` with `k`
/// escaped, built in one allocation (every argument the engines name goes through here).
pub(crate) fn child(at: &str, k: &str) -> String {
    let mut out = String::with_capacity(at.len() + 1 + k.len());
    out.push_str(at);
    out.push('/');
    push_token(&mut out, k);
    out
}

/// Key `k` escaped as a pointer token onto `out` (most keys need no escaping: copied whole).
fn push_token(out: &mut String, k: &str) {
    if !k.contains(['~', '/']) {
        out.push_str(k);
        return;
    }
    for c in k.chars() {
        match c {
            '~' => out.push_str("~0"),
            '/' => out.push_str("~1"),
            c => out.push(c),
        }
    }
}

/// A JSON Pointer token unescaped (`~1` is `/`, `~0` is `~`), borrowed when it has no `~`
/// (most have none: `serde_json`'s own walk allocated two strings per token).
pub(crate) fn unescape(token: &str) -> std::borrow::Cow<'_, str> {
    if token.contains('~') {
        token.replace("~1", "/").replace("~0", "~").into()
    } else {
        token.into()
    }
}

/// The value at a JSON Pointer, as [`serde_json::Value::pointer`] finds it, without
/// allocating for a token that has no escape.
pub(crate) fn pointer<'v>(
    v: &'v serde_json::Value,
    pointer: &str,
) -> Option<&'v serde_json::Value> {
    if pointer.is_empty() {
        return Some(v);
    }
    let mut at = v;
    for token in pointer.strip_prefix('/')?.split('/') {
        at = match at {
            serde_json::Value::Object(m) => m.get(&*unescape(token))?,
            serde_json::Value::Array(items) => items.get(array_index(token)?)?,
            _ => return None,
        };
    }
    Some(at)
}

/// An array index token as `serde_json` reads one: digits, no sign, no leading zero.
fn array_index(token: &str) -> Option<usize> {
    if token.starts_with('+') || (token.starts_with('0') && token.len() > 1) {
        return None;
    }
    token.parse().ok()
}

/// The place of the value `pointer` (RFC 6901: `""` is the whole document, `/tools/0/name` a
/// member of an element) names in `text`, or `None` when the text has no such value.
pub fn locate(text: &str, pointer: &str) -> Option<Place> {
    #[cfg(test)]
    WALKS.with(|n| n.set(n.get() + 1));
    let mut s = Scanner::new(text);
    s.ws();
    let mut place = Place {
        key: None,
        value: s.pos,
    };
    if pointer.is_empty() {
        return Some(place);
    }
    for token in pointer.strip_prefix('/')?.split('/') {
        let token = unescape(token);
        place = match s.peek()? {
            b'{' => s.member(&token)?,
            b'[' => s.element(token.parse().ok()?)?,
            _ => return None,
        };
    }
    Some(place)
}

/// Every container's members and elements, found in one walk of the text, and where its lines
/// start: locating many pointers in one large file (`audit` places every finding) costs one
/// walk in all, not one each, and a line and column a binary search and at most
/// [`CHECKPOINT`] bytes of counting, not a count from the start (issue 32, item 9: 3,000 tools
/// took 14 s, a 1 MB description 65 s). Built with [`Index::new`]; memory is a few words per
/// value of the document.
#[derive(Clone, Debug, Default)]
pub struct Index {
    // By a container's first byte (`{` or `[`).
    containers: HashMap<usize, Children>,
    // The first byte of the document's value.
    root: Option<usize>,
    // The byte offset each line starts at.
    lines: Vec<usize>,
    // How many characters start before byte `k * CHECKPOINT`, for each `k`.
    chars: Vec<usize>,
}

#[derive(Clone, Debug)]
enum Children {
    // The last of a repeated key, as serde_json keeps it.
    Object(HashMap<String, Place>),
    Array(Vec<usize>),
}

/// How far apart the character-count checkpoints are, in bytes.
const CHECKPOINT: usize = 4096;

impl Index {
    /// Walks `text` once. Text that is not well-formed JSON (or nested deeper than the
    /// scanner goes) gives an index of what was read before it; [`Index::locate`] then falls
    /// back to [`locate`].
    pub fn new(text: &str) -> Self {
        let bytes = text.as_bytes();
        let mut lines = vec![0];
        lines.extend(
            bytes
                .iter()
                .enumerate()
                .filter(|(_, b)| **b == b'\n')
                .map(|(i, _)| i + 1),
        );
        let mut chars = Vec::with_capacity(bytes.len() / CHECKPOINT + 1);
        let mut count = 0;
        for chunk in bytes.chunks(CHECKPOINT) {
            chars.push(count);
            count += chunk.iter().filter(|b| (**b & 0xC0) != 0x80).count();
        }
        // The end, for an offset at the text's length when that is a multiple.
        chars.push(count);
        let mut index = Self {
            containers: HashMap::new(),
            root: None,
            lines,
            chars,
        };
        let mut s = Scanner::new(text);
        s.ws();
        index.root = Some(s.pos);
        if index.walk(&mut s, 0).is_none() {
            // Malformed: no container is trusted; `locate` scans the text instead.
            index.root = None;
            index.containers.clear();
        }
        index
    }

    fn walk(&mut self, s: &mut Scanner<'_>, depth: usize) -> Option<()> {
        if depth > MAX_DEPTH {
            return None;
        }
        s.ws();
        let start = s.pos;
        match s.peek()? {
            b'{' => {
                s.pos += 1;
                let mut members = HashMap::new();
                s.ws();
                if s.peek()? == b'}' {
                    s.pos += 1;
                } else {
                    loop {
                        s.ws();
                        let key_at = s.pos;
                        let k = s.string()?.into_owned();
                        s.eat(b':')?;
                        s.ws();
                        let value_at = s.pos;
                        members.insert(
                            k,
                            Place {
                                key: Some(key_at),
                                value: value_at,
                            },
                        );
                        self.walk(s, depth + 1)?;
                        s.ws();
                        match s.peek()? {
                            b',' => s.pos += 1,
                            b'}' => {
                                s.pos += 1;
                                break;
                            }
                            _ => return None,
                        }
                    }
                }
                self.containers.insert(start, Children::Object(members));
            }
            b'[' => {
                s.pos += 1;
                let mut elements = Vec::new();
                s.ws();
                if s.peek()? == b']' {
                    s.pos += 1;
                } else {
                    loop {
                        s.ws();
                        elements.push(s.pos);
                        self.walk(s, depth + 1)?;
                        s.ws();
                        match s.peek()? {
                            b',' => s.pos += 1,
                            b']' => {
                                s.pos += 1;
                                break;
                            }
                            _ => return None,
                        }
                    }
                }
                self.containers.insert(start, Children::Array(elements));
            }
            _ => s.skip(depth)?,
        }
        Some(())
    }

    /// [`locate`] through the index: the same answer, without walking the text again.
    pub fn locate(&self, text: &str, pointer: &str) -> Option<Place> {
        let Some(root) = self.root else {
            return locate(text, pointer);
        };
        let mut place = Place {
            key: None,
            value: root,
        };
        if pointer.is_empty() {
            return Some(place);
        }
        for token in pointer.strip_prefix('/')?.split('/') {
            place = match self.containers.get(&place.value)? {
                Children::Object(m) => *m.get(&*unescape(token))?,
                Children::Array(v) => Place {
                    key: None,
                    value: *v.get(token.parse::<usize>().ok()?)?,
                },
            };
        }
        Some(place)
    }

    /// [`line_column`] through the index.
    pub fn line_column(&self, text: &str, offset: usize) -> (u32, u32) {
        let offset = offset.min(text.len());
        let line = self.lines.partition_point(|&start| start <= offset).max(1);
        let start = self.lines[line - 1];
        let column = self.chars_before(text, offset) - self.chars_before(text, start) + 1;
        (line as u32, column as u32)
    }

    /// How many characters start before byte `offset`.
    fn chars_before(&self, text: &str, offset: usize) -> usize {
        let k = offset / CHECKPOINT;
        let from = self.chars.get(k).copied().unwrap_or(0);
        from + text.as_bytes()[(k * CHECKPOINT).min(offset)..offset]
            .iter()
            .filter(|b| (**b & 0xC0) != 0x80)
            .count()
    }
}

// How many times this thread walked a text to locate one pointer (the cost an [`Index`]
// saves).
#[cfg(test)]
thread_local! {
    pub(crate) static WALKS: std::cell::Cell<usize> = const { std::cell::Cell::new(0) };
}

/// Every key repeated within one object, in the order the repeats appear.
pub fn duplicate_keys(text: &str) -> Vec<Duplicate> {
    let mut s = Scanner::new(text);
    let mut found = Vec::new();
    let mut path = Vec::new();
    s.ws();
    let _ = s.duplicates(&mut path, &mut found, 0);
    found
}

/// 1-based line and column (in characters) of a byte offset.
pub fn line_column(text: &str, offset: usize) -> (u32, u32) {
    let before = &text[..offset.min(text.len())];
    let line = before.matches('\n').count() + 1;
    let column = before.rsplit('\n').next().map_or(0, |l| l.chars().count()) + 1;
    (line as u32, column as u32)
}

/// The same JSON with its whitespace rewritten and nothing else: members keep their order,
/// numbers and strings their spelling (`serde_json::Value` sorts keys and re-spells numbers).
/// With `indent`, laid out like `serde_json::to_string_pretty` (`": "`, one member per line,
/// `{}` and `[]` kept empty); without, on one line with no space at all, as a JSON-RPC line
/// over stdio must be. Expects text `serde_json` has accepted.
pub fn reformat(text: &str, indent: Option<&str>) -> String {
    let bytes = text.trim_start_matches('\u{feff}').as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut depth = 0usize;
    let mut i = 0;
    let newline = |out: &mut Vec<u8>, depth: usize| {
        if let Some(unit) = indent {
            out.push(b'\n');
            for _ in 0..depth {
                out.extend_from_slice(unit.as_bytes());
            }
        }
    };
    while i < bytes.len() {
        let b = bytes[i];
        match b {
            b'"' => {
                let start = i;
                i += 1;
                while i < bytes.len() && bytes[i] != b'"' {
                    i += if bytes[i] == b'\\' { 2 } else { 1 };
                }
                i = (i + 1).min(bytes.len());
                out.extend_from_slice(&bytes[start..i]);
                continue;
            }
            b' ' | b'\t' | b'\n' | b'\r' => {}
            b'{' | b'[' => {
                out.push(b);
                // An empty container stays `{}` / `[]`.
                let mut j = i + 1;
                while matches!(bytes.get(j), Some(b' ' | b'\t' | b'\n' | b'\r')) {
                    j += 1;
                }
                if matches!(bytes.get(j), Some(b'}' | b']')) {
                    out.push(bytes[j]);
                    i = j + 1;
                    continue;
                }
                depth += 1;
                newline(&mut out, depth);
            }
            b'}' | b']' => {
                depth = depth.saturating_sub(1);
                newline(&mut out, depth);
                out.push(b);
            }
            b',' => {
                out.push(b);
                newline(&mut out, depth);
            }
            b':' => {
                out.push(b);
                if indent.is_some() {
                    out.push(b' ');
                }
            }
            _ => out.push(b),
        }
        i += 1;
    }
    // Only ASCII bytes were added or dropped, never inside a string: still UTF-8.
    String::from_utf8(out).unwrap_or_default()
}

/// Nesting deeper than this is given up on (serde_json itself stops at 128).
const MAX_DEPTH: usize = 256;

struct Scanner<'a> {
    text: &'a str,
    bytes: &'a [u8],
    pos: usize,
}

impl<'a> Scanner<'a> {
    fn new(text: &'a str) -> Self {
        // A byte-order mark is no JSON; skipping it keeps places right for what follows.
        let pos = if text.starts_with('\u{feff}') { 3 } else { 0 };
        Self {
            text,
            bytes: text.as_bytes(),
            pos,
        }
    }

    fn peek(&self) -> Option<u8> {
        self.bytes.get(self.pos).copied()
    }

    fn ws(&mut self) {
        while matches!(self.peek(), Some(b' ' | b'\t' | b'\n' | b'\r')) {
            self.pos += 1;
        }
    }

    fn eat(&mut self, b: u8) -> Option<()> {
        self.ws();
        (self.peek()? == b).then(|| self.pos += 1)
    }

    /// A string at the cursor, decoded; the cursor ends after its closing quote.
    fn string(&mut self) -> Option<std::borrow::Cow<'a, str>> {
        self.ws();
        let start = self.pos;
        if self.peek()? != b'"' {
            return None;
        }
        self.pos += 1;
        let mut escaped = false;
        loop {
            match self.peek()? {
                b'\\' => {
                    escaped = true;
                    self.pos += 2;
                }
                b'"' => break,
                _ => self.pos += 1,
            }
        }
        self.pos += 1;
        let raw = &self.text[start..self.pos];
        if escaped {
            serde_json::from_str::<String>(raw).ok().map(Into::into)
        } else {
            // No escape: the text itself, borrowed.
            Some(raw[1..raw.len() - 1].into())
        }
    }

    /// Skips a string without decoding it.
    fn skip_string(&mut self) -> Option<()> {
        self.pos += 1;
        loop {
            match self.peek()? {
                b'\\' => self.pos += 2,
                b'"' => {
                    self.pos += 1;
                    return Some(());
                }
                _ => self.pos += 1,
            }
        }
    }

    /// Skips one value of any kind.
    fn skip(&mut self, depth: usize) -> Option<()> {
        if depth > MAX_DEPTH {
            return None;
        }
        self.ws();
        match self.peek()? {
            b'{' => {
                self.pos += 1;
                self.ws();
                if self.peek()? == b'}' {
                    self.pos += 1;
                    return Some(());
                }
                loop {
                    self.ws();
                    if self.peek()? != b'"' {
                        return None;
                    }
                    self.skip_string()?;
                    self.eat(b':')?;
                    self.skip(depth + 1)?;
                    self.ws();
                    match self.peek()? {
                        b',' => self.pos += 1,
                        b'}' => {
                            self.pos += 1;
                            return Some(());
                        }
                        _ => return None,
                    }
                }
            }
            b'[' => {
                self.pos += 1;
                self.ws();
                if self.peek()? == b']' {
                    self.pos += 1;
                    return Some(());
                }
                loop {
                    self.skip(depth + 1)?;
                    self.ws();
                    match self.peek()? {
                        b',' => self.pos += 1,
                        b']' => {
                            self.pos += 1;
                            return Some(());
                        }
                        _ => return None,
                    }
                }
            }
            b'"' => self.skip_string(),
            _ => {
                // A number, true, false or null: up to the next delimiter.
                let start = self.pos;
                while self.peek().is_some_and(|b| {
                    !matches!(b, b',' | b'}' | b']' | b' ' | b'\t' | b'\n' | b'\r')
                }) {
                    self.pos += 1;
                }
                (self.pos > start).then_some(())
            }
        }
    }

    /// At an object: the member `key` (the last one, as serde_json keeps the last of a
    /// repeated key); the cursor ends at its value.
    fn member(&mut self, key: &str) -> Option<Place> {
        self.eat(b'{')?;
        let mut hit = None;
        self.ws();
        if self.peek()? == b'}' {
            return None;
        }
        loop {
            self.ws();
            let key_at = self.pos;
            let k = self.string()?;
            self.eat(b':')?;
            self.ws();
            let value_at = self.pos;
            if k == key {
                hit = Some(Place {
                    key: Some(key_at),
                    value: value_at,
                });
            }
            self.skip(0)?;
            self.ws();
            match self.peek()? {
                b',' => self.pos += 1,
                b'}' => break,
                _ => return None,
            }
        }
        let hit = hit?;
        self.pos = hit.value;
        Some(hit)
    }

    /// At an array: element `index`; the cursor ends at it.
    fn element(&mut self, index: usize) -> Option<Place> {
        self.eat(b'[')?;
        for _ in 0..index {
            self.skip(0)?;
            self.eat(b',')?;
        }
        self.ws();
        if self.peek()? == b']' {
            return None;
        }
        Some(Place {
            key: None,
            value: self.pos,
        })
    }

    fn duplicates(
        &mut self,
        path: &mut Vec<std::borrow::Cow<'a, str>>,
        found: &mut Vec<Duplicate>,
        depth: usize,
    ) -> Option<()> {
        if depth > MAX_DEPTH {
            return None;
        }
        self.ws();
        match self.peek()? {
            b'{' => {
                self.pos += 1;
                self.ws();
                if self.peek()? == b'}' {
                    self.pos += 1;
                    return Some(());
                }
                // Keys borrowed from the text: nothing is allocated for an unescaped key.
                let mut seen: std::collections::HashMap<std::borrow::Cow<'a, str>, usize> =
                    Default::default();
                loop {
                    self.ws();
                    let at = self.pos;
                    let k = self.string()?;
                    self.eat(b':')?;
                    if let Some(&first) = seen.get(&k) {
                        let tokens: Vec<String> = path
                            .iter()
                            .chain(std::iter::once(&k))
                            .map(|t| t.replace('~', "~0").replace('/', "~1"))
                            .collect();
                        found.push(Duplicate {
                            pointer: format!("/{}", tokens.join("/")),
                            first,
                            second: at,
                        });
                    } else {
                        seen.insert(k.clone(), at);
                    }
                    path.push(k);
                    self.duplicates(path, found, depth + 1)?;
                    path.pop();
                    self.ws();
                    match self.peek()? {
                        b',' => self.pos += 1,
                        b'}' => {
                            self.pos += 1;
                            return Some(());
                        }
                        _ => return None,
                    }
                }
            }
            b'[' => {
                self.pos += 1;
                self.ws();
                if self.peek()? == b']' {
                    self.pos += 1;
                    return Some(());
                }
                let mut i = 0usize;
                loop {
                    path.push(i.to_string().into());
                    self.duplicates(path, found, depth + 1)?;
                    path.pop();
                    i += 1;
                    self.ws();
                    match self.peek()? {
                        b',' => self.pos += 1,
                        b']' => {
                            self.pos += 1;
                            return Some(());
                        }
                        _ => return None,
                    }
                }
            }
            _ => self.skip(depth),
        }
    }
}

#[cfg(test)]
mod tests {
    /// A value written in place reads as its serialization: every kind of scalar, strings
    /// that need escaping and not, numbers of every representation, containers.
    #[test]
    fn push_text_writes_what_serde_json_serializes() {
        let values = serde_json::json!([
            null, true, false, 0, -7, 18446744073709551615u64, 1.0, -0.0, 2.5e-300, 1e21,
            "", "plain", "é ünïcode ✓", "quote \" in", "back\\slash", "tab\tand\nline",
            "\u{1}", "\u{7f}", "\u{8}\u{c}\r\u{1f} and é\u{0}", [1, "a", {"k": [null]}], {"b": 1, "a": "x\"y"},
            [], {}, [[], {}, [[1.5]]], {"key \"quoted\"\n": {"": [true, "é"]}, "z": []}
        ]);
        for v in values.as_array().unwrap() {
            let mut out = String::from("prefix ");
            super::push_text(&mut out, v);
            assert_eq!(out, format!("prefix {v}"), "{v:?}");
        }
    }

    /// The allocation-free pointer walk finds what `serde_json`'s does, escapes and array
    /// indices as it reads them included.
    #[test]
    fn the_pointer_walk_is_serde_jsons() {
        let v = serde_json::json!({
            "a/b": {"~": [10, {"x": true}]},
            "plain": [[1, 2], {"": 3}],
            "~1": "tilde one",
            "": {"": "empty"},
        });
        for p in [
            "",
            "/",
            "//",
            "/a~1b",
            "/a~1b/~0",
            "/a~1b/~0/0",
            "/a~1b/~0/1/x",
            "/a~1b/~0/01",
            "/a~1b/~0/+1",
            "/a~1b/~0/-1",
            "/a~1b/~0/2",
            "/plain/0/1",
            "/plain/1/",
            "/~01",
            "/~1",
            "/~2",
            "a",
            "/plain/0/1/x",
            "/plain/00",
            "/plain/1",
        ] {
            assert_eq!(super::pointer(&v, p), v.pointer(p), "{p:?}");
        }
        assert!(matches!(
            super::unescape("plain"),
            std::borrow::Cow::Borrowed("plain")
        ));
        assert_eq!(super::unescape("a~1b~0~01"), "a/b~~1");
    }

    /// A value's text is its `Display`'s, and a key's pointer escapes as RFC 6901 says.
    #[test]
    fn values_and_pointers_are_written_as_serde_json_and_rfc_6901_do() {
        let v = serde_json::json!({"a/b": ["x\"y", 1.5, -3, null, true, "\u{e9}\n\u{1}"], "~": {}});
        assert_eq!(super::text(&v), v.to_string());
        for leaf in v.as_object().unwrap().values() {
            assert_eq!(super::text(leaf), leaf.to_string());
        }
        assert_eq!(child("", "a/b"), "/a~1b");
        assert_eq!(child("/x", "~/"), "/x/~0~1");
        assert_eq!(child("/x", "plain"), "/x/plain");
        assert_eq!(child("", ""), "/");
        assert_eq!(format!("/{}", escape("a~/b")), child("", "a~/b"));
    }

    #[test]
    fn the_index_places_every_pointer_as_a_walk_does() {
        let long = "é".repeat(5000);
        let texts = [
            format!(
                "{{\"a\": [1, {{\"b~/c\": \"x\"}}], \"a\": [2, 3],\n \"é{long}\": {{\"d\": null}}, \"e\": {{}}}}"
            ),
            format!(
                "\u{feff}[{{\"name\": \"{long}\"}},\n\n  {{\"name\": \"t\", \"s\": {{\"x\": [[], [true]]}}}}]"
            ),
            "[1, {\"a\": ".to_owned(),
        ];
        let pointers = [
            "",
            "/a",
            "/a/0",
            "/a/1",
            "/a/2",
            "/a/1/b~1~0c",
            "/é",
            "/e",
            "/e/x",
            "/0",
            "/1",
            "/1/name",
            "/1/s/x/1/0",
            "/0/name",
            "/1/s/x/2",
            "/x",
        ];
        for text in &texts {
            let index = Index::new(text);
            for p in pointers {
                let p = if p == "/é" {
                    format!("/é{long}/d")
                } else {
                    p.to_owned()
                };
                let want = locate(text, &p);
                assert_eq!(index.locate(text, &p), want, "{p} in {text:.40}");
                if let Some(place) = want {
                    assert_eq!(
                        index.line_column(text, place.start()),
                        line_column(text, place.start()),
                        "{p}"
                    );
                }
            }
            for offset in [0, 1, text.len() / 2, text.len()] {
                if text.is_char_boundary(offset) {
                    assert_eq!(index.line_column(text, offset), line_column(text, offset));
                }
            }
        }
    }

    #[test]
    fn reformat_keeps_order_and_spelling() {
        let text = "{\"b\": 1.50, \"a\": [ ], \"s\": \"x, \\\" { y\", \"o\": {\"z\": [1, {}]}}";
        assert_eq!(
            reformat(text, None),
            r#"{"b":1.50,"a":[],"s":"x, \" { y","o":{"z":[1,{}]}}"#
        );
        // Pretty as serde_json lays out, but in the text's own order.
        let v: serde_json::Value = serde_json::from_str(r#"{"a":[1,{"b":{}}],"c":"d"}"#).unwrap();
        assert_eq!(
            reformat(&serde_json::to_string(&v).unwrap(), Some("  ")),
            serde_json::to_string_pretty(&v).unwrap()
        );
        assert_eq!(
            reformat(&reformat(text, Some("  ")), None),
            reformat(text, None)
        );
    }

    use super::*;

    const DOC: &str = "{\n  \"tools\": [\n    {\"name\": \"a\", \"inputSchema\": {\"type\": \"object\"}},\n    {\"name\": \"b\\\"q\", \"x/y\": [1, 2.5e3, true, null, {}]}\n  ]\n}";

    fn at(pointer: &str) -> Option<(u32, u32)> {
        locate(DOC, pointer).map(|p| line_column(DOC, p.start()))
    }

    #[test]
    fn pointers_land_on_keys_and_elements() {
        assert_eq!(at(""), Some((1, 1)));
        assert_eq!(at("/tools"), Some((2, 3)));
        assert_eq!(at("/tools/0"), Some((3, 5)));
        assert_eq!(at("/tools/0/inputSchema/type"), Some((3, 35)));
        assert_eq!(at("/tools/1/name"), Some((4, 6)));
        assert_eq!(at("/tools/1/x~1y/4"), Some((4, 52)));
        assert_eq!(at("/tools/2"), None);
        assert_eq!(at("/tools/0/nope"), None);
        assert_eq!(at("/tools/x"), None);
        assert_eq!(at("tools"), None);
        let p = locate(DOC, "/tools/0/name").unwrap();
        assert_eq!(&DOC[p.value..p.value + 3], "\"a\"");
    }

    #[test]
    fn repeated_keys_are_found_with_both_places() {
        let text = "{\"a\": 1, \"b\": {\"c\": 1, \"c\": 2}, \"a\": [ {\"d\": 0, \"d\": 0} ]}";
        let d = duplicate_keys(text);
        let pointers: Vec<&str> = d.iter().map(|d| d.pointer.as_str()).collect();
        assert_eq!(pointers, ["/b/c", "/a", "/a/0/d"]);
        assert_eq!(&text[d[1].first..d[1].first + 3], "\"a\"");
        assert_eq!(d[1].second, text.rfind("\"a\"").unwrap());
        // The last of a repeated key is the one serde_json keeps, and the one located.
        assert_eq!(locate(text, "/a").unwrap().key, Some(d[1].second));
        assert!(duplicate_keys(DOC).is_empty());
    }

    #[test]
    fn anything_malformed_gives_up_quietly() {
        for bad in [
            "",
            "{",
            "{\"a\" 1}",
            "[1,",
            "\"open",
            "{\"a\": [}",
            "\u{feff}",
        ] {
            let _ = locate(bad, "/a/0");
            let _ = duplicate_keys(bad);
        }
        let deep = "[".repeat(10_000);
        assert_eq!(
            locate(&deep, "/0/0"),
            Some(Place {
                key: None,
                value: 2
            })
        );
        assert!(duplicate_keys(&deep).is_empty());
    }
}
