//! A suite loaded for evaluation: its harness, its tools and matrices compiled into a linter.
//! The main type is [`Suite`], made by [`Suite::load`].

use std::collections::HashMap;
use std::path::Path;
use std::sync::OnceLock;

use super::evaluate::Reference;
use super::fast::FastPath;
use crate::harness::{Harness, Scenario, Transcript};
use crate::lint::Linter;
use crate::source::SourceError;
use crate::spec::{Capabilities, ToolSet};

/// Everything needed to evaluate the transcripts of one suite. Loaded once per process.
pub struct Suite {
    /// The harness file, parsed.
    pub harness: Harness,
    /// The tools its specs declare.
    pub tools: ToolSet,
    /// The linter over those tools and the suite's capability matrices.
    pub linter: Linter,
    /// Scenario id → index in the harness (the first, should an id repeat).
    index: HashMap<String, usize>,
    pub(crate) fast: FastPath,
    /// Per scenario, the engines' evaluation of its reference run, made at its first use
    /// ([`Reference`]).
    pub(crate) references: Vec<OnceLock<Option<Reference>>>,
}

impl Suite {
    /// Loads the harness, its tool specs and capability matrices. Errors about a referenced
    /// file point at the reference in the harness (a missing file) or into the file itself (a
    /// malformed one).
    pub fn load(path: &Path) -> Result<Self, SourceError> {
        Self::from_harness(Harness::load(path)?)
    }

    /// A suite from an already parsed harness (its references resolved against its path).
    pub fn from_harness(harness: Harness) -> Result<Self, SourceError> {
        let root = ProjectRoot::of(&harness);
        let mut tools = ToolSet::default();
        for p in &harness.tools {
            root.check(&harness, p)?;
            let set = ToolSet::load(p).map_err(|e| reference(&harness, p, e))?;
            tools.extend(set).map_err(|e| {
                let message = format!("{}: {e}", p.display());
                harness.source.error(message).with_cause(e)
            })?;
        }
        let mut caps = Vec::new();
        for p in &harness.capabilities {
            root.check(&harness, p)?;
            let matrix = Capabilities::load(p).map_err(|e| reference(&harness, p, e))?;
            matrix.check_against(&tools)?;
            caps.push(matrix);
        }
        let linter = Linter::new(&tools, caps).map_err(|e| {
            e.in_file(&tools)
                .unwrap_or_else(|| harness.source.error(e.to_string()).with_cause(e))
        })?;
        Ok(Self::with_linter(harness, tools, linter))
    }

    /// A suite from its parts: the scenario index and the fast path's matchers built here (the
    /// scenarios' reference runs at their first use).
    pub(crate) fn with_linter(harness: Harness, tools: ToolSet, linter: Linter) -> Self {
        let fast = FastPath::new(&harness, &linter);
        let n = harness.scenarios.len();
        let mut index = HashMap::with_capacity(harness.scenarios.len());
        for (i, sc) in harness.scenarios.iter().enumerate() {
            index.entry(sc.id.clone()).or_insert(i);
        }
        Self {
            harness,
            tools,
            linter,
            index,
            fast,
            references: (0..n).map(|_| OnceLock::new()).collect(),
        }
    }

    /// The scenario a transcript names, if the harness has it (a transcript with an inline
    /// prompt, or an unknown id, has none; [`crate::evaluate`] says which).
    pub fn scenario_of(&self, t: &Transcript) -> Option<&Scenario> {
        let id = t.scenario.as_deref()?;
        self.scenario(id).map(|(_, sc)| sc)
    }

    /// The scenario with this id, and its index in the harness.
    pub fn scenario(&self, id: &str) -> Option<(usize, &Scenario)> {
        let i = *self.index.get(id)?;
        Some((i, &self.harness.scenarios[i]))
    }
}

// A file that cannot be read is reported at the harness line naming it; a file that can be
// read but is malformed is reported inside that file.
fn reference(harness: &Harness, path: &Path, err: SourceError) -> SourceError {
    if err.line.is_none() && err.path == path {
        harness.reference_error(path, &err)
    } else {
        err
    }
}

/// The directory a harness's file references (`tools:`, `capabilities:`) must stay inside, so
/// that `tools: [/etc/passwd]` is never read, let alone quoted into a report (issue 18,
/// item 5): the project holding the harness — the nearest directory at or above the one that
/// holds the harness's directory (`<root>/harnesses/x.yaml` → `<root>`) with a `Cargo.toml`
/// (which may move the harnesses deeper, `[package.metadata.agent-seer]`), else that
/// directory itself. Both sides are canonicalised, so neither `..` nor a symlink leads out.
struct ProjectRoot(Result<std::path::PathBuf, std::io::Error>);

impl ProjectRoot {
    fn of(harness: &Harness) -> Self {
        let dir = match harness.path.parent() {
            Some(d) if !d.as_os_str().is_empty() => d,
            _ => Path::new("."),
        };
        Self(std::fs::canonicalize(dir).map(|dir| {
            let base = dir.parent().unwrap_or(&dir);
            base.ancestors()
                .find(|a| a.join("Cargo.toml").is_file())
                .unwrap_or(base)
                .to_path_buf()
        }))
    }

    /// `Ok` when `referenced` lies inside the project (or does not exist: loading it then
    /// says so at the reference); otherwise an error at the reference naming the file.
    fn check(&self, harness: &Harness, referenced: &Path) -> Result<(), SourceError> {
        let Ok(real) = std::fs::canonicalize(referenced) else {
            return Ok(());
        };
        let why = match &self.0 {
            Ok(root) if real.starts_with(root) => return Ok(()),
            Ok(root) => format!(
                "is outside the project ({}), and a harness reads only files inside its project",
                root.display()
            ),
            Err(e) => format!(
                "is not read: the harness's own directory cannot be resolved ({e}), so where its \
                 project lies is unknown"
            ),
        };
        Err(harness.reference_error(referenced, &SourceError::about(referenced, why)))
    }
}
