//! A step's own call: the call a workflow step writes out. What the engines find for it
//! depends only on its tool and arguments, so it is worked out once per scenario
//! ([`OwnCalls::of`]), and a transcript call equal to it (same tool, equal arguments:
//! [`align`]) takes those results where the engines would work them out again for every
//! call of every transcript (issue 31: a long run wrong in one place paid for every right
//! call as for the wrong one). The main types are [`OwnCalls`] and [`Own`].
//!
//! What is kept per step, each a function of the call's tool and arguments alone:
//!
//! - its lint findings ([`Linter::lint`]) and its effect ([`Linter::effect`]);
//! - whether the oracle finds every compared value of it matching the step — `clean` —
//!   where no value can depend on the run: a step with a `from_output` policy is never
//!   clean (whether a value came from an earlier output depends on the outputs before it);
//! - its argument completeness with no finding of its own (the scorer's rule);
//! - what the flow engine checks of it as references and tells identical calls by
//!   ([`OwnFlow`]);
//! - per turn, the steps' own calls' hashes counted ([`OwnTallies`]): a long turn's counts
//!   of its calls' hashes are these and the difference the turn makes — its steps made
//!   other than once, its calls that are no step's own — not a pass over every call;
//! - per turn of a few steps, what each step finds of the other steps' own calls, kept at
//!   the first answer across transcripts ([`Cross`]).
//!
//! Anything that depends on the run around the call (the flow engine's grounding, whether the
//! call failed, the findings made of it in this run) is still worked out per transcript.

use std::collections::HashSet;
use std::sync::atomic::{AtomicU8, AtomicU64, Ordering::Relaxed};

use serde_json::Value;

use super::oracle::compare;
use super::pairing::{CallHashes, OwnTallies};
use super::turn::completeness;
use crate::finding::Finding;
use crate::flow::OwnFlow;
use crate::harness::{Call, MatchPolicy, OracleCall, Scenario, Transcript};
use crate::hash::Hashed;
use crate::lint::Linter;
use crate::spec::Effect;

/// What the engines find for one step's own call.
#[derive(Debug)]
pub(crate) struct OwnStep {
    /// Its lint findings, as the linter words them (the suite's severities not yet applied).
    pub(crate) lint: Vec<Finding>,
    /// What it does to the world.
    pub(crate) effect: Effect,
    /// The oracle finds every value the step compares matching, in any run.
    pub(crate) clean: bool,
    /// Its argument completeness when it has no finding of its own.
    pub(crate) completeness: f64,
    /// What the flow engine works out of it from its tool and arguments.
    pub(crate) flow: OwnFlow,
    /// Its arguments' hashes, as the pairing keeps a long turn's calls'.
    pub(crate) hashes: CallHashes,
}

/// Per turn of a scenario, per workflow step, what the engines find for the step's own call,
/// under one suite's linter.
#[derive(Debug)]
pub(crate) struct OwnCalls {
    turns: Vec<Vec<OwnStep>>,
    /// Per turn, its steps' own calls' hashes counted ([`OwnTallies`]): at the first long
    /// turn that asks (a turn of a few calls hashes nothing).
    tallies: Vec<std::sync::OnceLock<OwnTallies>>,
    /// Every step's own call's hash as the flow engine tells identical calls
    /// ([`OwnFlow::same`]), over the whole scenario, where no two are alike; `None` where two
    /// are (two steps that write out the same call, or a hash shared by two calls that
    /// differ).
    apart: Option<HashSet<u64, Hashed>>,
    /// Per turn of a few steps, each step against the other steps' own calls ([`Cross`]).
    cross: Vec<Option<Cross>>,
}

/// One turn's steps against its steps' own calls: whether own call `v` does step `w` under
/// its policies, its similarity to it, whether it is step `w`'s call literally. Each a
/// function of the step and the call alone, except where the step takes a value from an
/// earlier output (`from_output`: whether it did depends on the run, so never kept). Asked
/// per transcript of every pair the pairing or the trajectory weighs — in a run of one tool
/// (BFCL's parallel calls), every pair of steps, though the run differs from its workflow
/// in one value — and kept here at the first answer, for every later transcript.
/// Thread-safe: a cell holds an answer or nothing yet, and every thread that fills one
/// writes the same answer.
#[derive(Debug)]
pub(crate) struct Cross {
    steps: usize,
    /// Per step, whether its answers may be kept (no `from_output` policy).
    kept: Box<[bool]>,
    /// Per (step, own call): the similarity's bits, [`Cross::NOT_ASKED`] until asked.
    similarity: Box<[AtomicU64]>,
    /// Per (step, own call): 0 not asked, 1 no, 2 yes.
    policy: Box<[AtomicU8]>,
    /// Per (step, own call): as `policy`, for the literal match.
    literal: Box<[AtomicU8]>,
}

impl Cross {
    /// The most steps a turn's table is kept for (their square, in cells).
    const MOST: usize = 64;
    /// No similarity's bits (a NaN's).
    const NOT_ASKED: u64 = u64::MAX;

    fn of(workflow: &[OracleCall]) -> Option<Self> {
        let n = workflow.len();
        if n > Self::MOST {
            return None;
        }
        let cells = || 0..n * n;
        Some(Self {
            steps: n,
            kept: workflow.iter().map(|o| !takes_from_output(o)).collect(),
            similarity: cells().map(|_| AtomicU64::new(Self::NOT_ASKED)).collect(),
            policy: cells().map(|_| AtomicU8::new(0)).collect(),
            literal: cells().map(|_| AtomicU8::new(0)).collect(),
        })
    }

    /// Step `w`'s similarity with step `v`'s own call: kept, or `f()` (then kept, where
    /// the step's may be).
    pub(crate) fn similarity(&self, w: usize, v: usize, f: impl FnOnce() -> f64) -> f64 {
        if !self.kept[w] {
            return f();
        }
        let cell = &self.similarity[w * self.steps + v];
        match cell.load(Relaxed) {
            Self::NOT_ASKED => {
                let s = f();
                cell.store(s.to_bits(), Relaxed);
                s
            }
            bits => f64::from_bits(bits),
        }
    }

    /// Whether step `v`'s own call does step `w` under its policies: kept, or `f()`.
    pub(crate) fn policy(&self, w: usize, v: usize, f: impl FnOnce() -> bool) -> bool {
        if !self.kept[w] {
            return f();
        }
        Self::answer(&self.policy[w * self.steps + v], f)
    }

    /// Whether step `v`'s own call is step `w`'s call literally: kept, or `f()`.
    pub(crate) fn literal(&self, w: usize, v: usize, f: impl FnOnce() -> bool) -> bool {
        Self::answer(&self.literal[w * self.steps + v], f)
    }

    fn answer(cell: &AtomicU8, f: impl FnOnce() -> bool) -> bool {
        match cell.load(Relaxed) {
            0 => {
                let yes = f();
                cell.store(1 + u8::from(yes), Relaxed);
                yes
            }
            known => known == 2,
        }
    }
}

impl OwnCalls {
    /// Works out every step's own call of `sc` under `linter`.
    pub(crate) fn of(sc: &Scenario, linter: &Linter) -> Self {
        let turns: Vec<Vec<OwnStep>> = sc
            .turns
            .iter()
            .map(|t| t.workflow.iter().map(|o| own_step(o, sc, linter)).collect())
            .collect();
        let tallies = turns.iter().map(|_| std::sync::OnceLock::new()).collect();
        let steps = turns.iter().map(Vec::len).sum::<usize>();
        let hashes: HashSet<u64, Hashed> = turns.iter().flatten().map(|s| s.flow.same()).collect();
        Self {
            turns,
            tallies,
            apart: (hashes.len() == steps).then_some(hashes),
            cross: sc.turns.iter().map(|t| Cross::of(&t.workflow)).collect(),
        }
    }

    /// Turn `turn`'s tallies of its steps' own calls' hashes ([`OwnTallies`]), made at the
    /// first long turn that asks (the oracle's facts, or a trajectory gate's literal metrics).
    pub(crate) fn tallies(&self, sc: &Scenario, turn: usize) -> Option<&OwnTallies> {
        use super::oracle::{compared_in, step_keys};
        let tallies = self.tallies.get(turn)?;
        Some(tallies.get_or_init(|| OwnTallies::of(compared_in(sc, turn), step_keys(sc, turn))))
    }

    /// Turn `turn`'s steps (none past the scenario's turns).
    pub(crate) fn turn(&self, turn: usize) -> &[OwnStep] {
        self.turns.get(turn).map_or(&[], Vec::as_slice)
    }
}

/// Whether step `o` takes a value from an earlier output (a `from_output` policy): what the
/// oracle finds of a call for it then depends on the run.
fn takes_from_output(o: &OracleCall) -> bool {
    o.match_policies
        .values()
        .any(|p| matches!(p, MatchPolicy::FromOutput))
}

fn own_step(o: &OracleCall, sc: &Scenario, linter: &Linter) -> OwnStep {
    let (tool, arguments) = (&o.call.tool, o.call.arguments());
    // Not consulted: a step with a `from_output` policy is not clean whatever it says.
    let never = |_: &Value| false;
    let clean = !takes_from_output(o)
        && compare(o, &o.call, linter, &never)
            .iter()
            .all(|(_, bad)| bad.is_none());
    OwnStep {
        lint: linter.lint(tool, arguments),
        effect: linter.effect(tool, o.call.args()),
        clean,
        completeness: completeness(linter, &o.call, &[]),
        flow: OwnFlow::of(o, sc, linter),
        hashes: CallHashes::of(&o.call),
    }
}

/// A transcript's calls against their turns' own calls: per call (in transcript order), the
/// workflow step of its turn whose own call it equals, if any.
#[derive(Debug, Default)]
pub(crate) struct Own<'a> {
    pub(crate) steps: Option<&'a OwnCalls>,
    /// Per transcript call, the step (of its turn's workflow) whose own call it is.
    pub(crate) of_call: Vec<Option<usize>>,
}

impl<'a> Own<'a> {
    /// No call taken as any step's own (every engine works every call out).
    pub(crate) fn none() -> Self {
        Self::default()
    }

    /// Turn `turn`'s steps' own calls and its calls' steps, the turn's calls starting at
    /// transcript call `first`.
    pub(crate) fn turn(&self, turn: usize, first: usize, calls: usize) -> OwnTurn<'_> {
        let steps = self.steps.map_or(&[][..], |s| s.turn(turn));
        let of_call = self.of_call.get(first..first + calls).unwrap_or(&[]);
        let tallies = self.steps.and_then(|s| s.tallies.get(turn));
        let cross = self.steps.and_then(|s| s.cross.get(turn)?.as_ref());
        OwnTurn {
            steps,
            of_call,
            tallies,
            cross,
        }
    }

    /// Per transcript call, its step's own call's flow, where it is one (what
    /// `flow::analyze_with` takes).
    pub(crate) fn flows(&self, t: &Transcript) -> Vec<Option<&'a OwnFlow>> {
        if self.steps.is_none() {
            // No call is any step's own (the flow engine takes a short list as nothing).
            return Vec::new();
        }
        t.calls()
            .enumerate()
            .map(|(i, (turn, _))| self.step_of(i, turn).map(|s| &s.flow))
            .collect()
    }

    /// Whether no two of `t`'s calls can be the same call (the flow engine's [`Same`]: one
    /// tool, equal arguments), known without indexing them all: the scenario's steps' own
    /// calls all apart ([`OwnCalls::apart`]), each turn's calls that are its steps' own calls
    /// those of steps further and further on (so no step's own call made twice), and the
    /// calls that are no step's own — at most [`FEW_OTHERS`] — each hashed apart from every
    /// step's own call and from each other. `false` where it is not known so (the flow engine
    /// then indexes every call to find repeats). One look a call, hashing only the others.
    ///
    /// [`Same`]: crate::flow::Same
    pub(crate) fn apart(&self, t: &Transcript) -> bool {
        let Some(hashes) = self.steps.and_then(|s| s.apart.as_ref()) else {
            return false;
        };
        let mut others: smallvec::SmallVec<[u64; FEW_OTHERS]> = smallvec::SmallVec::new();
        let mut of_call = self.of_call.iter();
        for tt in &t.turns {
            let mut last = None;
            for (call, w) in tt.calls.iter().zip(of_call.by_ref()) {
                match *w {
                    Some(w) if last.is_some_and(|l| w <= l) => return false,
                    Some(w) => last = Some(w),
                    None => {
                        if others.len() == FEW_OTHERS {
                            return false;
                        }
                        let h = crate::flow::Same::hash_of(call);
                        if hashes.contains(&h) || others.contains(&h) {
                            return false;
                        }
                        others.push(h);
                    }
                }
            }
        }
        true
    }

    /// What call `index` of the transcript is, when it is a step's own call.
    pub(crate) fn step_of(&self, index: usize, turn: usize) -> Option<&'a OwnStep> {
        let w = (*self.of_call.get(index)?)?;
        self.steps?.turn(turn).get(w)
    }
}

/// How many calls that are no step's own [`Own::apart`] hashes before it leaves the question
/// to the flow engine's index (a run wrong in a few calls has a few).
const FEW_OTHERS: usize = 8;

/// One turn's part of [`Own`].
#[derive(Clone, Copy, Debug, Default)]
pub(crate) struct OwnTurn<'a> {
    pub(crate) steps: &'a [OwnStep],
    pub(crate) of_call: &'a [Option<usize>],
    /// The turn's steps' own calls' hashes counted, where its steps' own calls are known
    /// (made at the first long turn that asks: [`OwnTallies::of`]).
    pub(crate) tallies: Option<&'a std::sync::OnceLock<OwnTallies>>,
    /// The turn's steps against its steps' own calls, kept across transcripts ([`Cross`]).
    pub(crate) cross: Option<&'a Cross>,
}

impl<'a> OwnTurn<'a> {
    /// The step whose own call the turn's call `j` is, and what the engines find of it.
    pub(crate) fn of(&self, j: usize) -> Option<(usize, &'a OwnStep)> {
        let w = self.of_call.get(j).copied().flatten()?;
        Some((w, self.steps.get(w)?))
    }

    /// Whether the turn's call `j` is step `w`'s own call.
    pub(crate) fn is(&self, w: usize, j: usize) -> bool {
        self.of_call.get(j).copied().flatten() == Some(w)
    }

    /// The table of the turn's steps against its steps' own calls, and the step whose own
    /// call the turn's call `j` is, where both are known.
    pub(crate) fn crossed(&self, j: usize) -> Option<(&'a Cross, usize)> {
        Some((self.cross?, self.of_call.get(j).copied().flatten()?))
    }

    /// Whether the turn's call `j` is step `w`'s own call and the oracle finds every value
    /// the step compares matching.
    pub(crate) fn clean(&self, w: usize, j: usize) -> bool {
        self.of(j).is_some_and(|(own, s)| own == w && s.clean)
    }
}

/// Which step's own call each of the transcript's calls is: within its turn, the step at its
/// position, else the step after the last call found (a run that skips or adds a call finds
/// its place again), else the one after that. One comparison of arguments per candidate, at
/// most three per call. `at_place`, when not empty, already says per call (in transcript
/// order) whether it is the own call of the step at its position ([`at_place`]): those are
/// not compared again.
pub(crate) fn align<'a>(
    sc: &Scenario,
    t: &Transcript,
    steps: Option<&'a OwnCalls>,
    at_place: &[bool],
) -> Own<'a> {
    let mut of_call = Vec::with_capacity(t.calls().count());
    for (ti, tt) in t.turns.iter().enumerate() {
        let workflow = sc.turns.get(ti).map_or(&[][..], |st| &st.workflow[..]);
        let mut last: Option<usize> = None;
        for (j, call) in tt.calls.iter().enumerate() {
            let next = last.map_or(0, |w| w + 1);
            let known = at_place.get(of_call.len()).copied();
            let candidate = |w: usize| match known {
                Some(own) if w == j => own,
                _ => workflow.get(w).is_some_and(|o| is_own(o, call)),
            };
            // Each step compared once (in a run that follows its workflow the three are
            // often one).
            let found = std::iter::once(j)
                .chain([next, next + 1].into_iter().filter(|&w| w != j))
                .find(|&w| candidate(w));
            if found.is_some() {
                last = found;
            }
            of_call.push(found);
        }
    }
    Own { steps, of_call }
}

/// [`at_place`]'s answers, in place for a run of a few calls.
pub(crate) type AtPlace = smallvec::SmallVec<[bool; 16]>;

/// Per call of a transcript with as many calls in each turn as its scenario's workflow has
/// steps, whether it is the own call of the step at its position ([`align`]'s first
/// candidate); `None` for a transcript of another shape (and nothing compared).
pub(crate) fn at_place(sc: &Scenario, t: &Transcript) -> Option<AtPlace> {
    let mut own = AtPlace::new();
    for (ti, st) in sc.turns.iter().enumerate() {
        let calls = t.turns.get(ti).map_or(&[][..], |tt| &tt.calls[..]);
        if calls.len() != st.workflow.len() {
            return None;
        }
        own.extend(st.workflow.iter().zip(calls).map(|(o, c)| is_own(o, c)));
    }
    Some(own)
}

/// Whether `a` is step `o`'s own call: the same tool, equal arguments ([`Call::same_as`]).
pub(crate) fn is_own(o: &OracleCall, a: &Call) -> bool {
    o.call.same_as(a)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::harness::Harness;
    use crate::source::SourceFile;
    use crate::spec::ToolSet;

    const TOOLS: &str = r#"[{"name": "paint", "inputSchema": {"type": "object", "required": ["prompt"],
        "properties": {"prompt": {"type": "string"}, "x": {"type": "integer"}}}}]"#;

    fn scenario(workflow: &str) -> (Scenario, Linter) {
        let spec = ToolSet::from_json(&serde_json::from_str(TOOLS).unwrap()).unwrap();
        let text = format!(
            "scenarios:\n  - id: s\n    turns:\n      - prompt: paint a cat\n        workflow:\n{workflow}"
        );
        let h = Harness::from_source(SourceFile::from_text("harnesses/t.yaml", text)).unwrap();
        (h.scenarios[0].clone(), Linter::new(&spec, vec![]).unwrap())
    }

    fn transcript(calls: &str) -> Transcript {
        let text = format!("scenario: s\ncalls:\n{calls}");
        Transcript::from_source(SourceFile::from_text("t.yaml", text), "t".into()).unwrap()
    }

    const FOUR: &str = concat!(
        "          - {tool: paint, arguments: {prompt: a, x: 1}}\n",
        "          - {tool: paint, arguments: {prompt: b, x: 2}}\n",
        "          - {tool: paint, arguments: {prompt: c, x: 3}}\n",
        "          - {tool: paint, arguments: {prompt: d, x: 4}}\n",
    );

    /// Each call is found as its step's own where its arguments equal the step's, also after
    /// an extra call or a skipped step has moved the run off the steps' positions; a call
    /// with another value, or one the same value spelled another way, is no step's.
    #[test]
    fn a_run_finds_its_steps_again_after_an_extra_or_a_skipped_call() {
        let (sc, _) = scenario(FOUR);
        // Aligned comparing every candidate, and again with the answers at each call's place
        // already known (what the shortcut hands the engines): alike.
        let of = |calls: &str| {
            let t = transcript(calls);
            let found = align(&sc, &t, None, &[]).of_call;
            let known = at_place(&sc, &t).unwrap_or_default();
            assert_eq!(align(&sc, &t, None, &known).of_call, found, "{calls}");
            found
        };
        let call =
            |p: &str, x: &str| format!("  - {{tool: paint, arguments: {{prompt: {p}, x: {x}}}}}\n");
        let run = |c: &[(&str, &str)]| c.iter().map(|(p, x)| call(p, x)).collect::<String>();
        assert_eq!(
            of(&run(&[("a", "1"), ("b", "2"), ("c", "3"), ("d", "4")])),
            [Some(0), Some(1), Some(2), Some(3)]
        );
        // An extra call at position 1: the rest found one position on.
        assert_eq!(
            of(&run(&[
                ("a", "1"),
                ("z", "9"),
                ("b", "2"),
                ("c", "3"),
                ("d", "4")
            ])),
            [Some(0), None, Some(1), Some(2), Some(3)]
        );
        // Step 1 skipped: the rest found one position back.
        assert_eq!(
            of(&run(&[("a", "1"), ("c", "3"), ("d", "4")])),
            [Some(0), Some(2), Some(3)]
        );
        // A wrong value (a number, a string, a name), and 2.0 for 2 (equal to the oracle, not
        // the same arguments).
        assert_eq!(
            of(&run(&[("a", "1"), ("b", "5"), ("c", "3"), ("d", "4")])),
            [Some(0), None, Some(2), Some(3)]
        );
        assert_eq!(
            of(&run(&[("a", "1"), ("q", "2"), ("c", "3"), ("d", "4")])),
            [Some(0), None, Some(2), Some(3)]
        );
        let renamed =
            run(&[("a", "1"), ("b", "2"), ("c", "3"), ("d", "4")]).replacen(", x: 2", ", y: 2", 1);
        assert_eq!(of(&renamed), [Some(0), None, Some(2), Some(3)]);
        assert_eq!(
            of(&run(&[("a", "1"), ("b", "2.0"), ("c", "3"), ("d", "4")])),
            [Some(0), None, Some(2), Some(3)]
        );
    }

    /// A step is clean when its own call matches every value it compares in any run: not
    /// with a `from_output` policy (that depends on the outputs before it), nor where its own
    /// value breaks its own policy.
    #[test]
    fn a_step_is_clean_only_where_no_run_can_change_the_comparison() {
        let (sc, linter) = scenario(concat!(
            "          - {tool: paint, arguments: {prompt: a, x: 1}}\n",
            "          - {tool: paint, arguments: {prompt: b, x: 2}, match: {prompt: semantic}}\n",
            "          - {tool: paint, arguments: {prompt: c, x: 3}, match: {prompt: from_output}}\n",
            "          - {tool: paint, arguments: {prompt: d, x: 4}, match: {prompt: {regex: '^e$'}}}\n",
            "          - {tool: paint, arguments: {x: 5}}\n",
        ));
        let own = OwnCalls::of(&sc, &linter);
        let steps = own.turn(0);
        let clean: Vec<bool> = steps.iter().map(|s| s.clean).collect();
        assert_eq!(clean, [true, true, false, false, true]);
        // The last step's own call lacks the required `prompt`: the linter says so, and its
        // completeness is 0 of 1.
        assert!(steps[..4].iter().all(|s| s.lint.is_empty()));
        assert_eq!(steps[4].lint.len(), 1, "{:?}", steps[4].lint);
        assert_eq!(steps[4].lint[0].code, crate::finding::Code::MissingRequired);
        assert_eq!(steps[4].completeness, 0.0);
        assert_eq!(steps[0].completeness, 1.0);
        // Past the scenario's turns: no steps.
        assert!(own.turn(1).is_empty());
    }
}
