//! `judge::<suite>::<transcript>` trials: the deterministic evaluation, then the LLM judge.
//!
//! The combined verdict: deterministic errors always fail; the judge can lower a passing
//! score (TC = the lower of the oracle's and the judge's), never raise a failing one. The
//! trial passes when that verdict agrees with the transcript's label. The judge is
//! `AGENT_SEER_JUDGE=provider:model`; `AGENT_SEER_JUDGE_MODE=raw-spec` reproduces the seeds'
//! baseline; `AGENT_SEER_LLM=replay` answers only from the committed cache.

use std::path::{Path, PathBuf};
use std::sync::OnceLock;

use libtest_mimic::Trial;

use super::{LazySuite, Status, Verdict, evaluate};
use crate::harness::{Expect, Layout, Transcript};
use crate::judge::{self, Mode};
use crate::llm::{Client, LlmConfig};
use crate::report::{JudgeRecord, ScoreRecord, TranscriptRecord, TrialRecord};

/// Whether a judge is configured (decided at discovery, from the environment only).
pub(super) fn configured() -> bool {
    std::env::var_os("AGENT_SEER_JUDGE").is_some_and(|v| !v.is_empty())
}

fn mode() -> Mode {
    match std::env::var("AGENT_SEER_JUDGE_MODE").as_deref() {
        Ok("raw-spec") => Mode::RawSpec,
        _ => Mode::Enriched,
    }
}

/// One client and one runtime per process, shared by the trials.
fn client(cache: PathBuf) -> Result<&'static Client, String> {
    static CLIENT: OnceLock<Result<Client, String>> = OnceLock::new();
    CLIENT
        .get_or_init(|| {
            let spec = std::env::var("AGENT_SEER_JUDGE")
                .map_err(|_| "AGENT_SEER_JUDGE is not set".to_owned())?;
            LlmConfig::from_env(&spec, cache)
                .and_then(Client::new)
                .map_err(|e| e.to_string())
        })
        .as_ref()
        .map_err(Clone::clone)
}

pub(crate) fn runtime() -> Result<&'static tokio::runtime::Runtime, String> {
    static RT: OnceLock<Result<tokio::runtime::Runtime, String>> = OnceLock::new();
    RT.get_or_init(|| {
        tokio::runtime::Builder::new_multi_thread()
            .worker_threads(2)
            .enable_all()
            .build()
            .map_err(|e| e.to_string())
    })
    .as_ref()
    .map_err(Clone::clone)
}

pub(super) fn trial(
    lazy: &LazySuite,
    layout: &Layout,
    id: &str,
    path: PathBuf,
    configured: bool,
) -> Trial {
    let lazy = lazy.clone();
    let dir = layout.harnesses.clone();
    let cache = layout.llm_cache.clone();
    let root = layout.root.clone();
    let name = format!("judge::{}::{id}", lazy.name);
    Trial::ignorable_test(name.clone(), move || {
        let record = judged(&lazy, &dir, &cache, &path, &name)
            .unwrap_or_else(|e| TrialRecord::bare(&name, &lazy.name, Status::Failed, Some(e)));
        super::finish(&root, record)
    })
    .with_ignored_flag(!configured)
}

/// Judges one transcript: its record holds the deterministic evaluation and the judge's view.
fn judged(
    lazy: &LazySuite,
    dir: &Path,
    cache: &Path,
    path: &Path,
    name: &str,
) -> Result<TrialRecord, String> {
    let suite = lazy.get(dir).map_err(|e| e.render())?;
    let t = Transcript::load(path).map_err(|e| e.render())?;
    let ev = evaluate(&suite, &t).map_err(|e| e.render())?;
    let scenario = t
        .scenario
        .as_deref()
        .and_then(|s| suite.harness.scenario(s));
    let client = client(cache.to_path_buf())?;
    let mode = mode();
    let judged = runtime()?
        .block_on(judge::judge(client, &suite, &t, scenario, &ev, mode))
        .map_err(|e| format!("the judge failed: {e}"))?;
    let pass = suite.harness.thresholds.pass;
    let oracle_tc = ev.score.as_ref().map(|s| s.tc);
    let combined = oracle_tc.unwrap_or(1.0).min(judged.score.tc);
    let verdict = if ev.errors() > 0 || combined + 1e-9 < pass {
        Verdict::Fail
    } else {
        Verdict::Pass
    };
    let want = t.label.expect.unwrap_or(Expect::Pass);
    let agrees = matches!(
        (want, verdict),
        (Expect::Pass, Verdict::Pass) | (Expect::Fail, Verdict::Fail)
    );
    let summary = format!(
        "judge TC {:.3}, oracle TC {:.3}, combined {combined:.3} (pass at {pass:.3}); {} error finding(s); coherence {:.3}\nrationale: {}",
        judged.score.tc,
        oracle_tc.unwrap_or(1.0),
        ev.errors(),
        judged.coherence,
        judged.verdict.rationale
    );
    let agrees = if agrees {
        Ok(())
    } else {
        Err(format!(
            "expected {want:?}, the combined verdict is {verdict:?}\n{summary}"
        ))
    };
    let (status, message) = super::status(agrees, t.label.xfail.as_deref());
    let mut r = TrialRecord::bare(name, &lazy.name, status, message);
    r.transcript = Some(TranscriptRecord::new(path, &ev, &t.label, None));
    r.judge = Some(JudgeRecord {
        judge: format!(
            "{}:{}",
            client.config().provider.name(),
            client.config().model
        ),
        mode: match mode {
            Mode::Enriched => "enriched",
            Mode::RawSpec => "raw-spec",
        }
        .to_owned(),
        score: ScoreRecord::from(&judged.score),
        coherence: judged.coherence,
        rationale: judged.verdict.rationale.clone(),
        oracle_tc,
        combined_tc: combined,
        verdict,
    });
    Ok(r)
}
