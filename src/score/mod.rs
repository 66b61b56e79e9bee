//! Scores: the paper's 14 tool-calling sub-dimensions, their dimensions and the TC aggregate
//! (Agent Seer §4, Appendix E, Table 18).
//!
//! Sub-dimensions are 0–1. Usage = necessity (overuse is recorded, not aggregated); selection,
//! ordering and arguments are the means of their sub-dimensions; ordering is *not applicable*
//! when a turn has a single call. TC is the mean of the applicable dimensions — arithmetic by
//! default, harmonic and minimum also reported. A conversation's score is the mean of its turns'.
//! The main type is [`Score`]; [`oracle::score`] fills it deterministically from a scenario's
//! workflow, the linter's and the flow engine's findings.

mod hungarian;
pub mod oracle;
pub(crate) mod own;
pub(crate) mod pairing;
mod turn;

use std::fmt;

use serde::Serialize;

use crate::finding::SubDimension;

pub use hungarian::assign;

/// Sub-dimension scores, 0–1, each present or absent, iterated in [`SubDimension`]'s order
/// (as a map sorted by it would be). An array of 14 and a bit a sub-dimension for which are
/// present, not a map: a score is made per turn and per way through it, and copying or
/// reading one costs no allocation (and 120 bytes, not the 224 of 14 `Option<f64>`s).
/// Serializes as a map.
#[derive(Clone, Copy, Default)]
pub struct SubScores {
    values: [f64; 14],
    /// Bit `d` set: `d`'s score is present.
    present: u16,
}

impl PartialEq for SubScores {
    /// Equal when the same sub-dimensions are present with equal scores.
    fn eq(&self, other: &Self) -> bool {
        self.present == other.present && self.iter().eq(other.iter())
    }
}

impl SubScores {
    /// None present.
    pub fn new() -> Self {
        Self::default()
    }

    fn has(&self, d: SubDimension) -> bool {
        self.present & (1 << d as u16) != 0
    }

    /// `d`'s score, if present.
    pub fn get(&self, d: SubDimension) -> Option<f64> {
        self.has(d).then(|| self.values[d as usize])
    }

    /// Sets `d`'s score; returns what it was.
    pub fn insert(&mut self, d: SubDimension, v: f64) -> Option<f64> {
        let was = self.get(d);
        self.values[d as usize] = v;
        self.present |= 1 << d as u16;
        was
    }

    /// `d`'s score, to change in place, if present.
    pub fn get_mut(&mut self, d: SubDimension) -> Option<&mut f64> {
        self.has(d).then(|| &mut self.values[d as usize])
    }

    /// The present sub-dimensions and their scores, in [`SubDimension`]'s order.
    pub fn iter(&self) -> impl Iterator<Item = (SubDimension, f64)> + '_ {
        SubDimension::ALL
            .into_iter()
            .filter(|d| self.has(*d))
            .map(|d| (d, self.values[d as usize]))
    }

    /// The present scores, in [`SubDimension`]'s order.
    pub fn values(&self) -> impl Iterator<Item = f64> + '_ {
        self.iter().map(|(_, v)| v)
    }

    /// How many are present.
    pub fn len(&self) -> usize {
        self.present.count_ones() as usize
    }

    /// Whether none is.
    pub fn is_empty(&self) -> bool {
        self.present == 0
    }

    /// `other`'s present scores over these.
    pub fn overlay(&mut self, other: &SubScores) {
        for (d, v) in other.iter() {
            self.insert(d, v);
        }
    }

    /// The mean of those of `ds` that are present, if any is.
    fn mean(&self, ds: &[SubDimension]) -> Option<f64> {
        let (sum, n) = ds
            .iter()
            .filter_map(|d| self.get(*d))
            .fold((0.0, 0), |(sum, n), v| (sum + v, n + 1));
        (n > 0).then(|| sum / n as f64)
    }
}

impl std::ops::Index<SubDimension> for SubScores {
    type Output = f64;

    /// `d`'s score; panics when it is absent (as a map's index does).
    fn index(&self, d: SubDimension) -> &f64 {
        if !self.has(d) {
            panic!("no `{d}` score");
        }
        &self.values[d as usize]
    }
}

impl std::ops::Index<&SubDimension> for SubScores {
    type Output = f64;

    fn index(&self, d: &SubDimension) -> &f64 {
        &self[*d]
    }
}

impl FromIterator<(SubDimension, f64)> for SubScores {
    fn from_iter<I: IntoIterator<Item = (SubDimension, f64)>>(iter: I) -> Self {
        let mut s = SubScores::new();
        s.extend(iter);
        s
    }
}

impl Extend<(SubDimension, f64)> for SubScores {
    fn extend<I: IntoIterator<Item = (SubDimension, f64)>>(&mut self, iter: I) {
        for (d, v) in iter {
            self.insert(d, v);
        }
    }
}

impl fmt::Debug for SubScores {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_map().entries(self.iter()).finish()
    }
}

impl Serialize for SubScores {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.collect_map(self.iter())
    }
}

/// A turn's or a conversation's tool-calling score.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Score {
    /// Every applicable sub-dimension, 0–1 (ordering's are absent when not applicable).
    pub sub: SubScores,
    /// Usage: necessity (overuse is recorded, not aggregated; paper §4.1).
    pub usage: f64,
    /// Selection: the mean of correctness, specificity and completeness.
    pub selection: f64,
    /// Ordering: the mean of its three sub-dimensions; `None` for a single call.
    pub ordering: Option<f64>,
    /// Arguments: the mean of the six argument sub-dimensions.
    pub arguments: f64,
    /// Arithmetic mean of the applicable dimensions (the paper's TC).
    pub tc: f64,
    /// The harmonic mean of the applicable dimensions.
    pub tc_harmonic: f64,
    /// The least applicable dimension.
    pub tc_min: f64,
}

impl Score {
    /// Aggregates sub-dimension scores (0–1). Ordering is applicable when any of its three
    /// sub-dimensions is present.
    pub fn from_sub(sub: SubScores) -> Self {
        use SubDimension::*;
        let usage = sub.get(UsageNecessity).unwrap_or(1.0);
        let selection = sub
            .mean(&[
                SelectionCorrectness,
                SelectionSpecificity,
                SelectionCompleteness,
            ])
            .unwrap_or(1.0);
        let ordering = sub.mean(&[OrderingSequence, OrderingDependency, OrderingEfficiency]);
        let arguments = sub.mean(&SubDimension::ARGUMENTS).unwrap_or(1.0);
        let (mut dims, mut applicable) = ([0.0; 4], 0);
        for d in [Some(usage), Some(selection), ordering, Some(arguments)]
            .into_iter()
            .flatten()
        {
            dims[applicable] = d;
            applicable += 1;
        }
        let (tc, tc_harmonic, tc_min) = aggregate(&dims[..applicable]);
        Self {
            sub,
            usage,
            selection,
            ordering,
            arguments,
            tc,
            tc_harmonic,
            tc_min,
        }
    }

    /// A conversation's score: the mean of its turns' (each sub-dimension over the turns where
    /// it applies; TC and its variants as means of the turns' values).
    pub fn mean(turns: &[Score]) -> Option<Self> {
        if turns.is_empty() {
            return None;
        }
        let n = turns.len() as f64;
        let avg = |f: &dyn Fn(&Score) -> f64| turns.iter().map(f).sum::<f64>() / n;
        if let [one] = turns {
            return Some(one.clone());
        }
        // Each sub-dimension's sum and count over the turns where it applies, in turn order.
        let mut sums = [(-0.0, 0usize); 14];
        for t in turns {
            for (d, v) in t.sub.iter() {
                let (sum, n) = &mut sums[d as usize];
                (*sum, *n) = (*sum + v, *n + 1);
            }
        }
        let (ordering, orderings) = turns
            .iter()
            .filter_map(|t| t.ordering)
            .fold((-0.0, 0), |(sum, n), o| (sum + o, n + 1));
        Some(Self {
            sub: SubDimension::ALL
                .into_iter()
                .filter(|d| sums[*d as usize].1 > 0)
                .map(|d| {
                    let (sum, n) = sums[d as usize];
                    (d, sum / n as f64)
                })
                .collect(),
            usage: avg(&|t| t.usage),
            selection: avg(&|t| t.selection),
            ordering: (orderings > 0).then(|| ordering / orderings as f64),
            arguments: avg(&|t| t.arguments),
            tc: avg(&|t| t.tc),
            tc_harmonic: avg(&|t| t.tc_harmonic),
            tc_min: avg(&|t| t.tc_min),
        })
    }
}

/// Pass or fail, for the transcript itself.
#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Verdict {
    /// No error finding, and TC (where there is one) at or above the pass threshold.
    Pass,
    /// An error finding, or TC below the pass threshold.
    Fail,
}

/// The one verdict rule: Fail on any error finding, or when TC is below `pass` (within 1e-9,
/// so a TC that is the threshold up to rounding passes). A transcript without a scenario has
/// no TC, and only its errors decide.
pub fn verdict(tc: Option<f64>, errors: bool, pass: f64) -> Verdict {
    match tc {
        _ if errors => Verdict::Fail,
        Some(tc) if tc + 1e-9 < pass => Verdict::Fail,
        _ => Verdict::Pass,
    }
}

/// `(arithmetic, harmonic, minimum)` of dimension scores; all 1 for none. The harmonic mean
/// of a set with a zero is zero.
pub fn aggregate(dims: &[f64]) -> (f64, f64, f64) {
    if dims.is_empty() {
        return (1.0, 1.0, 1.0);
    }
    let n = dims.len() as f64;
    let arithmetic = dims.iter().sum::<f64>() / n;
    let harmonic = if dims.iter().any(|d| *d <= 0.0) {
        0.0
    } else {
        n / dims.iter().map(|d| 1.0 / d).sum::<f64>()
    };
    let min = dims.iter().copied().fold(f64::INFINITY, f64::min);
    (arithmetic, harmonic, min)
}

#[cfg(test)]
mod tests {
    use super::*;
    use SubDimension::*;

    fn sub(pairs: &[(SubDimension, f64)]) -> SubScores {
        pairs.iter().copied().collect()
    }

    fn close(a: f64, b: f64) -> bool {
        (a - b).abs() < 5e-4
    }

    /// Present and absent as a map of sub-dimensions has them: an absent one reads `None`,
    /// counts for neither length nor equality, and inserting it returns nothing before it.
    #[test]
    fn sub_scores_keep_which_are_present() {
        let mut s = SubScores::new();
        assert!(s.is_empty());
        assert_eq!(s.insert(ArgumentValue, 0.5), None);
        assert_eq!(s.insert(ArgumentValue, 0.25), Some(0.5));
        assert_eq!(s.insert(UsageNecessity, 1.0), None);
        assert_eq!(
            (s.len(), s.get(ArgumentValue), s.get(ArgumentName)),
            (2, Some(0.25), None)
        );
        assert!(s.get_mut(ArgumentName).is_none());
        *s.get_mut(UsageNecessity).unwrap() = 0.0;
        // In the sub-dimensions' order, not the order inserted.
        assert_eq!(
            s.iter().collect::<Vec<_>>(),
            [(UsageNecessity, 0.0), (ArgumentValue, 0.25)]
        );
        // Equal with the same ones present at the same scores; one more present, even at
        // zero, is a difference.
        let mut other = sub(&[(ArgumentValue, 0.25), (UsageNecessity, 0.0)]);
        assert_eq!(s, other);
        other.insert(ArgumentName, 0.0);
        assert_ne!(s, other);
        let mut over = sub(&[(ArgumentName, 1.0)]);
        over.overlay(&s);
        assert_eq!(
            over.iter().collect::<Vec<_>>(),
            [
                (UsageNecessity, 0.0),
                (ArgumentName, 1.0),
                (ArgumentValue, 0.25)
            ]
        );
        assert_eq!(
            serde_json::to_string(&s).unwrap(),
            r#"{"usage_necessity":0.0,"argument_value":0.25}"#
        );
    }

    const PERFECT_SELECTION: [(SubDimension, f64); 4] = [
        (UsageNecessity, 1.0),
        (SelectionCorrectness, 1.0),
        (SelectionSpecificity, 1.0),
        (SelectionCompleteness, 1.0),
    ];

    /// Seed 000 (NB1): one call, usage and selection perfect, the argument dimension collapsed to
    /// 0.333 by the cascade ⇒ TC (1 + 1 + 0.333) / 3 = 0.778. Ordering is not applicable.
    #[test]
    fn seed_000_collapsed_arguments() {
        let mut s = sub(&PERFECT_SELECTION);
        // A wrong value collapses type, format and relevancy; completeness and name hold.
        s.extend([
            (ArgumentCompleteness, 1.0),
            (ArgumentName, 1.0),
            (ArgumentValue, 0.0),
            (ArgumentType, 0.0),
            (ArgumentFormat, 0.0),
            (ArgumentRelevancy, 0.0),
        ]);
        let score = Score::from_sub(s);
        assert!(close(score.arguments, 2.0 / 6.0), "{}", score.arguments);
        assert!(close(score.tc, 0.778), "{}", score.tc);
        assert_eq!(score.ordering, None);
        assert!(close(score.tc_min, 1.0 / 3.0));
        assert!(
            close(score.tc_harmonic, 3.0 / (1.0 + 1.0 + 3.0)),
            "{}",
            score.tc_harmonic
        );
    }

    /// Seed 001 A4 (missing required `prompt`): the judge's 0.722 is usage 1, selection 1 and
    /// an argument dimension of 1/6 — only name accuracy survives the cascade.
    #[test]
    fn seed_001_a4() {
        let mut s = sub(&PERFECT_SELECTION);
        s.extend([
            (ArgumentCompleteness, 0.0),
            (ArgumentName, 1.0),
            (ArgumentValue, 0.0),
            (ArgumentType, 0.0),
            (ArgumentFormat, 0.0),
            (ArgumentRelevancy, 0.0),
        ]);
        let score = Score::from_sub(s);
        assert!(close(score.tc, 0.722), "{}", score.tc);
        assert!(
            close(score.tc_harmonic, 3.0 / (1.0 + 1.0 + 6.0)),
            "{}",
            score.tc_harmonic
        );
    }

    #[test]
    fn ordering_counts_when_applicable() {
        let mut s = sub(&PERFECT_SELECTION);
        s.extend([
            (OrderingSequence, 0.5),
            (OrderingDependency, 0.0),
            (OrderingEfficiency, 1.0),
        ]);
        s.extend([
            (ArgumentCompleteness, 1.0),
            (ArgumentName, 1.0),
            (ArgumentValue, 1.0),
            (ArgumentType, 1.0),
            (ArgumentFormat, 1.0),
            (ArgumentRelevancy, 1.0),
        ]);
        let score = Score::from_sub(s);
        assert_eq!(score.ordering, Some(0.5));
        assert!(close(score.tc, (1.0 + 1.0 + 0.5 + 1.0) / 4.0));
        assert_eq!(score.tc_min, 0.5);
    }

    #[test]
    fn overuse_is_recorded_not_aggregated() {
        let mut s = sub(&PERFECT_SELECTION);
        s.insert(UsageOveruse, 0.0);
        let score = Score::from_sub(s);
        assert_eq!(score.usage, 1.0);
        assert_eq!(score.tc, 1.0);
        assert_eq!(score.sub[&UsageOveruse], 0.0);
    }

    #[test]
    fn conversation_is_the_mean_of_turns() {
        let a = Score::from_sub(sub(&PERFECT_SELECTION));
        let mut s = sub(&PERFECT_SELECTION);
        s.insert(SelectionCompleteness, 0.0);
        let b = Score::from_sub(s);
        let c = Score::mean(&[a.clone(), b.clone()]).unwrap();
        assert!(close(c.tc, (a.tc + b.tc) / 2.0));
        assert!(close(c.sub[&SelectionCompleteness], 0.5));
        assert!(Score::mean(&[]).is_none());
    }

    #[test]
    fn harmonic_with_a_zero() {
        assert_eq!(aggregate(&[1.0, 0.0, 1.0]), (2.0 / 3.0, 0.0, 0.0));
    }
}
