//! `agent-seer generate`: the paper's four stages, from a tool spec to a harness.

use std::io::Write;
use std::path::PathBuf;

use agent_seer::check::Suite;
use agent_seer::generate::scenarios::{GeneratedScenario, Plan};
use agent_seer::generate::{Generator, StageCounts, mocks, write};
use agent_seer::ground::{self, JobError};
use agent_seer::harness::{Grounding, Harness};
use agent_seer::lint::Linter;
use agent_seer::llm::{Client, LlmConfig};
use serde_json::{Value, json};

use super::Outcome;

#[derive(clap::Args, Debug)]
pub struct Args {
    /// The tool spec and capability matrices (their facts go into the prompts and the checks).
    #[command(flatten)]
    spec: super::SpecArgs,
    /// Seed outputs (`{"samples": [{"tool", "result"}]}`) to ground the mock outputs.
    #[arg(long)]
    seed_outputs: Option<PathBuf>,
    /// The suite name (file names follow it).
    #[arg(long)]
    suite: String,
    /// Output directory for `<suite>.yaml`, `<suite>.tools.json` and copies of the matrices.
    #[arg(short, long)]
    output: PathBuf,
    /// Overwrite files in the output directory that the run did not write (without it, an
    /// existing harness, or a tools or matrix file with other contents, is refused before
    /// any model is asked).
    #[arg(long)]
    force: bool,
    /// The writing model, `provider:model`.
    #[arg(long, env = "AGENT_SEER_GENERATOR")]
    llm: String,
    /// Model calls in flight at once: each stage's independent records (the tools, a coverage
    /// round's batches, the scenarios) run concurrently up to it; the harness and the report
    /// are the same at any value. Default: `AGENT_SEER_LLM_CONCURRENCY`, else 4.
    #[arg(long, value_name = "N", value_parser = parse_concurrency)]
    concurrency: Option<usize>,
    /// Keep only scenarios whose oracle passes and whose mutants fail.
    #[arg(long)]
    verify: bool,
    #[arg(long, default_value_t = 3)]
    simple: usize,
    #[arg(long, default_value_t = 3)]
    complex: usize,
    #[arg(long, default_value_t = 5)]
    rounds: usize,
    #[arg(long, default_value_t = 12)]
    batch: usize,
    /// With a server (`-- SERVER…` or `--url`): real answers instead of the model's mocks. Each
    /// scenario's oracle runs against a fresh server, as `agent-seer ground` runs it (loopback
    /// only, `--setup` first), and its answers become the mocks with `grounding: high`; a
    /// scenario the server refuses (a JSON-RPC error, `isError: true`, or an error text the
    /// matrices or the common shapes name) is dropped and counted under the report's `ground`
    /// stage.
    #[command(flatten)]
    server: super::mcp::Target,
    /// With a server: a shell command that prepares each scenario's fresh folder (as `ground
    /// --setup`).
    #[arg(long, value_name = "CMD")]
    setup: Option<String>,
    /// With a server: `loopback` (a network namespace with only loopback) or `inherit`.
    #[arg(long, value_enum, default_value_t)]
    network: super::ground::Network,
}

/// `--concurrency`: a count of 1 or more (0 would let no call through).
fn parse_concurrency(s: &str) -> Result<usize, String> {
    match s.parse::<usize>() {
        Ok(0) => Err("0 lets no model call through; give 1 or more".into()),
        Ok(n) => Ok(n),
        Err(e) => Err(format!("{e}; give a count of 1 or more")),
    }
}

pub fn run(args: Args, out: &mut dyn Write) -> anyhow::Result<Outcome> {
    let (spec, caps) = args.spec.load()?;
    // The server's own JSON goes beside the harness, as captured (ToolSet normalises it).
    let raw = agent_seer::source::SourceFile::read(args.spec.spec_path())?;
    let tools_json: Value = serde_json::from_str(&raw.text).map_err(|e| raw.json_error(&e))?;
    // Where the files go is checked before a model is paid: nothing is written over a file
    // the user wrote, nor outside `-o`.
    let output = write::Output::new(
        &args.output,
        &args.suite,
        &tools_json,
        args.spec.spec_path(),
        args.spec.caps_paths(),
        args.force,
    )?;
    let linter = Linter::new(&spec, caps.clone()).map_err(|e| match e.in_file(&spec) {
        Some(located) => anyhow::Error::from(located),
        None => e.into(),
    })?;
    let seeds = match &args.seed_outputs {
        Some(p) => {
            let file = agent_seer::source::SourceFile::read(p)?;
            mocks::load_seeds(&serde_json::from_str(&file.text).map_err(|e| file.json_error(&e))?)
        }
        None => mocks::Seeds::new(),
    };
    let layout = super::project_layout(None)?;
    let mut config = LlmConfig::from_env(&args.llm, layout.llm_cache.clone())?;
    if let Some(n) = args.concurrency {
        config.concurrency = n;
    }
    let client = Client::new(config)?;
    let plan = Plan {
        simple: args.simple,
        complex: args.complex,
        rounds: args.rounds,
        batch: args.batch,
    };
    let rt = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()?;
    let progress = std::sync::Arc::new(super::output::Progress::new(false, true));
    let mut g = Generator::new(&client, &spec, &caps);
    g.progress = Some(agent_seer::report::Progress(progress.callback()));
    let grounded = !args.server.command.is_empty() || args.server.url.is_some();
    let generated = rt.block_on(async {
        let tools = g.interpret().await?;
        let (scenarios, coverage) = g.scenarios(&tools, &linter, plan).await?;
        let mocked = if grounded {
            None
        } else {
            Some(g.mocks(scenarios.clone(), &linter, &seeds).await?)
        };
        Ok::<_, agent_seer::llm::LlmError>((scenarios, mocked, coverage))
    });
    let (scenarios, mocked, coverage) = match generated {
        Ok(x) => x,
        Err(e) => {
            progress.finish();
            return Err(e.into());
        }
    };
    let mocked = match mocked {
        Some(m) => m,
        None => {
            let (m, counts) = ground_scenarios(&args, &output, &linter, scenarios)?;
            g.report.stages.insert("ground", counts);
            m
        }
    };
    let expansions = rt.block_on(g.expand(&mocked));
    progress.finish();
    let expansions = expansions?;
    // The harness references its own copies of the tools and matrices, staged beside it and
    // moved into place only when it holds a scenario.
    let doc = write::harness(
        &args.suite,
        &output.tools_file(),
        &output.cap_names(),
        &mocked,
        &expansions,
    )?;
    let staged = output.stage(&doc)?;
    let mut verified = None;
    let mut kept = mocked.len();
    if args.verify {
        let suite = Suite::load(&staged.harness())?;
        let (keep, dropped) = write::verify(&suite);
        let mut doc = doc;
        doc.scenarios.retain(|s| keep.contains(&s.id));
        staged.rewrite(&doc)?;
        kept = keep.len();
        verified = Some(json!({"kept": keep, "dropped": dropped}));
    }
    // A harness with nothing in it is no success, and replaces nothing.
    let path = if kept > 0 {
        Some(staged.commit()?)
    } else {
        drop(staged);
        None
    };
    let tiers = |g: Grounding| {
        mocked
            .iter()
            .flat_map(|m| &m.grounding)
            .filter(|x| **x == g)
            .count()
    };

    let report = json!({
        "harness": path,
        "scenarios": mocked.len(),
        "tiers": {
            "simple": mocked.iter().filter(|m| m.scenario.tier == agent_seer::harness::Tier::Simple).count(),
            "complex": mocked.iter().filter(|m| m.scenario.tier == agent_seer::harness::Tier::Complex).count(),
        },
        "multi_turn": expansions.iter().filter(|e| e.is_some()).count(),
        "coverage": coverage,
        "grounding": {"high": tiers(Grounding::High), "medium": tiers(Grounding::Medium), "low": tiers(Grounding::Low)},
        "stages": g.report.stages,
        "verify": verified,
        "ledger": client.ledger().entries(),
    });
    writeln!(out, "{}", serde_json::to_string_pretty(&report)?)?;
    // A harness with nothing in it is no success: the report says what each stage dropped.
    if kept == 0 {
        let why = if mocked.is_empty() {
            "no scenario survived generation"
        } else {
            "--verify kept no scenario"
        };
        eprintln!(
            "error: nothing written to {}: {why}; the report's `stages` and `verify` say what was dropped and why",
            output.harness_path().display()
        );
        return Ok(Outcome::Findings);
    }
    Ok(Outcome::Clean)
}

/// The scenarios grounded in the real server: each one's oracle run against a fresh server (a
/// harness of the scenarios is staged for `ground` to plan from), its answers taken as the
/// mocks, `grounding: high`. A scenario the server refuses — a JSON-RPC error, or an answer
/// the linter reads as a refusal ([`Linter::refuses`]: `isError`, the matrix's `errors:`, the
/// common error texts) — is dropped with why; a server that does not start ends the run
/// (exit 3).
fn ground_scenarios(
    args: &Args,
    output: &write::Output,
    linter: &Linter,
    scenarios: Vec<GeneratedScenario>,
) -> anyhow::Result<(Vec<mocks::Mocked>, StageCounts)> {
    let mut mocked: Vec<mocks::Mocked> = scenarios
        .into_iter()
        .map(|s| {
            let n = s.agent_workflow.len();
            mocks::Mocked {
                scenario: s,
                outputs: vec![json!({"content": []}); n],
                grounding: vec![Grounding::High; n],
                expected_response: String::new(),
            }
        })
        .collect();
    let mut counts = StageCounts::default();
    if mocked.is_empty() {
        return Ok((mocked, counts));
    }
    let doc = write::harness(
        &args.suite,
        &output.tools_file(),
        &output.cap_names(),
        &mocked,
        &[],
    )?;
    let staged = output.stage(&doc)?;
    let harness = Harness::load(&staged.harness())?;
    let (jobs, _) = ground::plan(&harness, &[]);
    let launch = super::ground::launch(&args.server, args.setup.clone(), args.network, &harness)?;
    let width = std::thread::available_parallelism().map_or(1, std::num::NonZeroUsize::get);
    let results = ground::run_all(&jobs, &launch, &args.server.command, width)?;
    drop(staged);
    let index: std::collections::HashMap<&str, usize> = doc
        .scenarios
        .iter()
        .enumerate()
        .map(|(i, s)| (s.id.as_str(), i))
        .collect();
    let mut refused: Vec<Option<String>> = vec![None; mocked.len()];
    for (job, result) in jobs.iter().zip(results) {
        let i = *index.get(job.scenario.as_str()).ok_or_else(|| {
            anyhow::anyhow!("ground planned an unknown scenario `{}`", job.scenario)
        })?;
        let answers = match result {
            Ok(answers) => answers,
            Err(e @ JobError::Server { .. }) => return Err(e.into()),
            Err(e) => {
                refused[i] = Some(e.to_string());
                continue;
            }
        };
        for (k, (target, answer)) in job.calls.iter().zip(answers).enumerate() {
            let why = match &answer {
                Err(e) => Some(format!("refused: {e}")),
                Ok(v) if linter.refuses(&target.tool, v) => {
                    Some(format!("answered an error: {}", ground::one_line(v)))
                }
                Ok(_) => None,
            };
            if let Some(why) = why {
                refused[i] = Some(format!("{}: the server {why}", target.label));
                break;
            }
            if let (Ok(v), Some(slot)) = (answer, mocked[i].outputs.get_mut(k)) {
                *slot = v;
            }
        }
    }
    let mut kept = Vec::new();
    for (m, why) in mocked.into_iter().zip(refused) {
        match why {
            Some(why) => counts.dropped.push(why),
            None => {
                counts.produced += 1;
                kept.push(m);
            }
        }
    }
    Ok((kept, counts))
}
