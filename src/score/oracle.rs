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
use crate::flow::Flow;
use crate::harness::{Call, MatchPolicy, OracleCall, Scenario, Transcript};
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
    let mut out = Vec::new();
    let mut turns = Vec::new();
    let mut first_index = 0;
    for (ti, st) in sc.turns.iter().enumerate() {
        let calls: Vec<&Call> = t
            .turns
            .get(ti)
            .map(|tt| tt.calls.iter().collect())
            .unwrap_or_default();
        let cx = Turn {
            first: first_index,
            calls: &calls,
            steps: &st.workflow,
            linter,
            flow,
            findings,
        };
        let (s, f) = cx.score(st.order_strict);
        turns.push(s);
        out.extend(f);
        first_index += calls.len();
    }
    let total = Score::mean(&turns).unwrap_or_else(|| Score::from_sub(BTreeMap::new()));
    (total, turns, out)
}

struct Turn<'a> {
    /// Transcript-wide index of this turn's first call.
    first: usize,
    calls: &'a [&'a Call],
    steps: &'a [OracleCall],
    linter: &'a Linter,
    flow: &'a Flow,
    findings: &'a [Finding],
}

impl Turn<'_> {
    fn score(&self, strict: bool) -> (Score, Vec<Finding>) {
        use SubDimension::*;
        let mut out = Vec::new();
        let (steps, calls) = (self.steps, self.calls);
        // Pair steps with calls.
        let sim: Vec<Vec<f64>> = steps
            .iter()
            .map(|o| {
                calls
                    .iter()
                    .enumerate()
                    .map(|(j, a)| self.similarity(o, a, self.first + j))
                    .collect()
            })
            .collect();
        let pairing: Vec<Option<usize>> = assign(&sim)
            .into_iter()
            .enumerate()
            .map(|(i, j)| j.filter(|&j| sim[i][j] >= 0.25))
            .collect();
        let mut step_of = vec![None; calls.len()];
        for (i, j) in pairing.iter().enumerate() {
            if let Some(j) = j {
                step_of[*j] = Some(i);
            }
        }
        let failed = |j: usize| {
            self.flow
                .calls
                .get(self.first + j)
                .is_some_and(|c| c.failed)
        };

        let mut sub = BTreeMap::new();
        // usage
        sub.insert(
            UsageNecessity,
            if steps.is_empty() == calls.is_empty() {
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
        let mut pool: Vec<&str> = steps.iter().map(|o| o.call.tool.as_str()).collect();
        let mut right_tool = 0;
        for c in calls {
            if let Some(k) = pool.iter().position(|t| *t == c.tool) {
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
            .filter(|(i, j)| steps[*i].call.tool == calls[*j].tool)
            .count();
        sub.insert(
            SelectionSpecificity,
            ratio(
                same_tool,
                pairs.len(),
                if steps.is_empty() { 1.0 } else { 0.0 },
            ),
        );
        let done = pairs
            .iter()
            .filter(|(i, j)| steps[*i].call.tool == calls[*j].tool && !failed(*j))
            .count();
        sub.insert(SelectionCompleteness, ratio(done, steps.len(), 1.0));
        // ordering
        if calls.len() >= 2 {
            let ordered = ordered_pairs(self.steps, strict);
            let judged: Vec<(usize, usize)> = ordered
                .into_iter()
                .filter(|(a, b)| pairing[*a].is_some() && pairing[*b].is_some())
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
                        "`{}` runs before `{}`, which the workflow puts first",
                        calls[j].tool, steps[*a].call.tool
                    ),
                );
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
            let grounded = with_refs
                .iter()
                .filter(|j| {
                    !self.has(
                        self.first + **j,
                        &[
                            Code::UnknownReference,
                            Code::UseBeforeProduce,
                            Code::FailedDependency,
                        ],
                    )
                })
                .count();
            sub.insert(OrderingDependency, ratio(grounded, with_refs.len(), 1.0));
            // Work that did nothing for the user: unrequested, redundant or failed calls.
            let wasted = (0..calls.len())
                .filter(|j| {
                    step_of[*j].is_none()
                        || failed(*j)
                        || self.has(self.first + j, &[Code::RedundantCall])
                })
                .count();
            sub.insert(OrderingEfficiency, 1.0 - ratio(wasted, calls.len(), 0.0));
        }
        // arguments: the weakest pair
        let mut weakest: Option<BTreeMap<SubDimension, f64>> = None;
        for (i, j) in &pairs {
            let a = self.arguments(&steps[*i], calls[*j], self.first + *j, &mut out);
            let mean = a.values().sum::<f64>() / a.len() as f64;
            if weakest
                .as_ref()
                .is_none_or(|w| mean < w.values().sum::<f64>() / w.len() as f64)
            {
                weakest = Some(a);
            }
        }
        // A call that makes media no step asks for has no correct values: nobody asked for any.
        for &j in &extra {
            if self.makes_media(calls[j]) {
                let a = self.unrequested_arguments(calls[j], self.first + j);
                let mean = a.values().sum::<f64>() / a.len() as f64;
                if weakest
                    .as_ref()
                    .is_none_or(|w| mean < w.values().sum::<f64>() / w.len() as f64)
                {
                    weakest = Some(a);
                }
            }
        }
        let args = weakest.unwrap_or_else(|| {
            let v = if steps.is_empty() && calls.is_empty() {
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

        // findings: wrong tools, missing steps, unrequested calls
        for (i, j) in &pairs {
            if steps[*i].call.tool != calls[*j].tool {
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
            }
        }
        for (i, j) in pairing.iter().enumerate() {
            if j.is_none() {
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
            let mut f = if self.makes_media(calls[j]) {
                Finding::new(
                    Code::UnrequestedCall,
                    "",
                    format!(
                        "`{}` makes media no step of the workflow asks for",
                        calls[j].tool
                    ),
                )
            } else {
                Finding::new(
                    Code::ExtraCall,
                    "",
                    format!("`{}` is not a step of the workflow", calls[j].tool),
                )
            };
            f.call = Some(self.first + j);
            out.push(f);
        }
        (Score::from_sub(sub), out)
    }

    fn makes_media(&self, call: &Call) -> bool {
        self.linter.facts(&call.tool).is_some_and(|(_, f)| {
            f.produces.iter().any(|p| {
                matches!(
                    p.kind,
                    ArtifactKind::Image
                        | ArtifactKind::Video
                        | ArtifactKind::Audio
                        | ArtifactKind::File
                )
            })
        })
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
    /// of the step's argument values the call also passes, under any name — a call that takes
    /// the step's inputs stands in for it (a wrong tool), anything less is unrelated.
    fn similarity(&self, o: &OracleCall, a: &Call, index: usize) -> f64 {
        if o.call.tool == a.tool {
            let compared = self.compare(o, a, index);
            let matched = compared.iter().filter(|(_, ok)| *ok).count();
            let frac = if compared.is_empty() {
                1.0
            } else {
                matched as f64 / compared.len() as f64
            };
            return 0.5 + 0.5 * frac;
        }
        let wanted: Vec<&Value> = o
            .call
            .args()
            .iter()
            .filter(|(k, _)| {
                !matches!(
                    o.match_policies.get(*k),
                    Some(MatchPolicy::Ignore | MatchPolicy::Semantic)
                )
            })
            .map(|(_, v)| v)
            .collect();
        if wanted.is_empty() {
            return 0.0;
        }
        let given: Vec<&Value> = a.args().values().collect();
        let shared = wanted.iter().filter(|w| given.contains(w)).count();
        let frac = shared as f64 / wanted.len() as f64;
        if frac >= 0.5 { 0.5 * frac } else { 0.0 }
    }

    /// Each compared parameter and whether the call's value matches the step's.
    fn compare(&self, o: &OracleCall, a: &Call, index: usize) -> Vec<(String, bool)> {
        compared_params(o)
            .into_iter()
            .map(|p| {
                let ok = value_matches(
                    Some(self.linter).filter(|l| l.is_selector(&a.tool, p)),
                    a,
                    p,
                    a.args().get(p.as_str()),
                    o.match_policies.get(p),
                    o.call.args().get(p),
                    &|g| from_output(g, |v| self.flow.produced_before(v, index)),
                );
                (p.clone(), ok)
            })
            .collect()
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
        let present = required.iter().filter(|r| args.contains_key(**r)).count();
        let completeness = if required.is_empty() {
            1.0
        } else {
            present as f64 / required.len() as f64
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
        let mut value = if critical {
            0.0
        } else if compared.is_empty() {
            1.0
        } else {
            compared.iter().filter(|(_, ok)| *ok).count() as f64 / compared.len() as f64
        };
        if o.call.tool == a.tool {
            for (p, ok) in &compared {
                let flagged = mine
                    .iter()
                    .any(|f| f.pointer.split('/').nth(1) == Some(p.as_str()));
                if !ok && !flagged {
                    let want = match o.match_policies.get(p) {
                        Some(MatchPolicy::Absent) => "no value".to_owned(),
                        _ => o
                            .call
                            .args()
                            .get(p)
                            .map_or("(any)".to_owned(), |v| v.to_string()),
                    };
                    let got = args.get(p).map_or("nothing".to_owned(), |v| v.to_string());
                    let mut f = Finding::new(
                        Code::ValueMismatch,
                        format!("/{p}"),
                        format!("`{p}`: the workflow expects {want}, got {got}"),
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
        // The paper's cascades (Table 18, footnote).
        if name < 1.0 || completeness < 1.0 {
            value = 0.0;
            ty = 0.0;
            format = 0.0;
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

/// The parameters a step compares, sorted: its arguments and the parameters it has a match
/// policy for, except those it ignores.
pub(crate) fn compared_params(o: &OracleCall) -> Vec<&String> {
    let mut params: Vec<&String> = o.call.args().keys().collect();
    params.extend(
        o.match_policies
            .keys()
            .filter(|k| !o.call.args().contains_key(*k)),
    );
    params.sort();
    params.dedup();
    params.retain(|p| !matches!(o.match_policies.get(*p), Some(MatchPolicy::Ignore)));
    params
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
    }
}

/// `from_output`: the value (a string, or an array of strings) was produced by an earlier call.
fn from_output(g: &Value, produced_before: impl Fn(&str) -> bool) -> bool {
    let values: Vec<&str> = match g {
        Value::String(s) => vec![s.as_str()],
        Value::Array(items) => items.iter().filter_map(Value::as_str).collect(),
        _ => Vec::new(),
    };
    !values.is_empty() && values.iter().all(|v| produced_before(v))
}

/// Step pairs (a, b) where b must follow a: b consumes a's mock output, or every pair under
/// `order: strict`. The scorer judges these; the fast path leaves a turn with any to it.
pub(crate) fn ordered_pairs(steps: &[OracleCall], strict: bool) -> Vec<(usize, usize)> {
    let mut out = Vec::new();
    for b in 0..steps.len() {
        for a in 0..b {
            if strict || consumes(&steps[b], &steps[a]) {
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

    /// One call, one of three compared values wrong under `exact` (not a rejected value): value
    /// accuracy 2/3, no cascade. Arguments (1+1+2/3+1+1+1)/6 = 0.9444; TC (1 + 1 + 0.9444)/3.
    #[test]
    fn hand_computed_single_call() {
        let c = case("          - {tool: paint, arguments: {prompt: p, x: 1, y: 2}}\n");
        let (s, findings) = run(
            &c,
            "  - {tool: paint, arguments: {prompt: p, x: 1, y: 3}}\n",
        );
        assert!(close(s.sub[&SubDimension::ArgumentValue], 2.0 / 3.0));
        assert!(close(s.arguments, (5.0 + 2.0 / 3.0) / 6.0));
        assert!(
            close(s.tc, (2.0 + (5.0 + 2.0 / 3.0) / 6.0) / 3.0),
            "{}",
            s.tc
        );
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
        assert!(close(s.sub[&SubDimension::SelectionCompleteness], 0.5));
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
        // `regex` on an integer does not match: w is the one mismatch.
        assert_eq!(
            findings
                .iter()
                .map(|f| f.pointer.as_str())
                .collect::<Vec<_>>(),
            ["/w"]
        );
        assert!(close(s.sub[&SubDimension::ArgumentValue], 0.75));
    }
}
