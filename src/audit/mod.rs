//! Auditing a tool spec for the people who write MCP servers: what the spec hides from agents
//! and judges, before an agent trips on it.
//!
//! Four checks, each a file here: constraints stated only in prose ([`prose`]: enums, ranges,
//! defaults, model dependence, conditions a description states and the schema does not
//! encode), the missing contract ([`contract`]: no type, no description, no output schema, no
//! annotations, no seed outputs), one concept under several names across a fleet ([`names`]),
//! and which function-calling providers refuse an input schema as written ([`providers`]).
//! Every finding has a stable [`AuditCode`], the tool and parameter, and a JSON pointer into
//! the spec file with its line and column. The main type is [`Audit`], built with
//! [`Audit::run`] over [`Server`]s loaded with [`Server::load`]; [`render`] prints it.
//!
//! Audit findings are advice about a spec, not verdicts on a call: they are `warning` or
//! `info`, never `error`, and carry no rubric sub-dimension (they lower nothing; they say why
//! an agent will).

mod contract;
mod names;
mod prose;
pub mod providers;
pub mod render;

use std::collections::{BTreeMap, BTreeSet};
use std::fmt;
use std::path::{Path, PathBuf};

use serde::{Serialize, Serializer};
use serde_json::Value;

use crate::finding::Severity;
use crate::source::json::escape;
use crate::source::{self, Location, SourceError, SourceFile};
use crate::spec::{Capabilities, Profile, ToolSet, ToolSpec};

pub use names::{NameGroup, NameUse};
pub use providers::Provider;

/// What kind of check a code belongs to, for the per-server counts.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Kind {
    /// A constraint stated only in a description.
    Prose,
    /// Part of the tool's contract left out.
    Contract,
    /// One concept under several names across the fleet.
    Names,
    /// A provider's function declarations refuse the schema as written.
    Provider,
}

macro_rules! audit_codes {
    ($( $(#[doc = $doc:literal])* $variant:ident = $name:literal, $kind:ident, $sev:ident; )*) => {
        /// A stable audit code; the string form (`audit.prose_enum`) never changes meaning.
        #[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
        pub enum AuditCode {
            $( $(#[doc = $doc])* $variant, )*
        }

        impl AuditCode {
            /// Every code, in table order.
            pub const ALL: &'static [AuditCode] = &[$(AuditCode::$variant),*];

            /// The stable string form.
            pub fn as_str(self) -> &'static str {
                match self { $(AuditCode::$variant => $name,)* }
            }

            /// The check it belongs to.
            pub fn kind(self) -> Kind {
                match self { $(AuditCode::$variant => Kind::$kind,)* }
            }

            /// Its default severity.
            pub fn severity(self) -> Severity {
                match self { $(AuditCode::$variant => Severity::$sev,)* }
            }

            /// What the code means: its doc comment in this table, one line (the reference in
            /// the docs is generated from it).
            pub fn doc(self) -> &'static str {
                match self { $(AuditCode::$variant => concat!($($doc),*),)* }
            }
        }
    };
}

audit_codes! {
    /// A description lists the values a parameter takes; the schema has no `enum`.
    ProseEnum = "audit.prose_enum", Prose, Warning;
    /// A description states a bound (range, maximum, item count, length) the schema lacks or
    /// contradicts.
    ProseRange = "audit.prose_range", Prose, Warning;
    /// A description says a `number` parameter is an integer.
    ProseInteger = "audit.prose_integer", Prose, Warning;
    /// A description states a default; the schema has no `default`.
    ProseDefault = "audit.prose_default", Prose, Warning;
    /// A description states a default that differs from the schema's `default`.
    DefaultDisagrees = "audit.default_disagrees", Prose, Warning;
    /// A description says what is supported depends on the model (or is supported only by
    /// some): a capability rule in prose.
    ModelDependent = "audit.model_dependent", Prose, Warning;
    /// A description states a condition across parameters (required when, must match the
    /// length of, one of them is required).
    ProseConditional = "audit.prose_conditional", Prose, Warning;
    /// A description says the server falls back to an environment variable when the
    /// parameter is absent: a default that lives in the deployment, which no agent can see.
    EnvFallback = "audit.env_fallback", Prose, Info;
    /// A description says the parameter is deprecated; the schema has no `deprecated: true`.
    ProseDeprecated = "audit.prose_deprecated", Prose, Info;
    /// A tool without a description.
    NoToolDescription = "audit.no_tool_description", Contract, Warning;
    /// A parameter without a type (`type`, `enum`, `const`, a combinator or a `$ref`).
    NoParamType = "audit.no_param_type", Contract, Warning;
    /// A required parameter without a description.
    RequiredUndescribed = "audit.required_undescribed", Contract, Warning;
    /// An optional parameter without a description.
    NoParamDescription = "audit.no_param_description", Contract, Info;
    /// A tool without an `outputSchema`.
    NoOutputSchema = "audit.no_output_schema", Contract, Info;
    /// A tool without MCP `annotations` (read-only, destructive, idempotent hints).
    NoAnnotations = "audit.no_annotations", Contract, Info;
    /// No seed output for the tool, so generated mocks are not grounded.
    NoSeedOutputs = "audit.no_seed_outputs", Contract, Info;
    /// One concept under several parameter names across the servers audited together.
    FleetName = "audit.fleet_name", Names, Warning;
    /// A provider's function declarations refuse the input schema as written.
    ProviderRefused = "audit.provider_refused", Provider, Warning;
    /// OpenAI strict mode (opt-in) refuses the input schema as written.
    StrictRefused = "audit.strict_refused", Provider, Info;
}

impl fmt::Display for AuditCode {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

impl Serialize for AuditCode {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(self.as_str())
    }
}

/// One thing the spec hides, and where.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct AuditFinding {
    /// The stable code.
    pub code: AuditCode,
    /// `warning` or `info`.
    pub severity: Severity,
    /// The server (the spec file's name without `.tools.json`).
    pub server: String,
    /// The tool, when the finding is about one.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub tool: Option<String>,
    /// The parameter, when the finding is about one.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub param: Option<String>,
    /// The JSON pointer into the spec file (`/3/inputSchema/properties/seed/description`).
    pub pointer: String,
    /// The pointer's line and column; `None` for a spec read from JSON Lines.
    pub location: Option<Location>,
    /// What is hidden.
    pub message: String,
    /// The sentence of the description that states it, verbatim.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub quote: Option<String>,
    /// A mechanical fix, when there is one (a JSON Schema fragment, a rename).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub fix: Option<String>,
    /// For provider findings, the provider.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub provider: Option<Provider>,
    /// With a capability matrix, whether one of its rules covers the prose: `covered by
    /// veo.yaml (V3)`, or `no rule in veo.yaml`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub matrix: Option<String>,
}

/// The tools a seed-outputs file has samples for.
#[derive(Clone, Debug)]
pub struct SeedOutputs {
    /// The file.
    pub file: PathBuf,
    /// Tools with at least one sample.
    pub tools: BTreeSet<String>,
}

impl SeedOutputs {
    /// Reads a seed-outputs file: `{"samples": [{"tool": …, "result": …}, …]}` or a bare array
    /// of such samples. A sample without a `tool` string is an error at its place.
    pub fn load(path: &Path) -> Result<Self, SourceError> {
        let file = SourceFile::read(path)?;
        let value = file.parse_json()?;
        let (samples, prefix) = match &value {
            Value::Array(a) => (a, ""),
            Value::Object(o) => match o.get("samples") {
                Some(Value::Array(a)) => (a, "/samples"),
                _ => {
                    return Err(file.error_at_pointer(
                        "",
                        "a seed-outputs file is `{\"samples\": [{\"tool\": …}, …]}` or an array of samples",
                    ));
                }
            },
            _ => return Err(file.error("a seed-outputs file is a JSON object or array")),
        };
        let mut tools = BTreeSet::new();
        for (i, s) in samples.iter().enumerate() {
            match s.get("tool").and_then(Value::as_str) {
                Some(t) => {
                    tools.insert(t.to_owned());
                }
                None => {
                    return Err(file.error_at_pointer(
                        &format!("{prefix}/{i}"),
                        "a seed output needs the `tool` it is an output of",
                    ));
                }
            }
        }
        Ok(Self {
            file: path.to_path_buf(),
            tools,
        })
    }

    /// The seed-outputs file beside a spec: `X.seed_outputs.json` for `X.tools.json`.
    pub fn sibling_of(spec: &Path) -> Option<PathBuf> {
        let name = spec.file_name()?.to_str()?;
        let stem = name.strip_suffix(".tools.json")?;
        let p = spec.with_file_name(format!("{stem}.seed_outputs.json"));
        p.is_file().then_some(p)
    }
}

/// One server's spec, with what else is known about it.
#[derive(Clone, Debug)]
pub struct Server {
    /// The spec file's name without `.tools.json` (or `.json`).
    pub name: String,
    /// The spec as read.
    pub file: SourceFile,
    /// Its tools.
    pub tools: ToolSet,
    /// Its seed outputs, when it has any.
    pub seeds: Option<SeedOutputs>,
    /// The capability matrices that describe it.
    pub caps: Vec<Capabilities>,
    // Every place in the file, walked once when the first finding is placed: placing each
    // finding by walking the text again made the audit quadratic (issue 32, item 9).
    places: std::sync::OnceLock<source::json::Index>,
}

impl Server {
    /// Loads a spec; `seeds` is its seed-outputs file (see [`SeedOutputs::sibling_of`]).
    pub fn load(spec: &Path, seeds: Option<&Path>) -> Result<Self, SourceError> {
        let file = SourceFile::read(spec)?;
        let tools = ToolSet::from_source(&file)?;
        let seeds = seeds.map(SeedOutputs::load).transpose()?;
        let name = spec
            .file_name()
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_default();
        let name = name
            .strip_suffix(".tools.json")
            .or_else(|| name.strip_suffix(".json"))
            .unwrap_or(&name)
            .to_owned();
        Ok(Self {
            name,
            file,
            tools,
            seeds,
            caps: Vec::new(),
            places: std::sync::OnceLock::new(),
        })
    }

    /// Whether a matrix is about this server: it names one of its tools.
    pub fn is_described_by(&self, caps: &Capabilities) -> bool {
        caps.tools
            .keys()
            .any(|t| self.tools.tools().iter().any(|s| &s.name == t))
    }

    /// Where a tool and its schema are in the file: the tool's pointer, and its input schema's
    /// (`None` when the schema was translated from another dialect).
    fn places(&self, tool: &ToolSpec) -> (String, Option<String>) {
        match self.tools.origin(&tool.name) {
            Some((_, t, s)) => (t.to_owned(), s.map(str::to_owned)),
            None => (String::new(), None),
        }
    }

    /// The line and column of a pointer (its nearest existing ancestor when the pointer names
    /// nothing written, such as an absent `description`).
    fn locate(&self, pointer: &str) -> Option<Location> {
        let text = &self.file.text;
        let index = self.places.get_or_init(|| source::json::Index::new(text));
        let mut p = pointer;
        loop {
            if let Some(place) = index.locate(text, p) {
                let (line, column) = index.line_column(text, place.start());
                return Some(self.file.location(line, column));
            }
            p = &p[..p.rfind('/')?];
        }
    }

    fn finding(&self, code: AuditCode, tool: Option<&str>, param: Option<&str>) -> Draft<'_> {
        Draft {
            server: self,
            f: AuditFinding {
                code,
                severity: code.severity(),
                server: self.name.clone(),
                tool: tool.map(str::to_owned),
                param: param.map(str::to_owned),
                pointer: String::new(),
                location: None,
                message: String::new(),
                quote: None,
                fix: None,
                provider: None,
                matrix: None,
            },
        }
    }
}

/// A finding being built.
struct Draft<'a> {
    server: &'a Server,
    f: AuditFinding,
}

impl Draft<'_> {
    fn at(mut self, pointer: &str) -> Self {
        self.f.location = self.server.locate(pointer);
        self.f.pointer = pointer.to_owned();
        self
    }
    fn message(mut self, m: impl Into<String>) -> Self {
        self.f.message = m.into();
        self
    }
    fn quote(mut self, q: &str) -> Self {
        self.f.quote = Some(q.to_owned());
        self
    }
    fn fix(mut self, fix: impl Into<String>) -> Self {
        self.f.fix = Some(fix.into());
        self
    }
    fn done(self) -> AuditFinding {
        self.f
    }
}

/// One parameter of a tool, with its places.
struct Param<'a> {
    name: &'a str,
    schema: &'a Value,
    required: bool,
    /// Its pointer in the file (`/0/inputSchema/properties/seed`).
    pointer: String,
}

fn params<'a>(server: &Server, tool: &'a ToolSpec) -> Vec<Param<'a>> {
    let (tool_at, schema_at) = server.places(tool);
    let base = schema_at.unwrap_or(tool_at);
    let required: Vec<&str> = tool.required().collect();
    tool.properties()
        .into_iter()
        .flatten()
        .map(|(name, schema)| Param {
            name,
            schema,
            required: required.contains(&name.as_str()),
            pointer: format!("{base}/properties/{}", escape(name)),
        })
        .collect()
}

/// One server's part of the audit.
#[derive(Clone, Debug, Serialize)]
pub struct ServerReport {
    /// The server's name.
    pub server: String,
    /// The spec file.
    pub file: String,
    /// The paper's complexity profile (as `inspect-spec` prints it).
    pub profile: Profile,
    /// Findings by kind.
    pub counts: BTreeMap<Kind, usize>,
    /// Tools each provider refuses as written (OpenAI strict included), by provider.
    pub refused_tools: BTreeMap<Provider, usize>,
    /// The findings, in file order.
    pub findings: Vec<AuditFinding>,
}

/// The audit of a fleet (one server or several).
#[derive(Clone, Debug, Serialize)]
pub struct Audit {
    /// Each server, in the order given.
    pub servers: Vec<ServerReport>,
    /// Concepts under several names across the servers (empty for one server).
    pub names: Vec<NameGroup>,
}

impl Audit {
    /// Audits the servers, each alone and then together (nomenclature).
    pub fn run(servers: &[Server]) -> Self {
        let (names, mut name_findings) = names::fleet(servers);
        let servers = servers
            .iter()
            .map(|s| {
                let mut findings = Vec::new();
                for tool in s.tools.tools() {
                    findings.extend(prose::check(s, tool));
                    findings.extend(contract::check(s, tool));
                    findings.extend(providers::check(s, tool));
                }
                findings.extend(contract::check_server(s));
                findings.extend(name_findings.remove(&s.name).unwrap_or_default());
                findings.sort_by(|a, b| {
                    let at = |f: &AuditFinding| f.location.as_ref().map(|l| (l.line, l.column));
                    at(a).cmp(&at(b)).then(a.code.cmp(&b.code))
                });
                let mut counts = BTreeMap::new();
                for f in &findings {
                    *counts.entry(f.code.kind()).or_insert(0) += 1;
                }
                let mut refused: BTreeMap<Provider, BTreeSet<&str>> = BTreeMap::new();
                for f in &findings {
                    if let (Some(p), Some(t)) = (f.provider, f.tool.as_deref()) {
                        refused.entry(p).or_default().insert(t);
                    }
                }
                ServerReport {
                    server: s.name.clone(),
                    file: s.file.path.display().to_string(),
                    profile: s.tools.profile(),
                    counts,
                    refused_tools: Provider::ALL
                        .iter()
                        .map(|p| (*p, refused.get(p).map_or(0, BTreeSet::len)))
                        .collect(),
                    findings,
                }
            })
            .collect();
        Audit { servers, names }
    }

    /// Every finding, server by server.
    pub fn findings(&self) -> impl Iterator<Item = &AuditFinding> {
        self.servers.iter().flat_map(|s| s.findings.iter())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn codes_are_unique_and_namespaced() {
        let mut seen = BTreeSet::new();
        for c in AuditCode::ALL {
            assert!(c.as_str().starts_with("audit."), "{c}");
            assert!(seen.insert(c.as_str()), "{c} twice");
            assert_ne!(
                c.severity(),
                Severity::Error,
                "{c}: audit findings are advice"
            );
        }
    }

    /// Issue 32, item 9: the audit walks the spec's text once to place all its findings, not
    /// once per finding (3,000 tools took 14 s, a 1 MB description 65 s), and two huge names
    /// are not compared letter by letter (44 s).
    #[test]
    fn findings_are_placed_from_one_walk_of_the_text() {
        let tools: Vec<Value> = (0..400)
            .map(|i| {
                serde_json::json!({"name": format!("t{i}"), "inputSchema": {"type": "object",
                    "properties": {"mode": {"type": "string",
                        "description": "One of: fast, slow. Support depends on the model. Defaults to fast."}}}})
            })
            .collect();
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("wide.tools.json");
        std::fs::write(&path, serde_json::to_string_pretty(&tools).unwrap()).unwrap();
        let server = Server::load(&path, None).unwrap();
        source::json::WALKS.with(|n| n.set(0));
        let audit = Audit::run(std::slice::from_ref(&server));
        let findings: Vec<&AuditFinding> = audit.findings().collect();
        assert!(findings.len() >= 400 * 3, "{}", findings.len());
        assert_eq!(source::json::WALKS.with(std::cell::Cell::get), 0);
        // Each placed where a walk from the start places it.
        for f in findings.iter().step_by(97) {
            // The nearest written ancestor, as `locate` places an absent member.
            let mut p = f.pointer.as_str();
            let place = loop {
                match source::json::locate(&server.file.text, p) {
                    Some(place) => break place,
                    None => p = &p[..p.rfind('/').unwrap()],
                }
            };
            let (line, column) = source::json::line_column(&server.file.text, place.start());
            let at = f.location.as_ref().unwrap();
            assert_eq!((at.line, at.column), (line, column), "{}", f.pointer);
        }
    }

    #[test]
    fn two_huge_names_are_compared_by_their_words() {
        let a = "x".repeat(100_000);
        let b = format!("{}y", "x".repeat(99_999));
        let spec = |name: &str| {
            serde_json::json!([{"name": "t", "inputSchema": {"type": "object", "properties":
                {name: {"type": "string", "description": "The output bucket for the results."}}}}])
        };
        let dir = tempfile::tempdir().unwrap();
        let servers: Vec<Server> = [("a", &a), ("b", &b)]
            .into_iter()
            .map(|(n, name)| {
                let p = dir.path().join(format!("{n}.tools.json"));
                std::fs::write(&p, spec(name).to_string()).unwrap();
                Server::load(&p, None).unwrap()
            })
            .collect();
        assert!(!names::similar_names(&a, &b));
        let audit = Audit::run(&servers);
        assert!(audit.names.is_empty());
    }
}
