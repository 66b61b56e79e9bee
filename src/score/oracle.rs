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
use smallvec::SmallVec;

use super::Score;
use super::pairing::{Steps, TurnFacts, scalars};
use super::turn::Turn;
use crate::finding::{Code, Finding, Severity};
use crate::flow::{Flow, generalize};
use crate::harness::{Call, MatchPolicy, OracleCall, Scenario, Times, Transcript};
use crate::hash::{Exact, StepKey, name_hash, value_hash};
use crate::lint::Linter;
use crate::source::json::child;

/// Scores a transcript against its scenario. `findings` are the linter's and the flow
/// engine's, with `call` set. Returns the conversation score, each turn's, and the oracle's
/// own findings.
pub fn score(
    t: &Transcript,
    sc: &Scenario,
    linter: &Linter,
    flow: &Flow<'_>,
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
    flow: &Flow<'_>,
    findings: &[Finding],
    severity: &BTreeMap<Code, Severity>,
) -> (Score, Vec<Score>, Vec<Finding>) {
    let flat: Vec<&Call> = t.calls().map(|(_, c)| c).collect();
    let calls = per_turn(&flat, t, sc.turns.len());
    let own = super::own::Own::none();
    let facts = facts(sc, &calls, &own, linter, flow, findings);
    score_facts(&facts, sc, severity)
}

/// Each of the scenario's first `turns` turns' calls in transcript `t`, as slices of `flat`
/// (`t`'s calls in order, collected once; a turn the transcript lacks has none).
pub(crate) fn per_turn<'c>(
    flat: &'c [&'c Call],
    t: &Transcript,
    turns: usize,
) -> SmallVec<[&'c [&'c Call]; 4]> {
    let mut start = 0;
    (0..turns)
        .map(|ti| {
            let n = t.turns.get(ti).map_or(0, |tt| tt.calls.len());
            start += n;
            &flat[start - n..start]
        })
        .collect()
}

/// Each turn's [`TurnFacts`]: `calls` the transcript's calls per scenario turn (none for a
/// turn it did not reach); `own`, which of them are their steps' own calls.
pub(crate) fn facts<'a>(
    sc: &'a Scenario,
    calls: &'a [&'a [&'a Call]],
    own: &'a super::own::Own<'a>,
    linter: &'a Linter,
    flow: &'a Flow<'a>,
    findings: &'a [Finding],
) -> Vec<TurnFacts<'a>> {
    let mut first = 0;
    sc.turns
        .iter()
        .zip(calls)
        .enumerate()
        .map(|(ti, (st, calls))| {
            let steps = Steps {
                workflow: &st.workflow,
                params: compared_in(sc, ti),
                keys: step_keys(sc, ti),
                own: own.turn(ti, first, calls.len()),
            };
            let f = TurnFacts::new(first, calls, steps, linter, flow, findings);
            first += calls.len();
            f
        })
        .collect()
}

/// The conversation score, each turn's, and the oracle's findings, from the turns' facts.
pub(crate) fn score_facts(
    facts: &[TurnFacts],
    sc: &Scenario,
    severity: &BTreeMap<Code, Severity>,
) -> (Score, Vec<Score>, Vec<Finding>) {
    let mut out = Vec::new();
    let mut turns = Vec::with_capacity(sc.turns.len());
    for (ti, (st, f)) in sc.turns.iter().zip(facts).enumerate() {
        let (s, found) = score_turn(f, st, variants(sc, ti), consumed(sc, ti), severity);
        turns.push(s);
        out.extend(found);
    }
    let total = Score::mean(&turns).unwrap_or_else(|| Score::from_sub(super::SubScores::new()));
    (total, turns, out)
}

/// One turn's score and findings: one score per way the workflow allows (`any_of:` lists,
/// repeats), the best standing (no error first, then the higher TC).
pub(crate) fn score_turn(
    facts: &TurnFacts,
    st: &crate::harness::Turn,
    variants: &[Vec<usize>],
    consumed: &[Vec<usize>],
    severity: &BTreeMap<Code, Severity>,
) -> (Score, Vec<Finding>) {
    let errors = |f: &[Finding]| f.iter().filter(|f| f.severity == Severity::Error).count();
    let mut best: Option<(Score, Vec<Finding>)> = None;
    for variant in variants {
        let (steps, optional) = expand(facts, variant);
        let cx = Turn {
            facts,
            after: after(&steps, consumed),
            steps: &steps,
            optional: &optional,
            forbid: &st.forbid,
            severity,
        };
        let (s, f) = cx.score(st.order_strict);
        let better = best
            .as_ref()
            .is_none_or(|(bs, bf)| (errors(&f) == 0, s.tc) > (errors(bf) == 0, bs.tc));
        if better {
            best = Some((s, f));
        }
    }
    best.expect("a turn has at least one variant")
}

/// A variant's steps (workflow indices), each repeated as its `count`/`min`/`max` allow (as
/// many times as the turn has calls of its tools, within bounds), and whether each copy may
/// be left out.
fn expand(facts: &TurnFacts, variant: &[usize]) -> (SmallVec<[usize; 8]>, SmallVec<[bool; 8]>) {
    let mut steps = SmallVec::with_capacity(variant.len());
    let mut optional = SmallVec::with_capacity(variant.len());
    for &i in variant {
        let o = &facts.workflow[i];
        let copies = match o.max {
            // A step bounded at its least (a plain step: once) takes that many, however many
            // calls its tools made: none counted.
            Some(max) if max <= o.min => o.min,
            max => facts
                .calls_of(o)
                .clamp(o.min, max.unwrap_or(u32::MAX).max(o.min)),
        };
        for k in 0..copies {
            steps.push(i);
            optional.push(o.optional || k >= o.min);
        }
    }
    (steps, optional)
}

/// Per expanded step `b`, the earlier expanded steps whose mock output it consumes (in
/// order), from the scenario's compiled [`consumed`] relation: linear in the pairs found;
/// none at all (an empty list) when no step consumes another's output.
fn after(steps: &[usize], consumed: &[Vec<usize>]) -> Vec<Vec<usize>> {
    // The usual turn consumes nothing: no index of copies to build, nothing allocated.
    if steps
        .iter()
        .all(|&w| consumed.get(w).is_none_or(Vec::is_empty))
    {
        return Vec::new();
    }
    let mut copies: BTreeMap<usize, Vec<usize>> = BTreeMap::new();
    for (k, &w) in steps.iter().enumerate() {
        copies.entry(w).or_default().push(k);
    }
    steps
        .iter()
        .enumerate()
        .map(|(b, &w)| {
            let mut before: Vec<usize> = consumed
                .get(w)
                .into_iter()
                .flatten()
                .flat_map(|a| copies.get(a).into_iter().flatten().copied())
                .filter(|&a| a < b)
                .collect();
            before.sort_unstable();
            before
        })
        .collect()
}

/// Per turn of the scenario, per workflow step `b`, the earlier steps of the turn whose mock
/// output `b` takes as an argument (then `b` must follow them; under `order: strict` every
/// step must follow every earlier one, and the fast path leaves a turn with either to the
/// scorer). Compiled once per scenario:
/// the mock outputs' artifacts are found once (a regex pass each), not per step pair of every
/// transcript (issue 31).
pub(crate) fn consumed(sc: &Scenario, turn: usize) -> &[Vec<usize>] {
    let all = sc
        .compiled
        .consumed
        .get_or_init(|| sc.turns.iter().map(|t| consumed_in(&t.workflow)).collect());
    all.get(turn).map_or(&[], Vec::as_slice)
}

/// Per step list of the scenario's turn ([`variants`]), how many calls each of its steps
/// takes, worked out once per scenario: the trajectory metrics read them per transcript.
pub(crate) fn variant_times(sc: &Scenario, turn: usize) -> &[Vec<Times>] {
    let all = sc.compiled.variant_times.get_or_init(|| {
        (0..sc.turns.len())
            .map(|ti| Times::of_lists(&sc.turns[ti].workflow, variants(sc, ti)))
            .collect()
    });
    all.get(turn).map_or(&[], Vec::as_slice)
}

fn consumed_in(workflow: &[OracleCall]) -> Vec<Vec<usize>> {
    let mut producers: std::collections::HashMap<String, Vec<usize>> = Default::default();
    for (a, o) in workflow.iter().enumerate() {
        if let Some(out) = &o.mock_output {
            for artifact in crate::flow::artifacts_of_value(out) {
                producers.entry(artifact).or_default().push(a);
            }
        }
    }
    workflow
        .iter()
        .enumerate()
        .map(|(b, o)| {
            let mut strings = Vec::new();
            collect_strings(o.call.arguments(), &mut strings);
            let mut from: Vec<usize> = strings
                .iter()
                .filter_map(|s| producers.get(&crate::flow::normalize(s)))
                .flatten()
                .copied()
                .filter(|&a| a < b)
                .collect();
            from.sort_unstable();
            from.dedup();
            from
        })
        .collect()
}

/// Per workflow step of the scenario's turn `turn`, the parameters the oracle compares
/// ([`compared_params`]): compiled once per scenario, not per transcript.
pub(crate) fn compared_in(sc: &Scenario, turn: usize) -> &[Vec<Box<str>>] {
    let all = sc.compiled.compared.get_or_init(|| {
        sc.turns
            .iter()
            .map(|t| {
                let params = |o| compared_params(o).into_iter().map(|p| p.as_str().into());
                t.workflow.iter().map(|o| params(o).collect()).collect()
            })
            .collect()
    });
    all.get(turn).map_or(&[], Vec::as_slice)
}

/// Per workflow step of the scenario's turn `turn`, its values hashed ([`StepKey`]): its
/// arguments, and each parameter it compares exactly (no pointer-keyed policy, the policy
/// `exact` or none), in [`compared_in`]'s order. Compiled once per scenario.
pub(crate) fn step_keys(sc: &Scenario, turn: usize) -> &[StepKey] {
    let all = sc.compiled.keys.get_or_init(|| {
        sc.turns
            .iter()
            .enumerate()
            .map(|(ti, t)| {
                let params = compared_in(sc, ti);
                t.workflow
                    .iter()
                    .zip(params)
                    .map(|(o, ps)| step_key(o, ps))
                    .collect()
            })
            .collect()
    });
    all.get(turn).map_or(&[], Vec::as_slice)
}

fn step_key(o: &OracleCall, params: &[Box<str>]) -> StepKey {
    let pointer_keys = o.match_policies.keys().any(|k| k.starts_with('/'));
    let exact = |p: &str| match o.match_policies.get(p) {
        _ if pointer_keys => Exact::Compared,
        None | Some(MatchPolicy::Exact) => {
            o.call.args().get(p).map_or(Exact::Absent, |v| Exact::Hash {
                name: name_hash(p),
                value: value_hash(v),
                want: v.clone(),
            })
        }
        Some(_) => Exact::Compared,
    };
    StepKey {
        arguments: value_hash(o.call.arguments()),
        exact: params.iter().map(|p| exact(p)).collect(),
    }
}

/// Per turn of the scenario, its step lists ([`crate::harness::Turn::variants`]), worked out
/// once per scenario: the oracle and the trajectory metrics both walk them per transcript.
pub(crate) fn variants(sc: &Scenario, turn: usize) -> &[Vec<usize>] {
    let all = sc
        .compiled
        .variants
        .get_or_init(|| sc.turns.iter().map(|t| t.variants()).collect());
    all.get(turn).map_or(&[], Vec::as_slice)
}

/// What a step's policy asks of a value, for a mismatch's message, written onto `out`: the
/// policy that failed, not only the step's example value.
pub(crate) fn expectation(policy: Option<&MatchPolicy>, example: Option<&Value>, out: &mut String) {
    use std::fmt::Write;
    // (The example written out only where the wording shows it, every piece straight onto
    // the finding's one string.)
    let example = |out: &mut String| match example {
        Some(v) => crate::source::json::push_text(out, v),
        None => out.push_str("(any)"),
    };
    match policy {
        None | Some(MatchPolicy::Exact) => {
            out.push_str("the workflow expects ");
            example(out);
        }
        Some(MatchPolicy::Absent) => out.push_str("the workflow expects no value (`absent`)"),
        Some(MatchPolicy::FromOutput) => {
            out.push_str("the workflow expects a value an earlier tool output gave (`from_output`)")
        }
        Some(MatchPolicy::Semantic) => {
            out.push_str("the workflow expects a value of the same kind as ");
            example(out);
            out.push_str(" (`semantic`)");
        }
        Some(MatchPolicy::Regex(re, not)) => {
            out.push_str("the workflow expects a string matching `");
            out.push_str(re.as_str());
            if let Some(not) = not {
                out.push_str("` and not `");
                out.push_str(not.as_str());
            }
            out.push_str("` (`regex`)");
        }
        Some(MatchPolicy::AnyOf(a)) => {
            out.push_str("the workflow expects one of ");
            for (i, option) in a.options.iter().enumerate() {
                if i > 0 {
                    out.push_str(", ");
                }
                crate::source::json::push_text(out, option);
            }
            out.push_str(" (`any_of`)");
        }
        Some(MatchPolicy::Tolerance(t)) => {
            out.push_str("the workflow expects ");
            example(out);
            let _ = write!(out, " ± {t} (`tolerance`)");
        }
        Some(MatchPolicy::Ignore) => out.push_str("any value"),
        Some(MatchPolicy::Unordered) => {
            out.push_str("the workflow expects the items of ");
            example(out);
            out.push_str(" in any order (`unordered`)");
        }
        Some(MatchPolicy::Sql(_)) => {
            out.push_str("the workflow expects SQL that says the same as ");
            example(out);
            out.push_str(" (`sql`)");
        }
        Some(MatchPolicy::Path(base)) => {
            out.push_str("the workflow expects the path ");
            example(out);
            if let Some(base) = base {
                out.push_str(" (`path`, a relative one read from ");
                out.push_str(base);
                out.push(')');
            } else {
                out.push_str(" (`path`)");
            }
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
pub(crate) fn compare<'o>(
    o: &'o OracleCall,
    a: &Call,
    linter: &Linter,
    from: &dyn Fn(&Value) -> bool,
) -> Vec<(&'o str, Option<String>)> {
    compare_params(o, &compared_params(o), a, linter, from)
}

/// [`compare`] given the step's [`compared_params`] (worked out once per step).
pub(crate) fn compare_params<'o>(
    o: &'o OracleCall,
    params: &[&'o String],
    a: &Call,
    linter: &Linter,
    from: &dyn Fn(&Value) -> bool,
) -> Vec<(&'o str, Option<String>)> {
    let pair = StepCall::new(o, a, linter, from);
    params
        .iter()
        .map(|&p| (p.as_str(), pair.mismatch(p)))
        .collect()
}

/// A step and a call compared parameter by parameter: what every parameter's comparison shares,
/// worked out once.
pub(crate) struct StepCall<'a> {
    o: &'a OracleCall,
    a: &'a Call,
    linter: &'a Linter,
    /// The parameter that selects the call's model ([`Linter::selector`]).
    selector: Option<&'a str>,
    /// Decides `from_output`.
    from: &'a dyn Fn(&Value) -> bool,
    /// The step has a policy keyed by a pointer.
    pointer_keys: bool,
}

impl<'a> StepCall<'a> {
    pub(crate) fn new(
        o: &'a OracleCall,
        a: &'a Call,
        linter: &'a Linter,
        from: &'a dyn Fn(&Value) -> bool,
    ) -> Self {
        Self {
            o,
            a,
            linter,
            selector: linter.selector(&a.tool),
            from,
            // Keys in order: those that start with `/` lie together, from "/" on.
            pointer_keys: o
                .match_policies
                .range::<str, _>((std::ops::Bound::Included("/"), std::ops::Bound::Unbounded))
                .next()
                .is_some_and(|(k, _)| k.starts_with('/')),
        }
    }

    /// Where the call's value of parameter `p` first breaks the step's, `None` when it
    /// matches ([`compare_params`]' rule for one parameter).
    pub(crate) fn mismatch(&self, p: &str) -> Option<String> {
        if !self.pointer_keys {
            // Policies by parameter name only: one comparison, no pointer built unless it
            // fails.
            return (!self.matches(p)).then(|| child("", p));
        }
        let cx = Cmp {
            o: self.o,
            a: self.a,
            param: p,
            selector: self.selector_for(p),
            from: self.from,
        };
        let (want, got) = (self.o.call.args().get(p), self.a.args().get(p));
        deep_mismatch(&cx, &child("", p), want, got)
    }

    /// Whether the call's value of parameter `p` matches the step's: [`StepCall::mismatch`]
    /// is `None`, without wording where it breaks (what a similarity or a trajectory match
    /// needs).
    pub(crate) fn matches(&self, p: &str) -> bool {
        if self.pointer_keys {
            return self.mismatch(p).is_none();
        }
        let (o, a) = (self.o, self.a);
        let (want, got) = (o.call.args().get(p), a.args().get(p));
        let policy = o.match_policies.get(p);
        value_matches(self.selector_for(p), a, p, got, policy, want, self.from)
    }

    /// [`StepCall::mismatch`] of each of `params` (sorted byte-wise, as [`compared_params`]
    /// gives them), in order. Where policies are keyed by name only, the step's value, its
    /// policy and the call's value are found by one walk over each map (all three in key
    /// order), where a search per parameter compared several names each.
    pub(crate) fn mismatches<'p>(
        &self,
        params: &'p [Box<str>],
    ) -> impl Iterator<Item = (&'p str, Option<String>)> {
        debug_assert!(params.is_sorted(), "parameters in key order");
        let mut walk = KeyWalk::new(self);
        params.iter().map(move |p| {
            let bad = if self.pointer_keys {
                self.mismatch(p)
            } else {
                (!walk.matches(self, p)).then(|| child("", p))
            };
            (&**p, bad)
        })
    }

    /// Whether every one of `params` (sorted byte-wise) matches, up to the first that does
    /// not: [`StepCall::mismatches`] without wording where a value breaks.
    pub(crate) fn all_match(&self, params: &[Box<str>]) -> bool {
        debug_assert!(params.is_sorted(), "parameters in key order");
        if self.pointer_keys {
            return params.iter().all(|p| self.mismatch(p).is_none());
        }
        let mut walk = KeyWalk::new(self);
        params.iter().all(|p| walk.matches(self, p))
    }

    /// The linter, when `p` selects the call's model (two names of one model then match).
    fn selector_for(&self, p: &str) -> Option<&'a Linter> {
        Some(self.linter).filter(|_| self.selector == Some(p))
    }
}

/// A step's and a call's maps (the step's values and policies, the call's values) walked
/// together in key order, for parameters asked in that order ([`StepCall::mismatches`]).
struct KeyWalk<'a> {
    want: std::iter::Peekable<serde_json::map::Iter<'a>>,
    got: std::iter::Peekable<serde_json::map::Iter<'a>>,
    policies: std::iter::Peekable<std::collections::btree_map::Iter<'a, String, MatchPolicy>>,
}

impl<'a> KeyWalk<'a> {
    fn new(pair: &StepCall<'a>) -> Self {
        Self {
            want: pair.o.call.args().iter().peekable(),
            got: pair.a.args().iter().peekable(),
            policies: pair.o.match_policies.iter().peekable(),
        }
    }

    /// [`StepCall::matches`] of `p`, the next parameter in key order.
    fn matches(&mut self, pair: &StepCall<'a>, p: &str) -> bool {
        let (want, got) = (seek(&mut self.want, p), seek(&mut self.got, p));
        let policy = seek(&mut self.policies, p);
        value_matches(
            pair.selector_for(p),
            pair.a,
            p,
            got,
            policy,
            want,
            pair.from,
        )
    }
}

/// The value under `key` in a map walked in key order, the walk left past it: asked for keys
/// in ascending order, each map is walked once (a key before `key` is one nobody asked for).
fn seek<'m, V>(
    it: &mut std::iter::Peekable<impl Iterator<Item = (&'m String, &'m V)>>,
    key: &str,
) -> Option<&'m V> {
    while let Some(&(k, v)) = it.peek() {
        match crate::hash::order(k.as_bytes(), key.as_bytes()) {
            std::cmp::Ordering::Less => {
                it.next();
            }
            std::cmp::Ordering::Equal => {
                it.next();
                return Some(v);
            }
            std::cmp::Ordering::Greater => return None,
        }
    }
    None
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
    if o.match_policies.is_empty() {
        return None;
    }
    // A pointer key, if the step has any (the pointer generalised only then: it allocates).
    let mut keyed = o
        .match_policies
        .iter()
        .filter(|(k, _)| k.starts_with('/'))
        .peekable();
    let generic = keyed.peek().map(|_| generalize(pointer));
    keyed
        .find(|(k, _)| Some(*k) == generic.as_ref() || *k == pointer)
        .map(|(_, p)| p)
        .or_else(|| {
            let name = pointer.strip_prefix('/')?;
            (!name.contains('/'))
                .then(|| o.match_policies.get(&*crate::source::json::unescape(name)))
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
        // The step's items in any order, each under the policies below it.
        if let (MatchPolicy::Unordered, Some(Value::Array(w)), Some(Value::Array(g))) =
            (policy, want, got)
        {
            let fits = |i: usize, j: usize| {
                deep_mismatch(cx, &format!("{at}/{i}"), Some(&w[i]), Some(&g[j])).is_none()
            };
            return (w.len() != g.len() || !pair_all(w.len(), fits)).then(|| at.to_owned());
        }
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
                .find_map(|k| deep_mismatch(cx, &child(at, k), w.get(k), g.get(k)))
        }
        (Some(Value::Array(w)), Some(Value::Array(g))) if w.len() == g.len() => w
            .iter()
            .zip(g)
            .enumerate()
            .find_map(|(i, (x, y))| deep_mismatch(cx, &format!("{at}/{i}"), Some(x), Some(y))),
        _ => leaf(None),
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
        same_value(x, y)
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
        (MatchPolicy::Regex(re, not), Some(Value::String(s))) => {
            re.is_match(s) && not.as_ref().is_none_or(|n| !n.is_match(s))
        }
        (MatchPolicy::Regex(..), Some(_)) => false,
        (MatchPolicy::AnyOf(a), Some(g)) => a.accepts(g, &same),
        (MatchPolicy::Tolerance(tol), Some(g)) => {
            match (want.and_then(Value::as_f64), g.as_f64()) {
                (Some(w), Some(v)) => (w - v).abs() <= *tol,
                _ => false,
            }
        }
        (MatchPolicy::FromOutput, Some(g)) => from_output(g),
        (MatchPolicy::Unordered, Some(g)) => match (want, g) {
            (Some(Value::Array(w)), Value::Array(g)) => {
                w.len() == g.len() && pair_all(w.len(), |i, j| same(&w[i], &g[j]))
            }
            (w, g) => w.is_some_and(|w| same(w, g)),
        },
        (MatchPolicy::Sql(dialect), Some(Value::String(g))) => want
            .and_then(Value::as_str)
            .is_some_and(|w| crate::sql::same(w, g, dialect.as_deref())),
        (MatchPolicy::Sql(_), Some(_)) => false,
        (MatchPolicy::Path(base), Some(Value::String(g))) => want
            .and_then(Value::as_str)
            .is_some_and(|w| crate::harness::same_path_from(base.as_deref(), w, g)),
        (MatchPolicy::Path(_), Some(_)) => false,
    }
}

/// Whether `n` items pair one to one with `n` others, `fits(i, j)` saying whether item `i`
/// may pair with other `j` (`unordered`): in order when each fits the one at its place (one
/// question an item), else when the optimal assignment ([`super::hungarian::assign`]) of the
/// fits pairs every item (each fit asked once: n² questions, n³ steps).
fn pair_all(n: usize, fits: impl Fn(usize, usize) -> bool) -> bool {
    if (0..n).all(|i| fits(i, i)) {
        return true;
    }
    let fit: Vec<Vec<f64>> = (0..n)
        .map(|i| (0..n).map(|j| f64::from(u8::from(fits(i, j)))).collect())
        .collect();
    super::hungarian::assign(&fit)
        .iter()
        .enumerate()
        .all(|(i, j)| j.is_some_and(|j| fit[i][j] == 1.0))
}

/// Whether two values are equal as the policy `exact` compares them (a model's two names
/// aside): numbers by value, anything else as JSON.
pub(crate) fn same_value(x: &Value, y: &Value) -> bool {
    match (x.as_f64(), y.as_f64()) {
        (Some(p), Some(q)) => p == q,
        _ => x == y,
    }
}

/// `from_output`: the value — a string, a number, or every string and number in an array or
/// object — was produced by an earlier call.
pub(crate) fn from_output(g: &Value, produced_before: impl Fn(&str) -> bool) -> bool {
    let mut values = super::pairing::Scalars::new();
    scalars(g, "", None, &mut values);
    !values.is_empty()
        && values.iter().all(|v| match v {
            Value::String(s) => produced_before(s),
            other => produced_before(&other.to_string()),
        })
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
    use crate::finding::SubDimension;
    use crate::harness::Harness;
    use crate::source::SourceFile;
    use crate::spec::ToolSet;

    const TOOLS: &str = r#"[{"name": "paint", "inputSchema": {"type": "object", "required": ["prompt"],
        "properties": {"prompt": {"type": "string"}, "x": {"type": "integer"}, "y": {"type": "integer"},
                       "w": {"type": "integer"}, "v": {"type": "integer"},
                       "tags": {"type": "array", "items": {"type": "string"}},
                       "layers": {"type": "array", "items": {"type": "object"}}}}}]"#;

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
            let f = c.linter.lint(&call.tool, call.arguments());
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

    /// Selection correctness is the share of calls of a right tool, each step's tool taken by
    /// one call: per tool, the fewer of its steps and its calls. Every workflow of up to three
    /// steps over three tools against every run of up to three calls over them, counted here
    /// independently: the turn's shortcut (each call of its place's step's tool, all calls of
    /// right tools) and its counts per tool agree with it.
    #[test]
    fn selection_correctness_takes_each_steps_tool_once() {
        const ABC: &str = r#"[{"name": "a", "inputSchema": {"type": "object"}},
            {"name": "b", "inputSchema": {"type": "object"}},
            {"name": "c", "inputSchema": {"type": "object"}}]"#;
        let spec = ToolSet::from_json(&serde_json::from_str(ABC).unwrap()).unwrap();
        let linter = Linter::new(&spec, vec![]).unwrap();
        // Every sequence of up to three of the tools.
        let names = ["a", "b", "c"];
        let mut seqs: Vec<Vec<&str>> = vec![vec![]];
        for len in 1..=3u32 {
            for k in 0..3usize.pow(len) {
                seqs.push((0..len).map(|d| names[k / 3usize.pow(d) % 3]).collect());
            }
        }
        let (mut compared, mut in_place) = (0, 0);
        for steps in seqs.iter().filter(|s| !s.is_empty()) {
            let workflow: String = steps
                .iter()
                .enumerate()
                .map(|(i, t)| format!("          - {{tool: {t}, arguments: {{n: {i}}}}}\n"))
                .collect();
            let text = format!(
                "scenarios:\n  - id: s\n    turns:\n      - prompt: go\n        workflow:\n{workflow}"
            );
            let harness =
                Harness::from_source(SourceFile::from_text("harnesses/t.yaml", text)).unwrap();
            let sc = harness.scenario("s").unwrap();
            for calls in &seqs {
                let listed: String = calls
                    .iter()
                    .map(|t| format!("\n  - {{tool: {t}, arguments: {{}}}}"))
                    .collect();
                let listed = if listed.is_empty() { " []" } else { &listed };
                let t = Transcript::from_source(
                    SourceFile::from_text("t.yaml", format!("scenario: s\ncalls:{listed}\n")),
                    "t".into(),
                )
                .unwrap();
                let failed = vec![false; calls.len()];
                let flow = crate::flow::analyze(&t, Some(sc), &linter, &failed);
                let (s, _, _) = score(&t, sc, &linter, &flow, &[]);
                let right: usize = names
                    .iter()
                    .map(|n| {
                        let of = |list: &[&str]| list.iter().filter(|t| *t == n).count();
                        of(steps).min(of(calls))
                    })
                    .sum();
                let want = if calls.is_empty() {
                    0.0
                } else {
                    right as f64 / calls.len() as f64
                };
                assert!(
                    close(s.sub[&SubDimension::SelectionCorrectness], want),
                    "steps {steps:?}, calls {calls:?}: {} not {want}",
                    s.sub[&SubDimension::SelectionCorrectness]
                );
                compared += 1;
                in_place += usize::from(steps.len() == calls.len() && steps == calls);
            }
        }
        assert_eq!(compared, 39 * 40);
        assert_eq!(in_place, 39);
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

    #[test]
    fn a_regex_with_not_refuses_what_the_second_regex_finds() {
        let c = case(concat!(
            "          - tool: paint\n",
            "            arguments: {prompt: select * from t}\n",
            "            match: {prompt: {regex: '(?i)^select\\b', not: '(?i)\\blimit\\b'}}\n",
        ));
        let call =
            |prompt: &str| format!("  - {{tool: paint, arguments: {{prompt: '{prompt}'}}}}\n");
        let (s, findings) = run(&c, &call("SELECT a FROM t ORDER BY a"));
        assert!(findings.is_empty(), "{findings:?}");
        assert_eq!(s.sub[&SubDimension::ArgumentValue], 1.0);
        let (s, findings) = run(&c, &call("SELECT a FROM t ORDER BY a LIMIT 1"));
        assert_eq!(s.sub[&SubDimension::ArgumentValue], 0.0);
        assert_eq!(
            findings[0].message,
            "`prompt`: the workflow expects a string matching `(?i)^select\\b` and not `(?i)\\blimit\\b` (`regex`), got \"SELECT a FROM t ORDER BY a LIMIT 1\""
        );
    }

    #[test]
    fn paths_match_as_paths_under_the_path_policy() {
        let c = case(concat!(
            "          - tool: paint\n",
            "            arguments: {prompt: /srv/art/cat.png, tags: [a/b]}\n",
            "            match: {prompt: path, /tags/*: path}\n",
        ));
        let call = |prompt: &str, tag: &str| {
            format!("  - {{tool: paint, arguments: {{prompt: '{prompt}', tags: ['{tag}']}}}}\n")
        };
        for (prompt, tag) in [
            ("/srv/art/cat.png", "a/b"),
            ("/srv//art/./cat.png", "./a/b/"),
        ] {
            let (s, findings) = run(&c, &call(prompt, tag));
            assert!(findings.is_empty(), "{prompt} {tag}: {findings:?}");
            assert_eq!(s.sub[&SubDimension::ArgumentValue], 1.0);
        }
        let (s, findings) = run(&c, &call("/srv/art/dog.png", "a/b"));
        assert_eq!(s.sub[&SubDimension::ArgumentValue], 0.0);
        assert_eq!(
            findings[0].message,
            "`prompt`: the workflow expects the path \"/srv/art/cat.png\" (`path`), got \"/srv/art/dog.png\""
        );
        let (_, findings) = run(&c, &call("/srv/art/cat.png", "a/c"));
        assert_eq!(findings[0].pointer, "/tags/0");
        // `{path: base}`: a relative path read from the base.
        let based = case(concat!(
            "          - tool: paint\n",
            "            arguments: {prompt: /srv/art/cat.png}\n",
            "            match: {prompt: {path: /srv}}\n",
        ));
        let (_, findings) = run(&based, &call("./art/cat.png", "a/b"));
        assert!(findings.is_empty(), "{findings:?}");
        let (_, findings) = run(&based, &call("art/dog.png", "a/b"));
        assert_eq!(
            findings[0].message,
            "`prompt`: the workflow expects the path \"/srv/art/cat.png\" (`path`, a relative one read from /srv), got \"art/dog.png\""
        );
        // Without the policy, the path compares as written.
        let plain = case(concat!(
            "          - tool: paint\n",
            "            arguments: {prompt: /srv/art/cat.png}\n",
        ));
        let (_, findings) = run(
            &plain,
            "  - {tool: paint, arguments: {prompt: /srv//art/./cat.png}}\n",
        );
        assert_eq!(findings[0].pointer, "/prompt");
    }

    /// `unordered`: the step's items in any order, as many of each, each item under the
    /// policies below the array; without it the order counts.
    #[test]
    fn unordered_arrays_pair_their_items_in_any_order() {
        let mismatches = |c: &Case, calls: &str| -> Vec<String> {
            let (s, findings) = run(c, calls);
            let pointers: Vec<String> = findings.iter().map(|f| f.pointer.clone()).collect();
            assert_eq!(
                s.sub[&SubDimension::ArgumentValue] == 1.0,
                pointers.is_empty(),
                "{findings:?}"
            );
            pointers
        };
        // By name: the items compared exactly, as a multiset.
        let c = case(concat!(
            "          - tool: paint\n",
            "            arguments: {prompt: p, tags: [a, b, c]}\n",
            "            match: {tags: unordered}\n",
        ));
        let call =
            |tags: &str| format!("  - {{tool: paint, arguments: {{prompt: p, tags: {tags}}}}}\n");
        assert!(mismatches(&c, &call("[c, a, b]")).is_empty());
        assert!(mismatches(&c, &call("[a, b, c]")).is_empty());
        for wrong in ["[a, b]", "[a, a, b]", "[a, b, c, c]", "[a, b, d]"] {
            assert_eq!(mismatches(&c, &call(wrong)), ["/tags"], "{wrong}");
        }
        let (_, findings) = run(&c, &call("[a, b]"));
        assert_eq!(
            findings[0].message,
            "`tags`: the workflow expects the items of [\"a\",\"b\",\"c\"] in any order (`unordered`), got [\"a\",\"b\"]"
        );
        // Without the policy the order counts.
        let plain = case(concat!(
            "          - tool: paint\n",
            "            arguments: {prompt: p, tags: [a, b, c]}\n",
        ));
        assert_eq!(mismatches(&plain, &call("[c, a, b]")), ["/tags"]);
        // By pointer, with policies below the array: each item under its own. Item 0 takes
        // any name starting with `s`, item 1 only `sea`: in the call's order item 0 would take
        // `sea` and leave item 1 nothing, so the pairing must move item 0 to `sun`.
        let c = case(concat!(
            "          - tool: paint\n",
            "            arguments: {prompt: p, layers: [{name: sky, note: blue}, {name: sea, note: deep}]}\n",
            "            match: {/layers: unordered, /layers/*/note: semantic, /layers/0/name: {regex: '^s'}}\n",
        ));
        let call = |layers: &str| {
            format!("  - {{tool: paint, arguments: {{prompt: p, layers: {layers}}}}}\n")
        };
        assert!(
            mismatches(
                &c,
                &call("[{name: sea, note: dark}, {name: sun, note: warm}]")
            )
            .is_empty()
        );
        assert!(
            mismatches(
                &c,
                &call("[{name: sky, note: azure}, {name: sea, note: dark}]")
            )
            .is_empty()
        );
        for wrong in [
            "[{name: sun, note: warm}, {name: sky, note: blue}]",
            "[{name: sea, note: dark}]",
            "[{name: sea, note: 3}, {name: sun, note: warm}]",
        ] {
            assert_eq!(mismatches(&c, &call(wrong)), ["/layers"], "{wrong}");
        }
    }
}
