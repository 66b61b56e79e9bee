//! The run's results as OpenTelemetry: one OTLP JSON logs document (the form an OTel
//! Collector's `otlpjson` receiver and file exporter read) of `gen_ai.evaluation.result`
//! events, the GenAI semantic conventions' event for an evaluation's outcome, so verdicts land
//! next to the traces in a team's observability stack.
//!
//! Each graded transcript gives one event per score: `agent_seer.tc` (its label `pass` or
//! `fail`, the verdict; its explanation why it failed), the four dimensions
//! (`agent_seer.usage`, `.selection`, `.ordering`, `.arguments`) and ADK's three trajectory
//! matches (`adk.tool_trajectory_avg_score.exact`, `.in_order`, `.any_order`, the literal
//! rule). A transcript read from a trace is linked to it: the event carries the trace's
//! `traceId` and the `spanId` of its root span (the agent's invocation), so a trace view shows
//! the result on the run. Attributes follow the conventions (`gen_ai.evaluation.name`,
//! `gen_ai.evaluation.score.value`, `gen_ai.evaluation.score.label`,
//! `gen_ai.evaluation.explanation`) with agent-seer's trial, suite and transcript beside them.

use std::io;

use serde::Serialize;
use serde_json::{Value, json};

use super::{Report, Trials, View, in_memory};
use crate::check::{Status, TranscriptRecord, TrialRecord, Verdict};

fn attr(key: &str, value: Value) -> Value {
    let v = match value {
        Value::String(s) => json!({"stringValue": s}),
        Value::Bool(b) => json!({"boolValue": b}),
        Value::Number(n) if n.is_i64() => json!({"intValue": n.to_string()}),
        Value::Number(n) => json!({"doubleValue": n.as_f64()}),
        other => json!({"stringValue": other.to_string()}),
    };
    json!({"key": key, "value": v})
}

/// The report's results as one OTLP JSON `LogsData` document, every event stamped `time`
/// (Unix nanoseconds: when the run was graded).
pub fn otlp(report: &Report, time_unix_nano: u128) -> String {
    let summary = report.summary();
    in_memory(|out| write_otlp(report.view(&summary), time_unix_nano, out))
}

/// [`otlp`], written an event at a time (the same bytes as the document made whole: its keys
/// in the sorted order a `serde_json` map keeps).
pub fn write_otlp(view: View<'_>, time_unix_nano: u128, out: &mut dyn io::Write) -> io::Result<()> {
    #[derive(Serialize)]
    struct Doc<'a> {
        #[serde(rename = "resourceLogs")]
        resource_logs: [ResourceLogs<'a>; 1],
    }
    #[derive(Serialize)]
    struct ResourceLogs<'a> {
        resource: Value,
        #[serde(rename = "scopeLogs")]
        scope_logs: [ScopeLogs<'a>; 1],
    }
    #[derive(Serialize)]
    struct ScopeLogs<'a> {
        #[serde(rename = "logRecords")]
        log_records: Events<'a>,
        scope: Value,
    }
    let doc = Doc {
        resource_logs: [ResourceLogs {
            resource: json!({"attributes": [
                attr("service.name", json!("agent-seer")),
                attr("agent_seer.run_id", json!(view.summary.run_id)),
            ]}),
            scope_logs: [ScopeLogs {
                log_records: Events {
                    trials: view.trials,
                    time: time_unix_nano,
                },
                scope: json!({"name": "agent-seer", "version": env!("CARGO_PKG_VERSION")}),
            }],
        }],
    };
    serde_json::to_writer(&mut *out, &doc).map_err(io::Error::from)?;
    out.write_all(b"\n")
}

/// The events of a run's graded transcripts, made as the array is written.
struct Events<'a> {
    trials: Trials<'a>,
    time: u128,
}

impl Serialize for Events<'_> {
    fn serialize<S: serde::Serializer>(&self, ser: S) -> Result<S::Ok, S::Error> {
        use serde::ser::{Error, SerializeSeq};
        let mut seq = ser.serialize_seq(None)?;
        for trial in self.trials.iter() {
            let trial = trial.map_err(S::Error::custom)?;
            for record in events(&trial, self.time) {
                seq.serialize_element(&record)?;
            }
        }
        seq.end()
    }
}

/// One trial's events: one per score of its transcript.
fn events(trial: &TrialRecord, time_unix_nano: u128) -> Vec<Value> {
    let mut records = Vec::new();
    let Some(t) = &trial.transcript else {
        return records;
    };
    if trial.status == Status::Ignored {
        return records;
    }
    for (name, value, label, explanation) in scores(t, trial.message.as_deref()) {
        let mut attributes = vec![
            attr("gen_ai.evaluation.name", json!(name)),
            attr("gen_ai.evaluation.score.value", json!(value)),
            attr("agent_seer.trial", json!(trial.name)),
            attr("agent_seer.suite", json!(trial.suite)),
            attr("agent_seer.transcript", json!(t.path)),
        ];
        if let Some(l) = label {
            attributes.push(attr("gen_ai.evaluation.score.label", json!(l)));
        }
        if let Some(e) = explanation {
            attributes.push(attr("gen_ai.evaluation.explanation", json!(e)));
        }
        let mut record = json!({
            "timeUnixNano": time_unix_nano.to_string(),
            "observedTimeUnixNano": time_unix_nano.to_string(),
            "eventName": "gen_ai.evaluation.result",
            "severityNumber": 9,
            "severityText": "INFO",
            "attributes": attributes,
        });
        if let Some(link) = &t.trace {
            record["traceId"] = json!(link.trace_id);
            if let Some(span) = &link.span_id {
                record["spanId"] = json!(span);
            }
        }
        records.push(record);
    }
    records
}

/// `(evaluation name, value, label, explanation)` for each score of a transcript.
type Score = (&'static str, f64, Option<&'static str>, Option<String>);

fn scores(t: &TranscriptRecord, message: Option<&str>) -> Vec<Score> {
    let mut out = Vec::new();
    let Some(s) = &t.score else {
        return out;
    };
    let label = match t.verdict {
        Verdict::Pass => "pass",
        Verdict::Fail => "fail",
    };
    let why = message.map(|m| m.lines().take(3).collect::<Vec<_>>().join(" "));
    out.push(("agent_seer.tc", s.tc, Some(label), why));
    out.push(("agent_seer.usage", s.usage, None, None));
    out.push(("agent_seer.selection", s.selection, None, None));
    if let Some(o) = s.ordering {
        out.push(("agent_seer.ordering", o, None, None));
    }
    out.push(("agent_seer.arguments", s.arguments, None, None));
    if let Some(tr) = &t.trajectory {
        let m = &tr.literal;
        out.push((
            "adk.tool_trajectory_avg_score.exact",
            m.exact_match,
            None,
            None,
        ));
        out.push((
            "adk.tool_trajectory_avg_score.in_order",
            m.in_order_match,
            None,
            None,
        ));
        out.push((
            "adk.tool_trajectory_avg_score.any_order",
            m.any_order_match,
            None,
            None,
        ));
    }
    out
}
