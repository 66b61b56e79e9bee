//! Judge certification (issue 21, item 3): a judge's verdicts on labelled transcripts held
//! against their labels, before its scores may gate anything. The main entry is [`certify`],
//! which turns [`Item`]s (a transcript, its label, and every judge's repeats) into a
//! [`Certification`].
//!
//! Conventions, chosen once here:
//! - **Positive = broken.** A transcript labelled `expect: fail` is a positive; the judge calls
//!   it positive when its own TC is below the transcript's pass threshold. TPR is the share of
//!   broken transcripts the judge fails, TNR the share of correct ones it passes; each with the
//!   Wilson 95 % lower bound. Unlabelled transcripts (no `expect:`) are left out.
//! - **The first repeat is the judgement.** TPR, TNR, κ and the disagreements are over each
//!   judge's first repeat: the same request (and cache entry) a `judge::` trial makes, so the
//!   certificate is about the answers that gate. Repeats are not independent samples, so they
//!   never enlarge n.
//! - **Repeats.** Repeat r ≥ 2 carries `/repeat-r` in its cache tag: its own cache entry, so a
//!   live or recording run really asks again, and a replay answers each repeat from its own
//!   recording. The judge's requests have no seed (the structured-output [`crate::llm::Request`]
//!   carries none; only the agent's chat [`crate::llm::Sampling`] does), so at the judge's
//!   temperature 0 repeats measure the provider's own nondeterminism.
//! - **Self-consistency** is the share of transcripts on which all of a judge's repeats give
//!   the same verdict; **Krippendorff's α** is the nominal coefficient over the pass/fail
//!   verdicts, units = transcripts, raters = every (judge, repeat): across judges when
//!   `--judge` is given several times, across repeats otherwise.
//! - **Disagreement with the deterministic stack** is counted on the sub-dimensions the linter
//!   decides exactly: tool names (`selection_correctness` via `lint.unknown_tool`), parameter
//!   names (`argument_name`), required parameters (`argument_completeness`) and types
//!   (`argument_type`). `missed`: the linter reports an error there and the judge gives full
//!   marks. `invented`: no engine reports anything there, no error on the arguments or the
//!   tool choice could cascade into it (the rubric's cascade rule), and the judge docks it.

use serde::Serialize;

use super::{Job, Judged};
use crate::finding::{Severity, SubDimension};
use crate::harness::Expect;
use crate::stats;

/// The least TPR and TNR a certified judge has: `--min-tpr/--min-tnr`, or a harness's
/// `judge: { certify: { tpr, tnr } }`.
pub use crate::harness::CertifyBar as Bar;

/// One labelled transcript and what every judge said about it.
pub struct Item {
    /// Its trial-style name (`suite::transcript`).
    pub name: String,
    /// The transcript, its suite and its deterministic evaluation.
    pub job: Job,
    /// `judged[j][r]`: judge `j`'s repeat `r`, `None` where judging failed.
    pub judged: Vec<Vec<Option<Judged>>>,
}

impl Item {
    fn label(&self) -> Option<Expect> {
        self.job.transcript.label.expect
    }
}

/// A rate with its Wilson 95 % lower bound.
#[derive(Clone, Copy, Debug, PartialEq, Serialize)]
pub struct Rate {
    /// k / n.
    pub value: f64,
    /// The Wilson score interval's lower bound.
    pub lower: f64,
    /// Successes.
    pub k: usize,
    /// Trials.
    pub n: usize,
}

impl Rate {
    fn of(k: usize, n: usize) -> Option<Self> {
        Some(Rate {
            value: k as f64 / n as f64,
            lower: stats::wilson_lower(k, n)?,
            k,
            n,
        })
    }
}

/// The judge's first-repeat verdicts against the labels (positive = broken).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize)]
pub struct Confusion {
    /// Broken, and the judge failed it.
    pub tp: usize,
    /// Broken, and the judge passed it.
    #[serde(rename = "fn")]
    pub fn_: usize,
    /// Correct, and the judge passed it.
    pub tn: usize,
    /// Correct, and the judge failed it.
    pub fp: usize,
}

/// A judge contradicting the linter where the linter decides exactly.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Disagreement {
    /// The transcript.
    pub transcript: String,
    /// The sub-dimension (`argument_type`, …).
    pub sub_dimension: &'static str,
    /// `missed` (the linter reports an error, the judge gives full marks) or `invented` (no
    /// engine reports anything, the judge docks it).
    pub kind: &'static str,
    /// The judge's score there, 0–1.
    pub judge_score: f64,
    /// The linter's error codes there (empty for `invented`).
    pub codes: Vec<&'static str>,
}

/// One judge's certificate.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct JudgeCertificate {
    /// `provider:model`.
    pub judge: String,
    /// Repeats asked for.
    pub repeats: usize,
    /// Labelled transcripts its first repeat judged.
    pub judged: usize,
    /// Judgements (any repeat) that failed.
    pub failed: usize,
    /// First-repeat verdicts against the labels.
    pub confusion: Confusion,
    /// Broken transcripts failed; `None` without a broken transcript.
    pub tpr: Option<Rate>,
    /// Correct transcripts passed; `None` without a correct transcript.
    pub tnr: Option<Rate>,
    /// Cohen's κ of its verdicts against the labels.
    pub kappa: Option<f64>,
    /// The share of transcripts on which every repeat agrees; `None` with one repeat.
    pub self_consistency: Option<f64>,
    /// Krippendorff's α (nominal) across its repeats; `None` with one repeat.
    pub alpha_repeats: Option<f64>,
    /// Where it contradicts the linter.
    pub disagreements: Vec<Disagreement>,
    /// Against the bar, when there is one: both rates at or above it.
    pub certified: Option<bool>,
}

/// The whole report.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Certification {
    /// The positive class: always `fail` (a broken transcript).
    pub positive: &'static str,
    /// Labelled transcripts.
    pub transcripts: usize,
    /// Broken ones.
    pub broken: usize,
    /// broken / transcripts: the base rate κ corrects for.
    pub base_rate: f64,
    /// Krippendorff's α (nominal, pass/fail) across every (judge, repeat).
    pub alpha: Option<f64>,
    /// How many (judge, repeat) raters α is over.
    pub raters: usize,
    /// The bar, when there is one.
    pub bar: Option<Bar>,
    /// One certificate per judge, in the order given.
    pub judges: Vec<JudgeCertificate>,
}

impl Certification {
    /// Whether every judge clears the bar; `None` without one.
    pub fn certified(&self) -> Option<bool> {
        self.bar?;
        Some(self.judges.iter().all(|j| j.certified == Some(true)))
    }
}

/// The judge's own verdict on a transcript: fail when its TC is below the threshold.
fn says_fail(item: &Item, j: &Judged) -> bool {
    j.score.tc < item.job.evaluation.pass_threshold
}

/// Certifies `judges` (their specs, in the order of `Item::judged`) on `items`; unlabelled
/// items are skipped.
pub fn certify(judges: &[String], items: &[Item], bar: Option<Bar>) -> Certification {
    let labelled: Vec<&Item> = items.iter().filter(|i| i.label().is_some()).collect();
    let broken = labelled
        .iter()
        .filter(|i| i.label() == Some(Expect::Fail))
        .count();
    let mut all_units: Vec<Vec<usize>> = vec![Vec::new(); labelled.len()];
    let mut raters = 0;
    let mut certs = Vec::new();
    for (ji, spec) in judges.iter().enumerate() {
        let repeats = labelled
            .iter()
            .map(|i| i.judged.get(ji).map_or(0, Vec::len))
            .max()
            .unwrap_or(0);
        raters += repeats;
        let mut c = Confusion::default();
        let mut pairs = Vec::new();
        let mut failed = 0;
        let mut unanimous = (0, 0);
        let mut units = Vec::new();
        let mut disagreements = Vec::new();
        for (ui, item) in labelled.iter().enumerate() {
            let reps: &[Option<Judged>] = item.judged.get(ji).map_or(&[], Vec::as_slice);
            failed += reps.iter().filter(|r| r.is_none()).count();
            let verdicts: Vec<usize> = reps
                .iter()
                .flatten()
                .map(|j| usize::from(says_fail(item, j)))
                .collect();
            all_units[ui].extend(&verdicts);
            if verdicts.len() >= 2 {
                unanimous.1 += 1;
                unanimous.0 += usize::from(verdicts.iter().all(|v| *v == verdicts[0]));
            }
            units.push(verdicts);
            let Some(Some(first)) = reps.first() else {
                continue;
            };
            let truth = item.label() == Some(Expect::Fail);
            let said = says_fail(item, first);
            match (truth, said) {
                (true, true) => c.tp += 1,
                (true, false) => c.fn_ += 1,
                (false, false) => c.tn += 1,
                (false, true) => c.fp += 1,
            }
            pairs.push((truth, said));
            disagreements.extend(disagree(item, first));
        }
        let tpr = Rate::of(c.tp, c.tp + c.fn_);
        let tnr = Rate::of(c.tn, c.tn + c.fp);
        let certified = bar.map(|b| {
            tpr.is_some_and(|r| r.value >= b.tpr) && tnr.is_some_and(|r| r.value >= b.tnr)
        });
        certs.push(JudgeCertificate {
            judge: spec.clone(),
            repeats,
            judged: pairs.len(),
            failed,
            confusion: c,
            tpr,
            tnr,
            kappa: stats::cohen_kappa(&pairs),
            self_consistency: (unanimous.1 > 0).then(|| unanimous.0 as f64 / unanimous.1 as f64),
            alpha_repeats: if repeats >= 2 {
                stats::krippendorff_alpha_nominal(&units)
            } else {
                None
            },
            disagreements,
            certified,
        });
    }
    Certification {
        positive: "fail",
        transcripts: labelled.len(),
        broken,
        base_rate: if labelled.is_empty() {
            0.0
        } else {
            broken as f64 / labelled.len() as f64
        },
        alpha: if raters >= 2 {
            stats::krippendorff_alpha_nominal(&all_units)
        } else {
            None
        },
        raters,
        bar,
        judges: certs,
    }
}

/// The sub-dimensions the linter decides exactly, each with the lint codes that decide it.
const DECIDED: [(SubDimension, &[&str]); 4] = [
    (SubDimension::SelectionCorrectness, &["lint.unknown_tool"]),
    (SubDimension::ArgumentName, &["lint.unknown_param"]),
    (
        SubDimension::ArgumentCompleteness,
        &["lint.missing_required"],
    ),
    (
        SubDimension::ArgumentType,
        &["lint.type", "lint.arguments_not_object"],
    ),
];

/// Where `judged` contradicts the linter on `item` (see the module doc).
fn disagree(item: &Item, judged: &Judged) -> Vec<Disagreement> {
    let ev = &item.job.evaluation;
    if item.job.transcript.calls().next().is_none() {
        return Vec::new();
    }
    let errors_on = |d: SubDimension, codes: &[&str]| -> Vec<&'static str> {
        let mut v: Vec<&'static str> = ev
            .findings
            .iter()
            .filter(|f| f.severity == Severity::Error && f.sub_dimension == d)
            .map(|f| f.code.as_str())
            .filter(|c| codes.contains(c))
            .collect();
        v.dedup();
        v
    };
    // The cascade (the rubric's, and the oracle's after the seeds): a wrong tool or any
    // argument error may pull type, format and relevancy down, so docking them then is not
    // inventing.
    let cascade = ev.findings.iter().any(|f| {
        f.severity == Severity::Error
            && (f.sub_dimension == SubDimension::SelectionCorrectness
                || f.sub_dimension.dimension() == "arguments")
    });
    let mut out = Vec::new();
    for (d, codes) in DECIDED {
        let Some(score) = judged.score.sub.get(d) else {
            continue;
        };
        let lint = errors_on(d, codes);
        let anything = ev.findings.iter().any(|f| f.sub_dimension == d);
        let kind = if !lint.is_empty() && score >= 1.0 {
            "missed"
        } else if d != SubDimension::SelectionCorrectness && !anything && !cascade && score < 1.0 {
            // Selection is also the oracle's (a real but wrong tool): only `missed` is sure.
            "invented"
        } else {
            continue;
        };
        out.push(Disagreement {
            transcript: item.name.clone(),
            sub_dimension: d.as_str(),
            kind,
            judge_score: score,
            codes: lint,
        });
    }
    out
}

/// The request of repeat `r` (1-based) of a judgement: repeat 1 is the plain judgement (the
/// judge trials' cache entry); later repeats are told apart by their cache tag and carry the
/// seed `r` where the API takes one (OpenAI chat completions, Gemini), so a repeat is a seeded
/// sample, not only the provider's own nondeterminism.
pub(crate) fn repeat_request(mut req: crate::llm::Request, r: usize) -> crate::llm::Request {
    if r >= 2 {
        req.cache_tag = format!("{}/repeat-{r}", req.cache_tag);
        req.seed = u32::try_from(r).ok();
    }
    req
}

#[cfg(test)]
mod tests {
    use std::path::Path;
    use std::sync::Arc;

    use super::*;
    use crate::check::{Suite, evaluate};
    use crate::harness::Transcript;
    use crate::judge::{Mode, Verdict};

    fn items(names: &[&str], verdict: impl Fn(&Job) -> Verdict) -> Vec<Item> {
        let root = Path::new(env!("CARGO_MANIFEST_DIR"));
        let suite = Arc::new(Suite::load(&root.join("harnesses/lyria.yaml")).unwrap());
        names
            .iter()
            .map(|n| {
                let t =
                    Transcript::load(&root.join(format!("transcripts/lyria/{n}.yaml"))).unwrap();
                let ev = evaluate(&suite, &t).unwrap();
                let job = Job {
                    suite: suite.clone(),
                    transcript: t,
                    evaluation: ev,
                };
                let v = verdict(&job);
                let calls = job.transcript.calls().count();
                let judged = Judged {
                    score: v.score(calls),
                    coherence: v.coherence(false),
                    verdict: v,
                    mode: Mode::Enriched,
                };
                Item {
                    name: format!("lyria::{n}"),
                    job,
                    judged: vec![vec![Some(judged)]],
                }
            })
            .collect()
    }

    const LYRIA: [&str; 7] = [
        "ly0-correct",
        "ly1-wrong-param-model",
        "ly2-wrong-bucket-name",
        "ly3-hallucinated-model",
        "ly4-missing-prompt",
        "ly5-correct-pro",
        "ly6-malformed-count",
    ];

    fn full_marks(job: &Job) -> Verdict {
        let mut v = Verdict::from_score(job.evaluation.score.as_ref().unwrap());
        let mut perfect = crate::score::Score::from_sub(
            job.evaluation
                .score
                .as_ref()
                .unwrap()
                .sub
                .iter()
                .map(|(d, _)| (d, 1.0))
                .collect(),
        );
        perfect.ordering = job.evaluation.score.as_ref().unwrap().ordering;
        let p = Verdict::from_score(&perfect);
        v.usage = p.usage;
        v.selection = p.selection;
        v.ordering = p.ordering;
        v.arguments = p.arguments;
        v.failures.clear();
        v
    }

    /// A judge that passes everything: TPR 0 of the broken, TNR 1 of the correct, κ 0.
    #[test]
    fn always_pass() {
        let items = items(&LYRIA, full_marks);
        let c = certify(
            &["x:always-pass".into()],
            &items,
            Some(Bar { tpr: 0.8, tnr: 0.8 }),
        );
        assert_eq!((c.transcripts, c.broken), (7, 5));
        let j = &c.judges[0];
        assert_eq!(
            j.confusion,
            Confusion {
                tp: 0,
                fn_: 5,
                tn: 2,
                fp: 0
            }
        );
        assert_eq!(j.tpr.unwrap().value, 0.0);
        assert_eq!(j.tnr.unwrap().value, 1.0);
        // Wilson at 2 of 2: 1 / (1 + z²/2).
        assert!(
            (j.tnr.unwrap().lower - 2.0 / (2.0 + 1.959_963_984_540_054_f64.powi(2))).abs() < 1e-12
        );
        assert_eq!(j.kappa, Some(0.0), "a constant rater agrees by chance only");
        assert_eq!(c.certified(), Some(false));
        assert_eq!(j.self_consistency, None);
        assert_eq!(c.alpha, None, "one rater");
        // Full marks where the linter reports an error: each one a `missed` disagreement.
        let missed: Vec<(&str, &str, &[&str])> = j
            .disagreements
            .iter()
            .map(|d| (d.transcript.as_str(), d.sub_dimension, d.codes.as_slice()))
            .collect();
        let name: &[&str] = &["lint.unknown_param"];
        assert_eq!(
            missed,
            [
                ("lyria::ly1-wrong-param-model", "argument_name", name),
                ("lyria::ly2-wrong-bucket-name", "argument_name", name),
                (
                    "lyria::ly4-missing-prompt",
                    "argument_completeness",
                    &["lint.missing_required"][..]
                ),
            ]
        );
        assert!(j.disagreements.iter().all(|d| d.kind == "missed"));
    }

    /// The oracle's own scores as the judge: every label matched.
    #[test]
    fn perfect_judge() {
        let items = items(&LYRIA, |job| {
            Verdict::from_score(job.evaluation.score.as_ref().unwrap())
        });
        let c = certify(
            &["x:oracle".into()],
            &items,
            Some(Bar { tpr: 0.8, tnr: 0.8 }),
        );
        let j = &c.judges[0];
        assert_eq!((j.confusion.tp, j.confusion.tn), (5, 2));
        assert_eq!(j.kappa, Some(1.0));
        assert_eq!(c.certified(), Some(true));
        assert!(j.disagreements.is_empty(), "{:?}", j.disagreements);
    }

    /// Two repeats that split on one of seven transcripts: self-consistency 6/7, and α across
    /// the repeats by hand. Verdicts (1 = fail) per transcript, repeat 1 then 2:
    /// ly0 (0,0), ly1–ly4 (1,1), ly5 (0,1), ly6 (1,1). Coincidences: o(0,0) = 2, o(1,1) = 10,
    /// o(0,1) = o(1,0) = 1; n0 = 3, n1 = 11, n = 14. D_o = 2/14, D_e = 2·3·11/(14·13),
    /// α = 1 − (2/14)/(66/182) = 1 − 182/462 = 0.60606.
    #[test]
    fn repeats_give_self_consistency_and_alpha() {
        let fails = items(&["ly1-wrong-param-model"], |job| {
            Verdict::from_score(job.evaluation.score.as_ref().unwrap())
        });
        let mut items = items(&LYRIA, |job| {
            Verdict::from_score(job.evaluation.score.as_ref().unwrap())
        });
        for it in &mut items {
            let again = if it.name == "lyria::ly5-correct-pro" {
                // ly1's failing verdict, judged as if it were ly5's second answer.
                fails[0].judged[0][0].clone()
            } else {
                it.judged[0][0].clone()
            };
            it.judged[0].push(again);
        }
        let c = certify(&["x:twice".into()], &items, None);
        let j = &c.judges[0];
        assert_eq!(j.repeats, 2);
        assert!((j.self_consistency.unwrap() - 6.0 / 7.0).abs() < 1e-12);
        assert!((j.alpha_repeats.unwrap() - (1.0 - 182.0 / 462.0)).abs() < 1e-12);
        assert_eq!(c.alpha, j.alpha_repeats, "one judge: α across its repeats");
        assert_eq!(c.raters, 2);
        assert_eq!(j.kappa, Some(1.0), "the first repeat decides the rates");
        assert_eq!(c.certified(), None);
    }
}
