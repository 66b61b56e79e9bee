//! Provider compatibility: whether each function-calling API accepts a tool's input schema
//! as written, and which keyword it refuses.
//!
//! An MCP client hands a tool's `inputSchema` to the model's API as the function's
//! parameters; a keyword the API refuses makes the whole request fail, so one tool with
//! `format: uri` makes the whole server unusable for that agent. The rules are the
//! providers' documented schema subsets, one table ([`RULES`]) with the page each comes from
//! (read 2025-11); where a page only says what is *supported*, a keyword outside that list
//! counts as refused only when the API's validation is known to reject it, and is left out
//! otherwise. No rule here claims a silent drop: none is documented. Clients that rewrite a
//! schema before sending it (some strip `$schema` and `additionalProperties` for Gemini) hide a
//! refusal from their own users only; the audit reports the schema as the server wrote it.

use std::collections::BTreeMap;
use std::fmt;

use serde::Serialize;
use serde_json::Value;

use super::{AuditCode, AuditFinding, Server};
use crate::source::json::{child, escape};
use crate::spec::ToolSpec;

/// A function-calling API.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize)]
pub enum Provider {
    /// OpenAI function calling with `strict: true` (Structured Outputs).
    #[serde(rename = "openai-strict")]
    OpenAiStrict,
    /// OpenAI function calling, `strict` off (the default).
    #[serde(rename = "openai")]
    OpenAi,
    /// Anthropic Messages API `tools[].input_schema`.
    #[serde(rename = "anthropic")]
    Anthropic,
    /// Gemini API `functionDeclarations[].parameters` (an OpenAPI 3.0 Schema subset).
    #[serde(rename = "gemini")]
    Gemini,
}

impl Provider {
    /// Every provider, in table order.
    pub const ALL: &'static [Provider] = &[
        Provider::OpenAiStrict,
        Provider::OpenAi,
        Provider::Anthropic,
        Provider::Gemini,
    ];

    /// The stable name (`openai-strict`).
    pub fn as_str(self) -> &'static str {
        match self {
            Provider::OpenAiStrict => "openai-strict",
            Provider::OpenAi => "openai",
            Provider::Anthropic => "anthropic",
            Provider::Gemini => "gemini",
        }
    }
}

impl fmt::Display for Provider {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

const OPENAI_STRICT_DOC: &str =
    "https://platform.openai.com/docs/guides/structured-outputs#supported-schemas";
const OPENAI_DOC: &str = "https://platform.openai.com/docs/guides/function-calling";
const OPENAI_NAME_DOC: &str =
    "https://platform.openai.com/docs/api-reference/chat/create#chat-create-tools";
const ANTHROPIC_DOC: &str =
    "https://docs.anthropic.com/en/docs/agents-and-tools/tool-use/implement-tool-use";
const GEMINI_SCHEMA_DOC: &str = "https://ai.google.dev/api/caching#Schema";
const GEMINI_DECL_DOC: &str = "https://ai.google.dev/api/caching#FunctionDeclaration";

/// What a rule checks.
#[derive(Clone, Copy, Debug)]
enum Check {
    /// This keyword anywhere in the schema.
    Keyword(&'static str),
    /// Any keyword outside Gemini's Schema fields.
    GeminiUnknownKeyword,
    /// `type` given as an array (`["string", "null"]`): Gemini's `type` is one enum value
    /// (its `Type` has `NULL` in some versions, so `"type": "null"` is not counted).
    TypeNotOneName,
    /// A `format` outside the provider's list for the type.
    Format,
    /// An object without `additionalProperties: false`.
    OpenObject,
    /// An object property not in `required`.
    OptionalProperty,
    /// An object schema without properties (Gemini: "should be non-empty for OBJECT type").
    EmptyObject,
    /// The root schema is not `type: object`.
    RootNotObject,
    /// `anyOf`/`oneOf`/`allOf` at the root.
    RootCombinator,
    /// The tool's name breaks the provider's pattern.
    Name,
}

/// One documented refusal.
struct Rule {
    provider: Provider,
    check: Check,
    /// Where the provider says so.
    doc: &'static str,
}

/// Every rule, by provider. The keyword lists of OpenAI strict mode are the page's
/// "unsupported" lists (strings, objects, arrays, composition); Gemini's `parameters` is a
/// protobuf `Schema`, so any field outside it is "Invalid JSON payload received. Unknown name"
/// (use `parametersJsonSchema` to send full JSON Schema instead).
const RULES: &[Rule] = &[
    Rule {
        provider: Provider::OpenAiStrict,
        check: Check::RootNotObject,
        doc: OPENAI_STRICT_DOC,
    },
    Rule {
        provider: Provider::OpenAiStrict,
        check: Check::RootCombinator,
        doc: OPENAI_STRICT_DOC,
    },
    Rule {
        provider: Provider::OpenAiStrict,
        check: Check::OpenObject,
        doc: OPENAI_STRICT_DOC,
    },
    Rule {
        provider: Provider::OpenAiStrict,
        check: Check::OptionalProperty,
        doc: OPENAI_STRICT_DOC,
    },
    Rule {
        provider: Provider::OpenAiStrict,
        check: Check::Format,
        doc: OPENAI_STRICT_DOC,
    },
    Rule {
        provider: Provider::OpenAiStrict,
        check: Check::Keyword("minLength"),
        doc: OPENAI_STRICT_DOC,
    },
    Rule {
        provider: Provider::OpenAiStrict,
        check: Check::Keyword("maxLength"),
        doc: OPENAI_STRICT_DOC,
    },
    Rule {
        provider: Provider::OpenAiStrict,
        check: Check::Keyword("patternProperties"),
        doc: OPENAI_STRICT_DOC,
    },
    Rule {
        provider: Provider::OpenAiStrict,
        check: Check::Keyword("unevaluatedProperties"),
        doc: OPENAI_STRICT_DOC,
    },
    Rule {
        provider: Provider::OpenAiStrict,
        check: Check::Keyword("propertyNames"),
        doc: OPENAI_STRICT_DOC,
    },
    Rule {
        provider: Provider::OpenAiStrict,
        check: Check::Keyword("minProperties"),
        doc: OPENAI_STRICT_DOC,
    },
    Rule {
        provider: Provider::OpenAiStrict,
        check: Check::Keyword("maxProperties"),
        doc: OPENAI_STRICT_DOC,
    },
    Rule {
        provider: Provider::OpenAiStrict,
        check: Check::Keyword("unevaluatedItems"),
        doc: OPENAI_STRICT_DOC,
    },
    Rule {
        provider: Provider::OpenAiStrict,
        check: Check::Keyword("contains"),
        doc: OPENAI_STRICT_DOC,
    },
    Rule {
        provider: Provider::OpenAiStrict,
        check: Check::Keyword("minContains"),
        doc: OPENAI_STRICT_DOC,
    },
    Rule {
        provider: Provider::OpenAiStrict,
        check: Check::Keyword("maxContains"),
        doc: OPENAI_STRICT_DOC,
    },
    Rule {
        provider: Provider::OpenAiStrict,
        check: Check::Keyword("uniqueItems"),
        doc: OPENAI_STRICT_DOC,
    },
    Rule {
        provider: Provider::OpenAiStrict,
        check: Check::Keyword("allOf"),
        doc: OPENAI_STRICT_DOC,
    },
    Rule {
        provider: Provider::OpenAiStrict,
        check: Check::Keyword("not"),
        doc: OPENAI_STRICT_DOC,
    },
    Rule {
        provider: Provider::OpenAiStrict,
        check: Check::Keyword("dependentRequired"),
        doc: OPENAI_STRICT_DOC,
    },
    Rule {
        provider: Provider::OpenAiStrict,
        check: Check::Keyword("dependentSchemas"),
        doc: OPENAI_STRICT_DOC,
    },
    Rule {
        provider: Provider::OpenAiStrict,
        check: Check::Keyword("if"),
        doc: OPENAI_STRICT_DOC,
    },
    Rule {
        provider: Provider::OpenAiStrict,
        check: Check::Keyword("then"),
        doc: OPENAI_STRICT_DOC,
    },
    Rule {
        provider: Provider::OpenAiStrict,
        check: Check::Keyword("else"),
        doc: OPENAI_STRICT_DOC,
    },
    Rule {
        provider: Provider::OpenAiStrict,
        check: Check::Name,
        doc: OPENAI_NAME_DOC,
    },
    // "The parameters the functions accepts, described as a JSON Schema object"; the API
    // refuses a schema that is not `type: "object"` at the root.
    Rule {
        provider: Provider::OpenAi,
        check: Check::RootNotObject,
        doc: OPENAI_DOC,
    },
    Rule {
        provider: Provider::OpenAi,
        check: Check::Name,
        doc: OPENAI_NAME_DOC,
    },
    // "input_schema: JSON Schema object defining expected parameters"; the API refuses a root
    // that is not `type: object` and `oneOf`/`allOf`/`anyOf` at the top level.
    Rule {
        provider: Provider::Anthropic,
        check: Check::RootNotObject,
        doc: ANTHROPIC_DOC,
    },
    Rule {
        provider: Provider::Anthropic,
        check: Check::RootCombinator,
        doc: ANTHROPIC_DOC,
    },
    Rule {
        provider: Provider::Anthropic,
        check: Check::Name,
        doc: ANTHROPIC_DOC,
    },
    Rule {
        provider: Provider::Gemini,
        check: Check::GeminiUnknownKeyword,
        doc: GEMINI_SCHEMA_DOC,
    },
    Rule {
        provider: Provider::Gemini,
        check: Check::TypeNotOneName,
        doc: GEMINI_SCHEMA_DOC,
    },
    Rule {
        provider: Provider::Gemini,
        check: Check::Format,
        doc: GEMINI_SCHEMA_DOC,
    },
    Rule {
        provider: Provider::Gemini,
        check: Check::EmptyObject,
        doc: GEMINI_SCHEMA_DOC,
    },
    Rule {
        provider: Provider::Gemini,
        check: Check::Name,
        doc: GEMINI_DECL_DOC,
    },
];

/// The fields of Gemini's `Schema` (the `parameters` of a function declaration).
const GEMINI_FIELDS: &[&str] = &[
    "type",
    "format",
    "title",
    "description",
    "nullable",
    "enum",
    "maxItems",
    "minItems",
    "properties",
    "required",
    "minProperties",
    "maxProperties",
    "minLength",
    "maxLength",
    "pattern",
    "example",
    "anyOf",
    "propertyOrdering",
    "default",
    "items",
    "minimum",
    "maximum",
];

/// OpenAI strict mode's string formats ("Supported properties", strings).
const OPENAI_FORMATS: &[&str] = &[
    "date-time",
    "time",
    "date",
    "duration",
    "email",
    "hostname",
    "ipv4",
    "ipv6",
    "uuid",
];

/// Gemini's formats by type: "NUMBER type: float, double; INTEGER type: int32, int64; STRING
/// type: enum, date-time".
fn gemini_format_ok(ty: Option<&str>, format: &str) -> bool {
    match ty {
        Some("number") => matches!(format, "float" | "double"),
        Some("integer") => matches!(format, "int32" | "int64"),
        Some("string") => matches!(format, "enum" | "date-time"),
        _ => false,
    }
}

fn name_ok(provider: Provider, name: &str) -> bool {
    let len = name.chars().count();
    let plain = |c: char| c.is_ascii_alphanumeric() || c == '_' || c == '-';
    match provider {
        // "a-z, A-Z, 0-9, or contain underscores and dashes, with a maximum length of 64".
        Provider::OpenAi | Provider::OpenAiStrict | Provider::Anthropic => {
            (1..=64).contains(&len) && name.chars().all(plain)
        }
        // "Must start with a letter or an underscore. Must be a-z, A-Z, 0-9, or contain
        // underscores, dots, colons and dashes, with a maximum length of 64."
        Provider::Gemini => {
            (1..=64).contains(&len)
                && name
                    .chars()
                    .next()
                    .is_some_and(|c| c.is_ascii_alphabetic() || c == '_')
                && name.chars().all(|c| plain(c) || c == '.' || c == ':')
        }
    }
}

/// One refusal at one place, before grouping.
struct Hit {
    rule: usize,
    /// The keyword (or `name`) refused.
    what: String,
    /// The pointer, relative to the input schema.
    at: String,
    why: String,
}

/// Walks every subschema with its pointer, calling `f(schema, pointer, is_root)`.
fn walk(schema: &Value, at: &str, f: &mut dyn FnMut(&serde_json::Map<String, Value>, &str)) {
    let Value::Object(obj) = schema else {
        return;
    };
    f(obj, at);
    for (k, v) in obj {
        let here = child(at, k);
        match k.as_str() {
            "properties" | "patternProperties" | "$defs" | "definitions" | "dependentSchemas" => {
                if let Value::Object(m) = v {
                    for (name, s) in m {
                        walk(s, &child(&here, name), f);
                    }
                }
            }
            "items"
            | "additionalProperties"
            | "not"
            | "if"
            | "then"
            | "else"
            | "contains"
            | "propertyNames"
            | "unevaluatedItems"
            | "unevaluatedProperties" => match v {
                Value::Array(a) => {
                    for (i, s) in a.iter().enumerate() {
                        walk(s, &format!("{here}/{i}"), f);
                    }
                }
                _ => walk(v, &here, f),
            },
            "anyOf" | "oneOf" | "allOf" | "prefixItems" => {
                if let Value::Array(a) = v {
                    for (i, s) in a.iter().enumerate() {
                        walk(s, &format!("{here}/{i}"), f);
                    }
                }
            }
            _ => {}
        }
    }
}

fn is_object(o: &serde_json::Map<String, Value>) -> bool {
    o.get("type").and_then(Value::as_str) == Some("object") || o.contains_key("properties")
}

fn hits(tool: &ToolSpec) -> Vec<Hit> {
    let mut out = Vec::new();
    let root = &tool.input_schema;
    for (i, rule) in RULES.iter().enumerate() {
        let mut push = |what: &str, at: &str, why: String| {
            out.push(Hit {
                rule: i,
                what: what.to_owned(),
                at: at.to_owned(),
                why,
            })
        };
        match rule.check {
            Check::RootNotObject => {
                if root.get("type").and_then(Value::as_str) != Some("object") {
                    push(
                        "type",
                        "",
                        "the root schema must be `\"type\": \"object\"`".into(),
                    );
                }
            }
            Check::RootCombinator => {
                for k in ["anyOf", "oneOf", "allOf"] {
                    if root.get(k).is_some() {
                        push(k, &format!("/{k}"), format!("`{k}` at the root"));
                    }
                }
            }
            Check::Name => {
                if !name_ok(rule.provider, &tool.name) {
                    push("name", "", format!("the tool name `{}`", tool.name));
                }
            }
            _ => walk(root, "", &mut |o, at| match rule.check {
                Check::Keyword(k) if o.contains_key(k) => {
                    push(k, &format!("{at}/{k}"), format!("`{k}`"));
                }
                Check::GeminiUnknownKeyword => {
                    for k in o.keys() {
                        if !GEMINI_FIELDS.contains(&k.as_str()) {
                            let k = k.as_str();
                            push(
                                k,
                                &child(at, k),
                                format!("`{k}` (not a field of its Schema)"),
                            );
                        }
                    }
                }
                Check::TypeNotOneName if o.get("type").is_some_and(Value::is_array) => push(
                    "type",
                    &format!("{at}/type"),
                    "a `type` array (use one type, with `nullable: true`)".into(),
                ),
                Check::Format => {
                    if let Some(f) = o.get("format").and_then(Value::as_str) {
                        let ty = o.get("type").and_then(Value::as_str);
                        let ok = match rule.provider {
                            Provider::Gemini => gemini_format_ok(ty, f),
                            _ => ty != Some("string") || OPENAI_FORMATS.contains(&f),
                        };
                        if !ok {
                            push("format", &format!("{at}/format"), format!("`format: {f}`"));
                        }
                    }
                }
                Check::OpenObject
                    if is_object(o)
                        && o.get("additionalProperties") != Some(&Value::Bool(false)) =>
                {
                    push(
                        "additionalProperties",
                        at,
                        "an object without `additionalProperties: false`".into(),
                    );
                }
                Check::OptionalProperty => {
                    let required: Vec<&str> = o
                        .get("required")
                        .and_then(Value::as_array)
                        .into_iter()
                        .flatten()
                        .filter_map(Value::as_str)
                        .collect();
                    if let Some(Value::Object(props)) = o.get("properties") {
                        for name in props.keys() {
                            if !required.contains(&name.as_str()) {
                                push(
                                    "required",
                                    &format!("{at}/properties/{}", escape(name)),
                                    format!(
                                        "the optional property `{name}` (every property must be `required`; make it nullable instead)"
                                    ),
                                );
                            }
                        }
                    }
                }
                Check::EmptyObject => {
                    let empty = o
                        .get("properties")
                        .and_then(Value::as_object)
                        .is_none_or(|p| p.is_empty());
                    if o.get("type").and_then(Value::as_str) == Some("object") && empty {
                        push(
                            "properties",
                            at,
                            "an object without properties (\"should be non-empty for OBJECT type\"; omit `parameters` for a tool without arguments)".into(),
                        );
                    }
                }
                _ => {}
            }),
        }
    }
    out
}

/// One finding per tool, provider and refused keyword, at the keyword's first place.
pub(super) fn check(server: &Server, tool: &ToolSpec) -> Vec<AuditFinding> {
    let (tool_at, schema_at) = server.places(tool);
    let mut grouped: BTreeMap<(Provider, usize, String), Vec<Hit>> = BTreeMap::new();
    for h in hits(tool) {
        let p = RULES[h.rule].provider;
        grouped
            .entry((p, h.rule, h.what.clone()))
            .or_default()
            .push(h);
    }
    grouped
        .into_iter()
        .map(|((provider, rule, what), hs)| {
            let first = &hs[0];
            let at = if what == "name" {
                format!("{tool_at}/name")
            } else {
                format!("{}{}", schema_at.as_deref().unwrap_or(&tool_at), first.at)
            };
            let more = match hs.len() {
                1 => String::new(),
                n => format!(" ({n} places)"),
            };
            let code = if provider == Provider::OpenAiStrict {
                AuditCode::StrictRefused
            } else {
                AuditCode::ProviderRefused
            };
            let message = if what == "name" {
                format!(
                    "{provider} refuses the tool name `{}` (its pattern allows {}) [{}]",
                    tool.name,
                    match provider {
                        Provider::Gemini => "letters, digits, `_`, `.`, `:` and `-`, 64 at most, a letter or `_` first",
                        _ => "letters, digits, `_` and `-`, 64 at most",
                    },
                    RULES[rule].doc
                )
            } else {
                format!(
                    "{provider} refuses `{}`'s input schema as written: {}{more} [{}]",
                    tool.name, first.why, RULES[rule].doc
                )
            };
            let mut f = server
                .finding(code, Some(&tool.name), None)
                .at(&at)
                .message(message)
                .done();
            f.provider = Some(provider);
            f
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn refused(schema: Value) -> Vec<(Provider, String)> {
        let tool = ToolSpec {
            name: "t".into(),
            description: String::new(),
            input_schema: schema,
            output_schema: None,
            annotations: Default::default(),
        };
        let mut v: Vec<_> = hits(&tool)
            .into_iter()
            .map(|h| (RULES[h.rule].provider, h.what))
            .collect();
        v.dedup();
        v
    }

    #[test]
    fn a_closed_object_of_required_strings_passes_everywhere() {
        let s = json!({"type": "object", "properties": {"a": {"type": "string"}},
                       "required": ["a"], "additionalProperties": false});
        assert_eq!(
            refused(s),
            [(Provider::Gemini, "additionalProperties".to_owned())]
        );
    }

    #[test]
    fn uri_formats_and_type_arrays() {
        let s = json!({"type": "object", "properties": {
            "u": {"type": "string", "format": "uri"},
            "n": {"type": ["string", "null"]}}, "required": ["u", "n"],
            "additionalProperties": false});
        let r = refused(s);
        assert!(
            r.contains(&(Provider::OpenAiStrict, "format".into())),
            "{r:?}"
        );
        assert!(r.contains(&(Provider::Gemini, "format".into())), "{r:?}");
        assert!(r.contains(&(Provider::Gemini, "type".into())), "{r:?}");
        assert!(!r.iter().any(|(p, _)| *p == Provider::Anthropic), "{r:?}");
    }

    #[test]
    fn names_and_roots() {
        assert!(!name_ok(Provider::OpenAi, "git.status"));
        assert!(name_ok(Provider::Gemini, "git.status"));
        assert!(!name_ok(Provider::Gemini, "1st"));
        let r = refused(json!({"anyOf": [{"type": "object"}]}));
        assert!(r.contains(&(Provider::Anthropic, "anyOf".into())), "{r:?}");
        assert!(r.contains(&(Provider::OpenAi, "type".into())), "{r:?}");
    }
}
