//! Trial identity: [`TrialId`], the one place a trial's name is built and read back.
//!
//! Names are paths that resolve to one file (STYLE 7), so `--exact NAME` can load only that
//! file and the run report can tell a trial's kind without guessing from strings:
//!
//! | kind             | name                                   |
//! |------------------|----------------------------------------|
//! | `Transcript`     | `<suite>::<transcript>`                |
//! | `Harness`        | `<suite>::harness`                     |
//! | `Discrimination` | `<suite>::discrimination`              |
//! | `Judge`          | `judge::<suite>::<transcript>`         |
//! | `Live`           | `run::<suite>::<scenario>#<n>`         |
//! | `Setup`          | `agent-seer::<what>` (the harness could not start) |
//!
//! A transcript id is its path below the suite directory with `::` for `/` (`sub/x.yaml` →
//! `sub::x`). Names stay unambiguous because discovery refuses what would make two readings:
//! suites named like a prefix ([`RESERVED_SUITES`]), transcripts named like a suite trial
//! ([`RESERVED_TRANSCRIPTS`]), and any `:` inside a file or directory name (so no name can
//! begin or end a `::` of its own).

use std::fmt;
use std::str::FromStr;

use serde::{Deserialize, Serialize};

/// Suite names a harness may not take: they begin the names of other trial kinds.
pub const RESERVED_SUITES: &[&str] = &["judge", "run", "agent-seer"];

/// Transcript names a suite's transcripts may not take: they name its suite trials.
pub const RESERVED_TRANSCRIPTS: &[&str] = &["harness", "discrimination", "mutation"];

/// What a trial checks.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum TrialKind {
    /// `<suite>::harness`: the harness loads and its oracles lint clean.
    Harness,
    /// `<suite>::<transcript>`: the deterministic engines over one transcript.
    Transcript,
    /// `<suite>::discrimination`: the suite's merge gate.
    Discrimination,
    /// `<suite>::mutation`: the share of the suite's mutants it catches, against
    /// `thresholds.mutation`.
    Mutation,
    /// `judge::<suite>::<transcript>`: the LLM judge's combined verdict.
    Judge,
    /// `run::<suite>::<scenario>#<n>`: one live agent run, graded.
    Live,
    /// `agent-seer::<what>`: the harness could not start (configuration, discovery).
    Setup,
}

/// A trial's identity; its [`Display`](fmt::Display) is the trial name and [`FromStr`] reads
/// the name back (`id.to_string().parse() == Ok(id)` for every id discovery makes).
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct TrialId {
    /// What the trial checks.
    pub kind: TrialKind,
    /// The suite (`agent-seer` for a setup trial).
    pub suite: String,
    /// The transcript id (`sub::x`) of transcript and judge trials, `<scenario>#<n>` of live
    /// ones, what failed (`discovery`) of setup trials; `None` for suite trials.
    pub transcript: Option<String>,
}

impl TrialId {
    /// `<suite>::<transcript>`.
    pub fn transcript(suite: &str, transcript: &str) -> Self {
        Self::new(TrialKind::Transcript, suite, Some(transcript))
    }

    /// `<suite>::harness`.
    pub fn harness(suite: &str) -> Self {
        Self::new(TrialKind::Harness, suite, None)
    }

    /// `<suite>::discrimination`.
    pub fn discrimination(suite: &str) -> Self {
        Self::new(TrialKind::Discrimination, suite, None)
    }

    /// `<suite>::mutation`.
    pub fn mutation(suite: &str) -> Self {
        Self::new(TrialKind::Mutation, suite, None)
    }

    /// `judge::<suite>::<transcript>`.
    pub fn judge(suite: &str, transcript: &str) -> Self {
        Self::new(TrialKind::Judge, suite, Some(transcript))
    }

    /// `run::<suite>::<scenario>#<run>`, `run` counted from 1.
    pub fn live(suite: &str, scenario: &str, run: usize) -> Self {
        Self::new(TrialKind::Live, suite, Some(&format!("{scenario}#{run}")))
    }

    /// `agent-seer::<what>`: a trial standing for a harness that could not start.
    pub fn setup(what: &str) -> Self {
        Self::new(TrialKind::Setup, "agent-seer", Some(what))
    }

    fn new(kind: TrialKind, suite: &str, transcript: Option<&str>) -> Self {
        Self {
            kind,
            suite: suite.to_owned(),
            transcript: transcript.map(str::to_owned),
        }
    }
}

impl fmt::Display for TrialId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let t = self.transcript.as_deref().unwrap_or("");
        match self.kind {
            TrialKind::Transcript => write!(f, "{}::{t}", self.suite),
            TrialKind::Harness => write!(f, "{}::harness", self.suite),
            TrialKind::Discrimination => write!(f, "{}::discrimination", self.suite),
            TrialKind::Mutation => write!(f, "{}::mutation", self.suite),
            TrialKind::Judge => write!(f, "judge::{}::{t}", self.suite),
            TrialKind::Live => write!(f, "run::{}::{t}", self.suite),
            TrialKind::Setup => write!(f, "agent-seer::{t}"),
        }
    }
}

/// A name that is no trial name.
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub struct TrialIdError {
    /// The name given.
    pub name: String,
    /// What is wrong with it.
    pub why: &'static str,
}

impl fmt::Display for TrialIdError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "`{}` is not a trial name: {}", self.name, self.why)
    }
}

impl std::error::Error for TrialIdError {}

impl FromStr for TrialId {
    type Err = TrialIdError;

    fn from_str(name: &str) -> Result<Self, Self::Err> {
        let err = |why| TrialIdError {
            name: name.to_owned(),
            why,
        };
        let (head, rest) = name.split_once("::").ok_or_else(|| err("it has no `::`"))?;
        let suite_and = |rest: &str, kind| -> Result<TrialId, TrialIdError> {
            let (suite, t) = rest
                .split_once("::")
                .ok_or_else(|| err("expected `<suite>::<transcript>` after the prefix"))?;
            if suite.is_empty() || t.is_empty() {
                return Err(err("an empty suite or transcript"));
            }
            Ok(TrialId::new(kind, suite, Some(t)))
        };
        if head.is_empty() || rest.is_empty() {
            return Err(err("an empty part"));
        }
        match head {
            "judge" => suite_and(rest, TrialKind::Judge),
            "run" => suite_and(rest, TrialKind::Live),
            "agent-seer" => Ok(TrialId::setup(rest)),
            suite => Ok(match rest {
                "harness" => TrialId::harness(suite),
                "discrimination" => TrialId::discrimination(suite),
                "mutation" => TrialId::mutation(suite),
                t => TrialId::transcript(suite, t),
            }),
        }
    }
}

/// Why a suite or transcript name cannot be a trial name, if it cannot.
pub(crate) fn name_problem(name: &str, reserved: &[&str]) -> Option<String> {
    if name.is_empty() {
        Some("an empty name".to_owned())
    } else if name.contains(':') {
        Some("a `:` in a name (trial names join their parts with `::`)".to_owned())
    } else if reserved.contains(&name) {
        Some(format!("`{name}` is reserved ({})", reserved.join(", ")))
    } else {
        None
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_round_trip() {
        for id in [
            TrialId::transcript("veo", "a1-audio"),
            TrialId::transcript("veo", "sub::deep::x"),
            TrialId::harness("veo"),
            TrialId::discrimination("veo"),
            TrialId::judge("veo", "sub::x"),
            TrialId::live("veo", "s1", 3),
            TrialId::setup("discovery"),
        ] {
            let name = id.to_string();
            assert_eq!(name.parse::<TrialId>(), Ok(id.clone()), "{name}");
        }
        assert_eq!(
            TrialId::judge("veo", "sub::x").to_string(),
            "judge::veo::sub::x"
        );
        assert_eq!(TrialId::live("veo", "s1", 3).to_string(), "run::veo::s1#3");
    }

    #[test]
    fn malformed_names_are_errors() {
        for bad in ["veo", "::x", "veo::", "judge::veo", "judge::::x", "run::x"] {
            assert!(bad.parse::<TrialId>().is_err(), "{bad}");
        }
        let e = "judge::ly0-correct".parse::<TrialId>().unwrap_err();
        assert_eq!(
            e.to_string(),
            "`judge::ly0-correct` is not a trial name: expected `<suite>::<transcript>` after the prefix"
        );
    }

    #[test]
    fn reserved_and_separator_names_have_a_problem() {
        assert!(name_problem("judge", RESERVED_SUITES).is_some());
        assert!(name_problem("run", RESERVED_SUITES).is_some());
        assert!(name_problem("harness", RESERVED_TRANSCRIPTS).is_some());
        assert!(name_problem("a::b", RESERVED_TRANSCRIPTS).is_some());
        assert!(name_problem("veo:", RESERVED_SUITES).is_some());
        assert!(name_problem("veo", RESERVED_SUITES).is_none());
    }
}
