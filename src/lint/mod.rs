//! The per-call linter: stateless, microseconds a call.
//!
//! Checks one call against the tool's JSON Schema (unknown tool with the nearest name, unknown
//! parameter with "did you mean", missing required, type, enum, format, pattern, range and the
//! rest of draft 2020-12, never fetching a remote `$ref`), then against the server's capability
//! matrix (a value, parameter or tool the chosen model does not support; a default the server
//! resolves differently from the schema; cross-parameter rules), saying for each what the server
//! really does: rejects, coerces, clamps or ignores.
//!
//! The main type is [`Linter`], built with [`Linter::new`] from a [`ToolSet`] and its
//! [`Capabilities`]; [`Linter::lint`] returns [`Finding`]s with JSON pointers into the
//! arguments (the runner adds YAML locations).

mod caps;
pub(crate) mod cycle;
mod schema;
mod shape;

pub use crate::finding::{did_you_mean, nearest, type_name};

use std::collections::HashMap;
use std::sync::OnceLock;

use serde_json::{Map, Value};

use crate::finding::{Code, Finding};
use crate::spec::capability::{Model, ToolCaps};
use crate::spec::{Capabilities, Effect, ToolSet, ToolSpec};

/// Why a linter could not be built.
#[derive(Debug)]
#[non_exhaustive]
pub enum LintError {
    /// A tool's `inputSchema` does not compile as JSON Schema.
    InvalidSchema {
        /// The tool.
        tool: String,
        /// What the schema compiler said.
        message: String,
        /// The JSON pointer, inside the input schema, of the keyword at fault (`""` when the
        /// compiler names none); [`ToolSet::schema_error`](crate::spec::ToolSet::schema_error)
        /// turns it into a place in the spec file.
        pointer: String,
    },
    /// Two matrices describe one tool.
    DuplicateCapabilities {
        /// The tool.
        tool: String,
        /// The first matrix's server name.
        first: String,
        /// The second's.
        second: String,
    },
}

impl LintError {
    /// The error at its place in the spec file `tools` was read from (a schema that does not
    /// compile, at the keyword at fault), when it has one; the place names the file.
    pub fn in_file(&self, tools: &ToolSet) -> Option<crate::source::SourceError> {
        match self {
            LintError::InvalidSchema {
                tool,
                message,
                pointer,
            } => tools.schema_error(tool, pointer, message),
            LintError::DuplicateCapabilities { .. } => None,
        }
    }
}

impl std::fmt::Display for LintError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            LintError::InvalidSchema { tool, message, .. } => {
                write!(f, "tool `{tool}` has an invalid input schema: {message}")
            }
            LintError::DuplicateCapabilities {
                tool,
                first,
                second,
            } => write!(
                f,
                "tool `{tool}` is described by two capability matrices (`{first}` and `{second}`)"
            ),
        }
    }
}

impl std::error::Error for LintError {}

/// The refusals MCP servers answer as text with `isError: false` (issue 29, 3), by the shapes
/// their SDKs and libraries print: `Error: …`/`Error executing tool …` (many Python servers),
/// `Database error: …` (mcp-server-sqlite), Redis's `ERR …` and `WRONGTYPE …`, an uncaught
/// exception's traceback. Anchored at the start of the answer: an error sentence inside a
/// file's contents or a search result is data, not a refusal. Read by hand, exactly as this
/// regex (Unicode) reads it — compiling it was a twentieth of a one-trial process; a test
/// holds the two to the same answers:
///
/// ```text
/// ^\s*(?:(?i:error)(?:\s+executing\b[^:\n]*)?:|(?i:database error|sql error|query error|binder error|catalog error|parser error)\b|ERR\s|WRONGTYPE\s|NOAUTH\s|Traceback \(most recent call last\))
/// ```
pub(crate) fn looks_like_error_text(text: &str) -> bool {
    use crate::pattern::{is_space, is_word, literal_ignore_case, word_boundary};
    let t = text.trim_start_matches(is_space);
    // Every form below starts with one of these letters, in either case (`ſ`, not ASCII,
    // folds onto `s`): an answer that starts otherwise (`{`, a digit, most words) is none,
    // without trying each.
    match t.bytes().next() {
        None => return false,
        Some(b) if b.is_ascii() && !b"bcdenpqstw".contains(&b.to_ascii_lowercase()) => {
            return false;
        }
        _ => {}
    }
    // `Error:`, or `Error executing …:` with the colon on its line.
    if let Some(after) = literal_ignore_case(t, 0, "error") {
        let rest = &t[after..];
        if rest.starts_with(':') {
            return true;
        }
        let spaced = rest.trim_start_matches(is_space);
        if spaced.len() < rest.len()
            && let Some(line) = spaced.strip_prefix("executing")
            && !line.chars().next().is_some_and(is_word)
            && line
                .find([':', '\n'])
                .is_some_and(|i| line[i..].starts_with(':'))
        {
            return true;
        }
    }
    let phrase = [
        "database error",
        "sql error",
        "query error",
        "binder error",
        "catalog error",
        "parser error",
    ];
    if phrase
        .iter()
        .any(|p| literal_ignore_case(t, 0, p).is_some_and(|end| word_boundary(t, end)))
    {
        return true;
    }
    ["ERR", "WRONGTYPE", "NOAUTH"].iter().any(|w| {
        t.strip_prefix(w)
            .is_some_and(|r| r.chars().next().is_some_and(is_space))
    }) || t.starts_with("Traceback (most recent call last)")
}

/// Whether an answer is a refusal by its shape alone (no matrix): `isError`, or the text of a
/// common refusal (the scenario's own inference has no matrix to ask).
pub(crate) fn looks_refused(v: &Value) -> bool {
    let (error, text) = error_and_text(v);
    error || text.is_some_and(|t| looks_like_error_text(&t))
}

/// The text of a tool's answer: a `CallToolResult`'s text items (joined by newlines), or the
/// answer itself when it is a string; `None` for structured data without text.
pub(crate) fn answer_text(output: &Value) -> Option<std::borrow::Cow<'_, str>> {
    match output {
        Value::String(s) => Some(std::borrow::Cow::Borrowed(s)),
        Value::Object(m) => content_text(m.get("content")?),
        _ => None,
    }
}

/// An answer read once for a refusal: whether it is an MCP error (`isError: true`), and its
/// text ([`answer_text`]). Its fields are walked once (two lookups cost twice that: every
/// output of every run is read so).
fn error_and_text(output: &Value) -> (bool, Option<std::borrow::Cow<'_, str>>) {
    use crate::hash::same_bytes;
    let Value::Object(m) = output else {
        return (false, answer_text(output));
    };
    let (mut error, mut content) = (false, None);
    for (k, v) in m {
        if same_bytes(k.as_bytes(), b"isError") {
            error = v.as_bool() == Some(true);
        } else if same_bytes(k.as_bytes(), b"content") {
            content = Some(v);
        }
    }
    (error, content.and_then(content_text))
}

/// The text items of a `CallToolResult`'s `content`, joined by newlines.
fn content_text(content: &Value) -> Option<std::borrow::Cow<'_, str>> {
    use std::borrow::Cow;
    let mut texts = content
        .as_array()?
        .iter()
        .filter(|i| i.get("type").and_then(Value::as_str) == Some("text"))
        .filter_map(|i| i.get("text").and_then(Value::as_str));
    // One text part, the usual answer, is read in place.
    let first = texts.next()?;
    match texts.next() {
        None => Some(Cow::Borrowed(first)),
        Some(second) => {
            let mut all = [first, second].join("\n");
            for t in texts {
                all.push('\n');
                all.push_str(t);
            }
            Some(Cow::Owned(all))
        }
    }
}

/// A compiled spec plus capability matrices, ready to lint calls.
pub struct Linter {
    tools: Vec<schema::CompiledTool>,
    /// Looked up several times for every call (its spec, its matrix, its effect).
    by_name: HashMap<String, usize, std::hash::BuildHasherDefault<crate::hash::NameHasher>>,
    caps: Vec<Capabilities>,
    // tool index -> matrix index
    caps_of: Vec<Option<usize>>,
    // tool index -> the parameters with rules, per resolved model (computed at the tool's first
    // call: sorting and filtering them per call was most of a valid call's cost, and a trial's
    // process calls a few of a suite's tools)
    plans: Vec<OnceLock<caps::Plan>>,
    // Whether any matrix declares a `sql:` parameter, and whether any tool has a parameter
    // SQL may come in by name (`query`, `sql`, …): computed once, the fast path asks per call.
    declares_sql: bool,
    named_sql: bool,
}

impl Linter {
    /// Compiles every tool's schema once. Matrices should already have passed
    /// [`Capabilities::check_against`].
    pub fn new(tools: &ToolSet, caps: Vec<Capabilities>) -> Result<Self, LintError> {
        let compiled = tools
            .tools()
            .iter()
            .map(schema::CompiledTool::new)
            .collect::<Result<Vec<_>, _>>()?;
        Self::with_tools(tools, compiled, caps)
    }

    /// A linter over tools whose schemas compiled clean with this build before (a prepared
    /// suite, `check::prepared`): each schema is compiled at the first call of its tool, and
    /// one trial's process compiles only the tools its transcript calls.
    pub(crate) fn deferred(tools: &ToolSet, caps: Vec<Capabilities>) -> Result<Self, LintError> {
        let compiled = tools
            .tools()
            .iter()
            .map(schema::CompiledTool::deferred)
            .collect();
        Self::with_tools(tools, compiled, caps)
    }

    fn with_tools(
        tools: &ToolSet,
        compiled: Vec<schema::CompiledTool>,
        caps: Vec<Capabilities>,
    ) -> Result<Self, LintError> {
        let by_name = tools
            .tools()
            .iter()
            .enumerate()
            .map(|(i, t)| (t.name.clone(), i))
            .collect();
        let mut caps_of = vec![None; tools.len()];
        for (mi, matrix) in caps.iter().enumerate() {
            for name in matrix.tools.keys() {
                if let Some(ti) = tools.index_of(name) {
                    if let Some(prev) = caps_of[ti] {
                        let first: &Capabilities = &caps[prev];
                        return Err(LintError::DuplicateCapabilities {
                            tool: name.clone(),
                            first: first.server.clone(),
                            second: matrix.server.clone(),
                        });
                    }
                    caps_of[ti] = Some(mi);
                }
            }
        }
        let plans = (0..tools.len()).map(|_| OnceLock::new()).collect();
        let declares_sql = caps
            .iter()
            .any(|m| m.tools.values().any(|t| !t.sql.is_empty()));
        let named_sql = tools.tools().iter().any(|t| {
            t.properties()
                .is_some_and(|p| p.keys().any(|k| crate::sql::sql_name(k.as_bytes())))
        });
        Ok(Self {
            declares_sql,
            named_sql,
            plans,
            tools: compiled,
            by_name,
            caps,
            caps_of,
        })
    }

    /// Whether any matrix declares a parameter that holds SQL (`sql:`).
    pub(crate) fn declares_sql(&self) -> bool {
        self.declares_sql
    }

    /// Whether any call of these tools may hold SQL: a matrix declares `sql:`, or a tool has a
    /// parameter named `query`, `sql`, `statement` or `sql_query` (an undeclared argument of
    /// that name is the linter's error first).
    pub(crate) fn may_take_sql(&self) -> bool {
        self.declares_sql || self.named_sql
    }

    /// Tool `name`'s index. The tool found last on this thread is asked first (its name
    /// compared with `name`, no hashing): the engines ask about a call's tool several times
    /// in a row — its lint, effect, facts, selector, required parameters — and a lookup in a
    /// set of hundreds of tools (a BFCL category) reads memory no other question reads. Names
    /// are unique in a tool set, so a name that matches the tool at the remembered index is
    /// that tool, whichever linter it was found in.
    fn index(&self, name: &str) -> Option<usize> {
        thread_local! {
            static LAST: std::cell::Cell<usize> = const { std::cell::Cell::new(usize::MAX) };
        }
        let last = LAST.with(std::cell::Cell::get);
        if let Some(t) = self.tools.get(last)
            && crate::hash::same_bytes(t.spec.name.as_bytes(), name.as_bytes())
        {
            return Some(last);
        }
        let i = *self.by_name.get(name)?;
        LAST.with(|c| c.set(i));
        Some(i)
    }

    /// The spec of the tool `name`, if the linter knows it.
    pub fn tool(&self, name: &str) -> Option<&ToolSpec> {
        self.index(name).map(|i| &self.tools[i].spec)
    }

    /// The names `tool`'s schema lists in `required`, in its order (read out of the schema
    /// once); none for a tool the spec does not have.
    pub(crate) fn required(&self, tool: &str) -> &[Box<str>] {
        self.index(tool)
            .map_or(&[][..], |i| &self.tools[i].required)
    }

    /// Whether `tool`'s schema admits no argument it does not declare, so that every
    /// undeclared argument is a `lint.unknown_param` error.
    pub(crate) fn rejects_undeclared(&self, tool: &str) -> bool {
        self.index(tool).is_some_and(|i| !self.tools[i].open)
    }

    /// Every tool, in spec order.
    pub fn tools(&self) -> impl Iterator<Item = &ToolSpec> {
        self.tools.iter().map(|t| &t.spec)
    }

    /// The capability matrices the linter applies.
    pub fn capabilities(&self) -> &[Capabilities] {
        &self.caps
    }

    /// The capability facts about a tool, when a matrix describes it.
    pub fn facts(&self, tool: &str) -> Option<(&Capabilities, &ToolCaps)> {
        let ti = self.index(tool)?;
        let matrix = &self.caps[self.caps_of[ti]?];
        Some((matrix, matrix.tool(tool)?))
    }

    /// The model a call selects: the named one (aliases resolved), else the server's default.
    pub fn model_of(&self, tool: &str, args: &Map<String, Value>) -> Option<&Model> {
        let (matrix, facts) = self.facts(tool)?;
        let fam = &matrix.families[facts.family?];
        match args.get(&fam.selector) {
            Some(Value::String(name)) => fam.resolve(name),
            Some(_) => None,
            None => fam.when_absent.map(|i| &fam.models[i]),
        }
    }

    /// Whether `param` of `tool` is the parameter that selects a model.
    pub fn is_selector(&self, tool: &str, param: &str) -> bool {
        self.selector(tool) == Some(param)
    }

    /// The parameter of `tool` that selects a model, when a matrix names one.
    pub(crate) fn selector(&self, tool: &str) -> Option<&str> {
        let (m, f) = self.facts(tool)?;
        f.family.map(|i| m.families[i].selector.as_str())
    }

    /// The value the server works with for `param`: the given one, else the model's or the
    /// tool's default.
    pub fn effective(&self, tool: &str, args: &Map<String, Value>, param: &str) -> Option<Value> {
        if let Some(v) = args.get(param) {
            return Some(v.clone());
        }
        let model_default = self
            .model_of(tool, args)
            .and_then(|m| m.defaults.get(param));
        model_default
            .or_else(|| self.facts(tool).and_then(|(_, f)| f.defaults.get(param)))
            .cloned()
    }

    /// What a call of `tool` with `args` does to the world: the tool's MCP annotations (the
    /// MCP defaults where it declares none), overridden by the matrices' server-wide
    /// `effects:` entries that cover the tool, then by the tool's own, each where its `when:`
    /// and `matches:` hold for these arguments (defaults applied).
    pub fn effect(&self, tool: &str, args: &Map<String, Value>) -> Effect {
        let mut a = self.tool(tool).map(|s| s.annotations).unwrap_or_default();
        if self.caps.is_empty() {
            // No matrix: the tool's annotations alone.
            return a.effect();
        }
        let own = self.facts(tool).map(|(_, f)| f.effects.as_slice());
        let rules = self
            .matrices_of(tool)
            .flat_map(|m| m.effects.iter().filter(|e| e.covers(tool)))
            .chain(own.into_iter().flatten());
        for e in rules {
            let holds = e
                .when
                .iter()
                .all(|(k, v)| self.effective(tool, args, k).as_ref() == Some(v))
                && e.matches.iter().all(|(k, p)| {
                    self.effective(tool, args, k)
                        .is_some_and(|v| p.matches_value(&v))
                });
            if holds {
                a.read_only = e.read_only.or(a.read_only);
                a.destructive = e.destructive.or(a.destructive);
                a.idempotent = e.idempotent.or(a.idempotent);
                a.open_world = e.open_world.or(a.open_world);
            }
        }
        a.effect()
    }

    /// The matrices whose server-wide facts apply to `tool`: the one that lists it, or, for a
    /// tool no matrix lists, every matrix (a server described only by patterns).
    /// Whether an answer's text is a refusal in one of the common shapes every suite knows
    /// (`Error:`, `Error executing tool …`, a database or SQL engine's error, Redis `ERR `, a
    /// Python traceback) — what a matrix need not list under `errors:`.
    pub fn refuses_text_by_default(text: &str) -> bool {
        looks_like_error_text(text)
    }

    /// The capability matrices, in the order given.
    pub fn matrices(&self) -> &[Capabilities] {
        &self.caps
    }

    fn matrices_of(&self, tool: &str) -> impl Iterator<Item = &Capabilities> {
        let listed = self.index(tool).and_then(|ti| self.caps_of[ti]);
        self.caps
            .iter()
            .enumerate()
            .filter(move |(mi, _)| listed.is_none_or(|l| l == *mi))
            .map(|(_, m)| m)
    }

    /// Whether `output`, the answer to a call of `tool`, is a refusal: an MCP error
    /// (`isError: true`), or text the server answers when it refuses without saying so — its
    /// matrix's `errors:` patterns (the tool's and the server's) and, unless the matrix turns
    /// them off, the common shapes of the MCP SDKs (`Error: …`, `Database error: …`, Redis's
    /// `ERR …`/`WRONGTYPE …`, a Python traceback). A refused call did nothing and produced
    /// nothing.
    pub fn refuses(&self, tool: &str, output: &Value) -> bool {
        let (error, text) = error_and_text(output);
        if error {
            return true;
        }
        let Some(text) = text else {
            return false;
        };
        if self.caps.is_empty() {
            // No matrix: the SDKs' shapes alone (no lookup of the tool).
            return looks_like_error_text(&text);
        }
        let own = self.facts(tool).map(|(_, f)| f.errors.as_slice());
        let mut defaults = true;
        for m in self.matrices_of(tool) {
            defaults &= m.error_defaults;
            if m.errors.iter().any(|p| p.0.is_match(&text)) {
                return true;
            }
        }
        own.into_iter().flatten().any(|p| p.0.is_match(&text))
            || (defaults && looks_like_error_text(&text))
    }

    /// Lints one call. `arguments` should be a JSON object; `null` counts as no arguments.
    pub fn lint(&self, tool: &str, arguments: &Value) -> Vec<Finding> {
        let mut out = Vec::new();
        let Some(ti) = self.index(tool) else {
            let hint = did_you_mean(tool, self.tools.iter().map(|t| t.spec.name.as_str()));
            out.push(Finding::new(
                Code::UnknownTool,
                "",
                format!("unknown tool `{tool}`{hint}"),
            ));
            return out;
        };
        let empty = Map::new();
        let args = match arguments {
            Value::Object(m) => m,
            Value::Null => &empty,
            other => {
                out.push(Finding::new(
                    Code::ArgumentsNotObject,
                    "",
                    format!("arguments must be a JSON object, got {}", type_name(other)),
                ));
                return out;
            }
        };
        let compiled = &self.tools[ti];
        compiled.check(args, arguments, &mut out);
        if let Some(mi) = self.caps_of[ti] {
            let matrix = &self.caps[mi];
            if let Some(tool_caps) = matrix.tool(tool) {
                let plan = self.plans[ti]
                    .get_or_init(|| caps::Plan::new(matrix, tool_caps, &compiled.spec));
                caps::check(matrix, tool_caps, plan, &compiled.spec, args, &mut out);
            }
        }
        out
    }
}

#[cfg(test)]
mod tests;
