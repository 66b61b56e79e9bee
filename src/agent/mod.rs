//! The live runner: drive an agent under test through each scenario's turns over a chat API
//! with tools (OpenAI-compatible chat completions, the OpenAI Responses API, Anthropic
//! Messages, Gemini / Vertex; the harness's tools declared exactly as captured, see
//! `llm::chat`) with the options' system prompt and sampling settings, answer its tool
//! calls with the harness's mock outputs (the same matching as `serve`), keep its replies in
//! the conversation for the next turn, stop when it replies without calls or at the step
//! budget, write one transcript per run, and grade it with the deterministic stack. With
//! repeats, pass^k (every run passes) and pass@k (some run passes) per scenario, and the
//! flaky ones named. Transcripts are redacted before they are written: a configured key the
//! model quotes becomes `[redacted]`.
//!
//! The main entry is [`run_suite`].

use std::path::{Path, PathBuf};

use serde::Serialize;

use crate::check::{Evaluation, Suite, Verdict, evaluate};
use crate::finding::{Code, Finding};
use crate::harness::{
    CallDoc, LabelDoc, Scenario, Transcript, TranscriptBody, TranscriptDoc, TranscriptTurnDoc,
    WriteError, sent_arguments,
};
use crate::llm::{ChatMessage, Client, LlmError, Sampling, ToolDecl};
use crate::mcp::server::{Recorded, answer_call};
use crate::source::SourceError;

mod text_calls;

/// How to run.
#[derive(Clone, Debug)]
pub struct Options {
    /// Rounds of tool calls allowed per turn before the runner stops the agent.
    pub step_budget: usize,
    /// Runs per scenario (0 counts as 1); above 1 the transcripts get `-r<k>` names.
    pub repeat: usize,
    /// Where transcripts are written (`<scenario>.yaml`, or `<scenario>-r<k>.yaml`).
    pub out_dir: PathBuf,
    /// The agent's name in the transcripts (`provider:model`).
    pub agent: String,
    /// Told of each finished run.
    pub progress: Option<crate::check::Progress>,
    /// The agent's system prompt; empty sends none. [`DEFAULT_SYSTEM`] by default.
    pub system: String,
    /// Token limit, temperature and seed of every step; unset ones are not sent.
    pub sampling: Sampling,
}

impl Default for Options {
    /// 8 rounds per turn, one run, [`DEFAULT_SYSTEM`], the provider's sampling defaults,
    /// transcripts in `target/agent-seer/run/`.
    fn default() -> Self {
        Self {
            step_budget: 8,
            repeat: 1,
            out_dir: PathBuf::from("target/agent-seer/run"),
            agent: String::new(),
            progress: None,
            system: DEFAULT_SYSTEM.to_owned(),
            sampling: Sampling::default(),
        }
    }
}

/// Why a run could not be completed (the agent's API failing, a file not written).
#[derive(Debug, thiserror::Error)]
pub enum RunError {
    /// A chat call failed after its retries.
    // The cause is the source, not part of this message: a report of the chain (`{:#}`)
    // would say it twice.
    #[error("scenario `{scenario}`: the agent's API failed")]
    Llm {
        /// The scenario's id.
        scenario: String,
        /// The client's error.
        #[source]
        source: LlmError,
    },
    /// A transcript could not be written, read back or evaluated.
    #[error(transparent)]
    Source(#[from] SourceError),
    /// A transcript could not be rendered as YAML.
    #[error(transparent)]
    Write(#[from] WriteError),
}

/// One run of one scenario.
#[derive(Clone, Debug, Serialize)]
pub struct Run {
    /// The transcript written for this run.
    pub transcript: PathBuf,
    /// Its deterministic evaluation; a run stopped at the budget also carries a
    /// [`Code::StepBudget`] finding and fails.
    pub evaluation: Evaluation,
    /// The agent was still calling tools after [`Options::step_budget`] rounds in a turn.
    pub stopped_at_budget: bool,
}

/// Every run of one scenario.
#[derive(Clone, Debug, Serialize)]
pub struct ScenarioRuns {
    /// The scenario's id.
    pub scenario: String,
    /// Its runs, in order (`-r1`, `-r2`, …).
    pub runs: Vec<Run>,
}

impl ScenarioRuns {
    /// Runs whose verdict is pass.
    pub fn passes(&self) -> usize {
        self.runs
            .iter()
            .filter(|r| r.evaluation.verdict == Verdict::Pass)
            .count()
    }
    /// pass^k: every run passed.
    pub fn pass_all(&self) -> bool {
        self.passes() == self.runs.len()
    }
    /// pass@k: some run passed.
    pub fn pass_any(&self) -> bool {
        self.passes() > 0
    }
    /// Some runs passed and some failed.
    pub fn flaky(&self) -> bool {
        self.pass_any() && !self.pass_all()
    }
    /// The mean TC (0–1) over the runs that have an oracle score; None when none has.
    pub fn mean_tc(&self) -> Option<f64> {
        let v: Vec<f64> = self
            .runs
            .iter()
            .filter_map(|r| r.evaluation.score.as_ref().map(|s| s.tc))
            .collect();
        (!v.is_empty()).then(|| v.iter().sum::<f64>() / v.len() as f64)
    }
}

/// The system prompt an agent gets unless told otherwise (`run --system`).
pub const DEFAULT_SYSTEM: &str = "You are an assistant with tools. Use them to do what the user asks, \
passing values from earlier tool results where they are needed, then reply to the user.";

/// The suite's tools as the chat API's tool declarations: name, description and input
/// schema exactly as captured.
pub(crate) fn tool_decls(suite: &Suite) -> Vec<ToolDecl> {
    suite
        .tools
        .tools()
        .iter()
        .map(|t| ToolDecl {
            name: t.name.clone(),
            description: t.description.clone(),
            parameters: t.input_schema.clone(),
        })
        .collect()
}

/// Runs every scenario of a suite `repeat` times.
pub async fn run_suite(
    client: &Client,
    suite: &Suite,
    opts: &Options,
) -> Result<Vec<ScenarioRuns>, RunError> {
    // Each run's transcript is named for its scenario: every name is checked before the
    // first call, so a scenario id like `../../x` costs nothing and writes nothing.
    for sc in &suite.harness.scenarios {
        if let Err(e) = crate::source::file_name(&sc.id) {
            return Err(suite
                .harness
                .source
                .error_at(
                    sc.location.line,
                    sc.location.column,
                    format!("scenario id {e} (`run` names each transcript by its scenario)"),
                )
                .into());
        }
    }
    let tools = tool_decls(suite);
    let mut out = Vec::new();
    for sc in &suite.harness.scenarios {
        let mut runs = Vec::new();
        for k in 0..opts.repeat.max(1) {
            let name = if opts.repeat > 1 {
                format!("{}-r{}", sc.id, k + 1)
            } else {
                sc.id.clone()
            };
            let path = opts.out_dir.join(format!("{name}.yaml"));
            let stopped = run_once(client, suite, sc, &tools, opts, &path).await?;
            let t = Transcript::load(&path)?;
            let mut evaluation = evaluate(suite, &t)?;
            if stopped {
                let mut f = Finding::new(
                    Code::StepBudget,
                    "",
                    format!(
                        "the agent was still calling tools after {} rounds in a turn; the runner stopped it",
                        opts.step_budget
                    ),
                );
                f.location = Some(t.source.location(1, 1));
                evaluation.findings.push(f);
                evaluation.verdict = Verdict::Fail;
            }
            if let Some(p) = &opts.progress {
                p.tick(&format!(
                    "{} run {}/{}: {}",
                    sc.id,
                    k + 1,
                    opts.repeat.max(1),
                    match evaluation.verdict {
                        Verdict::Pass => "pass",
                        Verdict::Fail => "fail",
                    }
                ));
            }
            runs.push(Run {
                transcript: path,
                evaluation,
                stopped_at_budget: stopped,
            });
        }
        out.push(ScenarioRuns {
            scenario: sc.id.clone(),
            runs,
        });
    }
    Ok(out)
}

/// One conversation; writes the transcript and says whether the step budget stopped it.
async fn run_once(
    client: &Client,
    suite: &Suite,
    sc: &Scenario,
    tools: &[ToolDecl],
    opts: &Options,
    path: &Path,
) -> Result<bool, RunError> {
    let mut messages = Vec::new();
    if !opts.system.is_empty() {
        messages.push(ChatMessage::System(opts.system.clone()));
    }
    let mut turns = Vec::new();
    let mut stopped = false;
    let llm = |source| RunError::Llm {
        scenario: sc.id.clone(),
        source,
    };
    let index = suite.scenario(&sc.id).map_or(0, |(i, _)| i);
    for turn in &sc.turns {
        messages.push(ChatMessage::User(turn.prompt.clone()));
        let mut calls = Vec::new();
        let mut reply = None;
        for step in 0..=opts.step_budget {
            if step == opts.step_budget {
                stopped = true;
                break;
            }
            let mut next = client
                .chat(&messages, tools, &opts.sampling)
                .await
                .map_err(llm)?;
            // A local model's calls written as text (`<tool_call>` tags, a fenced JSON block)
            // are calls: recorded and answered as such, and replayed to it as tool calls.
            if next.calls.is_empty()
                && next.raw.is_none()
                && let Some((calls, rest)) = next
                    .text
                    .as_deref()
                    .and_then(|t| text_calls::parse(t, tools))
            {
                next.calls = calls;
                next.text = rest;
            }
            let done = next.calls.is_empty();
            // The reply stays in the conversation: a later turn's prompt follows it.
            if !done || next.text.is_some() {
                messages.push(ChatMessage::Assistant {
                    text: next.text.clone(),
                    calls: next.calls.clone(),
                    raw: next.raw.clone(),
                });
            }
            if done {
                reply = next.text;
                break;
            }
            for call in &next.calls {
                // The twin's answer, as `serve` gives it: this scenario's steps, and the calls
                // of every turn so far for what outputs produced.
                let mut history: Vec<Vec<Recorded>> = turns
                    .iter()
                    .map(|t: &TranscriptTurnDoc| recorded(&t.calls))
                    .collect();
                history.push(recorded(&calls));
                let answer = answer_call(suite, &[index], &history, &call.name, &call.arguments);
                let content = answer.result.to_string();
                messages.push(ChatMessage::Tool {
                    id: call.id.clone(),
                    name: call.name.clone(),
                    content,
                    is_error: answer.result.get("isError") == Some(&serde_json::Value::Bool(true)),
                });
                calls.push(CallDoc {
                    tool: call.name.clone(),
                    arguments: sent_arguments(&call.arguments),
                    id: None,
                    output: Some(answer.result),
                });
            }
        }
        turns.push(TranscriptTurnDoc {
            prompt: Some(turn.prompt.clone()),
            calls,
            reply,
        });
        if stopped {
            break;
        }
    }
    let doc = TranscriptDoc {
        scenario: Some(sc.id.clone()),
        prompt: None,
        agent: Some(opts.agent.clone()),
        note: Some(if stopped {
            format!("stopped at the step budget ({} rounds)", opts.step_budget)
        } else {
            "recorded by agent-seer run".to_owned()
        }),
        label: LabelDoc::default(),
        body: TranscriptBody::Turns { turns },
    };
    // The model's text and arguments, redacted: a key it quotes is not written.
    let text = doc.to_yaml()?;
    let text = client.redact(&text);
    // Through the one writer (issue 32, item 2): a run replaces its own transcripts in `-o`,
    // never a file a link there leads to outside it.
    let mut out = crate::source::OutDir::new(&opts.out_dir, true);
    out.add(path.to_path_buf(), text.as_bytes())?;
    out.commit()?;
    Ok(stopped)
}

/// A transcript's calls as the twin's history.
fn recorded(calls: &[CallDoc]) -> Vec<Recorded> {
    calls
        .iter()
        .map(|c| Recorded {
            tool: c.tool.clone(),
            arguments: serde_json::Value::Object(c.arguments.clone()),
            output: c.output.clone().unwrap_or(serde_json::Value::Null),
            step: None,
        })
        .collect()
}
