//! Tool specifications: what the server says its tools accept.
//!
//! Loads MCP `tools/list` results (`{"tools": [...]}` or a bare array), OpenAI `tools` arrays
//! and BFCL-style function docs (`dict`, `float`, `tuple`, `any`) into one [`ToolSet`] whose
//! input schemas are JSON Schema. Capability matrices — what the server really does, beyond
//! the schema — live in [`capability`]. The main type is [`ToolSet`], built with
//! [`ToolSet::load`] or [`ToolSet::from_json`]; [`Profile`] is the paper's complexity profile.

pub mod capability;
pub mod diff;
mod profile;

use std::collections::HashMap;
use std::path::Path;

use serde_json::{Map, Value, json};

use crate::source::{SourceError, SourceFile};

pub use capability::Capabilities;
pub use profile::Profile;

/// One tool as the agent sees it.
#[derive(Clone, Debug, PartialEq)]
pub struct ToolSpec {
    /// The tool's name, unique in its set (MCP `name`, OpenAI `function.name`).
    pub name: String,
    /// What the tool does, as the agent reads it; `""` when the spec gives none.
    pub description: String,
    /// JSON Schema for the arguments (always an object schema after loading).
    pub input_schema: Value,
    /// JSON Schema for the result (MCP `outputSchema`); `None` when the spec declares none.
    pub output_schema: Option<Value>,
    /// The MCP tool annotations (`annotations:` in `tools/list`): what the tool may do to the
    /// world. Hints the spec leaves out are `None`; [`Annotations::effect`] fills in the MCP
    /// specification's defaults.
    pub annotations: Annotations,
}

/// MCP tool annotations (`readOnlyHint`, `destructiveHint`, `idempotentHint`,
/// `openWorldHint`), as the server declares them.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Annotations {
    /// `readOnlyHint`: the tool does not modify its environment.
    pub read_only: Option<bool>,
    /// `destructiveHint`: an update may be destructive (meaningful when not read-only).
    pub destructive: Option<bool>,
    /// `idempotentHint`: repeating the call with the same arguments has no further effect.
    pub idempotent: Option<bool>,
    /// `openWorldHint`: the tool reaches entities outside a closed domain (the web).
    pub open_world: Option<bool>,
}

impl Annotations {
    fn from_json(v: Option<&Value>) -> Self {
        let hint = |k: &str| v.and_then(|a| a.get(k)).and_then(Value::as_bool);
        Self {
            read_only: hint("readOnlyHint"),
            destructive: hint("destructiveHint"),
            idempotent: hint("idempotentHint"),
            open_world: hint("openWorldHint"),
        }
    }

    /// The effect these hints declare, a hint left out meaning what the MCP specification
    /// (2025-06-18, `ToolAnnotations`) says: not read-only, destructive, not idempotent, open
    /// world. A read-only tool is neither destructive nor anything but idempotent.
    pub fn effect(&self) -> Effect {
        let read_only = self.read_only.unwrap_or(false);
        Effect {
            read_only,
            destructive: !read_only && self.destructive.unwrap_or(true),
            idempotent: read_only || self.idempotent.unwrap_or(false),
            open_world: self.open_world.unwrap_or(true),
        }
    }
}

/// What one call does to the world, resolved from the tool's annotations and the capability
/// matrix's `effects:` for the call's arguments.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Effect {
    /// It changes nothing.
    pub read_only: bool,
    /// It may destroy or overwrite something.
    pub destructive: bool,
    /// Doing it twice with the same arguments does no more than doing it once.
    pub idempotent: bool,
    /// It reaches outside a closed domain.
    pub open_world: bool,
}

impl ToolSpec {
    /// The declared parameters (`properties`), in the schema's order.
    pub fn properties(&self) -> Option<&Map<String, Value>> {
        self.input_schema
            .get("properties")
            .and_then(Value::as_object)
    }

    /// The names the schema lists in `required`.
    pub(crate) fn required(&self) -> impl Iterator<Item = &str> {
        self.input_schema
            .get("required")
            .and_then(Value::as_array)
            .into_iter()
            .flatten()
            .filter_map(Value::as_str)
    }

    /// Whether `properties` declares `name`.
    pub(crate) fn has_param(&self, name: &str) -> bool {
        self.properties().is_some_and(|p| p.contains_key(name))
    }
}

/// The tools of one or more servers, by name.
#[derive(Clone, Debug, Default)]
pub struct ToolSet {
    tools: Vec<ToolSpec>,
    by_name: HashMap<String, usize>,
}

/// A spec document that is no tool list, or a tool in it that is no tool.
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum SpecError {
    /// The document's shape: not an object or array of tools, `tools` not an array.
    Document(String),
    /// One tool's shape (no name, a schema that is no object, …).
    Tool(String),
    /// Two tools with one name in a set.
    DuplicateTool(String),
    /// The error of the tool at this 0-based position in the document.
    At {
        /// The tool's index.
        index: usize,
        /// What is wrong with it.
        source: Box<SpecError>,
    },
}

impl std::fmt::Display for SpecError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            SpecError::Document(m) | SpecError::Tool(m) => f.write_str(m),
            SpecError::DuplicateTool(name) => write!(f, "duplicate tool name `{name}`"),
            SpecError::At { index, source } => write!(f, "tool #{index}: {source}"),
        }
    }
}

impl std::error::Error for SpecError {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match self {
            SpecError::At { source, .. } => Some(source.as_ref()),
            _ => None,
        }
    }
}

/// The dialect a spec file was written in.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Dialect {
    Mcp,
    OpenAi,
    Bfcl,
}

impl ToolSet {
    /// Loads a spec file (JSON, or JSON Lines of BFCL docs).
    pub fn load(path: &Path) -> Result<Self, SourceError> {
        let file = SourceFile::read(path)?;
        Self::from_source(&file)
    }

    /// Loads a spec from text already read: one JSON document, or JSON Lines of BFCL function
    /// docs. A JSON syntax error points at its line; a document or tool of the wrong shape is
    /// an error on the whole file.
    pub fn from_source(file: &SourceFile) -> Result<Self, SourceError> {
        let value: Value = match serde_json::from_str(&file.text) {
            Ok(v) => v,
            Err(err) => {
                // BFCL ships function docs as JSON Lines; accept that before giving up.
                let lines: Vec<&str> = file.text.lines().filter(|l| !l.trim().is_empty()).collect();
                let first_is_a_document = lines
                    .first()
                    .is_some_and(|l| serde_json::from_str::<Value>(l).is_ok());
                if lines.len() > 1 && first_is_a_document {
                    let mut docs = Vec::with_capacity(lines.len());
                    for (i, line) in file.text.lines().enumerate() {
                        if line.trim().is_empty() {
                            continue;
                        }
                        let doc: Value = serde_json::from_str(line).map_err(|e| {
                            file.error_at(i as u32 + 1, e.column() as u32, strip_at(&e))
                        })?;
                        docs.push(doc);
                    }
                    Value::Array(docs)
                } else {
                    return Err(file.json_error(&err));
                }
            }
        };
        Self::from_json(&value).map_err(|e| file.error(e.to_string()))
    }

    /// Builds a tool set from an already-parsed spec document.
    pub fn from_json(value: &Value) -> Result<Self, SpecError> {
        let doc = |m: &str| SpecError::Document(m.to_owned());
        let items: &[Value] = match value {
            Value::Array(items) => items,
            Value::Object(obj) => match obj.get("tools").or_else(|| obj.get("functions")) {
                Some(Value::Array(items)) => items,
                Some(_) => return Err(doc("`tools` must be an array")),
                None if obj.contains_key("name") => std::slice::from_ref(value),
                None => {
                    return Err(doc(
                        "expected a tools/list result (`{\"tools\": [...]}`), an array \
                                of tools, or a function doc",
                    ));
                }
            },
            _ => return Err(doc("expected a JSON object or array of tools")),
        };
        let mut set = ToolSet::default();
        for (index, item) in items.iter().enumerate() {
            let at = |source| SpecError::At {
                index,
                source: Box::new(source),
            };
            let tool = parse_tool(item).map_err(|e| at(SpecError::Tool(e)))?;
            set.push(tool).map_err(at)?;
        }
        Ok(set)
    }

    /// Adds a tool; names must be unique across the set.
    pub fn push(&mut self, tool: ToolSpec) -> Result<(), SpecError> {
        if self.by_name.contains_key(&tool.name) {
            return Err(SpecError::DuplicateTool(tool.name));
        }
        self.by_name.insert(tool.name.clone(), self.tools.len());
        self.tools.push(tool);
        Ok(())
    }

    /// Merges another set in (a suite may span several servers).
    pub fn extend(&mut self, other: ToolSet) -> Result<(), SpecError> {
        other.tools.into_iter().try_for_each(|t| self.push(t))
    }

    /// The tool with this name.
    pub(crate) fn get(&self, name: &str) -> Option<&ToolSpec> {
        self.by_name.get(name).map(|&i| &self.tools[i])
    }

    /// The position of the tool with this name in [`tools`](Self::tools).
    pub(crate) fn index_of(&self, name: &str) -> Option<usize> {
        self.by_name.get(name).copied()
    }

    /// Every tool, in the order added (the document's order).
    pub fn tools(&self) -> &[ToolSpec] {
        &self.tools
    }

    /// How many tools the set holds.
    pub fn len(&self) -> usize {
        self.tools.len()
    }

    /// Whether the set holds no tool.
    pub fn is_empty(&self) -> bool {
        self.tools.is_empty()
    }

    /// The paper's complexity profile of these schemas (§5).
    pub fn profile(&self) -> Profile {
        Profile::of(self)
    }
}

fn strip_at(e: &serde_json::Error) -> String {
    let s = e.to_string();
    s.rfind(" at line ")
        .map_or(s.clone(), |i| s[..i].to_owned())
}

/// Recognises one tool in any supported dialect.
fn parse_tool(item: &Value) -> Result<ToolSpec, String> {
    let obj = item.as_object().ok_or("a tool must be a JSON object")?;
    let dialect = if obj.contains_key("inputSchema") || obj.contains_key("input_schema") {
        Dialect::Mcp
    } else if obj.get("type").and_then(Value::as_str) == Some("function")
        || obj.get("function").is_some_and(Value::is_object)
    {
        Dialect::OpenAi
    } else if is_function_doc(obj) {
        Dialect::Bfcl
    } else {
        // Read as a BFCL doc without parameters, such a tool accepted any arguments (issue 18,
        // item 8): an MCP tool must declare its input schema.
        let name = obj.get("name").and_then(Value::as_str).unwrap_or("?");
        let typo = obj
            .keys()
            .filter(|k| !KNOWN_TOOL_KEYS.contains(&k.as_str()))
            .find_map(|k| {
                crate::finding::nearest(k, ["inputSchema", "input_schema"]).map(|c| (k, c))
            });
        return Err(match typo {
            Some((k, c)) => {
                format!("`{name}`: no `inputSchema`; `{k}` is not `{c}` (keys are case-sensitive)")
            }
            None => format!(
                "`{name}`: no input schema: an MCP tool needs `inputSchema`, an OpenAI tool \
                 `function.parameters`, a BFCL doc `parameters` of `type: dict`"
            ),
        });
    };
    let (obj, params_key) = match dialect {
        Dialect::Mcp => (
            obj,
            if obj.contains_key("inputSchema") {
                "inputSchema"
            } else {
                "input_schema"
            },
        ),
        Dialect::OpenAi => (
            obj.get("function")
                .and_then(Value::as_object)
                .ok_or("OpenAI tool without a `function` object")?,
            "parameters",
        ),
        Dialect::Bfcl => (obj, "parameters"),
    };
    let name = obj
        .get("name")
        .and_then(Value::as_str)
        .filter(|n| !n.is_empty())
        .ok_or("missing `name`")?
        .to_owned();
    let description = obj
        .get("description")
        .and_then(Value::as_str)
        .unwrap_or("")
        .to_owned();
    // Only OpenAI's `parameters` is optional: "omitting parameters defines a function with an
    // empty parameter list" (OpenAI API reference), so no argument is accepted.
    let raw = obj
        .get(params_key)
        .cloned()
        .unwrap_or_else(|| json!({"type": "object", "properties": {}}));
    let input_schema = match dialect {
        Dialect::Bfcl => bfcl_to_json_schema(&raw),
        _ => raw,
    };
    if !input_schema.is_object() {
        return Err(format!("`{name}`: the input schema must be a JSON object"));
    }
    let output_schema = obj
        .get("outputSchema")
        .or_else(|| obj.get("output_schema"))
        .cloned();
    let annotations = Annotations::from_json(obj.get("annotations"));
    Ok(ToolSpec {
        name,
        description,
        input_schema,
        output_schema,
        annotations,
    })
}

/// Keys of an MCP tool besides its schemas, never taken for a misspelt `inputSchema`.
const KNOWN_TOOL_KEYS: &[&str] = &[
    "name",
    "title",
    "description",
    "outputSchema",
    "output_schema",
    "annotations",
    "icons",
    "_meta",
];

/// A BFCL function doc, by its own shape: `parameters` is an object schema whose `type` is
/// BFCL's `dict` (or JSON Schema's `object`, as in other function-declaration formats).
fn is_function_doc(obj: &Map<String, Value>) -> bool {
    obj.get("parameters")
        .and_then(|p| p.get("type"))
        .and_then(Value::as_str)
        .is_some_and(|t| t == "dict" || t == "object")
}

/// Maps BFCL's Python-flavoured type names onto JSON Schema, recursively.
///
/// BFCL writes `dict` for object, `float` for number, `tuple` for array and `any` for no
/// constraint; everything else is already JSON Schema.
pub fn bfcl_to_json_schema(schema: &Value) -> Value {
    let Value::Object(obj) = schema else {
        return schema.clone();
    };
    let mut out = Map::with_capacity(obj.len());
    for (key, value) in obj {
        match key.as_str() {
            "type" => match value.as_str() {
                Some("dict") => {
                    out.insert(key.clone(), json!("object"));
                }
                Some("float") => {
                    out.insert(key.clone(), json!("number"));
                }
                Some("tuple") => {
                    out.insert(key.clone(), json!("array"));
                }
                Some("any") => {}
                _ => {
                    out.insert(key.clone(), value.clone());
                }
            },
            "properties" => {
                let props = value
                    .as_object()
                    .map(|p| {
                        p.iter()
                            .map(|(k, v)| (k.clone(), bfcl_to_json_schema(v)))
                            .collect()
                    })
                    .unwrap_or_default();
                out.insert(key.clone(), Value::Object(props));
            }
            "items" | "additionalProperties" => {
                out.insert(key.clone(), bfcl_to_json_schema(value));
            }
            // BFCL marks optional parameters in prose ("optional" / `default`), never in schema.
            "optional" => {}
            _ => {
                out.insert(key.clone(), value.clone());
            }
        }
    }
    Value::Object(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn loads_mcp_result_and_bare_array() {
        let tool = json!({"name": "t", "inputSchema": {"type": "object", "properties": {"a": {"type": "string"}}}});
        let a = ToolSet::from_json(&json!({"tools": [tool.clone()]})).unwrap();
        let b = ToolSet::from_json(&json!([tool])).unwrap();
        assert_eq!(a.tools(), b.tools());
        assert!(a.get("t").unwrap().has_param("a"));
    }

    #[test]
    fn loads_openai_tools() {
        let set = ToolSet::from_json(&json!([{"type": "function", "function": {
            "name": "get_weather", "description": "d",
            "parameters": {"type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]}}}]))
        .unwrap();
        let t = set.get("get_weather").unwrap();
        assert_eq!(t.required().collect::<Vec<_>>(), ["city"]);
    }

    #[test]
    fn maps_bfcl_types() {
        let set = ToolSet::from_json(&json!([{"name": "calc.area", "description": "d", "parameters": {
            "type": "dict", "properties": {
                "base": {"type": "float"},
                "dims": {"type": "tuple", "items": {"type": "integer"}},
                "opts": {"type": "dict", "properties": {"unit": {"type": "string", "enum": ["m", "cm"]}}},
                "extra": {"type": "any"}},
            "required": ["base"]}}]))
        .unwrap();
        let s = &set.get("calc.area").unwrap().input_schema;
        assert_eq!(s["type"], "object");
        assert_eq!(s["properties"]["base"]["type"], "number");
        assert_eq!(s["properties"]["dims"]["type"], "array");
        assert_eq!(s["properties"]["opts"]["type"], "object");
        assert_eq!(
            s["properties"]["opts"]["properties"]["unit"]["enum"],
            json!(["m", "cm"])
        );
        assert!(s["properties"]["extra"].get("type").is_none());
    }

    #[test]
    fn rejects_duplicates_and_nameless_tools() {
        let t = json!({"name": "t", "inputSchema": {"type": "object"}});
        let err = ToolSet::from_json(&json!([t.clone(), t])).unwrap_err();
        assert_eq!(
            err,
            SpecError::At {
                index: 1,
                source: Box::new(SpecError::DuplicateTool("t".into()))
            }
        );
        assert_eq!(err.to_string(), "tool #1: duplicate tool name `t`");
        let err = ToolSet::from_json(&json!([{"inputSchema": {}}])).unwrap_err();
        assert!(err.to_string().contains("missing `name`"), "{err}");
        let cause = std::error::Error::source(&err).expect("the tool's own error is kept");
        assert!(cause.to_string().starts_with("missing `name`"), "{cause}");
    }

    #[test]
    fn malformed_json_names_line_and_column() {
        let file = SourceFile::from_text("tools.json", "{\n  \"tools\": [\n    {,}\n  ]\n}\n");
        let err = ToolSet::from_source(&file).unwrap_err();
        assert_eq!(err.place(), "tools.json:3:6");
    }

    // Issue 18, item 8: these were read as BFCL docs without parameters and accepted anything.
    #[rstest::rstest]
    #[case::no_schema(json!({"name": "t", "description": "d"}), "`t`: no input schema")]
    #[case::lowercase_typo(
        json!({"name": "t", "inputschema": {"type": "object"}}),
        "`inputschema` is not `inputSchema`"
    )]
    #[case::dashed_typo(
        json!({"name": "t", "input-schema": {"type": "object"}}),
        "`input-schema` is not `"
    )]
    #[case::parameters_not_a_schema(json!({"name": "t", "parameters": []}), "no input schema")]
    #[case::parameters_without_type(
        json!({"name": "t", "parameters": {"properties": {}}}),
        "no input schema"
    )]
    #[case::null_input_schema(
        json!({"name": "t", "inputSchema": null}),
        "must be a JSON object"
    )]
    fn a_tool_without_an_input_schema_is_an_error(#[case] tool: Value, #[case] needle: &str) {
        let err = ToolSet::from_json(&json!([tool])).unwrap_err();
        assert!(err.to_string().contains(needle), "{err}");
    }

    #[test]
    fn bfcl_docs_are_recognised_by_their_shape() {
        let set = ToolSet::from_json(&json!([
            {"name": "a", "parameters": {"type": "dict", "properties": {}, "required": []}},
            {"name": "b", "parameters": {"type": "object", "properties": {"x": {"type": "float"}}}},
        ]))
        .unwrap();
        assert_eq!(set.get("a").unwrap().input_schema["type"], "object");
        assert_eq!(
            set.get("b").unwrap().input_schema["properties"]["x"]["type"],
            "number"
        );
    }

    #[test]
    fn an_openai_function_without_parameters_takes_none() {
        let set = ToolSet::from_json(&json!([{"type": "function", "function": {"name": "now"}}]))
            .unwrap();
        assert_eq!(
            set.get("now").unwrap().input_schema,
            json!({"type": "object", "properties": {}})
        );
    }

    #[test]
    fn bfcl_json_lines() {
        let text = "{\"name\": \"a\", \"parameters\": {\"type\": \"dict\", \"properties\": {}}}\n{\"name\": \"b\", \"parameters\": {\"type\": \"dict\", \"properties\": {}}}\n";
        let set = ToolSet::from_source(&SourceFile::from_text("f.jsonl", text)).unwrap();
        assert_eq!(set.len(), 2);
    }
}
