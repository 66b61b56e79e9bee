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
