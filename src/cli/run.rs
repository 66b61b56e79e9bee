//! `agent-seer run <harness> --agent provider:model`: drive a live agent through the suite,
//! write its transcripts, grade them.

use std::io::Write;
use std::path::PathBuf;

use agent_seer::agent::{self, Options};
use agent_seer::check::Suite;
use agent_seer::llm::{Client, LlmConfig, Sampling};
use agent_seer::report::{LiveRecord, Report, TranscriptRecord, TrialRecord, process_run_id};
use anyhow::Context;

use super::{Format, Outcome};

#[derive(clap::Args, Debug)]
pub struct Args {
    /// The harness to run.
    harness: PathBuf,
    /// The agent under test, `provider:model`: `openai:MODEL` (chat completions, any
    /// OpenAI-compatible server), `openai:responses:MODEL` (the Responses API),
    /// `anthropic:MODEL` (Messages), `gemini:MODEL` or `vertex:MODEL`; the provider's key and
    /// base URL come from the environment as for the judge.
    #[arg(long)]
    agent: String,
    /// The agent's system prompt [default: a short instruction to use the tools, then
    /// reply]; `--system ''` sends none.
    #[arg(long, value_name = "TEXT", conflicts_with = "system_file")]
    system: Option<String>,
    /// The agent's system prompt, read from FILE.
    #[arg(long, value_name = "FILE")]
    system_file: Option<PathBuf>,
    /// The answer's token limit per step: `max_tokens` (chat completions on a non-OpenAI base
    /// URL, Anthropic), `max_completion_tokens` (api.openai.com, *.openai.azure.com),
    /// `max_output_tokens` (Responses), `maxOutputTokens` (Gemini). Not sent when not given,
    /// except to Anthropic, which requires one: 4096 then.
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u32).range(1..))]
    max_tokens: Option<u32>,
    /// Sampling temperature, 0 to 2 (Anthropic: 0 to 1). Not sent when not given.
    #[arg(long, value_name = "T", value_parser = temperature)]
    temperature: Option<f64>,
    /// Sampling seed, 0 to 2147483647, for chat completions and Gemini; Anthropic and the
    /// Responses API have no seed, so it is refused for them. Not sent when not given.
    #[arg(
        long,
        value_name = "N",
        value_parser = clap::value_parser!(u32).range(0..=i64::from(i32::MAX))
    )]
    seed: Option<u32>,
    /// Runs per scenario (pass^k and pass@k are reported).
    #[arg(long, default_value_t = 1)]
    repeat: usize,
    /// Rounds of tool calls per turn before the agent is stopped.
    #[arg(long, default_value_t = 8)]
    steps: usize,
    /// Where to write transcripts. Default: target/agent-seer/run/<suite>/.
    #[arg(short, long)]
    output: Option<PathBuf>,
    #[arg(long, value_enum, default_value_t)]
    format: Format,
    #[command(flatten)]
    files: super::output::ReportFiles,
}

/// A temperature: a finite number from 0 to 2 (the provider's own range is checked later).
fn temperature(s: &str) -> Result<f64, String> {
    let t: f64 = s.parse().map_err(|e| format!("{e}"))?;
    if t.is_finite() && (0.0..=2.0).contains(&t) {
        Ok(t)
    } else {
        Err("a temperature is a number from 0 to 2".into())
    }
}

pub fn run(args: Args, out: &mut dyn Write) -> anyhow::Result<Outcome> {
    let suite = Suite::load(&args.harness)?;
    let layout = super::project_layout(None)?;
    let mut config = LlmConfig::from_env(&args.agent, layout.llm_cache.clone())?;
    let sampling = Sampling {
        max_tokens: args.max_tokens,
        temperature: args.temperature,
        seed: args.seed,
    };
    // Before any request: a seed Anthropic cannot take is a usage error, not a failed run.
    sampling.check(&config.provider)?;
    let system = match (&args.system, &args.system_file) {
        (Some(text), _) => text.clone(),
        (None, Some(file)) => std::fs::read_to_string(file)
            .with_context(|| format!("--system-file {}", file.display()))?,
        (None, None) => agent::DEFAULT_SYSTEM.to_owned(),
    };
    // The agent under test answers live; its calls are not cached.
    config.mode = agent_seer::llm::CacheMode::Live;
    let client = Client::new(config)?;
    let out_dir = args
        .output
        .unwrap_or_else(|| PathBuf::from("target/agent-seer/run").join(&suite.harness.suite));
    let progress = std::sync::Arc::new(super::output::Progress::new(false, true));
    let opts = Options {
        step_budget: args.steps,
        repeat: args.repeat,
        out_dir: out_dir.clone(),
        agent: args.agent.clone(),
        progress: Some(agent_seer::report::Progress(progress.callback())),
        system,
        sampling,
    };
    let rt = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()?;
    let results = rt.block_on(agent::run_suite(&client, &suite, &opts));
    progress.finish();
    let results = results?;
    // The judge too, when one is configured: its TC per scenario (mean over runs).
    let judged: Vec<Option<f64>> = match std::env::var("AGENT_SEER_JUDGE")
        .ok()
        .filter(|s| !s.is_empty())
    {
        None => vec![None; results.len()],
        Some(spec) => {
            let judge_client = Client::new(LlmConfig::from_env(&spec, layout.llm_cache.clone())?)?;
            let shared = std::sync::Arc::new(Suite::load(&args.harness)?);
            let mut out = Vec::new();
            for r in &results {
                let jobs = r
                    .runs
                    .iter()
                    .map(|run| {
                        let transcript = agent_seer::harness::Transcript::load(&run.transcript)?;
                        Ok(agent_seer::judge::Job {
                            suite: shared.clone(),
                            transcript,
                            evaluation: run.evaluation.clone(),
                        })
                    })
                    .collect::<anyhow::Result<Vec<_>>>()?;
                let scores = rt.block_on(agent_seer::judge::judge_many(
                    &judge_client,
                    jobs,
                    agent_seer::judge::Mode::Enriched,
                ));
                let tcs = scores
                    .into_iter()
                    .map(|s| s.map(|j| j.score.tc))
                    .collect::<Result<Vec<_>, _>>()?;
                out.push((!tcs.is_empty()).then(|| tcs.iter().sum::<f64>() / tcs.len() as f64));
            }
            out
        }
    };
    let all_pass = results.iter().all(|r| r.pass_all());
    // The same run report as the harness's: one live trial per run, saved under target/.
    let mut records = Vec::new();
    for r in &results {
        for (k, run) in r.runs.iter().enumerate() {
            let id = agent_seer::harness::TrialId::live(&suite.harness.suite, &r.scenario, k + 1);
            let ev = &run.evaluation;
            let status = match ev.verdict {
                agent_seer::check::Verdict::Pass => agent_seer::check::Status::Passed,
                agent_seer::check::Verdict::Fail => agent_seer::check::Status::Failed,
            };
            let message = (status == agent_seer::check::Status::Failed).then(|| ev.why_failed());
            let mut rec = TrialRecord::new(&id, status, message);
            rec.transcript = Some(TranscriptRecord::new(&run.transcript, ev, &ev.label, None));
            rec.live = Some(LiveRecord {
                agent: args.agent.clone(),
                scenario: r.scenario.clone(),
                run: k + 1,
                repeat: args.repeat.max(1),
                stopped_at_budget: run.stopped_at_budget,
            });
            records.push(rec);
        }
    }
    let report = Report::new(process_run_id(), records).with_ledger(client.ledger().entries());
    super::output::save_run(&layout.root, &report)?;
    let summary = report.summary();
    args.files.write(report.view(&summary))?;
    match args.format {
        Format::Json => {
            let rows: Vec<_> = results
                .iter()
                .zip(&judged)
                .map(|(r, j)| {
                    serde_json::json!({"scenario": r.scenario, "runs": r.runs, "passes": r.passes(), "pass_all": r.pass_all(),
                        "pass_any": r.pass_any(), "flaky": r.flaky(), "mean_tc": r.mean_tc(), "judge_tc": j})
                })
                .collect();
            writeln!(
                out,
                "{}",
                serde_json::to_string_pretty(
                    &serde_json::json!({"agent": args.agent, "suite": suite.harness.suite, "scenarios": rows, "ledger": client.ledger().entries()})
                )?
            )?;
        }
        Format::Human => {
            let k = args.repeat.max(1);
            let w = results
                .iter()
                .map(|r| r.scenario.len())
                .max()
                .unwrap_or(8)
                .max(8);
            writeln!(
                out,
                "{} on {} ({k} run{} per scenario), transcripts in {}",
                args.agent,
                suite.harness.suite,
                if k == 1 { "" } else { "s" },
                out_dir.display()
            )?;
            writeln!(
                out,
                "{:w$}  passes  pass^{k}  pass@{k}  mean TC  notes",
                "scenario"
            )?;
            for (r, judge_tc) in results.iter().zip(&judged) {
                let tc = r.mean_tc().map_or("-".to_owned(), |t| format!("{t:.3}"));
                let mut notes: Vec<String> = Vec::new();
                if let Some(j) = judge_tc {
                    notes.push(format!("judge TC {j:.3}"));
                }
                if r.flaky() {
                    notes.push("flaky".into());
                }
                if r.runs.iter().any(|x| x.stopped_at_budget) {
                    notes.push(format!("stopped at the step budget ({})", args.steps));
                }
                let first_error = r
                    .runs
                    .iter()
                    .flat_map(|x| &x.evaluation.findings)
                    .find(|f| f.severity == agent_seer::finding::Severity::Error);
                if let Some(f) = first_error {
                    notes.push(format!("{}: {}", f.code, f.message));
                }
                let yn = |b: bool| if b { "yes" } else { "no" };
                writeln!(
                    out,
                    "{:w$}  {:>6}  {:>6}  {:>6}  {:>7}  {}",
                    r.scenario,
                    format!("{}/{}", r.passes(), r.runs.len()),
                    yn(r.pass_all()),
                    yn(r.pass_any()),
                    tc,
                    notes.join("; ")
                )?;
            }
            for (key, e) in client.ledger().entries() {
                writeln!(
                    out,
                    "ledger {key}: {} calls, {} input + {} output tokens",
                    e.calls, e.input_tokens, e.output_tokens
                )?;
            }
        }
    }
    Ok(if all_pass {
        Outcome::Clean
    } else {
        Outcome::Findings
    })
}
