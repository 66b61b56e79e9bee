//! Regexes from users' files, compiled at their first use, and on ASCII text in an ASCII form
//! that costs a fraction to compile; and the Unicode character classes the regex crate reads
//! (`\w`, `\s`, case folding), for the crate's own text scanners that stand in for regexes.
//! Under nextest a trial is a process that greps a few strings; compiling the Unicode form of
//! every pattern its suite holds was most of its time (`\w` and `(?i)` over all of Unicode:
//! 0.3–1.5 ms a pattern, where the ASCII form takes 0.02–0.35 ms). The main type is
//! [`LazyRegex`], made by [`LazyRegex::new`] (checked at once, unless a suite's files are
//! loading under [`deferring`]).
//!
//! On ASCII text the ASCII form matches exactly where the Unicode form does: the two differ
//! only on non-ASCII characters (`\w`, `\s`, `\b`, `.`, a negated class) and in case folding
//! to non-ASCII letters (`k` with the Kelvin sign), none of which ASCII text holds. A pattern
//! that could name a non-ASCII character itself (a non-ASCII letter, `\x{…}`, `\u…`,
//! `\p{…}`) keeps the Unicode form for all text.

use std::cell::Cell;
use std::sync::OnceLock;

use regex::Regex;

thread_local! {
    static DEFERRED: Cell<bool> = const { Cell::new(false) };
    static BROKEN: Cell<u64> = const { Cell::new(0) };
}

/// Runs `load` with the compiling of every [`LazyRegex::new`] left to the regex's first use:
/// for files shown to have loaded clean with this build before (`check::prepared`), whose
/// regexes all compile. Anywhere else an invalid regex must be an error at its line.
pub(crate) fn deferring<T>(load: impl FnOnce() -> T) -> T {
    struct Reset(bool);
    impl Drop for Reset {
        fn drop(&mut self) {
            DEFERRED.with(|d| d.set(self.0));
        }
    }
    let _reset = Reset(DEFERRED.with(|d| d.replace(true)));
    load()
}

/// How many times this thread has used a regex or a tool's schema whose compiling a stamp
/// deferred and which did not compile. It never should: the stamp holds only for files that
/// loaded clean with this very build. A stamp copied from elsewhere or edited by hand could
/// still vouch for one; the regex then matches nothing and the schema checks nothing, and
/// the trial, which compares this count before and after it runs (`check::plan`), runs
/// again on its suite loaded in full, which says what is wrong and where. Per thread: a
/// trial runs on one thread, and another trial's stamp is not its business.
pub(crate) fn broken_uses() -> u64 {
    BROKEN.with(Cell::get)
}

/// Counts a use of something a stamp deferred that does not compile ([`broken_uses`]).
pub(crate) fn note_broken_use() {
    BROKEN.with(|b| b.set(b.get() + 1));
}

/// A regex from a user's file, compiled when first matched.
#[derive(Clone)]
pub struct LazyRegex {
    source: Box<str>,
    /// `None` inside: the pattern does not compile (only under [`deferring`], through a stamp
    /// that should not have held; see [`broken_uses`]).
    unicode: OnceLock<Option<Regex>>,
    /// `None` inside: no ASCII form (the pattern could name a non-ASCII character, or the
    /// form does not build), the Unicode form serves all text.
    ascii: OnceLock<Option<regex::bytes::Regex>>,
}

impl LazyRegex {
    /// A regex from a file: compiled now, so an invalid one is an error where it is read —
    /// except under [`deferring`], where the files are known good and it compiles at its
    /// first use.
    pub fn new(source: &str) -> Result<Self, regex::Error> {
        let re = Self {
            source: source.into(),
            unicode: OnceLock::new(),
            ascii: OnceLock::new(),
        };
        if !DEFERRED.with(Cell::get) {
            let compiled = Regex::new(source)?;
            let _ = re.unicode.set(Some(compiled));
        }
        Ok(re)
    }

    /// The pattern as written.
    pub fn as_str(&self) -> &str {
        &self.source
    }

    /// Whether the regex matches anywhere in `text`.
    pub fn is_match(&self, text: &str) -> bool {
        match self.ascii_for(text) {
            Some(re) => re.is_match(text.as_bytes()),
            None => self.unicode().is_some_and(|re| re.is_match(text)),
        }
    }

    /// The Unicode form, compiled at the first call; `None` (counted, [`broken_uses`]) when it
    /// does not compile.
    fn unicode(&self) -> Option<&Regex> {
        let re = self
            .unicode
            .get_or_init(|| Regex::new(&self.source).ok())
            .as_ref();
        if re.is_none() {
            note_broken_use();
        }
        re
    }

    /// The ASCII form, for ASCII text, when the pattern has one.
    fn ascii_for(&self, text: &str) -> Option<&regex::bytes::Regex> {
        if !text.is_ascii() {
            return None;
        }
        self.ascii
            .get_or_init(|| {
                ascii_safe(&self.source)
                    .then(|| {
                        regex::bytes::RegexBuilder::new(&self.source)
                            .unicode(false)
                            .build()
                            .ok()
                    })
                    .flatten()
            })
            .as_ref()
    }
}

/// Whether the pattern names only ASCII characters: ASCII itself, without an escape that
/// stands for a code point or a Unicode class (`\x`, `\u`, `\U`, `\p`, `\P`, `\N`), so that
/// its ASCII form matches ASCII text exactly as its Unicode form does.
fn ascii_safe(pattern: &str) -> bool {
    if !pattern.is_ascii() {
        return false;
    }
    let mut chars = pattern.chars();
    while let Some(c) = chars.next() {
        if c == '\\' && matches!(chars.next(), Some('x' | 'u' | 'U' | 'p' | 'P' | 'N')) {
            return false;
        }
    }
    true
}

impl std::fmt::Debug for LazyRegex {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_tuple("LazyRegex").field(&self.source).finish()
    }
}

impl std::fmt::Display for LazyRegex {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.source)
    }
}

impl PartialEq for LazyRegex {
    fn eq(&self, other: &Self) -> bool {
        self.source == other.source
    }
}

/// Whether `c` is a word character as the regex crate's Unicode `\w` and `\b` read it.
pub(crate) fn is_word(c: char) -> bool {
    if c.is_ascii() {
        return c.is_ascii_alphanumeric() || c == '_';
    }
    // The crate is built with regex-syntax's `unicode-perl` tables, so this never errs.
    regex_syntax::try_is_word_character(c).unwrap_or(false)
}

/// Whether `c` is whitespace as the regex crate's Unicode `\s` reads it (`White_Space`).
pub(crate) fn is_space(c: char) -> bool {
    c.is_whitespace()
}

/// Whether `c` is the ASCII character `ascii` as the regex crate's case-insensitive Unicode
/// matching reads it (simple case folding): either ASCII case, and the two non-ASCII letters
/// that fold onto ASCII ones, the Kelvin sign (`k`) and the long s (`s`).
pub(crate) fn eq_ignore_case(c: char, ascii: u8) -> bool {
    let want = ascii.to_ascii_lowercase();
    match c {
        '\u{212A}' => want == b'k',
        '\u{17F}' => want == b's',
        c => u8::try_from(c).is_ok_and(|b| b.is_ascii() && b.to_ascii_lowercase() == want),
    }
}

/// The end of the ASCII `literal` read case-insensitively ([`eq_ignore_case`]) in `text` from
/// byte `at` (a character boundary), when it is there.
pub(crate) fn literal_ignore_case(text: &str, at: usize, literal: &str) -> Option<usize> {
    let rest = text.get(at..)?;
    let mut chars = rest.char_indices();
    for b in literal.bytes() {
        let (_, c) = chars.next()?;
        if !eq_ignore_case(c, b) {
            return None;
        }
    }
    Some(chars.next().map_or(text.len(), |(i, _)| at + i))
}

/// Whether a word boundary (`\b`, Unicode) is at byte `at` of `text`, a character boundary.
pub(crate) fn word_boundary(text: &str, at: usize) -> bool {
    let before = text[..at].chars().next_back().is_some_and(is_word);
    let after = text[at..].chars().next().is_some_and(is_word);
    before != after
}

/// Texts for testing a hand-written scanner against the regex it stands for: `n` strings of up
/// to `max_pieces - 1` pieces each, drawn from `pieces` by a xorshift generator seeded with
/// `seed` (the same texts on every run).
#[cfg(test)]
pub(crate) fn random_texts<'p>(
    pieces: &'p [&'p str],
    seed: u64,
    max_pieces: u64,
    n: usize,
) -> impl Iterator<Item = String> + 'p {
    let mut state = seed;
    let mut next = move || {
        state ^= state << 13;
        state ^= state >> 7;
        state ^= state << 17;
        state
    };
    (0..n).map(move |_| {
        let len = next() % max_pieces;
        (0..len)
            .map(|_| pieces[(next() % pieces.len() as u64) as usize])
            .collect()
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::path::Path;

    /// Every string of the shipped harnesses and matrices under a key that holds a regex
    /// (`regex:`, `pattern:`, `not_pattern:`, `grounded:`, `errors:`, `matches:`, and the
    /// server-wide `tools:` patterns) that compiles, and patterns that lean on what the two
    /// forms could disagree on.
    fn patterns() -> Vec<String> {
        fn walk(v: &serde_json::Value, key: Option<&str>, out: &mut Vec<String>) {
            const KEYS: [&str; 7] = [
                "regex",
                "pattern",
                "not_pattern",
                "grounded",
                "errors",
                "matches",
                "tools",
            ];
            match v {
                serde_json::Value::String(s)
                    if key.is_some_and(|k| KEYS.contains(&k)) && Regex::new(s).is_ok() =>
                {
                    out.push(s.clone());
                }
                serde_json::Value::Array(items) => items.iter().for_each(|i| walk(i, key, out)),
                serde_json::Value::Object(m) => {
                    m.iter().for_each(|(k, v)| walk(v, Some(k), out));
                }
                _ => {}
            }
        }
        let mut out: Vec<String> = [
            r"(?i)\bk\w+\b",
            r"(?is)^\s*select\s.*\bfrom\s+(?:\w+\.)?items\b.*$",
            r"[^a-z]+",
            r"(?i)[a-z]+\d*",
            r"(?s).+",
            r"\B\w\b",
            r"(?i)\x{212A}",
            r"(?i)\u{17F}",
            r"(?i)\p{Greek}|s",
            r"(?m)^\S+$",
            r"[[:alpha:]]+",
            r"\\x",
            r"(?i)^\s*(?:error|ſql)\b",
        ]
        .map(str::to_owned)
        .to_vec();
        let root = Path::new(env!("CARGO_MANIFEST_DIR"));
        let before = out.len();
        for dir in ["harnesses", "capabilities"] {
            for entry in std::fs::read_dir(root.join(dir)).unwrap() {
                let path = entry.unwrap().path();
                if path.extension().is_some_and(|e| e == "yaml") {
                    let text = std::fs::read_to_string(&path).unwrap();
                    let v: serde_json::Value = serde_saphyr::from_str(&text).unwrap();
                    walk(&v, None, &mut out);
                }
            }
        }
        assert!(
            out.len() - before > 60,
            "{} shipped regexes",
            out.len() - before
        );
        out.sort();
        out.dedup();
        out
    }

    /// Haystacks from a small xorshift generator over the characters the patterns care about:
    /// half ASCII, half with non-ASCII letters, marks and spaces (the Kelvin sign and the long
    /// s fold to ASCII letters), plus texts a suite's policies see.
    fn haystacks() -> Vec<String> {
        let ascii: Vec<char> = "aksKS_09 \t\n.-/:'\"(),;=<>*%gfilexmpSELECTFROMselectfrom"
            .chars()
            .collect();
        let mut wide = ascii.clone();
        wide.extend("é\u{212A}\u{17F}\u{a0}\u{2003}—ü\u{301}İıß".chars());
        let mut state = 0x2545_f491_4f6c_dd1du64;
        let mut out = vec![
            String::new(),
            "SELECT title FROM books WHERE author = 'Ursula K. Le Guin' ORDER BY year".into(),
            "see gs://bucket/a.png and out/clip.MP4, then file:///tmp/x.wav".into(),
            "Error: no such table".into(),
            "SELECT naïve FROM items — ſelect".into(),
        ];
        for n in 0..6000 {
            let alphabet = if n % 2 == 0 { &ascii } else { &wide };
            let mut s = String::new();
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            for i in 0..(state % 40) {
                let r = state.rotate_left(i as u32 * 5);
                s.push(alphabet[(r % alphabet.len() as u64) as usize]);
            }
            out.push(s);
        }
        out
    }

    /// On every haystack the lazy regex answers as the regex crate does, and on ASCII ones
    /// its ASCII form finds the very matches and groups the Unicode form finds.
    #[test]
    fn the_ascii_form_matches_ascii_text_as_the_unicode_form_does() {
        let texts = haystacks();
        let mut with_ascii = 0;
        for p in patterns() {
            let lazy = LazyRegex::new(&p).unwrap();
            let re = Regex::new(&p).unwrap();
            with_ascii += usize::from(lazy.ascii_for("a").is_some());
            for t in &texts {
                assert_eq!(lazy.is_match(t), re.is_match(t), "{p} on {t:?}");
                let Some(ascii) = lazy.ascii_for(t) else {
                    continue;
                };
                let groups = |c: Vec<Option<std::ops::Range<usize>>>| c;
                let want: Vec<_> = re
                    .captures_iter(t)
                    .map(|c| groups(c.iter().map(|m| m.map(|m| m.range())).collect()))
                    .collect();
                let got: Vec<_> = ascii
                    .captures_iter(t.as_bytes())
                    .map(|c| groups(c.iter().map(|m| m.map(|m| m.range())).collect()))
                    .collect();
                assert_eq!(got, want, "{p} on {t:?}");
            }
        }
        assert!(
            with_ascii > 20,
            "only {with_ascii} patterns had an ASCII form"
        );
    }

    #[test]
    fn patterns_that_name_non_ascii_characters_keep_the_unicode_form() {
        for p in [
            r"(?i)\x{212A}",
            r"(?i)\u{17F}",
            r"\p{L}",
            r"(?i)é",
            r"\N{DIGIT ONE}",
        ] {
            assert!(!ascii_safe(p), "{p}");
        }
        assert!(ascii_safe(r"\\x\d"));
        // The Kelvin sign folds to `k`: ASCII text still matches through the Unicode form.
        let kelvin = LazyRegex::new(r"(?i)\x{212A}").unwrap();
        assert!(kelvin.is_match("k"));
        let long_s = LazyRegex::new(r"(?i)\u{17F}").unwrap();
        assert!(long_s.is_match("S"));
    }

    /// An invalid regex is an error where it is read, except under `deferring` (a stamp
    /// vouched for it): it then matches nothing and counts a broken use, and never panics.
    #[test]
    fn an_invalid_regex_is_an_error_unless_deferred() {
        assert!(LazyRegex::new("(").is_err());
        let deferred = deferring(|| LazyRegex::new("(")).unwrap();
        assert_eq!(deferred.as_str(), "(");
        // The switch is back off after the load, and was on only in it.
        assert!(LazyRegex::new("(").is_err());
        let before = broken_uses();
        assert!(!deferred.is_match("("));
        assert!(!deferred.is_match("(é"));
        assert_eq!(broken_uses(), before + 2);
        let ok = deferring(|| LazyRegex::new("a+b")).unwrap();
        assert!(ok.unicode.get().is_none());
        assert!(ok.is_match("xaab") && ok.is_match("éaab"));
        assert_eq!(broken_uses(), before + 2);
    }

    /// Every character, each after an `a`, as one haystack: `(position, character)` of each.
    fn every_char() -> (String, Vec<(usize, char)>) {
        let mut text = String::new();
        let mut at = Vec::new();
        for c in (0..=0x10FFFFu32).filter_map(char::from_u32) {
            text.push('a');
            at.push((text.len(), c));
            text.push(c);
        }
        (text, at)
    }

    /// The classes the scanners use are the regex crate's, on every character: `\w`, `\s`,
    /// `\b` and `(?i)` for each ASCII letter and digit.
    #[test]
    fn the_unicode_classes_are_the_regex_crates() {
        let (text, at) = every_char();
        let starts = |re: &str| -> std::collections::HashSet<usize> {
            Regex::new(re)
                .unwrap()
                .find_iter(&text)
                .map(|m| m.start())
                .collect()
        };
        let word = starts(r"\w");
        let space = starts(r"\s");
        // `a\b`: a boundary after the `a` is a non-word character after it.
        let boundary: std::collections::HashSet<usize> = Regex::new(r"a\b")
            .unwrap()
            .find_iter(&text)
            .map(|m| m.end())
            .collect();
        for &(i, c) in &at {
            assert_eq!(
                is_word(c),
                word.contains(&i),
                "\\w {c:?} U+{:04X}",
                c as u32
            );
            assert_eq!(is_space(c), space.contains(&i), "\\s {c:?}");
            assert_eq!(word_boundary(&text, i), boundary.contains(&i), "\\b {c:?}");
        }
        // The characters that fold onto an ASCII letter or digit, then which one each is.
        let folds = starts(r"(?i)[a-z0-9]");
        let alnum: Vec<u8> = (b'a'..=b'z').chain(b'0'..=b'9').collect();
        let one: Vec<Regex> = alnum
            .iter()
            .map(|&b| Regex::new(&format!("(?i)^{}$", b as char)).unwrap())
            .collect();
        for &(i, c) in &at {
            for (&b, re) in alnum.iter().zip(&one) {
                let want = folds.contains(&i) && re.is_match(c.encode_utf8(&mut [0; 4]));
                assert_eq!(eq_ignore_case(c, b), want, "(?i){} {c:?}", b as char);
            }
        }
        let folding = at.iter().filter(|(i, _)| folds.contains(i)).count();
        assert_eq!(
            folding,
            62 + 2,
            "ASCII letters, digits, the Kelvin sign, the long s"
        );
        assert_eq!(literal_ignore_case("xGſ://", 1, "gs"), Some(4));
        assert_eq!(literal_ignore_case("xgs", 1, "gs3"), None);
    }
}
