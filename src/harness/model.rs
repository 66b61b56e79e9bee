//! The normalised harness and transcript model every engine reads.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

use super::raw::{Args, RawCall, RawHarness, RawPolicy, RawToolName, RawTranscript};
use crate::finding::{Code, Severity, is_known_fault};
use crate::pattern::LazyRegex;
use crate::source::spanned::Spanned;
use crate::source::{Location, SourceError, SourceFile};

/// Scenario tier (paper §3.2).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Deserialize, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Tier {
    /// An everyday request served by one or two calls (`tier: simple`).
    Simple,
    /// A novel, multi-step request chaining several tools, later calls taking earlier
    /// results (`tier: complex`).
    Complex,
}

/// How a mock output was grounded (paper §3.3): high = an example for this tool, medium =
/// examples only for similar tools, low = schema only.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Deserialize, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Grounding {
    /// `high`: modelled on a seed output of this tool.
    High,
    /// `medium`: seed outputs exist only for similar tools.
    Medium,
    /// `low`: written from the output schema alone.
    Low,
}

/// What a transcript is expected to do.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Deserialize, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Expect {
    /// `expect: pass`: no error finding and TC at or above the suite's `pass` threshold.
    Pass,
    /// `expect: fail`: the evaluation fails it, finding every fault the label names.
    Fail,
}

/// Which pairs of a turn's workflow steps must run in order.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Deserialize, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Order {
    /// Only steps that consume another step's output must follow it (the default).
    #[default]
    Dataflow,
    /// Every step in the listed order.
    Strict,
}

/// How an argument of an oracle call is compared with the agent's.
#[derive(Clone, Debug)]
pub enum MatchPolicy {
    /// `exact`, and a parameter without a policy: equal to the step's value, numbers by value,
    /// a model selector by the model its name resolves to (an alias matches its id).
    Exact,
    /// `ignore`: any value, or none.
    Ignore,
    /// Equal to a value an earlier tool output produced.
    FromOutput,
    /// Left to the judge; deterministic scoring treats it as present-and-typed.
    Semantic,
    /// `{regex: …}`: a string the regex matches anywhere in (Rust syntax; anchor it with `^…$`);
    /// with `not: …`, one that second regex matches nowhere in (what a lookahead would say,
    /// which Rust's regexes lack: `not: '(?i)\blimit\b'`).
    Regex(LazyRegex, Option<LazyRegex>),
    /// `{any_of: […]}`: one of several values.
    AnyOf(AnyOf),
    /// Numeric, within ± tolerance.
    Tolerance(f64),
    /// The agent must not pass the parameter.
    Absent,
    /// `unordered`: an array with the step's items in any order, each item compared under
    /// the policies below it (`/entities/*/observations: semantic`), the two arrays paired
    /// item for item.
    Unordered,
    /// `sql` or `{sql: dialect}`: SQL text that says the same as the step's, parsed and
    /// normalised (`crate::sql::normalize`; the generic dialect when none is named).
    Sql(Option<String>),
    /// `path`: a string naming the same file or directory as the step's ([`same_path`]:
    /// `./app.py` is `app.py`, `/srv/data/` is `/srv/data`); `{path: /srv/data}` also reads a
    /// relative path from that directory, as a server rooted there does (`notes/a.md` is
    /// `/srv/data/notes/a.md`).
    Path(Option<String>),
}

/// The `any_of` policy: one of `options`, compared as configured.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct AnyOf {
    /// The accepted values (`any_of:`).
    pub options: Vec<Value>,
    /// Leaving the parameter out is also correct (BFCL's `""` option).
    pub optional: bool,
    /// `normalize:`: BFCL's string standardisation, or paths compared as paths; `None`
    /// compares as `exact` does.
    pub normalize: Option<Normalize>,
    /// An integer option is not matched by a float (`3.0`), as BFCL's type check has it.
    pub strict_integer: bool,
}

impl AnyOf {
    /// Whether `got` is one of the options. `same` is the plain comparison (numbers by value,
    /// model aliases, …).
    pub fn accepts(&self, got: &Value, same: &dyn Fn(&Value, &Value) -> bool) -> bool {
        self.options.iter().any(|o| {
            if self.strict_integer && is_integer_literal(o) && !is_integer_literal(got) {
                return false;
            }
            match self.normalize {
                Some(Normalize::Bfcl) => bfcl_equal(o, got),
                Some(Normalize::Path) => path_equal(o, got),
                None => same(o, got),
            }
        })
    }
}

/// How `any_of` compares its options with the agent's value (`normalize:`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Normalize {
    /// `bfcl`: strings standardised as BFCL's checker does (no spaces or `,./-_*^`, lower
    /// case, `'` as `"`), numbers by value, arrays element-wise, objects key-wise.
    Bfcl,
    /// `path`: strings compared as paths ([`same_path`]), numbers by value, arrays
    /// element-wise, objects key-wise.
    Path,
}

/// Whether two strings name the same path as a file system reads them: a `.` segment (a
/// leading `./` too), a repeated `/` and a trailing `/` change nothing (`./src//lib.rs/` is
/// `src/lib.rs`). A URL's scheme and host are compared as written, its path so. `..` stays
/// as written: only the file system can resolve it (a link may lead elsewhere), and an
/// empty string is only itself.
pub fn same_path(a: &str, b: &str) -> bool {
    if a.is_empty() || b.is_empty() {
        return a == b;
    }
    let (root_a, rest_a) = path_root(a);
    let (root_b, rest_b) = path_root(b);
    root_a == root_b && path_segments(rest_a).eq(path_segments(rest_b))
}

/// [`same_path`], a relative path (either) read from `base` first, where one is given.
pub fn same_path_from(base: Option<&str>, a: &str, b: &str) -> bool {
    fn resolve<'p>(base: Option<&str>, p: &'p str) -> std::borrow::Cow<'p, str> {
        match base {
            Some(base) if !p.is_empty() && path_root(p).0.is_empty() => {
                std::borrow::Cow::Owned(format!("{base}/{p}"))
            }
            _ => std::borrow::Cow::Borrowed(p),
        }
    }
    same_path(&resolve(base, a), &resolve(base, b))
}

/// The one spelling of a path [`same_path`] compares: its root, then its segments joined by
/// single `/`s (`./src//lib.rs/` → `src/lib.rs`; `.` for a relative path with none left).
/// Borrowed where the path is spelt so already (most are: nothing is allocated).
pub fn normal_path(s: &str) -> std::borrow::Cow<'_, str> {
    let (root, rest) = path_root(s);
    let spelt = |seg: &str| !seg.is_empty() && seg != ".";
    // (A URL's path goes on after its host with a `/` of its own.)
    let body = if root.len() > 1 {
        rest.strip_prefix('/').unwrap_or(rest)
    } else {
        rest
    };
    if s.is_empty() || (!body.is_empty() && body.split('/').all(spelt)) {
        return std::borrow::Cow::Borrowed(s);
    }
    let mut out = root.to_owned();
    for seg in path_segments(rest) {
        if !(out.is_empty() || out.ends_with('/')) {
            out.push('/');
        }
        out.push_str(seg);
    }
    if out.is_empty() {
        out.push('.');
    }
    std::borrow::Cow::Owned(out)
}

/// A path's segments past its root, without the ones that change nothing (empty, `.`).
fn path_segments(s: &str) -> impl Iterator<Item = &str> {
    s.split('/').filter(|seg| !seg.is_empty() && *seg != ".")
}

/// A path's root (`/`, a URL's `scheme://host`, or nothing for a relative path) and the rest.
fn path_root(s: &str) -> (&str, &str) {
    if let Some(at) = s.find("://") {
        let host = at + 3;
        let end = s[host..].find('/').map_or(s.len(), |i| host + i);
        return s.split_at(end);
    }
    match s.strip_prefix('/') {
        Some(rest) => ("/", rest),
        None => ("", s),
    }
}

/// Equality under `normalize: path`: strings as paths ([`same_path`]), numbers by value,
/// arrays element-wise, objects key-wise.
fn path_equal(a: &Value, b: &Value) -> bool {
    equal_by(a, b, &same_path)
}

/// A JSON number written without a fraction (`3`, not `3.0`).
fn is_integer_literal(v: &Value) -> bool {
    v.as_i64().is_some() || v.as_u64().is_some()
}

/// BFCL's string standardisation, as characters (no string built): drop spaces and
/// `,./-_*^`, lowercase, `'` as `"`.
fn standardized(s: &str) -> impl Iterator<Item = char> + '_ {
    s.chars()
        .filter(|c| !matches!(c, ' ' | ',' | '.' | '/' | '-' | '_' | '*' | '^'))
        .flat_map(char::to_lowercase)
        .map(|c| if c == '\'' { '"' } else { c })
}

/// Equality as BFCL's checker sees it: standardised strings, numbers by value, arrays
/// element-wise, objects key-wise.
pub fn bfcl_equal(a: &Value, b: &Value) -> bool {
    equal_by(a, b, &|x, y| standardized(x).eq(standardized(y)))
}

/// Equality with strings compared by `strings`, numbers by value, arrays element-wise and
/// objects key-wise (`any_of`'s normalisations).
fn equal_by(a: &Value, b: &Value, strings: &dyn Fn(&str, &str) -> bool) -> bool {
    match (a, b) {
        (Value::String(x), Value::String(y)) => strings(x, y),
        (Value::Number(x), Value::Number(y)) => x.as_f64() == y.as_f64(),
        (Value::Array(x), Value::Array(y)) => {
            x.len() == y.len() && x.iter().zip(y).all(|(p, q)| equal_by(p, q, strings))
        }
        (Value::Object(x), Value::Object(y)) => {
            x.len() == y.len()
                && x.iter()
                    .all(|(k, v)| y.get(k).is_some_and(|w| equal_by(v, w, strings)))
        }
        _ => a == b,
    }
}

/// One tool call, normalised from any accepted shape.
#[derive(Clone, Debug)]
pub struct Call {
    /// The tool's name, from `function_name`, `name`, `tool` or `function.name`.
    pub tool: String,
    /// Always a JSON object: [`Call::arguments`] (changed only through [`Call::edit_arguments`],
    /// which keeps `identity` true).
    arguments: Value,
    /// What the tool returned (transcripts) — MCP `CallToolResult` or any JSON.
    pub output: Option<Value>,
    /// The call's `id:` as the client recorded it (OpenAI's `call_…`), if any.
    pub id: Option<String>,
    /// Where the call's mapping starts in the YAML.
    pub location: Location,
    /// Each argument's line and column (in `location`'s file), of its value and of its key, in
    /// the arguments' key order: no second map of key copies beside the arguments.
    arg_locations: Vec<((u32, u32), (u32, u32))>,
    /// The arguments as one run of bytes ([`crate::hash::identity`]): what tells two calls'
    /// arguments equal ([`Call::same_as`]).
    identity: Box<[u8]>,
}

impl Call {
    /// A call read from a recorded run (not YAML): every argument is placed at the call.
    pub(crate) fn recorded(
        tool: String,
        arguments: Value,
        output: Option<Value>,
        id: Option<String>,
        location: Location,
    ) -> Self {
        let n = arguments.as_object().map_or(0, Map::len);
        let at = (location.line, location.column);
        Self {
            identity: crate::hash::identity(&arguments),
            tool,
            arguments,
            output,
            id,
            location,
            arg_locations: vec![(at, at); n],
        }
    }

    /// The arguments, always a JSON object ([`Call::args`] as the object).
    pub fn arguments(&self) -> &Value {
        &self.arguments
    }

    /// Edits the arguments in place (a test's or a mutation's change), then writes the call's
    /// identity again. An argument kept keeps its location; a new one is placed at the call.
    pub fn edit_arguments<R>(&mut self, edit: impl FnOnce(&mut Map<String, Value>) -> R) -> R {
        let before: Vec<String> = self.args().keys().cloned().collect();
        let Value::Object(args) = &mut self.arguments else {
            unreachable!("normalised calls have object arguments")
        };
        let out = edit(args);
        let at = (self.location.line, self.location.column);
        self.arg_locations = args
            .keys()
            .map(|k| {
                before
                    .iter()
                    .position(|b| b == k)
                    .and_then(|i| self.arg_locations.get(i).copied())
                    .unwrap_or((at, at))
            })
            .collect();
        self.identity = crate::hash::identity(&self.arguments);
        out
    }

    /// The arguments as one run of bytes, equal exactly where the arguments are
    /// ([`crate::hash::identity`]).
    pub(crate) fn identity(&self) -> &[u8] {
        &self.identity
    }

    /// Whether `other` is the same call: the same tool (by name) and arguments equal value
    /// for value (`serde_json`'s `==`), told by one comparison of bytes.
    pub(crate) fn same_as(&self, other: &Call) -> bool {
        use crate::hash::same_bytes;
        same_bytes(self.tool.as_bytes(), other.tool.as_bytes())
            && same_bytes(&self.identity, &other.identity)
    }

    /// The YAML location a JSON pointer into the arguments refers to: the argument's own line
    /// for `/name` and anything under it, the call's line otherwise.
    pub fn location_of(&self, pointer: &str) -> Location {
        self.place(pointer, false)
    }

    /// Where a finding about this call points: under the argument's name for an unknown
    /// parameter (the name is what is wrong), under its value for anything else.
    pub fn location_for(&self, f: &crate::finding::Finding) -> Location {
        self.place(&f.pointer, f.code == crate::finding::Code::UnknownParam)
    }

    fn place(&self, pointer: &str, at_key: bool) -> Location {
        let first = pointer
            .trim_start_matches('/')
            .split('/')
            .next()
            .unwrap_or("");
        let first = crate::source::json::unescape(first);
        self.arguments
            .as_object()
            .and_then(|args| args.keys().position(|k| *k == *first))
            .and_then(|i| self.arg_locations.get(i))
            .map(|&(value, key)| if at_key { key } else { value })
            .map_or_else(
                || self.location.clone(),
                |(line, column)| Location {
                    file: self.location.file.clone(),
                    line,
                    column,
                },
            )
    }

    /// The arguments as the object they always are.
    pub fn args(&self) -> &Map<String, Value> {
        self.arguments
            .as_object()
            .expect("normalised calls have object arguments")
    }
}

/// One step of a scenario's oracle workflow.
#[derive(Clone, Debug)]
pub struct OracleCall {
    /// The call the step expects; its `output` is always `None` (see `mock_output`).
    pub call: Call,
    /// Why this call serves the step (`quick_explanation:`); quoted in `oracle.wrong_tool`
    /// messages and the judge's reference workflow.
    pub quick_explanation: Option<String>,
    /// How each argument is compared (`match:`), by parameter name; a parameter without an
    /// entry is [`MatchPolicy::Exact`].
    pub match_policies: BTreeMap<String, MatchPolicy>,
    /// What the mock tool returns (`mock_output:`): what `serve` answers, what a transcript
    /// call with no recorded `output` is taken to have got, and what tells which later steps
    /// consume this one's artifacts.
    pub mock_output: Option<Value>,
    /// How the mock output was grounded (`grounding:`); `None` when not recorded.
    pub grounding: Option<Grounding>,
    /// Other tools that do this step as well (`tool: [a, b]`: `call.tool` is `a`, this `[b]`),
    /// taking the same arguments.
    pub alternatives: Vec<String>,
    /// The step may be left out (`optional: true`).
    pub optional: bool,
    /// How many times the step must be done (`count:`, `min:`; 1 by default).
    pub min: u32,
    /// How many times it may be done (`count:`, `max:`); `None` for any number from `min` on.
    pub max: Option<u32>,
    /// For a step of an `any_of:` item: which item of the turn (`.0`) and which of its step
    /// lists (`.1`). A turn is done by one list of each item, with the steps outside them.
    pub branch: Option<(usize, usize)>,
    /// Argument positions whose values are literals the agent states, never references to
    /// something an earlier output produced (`literal: [ttl, /items/*/count]`): the flow
    /// engine does not infer a reference there, whatever the mock outputs echo.
    pub literal: Vec<String>,
}

impl OracleCall {
    /// Whether a call of `tool` does this step's tool (its own, or an alternative).
    pub fn accepts_tool(&self, tool: &str) -> bool {
        self.call.tool == tool || self.alternatives.iter().any(|a| a == tool)
    }

    /// The step's tool and its alternatives.
    pub fn tools(&self) -> impl Iterator<Item = &str> {
        std::iter::once(self.call.tool.as_str()).chain(self.alternatives.iter().map(String::as_str))
    }

    /// Whether the step is a plain one: one tool, done once, required, outside any `any_of`.
    pub fn is_plain(&self) -> bool {
        self.alternatives.is_empty()
            && !self.optional
            && self.min == 1
            && self.max == Some(1)
            && self.branch.is_none()
    }
}

/// A tool a scenario or turn must not call (`forbid:`): by name, or by what it does.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Forbid {
    /// `forbid: [delete_entities]`.
    Tool(String),
    /// `destructive`: any call that may destroy or overwrite (MCP `destructiveHint`).
    Destructive,
    /// `mutating`: any call that may change state (not `readOnlyHint`).
    Mutating,
    /// `open_world`: any call that reaches outside a closed domain (`openWorldHint`).
    OpenWorld,
}

impl std::fmt::Display for Forbid {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Forbid::Tool(t) => write!(f, "`{t}`"),
            Forbid::Destructive => f.write_str("destructive calls"),
            Forbid::Mutating => f.write_str("calls that change state"),
            Forbid::OpenWorld => f.write_str("open-world calls"),
        }
    }
}

/// One user turn of a scenario and the oracle workflow that serves it.
#[derive(Clone, Debug)]
pub struct Turn {
    /// The user's message (`prompt:`).
    pub prompt: String,
    /// The held-out oracle (`workflow:`), in the listed order; empty when the right answer is
    /// no tool call (usage necessity).
    pub workflow: Vec<OracleCall>,
    /// What a good reply says after the calls (`expected_response:`).
    pub expected_response: Option<String>,
    /// A natural next user message (`followup:`).
    pub followup: Option<String>,
    /// Whether every step must run in the listed order (`order: strict`).
    pub order_strict: bool,
    /// What the agent must not call in this turn (`forbid:`), with the scenario's.
    pub forbid: Vec<Forbid>,
}

impl Turn {
    /// Whether every step is plain ([`OracleCall::is_plain`]) and nothing is forbidden: the
    /// workflow is one list of steps, each done once.
    pub fn is_plain(&self) -> bool {
        self.forbid.is_empty() && self.workflow.iter().all(OracleCall::is_plain)
    }

    /// The step lists that do this turn: one per choice of a list in each `any_of:` item (one
    /// list when the turn has none), each in workflow order, as indices into `workflow`.
    pub fn variants(&self) -> Vec<Vec<usize>> {
        let mut groups: Vec<usize> = Vec::new(); // branch count per group
        for o in &self.workflow {
            if let Some((g, b)) = o.branch {
                if groups.len() <= g {
                    groups.resize(g + 1, 0);
                }
                groups[g] = groups[g].max(b + 1);
            }
        }
        let mut choices: Vec<Vec<usize>> = vec![Vec::new()];
        for &n in &groups {
            choices = choices
                .into_iter()
                .flat_map(|c| {
                    (0..n).map(move |b| {
                        let mut c = c.clone();
                        c.push(b);
                        c
                    })
                })
                .collect();
        }
        choices
            .into_iter()
            .map(|choice| {
                (0..self.workflow.len())
                    .filter(|&i| match self.workflow[i].branch {
                        None => true,
                        Some((g, b)) => choice[g] == b,
                    })
                    .collect()
            })
            .collect()
    }
}

/// One scenario of a harness (paper Table 1): a conversation and its oracle workflows.
#[derive(Clone, Debug)]
pub struct Scenario {
    /// Unique in the harness; what a transcript's `scenario:` names.
    pub id: String,
    /// `tier:`; `None` when not given.
    pub tier: Option<Tier>,
    /// A short title (`title:`).
    pub title: Option<String>,
    /// The use-case category (`category:`, e.g. `Marketing video`).
    pub category: Option<String>,
    /// Why the scenario is a useful test (`novelty_reason:`).
    pub novelty_reason: Option<String>,
    /// Values that exist before the conversation starts (the user's files, ids, buckets),
    /// beyond those the prompts mention: references to them are grounded.
    pub artifacts: Vec<String>,
    /// The user turns, in order; at least one.
    pub turns: Vec<Turn>,
    /// The pass threshold for this scenario's transcripts (`thresholds: {pass: …}`), over the
    /// suite's.
    pub pass: Option<f64>,
    /// Where the scenario's mapping starts in the harness file.
    pub location: Location,
    /// The scenario's own `ground:` (setup, files, env, skip); empty when not given.
    pub ground: Ground,
    /// What the engines work out from the scenario once, the first time a transcript asks.
    pub(crate) compiled: Compiled,
}

/// What the engines work out once per scenario, each part the first time a transcript asks
/// for it. A copy of a scenario starts without any (`clone` does not copy them): a copy is
/// made to be changed, and what was worked out from the original would not hold for it. (A
/// scenario changed in place after its first evaluation keeps what was worked out before:
/// change a copy.)
#[derive(Debug, Default)]
pub(crate) struct Compiled {
    /// The flow engine's reference positions inferred from this workflow, per tool: worked
    /// out once (`flow::inferred_references`), read by every transcript of the scenario.
    pub(crate) inferred_references:
        std::sync::OnceLock<std::collections::HashMap<String, Vec<String>>>,
    /// The tables and columns the workflow's own SQL names before any output does: the
    /// scenario takes them as known (`flow::sql_known`), worked out once.
    pub(crate) sql_known: std::sync::OnceLock<std::collections::HashSet<String>>,
    /// Every table and column the workflow's own SQL names (`flow::sql_names`).
    pub(crate) sql_names: std::sync::OnceLock<std::collections::HashSet<String>>,
    /// Per turn, per workflow step, the earlier steps whose mock output it takes (compiled
    /// once, for the oracle's ordering: `score::oracle::consumed`).
    pub(crate) consumed: std::sync::OnceLock<Vec<Vec<Vec<usize>>>>,
    /// Per turn, per workflow step, the parameters the oracle compares
    /// (`score::oracle::compared_params`), worked out once.
    pub(crate) compared: std::sync::OnceLock<Vec<Vec<Vec<Box<str>>>>>,
    /// How many times the workflow asks for each identical call (`flow::asked_calls`).
    pub(crate) asked_calls: std::sync::OnceLock<std::collections::HashMap<Box<[u8]>, usize>>,
    /// Per turn, its step lists ([`Turn::variants`]), worked out once
    /// (`score::oracle::variants`).
    pub(crate) variants: std::sync::OnceLock<Vec<Vec<Vec<usize>>>>,
    /// Per turn, per step list, how many calls each of its steps takes
    /// (`score::oracle::variant_times`).
    pub(crate) variant_times: std::sync::OnceLock<Vec<Vec<Vec<Times>>>>,
    /// Per turn, per workflow step, its values hashed (`score::oracle::step_keys`).
    pub(crate) keys: std::sync::OnceLock<Vec<Vec<crate::hash::StepKey>>>,
}

impl Clone for Compiled {
    /// None of it: see [`Compiled`].
    fn clone(&self) -> Self {
        Self::default()
    }
}

/// Gates a suite applies: a transcript passes at TC ≥ `pass`; the discrimination gate needs
/// mean(correct) − mean(broken) ≥ `min_gap`.
#[derive(Clone, Copy, Debug, PartialEq, Serialize)]
pub struct Thresholds {
    /// The lowest passing TC, in 0–1 (`thresholds.pass:`, default 0.8).
    pub pass: f64,
    /// The least mean TC(correct) − mean TC(broken) the gate accepts, in 0–1
    /// (`thresholds.min_gap:`, default 0.3).
    pub min_gap: f64,
    /// A trajectory gate (`thresholds.trajectory: {match: in_order, min: 1.0}`): a transcript
    /// whose literal trajectory match (ADK's `tool_trajectory_avg_score`) is below `min` fails,
    /// whatever its TC — what an imported ADK criterion asks.
    pub trajectory: Option<TrajectoryGate>,
    /// A mutation gate (`thresholds.mutation: 0.9`): the suite's `<suite>::mutation` trial fails
    /// when fewer than this share of its mutants (`agent-seer mutate`) are caught.
    pub mutation: Option<f64>,
}

/// How `agent-seer ground` prepares the real server for a scenario (`ground:` on the suite, a
/// scenario's own over it): every string may name `{scratch}` (the run's fresh folder),
/// `{scenario}` (the scenario's id) and `{harness_dir}` (the harness file's folder).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Ground {
    /// A shell command run in the fresh folder before the server starts (`setup:`).
    pub setup: Option<String>,
    /// Files written into the fresh folder before the setup runs (`files:`, path → text).
    pub files: BTreeMap<String, String>,
    /// The server command when none is given after `--` (`server:`; suite only).
    pub server: Vec<String>,
    /// Environment variables for the setup and the server (`env:`).
    pub env: BTreeMap<String, String>,
    /// Paths the suite writes, each with where it is in this run (`paths: {/home/dev/repo:
    /// "{scratch}/repo"}`): arguments are sent with the run's path, answers written back with
    /// the suite's (suite only).
    pub paths: BTreeMap<String, String>,
    /// A frozen clock for the server, UTC `YYYY-MM-DD HH:MM:SS` (`clock:`; suite only), through
    /// libfaketime, so answers that tell the time are the same on every run.
    pub clock: Option<String>,
    /// Why the scenario's oracle is not run against the server (`skip:`; scenario only).
    pub skip: Option<String>,
}

/// The least TPR and TNR (point estimates, 0–1) a judge must show on a suite's labelled
/// transcripts before its judge trials may gate (`judge: { certify: { tpr, tnr } }`; positive =
/// a broken transcript, see `agent-seer judge-certify`).
#[derive(Clone, Copy, Debug, PartialEq, Serialize)]
pub struct CertifyBar {
    /// The least share of broken (`expect: fail`) transcripts the judge must fail.
    pub tpr: f64,
    /// The least share of correct (`expect: pass`) transcripts it must pass.
    pub tnr: f64,
}

/// A minimum on one of ADK's trajectory matches.
#[derive(Clone, Copy, Debug, PartialEq, Serialize)]
pub struct TrajectoryGate {
    /// Which match.
    pub kind: TrajectoryMatch,
    /// The least passing value, in 0–1.
    pub min: f64,
}

/// ADK's match types for `tool_trajectory_avg_score`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum TrajectoryMatch {
    /// `exact`: the calls are the steps, in order, nothing else.
    Exact,
    /// `in_order`: the steps in order, extra calls allowed.
    InOrder,
    /// `any_order`: every step, in any order, extra calls allowed.
    AnyOrder,
}

impl TrajectoryMatch {
    /// The name in a harness (`exact`, `in_order`, `any_order`).
    pub fn name(self) -> &'static str {
        match self {
            TrajectoryMatch::Exact => "exact",
            TrajectoryMatch::InOrder => "in_order",
            TrajectoryMatch::AnyOrder => "any_order",
        }
    }
}

impl Default for Thresholds {
    fn default() -> Self {
        // The seeds' best LLM-judge gap was 0.248; we ask the deterministic stack for more.
        Self {
            pass: 0.8,
            min_gap: 0.3,
            trajectory: None,
            mutation: None,
        }
    }
}

/// A suite's harness file.
#[derive(Clone, Debug)]
pub struct Harness {
    /// The suite's name: the file's stem (a `suite:` key must equal it).
    pub suite: String,
    /// The harness file.
    pub path: PathBuf,
    /// What the suite covers (`description:`); not read by any engine.
    pub description: Option<String>,
    /// The server under test (`server:`, e.g. `mcp-veo-go`); not read by any engine.
    pub server: Option<String>,
    /// Tool spec files, resolved against the harness file's directory.
    pub tools: Vec<PathBuf>,
    /// Capability matrices (`capabilities:`), resolved against the harness file's directory;
    /// empty for none.
    pub capabilities: Vec<PathBuf>,
    /// The suite's gates, defaults filled in.
    pub thresholds: Thresholds,
    /// Finding severities the suite sets over the codes' own (`severity:`).
    pub severity: BTreeMap<Code, Severity>,
    /// The judge certification its judge trials require (`judge: { certify: … }`), if any.
    pub certify: Option<CertifyBar>,
    /// The scenarios in file order; ids are unique.
    pub scenarios: Vec<Scenario>,
    /// How `agent-seer ground` prepares the real server (`ground:`); empty when not given.
    pub ground: Ground,
    /// The file's text, for errors that quote it.
    pub source: SourceFile,
    // Where each file reference is written, for "missing file" errors.
    refs: BTreeMap<PathBuf, (u32, u32)>,
}

impl Harness {
    /// Reads and loads a harness file.
    pub fn load(path: &Path) -> Result<Self, SourceError> {
        Self::from_source(SourceFile::read(path)?)
    }

    /// Loads a harness from text already read; the suite name comes from `file.path`'s stem.
    /// Unknown keys, a `suite:` unlike the stem, duplicate scenario ids, a scenario without
    /// turns and a malformed call or policy are errors at their line.
    pub fn from_source(file: SourceFile) -> Result<Self, SourceError> {
        let raw: RawHarness = file.parse_yaml()?;
        Self::from_raw(file, raw)
    }

    /// [`Harness::from_source`], and the JSON snapshot of what the file parsed to
    /// ([`crate::source::spanned::snapshot`]; `None` when it would not read back the same).
    pub(crate) fn with_snapshot(file: SourceFile) -> Result<(Self, Option<String>), SourceError> {
        let raw: RawHarness = file.parse_yaml()?;
        let json = crate::source::spanned::snapshot(&raw);
        Ok((Self::from_raw(file, raw)?, json))
    }

    /// The harness of `file` from the snapshot [`Harness::with_snapshot`] took of it, without
    /// parsing its YAML; `None` when `json` is no such snapshot.
    pub(crate) fn from_snapshot(file: SourceFile, json: &str) -> Option<Result<Self, SourceError>> {
        let raw: RawHarness = crate::source::spanned::from_snapshot(json)?;
        Some(Self::from_raw(file, raw))
    }

    fn from_raw(file: SourceFile, raw: RawHarness) -> Result<Self, SourceError> {
        let stem = file_stem(&file.path);
        let suite = match raw.suite {
            Some(s) if s.value != stem => {
                return Err(at(
                    &file,
                    &s,
                    format!(
                        "suite `{}` must be named like its file (`{stem}`), so trial names map back to files",
                        s.value
                    ),
                ));
            }
            Some(s) => s.value,
            None => stem,
        };
        let dir = file
            .path
            .parent()
            .map(Path::to_path_buf)
            .unwrap_or_default();
        let mut refs = BTreeMap::new();
        let mut resolve = |list: &[Spanned<String>]| -> Vec<PathBuf> {
            list.iter()
                .map(|s| {
                    let p = crate::source::join_tidy(&dir, Path::new(&s.value));
                    refs.insert(
                        p.clone(),
                        (s.referenced.line() as u32, s.referenced.column() as u32),
                    );
                    p
                })
                .collect()
        };
        let tools = match &raw.tools {
            Some(list) => resolve(list),
            None => vec![crate::source::join_tidy(
                &dir,
                Path::new(&format!("{suite}.tools.json")),
            )],
        };
        let capabilities = resolve(&raw.capabilities);
        let mut thresholds = Thresholds::default();
        if let Some(t) = raw.thresholds {
            if let Some(p) = &t.pass {
                thresholds.pass = threshold(&file, "thresholds.pass", p)?;
            }
            if let Some(m) = &t.mutation {
                thresholds.mutation = Some(threshold(&file, "thresholds.mutation", m)?);
            }
            if let Some(g) = &t.min_gap {
                thresholds.min_gap = threshold(&file, "thresholds.min_gap", g)?;
            }
            if let Some(g) = &t.trajectory {
                let kind = match g.value.kind.value.as_str() {
                    "exact" => TrajectoryMatch::Exact,
                    "in_order" => TrajectoryMatch::InOrder,
                    "any_order" => TrajectoryMatch::AnyOrder,
                    other => {
                        return Err(at(
                            &file,
                            &g.value.kind,
                            format!(
                                "unknown trajectory match `{other}`: exact, in_order or any_order"
                            ),
                        ));
                    }
                };
                thresholds.trajectory = Some(TrajectoryGate {
                    kind,
                    min: threshold(&file, "thresholds.trajectory.min", &g.value.min)?,
                });
            }
        }
        let suite_ground = match &raw.ground {
            Some(g) => ground(&file, g, true)?,
            None => Ground::default(),
        };
        let certify = match raw.judge.as_ref().and_then(|j| j.certify.as_ref()) {
            Some(c) => Some(CertifyBar {
                tpr: threshold(&file, "judge.certify.tpr", &c.value.tpr)?,
                tnr: threshold(&file, "judge.certify.tnr", &c.value.tnr)?,
            }),
            None => None,
        };
        let mut severity = BTreeMap::new();
        for (code, level) in &raw.severity {
            let Some(c) = Code::parse(code) else {
                let hint = crate::finding::did_you_mean(code, Code::ALL.iter().map(|c| c.as_str()));
                return Err(at(
                    &file,
                    level,
                    format!("`severity:` names `{code}`, which is no finding code{hint}"),
                ));
            };
            let s = match level.value.as_str() {
                "error" => Severity::Error,
                "warning" => Severity::Warning,
                "info" => Severity::Info,
                other => {
                    return Err(at(
                        &file,
                        level,
                        format!(
                            "unknown severity `{other}` for `{code}`: use error, warning or info"
                        ),
                    ));
                }
            };
            severity.insert(c, s);
        }
        let mut scenarios: Vec<Scenario> = Vec::with_capacity(raw.scenarios.len());
        for sc in raw.scenarios {
            // An id names files (`run`'s transcripts, `generate`'s mocks): a plain file name.
            if let Err(e) = crate::source::file_name(&sc.value.id.value) {
                return Err(at(&file, &sc.value.id, format!("scenario id {e}")));
            }
            if scenarios.iter().any(|s| s.id == sc.value.id.value) {
                return Err(at(
                    &file,
                    &sc.value.id,
                    format!("duplicate scenario id `{}`", sc.value.id.value),
                ));
            }
            if sc.value.turns.is_empty() {
                return Err(at(
                    &file,
                    &sc,
                    format!("scenario `{}` has no turns", sc.value.id.value),
                ));
            }
            let location = loc(&file, &sc);
            let scenario_forbid = forbids(&file, &sc.value.forbid)?;
            let ground = match &sc.value.ground {
                Some(g) => ground(&file, g, false)?,
                None => Ground::default(),
            };
            let pass = match &sc.value.thresholds {
                Some(t) => Some(threshold(&file, "thresholds.pass", &t.value.pass)?),
                None => None,
            };
            let mut turns = Vec::new();
            for t in sc.value.turns {
                let workflow = workflow(&file, t.workflow)?;
                let mut forbid = scenario_forbid.clone();
                forbid.extend(forbids(&file, &t.forbid)?);
                for o in &workflow {
                    if let Some(tool) = o
                        .tools()
                        .find(|t| forbid.contains(&Forbid::Tool((*t).to_owned())))
                    {
                        return Err(file.error_at(
                            o.call.location.line,
                            o.call.location.column,
                            format!("the workflow calls `{tool}`, which `forbid:` forbids"),
                        ));
                    }
                }
                turns.push(Turn {
                    prompt: t.prompt,
                    workflow,
                    expected_response: t.expected_response,
                    followup: t.followup,
                    order_strict: t.order == Some(Order::Strict),
                    forbid,
                });
            }
            scenarios.push(Scenario {
                id: sc.value.id.value.clone(),
                tier: sc.value.tier,
                title: sc.value.title,
                category: sc.value.category,
                novelty_reason: sc.value.novelty_reason,
                artifacts: sc.value.artifacts,
                turns,
                pass,
                location,
                ground,
                compiled: Compiled::default(),
            });
        }
        Ok(Harness {
            suite,
            path: file.path.to_path_buf(),
            description: raw.description,
            server: raw.server,
            tools,
            capabilities,
            thresholds,
            severity,
            certify,
            scenarios,
            ground: suite_ground,
            source: file,
            refs,
        })
    }

    /// The scenario with this id.
    pub fn scenario(&self, id: &str) -> Option<&Scenario> {
        self.scenarios.iter().find(|s| s.id == id)
    }

    /// An error about a file this harness references, pointing at the reference.
    pub fn reference_error(&self, referenced: &Path, err: &SourceError) -> SourceError {
        let restated = match self.refs.get(referenced) {
            Some(&(l, c)) => {
                self.source
                    .error_at(l, c, format!("{}: {}", referenced.display(), err.message))
            }
            None => self
                .source
                .error(format!("{}: {}", referenced.display(), err.message)),
        };
        err.restated_as(restated)
    }
}

/// A transcript's label: what a correct evaluator must conclude about it.
#[derive(Clone, Debug, Default)]
pub struct Label {
    /// `expect:`; `None` is held to `pass` by its trial and left out of the discrimination
    /// gate.
    pub expect: Option<Expect>,
    /// What a correct evaluator must detect: finding codes, sub-dimensions, dimensions or
    /// engines (see [`crate::finding::Finding::matches_fault`]).
    pub faults: Vec<String>,
    /// An expected failure of this trial: reported, not gating; if the trial passes, it fails
    /// (strict, like pytest's `xfail(strict=True)`).
    pub xfail: Option<String>,
}

/// One turn of a transcript: what the agent called and said.
#[derive(Clone, Debug)]
pub struct TranscriptTurn {
    /// The user's message as recorded (`prompt:`); `None` means the scenario's prompt for
    /// this turn or, on the first turn, the transcript's `prompt:`.
    pub prompt: Option<String>,
    /// The agent's calls in order, each with the `output` it got where one was recorded.
    pub calls: Vec<Call>,
    /// The agent's final text for the turn (`reply:`).
    pub reply: Option<String>,
}

/// What an agent did, turn by turn.
#[derive(Clone, Debug)]
pub struct Transcript {
    /// Its id: the file stem with [`Transcript::load`], the caller's with
    /// [`Transcript::from_source`].
    pub id: String,
    /// The transcript file.
    pub path: PathBuf,
    /// The harness scenario it answers (`scenario:`); `None` for an inline `prompt:` only.
    pub scenario: Option<String>,
    /// Where `scenario:` is written, for an "unknown scenario" error.
    pub scenario_location: Option<Location>,
    /// An inline user prompt (`prompt:`), for transcripts without a scenario.
    pub prompt: Option<String>,
    /// Which agent produced it (`agent:`, provenance); not graded.
    pub agent: Option<String>,
    /// A free-form note (`note:`); not graded.
    pub note: Option<String>,
    /// What a correct evaluator must conclude (`expect`, `faults`, `xfail`).
    pub label: Label,
    /// The turns; top-level `calls:` and `reply:` load as one turn without a prompt.
    pub turns: Vec<TranscriptTurn>,
    /// The trace it was read from, for a recorded run that came from one (OTLP): results go
    /// back next to it.
    pub trace: Option<TraceLink>,
    /// The file's text, for errors that quote it.
    pub source: SourceFile,
}

/// The trace and span a recorded run came from, ids in lowercase hex (as OTLP JSON writes
/// them).
#[derive(Clone, Debug, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct TraceLink {
    /// `traceId`: 32 hex digits.
    pub trace_id: String,
    /// `spanId` of the run's root span (the agent's invocation): 16 hex digits.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub span_id: Option<String>,
}

impl Transcript {
    /// Loads a transcript; its id is the file stem.
    pub fn load(path: &Path) -> Result<Self, SourceError> {
        let id = file_stem(path);
        Self::from_source(SourceFile::read(path)?, id)
    }

    /// Loads a transcript from text already read, with the id given. It needs `scenario:` or
    /// `prompt:`; unknown keys and fault names, `faults` with `expect: pass`, both `turns:` and
    /// `calls:`, and harness-only keys on a call are errors at their line.
    pub fn from_source(file: SourceFile, id: String) -> Result<Self, SourceError> {
        let raw: RawTranscript = file.parse_yaml()?;
        if raw.scenario.is_none() && raw.prompt.is_none() {
            return Err(file.error_at(1, 1, "a transcript needs `scenario:` (an id in the suite's harness) or an inline `prompt:`"));
        }
        let faults = raw.faults.iter().map(|f| f.value.as_str());
        if let Some((i, why)) = refused_fault(raw.expect, faults) {
            return Err(at(&file, &raw.faults[i], why));
        }
        let turns = match (raw.turns, raw.calls) {
            (Some(_), Some(calls)) => {
                let first = calls.first().map_or((1, 1), |c| {
                    (c.referenced.line() as u32, c.referenced.column() as u32)
                });
                return Err(file.error_at(
                    first.0,
                    first.1,
                    "use either `turns:` or top-level `calls:`, not both",
                ));
            }
            (Some(turns), None) => turns
                .into_iter()
                .map(|t| {
                    Ok(TranscriptTurn {
                        prompt: t.prompt,
                        calls: t
                            .calls
                            .into_iter()
                            .map(|c| transcript_call(&file, c))
                            .collect::<Result<_, _>>()?,
                        reply: t.reply,
                    })
                })
                .collect::<Result<Vec<_>, SourceError>>()?,
            (None, calls) => vec![TranscriptTurn {
                prompt: None,
                calls: calls
                    .unwrap_or_default()
                    .into_iter()
                    .map(|c| transcript_call(&file, c))
                    .collect::<Result<_, _>>()?,
                reply: raw.reply,
            }],
        };
        Ok(Transcript {
            id,
            path: file.path.to_path_buf(),
            scenario_location: raw.scenario.as_ref().map(|s| loc(&file, s)),
            scenario: raw.scenario.map(|s| s.value),
            prompt: raw.prompt,
            agent: raw.agent,
            note: raw.note,
            label: Label {
                expect: raw.expect,
                faults: raw.faults.into_iter().map(|f| f.value).collect(),
                xfail: raw.xfail,
            },
            turns,
            trace: None,
            source: file,
        })
    }

    /// The calls of turn `i` (none for a turn the transcript never reached).
    pub fn turn_calls(&self, i: usize) -> Vec<&Call> {
        self.turns
            .get(i)
            .map(|tt| tt.calls.iter().collect())
            .unwrap_or_default()
    }

    /// Every call, across turns, with its turn index.
    pub fn calls(&self) -> impl Iterator<Item = (usize, &Call)> {
        self.turns
            .iter()
            .enumerate()
            .flat_map(|(i, t)| t.calls.iter().map(move |c| (i, c)))
    }
}

/// The first of a label's faults a transcript may not give, and why: one no finding code,
/// sub-dimension, dimension or engine names, else any under `expect: pass`.
pub(super) fn refused_fault<'f>(
    expect: Option<Expect>,
    faults: impl IntoIterator<Item = &'f str>,
) -> Option<(usize, String)> {
    let mut any = false;
    for (i, f) in faults.into_iter().enumerate() {
        if !is_known_fault(f) {
            return Some((
                i,
                format!(
                    "unknown fault `{f}`: name a finding code (`cap.unsupported_value`), a sub-dimension (`argument_value`), a dimension (`selection`) or an engine (`lint`, `cap`, `flow`, `oracle`)"
                ),
            ));
        }
        any = true;
    }
    (any && expect == Some(Expect::Pass))
        .then(|| (0, "`faults` contradicts `expect: pass`".to_owned()))
}

fn file_stem(path: &Path) -> String {
    path.file_stem()
        .map(|s| s.to_string_lossy().into_owned())
        .unwrap_or_default()
}

fn loc<T>(file: &SourceFile, s: &Spanned<T>) -> Location {
    let (line, column) = position(s);
    file.location(line, column)
}

/// A node's line and column, for [`SourceFile::location`].
fn position<T>(s: &Spanned<T>) -> (u32, u32) {
    (
        s.referenced.line() as u32,
        s.referenced.column().max(1) as u32,
    )
}

/// Where the key `key` of a mapping entry whose value is at `value` is written: the caret for
/// an unknown parameter belongs under its name, not its value. The key is looked for before
/// the value, on its line or (a block value) the line above; `value` when it is not found (a
/// key written in an unusual way).
fn key_position(file: &SourceFile, key: &str, value: (u32, u32)) -> (u32, u32) {
    let (line, column) = value;
    // One line from the file's line index, and only the text before the value searched, from
    // the value back: linear in the file, however many arguments it holds (issue 31).
    // Columns are characters: in an ASCII file (asked once per file, not per line) bytes.
    let ascii = file.is_ascii();
    let search = |l: u32, upto: Option<usize>| -> Option<(u32, u32)> {
        let text = file.line(l)?;
        let head = match upto {
            Some(chars) if ascii => &text[..chars.min(text.len())],
            Some(chars) => text
                .char_indices()
                .nth(chars)
                .map_or(text, |(byte, _)| &text[..byte]),
            None => text,
        };
        let byte = last_key(head, key)?;
        let column = if ascii {
            byte
        } else {
            head[..byte].chars().count()
        };
        Some((l, column as u32 + 1))
    };
    search(line, Some(column.saturating_sub(1) as usize))
        .or_else(|| search(line.saturating_sub(1), None))
        .unwrap_or(value)
}

/// The byte where the last of `key:`, `"key":` or `'key':` in `head` starts: the occurrences of
/// `key` from the end, the first one written as a key wins (a quoted one starts at its quote).
fn last_key(head: &str, key: &str) -> Option<usize> {
    if key.is_empty() {
        return head.rfind(':');
    }
    let mut best: Option<usize> = None;
    for (at, _) in head.rmatch_indices(key) {
        // An earlier occurrence starts at `at - 1` at the latest: it cannot beat one found.
        if best.is_some_and(|b| at + 1 < b) {
            break;
        }
        let after = &head[at + key.len()..];
        let before = head[..at].chars().next_back();
        let start = if after.starts_with(':') {
            Some(at)
        } else if (after.starts_with("\":") && before == Some('"'))
            || (after.starts_with("':") && before == Some('\''))
        {
            Some(at - 1)
        } else {
            None
        };
        if let Some(s) = start {
            best = Some(best.map_or(s, |b: usize| b.max(s)));
        }
    }
    best
}

/// A gate's threshold: a finite number within 0–1. A NaN compares false with every TC and
/// gap, so it would switch the gate off (issue 18, item 7); out of range it passes or fails
/// everything.
/// A `ground:` mapping; `suite` says whether the suite-only keys may appear.
fn ground(
    file: &SourceFile,
    g: &Spanned<super::raw::RawGround>,
    suite: bool,
) -> Result<Ground, SourceError> {
    let v = &g.value;
    if !suite {
        let only = [
            ("server", v.server.is_some()),
            ("paths", v.paths.is_some()),
            ("clock", v.clock.is_some()),
        ];
        if let Some((key, _)) = only.iter().find(|(_, set)| *set) {
            return Err(at(
                file,
                g,
                format!(
                    "`ground.{key}` belongs to the suite's `ground:`, not a scenario's (one server, one clock, one set of paths per suite)"
                ),
            ));
        }
    } else if let Some(s) = &v.skip {
        return Err(at(
            file,
            s,
            "`ground.skip` belongs to a scenario: it says why that scenario's oracle is not run against the server".into(),
        ));
    }
    let clock = match &v.clock {
        Some(c) => Some(clock(&c.value).ok_or_else(|| {
            at(
                file,
                c,
                format!("`ground.clock` `{}`: write a UTC time `YYYY-MM-DD HH:MM:SS` (or `YYYY-MM-DDTHH:MM:SSZ`)", c.value),
            )
        })?),
        None => None,
    };
    if let Some(s) = &v.server
        && s.value.is_empty()
    {
        return Err(at(file, s, "`ground.server` is empty: give the command and its arguments, `[mcp-server-git, --repository, \"{scratch}/repo\"]`".into()));
    }
    for name in v.files.keys() {
        if !relative_inside(name) {
            return Err(at(
                file,
                g,
                format!(
                    "`ground.files` `{name}`: a file is named by a relative path inside the run's folder (no `..`, not absolute)"
                ),
            ));
        }
    }
    Ok(Ground {
        setup: v.setup.clone(),
        files: v.files.clone(),
        server: v
            .server
            .as_ref()
            .map(|s| s.value.clone())
            .unwrap_or_default(),
        env: v.env.clone(),
        paths: v
            .paths
            .as_ref()
            .map(|p| p.value.clone())
            .unwrap_or_default(),
        clock,
        skip: v.skip.as_ref().map(|s| s.value.clone()),
    })
}

/// `a/b.txt`: relative, every component a plain name.
fn relative_inside(path: &str) -> bool {
    let p = Path::new(path);
    !path.is_empty()
        && p.components()
            .all(|c| matches!(c, std::path::Component::Normal(_)))
}

/// `YYYY-MM-DD HH:MM:SS` (a `T` and a trailing `Z` accepted), as libfaketime reads it.
fn clock(text: &str) -> Option<String> {
    let t = text.trim().trim_end_matches('Z').replacen('T', " ", 1);
    let b = t.as_bytes();
    let shape = b.len() == 19
        && b.iter().enumerate().all(|(i, c)| match i {
            4 | 7 => *c == b'-',
            10 => *c == b' ',
            13 | 16 => *c == b':',
            _ => c.is_ascii_digit(),
        });
    shape.then_some(t)
}

fn threshold(file: &SourceFile, key: &str, v: &Spanned<f64>) -> Result<f64, SourceError> {
    if v.value.is_finite() && (0.0..=1.0).contains(&v.value) {
        Ok(v.value)
    } else {
        Err(at(
            file,
            v,
            format!("`{key}` must be a number within 0–1, got {}", v.value),
        ))
    }
}

fn at<T>(file: &SourceFile, s: &Spanned<T>, msg: String) -> SourceError {
    file.error_at(
        s.referenced.line() as u32,
        s.referenced.column().max(1) as u32,
        msg,
    )
}

/// Normalises any accepted call shape. Exactly one name field and at most one arguments field.
fn call_shape(file: &SourceFile, sc: &Spanned<RawCall>) -> Result<Call, SourceError> {
    let c = &sc.value;
    if let Some(kind) = c.kind.as_deref().filter(|k| *k != "function") {
        return Err(at(
            file,
            sc,
            format!("call `type: {kind}` is not supported; tool calls have `type: function`"),
        ));
    }
    let tool_name = match &c.tool {
        None => None,
        Some(RawToolName::One(t)) => Some(t),
        Some(RawToolName::Many(ts)) => match ts.first() {
            Some(t) => Some(t),
            None => return Err(at(file, sc, "`tool: []` names no tool".into())),
        },
    };
    let names: Vec<&String> = [c.function_name.as_ref(), c.name.as_ref(), tool_name]
        .into_iter()
        .flatten()
        .collect();
    let location = loc(file, sc);
    let (tool, args, arg_base): (String, Option<&Spanned<Args>>, Option<Value>) =
        match (&c.function, names.as_slice()) {
            (Some(f), []) => {
                if c.parameters.is_some() || c.arguments.is_some() {
                    return Err(at(
                        file,
                        sc,
                        "an OpenAI-shaped call carries its arguments inside `function`".into(),
                    ));
                }
                let parsed = match &f.arguments {
                    None => None,
                    Some(a) => Some(match &a.value {
                        Value::String(s) if s.trim().is_empty() => Value::Object(Map::new()),
                        Value::String(s) => serde_json::from_str::<Value>(s).map_err(|e| {
                            at(
                                file,
                                a,
                                format!("`function.arguments` is not valid JSON: {}", e),
                            )
                        })?,
                        other => other.clone(),
                    }),
                };
                (f.name.clone(), None, parsed)
            }
            (Some(_), _) => {
                return Err(at(
                    file,
                    sc,
                    "a call has either `function` (OpenAI shape) or a name field, not both".into(),
                ));
            }
            (None, [one]) => {
                let args = match (&c.parameters, &c.arguments) {
                    (Some(_), Some(_)) => {
                        return Err(at(
                            file,
                            sc,
                            "a call has either `parameters` or `arguments`, not both".into(),
                        ));
                    }
                    (p, a) => p.as_ref().or(a.as_ref()),
                };
                ((*one).clone(), args, None)
            }
            (None, []) => {
                return Err(at(
                    file,
                    sc,
                    "a call needs a tool name: `function_name`, `name`, `tool` or `function.name`"
                        .into(),
                ));
            }
            (None, _) => {
                return Err(at(
                    file,
                    sc,
                    "a call has more than one of `function_name`, `name`, `tool`".into(),
                ));
            }
        };
    let mut arg_locations = Vec::new();
    let arguments = match (args, arg_base) {
        (Some(map), _) => {
            // Both maps order their keys alike, so the positions line up.
            arg_locations = map
                .value
                .iter()
                .map(|(k, v)| (position(v), key_position(file, k, position(v))))
                .collect();
            Value::Object(
                map.value
                    .iter()
                    .map(|(k, v)| (k.clone(), v.value.clone()))
                    .collect(),
            )
        }
        (None, Some(Value::Object(obj))) => Value::Object(obj),
        (None, Some(other)) => {
            return Err(at(
                file,
                sc,
                format!(
                    "`function.arguments` must be a JSON object, got {}",
                    crate::finding::type_name(&other)
                ),
            ));
        }
        (None, None) => Value::Object(Map::new()),
    };
    if let Some(f) = &c.function
        && let Some(a) = &f.arguments
    {
        // JSON-string arguments have no per-key YAML positions: point at the string.
        let n = arguments.as_object().map_or(0, Map::len);
        arg_locations = vec![(position(a), position(a)); n];
    }
    Ok(Call {
        identity: crate::hash::identity(&arguments),
        tool,
        arguments,
        output: None,
        id: c.id.clone(),
        location,
        arg_locations,
    })
}

fn transcript_call(file: &SourceFile, sc: Spanned<RawCall>) -> Result<Call, SourceError> {
    let c = &sc.value;
    if c.quick_explanation.is_some()
        || !c.match_policies.is_empty()
        || c.mock_output.is_some()
        || c.grounding.is_some()
        || c.optional
        || c.count.is_some()
        || c.min.is_some()
        || c.max.is_some()
        || c.any_of.is_some()
        || !c.literal.is_empty()
        || c.per_item.is_some()
    {
        return Err(at(file, &sc, "`quick_explanation`, `match`, `mock_output`, `grounding`, `optional`, `count`, `min`, `max`, `literal` and `any_of` belong to a harness workflow; a transcript call records `output`".into()));
    }
    if matches!(c.tool, Some(RawToolName::Many(_))) {
        return Err(at(
            file,
            &sc,
            "a transcript call names one tool; `tool: [a, b]` lists a workflow step's alternatives"
                .into(),
        ));
    }
    let mut call = call_shape(file, &sc)?;
    call.output = sc.value.output;
    Ok(call)
}

/// Every form a match policy takes, for the loader's errors.
const POLICY_FORMS: &str = "a match policy is a name (exact, ignore, from_output, semantic, absent, unordered, sql, path) or one of {regex: …, not: …}, {sql: dialect}, {path: directory}, {any_of: […], optional: …, normalize: …, strict_integer: …}, {tolerance: …}";

fn oracle_call(file: &SourceFile, sc: Spanned<RawCall>) -> Result<OracleCall, SourceError> {
    if sc.value.output.is_some() {
        return Err(at(
            file,
            &sc,
            "an oracle call gives `mock_output` (what the mock tool returns), not `output`".into(),
        ));
    }
    let call = call_shape(file, &sc)?;
    let mut match_policies = BTreeMap::new();
    for (param, p) in &sc.value.match_policies {
        let policy = match &p.value {
            RawPolicy::Named(n) => match n.as_str() {
                "exact" => MatchPolicy::Exact,
                "ignore" => MatchPolicy::Ignore,
                "from_output" => MatchPolicy::FromOutput,
                "semantic" => MatchPolicy::Semantic,
                "absent" => MatchPolicy::Absent,
                "unordered" => MatchPolicy::Unordered,
                "sql" => MatchPolicy::Sql(None),
                "path" => MatchPolicy::Path(None),
                other => {
                    return Err(at(
                        file,
                        p,
                        format!("unknown match policy `{other}`: {POLICY_FORMS}"),
                    ));
                }
            },
            RawPolicy::Regex { regex, not } => {
                let compile = |re: &str, what: &str| {
                    LazyRegex::new(re)
                        .map_err(|e| at(file, p, format!("invalid {what} in match policy: {e}")))
                };
                MatchPolicy::Regex(
                    compile(regex, "regex")?,
                    not.as_deref()
                        .map(|n| compile(n, "`not` regex"))
                        .transpose()?,
                )
            }
            RawPolicy::AnyOf(a) => MatchPolicy::AnyOf(AnyOf {
                options: a.any_of.clone(),
                optional: a.optional,
                normalize: match a.normalize.as_deref() {
                    None => None,
                    Some("bfcl") => Some(Normalize::Bfcl),
                    Some("path") => Some(Normalize::Path),
                    Some(other) => {
                        return Err(at(
                            file,
                            p,
                            format!("unknown `normalize: {other}`: use `bfcl` or `path`"),
                        ));
                    }
                },
                strict_integer: a.strict_integer,
            }),
            RawPolicy::Tolerance { tolerance } => MatchPolicy::Tolerance(*tolerance),
            RawPolicy::Path { path } => {
                if !path.starts_with('/') && !path.contains("://") {
                    return Err(at(
                        file,
                        p,
                        format!(
                            "`{{path: {path}}}` reads relative paths from a directory, so it names one from its root (`/srv/data`)"
                        ),
                    ));
                }
                MatchPolicy::Path(Some(path.clone()))
            }
            RawPolicy::Unknown(v) => {
                let keys: Vec<String> = v
                    .as_object()
                    .map(|m| m.keys().map(|k| format!("`{k}`")).collect())
                    .unwrap_or_default();
                return Err(at(
                    file,
                    p,
                    format!(
                        "{POLICY_FORMS}; got {}{}",
                        crate::spec::kind_of(v),
                        if keys.is_empty() {
                            String::new()
                        } else {
                            format!(" with {}", keys.join(", "))
                        }
                    ),
                ));
            }
            RawPolicy::Sql { sql } => {
                if !crate::sql::is_dialect(sql) {
                    return Err(at(
                        file,
                        p,
                        format!(
                            "unknown SQL dialect `{sql}`: use one of {}",
                            crate::sql::DIALECTS.join(", ")
                        ),
                    ));
                }
                MatchPolicy::Sql(Some(sql.clone()))
            }
        };
        // The step's own value there, where one key names it (`*` names many).
        let value = || {
            if param.starts_with('/') {
                (!param.contains('*'))
                    .then(|| call.arguments.pointer(param))
                    .flatten()
            } else {
                call.arguments.get(param)
            }
        };
        let refused = match policy {
            MatchPolicy::Unordered => value().filter(|v| !v.is_array()).map(|v| {
                format!(
                    "`unordered` compares an array's items in any order, but the step's `{param}` is {}",
                    crate::spec::kind_of(v)
                )
            }),
            MatchPolicy::Path(_) => value().filter(|v| !v.is_string()).map(|v| {
                format!(
                    "`path` compares a string as a path, but the step's `{param}` is {}{}",
                    crate::spec::kind_of(v),
                    if v.is_array() {
                        format!(" (its items: `/{}/*: path`)", param.trim_start_matches('/'))
                    } else {
                        String::new()
                    }
                )
            }),
            _ => None,
        };
        if let Some(why) = refused {
            return Err(at(file, p, why));
        }
        match_policies.insert(param.clone(), policy);
    }
    for key in match_policies.keys().filter(|k| k.starts_with('/')) {
        if key.len() == 1 || key.contains("//") {
            return Err(at(
                file,
                &sc,
                format!(
                    "`match:` key `{key}` is no JSON pointer into the arguments (`/param/0/field`, `*` for every item)"
                ),
            ));
        }
    }
    let (min, max) = match (sc.value.count, sc.value.min, sc.value.max) {
        (Some(_), Some(_), _) | (Some(_), _, Some(_)) => {
            return Err(at(
                file,
                &sc,
                "a step gives `count`, or `min`/`max`, not both".into(),
            ));
        }
        (Some(0), _, _) => {
            return Err(at(
                file,
                &sc,
                "`count: 0`: a step done no times is no step (use `forbid:`)".into(),
            ));
        }
        (Some(n), _, _) => (n, Some(n)),
        (None, lo, hi) => {
            let lo = lo.unwrap_or(1);
            if hi.is_some_and(|h| h < lo.max(1)) {
                return Err(at(
                    file,
                    &sc,
                    format!("`max: {}` is below `min: {lo}` (or 1)", hi.unwrap_or(0)),
                ));
            }
            // `min: 0` is `optional: true`.
            (
                lo,
                if sc.value.min.is_none() && sc.value.max.is_none() {
                    Some(1)
                } else {
                    hi
                },
            )
        }
    };
    let v = sc.value;
    let alternatives = match v.tool {
        Some(RawToolName::Many(ts)) => ts.into_iter().skip(1).collect(),
        _ => Vec::new(),
    };
    Ok(OracleCall {
        call,
        quick_explanation: v.quick_explanation,
        match_policies,
        mock_output: v.mock_output,
        grounding: v.grounding,
        alternatives,
        optional: v.optional || min == 0,
        min: min.max(1),
        max,
        branch: None,
        literal: v
            .literal
            .iter()
            .map(|p| crate::spec::capability::position(p))
            .collect(),
    })
}

/// A turn's `workflow:`: its steps, an `any_of:` item's lists flattened into it with their
/// [`OracleCall::branch`].
fn workflow(
    file: &SourceFile,
    items: Vec<Spanned<RawCall>>,
) -> Result<Vec<OracleCall>, SourceError> {
    let mut out = Vec::new();
    let mut group = 0;
    for mut item in items {
        if let Some(per) = item.value.per_item.take() {
            if item.value.any_of.is_some() {
                return Err(at(
                    file,
                    &item,
                    "`per_item:` belongs to a step, not to an `any_of:` item".into(),
                ));
            }
            let batch = oracle_call(file, item)?;
            let each = per_item_steps(file, &batch, &per)?;
            let mut b = batch;
            b.branch = Some((group, 0));
            out.push(b);
            for mut o in each {
                o.branch = Some((group, 1));
                out.push(o);
            }
            group += 1;
            continue;
        }
        let Some(lists) = item.value.any_of.take() else {
            out.push(oracle_call(file, item)?);
            continue;
        };
        let c = &item.value;
        let alone = c.function_name.is_none()
            && c.name.is_none()
            && c.tool.is_none()
            && c.function.is_none()
            && c.parameters.is_none()
            && c.arguments.is_none()
            && c.match_policies.is_empty()
            && c.mock_output.is_none()
            && !c.optional
            && c.count.is_none()
            && c.min.is_none()
            && c.max.is_none();
        if !alone {
            return Err(at(
                file,
                &item,
                "an `any_of:` item holds step lists and nothing else".into(),
            ));
        }
        if lists.len() < 2 || lists.iter().any(Vec::is_empty) {
            return Err(at(
                file,
                &item,
                "`any_of:` needs two or more non-empty step lists".into(),
            ));
        }
        for (b, list) in lists.into_iter().enumerate() {
            for step in list {
                if step.value.any_of.is_some() {
                    return Err(at(file, &step, "`any_of:` items do not nest".into()));
                }
                if step.value.per_item.is_some() {
                    return Err(at(
                        file,
                        &step,
                        "`per_item:` is an `any_of:` of its own: it does not go inside one".into(),
                    ));
                }
                let mut o = oracle_call(file, step)?;
                o.branch = Some((group, b));
                out.push(o);
            }
        }
        group += 1;
    }
    Ok(out)
}

/// The steps that do a batch step one item at a time (`per_item: {tool: read_text_file, list:
/// paths, as: path}`): one call of `tool` per item of the batch step's `list` argument, the
/// item as its `as` parameter, in any order. A policy the batch step sets on the list (or on
/// `/list/*`) applies to each item; the batch step's `optional` to each call.
fn per_item_steps(
    file: &SourceFile,
    batch: &OracleCall,
    per: &super::raw::RawPerItem,
) -> Result<Vec<OracleCall>, SourceError> {
    let loc = &batch.call.location;
    let err = |msg: String| file.error_at(loc.line, loc.column, msg);
    let items = batch
        .call
        .args()
        .get(&per.list)
        .and_then(Value::as_array)
        .filter(|items| !items.is_empty())
        .ok_or_else(|| {
            err(format!(
                "`per_item:` names `list: {}`, which is no non-empty array argument of the step",
                per.list
            ))
        })?;
    let policy = batch
        .match_policies
        .get(&per.list)
        .or_else(|| batch.match_policies.get(&format!("/{}/*", per.list)))
        .cloned();
    Ok(items
        .iter()
        .map(|item| {
            let mut args = Map::new();
            args.insert(per.param.clone(), item.clone());
            OracleCall {
                call: Call::recorded(
                    per.tool.clone(),
                    Value::Object(args),
                    None,
                    None,
                    loc.clone(),
                ),
                quick_explanation: batch.quick_explanation.clone(),
                match_policies: policy
                    .iter()
                    .map(|p| (per.param.clone(), p.clone()))
                    .collect(),
                mock_output: None,
                grounding: None,
                alternatives: Vec::new(),
                optional: batch.optional,
                min: 1,
                max: Some(1),
                branch: None,
                literal: Vec::new(),
            }
        })
        .collect())
}

/// A `forbid:` list: tool names, or `destructive`, `mutating`, `open_world`.
fn forbids(file: &SourceFile, list: &[Spanned<String>]) -> Result<Vec<Forbid>, SourceError> {
    list.iter()
        .map(|f| {
            Ok(match f.value.as_str() {
                "destructive" => Forbid::Destructive,
                "mutating" => Forbid::Mutating,
                "open_world" => Forbid::OpenWorld,
                "" => return Err(at(file, f, "`forbid:` names an empty tool".into())),
                t => Forbid::Tool(t.to_owned()),
            })
        })
        .collect()
}

/// How many of a turn's calls one reference step takes: a plain step once ([`Times::ONCE`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Times {
    /// Required: 0 for an optional step.
    pub min: usize,
    /// Allowed at most; `None` for any number.
    pub max: Option<usize>,
}

impl Times {
    /// A plain step: done once, required.
    pub const ONCE: Times = Times {
        min: 1,
        max: Some(1),
    };

    /// A workflow step's: `count:`, `min:` and `max:` as written, `min` 0 when `optional`.
    pub fn of(o: &OracleCall) -> Self {
        Self {
            min: if o.optional { 0 } else { o.min as usize },
            max: o.max.map(|m| m as usize),
        }
    }

    /// Per step list of a turn (its `variants`, indices into `workflow`), each step's.
    pub(crate) fn of_lists(workflow: &[OracleCall], lists: &[Vec<usize>]) -> Vec<Vec<Self>> {
        lists
            .iter()
            .map(|v| v.iter().map(|&w| Self::of(&workflow[w])).collect())
            .collect()
    }
}

#[cfg(test)]
#[path = "tests.rs"]
mod tests;
