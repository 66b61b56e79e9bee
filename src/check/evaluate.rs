//! Evaluating one transcript: the engines in order (lint, flow, oracle), then the verdict and
//! what the transcript's label expected of it. The main type is [`Evaluation`], made by
//! [`evaluate`]; [`verdict`] and [`quick_verdict`] give the verdict alone.

use serde::Serialize;

use super::fast::Outcome;
use super::suite::Suite;
use crate::finding::did_you_mean;
use crate::finding::{Finding, Severity};
use crate::flow;
use crate::harness::{Call, Expect, Label, Scenario, Transcript};
pub use crate::score::Verdict;
use crate::score::{Score, oracle, own};
use crate::source::SourceError;
use crate::trajectory::{self, Trajectory};

/// Everything the engines established about one transcript.
#[derive(Clone, Debug, Serialize)]
pub struct Evaluation {
    /// The suite's name.
    pub suite: String,
    /// The transcript's id: its file's stem (`sub/x.yaml` → `x`; the trial name has the path).
    pub transcript: String,
    /// The scenario it answers, when it names one.
    pub scenario: Option<String>,
    /// Pass or fail ([`crate::score::verdict`]).
    pub verdict: Verdict,
    /// The oracle's score, when the transcript answers a scenario.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub score: Option<Score>,
    /// The score of each of the scenario's turns, in order.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub turn_scores: Vec<Score>,
    /// The ADK / Vertex AI trajectory metrics ([`crate::trajectory`]), when the transcript
    /// answers a scenario: reported beside the score, never part of the verdict.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub trajectory: Option<Trajectory>,
    /// The suite's pass threshold on TC.
    pub pass_threshold: f64,
    /// Every engine's findings, sorted by call, errors first.
    pub findings: Vec<Finding>,
    /// The transcript's label, for [`Evaluation::agrees_with_label`].
    #[serde(skip)]
    pub label: Label,
    /// The trace the transcript was read from, if it came from one.
    pub trace: Option<crate::harness::TraceLink>,
}

impl Evaluation {
    /// How many findings are errors.
    pub fn errors(&self) -> usize {
        self.findings
            .iter()
            .filter(|f| f.severity == Severity::Error)
            .count()
    }

    /// How many findings are warnings.
    pub fn warnings(&self) -> usize {
        self.findings
            .iter()
            .filter(|f| f.severity == Severity::Warning)
            .count()
    }

    /// Why the verdict is Fail, in words.
    pub fn why_failed(&self) -> String {
        let errors = self.errors();
        match (&self.score, errors) {
            (_, e) if e > 0 => format!(
                "expected to pass, but it fails with {e} error{}",
                if e == 1 { "" } else { "s" }
            ),
            (Some(s), _) => format!(
                "expected to pass, but TC {:.3} is below the pass threshold {:.3}",
                s.tc, self.pass_threshold
            ),
            (None, _) => "expected to pass".to_owned(),
        }
    }

    /// The label's faults no finding answers to.
    pub fn missed_faults(&self) -> Vec<&str> {
        self.label
            .faults
            .iter()
            .filter(|fault| !self.findings.iter().any(|f| f.matches_fault(fault)))
            .map(String::as_str)
            .collect()
    }

    /// Whether the evaluation agrees with the label; `Err` says how it does not.
    pub fn agrees_with_label(&self) -> Result<(), Disagreement> {
        match self.label.expect.unwrap_or(Expect::Pass) {
            Expect::Pass if self.verdict == Verdict::Pass => Ok(()),
            Expect::Pass => Err(Disagreement::Fails(self.why_failed())),
            Expect::Fail => {
                let missed = self.missed_faults();
                match (self.verdict, missed.is_empty()) {
                    (Verdict::Fail, true) => Ok(()),
                    (Verdict::Pass, _) => Err(Disagreement::Passes {
                        faults: self.label.faults.clone(),
                    }),
                    (Verdict::Fail, false) => Err(Disagreement::MissedFaults {
                        missed: missed.into_iter().map(str::to_owned).collect(),
                    }),
                }
            }
        }
    }
}

/// How an evaluation disagrees with its transcript's label.
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum Disagreement {
    /// Labelled correct (or unlabelled), but it fails; why, in words.
    Fails(String),
    /// Labelled broken, but it passes; the faults the label names.
    Passes {
        /// The label's `faults`.
        faults: Vec<String>,
    },
    /// Labelled broken and it fails, but no finding names these faults.
    MissedFaults {
        /// The label's faults no finding answers to.
        missed: Vec<String>,
    },
}

impl std::fmt::Display for Disagreement {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Disagreement::Fails(why) => f.write_str(why),
            Disagreement::Passes { faults } => write!(
                f,
                "expected to fail{}, but no engine found an error and TC is above the pass threshold",
                if faults.is_empty() {
                    String::new()
                } else {
                    format!(" with {}", faults.join(", "))
                }
            ),
            Disagreement::MissedFaults { missed } => write!(
                f,
                "fails as expected, but no finding names {} (the fault a correct evaluator must detect)",
                missed.join(", ")
            ),
        }
    }
}

impl std::error::Error for Disagreement {}

/// The scenario a transcript answers (with its index in the harness), checked against the
/// harness.
pub fn scenario_of<'s>(
    suite: &'s Suite,
    t: &Transcript,
) -> Result<Option<(usize, &'s Scenario)>, SourceError> {
    let Some(id) = &t.scenario else {
        return Ok(None);
    };
    let at = t
        .scenario_location
        .as_ref()
        .map_or((1, 1), |l| (l.line, l.column));
    let Some((index, sc)) = suite.scenario(id) else {
        let hint = did_you_mean(id, suite.harness.scenarios.iter().map(|s| s.id.as_str()));
        return Err(t.source.error_at(
            at.0,
            at.1,
            format!(
                "unknown scenario `{id}` in {}{hint}",
                suite.harness.path.display()
            ),
        ));
    };
    if t.turns.len() > sc.turns.len() {
        return Err(t.source.error_at(
            at.0,
            at.1,
            format!(
                "the transcript has {} turns but scenario `{id}` has {}",
                t.turns.len(),
                sc.turns.len()
            ),
        ));
    }
    Ok(Some((index, sc)))
}

/// The verdict alone, without the findings and score that explain it: what a merge gate or an
/// agent loop's guard needs. Equal to `evaluate(suite, t)?.verdict`; [`quick_verdict`] decides
/// most transcripts, the engines the rest.
pub fn verdict(suite: &Suite, t: &Transcript) -> Result<Verdict, SourceError> {
    let index = scenario_index(suite, t)?;
    // Under a trajectory gate, which calls are their steps' own at their places: what the
    // gate's literal metrics know without comparing, and the evaluation's shortcut then.
    let mut at_place = None;
    if let Some(index) = index
        && suite.harness.thresholds.trajectory.is_some()
    {
        let sc = &suite.harness.scenarios[index];
        at_place = own::at_place(sc, t);
        // Every call its step's own at its place: the evaluation's shortcut (the reference
        // run's, whose literal metrics these calls share), which asks the fast path only
        // where the outputs are not the steps' mock ones (a perfect outcome decides nothing
        // under a gate).
        if at_place.as_ref().is_some_and(|a| !a.contains(&false)) {
            return Ok(evaluate_knowing(suite, t, None, at_place)?.verdict);
        }
        if literally_below_gate(suite, index, t, at_place.as_deref()) {
            return Ok(Verdict::Fail);
        }
    }
    // What the calls say, asked once: the evaluation that decides what they cannot takes it
    // along (its shortcut asks the same).
    let outcome = fast_outcome(suite, index, t);
    match outcome.and_then(|o| decided(suite, o)) {
        Some(v) => Ok(v),
        None => Ok(evaluate_knowing(suite, t, outcome, at_place)?.verdict),
    }
}

/// The verdict when the calls alone decide it, without the engines: a transcript whose calls
/// are exactly an accepted form of its workflow passes; one with an argument its tool does not
/// declare fails; under a pass threshold of 1 (BFCL's exact match), one whose calls cannot
/// pair with the workflow's steps fails. `None` when only the engines can tell. A fraction of
/// [`evaluate`]'s cost: matchers compiled per suite, no finding worded.
pub fn quick_verdict(suite: &Suite, t: &Transcript) -> Result<Option<Verdict>, SourceError> {
    Ok(fast_outcome(suite, scenario_index(suite, t)?, t).and_then(|o| decided(suite, o)))
}

/// Whether the suite's trajectory gate fails `t`, the answer to scenario `index`, with an
/// error: a failing verdict whatever else the engines find (a gate only adds a failure). The
/// literal metrics alone, from the calls (the engines' own, which a policy match or a finding
/// does not change), each call that is its step's own at its place (`at_place`,
/// [`own::at_place`]) known to match without comparing: a long run with a wrong argument
/// fails an `in_order` gate at the cost of a walk of its calls, not every engine's.
fn literally_below_gate(
    suite: &Suite,
    index: usize,
    t: &Transcript,
    at_place: Option<&[bool]>,
) -> bool {
    if suite.harness.thresholds.trajectory.is_none() {
        return false;
    }
    let sc = &suite.harness.scenarios[index];
    let flat: Vec<&Call> = t.calls().map(|(_, c)| c).collect();
    let literal = trajectory::literal(
        sc,
        &oracle::per_turn(&flat, t, sc.turns.len()),
        suite.own_calls(index).zip(at_place),
    );
    gate_on(suite, &literal).is_some_and(|mut f| {
        suite_severity(suite, &mut f);
        f.severity == Severity::Error
    })
}

/// What the fast path says of `t`'s calls, where `t` answers scenario `index`.
fn fast_outcome(suite: &Suite, index: Option<usize>, t: &Transcript) -> Option<Outcome> {
    index.map(|index| suite.fast().outcome(&suite.linter, index, t))
}

/// The verdict the fast path's `outcome` decides, under the suite's thresholds.
fn decided(suite: &Suite, outcome: Outcome) -> Option<Verdict> {
    // A trajectory gate compares literally, which the fast path's policy matching does not:
    // a perfect transcript may still fall below it (a gate only ever adds a failure, so a
    // failing one still fails).
    let gated = suite.harness.thresholds.trajectory.is_some();
    match outcome {
        Outcome::Perfect if gated => None,
        Outcome::Perfect => Some(crate::score::verdict(
            Some(1.0),
            false,
            suite.harness.thresholds.pass,
        )),
        // TC is then below 1 by at least 1 / (24 × arguments × turns), far more than the
        // 1e-9 margin, so below a threshold of 1.
        Outcome::Imperfect if suite.harness.thresholds.pass >= 1.0 => Some(Verdict::Fail),
        // A call with an argument its tool does not declare: an error finding.
        Outcome::Rejected => Some(Verdict::Fail),
        _ => None,
    }
}

/// [`scenario_of`]'s index, through the fast path's compact lookup when it finds the id (the
/// shortcut is the fast path's alone; [`evaluate`] looks ids up in the suite's plain index).
fn scenario_index(suite: &Suite, t: &Transcript) -> Result<Option<usize>, SourceError> {
    if let Some(i) = t
        .scenario
        .as_deref()
        .and_then(|id| suite.fast().find(id, t.turns.len()))
    {
        return Ok(Some(i));
    }
    Ok(scenario_of(suite, t)?.map(|(i, _)| i))
}

/// The severity the suite sets for the finding's code (`severity:`), over the engine's.
fn suite_severity(suite: &Suite, f: &mut Finding) {
    if let Some(s) = suite.harness.severity.get(&f.code) {
        f.severity = *s;
    }
}

/// The suite's trajectory gate (`thresholds.trajectory`): a finding when the transcript's
/// trajectory match of the gate's kind is below its minimum.
fn trajectory_gate(suite: &Suite, trajectory: Option<&Trajectory>) -> Option<Finding> {
    gate_on(suite, &trajectory?.literal)
}

/// [`trajectory_gate`] on the trajectory's literal metrics `m` (the turns' mean).
fn gate_on(suite: &Suite, m: &trajectory::Metrics) -> Option<Finding> {
    let gate = suite.harness.thresholds.trajectory?;
    let value = match gate.kind {
        crate::harness::TrajectoryMatch::Exact => m.exact_match,
        crate::harness::TrajectoryMatch::InOrder => m.in_order_match,
        crate::harness::TrajectoryMatch::AnyOrder => m.any_order_match,
    };
    (value < gate.min).then(|| {
        Finding::new(
            crate::finding::Code::TrajectoryBelow,
            "",
            below_gate(gate.kind.name(), value, gate.min),
        )
    })
}

/// A metric in [0, 1] to three decimal places as `{:.3}` writes it, without the float
/// formatter: its thousandths rounded to the nearest. `None` within a millionth of a tie
/// (where the formatter's exact rounding decides) or outside [0, 1] (and for −0, which it
/// writes with its sign).
fn three_places(v: f64) -> Option<String> {
    if !(0.0..=1.0).contains(&v) || v.is_sign_negative() {
        return None;
    }
    // v × 1000 is off by far less than a millionth: only a near tie can round otherwise.
    let scaled = v * 1000.0;
    let (whole, frac) = (scaled.floor(), scaled - scaled.floor());
    if (frac - 0.5).abs() < 1e-6 {
        return None;
    }
    let n = (whole as u32) + u32::from(frac > 0.5);
    let digit = |d: u32| char::from(b'0' + (d % 10) as u8);
    Some(
        [
            digit(n / 1000),
            '.',
            digit(n / 100),
            digit(n / 10),
            digit(n),
        ]
        .iter()
        .collect(),
    )
}

/// The trajectory gate's words: the match's `value` below the suite's `min`, as `{:.3}` and
/// `{}` print them; the usual figures (a metric in [0, 1], a minimum of 1) without the float
/// formatter (a fortieth of a short run's evaluation).
fn below_gate(kind: &str, value: f64, min: f64) -> String {
    use std::borrow::Cow;
    let shown: Cow<str> = match three_places(value) {
        Some(s) => s.into(),
        None => format!("{value:.3}").into(),
    };
    let min: Cow<str> = if min == 1.0 {
        "1".into()
    } else {
        min.to_string().into()
    };
    [
        "the trajectory's ",
        kind,
        " match is ",
        &shown,
        ", below the suite's minimum ",
        &min,
        " (thresholds.trajectory)",
    ]
    .concat()
}

/// Evaluates a transcript: lint each call, then flow across the calls, then the oracle
/// against the scenario's workflow. The verdict is [`crate::score::verdict`]: Fail on any
/// error finding, or when the oracle's TC is below the suite's pass threshold.
///
/// A transcript whose calls are, turn by turn, exactly its scenario's workflow — the common
/// case in a suite that passes — and which the fast path finds perfect gets the evaluation
/// of the scenario's reference run ([`Reference`]), made by the engines once per suite load;
/// everything else goes through every engine ([`evaluate_with_engines`], which the tests hold
/// this equal to). For the verdict alone, [`verdict`] is a fraction of the cost.
pub fn evaluate(suite: &Suite, t: &Transcript) -> Result<Evaluation, SourceError> {
    evaluate_knowing(suite, t, None, None)
}

/// [`evaluate`], `known` the fast path's outcome for `t` and `compared` which calls are their
/// steps' own at their places ([`own::at_place`]), where they were asked already.
fn evaluate_knowing(
    suite: &Suite,
    t: &Transcript,
    known: Option<Outcome>,
    compared: Option<own::AtPlace>,
) -> Result<Evaluation, SourceError> {
    // The scenario, found once for the shortcut and the engines.
    let found = scenario_of(suite, t)?;
    // Which calls are their steps' own at their places, as the shortcut compared them: the
    // engines' own calls need not compare them again.
    let mut at_place = compared.unwrap_or_default();
    match found.and_then(|found| as_reference(suite, found, t, known, &mut at_place)) {
        Some(ev) => Ok(ev),
        None => Ok(engines(suite, found, t, OwnResults::Known(&at_place))),
    }
}

/// The engines' evaluation of a scenario's reference run: its workflow's calls, each step
/// once in order, with the steps' mock outputs and the scenario's prompts. Made at the first
/// transcript that repeats those calls exactly ([`evaluate`]), and kept only when the engines
/// find nothing in it. A transcript with those calls is evaluated alike — the same score, turn
/// scores and trajectory, no finding — when either
///
/// - the engines would see the very same run: no prompt of its own but the scenario's
///   (the same text), and every recorded output its step's mock output (the engines read
///   nothing else of a transcript but its calls' locations, which only findings carry); or
/// - the reference run is perfect (every sub-dimension 1) and the fast path finds the
///   transcript perfect too: its outputs refuse nothing, its prompts ground what the
///   scenario's do, … — what `Perfect` promises, held by `tests/fast_path.rs` on every
///   shipped transcript and thousands of mutations.
#[derive(Debug)]
pub(crate) struct Reference {
    verdict: Verdict,
    score: Score,
    turn_scores: Vec<Score>,
    trajectory: Trajectory,
    pass_threshold: f64,
    /// Every sub-dimension 1.
    perfect: bool,
}

impl Reference {
    fn of(suite: &Suite, sc: &Scenario) -> Option<Self> {
        let run = reference_run(sc);
        let ev = evaluate_with_engines(suite, &run).ok()?;
        if !ev.findings.is_empty() {
            return None;
        }
        let score = ev.score?;
        let perfect = score.sub.values().all(|v| v == 1.0);
        Some(Self {
            verdict: ev.verdict,
            perfect,
            score,
            turn_scores: ev.turn_scores,
            trajectory: ev.trajectory?,
            pass_threshold: ev.pass_threshold,
        })
    }
}

/// A scenario's workflow as a transcript: each step's call once, in order, without outputs
/// (each then gets its step's mock output) or prompts of its own.
fn reference_run(sc: &Scenario) -> Transcript {
    Transcript {
        id: format!("{}-reference", sc.id),
        path: std::path::PathBuf::new(),
        scenario: Some(sc.id.clone()),
        scenario_location: None,
        prompt: None,
        agent: None,
        note: None,
        label: Label::default(),
        turns: sc
            .turns
            .iter()
            .map(|st| crate::harness::TranscriptTurn {
                prompt: None,
                calls: st.workflow.iter().map(|o| o.call.clone()).collect(),
                reply: None,
            })
            .collect(),
        trace: None,
        source: crate::source::SourceFile::from_text("", ""),
    }
}

/// [`evaluate`]'s shortcut: the reference run's evaluation ([`Reference`]), for a transcript
/// of scenario `sc` (number `index`, as [`scenario_of`] found it) with as many calls in each
/// turn as its workflow has steps. Its calls the workflow's, step for step (same tool,
/// arguments equal as JSON values): the reference run's evaluation. Calls that differ but
/// that the fast path finds perfect, where the reference run is perfect (every value its
/// step's policies accept, not the workflow's own: a BFCL answer among several allowed): the
/// same score and turn scores and the same trajectory under the policies (every metric 1),
/// the literal trajectory worked out from its calls, and the suite's trajectory gate on it.
/// `None`: the engines decide. Costs a comparison per call, and the fast path's walk when the
/// outputs are not the mock ones or a call differs.
///
/// `at_place` gets, per call, whether it is its step's own call ([`own::at_place`]), where the
/// transcript has the shape to be compared (kept where it holds them already: the verdict
/// under a trajectory gate compares them first). `known`: the fast path's outcome for `t`,
/// where it was asked already (the verdict asks it first).
pub(super) fn as_reference(
    suite: &Suite,
    (index, sc): (usize, &Scenario),
    t: &Transcript,
    known: Option<Outcome>,
    at_place: &mut own::AtPlace,
) -> Option<Evaluation> {
    if at_place.is_empty() {
        *at_place = own::at_place(sc, t)?;
    }
    let same_calls = at_place.iter().all(|&own| own);
    let mut same_run = true;
    for (st, tt) in sc.turns.iter().zip(&t.turns) {
        for (c, o) in tt.calls.iter().zip(&st.workflow) {
            same_run &= c.output.is_none() || c.output == o.mock_output;
        }
        // A prompt of its own is the scenario's when it says the same (what the engines read
        // is the text: `flow::prompt_of`).
        same_run &= tt.prompt.as_ref().is_none_or(|p| *p == st.prompt);
    }
    let r = suite.references[index]
        .get_or_init(|| Reference::of(suite, sc))
        .as_ref()?;
    let same = if same_calls {
        // Every call its step's own at its place: the fast path's walk need not compare their
        // arguments again (perfect in order is perfect: the outcome of any pairing).
        same_run
            || (r.perfect
                && known.map_or_else(
                    || {
                        suite
                            .fast()
                            .perfect_in_order(&suite.linter, index, t, at_place)
                    },
                    |o| o == Outcome::Perfect,
                ))
    } else {
        // Perfect with the calls the steps in order: every step matched by the call at its
        // place, so the trajectory under the policies is the reference run's (every metric 1).
        // (Never where any pairing is imperfect: a known outcome other than perfect says no.)
        r.perfect
            && known.is_none_or(|o| o == Outcome::Perfect)
            && suite
                .fast()
                .perfect_in_order(&suite.linter, index, t, at_place)
    };
    if !same {
        return None;
    }
    let evaluation = |verdict, trajectory, findings| Evaluation {
        suite: suite.harness.suite.clone(),
        transcript: t.id.clone(),
        scenario: Some(sc.id.clone()),
        verdict,
        score: Some(r.score.clone()),
        turn_scores: r.turn_scores.clone(),
        trajectory: Some(trajectory),
        pass_threshold: r.pass_threshold,
        findings,
        label: t.label.clone(),
        trace: t.trace.clone(),
    };
    if same_calls {
        return Some(evaluation(r.verdict, r.trajectory.clone(), Vec::new()));
    }
    let flat: Vec<&Call> = t.calls().map(|(_, c)| c).collect();
    let turn_calls = oracle::per_turn(&flat, t, sc.turns.len());
    let policy: Vec<_> = r.trajectory.turns.iter().map(|tt| tt.policy).collect();
    let trajectory = trajectory::with_policy(sc, &turn_calls, &policy);
    let findings: Vec<Finding> = trajectory_gate(suite, Some(&trajectory))
        .map(|mut f| {
            suite_severity(suite, &mut f);
            f
        })
        .into_iter()
        .collect();
    let errors = findings.iter().any(|f| f.severity == Severity::Error);
    let verdict = crate::score::verdict(Some(r.score.tc), errors, r.pass_threshold);
    Some(evaluation(verdict, trajectory, findings))
}

/// Runs every engine over a transcript, never [`evaluate`]'s shortcut: the reference the
/// shortcut and the fast path are tested against.
pub fn evaluate_with_engines(suite: &Suite, t: &Transcript) -> Result<Evaluation, SourceError> {
    Ok(engines(
        suite,
        scenario_of(suite, t)?,
        t,
        OwnResults::Compared,
    ))
}

/// [`evaluate_with_engines`] working out every call afresh, a step's own call too: what the
/// own calls' results (`crate::score::own`) are tested against, and [`evaluate`] of a
/// transcript its process grades alone (a trial nextest runs in a process of its own). What
/// [`evaluate`] reuses across transcripts — the scenario's reference run, the steps' own
/// calls' results, the fast path's plan of every scenario of the suite — is made from the
/// whole scenario or suite at its first use, more work than one transcript's calls.
#[doc(hidden)]
pub fn evaluate_every_call(suite: &Suite, t: &Transcript) -> Result<Evaluation, SourceError> {
    Ok(engines(
        suite,
        scenario_of(suite, t)?,
        t,
        OwnResults::Afresh,
    ))
}

/// Whether [`engines`] takes a call equal to its step's own call from the results worked out
/// once per scenario ([`own::OwnCalls`]).
#[derive(Clone, Copy)]
enum OwnResults<'a> {
    /// No: every call worked out afresh.
    Afresh,
    /// Yes, each call compared with the steps' own calls here.
    Compared,
    /// Yes, with which calls are the own calls of the steps at their places known already
    /// ([`own::at_place`]).
    Known(&'a [bool]),
}

/// Every engine over `t`, the answer to `found` (as [`scenario_of`] found it), taking the
/// steps' own calls' results as `own_results` says: lint, flow, then the score and the
/// trajectory metrics from one pairing, each phase's findings handed to the next.
fn engines(
    suite: &Suite,
    found: Option<(usize, &Scenario)>,
    t: &Transcript,
    own_results: OwnResults,
) -> Evaluation {
    let scenario = found.map(|(_, sc)| sc);
    // Which calls are their steps' own, whose findings are worked out once per scenario.
    let own = match (found, own_results) {
        (None, _) | (_, OwnResults::Afresh) => own::Own::none(),
        (Some((index, sc)), OwnResults::Compared) => own::align(sc, t, suite.own_calls(index), &[]),
        (Some((index, sc)), OwnResults::Known(at_place)) => {
            own::align(sc, t, suite.own_calls(index), at_place)
        }
    };
    let calls: Vec<(usize, &Call)> = t.calls().collect();
    let (mut findings, lint_failed) = lint_calls(suite, &own, &calls);
    let own_flows = own.flows(t);
    let mut flow = flow::analyze_with(
        t,
        &calls,
        scenario,
        &suite.linter,
        &lint_failed,
        &own_flows,
        // (A lone call repeats nothing: nothing to ask.)
        calls.len() > 1 && own.apart(t),
    );
    // The flow's findings join the transcript's (the later engines read them there).
    findings.extend(std::mem::take(&mut flow.findings).into_iter().map(|mut f| {
        suite_severity(suite, &mut f);
        f
    }));
    let (score, turn_scores, trajectory) = match scenario {
        Some(sc) => {
            let (score, turns, trajectory) =
                score_and_trajectory(suite, sc, t, &calls, &own, &flow, &mut findings);
            (Some(score), turns, Some(trajectory))
        }
        None => (None, Vec::new(), None),
    };
    // The trajectory gate: after the score, which it does not change.
    findings.extend(trajectory_gate(suite, trajectory.as_ref()));
    place_and_order(suite, &calls, &mut findings);
    let pass = scenario
        .and_then(|s| s.pass)
        .unwrap_or(suite.harness.thresholds.pass);
    let errors = findings.iter().any(|f| f.severity == Severity::Error);
    let verdict = crate::score::verdict(score.as_ref().map(|s| s.tc), errors, pass);
    Evaluation {
        suite: suite.harness.suite.clone(),
        transcript: t.id.clone(),
        scenario: scenario.map(|s| s.id.clone()),
        verdict,
        score,
        turn_scores,
        trajectory,
        pass_threshold: pass,
        findings,
        label: t.label.clone(),
        trace: t.trace.clone(),
    }
}

/// The linter's findings of every call (each numbered with its call, at the suite's
/// severity), and per call whether one of them is an error. A step's own call takes what was
/// found of it once per scenario.
fn lint_calls(
    suite: &Suite,
    own: &own::Own,
    calls: &[(usize, &Call)],
) -> (Vec<Finding>, smallvec::SmallVec<[bool; 16]>) {
    let mut findings = Vec::new();
    let mut lint_failed = smallvec::SmallVec::with_capacity(calls.len());
    for (index, &(turn, call)) in calls.iter().enumerate() {
        let mut found = match own.step_of(index, turn) {
            // A step's own call that lints clean, the usual call of a long run: nothing to add.
            Some(s) if s.lint.is_empty() => {
                lint_failed.push(false);
                continue;
            }
            Some(s) => s.lint.clone(),
            None => suite.linter.lint(&call.tool, call.arguments()),
        };
        found.iter_mut().for_each(|f| suite_severity(suite, f));
        lint_failed.push(found.iter().any(|f| f.severity == Severity::Error));
        for mut f in found {
            f.call = Some(index);
            findings.push(f);
        }
    }
    (findings, lint_failed)
}

/// The oracle's score (the whole run's and each turn's) and the trajectory metrics of `t`
/// against scenario `sc`, from one pairing of steps with calls per turn; the oracle's
/// findings join `findings` (which the score reads: the lint's and the flow's).
fn score_and_trajectory(
    suite: &Suite,
    sc: &Scenario,
    t: &Transcript,
    calls: &[(usize, &Call)],
    own: &own::Own,
    flow: &flow::Flow,
    findings: &mut Vec<Finding>,
) -> (Score, Vec<Score>, Trajectory) {
    let flat: Vec<&Call> = calls.iter().map(|&(_, c)| c).collect();
    let turn_calls = oracle::per_turn(&flat, t, sc.turns.len());
    let facts = oracle::facts(sc, &turn_calls, own, &suite.linter, flow, findings);
    let (score, turns, oracle_findings) = oracle::score_facts(&facts, sc, &suite.harness.severity);
    let trajectory = trajectory::of_facts(&facts, sc);
    drop(facts);
    findings.extend(oracle_findings);
    (score, turns, trajectory)
}

/// Each finding about a call located in its file (where its engine did not), at the suite's
/// severity, and in the report's order: by call, errors first.
fn place_and_order(suite: &Suite, calls: &[(usize, &Call)], findings: &mut [Finding]) {
    for f in findings.iter_mut() {
        if let (Some(i), None) = (f.call, &f.location) {
            f.location = calls.get(i).map(|(_, c)| c.location_for(f));
        }
        suite_severity(suite, f);
    }
    findings.sort_by_key(|f| (f.call.unwrap_or(usize::MAX), std::cmp::Reverse(f.severity)));
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::Value;

    /// The gate's words are the formatter's, for the figures worded without it and others.
    #[test]
    fn the_gate_words_its_figures_as_the_formatter_does() {
        // Every thousandth, the ties between them and either side of each, thirds, sixths.
        let mut values = vec![0.0, -0.0, 0.5, 1.0 / 3.0, 0.9995, 2.0 / 3.0, 5.0 / 6.0, 1.0];
        for k in 0..=1000 {
            let v = f64::from(k) / 1000.0;
            let tie = (f64::from(k) + 0.5) / 1000.0;
            values.extend([v, tie, v + 1e-12, v - 1e-12, tie + 4e-10, tie - 4e-10]);
        }
        let values: Vec<f64> = values
            .into_iter()
            .filter(|v| (-0.0..=1.0).contains(v))
            .collect();
        let worded = values.iter().filter_map(|&v| three_places(v)).count();
        assert!(
            worded > 3000,
            "{worded} of {} without the formatter",
            values.len()
        );
        for value in values {
            assert_eq!(
                three_places(value).unwrap_or_else(|| format!("{value:.3}")),
                format!("{value:.3}"),
                "{value:e}"
            );
        }
        for value in [0.0, -0.0, 0.5, 1.0 / 3.0, 0.9995] {
            for min in [1.0, 0.5, 0.75, 0.1 + 0.2] {
                assert_eq!(
                    below_gate("in_order", value, min),
                    format!(
                        "the trajectory's in_order match is {value:.3}, below the suite's minimum {min} (thresholds.trajectory)"
                    ),
                );
            }
        }
    }

    /// Every shipped scenario's workflow as a transcript, step for step.
    fn reference_runs() -> Vec<(Suite, Vec<Transcript>)> {
        let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("harnesses");
        let mut out = Vec::new();
        for entry in std::fs::read_dir(dir).unwrap() {
            let path = entry.unwrap().path();
            if path.extension().is_none_or(|e| e != "yaml") {
                continue;
            }
            let Ok(suite) = Suite::load(&path) else {
                continue;
            };
            let runs = suite.harness.scenarios.iter().map(reference_run).collect();
            out.push((suite, runs));
        }
        out
    }

    /// `t` with its middle call's first argument set to a value no workflow holds; `None`
    /// where that call has no argument.
    fn middle_value_changed(t: &Transcript) -> Option<Transcript> {
        let mut changed = t.clone();
        let n = changed.calls().count();
        changed
            .turns
            .iter_mut()
            .flat_map(|tt| &mut tt.calls)
            .nth(n / 2)?
            .edit_arguments(|args| {
                *args.values_mut().next()? = serde_json::json!("a value no workflow holds");
                Some(())
            })?;
        Some(changed)
    }

    /// The literal metrics worked out alone, at-place own calls known without comparing, are
    /// the engines' literal trajectory, and a gate below them fails the verdict where the
    /// engines' gate finding does: every shipped scenario's reference run, and it with one
    /// call's argument changed, under a gate of each kind.
    #[test]
    fn the_literal_metrics_alone_are_the_engines() {
        let (mut compared, mut below) = (0, 0);
        // Every scenario, and its first turn's steps repeated to a long turn (33 steps or
        // more: more pairs than a turn keeps in one table, so the hashes rule pairs out).
        let mut suites = reference_runs();
        let long: Vec<_> = suites
            .iter()
            .map(|(suite, _)| {
                let mut h = suite.harness.clone();
                h.scenarios.retain(|sc| {
                    sc.turns.first().is_some_and(|t| {
                        !t.workflow.is_empty() && t.workflow.iter().all(|o| !o.optional)
                    })
                });
                for sc in &mut h.scenarios {
                    sc.turns.truncate(1);
                    let steps = sc.turns[0].workflow.clone();
                    // Each copy its own: a first string argument numbered (no two steps
                    // alike, where the steps have one).
                    for copy in 1.. {
                        if sc.turns[0].workflow.len() >= 33 {
                            break;
                        }
                        sc.turns[0]
                            .workflow
                            .extend(steps.iter().cloned().map(|mut o| {
                                o.call.edit_arguments(|m| {
                                    if let Some(Value::String(s)) = m.values_mut().next() {
                                        s.push_str(&format!(" {copy}"));
                                    }
                                });
                                o
                            }));
                    }
                }
                let suite = Suite::from_harness(h).unwrap();
                let runs = suite.harness.scenarios.iter().map(reference_run).collect();
                (suite, runs)
            })
            .collect();
        suites.extend(long);
        for (suite, runs) in suites {
            for t in runs {
                let other = middle_value_changed(&t).unwrap_or_else(|| t.clone());
                // And the middle call swapped with the one after it: each another step's.
                let mut swapped = t.clone();
                if let Some(tt) = swapped.turns.iter_mut().find(|tt| tt.calls.len() >= 2) {
                    let k = tt.calls.len() / 2;
                    tt.calls.swap(k - 1, k);
                }
                for t in [t, other, swapped] {
                    let (index, sc) = suite.scenario(t.scenario.as_deref().unwrap()).unwrap();
                    let at_place = own::at_place(sc, &t).unwrap();
                    let flat: Vec<&Call> = t.calls().map(|(_, c)| c).collect();
                    let per_turn = oracle::per_turn(&flat, &t, sc.turns.len());
                    let engines = evaluate_with_engines(&suite, &t).unwrap();
                    let literal = engines.trajectory.unwrap().literal;
                    let own = suite.own_calls(index).unwrap();
                    let alone = trajectory::literal(sc, &per_turn, Some((own, &at_place)));
                    assert_eq!(alone, literal, "{}", t.id);
                    assert_eq!(
                        trajectory::literal(sc, &per_turn, None),
                        literal,
                        "{}",
                        t.id
                    );
                    compared += 1;
                    for kind in [
                        crate::harness::TrajectoryMatch::Exact,
                        crate::harness::TrajectoryMatch::InOrder,
                        crate::harness::TrajectoryMatch::AnyOrder,
                    ] {
                        let mut h = suite.harness.clone();
                        h.thresholds.trajectory =
                            Some(crate::harness::TrajectoryGate { kind, min: 1.0 });
                        let gated = Suite::from_harness(h).unwrap();
                        let engines = evaluate_with_engines(&gated, &t).unwrap();
                        let fails = engines
                            .findings
                            .iter()
                            .any(|f| f.code == crate::finding::Code::TrajectoryBelow);
                        assert_eq!(
                            literally_below_gate(&gated, index, &t, Some(&at_place)),
                            fails,
                            "{}",
                            t.id
                        );
                        below += usize::from(fails);
                        // A gate the suite makes a warning fails nothing.
                        let mut h = gated.harness.clone();
                        h.severity
                            .insert(crate::finding::Code::TrajectoryBelow, Severity::Warning);
                        let warned = Suite::from_harness(h).unwrap();
                        assert!(
                            !literally_below_gate(&warned, index, &t, Some(&at_place)),
                            "{}",
                            t.id
                        );
                    }
                }
            }
        }
        assert!(compared >= 80, "{compared} runs compared");
        assert!(below >= 40, "{below} runs below a gate");
    }

    /// Calls known apart from their steps ([`own::Own::apart`]) repeat nothing: the flow
    /// engine that keeps no index of them finds what the one that indexes every call finds,
    /// on every shipped scenario's reference run and it changed four ways — a value no
    /// workflow holds, a call made twice, a call replaced by a copy of the next one (two
    /// calls then the one step's own), and the first call replaced by a copy of the last
    /// (at no step's place, the same call as a later step's own).
    #[test]
    fn calls_known_apart_repeat_nothing() {
        let (mut apart, mut repeats) = (0, 0);
        for (suite, runs) in reference_runs() {
            for t in runs {
                let mut variants = vec![t.clone()];
                variants.extend(middle_value_changed(&t));
                if let Some(tt) = t.turns.iter().position(|tt| !tt.calls.is_empty()) {
                    let mut twice = t.clone();
                    let k = twice.turns[tt].calls.len() / 2;
                    let again = twice.turns[tt].calls[k].clone();
                    twice.turns[tt].calls.insert(k + 1, again);
                    variants.push(twice);
                }
                if let Some(tt) = t.turns.iter().position(|tt| tt.calls.len() >= 2) {
                    let mut next = t.clone();
                    let k = next.turns[tt].calls.len() / 2 - 1;
                    next.turns[tt].calls[k] = next.turns[tt].calls[k + 1].clone();
                    variants.push(next);
                    // The last call made again by hand, as the first: a call no step has at
                    // its place, the same call as a later step's own.
                    let mut first = t.clone();
                    let last = first.turns[tt].calls.last().cloned().unwrap();
                    first.turns[tt].calls[0] = last;
                    variants.push(first);
                }
                for t in variants {
                    let (index, sc) = suite.scenario(t.scenario.as_deref().unwrap()).unwrap();
                    let own = own::align(sc, &t, suite.own_calls(index), &[]);
                    let calls: Vec<(usize, &Call)> = t.calls().collect();
                    let failed = vec![false; calls.len()];
                    let flows = own.flows(&t);
                    let known = own.apart(&t);
                    let analyze = |apart| {
                        let f = flow::analyze_with(
                            &t,
                            &calls,
                            Some(sc),
                            &suite.linter,
                            &failed,
                            &flows,
                            apart,
                        );
                        (
                            serde_json::to_value(&f.findings).unwrap(),
                            format!("{:?}", f.calls),
                        )
                    };
                    let indexed = analyze(false);
                    assert_eq!(analyze(known), indexed, "{}", t.id);
                    apart += usize::from(known);
                    let repeated = indexed
                        .0
                        .as_array()
                        .unwrap()
                        .iter()
                        .any(|f| f["code"] == "flow.redundant_call");
                    repeats += usize::from(repeated);
                }
            }
        }
        assert!(apart >= 80, "{apart} runs known apart");
        assert!(repeats >= 60, "{repeats} runs with a repeat");
    }

    /// What a step finds of another step's own call, kept per scenario at the first answer
    /// (`own::Cross`), is what it finds afresh: every step against every call — similarity,
    /// match under the policies, literal match — with the steps' own calls known (twice: as
    /// the first to ask, then reading what was kept) and with none known, and the evaluation
    /// with the engines is the one that works every call out. On every shipped scenario's
    /// reference run with each turn's calls reversed, rotated by one, and the middle value
    /// changed then reversed (own calls off their places); on a workflow of one tool whose
    /// steps see each other's calls apart (a policy one step has and the other not); and on
    /// one whose step takes a value from an earlier output (the answer depends on the run).
    #[test]
    fn other_steps_own_calls_are_judged_as_afresh() {
        let alike = |suite: &Suite, t: &Transcript| -> usize {
            let (index, sc) = suite.scenario(t.scenario.as_deref().unwrap()).unwrap();
            let calls: Vec<(usize, &Call)> = t.calls().collect();
            let flat: Vec<&Call> = calls.iter().map(|&(_, c)| c).collect();
            let turn_calls = oracle::per_turn(&flat, t, sc.turns.len());
            let failed = vec![false; calls.len()];
            let flow = flow::analyze_with(t, &calls, Some(sc), &suite.linter, &failed, &[], false);
            let none = own::Own::none();
            let afresh = oracle::facts(sc, &turn_calls, &none, &suite.linter, &flow, &[]);
            let own = own::align(sc, t, suite.own_calls(index), &[]);
            let mut crossed = 0;
            for pass in 0..2 {
                let kept = oracle::facts(sc, &turn_calls, &own, &suite.linter, &flow, &[]);
                for (k, a) in kept.iter().zip(&afresh) {
                    for w in 0..a.workflow.len() {
                        for j in 0..a.calls.len() {
                            let at = format!("{} step {w} call {j}", t.id);
                            assert_eq!(k.similarity(w, j), a.similarity(w, j), "{at}");
                            assert_eq!(k.policy_matches(w, j), a.policy_matches(w, j), "{at}");
                            let (lk, la) = (
                                trajectory::literally(k, w, j),
                                trajectory::literally(a, w, j),
                            );
                            assert_eq!(lk, la, "{at}");
                            crossed += usize::from(
                                pass == 0 && k.own.crossed(j).is_some_and(|(_, v)| v != w),
                            );
                        }
                    }
                }
            }
            let engines = serde_json::to_value(evaluate_with_engines(suite, t).unwrap()).unwrap();
            let every = serde_json::to_value(evaluate_every_call(suite, t).unwrap()).unwrap();
            assert_eq!(engines, every, "{}", t.id);
            crossed
        };
        let shuffled = |t: &Transcript, how: fn(&mut [Call])| {
            let mut t = t.clone();
            t.turns.iter_mut().for_each(|tt| how(&mut tt.calls));
            t
        };
        let mut off_place = 0;
        for (suite, runs) in reference_runs() {
            for t in runs {
                let mut variants = vec![
                    shuffled(&t, <[Call]>::reverse),
                    shuffled(&t, |c| c.rotate_left(1.min(c.len()))),
                ];
                variants.extend(middle_value_changed(&t).map(|c| shuffled(&c, <[Call]>::reverse)));
                for t in variants {
                    off_place += alike(&suite, &t);
                }
            }
        }
        assert!(
            off_place >= 250,
            "{off_place} pairs of a step and another's own call"
        );
        let dir = tempfile::tempdir().unwrap();
        let suite = |name: &str, tools: &str, workflow: &str| {
            std::fs::write(dir.path().join(format!("{name}.json")), tools).unwrap();
            let path = dir.path().join(format!("{name}.yaml"));
            let scenario =
                "scenarios:\n  - id: s\n    turns:\n      - prompt: p\n        workflow:\n";
            std::fs::write(
                &path,
                format!("suite: {name}\ntools: [{name}.json]\n{scenario}{workflow}"),
            )
            .unwrap();
            Suite::load(&path).unwrap()
        };
        let run = |calls: &[&str]| {
            let text = format!("scenario: s\ncalls:\n{}", calls.concat());
            Transcript::from_source(
                crate::source::SourceFile::from_text("t.yaml", text),
                "t".into(),
            )
            .unwrap()
        };
        // Step 1 ignores `b`, step 2 compares it: own call 2 does step 1, own call 1 not step 2.
        let apart = suite(
            "apart",
            r#"[{"name": "t", "inputSchema": {"type": "object", "properties": {"a": {}, "b": {}}}}]"#,
            "          - {tool: t, arguments: {a: 1, b: 1}, match: {b: ignore}}\n          - {tool: t, arguments: {a: 1, b: 2}}\n          - {tool: t, arguments: {a: 3, b: 3}}\n",
        );
        let call = |k: &str| {
            format!(
                "  - {{tool: t, arguments: {{a: {}, b: {k}}}}}\n",
                if k == "3" { 3 } else { 1 }
            )
        };
        for calls in ["2 1 3", "2 2 3", "1 1 3", "3 2 1", "2 3", "1 2 3", "3 1 2"] {
            let calls: Vec<String> = calls.split(' ').map(call).collect();
            let calls: Vec<&str> = calls.iter().map(String::as_str).collect();
            assert!(alike(&apart, &run(&calls)) > 0, "{calls:?}");
        }
        // Step 3 takes its `uri` from an earlier output: whether step 2's own call does step
        // 3 depends on the run (the URI made before it, or after).
        let made = suite(
            "made",
            r#"[{"name": "make", "inputSchema": {"type": "object"}}, {"name": "use", "inputSchema": {"type": "object", "properties": {"uri": {}, "tag": {}}}}]"#,
            "          - {tool: make, arguments: {}, mock_output: {content: [{type: text, text: 'saved gs://b/x1.png'}]}}\n          - {tool: use, arguments: {uri: 'gs://b/x1.png', tag: 2}}\n          - {tool: use, arguments: {uri: 'gs://b/x1.png', tag: 1}, match: {uri: from_output, tag: ignore}}\n",
        );
        let make = "  - {tool: make, arguments: {}, output: {content: [{type: text, text: 'saved gs://b/x1.png'}]}}\n";
        let used = "  - {tool: use, arguments: {uri: 'gs://b/x1.png', tag: 2}}\n";
        for calls in [[used, make], [make, used], [used, make]] {
            assert!(alike(&made, &run(&calls)) > 0, "{calls:?}");
        }
    }

    #[test]
    fn a_scenarios_own_workflow_takes_the_shortcut_and_is_every_engines_evaluation() {
        let (mut shortcut, mut changed, mut accepted) = (0, 0, 0);
        // The fast path's in-order answer, told which calls are their steps' own (those not
        // asked), is its answer asking every call; `differ` calls are not their steps' own.
        let in_order_alike = |suite: &Suite, t: &Transcript, differ: usize| {
            let (index, sc) = suite.scenario(t.scenario.as_deref().unwrap()).unwrap();
            let known = own::at_place(sc, t).unwrap();
            assert_eq!(
                known.iter().filter(|own| !**own).count(),
                differ,
                "{}",
                t.id
            );
            let fast = suite.fast();
            assert_eq!(
                fast.perfect_in_order(&suite.linter, index, t, &known),
                fast.perfect_in_order(&suite.linter, index, t, &[]),
                "{}",
                t.id
            );
        };
        for (suite, runs) in reference_runs() {
            for t in runs {
                in_order_alike(&suite, &t, 0);
                let engines = evaluate_with_engines(&suite, &t).unwrap();
                let found = suite.scenario(t.scenario.as_deref().unwrap()).unwrap();
                let Some(quick) = as_reference(&suite, found, &t, None, &mut Default::default())
                else {
                    continue;
                };
                shortcut += 1;
                assert_eq!(
                    serde_json::to_value(&quick).unwrap(),
                    serde_json::to_value(&engines).unwrap(),
                    "{}",
                    t.id
                );
                // The scenario's own prompts written out (as an imported recorded run has
                // them): the same run to the engines, and the same shortcut.
                let mut prompted = t.clone();
                let sc = suite.scenario_of(&t).unwrap();
                for (tt, st) in prompted.turns.iter_mut().zip(&sc.turns) {
                    tt.prompt = Some(st.prompt.clone());
                }
                let quick = as_reference(&suite, found, &prompted, None, &mut Default::default())
                    .expect("the shortcut");
                let engines = evaluate_with_engines(&suite, &prompted).unwrap();
                assert_eq!(
                    serde_json::to_value(&quick).unwrap(),
                    serde_json::to_value(&engines).unwrap(),
                    "{} with its scenario's prompts",
                    t.id
                );
                // One argument changed: no longer the reference run. The shortcut only where
                // the step's policies accept the new value (the fast path finds it perfect),
                // and then it is still every engine's evaluation, literal trajectory included.
                let mut other = t.clone();
                let call = other.turns.iter_mut().flat_map(|tt| &mut tt.calls).next();
                if let Some(call) = call
                    && call.edit_arguments(|args| {
                        args.values_mut()
                            .next()
                            .map(|v| *v = serde_json::json!("a value no workflow holds"))
                            .is_some()
                    })
                {
                    in_order_alike(&suite, &other, 1);
                    let engines = evaluate_with_engines(&suite, &other).unwrap();
                    match as_reference(&suite, found, &other, None, &mut Default::default()) {
                        Some(quick) => {
                            assert_eq!(
                                serde_json::to_value(&quick).unwrap(),
                                serde_json::to_value(&engines).unwrap(),
                                "{} with a value its policies accept",
                                t.id
                            );
                            accepted += 1;
                        }
                        None => changed += 1,
                    }
                }
            }
        }
        assert!(
            shortcut >= 20,
            "{shortcut} reference runs took the shortcut"
        );
        // (A value the policies accept taking the shortcut: `check::general_tests`.)
        assert!(changed + accepted >= 10, "{changed} + {accepted}");
    }
}
