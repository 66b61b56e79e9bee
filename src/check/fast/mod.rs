//! The fast path: deciding a transcript without running the engines, when that is exact.
//!
//! Most transcripts a gate sees are either right — every call one of its workflow step's
//! accepted forms — or wrong in a value the oracle compares. Both can be told from the calls
//! alone, against matchers compiled once per suite:
//!
//! - **perfect**: each turn's calls pair one-to-one with its steps (same tool, every compared
//!   value accepted), and every argument is a value known to lint clean in that place. Then
//!   the linter, the flow engine and the oracle find nothing and every sub-dimension is 1, so
//!   [`super::evaluate`] builds that evaluation directly;
//! - **imperfect**: no such pairing exists even ignoring lint, so whichever pairing the oracle
//!   picks leaves a step undone, an extra call, another tool or a value it does not accept:
//!   TC is below 1, and under a pass threshold of 1 (BFCL's exact match) the verdict is Fail
//!   ([`super::verdict`]);
//! - **rejected**: a call has an argument its tool does not declare, where the linter is
//!   certain to reject it (the step lists every declared parameter, the schema admits no
//!   others, no capability matrix): an error finding, so Fail at any threshold;
//! - anything else — a value not known to lint clean, a rule that needs the flow engine, a
//!   strictly ordered turn, a repeated call the workflow does not ask for — goes to the
//!   engines.
//!
//! "Known to lint clean" is established at compile time by linting the step's own call with
//! each accepted value in place, and holds for every combination only where the linter checks
//! parameters independently: a tool no capability matrix describes, whose schema's top level
//! is `properties`/`required`/`additionalProperties`. A parameter named like an input (the
//! flow engine checks its strings as artifact references) keeps only the values the scenario
//! grounds without any other call — named in the turn's prompt or among the scenario's
//! artifacts — and a transcript bringing its own prompt for that turn goes to the engines.
//! Other tools' steps can still be found imperfect.
//! Comparison goes through the oracle's own [`oracle::value_matches`], so both paths agree on
//! what matches — except where a plain comparison against the accepted values, compiled at
//! load, is the same answer ([`Matcher::Options`], unit-tested against the rule); and
//! `tests/fast_path.rs` checks the two paths agree on every shipped transcript and on
//! thousands of mutated ones.
//!
//! Layout: a suite's plan is a handful of flat arrays (scenarios, turns, steps, parameters,
//! clean values) with every id, name and clean string in one byte buffer, found through an
//! open-addressed table of scenario-id hashes (exact: every candidate's id is compared); the
//! transcript's own allocations are the rest of a check's memory traffic.

use std::cmp::Ordering;
use std::collections::HashMap;

use serde_json::Value;

use crate::flow;
use crate::harness::{Call, Harness, MatchPolicy, OracleCall, Transcript};
use crate::hash::{order, same_bytes};
use crate::lint::Linter;
use crate::score::oracle;

/// What the calls alone say about a transcript.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Outcome {
    /// The engines would find nothing and score every sub-dimension 1.
    Perfect,
    /// TC is below 1, whatever else the engines find.
    Imperfect,
    /// Only the engines can tell.
    Unknown,
    /// A call the linter rejects (an argument its tool does not declare): Fail, whatever the
    /// threshold.
    Rejected,
}

/// A suite's workflows compiled for the fast path.
pub(crate) struct FastPath {
    /// Scenario ids → indices: an open-addressed table (linear probing, at most half full),
    /// one cache line per lookup where a general map takes two.
    slots: Vec<Slot>,
    /// Per scenario, in harness order.
    scenarios: Vec<ScenarioPlan>,
    turns: Vec<TurnPlan>,
    steps: Vec<Step>,
    params: Vec<Param>,
    clean: Vec<Clean>,
    /// Every id, name and clean string, back to back.
    text: Vec<u8>,
    /// Per parameter, what only a value outside its clean ones needs.
    rules: Vec<Rule>,
    /// Clean arrays and objects.
    values: Vec<Value>,
    /// The flow engine's key of a call a scenario's workflow asks for more than once, and how
    /// many times: that many identical calls are work, not redundancy.
    asked: Vec<(Box<[u8]>, usize)>,
}

/// Eight bytes, so the table of a few thousand scenarios stays in the first-level cache: the
/// id itself is the scenario's.
#[derive(Clone, Copy)]
struct Slot {
    /// The id hash's high half: a cheap first test before the ids are compared.
    tag: u32,
    /// `u32::MAX`: empty.
    scenario: u32,
}

impl Slot {
    const EMPTY: Self = Self {
        tag: 0,
        scenario: u32::MAX,
    };
}

/// A range of one of the plan's arrays (or of its text).
#[derive(Clone, Copy, Default)]
struct Span {
    start: u32,
    len: u32,
}

impl Span {
    /// From `start` to the end of `items`.
    fn of<T>(items: &[T], start: usize) -> Self {
        Self {
            start: start as u32,
            len: (items.len() - start) as u32,
        }
    }

    fn range(self) -> std::ops::Range<usize> {
        self.start as usize..(self.start + self.len) as usize
    }
}

struct ScenarioPlan {
    /// Only the engines can judge it (see [`FastPath::new`]).
    general: bool,
    id: Span,
    /// A range of `turns`.
    turns: Span,
    /// A range of `asked`: the calls its workflow asks for more than once.
    asked: Span,
}

struct TurnPlan {
    /// A range of `steps`.
    steps: Span,
    /// The steps must run in an order (the fast path then leaves a perfect turn to the oracle).
    ordered: bool,
    /// No call can be perfect for two of the steps, so when the calls pair with the steps in
    /// order, no two calls are identical (no redundant call to rule out).
    exclusive: bool,
    /// When some clean value references an artifact the scenario's prompt for this turn
    /// grounds, that prompt: a transcript that brings a prompt of its own for the turn (another
    /// text; the same one is what the engines read anyway) is left to the engines.
    prompt_grounded: Option<Span>,
    /// A call perfect for one of the steps may hold SQL ([`flow::may_hold_sql`]): the suite's
    /// matrices declare `sql:` parameters, or a step takes a parameter of an SQL name. (A
    /// perfect call has no argument outside its step's `params`.)
    sql: bool,
}

struct Step {
    tool: Span,
    /// A range of `params`: those the step compares or the tool requires, sorted by name (as
    /// the call's arguments are).
    params: Span,
    /// A call whose every argument is a clean value lints clean and has no flow finding (under
    /// the scenario's prompt).
    verifiable: bool,
    /// An argument outside `params` is one the tool does not declare, which the linter
    /// rejects: `params` holds every declared parameter, the schema admits no others, and no
    /// capability matrix describes the tool.
    rejects_unknown: bool,
    /// Where the step's own call (the call its workflow writes) is perfect for it, that call's
    /// arguments' identity ([`Call::identity`], never empty): a call of the step's tool with
    /// the same bytes is perfect, told by one comparison (a right answer's usual call) rather
    /// than a walk of its arguments. Empty otherwise.
    own: Span,
}

impl Step {
    /// The step's own call is perfect for it: so is any call equal to it, without asking.
    fn own_perfect(&self) -> bool {
        self.own.len != 0
    }
}

struct Param {
    name: Span,
    /// A range of `clean`: values the oracle accepts here that lint clean in the step's call
    /// (empty unless the step is verifiable).
    clean: Span,
    /// Compared by the oracle (not `ignore`, and in the step's arguments or match policies).
    compared: bool,
    required: bool,
    /// The oracle rejects a call without this argument (compared, and absence is no accepted
    /// form of it).
    absent_mismatch: bool,
    /// How a compared value outside `clean` is judged.
    matcher: Matcher,
    /// A range of `clean`: every value the oracle accepts here, for [`Matcher::Options`].
    accepted: Span,
}

/// How the fast path judges a compared value that is not clean.
#[derive(Clone, Copy)]
enum Matcher {
    /// Through the oracle's [`oracle::value_matches`] (the rule).
    Rule,
    /// A scalar is accepted exactly when it is one of `accepted` as the oracle compares plain
    /// values — numbers by value, anything else by `==` — an integer option taking no float
    /// when `strict_integer` (an `any_of` without normalising and `exact`, on a parameter that
    /// selects no model). Arrays and objects go to the rule.
    Options { strict_integer: bool },
}

impl Param {
    /// A call without this argument is not perfect for the step.
    fn must(&self) -> bool {
        self.required || self.absent_mismatch
    }
}

/// How the oracle compares one parameter.
struct Rule {
    name: String,
    /// The parameter selects the tool's model (two names of one model match).
    selector: bool,
    policy: Option<MatchPolicy>,
    want: Option<Value>,
}

/// A clean value; [`FastPath::is`] is `==` with a JSON value.
#[derive(Clone, Copy)]
enum Clean {
    Str(Span),
    PosInt(u64),
    NegInt(i64),
    Float(f64),
    Bool(bool),
    Null,
    /// An index into `values`.
    Other(u32),
}

#[derive(Clone, Copy, PartialEq, Eq)]
enum Edge {
    /// The call has an argument its tool does not declare.
    Rejected,
    /// Different tool, or a compared value the oracle does not accept.
    Mismatch,
    /// Accepted, but not every value is known to lint clean.
    Unverified,
    Perfect,
}

impl FastPath {
    pub fn new(harness: &Harness, linter: &Linter) -> Self {
        let mut plan = Self {
            slots: Vec::new(),
            scenarios: Vec::new(),
            turns: Vec::new(),
            steps: Vec::new(),
            params: Vec::new(),
            clean: Vec::new(),
            text: Vec::new(),
            rules: Vec::new(),
            values: Vec::new(),
            asked: Vec::new(),
        };
        for sc in &harness.scenarios {
            let first_turn = plan.turns.len();
            // Oracles beyond one list of plain steps (alternatives, optional or repeated steps,
            // `any_of`, `forbid`, pointer-keyed policies, a threshold or severities of their
            // own, references the workflow itself shows) are the engines' to judge.
            let general = !harness.severity.is_empty()
                || sc.pass.is_some()
                || sc.turns.iter().any(|t| {
                    !t.is_plain()
                        || t.workflow
                            .iter()
                            .any(|o| o.match_policies.keys().any(|k| k.starts_with('/')))
                })
                || !flow::inferred_references(sc).is_empty();
            for (ti, turn) in sc.turns.iter().enumerate() {
                // A failed mock output fails whichever call it answers.
                let failing_mock = turn.workflow.iter().any(|o| {
                    o.mock_output
                        .as_ref()
                        .is_some_and(|m| o.tools().any(|t| linter.refuses(t, m)))
                });
                let first_step = plan.steps.len();
                let mut prompt_grounded = false;
                let ground = flow::PromptGround::new(&turn.prompt, &sc.artifacts);
                for o in &turn.workflow {
                    let (mut step, grounded) = plan.step(o, linter, !failing_mock, &ground);
                    prompt_grounded |= grounded;
                    if plan.edge(linter, &step, &o.call) == Edge::Perfect {
                        step.own = plan.intern_bytes(o.call.identity());
                    }
                    plan.steps.push(step);
                }
                let steps = Span::of(&plan.steps, first_step);
                let prompt_grounded = prompt_grounded.then(|| plan.intern(&turn.prompt));
                plan.turns.push(TurnPlan {
                    steps,
                    // Some step comes before another: every one in a strict turn, else a
                    // producer before the step that takes its output (the scenario's compiled
                    // relation: one pass over the outputs, not one per pair of steps).
                    ordered: (turn.order_strict && turn.workflow.len() >= 2)
                        || oracle::consumed(sc, ti).iter().any(|from| !from.is_empty()),
                    exclusive: plan.exclusive(steps),
                    prompt_grounded,
                    sql: linter.declares_sql()
                        || (linter.may_take_sql()
                            && plan.steps[steps.range()].iter().any(|s| {
                                plan.params[s.params.range()]
                                    .iter()
                                    .any(|p| crate::sql::sql_name(plan.bytes(p.name)))
                            })),
                });
            }
            let first_asked = plan.asked.len();
            let mut asked: Vec<(Box<[u8]>, usize)> = flow::asked_calls(sc)
                .iter()
                .filter(|(_, times)| **times > 1)
                .map(|(k, times)| (k.clone(), *times))
                .collect();
            asked.sort_unstable();
            plan.asked.extend(asked);
            let id = plan.intern(&sc.id);
            plan.scenarios.push(ScenarioPlan {
                general,
                id,
                turns: Span::of(&plan.turns, first_turn),
                asked: Span::of(&plan.asked, first_asked),
            });
        }
        plan.slots = vec![Slot::EMPTY; (plan.scenarios.len() * 2).next_power_of_two().max(8)];
        for (i, sc) in plan.scenarios.iter().enumerate() {
            let hash = id_hash(&plan.text[sc.id.range()]);
            let mask = plan.slots.len() - 1;
            let mut at = slot_of(hash, mask);
            while plan.slots[at].scenario != u32::MAX {
                at = (at + 1) & mask;
            }
            plan.slots[at] = Slot {
                tag: tag_of(hash),
                scenario: i as u32,
            };
        }
        plan
    }

    /// The index of scenario `id` (the first, should the harness hold it twice).
    pub fn index_of(&self, id: &str) -> Option<usize> {
        let hash = id_hash(id.as_bytes());
        let mask = self.slots.len().checked_sub(1)?;
        let mut at = slot_of(hash, mask);
        loop {
            let slot = self.slots[at];
            if slot.scenario == u32::MAX {
                return None;
            }
            if slot.tag == tag_of(hash)
                && same_bytes(
                    self.bytes(self.scenarios[slot.scenario as usize].id),
                    id.as_bytes(),
                )
            {
                return Some(slot.scenario as usize);
            }
            at = (at + 1) & mask;
        }
    }

    /// The index of scenario `id`, when a transcript of `turns` turns can answer it (else the
    /// caller's full lookup says why not).
    pub fn find(&self, id: &str, turns: usize) -> Option<usize> {
        self.index_of(id)
            .filter(|&i| turns <= self.scenarios[i].turns.len as usize)
    }

    fn intern(&mut self, s: &str) -> Span {
        self.intern_bytes(s.as_bytes())
    }

    fn intern_bytes(&mut self, b: &[u8]) -> Span {
        let start = self.text.len();
        self.text.extend_from_slice(b);
        Span::of(&self.text, start)
    }

    fn bytes(&self, s: Span) -> &[u8] {
        &self.text[s.range()]
    }

    /// The step's matcher, and whether a clean value relies on `ground` (the turn's prompt and
    /// the scenario's artifacts) to be a grounded reference.
    fn step(
        &mut self,
        o: &OracleCall,
        linter: &Linter,
        mock_ok: bool,
        ground: &flow::PromptGround,
    ) -> (Step, bool) {
        let spec = linter.tool(&o.call.tool);
        let required: Vec<&str> = spec.map(|s| s.required().collect()).unwrap_or_default();
        let compared = oracle::compared_params(o);
        let mut names: Vec<&str> = compared.iter().map(|s| s.as_str()).collect();
        names.extend(o.match_policies.keys().map(String::as_str));
        names.extend(required.iter().copied());
        names.sort_unstable();
        names.dedup();
        let no_matrix = linter.facts(&o.call.tool).is_none();
        let verifiable = mock_ok
            && no_matrix
            && spec.is_some_and(|s| independent_params(&s.input_schema))
            && linter.lint(&o.call.tool, o.call.arguments()).is_empty();
        let mut grounded = false;
        let rejects_unknown = no_matrix
            && linter.rejects_undeclared(&o.call.tool)
            && spec
                .and_then(|s| s.properties())
                .is_some_and(|props| props.keys().all(|k| names.contains(&k.as_str())));
        let tool = self.intern(&o.call.tool);
        let first_param = self.params.len();
        for name in names {
            let rule = Rule {
                name: name.to_owned(),
                selector: linter.is_selector(&o.call.tool, name),
                policy: o.match_policies.get(name).cloned(),
                want: o.call.args().get(name).cloned(),
            };
            let is_compared = compared.iter().any(|c| c.as_str() == name);
            let first_clean = self.clean.len();
            if verifiable {
                // Without a capability matrix, the flow engine checks the strings of a
                // parameter named like an input as references: clean only where the prompt
                // grounds them.
                let input = flow::looks_like_input(name);
                for v in rule.clean_values(o, linter, is_compared) {
                    let refs = if input {
                        flow::reference_strings(&v)
                    } else {
                        Vec::new()
                    };
                    if !refs.iter().all(|r| ground.grounds(r)) {
                        continue;
                    }
                    grounded |= !refs.is_empty();
                    let c = self.clean_of(&v);
                    self.clean.push(c);
                }
            }
            let clean = Span::of(&self.clean, first_clean);
            let is_required = required.contains(&name);
            // Whether the oracle accepts a missing argument depends on the policy alone.
            let absent_mismatch = is_compared && !rule.matches(linter, &o.call, None);
            let first_accepted = self.clean.len();
            let matcher = match rule.options() {
                Some((options, strict_integer)) if is_compared => {
                    for v in options {
                        let c = self.clean_of(v);
                        self.clean.push(c);
                    }
                    Matcher::Options { strict_integer }
                }
                _ => Matcher::Rule,
            };
            let param = Param {
                name: self.intern(name),
                clean,
                compared: is_compared,
                required: is_required,
                absent_mismatch,
                matcher,
                accepted: Span::of(&self.clean, first_accepted),
            };
            self.params.push(param);
            self.rules.push(rule);
        }
        let step = Step {
            tool,
            params: Span::of(&self.params, first_param),
            verifiable,
            rejects_unknown,
            // Set by the caller, which asks `edge` of the step built.
            own: Span::default(),
        };
        (step, grounded)
    }

    fn clean_of(&mut self, v: &Value) -> Clean {
        match v {
            Value::String(s) => Clean::Str(self.intern(s)),
            Value::Number(n) if n.is_u64() => Clean::PosInt(n.as_u64().unwrap_or_default()),
            Value::Number(n) if n.is_i64() => Clean::NegInt(n.as_i64().unwrap_or_default()),
            Value::Number(n) if n.is_f64() => Clean::Float(n.as_f64().unwrap_or_default()),
            Value::Bool(b) => Clean::Bool(*b),
            Value::Null => Clean::Null,
            other => {
                self.values.push(other.clone());
                Clean::Other((self.values.len() - 1) as u32)
            }
        }
    }

    /// Whether no call can be perfect for two of these steps. A perfect call has every
    /// argument clean for its step and every argument the step must have, so two steps are
    /// exclusive when one must have an argument the other has no clean value in common for
    /// (or does not know).
    ///
    /// Past a few steps, each is held to the earlier steps that may not be apart from it, not
    /// to every one (a long workflow's steps squared): those sharing a clean value at the one
    /// of its must-have parameters whose values the fewest share (a step not apart from it
    /// shares one at each), or, for a step that must have none, every earlier step of its
    /// tool — and two of those are never apart, which decides at once.
    fn exclusive(&self, steps: Span) -> bool {
        let steps = &self.steps[steps.range()];
        // A turn of a few steps (the usual one) has few pairs: each asked, nothing built.
        if steps.len() <= 8 {
            return (0..steps.len()).all(|i| (0..i).all(|j| !self.not_apart(&steps[i], &steps[j])));
        }
        self.exclusive_by_index(steps)
    }

    /// [`FastPath::exclusive`] through an index of the steps' clean values (see there).
    fn exclusive_by_index(&self, steps: &[Step]) -> bool {
        let mut of_value: HashMap<u64, Vec<u32>, crate::hash::Hashed> = HashMap::default();
        let mut of_tool: HashMap<&[u8], (Vec<u32>, bool)> = HashMap::new();
        for (i, s) in steps.iter().enumerate() {
            // A step that is not verifiable is apart from every other.
            if !s.verifiable {
                continue;
            }
            let tool = self.bytes(s.tool);
            let params = &self.params[s.params.range()];
            let (earlier, mustless) = of_tool.entry(tool).or_default();
            let candidates: &[u32] = if params.iter().any(Param::must) {
                let sharing = |p: &Param| -> Vec<u32> {
                    let mut at: Vec<u32> = self.clean[p.clean.range()]
                        .iter()
                        .filter_map(|c| of_value.get(&self.clean_key(tool, p.name, *c)))
                        .flatten()
                        .copied()
                        .collect();
                    at.sort_unstable();
                    at.dedup();
                    at
                };
                &params
                    .iter()
                    .filter(|p| p.must())
                    .map(sharing)
                    .min_by_key(Vec::len)
                    .unwrap_or_default()
            } else if *mustless {
                return false;
            } else {
                *mustless = true;
                earlier
            };
            if candidates
                .iter()
                .any(|&j| self.not_apart(s, &steps[j as usize]))
            {
                return false;
            }
            of_tool.entry(tool).or_default().0.push(i as u32);
            for p in params {
                for c in &self.clean[p.clean.range()] {
                    let list = of_value
                        .entry(self.clean_key(tool, p.name, *c))
                        .or_default();
                    if list.last() != Some(&(i as u32)) {
                        list.push(i as u32);
                    }
                }
            }
        }
        true
    }

    /// Whether one call could be perfect for both steps: neither must have an argument the
    /// other has no clean value in common for.
    fn not_apart(&self, s: &Step, t: &Step) -> bool {
        let apart = |s: &Step, t: &Step| {
            !s.verifiable
                || !t.verifiable
                || self.bytes(s.tool) != self.bytes(t.tool)
                || self.params[s.params.range()].iter().any(|p| {
                    p.must()
                        && self.params[t.params.range()]
                            .iter()
                            .find(|q| self.bytes(q.name) == self.bytes(p.name))
                            .is_none_or(|q| {
                                !self.clean[p.clean.range()].iter().any(|a| {
                                    self.clean[q.clean.range()]
                                        .iter()
                                        .any(|b| self.same_clean(*a, *b))
                                })
                            })
                })
        };
        !apart(s, t) && !apart(t, s)
    }

    /// A key for a clean value of parameter `name` of `tool`: equal for values
    /// [`FastPath::same_clean`] finds the same (an array or object by its
    /// [`crate::hash::value_hash`], which equal values share).
    fn clean_key(&self, tool: &[u8], name: Span, c: Clean) -> u64 {
        use std::hash::{Hash, Hasher};
        let mut h = crate::hash::NameHasher::default();
        (tool, self.bytes(name)).hash(&mut h);
        match c {
            Clean::Str(x) => (0u8, self.bytes(x)).hash(&mut h),
            Clean::PosInt(x) => (1u8, x).hash(&mut h),
            Clean::NegInt(x) => (2u8, x).hash(&mut h),
            // 0.0 and -0.0 are the same value.
            Clean::Float(x) => (3u8, if x == 0.0 { 0 } else { x.to_bits() }).hash(&mut h),
            Clean::Bool(x) => (4u8, x).hash(&mut h),
            Clean::Null => 5u8.hash(&mut h),
            Clean::Other(x) => {
                (6u8, crate::hash::value_hash(&self.values[x as usize])).hash(&mut h)
            }
        }
        h.finish()
    }

    fn same_clean(&self, a: Clean, b: Clean) -> bool {
        match (a, b) {
            (Clean::Str(x), Clean::Str(y)) => self.bytes(x) == self.bytes(y),
            (Clean::PosInt(x), Clean::PosInt(y)) => x == y,
            (Clean::NegInt(x), Clean::NegInt(y)) => x == y,
            (Clean::Float(x), Clean::Float(y)) => x == y,
            (Clean::Bool(x), Clean::Bool(y)) => x == y,
            (Clean::Null, Clean::Null) => true,
            (Clean::Other(x), Clean::Other(y)) => {
                self.values[x as usize] == self.values[y as usize]
            }
            _ => false,
        }
    }

    /// `c == v`, as serde_json compares JSON values (numbers by kind and value).
    #[inline(always)]
    fn is(&self, c: Clean, v: &Value) -> bool {
        match (c, v) {
            (Clean::Str(s), Value::String(x)) => same_bytes(self.bytes(s), x.as_bytes()),
            (Clean::PosInt(n), Value::Number(x)) => x.is_u64() && x.as_u64() == Some(n),
            (Clean::NegInt(n), Value::Number(x)) => {
                !x.is_u64() && x.is_i64() && x.as_i64() == Some(n)
            }
            (Clean::Float(f), Value::Number(x)) => x.is_f64() && x.as_f64() == Some(f),
            (Clean::Bool(b), Value::Bool(x)) => b == *x,
            (Clean::Null, Value::Null) => true,
            (Clean::Other(i), _) => self.values[i as usize] == *v,
            _ => false,
        }
    }

    /// Whether the oracle's plain comparison takes scalar `v` for option `c`: numbers by value
    /// (under `strict_integer`, an integer option takes no float), anything else by `==`.
    #[inline]
    fn same_plain(&self, c: Clean, v: &Value, strict_integer: bool) -> bool {
        let Value::Number(x) = v else {
            return self.is(c, v);
        };
        let integer = x.is_u64() || x.is_i64();
        let option = match c {
            Clean::PosInt(n) if integer || !strict_integer => n as f64,
            Clean::NegInt(n) if integer || !strict_integer => n as f64,
            Clean::Float(f) => f,
            _ => return false,
        };
        x.as_f64() == Some(option)
    }

    /// What the calls alone say about transcript `t`, which answers scenario number `sc`.
    pub fn outcome(&self, linter: &Linter, sc: usize, t: &Transcript) -> Outcome {
        self.outcome_with(linter, sc, t, Pairs::Any).0
    }

    /// Whether the transcript is perfect with every turn's calls its steps in order, each
    /// call paired with the step at its position: [`FastPath::outcome`] is `Perfect` and so
    /// is each call against its step. A call off its step's place decides it (no search for
    /// another pairing, which could only find the transcript perfect out of order).
    ///
    /// `own_at_place`, per call (in transcript order), says whether it is the own call of the
    /// step at its place (the call the workflow writes; empty where not known): such a call is
    /// as perfect as its step's own call, known without asking.
    pub fn perfect_in_order(
        &self,
        linter: &Linter,
        sc: usize,
        t: &Transcript,
        own_at_place: &[bool],
    ) -> bool {
        self.outcome_with(linter, sc, t, Pairs::AtPlace(own_at_place)) == (Outcome::Perfect, true)
    }

    /// The outcome, and for a perfect transcript whether every turn pairs each call with the
    /// step at its position (the calls are the steps in order), over the pairings `pairs`
    /// allows.
    fn outcome_with(
        &self,
        linter: &Linter,
        sc: usize,
        t: &Transcript,
        pairs: Pairs<'_>,
    ) -> (Outcome, bool) {
        let Some(sc) = self.scenarios.get(sc).filter(|sc| !sc.general) else {
            return (Outcome::Unknown, false);
        };
        let (mut unknown, mut all_in_order) = (false, true);
        // The first call of the turn, across the transcript.
        let mut first = 0;
        // Identical calls in two turns are for the flow engine to judge.
        let mut repeats = sc.turns.len > 1;
        for (ti, turn) in self.turns[sc.turns.range()].iter().enumerate() {
            let tt = t.turns.get(ti);
            let calls: &[Call] = tt.map_or(&[], |tt| &tt.calls);
            // The transcript's own prompt replaces the scenario's, which grounds references.
            unknown |= turn.prompt_grounded.is_some_and(|scenario| {
                tt.and_then(|tt| tt.prompt.as_deref())
                    .is_some_and(|own| !same_bytes(own.as_bytes(), self.bytes(scenario)))
            });
            let outcome = match pairs {
                Pairs::AtPlace(own) => {
                    let own = own.get(first..first + calls.len()).unwrap_or(&[]);
                    self.turn_in_order(linter, turn, calls, own)
                }
                Pairs::Any => self.turn(linter, turn, calls),
            };
            first += calls.len();
            match outcome {
                (Outcome::Imperfect, _) => return (Outcome::Imperfect, false),
                (Outcome::Rejected, _) => return (Outcome::Rejected, false),
                (Outcome::Unknown, _) => unknown = true,
                (Outcome::Perfect, in_order) => {
                    all_in_order &= in_order;
                    unknown |= turn.ordered;
                    repeats |= calls.len() >= 2 && !(turn.exclusive && in_order);
                }
            }
            // What follows only ever makes the outcome unknown, so it is asked after the
            // calls, which may decide it, and only while it is still known.
            // A recorded error output fails its call: the flow engine's to judge.
            unknown = unknown
                || calls.iter().any(|c| {
                    c.output
                        .as_ref()
                        .is_some_and(|o| linter.refuses(&c.tool, o))
                });
            // SQL names tables, columns and ids: references for the flow engine to ground.
            // (Asked only of a turn still known, so perfect: its calls take only their steps'
            // parameters.)
            unknown = unknown || (turn.sql && calls.iter().any(|c| flow::may_hold_sql(linter, c)));
        }
        if unknown || (repeats && !self.no_redundant_repeat(sc, t)) {
            return (Outcome::Unknown, false);
        }
        (Outcome::Perfect, all_in_order)
    }

    /// Whether no call repeats an identical one beyond what the workflow asks for (a redundant
    /// call, the flow engine's to judge).
    fn no_redundant_repeat(&self, sc: &ScenarioPlan, t: &Transcript) -> bool {
        // Identical calls counted by hashing their values (`==` on a hash match): linear in
        // the calls, where comparing each with every earlier one was quadratic.
        let mut count: flow::SameMap = flow::SameMap::default();
        count.reserve(t.calls().count());
        for (_, call) in t.calls() {
            *count.entry(flow::Same::new(call)).or_default() += 1;
        }
        let asked = &self.asked[sc.asked.range()];
        count.iter().filter(|(_, n)| **n > 1).all(|(same, &n)| {
            // As many identical calls as the workflow has identical steps are fine (a count
            // by `==`, which may only over-count the engine's).
            let key = flow::call_key(same.tool, same.identity);
            asked.iter().any(|(k, times)| *k == key && n <= *times)
        })
    }

    /// [`FastPath::turn`] where only the pairing of each call with the step at its place
    /// counts: `(Perfect, true)` when every such pair is perfect, else imperfect.
    /// A call `own` marks as its step's own (empty: none known) is as perfect as that call.
    /// (Not inlined: the verdict's walk, [`FastPath::turn`], is the hot one.)
    #[inline(never)]
    fn turn_in_order(
        &self,
        linter: &Linter,
        turn: &TurnPlan,
        calls: &[Call],
        own: &[bool],
    ) -> (Outcome, bool) {
        let steps = &self.steps[turn.steps.range()];
        let own = |j: usize| own.get(j).copied().unwrap_or(false);
        let perfect = calls.len() == steps.len()
            && steps.iter().zip(calls).enumerate().all(|(j, (s, c))| {
                if own(j) {
                    s.own_perfect()
                } else {
                    self.edge(linter, s, c) == Edge::Perfect
                }
            });
        if perfect {
            (Outcome::Perfect, true)
        } else {
            (Outcome::Imperfect, false)
        }
    }

    /// The turn's outcome, and whether a perfect one pairs each call with the step at its
    /// position.
    fn turn(&self, linter: &Linter, turn: &TurnPlan, calls: &[Call]) -> (Outcome, bool) {
        let steps = &self.steps[turn.steps.range()];
        let n = steps.len();
        // A step left undone, an extra call or calls where none were asked for: TC < 1.
        if calls.len() != n {
            return (Outcome::Imperfect, false);
        }
        let outcome = match n {
            0 => return (Outcome::Perfect, true),
            1 => match self.edge(linter, &steps[0], &calls[0]) {
                Edge::Perfect => return (Outcome::Perfect, true),
                Edge::Unverified => Outcome::Unknown,
                Edge::Mismatch => Outcome::Imperfect,
                Edge::Rejected => Outcome::Rejected,
            },
            _ => {
                // Calls in the workflow's order, the common case, need n edges. Else the
                // edges up to the first call off its step are known (perfect, then that
                // call's), and the bitsets (`turn_apart`) do not ask them again.
                let (off, off_edge) = match steps
                    .iter()
                    .zip(calls)
                    .map(|(s, c)| self.edge(linter, s, c))
                    .enumerate()
                    .find(|(_, e)| *e != Edge::Perfect)
                {
                    None => return (Outcome::Perfect, true),
                    Some(first) => first,
                };
                self.turn_apart(linter, steps, calls, off, off_edge)
            }
        };
        (outcome, false)
    }

    /// [`FastPath::turn`]'s outcome for `n` ≥ 2 calls not each perfect for the step at its
    /// place: rejected at an edge that says so, perfect when some pairing of calls with steps
    /// is, unknown when one is at least unverified, else imperfect (at once for a call no
    /// step accepts). Calls `..off` are known perfect for the steps at their places, and call
    /// `off`'s edge with its step is `off_edge`: neither is asked again.
    fn turn_apart(
        &self,
        linter: &Linter,
        steps: &[Step],
        calls: &[Call],
        off: usize,
        off_edge: Edge,
    ) -> Outcome {
        let n = steps.len();
        // Bitsets below; a turn this long is left to the engines.
        if n > 32 {
            return Outcome::Unknown;
        }
        let mut perfect = [0u32; 32];
        let mut accepted = [0u32; 32];
        for (j, call) in calls.iter().enumerate() {
            let mut any = false;
            for (i, step) in steps.iter().enumerate() {
                let edge = match (i == j, j.cmp(&off)) {
                    (true, Ordering::Less) => Edge::Perfect,
                    (true, Ordering::Equal) => off_edge,
                    _ => self.edge(linter, step, call),
                };
                if edge == Edge::Rejected {
                    return Outcome::Rejected;
                }
                if edge == Edge::Perfect {
                    perfect[i] |= 1 << j;
                }
                if edge != Edge::Mismatch {
                    accepted[i] |= 1 << j;
                    any = true;
                }
            }
            // A call no step accepts: no pairing can take it.
            if !any {
                return Outcome::Imperfect;
            }
        }
        if pairs_all(&perfect[..n]) {
            Outcome::Perfect
        } else if pairs_all(&accepted[..n]) {
            Outcome::Unknown
        } else {
            Outcome::Imperfect
        }
    }

    /// How call `a` stands against a step. Arguments and parameters are both sorted by name,
    /// so one merge walks them.
    fn edge(&self, linter: &Linter, step: &Step, a: &Call) -> Edge {
        if !same_bytes(self.bytes(step.tool), a.tool.as_bytes()) {
            return Edge::Mismatch;
        }
        if step.own_perfect() && same_bytes(self.bytes(step.own), a.identity()) {
            return Edge::Perfect;
        }
        let mut edge = if step.verifiable {
            Edge::Perfect
        } else {
            Edge::Unverified
        };
        let mut args = a.args().iter();
        let mut next = args.next();
        for (pi, p) in self.params[step.params.range()].iter().enumerate() {
            let name = self.bytes(p.name);
            let got = loop {
                let Some((k, v)) = next else {
                    break None;
                };
                match order(k.as_bytes(), name) {
                    Ordering::Equal => {
                        next = args.next();
                        break Some(v);
                    }
                    // An argument the step neither compares nor requires.
                    Ordering::Less => {
                        if step.rejects_unknown {
                            return Edge::Rejected;
                        }
                        edge = Edge::Unverified;
                        next = args.next();
                    }
                    Ordering::Greater => break None,
                }
            };
            let Some(v) = got else {
                if p.absent_mismatch {
                    return Edge::Mismatch;
                }
                if p.required {
                    edge = Edge::Unverified;
                }
                continue;
            };
            // A clean value is one the oracle accepts here.
            if self.clean[p.clean.range()].iter().any(|c| self.is(*c, v)) {
                continue;
            }
            if p.compared {
                let accepted = match (p.matcher, v) {
                    (
                        Matcher::Options { strict_integer },
                        Value::Number(_) | Value::String(_) | Value::Bool(_) | Value::Null,
                    ) => self.clean[p.accepted.range()]
                        .iter()
                        .any(|c| self.same_plain(*c, v, strict_integer)),
                    _ => {
                        let rule = &self.rules[step.params.start as usize + pi];
                        // A `from_output` value, grounded or not, is the flow engine's to judge.
                        matches!(rule.policy, Some(MatchPolicy::FromOutput))
                            || rule.matches(linter, a, Some(v))
                    }
                };
                if !accepted {
                    return Edge::Mismatch;
                }
            }
            edge = Edge::Unverified;
        }
        if next.is_some() {
            if step.rejects_unknown {
                return Edge::Rejected;
            }
            edge = Edge::Unverified;
        }
        edge
    }
}

/// Which pairings of a turn's calls with its steps [`FastPath::outcome_with`] looks at.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Pairs<'a> {
    /// Any: a turn whose calls are perfect for its steps in another order is perfect too.
    Any,
    /// Each call with the step at its place only: a call off its step's place is imperfect.
    /// Per call of the transcript, whether it is the own call of the step at its place
    /// (empty where not known).
    AtPlace(&'a [bool]),
}

/// A scenario id's hash: the length, then each 8-byte word (the last one overlapping the one
/// before, a short id zero-padded), each folded in with a full 64×64-bit multiply whose high
/// and low halves are xored (so a byte anywhere in a word moves every bit). An id of a few
/// words costs a few multiplies.
fn id_hash(id: &[u8]) -> u64 {
    const K: u64 = 0x9e37_79b9_7f4a_7c15;
    let mix = |h: u64, w: u64| {
        let r = u128::from(h ^ w) * u128::from(K);
        (r as u64) ^ ((r >> 64) as u64)
    };
    let word = |i: usize| u64::from_le_bytes(id[i..i + 8].try_into().expect("8 bytes"));
    let n = id.len();
    let mut h = mix(0, n as u64);
    if n < 8 {
        let mut w = [0u8; 8];
        w[..n].copy_from_slice(id);
        return mix(h, u64::from_le_bytes(w));
    }
    let mut i = 0;
    while i + 8 < n {
        h = mix(h, word(i));
        i += 8;
    }
    mix(h, word(n - 8))
}

/// A hash's home slot: its high bits folded in (a multiplicative hash's low bits are its
/// weakest).
fn slot_of(hash: u64, mask: usize) -> usize {
    ((hash ^ (hash >> 29) ^ (hash >> 47)) as usize) & mask
}

/// The part of a hash a slot keeps: its high half, a cheap first test before ids are compared.
fn tag_of(hash: u64) -> u32 {
    (hash >> 32) as u32
}

/// Whether every step (row) can be paired with its own call (bit) along the given edges:
/// augmenting paths (Kuhn), n ≤ 32.
fn pairs_all(edges: &[u32]) -> bool {
    fn augment(i: usize, edges: &[u32], seen: &mut u32, call_step: &mut [u8; 32]) -> bool {
        let mut free = edges[i] & !*seen;
        while free != 0 {
            let j = free.trailing_zeros() as usize;
            free &= free - 1;
            *seen |= 1 << j;
            if call_step[j] == u8::MAX || augment(usize::from(call_step[j]), edges, seen, call_step)
            {
                call_step[j] = i as u8;
                return true;
            }
        }
        false
    }
    let mut call_step = [u8::MAX; 32];
    (0..edges.len()).all(|i| augment(i, edges, &mut 0, &mut call_step))
}

impl Rule {
    fn matches(&self, linter: &Linter, a: &Call, got: Option<&Value>) -> bool {
        oracle::value_matches(
            Some(linter).filter(|_| self.selector),
            a,
            &self.name,
            got,
            self.policy.as_ref(),
            self.want.as_ref(),
            // Not reached: a present `from_output` value is decided by the caller.
            &|_| false,
        )
    }

    /// The values the oracle accepts, when a plain comparison against each tells (see
    /// [`Matcher::Options`]), and whether an integer option refuses a float.
    fn options(&self) -> Option<(&[Value], bool)> {
        if self.selector {
            return None;
        }
        match &self.policy {
            None | Some(MatchPolicy::Exact) => Some((self.want.as_slice(), false)),
            Some(MatchPolicy::AnyOf(any)) if any.normalize.is_none() => {
                Some((&any.options, any.strict_integer))
            }
            _ => None,
        }
    }

    /// The values the oracle accepts for this parameter that lint clean with the rest of the
    /// step's call: the step's own value and `any_of`'s options.
    fn clean_values(&self, o: &OracleCall, linter: &Linter, compared: bool) -> Vec<Value> {
        let mut candidates: Vec<&Value> = self.want.iter().collect();
        if let Some(MatchPolicy::AnyOf(any)) = &self.policy {
            candidates.extend(&any.options);
        }
        let mut out: Vec<Value> = Vec::new();
        for c in candidates {
            if out.contains(c)
                || matches!(
                    self.policy,
                    Some(MatchPolicy::FromOutput | MatchPolicy::Absent)
                )
                || (compared && !self.matches(linter, &o.call, Some(c)))
            {
                continue;
            }
            let mut args = o.call.args().clone();
            args.insert(self.name.clone(), c.clone());
            if linter.lint(&o.call.tool, &Value::Object(args)).is_empty() {
                out.push(c.clone());
            }
        }
        out
    }
}

/// Whether a schema's top level lets the linter check each argument on its own: only
/// `properties`, `required`, `additionalProperties` (a boolean) and annotations, so a call is
/// valid exactly when its required parameters are present and each value is valid in place.
fn independent_params(schema: &Value) -> bool {
    let Some(top) = schema.as_object() else {
        return false;
    };
    top.iter().all(|(k, v)| match k.as_str() {
        "type" => v == "object",
        "properties" => v.is_object(),
        "required" => v.is_array(),
        "additionalProperties" => v.is_boolean(),
        "$schema" | "$id" | "$defs" | "definitions" | "$comment" | "title" | "description"
        | "examples" | "default" => true,
        _ => false,
    })
}

#[cfg(test)]
mod tests {
    use serde_json::{Value, json};

    use super::{Matcher, pairs_all};
    use crate::check::Suite;
    use crate::harness::Transcript;
    use crate::source::SourceFile;

    /// A suite of one tool spec (`tools.json`) and one harness (`h.yaml`, which names it),
    /// loaded from a folder of its own.
    fn suite(tools: &str, harness: &str) -> Suite {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join("tools.json"), tools).unwrap();
        let path = dir.path().join("h.yaml");
        std::fs::write(&path, harness).unwrap();
        Suite::load(&path).unwrap()
    }

    /// The exclusive turns found through the index of shared values are the ones every pair
    /// of steps says: on every shipped suite's turns and on workflows whose steps share values
    /// (repeated steps, a step that must have nothing, values shared at one parameter and not
    /// another, numbers that are the same value written apart).
    #[test]
    fn exclusive_turns_are_those_every_pair_of_steps_says() {
        let pairwise = |fast: &super::FastPath, turn: &super::TurnPlan| {
            let steps = &fast.steps[turn.steps.range()];
            (0..steps.len()).all(|i| (0..i).all(|j| !fast.not_apart(&steps[i], &steps[j])))
        };
        const TOOLS: &str = r#"[{"name": "t", "inputSchema": {"type": "object", "required": ["a"], "properties": {"a": {}, "b": {}}}},
                {"name": "u", "inputSchema": {"type": "object", "properties": {"a": {}, "b": {}}}}]"#;
        let workflows = [
            "[{tool: t, arguments: {a: 1}}, {tool: t, arguments: {a: 2}}, {tool: t, arguments: {a: 3}}]",
            "[{tool: t, arguments: {a: 1, b: x}}, {tool: t, arguments: {a: 2, b: x}}, {tool: t, arguments: {a: 1, b: y}}]",
            "[{tool: t, arguments: {a: 1}}, {tool: t, arguments: {a: 1}}]",
            "[{tool: t, arguments: {a: 0.0}}, {tool: t, arguments: {a: -0.0}}]",
            "[{tool: u, arguments: {}}, {tool: u, arguments: {}}]",
            "[{tool: u, arguments: {a: 1}}, {tool: u, arguments: {}}]",
            "[{tool: u, arguments: {a: 1}}, {tool: u, arguments: {a: 2}}, {tool: u, arguments: {a: 1, b: 2}}]",
            "[{tool: u, arguments: {a: [1]}}, {tool: u, arguments: {a: [2]}}, {tool: u, arguments: {a: [1]}}]",
            "[{tool: t, arguments: {a: 1}}, {tool: u, arguments: {a: 1}}]",
            "[{tool: t, arguments: {a: 1}, match: {a: ignore}}, {tool: t, arguments: {a: 2}}]",
            "[{tool: t, arguments: {a: {x: 1, y: [2]}}}, {tool: t, arguments: {a: {y: [2], x: 1}}}]",
            "[{tool: t, arguments: {a: [1]}}, {tool: t, arguments: {a: [1.0]}}, {tool: t, arguments: {a: {x: 1}}}]",
        ];
        let mut text = String::from("suite: h\ntools: [tools.json]\nscenarios:\n");
        for (k, w) in workflows.iter().enumerate() {
            text.push_str(&format!(
                "  - id: s{k}\n    turns:\n      - prompt: p\n        workflow: {w}\n"
            ));
        }
        let made = suite(TOOLS, &text);
        let fast = made.fast();
        let indexed = |t: &super::TurnPlan| fast.exclusive_by_index(&fast.steps[t.steps.range()]);
        let found: Vec<bool> = fast.turns.iter().map(indexed).collect();
        // Repeated steps, the same number written 0.0 and -0.0, two steps that must have
        // nothing, one array twice, one object with its keys in two orders: one call can be
        // perfect for both. (`[1]` and `[1.0]` are two values, as JSON compares them.)
        assert_eq!(
            found,
            [
                true, true, false, false, false, true, true, false, true, true, false, true
            ]
        );
        let mut suites = vec![made];
        let shipped = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("harnesses");
        for entry in std::fs::read_dir(shipped).unwrap() {
            let path = entry.unwrap().path();
            if path.extension().is_some_and(|e| e == "yaml")
                && let Ok(suite) = Suite::load(&path)
            {
                suites.push(suite);
            }
        }
        let (mut exclusive, mut not) = (0, 0);
        for suite in &suites {
            let fast = suite.fast();
            for turn in &fast.turns {
                let want = pairwise(fast, turn);
                assert_eq!(fast.exclusive(turn.steps), want);
                assert_eq!(
                    fast.exclusive_by_index(&fast.steps[turn.steps.range()]),
                    want
                );
                if turn.steps.len >= 2 {
                    *(if want { &mut exclusive } else { &mut not }) += 1;
                }
            }
        }
        assert!(
            exclusive >= 20 && not >= 4,
            "{exclusive} exclusive, {not} not"
        );
    }

    /// A turn whose calls leave their steps' order is decided by every pairing of calls with
    /// steps, the edges the in-order pass already asked taken as it found them: calls
    /// perfect in another order are perfect, a call no step accepts is imperfect, wherever
    /// the first call off its step stands; and each outcome is the engines' verdict.
    #[test]
    fn a_turn_off_its_order_is_decided_by_every_pairing() {
        use super::Outcome::{Imperfect, Perfect, Rejected};
        let suite = suite(
            r#"[{"name": "t", "inputSchema": {"type": "object", "properties": {"a": {}}, "additionalProperties": false}}]"#,
            "suite: h\ntools: [tools.json]\nthresholds: {pass: 1}\nscenarios:\n  - id: s\n    turns:\n      - prompt: p\n        workflow:\n          - {tool: t, arguments: {a: 1}}\n          - {tool: t, arguments: {a: 2}}\n          - {tool: t, arguments: {a: 3}}\n",
        );
        let cases: [(&str, super::Outcome); 8] = [
            ("[1, 2, 3]", Perfect),
            // The first call off its step second, third, first.
            ("[1, 3, 2]", Perfect),
            ("[2, 1, 3]", Perfect),
            ("[3, 1, 2]", Perfect),
            ("[1, 2, 4]", Imperfect),
            ("[1, 4, 3]", Imperfect),
            ("[4, 2, 3]", Imperfect),
            ("[1, 3, b]", Rejected),
        ];
        for (calls, want) in cases {
            let calls: Vec<String> = calls
                .trim_matches(['[', ']'])
                .split(", ")
                .map(|a| match a {
                    "b" => "  - {tool: t, arguments: {a: 2, b: 1}}\n".to_owned(),
                    a => format!("  - {{tool: t, arguments: {{a: {a}}}}}\n"),
                })
                .collect();
            let text = format!("scenario: s\ncalls:\n{}", calls.concat());
            let t =
                Transcript::from_source(SourceFile::from_text("t.yaml", text), "t".into()).unwrap();
            assert_eq!(
                suite.fast().outcome(&suite.linter, 0, &t),
                want,
                "{calls:?}"
            );
            let engines = crate::check::evaluate_with_engines(&suite, &t).unwrap();
            let quick = crate::check::quick_verdict(&suite, &t).unwrap();
            assert_eq!(quick, Some(engines.verdict), "{calls:?}");
        }
    }

    /// Every `Matcher::Options` parameter judges a grid of scalars as the oracle's rule does.
    #[test]
    fn options_match_as_the_oracle_does() {
        let suite = suite(
            r#"[{"name": "t", "inputSchema": {"type": "object", "properties": {"x": {}, "y": {}, "z": {}}}}]"#,
            "suite: h\ntools: [tools.json]\nscenarios:\n  - id: a\n    turns:\n      - prompt: p\n        workflow:\n          - tool: t\n            arguments: {x: 3, y: 2.5, z: a}\n            match:\n              x: {any_of: [3, -4, 2.5, 1e300, a, true, null, [1]]}\n              y: {any_of: [3, -4, 2.5, x], strict_integer: true}\n",
        );
        let fast = suite.fast();
        let t = Transcript::from_source(
            SourceFile::from_text(
                "t.yaml",
                "scenario: a\ncalls:\n  - {tool: t, arguments: {}}\n",
            ),
            "t".into(),
        )
        .unwrap();
        let call = &t.turns[0].calls[0];
        let grid = [
            json!(3),
            json!(3.0),
            json!(-4),
            json!(-4.0),
            json!(2.5),
            json!(1e300),
            json!(4),
            json!(u64::MAX),
            json!(i64::MIN),
            json!("a"),
            json!("A"),
            json!("3"),
            json!(true),
            json!(false),
            Value::Null,
        ];
        let mut options = 0;
        for (i, p) in fast.params.iter().enumerate() {
            let Matcher::Options { strict_integer } = p.matcher else {
                continue;
            };
            options += 1;
            let rule = &fast.rules[i];
            for v in &grid {
                let compiled = fast.clean[p.accepted.range()]
                    .iter()
                    .any(|c| fast.same_plain(*c, v, strict_integer));
                assert_eq!(
                    compiled,
                    rule.matches(&suite.linter, call, Some(v)),
                    "{} = {v}",
                    rule.name
                );
            }
        }
        // x, y and the exact z.
        assert_eq!(options, 3);
    }

    /// Ids that differ only in a few digits or characters (at either end, in the middle, in
    /// length) spread over the table as random ones would: linear probing stays short.
    #[test]
    fn id_hashes_spread_over_the_table() {
        let families: [&dyn Fn(usize) -> String; 5] = [
            &|i| format!("parallel_multiple_{i}"),
            &|i| format!("{i}"),
            &|i| format!("{i:06}-veo-scenario"),
            &|i| format!("veo-{i:04}-x"),
            &|i| format!("a-rather-long-scenario-id-{i:05}-about-a-cafe-at-dusk"),
        ];
        for family in families {
            let n = 4096;
            let mask = (2 * n) - 1;
            let mut taken = vec![false; 2 * n];
            let mut probes = 0;
            let mut longest = 0;
            for i in 0..n {
                let mut at = super::slot_of(super::id_hash(family(i).as_bytes()), mask);
                let mut len = 1;
                while taken[at] {
                    at = (at + 1) & mask;
                    len += 1;
                }
                taken[at] = true;
                probes += len;
                longest = longest.max(len);
            }
            // Random keys at half load: 1.5 probes on average, rarely more than ~30.
            let mean = probes as f64 / n as f64;
            assert!(
                mean < 2.0 && longest < 64,
                "{}: mean {mean}, longest {longest}",
                family(0)
            );
        }
    }

    #[test]
    fn pairing_needs_augmenting_paths() {
        // Step 0 takes call 0 or 1, step 1 only call 0: greedy fails, Kuhn re-pairs.
        assert!(pairs_all(&[0b11, 0b01]));
        // Two steps that both take only call 0.
        assert!(!pairs_all(&[0b01, 0b01, 0b110]));
        assert!(pairs_all(&[]));
        assert!(!pairs_all(&[0]));
    }
}
