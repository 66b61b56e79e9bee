//! The trial plan: which trials a project has ([`plan`]) and how each runs
//! ([`PlannedTrial::run`]), for both the `cargo test` driver and `agent-seer check`.
//!
//! Planning is a pure function of the files and the [`HarnessConfig`]: sorted, identical on
//! every machine, and it reads no file (names come from paths), so `--list` is fast and
//! nextest's `--partition slice:m/n` shards the same list everywhere. Each trial then loads
//! what it needs: its suite once per process, and its own transcript. [`plan_exact`] maps one
//! trial name back to its files, for nextest's one-process-per-trial `--exact NAME`.
//!
//! Trials ([`TrialId`] has the names):
//! - `<suite>::<transcript>`: the engines over one transcript, judged against its label;
//! - `<suite>::harness`: the harness itself loads, and every oracle workflow lints clean;
//! - `<suite>::discrimination`: the merge gate over the suite's labelled transcripts;
//! - `judge::<suite>::<transcript>`: the LLM judge through the configured [`Judge`] (ignored,
//!   with the reason, when there is none);
//! - `agent-seer::<what>`: stands for a harness that could not start — no suite found, a
//!   discovery or configuration error — so a broken setup fails instead of running 0 tests.

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, OnceLock};

use super::config::{HarnessConfig, JudgeSetup};
use super::discrimination::{Discrimination, Row};
use super::evaluate::{Evaluation, Verdict, evaluate, evaluate_every_call};
use super::prepared::Prepared;
use super::record::{HarnessRecord, JudgeRecord, Status, TranscriptRecord, TrialRecord};
use super::render;
use super::suite::Suite;
use crate::finding::Severity;
use crate::harness::{
    Expect, Forbid, Layout, SuiteFiles, Transcript, TrialId, TrialKind, discover, suite_transcripts,
};
use crate::source::{SourceError, SourceFile};

/// An LLM judge the plan's `judge::` trials run through. The judge layer implements it (with
/// the `judge` feature); the plan only calls it.
pub trait Judge: Send + Sync {
    /// Judges one transcript, given its deterministic evaluation: the judge's scores and the
    /// combined verdict (`crate::judge::combine`), or why judging failed.
    fn judge(
        &self,
        suite: &Suite,
        transcript: &Transcript,
        evaluation: &Evaluation,
    ) -> Result<JudgeRecord, JudgeError>;
}

/// Why a judge trial could not be judged; the judge's own error is kept as the source.
#[derive(Debug)]
#[non_exhaustive]
pub enum JudgeError {
    /// The judge could not be set up (no key, an unknown provider, no runtime).
    Setup(Box<dyn std::error::Error + Send + Sync>),
    /// Asking the judge failed (transport, an answer that never fit the schema, a cache miss
    /// under replay).
    Failed(Box<dyn std::error::Error + Send + Sync>),
    /// The suite requires a certified judge (`judge: { certify: … }`) and this one is not:
    /// what it measured against the bar.
    Uncertified(String),
}

impl std::fmt::Display for JudgeError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            JudgeError::Setup(e) => write!(f, "{e}"),
            JudgeError::Failed(e) => write!(f, "the judge failed: {e}"),
            JudgeError::Uncertified(why) => f.write_str(why),
        }
    }
}

impl std::error::Error for JudgeError {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match self {
            JudgeError::Setup(e) | JudgeError::Failed(e) => Some(e.as_ref()),
            JudgeError::Uncertified(_) => None,
        }
    }
}

/// One trial of the plan: its identity, whether it is ignored unless asked for, and the work.
#[derive(Clone)]
pub struct PlannedTrial {
    /// The trial's identity; its `Display` is the trial name.
    pub id: TrialId,
    /// Why the trial is ignored unless `--ignored`/`--include-ignored` asks for it; it then
    /// runs and ends as ignored with this reason.
    pub ignored: Option<String>,
    work: Work,
}

#[derive(Clone)]
enum Work {
    Harness(LazySuite),
    /// The suite's transcript at this place in its list.
    Transcript(LazySuite, usize),
    Gate(LazySuite),
    Mutation(LazySuite),
    Judge(LazySuite, usize, JudgeSetup),
    /// A setup failure (boxed: the plan holds a trial per transcript, each the size of the
    /// largest kind).
    Fail(Box<Failure>),
}

impl PlannedTrial {
    /// Runs the trial, once; every outcome, a load error included, is a record. Should the
    /// trial meet a regex or schema its suite's stamp vouched for and this build cannot
    /// compile ([`crate::pattern::broken_uses`]: a stamp copied or edited by hand), the stamp
    /// goes and the trial runs again on the suite loaded in full, which reports the error at
    /// its place: a stamp never changes a verdict.
    pub fn run(&self) -> TrialRecord {
        let broken = crate::pattern::broken_uses();
        let record = self.run_once();
        if crate::pattern::broken_uses() == broken {
            return record;
        }
        match self.suite() {
            Some(lazy) if lazy.load_in_full() => self.run_once(),
            _ => record,
        }
    }

    /// The suite the trial grades with, if it has one.
    fn suite(&self) -> Option<&LazySuite> {
        match &self.work {
            Work::Fail(_) => None,
            Work::Harness(l) | Work::Gate(l) | Work::Mutation(l) => Some(l),
            Work::Transcript(l, _) | Work::Judge(l, _, _) => Some(l),
        }
    }

    fn run_once(&self) -> TrialRecord {
        match &self.work {
            Work::Fail(why) => TrialRecord::new(&self.id, Status::Failed, Some(why.to_string())),
            Work::Harness(lazy) => match lazy.full() {
                Err(e) => TrialRecord::new(&self.id, Status::Failed, Some(e.render())),
                Ok(suite) => harness_record(&self.id, &suite),
            },
            Work::Transcript(lazy, i) => match lazy.get() {
                Err(e) => TrialRecord::new(&self.id, Status::Failed, Some(lazy.unloaded(&e))),
                Ok(suite) => match lazy.check(&suite, *i) {
                    Ok(result) => result.record(&self.id),
                    Err(e) => TrialRecord::new(&self.id, Status::Failed, Some(e.render())),
                },
            },
            Work::Gate(lazy) => match lazy.get() {
                Err(e) => TrialRecord::new(&self.id, Status::Failed, Some(lazy.unloaded(&e))),
                Ok(suite) => gate_record(&self.id, discriminate(lazy, &suite)),
            },
            Work::Mutation(lazy) => match lazy.get() {
                Err(e) => TrialRecord::new(&self.id, Status::Failed, Some(e.render())),
                Ok(suite) => mutation_record(&self.id, lazy, &suite),
            },
            Work::Judge(lazy, i, setup) => match setup {
                JudgeSetup::Ready(judge) => judged(&self.id, lazy, lazy.path(*i), judge.as_ref())
                    .unwrap_or_else(|e| TrialRecord::new(&self.id, Status::Failed, Some(e))),
                _ => TrialRecord::new(
                    &self.id,
                    Status::Ignored,
                    Some(setup.unavailable().unwrap_or_default().to_owned()),
                ),
            },
        }
    }

    /// The trial's harness file and, for a transcript or judge trial, its transcript file.
    pub fn files(&self) -> (Option<&Path>, Option<&Path>) {
        match &self.work {
            Work::Fail(_) => (None, None),
            Work::Harness(l) | Work::Gate(l) | Work::Mutation(l) => (l.harness.as_deref(), None),
            Work::Transcript(l, i) | Work::Judge(l, i, _) => {
                (l.harness.as_deref(), Some(l.path(*i)))
            }
        }
    }

    /// Whether the trial is selected by `keep` over paths: a transcript's trials by the
    /// transcript or its harness; a suite's harness trial and gate whenever any of the suite
    /// is (the gate still reads all of the suite's transcripts).
    pub fn selected_by(&self, keep: &dyn Fn(&Path) -> bool) -> bool {
        match &self.work {
            Work::Fail(_) => true,
            Work::Transcript(l, i) | Work::Judge(l, i, _) => {
                keep(l.path(*i)) || l.harness.as_deref().is_some_and(keep)
            }
            Work::Harness(l) | Work::Gate(l) | Work::Mutation(l) => {
                l.harness.as_deref().is_some_and(keep) || l.transcripts.iter().any(|(_, p)| keep(p))
            }
        }
    }
}

/// The project's trials, sorted by name. A project without any suite, or whose files cannot
/// be trial names, plans one failing `agent-seer::discovery` trial saying so: a moved
/// directory must not turn the gate off.
pub fn plan(layout: &Layout, config: &HarnessConfig) -> Vec<PlannedTrial> {
    plan_with(layout, config, true)
}

/// [`plan`] without the trials it would list as ignored: what a run that leaves them out
/// needs (`agent-seer check`). A judge trial without a judge is not made, where a corpus of
/// 30,000 transcripts would hold 30,000 of them for nothing.
pub fn plan_runnable(layout: &Layout, config: &HarnessConfig) -> Vec<PlannedTrial> {
    plan_with(layout, config, false)
}

fn plan_with(layout: &Layout, config: &HarnessConfig, ignored: bool) -> Vec<PlannedTrial> {
    let suites = match discover(layout) {
        Ok(s) => s,
        Err(e) => return vec![PlannedTrial::failing(TrialId::setup("discovery"), e)],
    };
    if suites.is_empty() {
        return vec![PlannedTrial::failing(
            TrialId::setup("discovery"),
            no_suites(layout),
        )];
    }
    let mut out: Vec<PlannedTrial> = suites
        .into_iter()
        .flat_map(|s| suite_trials(s, layout, config, ignored))
        .collect();
    out.sort_by_cached_key(|t| t.id.to_string());
    out.shrink_to_fit();
    out
}

/// The one trial a name names, found from its files alone (no directory scan beyond a gate's
/// own suite). A name whose files are ambiguous (`a0.yaml` beside `a0.yml`) or whose suite
/// directory discovery refuses is a failing trial of that name; `None` when the name maps to
/// no file, and the caller should plan everything (a broken project then says why).
pub fn plan_exact(name: &str, layout: &Layout, config: &HarnessConfig) -> Option<PlannedTrial> {
    let id: TrialId = name.parse().ok()?;
    let suite = id.suite.as_str();
    let two = |files: &[PathBuf]| {
        let files: Vec<String> = files.iter().map(|p| p.display().to_string()).collect();
        format!(
            "{}: two files for one trial name; keep one",
            files.join(" and ")
        )
    };
    let harnesses = layout.harness_files(suite);
    if harnesses.len() > 1 {
        return Some(PlannedTrial::failing(id, two(&harnesses)));
    }
    let harness = harnesses.into_iter().next();
    match id.kind {
        TrialKind::Transcript | TrialKind::Judge => {
            let transcript = id.transcript.as_deref()?;
            let mut files = layout.transcript_files(suite, transcript);
            if files.len() > 1 {
                return Some(PlannedTrial::failing(id, two(&files)));
            }
            let path = files.pop()?;
            let lazy = LazySuite::new(
                suite,
                harness.clone(),
                layout,
                config.prepared.as_deref(),
                vec![(transcript.to_owned(), path)],
            );
            Some(if id.kind == TrialKind::Judge {
                harness.as_ref()?;
                judge_trial(&lazy, id, 0, &config.judge)
            } else {
                trial(id, Work::Transcript(lazy, 0))
            })
        }
        TrialKind::Harness => {
            let lazy = LazySuite::new(
                suite,
                Some(harness?),
                layout,
                config.prepared.as_deref(),
                Vec::new(),
            );
            Some(trial(id, Work::Harness(lazy)))
        }
        TrialKind::Discrimination => {
            harness.as_ref()?;
            let ts = match suite_transcripts(layout, suite) {
                Ok(ts) => ts,
                Err(e) => return Some(PlannedTrial::failing(id, e)),
            };
            if ts.is_empty() {
                return None;
            }
            let lazy = LazySuite::new(suite, harness, layout, config.prepared.as_deref(), ts);
            Some(trial(id, Work::Gate(lazy)))
        }
        TrialKind::Mutation => {
            let harness = harness?;
            if !asks_for_mutation(&harness) {
                return None;
            }
            let ts = match suite_transcripts(layout, suite) {
                Ok(ts) => ts,
                Err(e) => return Some(PlannedTrial::failing(id, e)),
            };
            let lazy = LazySuite::new(suite, Some(harness), layout, config.prepared.as_deref(), ts);
            Some(trial(id, Work::Mutation(lazy)))
        }
        TrialKind::Live | TrialKind::Setup => None,
    }
}

/// Whether a harness sets `thresholds.mutation`, read from its text without loading it (the
/// plan lists trials before any suite loads): a `mutation:` key outside a comment. A harness
/// that only mentions the word in a string gets a trial that says it has no such gate.
fn asks_for_mutation(harness: &Path) -> bool {
    std::fs::read_to_string(harness).is_ok_and(|text| {
        text.lines().any(|line| {
            let code = line.split(" #").next().unwrap_or("");
            !code.trim_start().starts_with('#')
                && (code.trim_start().starts_with("mutation:")
                    || (code.contains("thresholds:") && code.contains("mutation:")))
        })
    })
}

/// The mutation gate: the suite's mutants (`agent-seer mutate`), its killed share against
/// `thresholds.mutation`; a failure lists every survivor with why it got through.
fn mutation_record(id: &TrialId, lazy: &LazySuite, suite: &Suite) -> TrialRecord {
    let Some(min) = suite.harness.thresholds.mutation else {
        return TrialRecord::new(
            id,
            Status::Ignored,
            Some("the harness sets no `thresholds.mutation`".to_owned()),
        );
    };
    // Only the survivors are kept: a large suite makes many mutants.
    let (mut total, mut killed, mut survivors) = (0usize, 0usize, Vec::new());
    let made = mutants_of(lazy, suite, &mut |o| {
        total += 1;
        if o.killed {
            killed += 1;
        } else {
            survivors.push(o);
        }
    });
    // Its trials' notes have served.
    lock(&lazy.seen).clear();
    lock(&lazy.keys).clear();
    if let Err(e) = made {
        return TrialRecord::new(id, Status::Failed, Some(e));
    }
    if total == 0 {
        return TrialRecord::new(
            id,
            Status::Failed,
            Some("the suite makes no mutants: no correct transcript or oracle passes".to_owned()),
        );
    }
    // As `SuiteMutation::score` counts it.
    let score = killed as f64 / total as f64;
    if score + 1e-9 >= min {
        return TrialRecord::new(id, Status::Passed, None);
    }
    let mut message = format!(
        "mutation score {score:.3} ({killed}/{total} killed) is below thresholds.mutation {min}; the survivors:\n",
    );
    for o in &survivors {
        message.push_str(&format!(
            "  {} [{}] {}\n    why: {}\n",
            o.source,
            o.operator.as_str(),
            o.what,
            o.why.as_deref().unwrap_or("")
        ));
    }
    message.push_str("(`agent-seer mutate --write DIR` writes them out for review)");
    TrialRecord::new(id, Status::Failed, Some(message))
}

/// What the suite's gates keep of one mutant: its run and operator, what it changed, whether
/// the suite killed it and why not, and its row for a discrimination table.
#[derive(Clone)]
struct Graded {
    source: String,
    operator: super::Operator,
    what: String,
    killed: bool,
    why: Option<String>,
    row: Option<Row>,
}

impl Graded {
    fn of(o: &super::MutantOutcome) -> Self {
        Self {
            source: o.mutant.source.clone(),
            operator: o.mutant.operator,
            what: o.mutant.what.clone(),
            killed: o.killed,
            why: o.why.clone(),
            row: o.evaluation.as_ref().and_then(Row::of),
        }
    }

    /// The same mutant made from another run with the same calls.
    fn of_run(&self, source: &str) -> Self {
        let mut g = self.clone();
        g.source = source.to_owned();
        if let Some(row) = &mut g.row {
            // As `mutate` names a mutant's transcript: its run, and what was done to it.
            row.transcript = format!("{source}~{}", self.operator.as_str());
        }
        g
    }
}

/// How many runs' mutants are remembered for runs with the same calls (`Mutator::key`): a
/// corpus of repeated runs grades each set of calls once, in bounded memory.
const ALIKE: usize = 256;

/// The suite's mutants, from its YAML transcripts (and the oracles of scenarios without one),
/// each handed to `each` as it is graded: one transcript is read at a time, and a run with the
/// calls of one mutated before gets that run's mutants, renamed — without being read again
/// when its trial saw it. A transcript that does not load ends it with the error (the mutants
/// already given are then the caller's to drop).
fn mutants_of(lazy: &LazySuite, suite: &Suite, each: &mut dyn FnMut(Graded)) -> Result<(), String> {
    let mut mutator = super::Mutator::new(suite);
    let mut alike: HashMap<Arc<str>, Vec<Graded>> = HashMap::new();
    for (i, (id, path)) in lazy.transcripts.iter().enumerate() {
        if !is_yaml(path) {
            continue;
        }
        let seen = lock(&lazy.seen).get(&i).cloned();
        match seen {
            Some(Seen::NoSource) => continue,
            Some(Seen::Source { id, key }) if alike.contains_key(&key) => {
                alike[&key].iter().for_each(|g| each(g.of_run(&id)));
                continue;
            }
            _ => {}
        }
        let t = Transcript::load(path).map_err(|e| format!("{id}: {e}"))?;
        let key: Option<Arc<str>> = super::Mutator::key(&t).map(Into::into);
        if let Some(done) = key.as_ref().and_then(|k| alike.get(k)) {
            done.iter().for_each(|g| each(g.of_run(&t.id)));
            continue;
        }
        let mut made = Vec::new();
        mutator.run(&t, &mut |o| made.push(Graded::of(&o)));
        if let Some(k) = key.filter(|_| alike.len() < ALIKE) {
            alike.insert(k, made.clone());
        }
        made.into_iter().for_each(&mut *each);
    }
    mutator.finish(&mut |o| each(Graded::of(&o)));
    Ok(())
}

/// Whether a transcript is YAML (a recorded run is not mutated).
fn is_yaml(path: &Path) -> bool {
    path.extension().is_some_and(|e| e == "yaml" || e == "yml")
}

fn no_suites(layout: &Layout) -> String {
    let state = |p: &Path| match std::fs::metadata(p) {
        Ok(m) if m.is_dir() => "holds no suite",
        Ok(_) => "is not a directory",
        Err(_) => "does not exist",
    };
    format!(
        "no suite found: {} {} (a suite is a harnesses/<suite>.yaml) and {} {} (transcripts/<suite>/); \
         set AGENT_SEER_ROOT or [package.metadata.agent-seer] if the project keeps them elsewhere",
        layout.harnesses.display(),
        state(&layout.harnesses),
        layout.transcripts.display(),
        state(&layout.transcripts),
    )
}

fn trial(id: TrialId, work: Work) -> PlannedTrial {
    PlannedTrial {
        id,
        ignored: None,
        work,
    }
}

/// Why a planned trial fails before it runs: a file error (kept typed, for a caller that
/// reports it as an input error) or words.
#[derive(Clone, Debug)]
pub enum Failure {
    /// A file the harness could not use (discovery, configuration), rendered with its place.
    Source(SourceError),
    /// Anything else.
    Words(String),
}

impl std::fmt::Display for Failure {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Failure::Source(e) => f.write_str(&e.render()),
            Failure::Words(w) => f.write_str(w),
        }
    }
}

impl From<SourceError> for Failure {
    fn from(e: SourceError) -> Self {
        Failure::Source(e)
    }
}

impl From<String> for Failure {
    fn from(w: String) -> Self {
        Failure::Words(w)
    }
}

impl PlannedTrial {
    /// A trial that fails with `why` before it runs (a harness that could not start, a name
    /// whose files are ambiguous).
    pub fn failing(id: TrialId, why: impl Into<Failure>) -> Self {
        trial(id, Work::Fail(Box::new(why.into())))
    }

    /// Why the trial fails before it runs, if it does.
    pub fn failure(&self) -> Option<&Failure> {
        match &self.work {
            Work::Fail(why) => Some(why.as_ref()),
            _ => None,
        }
    }
}

fn judge_trial(lazy: &LazySuite, id: TrialId, i: usize, setup: &JudgeSetup) -> PlannedTrial {
    PlannedTrial {
        id,
        ignored: setup.unavailable().map(str::to_owned),
        work: Work::Judge(lazy.clone(), i, setup.clone()),
    }
}

/// A suite's trials; with `ignored` false, not those that would be ignored.
fn suite_trials(
    files: SuiteFiles,
    layout: &Layout,
    config: &HarnessConfig,
    ignored: bool,
) -> Vec<PlannedTrial> {
    let name = files.suite.as_str();
    let has_harness = files.harness.is_some();
    // Without stamps: a process that runs a whole plan loads each suite once, in full, for
    // all its trials; stamps are for a process that grades one (`plan_exact`, nextest's).
    let lazy = LazySuite::new(name, files.harness, layout, None, files.transcripts);
    let mut out = Vec::new();
    if has_harness {
        out.push(trial(TrialId::harness(name), Work::Harness(lazy.clone())));
    }
    let judged = has_harness && (ignored || config.judge.unavailable().is_none());
    for (i, (id, _)) in lazy.transcripts.iter().enumerate() {
        out.push(trial(
            TrialId::transcript(name, id),
            Work::Transcript(lazy.clone(), i),
        ));
        if judged {
            out.push(judge_trial(
                &lazy,
                TrialId::judge(name, id),
                i,
                &config.judge,
            ));
        }
    }
    if let Some(h) = lazy.harness.as_deref()
        && asks_for_mutation(h)
    {
        out.push(trial(TrialId::mutation(name), Work::Mutation(lazy.clone())));
    }
    if has_harness && !lazy.transcripts.is_empty() {
        out.push(trial(TrialId::discrimination(name), Work::Gate(lazy)));
    }
    out
}

/// A suite loaded at most once per process, shared by its trials (a clone is one pointer: the
/// plan holds one per transcript), with what its gate needs of each transcript: a
/// transcript's trial and the suite's gate evaluate each transcript once between them,
/// whichever runs first.
#[derive(Clone)]
struct LazySuite(Arc<SuiteState>);

struct SuiteState {
    name: String,
    harness: Option<PathBuf>,
    /// Where the harness should be, for the error when it is not.
    harness_dir: PathBuf,
    transcripts: Vec<(String, PathBuf)>,
    /// Where the suite's stamp is kept, when it loads through one.
    prepared: Option<Prepared>,
    /// The suite loaded in full, once a trial found that its stamp vouched for what does not
    /// compile ([`PlannedTrial::run`]); it then serves every trial of the suite.
    full: OnceLock<Result<Arc<Suite>, SourceError>>,
    cell: OnceLock<Result<Arc<Suite>, SourceError>>,
    /// The gate's row of each transcript evaluated so far, by its place in `transcripts`
    /// (`None`: unlabelled), or why it did not load: small, so a suite of any size is gated
    /// without holding its evaluations. The gate takes them.
    rows: Mutex<HashMap<usize, Result<Option<Row>, String>>>,
    /// Results the gate evaluated before their own trial ran (libtest runs trials in any
    /// order), each taken by its trial. `check` runs a gate after its suite's transcripts, so
    /// this stays empty there.
    ahead: Mutex<HashMap<usize, CheckResult>>,
    /// What the trials of a suite with a mutation gate learnt of their YAML transcripts as
    /// sources of mutants, by place, so the gate reads again only a run whose calls it has
    /// not mutated yet; the mutation gate takes them.
    seen: Mutex<HashMap<usize, Seen>>,
    /// The calls of the correct runs seen so far (`Mutator::key`), shared by the runs with
    /// the same (at most [`ALIKE`]).
    keys: Mutex<std::collections::HashSet<Arc<str>>>,
}

/// A YAML transcript as a source of mutants, as its trial saw it.
#[derive(Clone)]
enum Seen {
    /// Not a correct run of a scenario: it makes none.
    NoSource,
    /// A correct run: its id, and the calls its mutants are made from.
    Source { id: String, key: Arc<str> },
}

impl std::ops::Deref for LazySuite {
    type Target = SuiteState;

    fn deref(&self) -> &SuiteState {
        &self.0
    }
}

impl LazySuite {
    /// The suite of `harness`, loaded through its stamp under `prepared` when there is one.
    fn new(
        name: &str,
        harness: Option<PathBuf>,
        layout: &Layout,
        prepared: Option<&Path>,
        transcripts: Vec<(String, PathBuf)>,
    ) -> Self {
        Self(Arc::new(SuiteState {
            name: name.to_owned(),
            harness,
            prepared: prepared.map(Path::to_path_buf).and_then(Prepared::at),
            full: OnceLock::new(),
            harness_dir: layout.harnesses.clone(),
            transcripts,
            cell: OnceLock::new(),
            rows: Mutex::default(),
            ahead: Mutex::default(),
            seen: Mutex::default(),
            keys: Mutex::default(),
        }))
    }

    /// The file of the transcript at `i` in the suite's list.
    fn path(&self, i: usize) -> &Path {
        &self.transcripts[i].1
    }

    /// The result of the transcript at `i` for its trial: the one the gate made ahead of it,
    /// else evaluated now (and its row kept for the gate).
    fn check(&self, suite: &Suite, i: usize) -> Result<CheckResult, SourceError> {
        let ahead = lock(&self.ahead).remove(&i);
        if let Some(r) = ahead {
            return Ok(r);
        }
        let path = self.path(i);
        let r = load_transcript(suite, path).and_then(|t| {
            if suite.harness.thresholds.mutation.is_some() && is_yaml(path) {
                self.note_source(i, &t);
            }
            // The one transcript of a trial's process (`plan_exact`) is evaluated alone.
            let ev = if self.transcripts.len() == 1 {
                evaluate_every_call(suite, &t)
            } else {
                evaluate(suite, &t)
            };
            ev.and_then(|ev| check_transcript(suite, ev, &t, path))
        });
        let row = match &r {
            Ok(r) => Ok(Row::of(&r.evaluation)),
            Err(e) => Err(e.to_string()),
        };
        lock(&self.rows).insert(i, row);
        r
    }

    /// Notes what the transcript at `i` is as a source of mutants, for the mutation gate.
    fn note_source(&self, i: usize, t: &Transcript) {
        let seen = match super::Mutator::key(t) {
            None => Seen::NoSource,
            Some(key) => {
                let mut keys = lock(&self.keys);
                let shared = keys.get(key.as_str()).cloned();
                let key = match shared {
                    Some(k) => k,
                    None if keys.len() < ALIKE => {
                        let k: Arc<str> = key.into();
                        keys.insert(k.clone());
                        k
                    }
                    // Too many different runs to remember: the gate reads this one again.
                    None => return,
                };
                Seen::Source {
                    id: t.id.clone(),
                    key,
                }
            }
        };
        lock(&self.seen).insert(i, seen);
    }

    /// The failure of a trial whose suite did not load. With a harness file, its own trial
    /// shows the error in full and this one says so in a line (the same quoted error once per
    /// trial buried it, issue 34); without one, there is no harness trial, so in full.
    fn unloaded(&self, e: &SourceError) -> String {
        if self.harness.is_some() {
            format!(
                "not run: the suite's harness does not load ({e}); `{}::harness` shows where",
                self.name
            )
        } else {
            e.render()
        }
    }

    /// The suite loaded in full, every file checked: what the harness trial grades, whose
    /// job is to say whether the suite's files load (a stamp is no proof of that to it). It
    /// keeps the suite's stamp when they do, and forgets it when they do not. Once loaded,
    /// it serves every trial of the suite in this process.
    fn full(&self) -> Result<Arc<Suite>, SourceError> {
        let (Some(path), Some(prepared)) = (&self.harness, &self.prepared) else {
            return self.get();
        };
        self.full
            .get_or_init(|| {
                let full = SourceFile::read(path).and_then(|f| Suite::load_and_keep(f, prepared));
                if full.is_err() {
                    prepared.forget(path);
                }
                full.map(Arc::new)
            })
            .clone()
    }

    /// After a trial met a regex or schema the suite's stamp vouched for and which does not
    /// compile: the stamp goes, the suite is loaded in full (an error, if it has one, at its
    /// place), and what trials noted from the prepared suite is dropped. `false` when the
    /// suite does not load through a stamp.
    fn load_in_full(&self) -> bool {
        let (Some(path), Some(prepared)) = (&self.harness, &self.prepared) else {
            return false;
        };
        prepared.forget(path);
        let _ = self.full();
        lock(&self.rows).clear();
        lock(&self.ahead).clear();
        lock(&self.seen).clear();
        lock(&self.keys).clear();
        true
    }

    fn get(&self) -> Result<Arc<Suite>, SourceError> {
        if let Some(full) = self.full.get() {
            return full.clone();
        }
        self.cell
            .get_or_init(|| match &self.harness {
                Some(p) => match &self.prepared {
                    Some(prepared) => Suite::load_prepared(p, prepared),
                    None => Suite::load(p),
                }
                .map(Arc::new),
                None => {
                    let expected = self.harness_dir.join(format!("{}.yaml", self.name));
                    Err(SourceError::about(
                        &expected,
                        format!(
                            "suite `{}` has transcripts but no harness (expected {})",
                            self.name,
                            expected.display()
                        ),
                    ))
                }
            })
            .clone()
    }
}

/// A mutex's data, even after a panic elsewhere held it (the data stay consistent: each use is
/// one insert or removal).
fn lock<T>(m: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|p| p.into_inner())
}

/// A gate's trial record: ignored with nothing labelled, failed with its problems and table.
fn gate_record(id: &TrialId, d: Discrimination) -> TrialRecord {
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
    let mut r = TrialRecord::new(id, status, message);
    r.discrimination = Some(d);
    r
}

/// Builds a suite's gate from its transcripts' rows: taken from their trials, or evaluated
/// here when the gate runs first (the results then kept for their trials).
fn discriminate(lazy: &LazySuite, suite: &Suite) -> Discrimination {
    let mut done = std::mem::take(&mut *lock(&lazy.rows));
    let mut rows = Vec::new();
    let mut errors = Vec::new();
    for (i, (id, path)) in lazy.transcripts.iter().enumerate() {
        let row = done
            .remove(&i)
            .unwrap_or_else(|| match check_loaded(suite, path) {
                Ok(r) => {
                    let row = Row::of(&r.evaluation);
                    lock(&lazy.ahead).insert(i, r);
                    Ok(row)
                }
                Err(e) => Err(e.to_string()),
            });
        match row {
            Ok(row) => rows.extend(row),
            Err(e) => errors.push(format!("{id}: {e}")),
        }
    }
    // Without a hand-written broken run, the suite's mutants are its broken runs (beside its
    // labelled correct ones: without any, there is no gap to measure).
    let labelled = |x| rows.iter().any(|r: &Row| r.expect == x);
    if labelled(Expect::Pass) && !labelled(Expect::Fail) {
        let mut mutants = Vec::new();
        let made = mutants_of(lazy, suite, &mut |g| mutants.extend(g.row));
        match made {
            Ok(()) => rows.extend(mutants),
            Err(e) => errors.push(e),
        }
    }
    let t = suite.harness.thresholds;
    Discrimination::from_rows(&suite.harness.suite, t.pass, t.min_gap, rows, errors)
}

/// The harness trial's record: its oracles lint clean, and what of the spec they cover.
fn harness_record(id: &TrialId, suite: &Suite) -> TrialRecord {
    let oracles = check_oracles(suite);
    let status = if oracles.is_ok() {
        Status::Passed
    } else {
        Status::Failed
    };
    let mut r = TrialRecord::new(id, status, oracles.err());
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

/// Every oracle call must lint clean (for each tool a step accepts): an oracle the linter
/// rejects would grade correct agents as wrong. Every `match:` key must name a parameter of
/// the tool or a pointer into the step's arguments: a key naming nothing would hold correct
/// agents to nothing and cost them score.
fn check_oracles(suite: &Suite) -> Result<(), String> {
    let mut problems = String::new();
    // Effects `agent-seer init` proposed from names are guesses until someone checks them.
    for m in suite.linter.matrices() {
        let open = m.unreviewed();
        if !open.is_empty() {
            let list: Vec<String> = open
                .iter()
                .map(|(tool, why)| format!("{} ({why})", tool.unwrap_or("a server-wide entry")))
                .collect();
            problems.push_str(&format!(
                "{}: the effects of {} are proposals nobody has reviewed: {}; check each against the server and delete its `proposed:` (an effect taken on trust grades correct runs as destructive, or lets a destructive call through)\n",
                m.file.display(),
                if open.len() == 1 { "1 tool".to_owned() } else { format!("{} tools", open.len()) },
                list.join(", ")
            ));
        }
    }
    for sc in &suite.harness.scenarios {
        for turn in &sc.turns {
            for o in &turn.workflow {
                for tool in o.tools() {
                    for f in suite.linter.lint(tool, o.call.arguments()) {
                        if f.severity == Severity::Error {
                            let loc = o.call.location_for(&f);
                            problems.push_str(&format!("scenario `{}`: {f}\n  --> {loc}\n", sc.id));
                        }
                    }
                    // A step its own turn forbids fails every run that does it.
                    let e = suite.linter.effect(tool, o.call.args());
                    let forbidden = turn.forbid.iter().find(|f| match f {
                        Forbid::Tool(t) => t == tool,
                        Forbid::Destructive => e.destructive,
                        Forbid::Mutating => !e.read_only,
                        Forbid::OpenWorld => e.open_world,
                    });
                    if let Some(f) = forbidden {
                        let loc = &o.call.location;
                        problems.push_str(&format!(
                            "scenario `{}`: the step `{tool}` is one of the {f} its own `forbid:` forbids (say the tool's effects in the matrix, or drop the step)\n  --> {loc}\n",
                            sc.id
                        ));
                    }
                }
                for key in o.match_policies.keys() {
                    if let Some(why) = match_key_problem(suite, o, key) {
                        let loc = &o.call.location;
                        problems.push_str(&format!("scenario `{}`: {why}\n  --> {loc}\n", sc.id));
                    }
                }
            }
        }
    }
    if problems.is_empty() {
        Ok(())
    } else {
        Err(format!(
            "the workflow would misgrade correct agents:\n{problems}"
        ))
    }
}

#[cfg(test)]
pub(crate) fn check_oracles_for_tests(suite: &Suite) -> Result<(), String> {
    check_oracles(suite)
}

/// Why a step's `match:` key names nothing, if it does: a parameter none of the step's tools
/// declares (nor the step passes), or a pointer no value of the step's arguments is at.
fn match_key_problem(suite: &Suite, o: &crate::harness::OracleCall, key: &str) -> Option<String> {
    let declared: Vec<&str> = o
        .tools()
        .filter_map(|t| suite.linter.tool(t))
        .flat_map(|s| {
            s.properties()
                .into_iter()
                .flatten()
                .map(|(k, _)| k.as_str())
        })
        .chain(o.call.args().keys().map(String::as_str))
        .collect();
    if !key.starts_with('/') {
        if declared.contains(&key) {
            return None;
        }
        let hint = crate::finding::did_you_mean(key, declared.iter().copied());
        return Some(format!(
            "`match:` names `{key}`, which is no parameter of `{}`{hint}",
            o.call.tool
        ));
    }
    if !crate::flow::values_at_any(o.call.arguments(), key).is_empty() {
        return None;
    }
    let mut pointers = Vec::new();
    crate::flow::pointers_of(o.call.arguments(), String::new(), &mut pointers);
    let hint = crate::finding::did_you_mean(key, pointers.iter().map(String::as_str));
    Some(format!(
        "`match:` key `{key}` points at no value of the step's arguments{hint}"
    ))
}

/// How a trial ends given whether its evaluation agrees with its label and its `xfail`: an
/// expected failure is reported, not gating; an unexpected pass fails (strict xfail).
fn status(agrees: Result<(), String>, xfail: Option<&str>) -> (Status, Option<String>) {
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

/// A transcript's trial result.
#[derive(Clone, Debug)]
pub struct CheckResult {
    /// What the engines established.
    pub evaluation: Evaluation,
    /// `Ok` when the evaluation agrees with the label (`evaluation.label`); `Err` holds the
    /// full explanation.
    pub agrees: Result<(), String>,
    /// The transcript's file.
    pub path: PathBuf,
    /// The expected-vs-actual call diff, for transcripts that fail or disagree with their label.
    pub diff: Option<String>,
}

impl CheckResult {
    /// The trial's record for the run report: its status and message, and the transcript's.
    pub fn record(&self, id: &TrialId) -> TrialRecord {
        let label = &self.evaluation.label;
        let (status, message) = status(self.agrees.clone(), label.xfail.as_deref());
        let mut r = TrialRecord::new(id, status, message);
        r.transcript = Some(TranscriptRecord::new(
            &self.path,
            &self.evaluation,
            label,
            self.diff.clone(),
        ));
        r
    }
}

/// Loads a transcript of the suite: YAML, or a recorded run in another format (`*.json`,
/// `*.jsonl`; [`crate::ingest::load`], its scenario from its label file or its first prompt).
pub fn load_transcript(suite: &Suite, path: &Path) -> Result<Transcript, SourceError> {
    if crate::ingest::is_recorded(path) {
        let id = crate::ingest::run_id(path);
        crate::ingest::load(path, id, Some(&suite.harness))
    } else {
        Transcript::load(path)
    }
}

/// Loads and evaluates one transcript of a loaded suite.
pub fn check_loaded(suite: &Suite, path: &Path) -> Result<CheckResult, SourceError> {
    let t = load_transcript(suite, path)?;
    check_transcript(suite, evaluate(suite, &t)?, &t, path)
}

/// The result of `ev`, the evaluation of transcript `t` of a loaded suite, read from `path`.
fn check_transcript(
    suite: &Suite,
    ev: Evaluation,
    t: &Transcript,
    path: &Path,
) -> Result<CheckResult, SourceError> {
    let scenario = suite.scenario_of(t);
    let agrees = ev
        .agrees_with_label()
        .map_err(|why| render::failure(&ev, &why.to_string(), t, scenario, &suite.harness.source));
    let diff = match scenario {
        Some(sc) if agrees.is_err() || ev.verdict == Verdict::Fail => {
            Some(render::call_diff(t, sc))
        }
        _ => None,
    };
    Ok(CheckResult {
        evaluation: ev,
        agrees,
        path: path.to_path_buf(),
        diff,
    })
}

/// A judge trial: the deterministic evaluation, then the judge; passes when the combined
/// verdict agrees with the label.
fn judged(
    id: &TrialId,
    lazy: &LazySuite,
    path: &Path,
    judge: &dyn Judge,
) -> Result<TrialRecord, String> {
    let suite = lazy.get().map_err(|e| e.render())?;
    let t = load_transcript(&suite, path).map_err(|e| e.render())?;
    let ev = evaluate(&suite, &t).map_err(|e| e.render())?;
    let j = judge.judge(&suite, &t, &ev).map_err(|e| e.to_string())?;
    let want = t.label.expect.unwrap_or(Expect::Pass);
    let agrees = matches!(
        (want, j.verdict),
        (Expect::Pass, Verdict::Pass) | (Expect::Fail, Verdict::Fail)
    );
    let agrees = if agrees {
        Ok(())
    } else {
        Err(format!(
            "expected {want:?}, the combined verdict is {:?}\n{}",
            j.verdict,
            j.summary(ev.errors(), suite.harness.thresholds.pass)
        ))
    };
    let (status, message) = status(agrees, t.label.xfail.as_deref());
    let mut r = TrialRecord::new(id, status, message);
    r.transcript = Some(TranscriptRecord::new(path, &ev, &t.label, None));
    r.judge = Some(j);
    Ok(r)
}
