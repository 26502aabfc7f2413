//! The one error type of the statistics engine: bad input is named, never a panic.

use thiserror::Error;

/// Which build a bad value came from.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SampleSide {
    Base,
    Head,
    /// A value that is already a log-ratio (A/A sessions, pre-paired data).
    LogRatio,
}

impl std::fmt::Display for SampleSide {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            SampleSide::Base => "base",
            SampleSide::Head => "head",
            SampleSide::LogRatio => "log-ratio",
        })
    }
}

/// Why the statistics engine refused its input.
#[derive(Debug, Clone, PartialEq, Error)]
pub enum StatsError {
    #[error("no samples")]
    Empty,
    #[error("{found} pair(s); at least {needed} are needed")]
    TooFewPairs { found: usize, needed: usize },
    #[error("base has {base} samples but head has {head}; pair them before analysing")]
    LengthMismatch { base: usize, head: usize },
    #[error("{side} sample {index} is not a finite number ({value})")]
    NonFinite {
        side: SampleSide,
        index: usize,
        value: f64,
    },
    #[error("{side} sample {index} is {value}; timings and counters must be positive")]
    NonPositive {
        side: SampleSide,
        index: usize,
        value: f64,
    },
    #[error("{name} = {value} is out of range: {expected}")]
    InvalidParameter {
        name: &'static str,
        value: f64,
        expected: &'static str,
    },
    #[error("{flags} run-order flags for {rounds} rounds; give one per round")]
    OrderLength { rounds: usize, flags: usize },
    #[error("one run per side: an interval needs several runs of each")]
    OneRunPerSide { base: usize, head: usize },
    /// Two recordings with one run on a side: that side's spread is unknown, and an interval
    /// from the other side's alone would assume the two are equally spread.
    #[error(
        "one run on the {side}: its spread is unknown; {}",
        match more_if_equal {
            Some(k) => format!(
                "run it at least once more (if it is as spread as the other side, ~{k} more run{} of each would settle it)",
                if *k == 1 { "" } else { "s" }
            ),
            None => "run it at least once more".to_owned(),
        }
    )]
    SpreadUnknown {
        side: SampleSide,
        /// More runs of each side that would settle the row were both sides equally spread.
        more_if_equal: Option<u64>,
    },
    #[error("{n} pairs is more than the {limit} the Walsh-average diagnostics handle")]
    TooManyPairs { n: usize, limit: usize },
}

/// Checks that `alpha` is a usable error level, strictly between 0 and 1.
pub(crate) fn check_alpha(alpha: f64) -> Result<(), StatsError> {
    if alpha.is_finite() && alpha > 0.0 && alpha < 1.0 {
        Ok(())
    } else {
        Err(StatsError::InvalidParameter {
            name: "alpha",
            value: alpha,
            expected: "0 < alpha < 1",
        })
    }
}
