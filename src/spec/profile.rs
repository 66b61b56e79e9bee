//! The paper's complexity profile of a spec (§5: parameter schema complexity is the strongest
//! correlate of quality variation).

use std::fmt;

use serde::Serialize;
use serde_json::Value;

use super::ToolSet;

/// How complex a tool set's schemas are.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Profile {
    /// Tools in the set.
    pub tools: usize,
    /// Declared parameters (`properties` keys), over all tools.
    pub parameters: usize,
    /// `parameters / tools`; 0 for an empty set.
    pub mean_params_per_tool: f64,
    /// The most parameters one tool declares.
    pub max_params: usize,
    /// The first tool declaring `max_params`; `None` when no tool has a parameter.
    pub max_params_tool: Option<String>,
    /// Parameters their tool's schema lists in `required`.
    pub required_params: usize,
    /// Parameters it does not.
    pub optional_params: usize,
    /// optional / all parameters.
    pub optional_ratio: f64,
    /// Parameters with an `enum` (or `const`).
    pub enum_params: usize,
    /// Parameters whose value is an object, or an array of objects.
    pub nested_params: usize,
    /// Tools that declare an output schema.
    pub tools_with_output_schema: usize,
}

impl Profile {
    /// Counts `set`'s tools and parameters.
    pub(crate) fn of(set: &ToolSet) -> Self {
        let mut p = Profile {
            tools: set.len(),
            parameters: 0,
            mean_params_per_tool: 0.0,
            max_params: 0,
            max_params_tool: None,
            required_params: 0,
            optional_params: 0,
            optional_ratio: 0.0,
            enum_params: 0,
            nested_params: 0,
            tools_with_output_schema: 0,
        };
        for tool in set.tools() {
            let props = tool.properties();
            let n = props.map_or(0, |m| m.len());
            p.parameters += n;
            if n > p.max_params {
                p.max_params = n;
                p.max_params_tool = Some(tool.name.clone());
            }
            let required: Vec<&str> = tool.required().collect();
            for (name, schema) in props.into_iter().flatten() {
                if required.contains(&name.as_str()) {
                    p.required_params += 1;
                } else {
                    p.optional_params += 1;
                }
                if schema.get("enum").is_some() || schema.get("const").is_some() {
                    p.enum_params += 1;
                }
                if is_nested(schema) {
                    p.nested_params += 1;
                }
            }
            p.tools_with_output_schema += usize::from(tool.output_schema.is_some());
        }
        if p.tools > 0 {
            p.mean_params_per_tool = p.parameters as f64 / p.tools as f64;
        }
        if p.parameters > 0 {
            p.optional_ratio = p.optional_params as f64 / p.parameters as f64;
        }
        p
    }
}

fn is_nested(schema: &Value) -> bool {
    let ty = |s: &Value| s.get("type").and_then(Value::as_str).map(str::to_owned);
    match ty(schema).as_deref() {
        Some("object") => true,
        Some("array") => schema
            .get("items")
            .is_some_and(|i| ty(i).as_deref() == Some("object")),
        _ => schema.get("properties").is_some(),
    }
}

impl fmt::Display for Profile {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        writeln!(f, "tools                 {}", self.tools)?;
        writeln!(f, "parameters            {}", self.parameters)?;
        writeln!(f, "mean params / tool    {:.2}", self.mean_params_per_tool)?;
        match &self.max_params_tool {
            Some(t) => writeln!(f, "max params            {} ({t})", self.max_params)?,
            None => writeln!(f, "max params            {}", self.max_params)?,
        }
        writeln!(
            f,
            "optional ratio        {:.3} ({} optional, {} required)",
            self.optional_ratio, self.optional_params, self.required_params
        )?;
        writeln!(f, "enum parameters       {}", self.enum_params)?;
        writeln!(f, "nested parameters     {}", self.nested_params)?;
        write!(f, "output schemas        {}", self.tools_with_output_schema)
    }
}
