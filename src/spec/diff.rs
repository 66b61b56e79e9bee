//! Spec drift: what changed between two `tools/list` captures, and which harness scenarios each
//! change touches — an oracle written against the old spec may now be wrong (the paper's
//! "benchmark rot").

use std::collections::BTreeSet;

use serde::Serialize;
use serde_json::Value;

use super::{ToolSet, ToolSpec};

/// Schema keywords that only document.
const DOCS: &[&str] = &["description", "title", "examples", "$comment"];

/// One difference between the two specs.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Change {
    /// The tool it is about.
    pub tool: String,
    /// The parameter, for `param.*` kinds; `None` for `tool.*` ones.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub param: Option<String>,
    /// `tool.added`, `tool.removed`, `tool.description`, `tool.output_schema`,
    /// `param.added`, `param.removed`, `param.required`, `param.optional`, `param.type`,
    /// `param.enum`, `param.default`, `param.constraint`, `param.description`.
    pub kind: &'static str,
    /// What changed, for a person: `type "string" → "integer"`, `enum lost "a"`, `now
    /// required`.
    pub detail: String,
    /// A call valid against the old spec may be invalid against the new one.
    pub breaking: bool,
    /// Scenarios whose oracle this change touches: `suite::scenario (turn t, step s)`.
    pub touches: Vec<String>,
}

/// The differences from `old` to `new`, tools in name order.
pub fn diff(old: &ToolSet, new: &ToolSet) -> Vec<Change> {
    let names: BTreeSet<&str> = old
        .tools()
        .iter()
        .chain(new.tools())
        .map(|t| t.name.as_str())
        .collect();
    let mut out = Vec::new();
    let mut push = |tool: &str, param: Option<&str>, kind, detail: String, breaking| {
        out.push(Change {
            tool: tool.to_owned(),
            param: param.map(str::to_owned),
            kind,
            detail,
            breaking,
            touches: Vec::new(),
        })
    };
    for name in names {
        match (old.get(name), new.get(name)) {
            (Some(_), None) => push(name, None, "tool.removed", "tool removed".into(), true),
            (None, Some(_)) => push(name, None, "tool.added", "tool added".into(), false),
            (Some(a), Some(b)) => {
                if a.description != b.description {
                    push(
                        name,
                        None,
                        "tool.description",
                        "description changed".into(),
                        false,
                    );
                }
                if a.output_schema != b.output_schema {
                    push(
                        name,
                        None,
                        "tool.output_schema",
                        "output schema changed".into(),
                        false,
                    );
                }
                for c in params(a, b) {
                    push(name, Some(&c.0), c.1, c.2, c.3);
                }
            }
            (None, None) => {}
        }
    }
    out
}

type ParamChange = (String, &'static str, String, bool);

fn params(a: &ToolSpec, b: &ToolSpec) -> Vec<ParamChange> {
    let empty = serde_json::Map::new();
    let (pa, pb) = (
        a.properties().unwrap_or(&empty),
        b.properties().unwrap_or(&empty),
    );
    let (ra, rb): (BTreeSet<&str>, BTreeSet<&str>) =
        (a.required().collect(), b.required().collect());
    let names: BTreeSet<&String> = pa.keys().chain(pb.keys()).collect();
    let mut out = Vec::new();
    for name in names {
        let n = name.clone();
        match (pa.get(name), pb.get(name)) {
            (Some(_), None) => out.push((n, "param.removed", "parameter removed".into(), true)),
            (None, Some(_)) => {
                let req = rb.contains(name.as_str());
                out.push((
                    n,
                    "param.added",
                    format!(
                        "parameter added ({})",
                        if req { "required" } else { "optional" }
                    ),
                    req,
                ));
            }
            (Some(x), Some(y)) => {
                match (ra.contains(name.as_str()), rb.contains(name.as_str())) {
                    (false, true) => {
                        out.push((n.clone(), "param.required", "now required".into(), true))
                    }
                    (true, false) => {
                        out.push((n.clone(), "param.optional", "now optional".into(), false))
                    }
                    _ => {}
                }
                out.extend(
                    schema_changes(x, y)
                        .into_iter()
                        .map(|(k, d, br)| (n.clone(), k, d, br)),
                );
            }
            (None, None) => {}
        }
    }
    out
}

/// Keyword-level differences of one parameter's schema.
fn schema_changes(x: &Value, y: &Value) -> Vec<(&'static str, String, bool)> {
    let empty = serde_json::Map::new();
    let (mx, my) = (
        x.as_object().unwrap_or(&empty),
        y.as_object().unwrap_or(&empty),
    );
    let keys: BTreeSet<&String> = mx.keys().chain(my.keys()).collect();
    let show = |v: Option<&Value>| v.map_or("(none)".to_owned(), |v| v.to_string());
    let mut out = Vec::new();
    for k in keys {
        let (a, b) = (mx.get(k), my.get(k));
        if a == b {
            continue;
        }
        match k.as_str() {
            "type" => out.push((
                "param.type",
                format!("type {} → {}", show(a), show(b)),
                true,
            )),
            "enum" => {
                let set = |v: Option<&Value>| -> BTreeSet<String> {
                    v.and_then(Value::as_array)
                        .into_iter()
                        .flatten()
                        .map(Value::to_string)
                        .collect()
                };
                let (sa, sb) = (set(a), set(b));
                let removed: Vec<&String> = sa.difference(&sb).collect();
                let added: Vec<&String> = sb.difference(&sa).collect();
                let mut parts = Vec::new();
                if !removed.is_empty() {
                    parts.push(format!("enum lost {}", join(&removed)));
                }
                if !added.is_empty() {
                    parts.push(format!("enum gained {}", join(&added)));
                }
                if b.is_none() {
                    parts = vec!["enum dropped (any value now)".into()];
                }
                if a.is_none() {
                    parts = vec![format!("enum added: only {}", join(&added))];
                }
                // Fewer accepted values: a new enum, or values taken away.
                let breaking = b.is_some() && (a.is_none() || !removed.is_empty());
                out.push(("param.enum", parts.join("; "), breaking));
            }
            "default" => out.push((
                "param.default",
                format!("default {} → {}", show(a), show(b)),
                false,
            )),
            d if DOCS.contains(&d) => {
                out.push(("param.description", format!("{d} changed"), false))
            }
            other => out.push((
                "param.constraint",
                format!("{other} {} → {}", show(a), show(b)),
                // Any new or changed constraint may reject what was accepted.
                b.is_some(),
            )),
        }
    }
    out
}

fn join(v: &[&String]) -> String {
    v.iter().map(|s| s.as_str()).collect::<Vec<_>>().join(", ")
}
