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
pub mod scaffold;

use std::collections::HashMap;
use std::path::Path;

use serde_json::{Map, Value, json};

use crate::source::json::child;
use crate::source::{self, SourceError, SourceFile};

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
    /// Where each tool was read from, parallel to `tools` (`None` for a tool built in code or
    /// from a value): errors found later, such as a schema that does not compile, point there.
    origins: Vec<Option<Origin>>,
}

/// The file a tool was read from and its place in it.
#[derive(Clone, Debug)]
struct Origin {
    file: SourceFile,
    /// The JSON pointer of the tool object (`/tools/3`).
    tool: String,
    /// The pointer of its input schema as written, when the schema is used as written (a BFCL
    /// doc's `parameters` is translated, so places inside it do not carry over).
    schema: Option<String>,
}

/// A spec document that is no tool list, or a tool in it that is no tool.
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum SpecError {
    /// The document's shape: not an object or array of tools, `tools` not an array.
    Document {
        /// What is wrong.
        message: String,
        /// Where (`""` for the document, `/tools`).
        pointer: String,
    },
    /// One tool's shape (no name, a schema that is no object, …), at a JSON pointer relative
    /// to the tool (`/name`, `/inputSchema`; `""` for the tool itself).
    Tool {
        /// What is wrong.
        message: String,
        /// Where, relative to the tool.
        pointer: String,
    },
    /// Two tools with one name in a set.
    DuplicateTool(String),
    /// The error of the tool at this 0-based position in the document.
    At {
        /// The tool's index.
        index: usize,
        /// The JSON pointer, in the document, of what is wrong: the tool (`/tools/3`, `/3`, or
        /// `""` for a document that is one tool) or a member of it (`/tools/3/name`).
        pointer: String,
        /// What is wrong with it.
        source: Box<SpecError>,
    },
}

impl SpecError {
    /// The JSON pointer, in the document, of what the error is about (the document itself
    /// when nothing narrower is known).
    pub fn pointer(&self) -> &str {
        match self {
            SpecError::At { pointer, .. }
            | SpecError::Tool { pointer, .. }
            | SpecError::Document { pointer, .. } => pointer,
            SpecError::DuplicateTool(_) => "",
        }
    }
}

impl std::fmt::Display for SpecError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            SpecError::Document { message: m, .. } | SpecError::Tool { message: m, .. } => {
                f.write_str(m)
            }
            SpecError::DuplicateTool(name) => write!(f, "duplicate tool name `{name}`"),
            SpecError::At { index, source, .. } => write!(f, "tool #{index}: {source}"),
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
    /// docs. A JSON syntax error, a repeated key and a tool of the wrong shape point at their
    /// line and column; a byte-order mark is named.
    pub fn from_source(file: &SourceFile) -> Result<Self, SourceError> {
        Self::read(file, true)
    }

    /// [`ToolSet::from_source`] of a file a prepared suite's stamp vouches for
    /// (`check::prepared`): it loaded clean with this build, so the scan for repeated keys,
    /// which can only find an error, is not made again (a seventh of loading a suite).
    pub(crate) fn from_stamped(file: &SourceFile) -> Result<Self, SourceError> {
        Self::read(file, false)
    }

    fn read(file: &SourceFile, check_keys: bool) -> Result<Self, SourceError> {
        let (mut value, lines) = match serde_json::from_str::<Value>(&file.text) {
            Ok(v) => {
                if check_keys {
                    file.check_json_keys()?;
                }
                (v, None)
            }
            Err(err) => {
                // BFCL ships function docs as JSON Lines; accept that before giving up.
                let lines: Vec<&str> = file.text.lines().filter(|l| !l.trim().is_empty()).collect();
                let first_is_a_document = lines
                    .first()
                    .is_some_and(|l| serde_json::from_str::<Value>(l).is_ok());
                if lines.len() > 1 && first_is_a_document {
                    // Each document's line, for places inside it.
                    let mut docs = Vec::with_capacity(lines.len());
                    let mut at = Vec::with_capacity(lines.len());
                    for (i, line) in file.text.lines().enumerate() {
                        if line.trim().is_empty() {
                            continue;
                        }
                        let doc: Value = serde_json::from_str(line).map_err(|e| {
                            file.error_at(i as u32 + 1, e.column() as u32, strip_at(&e))
                        })?;
                        docs.push(doc);
                        at.push(i as u32 + 1);
                    }
                    (Value::Array(docs), Some(at))
                } else if file.text.starts_with('\u{feff}') {
                    return Err(file.parse_json().unwrap_err());
                } else {
                    return Err(file.json_error(&err));
                }
            }
        };
        let locate = |pointer: &str, message: String| match &lines {
            None => file.error_at_pointer(pointer, message),
            Some(at) => {
                // `/3/inputSchema` is in the fourth document, on its own line.
                let mut tokens = pointer.splitn(3, '/').skip(1);
                let doc = tokens.next().and_then(|t| t.parse::<usize>().ok());
                let rest = tokens.next().map_or(String::new(), |r| format!("/{r}"));
                match doc.and_then(|d| at.get(d)) {
                    Some(&line) => {
                        let text = file.text.lines().nth(line as usize - 1).unwrap_or("");
                        let column = source::json::locate(text, &rest)
                            .map_or(1, |p| source::json::line_column(text, p.start()).1);
                        file.error_at(line, column, message)
                    }
                    None => file.error(message),
                }
            }
        };
        let (mut set, places) =
            Self::parse(&mut value).map_err(|e| locate(e.pointer(), e.to_string()))?;
        if lines.is_none() {
            set.origins = places
                .into_iter()
                .map(|(tool, schema)| {
                    Some(Origin {
                        file: file.clone(),
                        tool,
                        schema,
                    })
                })
                .collect();
        }
        Ok(set)
    }

    /// A [`LintError::InvalidSchema`](crate::lint::LintError) about one of these tools, as
    /// an error at the offending keyword in the file the tool was read from (`None` for
    /// another error, or a tool not read from a file).
    pub fn schema_error(&self, tool: &str, pointer: &str, message: &str) -> Option<SourceError> {
        let origin = self.origins.get(self.index_of(tool)?)?.as_ref()?;
        let message = format!("tool `{tool}` has an invalid input schema: {message}");
        let at = match &origin.schema {
            Some(schema)
                if source::json::locate(&origin.file.text, &format!("{schema}{pointer}"))
                    .is_some() =>
            {
                format!("{schema}{pointer}")
            }
            Some(schema) => schema.clone(),
            None => origin.tool.clone(),
        };
        Some(origin.file.error_at_pointer(&at, message))
    }

    /// Where the tool named `name` was read from: the file, the JSON pointer of the tool
    /// object (`/tools/3`) and that of its input schema as written (`None` for a translated
    /// BFCL schema). `None` for a tool built in code or read from JSON Lines.
    pub fn origin(&self, name: &str) -> Option<(&SourceFile, &str, Option<&str>)> {
        let origin = self.origins.get(self.index_of(name)?)?.as_ref()?;
        Some((&origin.file, &origin.tool, origin.schema.as_deref()))
    }

    /// Builds a tool set from an already-parsed spec document.
    pub fn from_json(value: &Value) -> Result<Self, SpecError> {
        Self::parse(&mut value.clone()).map(|(set, _)| set)
    }

    /// The tool set, and for each tool the JSON pointers of the tool and of its input schema
    /// as written (`None` for a translated BFCL schema).
    #[allow(clippy::type_complexity)]
    fn parse(value: &mut Value) -> Result<(Self, Vec<(String, Option<String>)>), SpecError> {
        let doc = |m: &str| SpecError::Document {
            message: m.to_owned(),
            pointer: String::new(),
        };
        // Where the tools are: under `tools` (a tools/list result) or `functions`, the
        // document itself (an array of tools, or one function doc), at `/tools/3`, `/3` or ``.
        let key = value.as_object().and_then(|obj| {
            ["tools", "functions"]
                .into_iter()
                .find(|k| obj.contains_key(*k))
        });
        let single = value.is_object() && key.is_none();
        if single && value.get("name").is_none() {
            return Err(doc(
                "expected a tools/list result (`{\"tools\": [...]}`), an array of tools, or a \
                 function doc",
            ));
        }
        let prefix = key.map_or(String::new(), |k| format!("/{k}"));
        // The tools, read and then taken apart: their schemas are moved out of the document.
        let items: &mut [Value] = if single {
            std::slice::from_mut(value)
        } else {
            match (value, key) {
                (Value::Array(items), _) => items,
                (Value::Object(obj), Some(key)) => match obj.get_mut(key) {
                    Some(Value::Array(items)) => items,
                    _ => {
                        return Err(SpecError::Document {
                            message: format!("`{key}` must be an array"),
                            pointer: format!("/{key}"),
                        });
                    }
                },
                _ => return Err(doc("expected a JSON object or array of tools")),
            }
        };
        let mut set = ToolSet::default();
        let mut places = Vec::with_capacity(items.len());
        for (index, item) in items.iter_mut().enumerate() {
            let tool_pointer = if single {
                String::new()
            } else {
                format!("{prefix}/{index}")
            };
            let at = |pointer: String, source| SpecError::At {
                index,
                pointer,
                source: Box::new(source),
            };
            let (tool, schema) = parse_tool(item).map_err(|e| {
                let inner = match &e {
                    SpecError::Tool { pointer, .. } => pointer.clone(),
                    _ => String::new(),
                };
                at(format!("{tool_pointer}{inner}"), e)
            })?;
            let name_pointer = if item.get("function").is_some_and(Value::is_object) {
                "/function/name"
            } else {
                "/name"
            };
            set.push(tool)
                .map_err(|e| at(format!("{tool_pointer}{name_pointer}"), e))?;
            let schema = schema.map(|s| format!("{tool_pointer}{s}"));
            places.push((tool_pointer, schema));
        }
        Ok((set, places))
    }

    /// Adds a tool; names must be unique across the set.
    pub fn push(&mut self, tool: ToolSpec) -> Result<(), SpecError> {
        if self.by_name.contains_key(&tool.name) {
            return Err(SpecError::DuplicateTool(tool.name));
        }
        self.by_name.insert(tool.name.clone(), self.tools.len());
        self.tools.push(tool);
        self.origins.push(None);
        Ok(())
    }

    /// Merges another set in (a suite may span several servers).
    pub fn extend(&mut self, other: ToolSet) -> Result<(), SpecError> {
        for (tool, origin) in other.tools.into_iter().zip(other.origins) {
            self.push(tool)?;
            *self.origins.last_mut().expect("just pushed") = origin;
        }
        Ok(())
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
/// One tool, and the pointer (relative to the tool) of its input schema as written. Errors are
/// [`SpecError::Tool`] with the pointer of what is wrong.
fn parse_tool(item: &mut Value) -> Result<(ToolSpec, Option<String>), SpecError> {
    let err = |pointer: &str, message: String| SpecError::Tool {
        message,
        pointer: pointer.to_owned(),
    };
    let obj = item
        .as_object()
        .ok_or_else(|| err("", "a tool must be a JSON object".into()))?;
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
            Some((k, c)) => err(
                &child("", k),
                format!("`{name}`: no `inputSchema`; `{k}` is not `{c}` (keys are case-sensitive)"),
            ),
            None => err(
                "",
                format!(
                    "`{name}`: no input schema: an MCP tool needs `inputSchema`, an OpenAI tool \
                     `function.parameters`, a BFCL doc `parameters` of `type: dict`"
                ),
            ),
        });
    };
    let (obj, base, params_key) = match dialect {
        Dialect::Mcp => (
            obj,
            "",
            if obj.contains_key("inputSchema") {
                "inputSchema"
            } else {
                "input_schema"
            },
        ),
        Dialect::OpenAi => (
            obj.get("function")
                .and_then(Value::as_object)
                .ok_or_else(|| {
                    err(
                        if obj.contains_key("function") {
                            "/function"
                        } else {
                            ""
                        },
                        "an OpenAI tool needs a `function` object".into(),
                    )
                })?,
            "/function",
            "parameters",
        ),
        Dialect::Bfcl => (obj, "", "parameters"),
    };
    let name = match obj.get("name") {
        Some(Value::String(n)) if !n.is_empty() => n.clone(),
        Some(Value::String(_)) => {
            return Err(err(&format!("{base}/name"), "`name` is empty".into()));
        }
        Some(other) => {
            return Err(err(
                &format!("{base}/name"),
                format!("`name` must be a string, not {}", kind_of(other)),
            ));
        }
        None => return Err(err(base, "missing `name`".into())),
    };
    let description = match obj.get("description") {
        None | Some(Value::Null) => String::new(),
        Some(Value::String(d)) => d.clone(),
        Some(other) => {
            return Err(err(
                &format!("{base}/description"),
                format!(
                    "`{name}`: `description` must be a string, not {}",
                    kind_of(other)
                ),
            ));
        }
    };
    let output_key = if obj.contains_key("outputSchema") {
        "outputSchema"
    } else {
        "output_schema"
    };
    let annotations = Annotations::from_json(obj.get("annotations"));
    // The schemas are taken out of the document, which is dropped after.
    let obj = match dialect {
        Dialect::OpenAi => item.get_mut("function").and_then(Value::as_object_mut),
        _ => item.as_object_mut(),
    }
    .expect("an object, as found above");
    let output = obj.get_mut(output_key).map(Value::take);
    // Only OpenAI's `parameters` is optional: "omitting parameters defines a function with an
    // empty parameter list" (OpenAI API reference), so no argument is accepted.
    let written = obj.get_mut(params_key).map(Value::take);
    let as_written = dialect != Dialect::Bfcl && written.is_some();
    let raw = written.unwrap_or_else(|| json!({"type": "object", "properties": {}}));
    let schema_pointer = format!("{base}/{params_key}");
    let input_schema = match dialect {
        Dialect::Bfcl => bfcl_to_json_schema(&raw),
        _ => raw,
    };
    if !input_schema.is_object() {
        return Err(err(
            &schema_pointer,
            format!("`{name}`: the input schema must be a JSON object"),
        ));
    }
    let output_schema = match output {
        None | Some(Value::Null) => None,
        Some(v @ Value::Object(_)) => Some(v),
        Some(other) => {
            return Err(err(
                &format!("{base}/{output_key}"),
                format!(
                    "`{name}`: the output schema must be a JSON object, not {}",
                    kind_of(&other)
                ),
            ));
        }
    };
    let as_written = as_written.then_some(schema_pointer);
    Ok((
        ToolSpec {
            name,
            description,
            input_schema,
            output_schema,
            annotations,
        },
        as_written,
    ))
}

/// What kind of JSON value this is, with the value when it is short: `the number 777777`.
pub(crate) fn kind_of(v: &Value) -> String {
    match v {
        Value::Null => "null".into(),
        Value::Bool(b) => format!("the boolean {b}"),
        Value::Number(n) => format!("the number {n}"),
        Value::String(_) => "a string".into(),
        Value::Array(_) => "an array".into(),
        Value::Object(_) => "an object".into(),
    }
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
                pointer: "/1/name".into(),
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
