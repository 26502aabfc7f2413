//! One measured value, as a harness adapter produces it and an agent uploads it.

use serde::{Deserialize, Serialize};

use crate::metric::Direction;

/// The largest value a measurement may hold: beyond it, sums of squares in the statistics
/// overflow to infinity.
pub const MAX_VALUE: f64 = 1e300;

/// Why `value` cannot be a measurement (non-finite, negative, or beyond [`MAX_VALUE`]), or
/// `None` when it can. Zero is kept: `0 B/op` and `0 allocs/op` are real counter values.
/// Parsers refuse such a value with its line; the server refuses an upload holding one.
pub fn implausible(value: f64) -> Option<String> {
    if !value.is_finite() {
        Some(format!("expected a finite number, found {value}"))
    } else if value < 0.0 {
        Some(format!(
            "expected a non-negative number (a time, size, count or rate), found {value}"
        ))
    } else if value > MAX_VALUE {
        Some(format!(
            "expected a number no larger than {MAX_VALUE:e}, found {value:e}"
        ))
    } else {
        None
    }
}

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
    /// Which run of a recording the value came from, where the harness starts several
    /// processes (a JMH fork, a pyperf run, a hyperfine run, a BenchmarkDotNet launch); absent,
    /// the whole output is one run. Values inside one run are not independent replicates.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub run: Option<u32>,
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
            run: None,
        }
    }

    /// The same measurement, taken in run `run` of its recording.
    pub fn in_run(mut self, run: u32) -> Self {
        self.run = Some(run);
        self
    }

    /// The same measurement with `direction` set.
    pub fn with_direction(mut self, direction: Direction) -> Self {
        self.direction = direction;
        self
    }
}
