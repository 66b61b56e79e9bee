//! URIs and media file paths in free text, found by hand: [`uris`] and [`media_paths`] find
//! exactly what these two regexes find (leftmost first, Unicode `\w`, `\s`, `\b` and case
//! folding), which the tests below hold them to on every shipped transcript and on generated
//! text:
//!
//! ```text
//! URI        (?i)\b(?:gs|s3|https?|file)://[^\s"'<>()\[\]{},]+
//! MEDIA_PATH (?i)(?:^|[\s"'(])((?:[\w.-]+/)*[\w.-]+\.(?:png|jpe?g|…|pdf))\b   (group 1)
//! ```
//!
//! Compiling the two regexes was a quarter of a one-trial process (0.8–2.5 ms: the media path
//! regex alone took 4 million instructions in its ASCII form, 10 million in its Unicode form);
//! scanning by hand costs nothing to set up.

use crate::pattern::{is_space, is_word, literal_ignore_case, word_boundary};

/// The schemes of [`uris`], in the regex's order (`https?` tries `https` first).
const SCHEMES: [&str; 5] = ["gs", "s3", "https", "http", "file"];

/// The extensions of [`media_paths`], in the regex's order (`jpe?g` tries `jpeg` first).
const EXTENSIONS: [&str; 16] = [
    "png", "jpeg", "jpg", "gif", "webp", "mp4", "mov", "webm", "mkv", "avi", "wav", "mp3", "ogg",
    "m4a", "flac", "pdf",
];

/// Every URI in `text`, leftmost first: a scheme (`gs`, `s3`, `http`, `https`, `file`, in any
/// case) at a word boundary, `://`, and all that follows up to a space, a quote, a bracket or
/// a comma.
pub(super) fn uris(text: &str) -> Vec<&str> {
    let mut out = Vec::new();
    let mut at = 0;
    while let Some(c) = text[at..].chars().next() {
        if is_word(c)
            && word_boundary(text, at)
            && let Some(end) = uri_at(text, at)
        {
            out.push(&text[at..end]);
            at = end;
        } else {
            at += c.len_utf8();
        }
    }
    out
}

/// The end of the URI that starts at `at`, if one does: the first scheme that is followed by
/// `://` and at least one character of the rest.
fn uri_at(text: &str, at: usize) -> Option<usize> {
    SCHEMES.iter().find_map(|scheme| {
        let end = literal_ignore_case(text, at, scheme)?;
        let rest = text[end..].strip_prefix("://")?;
        let len = rest
            .find(|c: char| is_space(c) || "\"'<>()[]{},".contains(c))
            .unwrap_or(rest.len());
        (len > 0).then_some(end + 3 + len)
    })
}

/// Every media file path in `text`, leftmost first: at the start or after a space, a quote or
/// `(`, folders of `[\w.-]` each ending in `/`, then a name of `[\w.-]` ending in a media
/// extension (in any case) at a word boundary — the regex's preferences: as many folders as
/// give a match, and in the name the last extension that does.
pub(super) fn media_paths(text: &str) -> Vec<&str> {
    let mut out = Vec::new();
    // `^` first, at the very start; then a delimiter at each place, from the last match on.
    let mut at = 0;
    if let Some(end) = path_at(text, 0) {
        out.push(&text[..end]);
        at = end;
    }
    while let Some(c) = text[at..].chars().next() {
        let start = at + c.len_utf8();
        if (is_space(c) || matches!(c, '"' | '\'' | '('))
            && let Some(end) = path_at(text, start)
        {
            out.push(&text[start..end]);
            at = end;
        } else {
            at = start;
        }
    }
    out
}

/// Whether `c` is in `[\w.-]`.
fn path_char(c: char) -> bool {
    is_word(c) || c == '.' || c == '-'
}

/// The end of the media path that starts at `start`, if one does.
fn path_at(text: &str, start: usize) -> Option<usize> {
    // The runs of `[\w.-]` from `start`, each but the last non-empty and followed by `/`: the
    // folders `(?:[\w.-]+/)*` can take, greedily; the name is in the last run that has one.
    let mut runs = Vec::new();
    let mut from = start;
    loop {
        let rest = &text[from..];
        let end = from + rest.find(|c| !path_char(c)).unwrap_or(rest.len());
        runs.push((from, end));
        if end > from && text[end..].starts_with('/') {
            from = end + 1;
        } else {
            break;
        }
    }
    runs.iter()
        .rev()
        .find_map(|&(from, end)| name_end(text, from, end))
}

/// In the run `text[from..end]` of `[\w.-]`, the end of `[\w.-]+\.(?:ext)\b` with its
/// greedy `[\w.-]+`: the last dot (not the first character) that a media extension follows
/// at a word boundary.
fn name_end(text: &str, from: usize, end: usize) -> Option<usize> {
    let run = &text[from..end];
    run.match_indices('.')
        .rev()
        .filter(|&(i, _)| i > 0)
        .find_map(|(i, _)| {
            let dot = from + i;
            EXTENSIONS.iter().find_map(|ext| {
                let after = literal_ignore_case(text, dot + 1, ext)?;
                word_boundary(text, after).then_some(after)
            })
        })
}

#[cfg(test)]
mod tests {
    use super::*;
    use regex::Regex;

    const URI: &str = r#"(?i)\b(?:gs|s3|https?|file)://[^\s"'<>()\[\]{},]+"#;
    const MEDIA_PATH: &str = r#"(?i)(?:^|[\s"'(])((?:[\w.-]+/)*[\w.-]+\.(?:png|jpe?g|gif|webp|mp4|mov|webm|mkv|avi|wav|mp3|ogg|m4a|flac|pdf))\b"#;

    /// Both scanners against their regexes on one text.
    fn same(text: &str, uri: &Regex, media: &Regex) {
        let want: Vec<&str> = uri.find_iter(text).map(|m| m.as_str()).collect();
        assert_eq!(uris(text), want, "URIs in {text:?}");
        let want: Vec<&str> = media
            .captures_iter(text)
            .filter_map(|c| c.get(1))
            .map(|m| m.as_str())
            .collect();
        assert_eq!(media_paths(text), want, "media paths in {text:?}");
    }

    /// Every string of every shipped transcript, harness and recorded run.
    fn shipped_strings() -> Vec<String> {
        fn walk(v: &serde_json::Value, out: &mut Vec<String>) {
            match v {
                serde_json::Value::String(s) => out.push(s.clone()),
                serde_json::Value::Array(items) => items.iter().for_each(|i| walk(i, out)),
                serde_json::Value::Object(m) => m.values().for_each(|i| walk(i, out)),
                _ => {}
            }
        }
        fn files(dir: &std::path::Path, out: &mut Vec<std::path::PathBuf>) {
            for entry in std::fs::read_dir(dir).unwrap() {
                let p = entry.unwrap().path();
                if p.is_dir() {
                    files(&p, out);
                } else {
                    out.push(p);
                }
            }
        }
        let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR"));
        let mut paths = Vec::new();
        files(&root.join("transcripts"), &mut paths);
        files(&root.join("harnesses"), &mut paths);
        let mut out = Vec::new();
        for p in paths {
            let Ok(text) = std::fs::read_to_string(&p) else {
                continue;
            };
            let ext = p.extension().and_then(|e| e.to_str()).unwrap_or("");
            let values: Vec<serde_json::Value> = match ext {
                "yaml" | "yml" => serde_saphyr::from_str(&text).into_iter().collect(),
                "json" => serde_json::from_str(&text).into_iter().collect(),
                "jsonl" => text
                    .lines()
                    .filter_map(|l| serde_json::from_str(l).ok())
                    .collect(),
                _ => Vec::new(),
            };
            values.iter().for_each(|v| walk(v, &mut out));
            out.push(text);
        }
        out
    }

    #[test]
    fn the_scanners_find_what_the_regexes_find_in_the_shipped_files() {
        let (uri, media) = (Regex::new(URI).unwrap(), Regex::new(MEDIA_PATH).unwrap());
        let strings = shipped_strings();
        assert!(strings.len() > 5000, "{} strings", strings.len());
        let mut found = 0;
        for s in &strings {
            same(s, &uri, &media);
            found += uris(s).len() + media_paths(s).len();
        }
        assert!(found > 500, "only {found} artifacts found");
    }

    /// Texts made of the pieces the regexes turn on — schemes, `://`, extensions, dots,
    /// slashes, delimiters, word and non-word characters, the Kelvin sign and the long s that
    /// fold onto `k` and `s`, non-ASCII letters, marks and spaces — by a small xorshift
    /// generator.
    #[test]
    fn the_scanners_find_what_the_regexes_find_in_generated_text() {
        let (uri, media) = (Regex::new(URI).unwrap(), Regex::new(MEDIA_PATH).unwrap());
        let pieces = [
            "gs",
            "GS",
            "\u{17F}3",
            "s3",
            "https",
            "HTTP",
            "http",
            "file",
            "Fi",
            "://",
            ":/",
            "/",
            ".",
            "..",
            "-",
            "_",
            "a",
            "x9",
            "png",
            "PNG",
            "jpeg",
            "jpg",
            "JPe",
            "g",
            "mp4",
            "mp",
            "4a",
            "m4a",
            "m\u{212A}v",
            "mkv",
            "flac",
            "pdf",
            "webm",
            "webp",
            " ",
            "\t",
            "\n",
            "\u{a0}",
            "\u{2003}",
            "\"",
            "'",
            "(",
            ")",
            "<",
            "[",
            "{",
            ",",
            "é",
            "e\u{301}",
            "ü",
            "—",
            "ı",
            "İ",
            "日本",
            "?",
            "#",
            "=",
            "%",
            "bucket",
            "clip",
        ];
        for text in crate::pattern::random_texts(&pieces, 0x9e37_79b9_7f4a_7c15, 14, 60_000) {
            same(&text, &uri, &media);
        }
    }

    #[test]
    fn the_regexes_preferences() {
        let (uri, media) = (Regex::new(URI).unwrap(), Regex::new(MEDIA_PATH).unwrap());
        for text in [
            "a.png/b",
            "a.png.txt x.JPG",
            "(out/clip.mp4) 'b.wav'",
            "dir/a.png/ and z/",
            "x.pngx y.png-z",
            "see gs://b/a.png, then https://h/x?y=1",
            "agſ://x s\u{17F}3://y",
            "ab.m\u{212A}v é.png",
            "a//b.png .png",
        ] {
            same(text, &uri, &media);
        }
        assert_eq!(media_paths("a.png/b"), ["a.png"]);
        assert_eq!(media_paths("dir/a.b.png.txt"), ["dir/a.b.png"]);
        assert_eq!(uris("xgs://a gs://b"), ["gs://b"]);
    }
}
