//! The `cargo test` harness: one libtest-mimic trial per transcript.
//!
//! Discovery is a pure function of the files ([`crate::harness::discover`]): sorted, identical
//! on every machine, and it reads no file (names come from paths), so `--list` is fast and
//! nextest's `--partition slice:m/n` shards the same list everywhere. Each trial then loads what
//! it needs: its suite once per process, and its own transcript. Under nextest every trial is
//! its own process, so `--exact NAME` takes a fast path that maps the name back to one file and
//! builds one trial.
//!
//! Trials:
//! - `<suite>::<transcript>`: the engines over one transcript, judged against its label;
//! - `<suite>::harness`: the harness itself loads, and every oracle workflow lints clean;
//! - `<suite>::discrimination`: the merge gate over the suite's labelled transcripts;
//! - `judge::<suite>::<transcript>`: the LLM judge (ignored at discovery when
//!   `AGENT_SEER_JUDGE` is not set, so both runners report a skip).
//!
//! The entry point is [`main`] (re-exported as `agent_seer::harness::main`); [`run_checks`]
//! gives the same verdicts to the CLI's `check`.

mod discrimination;
mod evaluate;
mod fast;
mod judge;
mod render;
mod suite;

use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::sync::{Arc, OnceLock};

use libtest_mimic::{Arguments, Completion, Failed, Trial};

pub use discrimination::{Discrimination, Row};
pub use evaluate::{Evaluation, Verdict, evaluate, evaluate_with_engines, quick_verdict, verdict};
pub use render::{call_diff, dimensions, render_call};
pub use suite::Suite;

use crate::finding::Severity;
use crate::harness::{Layout, SuiteFiles, Transcript, discover};
use crate::report::{HarnessRecord, RunDir, TranscriptRecord, TrialRecord};
use crate::source::SourceError;

/// Trial names a transcript may not take.
pub const RESERVED: &[&str] = &["harness", "discrimination"];

/// Runs the project's agent suites as `cargo test` trials. Call it from a `harness = false`
/// test target:
///
/// ```no_run
/// fn main() -> std::process::ExitCode {
///     agent_seer::harness::main()
/// }
/// ```
///
/// The project root is `AGENT_SEER_ROOT`, else `CARGO_MANIFEST_DIR` (set by cargo and nextest),
/// else the working directory. `harnesses/` and `transcripts/` under it can be moved with
/// `[package.metadata.agent-seer]` (`harnesses = "…"`, `transcripts = "…"`) or the
/// `AGENT_SEER_HARNESSES` / `AGENT_SEER_TRANSCRIPTS` variables.
pub fn main() -> ExitCode {
    let args = Arguments::from_args();
    let trials = match layout_from_env() {
        Ok(layout) => trials(&args, &layout),
        Err(e) => vec![Trial::test("agent-seer::configuration", move || {
            Err(e.render().into())
        })],
    };
    // Return the code instead of calling `Conclusion::exit` (datatest-stable#20: exit() breaks
    // coverage tools).
    libtest_mimic::run(&args, trials).exit_code()
}

/// The harness's layout: the root is `AGENT_SEER_ROOT`, else `CARGO_MANIFEST_DIR`, else the
/// working directory; see [`layout_at`].
pub fn layout_from_env() -> Result<Layout, SourceError> {
    let root = std::env::var_os("AGENT_SEER_ROOT")
        .or_else(|| std::env::var_os("CARGO_MANIFEST_DIR"))
        .map(PathBuf::from)
        .unwrap_or_else(|| PathBuf::from("."));
    layout_at(&root)
}

/// The layout of the project at `root`: `harnesses/` and `transcripts/`, moved by
/// `[package.metadata.agent-seer]` in its `Cargo.toml`, then by `AGENT_SEER_HARNESSES` /
/// `AGENT_SEER_TRANSCRIPTS`.
pub fn layout_at(root: &Path) -> Result<Layout, SourceError> {
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
        let file = crate::source::SourceFile::read(&manifest)?;
        let doc: toml::Table =
            toml::from_str(&file.text).map_err(|e| file.error(format!("invalid TOML: {e}")))?;
        let meta = doc
            .get("package")
            .and_then(|p| p.get("metadata"))
            .and_then(|m| m.get("agent-seer"));
        if let Some(meta) = meta {
            for (key, slot) in [
                ("harnesses", &mut layout.harnesses),
                ("transcripts", &mut layout.transcripts),
            ] {
                match meta.get(key) {
                    Some(toml::Value::String(p)) => *slot = root.join(p),
                    Some(_) => {
                        return Err(file.error(format!(
                            "[package.metadata.agent-seer] `{key}` must be a string path"
                        )));
                    }
                    None => {}
                }
            }
        }
    }
    if let Some(p) = std::env::var_os("AGENT_SEER_HARNESSES") {
        layout.harnesses = PathBuf::from(p);
    }
    if let Some(p) = std::env::var_os("AGENT_SEER_TRANSCRIPTS") {
        layout.transcripts = PathBuf::from(p);
    }
    Ok(layout)
}

type SuiteCell = Arc<OnceLock<Result<Arc<Suite>, SourceError>>>;
type CheckCache = Arc<std::sync::Mutex<std::collections::HashMap<PathBuf, Arc<CheckResult>>>>;

/// A suite loaded at most once per process, shared by its trials, with the results of its
/// transcripts: a transcript's trial and the suite's gate evaluate each transcript once
/// between them, whichever runs first.
#[derive(Clone)]
pub(crate) struct LazySuite {
    pub(crate) name: String,
    harness: Option<PathBuf>,
    cell: SuiteCell,
    checks: CheckCache,
}

impl LazySuite {
    fn new(name: &str, harness: Option<PathBuf>) -> Self {
        Self {
            name: name.to_owned(),
            harness,
            cell: Arc::default(),
            checks: Arc::default(),
        }
    }

    /// One transcript's result, computed once per process.
    pub(crate) fn check(
        &self,
        suite: &Suite,
        path: &Path,
    ) -> Result<Arc<CheckResult>, SourceError> {
        let cached = self
            .checks
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .get(path)
            .cloned();
        if let Some(r) = cached {
            return Ok(r);
        }
        let r = Arc::new(check_loaded(suite, path)?);
        self.checks
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .insert(path.to_path_buf(), r.clone());
        Ok(r)
    }

    pub(crate) fn get(&self, layout_dir: &Path) -> Result<Arc<Suite>, SourceError> {
        self.cell
            .get_or_init(|| match &self.harness {
                Some(p) => Suite::load(p).map(Arc::new),
                None => {
                    let expected = layout_dir.join(format!("{}.yaml", self.name));
                    let file = crate::source::SourceFile::from_text(&expected, "");
                    Err(file.error(format!(
                        "suite `{}` has transcripts but no harness (expected {})",
                        self.name,
                        expected.display()
                    )))
                }
            })
            .clone()
    }
}

/// Builds the trial list: the `--exact` fast path, or everything, sorted.
pub fn trials(args: &Arguments, layout: &Layout) -> Vec<Trial> {
    if let Some(name) = args
        .filter
        .as_deref()
        .filter(|_| args.exact && args.skip.is_empty())
    {
        return exact_trial(name, layout).into_iter().collect();
    }
    // Tests of the fast path set this: listing may scan, running one trial may not.
    if std::env::var_os("AGENT_SEER_FULL_SCAN_FORBIDDEN").is_some() && !args.list {
        return vec![Trial::test("agent-seer::full-scan-forbidden", || {
            Err("AGENT_SEER_FULL_SCAN_FORBIDDEN is set but this run needs a full scan".into())
        })];
    }
    let suites = match discover(layout) {
        Ok(s) => s,
        Err(e) => {
            return vec![Trial::test("agent-seer::discovery", move || {
                Err(e.render().into())
            })];
        }
    };
    let mut out: Vec<Trial> = suites
        .iter()
        .flat_map(|s| suite_trials(s, layout))
        .collect();
    out.sort_by(|a, b| a.name().cmp(b.name()));
    out
}

fn suite_trials(files: &SuiteFiles, layout: &Layout) -> Vec<Trial> {
    let lazy = LazySuite::new(&files.suite, files.harness.clone());
    let mut out = Vec::new();
    let reserved: Vec<String> = files
        .transcripts
        .iter()
        .filter(|(id, _)| RESERVED.contains(&id.as_str()))
        .map(|(_, p)| p.display().to_string())
        .collect();
    if files.harness.is_some() || !reserved.is_empty() {
        out.push(harness_trial(&lazy, layout, reserved));
    }
    let judge = judge::configured();
    for (id, path) in &files.transcripts {
        if !RESERVED.contains(&id.as_str()) {
            out.push(transcript_trial(&lazy, layout, id, path.clone()));
            if files.harness.is_some() {
                out.push(judge::trial(&lazy, layout, id, path.clone(), judge));
            }
        }
    }
    if files.harness.is_some() && !files.transcripts.is_empty() {
        out.push(discrimination_trial(
            &lazy,
            layout,
            files.transcripts.clone(),
        ));
    }
    out
}

fn discrimination_trial(
    lazy: &LazySuite,
    layout: &Layout,
    transcripts: Vec<(String, PathBuf)>,
) -> Trial {
    let lazy = lazy.clone();
    let dir = layout.harnesses.clone();
    let root = layout.root.clone();
    let name = format!("{}::discrimination", lazy.name);
    Trial::ignorable_test(name.clone(), move || {
        let record = match lazy.get(&dir) {
            Err(e) => TrialRecord::bare(&name, &lazy.name, Status::Failed, Some(e.render())),
            Ok(suite) => gate_record(&name, discriminate(&lazy, &suite, &transcripts)),
        };
        finish(&root, record)
    })
}

/// A gate's trial record: ignored with nothing labelled, failed with its problems and table.
fn gate_record(name: &str, d: Discrimination) -> TrialRecord {
    let (status, message) = if d.is_empty() {
        (Status::Ignored, Some("no labelled transcripts".to_owned()))
    } else if d.passed() {
        (Status::Passed, None)
    } else {
        (
            Status::Failed,
            Some(format!("{}\n{}", d.problems().join("\n"), d.table())),
        )
    };
    let mut r = TrialRecord::bare(name, &d.suite.clone(), status, message);
    r.discrimination = Some(d);
    r
}

/// Writes a trial's record to the run directory and ends the trial as the record says.
pub(crate) fn finish(root: &Path, record: TrialRecord) -> Result<Completion, Failed> {
    if let Some(run) = RunDir::for_harness(root) {
        run.write(&record)
            .map_err(|e| format!("could not write the run report: {e}"))?;
    }
    match record.status {
        Status::Passed => Ok(Completion::Completed),
        Status::Xfailed | Status::Ignored => {
            Ok(Completion::ignored_with(record.message.unwrap_or_default()))
        }
        Status::Failed => Err(record.message.unwrap_or_default().into()),
    }
}

/// Evaluates a suite's transcripts (or takes their trials' results) and builds its gate.
fn discriminate(
    lazy: &LazySuite,
    suite: &Suite,
    transcripts: &[(String, PathBuf)],
) -> Discrimination {
    let mut evals = Vec::new();
    let mut errors = Vec::new();
    for (id, path) in transcripts
        .iter()
        .filter(|(id, _)| !RESERVED.contains(&id.as_str()))
    {
        match lazy.check(suite, path) {
            Ok(r) => evals.push((r.evaluation.clone(), r.xfail.is_some())),
            Err(e) => errors.push(format!("{id}: {e}")),
        }
    }
    let t = suite.harness.thresholds;
    Discrimination::new(&suite.harness.suite, t.pass, t.min_gap, &evals, errors)
}

fn exact_trial(name: &str, layout: &Layout) -> Option<Trial> {
    if let Some(rest) = name.strip_prefix("judge::") {
        let (suite, id) = rest.split_once("::")?;
        let lazy = LazySuite::new(suite, Some(layout.harness_file(suite)?));
        let path = layout.transcript_file(suite, id)?;
        return Some(judge::trial(&lazy, layout, id, path, judge::configured()));
    }
    let (suite, rest) = name.split_once("::")?;
    let lazy = LazySuite::new(suite, layout.harness_file(suite));
    if rest == "harness" {
        return lazy
            .harness
            .is_some()
            .then(|| harness_trial(&lazy, layout, Vec::new()));
    }
    if rest == "discrimination" {
        // The gate reads the whole suite, but only this suite's directory.
        lazy.harness.as_ref()?;
        return match crate::harness::suite_transcripts(layout, suite) {
            Ok(ts) if ts.is_empty() => None,
            Ok(ts) => Some(discrimination_trial(&lazy, layout, ts)),
            Err(e) => Some(Trial::test(name.to_owned(), move || Err(e.render().into()))),
        };
    }
    let path = layout.transcript_file(suite, rest)?;
    Some(transcript_trial(&lazy, layout, rest, path))
}

fn harness_trial(lazy: &LazySuite, layout: &Layout, reserved: Vec<String>) -> Trial {
    let lazy = lazy.clone();
    let dir = layout.harnesses.clone();
    let root = layout.root.clone();
    let name = format!("{}::harness", lazy.name);
    Trial::ignorable_test(name.clone(), move || {
        if !reserved.is_empty() {
            let msg = format!(
                "transcript names `harness` and `discrimination` are reserved for suite trials; rename {}",
                reserved.join(", ")
            );
            return finish(
                &root,
                TrialRecord::bare(&name, &lazy.name, Status::Failed, Some(msg)),
            );
        }
        let record = match lazy.get(&dir) {
            Err(e) => TrialRecord::bare(&name, &lazy.name, Status::Failed, Some(e.render())),
            Ok(suite) => harness_record(&name, &suite),
        };
        finish(&root, record)
    })
}

/// The harness trial's record: its oracles lint clean, and what of the spec they cover.
fn harness_record(name: &str, suite: &Suite) -> TrialRecord {
    let oracles = check_oracles(suite);
    let status = if oracles.is_ok() {
        Status::Passed
    } else {
        Status::Failed
    };
    let mut r = TrialRecord::bare(name, &suite.harness.suite, status, oracles.err());
    let called: std::collections::BTreeSet<&str> = suite
        .harness
        .scenarios
        .iter()
        .flat_map(|sc| &sc.turns)
        .flat_map(|t| &t.workflow)
        .map(|o| o.call.tool.as_str())
        .collect();
    let tools = suite.tools.tools();
    r.harness = Some(HarnessRecord {
        path: suite.harness.path.display().to_string(),
        scenarios: suite
            .harness
            .scenarios
            .iter()
            .map(|s| s.id.clone())
            .collect(),
        tools: tools.len(),
        uncovered_tools: tools
            .iter()
            .filter(|t| !called.contains(t.name.as_str()))
            .map(|t| t.name.clone())
            .collect(),
    });
    r
}

/// Every oracle call must lint clean: an oracle the linter rejects would grade correct agents
/// as wrong.
fn check_oracles(suite: &Suite) -> Result<(), String> {
    let mut problems = String::new();
    for sc in &suite.harness.scenarios {
        for turn in &sc.turns {
            for o in &turn.workflow {
                for f in suite.linter.lint(&o.call.tool, &o.call.arguments) {
                    if f.severity == Severity::Error {
                        let loc = o.call.location_of(&f.pointer);
                        problems.push_str(&format!("scenario `{}`: {f}\n  --> {loc}\n", sc.id));
                    }
                }
            }
        }
    }
    if problems.is_empty() {
        Ok(())
    } else {
        Err(format!("oracle calls the linter rejects:\n{problems}"))
    }
}

fn transcript_trial(lazy: &LazySuite, layout: &Layout, id: &str, path: PathBuf) -> Trial {
    let lazy = lazy.clone();
    let dir = layout.harnesses.clone();
    let root = layout.root.clone();
    let name = format!("{}::{id}", lazy.name);
    Trial::ignorable_test(name.clone(), move || {
        let mut record = match lazy.get(&dir).and_then(|suite| lazy.check(&suite, &path)) {
            Ok(result) => result.record(name.clone()),
            Err(e) => TrialRecord::bare(&name, &lazy.name, Status::Failed, Some(e.render())),
        };
        if record.status == Status::Failed && blessing() {
            bless_trial(&mut record, lazy.harness.as_deref(), &path);
        }
        finish(&root, record)
    })
}

/// Whether `AGENT_SEER_BLESS` asks failing transcript trials to bless themselves.
fn blessing() -> bool {
    std::env::var("AGENT_SEER_BLESS").is_ok_and(|v| !v.is_empty() && v != "0")
}

/// Blesses a failing transcript trial: on success the diff goes to stderr (libtest shows it)
/// and the trial passes saying what it changed; otherwise the failure says why not.
fn bless_trial(record: &mut TrialRecord, harness: Option<&Path>, transcript: &Path) {
    use crate::bless::{Blessing, bless_and_apply};
    let Some(harness) = harness else { return };
    let note = match bless_and_apply(harness, transcript) {
        Ok(Blessing::Edit(edit)) => {
            // The harness binary is the program here; stdout belongs to libtest, and the user
            // asked to see what bless changes.
            #[allow(clippy::print_stderr)]
            {
                eprintln!("blessed {}: {}\n{}", record.name, edit.what, edit.diff());
            }
            record.status = Status::Passed;
            record.message = Some(format!("blessed: {}", edit.what));
            return;
        }
        Ok(Blessing::Unchanged) => "not blessed: it passes when checked again".to_owned(),
        Ok(Blessing::Refused(why)) => format!("not blessed: {why}"),
        Err(e) => format!("not blessed: {}", e.render()),
    };
    let message = record.message.get_or_insert_with(String::new);
    message.push_str("\n\n");
    message.push_str(&note);
}

/// How a trial ends given whether its evaluation agrees with its label and its `xfail`: an
/// expected failure is reported, not gating; an unexpected pass fails (strict xfail).
pub fn status(agrees: Result<(), String>, xfail: Option<&str>) -> (Status, Option<String>) {
    match (agrees, xfail) {
        (Ok(()), None) => (Status::Passed, None),
        (Err(m), None) => (Status::Failed, Some(m)),
        (Err(_), Some(reason)) => (Status::Xfailed, Some(format!("xfail: {reason}"))),
        (Ok(()), Some(reason)) => (
            Status::Failed,
            Some(format!(
                "XPASS (strict): marked `xfail: {reason}`, but the trial now passes; remove the xfail"
            )),
        ),
    }
}

/// A transcript's trial result, as the harness and `check` both see it.
#[derive(Clone)]
pub struct CheckResult {
    pub evaluation: Evaluation,
    /// `Ok` when the evaluation agrees with the label; `Err` holds the full explanation.
    pub agrees: Result<(), String>,
    pub xfail: Option<String>,
    /// The transcript's file.
    pub path: PathBuf,
    pub label: crate::harness::Label,
    /// The expected-vs-actual call diff, for transcripts that fail or disagree with their label.
    pub diff: Option<String>,
}

impl CheckResult {
    /// The trial's status and message, and its record for the run report.
    pub fn record(&self, name: String) -> TrialRecord {
        let (status, message) = status(self.agrees.clone(), self.xfail.as_deref());
        let mut r = TrialRecord::bare(name, &self.evaluation.suite, status, message);
        r.transcript = Some(TranscriptRecord::new(
            &self.path,
            &self.evaluation,
            &self.label,
            self.diff.clone(),
        ));
        r
    }
}

/// Loads and evaluates one transcript of a loaded suite.
pub fn check_loaded(suite: &Suite, path: &Path) -> Result<CheckResult, SourceError> {
    let t = Transcript::load(path)?;
    let ev = evaluate(suite, &t)?;
    let scenario = t
        .scenario
        .as_deref()
        .and_then(|id| suite.harness.scenario(id));
    let agrees = ev
        .agrees_with_label()
        .map_err(|why| render::failure(&ev, &why, &t, scenario, &suite.harness.source));
    let diff = match scenario {
        Some(sc) if agrees.is_err() || ev.verdict == Verdict::Fail => Some(call_diff(&t, sc)),
        _ => None,
    };
    Ok(CheckResult {
        evaluation: ev,
        agrees,
        xfail: t.label.xfail.clone(),
        path: path.to_path_buf(),
        label: t.label,
        diff,
    })
}

/// How one trial ended.
#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Status {
    Passed,
    Failed,
    /// Failed as its `xfail` label expected: reported, not gating.
    Xfailed,
    /// Not run (a judge trial without a judge, a gate with nothing to gate).
    Ignored,
}

/// Runs every trial the harness would run, without libtest, keeping the evaluations; `keep`
/// selects transcripts by path (naming a harness file selects its suite). A suite's gate runs
/// whenever any of the suite is selected, over all its transcripts, each evaluated once.
/// `progress` is told each trial as it ends.
pub fn run_checks(
    layout: &Layout,
    keep: &dyn Fn(&Path) -> bool,
    progress: &mut dyn FnMut(&TrialRecord),
) -> Result<Vec<TrialRecord>, SourceError> {
    let mut out = Vec::new();
    let mut push = |r: TrialRecord, out: &mut Vec<TrialRecord>| {
        progress(&r);
        out.push(r);
    };
    for files in discover(layout)? {
        let lazy = LazySuite::new(&files.suite, files.harness.clone());
        let whole = files.harness.as_deref().is_some_and(keep);
        let wanted: Vec<bool> = files
            .transcripts
            .iter()
            .map(|(_, p)| whole || keep(p))
            .collect();
        if !whole && !wanted.contains(&true) {
            continue;
        }
        let suite = match lazy.get(&layout.harnesses) {
            Ok(s) => s,
            Err(e) => {
                // Every selected trial fails with the suite's load error.
                let fail = |name: String| {
                    TrialRecord::bare(name, &files.suite, Status::Failed, Some(e.render()))
                };
                if files.harness.is_some() {
                    push(fail(format!("{}::harness", files.suite)), &mut out);
                }
                for ((id, _), w) in files.transcripts.iter().zip(&wanted) {
                    if *w {
                        push(fail(format!("{}::{id}", files.suite)), &mut out);
                    }
                }
                continue;
            }
        };
        push(
            harness_record(&format!("{}::harness", files.suite), &suite),
            &mut out,
        );
        let mut evals = Vec::new();
        let mut errors = Vec::new();
        for ((id, path), w) in files.transcripts.iter().zip(&wanted) {
            if RESERVED.contains(&id.as_str()) {
                continue;
            }
            let name = format!("{}::{id}", files.suite);
            match check_loaded(&suite, path) {
                Err(e) => {
                    errors.push(format!("{id}: {e}"));
                    if *w {
                        push(
                            TrialRecord::bare(name, &files.suite, Status::Failed, Some(e.render())),
                            &mut out,
                        );
                    }
                }
                Ok(r) => {
                    if *w {
                        push(r.record(name), &mut out);
                    }
                    evals.push((r.evaluation, r.xfail.is_some()));
                }
            }
        }
        if !files.transcripts.is_empty() {
            let t = suite.harness.thresholds;
            let d = Discrimination::new(&files.suite, t.pass, t.min_gap, &evals, errors);
            if !d.is_empty() {
                push(
                    gate_record(&format!("{}::discrimination", files.suite), d),
                    &mut out,
                );
            }
        }
    }
    out.sort_by(|a, b| a.name.cmp(&b.name));
    Ok(out)
}
