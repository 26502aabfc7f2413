//! Per-process modes: runs of one benchmark that come in a typical and a slow mode (a bistable
//! machine, a layout, a hash seed or a resize that one process in six hits). A mode is drawn per
//! process, so pairing cannot cancel it: a slow run on one side of a pair and a typical one on
//! the other is a log-ratio of ±30% whatever the code did. This module finds the slow runs of
//! each side and tests whether the slow mode is more (or less) frequent on head than on base;
//! the gate then judges the typical run and the mode's frequency apart when both sides show the
//! mode (docs/statistics.md §4c).

use statrs::function::beta::{beta_reg, ln_beta};

use crate::paired::median;

/// Runs a side needs before its modes are told apart: a median and a spread from fewer runs
/// would call ordinary scatter a mode.
pub const MIN_RUNS: usize = 6;

/// A run is slow when its log value lies this many robust sds (1.4826·MAD) above its side's
/// median: a normal run gets there once in 3.5 million, a t(3) one once in 180.
pub const SLOW_SCALES: f64 = 5.0;

/// … and at least this far on the log scale (+5%): a mode a reader would call one.
pub const MIN_SLOW_EXCESS: f64 = 0.048_790_164_169_432_05;

/// Slow runs each side must show before the mode counts as shared by both (the machine's or
/// the benchmark's, not the change's). One: a normal run is slow once in millions, so one on
/// each side is a mode (or a loaded machine's spikes) both share.
pub const SHARED_MIN_SLOW: usize = 1;

/// Pairs in which both runs were typical that judging the typical run needs; with fewer, the
/// mean of every pair is judged (a t interval from fewer pairs is the whole line).
pub const MIN_TYPICAL_PAIRS: usize = 8;

/// One side's runs split into typical and slow.
#[derive(Debug, Clone, PartialEq)]
pub struct SideModes {
    /// Per run (in the order given): whether it ran in the slow mode.
    pub slow: Vec<bool>,
    /// Median log value of the side: the typical run.
    pub typical: f64,
    /// Log values above this are slow.
    pub threshold: f64,
    /// Mean excess of the slow runs over the typical run (log scale); `None` without one.
    pub excess: Option<f64>,
}

impl SideModes {
    pub fn slow_count(&self) -> usize {
        self.slow.iter().filter(|s| **s).count()
    }
}

/// Splits one side's log run values into typical and slow; `None` with fewer than
/// [`MIN_RUNS`] runs or a non-finite value.
pub fn classify(log_values: &[f64]) -> Option<SideModes> {
    if log_values.len() < MIN_RUNS || log_values.iter().any(|v| !v.is_finite()) {
        return None;
    }
    let typical = median(log_values)?;
    let deviations: Vec<f64> = log_values.iter().map(|v| (v - typical).abs()).collect();
    let scale = 1.4826 * median(&deviations)?;
    let threshold = typical + (SLOW_SCALES * scale).max(MIN_SLOW_EXCESS);
    let slow: Vec<bool> = log_values.iter().map(|v| *v > threshold).collect();
    let excesses: Vec<f64> = log_values
        .iter()
        .zip(&slow)
        .filter(|(_, s)| **s)
        .map(|(v, _)| v - typical)
        .collect();
    let excess =
        (!excesses.is_empty()).then(|| excesses.iter().sum::<f64>() / excesses.len() as f64);
    Some(SideModes {
        slow,
        typical,
        threshold,
        excess,
    })
}

/// The e-value against "the slow mode is no more frequent on head than on base" from the
/// discordant pairs: `head_only` pairs whose head run was slow and base run typical,
/// `base_only` the reverse. Given a discordant pair, head is the slow one with probability
/// `θ = p_h(1 − p_b) / (p_h(1 − p_b) + p_b(1 − p_h))`, at most 1/2 when `p_h ≤ p_b`; the
/// e-value is the likelihood of a uniform mixture over `θ ∈ [1/2, 1]` against `θ = 1/2`:
/// `2^(x+y+1)·B(x+1, y+1)·(1 − I_{1/2}(x+1, y+1))`, an e-process at every number of pairs
/// (a mixture martingale), so reading it after every round keeps its level.
pub fn more_frequent_e_value(head_only: usize, base_only: usize) -> f64 {
    let (x, y) = (head_only as f64, base_only as f64);
    let upper_mass = 1.0 - beta_reg(x + 1.0, y + 1.0, 0.5);
    let ln_e = (x + y + 1.0) * std::f64::consts::LN_2 + ln_beta(x + 1.0, y + 1.0);
    let e = ln_e.exp() * upper_mass;
    if e.is_finite() {
        e.max(0.0)
    } else {
        crate::SATURATED
    }
}

/// The mixture martingale's log at share `p` after `k` slow runs in `n`: a uniform prior's
/// marginal likelihood `B(k+1, n−k+1)` against `p^k (1−p)^(n−k)`. Every `p` whose value stays
/// below `ln(1/alpha)` is in the anytime-valid confidence set for the share (Robbins 1970).
fn ln_share_martingale(k: f64, n: f64, p: f64) -> f64 {
    let ln_like = if k > 0.0 { k * p.ln() } else { 0.0 }
        + if n - k > 0.0 {
            (n - k) * (1.0 - p).ln()
        } else {
            0.0
        };
    ln_beta(k + 1.0, n - k + 1.0) - ln_like
}

/// The anytime-valid upper bound at level `alpha` on the share of runs in the slow mode, from
/// `k` slow runs in `n`: right where a binomial count is least normal (a few rare runs), which
/// a t interval on the log-ratios is not.
pub fn share_upper(k: usize, n: usize, alpha: f64) -> f64 {
    share_bound(k, n, alpha, true)
}

/// The lower bound matching [`share_upper`].
pub fn share_lower(k: usize, n: usize, alpha: f64) -> f64 {
    share_bound(k, n, alpha, false)
}

fn share_bound(k: usize, n: usize, alpha: f64, upper: bool) -> f64 {
    if n == 0 {
        return if upper { 1.0 } else { 0.0 };
    }
    let (kf, nf) = (k as f64, n as f64);
    let level = (1.0 / alpha).ln();
    let inside = |p: f64| ln_share_martingale(kf, nf, p) < level;
    let (mut lo, mut hi) = if upper {
        (kf / nf, 1.0)
    } else {
        (0.0, kf / nf)
    };
    if upper && inside(1.0 - 1e-12) {
        return 1.0;
    }
    if !upper && (k == 0 || inside(1e-12)) {
        return 0.0;
    }
    for _ in 0..60 {
        let mid = 0.5 * (lo + hi);
        // The set is an interval around k/n: inside moves towards the estimate.
        if inside(mid) == upper {
            lo = mid;
        } else {
            hi = mid;
        }
    }
    0.5 * (lo + hi)
}

/// Both sides' modes for one benchmark's pairs (round order).
#[derive(Debug, Clone, PartialEq)]
pub struct PairedModes {
    pub base: SideModes,
    pub head: SideModes,
    /// Pairs with the head run slow and the base run typical.
    pub head_only: usize,
    /// Pairs with the base run slow and the head run typical.
    pub base_only: usize,
    /// Median excess of the slow runs over their side's typical run (log scale), both sides
    /// pooled; `None` without a slow run.
    pub excess: Option<f64>,
}

impl PairedModes {
    /// Pairs in which both runs were typical.
    pub fn typical_pairs(&self) -> Vec<bool> {
        self.base
            .slow
            .iter()
            .zip(&self.head.slow)
            .map(|(b, h)| !b && !h)
            .collect()
    }

    /// Whether both sides show the slow mode (at least [`SHARED_MIN_SLOW`] runs each): the
    /// mode is the machine's or the benchmark's, and the gate judges the typical run and the
    /// mode's frequency apart.
    pub fn shared(&self) -> bool {
        self.base.slow_count() >= SHARED_MIN_SLOW && self.head.slow_count() >= SHARED_MIN_SLOW
    }

    /// Whether any run of either side was slow.
    pub fn any(&self) -> bool {
        self.base.slow_count() + self.head.slow_count() > 0
    }

    /// An anytime-valid upper bound at `alpha` on how far the slow runs move the mean change,
    /// `p_h·Δ_h − p_b·Δ_b` (log scale, worse side): head's share at its upper bound, base's at
    /// its lower, each mode at the excess its runs showed; `0.0` at the least.
    pub fn mean_shift_upper(&self, alpha: f64) -> f64 {
        self.mean_shift_upper_after(alpha, 1.0)
    }

    /// [`PairedModes::mean_shift_upper`] after `scale` times the runs, the slow runs keeping
    /// their shares: how the room for a pass grows with more rounds.
    pub fn mean_shift_upper_after(&self, alpha: f64, scale: f64) -> f64 {
        let grow = |k: usize| (k as f64 * scale).round() as usize;
        let n = grow(self.head.slow.len());
        let head = share_upper(grow(self.head.slow_count()), n, alpha / 2.0)
            * self.head.excess.unwrap_or(0.0);
        let base = share_lower(grow(self.base.slow_count()), n, alpha / 2.0)
            * self.base.excess.unwrap_or(0.0);
        (head - base).max(0.0)
    }

    /// e-value for "the slow mode is more frequent on head" (see [`more_frequent_e_value`]).
    pub fn e_more_on_head(&self) -> f64 {
        more_frequent_e_value(self.head_only, self.base_only)
    }

    /// e-value for "the slow mode is less frequent on head".
    pub fn e_less_on_head(&self) -> f64 {
        more_frequent_e_value(self.base_only, self.head_only)
    }
}

/// Classifies both sides' log run values (equal lengths, round order); `None` with fewer than
/// [`MIN_RUNS`] pairs.
pub fn paired_modes(base_log: &[f64], head_log: &[f64]) -> Option<PairedModes> {
    if base_log.len() != head_log.len() {
        return None;
    }
    let base = classify(base_log)?;
    let head = classify(head_log)?;
    let mut head_only = 0;
    let mut base_only = 0;
    for (b, h) in base.slow.iter().zip(&head.slow) {
        match (b, h) {
            (false, true) => head_only += 1,
            (true, false) => base_only += 1,
            _ => {}
        }
    }
    let excesses: Vec<f64> = base_log
        .iter()
        .zip(&base.slow)
        .filter(|(_, s)| **s)
        .map(|(v, _)| v - base.typical)
        .chain(
            head_log
                .iter()
                .zip(&head.slow)
                .filter(|(_, s)| **s)
                .map(|(v, _)| v - head.typical),
        )
        .collect();
    Some(PairedModes {
        excess: median(&excesses),
        base,
        head,
        head_only,
        base_only,
    })
}

/// The tail guard (`[gate] rare_slow_runs`): a pass needs enough head runs that a slow mode the
/// pass could not afford would have shown. A mode in a share `p` of head's runs, `Δ` slower on
/// the log scale, moves the mean by `p·Δ`; with `allowance` the room left between the bound the
/// interval shows and the limit of the pass, the modes that matter have `p ≥ allowance/Δ`.
/// Covering every mode of at least `min_share` of the runs and at most [`GUARD_MAX_EXCESS`]
/// slower, the rarest that matters is `p* = max(min_share, allowance/Δmax)`, and `n` runs miss
/// it with probability `(1 − p*)^n`: the guard asks for the smallest `n` that makes this at most
/// `alpha`. A large change therefore needs few runs (20% faster: 11; 3× faster: 1), a pass near
/// the limit the most (`min_share` 1 in 20: 59).
pub fn guard_runs(min_share: f64, allowance: f64, alpha: f64) -> u64 {
    if !(min_share > 0.0 && min_share < 1.0 && alpha > 0.0 && alpha < 1.0) {
        return 0;
    }
    if allowance.is_nan() || allowance <= 0.0 {
        return u64::MAX;
    }
    let p = min_share.max(allowance / GUARD_MAX_EXCESS).min(1.0);
    if p >= 1.0 {
        return 1;
    }
    (alpha.ln() / (1.0 - p).ln()).ceil().max(1.0) as u64
}

/// The largest slow mode the guard covers: runs 3× slower than the typical run (log scale).
/// Per-process modes seen on real machines are +15–40% (a bistable machine) to ×2.5 (a resize
/// or a collection some processes hit); a mode beyond ×3 in a share the guard covers would
/// show as a change of the mean long before.
pub const GUARD_MAX_EXCESS: f64 = 1.098_612_288_668_109_8;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_run_far_above_its_side_is_slow_and_ordinary_scatter_is_not() {
        let mut v: Vec<f64> = (0..12).map(|i| 0.01 * ((i % 5) as f64 - 2.0)).collect();
        v[3] = 0.262; // +30%
        v[9] = 0.30;
        let m = classify(&v).unwrap();
        assert_eq!(m.slow_count(), 2);
        assert!(m.slow[3] && m.slow[9]);
        // Ordinary normal-looking scatter: nothing is slow.
        let calm: Vec<f64> = (0..12)
            .map(|i| 0.02 * ((i * 7 % 11) as f64 - 5.0) / 5.0)
            .collect();
        assert_eq!(classify(&calm).unwrap().slow_count(), 0);
        // Too few runs to tell.
        assert!(classify(&v[..5]).is_none());
    }

    #[test]
    fn the_frequency_e_value_grows_only_with_head_only_slow_runs() {
        // No discordant pair: no evidence either way.
        assert!((more_frequent_e_value(0, 0) - 1.0).abs() < 1e-12);
        // 6 of 6 discordant pairs slow on head: 2^7·B(7,1)·(1 − 2^-7) = 128/7·(127/128).
        assert!((more_frequent_e_value(6, 0) - 127.0 / 7.0).abs() < 1e-9);
        // Balanced discordance is evidence against, not for.
        assert!(more_frequent_e_value(5, 5) < 1.0);
        assert!((more_frequent_e_value(0, 6) - 1.0 / 7.0).abs() < 1e-9);
    }

    #[test]
    fn share_bounds_hold_the_estimate_and_narrow_with_runs() {
        let (lo, hi) = (share_lower(3, 60, 0.05), share_upper(3, 60, 0.05));
        assert!(lo < 0.05 && 0.05 < hi && hi < 0.25, "[{lo}, {hi}]");
        assert_eq!(share_lower(0, 60, 0.05), 0.0);
        // No slow run in 60: the uniform mixture pays ln(61) for not knowing the share: ~11%.
        let none = share_upper(0, 60, 0.05);
        assert!((0.08..0.13).contains(&none), "{none}");
        assert!(share_upper(0, 600, 0.05) < none / 5.0);
    }

    #[test]
    fn the_guard_asks_for_more_runs_the_closer_the_pass() {
        let alpha = 0.05;
        // Near the limit: the 1-in-20 share decides, 0.95^59 < 0.05 ≤ 0.95^58.
        assert_eq!(guard_runs(0.05, 0.03, alpha), 59);
        // 20% faster with a 5% tolerance: only a mode in ≥ 25% of runs could undo it.
        let faster = (1.05f64).ln() - 0.8f64.ln();
        assert_eq!(guard_runs(0.05, faster, alpha), 11);
        // Three times faster: no mode the guard covers could.
        assert_eq!(guard_runs(0.05, (1.05f64).ln() + 3f64.ln(), alpha), 1);
        // No room left: no pass.
        assert_eq!(guard_runs(0.05, 0.0, alpha), u64::MAX);
        // Off.
        assert_eq!(guard_runs(0.0, 0.03, alpha), 0);
    }
}
