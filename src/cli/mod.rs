//! The command line: clap verbs resolved into validated settings, then the library's work.
//!
//! Nothing past this module sees clap types (ripgrep's low/high args split): each verb's
//! `run` takes its parsed arguments, checks them, and calls the library. Output goes to the
//! writers it is given, so tests can capture it. Every verb exits with the same contract
//! ([`exit`]): 0 clean, 1 findings or failed trials, 2 bad input or usage (clap's own usage
//! errors exit 2 as well), 3 an LLM provider or MCP server failed.

mod audit;
mod bless;
mod check;
mod diff_spec;
mod generate;
mod ground;
mod import;
mod init;
mod inspect;
mod judge;
mod lint;
mod mcp;
mod mutate;
mod output;
mod report;
mod run;

use std::io::Write;
use std::process::ExitCode;

use clap::{Parser, Subcommand, ValueEnum};

use agent_seer::check::{Failure, HarnessConfig, Status, TrialRecord, plan_runnable};
use agent_seer::harness::{Layout, TrialKind};

/// Grade how AI agents call MCP tools: schema and capability-matrix linting of tool calls, and
/// the deterministic checks of agent transcripts the `cargo test` harness runs.
#[derive(Parser, Debug)]
#[command(name = "agent-seer", version, about, max_term_width = 100)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand, Debug)]
enum Command {
    /// Lint tool calls (JSON Lines, one call a line) against a spec and capability matrices:
    /// a pre-flight guard for any agent loop. One result line per call.
    Lint(lint::Args),
    /// Run the deterministic engines over transcripts the way the harness does, and print
    /// each trial's verdict and per-suite counts.
    Check(check::Args),
    /// Generate a harness from a tool spec with an LLM (the paper's four stages): interpret,
    /// scenarios with a coverage loop, mock outputs, multi-turn expansion; `--verify` keeps
    /// only scenarios that discriminate.
    Generate(generate::Args),
    /// Score transcripts with an LLM judge (the 14 + 5 rubric), through the answer cache.
    Judge(judge::Args),
    /// Score transcripts with two judges and report their agreement (Pearson, Spearman, MAE,
    /// ±0.1 rate, bootstrap 95% CIs) per dimension.
    JudgeAgreement(judge::AgreementArgs),
    /// Certify a judge on labelled transcripts (positive = broken): TPR and TNR with Wilson
    /// lower bounds, Cohen's kappa beside the base rate, Krippendorff's alpha across judges or
    /// repeats, self-consistency, and where it contradicts the linter; exit 1 when below the bar.
    JudgeCertify(judge::CertifyArgs),
    /// Start a real MCP server over stdio, read its tools/list (all pages), print its profile
    /// and save the tools: `agent-seer inspect -o tools.json -- npx server …`.
    Inspect(mcp::InspectArgs),
    /// Be an MCP stdio server for a harness: its tools, its mock outputs, every call recorded
    /// as a transcript, so any MCP client agent can be graded.
    Serve(mcp::ServeArgs),
    /// Drive a live agent (`--agent provider:model`) through a harness's scenarios over a chat
    /// API with tools, answering with mock outputs; write and grade its transcripts.
    Run(run::Args),
    /// Make failing transcript trials pass by accepting the agent's current calls as the
    /// scenario's oracle (or, for a broken transcript, the current findings as its faults),
    /// showing each diff first; `AGENT_SEER_BLESS=1 cargo test --test agents` does the same.
    Bless(bless::Args),
    /// List tools and parameters added, removed or changed between two tools/list captures,
    /// and the harness scenarios each change touches (stale oracles). Exit 1 when they differ.
    DiffSpec(diff_spec::Args),
    /// Import another benchmark's data as suites: `import bfcl <data-dir> -o <dir>`.
    #[command(subcommand)]
    Import(import::Source),
    /// Assemble a run's trial records (`target/agent-seer/<run-id>/`, written by every
    /// harness trial under cargo test or nextest, and by `check`) into one report: terminal,
    /// JSON, JUnit, Markdown or HTML.
    Report(report::Args),
    /// Audit tool specs for what they hide from agents: prose-only constraints, missing
    /// contract, one concept under several names across a fleet, provider schema refusals.
    Audit(audit::Args),
    /// Mutation testing of suites: broken-by-construction copies of every correct run (wrong
    /// tool, misspelt or missing parameter, a reference nobody produced, steps out of order, a
    /// repeated or unrequested change, …), graded by the engines; every survivor says why it
    /// got through. `--min-score` makes it a gate.
    Mutate(mutate::Args),
    /// Start a suite for a server: capture its tools/list and identity into harnesses/, and
    /// write a capability-matrix scaffold (effects from its annotations, or proposed from tool
    /// names and marked for review) into capabilities/; then print the next commands.
    Init(init::Args),
    /// Ground a suite's mocks in the real server: every scenario's oracle run against a fresh
    /// server (after the harness's `ground:` set-up), its answers written as `mock_output`
    /// with `grounding: high`; `--check` writes nothing and exits 1 naming each step whose
    /// answer drifted.
    Ground(ground::Args),
    /// Print a tool spec's complexity profile (tools, parameters per tool, optional ratio, …).
    InspectSpec(inspect::Args),
    /// Print the JSON Schema of one of agent-seer's file formats.
    Schema {
        /// Which format.
        #[arg(value_enum)]
        format: SchemaKind,
    },
}

#[derive(Copy, Clone, Debug, ValueEnum)]
enum SchemaKind {
    Harness,
    Transcript,
    Capabilities,
    Report,
}

/// How results are printed.
#[derive(Copy, Clone, Debug, Default, PartialEq, Eq, ValueEnum)]
pub enum Format {
    #[default]
    Human,
    Json,
}

/// The exit codes, one contract for every verb.
pub mod exit {
    /// Nothing to report: every call, trial or transcript is clean.
    pub const CLEAN: u8 = 0;
    /// The verb did its work and found something: findings, failed trials, a spec that
    /// changed, changes `bless --dry-run` would make, a capture with a schema that does not
    /// compile.
    pub const FINDINGS: u8 = 1;
    /// The verb could not start or finish on what it was given: a usage error, a file that
    /// does not load, a missing key, a replay-mode cache miss.
    pub const INPUT: u8 = 2;
    /// An LLM provider or an MCP server failed (an HTTP error after the retries, a timeout, a
    /// refusal, answers that are never the requested shape; a server that does not start,
    /// exits or breaks the protocol): worth running again, not a verdict on the agent.
    pub const UNAVAILABLE: u8 = 3;
    /// A `--max-cost` budget stopped a batch before it could be passed: what was answered is
    /// printed and cached, the rest was not sent. A stop the user asked for, not a failure.
    pub const OVER_BUDGET: u8 = 4;
}

/// What a verb concluded, before it becomes an exit code.
pub enum Outcome {
    Clean,
    Findings,
    /// The verb printed what it could, but part of its work failed; the code is [`exit::INPUT`]
    /// or [`exit::UNAVAILABLE`] as [`failure_code`] decides for the first error (the output
    /// names each).
    Failed(u8),
}

pub fn main() -> ExitCode {
    let cli = Cli::parse();
    // Colors only on a terminal, and never with NO_COLOR (anstream strips them otherwise).
    let mut out = anstream::stdout().lock();
    let mut err = std::io::stderr().lock();
    match run(cli, &mut out) {
        Ok(Outcome::Clean) => ExitCode::from(exit::CLEAN),
        Ok(Outcome::Findings) => ExitCode::from(exit::FINDINGS),
        Ok(Outcome::Failed(code)) => ExitCode::from(code),
        // Its reader went away (`agent-seer lint … | head`): end quietly, as a Unix filter
        // does (ripgrep's rule), rather than report the broken pipe.
        Err(e) if broken_pipe(&e) => ExitCode::from(exit::CLEAN),
        Err(e) => {
            let _ = writeln!(err, "{}", render_error(&e));
            ExitCode::from(failure_code(e.as_ref()))
        }
    }
}

/// Whether `e` is a write into a pipe whose reader has gone: the verb's own output failing
/// (its `?` on a write), not a broken pipe somewhere in a cause chain (a provider's socket).
fn broken_pipe(e: &anyhow::Error) -> bool {
    e.downcast_ref::<std::io::Error>()
        .is_some_and(|io| io.kind() == std::io::ErrorKind::BrokenPipe)
}

/// The exit code for a verb that failed with `e`: [`exit::UNAVAILABLE`] when a provider or a
/// server is the cause (anywhere in the error's chain), [`exit::INPUT`] otherwise.
pub fn failure_code(e: &(dyn std::error::Error + 'static)) -> u8 {
    let mut cause = Some(e);
    while let Some(c) = cause {
        if let Some(llm) = c.downcast_ref::<agent_seer::llm::LlmError>() {
            return if matches!(llm, agent_seer::llm::LlmError::OverBudget { .. }) {
                exit::OVER_BUDGET
            } else if llm.is_provider_failure() {
                exit::UNAVAILABLE
            } else {
                exit::INPUT
            };
        }
        if c.is::<agent_seer::mcp::McpError>() {
            return exit::UNAVAILABLE;
        }
        // A proxied session the real server ended (its error is the variant's field, not a
        // `source`, as `transparent` hides it).
        if let Some(p) = c.downcast_ref::<agent_seer::mcp::proxy::ProxyError>() {
            use agent_seer::mcp::proxy::ProxyError;
            let mut p = p;
            while let ProxyError::Interrupted { cause, .. } = p {
                p = cause;
            }
            if matches!(p, ProxyError::Server(_)) {
                return exit::UNAVAILABLE;
            }
        }
        cause = c.source();
    }
    exit::INPUT
}

fn run(cli: Cli, out: &mut dyn Write) -> anyhow::Result<Outcome> {
    match cli.command {
        Command::Lint(args) => lint::run(args, out),
        Command::Check(args) => check::run(args, out),
        Command::Report(args) => report::run(args, out),
        Command::Bless(args) => bless::run(args, out),
        Command::DiffSpec(args) => diff_spec::run(args, out),
        Command::Import(source) => import::run(source, out),
        Command::InspectSpec(args) => inspect::run(args, out),
        Command::Audit(args) => audit::run(args, out),
        Command::Mutate(args) => mutate::run(args, out),
        Command::Ground(args) => ground::run(args, out),
        Command::Init(args) => init::run(args, out),
        Command::Inspect(args) => mcp::inspect(args, out),
        Command::Serve(args) => mcp::serve(args),
        Command::Run(args) => run::run(args, out),
        Command::Generate(args) => generate::run(args, out),
        Command::Judge(args) => judge::run(args, out),
        Command::JudgeAgreement(args) => judge::agreement(args, out),
        Command::JudgeCertify(args) => judge::certify(args, out),
        Command::Schema { format } => {
            let text = match format {
                SchemaKind::Harness => include_str!("../../schemas/harness.schema.json"),
                SchemaKind::Transcript => include_str!("../../schemas/transcript.schema.json"),
                SchemaKind::Capabilities => include_str!("../../schemas/capabilities.schema.json"),
                SchemaKind::Report => include_str!("../../schemas/report.schema.json"),
            };
            out.write_all(text.as_bytes())?;
            Ok(Outcome::Clean)
        }
    }
}

/// A tool spec and the capability matrices that go with it, as `lint` and `generate` take them.
#[derive(clap::Args, Debug)]
pub struct SpecArgs {
    /// The tool spec: a tools/list result, an OpenAI tools array, or BFCL function docs.
    #[arg(long)]
    spec: std::path::PathBuf,
    /// A capability matrix (repeat for several servers).
    #[arg(long = "caps")]
    caps: Vec<std::path::PathBuf>,
}

impl SpecArgs {
    /// Loads the spec and the matrices, each matrix checked against the spec (a typo in a tool,
    /// parameter or model name is an error naming its line).
    pub fn load(
        &self,
    ) -> anyhow::Result<(
        agent_seer::spec::ToolSet,
        Vec<agent_seer::spec::Capabilities>,
    )> {
        let spec = agent_seer::spec::ToolSet::load(&self.spec)?;
        let mut caps = Vec::new();
        for p in &self.caps {
            let m = agent_seer::spec::Capabilities::load(p)?;
            m.check_against(&spec)?;
            caps.push(m);
        }
        Ok((spec, caps))
    }

    pub fn spec_path(&self) -> &std::path::Path {
        &self.spec
    }

    pub fn caps_paths(&self) -> &[std::path::PathBuf] {
        &self.caps
    }
}

/// The project root: `--root`, else `AGENT_SEER_ROOT`, else the nearest of the working
/// directory and its parents that holds a project ([`find_root`]), as cargo finds its
/// manifest; else the working directory. (Not `CARGO_MANIFEST_DIR`: under `cargo run` that
/// names agent-seer's own manifest.)
pub fn project_root(flag: Option<std::path::PathBuf>) -> std::path::PathBuf {
    flag.or_else(|| std::env::var_os("AGENT_SEER_ROOT").map(Into::into))
        .or_else(|| find_root(&std::env::current_dir().ok()?))
        .unwrap_or_default()
}

/// Walks up from `cwd` to the nearest directory with a `harnesses/` folder, or with a
/// `Cargo.toml` that moves it (`[package.metadata.agent-seer]`), and names it relative to
/// `cwd` (`""` for `cwd` itself, `..`, `../..`), so paths in reports stay short and usable
/// from where the command ran. `None` when no ancestor is a project.
pub fn find_root(cwd: &std::path::Path) -> Option<std::path::PathBuf> {
    let mut rel = std::path::PathBuf::new();
    for dir in cwd.ancestors() {
        let manifest_moves_it = std::fs::read_to_string(dir.join("Cargo.toml"))
            .is_ok_and(|t| t.contains("[package.metadata.agent-seer]"));
        if dir.join("harnesses").is_dir() || manifest_moves_it {
            return Some(rel);
        }
        rel.push("..");
    }
    None
}

/// The harness configuration a verb runs with: the environment's, as the harness reads it
/// ([`HarnessConfig::from_env`]), except that the root is [`project_root`]'s (a binary run
/// inside a project has no meaningful `CARGO_MANIFEST_DIR`). No judge: only the `judge` verbs ask for one.
/// No stamps of prepared suites: one process loads each suite once, in full.
pub fn project_config(flag: Option<std::path::PathBuf>) -> HarnessConfig {
    let mut config = HarnessConfig::from_env();
    config.root = project_root(flag);
    config.judge = agent_seer::check::JudgeSetup::Unset;
    config.prepared = None;
    config
}

/// The project's layout, resolved as the harness resolves it.
pub fn project_layout(flag: Option<std::path::PathBuf>) -> anyhow::Result<Layout> {
    Ok(project_config(flag).layout()?)
}

/// Runs the plan's trials that `keep` selects (paths; see `PlannedTrial::selected_by`) and
/// that are not ignored, as the harness would run them; `progress` is told each as it ends. A
/// gate with nothing labelled is left out (the harness lists it as ignored). A project the
/// harness cannot start on (no suite, names discovery refuses) is an input error here. The
/// records come sorted by name.
pub fn run_plan(
    config: &HarnessConfig,
    layout: &Layout,
    keep: &dyn Fn(&std::path::Path) -> bool,
    progress: &mut dyn FnMut(&TrialRecord),
) -> anyhow::Result<Vec<TrialRecord>> {
    let mut out = Vec::new();
    run_plan_each(config, layout, keep, &mut |r| {
        progress(&r);
        out.push(r);
        Ok(())
    })?;
    out.sort_by(|a, b| a.name.cmp(&b.name));
    Ok(out)
}

/// [`run_plan`], each record handed to `each` as its trial ends, in plan (name) order but for
/// the gates: a suite's discrimination and mutation gates run after the suite's other trials,
/// so they find what each transcript's own trial made of it (its row, what it is as a source
/// of mutants: nothing is evaluated or read twice, or kept for a trial still to come), and
/// their records come after theirs.
pub fn run_plan_each(
    config: &HarnessConfig,
    layout: &Layout,
    keep: &dyn Fn(&std::path::Path) -> bool,
    each: &mut dyn FnMut(TrialRecord) -> anyhow::Result<()>,
) -> anyhow::Result<()> {
    let planned = plan_runnable(layout, config);
    let setup = planned
        .iter()
        .filter(|t| t.id.kind == TrialKind::Setup)
        .find_map(|t| t.failure());
    match setup {
        // A file error keeps its type, so it renders with its place.
        Some(Failure::Source(e)) => return Err(e.clone().into()),
        Some(why) => anyhow::bail!("{why}"),
        None => {}
    }
    let mut run = |t: &agent_seer::check::PlannedTrial| {
        let r = t.run();
        if r.kind == TrialKind::Discrimination && r.status == Status::Ignored {
            return Ok(());
        }
        each(r)
    };
    let mut gates = Vec::new();
    for t in planned
        .iter()
        .filter(|t| t.ignored.is_none() && t.selected_by(keep))
    {
        if gates
            .last()
            .is_some_and(|g: &&agent_seer::check::PlannedTrial| g.id.suite != t.id.suite)
        {
            gates.drain(..).try_for_each(&mut run)?;
        }
        if matches!(t.id.kind, TrialKind::Discrimination | TrialKind::Mutation) {
            gates.push(t);
        } else {
            run(t)?;
        }
    }
    gates.into_iter().try_for_each(run)
}

/// The paths a verb was given to select trials with: each exists and is inside the project's
/// harness or transcript directories (or above them: `check .`); a path elsewhere is an error
/// that says so (it would select nothing). A file is selected when it lies under one of them
/// as written or as resolved — a transcript that is a symbolic link to a fixture elsewhere is
/// selected by its place under `transcripts/`.
pub struct Selection {
    /// Each path, resolved (symbolic links followed) and as written (made absolute, tidied).
    wanted: Vec<(std::path::PathBuf, std::path::PathBuf)>,
}

fn canonical(p: &std::path::Path) -> std::path::PathBuf {
    std::fs::canonicalize(p).unwrap_or_else(|_| p.to_path_buf())
}

fn lexical(p: &std::path::Path) -> std::path::PathBuf {
    let abs = std::path::absolute(p).unwrap_or_else(|_| p.to_path_buf());
    agent_seer::source::join_tidy(std::path::Path::new(""), &abs)
}

impl Selection {
    pub fn new(layout: &Layout, paths: &[std::path::PathBuf]) -> anyhow::Result<Self> {
        let dirs = [&layout.harnesses, &layout.transcripts];
        let wanted = paths
            .iter()
            .map(|p| {
                if !p.exists() {
                    anyhow::bail!("{}: no such file or directory", p.display());
                }
                let (c, l) = (canonical(p), lexical(p));
                let inside = dirs.iter().any(|d| {
                    let (dc, dl) = (canonical(d), lexical(d));
                    c.starts_with(&dc)
                        || dc.starts_with(&c)
                        || l.starts_with(&dl)
                        || dl.starts_with(&l)
                });
                if !inside {
                    anyhow::bail!(
                        "{}: outside the project's harness and transcript directories ({} and {}); \
                         run from the project, or name it with --root or AGENT_SEER_ROOT",
                        p.display(),
                        layout.harnesses.display(),
                        layout.transcripts.display()
                    );
                }
                Ok((c, l))
            })
            .collect::<anyhow::Result<_>>()?;
        Ok(Self { wanted })
    }

    /// Whether `p` is selected (everything is, when no path was given).
    pub fn keeps(&self, p: &std::path::Path) -> bool {
        if self.wanted.is_empty() {
            return true;
        }
        let (c, l) = (canonical(p), lexical(p));
        self.wanted
            .iter()
            .any(|(wc, wl)| c.starts_with(wc) || l.starts_with(wl))
    }
}

/// Errors about a user's file get their quoted line; everything else its cause chain.
fn render_error(e: &anyhow::Error) -> String {
    if let Some(src) = e.downcast_ref::<agent_seer::source::SourceError>() {
        return src.render();
    }
    format!("error: {e:#}")
}
