//! `agent-seer import bfcl <data-dir> -o <dir>`: BFCL's AST categories as agent-seer suites.
//! `agent-seer import trace FILE… --suite S -o transcripts/S/`: recorded runs (OpenAI,
//! Anthropic, Gemini, MCP JSON-RPC, OTLP) as editable YAML transcripts.

use std::io::Write;
use std::path::PathBuf;

use agent_seer::bfcl::{self, EnumMode, IntegerMode, Options, StringMode};
use clap::ValueEnum;

use super::Outcome;

#[derive(clap::Subcommand, Debug)]
pub enum Source {
    /// The Berkeley Function Calling Leaderboard's data (`bfcl_eval/data/` of the `bfcl-eval`
    /// package: BFCL_v4_*.json and possible_answer/).
    Bfcl(BfclArgs),
    /// Recorded runs — OpenAI Chat Completions or Responses logs, Anthropic Messages, Gemini
    /// contents, MCP JSON-RPC logs, OpenTelemetry GenAI traces (OTLP JSON), provider HTTP logs
    /// and VCR cassettes, OpenAI Agents SDK traces — as YAML transcripts of a suite, one per
    /// run (per trace, or per stitched run, for OTLP), to edit and bless.
    Trace(TraceArgs),
    /// A Google ADK eval set (`*.evalset.json`, or the legacy `*.test.json`) as a suite: each
    /// eval case a scenario, its expected tool uses the workflow; `--recorded` (the agent's
    /// actual invocations, same eval ids) as its transcripts.
    Adk(AdkArgs),
}

#[derive(clap::Args, Debug)]
pub struct AdkArgs {
    /// The eval set.
    evalset: PathBuf,
    /// An eval set of the agent's recorded invocations (adk web's "add session to eval set").
    #[arg(long)]
    recorded: Option<PathBuf>,
    /// The agent's tool spec (a tools/list capture), copied beside the harness.
    #[arg(long)]
    tools: PathBuf,
    /// The criteria (`test_config.json`); default: the one beside the eval set, if any.
    #[arg(long)]
    config: Option<PathBuf>,
    /// The suite's name.
    #[arg(long)]
    suite: String,
    /// The project to write `harnesses/` and `transcripts/<suite>/` into.
    #[arg(short, long)]
    output: PathBuf,
    /// Replace files that exist.
    #[arg(long)]
    force: bool,
}

fn adk(args: AdkArgs, out: &mut dyn Write) -> anyhow::Result<Outcome> {
    use agent_seer::ingest::adk;
    let config = args.config.clone().or_else(|| {
        let beside = args.evalset.with_file_name("test_config.json");
        beside.is_file().then_some(beside)
    });
    let criterion = match &config {
        Some(p) => adk::read_criterion(&agent_seer::source::SourceFile::read(p)?)?,
        None => None,
    };
    let done = adk::import(
        &args.evalset,
        args.recorded.as_deref(),
        &args.tools,
        criterion,
        &args.suite,
        &args.output,
        args.force,
    )?;
    writeln!(out, "wrote {}", done.harness.display())?;
    for s in &done.skipped {
        writeln!(out, "skipped {s}")?;
    }
    writeln!(
        out,
        "wrote {} transcript(s) under {}",
        done.transcripts.len(),
        args.output.join("transcripts").join(&args.suite).display()
    )?;
    Ok(Outcome::Clean)
}

#[derive(clap::Args, Debug)]
pub struct TraceArgs {
    /// The recorded runs (JSON or JSON Lines; the format is told from the content).
    #[arg(required = true)]
    files: Vec<PathBuf>,
    /// The suite whose scenarios they answer (`harnesses/<suite>.yaml`).
    #[arg(long)]
    suite: String,
    /// The scenario of every run; default: each run's label file, else its first prompt's.
    #[arg(long)]
    scenario: Option<String>,
    /// Where to write the transcripts (usually `transcripts/<suite>/`).
    #[arg(short, long)]
    output: PathBuf,
    /// Replace transcripts that exist.
    #[arg(long)]
    force: bool,
    /// The project root. Default: AGENT_SEER_ROOT, else the nearest directory up from here
    /// with a harnesses/ folder.
    #[arg(long)]
    root: Option<PathBuf>,
}

fn trace(args: TraceArgs, out: &mut dyn Write) -> anyhow::Result<Outcome> {
    agent_seer::source::file_name(&args.suite).map_err(|e| anyhow::anyhow!("--suite {e}"))?;
    let layout = super::project_layout(args.root.clone())?;
    let harness = layout.harness_file(&args.suite).ok_or_else(|| {
        anyhow::anyhow!(
            "--suite {}: no harness {}",
            args.suite,
            layout
                .harnesses
                .join(format!("{}.yaml", args.suite))
                .display()
        )
    })?;
    let harness = agent_seer::harness::Harness::load(&harness)?;
    let written = agent_seer::ingest::import(
        &args.files,
        &harness,
        args.scenario.as_deref(),
        &args.output,
        args.force,
    )?;
    for i in &written {
        writeln!(
            out,
            "{} -> {} (scenario `{}`, {} call(s), {})",
            i.from.display(),
            i.path.display(),
            i.scenario,
            i.calls,
            i.format.name()
        )?;
    }
    writeln!(
        out,
        "wrote {} transcript(s) under {}",
        written.len(),
        args.output.display()
    )?;
    Ok(Outcome::Clean)
}

#[derive(Copy, Clone, Debug, ValueEnum)]
pub enum Enums {
    Check,
    Ignore,
}

#[derive(Copy, Clone, Debug, ValueEnum)]
pub enum Strings {
    Exact,
    Normalized,
}

#[derive(Copy, Clone, Debug, ValueEnum)]
pub enum Integers {
    JsonSchema,
    Strict,
}

#[derive(clap::Args, Debug)]
pub struct BfclArgs {
    /// The data directory.
    data: PathBuf,
    /// Where to write `harnesses/` (and `transcripts/` with --answers).
    #[arg(short, long)]
    output: PathBuf,
    /// Categories to import (default: simple, multiple, parallel, parallel_multiple).
    #[arg(long = "category", value_name = "NAME")]
    categories: Vec<String>,
    /// `check` JSON Schema enums (ours) or `ignore` them (BFCL's).
    #[arg(long = "enum", value_enum, default_value = "check")]
    enums: Enums,
    /// Compare strings `exact`ly (ours) or `normalized` (BFCL's standardisation).
    #[arg(long, value_enum, default_value = "exact")]
    strings: Strings,
    /// `json-schema`: 3.0 is an integer (ours); `strict`: it is not (BFCL's).
    #[arg(long, value_enum, default_value = "json-schema")]
    integers: Integers,
    /// Every switch as BFCL has it (--enum ignore --strings normalized --integers strict).
    #[arg(long, conflicts_with_all = ["enums", "strings", "integers"])]
    bfcl_compatible: bool,
    /// Also write each entry's first possible answer as a correct transcript.
    #[arg(long)]
    answers: bool,
    /// Replace files that exist (else nothing is written).
    #[arg(long)]
    force: bool,
}

pub fn run(source: Source, out: &mut dyn Write) -> anyhow::Result<Outcome> {
    let args = match source {
        Source::Bfcl(args) => args,
        Source::Trace(args) => return trace(args, out),
        Source::Adk(args) => return adk(args, out),
    };
    let mut opts = if args.bfcl_compatible {
        Options::bfcl_compatible()
    } else {
        Options {
            enums: match args.enums {
                Enums::Check => EnumMode::Check,
                Enums::Ignore => EnumMode::Ignore,
            },
            strings: match args.strings {
                Strings::Exact => StringMode::Exact,
                Strings::Normalized => StringMode::Normalized,
            },
            integers: match args.integers {
                Integers::JsonSchema => IntegerMode::JsonSchema,
                Integers::Strict => IntegerMode::Strict,
            },
            answers: false,
            force: false,
        }
    };
    opts.answers = args.answers;
    opts.force = args.force;
    let categories: Vec<&str> = if args.categories.is_empty() {
        bfcl::CATEGORIES.to_vec()
    } else {
        args.categories.iter().map(String::as_str).collect()
    };
    let report = bfcl::import(&args.data, &args.output, &categories, opts)?;
    for (suite, n) in &report.suites {
        writeln!(out, "{suite}: {n} scenario(s)")?;
    }
    for s in &report.skipped {
        writeln!(out, "skipped {s}")?;
    }
    writeln!(
        out,
        "wrote {} file(s) under {}; {} entr{} skipped",
        report.files.len(),
        args.output.display(),
        report.skipped.len(),
        if report.skipped.len() == 1 {
            "y"
        } else {
            "ies"
        }
    )?;
    Ok(Outcome::Clean)
}
