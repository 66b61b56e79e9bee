//! One turn's calls against its workflow, worked out once and shared by the oracle score and
//! the trajectory metrics (issue 31: each paired calls with steps its own way, and each
//! compared every step with every call). The main type is [`TurnFacts`], made by
//! [`TurnFacts::new`]: per call its effect and its findings; per (workflow step, call) pair
//! the oracle's comparison and similarity, each computed the first time either side asks.
//!
//! [`TurnFacts::assign`] pairs steps with calls. A run that does its steps in order — the
//! usual case, and the one that grows long — is paired in one walk: each step takes the next
//! call (looking a few calls ahead past an extra one, or back at a call it passed over: two
//! calls swapped), and the walk's pairing is kept when it gives every step the best
//! similarity its row has (then no pairing scores more, so it is optimal). Only a step whose
//! walked call is not a perfect match has its whole row computed, unless the calls' hashes
//! bound it ([`TurnFacts::rival`]). Anything else goes to the Hungarian algorithm over the
//! full matrix, as before. A correct run of n calls costs n
//! comparisons, not n².
//!
//! A long turn's hash counts (how many calls pass a step's values, how many have a step's
//! arguments) are taken by difference ([`Tally`]): the scenario counts its steps' own calls
//! once ([`OwnTallies`]), and a run adds only what differs from them. A call is hashed at
//! the first question about it, so a run wrong in one call of many hashes about that one.

use std::collections::HashMap;
use std::rc::Rc;

use serde_json::Value;
use smallvec::{SmallVec, smallvec};

use super::assign;
use super::oracle::{StepCall, from_output, policy_at, same_value};
use super::own::{OwnStep, OwnTurn};
use crate::finding::Finding;
use crate::flow::Flow;
use crate::harness::{Call, MatchPolicy, OracleCall};
use crate::hash::{
    Exact, Hashed, PairCache, StepKey, member_hash, name_hash, object_hash, value_hash,
};
use crate::lint::Linter;
use crate::source::json::child;
use crate::spec::Effect;

/// How far ahead of the next call the in-order walk looks for a step's perfect match (the
/// calls skipped are extra calls). Each look is one cached comparison.
const LOOKAHEAD: usize = 4;

/// A comparison of a step with a call: each parameter the step compares and, when the call's
/// value breaks the step's policy, the pointer where ([`compare`]).
pub(crate) type Compared<'a> = Rc<[(&'a str, Option<String>)]>;

/// What the scorers need of one turn's calls, computed once per transcript.
pub(crate) struct TurnFacts<'a> {
    /// Transcript-wide index of the turn's first call.
    pub(crate) first: usize,
    pub(crate) calls: &'a [&'a Call],
    pub(crate) workflow: &'a [OracleCall],
    pub(crate) linter: &'a Linter,
    pub(crate) flow: &'a Flow<'a>,
    /// The lint and flow findings of the whole transcript.
    pub(crate) findings: &'a [Finding],
    /// The indices into `findings` of each call's own, call by call: call `j`'s are
    /// `mine[starts[j]..starts[j + 1]]` (one list, not one per call).
    mine: SmallVec<[u32; 8]>,
    starts: SmallVec<[u32; 8]>,
    /// Per call, what it does to the world ([`Linter::effect`]).
    effects: SmallVec<[Effect; 16]>,
    /// Per workflow step, what its call does.
    step_effects: SmallVec<[Effect; 16]>,
    /// Per workflow step, the parameters it compares (compiled with the scenario).
    params: &'a [Vec<Box<str>>],
    /// Which calls are which step's own call, and what the engines find for those.
    pub(crate) own: OwnTurn<'a>,
    /// How many calls of each tool the turn made: at the first question (a run whose calls
    /// are its steps' tools at their places asks none).
    per_tool: std::cell::OnceCell<crate::hash::NameCounts<'a>>,
    compared: PairCache<Compared<'a>>,
    similarity: PairCache<f64>,
    /// Whether a step's tool made the call with every compared value matching, for pairs
    /// whose comparison was not kept: the trajectory metrics ask each pair up to three times
    /// (exact, in order, any order).
    policy: PairCache<bool>,
    /// Per workflow step, its values hashed (compiled with the scenario).
    keys: &'a [StepKey],
    /// What a turn of many pairs works out by hash, made at the first question (a turn of a
    /// few asks none; kept out of place so its facts stay small).
    hashed: std::cell::OnceCell<Box<LongTurn<'a>>>,
}

/// A long turn's hashes ([`TurnFacts::hashed`]), each made at the first question about it.
#[derive(Default)]
struct LongTurn<'a> {
    /// Per call, its values hashed: most pairs of a row or a column asked are decided without
    /// a comparison ([`TurnFacts::literally_apart`], the policies' exactly compared values).
    /// A step's own call at its place, most of a long run, is seldom asked about.
    call_keys: Vec<std::cell::OnceCell<CallKey<'a>>>,
    /// The last tool whose model selector was looked up, and the selector: a run of calls of
    /// one tool looks it up once.
    selector: std::cell::Cell<Option<(&'a str, Option<&'a str>)>>,
    /// Per list of parameters some step compares (its names hashed together), how many of the
    /// turn's calls pass each combination of values (hashed together), `None` where a call's
    /// tool selects its model by one of them ([`TurnFacts::rival`]).
    twins: std::cell::RefCell<SmallVec<[(u64, Twins<'a>); 2]>>,
    /// How many of the turn's calls have each arguments hash ([`TurnFacts::no_literal_match`]).
    arguments: std::cell::OnceCell<Tally<'a>>,
    /// Per workflow step, how many of the turn's calls are its own call.
    made: std::cell::OnceCell<Vec<u32>>,
}

/// How many of a turn's calls give each hash (of their arguments, or of their values of a
/// list of parameters): where the scenario's counts over its steps' own calls are known
/// ([`OwnTallies`]), those and the difference the turn makes — its steps made other than
/// once, its calls that are no step's own — else every call counted.
pub(crate) struct Tally<'a> {
    base: Option<&'a TwinCounts>,
    more: HashMap<u64, i64, Hashed>,
}

impl Tally<'_> {
    /// How many calls give hash `h`.
    fn get(&self, h: u64) -> u32 {
        let base = self
            .base
            .and_then(|b| b.get(&h))
            .map_or(0, |&n| i64::from(n));
        let more = self.more.get(&h).copied().unwrap_or(0);
        // The difference takes away only steps the base counts.
        debug_assert!(base + more >= 0, "hash {h}: {base} {more:+}");
        u32::try_from(base + more).unwrap_or(0)
    }
}

/// A turn's steps' own calls hashed as [`TurnFacts`] hashes a long turn's calls, counted
/// once per scenario: a long turn's counts ([`Tally`]) are these and the difference the turn
/// makes, not a pass over every call (a run wrong in one call of many).
#[derive(Debug)]
pub(crate) struct OwnTallies {
    /// How many steps' own calls have each arguments hash.
    arguments: TwinCounts,
    /// Per step, the list of parameters it compares by hash (an index into `lists`).
    list_of: Vec<Option<usize>>,
    /// Every step compares a list by hash (none a value its policy judges, none nothing).
    every_step_listed: bool,
    /// The lists of parameters the steps compare by hash.
    lists: Vec<StepList>,
}

/// A list of parameters some steps compare by hash ([`hashed_list`]).
#[derive(Debug)]
struct StepList {
    /// Its names' hashes folded together.
    list: u64,
    /// The first step that compares it (whose parameters name it).
    first: usize,
    /// Its names' hashes.
    names: SmallVec<[u64; 4]>,
    /// The values of it the steps that compare it want, hashed together.
    wants: std::collections::HashSet<u64, Hashed>,
    /// Its counts over the steps' own calls: made at the first transcript that asks (a step
    /// compares one list, but every list counts every step).
    tally: std::sync::OnceLock<OwnList>,
}

/// One list's [`OwnTallies`].
#[derive(Debug)]
struct OwnList {
    /// How many steps' own calls pass each combination of the list's values (hashed
    /// together), those whose projection is none or unhashable left out.
    counts: TwinCounts,
    /// Per step, its own call's projection ([`projection`]).
    per_step: Vec<Option<Option<u64>>>,
    /// The steps whose own call's tool selects its model by one of the list's parameters.
    unhashable: SmallVec<[usize; 2]>,
}

impl OwnTallies {
    /// Whether some step's own call has arguments hashing to `h` (a call whose arguments do
    /// not equals no step's literally).
    pub(crate) fn has_arguments(&self, h: u64) -> bool {
        self.arguments.contains_key(&h)
    }

    /// The tallies of a turn's workflow, given the parameters each step compares and their
    /// keys (a step's own call hashes as its step: [`StepKey::arguments`]).
    pub(crate) fn of(params: &[Vec<Box<str>>], keys: &[StepKey]) -> Self {
        let mut arguments = TwinCounts::with_capacity_and_hasher(keys.len(), Default::default());
        for key in keys {
            *arguments.entry(key.arguments).or_default() += 1;
        }
        let mut lists: Vec<StepList> = Vec::new();
        let list_of: Vec<Option<usize>> = params
            .iter()
            .zip(keys)
            .enumerate()
            .map(|(w, (ps, key))| {
                let (list, want, names) = hashed_list(key, ps)?;
                let k = match lists.iter().position(|l| l.list == list) {
                    Some(k) => k,
                    None => {
                        lists.push(StepList {
                            list,
                            first: w,
                            names,
                            wants: Default::default(),
                            tally: std::sync::OnceLock::new(),
                        });
                        lists.len() - 1
                    }
                };
                lists[k].wants.insert(want);
                Some(k)
            })
            .collect();
        Self {
            arguments,
            every_step_listed: list_of.iter().all(Option::is_some),
            list_of,
            lists,
        }
    }
}

/// Step `key`'s list of parameters compared by hash: the names' hashes folded together, the
/// step's values of them hashed together, and the names' hashes; `None` where a value is
/// its policy's to judge, or the step compares nothing.
fn hashed_list(key: &StepKey, params: &[Box<str>]) -> Option<(u64, u64, SmallVec<[u64; 4]>)> {
    if params.is_empty() {
        return None;
    }
    let mut names = SmallVec::with_capacity(params.len());
    let mut want = 0;
    for e in &key.exact {
        let Exact::Hash { name, value, .. } = e else {
            return None;
        };
        names.push(*name);
        want = member_hash(member_hash(want, *name), *value);
    }
    let list = names.iter().fold(0, |h, &n| member_hash(h, n));
    Some((list, want, names))
}

/// A call's values hashed ([`crate::hash::value_hash`]).
struct CallKey<'a> {
    /// Its arguments' hash, as [`StepKey::arguments`].
    arguments: u64,
    /// The parameter that selects its tool's model ([`Linter::selector`]): compared through
    /// the model, not by value.
    selector: Option<&'a str>,
    /// Each argument's name's hash, its name, its value's hash and its value.
    values: SmallVec<[(u64, &'a str, u64, &'a Value); 4]>,
}

/// A call's hashes as [`CallKey`] keeps them, without the values: worked out once per
/// scenario for each step's own call ([`OwnStep::hashes`]), which a call equal to it shares.
#[derive(Debug)]
pub(crate) struct CallHashes {
    /// Its arguments' hash.
    arguments: u64,
    /// Each argument's name's hash and its value's hash, in the arguments' order.
    values: SmallVec<[(u64, u64); 4]>,
}

impl CallHashes {
    /// The arguments' hash ([`crate::hash::value_hash`]).
    pub(crate) fn arguments(&self) -> u64 {
        self.arguments
    }

    /// Call `a`'s.
    pub(crate) fn of(a: &Call) -> Self {
        let values: SmallVec<[(u64, u64); 4]> = a
            .args()
            .iter()
            .map(|(k, v)| (name_hash(k), value_hash(v)))
            .collect();
        // The arguments are always an object: its hash from its members'.
        let arguments = object_hash(values.iter().map(|&(n, h)| member_hash(n, h)));
        Self { arguments, values }
    }
}

impl<'a> CallKey<'a> {
    /// Call `a`'s, its tool's model selected by `selector`, its hashes `hashes` (those of
    /// its step's own call where it is one, else worked out here).
    fn of(a: &'a Call, selector: Option<&'a str>, hashes: Option<&CallHashes>) -> Self {
        let made;
        let hashes = match hashes {
            Some(h) => h,
            None => {
                made = CallHashes::of(a);
                &made
            }
        };
        // Equal arguments iterate alike (serde_json's map keeps its keys sorted).
        let values = a
            .args()
            .iter()
            .zip(&hashes.values)
            .map(|((k, v), &(n, h))| {
                debug_assert_eq!(n, name_hash(k), "a step's own call's hashes, key for key");
                (n, k.as_str(), h, v)
            })
            .collect();
        Self {
            arguments: hashes.arguments,
            selector,
            values,
        }
    }

    /// Its value of parameter `p` (whose name hashes to `name`), and that value's hash.
    fn value(&self, name: u64, p: &str) -> Option<(u64, &'a Value)> {
        self.values
            .iter()
            .find(|&&(n, k, _, _)| n == name && k == p)
            .map(|&(_, _, h, v)| (h, v))
    }
}

/// A turn's workflow as the scenario compiles it: its steps, the parameters each compares,
/// and which of the turn's calls are which step's own call.
pub(crate) struct Steps<'a> {
    pub(crate) workflow: &'a [OracleCall],
    pub(crate) params: &'a [Vec<Box<str>>],
    pub(crate) keys: &'a [StepKey],
    pub(crate) own: OwnTurn<'a>,
}

impl<'a> TurnFacts<'a> {
    /// The facts of a turn whose calls start at transcript call `first`.
    pub(crate) fn new(
        first: usize,
        calls: &'a [&'a Call],
        steps: Steps<'a>,
        linter: &'a Linter,
        flow: &'a Flow<'a>,
        findings: &'a [Finding],
    ) -> Self {
        let Steps {
            workflow,
            params,
            keys,
            own,
        } = steps;
        // Counted per call, then placed (a stable counting sort of the findings by call).
        let call_of = |f: &Finding| {
            f.call
                .and_then(|c| c.checked_sub(first))
                .filter(|&j| j < calls.len())
        };
        let mut starts: SmallVec<[u32; 8]> = smallvec![0; calls.len() + 1];
        for j in findings.iter().filter_map(call_of) {
            starts[j + 1] += 1;
        }
        for j in 0..calls.len() {
            starts[j + 1] += starts[j];
        }
        let mut mine: SmallVec<[u32; 8]> = smallvec![0; starts[calls.len()] as usize];
        let mut next = starts.clone();
        for (k, f) in findings.iter().enumerate() {
            if let Some(j) = call_of(f) {
                mine[next[j] as usize] = k as u32;
                next[j] += 1;
            }
        }
        Self {
            first,
            calls,
            workflow,
            linter,
            flow,
            findings,
            mine,
            starts,
            effects: calls
                .iter()
                .enumerate()
                // A step's own call does what the step's does, worked out once per scenario.
                .map(|(j, c)| match own.of(j) {
                    Some((_, s)) => s.effect,
                    None => linter.effect(&c.tool, c.args()),
                })
                .collect(),
            step_effects: if own.steps.len() == workflow.len() {
                own.steps.iter().map(|s| s.effect).collect()
            } else {
                workflow
                    .iter()
                    .map(|o| linter.effect(&o.call.tool, o.call.args()))
                    .collect()
            },
            per_tool: std::cell::OnceCell::new(),
            params,
            own,
            compared: PairCache::new(workflow.len(), calls.len()),
            similarity: PairCache::new(workflow.len(), calls.len()),
            policy: PairCache::new(workflow.len(), calls.len()),
            keys,
            hashed: std::cell::OnceCell::new(),
        }
    }

    /// Whether the turn keeps its pairs in one table (a turn of a few calls): then no call is
    /// hashed (its pairs asked are about as many as its calls: hashing them would cost more).
    fn few(&self) -> bool {
        self.policy.is_dense()
    }

    /// The turn's hashes, in a turn of many pairs; `None` in a turn of a few.
    fn hashed(&self) -> Option<&LongTurn<'a>> {
        if self.few() {
            return None;
        }
        Some(self.hashed.get_or_init(|| {
            Box::new(LongTurn {
                call_keys: std::iter::repeat_with(std::cell::OnceCell::new)
                    .take(self.calls.len())
                    .collect(),
                ..LongTurn::default()
            })
        }))
    }

    /// Call `j`'s values hashed, in a turn of many pairs (made at the first question about
    /// it); `None` in a turn of a few ([`TurnFacts::few`]).
    fn call_key(&self, j: usize) -> Option<&CallKey<'a>> {
        let hashed = self.hashed()?;
        Some(hashed.call_keys[j].get_or_init(|| {
            let c = self.calls[j];
            let selector = match hashed.selector.get() {
                Some((tool, s)) if tool == c.tool => s,
                _ => self.linter.selector(&c.tool),
            };
            hashed.selector.set(Some((&c.tool, selector)));
            // A step's own call has its step's hashes.
            CallKey::of(c, selector, self.own.of(j).map(|(_, s)| &s.hashes))
        }))
    }

    /// Call `j`'s arguments' hash, in a turn of many pairs (a step's own call's known
    /// without its key).
    fn arguments_hash(&self, j: usize) -> Option<u64> {
        if self.few() {
            return None;
        }
        match self.own.of(j) {
            Some((w, s)) => {
                debug_assert_eq!(s.hashes.arguments, self.keys[w].arguments, "own call {j}");
                Some(s.hashes.arguments)
            }
            None => self.call_key(j).map(|k| k.arguments),
        }
    }

    /// The turn's steps' own calls' hashes counted, where they are known: once per scenario,
    /// at the first long turn that asks.
    fn tallies(&self) -> Option<&'a OwnTallies> {
        let tallies = self.own.tallies?;
        Some(tallies.get_or_init(|| OwnTallies::of(self.params, self.keys)))
    }

    /// Per workflow step, how many of the turn's calls are its own call, in a turn of many
    /// pairs (none listed in a turn of a few).
    pub(crate) fn made(&self) -> &[u32] {
        let Some(hashed) = self.hashed() else {
            return &[];
        };
        hashed.made.get_or_init(|| {
            let mut made = vec![0; self.workflow.len()];
            for j in 0..self.calls.len() {
                if let Some((w, _)) = self.own.of(j) {
                    made[w] += 1;
                }
            }
            made
        })
    }

    /// Whether call `j`'s value of the `i`th parameter step `w` compares matches, where the
    /// step compares it exactly ([`StepKey::exact`]): a differing hash says no, an equal one
    /// the values compared; `None` where only the policy's comparison can tell.
    fn decided(&self, call: &CallKey, w: usize, i: usize) -> Option<bool> {
        let p = &*self.params[w][i];
        if call.selector == Some(p) {
            return None;
        }
        match &self.keys[w].exact[i] {
            Exact::Compared => None,
            Exact::Absent => Some(false),
            Exact::Hash { name, value, want } => Some(
                call.value(*name, p)
                    .is_some_and(|(got, v)| got == *value && same_value(want, v)),
            ),
        }
    }

    /// Whether call `j` does step `w` under its policies as far as the values the step
    /// compares exactly tell: `Some(false)` when one breaks, `Some(true)` when every compared
    /// value is one and all match, `None` when a policy must tell (or in a turn of a few
    /// pairs, where the comparison is made anyway).
    fn matches_by_keys(&self, w: usize, j: usize) -> Option<bool> {
        let key = self.call_key(j)?;
        let mut all = true;
        for i in 0..self.params[w].len() {
            match self.decided(key, w, i) {
                Some(false) => return Some(false),
                Some(true) => {}
                None => all = false,
            }
        }
        all.then_some(true)
    }

    /// An upper bound of step `w`'s similarity with any call but `j`, where the hashes of the
    /// turn's calls tell that no other call passes every value the step compares (each
    /// compared exactly): every other call of its tools then
    /// misses one of its `c` values (0.5 + 0.5 (c − 1) / c at most), and a call of another tool
    /// stands in for it at 0.45 at most. `None` where they cannot tell: a value its policy
    /// compares, a model selector among them, a turn of a few calls (no hashes kept). Costs
    /// the turn's difference from its steps' own calls per list of parameters asked about
    /// ([`Tally`]), then a lookup.
    pub(crate) fn rival(&self, w: usize, j: Option<usize>) -> Option<f64> {
        let (want, names, counts) = self.twins(w)?;
        let params = &self.params[w];
        let mut others = counts.get(want);
        if let Some(j) = j
            && projection(self.call_key(j)?, params, &names) == Some(Some(want))
        {
            others -= 1;
        }
        let c = params.len() as f64;
        (others == 0).then(|| (0.5 + 0.5 * (c - 1.0) / c).max(0.45))
    }

    /// Whether no call of the turn does step `w` under its policies, as the calls' hashes
    /// tell: none passes every value the step compares, each compared exactly (`false` where
    /// they cannot tell, as for [`TurnFacts::rival`]).
    pub(crate) fn no_policy_match(&self, w: usize) -> bool {
        self.twins(w)
            .is_some_and(|(want, _, counts)| counts.get(want) == 0)
    }

    /// Whether no call of the turn is step `w` literally, as the hashes of the calls'
    /// arguments tell (`false` in a turn of a few calls, whose hashes are not kept).
    pub(crate) fn no_literal_match(&self, w: usize) -> bool {
        let Some(hashed) = self.hashed() else {
            return false;
        };
        let all = hashed.arguments.get_or_init(|| {
            let own = |u: usize| Some(self.keys[u].arguments);
            match self.tallies() {
                Some(t) => self.difference(&t.arguments, own, |j| self.arguments_hash(j)),
                None => self.every_call(|j| self.arguments_hash(j)),
            }
        });
        all.get(self.keys[w].arguments) == 0
    }

    /// Step `w`'s values of the parameters it compares hashed together, those parameters'
    /// names hashed, and how many of the turn's calls pass each combination of their values
    /// (made once per list of parameters); `None` where the hashes cannot tell: a value the
    /// step's policy compares, a model selector among them, a turn of a few calls (no hashes
    /// kept), a step that compares nothing.
    fn twins(&self, w: usize) -> Option<(u64, SmallVec<[u64; 4]>, Rc<Tally<'a>>)> {
        let hashed = self.hashed()?;
        let params = &self.params[w];
        let (list, want, names) = hashed_list(&self.keys[w], params)?;
        let known = hashed
            .twins
            .borrow()
            .iter()
            .find(|(l, _)| *l == list)
            .map(|(_, counts)| counts.clone());
        let counts = match known {
            Some(counts) => counts,
            None => {
                let counts = self.list_tally(w, params, &names).map(Rc::new);
                hashed.twins.borrow_mut().push((list, counts.clone()));
                counts
            }
        }?;
        Some((want, names, counts))
    }

    /// How many of the turn's calls pass each combination of values of step `w`'s list of
    /// parameters: by the difference from the steps' own calls where the scenario counted
    /// those, else every call projected; `None` when a call's tool selects its model by one
    /// of them (compared through the model, not the hash).
    fn list_tally(&self, w: usize, params: &[Box<str>], names: &[u64]) -> Option<Tally<'a>> {
        let project = |j: usize| projection(self.call_key(j)?, params, names);
        let Some((tallies, k)) = self
            .tallies()
            .and_then(|t| Some((t, t.list_of.get(w).copied().flatten()?)))
        else {
            let mut unhashable = false;
            let tally = self.every_call(|j| {
                let p = project(j);
                unhashable |= p.is_none();
                p.flatten()
            });
            return (!unhashable).then_some(tally);
        };
        let list = tallies.lists[k].tally.get_or_init(|| {
            let per_step: Vec<Option<Option<u64>>> = self
                .workflow
                .iter()
                .zip(self.own.steps)
                .map(|(o, s)| {
                    let key =
                        CallKey::of(&o.call, self.linter.selector(&o.call.tool), Some(&s.hashes));
                    projection(&key, params, names)
                })
                .collect();
            let mut counts = TwinCounts::default();
            for h in per_step.iter().flatten().flatten() {
                *counts.entry(*h).or_default() += 1;
            }
            OwnList {
                unhashable: (0..per_step.len())
                    .filter(|&u| per_step[u].is_none())
                    .collect(),
                counts,
                per_step,
            }
        });
        let made = self.made();
        if list.unhashable.iter().any(|&u| made[u] > 0) {
            return None;
        }
        let mut unhashable = false;
        let tally = self.difference(
            &list.counts,
            |u| list.per_step[u].flatten(),
            |j| {
                let p = project(j);
                unhashable |= p.is_none();
                p.flatten()
            },
        );
        (!unhashable).then_some(tally)
    }

    /// A [`Tally`] of every call's hash (`None`: none counted).
    fn every_call(&self, mut hash: impl FnMut(usize) -> Option<u64>) -> Tally<'a> {
        let mut more = HashMap::with_capacity_and_hasher(self.calls.len(), Default::default());
        for j in 0..self.calls.len() {
            if let Some(h) = hash(j) {
                *more.entry(h).or_default() += 1;
            }
        }
        Tally { base: None, more }
    }

    /// A [`Tally`] by the difference from `base`, the scenario's count over its steps' own
    /// calls (step `u`'s own call's hash `own(u)`): each step counted as many more times as
    /// it was made less once, each call that is no step's own counted by `hash(j)`.
    fn difference(
        &self,
        base: &'a TwinCounts,
        own: impl Fn(usize) -> Option<u64>,
        mut hash: impl FnMut(usize) -> Option<u64>,
    ) -> Tally<'a> {
        let mut more: HashMap<u64, i64, Hashed> = HashMap::default();
        for (u, &m) in self.made().iter().enumerate() {
            if m != 1
                && let Some(h) = own(u)
            {
                *more.entry(h).or_default() += i64::from(m) - 1;
            }
        }
        for j in (0..self.calls.len()).filter(|&j| self.own.of(j).is_none()) {
            if let Some(h) = hash(j) {
                *more.entry(h).or_default() += 1;
            }
        }
        Tally {
            base: Some(base),
            more,
        }
    }

    /// Whether no step of the turn does call `j` under its policies, as the hashes tell:
    /// every step compares its values exactly, and the call's values of each list of them
    /// are none any step wants (`false` where they cannot tell: a turn of a few calls, a
    /// step its policy or nothing decides, a model selector among them, steps' own calls not
    /// known).
    pub(crate) fn no_step_matches(&self, j: usize) -> bool {
        let Some(key) = self.call_key(j) else {
            return false;
        };
        let Some(t) = self.tallies().filter(|t| t.every_step_listed) else {
            return false;
        };
        t.lists
            .iter()
            .all(|l| match projection(key, &self.params[l.first], &l.names) {
                None => false,
                Some(None) => true,
                Some(Some(h)) => !l.wants.contains(&h),
            })
    }

    /// Whether no step of the turn is call `j` literally, as the hashes of its arguments and
    /// the steps' tell (`false` in a turn of a few calls, or where the steps' own calls are
    /// not known).
    pub(crate) fn literally_no_step(&self, j: usize) -> bool {
        let Some(h) = self.arguments_hash(j) else {
            return false;
        };
        self.tallies().is_some_and(|t| !t.has_arguments(h))
    }

    /// Whether call `j`'s arguments cannot equal step `w`'s, by their hashes (in a turn of
    /// many pairs; else `false`).
    pub(crate) fn literally_apart(&self, w: usize, j: usize) -> bool {
        self.arguments_hash(j)
            .is_some_and(|h| h != self.keys[w].arguments)
    }

    /// The lint and flow findings of the turn's calls, call by call (one pass over them, not
    /// one look a call).
    pub(crate) fn turn_findings(&self) -> impl Iterator<Item = &'a Finding> + '_ {
        self.mine.iter().map(|&k| &self.findings[k as usize])
    }

    /// Call `j`'s own lint and flow findings.
    pub(crate) fn findings_of(&self, j: usize) -> impl Iterator<Item = &'a Finding> + '_ {
        self.mine_of(j).iter().map(|&k| &self.findings[k as usize])
    }

    /// The indices into `findings` of call `j`'s own.
    fn mine_of(&self, j: usize) -> &[u32] {
        &self.mine[self.starts[j] as usize..self.starts[j + 1] as usize]
    }

    /// Whether call `j` has a finding with one of `codes`.
    pub(crate) fn has(&self, j: usize, codes: &[crate::finding::Code]) -> bool {
        self.findings_of(j).any(|f| codes.contains(&f.code))
    }

    /// What call `j` does to the world.
    pub(crate) fn effect(&self, j: usize) -> Effect {
        self.effects[j]
    }

    /// What workflow step `w`'s call does to the world.
    pub(crate) fn step_effect(&self, w: usize) -> Effect {
        self.step_effects[w]
    }

    /// Whether call `j` failed (the flow engine's word: an error finding, or `isError`).
    pub(crate) fn failed(&self, j: usize) -> bool {
        self.flow
            .calls
            .get(self.first + j)
            .is_some_and(|c| c.failed)
    }

    /// Whether call `j` did to the world what its tool does. A recorded answer says so: one
    /// that is no refusal means it did, whatever the flow engine found of its arguments (an
    /// unrequested delete of an entity no output named still deleted it when the server says
    /// it did). Without one, a call the flow engine found failed did nothing.
    pub(crate) fn took_effect(&self, j: usize) -> bool {
        let answered = self.calls[j].output.is_some();
        self.flow
            .calls
            .get(self.first + j)
            .is_some_and(|c| if answered { !c.refused } else { !c.failed })
    }

    /// Whether call `j`, paired with step `w`, changes nothing where the step changes state
    /// (a dry run in place of an edit).
    pub(crate) fn changes_nothing(&self, w: usize, j: usize) -> bool {
        self.effect(j).read_only && !self.step_effect(w).read_only
    }

    /// How many of the turn's calls are of `tool`.
    pub(crate) fn calls_of_tool(&self, tool: &str) -> u32 {
        self.per_tool
            .get_or_init(|| crate::hash::NameCounts::of(self.calls.iter().map(|c| c.tool.as_str())))
            .count(tool)
    }

    /// How many of the turn's calls a step's tools made.
    pub(crate) fn calls_of(&self, o: &OracleCall) -> u32 {
        if o.alternatives.is_empty() {
            self.calls_of_tool(&o.call.tool)
        } else {
            self.calls
                .iter()
                .filter(|c| o.accepts_tool(&c.tool))
                .count() as u32
        }
    }

    /// The oracle's comparison of workflow step `w` with call `j` (computed once).
    pub(crate) fn compared(&self, w: usize, j: usize) -> Compared<'a> {
        if self.own.clean(w, j) {
            return self.params[w].iter().map(|p| (&**p, None)).collect();
        }
        self.compared.get((w, j), || {
            // Collected straight into the `Rc` (one allocation: the map over a slice has its
            // length).
            self.with_pair(w, j, |pair| pair.mismatches(&self.params[w]).collect())
        })
    }

    /// What the engines found once of step `w`'s own call, when call `j` is it, every value
    /// the step compares matches and this run found nothing of it: then its argument
    /// sub-dimensions are the own call's ([`super::own`]).
    #[inline]
    pub(crate) fn own_unflagged(&self, w: usize, j: usize) -> Option<&'a OwnStep> {
        let (_, s) = self.own.of(j).filter(|&(own, s)| own == w && s.clean)?;
        self.mine_of(j).is_empty().then_some(s)
    }

    /// Whether call `j` is of one of step `w`'s tools: a step's own call is, without its
    /// tool's name compared.
    #[inline]
    pub(crate) fn of_tools(&self, w: usize, j: usize) -> bool {
        self.own.is(w, j) || self.workflow[w].accepts_tool(&self.calls[j].tool)
    }

    /// Whether every value step `w` compares matches in call `j` (the comparison's verdict,
    /// without its pointers where the call is the step's own).
    pub(crate) fn all_match(&self, w: usize, j: usize) -> bool {
        self.own.clean(w, j) || self.compared(w, j).iter().all(|(_, bad)| bad.is_none())
    }

    /// Whether call `j` does workflow step `w` under its policies: one of its tools, every
    /// compared value matching ([`crate::trajectory::policy_matches`]). From the comparison
    /// when it was made; else parameter by parameter up to the first mismatch, wording
    /// nothing (a long run's metrics ask about a row or a column of pairs no score reads).
    pub(crate) fn policy_matches(&self, w: usize, j: usize) -> bool {
        if self.own.clean(w, j) {
            return true;
        }
        if !self.workflow[w].accepts_tool(&self.calls[j].tool) {
            return false;
        }
        let here = || {
            if let Some(m) = self.matches_by_keys(w, j) {
                return m;
            }
            if let Some(all) = self
                .compared
                .peek((w, j), |c| c.iter().all(|(_, bad)| bad.is_none()))
            {
                return all;
            }
            self.policy.get((w, j), || {
                self.with_pair(w, j, |pair| pair.all_match(&self.params[w]))
            })
        };
        // Another step's own call: as in every run that makes it.
        match self.own.crossed(j) {
            Some((cross, v)) => cross.policy(w, v, here),
            None => here(),
        }
    }

    /// How many of the parameters step `w` compares call `j` matches, of how many: from the
    /// comparison when it was made, or in a turn of a few calls (whose pairs asked are mostly
    /// the pairs the score then compares: one walk of the values, not two), else without
    /// wording where a value breaks (and then kept as the pair's policy match, which is every
    /// one matching).
    fn matched_params(&self, w: usize, j: usize) -> (usize, usize) {
        if self.own.clean(w, j) {
            return (self.params[w].len(), self.params[w].len());
        }
        let counts = |c: &Compared| (c.iter().filter(|(_, bad)| bad.is_none()).count(), c.len());
        if self.compared.is_dense() {
            return counts(&self.compared(w, j));
        }
        if let Some(counts) = self.compared.peek((w, j), counts) {
            return counts;
        }
        let params = &self.params[w];
        // The values the step compares exactly decided by their hashes; the others compared.
        let key = self.call_key(j);
        let decided: SmallVec<[Option<bool>; 4]> = (0..params.len())
            .map(|i| key.and_then(|key| self.decided(key, w, i)))
            .collect();
        let mut matched = decided.iter().filter(|d| **d == Some(true)).count();
        if decided.contains(&None) {
            matched += self.with_pair(w, j, |pair| {
                params
                    .iter()
                    .zip(&decided)
                    .filter(|&(p, d)| d.is_none() && pair.matches(p))
                    .count()
            });
        }
        self.policy.insert((w, j), matched == params.len());
        (matched, params.len())
    }

    /// `f` of step `w` and call `j` compared ([`StepCall`]).
    fn with_pair<T>(&self, w: usize, j: usize, f: impl FnOnce(&StepCall) -> T) -> T {
        let index = self.first + j;
        let from = |g: &Value| from_output(g, |v| self.flow.produced_before(v, index));
        f(&StepCall::new(
            &self.workflow[w],
            self.calls[j],
            self.linter,
            &from,
        ))
    }

    /// Same tool: 0.5 plus half the share of matching arguments. Another tool: half the share
    /// of the step's argument values (every string and number, nested ones too) the call also
    /// passes, anywhere in its arguments — a call that takes the step's inputs stands in for
    /// it (a wrong tool), anything less is unrelated. Computed once per pair.
    #[inline]
    pub(crate) fn similarity(&self, w: usize, j: usize) -> f64 {
        // A step's own call, every compared value matching: 0.5 + 0.5 × 1, kept nowhere.
        if self.own.clean(w, j) {
            return 1.0;
        }
        let here = || self.similarity.get((w, j), || self.similarity_of(w, j));
        // Another step's own call: as in every run that makes it.
        match self.own.crossed(j) {
            Some((cross, v)) => cross.similarity(w, v, here),
            None => here(),
        }
    }

    fn similarity_of(&self, w: usize, j: usize) -> f64 {
        let (o, a) = (&self.workflow[w], self.calls[j]);
        if o.optional && !o.accepts_tool(&a.tool) {
            // Another tool standing in for a step the agent may skip is just another call.
            return 0.0;
        }
        if o.accepts_tool(&a.tool) {
            let (matched, compared) = self.matched_params(w, j);
            let frac = if compared == 0 {
                1.0
            } else {
                matched as f64 / compared as f64
            };
            return 0.5 + 0.5 * frac;
        }
        let mut wanted = Scalars::new();
        for (k, v) in o.call.args() {
            if o.match_policies.is_empty() {
                every_scalar(v, &mut wanted);
            } else if !matches!(
                o.match_policies.get(k),
                Some(MatchPolicy::Ignore | MatchPolicy::Semantic)
            ) {
                scalars(v, &child("", k), Some(o), &mut wanted);
            }
        }
        if wanted.is_empty() {
            return 0.0;
        }
        let mut given = Scalars::new();
        scalars(a.arguments(), "", None, &mut given);
        let shared = wanted.iter().filter(|w| given.contains(w)).count();
        let frac = shared as f64 / wanted.len() as f64;
        // Any of the step's values taken (the city a conversion was for) makes the call stand
        // in for the step; always below a call of the step's own tool (0.5 or more).
        if shared > 0 { 0.2 + 0.25 * frac } else { 0.0 }
    }

    /// Pairs `steps` (workflow indices, repeated steps repeated) with the turn's calls,
    /// maximising the total of `weight(i, j)` (which never exceeds `cap(i)`); a pair below 0.2
    /// is no pair. `rival(i, j)` bounds what any call but `j` weighs for step `i` (`None`:
    /// unknown). The in-order walk first (see the module doc), else the Hungarian algorithm.
    pub(crate) fn assign(
        &self,
        steps: usize,
        weight: &dyn Fn(usize, usize) -> f64,
        cap: &dyn Fn(usize) -> f64,
        rival: &dyn Fn(usize, Option<usize>) -> Option<f64>,
    ) -> Vec<Option<usize>> {
        let calls = self.calls.len();
        if let Some((mut pairing, got)) = in_order(steps, calls, weight, cap, rival) {
            for (j, w) in pairing.iter_mut().zip(got) {
                if w < 0.2 {
                    *j = None;
                }
            }
            return pairing;
        }
        let sim: Vec<Vec<f64>> = (0..steps)
            .map(|i| (0..calls).map(|j| weight(i, j)).collect())
            .collect();
        assign(&sim)
            .into_iter()
            .enumerate()
            .map(|(i, j)| j.filter(|&j| sim[i][j] >= 0.2))
            .collect()
    }
}

/// How many calls (or steps' own calls) give each hash.
type TwinCounts = HashMap<u64, u32, Hashed>;

/// A list's [`Tally`], shared by the steps that compare it; `None` where a selector decides
/// ([`projection`]).
type Twins<'a> = Option<Rc<Tally<'a>>>;

/// A call's values of `params` hashed together as [`TurnFacts::rival`] hashes a step's;
/// `Some(None)` when it lacks one, `None` when its tool selects its model by one of them.
fn projection(call: &CallKey, params: &[Box<str>], names: &[u64]) -> Option<Option<u64>> {
    let mut h = 0;
    for (p, &name) in params.iter().zip(names) {
        if call.selector == Some(&**p) {
            return None;
        }
        let Some((value, _)) = call.value(name, p) else {
            return Some(None);
        };
        h = member_hash(member_hash(h, name), value);
    }
    Some(Some(h))
}

/// The in-order walk's pairing (per step, its call) and each pair's weight (0 for none).
type Walked = (Vec<Option<usize>>, SmallVec<[f64; 8]>);

/// The in-order walk's pairing when it is optimal: every step paired with a call whose weight
/// is the best of the step's row (so the total is the sum of the row maxima, which no pairing
/// exceeds), the only best where the step matches imperfectly. `None` when some step's walked
/// call is not its row's best (or a step it could take another's perfect match from has a
/// `rival` too close); else the pairing and each pair's weight. Costs one weight per
/// step (at most [`LOOKAHEAD`] ahead, and as many calls passed over) while the run follows the
/// workflow or swaps neighbouring calls, plus a row per step that
/// does not match perfectly: each walked pair's weight is asked once and kept (a weight of a
/// long turn is looked up in a map, and the checks after the walk ask it again: the
/// imperfect rows' and the perfect pairs').
fn in_order(
    steps: usize,
    calls: usize,
    weight: &dyn Fn(usize, usize) -> f64,
    cap: &dyn Fn(usize) -> f64,
    rival: &dyn Fn(usize, Option<usize>) -> Option<f64>,
) -> Option<Walked> {
    // Per step, its cap: asked once (the checks after the walk ask it again per step).
    let caps: SmallVec<[f64; 8]> = (0..steps).map(cap).collect();
    let mut walk = Walk {
        weight,
        calls,
        pairing: vec![None; steps],
        got: smallvec![0.0; steps],
        next: 0,
        passed: SmallVec::new(),
    };
    for (i, &best) in caps.iter().enumerate() {
        walk.step(i, best);
    }
    let Walk { pairing, got, .. } = walk;
    let more = imperfect_rows_best(&pairing, &got, &caps, calls, weight, rival)?;
    perfect_pairs_stand(&pairing, &got, &caps, &more, rival).then_some((pairing, got))
}

/// [`in_order`]'s walk along the run: each step in turn takes a call.
struct Walk<'w> {
    weight: &'w dyn Fn(usize, usize) -> f64,
    calls: usize,
    /// Per step, its call so far.
    pairing: Vec<Option<usize>>,
    /// The walked pair's weight, per step (0 for a step the walk gave no call).
    got: SmallVec<[f64; 8]>,
    /// The first call no step has taken or passed over.
    next: usize,
    /// Calls the walk stepped over to reach a perfect match, the latest few, earliest first:
    /// a later step may be theirs (two calls swapped, a consumer made before its producer).
    passed: SmallVec<[usize; LOOKAHEAD]>,
}

impl Walk<'_> {
    /// Gives step `i` (whose perfect weight is `best`) a call: a call passed over that
    /// matches perfectly, else the first call within reach that does, else the best of the
    /// calls passed over and the next call (the earliest of equals: a consumer made before
    /// its producer matches imperfectly), else none.
    fn step(&mut self, i: usize, best: f64) {
        // The run following its steps, no call passed over: the next call a perfect match
        // takes the step as the search below would (a long correct stretch costs a weight a
        // step, no bookkeeping).
        let ahead = if self.passed.is_empty() && self.next < self.calls {
            let w = (self.weight)(i, self.next);
            if w == best {
                self.take(i, self.next, best);
                return;
            }
            Some(w)
        } else {
            None
        };
        // (A call passed over long ago is an extra call: no later step asks about it again.)
        let next = self.next;
        self.passed.retain(|j| *j + LOOKAHEAD >= next);
        let behind: SmallVec<[f64; LOOKAHEAD]> =
            self.passed.iter().map(|&j| (self.weight)(i, j)).collect();
        if let Some(k) = behind.iter().position(|&w| w == best) {
            (self.pairing[i], self.got[i]) = (Some(self.passed.remove(k)), best);
            return;
        }
        let (first, perfect) = self.look_ahead(i, best, ahead);
        match (perfect, first, best_behind(&behind)) {
            (Some(j), ..) => {
                for skipped in self.next..j {
                    if self.passed.len() == LOOKAHEAD {
                        self.passed.remove(0);
                    }
                    self.passed.push(skipped);
                }
                self.take(i, j, best);
            }
            (None, first, Some((k, w))) if first.is_none_or(|f| w >= f) => {
                (self.pairing[i], self.got[i]) = (Some(self.passed.remove(k)), w);
            }
            (None, Some(w), _) => self.take(i, self.next, w),
            (None, None, _) => {}
        }
    }

    /// Step `i` takes call `j`, at weight `w`; the walk goes on after it.
    fn take(&mut self, i: usize, j: usize, w: f64) {
        (self.pairing[i], self.got[i]) = (Some(j), w);
        self.next = j + 1;
    }

    /// Step `i`'s weight with the next call (`ahead`, when asked already), and the first
    /// call within reach that matches it perfectly (weight `best`).
    fn look_ahead(&self, i: usize, best: f64, ahead: Option<f64>) -> (Option<f64>, Option<usize>) {
        let mut first = None;
        for j in self.next..self.calls.min(self.next + LOOKAHEAD) {
            let w = match ahead {
                Some(w) if j == self.next => w,
                _ => (self.weight)(i, j),
            };
            if j == self.next {
                first = Some(w);
            }
            if w == best {
                return (first, Some(j));
            }
        }
        (first, None)
    }
}

/// The best of the calls passed over, by its place among them and its weight (the earliest
/// of equals).
fn best_behind(behind: &[f64]) -> Option<(usize, f64)> {
    behind
        .iter()
        .enumerate()
        .fold(None, |top: Option<(usize, f64)>, (k, &w)| {
            if top.is_some_and(|(_, t)| t >= w) {
                top
            } else {
                Some((k, w))
            }
        })
}

/// Whether each step the walk paired imperfectly has its row's only best among the calls no
/// other step matches perfectly (`None` where one does not). Then, per call another step
/// matches perfectly, how much more than its walked call a step that matches imperfectly
/// would weigh with it (empty where none would; else 0 for none, and for the other calls).
fn imperfect_rows_best(
    pairing: &[Option<usize>],
    got: &[f64],
    caps: &[f64],
    calls: usize,
    weight: &dyn Fn(usize, usize) -> f64,
    rival: &dyn Fn(usize, Option<usize>) -> Option<f64>,
) -> Option<SmallVec<[f64; 8]>> {
    // The calls the walk gave a step as a perfect match: another step tied with one of them
    // is no rival for it (see below).
    let mut perfect: SmallVec<[bool; 8]> = smallvec![false; calls];
    for (i, j) in pairing.iter().enumerate() {
        if let Some(j) = *j
            && got[i] == caps[i]
        {
            perfect[j] = true;
        }
    }
    let mut more: SmallVec<[f64; 8]> = SmallVec::new();
    for (i, j) in pairing.iter().enumerate() {
        let got = got[i];
        if got == caps[i] {
            continue;
        }
        let free = |k: usize| Some(k) == *j || !perfect[k];
        // Where the calls' hashes bound every other call's weight at the walked one's, only a
        // call no step matches perfectly can tie with it: nothing else is weighed (a wrong
        // value in a long run of one tool, whose calls are other steps' perfect matches).
        if let Some(bound) = rival(i, *j).filter(|&b| b <= got) {
            let tied = |k: usize| Some(k) != *j && free(k) && weight(i, k) == got;
            if got >= 0.2 && bound == got && (0..calls).any(tied) {
                return None;
            }
            continue;
        }
        let row: SmallVec<[f64; 8]> = (0..calls).map(|j| weight(i, j)).collect();
        // The best among the calls no other step matches perfectly.
        let best = (0..calls)
            .filter(|&k| free(k))
            .map(|k| row[k])
            .fold(0.0, f64::max);
        // A pair that stands (0.2 or more) must be its row's only best among those calls:
        // the walk then answers as the Hungarian algorithm does, whichever of two equal calls
        // that would have taken (a refused call and its broken retry). A call another step
        // matches perfectly is that step's (a wrong value in a run of similar calls ties with
        // every one of them; issue 31).
        let ties = (0..calls).filter(|&k| free(k) && row[k] == best).count();
        if got < best || (got >= 0.2 && ties > 1) {
            return None;
        }
        for k in (0..calls).filter(|&k| !free(k) && row[k] > got) {
            if more.is_empty() {
                more = smallvec![0.0; calls];
            }
            more[k] = more[k].max(row[k] - got);
        }
    }
    Some(more)
}

/// Whether every step the walk paired perfectly keeps its call though a step that matches
/// imperfectly would weigh `more` with it (a refused call weighs a little less than its
/// tool's other calls): the walk stays optimal when that step has no other call within the
/// difference of its best (an LP dual: the perfect step's potential lowered by it, the
/// call's raised), which `rival` bounds without a row.
fn perfect_pairs_stand(
    pairing: &[Option<usize>],
    got: &[f64],
    caps: &[f64],
    more: &[f64],
    rival: &dyn Fn(usize, Option<usize>) -> Option<f64>,
) -> bool {
    if more.is_empty() {
        return true;
    }
    pairing.iter().enumerate().all(|(s, j)| match *j {
        Some(k) if got[s] == caps[s] && more[k] > 0.0 => {
            let room = caps[s] - more[k];
            !rival(s, Some(k)).is_none_or(|r| r >= room)
        }
        _ => true,
    })
}

/// A value's scalars (a call's arguments have a few: kept in place).
pub(crate) type Scalars<'v> = SmallVec<[&'v Value; 8]>;

/// The strings and numbers in a value, skipping those a policy of step `o` lets vary
/// (`semantic`, `ignore`; `at` is the value's pointer), for [`TurnFacts::similarity`] and
/// `from_output` (no step: every one, and no pointer built).
pub(crate) fn scalars<'v>(v: &'v Value, at: &str, o: Option<&OracleCall>, out: &mut Scalars<'v>) {
    // No step, or one without policies: every value counts, and no pointer is built.
    let Some(o) = o.filter(|o| !o.match_policies.is_empty()) else {
        return every_scalar(v, out);
    };
    if matches!(
        policy_at(o, at),
        Some(MatchPolicy::Ignore | MatchPolicy::Semantic)
    ) {
        return;
    }
    match v {
        Value::String(_) | Value::Number(_) => out.push(v),
        Value::Array(items) => {
            for (i, item) in items.iter().enumerate() {
                scalars(item, &format!("{at}/{i}"), Some(o), out);
            }
        }
        Value::Object(m) => {
            for (k, item) in m {
                scalars(item, &child(at, k), Some(o), out);
            }
        }
        _ => {}
    }
}

fn every_scalar<'v>(v: &'v Value, out: &mut Scalars<'v>) {
    match v {
        Value::String(_) | Value::Number(_) => out.push(v),
        Value::Array(items) => items.iter().for_each(|i| every_scalar(i, out)),
        Value::Object(m) => m.values().for_each(|i| every_scalar(i, out)),
        _ => {}
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A small deterministic generator (no dependency for it).
    struct Lcg(u64);
    impl Lcg {
        fn next(&mut self, n: u64) -> u64 {
            self.0 = self
                .0
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            (self.0 >> 33) % n
        }
    }

    /// The best weight of step `i` with a call other than `j`.
    fn rival_in<R: AsRef<[f64]>>(sim: &[R], i: usize, j: Option<usize>) -> Option<f64> {
        let row = sim[i].as_ref();
        Some(
            (0..row.len())
                .filter(|&k| Some(k) != j)
                .map(|k| row[k])
                .fold(0.0, f64::max),
        )
    }

    fn total(sim: &[Vec<f64>], pairing: &[Option<usize>]) -> f64 {
        pairing
            .iter()
            .enumerate()
            .filter_map(|(i, j)| j.map(|j| sim[i][j]))
            .sum()
    }

    /// A wrong value in a run of similar calls ties with every call of the tool: the walk
    /// keeps its pairing when the tied calls are other steps' perfect matches, and leaves a
    /// tie with a call no step takes (a refused call and its retry) to the Hungarian
    /// algorithm.
    #[test]
    fn ties_with_other_steps_perfect_matches_keep_the_walk() {
        let w = 5.0 / 6.0;
        let sim = [vec![1.0, w, w], vec![w, w, w], vec![w, w, 1.0]];
        let weight = |i: usize, j: usize| sim[i][j];
        let cap = |_: usize| 1.0;
        let rival = |i: usize, j: Option<usize>| rival_in(&sim, i, j);
        assert_eq!(
            in_order(3, 3, &weight, &cap, &rival).map(|(p, _)| p),
            Some(vec![Some(0), Some(1), Some(2)])
        );
        // Two calls for the one step, neither perfect: which one is the Hungarian's to say.
        let retry = [vec![w, w]];
        let weight = |i: usize, j: usize| retry[i][j];
        let rival = |i: usize, j: Option<usize>| rival_in(&retry, i, j);
        assert_eq!(in_order(1, 2, &weight, &cap, &rival), None);
    }

    /// A long run with calls swapped here and there (a consumer made before its producer) is
    /// paired by the walk, each step with its own call, not left to the Hungarian algorithm.
    #[test]
    fn swapped_calls_are_walked() {
        let n = 200;
        let mut call_of: Vec<usize> = (0..n).collect();
        for at in [0, 50, 121, 198] {
            call_of.swap(at, at + 1);
        }
        // Same tool every other step: a wrong call of the right tool still scores 0.75.
        let weight = |i: usize, j: usize| {
            if call_of[i] == j {
                1.0
            } else if i % 2 == j % 2 {
                0.75
            } else {
                0.0
            }
        };
        let (pairing, got) =
            in_order(n, n, &weight, &|_| 1.0, &|_, _| None).expect("the walk decides");
        assert_eq!(
            pairing,
            call_of.iter().map(|&j| Some(j)).collect::<Vec<_>>()
        );
        assert!(got.iter().all(|&w| w == 1.0));
    }

    /// A refused call (a misspelt parameter) in a long run of one tool weighs a little less
    /// for its step than the tool's other calls, each another step's perfect match: the walk
    /// keeps its pairing when those steps have nothing else as close (`rival`), and leaves
    /// the turn to the Hungarian algorithm when that is unknown.
    #[test]
    fn a_refused_call_among_its_tools_other_calls_keeps_the_walk() {
        let n = 50;
        let sim: Vec<Vec<f64>> = (0..n)
            .map(|i| {
                (0..n)
                    .map(|j| {
                        let w = if i == j && i != 0 { 1.0 } else { 0.5 };
                        if j == 0 { w * 0.99 } else { w }
                    })
                    .collect()
            })
            .collect();
        let weight = |i: usize, j: usize| sim[i][j];
        let rival = |i: usize, j: Option<usize>| rival_in(&sim, i, j);
        let (pairing, got) = in_order(n, n, &weight, &|_| 1.0, &rival).expect("the walk decides");
        assert_eq!(pairing, (0..n).map(Some).collect::<Vec<_>>());
        assert_eq!(got[0], 0.495);
        assert!((total(&sim, &pairing) - total(&sim, &assign(&sim))).abs() < 1e-9);
        assert_eq!(in_order(n, n, &weight, &|_| 1.0, &|_, _| None), None);
    }

    /// Whenever the in-order walk keeps its pairing, no pairing scores more: on random
    /// matrices shaped like runs (mostly perfect in order, some wrong values, extra and
    /// missing calls, equal rows), its total is the Hungarian algorithm's.
    #[test]
    fn the_walk_is_kept_only_when_optimal() {
        let mut rng = Lcg(31);
        let (mut kept, mut cases) = (0, 0);
        for _ in 0..4000 {
            let steps = 1 + rng.next(7) as usize;
            let calls = rng.next(9) as usize;
            let optional: Vec<bool> = (0..steps).map(|_| rng.next(5) == 0).collect();
            let levels = [0.0, 0.2, 0.5, 0.75, 1.0];
            let mut sim: Vec<Vec<f64>> = (0..steps)
                .map(|i| {
                    (0..calls)
                        .map(|j| {
                            let base = if i == j && rng.next(3) > 0 {
                                1.0
                            } else {
                                levels[rng.next(5) as usize]
                            };
                            if optional[i] { base * 0.98 } else { base }
                        })
                        .collect()
                })
                .collect();
            // Two neighbouring calls swapped, now and then.
            if calls >= 2 && rng.next(3) == 0 {
                let c = rng.next(calls as u64 - 1) as usize;
                sim.iter_mut().for_each(|row| row.swap(c, c + 1));
            }
            let weight = |i: usize, j: usize| sim[i][j];
            let cap = |i: usize| if optional[i] { 0.98 } else { 1.0 };
            cases += 1;
            let rival = |i: usize, j: Option<usize>| rival_in(&sim, i, j);
            if let Some((p, got)) = in_order(steps, calls, &weight, &cap, &rival) {
                kept += 1;
                // Each pair's weight as the walk kept it.
                for (i, (j, w)) in p.iter().zip(&got).enumerate() {
                    assert_eq!(*w, j.map_or(0.0, |j| sim[i][j]), "{sim:?}: step {i}");
                }
                let best = total(&sim, &assign(&sim));
                assert!(
                    (total(&sim, &p) - best).abs() < 1e-9,
                    "{sim:?}: walk {p:?} below the optimum {best}"
                );
            }
        }
        assert!(kept * 4 > cases, "the walk decided only {kept} of {cases}");
    }
}
