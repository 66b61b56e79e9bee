//! Google ADK eval sets: `*.evalset.json` (an `EvalSet` as ADK's `LocalEvalSetsManager` saves
//! it: snake_case, or camelCase by alias), the legacy `AgentEvaluator` `*.test.json` (a list of
//! turns `{query, expected_tool_use: [{tool_name, tool_input}], reference}`) and the legacy
//! list of `{name, data: [turns]}`; and `test_config.json` criteria.
//!
//! An eval case is a scenario: each invocation a turn (its `user_content` the prompt, its
//! expected tool uses the workflow, its `final_response` the expected response). A recorded
//! run of the case (an eval set of actual invocations, as adk web's "add session to eval set"
//! writes it: tool calls as `intermediate_data.tool_uses` or as `invocation_events` with
//! `function_call` / `function_response` parts) is a transcript of it.

use serde_json::{Map, Value};

use crate::source::{SourceError, SourceFile};

/// One expected or recorded tool call.
#[derive(Clone, Debug, PartialEq)]
pub struct ToolUse {
    /// `name`.
    pub name: String,
    /// `args` (an object; absent is `{}`, and ADK's `None` as well).
    pub args: Map<String, Value>,
    /// `id`, when recorded.
    pub id: Option<String>,
    /// The matching `function_response.response`, when recorded.
    pub response: Option<Value>,
}

/// One invocation: a user message, the tool calls, the final text.
#[derive(Clone, Debug, PartialEq)]
pub struct Invocation {
    /// The `user_content` text.
    pub prompt: String,
    /// The tool calls, in order.
    pub tool_uses: Vec<ToolUse>,
    /// The `final_response` text.
    pub final_response: Option<String>,
}

/// One eval case.
#[derive(Clone, Debug, PartialEq)]
pub struct EvalCase {
    /// `eval_id` (legacy: `name`, or the file's stem).
    pub id: String,
    /// Its invocations, in order.
    pub invocations: Vec<Invocation>,
}

/// An eval set.
#[derive(Clone, Debug, PartialEq)]
pub struct EvalSet {
    /// `eval_set_id` (legacy: the file's stem).
    pub id: String,
    /// Its cases, in order.
    pub cases: Vec<EvalCase>,
}

/// ADK's match types for `tool_trajectory_avg_score`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum MatchType {
    /// The calls are exactly the expected ones, in order.
    Exact,
    /// The expected calls appear in order; extra calls allowed.
    InOrder,
    /// The expected calls all appear; order and extras free.
    AnyOrder,
}

/// The `tool_trajectory_avg_score` criterion of a `test_config.json`.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Criterion {
    /// The threshold the average must reach.
    pub threshold: f64,
    /// How calls are matched. A bare number is `EXACT`, as in ADK (`eval_config.py`).
    pub match_type: MatchType,
}

fn get<'a>(v: &'a Value, snake: &str, camel: &str) -> Option<&'a Value> {
    v.get(snake).or_else(|| v.get(camel))
}

fn text_of(content: Option<&Value>) -> Option<String> {
    let parts = content?.get("parts")?.as_array()?;
    let texts: Vec<&str> = parts
        .iter()
        .filter(|p| p.get("thought").and_then(Value::as_bool) != Some(true))
        .filter_map(|p| p.get("text").and_then(Value::as_str))
        .collect();
    (!texts.is_empty()).then(|| texts.join("\n"))
}

/// A tool use's `args`: an object, or absent / `null` (ADK's `None`, no arguments). Anything
/// else is refused: arguments are an object on the wire.
fn args_of(v: Option<&Value>) -> Result<Map<String, Value>, String> {
    match v {
        Some(Value::Object(o)) => Ok(o.clone()),
        None | Some(Value::Null) => Ok(Map::new()),
        Some(other) => Err(format!(
            "tool arguments are {}, not an object",
            crate::finding::type_name(other)
        )),
    }
}

/// Reads an eval set file in any of ADK's three shapes.
pub fn read_eval_set(file: &SourceFile) -> Result<EvalSet, SourceError> {
    let v = file.parse_json()?;
    // `x.evalset.json`, `x.test.json` and `x.json` are all eval set `x`.
    let name = file
        .path
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    let stem = [".evalset.json", ".test.json", ".json"]
        .iter()
        .find_map(|s| name.strip_suffix(s))
        .unwrap_or(&name)
        .to_owned();
    let err = |m: String| file.error(format!("ADK eval set: {m}"));
    match &v {
        Value::Object(o) if o.contains_key("eval_cases") || o.contains_key("evalCases") => {
            let id = get(&v, "eval_set_id", "evalSetId")
                .and_then(Value::as_str)
                .unwrap_or(&stem)
                .to_owned();
            let cases = get(&v, "eval_cases", "evalCases")
                .and_then(Value::as_array)
                .ok_or_else(|| err("`eval_cases` must be an array".into()))?;
            let mut out = Vec::new();
            for (i, c) in cases.iter().enumerate() {
                let at = format!("/eval_cases/{i}");
                let cid = get(c, "eval_id", "evalId")
                    .and_then(Value::as_str)
                    .ok_or_else(|| file.error_at_pointer(&at, "ADK eval set: an eval case without `eval_id`"))?;
                if get(c, "conversation_scenario", "conversationScenario").is_some() {
                    return Err(file.error_at_pointer(
                        &at,
                        format!("ADK eval set: case `{cid}` is a `conversation_scenario` (a simulated user): it has no fixed turns to grade"),
                    ));
                }
                let conv = get(c, "conversation", "conversation")
                    .and_then(Value::as_array)
                    .cloned()
                    .unwrap_or_default();
                let mut invocations = Vec::new();
                for (j, inv) in conv.iter().enumerate() {
                    let at = format!("{at}/conversation/{j}");
                    invocations.push(invocation(inv).map_err(|m| {
                        file.error_at_pointer(&at, format!("ADK eval set: case `{cid}`: {m}"))
                    })?);
                }
                out.push(EvalCase {
                    id: cid.to_owned(),
                    invocations,
                });
            }
            Ok(EvalSet { id, cases: out })
        }
        Value::Array(items) if items.iter().all(|i| i.get("data").is_some()) && !items.is_empty() => {
            let mut cases = Vec::new();
            for (i, c) in items.iter().enumerate() {
                let name = c.get("name").and_then(Value::as_str).ok_or_else(|| {
                    file.error_at_pointer(&format!("/{i}"), "ADK eval set: a case without `name`")
                })?;
                let turns = c.get("data").and_then(Value::as_array).cloned().unwrap_or_default();
                cases.push(EvalCase {
                    id: name.to_owned(),
                    invocations: turns
                        .iter()
                        .map(legacy_turn)
                        .collect::<Result<_, _>>()
                        .map_err(|m| file.error_at_pointer(&format!("/{i}"), format!("ADK eval set: case `{name}`: {m}")))?,
                });
            }
            Ok(EvalSet { id: stem, cases })
        }
        Value::Array(turns) if turns.iter().all(|t| t.get("query").is_some()) => Ok(EvalSet {
            id: stem.clone(),
            cases: vec![EvalCase {
                id: stem,
                invocations: turns
                    .iter()
                    .map(legacy_turn)
                    .collect::<Result<_, _>>()
                    .map_err(&err)?,
            }],
        }),
        _ => Err(err(
            "expected an EvalSet (`eval_set_id`, `eval_cases`), or the legacy list of turns (`query`, `expected_tool_use`) or of cases (`name`, `data`)".into(),
        )),
    }
}

fn legacy_turn(t: &Value) -> Result<Invocation, String> {
    let prompt = t
        .get("query")
        .and_then(Value::as_str)
        .ok_or("a legacy turn without a `query` string")?;
    let mut tool_uses = Vec::new();
    for u in t
        .get("expected_tool_use")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
    {
        tool_uses.push(ToolUse {
            name: u
                .get("tool_name")
                .and_then(Value::as_str)
                .ok_or("an expected tool use without a `tool_name` string")?
                .to_owned(),
            args: args_of(u.get("tool_input"))?,
            id: None,
            response: None,
        });
    }
    Ok(Invocation {
        prompt: prompt.to_owned(),
        tool_uses,
        final_response: t
            .get("reference")
            .and_then(Value::as_str)
            .map(str::to_owned),
    })
}

fn invocation(inv: &Value) -> Result<Invocation, String> {
    let prompt = text_of(get(inv, "user_content", "userContent")).unwrap_or_default();
    let final_response = text_of(get(inv, "final_response", "finalResponse"));
    let mut tool_uses = Vec::new();
    if let Some(data) = get(inv, "intermediate_data", "intermediateData") {
        if let Some(uses) = get(data, "tool_uses", "toolUses").and_then(Value::as_array) {
            for u in uses {
                tool_uses.push(ToolUse {
                    name: u
                        .get("name")
                        .and_then(Value::as_str)
                        .ok_or("a tool use without `name`")?
                        .to_owned(),
                    args: args_of(u.get("args"))?,
                    id: u.get("id").and_then(Value::as_str).map(str::to_owned),
                    response: None,
                });
            }
            for r in get(data, "tool_responses", "toolResponses")
                .and_then(Value::as_array)
                .into_iter()
                .flatten()
            {
                respond(&mut tool_uses, r);
            }
        }
        for e in get(data, "invocation_events", "invocationEvents")
            .and_then(Value::as_array)
            .into_iter()
            .flatten()
        {
            let parts = e
                .get("content")
                .and_then(|c| c.get("parts"))
                .and_then(Value::as_array)
                .cloned()
                .unwrap_or_default();
            for p in parts {
                if let Some(f) = get(&p, "function_call", "functionCall") {
                    tool_uses.push(ToolUse {
                        name: f
                            .get("name")
                            .and_then(Value::as_str)
                            .ok_or("a function call without `name`")?
                            .to_owned(),
                        args: args_of(f.get("args"))?,
                        id: f.get("id").and_then(Value::as_str).map(str::to_owned),
                        response: None,
                    });
                } else if let Some(r) = get(&p, "function_response", "functionResponse") {
                    respond(&mut tool_uses, r);
                }
            }
        }
    }
    Ok(Invocation {
        prompt,
        tool_uses,
        final_response,
    })
}

/// Attaches a `function_response` to its call: by id, else the earliest unanswered call of
/// that name.
fn respond(uses: &mut [ToolUse], r: &Value) {
    let id = r.get("id").and_then(Value::as_str);
    let name = r.get("name").and_then(Value::as_str);
    let slot = uses.iter_mut().find(|u| {
        u.response.is_none()
            && match (id, &u.id) {
                (Some(a), Some(b)) => a == b,
                _ => Some(u.name.as_str()) == name,
            }
    });
    if let Some(u) = slot {
        u.response = r.get("response").cloned();
    }
}

/// The `tool_trajectory_avg_score` criterion of a `test_config.json`, if it has one.
pub fn read_criterion(file: &SourceFile) -> Result<Option<Criterion>, SourceError> {
    let v = file.parse_json()?;
    let Some(c) = v.pointer("/criteria/tool_trajectory_avg_score") else {
        return Ok(None);
    };
    let at = "/criteria/tool_trajectory_avg_score";
    let (threshold, match_type) = match c {
        Value::Number(n) => (n.as_f64(), Some("EXACT".to_owned())),
        Value::Object(o) => (
            o.get("threshold").and_then(Value::as_f64),
            Some(
                o.get("match_type")
                    .or_else(|| o.get("matchType"))
                    .and_then(Value::as_str)
                    .unwrap_or("EXACT")
                    .to_owned(),
            ),
        ),
        _ => (None, None),
    };
    let threshold = threshold
        .filter(|t| t.is_finite() && (0.0..=1.0).contains(t))
        .ok_or_else(|| file.error_at_pointer(at, "the threshold must be a number within 0–1"))?;
    // ADK accepts any case, with `-` or a space for `_` (`eval_metrics.py`).
    let kind = match_type
        .unwrap_or_default()
        .to_uppercase()
        .replace(['-', ' '], "_");
    let match_type = match kind.as_str() {
        "EXACT" => MatchType::Exact,
        "IN_ORDER" => MatchType::InOrder,
        "ANY_ORDER" => MatchType::AnyOrder,
        other => {
            return Err(file.error_at_pointer(
                at,
                format!("unknown match_type `{other}`: EXACT, IN_ORDER or ANY_ORDER"),
            ));
        }
    };
    Ok(Some(Criterion {
        threshold,
        match_type,
    }))
}

/// What [`import`] wrote.
#[derive(Clone, Debug)]
pub struct AdkImport {
    /// The harness.
    pub harness: std::path::PathBuf,
    /// The transcripts, one per recorded case.
    pub transcripts: Vec<std::path::PathBuf>,
    /// Cases left out, and why (a case without invocations has no turn to grade).
    pub skipped: Vec<String>,
}

/// A recorded tool response as the CallToolResult a transcript's `output` holds.
fn output_of(response: &Value) -> Value {
    match response {
        Value::Object(o)
            if o.contains_key("content")
                || o.contains_key("structuredContent")
                || o.contains_key("isError") =>
        {
            response.clone()
        }
        other => {
            let mut o = Map::new();
            o.insert(
                "content".into(),
                serde_json::json!([{"type": "text", "text": serde_json::to_string(other).unwrap_or_default()}]),
            );
            o.insert("structuredContent".into(), other.clone());
            Value::Object(o)
        }
    }
}

/// Why `name` cannot name a suite or a transcript (the trial names discovery gives them), as
/// discovery says it.
fn trial_name_problem(name: &str, reserved: &[&str]) -> Option<String> {
    if name.contains(':') {
        Some("a `:` in a name (trial names join their parts with `::`)".to_owned())
    } else if reserved.contains(&name) {
        Some(format!("`{name}` is reserved ({})", reserved.join(", ")))
    } else {
        None
    }
}

/// Writes an ADK eval set as a suite under `out`: `harnesses/<suite>.yaml` (each eval case a
/// scenario, each invocation a turn whose workflow is its expected tool uses, in order) with
/// `tools` as its tool spec (copied beside it as `<suite>.tools.json`), and each case of the
/// `recorded` eval set (the agent's actual invocations, same eval ids) as
/// `transcripts/<suite>/<case>.yaml`. The criterion, when given, is named in the harness's
/// description. Nothing is written unless all of it converts; an existing file is replaced
/// only with `force`.
pub fn import(
    evalset: &std::path::Path,
    recorded: Option<&std::path::Path>,
    tools: &std::path::Path,
    criterion: Option<Criterion>,
    suite: &str,
    out: &std::path::Path,
    force: bool,
) -> Result<AdkImport, SourceError> {
    use crate::harness::{
        CallDoc, HarnessDoc, LabelDoc, ScenarioDoc, StepCall, StepDoc, TranscriptBody,
        TranscriptDoc, TranscriptTurnDoc, TurnDoc,
    };
    crate::source::file_name(suite)
        .map_err(|e| SourceError::about(out, format!("suite name {e}")))?;
    // What discovery would refuse is refused before anything is written (issue 32, item 11:
    // suites that did not load were written with exit 0).
    if let Some(why) = trial_name_problem(suite, crate::harness::RESERVED_SUITES) {
        return Err(SourceError::about(
            out,
            format!("suite name `{suite}`: {why}"),
        ));
    }
    let set_file = SourceFile::read(evalset)?;
    let set = read_eval_set(&set_file)?;
    crate::spec::ToolSet::load(tools)?;
    let mut skipped = Vec::new();
    let mut scenarios = Vec::new();
    let mut ids = std::collections::HashSet::new();
    for c in &set.cases {
        crate::source::file_name(&c.id)
            .map_err(|e| set_file.error(format!("ADK eval set: eval id {e}")))?;
        if !ids.insert(c.id.as_str()) {
            return Err(set_file.error(format!(
                "ADK eval set: two cases with the eval id `{}` (a suite's scenarios need distinct ids)",
                c.id
            )));
        }
        // Each case's recorded run becomes the transcript `<id>.yaml`, a trial name.
        if let Some(why) = trial_name_problem(&c.id, crate::harness::RESERVED_TRANSCRIPTS) {
            return Err(set_file.error(format!("ADK eval set: eval id `{}`: {why}", c.id)));
        }
        if c.invocations.is_empty() {
            skipped.push(format!("{}: no invocations", c.id));
            continue;
        }
        scenarios.push(ScenarioDoc {
            id: c.id.clone(),
            title: Some(format!("ADK eval case `{}` of eval set `{}`", c.id, set.id)),
            turns: c
                .invocations
                .iter()
                .map(|inv| TurnDoc {
                    prompt: inv.prompt.clone(),
                    workflow: inv
                        .tool_uses
                        .iter()
                        .map(|u| {
                            StepDoc::new(StepCall::Mcp {
                                tool: u.name.clone(),
                                arguments: u.args.clone(),
                            })
                        })
                        .collect(),
                    expected_response: inv.final_response.clone(),
                    ..TurnDoc::default()
                })
                .collect(),
            ..ScenarioDoc::default()
        });
    }
    let description = match criterion {
        Some(c) => format!(
            "Imported from ADK eval set `{}`; ADK's criterion, tool_trajectory_avg_score ≥ {} ({:?}), is the trajectory gate.",
            set.id, c.threshold, c.match_type
        ),
        None => format!("Imported from ADK eval set `{}`.", set.id),
    };
    let thresholds = criterion.map(|c| crate::harness::ThresholdsDoc {
        trajectory: Some(crate::harness::TrajectoryGateDoc {
            kind: match c.match_type {
                MatchType::Exact => crate::harness::TrajectoryMatch::Exact,
                MatchType::InOrder => crate::harness::TrajectoryMatch::InOrder,
                MatchType::AnyOrder => crate::harness::TrajectoryMatch::AnyOrder,
            },
            min: c.threshold,
        }),
        ..crate::harness::ThresholdsDoc::default()
    });
    let harness_doc = HarnessDoc {
        suite: Some(suite.to_owned()),
        description: Some(description),
        thresholds,
        tools: Some(vec![format!("{suite}.tools.json")]),
        scenarios,
        ..HarnessDoc::default()
    };
    let harness_dir = out.join("harnesses");
    let harness_path = harness_dir.join(format!("{suite}.yaml"));
    let tools_path = harness_dir.join(format!("{suite}.tools.json"));
    let mut writes: Vec<(std::path::PathBuf, String)> = vec![(
        harness_path.clone(),
        harness_doc
            .to_yaml()
            .map_err(|e| SourceError::caused_by(&harness_path, e))?,
    )];
    let same_file = |a: &std::path::Path, b: &std::path::Path| matches!((std::fs::canonicalize(a), std::fs::canonicalize(b)), (Ok(x), Ok(y)) if x == y);
    if !same_file(tools, &tools_path) {
        // The spec as captured, byte for byte (it loaded above).
        let text = std::fs::read_to_string(tools).map_err(|e| SourceError::io(tools, e))?;
        writes.push((tools_path, text));
    }
    let mut transcripts = Vec::new();
    if let Some(recorded) = recorded {
        let rec_file = SourceFile::read(recorded)?;
        let runs = read_eval_set(&rec_file)?;
        let mut seen = std::collections::HashSet::new();
        for run in &runs.cases {
            if !seen.insert(run.id.as_str()) {
                return Err(rec_file.error(format!(
                    "ADK eval set: two recorded cases with the eval id `{}`",
                    run.id
                )));
            }
            let Some(case) = set.cases.iter().find(|c| c.id == run.id) else {
                return Err(rec_file.error(format!(
                    "ADK eval set: the recorded case `{}` is no case of eval set `{}`",
                    run.id, set.id
                )));
            };
            if case.invocations.is_empty() {
                continue;
            }
            let doc = TranscriptDoc {
                scenario: Some(run.id.clone()),
                prompt: None,
                agent: None,
                note: Some(format!(
                    "imported from {} (ADK eval set `{}`)",
                    recorded.display(),
                    runs.id
                )),
                label: LabelDoc::default(),
                body: TranscriptBody::Turns {
                    turns: run
                        .invocations
                        .iter()
                        .map(|inv| TranscriptTurnDoc {
                            prompt: Some(inv.prompt.clone()),
                            calls: inv
                                .tool_uses
                                .iter()
                                .map(|u| CallDoc {
                                    tool: u.name.clone(),
                                    arguments: u.args.clone(),
                                    id: u.id.clone(),
                                    output: u.response.as_ref().map(output_of),
                                })
                                .collect(),
                            reply: inv.final_response.clone(),
                        })
                        .collect(),
                },
            };
            let path = out
                .join("transcripts")
                .join(suite)
                .join(format!("{}.yaml", run.id));
            let text = doc
                .to_yaml()
                .map_err(|e| SourceError::caused_by(&path, e))?;
            transcripts.push(path.clone());
            writes.push((path, text));
        }
    }
    // One writer for every file (issue 32, item 2): no link out of `out` followed, nothing
    // replaced without `force`, all staged before any is moved into place.
    let mut dir = crate::source::OutDir::new(out, force);
    for (p, text) in writes {
        dir.add(p, text)?;
    }
    dir.commit()?;
    Ok(AdkImport {
        harness: harness_path,
        transcripts,
        skipped,
    })
}
