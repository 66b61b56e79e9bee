//! The harness's configuration, resolved once: [`HarnessConfig::from_env`] reads every variable
//! the harness honours, in `main`; after that the trial plan reads no environment.

use std::path::{Path, PathBuf};
use std::sync::Arc;

use super::plan::Judge;
use crate::harness::Layout;
use crate::source::{SourceError, SourceFile};

/// What the harness needs to know besides the files.
#[derive(Clone, Debug)]
pub struct HarnessConfig {
    /// The project root: `AGENT_SEER_ROOT`, else `CARGO_MANIFEST_DIR` (set by cargo and
    /// nextest), else the working directory.
    pub root: PathBuf,
    /// `AGENT_SEER_HARNESSES`: the harness directory, over `Cargo.toml`'s metadata.
    pub harnesses: Option<PathBuf>,
    /// `AGENT_SEER_TRANSCRIPTS`: the transcript directory, over `Cargo.toml`'s metadata.
    pub transcripts: Option<PathBuf>,
    /// The LLM judge for `judge::` trials.
    pub judge: JudgeSetup,
    /// `AGENT_SEER_BLESS`: failing transcript trials bless themselves.
    pub bless: bool,
    /// `AGENT_SEER_FULL_SCAN_FORBIDDEN` (tests of the `--exact` path): a run that needs a full
    /// directory scan fails instead.
    pub full_scan_forbidden: bool,
    /// Where suites' stamps are kept (`<target>/agent-seer/prepared`, [`super::Suite`]'s
    /// prepared load), for a process that runs one trial ([`super::plan_exact`], as nextest
    /// runs each): it then compiles only what it grades. A whole plan loads each suite once,
    /// in full, without them. `None`: every suite loads in full.
    pub prepared: Option<PathBuf>,
}

/// `AGENT_SEER_JUDGE=provider:model`, and `AGENT_SEER_JUDGE_MODE=raw-spec` for the seeds'
/// baseline prompt.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct JudgeRequest {
    /// `provider:model`.
    pub spec: String,
    /// The judge sees the raw tool specs only (no capability rows, no findings).
    pub raw_spec: bool,
}

/// Whether judge trials can run.
#[derive(Clone, Default)]
pub enum JudgeSetup {
    /// No judge asked for: judge trials are ignored, saying so.
    #[default]
    Unset,
    /// A judge is asked for; the caller has not attached one (a build without the `judge`
    /// feature cannot).
    Requested(JudgeRequest),
    /// A judge to run.
    Ready(Arc<dyn Judge>),
}

impl std::fmt::Debug for JudgeSetup {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            JudgeSetup::Unset => f.write_str("Unset"),
            JudgeSetup::Requested(r) => f.debug_tuple("Requested").field(r).finish(),
            JudgeSetup::Ready(_) => f.write_str("Ready(..)"),
        }
    }
}

impl JudgeSetup {
    /// Why judge trials are not run, or `None` when they are.
    pub fn unavailable(&self) -> Option<&'static str> {
        match self {
            JudgeSetup::Ready(_) => None,
            _ if !cfg!(feature = "judge") => Some("built without the `judge` feature"),
            JudgeSetup::Unset => Some("AGENT_SEER_JUDGE is not set"),
            JudgeSetup::Requested(_) => Some("no judge was attached to the harness"),
        }
    }
}

fn var(name: &str) -> Option<std::ffi::OsString> {
    std::env::var_os(name).filter(|v| !v.is_empty())
}

impl HarnessConfig {
    /// Every variable the harness honours, read once.
    pub fn from_env() -> Self {
        let root = var("AGENT_SEER_ROOT")
            .or_else(|| var("CARGO_MANIFEST_DIR"))
            .map(PathBuf::from)
            .unwrap_or_else(|| PathBuf::from("."));
        let judge = match std::env::var("AGENT_SEER_JUDGE") {
            Ok(spec) if !spec.is_empty() => JudgeSetup::Requested(JudgeRequest {
                spec,
                raw_spec: std::env::var("AGENT_SEER_JUDGE_MODE").as_deref() == Ok("raw-spec"),
            }),
            _ => JudgeSetup::Unset,
        };
        let prepared = Some(target_dir(&root).join("agent-seer").join("prepared"));
        Self {
            root,
            prepared,
            harnesses: var("AGENT_SEER_HARNESSES").map(PathBuf::from),
            transcripts: var("AGENT_SEER_TRANSCRIPTS").map(PathBuf::from),
            judge,
            bless: std::env::var("AGENT_SEER_BLESS").is_ok_and(|v| !v.is_empty() && v != "0"),
            full_scan_forbidden: var("AGENT_SEER_FULL_SCAN_FORBIDDEN").is_some(),
        }
    }

    /// The project's layout: `harnesses/` and `transcripts/` under the root, moved by
    /// `[package.metadata.agent-seer]` in its `Cargo.toml`, then by this configuration.
    pub fn layout(&self) -> Result<Layout, SourceError> {
        let mut layout = layout_at(&self.root)?;
        if let Some(p) = &self.harnesses {
            layout.harnesses = p.clone();
        }
        if let Some(p) = &self.transcripts {
            layout.transcripts = p.clone();
        }
        Ok(layout)
    }
}

/// The cargo target directory a test binary runs from: `CARGO_TARGET_DIR`, else the
/// binary's own `target/<profile>/deps/…` ancestry, else `<root>/target`.
pub(crate) fn target_dir(root: &Path) -> PathBuf {
    if let Some(p) = std::env::var_os("CARGO_TARGET_DIR") {
        return PathBuf::from(p);
    }
    std::env::current_exe()
        .ok()
        .and_then(|exe| {
            let deps = exe.parent()?;
            (deps.file_name()? == "deps").then(|| deps.parent()?.parent().map(Path::to_path_buf))?
        })
        .unwrap_or_else(|| root.join("target"))
}

/// The layout of the project at `root`: `harnesses/` and `transcripts/`, moved by
/// `[package.metadata.agent-seer]` (`harnesses = "…"`, `transcripts = "…"`) in its
/// `Cargo.toml`. Reads no environment.
pub(crate) fn layout_at(root: &Path) -> Result<Layout, SourceError> {
    // Relative paths read better in messages and keep snapshots machine-independent.
    let root = match std::env::current_dir() {
        Ok(cwd) if root.is_absolute() => root
            .strip_prefix(&cwd)
            .map(Path::to_path_buf)
            .unwrap_or(root.to_path_buf()),
        _ => root.to_path_buf(),
    };
    let mut layout = Layout::under(&root);
    let manifest = root.join("Cargo.toml");
    if manifest.is_file() {
        let file = SourceFile::read(&manifest)?;
        let meta =
            super::manifest::strings_under(&file.text, &["package", "metadata", "agent-seer"])
                .map_err(|e| {
                    file.error_at(e.line, e.column, format!("invalid TOML: {}", e.message))
                })?;
        for (key, slot) in [
            ("harnesses", &mut layout.harnesses),
            ("transcripts", &mut layout.transcripts),
        ] {
            match meta.get(key) {
                Some(Ok(p)) => *slot = root.join(p),
                Some(Err(())) => {
                    return Err(file.error(format!(
                        "[package.metadata.agent-seer] `{key}` must be a string path"
                    )));
                }
                None => {}
            }
        }
    }
    Ok(layout)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// `harnesses` must be the path itself: a table under the key (`harnesses.path = "…"`)
    /// is an error, not a setting silently ignored.
    #[test]
    fn a_table_where_a_path_belongs_is_an_error() {
        let dir = tempfile::tempdir().unwrap();
        for text in [
            "[package.metadata.agent-seer]\nharnesses.path = \"x\"\n",
            "[package.metadata.agent-seer]\ntranscripts = { path = \"x\" }\n",
            "[package.metadata.agent-seer]\nharnesses = 3\n",
        ] {
            std::fs::write(dir.path().join("Cargo.toml"), text).unwrap();
            let e = layout_at(dir.path()).unwrap_err();
            assert!(e.message.contains("must be a string path"), "{text}: {e}");
        }
        std::fs::write(
            dir.path().join("Cargo.toml"),
            "[package.metadata.agent-seer]\nharnesses = \"h\"\n",
        )
        .unwrap();
        assert_eq!(
            layout_at(dir.path()).unwrap().harnesses,
            dir.path().join("h")
        );
    }

    /// Judge trials say why they are not run: a lean build cannot judge at all.
    #[test]
    fn judge_trials_say_why_they_do_not_run() {
        let request = JudgeSetup::Requested(JudgeRequest {
            spec: "openai:m".into(),
            raw_spec: false,
        });
        if cfg!(feature = "judge") {
            assert_eq!(
                JudgeSetup::Unset.unavailable(),
                Some("AGENT_SEER_JUDGE is not set")
            );
            assert_eq!(
                request.unavailable(),
                Some("no judge was attached to the harness")
            );
        } else {
            for setup in [JudgeSetup::Unset, request] {
                assert_eq!(
                    setup.unavailable(),
                    Some("built without the `judge` feature")
                );
            }
        }
    }
}
