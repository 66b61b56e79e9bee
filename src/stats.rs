//! Agreement between two judges (paper Appendix A.8): Pearson r, Spearman ρ, mean absolute
//! error, the share of pairs within ±0.1, and bootstrap 95 % confidence intervals; and what
//! certifying a judge against labels needs (`judge-certify`): the Wilson lower bound of a rate,
//! Cohen's κ of two binary raters, and Krippendorff's α (nominal) across many.

use serde::Serialize;

/// One statistic with its bootstrap 95 % interval.
#[derive(Clone, Copy, Debug, PartialEq, Serialize)]
pub struct Estimate {
    /// The statistic on the data.
    pub value: f64,
    /// The 2.5th percentile of its bootstrap resamples.
    pub low: f64,
    /// The 97.5th percentile.
    pub high: f64,
}

/// How two judges agree on one dimension.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Agreement {
    /// Paired scores compared.
    pub n: usize,
    /// Pearson r; `None` when either side is constant.
    pub pearson: Option<Estimate>,
    /// Spearman ρ; `None` when either side's ranks are constant.
    pub spearman: Option<Estimate>,
    /// Mean absolute error.
    pub mae: Estimate,
    /// The share of pairs within ±0.1 of each other.
    pub within_0_1: Estimate,
}

/// Pearson's r of paired samples; `None` with fewer than two pairs or a constant side.
pub fn pearson(a: &[f64], b: &[f64]) -> Option<f64> {
    let n = a.len() as f64;
    if a.len() < 2 || a.len() != b.len() {
        return None;
    }
    let (ma, mb) = (a.iter().sum::<f64>() / n, b.iter().sum::<f64>() / n);
    let cov: f64 = a.iter().zip(b).map(|(x, y)| (x - ma) * (y - mb)).sum();
    let va: f64 = a.iter().map(|x| (x - ma).powi(2)).sum();
    let vb: f64 = b.iter().map(|y| (y - mb).powi(2)).sum();
    (va > 0.0 && vb > 0.0).then(|| cov / (va.sqrt() * vb.sqrt()))
}

/// Ranks with ties sharing their mean rank.
fn ranks(x: &[f64]) -> Vec<f64> {
    let mut idx: Vec<usize> = (0..x.len()).collect();
    idx.sort_by(|&i, &j| x[i].total_cmp(&x[j]));
    let mut r = vec![0.0; x.len()];
    let mut i = 0;
    while i < idx.len() {
        let mut j = i;
        while j + 1 < idx.len() && x[idx[j + 1]] == x[idx[i]] {
            j += 1;
        }
        let mean = (i + j) as f64 / 2.0 + 1.0;
        for k in i..=j {
            r[idx[k]] = mean;
        }
        i = j + 1;
    }
    r
}

/// Spearman's ρ: Pearson's r of the ranks (ties share their mean rank).
pub fn spearman(a: &[f64], b: &[f64]) -> Option<f64> {
    pearson(&ranks(a), &ranks(b))
}

/// Mean absolute difference of paired samples (0 for none).
pub fn mae(a: &[f64], b: &[f64]) -> f64 {
    if a.is_empty() {
        return 0.0;
    }
    a.iter().zip(b).map(|(x, y)| (x - y).abs()).sum::<f64>() / a.len() as f64
}

/// The share of pairs whose difference is at most `tol` (0 for none).
pub fn within(a: &[f64], b: &[f64], tol: f64) -> f64 {
    if a.is_empty() {
        return 0.0;
    }
    a.iter()
        .zip(b)
        .filter(|(x, y)| (*x - *y).abs() <= tol + 1e-12)
        .count() as f64
        / a.len() as f64
}

/// A statistic over paired samples (`None` when undefined, e.g. without variance).
type Stat<'a> = &'a dyn Fn(&[f64], &[f64]) -> Option<f64>;

/// Compares paired scores, with 1,000 bootstrap resamples (a fixed seed: reports are
/// reproducible).
pub fn agreement(a: &[f64], b: &[f64]) -> Agreement {
    let n = a.len().min(b.len());
    let (a, b) = (&a[..n], &b[..n]);
    let stat = |f: Stat<'_>| -> Option<Estimate> {
        let value = f(a, b)?;
        let mut rng = 0x9E37_79B9_7F4A_7C15_u64;
        let mut samples = Vec::with_capacity(1000);
        for _ in 0..1000 {
            let (mut sa, mut sb) = (Vec::with_capacity(n), Vec::with_capacity(n));
            for _ in 0..n {
                // xorshift64*
                rng ^= rng >> 12;
                rng ^= rng << 25;
                rng ^= rng >> 27;
                let i = (rng.wrapping_mul(0x2545_F491_4F6C_DD1D) % n as u64) as usize;
                sa.push(a[i]);
                sb.push(b[i]);
            }
            if let Some(s) = f(&sa, &sb) {
                samples.push(s);
            }
        }
        samples.sort_by(f64::total_cmp);
        let q = |p: f64| {
            samples
                .get(((samples.len() as f64 - 1.0) * p).round() as usize)
                .copied()
                .unwrap_or(value)
        };
        Some(Estimate {
            value,
            low: q(0.025),
            high: q(0.975),
        })
    };
    Agreement {
        n,
        pearson: stat(&pearson),
        spearman: stat(&spearman),
        mae: stat(&|x, y| Some(mae(x, y))).unwrap_or(Estimate {
            value: 0.0,
            low: 0.0,
            high: 0.0,
        }),
        within_0_1: stat(&|x, y| Some(within(x, y, 0.1))).unwrap_or(Estimate {
            value: 0.0,
            low: 0.0,
            high: 0.0,
        }),
    }
}

/// The two-sided 95 % normal quantile.
const Z95: f64 = 1.959_963_984_540_054;

/// The lower bound of the Wilson score 95 % interval for `k` successes in `n` trials; `None`
/// for no trials. Unlike the normal approximation it stays inside 0–1 and is not 0-width at
/// k = n, which is where a certified judge's rates sit.
pub fn wilson_lower(k: usize, n: usize) -> Option<f64> {
    if n == 0 {
        return None;
    }
    let (k, n) = (k as f64, n as f64);
    let p = k / n;
    let z2 = Z95 * Z95;
    let centre = p + z2 / (2.0 * n);
    let spread = Z95 * (p * (1.0 - p) / n + z2 / (4.0 * n * n)).sqrt();
    Some(((centre - spread) / (1.0 + z2 / n)).max(0.0))
}

/// Cohen's κ of two raters' binary calls on the same items: (p_o − p_e) / (1 − p_e); `None`
/// for no items or when chance agreement is already perfect (both raters constant and equal).
pub fn cohen_kappa(pairs: &[(bool, bool)]) -> Option<f64> {
    if pairs.is_empty() {
        return None;
    }
    let n = pairs.len() as f64;
    let agree = pairs.iter().filter(|(a, b)| a == b).count() as f64 / n;
    let a_yes = pairs.iter().filter(|(a, _)| *a).count() as f64 / n;
    let b_yes = pairs.iter().filter(|(_, b)| *b).count() as f64 / n;
    let chance = a_yes * b_yes + (1.0 - a_yes) * (1.0 - b_yes);
    (chance < 1.0).then(|| (agree - chance) / (1.0 - chance))
}

/// Krippendorff's α for nominal data: `units[u]` holds the values the raters gave unit `u`
/// (a missing rating is simply absent). Units with fewer than two values are not pairable and
/// drop out, as the coefficient defines. 1 − D_o / D_e over the coincidence matrix; `None`
/// when nothing is pairable or every value is the same (no expected disagreement).
pub fn krippendorff_alpha_nominal(units: &[Vec<usize>]) -> Option<f64> {
    use std::collections::BTreeMap;
    // o[(c, k)]: coincidences of values c and k within units, each unit weighted 1/(m_u − 1).
    let mut o: BTreeMap<(usize, usize), f64> = BTreeMap::new();
    for values in units.iter().filter(|v| v.len() >= 2) {
        let w = 1.0 / (values.len() - 1) as f64;
        for (i, c) in values.iter().enumerate() {
            for (j, k) in values.iter().enumerate() {
                if i != j {
                    *o.entry((*c, *k)).or_default() += w;
                }
            }
        }
    }
    let mut marginal: BTreeMap<usize, f64> = BTreeMap::new();
    for ((c, _), v) in &o {
        *marginal.entry(*c).or_default() += v;
    }
    let n: f64 = marginal.values().sum();
    if n < 2.0 {
        return None;
    }
    let observed: f64 = o
        .iter()
        .filter(|((c, k), _)| c != k)
        .map(|(_, v)| v)
        .sum::<f64>()
        / n;
    let mut expected = 0.0;
    for (c, nc) in &marginal {
        for (k, nk) in &marginal {
            if c != k {
                expected += nc * nk;
            }
        }
    }
    let expected = expected / (n * (n - 1.0));
    (expected > 0.0).then(|| 1.0 - observed / expected)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn close(a: f64, b: f64) -> bool {
        (a - b).abs() < 1e-9
    }

    #[test]
    fn hand_computed() {
        let a = [1.0, 2.0, 3.0, 4.0];
        let b = [2.0, 4.0, 6.0, 8.0];
        assert!(close(pearson(&a, &b).unwrap(), 1.0));
        assert!(close(spearman(&a, &[1.0, 3.0, 2.0, 4.0]).unwrap(), 0.8));
        assert!(close(mae(&[0.5, 1.0], &[0.7, 0.6]), 0.3));
        assert!(close(within(&[0.5, 1.0], &[0.55, 0.6], 0.1), 0.5));
        assert_eq!(
            pearson(&[1.0, 1.0], &[0.0, 1.0]),
            None,
            "no variance, no correlation"
        );
    }

    #[test]
    fn ties_share_ranks() {
        assert_eq!(ranks(&[0.5, 0.1, 0.5, 0.9]), [2.5, 1.0, 2.5, 4.0]);
    }

    #[test]
    fn bootstrap_interval_brackets_the_estimate() {
        let a: Vec<f64> = (0..30).map(|i| f64::from(i) / 30.0).collect();
        let b: Vec<f64> = a
            .iter()
            .enumerate()
            .map(|(i, x)| x + if i % 3 == 0 { 0.05 } else { -0.03 })
            .collect();
        let g = agreement(&a, &b);
        let p = g.pearson.unwrap();
        assert!(p.low <= p.value && p.value <= p.high, "{p:?}");
        assert!(g.within_0_1.value == 1.0);
        // Deterministic: the same inputs give the same intervals.
        assert_eq!(agreement(&a, &b), g);
    }

    /// Wilson 95 % lower bounds, by hand: p = 0.8, n = 10 gives
    /// (0.8 + 0.19207 − 1.95996·√(0.016 + 0.0096040)) / 1.38415 = 0.49016.
    #[test]
    fn wilson_lower_bound() {
        assert!((wilson_lower(8, 10).unwrap() - 0.490_16).abs() < 1e-4);
        // k = n: 1 / (1 + z²/n).
        assert!((wilson_lower(10, 10).unwrap() - 10.0 / (10.0 + Z95 * Z95)).abs() < 1e-12);
        assert_eq!(wilson_lower(0, 5), Some(0.0));
        assert_eq!(wilson_lower(0, 0), None);
    }

    /// 10 items: both yes 4, only A 1, only B 2, both no 3. p_o = 0.7,
    /// p_e = 0.5·0.6 + 0.5·0.4 = 0.5, κ = 0.2 / 0.5 = 0.4.
    #[test]
    fn kappa_by_hand() {
        let mut pairs = vec![(true, true); 4];
        pairs.push((true, false));
        pairs.extend([(false, true); 2]);
        pairs.extend([(false, false); 3]);
        assert!(close(cohen_kappa(&pairs).unwrap(), 0.4));
        assert!(close(
            cohen_kappa(&[(true, true), (false, false)]).unwrap(),
            1.0
        ));
        assert_eq!(
            cohen_kappa(&[(true, true), (true, true)]),
            None,
            "no chance term"
        );
    }

    /// Krippendorff (2011), "Computing Krippendorff's Alpha-Reliability", the nominal example:
    /// 4 observers, 12 units, missing values; α = 0.743.
    #[test]
    fn krippendorff_textbook_example() {
        let units: Vec<Vec<usize>> = vec![
            vec![1, 1, 1],
            vec![2, 2, 3, 2],
            vec![3, 3, 3, 3],
            vec![3, 3, 3, 3],
            vec![2, 2, 2, 2],
            vec![1, 2, 3, 4],
            vec![4, 4, 4, 4],
            vec![1, 1, 2, 1],
            vec![2, 2, 2, 2],
            vec![5, 5, 5],
            vec![1, 1],
            vec![3],
        ];
        let a = krippendorff_alpha_nominal(&units).unwrap();
        assert!((a - 0.743).abs() < 5e-4, "{a}");
        assert_eq!(krippendorff_alpha_nominal(&[vec![1, 1], vec![1, 1]]), None);
        assert_eq!(krippendorff_alpha_nominal(&[vec![1]]), None);
        assert!(close(
            krippendorff_alpha_nominal(&[vec![0, 0], vec![1, 1]]).unwrap(),
            1.0
        ));
    }
}
