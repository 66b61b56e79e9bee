//! Bless: accept what the agent does now as what the suite expects — the insta workflow for
//! agent suites.
//!
//! For a transcript labelled correct (or unlabelled) whose trial fails, the scenario's oracle
//! workflow in the harness becomes the transcript's calls: each call keeps the explanation,
//! match policies, mock output and grounding of the oracle step it replaces (same tool, in
//! order), or takes the transcript's recorded output as its mock. Calls the server would
//! reject (lint, capability or flow errors) are never blessed: an oracle must lint clean, and
//! such a transcript is a broken one to label `expect: fail`.
//!
//! For a transcript labelled broken whose named faults no longer match, its `faults:` become
//! the codes of the error findings the engines report now.
//!
//! Edits are textual: only the workflow block (or the `faults:` entry) is rewritten, the rest
//! of the file — comments included — is kept byte for byte. The edited harness is loaded and
//! the transcript re-checked before anything is written; the write is atomic.

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

use crate::check::{Suite, Verdict, evaluate};
use crate::finding::Severity;
use crate::harness::{
    Call, Expect, LabelDoc, OracleCall, PolicyDoc, StepCall, StepDoc, Transcript, WriteError,
};
use crate::source::SourceError;

/// One file rewritten.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Edit {
    /// The file the edit rewrites.
    pub file: PathBuf,
    /// Its text before the edit.
    pub before: String,
    /// Its text after the edit.
    pub after: String,
    /// What changed, in words.
    pub what: String,
}

impl Edit {
    /// A unified diff of the edit, with the file's name.
    pub fn diff(&self) -> String {
        let name = self.file.display().to_string();
        crate::diff::unified(&self.before, &self.after, 2, &name, &name)
    }

    /// Writes the edit (temp file and rename).
    pub fn apply(&self) -> Result<(), SourceError> {
        crate::source::write_atomically(&self.file, self.after.as_bytes())
            .map_err(|e| SourceError::io(&self.file, e))
    }
}

/// What blessing a transcript comes to.
#[derive(Debug)]
pub enum Blessing {
    /// The trial already passes.
    Unchanged,
    /// An edit that makes the trial pass, checked by reloading and evaluating it.
    Edit(Edit),
    /// Not blessable, and why.
    Refused(String),
}

/// Blesses under a lock held across threads and processes (nextest runs trials in parallel
/// processes, and several may edit one harness), then applies the edit. Returns the edit made
/// or why none was.
pub fn bless_and_apply(harness: &Path, transcript: &Path) -> Result<Blessing, SourceError> {
    static LOCK: std::sync::Mutex<()> = std::sync::Mutex::new(());
    let _guard = LOCK.lock().unwrap_or_else(|p| p.into_inner());
    let lock_path = std::env::temp_dir().join("agent-seer-bless.lock");
    let file = std::fs::OpenOptions::new()
        .create(true)
        .truncate(false)
        .write(true)
        .open(&lock_path)
        .map_err(|e| SourceError::io(&lock_path, e))?;
    file.lock().map_err(|e| SourceError::io(&lock_path, e))?;
    let result = bless(harness, transcript);
    if let Ok(Blessing::Edit(edit)) = &result {
        edit.apply()?;
    }
    let _ = file.unlock();
    result
}

/// Works out the edit that makes `transcript`'s trial pass, without writing it. The harness
/// is read from disk afresh (an earlier blessing may have changed it).
pub fn bless(harness: &Path, transcript: &Path) -> Result<Blessing, SourceError> {
    let suite = Suite::load(harness)?;
    let t = crate::check::load_transcript(&suite, transcript)?;
    let ev = evaluate(&suite, &t)?;
    if ev.agrees_with_label().is_ok() {
        return Ok(Blessing::Unchanged);
    }
    if t.label.xfail.is_some() {
        return Ok(Blessing::Refused(
            "the transcript is marked `xfail`; remove the mark (or fix what it names) before blessing".into(),
        ));
    }
    match t.label.expect.unwrap_or(Expect::Pass) {
        Expect::Fail => bless_faults(&t, &ev),
        Expect::Pass => bless_oracle(&suite, &t, &ev, harness),
    }
}

/// A broken transcript: its faults become what the engines find now.
fn bless_faults(t: &Transcript, ev: &crate::check::Evaluation) -> Result<Blessing, SourceError> {
    if ev.verdict == Verdict::Pass {
        return Ok(Blessing::Refused(
            "labelled broken, but no engine finds an error and TC is above the threshold: there is no fault to record (fix the label or the checks)".into(),
        ));
    }
    let codes: BTreeSet<&str> = ev
        .findings
        .iter()
        .filter(|f| f.severity == Severity::Error)
        .map(|f| f.code.as_str())
        .collect();
    let codes: Vec<&str> = if codes.is_empty() {
        // Failed on score alone: name the weakest dimension.
        vec!["oracle"]
    } else {
        codes.into_iter().collect()
    };
    let before = t.source.text.to_string();
    let label = LabelDoc {
        faults: codes.iter().map(|c| (*c).to_owned()).collect(),
        ..LabelDoc::default()
    };
    let line = label
        .to_yaml()
        .map_err(|e| SourceError::caused_by(&t.path, e))?;
    let line = line.trim_end();
    let after = replace_top_level_key(&before, "faults", line)
        .unwrap_or_else(|| insert_after_key(&before, "expect", line));
    Ok(Blessing::Edit(Edit {
        file: t.path.clone(),
        what: format!("faults of {} set to {}", t.id, codes.join(", ")),
        before,
        after,
    }))
}

/// A correct transcript: the scenario's oracle becomes its calls.
fn bless_oracle(
    suite: &Suite,
    t: &Transcript,
    ev: &crate::check::Evaluation,
    harness: &Path,
) -> Result<Blessing, SourceError> {
    let rejected: Vec<String> = ev
        .findings
        .iter()
        .filter(|f| f.severity == Severity::Error && !f.code.as_str().starts_with("oracle."))
        .map(|f| {
            format!(
                "{}{}: {}",
                f.call
                    .map_or(String::new(), |i| format!("call {}: ", i + 1)),
                f.code,
                f.message
            )
        })
        .collect();
    if !rejected.is_empty() {
        return Ok(Blessing::Refused(format!(
            "the agent's calls are rejected, and an oracle must lint clean — fix the agent, or label the transcript `expect: fail`:\n  {}",
            rejected.join("\n  ")
        )));
    }
    let Some(scenario) = suite.scenario_of(t) else {
        return Ok(Blessing::Refused(
            "the transcript names no scenario, so there is no oracle to bless".into(),
        ));
    };
    if t.turns.len() != scenario.turns.len() {
        return Ok(Blessing::Refused(format!(
            "the transcript has {} turn(s) and scenario `{}` has {}; bless rewrites workflows, not turns",
            t.turns.len(),
            scenario.id,
            scenario.turns.len()
        )));
    }
    let before = suite.harness.source.text.to_string();
    let mut after = before.clone();
    // Bottom-up, so earlier byte offsets stay valid.
    for (turn, oracle) in t.turns.iter().zip(&scenario.turns).rev() {
        if oracle.workflow.is_empty() {
            return Ok(Blessing::Refused(format!(
                "scenario `{}` has a turn with an empty workflow; write its first step by hand",
                scenario.id
            )));
        }
        let Some((start, end, indent)) = block_of(&after, &oracle.workflow) else {
            return Ok(Blessing::Refused(format!(
                "scenario `{}`'s workflow is not a block sequence (`- ` items); bless edits block YAML only",
                scenario.id
            )));
        };
        let shape = CallShape::of(&after[start..end]);
        let items = items_of(&after[start..end], indent);
        // An item's own text, when the workflow is plain steps, one item each.
        let verbatim = |i: usize| {
            (items.len() == oracle.workflow.len()
                && oracle.workflow.iter().all(|o| o.branch.is_none()))
            .then(|| items[i])
        };
        let mut used = vec![false; oracle.workflow.len()];
        let mut text = String::new();
        for call in &turn.calls {
            let old = oracle
                .workflow
                .iter()
                .enumerate()
                .find(|(i, o)| !used[*i] && o.call.tool == call.tool)
                .map(|(i, o)| {
                    used[i] = true;
                    (i, o)
                });
            // A step the call leaves as it is keeps its text: flow style, key order, comments.
            if let Some((i, o)) = old
                && unchanged_by(o, call)
                && let Some(item) = verbatim(i)
            {
                text.push_str(item);
                continue;
            }
            let step = render_step(call, old.map(|(_, o)| o), shape, indent)
                .map_err(|e| SourceError::caused_by(harness, e))?;
            text.push_str(&step);
        }
        after.replace_range(start..end, &text);
    }
    if after == before {
        return Ok(Blessing::Refused(
            "the oracle already holds these calls; the trial fails for another reason (see its message)".into(),
        ));
    }
    let edit = Edit {
        file: harness.to_path_buf(),
        what: format!(
            "oracle of scenario `{}` set to {}'s calls",
            scenario.id, t.id
        ),
        before,
        after,
    };
    // Prove it before writing: the edited harness loads, and the transcript now passes.
    let checked = crate::harness::Harness::from_source(crate::source::SourceFile::from_text(
        harness,
        edit.after.clone(),
    ))
    .and_then(Suite::from_harness)
    .and_then(|s| Ok(evaluate(&s, t)?.agrees_with_label()));
    match checked {
        Ok(Ok(())) => Ok(Blessing::Edit(edit)),
        Ok(Err(why)) => Ok(Blessing::Refused(format!(
            "even with the oracle rewritten the trial would fail: {why}"
        ))),
        Err(e) => Ok(Blessing::Refused(format!(
            "the rewritten harness would not load: {}",
            e.render()
        ))),
    }
}

/// Which key names the harness uses for a call.
#[derive(Clone, Copy)]
enum CallShape {
    Tool,
    FunctionName,
}

impl CallShape {
    fn of(block: &str) -> Self {
        let first = block.trim_start().trim_start_matches('-').trim_start();
        if first.starts_with("function_name") || block.contains("\n  function_name:") {
            CallShape::FunctionName
        } else {
            CallShape::Tool
        }
    }

    fn call(self, call: &Call) -> StepCall {
        let (tool, arguments) = (call.tool.clone(), call.args().clone());
        match self {
            CallShape::Tool => StepCall::Mcp { tool, arguments },
            CallShape::FunctionName => StepCall::AgentSeer {
                function_name: tool,
                parameters: arguments,
            },
        }
    }
}

/// The byte range of a workflow's items (from the first item's line to the end of the last
/// item) and the column of their dashes.
fn block_of(text: &str, workflow: &[OracleCall]) -> Option<(usize, usize, usize)> {
    let line_start = |line: u32| -> Option<usize> {
        let mut off = 0;
        for (i, l) in text.split_inclusive('\n').enumerate() {
            if i + 1 == line as usize {
                return Some(off);
            }
            off += l.len();
        }
        None
    };
    let first = &workflow.first()?.call.location;
    let last = &workflow.last()?.call.location;
    let start = line_start(first.line)?;
    let dash = (first.column as usize).checked_sub(3)?;
    let first_line = text[start..].lines().next()?;
    if first_line.get(dash..dash + 2)? != "- " {
        return None;
    }
    // The last item runs until a line indented at or left of the dashes.
    let mut end = line_start(last.line)?
        + text[line_start(last.line)?..]
            .find('\n')
            .map_or(text.len() - line_start(last.line)?, |n| n + 1);
    let mut content_end = end;
    for l in text[end..].split_inclusive('\n') {
        let body = l.trim_end_matches(['\n', '\r']);
        let indent = body.len() - body.trim_start().len();
        if !body.trim().is_empty() && indent <= dash {
            break;
        }
        end += l.len();
        if !body.trim().is_empty() {
            content_end = end;
        }
    }
    Some((start, content_end, dash))
}

/// Whether blessing `call` in `old`'s place would render the same step: the same tool and
/// arguments, and no recorded output to become a mock where the step has none.
fn unchanged_by(old: &OracleCall, call: &Call) -> bool {
    old.call.tool == call.tool
        && old.call.args() == call.args()
        && (old.mock_output.is_some() || call.output.is_none())
}

/// The text of each item of a block sequence whose dashes are at column `dash` (0-based): from
/// its dash line to the next item's, the last one to the end of `block`.
fn items_of(block: &str, dash: usize) -> Vec<&str> {
    let mut starts = Vec::new();
    let mut off = 0;
    for l in block.split_inclusive('\n') {
        if l.get(dash..dash + 2) == Some("- ") && l[..dash].trim().is_empty() {
            starts.push(off);
        }
        off += l.len();
    }
    let ends = starts.iter().skip(1).copied().chain([block.len()]);
    starts
        .iter()
        .zip(ends)
        .map(|(&a, b)| &block[a..b])
        .collect()
}

/// One workflow item as block YAML at `indent`: the old step's explanation, policies (of the
/// arguments still passed), mock output (else the recorded output) and grounding kept.
fn render_step(
    call: &Call,
    old: Option<&OracleCall>,
    shape: CallShape,
    indent: usize,
) -> Result<String, WriteError> {
    let step = StepDoc {
        call: shape.call(call),
        quick_explanation: old.and_then(|o| o.quick_explanation.clone()),
        match_policies: old
            .into_iter()
            .flat_map(|o| &o.match_policies)
            .filter(|(param, _)| call.args().contains_key(*param))
            .map(|(param, p)| (param.clone(), PolicyDoc::from(p)))
            .collect(),
        mock_output: old
            .and_then(|o| o.mock_output.clone())
            .or_else(|| call.output.clone()),
        grounding: old.and_then(|o| o.grounding),
    };
    let body = step.to_yaml()?;
    let pad = " ".repeat(indent);
    let mut out = String::new();
    for (i, line) in body.lines().enumerate() {
        if i == 0 {
            out.push_str(&format!("{pad}- {line}\n"));
        } else if line.is_empty() {
            out.push('\n');
        } else {
            out.push_str(&format!("{pad}  {line}\n"));
        }
    }
    Ok(out)
}

/// Replaces a top-level `key:` entry (its line and any indented lines under it) with `line`.
fn replace_top_level_key(text: &str, key: &str, line: &str) -> Option<String> {
    let mut out = String::new();
    let mut lines = text.split_inclusive('\n').peekable();
    let mut found = false;
    while let Some(l) = lines.next() {
        if !found && (l.starts_with(&format!("{key}:"))) {
            found = true;
            out.push_str(line);
            out.push('\n');
            while let Some(next) = lines.peek() {
                let continues = next.starts_with(' ') || next.starts_with("- ");
                if continues {
                    lines.next();
                } else {
                    break;
                }
            }
            continue;
        }
        out.push_str(l);
    }
    found.then_some(out)
}

/// Inserts `line` after the top-level `key:` line (or at the top when there is none).
fn insert_after_key(text: &str, key: &str, line: &str) -> String {
    let mut out = String::new();
    let mut done = false;
    for l in text.split_inclusive('\n') {
        out.push_str(l);
        if !done && l.starts_with(&format!("{key}:")) {
            if !l.ends_with('\n') {
                out.push('\n');
            }
            out.push_str(line);
            out.push('\n');
            done = true;
        }
    }
    if done { out } else { format!("{line}\n{text}") }
}
