//! Evaluating one transcript: the engines in order (lint today; flow, oracle and judge plug in
//! here), then the verdict and what the transcript's label expected of it.

use serde::Serialize;

use super::suite::Suite;
use crate::finding::{Finding, Severity};
use crate::harness::{Expect, Label, Scenario, Transcript};
use crate::lint::did_you_mean;
use crate::source::SourceError;

/// Pass or fail, for the transcript itself.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
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
            Expect::Pass => Err(format!(
                "expected to pass, but it fails with {} error{}",
                self.errors(),
                if self.errors() == 1 { "" } else { "s" }
            )),
            Expect::Fail => {
                let missed = self.missed_faults();
                match (self.verdict, missed.is_empty()) {
                    (Verdict::Fail, true) => Ok(()),
                    (Verdict::Pass, _) => Err(format!(
                        "expected to fail{}, but no engine found an error",
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

/// Runs the engines over a transcript.
pub fn evaluate(suite: &Suite, t: &Transcript) -> Result<Evaluation, SourceError> {
    let scenario = scenario_of(suite, t)?;
    let mut findings = Vec::new();
    for (index, (_, call)) in t.calls().enumerate() {
        for mut f in suite.linter.lint(&call.tool, &call.arguments) {
            f.call = Some(index);
            f.location = Some(call.location_of(&f.pointer));
            findings.push(f);
        }
    }
    let verdict = if findings.iter().any(|f| f.severity == Severity::Error) {
        Verdict::Fail
    } else {
        Verdict::Pass
    };
    Ok(Evaluation {
        suite: suite.harness.suite.clone(),
        transcript: t.id.clone(),
        scenario: scenario.map(|s| s.id.clone()),
        verdict,
        findings,
        label: t.label.clone(),
    })
}
