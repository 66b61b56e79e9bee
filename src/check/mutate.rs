//! Mutation testing of a suite (`agent-seer mutate`): does the suite catch the faults it is
//! meant to catch? From every correct transcript (and from a scenario's own oracle workflow
//! when no correct transcript answers it), each operator derives runs that are wrong under the
//! oracle by construction — a wrong tool, a misspelt or missing parameter, a wrong type, a
//! pinned value changed, a reference replaced by a near miss or a made-up value, a consumer
//! moved before its producer, two strict steps swapped, a required step dropped, a
//! non-idempotent call repeated, an unrequested call that changes state, an UPDATE or DELETE
//! without its WHERE, a model the matrix does not know — and the engines grade each. A mutant
//! the suite passes **survives**, and says why: the match policy that accepted it, the order
//! constraint the workflow lacks, the effect no matrix declares.
//!
//! Deterministic and without an LLM. The main entry is [`mutate_suite`], giving a
//! [`SuiteMutation`]; each mutant is a transcript document ([`Mutant::doc`]) that can be
//! written for review. Cost: a few mutants per call of each source run, each one evaluation.

use serde::Serialize;
use serde_json::{Map, Value};

use super::evaluate::{Verdict, evaluate};
use super::suite::Suite;
use crate::finding::Severity;
use crate::harness::{
    CallDoc, Expect, LabelDoc, MatchPolicy, OracleCall, Scenario, Transcript, TranscriptBody,
    TranscriptDoc, TranscriptTurnDoc,
};
use crate::source::SourceFile;

/// What a mutant does to a correct run.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Operator {
    /// Another tool of the server (the nearest name) in a call's place.
    WrongTool,
    /// A parameter's name misspelt.
    MisspeltParam,
    /// A required parameter left out (at the top, or inside an array's first object).
    MissingRequired,
    /// A value of another JSON type.
    WrongType,
    /// A value the oracle pins (compared exactly) changed.
    PinnedValue,
    /// A reference replaced by a near miss of it that nobody produced.
    NearMissReference,
    /// A reference replaced by a made-up value of its shape.
    HallucinatedReference,
    /// A call that consumes another's output moved before it.
    ConsumerFirst,
    /// Two calls of an `order: strict` turn swapped.
    StrictSwap,
    /// A call of a required step dropped.
    DropStep,
    /// A call that is not idempotent made twice.
    RepeatCall,
    /// A call no step asks for that changes state, added.
    UnrequestedEffect,
    /// An UPDATE or DELETE whose WHERE is gone.
    SqlDropWhere,
    /// A model the capability matrix does not know.
    UnknownModel,
}

impl Operator {
    /// The operator's name, as reports and `--write` file names show it.
    pub fn as_str(self) -> &'static str {
        match self {
            Operator::WrongTool => "wrong_tool",
            Operator::MisspeltParam => "misspelt_param",
            Operator::MissingRequired => "missing_required",
            Operator::WrongType => "wrong_type",
            Operator::PinnedValue => "pinned_value",
            Operator::NearMissReference => "near_miss_reference",
            Operator::HallucinatedReference => "hallucinated_reference",
            Operator::ConsumerFirst => "consumer_first",
            Operator::StrictSwap => "strict_swap",
            Operator::DropStep => "drop_step",
            Operator::RepeatCall => "repeat_call",
            Operator::UnrequestedEffect => "unrequested_effect",
            Operator::SqlDropWhere => "sql_drop_where",
            Operator::UnknownModel => "unknown_model",
        }
    }
}

/// One mutant: a broken copy of a correct run.
#[derive(Clone, Debug, Serialize)]
pub struct Mutant {
    /// What it does.
    pub operator: Operator,
    /// The run it was made from: a transcript's id, or `oracle:<scenario>`.
    pub source: String,
    /// The scenario it answers.
    pub scenario: String,
    /// What changed, in words (`call 2 (read_query): /query: …`).
    pub what: String,
    /// The transcript, labelled `expect: fail`, for `--write`.
    #[serde(skip)]
    pub doc: TranscriptDoc,
    /// Where the change is: the call (index across the run) and the pointer into its
    /// arguments, when it is one value.
    #[serde(skip)]
    at: Option<(usize, String)>,
}

/// How the suite graded one mutant.
#[derive(Clone, Debug, Serialize)]
pub struct Outcome {
    /// The mutant.
    #[serde(flatten)]
    pub mutant: Mutant,
    /// Whether the suite failed it.
    pub killed: bool,
    /// Its TC, when it answers a scenario.
    pub tc: Option<f64>,
    /// The codes of its error findings.
    pub errors: Vec<String>,
    /// For a survivor, why it survived.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub why: Option<String>,
    /// The engines' evaluation of the mutant, labelled broken (what the discrimination gate
    /// of a suite without hand-written broken runs is built from); `None` when it does not load.
    #[serde(skip)]
    pub evaluation: Option<crate::check::Evaluation>,
}

/// A suite's mutation result.
#[derive(Clone, Debug, Serialize)]
pub struct SuiteMutation {
    /// The suite.
    pub suite: String,
    /// Every mutant, in the order made.
    pub outcomes: Vec<Outcome>,
    /// Runs that could not be mutated (a source that does not load or does not pass), why.
    pub skipped: Vec<Skipped>,
}

/// A run `mutate` could not make mutants of, and why; written `source: why` (as the reports
/// show it).
#[derive(Clone, Debug, Serialize)]
#[serde(into = "String")]
pub struct Skipped {
    /// The run: a transcript's id, or `oracle:<scenario>`.
    pub source: String,
    /// Why.
    pub why: String,
}

impl std::fmt::Display for Skipped {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}: {}", self.source, self.why)
    }
}

impl From<Skipped> for String {
    fn from(s: Skipped) -> Self {
        s.to_string()
    }
}

impl SuiteMutation {
    /// Killed mutants over all mutants; `None` without any.
    pub fn score(&self) -> Option<f64> {
        let n = self.outcomes.len();
        (n > 0).then(|| self.killed() as f64 / n as f64)
    }

    /// How many mutants the suite killed.
    pub fn killed(&self) -> usize {
        self.outcomes.iter().filter(|o| o.killed).count()
    }

    /// Per operator: (operator, killed, total), in operator order.
    pub fn by_operator(&self) -> Vec<(Operator, usize, usize)> {
        let mut ops: Vec<Operator> = self.outcomes.iter().map(|o| o.mutant.operator).collect();
        ops.sort();
        ops.dedup();
        ops.into_iter()
            .map(|op| {
                let of: Vec<&Outcome> = self
                    .outcomes
                    .iter()
                    .filter(|o| o.mutant.operator == op)
                    .collect();
                (op, of.iter().filter(|o| o.killed).count(), of.len())
            })
            .collect()
    }
}

/// Mutates every correct run of `suite`: the transcripts labelled `expect: pass` among
/// `transcripts`, and the oracle of each scenario no such transcript answers.
pub fn mutate_suite(suite: &Suite, transcripts: &[Transcript]) -> SuiteMutation {
    let mut outcomes = Vec::new();
    let mut mutator = Mutator::new(suite);
    for t in transcripts {
        mutator.run(t, &mut |o| outcomes.push(o));
    }
    let skipped = mutator.finish(&mut |o| outcomes.push(o));
    SuiteMutation {
        suite: suite.harness.suite.clone(),
        outcomes,
        skipped,
    }
}

/// [`mutate_suite`] one run at a time, for a suite too large to hold: each transcript is
/// mutated as it is given ([`Mutator::run`]), each outcome handed on as soon as it is graded,
/// and [`Mutator::finish`] mutates the oracles of the scenarios no correct transcript answered.
/// The outcomes come in [`mutate_suite`]'s order.
pub struct Mutator<'a> {
    suite: &'a Suite,
    answered: std::collections::BTreeSet<String>,
    skipped: Vec<Skipped>,
}

impl<'a> Mutator<'a> {
    /// A mutator of `suite`'s runs.
    pub fn new(suite: &'a Suite) -> Self {
        Self {
            suite,
            answered: Default::default(),
            skipped: Vec::new(),
        }
    }

    /// Mutates `t` if it is a correct run of a scenario; `each` is given every outcome.
    pub fn run(&mut self, t: &Transcript, each: &mut dyn FnMut(Outcome)) {
        let Some((sc, turns)) = source_of(t) else {
            return;
        };
        self.answered.insert(sc.to_owned());
        self.source(t.id.clone(), sc, &turns, each);
    }

    /// What `t`'s mutants depend on, as one string (its scenario, and its calls with their
    /// arguments and answers), when [`Mutator::run`] would mutate it: two runs with one key
    /// make the same mutants, graded alike, but for the run each names as its source.
    pub fn key(t: &Transcript) -> Option<String> {
        source_of(t).and_then(|source| serde_json::to_string(&source).ok())
    }

    /// Mutates the oracle of every scenario no correct transcript answered, and returns the
    /// runs that could not be mutated.
    pub fn finish(mut self, each: &mut dyn FnMut(Outcome)) -> Vec<Skipped> {
        for sc in &self.suite.harness.scenarios {
            if self.answered.contains(&sc.id) {
                continue;
            }
            self.source(format!("oracle:{}", sc.id), &sc.id, &oracle_run(sc), each);
        }
        self.skipped
    }

    fn source(
        &mut self,
        source: String,
        scenario: &str,
        turns: &[Vec<CallDoc>],
        each: &mut dyn FnMut(Outcome),
    ) {
        let suite = self.suite;
        let Some(sc) = suite.harness.scenario(scenario) else {
            return;
        };
        let base = doc(scenario, turns, None);
        match grade(suite, &base) {
            Some((Verdict::Pass, ..)) => {}
            _ => {
                self.skipped.push(Skipped {
                    source,
                    why: "the run does not pass, so its mutants would prove nothing".into(),
                });
                return;
            }
        }
        let cx = Cx {
            suite,
            sc,
            source: &source,
            turns,
            refs: references(suite, &base),
        };
        for m in cx.mutants() {
            let evaluation = load(&m.doc).and_then(|mut t| {
                // Named for the discrimination table: its run and what was done to it.
                t.id = format!("{}~{}", m.source, m.operator.as_str());
                evaluate(suite, &t).ok()
            });
            // Two strict steps swapped into an order the workflow also accepts (an `any_of`
            // listing both orders) are no fault: the calls then do a form of the workflow
            // exactly, in order, under its policies.
            if m.operator == Operator::StrictSwap
                && evaluation.as_ref().is_some_and(|e| {
                    e.trajectory
                        .as_ref()
                        .is_some_and(|t| t.policy.exact_match == 1.0)
                })
            {
                continue;
            }
            let (verdict, tc, errors) = evaluation
                .as_ref()
                .map_or((Verdict::Fail, None, Vec::new()), summary);
            let killed = verdict == Verdict::Fail;
            let why = (!killed).then(|| cx.why_survived(&m, tc));
            each(Outcome {
                mutant: m,
                killed,
                tc,
                errors,
                why,
                evaluation,
            });
        }
    }
}

/// A correct run's scenario and calls, as its mutants are made from them; `None` for another
/// run.
fn source_of(t: &Transcript) -> Option<(&str, Vec<Vec<CallDoc>>)> {
    if t.label.expect != Some(Expect::Pass) {
        return None;
    }
    let sc = t.scenario.as_deref()?;
    let turns = t
        .turns
        .iter()
        .map(|tt| tt.calls.iter().map(call_doc).collect())
        .collect();
    Some((sc, turns))
}

/// A run as the transcript document of one scenario, labelled `expect: fail` with a note when
/// `note` is given.
fn doc(scenario: &str, turns: &[Vec<CallDoc>], note: Option<String>) -> TranscriptDoc {
    TranscriptDoc {
        scenario: Some(scenario.to_owned()),
        prompt: None,
        agent: Some("agent-seer mutate".to_owned()),
        label: if note.is_some() {
            LabelDoc {
                expect: Some(Expect::Fail),
                ..LabelDoc::default()
            }
        } else {
            LabelDoc::default()
        },
        note,
        body: TranscriptBody::Turns {
            turns: turns
                .iter()
                .map(|calls| TranscriptTurnDoc {
                    prompt: None,
                    calls: calls.clone(),
                    reply: None,
                })
                .collect(),
        },
    }
}

fn call_doc(c: &crate::harness::Call) -> CallDoc {
    CallDoc {
        tool: c.tool.clone(),
        arguments: c.args().clone(),
        id: None,
        output: c.output.clone(),
    }
}

/// A scenario's oracle as a run: each turn's first step list, each step once, its mock output
/// as the answer.
fn oracle_run(sc: &Scenario) -> Vec<Vec<CallDoc>> {
    sc.turns
        .iter()
        .map(|t| {
            let first = t.variants().into_iter().next().unwrap_or_default();
            first
                .into_iter()
                .map(|i| &t.workflow[i])
                .filter(|o| !o.optional)
                .map(|o| CallDoc {
                    tool: o.call.tool.clone(),
                    arguments: o.call.args().clone(),
                    id: None,
                    output: o.mock_output.clone(),
                })
                .collect()
        })
        .collect()
}

/// The run a document describes, as its YAML file reads (`mutate --write` writes that file;
/// a test holds both alike).
fn load(d: &TranscriptDoc) -> Option<Transcript> {
    d.to_transcript(SourceFile::from_text("mutant.yaml", ""), "mutant".into())
}

/// The verdict, TC and error codes of a run; `None` when it does not load.
fn grade(suite: &Suite, d: &TranscriptDoc) -> Option<(Verdict, Option<f64>, Vec<String>)> {
    let t = load(d)?;
    let e = evaluate(suite, &t).ok()?;
    Some(summary(&e))
}

/// An evaluation's verdict, TC and error codes (sorted, once each).
fn summary(e: &crate::check::Evaluation) -> (Verdict, Option<f64>, Vec<String>) {
    let mut errors: Vec<String> = e
        .findings
        .iter()
        .filter(|f| f.severity == Severity::Error)
        .map(|f| f.code.as_str().to_owned())
        .collect();
    errors.sort();
    errors.dedup();
    (e.verdict, e.score.as_ref().map(|s| s.tc), errors)
}

/// Per call of the run (index across turns): its references, as (pointer, value, producer).
type Refs = Vec<Vec<(String, String, Option<usize>)>>;

fn references(suite: &Suite, d: &TranscriptDoc) -> Refs {
    let Some(t) = load(d) else {
        return Vec::new();
    };
    let sc = t
        .scenario
        .as_deref()
        .and_then(|s| suite.harness.scenario(s));
    let n = t.calls().count();
    let flow = crate::flow::analyze(&t, sc, &suite.linter, &vec![false; n]);
    flow.calls
        .iter()
        .map(|c| {
            c.references
                .iter()
                .map(|r| {
                    let from = match r.origin {
                        Some(crate::flow::Origin::Call(p)) => Some(p),
                        _ => None,
                    };
                    (r.pointer.clone(), r.value.clone(), from)
                })
                .collect()
        })
        .collect()
}

/// A statement's WHERE clause, to the end.
static WHERE: std::sync::LazyLock<regex::Regex> =
    std::sync::LazyLock::new(|| regex::Regex::new(r"(?is)\s+where\s.*$").expect("valid regex"));

/// What the operators work on: one correct run of one scenario.
struct Cx<'a> {
    suite: &'a Suite,
    sc: &'a Scenario,
    source: &'a str,
    turns: &'a [Vec<CallDoc>],
    refs: Refs,
}

/// Mutants made per operator and run at most: enough to find a weakness, bounded cost.
const PER_OPERATOR: usize = 3;

/// The mutants of a run, at most [`PER_OPERATOR`] of each operator, the first found.
#[derive(Default)]
struct Made {
    out: Vec<Mutant>,
    count: std::collections::BTreeMap<Operator, usize>,
}

impl Made {
    /// Adds the mutant `make` builds when `operator` has room left: a mutant copies the whole
    /// run, so one with no room is never built (a long run offers one of each operator per
    /// call: building them all cost its length squared).
    fn push(&mut self, operator: Operator, make: impl FnOnce(Operator) -> Mutant) {
        let n = self.count.entry(operator).or_default();
        if *n < PER_OPERATOR {
            *n += 1;
            self.out.push(make(operator));
        }
    }
}

impl Cx<'_> {
    /// Every call as (turn, index in turn, index across the run).
    fn calls(&self) -> Vec<(usize, usize, usize)> {
        let mut out = Vec::new();
        let mut k = 0;
        for (ti, calls) in self.turns.iter().enumerate() {
            for j in 0..calls.len() {
                out.push((ti, j, k));
                k += 1;
            }
        }
        out
    }

    /// Per call (across the run): whether another call of its turn is the same call (its tool
    /// and arguments), and whether it is the only call of its tool in its turn. Counted once
    /// per turn: asked of the whole turn per call, a long run cost its length squared.
    fn repeats(&self) -> (Vec<bool>, Vec<bool>) {
        use crate::hash::{call_hash, map_hash};
        let (mut repeat, mut alone) = (Vec::new(), Vec::new());
        for calls in self.turns {
            let tools = crate::hash::NameCounts::of(calls.iter().map(|c| c.tool.as_str()));
            // The hash two identical calls share.
            let keys: Vec<u64> = calls
                .iter()
                .map(|c| call_hash(&c.tool, map_hash(&c.arguments)))
                .collect();
            let mut same: std::collections::HashMap<u64, smallvec::SmallVec<[usize; 2]>, _> =
                std::collections::HashMap::with_hasher(crate::hash::Hashed::default());
            for (j, &key) in keys.iter().enumerate() {
                same.entry(key).or_default().push(j);
            }
            for (j, c) in calls.iter().enumerate() {
                repeat.push(same[&keys[j]].iter().any(|&i| {
                    i != j && calls[i].tool == c.tool && calls[i].arguments == c.arguments
                }));
                alone.push(tools.count(&c.tool) == 1);
            }
        }
        (repeat, alone)
    }

    /// The workflow step each call does: the first step of its turn, not yet taken, that
    /// accepts its tool; with its index in the turn's workflow.
    fn steps(&self) -> Vec<Option<(usize, &OracleCall)>> {
        let mut out = Vec::new();
        for (ti, calls) in self.turns.iter().enumerate() {
            let wf = self.sc.turns.get(ti).map_or(&[][..], |t| &t.workflow[..]);
            let mut used = vec![false; wf.len()];
            // The steps before `open` are all taken: a run in order looks at a step or two
            // per call, not at the whole workflow.
            let mut open = 0;
            for c in calls {
                let j = (open..wf.len()).find(|&j| !used[j] && wf[j].accepts_tool(&c.tool));
                if let Some(j) = j {
                    used[j] = true;
                }
                while open < wf.len() && used[open] {
                    open += 1;
                }
                out.push(j.map(|j| (j, &wf[j])));
            }
        }
        out
    }

    fn make(
        &self,
        operator: Operator,
        what: String,
        at: Option<(usize, String)>,
        turns: Vec<Vec<CallDoc>>,
    ) -> Mutant {
        let note = format!("mutant of {} ({}): {what}", self.source, operator.as_str());
        Mutant {
            operator,
            source: self.source.to_owned(),
            scenario: self.sc.id.clone(),
            doc: doc(&self.sc.id, &turns, Some(note)),
            what,
            at,
        }
    }

    /// The run with call `(ti, j)` changed by `f`.
    fn with_call(&self, ti: usize, j: usize, f: impl FnOnce(&mut CallDoc)) -> Vec<Vec<CallDoc>> {
        let mut turns = self.turns.to_vec();
        f(&mut turns[ti][j]);
        // A changed call gets what the mock would answer, not the recorded answer to the
        // original.
        turns[ti][j].output = None;
        turns
    }

    fn mutants(&self) -> Vec<Mutant> {
        let calls = self.calls();
        let steps = self.steps();
        let linter = &self.suite.linter;
        let mut made = Made::default();
        let (repeat, alone) = self.repeats();
        // How many calls do each step (by its turn and its index in the turn's workflow).
        let mut done_by = std::collections::HashMap::<(usize, usize), usize>::new();
        for (&(ti, ..), step) in calls.iter().zip(&steps) {
            if let Some((w, _)) = step {
                *done_by.entry((ti, *w)).or_default() += 1;
            }
        }
        let refused = |c: &CallDoc| {
            c.output
                .as_ref()
                .is_some_and(|o| linter.refuses(&c.tool, o))
        };
        for &(ti, j, k) in &calls {
            let call = &self.turns[ti][j];
            let (step, sole) = match steps[k] {
                Some((w, s)) => (Some(s), done_by[&(ti, w)] == 1),
                None => (None, false),
            };
            // A refused call did nothing, and a repeat of an earlier call is no step: changing
            // either breaks nothing the oracle asks for.
            if refused(call) || repeat[k] {
                continue;
            }
            // Which step a call does is certain when its tool appears once in the turn; a call
            // of an optional step may be replaced or left out.
            let unambiguous = alone[k];
            let required = step.is_some_and(|s| !s.optional);
            let label = format!("call {} (`{}`)", k + 1, call.tool);
            // wrong tool: the nearest other tool the step does not accept
            let other = crate::finding::nearest(
                &call.tool,
                linter
                    .tools()
                    .map(|t| t.name.as_str())
                    .filter(|t| *t != call.tool && step.is_none_or(|s| !s.accepts_tool(t))),
            );
            if let Some(other) = other.filter(|_| required) {
                let other = other.to_owned();
                made.push(Operator::WrongTool, |op| {
                    self.make(
                        op,
                        format!("{label}: `{other}` in its place"),
                        None,
                        self.with_call(ti, j, |c| c.tool = other.clone()),
                    )
                });
            }
            let spec = linter.tool(&call.tool);
            // misspelt parameter
            if let Some(key) = call.arguments.keys().find(|k| k.chars().count() >= 3) {
                let bad: String = key
                    .chars()
                    .enumerate()
                    .filter(|(i, _)| *i != 1)
                    .map(|(_, c)| c)
                    .collect();
                if spec.is_none_or(|s| !s.has_param(&bad)) {
                    let key = key.clone();
                    made.push(Operator::MisspeltParam, |op| {
                        self.make(
                            op,
                            format!("{label}: `{key}` spelt `{bad}`"),
                            None,
                            self.with_call(ti, j, |c| {
                                if let Some(v) = c.arguments.remove(&key) {
                                    c.arguments.insert(bad.clone(), v);
                                }
                            }),
                        )
                    });
                }
            }
            // missing required, at the top and inside an array's first object
            if let Some(s) = spec {
                if let Some(r) = s.required().find(|r| call.arguments.contains_key(*r)) {
                    let r = r.to_owned();
                    made.push(Operator::MissingRequired, |op| {
                        self.make(
                            op,
                            format!("{label}: `{r}` left out"),
                            None,
                            self.with_call(ti, j, |c| {
                                c.arguments.remove(&r);
                            }),
                        )
                    });
                }
                if let Some((param, field)) = nested_required(s, &call.arguments) {
                    made.push(Operator::MissingRequired, |op| {
                        self.make(
                            op,
                            format!("{label}: `/{param}/0/{field}` left out"),
                            None,
                            self.with_call(ti, j, |c| {
                                if let Some(Value::Object(first)) =
                                    c.arguments.get_mut(&param).and_then(|v| v.get_mut(0))
                                {
                                    first.remove(&field);
                                }
                            }),
                        )
                    });
                }
            }
            // wrong type
            if let Some((key, v)) = call.arguments.iter().next() {
                let wrong = match v {
                    Value::String(_) => Some(Value::from(42)),
                    Value::Number(n) => Some(Value::from(n.to_string())),
                    Value::Bool(b) => Some(Value::from(b.to_string())),
                    Value::Array(_) | Value::Object(_) => Some(Value::from("x")),
                    Value::Null => None,
                };
                if let Some(wrong) = wrong {
                    let key = key.clone();
                    made.push(Operator::WrongType, |op| {
                        self.make(
                            op,
                            format!("{label}: `{key}` as {wrong}"),
                            Some((k, format!("/{key}"))),
                            self.with_call(ti, j, |c| {
                                c.arguments.insert(key.clone(), wrong);
                            }),
                        )
                    });
                }
            }
            // a pinned value changed
            if let Some(step) = step.filter(|_| unambiguous) {
                let pinned = call.arguments.iter().find(|(key, v)| {
                    matches!(
                        step.match_policies.get(*key),
                        None | Some(MatchPolicy::Exact | MatchPolicy::Path(_))
                    ) && step.call.args().get(*key) == Some(v)
                        && (v.is_string() || v.is_number())
                        && !linter.is_selector(&call.tool, key)
                });
                if let Some((key, v)) = pinned {
                    let changed = changed_value(v);
                    let key = key.clone();
                    made.push(Operator::PinnedValue, |op| {
                        self.make(
                            op,
                            format!("{label}: `{key}` {v} changed to {changed}"),
                            Some((k, format!("/{key}"))),
                            self.with_call(ti, j, |c| {
                                c.arguments.insert(key.clone(), changed);
                            }),
                        )
                    });
                }
            }
            // references: a near miss and a made-up value
            for (pointer, value, _) in self.refs.get(k).into_iter().flatten() {
                for (op, new) in [
                    (Operator::NearMissReference, near_miss(value)),
                    (Operator::HallucinatedReference, made_up(value)),
                ] {
                    let p = pointer.clone();
                    let nv = new.clone();
                    made.push(op, |op| {
                        self.make(
                            op,
                            format!("{label}: `{pointer}` {value:?} became {new:?}"),
                            Some((k, pointer.clone())),
                            self.with_call(ti, j, move |c| {
                                set_at(&mut c.arguments, &p, &nv);
                            }),
                        )
                    });
                }
            }
            // SQL: a table near-missed, an UPDATE or DELETE without its WHERE
            for (key, v) in &call.arguments {
                let Some(text) = v.as_str().filter(|t| crate::sql::looks_like_sql(t)) else {
                    continue;
                };
                if let Some(names) = crate::sql::names(text, None)
                    && let Some(table) = names.tables.first()
                {
                    let near = near_miss(table);
                    let re = regex::Regex::new(&format!(r"(?i)\b{}\b", regex::escape(table)))
                        .expect("an escaped name is a regex");
                    let new = re.replace_all(text, near.as_str()).into_owned();
                    let key = key.clone();
                    made.push(Operator::NearMissReference, |op| {
                        self.make(
                            op,
                            format!("{label}: the table `{table}` in `{key}` became `{near}`"),
                            Some((k, format!("/{key}"))),
                            self.with_call(ti, j, |c| {
                                c.arguments.insert(key.clone(), Value::from(new));
                            }),
                        )
                    });
                }
                let lower = text.trim_start().to_ascii_lowercase();
                if (lower.starts_with("update") || lower.starts_with("delete"))
                    && WHERE.is_match(text)
                {
                    let new = WHERE.replace(text, "").into_owned();
                    let key = key.clone();
                    made.push(Operator::SqlDropWhere, |op| {
                        self.make(
                            op,
                            format!("{label}: `{key}` without its WHERE: {new:?}"),
                            Some((k, format!("/{key}"))),
                            self.with_call(ti, j, |c| {
                                c.arguments.insert(key.clone(), Value::from(new));
                            }),
                        )
                    });
                }
            }
            // a model the matrix does not know
            if let Some((m, f)) = linter.facts(&call.tool)
                && let Some(fam) = f.family.map(|i| &m.families[i])
            {
                let sel = fam.selector.clone();
                made.push(Operator::UnknownModel, |op| {
                    self.make(
                        op,
                        format!("{label}: `{sel}` names a model the matrix does not know"),
                        Some((k, format!("/{sel}"))),
                        self.with_call(ti, j, |c| {
                            c.arguments
                                .insert(sel.clone(), Value::from("model-nobody-serves-001"));
                        }),
                    )
                });
            }
            // drop a required step's only call
            if let Some(step) = step
                && unambiguous
                && !step.optional
                && step.min <= 1
                && sole
            {
                made.push(Operator::DropStep, |op| {
                    let mut turns = self.turns.to_vec();
                    turns[ti].remove(j);
                    self.make(op, format!("{label} left out"), None, turns)
                });
            }
            // repeat a call that is not idempotent
            let e = call_effect(linter, call);
            if !e.read_only && !e.idempotent && step.is_some_and(|s| s.max == Some(1)) {
                made.push(Operator::RepeatCall, |op| {
                    let mut turns = self.turns.to_vec();
                    let again = turns[ti][j].clone();
                    turns[ti].insert(j + 1, again);
                    self.make(
                        op,
                        format!("{label} made twice"),
                        Some((k, String::new())),
                        turns,
                    )
                });
            }
            // a consumer before its producer (within a turn)
            for (_, _, from) in self.refs.get(k).into_iter().flatten() {
                let Some(p) = *from else { continue };
                let Some(&(pt, pj, _)) = calls.get(p) else {
                    continue;
                };
                if pt == ti && pj < j {
                    made.push(Operator::ConsumerFirst, |op| {
                        let mut turns = self.turns.to_vec();
                        let moved = turns[ti].remove(j);
                        turns[ti].insert(pj, moved);
                        self.make(
                            op,
                            format!(
                                "{label} moved before call {} that produces its input",
                                p + 1
                            ),
                            Some((k, String::new())),
                            turns,
                        )
                    });
                    break;
                }
            }
        }
        // two steps of a strict turn swapped
        for (ti, calls) in self.turns.iter().enumerate() {
            let strict = self.sc.turns.get(ti).is_some_and(|t| t.order_strict);
            if strict
                && calls.len() >= 2
                && !refused(&calls[0])
                && !refused(&calls[1])
                && (calls[0].tool != calls[1].tool || calls[0].arguments != calls[1].arguments)
            {
                made.push(Operator::StrictSwap, |op| {
                    let mut turns = self.turns.to_vec();
                    turns[ti].swap(0, 1);
                    self.make(
                        op,
                        format!("turn {}: its first two calls swapped", ti + 1),
                        Some((0, String::new())),
                        turns,
                    )
                });
            }
        }
        // an unrequested call that changes state: a step of another scenario whose tool no
        // step of this one calls
        let here: Vec<&str> = self
            .sc
            .turns
            .iter()
            .flat_map(|t| &t.workflow)
            .flat_map(|o| o.tools())
            .collect();
        let elsewhere = self
            .suite
            .harness
            .scenarios
            .iter()
            .flat_map(|s| s.turns.iter().flat_map(|t| &t.workflow))
            .find(|o| {
                !here.contains(&o.call.tool.as_str())
                    && !linter.effect(&o.call.tool, o.call.args()).read_only
            });
        if let Some(o) = elsewhere
            && let Some(last) = self.turns.len().checked_sub(1)
        {
            made.push(Operator::UnrequestedEffect, |op| {
                let mut turns = self.turns.to_vec();
                turns[last].push(CallDoc {
                    tool: o.call.tool.clone(),
                    arguments: o.call.args().clone(),
                    id: None,
                    output: o.mock_output.clone(),
                });
                self.make(
                    op,
                    format!(
                        "`{}` added at the end, though no step asks for it",
                        o.call.tool
                    ),
                    None,
                    turns,
                )
            });
        }
        made.out
    }

    /// Why a mutant survived, concretely.
    fn why_survived(&self, m: &Mutant, tc: Option<f64>) -> String {
        let steps = self.steps();
        let step_at = |k: usize| steps.get(k).copied().flatten().map(|(_, s)| s);
        let tc = tc.map_or("-".to_owned(), |t| format!("{t:.3}"));
        match (m.operator, &m.at) {
            (
                Operator::PinnedValue
                | Operator::NearMissReference
                | Operator::HallucinatedReference
                | Operator::WrongType
                | Operator::SqlDropWhere,
                Some((k, pointer)),
            ) => {
                let policy = step_at(*k)
                    .and_then(|s| crate::score::oracle::policy_at(s, pointer))
                    .map(policy_name);
                let sql = m.operator == Operator::SqlDropWhere;
                match policy {
                    Some(p) if sql => format!(
                        "{p} on `{pointer}` accepts it: the statement is not compared (`sql` would compare it) (TC {tc})"
                    ),
                    Some(p) => format!(
                        "{p} on `{pointer}` accepts it, and no reference position covers the value (TC {tc})"
                    ),
                    None if m.operator == Operator::NearMissReference
                        || m.operator == Operator::HallucinatedReference =>
                    {
                        format!(
                            "no step pins `{pointer}` and no reference position covers it: declare it in the matrix's `inputs` (TC {tc})"
                        )
                    }
                    None => format!("the step does not compare `{pointer}` (TC {tc})"),
                }
            }
            (Operator::ConsumerFirst | Operator::StrictSwap, _) => format!(
                "the steps have no order constraint: no `order: strict`, and no reference the flow engine checks links them (TC {tc})"
            ),
            (Operator::RepeatCall, _) => format!(
                "nothing marks the tool non-idempotent (its annotations or the matrix's `effects:`), so a repeat is no error (TC {tc})"
            ),
            (Operator::UnrequestedEffect, _) => format!(
                "no effect marks the added tool as changing state enough to fail, or the workflow allows it (TC {tc})"
            ),
            (Operator::DropStep, _) => {
                format!("the dropped step is optional or repeated (TC {tc})")
            }
            (Operator::UnknownModel, _) => format!(
                "the matrix's family lets unknown models through (`unknown: pass_through`) (TC {tc})"
            ),
            _ => format!(
                "no engine found an error and the TC {tc} is at or above the pass threshold"
            ),
        }
    }
}

/// A match policy as a survivor's reason names it.
fn policy_name(p: &MatchPolicy) -> String {
    match p {
        MatchPolicy::Exact => "`exact`".into(),
        MatchPolicy::Ignore => "`ignore`".into(),
        MatchPolicy::FromOutput => "`from_output`".into(),
        MatchPolicy::Semantic => "`semantic`".into(),
        MatchPolicy::Regex(re, None) => format!("the regex `{}`", re.as_str()),
        MatchPolicy::Regex(re, Some(not)) => {
            format!("the regex `{}` (and not `{}`)", re.as_str(), not.as_str())
        }
        MatchPolicy::AnyOf(_) => "`any_of`".into(),
        MatchPolicy::Tolerance(t) => format!("`tolerance: {t}`"),
        MatchPolicy::Absent => "`absent`".into(),
        MatchPolicy::Unordered => "`unordered`".into(),
        MatchPolicy::Sql(_) => "`sql`".into(),
        MatchPolicy::Path(None) => "`path`".into(),
        MatchPolicy::Path(Some(base)) => format!("`{{path: {base}}}`"),
    }
}

fn call_effect(linter: &crate::lint::Linter, c: &CallDoc) -> crate::spec::Effect {
    linter.effect(&c.tool, &c.arguments)
}

/// A required field of the first object of an array argument, when the schema names one.
fn nested_required(
    s: &crate::spec::ToolSpec,
    args: &Map<String, Value>,
) -> Option<(String, String)> {
    let props = s.properties()?;
    for (param, v) in args {
        let Some(Value::Object(first)) = v.as_array().and_then(|a| a.first()) else {
            continue;
        };
        let required = props
            .get(param)?
            .pointer("/items/required")
            .and_then(Value::as_array);
        if let Some(field) = required
            .into_iter()
            .flatten()
            .filter_map(Value::as_str)
            .find(|f| first.contains_key(*f))
        {
            return Some((param.clone(), field.to_owned()));
        }
    }
    None
}

/// A value the oracle pins, changed: a string with `-x` added, a number plus one.
fn changed_value(v: &Value) -> Value {
    match v {
        Value::String(s) => Value::from(format!("{s}-x")),
        Value::Number(n) => match n.as_i64() {
            Some(i) => Value::from(i + 1),
            None => Value::from(n.as_f64().unwrap_or(0.0) + 1.0),
        },
        other => other.clone(),
    }
}

/// A near miss of a reference nobody produced: a digit one up, or a letter doubled before the
/// extension (`notes.txt` → `notess.txt`, `Charles Babbage` → `Charles Babbagee`), a
/// directory's trailing `/` kept after it.
fn near_miss(value: &str) -> String {
    // A directory's trailing `/` is no place for a typo: doubled, it names the same path.
    let bare = value.trim_end_matches('/');
    if bare.len() < value.len() && !bare.is_empty() {
        return near_miss(bare) + &value[bare.len()..];
    }
    if let Some(last) = value.chars().last()
        && let Some(d) = last.to_digit(10)
    {
        let mut s: String = value[..value.len() - last.len_utf8()].to_owned();
        s.push(char::from_digit((d + 1) % 10, 10).unwrap_or('0'));
        return s;
    }
    let (stem, ext) = match value.rfind('.') {
        Some(i) if i > 0 && !value[i..].contains('/') => value.split_at(i),
        _ => (value, ""),
    };
    match stem.chars().last() {
        Some(c) => format!("{stem}{c}{ext}"),
        None => format!("{value}x"),
    }
}

/// A made-up value of a reference's shape: a URI or path keeps its folder, a number stays a
/// number.
fn made_up(value: &str) -> String {
    if value.bytes().all(|b| b.is_ascii_digit()) && !value.is_empty() {
        return "987654".to_owned();
    }
    // A directory named with a trailing `/` keeps it: made up in its parent.
    let bare = value.trim_end_matches('/');
    if bare.len() < value.len() && bare.contains('/') {
        return made_up(bare) + &value[bare.len()..];
    }
    match value.rfind('/') {
        Some(i) if i + 1 < value.len() => {
            let ext = value[i + 1..]
                .rfind('.')
                .map_or("", |d| &value[i + 1 + d..]);
            format!("{}/made-up-by-the-agent{ext}", &value[..i])
        }
        _ => "Made-up Name".to_owned(),
    }
}

/// Sets the value at a JSON pointer into the arguments (a reference's, so it exists).
fn set_at(args: &mut Map<String, Value>, pointer: &str, to: &str) {
    let mut whole = Value::Object(std::mem::take(args));
    if let Some(v) = whole.pointer_mut(pointer) {
        *v = if v.is_number() {
            to.parse::<i64>().map_or(Value::from(to), Value::from)
        } else {
            Value::from(to)
        };
    }
    if let Value::Object(m) = whole {
        *args = m;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn near_misses_and_made_up_values_keep_their_shape() {
        assert_eq!(near_miss("notes.txt"), "notess.txt");
        assert_eq!(near_miss("Charles Babbage"), "Charles Babbagee");
        assert_eq!(near_miss("1003"), "1004");
        assert_eq!(near_miss("/srv/a.md"), "/srv/aa.md");
        assert_eq!(near_miss("/srv/project/notes/"), "/srv/project/notess/");
        assert_eq!(
            made_up("gs://b/out/x.png"),
            "gs://b/out/made-up-by-the-agent.png"
        );
        assert_eq!(made_up("1003"), "987654");
        assert_eq!(
            made_up("/srv/project/notes/"),
            "/srv/project/made-up-by-the-agent/"
        );
        assert_eq!(made_up("Charles Babbage"), "Made-up Name");
    }
}
