//! One verdict from several runners of one hardware class, stratified by runner: every pair
//! stays within its machine, each runner's series keeps its own spread (its own t-mixture
//! Bayes factor, scale-free), and the evidence is the product of the runners' Bayes factors.
//! Independent runners' test martingales multiply into one, so the product is an e-process
//! for "no change" and its level set is a confidence sequence for the common change, valid
//! however the runners' spreads differ. k runners reach a verdict about k times sooner in
//! rounds per runner (docs/statistics.md, "Several runners").

use crate::analysis::{AnalysisOptions, BenchmarkAnalysis, RoundOrder, analyze_pairs};
use crate::confidence_sequence::MixtureBoundary;
use crate::drift::drift_regression;
use crate::error::StatsError;
use crate::floor::{NoiseFloor, practical_margin};
use crate::interval::Interval;
use crate::paired::{has_zero_spread, paired_log_ratios};
use crate::verdict::{DecisionRule, Progress, Verdict, verdict};

/// One runner's paired samples of a benchmark and metric, with its order and floor.
#[derive(Debug, Clone)]
pub struct Stratum<'a> {
    pub base: &'a [f64],
    pub head: &'a [f64],
    /// Per pair: base ran first.
    pub base_first: &'a [bool],
    pub floor: Option<&'a NoiseFloor>,
}

/// What [`analyze_strata_with`] kept of a series' last analysis: each runner's log-ratios and
/// the running interval after every look. Rounds only ever append, so the next analysis
/// recomputes only the looks a new pair changed: the same numbers, without the per-look root
/// finding over every earlier look (the most costly part of analysing several runners).
#[derive(Debug, Clone, Default)]
pub struct StrataMemo {
    /// The boundary's tuning and the runners' count the looks were computed with.
    key: Option<(usize, u64, u64)>,
    log_ratios: Vec<Vec<f64>>,
    /// The fold after looks 2, 3, …
    looks: Vec<LookFold>,
}

/// The running interval and evidence after one look.
#[derive(Debug, Clone, Copy)]
struct LookFold {
    running: Interval,
    current: Interval,
    crossed: bool,
    max_ln_e: f64,
}

impl StrataMemo {
    /// Whether it holds nothing (a series of one runner is never memoised).
    pub fn is_empty(&self) -> bool {
        self.looks.is_empty() && self.log_ratios.is_empty()
    }

    /// Bytes it holds, about: a look's fold and every runner's log-ratios.
    pub fn bytes(&self) -> usize {
        self.looks.len() * std::mem::size_of::<LookFold>()
            + self.log_ratios.iter().map(Vec::len).sum::<usize>() * std::mem::size_of::<f64>()
    }

    /// The first look whose runners' prefixes differ from what was kept (2 when nothing can be
    /// reused), forgetting the looks from there on.
    fn reuse(&mut self, key: (usize, u64, u64), log_ratios: &[Vec<f64>]) -> usize {
        let unchanged = |kept: &[f64], now: &[f64]| {
            kept.len() <= now.len()
                && kept
                    .iter()
                    .zip(now)
                    .all(|(a, b)| a.to_bits() == b.to_bits())
        };
        let first = if self.key != Some(key)
            || self.log_ratios.len() != log_ratios.len()
            || !self
                .log_ratios
                .iter()
                .zip(log_ratios)
                .all(|(k, d)| unchanged(k, d))
        {
            2
        } else {
            // A runner with a new pair changes every look past its old length.
            self.log_ratios
                .iter()
                .zip(log_ratios)
                .filter(|(k, d)| d.len() > k.len())
                .map(|(k, _)| k.len() + 1)
                .min()
                .unwrap_or(usize::MAX)
                .max(2)
        };
        self.looks
            .truncate(first.saturating_sub(2).min(self.looks.len()));
        self.key = Some(key);
        self.log_ratios = log_ratios.to_vec();
        2 + self.looks.len()
    }
}

/// Running mean and sd of one runner's log-ratios at any prefix length.
struct Prefix {
    sum: Vec<f64>,
    sum_sq: Vec<f64>,
}

impl Prefix {
    fn new(d: &[f64]) -> Self {
        let (mut sum, mut sum_sq) = (vec![0.0], vec![0.0]);
        for &x in d {
            sum.push(sum.last().unwrap() + x);
            sum_sq.push(sum_sq.last().unwrap() + x * x);
        }
        Prefix { sum, sum_sq }
    }

    fn len(&self) -> usize {
        self.sum.len() - 1
    }

    /// (n, mean, sd) of the first `n` log-ratios (all of them when fewer).
    fn at(&self, n: usize) -> (u64, f64, f64) {
        let n = n.min(self.len());
        if n == 0 {
            return (0, 0.0, 0.0);
        }
        let nf = n as f64;
        let mean = self.sum[n] / nf;
        let var = if n < 2 {
            0.0
        } else {
            ((self.sum_sq[n] - nf * mean * mean) / (nf - 1.0)).max(0.0)
        };
        (n as u64, mean, var.sqrt())
    }
}

/// Every runner's (n, mean, sd) after `look` pairs per runner (all of its pairs when fewer).
fn at_look(strata: &[Prefix], look: usize) -> Vec<(u64, f64, f64)> {
    strata.iter().map(|p| p.at(look)).collect()
}

/// The summed log Bayes factors of every runner at `mu`.
fn ln_evidence(boundary: &MixtureBoundary, runners: &[(u64, f64, f64)], mu: f64) -> f64 {
    runners
        .iter()
        .map(|&(n, mean, sd)| boundary.ln_bayes_factor(mean, sd, n, mu))
        .sum()
}

/// The hull of `{mu : ln_evidence(mu) < threshold}` at one look; `None` when it is empty (the
/// runners contradict each other). Every runner's term grows as `mu` leaves its mean, so past
/// the outermost runner means the evidence only grows: the set's hull is found by walking out
/// from a point inside, and, when an edge falls between the means, by checking the rest of
/// that span for another piece.
fn level_set(
    boundary: &MixtureBoundary,
    runners: &[(u64, f64, f64)],
    threshold: f64,
) -> Option<Interval> {
    let means: Vec<(u64, f64, f64)> = runners
        .iter()
        .copied()
        .filter(|&(n, _, _)| n >= 2)
        .collect();
    if means.is_empty() {
        return Some(Interval::WHOLE_LINE);
    }
    let inside = |mu: f64| ln_evidence(boundary, &means, mu) < threshold;
    let lo_mean = means.iter().map(|m| m.1).fold(f64::INFINITY, f64::min);
    let hi_mean = means.iter().map(|m| m.1).fold(f64::NEG_INFINITY, f64::max);
    let step = means
        .iter()
        .map(|&(n, _, sd)| sd / (n as f64).sqrt())
        .fold(0.0, f64::max)
        .max(1e-12);
    let total: u64 = means.iter().map(|m| m.0).sum();
    let pooled = means.iter().map(|&(n, m, _)| n as f64 * m).sum::<f64>() / total as f64;
    const GRID: usize = 256;
    let grid = |i: usize| lo_mean + (hi_mean - lo_mean) * i as f64 / GRID as f64;
    let start = if inside(pooled) {
        pooled
    } else {
        (0..=GRID).map(grid).find(|&mu| inside(mu))?
    };
    let mut lower = edge(&inside, start, -step);
    if lower > lo_mean
        && let Some(p) = (0..=GRID)
            .map(grid)
            .take_while(|&mu| mu < lower)
            .find(|&mu| inside(mu))
    {
        lower = edge(&inside, p, -step);
    }
    let mut upper = edge(&inside, start, step);
    if upper < hi_mean
        && let Some(p) = (0..=GRID)
            .rev()
            .map(grid)
            .take_while(|&mu| mu > upper)
            .find(|&mu| inside(mu))
    {
        upper = edge(&inside, p, step);
    }
    Some(Interval { lower, upper })
}

/// Where the set ends, walking from `from` (inside) in steps of `step` that double, then
/// bisecting; infinite when it never ends (too few pairs for any bound).
fn edge(inside: &impl Fn(f64) -> bool, from: f64, step: f64) -> f64 {
    let (mut inner, mut width) = (from, step);
    let mut outer = from + width;
    while inside(outer) {
        inner = outer;
        width *= 2.0;
        outer = from + width;
        // A log-ratio of 50 is a factor e^50: a set still open there has no bound yet, and
        // calling it the whole line only widens it.
        if width.abs() > 50.0 || !outer.is_finite() {
            return if step > 0.0 {
                f64::INFINITY
            } else {
                f64::NEG_INFINITY
            };
        }
    }
    // Down to a millionth of a step: far below anything a timing resolves.
    let tolerance = step.abs() * 1e-6;
    while (outer - inner).abs() > tolerance {
        let mid = 0.5 * (inner + outer);
        if mid == inner || mid == outer {
            break;
        }
        if inside(mid) {
            inner = mid;
        } else {
            outer = mid;
        }
    }
    // The outer point: the set is open, so this keeps every point of it inside.
    outer
}

/// Analyses one benchmark and metric measured on several runners of one hardware class. The
/// interval, e-value, verdict and margin are stratified (see the module); the centres and the
/// diagnostics (fixed-n interval, Hodges–Lehmann, outliers) pool every runner's pairs, and the
/// drift regression is the one of the runner with the most pairs, since a drift is a property
/// of one machine's session. `n` is the total number of pairs. Each runner's boundary is tuned
/// for `n*` divided among the runners, the rounds each of them is expected to contribute; the
/// margin is the widest of the runners' margins. A single stratum is [`analyze_pairs`].
pub fn analyze_strata(
    strata: &[Stratum<'_>],
    opts: &AnalysisOptions,
) -> Result<BenchmarkAnalysis, StatsError> {
    analyze_strata_with(strata, opts, &mut StrataMemo::default())
}

/// [`analyze_strata`], reusing what `memo` kept of the series' previous analysis and keeping
/// this one's in it: the result is the same, number for number.
pub fn analyze_strata_with(
    strata: &[Stratum<'_>],
    opts: &AnalysisOptions,
    memo: &mut StrataMemo,
) -> Result<BenchmarkAnalysis, StatsError> {
    if let [one] = strata {
        let opts = AnalysisOptions {
            order: RoundOrder::BaseFirst(one.base_first.to_vec()),
            ..opts.clone()
        };
        return analyze_pairs(one.base, one.head, &opts, one.floor);
    }
    let base: Vec<f64> = strata.iter().flat_map(|s| s.base.iter().copied()).collect();
    let head: Vec<f64> = strata.iter().flat_map(|s| s.head.iter().copied()).collect();
    let order: Vec<bool> = strata
        .iter()
        .flat_map(|s| s.base_first.iter().copied())
        .collect();
    let widest_floor = strata.iter().filter_map(|s| s.floor).max_by(|a, b| {
        a.margin(opts.min_effect.ln_1p())
            .total_cmp(&b.margin(opts.min_effect.ln_1p()))
    });
    let pooled_opts = AnalysisOptions {
        order: RoundOrder::BaseFirst(order),
        ..opts.clone()
    };
    let mut analysis = analyze_pairs(&base, &head, &pooled_opts, widest_floor)?;
    if matches!(analysis.verdict, Verdict::Exact) {
        // A deterministic metric: every pair of every runner says the same.
        return Ok(analysis);
    }
    let log_ratios: Vec<Vec<f64>> = strata
        .iter()
        .map(|s| paired_log_ratios(s.base, s.head))
        .collect::<Result<_, _>>()?;
    let prefixes: Vec<Prefix> = log_ratios.iter().map(|d| Prefix::new(d)).collect();
    let k = strata.len() as f64;
    let boundary = MixtureBoundary::tuned(opts.alpha, (opts.n_star / k).max(2.0))?;
    let threshold = -opts.alpha.ln();
    let longest = prefixes.iter().map(Prefix::len).max().unwrap_or(0);
    let key = (strata.len(), opts.alpha.to_bits(), opts.n_star.to_bits());
    let first = memo.reuse(key, &log_ratios);
    let (mut running, mut current, mut crossed, mut max_ln_e) = match memo.looks.last() {
        Some(f) => (f.running, f.current, f.crossed, f.max_ln_e),
        None => (Interval::WHOLE_LINE, Interval::WHOLE_LINE, false, 0.0_f64),
    };
    for look in first..=longest {
        let runners = at_look(&prefixes, look);
        max_ln_e = max_ln_e.max(ln_evidence(&boundary, &runners, 0.0));
        match level_set(&boundary, &runners, threshold) {
            Some(set) => {
                current = set;
                let lower = running.lower.max(set.lower);
                let upper = running.upper.min(set.upper);
                if lower <= upper {
                    running = Interval { lower, upper };
                } else {
                    crossed = true;
                    running = Interval::point(0.5 * (lower + upper));
                }
            }
            None => crossed = true,
        }
        memo.looks.push(LookFold {
            running,
            current,
            crossed,
            max_ln_e,
        });
    }
    let mean = analysis.mean_log;
    let contradicted = crossed || !running.contains(mean);
    let interval = if crossed {
        current
    } else if contradicted {
        Interval {
            lower: running.lower.min(mean),
            upper: running.upper.max(mean),
        }
    } else {
        running
    };
    let margin = strata
        .iter()
        .map(|s| practical_margin(opts.min_effect.ln_1p(), s.floor))
        .fold(0.0, f64::max);
    let layout = strata
        .iter()
        .map(|s| crate::floor::layout_band(s.floor))
        .fold(0.0, f64::max);
    let progress = Progress {
        mean,
        sd: analysis.sd_log,
        n: analysis.n as u64,
    };
    let single = MixtureBoundary::tuned(opts.alpha, opts.n_star)?;
    let rule = DecisionRule {
        margin,
        layout,
        tolerance: opts.tolerance.map(f64::ln_1p),
        direction: opts.direction,
    };
    analysis.verdict = match verdict(interval, &single, progress, &rule, opts.rounds_cap) {
        // Rounds are added to every runner at once: each needs its share.
        Verdict::NoResultYet { rounds_needed } => Verdict::NoResultYet {
            rounds_needed: rounds_needed.div_ceil(strata.len() as u64).max(1),
        },
        other => other,
    };
    analysis.interval = interval;
    analysis.current_interval = current;
    analysis.margin = margin;
    analysis.layout = layout;
    analysis.e_value = ln_evidence(&boundary, &at_look(&prefixes, longest), 0.0)
        .exp()
        .min(crate::SATURATED);
    analysis.anytime_p_value = (-max_ln_e).exp().min(1.0);
    analysis.sequence_crossed = crossed;
    analysis.contradicted = contradicted;
    analysis.boundary = boundary;
    // The drift fit of that runner alone, as its own analysis would report it.
    analysis.drift = strata
        .iter()
        .zip(&log_ratios)
        .max_by_key(|(s, _)| s.base.len())
        .filter(|(s, d)| {
            d.len() >= 2
                && s.base_first.len() == d.len()
                && !(has_zero_spread(s.base) && has_zero_spread(s.head))
        })
        .and_then(|(s, d)| drift_regression(d, s.base_first, opts.alpha).ok().flatten());
    Ok(analysis)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Deterministic noise: a fixed pseudo-random walk, so tests never flake.
    fn noisy(n: usize, seed: u64, effect: f64, spread: f64) -> (Vec<f64>, Vec<f64>, Vec<bool>) {
        let mut x = seed;
        let mut next = || {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            (x >> 11) as f64 / (1u64 << 53) as f64 - 0.5
        };
        let base: Vec<f64> = (0..n).map(|_| 100.0 * (spread * next()).exp()).collect();
        let head: Vec<f64> = base
            .iter()
            .map(|b| b * (effect + spread * next()).exp())
            .collect();
        (base, head, (0..n).map(|i| i % 2 == 0).collect())
    }

    fn strata<'a>(series: &'a [(Vec<f64>, Vec<f64>, Vec<bool>)]) -> Vec<Stratum<'a>> {
        series
            .iter()
            .map(|(b, h, o)| Stratum {
                base: b,
                head: h,
                base_first: o,
                floor: None,
            })
            .collect()
    }

    #[test]
    fn a_kept_memo_gives_the_same_analysis_as_starting_over() {
        let effect = 1.03f64.ln();
        let full = [
            noisy(30, 3, effect, 0.05),
            noisy(30, 5, effect, 0.08),
            noisy(30, 9, effect, 0.05),
        ];
        let opts = AnalysisOptions::default();
        let mut memo = StrataMemo::default();
        // Runners upload out of step: lengths grow one pair at a time in an uneven order.
        let mut lengths = [0usize; 3];
        let order = [0, 0, 1, 2, 0, 2, 2, 1, 1, 0];
        for step in 0..60 {
            let r = order[step % order.len()];
            lengths[r] = (lengths[r] + 1).min(30);
            if lengths.iter().any(|&n| n < 2) {
                continue;
            }
            let series: Vec<(Vec<f64>, Vec<f64>, Vec<bool>)> = full
                .iter()
                .zip(lengths)
                .map(|((b, h, o), n)| (b[..n].to_vec(), h[..n].to_vec(), o[..n].to_vec()))
                .collect();
            let kept = analyze_strata_with(&strata(&series), &opts, &mut memo).unwrap();
            let fresh = analyze_strata(&strata(&series), &opts).unwrap();
            assert_eq!(kept, fresh, "lengths {lengths:?}");
        }
        // A resent round with another value: every look from it on is recomputed.
        let mut series: Vec<(Vec<f64>, Vec<f64>, Vec<bool>)> = full.to_vec();
        series[1].1[4] *= 1.5;
        let kept = analyze_strata_with(&strata(&series), &opts, &mut memo).unwrap();
        assert_eq!(kept, analyze_strata(&strata(&series), &opts).unwrap());
        // Another tuning is another boundary: nothing kept applies.
        let opts = AnalysisOptions {
            n_star: 40.0,
            ..opts
        };
        let kept = analyze_strata_with(&strata(&series), &opts, &mut memo).unwrap();
        assert_eq!(kept, analyze_strata(&strata(&series), &opts).unwrap());
        // The drift is that of the runner with the most pairs, as its own analysis has it.
        let (b, h, o) = &series[2];
        let alone = AnalysisOptions {
            order: RoundOrder::BaseFirst(o.clone()),
            ..opts.clone()
        };
        assert_eq!(kept.drift, analyze_pairs(b, h, &alone, None).unwrap().drift);
        assert!(kept.drift.is_some());
    }

    #[test]
    fn two_runners_decide_a_change_one_runner_alone_cannot_yet() {
        let effect = 1.04f64.ln();
        let series = [noisy(7, 7, effect, 0.14), noisy(7, 11, effect, 0.14)];
        let opts = AnalysisOptions::default();
        let one = analyze_strata(&strata(&series[..1]), &opts).unwrap();
        let both = analyze_strata(&strata(&series), &opts).unwrap();
        assert_eq!(both.n, 14);
        assert!(
            both.interval.lower > 0.0,
            "two runners: {:?}",
            both.interval
        );
        assert!(
            one.interval.lower <= 0.0,
            "one runner of 7 pairs: {:?}",
            one.interval
        );
        assert!(both.interval.contains(effect), "{:?}", both.interval);
        assert!(matches!(both.verdict, Verdict::Slower { .. }));
    }

    #[test]
    fn a_noisier_runner_widens_nothing_it_cannot_know() {
        // The quiet runner decides; the noisy one (5x the spread) barely moves the product.
        let effect = 1.04f64.ln();
        let series = [noisy(12, 3, effect, 0.06), noisy(12, 5, effect, 0.30)];
        let opts = AnalysisOptions::default();
        let both = analyze_strata(&strata(&series), &opts).unwrap();
        assert!(both.interval.lower > 0.0, "{:?}", both.interval);
        assert!(both.interval.upper < 0.2, "{:?}", both.interval);
    }

    #[test]
    fn no_change_stays_undecided_and_the_interval_holds_zero() {
        let series = [noisy(6, 1, 0.0, 0.05), noisy(6, 2, 0.0, 0.05)];
        let a = analyze_strata(&strata(&series), &AnalysisOptions::default()).unwrap();
        assert!(a.interval.contains(0.0), "{:?}", a.interval);
        assert!(a.e_value < 20.0);
        assert!(!matches!(
            a.verdict,
            Verdict::Slower { .. } | Verdict::Faster { .. }
        ));
    }

    #[test]
    fn one_stratum_is_the_single_runner_analysis() {
        let series = [noisy(20, 9, 0.03, 0.04)];
        let opts = AnalysisOptions::default();
        let s = analyze_strata(&strata(&series), &opts).unwrap();
        let (b, h, o) = &series[0];
        let single = analyze_pairs(
            b,
            h,
            &AnalysisOptions {
                order: RoundOrder::BaseFirst(o.clone()),
                ..opts
            },
            None,
        )
        .unwrap();
        assert_eq!(s, single);
    }

    #[test]
    fn an_exact_metric_stays_exact() {
        let base = vec![100.0; 4];
        let head = vec![110.0; 4];
        let order = vec![true, false, true, false];
        let s = [
            Stratum {
                base: &base,
                head: &head,
                base_first: &order,
                floor: None,
            },
            Stratum {
                base: &base,
                head: &head,
                base_first: &order,
                floor: None,
            },
        ];
        let a = analyze_strata(&s, &AnalysisOptions::default()).unwrap();
        assert!(matches!(a.verdict, Verdict::Exact));
    }
}
