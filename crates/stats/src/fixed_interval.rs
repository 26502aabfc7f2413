//! The classical fixed-n Student t interval: shown as a diagnostic, labelled "fixed-n, not safe
//! to peek", because its coverage holds only if n was chosen before looking at the data.

use statrs::distribution::{ContinuousCDF, Normal, StudentsT};

use crate::error::{StatsError, check_alpha};
use crate::interval::Interval;

/// The two-sided `1 − alpha` quantile of Student's t with `nu` degrees of freedom.
pub fn t_quantile(alpha: f64, nu: f64) -> Result<f64, StatsError> {
    check_alpha(alpha)?;
    let t = StudentsT::new(0.0, 1.0, nu).map_err(|_| StatsError::InvalidParameter {
        name: "degrees of freedom",
        value: nu,
        expected: "nu > 0",
    })?;
    Ok(t.inverse_cdf(1.0 - alpha / 2.0))
}

/// The two-sided `1 − alpha` standard normal quantile.
pub fn z_quantile(alpha: f64) -> Result<f64, StatsError> {
    check_alpha(alpha)?;
    let normal = Normal::standard();
    Ok(normal.inverse_cdf(1.0 - alpha / 2.0))
}

/// Standard normal cumulative distribution function.
pub fn normal_cdf(x: f64) -> f64 {
    Normal::standard().cdf(x)
}

/// `mean ± t(1 − alpha/2, n − 1) · sd/√n` for `n ≥ 2` pairs.
pub fn t_interval(mean: f64, sd: f64, n: usize, alpha: f64) -> Result<Interval, StatsError> {
    if n < 2 {
        return Err(StatsError::TooFewPairs {
            found: n,
            needed: 2,
        });
    }
    let q = t_quantile(alpha, (n - 1) as f64)?;
    Ok(Interval::around(mean, q * sd / (n as f64).sqrt()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn quantiles_match_tables() {
        assert!((t_quantile(0.05, 9.0).unwrap() - 2.262157163).abs() < 1e-7);
        assert!((z_quantile(0.05).unwrap() - 1.959963985).abs() < 1e-7);
    }

    #[test]
    fn needs_two_pairs() {
        assert!(t_interval(0.0, 1.0, 1, 0.05).is_err());
    }
}
