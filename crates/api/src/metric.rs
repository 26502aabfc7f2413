//! What a metric means for performance: which way is better, and what kind of quantity it is.
//! Parsers set the direction from what the harness says; [`Direction::infer`] is the documented
//! default for everything else (docs/configuration.md lists it per format).

use serde::{Deserialize, Serialize};

/// Whether a smaller or a larger value is better performance.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Direction {
    /// Times, sizes, counts: less is better (the default).
    #[default]
    LowerIsBetter,
    /// Throughput, operations or bytes per second, scores: more is better.
    HigherIsBetter,
}

impl Direction {
    /// The default for a metric the harness says nothing about: higher is better for
    /// throughput-like metrics (a `throughput`/`*_per_second` name or a `…/s` unit, such as
    /// `ops/s`, `bytes/s`, `elem/s`), lower for everything else.
    pub fn infer(metric: &str, unit: &str) -> Direction {
        let metric = metric.to_ascii_lowercase();
        let unit = unit.trim().to_ascii_lowercase();
        let per_time = [
            "/s", "/ms", "/us", "/µs", "/ns", "/sec", "/min", "/hr", "/h",
        ];
        if metric == "throughput"
            || metric.ends_with("_per_second")
            || metric.ends_with("_per_sec")
            || metric.ends_with("per_second")
            || metric.ends_with("/s")
            || per_time.iter().any(|p| unit.ends_with(p))
        {
            Direction::HigherIsBetter
        } else {
            Direction::LowerIsBetter
        }
    }

    /// The stored and wire name: `lower_is_better` or `higher_is_better`.
    pub fn as_str(self) -> &'static str {
        match self {
            Direction::LowerIsBetter => "lower_is_better",
            Direction::HigherIsBetter => "higher_is_better",
        }
    }

    /// The direction named by [`Direction::as_str`].
    pub fn from_name(name: &str) -> Option<Direction> {
        [Direction::LowerIsBetter, Direction::HigherIsBetter]
            .into_iter()
            .find(|d| d.as_str() == name)
    }

    /// `true` for [`Direction::LowerIsBetter`] (serde's `skip_serializing_if`).
    pub fn is_lower_is_better(&self) -> bool {
        *self == Direction::LowerIsBetter
    }

    /// The sign a worse change has on the log scale: `+1` when lower is better (head grew),
    /// `−1` when higher is better (head shrank).
    pub fn worse_sign(self) -> f64 {
        match self {
            Direction::LowerIsBetter => 1.0,
            Direction::HigherIsBetter => -1.0,
        }
    }

    /// `lower is better` / `higher is better`.
    pub fn as_words(self) -> &'static str {
        match self {
            Direction::LowerIsBetter => "lower is better",
            Direction::HigherIsBetter => "higher is better",
        }
    }
}

/// When a comparison fails its gate (`[gate] fail_on`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum FailOn {
    /// A gated row is slower (selected by e-BH across the gated benchmarks).
    #[default]
    Regression,
    /// A gated row is slower by more than the margin M.
    PracticalRegression,
    /// Never fail (report only).
    Never,
}

impl FailOn {
    /// Every choice, in the order the documentation lists them.
    pub const ALL: [FailOn; 3] = [
        FailOn::Regression,
        FailOn::PracticalRegression,
        FailOn::Never,
    ];

    /// The name in `.benchgate.toml` and on the command line.
    pub fn as_str(self) -> &'static str {
        match self {
            FailOn::Regression => "regression",
            FailOn::PracticalRegression => "practical-regression",
            FailOn::Never => "never",
        }
    }
}

impl std::fmt::Display for FailOn {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

impl std::str::FromStr for FailOn {
    type Err = String;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        FailOn::ALL
            .into_iter()
            .find(|f| f.as_str() == s.trim())
            .ok_or_else(|| {
                format!(
                    "unknown fail_on `{s}`; expected one of: regression, practical-regression, never"
                )
            })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn throughput_like_metrics_are_higher_is_better_by_default() {
        let cases = [
            ("time", "ns", Direction::LowerIsBetter),
            ("throughput", "ops/s", Direction::HigherIsBetter),
            ("throughput", "", Direction::HigherIsBetter),
            ("items_per_second", "", Direction::HigherIsBetter),
            ("bytes_per_second", "bytes/s", Direction::HigherIsBetter),
            ("score", "ops/ms", Direction::HigherIsBetter),
            ("bytes_per_op", "bytes", Direction::LowerIsBetter),
            ("instructions", "count", Direction::LowerIsBetter),
            ("peak_rss", "bytes", Direction::LowerIsBetter),
            ("value", "", Direction::LowerIsBetter),
        ];
        for (metric, unit, expected) in cases {
            assert_eq!(Direction::infer(metric, unit), expected, "{metric} {unit}");
        }
    }

    #[test]
    fn fail_on_round_trips_its_names() {
        for f in FailOn::ALL {
            assert_eq!(f.as_str().parse::<FailOn>(), Ok(f));
            assert_eq!(serde_json::to_value(f).unwrap(), f.as_str());
        }
        assert!(
            "regresion"
                .parse::<FailOn>()
                .unwrap_err()
                .contains("expected one of")
        );
    }
}
