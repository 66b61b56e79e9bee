//! Finding harnesses and transcripts on disk: a pure function of the directory tree, sorted,
//! identical on every machine.
//!
//! `harnesses/<suite>.yaml` defines a suite; `transcripts/<suite>/**/<id>.yaml` are its
//! transcripts, with ids made of the path below the suite directory (`sub/x.yaml` → `sub::x`),
//! so every trial name maps back to exactly one file.

use std::path::{Path, PathBuf};

use crate::source::SourceError;

/// Where a project keeps its files.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Layout {
    /// The project root (for `target/`).
    pub root: PathBuf,
    pub harnesses: PathBuf,
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

    /// The harness file of `suite`, if there is one (`.yaml` preferred over `.yml`).
    pub fn harness_file(&self, suite: &str) -> Option<PathBuf> {
        ["yaml", "yml"]
            .iter()
            .map(|ext| self.harnesses.join(format!("{suite}.{ext}")))
            .find(|p| p.is_file())
    }

    /// The transcript file a trial id names, if it exists.
    pub fn transcript_file(&self, suite: &str, id: &str) -> Option<PathBuf> {
        let rel: PathBuf = id.split("::").collect();
        ["yaml", "yml"]
            .iter()
            .map(|ext| self.transcripts.join(suite).join(&rel).with_extension(ext))
            .find(|p| p.is_file())
    }
}

/// One suite's files.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SuiteFiles {
    pub suite: String,
    pub harness: Option<PathBuf>,
    /// `(id, path)`, sorted by id.
    pub transcripts: Vec<(String, PathBuf)>,
}

/// Every suite under `layout`, sorted by name. A suite exists when it has a harness file or a
/// transcript directory (a directory without a harness still yields trials, which then fail
/// saying so, rather than being skipped unseen).
pub fn discover(layout: &Layout) -> Result<Vec<SuiteFiles>, SourceError> {
    let mut suites: Vec<SuiteFiles> = Vec::new();
    for path in read_dir_sorted(&layout.harnesses)? {
        if !path.is_file() || !is_yaml(&path) {
            continue;
        }
        let suite = stem(&path);
        if suites.last().is_some_and(|s| s.suite == suite) {
            continue; // both veo.yaml and veo.yml: harness_file() picks .yaml
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
        let mut transcripts = Vec::new();
        walk(&dir, &mut Vec::new(), &mut transcripts)?;
        transcripts.sort();
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
    Ok(suites)
}

/// The transcripts of one suite (as [`discover`] lists them), reading only its directory.
pub fn suite_transcripts(
    layout: &Layout,
    suite: &str,
) -> Result<Vec<(String, PathBuf)>, SourceError> {
    let dir = layout.transcripts.join(suite);
    let mut out = Vec::new();
    if dir.is_dir() {
        walk(&dir, &mut Vec::new(), &mut out)?;
        out.sort();
    }
    Ok(out)
}

fn walk(
    dir: &Path,
    prefix: &mut Vec<String>,
    out: &mut Vec<(String, PathBuf)>,
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
                return Err(SourceError::io(
                    &path,
                    &std::io::Error::other(format!(
                        "a symlink loop: it leads back to {}",
                        real.display()
                    )),
                ));
            }
            // Any other runaway nesting ends here: a directory is entered at most 32 deep.
            if prefix.len() >= 32 {
                return Err(SourceError::io(
                    &path,
                    &std::io::Error::other(
                        "directory nesting deeper than 32 levels (a symlink loop?)",
                    ),
                ));
            }
            prefix.push(name);
            walk(&path, prefix, out)?;
            prefix.pop();
        } else if is_yaml(&path) {
            let mut parts = prefix.clone();
            parts.push(stem(&path));
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
                .map_err(|e| SourceError::io(dir, &e))?;
            paths.sort();
            Ok(paths)
        }
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(Vec::new()),
        Err(e) => Err(SourceError::io(dir, &e)),
    }
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

    #[test]
    fn missing_directories_are_empty() {
        let dir = tempfile::tempdir().unwrap();
        assert!(discover(&Layout::under(dir.path())).unwrap().is_empty());
    }
}
