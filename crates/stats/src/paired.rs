//! Paired log-ratios `d_i = ln(head_i / base_i)` and the summaries every later step uses.

use crate::error::{SampleSide, StatsError};

/// Checks that every sample is finite and positive, naming the first bad one.
pub fn validate_samples(values: &[f64], side: SampleSide) -> Result<(), StatsError> {
    for (index, &value) in values.iter().enumerate() {
        if !value.is_finite() {
            return Err(StatsError::NonFinite { side, index, value });
        }
        if value <= 0.0 {
            return Err(StatsError::NonPositive { side, index, value });
        }
    }
    Ok(())
}

/// Checks that every log-ratio is finite.
pub fn validate_log_ratios(d: &[f64]) -> Result<(), StatsError> {
    match d.iter().position(|x| !x.is_finite()) {
        Some(index) => Err(StatsError::NonFinite {
            side: SampleSide::LogRatio,
            index,
            value: d[index],
        }),
        None => Ok(()),
    }
}

/// `d_i = ln(head_i) − ln(base_i)` for each adjacent pair; the unit of analysis.
///
/// Taking the difference of logs (not the log of the quotient) keeps huge or tiny values from
/// overflowing and makes the result exactly invariant to a common unit.
pub fn paired_log_ratios(base: &[f64], head: &[f64]) -> Result<Vec<f64>, StatsError> {
    if base.is_empty() && head.is_empty() {
        return Err(StatsError::Empty);
    }
    if base.len() != head.len() {
        return Err(StatsError::LengthMismatch {
            base: base.len(),
            head: head.len(),
        });
    }
    validate_samples(base, SampleSide::Base)?;
    validate_samples(head, SampleSide::Head)?;
    Ok(base
        .iter()
        .zip(head)
        .map(|(b, h)| h.ln() - b.ln())
        .collect())
}

/// Percent change `100(e^x − 1)` of a log-scale estimate or bound.
pub fn percent_from_log(x: f64) -> f64 {
    100.0 * x.exp_m1()
}

/// The log-scale value of a percent change: `ln(1 + p/100)`.
pub fn log_from_percent(p: f64) -> f64 {
    (p / 100.0).ln_1p()
}

/// Mean and sample standard deviation (n − 1 denominator) of a slice.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct MeanSd {
    pub n: usize,
    pub mean: f64,
    pub sd: f64,
}

/// Mean and sample sd; the sd is 0 for a single value.
pub fn mean_sd(x: &[f64]) -> Result<MeanSd, StatsError> {
    if x.is_empty() {
        return Err(StatsError::Empty);
    }
    let n = x.len() as f64;
    let mean = x.iter().sum::<f64>() / n;
    // Two-pass sum of squares: the values are small log-ratios around a common mean.
    let ss: f64 = x.iter().map(|v| (v - mean).powi(2)).sum();
    let sd = if x.len() > 1 {
        (ss / (n - 1.0)).sqrt()
    } else {
        0.0
    };
    Ok(MeanSd {
        n: x.len(),
        mean,
        sd,
    })
}

/// Geometric mean `exp(mean(ln x))` of positive values.
pub fn geometric_mean(x: &[f64]) -> Result<f64, StatsError> {
    if x.is_empty() {
        return Err(StatsError::Empty);
    }
    validate_samples(x, SampleSide::Base)?;
    Ok((x.iter().map(|v| v.ln()).sum::<f64>() / x.len() as f64).exp())
}

/// Median of a slice (mean of the middle two for an even count); `None` when empty.
pub fn median(x: &[f64]) -> Option<f64> {
    if x.is_empty() {
        return None;
    }
    let mut v = x.to_vec();
    v.sort_by(f64::total_cmp);
    let m = v.len() / 2;
    Some(if v.len() % 2 == 1 {
        v[m]
    } else {
        0.5 * (v[m - 1] + v[m])
    })
}

/// True when every value equals the first: a deterministic metric.
pub fn has_zero_spread(x: &[f64]) -> bool {
    x.windows(2).all(|w| w[0] == w[1])
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn percent_round_trips() {
        for p in [-50.0, -1.0, 0.0, 1.0, 4.0, 300.0] {
            assert!((percent_from_log(log_from_percent(p)) - p).abs() < 1e-9);
        }
    }

    #[test]
    fn rejects_bad_samples() {
        assert_eq!(paired_log_ratios(&[], &[]), Err(StatsError::Empty));
        assert!(matches!(
            paired_log_ratios(&[1.0, 2.0], &[1.0]),
            Err(StatsError::LengthMismatch { base: 2, head: 1 })
        ));
        assert!(matches!(
            paired_log_ratios(&[1.0, 0.0], &[1.0, 1.0]),
            Err(StatsError::NonPositive {
                side: SampleSide::Base,
                index: 1,
                ..
            })
        ));
        assert!(matches!(
            paired_log_ratios(&[1.0, 1.0], &[f64::NAN, 1.0]),
            Err(StatsError::NonFinite {
                side: SampleSide::Head,
                index: 0,
                ..
            })
        ));
    }

    #[test]
    fn median_of_even_and_odd() {
        assert_eq!(median(&[3.0, 1.0, 2.0]), Some(2.0));
        assert_eq!(median(&[4.0, 1.0, 2.0, 3.0]), Some(2.5));
        assert_eq!(median(&[]), None);
    }
}
