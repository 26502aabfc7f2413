//! Which commit: the culprit of a regression on a first-parent range, found by interleaved
//! probes under one error budget. Sans I/O: [`Bisection::next_step`] says which pair of commits to
//! compare and what would decide it; the caller runs rounds until [`Probe::decides`] holds or
//! its round limit, and hands the running interval back with [`Bisection::record`].
//!
//! Commits are indexed `0..=n` along the range: 0 is the last good commit, `n` the first bad.
//! 1. **Confirm**: `0 → n`. Decided once the interval is above zero and precise (its lower bound
//!    at least half its upper); the threshold τ is then a quarter of `L + U`, at least `L/4` from
//!    both 0 and the regression Δ whenever the interval covers Δ.
//! 2. **Split**: `0 → m` at the middle of the open range. Above τ: the culprit is at or before
//!    `m`; below τ: after it. Comparing with commit 0 (not the range's end) makes every probe
//!    measure the regression so far, which τ is a share of: with `L ≤ Δ ≤ U ≤ 2L`,
//!    τ = (L + U)/4 lies between 3Δ/8 and 3Δ/4.
//! 3. **Verify**: the candidate against its parent. Above τ: it alone explains at least 3/8 of
//!    the regression (not necessarily half), and it is named. Below τ: the change is spread
//!    (creep), and nothing is.
//!
//! The planned probes (`log2 n + 2`) share 90% of α evenly, further probes (after skips) the
//! rest as `α·6/(π²·j²)` does (`chain::step_alpha`), so all intervals cover at once with
//! probability ≥ 1 − α, and then a named culprit is right: the search's error is at most α. A probe that stays undecided stops the search and reports the
//! range left; a commit that cannot be built or run is skipped and the range reported around it.

use crate::chain::step_alpha;
use crate::interval::Interval;

/// What a probe asks of its interval (log scale, newer against older).
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Question {
    /// Is there a regression over the whole range, measured precisely enough to split it?
    Confirm,
    /// Is the regression up to this commit above or below `threshold`?
    Split { threshold: f64 },
    /// Does this commit's own step exceed `threshold`?
    Verify { threshold: f64 },
}

/// One comparison to run: commit `newer` against commit `older`, at level `alpha`.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Probe {
    pub older: usize,
    pub newer: usize,
    pub alpha: f64,
    pub question: Question,
}

impl Probe {
    /// Whether `interval` answers this probe's question, so its rounds may stop.
    pub fn decides(&self, interval: Interval) -> bool {
        match self.question {
            Question::Confirm => interval.upper < 0.0 || precise_regression(interval),
            Question::Split { threshold } | Question::Verify { threshold } => {
                interval.lower > threshold || interval.upper < threshold
            }
        }
    }
}

/// Above zero, and narrow enough (upper ≤ 2 × lower) that τ = (L + U)/4 keeps at least L/4
/// from both 0 and the regression Δ when the interval covers Δ: every split can then decide.
fn precise_regression(i: Interval) -> bool {
    i.lower > 0.0 && i.lower * 2.0 >= i.upper
}

/// A probe as it ended.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct ProbeRecord {
    pub probe: Probe,
    pub interval: Interval,
    /// Rounds (pairs) it took.
    pub rounds: u64,
    /// It answered its question (else it stopped at its round limit).
    pub decided: bool,
}

/// How the search ended.
#[derive(Debug, Clone, PartialEq)]
pub enum Outcome {
    /// Commit `index` alone explains more than τ, at least 3/8 of the regression (a confirmation
    /// at its round limit guarantees only τ = L/2); `step` is its own change.
    Culprit { index: usize, step: Interval },
    /// No single commit: the regression builds up. `index` crosses τ, with only `step`
    /// of its own; the probes' intervals give the regression commit by commit.
    Spread { index: usize, step: Interval },
    /// The whole range shows no regression (its interval is below zero or never left it).
    NoRegression { range: Interval },
    /// A probe stayed undecided (two culprits near τ, or too noisy a runner): the culprit is
    /// somewhere in `(after, upto]`.
    Undecided { after: usize, upto: usize },
    /// The candidates `(after, upto]` left include commits that could not be measured.
    Skipped {
        after: usize,
        upto: usize,
        skipped: Vec<usize>,
    },
}

/// The search over commits `0..=n`.
#[derive(Debug, Clone)]
pub struct Bisection {
    n: usize,
    alpha: f64,
    /// The last commit known to carry at most half the regression, and the first known to
    /// carry more.
    good: usize,
    bad: usize,
    threshold: Option<f64>,
    skipped: Vec<usize>,
    records: Vec<ProbeRecord>,
    outcome: Option<Outcome>,
    pending: Option<Probe>,
}

/// What to do next.
#[derive(Debug, Clone, PartialEq)]
pub enum Next {
    Run(Probe),
    Done(Outcome),
}

impl Bisection {
    /// A search over `n ≥ 1` commits after the good one, whole error budget `alpha`.
    pub fn new(n: usize, alpha: f64) -> Self {
        assert!(n >= 1, "a range holds at least the bad commit");
        Bisection {
            n,
            alpha,
            good: 0,
            bad: n,
            threshold: None,
            skipped: Vec::new(),
            records: Vec::new(),
            outcome: None,
            pending: None,
        }
    }

    /// The probes made so far, in order.
    pub fn records(&self) -> &[ProbeRecord] {
        &self.records
    }

    /// Rounds spent over every probe.
    pub fn rounds(&self) -> u64 {
        self.records.iter().map(|r| r.rounds).sum()
    }

    /// The next probe, or how the search ended.
    pub fn next_step(&mut self) -> Next {
        if let Some(outcome) = &self.outcome {
            return Next::Done(outcome.clone());
        }
        let alpha = self.probe_alpha(self.records.len() + 1);
        let probe = match self.threshold {
            None => Probe {
                older: 0,
                newer: self.n,
                alpha,
                question: Question::Confirm,
            },
            Some(threshold) if self.bad - self.good > 1 => match self.middle() {
                Some(m) => Probe {
                    older: 0,
                    newer: m,
                    alpha,
                    question: Question::Split { threshold },
                },
                None => return self.finish(self.skipped_outcome()),
            },
            Some(threshold) => Probe {
                older: self.good,
                newer: self.bad,
                alpha,
                question: Question::Verify { threshold },
            },
        };
        self.pending = Some(probe);
        Next::Run(probe)
    }

    /// The pending probe's running interval after `rounds` pairs; `decided` as
    /// [`Probe::decides`] said when its rounds stopped.
    pub fn record(&mut self, interval: Interval, rounds: u64) {
        let probe = self.pending.take().expect("record follows next_step");
        let decided = probe.decides(interval);
        self.records.push(ProbeRecord {
            probe,
            interval,
            rounds,
            decided,
        });
        match probe.question {
            Question::Confirm => {
                if interval.lower > 0.0 {
                    // Precise or not, a covering interval puts τ in (0, Δ]: at the limit the
                    // lower bound alone is used.
                    let tau = if precise_regression(interval) {
                        0.25 * (interval.lower + interval.upper)
                    } else {
                        0.5 * interval.lower
                    };
                    self.threshold = Some(tau);
                } else {
                    self.finish(Outcome::NoRegression { range: interval });
                }
            }
            Question::Split { threshold } if decided => {
                if interval.lower > threshold {
                    self.bad = probe.newer;
                } else {
                    self.good = probe.newer;
                }
            }
            Question::Split { .. } => {
                let (after, upto) = (self.good, self.bad);
                self.finish(Outcome::Undecided { after, upto });
            }
            Question::Verify { threshold } => {
                let index = probe.newer;
                let outcome = if !decided {
                    Outcome::Undecided {
                        after: self.good,
                        upto: self.bad,
                    }
                } else if interval.lower > threshold {
                    Outcome::Culprit {
                        index,
                        step: interval,
                    }
                } else {
                    Outcome::Spread {
                        index,
                        step: interval,
                    }
                };
                self.finish(outcome);
            }
        }
    }

    /// The pending probe's commit could not be built or run: it is skipped, as `git bisect
    /// skip` does, and another commit of the range is tried.
    pub fn skip(&mut self) {
        let probe = self.pending.take().expect("skip follows next_step");
        match probe.question {
            Question::Split { .. } => self.skipped.push(probe.newer),
            // The range's own ends or the candidate cannot be measured: nothing to split.
            Question::Confirm | Question::Verify { .. } => {
                self.skipped.push(probe.newer);
                let outcome = self.skipped_outcome();
                self.finish(outcome);
            }
        }
    }

    /// Probes a search of `n` commits makes without skips: confirm, the splits, verify.
    pub fn planned_probes(n: usize) -> usize {
        n.next_power_of_two().trailing_zeros() as usize + 2
    }

    /// The level of probe `j` (1-based): 90% of α split evenly over the planned probes, the
    /// rest over those a skip adds, as `chain::step_alpha` splits it. Even shares suit a search
    /// whose probes are known in number: the last split needs no more rounds than the first.
    pub fn probe_alpha(&self, j: usize) -> f64 {
        let planned = Self::planned_probes(self.n);
        if j <= planned {
            0.9 * self.alpha / planned as f64
        } else {
            step_alpha(0.1 * self.alpha, j - planned)
        }
    }

    /// The commit nearest the middle of `(good, bad)` not skipped.
    fn middle(&self) -> Option<usize> {
        let mid = self.good + (self.bad - self.good) / 2;
        (0..self.bad - self.good)
            .flat_map(|k| [mid.checked_sub(k), mid.checked_add(k)])
            .flatten()
            .find(|&c| c > self.good && c < self.bad && !self.skipped.contains(&c))
    }

    fn skipped_outcome(&self) -> Outcome {
        let mut skipped: Vec<usize> = self
            .skipped
            .iter()
            .copied()
            .filter(|&c| c > self.good && c <= self.bad)
            .collect();
        skipped.sort_unstable();
        Outcome::Skipped {
            after: self.good,
            upto: self.bad,
            skipped,
        }
    }

    fn finish(&mut self, outcome: Outcome) -> Next {
        self.outcome = Some(outcome.clone());
        Next::Done(outcome)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Answers every probe with the exact regression of a step at `culprit` (size `delta`),
    /// as a point interval: the search's logic without noise.
    fn exact(n: usize, culprit: usize, delta: f64) -> (Outcome, usize) {
        let mut b = Bisection::new(n, 0.05);
        let cumulative = |c: usize| if c >= culprit { delta } else { 0.0 };
        loop {
            match b.next_step() {
                Next::Done(o) => return (o, b.records().len()),
                Next::Run(p) => {
                    let d = cumulative(p.newer) - cumulative(p.older);
                    b.record(
                        Interval {
                            lower: d - 1e-3,
                            upper: d + 1e-3,
                        },
                        10,
                    );
                }
            }
        }
    }

    #[test]
    fn one_step_is_found_at_every_position_in_log2_probes() {
        for culprit in 1..=64 {
            let (outcome, probes) = exact(64, culprit, 0.03);
            assert!(
                matches!(outcome, Outcome::Culprit { index, .. } if index == culprit),
                "{culprit}: {outcome:?}"
            );
            // Confirm, six splits at most, verify.
            assert!(probes <= 8, "{culprit}: {probes}");
        }
    }

    #[test]
    fn no_regression_names_nothing() {
        let (outcome, probes) = exact(64, 65, 0.03);
        assert!(
            matches!(outcome, Outcome::NoRegression { .. }),
            "{outcome:?}"
        );
        assert_eq!(probes, 1);
    }

    #[test]
    fn a_skipped_middle_is_replaced_and_a_skipped_candidate_is_reported() {
        let mut b = Bisection::new(4, 0.05);
        let Next::Run(confirm) = b.next_step() else {
            panic!()
        };
        assert_eq!(confirm.question, Question::Confirm);
        b.record(
            Interval {
                lower: 0.029,
                upper: 0.031,
            },
            10,
        );
        let Next::Run(split) = b.next_step() else {
            panic!()
        };
        assert_eq!(split.newer, 2);
        b.skip();
        let Next::Run(split) = b.next_step() else {
            panic!()
        };
        assert_eq!(split.newer, 1, "the nearest commit not skipped");
        // Commit 1 is good; 2 is skipped, 3 is next.
        b.record(
            Interval {
                lower: -0.001,
                upper: 0.001,
            },
            10,
        );
        let Next::Run(split) = b.next_step() else {
            panic!()
        };
        assert_eq!(split.newer, 3);
        b.record(
            Interval {
                lower: 0.029,
                upper: 0.031,
            },
            10,
        );
        // (1, 3] holds 2 (skipped) and 3: nothing left to split, so the range is reported.
        assert_eq!(
            b.next_step(),
            Next::Done(Outcome::Skipped {
                after: 1,
                upto: 3,
                skipped: vec![2]
            })
        );
    }

    #[test]
    fn each_probe_spends_its_share_of_alpha() {
        let mut b = Bisection::new(8, 0.05);
        let mut total = 0.0;
        while let Next::Run(p) = b.next_step() {
            total += p.alpha;
            b.record(
                Interval {
                    lower: 0.029,
                    upper: 0.031,
                },
                5,
            );
        }
        assert!(total < 0.05);
        // 8 commits: confirm, three splits, verify share 90% evenly.
        assert_eq!(Bisection::planned_probes(8), 5);
        assert_eq!(b.records().len(), 5);
        assert!((b.records()[0].probe.alpha - 0.9 * 0.05 / 5.0).abs() < 1e-12);
        // Probes a skip adds share the remaining tenth; all of them stay below α.
        let extra: f64 = (6..10_000).map(|j| b.probe_alpha(j)).sum();
        assert!(total + extra < 0.05, "{}", total + extra);
    }
}
