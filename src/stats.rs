//! Agreement between two judges (paper Appendix A.8): Pearson r, Spearman ρ, mean absolute
//! error, the share of pairs within ±0.1, and bootstrap 95 % confidence intervals.

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
}
