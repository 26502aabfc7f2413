//! Drift and position effects: least squares of `d_i` on the round index and on the run order
//! (+1 when base ran first in the pair, −1 when head did). Interleaving cancels both on average;
//! a significant slope says the machine changed during the job, a significant order effect says
//! the first run of a pair is systematically different (cache, thermal, frequency).

use crate::error::{StatsError, check_alpha};
use crate::fixed_interval::t_quantile;

/// One regression coefficient with its standard error.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Coefficient {
    /// Least-squares estimate (log-ratio per round, or per ±1 of order).
    pub estimate: f64,
    pub std_error: f64,
    /// `estimate / std_error` (infinite for an exact nonzero fit, 0 for an exact zero).
    pub t: f64,
    /// `|t|` beyond the two-sided `1 − alpha` t quantile.
    pub significant: bool,
}

/// Drift per round and the order effect; `order` is `None` when every pair ran in one order.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct DriftReport {
    pub per_round: Coefficient,
    pub order: Option<Coefficient>,
}

impl DriftReport {
    /// True when either effect is significant: worth a line in the comment.
    pub fn any_significant(&self) -> bool {
        self.per_round.significant || self.order.is_some_and(|c| c.significant)
    }
}

/// Which side ran first in round `k` under ABBA interleaving: base first in even rounds.
pub fn abba_base_first(rounds: usize) -> Vec<bool> {
    (0..rounds).map(|k| k % 2 == 0).collect()
}

/// Solves the symmetric positive system `a·x = b` (3×3 or smaller) and returns `x` and the
/// diagonal of `a⁻¹`; `None` when singular.
fn solve_normal_equations(a: &[Vec<f64>], b: &[f64]) -> Option<(Vec<f64>, Vec<f64>)> {
    let p = b.len();
    // Gauss–Jordan on [a | I | b]: p ≤ 3, so clarity beats a library.
    let mut m: Vec<Vec<f64>> = (0..p)
        .map(|i| {
            let mut row = a[i].clone();
            row.extend((0..p).map(|j| if i == j { 1.0 } else { 0.0 }));
            row.push(b[i]);
            row
        })
        .collect();
    for col in 0..p {
        let pivot = (col..p).max_by(|&x, &y| m[x][col].abs().total_cmp(&m[y][col].abs()))?;
        if m[pivot][col].abs() < 1e-12 * (1.0 + a[col][col].abs()) {
            return None;
        }
        m.swap(col, pivot);
        let div = m[col][col];
        m[col].iter_mut().for_each(|v| *v /= div);
        for row in 0..p {
            if row != col {
                let factor = m[row][col];
                let pivot_row = m[col].clone();
                m[row]
                    .iter_mut()
                    .zip(pivot_row)
                    .for_each(|(v, pv)| *v -= factor * pv);
            }
        }
    }
    let x = (0..p).map(|i| m[i][2 * p]).collect();
    let inv_diag = (0..p).map(|i| m[i][p + i]).collect();
    Some((x, inv_diag))
}

fn coefficient(estimate: f64, variance: f64, critical: f64) -> Coefficient {
    let std_error = variance.max(0.0).sqrt();
    let t = if std_error > 0.0 {
        estimate / std_error
    } else if estimate == 0.0 {
        0.0
    } else {
        f64::INFINITY.copysign(estimate)
    };
    Coefficient {
        estimate,
        std_error,
        t,
        significant: t.abs() > critical,
    }
}

/// Regresses the log-ratios on round index and order; `None` with too few pairs for the fit.
pub fn drift_regression(
    d: &[f64],
    base_first: &[bool],
    alpha: f64,
) -> Result<Option<DriftReport>, StatsError> {
    check_alpha(alpha)?;
    if d.len() != base_first.len() {
        return Err(StatsError::LengthMismatch {
            base: d.len(),
            head: base_first.len(),
        });
    }
    let n = d.len();
    let mixed_order = base_first.iter().any(|&b| b) && base_first.iter().any(|&b| !b);
    let p = if mixed_order { 3 } else { 2 };
    if n <= p {
        return Ok(None);
    }
    let centre = (n as f64 - 1.0) / 2.0;
    let rows: Vec<Vec<f64>> = (0..n)
        .map(|i| {
            let mut row = vec![1.0, i as f64 - centre];
            if mixed_order {
                row.push(if base_first[i] { 1.0 } else { -1.0 });
            }
            row
        })
        .collect();
    let xtx: Vec<Vec<f64>> = (0..p)
        .map(|j| {
            (0..p)
                .map(|k| rows.iter().map(|r| r[j] * r[k]).sum())
                .collect()
        })
        .collect();
    let xty: Vec<f64> = (0..p)
        .map(|j| rows.iter().zip(d).map(|(r, y)| r[j] * y).sum())
        .collect();
    let Some((beta, inv_diag)) = solve_normal_equations(&xtx, &xty) else {
        return Ok(None);
    };
    let rss: f64 = rows
        .iter()
        .zip(d)
        .map(|(r, y)| {
            let fit: f64 = r.iter().zip(&beta).map(|(x, b)| x * b).sum();
            (y - fit).powi(2)
        })
        .sum();
    let dof = (n - p) as f64;
    let sigma2 = rss / dof;
    let critical = t_quantile(alpha, dof)?;
    Ok(Some(DriftReport {
        per_round: coefficient(beta[1], sigma2 * inv_diag[1], critical),
        order: mixed_order.then(|| coefficient(beta[2], sigma2 * inv_diag[2], critical)),
    }))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn recovers_a_linear_drift_and_an_order_effect() {
        let order = abba_base_first(20);
        // Exact wobble keeps the residual variance nonzero without a random generator.
        let d: Vec<f64> = (0..20)
            .map(|i| {
                let wobble =
                    [0.001, -0.002, 0.0015, -0.0005][i % 4] * if i % 3 == 0 { 1.0 } else { -0.7 };
                0.002 * i as f64 + if order[i] { 0.01 } else { -0.01 } + wobble
            })
            .collect();
        let report = drift_regression(&d, &order, 0.05).unwrap().unwrap();
        assert!((report.per_round.estimate - 0.002).abs() < 2e-4);
        assert!(report.per_round.significant);
        let order_effect = report.order.unwrap();
        assert!((order_effect.estimate - 0.01).abs() < 1e-3);
        assert!(order_effect.significant);
    }

    #[test]
    fn flat_data_is_not_significant() {
        let d = [0.01, -0.01, 0.012, -0.008, 0.009, -0.011, 0.01, -0.012];
        let order = vec![true; 8];
        let report = drift_regression(&d, &order, 0.05).unwrap().unwrap();
        assert!(report.order.is_none());
        assert!(!report.per_round.significant);
    }

    #[test]
    fn too_few_pairs_gives_none() {
        assert_eq!(
            drift_regression(&[0.1, 0.2, 0.3], &abba_base_first(3), 0.05),
            Ok(None)
        );
    }
}
