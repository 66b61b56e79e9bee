//! The missing contract: a tool without a description, a parameter without a type or a
//! description, no `outputSchema`, no annotations, no seed outputs. What an agent reads is
//! all it has to go on; a judge and a mock generator read no more (paper §3: mocks are
//! grounded in seed outputs where available).

use serde_json::Value;

use super::{AuditCode, AuditFinding, Server, params};
use crate::spec::ToolSpec;

/// Keywords that give a schema its type without `type`.
const TYPED_BY: &[&str] = &["type", "enum", "const", "anyOf", "oneOf", "allOf", "$ref"];

pub(super) fn check(server: &Server, tool: &ToolSpec) -> Vec<AuditFinding> {
    let mut out = Vec::new();
    let (tool_at, _) = server.places(tool);
    let name = &tool.name;
    if tool.description.trim().is_empty() {
        out.push(
            server
                .finding(AuditCode::NoToolDescription, Some(name), None)
                .at(&format!("{tool_at}/description"))
                .message(format!(
                    "`{name}` has no description: an agent picks it by its name alone"
                ))
                .done(),
        );
    }
    for p in params(server, tool) {
        let typed = p
            .schema
            .as_object()
            .is_some_and(|o| TYPED_BY.iter().any(|k| o.contains_key(*k)));
        if !typed {
            out.push(
                server
                    .finding(AuditCode::NoParamType, Some(name), Some(p.name))
                    .at(&p.pointer)
                    .message(format!(
                        "`{}` has no type: any JSON value validates, and an agent guesses its shape",
                        p.name
                    ))
                    .done(),
            );
        }
        let described = p
            .schema
            .get("description")
            .and_then(Value::as_str)
            .is_some_and(|d| !d.trim().is_empty());
        if !described {
            let code = if p.required {
                AuditCode::RequiredUndescribed
            } else {
                AuditCode::NoParamDescription
            };
            let what = if p.required { "required" } else { "optional" };
            out.push(
                server
                    .finding(code, Some(name), Some(p.name))
                    .at(&p.pointer)
                    .message(format!(
                        "the {what} parameter `{}` has no description",
                        p.name
                    ))
                    .done(),
            );
        }
    }
    if tool.output_schema.is_none() {
        out.push(
            server
                .finding(AuditCode::NoOutputSchema, Some(name), None)
                .at(&tool_at)
                .message(format!(
                    "`{name}` declares no `outputSchema`: agents and judges cannot know what it \
                     returns, or which values a later call may reference"
                ))
                .done(),
        );
    }
    if tool.annotations == Default::default() {
        out.push(
            server
                .finding(AuditCode::NoAnnotations, Some(name), None)
                .at(&tool_at)
                .message(format!(
                    "`{name}` has no annotations: by the MCP defaults it may destroy data and is \
                     not idempotent"
                ))
                .fix("\"annotations\": {\"readOnlyHint\": …, \"destructiveHint\": …, \"idempotentHint\": …}")
                .done(),
        );
    }
    if let Some(seeds) = &server.seeds
        && !seeds.tools.contains(name)
    {
        out.push(
            server
                .finding(AuditCode::NoSeedOutputs, Some(name), None)
                .at(&tool_at)
                .message(format!(
                    "{} has no sample output of `{name}`: its generated mocks are not grounded",
                    seeds.file.display()
                ))
                .done(),
        );
    }
    out
}

/// Findings about the server as a whole: no seed outputs at all.
pub(super) fn check_server(server: &Server) -> Vec<AuditFinding> {
    if server.seeds.is_some() || server.tools.is_empty() {
        return Vec::new();
    }
    vec![
        server
            .finding(AuditCode::NoSeedOutputs, None, None)
            .at("")
            .message(format!(
                "no seed outputs (`{}.seed_outputs.json` beside the spec, or --seed-outputs): \
                 generated mocks of its {} tools are not grounded",
                server.name,
                server.tools.len()
            ))
            .done(),
    ]
}
