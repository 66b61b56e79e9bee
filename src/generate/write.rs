//! The output: harness YAML the runner loads unchanged, next to the tools.json it came from;
//! and `--verify`, which keeps a scenario only when its oracle transcript passes and its
//! mutants (wrong tool, missing required, an unknown model, a broken reference) fail.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use serde_json::Value;

use super::expand::Expansion;
use super::mocks::Mocked;
use crate::check::Suite;
use crate::harness::{
    HarnessDoc, PolicyDoc, PolicyName, ScenarioDoc, StepCall, StepDoc, TurnDoc, WriteError,
    object_arguments,
};
use crate::source::SourceError;

/// Slug ids from titles, unique.
fn ids(mocked: &[Mocked]) -> Vec<String> {
    let mut seen = Vec::new();
    for m in mocked {
        let base: String = m
            .scenario
            .title
            .to_lowercase()
            .chars()
            .map(|c| if c.is_ascii_alphanumeric() { c } else { '-' })
            .collect();
        let base = base
            .split('-')
            .filter(|s| !s.is_empty())
            .collect::<Vec<_>>()
            .join("-");
        let base = if base.is_empty() {
            "scenario".to_owned()
        } else {
            base.chars().take(48).collect()
        };
        let mut id = base.clone();
        let mut n = 2;
        while seen.contains(&id) {
            id = format!("{base}-{n}");
            n += 1;
        }
        seen.push(id);
    }
    seen
}

/// The harness document. A generated call whose parameters are no object (stage 2's lint
/// rejects those) cannot be written.
pub fn harness(
    suite: &str,
    tools_file: &str,
    caps: &[String],
    mocked: &[Mocked],
    expansions: &[Option<Expansion>],
) -> Result<HarnessDoc, WriteError> {
    let mut scenarios = Vec::new();
    for ((m, id), e) in mocked
        .iter()
        .zip(ids(mocked))
        .zip(expansions.iter().chain(std::iter::repeat(&None)))
    {
        let step = |i: usize| {
            let c = &m.scenario.agent_workflow[i];
            Ok(StepDoc {
                call: StepCall::AgentSeer {
                    function_name: c.function_name.clone(),
                    parameters: object_arguments(&c.function_name, &c.parameters)?,
                },
                quick_explanation: Some(c.quick_explanation.clone()),
                match_policies: semantic_prompt(&c.parameters),
                mock_output: Some(m.outputs[i].clone()),
                grounding: Some(m.grounding[i]),
            })
        };
        let turns = match e {
            Some(e) => e
                .turns
                .iter()
                .enumerate()
                .map(|(ti, t)| {
                    Ok(TurnDoc {
                        prompt: t.prompt.clone(),
                        workflow: t
                            .calls
                            .iter()
                            .map(|i| step(i - 1))
                            .collect::<Result<_, _>>()?,
                        expected_response: (ti + 1 == e.turns.len())
                            .then(|| m.expected_response.clone())
                            .filter(|r| !r.is_empty()),
                        followup: Some(t.followup.clone()),
                        order: None,
                    })
                })
                .collect::<Result<_, WriteError>>()?,
            None => vec![TurnDoc {
                prompt: m.scenario.prompt.clone(),
                workflow: (0..m.scenario.agent_workflow.len())
                    .map(step)
                    .collect::<Result<_, _>>()?,
                expected_response: Some(m.expected_response.clone()).filter(|r| !r.is_empty()),
                followup: Some(m.scenario.agent_followup.clone()),
                order: None,
            }],
        };
        scenarios.push(ScenarioDoc {
            id,
            tier: Some(m.scenario.tier),
            title: Some(m.scenario.title.clone()),
            category: Some(m.scenario.category.clone()),
            novelty_reason: Some(m.scenario.novelty_reason.clone()),
            artifacts: Vec::new(),
            turns,
        });
    }
    Ok(HarnessDoc {
        suite: Some(suite.to_owned()),
        tools: Some(vec![tools_file.to_owned()]),
        capabilities: caps.to_vec(),
        scenarios,
        ..HarnessDoc::default()
    })
}

/// Free-text `prompt` arguments are compared by the judge, not verbatim.
fn semantic_prompt(params: &Value) -> BTreeMap<String, PolicyDoc> {
    let mut m = BTreeMap::new();
    if params.get("prompt").is_some_and(Value::is_string) {
        m.insert("prompt".into(), PolicyDoc::Named(PolicyName::Semantic));
    }
    m
}

/// Where `generate` writes: `<dir>/<suite>.yaml`, `<dir>/<suite>.tools.json` (the server's JSON)
/// and a copy of each capability matrix, which the harness references by file name.
///
/// Nothing the user wrote is lost (issue 18, item 1): [`Output::new`] refuses, before any
/// model is asked, a suite name that is no plain file name and a target that exists with other
/// contents (unless `force`); the files are staged in a hidden directory inside `dir` and
/// renamed into place by [`Staged::commit`] only when the run keeps a scenario; a file is never
/// copied onto itself (a matrix already in `dir`, or a spec there named `<suite>.tools.json`,
/// stays as it is).
#[derive(Clone, Debug)]
pub struct Output {
    dir: PathBuf,
    suite: String,
    force: bool,
    tools_text: String,
    // Where the tools came from, so a spec inside `dir` is never written over itself.
    tools_source: PathBuf,
    // (file name in `dir`, the matrix it copies).
    caps: Vec<(String, PathBuf)>,
}

/// A refused output: what would be lost or where it would go.
fn refuse(path: &Path, message: String) -> SourceError {
    SourceError::about(path, message)
}

impl Output {
    /// Checks the output before anything is generated: `suite` must be a plain file name, the
    /// matrices' file names distinct, and no target may exist with other contents unless
    /// `force` (a target that is its own source, or already holds the same bytes, is left
    /// alone). `tools` is the spec as read from `tools_source`.
    pub fn new(
        dir: &Path,
        suite: &str,
        tools: &Value,
        tools_source: &Path,
        caps: &[PathBuf],
        force: bool,
    ) -> Result<Self, SourceError> {
        crate::source::file_name(suite).map_err(|e| refuse(dir, format!("--suite {e}")))?;
        let tools_path = dir.join(format!("{suite}.tools.json"));
        let tools_text = serde_json::to_string_pretty(tools)
            .map_err(|e| SourceError::caused_by(&tools_path, e))?
            + "\n";
        let mut names: Vec<(String, PathBuf)> = Vec::new();
        for p in caps {
            let name = p
                .file_name()
                .map(|n| n.to_string_lossy().into_owned())
                .ok_or_else(|| refuse(p, "a capability matrix must be a file".into()))?;
            if [format!("{suite}.yaml"), format!("{suite}.tools.json")].contains(&name) {
                return Err(refuse(
                    p,
                    format!(
                        "has the file name of the suite's own file {}",
                        dir.join(&name).display()
                    ),
                ));
            }
            if let Some((_, other)) = names.iter().find(|(n, _)| *n == name) {
                return Err(refuse(
                    p,
                    format!(
                        "has the file name of {}: both would be copied to {}",
                        other.display(),
                        dir.join(&name).display()
                    ),
                ));
            }
            names.push((name, p.clone()));
        }
        let out = Self {
            dir: dir.to_path_buf(),
            suite: suite.to_owned(),
            force,
            tools_text,
            tools_source: tools_source.to_path_buf(),
            caps: names,
        };
        // Refused now, before a model is paid; checked again when the files are moved.
        out.plan()?;
        Ok(out)
    }

    /// The tools file name the harness references.
    pub fn tools_file(&self) -> String {
        format!("{}.tools.json", self.suite)
    }

    /// The matrices' file names the harness references, in `--caps` order.
    pub fn cap_names(&self) -> Vec<String> {
        self.caps.iter().map(|(n, _)| n.clone()).collect()
    }

    /// The harness file the run writes.
    pub fn harness_path(&self) -> PathBuf {
        self.dir.join(format!("{}.yaml", self.suite))
    }

    /// The names (in `dir`) of the files to move into place; a file already in place (its own
    /// source, or the same bytes) is left out. A target that exists with other contents is
    /// refused unless `force`; `harness` is the harness text (`None` before it is known: then
    /// an existing harness is refused unless `force`).
    fn files(&self, harness: Option<&str>) -> Result<Vec<String>, SourceError> {
        let mut out = Vec::new();
        let mut conflicts = Vec::new();
        let mut want = |name: String,
                        bytes: Option<Vec<u8>>,
                        source: Option<&Path>|
         -> Result<(), SourceError> {
            let target = self.dir.join(&name);
            let Ok(meta) = std::fs::symlink_metadata(&target) else {
                out.push(name);
                return Ok(());
            };
            // Never a file copied onto itself: it would be truncated before it is read.
            if let Some(src) = source
                && same_file(src, &target)
            {
                return Ok(());
            }
            let same = meta.is_file()
                && bytes
                    .as_ref()
                    .is_some_and(|b| std::fs::read(&target).is_ok_and(|t| t == *b));
            if meta.is_dir() {
                return Err(refuse(
                    &target,
                    "is a directory, where the run writes a file".into(),
                ));
            }
            if !same {
                if !self.force {
                    conflicts.push(target.display().to_string());
                }
                out.push(name);
            }
            Ok(())
        };
        want(
            format!("{}.yaml", self.suite),
            harness.map(|h| h.as_bytes().to_vec()),
            None,
        )?;
        want(
            self.tools_file(),
            Some(self.tools_text.clone().into_bytes()),
            Some(&self.tools_source),
        )?;
        for (name, src) in &self.caps {
            let bytes = std::fs::read(src).map_err(|e| SourceError::io(src, e))?;
            want(name.clone(), Some(bytes), Some(src))?;
        }
        if !conflicts.is_empty() {
            return Err(refuse(
                &self.dir,
                format!(
                    "would overwrite {}, which the run did not write; nothing was written (--force overwrites)",
                    conflicts.join(", ")
                ),
            ));
        }
        Ok(out)
    }

    fn plan(&self) -> Result<(), SourceError> {
        self.files(None).map(drop)
    }

    /// Writes every file into a fresh staging directory inside `dir` (so the harness can be
    /// loaded and verified as it will be, and moved by a rename on the same file system).
    pub fn stage(&self, doc: &HarnessDoc) -> Result<Staged<'_>, SourceError> {
        use std::sync::atomic::{AtomicU64, Ordering};
        static SEQ: AtomicU64 = AtomicU64::new(0);
        std::fs::create_dir_all(&self.dir).map_err(|e| SourceError::io(&self.dir, e))?;
        let stage = self.dir.join(format!(
            ".agent-seer-generate.{}.{}",
            std::process::id(),
            SEQ.fetch_add(1, Ordering::Relaxed)
        ));
        std::fs::create_dir(&stage).map_err(|e| SourceError::io(&stage, e))?;
        let staged = Staged {
            output: self,
            stage,
        };
        let put = |name: &str, bytes: &[u8]| {
            let p = staged.stage.join(name);
            std::fs::write(&p, bytes).map_err(|e| SourceError::io(&p, e))
        };
        put(&self.tools_file(), self.tools_text.as_bytes())?;
        for (name, src) in &self.caps {
            let bytes = std::fs::read(src).map_err(|e| SourceError::io(src, e))?;
            put(name, &bytes)?;
        }
        staged.rewrite(doc)?;
        Ok(staged)
    }
}

/// Whether two paths name one file (both exist and canonicalise alike).
fn same_file(a: &Path, b: &Path) -> bool {
    match (std::fs::canonicalize(a), std::fs::canonicalize(b)) {
        (Ok(a), Ok(b)) => a == b,
        _ => false,
    }
}

/// A generated harness and its files, staged; removed unless [`Staged::commit`] moves them.
#[derive(Debug)]
pub struct Staged<'a> {
    output: &'a Output,
    stage: PathBuf,
}

impl Staged<'_> {
    /// The staged harness, loadable as it will be once moved (its references are beside it).
    pub fn harness(&self) -> PathBuf {
        self.stage.join(format!("{}.yaml", self.output.suite))
    }

    fn harness_text(&self, doc: &HarnessDoc) -> Result<String, SourceError> {
        let path = self.output.harness_path();
        Ok(format!(
            "# Generated by `agent-seer generate`.\n{}",
            doc.to_yaml()
                .map_err(|e| SourceError::caused_by(&path, e))?
        ))
    }

    /// Replaces the staged harness (after `--verify` dropped scenarios).
    pub fn rewrite(&self, doc: &HarnessDoc) -> Result<(), SourceError> {
        let text = self.harness_text(doc)?;
        let p = self.harness();
        std::fs::write(&p, text).map_err(|e| SourceError::io(&p, e))
    }

    /// Moves the staged files into the output directory, each by a rename (a reader sees the
    /// old file or the new one), after checking again that none overwrites a file the user
    /// wrote; returns the harness path.
    pub fn commit(self) -> Result<PathBuf, SourceError> {
        let p = self.harness();
        let text = std::fs::read_to_string(&p).map_err(|e| SourceError::io(&p, e))?;
        let files = self.output.files(Some(&text))?;
        for name in files {
            let (from, to) = (self.stage.join(&name), self.output.dir.join(&name));
            std::fs::rename(&from, &to).map_err(|e| SourceError::io(&to, e))?;
        }
        Ok(self.output.harness_path())
    }
}

impl Drop for Staged<'_> {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.stage);
    }
}

/// `generate --verify`: the scenarios worth keeping, and why each other one was dropped. A
/// scenario is kept when its oracle, played as a run, passes and every mutant `agent-seer
/// mutate` makes of it (the same operators: a wrong tool, a misspelt or missing parameter, a
/// wrong type, a pinned value changed, a near-miss or made-up reference, a consumer before its
/// producer, a step dropped, a repeat, an unrequested effect, an unknown model…) fails: a
/// scenario that lets one of them pass grades nothing it could be trusted on. A dropped
/// scenario's reason names its survivors and why each survived.
pub fn verify(suite: &Suite) -> (Vec<String>, Vec<String>) {
    let mutation = crate::check::mutate_suite(suite, &[]);
    let (mut keep, mut drop) = (Vec::new(), Vec::new());
    for sc in &suite.harness.scenarios {
        let source = format!("oracle:{}", sc.id);
        if let Some(skip) = mutation.skipped.iter().find(|s| s.source == source) {
            drop.push(format!("{}: {}", sc.id, skip.why));
            continue;
        }
        let mine: Vec<&crate::check::MutantOutcome> = mutation
            .outcomes
            .iter()
            .filter(|o| o.mutant.scenario == sc.id)
            .collect();
        let survivors: Vec<String> = mine
            .iter()
            .filter(|o| !o.killed)
            .map(|o| {
                format!(
                    "{} ({}) survived: {}",
                    o.mutant.operator.as_str(),
                    o.mutant.what,
                    o.why.as_deref().unwrap_or("it passes")
                )
            })
            .collect();
        if survivors.is_empty() {
            keep.push(sc.id.clone());
        } else {
            drop.push(format!(
                "{}: {} of {} mutants survived: {}",
                sc.id,
                survivors.len(),
                mine.len(),
                survivors.join("; ")
            ));
        }
    }
    (keep, drop)
}
