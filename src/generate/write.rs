//! The output: harness YAML the runner loads unchanged, next to the tools.json it came from;
//! and `--verify`, which keeps a scenario only when its oracle transcript passes and its
//! mutants (wrong tool, missing required, an unknown model, a broken reference) fail.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use serde_json::{Value, json};

use super::expand::Expansion;
use super::mocks::Mocked;
use crate::check::{Suite, Verdict, evaluate};
use crate::harness::{
    CallDoc, HarnessDoc, LabelDoc, PolicyDoc, PolicyName, ScenarioDoc, StepCall, StepDoc,
    Transcript, TranscriptBody, TranscriptDoc, TranscriptTurnDoc, TurnDoc, WriteError,
    object_arguments,
};
use crate::source::{SourceError, SourceFile};

/// Slug ids from titles, unique.
fn ids(mocked: &[Mocked]) -> Vec<String> {
    let mut seen = Vec::new();
    for m in mocked {
        let base: String = m
            .scenario
            .title
            .to_lowercase()
            .chars()
            .map(|c| if c.is_ascii_alphanumeric() { c } else { '-' })
            .collect();
        let base = base
            .split('-')
            .filter(|s| !s.is_empty())
            .collect::<Vec<_>>()
            .join("-");
        let base = if base.is_empty() {
            "scenario".to_owned()
        } else {
            base.chars().take(48).collect()
        };
        let mut id = base.clone();
        let mut n = 2;
        while seen.contains(&id) {
            id = format!("{base}-{n}");
            n += 1;
        }
        seen.push(id);
    }
    seen
}

/// The harness document. A generated call whose parameters are no object (stage 2's lint
/// rejects those) cannot be written.
pub fn harness(
    suite: &str,
    tools_file: &str,
    caps: &[String],
    mocked: &[Mocked],
    expansions: &[Option<Expansion>],
) -> Result<HarnessDoc, WriteError> {
    let mut scenarios = Vec::new();
    for ((m, id), e) in mocked
        .iter()
        .zip(ids(mocked))
        .zip(expansions.iter().chain(std::iter::repeat(&None)))
    {
        let step = |i: usize| {
            let c = &m.scenario.agent_workflow[i];
            Ok(StepDoc {
                call: StepCall::AgentSeer {
                    function_name: c.function_name.clone(),
                    parameters: object_arguments(&c.function_name, &c.parameters)?,
                },
                quick_explanation: Some(c.quick_explanation.clone()),
                match_policies: semantic_prompt(&c.parameters),
                mock_output: Some(m.outputs[i].clone()),
                grounding: Some(m.grounding[i]),
            })
        };
        let turns = match e {
            Some(e) => e
                .turns
                .iter()
                .enumerate()
                .map(|(ti, t)| {
                    Ok(TurnDoc {
                        prompt: t.prompt.clone(),
                        workflow: t
                            .calls
                            .iter()
                            .map(|i| step(i - 1))
                            .collect::<Result<_, _>>()?,
                        expected_response: (ti + 1 == e.turns.len())
                            .then(|| m.expected_response.clone()),
                        followup: Some(t.followup.clone()),
                        order: None,
                    })
                })
                .collect::<Result<_, WriteError>>()?,
            None => vec![TurnDoc {
                prompt: m.scenario.prompt.clone(),
                workflow: (0..m.scenario.agent_workflow.len())
                    .map(step)
                    .collect::<Result<_, _>>()?,
                expected_response: Some(m.expected_response.clone()),
                followup: Some(m.scenario.agent_followup.clone()),
                order: None,
            }],
        };
        scenarios.push(ScenarioDoc {
            id,
            tier: Some(m.scenario.tier),
            title: Some(m.scenario.title.clone()),
            category: Some(m.scenario.category.clone()),
            novelty_reason: Some(m.scenario.novelty_reason.clone()),
            artifacts: Vec::new(),
            turns,
        });
    }
    Ok(HarnessDoc {
        suite: Some(suite.to_owned()),
        tools: Some(vec![tools_file.to_owned()]),
        capabilities: caps.to_vec(),
        scenarios,
        ..HarnessDoc::default()
    })
}

/// Free-text `prompt` arguments are compared by the judge, not verbatim.
fn semantic_prompt(params: &Value) -> BTreeMap<String, PolicyDoc> {
    let mut m = BTreeMap::new();
    if params.get("prompt").is_some_and(Value::is_string) {
        m.insert("prompt".into(), PolicyDoc::Named(PolicyName::Semantic));
    }
    m
}

/// Writes `<dir>/<suite>.yaml` and `<dir>/<suite>.tools.json`; returns the harness path.
pub fn write(
    dir: &Path,
    suite: &str,
    tools: &Value,
    doc: &HarnessDoc,
) -> Result<PathBuf, SourceError> {
    std::fs::create_dir_all(dir).map_err(|e| SourceError::io(dir, e))?;
    let tools_path = dir.join(format!("{suite}.tools.json"));
    let tools_text =
        serde_json::to_string_pretty(tools).map_err(|e| SourceError::caused_by(&tools_path, e))?;
    std::fs::write(&tools_path, tools_text + "\n").map_err(|e| SourceError::io(&tools_path, e))?;
    let path = dir.join(format!("{suite}.yaml"));
    let text = format!(
        "# Generated by `agent-seer generate`.\n{}",
        doc.to_yaml()
            .map_err(|e| SourceError::caused_by(&path, e))?
    );
    std::fs::write(&path, text).map_err(|e| SourceError::io(&path, e))?;
    Ok(path)
}

/// The oracle of a scenario as a transcript, and its mutants: each mutant names the fault it
/// must be caught with.
pub(crate) fn twins(suite: &Suite, id: &str) -> Vec<(&'static str, TranscriptDoc)> {
    let Some(sc) = suite.harness.scenario(id) else {
        return Vec::new();
    };
    let calls: Vec<(usize, CallDoc)> = sc
        .turns
        .iter()
        .enumerate()
        .flat_map(|(ti, t)| {
            t.workflow.iter().map(move |o| {
                let call = CallDoc {
                    tool: o.call.tool.clone(),
                    arguments: o.call.args().clone(),
                    id: None,
                    output: o.mock_output.clone(),
                };
                (ti, call)
            })
        })
        .collect();
    let doc = |calls: &[(usize, CallDoc)]| TranscriptDoc {
        scenario: Some(id.to_owned()),
        prompt: None,
        agent: None,
        note: None,
        label: LabelDoc::default(),
        body: TranscriptBody::Turns {
            turns: (0..sc.turns.len())
                .map(|ti| TranscriptTurnDoc {
                    prompt: None,
                    calls: calls
                        .iter()
                        .filter(|(t, _)| *t == ti)
                        .map(|(_, c)| c.clone())
                        .collect(),
                    reply: Some("Done.".into()),
                })
                .collect(),
        },
    };
    let mut out = vec![("pass", doc(&calls))];
    // A wrong tool: the first call made with another tool of the spec.
    let first_tool = calls.first().map(|(_, c)| c.tool.as_str());
    if let Some(other) = suite
        .tools
        .tools()
        .iter()
        .map(|t| &t.name)
        .find(|n| first_tool.is_some_and(|f| f != n.as_str()))
    {
        let mut m = calls.clone();
        m[0].1.tool = other.clone();
        out.push(("selection", doc(&m)));
    }
    for (i, (_, c)) in calls.iter().enumerate() {
        let Some(spec) = suite.linter.tool(&c.tool) else {
            continue;
        };
        if let Some(req) = spec.required().next() {
            let mut m = calls.clone();
            m[i].1.arguments.remove(req);
            out.push(("argument_completeness", doc(&m)));
            break;
        }
    }
    for (i, (_, c)) in calls.iter().enumerate() {
        if let Some((m_, f)) = suite.linter.facts(&c.tool)
            && let Some(fam) = f.family.map(|x| &m_.families[x])
        {
            let mut m = calls.clone();
            m[i].1
                .arguments
                .insert(fam.selector.clone(), json!("no-such-model-9000"));
            out.push(("cap.unknown_model", doc(&m)));
            break;
        }
    }
    let references = |v: &Value| v.as_str().is_some_and(|s| s.contains("://"));
    if let Some(i) = (1..calls.len()).find(|&i| calls[i].1.arguments.values().any(references)) {
        let mut m = calls.clone();
        for v in m[i].1.arguments.values_mut() {
            if references(v) {
                *v = json!("gs://nobody-made-this/hallucinated.png");
            }
        }
        out.push(("flow", doc(&m)));
    }
    out
}

/// Scenario ids whose oracle passes and whose every mutant fails with its fault.
pub fn verify(suite: &Suite) -> (Vec<String>, Vec<String>) {
    let (mut keep, mut drop) = (Vec::new(), Vec::new());
    for sc in &suite.harness.scenarios {
        let mut ok = true;
        for (fault, doc) in twins(suite, &sc.id) {
            let text = match doc.to_yaml() {
                Ok(text) => text,
                Err(e) => {
                    ok = false;
                    drop.push(format!(
                        "{}: the {fault} twin cannot be written: {e}",
                        sc.id
                    ));
                    break;
                }
            };
            let Ok(t) = Transcript::from_source(
                SourceFile::from_text(format!("verify/{}.yaml", sc.id), text),
                sc.id.clone(),
            ) else {
                ok = false;
                break;
            };
            let Ok(ev) = evaluate(suite, &t) else {
                ok = false;
                break;
            };
            let right = match fault {
                "pass" => ev.verdict == Verdict::Pass,
                f => ev.verdict == Verdict::Fail && ev.findings.iter().any(|x| x.matches_fault(f)),
            };
            if !right {
                ok = false;
                drop.push(format!("{}: the {fault} twin is not decided right", sc.id));
                break;
            }
        }
        if ok {
            keep.push(sc.id.clone());
        }
    }
    (keep, drop)
}
