//! `[package.metadata.agent-seer]` from a project's `Cargo.toml`, read without a TOML crate.
//!
//! The harness needs two strings from the manifest, and a full TOML parser cost the lean build
//! five crates. This reader parses the whole TOML grammar's structure — tables, array tables,
//! dotted and quoted keys, inline tables, arrays, the four string forms with their escapes —
//! so nothing inside a string or an array can be mistaken for a header, and keeps only string
//! values; numbers, booleans and dates are skipped as scalars. Anything malformed is an error
//! at its line and column.

use std::collections::BTreeMap;

/// A parsed value: the strings we may want, tables to look into, everything else skipped.
#[derive(Debug, PartialEq)]
enum Value {
    Str(String),
    Table(Vec<(Vec<String>, Value)>),
    Other,
}

/// A syntax error at a 1-based line and column.
#[derive(Debug, PartialEq)]
pub(crate) struct ManifestError {
    pub line: u32,
    pub column: u32,
    pub message: String,
}

/// The values of the table `prefix` (`["package", "metadata", "agent-seer"]`) of `manifest`,
/// by key: `Ok` for a string, `Err(())` for anything else (a number, a nested table), in
/// whichever form the manifest spells them: a `[prefix]` table, dotted keys under a parent
/// table, an inline table.
pub(crate) fn strings_under(
    manifest: &str,
    prefix: &[&str],
) -> Result<BTreeMap<String, Result<String, ()>>, ManifestError> {
    let mut p = Parser {
        s: manifest.as_bytes(),
        i: 0,
    };
    // A byte-order mark is no key.
    if p.s.starts_with("\u{feff}".as_bytes()) {
        p.i = 3;
    }
    let mut out = BTreeMap::new();
    let mut table: Vec<String> = Vec::new();
    loop {
        p.skip_blank_lines()?;
        if p.at_end() {
            return Ok(out);
        }
        if p.peek() == Some(b'[') {
            let array = p.s.get(p.i + 1) == Some(&b'[');
            p.i += if array { 2 } else { 1 };
            p.skip_ws();
            table = p.key()?;
            p.skip_ws();
            p.expect(b']')?;
            if array {
                p.expect(b']')?;
            }
        } else {
            let (key, value) = p.key_value()?;
            let mut path = table.clone();
            path.extend(key);
            collect(&path, value, prefix, &mut out);
        }
        p.end_of_line()?;
    }
}

/// Files `value` at `path` into `out` when it lies under `prefix`.
fn collect(
    path: &[String],
    value: Value,
    prefix: &[&str],
    out: &mut BTreeMap<String, Result<String, ()>>,
) {
    match value {
        Value::Table(entries) => {
            for (k, v) in entries {
                let mut p = path.to_vec();
                p.extend(k);
                collect(&p, v, prefix, out);
            }
        }
        leaf => {
            let under = path.len() > prefix.len() && path.iter().zip(prefix).all(|(a, b)| a == b);
            if under {
                // A direct child of the table is its key's value; anything deeper
                // (`harnesses.path = …`, `harnesses = { … }`) makes the key no string.
                let v = match leaf {
                    Value::Str(s) if path.len() == prefix.len() + 1 => Ok(s),
                    _ => Err(()),
                };
                out.insert(path[prefix.len()].clone(), v);
            }
        }
    }
}

struct Parser<'a> {
    s: &'a [u8],
    i: usize,
}

impl Parser<'_> {
    fn at_end(&self) -> bool {
        self.i >= self.s.len()
    }

    fn peek(&self) -> Option<u8> {
        self.s.get(self.i).copied()
    }

    fn error(&self, message: impl Into<String>) -> ManifestError {
        let before = &self.s[..self.i.min(self.s.len())];
        let line = before.iter().filter(|&&b| b == b'\n').count() + 1;
        let start = before
            .iter()
            .rposition(|&b| b == b'\n')
            .map_or(0, |p| p + 1);
        let column = String::from_utf8_lossy(&before[start..]).chars().count() + 1;
        ManifestError {
            line: line as u32,
            column: column as u32,
            message: message.into(),
        }
    }

    fn expect(&mut self, b: u8) -> Result<(), ManifestError> {
        if self.peek() == Some(b) {
            self.i += 1;
            Ok(())
        } else {
            Err(self.error(format!("expected `{}`", b as char)))
        }
    }

    fn skip_ws(&mut self) {
        while matches!(self.peek(), Some(b' ' | b'\t')) {
            self.i += 1;
        }
    }

    fn skip_comment(&mut self) {
        if self.peek() == Some(b'#') {
            while !matches!(self.peek(), None | Some(b'\n')) {
                self.i += 1;
            }
        }
    }

    /// Whitespace, comments and newlines (also inside arrays).
    fn skip_blank_lines(&mut self) -> Result<(), ManifestError> {
        loop {
            self.skip_ws();
            self.skip_comment();
            match self.peek() {
                Some(b'\n') => self.i += 1,
                Some(b'\r') if self.s.get(self.i + 1) == Some(&b'\n') => self.i += 2,
                _ => return Ok(()),
            }
        }
    }

    fn end_of_line(&mut self) -> Result<(), ManifestError> {
        self.skip_ws();
        self.skip_comment();
        match self.peek() {
            None => Ok(()),
            Some(b'\n') => {
                self.i += 1;
                Ok(())
            }
            Some(b'\r') if self.s.get(self.i + 1) == Some(&b'\n') => {
                self.i += 2;
                Ok(())
            }
            Some(_) => Err(self.error("expected the end of the line")),
        }
    }

    /// `key = value`.
    fn key_value(&mut self) -> Result<(Vec<String>, Value), ManifestError> {
        let key = self.key()?;
        self.skip_ws();
        self.expect(b'=')?;
        self.skip_ws();
        Ok((key, self.value()?))
    }

    /// A dotted key: bare, `"basic"` or `'literal'` parts separated by `.`.
    fn key(&mut self) -> Result<Vec<String>, ManifestError> {
        let mut parts = Vec::new();
        loop {
            self.skip_ws();
            let part = match self.peek() {
                Some(b'"') => self.basic_string()?,
                Some(b'\'') => self.literal_string()?,
                _ => {
                    let start = self.i;
                    while matches!(self.peek(), Some(b) if b.is_ascii_alphanumeric() || b == b'_' || b == b'-')
                    {
                        self.i += 1;
                    }
                    if start == self.i {
                        return Err(self.error("expected a key"));
                    }
                    String::from_utf8_lossy(&self.s[start..self.i]).into_owned()
                }
            };
            parts.push(part);
            self.skip_ws();
            if self.peek() == Some(b'.') {
                self.i += 1;
            } else {
                return Ok(parts);
            }
        }
    }

    fn value(&mut self) -> Result<Value, ManifestError> {
        match self.peek() {
            Some(b'"') => self.basic_string().map(Value::Str),
            Some(b'\'') => self.literal_string().map(Value::Str),
            Some(b'[') => {
                self.i += 1;
                loop {
                    self.skip_blank_lines()?;
                    if self.peek() == Some(b']') {
                        self.i += 1;
                        return Ok(Value::Other);
                    }
                    self.value()?;
                    self.skip_blank_lines()?;
                    match self.peek() {
                        Some(b',') => self.i += 1,
                        Some(b']') => {}
                        _ => return Err(self.error("expected `,` or `]` in an array")),
                    }
                }
            }
            Some(b'{') => {
                // Newlines, comments and a trailing comma inside are TOML 1.1's (cargo reads
                // them).
                self.i += 1;
                let mut entries = Vec::new();
                loop {
                    self.skip_blank_lines()?;
                    if self.peek() == Some(b'}') {
                        self.i += 1;
                        return Ok(Value::Table(entries));
                    }
                    entries.push(self.key_value()?);
                    self.skip_blank_lines()?;
                    match self.peek() {
                        Some(b',') => self.i += 1,
                        Some(b'}') => {}
                        _ => return Err(self.error("expected `,` or `}` in an inline table")),
                    }
                }
            }
            _ => {
                // A number, boolean or date: up to a delimiter or a blank, but a date may go on
                // with a space and its time (`1979-05-27 07:32:00`).
                let start = self.i;
                let scalar =
                    |b: u8| !matches!(b, b',' | b']' | b'}' | b'#' | b' ' | b'\t' | b'\n' | b'\r');
                while self.peek().is_some_and(scalar) {
                    self.i += 1;
                }
                if start == self.i {
                    return Err(self.error("expected a value"));
                }
                let word = &self.s[start..self.i];
                let is_date = word.len() == 10
                    && word.iter().enumerate().all(|(k, b)| match k {
                        4 | 7 => *b == b'-',
                        _ => b.is_ascii_digit(),
                    });
                if is_date
                    && self.peek() == Some(b' ')
                    && self.s.get(self.i + 1).is_some_and(u8::is_ascii_digit)
                {
                    self.i += 1;
                    while self.peek().is_some_and(scalar) {
                        self.i += 1;
                    }
                }
                Ok(Value::Other)
            }
        }
    }

    /// `"…"` or `"""…"""`, escapes decoded.
    fn basic_string(&mut self) -> Result<String, ManifestError> {
        let multi = self.s[self.i..].starts_with(b"\"\"\"");
        self.i += if multi { 3 } else { 1 };
        if multi {
            self.skip_newline();
        }
        let mut out = Vec::new();
        loop {
            match self.peek() {
                None => return Err(self.error("an unterminated string")),
                Some(b'\n') if !multi => return Err(self.error("an unterminated string")),
                Some(b'"') if !multi => {
                    self.i += 1;
                    break;
                }
                Some(b'"') if self.s[self.i..].starts_with(b"\"\"\"") => {
                    // Up to two quotes may end the content just before the closing three.
                    let mut n = 3;
                    while self.s.get(self.i + n) == Some(&b'"') && n < 5 {
                        n += 1;
                    }
                    out.extend(std::iter::repeat_n(b'"', n - 3));
                    self.i += n;
                    break;
                }
                Some(b'\\') => {
                    self.i += 1;
                    let c = self
                        .peek()
                        .ok_or_else(|| self.error("an unterminated string"))?;
                    self.i += 1;
                    match c {
                        b'n' => out.push(b'\n'),
                        b't' => out.push(b'\t'),
                        b'r' => out.push(b'\r'),
                        b'b' => out.push(8),
                        b'f' => out.push(12),
                        b'e' => out.push(27),
                        b'"' => out.push(b'"'),
                        b'\\' => out.push(b'\\'),
                        b'u' | b'U' | b'x' => {
                            let n = match c {
                                b'u' => 4,
                                b'U' => 8,
                                _ => 2,
                            };
                            let hex = self
                                .s
                                .get(self.i..self.i + n)
                                .and_then(|h| std::str::from_utf8(h).ok())
                                .and_then(|h| u32::from_str_radix(h, 16).ok())
                                .and_then(char::from_u32)
                                .ok_or_else(|| self.error("an invalid escape"))?;
                            self.i += n;
                            out.extend(hex.to_string().as_bytes());
                        }
                        b' ' | b'\t' | b'\r' | b'\n' if multi => {
                            // A line-ending backslash trims the whitespace that follows.
                            self.i -= 1;
                            while matches!(self.peek(), Some(b' ' | b'\t' | b'\r' | b'\n')) {
                                self.i += 1;
                            }
                        }
                        _ => {
                            self.i -= 1;
                            return Err(self.error("an invalid escape"));
                        }
                    }
                }
                Some(b) => {
                    out.push(b);
                    self.i += 1;
                }
            }
        }
        String::from_utf8(out).map_err(|_| self.error("a string that is not UTF-8"))
    }

    /// `'…'` or `'''…'''`, verbatim.
    fn literal_string(&mut self) -> Result<String, ManifestError> {
        let multi = self.s[self.i..].starts_with(b"'''");
        let fence: &[u8] = if multi { b"'''" } else { b"'" };
        self.i += fence.len();
        if multi {
            self.skip_newline();
        }
        let start = self.i;
        loop {
            match self.peek() {
                None => return Err(self.error("an unterminated string")),
                Some(b'\n') if !multi => return Err(self.error("an unterminated string")),
                _ if self.s[self.i..].starts_with(fence) => {
                    // Up to two quotes may end the content just before the closing three.
                    let mut quotes = fence.len();
                    while multi && quotes < 5 && self.s.get(self.i + quotes) == Some(&b'\'') {
                        quotes += 1;
                    }
                    let end = self.i + quotes - fence.len();
                    let text = String::from_utf8_lossy(&self.s[start..end]).into_owned();
                    self.i += quotes;
                    return Ok(text);
                }
                _ => self.i += 1,
            }
        }
    }

    /// The newline right after a multi-line string's opening quotes, which is not content.
    fn skip_newline(&mut self) {
        if self.s[self.i..].starts_with(b"\r\n") {
            self.i += 2;
        } else if self.peek() == Some(b'\n') {
            self.i += 1;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const PREFIX: &[&str] = &["package", "metadata", "agent-seer"];

    fn read(text: &str) -> BTreeMap<String, Result<String, ()>> {
        strings_under(text, PREFIX).unwrap()
    }

    fn ok(pairs: &[(&str, &str)]) -> BTreeMap<String, Result<String, ()>> {
        pairs
            .iter()
            .map(|(k, v)| ((*k).to_owned(), Ok((*v).to_owned())))
            .collect()
    }

    #[test]
    fn every_spelling_of_the_table_is_read() {
        let want = ok(&[("harnesses", "h"), ("transcripts", "t")]);
        for text in [
            "[package.metadata.agent-seer]\nharnesses = \"h\"\ntranscripts = 't'\n",
            "[package]\nname = \"x\"\nmetadata.agent-seer.harnesses = \"h\"\nmetadata.agent-seer.transcripts = \"t\"\n",
            "[package.metadata]\nagent-seer = { harnesses = \"h\", transcripts = \"t\" }\n",
            "[package]\nmetadata = { agent-seer = { harnesses = \"h\" } }\n[package.metadata.agent-seer]\ntranscripts = \"t\"",
            "[\"package\".'metadata'.\"agent-seer\"]\r\nharnesses = \"h\" # a comment\r\ntranscripts = \"\"\"t\"\"\"\r\n",
        ] {
            assert_eq!(read(text), want, "{text}");
        }
    }

    #[test]
    fn headers_inside_strings_and_arrays_are_not_headers() {
        let text = r#"[package]
description = """
[package.metadata.agent-seer]
harnesses = "fake"
"""
keywords = [
  "a", # [package.metadata.agent-seer]
  'b]', [1, 2],
]
version = "0.1.0"
date = 1979-05-27 07:32:00Z
flag = true
[dependencies]
serde = { version = "1", features = ["derive"] }
[[bin]]
name = "x"
[package.metadata.agent-seer]
harnesses = "real\tone\u00e9"
"#;
        assert_eq!(read(text), ok(&[("harnesses", "real\tone\u{e9}")]));
    }

    /// What cargo reads and a strict TOML 1.0 reader might not: a byte-order mark, inline
    /// tables over several lines with a trailing comma, quotes ending a multi-line literal,
    /// CRLF after an opening `"""`.
    #[test]
    fn what_cargo_accepts_reads() {
        let want = ok(&[("harnesses", "h"), ("transcripts", "t")]);
        for text in [
            "\u{feff}[package.metadata.agent-seer]\nharnesses = \"h\"\ntranscripts = \"t\"\n",
            "[package.metadata]\nagent-seer = {\n  harnesses = \"h\", # the suites\n  transcripts = \"t\",\n}\n",
            "[package]\ndescription = '''it's here''''\n[package.metadata.agent-seer]\nharnesses = \"h\"\ntranscripts = \"t\"\n",
            "[package.metadata.agent-seer]\r\nharnesses = \"\"\"\r\nh\"\"\"\r\ntranscripts = '''\r\nt'''\r\n",
        ] {
            assert_eq!(read(text), want, "{text:?}");
        }
        let m = read(
            "[package]\ndescription = '''x'''''\n[package.metadata.agent-seer]\nharnesses = \"h\"\n",
        );
        assert_eq!(m, ok(&[("harnesses", "h")]));
    }

    #[test]
    fn a_value_that_is_not_a_string_is_named() {
        let m = read("[package.metadata.agent-seer]\nharnesses = 3\n");
        assert_eq!(m.get("harnesses"), Some(&Err(())));
    }

    #[test]
    fn malformed_manifests_are_errors_at_their_place() {
        for (text, line, column) in [
            ("[package\nname = 1\n", 1, 9),
            ("[package]\nname = \"x\n", 2, 10),
            ("[package]\nname = \n", 2, 8),
            ("[package]\nname = \"x\" y\n", 2, 12),
            ("a = [1 2]\n", 1, 8),
        ] {
            let e = strings_under(text, PREFIX).unwrap_err();
            assert_eq!((e.line, e.column), (line, column), "{text:?}: {e:?}");
        }
    }

    /// The project's own manifest reads (a real file, with every TOML form it uses).
    #[test]
    fn the_projects_manifest_reads() {
        let text =
            std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/Cargo.toml")).unwrap();
        strings_under(&text, PREFIX).unwrap();
    }
}
