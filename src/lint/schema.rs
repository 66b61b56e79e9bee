//! JSON Schema checks of one call: unknown parameters first (with "did you mean"), then every
//! keyword of the tool's input schema, mapped onto finding codes and rubric sub-dimensions.

use std::sync::OnceLock;

use jsonschema::error::{TypeKind, ValidationErrorKind};
use serde_json::{Map, Value};

use super::{LintError, nearest};
use crate::finding::type_name;
use crate::finding::{Code, Finding, SubDimension};
use crate::source::json::child;
use crate::spec::ToolSpec;

pub(super) struct CompiledTool {
    pub spec: ToolSpec,
    /// Compiled by [`CompiledTool::new`], or at the first call of a [`CompiledTool::deferred`];
    /// `None` inside when a deferred schema does not compile after all (a stamp that should
    /// not have held: [`crate::pattern::broken_uses`]).
    validator: OnceLock<Option<jsonschema::Validator>>,
    // Whether arguments outside `properties` are allowed (`additionalProperties` not false and
    // not absent-with-properties: MCP servers drop undeclared arguments silently, so an
    // undeclared argument is a finding unless the schema explicitly allows extras).
    pub open: bool,
}

impl CompiledTool {
    pub fn new(spec: &ToolSpec) -> Result<Self, LintError> {
        let schema = &spec.input_schema;
        let validator = compile(spec)?;
        if let Some(cycle) = super::cycle::in_place_cycle(schema) {
            return Err(LintError::InvalidSchema {
                tool: spec.name.clone(),
                message: cycle_message(&cycle),
                // The first `$ref` of the cycle, written as a pointer into the schema.
                pointer: cycle
                    .first()
                    .and_then(|r| r.strip_prefix('#'))
                    .unwrap_or_default()
                    .to_owned(),
            });
        }
        let mut tool = Self::deferred(spec);
        tool.validator = OnceLock::from(Some(validator));
        Ok(tool)
    }

    /// A tool whose schema compiled clean with this build before (a prepared suite): its
    /// validator is compiled at its first call, the checks [`CompiledTool::new`] makes are
    /// not made again.
    pub fn deferred(spec: &ToolSpec) -> Self {
        let schema = &spec.input_schema;
        let open = match schema.get("additionalProperties") {
            Some(Value::Bool(b)) => *b,
            Some(Value::Object(_)) => true,
            _ => schema.get("properties").is_none() || schema.get("patternProperties").is_some(),
        };
        Self {
            spec: spec.clone(),
            validator: OnceLock::new(),
            open,
        }
    }

    /// The validator, compiled at the first call of a deferred tool; `None` (counted, never a
    /// panic) when its schema does not compile, which the stamp said it did: the trial then
    /// runs again on its suite loaded in full, where the schema is an error at its place.
    fn validator(&self) -> Option<&jsonschema::Validator> {
        let validator = self
            .validator
            .get_or_init(|| {
                let cyclic = super::cycle::in_place_cycle(&self.spec.input_schema).is_some();
                compile(&self.spec).ok().filter(|_| !cyclic)
            })
            .as_ref();
        if validator.is_none() {
            crate::pattern::note_broken_use();
        }
        validator
    }

    pub fn check(&self, args: &Map<String, Value>, raw: &Value, out: &mut Vec<Finding>) {
        let props = self.spec.properties();
        if !self.open
            && let Some(props) = props
        {
            for key in args.keys() {
                if props.contains_key(key) {
                    continue;
                }
                let candidates = props.keys().map(String::as_str);
                let f = match nearest(key, candidates.clone()) {
                    Some(near) => Finding::new(
                        Code::UnknownParam,
                        pointer(&[key]),
                        format!(
                            "unknown parameter `{key}` (did you mean `{near}`?); the server drops it unseen"
                        ),
                    ),
                    // Not a misspelling: an extra parameter the schema does not have.
                    None => Finding::new(
                        Code::UnknownParam,
                        pointer(&[key]),
                        format!(
                            "unknown parameter `{key}`: `{}` takes {}; the server drops it unseen",
                            self.spec.name,
                            list(candidates)
                        ),
                    )
                    .with_sub_dimension(SubDimension::ArgumentRelevancy),
                };
                out.push(f);
            }
        }
        let instance = if raw.is_null() {
            &Value::Object(Map::new())
        } else {
            raw
        };
        let Some(validator) = self.validator() else {
            return;
        };
        if validator.is_valid(instance) {
            return;
        }
        for err in validator.iter_errors(instance) {
            let path = err.instance_path().as_str().to_owned();
            let value = err.instance();
            let f = match err.kind() {
                // Reported above with a suggestion.
                ValidationErrorKind::AdditionalProperties { .. } if path.is_empty() => continue,
                ValidationErrorKind::AdditionalProperties { unexpected }
                | ValidationErrorKind::UnevaluatedProperties { unexpected } => Finding::new(
                    Code::UnknownParam,
                    path.clone(),
                    format!(
                        "unexpected propert{} {}",
                        if unexpected.len() == 1 { "y" } else { "ies" },
                        list(unexpected.iter().map(String::as_str))
                    ),
                ),
                ValidationErrorKind::Required { property } => {
                    let name = property.as_str().unwrap_or_default();
                    let hint = if path.is_empty() {
                        // A misspelt argument often stands in for the missing one.
                        let near = args.keys().find(|k| nearest(k, [name]).is_some());
                        near.map_or(String::new(), |k| format!(" (`{k}` was given instead?)"))
                    } else {
                        String::new()
                    };
                    Finding::new(
                        Code::MissingRequired,
                        child(&path, name),
                        format!("missing required parameter `{name}`{hint}"),
                    )
                }
                ValidationErrorKind::Type { kind } => Finding::new(
                    Code::Type,
                    path.clone(),
                    format!(
                        "{} must be {}, got {}",
                        subject(&path),
                        type_kind(kind),
                        describe(value)
                    ),
                ),
                ValidationErrorKind::Enum { options } => Finding::new(
                    Code::Enum,
                    path.clone(),
                    format!(
                        "{} is {}; allowed: {}",
                        subject(&path),
                        describe(value),
                        compact(options)
                    ),
                ),
                ValidationErrorKind::Constant { expected_value } => Finding::new(
                    Code::Enum,
                    path.clone(),
                    format!(
                        "{} must be {}, got {}",
                        subject(&path),
                        compact(expected_value),
                        describe(value)
                    ),
                ),
                ValidationErrorKind::Format { format } => Finding::new(
                    Code::Format,
                    path.clone(),
                    format!(
                        "{} is {}, not a valid `{format}`",
                        subject(&path),
                        describe(value)
                    ),
                ),
                ValidationErrorKind::Pattern { pattern } => Finding::new(
                    Code::Format,
                    path.clone(),
                    format!(
                        "{} is {}, which does not match `{pattern}`",
                        subject(&path),
                        describe(value)
                    ),
                ),
                ValidationErrorKind::Minimum { limit } => {
                    range(&path, value, format!("at least {limit}"))
                }
                ValidationErrorKind::Maximum { limit } => {
                    range(&path, value, format!("at most {limit}"))
                }
                ValidationErrorKind::ExclusiveMinimum { limit } => {
                    range(&path, value, format!("greater than {limit}"))
                }
                ValidationErrorKind::ExclusiveMaximum { limit } => {
                    range(&path, value, format!("less than {limit}"))
                }
                ValidationErrorKind::MultipleOf { multiple_of, .. } => {
                    range(&path, value, format!("a multiple of {multiple_of}"))
                }
                ValidationErrorKind::MinLength { limit } => {
                    range(&path, value, format!("at least {limit} characters long"))
                }
                ValidationErrorKind::MaxLength { limit } => {
                    range(&path, value, format!("at most {limit} characters long"))
                }
                ValidationErrorKind::MinItems { limit } => {
                    range(&path, value, format!("at least {limit} items long"))
                }
                ValidationErrorKind::MaxItems { limit } => {
                    range(&path, value, format!("at most {limit} items long"))
                }
                ValidationErrorKind::MinProperties { limit } => {
                    range(&path, value, format!("at least {limit} properties"))
                }
                ValidationErrorKind::MaxProperties { limit } => {
                    range(&path, value, format!("at most {limit} properties"))
                }
                ValidationErrorKind::UniqueItems => {
                    range(&path, value, "free of duplicates".to_owned())
                }
                _ => Finding::new(
                    Code::Schema,
                    path.clone(),
                    format!(
                        "{} breaks the schema's `{}`: {}",
                        subject(&path),
                        err.kind().keyword(),
                        err.masked()
                    ),
                ),
            };
            out.push(f);
        }
    }
}

/// The tool's input schema as a validator. MCP (SEP-1613): 2020-12 unless the schema names
/// its draft. Remote `$ref`s are never fetched (the crate is built without its HTTP/file
/// resolvers).
fn compile(spec: &ToolSpec) -> Result<jsonschema::Validator, LintError> {
    let schema = &spec.input_schema;
    let opts = if schema.get("$schema").is_some() {
        jsonschema::options()
    } else {
        jsonschema::draft202012::options()
    };
    opts.should_validate_formats(true)
        .build(schema)
        .map_err(|e| LintError::InvalidSchema {
            tool: spec.name.clone(),
            message: e.to_string(),
            pointer: match e.instance_path().as_str() {
                // A reference that does not resolve has no instance path: find it.
                "" => unresolved_ref(schema, schema, &mut String::new()).unwrap_or_default(),
                p => p.to_owned(),
            },
        })
}

/// `the `$ref` cycle #/$defs/a → #/$defs/b → #/$defs/a …`, long cycles shortened.
/// The pointer of the first `$ref` (in document order) that names a place in this schema the
/// schema does not have (`#/$defs/nowhere`), with `/$ref` appended. References elsewhere are
/// not followed (none is ever fetched), so they are not judged here.
fn unresolved_ref(root: &Value, at: &Value, path: &mut String) -> Option<String> {
    let len = path.len();
    let found = match at {
        Value::Object(o) => {
            if let Some(Value::String(r)) = o.get("$ref")
                && let Some(fragment) = r.strip_prefix('#')
                && (fragment.is_empty() || fragment.starts_with('/'))
                && root.pointer(fragment).is_none()
            {
                return Some(format!("{path}/$ref"));
            }
            o.iter().find_map(|(k, v)| {
                path.truncate(len);
                path.push('/');
                path.push_str(&k.replace('~', "~0").replace('/', "~1"));
                unresolved_ref(root, v, path)
            })
        }
        Value::Array(items) => items.iter().enumerate().find_map(|(i, v)| {
            path.truncate(len);
            path.push_str(&format!("/{i}"));
            unresolved_ref(root, v, path)
        }),
        _ => None,
    };
    path.truncate(len);
    found
}

fn cycle_message(cycle: &[String]) -> String {
    const SHOWN: usize = 8;
    let path = if cycle.len() > SHOWN {
        format!(
            "{} → … ({} more) → {}",
            cycle[..SHOWN - 1].join(" → "),
            cycle.len() - SHOWN,
            cycle[cycle.len() - 1]
        )
    } else {
        cycle.join(" → ")
    };
    format!(
        "the `$ref` cycle {path} applies a schema to the same value again without end: the \
         validator would accept any value there (JSON Schema leaves it undefined)"
    )
}

fn range(path: &str, value: &Value, bound: String) -> Finding {
    Finding::new(
        Code::Range,
        path,
        format!("{} must be {bound}, got {}", subject(path), describe(value)),
    )
}

/// `` `aspect_ratio` `` for `/aspect_ratio`, `` `images[1]` `` for `/images/1`.
pub(crate) fn subject(path: &str) -> String {
    if path.is_empty() {
        return "the arguments".to_owned();
    }
    // Written straight into one string (a finding's words are made per wrong value).
    let mut s = String::with_capacity(path.len() + 2);
    s.push('`');
    for (i, seg) in path.trim_start_matches('/').split('/').enumerate() {
        let seg = crate::source::json::unescape(seg);
        if i > 0 && seg.parse::<usize>().is_ok() {
            s.push('[');
            s.push_str(&seg);
            s.push(']');
        } else {
            if i > 0 {
                s.push('.');
            }
            s.push_str(&seg);
        }
    }
    s.push('`');
    s
}

pub(crate) fn pointer(segments: &[&str]) -> String {
    segments.iter().fold(String::new(), |at, s| child(&at, s))
}

/// A value as shown in messages: short, JSON (past 60 characters, its first 57 and `…`).
pub(crate) fn describe(v: &Value) -> String {
    let json = compact(v);
    let kind = type_name(v);
    let cut = json
        .char_indices()
        .nth(60)
        .and_then(|_| json.char_indices().nth(57))
        .map(|(at, _)| at);
    let shown = cut.map_or(&json[..], |at| &json[..at]);
    let mut s = String::with_capacity(kind.len() + 1 + shown.len() + 3);
    s.push_str(kind);
    s.push(' ');
    s.push_str(shown);
    if cut.is_some() {
        s.push('…');
    }
    s
}

pub(crate) fn compact(v: &Value) -> String {
    serde_json::to_string(v).unwrap_or_default()
}

fn type_kind(kind: &TypeKind) -> String {
    match kind {
        TypeKind::Single(t) => format!("{}", t),
        TypeKind::Multiple(ts) => {
            let names: Vec<String> = ts.iter().map(|t| t.to_string()).collect();
            names.join(" or ")
        }
    }
}

fn list<'a>(items: impl IntoIterator<Item = &'a str>) -> String {
    let v: Vec<String> = items.into_iter().map(|s| format!("`{s}`")).collect();
    if v.is_empty() {
        "no parameters".to_owned()
    } else {
        v.join(", ")
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    /// A finding's words for a place and a value: indices in brackets, escaped names as
    /// written, and a value past 60 characters cut to its first 57 and `…` (characters, not
    /// bytes).
    #[test]
    fn messages_name_the_place_and_show_the_value() {
        assert_eq!(subject(""), "the arguments");
        assert_eq!(subject("/a/0/b~1c/12"), "`a[0].b/c[12]`");
        assert_eq!(subject("/0"), "`0`");
        assert_eq!(describe(&json!(3)), "integer 3");
        let sixty = "é".repeat(58);
        assert_eq!(describe(&json!(sixty)), format!("string \"{sixty}\""));
        let long = "é".repeat(59);
        assert_eq!(
            describe(&json!(long)),
            format!("string \"{}…", "é".repeat(56))
        );
        assert_eq!(describe(&json!({"k": [1, 2]})), r#"object {"k":[1,2]}"#);
    }
}
