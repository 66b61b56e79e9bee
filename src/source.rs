//! User files and places in them.
//!
//! Everything agent-seer reads from a user's repository (tool specs, capability matrices,
//! harnesses, transcripts) goes through here, so that every error about a user's file names
//! the file, the line and the column, and shows the line it is about. The main type is
//! [`SourceError`]; [`Location`] is the place a finding or an error points at.

use std::fmt;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use serde::Serialize;

pub mod json;
mod out;
pub(crate) mod spanned;

pub use out::OutDir;

/// A place in a user's file: 1-based line and column.
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize)]
pub struct Location {
    /// The file, as the path it was read from (serialised as a string).
    #[serde(serialize_with = "serialize_path")]
    pub file: Arc<Path>,
    /// 1-based line.
    pub line: u32,
    /// 1-based column.
    pub column: u32,
}

fn serialize_path<S: serde::Serializer>(p: &Arc<Path>, s: S) -> Result<S::Ok, S::Error> {
    s.serialize_str(&p.to_string_lossy())
}

impl fmt::Display for Location {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}:{}:{}", self.file.display(), self.line, self.column)
    }
}

/// The byte offsets just after each `\n` of `text`.
fn memchr_newlines(text: &str) -> impl Iterator<Item = usize> + '_ {
    text.bytes()
        .enumerate()
        .filter(|(_, b)| *b == b'\n')
        .map(|(i, _)| i + 1)
}

/// A file read into memory, kept so errors and findings can quote it.
#[derive(Clone, Debug)]
pub struct SourceFile {
    /// The path it was read from, or the name [`SourceFile::from_text`] was given; errors and
    /// locations print it as it is.
    pub path: Arc<Path>,
    /// The whole file, valid UTF-8.
    pub text: Arc<str>,
    /// Where each line starts, found once when a line is first asked for ([`SourceFile::line`]):
    /// a file's every argument looks up its key's line, which re-splitting the file each time
    /// made quadratic in the file's length (issue 31).
    lines: Arc<std::sync::OnceLock<Vec<usize>>>,
    /// Whether the file is ASCII (a column is then a byte offset), found once when first asked.
    ascii: Arc<std::sync::OnceLock<bool>>,
}

impl SourceFile {
    /// Reads a file as UTF-8. A directory, a missing file or invalid UTF-8 is a
    /// [`SourceError`] naming the path.
    pub fn read(path: &Path) -> Result<Self, SourceError> {
        let bytes = std::fs::read(path).map_err(|e| SourceError::io(path, e))?;
        let text = String::from_utf8(bytes).map_err(|e| {
            let valid = &e.as_bytes()[..e.utf8_error().valid_up_to()];
            let valid = String::from_utf8_lossy(valid);
            let line = valid.matches('\n').count() + 1;
            let column = valid.rsplit('\n').next().map_or(0, |l| l.chars().count()) + 1;
            SourceError::at_plain(
                path,
                line as u32,
                column as u32,
                "the file is not valid UTF-8",
            )
        })?;
        Ok(Self::new(path.into(), text.into()))
    }

    /// Wraps text that did not come from disk (stdin, tests).
    pub fn from_text(path: impl Into<PathBuf>, text: impl Into<String>) -> Self {
        Self::new(path.into().into(), text.into().into())
    }

    /// A file of this path and text (already shared, as a parsed matrix keeps them).
    pub(crate) fn new(path: Arc<Path>, text: Arc<str>) -> Self {
        Self {
            path,
            text,
            lines: Arc::default(),
            ascii: Arc::default(),
        }
    }

    /// Whether the whole file is ASCII, so that a column (in characters) is the byte offset
    /// in its line. One pass over the file, the first time it is asked: a file's every
    /// argument asks, and asking its line each time made a file of one long line (a run
    /// written as one JSON line) quadratic in its length.
    pub(crate) fn is_ascii(&self) -> bool {
        *self.ascii.get_or_init(|| self.text.is_ascii())
    }

    /// Line `n` (1-based) without its line break, as [`str::lines`] gives it; `None` past the
    /// end. The line index is built on the first call, one pass over the file.
    pub(crate) fn line(&self, n: u32) -> Option<&str> {
        let starts = self.lines.get_or_init(|| {
            std::iter::once(0)
                .chain(memchr_newlines(&self.text))
                .collect()
        });
        let i = (n as usize).checked_sub(1)?;
        let start = *starts.get(i)?;
        let end = starts.get(i + 1).map_or(self.text.len(), |&e| e - 1);
        if start >= self.text.len() {
            // `lines()` has no empty last line after a final line break.
            return None;
        }
        let line = &self.text[start..end];
        Some(line.strip_suffix('\r').unwrap_or(line))
    }

    /// `line:column` (1-based) of this file.
    pub(crate) fn location(&self, line: u32, column: u32) -> Location {
        Location {
            file: self.path.clone(),
            line,
            column,
        }
    }

    /// An error at `line:column` of this file, quoting the line.
    pub fn error_at(&self, line: u32, column: u32, message: impl Into<String>) -> SourceError {
        SourceError {
            path: self.path.to_path_buf(),
            line: Some((line, column)),
            message: message.into(),
            snippet: snippet(&self.text, line, column),
            cause: None,
        }
    }

    /// An error about the whole file (no useful position).
    pub fn error(&self, message: impl Into<String>) -> SourceError {
        SourceError {
            path: self.path.to_path_buf(),
            line: None,
            message: message.into(),
            snippet: None,
            cause: None,
        }
    }

    /// Parses the file as YAML into `T`, strictly where the formats' JSON Schemas are strict: a
    /// text field takes a string, so an unquoted `true`, `yes` or 60-digit number there is an
    /// error asking for quotes (YAML would read it as a boolean or a number; serde-saphyr by
    /// default turns it back into text), only YAML 1.2 booleans are booleans, and a repeated
    /// key is an error.
    pub fn parse_yaml<T: serde::de::DeserializeOwned>(&self) -> Result<T, SourceError> {
        let mut options = serde_saphyr::Options::default();
        options.no_schema = true;
        options.strict_booleans = true;
        options.duplicate_keys = serde_saphyr::DuplicateKeyPolicy::Error;
        serde_saphyr::from_str_with_options(&self.text, options).map_err(|e| self.yaml_error(&e))
    }

    /// Converts a serde-saphyr error into a [`SourceError`] on this file.
    pub fn yaml_error(&self, err: &serde_saphyr::Error) -> SourceError {
        let message = clean_yaml_message(&err.without_snippet().to_string());
        match err.location() {
            Some(loc) if loc.line() > 0 => {
                let (mut line, mut column) = (loc.line() as u32, loc.column().max(1) as u32);
                // The parser notices a missing field at the mapping's end (its last key); the
                // field is missing from the mapping, so point where the mapping starts.
                if message.starts_with("missing field") {
                    (line, column) = mapping_start(&self.text, line, column);
                }
                self.error_at(line, column, message)
            }
            _ => self.error(message),
        }
    }

    /// Converts a serde_json error into a [`SourceError`] on this file.
    pub fn json_error(&self, err: &serde_json::Error) -> SourceError {
        let message = strip_json_position(&err.to_string());
        if err.line() == 0 {
            self.error(message)
        } else {
            self.error_at(err.line() as u32, err.column().max(1) as u32, message)
        }
    }

    /// Parses the file as one JSON document, strictly: a byte-order mark and a key repeated
    /// within an object are errors naming their place (JSON readers disagree on which of two
    /// keys counts; serde_json keeps the last one silently), as is any syntax error.
    pub fn parse_json(&self) -> Result<serde_json::Value, SourceError> {
        if self.text.starts_with('\u{feff}') {
            return Err(self.error_at(
                1,
                1,
                "the file starts with a byte-order mark (U+FEFF), which JSON does not allow; \
                 save it as UTF-8 without one",
            ));
        }
        let value = serde_json::from_str(&self.text).map_err(|e| self.json_error(&e))?;
        self.check_json_keys()?;
        Ok(value)
    }

    /// The first key repeated within one object, as an error at the repeat.
    pub fn check_json_keys(&self) -> Result<(), SourceError> {
        match json::duplicate_keys(&self.text).first() {
            None => Ok(()),
            Some(d) => {
                let (l1, c1) = json::line_column(&self.text, d.first);
                let (l2, c2) = json::line_column(&self.text, d.second);
                let key = d.pointer.rsplit('/').next().unwrap_or_default();
                let key = json::unescape(key);
                Err(self.error_at(
                    l2,
                    c2,
                    format!(
                        "duplicate key `{key}` (first at {l1}:{c1}); JSON readers disagree on \
                         which one counts, so keep one"
                    ),
                ))
            }
        }
    }

    /// An error at the member or element a JSON pointer names (at its key, when it is an
    /// object member), or about the whole file when the text has no such place.
    pub fn error_at_pointer(&self, pointer: &str, message: impl Into<String>) -> SourceError {
        match json::locate(&self.text, pointer) {
            Some(place) => {
                let (line, column) = json::line_column(&self.text, place.start());
                self.error_at(line, column, message)
            }
            None => self.error(message),
        }
    }
}

/// An error about a user's file: what is wrong, and where.
///
/// `Display` gives the one-line form `path:line:column: message`; [`SourceError::render`]
/// adds the quoted line with a caret, the way compilers do.
///
/// The error that caused it (an I/O error, a serialiser's), when there is one, is kept as its
/// [`source`](std::error::Error::source); two errors are equal when they say the same thing
/// at the same place.
#[derive(Clone, Debug)]
pub struct SourceError {
    /// The file the error is about.
    pub path: PathBuf,
    /// `(line, column)`, 1-based; `None` for an error about the whole file (missing,
    /// unreadable, or a problem no one place shows).
    pub line: Option<(u32, u32)>,
    /// What is wrong, without the place (that is [`SourceError::place`]).
    pub message: String,
    snippet: Option<String>,
    cause: Option<Arc<dyn std::error::Error + Send + Sync>>,
}

impl PartialEq for SourceError {
    fn eq(&self, other: &Self) -> bool {
        (&self.path, self.line, &self.message, &self.snippet)
            == (&other.path, other.line, &other.message, &other.snippet)
    }
}

impl Eq for SourceError {}

impl fmt::Display for SourceError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}: {}", self.place(), self.message)
    }
}

impl std::error::Error for SourceError {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        self.cause
            .as_deref()
            .map(|e| e as &(dyn std::error::Error + 'static))
    }
}

impl SourceError {
    /// A file that could not be read: `no such file`, `is a directory, expected a file`, or
    /// the OS's own error. It has no position.
    pub fn io(path: &Path, err: std::io::Error) -> Self {
        let message = match err.kind() {
            std::io::ErrorKind::NotFound => "no such file".to_owned(),
            std::io::ErrorKind::IsADirectory => "is a directory, expected a file".to_owned(),
            std::io::ErrorKind::Other => err.to_string(),
            _ if path.is_dir() => "is a directory, expected a file".to_owned(),
            _ => format!("cannot read: {err}"),
        };
        Self {
            path: path.to_path_buf(),
            line: None,
            message,
            snippet: None,
            cause: Some(Arc::new(err)),
        }
    }

    /// An error about the whole file at `path` that another error caused (a serialiser's, a
    /// writer's): its message is the cause's, and the cause is kept as the source.
    pub fn caused_by(path: &Path, cause: impl std::error::Error + Send + Sync + 'static) -> Self {
        Self {
            path: path.to_path_buf(),
            line: None,
            message: cause.to_string(),
            snippet: None,
            cause: Some(Arc::new(cause)),
        }
    }

    /// The same error, caused by `cause` (kept as its [`source`](std::error::Error::source)).
    pub fn with_cause(mut self, cause: impl std::error::Error + Send + Sync + 'static) -> Self {
        self.cause = Some(Arc::new(cause));
        self
    }

    /// `other`, keeping this error's cause: for an error restated about another place.
    pub(crate) fn restated_as(&self, other: SourceError) -> SourceError {
        SourceError {
            cause: self.cause.clone(),
            ..other
        }
    }

    /// An error about the whole file or directory at `path`, with no cause but its words.
    pub fn about(path: &Path, message: impl Into<String>) -> Self {
        Self {
            path: path.to_path_buf(),
            line: None,
            message: message.into(),
            snippet: None,
            cause: None,
        }
    }

    fn at_plain(path: &Path, line: u32, column: u32, message: &str) -> Self {
        Self {
            path: path.to_path_buf(),
            line: Some((line, column)),
            message: message.to_owned(),
            snippet: None,
            cause: None,
        }
    }

    /// `path:line:column`, or just the path when there is no position.
    pub fn place(&self) -> String {
        match self.line {
            Some((l, c)) => format!("{}:{l}:{c}", self.path.display()),
            None => self.path.display().to_string(),
        }
    }

    /// The error with the quoted line under it.
    pub fn render(&self) -> String {
        match &self.snippet {
            Some(s) => format!("error: {}\n  --> {}\n{s}", self.message, self.place()),
            None => format!("error: {}\n  --> {}", self.message, self.place()),
        }
    }
}

/// Quotes `line` of `text` with a caret under `column`, gutter-aligned.
pub fn snippet(text: &str, line: u32, column: u32) -> Option<String> {
    let src = text.lines().nth(line.checked_sub(1)? as usize)?;
    let width = line.to_string().len();
    let pad = " ".repeat(width);
    // A long line (a minified JSON, a 10,000-deep nesting) is shown as a window around the
    // column, marked with ellipses.
    const WINDOW: usize = 100;
    let chars: Vec<char> = src.chars().collect();
    let col = (column.saturating_sub(1) as usize).min(chars.len());
    let (start, end) = if chars.len() <= WINDOW {
        (0, chars.len())
    } else {
        let start = col.saturating_sub(WINDOW / 2).min(chars.len() - WINDOW);
        (start, start + WINDOW)
    };
    let shown: String = chars[start..end].iter().collect();
    let lead = if start > 0 { "…" } else { "" };
    let tail = if end < chars.len() { "…" } else { "" };
    let caret_pad: String = std::iter::repeat_n(' ', lead.chars().count())
        .chain(
            chars[start..col.max(start)]
                .iter()
                .map(|&c| if c == '\t' { '\t' } else { ' ' }),
        )
        .collect();
    Some(format!(
        "{pad} |\n{line} | {lead}{shown}{tail}\n{pad} | {caret_pad}^"
    ))
}

/// For an optional key whose value may not be `null` (`#[serde(default, deserialize_with =
/// "present")]`): serde reads `minimum: null` as an absent `minimum`, which silently dropped
/// the bound (issue 18, item 14); the formats' JSON Schemas refuse it, and so do the loaders.
pub(crate) fn present<'de, D, T>(d: D) -> Result<Option<T>, D::Error>
where
    D: serde::Deserializer<'de>,
    T: serde::Deserialize<'de>,
{
    T::deserialize(d).map(Some)
}

// serde-saphyr puts "line X column Y: " (or "error: line ...") in front of its messages; the
// location is ours to print, once.
fn clean_yaml_message(msg: &str) -> String {
    if msg.contains("budget breached") {
        let what = msg
            .split("budget breached: ")
            .nth(1)
            .and_then(|r| r.split(" at line").next())
            .unwrap_or("a limit")
            .trim();
        let what = match what.strip_prefix("Nodes { nodes: ") {
            Some(n) => format!("{} nodes", n.trim_end_matches(" }")),
            None => what.to_owned(),
        };
        return format!(
            "the YAML is too large to load safely ({what}): the loader's limits stop alias bombs and runaway files"
        );
    }
    if msg.contains("recursion limit exceeded") {
        return format!(
            "nested too deeply (recursion limit exceeded): deeper than the loader's limit ({MAX_JSON_DEPTH} levels for JSON)"
        );
    }
    let msg = msg.replace(", set DuplicateKeyPolicy in Options if acceptable", "");
    let msg = msg.as_str();
    let first = msg.lines().next().unwrap_or(msg).trim();
    let first = first.strip_prefix("error: ").unwrap_or(first);
    let msg = regex_lite_strip(first);
    // ... and "message at line 2, column 8" behind them.
    let msg = match msg.rfind(" at line ") {
        Some(i) if msg[i..].contains("column") => &msg[..i],
        _ => msg,
    };
    msg.trim().to_owned()
}

fn regex_lite_strip(s: &str) -> &str {
    // "line 3 column 7: message" -> "message"
    if let Some(rest) = s.strip_prefix("line ")
        && let Some(idx) = rest.find(": ")
    {
        let head = &rest[..idx];
        if head.split_whitespace().count() == 3 && head.contains("column") {
            return &rest[idx + 2..];
        }
    }
    s
}

/// The deepest nesting of arrays and objects a JSON document may have: serde_json's recursion
/// limit, which keeps a hostile document from overflowing the stack of every reader after it
/// (the validator, the engines' walks, the drop of the value). A deeper document is refused
/// with this limit named, never as "not JSON" (issue 32, item 14).
pub const MAX_JSON_DEPTH: usize = 128;

/// Whether serde_json refused a document for its depth ([`MAX_JSON_DEPTH`]).
pub fn json_too_deep(err: &serde_json::Error) -> bool {
    err.to_string().starts_with("recursion limit exceeded")
}

/// serde_json's message without its ` at line L column C` tail (the place is given apart); its
/// recursion limit said as the limit it is.
pub fn strip_json_position(msg: &str) -> String {
    let msg = match msg.rfind(" at line ") {
        Some(idx) => &msg[..idx],
        None => msg,
    };
    if msg == "recursion limit exceeded" {
        return format!(
            "nested deeper than {MAX_JSON_DEPTH} levels of arrays and objects, the most agent-seer reads"
        );
    }
    msg.to_owned()
}

/// The longest name [`file_name`] accepts, in bytes: room for an extension and a suffix under
/// the 255 bytes most file systems allow.
pub const MAX_FILE_NAME: usize = 200;

/// Why a name taken from data or a flag cannot be a file name (see [`file_name`]).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct BadName {
    /// The name, as given.
    pub name: String,
    /// What is wrong with it.
    pub why: String,
}

impl fmt::Display for BadName {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        // A hostile name is quoted escaped and cut short, so it cannot garble the terminal.
        let shown: String = self.name.escape_debug().take(80).collect();
        let cut = if self.name.escape_debug().nth(80).is_some() {
            "…"
        } else {
            ""
        };
        write!(f, "`{shown}{cut}` cannot be a file name: {}", self.why)
    }
}

impl std::error::Error for BadName {}

/// `name` when it can become one file name inside an output directory, unchanged: not empty,
/// at most [`MAX_FILE_NAME`] bytes, no path separator (`/`, `\`), not `.` or `..`, not
/// absolute, no NUL or other control character. Every name taken from data (entry and
/// scenario ids) or a flag (`--suite`) goes through here before it is joined to a directory,
/// so none writes outside it (issue 18, item 2).
pub fn file_name(name: &str) -> Result<&str, BadName> {
    let bad = |why: String| {
        Err(BadName {
            name: name.to_owned(),
            why,
        })
    };
    if name.is_empty() {
        return bad("it is empty".into());
    }
    if name.len() > MAX_FILE_NAME {
        return bad(format!(
            "it is {} bytes long, above the limit of {MAX_FILE_NAME}",
            name.len()
        ));
    }
    if let Some(c) = name.chars().find(|c| matches!(c, '/' | '\\')) {
        return bad(format!("it contains a path separator (`{c}`)"));
    }
    if name == "." || name == ".." {
        return bad("`.` and `..` name directories".into());
    }
    if name.chars().any(char::is_control) {
        return bad("it contains a control character".into());
    }
    // What the platform reads as more than one plain component (a Windows drive, `C:x`).
    let mut parts = Path::new(name).components();
    if !matches!(
        (parts.next(), parts.next()),
        (Some(std::path::Component::Normal(n)), None) if n == name
    ) {
        return bad("it is not a plain file name on this platform".into());
    }
    Ok(name)
}

/// Writes `bytes` to `path` through a temporary file in the same directory (named uniquely per
/// process and call, so threads and processes writing at once never share one), synced, then
/// renamed over the target: a reader sees the old file or the new one, never half of one.
/// Creates the directory. A `path` that is a symbolic link stays one: the file it points at is
/// the one replaced.
pub fn write_atomically(path: &Path, bytes: &[u8]) -> std::io::Result<()> {
    write_atomically_with(path, |f| f.write_all(bytes))
}

/// [`write_atomically`] of what `write` writes, as it writes it (through a buffer): for a file
/// too large to make in memory first.
pub fn write_atomically_with(
    path: &Path,
    write: impl FnOnce(&mut dyn std::io::Write) -> std::io::Result<()>,
) -> std::io::Result<()> {
    use std::io::Write;
    use std::sync::atomic::{AtomicU64, Ordering};
    static SEQ: AtomicU64 = AtomicU64::new(0);
    let target = link_target(path)?;
    let path = target.as_deref().unwrap_or(path);
    let dir = match path.parent() {
        Some(d) if !d.as_os_str().is_empty() => d,
        _ => Path::new("."),
    };
    std::fs::create_dir_all(dir)?;
    let tmp = dir.join(format!(
        ".{}.{}.{}.tmp",
        path.file_name().and_then(|n| n.to_str()).unwrap_or("file"),
        std::process::id(),
        SEQ.fetch_add(1, Ordering::Relaxed)
    ));
    let result = (|| {
        let mut f = std::io::BufWriter::new(std::fs::File::create(&tmp)?);
        write(&mut f)?;
        f.flush()?;
        f.get_ref().sync_all()?;
        std::fs::rename(&tmp, path)
    })();
    if result.is_err() {
        let _ = std::fs::remove_file(&tmp);
    }
    result
}

/// The first key of the block mapping whose key at `line:column` (1-based) is given: the lines
/// above with a key at the same column (or deeper, for nested values) belong to it, up to a
/// `- ` item or a line further left. A flow mapping or anything unexpected keeps the place.
fn mapping_start(text: &str, line: u32, column: u32) -> (u32, u32) {
    let lines: Vec<&str> = text.lines().collect();
    let col = column as usize - 1;
    let Some(at) = lines.get(line as usize - 1) else {
        return (line, column);
    };
    if at
        .get(..col)
        .is_none_or(|pad| !pad.trim_start_matches([' ', '-']).is_empty())
    {
        return (line, column);
    }
    let mut start = line;
    for l in (1..line).rev() {
        let text = lines[l as usize - 1];
        let body = text.trim_start();
        if body.is_empty() || body.starts_with('#') {
            continue;
        }
        let indent = text.len() - body.len();
        if indent > col {
            continue; // a nested value of a key of this mapping
        }
        if indent == col {
            if body.starts_with("- ") {
                break; // a sequence at this column: the mapping started below it
            }
            start = l;
            continue;
        }
        // Further left: the mapping's first key shares this line after `- `.
        if text
            .get(indent..col)
            .is_some_and(|dash| dash.trim_end() == "-")
        {
            start = l;
        }
        break;
    }
    (start, column)
}

/// `dir` joined with `rel`, with `.` dropped and each `..` taking away the directory before it
/// when that directory is no symbolic link (so the path names the same file as the plain join
/// does): `harnesses/../capabilities/x.yaml` is `capabilities/x.yaml`, in errors and reports.
pub fn join_tidy(dir: &Path, rel: &Path) -> PathBuf {
    use std::path::Component;
    let mut out = PathBuf::new();
    // How many leading components of `out` may not be popped (`..` kept, a root, a prefix).
    let mut fixed = 0;
    for c in dir.join(rel).components() {
        match c {
            Component::CurDir => {}
            Component::ParentDir => {
                let depth = out.components().count();
                // Only a directory that exists and is no link may be taken away: the plain
                // join then names the same file (`missing/..` does not exist at all).
                let plain_dir =
                    std::fs::symlink_metadata(&out).is_ok_and(|m| m.file_type().is_dir());
                if depth > fixed && plain_dir {
                    out.pop();
                } else if out.has_root() && depth == 1 {
                    // `/..` is `/`.
                } else {
                    out.push("..");
                    fixed = out.components().count();
                }
            }
            Component::RootDir | Component::Prefix(_) => {
                out.push(c.as_os_str());
                fixed = out.components().count();
            }
            Component::Normal(n) => out.push(n),
        }
    }
    out
}

/// Where `path` leads when it is a symbolic link (followed to the end of a chain, the last
/// target possibly not existing yet); `None` when it is no link.
fn link_target(path: &Path) -> std::io::Result<Option<PathBuf>> {
    let mut current = path.to_path_buf();
    // The kernel's own bound on a chain of links (Linux: 40).
    for _ in 0..40 {
        match std::fs::symlink_metadata(&current) {
            Ok(m) if m.file_type().is_symlink() => {
                let to = std::fs::read_link(&current)?;
                current = match current.parent() {
                    Some(dir) if to.is_relative() => dir.join(to),
                    _ => to,
                };
            }
            _ => return Ok((current != path).then_some(current)),
        }
    }
    Err(std::io::Error::other(format!(
        "{}: too many levels of symbolic links",
        path.display()
    )))
}

#[cfg(test)]
mod tests {
    /// The line index answers as `str::lines` does, line breaks of every kind and a last
    /// line with or without one.
    #[test]
    fn line_index_agrees_with_lines() {
        for text in [
            "",
            "\n",
            "a",
            "a\n",
            "a\nb",
            "a\r\nb\r\n",
            "\n\nx\n\n",
            "é\nü",
        ] {
            let file = SourceFile::from_text("t.yaml", text);
            let lines: Vec<&str> = text.lines().collect();
            for n in 0..=lines.len() as u32 + 2 {
                let want = n
                    .checked_sub(1)
                    .and_then(|i| lines.get(i as usize).copied());
                assert_eq!(file.line(n), want, "{text:?} line {n}");
            }
        }
    }

    use super::*;

    #[test]
    fn joined_paths_are_tidied_but_never_through_a_link() {
        let t = |dir: &str, rel: &str| join_tidy(Path::new(dir), Path::new(rel));
        assert_eq!(
            t("harnesses", "../capabilities/x.yaml"),
            Path::new("capabilities/x.yaml")
        );
        // A directory that does not exist is kept as written.
        assert_eq!(
            t("no/such", "./../../../x"),
            Path::new("no/such/../../../x")
        );
        assert_eq!(t("", "../../x"), Path::new("../../x"));
        assert_eq!(t("/usr/lib", "../../../x"), Path::new("/x"));
        assert_eq!(t("/p/h", "/abs/./y"), Path::new("/abs/y"));
        #[cfg(unix)]
        {
            let dir = tempfile::tempdir().unwrap();
            std::fs::create_dir_all(dir.path().join("real/deep")).unwrap();
            std::os::unix::fs::symlink(dir.path().join("real/deep"), dir.path().join("link"))
                .unwrap();
            // `link/..` is `real`, not the temp dir: a link is never popped.
            let p = join_tidy(&dir.path().join("link"), Path::new("../x"));
            assert_eq!(p, dir.path().join("link/../x"));
            // Two levels up from a link: both `..` stay (the plain join's meaning).
            let p = join_tidy(&dir.path().join("link"), Path::new("../../y"));
            assert_eq!(p, dir.path().join("link/../../y"));
        }
    }

    /// The error behind a file error is kept as its source, not only as words.
    #[test]
    fn causes_are_kept() {
        use std::error::Error;
        let missing = std::fs::read("/no/such/agent-seer/file").unwrap_err();
        let e = SourceError::io(Path::new("x.yaml"), missing);
        assert_eq!(e.to_string(), "x.yaml: no such file");
        let io = e.source().and_then(|s| s.downcast_ref::<std::io::Error>());
        assert_eq!(
            io.map(std::io::Error::kind),
            Some(std::io::ErrorKind::NotFound)
        );
        let restated = e.restated_as(SourceError::about(
            Path::new("h.yaml"),
            "x.yaml: no such file",
        ));
        assert!(restated.source().is_some_and(|s| s.is::<std::io::Error>()));
        let parse = serde_json::from_str::<serde_json::Value>("{").unwrap_err();
        let e = SourceError::caused_by(Path::new("y.json"), parse);
        assert!(e.source().is_some_and(|s| s.is::<serde_json::Error>()));
        assert!(e.message.contains("EOF"), "{}", e.message);
    }

    /// Names from data become file names only when they stay one plain name.
    #[test]
    fn file_names_stay_inside_their_directory() {
        for ok in [
            "simple_0",
            "a.b",
            "veo-gen",
            "x..y",
            "ünïcode",
            &"a".repeat(200),
        ] {
            assert_eq!(file_name(ok), Ok(ok));
        }
        let long = "a".repeat(201);
        let cases = [
            ("", "it is empty"),
            ("/abs/path/x", "it contains a path separator (`/`)"),
            ("../../../x", "it contains a path separator (`/`)"),
            ("a\\b", "it contains a path separator (`\\`)"),
            (".", "`.` and `..` name directories"),
            ("..", "`.` and `..` name directories"),
            ("a\0b", "it contains a control character"),
            ("a\nb", "it contains a control character"),
            (
                long.as_str(),
                "it is 201 bytes long, above the limit of 200",
            ),
        ];
        for (name, why) in cases {
            let e = file_name(name).unwrap_err();
            assert_eq!((e.name.as_str(), e.why.as_str()), (name, why));
        }
        insta::assert_snapshot!(
            file_name("../x\0").unwrap_err().to_string(),
            @r#"`../x\0` cannot be a file name: it contains a path separator (`/`)"#
        );
    }

    #[test]
    fn snippet_points_at_column() {
        let s = snippet("a: 1\nbb: oops\n", 2, 5).unwrap();
        assert_eq!(s, "  |\n2 | bb: oops\n  |     ^");
    }

    #[test]
    fn snippet_out_of_range_is_none() {
        assert!(snippet("a\n", 9, 1).is_none());
    }

    #[test]
    fn yaml_message_loses_its_own_position() {
        assert_eq!(
            clean_yaml_message("line 3 column 7: unknown field `x`"),
            "unknown field `x`"
        );
        assert_eq!(clean_yaml_message("plain"), "plain");
        assert_eq!(
            clean_yaml_message("unclosed bracket '[' at line 2, column 8"),
            "unclosed bracket '['"
        );
    }
}
