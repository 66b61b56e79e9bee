//! The judge in the harness: [`EnvJudge`] runs `judge::<suite>::<transcript>` trials for the
//! trial plan, and [`combine`] is the one rule that joins the judge's score with the engines'.
//!
//! The combined verdict: deterministic errors always fail; the judge can lower a passing
//! score (TC = the lower of the oracle's and the judge's), never raise a failing one.
//! `AGENT_SEER_JUDGE_MODE=raw-spec` reproduces the seeds' baseline; `AGENT_SEER_LLM=replay`
//! answers only from the committed cache.
//!
//! A suite with `judge: { certify: { tpr, tnr } }` lets the judge gate only once it is
//! certified on the suite's labelled transcripts ([`super::certify`]): worked out at the
//! suite's first judge trial, once per process, from the same requests the trials make (so
//! through the judge cache: a second process, as nextest runs them, asks nothing new). An
//! uncertified judge fails every judge trial of the suite, naming what it measured: its scores
//! then say nothing about the agent, and passing them as "not gating" would let a broken
//! judge switch the gate off silently.

use std::collections::HashMap;
use std::path::PathBuf;
use std::sync::{Arc, Mutex, OnceLock};

use super::{Job, Judged, Mode, certify, judge};
use crate::check::{
    Evaluation, JudgeError, JudgeRecord, JudgeRequest, ScoreRecord, Suite, Verdict,
};
use crate::harness::{Layout, Transcript};
use crate::llm::{Client, LlmConfig, LlmError};

/// A suite's certification, worked out once: `Ok(None)` certified, `Ok(Some(why))` not.
type Certified = Arc<OnceLock<Result<Option<String>, String>>>;

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
    layout: Layout,
    certified: Mutex<HashMap<String, Certified>>,
    client: OnceLock<Result<Client, LlmError>>,
    runtime: OnceLock<Result<tokio::runtime::Runtime, std::sync::Arc<std::io::Error>>>,
}

impl EnvJudge {
    /// The judge a request names, answering from (and recording to) the layout's cache.
    pub(crate) fn new(request: &JudgeRequest, layout: Layout) -> Self {
        Self {
            spec: request.spec.clone(),
            mode: if request.raw_spec {
                Mode::RawSpec
            } else {
                Mode::Enriched
            },
            cache: layout.llm_cache.clone(),
            layout,
            certified: Mutex::default(),
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

impl EnvJudge {
    /// Whether the judge may gate `suite`'s trials: `Ok` without a bar or when certified.
    fn certified(&self, suite: &Suite) -> Result<(), JudgeError> {
        let Some(bar) = suite.harness.certify else {
            return Ok(());
        };
        let cell = self
            .certified
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .entry(suite.harness.suite.clone())
            .or_default()
            .clone();
        match cell.get_or_init(|| self.certify(suite, bar)) {
            Ok(None) => Ok(()),
            Ok(Some(why)) => Err(JudgeError::Uncertified(why.clone())),
            Err(e) => Err(JudgeError::Failed(e.clone().into())),
        }
    }

    /// Judges the suite's labelled transcripts and holds the judge to `bar`.
    fn certify(&self, suite: &Suite, bar: certify::Bar) -> Result<Option<String>, String> {
        let name = &suite.harness.suite;
        let client = self.client().map_err(|e| e.to_string())?;
        let runtime = self.runtime().map_err(|e| e.to_string())?;
        let files =
            crate::harness::suite_transcripts(&self.layout, name).map_err(|e| e.render())?;
        // Jobs own their suite; the trait lends this one, so it is loaded once more here.
        let shared = Arc::new(Suite::load(&suite.harness.path).map_err(|e| e.render())?);
        let mut labelled = Vec::new();
        for (id, path) in files {
            let t = crate::check::load_transcript(suite, &path).map_err(|e| e.render())?;
            if t.label.expect.is_none() {
                continue;
            }
            let evaluation = crate::check::evaluate(suite, &t).map_err(|e| e.render())?;
            let job = Job {
                suite: shared.clone(),
                transcript: t,
                evaluation,
            };
            labelled.push((format!("{name}::{id}"), job));
        }
        let jobs: Vec<Job> = labelled.iter().map(|(_, j)| j.clone()).collect();
        let results = runtime.block_on(super::judge_many(client, jobs, self.mode));
        let mut items = Vec::new();
        for ((n, job), r) in labelled.into_iter().zip(results) {
            let judged = r.map_err(|e| {
                format!("certifying the judge on suite `{name}`: judging {n} failed: {e}")
            })?;
            items.push(certify::Item {
                name: n,
                job,
                judged: vec![vec![Some(judged)]],
            });
        }
        let spec = format!(
            "{}:{}",
            client.config().provider.name(),
            client.config().model
        );
        let c = certify::certify(std::slice::from_ref(&spec), &items, Some(bar));
        let Some(j) = c.judges.first() else {
            return Ok(None);
        };
        if j.certified == Some(true) {
            return Ok(None);
        }
        let rate = |r: &Option<certify::Rate>| match r {
            Some(r) => format!(
                "{:.3} ({}/{}, 95% lower bound {:.3})",
                r.value, r.k, r.n, r.lower
            ),
            None => "- (no such transcript)".to_owned(),
        };
        Ok(Some(format!(
            "the judge {spec} is not certified for suite `{name}`, so its trials cannot gate: \
             TPR {} and TNR {} on {} labelled transcripts (positive = broken), below the suite's \
             `judge: {{ certify: {{ tpr: {}, tnr: {} }} }}`; see `agent-seer judge-certify --judge {spec} {}`",
            rate(&j.tpr),
            rate(&j.tnr),
            c.transcripts,
            bar.tpr,
            bar.tnr,
            suite.harness.path.display()
        )))
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
        self.certified(suite)?;
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

#[cfg(test)]
mod tests {
    use std::path::Path;
    use std::time::Duration;

    use super::*;
    use crate::check::Judge as _;
    use crate::judge::{Verdict, request};
    use crate::llm::{Answer, CacheMode, Provider, Usage};

    /// A copy of the Lyria suite whose harness asks for a certified judge, in a temp dir.
    fn certifying_project() -> (tempfile::TempDir, Layout) {
        let repo = Path::new(env!("CARGO_MANIFEST_DIR"));
        let dir = tempfile::tempdir().unwrap();
        for sub in ["harnesses", "capabilities", "transcripts/lyria"] {
            std::fs::create_dir_all(dir.path().join(sub)).unwrap();
            for e in std::fs::read_dir(repo.join(sub)).unwrap() {
                let p = e.unwrap().path();
                if p.is_file() {
                    std::fs::copy(&p, dir.path().join(sub).join(p.file_name().unwrap())).unwrap();
                }
            }
        }
        let h = dir.path().join("harnesses/lyria.yaml");
        let text = std::fs::read_to_string(&h).unwrap().replace(
            "suite: lyria\n",
            "suite: lyria\njudge: { certify: { tpr: 0.8, tnr: 0.8 } }\n",
        );
        std::fs::write(&h, text).unwrap();
        let layout = Layout::under(dir.path());
        (dir, layout)
    }

    /// A replay-only judge whose cache answers every Lyria transcript with `answer(oracle)`.
    fn judge_answering(layout: &Layout, answer: impl Fn(&Verdict) -> Verdict) -> EnvJudge {
        let client = Client::new(LlmConfig {
            provider: Provider::OpenAi {
                base_url: "http://127.0.0.1:9".into(),
                key: None,
            },
            model: "hand-made".into(),
            timeout: Duration::from_secs(1),
            concurrency: 1,
            max_retries: 0,
            min_backoff: Duration::from_millis(1),
            max_backoff: Duration::from_millis(1),
            cache_dir: layout.llm_cache.clone(),
            mode: CacheMode::Replay,
        })
        .unwrap();
        let suite = Suite::load(&layout.harnesses.join("lyria.yaml")).unwrap();
        for (_, path) in crate::harness::suite_transcripts(layout, "lyria").unwrap() {
            let t = Transcript::load(&path).unwrap();
            let ev = crate::check::evaluate(&suite, &t).unwrap();
            let req = request(&suite, &t, suite.scenario_of(&t), &ev, Mode::Enriched);
            let v = answer(&Verdict::from_score(ev.score.as_ref().unwrap()));
            let text = serde_json::to_string(&v).unwrap();
            let a = Answer {
                text,
                usage: Usage::default(),
                truncated: false,
                cached: false,
            };
            client
                .cache()
                .put_with_source(
                    &client.cache_key(&req),
                    "openai",
                    "hand-made",
                    &req,
                    &a,
                    "hand-written: a test's",
                )
                .unwrap();
        }
        let req = JudgeRequest {
            spec: "openai:hand-made".into(),
            raw_spec: false,
        };
        let j = EnvJudge::new(&req, layout.clone());
        let _ = j.client.set(Ok(client));
        j
    }

    fn judge_ly0(j: &EnvJudge, layout: &Layout) -> Result<JudgeRecord, JudgeError> {
        let suite = Suite::load(&layout.harnesses.join("lyria.yaml")).unwrap();
        let t = Transcript::load(&layout.transcripts.join("lyria/ly0-correct.yaml")).unwrap();
        let ev = crate::check::evaluate(&suite, &t).unwrap();
        j.judge(&suite, &t, &ev)
    }

    /// A judge that passes everything fails the suite's bar: every judge trial fails, naming
    /// the measured rates and the bar.
    #[test]
    fn an_uncertified_judge_cannot_gate() {
        let (_dir, layout) = certifying_project();
        let j = judge_answering(&layout, |v| {
            let mut v = v.clone();
            for s in [
                &mut v.selection.correctness,
                &mut v.selection.specificity,
                &mut v.selection.completeness,
                &mut v.arguments.completeness,
                &mut v.arguments.name_accuracy,
                &mut v.arguments.value_accuracy,
                &mut v.arguments.type_compliance,
                &mut v.arguments.format_compliance,
                &mut v.arguments.relevancy,
                &mut v.usage.necessity,
            ] {
                *s = 10;
            }
            v.failures.clear();
            v
        });
        let Err(JudgeError::Uncertified(why)) = judge_ly0(&j, &layout) else {
            panic!("an always-pass judge is not certified");
        };
        assert!(
            why.contains("TPR 0.000 (0/5, 95% lower bound 0.000) and TNR 1.000 (2/2, 95% lower bound 0.342) on 7 labelled transcripts"),
            "{why}"
        );
        assert!(
            why.contains("`judge: { certify: { tpr: 0.8, tnr: 0.8 } }`"),
            "{why}"
        );
    }

    /// A judge that agrees with the labels is certified, and its trials run as ever.
    #[test]
    fn a_certified_judge_gates() {
        let (_dir, layout) = certifying_project();
        let j = judge_answering(&layout, Verdict::clone);
        let r = judge_ly0(&j, &layout).unwrap();
        assert_eq!(r.verdict, crate::check::Verdict::Pass);
    }
}
