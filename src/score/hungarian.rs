//! Optimal assignment (the Hungarian algorithm, O(n³)): which agent call answers which
//! workflow step, maximising total similarity. Greedy matching can pair a step with a
//! locally-best call and leave a worse pairing for the rest; this never does.

use smallvec::{SmallVec, smallvec};

/// For a `rows × cols` similarity matrix (higher is better), the column assigned to each row
/// (`None` when there are more rows than columns). Maximises the total similarity.
pub fn assign(similarity: &[Vec<f64>]) -> Vec<Option<usize>> {
    let rows = similarity.len();
    let cols = similarity.first().map_or(0, Vec::len);
    let n = rows.max(cols);
    if n == 0 {
        return Vec::new();
    }
    // Square cost matrix (minimise cost = max - similarity); padding costs the maximum.
    let max = similarity.iter().flatten().copied().fold(0.0_f64, f64::max);
    let cost = |i: usize, j: usize| -> f64 {
        if i < rows && j < cols {
            max - similarity[i][j]
        } else {
            max
        }
    };
    // Potentials-based Hungarian algorithm (1-indexed, with a dummy column 0).
    // The usual turn has a few steps and calls: its buffers stay on the stack, and each row's
    // reuses the last one's.
    type Buf<T> = SmallVec<[T; 9]>;
    let inf = f64::INFINITY;
    let mut u: Buf<f64> = smallvec![0.0; n + 1];
    let mut v: Buf<f64> = smallvec![0.0; n + 1];
    let mut p: Buf<usize> = smallvec![0; n + 1];
    let mut way: Buf<usize> = smallvec![0; n + 1];
    let mut minv: Buf<f64> = smallvec![inf; n + 1];
    let mut used: Buf<bool> = smallvec![false; n + 1];
    for i in 1..=n {
        p[0] = i;
        let mut j0 = 0;
        minv.fill(inf);
        used.fill(false);
        loop {
            used[j0] = true;
            let i0 = p[j0];
            let mut delta = inf;
            let mut j1 = 0;
            for j in 1..=n {
                if !used[j] {
                    let cur = cost(i0 - 1, j - 1) - u[i0] - v[j];
                    if cur < minv[j] {
                        minv[j] = cur;
                        way[j] = j0;
                    }
                    if minv[j] < delta {
                        delta = minv[j];
                        j1 = j;
                    }
                }
            }
            for j in 0..=n {
                if used[j] {
                    u[p[j]] += delta;
                    v[j] -= delta;
                } else {
                    minv[j] -= delta;
                }
            }
            j0 = j1;
            if p[j0] == 0 {
                break;
            }
        }
        loop {
            let j1 = way[j0];
            p[j0] = p[j1];
            j0 = j1;
            if j0 == 0 {
                break;
            }
        }
    }
    let mut out = vec![None; rows];
    for (j, &i) in p.iter().enumerate().skip(1) {
        if (1..=rows).contains(&i) && j <= cols {
            out[i - 1] = Some(j - 1);
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn total(s: &[Vec<f64>], a: &[Option<usize>]) -> f64 {
        a.iter()
            .enumerate()
            .filter_map(|(i, j)| j.map(|j| s[i][j]))
            .sum()
    }

    /// Greedy (each row takes its best free column, in order) picks (0,0)=0.9 then (1,1)=0.1:
    /// 1.0 in all. The optimum pairs (0,1)=0.8 and (1,0)=0.85: 1.65.
    #[test]
    fn beats_greedy() {
        let s = vec![vec![0.9, 0.8], vec![0.85, 0.1]];
        let a = assign(&s);
        assert_eq!(a, [Some(1), Some(0)]);
        assert!((total(&s, &a) - 1.65).abs() < 1e-9);
    }

    #[test]
    fn rectangular() {
        // More steps than calls: one step stays unmatched.
        let a = assign(&[vec![0.2], vec![0.9], vec![0.5]]);
        assert_eq!(a, [None, Some(0), None]);
        // More calls than steps.
        let a = assign(&[vec![0.1, 0.7, 0.3]]);
        assert_eq!(a, [Some(1)]);
        assert!(assign(&[]).is_empty());
    }

    #[test]
    fn three_by_three_optimum() {
        let s = vec![
            vec![1.0, 0.9, 0.0],
            vec![0.9, 0.0, 0.0],
            vec![0.0, 1.0, 0.8],
        ];
        let a = assign(&s);
        let mut best = 0.0_f64;
        for p in [
            [0, 1, 2],
            [0, 2, 1],
            [1, 0, 2],
            [1, 2, 0],
            [2, 0, 1],
            [2, 1, 0],
        ] {
            best = best.max(p.iter().enumerate().map(|(i, &j)| s[i][j]).sum());
        }
        assert!((total(&s, &a) - best).abs() < 1e-9, "{a:?}");
    }
}
