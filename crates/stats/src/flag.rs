//! The audit's runner flag: a test of "this runner's A/A canaries claim a change at most α of the
//! time" that may be looked at after every canary, for the runner's whole life, and still raises
//! a false alarm at most `delta` of the time (docs/statistics.md §8b).
//!
//! It is a mixture of likelihood ratios (an e-process): for each alternative claim rate
//! `p1 = m·α` with `m` in [`FLAG_ALTERNATIVES`], a claim multiplies the component by `p1/α` and a
//! canary without one by `(1−p1)/(1−α)`; the flag's evidence is the average of the components.
//! Under any claim rate `p ≤ α`, even one that changes from canary to canary, each factor has
//! expectation `p·p1/α + (1−p)(1−p1)/(1−α) ≤ 1` (it is 1 at `p = α` and grows with `p` since
//! `p1 > α`), so the evidence is a nonnegative supermartingale and, by Ville's inequality, it
//! ever reaches `1/delta` with probability at most `delta`. The flag fires at the first canary
//! where it does and stays until a recalibration by hand starts the count afresh.

/// The alternative claim rates the evidence mixes, as multiples of α, with equal weights: from
/// a runner half again as wrong as promised to one wrong ten times as often.
pub const FLAG_ALTERNATIVES: [f64; 5] = [1.5, 2.0, 3.0, 5.0, 10.0];

/// The flag over a run of canary outcomes (true: the canary claimed a change).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Flag {
    /// Canaries read, and those that claimed.
    pub canaries: usize,
    pub claims: usize,
    /// The evidence after the last canary (1 before any).
    pub evidence: f64,
    /// The bar: `1/delta`.
    pub bar: f64,
    /// The canary (1-based) at which the evidence first reached the bar; the flag stays from then.
    pub fired_at: Option<usize>,
}

impl Flag {
    pub fn fired(&self) -> bool {
        self.fired_at.is_some()
    }
}

/// Reads `outcomes` in the order the canaries ran, testing "claim rate ≤ `alpha`" with a lifetime
/// false-alarm rate of at most `delta`.
pub fn claim_rate_flag(outcomes: impl IntoIterator<Item = bool>, alpha: f64, delta: f64) -> Flag {
    let alternatives: Vec<f64> = FLAG_ALTERNATIVES
        .iter()
        .map(|m| m * alpha)
        .filter(|p1| *p1 > alpha && *p1 < 1.0)
        .collect();
    let bar = 1.0 / delta;
    // Components in logs: a clear runner's evidence falls towards 0 and a biased one's grows
    // past any float.
    let mut logs = vec![0.0f64; alternatives.len()];
    let (mut canaries, mut claims, mut fired_at) = (0, 0, None);
    let mut evidence = 1.0;
    for claimed in outcomes {
        canaries += 1;
        claims += usize::from(claimed);
        for (log, p1) in logs.iter_mut().zip(&alternatives) {
            *log += if claimed {
                (p1 / alpha).ln()
            } else {
                ((1.0 - p1) / (1.0 - alpha)).ln()
            };
        }
        evidence = mean_of_exp(&logs);
        if fired_at.is_none() && evidence >= bar {
            fired_at = Some(canaries);
        }
    }
    Flag {
        canaries,
        claims,
        evidence,
        bar,
        fired_at,
    }
}

/// `mean(exp(logs))`, without overflow on the way (saturating at `f64::MAX`).
fn mean_of_exp(logs: &[f64]) -> f64 {
    if logs.is_empty() {
        return 1.0;
    }
    let top = logs.iter().copied().fold(f64::NEG_INFINITY, f64::max);
    let sum: f64 = logs.iter().map(|l| (l - top).exp()).sum();
    let log_mean = top + (sum / logs.len() as f64).ln();
    log_mean.exp().min(f64::MAX)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A small seeded generator, so each simulated runner is replayed by its seed.
    struct Rng(u64);

    impl Rng {
        fn uniform(&mut self) -> f64 {
            self.0 ^= self.0 << 13;
            self.0 ^= self.0 >> 7;
            self.0 ^= self.0 << 17;
            (self.0 >> 11) as f64 / (1u64 << 53) as f64
        }
    }

    fn runner(rate: f64, canaries: usize, rng: &mut Rng) -> Flag {
        claim_rate_flag((0..canaries).map(|_| rng.uniform() < rate), 0.05, 0.05)
    }

    /// Counted by hand at α = 5%: one claim multiplies the components by 1.5, 2, 3, 5 and 10
    /// (mean 4.3); a canary without a claim by 0.925/0.95, 0.9/0.95, 0.85/0.95, 0.75/0.95 and
    /// 0.5/0.95.
    #[test]
    fn the_evidence_is_the_mean_of_the_likelihood_ratios() {
        let one = claim_rate_flag([true], 0.05, 0.05);
        assert!((one.evidence - 4.3).abs() < 1e-12, "{one:?}");
        assert_eq!((one.canaries, one.claims, one.fired_at), (1, 1, None));
        let quiet = claim_rate_flag([false], 0.05, 0.05);
        let want = (0.925 + 0.9 + 0.85 + 0.75 + 0.5) / 0.95 / 5.0;
        assert!((quiet.evidence - want).abs() < 1e-12, "{quiet:?}");
        // Two claims in two canaries: (2.25 + 4 + 9 + 25 + 100) / 5 = 28.05, past the bar of 20.
        let two = claim_rate_flag([true, true], 0.05, 0.05);
        assert!((two.evidence - 28.05).abs() < 1e-9, "{two:?}");
        assert_eq!(two.fired_at, Some(2));
        assert_eq!(claim_rate_flag([], 0.05, 0.05).evidence, 1.0);
    }

    /// Once fired the flag stays, though the evidence falls after it.
    #[test]
    fn the_flag_stays_once_it_fired() {
        let outcomes = [true, true]
            .into_iter()
            .chain(std::iter::repeat_n(false, 200));
        let f = claim_rate_flag(outcomes, 0.05, 0.05);
        assert_eq!(f.fired_at, Some(2));
        assert!(f.evidence < 1.0, "{f:?}");
        assert!(f.fired());
    }

    /// A runner whose canaries claim at exactly α, watched over 1,000 canaries after each one:
    /// flagged at most δ = 5% of the time (200 runners per seed, 5 seeds; Ville's bound, in
    /// practice well under it). One at 3·α is flagged within the 1,000 nearly always.
    #[test]
    fn a_runner_at_alpha_is_rarely_flagged_and_one_at_three_alpha_is_found() {
        for seed in 1..=5u64 {
            let mut rng = Rng(0x9E37_79B9_7F4A_7C15 ^ seed);
            let at_alpha = (0..200)
                .filter(|_| runner(0.05, 1000, &mut rng).fired())
                .count();
            assert!(at_alpha <= 10, "seed {seed}: {at_alpha} of 200 flagged");
            let mut found_at = Vec::new();
            for _ in 0..200 {
                if let Some(n) = runner(0.15, 1000, &mut rng).fired_at {
                    found_at.push(n);
                }
            }
            assert!(
                found_at.len() >= 196,
                "seed {seed}: {} of 200",
                found_at.len()
            );
            found_at.sort_unstable();
            assert!(
                found_at[found_at.len() / 2] < 300,
                "seed {seed}: {found_at:?}"
            );
        }
        // One runner, several seeds: at α not flagged, at 3·α flagged.
        for seed in [11u64, 12, 13] {
            assert!(!runner(0.05, 1000, &mut Rng(seed)).fired(), "seed {seed}");
            assert!(runner(0.15, 1000, &mut Rng(seed)).fired(), "seed {seed}");
        }
    }

    /// 12 A/A canaries that all claimed (a head side always 3% slower) flag the runner; one
    /// claim in 60 does not.
    #[test]
    fn clear_bias_fires_and_chance_does_not() {
        assert!(claim_rate_flag([true; 12], 0.05, 0.05).fired());
        let one_in_sixty = (0..60).map(|i| i == 30);
        assert!(!claim_rate_flag(one_in_sixty, 0.05, 0.05).fired());
    }
}
