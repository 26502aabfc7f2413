//! A claim answered by a measured interval, in one of six fixed words.
//!
//! Both are compared as changes of the *performance*: for a lower-is-better metric a fall is
//! better. With an interval `[lo, hi]` of the metric's change and a claimed `[a, b]`:
//! - the interval excludes zero: *opposite* when its direction is not the claim's; else
//!   *confirmed* when the claimed size meets the interval, *smaller than claimed* when the
//!   whole interval is nearer zero than the claim, *larger than claimed* when it is further;
//! - the interval covers zero: *not reproduced* when the row is equivalent within its margin
//!   or the claimed size lies outside the interval (no change that large), else *not shown
//!   yet* (more rounds would tell).

use serde::{Deserialize, Serialize};

use crate::{Claim, Metric};

/// What the runner measured for the claim's benchmark.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Measured {
    /// The metric's change in percent, `[lower, upper]`.
    pub interval_pct: [f64; 2],
    /// Whether higher values of the measured metric are better (throughput).
    pub higher_is_better: bool,
    /// The row is "no change beyond ±M": equivalent within the margin.
    pub equivalent: bool,
}

/// The answer to one claim.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Answer {
    Confirmed,
    SmallerThanClaimed,
    LargerThanClaimed,
    NotShownYet,
    NotReproduced,
    Opposite,
}

impl Answer {
    /// The fixed words the comment, the check and `compare` print.
    pub fn words(self) -> &'static str {
        match self {
            Answer::Confirmed => "confirmed",
            Answer::SmallerThanClaimed => "smaller than claimed",
            Answer::LargerThanClaimed => "larger than claimed",
            Answer::NotShownYet => "not shown yet",
            Answer::NotReproduced => "not reproduced",
            Answer::Opposite => "opposite",
        }
    }

    /// Whether `[gate] claims = "require"` fails the check on this answer.
    pub fn refutes(self) -> bool {
        matches!(self, Answer::NotReproduced | Answer::Opposite)
    }

    /// The answer its words name (as stored in a `ClaimAnswer`).
    pub fn from_words(words: &str) -> Option<Self> {
        [
            Answer::Confirmed,
            Answer::SmallerThanClaimed,
            Answer::LargerThanClaimed,
            Answer::NotShownYet,
            Answer::NotReproduced,
            Answer::Opposite,
        ]
        .into_iter()
        .find(|a| a.words() == words)
    }
}

/// The claim's change in the measured metric's terms: a throughput claim against a time
/// series (or the reverse) converts through `time = 1 / throughput`.
pub fn claimed_in(claim: &Claim, higher_is_better: bool) -> [f64; 2] {
    let claimed_higher = claim.metric == Metric::Throughput;
    if claimed_higher == higher_is_better {
        return claim.change_pct;
    }
    let flip = |p: f64| (1.0 / (1.0 + p / 100.0) - 1.0) * 100.0;
    let (a, b) = (flip(claim.change_pct[0]), flip(claim.change_pct[1]));
    [a.min(b), a.max(b)]
}

/// The answer to `claim` from `measured`.
pub fn answer(claim: &Claim, measured: &Measured) -> Answer {
    // Everything as a gain: positive is better.
    let gain = |p: f64| if measured.higher_is_better { p } else { -p };
    let [a, b] = claimed_in(claim, measured.higher_is_better);
    let (c_lo, c_hi) = (gain(a).min(gain(b)), gain(a).max(gain(b)));
    let [lo, hi] = measured.interval_pct;
    let (m_lo, m_hi) = (gain(lo).min(gain(hi)), gain(lo).max(gain(hi)));
    let meets = c_lo <= m_hi && m_lo <= c_hi;
    let claimed_up = c_lo + c_hi > 0.0;
    if m_lo > 0.0 || m_hi < 0.0 {
        let measured_up = m_lo > 0.0;
        if measured_up != claimed_up {
            return Answer::Opposite;
        }
        if meets {
            return Answer::Confirmed;
        }
        let further = |x: f64| x.abs();
        return if further(c_lo).min(further(c_hi)) > further(m_lo).max(further(m_hi)) {
            Answer::SmallerThanClaimed
        } else {
            Answer::LargerThanClaimed
        };
    }
    if measured.equivalent || !meets {
        Answer::NotReproduced
    } else {
        Answer::NotShownYet
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::Source;

    fn claim(metric: Metric, pct: f64) -> Claim {
        Claim {
            benchmark: Some("parse".into()),
            metric,
            change_pct: [pct, pct],
            runs: None,
            machine: None,
            source: Source::Sentence,
            line: 1,
            quote: String::new(),
        }
    }

    fn time(lo: f64, hi: f64) -> Measured {
        Measured {
            interval_pct: [lo, hi],
            higher_is_better: false,
            equivalent: false,
        }
    }

    #[test]
    fn each_answer_from_its_rule() {
        let faster_30 = claim(Metric::Time, -30.0);
        assert_eq!(answer(&faster_30, &time(-35.0, -25.0)), Answer::Confirmed);
        assert_eq!(
            answer(&faster_30, &time(-12.0, -8.0)),
            Answer::SmallerThanClaimed
        );
        assert_eq!(
            answer(&faster_30, &time(-50.0, -40.0)),
            Answer::LargerThanClaimed
        );
        assert_eq!(answer(&faster_30, &time(40.0, 60.0)), Answer::Opposite);
        assert_eq!(answer(&faster_30, &time(-40.0, 5.0)), Answer::NotShownYet);
        assert_eq!(answer(&faster_30, &time(-3.0, 2.0)), Answer::NotReproduced);
        let equivalent = Measured {
            equivalent: true,
            ..time(-0.8, 0.9)
        };
        assert_eq!(
            answer(&claim(Metric::Time, -0.5), &equivalent),
            Answer::NotReproduced
        );
    }

    #[test]
    fn a_throughput_claim_meets_a_time_series_through_its_inverse() {
        // 2.5 times the MB/s is 60% less time.
        let c = claim(Metric::Throughput, 150.0);
        let [a, b] = claimed_in(&c, false);
        assert!((a + 60.0).abs() < 1e-9 && (b + 60.0).abs() < 1e-9);
        assert_eq!(answer(&c, &time(-65.0, -55.0)), Answer::Confirmed);
        let thrpt = Measured {
            higher_is_better: true,
            ..time(140.0, 160.0)
        };
        assert_eq!(answer(&c, &thrpt), Answer::Confirmed);
        assert_eq!(
            answer(&claim(Metric::Time, -60.0), &thrpt),
            Answer::Confirmed
        );
    }

    #[test]
    fn a_range_is_confirmed_when_it_meets_the_interval() {
        let c = Claim {
            change_pct: [-30.0, -25.0],
            ..claim(Metric::Time, 0.0)
        };
        assert_eq!(answer(&c, &time(-26.0, -20.0)), Answer::Confirmed);
        assert_eq!(answer(&c, &time(-20.0, -10.0)), Answer::SmallerThanClaimed);
    }
}
