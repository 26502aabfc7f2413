//! One measured value, as a harness adapter produces it and an agent uploads it.

use serde::{Deserialize, Serialize};

use crate::metric::Direction;

/// Which build a run measured.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Side {
    Base,
    Head,
}

impl Side {
    pub fn as_str(self) -> &'static str {
        match self {
            Side::Base => "base",
            Side::Head => "head",
        }
    }
}

/// One value of one metric of one benchmark from one run, in a normalised unit
/// (time in nanoseconds, sizes in bytes; other units kept as the harness wrote them).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Measurement {
    pub benchmark: String,
    /// e.g. `time`, `instructions`, `peak_rss`, `allocs`, `throughput`.
    pub metric: String,
    /// e.g. `ns`, `bytes`, `count`, `bytes/s`.
    pub unit: String,
    pub value: f64,
    /// Bounds the harness itself reported around `value`, when it reports any.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub lower: Option<f64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub upper: Option<f64>,
    /// Which way is better; absent on the wire means lower is better.
    #[serde(default, skip_serializing_if = "Direction::is_lower_is_better")]
    pub direction: Direction,
}

impl Measurement {
    /// A value with no bounds and the default direction for its metric and unit
    /// ([`Direction::infer`]); parsers that know better set `direction` themselves.
    pub fn new(
        benchmark: impl Into<String>,
        metric: impl Into<String>,
        unit: impl Into<String>,
        value: f64,
    ) -> Self {
        let (metric, unit) = (metric.into(), unit.into());
        Measurement {
            benchmark: benchmark.into(),
            direction: Direction::infer(&metric, &unit),
            metric,
            unit,
            value,
            lower: None,
            upper: None,
        }
    }

    /// The same measurement with `direction` set.
    pub fn with_direction(mut self, direction: Direction) -> Self {
        self.direction = direction;
        self
    }
}
