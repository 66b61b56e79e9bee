//! `agent-seer ground HARNESS -- SERVER…`: every scenario's oracle run against a fresh real
//! server, its answers written as the steps' `mock_output` (or, with `--check`, compared with
//! them: drift).

use std::collections::BTreeMap;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::time::Duration;

use agent_seer::check::{Suite, load_transcript};
use agent_seer::ground::{self, Isolation, Job, JobError, Launch, Outcome as Answer, Target};
use agent_seer::harness::{Harness, Layout, Transcript, suite_transcripts};
use agent_seer::source::{OutDir, SourceFile};
use serde_json::{Value, json};

use super::mcp::Target as Server;
use super::{Format, Outcome, exit};

#[derive(clap::Args, Debug)]
pub struct Args {
    /// The harness whose mocks to ground.
    harness: PathBuf,
    /// Write nothing: exit 1 naming every step whose real answer differs from its mock (and,
    /// with --transcripts, every recorded output), so CI holds the mocks to the live server.
    #[arg(long)]
    check: bool,
    /// Also replay every transcript of the suite from its scenario's set-up and ground (or
    /// check) its recorded `output:`s.
    #[arg(long)]
    transcripts: bool,
    /// Only these scenarios (repeat the flag); transcripts of other scenarios are left alone.
    #[arg(long = "scenario", value_name = "ID")]
    scenarios: Vec<String>,
    /// A shell command that prepares each run's fresh folder (its working directory), over the
    /// harness's `ground.setup`.
    #[arg(long, value_name = "CMD")]
    setup: Option<String>,
    /// How many fresh servers run at once (default: the machine's cores).
    #[arg(long, short = 'j', value_name = "N")]
    jobs: Option<std::num::NonZeroUsize>,
    /// `loopback`: run set-ups and servers in a network namespace with only loopback (`unshare
    /// -n`), warning when this machine cannot; `inherit`: this process's network.
    #[arg(long, value_enum, default_value_t)]
    network: Network,
    #[arg(long, value_enum, default_value_t)]
    format: Format,
    #[command(flatten)]
    server: Server,
}

#[derive(Copy, Clone, Debug, Default, PartialEq, Eq, clap::ValueEnum)]
pub enum Network {
    #[default]
    Loopback,
    Inherit,
}

/// One call's fate, for the report.
struct Row<'a> {
    job: &'a str,
    target: &'a Target,
    answer: Answer,
}

pub fn run(args: Args, out: &mut dyn Write) -> anyhow::Result<Outcome> {
    let harness = Harness::load(&args.harness)?;
    for id in &args.scenarios {
        anyhow::ensure!(
            harness.scenario(id).is_some(),
            "--scenario {id}: {} has no such scenario",
            args.harness.display()
        );
    }
    let (mut jobs, skipped) = ground::plan(&harness, &args.scenarios);
    let mut transcripts: Vec<Transcript> = Vec::new();
    let mut foreign = 0;
    if args.transcripts {
        let suite = Suite::load(&args.harness)?;
        let root = project_root(&harness.path);
        for (_, path) in suite_transcripts(&Layout::under(&root), &harness.suite)? {
            // A recorded run in a provider's or a library's format is that library's record:
            // compared by the tests that import it, never rewritten here.
            if !is_yaml(&path) {
                foreign += 1;
                continue;
            }
            let t = load_transcript(&suite, &path)?;
            let wanted = args.scenarios.is_empty()
                || t.scenario
                    .as_ref()
                    .is_some_and(|s| args.scenarios.contains(s));
            let skip = t
                .scenario
                .as_deref()
                .and_then(|s| harness.scenario(s))
                .is_some_and(|sc| {
                    ground::effective(&harness.ground, &sc.ground)
                        .skip
                        .is_some()
                });
            if wanted && !skip {
                jobs.push(
                    ground::transcript_job(&harness, &t)
                        .map_err(|e| anyhow::anyhow!("{}: {e}", path.display()))?,
                );
                transcripts.push(t);
            }
        }
    }
    let launch = launch(&args.server, args.setup.clone(), args.network, &harness)?;
    let server: Vec<String> = if args.server.command.is_empty() {
        harness.ground.server.clone()
    } else {
        args.server.command.clone()
    };
    if launch.url.is_none() && server.is_empty() {
        return Err(JobError::NoServer.into());
    }
    let width = args
        .jobs
        .map(std::num::NonZeroUsize::get)
        .or_else(|| {
            std::thread::available_parallelism()
                .ok()
                .map(std::num::NonZeroUsize::get)
        })
        .unwrap_or(1);
    let results = ground::run_all(&jobs, &launch, &server, width)?;
    let mut rows: Vec<Row> = Vec::new();
    let mut failures: Vec<(String, u8)> = Vec::new();
    for (job, result) in jobs.iter().zip(results) {
        match result {
            Ok(answers) => rows.extend(job.calls.iter().zip(&answers).map(|(target, a)| Row {
                job: &job.what,
                target,
                answer: ground::outcome(target, a),
            })),
            Err(e) => {
                let code = match e {
                    JobError::Server { .. } => exit::UNAVAILABLE,
                    _ => exit::INPUT,
                };
                failures.push((e.to_string(), code));
            }
        }
    }
    let written = if args.check {
        Vec::new()
    } else {
        write(&harness, &transcripts, &rows)?
    };
    report(
        &args, &harness, &jobs, &skipped, &rows, &failures, &written, out,
    )?;
    if foreign > 0 && args.format == Format::Human {
        writeln!(
            out,
            "left out {foreign} recorded run(s) in a foreign format (a library's record is not rewritten)"
        )?;
    }
    if let Some((_, code)) = failures.iter().max_by_key(|(_, c)| *c) {
        return Ok(Outcome::Failed(*code));
    }
    let refused = rows.iter().any(|r| matches!(r.answer, Answer::Refused(_)));
    let drift = rows
        .iter()
        .any(|r| r.target.grounds && matches!(r.answer, Answer::Differs(_)));
    Ok(if refused || (args.check && drift) {
        Outcome::Findings
    } else {
        Outcome::Clean
    })
}

/// The project a harness belongs to: the folder above `harnesses/`.
fn project_root(harness: &Path) -> PathBuf {
    let dir = harness
        .parent()
        .filter(|d| !d.as_os_str().is_empty())
        .unwrap_or(Path::new("."));
    match dir.file_name() {
        Some(n) if n == "harnesses" => dir
            .parent()
            .filter(|d| !d.as_os_str().is_empty())
            .unwrap_or(Path::new("."))
            .to_path_buf(),
        _ => dir.to_path_buf(),
    }
}

/// How each fresh server starts: its command or URL, the set-up, the network, the clock (the
/// harness's `ground:`), as `ground` and `generate` with a server run them.
pub(super) fn launch(
    server: &Server,
    setup: Option<String>,
    network: Network,
    harness: &Harness,
) -> anyhow::Result<Launch> {
    let url = match &server.url {
        Some(u) => {
            let headers = server
                .headers
                .iter()
                .map(|h| super::mcp::header(h, &|k| std::env::var(k).ok()))
                .collect::<anyhow::Result<Vec<_>>>()?;
            Some((u.clone(), headers))
        }
        None => None,
    };
    let isolate = match network {
        Network::Inherit => Isolation::Inherit,
        Network::Loopback => match Isolation::probe() {
            Ok(i) => i,
            Err(why) => {
                eprintln!(
                    "warning: the set-ups and servers run with this process's network ({why}); `--network inherit` says so on purpose"
                );
                Isolation::Inherit
            }
        },
    };
    if harness.ground.clock.is_some() && url.is_none() {
        let found = std::process::Command::new("faketime")
            .arg("--help")
            .output()
            .is_ok();
        anyhow::ensure!(
            found,
            "{}: `ground.clock` runs the server under libfaketime, and `faketime` is not on PATH (Debian: apt-get install faketime)",
            harness.path.display()
        );
    }
    let harness_dir = harness
        .path
        .parent()
        .filter(|d| !d.as_os_str().is_empty())
        .unwrap_or(Path::new("."))
        .canonicalize()?;
    Ok(Launch {
        command: server.command.clone(),
        url,
        setup,
        harness_dir,
        timeout: Duration::from_secs(server.timeout),
        isolate,
        protocol: server.protocol.into(),
    })
}

/// Every grounding call's new answer written into its file: the harness and each transcript
/// edited, loaded again and checked to hold the answers, then all written together.
fn write(
    harness: &Harness,
    transcripts: &[Transcript],
    rows: &[Row],
) -> anyhow::Result<Vec<PathBuf>> {
    let mut by_file: BTreeMap<PathBuf, Vec<(&Target, Option<&Value>)>> = BTreeMap::new();
    for r in rows {
        if !r.target.grounds {
            continue;
        }
        let v = match &r.answer {
            Answer::Differs(v) => Some(v),
            // A mock already the server's answer still gets `grounding: high`.
            Answer::Same if r.target.slot == ground::Slot::Mock => None,
            _ => continue,
        };
        by_file
            .entry(r.target.location.file.to_path_buf())
            .or_default()
            .push((r.target, v));
    }
    let cwd = std::env::current_dir()?;
    let absolute = |p: &Path| tidy(&cwd.join(p));
    let mut outdir = OutDir::new(&absolute(&project_root(&harness.path)), true);
    let mut paths = Vec::new();
    for (file, edits) in &by_file {
        let (text, is_harness) = if *file == harness.path {
            (harness.source.text.to_string(), true)
        } else {
            let t = transcripts
                .iter()
                .find(|t| t.path == *file)
                .ok_or_else(|| anyhow::anyhow!("{}: not a file of this suite", file.display()))?;
            anyhow::ensure!(
                is_yaml(file),
                "{}: a recorded run in a foreign format is compared, never rewritten; import it as YAML (`agent-seer import trace`) to ground its outputs",
                file.display()
            );
            (t.source.text.to_string(), false)
        };
        let after = ground::edit_file(&text, edits)
            .map_err(|e| anyhow::anyhow!("{}: {e}", file.display()))?;
        if after == text {
            continue;
        }
        verify(file, &text, &after, is_harness, edits)?;
        outdir.add(absolute(file), after)?;
        paths.push(file.clone());
    }
    if !paths.is_empty() {
        outdir.commit()?;
    }
    Ok(paths)
}

/// `a/./b/../c` as `a/c`, without touching the disk.
fn tidy(p: &Path) -> PathBuf {
    let mut out = PathBuf::new();
    for c in p.components() {
        match c {
            std::path::Component::CurDir => {}
            std::path::Component::ParentDir => {
                out.pop();
            }
            other => out.push(other),
        }
    }
    out
}

fn is_yaml(p: &Path) -> bool {
    p.extension().is_some_and(|e| e == "yaml" || e == "yml")
}

/// The edited text loads, and every edited call holds its new answer: calls are matched by
/// their place in document order (an edit that shortens a value moves every line below it).
fn verify(
    file: &Path,
    before: &str,
    after: &str,
    is_harness: bool,
    edits: &[(&Target, Option<&Value>)],
) -> anyhow::Result<()> {
    type Held = Vec<((u32, u32), Option<Value>)>;
    let calls = |text: &str| -> anyhow::Result<Held> {
        let source = SourceFile::from_text(file, text);
        Ok(if is_harness {
            let h = Harness::from_source(source)?;
            h.scenarios
                .iter()
                .flat_map(|s| &s.turns)
                .flat_map(|t| &t.workflow)
                .map(|o| {
                    (
                        (o.call.location.line, o.call.location.column),
                        o.mock_output.clone(),
                    )
                })
                .collect()
        } else {
            let id = file
                .file_stem()
                .unwrap_or_default()
                .to_string_lossy()
                .into_owned();
            let t = Transcript::from_source(source, id)?;
            t.calls()
                .map(|(_, c)| ((c.location.line, c.location.column), c.output.clone()))
                .collect()
        })
    };
    let (old, new) = (calls(before)?, calls(after)?);
    anyhow::ensure!(
        old.len() == new.len(),
        "{}: the edited file has {} calls where it had {} (nothing was written); report this with the file",
        file.display(),
        new.len(),
        old.len()
    );
    for (target, v) in edits {
        let at = (target.location.line, target.location.column);
        let i = old.iter().position(|(place, _)| *place == at);
        let held = i.and_then(|i| new[i].1.as_ref());
        anyhow::ensure!(
            held == v.or(target.recorded.as_ref()),
            "{}: {}: the edited file does not hold the new answer (nothing was written); report this with the file",
            file.display(),
            target.label
        );
    }
    Ok(())
}

#[allow(clippy::too_many_arguments)]
fn report(
    args: &Args,
    harness: &Harness,
    jobs: &[Job],
    skipped: &[(String, String)],
    rows: &[Row],
    failures: &[(String, u8)],
    written: &[PathBuf],
    out: &mut dyn Write,
) -> anyhow::Result<()> {
    let status = |a: &Answer| match a {
        Answer::Same => "same",
        Answer::Differs(_) => "differs",
        Answer::Refused(_) => "refused",
    };
    let location = |t: &Target| {
        format!(
            "{}:{}:{}",
            t.location.file.display(),
            t.location.line,
            t.location.column
        )
    };
    if args.format == Format::Json {
        let doc = json!({
            "harness": harness.path,
            "check": args.check,
            "runs": jobs.len(),
            "calls": rows.iter().filter(|r| r.target.grounds).map(|r| json!({
                "call": r.target.label,
                "location": location(r.target),
                "run": r.job,
                "status": status(&r.answer),
                "answer": match &r.answer { Answer::Differs(v) => v.clone(), _ => Value::Null },
                "error": match &r.answer { Answer::Refused(e) => Value::from(e.as_str()), _ => Value::Null },
            })).collect::<Vec<_>>(),
            "skipped": skipped.iter().map(|(s, why)| json!({"scenario": s, "why": why})).collect::<Vec<_>>(),
            "failed": failures.iter().map(|(e, _)| e).collect::<Vec<_>>(),
            "written": written,
        });
        writeln!(out, "{}", serde_json::to_string_pretty(&doc)?)?;
        return Ok(());
    }
    let grounding: Vec<&Row> = rows.iter().filter(|r| r.target.grounds).collect();
    for r in &grounding {
        match &r.answer {
            Answer::Same => {}
            Answer::Refused(e) => writeln!(
                out,
                "refused  {}: {}: the server refused the call: {e}",
                location(r.target),
                r.target.label
            )?,
            Answer::Differs(v) => {
                let verb = if args.check { "drift   " } else { "grounded" };
                match &r.target.recorded {
                    None => writeln!(
                        out,
                        "{verb} {}: {}: no {} was recorded",
                        location(r.target),
                        r.target.label,
                        r.target.slot.key()
                    )?,
                    Some(old) => {
                        writeln!(
                            out,
                            "{verb} {}: {}: the real server answers otherwise",
                            location(r.target),
                            r.target.label
                        )?;
                        if args.check {
                            for line in ground::answer_diff(old, v, r.target.slot.key()).lines() {
                                writeln!(out, "    {line}")?;
                            }
                        }
                    }
                }
            }
        }
    }
    for (s, why) in skipped {
        writeln!(out, "skipped  scenario `{s}`: {why}")?;
    }
    for (e, _) in failures {
        writeln!(out, "failed   {e}")?;
    }
    let count = |f: &dyn Fn(&Answer) -> bool| grounding.iter().filter(|r| f(&r.answer)).count();
    let same = count(&|a| matches!(a, Answer::Same));
    let differs = count(&|a| matches!(a, Answer::Differs(_)));
    let refused = count(&|a| matches!(a, Answer::Refused(_)));
    writeln!(
        out,
        "{}: {} call(s) in {} run(s) against the real server: {same} as recorded, {differs} {}, {refused} refused{}",
        harness.suite,
        grounding.len(),
        jobs.len(),
        if args.check { "drifted" } else { "new" },
        if failures.is_empty() {
            String::new()
        } else {
            format!(", {} run(s) failed", failures.len())
        }
    )?;
    for w in written {
        writeln!(out, "wrote    {}", w.display())?;
    }
    Ok(())
}
