//! The merge gate of a labelled suite (`<suite>::discrimination`): every broken transcript
//! caught with its named faults, every correct one passing, and mean TC(correct) − mean
//! TC(broken) at or above the suite's `min_gap`. Its table is seed 000's per-case breakdown,
//! with the gap per fault kind.
//!
//! The gap gates the broken runs that fail on their TC alone. A run an error finding fails
//! (a reference to nothing, a step the server refused, a destructive call nobody asked for) is
//! told from a correct one by its verdict whatever its TC; with one fault per run the paper's
//! arithmetic puts such a run at TC 0.72–0.83 (one sub-dimension of one dimension lost), so a
//! suite of single-fault runs whose every verdict is right would fail a TC gap of 0.3 that
//! says nothing about them. The full gap and the gap per fault are reported all the same.

use std::fmt::Write;

use serde::Serialize;

use super::evaluate::{Evaluation, Verdict};
use crate::harness::Expect;

/// One labelled transcript's line in the table.
#[derive(Clone, Debug, PartialEq, Serialize, serde::Deserialize)]
pub struct Row {
    /// The transcript's id.
    pub transcript: String,
    /// What its label expects.
    pub expect: Expect,
    /// The oracle's TC, when it answers a scenario.
    pub tc: Option<f64>,
    /// The engines' verdict.
    pub verdict: Verdict,
    /// The faults its label names.
    pub faults: Vec<String>,
    /// Of those, the ones no finding answered.
    pub missed: Vec<String>,
    /// Whether it is labelled `xfail` (shown, but left out of the means and the hit rate).
    pub xfail: bool,
    /// Whether the evaluation agrees with the label.
    pub agrees: bool,
    /// Whether an error finding fails it (its verdict does not rest on its TC).
    #[serde(default)]
    pub by_error: bool,
}

impl Row {
    /// The row of an evaluated transcript; `None` when it has no label (the gate leaves it out).
    pub fn of(ev: &Evaluation) -> Option<Row> {
        Some(Row {
            transcript: ev.transcript.clone(),
            expect: ev.label.expect?,
            tc: ev.score.as_ref().map(|s| s.tc),
            verdict: ev.verdict,
            faults: ev.label.faults.clone(),
            missed: ev.missed_faults().into_iter().map(str::to_owned).collect(),
            xfail: ev.label.xfail.is_some(),
            agrees: ev.agrees_with_label().is_ok(),
            by_error: ev.errors() > 0,
        })
    }
}

/// The gap of the broken runs that name one fault kind.
#[derive(Clone, Debug, PartialEq, Serialize, serde::Deserialize)]
pub struct FaultGap {
    /// The fault code (`flow.unknown_reference`).
    pub fault: String,
    /// How many broken runs name it.
    pub broken: usize,
    /// Their mean TC.
    pub mean_tc: f64,
    /// Mean TC(correct) minus theirs, when there are correct runs.
    pub gap: Option<f64>,
}

/// A suite's discrimination result.
#[derive(Clone, Debug, PartialEq, Serialize, serde::Deserialize)]
pub struct Discrimination {
    /// The suite.
    pub suite: String,
    /// The suite's pass threshold on TC.
    pub pass_threshold: f64,
    /// The least mean(correct) − mean(broken) the gate accepts (`thresholds.min_gap`).
    pub min_gap: f64,
    /// One row per labelled transcript, in the order given.
    pub rows: Vec<Row>,
    /// Mean TC of the transcripts labelled `pass` (xfail ones left out); `None` without any.
    pub mean_correct: Option<f64>,
    /// Mean TC of the transcripts labelled `fail` (xfail ones left out); `None` without any.
    pub mean_broken: Option<f64>,
    /// `mean_correct − mean_broken`, when both exist.
    pub gap: Option<f64>,
    /// `mean_correct` minus the mean TC of the broken runs that fail on TC alone (no error
    /// finding): what `min_gap` gates; `None` when every broken run fails on an error finding.
    #[serde(default)]
    pub gap_on_tc: Option<f64>,
    /// The gap per fault kind the broken runs name, by fault.
    #[serde(default)]
    pub by_fault: Vec<FaultGap>,
    /// Broken transcripts that name their faults (the hit rate's denominator).
    #[serde(default)]
    pub named: usize,
    /// Broken transcripts whose named faults were all found.
    pub hits: usize,
    /// Broken transcripts counted in the hit rate (xfail ones left out).
    pub broken: usize,
    /// Transcripts that could not be evaluated (file errors), with the error.
    pub errors: Vec<String>,
}

impl Discrimination {
    /// Builds the gate from evaluations of the suite's transcripts (unlabelled ones are left
    /// out) and load errors.
    pub fn new(
        suite: &str,
        pass_threshold: f64,
        min_gap: f64,
        evals: &[Evaluation],
        errors: Vec<String>,
    ) -> Self {
        let rows = evals.iter().filter_map(Row::of).collect();
        Self::from_rows(suite, pass_threshold, min_gap, rows, errors)
    }

    /// Builds the gate from the rows of the suite's labelled transcripts (what a gate keeps of
    /// each evaluation, so a large suite is gated without holding its evaluations) and load
    /// errors.
    pub fn from_rows(
        suite: &str,
        pass_threshold: f64,
        min_gap: f64,
        rows: Vec<Row>,
        errors: Vec<String>,
    ) -> Self {
        // An `xfail` transcript is a known gap, reported in the table but not counted: it
        // would let a broken evaluator's gap or hit rate look better (or worse) than it is.
        let mean = |e: Expect| -> Option<f64> {
            let v: Vec<f64> = rows
                .iter()
                .filter(|r| r.expect == e && !r.xfail)
                .filter_map(|r| r.tc)
                .collect();
            (!v.is_empty()).then(|| v.iter().sum::<f64>() / v.len() as f64)
        };
        let (mean_correct, mean_broken) = (mean(Expect::Pass), mean(Expect::Fail));
        let gap = mean_correct.zip(mean_broken).map(|(c, b)| c - b);
        let counted = || rows.iter().filter(|r| r.expect == Expect::Fail && !r.xfail);
        let on_tc: Vec<f64> = counted()
            .filter(|r| !r.by_error)
            .filter_map(|r| r.tc)
            .collect();
        let gap_on_tc = mean_correct
            .zip((!on_tc.is_empty()).then(|| on_tc.iter().sum::<f64>() / on_tc.len() as f64))
            .map(|(c, b)| c - b);
        let mut faults: std::collections::BTreeMap<&str, Vec<f64>> = Default::default();
        for r in counted() {
            for f in &r.faults {
                faults.entry(f).or_default().extend(r.tc);
            }
        }
        let by_fault = faults
            .into_iter()
            .filter(|(_, tcs)| !tcs.is_empty())
            .map(|(fault, tcs)| {
                let mean_tc = tcs.iter().sum::<f64>() / tcs.len() as f64;
                FaultGap {
                    fault: fault.to_owned(),
                    broken: tcs.len(),
                    mean_tc,
                    gap: mean_correct.map(|c| c - mean_tc),
                }
            })
            .collect();
        let named = counted().filter(|r| !r.faults.is_empty()).count();
        let broken = rows
            .iter()
            .filter(|r| r.expect == Expect::Fail && !r.xfail)
            .count();
        let hits = rows
            .iter()
            .filter(|r| {
                r.expect == Expect::Fail
                    && !r.xfail
                    && !r.faults.is_empty()
                    && r.verdict == Verdict::Fail
                    && r.missed.is_empty()
            })
            .count();
        Self {
            suite: suite.to_owned(),
            pass_threshold,
            min_gap,
            rows,
            mean_correct,
            mean_broken,
            gap,
            gap_on_tc,
            by_fault,
            named,
            hits,
            broken,
            errors,
        }
    }

    /// Whether there is anything to gate.
    pub fn is_empty(&self) -> bool {
        self.rows.is_empty() && self.errors.is_empty()
    }

    /// What keeps the gate shut; empty when it passes.
    pub fn problems(&self) -> Vec<String> {
        let mut p: Vec<String> = self.errors.clone();
        for r in self.rows.iter().filter(|r| !r.agrees && !r.xfail) {
            p.push(match r.expect {
                Expect::Pass => format!("`{}` is labelled correct but fails", r.transcript),
                Expect::Fail if r.verdict == Verdict::Pass => {
                    format!("`{}` is labelled broken but passes", r.transcript)
                }
                Expect::Fail => format!(
                    "`{}` fails, but not with {}",
                    r.transcript,
                    r.missed.join(", ")
                ),
            });
        }
        if let Some(gap) = self.gap_on_tc.filter(|g| *g + 1e-9 < self.min_gap) {
            p.push(format!(
                "the gap {gap:.3} to the broken runs that fail on TC alone is below the suite's min_gap {:.3}",
                self.min_gap
            ));
        }
        p
    }

    /// Whether the gate passes: no [`problems`](Self::problems).
    pub fn passed(&self) -> bool {
        self.problems().is_empty()
    }

    /// The per-case table, then the means, the gap and the taxonomy hit rate.
    pub fn table(&self) -> String {
        let mut s = format!(
            "{}: discrimination (pass at TC ≥ {:.3}, min gap {:.3})\n",
            self.suite, self.pass_threshold, self.min_gap
        );
        let w = self
            .rows
            .iter()
            .map(|r| r.transcript.len())
            .max()
            .unwrap_or(4)
            .max(4);
        let _ = writeln!(s, "  {:w$}  expect  TC     verdict  faults", "case");
        for r in &self.rows {
            let tc = r.tc.map_or("  -  ".to_owned(), |t| format!("{t:.3}"));
            let faults = if r.faults.is_empty() {
                "-".to_owned()
            } else {
                r.faults
                    .iter()
                    .map(|f| {
                        if r.missed.contains(f) {
                            format!("{f} (missed)")
                        } else {
                            format!("{f} ✓")
                        }
                    })
                    .collect::<Vec<_>>()
                    .join(", ")
            };
            let verdict = match r.verdict {
                Verdict::Pass => "pass",
                Verdict::Fail => "fail",
            };
            let expect = match r.expect {
                Expect::Pass => "pass",
                Expect::Fail => "fail",
            };
            let mark = if r.agrees {
                ""
            } else if r.xfail {
                "  (xfail)"
            } else {
                "  ← wrong"
            };
            let _ = writeln!(
                s,
                "  {:w$}  {expect:6}  {tc}  {verdict:7}  {faults}{mark}",
                r.transcript
            );
        }
        let fmt = |m: Option<f64>| m.map_or("-".to_owned(), |v| format!("{v:.3}"));
        let n = |e: Expect| {
            self.rows
                .iter()
                .filter(|r| r.expect == e && !r.xfail && r.tc.is_some())
                .count()
        };
        let _ = writeln!(
            s,
            "  mean TC: correct {} ({}), broken {} ({}); gap {}",
            fmt(self.mean_correct),
            n(Expect::Pass),
            fmt(self.mean_broken),
            n(Expect::Fail),
            fmt(self.gap),
        );
        if self.broken > 0 {
            let on_tc = match self.gap_on_tc {
                Some(g) if g + 1e-9 >= self.min_gap => format!("{g:.3} ≥ {:.3}", self.min_gap),
                Some(g) => format!("{g:.3} < {:.3}", self.min_gap),
                None => "- (every broken run fails on an error finding)".to_owned(),
            };
            let _ = writeln!(
                s,
                "  gated gap (broken runs that fail on TC alone): {on_tc}"
            );
        }
        if !self.by_fault.is_empty() {
            let parts: Vec<String> = self
                .by_fault
                .iter()
                .map(|f| {
                    let gap = f.gap.map_or("-".to_owned(), |g| format!("{g:.3}"));
                    format!("{} {gap} ({})", f.fault, f.broken)
                })
                .collect();
            let _ = writeln!(s, "  gap by fault: {}", parts.join(", "));
        }
        if self.named > 0 {
            let _ = writeln!(
                s,
                "  taxonomy hit rate: {}/{} ({:.1}%)",
                self.hits,
                self.named,
                100.0 * self.hits as f64 / self.named as f64
            );
        } else if self.broken > 0 {
            let _ = writeln!(
                s,
                "  taxonomy hit rate: - (no broken transcript names its faults)"
            );
        }
        for e in &self.errors {
            let _ = writeln!(s, "  error: {e}");
        }
        s
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::finding::{Code, SubDimension};
    use crate::harness::Label;
    use crate::score::Score;

    /// An evaluation scoring `tc` on every sub-dimension, labelled `expect`.
    fn ev(id: &str, expect: Expect, tc: f64, xfail: bool) -> Evaluation {
        let mut sub = crate::score::SubScores::new();
        for d in [
            SubDimension::UsageNecessity,
            SubDimension::SelectionCorrectness,
            SubDimension::SelectionSpecificity,
            SubDimension::SelectionCompleteness,
        ]
        .into_iter()
        .chain(SubDimension::ARGUMENTS)
        {
            sub.insert(d, tc);
        }
        let score = Score::from_sub(sub);
        let verdict = crate::score::verdict(Some(score.tc), false, 0.8);
        Evaluation {
            suite: "s".into(),
            transcript: id.into(),
            scenario: Some("sc".into()),
            verdict,
            score: Some(score),
            turn_scores: Vec::new(),
            trajectory: None,
            pass_threshold: 0.8,
            findings: Vec::new(),
            label: Label {
                expect: Some(expect),
                faults: Vec::new(),
                xfail: xfail.then(|| "known gap".to_owned()),
            },
            trace: None,
        }
    }

    #[test]
    fn xfail_transcripts_are_left_out_of_the_gap_and_the_hit_rate() {
        // The broken transcript the evaluator cannot catch yet is marked xfail: counted, it
        // would pull the broken mean up to 0.6 (gap 0.4 < 0.5) and the hit rate to 1/2.
        let evals = [
            ev("good", Expect::Pass, 1.0, false),
            ev("caught", Expect::Fail, 0.2, false),
            ev("known-gap", Expect::Fail, 1.0, true),
        ];
        let d = Discrimination::new("s", 0.8, 0.5, &evals, Vec::new());
        assert!(
            (d.mean_broken.unwrap() - 0.2).abs() < 1e-9,
            "{:?}",
            d.mean_broken
        );
        assert!((d.gap.unwrap() - 0.8).abs() < 1e-9, "{:?}", d.gap);
        assert_eq!((d.hits, d.named, d.broken), (0, 0, 1));
        assert!(d.passed(), "{:?}", d.problems());
        assert_eq!(d.rows.len(), 3, "the xfail row is still shown");
        assert!(d.table().contains("(xfail)"), "{}", d.table());
        // No broken run names a fault: no hit rate to claim (it said 1/1, 100 %).
        assert!(
            d.table()
                .contains("taxonomy hit rate: - (no broken transcript names its faults)"),
            "{}",
            d.table()
        );
    }

    /// An evaluation that an error finding fails, naming `fault`.
    fn caught(id: &str, tc: f64, fault: Code) -> Evaluation {
        let mut e = ev(id, Expect::Fail, tc, false);
        e.findings
            .push(crate::finding::Finding::new(fault, "", "x"));
        e.verdict = Verdict::Fail;
        e.label.faults = vec![fault.as_str().to_owned()];
        e
    }

    /// Issue 29, 7: single-fault runs sit at TC 0.72–0.83, so a gap of 0.3 failed suites whose
    /// every verdict was right. The gap gates the runs that fail on TC alone; every gap is
    /// reported, per fault too.
    #[test]
    fn the_gap_gates_the_runs_that_fail_on_tc_alone() {
        let evals = [
            ev("good", Expect::Pass, 1.0, false),
            caught("ref", 0.78, Code::UnknownReference),
            caught("tool", 0.83, Code::WrongTool),
        ];
        let d = Discrimination::new("s", 0.8, 0.3, &evals, Vec::new());
        assert!((d.gap.unwrap() - 0.195).abs() < 1e-9, "{:?}", d.gap);
        assert_eq!(d.gap_on_tc, None);
        assert!(d.passed(), "{:?}", d.problems());
        assert_eq!((d.hits, d.named), (2, 2));
        let table = d.table();
        assert!(
            table.contains(
                "gap by fault: flow.unknown_reference 0.220 (1), oracle.wrong_tool 0.170 (1)"
            ),
            "{table}"
        );
        // A broken run that only its TC fails is held to the gap.
        let mut evals = evals.to_vec();
        evals.push(ev("weak", Expect::Fail, 0.79, false));
        let d = Discrimination::new("s", 0.8, 0.3, &evals, Vec::new());
        assert!((d.gap_on_tc.unwrap() - 0.21).abs() < 1e-9);
        assert!(!d.passed());
        assert!(
            d.problems()[0].contains("fail on TC alone"),
            "{:?}",
            d.problems()
        );
    }
}
