//! Write → load round trips: every document shape the writers emit, written with the typed
//! writer, loaded with the loader, and compared field by field with what was written.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use serde_json::{Map, Value, json};

use super::*;
use crate::harness::{Harness, Thresholds, Transcript};
use crate::source::SourceFile;

fn args(v: Value) -> Map<String, Value> {
    match v {
        Value::Object(m) => m,
        other => panic!("not an object: {other}"),
    }
}

fn mcp(tool: &str, arguments: Value) -> StepCall {
    StepCall::Mcp {
        tool: tool.into(),
        arguments: args(arguments),
    }
}

fn agent_seer(tool: &str, arguments: Value) -> StepCall {
    StepCall::AgentSeer {
        function_name: tool.into(),
        parameters: args(arguments),
    }
}

fn call(tool: &str, arguments: Value, output: Option<Value>) -> CallDoc {
    CallDoc {
        tool: tool.into(),
        arguments: args(arguments),
        id: None,
        output,
    }
}

/// Writes `doc` as `harnesses/s.yaml`, loads it, and checks the model holds what was written.
fn round_trip(doc: &HarnessDoc) -> (String, Harness) {
    let text = doc.to_yaml().unwrap();
    let h = Harness::from_source(SourceFile::from_text("harnesses/s.yaml", text.clone()))
        .unwrap_or_else(|e| panic!("{}\n{text}", e.render()));
    assert_loaded(doc, &h, &text);
    (text, h)
}

/// A reference as the loader resolves it (tidied: `harnesses/../x` is `x`).
fn agent_seer_join(dir: &Path, rel: &str) -> PathBuf {
    crate::source::join_tidy(dir, Path::new(rel))
}

/// Every field of the model is the written one, normalised as the loader does: paths against
/// the harness's directory, defaults for what was left out.
fn assert_loaded(doc: &HarnessDoc, h: &Harness, text: &str) {
    let dir = Path::new("harnesses");
    assert_eq!(h.suite, doc.suite.as_deref().unwrap_or("s"), "{text}");
    assert_eq!(h.description, doc.description, "{text}");
    assert_eq!(h.server, doc.server, "{text}");
    let tidy = |p: &str| agent_seer_join(dir, p);
    let tools: Vec<PathBuf> = match &doc.tools {
        Some(t) => t.iter().map(|t| tidy(t)).collect(),
        None => vec![dir.join("s.tools.json")],
    };
    assert_eq!(h.tools, tools, "{text}");
    let caps: Vec<PathBuf> = doc.capabilities.iter().map(|c| tidy(c)).collect();
    assert_eq!(h.capabilities, caps, "{text}");
    let (t, d) = (doc.thresholds.unwrap_or_default(), Thresholds::default());
    assert_eq!(
        h.thresholds,
        Thresholds {
            pass: t.pass.unwrap_or(d.pass),
            min_gap: t.min_gap.unwrap_or(d.min_gap),
            trajectory: t.trajectory.map(|g| crate::harness::TrajectoryGate {
                kind: g.kind,
                min: g.min,
            }),
            mutation: None,
        },
        "{text}"
    );
    assert_eq!(h.scenarios.len(), doc.scenarios.len(), "{text}");
    for (s, w) in h.scenarios.iter().zip(&doc.scenarios) {
        assert_eq!(s.id, w.id, "{text}");
        assert_eq!(s.tier, w.tier, "{text}");
        assert_eq!(s.title, w.title, "{text}");
        assert_eq!(s.category, w.category, "{text}");
        assert_eq!(s.novelty_reason, w.novelty_reason, "{text}");
        assert_eq!(s.artifacts, w.artifacts, "{text}");
        assert_eq!(s.turns.len(), w.turns.len(), "{text}");
        for (t, w) in s.turns.iter().zip(&w.turns) {
            assert_eq!(t.prompt, w.prompt, "{text}");
            assert_eq!(t.expected_response, w.expected_response, "{text}");
            assert_eq!(t.followup, w.followup, "{text}");
            assert_eq!(t.order_strict, w.order == Some(Order::Strict), "{text}");
            assert_eq!(t.workflow.len(), w.workflow.len(), "{text}");
            for (o, w) in t.workflow.iter().zip(&w.workflow) {
                assert_eq!(o.call.tool, w.call.tool(), "{text}");
                // Value equality tells 3 from 3.0, so integer-ness survives too.
                assert_eq!(o.call.args(), w.call.arguments(), "{text}");
                assert_eq!(o.quick_explanation, w.quick_explanation, "{text}");
                let policies: BTreeMap<String, PolicyDoc> = o
                    .match_policies
                    .iter()
                    .map(|(k, p)| (k.clone(), PolicyDoc::from(p)))
                    .collect();
                assert_eq!(policies, w.match_policies, "{text}");
                assert_eq!(o.mock_output, w.mock_output, "{text}");
                assert_eq!(o.grounding, w.grounding, "{text}");
            }
        }
    }
}

/// Writes `doc` as `transcripts/s/t.yaml`, loads it, and checks the model holds what was
/// written.
fn transcript_round_trip(doc: &TranscriptDoc) -> (String, Transcript) {
    let text = doc.to_yaml().unwrap();
    let t = Transcript::from_source(
        SourceFile::from_text("transcripts/s/t.yaml", text.clone()),
        "t".into(),
    )
    .unwrap_or_else(|e| panic!("{}\n{text}", e.render()));
    assert_eq!(t.scenario, doc.scenario, "{text}");
    assert_eq!(t.prompt, doc.prompt, "{text}");
    assert_eq!(t.agent, doc.agent, "{text}");
    assert_eq!(t.note, doc.note, "{text}");
    assert_eq!(t.label.expect, doc.label.expect, "{text}");
    assert_eq!(t.label.faults, doc.label.faults, "{text}");
    assert_eq!(t.label.xfail, doc.label.xfail, "{text}");
    let turns = match &doc.body {
        TranscriptBody::Turns { turns } => turns.clone(),
        TranscriptBody::Calls { calls, reply } => vec![TranscriptTurnDoc {
            prompt: None,
            calls: calls.clone(),
            reply: reply.clone(),
        }],
    };
    assert_eq!(t.turns.len(), turns.len(), "{text}");
    for (t, w) in t.turns.iter().zip(&turns) {
        assert_eq!(t.prompt, w.prompt, "{text}");
        assert_eq!(t.reply, w.reply, "{text}");
        assert_eq!(t.calls.len(), w.calls.len(), "{text}");
        for (c, w) in t.calls.iter().zip(&w.calls) {
            assert_eq!(c.tool, w.tool, "{text}");
            assert_eq!(c.args(), &w.arguments, "{text}");
            assert_eq!(c.id, w.id, "{text}");
            // `output: null` loads as no output.
            assert_eq!(
                c.output,
                w.output.clone().filter(|o| !o.is_null()),
                "{text}"
            );
        }
    }
    (text, t)
}

fn every_field() -> HarnessDoc {
    let mut step = StepDoc::new(agent_seer(
        "veo_t2v",
        json!({"prompt": "a tiger", "model": "veo-3.1-generate-001", "aspect_ratio": "16:9", "duration": 6}),
    ));
    step.quick_explanation = Some("Text-to-video on a Veo 3.1 model.".into());
    step.match_policies = BTreeMap::from([
        ("prompt".into(), PolicyDoc::Named(PolicyName::Semantic)),
        ("duration".into(), PolicyDoc::Tolerance { tolerance: 0.5 }),
    ]);
    step.mock_output = Some(
        json!({"content": [{"type": "resource_link", "uri": "gs://b/out/v.mp4", "mimeType": "video/mp4"}]}),
    );
    step.grounding = Some(Grounding::High);
    let mut mux = StepDoc::new(mcp(
        "ffmpeg_mux",
        json!({"video": "gs://b/out/v.mp4", "audio": "gs://b/in/a.wav"}),
    ));
    mux.match_policies =
        BTreeMap::from([("video".into(), PolicyDoc::Named(PolicyName::FromOutput))]);
    mux.mock_output = Some(json!({"content": [{"type": "text", "text": "gs://b/out/m.mp4"}]}));
    mux.grounding = Some(Grounding::Low);
    HarnessDoc {
        suite: Some("s".into()),
        description: Some("Every optional field, set.".into()),
        server: Some("mcp-veo-go".into()),
        tools: Some(vec!["s.tools.json".into(), "extra.tools.json".into()]),
        capabilities: vec!["../capabilities/c.yaml".into()],
        thresholds: Some(ThresholdsDoc {
            pass: Some(0.75),
            min_gap: Some(0.25),
            trajectory: Some(crate::harness::TrajectoryGateDoc {
                kind: crate::harness::TrajectoryMatch::InOrder,
                min: 0.5,
            }),
        }),
        scenarios: vec![ScenarioDoc {
            id: "teaser".into(),
            tier: Some(Tier::Complex),
            title: Some("A teaser with sound".into()),
            category: Some("Marketing video".into()),
            novelty_reason: Some("Only Veo 3 models generate audio.".into()),
            artifacts: vec!["gs://b/in/a.wav".into()],
            turns: vec![TurnDoc {
                prompt: "A 6-second 16:9 teaser of a tiger, with gs://b/in/a.wav as its sound."
                    .into(),
                workflow: vec![step, mux],
                expected_response: Some("The teaser is at gs://b/out/m.mp4.".into()),
                followup: Some("A 9:16 cut too?".into()),
                order: Some(Order::Strict),
            }],
        }],
    }
}

#[test]
fn harness_with_every_optional_field_round_trips() {
    let (text, _) = round_trip(&every_field());
    insta::assert_snapshot!("harness_every_field", text);
}

#[test]
fn harness_with_no_optional_field_round_trips() {
    let doc = HarnessDoc {
        scenarios: vec![ScenarioDoc {
            id: "a".into(),
            turns: vec![TurnDoc {
                prompt: "p".into(),
                workflow: vec![StepDoc::new(mcp("t", json!({})))],
                ..TurnDoc::default()
            }],
            ..ScenarioDoc::default()
        }],
        ..HarnessDoc::default()
    };
    let (text, h) = round_trip(&doc);
    insta::assert_snapshot!(text, @r"
    scenarios:
    - id: a
      turns:
      - prompt: p
        workflow:
        - tool: t
          arguments: {}
    ");
    assert_eq!(h.thresholds, Thresholds::default());
    // A turn without a workflow (the agent should answer without tools) writes `workflow: []`.
    let mut bare = doc;
    bare.scenarios[0].turns[0].workflow.clear();
    round_trip(&bare);
}

#[test]
fn multi_turn_harness_round_trips() {
    let turn = |n: usize, steps: usize| TurnDoc {
        prompt: format!("turn {n}"),
        workflow: (0..steps)
            .map(|i| {
                let mut s = StepDoc::new(if i % 2 == 0 {
                    mcp("a", json!({"n": n, "i": i}))
                } else {
                    agent_seer("b", json!({"uri": format!("gs://b/{n}/{i}.png")}))
                });
                s.mock_output =
                    Some(json!({"content": [{"type": "text", "text": format!("{n}.{i}")}]}));
                s
            })
            .collect(),
        expected_response: (n == 3).then(|| "all done".into()),
        followup: Some(format!("after {n}")),
        order: None,
    };
    let doc = HarnessDoc {
        suite: Some("s".into()),
        scenarios: vec![
            ScenarioDoc {
                id: "three-turns".into(),
                tier: Some(Tier::Complex),
                turns: vec![turn(1, 2), turn(2, 0), turn(3, 3)],
                ..ScenarioDoc::default()
            },
            ScenarioDoc {
                id: "one-turn".into(),
                tier: Some(Tier::Simple),
                turns: vec![turn(1, 1)],
                ..ScenarioDoc::default()
            },
        ],
        ..HarnessDoc::default()
    };
    let (_, h) = round_trip(&doc);
    assert_eq!(h.scenarios[0].turns.len(), 3);
}

#[rstest::rstest]
#[case::exact(PolicyDoc::Named(PolicyName::Exact))]
#[case::ignore(PolicyDoc::Named(PolicyName::Ignore))]
#[case::from_output(PolicyDoc::Named(PolicyName::FromOutput))]
#[case::semantic(PolicyDoc::Named(PolicyName::Semantic))]
#[case::absent(PolicyDoc::Named(PolicyName::Absent))]
#[case::unordered(PolicyDoc::Named(PolicyName::Unordered))]
#[case::path(PolicyDoc::Named(PolicyName::Path))]
#[case::path_from(PolicyDoc::Path { path: "/srv/data".into() })]
#[case::regex(PolicyDoc::Regex { regex: r"^gs://[a-z]+/.*\.png$".into(), not: None })]
#[case::regex_not(PolicyDoc::Regex { regex: r"(?i)^select\b".into(), not: Some(r"(?i)\blimit\b".into()) })]
#[case::tolerance(PolicyDoc::Tolerance { tolerance: 0.25 })]
#[case::whole_tolerance(PolicyDoc::Tolerance { tolerance: 2.0 })]
#[case::any_of(PolicyDoc::AnyOf(AnyOfDoc {
    any_of: vec![json!("16:9"), json!("9:16")],
    ..AnyOfDoc::default()
}))]
#[case::any_of_every_switch(PolicyDoc::AnyOf(AnyOfDoc {
    // 3 and 3.0 are different options under strict_integer.
    any_of: vec![json!(3), json!(3.0), json!("yes"), json!(null), json!([1, "a"]), json!({"k": "v"})],
    optional: true,
    normalize: Some(Normalize::Bfcl),
    strict_integer: true,
}))]
#[case::any_of_paths(PolicyDoc::AnyOf(AnyOfDoc {
    any_of: vec![json!(["app.py", "./test.py"]), json!(".")],
    normalize: Some(Normalize::Path),
    ..AnyOfDoc::default()
}))]
fn every_match_policy_round_trips(#[case] policy: PolicyDoc) {
    // (`unordered` takes an array and `path` a string: the loader refuses anything else.)
    let x = match policy {
        PolicyDoc::Named(PolicyName::Unordered) => json!([1, 2]),
        PolicyDoc::Named(PolicyName::Path) | PolicyDoc::Path { .. } => json!("./a"),
        _ => json!(1),
    };
    let mut step = StepDoc::new(mcp("t", json!({ "x": x })));
    step.match_policies = BTreeMap::from([("x".into(), policy.clone())]);
    let doc = HarnessDoc {
        scenarios: vec![ScenarioDoc {
            id: "a".into(),
            turns: vec![TurnDoc {
                prompt: "p".into(),
                workflow: vec![step],
                ..TurnDoc::default()
            }],
            ..ScenarioDoc::default()
        }],
        ..HarnessDoc::default()
    };
    let (text, h) = round_trip(&doc);
    // And the loader read it as the policy meant, not merely as something that writes alike.
    let loaded = &h.scenarios[0].turns[0].workflow[0].match_policies["x"];
    let kind_matches = matches!(
        (&policy, loaded),
        (PolicyDoc::Named(PolicyName::Exact), MatchPolicy::Exact)
            | (PolicyDoc::Named(PolicyName::Ignore), MatchPolicy::Ignore)
            | (
                PolicyDoc::Named(PolicyName::FromOutput),
                MatchPolicy::FromOutput
            )
            | (
                PolicyDoc::Named(PolicyName::Semantic),
                MatchPolicy::Semantic
            )
            | (PolicyDoc::Named(PolicyName::Absent), MatchPolicy::Absent)
            | (
                PolicyDoc::Named(PolicyName::Unordered),
                MatchPolicy::Unordered
            )
            | (PolicyDoc::Named(PolicyName::Path), MatchPolicy::Path(None))
            | (PolicyDoc::Path { .. }, MatchPolicy::Path(Some(_)))
            | (
                PolicyDoc::Regex { not: None, .. },
                MatchPolicy::Regex(_, None)
            )
            | (
                PolicyDoc::Regex { not: Some(_), .. },
                MatchPolicy::Regex(_, Some(_))
            )
            | (PolicyDoc::Tolerance { .. }, MatchPolicy::Tolerance(_))
    ) || matches!(
        (&policy, loaded),
        (PolicyDoc::AnyOf(d), MatchPolicy::AnyOf(a)) if d.normalize == a.normalize
    );
    assert!(kind_matches, "{policy:?} loaded as {loaded:?}\n{text}");
}

/// Strings YAML could read as something else, and numbers whose kind matters.
#[test]
fn awkward_values_round_trip() {
    let strings = [
        "yes",
        "no",
        "on",
        "null",
        "~",
        "true",
        "1:1",
        "16:9",
        "3",
        "3.0",
        "1e3",
        "0x1F",
        ".inf",
        "2024-01-01",
        " lead",
        "trail ",
        "a: b",
        "- x",
        "# c",
        "[x]",
        "{y}",
        "&a",
        "*a",
        "!t",
        "@x",
        "`x`",
        "'q'",
        "\"dq\"",
        "",
        "tab\there",
        "line\nbreak",
        "ends\n",
        "\u{0}",
        "école",
        "🐯",
        "<<",
    ];
    let values = json!({
        "strings": strings.as_slice(),
        "int": 3, "float": 3.0, "small": 1e-7, "big": 1.0e300, "max": u64::MAX, "min": i64::MIN,
        "neg_zero": -0.0, "empty_list": [], "empty_map": {}, "nested": [[1, [2]], {"k": [{"z": null}]}],
    });
    let mut step = StepDoc::new(mcp("t", values.clone()));
    step.mock_output = Some(values.clone());
    step.quick_explanation = Some(strings.join(" | "));
    step.match_policies = BTreeMap::from([(
        "strings".into(),
        PolicyDoc::AnyOf(AnyOfDoc {
            any_of: strings.iter().map(|s| json!(s)).collect(),
            ..AnyOfDoc::default()
        }),
    )]);
    let doc = HarnessDoc {
        description: Some("yes".into()),
        scenarios: strings
            .iter()
            .enumerate()
            .map(|(i, s)| ScenarioDoc {
                id: format!("s{i}"),
                title: Some((*s).into()),
                turns: vec![TurnDoc {
                    prompt: (*s).into(),
                    workflow: vec![step.clone()],
                    followup: Some((*s).into()),
                    ..TurnDoc::default()
                }],
                ..ScenarioDoc::default()
            })
            .collect(),
        ..HarnessDoc::default()
    };
    round_trip(&doc);
    transcript_round_trip(&TranscriptDoc {
        scenario: Some("null".into()),
        prompt: Some("~".into()),
        agent: Some("yes".into()),
        note: Some("# not a comment".into()),
        label: LabelDoc::default(),
        body: TranscriptBody::Calls {
            calls: vec![call("t", values.clone(), Some(values))],
            reply: Some("no".into()),
        },
    });
}

#[test]
fn transcript_with_a_label_round_trips() {
    let (text, t) = transcript_round_trip(&TranscriptDoc {
        scenario: Some("square".into()),
        prompt: None,
        agent: None,
        note: Some("the wrong parameter name".into()),
        label: LabelDoc {
            expect: Some(Expect::Fail),
            faults: vec!["argument_name".into(), "cap.unsupported_value".into()],
            xfail: None,
        },
        body: TranscriptBody::Calls {
            calls: vec![call("paint", json!({"modle": "m1"}), None)],
            reply: Some("Done.".into()),
        },
    });
    assert_eq!(t.turns.len(), 1);
    insta::assert_snapshot!(text, @r"
    scenario: square
    note: the wrong parameter name
    expect: fail
    faults: [argument_name, cap.unsupported_value]
    calls:
    - tool: paint
      arguments:
        modle: m1
    reply: Done.
    ");
}

#[test]
fn transcript_with_xfail_round_trips() {
    transcript_round_trip(&TranscriptDoc {
        scenario: Some("square".into()),
        prompt: None,
        agent: None,
        note: None,
        label: LabelDoc {
            expect: Some(Expect::Pass),
            faults: vec![],
            xfail: Some("the judge cannot tell the ratios apart yet".into()),
        },
        body: TranscriptBody::Calls {
            calls: vec![],
            reply: None,
        },
    });
}

#[test]
fn transcript_outputs_of_every_kind_round_trip() {
    let outputs = [
        Some(json!({"content": [{"type": "text", "text": "ok"}], "isError": false})),
        Some(json!([{"uri": "gs://b/x.png"}, 2, null])),
        Some(json!("plain text")),
        Some(json!(7.5)),
        Some(json!(true)),
        Some(Value::Null),
        None,
    ];
    let calls = outputs
        .iter()
        .enumerate()
        .map(|(i, o)| CallDoc {
            id: Some(format!("call_{i}")),
            ..call("t", json!({"i": i}), o.clone())
        })
        .collect();
    let (_, t) = transcript_round_trip(&TranscriptDoc {
        scenario: Some("x".into()),
        prompt: None,
        agent: Some("openai:scripted".into()),
        note: None,
        label: LabelDoc::default(),
        body: TranscriptBody::Turns {
            turns: vec![TranscriptTurnDoc {
                prompt: Some("p".into()),
                calls,
                reply: Some("done".into()),
            }],
        },
    });
    assert!(t.turns[0].calls[5].output.is_none());
}

#[test]
fn multi_turn_transcript_round_trips() {
    let (text, t) = transcript_round_trip(&TranscriptDoc {
        scenario: Some("three-turns".into()),
        prompt: None,
        agent: Some("gemini:gemini-2.5-flash".into()),
        note: Some("recorded by agent-seer run".into()),
        label: LabelDoc::default(),
        body: TranscriptBody::Turns {
            turns: vec![
                TranscriptTurnDoc {
                    prompt: Some("make it".into()),
                    calls: vec![call(
                        "a",
                        json!({"n": 1}),
                        Some(json!({"content": [{"type": "text", "text": "gs://b/1.png"}]})),
                    )],
                    reply: Some("made".into()),
                },
                TranscriptTurnDoc {
                    prompt: Some("answer without tools".into()),
                    calls: vec![],
                    reply: Some("sure".into()),
                },
                TranscriptTurnDoc {
                    prompt: None,
                    calls: vec![call("b", json!({"uri": "gs://b/1.png"}), None)],
                    reply: None,
                },
            ],
        },
    });
    assert_eq!(t.turns.len(), 3);
    insta::assert_snapshot!("transcript_multi_turn", text);
}

#[test]
fn transcript_with_an_inline_prompt_round_trips() {
    transcript_round_trip(&TranscriptDoc {
        scenario: None,
        prompt: Some("(recorded by agent-seer serve; the scenario could not be told)".into()),
        agent: Some("an MCP client (recorded by agent-seer serve)".into()),
        note: None,
        label: LabelDoc::default(),
        body: TranscriptBody::Calls {
            calls: vec![call("t", json!({}), Some(json!({"content": []})))],
            reply: None,
        },
    });
}

#[test]
fn a_label_alone_is_one_flow_line() {
    let label = LabelDoc {
        faults: vec!["cap.unsupported_value".into(), "oracle".into()],
        ..LabelDoc::default()
    };
    assert_eq!(
        label.to_yaml().unwrap(),
        "faults: [cap.unsupported_value, oracle]\n"
    );
}

#[test]
fn arguments_are_mappings() {
    assert_eq!(
        object_arguments("t", &json!({"a": 1})).unwrap(),
        args(json!({"a": 1}))
    );
    assert_eq!(object_arguments("t", &Value::Null).unwrap(), Map::new());
    let err = object_arguments("t", &json!([1, 2])).unwrap_err();
    assert!(
        matches!(&err, WriteError::ArgumentsNotObject { tool, got } if tool == "t" && *got == "array"),
        "{err:?}"
    );
    assert!(
        err.to_string().contains("`t` are array, not an object"),
        "{err}"
    );
    // What an agent sent is kept, so the transcript loads and grading flags the call.
    assert_eq!(sent_arguments(&json!({"a": 1})), args(json!({"a": 1})));
    assert_eq!(sent_arguments(&Value::Null), Map::new());
    let sent = sent_arguments(&json!([1, "two"]));
    assert_eq!(sent, args(json!({(UNPARSABLE): "[1,\"two\"]"})));
    transcript_round_trip(&TranscriptDoc {
        scenario: Some("x".into()),
        prompt: None,
        agent: None,
        note: None,
        label: LabelDoc::default(),
        body: TranscriptBody::Calls {
            calls: vec![CallDoc {
                tool: "t".into(),
                arguments: sent,
                id: None,
                output: None,
            }],
            reply: None,
        },
    });
}

/// The one failure the documents can provoke: a number that is not finite (map keys are
/// strings by type, so a non-string key cannot be written at all). It comes back as an error
/// with its cause, never as an empty text.
#[rstest::rstest]
#[case::nan_tolerance(f64::NAN, 0.8)]
#[case::infinite_tolerance(f64::INFINITY, 0.8)]
#[case::nan_threshold(0.5, f64::NAN)]
#[case::infinite_threshold(0.5, f64::NEG_INFINITY)]
fn a_serialisation_failure_is_an_error_not_an_empty_file(
    #[case] tolerance: f64,
    #[case] pass: f64,
) {
    let mut step = StepDoc::new(mcp("t", json!({})));
    step.match_policies = BTreeMap::from([("x".into(), PolicyDoc::Tolerance { tolerance })]);
    let doc = HarnessDoc {
        thresholds: Some(ThresholdsDoc {
            pass: Some(pass),
            min_gap: None,
            trajectory: None,
        }),
        scenarios: vec![ScenarioDoc {
            id: "a".into(),
            turns: vec![TurnDoc {
                prompt: "p".into(),
                workflow: vec![step.clone()],
                ..TurnDoc::default()
            }],
            ..ScenarioDoc::default()
        }],
        ..HarnessDoc::default()
    };
    let err = doc.to_yaml().unwrap_err();
    assert!(
        matches!(
            err,
            WriteError::Yaml {
                what: "harness",
                ..
            }
        ),
        "{err:?}"
    );
    let cause = std::error::Error::source(&err).expect("the serialiser's error is kept");
    assert!(
        cause.to_string().contains("is not a finite number"),
        "{cause}"
    );
    assert!(
        err.to_string()
            .starts_with("cannot write the harness as YAML: "),
        "{err}"
    );
    // A step alone fails alike when it holds the number.
    if !tolerance.is_finite() {
        assert!(step.to_yaml().is_err());
    }
}
