//! The batch APIs against a scripted fake provider on wiremock that speaks each provider's
//! batch wire format — OpenAI Batch (multipart upload to `/files`, `/batches`, output and
//! error files), Anthropic Message Batches (results as JSON Lines), the Gemini API's batch mode
//! (a long-running operation with inline responses) — with the documents it serves shaped by
//! the fixtures the real SDKs checked (`tests/fixtures/batch/`): uploads, polls, partial
//! failures, expiry, the budget, resuming a job an earlier run left, chunking, and the cache a
//! later replay reads.

use std::collections::BTreeMap;
use std::sync::{Arc, Mutex};

use agent_seer::llm::{BatchEvent, BatchOptions, Estimate, Price};
use wiremock::matchers::any;

use super::*;

const FIXTURES: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/fixtures/batch");

fn fixture(rel: &str) -> Value {
    let text = std::fs::read_to_string(format!("{FIXTURES}/{rel}")).unwrap();
    serde_json::from_str(&text).unwrap()
}

fn fixture_lines(rel: &str) -> Vec<Value> {
    std::fs::read_to_string(format!("{FIXTURES}/{rel}"))
        .unwrap()
        .lines()
        .filter(|l| !l.trim().is_empty())
        .map(|l| serde_json::from_str(l).unwrap())
        .collect()
}

/// The SDK-checked line of `rel` whose `pick` matches.
fn fixture_line(rel: &str, pick: impl Fn(&Value) -> bool) -> Value {
    fixture_lines(rel).into_iter().find(|l| pick(l)).unwrap()
}

#[derive(Clone, Copy, Debug, PartialEq)]
enum Kind {
    OpenAi,
    /// OpenAI Batch over the Responses API (`/v1/responses` lines).
    Responses,
    Anthropic,
    Gemini,
}

const KINDS: [Kind; 4] = [Kind::OpenAi, Kind::Responses, Kind::Anthropic, Kind::Gemini];

/// What the fake does with one request of a job.
#[derive(Clone, Debug)]
enum Fate {
    /// Answers with this text (OpenAI, Gemini) or tool input (Anthropic).
    Answer(String),
    /// Fails the request: an HTTP status (OpenAI error file, Gemini inline error) or an
    /// Anthropic error type.
    Fail(u16, &'static str),
    /// The job ended before it ran.
    Expire,
    /// The job was cancelled before it ran (Anthropic).
    Cancel,
    /// The request's line of the results is not JSON (OpenAI).
    Garbage,
}

/// How a whole job ends.
#[derive(Clone, Copy, Debug, PartialEq)]
enum End {
    /// Completed (some requests may still fail or expire, as their fates say).
    Done,
    /// Expired: requests whose fate is not `Expire` were answered before it did.
    Expired,
    /// Failed as a whole (OpenAI validation, Gemini `BATCH_STATE_FAILED`).
    Failed,
}

struct Job {
    id: String,
    /// (request id, the request's body as the fake received it).
    items: Vec<(String, Value)>,
    polls: usize,
}

#[derive(Default)]
struct State {
    /// Every request: method, path and body.
    log: Vec<(String, String, Vec<u8>)>,
    jobs: Vec<Job>,
}

type Decide = dyn Fn(usize, &Value) -> Fate + Send + Sync;

/// How an ended job ended, and each of its requests' fate.
type Settled = (End, Vec<(String, Fate)>);

/// A provider's batch endpoints, scripted: `decide(job index, request body)` gives each
/// request's fate, `end(job index)` how the job ends, after `polls` looks at it.
#[derive(Clone)]
struct Fake {
    kind: Kind,
    state: Arc<Mutex<State>>,
    decide: Arc<Decide>,
    end: Arc<dyn Fn(usize) -> End + Send + Sync>,
    polls: usize,
    /// Jobs whose status the fake refuses with 401 (an earlier run's job under another key).
    refused: Arc<Mutex<Vec<String>>>,
}

impl Fake {
    fn new(kind: Kind, decide: impl Fn(usize, &Value) -> Fate + Send + Sync + 'static) -> Self {
        Self {
            kind,
            state: Arc::default(),
            decide: Arc::new(decide),
            end: Arc::new(|_| End::Done),
            polls: 2,
            refused: Arc::default(),
        }
    }

    fn ending(mut self, end: impl Fn(usize) -> End + Send + Sync + 'static) -> Self {
        self.end = Arc::new(end);
        self
    }

    async fn mount(&self, server: &MockServer) {
        Mock::given(any())
            .respond_with(self.clone())
            .mount(server)
            .await;
    }

    fn requests(&self) -> Vec<(String, String)> {
        let s = self.state.lock().unwrap();
        s.log
            .iter()
            .map(|(m, p, _)| (m.clone(), p.clone()))
            .collect()
    }

    fn jobs(&self) -> Vec<(String, Vec<(String, Value)>)> {
        let s = self.state.lock().unwrap();
        s.jobs
            .iter()
            .map(|j| (j.id.clone(), j.items.clone()))
            .collect()
    }

    fn create(&self, items: Vec<(String, Value)>) -> String {
        let mut s = self.state.lock().unwrap();
        let n = s.jobs.len();
        let id = match self.kind {
            Kind::OpenAi | Kind::Responses => format!("batch_fake{n}"),
            Kind::Anthropic => format!("msgbatch_fake{n}"),
            Kind::Gemini => format!("batches/fake{n}"),
        };
        s.jobs.push(Job {
            id: id.clone(),
            items,
            polls: 0,
        });
        id
    }

    /// Looks at job `id`: None while it runs, else how it ended and its requests' fates.
    fn look(&self, id: &str) -> Option<(usize, Option<Settled>)> {
        let mut s = self.state.lock().unwrap();
        let n = s.jobs.iter().position(|j| j.id == id)?;
        let job = &mut s.jobs[n];
        job.polls += 1;
        if job.polls <= self.polls {
            return Some((n, None));
        }
        let end = (self.end)(n);
        let fates = job
            .items
            .iter()
            .map(|(cid, body)| {
                let fate = match (end, (self.decide)(n, body)) {
                    (End::Expired, Fate::Expire) | (End::Done, Fate::Expire) => Fate::Expire,
                    (_, f) => f,
                };
                (cid.clone(), fate)
            })
            .collect();
        Some((n, Some((end, fates))))
    }
}

fn json_response(v: Value) -> ResponseTemplate {
    ResponseTemplate::new(200).set_body_json(v)
}

/// The JSON Lines of the file part of a multipart body.
fn multipart_file(content_type: &str, body: &[u8]) -> (BTreeMap<String, String>, Vec<Value>) {
    let boundary = content_type
        .split("boundary=")
        .nth(1)
        .unwrap()
        .trim_matches('"');
    let text = String::from_utf8_lossy(body).into_owned();
    let mut fields = BTreeMap::new();
    let mut lines = Vec::new();
    for part in text.split(&format!("--{boundary}")) {
        let Some((head, content)) = part.split_once("\r\n\r\n") else {
            continue;
        };
        let content = content.strip_suffix("\r\n").unwrap_or(content);
        let name = head
            .split("name=\"")
            .nth(1)
            .and_then(|r| r.split('"').next())
            .unwrap_or("");
        if head.contains("filename=") {
            fields.insert(
                format!("{name}.filename"),
                head.split("filename=\"")
                    .nth(1)
                    .unwrap()
                    .split('"')
                    .next()
                    .unwrap()
                    .to_owned(),
            );
            lines = content
                .lines()
                .map(|l| serde_json::from_str(l).unwrap())
                .collect();
        } else {
            fields.insert(name.to_owned(), content.to_owned());
        }
    }
    (fields, lines)
}

impl wiremock::Respond for Fake {
    fn respond(&self, req: &wiremock::Request) -> ResponseTemplate {
        let path = req.url.path().to_owned();
        let m = req.method.to_string();
        self.state
            .lock()
            .unwrap()
            .log
            .push((m.clone(), path.clone(), req.body.clone()));
        let body: Value = serde_json::from_slice(&req.body).unwrap_or(Value::Null);
        if self
            .refused
            .lock()
            .unwrap()
            .iter()
            .any(|id| path.contains(id.as_str()))
        {
            return ResponseTemplate::new(401).set_body_json(json!({"error": {"message": "Incorrect API key provided", "type": "invalid_request_error"}}));
        }
        match self.kind {
            Kind::OpenAi | Kind::Responses => self.openai(&m, &path, req, &body),
            Kind::Anthropic => self.anthropic(&m, &path, &body),
            Kind::Gemini => self.gemini(&m, &path, &body),
        }
    }
}

impl Fake {
    fn openai_url(&self) -> &'static str {
        if self.kind == Kind::Responses {
            "/v1/responses"
        } else {
            "/v1/chat/completions"
        }
    }

    fn openai(
        &self,
        m: &str,
        path: &str,
        req: &wiremock::Request,
        body: &Value,
    ) -> ResponseTemplate {
        match (m, path) {
            ("POST", "/files") => {
                let ct = req
                    .headers
                    .get("content-type")
                    .unwrap()
                    .to_str()
                    .unwrap()
                    .to_owned();
                let (fields, lines) = multipart_file(&ct, &req.body);
                assert_eq!(fields["purpose"], "batch");
                assert_eq!(fields["file.filename"], "batch.jsonl");
                let items = lines
                    .iter()
                    .map(|l| {
                        assert_eq!(l["method"], "POST");
                        assert_eq!(l["url"], self.openai_url());
                        (
                            l["custom_id"].as_str().unwrap().to_owned(),
                            l["body"].clone(),
                        )
                    })
                    .collect();
                // The file is the job to be: its id names the batch the next POST creates.
                let mut s = self.state.lock().unwrap();
                let n = s.jobs.len();
                s.jobs.push(Job {
                    id: format!("pending-file-{n}"),
                    items,
                    polls: 0,
                });
                let mut f = fixture("openai/file.json");
                f["id"] = json!(format!("file-in{n}"));
                json_response(f)
            }
            ("POST", "/batches") => {
                assert_eq!(body["endpoint"], self.openai_url());
                assert_eq!(body["completion_window"], "24h");
                let file = body["input_file_id"].as_str().unwrap();
                let n: usize = file.trim_start_matches("file-in").parse().unwrap();
                let id = format!("batch_fake{n}");
                self.state.lock().unwrap().jobs[n].id = id.clone();
                let mut b = fixture("openai/batch-validating.json");
                b["id"] = json!(id);
                b["input_file_id"] = json!(file);
                json_response(b)
            }
            ("GET", p) if p.starts_with("/batches/") => {
                let id = &p["/batches/".len()..];
                let Some((n, look)) = self.look(id) else {
                    return ResponseTemplate::new(404).set_body_json(json!({"error": {"message": "No batch found", "type": "invalid_request_error"}}));
                };
                let total = self.state.lock().unwrap().jobs[n].items.len();
                let mut b = match &look {
                    None => fixture("openai/batch-in-progress.json"),
                    Some((End::Done, _)) => fixture("openai/batch-completed.json"),
                    Some((End::Expired, _)) => fixture("openai/batch-expired.json"),
                    Some((End::Failed, _)) => fixture("openai/batch-failed.json"),
                };
                b["id"] = json!(id);
                b["input_file_id"] = json!(format!("file-in{n}"));
                b["request_counts"] = json!({"total": total, "completed": 0, "failed": 0});
                if let Some((end, _)) = look
                    && end != End::Failed
                {
                    b["output_file_id"] = json!(format!("file-out{n}"));
                    b["error_file_id"] = json!(format!("file-err{n}"));
                }
                json_response(b)
            }
            ("GET", p) if p.starts_with("/files/") && p.ends_with("/content") => {
                let file = &p["/files/".len()..p.len() - "/content".len()];
                let (errors, n) = match file.strip_prefix("file-out") {
                    Some(n) => (false, n),
                    None => (true, file.trim_start_matches("file-err")),
                };
                let n: usize = n.parse().unwrap();
                let id = self.state.lock().unwrap().jobs[n].id.clone();
                let (_, fates) = self.settled(&id);
                let mut out = String::new();
                for (cid, fate) in fates {
                    let line = match (&fate, errors) {
                        (Fate::Garbage, false) => {
                            out.push_str(&format!("not json {KEY} {cid}\n"));
                            continue;
                        }
                        (Fate::Answer(text), false) if self.kind == Kind::Responses => {
                            let mut l = fixture_lines("openai/output-responses.jsonl").remove(0);
                            l["custom_id"] = json!(cid);
                            let items = l["response"]["body"]["output"].as_array_mut().unwrap();
                            let message =
                                items.iter_mut().find(|i| i["type"] == "message").unwrap();
                            let part = message["content"]
                                .as_array_mut()
                                .unwrap()
                                .iter_mut()
                                .find(|p| p["type"] == "output_text")
                                .unwrap();
                            part["text"] = json!(text);
                            l
                        }
                        (Fate::Answer(text), false) => {
                            let mut l = fixture_line("openai/output.jsonl", |l| {
                                l["response"]["status_code"] == 200
                            });
                            l["custom_id"] = json!(cid);
                            l["response"]["body"]["choices"][0]["message"]["content"] = json!(text);
                            l
                        }
                        (Fate::Fail(status, _), true) => {
                            let mut l =
                                fixture_line("openai/errors.jsonl", |l| l["response"].is_object());
                            l["custom_id"] = json!(cid);
                            l["response"]["status_code"] = json!(status);
                            l
                        }
                        (Fate::Expire | Fate::Cancel, true) => {
                            let mut l = fixture_line("openai/expired-errors.jsonl", |l| {
                                l["error"]["code"] == "batch_expired"
                            });
                            l["custom_id"] = json!(cid);
                            l
                        }
                        _ => continue,
                    };
                    out.push_str(&line.to_string());
                    out.push('\n');
                }
                ResponseTemplate::new(200).set_body_string(out)
            }
            _ => ResponseTemplate::new(404).set_body_string(format!("no route {m} {path}")),
        }
    }

    /// A job's fates once it has ended (for reading its results).
    fn settled(&self, id: &str) -> Settled {
        let s = self.state.lock().unwrap();
        let n = s.jobs.iter().position(|j| j.id == id).unwrap();
        let end = (self.end)(n);
        let fates = s.jobs[n]
            .items
            .iter()
            .map(|(cid, body)| (cid.clone(), (self.decide)(n, body)))
            .collect();
        (end, fates)
    }

    fn anthropic(&self, m: &str, path: &str, body: &Value) -> ResponseTemplate {
        match (m, path) {
            ("POST", "/v1/messages/batches") => {
                let items = body["requests"]
                    .as_array()
                    .unwrap()
                    .iter()
                    .map(|r| {
                        (
                            r["custom_id"].as_str().unwrap().to_owned(),
                            r["params"].clone(),
                        )
                    })
                    .collect();
                let id = self.create(items);
                let mut b = fixture("anthropic/batch-in-progress.json");
                b["id"] = json!(id);
                json_response(b)
            }
            ("GET", p) if p.starts_with("/v1/messages/batches/") && p.ends_with("/results") => {
                let id = &p["/v1/messages/batches/".len()..p.len() - "/results".len()];
                let (_, fates) = self.settled(id);
                let mut out = String::new();
                for (cid, fate) in fates {
                    if let Fate::Garbage = fate {
                        out.push_str(&format!("not json {KEY} {cid}\n"));
                        continue;
                    }
                    let kind = match &fate {
                        Fate::Garbage => unreachable!("written above"),
                        Fate::Answer(_) => "succeeded",
                        Fate::Fail(..) => "errored",
                        Fate::Expire => "expired",
                        Fate::Cancel => "canceled",
                    };
                    let mut l =
                        fixture_line("anthropic/results.jsonl", |l| l["result"]["type"] == kind);
                    l["custom_id"] = json!(cid);
                    match fate {
                        Fate::Answer(text) => {
                            let blocks = l["result"]["message"]["content"].as_array_mut().unwrap();
                            let tool = blocks.iter_mut().find(|b| b["type"] == "tool_use").unwrap();
                            tool["input"] =
                                serde_json::from_str(&text).unwrap_or(json!({"unparsable": text}));
                        }
                        Fate::Fail(_, kind) => l["result"]["error"]["error"]["type"] = json!(kind),
                        _ => {}
                    }
                    out.push_str(&l.to_string());
                    out.push('\n');
                }
                ResponseTemplate::new(200).set_body_string(out)
            }
            ("GET", p) if p.starts_with("/v1/messages/batches/") => {
                let id = &p["/v1/messages/batches/".len()..];
                let Some((n, look)) = self.look(id) else {
                    return ResponseTemplate::new(404).set_body_json(json!({"type": "error", "error": {"type": "not_found_error", "message": "no batch"}}));
                };
                let total = self.state.lock().unwrap().jobs[n].items.len();
                let mut b = match look {
                    None => fixture("anthropic/batch-in-progress.json"),
                    Some(_) => fixture("anthropic/batch-ended.json"),
                };
                b["id"] = json!(id);
                let ended = b["processing_status"] == "ended";
                b["request_counts"] = json!({"processing": if ended { 0 } else { total }, "succeeded": if ended { total } else { 0 }, "errored": 0, "canceled": 0, "expired": 0});
                json_response(b)
            }
            _ => ResponseTemplate::new(404).set_body_string(format!("no route {m} {path}")),
        }
    }

    fn gemini(&self, m: &str, path: &str, body: &Value) -> ResponseTemplate {
        match (m, path) {
            ("POST", "/v1beta/models/m-1:batchGenerateContent") => {
                let items = body["batch"]["inputConfig"]["requests"]["requests"]
                    .as_array()
                    .unwrap()
                    .iter()
                    .map(|r| {
                        (
                            r["metadata"]["key"].as_str().unwrap().to_owned(),
                            r["request"].clone(),
                        )
                    })
                    .collect();
                let id = self.create(items);
                let mut op = fixture("gemini/operation-pending.json");
                op["name"] = json!(id);
                json_response(op)
            }
            ("GET", p) if p.starts_with("/v1beta/batches/") => {
                let id = &p["/v1beta/".len()..];
                let Some((n, look)) = self.look(id) else {
                    return ResponseTemplate::new(404).set_body_json(json!({"error": {"code": 404, "message": "not found", "status": "NOT_FOUND"}}));
                };
                let total = self.state.lock().unwrap().jobs[n].items.len();
                let mut op = match &look {
                    None => fixture("gemini/batch-running.json"),
                    Some((End::Done, _)) => fixture("gemini/batch-succeeded.json"),
                    Some((End::Expired, _)) => fixture("gemini/batch-expired.json"),
                    Some((End::Failed, _)) => fixture("gemini/batch-failed.json"),
                };
                op["name"] = json!(id);
                if let Some(stats) = op["metadata"].get_mut("batchStats") {
                    stats["requestCount"] = json!(total.to_string());
                }
                // An expired Gemini job hands over nothing.
                if let Some((End::Done, fates)) = look {
                    let template = fixture("gemini/batch-succeeded.json");
                    let list =
                        template["metadata"]["output"]["inlinedResponses"]["inlinedResponses"]
                            .as_array()
                            .unwrap();
                    let ok = list
                        .iter()
                        .find(|r| r.get("response").is_some())
                        .unwrap()
                        .clone();
                    let err = list
                        .iter()
                        .find(|r| r.get("error").is_some())
                        .unwrap()
                        .clone();
                    let mut out = Vec::new();
                    for (cid, fate) in fates {
                        let r = match fate {
                            Fate::Answer(text) => {
                                let mut r = ok.clone();
                                r["response"]["candidates"][0]["content"]["parts"] =
                                    json!([{"text": text}]);
                                r["metadata"] = json!({"key": cid});
                                r
                            }
                            Fate::Fail(status, _) => {
                                // google.rpc codes: INVALID_ARGUMENT for a 400, UNAVAILABLE for a 5xx.
                                let mut r = err.clone();
                                r["error"]["code"] = json!(if status >= 500 { 14 } else { 3 });
                                r["metadata"] = json!({"key": cid});
                                r
                            }
                            // An entry naming no request.
                            Fate::Garbage => json!({"response": {}}),
                            Fate::Expire | Fate::Cancel => continue,
                        };
                        out.push(r);
                    }
                    op["metadata"]["output"] =
                        json!({"inlinedResponses": {"inlinedResponses": out}});
                }
                json_response(op)
            }
            _ => ResponseTemplate::new(404).set_body_string(format!("no route {m} {path}")),
        }
    }
}

fn provider(kind: Kind, server: &MockServer) -> Provider {
    match kind {
        Kind::OpenAi => openai(server),
        Kind::Responses => Provider::OpenAiResponses {
            base_url: server.uri(),
            key: Some(KEY.into()),
        },
        Kind::Anthropic => Provider::Anthropic {
            base_url: server.uri(),
            key: Some(KEY.into()),
        },
        Kind::Gemini => Provider::Gemini {
            base_url: server.uri(),
            key: Some(KEY.into()),
        },
    }
}

/// A new wiremock server answering as `fake`, and a live client for it with an empty cache (it
/// lives as long as the returned directory).
async fn start(fake: &Fake) -> (MockServer, tempfile::TempDir, Client) {
    let server = MockServer::start().await;
    fake.mount(&server).await;
    let dir = tempfile::tempdir().unwrap();
    let c = client(
        provider(fake.kind, &server),
        dir.path(),
        CacheMode::Live,
        Duration::from_secs(5),
    );
    (server, dir, c)
}

/// Requests that differ in their user message (`item N`).
fn requests(n: usize) -> Vec<Request> {
    (0..n)
        .map(|i| Request {
            user: format!("Grade call {i}."),
            ..request()
        })
        .collect()
}

/// The request number a body carries (`Grade call N.`), whatever the wire format.
fn item_of(body: &Value) -> usize {
    let text = body.to_string();
    let at = text.find("Grade call ").unwrap() + "Grade call ".len();
    text[at..].split('.').next().unwrap().parse().unwrap()
}

fn quick() -> BatchOptions {
    BatchOptions {
        max_cost_usd: None,
        price: None,
        poll: Duration::from_millis(5),
        wait: Duration::from_secs(30),
        max_requests_per_job: None,
    }
}

/// Runs a batch, collecting its events.
async fn run_batch(
    c: &Client,
    reqs: &[Request],
    options: &BatchOptions,
) -> (
    Result<Vec<Result<Grade, LlmError>>, LlmError>,
    Vec<BatchEvent>,
) {
    let events = Arc::new(Mutex::new(Vec::new()));
    let sink = events.clone();
    let on_event = move |e: BatchEvent| sink.lock().unwrap().push(e);
    let r = c
        .batch_structured::<Grade, _>(reqs, check, options, &on_event)
        .await;
    let events = events.lock().unwrap().clone();
    (r, events)
}

fn grade_text(i: usize) -> String {
    json!({"score": i, "why": format!("call {i}")}).to_string()
}

/// Each provider: one job holds the distinct requests (a repeated request is sent once), it is
/// polled until it ends, every answer is validated, counted in the ledger as batched and
/// cached — so a synchronous replay of the same requests asks nothing — and the estimate came
/// before anything was sent.
#[tokio::test]
async fn each_provider_sends_one_job_and_caches_every_answer() {
    for kind in KINDS {
        let fake = Fake::new(kind, |_, body| Fate::Answer(grade_text(item_of(body))));
        let (server, dir, c) = start(&fake).await;
        let mut reqs = requests(3);
        reqs.push(reqs[1].clone());
        let (r, events) = run_batch(&c, &reqs, &quick()).await;
        let grades: Vec<Grade> = r.unwrap().into_iter().map(Result::unwrap).collect();
        assert_eq!(
            grades.iter().map(|g| g.score).collect::<Vec<_>>(),
            [0, 1, 2, 1],
            "{kind:?}"
        );
        let jobs = fake.jobs();
        assert_eq!(jobs.len(), 1, "{kind:?}");
        assert_eq!(
            jobs[0].1.len(),
            3,
            "{kind:?}: the repeated request goes once"
        );
        // Each item's body is the body of the synchronous call, and its id is the request's
        // cache key (a valid Anthropic custom_id: 64 of [a-f0-9]).
        for (cid, body) in &jobs[0].1 {
            let i = item_of(body);
            assert_eq!(cid, &c.cache_key(&reqs[i]), "{kind:?}");
            assert_eq!(
                body["temperature"]
                    .as_f64()
                    .or(body["generationConfig"]["temperature"].as_f64()),
                Some(0.0),
                "{kind:?}"
            );
        }
        match &events[0] {
            BatchEvent::Estimate(e) => {
                assert_eq!(
                    (e.round, e.requests, e.cached, e.resumed),
                    (1, 3, 0, 0),
                    "{kind:?}"
                );
                assert_eq!(e.output_tokens, 600);
                assert_eq!(e.usd, None, "m-1 has no list price");
            }
            other => panic!("{kind:?}: the first event is {other:?}"),
        }
        assert!(
            events.iter().any(|e| matches!(
                e,
                BatchEvent::Ended {
                    valid: 3,
                    failed: 0,
                    ..
                }
            )),
            "{kind:?}: {events:?}"
        );
        let ledger = &c.ledger().entries()[&format!("{}:m-1", c.config().provider.name())];
        assert_eq!(
            (ledger.calls, ledger.batched, ledger.cached),
            (3, 3, 0),
            "{kind:?}"
        );
        // The journal is gone once the job is read.
        assert_eq!(
            std::fs::read_dir(dir.path().join("batches"))
                .unwrap()
                .count(),
            0,
            "{kind:?}"
        );
        // A replay (no provider at all) answers every request from what the batch cached.
        let replay = client(
            provider(kind, &server),
            dir.path(),
            CacheMode::Replay,
            Duration::from_secs(5),
        );
        let before = fake.requests().len();
        for (i, r) in reqs.iter().enumerate() {
            let g: Grade = replay.structured(r, check).await.unwrap();
            assert_eq!(g.score as usize, [0, 1, 2, 1][i]);
        }
        assert_eq!(
            fake.requests().len(),
            before,
            "{kind:?}: the replay sent nothing"
        );
        // So does a second batch: everything is answered from the cache, nothing is sent.
        let (r, events) = run_batch(&c, &reqs, &quick()).await;
        assert!(r.unwrap().iter().all(Result::is_ok));
        assert_eq!(fake.requests().len(), before, "{kind:?}");
        assert!(
            matches!(
                &events[..],
                [BatchEvent::Estimate(Estimate {
                    requests: 0,
                    cached: 3,
                    ..
                })]
            ),
            "{events:?}"
        );
    }
}

/// Partial failures: in the first job one request is answered, one expires, one fails for
/// good (HTTP 400 / an invalid request), one fails for a while (HTTP 500 / overloaded), and
/// one answers out of range. The second job carries the expired, the transient and the
/// rejected one — the rejected one with the problem fed back — and answers them; the
/// permanent failure stays an error naming the job.
#[tokio::test]
async fn partial_failures_go_out_again_and_permanent_ones_stay() {
    for kind in KINDS {
        let fake = Fake::new(kind, move |job, body| {
            let i = item_of(body);
            match (job, i) {
                (_, 0) => Fate::Answer(grade_text(0)),
                (_, 5) if kind == Kind::Anthropic => Fate::Cancel,
                (0, 1) => Fate::Expire,
                (_, 2) => Fate::Fail(400, "invalid_request_error"),
                (0, 3) => Fate::Fail(500, "overloaded_error"),
                (0, 4) => Fate::Answer(json!({"score": 11, "why": "too high"}).to_string()),
                (_, 4) => {
                    assert!(
                        body.to_string()
                            .contains("Your previous answer was rejected: score 11 is above 10"),
                        "{body}"
                    );
                    Fate::Answer(grade_text(4))
                }
                (_, i) => Fate::Answer(grade_text(i)),
            }
        });
        let (_server, _dir, c) = start(&fake).await;
        let n = if kind == Kind::Anthropic { 6 } else { 5 };
        let (r, events) = run_batch(&c, &requests(n), &quick()).await;
        let r = r.unwrap();
        if kind == Kind::Anthropic {
            let e = r[5].as_ref().unwrap_err().to_string();
            assert!(
                e.starts_with("anthropic batch msgbatch_fake0: canceled"),
                "{e}"
            );
        }
        assert_eq!(r[0].as_ref().unwrap().score, 0, "{kind:?}");
        assert_eq!(
            r[1].as_ref().unwrap().score,
            1,
            "{kind:?}: the expired request went out again"
        );
        let e = r[2].as_ref().unwrap_err().to_string();
        assert!(
            e.contains("batch_fake0")
                || e.contains("msgbatch_fake0")
                || e.contains("batches/fake0"),
            "{kind:?}: {e}"
        );
        if kind == Kind::Gemini {
            assert!(
                e.ends_with("batches/fake0: 3 Request contains an invalid argument."),
                "{e}"
            );
        }
        assert!(
            matches!(r[2], Err(LlmError::BatchItem { .. })),
            "{kind:?}: {e}"
        );
        assert_eq!(
            r[3].as_ref().unwrap().score,
            3,
            "{kind:?}: the transient failure went out again"
        );
        assert_eq!(
            r[4].as_ref().unwrap().score,
            4,
            "{kind:?}: the rejected answer was asked again"
        );
        let jobs = fake.jobs();
        assert_eq!(jobs.len(), 2, "{kind:?}");
        let mut second: Vec<usize> = jobs[1].1.iter().map(|(_, b)| item_of(b)).collect();
        second.sort();
        assert_eq!(second, [1, 3, 4], "{kind:?}");
        let rounds: Vec<u32> = events
            .iter()
            .filter_map(|e| match e {
                BatchEvent::Estimate(e) => Some(e.round),
                _ => None,
            })
            .collect();
        assert_eq!(rounds, [1, 2], "{kind:?}");
    }
}

/// A job that expires or fails as a whole: OpenAI's expired job still hands over what it
/// finished, and what it did not finish goes out again (here it never finishes: three rounds,
/// then the last error); an expired Gemini job hands over nothing, and all of it goes out
/// again; a failed job fails every request with the provider's reason, once.
#[tokio::test]
async fn whole_jobs_that_expire_or_fail() {
    let fake = Fake::new(Kind::OpenAi, |_, body| match item_of(body) {
        0 => Fate::Answer(grade_text(0)),
        _ => Fate::Expire,
    })
    .ending(|job| if job == 0 { End::Expired } else { End::Done });
    let (_server, _dir, c) = start(&fake).await;
    let (r, _) = run_batch(&c, &requests(2), &quick()).await;
    let r = r.unwrap();
    assert_eq!(r[0].as_ref().unwrap().score, 0);
    // Expired in every round: three jobs, then the last error.
    let e = r[1].as_ref().unwrap_err().to_string();
    assert!(e.contains("batch_expired"), "{e}");
    assert_eq!(fake.jobs().len(), 3, "three rounds at most");

    let fake = Fake::new(Kind::Gemini, |_, body| {
        Fate::Answer(grade_text(item_of(body)))
    })
    .ending(|job| if job == 0 { End::Expired } else { End::Done });
    let (_server, _dir, c) = start(&fake).await;
    let (r, _) = run_batch(&c, &requests(2), &quick()).await;
    let scores: Vec<u8> = r.unwrap().into_iter().map(|g| g.unwrap().score).collect();
    assert_eq!(scores, [0, 1]);
    assert_eq!(
        fake.jobs()
            .iter()
            .map(|(_, items)| items.len())
            .collect::<Vec<_>>(),
        [2, 2]
    );

    for kind in [Kind::OpenAi, Kind::Gemini] {
        let fake = Fake::new(kind, |_, body| Fate::Answer(grade_text(item_of(body))))
            .ending(|_| End::Failed);
        let (_server, _dir, c) = start(&fake).await;
        let (r, _) = run_batch(&c, &requests(2), &quick()).await;
        let r = r.unwrap();
        for e in &r {
            let e = e.as_ref().unwrap_err();
            assert!(matches!(e, LlmError::BatchItem { .. }), "{kind:?}: {e}");
            assert!(e.is_provider_failure());
        }
        insta::assert_snapshot!(
            format!("failed_job_{kind:?}"),
            r[0].as_ref().unwrap_err().to_string()
        );
        assert_eq!(
            fake.jobs().len(),
            1,
            "{kind:?}: a failed job is not sent again"
        );
    }
}

/// The budget: a round whose estimate would pass `--max-cost` is not sent — nothing reaches
/// the provider, and each request ends in the over-budget error — while a budget it fits in
/// lets it through; a budget without a price to hold it to is refused before anything.
#[tokio::test]
async fn the_budget_stops_a_round_before_it_is_sent() {
    let server = MockServer::start().await;
    let fake = Fake::new(Kind::OpenAi, |_, body| {
        Fate::Answer(grade_text(item_of(body)))
    });
    fake.mount(&server).await;
    let dir = tempfile::tempdir().unwrap();
    let c = Client::new(LlmConfig {
        model: "gpt-4o-mini".into(),
        ..client(
            openai(&server),
            dir.path(),
            CacheMode::Live,
            Duration::from_secs(5),
        )
        .config()
        .clone()
    })
    .unwrap();
    // 3 requests of ~60 prompt tokens and 200 answer tokens at half of $0.15/$0.60: ~$0.0002.
    let tight = BatchOptions {
        max_cost_usd: Some(0.0001),
        ..quick()
    };
    let (r, events) = run_batch(&c, &requests(3), &tight).await;
    assert!(
        fake.requests().is_empty(),
        "nothing was sent: {:?}",
        fake.requests()
    );
    let r = r.unwrap();
    assert!(
        r.iter()
            .all(|x| matches!(x, Err(LlmError::OverBudget { .. })))
    );
    let BatchEvent::Estimate(e) = &events[0] else {
        panic!()
    };
    let usd = e.usd.unwrap();
    assert!(usd > 0.0001 && usd < 0.001, "{usd}");
    assert_eq!(e.budget_usd, Some(0.0001));
    insta::assert_snapshot!("over_budget", r[0].as_ref().unwrap_err().to_string());
    let roomy = BatchOptions {
        max_cost_usd: Some(0.01),
        ..quick()
    };
    let (r, _) = run_batch(&c, &requests(3), &roomy).await;
    assert!(r.unwrap().iter().all(Result::is_ok));
    let e = &c.ledger().entries()["openai:gpt-4o-mini"];
    assert_eq!(e.batched, 3);
    assert!(e.estimated_cost_usd.unwrap() > 0.0);

    let unpriced = client(
        openai(&server),
        dir.path(),
        CacheMode::Live,
        Duration::from_secs(5),
    );
    let (r, _) = run_batch(&unpriced, &requests(1), &tight).await;
    let e = r.unwrap_err().to_string();
    assert!(
        e.contains("no list price is known for openai:m-1") && e.contains("--price"),
        "{e}"
    );
    let priced = BatchOptions {
        price: Some(Price {
            input: 1000.0,
            output: 1000.0,
        }),
        ..tight
    };
    let (r, _) = run_batch(&unpriced, &requests(1), &priced).await;
    assert!(matches!(r.unwrap()[0], Err(LlmError::OverBudget { .. })));
}

/// A run that stops waiting leaves its job journaled; the next run with the same requests
/// collects that job — nothing is uploaded or paid for twice — and clears the journal.
#[tokio::test]
async fn a_job_left_running_is_collected_by_the_next_run() {
    for kind in KINDS {
        let mut fake = Fake::new(kind, |_, body| Fate::Answer(grade_text(item_of(body))));
        fake.polls = 3;
        let (_server, dir, c) = start(&fake).await;
        let impatient = BatchOptions {
            wait: Duration::ZERO,
            ..quick()
        };
        let (r, _) = run_batch(&c, &requests(2), &impatient).await;
        let r = r.unwrap();
        let e = r[0].as_ref().unwrap_err();
        assert!(matches!(e, LlmError::BatchPending { .. }), "{kind:?}: {e}");
        assert!(
            e.to_string()
                .contains("running the same command again collects it"),
            "{e}"
        );
        let journal: Vec<_> = std::fs::read_dir(dir.path().join("batches"))
            .unwrap()
            .collect();
        assert_eq!(journal.len(), 1, "{kind:?}");
        let (r, events) = run_batch(&c, &requests(2), &quick()).await;
        assert!(r.unwrap().iter().all(Result::is_ok), "{kind:?}");
        assert_eq!(
            fake.jobs().len(),
            1,
            "{kind:?}: the job was collected, not sent again"
        );
        assert!(
            events
                .iter()
                .any(|e| matches!(e, BatchEvent::Submitted { resumed: true, .. })),
            "{kind:?}: {events:?}"
        );
        assert!(
            matches!(
                &events[0],
                BatchEvent::Estimate(Estimate {
                    requests: 0,
                    resumed: 2,
                    ..
                })
            ),
            "{events:?}"
        );
        assert_eq!(
            std::fs::read_dir(dir.path().join("batches"))
                .unwrap()
                .count(),
            0,
            "{kind:?}"
        );
    }
}

/// Jobs stay within a request limit (`AGENT_SEER_BATCH_MAX_REQUESTS`): five requests at two a
/// job are three jobs, answered in order.
#[tokio::test]
async fn a_round_is_split_into_jobs_within_the_limit() {
    let fake = Fake::new(Kind::Anthropic, |_, body| {
        Fate::Answer(grade_text(item_of(body)))
    });
    let (_server, _dir, c) = start(&fake).await;
    let small = BatchOptions {
        max_requests_per_job: Some(2),
        ..quick()
    };
    let (r, _) = run_batch(&c, &requests(5), &small).await;
    let scores: Vec<u8> = r.unwrap().into_iter().map(|g| g.unwrap().score).collect();
    assert_eq!(scores, [0, 1, 2, 3, 4]);
    let sizes: Vec<usize> = fake.jobs().iter().map(|(_, items)| items.len()).collect();
    assert_eq!(sizes, [2, 2, 1]);
}

/// What cannot be batched is refused before anything is sent: Vertex AI (its batch jobs read
/// from Cloud Storage or BigQuery), and replay mode answers only from the cache.
#[tokio::test]
async fn vertex_and_replay_send_nothing() {
    let server = MockServer::start().await;
    let fake = Fake::new(Kind::OpenAi, |_, _| Fate::Answer(grade_text(1)));
    fake.mount(&server).await;
    let dir = tempfile::tempdir().unwrap();
    let vertex = Provider::Vertex {
        base_url: server.uri(),
        project: "p".into(),
        location: "us-central1".into(),
        token: Some(KEY.into()),
    };
    let c = client(vertex, dir.path(), CacheMode::Live, Duration::from_secs(5));
    let (r, _) = run_batch(&c, &requests(1), &quick()).await;
    let e = r.unwrap_err().to_string();
    assert!(e.contains("vertex") && e.contains("gemini:MODEL"), "{e}");
    let replay = client(
        openai(&server),
        dir.path(),
        CacheMode::Replay,
        Duration::from_secs(5),
    );
    let (r, _) = run_batch(&replay, &requests(1), &quick()).await;
    assert!(matches!(r.unwrap()[0], Err(LlmError::CacheMiss { .. })));
    assert!(fake.requests().is_empty());
}

/// Results that are not the wire format are a clear error naming the file and line, and a key
/// the provider echoes never reaches an answer or an error.
#[tokio::test]
async fn garbage_results_are_named_and_keys_redacted() {
    let fake = Fake::new(Kind::OpenAi, |_, _| {
        Fate::Answer(format!("{{\"score\": 1, \"why\": \"{KEY}\"}}"))
    });
    let (_server, _dir, c) = start(&fake).await;
    let (r, _) = run_batch(&c, &requests(1), &quick()).await;
    let g = r.unwrap().remove(0).unwrap();
    assert_eq!(g.why, "[redacted]");

    let server = MockServer::start().await;
    Mock::given(method("POST"))
        .and(path("/files"))
        .respond_with(json_response(fixture("openai/file.json")))
        .mount(&server)
        .await;
    let mut b = fixture("openai/batch-completed.json");
    b["id"] = json!("batch_g");
    b["output_file_id"] = json!("file-out");
    b["error_file_id"] = Value::Null;
    Mock::given(method("POST"))
        .and(path("/batches"))
        .respond_with(json_response(b.clone()))
        .mount(&server)
        .await;
    Mock::given(method("GET"))
        .and(path("/batches/batch_g"))
        .respond_with(json_response(b))
        .mount(&server)
        .await;
    Mock::given(method("GET"))
        .and(path("/files/file-out/content"))
        .respond_with(
            ResponseTemplate::new(200)
                .set_body_string(format!("{{\"custom_id\": \"x\"}}\nnot json {KEY}\n")),
        )
        .mount(&server)
        .await;
    let dir = tempfile::tempdir().unwrap();
    let c = client(
        openai(&server),
        dir.path(),
        CacheMode::Live,
        Duration::from_secs(5),
    );
    // The request is left without an answer, and says why (issue 32, item 8: one bad line
    // no longer ends the run).
    let (r, _) = run_batch(&c, &requests(1), &quick()).await;
    let e = r.unwrap().remove(0).unwrap_err().to_string();
    assert!(
        e.contains("line 2 of the results of file-out is not JSON"),
        "{e}"
    );
    assert!(!e.contains(KEY) && e.contains("[redacted]"), "{e}");
}

/// Issue 32, item 8: one line of a job's results that is not JSON costs that request alone:
/// the others' answers are kept (and cached), and only it goes out again.
#[tokio::test]
async fn one_bad_result_line_resends_only_its_request() {
    let fake = Fake::new(Kind::OpenAi, |n, body| match (n, item_of(body)) {
        (0, 1) => Fate::Garbage,
        _ => Fate::Answer("{\"score\": 1, \"why\": \"ok\"}".into()),
    });
    let (_server, _dir, c) = start(&fake).await;
    let (r, _) = run_batch(&c, &requests(3), &quick()).await;
    for g in r.unwrap() {
        assert_eq!(g.unwrap().why, "ok");
    }
    let jobs = fake.jobs();
    assert_eq!(jobs.len(), 2, "{jobs:?}");
    assert_eq!(jobs[0].1.len(), 3);
    assert_eq!(
        jobs[1].1.len(),
        1,
        "only the request without an answer goes again"
    );
    assert_eq!(item_of(&jobs[1].1[0].1), 1);
}

/// The shape of a JSON value: every path to a leaf with the leaf's type, arrays as `[]`, not
/// descending into the per-request bodies (`params`, `request`, `body`: the synchronous call's
/// body, tested with the providers).
fn shape(v: &Value, at: &str, out: &mut std::collections::BTreeSet<String>) {
    match v {
        Value::Object(m) => {
            for (k, x) in m {
                let p = format!("{at}/{k}");
                if matches!(k.as_str(), "params" | "request" | "body" | "metadata")
                    && at.contains("[]")
                {
                    out.insert(format!(
                        "{p}: {}",
                        if x.is_object() { "object" } else { "?" }
                    ));
                } else {
                    shape(x, &p, out);
                }
            }
        }
        Value::Array(xs) => xs.iter().for_each(|x| shape(x, &format!("{at}/[]"), out)),
        Value::String(_) => drop(out.insert(format!("{at}: string"))),
        Value::Number(_) => drop(out.insert(format!("{at}: number"))),
        Value::Bool(_) => drop(out.insert(format!("{at}: bool"))),
        Value::Null => drop(out.insert(format!("{at}: null"))),
    }
}

fn shape_of(v: &Value) -> Vec<String> {
    let mut out = std::collections::BTreeSet::new();
    shape(v, "", &mut out);
    out.into_iter().collect()
}

/// What agent-seer sends to create a job has the shape the providers' own SDKs send
/// (`tests/fixtures/batch/*/create-request.json`, recorded from openai 3.51.0, anthropic
/// 2.10.0 and google-genai 3.3.0): the same envelope members, and for OpenAI the same two
/// form parts with the same names, file name and content type.
#[tokio::test]
async fn job_envelopes_have_the_shape_the_sdks_send() {
    for kind in KINDS {
        let fake = Fake::new(kind, |_, body| Fate::Answer(grade_text(item_of(body))));
        let (_server, _dir, c) = start(&fake).await;
        let (r, _) = run_batch(&c, &requests(2), &quick()).await;
        assert!(r.unwrap().iter().all(Result::is_ok));
        let log = fake.state.lock().unwrap().log.clone();
        let create = |p: &str| -> Value {
            let (_, _, body) = log
                .iter()
                .find(|(m, path, _)| m == "POST" && path.ends_with(p))
                .unwrap();
            serde_json::from_slice(body).unwrap()
        };
        let (ours, sdk) = match kind {
            Kind::OpenAi | Kind::Responses => {
                let (_, _, upload) = log.iter().find(|(_, p, _)| p == "/files").unwrap();
                let sdk_upload = fixture("openai/upload-request.json");
                let text = String::from_utf8_lossy(upload);
                for part in sdk_upload["body"].as_array().unwrap() {
                    let disposition = part["content-disposition"].as_str().unwrap();
                    assert!(
                        text.contains(&format!("Content-Disposition: {disposition}")),
                        "{disposition} in {text}"
                    );
                    if let Some(ct) = part["content-type"].as_str() {
                        assert!(text.contains(&format!("Content-Type: {ct}")), "{ct}");
                    }
                }
                (
                    create("/batches"),
                    fixture("openai/create-request.json")["body"].clone(),
                )
            }
            Kind::Anthropic => (
                create("/v1/messages/batches"),
                fixture("anthropic/create-request.json")["body"].clone(),
            ),
            Kind::Gemini => (
                create(":batchGenerateContent"),
                fixture("gemini/create-request.json")["body"].clone(),
            ),
        };
        assert_eq!(shape_of(&ours), shape_of(&sdk), "{kind:?}: ours {ours:#}");
    }
}

/// `agent-seer judge --batch` on the Lyria suite's seven transcripts against the fake OpenAI
/// batch API (a judge that passes everything). With a budget the first round cannot fit in,
/// the estimate is printed, nothing is sent, and the run ends with exit code 4, each
/// transcript saying why. Without one, the seven judgements go out as one job and the ledger
/// counts them batched; a replay without `--batch` then answers every transcript from the
/// cache the batch filled, with the same scores.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn judge_batch_from_the_command_line() {
    let server = MockServer::start().await;
    let answer = super::certify::always_pass().to_string();
    let fake = Fake::new(Kind::OpenAi, move |_, _| Fate::Answer(answer.clone()));
    fake.mount(&server).await;
    let cache = tempfile::tempdir().unwrap();
    let judge = |extra: &[&str], replay: bool| {
        let (uri, cache) = (server.uri(), cache.path().to_path_buf());
        let mut args = vec!["judge", "--judge", "openai:gpt-4o-mini", "--format", "json"];
        args.extend_from_slice(extra);
        args.push("transcripts/lyria");
        let args: Vec<String> = args.iter().map(|s| (*s).to_owned()).collect();
        tokio::task::spawn_blocking(move || {
            let mut cmd = std::process::Command::new(env!("CARGO_BIN_EXE_agent-seer"));
            cmd.args(&args)
                .current_dir(env!("CARGO_MANIFEST_DIR"))
                .env("AGENT_SEER_OPENAI_BASE_URL", uri)
                .env("AGENT_SEER_LLM_CACHE", cache)
                .env("OPENAI_API_KEY", KEY)
                .env("AGENT_SEER_BATCH_POLL_MS", "5")
                .env_remove("AGENT_SEER_JUDGE")
                .env_remove("AGENT_SEER_LLM");
            if replay {
                cmd.env("AGENT_SEER_LLM", "replay");
            }
            cmd.output().unwrap()
        })
    };
    let o = judge(&["--batch", "--max-cost", "0.0001"], false)
        .await
        .unwrap();
    let err = String::from_utf8_lossy(&o.stderr).into_owned();
    assert_eq!(o.status.code(), Some(4), "{err}");
    assert!(fake.requests().is_empty(), "nothing was sent");
    insta::assert_snapshot!("judge_over_budget_stderr", err);
    let v: Value = serde_json::from_slice(&o.stdout).unwrap();
    let results = v["results"].as_array().unwrap();
    assert_eq!(results.len(), 7);
    assert!(
        results
            .iter()
            .all(|r| r["error"].as_str().unwrap().starts_with("not sent: ")),
        "{v:#}"
    );

    let o = judge(&["--batch"], false).await.unwrap();
    let v = json_stdout(&o);
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(err.contains("batch batch_fake0: sent, 7 requests"), "{err}");
    assert!(
        err.contains("batch batch_fake0: read, 7 valid answers, 0 failed or rejected"),
        "{err}"
    );
    assert_eq!(fake.jobs().len(), 1);
    let ledger = &v["ledger"]["openai:gpt-4o-mini"];
    assert_eq!(
        (ledger["calls"].as_u64(), ledger["batched"].as_u64()),
        (Some(7), Some(7)),
        "{v:#}"
    );
    let scores = |v: &Value| -> Vec<(String, f64)> {
        v["results"]
            .as_array()
            .unwrap()
            .iter()
            .map(|r| {
                (
                    r["trial"].as_str().unwrap().to_owned(),
                    r["judge_tc"].as_f64().unwrap(),
                )
            })
            .collect()
    };
    let batched = scores(&v);
    assert!(batched.iter().all(|(_, tc)| *tc == 1.0), "{batched:?}");

    let before = fake.requests().len();
    let o = judge(&[], true).await.unwrap();
    let v = json_stdout(&o);
    assert_eq!(scores(&v), batched);
    assert_eq!(fake.requests().len(), before, "the replay asked nothing");
}

/// A job an earlier run left that answers requests this run did not ask keeps those journaled
/// (they were paid for) until a run asks them; a journaled job the provider refuses to show
/// (401: another account's key) is not a wall: its requests go out again.
#[tokio::test]
async fn resumed_jobs_keep_what_was_not_asked_and_refused_ones_are_resent() {
    let fake = Fake::new(Kind::OpenAi, |_, body| {
        Fate::Answer(grade_text(item_of(body)))
    });
    let (_server, dir, c) = start(&fake).await;
    let reqs = requests(3);
    let impatient = BatchOptions {
        wait: Duration::ZERO,
        ..quick()
    };
    let (r, _) = run_batch(&c, &reqs[..2], &impatient).await;
    assert!(
        r.unwrap()
            .iter()
            .all(|x| matches!(x, Err(LlmError::BatchPending { .. })))
    );
    // Asks 1 and 2: job 0 answers 1, a new job answers 2; 0 stays journaled.
    let (r, _) = run_batch(&c, &reqs[1..], &quick()).await;
    assert!(r.unwrap().iter().all(Result::is_ok));
    assert_eq!(fake.jobs().len(), 2);
    let journal: Vec<Value> = std::fs::read_dir(dir.path().join("batches"))
        .unwrap()
        .map(|e| {
            serde_json::from_str(&std::fs::read_to_string(e.unwrap().path()).unwrap()).unwrap()
        })
        .collect();
    assert_eq!(journal.len(), 1);
    assert_eq!(journal[0]["id"], "batch_fake0");
    assert_eq!(
        journal[0]["items"]
            .as_object()
            .unwrap()
            .values()
            .collect::<Vec<_>>(),
        [&json!(c.cache_key(&reqs[0]))]
    );
    // Asks 0: collected from job 0, nothing new is sent, the journal is gone.
    let (r, _) = run_batch(&c, &reqs[..1], &quick()).await;
    assert_eq!(r.unwrap()[0].as_ref().unwrap().score, 0);
    assert_eq!(fake.jobs().len(), 2);
    assert_eq!(
        std::fs::read_dir(dir.path().join("batches"))
            .unwrap()
            .count(),
        0
    );

    // A job left running, then refused (401) when the next run looks at it.
    let more = requests(5);
    let (r, _) = run_batch(&c, &more[3..], &impatient).await;
    assert!(
        r.unwrap()
            .iter()
            .all(|x| matches!(x, Err(LlmError::BatchPending { .. })))
    );
    fake.refused.lock().unwrap().push("batch_fake2".into());
    let (r, events) = run_batch(&c, &more[3..], &quick()).await;
    let scores: Vec<u8> = r.unwrap().into_iter().map(|g| g.unwrap().score).collect();
    assert_eq!(scores, [3, 4]);
    assert_eq!(
        fake.jobs().len(),
        4,
        "the refused job's requests went out in a new job"
    );
    assert!(
        events.iter().any(
            |e| matches!(e, BatchEvent::Ended { id, valid: 0, failed: 2 } if id == "batch_fake2")
        ),
        "{events:?}"
    );
    assert_eq!(
        std::fs::read_dir(dir.path().join("batches"))
            .unwrap()
            .count(),
        0
    );
}
