//! `agent-seer judge` and `agent-seer judge-agreement`: the LLM judge over transcripts, outside
//! `cargo test`; a second judge and the agreement statistics (paper Appendix A.8).

use std::io::Write;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use agent_seer::check::{Suite, evaluate};
use agent_seer::harness::{Layout, discover};
use agent_seer::judge::{self, Job, Judged, Mode, agreement, certify};
use agent_seer::llm::{BatchEvent, BatchOptions, Client, LlmConfig, LlmError, Price};
use serde_json::json;

use super::{Format, Outcome};

#[derive(clap::Args, Debug)]
pub struct Args {
    /// Transcript files or directories, or harness files. Default: every suite.
    paths: Vec<PathBuf>,
    /// The judge, `provider:model` (gemini, vertex, openai, anthropic).
    #[arg(long, env = "AGENT_SEER_JUDGE")]
    judge: String,
    /// What the judge sees: `enriched` (specs, matrix rows, findings) or `raw-spec`.
    #[arg(long, value_enum, default_value_t = ModeArg::Enriched)]
    mode: ModeArg,
    #[arg(long)]
    root: Option<PathBuf>,
    #[arg(long, value_enum, default_value_t)]
    format: Format,
    /// Write hand-made cache entries (the oracle's scores as the judge's answer, marked
    /// hand-written) instead of asking the model, so judge trials can replay offline.
    #[arg(long, conflicts_with = "batch")]
    write_fixtures: bool,
    #[command(flatten)]
    batch: BatchArgs,
}

/// Sending the judgements as one batch job.
#[derive(clap::Args, Debug, Clone)]
pub struct BatchArgs {
    /// Send the judgements through the provider's batch API (OpenAI Batch, Anthropic Message
    /// Batches, Gemini batch mode): half the price, answers within a day. The cost estimate is
    /// printed before anything is sent; a stopped run is picked up by the next.
    #[arg(long)]
    batch: bool,
    /// Send no batch round that could take the spend past USD (at the batch price); what it
    /// keeps from being sent ends the run with exit code 4.
    #[arg(long, value_name = "USD", value_parser = parse_budget, requires = "batch")]
    max_cost: Option<f64>,
    /// The judge model's list price in USD per million input and output tokens, e.g.
    /// `--price 0.30,2.50`, for a model whose price agent-seer does not know.
    #[arg(long, value_name = "IN,OUT", value_parser = parse_price, requires = "batch")]
    price: Option<Price>,
}

/// `--max-cost`: a finite number of USD, 0 or more (NaN would otherwise pass every check).
fn parse_budget(s: &str) -> Result<f64, String> {
    s.trim()
        .parse::<f64>()
        .ok()
        .filter(|v| v.is_finite() && *v >= 0.0)
        .ok_or_else(|| format!("`{s}` is not a budget (a number of USD, 0 or more)"))
}

fn parse_price(s: &str) -> Result<Price, String> {
    let (i, o) = s.split_once(',').ok_or_else(|| {
        format!("`{s}`: give INPUT,OUTPUT in USD per million tokens, e.g. 0.30,2.50")
    })?;
    let num = |t: &str| -> Result<f64, String> {
        t.trim()
            .parse::<f64>()
            .ok()
            .filter(|v| v.is_finite() && *v >= 0.0)
            .ok_or_else(|| format!("`{t}` is not a price (a number of USD, 0 or more)"))
    };
    Ok(Price {
        input: num(i)?,
        output: num(o)?,
    })
}

impl BatchArgs {
    fn options(&self) -> BatchOptions {
        BatchOptions {
            max_cost_usd: self.max_cost,
            price: self.price,
            ..BatchOptions::from_env()
        }
    }
}

/// Judges `jobs` (repeat `repeat`): one call each, or one batch when `--batch` asks for it,
/// its estimate and progress on stderr.
/// `spent` is what the batches of this command have cost so far (USD at the batch price): the
/// `--max-cost` budget covers them all, every judge and repeat.
fn judge_all(
    rt: &tokio::runtime::Runtime,
    client: &Client,
    jobs: Vec<Job>,
    mode: Mode,
    repeat: usize,
    batch: &BatchArgs,
    spent: &mut f64,
) -> anyhow::Result<Vec<Result<Judged, LlmError>>> {
    if !batch.batch {
        return Ok(rt.block_on(judge::judge_many_repeat(client, jobs, mode, repeat)));
    }
    let mut options = batch.options();
    options.max_cost_usd = options.max_cost_usd.map(|max| (max - *spent).max(0.0));
    let cost = |c: &Client| -> f64 {
        c.ledger()
            .entries()
            .values()
            .filter_map(|e| e.estimated_cost_usd)
            .sum()
    };
    let before = cost(client);
    let spec = format!(
        "{}:{}",
        client.config().provider.name(),
        client.config().model
    );
    let on_event = move |e: BatchEvent| eprintln!("{}", describe(&spec, &e));
    let results = rt.block_on(judge::judge_many_batch(
        client, &jobs, mode, repeat, &options, &on_event,
    ))?;
    *spent += cost(client) - before;
    Ok(results)
}

/// The exit code of judgements that failed: a budget stop (4) over any other failure, then the
/// first failure's code.
fn failed_code<'a>(errors: impl IntoIterator<Item = &'a LlmError>) -> Option<u8> {
    let errors: Vec<&LlmError> = errors.into_iter().collect();
    if errors
        .iter()
        .any(|e| matches!(e, LlmError::OverBudget { .. }))
    {
        return Some(super::exit::OVER_BUDGET);
    }
    errors.first().map(|e| super::failure_code(*e))
}

/// One line of a batch's progress, for stderr.
fn describe(spec: &str, e: &BatchEvent) -> String {
    match e {
        BatchEvent::Estimate(est) => {
            let usd = |v: Option<f64>| {
                v.map_or("unknown (no price: --price IN,OUT)".to_owned(), |v| {
                    format!("${v:.4}")
                })
            };
            let mut line = format!(
                "batch round {} ({spec}): {} requests to send",
                est.round, est.requests
            );
            if est.cached > 0 {
                line.push_str(&format!(", {} answered from the cache", est.cached));
            }
            if est.resumed > 0 {
                line.push_str(&format!(", {} in jobs an earlier run sent", est.resumed));
            }
            if est.requests > 0 {
                line.push_str(&format!(
                    "; estimated ≤ {} input + ≤ {} output tokens, ≤ {} at the batch price (half the list price)",
                    est.input_tokens, est.output_tokens, usd(est.usd)
                ));
            }
            if let Some(b) = est.budget_usd {
                line.push_str(&format!(
                    "; spent {} of the --max-cost ${b:.4}",
                    usd(est.spent_usd)
                ));
            }
            line
        }
        BatchEvent::Submitted {
            id,
            requests,
            resumed,
        } => {
            if *resumed {
                format!("batch {id}: {requests} requests, sent by an earlier run; collecting it")
            } else {
                format!("batch {id}: sent, {requests} requests")
            }
        }
        BatchEvent::Status {
            id,
            status,
            done,
            total,
        } => {
            format!("batch {id}: {status} ({done}/{total})")
        }
        BatchEvent::Ended { id, valid, failed } => {
            format!("batch {id}: read, {valid} valid answers, {failed} failed or rejected")
        }
    }
}

#[derive(clap::Args, Debug)]
pub struct AgreementArgs {
    paths: Vec<PathBuf>,
    /// The first judge, `provider:model`.
    #[arg(long, env = "AGENT_SEER_JUDGE")]
    judge: String,
    /// The second judge (out of family, ideally), `provider:model`.
    #[arg(long)]
    second_judge: String,
    #[arg(long, value_enum, default_value_t = ModeArg::Enriched)]
    mode: ModeArg,
    #[arg(long)]
    root: Option<PathBuf>,
    #[arg(long, value_enum, default_value_t)]
    format: Format,
}

#[derive(clap::Args, Debug)]
pub struct CertifyArgs {
    /// Labelled transcript files or directories, or harness files. Default: every suite.
    paths: Vec<PathBuf>,
    /// More labelled transcripts (the same as giving them as paths).
    #[arg(long)]
    labels: Vec<PathBuf>,
    /// The judge, `provider:model`; give it several times to certify several judges (then
    /// Krippendorff's alpha is across them).
    #[arg(long = "judge", env = "AGENT_SEER_JUDGE", required = true)]
    judges: Vec<String>,
    /// Judge every transcript N times: self-consistency and alpha across repeats. Repeat 1 is
    /// the judgement judge trials make; each later one has its own cache entry.
    #[arg(long, default_value_t = 1, value_parser = clap::value_parser!(u16).range(1..=100))]
    repeat: u16,
    #[command(flatten)]
    batch: BatchArgs,
    /// The least TPR (broken transcripts failed) to certify, 0–1; over the suites' own bar.
    #[arg(long)]
    min_tpr: Option<f64>,
    /// The least TNR (correct transcripts passed) to certify, 0–1; over the suites' own bar.
    #[arg(long)]
    min_tnr: Option<f64>,
    #[arg(long, value_enum, default_value_t = ModeArg::Enriched)]
    mode: ModeArg,
    #[arg(long)]
    root: Option<PathBuf>,
    #[arg(long, value_enum, default_value_t)]
    format: Format,
}

#[derive(Copy, Clone, Debug, clap::ValueEnum)]
pub enum ModeArg {
    Enriched,
    RawSpec,
}

impl From<ModeArg> for Mode {
    fn from(m: ModeArg) -> Self {
        match m {
            ModeArg::Enriched => Mode::Enriched,
            ModeArg::RawSpec => Mode::RawSpec,
        }
    }
}

/// Loads and deterministically evaluates the selected transcripts.
fn jobs(root: Option<&Path>, paths: &[PathBuf]) -> anyhow::Result<(Layout, Vec<(String, Job)>)> {
    let layout = super::project_layout(root.map(Path::to_path_buf))?;
    let selection = super::Selection::new(&layout, paths)?;
    let keep = |p: &Path| selection.keeps(p);
    let mut out = Vec::new();
    for files in discover(&layout)? {
        let Some(h) = &files.harness else { continue };
        let whole = keep(h);
        let selected: Vec<&(String, PathBuf)> = files
            .transcripts
            .iter()
            .filter(|(_, p)| whole || keep(p))
            .collect();
        if selected.is_empty() {
            continue;
        }
        let suite = Arc::new(Suite::load(h)?);
        for (id, path) in selected {
            let t = agent_seer::check::load_transcript(&suite, path)?;
            let ev = evaluate(&suite, &t)?;
            out.push((
                format!("{}::{id}", files.suite),
                Job {
                    suite: suite.clone(),
                    transcript: t,
                    evaluation: ev,
                },
            ));
        }
    }
    if out.is_empty() {
        anyhow::bail!("no transcripts to judge");
    }
    Ok((layout, out))
}

fn client(spec: &str, layout: &Layout) -> anyhow::Result<Client> {
    Ok(Client::new(LlmConfig::from_env(
        spec,
        layout.llm_cache.clone(),
    )?)?)
}

fn runtime() -> anyhow::Result<tokio::runtime::Runtime> {
    Ok(tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()?)
}

pub fn run(args: Args, out: &mut dyn Write) -> anyhow::Result<Outcome> {
    let (layout, jobs) = jobs(args.root.as_deref(), &args.paths)?;
    let client = client(&args.judge, &layout)?;
    let mode = Mode::from(args.mode);
    if args.write_fixtures {
        let mut written = 0;
        for (_, j) in &jobs {
            written += usize::from(judge::write_fixture(
                &client,
                &j.suite,
                &j.transcript,
                &j.evaluation,
                mode,
            )?);
        }
        writeln!(
            out,
            "wrote {written} hand-written judge fixtures for {} under {}",
            args.judge,
            layout.llm_cache.display()
        )?;
        return Ok(Outcome::Clean);
    }
    let names: Vec<String> = jobs.iter().map(|(n, _)| n.clone()).collect();
    let oracle: Vec<Option<f64>> = jobs
        .iter()
        .map(|(_, j)| j.evaluation.score.as_ref().map(|s| s.tc))
        .collect();
    let results = judge_all(
        &runtime()?,
        &client,
        jobs.into_iter().map(|(_, j)| j).collect(),
        mode,
        1,
        &args.batch,
        &mut 0.0,
    )?;
    let failed = failed_code(results.iter().filter_map(|r| r.as_ref().err()));
    let mut rows = Vec::new();
    for ((name, oracle), r) in names.iter().zip(&oracle).zip(results) {
        match r {
            Ok(j) => rows.push(json!({"trial": name, "judge_tc": j.score.tc, "oracle_tc": oracle, "coherence": j.coherence,
                "failures": j.verdict.failures, "rationale": j.verdict.rationale, "score": j.score})),
            Err(e) => rows.push(json!({"trial": name, "error": e.to_string()})),
        }
    }
    match args.format {
        Format::Json => writeln!(
            out,
            "{}",
            serde_json::to_string_pretty(
                &json!({"judge": args.judge, "results": rows, "ledger": client.ledger().entries()})
            )?
        )?,
        Format::Human => {
            let w = names.iter().map(String::len).max().unwrap_or(5);
            writeln!(
                out,
                "{:w$}  judge TC  oracle TC  coherence  failures",
                "trial"
            )?;
            for r in &rows {
                let name = r["trial"].as_str().unwrap_or("");
                if let Some(e) = r.get("error") {
                    writeln!(out, "{name:w$}  error: {}", e.as_str().unwrap_or(""))?;
                    continue;
                }
                let f = |k: &str| r[k].as_f64().map_or("-".to_owned(), |v| format!("{v:.3}"));
                let failures: Vec<&str> = r["failures"]
                    .as_array()
                    .into_iter()
                    .flatten()
                    .filter_map(|v| v.as_str())
                    .collect();
                writeln!(
                    out,
                    "{name:w$}  {:>8}  {:>9}  {:>9}  {}",
                    f("judge_tc"),
                    f("oracle_tc"),
                    f("coherence"),
                    failures.join(", ")
                )?;
            }
            for (k, e) in client.ledger().entries() {
                let cost = e
                    .estimated_cost_usd
                    .map_or("unknown".to_owned(), |c| format!("${c:.4}"));
                let batched = if e.batched > 0 {
                    format!(", {} by batch at half price", e.batched)
                } else {
                    String::new()
                };
                writeln!(
                    out,
                    "\nledger {k}: {} calls ({} cached{batched}), {} input + {} output tokens, est. cost {cost}",
                    e.calls, e.cached, e.input_tokens, e.output_tokens
                )?;
            }
        }
    }
    // The judge's scores are reported, not gated here: only a judgement that could not be
    // made changes the exit code.
    Ok(failed.map_or(Outcome::Clean, Outcome::Failed))
}

/// Reads one dimension of a judged transcript (`None` when not applicable).
type Dimension = fn(&Judged) -> Option<f64>;

pub fn agreement(args: AgreementArgs, out: &mut dyn Write) -> anyhow::Result<Outcome> {
    let (layout, jobs) = jobs(args.root.as_deref(), &args.paths)?;
    let mode = Mode::from(args.mode);
    let rt = runtime()?;
    let first = client(&args.judge, &layout)?;
    let second = client(&args.second_judge, &layout)?;
    let plain: Vec<Job> = jobs.into_iter().map(|(_, j)| j).collect();
    let total = plain.len();
    let a = rt.block_on(judge::judge_many(&first, plain.clone(), mode));
    let b = rt.block_on(judge::judge_many(&second, plain, mode));
    // Each judge's failed judgements: how many, and the first one's error.
    let mut failures: Vec<(&str, usize, Option<LlmError>)> = Vec::new();
    for (spec, results) in [(&args.judge, &a), (&args.second_judge, &b)] {
        let mut errors = results.iter().filter_map(|r| r.as_ref().err());
        let first_error = errors.next().cloned();
        let n = usize::from(first_error.is_some()) + errors.count();
        failures.push((spec, n, first_error));
    }
    let failed: Vec<(String, String)> = failures
        .iter()
        .filter(|(_, n, _)| *n > 0)
        .map(|(spec, n, e)| {
            let e = e.as_ref().map(ToString::to_string).unwrap_or_default();
            (format!("{n} of {total} judgements by {spec} failed"), e)
        })
        .collect();
    let first_error = failures.iter().find_map(|(_, _, e)| e.clone());
    let pairs: Vec<(Judged, Judged)> = a
        .into_iter()
        .zip(b)
        .filter_map(|(x, y)| Some((x.ok()?, y.ok()?)))
        .collect();
    if pairs.len() < 2 {
        let why = format!(
            "fewer than two transcripts were judged by both judges ({} of {total})",
            pairs.len()
        );
        return Err(match first_error {
            // The judges' own error stays in the chain, so the exit code names its kind.
            Some(e) => {
                let counts: Vec<&str> = failed.iter().map(|(c, _)| c.as_str()).collect();
                anyhow::Error::new(e)
                    .context(format!("{why}: {}; the first error", counts.join(", ")))
            }
            None => anyhow::anyhow!(why),
        });
    }
    for (count, first) in &failed {
        eprintln!(
            "warning: {count} (the first with: {first}); the agreement is over the {} transcripts both judged",
            pairs.len()
        );
    }
    let dims: [(&str, Dimension); 5] = [
        ("tc", |j| Some(j.score.tc)),
        ("usage", |j| Some(j.score.usage)),
        ("selection", |j| Some(j.score.selection)),
        ("ordering", |j| j.score.ordering),
        ("arguments", |j| Some(j.score.arguments)),
    ];
    let mut table = serde_json::Map::new();
    for (name, get) in dims {
        let (xs, ys): (Vec<f64>, Vec<f64>) = pairs
            .iter()
            .filter_map(|(x, y)| Some((get(x)?, get(y)?)))
            .unzip();
        if xs.len() >= 2 {
            table.insert(
                name.into(),
                serde_json::to_value(agreement::agreement(&xs, &ys))?,
            );
        }
    }
    match args.format {
        Format::Json => writeln!(
            out,
            "{}",
            serde_json::to_string_pretty(
                &json!({"judges": [args.judge, args.second_judge], "n": pairs.len(), "dimensions": table})
            )?
        )?,
        Format::Human => {
            writeln!(
                out,
                "{} vs {} on {} transcripts (95% bootstrap CIs)",
                args.judge,
                args.second_judge,
                pairs.len()
            )?;
            writeln!(
                out,
                "{:10}  {:>22}  {:>22}  {:>22}  {:>22}",
                "dimension", "pearson r", "spearman rho", "MAE", "within ±0.1"
            )?;
            let est = |v: &serde_json::Value| -> String {
                if v.is_null() {
                    return "-".into();
                }
                format!(
                    "{:.3} [{:.3}, {:.3}]",
                    v["value"].as_f64().unwrap_or(0.0),
                    v["low"].as_f64().unwrap_or(0.0),
                    v["high"].as_f64().unwrap_or(0.0)
                )
            };
            for (name, g) in &table {
                writeln!(
                    out,
                    "{name:10}  {:>22}  {:>22}  {:>22}  {:>22}",
                    est(&g["pearson"]),
                    est(&g["spearman"]),
                    est(&g["mae"]),
                    est(&g["within_0_1"])
                )?;
            }
        }
    }
    Ok(first_error.map_or(Outcome::Clean, |e| Outcome::Failed(super::failure_code(&e))))
}

/// The bar: `--min-tpr/--min-tnr` (a missing one is 0), else the strictest of the selected
/// suites' `judge: { certify: … }`, else none (a report, exit 0).
fn bar(args: &CertifyArgs, jobs: &[(String, Job)]) -> anyhow::Result<Option<certify::Bar>> {
    for (flag, v) in [("--min-tpr", args.min_tpr), ("--min-tnr", args.min_tnr)] {
        if let Some(v) = v
            && !(v.is_finite() && (0.0..=1.0).contains(&v))
        {
            anyhow::bail!("{flag} must be a number within 0–1, got {v}");
        }
    }
    if args.min_tpr.is_some() || args.min_tnr.is_some() {
        return Ok(Some(certify::Bar {
            tpr: args.min_tpr.unwrap_or(0.0),
            tnr: args.min_tnr.unwrap_or(0.0),
        }));
    }
    Ok(jobs
        .iter()
        .filter_map(|(_, j)| j.suite.harness.certify)
        .reduce(|a, b| certify::Bar {
            tpr: a.tpr.max(b.tpr),
            tnr: a.tnr.max(b.tnr),
        }))
}

pub fn certify(args: CertifyArgs, out: &mut dyn Write) -> anyhow::Result<Outcome> {
    let mut paths = args.paths.clone();
    paths.extend(args.labels.iter().cloned());
    let (layout, jobs) = jobs(args.root.as_deref(), &paths)?;
    let jobs: Vec<(String, Job)> = jobs
        .into_iter()
        .filter(|(_, j)| j.transcript.label.expect.is_some())
        .collect();
    if jobs.is_empty() {
        anyhow::bail!("no labelled transcripts (`expect: pass` or `expect: fail`) to certify on");
    }
    let bar = bar(&args, &jobs)?;
    let mode = Mode::from(args.mode);
    let rt = runtime()?;
    let clients: Vec<Client> = args
        .judges
        .iter()
        .map(|spec| client(spec, &layout))
        .collect::<anyhow::Result<_>>()?;
    let plain: Vec<Job> = jobs.iter().map(|(_, j)| j.clone()).collect();
    let repeats = usize::from(args.repeat);
    // judged[transcript][judge][repeat]
    let mut judged: Vec<Vec<Vec<Option<Judged>>>> = vec![Vec::new(); jobs.len()];
    let mut first_error: Option<LlmError> = None;
    let mut over_budget = false;
    let mut spent = 0.0;
    let mut failures: Vec<String> = Vec::new();
    for (spec, c) in args.judges.iter().zip(&clients) {
        for per in &mut judged {
            per.push(Vec::new());
        }
        let mut failed = 0;
        for r in 1..=repeats {
            let results = judge_all(&rt, c, plain.clone(), mode, r, &args.batch, &mut spent)?;
            for (per, res) in judged.iter_mut().zip(results) {
                let slot = per.last_mut().expect("pushed above");
                match res {
                    Ok(j) => slot.push(Some(j)),
                    Err(e) => {
                        failed += 1;
                        over_budget |= matches!(e, LlmError::OverBudget { .. });
                        first_error.get_or_insert(e);
                        slot.push(None);
                    }
                }
            }
        }
        if failed > 0 {
            failures.push(format!(
                "{failed} of {} judgements by {spec} failed",
                jobs.len() * repeats
            ));
        }
    }
    if let Some(e) = &first_error {
        let judged_any = judged.iter().flatten().flatten().any(Option::is_some);
        if !judged_any {
            return Err(anyhow::Error::new(e.clone())
                .context(format!("{}; the first error", failures.join(", "))));
        }
        eprintln!(
            "warning: {} (the first with: {e}); the certification is over the judgements that were made",
            failures.join(", ")
        );
    }
    let items: Vec<certify::Item> = jobs
        .into_iter()
        .zip(judged)
        .map(|((name, job), judged)| certify::Item { name, job, judged })
        .collect();
    let cert = certify::certify(&args.judges, &items, bar);
    match args.format {
        Format::Json => writeln!(
            out,
            "{}",
            serde_json::to_string_pretty(&json!({
                "certification": cert,
                "certified": cert.certified(),
                "ledger": clients.iter().flat_map(|c| c.ledger().entries()).collect::<std::collections::BTreeMap<_, _>>(),
            }))?
        )?,
        Format::Human => {
            render_certification(&cert, out)?;
            for c in &clients {
                for (k, e) in c.ledger().entries() {
                    writeln!(
                        out,
                        "ledger {k}: {} calls ({} cached), {} input + {} output tokens",
                        e.calls, e.cached, e.input_tokens, e.output_tokens
                    )?;
                }
            }
        }
    }
    if over_budget {
        return Ok(Outcome::Failed(super::exit::OVER_BUDGET));
    }
    if let Some(e) = first_error {
        return Ok(Outcome::Failed(super::failure_code(&e)));
    }
    Ok(match cert.certified() {
        Some(false) => Outcome::Findings,
        _ => Outcome::Clean,
    })
}

/// The human report: one row per judge, then α and the disagreements with the linter.
pub fn render_certification(
    c: &certify::Certification,
    out: &mut dyn Write,
) -> std::io::Result<()> {
    writeln!(
        out,
        "judge certification on {} labelled transcripts: {} broken, base rate {:.3} (positive = broken, `expect: fail`)",
        c.transcripts, c.broken, c.base_rate
    )?;
    match c.bar {
        Some(b) => writeln!(out, "bar: TPR >= {:.2} and TNR >= {:.2}", b.tpr, b.tnr)?,
        None => writeln!(out, "bar: none (report only)")?,
    }
    let w = c
        .judges
        .iter()
        .map(|j| j.judge.len())
        .max()
        .unwrap_or(5)
        .max(5);
    writeln!(
        out,
        "\n{:w$}  {:>7}  {:>13}  {:>9}  {:>13}  {:>9}  {:>6}  {:>11}  certified",
        "judge", "repeats", "TPR", "TPR lower", "TNR", "TNR lower", "kappa", "consistency"
    )?;
    let rate = |r: &Option<certify::Rate>| match r {
        Some(r) => (
            format!("{:.3} ({}/{})", r.value, r.k, r.n),
            format!("{:.3}", r.lower),
        ),
        None => ("-".to_owned(), "-".to_owned()),
    };
    let num = |v: Option<f64>| v.map_or("-".to_owned(), |v| format!("{v:.3}"));
    for j in &c.judges {
        let (tpr, tpr_low) = rate(&j.tpr);
        let (tnr, tnr_low) = rate(&j.tnr);
        writeln!(
            out,
            "{:w$}  {:>7}  {tpr:>13}  {tpr_low:>9}  {tnr:>13}  {tnr_low:>9}  {:>6}  {:>11}  {}",
            j.judge,
            j.repeats,
            num(j.kappa),
            num(j.self_consistency),
            match j.certified {
                Some(true) => "yes",
                Some(false) => "NO",
                None => "-",
            }
        )?;
    }
    match c.alpha {
        Some(a) => writeln!(
            out,
            "\nKrippendorff's alpha (nominal, pass/fail) across {} raters: {a:.3}",
            c.raters
        )?,
        None if c.raters < 2 => writeln!(
            out,
            "\nKrippendorff's alpha: - (1 rater; give --judge twice or --repeat 2)"
        )?,
        None => writeln!(
            out,
            "\nKrippendorff's alpha: - (across {} raters, no transcript was judged twice, or every verdict is the same)",
            c.raters
        )?,
    }
    let all: Vec<(&str, &certify::Disagreement)> = c
        .judges
        .iter()
        .flat_map(|j| j.disagreements.iter().map(move |d| (j.judge.as_str(), d)))
        .collect();
    if all.is_empty() {
        writeln!(
            out,
            "disagreements with the linter (tool names, parameter names, required, types): none"
        )?;
    } else {
        writeln!(
            out,
            "disagreements with the linter (tool names, parameter names, required, types): {}",
            all.len()
        )?;
        for (judge, d) in all {
            let why = if d.kind == "missed" {
                format!("judge {:.1} despite {}", d.judge_score, d.codes.join(", "))
            } else {
                format!("judge {:.1}, no finding", d.judge_score)
            };
            writeln!(
                out,
                "  {judge}  {}  {}  {}: {why}",
                d.transcript, d.sub_dimension, d.kind
            )?;
        }
    }
    Ok(())
}
