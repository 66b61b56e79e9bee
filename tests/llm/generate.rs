//! Generation stage 1 against a scripted LLM: validated records, a retry with the problem fed
//! back, and a hallucinated tool name dropped and counted.

use agent_seer::generate::Generator;
use agent_seer::spec::{Capabilities, ToolSet};
use wiremock::{Request as WireRequest, Respond};

use super::*;

struct Interpreter;

impl Respond for Interpreter {
    fn respond(&self, req: &WireRequest) -> ResponseTemplate {
        let body: Value = serde_json::from_slice(&req.body).unwrap();
        let user = body["messages"][1]["content"].as_str().unwrap();
        let tool = user
            .lines()
            .next()
            .unwrap()
            .trim_start_matches("Tool name: ")
            .to_owned();
        let retry = user.contains("previous answer was rejected");
        let name = match tool.as_str() {
            // Always a name that is not in the spec.
            "veo_extend_video" => "veo_extend".to_owned(),
            // Wrong once, right when told.
            "veo_i2v" if !retry => "veo_image_to_video".to_owned(),
            other => other.to_owned(),
        };
        let answer = json!({"tool_name": name, "what_it_does": "Makes a video.", "what_it_needs": "A prompt.", "why_its_used": "Ads.",
            "enterprise_context": ["Media Production"]});
        ResponseTemplate::new(200).set_body_json(openai_body(&answer.to_string()))
    }
}

#[tokio::test]
async fn interpret_validates_retries_and_drops() {
    let server = MockServer::start().await;
    Mock::given(method("POST"))
        .respond_with(Interpreter)
        .mount(&server)
        .await;
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let spec = ToolSet::load(&root.join("harnesses/veo.tools.json")).unwrap();
    let caps = vec![Capabilities::load(&root.join("capabilities/mcp-veo-go.yaml")).unwrap()];
    let dir = tempfile::tempdir().unwrap();
    let c = client(
        openai(&server),
        dir.path(),
        CacheMode::Live,
        Duration::from_secs(5),
    );
    let mut g = Generator::new(&c, &spec, &caps);
    let records = g.interpret().await.unwrap();
    let names: Vec<&str> = records.iter().map(|r| r.tool_name.as_str()).collect();
    assert_eq!(
        names,
        [
            "veo_first_last_to_video",
            "veo_i2v",
            "veo_ingredients_to_video",
            "veo_reference_to_video",
            "veo_t2v"
        ]
    );
    let stage = &g.report.stages["interpret"];
    assert_eq!(stage.produced, 5);
    assert_eq!(stage.retried, 1, "veo_i2v needed a second attempt");
    assert_eq!(stage.dropped.len(), 1);
    assert!(
        stage.dropped[0]
            .starts_with("veo_extend_video: tool_name must be exactly `veo_extend_video`"),
        "{:?}",
        stage.dropped
    );
    // 4 tools × 1 + veo_i2v × 2 + veo_extend_video × 3.
    assert_eq!(server.received_requests().await.unwrap().len(), 4 + 2 + 3);
}

/// Answers a scenarios request with one simple scenario per offered tool, at most eight an
/// answer (a model that stalls, as the paper's did on 64 tools), so only the coverage loop
/// reaches every tool.
struct Writer;

impl Respond for Writer {
    fn respond(&self, req: &WireRequest) -> ResponseTemplate {
        let body: Value = serde_json::from_slice(&req.body).unwrap();
        let user = body["messages"][1]["content"].as_str().unwrap();
        let offered: Vec<&str> = user
            .lines()
            .filter_map(|l| l.strip_prefix("- "))
            .map(|l| l.split(':').next().unwrap())
            .collect();
        let retry = user.contains("previous answer was rejected");
        let scenarios: Vec<Value> = offered
            .iter()
            .take(8)
            .map(|tool| {
                let (name, params) = match *tool {
                    // A hallucinated name, fixed when told.
                    "veo_i2v" if !retry => ("veo_image2video", json!({"image_uri": "gs://b/a.png"})),
                    "veo_i2v" => ("veo_i2v", json!({"image_uri": "gs://b/a.png", "model": "veo-3.1-generate-001"})),
                    // A call the linter always rejects (veo-2.0 with audio on): dropped.
                    "veo_t2v" => ("veo_t2v", json!({"prompt": "p", "model": "veo-2.0-generate-001", "generate_audio": true})),
                    "veo_extend_video" => ("veo_extend_video", json!({"video_uri": "gs://b/v.mp4", "model": "veo-3.1-lite-generate-001"})),
                    "veo_first_last_to_video" => ("veo_first_last_to_video", json!({"first_image_uri": "gs://b/a.png", "last_image_uri": "gs://b/z.png", "model": "veo-3.1-generate-001"})),
                    "veo_reference_to_video" | "veo_ingredients_to_video" => (*tool, json!({"prompt": "p", "reference_image_uris": ["gs://b/r.png"], "model": "veo-3.1-generate-preview"})),
                    other => (other, json!({"x": "v"})),
                };
                json!({"title": format!("use {tool}"), "tier": "simple", "category": "c", "prompt": format!("please use {tool}"),
                    "agent_workflow": [{"function_name": name, "parameters": params, "quick_explanation": "because"}],
                    "novelty_reason": "n", "agent_followup": "f"})
            })
            .collect();
        ResponseTemplate::new(200)
            .set_body_json(openai_body(&json!({"scenarios": scenarios}).to_string()))
    }
}

fn explanation(name: &str) -> agent_seer::generate::interpret::ToolExplanation {
    agent_seer::generate::interpret::ToolExplanation {
        tool_name: name.into(),
        what_it_does: "d".into(),
        what_it_needs: "n".into(),
        why_its_used: "w".into(),
        enterprise_context: vec!["Ops".into()],
    }
}

#[tokio::test]
async fn coverage_loop_reaches_every_tool_of_a_64_tool_spec() {
    let server = MockServer::start().await;
    Mock::given(method("POST"))
        .respond_with(Writer)
        .mount(&server)
        .await;
    let tools: Vec<Value> = (0..64)
        .map(|i| json!({"name": format!("t{i:02}"), "inputSchema": {"type": "object", "properties": {"x": {"type": "string"}}, "required": ["x"]}}))
        .collect();
    let spec = ToolSet::from_json(&Value::Array(tools)).unwrap();
    let linter = agent_seer::lint::Linter::new(&spec, vec![]).unwrap();
    let records: Vec<_> = spec.tools().iter().map(|t| explanation(&t.name)).collect();
    let dir = tempfile::tempdir().unwrap();
    let c = client(
        openai(&server),
        dir.path(),
        CacheMode::Live,
        Duration::from_secs(5),
    );
    let mut g = Generator::new(&c, &spec, &[]);
    let plan = agent_seer::generate::scenarios::Plan {
        simple: 3,
        complex: 0,
        rounds: 5,
        batch: 12,
    };
    let (scenarios, cov) = g.scenarios(&records, &linter, plan).await.unwrap();
    assert_eq!((cov.covered, cov.tools), (64, 64), "{:?}", cov.uncovered);
    assert!(cov.gini < 0.2, "{}", cov.gini);
    assert!(scenarios.len() >= 64);
    // Round 1: 6 batches of ≤12 (48 covered), round 2: 16 left in 2 batches, round 3: 4 left.
    assert_eq!(server.received_requests().await.unwrap().len(), 6 + 2 + 1);
}

#[tokio::test]
async fn veo_scenarios_drop_what_the_linter_rejects() {
    let server = MockServer::start().await;
    Mock::given(method("POST"))
        .respond_with(Writer)
        .mount(&server)
        .await;
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let spec = ToolSet::load(&root.join("harnesses/veo.tools.json")).unwrap();
    let caps = vec![Capabilities::load(&root.join("capabilities/mcp-veo-go.yaml")).unwrap()];
    let linter = agent_seer::lint::Linter::new(&spec, caps.clone()).unwrap();
    let records: Vec<_> = spec.tools().iter().map(|t| explanation(&t.name)).collect();
    let dir = tempfile::tempdir().unwrap();
    let c = client(
        openai(&server),
        dir.path(),
        CacheMode::Live,
        Duration::from_secs(5),
    );
    let mut g = Generator::new(&c, &spec, &caps);
    let plan = agent_seer::generate::scenarios::Plan {
        simple: 6,
        complex: 0,
        rounds: 2,
        batch: 12,
    };
    let (scenarios, cov) = g.scenarios(&records, &linter, plan).await.unwrap();
    // veo_t2v's only scenario is rejected by the linter every time (V2), so it stays uncovered.
    assert_eq!(cov.uncovered, ["veo_t2v"]);
    assert!(
        scenarios.iter().all(|s| s
            .agent_workflow
            .iter()
            .all(|c| c.function_name != "veo_image2video")),
        "the hallucinated name was fixed on retry"
    );
    let stage = &g.report.stages["scenarios"];
    assert!(
        stage
            .dropped
            .iter()
            .all(|d| d.contains("veo-2.0-generate-001")),
        "{:?}",
        stage.dropped
    );
    assert_eq!(stage.dropped.len(), 2, "one per round: {:?}", stage.dropped);
    assert_eq!(stage.retried, 2);
}
