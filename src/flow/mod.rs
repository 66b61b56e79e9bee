//! The flow engine: what per-call checks cannot see, across the calls of one transcript.
//!
//! It tracks **artifacts** — URIs and media paths the user's prompts mention and the tools'
//! outputs produce (text, `resource_link`s, `structuredContent`) — and checks every argument
//! that references one (the capability matrix's `inputs`, or by its name when no matrix
//! describes the tool):
//!
//! - `flow.unknown_reference`: nobody produced it (seed 000's NP1, a hallucinated URI);
//! - `flow.use_before_produce`: only a later call produces it (NP3, a mux before its inputs);
//! - `flow.failed_dependency`: the call that produced it failed, so it does not exist;
//! - `flow.redundant_call`: a call repeats an earlier one, or makes a soundtrack for a video that
//!   already carries audio (the matrix's `produces` facts, seed 000 §6.1) when nobody asked.
//!
//! A call **fails** when the linter found an error in it, its output is an MCP error
//! (`isError`), or the flow engine did; a failed call produces nothing. A call without a
//! recorded output gets the scenario's mock output for that step, as the mock server would
//! answer. The main entry is [`analyze`], giving a [`Flow`].

use std::collections::{HashMap, HashSet};
use std::sync::LazyLock;

use regex::Regex;
use serde_json::Value;

use crate::finding::{Code, Finding, Severity};
use crate::harness::{Call, Scenario, Transcript};
use crate::lint::Linter;
use crate::spec::capability::ArtifactKind;

/// Where an artifact came from.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Origin {
    /// The user's prompt of this turn.
    Prompt(usize),
    /// The output of this call (index across the transcript).
    Call(usize),
}

/// One argument value that references an artifact.
#[derive(Clone, Debug, PartialEq)]
pub struct Reference {
    /// JSON pointer of the value in the call's arguments.
    pub pointer: String,
    /// The referenced artifact, as written in the call.
    pub value: String,
    /// Where the artifact came from, when it existed at call time.
    pub origin: Option<Origin>,
}

/// What the flow engine established about one call.
#[derive(Clone, Debug, Default)]
pub struct CallFlow {
    /// Whether the call failed (an error finding, or a tool output with `isError`), so it produced nothing.
    pub failed: bool,
    /// The call's argument values that reference artifacts.
    pub references: Vec<Reference>,
    /// Artifacts this call produced (normalised), when it succeeded.
    pub produced: Vec<String>,
}

/// The flow engine's view of a transcript.
#[derive(Clone, Debug, Default)]
pub struct Flow {
    /// The flow findings (unknown references, use before produce, redundancy).
    pub findings: Vec<Finding>,
    /// Per call, in transcript order.
    pub calls: Vec<CallFlow>,
    artifacts: HashMap<String, Vec<Origin>>,
}

impl Flow {
    /// Whether an earlier successful call (before call `index`) produced `value`.
    pub fn produced_before(&self, value: &str, index: usize) -> bool {
        self.artifacts.get(&normalize(value)).is_some_and(|os| {
            os.iter()
                .any(|o| matches!(o, Origin::Call(c) if *c < index))
        })
    }

    /// Whether `value` existed when call `index` (in turn `turn`) ran: a prompt up to that turn
    /// mentioned it or an earlier successful call produced it.
    pub fn grounded_at(&self, value: &str, index: usize, turn: usize) -> bool {
        self.artifacts
            .get(&normalize(value))
            .is_some_and(|origins| {
                origins.iter().any(|o| match *o {
                    Origin::Prompt(t) => t <= turn,
                    Origin::Call(c) => c < index,
                })
            })
    }
}

/// Analyses a transcript. `lint_failed[i]` says whether call `i` has an error finding.
pub fn analyze(
    t: &Transcript,
    scenario: Option<&Scenario>,
    linter: &Linter,
    lint_failed: &[bool],
) -> Flow {
    let calls: Vec<(usize, &Call)> = t.calls().collect();
    let outputs = outputs(t, scenario);
    // Every artifact any output mentions, with its first producer: to tell "nobody made it"
    // from "a later call makes it".
    let mut first_producer: HashMap<String, usize> = HashMap::new();
    let mut call_artifacts: Vec<Vec<String>> = Vec::with_capacity(calls.len());
    for (i, out) in outputs.iter().enumerate() {
        let arts = out.map(artifacts_of_value).unwrap_or_default();
        for a in &arts {
            first_producer.entry(a.clone()).or_insert(i);
        }
        call_artifacts.push(arts);
    }

    let mut flow = Flow::default();
    for a in scenario.into_iter().flat_map(|s| &s.artifacts) {
        flow.artifacts
            .entry(normalize(a))
            .or_default()
            .push(Origin::Prompt(0));
    }
    // Free text seen so far (prompts, successful outputs), for ids that are no URI.
    let mut seen_text: Vec<(Origin, String)> = Vec::new();
    let mut prompt_done: HashSet<usize> = HashSet::new();
    let mut seen_calls: HashMap<String, usize> = HashMap::new();
    // Repeats the scenario's own workflow asks for (BFCL's "two random numbers") are work, not
    // waste: how many times each identical call appears there.
    let asked = scenario.map(asked_calls).unwrap_or_default();
    let mut repeats: HashMap<String, usize> = HashMap::new();
    for (i, (turn, call)) in calls.iter().enumerate() {
        if prompt_done.insert(*turn)
            && let Some(p) = prompt_of(t, scenario, *turn)
        {
            for a in artifacts_in_text(p) {
                flow.artifacts
                    .entry(a)
                    .or_default()
                    .push(Origin::Prompt(*turn));
            }
            seen_text.push((Origin::Prompt(*turn), p.to_owned()));
        }
        let mut cf = CallFlow {
            failed: lint_failed.get(i).copied().unwrap_or(false),
            ..CallFlow::default()
        };
        if outputs[i].is_some_and(is_error_output) {
            cf.failed = true;
        }
        for (pointer, value) in references(linter, call) {
            let norm = normalize(&value);
            let origin = flow.artifacts.get(&norm).and_then(|os| {
                os.iter()
                    .find(|o| {
                        matches!(o, Origin::Prompt(tt) if tt <= turn)
                            || matches!(o, Origin::Call(c) if *c < i)
                    })
                    .copied()
            });
            // An id or a name a tool printed is grounded when it appears verbatim in a prompt or
            // an earlier successful output, even if it is no URI.
            let origin = origin.or_else(|| {
                (value.len() >= 4)
                    .then(|| {
                        seen_text
                            .iter()
                            .find(|(_, text)| text.contains(value.as_str()))
                            .map(|(o, _)| *o)
                    })
                    .flatten()
            });
            let mut finding = None;
            match origin {
                // Only successful calls add artifacts, so a grounded value exists.
                Some(_) => {}
                None => match first_producer.get(&norm) {
                    Some(&p) if p < i && flow.calls[p].failed => {
                        finding = Some(Finding::new(
                            Code::FailedDependency,
                            pointer.clone(),
                            format!(
                                "`{value}` comes from call {} (`{}`), which failed, so it does not exist",
                                p + 1,
                                calls[p].1.tool
                            ),
                        ));
                    }
                    Some(&p) if p >= i => {
                        finding = Some(Finding::new(
                            Code::UseBeforeProduce,
                            pointer.clone(),
                            format!(
                                "`{value}` is produced by call {} (`{}`), which runs after this one",
                                p + 1,
                                calls[p].1.tool
                            ),
                        ));
                    }
                    _ => {
                        let known: Vec<&str> = flow.artifacts.keys().map(String::as_str).collect();
                        let hint = crate::finding::did_you_mean(&norm, known.iter().copied());
                        finding = Some(Finding::new(
                            Code::UnknownReference,
                            pointer.clone(),
                            format!(
                                "`{value}` was produced by no earlier tool output and named in no prompt{hint}"
                            ),
                        ));
                    }
                },
            }
            if let Some(mut f) = finding {
                f.call = Some(i);
                flow.findings.push(f);
                cf.failed = true;
            }
            cf.references.push(Reference {
                pointer,
                value,
                origin,
            });
        }
        // An identical call to an earlier successful one does the same work twice.
        let key = call_key(&call.tool, &call.arguments);
        let made = repeats.entry(key.clone()).or_default();
        *made += 1;
        let within_asked = *made <= asked.get(&key).copied().unwrap_or(0);
        if let Some(&prev) = seen_calls.get(&key).filter(|_| !within_asked) {
            let mut f = Finding::new(
                Code::RedundantCall,
                "",
                format!(
                    "repeats call {} (`{}`) with the same arguments",
                    prev + 1,
                    call.tool
                ),
            );
            f.call = Some(i);
            flow.findings.push(f);
        } else if !cf.failed {
            seen_calls.insert(key, i);
        }
        if !cf.failed {
            for a in &call_artifacts[i] {
                flow.artifacts
                    .entry(a.clone())
                    .or_default()
                    .push(Origin::Call(i));
            }
            cf.produced = call_artifacts[i].clone();
            if let Some(out) = outputs[i] {
                seen_text.push((Origin::Call(i), strings_of(out)));
            }
        }
        flow.calls.push(cf);
    }
    redundant_soundtracks(&mut flow, &calls, t, scenario, linter);
    flow.findings
        .sort_by_key(|f| (f.call, f.severity != Severity::Error));
    flow
}

/// Omni's video (or Veo's with audio on) already carries sound: a separately generated track
/// muxed onto it is work nobody asked for, unless the scenario's workflow or the user's prompt
/// asks for music.
fn redundant_soundtracks(
    flow: &mut Flow,
    calls: &[(usize, &Call)],
    t: &Transcript,
    scenario: Option<&Scenario>,
    linter: &Linter,
) {
    let products = |i: usize| -> Vec<(ArtifactKind, bool)> {
        let call = calls[i].1;
        let Some((_, facts)) = linter.facts(&call.tool) else {
            return Vec::new();
        };
        facts
            .produces
            .iter()
            .filter(|p| {
                p.when
                    .iter()
                    .all(|(k, v)| linter.effective(&call.tool, call.args(), k).as_ref() == Some(v))
            })
            .map(|p| (p.kind, p.embedded))
            .collect()
    };
    let mut flagged = Vec::new();
    for (m, cf) in flow.calls.iter().enumerate() {
        let producers: Vec<usize> = cf
            .references
            .iter()
            .filter_map(|r| match r.origin {
                Some(Origin::Call(p)) => Some(p),
                _ => None,
            })
            .collect();
        let video_with_sound = producers.iter().copied().find(|&p| {
            let k = products(p);
            k.contains(&(ArtifactKind::Video, false)) && k.contains(&(ArtifactKind::Audio, true))
        });
        let soundtrack = producers.iter().copied().find(|&p| {
            let k = products(p);
            k.contains(&(ArtifactKind::Audio, false)) && !k.contains(&(ArtifactKind::Video, false))
        });
        if let (Some(v), Some(a)) = (video_with_sound, soundtrack) {
            let tool = &calls[a].1.tool;
            let asked = match scenario {
                Some(sc) => sc
                    .turns
                    .iter()
                    .flat_map(|tt| &tt.workflow)
                    .any(|o| &o.call.tool == tool),
                None => (0..t.turns.len())
                    .filter_map(|i| prompt_of(t, scenario, i))
                    .any(asks_for_music),
            };
            if !asked {
                flagged.push((a, v, m));
            }
        }
    }
    for (a, v, m) in flagged {
        let mut f = Finding::new(
            Code::RedundantCall,
            "",
            format!(
                "the video of call {} (`{}`) already carries audio; generating a soundtrack here and muxing it in call {} (`{}`) was not asked for",
                v + 1,
                calls[v].1.tool,
                m + 1,
                calls[m].1.tool
            ),
        );
        f.call = Some(a);
        flow.findings.push(f);
    }
}

fn asks_for_music(prompt: &str) -> bool {
    let p = prompt.to_lowercase();
    [
        "music",
        "score",
        "soundtrack",
        "song",
        "jingle",
        "melody",
        "tune",
    ]
    .iter()
    .any(|w| p.contains(w))
}

/// Each call's output: the recorded one, else the mock output of the scenario step with the
/// same tool in that turn (what the mock server answers).
fn outputs<'a>(t: &'a Transcript, scenario: Option<&'a Scenario>) -> Vec<Option<&'a Value>> {
    let mut out = Vec::new();
    for (ti, turn) in t.turns.iter().enumerate() {
        let mut used = vec![
            false;
            scenario
                .and_then(|s| s.turns.get(ti))
                .map_or(0, |st| st.workflow.len())
        ];
        for call in &turn.calls {
            let recorded = call.output.as_ref();
            let mock = scenario.and_then(|s| s.turns.get(ti)).and_then(|st| {
                let j = st
                    .workflow
                    .iter()
                    .enumerate()
                    .position(|(j, o)| !used[j] && o.call.tool == call.tool)?;
                used[j] = true;
                st.workflow[j].mock_output.as_ref()
            });
            out.push(recorded.or(mock));
        }
    }
    out
}

fn prompt_of<'a>(
    t: &'a Transcript,
    scenario: Option<&'a Scenario>,
    turn: usize,
) -> Option<&'a str> {
    t.turns
        .get(turn)
        .and_then(|tt| tt.prompt.as_deref())
        .or_else(|| {
            scenario
                .and_then(|s| s.turns.get(turn))
                .map(|st| st.prompt.as_str())
        })
        .or_else(|| (turn == 0).then_some(t.prompt.as_deref()).flatten())
}

pub(crate) fn is_error_output(v: &Value) -> bool {
    v.get("isError").and_then(Value::as_bool) == Some(true)
}

/// How many times the scenario's workflow asks for each call (by [`call_key`]): repeats up to
/// that count are work, not redundancy.
pub(crate) fn asked_calls(scenario: &Scenario) -> HashMap<String, usize> {
    let mut asked: HashMap<String, usize> = HashMap::new();
    for o in scenario.turns.iter().flat_map(|t| &t.workflow) {
        *asked
            .entry(call_key(&o.call.tool, &o.call.arguments))
            .or_default() += 1;
    }
    asked
}

/// What makes two calls identical to the flow engine: the tool and its canonical arguments.
pub(crate) fn call_key(tool: &str, arguments: &Value) -> String {
    format!("{tool}\u{0}{}", canonical(arguments))
}

/// The strings of an argument the engine checks as artifact references (when its parameter
/// names an input): the value itself, or an array's string items.
pub(crate) fn reference_strings(v: &Value) -> Vec<&str> {
    match v {
        Value::String(s) => vec![s.as_str()],
        Value::Array(items) => items.iter().filter_map(Value::as_str).collect(),
        _ => Vec::new(),
    }
}

/// What grounds a reference in a call of one turn whatever the transcript's other calls do:
/// the scenario lists it as an artifact, the turn's prompt names it as one, or (four
/// characters or more) the prompt holds it verbatim. The engine's own check in [`analyze`]
/// accepts more (earlier outputs); this is the part that needs only the scenario. The
/// prompt's artifacts and the scenario's, normalised, are listed once, on the first question.
pub(crate) struct PromptGround<'a> {
    prompt: &'a str,
    scenario_artifacts: &'a [String],
    known: std::cell::OnceCell<Vec<String>>,
}

impl<'a> PromptGround<'a> {
    pub(crate) fn new(prompt: &'a str, scenario_artifacts: &'a [String]) -> Self {
        Self {
            prompt,
            scenario_artifacts,
            known: std::cell::OnceCell::new(),
        }
    }

    /// Whether the engine grounds a reference to `value` here.
    pub(crate) fn grounds(&self, value: &str) -> bool {
        let known = self.known.get_or_init(|| {
            let mut known = artifacts_in_text(self.prompt);
            known.extend(self.scenario_artifacts.iter().map(|a| normalize(a)));
            known
        });
        known.contains(&normalize(value)) || (value.len() >= 4 && self.prompt.contains(value))
    }
}

/// The arguments of a call that reference artifacts, as (pointer, value).
fn references(linter: &Linter, call: &Call) -> Vec<(String, String)> {
    let args = call.args();
    let params: Vec<&str> = match linter.facts(&call.tool) {
        Some((_, facts)) => facts.inputs.iter().map(String::as_str).collect(),
        None => args
            .keys()
            .map(String::as_str)
            .filter(|k| looks_like_input(k))
            .collect(),
    };
    let mut out = Vec::new();
    for p in params {
        match args.get(p) {
            Some(Value::String(s)) => out.push((format!("/{}", escape(p)), s.clone())),
            Some(Value::Array(items)) => {
                for (i, item) in items.iter().enumerate() {
                    if let Value::String(s) = item {
                        out.push((format!("/{}/{i}", escape(p)), s.clone()));
                    }
                }
            }
            _ => {}
        }
    }
    out
}

// Without a matrix: `image_uri`, `input_video_uri`, `reference_image_uris`, `images`, … are
// inputs; `gcs_bucket_uri`, `output_*`, `*_dir*` are destinations.
pub(crate) fn looks_like_input(name: &str) -> bool {
    let n = name.to_lowercase();
    let destination = ["output", "bucket", "dir", "destination", "dest"]
        .iter()
        .any(|w| n.contains(w));
    let input = n.starts_with("input")
        || n.ends_with("_uri")
        || n.ends_with("_uris")
        || n.ends_with("_url")
        || n.ends_with("_path")
        || ["images", "videos", "audios", "files"].contains(&n.as_str());
    input && !destination
}

fn escape(s: &str) -> String {
    s.replace('~', "~0").replace('/', "~1")
}

fn canonical(v: &Value) -> String {
    // serde_json maps are sorted (no `preserve_order`), so this is canonical.
    serde_json::to_string(v).unwrap_or_default()
}

static URI: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r#"(?i)\b(?:gs|s3|https?|file)://[^\s"'<>()\[\]{},]+"#).expect("valid regex")
});
static MEDIA_PATH: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r#"(?i)(?:^|[\s"'(])((?:[\w.-]+/)*[\w.-]+\.(?:png|jpe?g|gif|webp|mp4|mov|webm|mkv|avi|wav|mp3|ogg|m4a|flac|pdf))\b"#)
        .expect("valid regex")
});

/// URIs and media file paths mentioned in free text.
pub fn artifacts_in_text(text: &str) -> Vec<String> {
    let mut out: Vec<String> = URI.find_iter(text).map(|m| normalize(m.as_str())).collect();
    for c in MEDIA_PATH.captures_iter(text) {
        let p = &c[1];
        if !out.iter().any(|u| u.ends_with(p)) {
            out.push(normalize(p));
        }
    }
    out.sort();
    out.dedup();
    out
}

/// Every artifact in a JSON value (strings anywhere, including `resource_link` URIs).
pub fn artifacts_of_value(v: &Value) -> Vec<String> {
    let mut out = Vec::new();
    walk(v, &mut out);
    out.sort();
    out.dedup();
    out
}

/// Every string in a JSON value, joined by newlines.
fn strings_of(v: &Value) -> String {
    fn go(v: &Value, out: &mut String) {
        match v {
            Value::String(s) => {
                out.push_str(s);
                out.push('\n');
            }
            Value::Array(items) => items.iter().for_each(|i| go(i, out)),
            Value::Object(m) => m.values().for_each(|i| go(i, out)),
            _ => {}
        }
    }
    let mut out = String::new();
    go(v, &mut out);
    out
}

fn walk(v: &Value, out: &mut Vec<String>) {
    match v {
        Value::String(s) => out.extend(artifacts_in_text(s)),
        Value::Array(items) => items.iter().for_each(|i| walk(i, out)),
        Value::Object(m) => m.values().for_each(|i| walk(i, out)),
        _ => {}
    }
}

/// One spelling per artifact: signed Cloud Storage URLs become `gs://bucket/object`, query
/// strings and trailing punctuation go.
pub fn normalize(s: &str) -> String {
    let s = s.trim().trim_end_matches(['.', ',', ';', ':', '!', '?']);
    let s = s.split(['?', '#']).next().unwrap_or(s);
    for prefix in [
        "https://storage.googleapis.com/",
        "https://storage.cloud.google.com/",
    ] {
        if let Some(rest) = s.strip_prefix(prefix) {
            return format!("gs://{}", rest.trim_end_matches('/'));
        }
    }
    s.trim_end_matches('/').to_owned()
}

#[cfg(test)]
mod tests;
