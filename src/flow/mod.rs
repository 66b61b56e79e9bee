//! The flow engine: what per-call checks cannot see, across the calls of one transcript.
//!
//! It tracks **artifacts** — URIs and media paths the user's prompts mention and the tools'
//! outputs produce (text, `resource_link`s, `structuredContent`) — and checks every argument
//! that references one (the capability matrix's `inputs`, or by its name when no matrix
//! describes the tool):
//!
//! - `flow.unknown_reference`: nobody produced it (seed 000's NP1, a hallucinated URI);
//! - `flow.use_before_produce`: only a later call produces it (NP3, a mux before its inputs);
//! - `flow.failed_dependency`: the call that produced it failed, so it does not exist;
//! - `flow.redundant_call`: a call repeats an earlier one, or makes a soundtrack for a video that
//!   already carries audio (the matrix's `produces` facts, seed 000 §6.1) when nobody asked.
//!
//! A call **fails** when the linter found an error in it, its output is an MCP error
//! (`isError`), or the flow engine did; a failed call produces nothing. A call without a
//! recorded output gets the scenario's mock output for that step, as the mock server would
//! answer. The main entry is [`analyze`], giving a [`Flow`].

use std::collections::{HashMap, HashSet};

use serde_json::Value;

use crate::finding::{Code, Finding, Severity};
use crate::harness::{Call, OracleCall, Scenario, Transcript};
use crate::hash::name_hash;
use crate::lint::Linter;
use crate::source::json::child;
use crate::spec::capability::ArtifactKind;

mod text;

/// Where an artifact came from.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Origin {
    /// The user's prompt of this turn.
    Prompt(usize),
    /// The output of this call (index across the transcript).
    Call(usize),
}

/// One argument value that references an artifact.
#[derive(Clone, Debug, PartialEq)]
pub struct Reference {
    /// JSON pointer of the value in the call's arguments.
    pub pointer: String,
    /// The referenced artifact, as written in the call.
    pub value: String,
    /// Where the artifact came from, when it existed at call time.
    pub origin: Option<Origin>,
}

/// What the flow engine established about one call.
#[derive(Clone, Debug, Default)]
pub struct CallFlow {
    /// Whether the call failed (an error finding, or a tool output with `isError`), so it produced nothing.
    pub failed: bool,
    /// Whether the server refused it: its output (recorded, or the step's mock) is an MCP error.
    pub refused: bool,
    /// The call's argument values that reference artifacts.
    pub references: Vec<Reference>,
}

/// The flow engine's view of a transcript: it borrows the transcript's and the scenario's
/// prompts and outputs, and reads them only for the questions asked (issue 31: a run whose
/// calls reference nothing never has its outputs indexed).
#[derive(Clone, Debug, Default)]
pub struct Flow<'a> {
    /// The flow findings (unknown references, use before produce, redundancy).
    pub findings: Vec<Finding>,
    /// Per call, in transcript order.
    pub calls: Vec<CallFlow>,
    ground: Ground<'a>,
}

impl Flow<'_> {
    /// Whether an earlier successful call (before call `index`) produced `value`: an artifact
    /// it made, or a name, id or number its output gave (a path composed from one included).
    pub fn produced_before(&self, value: &str, index: usize) -> bool {
        let artifact = self
            .ground
            .artifact(value, |o| matches!(o, Origin::Call(c) if *c < index));
        artifact.is_some()
            || self
                .ground
                .origin_among(value, |o, arguments| {
                    matches!(o, Origin::Call(c) if *c < index) && !arguments
                })
                .is_some()
    }

    /// Whether `value` existed when call `index` (in turn `turn`) ran: a prompt up to that turn
    /// mentioned it or an earlier successful call produced it.
    pub fn grounded_at(&self, value: &str, index: usize, turn: usize) -> bool {
        self.ground
            .artifact(value, |o| match *o {
                Origin::Prompt(t) => t <= turn,
                Origin::Call(c) => c < index,
            })
            .is_some()
    }
}

/// Analyses a transcript. `lint_failed[i]` says whether call `i` has an error finding.
pub fn analyze<'a>(
    t: &'a Transcript,
    scenario: Option<&'a Scenario>,
    linter: &Linter,
    lint_failed: &[bool],
) -> Flow<'a> {
    let calls: Vec<(usize, &Call)> = t.calls().collect();
    analyze_with(t, &calls, scenario, linter, lint_failed, &[], false)
}

/// What the flow engine works out of a call from its tool and arguments alone, worked out
/// once for a workflow step's own call (`score::own`, a later layer, keeps one per step).
#[derive(Debug)]
pub(crate) struct OwnFlow {
    /// The values checked as references, and where ([`references_in`]).
    references: Vec<(String, String)>,
    /// What identical calls are told by ([`Same::hash_of`]).
    same: u64,
}

impl OwnFlow {
    /// What a call identical to this one hashes to ([`Same::hash_of`]).
    pub(crate) fn same(&self) -> u64 {
        self.same
    }

    /// Step `o`'s own call's, in scenario `sc`.
    pub(crate) fn of(o: &OracleCall, sc: &Scenario, linter: &Linter) -> Self {
        let (tool, arguments) = (&o.call.tool, o.call.arguments());
        let inferred = inferred_references(sc).get(tool);
        Self {
            references: references_in(linter, tool, arguments, inferred),
            same: Same::hash_of(&o.call),
        }
    }
}

/// [`analyze`] of `t`'s `calls` (as [`Transcript::calls`] lists them, collected once by the
/// caller), taking what depends only on a call's tool and arguments from `own`: per call (in
/// transcript order; none past its end), its step's own call's, where it is one. `apart`: no
/// two of the calls are the same call, known without comparing them (`score::own`, from
/// their steps): then none repeats another, and no index of them is kept.
pub(crate) fn analyze_with<'a>(
    t: &'a Transcript,
    calls: &[(usize, &'a Call)],
    scenario: Option<&'a Scenario>,
    linter: &Linter,
    lint_failed: &[bool],
    own: &[Option<&OwnFlow>],
    apart: bool,
) -> Flow<'a> {
    let outputs = outputs(t, scenario);
    let mut walk = Walk::new(t, scenario, linter, calls, &outputs, own, apart);
    for i in 0..calls.len() {
        walk.call(i, lint_failed.get(i).copied().unwrap_or(false));
    }
    let mut flow = walk.flow;
    redundant_soundtracks(&mut flow, calls, t, scenario, linter);
    flow.findings
        .sort_by_key(|f| (f.call, f.severity != Severity::Error));
    flow
}

/// The flow engine's walk over a transcript's calls, in order: what the prompts and the
/// calls so far ground, and the flow established so far. One [`Walk::call`] per call.
struct Walk<'w, 'a> {
    t: &'a Transcript,
    scenario: Option<&'a Scenario>,
    linter: &'w Linter,
    calls: &'w [(usize, &'a Call)],
    outputs: &'w [Option<&'a Value>],
    inferred: Option<&'a HashMap<String, Vec<String>>>,
    /// The flow so far; its ground is what grounds a reference so far: prompts, the
    /// scenario's artifacts, successful calls' outputs and arguments.
    flow: Flow<'a>,
    /// The turns before this one have had their prompts read (calls come in turn order).
    prompts_read: usize,
    /// Per distinct call: how many times it was made, and the first of them that did not
    /// fail (one map, one lookup per call); none kept where no two calls are alike (`apart`).
    seen: SameMap<'a, (usize, Option<usize>)>,
    /// No two of the calls are the same call ([`analyze_with`]): none repeats another.
    apart: bool,
    /// Repeats the scenario's own workflow asks for (BFCL's "two random numbers") are work,
    /// not waste: how many times each identical call appears there.
    asked: Option<&'a HashMap<Box<[u8]>, usize>>,
    /// Per call, its step's own call's flow, where it is one.
    own: &'w [Option<&'w OwnFlow>],
}

impl<'w, 'a> Walk<'w, 'a> {
    fn new(
        t: &'a Transcript,
        scenario: Option<&'a Scenario>,
        linter: &'w Linter,
        calls: &'w [(usize, &'a Call)],
        outputs: &'w [Option<&'a Value>],
        own: &'w [Option<&'w OwnFlow>],
        apart: bool,
    ) -> Self {
        let mut flow = Flow {
            calls: Vec::with_capacity(calls.len()),
            ..Flow::default()
        };
        // The artifacts, a prompt per turn, an output and arguments per successful call.
        flow.ground.sources = Vec::with_capacity(1 + t.turns.len() + 2 * calls.len());
        // What each call's output offers later calls, whether or not the call succeeded: to
        // tell "nobody made it" from "a later call makes it" and "a failed call made it".
        flow.ground.offered = outputs
            .iter()
            .map(|o| Lazy::new(o.map_or(Raw::Nothing, Raw::Output)))
            .collect();
        if let Some(sc) = scenario {
            flow.ground
                .push(Origin::Prompt(0), Lazy::new(Raw::Artifacts(&sc.artifacts)));
        }
        Self {
            t,
            scenario,
            linter,
            calls,
            outputs,
            inferred: scenario.map(inferred_references),
            flow,
            prompts_read: 0,
            // (A lone call repeats nothing, nor do calls known apart: no map for them.)
            seen: SameMap::with_capacity_and_hasher(
                if calls.len() > 1 && !apart {
                    calls.len()
                } else {
                    0
                },
                Default::default(),
            ),
            apart,
            asked: scenario.map(asked_calls),
            own,
        }
    }

    /// Call `i`: its turn's prompt (the first time), its references, its SQL's names, whether
    /// it repeats an earlier call, and what it produced.
    fn call(&mut self, i: usize, lint_failed: bool) {
        let (turn, call) = self.calls[i];
        self.prompt(turn);
        let mut cf = CallFlow {
            failed: lint_failed,
            ..CallFlow::default()
        };
        if self.outputs[i].is_some_and(|o| self.linter.refuses(&call.tool, o)) {
            cf.failed = true;
            cf.refused = true;
        }
        let own = self.own.get(i).copied().flatten();
        let refs = match own {
            // (Most calls reference nothing: no clone of an empty list.)
            Some(s) if s.references.is_empty() => Vec::new(),
            Some(s) => s.references.clone(),
            None => {
                let inferred = self.inferred.and_then(|m| m.get(&call.tool));
                references(self.linter, call, inferred)
            }
        };
        cf.references.reserve_exact(refs.len());
        for (pointer, value) in refs {
            self.reference(i, pointer, value, &mut cf);
        }
        // The tables and columns its SQL names are references too (issue 29, 5).
        if self.linter.may_take_sql() {
            for (pointer, text, dialect) in sql_arguments(self.linter, call) {
                if let Some(names) = crate::sql::names(text, dialect) {
                    self.sql_ids(i, &pointer, &names, &mut cf);
                    self.sql_names(i, &pointer, &names, &mut cf);
                }
            }
        }
        self.repeat(i, own.map(|s| s.same), &cf);
        if !cf.failed {
            self.produced(i);
        }
        self.flow.calls.push(cf);
    }

    /// The first call of a turn: what its prompt mentions and gives.
    fn prompt(&mut self, turn: usize) {
        if turn < self.prompts_read {
            return;
        }
        self.prompts_read = turn + 1;
        let Some(p) = prompt_of(self.t, self.scenario, turn) else {
            return;
        };
        self.flow
            .ground
            .push(Origin::Prompt(turn), Lazy::new(Raw::Prompt(p)));
    }

    /// Where a referenced value came from, when it existed at call `i` (in `turn`).
    fn origin(&self, i: usize, turn: usize, value: &str) -> Option<Origin> {
        let origin = self.flow.ground.artifact(value, |o| {
            matches!(o, Origin::Prompt(tt) if *tt <= turn) || matches!(o, Origin::Call(c) if *c < i)
        });
        // A name, an id or a path a tool printed (or one composed from a directory and a name
        // it listed) is grounded when a prompt or an earlier successful call gave it; a value
        // the matrix says always exists (git's `.`, `HEAD`) is grounded too.
        origin
            .or_else(|| self.flow.ground.origin_of(value))
            .or_else(|| {
                self.grounded_by_matrix(self.calls[i].1, value)
                    .then_some(Origin::Prompt(0))
            })
    }

    fn grounded_by_matrix(&self, call: &Call, value: &str) -> bool {
        self.linter
            .facts(&call.tool)
            .is_some_and(|(_, f)| f.grounded.iter().any(|re| re.is_match(value)))
    }

    /// One referenced value of call `i`: grounded, or a finding that says why not.
    fn reference(&mut self, i: usize, pointer: String, value: String, cf: &mut CallFlow) {
        let (turn, _) = self.calls[i];
        let origin = self.origin(i, turn, &value);
        if origin.is_none() {
            let mut f = self.ungrounded(i, &pointer, &value);
            f.call = Some(i);
            self.flow.findings.push(f);
            cf.failed = true;
        }
        cf.references.push(Reference {
            pointer,
            value,
            origin,
        });
    }

    /// Why a referenced value of call `i` did not exist: made by a call that failed, made only
    /// later (listed as a whole word or name, or printed inside a longer token, the `18:24` of
    /// a datetime, as grounding accepts it), or by nobody.
    fn ungrounded(&self, i: usize, pointer: &str, value: &str) -> Finding {
        let ground = &self.flow.ground;
        let makes = |p: &usize| {
            let offered = ground.offered(*p);
            offered.produces(value, ground) || offered.gives(value)
        };
        let earlier_failed = (0..i).filter(|&p| self.flow.calls[p].failed).find(makes);
        let later = (i + 1..self.calls.len()).find(makes);
        match (earlier_failed, later) {
            (Some(p), _) => Finding::new(
                Code::FailedDependency,
                pointer,
                format!(
                    "`{value}` comes from call {} (`{}`), which failed, so it does not exist",
                    p + 1,
                    self.calls[p].1.tool
                ),
            ),
            (None, Some(p)) => Finding::new(
                Code::UseBeforeProduce,
                pointer,
                format!(
                    "`{value}` is produced by call {} (`{}`), which runs after this one",
                    p + 1,
                    self.calls[p].1.tool
                ),
            ),
            (None, None) => {
                let mut known = ground.artifact_names();
                known.extend(ground.names().map(str::to_owned));
                // In order (hash sets' names): of two equally near, the same one every run.
                known.sort_unstable();
                known.dedup();
                let hint = crate::finding::did_you_mean(value, known.iter().map(String::as_str));
                Finding::new(
                    Code::UnknownReference,
                    pointer,
                    format!(
                        "`{value}` was produced by no earlier tool output and named in no prompt{hint}"
                    ),
                )
            }
        }
    }

    /// The ids a SQL statement of call `i` quotes, where the workflow shows them to be
    /// references: given by an earlier output or the prompt, or a finding.
    fn sql_ids(&mut self, i: usize, pointer: &str, names: &crate::sql::Names, cf: &mut CallFlow) {
        let call = self.calls[i].1;
        let ids = format!("{SQL_IDS}{}", generalize(pointer));
        if !self
            .inferred
            .and_then(|m| m.get(&call.tool))
            .is_some_and(|ps| ps.contains(&ids))
        {
            return;
        }
        let known = self.scenario.map(sql_known);
        for lit in names.literals.iter().filter(|l| is_id_literal(l)) {
            if self.flow.ground.origin_of(lit).is_some() || known.is_some_and(|k| k.contains(lit)) {
                continue;
            }
            let later = (i + 1..self.calls.len()).find(|&p| self.flow.ground.offered(p).gives(lit));
            let f = match later {
                Some(p) => Finding::new(
                    Code::UseBeforeProduce,
                    pointer,
                    format!(
                        "the id `{lit}` in this SQL is given by call {} (`{}`), which runs after this one",
                        p + 1,
                        self.calls[p].1.tool
                    ),
                ),
                None => Finding::new(
                    Code::UnknownReference,
                    pointer,
                    format!(
                        "the id `{lit}` in this SQL was given by no earlier tool output and in no prompt"
                    ),
                ),
            };
            sql_finding(f, i, cf, &mut self.flow.findings);
        }
    }

    /// The tables and columns a SQL statement of call `i` names: each named by an earlier
    /// output, the prompt or the matrix, or a finding (a misspelling of a name shown, a name
    /// only a later call gives, or one nobody gave).
    fn sql_names(&mut self, i: usize, pointer: &str, names: &crate::sql::Names, cf: &mut CallFlow) {
        let call = self.calls[i].1;
        let known = self.scenario.map(sql_known);
        let kinds = names
            .tables
            .iter()
            .map(|n| ("table", n))
            .chain(names.columns.iter().map(|n| ("column", n)));
        for (kind, name) in kinds {
            let origin = self.flow.ground.sql_origin(name);
            let misspelt = matches!(origin, Some(Origin::Prompt(_)))
                .then(|| self.misspelt(i, name))
                .flatten();
            if (origin.is_some() && misspelt.is_none())
                || self.grounded_by_matrix(call, name)
                || known.is_some_and(|k| k.contains(name))
            {
                continue;
            }
            let f = self.sql_name_finding(i, pointer, kind, name, misspelt);
            sql_finding(f, i, cf, &mut self.flow.findings);
        }
    }

    /// The prompt's words are weak evidence: when an earlier output names a close identifier
    /// and not this one (`products` listed, `product` used; `full_name` described, `name`
    /// used), the agent misspelt what it was shown — or than a name the scenario's own SQL
    /// uses (`books` in the workflow, `book` in the call, the prompt saying "books").
    fn misspelt(&self, i: usize, name: &str) -> Option<String> {
        let shown = (0..i)
            .filter(|&p| !self.flow.calls[p].failed)
            .flat_map(|p| self.flow.ground.offered(p).words().iter())
            .find(|w| near_miss(name, w));
        if let Some(w) = shown {
            return Some(w.clone());
        }
        let all = self.scenario.map(sql_names);
        all.and_then(|a| a.iter().find(|w| near_miss(name, w)).cloned())
            .filter(|_| !all.is_some_and(|a| a.contains(name)))
    }

    fn sql_name_finding(
        &self,
        i: usize,
        pointer: &str,
        kind: &str,
        name: &str,
        misspelt: Option<String>,
    ) -> Finding {
        let later =
            (i + 1..self.calls.len()).find(|&p| self.flow.ground.offered(p).names_sql(name, false));
        match (misspelt, later) {
            (Some(w), _) => Finding::new(
                Code::UnknownReference,
                pointer,
                format!(
                    "the {kind} `{name}` in this SQL is not the `{w}` an earlier tool output named (the prompt's words are no identifier)"
                ),
            ),
            (None, Some(p)) => Finding::new(
                Code::UseBeforeProduce,
                pointer,
                format!(
                    "the {kind} `{name}` in this SQL is named by call {} (`{}`), which runs after this one",
                    p + 1,
                    self.calls[p].1.tool
                ),
            ),
            (None, None) => {
                let mut known: Vec<&str> = (0..i)
                    .filter(|&p| !self.flow.calls[p].failed)
                    .flat_map(|p| {
                        self.flow
                            .ground
                            .offered(p)
                            .words()
                            .iter()
                            .map(String::as_str)
                    })
                    .collect();
                // In order: the words are a hash set's, and of two equally near names the
                // first is named (the same one every run).
                known.sort_unstable();
                known.dedup();
                let hint = crate::finding::did_you_mean(name, known.iter().copied());
                Finding::new(
                    Code::UnknownReference,
                    pointer,
                    format!(
                        "the {kind} `{name}` in this SQL was named by no earlier tool output and in no prompt{hint}"
                    ),
                )
            }
        }
    }

    /// An identical call to an earlier successful one does the same work twice.
    /// `hash`: the call's [`Same::hash_of`], when known.
    fn repeat(&mut self, i: usize, hash: Option<u64>, cf: &CallFlow) {
        // A transcript's only call repeats nothing, and nothing after it can repeat it; nor
        // does a call of a run whose calls are known to be apart.
        if self.calls.len() == 1 || self.apart {
            return;
        }
        let call = self.calls[i].1;
        let key = Same::hashed(call, hash.unwrap_or_else(|| Same::hash_of(call)));
        let seen = self.seen.entry(key).or_default();
        seen.0 += 1;
        let (made, prev) = *seen;
        // How often the workflow asks for it: looked up only for a call made before.
        let asked = self.asked;
        let redundant = prev.filter(|_| {
            let key = call_key(&call.tool, call.identity());
            made > asked.and_then(|a| a.get(&key)).copied().unwrap_or(0)
        });
        if let Some(prev) = redundant {
            let mut f = Finding::new(
                Code::RedundantCall,
                "",
                format!(
                    "repeats call {} (`{}`) with the same arguments",
                    prev + 1,
                    call.tool
                ),
            );
            // Repeating a call that changes nothing, or nothing more the second time, wastes
            // a step; repeating one that does (a second commit, a second charge) is an error.
            if self.linter.effect(&call.tool, call.args()).idempotent {
                f.severity = Severity::Warning;
            }
            f.call = Some(i);
            self.flow.findings.push(f);
        } else if !cf.failed {
            seen.1 = Some(i);
        }
    }

    /// What a successful call `i` produced and gave: its output (and the artifacts in it)
    /// and its arguments, as ground for later calls.
    fn produced(&mut self, i: usize) {
        let ground = &mut self.flow.ground;
        ground.sources.push((Origin::Call(i), Entry::Offered(i)));
        let given = Lazy::new(Raw::Arguments(self.calls[i].1.arguments()));
        ground.push(Origin::Call(i), given);
    }
}

/// What one prompt, output or set of arguments offers later calls: its scalar values (strings,
/// numbers as written; JSON inside text content parsed) and its text, for values printed inside
/// sentences.
#[derive(Clone, Debug, Default)]
pub(crate) struct Source {
    values: HashSet<String>,
    text: String,
    /// The text's words, lower-cased (`full_name` is one word), made on the first
    /// question about a SQL name.
    words: std::cell::OnceCell<HashSet<String>>,
    /// The hashes of the text's runs of letters and digits, made once the text has been
    /// searched [`Source::SEARCHES`] times: a value printed in it has its runs printed whole
    /// (see [`Source::may_print`]), so a value with one the text lacks needs no search. A
    /// source asked about every step of a long workflow (its prompt) is then not read again
    /// for each.
    printed: std::cell::OnceCell<HashSet<u64, crate::hash::Hashed>>,
    searches: std::cell::Cell<u32>,
}

impl Source {
    fn of_output(v: &Value) -> Self {
        let mut s = Self::default();
        s.add_value(v);
        s
    }

    fn of_text(text: &str) -> Self {
        let mut s = Self::default();
        s.add_string(text);
        s
    }

    /// A user's prompt: its text, and the numbers it states in words or in other units
    /// ("one hour" gives 3600 seconds and 60 minutes): a TTL of 3600 is the user's, not an
    /// output's (issue 29, 2).
    fn of_prompt(text: &str) -> Self {
        let mut s = Self::of_text(text);
        s.values.extend(stated_quantities(text));
        s
    }

    fn of_strings(items: &[String]) -> Self {
        let mut s = Self::default();
        for i in items {
            s.values.insert(i.clone());
            s.add_string(i);
        }
        s
    }

    fn add_value(&mut self, v: &Value) {
        match v {
            Value::String(text) => {
                self.values.insert(text.clone());
                self.add_string(text);
            }
            Value::Number(n) => {
                self.values.insert(n.to_string());
            }
            Value::Array(items) => items.iter().for_each(|i| self.add_value(i)),
            Value::Object(m) => m.values().for_each(|i| self.add_value(i)),
            _ => {}
        }
    }

    fn add_string(&mut self, text: &str) {
        self.text.push_str(text);
        self.text.push('\n');
        // Text content that is JSON (server-memory's entities) offers its values too.
        let trimmed = text.trim();
        if (trimmed.starts_with('{') || trimmed.starts_with('['))
            && let Ok(inner) = serde_json::from_str::<Value>(trimmed)
        {
            self.add_value(&inner);
        }
    }

    fn words(&self) -> &HashSet<String> {
        self.words.get_or_init(|| {
            let mut words = HashSet::new();
            let tokens = self
                .text
                .split(|c: char| !(c.is_alphanumeric() || c == '_'))
                .filter(|t| !t.is_empty());
            // A catalogue's field labels (`'name': 'full_name'` in PRAGMA table_info) name no
            // column: such a word counts only where it is not a label.
            for t in tokens {
                let at = t.as_ptr() as usize - self.text.as_ptr() as usize + t.len();
                let rest = self.text[at..].trim_start_matches(['\'', '"']);
                let w = t.to_lowercase();
                if !(rest.starts_with(':') && CATALOGUE_LABELS.contains(&w.as_str())) {
                    words.insert(w);
                }
            }
            words
        })
    }

    /// Whether a table or column name of a SQL statement (lower-cased) is named here: as a
    /// word; in a prompt (`loose`) also in the singular or plural ("each customer" names
    /// `customers`) or word by word (`birth_year` in "year of birth"). A tool's output names
    /// an identifier exactly: `product` is not the `products` a listing gave.
    fn names_sql(&self, name: &str, loose: bool) -> bool {
        let words = self.words();
        if words.contains(name) {
            return true;
        }
        if !loose {
            return false;
        }
        // A plural for a singular and back (`loans` named, `loan` used); a doubled `s` is a
        // typo, not a plural (`loanss` is no `loans`).
        let word = |w: &str| {
            words.contains(w)
                || words.contains(&format!("{w}s"))
                || w.strip_suffix('s')
                    .is_some_and(|s| !s.ends_with('s') && words.contains(s))
        };
        if word(name) {
            return true;
        }
        let parts: Vec<&str> = name.split('_').filter(|p| !p.is_empty()).collect();
        parts.len() >= 2 && parts.iter().all(|p| word(p))
    }

    /// How many searches of the text a source answers by reading it before it indexes its
    /// words ([`Source::may_print`]): most sources are asked a few questions.
    const SEARCHES: u32 = 8;

    /// Whether the text may hold `value` somewhere: `false` when one of the value's runs of
    /// letters and digits that the text must print whole is no word of the text. Printed
    /// anywhere (`whole` false), those are the runs the value itself bounds on both sides (a
    /// run at its start or end may go on in the text); printed as a whole name (`whole`,
    /// [`Source::lists`]), every run. `true` until the text has been searched a few times.
    fn may_print(&self, value: &str, whole: bool) -> bool {
        let Some(printed) = self.printed_words() else {
            return true;
        };
        let starts = value.starts_with(char::is_alphanumeric);
        let ends = value.ends_with(char::is_alphanumeric);
        let mut runs = alnum_words(value).enumerate().peekable();
        while let Some((k, run)) = runs.next() {
            let last = runs.peek().is_none();
            let open = !whole && ((starts && k == 0) || (ends && last));
            if !open && !printed.contains(&name_hash(run)) {
                return false;
            }
        }
        true
    }

    /// The hashes of the text's words ([`Source::printed`]), once it has been searched
    /// [`Source::SEARCHES`] times; `None` before (and the search counted).
    fn printed_words(&self) -> Option<&HashSet<u64, crate::hash::Hashed>> {
        if let Some(printed) = self.printed.get() {
            return Some(printed);
        }
        if self.searches.get() < Self::SEARCHES {
            self.searches.set(self.searches.get() + 1);
            return None;
        }
        Some(
            self.printed
                .get_or_init(|| alnum_words(&self.text).map(name_hash).collect()),
        )
    }

    /// Whether the value is one of this source's, or (four characters or more) printed in it.
    fn gives(&self, value: &str) -> bool {
        self.values.contains(value)
            || (value.len() >= 4 && self.may_print(value, false) && self.text.contains(value))
    }

    /// Whether this source gives `dir` as a directory of its own: [`Source::gives`], but in
    /// text only where no path goes on below it (`/srv/project/` and `/srv/project.` give
    /// `/srv/project`; `/srv/project/notes` gives `/srv/project/notes` alone). A listed name
    /// joins the folder that was named, not a parent of it.
    fn gives_dir(&self, dir: &str) -> bool {
        if self.values.contains(dir) {
            return true;
        }
        if dir.len() < 4 || !self.may_print(dir, false) {
            return false;
        }
        let name = |c: char| c.is_alphanumeric() || matches!(c, '.' | '_' | '-' | '~');
        self.text.match_indices(dir).any(|(at, _)| {
            let mut rest = self.text[at + dir.len()..].trim_start_matches('/').chars();
            match rest.next() {
                // A full stop ends a sentence unless a name goes on after it.
                Some('.') => !rest.next().is_some_and(name),
                Some(c) => !name(c),
                None => true,
            }
        })
    }

    /// Whether `name` is printed here as a whole word of a listing (`[FILE] notes.txt`) or as
    /// the tail of a path (`~/project/docs/a.md` gives `docs/a.md`): not inside a longer name.
    fn lists(&self, name: &str) -> bool {
        if self.values.contains(name) {
            return true;
        }
        if !self.may_print(name, true) {
            return false;
        }
        let part = |c: char| c.is_alphanumeric() || matches!(c, '.' | '_' | '-' | '/' | '~');
        self.text.match_indices(name).any(|(at, _)| {
            let before = self.text[..at].chars().next_back();
            let mut rest = self.text[at + name.len()..].chars();
            // A full stop ends a sentence unless a name goes on after it (`notes.txt`).
            let after = match rest.next() {
                Some('.') => rest.next().filter(|c| c.is_alphanumeric()),
                other => other,
            };
            !before.is_some_and(|c| c != '/' && part(c)) && !after.is_some_and(part)
        })
    }

    /// Whether this source produces `value`: as one of its values or a whole word of its text
    /// (not a piece of a longer path or name), or as the listed name of a path composed from a
    /// directory `ground` gives (see [`Ground::origin_of`]).
    fn produces(&self, value: &str, ground: &Ground<'_>) -> bool {
        self.lists(value)
            || composed(value).any(|(dir, name)| {
                self.lists(name) && (ground.gives_dir(dir) || self.gives_dir(dir))
            })
    }
}

/// Every way to read `value` as a directory (or URL prefix) joined with a name by one `/`:
/// `/a/b/c.txt` → (`/a/b`, `c.txt`), (`/a`, `b/c.txt`). A `file://` URI also reads as its
/// path.
fn composed(value: &str) -> impl Iterator<Item = (&str, &str)> {
    let path = value.strip_prefix("file://").unwrap_or(value);
    path.match_indices('/').filter_map(move |(at, _)| {
        let dir = path[..at].trim_end_matches('/');
        let name = &path[at + 1..];
        (!dir.is_empty() && !name.is_empty() && !dir.ends_with(':')).then_some((dir, name))
    })
}

/// What a source of ground is made from: borrowed from the transcript or the scenario, and
/// read into a [`Source`] only when a question needs it.
#[derive(Clone, Copy, Debug)]
enum Raw<'a> {
    /// A call with no output.
    Nothing,
    /// A tool's output (recorded, or the step's mock).
    Output(&'a Value),
    /// A user's prompt.
    Prompt(&'a str),
    /// The scenario's `artifacts:`.
    Artifacts(&'a [String]),
    /// A successful call's arguments (what it was given).
    Arguments(&'a Value),
}

/// A source of ground, read on the first question about it.
#[derive(Clone, Debug)]
struct Lazy<'a> {
    raw: Raw<'a>,
    read: std::cell::OnceCell<Source>,
}

impl<'a> Lazy<'a> {
    fn new(raw: Raw<'a>) -> Self {
        Self {
            raw,
            read: std::cell::OnceCell::new(),
        }
    }

    fn source(&self) -> &Source {
        self.read.get_or_init(|| match self.raw {
            Raw::Nothing => Source::default(),
            Raw::Output(v) => Source::of_output(v),
            Raw::Prompt(p) => Source::of_prompt(p),
            Raw::Artifacts(a) => Source::of_strings(a),
            Raw::Arguments(v) => Source::of_output(v),
        })
    }

    fn arguments(&self) -> bool {
        matches!(self.raw, Raw::Arguments(_))
    }

    /// The artifacts it mentions, normalised: URIs and media paths in an output or a prompt,
    /// the scenario's artifacts as listed.
    fn artifacts(&self) -> Vec<String> {
        match self.raw {
            Raw::Output(v) => artifacts_of_value(v),
            Raw::Prompt(p) => artifacts_in_text(p),
            Raw::Artifacts(a) => a.iter().map(|a| normalize(a)).collect(),
            Raw::Nothing | Raw::Arguments(_) => Vec::new(),
        }
    }
}

/// A source of ground: a call's output (one of [`Ground::offered`]) or one of its own.
#[derive(Clone, Debug)]
enum Entry<'a> {
    Offered(usize),
    Own(Lazy<'a>),
}

/// Everything that grounds a reference at one point of a transcript, in order, each source
/// read when first asked; and the artifacts they mention, indexed when first asked (each
/// source once, in order).
#[derive(Clone, Debug, Default)]
pub(crate) struct Ground<'a> {
    /// What each call's output offers, whether or not the call succeeded.
    offered: Vec<Lazy<'a>>,
    sources: Vec<(Origin, Entry<'a>)>,
    /// The artifacts of the first `.0` sources, each with the origins that mention it.
    artifacts: std::cell::RefCell<(usize, HashMap<String, Vec<Origin>>)>,
}

impl<'a> Ground<'a> {
    fn push(&mut self, origin: Origin, source: Lazy<'a>) {
        self.sources.push((origin, Entry::Own(source)));
    }

    fn entry<'s>(&'s self, e: &'s Entry<'a>) -> &'s Lazy<'a> {
        match e {
            Entry::Offered(i) => &self.offered[*i],
            Entry::Own(l) => l,
        }
    }

    /// What call `i`'s output offers.
    fn offered(&self, i: usize) -> &Source {
        self.offered[i].source()
    }

    /// The earliest origin `keep` accepts of an artifact `value` names (normalised).
    fn artifact(&self, value: &str, keep: impl Fn(&Origin) -> bool) -> Option<Origin> {
        self.index_artifacts();
        let ix = self.artifacts.borrow();
        ix.1.get(&normalize(value))
            .and_then(|os| os.iter().find(|o| keep(o)).copied())
    }

    /// Every artifact named so far, for a did-you-mean.
    fn artifact_names(&self) -> Vec<String> {
        self.index_artifacts();
        self.artifacts.borrow().1.keys().cloned().collect()
    }

    fn index_artifacts(&self) {
        let mut ix = self.artifacts.borrow_mut();
        while ix.0 < self.sources.len() {
            let (origin, e) = &self.sources[ix.0];
            for a in self.entry(e).artifacts() {
                ix.1.entry(a).or_default().push(*origin);
            }
            ix.0 += 1;
        }
    }

    /// Where `value` comes from: the first source that gives it verbatim (or its one spelling
    /// as a path, [`crate::harness::normal_path`]), or one that lists the name of a path whose
    /// directory some source gives (a listing's `notes.txt` under the `/data` the user named:
    /// path join with one separator; a URL joined with an id alike).
    pub(crate) fn origin_of(&self, value: &str) -> Option<Origin> {
        self.origin_among(value, |_, _| true)
    }

    /// [`Ground::origin_of`] among the sources `keep` accepts (given the origin and whether
    /// the source is a call's arguments).
    fn origin_among(&self, value: &str, keep: impl Fn(&Origin, bool) -> bool) -> Option<Origin> {
        let sources = || {
            self.sources.iter().filter_map(|(o, e)| {
                let l = self.entry(e);
                keep(o, l.arguments()).then(|| (*o, l.source()))
            })
        };
        let direct = |v: &str| sources().find(|(_, s)| s.gives(v)).map(|(o, _)| o);
        if let Some(o) = direct(value) {
            return Some(o);
        }
        // A path has one spelling, as the `path` policy compares it: a trailing `/`, a
        // leading `./` (`./app.py` is the `app.py` a listing or a status gave) and a `/./` or
        // `//` inside change nothing (`/srv/./notes` is the `/srv/notes` the user named).
        let clean = crate::harness::normal_path(value);
        if *clean != *value && clean != "." && clean != "/" {
            return self.origin_among(&clean, keep);
        }
        composed(value).find_map(|(dir, name)| {
            let (o, _) = sources().find(|(_, s)| s.lists(name))?;
            sources().any(|(_, s)| s.gives_dir(dir)).then_some(o)
        })
    }

    /// Whether some source gives `dir` as a directory of its own ([`Source::gives_dir`]).
    fn gives_dir(&self, dir: &str) -> bool {
        self.sources
            .iter()
            .any(|(_, e)| self.entry(e).source().gives_dir(dir))
    }

    /// Where a SQL name comes from: the first source that names it ([`Source::names_sql`]).
    fn sql_origin(&self, name: &str) -> Option<Origin> {
        self.sources
            .iter()
            .find(|(o, e)| {
                self.entry(e)
                    .source()
                    .names_sql(name, matches!(o, Origin::Prompt(_)))
            })
            .map(|(o, _)| *o)
    }

    /// The values tools' outputs gave, for a did-you-mean (what the agent itself passed is no
    /// better a guess than what it passes now).
    fn names(&self) -> impl Iterator<Item = &str> {
        self.sources
            .iter()
            .map(|(o, e)| (o, self.entry(e)))
            .filter(|(o, l)| matches!(o, Origin::Call(_)) && !l.arguments())
            .flat_map(|(_, l)| l.source().values.iter().map(String::as_str))
    }
}

/// Per tool, the argument positions the scenario's own workflow shows to be references: where
/// a step's value (a string of three characters or more, an integer of four digits or more)
/// is one an earlier step's mock output produced (or the listed name of a path under a
/// directory the prompt gives) and the prompts so far do not give, and no step of the tool has
/// a value there the prompt gives or a policy that lets it vary. Array indices become `*`, so
/// every item of the agent's array is checked.
/// Worked out once per scenario and kept with it: every transcript of the scenario asks.
pub(crate) fn inferred_references(sc: &Scenario) -> &HashMap<String, Vec<String>> {
    sc.compiled
        .inferred_references
        .get_or_init(|| infer_references(sc))
}

fn infer_references(sc: &Scenario) -> HashMap<String, Vec<String>> {
    let outputs_anything = sc
        .turns
        .iter()
        .flat_map(|t| &t.workflow)
        .any(|o| o.mock_output.as_ref().is_some_and(|m| !looks_refused(m)));
    if !outputs_anything {
        return HashMap::new();
    }
    // (tool, pattern) → whether every step that has a value there takes it from an output,
    // in the order first seen (and where each is in that list).
    let mut votes: Vec<((&str, String), bool)> = Vec::new();
    let mut vote_of: HashMap<(&str, String), usize> = HashMap::new();
    let mut sql_ids: std::collections::BTreeSet<(&str, String)> = Default::default();
    // Each output so far, with the arguments of the step it answers (what it merely echoes)
    // and the `any_of:` branch of its step in the current turn (`None` once the turn is over).
    let mut outputs = Outputs::default();
    let mut prompts = Ground::default();
    prompts.push(Origin::Prompt(0), Lazy::new(Raw::Artifacts(&sc.artifacts)));
    // The words of the prompts so far: a value made only of them is the user's, in other words
    // (`port = 8080` for "change the port from 8080").
    let mut prompt_words: Vec<HashSet<String>> = Vec::new();
    for (ti, turn) in sc.turns.iter().enumerate() {
        prompts.push(Origin::Prompt(ti), Lazy::new(Raw::Prompt(&turn.prompt)));
        prompt_words.push(words(&turn.prompt).collect());
        for step in &turn.workflow {
            let mut leaves = Vec::new();
            leaves_of(step.call.arguments(), String::new(), &mut leaves);
            for (pointer, value) in &leaves {
                if sql_takes_ids(value, &prompts, &outputs.all) {
                    for tool in step.tools() {
                        sql_ids.insert((tool, format!("{SQL_IDS}{}", generalize(pointer))));
                    }
                }
            }
            for (pointer, value) in leaves {
                let pattern = generalize(&pointer);
                let produced =
                    leaf_produced(step, &pointer, &value, &prompts, &prompt_words, &outputs);
                for tool in step.tools() {
                    let key = (tool, pattern.clone());
                    match vote_of.get(&key) {
                        Some(&k) => votes[k].1 &= produced,
                        None => {
                            vote_of.insert(key.clone(), votes.len());
                            votes.push((key, produced));
                        }
                    }
                }
            }
            if let Some(m) = &step.mock_output
                && !looks_refused(m)
            {
                let mut given = Source::default();
                given.add_value(step.call.arguments());
                outputs.push(Earlier {
                    output: Source::of_output(m),
                    given,
                    branch: step.branch,
                });
            }
        }
        for e in &mut outputs.all {
            e.branch = None;
        }
    }
    let mut out: HashMap<String, Vec<String>> = HashMap::new();
    for ((tool, pattern), all) in votes {
        if all {
            out.entry(tool.to_owned()).or_default().push(pattern);
        }
    }
    for (tool, key) in sql_ids {
        out.entry(tool.to_owned()).or_default().push(key);
    }
    out
}

/// Whether a step's value is SQL quoting an id an earlier output gave (`WHERE id = 1003`
/// after the lookup): that makes the numbers of the tool's SQL references.
fn sql_takes_ids(value: &str, prompts: &Ground<'_>, outputs: &[Earlier]) -> bool {
    if !crate::sql::looks_like_sql(value) {
        return false;
    }
    let Some(names) = crate::sql::names(value, None) else {
        return false;
    };
    names.literals.iter().filter(|l| is_id_literal(l)).any(|l| {
        prompts.origin_of(l).is_none()
            && outputs
                .iter()
                .any(|e| !e.given.values.contains(l.as_str()) && e.output.gives(l))
    })
}

/// Whether a step's value at `pointer` is one an earlier step's output produced and no prompt
/// gave. Grounding is a fact about the run, not about how the oracle compares the value: a
/// match policy never switches it off, only `literal:` does; `from_output` says so outright.
fn leaf_produced(
    step: &OracleCall,
    pointer: &str,
    value: &str,
    prompts: &Ground<'_>,
    prompt_words: &[HashSet<String>],
    outputs: &Outputs,
) -> bool {
    let pattern = generalize(pointer);
    let declared = matches!(
        step_policy(step, pointer),
        Some(crate::harness::MatchPolicy::FromOutput)
    );
    !step.literal.iter().any(|l| covers(l, &pattern))
        && prompts.origin_of(value).is_none()
        && !prompt_words.iter().any(|w| states(w, value))
        && (declared
            || outputs.may_produce(value).any(|e| {
                // The other list of an `any_of:` item is an alternative, not a step before
                // this one.
                let apart = matches!((e.branch, step.branch),
                    (Some((g, b)), Some((h, c))) if g == h && b != c);
                !apart && !e.given.values.contains(value) && e.output.produces(value, prompts)
            }))
}

/// The prefix of an inferred position whose SQL's ids are references (`#sql-ids/query`).
pub(crate) const SQL_IDS: &str = "#sql-ids";

/// A number in SQL that can be an id (three digits or more).
fn is_id_literal(l: &str) -> bool {
    l.len() >= 3 && l.bytes().all(|b| b.is_ascii_digit())
}

/// The policy a step sets at `pointer` (a parameter's name, or a pointer key with `*`).
fn step_policy<'o>(step: &'o OracleCall, pointer: &str) -> Option<&'o crate::harness::MatchPolicy> {
    let generic = generalize(pointer);
    step.match_policies.iter().find_map(|(k, p)| {
        let key = if k.starts_with('/') {
            k.clone()
        } else {
            child("", k)
        };
        (key == generic || key == pointer).then_some(p)
    })
}

/// The lower-cased words (letters and digits) of a text.
fn words(text: &str) -> impl Iterator<Item = String> + '_ {
    alnum_words(text).map(str::to_lowercase)
}

/// Whether a value of two words or more is made only of words the prompt says.
fn states(prompt: &HashSet<String>, value: &str) -> bool {
    let mut n = 0;
    for w in words(value) {
        if !prompt.contains(&w) {
            return false;
        }
        n += 1;
    }
    n >= 2
}

/// Whether identifier `shown` is a near miss of `used` (and not it): a plural or singular
/// (`products`/`product`), a longer name that ends or starts with it (`full_name`/`name`), or
/// one edit apart (five letters or more).
fn near_miss(used: &str, shown: &str) -> bool {
    if used == shown || shown.len() < 3 {
        return false;
    }
    shown == format!("{used}s")
        || used == format!("{shown}s")
        || shown.ends_with(&format!("_{used}"))
        || shown.starts_with(&format!("{used}_"))
        || (used.len() >= 5 && strsim::levenshtein(used, shown) == 1)
}

/// The field labels of the catalogue answers SQL servers give (SQLite's `PRAGMA table_info`,
/// DuckDB's `DESCRIBE`, `information_schema.columns`, MySQL's `SHOW COLUMNS`).
const CATALOGUE_LABELS: &[&str] = &[
    "cid",
    "name",
    "type",
    "notnull",
    "dflt_value",
    "pk",
    "column_name",
    "column_type",
    "data_type",
    "null",
    "key",
    "default",
    "extra",
    "is_nullable",
    "table_name",
    "table_schema",
];

/// An earlier step's mock output, as inference reads it.
struct Earlier {
    output: Source,
    /// The step's own arguments: what its output merely echoes.
    given: Source,
    /// The step's `any_of:` branch while its turn lasts (`None` after).
    branch: Option<(usize, usize)>,
}

/// The mock outputs before a step, in order, with an index of their values and words: which
/// of them may produce a value, found without reading each (every step of a long workflow
/// would read every output before it: steps × outputs text scans).
#[derive(Default)]
struct Outputs {
    all: Vec<Earlier>,
    /// Per value an output holds (by its [`crate::hash::name_hash`]), the outputs that hold
    /// it: a hash two values share only adds outputs to read.
    by_value: HashMap<u64, Vec<u32>, crate::hash::Hashed>,
    /// Per word of an output's text (a run of letters and digits, hashed alike), the outputs
    /// that print it.
    by_word: HashMap<u64, Vec<u32>, crate::hash::Hashed>,
}

impl Outputs {
    fn push(&mut self, e: Earlier) {
        let at = self.all.len() as u32;
        for v in &e.output.values {
            self.by_value.entry(name_hash(v)).or_default().push(at);
        }
        for w in alnum_words(&e.output.text) {
            let list = self.by_word.entry(name_hash(w)).or_default();
            // Once per output, however often it prints the word.
            if list.last() != Some(&at) {
                list.push(at);
            }
        }
        self.all.push(e);
    }

    /// The outputs that may produce `value` ([`Source::produces`]): every one that does, and
    /// perhaps others. A source lists a name as one of its values or printed as a whole name
    /// ([`Source::lists`]), and a name printed so has each of its runs of letters and digits
    /// printed as a whole word (what comes before and after it is no letter or digit): the
    /// outputs that hold it, and those that print the rarest of its words (every output for a
    /// name without one). The same for each name a path of `value` may end in.
    fn may_produce(&self, value: &str) -> impl Iterator<Item = &Earlier> {
        let mut at: Vec<u32> = Vec::new();
        for name in std::iter::once(value).chain(composed(value).map(|(_, name)| name)) {
            at.extend(self.by_value.get(&name_hash(name)).into_iter().flatten());
            let rarest = alnum_words(name)
                .map(|w| {
                    self.by_word
                        .get(&name_hash(w))
                        .map_or(&[][..], Vec::as_slice)
                })
                .min_by_key(|list| list.len());
            match rarest {
                Some(list) => at.extend(list),
                None => at.extend(0..self.all.len() as u32),
            }
        }
        at.sort_unstable();
        at.dedup();
        at.into_iter().map(|i| &self.all[i as usize])
    }
}

/// The runs of letters and digits of a text, as [`Source::lists`] tells a name's edges.
fn alnum_words(text: &str) -> impl Iterator<Item = &str> {
    text.split(|c: char| !c.is_alphanumeric())
        .filter(|w| !w.is_empty())
}

/// Every table and column the scenario's own workflow names in SQL. Worked out once.
pub(crate) fn sql_names(sc: &Scenario) -> &HashSet<String> {
    sc.compiled.sql_names.get_or_init(|| {
        let mut all = HashSet::new();
        for step in sc.turns.iter().flat_map(|t| &t.workflow) {
            let mut leaves = Vec::new();
            leaves_of(step.call.arguments(), String::new(), &mut leaves);
            for (_, text) in leaves {
                if crate::sql::looks_like_sql(&text)
                    && let Some(n) = crate::sql::names(&text, None)
                {
                    all.extend(n.tables.into_iter().chain(n.columns));
                }
            }
        }
        all
    })
}

/// The tables and columns a scenario's own workflow names in SQL before any mock output (or
/// any prompt) names them: the suite takes them as known (a table the prompt's domain implies,
/// an `id` column), so they are no references. A name the workflow takes from an output (a
/// column `describe_table` listed) stays one. Worked out once per scenario.
pub(crate) fn sql_known(sc: &Scenario) -> &HashSet<String> {
    sc.compiled.sql_known.get_or_init(|| {
        let mut known = HashSet::new();
        let mut outputs: Vec<Source> = Vec::new();
        for turn in &sc.turns {
            for step in &turn.workflow {
                let mut leaves = Vec::new();
                leaves_of(step.call.arguments(), String::new(), &mut leaves);
                for (_, text) in leaves {
                    if !crate::sql::looks_like_sql(&text) {
                        continue;
                    }
                    let Some(names) = crate::sql::names(&text, None) else {
                        continue;
                    };
                    for n in names.tables.into_iter().chain(names.columns) {
                        if !outputs.iter().any(|o| o.names_sql(&n, false)) {
                            known.insert(n);
                        }
                    }
                    for l in names.literals {
                        if !outputs.iter().any(|o| o.gives(&l)) {
                            known.insert(l);
                        }
                    }
                }
                // An optional step may not happen: what only it names is known all the same.
                if let Some(m) = &step.mock_output
                    && !looks_refused(m)
                    && !step.optional
                {
                    outputs.push(Source::of_output(m));
                }
            }
        }
        known
    })
}

/// Whether the position `key` (a parameter's pointer, `*` for every item) covers the
/// generalised pointer `pattern`: the same position or one inside it.
pub(crate) fn covers(key: &str, pattern: &str) -> bool {
    let key = generalize(key);
    pattern == key || pattern.starts_with(&format!("{key}/"))
}

#[cfg(test)]
pub(crate) fn stated_quantities_for_tests(prompt: &str) -> Vec<String> {
    stated_quantities(prompt)
}

/// Numbers as the prompt may spell them.
const NUMBER_WORDS: [(&str, u64); 23] = [
    ("a", 1),
    ("an", 1),
    ("one", 1),
    ("two", 2),
    ("three", 3),
    ("four", 4),
    ("five", 5),
    ("six", 6),
    ("seven", 7),
    ("eight", 8),
    ("nine", 9),
    ("ten", 10),
    ("eleven", 11),
    ("twelve", 12),
    ("fifteen", 15),
    ("twenty", 20),
    ("thirty", 30),
    ("forty", 40),
    ("fifty", 50),
    ("sixty", 60),
    ("ninety", 90),
    ("hundred", 100),
    ("couple", 2),
];
/// Units of time, in seconds.
const SECONDS: [(&str, u64); 7] = [
    ("second", 1),
    ("sec", 1),
    ("minute", 60),
    ("min", 60),
    ("hour", 3600),
    ("day", 86_400),
    ("week", 604_800),
];
/// Units of size, in bytes.
const BYTES: [(&str, u64); 6] = [
    ("kb", 1000),
    ("kib", 1024),
    ("mb", 1_000_000),
    ("mib", 1_048_576),
    ("gb", 1_000_000_000),
    ("gib", 1_073_741_824),
];

/// The numbers a prompt states in words or other units: "one hour", "2 minutes", "a day",
/// "10 MB" give the same quantity in the units a tool may take (seconds, milliseconds,
/// minutes, hours; bytes). Linear in the prompt.
fn stated_quantities(prompt: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut prev: Option<&str> = None;
    // Word by word, the unit first (most words are none), then the number before it; no
    // copy of the prompt.
    for word in prompt
        .split(|c: char| !c.is_alphanumeric())
        .filter(|w| !w.is_empty())
    {
        let before = prev.replace(word);
        let Some(before) = before.filter(|_| word.len() <= 7) else {
            continue;
        };
        let unit = word;
        let singular = unit
            .strip_suffix('s')
            .or_else(|| unit.strip_suffix('S'))
            .unwrap_or(unit);
        let secs = SECONDS
            .iter()
            .find(|(u, _)| u.eq_ignore_ascii_case(singular))
            .map(|&(_, s)| s);
        let bytes = BYTES
            .iter()
            .find(|(u, _)| u.eq_ignore_ascii_case(unit))
            .map(|&(_, b)| b);
        if secs.is_none() && bytes.is_none() {
            continue;
        }
        let n = match before.parse::<u64>() {
            Ok(n) => Some(n),
            Err(_) => NUMBER_WORDS
                .iter()
                .find(|(w, _)| w.eq_ignore_ascii_case(before))
                .map(|&(_, n)| n),
        };
        let Some(n) = n.filter(|&n| n > 0 && n < 1 << 32) else {
            continue;
        };
        if let Some(secs) = secs {
            let total = n * secs;
            out.extend([total, total * 1000].map(|v| v.to_string()));
            if total % 60 == 0 {
                out.push((total / 60).to_string());
            }
            if total % 3600 == 0 {
                out.push((total / 3600).to_string());
            }
        } else if let Some(bytes) = bytes {
            out.push((n * bytes).to_string());
        }
    }
    out
}

/// Every string (three characters or more) and integer (four digits or more) in a value, with
/// its JSON pointer.
fn leaves_of(v: &Value, at: String, out: &mut Vec<(String, String)>) {
    match v {
        Value::String(s) if s.chars().count() >= 3 => out.push((at, s.clone())),
        Value::Number(n) if n.as_u64().is_some_and(|n| n >= 1000) => out.push((at, n.to_string())),
        Value::Array(items) => {
            for (i, item) in items.iter().enumerate() {
                leaves_of(item, format!("{at}/{i}"), out);
            }
        }
        Value::Object(m) => {
            for (k, item) in m {
                leaves_of(item, child(&at, k), out);
            }
        }
        _ => {}
    }
}

/// A pointer with its array indices as `*` (`/relations/0/from` → `/relations/*/from`).
pub(crate) fn generalize(pointer: &str) -> String {
    pointer
        .split('/')
        .map(|seg| {
            if !seg.is_empty() && seg.bytes().all(|b| b.is_ascii_digit()) {
                "*"
            } else {
                seg
            }
        })
        .collect::<Vec<_>>()
        .join("/")
}

/// Every value of `args` at a pointer pattern (`*` for every array item), of any kind, each
/// with its concrete pointer.
pub(crate) fn values_at_any<'v>(args: &'v Value, pattern: &str) -> Vec<(String, &'v Value)> {
    fn go<'v>(v: &'v Value, segs: &[&str], at: String, out: &mut Vec<(String, &'v Value)>) {
        let Some((first, rest)) = segs.split_first() else {
            out.push((at, v));
            return;
        };
        match (v, *first) {
            (Value::Array(items), "*") => {
                for (i, item) in items.iter().enumerate() {
                    go(item, rest, format!("{at}/{i}"), out);
                }
            }
            (Value::Array(items), seg) => {
                if let Some(item) = seg.parse::<usize>().ok().and_then(|i| items.get(i)) {
                    go(item, rest, format!("{at}/{seg}"), out);
                }
            }
            (Value::Object(m), seg) => {
                if let Some(item) = m.get(&*crate::source::json::unescape(seg)) {
                    go(item, rest, format!("{at}/{seg}"), out);
                }
            }
            _ => {}
        }
    }
    let segs: Vec<&str> = pattern.trim_start_matches('/').split('/').collect();
    let mut out = Vec::new();
    go(args, &segs, String::new(), &mut out);
    out
}

/// Every pointer into a value (its members and items, at every depth), array indices as `*`.
pub(crate) fn pointers_of(v: &Value, at: String, out: &mut Vec<String>) {
    match v {
        Value::Array(items) => {
            let here = format!("{at}/*");
            if !out.contains(&here) {
                out.push(here.clone());
            }
            items.iter().for_each(|i| pointers_of(i, here.clone(), out));
        }
        Value::Object(m) => {
            for (k, item) in m {
                let here = child(&at, k);
                if !out.contains(&here) {
                    out.push(here.clone());
                }
                pointers_of(item, here, out);
            }
        }
        _ => {}
    }
}

/// The references of `args` at a pointer pattern, each with its concrete pointer: strings,
/// and an array's strings when the pattern ends at the array; integers too when `ids`.
fn references_at(args: &Value, pattern: &str, ids: bool) -> Vec<(String, String)> {
    let mut out = Vec::new();
    for (at, v) in values_at_any(args, pattern) {
        match v {
            Value::String(s) => out.push((at, s.clone())),
            Value::Number(n) if ids && (n.is_u64() || n.is_i64()) => out.push((at, n.to_string())),
            Value::Array(items) => {
                for (i, item) in items.iter().enumerate() {
                    match item {
                        Value::String(s) => out.push((format!("{at}/{i}"), s.clone())),
                        Value::Number(n) if ids && (n.is_u64() || n.is_i64()) => {
                            out.push((format!("{at}/{i}"), n.to_string()))
                        }
                        _ => {}
                    }
                }
            }
            _ => {}
        }
    }
    out
}

/// Omni's video (or Veo's with audio on) already carries sound: a separately generated track
/// muxed onto it is work nobody asked for, unless the scenario's workflow or the user's prompt
/// asks for music.
fn redundant_soundtracks(
    flow: &mut Flow,
    calls: &[(usize, &Call)],
    t: &Transcript,
    scenario: Option<&Scenario>,
    linter: &Linter,
) {
    let products = |i: usize| -> Vec<(ArtifactKind, bool)> {
        let call = calls[i].1;
        let Some((_, facts)) = linter.facts(&call.tool) else {
            return Vec::new();
        };
        facts
            .produces
            .iter()
            .filter(|p| {
                p.when
                    .iter()
                    .all(|(k, v)| linter.effective(&call.tool, call.args(), k).as_ref() == Some(v))
            })
            .map(|p| (p.kind, p.embedded))
            .collect()
    };
    let mut flagged = Vec::new();
    for (m, cf) in flow.calls.iter().enumerate() {
        let producers: Vec<usize> = cf
            .references
            .iter()
            .filter_map(|r| match r.origin {
                Some(Origin::Call(p)) => Some(p),
                _ => None,
            })
            .collect();
        let video_with_sound = producers.iter().copied().find(|&p| {
            let k = products(p);
            k.contains(&(ArtifactKind::Video, false)) && k.contains(&(ArtifactKind::Audio, true))
        });
        let soundtrack = producers.iter().copied().find(|&p| {
            let k = products(p);
            k.contains(&(ArtifactKind::Audio, false)) && !k.contains(&(ArtifactKind::Video, false))
        });
        if let (Some(v), Some(a)) = (video_with_sound, soundtrack) {
            let tool = &calls[a].1.tool;
            let asked = match scenario {
                Some(sc) => sc
                    .turns
                    .iter()
                    .flat_map(|tt| &tt.workflow)
                    .any(|o| &o.call.tool == tool),
                None => (0..t.turns.len())
                    .filter_map(|i| prompt_of(t, scenario, i))
                    .any(asks_for_music),
            };
            if !asked {
                flagged.push((a, v, m));
            }
        }
    }
    for (a, v, m) in flagged {
        let mut f = Finding::new(
            Code::RedundantCall,
            "",
            format!(
                "the video of call {} (`{}`) already carries audio; generating a soundtrack here and muxing it in call {} (`{}`) was not asked for",
                v + 1,
                calls[v].1.tool,
                m + 1,
                calls[m].1.tool
            ),
        );
        f.call = Some(a);
        flow.findings.push(f);
    }
}

fn asks_for_music(prompt: &str) -> bool {
    let p = prompt.to_lowercase();
    [
        "music",
        "score",
        "soundtrack",
        "song",
        "jingle",
        "melody",
        "tune",
    ]
    .iter()
    .any(|w| p.contains(w))
}

/// Each call's output: the recorded one, else the mock output of the scenario step with the
/// same tool in that turn (what the mock server answers).
fn outputs<'a>(t: &'a Transcript, scenario: Option<&'a Scenario>) -> Vec<Option<&'a Value>> {
    let mut out = Vec::new();
    for (ti, turn) in t.turns.iter().enumerate() {
        // A turn whose every call recorded its output takes no mock output.
        if turn.calls.iter().all(|c| c.output.is_some()) {
            out.extend(turn.calls.iter().map(|c| c.output.as_ref()));
            continue;
        }
        let mut used: smallvec::SmallVec<[bool; 16]> = smallvec::smallvec![
            false;
            scenario
                .and_then(|s| s.turns.get(ti))
                .map_or(0, |st| st.workflow.len())
        ];
        // Per tool, where its next unused step may be: the steps of a tool are taken in
        // order, so a run of one tool's calls walks its steps once (linear, not quadratic).
        let mut from = crate::hash::NameMap::<usize>::new();
        for call in &turn.calls {
            let recorded = call.output.as_ref();
            let mock = scenario.and_then(|s| s.turns.get(ti)).and_then(|st| {
                let start = from.get(&call.tool).unwrap_or(0);
                let found = st.workflow[start..].iter().enumerate().position(|(j, o)| {
                    !used[start + j]
                        && crate::hash::same_bytes(o.call.tool.as_bytes(), call.tool.as_bytes())
                });
                let Some(j) = found.map(|k| start + k) else {
                    *from.entry(&call.tool) = st.workflow.len();
                    return None;
                };
                used[j] = true;
                *from.entry(&call.tool) = j + 1;
                st.workflow[j].mock_output.as_ref()
            });
            out.push(recorded.or(mock));
        }
    }
    out
}

fn prompt_of<'a>(
    t: &'a Transcript,
    scenario: Option<&'a Scenario>,
    turn: usize,
) -> Option<&'a str> {
    t.turns
        .get(turn)
        .and_then(|tt| tt.prompt.as_deref())
        .or_else(|| {
            scenario
                .and_then(|s| s.turns.get(turn))
                .map(|st| st.prompt.as_str())
        })
        .or_else(|| (turn == 0).then_some(t.prompt.as_deref()).flatten())
}

pub(crate) use crate::lint::looks_refused;

/// How many times the scenario's workflow asks for each call (by [`call_key`]): repeats up to
/// that count are work, not redundancy.
pub(crate) fn asked_calls(scenario: &Scenario) -> &HashMap<Box<[u8]>, usize> {
    scenario.compiled.asked_calls.get_or_init(|| {
        let mut asked: HashMap<Box<[u8]>, usize> = HashMap::new();
        for o in scenario.turns.iter().flat_map(|t| &t.workflow) {
            *asked
                .entry(call_key(&o.call.tool, o.call.identity()))
                .or_default() += 1;
        }
        asked
    })
}

/// A call as the flow engine compares calls: two are the same when their tools and arguments
/// are equal (what [`call_key`] spells out), told by the arguments' identity
/// ([`Call::identity`]) and hashed from it.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Same<'a> {
    hash: u64,
    pub(crate) tool: &'a str,
    pub(crate) identity: &'a [u8],
}

impl<'a> Same<'a> {
    pub(crate) fn new(call: &'a Call) -> Self {
        Self::hashed(call, Self::hash_of(call))
    }

    /// A call whose [`Same::hash_of`] is known (a step's own call's, worked out once).
    pub(crate) fn hashed(call: &'a Call, hash: u64) -> Self {
        Self {
            hash,
            tool: &call.tool,
            identity: call.identity(),
        }
    }

    /// The hash two identical calls share: the tool's name's and the arguments' identity's.
    pub(crate) fn hash_of(call: &Call) -> u64 {
        crate::hash::call_hash(&call.tool, crate::hash::bytes_hash(call.identity()))
    }
}

impl PartialEq for Same<'_> {
    fn eq(&self, other: &Self) -> bool {
        use crate::hash::same_bytes;
        self.hash == other.hash
            && same_bytes(self.tool.as_bytes(), other.tool.as_bytes())
            && same_bytes(self.identity, other.identity)
    }
}

impl Eq for Same<'_> {}

/// Calls counted or indexed by [`Same`]: its hash is already made, so the map's own hasher
/// only mixes that one word.
pub(crate) type SameMap<'a, V = usize> = HashMap<Same<'a>, V, crate::hash::Hashed>;

impl std::hash::Hash for Same<'_> {
    fn hash<H: std::hash::Hasher>(&self, h: &mut H) {
        h.write_u64(self.hash);
    }
}

/// What makes two calls identical to the flow engine: the tool (its name's length, then the
/// name) and its arguments' identity, as one key.
pub(crate) fn call_key(tool: &str, identity: &[u8]) -> Box<[u8]> {
    let mut key = Vec::with_capacity(8 + tool.len() + identity.len());
    key.extend_from_slice(&(tool.len() as u64).to_le_bytes());
    key.extend_from_slice(tool.as_bytes());
    key.extend_from_slice(identity);
    key.into_boxed_slice()
}

/// The strings of an argument the engine checks as artifact references (when its parameter
/// names an input): the value itself, or an array's string items.
pub(crate) fn reference_strings(v: &Value) -> Vec<&str> {
    match v {
        Value::String(s) => vec![s.as_str()],
        Value::Array(items) => items.iter().filter_map(Value::as_str).collect(),
        _ => Vec::new(),
    }
}

/// What grounds a reference in a call of one turn whatever the transcript's other calls do:
/// the scenario lists it as an artifact, the turn's prompt names it as one, or (four
/// characters or more) the prompt holds it verbatim. The engine's own check in [`analyze`]
/// accepts more (earlier outputs); this is the part that needs only the scenario. The
/// prompt's artifacts and the scenario's, normalised, are listed once, on the first question.
pub(crate) struct PromptGround<'a> {
    prompt: &'a str,
    scenario_artifacts: &'a [String],
    known: std::cell::OnceCell<Vec<String>>,
}

impl<'a> PromptGround<'a> {
    pub(crate) fn new(prompt: &'a str, scenario_artifacts: &'a [String]) -> Self {
        Self {
            prompt,
            scenario_artifacts,
            known: std::cell::OnceCell::new(),
        }
    }

    /// Whether the engine grounds a reference to `value` here.
    pub(crate) fn grounds(&self, value: &str) -> bool {
        let known = self.known.get_or_init(|| {
            let mut known = artifacts_in_text(self.prompt);
            known.extend(self.scenario_artifacts.iter().map(|a| normalize(a)));
            known
        });
        known.contains(&normalize(value)) || (value.len() >= 4 && self.prompt.contains(value))
    }
}

/// The arguments of a call that reference artifacts, as (pointer, value): the matrix's
/// `inputs` (names or pointers), else parameters named like inputs, and the positions the
/// scenario's workflow shows to be references (`inferred`).
fn references(
    linter: &Linter,
    call: &Call,
    inferred: Option<&Vec<String>>,
) -> Vec<(String, String)> {
    references_in(linter, &call.tool, call.arguments(), inferred)
}

/// [`references`] of a call not (yet) in a transcript: `serve` asks it before it runs the
/// engine on the calls so far, which only a call with references needs (issue 32, item 6).
pub(crate) fn references_in(
    linter: &Linter,
    tool: &str,
    arguments: &Value,
    inferred: Option<&Vec<String>>,
) -> Vec<(String, String)> {
    let empty = serde_json::Map::new();
    let args = arguments.as_object().unwrap_or(&empty);
    // (One lookup of the tool's facts: the inputs and the literal positions both come from them.)
    let facts = linter.facts(tool).map(|(_, f)| f);
    let mut patterns: Vec<String> = match facts {
        Some(facts) => facts
            .inputs
            .iter()
            .map(|p| {
                if p.starts_with('/') {
                    p.clone()
                } else {
                    child("", p)
                }
            })
            .collect(),
        None => args
            .keys()
            .filter(|k| looks_like_input(k))
            .map(|k| child("", k))
            .collect(),
    };
    let declared = patterns.len();
    // The matrix's `literal:` positions are never inferred references.
    let literal = facts.map_or(&[][..], |f| f.literal.as_slice());
    patterns.extend(
        inferred
            .into_iter()
            .flatten()
            .filter(|p| p.starts_with('/') && !literal.iter().any(|l| covers(l, p)))
            .cloned(),
    );
    let mut out: Vec<(String, String)> = Vec::new();
    for (n, p) in patterns.iter().enumerate() {
        // Declared inputs are strings (URIs, paths); inferred positions take ids too.
        for (pointer, value) in references_at(arguments, p, n >= declared) {
            if !out.iter().any(|(q, _)| *q == pointer) {
                out.push((pointer, value));
            }
        }
    }
    out
}

/// Whether a call may hold SQL ([`sql_arguments`] would find some), asked per call by the fast
/// path: a `query`/`sql`/`statement` string that starts like SQL, or any argument of a suite
/// whose matrices declare `sql:` parameters. No lookup, no allocation for the common case.
pub(crate) fn may_hold_sql(linter: &Linter, call: &Call) -> bool {
    if !linter.may_take_sql() {
        return false;
    }
    let named = call.args().iter().any(|(k, v)| {
        crate::sql::sql_name(k.as_bytes()) && v.as_str().is_some_and(crate::sql::looks_like_sql)
    });
    named || (linter.declares_sql() && !sql_arguments(linter, call).is_empty())
}

/// Records a finding about a name or id inside call `i`'s SQL. A guess the server refused did
/// nothing: the agent saw the error, so it is a warning (a step it never redoes is
/// `oracle.step_undone`); otherwise the call failed.
fn sql_finding(mut f: Finding, i: usize, cf: &mut CallFlow, findings: &mut Vec<Finding>) {
    f.call = Some(i);
    if cf.refused {
        f.severity = Severity::Warning;
    } else {
        cf.failed = true;
    }
    findings.push(f);
}

/// The arguments of a call that hold SQL text, each with its pointer and the dialect to read
/// it in: the matrix's `sql:` parameters, and a `query`/`sql`/`statement` string that reads
/// as SQL (a search box's query does not), unless the matrix says it is `literal:`.
pub(crate) fn sql_arguments<'c>(
    linter: &'c Linter,
    call: &'c Call,
) -> Vec<(String, &'c str, Option<&'c str>)> {
    let facts = linter.facts(&call.tool);
    let dialect = facts.and_then(|(m, _)| m.sql_dialect.as_deref());
    let declared = facts.map_or(&[][..], |(_, f)| f.sql.as_slice());
    let literal = facts.map_or(&[][..], |(_, f)| f.literal.as_slice());
    // A name or a pointer to it (`query`, `/query`): compared without building the pointer,
    // since this runs for every call of every transcript.
    let names = |list: &[String], k: &str| {
        list.iter()
            .any(|d| d == k || d.strip_prefix('/').is_some_and(|d| d == k))
    };
    let mut out = Vec::new();
    for (k, v) in call.args() {
        let Some(text) = v.as_str() else { continue };
        let named = crate::sql::sql_name(k.as_bytes());
        let is_sql = (!declared.is_empty() && names(declared, k))
            || (named && crate::sql::looks_like_sql(text));
        if is_sql && !names(literal, k) {
            out.push((child("", k), text, dialect));
        }
    }
    out
}

// Without a matrix: `image_uri`, `input_video_uri`, `reference_image_uris`, `images`, … are
// inputs; `gcs_bucket_uri`, `output_*`, `*_dir*` are destinations.
pub(crate) fn looks_like_input(name: &str) -> bool {
    // Asked for every argument of every call: an ASCII name already in lower case (the usual
    // one) is read as it is.
    let n: std::borrow::Cow<str> = if name
        .bytes()
        .any(|b| !b.is_ascii_lowercase() && !b.is_ascii_digit() && b != b'_')
    {
        name.to_lowercase().into()
    } else {
        name.into()
    };
    let input = n.starts_with("input")
        || n.ends_with("_uri")
        || n.ends_with("_uris")
        || n.ends_with("_url")
        || n.ends_with("_path")
        || ["images", "videos", "audios", "files"].contains(&&*n);
    // Most names are not inputs: the substring searches only for those that are.
    input
        && !["output", "bucket", "dir", "destination", "dest"]
            .iter()
            .any(|w| n.contains(w))
}

/// URIs and media file paths mentioned in free text (`flow/text.rs`: what its two regexes find).
pub fn artifacts_in_text(text: &str) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    if text.contains("://") {
        out.extend(text::uris(text).into_iter().map(normalize));
    }
    if text.contains('.') {
        for p in text::media_paths(text) {
            if !out.iter().any(|u| u.ends_with(p)) {
                out.push(normalize(p));
            }
        }
    }
    out.sort();
    out.dedup();
    out
}

/// Every artifact in a JSON value (strings anywhere, including `resource_link` URIs).
pub fn artifacts_of_value(v: &Value) -> Vec<String> {
    let mut out = Vec::new();
    walk(v, &mut out);
    out.sort();
    out.dedup();
    out
}

fn walk(v: &Value, out: &mut Vec<String>) {
    match v {
        Value::String(s) => out.extend(artifacts_in_text(s)),
        Value::Array(items) => items.iter().for_each(|i| walk(i, out)),
        Value::Object(m) => m.values().for_each(|i| walk(i, out)),
        _ => {}
    }
}

/// One spelling per artifact: signed Cloud Storage URLs become `gs://bucket/object`, query
/// strings and trailing punctuation go.
pub fn normalize(s: &str) -> String {
    let s = s.trim().trim_end_matches(['.', ',', ';', ':', '!', '?']);
    let s = s.split(['?', '#']).next().unwrap_or(s);
    for prefix in [
        "https://storage.googleapis.com/",
        "https://storage.cloud.google.com/",
    ] {
        if let Some(rest) = s.strip_prefix(prefix) {
            return format!("gs://{}", rest.trim_end_matches('/'));
        }
    }
    s.trim_end_matches('/').to_owned()
}

#[cfg(test)]
mod tests;
