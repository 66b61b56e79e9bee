//! The oracle scorer: an agent's calls against the scenario's held-out workflow, filling the
//! 14 sub-dimensions deterministically.
//!
//! Per turn, workflow steps and calls are paired by optimal assignment over a similarity (same
//! tool first, then arguments under their match policies), so the order of unordered steps
//! does not matter and a wrong tool is paired with the step it stands in for. Then:
//!
//! - **usage** — necessity: calls made iff the workflow has steps; overuse (unpaired calls) is
//!   recorded, not aggregated;
//! - **selection** — correctness: calls whose tool the workflow uses; specificity: pairs with
//!   the same tool; completeness: steps done by a same-tool call that did not fail (a rejected
//!   call leaves its step undone, and so does a call built on a failed one);
//! - **ordering** (two calls or more) — sequence: ordered step pairs kept in order (a step
//!   that consumes another's mock output must follow it; with `order: strict`, every pair);
//!   dependency: calls whose references were all grounded (flow); efficiency: calls neither
//!   redundant, unrequested nor failed;
//! - **arguments** — per pair, completeness (required present), name accuracy, value accuracy
//!   (under the match policies; a value the server rejects, or an ungrounded reference, makes
//!   it 0),
//!   type and format compliance (the linter's findings), relevancy (no parameters outside the
//!   schema); then the paper's cascades: a wrong name or a missing required parameter zeroes
//!   value, type and format; a value at or below 0.3 zeroes type, format and relevancy. The
//!   turn's argument dimension is its weakest pair's — one broken call collapses it, as one
//!   critical error collapses a call's.

use std::collections::BTreeMap;

use serde_json::Value;

use super::{Score, assign};
use crate::finding::{Code, Finding, Severity, SubDimension};
use crate::flow::{Flow, escape, generalize};
use crate::harness::{Call, Forbid, MatchPolicy, OracleCall, Scenario, Transcript};
use crate::lint::Linter;
use crate::spec::capability::ArtifactKind;

/// Scores a transcript against its scenario. `findings` are the linter's and the flow
/// engine's, with `call` set. Returns the conversation score, each turn's, and the oracle's
/// own findings.
pub fn score(
    t: &Transcript,
    sc: &Scenario,
    linter: &Linter,
    flow: &Flow,
    findings: &[Finding],
) -> (Score, Vec<Score>, Vec<Finding>) {
    score_with(t, sc, linter, flow, findings, &BTreeMap::new())
}

/// [`score`] under a suite's severities (`severity:`), which decide which findings are the
/// critical errors that collapse their sub-dimension.
pub fn score_with(
    t: &Transcript,
    sc: &Scenario,
    linter: &Linter,
    flow: &Flow,
    findings: &[Finding],
    severity: &BTreeMap<Code, Severity>,
) -> (Score, Vec<Score>, Vec<Finding>) {
    let mut out = Vec::new();
    let mut turns = Vec::new();
    let mut first_index = 0;
    for (ti, st) in sc.turns.iter().enumerate() {
        let calls = t.turn_calls(ti);
        // One score per way the workflow allows (`any_of:` lists, repeats); the best stands.
        let mut best: Option<(Score, Vec<Finding>)> = None;
        for variant in st.variants() {
            let (steps, optional) = expand(&st.workflow, &variant, &calls);
            let cx = Turn {
                first: first_index,
                calls: &calls,
                steps,
                optional,
                forbid: &st.forbid,
                linter,
                flow,
                findings,
                severity,
            };
            let (s, f) = cx.score(st.order_strict);
            let errors = |f: &[Finding]| f.iter().filter(|f| f.severity == Severity::Error).count();
            let better = best
                .as_ref()
                .is_none_or(|(bs, bf)| (errors(&f) == 0, s.tc) > (errors(bf) == 0, bs.tc));
            if better {
                best = Some((s, f));
            }
        }
        let (s, f) = best.expect("a turn has at least one variant");
        turns.push(s);
        out.extend(f);
        first_index += calls.len();
    }
    let total = Score::mean(&turns).unwrap_or_else(|| Score::from_sub(BTreeMap::new()));
    (total, turns, out)
}

/// A variant's steps, each repeated as its `count`/`min`/`max` allow (as many times as the turn
/// has calls of its tools, within bounds), and whether each copy may be left out.
fn expand<'a>(
    workflow: &'a [OracleCall],
    variant: &[usize],
    calls: &[&Call],
) -> (Vec<&'a OracleCall>, Vec<bool>) {
    let mut steps = Vec::new();
    let mut optional = Vec::new();
    for &i in variant {
        let o = &workflow[i];
        let made = calls.iter().filter(|c| o.accepts_tool(&c.tool)).count() as u32;
        let copies = made.clamp(o.min, o.max.unwrap_or(u32::MAX).max(o.min));
        for k in 0..copies {
            steps.push(o);
            optional.push(o.optional || k >= o.min);
        }
    }
    (steps, optional)
}

struct Turn<'a> {
    /// Transcript-wide index of this turn's first call.
    first: usize,
    calls: &'a [&'a Call],
    steps: Vec<&'a OracleCall>,
    /// Per step, whether it may be left out.
    optional: Vec<bool>,
    forbid: &'a [Forbid],
    severity: &'a BTreeMap<Code, Severity>,
    linter: &'a Linter,
    flow: &'a Flow,
    findings: &'a [Finding],
}

impl Turn<'_> {
    fn score(&self, strict: bool) -> (Score, Vec<Finding>) {
        use SubDimension::*;
        let mut out = Vec::new();
        let (steps, calls) = (&self.steps, self.calls);
        let failed = |j: usize| {
            self.flow
                .calls
                .get(self.first + j)
                .is_some_and(|c| c.failed)
        };
        let effect = |j: usize| self.linter.effect(&calls[j].tool, calls[j].args());
        // Whether call `j`, paired with step `i`, changes nothing where the step changes state
        // (a dry run in place of an edit).
        let changes_nothing = |i: usize, j: usize| {
            effect(j).read_only
                && !self
                    .linter
                    .effect(&steps[i].call.tool, steps[i].call.args())
                    .read_only
        };
        // Pair steps with calls. Of two equally good calls the one that did the step (worked,
        // changed what the step changes) wins; of two equally good steps the required one.
        let sim: Vec<Vec<f64>> = steps
            .iter()
            .enumerate()
            .map(|(i, o)| {
                calls
                    .iter()
                    .enumerate()
                    .map(|(j, a)| {
                        let mut s = self.similarity(o, a, self.first + j);
                        if failed(j) || changes_nothing(i, j) {
                            s *= 0.99;
                        }
                        if self.optional[i] {
                            s *= 0.98;
                        }
                        s
                    })
                    .collect()
            })
            .collect();
        let pairing: Vec<Option<usize>> = assign(&sim)
            .into_iter()
            .enumerate()
            .map(|(i, j)| j.filter(|&j| sim[i][j] >= 0.2))
            .collect();
        let mut step_of = vec![None; calls.len()];
        for (i, j) in pairing.iter().enumerate() {
            if let Some(j) = j {
                step_of[*j] = Some(i);
            }
        }
        let required = (0..steps.len()).filter(|i| !self.optional[*i]).count();

        let mut sub = BTreeMap::new();
        // usage
        sub.insert(
            UsageNecessity,
            if (required == 0 && pairing.iter().all(Option::is_none)) == calls.is_empty() {
                1.0
            } else {
                0.0
            },
        );
        let extra: Vec<usize> = (0..calls.len()).filter(|j| step_of[*j].is_none()).collect();
        sub.insert(
            UsageOveruse,
            if calls.is_empty() {
                1.0
            } else {
                1.0 - extra.len() as f64 / calls.len() as f64
            },
        );
        // selection
        let mut pool: Vec<&OracleCall> = steps.clone();
        let mut right_tool = 0;
        for c in calls {
            if let Some(k) = pool.iter().position(|o| o.accepts_tool(&c.tool)) {
                pool.swap_remove(k);
                right_tool += 1;
            }
        }
        let ratio = |num: usize, den: usize, empty: f64| {
            if den == 0 {
                empty
            } else {
                num as f64 / den as f64
            }
        };
        sub.insert(
            SelectionCorrectness,
            ratio(
                right_tool,
                calls.len(),
                if steps.is_empty() { 1.0 } else { 0.0 },
            ),
        );
        let pairs: Vec<(usize, usize)> = pairing
            .iter()
            .enumerate()
            .filter_map(|(i, j)| j.map(|j| (i, j)))
            .collect();
        let same_tool = pairs
            .iter()
            .filter(|(i, j)| steps[*i].accepts_tool(&calls[*j].tool))
            .count();
        sub.insert(
            SelectionSpecificity,
            ratio(
                same_tool,
                pairs.len(),
                if steps.is_empty() { 1.0 } else { 0.0 },
            ),
        );
        // A step is done by a call of its tool that worked and did what the step does: a dry
        // run in place of an edit changes nothing.
        // A call whose values break the step's policies did something else than the step
        // (compared once per pair).
        let right: Vec<bool> = pairing
            .iter()
            .enumerate()
            .map(|(i, j)| {
                j.is_some_and(|j| {
                    self.compare(steps[i], calls[j], self.first + j)
                        .iter()
                        .all(|(_, bad)| bad.is_none())
                })
            })
            .collect();
        let right_values = |i: usize, j: usize| pairing[i] == Some(j) && right[i];
        let done = |i: usize, j: usize| {
            steps[i].accepts_tool(&calls[j].tool)
                && !failed(j)
                && !changes_nothing(i, j)
                && right_values(i, j)
        };
        let required_done = pairs
            .iter()
            .filter(|(i, j)| !self.optional[*i] && done(*i, *j))
            .count();
        sub.insert(SelectionCompleteness, ratio(required_done, required, 1.0));
        // ordering
        if calls.len() >= 2 {
            let ordered = ordered_pairs(steps, strict);
            let judged: Vec<(usize, usize)> = ordered
                .into_iter()
                .filter(|(a, b)| pairing[*a].is_some() && pairing[*b].is_some())
                // Two copies of one repeated step have no order between them.
                .filter(|(a, b)| !std::ptr::eq(steps[*a], steps[*b]))
                .collect();
            let kept = judged
                .iter()
                .filter(|(a, b)| pairing[*a] < pairing[*b])
                .count();
            sub.insert(OrderingSequence, ratio(kept, judged.len(), 1.0));
            for (a, b) in judged.iter().filter(|(a, b)| pairing[*a] > pairing[*b]) {
                let j = pairing[*b].unwrap_or_default();
                let mut f = Finding::new(
                    Code::Order,
                    "",
                    format!(
                        "`{}` runs before `{}`, which the workflow puts first{}",
                        calls[j].tool,
                        steps[*a].call.tool,
                        if strict { " (`order: strict`)" } else { "" }
                    ),
                );
                if strict {
                    f.severity = Severity::Error;
                }
                f.call = Some(self.first + j);
                out.push(f);
            }
            let with_refs: Vec<usize> = (0..calls.len())
                .filter(|j| {
                    self.flow
                        .calls
                        .get(self.first + j)
                        .is_some_and(|c| !c.references.is_empty())
                })
                .collect();
            // Under `order: strict` the workflow makes every step depend on the one before: a
            // call out of that order breaks a dependency as a reference to nothing does.
            let out_of_order: Vec<usize> = if strict {
                judged
                    .iter()
                    .filter(|(a, b)| pairing[*a] > pairing[*b])
                    .filter_map(|(_, b)| pairing[*b])
                    .collect()
            } else {
                Vec::new()
            };
            let dependent: Vec<usize> = (0..calls.len())
                .filter(|j| with_refs.contains(j) || out_of_order.contains(j))
                .collect();
            let respected = dependent
                .iter()
                .filter(|j| {
                    !out_of_order.contains(j)
                        && !self.has(
                            self.first + **j,
                            &[
                                Code::UnknownReference,
                                Code::UseBeforeProduce,
                                Code::FailedDependency,
                            ],
                        )
                })
                .count();
            sub.insert(OrderingDependency, ratio(respected, dependent.len(), 1.0));
            // Work that did nothing for the user: unrequested, redundant or failed calls.
            let wasted = (0..calls.len())
                .filter(|j| {
                    step_of[*j].is_none_or(|i| !done(i, *j))
                        || self.has(self.first + j, &[Code::RedundantCall])
                })
                .count();
            sub.insert(OrderingEfficiency, 1.0 - ratio(wasted, calls.len(), 0.0));
        }
        // arguments: the weakest pair
        let mut weakest: Option<BTreeMap<SubDimension, f64>> = None;
        let mut keep_weakest = |a: BTreeMap<SubDimension, f64>| {
            let mean = a.values().sum::<f64>() / a.len() as f64;
            if weakest
                .as_ref()
                .is_none_or(|w| mean < w.values().sum::<f64>() / w.len() as f64)
            {
                weakest = Some(a);
            }
        };
        for (i, j) in &pairs {
            keep_weakest(self.arguments(steps[*i], calls[*j], self.first + *j, &mut out));
        }
        // A required step nobody called had none of its arguments provided: completeness 0,
        // and the cascades take the rest.
        if pairing
            .iter()
            .enumerate()
            .any(|(i, j)| j.is_none() && !self.optional[i])
        {
            keep_weakest(
                SubDimension::ARGUMENTS
                    .into_iter()
                    .map(|d| (d, if d == ArgumentName { 1.0 } else { 0.0 }))
                    .collect(),
            );
        }
        // A call that does what no step asks for (makes media, changes state) has no correct
        // values: nobody asked for any.
        for &j in &extra {
            if !failed(j) && (self.makes(calls[j]).is_some() || !effect(j).read_only) {
                keep_weakest(self.unrequested_arguments(calls[j], self.first + j));
            }
        }
        let args = weakest.unwrap_or_else(|| {
            let v = if required == 0 && calls.is_empty() {
                1.0
            } else {
                0.0
            };
            SubDimension::ARGUMENTS
                .into_iter()
                .map(|d| (d, v))
                .collect()
        });
        sub.extend(args);

        // findings: wrong tools, undone and missing steps, unrequested and forbidden calls
        for (i, j) in &pairs {
            if !steps[*i].accepts_tool(&calls[*j].tool) {
                let why = steps[*i]
                    .quick_explanation
                    .as_deref()
                    .map_or(String::new(), |q| format!(" ({q})"));
                let mut f = Finding::new(
                    Code::WrongTool,
                    "",
                    format!(
                        "called `{}` where the workflow calls `{}`{why}",
                        calls[*j].tool, steps[*i].call.tool
                    ),
                );
                f.call = Some(self.first + j);
                out.push(f);
            } else if !self.optional[*i] && !done(*i, *j) {
                // A call the server refused, or a dry run, leaves the step undone and says so.
                let index = self.first + j;
                let refused = self.flow.calls.get(index).is_some_and(|c| c.refused);
                if refused || changes_nothing(*i, *j) {
                    let why = if changes_nothing(*i, *j) {
                        "changes nothing with these arguments (a dry run)"
                    } else {
                        "was refused by the server (`isError`, or an error the server answers as text)"
                    };
                    let mut f = Finding::new(
                        Code::StepUndone,
                        "",
                        format!(
                            "the workflow's step {} (`{}`) is not done: this call {why}, and no later call of the turn does it",
                            i + 1,
                            steps[*i].call.tool
                        ),
                    );
                    f.call = Some(index);
                    out.push(f);
                }
            }
        }
        let mut missing_reported = Vec::new();
        for (i, j) in pairing.iter().enumerate() {
            // A repeated step is reported once.
            if j.is_none()
                && !self.optional[i]
                && !missing_reported
                    .iter()
                    .any(|&k: &usize| std::ptr::eq(steps[k], steps[i]))
            {
                missing_reported.push(i);
                // A dry run of the step's tool, in its place, is the step left undone: the call
                // differs from the step only where the tool's effects say it changes nothing
                // (`dryRun: true`). A read through a tool that also writes (a SELECT for an
                // UPDATE) is another call, and the step is missing.
                let dry = (0..calls.len()).find(|&j| {
                    steps[i].accepts_tool(&calls[j].tool)
                        && changes_nothing(i, j)
                        && self.differs_only_in_switches(steps[i], calls[j], self.first + j)
                });
                if let Some(j) = dry {
                    let mut f = Finding::new(
                        Code::StepUndone,
                        "",
                        format!(
                            "the workflow's step {} (`{}`) is not done: call {} changes nothing with its arguments (a dry run), and no call of the turn does the step",
                            i + 1,
                            steps[i].call.tool,
                            self.first + j + 1
                        ),
                    );
                    f.call = Some(self.first + j);
                    out.push(f);
                    continue;
                }
                let mut f = Finding::new(
                    Code::MissingCall,
                    "",
                    format!(
                        "the workflow's step {} (`{}`) was never called",
                        i + 1,
                        steps[i].call.tool
                    ),
                );
                f.location = Some(steps[i].call.location.clone());
                out.push(f);
            }
        }
        for j in extra {
            let e = effect(j);
            let mut f = if let Some(what) = self.makes(calls[j]) {
                Finding::new(
                    Code::UnrequestedCall,
                    "",
                    format!(
                        "`{}` {what} no step of the workflow asks for",
                        calls[j].tool
                    ),
                )
            } else if !e.read_only && !failed(j) {
                Finding::new(
                    Code::UnrequestedEffect,
                    "",
                    format!(
                        "`{}` {} and no step of the workflow asks for it",
                        calls[j].tool,
                        if e.destructive {
                            "may destroy or overwrite data"
                        } else {
                            "changes state"
                        }
                    ),
                )
            } else {
                Finding::new(
                    Code::ExtraCall,
                    "",
                    format!(
                        "`{}` is not a step of the workflow{}",
                        calls[j].tool,
                        if failed(j) { " (and it failed)" } else { "" }
                    ),
                )
            };
            f.call = Some(self.first + j);
            out.push(f);
        }
        for (j, c) in calls.iter().enumerate() {
            let e = effect(j);
            let hit = self.forbid.iter().find(|f| match f {
                Forbid::Tool(t) => *t == c.tool,
                Forbid::Destructive => e.destructive,
                Forbid::Mutating => !e.read_only,
                Forbid::OpenWorld => e.open_world,
            });
            if let Some(rule) = hit {
                let mut f = Finding::new(
                    Code::ForbiddenCall,
                    "",
                    format!(
                        "`{}` is forbidden here (`forbid:` rules out {rule})",
                        c.tool
                    ),
                );
                f.call = Some(self.first + j);
                out.push(f);
            }
        }
        // A critical error collapses the selection or ordering sub-dimension it belongs to, as
        // one collapses the argument mean (the paper's judge scores such an error near zero;
        // a share of calls would let one destructive or misordered call cost a few points).
        // Warnings cost their share, as computed above.
        for f in &mut out {
            if let Some(s) = self.severity.get(&f.code) {
                f.severity = *s;
            }
        }
        let range = self.first..self.first + calls.len();
        let critical = self
            .findings
            .iter()
            .filter(|f| f.call.is_some_and(|c| range.contains(&c)))
            .chain(&out)
            .filter(|f| f.severity == Severity::Error)
            .map(|f| f.sub_dimension);
        for d in critical {
            if matches!(
                d,
                SelectionCorrectness
                    | SelectionSpecificity
                    | SelectionCompleteness
                    | OrderingSequence
                    | OrderingDependency
                    | OrderingEfficiency
            ) && let Some(v) = sub.get_mut(&d)
            {
                *v = 0.0;
            }
        }
        (Score::from_sub(sub), out)
    }

    /// Whether every parameter in which call `a` differs from step `o` is one the tool's
    /// `effects:` switch on (`when: {dryRun: true}`).
    fn differs_only_in_switches(&self, o: &OracleCall, a: &Call, index: usize) -> bool {
        let switches: Vec<&String> = self
            .linter
            .facts(&a.tool)
            .into_iter()
            .flat_map(|(_, f)| f.effects.iter().flat_map(|e| e.when.keys()))
            .collect();
        self.compare(o, a, index)
            .iter()
            .filter(|(_, bad)| bad.is_some())
            .all(|(p, _)| switches.contains(&p))
    }

    /// What a call makes, as a finding words it, when the matrix says it makes media or
    /// files: "makes media (video, audio)", "writes a file".
    fn makes(&self, call: &Call) -> Option<String> {
        let (_, facts) = self.linter.facts(&call.tool)?;
        let mut media: Vec<&str> = Vec::new();
        let mut file = false;
        for p in &facts.produces {
            match p.kind {
                ArtifactKind::Image => media.push("image"),
                ArtifactKind::Video => media.push("video"),
                ArtifactKind::Audio => media.push("audio"),
                ArtifactKind::File => file = true,
                _ => {}
            }
        }
        media.dedup();
        if !media.is_empty() {
            Some(format!("makes media ({})", media.join(", ")))
        } else {
            file.then(|| "writes a file".to_owned())
        }
    }

    /// The argument sub-dimensions of an unrequested call: as for a pair, but with no correct
    /// value (the cascade then takes type, format and relevancy).
    fn unrequested_arguments(&self, a: &Call, index: usize) -> BTreeMap<SubDimension, f64> {
        let none = OracleCall {
            call: a.clone(),
            quick_explanation: None,
            match_policies: a
                .args()
                .keys()
                .map(|k| (k.clone(), MatchPolicy::Ignore))
                .collect(),
            mock_output: None,
            grounding: None,
            alternatives: Vec::new(),
            optional: false,
            min: 1,
            max: Some(1),
            branch: None,
            literal: Vec::new(),
        };
        let mut s = self.arguments(&none, a, index, &mut Vec::new());
        for d in [
            SubDimension::ArgumentValue,
            SubDimension::ArgumentType,
            SubDimension::ArgumentFormat,
            SubDimension::ArgumentRelevancy,
        ] {
            s.insert(d, 0.0);
        }
        s
    }

    fn has(&self, index: usize, codes: &[Code]) -> bool {
        self.findings
            .iter()
            .any(|f| f.call == Some(index) && codes.contains(&f.code))
    }

    /// Same tool: 0.5 plus half the share of matching arguments. Another tool: half the share
    /// of the step's argument values (every string and number, nested ones too) the call also
    /// passes, anywhere in its arguments — a call that takes the step's inputs stands in for it
    /// (a wrong tool), anything less is unrelated.
    fn similarity(&self, o: &OracleCall, a: &Call, index: usize) -> f64 {
        if o.optional && !o.accepts_tool(&a.tool) {
            // Another tool standing in for a step the agent may skip is just another call.
            return 0.0;
        }
        if o.accepts_tool(&a.tool) {
            let compared = self.compare(o, a, index);
            let matched = compared.iter().filter(|(_, ok)| ok.is_none()).count();
            let frac = if compared.is_empty() {
                1.0
            } else {
                matched as f64 / compared.len() as f64
            };
            return 0.5 + 0.5 * frac;
        }
        let mut wanted = Vec::new();
        for (k, v) in o.call.args() {
            if !matches!(
                o.match_policies.get(k),
                Some(MatchPolicy::Ignore | MatchPolicy::Semantic)
            ) {
                scalars(v, &format!("/{}", escape(k)), Some(o), &mut wanted);
            }
        }
        if wanted.is_empty() {
            return 0.0;
        }
        let mut given = Vec::new();
        scalars(&a.arguments, "", None, &mut given);
        let shared = wanted.iter().filter(|w| given.contains(w)).count();
        let frac = shared as f64 / wanted.len() as f64;
        // Any of the step's values taken (the city a conversion was for) makes the call stand
        // in for the step; always below a call of the step's own tool (0.5 or more).
        if shared > 0 { 0.2 + 0.25 * frac } else { 0.0 }
    }

    /// Each compared parameter and, when the call's value does not match the step's, the
    /// pointer of the first value that does not (the parameter's own, or one inside it when a
    /// policy is keyed by a pointer into it).
    fn compare(&self, o: &OracleCall, a: &Call, index: usize) -> Vec<(String, Option<String>)> {
        compare(o, a, self.linter, &|g| {
            from_output(g, |v| self.flow.produced_before(v, index))
        })
    }

    /// The six argument sub-dimensions of one pair, with the cascades applied.
    fn arguments(
        &self,
        o: &OracleCall,
        a: &Call,
        index: usize,
        out: &mut Vec<Finding>,
    ) -> BTreeMap<SubDimension, f64> {
        use SubDimension::*;
        let mine: Vec<&Finding> = self
            .findings
            .iter()
            .filter(|f| f.call == Some(index))
            .collect();
        let args = a.args();
        let n = args.len();
        let count = |codes: &[Code], only: Option<SubDimension>| -> usize {
            let mut ptrs: Vec<&str> = mine
                .iter()
                .filter(|f| codes.contains(&f.code) && only.is_none_or(|s| f.sub_dimension == s))
                .map(|f| f.pointer.split('/').nth(1).unwrap_or(""))
                .collect();
            ptrs.sort_unstable();
            ptrs.dedup();
            ptrs.len()
        };
        let frac_ok = |bad: usize| {
            if n == 0 {
                1.0
            } else {
                1.0 - (bad.min(n) as f64 / n as f64)
            }
        };
        let spec = self.linter.tool(&a.tool);
        let required: Vec<&str> = spec.map(|s| s.required().collect()).unwrap_or_default();
        // A parameter missing a required field inside it (`/relations/0/relationType`) is as
        // incomplete as a missing one.
        let mut nested: Vec<&str> = mine
            .iter()
            .filter(|f| f.code == Code::MissingRequired && f.pointer.matches('/').count() >= 2)
            .map(|f| f.pointer.split('/').nth(1).unwrap_or(""))
            .collect();
        nested.sort_unstable();
        nested.dedup();
        let whole = required
            .iter()
            .filter(|r| args.contains_key(**r) && !nested.contains(r))
            .count();
        let incomplete_optional = nested.iter().filter(|p| !required.contains(p)).count();
        let completeness = if required.is_empty() && nested.is_empty() {
            1.0
        } else {
            whole as f64 / (required.len() + incomplete_optional) as f64
        };
        // Every undeclared argument is a wrong name: a misspelling or an invention.
        let name = frac_ok(count(&[Code::UnknownParam], None));
        // A value the server rejects (or that references nothing) is not a correct value.
        let critical = mine.iter().any(|f| {
            f.severity == Severity::Error
                && !f.pointer.is_empty()
                && !matches!(f.code, Code::UnknownParam | Code::MissingRequired)
        });
        let compared = self.compare(o, a, index);
        let wrong = compared.iter().any(|(_, bad)| bad.is_some());
        let mut value = if critical {
            0.0
        } else if compared.is_empty() {
            1.0
        } else {
            compared.iter().filter(|(_, bad)| bad.is_none()).count() as f64 / compared.len() as f64
        };
        if o.accepts_tool(&a.tool) {
            for (p, bad) in &compared {
                let Some(at) = bad else { continue };
                // A value the linter or the matrix already rejects is reported once, by them.
                let flagged = mine.iter().any(|f| {
                    !f.code.as_str().starts_with("flow.")
                        && f.pointer.split('/').nth(1) == Some(escape(p).as_str())
                });
                if !flagged {
                    let got = a
                        .arguments
                        .pointer(at)
                        .map_or("nothing".to_owned(), |v| v.to_string());
                    let shown = at.trim_start_matches('/');
                    let example = o.call.arguments.pointer(at);
                    let mut f = Finding::new(
                        Code::ValueMismatch,
                        at.clone(),
                        format!(
                            "`{shown}`: {}, got {got}",
                            expectation(policy_at(o, at), example)
                        ),
                    );
                    f.call = Some(index);
                    out.push(f);
                }
            }
        }
        let mut ty = frac_ok(count(
            &[Code::Type, Code::NotInteger, Code::ArgumentsNotObject],
            None,
        ));
        let mut format = frac_ok(count(
            &[
                Code::Enum,
                Code::Format,
                Code::Range,
                Code::Schema,
                Code::InvalidFormat,
            ],
            None,
        ));
        let mut relevancy = frac_ok(count(&[Code::UnknownParam, Code::UnsupportedParam], None));
        // The paper's cascades (§4.1, Table 18's footnote): a wrong name or a missing required
        // parameter zeroes value, type and format; a wrong value zeroes type, format and
        // relevancy. A wrong value is judged per argument, as the paper has it ("a single
        // critical error collapses the argument mean"): one argument the workflow pins that
        // the call gets wrong, under its match policy, is such an error for the whole call.
        if name < 1.0 || completeness < 1.0 {
            value = 0.0;
            ty = 0.0;
            format = 0.0;
        }
        if wrong {
            value = 0.0;
        }
        if value <= 0.3 {
            ty = 0.0;
            format = 0.0;
            relevancy = 0.0;
        }
        BTreeMap::from([
            (ArgumentCompleteness, completeness),
            (ArgumentName, name),
            (ArgumentValue, value),
            (ArgumentType, ty),
            (ArgumentFormat, format),
            (ArgumentRelevancy, relevancy),
        ])
    }
}

/// What a step's policy asks of a value, for a mismatch's message: the policy that failed,
/// not only the step's example value.
fn expectation(policy: Option<&MatchPolicy>, example: Option<&Value>) -> String {
    let example = example.map_or("(any)".to_owned(), |v| v.to_string());
    match policy {
        None | Some(MatchPolicy::Exact) => format!("the workflow expects {example}"),
        Some(MatchPolicy::Absent) => "the workflow expects no value (`absent`)".to_owned(),
        Some(MatchPolicy::FromOutput) => {
            "the workflow expects a value an earlier tool output gave (`from_output`)".to_owned()
        }
        Some(MatchPolicy::Semantic) => {
            format!("the workflow expects a value of the same kind as {example} (`semantic`)")
        }
        Some(MatchPolicy::Regex(re)) => {
            format!(
                "the workflow expects a string matching `{}` (`regex`)",
                re.as_str()
            )
        }
        Some(MatchPolicy::AnyOf(a)) => {
            let options: Vec<String> = a.options.iter().map(Value::to_string).collect();
            format!(
                "the workflow expects one of {} (`any_of`)",
                options.join(", ")
            )
        }
        Some(MatchPolicy::Tolerance(t)) => {
            format!("the workflow expects {example} ± {t} (`tolerance`)")
        }
        Some(MatchPolicy::Ignore) => "any value".to_owned(),
        Some(MatchPolicy::Sql(_)) => {
            format!("the workflow expects SQL that says the same as {example} (`sql`)")
        }
    }
}

/// The parameters a step compares, sorted: its arguments and the parameters it has a match
/// policy for, except those it ignores.
pub(crate) fn compared_params(o: &OracleCall) -> Vec<&String> {
    let mut params: Vec<&String> = o.call.args().keys().collect();
    params.extend(
        o.match_policies
            .keys()
            .filter(|k| !k.starts_with('/') && !o.call.args().contains_key(*k)),
    );
    params.sort();
    params.dedup();
    params.retain(|p| !matches!(o.match_policies.get(*p), Some(MatchPolicy::Ignore)));
    params
}

/// Each parameter step `o` compares and, when call `a`'s value does not match, the pointer of
/// the first value that does not (the parameter's own, or one inside it when a policy is keyed
/// by a pointer into it). `from` decides `from_output`. The oracle's rule, shared with the
/// trajectory metrics.
pub(crate) fn compare(
    o: &OracleCall,
    a: &Call,
    linter: &Linter,
    from: &dyn Fn(&Value) -> bool,
) -> Vec<(String, Option<String>)> {
    let pointer_keys = o.match_policies.keys().any(|k| k.starts_with('/'));
    compared_params(o)
        .into_iter()
        .map(|p| {
            let selector = Some(linter).filter(|l| l.is_selector(&a.tool, p));
            let (want, got) = (o.call.args().get(p.as_str()), a.args().get(p.as_str()));
            if !pointer_keys {
                // Policies by parameter name only: one comparison, no pointer built.
                let ok = value_matches(selector, a, p, got, o.match_policies.get(p), want, from);
                return (p.clone(), (!ok).then(|| format!("/{}", escape(p))));
            }
            let cx = Cmp {
                o,
                a,
                param: p,
                selector,
                from,
            };
            let bad = deep_mismatch(
                &cx,
                &format!("/{}", escape(p)),
                o.call.args().get(p.as_str()),
                a.args().get(p.as_str()),
            );
            (p.clone(), bad)
        })
        .collect()
}

/// What one comparison of a call with a step needs, below the parameter.
pub(crate) struct Cmp<'a> {
    pub(crate) o: &'a OracleCall,
    pub(crate) a: &'a Call,
    pub(crate) param: &'a str,
    pub(crate) selector: Option<&'a Linter>,
    pub(crate) from: &'a dyn Fn(&Value) -> bool,
}

/// The policy a step sets for the value at `pointer`: a pointer key (`*` for any index) that
/// names it, or for a parameter's own value its name.
pub(crate) fn policy_at<'o>(o: &'o OracleCall, pointer: &str) -> Option<&'o MatchPolicy> {
    let generic = generalize(pointer);
    o.match_policies
        .iter()
        .find(|(k, _)| k.starts_with('/') && (**k == generic || *k == pointer))
        .map(|(_, p)| p)
        .or_else(|| {
            let name = pointer.strip_prefix('/')?;
            (!name.contains('/'))
                .then(|| {
                    o.match_policies
                        .get(&name.replace("~1", "/").replace("~0", "~"))
                })
                .flatten()
        })
}

/// Whether a pointer key lies strictly inside `pointer`.
fn policy_below(o: &OracleCall, pointer: &str) -> bool {
    let generic = format!("{}/", generalize(pointer));
    let exact = format!("{pointer}/");
    o.match_policies
        .keys()
        .any(|k| k.starts_with(&generic) || k.starts_with(&exact))
}

/// The first pointer at which the call's value (`got`) breaks the step's (`want`), `None` when
/// it matches: under the policy for the pointer, else — where pointer keys lie inside —
/// member by member and item by item, else exactly.
pub(crate) fn deep_mismatch(
    cx: &Cmp,
    at: &str,
    want: Option<&Value>,
    got: Option<&Value>,
) -> Option<String> {
    let leaf = |policy: Option<&MatchPolicy>| {
        let ok = value_matches(cx.selector, cx.a, cx.param, got, policy, want, cx.from);
        (!ok).then(|| at.to_owned())
    };
    if let Some(policy) = policy_at(cx.o, at) {
        return leaf(Some(policy));
    }
    if !policy_below(cx.o, at) {
        return leaf(None);
    }
    match (want, got) {
        (Some(Value::Object(w)), Some(Value::Object(g))) => {
            let mut keys: Vec<&String> = w.keys().chain(g.keys()).collect();
            keys.sort();
            keys.dedup();
            keys.into_iter()
                .find_map(|k| deep_mismatch(cx, &format!("{at}/{}", escape(k)), w.get(k), g.get(k)))
        }
        (Some(Value::Array(w)), Some(Value::Array(g))) if w.len() == g.len() => w
            .iter()
            .zip(g)
            .enumerate()
            .find_map(|(i, (x, y))| deep_mismatch(cx, &format!("{at}/{i}"), Some(x), Some(y))),
        _ => leaf(None),
    }
}

/// The strings and numbers in a value, skipping those a policy lets vary (`semantic`,
/// `ignore`), for [`Turn::similarity`].
fn scalars<'v>(v: &'v Value, at: &str, o: Option<&OracleCall>, out: &mut Vec<&'v Value>) {
    if matches!(
        o.and_then(|o| policy_at(o, at)),
        Some(MatchPolicy::Ignore | MatchPolicy::Semantic)
    ) {
        return;
    }
    match v {
        Value::String(_) | Value::Number(_) => out.push(v),
        Value::Array(items) => {
            for (i, item) in items.iter().enumerate() {
                scalars(item, &format!("{at}/{i}"), o, out);
            }
        }
        Value::Object(m) => {
            for (k, item) in m {
                scalars(item, &format!("{at}/{}", escape(k)), o, out);
            }
        }
        _ => {}
    }
}

/// Whether `got`, call `a`'s value of `param` (or one put in its place), matches a workflow
/// step's `want` under `policy` (absent: exact). Equal numbers match whatever their spelling,
/// and two names of one model match when `param` selects the model (`selector`: the linter,
/// when [`Linter::is_selector`] says so). `from_output` decides
/// the `from_output` policy for a present value. Shared by the scorer and the runner's fast
/// path, so both compare alike.
pub(crate) fn value_matches(
    selector: Option<&Linter>,
    a: &Call,
    param: &str,
    got: Option<&Value>,
    policy: Option<&MatchPolicy>,
    want: Option<&Value>,
    from_output: &dyn Fn(&Value) -> bool,
) -> bool {
    let same = |x: &Value, y: &Value| -> bool {
        if let (Some(linter), Some(xs), Some(ys)) = (selector, x.as_str(), y.as_str()) {
            let mut ax = a.args().clone();
            ax.insert(param.to_owned(), Value::from(xs));
            let mut ay = a.args().clone();
            ay.insert(param.to_owned(), Value::from(ys));
            if let (Some(mx), Some(my)) =
                (linter.model_of(&a.tool, &ax), linter.model_of(&a.tool, &ay))
            {
                return mx.id == my.id;
            }
        }
        match (x.as_f64(), y.as_f64()) {
            (Some(p), Some(q)) => p == q,
            _ => x == y,
        }
    };
    match (policy.unwrap_or(&MatchPolicy::Exact), got) {
        (MatchPolicy::Ignore, _) => true,
        (MatchPolicy::Absent, g) => g.is_none(),
        (MatchPolicy::AnyOf(a), None) => a.optional,
        (_, None) => false,
        (MatchPolicy::Exact, Some(g)) => want.is_some_and(|w| same(w, g)),
        (MatchPolicy::Semantic, Some(g)) => {
            want.is_none_or(|w| std::mem::discriminant(w) == std::mem::discriminant(g))
        }
        (MatchPolicy::Regex(re), Some(Value::String(s))) => re.is_match(s),
        (MatchPolicy::Regex(_), Some(_)) => false,
        (MatchPolicy::AnyOf(a), Some(g)) => a.accepts(g, &same),
        (MatchPolicy::Tolerance(tol), Some(g)) => {
            match (want.and_then(Value::as_f64), g.as_f64()) {
                (Some(w), Some(v)) => (w - v).abs() <= *tol,
                _ => false,
            }
        }
        (MatchPolicy::FromOutput, Some(g)) => from_output(g),
        (MatchPolicy::Sql(dialect), Some(Value::String(g))) => want
            .and_then(Value::as_str)
            .is_some_and(|w| crate::sql::same(w, g, dialect.as_deref())),
        (MatchPolicy::Sql(_), Some(_)) => false,
    }
}

/// `from_output`: the value — a string, a number, or every string and number in an array or
/// object — was produced by an earlier call.
pub(crate) fn from_output(g: &Value, produced_before: impl Fn(&str) -> bool) -> bool {
    let mut values = Vec::new();
    scalars(g, "", None, &mut values);
    !values.is_empty()
        && values.iter().all(|v| match v {
            Value::String(s) => produced_before(s),
            other => produced_before(&other.to_string()),
        })
}

/// Step pairs (a, b) where b must follow a: b consumes a's mock output, or every pair under
/// `order: strict`. The scorer judges these; the fast path leaves a turn with any to it.
pub(crate) fn ordered_pairs(steps: &[&OracleCall], strict: bool) -> Vec<(usize, usize)> {
    let mut out = Vec::new();
    for b in 0..steps.len() {
        for a in 0..b {
            if strict || consumes(steps[b], steps[a]) {
                out.push((a, b));
            }
        }
    }
    out
}

/// Whether step `b` takes one of step `a`'s mock-output artifacts as an argument.
fn consumes(b: &OracleCall, a: &OracleCall) -> bool {
    let Some(out) = &a.mock_output else {
        return false;
    };
    let produced = crate::flow::artifacts_of_value(out);
    let mut strings = Vec::new();
    collect_strings(&b.call.arguments, &mut strings);
    strings
        .iter()
        .any(|s| produced.contains(&crate::flow::normalize(s)))
}

fn collect_strings<'v>(v: &'v Value, out: &mut Vec<&'v str>) {
    match v {
        Value::String(s) => out.push(s),
        Value::Array(items) => items.iter().for_each(|i| collect_strings(i, out)),
        Value::Object(m) => m.values().for_each(|i| collect_strings(i, out)),
        _ => {}
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::harness::Harness;
    use crate::source::SourceFile;
    use crate::spec::ToolSet;

    const TOOLS: &str = r#"[{"name": "paint", "inputSchema": {"type": "object", "required": ["prompt"],
        "properties": {"prompt": {"type": "string"}, "x": {"type": "integer"}, "y": {"type": "integer"},
                       "w": {"type": "integer"}, "v": {"type": "integer"}}}}]"#;

    struct Case {
        linter: Linter,
        harness: Harness,
    }

    fn case(workflow: &str) -> Case {
        let spec = ToolSet::from_json(&serde_json::from_str(TOOLS).unwrap()).unwrap();
        let linter = Linter::new(&spec, vec![]).unwrap();
        let text = format!(
            "scenarios:\n  - id: s\n    turns:\n      - prompt: paint\n        workflow:\n{workflow}"
        );
        let harness =
            Harness::from_source(SourceFile::from_text("harnesses/t.yaml", text)).unwrap();
        Case { linter, harness }
    }

    fn run(c: &Case, calls: &str) -> (Score, Vec<Finding>) {
        let t = Transcript::from_source(
            SourceFile::from_text("t.yaml", format!("scenario: s\ncalls:\n{calls}")),
            "t".into(),
        )
        .unwrap();
        let mut findings = Vec::new();
        let mut failed = Vec::new();
        for (i, (_, call)) in t.calls().enumerate() {
            let f = c.linter.lint(&call.tool, &call.arguments);
            failed.push(f.iter().any(|f| f.severity == Severity::Error));
            findings.extend(f.into_iter().map(|mut f| {
                f.call = Some(i);
                f
            }));
        }
        let flow = crate::flow::analyze(&t, c.harness.scenario("s"), &c.linter, &failed);
        let (score, _, oracle) = score(
            &t,
            c.harness.scenario("s").unwrap(),
            &c.linter,
            &flow,
            &findings,
        );
        (score, oracle)
    }

    fn close(a: f64, b: f64) -> bool {
        (a - b).abs() < 1e-9
    }

    /// Step 0 matches call 0 perfectly, so greedy pairs them and leaves step 1 with call 1,
    /// which shares nothing with it (total argument agreement 1 + 0). The optimum pairs step 0
    /// with call 1 (3/4) and step 1 with call 0 (2/3), 1.417 in all: one mismatch per call.
    #[test]
    fn optimal_pairing_where_greedy_goes_wrong() {
        let c = case(concat!(
            "          - {tool: paint, arguments: {x: 1, y: 1, w: 1, v: 1}}\n",
            "          - {tool: paint, arguments: {x: 2, w: 1, v: 1}}\n",
        ));
        let (_, findings) = run(
            &c,
            "  - {tool: paint, arguments: {prompt: p, x: 1, y: 1, w: 1, v: 1}}\n  - {tool: paint, arguments: {prompt: p, x: 1, y: 1, w: 1, v: 0}}\n",
        );
        let mut mismatches: Vec<(Option<usize>, &str)> = findings
            .iter()
            .filter(|f| f.code == Code::ValueMismatch)
            .map(|f| (f.call, f.pointer.as_str()))
            .collect();
        mismatches.sort();
        // Greedy would give [(1, "/v"), (1, "/w"), (1, "/x")] (or similar) and nothing on call 0.
        assert_eq!(mismatches, [(Some(0), "/x"), (Some(1), "/v")]);
    }

    /// One call, one of three compared values wrong under `exact` (not a rejected value). The
    /// paper's cascade is per argument: the wrong one is a critical error, so value, type,
    /// format and relevancy go to 0: arguments (1+1+0+0+0+0)/6 = 1/3. The call did something
    /// else than the step, which is left undone: selection (1+1+0)/3. TC (1 + 2/3 + 1/3)/3 =
    /// 0.667 (before the per-argument reading: value 2/3, the step done, TC 0.981 — a pinned
    /// value sent wrong passed).
    #[test]
    fn hand_computed_single_call() {
        let c = case("          - {tool: paint, arguments: {prompt: p, x: 1, y: 2}}\n");
        let (s, findings) = run(
            &c,
            "  - {tool: paint, arguments: {prompt: p, x: 1, y: 3}}\n",
        );
        use SubDimension::*;
        let got: Vec<f64> = SubDimension::ARGUMENTS.iter().map(|d| s.sub[d]).collect();
        assert_eq!(got, [1.0, 1.0, 0.0, 0.0, 0.0, 0.0]);
        assert!(close(s.arguments, 1.0 / 3.0));
        assert_eq!(s.sub[&SelectionCompleteness], 0.0);
        assert!(close(s.tc, (1.0 + 2.0 / 3.0 + 1.0 / 3.0) / 3.0), "{}", s.tc);
        assert_eq!(s.ordering, None, "one call: ordering is not applicable");
        assert_eq!(
            findings
                .iter()
                .map(|f| (f.code, f.pointer.as_str()))
                .collect::<Vec<_>>(),
            [(Code::ValueMismatch, "/y")]
        );
    }

    /// A wrong name and the missing required parameter it stood for: name accuracy 1/2,
    /// completeness 0, then the first cascade zeroes value, type and format, and the second
    /// relevancy. A rejected call leaves its step undone (selection completeness 0).
    #[test]
    fn cascades() {
        let c = case(
            "          - {tool: paint, arguments: {prompt: p, x: 1}, match: {prompt: semantic}}\n",
        );
        let (s, _) = run(&c, "  - {tool: paint, arguments: {promt: p, x: 1}}\n");
        use SubDimension::*;
        let got: Vec<f64> = SubDimension::ARGUMENTS.iter().map(|d| s.sub[d]).collect();
        assert_eq!(got, [0.0, 0.5, 0.0, 0.0, 0.0, 0.0]);
        assert_eq!(s.sub[&SelectionCompleteness], 0.0);
        assert!(close(s.tc, (1.0 + 2.0 / 3.0 + 0.5 / 6.0) / 3.0), "{}", s.tc);
    }

    #[test]
    fn missing_and_extra_calls() {
        let c = case(
            "          - {tool: paint, arguments: {prompt: a}}\n          - {tool: paint, arguments: {prompt: b, x: 5}}\n",
        );
        let (s, findings) = run(&c, "  - {tool: paint, arguments: {prompt: a}}\n");
        assert_eq!(
            findings
                .iter()
                .filter(|f| f.code == Code::MissingCall)
                .count(),
            1
        );
        let missing = findings
            .iter()
            .find(|f| f.code == Code::MissingCall)
            .unwrap();
        assert_eq!(
            missing.location.as_ref().map(|l| l.line),
            Some(7),
            "points at the workflow step in the harness"
        );
        // One of two steps done, but a step never called is a critical error: completeness
        // collapses, and the missing step's arguments (never provided) collapse the argument
        // dimension.
        assert_eq!(s.sub[&SubDimension::SelectionCompleteness], 0.0);
        assert!(close(s.arguments, 1.0 / 6.0), "{}", s.arguments);
    }

    #[test]
    fn semantic_tolerance_regex_any_of() {
        let c = case(concat!(
            "          - tool: paint\n",
            "            arguments: {prompt: a red cat, x: 10, y: 1, w: 7}\n",
            "            match: {prompt: semantic, x: {tolerance: 2}, y: {any_of: [1, 2]}, w: {regex: '^7$'}}\n",
        ));
        let (s, findings) = run(
            &c,
            "  - {tool: paint, arguments: {prompt: a crimson cat, x: 11, y: 2, w: 7}}\n",
        );
        // `regex` on an integer does not match: w is the one mismatch, and collapses the call.
        assert_eq!(
            findings
                .iter()
                .map(|f| f.pointer.as_str())
                .collect::<Vec<_>>(),
            ["/w"]
        );
        assert_eq!(s.sub[&SubDimension::ArgumentValue], 0.0);
        let (s, findings) = run(
            &c,
            "  - {tool: paint, arguments: {prompt: a crimson cat, x: 11, y: 2, w: 8}}\n",
        );
        assert_eq!(findings.len(), 1, "{findings:?}");
        assert_eq!(s.sub[&SubDimension::ArgumentValue], 0.0);
    }
}
