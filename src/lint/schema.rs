//! JSON Schema checks of one call: unknown parameters first (with "did you mean"), then every
//! keyword of the tool's input schema, mapped onto finding codes and rubric sub-dimensions.

use std::sync::OnceLock;

use jsonschema::error::{TypeKind, ValidationErrorKind};
use serde_json::{Map, Value};

use super::shape::Shape;
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
    /// The names `properties` declares (in key order), `None` without a `properties` object:
    /// read out of the schema once, where every call looked them up in it (and the names an
    /// unknown argument's "did you mean" is chosen among).
    declared: Option<Names>,
    /// The names the schema lists in `required`, in its order.
    pub required: Box<[Box<str>]>,
    /// The schema read as the common shape, where it is one: what admits most calls without
    /// the validator.
    shape: Option<Shape>,
}

/// A tool's parameter names in key order, against which every argument of every call is
/// checked: a few looked through one by one without a call to `memcmp`
/// ([`crate::hash::same_bytes`]), more searched in their order.
struct Names(Box<[Box<str>]>);

impl Names {
    /// The most names looked through one by one.
    const FEW: usize = 16;

    fn of<'s>(names: impl Iterator<Item = &'s str>) -> Self {
        Self(names.map(Box::from).collect())
    }

    /// The names, in key order.
    fn iter(&self) -> impl Iterator<Item = &str> + Clone {
        self.0.iter().map(|n| &**n)
    }

    /// Whether `name` is one of them.
    fn has(&self, name: &str) -> bool {
        if self.0.len() <= Self::FEW {
            return crate::hash::among(self.iter(), name);
        }
        self.0
            .binary_search_by(|n| crate::hash::order(n.as_bytes(), name.as_bytes()))
            .is_ok()
    }
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
        let declared = spec
            .properties()
            .map(|p| Names::of(p.keys().map(String::as_str)));
        Self {
            spec: spec.clone(),
            validator: OnceLock::new(),
            open,
            declared,
            required: spec.required().map(Box::from).collect(),
            shape: Shape::of(schema),
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
        // Every argument declared and of its shape: nothing to find.
        if let (Some(shape), Some(declared)) = (&self.shape, &self.declared)
            && shape.admits(declared.iter(), args)
        {
            return;
        }
        if !self.open
            && let Some(declared) = &self.declared
        {
            for key in args.keys() {
                if declared.has(key) {
                    continue;
                }
                let candidates = declared.iter();
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
                ValidationErrorKind::Type { kind } => {
                    must_be(Code::Type, path, value, |s| push_type_kind(s, kind))
                }
                ValidationErrorKind::Enum { options } => {
                    let words = about(&path, |s| {
                        s.push_str(" is ");
                        push_described(s, value);
                        s.push_str("; allowed: ");
                        crate::source::json::push_text(s, options);
                    });
                    Finding::new(Code::Enum, path, words)
                }
                ValidationErrorKind::Constant { expected_value } => {
                    must_be(Code::Enum, path, value, |s| {
                        crate::source::json::push_text(s, expected_value);
                    })
                }
                ValidationErrorKind::Format { format } => {
                    misformed(path, value, ", not a valid `", format)
                }
                ValidationErrorKind::Pattern { pattern } => {
                    misformed(path, value, ", which does not match `", pattern)
                }
                ValidationErrorKind::Minimum { limit } => {
                    range(path, value, format!("at least {limit}"))
                }
                ValidationErrorKind::Maximum { limit } => {
                    range(path, value, format!("at most {limit}"))
                }
                ValidationErrorKind::ExclusiveMinimum { limit } => {
                    range(path, value, format!("greater than {limit}"))
                }
                ValidationErrorKind::ExclusiveMaximum { limit } => {
                    range(path, value, format!("less than {limit}"))
                }
                ValidationErrorKind::MultipleOf { multiple_of, .. } => {
                    range(path, value, format!("a multiple of {multiple_of}"))
                }
                ValidationErrorKind::MinLength { limit } => {
                    range(path, value, format!("at least {limit} characters long"))
                }
                ValidationErrorKind::MaxLength { limit } => {
                    range(path, value, format!("at most {limit} characters long"))
                }
                ValidationErrorKind::MinItems { limit } => {
                    range(path, value, format!("at least {limit} items long"))
                }
                ValidationErrorKind::MaxItems { limit } => {
                    range(path, value, format!("at most {limit} items long"))
                }
                ValidationErrorKind::MinProperties { limit } => {
                    range(path, value, format!("at least {limit} properties"))
                }
                ValidationErrorKind::MaxProperties { limit } => {
                    range(path, value, format!("at most {limit} properties"))
                }
                ValidationErrorKind::UniqueItems => {
                    range(path, value, "free of duplicates".to_owned())
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

/// A string the schema's `format` or `pattern` refuses: the value shown, then `what` fails,
/// named (`` `when` is string "soon", not a valid `date` ``).
fn misformed(path: String, value: &Value, what: &str, name: &str) -> Finding {
    let words = about(&path, |s| {
        s.push_str(" is ");
        push_described(s, value);
        s.push_str(what);
        s.push_str(name);
        s.push('`');
    });
    Finding::new(Code::Format, path, words)
}

fn range(path: String, value: &Value, bound: String) -> Finding {
    must_be(Code::Range, path, value, |s| s.push_str(&bound))
}

/// `` `n` must be at least 3, got integer 1 ``: what `want` writes the value must be, then
/// the value shown.
fn must_be(code: Code, path: String, value: &Value, want: impl FnOnce(&mut String)) -> Finding {
    let words = about(&path, |s| {
        s.push_str(" must be ");
        want(s);
        s.push_str(", got ");
        push_described(s, value);
    });
    Finding::new(code, path, words)
}

/// `` `aspect_ratio` `` for `/aspect_ratio`, `` `images[1]` `` for `/images/1`.
pub(crate) fn subject(path: &str) -> String {
    let mut s = String::with_capacity(path.len() + 2);
    push_subject(&mut s, path);
    s
}

/// [`subject`] written onto `out` (a finding's words are made per wrong value: one string).
fn push_subject(out: &mut String, path: &str) {
    if path.is_empty() {
        out.push_str("the arguments");
        return;
    }
    out.push('`');
    for (i, seg) in path.trim_start_matches('/').split('/').enumerate() {
        let seg = crate::source::json::unescape(seg);
        if i > 0 && seg.parse::<usize>().is_ok() {
            out.push('[');
            out.push_str(&seg);
            out.push(']');
        } else {
            if i > 0 {
                out.push('.');
            }
            out.push_str(&seg);
        }
    }
    out.push('`');
}

/// A finding's words about the value at `path`: its [`subject`], then what `rest` writes.
fn about(path: &str, rest: impl FnOnce(&mut String)) -> String {
    let mut s = String::with_capacity(path.len() + 64);
    push_subject(&mut s, path);
    rest(&mut s);
    s
}

pub(crate) fn pointer(segments: &[&str]) -> String {
    segments.iter().fold(String::new(), |at, s| child(&at, s))
}

/// A value as shown in messages, written onto `out`: its kind, then short JSON (past 60
/// characters, its first 57 and `…`).
fn push_described(out: &mut String, v: &Value) {
    out.push_str(type_name(v));
    out.push(' ');
    let start = out.len();
    crate::source::json::push_text(out, v);
    let json = &out[start..];
    let cut = json
        .char_indices()
        .nth(60)
        .and_then(|_| json.char_indices().nth(57))
        .map(|(at, _)| start + at);
    if let Some(at) = cut {
        out.truncate(at);
        out.push('…');
    }
}

/// The types a schema's `type` names, written onto `out` (`string or null`).
fn push_type_kind(out: &mut String, kind: &TypeKind) {
    match kind {
        TypeKind::Single(t) => out.push_str(t.as_str()),
        TypeKind::Multiple(ts) => {
            for (i, t) in ts.iter().enumerate() {
                if i > 0 {
                    out.push_str(" or ");
                }
                out.push_str(t.as_str());
            }
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

    fn describe(v: &Value) -> String {
        let mut s = String::new();
        push_described(&mut s, v);
        s
    }

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

    /// Each kind of schema break worded in full: the place, what the schema wants, the value.
    #[test]
    fn each_kind_of_schema_break_is_worded_in_full() {
        let set = crate::spec::ToolSet::from_json(&json!([{"name": "t", "inputSchema": {
            "type": "object",
            "properties": {
                "either": {"type": ["string", "null"]},
                "size": {"enum": ["S", "M"]},
                "fixed": {"const": {"a": 1}},
                "when": {"type": "string", "format": "date"},
                "code": {"type": "string", "pattern": "^[a-z]+$"},
                "n": {"type": "integer", "minimum": 3},
                "tags": {"type": "array", "items": {"type": "string"}, "maxItems": 1}
            }
        }}]))
        .unwrap();
        let tool = CompiledTool::new(&set.tools()[0]).unwrap();
        let long = "Q".repeat(80);
        let args = json!({
            "either": 7, "size": "XL", "fixed": {"a": 2}, "when": "soon",
            "code": long, "n": 1, "tags": ["a", 2]
        });
        let mut out = Vec::new();
        tool.check(args.as_object().unwrap(), &args, &mut out);
        let mut words: Vec<String> = out
            .iter()
            .map(|f| format!("{} {} {}", f.code.as_str(), f.pointer, f.message))
            .collect();
        words.sort();
        insta::assert_snapshot!(words.join("\n"));
    }
}
