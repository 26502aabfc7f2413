//! The Gaussian-mixture t confidence sequence (Lai 1976; Wang & Ramdas 2023): an interval for
//! the mean log-ratio that is valid at every number of pairs at once, so looking again after each
//! `/rebench` cannot inflate the false-result rate.
//!
//! With `nu = n − 1`, `G = 1 + n·g` and `K = G^(1/n) · alpha^(−2/n)`, the half-width at `n` pairs is
//! `(s/√n) · √(nu·G·(K−1)/(G−K))`, and the whole line while `G^(n−1) ≤ alpha^(−2)`. The same
//! boundary is the set where the mixture Bayes factor
//! `BF = G^(−1/2) · [(1 + t²/nu) / (1 + t²/(nu·G))]^(n/2)` stays below `1/alpha`.

use crate::error::{StatsError, check_alpha};
use crate::interval::Interval;

/// `u(alpha)`, the root of `u = 2 ln(1/alpha) + ln(1 + u)`; `g = u/n*` makes the boundary
/// tightest near `n*` pairs. `u(0.05) = 8.211968062`.
pub fn mixture_u(alpha: f64) -> Result<f64, StatsError> {
    check_alpha(alpha)?;
    let c = -2.0 * alpha.ln();
    // The map u ↦ c + ln(1+u) is a contraction (slope 1/(1+u) < 1), so iteration converges.
    let mut u = c;
    for _ in 0..500 {
        let next = c + u.ln_1p();
        if (next - u).abs() <= 1e-15 * next {
            return Ok(next);
        }
        u = next;
    }
    Ok(u)
}

/// The mixture boundary for one error level and one tuning `g`; pure functions of `n` and `s`.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct MixtureBoundary {
    alpha: f64,
    g: f64,
}

impl MixtureBoundary {
    /// A boundary with an explicit mixture precision ratio `g > 0`.
    pub fn new(alpha: f64, g: f64) -> Result<Self, StatsError> {
        check_alpha(alpha)?;
        if !(g.is_finite() && g > 0.0) {
            return Err(StatsError::InvalidParameter {
                name: "g",
                value: g,
                expected: "a finite g > 0",
            });
        }
        Ok(Self { alpha, g })
    }

    /// The boundary tuned for `n_star` planned pairs: `g = u(alpha) / n*`.
    pub fn tuned(alpha: f64, n_star: f64) -> Result<Self, StatsError> {
        if !(n_star.is_finite() && n_star >= 1.0) {
            return Err(StatsError::InvalidParameter {
                name: "n_star",
                value: n_star,
                expected: "a finite n* >= 1",
            });
        }
        Self::new(alpha, mixture_u(alpha)? / n_star)
    }

    /// The error level alpha.
    pub fn alpha(&self) -> f64 {
        self.alpha
    }

    /// The mixture precision ratio g.
    pub fn g(&self) -> f64 {
        self.g
    }

    /// The factor `c_n` with half-width `= (s/√n)·c_n`; infinite while the boundary is the whole line.
    pub fn radius_factor(&self, n: u64) -> f64 {
        if n < 2 {
            return f64::INFINITY;
        }
        self.radius_factor_at(n as f64, (n - 1) as f64)
    }

    /// The factor for `n_eff` effective observations and `nu` degrees of freedom of the
    /// spread: `n_eff = n`, `nu = n − 1` for pairs; `n_eff = mn/(m+n)`, `nu = m + n − 2` for two
    /// independent samples (the two-sample form of the same mixture, Gönen et al. 2005).
    fn radius_factor_at(&self, n_eff: f64, nu: f64) -> f64 {
        if nu < 1.0 {
            return f64::INFINITY;
        }
        let big_g = 1.0 + n_eff * self.g;
        let ln_g = big_g.ln();
        let ln_inv_alpha2 = -2.0 * self.alpha.ln();
        // Whole line while G^nu ≤ alpha^(−2); compared on the log scale to avoid overflow.
        if nu * ln_g <= ln_inv_alpha2 {
            return f64::INFINITY;
        }
        // K − 1 via expm1: K tends to 1 as n grows and a plain pow would lose the digits.
        let k_minus_1 = ((ln_g + ln_inv_alpha2) / (nu + 1.0)).exp_m1();
        let k = 1.0 + k_minus_1;
        (nu * big_g * k_minus_1 / (big_g - k)).sqrt()
    }

    /// Half-width of the confidence sequence at `n` pairs with sample sd `sd` (log scale).
    pub fn half_width(&self, sd: f64, n: u64) -> f64 {
        let factor = self.radius_factor(n);
        if factor.is_infinite() {
            f64::INFINITY
        } else {
            sd / (n as f64).sqrt() * factor
        }
    }

    /// Half-width for the difference of the means of two independent samples of `m` and `n`
    /// runs with pooled sd `sd` (log scale): recordings made at different times.
    pub fn two_sample_half_width(&self, sd: f64, m: u64, n: u64) -> f64 {
        let Some((n_eff, nu)) = two_sample_sizes(m, n) else {
            return f64::INFINITY;
        };
        let factor = self.radius_factor_at(n_eff, nu);
        if factor.is_infinite() {
            f64::INFINITY
        } else {
            sd / n_eff.sqrt() * factor
        }
    }

    /// Half-width for the difference of the means of two independent samples whose spreads
    /// may differ (Welch's form): `s_base`, `s_head` the sds of `m` and `n` log run values. The
    /// standard error `√(s_b²/m + s_h²/n)` is written as `s/√n_eff` with `n_eff = mn/(m+n)`,
    /// and the spread's degrees of freedom are Welch–Satterthwaite's; `None` with fewer than
    /// two runs on a side (no spread of its own).
    pub fn welch_half_width(&self, s_base: f64, s_head: f64, m: u64, n: u64) -> Option<f64> {
        let (sd, n_eff, nu) = welch_sizes(s_base, s_head, m, n)?;
        let factor = self.radius_factor_at(n_eff, nu);
        Some(if factor.is_infinite() {
            f64::INFINITY
        } else {
            sd / n_eff.sqrt() * factor
        })
    }

    /// The two-sample mixture Bayes factor of Welch's form (see [`Self::welch_half_width`]).
    pub fn welch_ln_bayes_factor(
        &self,
        diff: f64,
        s_base: f64,
        s_head: f64,
        m: u64,
        n: u64,
        mu0: f64,
    ) -> f64 {
        match welch_sizes(s_base, s_head, m, n) {
            Some((sd, n_eff, nu)) => self.ln_bayes_factor_at(diff - mu0, sd, n_eff, nu),
            None => 0.0,
        }
    }

    /// The (not yet intersected) interval at `n` pairs: `mean ± half_width`.
    pub fn interval(&self, mean: f64, sd: f64, n: u64) -> Interval {
        Interval::around(mean, self.half_width(sd, n))
    }

    /// Natural log of the mixture Bayes factor against `mean log-ratio = mu0` after `n` pairs.
    pub fn ln_bayes_factor(&self, mean: f64, sd: f64, n: u64, mu0: f64) -> f64 {
        if n < 2 {
            return 0.0;
        }
        self.ln_bayes_factor_at(mean - mu0, sd, n as f64, (n - 1) as f64)
    }

    /// Natural log of the two-sample mixture Bayes factor against `difference of means = mu0`,
    /// with `m` and `n` runs and pooled sd `sd`.
    pub fn two_sample_ln_bayes_factor(&self, diff: f64, sd: f64, m: u64, n: u64, mu0: f64) -> f64 {
        match two_sample_sizes(m, n) {
            Some((n_eff, nu)) => self.ln_bayes_factor_at(diff - mu0, sd, n_eff, nu),
            None => 0.0,
        }
    }

    /// `ln BF = −½ ln G + ((nu+1)/2) · ln[(1 + t²/nu) / (1 + t²/(nu·G))]`, `t = diff·√n_eff/sd`.
    fn ln_bayes_factor_at(&self, diff: f64, sd: f64, n_eff: f64, nu: f64) -> f64 {
        let big_g = 1.0 + n_eff * self.g;
        let ln_g = big_g.ln();
        // ln[(1 + x)/(1 + x/G)] with x = t²/nu; its limit for s → 0 (t → ∞) is ln G, which is
        // what a zero-spread sample that moved away from mu0 gives.
        let ln_ratio = if diff == 0.0 {
            0.0
        } else if sd == 0.0 {
            ln_g
        } else {
            let t = diff * n_eff.sqrt() / sd;
            let x = t * t / nu;
            if x.is_finite() {
                x.ln_1p() - (x / big_g).ln_1p()
            } else {
                ln_g
            }
        };
        -0.5 * ln_g + 0.5 * (nu + 1.0) * ln_ratio
    }

    /// The mixture Bayes factor (an e-value) at `mu0`; saturates at [`crate::SATURATED`].
    pub fn bayes_factor(&self, mean: f64, sd: f64, n: u64, mu0: f64) -> f64 {
        self.ln_bayes_factor(mean, sd, n, mu0)
            .exp()
            .min(crate::SATURATED)
    }
}

/// `(n_eff, nu) = (mn/(m+n), m+n−2)` of two independent samples; `None` without a degree of
/// freedom for the spread (one run on each side) or with an empty side.
fn two_sample_sizes(m: u64, n: u64) -> Option<(f64, f64)> {
    if m == 0 || n == 0 || m + n < 3 {
        return None;
    }
    let (m, n) = (m as f64, n as f64);
    Some((m * n / (m + n), m + n - 2.0))
}

/// `(sd, n_eff, nu)` of Welch's two-sample form: `sd/√n_eff` is the standard error
/// `√(s_b²/m + s_h²/n)` with `n_eff = mn/(m+n)`, and `nu` the Welch–Satterthwaite degrees of
/// freedom (Welch 1947). Equal spreads and counts give the pooled form's `sd` and `nu ≈ m+n−2`.
pub fn welch_sizes(s_base: f64, s_head: f64, m: u64, n: u64) -> Option<(f64, f64, f64)> {
    if m < 2 || n < 2 {
        return None;
    }
    let (mf, nf) = (m as f64, n as f64);
    let (vb, vh) = (s_base * s_base / mf, s_head * s_head / nf);
    let n_eff = mf * nf / (mf + nf);
    let se2 = vb + vh;
    let sd = (se2 * n_eff).sqrt();
    let nu = if se2 == 0.0 {
        mf + nf - 2.0
    } else {
        se2 * se2 / (vb * vb / (mf - 1.0) + vh * vh / (nf - 1.0))
    };
    Some((sd, n_eff, nu))
}

/// The running confidence sequence over a stream of log-ratios: the intersection of every
/// interval seen so far, and the smallest `1/BF` at the null (the anytime p-value).
#[derive(Debug, Clone)]
pub struct ConfidenceSequence {
    boundary: MixtureBoundary,
    mu0: f64,
    n: u64,
    mean: f64,
    m2: f64,
    running: Interval,
    current: Interval,
    ln_e_value: f64,
    max_ln_e_value: f64,
    crossed: bool,
}

impl ConfidenceSequence {
    /// An empty sequence testing `mean log-ratio = mu0` (0 for "no change").
    pub fn new(boundary: MixtureBoundary, mu0: f64) -> Self {
        Self {
            boundary,
            mu0,
            n: 0,
            mean: 0.0,
            m2: 0.0,
            running: Interval::WHOLE_LINE,
            current: Interval::WHOLE_LINE,
            ln_e_value: 0.0,
            max_ln_e_value: 0.0,
            crossed: false,
        }
    }

    /// Feeds every log-ratio of `d` in order.
    pub fn from_log_ratios(
        boundary: MixtureBoundary,
        mu0: f64,
        d: &[f64],
    ) -> Result<Self, StatsError> {
        let mut cs = Self::new(boundary, mu0);
        for &x in d {
            cs.push(x)?;
        }
        Ok(cs)
    }

    /// Adds one pair's log-ratio and updates the running intersection and the e-value.
    pub fn push(&mut self, d: f64) -> Result<(), StatsError> {
        if !d.is_finite() {
            return Err(StatsError::NonFinite {
                side: crate::error::SampleSide::LogRatio,
                index: self.n as usize,
                value: d,
            });
        }
        // Welford's update keeps the running mean and sum of squares exact enough at any n.
        self.n += 1;
        let delta = d - self.mean;
        self.mean += delta / self.n as f64;
        self.m2 += delta * (d - self.mean);
        if self.n < 2 {
            return Ok(());
        }
        let sd = self.sd();
        self.current = self.boundary.interval(self.mean, sd, self.n);
        let lower = self.running.lower.max(self.current.lower);
        let upper = self.running.upper.min(self.current.upper);
        self.running = if lower <= upper {
            Interval { lower, upper }
        } else {
            // Disjoint intervals happen with probability ≤ alpha under the model; they signal
            // drift or a broken model. Collapse to a point so the intersection never widens.
            self.crossed = true;
            Interval::point(0.5 * (lower + upper))
        };
        self.ln_e_value = self
            .boundary
            .ln_bayes_factor(self.mean, sd, self.n, self.mu0);
        self.max_ln_e_value = self.max_ln_e_value.max(self.ln_e_value);
        Ok(())
    }

    /// Number of pairs seen.
    pub fn n(&self) -> u64 {
        self.n
    }

    /// Mean log-ratio d̄.
    pub fn mean(&self) -> f64 {
        self.mean
    }

    /// Sample sd of the log-ratios (0 below two pairs).
    pub fn sd(&self) -> f64 {
        if self.n < 2 {
            0.0
        } else {
            (self.m2.max(0.0) / (self.n - 1) as f64).sqrt()
        }
    }

    /// The boundary this sequence uses.
    pub fn boundary(&self) -> &MixtureBoundary {
        &self.boundary
    }

    /// The running intersection over every n seen: the interval to report and gate on.
    pub fn running_interval(&self) -> Interval {
        self.running
    }

    /// The interval at the current n alone (wider than or equal to the running intersection).
    pub fn current_interval(&self) -> Interval {
        self.current
    }

    /// The Bayes factor at `mu0` after the current pair: an e-value for e-BH.
    pub fn e_value(&self) -> f64 {
        self.ln_e_value.exp().min(crate::SATURATED)
    }

    /// The anytime-valid p-value `min(1, min_k 1/BF_k)`.
    pub fn anytime_p_value(&self) -> f64 {
        (-self.max_ln_e_value).exp().min(1.0)
    }

    /// True when two intervals of the sequence were disjoint (model violation, e.g. drift).
    pub fn crossed(&self) -> bool {
        self.crossed
    }
}

/// Plans `n*` before any A/B data: the smallest n whose half-width at the A/A spread `sd_aa`
/// (with `g = u/n` tuned to that same n) reaches `target_half_width`; `None` past `cap`.
pub fn plan_n_star(
    alpha: f64,
    sd_aa: f64,
    target_half_width: f64,
    cap: u64,
) -> Result<Option<u64>, StatsError> {
    check_alpha(alpha)?;
    if !(sd_aa.is_finite() && sd_aa >= 0.0) {
        return Err(StatsError::InvalidParameter {
            name: "sd_aa",
            value: sd_aa,
            expected: "a finite sd >= 0",
        });
    }
    if !(target_half_width.is_finite() && target_half_width > 0.0) {
        return Err(StatsError::InvalidParameter {
            name: "target_half_width",
            value: target_half_width,
            expected: "a finite half-width > 0",
        });
    }
    for n in 2..=cap {
        let boundary = MixtureBoundary::tuned(alpha, n as f64)?;
        if boundary.half_width(sd_aa, n) <= target_half_width {
            return Ok(Some(n));
        }
    }
    Ok(None)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn u_of_alpha_matches_issue() {
        let u = mixture_u(0.05).unwrap();
        assert!((u - 8.211968062).abs() < 1e-8, "{u}");
        assert!(((1.0 + u).sqrt() - 3.035122413).abs() < 1e-8);
    }

    #[test]
    fn half_widths_match_issue() {
        let b = MixtureBoundary::tuned(0.05, 20.0).unwrap();
        assert!((b.half_width(0.035, 10) - 0.0465990216).abs() < 1e-9);
        assert!((b.half_width(0.035, 20) - 0.0265798758).abs() < 1e-9);
        for n in 2..=5 {
            assert!(b.half_width(0.035, n).is_infinite(), "n = {n}");
        }
        assert!(b.half_width(0.035, 6).is_finite());
    }

    #[test]
    fn bayes_factor_crosses_one_over_alpha_at_the_boundary() {
        let b = MixtureBoundary::tuned(0.05, 20.0).unwrap();
        let (sd, n) = (0.035, 12);
        let hw = b.half_width(sd, n);
        let bf = b.bayes_factor(hw, sd, n, 0.0);
        assert!((bf - 20.0).abs() < 1e-6, "{bf}");
    }

    #[test]
    fn rejects_bad_parameters() {
        assert!(mixture_u(0.0).is_err());
        assert!(mixture_u(1.0).is_err());
        assert!(MixtureBoundary::new(0.05, 0.0).is_err());
        assert!(MixtureBoundary::tuned(0.05, f64::NAN).is_err());
        assert!(plan_n_star(0.05, 0.01, 0.0, 100).is_err());
    }

    #[test]
    fn planning_reaches_target() {
        let n = plan_n_star(0.05, 0.035, 0.0266, 1000).unwrap().unwrap();
        let b = MixtureBoundary::tuned(0.05, n as f64).unwrap();
        assert!(b.half_width(0.035, n) <= 0.0266);
        let prev = MixtureBoundary::tuned(0.05, (n - 1) as f64).unwrap();
        assert!(prev.half_width(0.035, n - 1) > 0.0266);
    }
}
