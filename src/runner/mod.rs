//! The `cargo test` driver: each trial of the plan ([`crate::check::plan`]) as one
//! libtest-mimic trial. Nothing else in the crate imports this module; the crate root
//! re-exports [`main`] as `agent_seer::harness::main`.
//!
//! Under nextest every trial is its own process, so `--exact NAME` plans only the trial that
//! NAME names ([`crate::check::plan`]'s exact form), loading one file. A trial's record goes to
//! the run directory ([`RunDir`]) and ends the libtest trial as the record says.

use std::path::Path;
use std::process::ExitCode;

use libtest_mimic::{Arguments, Completion, Failed, Trial};

use crate::check::{HarnessConfig, PlannedTrial, Status, TrialRecord, plan, plan_exact};
use crate::harness::{Layout, TrialId, TrialKind};
use crate::report::RunDir;

/// Runs the project's agent suites as `cargo test` trials. Call it from a `harness = false`
/// test target:
///
/// ```no_run
/// fn main() -> std::process::ExitCode {
///     agent_seer::harness::main()
/// }
/// ```
///
/// The configuration is read once, from the environment ([`HarnessConfig::from_env`]): the
/// project root is `AGENT_SEER_ROOT`, else `CARGO_MANIFEST_DIR` (set by cargo and nextest), else
/// the working directory. `harnesses/` and `transcripts/` under it can be moved with
/// `[package.metadata.agent-seer]` (`harnesses = "…"`, `transcripts = "…"`) or the
/// `AGENT_SEER_HARNESSES` / `AGENT_SEER_TRANSCRIPTS` variables.
pub fn main() -> ExitCode {
    let mut args = Arguments::from_args();
    let mut config = HarnessConfig::from_env();
    let (trials, root) = match config.layout() {
        Ok(layout) => {
            attach_judge(&mut config, &layout);
            (trials(&args, &layout, &config), layout.root)
        }
        Err(e) => {
            let t = PlannedTrial::failing(TrialId::setup("configuration"), e);
            (
                vec![(wrap(t, config.root.clone(), false, false), None)],
                config.root.clone(),
            )
        }
    };
    ignored_note(&args, &trials);
    // One trial (nextest's `--exact NAME`) runs on the main thread: a worker pool for it cost
    // two thread starts, and the trial's allocations a fresh malloc arena grown a page at a time.
    if trials.len() == 1 && args.test_threads.is_none() {
        args.test_threads = Some(1);
    }
    let trials = trials.into_iter().map(|(t, _)| t).collect();
    // Return the code instead of calling `Conclusion::exit` (datatest-stable#20: exit() breaks
    // coverage tools).
    let code = libtest_mimic::run(&args, trials).exit_code();
    // Every record is written: mark this process's file complete.
    if let Some(run) = RunDir::for_harness(&root)
        && let Err(e) = run.close()
    {
        #[allow(clippy::print_stderr)]
        {
            eprintln!("agent-seer: could not close the run report: {e}");
        }
        return ExitCode::FAILURE;
    }
    code
}

/// With the `judge` feature, a requested judge is attached (its client is built at its first
/// trial, so listing never touches the network or the key).
fn attach_judge(config: &mut HarnessConfig, layout: &Layout) {
    #[cfg(feature = "judge")]
    if let crate::check::JudgeSetup::Requested(req) = &config.judge {
        let judge = crate::judge::EnvJudge::new(req, layout.clone());
        config.judge = crate::check::JudgeSetup::Ready(std::sync::Arc::new(judge));
    }
    #[cfg(not(feature = "judge"))]
    let _ = (config, layout);
}

/// Says on stderr why the trials this run leaves out as ignored are ignored, one line per
/// reason (libtest prints a bare `ignored` for a trial ignored at discovery, and a lean build's
/// `judge::` trials looked broken). Not when listing (nextest reads the list), nor when the
/// ignored trials run anyway (`--ignored`, `--include-ignored`: each then ends with its reason).
fn ignored_note(args: &Arguments, trials: &[(Trial, Option<String>)]) {
    if args.list || args.ignored || args.include_ignored {
        return;
    }
    let mut reasons: std::collections::BTreeMap<&str, (usize, &str)> = Default::default();
    for (t, why) in trials {
        if let Some(why) = why
            && !args.is_filtered_out(t)
        {
            let e = reasons.entry(why.as_str()).or_insert((0, t.name()));
            e.0 += 1;
        }
    }
    for (why, (n, first)) in reasons {
        let others = match n {
            1 => String::new(),
            2 => " and 1 other".to_owned(),
            _ => format!(" and {} others", n - 1),
        };
        // The harness binary is the program here; libtest's stderr is the user's.
        #[allow(clippy::print_stderr)]
        {
            eprintln!("agent-seer: {first}{others} ignored: {why}");
        }
    }
}

/// The libtest trials (each with why it is ignored, if it is): the `--exact` fast path, or the
/// whole plan.
fn trials(
    args: &Arguments,
    layout: &Layout,
    config: &HarnessConfig,
) -> Vec<(Trial, Option<String>)> {
    let root = layout.root.clone();
    let exact = args
        .filter
        .as_deref()
        .filter(|_| args.exact && args.skip.is_empty());
    if let Some(name) = exact
        && let Some(t) = plan_exact(name, layout, config)
    {
        let why = t.ignored.clone();
        return vec![(wrap(t, root, config.bless, true), why)];
    }
    // Tests of the fast path set this: listing may scan, running one trial may not.
    if config.full_scan_forbidden && !args.list {
        let t = PlannedTrial::failing(
            TrialId::setup("full-scan-forbidden"),
            "AGENT_SEER_FULL_SCAN_FORBIDDEN is set but this run needs a full scan".to_owned(),
        );
        return vec![(wrap(t, root, false, false), None)];
    }
    let planned = plan(layout, config);
    // `--exact NAME` of a project the harness cannot start on: NAME fails with the reason,
    // instead of the filter leaving 0 tests and a green run.
    if let Some(name) = exact
        && let Ok(id) = name.parse::<TrialId>()
        && let Some(why) = planned
            .iter()
            .filter(|t| t.id.kind == TrialKind::Setup)
            .find_map(PlannedTrial::failure)
    {
        return vec![(
            wrap(PlannedTrial::failing(id, why.clone()), root, false, false),
            None,
        )];
    }
    planned
        .into_iter()
        .map(|t| {
            let why = t.ignored.clone();
            (wrap(t, root.clone(), config.bless, false), why)
        })
        .collect()
}

/// `only`: the process's one trial (`--exact NAME`), whose suite is not freed at its end.
fn wrap(planned: PlannedTrial, root: std::path::PathBuf, bless: bool, only: bool) -> Trial {
    let name = planned.id.to_string();
    let ignored = planned.ignored.is_some();
    Trial::ignorable_test(name, move || {
        // A panic in a trial becomes its failed record, so the run report holds every trial.
        let mut record =
            match std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| planned.run())) {
                Ok(record) => record,
                Err(panic) => {
                    let what = panic
                        .downcast_ref::<&str>()
                        .map(|s| (*s).to_owned())
                        .or_else(|| panic.downcast_ref::<String>().cloned())
                        .unwrap_or_else(|| "a panic without a message".to_owned());
                    TrialRecord::new(
                        &planned.id,
                        Status::Failed,
                        Some(format!("the trial panicked: {what}")),
                    )
                }
            };
        if bless && record.status == Status::Failed && record.kind == TrialKind::Transcript {
            let (harness, transcript) = planned.files();
            if let (Some(h), Some(t)) = (harness, transcript) {
                bless_trial(&mut record, h, t);
            }
        }
        let done = finish(&root, record);
        // The process ends with its one trial: freeing what it loaded (its suite's scenarios,
        // tools and matrices) was a twentieth of a one-trial process under nextest. With more
        // trials, a suite is freed after its last, as the process goes on.
        if only {
            std::mem::forget(planned);
        }
        done
    })
    .with_ignored_flag(ignored)
}

/// Writes a trial's record to the run directory and ends the trial as the record says.
fn finish(root: &Path, record: TrialRecord) -> Result<Completion, Failed> {
    if let Some(run) = RunDir::for_harness(root) {
        run.write(&record)
            .map_err(|e| format!("could not write the run report: {e}"))?;
    }
    match record.status {
        Status::Passed => Ok(Completion::Completed),
        Status::Xfailed | Status::Ignored => {
            Ok(Completion::ignored_with(record.message.unwrap_or_default()))
        }
        Status::Failed => Err(record.message.unwrap_or_default().into()),
    }
}

/// Blesses a failing transcript trial: on success the diff goes to stderr (libtest shows it)
/// and the trial passes saying what it changed; otherwise the failure says why not.
fn bless_trial(record: &mut TrialRecord, harness: &Path, transcript: &Path) {
    use crate::bless::{Blessing, bless_and_apply};
    let note = match bless_and_apply(harness, transcript) {
        Ok(Blessing::Edit(edit)) => {
            // The harness binary is the program here; stdout belongs to libtest, and the user
            // asked to see what bless changes.
            #[allow(clippy::print_stderr)]
            {
                eprintln!("blessed {}: {}\n{}", record.name, edit.what, edit.diff());
            }
            record.status = Status::Passed;
            record.message = Some(format!("blessed: {}", edit.what));
            return;
        }
        Ok(Blessing::Unchanged) => "not blessed: it passes when checked again".to_owned(),
        Ok(Blessing::Refused(why)) => format!("not blessed: {why}"),
        Err(e) => format!("not blessed: {}", e.render()),
    };
    let message = record.message.get_or_insert_with(String::new);
    message.push_str("\n\n");
    message.push_str(&note);
}
