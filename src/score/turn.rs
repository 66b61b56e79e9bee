//! One turn's oracle score for one way its workflow allows (a variant, repeated steps
//! expanded): the steps paired with the calls once ([`TurnFacts::assign`]), then each
//! dimension a small function over that pairing — usage, selection, ordering, arguments —
//! then the findings that say why, then the critical errors' collapse. The main type is
//! [`Turn`]; [`super::oracle::score_with`] makes one per turn and variant.

use smallvec::{SmallVec, smallvec};
use std::collections::BTreeMap;

use super::oracle::{expectation, policy_at};
use super::pairing::TurnFacts;
use super::{Score, SubScores};
use crate::finding::{Code, Finding, Severity, SubDimension};
use crate::harness::{Call, Forbid, OracleCall};
use crate::lint::Linter;
use crate::source::json::{escape, pointer, push_text};
use crate::spec::capability::ArtifactKind;

use SubDimension::*;

/// A turn's steps (one variant) against its calls.
pub(crate) struct Turn<'t, 'a> {
    pub(crate) facts: &'t TurnFacts<'a>,
    /// The variant's steps, as workflow indices, each repeated as its count allows.
    pub(crate) steps: &'t [usize],
    /// Per step, whether it may be left out.
    pub(crate) optional: &'t [bool],
    /// Per step, the earlier steps (indices into `steps`) it must follow; empty when no step
    /// consumes another's output (the usual turn).
    pub(crate) after: Vec<Vec<usize>>,
    pub(crate) forbid: &'t [Forbid],
    pub(crate) severity: &'t BTreeMap<Code, Severity>,
}

/// Which call does which step: `of_step[i]` the call paired with step `i`, `of_call[j]` the
/// step paired with call `j`; `done[i]` when that call did the step.
struct Pairing {
    of_step: Vec<Option<usize>>,
    of_call: SmallVec<[Option<usize>; 8]>,
    done: SmallVec<[bool; 8]>,
}

impl Pairing {
    fn pairs(&self) -> impl Iterator<Item = (usize, usize)> + '_ {
        self.of_step
            .iter()
            .enumerate()
            .filter_map(|(i, j)| j.map(|j| (i, j)))
    }

    /// Calls no step is paired with.
    fn extra(&self) -> impl Iterator<Item = usize> + '_ {
        (0..self.of_call.len()).filter(|j| self.of_call[*j].is_none())
    }
}

/// A pair's six argument sub-dimensions from its completeness, name, value (`wrong`: a
/// compared value breaks the step's policy) and type, format and relevancy, with the paper's
/// cascades (§4.1, Table 18's footnote): a wrong name or a missing required parameter zeroes
/// value, type and format; a wrong value zeroes type, format and relevancy. A wrong value is
/// judged per argument, as the paper has it ("a single critical error collapses the argument
/// mean"): one argument the workflow pins that the call gets wrong, under its match policy, is
/// such an error for the whole call.
fn cascade(completeness: f64, name: f64, value: f64, wrong: bool, rest: [f64; 3]) -> SubScores {
    let (mut value, [mut ty, mut format, mut relevancy]) = (value, rest);
    if name < 1.0 || completeness < 1.0 {
        (value, ty, format) = (0.0, 0.0, 0.0);
    }
    if wrong {
        value = 0.0;
    }
    if value <= 0.3 {
        (ty, format, relevancy) = (0.0, 0.0, 0.0);
    }
    SubScores::from_iter([
        (ArgumentCompleteness, completeness),
        (ArgumentName, name),
        (ArgumentValue, value),
        (ArgumentType, ty),
        (ArgumentFormat, format),
        (ArgumentRelevancy, relevancy),
    ])
}

/// Argument completeness of call `a` given its findings (`mine`): required parameters present,
/// and present ones whole (a parameter missing a required field inside it,
/// `/relations/0/relationType`, is as incomplete as a missing one).
pub(super) fn completeness(linter: &Linter, a: &Call, mine: &[&Finding]) -> f64 {
    let args = a.args();
    let required = linter.required(&a.tool);
    let mut nested: SmallVec<[&str; 4]> = mine
        .iter()
        .filter(|f| f.code == Code::MissingRequired && f.pointer.matches('/').count() >= 2)
        .map(|f| f.pointer.split('/').nth(1).unwrap_or(""))
        .collect();
    nested.sort_unstable();
    nested.dedup();
    let (mut whole, mut wanted) = (0, 0);
    for r in required {
        wanted += 1;
        whole += usize::from(has_key(args, r) && !nested.contains(&&**r));
    }
    let incomplete_optional = nested
        .iter()
        .filter(|&&p| !required.iter().any(|r| **r == *p))
        .count();
    if wanted == 0 && nested.is_empty() {
        1.0
    } else {
        whole as f64 / (wanted + incomplete_optional) as f64
    }
}

/// Whether `args` has `name`: a call's few arguments looked through one by one
/// ([`crate::hash::among`]); many, in the map.
fn has_key(args: &serde_json::Map<String, serde_json::Value>, name: &str) -> bool {
    if args.len() > 8 {
        return args.contains_key(name);
    }
    crate::hash::among(args.keys().map(String::as_str), name)
}

fn ratio(num: usize, den: usize, empty: f64) -> f64 {
    if den == 0 {
        empty
    } else {
        num as f64 / den as f64
    }
}

impl Turn<'_, '_> {
    /// The turn's score under this variant, and the oracle's findings. `strict`: `order:
    /// strict` (every step pair ordered; a pair out of order is an error).
    pub(crate) fn score(&self, strict: bool) -> (Score, Vec<Finding>) {
        let p = self.pair();
        let mut sub = SubScores::default();
        let mut out = Vec::new();
        self.usage(&p, &mut sub);
        self.selection(&p, &mut sub);
        if self.facts.calls.len() >= 2 {
            self.ordering(&p, strict, &mut sub, &mut out);
        }
        let args = self.arguments(&p, &mut out);
        sub.overlay(&args);
        self.pair_findings(&p, &mut out);
        self.missing_findings(&p, &mut out);
        self.extra_findings(&p, &mut out);
        self.forbidden_findings(&mut out);
        self.collapse(&mut sub, &mut out);
        (Score::from_sub(sub), out)
    }

    fn step(&self, i: usize) -> &OracleCall {
        &self.facts.workflow[self.steps[i]]
    }

    fn call(&self, j: usize) -> &Call {
        self.facts.calls[j]
    }

    fn changes_nothing(&self, i: usize, j: usize) -> bool {
        self.facts.changes_nothing(self.steps[i], j)
    }

    /// A finding about call `j` of the turn.
    fn at_call(&self, j: usize, code: Code, message: String) -> Finding {
        let mut f = Finding::new(code, "", message);
        f.call = Some(self.facts.first + j);
        f
    }

    /// The pairing weight of step `i` and call `j`: the similarity, a little less when the
    /// call did not do what the step does (of two equally good calls the one that did the
    /// step wins) and for an optional step (of two equally good steps the required one);
    /// and whether the call changes nothing where the step changes something (a dry run:
    /// asked once, the pairing reads both).
    fn weight_and_dry(&self, i: usize, j: usize) -> (f64, bool) {
        let mut s = self.facts.similarity(self.steps[i], j);
        let dry = self.changes_nothing(i, j);
        if dry || self.facts.failed(j) {
            s *= 0.99;
        }
        if self.optional[i] {
            s *= 0.98;
        }
        (s, dry)
    }

    /// The most a pairing weight ([`Turn::weight_and_dry`]) can be for step `i`.
    fn cap(&self, i: usize) -> f64 {
        let mut s = 1.0;
        if self.optional[i] {
            s *= 0.98;
        }
        s
    }

    fn pair(&self) -> Pairing {
        // A required step's own tools pair first: a call of another tool stands in for a
        // required step only where no call of its tools that may do it (one that changes
        // what the step changes) is left for it, however well the stand-in fits. (Summed
        // alone, the weights traded a perfect pair for a stand-in: a read-back after an edit
        // stood in for the edit, while the edit took the optional dry run before it.) So such
        // a pair weighs one more: a similarity of 0.5 or more is one of the step's tools,
        // another tool's never reaches 0.45, and the rivals' bounds get the one as if they
        // could (still bounds). An optional step's pairs, and a dry run's for a step that
        // changes something, weigh as they are (a preview, then a write in place of the
        // edit: the write stands in for the edit, the preview takes the optional preview).
        let own_first = |i: usize, w: f64| {
            if !self.optional[i] && w >= 0.475 {
                w + 1.0
            } else {
                w
            }
        };
        let of_step = if self.each_call_its_steps_alone() {
            (0..self.steps.len()).map(Some).collect()
        } else {
            self.facts.assign(
                self.steps.len(),
                &|i, j| {
                    let (w, dry) = self.weight_and_dry(i, j);
                    if dry { w } else { own_first(i, w) }
                },
                &|i| own_first(i, self.cap(i)),
                &|i, j| {
                    self.facts
                        .rival(self.steps[i], j)
                        .map(|r| own_first(i, r * self.cap(i)))
                },
            )
        };
        let mut of_call = smallvec![None; self.facts.calls.len()];
        for (i, j) in of_step.iter().enumerate() {
            if let Some(j) = j {
                of_call[*j] = Some(i);
            }
        }
        // A step is done by a call of its tool that worked and did what the step does (a dry
        // run in place of an edit changes nothing), with values the step's policies accept.
        let done = of_step
            .iter()
            .enumerate()
            .map(|(i, j)| {
                j.is_some_and(|j| {
                    let w = self.steps[i];
                    // A step's own call, every value matching, is of its tool (the usual pair
                    // of a long run: the tool's name not compared).
                    (self.facts.own.clean(w, j)
                        || (self.facts.of_tools(w, j) && self.facts.all_match(w, j)))
                        && !self.facts.failed(j)
                        && !self.changes_nothing(i, j)
                })
            })
            .collect();
        Pairing {
            of_step,
            of_call,
            done,
        }
    }

    /// Whether each call is of the tools of the step at its place and of no other step's, every
    /// step required, in a turn of a few calls: then each step pairs with the call at its
    /// place, whatever their values, and no weight need be asked. (The pair at its place
    /// weighs 0.495 or more: a similarity of 0.5 or more, a hundredth less for a failed call
    /// or a dry run, and one more unless a dry run. A step weighs a call of another tool 0.45
    /// at most, and no call 0: any other pairing weighs less at every step where it differs,
    /// so this is the only best one, and none of its pairs falls below 0.2.)
    fn each_call_its_steps_alone(&self) -> bool {
        const FEW: usize = 8;
        let n = self.steps.len();
        n == self.facts.calls.len()
            && n <= FEW
            && self.optional.iter().all(|o| !o)
            && (0..n).all(|j| {
                let tool = &self.call(j).tool;
                (0..n).all(|i| self.step(i).accepts_tool(tool) == (i == j))
            })
    }

    fn required(&self) -> usize {
        self.optional.iter().filter(|o| !**o).count()
    }

    /// Usage: calls made iff the workflow needs some; overuse recorded.
    fn usage(&self, p: &Pairing, sub: &mut SubScores) {
        let calls = self.facts.calls.len();
        let none_needed = self.required() == 0 && p.of_step.iter().all(Option::is_none);
        sub.insert(
            UsageNecessity,
            if none_needed == (calls == 0) {
                1.0
            } else {
                0.0
            },
        );
        let extra = p.extra().count();
        sub.insert(
            UsageOveruse,
            if calls == 0 {
                1.0
            } else {
                1.0 - extra as f64 / calls as f64
            },
        );
    }

    /// Calls whose tool some step uses, each step taken once (first come first served).
    fn right_tools(&self) -> usize {
        let steps = &self.steps;
        if steps
            .iter()
            .all(|&w| self.facts.workflow[w].alternatives.is_empty())
        {
            // One tool a step, every call of the tool of the step at its place (a run that
            // follows its workflow, or wrong only in values): the steps' tools and the calls'
            // are the same names as many times, so every call is of a right tool.
            if steps.len() == self.facts.calls.len()
                && steps
                    .iter()
                    .enumerate()
                    .all(|(j, &w)| self.facts.of_tools(w, j))
            {
                return steps.len();
            }
            // Else each tool's calls take its steps, as many as there are — per tool the fewer
            // of its calls and its steps (whichever calls come first), from the turn's counts
            // of its calls' tools (no pass over the calls).
            let steps_of = crate::hash::NameCounts::of(
                steps
                    .iter()
                    .map(|&w| self.facts.workflow[w].call.tool.as_str()),
            );
            return steps_of
                .counts()
                .map(|(tool, n)| n.min(self.facts.calls_of_tool(tool)) as usize)
                .sum();
        }
        // Alternatives: a greedy pass over a pool of steps (O(steps × calls)).
        let mut pool: Vec<&OracleCall> = (0..steps.len()).map(|i| self.step(i)).collect();
        let mut right = 0;
        for c in self.facts.calls {
            if let Some(k) = pool.iter().position(|o| o.accepts_tool(&c.tool)) {
                pool.swap_remove(k);
                right += 1;
            }
        }
        right
    }

    /// Selection: correctness, specificity, completeness.
    fn selection(&self, p: &Pairing, sub: &mut SubScores) {
        let empty = if self.steps.is_empty() { 1.0 } else { 0.0 };
        let calls = self.facts.calls.len();
        sub.insert(
            SelectionCorrectness,
            ratio(self.right_tools(), calls, empty),
        );
        let (mut pairs, mut same_tool, mut required_done) = (0, 0, 0);
        for (i, j) in p.pairs() {
            pairs += 1;
            same_tool += usize::from(self.facts.of_tools(self.steps[i], j));
            required_done += usize::from(!self.optional[i] && p.done[i]);
        }
        sub.insert(SelectionSpecificity, ratio(same_tool, pairs, empty));
        sub.insert(
            SelectionCompleteness,
            ratio(required_done, self.required(), 1.0),
        );
    }

    /// Step pairs (a, b), both paired, where b must follow a: b consumes a's mock output, or
    /// every pair under `order: strict` (O(steps²) then); two copies of one repeated step have
    /// no order between them.
    fn judged_pairs(&self, p: &Pairing, strict: bool) -> Vec<(usize, usize)> {
        let n = self.steps.len();
        let mut out = Vec::new();
        for b in (0..n).filter(|&b| p.of_step[b].is_some()) {
            let judged = |&a: &usize| p.of_step[a].is_some() && self.steps[a] != self.steps[b];
            if strict {
                out.extend((0..b).filter(judged).map(|a| (a, b)));
            } else if let Some(after) = self.after.get(b) {
                out.extend(after.iter().copied().filter(judged).map(|a| (a, b)));
            }
        }
        out
    }

    /// Ordering: sequence, dependency, efficiency (two calls or more).
    fn ordering(&self, p: &Pairing, strict: bool, sub: &mut SubScores, out: &mut Vec<Finding>) {
        let calls = self.facts.calls.len();
        let judged = self.judged_pairs(p, strict);
        let inverted = |&(a, b): &(usize, usize)| p.of_step[a] > p.of_step[b];
        let kept = judged.iter().filter(|x| !inverted(x)).count();
        sub.insert(OrderingSequence, ratio(kept, judged.len(), 1.0));
        // Under `order: strict` the workflow makes every step depend on the one before: a
        // call out of that order breaks a dependency as a reference to nothing does.
        let mut out_of_order: SmallVec<[bool; 8]> = smallvec![false; calls];
        for &(a, b) in judged.iter().filter(|x| inverted(x)) {
            let j = p.of_step[b].unwrap_or_default();
            let mut f = self.at_call(
                j,
                Code::Order,
                format!(
                    "`{}` runs before `{}`, which the workflow puts first{}",
                    self.call(j).tool,
                    self.step(a).call.tool,
                    if strict { " (`order: strict`)" } else { "" }
                ),
            );
            if strict {
                f.severity = Severity::Error;
                out_of_order[j] = true;
            }
            out.push(f);
        }
        sub.insert(OrderingDependency, self.dependency(&out_of_order));
        // Work that did nothing for the user: unrequested, redundant or failed calls (a call
        // asked about a repeat only in a turn that has one).
        let repeats = self
            .facts
            .turn_findings()
            .any(|f| f.code == Code::RedundantCall);
        let wasted = (0..calls)
            .filter(|&j| {
                p.of_call[j].is_none_or(|i| !p.done[i])
                    || (repeats && self.facts.has(j, &[Code::RedundantCall]))
            })
            .count();
        sub.insert(OrderingEfficiency, 1.0 - ratio(wasted, calls, 0.0));
    }

    /// Dependency handling: of the calls that reference something (or, under `order:
    /// strict`, run out of order), those whose references were all grounded in time.
    fn dependency(&self, out_of_order: &[bool]) -> f64 {
        let (mut dependent, mut respected) = (0, 0);
        for (j, &late) in out_of_order.iter().enumerate() {
            let refs = self
                .facts
                .flow
                .calls
                .get(self.facts.first + j)
                .is_some_and(|c| !c.references.is_empty());
            if !(refs || late) {
                continue;
            }
            dependent += 1;
            let broken = [
                Code::UnknownReference,
                Code::UseBeforeProduce,
                Code::FailedDependency,
            ];
            respected += usize::from(!late && !self.facts.has(j, &broken));
        }
        ratio(respected, dependent, 1.0)
    }

    /// Arguments: the weakest of the pairs, of a required step never called, and of a call
    /// that does what no step asks for.
    fn arguments(&self, p: &Pairing, out: &mut Vec<Finding>) -> SubScores {
        let mut weakest: Option<SubScores> = None;
        let keep_weakest = |weakest: &mut Option<SubScores>, a: SubScores| {
            let mean = |s: &SubScores| s.values().sum::<f64>() / s.len() as f64;
            if weakest.as_ref().is_none_or(|w| mean(&a) < mean(w)) {
                *weakest = Some(a);
            }
        };
        for (i, j) in p.pairs() {
            let w = self.steps[i];
            // What `pair_arguments` works out of such a call, from the completeness worked
            // out once. Whole, it scores 1 everywhere: no lower mean than any kept, so only
            // the first is kept (a long run's right calls are not scored one by one).
            if let Some(s) = self.facts.own_unflagged(w, j) {
                if s.completeness < 1.0 || weakest.is_none() {
                    keep_weakest(
                        &mut weakest,
                        cascade(s.completeness, 1.0, 1.0, false, [1.0; 3]),
                    );
                }
                continue;
            }
            let compared = self.facts.compared(w, j);
            keep_weakest(
                &mut weakest,
                self.pair_arguments(Some(self.step(i)), j, &compared, out),
            );
        }
        // A required step nobody called had none of its arguments provided: completeness 0,
        // and the cascades take the rest.
        if p.of_step
            .iter()
            .enumerate()
            .any(|(i, j)| j.is_none() && !self.optional[i])
        {
            keep_weakest(
                &mut weakest,
                SubDimension::ARGUMENTS
                    .into_iter()
                    .map(|d| (d, if d == ArgumentName { 1.0 } else { 0.0 }))
                    .collect(),
            );
        }
        // A call that does what no step asks for (makes media, changes state) has no correct
        // values: nobody asked for any.
        for j in p.extra() {
            if self.facts.took_effect(j)
                && (self.makes(self.call(j)).is_some() || !self.facts.effect(j).read_only)
            {
                keep_weakest(&mut weakest, self.unrequested_arguments(j));
            }
        }
        weakest.unwrap_or_else(|| {
            let none = self.required() == 0 && self.facts.calls.is_empty();
            let v = if none { 1.0 } else { 0.0 };
            SubDimension::ARGUMENTS
                .into_iter()
                .map(|d| (d, v))
                .collect()
        })
    }

    /// The argument sub-dimensions of an unrequested call: as for a pair, but with no correct
    /// value (the cascade then takes type, format and relevancy).
    fn unrequested_arguments(&self, j: usize) -> SubScores {
        let mut s = self.pair_arguments(None, j, &[], &mut Vec::new());
        for d in [
            ArgumentValue,
            ArgumentType,
            ArgumentFormat,
            ArgumentRelevancy,
        ] {
            s.insert(d, 0.0);
        }
        s
    }

    /// The six argument sub-dimensions of call `j` against step `o` (`None`: no step asks for
    /// it), given their comparison, with the cascades applied; a compared value the linter
    /// did not already flag is worded as `oracle.value_mismatch`.
    fn pair_arguments(
        &self,
        o: Option<&OracleCall>,
        j: usize,
        compared: &[(&str, Option<String>)],
        out: &mut Vec<Finding>,
    ) -> SubScores {
        let a = self.call(j);
        let mine: SmallVec<[&Finding; 8]> = self.facts.findings_of(j).collect();
        let n = a.args().len();
        // The arguments with a finding of each kind (once each), in one pass: each finding's
        // argument with the kinds its code counts against, merged per argument.
        const NAME: u8 = 1;
        const TYPE: u8 = 2;
        const FORMAT: u8 = 4;
        const RELEVANCY: u8 = 8;
        let mut flagged: SmallVec<[(&str, u8); 8]> = mine
            .iter()
            .filter_map(|f| {
                let kinds = match f.code {
                    // Every undeclared argument is a wrong name: a misspelling or an invention.
                    Code::UnknownParam => NAME | RELEVANCY,
                    Code::UnsupportedParam => RELEVANCY,
                    Code::Type | Code::NotInteger | Code::ArgumentsNotObject => TYPE,
                    Code::Enum
                    | Code::Format
                    | Code::Range
                    | Code::Schema
                    | Code::InvalidFormat => FORMAT,
                    _ => return None,
                };
                Some((f.pointer.split('/').nth(1).unwrap_or(""), kinds))
            })
            .collect();
        flagged.sort_unstable();
        flagged.dedup_by(|later, kept| {
            let same = later.0 == kept.0;
            if same {
                kept.1 |= later.1;
            }
            same
        });
        // The share of arguments kept clean of a kind.
        let frac_ok = |kind: u8| {
            let bad = flagged.iter().filter(|(_, k)| k & kind != 0).count();
            if n == 0 {
                1.0
            } else {
                1.0 - (bad.min(n) as f64 / n as f64)
            }
        };
        let completeness = completeness(self.facts.linter, a, &mine);
        let (name, ty, format, relevancy) = (
            frac_ok(NAME),
            frac_ok(TYPE),
            frac_ok(FORMAT),
            frac_ok(RELEVANCY),
        );
        // A value the server rejects (or that references nothing) is not a correct value.
        let critical = mine.iter().any(|f| {
            f.severity == Severity::Error
                && !f.pointer.is_empty()
                && !matches!(f.code, Code::UnknownParam | Code::MissingRequired)
        });
        let wrong = compared.iter().any(|(_, bad)| bad.is_some());
        let value = if critical {
            0.0
        } else if compared.is_empty() {
            1.0
        } else {
            compared.iter().filter(|(_, bad)| bad.is_none()).count() as f64 / compared.len() as f64
        };
        if let Some(o) = o.filter(|o| o.accepts_tool(&a.tool)) {
            self.mismatches(o, j, compared, &mine, out);
        }
        cascade(completeness, name, value, wrong, [ty, format, relevancy])
    }

    /// `oracle.value_mismatch` for each compared value that breaks step `o`'s policy, unless
    /// the linter or the matrix already rejects it (reported once, by them).
    fn mismatches(
        &self,
        o: &OracleCall,
        j: usize,
        compared: &[(&str, Option<String>)],
        mine: &[&Finding],
        out: &mut Vec<Finding>,
    ) {
        let a = self.call(j);
        for (p, bad) in compared {
            let Some(at) = bad else { continue };
            let flagged = mine.iter().any(|f| {
                !f.code.as_str().starts_with("flow.")
                    && f.pointer.split('/').nth(1) == Some(escape(p).as_str())
            });
            if flagged {
                continue;
            }
            // "`shown`: the workflow expects …, got …", written into one string.
            let shown = at.trim_start_matches('/');
            let mut message = String::with_capacity(shown.len() + 64);
            message.push('`');
            message.push_str(shown);
            message.push_str("`: ");
            let example = pointer(o.call.arguments(), at);
            expectation(policy_at(o, at), example, &mut message);
            message.push_str(", got ");
            match pointer(a.arguments(), at) {
                Some(got) => push_text(&mut message, got),
                None => message.push_str("nothing"),
            }
            let mut f = Finding::new(Code::ValueMismatch, at.clone(), message);
            f.call = Some(self.facts.first + j);
            out.push(f);
        }
    }

    /// Findings about pairs: a wrong tool; a required step its call left undone (refused, or
    /// a dry run).
    fn pair_findings(&self, p: &Pairing, out: &mut Vec<Finding>) {
        for (i, j) in p.pairs() {
            let (o, c) = (self.step(i), self.call(j));
            if !self.facts.of_tools(self.steps[i], j) {
                let why = o
                    .quick_explanation
                    .as_deref()
                    .map_or(String::new(), |q| format!(" ({q})"));
                out.push(self.at_call(
                    j,
                    Code::WrongTool,
                    format!(
                        "called `{}` where the workflow calls `{}`{why}",
                        c.tool, o.call.tool
                    ),
                ));
                continue;
            }
            if self.optional[i] || p.done[i] {
                continue;
            }
            // A call the server refused, or a dry run, leaves the step undone and says so.
            let refused = self
                .facts
                .flow
                .calls
                .get(self.facts.first + j)
                .is_some_and(|c| c.refused);
            let dry = self.changes_nothing(i, j);
            if refused || dry {
                let why = if dry {
                    "changes nothing with these arguments (a dry run)"
                } else {
                    "was refused by the server (`isError`, or an error the server answers as text)"
                };
                out.push(self.at_call(
                    j,
                    Code::StepUndone,
                    format!(
                        "the workflow's step {} (`{}`) is not done: this call {why}, and no later call of the turn does it",
                        i + 1,
                        o.call.tool
                    ),
                ));
            }
        }
    }

    /// A required step no call was paired with: missing, or left undone by a dry run of its
    /// tool. A repeated step is reported once.
    fn missing_findings(&self, p: &Pairing, out: &mut Vec<Finding>) {
        let mut reported: Vec<usize> = Vec::new();
        for (i, j) in p.of_step.iter().enumerate() {
            if j.is_some() || self.optional[i] || reported.contains(&self.steps[i]) {
                continue;
            }
            reported.push(self.steps[i]);
            let o = self.step(i);
            // A dry run of the step's tool, in its place, is the step left undone: the call
            // differs from the step only where the tool's effects say it changes nothing
            // (`dryRun: true`). A read through a tool that also writes (a SELECT for an
            // UPDATE) is another call, and the step is missing.
            let dry = (0..self.facts.calls.len()).find(|&j| {
                o.accepts_tool(&self.call(j).tool)
                    && self.changes_nothing(i, j)
                    && self.differs_only_in_switches(i, j)
            });
            if let Some(j) = dry {
                out.push(self.at_call(
                    j,
                    Code::StepUndone,
                    format!(
                        "the workflow's step {} (`{}`) is not done: call {} changes nothing with its arguments (a dry run), and no call of the turn does the step",
                        i + 1,
                        o.call.tool,
                        self.facts.first + j + 1
                    ),
                ));
                continue;
            }
            let mut f = Finding::new(
                Code::MissingCall,
                "",
                format!(
                    "the workflow's step {} (`{}`) was never called",
                    i + 1,
                    o.call.tool
                ),
            );
            f.location = Some(o.call.location.clone());
            out.push(f);
        }
    }

    /// Whether every parameter in which call `j` differs from step `i` is one the tool's
    /// `effects:` switch on (`when: {dryRun: true}`).
    fn differs_only_in_switches(&self, i: usize, j: usize) -> bool {
        let switches: Vec<&str> = self
            .facts
            .linter
            .facts(&self.call(j).tool)
            .into_iter()
            .flat_map(|(_, f)| f.effects.iter().flat_map(|e| e.when.keys()))
            .map(String::as_str)
            .collect();
        self.facts
            .compared(self.steps[i], j)
            .iter()
            .filter(|(_, bad)| bad.is_some())
            .all(|(p, _)| switches.contains(p))
    }

    /// Calls no step asks for: unrequested (makes media or files), an unrequested effect, or
    /// an extra call.
    fn extra_findings(&self, p: &Pairing, out: &mut Vec<Finding>) {
        for j in p.extra() {
            let (c, e) = (self.call(j), self.facts.effect(j));
            let failed = !self.facts.took_effect(j);
            let f = if let Some(what) = self.makes(c) {
                self.at_call(
                    j,
                    Code::UnrequestedCall,
                    format!("`{}` {what} no step of the workflow asks for", c.tool),
                )
            } else if !e.read_only && !failed {
                let does = if e.destructive {
                    "may destroy or overwrite data"
                } else {
                    "changes state"
                };
                self.at_call(
                    j,
                    Code::UnrequestedEffect,
                    format!(
                        "`{}` {does} and no step of the workflow asks for it",
                        c.tool
                    ),
                )
            } else {
                let failed = if failed { " (and it failed)" } else { "" };
                self.at_call(
                    j,
                    Code::ExtraCall,
                    format!("`{}` is not a step of the workflow{failed}", c.tool),
                )
            };
            out.push(f);
        }
    }

    /// Calls the turn's `forbid:` rules out.
    fn forbidden_findings(&self, out: &mut Vec<Finding>) {
        // (The usual turn forbids nothing: no pass over its calls.)
        if self.forbid.is_empty() {
            return;
        }
        for (j, c) in self.facts.calls.iter().enumerate() {
            let e = self.facts.effect(j);
            let hit = self.forbid.iter().find(|f| match f {
                Forbid::Tool(t) => *t == c.tool,
                Forbid::Destructive => e.destructive,
                Forbid::Mutating => !e.read_only,
                Forbid::OpenWorld => e.open_world,
            });
            if let Some(rule) = hit {
                out.push(self.at_call(
                    j,
                    Code::ForbiddenCall,
                    format!(
                        "`{}` is forbidden here (`forbid:` rules out {rule})",
                        c.tool
                    ),
                ));
            }
        }
    }

    /// The suite's severities on the oracle's findings; then a critical error collapses the
    /// selection or ordering sub-dimension it belongs to, as one collapses the argument mean
    /// (the paper's judge scores such an error near zero; a share of calls would let one
    /// destructive or misordered call cost a few points). Warnings cost their share.
    fn collapse(&self, sub: &mut SubScores, out: &mut [Finding]) {
        for f in out.iter_mut() {
            if let Some(s) = self.severity.get(&f.code) {
                f.severity = *s;
            }
        }
        let error = |f: &&Finding| f.severity == Severity::Error;
        let critical = self
            .facts
            .turn_findings()
            .filter(error)
            .map(|f| f.sub_dimension)
            .chain(out.iter().filter(error).map(|f| f.sub_dimension));
        for d in critical {
            if matches!(
                d,
                SelectionCorrectness
                    | SelectionSpecificity
                    | SelectionCompleteness
                    | OrderingSequence
                    | OrderingDependency
                    | OrderingEfficiency
            ) && let Some(v) = sub.get_mut(d)
            {
                *v = 0.0;
            }
        }
    }

    /// What a call makes, as a finding words it, when the matrix says it makes media or
    /// files: "makes media (video, audio)", "writes a file".
    fn makes(&self, call: &Call) -> Option<String> {
        let (_, facts) = self.facts.linter.facts(&call.tool)?;
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
}
