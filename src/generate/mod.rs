//! Generation (paper §3, Appendix D): from a tool spec to a harness, in four stages — interpret
//! each tool, write scenarios with an oracle workflow, mock each call's output, expand into
//! turns. Every stage's output is validated (serde plus checks against the spec and the
//! linter); an invalid answer is asked again with the problem fed back (3 attempts), then the
//! record is dropped and counted, never written.
//!
//! The stages are [`interpret`], [`scenarios`] (with the coverage loop), [`mocks`] and
//! [`expand`]; [`write`](mod@write) turns their records into harness YAML. The main type is
//! [`Generator`], built with [`Generator::new`], whose [`Report`] counts what each stage
//! produced, retried and dropped.
//!
//! Within a stage the independent records (every tool, a coverage round's batches, every
//! scenario) run concurrently, up to the client's concurrency cap, and are merged in input
//! order (see `ordered`): the harness and the report are the same at any concurrency. The
//! stages, and the coverage rounds, stay in sequence.

pub mod expand;
pub mod interpret;
pub mod mocks;
mod ordered;
pub mod scenarios;
pub mod write;

use std::collections::BTreeMap;

use serde::Serialize;

use crate::llm::Client;
use crate::spec::{Capabilities, ToolSet};

/// What a stage did, for the generation report.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize)]
pub struct StageCounts {
    /// Records that validated and were kept.
    pub produced: usize,
    /// Records that needed more than one attempt.
    pub retried: usize,
    /// Records dropped after the last attempt, with why.
    pub dropped: Vec<String>,
}

/// The generation report: per stage, what was produced, retried and dropped.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize)]
pub struct Report {
    /// Keyed by stage: `interpret`, `scenarios`, `mocks`, `expand` (a stage that made no
    /// request has no entry).
    pub stages: BTreeMap<&'static str, StageCounts>,
}

/// A spec, its capability matrices, and the model that writes.
pub struct Generator<'a> {
    /// The writing model; its cache and ledger serve every stage.
    pub client: &'a Client,
    /// The tool spec the harness is generated for.
    pub spec: &'a ToolSet,
    /// The server's capability matrices; their facts go into stage 1's prompts.
    pub caps: &'a [Capabilities],
    /// What each stage produced, retried and dropped so far.
    pub report: Report,
    /// Told of each stage answer.
    pub progress: Option<crate::check::Progress>,
}

impl<'a> Generator<'a> {
    /// A generator with an empty report and no progress callback.
    pub fn new(client: &'a Client, spec: &'a ToolSet, caps: &'a [Capabilities]) -> Self {
        Self {
            client,
            spec,
            caps,
            report: Report::default(),
            progress: None,
        }
    }

    /// One validated record for `stage`, with what it adds to the stage's counts: produced
    /// (and retried when the provider gave more than one answer for it), or dropped with why
    /// when it never validated. Other errors (the API failing) end the stage. It changes
    /// nothing itself, so records can run side by side; [`Generator::tally`] adds the counts
    /// in input order.
    async fn record<T, F>(
        &self,
        stage: &'static str,
        label: &str,
        req: &crate::llm::Request,
        check: F,
    ) -> Result<(Option<T>, StageCounts), crate::llm::LlmError>
    where
        T: serde::de::DeserializeOwned,
        F: Fn(&T) -> Result<(), String>,
    {
        let (result, answers) = self.client.structured_counted(req, check).await;
        if let Some(p) = &self.progress {
            p.tick(&format!(
                "{stage}: {label}{}",
                if result.is_ok() { "" } else { " (dropped)" }
            ));
        }
        let mut counts = StageCounts::default();
        match result {
            Ok(t) => {
                counts.produced = 1;
                counts.retried = usize::from(answers > 1);
                Ok((Some(t), counts))
            }
            Err(crate::llm::LlmError::InvalidOutput { problem, .. }) => {
                counts.dropped.push(format!("{label}: {problem}"));
                Ok((None, counts))
            }
            Err(e) => Err(e),
        }
    }

    /// Adds one record's counts to `stage`'s (the stage gets an entry on its first record).
    fn tally(&mut self, stage: &'static str, counts: StageCounts) {
        let total = self.report.stages.entry(stage).or_default();
        total.produced += counts.produced;
        total.retried += counts.retried;
        total.dropped.extend(counts.dropped);
    }

    /// The cache key of each request: records with the same one run one after another.
    fn keys(&self, reqs: &[crate::llm::Request]) -> Vec<String> {
        reqs.iter().map(|r| self.client.cache_key(r)).collect()
    }
}

#[cfg(test)]
mod tests {
    use std::path::Path;

    use serde_json::json;

    use super::interpret::ToolExplanation;
    use super::mocks::{Mocked, Seeds, load_seeds};
    use super::scenarios::{GeneratedCall, GeneratedScenario, Plan};
    use super::*;
    use crate::harness::{Grounding, Tier};

    fn fixture() -> (ToolSet, Vec<Capabilities>, Client, Seeds) {
        let root = Path::new(env!("CARGO_MANIFEST_DIR"));
        let spec = ToolSet::load(&root.join("harnesses/nanobanana.tools.json")).unwrap();
        let caps =
            vec![Capabilities::load(&root.join("capabilities/mcp-nanobanana-go.yaml")).unwrap()];
        let client = interpret::tests::offline_client();
        let seeds = load_seeds(
            &json!({"samples": [{"tool": "nanobanana_image_generation", "result": {"content": [{"type": "text", "text": "Generated and saved 1 image(s): gs://b/x.png"}]}}]}),
        );
        (spec, caps, client, seeds)
    }

    fn scenario() -> GeneratedScenario {
        GeneratedScenario {
            title: "Hero image".into(),
            tier: Tier::Simple,
            category: "Marketing".into(),
            prompt: "A 16:9 hero image of a solar city, saved to gs://b/out/.".into(),
            agent_workflow: vec![GeneratedCall {
                function_name: "nanobanana_image_generation".into(),
                parameters: json!({"prompt": "a solar city", "aspect_ratio": "16:9", "gcs_bucket_uri": "b/out/"}),
                quick_explanation: "one image".into(),
            }],
            novelty_reason: "ratios are model-dependent".into(),
            agent_followup: "a square one too".into(),
        }
    }

    #[test]
    fn stage_prompts() {
        let (spec, caps, client, seeds) = fixture();
        let g = Generator::new(&client, &spec, &caps);
        let t = ToolExplanation {
            tool_name: "nanobanana_image_generation".into(),
            what_it_does: "Makes images.".into(),
            what_it_needs: "A prompt.".into(),
            why_its_used: "Campaigns.".into(),
            enterprise_context: vec!["Marketing".into()],
        };
        let r = scenarios::request(
            &[&t],
            &g,
            &Plan::default(),
            &["nanobanana_image_generation".to_owned()],
        );
        insta::assert_snapshot!("scenarios_system", r.system);
        insta::assert_snapshot!("scenarios_user", r.user);
        let r = mocks::request(&g, &scenario(), &seeds);
        insta::assert_snapshot!("mocks_system", r.system);
        insta::assert_snapshot!("mocks_user", r.user);
        let m = Mocked {
            scenario: scenario(),
            outputs: vec![
                json!({"content": [{"type": "resource_link", "uri": "gs://b/out/x.png"}]}),
            ],
            grounding: vec![Grounding::High],
            expected_response: "gs://b/out/x.png".into(),
        };
        let r = expand::request(&m);
        insta::assert_snapshot!("expand_system", r.system);
        insta::assert_snapshot!("expand_user", r.user);
    }

    #[test]
    fn expansion_checks() {
        let mut s = scenario();
        s.agent_workflow.push(s.agent_workflow[0].clone());
        let m = Mocked {
            scenario: s,
            outputs: vec![json!({}), json!({})],
            grounding: vec![Grounding::Low; 2],
            expected_response: String::new(),
        };
        let turn = |calls: Vec<usize>| expand::ExpandedTurn {
            prompt: "p".into(),
            calls,
            followup: "f".into(),
        };
        assert!(
            expand::check(
                &m,
                &expand::Expansion {
                    turns: vec![turn(vec![1]), turn(vec![2])]
                }
            )
            .is_ok()
        );
        let err = expand::check(
            &m,
            &expand::Expansion {
                turns: vec![turn(vec![2]), turn(vec![1])],
            },
        )
        .unwrap_err();
        assert!(err.contains("exactly once, in order"), "{err}");
        assert!(
            expand::check(
                &m,
                &expand::Expansion {
                    turns: vec![turn(vec![1, 2, 2])]
                }
            )
            .is_err()
        );
    }

    #[test]
    fn the_harness_loads_as_generated() {
        let mut s = scenario();
        s.agent_workflow.push(GeneratedCall {
            function_name: "nanobanana_image_generation".into(),
            parameters: json!({"prompt": "a square one", "aspect_ratio": "1:1"}),
            quick_explanation: "the follow-up".into(),
        });
        let m = Mocked {
            scenario: s,
            outputs: vec![
                json!({"content": []}),
                json!({"content": [{"type": "text", "text": "ok"}]}),
            ],
            grounding: vec![Grounding::High, Grounding::Medium],
            expected_response: "gs://b/out/x.png".into(),
        };
        let two_turns = expand::Expansion {
            turns: vec![
                expand::ExpandedTurn {
                    prompt: "first".into(),
                    calls: vec![1],
                    followup: "then".into(),
                },
                expand::ExpandedTurn {
                    prompt: "second".into(),
                    calls: vec![2],
                    followup: "".into(),
                },
            ],
        };
        let doc = write::harness(
            "gen",
            "gen.tools.json",
            &[],
            &[m.clone(), m.clone()],
            &[None, Some(two_turns)],
        )
        .unwrap();
        let text = doc.to_yaml().unwrap();
        let h = crate::harness::Harness::from_source(crate::source::SourceFile::from_text(
            "harnesses/gen.yaml",
            text.clone(),
        ))
        .unwrap_or_else(|e| panic!("{}\n{text}", e.render()));
        let ids: Vec<&str> = h.scenarios.iter().map(|s| s.id.as_str()).collect();
        assert_eq!(ids, ["hero-image", "hero-image-2"]);
        let single = &h.scenarios[0];
        assert_eq!((single.tier, single.turns.len()), (Some(Tier::Simple), 1));
        assert_eq!(single.turns[0].workflow.len(), 2);
        assert_eq!(
            single.turns[0].followup.as_deref(),
            Some("a square one too")
        );
        let step = &single.turns[0].workflow[1];
        assert_eq!(
            *step.call.arguments(),
            json!({"prompt": "a square one", "aspect_ratio": "1:1"})
        );
        assert_eq!(step.quick_explanation.as_deref(), Some("the follow-up"));
        assert!(matches!(
            step.match_policies["prompt"],
            crate::harness::MatchPolicy::Semantic
        ));
        assert_eq!(
            (step.grounding, &step.mock_output),
            (Some(Grounding::Medium), &Some(m.outputs[1].clone()))
        );
        // Expanded: one call per turn, the expected response on the last turn only.
        let turns = &h.scenarios[1].turns;
        let shape: Vec<(&str, usize, Option<&str>, Option<&str>)> = turns
            .iter()
            .map(|t| {
                (
                    t.prompt.as_str(),
                    t.workflow.len(),
                    t.expected_response.as_deref(),
                    t.followup.as_deref(),
                )
            })
            .collect();
        assert_eq!(
            shape,
            [
                ("first", 1, None, Some("then")),
                ("second", 1, Some("gs://b/out/x.png"), Some(""))
            ]
        );
        // Parameters that are no object cannot be written (stage 2's lint drops such calls).
        let mut bad = m;
        bad.scenario.agent_workflow[0].parameters = json!("a solar city");
        let err = write::harness("gen", "gen.tools.json", &[], &[bad], &[]).unwrap_err();
        assert!(
            err.to_string().contains("are string, not an object"),
            "{err}"
        );
    }

    /// The output is checked before any model is asked: a matrix named like the suite's own
    /// files, an existing harness (unless `force`); a spec that is its own target is fine.
    #[test]
    fn the_output_refuses_what_would_be_lost() {
        let dir = tempfile::tempdir().unwrap();
        let out = dir.path().join("out");
        std::fs::create_dir_all(&out).unwrap();
        let spec = out.join("x.tools.json");
        std::fs::write(&spec, "[]").unwrap();
        let caps = dir.path().join("m/x.yaml");
        std::fs::create_dir_all(caps.parent().unwrap()).unwrap();
        std::fs::write(&caps, "server: s\n").unwrap();
        let new = |caps: &[std::path::PathBuf], force| {
            write::Output::new(&out, "x", &json!([]), &spec, caps, force)
        };
        let e = new(std::slice::from_ref(&caps), false).unwrap_err();
        assert!(e.message.contains("the suite's own file"), "{e}");
        let ok = new(&[], false).unwrap();
        assert_eq!(ok.tools_file(), "x.tools.json");
        std::fs::write(out.join("x.yaml"), "# mine\n").unwrap();
        let e = new(&[], false).unwrap_err();
        assert!(e.message.contains("would overwrite"), "{e}");
        assert!(new(&[], true).is_ok());
        assert_eq!(std::fs::read_to_string(&spec).unwrap(), "[]");
    }

    /// `--verify` keeps a scenario only when `mutate`'s operators are all killed on its oracle,
    /// and names each survivor and why it survived: the shipped SQLite suite with `semantic` on
    /// its SQL text loses the scenarios whose statement is not compared, which its strict
    /// policies keep.
    #[test]
    fn verify_drops_scenarios_whose_mutants_survive() {
        let root = Path::new(env!("CARGO_MANIFEST_DIR"));
        let path = root.join("harnesses/sqlite.yaml");
        let text = std::fs::read_to_string(&path).unwrap();
        let load = |text: String| {
            let h = crate::harness::Harness::from_source(crate::source::SourceFile::from_text(
                &path, text,
            ))
            .unwrap();
            crate::check::Suite::from_harness(h).unwrap()
        };
        let (kept, dropped) = write::verify(&load(text.clone()));
        assert!(dropped.is_empty(), "{dropped:#?}");
        assert_eq!(kept.len(), 8, "{kept:?}");
        let regexes = regex::Regex::new(r"query: \{ regex: '(?:[^']|'')*' \}").unwrap();
        let semantic = regexes.replace_all(&text, "query: semantic").into_owned();
        let (kept_semantic, dropped) = write::verify(&load(semantic));
        assert_eq!(kept_semantic.len(), 7, "{kept_semantic:?}");
        assert!(!kept_semantic.contains(&"return-book".to_owned()));
        insta::assert_snapshot!(dropped.join("\n"), @r#"return-book: 1 of 16 mutants survived: sql_drop_where (call 2 (`write_query`): `query` without its WHERE: "UPDATE loans SET returned_on = '2026-06-01'") survived: `semantic` on `/query` accepts it: the statement is not compared (`sql` would compare it) (TC 1.000)"#);
    }

    #[test]
    fn grounding_tiers() {
        let (_, _, _, seeds) = fixture();
        assert_eq!(
            mocks::grounding(&seeds, "nanobanana_image_generation"),
            Grounding::High
        );
        assert_eq!(mocks::grounding(&seeds, "other"), Grounding::Medium);
        assert_eq!(mocks::grounding(&Seeds::new(), "other"), Grounding::Low);
    }
}
