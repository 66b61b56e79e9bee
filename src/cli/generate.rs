//! `agent-seer generate`: the paper's four stages, from a tool spec to a harness.

use std::io::Write;
use std::path::PathBuf;

use agent_seer::check::Suite;
use agent_seer::generate::{Generator, mocks, scenarios::Plan, write};
use agent_seer::harness::Grounding;
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
    let generated = rt.block_on(async {
        let tools = g.interpret().await?;
        let (scenarios, coverage) = g.scenarios(&tools, &linter, plan).await?;
        let mocked = g.mocks(scenarios, &linter, &seeds).await?;
        let expansions = g.expand(&mocked).await?;
        Ok::<_, agent_seer::llm::LlmError>((mocked, expansions, coverage))
    });
    progress.finish();
    let (mocked, expansions, coverage) = generated?;
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
