//! A closed interval on the log scale, possibly unbounded on either side.

/// `[lower, upper]` of log-ratios; an infinite bound means "no bound yet".
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Interval {
    pub lower: f64,
    pub upper: f64,
}

impl Interval {
    /// The whole real line: what an anytime-valid interval says before it has enough pairs.
    pub const WHOLE_LINE: Interval = Interval {
        lower: f64::NEG_INFINITY,
        upper: f64::INFINITY,
    };

    /// `centre ± half_width`; an infinite half-width gives the whole line.
    pub fn around(centre: f64, half_width: f64) -> Interval {
        if half_width.is_infinite() {
            Interval::WHOLE_LINE
        } else {
            Interval {
                lower: centre - half_width,
                upper: centre + half_width,
            }
        }
    }

    /// A single point, as a deterministic metric gives.
    pub fn point(x: f64) -> Interval {
        Interval { lower: x, upper: x }
    }

    /// `upper − lower` (infinite when unbounded).
    pub fn width(&self) -> f64 {
        self.upper - self.lower
    }

    /// True when both bounds are finite.
    pub fn is_bounded(&self) -> bool {
        self.lower.is_finite() && self.upper.is_finite()
    }

    /// True when `x` lies in the closed interval.
    pub fn contains(&self, x: f64) -> bool {
        self.lower <= x && x <= self.upper
    }

    /// The interval in percent `100(e^x − 1)`; an infinite bound, or one whose percentage
    /// overflows or passes [`crate::SATURATED`], becomes `None` (JSON `null`), so no number is
    /// served that a reader (or Postgres's `jsonb`) could not give back.
    pub fn to_percent(&self) -> [Option<f64>; 2] {
        let pct = |x: f64| {
            x.is_finite()
                .then(|| crate::paired::percent_from_log(x))
                .filter(|p| crate::storable(*p))
        };
        [pct(self.lower), pct(self.upper)]
    }

    /// The interval of the opposite comparison (head vs base swapped): `[−upper, −lower]`.
    pub fn negated(&self) -> Interval {
        Interval {
            lower: -self.upper,
            upper: -self.lower,
        }
    }
}
