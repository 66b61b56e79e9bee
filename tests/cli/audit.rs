//! `agent-seer audit`: each finding kind on real specs (the genmedia captures, whose RULES.md
//! says which prose is real, and public servers captured by `.ci/audit-captures.sh`), the
//! formats, the exit codes.

use super::*;

const GENMEDIA: [&str; 8] = [
    "veo",
    "imagen",
    "nanobanana",
    "gemini",
    "lyria",
    "chirp3",
    "omni",
    "avtool",
];

/// `audit` over the eight genmedia specs with their matrices, as the README runs it.
fn genmedia_args(format: &str) -> Vec<String> {
    let mut args = vec!["audit".to_owned()];
    args.extend(GENMEDIA.iter().map(|s| format!("harnesses/{s}.tools.json")));
    args.push("--caps".into());
    args.extend(
        GENMEDIA
            .iter()
            .map(|s| format!("capabilities/mcp-{s}-go.yaml")),
    );
    args.extend(["--format".into(), format.into()]);
    args
}

fn run_owned(args: &[String]) -> Output {
    run(&args.iter().map(String::as_str).collect::<Vec<_>>(), None)
}

#[test]
fn prose_only_constraints_of_veo_with_its_matrix() {
    let o = run(
        &[
            "audit",
            "harnesses/veo.tools.json",
            "--caps",
            "capabilities/mcp-veo-go.yaml",
        ],
        None,
    );
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    insta::assert_snapshot!("audit_veo", stdout(&o));
}

#[test]
fn prose_only_constraints_of_omni_and_chirp3() {
    let o = run(
        &[
            "audit",
            "harnesses/omni.tools.json",
            "harnesses/chirp3.tools.json",
            "harnesses/imagen.tools.json",
        ],
        None,
    );
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    insta::assert_snapshot!("audit_omni_chirp3_imagen", stdout(&o));
}

#[test]
fn missing_contract_and_providers_of_public_servers() {
    let o = run(
        &[
            "audit",
            "--all",
            "tests/fixtures/audit/mcp-server-fetch.tools.json",
            "tests/fixtures/audit/mcp-server-sqlite.tools.json",
            "tests/fixtures/audit/server-brave-search.tools.json",
        ],
        None,
    );
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    insta::assert_snapshot!("audit_public_contract", stdout(&o));
}

#[test]
fn provider_refusals_of_server_everything() {
    let o = run(
        &[
            "audit",
            "--all",
            "tests/fixtures/audit/server-everything.tools.json",
        ],
        None,
    );
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let text = stdout(&o);
    let provider: Vec<&str> = text.lines().filter(|l| l.contains("_refused]")).collect();
    insta::assert_snapshot!("audit_everything_providers", provider.join("\n"));
}

#[test]
fn fleet_names_of_the_genmedia_servers() {
    let o = run_owned(&genmedia_args("json"));
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let v: serde_json::Value = serde_json::from_str(&stdout(&o)).unwrap();
    assert_eq!(v["version"], 1);
    let names: Vec<String> = v["names"]
        .as_array()
        .unwrap()
        .iter()
        .map(|g| {
            let mut uses: Vec<String> = g["uses"]
                .as_array()
                .unwrap()
                .iter()
                .map(|u| {
                    format!(
                        "{}:{}",
                        u["server"].as_str().unwrap(),
                        u["name"].as_str().unwrap()
                    )
                })
                .collect();
            uses.dedup();
            format!(
                "{} ({}) <- {}",
                g["proposed"].as_str().unwrap(),
                g["type"].as_str().unwrap(),
                uses.join(" ")
            )
        })
        .collect();
    insta::assert_snapshot!("audit_genmedia_names", names.join("\n"));
    // Every finding names its place.
    for s in v["servers"].as_array().unwrap() {
        for f in s["findings"].as_array().unwrap() {
            assert!(f["location"]["line"].as_u64().is_some(), "{f}");
            assert!(f["pointer"].as_str().is_some(), "{f}");
        }
    }
}

#[test]
fn the_readme_shows_the_real_genmedia_fleet_table() {
    let o = run_owned(&genmedia_args("markdown"));
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let out = stdout(&o);
    let table: String = out
        .lines()
        .skip_while(|l| !l.starts_with("| server"))
        .take_while(|l| l.starts_with('|'))
        .map(|l| format!("{l}\n"))
        .collect();
    insta::assert_snapshot!("audit_genmedia_table", table);
    let page = std::fs::read_to_string(repo().join("docs/src/guide/audit.md")).unwrap();
    assert!(
        page.contains(&table),
        "docs/src/guide/audit.md's fleet table is stale; it is:\n{table}"
    );
    let command = format!("$ agent-seer {}", genmedia_args("markdown").join(" "));
    assert!(
        page.contains(&command),
        "docs/src/guide/audit.md lacks `{command}`"
    );
}

#[test]
fn markdown_has_a_section_per_server() {
    let o = run(
        &[
            "audit",
            "--format",
            "markdown",
            "tests/fixtures/audit/server-brave-search.tools.json",
        ],
        None,
    );
    insta::assert_snapshot!("audit_markdown_brave", stdout(&o));
}

#[test]
fn deny_warnings_exits_1_and_a_clean_spec_exits_0() {
    let o = run(
        &["audit", "--deny", "warnings", "harnesses/veo.tools.json"],
        None,
    );
    assert_eq!(o.status.code(), Some(1));
    let dir = project(&[(
        "clean.tools.json",
        r#"[{"name": "now", "description": "The time.", "annotations": {"readOnlyHint": true},
  "inputSchema": {"type": "object", "properties": {"tz": {"type": "string", "description": "An IANA zone."}},
  "required": ["tz"]},
  "outputSchema": {"type": "object"}}]"#,
    )]);
    let o = run_in(
        dir.path(),
        &["audit", "--deny", "warnings", "clean.tools.json"],
        None,
    );
    assert_eq!(o.status.code(), Some(0), "{}{}", stdout(&o), stderr(&o));
    insta::assert_snapshot!("audit_clean", stdout(&o));
}

#[test]
fn seed_outputs_are_found_beside_the_spec_or_named() {
    // harnesses/veo.seed_outputs.json sits beside veo.tools.json.
    let o = run(
        &[
            "audit",
            "--all",
            "--format",
            "json",
            "harnesses/veo.tools.json",
        ],
        None,
    );
    let v: serde_json::Value = serde_json::from_str(&stdout(&o)).unwrap();
    let seeds: Vec<&str> = v["servers"][0]["findings"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|f| f["code"] == "audit.no_seed_outputs")
        .map(|f| f["tool"].as_str().unwrap_or("(server)"))
        .collect();
    insta::assert_snapshot!("audit_veo_seed_gaps", seeds.join("\n"));
    let dir = project(&[
        (
            "a.json",
            r#"[{"name": "t", "description": "d", "inputSchema": {"type": "object", "properties": {}}}]"#,
        ),
        (
            "samples.json",
            r#"{"samples": [{"tool": "t", "result": {"content": []}}]}"#,
        ),
        ("bad.json", "{\"samples\": [{\"result\": 1}]}"),
    ]);
    let count = |o: &Output| stdout(o).matches("audit.no_seed_outputs").count();
    let without = run_in(dir.path(), &["audit", "--all", "a.json"], None);
    assert_eq!(count(&without), 1, "{}", stdout(&without));
    let with = run_in(
        dir.path(),
        &["audit", "--all", "a.json", "--seed-outputs", "samples.json"],
        None,
    );
    assert_eq!(count(&with), 0, "{}", stdout(&with));
    let bad = run_in(
        dir.path(),
        &["audit", "a.json", "--seed-outputs", "bad.json"],
        None,
    );
    assert_eq!(bad.status.code(), Some(2));
    insta::assert_snapshot!("audit_bad_seed_file", stderr(&bad));
}

#[test]
fn a_spec_that_does_not_load_is_an_input_error_at_its_place() {
    let dir = project(&[("broken.tools.json", "[\n  {\"name\": \"t\",}\n]\n")]);
    let o = run_in(dir.path(), &["audit", "broken.tools.json"], None);
    assert_eq!(o.status.code(), Some(2));
    insta::assert_snapshot!("audit_broken_spec", stderr(&o));
}

#[test]
fn every_public_capture_audits() {
    let dir = repo().join("tests/fixtures/audit");
    let mut specs: Vec<String> = std::fs::read_dir(&dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.to_string_lossy().ends_with(".tools.json"))
        .map(|p| p.strip_prefix(repo()).unwrap().display().to_string())
        .collect();
    specs.sort();
    assert!(specs.len() >= 10, "{specs:?}");
    let mut args = vec!["audit"];
    args.extend(specs.iter().map(String::as_str));
    let o = run(&args, None);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let table: String = stdout(&o)
        .lines()
        .skip_while(|l| !l.starts_with("server "))
        .map(|l| format!("{l}\n"))
        .collect();
    insta::assert_snapshot!("audit_public_fleet", table);
}

/// A small two-server fleet written to trip every code once, so each finding kind's rendering
/// is pinned (the real specs above show which of them real servers trip).
#[test]
fn every_code_on_a_small_fleet() {
    let a = r#"[
  {"name": "render.video", "inputSchema": {"type": "object", "properties": {
    "quality": {"type": "string", "description": "Output quality. Supported values: 'draft', 'final'."},
    "steps": {"type": "number", "description": "Denoising steps, between 1 and 50. Must be an integer."},
    "fps": {"type": "number", "default": 30, "description": "Frames per second. Defaults to 24."},
    "seconds": {"type": "number", "description": "Length (default: 8). The maximum is model-dependent."},
    "mask": {"type": "string", "description": "Required when mode is 'inpaint'."},
    "legacy_name": {"type": "string", "description": "Deprecated; use name."},
    "bucket": {"type": "string", "description": "Bucket for the output. If not provided, OUTPUT_BUCKET env var will be used."},
    "anything": {"description": "Free-form."},
    "site": {"type": "string", "format": "uri", "description": "Where to post it."},
    "tags": {"type": ["array", "null"], "items": {"type": "string"}},
    "prompt": {"type": "string"}
  }, "required": ["prompt"]}}
]"#;
    let b = r#"[
  {"name": "upload", "description": "Uploads a file.", "annotations": {"readOnlyHint": false},
   "outputSchema": {"type": "object"},
   "inputSchema": {"type": "object", "properties": {
     "gcs_bucket_uri": {"type": "string", "description": "GCS bucket for the output file."}}}},
  {"name": "either", "description": "One of two shapes.",
   "inputSchema": {"anyOf": [{"type": "object", "properties": {"a": {"type": "string"}}}]}}
]"#;
    let dir = project(&[("a.tools.json", a), ("b.tools.json", b)]);
    let o = run_in(
        dir.path(),
        &["audit", "--all", "a.tools.json", "b.tools.json"],
        None,
    );
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let out = stdout(&o);
    let seen: std::collections::BTreeSet<&str> = out
        .lines()
        .filter_map(|l| l.split_once("[audit.")?.1.split_once(']'))
        .map(|(code, _)| code)
        .collect();
    let all = [
        "prose_enum",
        "prose_range",
        "prose_integer",
        "prose_default",
        "default_disagrees",
        "model_dependent",
        "prose_conditional",
        "env_fallback",
        "prose_deprecated",
        "no_tool_description",
        "no_param_type",
        "required_undescribed",
        "no_param_description",
        "no_output_schema",
        "no_annotations",
        "no_seed_outputs",
        "fleet_name",
        "provider_refused",
        "strict_refused",
    ];
    let missing: Vec<&&str> = all.iter().filter(|c| !seen.contains(**c)).collect();
    assert!(missing.is_empty(), "not tripped: {missing:?}\n{out}");
    insta::assert_snapshot!("audit_every_code", out);
}

/// tests/fixtures/audit/GENMEDIA-RULES.md counts the RULES.md rules the audit finds; the
/// matrix rules its prose findings are covered by must stay the ones it lists.
#[test]
fn genmedia_prose_findings_match_rules_md() {
    let o = run_owned(&genmedia_args("json"));
    let v: serde_json::Value = serde_json::from_str(&stdout(&o)).unwrap();
    let mut covered = std::collections::BTreeSet::new();
    let mut prose = 0;
    for s in v["servers"].as_array().unwrap() {
        for f in s["findings"].as_array().unwrap() {
            let Some(m) = f["matrix"].as_str() else {
                continue;
            };
            prose += 1;
            assert!(f["quote"].as_str().is_some(), "a prose finding quotes: {f}");
            if let Some(rules) = m
                .strip_prefix("covered by ")
                .and_then(|r| r.split_once(" ("))
                .map(|(_, r)| r.trim_end_matches(')'))
            {
                covered.extend(rules.split(", ").map(str::to_owned));
            }
        }
    }
    let want = [
        "G1", "I2", "I3", "L1", "L2", "O1", "O2", "O3", "T1", "V10", "V11", "V12", "V2", "V3",
        "V4", "V5", "V8",
    ];
    assert_eq!(covered, want.iter().map(|s| (*s).to_owned()).collect());
    assert_eq!(prose, 106);
}
