//! Finding harnesses and transcripts on disk: a pure function of the directory tree, sorted,
//! identical on every machine.
//!
//! `harnesses/<suite>.yaml` defines a suite; `transcripts/<suite>/**/<id>.yaml` are its
//! transcripts, with ids made of the path below the suite directory (`sub/x.yaml` → `sub::x`),
//! so every trial name maps back to exactly one file. Names that would give two files one
//! trial name, or a name two readings ([`super::trial`]), are refused here with every
//! offending path listed, rather than left for a runner to silently pick one.

use std::path::{Path, PathBuf};

use super::trial::{RESERVED_SUITES, RESERVED_TRANSCRIPTS, name_problem};
use crate::source::SourceError;

/// Where a project keeps its files.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Layout {
    /// The project root (for `target/`).
    pub root: PathBuf,
    /// The harness files, one `<suite>.yaml` (or `.yml`) per suite (`<root>/harnesses`).
    pub harnesses: PathBuf,
    /// The transcripts, one directory per suite, `<suite>/**/<id>.yaml`
    /// (`<root>/transcripts`).
    pub transcripts: PathBuf,
    /// The LLM answer cache (judge recordings are committed here).
    pub llm_cache: PathBuf,
}

impl Layout {
    /// The conventional layout under a project root.
    pub fn under(root: &Path) -> Self {
        Self {
            root: root.to_path_buf(),
            harnesses: root.join("harnesses"),
            transcripts: root.join("transcripts"),
            llm_cache: root.join(".agent-seer").join("llm-cache"),
        }
    }

    /// The harness file of `suite`, if exactly one exists (`veo.yaml` or `veo.yml`; both is
    /// an error [`discover`] reports).
    pub fn harness_file(&self, suite: &str) -> Option<PathBuf> {
        only_one(self.harness_files(suite))
    }

    /// Every harness file of `suite` that exists: none, one, or (an error) both spellings.
    pub fn harness_files(&self, suite: &str) -> Vec<PathBuf> {
        existing(self.harnesses.join(suite))
    }

    /// The transcript file a trial id names, if exactly one exists.
    pub fn transcript_file(&self, suite: &str, id: &str) -> Option<PathBuf> {
        only_one(self.transcript_files(suite, id))
    }

    /// Every transcript file a trial id names that exists: none, one, or (an error) several
    /// (`x.yaml` beside `x.yml`, or beside a recorded run `x.json` / `x.jsonl`).
    pub fn transcript_files(&self, suite: &str, id: &str) -> Vec<PathBuf> {
        let rel: PathBuf = id.split("::").collect();
        existing_as(
            self.transcripts.join(suite).join(rel),
            &["yaml", "yml", "json", "jsonl"],
        )
    }
}

/// `<base>.yaml` and `<base>.yml`, those that are files.
fn existing(base: PathBuf) -> Vec<PathBuf> {
    existing_as(base, &["yaml", "yml"])
}

/// `<base>.<ext>` for each of `exts`, those that are files.
fn existing_as(base: PathBuf, exts: &[&str]) -> Vec<PathBuf> {
    let Some(name) = base.file_name().map(|n| n.to_string_lossy().into_owned()) else {
        return Vec::new();
    };
    exts.iter()
        .map(|ext| base.with_file_name(format!("{name}.{ext}")))
        .filter(|p| p.is_file())
        .collect()
}

fn only_one(mut found: Vec<PathBuf>) -> Option<PathBuf> {
    (found.len() == 1).then(|| found.remove(0))
}

/// One suite's files.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SuiteFiles {
    /// The suite's name: its harness file's stem, or its transcript directory's name.
    pub suite: String,
    /// The harness file; `None` when the suite has only a transcript directory (its trials
    /// then fail saying so).
    pub harness: Option<PathBuf>,
    /// `(id, path)`, sorted by id.
    pub transcripts: Vec<(String, PathBuf)>,
}

/// Every suite under `layout`, sorted by name. A suite exists when it has a harness file or a
/// transcript directory (a directory without a harness still yields trials, which then fail
/// saying so, rather than being skipped unseen).
///
/// Refused, all at once in one error: a suite named like a trial prefix (`judge`, `run`,
/// `agent-seer`), a transcript named like a suite trial (`harness`, `discrimination`), a `:`
/// in a file or directory name, and two files for one name (`a0.yaml` beside `a0.yml`).
pub fn discover(layout: &Layout) -> Result<Vec<SuiteFiles>, SourceError> {
    let mut suites: Vec<SuiteFiles> = Vec::new();
    let mut problems = Vec::new();
    for path in read_dir_sorted(&layout.harnesses)? {
        if !path.is_file() || !is_yaml(&path) {
            continue;
        }
        let suite = stem(&path);
        if let Some(why) = name_problem(&suite, RESERVED_SUITES) {
            problems.push(format!("{}: suite name: {why}", path.display()));
        }
        // `veo.yaml` and `veo.yml` need not sort next to each other (`veo.x.yaml` between).
        if suites.iter().any(|s| s.suite == suite) {
            let files = layout.harness_files(&suite);
            let files: Vec<String> = files.iter().map(|p| p.display().to_string()).collect();
            problems.push(format!(
                "{}: two harness files for suite `{suite}`",
                files.join(" and ")
            ));
            continue;
        }
        suites.push(SuiteFiles {
            harness: layout.harness_file(&suite),
            suite,
            transcripts: Vec::new(),
        });
    }
    for dir in read_dir_sorted(&layout.transcripts)? {
        if !dir.is_dir() {
            continue;
        }
        let suite = dir
            .file_name()
            .map(|s| s.to_string_lossy().into_owned())
            .unwrap_or_default();
        if suite.starts_with('.') {
            continue;
        }
        if let Some(why) = name_problem(&suite, RESERVED_SUITES) {
            problems.push(format!("{}: suite name: {why}", dir.display()));
        }
        let transcripts = suite_dir(&dir, &mut problems)?;
        match suites.iter_mut().find(|s| s.suite == suite) {
            Some(s) => s.transcripts = transcripts,
            None => suites.push(SuiteFiles {
                suite,
                harness: None,
                transcripts,
            }),
        }
    }
    suites.sort_by(|a, b| a.suite.cmp(&b.suite));
    if !problems.is_empty() {
        problems.sort();
        problems.dedup();
        return Err(SourceError::about(
            &layout.transcripts,
            format!(
                "names that cannot be trial names:\n  {}",
                problems.join("\n  ")
            ),
        ));
    }
    Ok(suites)
}

/// A suite directory's transcripts, sorted by id, with the problems of their names.
fn suite_dir(
    dir: &Path,
    problems: &mut Vec<String>,
) -> Result<Vec<(String, PathBuf)>, SourceError> {
    let mut out = Vec::new();
    walk(dir, &mut Vec::new(), &mut out, problems)?;
    out.sort();
    for pair in out.windows(2) {
        if pair[0].0 == pair[1].0 {
            problems.push(format!(
                "{} and {}: two transcript files for `{}`",
                pair[0].1.display(),
                pair[1].1.display(),
                pair[0].0
            ));
        }
    }
    for (id, path) in &out {
        if RESERVED_TRANSCRIPTS.contains(&id.as_str()) {
            problems.push(format!(
                "{}: transcript name: `{id}` is reserved for the suite's own trial; rename the file",
                path.display()
            ));
        }
    }
    Ok(out)
}

/// The transcripts of one suite (as [`discover`] lists them), reading only its directory.
pub fn suite_transcripts(
    layout: &Layout,
    suite: &str,
) -> Result<Vec<(String, PathBuf)>, SourceError> {
    let dir = layout.transcripts.join(suite);
    if !dir.is_dir() {
        return Ok(Vec::new());
    }
    let mut problems = Vec::new();
    let out = suite_dir(&dir, &mut problems)?;
    match problems.first() {
        None => Ok(out),
        Some(p) => Err(SourceError::about(&dir, p.clone())),
    }
}

fn walk(
    dir: &Path,
    prefix: &mut Vec<String>,
    out: &mut Vec<(String, PathBuf)>,
    problems: &mut Vec<String>,
) -> Result<(), SourceError> {
    for path in read_dir_sorted(dir)? {
        let name = path
            .file_name()
            .map(|s| s.to_string_lossy().into_owned())
            .unwrap_or_default();
        if name.starts_with('.') {
            continue;
        }
        if path.is_dir() {
            // A symlink back to a directory being walked is a loop.
            if let (Ok(real), Ok(here)) = (std::fs::canonicalize(&path), std::fs::canonicalize(dir))
                && here.starts_with(&real)
            {
                return Err(SourceError::about(
                    &path,
                    format!("a symlink loop: it leads back to {}", real.display()),
                ));
            }
            // Any other runaway nesting ends here: a directory is entered at most 32 deep.
            if prefix.len() >= 32 {
                return Err(SourceError::about(
                    &path,
                    "directory nesting deeper than 32 levels (a symlink loop?)",
                ));
            }
            if let Some(why) = name_problem(&name, &[]) {
                problems.push(format!("{}: directory name: {why}", path.display()));
            }
            prefix.push(name);
            walk(&path, prefix, out, problems)?;
            prefix.pop();
        } else if is_transcript(&path) && path.is_file() {
            // Only regular files (or symlinks to them): a FIFO named `x.yaml` would block
            // whoever reads it.
            let mut parts = prefix.clone();
            let stem = stem(&path);
            if let Some(why) = name_problem(&stem, &[]) {
                problems.push(format!("{}: transcript name: {why}", path.display()));
            }
            parts.push(stem);
            out.push((parts.join("::"), path));
        }
    }
    Ok(())
}

fn read_dir_sorted(dir: &Path) -> Result<Vec<PathBuf>, SourceError> {
    match std::fs::read_dir(dir) {
        Ok(entries) => {
            let mut paths = entries
                .map(|e| e.map(|e| e.path()))
                .collect::<Result<Vec<_>, _>>()
                .map_err(|e| SourceError::io(dir, e))?;
            paths.sort();
            Ok(paths)
        }
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(Vec::new()),
        Err(e) => Err(SourceError::io(dir, e)),
    }
}

/// A transcript file: YAML, or a recorded run (`*.json`, `*.jsonl`, read by `ingest`) — but
/// not a recorded run's label sidecar (`<id>.label.yaml`).
fn is_transcript(p: &Path) -> bool {
    let name = p.file_name().and_then(|n| n.to_str()).unwrap_or("");
    if name.ends_with(".label.yaml") {
        return false;
    }
    is_yaml(p)
        || matches!(
            p.extension().and_then(|e| e.to_str()),
            Some("json" | "jsonl")
        )
}

fn is_yaml(p: &Path) -> bool {
    matches!(p.extension().and_then(|e| e.to_str()), Some("yaml" | "yml"))
}

fn stem(p: &Path) -> String {
    p.file_stem()
        .map(|s| s.to_string_lossy().into_owned())
        .unwrap_or_default()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn discovers_sorted_nested_and_orphans() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path();
        std::fs::create_dir_all(root.join("harnesses")).unwrap();
        std::fs::create_dir_all(root.join("transcripts/b/sub")).unwrap();
        std::fs::create_dir_all(root.join("transcripts/orphan")).unwrap();
        for f in [
            "harnesses/b.yaml",
            "harnesses/a.yaml",
            "harnesses/b.tools.json",
            "transcripts/b/z.yaml",
            "transcripts/b/a.yml",
            "transcripts/b/sub/x.yaml",
            "transcripts/b/notes.txt",
            "transcripts/orphan/o.yaml",
        ] {
            std::fs::write(root.join(f), "").unwrap();
        }
        let layout = Layout::under(root);
        let suites = discover(&layout).unwrap();
        let names: Vec<_> = suites.iter().map(|s| s.suite.as_str()).collect();
        assert_eq!(names, ["a", "b", "orphan"]);
        let ids: Vec<_> = suites[1]
            .transcripts
            .iter()
            .map(|(id, _)| id.as_str())
            .collect();
        assert_eq!(ids, ["a", "sub::x", "z"]);
        assert!(suites[2].harness.is_none());
        assert_eq!(
            layout.transcript_file("b", "sub::x"),
            Some(root.join("transcripts/b/sub/x.yaml"))
        );
        assert_eq!(
            layout.transcript_file("b", "a"),
            Some(root.join("transcripts/b/a.yml"))
        );
        assert_eq!(layout.transcript_file("b", "nope"), None);
    }

    /// A FIFO (or socket, or device) named `*.yaml` is not a transcript: reading it would
    /// block `check` forever. A symlink to a regular file is one.
    #[cfg(unix)]
    #[test]
    fn only_regular_files_are_transcripts() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path();
        let suite = root.join("transcripts/s");
        std::fs::create_dir_all(&suite).unwrap();
        std::fs::write(suite.join("real.yaml"), "").unwrap();
        std::os::unix::fs::symlink(suite.join("real.yaml"), suite.join("link.yaml")).unwrap();
        let made = std::process::Command::new("mkfifo")
            .arg(suite.join("pipe.yaml"))
            .status()
            .unwrap();
        assert!(made.success());
        let layout = Layout::under(root);
        let ids = |found: &[(String, PathBuf)]| -> Vec<String> {
            found.iter().map(|(id, _)| id.clone()).collect()
        };
        let suites = discover(&layout).unwrap();
        assert_eq!(ids(&suites[0].transcripts), ["link", "real"]);
        assert_eq!(
            ids(&suite_transcripts(&layout, "s").unwrap()),
            ["link", "real"]
        );
        assert_eq!(layout.transcript_file("s", "pipe"), None);
    }

    #[test]
    fn missing_directories_are_empty() {
        let dir = tempfile::tempdir().unwrap();
        assert!(discover(&Layout::under(dir.path())).unwrap().is_empty());
    }
}
