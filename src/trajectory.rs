//! Trajectory metrics: the agent's calls against the workflow in the vocabulary other tools
//! report — Google ADK's `tool_trajectory_avg_score` (`EXACT`, `IN_ORDER`, `ANY_ORDER`), Vertex
//! AI's `trajectory_exact_match`, `trajectory_in_order_match`, `trajectory_any_order_match`,
//! `trajectory_precision` and `trajectory_recall`, agentevals' strict / superset modes — so a
//! team can set agent-seer beside what it uses today. They go in the JSON report next to TC and
//! never decide the verdict.
//!
//! Per turn, the reference trajectory is the turn's workflow steps and the predicted one the
//! agent's calls. A call *matches* a step under two rules, both reported:
//!
//! - **policy** ([`policy_matches`]): one of the step's tools, and every argument the step
//!   compares matching under the step's match policies — the oracle's own comparison
//!   (`oracle::deep_mismatch`, pointer keys included), so `ignore`, `any_of`, `tolerance`, `from_output`… count as
//!   they do for TC. Arguments the step does not name are not compared (the linter judges
//!   them);
//! - **literal** ([`literal_matches`]): one of the step's tools and arguments equal as Python
//!   compares decoded JSON — numbers by value, `true == 1` — ADK's default (dict equality), so
//!   for a plain workflow these numbers are ADK's (`tests/cli/adk.rs` checks it against ADK's
//!   own evaluator; the differences left are a run with fewer turns than its case, which ADK
//!   refuses and this scores with the missing turns as no calls, and ADK's `args: None`, which
//!   a call on the wire cannot tell from `{}`).
//!
//! From the match relation, per turn ([`Metrics::of`]), each 0–1:
//!
//! - `exact_match`: the calls are the steps in order, call *i* matching step *i*, nothing else;
//! - `in_order_match`: the steps match a subsequence of the calls, in order (extra calls
//!   allowed; the greedy scan ADK uses is optimal for a subsequence);
//! - `any_order_match`: every step matched by a call of its own, in any order (extra calls
//!   allowed);
//! - `precision` (matched calls / calls), `recall` (matched steps / steps) and `f1` (their
//!   harmonic mean), matched one to one under the optimal pairing ([`assign`]). ADK pairs
//!   first-match, which can mis-pair repeated calls to one tool (adk-python #5306); under the
//!   literal rule the two agree, since equality is transitive.
//!
//! The general workflow ([`Times`]): a step done `count: n` times stands for n steps (a `min`..
//! `max` range: `min` required, the rest allowed, so exact takes any number in the range); an
//! `optional` step is allowed, not required — a call doing it is matched (precision), but
//! leaving it out costs nothing (recall counts required steps). A turn with `any_of:` step lists
//! is scored against each combination of lists ([`Turn::variants`]): each match is 1 when some
//! combination gives 1, and precision, recall and F1 are those of the combination with the best
//! F1.
//!
//! Empty trajectories: no steps and no calls scores 1 everywhere. No steps but calls: exact 0,
//! in-order and any-order 1 (nothing was required, as in ADK), precision 0, recall 1, F1 0. Steps
//! but no calls: the three matches 0, precision 1 (no wrong call), recall 0, F1 0.
//!
//! A transcript's metrics are the mean over its scenario's turns (a turn the transcript never
//! reached counts with no calls): the three matches become ADK's `tool_trajectory_avg_score`
//! for that match type, and F1 is the mean of the turns' F1 (not the F1 of the mean precision
//! and recall). The main type is [`Trajectory`], made by [`transcript`]; [`turn`] does one turn.

use std::cell::Cell;

use serde::{Deserialize, Serialize};
use serde_json::Value;
use smallvec::SmallVec;

use crate::flow::Flow;
use crate::harness::{Call, OracleCall, Scenario, Transcript, Turn};
use crate::hash::PairCache;
use crate::lint::Linter;
use crate::score::own::{OwnCalls, OwnStep};
use crate::score::pairing::{OwnTallies, TurnFacts};
use crate::score::{assign, oracle};

/// One trajectory's six metrics, each 0–1: a turn's (the three matches 0 or 1) or the mean of a
/// transcript's turns.
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
pub struct Metrics {
    /// The calls are the steps in order, nothing else (ADK `EXACT`, Vertex
    /// `trajectory_exact_match`).
    pub exact_match: f64,
    /// The steps match a subsequence of the calls, in order (ADK `IN_ORDER`, Vertex
    /// `trajectory_in_order_match`).
    pub in_order_match: f64,
    /// Every required step matched by a call of its own, in any order (ADK `ANY_ORDER`, Vertex
    /// `trajectory_any_order_match`).
    pub any_order_match: f64,
    /// Matched calls / calls under the optimal pairing; 1 without calls (Vertex
    /// `trajectory_precision`).
    pub precision: f64,
    /// Matched required steps / required steps under the optimal pairing; 1 without any
    /// (Vertex `trajectory_recall`).
    pub recall: f64,
    /// The harmonic mean of precision and recall; 0 when both are.
    pub f1: f64,
}

/// What [`Metrics::of_known`] is told without asking whether a call matches a step.
pub(crate) struct Known<N, U, A> {
    /// Whether no call matches step `i` (`false` where unknown).
    pub(crate) none: N,
    /// Whether no step matches call `j` (`false` where unknown).
    pub(crate) unmatched: U,
    /// The first `done` steps, each done once, are each matched by the call at its place (a
    /// run that follows its workflow up to where it first differs).
    pub(crate) done: usize,
    /// Whether step `i`, done once, is matched by call `i`, the call at its place (`false`
    /// where unknown): after a place where the run differs, the steps it does as its
    /// workflow again are not asked about.
    pub(crate) at: A,
}

impl Known<fn(usize) -> bool, fn(usize) -> bool, fn(usize) -> bool> {
    /// Nothing known.
    pub(crate) const NOTHING: Self = Known {
        none: |_| false,
        unmatched: |_| false,
        done: 0,
        at: |_| false,
    };
}

pub use crate::harness::Times;

impl Metrics {
    /// A turn's metrics, from its reference `steps` (in order, each with how many calls it
    /// takes), how many calls the agent made, and whether call `j` matches step `i`
    /// (`matches(i, j)`).
    pub fn of(steps: &[Times], calls: usize, matches: impl Fn(usize, usize) -> bool) -> Self {
        Self::of_known(steps, calls, matches, Known::NOTHING)
    }

    /// [`Metrics::of`], told what is known without asking `matches` ([`Known`]): which steps
    /// no call matches and which calls no step matches (as a long turn's hashes tell), and
    /// how many steps the calls at their places are known to do. A step no call does is
    /// asked about no call, a call no step does about no step, a step known done about
    /// nothing: the searches along the run start after them.
    pub(crate) fn of_known(
        steps: &[Times],
        calls: usize,
        matches: impl Fn(usize, usize) -> bool,
        known: Known<impl Fn(usize) -> bool, impl Fn(usize) -> bool, impl Fn(usize) -> bool>,
    ) -> Self {
        let Known {
            none,
            unmatched,
            done,
            at,
        } = known;
        debug_assert!(
            done <= calls && steps[..done].iter().all(|t| *t == Times::ONCE),
            "steps known done are done once, each by the call at its place"
        );
        let matches = |i: usize, j: usize| !none(i) && matches(i, j);
        // A step known matched at its place is matched: asked there, `matches` is true.
        let matches = |i: usize, j: usize| (i == j && at(i)) || matches(i, j);
        let (exact, in_order, (matched, required)) =
            match at_places(steps, calls, &matches, &none, done) {
                Some(left) => (left == 0, left == 0, (calls - left, calls - left)),
                None => (
                    exact(steps, calls, &matches, done),
                    in_order(steps, calls, &matches, &none, &at, done),
                    pairing(steps, calls, &matches, &none, &unmatched, &at, done),
                ),
            };
        let wanted: usize = steps.iter().map(|t| t.min).sum();
        let ratio = |n: usize, d: usize| if d == 0 { 1.0 } else { n as f64 / d as f64 };
        let (precision, recall) = (ratio(matched, calls), ratio(required, wanted));
        let f1 = if precision + recall > 0.0 {
            2.0 * precision * recall / (precision + recall)
        } else {
            0.0
        };
        let one = |b: bool| if b { 1.0 } else { 0.0 };
        Self {
            exact_match: one(exact),
            in_order_match: one(in_order),
            any_order_match: one(required == wanted),
            precision,
            recall,
            f1,
        }
    }

    /// The mean of each metric over `turns`; all 1 for none (as for an empty trajectory).
    /// (A slice, or an iterator over the turns' fields: nothing collected.)
    pub fn mean<'m, I>(turns: I) -> Self
    where
        I: IntoIterator<Item = &'m Metrics>,
        I::IntoIter: ExactSizeIterator + Clone,
    {
        let turns = turns.into_iter();
        if turns.len() == 0 {
            return Self::of(&[], 0, |_, _| false);
        }
        let n = turns.len() as f64;
        let avg = |f: fn(&Metrics) -> f64| turns.clone().map(f).sum::<f64>() / n;
        Self {
            exact_match: avg(|t| t.exact_match),
            in_order_match: avg(|t| t.in_order_match),
            any_order_match: avg(|t| t.any_order_match),
            precision: avg(|t| t.precision),
            recall: avg(|t| t.recall),
            f1: avg(|t| t.f1),
        }
    }

    /// The best of a turn's alternatives (its `any_of:` combinations): each match where any
    /// gives it, precision, recall and F1 from the one with the best F1 (then recall).
    /// (One pass, nothing collected: a turn has one alternative but for `any_of:` lists.)
    fn best(each: impl IntoIterator<Item = Metrics>) -> Self {
        let mut each = each.into_iter();
        let Some(first) = each.next() else {
            return Self {
                exact_match: 0.0,
                in_order_match: 0.0,
                any_order_match: 0.0,
                ..Self::of(&[], 0, |_, _| false)
            };
        };
        each.fold(first, |best, m| {
            // Of equal ones, the later (as `Iterator::max_by` keeps).
            let top = if (best.f1, best.recall).partial_cmp(&(m.f1, m.recall))
                == Some(std::cmp::Ordering::Greater)
            {
                best
            } else {
                m
            };
            Self {
                exact_match: best.exact_match.max(m.exact_match),
                in_order_match: best.in_order_match.max(m.in_order_match),
                any_order_match: best.any_order_match.max(m.any_order_match),
                ..top
            }
        })
    }
}

/// A turn of steps done once each, as many as its calls, where the calls at the steps' places
/// decide every metric (a run that follows its workflow, wrong in a few calls: one question a
/// step, not the three searches along the run): each step matched by the call at its place,
/// or matched by no call at all. Then the pairing at the places is an optimal one (a step no
/// call matches is left over whatever the pairing), the steps are in order exactly when none
/// is left over (as many steps as calls: only the pairing at the places keeps their order),
/// and so is the match exact. `Some(left)`, the steps left over; `None` where a step's call
/// at its place does not match it but another call might (the searches tell). The first
/// `done` steps are known matched at their places.
fn at_places(
    steps: &[Times],
    calls: usize,
    matches: &impl Fn(usize, usize) -> bool,
    none: &impl Fn(usize) -> bool,
    done: usize,
) -> Option<usize> {
    if steps.len() != calls || steps.iter().any(|t| *t != Times::ONCE) {
        return None;
    }
    let mut left = 0;
    for i in done..calls {
        if matches(i, i) {
            continue;
        }
        if !none(i) {
            return None;
        }
        left += 1;
    }
    Some(left)
}

/// How many calls step `t` may take at most (every call, when unbounded).
fn most(t: &Times, calls: usize) -> usize {
    t.max.map_or(calls, |x| x.min(calls))
}

/// Exact: steps `..i` can take exactly calls `..j`, each step a run of matching calls within
/// its bounds, for `j` in the frontier; the steps must take every call. The frontier stays
/// one call wide for plain steps, so a run costs one match per call. The first `done` steps
/// take the first `done` calls.
fn exact(
    steps: &[Times],
    calls: usize,
    matches: &impl Fn(usize, usize) -> bool,
    done: usize,
) -> bool {
    // (Two buffers, swapped step to step: no allocation for a turn of a few calls.)
    let mut frontier: SmallVec<[usize; 8]> = smallvec::smallvec![done];
    let mut next: SmallVec<[usize; 8]> = SmallVec::new();
    for (i, t) in steps.iter().enumerate().skip(done) {
        // A step done once after a frontier of one call (a run that follows its workflow):
        // the call there is the step's, or nothing can be.
        if let (
            [j],
            Times {
                min: 1,
                max: Some(1),
            },
        ) = (frontier.as_slice(), t)
        {
            let j = *j;
            if j < calls && matches(i, j) {
                frontier[0] = j + 1;
                continue;
            }
            return false;
        }
        next.clear();
        for &j in &frontier {
            if t.min == 0 {
                next.push(j);
            }
            let mut k = 0;
            while k < most(t, calls) && j + k < calls && matches(i, j + k) {
                k += 1;
                if k >= t.min {
                    next.push(j + k);
                }
            }
        }
        next.sort_unstable();
        next.dedup();
        if next.is_empty() {
            return false;
        }
        std::mem::swap(&mut frontier, &mut next);
    }
    frontier.contains(&calls)
}

/// In order: each step's required calls the earliest matching ones after the previous
/// step's, which leaves the most calls for the steps after it.
fn in_order(
    steps: &[Times],
    calls: usize,
    matches: &impl Fn(usize, usize) -> bool,
    none: &impl Fn(usize) -> bool,
    at: &impl Fn(usize) -> bool,
    done: usize,
) -> bool {
    // The first `done` steps take the first `done` calls: each the earliest that matches.
    let mut next = done;
    for (i, t) in steps.iter().enumerate().skip(done) {
        // The next call is the step's, known: the earliest that matches.
        if next == i && at(i) {
            next += 1;
            continue;
        }
        if t.min > 0 && none(i) {
            return false;
        }
        for _ in 0..t.min {
            match (next..calls).find(|&j| matches(i, j)) {
                Some(j) => next = j + 1,
                None => return false,
            }
        }
    }
    true
}

/// How many calls, and how many required step times, the optimal one-to-one pairing
/// matches: a row per time a step may be done, its required times weighing 2 and its allowed
/// ones 1. The optimum matches the most calls and, among those pairings, the most required
/// times (both maxima are reached together, by the Mendelsohn–Dulmage theorem). A pairing
/// found by walking the run in order is kept when it reaches both upper bounds (calls that
/// match some step; required times whose step some call matches): for a run that follows
/// its workflow that costs one match per call, plus a row or a column for each step or call
/// left over. Otherwise the Hungarian algorithm over every row and call.
fn pairing(
    steps: &[Times],
    calls: usize,
    matches: &impl Fn(usize, usize) -> bool,
    none: &impl Fn(usize) -> bool,
    unmatched: &impl Fn(usize) -> bool,
    at: &impl Fn(usize) -> bool,
    done: usize,
) -> (usize, usize) {
    let rows: SmallVec<[usize; 8]> = steps
        .iter()
        .map(|t| t.min + most(t, calls).saturating_sub(t.min))
        .collect();
    // The first `done` steps take the first `done` calls, as the walk would.
    let mut used: SmallVec<[bool; 16]> = smallvec::smallvec![false; calls];
    used[..done].fill(true);
    let mut taken: SmallVec<[usize; 8]> = smallvec::smallvec![0; steps.len()];
    taken[..done].fill(1);
    let (mut matched, mut required) = (done, done);
    let mut next = done;
    for (i, t) in steps.iter().enumerate().skip(done) {
        // The next call is the step's, known, and free: the one the search below finds.
        if next == i && at(i) && !used[i] {
            (used[i], taken[i], next) = (true, 1, i + 1);
            (matched, required) = (matched + 1, required + 1);
            continue;
        }
        let mut j = next;
        while taken[i] < t.min && !none(i) {
            let Some(k) = (j..calls).find(|&k| !used[k] && matches(i, k)) else {
                break;
            };
            (used[k], j) = (true, k + 1);
            taken[i] += 1;
            (matched, required) = (matched + 1, required + 1);
        }
        if taken[i] > 0 {
            next = j;
        }
    }
    // Calls left: a step with a required time still open first, else one with room.
    let mut unmatched_calls = 0;
    for (k, _) in used.iter().enumerate().filter(|(_, u)| !**u) {
        if unmatched(k) {
            unmatched_calls += 1;
            continue;
        }
        let open = |i: usize| matches(i, k);
        let step = (0..steps.len())
            .find(|&i| taken[i] < steps[i].min && open(i))
            .or_else(|| (0..steps.len()).find(|&i| taken[i] < rows[i] && open(i)));
        match step {
            Some(i) => {
                required += usize::from(taken[i] < steps[i].min);
                taken[i] += 1;
                matched += 1;
            }
            None if (0..steps.len()).any(|i| matches(i, k)) => {}
            None => unmatched_calls += 1,
        }
    }
    let most_matched = (calls - unmatched_calls).min(rows.iter().sum());
    let most_required: usize = steps
        .iter()
        .enumerate()
        .map(|(i, t)| {
            if taken[i] >= t.min {
                t.min
            } else if none(i) {
                0
            } else {
                t.min.min((0..calls).filter(|&k| matches(i, k)).count())
            }
        })
        .sum();
    if matched == most_matched && required == most_required {
        return (matched, required);
    }
    hungarian(steps, calls, matches)
}

/// [`pairing`] by the Hungarian algorithm over every row and call (O(n³)).
fn hungarian(
    steps: &[Times],
    calls: usize,
    matches: &impl Fn(usize, usize) -> bool,
) -> (usize, usize) {
    let mut rows: Vec<(usize, bool)> = Vec::new();
    for (i, t) in steps.iter().enumerate() {
        rows.extend(std::iter::repeat_n((i, true), t.min));
        rows.extend(std::iter::repeat_n(
            (i, false),
            most(t, calls).saturating_sub(t.min),
        ));
    }
    let (mut matched, mut required) = (0, 0);
    if rows.is_empty() || calls == 0 {
        return (0, 0);
    }
    let sim: Vec<Vec<f64>> = rows
        .iter()
        .map(|&(i, req)| {
            let w = if req { 2.0 } else { 1.0 };
            (0..calls)
                .map(|j| if matches(i, j) { w } else { 0.0 })
                .collect()
        })
        .collect();
    for (r, j) in assign(&sim).into_iter().enumerate() {
        if j.is_some_and(|j| sim[r][j] > 0.0) {
            matched += 1;
            required += usize::from(rows[r].1);
        }
    }
    (matched, required)
}

/// One turn's trajectory metrics under both matching rules.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct TurnTrajectory {
    /// The turn's workflow steps as written, every `any_of:` list's included (the reference
    /// trajectory).
    pub steps: usize,
    /// The agent's calls in the turn (the predicted trajectory's length).
    pub calls: usize,
    /// A call matches a step under the step's match policies ([`policy_matches`]).
    pub policy: Metrics,
    /// A call matches a step when tool and arguments are equal ([`literal_matches`]), as ADK
    /// compares by default.
    pub literal: Metrics,
}

/// A transcript's trajectory metrics: the mean over its scenario's turns, and each turn's.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Trajectory {
    /// The turns' mean under the match policies.
    pub policy: Metrics,
    /// The turns' mean under literal equality (ADK's `tool_trajectory_avg_score`).
    pub literal: Metrics,
    /// Each of the scenario's turns, in order.
    pub turns: Vec<TurnTrajectory>,
}

impl Trajectory {
    /// The trajectory of these turns: each metric's mean over them, under the policies and
    /// literally.
    fn of_turns(turns: Vec<TurnTrajectory>) -> Self {
        Trajectory {
            policy: Metrics::mean(turns.iter().map(|t| &t.policy)),
            literal: Metrics::mean(turns.iter().map(|t| &t.literal)),
            turns,
        }
    }
}

/// A transcript's trajectory against its scenario. `flow` (the flow engine's analysis of the
/// transcript) decides `from_output` arguments.
pub fn transcript(t: &Transcript, sc: &Scenario, linter: &Linter, flow: &Flow<'_>) -> Trajectory {
    let flat: Vec<&Call> = t.calls().map(|(_, c)| c).collect();
    let calls = oracle::per_turn(&flat, t, sc.turns.len());
    let own = crate::score::own::Own::none();
    let facts = oracle::facts(sc, &calls, &own, linter, flow, &[]);
    of_facts(&facts, sc)
}

/// A transcript's trajectory from the facts its oracle score was computed from: the same
/// comparisons of each step with each call, not a second matrix of them (issue 31).
pub(crate) fn of_facts(facts: &[TurnFacts], sc: &Scenario) -> Trajectory {
    let turns: Vec<TurnTrajectory> = sc
        .turns
        .iter()
        .zip(facts)
        .enumerate()
        .map(|(ti, (st, f))| {
            // Past the metrics' own memo, the pairs asked kept here.
            let kept = (st.workflow.len() * f.calls.len() > MEMO)
                .then(|| PairCache::new(st.workflow.len(), f.calls.len()));
            let literal = |w: usize, j: usize| literally(f, w, j);
            // Which steps no call does, where the calls' hashes tell (a long turn): asked once
            // a step, not at every question about it. A step whose own call the turn made has
            // a call with its values, its arguments too: not asked.
            let made = f.made();
            let known = |none: &dyn Fn(usize) -> bool| -> Vec<bool> {
                match kept {
                    Some(_) => (0..st.workflow.len())
                        .map(|w| made.get(w).is_none_or(|&m| m == 0) && none(w))
                        .collect(),
                    None => Vec::new(),
                }
            };
            let no_policy = known(&|w| f.no_policy_match(w));
            let no_literal = known(&|w| f.no_literal_match(w));
            // A step's own call does the step: every compared value matches where the
            // oracle found it clean; literally, always. Arguments hashed otherwise are not.
            of_turn(
                st,
                Lists::of(sc, ti),
                f.calls.len(),
                Relation {
                    matches: &|w, j| f.policy_matches(w, j),
                    none: &|w| no_policy.get(w) == Some(&true),
                    unmatched: &|j| f.no_step_matches(j),
                    matched: &|w, j| f.own.clean(w, j),
                },
                Relation {
                    matches: &|w, j| {
                        f.own.is(w, j)
                            || (!f.literally_apart(w, j)
                                && kept.as_ref().map_or_else(
                                    || literal(w, j),
                                    |c| c.get((w, j), || literal(w, j)),
                                ))
                    },
                    none: &|w| no_literal.get(w) == Some(&true),
                    unmatched: &|j| f.literally_no_step(j),
                    matched: &|w, j| f.own.is(w, j),
                },
            )
        })
        .collect();
    Trajectory::of_turns(turns)
}

/// Whether the turn's call `j` is workflow step `w`'s call literally ([`literal_matches`]), a
/// step's own call answered as in every run that makes it (`score::own::Cross`).
pub(crate) fn literally(f: &TurnFacts, w: usize, j: usize) -> bool {
    let here = || literal_matches(&f.workflow[w], f.calls[j]);
    match f.own.crossed(j) {
        Some((cross, v)) => cross.literal(w, v, here),
        None => here(),
    }
}

/// One turn's trajectory: its workflow against the agent's `calls`, the first of which is call
/// `first` of the transcript. `produced_before(value, index)` says whether a call before
/// transcript call `index` produced `value` (the flow engine's [`Flow::produced_before`]), for
/// `from_output` arguments.
pub fn turn(
    st: &Turn,
    calls: &[&Call],
    first: usize,
    linter: &Linter,
    produced_before: &dyn Fn(&str, usize) -> bool,
) -> TurnTrajectory {
    let steps = &st.workflow;
    let variants = st.variants();
    let times = Times::of_lists(steps, &variants);
    of_turn(
        st,
        Lists {
            steps: &variants,
            times: &times,
        },
        calls.len(),
        Relation::asking(&|w, j| {
            policy_matches(&steps[w], calls[j], linter, &|g| {
                oracle::from_output(g, |v| produced_before(v, first + j))
            })
        }),
        Relation::asking(&|w, j| literal_matches(&steps[w], calls[j])),
    )
}

/// A turn's metrics under both rules, given whether call `j` matches workflow step `w` under
/// each (asked lazily: a run that follows its workflow asks about one pair per call).
fn of_turn(
    st: &Turn,
    variants: Lists,
    calls: usize,
    policy: Relation,
    literal: Relation,
) -> TurnTrajectory {
    TurnTrajectory {
        steps: st.workflow.len(),
        calls,
        policy: best_variant(st, variants, calls, policy),
        literal: best_variant(st, variants, calls, literal),
    }
}

/// A match relation, and what is known of it without asking each pair (`false` where
/// unknown).
#[derive(Clone, Copy)]
struct Relation<'r> {
    /// Whether call `j` matches workflow step `w`.
    matches: &'r dyn Fn(usize, usize) -> bool,
    /// Whether no call matches step `w`.
    none: &'r dyn Fn(usize) -> bool,
    /// Whether no step matches call `j`.
    unmatched: &'r dyn Fn(usize) -> bool,
    /// Whether call `j` matches step `w`, known (a step's own call): never a step `none`
    /// says no call matches.
    matched: &'r dyn Fn(usize, usize) -> bool,
}

impl<'r> Relation<'r> {
    /// `matches`, nothing known without asking.
    fn asking(matches: &'r dyn Fn(usize, usize) -> bool) -> Self {
        Self {
            matches,
            none: &|_| false,
            unmatched: &|_| false,
            matched: &|_, _| false,
        }
    }
}

/// A turn's metrics under a match relation (`m(step, call)`, and which steps no call
/// matches): the best of its variants'. The
/// metrics ask a pair up to three times (exact, in order, any order) and every variant asks
/// again: in a turn of up to [`MEMO`] pairs each answer is kept the first time. (A longer
/// turn's relations keep their own, of the pairs asked: the policy's in its [`TurnFacts`],
/// the literal one's in [`of_facts`]; here each step's last answer, which the three metrics
/// ask again one after another.)
fn best_variant(st: &Turn, variants: Lists, calls: usize, r: Relation) -> Metrics {
    let m = r.matches;
    let pairs = st.workflow.len() * calls;
    if pairs > MEMO {
        // The three metrics ask a step about the call the run walked it to one after another
        // (exact, in order, any order): each step's last answer kept in place, so those asks
        // after the first cost no lookup in the relation's own memo (a map, in a long turn).
        let last = vec![Cell::new((usize::MAX, false)); st.workflow.len()];
        let asked = |w: usize, j: usize| {
            let (asked, answer) = last[w].get();
            if asked == j {
                return answer;
            }
            let answer = m(w, j);
            last[w].set((j, answer));
            answer
        };
        return best_of(
            variants,
            calls,
            Relation {
                matches: &asked,
                ..r
            },
        );
    }
    // A byte a pair, in place for a turn of a few: 0 not asked yet, 1 no, 2 yes.
    let memo: SmallVec<[Cell<u8>; 64]> = smallvec::smallvec![Cell::new(0); pairs];
    let asked = |w: usize, j: usize| {
        let known = &memo[w * calls + j];
        if known.get() == 0 {
            known.set(1 + u8::from(m(w, j)));
        }
        known.get() == 2
    };
    // (What the hashes and the own calls tell saves little here: each answer is a byte away.)
    if calls <= Plain::MOST
        && variants
            .times
            .iter()
            .all(|t| t.len() <= Plain::MOST && t.iter().all(|t| *t == Times::ONCE))
    {
        return Metrics::best(
            variants
                .steps
                .iter()
                .map(|v| Plain::of(v, calls, &asked).metrics()),
        );
    }
    best_of(variants, calls, Relation::asking(&asked))
}

/// A list of plain steps (each done once, required) against a few calls: each step's
/// matching calls as a bit set, the metrics read from the sets (the usual turn, most of all a
/// short one: a few bit operations where [`Metrics::of_known`] walks frontiers and rows).
struct Plain {
    calls: usize,
    /// Per step, the calls it matches (bit `j`: call `j`); empty when the calls are the steps
    /// in order (the run follows its workflow).
    rows: SmallVec<[u64; 8]>,
    steps: usize,
}

impl Plain {
    /// The most steps and calls a [`Plain`] takes (one bit each in a word).
    const MOST: usize = 64;

    /// Steps `v` (workflow indices) against `calls` calls, `matches(w, j)` saying whether call
    /// `j` does workflow step `w`: asked for the calls at the steps' places first, and only
    /// where one of them differs, for every pair.
    fn of(v: &[usize], calls: usize, matches: &dyn Fn(usize, usize) -> bool) -> Self {
        let steps = v.len();
        let follows = steps == calls && v.iter().enumerate().all(|(j, &w)| matches(w, j));
        let rows = if follows {
            SmallVec::new()
        } else {
            v.iter()
                .map(|&w| {
                    (0..calls)
                        .filter(|&j| matches(w, j))
                        .fold(0u64, |row, j| row | 1 << j)
                })
                .collect()
        };
        Self { calls, rows, steps }
    }

    /// The metrics [`Metrics::of`] gives for these steps and calls.
    fn metrics(&self) -> Metrics {
        let ratio = |n: usize, d: usize| if d == 0 { 1.0 } else { n as f64 / d as f64 };
        let one = |b: bool| if b { 1.0 } else { 0.0 };
        let (exact, in_order, matched) = if self.rows.is_empty() && self.steps == self.calls {
            (true, true, self.steps)
        } else {
            (false, self.in_order(), self.matched())
        };
        let (precision, recall) = (ratio(matched, self.calls), ratio(matched, self.steps));
        let f1 = if precision + recall > 0.0 {
            2.0 * precision * recall / (precision + recall)
        } else {
            0.0
        };
        Metrics {
            exact_match: one(exact),
            in_order_match: one(in_order),
            any_order_match: one(matched == self.steps),
            precision,
            recall,
            f1,
        }
    }

    /// Each step's call the earliest after the previous step's.
    fn in_order(&self) -> bool {
        let mut next = 0;
        for row in &self.rows {
            let after = if next >= Self::MOST {
                0
            } else {
                row >> next << next
            };
            if after == 0 {
                return false;
            }
            next = after.trailing_zeros() as usize + 1;
        }
        true
    }

    /// The most steps paired one to one with calls they match (augmenting paths).
    fn matched(&self) -> usize {
        fn augment(
            i: usize,
            rows: &[u64],
            seen: &mut u64,
            step_of: &mut [u8; Plain::MOST],
        ) -> bool {
            let mut free = rows[i] & !*seen;
            while free != 0 {
                let j = free.trailing_zeros() as usize;
                free &= free - 1;
                *seen |= 1 << j;
                if step_of[j] == u8::MAX || augment(step_of[j] as usize, rows, seen, step_of) {
                    step_of[j] = i as u8;
                    return true;
                }
            }
            false
        }
        let mut step_of = [u8::MAX; Self::MOST];
        (0..self.rows.len())
            .filter(|&i| augment(i, &self.rows, &mut 0, &mut step_of))
            .count()
    }
}

/// The most (step, call) pairs whose answers [`best_variant`] keeps in a table of bytes.
const MEMO: usize = 1024;

fn best_of(variants: Lists, calls: usize, r: Relation) -> Metrics {
    let one = |v: &[usize], times: &[Times]| {
        // The steps done once, from the first, that the calls at their places are known to
        // do (a run that follows its workflow up to where it first differs).
        let done = (0..v.len().min(calls))
            .take_while(|&a| times[a] == Times::ONCE && (r.matched)(v[a], a))
            .count();
        let known = Known {
            none: |a: usize| (r.none)(v[a]),
            unmatched: r.unmatched,
            done,
            at: |a: usize| a < calls && times[a] == Times::ONCE && (r.matched)(v[a], a),
        };
        Metrics::of_known(times, calls, |a, j| (r.matches)(v[a], j), known)
    };
    Metrics::best(
        variants
            .steps
            .iter()
            .zip(variants.times)
            .map(|(v, times)| one(v, times)),
    )
}

/// A turn's step lists ([`Turn::variants`]) and, per list, how many calls each of its steps
/// takes ([`Times::of`]).
#[derive(Clone, Copy)]
struct Lists<'v> {
    steps: &'v [Vec<usize>],
    times: &'v [Vec<Times>],
}

impl<'v> Lists<'v> {
    /// Turn `turn` of scenario `sc`'s, worked out once per scenario.
    fn of(sc: &'v Scenario, turn: usize) -> Self {
        Self {
            steps: oracle::variants(sc, turn),
            times: oracle::variant_times(sc, turn),
        }
    }
}

/// The trajectory of a transcript whose turns' metrics under the match policies are known
/// (`policy`, per turn: those of a run the engines found alike under the policies), with the
/// literal metrics worked out from its calls (`turn_calls`, per turn of the scenario).
pub(crate) fn with_policy(
    sc: &Scenario,
    turn_calls: &[&[&Call]],
    policy: &[Metrics],
) -> Trajectory {
    let turns: Vec<TurnTrajectory> = sc
        .turns
        .iter()
        .zip(turn_calls)
        .zip(policy)
        .enumerate()
        .map(|(ti, ((st, calls), policy))| TurnTrajectory {
            steps: st.workflow.len(),
            calls: calls.len(),
            policy: *policy,
            literal: literal_turn(sc, ti, calls, &|_, _| false, None),
        })
        .collect();
    Trajectory::of_turns(turns)
}

/// The literal metrics alone, the mean over the scenario's turns (`turn_calls`, per turn):
/// what a trajectory gate reads, without the metrics under the policies. `own`, when given:
/// the scenario's steps' own calls, and per call (in transcript order, every turn with as
/// many calls as steps) whether it is the own call of the step at its place
/// ([`crate::score::own::at_place`]) — a literal match known without comparing, and in a long
/// turn the arguments' hashes telling which steps no call can match and which calls match no
/// step (a run wrong in one place asks about that place, not every call).
pub(crate) fn literal(
    sc: &Scenario,
    turn_calls: &[&[&Call]],
    own: Option<(&OwnCalls, &[bool])>,
) -> Metrics {
    let mut first = 0;
    let turns: SmallVec<[Metrics; 4]> = sc
        .turns
        .iter()
        .zip(turn_calls)
        .enumerate()
        .map(|(ti, (st, calls))| {
            let at = own
                .and_then(|(_, at)| at.get(first..first + calls.len()))
                .unwrap_or(&[]);
            first += calls.len();
            let known = |w: usize, j: usize| w == j && at.get(j) == Some(&true);
            // (Where every call is its step's own at its place, the hashes rule nothing out.)
            let apart = own
                .filter(|_| st.workflow.len() * calls.len() > MEMO && at.contains(&false))
                .and_then(|(own, _)| {
                    Some(Apart::of(own.turn(ti), own.tallies(sc, ti)?, calls, at))
                });
            literal_turn(sc, ti, calls, &known, apart.as_ref())
        })
        .collect();
    Metrics::mean(&turns)
}

/// A long turn's steps and calls by their arguments' hashes: a step no call's hash equals
/// can match no call literally, a call no step's hash equals no step (equal arguments hash
/// alike: [`crate::hash::value_hash`] reads numbers by value, as [`json_equal`] does).
struct Apart {
    /// Per step, whether no call can match it.
    none: Vec<bool>,
    /// Per call, whether it can match no step.
    unmatched: Vec<bool>,
}

impl Apart {
    /// The steps' own calls `own` and their hashes counted (`tallies`, kept per scenario),
    /// the turn's `calls`, `at[j]` whether call `j` is step `j`'s own (its hash then the
    /// step's, not worked out).
    fn of(own: &[OwnStep], tallies: &OwnTallies, calls: &[&Call], at: &[bool]) -> Self {
        use std::collections::HashSet;
        let steps: Vec<u64> = own.iter().map(|s| s.hashes.arguments()).collect();
        let calls: Vec<u64> = calls
            .iter()
            .enumerate()
            .map(|(j, c)| match steps.get(j) {
                Some(&h) if at.get(j) == Some(&true) => h,
                _ => crate::hash::value_hash(c.arguments()),
            })
            .collect();
        let of_calls: HashSet<u64, crate::hash::Hashed> = calls.iter().copied().collect();
        Self {
            none: steps.iter().map(|h| !of_calls.contains(h)).collect(),
            unmatched: calls.iter().map(|&h| !tallies.has_arguments(h)).collect(),
        }
    }
}

/// Turn `ti`'s literal metrics against its `calls`; `known(w, j)`: call `j` is known to be
/// step `w` literally (its own call), not compared; `apart`, what the hashes rule out.
fn literal_turn(
    sc: &Scenario,
    ti: usize,
    calls: &[&Call],
    known: &dyn Fn(usize, usize) -> bool,
    apart: Option<&Apart>,
) -> Metrics {
    let st = &sc.turns[ti];
    best_variant(
        st,
        Lists::of(sc, ti),
        calls.len(),
        Relation {
            matches: &|w, j| known(w, j) || literal_matches(&st.workflow[w], calls[j]),
            none: &|w| apart.is_some_and(|a| a.none.get(w) == Some(&true)),
            unmatched: &|j| apart.is_some_and(|a| a.unmatched.get(j) == Some(&true)),
            matched: known,
        },
    )
}

/// Whether call `a` does step `o` under the step's match policies: one of the step's tools
/// ([`OracleCall::accepts_tool`]), and every parameter the step compares
/// (the oracle's `compared_params`) matching as the oracle compares it. `from_output` decides a
/// present value under the `from_output` policy.
pub fn policy_matches(
    o: &OracleCall,
    a: &Call,
    linter: &Linter,
    from_output: &dyn Fn(&Value) -> bool,
) -> bool {
    // The oracle's own comparison of a pair, pointer keys included.
    o.accepts_tool(&a.tool)
        && oracle::compare(o, a, linter, from_output)
            .iter()
            .all(|(_, bad)| bad.is_none())
}

/// Whether call `a` is step `o` literally: one of the step's tools and equal arguments,
/// numbers by value (`1` is `1.0`, as Python's `==` has it), match policies disregarded —
/// ADK's default.
pub fn literal_matches(o: &OracleCall, a: &Call) -> bool {
    o.accepts_tool(&a.tool) && json_equal(o.call.arguments(), a.arguments())
}

/// Python's `==` on decoded JSON, which ADK's argument comparison is: numbers by value, and a
/// boolean equal to the number it is in Python (`True == 1`, `False == 0.0`).
fn json_equal(x: &Value, y: &Value) -> bool {
    match (x, y) {
        (Value::Bool(b), Value::Number(n)) | (Value::Number(n), Value::Bool(b)) => {
            n.as_f64() == Some(if *b { 1.0 } else { 0.0 })
        }
        (Value::Number(p), Value::Number(q)) => match (p.as_i64(), q.as_i64()) {
            (Some(p), Some(q)) => p == q,
            _ => p.as_f64() == q.as_f64(),
        },
        (Value::Array(p), Value::Array(q)) => {
            p.len() == q.len() && p.iter().zip(q).all(|(p, q)| json_equal(p, q))
        }
        // Both maps in key order: equal keys pair up in one walk of each, no lookup.
        (Value::Object(p), Value::Object(q)) => {
            p.len() == q.len()
                && p.iter().zip(q).all(|((k, v), (l, w))| {
                    crate::hash::same_bytes(k.as_bytes(), l.as_bytes()) && json_equal(v, w)
                })
        }
        (Value::String(p), Value::String(q)) => crate::hash::same_bytes(p.as_bytes(), q.as_bytes()),
        _ => x == y,
    }
}

#[cfg(test)]
mod tests {
    /// The literal match's equality is Python's `==` on decoded JSON: numbers by value, a
    /// boolean equal to its number, maps equal with the same keys and values (in any order
    /// written), and nothing else equal.
    #[test]
    fn literal_equality_is_pythons() {
        use serde_json::json;
        let equal = [
            (json!(1), json!(1.0)),
            (json!(true), json!(1)),
            (json!(false), json!(0.0)),
            (json!("a"), json!("a")),
            (
                json!({"a": 1, "b": [1, {"c": true}]}),
                json!({"b": [1.0, {"c": 1}], "a": 1}),
            ),
            (json!({}), json!({})),
            (json!(null), json!(null)),
        ];
        let unequal = [
            (json!(1), json!(2)),
            (json!(true), json!(2)),
            (json!("1"), json!(1)),
            (json!("a"), json!("ab")),
            (json!({"a": 1}), json!({"b": 1})),
            (json!({"a": 1, "b": 2}), json!({"a": 1, "c": 2})),
            (json!({"a": 1}), json!({"a": 1, "b": 2})),
            (json!({"a": [1, 2]}), json!({"a": [2, 1]})),
            (json!([1]), json!({"0": 1})),
            (json!(null), json!(false)),
        ];
        for (x, y) in equal {
            assert!(
                super::json_equal(&x, &y) && super::json_equal(&y, &x),
                "{x} == {y}"
            );
        }
        for (x, y) in unequal {
            assert!(
                !super::json_equal(&x, &y) && !super::json_equal(&y, &x),
                "{x} != {y}"
            );
        }
    }

    /// Pseudo-random numbers from `seed` (a linear congruential generator): `next(n)` is
    /// below `n`.
    fn numbers(seed: u64) -> impl FnMut(u64) -> u64 {
        let mut state = seed;
        move |n| {
            state = state
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            (state >> 33) % n
        }
    }

    /// The in-order pairing, when kept, counts what the Hungarian algorithm counts: random
    /// match relations over steps with every kind of bound.
    #[test]
    fn the_walked_pairing_counts_as_the_optimal_one() {
        let (mut knew_done, mut knew_at) = (0, 0);
        let mut next = numbers(17);
        for _ in 0..3000 {
            let steps: Vec<Times> = (0..1 + next(5))
                .map(|_| match next(4) {
                    0 => Times {
                        min: 0,
                        max: Some(1),
                    },
                    1 => Times { min: 1, max: None },
                    2 => Times {
                        min: 2,
                        max: Some(3),
                    },
                    _ => Times::ONCE,
                })
                .collect();
            let calls = next(8) as usize;
            let m: Vec<Vec<bool>> = (0..steps.len())
                .map(|i| (0..calls).map(|j| i == j || next(4) == 0).collect())
                .collect();
            let matches = |i: usize, j: usize| m[i][j];
            let optimal = hungarian(&steps, calls, &matches);
            assert_eq!(
                pairing(
                    &steps,
                    calls,
                    &matches,
                    &|_| false,
                    &|_| false,
                    &|_| false,
                    0
                ),
                optimal,
                "{steps:?} {m:?}"
            );
            // Told what is known — the steps done once from the first that the calls at their
            // places match, the calls no step matches — every metric counts alike.
            let done = (0..steps.len().min(calls))
                .take_while(|&i| steps[i] == Times::ONCE && m[i][i])
                .count();
            let unmatched = |j: usize| !(0..steps.len()).any(|i| m[i][j]);
            let none = |_: usize| false;
            // And every step done once that the call at its place matches, past `done` too.
            let at = |i: usize| i < calls && steps[i] == Times::ONCE && m[i][i];
            let nothing = |_: usize| false;
            for at in [&at as &dyn Fn(usize) -> bool, &nothing] {
                assert_eq!(
                    pairing(&steps, calls, &matches, &none, &unmatched, &at, done),
                    optimal,
                    "{steps:?} {m:?} done {done}"
                );
                assert_eq!(
                    in_order(&steps, calls, &matches, &none, &at, done),
                    in_order(&steps, calls, &matches, &none, &nothing, 0),
                    "{steps:?} {m:?} done {done}"
                );
            }
            knew_at += usize::from((done..steps.len()).any(at));
            assert_eq!(
                exact(&steps, calls, &matches, done),
                exact(&steps, calls, &matches, 0),
                "{steps:?} {m:?} done {done}"
            );
            knew_done += usize::from(done > 0);
        }
        assert!(knew_done > 300, "{knew_done}");
        assert!(knew_at > 300, "{knew_at}");
    }

    /// Plain steps' metrics read from bit sets are those of the general walk: random
    /// relations, runs that follow their workflow among them.
    #[test]
    fn plain_steps_count_as_the_general_walk() {
        let mut next = numbers(29);
        let (mut follows, mut partial) = (0, 0);
        for round in 0..4000 {
            let steps = next(7) as usize;
            let calls = if round % 4 == 0 {
                steps
            } else {
                next(9) as usize
            };
            let sparse = 2 + next(4);
            let m: Vec<Vec<bool>> = (0..steps)
                .map(|i| {
                    (0..calls)
                        .map(|j| (i == j && next(8) != 0) || next(sparse) == 0)
                        .collect()
                })
                .collect();
            let matches = |i: usize, j: usize| m[i][j];
            let v: Vec<usize> = (0..steps).collect();
            let plain = Plain::of(&v, calls, &matches);
            follows += usize::from(plain.rows.is_empty());
            let got = plain.metrics();
            let want = Metrics::of(&vec![Times::ONCE; steps], calls, matches);
            assert_eq!(got, want, "{m:?}");
            partial += usize::from(want.any_order_match == 0.0 && want.recall > 0.0);
        }
        assert!(follows > 300 && partial > 300, "{follows} {partial}");
    }

    use super::*;
    use crate::finding::Severity;
    use crate::harness::Harness;
    use crate::source::SourceFile;
    use crate::spec::ToolSet;

    const TOOLS: &str = r#"[
        {"name": "find", "inputSchema": {"type": "object",
            "properties": {"q": {"type": "string"}, "n": {"type": "integer"},
                           "opts": {"type": "object", "properties": {"n": {"type": "integer"}}}}}},
        {"name": "open", "inputSchema": {"type": "object",
            "properties": {"id": {"type": "string"}}}},
        {"name": "save", "inputSchema": {"type": "object",
            "properties": {"id": {"type": "string"}, "note": {"type": "string"}}}}]"#;

    /// The trajectory of `calls` (a transcript's `turns:` list) against a scenario whose turns
    /// have these workflows (each a YAML flow sequence of steps).
    fn trajectory(workflows: &[&str], turns: &str) -> Trajectory {
        let spec = ToolSet::from_json(&serde_json::from_str(TOOLS).unwrap()).unwrap();
        let linter = Linter::new(&spec, vec![]).unwrap();
        let mut text = String::from("scenarios:\n  - id: s\n    turns:\n");
        for w in workflows {
            text.push_str(&format!("      - prompt: go\n        workflow: {w}\n"));
        }
        let harness =
            Harness::from_source(SourceFile::from_text("harnesses/t.yaml", text)).unwrap();
        let t = Transcript::from_source(
            SourceFile::from_text("t.yaml", format!("scenario: s\nturns:\n{turns}")),
            "t".into(),
        )
        .unwrap();
        let failed: Vec<bool> = t
            .calls()
            .map(|(_, c)| {
                linter
                    .lint(&c.tool, c.arguments())
                    .iter()
                    .any(|f| f.severity == Severity::Error)
            })
            .collect();
        let sc = harness.scenario("s").unwrap();
        let flow = crate::flow::analyze(&t, Some(sc), &linter, &failed);
        transcript(&t, sc, &linter, &flow)
    }

    fn metrics(e: f64, io: f64, ao: f64, p: f64, r: f64) -> Metrics {
        let f1 = if p + r > 0.0 {
            2.0 * p * r / (p + r)
        } else {
            0.0
        };
        Metrics {
            exact_match: e,
            in_order_match: io,
            any_order_match: ao,
            precision: p,
            recall: r,
            f1,
        }
    }

    const TWO_STEPS: &str =
        "[{tool: find, arguments: {q: cats}}, {tool: open, arguments: {id: a}}]";

    #[test]
    fn the_workflow_itself_matches_everywhere() {
        let t = trajectory(
            &[TWO_STEPS],
            "  - calls:\n    - {tool: find, arguments: {q: cats}}\n    - {tool: open, arguments: {id: a}}\n",
        );
        assert_eq!(t.policy, metrics(1.0, 1.0, 1.0, 1.0, 1.0));
        assert_eq!(t.literal, t.policy);
        assert_eq!((t.turns[0].steps, t.turns[0].calls), (2, 2));
    }

    /// Both steps done, in the other order: any-order holds, exact and in-order do not;
    /// precision and recall are 2/2.
    #[test]
    fn reordered_calls() {
        let t = trajectory(
            &[TWO_STEPS],
            "  - calls:\n    - {tool: open, arguments: {id: a}}\n    - {tool: find, arguments: {q: cats}}\n",
        );
        assert_eq!(t.policy, metrics(0.0, 0.0, 1.0, 1.0, 1.0));
        assert_eq!(t.literal, t.policy);
    }

    /// An extra call between the steps: in-order and any-order hold, exact does not; precision
    /// 2/3, recall 1, F1 2·(2/3)/(5/3) = 0.8.
    #[test]
    fn an_extra_call() {
        let t = trajectory(
            &[TWO_STEPS],
            "  - calls:\n    - {tool: find, arguments: {q: cats}}\n    - {tool: find, arguments: {q: dogs}}\n    - {tool: open, arguments: {id: a}}\n",
        );
        assert_eq!(t.policy, metrics(0.0, 1.0, 1.0, 2.0 / 3.0, 1.0));
        assert!((t.policy.f1 - 0.8).abs() < 1e-12);
    }

    /// One of two steps never called: no match holds; precision 1/1, recall 1/2, F1 2/3.
    #[test]
    fn a_missing_step() {
        let t = trajectory(
            &[TWO_STEPS],
            "  - calls:\n    - {tool: open, arguments: {id: a}}\n",
        );
        assert_eq!(t.policy, metrics(0.0, 0.0, 0.0, 1.0, 0.5));
        assert!((t.policy.f1 - 2.0 / 3.0).abs() < 1e-12);
    }

    /// `save` where the workflow opens: the wrong tool matches nothing, even with the step's
    /// arguments. Precision 1/2, recall 1/2.
    #[test]
    fn a_wrong_tool() {
        let t = trajectory(
            &[TWO_STEPS],
            "  - calls:\n    - {tool: find, arguments: {q: cats}}\n    - {tool: save, arguments: {id: a}}\n",
        );
        assert_eq!(t.policy, metrics(0.0, 0.0, 0.0, 0.5, 0.5));
        assert_eq!(t.literal, t.policy);
    }

    /// A variant the step's policies accept (another `q` under `ignore`, `n` within tolerance)
    /// matches under the policies and not literally, as ADK would score it; so does a call
    /// with an argument the step does not compare.
    #[test]
    fn a_variant_the_policies_accept() {
        let t = trajectory(
            &["[{tool: find, arguments: {q: cats, n: 10}, match: {q: ignore, n: {tolerance: 1}}}]"],
            "  - calls:\n    - {tool: find, arguments: {q: kittens, n: 11}}\n",
        );
        assert_eq!(t.policy, metrics(1.0, 1.0, 1.0, 1.0, 1.0));
        assert_eq!(t.literal, metrics(0.0, 0.0, 0.0, 0.0, 0.0));
        let t = trajectory(
            &["[{tool: find, arguments: {q: cats}}]"],
            "  - calls:\n    - {tool: find, arguments: {q: cats, n: 3}}\n",
        );
        assert_eq!(t.policy, metrics(1.0, 1.0, 1.0, 1.0, 1.0));
        assert_eq!(t.literal, metrics(0.0, 0.0, 0.0, 0.0, 0.0));
        // A policy keyed by a JSON pointer reaches inside an argument.
        let t = trajectory(
            &["[{tool: find, arguments: {opts: {n: 10}}, match: {/opts/n: {tolerance: 1}}}]"],
            "  - calls:\n    - {tool: find, arguments: {opts: {n: 9}}}\n",
        );
        assert_eq!(t.policy, metrics(1.0, 1.0, 1.0, 1.0, 1.0));
        assert_eq!(t.literal, metrics(0.0, 0.0, 0.0, 0.0, 0.0));
        // Numbers compare by value literally too, as Python's dict equality has it.
        let t = trajectory(
            &["[{tool: find, arguments: {n: 10}}]"],
            "  - calls:\n    - {tool: find, arguments: {n: 10.0}}\n",
        );
        assert_eq!(t.literal, metrics(1.0, 1.0, 1.0, 1.0, 1.0));
    }

    /// `from_output` is decided by the flow engine at the call's transcript-wide index: a value
    /// the first turn's call produced matches in the second turn, another does not.
    #[test]
    fn from_output_across_turns() {
        let workflows = [
            "[{tool: find, arguments: {q: cats}}]",
            "[{tool: open, arguments: {id: 'gs://b/a.png'}, match: {id: from_output}}]",
        ];
        let first = "  - calls:\n    - tool: find\n      arguments: {q: cats}\n      output: {content: [{type: text, text: 'gs://b/z.png'}]}\n";
        let t = trajectory(
            &workflows,
            &format!(
                "{first}  - calls:\n    - {{tool: open, arguments: {{id: 'gs://b/z.png'}}}}\n"
            ),
        );
        assert_eq!(t.turns[1].policy, metrics(1.0, 1.0, 1.0, 1.0, 1.0));
        assert_eq!(t.turns[1].literal, metrics(0.0, 0.0, 0.0, 0.0, 0.0));
        let t = trajectory(
            &workflows,
            &format!(
                "{first}  - calls:\n    - {{tool: open, arguments: {{id: 'gs://b/q.png'}}}}\n"
            ),
        );
        assert_eq!(t.turns[1].policy, metrics(0.0, 0.0, 0.0, 0.0, 0.0));
    }

    /// No steps and no calls: all 1. No steps but a call: exact 0, in-order and any-order 1
    /// (nothing was required), precision 0, recall 1, F1 0.
    #[test]
    fn empty_trajectories() {
        let t = trajectory(&["[]"], "  - calls: []\n");
        assert_eq!(t.policy, metrics(1.0, 1.0, 1.0, 1.0, 1.0));
        assert_eq!(t.literal, t.policy);
        let t = trajectory(
            &["[]"],
            "  - calls:\n    - {tool: find, arguments: {q: cats}}\n",
        );
        assert_eq!(t.policy, metrics(0.0, 1.0, 1.0, 0.0, 1.0));
    }

    /// Two turns, the first perfect, the second never reached (it counts with no calls: the
    /// three matches 0, precision 1, recall 0, F1 0): the transcript's metrics are their means.
    #[test]
    fn a_transcript_is_the_mean_of_its_turns() {
        let t = trajectory(
            &[TWO_STEPS, "[{tool: save, arguments: {id: a}}]"],
            "  - calls:\n    - {tool: find, arguments: {q: cats}}\n    - {tool: open, arguments: {id: a}}\n",
        );
        assert_eq!(t.turns.len(), 2);
        assert_eq!(t.turns[1].policy, metrics(0.0, 0.0, 0.0, 1.0, 0.0));
        assert_eq!(
            t.policy,
            Metrics {
                exact_match: 0.5,
                in_order_match: 0.5,
                any_order_match: 0.5,
                precision: 1.0,
                recall: 0.5,
                f1: 0.5,
            }
        );
    }

    /// An optional step left out costs nothing; done, it is a matched call. A step with a
    /// tool alternative is done by either tool, under both rules.
    #[test]
    fn optional_steps_and_tool_alternatives() {
        let workflow = "[{tool: find, arguments: {q: cats}, optional: true}, {tool: [open, save], arguments: {id: a}}]";
        let t = trajectory(
            &[workflow],
            "  - calls:\n    - {tool: save, arguments: {id: a}}\n",
        );
        assert_eq!(t.policy, metrics(1.0, 1.0, 1.0, 1.0, 1.0));
        assert_eq!(t.literal, t.policy);
        let t = trajectory(
            &[workflow],
            "  - calls:\n    - {tool: find, arguments: {q: cats}}\n    - {tool: open, arguments: {id: a}}\n",
        );
        assert_eq!(t.policy, metrics(1.0, 1.0, 1.0, 1.0, 1.0));
    }

    /// `count: 2` stands for two steps: one call is half the recall; three are one too many for
    /// exact (precision 2/3), still in order.
    #[test]
    fn a_repeated_step() {
        let workflow = "[{tool: find, arguments: {q: cats}, match: {q: ignore}, count: 2}]";
        let one = "  - calls:\n    - {tool: find, arguments: {q: a}}\n";
        let t = trajectory(&[workflow], one);
        assert_eq!(t.policy, metrics(0.0, 0.0, 0.0, 1.0, 0.5));
        let two = format!("{one}    - {{tool: find, arguments: {{q: b}}}}\n");
        assert_eq!(
            trajectory(&[workflow], &two).policy,
            metrics(1.0, 1.0, 1.0, 1.0, 1.0)
        );
        let three = format!("{two}    - {{tool: find, arguments: {{q: c}}}}\n");
        let t = trajectory(&[workflow], &three);
        assert_eq!(t.policy, metrics(0.0, 1.0, 1.0, 2.0 / 3.0, 1.0));
        // `min: 1` with no `max` takes all three.
        let t = trajectory(
            &["[{tool: find, arguments: {q: cats}, match: {q: ignore}, min: 1}]"],
            &three,
        );
        assert_eq!(t.policy, metrics(1.0, 1.0, 1.0, 1.0, 1.0));
    }

    /// `any_of:` step lists: the turn is scored against each combination, the best kept.
    #[test]
    fn any_of_step_lists() {
        let workflow = "[{tool: find, arguments: {q: cats}}, {any_of: [[{tool: open, arguments: {id: a}}], [{tool: save, arguments: {id: a}}, {tool: open, arguments: {id: a}}]]}]";
        let t = trajectory(
            &[workflow],
            "  - calls:\n    - {tool: find, arguments: {q: cats}}\n    - {tool: save, arguments: {id: a}}\n    - {tool: open, arguments: {id: a}}\n",
        );
        assert_eq!(t.policy, metrics(1.0, 1.0, 1.0, 1.0, 1.0));
        assert_eq!(t.turns[0].steps, 4);
        // `save` alone does neither list: the first list's `open` is missing, the second's too.
        let t = trajectory(
            &[workflow],
            "  - calls:\n    - {tool: find, arguments: {q: cats}}\n    - {tool: save, arguments: {id: a}}\n",
        );
        // Best F1: the second list (precision 2/2, recall 2/3) over the first (1/2, 1/2).
        assert_eq!(t.policy, metrics(0.0, 0.0, 0.0, 1.0, 2.0 / 3.0));
    }

    /// Repeated calls to one tool: a first-match pairing would give step 0's call to step 1's
    /// and leave it unmatched; the optimal pairing matches both (adk-python #5306).
    #[test]
    fn the_pairing_is_optimal() {
        // Step 0 accepts any `q`; step 1 only `dogs`. Call 0 is `dogs`, call 1 `cats`.
        let m = Metrics::of(&[Times::ONCE; 2], 2, |i, j| i == 0 || j == 0);
        assert_eq!(m.any_order_match, 1.0);
        assert_eq!((m.precision, m.recall), (1.0, 1.0));
        // In order, step 0 takes call 0 and leaves step 1 nothing: in-order is strict.
        assert_eq!(m.in_order_match, 0.0);
        assert_eq!(m.exact_match, 0.0);
        // One call that an optional step and a required one both accept goes to the required.
        let optional = Times {
            min: 0,
            max: Some(1),
        };
        let m = Metrics::of(&[optional, Times::ONCE], 1, |_, _| true);
        assert_eq!(m, metrics(1.0, 1.0, 1.0, 1.0, 1.0));
    }

    /// Steps done once each, as many as the calls, where what is known decides the metrics
    /// from the calls at the steps' places ([`at_places`]): every relation of up to four
    /// steps and calls, with what is known of it as a long turn's hashes and own calls tell
    /// it (the steps no call matches; the pairs at the places a step's own call makes; a
    /// prefix of them done), gives the metrics of the three searches and the Hungarian
    /// algorithm over every pair.
    #[test]
    fn the_calls_at_their_places_decide_what_the_searches_would() {
        let (mut shortcuts, mut left_over) = (0, 0);
        for n in 0..=4usize {
            for bits in 0u32..1 << (n * n) {
                let m = |i: usize, j: usize| bits >> (i * n + j) & 1 == 1;
                let none = |i: usize| (0..n).all(|j| !m(i, j));
                let steps = vec![Times::ONCE; n];
                let (exact_match, in_order_match) = (
                    exact(&steps, n, &m, 0),
                    in_order(&steps, n, &m, &|_| false, &|_| false, 0),
                );
                let (matched, required) = hungarian(&steps, n, &m);
                let one = |b: bool| if b { 1.0 } else { 0.0 };
                // Of the pairs at the places that match, every other one known (a step's own
                // call), and the known ones from the first a prefix.
                let at = |i: usize| i.is_multiple_of(2) && m(i, i);
                let done = (0..n).take_while(|&i| at(i)).count();
                let known = Known {
                    none,
                    unmatched: |j: usize| (0..n).all(|i| !m(i, j)),
                    done,
                    at,
                };
                let got = Metrics::of_known(&steps, n, m, known);
                match at_places(&steps, n, &|i, j| m(i, j), &none, done) {
                    Some(0) => shortcuts += 1,
                    Some(_) => left_over += 1,
                    None => {}
                }
                let what = format!("{n} steps, relation {bits:#b}");
                assert_eq!(
                    (got.exact_match, got.in_order_match, got.any_order_match),
                    (one(exact_match), one(in_order_match), one(required == n)),
                    "{what}"
                );
                let ratio = |x: usize| if n == 0 { 1.0 } else { x as f64 / n as f64 };
                assert_eq!(
                    (got.precision, got.recall),
                    (ratio(matched), ratio(required)),
                    "{what}"
                );
            }
        }
        // The shortcut decided a good share of them, with steps left over and without.
        assert!(
            shortcuts > 1_000 && left_over > 1_000,
            "{shortcuts} {left_over}"
        );
    }

    /// A turn of many pairs rules pairs out by their values' hashes
    /// (`TurnFacts::literally_apart`, the policies' exactly compared values): every answer
    /// the same as comparing the values — numbers by value (`1`, `1.0`, `-0.0` and `0`), a
    /// boolean not the number it is in Python under `exact` but literally, nested numbers,
    /// absent values, policies the hash cannot decide (pointer keys, tolerance, semantic).
    #[test]
    fn hashes_rule_out_only_what_comparing_would() {
        const TOOLS: &str = r#"[
            {"name": "set", "inputSchema": {"type": "object",
                "properties": {"a": {}, "b": {}, "c": {}}}},
            {"name": "put", "inputSchema": {"type": "object",
                "properties": {"a": {}, "b": {}, "c": {}}}}]"#;
        const VALUES: &[&str] = &[
            "1",
            "1.0",
            "true",
            "false",
            "0",
            "-0.0",
            "\"1\"",
            "null",
            "[1, 2]",
            "[1.0, 2]",
            "{\"k\": 1}",
            "{\"k\": 1.0}",
            "{\"k\": 2}",
        ];
        const POLICIES: &[&str] = &[
            "",
            ", match: {a: semantic}",
            ", match: {b: ignore}",
            ", match: {c: {tolerance: 1}}",
            ", match: {/a/k: {tolerance: 1}}",
            ", match: {a: exact}",
            ", match: {c: absent}",
        ];
        let mut seed = 7u64;
        let mut next = |n: usize| {
            seed = seed
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            ((seed >> 33) % n as u64) as usize
        };
        let (steps, calls) = (40, 40);
        let args = |next: &mut dyn FnMut(usize) -> usize| {
            let mut a: Vec<String> = Vec::new();
            for p in ["a", "b", "c"] {
                if next(4) > 0 {
                    a.push(format!("\"{p}\": {}", VALUES[next(VALUES.len())]));
                }
            }
            format!("{{{}}}", a.join(", "))
        };
        let step_args: Vec<(String, String)> = (0..steps)
            .map(|_| (["set", "put"][next(2)].to_owned(), args(&mut next)))
            .collect();
        let workflow: Vec<String> = step_args
            .iter()
            .map(|(tool, a)| {
                format!(
                    "{{tool: {tool}, arguments: {a}{}}}",
                    POLICIES[next(POLICIES.len())]
                )
            })
            .collect();
        let spec = ToolSet::from_json(&serde_json::from_str(TOOLS).unwrap()).unwrap();
        let linter = Linter::new(&spec, vec![]).unwrap();
        let text = format!(
            "scenarios:\n  - id: s\n    turns:\n      - prompt: go\n        workflow: [{}]\n",
            workflow.join(", ")
        );
        let harness =
            Harness::from_source(SourceFile::from_text("harnesses/t.yaml", text)).unwrap();
        // Half the calls a step's own (every kind of step then matches some call), the
        // others drawn afresh.
        let mut turn = String::from("  - calls:\n");
        for _ in 0..calls {
            let (tool, a) = if next(2) == 0 {
                step_args[next(steps)].clone()
            } else {
                (["set", "put"][next(2)].to_owned(), args(&mut next))
            };
            turn.push_str(&format!("    - {{tool: {tool}, arguments: {a}}}\n"));
        }
        let t = Transcript::from_source(
            SourceFile::from_text("t.yaml", format!("scenario: s\nturns:\n{turn}")),
            "t".into(),
        )
        .unwrap();
        let sc = harness.scenario("s").unwrap();
        let flow = crate::flow::analyze(&t, Some(sc), &linter, &vec![false; calls]);
        let flat: Vec<&Call> = t.calls().map(|(_, c)| c).collect();
        let turns = oracle::per_turn(&flat, &t, 1);
        let own = crate::score::own::Own::none();
        let facts = oracle::facts(sc, &turns, &own, &linter, &flow, &[]);
        let many = &facts[0];
        let st = &sc.turns[0].workflow;
        let (mut policy, mut literal, mut apart) = (0, 0, 0);
        for (j, &call) in flat.iter().enumerate() {
            // The same call alone: a turn of a few pairs, compared without hashes.
            let one = [call];
            let few = TurnFacts::new(
                j,
                &one,
                crate::score::pairing::Steps {
                    workflow: st,
                    params: oracle::compared_in(sc, 0),
                    keys: oracle::step_keys(sc, 0),
                    own: own.turn(0, j, 1),
                },
                &linter,
                &flow,
                &[],
            );
            for (w, step) in st.iter().enumerate() {
                let compared = policy_matches(step, call, &linter, &|_| false);
                assert_eq!(many.policy_matches(w, j), compared, "step {w}, call {j}");
                assert_eq!(
                    few.policy_matches(w, 0),
                    compared,
                    "step {w}, call {j} alone"
                );
                assert_eq!(
                    many.similarity(w, j),
                    few.similarity(w, 0),
                    "step {w}, call {j}"
                );
                let equal = literal_matches(step, call);
                assert!(!(equal && many.literally_apart(w, j)), "step {w}, call {j}");
                policy += usize::from(compared);
                literal += usize::from(equal);
                apart += usize::from(many.literally_apart(w, j));
            }
        }
        // Both answers were given, and the hashes ruled most pairs out.
        assert!(
            policy >= calls / 2 && literal >= calls / 2,
            "{policy} {literal}"
        );
        assert!(apart >= steps * calls / 2, "{apart}");
        // A step the hashes say no call does is done by none; a bound of a step's similarity
        // with every call but one holds for each of them.
        let (mut none, mut bounded) = (0, 0);
        for (w, step) in st.iter().enumerate() {
            let does = |j: usize| policy_matches(step, flat[j], &linter, &|_| false);
            if many.no_policy_match(w) {
                assert!(!(0..calls).any(does), "step {w}: a call does it");
                none += 1;
            }
            if many.no_literal_match(w) {
                let is = |j: usize| literal_matches(step, flat[j]);
                assert!(!(0..calls).any(is), "step {w}: a call is it");
                none += 1;
            }
            for j in (0..calls).map(Some).chain([None]) {
                if let Some(bound) = many.rival(w, j) {
                    for k in (0..calls).filter(|&k| Some(k) != j) {
                        assert!(many.similarity(w, k) <= bound, "step {w}, {j:?}: call {k}");
                    }
                    bounded += 1;
                }
            }
        }
        assert!(none > 0 && bounded > 0, "{none} {bounded}");
        // Told which calls are steps' own, the hashes are counted by the turn's difference
        // from them: every answer as counted call by call, on this run and on the workflow
        // itself with every third call drawn afresh (a run that mostly follows it).
        let own_calls = crate::score::own::OwnCalls::of(sc, &linter);
        let mut ordered = String::from("  - calls:\n");
        for (k, (tool, a)) in step_args.iter().enumerate() {
            let (tool, a) = if k % 3 == 2 {
                (["set", "put"][next(2)].to_owned(), args(&mut next))
            } else {
                (tool.clone(), a.clone())
            };
            ordered.push_str(&format!("    - {{tool: {tool}, arguments: {a}}}\n"));
        }
        let ordered = Transcript::from_source(
            SourceFile::from_text("o.yaml", format!("scenario: s\nturns:\n{ordered}")),
            "o".into(),
        )
        .unwrap();
        let (mut owned, mut unmatched) = (0, 0);
        for t in [&t, &ordered] {
            let n = t.calls().count();
            let flow = crate::flow::analyze(t, Some(sc), &linter, &vec![false; n]);
            let flat: Vec<&Call> = t.calls().map(|(_, c)| c).collect();
            let turns = oracle::per_turn(&flat, t, 1);
            let none = crate::score::own::Own::none();
            let own = crate::score::own::align(sc, t, Some(&own_calls), &[]);
            owned += own.of_call.iter().flatten().count();
            let every = oracle::facts(sc, &turns, &none, &linter, &flow, &[]);
            let known = oracle::facts(sc, &turns, &own, &linter, &flow, &[]);
            let (every, known) = (&every[0], &known[0]);
            for w in 0..st.len() {
                assert_eq!(
                    known.no_policy_match(w),
                    every.no_policy_match(w),
                    "step {w}"
                );
                assert_eq!(
                    known.no_literal_match(w),
                    every.no_literal_match(w),
                    "step {w}"
                );
                for j in (0..n).map(Some).chain([None]) {
                    assert_eq!(known.rival(w, j), every.rival(w, j), "step {w}, {j:?}");
                }
            }
            for (j, &call) in flat.iter().enumerate() {
                if known.no_step_matches(j) {
                    let does = |step| policy_matches(step, call, &linter, &|_| false);
                    assert!(!st.iter().any(does), "call {j}: a step does it");
                    unmatched += 1;
                }
                if known.literally_no_step(j) {
                    assert!(
                        !st.iter().any(|step| literal_matches(step, call)),
                        "call {j}"
                    );
                    unmatched += 1;
                }
            }
        }
        assert!(owned >= steps / 2 && unmatched > 0, "{owned} {unmatched}");
    }
}
