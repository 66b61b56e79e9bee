//! Findings: the one shape every engine reports in.
//!
//! A [`Finding`] has a stable [`Code`], the rubric [`SubDimension`] it lowers (paper Table 18),
//! a [`Severity`], a message, and where it is: the call, a JSON pointer into that call's
//! arguments and, once the runner knows the YAML, a file:line:column.

use std::fmt;

use serde::{Serialize, Serializer};
use smallvec::SmallVec;

use crate::source::Location;

/// How bad a finding is.
///
/// `Error` is a call the server rejects (or that cannot do what was asked); `Warning` is a call
/// the server silently changes (coerces, clamps, drops or ignores part of): the user asked for
/// something they will not get.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Severity {
    /// A note: no code has it by default, and it never fails a transcript.
    Info,
    /// The server silently changes the call; reported, but does not fail a transcript by itself.
    Warning,
    /// The server rejects the call, or it cannot do what was asked; one fails the transcript.
    Error,
}

impl fmt::Display for Severity {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Severity::Info => "info",
            Severity::Warning => "warning",
            Severity::Error => "error",
        })
    }
}

/// The paper's 14 tool-calling sub-dimensions (Appendix E, Table 18).
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum SubDimension {
    /// `usage_necessity`: tools are called iff the workflow has steps.
    UsageNecessity,
    /// `usage_overuse`: calls no step asks for (recorded, not aggregated into usage).
    UsageOveruse,
    /// `selection_correctness`: each call's tool is one the workflow uses.
    SelectionCorrectness,
    /// `selection_specificity`: each call uses its step's own tool, not a near one.
    SelectionSpecificity,
    /// `selection_completeness`: every step is done by a same-tool call that did not fail.
    SelectionCompleteness,
    /// `ordering_sequence`: dependent steps (every pair, under `order: strict`) run in order.
    OrderingSequence,
    /// `ordering_dependency`: a call's references were grounded when it was made.
    OrderingDependency,
    /// `ordering_efficiency`: no call is unrequested, redundant or failed.
    OrderingEfficiency,
    /// `argument_completeness`: required parameters are present.
    ArgumentCompleteness,
    /// `argument_name`: arguments are named as the schema declares them (a misspelt name
    /// lowers this).
    ArgumentName,
    /// `argument_value`: arguments match the step under its match policies.
    ArgumentValue,
    /// `argument_type`: arguments have the schema's JSON types.
    ArgumentType,
    /// `argument_format`: arguments keep the schema's `format`, `pattern`, `enum` and bounds.
    ArgumentFormat,
    /// `argument_relevancy`: no parameter the tool or the chosen model does not take (an
    /// extra one, not a misspelling).
    ArgumentRelevancy,
}

impl SubDimension {
    /// All 14, grouped by dimension in the paper's order (usage, selection, ordering,
    /// arguments).
    pub(crate) const ALL: [SubDimension; 14] = [
        SubDimension::UsageNecessity,
        SubDimension::UsageOveruse,
        SubDimension::SelectionCorrectness,
        SubDimension::SelectionSpecificity,
        SubDimension::SelectionCompleteness,
        SubDimension::OrderingSequence,
        SubDimension::OrderingDependency,
        SubDimension::OrderingEfficiency,
        SubDimension::ArgumentCompleteness,
        SubDimension::ArgumentName,
        SubDimension::ArgumentValue,
        SubDimension::ArgumentType,
        SubDimension::ArgumentFormat,
        SubDimension::ArgumentRelevancy,
    ];

    /// The six argument sub-dimensions, in the paper's order.
    pub const ARGUMENTS: [SubDimension; 6] = [
        SubDimension::ArgumentCompleteness,
        SubDimension::ArgumentName,
        SubDimension::ArgumentValue,
        SubDimension::ArgumentType,
        SubDimension::ArgumentFormat,
        SubDimension::ArgumentRelevancy,
    ];

    /// The stable name used in YAML labels, JSON output and fault taxonomies.
    pub fn as_str(self) -> &'static str {
        match self {
            SubDimension::UsageNecessity => "usage_necessity",
            SubDimension::UsageOveruse => "usage_overuse",
            SubDimension::SelectionCorrectness => "selection_correctness",
            SubDimension::SelectionSpecificity => "selection_specificity",
            SubDimension::SelectionCompleteness => "selection_completeness",
            SubDimension::OrderingSequence => "ordering_sequence",
            SubDimension::OrderingDependency => "ordering_dependency",
            SubDimension::OrderingEfficiency => "ordering_efficiency",
            SubDimension::ArgumentCompleteness => "argument_completeness",
            SubDimension::ArgumentName => "argument_name",
            SubDimension::ArgumentValue => "argument_value",
            SubDimension::ArgumentType => "argument_type",
            SubDimension::ArgumentFormat => "argument_format",
            SubDimension::ArgumentRelevancy => "argument_relevancy",
        }
    }

    /// The dimension this sub-dimension belongs to: `usage`, `selection`, `ordering` or
    /// `arguments`.
    pub fn dimension(self) -> &'static str {
        let name = self.as_str();
        match &name[..name.find('_').unwrap_or(name.len())] {
            "argument" => "arguments",
            other => other,
        }
    }

    /// The sub-dimension with this [`as_str`](Self::as_str) name; `None` for any other string.
    pub(crate) fn parse(s: &str) -> Option<Self> {
        Self::ALL.into_iter().find(|d| d.as_str() == s)
    }
}

impl fmt::Display for SubDimension {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

impl Serialize for SubDimension {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(self.as_str())
    }
}

macro_rules! codes {
    ($( $(#[doc = $doc:literal])* $variant:ident = $name:literal, $sub:ident, $sev:ident; )*) => {
        /// A stable finding code. The string form (`lint.unknown_param`) never changes meaning;
        /// labels, reports and users' CI filters rely on it.
        #[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
        pub enum Code {
            $( $(#[doc = $doc])* $variant, )*
        }

        impl Code {
            /// Every code, in table order.
            pub const ALL: &'static [Code] = &[$(Code::$variant),*];

            /// The code with this string form.
            pub fn parse(s: &str) -> Option<Code> {
                Code::ALL.iter().copied().find(|c| c.as_str() == s)
            }

            /// The stable string form, `<engine>.<name>` (`cap.unsupported_value`).
            pub fn as_str(self) -> &'static str {
                match self { $(Code::$variant => $name,)* }
            }

            /// The sub-dimension a finding with this code lowers by default.
            pub fn sub_dimension(self) -> SubDimension {
                match self { $(Code::$variant => SubDimension::$sub,)* }
            }

            /// The severity a finding with this code has by default.
            pub fn severity(self) -> Severity {
                match self { $(Code::$variant => Severity::$sev,)* }
            }

            /// What the code means: its doc comment in this table, one line (SARIF's rule
            /// descriptions, the reference in the docs).
            pub fn doc(self) -> &'static str {
                match self { $(Code::$variant => concat!($($doc),*),)* }
            }
        }
    };
}

codes! {
    /// The tool is not in the spec.
    UnknownTool = "lint.unknown_tool", SelectionCorrectness, Error;
    /// An argument the tool's schema does not declare (the server drops it unseen).
    UnknownParam = "lint.unknown_param", ArgumentName, Error;
    /// A required parameter is absent.
    MissingRequired = "lint.missing_required", ArgumentCompleteness, Error;
    /// A value of the wrong JSON type.
    Type = "lint.type", ArgumentType, Error;
    /// A value outside the schema's `enum` / `const`.
    Enum = "lint.enum", ArgumentFormat, Error;
    /// A string that breaks the schema's `format` or `pattern`.
    Format = "lint.format", ArgumentFormat, Error;
    /// A number, length or item count outside the schema's bounds.
    Range = "lint.range", ArgumentFormat, Error;
    /// Any other JSON Schema keyword (`not`, `oneOf`, `dependentRequired`, …).
    Schema = "lint.schema", ArgumentFormat, Error;
    /// The arguments are not a JSON object.
    ArgumentsNotObject = "lint.arguments_not_object", ArgumentType, Error;
    /// The model named by the selector parameter is not one the server knows.
    UnknownModel = "cap.unknown_model", ArgumentValue, Error;
    /// The chosen model cannot serve this tool.
    UnsupportedTool = "cap.unsupported_tool", SelectionCorrectness, Error;
    /// A value the chosen model (or the server) rejects.
    UnsupportedValue = "cap.unsupported_value", ArgumentValue, Error;
    /// A parameter the chosen model rejects outright.
    UnsupportedParam = "cap.unsupported_param", ArgumentRelevancy, Error;
    /// A value the server requires to be an integer.
    NotInteger = "cap.not_integer", ArgumentType, Error;
    /// A value the server requires to match a pattern (a URI scheme, a file type, …).
    InvalidFormat = "cap.invalid_format", ArgumentFormat, Error;
    /// A rule across parameters (equal lengths, at least one of, requires) is broken.
    CrossParameter = "cap.cross_parameter", ArgumentCompleteness, Error;
    /// The server or model no longer serves requests.
    Retired = "cap.retired", SelectionCorrectness, Error;
    /// The server silently replaces the value with another.
    Coerced = "cap.coerced", ArgumentValue, Warning;
    /// The server silently clamps the value into a range.
    Clamped = "cap.clamped", ArgumentValue, Warning;
    /// The server silently ignores the parameter or value.
    Ignored = "cap.ignored", ArgumentRelevancy, Warning;
    /// The selector is absent and the server's own default differs from the schema's.
    DefaultMismatch = "cap.default_mismatch", ArgumentValue, Warning;
    /// An argument references an artifact no earlier output and no prompt produced (NP1).
    UnknownReference = "flow.unknown_reference", ArgumentValue, Error;
    /// A call consumes an artifact that only a later call produces (NP3).
    UseBeforeProduce = "flow.use_before_produce", OrderingDependency, Error;
    /// A call repeats an earlier one, or makes what is already there and was not asked for.
    RedundantCall = "flow.redundant_call", OrderingEfficiency, Error;
    /// A call depends on the output of a call that failed.
    FailedDependency = "flow.failed_dependency", OrderingDependency, Error;
    /// The agent called a different tool than the scenario's workflow for this step.
    WrongTool = "oracle.wrong_tool", SelectionCorrectness, Error;
    /// A step of the scenario's workflow was never called.
    MissingCall = "oracle.missing_call", SelectionCompleteness, Error;
    /// A call that no step of the workflow asks for and that makes media (image, video, audio).
    UnrequestedCall = "oracle.unrequested_call", UsageOveruse, Error;
    /// A call that no step of the workflow asks for, making no media (a lookup, a listing), or
    /// one that did nothing: refused by the server, or, with no answer recorded, failed as the
    /// flow engine found.
    ExtraCall = "oracle.extra_call", UsageOveruse, Warning;
    /// A call that no step of the workflow asks for and that may change state (its tool is not
    /// read-only, by its MCP annotations or the capability matrix), unless it did nothing: an
    /// answer that is no refusal says it did, even where the call names something no output
    /// gave.
    UnrequestedEffect = "oracle.unrequested_effect", UsageOveruse, Error;
    /// A call the scenario or turn forbids (`forbid:`), by name or by what it does.
    ForbiddenCall = "oracle.forbidden_call", SelectionCorrectness, Error;
    /// A required step whose call the server refused (`isError`) or that changed nothing (a
    /// dry run), and that no later call of the turn did.
    StepUndone = "oracle.step_undone", SelectionCompleteness, Error;
    /// An argument differs from the workflow's under its match policy (`exact` unless the step
    /// says otherwise): the call did not do its step.
    ValueMismatch = "oracle.value_mismatch", ArgumentValue, Error;
    /// Two calls run in the opposite order from the one the workflow needs.
    Order = "oracle.order", OrderingSequence, Warning;
    /// The live agent kept calling tools without replying until the runner's step budget.
    StepBudget = "agent.step_budget", UsageOveruse, Error;
    /// The literal trajectory match the suite's `thresholds.trajectory` gates on (ADK's
    /// `tool_trajectory_avg_score`, as an imported criterion asks) is below its minimum.
    TrajectoryBelow = "oracle.trajectory_below_minimum", OrderingSequence, Error;
}

impl fmt::Display for Code {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

impl Serialize for Code {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(self.as_str())
    }
}

/// One fact an engine established about a call or a transcript.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Finding {
    /// What was found; its string form is stable.
    pub code: Code,
    /// The sub-dimension it lowers: the code's default unless the engine chose another (an
    /// unknown parameter no declared name is close to lowers `argument_relevancy`).
    pub sub_dimension: SubDimension,
    /// How bad it is: the code's [`severity`](Code::severity), as [`Finding::new`] sets it.
    pub severity: Severity,
    /// What is wrong, for a person: the tool, parameter or value and, where known, what the
    /// server does with it. Match on `code`, not on this text; it may be reworded.
    pub message: String,
    /// JSON pointer into the call's arguments (`""` for the call as a whole).
    pub pointer: String,
    /// The rule this finding enforces, e.g. `V2` for RULES.md's Veo audio rule.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub rule: Option<String>,
    /// Index of the call in the transcript (0-based, across turns), when the runner knows it.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub call: Option<usize>,
    /// Where in the user's YAML the finding points, when known.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub location: Option<Location>,
}

impl Finding {
    /// A finding with the code's default sub-dimension and severity.
    pub fn new(code: Code, pointer: impl Into<String>, message: impl Into<String>) -> Self {
        Self {
            code,
            sub_dimension: code.sub_dimension(),
            severity: code.severity(),
            message: message.into(),
            pointer: pointer.into(),
            rule: None,
            call: None,
            location: None,
        }
    }

    /// Sets [`rule`](Self::rule) (`None` clears it).
    pub(crate) fn with_rule(mut self, rule: Option<&str>) -> Self {
        self.rule = rule.map(str::to_owned);
        self
    }

    /// Replaces the code's default sub-dimension.
    pub(crate) fn with_sub_dimension(mut self, sub: SubDimension) -> Self {
        self.sub_dimension = sub;
        self
    }

    /// Whether this finding answers to a fault name used in a transcript label: its code
    /// (`cap.unsupported_value`), its sub-dimension (`argument_value`), its dimension
    /// (`selection`), or its engine (`lint`, `cap`).
    pub fn matches_fault(&self, fault: &str) -> bool {
        let code = self.code.as_str();
        fault == code
            || fault == self.sub_dimension.as_str()
            || fault == self.sub_dimension.dimension()
            || code.split('.').next() == Some(fault)
    }
}

impl fmt::Display for Finding {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}[{}]", self.severity, self.code)?;
        if let Some(rule) = &self.rule {
            write!(f, " ({rule})")?;
        }
        if !self.pointer.is_empty() {
            write!(f, " at {}", self.pointer)?;
        }
        write!(f, ": {}", self.message)
    }
}

/// Whether `fault` names something a finding can be: a code, a sub-dimension, a dimension or
/// an engine. Labels naming anything else are rejected at load time.
pub fn is_known_fault(fault: &str) -> bool {
    Code::ALL.iter().any(|c| c.as_str() == fault)
        || SubDimension::parse(fault).is_some()
        || matches!(
            fault,
            "usage"
                | "selection"
                | "ordering"
                | "arguments"
                | "lint"
                | "cap"
                | "flow"
                | "oracle"
                | "agent"
        )
}

/// The JSON type of a value, as schemas name it (`integer` for whole numbers).
pub fn type_name(v: &serde_json::Value) -> &'static str {
    match v {
        serde_json::Value::Null => "null",
        serde_json::Value::Bool(_) => "boolean",
        serde_json::Value::Number(n) if n.is_i64() || n.is_u64() => "integer",
        serde_json::Value::Number(_) => "number",
        serde_json::Value::String(_) => "string",
        serde_json::Value::Array(_) => "array",
        serde_json::Value::Object(_) => "object",
    }
}

/// `" (did you mean `x`?)"` for the candidate closest to `name`, or `""` when none is close.
///
/// Close means: similar spelling (Jaro-Winkler ≥ 0.8, or one or two edits), one name containing the other
/// (`model` / `model_id`), or sharing at least half their `_`-separated words
/// (`gcs_bucket_uri` / `output_gcs_bucket`).
pub fn did_you_mean<'a>(name: &str, candidates: impl IntoIterator<Item = &'a str>) -> String {
    nearest(name, candidates).map_or_else(String::new, |c| format!(" (did you mean `{c}`?)"))
}

/// The candidate closest to `name` by [`did_you_mean`]'s measure, if any is close.
pub fn nearest<'a>(name: &str, candidates: impl IntoIterator<Item = &'a str>) -> Option<&'a str> {
    let lower = name.to_lowercase();
    fn words(s: &str) -> SmallVec<[&str; 8]> {
        s.split(['_', '-', '.', ' '])
            .filter(|w| !w.is_empty())
            .collect()
    }
    let mine = words(&lower);
    let chars = lower.chars().count();
    // The most edits a typo makes: one, two in a long name.
    let typo_edits = if lower.len() >= 8 { 2 } else { 1 };
    let mut c = String::new();
    let mut best: Option<(f64, &str)> = None;
    for cand in candidates {
        if cand == name {
            continue;
        }
        // Each candidate lowered into the one buffer (a wrong argument asks of every
        // parameter its tool declares).
        c.clear();
        if cand.is_ascii() {
            c.extend(cand.chars().map(|ch| ch.to_ascii_lowercase()));
        } else {
            c.push_str(&cand.to_lowercase());
        }
        let jw = strsim::jaro_winkler(&lower, &c);
        let theirs = words(&c);
        let shared = mine.iter().filter(|w| theirs.contains(w)).count();
        let union = mine.len() + theirs.len() - shared;
        let jaccard = if union == 0 {
            0.0
        } else {
            shared as f64 / union as f64
        };
        let contains =
            lower.len().min(c.len()) >= 3 && (lower.contains(&*c) || c.contains(&*lower));
        let score = jw.max(jaccard + 0.3).max(if contains { 0.85 } else { 0.0 });
        // Short names defeat Jaro's matching window: count one edit (a typo or a swap) as close.
        // (No fewer edits than the lengths differ by: a name longer or shorter by more is no
        // typo, without counting.)
        let typo = chars.abs_diff(c.chars().count()) <= typo_edits
            && strsim::osa_distance(&lower, &c) <= typo_edits;
        let score = if typo { score.max(0.9) } else { score };
        let close = jw >= 0.8 || jaccard >= 0.5 || contains || typo;
        if close && best.is_none_or(|(s, _)| score > s) {
            best = Some((score, cand));
        }
    }
    best.map(|(_, c)| c)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn codes_are_unique_and_namespaced() {
        let mut names: Vec<_> = Code::ALL.iter().map(|c| c.as_str()).collect();
        names.sort_unstable();
        let before = names.len();
        names.dedup();
        assert_eq!(before, names.len());
        assert!(names.iter().all(|n| {
            ["lint.", "cap.", "flow.", "oracle.", "agent."]
                .iter()
                .any(|p| n.starts_with(p))
        }));
    }

    /// Every code's doc comment reads as one sentence (SARIF's rule descriptions).
    #[test]
    fn every_code_has_its_doc() {
        for c in Code::ALL {
            let doc = c.doc();
            assert!(
                doc.starts_with(' ') && doc.trim().ends_with('.'),
                "{c}: {doc:?}"
            );
            assert!(!doc.contains("  "), "{c}: {doc:?}");
        }
    }

    #[test]
    fn fault_matching_accepts_code_sub_dimension_dimension_and_engine() {
        let f = Finding::new(Code::UnsupportedValue, "/model", "x");
        for fault in [
            "cap.unsupported_value",
            "argument_value",
            "arguments",
            "cap",
        ] {
            assert!(f.matches_fault(fault), "{fault}");
        }
        for fault in ["argument_name", "selection", "lint", "cap.coerced"] {
            assert!(!f.matches_fault(fault), "{fault}");
        }
    }

    /// The book's table of codes says what the code says: each row's sub-dimension and
    /// default severity (`oracle.value_mismatch` was a warning there, an error here). The
    /// table is generated from this one (`tests/cli/docs.rs`); this holds it without the binary.
    #[test]
    fn the_readme_table_agrees_with_the_codes() {
        let readme = std::fs::read_to_string(concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/docs/src/reference/findings.md"
        ))
        .unwrap();
        let mut rows = 0;
        for line in readme.lines() {
            let cells: Vec<&str> = line.split('|').map(str::trim).collect();
            let Some(code) = cells
                .get(1)
                .and_then(|c| c.strip_prefix('`')?.strip_suffix('`'))
                .and_then(Code::parse)
            else {
                continue;
            };
            rows += 1;
            assert!(
                cells[2].starts_with(code.sub_dimension().as_str()),
                "{line}"
            );
            let severity = match code.severity() {
                Severity::Error => "error",
                Severity::Warning => "warning",
                Severity::Info => "info",
            };
            assert!(
                cells[3].starts_with(severity),
                "{line}: the code says {severity}"
            );
        }
        assert!(rows >= Code::ALL.len() / 2, "{rows} rows");
    }

    #[test]
    fn dimensions() {
        assert_eq!(SubDimension::ArgumentName.dimension(), "arguments");
        assert_eq!(SubDimension::SelectionSpecificity.dimension(), "selection");
        assert_eq!(SubDimension::UsageOveruse.dimension(), "usage");
        assert_eq!(SubDimension::OrderingDependency.dimension(), "ordering");
    }
}
