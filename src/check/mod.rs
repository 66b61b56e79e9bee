//! The evaluation layer: everything between the loaded files and whoever consumes a result.
//!
//! It owns the loaded [`Suite`], [`evaluate`] (every engine over one transcript, giving an
//! [`Evaluation`]), the verdict alone by the fast path ([`verdict`], [`quick_verdict`]),
//! the merge gate ([`Discrimination`]), the records a trial ends as ([`TrialRecord`],
//! [`Status`]) and the **trial plan**: [`plan`] turns a [`Layout`](crate::harness::Layout) and
//! a [`HarnessConfig`] into [`PlannedTrial`]s, and [`PlannedTrial::run`] runs one. The
//! `cargo test` driver (`runner`) wraps each planned trial in a libtest-mimic `Trial`; the
//! CLI's `check` iterates the same plan, so both build the same records in one place.
//!
//! Nothing here reads the environment except [`HarnessConfig::from_env`], and nothing prints.
//! The LLM judge is above this layer: a judge trial runs through the [`Judge`] the caller puts
//! in the configuration.

mod config;
mod discrimination;
mod evaluate;
mod fast;
mod manifest;
mod mutate;
mod plan;
mod prepared;
mod record;
mod render;
mod suite;

pub(crate) use config::target_dir;
pub use config::{HarnessConfig, JudgeRequest, JudgeSetup};
pub use discrimination::{Discrimination, Row};
#[doc(hidden)]
pub use evaluate::evaluate_every_call;
pub use evaluate::{
    Disagreement, Evaluation, Verdict, evaluate, evaluate_with_engines, quick_verdict, verdict,
};
pub use mutate::{
    Mutant, Mutator, Operator, Outcome as MutantOutcome, Skipped, SuiteMutation, mutate_suite,
};
pub use plan::{
    CheckResult, Failure, Judge, JudgeError, PlannedTrial, check_loaded, load_transcript, plan,
    plan_exact, plan_runnable,
};
pub use record::{
    FindingRecord, HarnessRecord, JudgeRecord, LedgerEntry, LiveRecord, ScoreRecord, Status,
    TranscriptRecord, TrialRecord,
};
pub use render::{call_diff, dimensions, render_call};
pub use suite::Suite;

/// A callback told of each unit of long work (a live run, a generation stage's answer), for a
/// progress display. The library never draws; the CLI does.
#[derive(Clone)]
pub struct Progress(pub std::sync::Arc<dyn Fn(&str) + Send + Sync>);

impl Progress {
    /// Tells the callback of one unit done.
    pub fn tick(&self, message: &str) {
        (self.0)(message)
    }
}

impl std::fmt::Debug for Progress {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("Progress(..)")
    }
}

#[cfg(test)]
#[path = "general_tests.rs"]
mod general_tests;
#[cfg(test)]
#[path = "servers_tests.rs"]
mod servers_tests;
#[cfg(test)]
#[path = "shipped_tests.rs"]
mod shipped_tests;
