//! Regexes compiled at their first use, and on ASCII text in an ASCII form that costs a
//! fraction to compile. Under nextest a trial is a process that greps a few strings; compiling
//! the Unicode form of every pattern its suite holds was most of its time (`\w` and `(?i)`
//! over all of Unicode: 0.3–1.5 ms a pattern, where the ASCII form takes 0.02–0.35 ms).
//! The main type is [`LazyRegex`], made by [`LazyRegex::new`] (checked at once, unless a
//! suite's files are loading under [`deferring`]) or [`LazyRegex::builtin`].
//!
//! On ASCII text the ASCII form matches exactly where the Unicode form does: the two differ
//! only on non-ASCII characters (`\w`, `\s`, `\b`, `.`, a negated class) and in case folding
//! to non-ASCII letters (`k` with the Kelvin sign), none of which ASCII text holds. A pattern
//! that could name a non-ASCII character itself (a non-ASCII letter, `\x{…}`, `\u…`,
//! `\p{…}`) keeps the Unicode form for all text.

use std::borrow::Cow;
use std::cell::Cell;
use std::sync::OnceLock;

use regex::Regex;

thread_local! {
    static DEFERRED: Cell<bool> = const { Cell::new(false) };
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

/// A regex from a user's file or from this crate, compiled when first matched.
#[derive(Clone)]
pub struct LazyRegex {
    source: Cow<'static, str>,
    unicode: OnceLock<Regex>,
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
            source: Cow::Owned(source.to_owned()),
            unicode: OnceLock::new(),
            ascii: OnceLock::new(),
        };
        if !DEFERRED.with(Cell::get) {
            let compiled = Regex::new(source)?;
            let _ = re.unicode.set(compiled);
        }
        Ok(re)
    }

    /// One of this crate's own regexes (a unit test compiles each).
    pub(crate) const fn builtin(source: &'static str) -> Self {
        Self {
            source: Cow::Borrowed(source),
            unicode: OnceLock::new(),
            ascii: OnceLock::new(),
        }
    }

    /// The pattern as written.
    pub fn as_str(&self) -> &str {
        &self.source
    }

    /// Whether the regex matches anywhere in `text`.
    pub fn is_match(&self, text: &str) -> bool {
        match self.ascii_for(text) {
            Some(re) => re.is_match(text.as_bytes()),
            None => self.unicode().is_match(text),
        }
    }

    /// Every match in `text`, leftmost first, as the slices of `text` it covers.
    pub fn find_all<'t>(&self, text: &'t str) -> Vec<&'t str> {
        match self.ascii_for(text) {
            Some(re) => re
                .find_iter(text.as_bytes())
                .map(|m| &text[m.range()])
                .collect(),
            None => self.unicode().find_iter(text).map(|m| m.as_str()).collect(),
        }
    }

    /// Capture group `group` of every match in `text` that sets it.
    pub fn group_all<'t>(&self, text: &'t str, group: usize) -> Vec<&'t str> {
        match self.ascii_for(text) {
            Some(re) => re
                .captures_iter(text.as_bytes())
                .filter_map(|c| c.get(group))
                .map(|m| &text[m.range()])
                .collect(),
            None => self
                .unicode()
                .captures_iter(text)
                .filter_map(|c| c.get(group))
                .map(|m| m.as_str())
                .collect(),
        }
    }

    /// The Unicode form, compiled at the first call.
    pub fn unicode(&self) -> &Regex {
        self.unicode.get_or_init(|| {
            Regex::new(&self.source).unwrap_or_else(|e| {
                // Only a regex made under `deferring` gets here uncompiled, and those are
                // regexes that compiled when their file was loaded with this build.
                panic!(
                    "the regex `{}` no longer compiles ({e}); delete target/agent-seer/prepared",
                    self.source
                )
            })
        })
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

#[cfg(test)]
mod tests {
    use super::*;

    /// The regexes of the shipped suites and matrices, and patterns that lean on what the
    /// two forms could disagree on.
    fn patterns() -> Vec<String> {
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
        ]
        .map(str::to_owned)
        .to_vec();
        let root = Path::new(env!("CARGO_MANIFEST_DIR"));
        for dir in ["harnesses", "capabilities"] {
            for entry in std::fs::read_dir(root.join(dir)).unwrap() {
                let text = std::fs::read_to_string(entry.unwrap().path()).unwrap_or_default();
                for line in text.lines() {
                    for key in ["regex: ", "pattern: ", "- '"] {
                        if let Some((_, rest)) = line.split_once(key)
                            && let Some(p) = quoted(rest)
                            && Regex::new(&p).is_ok()
                        {
                            out.push(p);
                        }
                    }
                }
            }
        }
        out
    }

    use std::path::Path;

    /// A single-quoted YAML scalar at the start of `s`, unquoted.
    fn quoted(s: &str) -> Option<String> {
        let s = s.trim_start().strip_prefix('\'')?;
        let mut out = String::new();
        let mut chars = s.chars().peekable();
        while let Some(c) = chars.next() {
            if c == '\'' {
                if chars.peek() == Some(&'\'') {
                    chars.next();
                    out.push('\'');
                    continue;
                }
                return Some(out);
            }
            out.push(c);
        }
        None
    }

    /// ASCII haystacks from a small xorshift generator over the characters the patterns
    /// care about, plus the texts a suite's policies see.
    fn haystacks() -> Vec<String> {
        let alphabet: Vec<char> = "aksKS_09 \t\n.-/:'\"(),;=<>*%gfilexmpSELECTFROMselectfrom"
            .chars()
            .collect();
        let mut state = 0x2545_f491_4f6c_dd1du64;
        let mut out = vec![
            String::new(),
            "SELECT title FROM books WHERE author = 'Ursula K. Le Guin' ORDER BY year".into(),
            "see gs://bucket/a.png and out/clip.MP4, then file:///tmp/x.wav".into(),
            "Error: no such table".into(),
        ];
        for _ in 0..3000 {
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
                let want: Vec<&str> = re.find_iter(t).map(|m| m.as_str()).collect();
                assert_eq!(lazy.find_all(t), want, "{p} on {t:?}");
                let want: Vec<&str> = re
                    .captures_iter(t)
                    .filter_map(|c| c.get(1))
                    .map(|m| m.as_str())
                    .collect();
                assert_eq!(lazy.group_all(t, 1), want, "{p} on {t:?}");
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

    #[test]
    fn an_invalid_regex_is_an_error_unless_deferred() {
        assert!(LazyRegex::new("(").is_err());
        let deferred = deferring(|| LazyRegex::new("(")).unwrap();
        assert_eq!(deferred.as_str(), "(");
        // The switch is back off after the load, and was on only in it.
        assert!(LazyRegex::new("(").is_err());
        let ok = deferring(|| LazyRegex::new("a+b")).unwrap();
        assert!(ok.unicode.get().is_none());
        assert!(ok.is_match("xaab"));
    }
}
