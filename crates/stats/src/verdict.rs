//! The verdict a user reads, decided from the running interval `[L, U]` and the margin M, and
//! the rounds still needed when the interval does not decide yet.

use benchgate_api::{Direction, VerdictKind};

use crate::confidence_sequence::MixtureBoundary;
use crate::interval::Interval;

/// What the evidence says about one benchmark and metric, in terms of performance: for a
/// higher-is-better metric (throughput) a lower head is `Slower`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Verdict {
    /// Head performs worse (a regression): `L > 0` when lower is better, `U < 0` when higher
    /// is better; practical when the whole interval is beyond M as well.
    Slower { practical: bool },
    /// Head performs better, the mirror of `Slower`.
    Faster { practical: bool },
    /// `−M < L` and `U < M`: no change larger than M.
    Equivalent,
    /// Not slower than the gate's tolerance T: the bound on the worse side is below
    /// `ln(1 + T)` (a one-sided use of the same anytime-valid interval). The gate passes it.
    NotSlower,
    /// Undecided; `rounds_needed` more rounds at the current spread should settle it.
    NoResultYet { rounds_needed: u64 },
    /// Undecided, and even the rounds cap would not settle it on this runner.
    BelowResolution,
    /// A deterministic metric (zero spread on both sides): the change is exact.
    Exact,
}

impl Verdict {
    /// A pass: not slower, no change, or faster.
    pub fn is_pass(&self) -> bool {
        matches!(
            self,
            Verdict::NotSlower | Verdict::Equivalent | Verdict::Faster { .. }
        )
    }

    /// The wire form of the verdict.
    pub fn kind(&self) -> VerdictKind {
        match self {
            Verdict::Slower { .. } => VerdictKind::Slower,
            Verdict::Faster { .. } => VerdictKind::Faster,
            Verdict::Equivalent => VerdictKind::Equivalent,
            Verdict::NotSlower => VerdictKind::NotSlower,
            Verdict::NoResultYet { .. } => VerdictKind::NoResultYet,
            Verdict::BelowResolution => VerdictKind::BelowResolution,
            Verdict::Exact => VerdictKind::Exact,
        }
    }

    /// True for a slower/faster verdict beyond ±M.
    pub fn is_practical(&self) -> bool {
        matches!(
            self,
            Verdict::Slower { practical: true } | Verdict::Faster { practical: true }
        )
    }

    /// More rounds needed, for a "no result yet" verdict.
    pub fn rounds_needed(&self) -> Option<u64> {
        match self {
            Verdict::NoResultYet { rounds_needed } => Some(*rounds_needed),
            _ => None,
        }
    }
}

/// What decides a row from its interval (all on the log scale): the margin M, the layout band
/// a claim must clear, the gate's tolerance, and which way is worse for the metric.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct DecisionRule {
    pub margin: f64,
    /// What rebuilding the same code moves (0 without a layout floor).
    pub layout: f64,
    /// `ln(1 + T)` for the gate's tolerance T; `None` when the gate has none.
    pub tolerance: Option<f64>,
    pub direction: Direction,
}

impl DecisionRule {
    /// The rule with neither a layout band nor a tolerance.
    pub fn new(margin: f64, direction: Direction) -> Self {
        DecisionRule {
            margin,
            layout: 0.0,
            tolerance: None,
            direction,
        }
    }

    /// The interval's bound on the worse side, on the worse scale (a throughput's `−lower`).
    pub fn worse_upper(&self, interval: Interval) -> f64 {
        match self.direction {
            Direction::LowerIsBetter => interval.upper,
            Direction::HigherIsBetter => -interval.lower,
        }
    }

    /// The decision the interval alone makes, or `None` when it straddles every boundary.
    /// Slower or faster when the whole interval lies beyond the layout band (beyond zero
    /// without one); equivalent inside ±M; otherwise not slower when its worse-side bound is
    /// below the tolerance. Equivalence is the stronger answer and is reported when reached.
    pub fn decide(&self, interval: Interval) -> Option<Verdict> {
        // On the "worse" scale a positive value is a regression whichever way the metric points.
        let worse = match self.direction {
            Direction::LowerIsBetter => interval,
            Direction::HigherIsBetter => interval.negated(),
        };
        let (margin, layout) = (self.margin, self.layout);
        if worse.lower > layout {
            Some(Verdict::Slower {
                practical: worse.lower > margin,
            })
        } else if worse.upper < -layout {
            Some(Verdict::Faster {
                practical: worse.upper < -margin,
            })
        } else if -margin < interval.lower && interval.upper < margin {
            Some(Verdict::Equivalent)
        } else if self.tolerance.is_some_and(|t| worse.upper < t) {
            Some(Verdict::NotSlower)
        } else {
            None
        }
    }

    /// The half-width that decides an undecided interval around `mean`: the largest of the
    /// distances to a decision, `|d̄| − layout`, `M − |d̄|` and, with a tolerance, `T − d̄`
    /// on the worse side; `None` when there is none to reach.
    pub(crate) fn target(&self, mean: f64) -> Option<f64> {
        let worse = mean * self.direction.worse_sign();
        let to_tolerance = self.tolerance.map_or(f64::NEG_INFINITY, |t| t - worse);
        let target = (mean.abs() - self.layout)
            .max(self.margin - mean.abs())
            .max(to_tolerance);
        (!target.is_nan() && target > 0.0).then_some(target)
    }

    /// Whether the half-width reached at the round cap would decide the row whose estimate is
    /// `mean`: it excludes zero at this estimate when the estimate is beyond M/2, and otherwise
    /// it is at most M/2 (or T/2 with a tolerance), which decides an interval wherever its
    /// centre lies in ±M/2 (±T/2): it then excludes zero, fits inside ±M, or stays below T. So
    /// for a change smaller than that, "below resolution" depends on the spread, M, T and the
    /// cap, not on where the estimate happens to be. With a tolerance the gate asks "not slower
    /// than T?": an estimate whose distance to T the cap's half-width reaches is answerable
    /// however far ±M is, and is never given up on.
    pub(crate) fn resolves(&self, half_width_at_cap: f64, mean: f64) -> bool {
        let reach = (mean.abs() - self.layout).max(0.0);
        let half = self.margin.max(self.tolerance.unwrap_or(0.0)) / 2.0;
        let to_tolerance = self
            .tolerance
            .map_or(0.0, |t| t - mean * self.direction.worse_sign());
        half_width_at_cap <= reach.max(half).max(to_tolerance)
    }
}

/// The decision the interval alone makes, or `None` when it straddles a boundary. The interval
/// is of the raw metric's log-ratio; `direction` turns "head is larger" into better or worse.
pub fn decide(interval: Interval, margin: f64, direction: Direction) -> Option<Verdict> {
    DecisionRule::new(margin, direction).decide(interval)
}

/// [`decide`] with a layout band: slower or faster only when the whole interval lies beyond
/// `layout` (what rebuilding the same code moves), so a layout shift alone is no claim.
pub fn decide_beyond(
    interval: Interval,
    margin: f64,
    layout: f64,
    direction: Direction,
) -> Option<Verdict> {
    DecisionRule {
        layout,
        ..DecisionRule::new(margin, direction)
    }
    .decide(interval)
}

/// The smallest total n ≥ `n_current` whose half-width at spread `sd` reaches the nearest
/// decision `max(|d̄|, M − |d̄|)`; `None` when not even `cap` pairs reach it.
pub fn total_rounds_needed(
    boundary: &MixtureBoundary,
    mean: f64,
    sd: f64,
    n_current: u64,
    margin: f64,
    cap: u64,
) -> Option<u64> {
    rounds_to_target(
        boundary,
        sd,
        n_current,
        cap,
        DecisionRule::new(margin, Direction::LowerIsBetter).target(mean)?,
    )
}

fn rounds_to_target(
    boundary: &MixtureBoundary,
    sd: f64,
    n_current: u64,
    cap: u64,
    target: f64,
) -> Option<u64> {
    // A scan, not a bisection: the half-width is not proven monotone just past the whole-line
    // region, and the cap keeps this at most a few thousand cheap evaluations.
    (n_current.max(2)..=cap).find(|&n| boundary.half_width(sd, n) <= target)
}

/// The spread and position of one undecided series, for planning the rounds it still needs.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Progress {
    pub mean: f64,
    pub sd: f64,
    pub n: u64,
}

/// The verdict from the running interval, or the rounds still needed when it is undecided.
pub fn verdict(
    interval: Interval,
    boundary: &MixtureBoundary,
    progress: Progress,
    rule: &DecisionRule,
    cap: u64,
) -> Verdict {
    let Progress {
        mean,
        sd,
        n: n_current,
    } = progress;
    if let Some(decided) = rule.decide(interval) {
        return decided;
    }
    if !rule.resolves(boundary.half_width(sd, cap.max(n_current)), mean) {
        return Verdict::BelowResolution;
    }
    match rule
        .target(mean)
        .and_then(|t| rounds_to_target(boundary, sd, n_current, cap, t))
    {
        // At least one more round: the current n did not decide.
        Some(total) => Verdict::NoResultYet {
            rounds_needed: total.saturating_sub(n_current).max(1),
        },
        None => Verdict::BelowResolution,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const M: f64 = 0.01;

    fn iv(lower: f64, upper: f64) -> Interval {
        Interval { lower, upper }
    }

    /// Lower is better, no tolerance.
    fn rule(margin: f64, layout: f64) -> DecisionRule {
        DecisionRule {
            layout,
            ..DecisionRule::new(margin, Direction::LowerIsBetter)
        }
    }

    /// With a 5% tolerance: an interval whose worse bound is below ln(1.05) is not slower;
    /// equivalence and a decided change still come first, and a throughput's worse side is
    /// its lower bound.
    #[test]
    fn a_tolerance_passes_what_is_shown_not_slower_than_it() {
        let t = 0.05f64.ln_1p();
        let with = |direction| DecisionRule {
            tolerance: Some(t),
            ..DecisionRule::new(M, direction)
        };
        let lower = with(Direction::LowerIsBetter);
        assert_eq!(lower.decide(iv(-0.03, 0.04)), Some(Verdict::NotSlower));
        assert_eq!(
            lower.decide(iv(-0.03, 0.06)),
            None,
            "the bound is above +5%"
        );
        assert_eq!(lower.decide(iv(-0.005, 0.005)), Some(Verdict::Equivalent));
        assert_eq!(
            lower.decide(iv(0.001, 0.04)),
            Some(Verdict::Slower { practical: false })
        );
        let higher = with(Direction::HigherIsBetter);
        assert_eq!(higher.decide(iv(-0.04, 0.03)), Some(Verdict::NotSlower));
        assert_eq!(higher.decide(iv(-0.06, 0.03)), None);
        // Without a tolerance the same interval waits.
        assert_eq!(rule(M, 0.0).decide(iv(-0.03, 0.04)), None);
        // The rounds asked for aim at the nearest decision, the tolerance included.
        assert!((lower.target(0.01).unwrap() - (t - 0.01)).abs() < 1e-12);
        assert!((higher.target(-0.01).unwrap() - (t - 0.01)).abs() < 1e-12);
    }

    #[test]
    fn decision_table() {
        let cases = [
            (iv(0.02, 0.05), Some(Verdict::Slower { practical: true })),
            (iv(0.005, 0.05), Some(Verdict::Slower { practical: false })),
            (iv(-0.05, -0.02), Some(Verdict::Faster { practical: true })),
            (
                iv(-0.05, -0.001),
                Some(Verdict::Faster { practical: false }),
            ),
            (iv(-0.005, 0.008), Some(Verdict::Equivalent)),
            (iv(-0.02, 0.008), None),
            (iv(-0.005, 0.02), None),
            (Interval::WHOLE_LINE, None),
        ];
        for (interval, expected) in cases {
            assert_eq!(
                decide(interval, M, Direction::LowerIsBetter),
                expected,
                "{interval:?}"
            );
        }
    }

    #[test]
    fn a_higher_is_better_metric_mirrors_its_reciprocal() {
        for (lo, hi) in [
            (0.02, 0.05),
            (-0.05, -0.001),
            (-0.005, 0.008),
            (-0.02, 0.008),
        ] {
            let throughput = decide(iv(lo, hi), M, Direction::HigherIsBetter);
            let time = decide(iv(lo, hi).negated(), M, Direction::LowerIsBetter);
            assert_eq!(throughput, time, "[{lo}, {hi}]");
        }
        // A throughput that fell by 83% is a practical regression.
        assert_eq!(
            decide(iv(-1.9, -1.6), M, Direction::HigherIsBetter),
            Some(Verdict::Slower { practical: true })
        );
    }

    #[test]
    fn a_layout_band_moves_the_claim_line_not_the_equivalence_line() {
        let lower = Direction::LowerIsBetter;
        // Layout moves builds by up to 4%, so M is 4% too.
        let (m, layout) = (0.04, 0.04);
        // 2% slower for sure, but rebuilding alone does that: no change beyond ±4% (layout).
        assert_eq!(
            decide_beyond(iv(0.01, 0.03), m, layout, lower),
            Some(Verdict::Equivalent)
        );
        assert_eq!(
            decide(iv(0.01, 0.03), m, lower),
            Some(Verdict::Slower { practical: false })
        );
        // A 10% change clears the band.
        assert_eq!(
            decide_beyond(iv(0.07, 0.13), m, layout, lower),
            Some(Verdict::Slower { practical: true })
        );
        assert_eq!(
            decide_beyond(iv(-0.13, -0.07), m, layout, lower),
            Some(Verdict::Faster { practical: true })
        );
        // Straddling the band's edge decides nothing yet.
        assert_eq!(decide_beyond(iv(0.02, 0.06), m, layout, lower), None);
        // The rounds asked for aim at the band's edge, not at zero.
        let b = MixtureBoundary::tuned(0.05, 20.0).unwrap();
        let at = Progress {
            mean: 0.06,
            sd: 0.03,
            n: 5,
        };
        let v = verdict(iv(0.0, 0.12), &b, at, &rule(m, layout), 1000);
        let Verdict::NoResultYet { rounds_needed } = v else {
            panic!("{v:?}")
        };
        assert!(b.half_width(0.03, 5 + rounds_needed) <= 0.02);
        assert!(b.half_width(0.03, 5 + rounds_needed - 1) > 0.02);
    }

    #[test]
    fn undecided_reports_rounds_or_resolution() {
        let b = MixtureBoundary::tuned(0.05, 20.0).unwrap();
        let at = |mean, sd| Progress { mean, sd, n: 10 };
        let v = verdict(iv(-0.01, 0.05), &b, at(0.02, 0.035), &rule(M, 0.0), 1000);
        let Verdict::NoResultYet { rounds_needed } = v else {
            panic!("{v:?}")
        };
        let total = 10 + rounds_needed;
        assert!(b.half_width(0.035, total) <= 0.02);
        assert!(b.half_width(0.035, total - 1) > 0.02);
        assert_eq!(
            verdict(iv(-0.01, 0.05), &b, at(0.0, 0.5), &rule(0.001, 0.0), 100),
            Verdict::BelowResolution
        );
    }

    /// With a 5% tolerance and M = 1%, a spread whose half-width at the cap is 5% cannot reach
    /// ±M, but the gate's question is answerable for an estimate of −2% (its worse bound falls
    /// under +5% well before the cap): that row needs rounds, it is not below resolution. At
    /// +2% the distance to T is 3%, beyond the cap's reach: below resolution.
    #[test]
    fn below_resolution_only_when_the_gates_own_question_is_out_of_reach() {
        let b = MixtureBoundary::tuned(0.05, 20.0).unwrap();
        let cap = 60;
        let sd = (1..5000)
            .map(|k| f64::from(k) * 1e-4)
            .find(|&sd| b.half_width(sd, cap) >= 0.05)
            .unwrap();
        let tolerant = DecisionRule {
            tolerance: Some(0.05f64.ln_1p()),
            ..rule(M, 0.0)
        };
        let at = |mean: f64| Progress { mean, sd, n: 8 };
        let below = -0.02;
        let v = verdict(iv(below - 0.2, below + 0.2), &b, at(below), &tolerant, cap);
        let Verdict::NoResultYet { rounds_needed } = v else {
            panic!("{v:?}")
        };
        assert!(8 + rounds_needed <= cap, "{rounds_needed}");
        let above = 0.02;
        let v = verdict(iv(above - 0.2, above + 0.2), &b, at(above), &tolerant, cap);
        assert_eq!(v, Verdict::BelowResolution);
        // Without the tolerance only ±M is asked: out of reach at either estimate.
        let v = verdict(
            iv(below - 0.2, below + 0.2),
            &b,
            at(below),
            &rule(M, 0.0),
            cap,
        );
        assert_eq!(v, Verdict::BelowResolution);
    }

    /// Inside ±M/2 the same spread is resolvable or not whatever the estimate: an estimate near
    /// zero (nearest decision M away) and one near M/2 (M/2 away) get the same answer; a change
    /// beyond M/2 that the cap can tell from zero is not given up on.
    #[test]
    fn below_resolution_depends_on_the_spread_not_on_the_estimate() {
        let b = MixtureBoundary::tuned(0.05, 20.0).unwrap();
        let cap = 1000;
        // Between the two old thresholds: h(cap) reaches M but not M/2.
        let sd = (1..5000)
            .map(|k| f64::from(k) * 1e-4)
            .find(|&sd| b.half_width(sd, cap) > M / 2.0 && b.half_width(sd, cap) <= M)
            .unwrap();
        for mean in [0.0, 0.002, 0.004, -0.0049] {
            let wide = iv(mean - 0.05, mean + 0.05);
            let v = verdict(wide, &b, Progress { mean, sd, n: 10 }, &rule(M, 0.0), cap);
            assert_eq!(v, Verdict::BelowResolution, "mean {mean}");
        }
        let large = 3.0 * M;
        let wide = iv(large - 0.05, large + 0.05);
        let v = verdict(
            wide,
            &b,
            Progress {
                mean: large,
                sd,
                n: 10,
            },
            &rule(M, 0.0),
            cap,
        );
        assert!(matches!(v, Verdict::NoResultYet { .. }), "{v:?}");
        // A spread that resolves M/2 by the cap is never given up on, wherever the estimate is.
        let quiet = sd / 3.0;
        for mean in [0.0, M / 2.0, 0.009] {
            let wide = iv(mean - 0.05, mean + 0.05);
            let v = verdict(
                wide,
                &b,
                Progress {
                    mean,
                    sd: quiet,
                    n: 10,
                },
                &rule(M, 0.0),
                cap,
            );
            assert!(
                matches!(v, Verdict::NoResultYet { .. }),
                "mean {mean}: {v:?}"
            );
        }
    }
}
