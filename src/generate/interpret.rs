//! Stage 1, interpret: per tool, a validated record of what it does, what it needs, why an
//! agent would call it, and its enterprise context (paper Appendix D.1), with the capability
//! matrix's facts in the context when a matrix describes the tool.

use serde::{Deserialize, Serialize};
use serde_json::{Value, json};

use super::Generator;
use crate::llm::{LlmError, Request};
use crate::spec::ToolSpec;

/// Bumped when the prompt or schema changes meaning (part of the cache key).
pub(crate) const PROMPT_VERSION: &str = "agent-seer-interpret-2";

/// Stage 1's record of one tool.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ToolExplanation {
    /// Exactly the tool's name in the spec.
    pub tool_name: String,
    /// What the tool does and its scope (at most 600 characters).
    pub what_it_does: String,
    /// Its parameters, types, allowed values, formats, defaults, and the server's limits
    /// beyond the schema (at most 900 characters).
    pub what_it_needs: String,
    /// Business reasons an assistant would call it (at most 600 characters).
    pub why_its_used: String,
    /// Short domain tags (`Media Production`, `Marketing`), one to six.
    pub enterprise_context: Vec<String>,
}

const SYSTEM: &str = "\
You read the specification of one tool that an AI assistant can call, and explain it for \
people who will write realistic test scenarios for that assistant. Say what the tool does and \
its scope; what it needs (required and optional parameters, their types, allowed values and \
formats, defaults, and any limits the server enforces beyond the schema); why an assistant \
would call it, as concrete business reasons; and the enterprise contexts it belongs to (short \
domain tags). Repeat the tool's name exactly as given. Answer with one JSON object that \
follows the schema.";

/// The stage-1 prompt for one tool.
pub(crate) fn request(generator: &Generator<'_>, tool: &ToolSpec) -> Request {
    let mut user = format!(
        "Tool name: {}\nDescription: {}\nInput schema: {}\n",
        tool.name,
        tool.description.trim(),
        tool.input_schema
    );
    if let Some(out) = &tool.output_schema {
        user.push_str(&format!("Output schema: {out}\n"));
    }
    let facts = capability_facts(generator, &tool.name);
    if !facts.is_empty() {
        user.push_str(&format!(
            "\nWhat the server really accepts (beyond the schema):\n{facts}"
        ));
    }
    Request {
        system: SYSTEM.into(),
        user,
        schema_name: "tool_explanation".into(),
        schema: schema(&tool.name),
        temperature: 0.7,
        max_tokens: 1024,
        cache_tag: PROMPT_VERSION.into(),
        seed: None,
    }
}

fn capability_facts(generator: &Generator<'_>, tool: &str) -> String {
    let mut out = String::new();
    for m in generator.caps {
        let Some(facts) = m.tool(tool) else { continue };
        if let Some(why) = &m.retired {
            out.push_str(&format!("- the server is retired: {why}\n"));
        }
        if let Some(f) = facts.family.map(|i| &m.families[i]) {
            let models: Vec<&str> = f.models.iter().map(|x| x.id.as_str()).collect();
            out.push_str(&format!(
                "- `{}` selects one of: {}\n",
                f.selector,
                models.join(", ")
            ));
            if let Some(w) = f.when_absent {
                out.push_str(&format!(
                    "- without `{}` the server uses {}\n",
                    f.selector, f.models[w].id
                ));
            }
            let declared = generator.spec.get(tool);
            for model in &f.models {
                if model.tools.as_ref().is_some_and(|t| !t.contains(tool)) {
                    out.push_str(&format!("- {} cannot serve this tool\n", model.id));
                    continue;
                }
                for (p, cs) in model
                    .parameters
                    .iter()
                    .filter(|(p, _)| declared.is_some_and(|d| d.has_param(p)))
                {
                    for c in cs {
                        if let Some(v) = &c.one_of {
                            out.push_str(&format!(
                                "- with {}: `{p}` one of {}\n",
                                model.id,
                                Value::Array(v.clone())
                            ));
                        }
                    }
                }
            }
        }
        for (p, cs) in &facts.parameters {
            for c in cs {
                if let Some(note) = &c.note {
                    out.push_str(&format!("- `{p}`: {note}\n"));
                }
            }
        }
    }
    out
}

/// The record's schema; `tool_name` can only be the tool's own name (a provider that decodes
/// under the schema cannot misspell it; [`check`] holds any other to it).
fn schema(tool_name: &str) -> Value {
    let text = |n: u32| json!({"type": "string", "maxLength": n});
    json!({
        "type": "object",
        "additionalProperties": false,
        "required": ["tool_name", "what_it_does", "what_it_needs", "why_its_used", "enterprise_context"],
        "properties": {
            "tool_name": {"type": "string", "enum": [tool_name]},
            "what_it_does": text(600),
            "what_it_needs": text(900),
            "why_its_used": text(600),
            "enterprise_context": {"type": "array", "minItems": 1, "maxItems": 6, "items": text(60)},
        }
    })
}

/// Checks a record against the spec: the name exactly as given, nothing empty.
pub(crate) fn check(tool: &ToolSpec, e: &ToolExplanation) -> Result<(), String> {
    if e.tool_name != tool.name {
        return Err(format!(
            "tool_name must be exactly `{}`, not `{}`",
            tool.name, e.tool_name
        ));
    }
    for (field, v) in [
        ("what_it_does", &e.what_it_does),
        ("what_it_needs", &e.what_it_needs),
        ("why_its_used", &e.why_its_used),
    ] {
        if v.trim().is_empty() {
            return Err(format!("`{field}` is empty"));
        }
    }
    if e.enterprise_context.iter().all(|c| c.trim().is_empty()) {
        return Err("`enterprise_context` has no tag".into());
    }
    Ok(())
}

impl Generator<'_> {
    /// Stage 1 over every tool: the records that validated, in spec order. A tool whose record
    /// never validates is dropped and counted in the report; an API failure ends the stage.
    /// The tools are interpreted concurrently (each record stands alone), up to the client's
    /// cap.
    pub async fn interpret(&mut self) -> Result<Vec<ToolExplanation>, LlmError> {
        let spec = self.spec;
        let tools = spec.tools();
        let reqs: Vec<Request> = tools.iter().map(|t| request(self, t)).collect();
        let this = &*self;
        let results = super::ordered::run(&this.keys(&reqs), |i| {
            let tool = &tools[i];
            this.record("interpret", &tool.name, &reqs[i], move |e| check(tool, e))
        })
        .await?;
        let mut out = Vec::new();
        for (record, counts) in results {
            self.tally("interpret", counts);
            out.extend(record);
        }
        Ok(out)
    }
}

#[cfg(test)]
pub(super) mod tests {
    use std::path::Path;

    use super::*;
    use crate::llm::{CacheMode, Client, LlmConfig, Provider};
    use crate::spec::{Capabilities, ToolSet};

    fn veo() -> (ToolSet, Vec<Capabilities>) {
        let root = Path::new(env!("CARGO_MANIFEST_DIR"));
        (
            ToolSet::load(&root.join("harnesses/veo.tools.json")).unwrap(),
            vec![Capabilities::load(&root.join("capabilities/mcp-veo-go.yaml")).unwrap()],
        )
    }

    /// A client that can only replay (nothing is cached): for rendering prompts.
    pub(crate) fn offline_client() -> Client {
        Client::new(LlmConfig {
            provider: Provider::OpenAi {
                base_url: "http://127.0.0.1:9".into(),
                key: None,
            },
            model: "m".into(),
            timeout: std::time::Duration::from_secs(1),
            concurrency: 1,
            max_retries: 0,
            min_backoff: std::time::Duration::from_millis(1),
            max_backoff: std::time::Duration::from_secs(60),
            cache_dir: std::env::temp_dir(),
            mode: CacheMode::Replay,
        })
        .unwrap()
    }

    #[test]
    fn prompt_carries_the_matrix_facts() {
        let (spec, caps) = veo();
        let client = offline_client();
        let g = Generator::new(&client, &spec, &caps);
        let req = request(&g, spec.get("veo_extend_video").unwrap());
        insta::assert_snapshot!("interpret_system", req.system);
        insta::assert_snapshot!("interpret_user_veo_extend_video", req.user);
        assert!(
            req.user
                .contains("veo-3.1-fast-generate-001 cannot serve this tool")
        );
        assert!(
            req.user
                .contains("without `model` the server uses veo-2.0-generate-001")
        );
    }

    #[test]
    fn names_must_match_exactly() {
        let (spec, _) = veo();
        let tool = spec.get("veo_t2v").unwrap();
        let mut e = ToolExplanation {
            tool_name: "veo_t2v".into(),
            what_it_does: "makes videos".into(),
            what_it_needs: "a prompt".into(),
            why_its_used: "ads".into(),
            enterprise_context: vec!["Marketing".into()],
        };
        check(tool, &e).unwrap();
        e.tool_name = "veo_text_to_video".into();
        assert!(check(tool, &e).unwrap_err().contains("exactly `veo_t2v`"));
        e.tool_name = "veo_t2v".into();
        e.enterprise_context = vec![" ".into()];
        assert!(check(tool, &e).is_err());
    }
}
