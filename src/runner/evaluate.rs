//! Evaluating one transcript: the engines in order (lint today; flow, oracle and judge plug in
//! here), then the verdict and what the transcript's label expected of it.

use serde::Serialize;

use super::suite::Suite;
use crate::finding::{Finding, Severity};
use crate::flow;
use crate::harness::{Call, Expect, Label, Scenario, Transcript};
use crate::lint::did_you_mean;
use crate::score::{Score, oracle};
use crate::source::SourceError;

/// Pass or fail, for the transcript itself.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, serde::Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Verdict {
    Pass,
    Fail,
}

/// Everything the engines established about one transcript.
#[derive(Clone, Debug, Serialize)]
pub struct Evaluation {
    pub suite: String,
    pub transcript: String,
    pub scenario: Option<String>,
    pub verdict: Verdict,
    /// The oracle's score, when the transcript answers a scenario.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub score: Option<Score>,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub turn_scores: Vec<Score>,
    /// The suite's pass threshold on TC.
    pub pass_threshold: f64,
    pub findings: Vec<Finding>,
    #[serde(skip)]
    pub label: Label,
}

impl Evaluation {
    pub fn errors(&self) -> usize {
        self.findings
            .iter()
            .filter(|f| f.severity == Severity::Error)
            .count()
    }

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
    pub fn agrees_with_label(&self) -> Result<(), String> {
        match self.label.expect.unwrap_or(Expect::Pass) {
            Expect::Pass if self.verdict == Verdict::Pass => Ok(()),
            Expect::Pass => Err(self.why_failed()),
            Expect::Fail => {
                let missed = self.missed_faults();
                match (self.verdict, missed.is_empty()) {
                    (Verdict::Fail, true) => Ok(()),
                    (Verdict::Pass, _) => Err(format!(
                        "expected to fail{}, but no engine found an error and TC is above the pass threshold",
                        if self.label.faults.is_empty() {
                            String::new()
                        } else {
                            format!(" with {}", self.label.faults.join(", "))
                        }
                    )),
                    (Verdict::Fail, false) => Err(format!(
                        "fails as expected, but no finding names {} (the fault a correct evaluator must detect)",
                        missed.join(", ")
                    )),
                }
            }
        }
    }
}

/// The scenario a transcript answers, checked against the harness.
pub fn scenario_of<'s>(
    suite: &'s Suite,
    t: &Transcript,
) -> Result<Option<&'s Scenario>, SourceError> {
    let Some(id) = &t.scenario else {
        return Ok(None);
    };
    let at = t
        .scenario_location
        .as_ref()
        .map_or((1, 1), |l| (l.line, l.column));
    let Some(sc) = suite.harness.scenario(id) else {
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
    Ok(Some(sc))
}

/// Runs the engines over a transcript: lint each call, then flow across the calls, then the
/// oracle against the scenario's workflow. The verdict is Fail on any error finding, or when
/// the oracle's TC is below the suite's pass threshold.
pub fn evaluate(suite: &Suite, t: &Transcript) -> Result<Evaluation, SourceError> {
    let scenario = scenario_of(suite, t)?;
    let calls: Vec<&Call> = t.calls().map(|(_, c)| c).collect();
    let mut findings = Vec::new();
    let mut lint_failed = Vec::with_capacity(calls.len());
    for (index, call) in calls.iter().enumerate() {
        let found = suite.linter.lint(&call.tool, &call.arguments);
        lint_failed.push(found.iter().any(|f| f.severity == Severity::Error));
        for mut f in found {
            f.call = Some(index);
            findings.push(f);
        }
    }
    let flow = flow::analyze(t, scenario, &suite.linter, &lint_failed);
    findings.extend(flow.findings.iter().cloned());
    let (score, turn_scores) = match scenario {
        Some(sc) => {
            let (score, turns, oracle_findings) =
                oracle::score(t, sc, &suite.linter, &flow, &findings);
            findings.extend(oracle_findings);
            (Some(score), turns)
        }
        None => (None, Vec::new()),
    };
    for f in &mut findings {
        if let (Some(i), None) = (f.call, &f.location) {
            f.location = calls.get(i).map(|c| c.location_of(&f.pointer));
        }
    }
    findings.sort_by_key(|f| (f.call.unwrap_or(usize::MAX), std::cmp::Reverse(f.severity)));
    let pass = suite.harness.thresholds.pass;
    let below = score.as_ref().is_some_and(|s| s.tc + 1e-9 < pass);
    let verdict = if below || findings.iter().any(|f| f.severity == Severity::Error) {
        Verdict::Fail
    } else {
        Verdict::Pass
    };
    Ok(Evaluation {
        suite: suite.harness.suite.clone(),
        transcript: t.id.clone(),
        scenario: scenario.map(|s| s.id.clone()),
        verdict,
        score,
        turn_scores,
        pass_threshold: pass,
        findings,
        label: t.label.clone(),
    })
}
