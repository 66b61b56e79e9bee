//! The judge in the harness: [`EnvJudge`] runs `judge::<suite>::<transcript>` trials for the
//! trial plan, and [`combine`] is the one rule that joins the judge's score with the engines'.
//!
//! The combined verdict: deterministic errors always fail; the judge can lower a passing
//! score (TC = the lower of the oracle's and the judge's), never raise a failing one.
//! `AGENT_SEER_JUDGE_MODE=raw-spec` reproduces the seeds' baseline; `AGENT_SEER_LLM=replay`
//! answers only from the committed cache.

use std::path::PathBuf;
use std::sync::OnceLock;

use super::{Judged, Mode, judge};
use crate::check::{
    Evaluation, JudgeError, JudgeRecord, JudgeRequest, ScoreRecord, Suite, Verdict,
};
use crate::harness::Transcript;
use crate::llm::{Client, LlmConfig, LlmError};

/// The combined TC and verdict of a judged transcript: TC is the lower of the oracle's (1
/// without a scenario) and the judge's; any error finding fails, whatever the scores.
pub fn combine(ev: &Evaluation, judged: &Judged) -> (f64, Verdict) {
    let tc = ev.score.as_ref().map_or(1.0, |s| s.tc).min(judged.score.tc);
    (
        tc,
        crate::score::verdict(Some(tc), ev.errors() > 0, ev.pass_threshold),
    )
}

/// The judge `AGENT_SEER_JUDGE` names, its client built at the first trial that needs it (so
/// listing trials never reads a key), shared by every trial of the process.
pub(crate) struct EnvJudge {
    spec: String,
    mode: Mode,
    cache: PathBuf,
    client: OnceLock<Result<Client, LlmError>>,
    runtime: OnceLock<Result<tokio::runtime::Runtime, std::sync::Arc<std::io::Error>>>,
}

impl EnvJudge {
    /// The judge a request names, answering from (and recording to) `cache`.
    pub(crate) fn new(request: &JudgeRequest, cache: PathBuf) -> Self {
        Self {
            spec: request.spec.clone(),
            mode: if request.raw_spec {
                Mode::RawSpec
            } else {
                Mode::Enriched
            },
            cache,
            client: OnceLock::new(),
            runtime: OnceLock::new(),
        }
    }

    fn client(&self) -> Result<&Client, JudgeError> {
        self.client
            .get_or_init(|| {
                LlmConfig::from_env(&self.spec, self.cache.clone()).and_then(Client::new)
            })
            .as_ref()
            .map_err(|e| JudgeError::Setup(Box::new(e.clone())))
    }

    fn runtime(&self) -> Result<&tokio::runtime::Runtime, JudgeError> {
        self.runtime
            .get_or_init(|| {
                tokio::runtime::Builder::new_multi_thread()
                    .worker_threads(2)
                    .enable_all()
                    .build()
                    .map_err(std::sync::Arc::new)
            })
            .as_ref()
            .map_err(|e| JudgeError::Setup(Box::new(e.clone())))
    }
}

impl crate::check::Judge for EnvJudge {
    fn judge(
        &self,
        suite: &Suite,
        t: &Transcript,
        ev: &Evaluation,
    ) -> Result<JudgeRecord, JudgeError> {
        let client = self.client()?;
        let scenario = suite.scenario_of(t);
        let judged = self
            .runtime()?
            .block_on(judge(client, suite, t, scenario, ev, self.mode))
            .map_err(|e| JudgeError::Failed(Box::new(e)))?;
        let (combined_tc, verdict) = combine(ev, &judged);
        Ok(JudgeRecord {
            judge: format!(
                "{}:{}",
                client.config().provider.name(),
                client.config().model
            ),
            mode: match self.mode {
                Mode::Enriched => "enriched",
                Mode::RawSpec => "raw-spec",
            }
            .to_owned(),
            score: ScoreRecord::from(&judged.score),
            coherence: judged.coherence,
            rationale: judged.verdict.rationale.clone(),
            oracle_tc: ev.score.as_ref().map(|s| s.tc),
            combined_tc,
            verdict,
        })
    }
}
