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
mod cycle;
mod schema;

pub use crate::finding::{did_you_mean, nearest, type_name};

use std::collections::HashMap;

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

/// A compiled spec plus capability matrices, ready to lint calls.
pub struct Linter {
    tools: Vec<schema::CompiledTool>,
    by_name: HashMap<String, usize>,
    caps: Vec<Capabilities>,
    // tool index -> matrix index
    caps_of: Vec<Option<usize>>,
    // tool index -> the parameters with rules, per resolved model (computed once: sorting and
    // filtering them per call was most of a valid call's cost)
    plans: Vec<Option<caps::Plan>>,
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
        let plans = (0..tools.len())
            .map(|ti| {
                let matrix = &caps[caps_of[ti]?];
                let spec = &tools.tools()[ti];
                Some(caps::Plan::new(matrix, matrix.tool(&spec.name)?, spec))
            })
            .collect();
        Ok(Self {
            plans,
            tools: compiled,
            by_name,
            caps,
            caps_of,
        })
    }

    /// The spec of the tool `name`, if the linter knows it.
    pub fn tool(&self, name: &str) -> Option<&ToolSpec> {
        self.by_name.get(name).map(|&i| &self.tools[i].spec)
    }

    /// Whether `tool`'s schema admits no argument it does not declare, so that every
    /// undeclared argument is a `lint.unknown_param` error.
    pub(crate) fn rejects_undeclared(&self, tool: &str) -> bool {
        self.by_name.get(tool).is_some_and(|&i| !self.tools[i].open)
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
        let ti = *self.by_name.get(tool)?;
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
        self.facts(tool)
            .and_then(|(m, f)| f.family.map(|i| m.families[i].selector == param))
            .unwrap_or(false)
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
    /// MCP defaults where it declares none), overridden by the matrix's `effects:` entries
    /// whose `when:` holds for these arguments (defaults applied).
    pub fn effect(&self, tool: &str, args: &Map<String, Value>) -> Effect {
        let mut a = self.tool(tool).map(|s| s.annotations).unwrap_or_default();
        if let Some((_, facts)) = self.facts(tool) {
            for e in &facts.effects {
                let holds = e
                    .when
                    .iter()
                    .all(|(k, v)| self.effective(tool, args, k).as_ref() == Some(v));
                if holds {
                    a.read_only = e.read_only.or(a.read_only);
                    a.destructive = e.destructive.or(a.destructive);
                    a.idempotent = e.idempotent.or(a.idempotent);
                    a.open_world = e.open_world.or(a.open_world);
                }
            }
        }
        a.effect()
    }

    /// Lints one call. `arguments` should be a JSON object; `null` counts as no arguments.
    pub fn lint(&self, tool: &str, arguments: &Value) -> Vec<Finding> {
        let mut out = Vec::new();
        let Some(&ti) = self.by_name.get(tool) else {
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
        if let (Some(mi), Some(plan)) = (self.caps_of[ti], &self.plans[ti]) {
            let matrix = &self.caps[mi];
            if let Some(tool_caps) = matrix.tool(tool) {
                caps::check(matrix, tool_caps, plan, &compiled.spec, args, &mut out);
            }
        }
        out
    }
}

#[cfg(test)]
mod tests;
