//! Capability matrices: what a server really does with a call, beyond its schema.
//!
//! A tool's JSON Schema says "aspect ratios are model-dependent"; the server's model registry
//! says which. Seeds 000/001 call the gap *schema-blindness*: an LLM judge passed a veo-2.0
//! call with `generate_audio=true` because that rule is not in `tools/list`. A matrix encodes
//! those rules as data — the selector parameter and its aliases, the model the server uses when
//! the selector is absent, per-model values, ranges and tools, what happens on a violation
//! (`reject`, `coerce`, `clamp`, `truncate`, `ignore`), cross-parameter rules, and what each
//! tool produces (for the flow engine). The YAML format is documented in the book
//! (`docs/src/reference/capabilities.md`) and has a
//! JSON Schema in `schemas/capabilities.schema.json`.
//!
//! The main type is [`Capabilities`], built with [`Capabilities::load`] and checked against the
//! tools it describes with [`Capabilities::check_against`]. Evaluating a call is the linter's
//! job (`lint::caps`); this module only owns the data and model resolution.

use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::path::Path;
use std::sync::Arc;

use serde::{Deserialize, Serialize};
use serde_json::Value;

use super::ToolSet;
use crate::pattern::LazyRegex;
use crate::source::spanned::Spanned;
use crate::source::{SourceError, SourceFile, present};

/// What the server does when a constraint is violated.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Deserialize, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Outcome {
    /// The call fails with an error.
    #[default]
    Reject,
    /// The value is silently replaced (by `coerce_to` when given).
    Coerce,
    /// The value is silently clamped into `[minimum, maximum]`.
    Clamp,
    /// A fractional number is silently truncated to an integer.
    Truncate,
    /// The parameter (or value) is silently dropped or ignored.
    Ignore,
}

/// What the server does with a model name it does not know.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Deserialize, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum UnknownModel {
    /// The server rejects the call.
    #[default]
    Reject,
    /// The server passes the name on unchanged and the backend API fails the call (G5).
    PassThrough,
}

/// One rule on one parameter. Every predicate given must hold; on a violation, `on_violation`
/// says what the server does. Predicates on a value apply to each item when the value is an
/// array (`max_items`/`min_items` apply to the array itself).
#[derive(Clone, Debug)]
pub struct Constraint {
    /// The rule id it encodes (`rule:`, e.g. `V2` of the server's RULES.md), carried by its
    /// findings.
    pub rule: Option<String>,
    /// A short reason (`note:`), appended to the finding's message.
    pub note: Option<String>,
    /// Applies only when this other parameter is absent from the call.
    pub when_absent: Option<String>,
    /// `unsupported: true`: passing the parameter at all is a violation (a value the server
    /// defaults it to is not).
    pub unsupported: bool,
    /// `integer: true`: a number with a fraction is a violation.
    pub integer: bool,
    /// `one_of:`, the allowed values (numbers compared by value).
    pub one_of: Option<Vec<Value>>,
    /// `minimum:`, inclusive.
    pub minimum: Option<f64>,
    /// `maximum:`, inclusive.
    pub maximum: Option<f64>,
    /// `exclusive_minimum:`.
    pub exclusive_minimum: Option<f64>,
    /// `exclusive_maximum:`.
    pub exclusive_maximum: Option<f64>,
    /// `min_items:`, the fewest items an array may have.
    pub min_items: Option<usize>,
    /// `max_items:`, the most items an array may have.
    pub max_items: Option<usize>,
    /// `max_length:`, the longest a string may be, in characters.
    pub max_length: Option<usize>,
    /// `pattern:`, a regex a string must match (unanchored).
    pub pattern: Option<LazyRegex>,
    /// `not_pattern:`, a regex a string must not match (unanchored).
    pub not_pattern: Option<LazyRegex>,
    /// What the server does on a violation (`on_violation:`, default `reject`).
    pub on_violation: Outcome,
    /// The value `on_violation: coerce` substitutes; `None` when the matrix does not say.
    pub coerce_to: Option<Value>,
}

/// One `effects:` entry: hints that override a tool's MCP annotations, for every call or only
/// for calls whose arguments have the `when:` values (defaults applied) and match the
/// `matches:` patterns. At the top of a matrix, `tools:` (a pattern on the tool's name) says
/// which tools an entry covers, so a server without annotations needs a few lines, not one
/// entry per tool.
#[derive(Clone, Debug, Default, Deserialize, Serialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct EffectRule {
    /// Which tools a server-wide entry covers (a regex on the name, searched: anchor it with
    /// `^…$`); every tool when absent. Only at the top of a matrix.
    #[serde(default)]
    pub tools: Option<Pattern>,
    /// Applies only when these arguments have these values (`dryRun: true`).
    #[serde(default)]
    pub when: BTreeMap<String, Value>,
    /// Applies only when these arguments match these patterns (`query: '(?i)^\s*insert'`): a
    /// string argument as written, any other value as its JSON text.
    #[serde(default)]
    pub matches: BTreeMap<String, Pattern>,
    /// `readOnlyHint`.
    #[serde(default)]
    pub read_only: Option<bool>,
    /// `destructiveHint`.
    #[serde(default)]
    pub destructive: Option<bool>,
    /// `idempotentHint`.
    #[serde(default)]
    pub idempotent: Option<bool>,
    /// `openWorldHint`.
    #[serde(default)]
    pub open_world: Option<bool>,
    /// Why a tool (`agent-seer init`) proposed this entry without the server saying so: the
    /// harness trial fails until someone checks it against the server and removes the key.
    #[serde(default)]
    pub proposed: Option<String>,
}

impl EffectRule {
    /// Whether the entry covers tool `name` (its `tools:` pattern, when it has one).
    pub fn covers(&self, name: &str) -> bool {
        self.tools.as_ref().is_none_or(|p| p.0.is_match(name))
    }
}

/// A position in a call's arguments as the matrix and the harness write it — a parameter's
/// name, or a JSON pointer with `*` for every item — as a pointer (`ttl` → `/ttl`).
pub(crate) fn position(p: &str) -> String {
    if p.starts_with('/') {
        p.to_owned()
    } else {
        format!("/{}", p.replace('~', "~0").replace('/', "~1"))
    }
}

/// A regular expression read from a matrix (Rust syntax, searched anywhere in the text).
#[derive(Clone, Debug)]
pub struct Pattern(pub LazyRegex);

impl Pattern {
    /// Whether the pattern matches `value`: a string as written, anything else as its JSON text.
    pub fn matches_value(&self, value: &Value) -> bool {
        match value {
            Value::String(s) => self.0.is_match(s),
            other => self.0.is_match(&other.to_string()),
        }
    }
}

impl PartialEq for Pattern {
    fn eq(&self, other: &Self) -> bool {
        self.0 == other.0
    }
}

impl Serialize for Pattern {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(self.0.as_str())
    }
}

impl<'de> Deserialize<'de> for Pattern {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let s = String::deserialize(d)?;
        LazyRegex::new(&s)
            .map(Pattern)
            .map_err(|e| serde::de::Error::custom(format!("invalid regex `{s}`: {e}")))
    }
}

/// An artifact kind a tool produces.
#[derive(Clone, Debug, PartialEq, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct Product {
    /// `image`, `video`, `audio`, `text` or `file`.
    pub kind: ArtifactKind,
    /// Carried inside another product (the audio track of a video).
    #[serde(default)]
    pub embedded: bool,
    /// Produced only when these arguments have these values (defaults applied).
    #[serde(default)]
    pub when: BTreeMap<String, Value>,
}

/// What kind of artifact a tool makes (`produces: [{kind: …}]`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Deserialize, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum ArtifactKind {
    /// `image`.
    Image,
    /// `video`.
    Video,
    /// `audio`: a track of its own, or a video's when `embedded`.
    Audio,
    /// `text` (media info, a list of voices).
    Text,
    /// `file`: a file of no one media kind (avtool's concatenation of its inputs).
    File,
}

/// A rule across parameters of one call.
#[derive(Clone, Debug)]
pub struct CrossRule {
    /// The rule id it encodes (`rule:`, e.g. `V8`), carried by its findings.
    pub rule: Option<String>,
    /// A short reason (`note:`), appended to the finding's message.
    pub note: Option<String>,
    /// What must hold.
    pub kind: CrossKind,
    /// What the server does when it does not: `reject` is `cap.cross_parameter`, `ignore`
    /// `cap.ignored`, any other `cap.coerced`.
    pub on_violation: Outcome,
}

/// The one relation a cross rule states (`equal_length`, `at_least_one_of` or `requires`).
#[derive(Clone, Debug, PartialEq)]
pub enum CrossKind {
    /// All these array parameters, when present together, have the same length.
    EqualLength(Vec<String>),
    /// At least one of these parameters is present.
    AtLeastOneOf(Vec<String>),
    /// When `param` is present, every one of `needs` is present too.
    Requires {
        /// The parameter that needs others.
        param: String,
        /// The parameters it needs.
        needs: Vec<String>,
    },
}

impl CrossKind {
    /// Every parameter the rule names, `param` before `needs`.
    pub(crate) fn params(&self) -> Vec<&str> {
        match self {
            CrossKind::EqualLength(p) | CrossKind::AtLeastOneOf(p) => {
                p.iter().map(String::as_str).collect()
            }
            CrossKind::Requires { param, needs } => std::iter::once(param.as_str())
                .chain(needs.iter().map(String::as_str))
                .collect(),
        }
    }
}

/// The facts about one tool of the server.
#[derive(Clone, Debug, Default)]
pub struct ToolCaps {
    /// Server-wide rules merged with this tool's own, in that order.
    pub parameters: BTreeMap<String, Vec<Constraint>>,
    /// Handler fallbacks for absent parameters (X3: schema defaults are never applied).
    pub defaults: BTreeMap<String, Value>,
    /// What the tool makes (`produces:`), for the flow engine.
    pub produces: Vec<Product>,
    /// Where the tool's arguments reference artifacts (URIs, paths, names, ids) that must
    /// exist: parameter names, or JSON pointers into the arguments with `*` for every array
    /// item (`/relations/*/from`).
    pub inputs: Vec<String>,
    /// Values its references may take that exist before any call (`grounded:`, regexes): git's
    /// pathspec `.`, `HEAD`.
    pub grounded: Vec<LazyRegex>,
    /// What the server answers a call that names a thing that does not exist (`not_found:`, a
    /// `CallToolResult`; `{value}` in its strings becomes the name the call gave): what the
    /// mock answers instead of another step's data.
    pub not_found: Option<Value>,
    /// What the tool does to the world beyond its MCP annotations (`effects:`), each entry
    /// applying when its `when:` holds for the call's arguments, later entries over earlier.
    pub effects: Vec<EffectRule>,
    /// Answers of this tool that are refusals although `isError` is false (`errors:`,
    /// patterns searched in the answer's text), beyond the server's.
    pub errors: Vec<Pattern>,
    /// Argument positions whose values are literals, never references (`literal:`, names or
    /// pointers with `*`): no reference is inferred there.
    pub literal: Vec<String>,
    /// Parameters whose values are SQL text (`sql: [query]`): the tables and columns it names
    /// are references, grounded like any other.
    pub sql: Vec<String>,
    /// The `cross:` rules that apply to this tool (those without `tools:` apply to all).
    pub cross: Vec<CrossRule>,
    /// Index into [`Capabilities::families`] of the family selecting this tool's model.
    pub family: Option<usize>,
    own_params: BTreeSet<String>,
}

/// A set of models one selector parameter chooses between.
#[derive(Clone, Debug)]
pub struct Family {
    /// Its key under `families:` (`veo`).
    pub name: String,
    /// The parameter that picks the model (`selector:`, e.g. `model`).
    pub selector: String,
    /// The model the handler uses when the selector is absent (V1), as an index into
    /// `models`; `None` when the matrix does not say.
    pub when_absent: Option<usize>,
    /// What the server does with a name no model has (`unknown:`, default `reject`).
    pub unknown: UnknownModel,
    /// Whether ids and aliases match in any case (`case_insensitive:`, default true; X1).
    /// Surrounding whitespace never counts.
    pub case_insensitive: bool,
    /// The rule id behind the family's resolution facts (V1, X1, …).
    pub rule: Option<String>,
    /// The models, by id in sorted order.
    pub models: Vec<Model>,
    lookup: HashMap<String, usize>,
}

impl Family {
    /// Resolves a model name or alias to the model, as the server does (X1).
    pub fn resolve(&self, name: &str) -> Option<&Model> {
        // The common case, an exact id, without allocating.
        if let Some(&i) = self.lookup.get(name) {
            return Some(&self.models[i]);
        }
        let key = if self.case_insensitive {
            name.trim().to_lowercase()
        } else {
            name.trim().to_owned()
        };
        self.lookup.get(&key).map(|&i| &self.models[i])
    }

    /// The index of one of this family's models.
    pub fn index_of(&self, model: &Model) -> Option<usize> {
        self.models.iter().position(|m| std::ptr::eq(m, model))
    }

    /// The known names (ids and aliases), for "did you mean".
    pub fn names(&self) -> impl Iterator<Item = &str> {
        self.models.iter().flat_map(|m| {
            std::iter::once(m.id.as_str()).chain(m.aliases.iter().map(String::as_str))
        })
    }
}

/// One model of a family.
#[derive(Clone, Debug)]
pub struct Model {
    /// Its key under `models:` (`veo-2.0-generate-001`).
    pub id: String,
    /// Other names the server accepts for it (`aliases:`, e.g. `Veo 2`).
    pub aliases: Vec<String>,
    /// The tools this model can serve; `None` means every tool of the family.
    pub tools: Option<BTreeSet<String>>,
    /// This model's rules by parameter (`parameters:`), checked after the server's and the
    /// tool's.
    pub parameters: BTreeMap<String, Vec<Constraint>>,
    /// The handler's fallbacks for absent parameters with this model (`defaults:`); they take
    /// precedence over the tool's.
    pub defaults: BTreeMap<String, Value>,
    /// Why this model no longer serves requests (`retired:`); a call choosing it gets
    /// `cap.retired`.
    pub retired: Option<String>,
    // Where the model is defined in the YAML.
    at: (u32, u32),
}

/// A server's capability matrix.
#[derive(Clone, Debug)]
pub struct Capabilities {
    /// The server's name (`server:`, e.g. `mcp-veo-go`), as findings name it.
    pub server: String,
    /// The server version described (`version:`); rules with a later `since:`, or an
    /// `until:` at or below it, were dropped at load. `None` keeps every rule.
    pub version: Option<String>,
    /// Where the facts were read from (`source:`, a repository at a commit); not checked.
    pub source: Option<String>,
    /// Why the whole server no longer serves requests (`retired:`); every call gets
    /// `cap.retired`.
    pub retired: Option<String>,
    /// Each tool's facts by name (`tools:`), server-wide `parameters:` and `defaults:` merged
    /// in.
    pub tools: BTreeMap<String, ToolCaps>,
    /// The model families (`families:`), by name in sorted order; [`ToolCaps::family`]
    /// indexes them.
    pub families: Vec<Family>,
    /// Server-wide `effects:` entries, each over the tools its `tools:` pattern names (those
    /// under `tools:` and those the matrix does not list), before a tool's own entries.
    pub effects: Vec<EffectRule>,
    /// What the server answers as text when it refuses a call without `isError` (`errors:`,
    /// patterns searched in the answer's text), for every tool.
    pub errors: Vec<Pattern>,
    /// Whether the common error shapes of the MCP SDKs count too (`error_defaults:`, default
    /// true): text starting with `Error:`, `Database error:`, `ERR `, `WRONGTYPE`, a traceback.
    pub error_defaults: bool,
    /// The SQL dialect the server speaks (`sql_dialect:`), for reading its `sql:` parameters;
    /// `None` is the generic dialect.
    pub sql_dialect: Option<String>,
    /// The matrix file.
    pub file: Arc<Path>,
    // Where each tool is named in the YAML, to point check_against errors at it.
    tool_lines: BTreeMap<String, (u32, u32)>,
    server_params: BTreeSet<String>,
    text: Arc<str>,
}

impl Capabilities {
    /// Every effects entry still marked `proposed:`: the tool (`None` for a server-wide
    /// entry) and why it was proposed.
    pub fn unreviewed(&self) -> Vec<(Option<&str>, &str)> {
        let top = self
            .effects
            .iter()
            .filter_map(|e| e.proposed.as_deref().map(|why| (None, why)));
        let tools = self.tools.iter().flat_map(|(name, t)| {
            t.effects
                .iter()
                .filter_map(move |e| e.proposed.as_deref().map(|why| (Some(name.as_str()), why)))
        });
        top.chain(tools).collect()
    }

    /// Reads and loads a matrix file.
    pub fn load(path: &Path) -> Result<Self, SourceError> {
        Self::from_source(&SourceFile::read(path)?)
    }

    /// Loads a matrix from text already read. Errors (an unknown key, a constraint without a
    /// predicate, an invalid pattern, a model name used twice, a family or cross rule naming a
    /// tool not under `tools:`, …) point at their line; whether the tools and parameters exist
    /// in the spec is for [`Capabilities::check_against`].
    pub fn from_source(file: &SourceFile) -> Result<Self, SourceError> {
        let raw: RawMatrix = file.parse_yaml()?;
        compile(raw, file)
    }

    /// [`Capabilities::from_source`], and the JSON snapshot of what the file parsed to
    /// ([`crate::source::spanned::snapshot`]; `None` when it would not read back the same).
    pub(crate) fn with_snapshot(file: &SourceFile) -> Result<(Self, Option<String>), SourceError> {
        let raw: RawMatrix = file.parse_yaml()?;
        let json = crate::source::spanned::snapshot(&raw);
        Ok((compile(raw, file)?, json))
    }

    /// The matrix of `file` from the snapshot [`Capabilities::with_snapshot`] took of it,
    /// without parsing its YAML; `None` when `json` is no such snapshot.
    pub(crate) fn from_snapshot(
        file: &SourceFile,
        json: &str,
    ) -> Option<Result<Self, SourceError>> {
        let raw: RawMatrix = crate::source::spanned::from_snapshot(json)?;
        Some(compile(raw, file))
    }

    /// The facts about one tool; `None` for a tool the matrix does not list.
    pub(crate) fn tool(&self, name: &str) -> Option<&ToolCaps> {
        self.tools.get(name)
    }

    /// Checks that every tool and parameter this matrix names exists in `spec`, so a typo in
    /// a matrix is an error instead of a rule that never fires.
    pub fn check_against(&self, spec: &ToolSet) -> Result<(), SourceError> {
        let file = SourceFile::new(self.file.clone(), self.text.clone());
        let at = |tool: &str, msg: String| {
            let (l, c) = self.tool_lines.get(tool).copied().unwrap_or((1, 1));
            file.error_at(l, c, msg)
        };
        for name in self.tools.keys() {
            if spec.get(name).is_none() {
                let hint = crate::finding::did_you_mean(
                    name,
                    spec.tools().iter().map(|t| t.name.as_str()),
                );
                return Err(at(
                    name,
                    format!("unknown tool `{name}`: not in the tool spec{hint}"),
                ));
            }
        }
        // A parameter must exist on at least one of the tools a rule can apply to.
        let check_at = |tools: &[&str],
                        param: &str,
                        whose: &str,
                        pos: Option<(u32, u32)>|
         -> Result<(), SourceError> {
            if tools
                .iter()
                .any(|t| spec.get(t).is_some_and(|s| s.has_param(param)))
            {
                return Ok(());
            }
            let first = tools.first().copied().unwrap_or("");
            let candidates = tools.iter().filter_map(|t| spec.get(t)).flat_map(|s| {
                s.properties()
                    .into_iter()
                    .flatten()
                    .map(|(k, _)| k.as_str())
            });
            let hint = crate::finding::did_you_mean(param, candidates);
            let msg = format!(
                "{whose} names parameter `{param}`, which none of its tools ({}) has{hint}",
                tools.join(", ")
            );
            Err(match pos {
                Some((l, c)) => file.error_at(l, c, msg),
                None => at(first, msg),
            })
        };
        let check = |tools: &[&str], param: &str, whose: &str| check_at(tools, param, whose, None);
        let all: Vec<&str> = self.tools.keys().map(String::as_str).collect();
        for p in &self.server_params {
            check(&all, p, "a server-wide rule")?;
        }
        for e in &self.effects {
            let covered: Vec<&str> = spec
                .tools()
                .iter()
                .map(|t| t.name.as_str())
                .filter(|t| e.covers(t))
                .collect();
            if covered.is_empty() {
                let pattern = e.tools.as_ref().map_or("", |p| p.0.as_str());
                return Err(file.error_at(
                    1,
                    1,
                    format!("the server-wide `effects:` entry for tools `{pattern}` matches no tool of the spec"),
                ));
            }
            for p in e.when.keys().chain(e.matches.keys()) {
                check_at(&covered, p, "a server-wide `effects:` entry", Some((1, 1)))?;
            }
        }
        for (name, caps) in &self.tools {
            let one = [name.as_str()];
            for p in &caps.own_params {
                check(&one, p, &format!("tool `{name}`"))?;
            }
            // An input is a parameter or a pointer into one: its first segment is the parameter.
            for p in caps.inputs.iter().chain(&caps.sql) {
                check(&one, &input_param(p), &format!("tool `{name}`"))?;
            }
            for e in &caps.effects {
                for p in e.when.keys().chain(e.matches.keys()) {
                    check(&one, p, &format!("an `effects:` entry of `{name}`"))?;
                }
            }
            for c in &caps.cross {
                for p in c.kind.params() {
                    check(&one, p, &format!("a cross rule on `{name}`"))?;
                }
            }
        }
        for (fi, fam) in self.families.iter().enumerate() {
            let fam_tools: Vec<&str> = self
                .tools
                .iter()
                .filter(|(_, c)| c.family == Some(fi))
                .map(|(n, _)| n.as_str())
                .collect();
            for t in &fam_tools {
                check(&[t], &fam.selector, &format!("family `{}`", fam.name))?;
            }
            for m in &fam.models {
                let served: Vec<&str> = fam_tools
                    .iter()
                    .copied()
                    .filter(|t| m.tools.as_ref().is_none_or(|s| s.contains(*t)))
                    .collect();
                for p in m.parameters.keys().chain(m.defaults.keys()) {
                    check_at(&served, p, &format!("model `{}`", m.id), Some(m.at))?;
                }
            }
        }
        Ok(())
    }
}

/// The parameter an `inputs:` entry names: itself, or a pointer's first segment, unescaped.
pub(crate) fn input_param(input: &str) -> String {
    match input.strip_prefix('/') {
        Some(rest) => {
            crate::source::json::unescape(rest.split('/').next().unwrap_or("")).into_owned()
        }
        None => input.to_owned(),
    }
}

// ---- YAML model -------------------------------------------------------------------------

type RawParams = BTreeMap<String, Spanned<Vec<Spanned<RawConstraint>>>>;

#[derive(Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
struct RawMatrix {
    server: String,
    #[serde(
        default,
        deserialize_with = "present",
        skip_serializing_if = "Option::is_none"
    )]
    version: Option<Spanned<String>>,
    #[serde(
        default,
        deserialize_with = "present",
        skip_serializing_if = "Option::is_none"
    )]
    source: Option<String>,
    #[serde(
        default,
        deserialize_with = "present",
        skip_serializing_if = "Option::is_none"
    )]
    retired: Option<String>,
    #[serde(default)]
    parameters: RawParams,
    #[serde(default)]
    defaults: BTreeMap<String, Value>,
    tools: BTreeMap<String, Spanned<RawTool>>,
    #[serde(default)]
    effects: Vec<EffectRule>,
    #[serde(default)]
    errors: Vec<Pattern>,
    #[serde(default = "yes")]
    error_defaults: bool,
    #[serde(
        default,
        deserialize_with = "present",
        skip_serializing_if = "Option::is_none"
    )]
    sql_dialect: Option<Spanned<String>>,
    #[serde(default)]
    cross: Vec<Spanned<RawCross>>,
    #[serde(default)]
    families: BTreeMap<String, Spanned<RawFamily>>,
}

#[derive(Deserialize, Serialize, Default)]
#[serde(deny_unknown_fields)]
struct RawTool {
    #[serde(default)]
    produces: Vec<Product>,
    #[serde(default)]
    inputs: Vec<String>,
    #[serde(default)]
    effects: Vec<Spanned<EffectRule>>,
    #[serde(default)]
    errors: Vec<Pattern>,
    #[serde(default)]
    literal: Vec<String>,
    #[serde(default)]
    sql: Vec<String>,
    #[serde(default)]
    grounded: Vec<Spanned<String>>,
    #[serde(default)]
    not_found: Option<Value>,
    #[serde(default)]
    parameters: RawParams,
    #[serde(default)]
    defaults: BTreeMap<String, Value>,
}

#[derive(Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
struct RawFamily {
    tools: Vec<Spanned<String>>,
    selector: String,
    #[serde(
        default,
        deserialize_with = "present",
        skip_serializing_if = "Option::is_none"
    )]
    when_absent: Option<Spanned<String>>,
    #[serde(default)]
    unknown: UnknownModel,
    #[serde(default = "yes")]
    case_insensitive: bool,
    #[serde(
        default,
        deserialize_with = "present",
        skip_serializing_if = "Option::is_none"
    )]
    rule: Option<String>,
    models: BTreeMap<String, Spanned<RawModel>>,
}

fn yes() -> bool {
    true
}

#[derive(Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
struct RawModel {
    #[serde(default)]
    aliases: Vec<String>,
    #[serde(
        default,
        deserialize_with = "present",
        skip_serializing_if = "Option::is_none"
    )]
    tools: Option<Vec<Spanned<String>>>,
    #[serde(default)]
    parameters: RawParams,
    #[serde(default)]
    defaults: BTreeMap<String, Value>,
    #[serde(
        default,
        deserialize_with = "present",
        skip_serializing_if = "Option::is_none"
    )]
    retired: Option<String>,
}

#[derive(Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
struct RawConstraint {
    #[serde(
        default,
        deserialize_with = "present",
        skip_serializing_if = "Option::is_none"
    )]
    rule: Option<String>,
    #[serde(
        default,
        deserialize_with = "present",
        skip_serializing_if = "Option::is_none"
    )]
    note: Option<String>,
    #[serde(
        default,
        deserialize_with = "present",
        skip_serializing_if = "Option::is_none"
    )]
    since: Option<Spanned<String>>,
    #[serde(
        default,
        deserialize_with = "present",
        skip_serializing_if = "Option::is_none"
    )]
    until: Option<Spanned<String>>,
    #[serde(
        default,
        deserialize_with = "present",
        skip_serializing_if = "Option::is_none"
    )]
    when_absent: Option<String>,
    #[serde(default)]
    unsupported: bool,
    #[serde(default)]
    integer: bool,
    #[serde(
        default,
        deserialize_with = "present",
        skip_serializing_if = "Option::is_none"
    )]
    one_of: Option<Vec<Value>>,
    #[serde(
        default,
        deserialize_with = "present",
        skip_serializing_if = "Option::is_none"
    )]
    minimum: Option<f64>,
    #[serde(
        default,
        deserialize_with = "present",
        skip_serializing_if = "Option::is_none"
    )]
    maximum: Option<f64>,
    #[serde(
        default,
        deserialize_with = "present",
        skip_serializing_if = "Option::is_none"
    )]
    exclusive_minimum: Option<f64>,
    #[serde(
        default,
        deserialize_with = "present",
        skip_serializing_if = "Option::is_none"
    )]
    exclusive_maximum: Option<f64>,
    #[serde(
        default,
        deserialize_with = "present",
        skip_serializing_if = "Option::is_none"
    )]
    min_items: Option<usize>,
    #[serde(
        default,
        deserialize_with = "present",
        skip_serializing_if = "Option::is_none"
    )]
    max_items: Option<usize>,
    #[serde(
        default,
        deserialize_with = "present",
        skip_serializing_if = "Option::is_none"
    )]
    max_length: Option<usize>,
    #[serde(
        default,
        deserialize_with = "present",
        skip_serializing_if = "Option::is_none"
    )]
    pattern: Option<String>,
    #[serde(
        default,
        deserialize_with = "present",
        skip_serializing_if = "Option::is_none"
    )]
    not_pattern: Option<String>,
    #[serde(default)]
    on_violation: Outcome,
    #[serde(default)]
    coerce_to: Option<Value>,
}

#[derive(Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
struct RawCross {
    #[serde(
        default,
        deserialize_with = "present",
        skip_serializing_if = "Option::is_none"
    )]
    rule: Option<String>,
    #[serde(
        default,
        deserialize_with = "present",
        skip_serializing_if = "Option::is_none"
    )]
    note: Option<String>,
    #[serde(
        default,
        deserialize_with = "present",
        skip_serializing_if = "Option::is_none"
    )]
    since: Option<Spanned<String>>,
    #[serde(
        default,
        deserialize_with = "present",
        skip_serializing_if = "Option::is_none"
    )]
    tools: Option<Vec<String>>,
    #[serde(
        default,
        deserialize_with = "present",
        skip_serializing_if = "Option::is_none"
    )]
    equal_length: Option<Vec<String>>,
    #[serde(
        default,
        deserialize_with = "present",
        skip_serializing_if = "Option::is_none"
    )]
    at_least_one_of: Option<Vec<String>>,
    #[serde(
        default,
        deserialize_with = "present",
        skip_serializing_if = "Option::is_none"
    )]
    requires: Option<RawRequires>,
    #[serde(default)]
    on_violation: Outcome,
}

#[derive(Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
struct RawRequires {
    param: String,
    needs: Vec<String>,
}

// ---- compilation ------------------------------------------------------------------------

struct Ctx<'a> {
    file: &'a SourceFile,
    version: Option<Vec<u64>>,
}

impl Ctx<'_> {
    fn err<T>(&self, at: &Spanned<T>, msg: String) -> SourceError {
        self.file.error_at(
            at.referenced.line() as u32,
            at.referenced.column().max(1) as u32,
            msg,
        )
    }

    // A rule tagged `since: "3.17"` describes a later server than `version`: inactive. One
    // tagged `until: "3.17"` was replaced at 3.17. Without a `version`, every rule is active;
    // a malformed `since`/`until` is an error either way.
    fn active(
        &self,
        since: Option<&Spanned<String>>,
        until: Option<&Spanned<String>>,
    ) -> Result<bool, SourceError> {
        let since = since.map(|s| self.version_at("since", s)).transpose()?;
        let until = until.map(|u| self.version_at("until", u)).transpose()?;
        let Some(v) = &self.version else {
            return Ok(true);
        };
        Ok(since.is_none_or(|s| s <= *v) && until.is_none_or(|u| *v < u))
    }

    fn version_at(&self, key: &str, s: &Spanned<String>) -> Result<Vec<u64>, SourceError> {
        parse_version(&s.value).map_err(|why| {
            self.err(
                s,
                format!("`{key}: \"{}\"` is not a release version: {why}", s.value),
            )
        })
    }
}

/// A release version: an optional `v`, then dot-separated decimal components, each fitting a
/// u64 (`3.17`, `v2026.8.31`); trailing zeros are dropped, so `3.15.0` is `3.15`.
///
/// Pre-release and build suffixes (`3.17-rc1`, `3.17+b5`) are refused: a rule's `since` or
/// `until` names the release that changed the behaviour, and ordering a pre-release against
/// it would be a guess. Read leniently (a bad component as 0), `3.l7` made rules fire or never
/// fire silently (issue 18, item 9).
fn parse_version(s: &str) -> Result<Vec<u64>, String> {
    let digits = s.strip_prefix('v').unwrap_or(s);
    if let Some(i) = digits.find(['-', '+']).filter(|&i| i > 0) {
        return Err(format!(
            "pre-release and build suffixes (`{}`) are not supported; write dot-separated numbers like `3.17`",
            &digits[i..]
        ));
    }
    let mut v = Vec::new();
    for part in digits.split('.') {
        if part.is_empty() {
            return Err("a component is empty; write dot-separated numbers like `3.17`".into());
        }
        if !part.bytes().all(|b| b.is_ascii_digit()) {
            return Err(format!(
                "`{part}` is not a decimal number; write dot-separated numbers like `3.17`"
            ));
        }
        v.push(
            part.parse::<u64>()
                .map_err(|_| format!("`{part}` is too large for a version component"))?,
        );
    }
    while v.last() == Some(&0) {
        v.pop();
    }
    Ok(v)
}

fn compile(raw: RawMatrix, file: &SourceFile) -> Result<Capabilities, SourceError> {
    let cx = Ctx {
        file,
        version: None,
    };
    let version = raw
        .version
        .as_ref()
        .map(|v| cx.version_at("version", v))
        .transpose()?;
    let cx = Ctx { version, ..cx };
    if let Some(d) = &raw.sql_dialect
        && !crate::sql::is_dialect(&d.value)
    {
        return Err(cx.err(
            d,
            format!(
                "unknown SQL dialect `{}`: use one of {}",
                d.value,
                crate::sql::DIALECTS.join(", ")
            ),
        ));
    }
    let server_params = compile_params(&cx, &raw.parameters)?;
    let mut tools = BTreeMap::new();
    let mut tool_lines = BTreeMap::new();
    for (name, tool) in &raw.tools {
        tool_lines.insert(
            name.clone(),
            (
                tool.referenced.line() as u32,
                tool.referenced.column() as u32,
            ),
        );
        let mut parameters = server_params.clone();
        let own_params = tool.value.parameters.keys().cloned().collect();
        for (p, cs) in compile_params(&cx, &tool.value.parameters)? {
            parameters.entry(p).or_insert_with(Vec::new).extend(cs);
        }
        let mut defaults = raw.defaults.clone();
        defaults.extend(tool.value.defaults.clone());
        let grounded = tool
            .value
            .grounded
            .iter()
            .map(|g| {
                LazyRegex::new(&g.value).map_err(|e| {
                    cx.file.error_at(
                        g.referenced.line() as u32,
                        g.referenced.column() as u32,
                        format!("invalid regex in `grounded:` of `{name}`: {e}"),
                    )
                })
            })
            .collect::<Result<Vec<_>, _>>()?;
        if let Some(e) = tool.value.effects.iter().find(|e| e.value.tools.is_some()) {
            return Err(cx.err(
                e,
                format!(
                    "`tools:` picks the tools of a server-wide `effects:` entry (at the top of the matrix); an entry under `{name}` is that tool's already"
                ),
            ));
        }
        if let Some(nf) = &tool.value.not_found
            && nf.get("content").and_then(Value::as_array).is_none()
        {
            return Err(cx.file.error_at(
                tool.referenced.line() as u32,
                tool.referenced.column() as u32,
                format!(
                    "`not_found:` of `{name}` is a CallToolResult: an object with a `content` array"
                ),
            ));
        }
        tools.insert(
            name.clone(),
            ToolCaps {
                parameters,
                defaults,
                produces: tool.value.produces.clone(),
                inputs: tool.value.inputs.clone(),
                effects: tool.value.effects.iter().map(|e| e.value.clone()).collect(),
                errors: tool.value.errors.clone(),
                sql: tool.value.sql.clone(),
                literal: tool.value.literal.iter().map(|p| position(p)).collect(),
                grounded,
                not_found: tool.value.not_found.clone(),
                cross: Vec::new(),
                family: None,
                own_params,
            },
        );
    }
    // Server-wide rules are merged into every tool; the linter applies a rule only where the
    // tool declares the parameter.

    for cross in &raw.cross {
        let c = &cross.value;
        if !cx.active(c.since.as_ref(), None)? {
            continue;
        }
        let kinds = [
            c.equal_length.is_some(),
            c.at_least_one_of.is_some(),
            c.requires.is_some(),
        ];
        if kinds.iter().filter(|k| **k).count() != 1 {
            return Err(cx.err(
                cross,
                "a cross rule needs exactly one of `equal_length`, `at_least_one_of`, `requires`"
                    .into(),
            ));
        }
        let kind = if let Some(p) = &c.equal_length {
            CrossKind::EqualLength(p.clone())
        } else if let Some(p) = &c.at_least_one_of {
            CrossKind::AtLeastOneOf(p.clone())
        } else {
            let r = c.requires.as_ref().expect("checked above");
            CrossKind::Requires {
                param: r.param.clone(),
                needs: r.needs.clone(),
            }
        };
        let rule = CrossRule {
            rule: c.rule.clone(),
            note: c.note.clone(),
            kind,
            on_violation: c.on_violation,
        };
        let targets: Vec<String> = match &c.tools {
            Some(t) => t.clone(),
            None => tools.keys().cloned().collect(),
        };
        for t in targets {
            let Some(caps) = tools.get_mut(&t) else {
                return Err(cx.err(
                    cross,
                    format!("cross rule names unknown tool `{t}` (not under `tools:`)"),
                ));
            };
            caps.cross.push(rule.clone());
        }
    }

    let mut families = Vec::new();
    for (fname, fam) in &raw.families {
        let f = &fam.value;
        let idx = families.len();
        let mut models = Vec::new();
        let mut lookup = HashMap::new();
        let key = |s: &str| {
            if f.case_insensitive {
                s.trim().to_lowercase()
            } else {
                s.trim().to_owned()
            }
        };
        for (id, m) in &f.models {
            let mi = models.len();
            for name in std::iter::once(id).chain(m.value.aliases.iter()) {
                if lookup.insert(key(name), mi).is_some() {
                    return Err(cx.err(
                        m,
                        format!("model name or alias `{name}` is used twice in family `{fname}`"),
                    ));
                }
            }
            let tools_served = match &m.value.tools {
                Some(list) => {
                    let mut set = BTreeSet::new();
                    for t in list {
                        if !f.tools.iter().any(|ft| ft.value == t.value) {
                            return Err(cx.err(t, format!("model `{id}` lists tool `{}`, which is not a tool of family `{fname}`", t.value)));
                        }
                        set.insert(t.value.clone());
                    }
                    Some(set)
                }
                None => None,
            };
            models.push(Model {
                id: id.clone(),
                aliases: m.value.aliases.clone(),
                tools: tools_served,
                parameters: compile_params(&cx, &m.value.parameters)?,
                defaults: m.value.defaults.clone(),
                retired: m.value.retired.clone(),
                at: (m.referenced.line() as u32, m.referenced.column() as u32),
            });
        }
        let when_absent = match &f.when_absent {
            Some(name) => Some(*lookup.get(&key(&name.value)).ok_or_else(|| {
                cx.err(
                    name,
                    format!(
                        "`when_absent` names `{}`, which is not a model of family `{fname}`",
                        name.value
                    ),
                )
            })?),
            None => None,
        };
        for t in &f.tools {
            let Some(caps) = tools.get_mut(&t.value) else {
                return Err(cx.err(
                    t,
                    format!(
                        "family `{fname}` names tool `{}`, which is not under `tools:`",
                        t.value
                    ),
                ));
            };
            if caps.family.is_some() {
                return Err(cx.err(t, format!("tool `{}` belongs to two families", t.value)));
            }
            caps.family = Some(idx);
        }
        families.push(Family {
            name: fname.clone(),
            selector: f.selector.clone(),
            when_absent,
            unknown: f.unknown,
            case_insensitive: f.case_insensitive,
            rule: f.rule.clone(),
            models,
            lookup,
        });
    }

    Ok(Capabilities {
        server: raw.server,
        version: raw.version.map(|v| v.value),
        source: raw.source,
        retired: raw.retired,
        tools,
        families,
        effects: raw.effects.clone(),
        errors: raw.errors.clone(),
        error_defaults: raw.error_defaults,
        sql_dialect: raw.sql_dialect.as_ref().map(|d| d.value.clone()),
        file: file.path.clone(),
        tool_lines,
        server_params: raw.parameters.keys().cloned().collect(),
        text: file.text.clone(),
    })
}

fn compile_params(
    cx: &Ctx<'_>,
    raw: &RawParams,
) -> Result<BTreeMap<String, Vec<Constraint>>, SourceError> {
    let mut out = BTreeMap::new();
    for (param, list) in raw {
        let mut cs = Vec::new();
        for c in &list.value {
            if cx.active(c.value.since.as_ref(), c.value.until.as_ref())? {
                cs.push(compile_constraint(cx, c)?);
            }
        }
        if !cs.is_empty() {
            out.insert(param.clone(), cs);
        }
    }
    Ok(out)
}

fn compile_constraint(
    cx: &Ctx<'_>,
    sc: &Spanned<RawConstraint>,
) -> Result<Constraint, SourceError> {
    let c = &sc.value;
    let regex = |p: &Option<String>| -> Result<Option<LazyRegex>, SourceError> {
        p.as_deref()
            .map(LazyRegex::new)
            .transpose()
            .map_err(|e| cx.err(sc, format!("invalid pattern: {e}")))
    };
    let has_predicate = c.unsupported
        || c.integer
        || c.one_of.is_some()
        || c.minimum.is_some()
        || c.maximum.is_some()
        || c.exclusive_minimum.is_some()
        || c.exclusive_maximum.is_some()
        || c.min_items.is_some()
        || c.max_items.is_some()
        || c.max_length.is_some()
        || c.pattern.is_some()
        || c.not_pattern.is_some();
    if !has_predicate {
        return Err(cx.err(sc, "a constraint needs at least one predicate (`one_of`, `minimum`, `maximum`, `exclusive_minimum`, `exclusive_maximum`, `integer`, `max_items`, `min_items`, `max_length`, `pattern`, `not_pattern`, `unsupported`)".into()));
    }
    match c.on_violation {
        Outcome::Clamp if c.minimum.is_none() && c.maximum.is_none() => {
            return Err(cx.err(
                sc,
                "`on_violation: clamp` needs `minimum` or `maximum`".into(),
            ));
        }
        Outcome::Truncate if !c.integer => {
            return Err(cx.err(sc, "`on_violation: truncate` needs `integer: true`".into()));
        }
        _ => {}
    }
    if c.coerce_to.is_some() && c.on_violation != Outcome::Coerce {
        return Err(cx.err(sc, "`coerce_to` needs `on_violation: coerce`".into()));
    }
    Ok(Constraint {
        rule: c.rule.clone(),
        note: c.note.clone(),
        when_absent: c.when_absent.clone(),
        unsupported: c.unsupported,
        integer: c.integer,
        one_of: c.one_of.clone(),
        minimum: c.minimum,
        maximum: c.maximum,
        exclusive_minimum: c.exclusive_minimum,
        exclusive_maximum: c.exclusive_maximum,
        min_items: c.min_items,
        max_items: c.max_items,
        max_length: c.max_length,
        pattern: regex(&c.pattern)?,
        not_pattern: regex(&c.not_pattern)?,
        on_violation: c.on_violation,
        coerce_to: c.coerce_to.clone(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn load(text: &str) -> Result<Capabilities, SourceError> {
        Capabilities::from_source(&SourceFile::from_text("caps.yaml", text))
    }

    const MINI: &str = "\
server: s
version: \"3.15.0\"
tools:
  gen: {}
families:
  main:
    tools: [gen]
    selector: model
    when_absent: m1
    models:
      m1:
        aliases: [Model One]
        parameters:
          ratio: [{ one_of: [\"16:9\"], rule: R1 }]
          later: [{ one_of: [1], since: \"3.17\" }]
          earlier: [{ one_of: [1], until: \"3.15\" }]
          current: [{ one_of: [1], since: \"3.15\", until: \"3.16\" }]
";

    #[test]
    fn resolves_aliases_case_insensitively() {
        let caps = load(MINI).unwrap();
        let fam = &caps.families[0];
        assert_eq!(fam.resolve("model one").unwrap().id, "m1");
        assert_eq!(fam.resolve("M1").unwrap().id, "m1");
        assert!(fam.resolve("m2").is_none());
        assert_eq!(caps.tool("gen").unwrap().family, Some(0));
    }

    #[test]
    fn since_gates_later_rules() {
        let caps = load(MINI).unwrap();
        let m = &caps.families[0].models[0];
        assert!(m.parameters.contains_key("ratio"));
        assert!(
            !m.parameters.contains_key("later"),
            "3.17 rule must be inactive at 3.15.0"
        );
        assert!(
            !m.parameters.contains_key("earlier"),
            "a rule replaced at 3.15 is inactive at 3.15.0"
        );
        assert!(m.parameters.contains_key("current"));
    }

    #[test]
    fn unknown_key_names_line_and_column() {
        let err = load(&MINI.replace("rule: R1", "rulez: R1")).unwrap_err();
        assert_eq!(err.path, Path::new("caps.yaml"));
        let (line, _) = err.line.expect("a position");
        assert_eq!(line, 14, "{}", err.render());
        assert!(err.message.contains("rulez"), "{}", err.message);
    }

    #[test]
    fn unknown_model_in_when_absent() {
        let err = load(&MINI.replace("when_absent: m1", "when_absent: m9")).unwrap_err();
        assert_eq!(err.line.map(|l| l.0), Some(9), "{}", err.render());
        assert!(err.message.contains("m9"));
    }

    #[test]
    fn family_naming_an_unlisted_tool() {
        let err = load(&MINI.replace("tools: [gen]", "tools: [gen, other]")).unwrap_err();
        assert!(err.message.contains("`other`"), "{}", err.message);
        assert_eq!(err.line.map(|l| l.0), Some(7));
    }

    // Issue 18, item 9: each of these was read as a version with a 0 in it, so the rule fired
    // or never fired silently.
    #[rstest::rstest]
    #[case::pre_release(
        "since: \"3.17\"",
        "since: \"3.17-rc1\"",
        15,
        "pre-release and build suffixes (`-rc1`)"
    )]
    #[case::build_suffix("until: \"3.15\"", "until: \"3.15+b2\"", 16, "`+b2`")]
    #[case::letter_for_digit(
        "since: \"3.17\"",
        "since: \"3.l7\"",
        15,
        "`l7` is not a decimal number"
    )]
    #[case::empty_component("until: \"3.16\"", "until: \"3..16\"", 17, "a component is empty")]
    #[case::too_large(
        "since: \"3.17\"",
        "since: \"3.18446744073709551616\"",
        15,
        "too large"
    )]
    #[case::twenty_digits("since: \"3.17\"", "since: \"99999999999999999999\"", 15, "too large")]
    #[case::signed(
        "since: \"3.17\"",
        "since: \"+3.17\"",
        15,
        "`+3` is not a decimal number"
    )]
    #[case::matrix_version(
        "version: \"3.15.0\"",
        "version: \"3.15.0-beta\"",
        2,
        "`version: \"3.15.0-beta\"`"
    )]
    fn malformed_versions_are_errors_at_their_line(
        #[case] from: &str,
        #[case] to: &str,
        #[case] line: u32,
        #[case] needle: &str,
    ) {
        let err = load(&MINI.replacen(from, to, 1)).unwrap_err();
        assert_eq!(err.line.map(|l| l.0), Some(line), "{}", err.render());
        assert!(err.message.contains(needle), "{}", err.render());
        // Without a `version:` nothing is gated, and the malformed rule is still refused.
        if !from.starts_with("version") {
            let text = MINI
                .replacen(from, to, 1)
                .replace("version: \"3.15.0\"\n", "");
            assert!(load(&text).is_err(), "{to} accepted without a version");
        }
    }

    // Issue 18, item 14: serde read `minimum: null` as no `minimum`, dropping the bound; the
    // matrix schema allows no null.
    #[rstest::rstest]
    #[case::minimum("one_of: [\"16:9\"]", "one_of: [\"16:9\"], minimum: null", 14)]
    #[case::max_items("one_of: [\"16:9\"]", "one_of: [\"16:9\"], max_items: ~", 14)]
    #[case::pattern("one_of: [\"16:9\"]", "one_of: [\"16:9\"], pattern: null", 14)]
    #[case::since("since: \"3.17\"", "since: null", 15)]
    #[case::model_tools(
        "aliases: [Model One]",
        "aliases: [Model One]\n        tools: null",
        13
    )]
    #[case::matrix_version("version: \"3.15.0\"", "version: null", 2)]
    fn null_is_no_value_for_a_typed_key(#[case] from: &str, #[case] to: &str, #[case] line: u32) {
        let err = load(&MINI.replacen(from, to, 1)).unwrap_err();
        assert_eq!(err.line.map(|l| l.0), Some(line), "{}", err.render());
    }

    #[test]
    fn versions_compare_by_number() {
        assert_eq!(parse_version("v3.15.0"), Ok(vec![3, 15]));
        assert_eq!(parse_version("3.15"), parse_version("3.15.0.0"));
        assert!(parse_version("3.9").unwrap() < parse_version("3.10").unwrap());
        assert_eq!(parse_version("18446744073709551615"), Ok(vec![u64::MAX]));
        let cross = "cross:\n  - { at_least_one_of: [ratio], since: \"3.x\" }\n";
        let err = load(&MINI.replace("families:", &format!("{cross}families:"))).unwrap_err();
        assert!(
            err.message.contains("`x` is not a decimal number"),
            "{}",
            err.render()
        );
        assert_eq!(err.line.map(|l| l.0), Some(6), "{}", err.render());
    }

    #[test]
    fn constraint_without_predicate_is_an_error() {
        let err =
            load(&MINI.replace("{ one_of: [\"16:9\"], rule: R1 }", "{ rule: R1 }")).unwrap_err();
        assert!(
            err.message.contains("at least one predicate"),
            "{}",
            err.message
        );
    }

    #[test]
    fn bad_regex_is_an_error() {
        let err = load(&MINI.replace("one_of: [\"16:9\"]", "pattern: \"(\"")).unwrap_err();
        assert!(err.message.contains("invalid pattern"), "{}", err.message);
    }

    #[test]
    fn check_against_catches_unknown_tool_and_param() {
        let spec = ToolSet::from_json(&serde_json::json!([{"name": "gen", "inputSchema": {"type": "object", "properties": {"model": {"type": "string"}, "ratio": {"type": "string"}, "current": {"type": "integer"}}}}])).unwrap();
        load(MINI).unwrap().check_against(&spec).unwrap();
        let err = load(&MINI.replace("gen", "gne"))
            .unwrap()
            .check_against(&spec)
            .unwrap_err();
        assert!(
            err.message.contains("unknown tool `gne`")
                && err.message.contains("did you mean `gen`"),
            "{}",
            err.message
        );
        let err = load(&MINI.replace("ratio:", "ration:"))
            .unwrap()
            .check_against(&spec)
            .unwrap_err();
        assert!(
            err.message.contains("names parameter `ration`")
                && err.message.contains("did you mean `ratio`"),
            "{}",
            err.message
        );
    }
}
