//! Calibration simulation for docs/statistics.md: how often the engine claims a change when
//! there is none (A/A), however often one looks, beside a naive repeated t interval; and how
//! soon it detects a real 4% change at 2.5% spread per run; how the interval holds up when
//! head's spread is twice base's and under drift, and how several runners combined
//! (stratified, docs/statistics.md "Several runners") decide sooner; and how far below the
//! engine's rounds a test can go that stays valid whatever the spread, using the A/A spread
//! only as tuning (section 8, "What the A/A history could buy").
//!
//! `cargo run --release -p benchgate-stats --example calibration [-- RUNS SEED]`

use benchgate_stats::fixed_interval::t_quantile;
use benchgate_stats::{ChainStep, ConfidenceSequence, MixtureBoundary, chain};
use std::time::Instant;

#[path = "common/rng.rs"]
mod rng;
use rng::Xoshiro256;

const ALPHA: f64 = 0.05;
const N_STAR: f64 = 20.0;
/// Spread of one run on the log scale (2.5%); a pair's log-ratio has √2 times that.
const RUN_SPREAD: f64 = 0.025;
const MAX_PAIRS: usize = 200;
const SPARSE_LOOKS: [usize; 5] = [10, 20, 30, 40, 50];
const POWER_LOOKS: [usize; 3] = [10, 20, 30];

/// The naive fixed-n t interval recomputed after each pair, from running sums.
struct NaiveT {
    n: usize,
    sum: f64,
    sum_sq: f64,
}

impl NaiveT {
    fn push(&mut self, d: f64) {
        self.n += 1;
        self.sum += d;
        self.sum_sq += d * d;
    }

    fn excludes_zero(&self, quantiles: &[f64]) -> bool {
        let n = self.n as f64;
        let mean = self.sum / n;
        let var = ((self.sum_sq - n * mean * mean) / (n - 1.0)).max(0.0);
        mean.abs() > quantiles[self.n] * (var / n).sqrt()
    }
}

/// One runner's running sums of log-ratios, for its t-mixture Bayes factor at 0.
#[derive(Clone, Copy, Default)]
struct Runner {
    n: u64,
    sum: f64,
    sum_sq: f64,
}

impl Runner {
    fn push(&mut self, d: f64) {
        self.n += 1;
        self.sum += d;
        self.sum_sq += d * d;
    }

    fn ln_bf(&self, boundary: &MixtureBoundary) -> f64 {
        if self.n < 2 {
            return 0.0;
        }
        let n = self.n as f64;
        let mean = self.sum / n;
        let sd = ((self.sum_sq - n * mean * mean) / (n - 1.0))
            .max(0.0)
            .sqrt();
        boundary.ln_bayes_factor(mean, sd, self.n, 0.0)
    }
}

/// How each runner's pairs are made in a scenario.
#[derive(Clone, Copy)]
struct Machine {
    /// Head's spread per run as a multiple of base's.
    head_spread: f64,
    /// Slow-down per run (log scale): with ABBA the side that runs second in a round is that
    /// much slower, so pairs alternate ±drift.
    drift: f64,
}

const QUIET: Machine = Machine {
    head_spread: 1.0,
    drift: 0.0,
};

/// Rounds per runner until the stratified product of the runners' Bayes factors reaches
/// 1/alpha (the interval excludes 0), looking after every round; `None` within `max` rounds.
fn stratified_first_claim(
    rng: &mut Xoshiro256,
    machines: &[Machine],
    effect: f64,
    boundary: &MixtureBoundary,
    max: usize,
) -> Option<usize> {
    let mut runners = vec![Runner::default(); machines.len()];
    let threshold = -ALPHA.ln();
    for round in 1..=max {
        for (runner, m) in runners.iter_mut().zip(machines) {
            let base = RUN_SPREAD * rng.normal();
            let head = effect + m.head_spread * RUN_SPREAD * rng.normal();
            let position = if round % 2 == 1 { m.drift } else { -m.drift };
            runner.push(head - base + position);
        }
        let ln_e: f64 = runners.iter().map(|r| r.ln_bf(boundary)).sum();
        if ln_e >= threshold {
            return Some(round);
        }
    }
    None
}

/// What trusting the runner's A/A spread would buy: the normal-mixture test with the pair
/// spread taken as known (`sigma`, from A/A), mixture precision tuned for `N_STAR`. Pairs until
/// it claims a change, looking after every pair; `None` within `max`. Not used by the engine:
/// it is valid only while head's spread equals what A/A measured.
fn known_spread_first_claim(
    rng: &mut Xoshiro256,
    machine: Machine,
    effect: f64,
    sigma: f64,
    max: usize,
) -> Option<usize> {
    let rho = benchgate_stats::mixture_u(ALPHA).unwrap() / N_STAR;
    let threshold = -ALPHA.ln();
    let mut sum = 0.0;
    for n in 1..=max {
        let base = RUN_SPREAD * rng.normal();
        let head = effect + machine.head_spread * RUN_SPREAD * rng.normal();
        sum += head - base;
        let nf = n as f64;
        let ln_m =
            -0.5 * (nf * rho).ln_1p() + rho * sum * sum / (2.0 * sigma * sigma * (1.0 + nf * rho));
        if ln_m >= threshold {
            return Some(n);
        }
    }
    None
}

/// An e-process for "the mean log-ratio is 0" that holds whatever the pairs' spread, and uses
/// the A/A spread `sigma` only as tuning. Component δ is the likelihood ratio of N(δ, σ²)
/// against N(0, σ² + δ²), the null nearest to it; under N(0, s²) its expectation is at most 1
/// for every s (the maximum, exactly 1, is at s² = σ² + δ²), so each component, and any fixed
/// mixture of them, is a test supermartingale for every spread, even one that changes per pair.
struct ScaleFree {
    /// Per component: ln L = a·Σd² + b·Σd + n·c, and its log weight.
    components: Vec<[f64; 4]>,
}

impl ScaleFree {
    /// Weights at the given `(δ, w)`; the weights sum to 1.
    fn new(sigma: f64, deltas: &[(f64, f64)]) -> Self {
        let total: f64 = deltas.iter().map(|(_, w)| w).sum();
        let s2 = sigma * sigma;
        let components = deltas
            .iter()
            .map(|&(delta, w)| {
                let a = 0.5 / (s2 + delta * delta) - 0.5 / s2;
                let b = delta / s2;
                let c = -delta * delta / (2.0 * s2) + 0.5 * (delta * delta / s2).ln_1p();
                [a, b, c, (w / total).ln()]
            })
            .collect();
        Self { components }
    }

    /// δ ~ N(0, (τσ)²), on 32 points of ±4 prior sd (δ = 0 is left out: it never bets).
    fn normal_prior(sigma: f64, tau: f64) -> Self {
        let deltas: Vec<(f64, f64)> = (-16..=16)
            .filter(|&k| k != 0)
            .map(|k| {
                let z = k as f64 / 4.0;
                (z * tau * sigma, (-0.5 * z * z).exp())
            })
            .collect();
        Self::new(sigma, &deltas)
    }

    /// ln of the mixture after `n` pairs with sums `s1` = Σd, `s2` = Σd².
    fn ln_e(&self, n: usize, s1: f64, s2: f64) -> f64 {
        let n = n as f64;
        let logs = self
            .components
            .iter()
            .map(|[a, b, c, lw]| lw + a * s2 + b * s1 + n * c);
        let max = logs.clone().fold(f64::NEG_INFINITY, f64::max);
        max + logs.map(|l| (l - max).exp()).sum::<f64>().ln()
    }
}

/// E[component δ] under N(0, s²), in closed form: a Gaussian integral of exp(a·d² + b·d + c).
fn scale_free_expectation(sigma: f64, delta: f64, s: f64) -> f64 {
    let s2 = sigma * sigma;
    let a = 0.5 / (s2 + delta * delta) - 0.5 / s2;
    let b = delta / s2;
    let c = -delta * delta / (2.0 * s2) + 0.5 * (delta * delta / s2).ln_1p();
    let v = s * s;
    ((b * b * v / (2.0 * (1.0 - 2.0 * a * v))) + c).exp() / (1.0 - 2.0 * a * v).sqrt()
}

/// How a scenario's per-run noise is drawn.
#[derive(Clone, Copy)]
enum Noise {
    Normal,
    /// Student t with 3 degrees of freedom, scaled to the same sd: heavy tails.
    HeavyTails,
}

/// Student t with 3 degrees of freedom scaled to unit sd (t_3 has variance 3).
fn student_t3(rng: &mut Xoshiro256) -> f64 {
    let chi2: f64 = (0..3).map(|_| rng.normal().powi(2)).sum();
    rng.normal() / (chi2 / 3.0).sqrt() / 3f64.sqrt()
}

/// An A/A pair whose runs have heavy-tailed noise of `RUN_SPREAD` sd.
fn heavy_pair(rng: &mut Xoshiro256) -> f64 {
    RUN_SPREAD * (student_t3(rng) - student_t3(rng))
}

/// Pairs until `test` reaches 1/alpha (a claim), looking after every pair; `None` within `max`.
fn scale_free_first_claim(
    rng: &mut Xoshiro256,
    test: &ScaleFree,
    machine: Machine,
    noise: Noise,
    effect: f64,
    max: usize,
) -> Option<usize> {
    let threshold = -ALPHA.ln();
    let draw = |rng: &mut Xoshiro256| match noise {
        Noise::Normal => rng.normal(),
        Noise::HeavyTails => student_t3(rng),
    };
    let (mut s1, mut s2) = (0.0, 0.0);
    for n in 1..=max {
        let base = RUN_SPREAD * draw(rng);
        let head = effect + machine.head_spread * RUN_SPREAD * draw(rng);
        let position = if n % 2 == 1 {
            machine.drift
        } else {
            -machine.drift
        };
        let d = head - base + position;
        s1 += d;
        s2 += d * d;
        if test.ln_e(n, s1, s2) >= threshold {
            return Some(n);
        }
    }
    None
}

/// The smallest number of rounds by which at least `share` of the runs had claimed.
fn quantile_rounds(firsts: &mut [usize], share: f64) -> usize {
    firsts.sort_unstable();
    firsts[((firsts.len() as f64 * share).ceil() as usize).saturating_sub(1)]
}

fn rate(count: usize, runs: usize) -> String {
    let p = count as f64 / runs as f64;
    // Binomial standard error, so a reader can see the simulation noise.
    let se = (p * (1.0 - p) / runs as f64).sqrt();
    format!("{:.4} ± {:.4}", p, se)
}

fn main() {
    let mut args = std::env::args().skip(1);
    let runs: usize = args.next().map_or(1_000_000, |a| a.parse().expect("RUNS"));
    let seed: u64 = args.next().map_or(20_240_601, |a| a.parse().expect("SEED"));
    let boundary = MixtureBoundary::tuned(ALPHA, N_STAR).expect("valid tuning");
    let quantiles: Vec<f64> = (0..=MAX_PAIRS)
        .map(|n| {
            if n < 2 {
                f64::INFINITY
            } else {
                t_quantile(ALPHA, (n - 1) as f64).unwrap()
            }
        })
        .collect();
    let started = Instant::now();
    let mut rng = Xoshiro256::new(seed);

    // A/A: no change. A "false result" is any look at which the interval excludes 0.
    let (mut cs_sparse, mut cs_every) = (0usize, 0usize);
    let (mut t_sparse, mut t_every, mut t_once) = (0usize, 0usize, 0usize);
    for _ in 0..runs {
        let mut cs = ConfidenceSequence::new(boundary, 0.0);
        let mut naive = NaiveT {
            n: 0,
            sum: 0.0,
            sum_sq: 0.0,
        };
        let (mut cs_sparse_hit, mut cs_hit, mut t_sparse_hit, mut t_hit) =
            (false, false, false, false);
        for n in 1..=MAX_PAIRS {
            let d = rng.pair(0.0, RUN_SPREAD);
            cs.push(d).unwrap();
            naive.push(d);
            if n < 2 {
                continue;
            }
            // The engine reports the running intersection at each look.
            let cs_excludes = !cs.running_interval().contains(0.0);
            let t_excludes = naive.excludes_zero(&quantiles);
            cs_hit |= cs_excludes;
            t_hit |= t_excludes;
            if SPARSE_LOOKS.contains(&n) {
                cs_sparse_hit |= cs_excludes;
                t_sparse_hit |= t_excludes;
                if n == 50 && t_excludes {
                    t_once += 1;
                }
            }
        }
        cs_sparse += cs_sparse_hit as usize;
        cs_every += cs_hit as usize;
        t_sparse += t_sparse_hit as usize;
        t_every += t_hit as usize;
    }
    let aa_time = started.elapsed();

    // Power: head 4% slower, 2.5% spread per run; detected once the interval's lower bound > 0.
    let effect = 1.04f64.ln();
    let mut detected = [0usize; POWER_LOOKS.len()];
    let mut detected_t = [0usize; POWER_LOOKS.len()];
    for _ in 0..runs {
        let mut cs = ConfidenceSequence::new(boundary, 0.0);
        let mut naive = NaiveT {
            n: 0,
            sum: 0.0,
            sum_sq: 0.0,
        };
        for n in 1..=POWER_LOOKS[POWER_LOOKS.len() - 1] {
            let d = rng.pair(effect, RUN_SPREAD);
            cs.push(d).unwrap();
            naive.push(d);
            if let Some(i) = POWER_LOOKS.iter().position(|&k| k == n) {
                detected[i] += (cs.running_interval().lower > 0.0) as usize;
                detected_t[i] += naive.excludes_zero(&quantiles) as usize;
            }
        }
    }
    let single_time = started.elapsed();

    // Robustness of the interval with a look after every round: A/A false-result rates when
    // head's spread is twice base's, under drift, and for two runners combined.
    let scenarios: [(&str, &[Machine], usize); 5] = [
        ("one runner, quiet", &[QUIET], MAX_PAIRS),
        (
            "one runner, head spread 2x base",
            &[Machine {
                head_spread: 2.0,
                drift: 0.0,
            }],
            MAX_PAIRS,
        ),
        (
            "one runner, drift 0.5% per run",
            &[Machine {
                head_spread: 1.0,
                drift: 0.005,
            }],
            MAX_PAIRS,
        ),
        ("two runners, stratified", &[QUIET, QUIET], MAX_PAIRS / 2),
        (
            "two runners, one with head spread 2x and drift",
            &[
                QUIET,
                Machine {
                    head_spread: 2.0,
                    drift: 0.005,
                },
            ],
            MAX_PAIRS / 2,
        ),
    ];
    let mut robustness = Vec::new();
    for (name, machines, max) in scenarios {
        let tuned = MixtureBoundary::tuned(ALPHA, (N_STAR / machines.len() as f64).max(2.0))
            .expect("valid tuning");
        let claims = (0..runs)
            .filter(|_| stratified_first_claim(&mut rng, machines, 0.0, &tuned, max).is_some())
            .count();
        robustness.push((name, machines.len() * max, claims));
    }

    // Several runners: rounds per runner until 80% of real 4% slow-downs are called.
    let mut speed = Vec::new();
    for k in 1..=3usize {
        let tuned = MixtureBoundary::tuned(ALPHA, (N_STAR / k as f64).max(2.0)).unwrap();
        let machines = vec![QUIET; k];
        let mut firsts: Vec<usize> = (0..runs)
            .map(|_| {
                stratified_first_claim(&mut rng, &machines, effect, &tuned, 100).unwrap_or(101)
            })
            .collect();
        let median = quantile_rounds(&mut firsts, 0.5);
        speed.push((k, median, quantile_rounds(&mut firsts, 0.8)));
    }
    // One runner with other tunings: where the boundary is tightest barely moves the answer.
    let mut tunings = Vec::new();
    for n_star in [5.0, 10.0, 40.0] {
        let tuned = MixtureBoundary::tuned(ALPHA, n_star).unwrap();
        let mut firsts: Vec<usize> = (0..runs)
            .map(|_| stratified_first_claim(&mut rng, &[QUIET], effect, &tuned, 100).unwrap_or(101))
            .collect();
        tunings.push((
            n_star,
            quantile_rounds(&mut firsts, 0.5),
            quantile_rounds(&mut firsts, 0.8),
        ));
    }

    // The A/A history's spread taken as known: faster, and wrong once head's spread differs.
    let sigma = RUN_SPREAD * 2f64.sqrt();
    let head_2x = Machine {
        head_spread: 2.0,
        drift: 0.0,
    };
    let known_aa = (0..runs)
        .filter(|_| known_spread_first_claim(&mut rng, QUIET, 0.0, sigma, MAX_PAIRS).is_some())
        .count();
    let known_aa_2x = (0..runs)
        .filter(|_| known_spread_first_claim(&mut rng, head_2x, 0.0, sigma, MAX_PAIRS).is_some())
        .count();
    let mut known_firsts: Vec<usize> = (0..runs)
        .map(|_| known_spread_first_claim(&mut rng, QUIET, effect, sigma, 100).unwrap_or(101))
        .collect();
    let known_median = quantile_rounds(&mut known_firsts, 0.5);
    let known_p80 = quantile_rounds(&mut known_firsts, 0.8);
    // Tests that hold whatever the spread, with the A/A spread as tuning only (ScaleFree), a
    // tenth of the runs: how far below the t-mixture's rounds can a valid test go?
    // Its own stream, so the tables above and below keep the numbers they had before it.
    let mut rng_sf = Xoshiro256::new(seed ^ 0x5CA1_EF4E_E000_0001);
    let sf_runs = (runs / 10).max(1);
    let sf_started = Instant::now();
    // Each component's expectation over spreads from 1/100 to 100 times sigma (log grid).
    let sf_sup = [0.1, 0.5, 1.0, 2.0, 10.0]
        .iter()
        .flat_map(|&delta_over_sigma| {
            (0..=4000).map(move |k| {
                let s = sigma * 10f64.powf(-2.0 + k as f64 / 1000.0);
                scale_free_expectation(sigma, delta_over_sigma * sigma, s)
            })
        })
        .fold(0.0, f64::max);
    let mixture = ScaleFree::normal_prior(sigma, 1.0);
    let drift = Machine {
        head_spread: 1.0,
        drift: 0.005,
    };
    let sf_aa: Vec<(&str, usize)> = [
        ("quiet", QUIET, Noise::Normal),
        ("head spread 2x base", head_2x, Noise::Normal),
        ("drift 0.5% per run", drift, Noise::Normal),
        ("heavy tails (t, 3 df)", QUIET, Noise::HeavyTails),
    ]
    .into_iter()
    .map(|(name, machine, noise)| {
        let claims = (0..sf_runs)
            .filter(|_| {
                scale_free_first_claim(&mut rng_sf, &mixture, machine, noise, 0.0, MAX_PAIRS)
                    .is_some()
            })
            .count();
        (name, claims)
    })
    .collect();
    // The engine's interval under the same heavy tails.
    let engine_heavy = (0..sf_runs)
        .filter(|_| {
            let mut cs = ConfidenceSequence::new(boundary, 0.0);
            (1..=MAX_PAIRS).any(|_| {
                cs.push(heavy_pair(&mut rng_sf)).unwrap();
                !cs.running_interval().contains(0.0)
            })
        })
        .count();
    let oracle = ScaleFree::new(sigma, &[(effect, 1.0), (-effect, 1.0)]);
    let designs: [(&str, ScaleFree); 4] = [
        (
            "normal prior on the effect, sd 0.5 sigma",
            ScaleFree::normal_prior(sigma, 0.5),
        ),
        (
            "normal prior on the effect, sd 1 sigma",
            ScaleFree::normal_prior(sigma, 1.0),
        ),
        (
            "normal prior on the effect, sd 2 sigma",
            ScaleFree::normal_prior(sigma, 2.0),
        ),
        ("the true effect, +-4% (an oracle)", oracle),
    ];
    let sf_speed: Vec<(&str, usize, usize)> = designs
        .iter()
        .map(|(name, test)| {
            let mut firsts: Vec<usize> = (0..sf_runs)
                .map(|_| {
                    scale_free_first_claim(&mut rng_sf, test, QUIET, Noise::Normal, effect, 100)
                        .unwrap_or(101)
                })
                .collect();
            let median = quantile_rounds(&mut firsts, 0.5);
            (*name, median, quantile_rounds(&mut firsts, 0.8))
        })
        .collect();
    let sf_time = sf_started.elapsed();
    // Main's history: chains of paired steps (docs/statistics.md, "Main's history"), a tenth
    // of the runs (each is 20 comparisons). Coverage: the band holds the true cumulative
    // change at every point. Creep: +5% spread over 4 steps (1.25% each, below what one step
    // of 30 pairs resolves), found by the chain's band or by one anchor comparison.
    let chain_runs = (runs / 10).max(1);
    const STEP_PAIRS: usize = 30;
    let pairs_of = |rng: &mut Xoshiro256, effect: f64| -> Vec<f64> {
        (0..STEP_PAIRS)
            .map(|_| rng.pair(effect, RUN_SPREAD))
            .collect()
    };
    let mut band_missed = 0;
    for _ in 0..chain_runs {
        let steps: Vec<Vec<f64>> = (0..20).map(|_| pairs_of(&mut rng, 0.0)).collect();
        let cs: Vec<ChainStep> = steps
            .iter()
            .map(|d| ChainStep {
                log_ratios: d,
                n_star: N_STAR,
            })
            .collect();
        let points = chain(&cs, ALPHA).unwrap();
        band_missed += points.iter().any(|p| !p.interval.contains(0.0)) as usize;
    }
    let creep_step = 1.05f64.ln() / 4.0;
    let (mut creep_by_chain, mut creep_by_step, mut creep_by_anchor) = (0, 0, 0);
    for _ in 0..chain_runs {
        let steps: Vec<Vec<f64>> = (0..4).map(|_| pairs_of(&mut rng, creep_step)).collect();
        let cs: Vec<ChainStep> = steps
            .iter()
            .map(|d| ChainStep {
                log_ratios: d,
                n_star: N_STAR,
            })
            .collect();
        let points = chain(&cs, ALPHA).unwrap();
        creep_by_chain += (points[3].interval.lower > 0.0) as usize;
        creep_by_step += points.iter().any(|p| p.step_interval.lower > 0.0) as usize;
        let anchor = pairs_of(&mut rng, 4.0 * creep_step);
        let anchor_cs = ConfidenceSequence::from_log_ratios(boundary, 0.0, &anchor).unwrap();
        creep_by_anchor += (anchor_cs.running_interval().lower > 0.0) as usize;
    }
    let total_time = started.elapsed();

    println!(
        "benchgate calibration: alpha = {ALPHA}, n* = {N_STAR}, g = u(alpha)/n* = {:.6}",
        boundary.g()
    );
    println!("seed = {seed}, runs = {runs} per scenario, spread per run = {RUN_SPREAD}");
    println!();
    println!("A/A false-result rate (no change; a false result = any look excludes 0)");
    println!("  looks                      | confidence sequence | naive repeated t");
    println!(
        "  n = 10, 20, 30, 40, 50     | {:>19} | {}",
        rate(cs_sparse, runs),
        rate(t_sparse, runs)
    );
    println!(
        "  every pair, n = 2..200     | {:>19} | {}",
        rate(cs_every, runs),
        rate(t_every, runs)
    );
    println!(
        "  one look at n = 50 (t)     | {:>19} | {}",
        "-",
        rate(t_once, runs)
    );
    println!();
    println!("Power: head 4% slower, 2.5% spread per run (share of runs with lower bound > 0)");
    println!("  pairs | confidence sequence (running) | fixed-n t (not safe to peek)");
    for (i, n) in POWER_LOOKS.iter().enumerate() {
        println!(
            "  {n:>5} | {:>29} | {}",
            rate(detected[i], runs),
            rate(detected_t[i], runs)
        );
    }
    println!();
    println!(
        "A/A false-result rate, a look after every round (product of the runners' Bayes factors)"
    );
    for (name, pairs, claims) in robustness {
        println!("  {name:<48} | {pairs:>3} pairs | {}", rate(claims, runs));
    }
    println!();
    println!("Rounds per runner until a real 4% slow-down is called (2.5% spread per run)");
    println!("  runners | median | 80% of runs");
    for (k, median, p80) in speed {
        println!("  {k:>7} | {median:>6} | {p80:>11}");
    }
    for (n_star, median, p80) in tunings {
        println!("  1 runner, n* = {n_star:>2} | {median:>6} | {p80:>11}");
    }
    println!();
    println!("If the A/A spread were taken as known (normal mixture; not used by the engine)");
    println!(
        "  A/A false-result rate, every pair to {MAX_PAIRS}: {}",
        rate(known_aa, runs)
    );
    println!(
        "  the same, head spread 2x base:     {}",
        rate(known_aa_2x, runs)
    );
    println!(
        "  4% slow-down called by: median {known_median} pairs, 80% of runs {known_p80} pairs"
    );
    println!();
    println!(
        "Valid whatever the spread, A/A spread as tuning only (likelihood ratio against the \
         nearest null; not used by the engine), {sf_runs} runs"
    );
    println!(
        "  largest expectation of one component under N(0, s^2), s = sigma/100 .. 100 sigma: \
         {sf_sup:.12}"
    );
    for (name, claims) in &sf_aa {
        println!(
            "  A/A false-result rate, every pair to {MAX_PAIRS}, {name:<22} {}",
            rate(*claims, sf_runs)
        );
    }
    println!(
        "  the engine's interval, heavy tails (t, 3 df), the same looks        {}",
        rate(engine_heavy, sf_runs)
    );
    println!("  4% slow-down called by (median | 80% of runs):");
    for (name, median, p80) in &sf_speed {
        println!("    {name:<42} | {median:>3} | {p80:>3}");
    }
    println!("  ({:.1} s)", sf_time.as_secs_f64());
    println!();
    println!("Main's history, {chain_runs} runs, {STEP_PAIRS} pairs per comparison");
    println!(
        "  20 steps without a change: band misses the truth anywhere {}",
        rate(band_missed, chain_runs)
    );
    println!("  +5% creep over 4 steps, found by:");
    println!(
        "    any single step            {}",
        rate(creep_by_step, chain_runs)
    );
    println!(
        "    the chain's band at step 4 {}",
        rate(creep_by_chain, chain_runs)
    );
    println!(
        "    one anchor comparison      {}",
        rate(creep_by_anchor, chain_runs)
    );
    println!();
    println!(
        "time: A/A {:.1} s, single runner {:.1} s, total {:.1} s",
        aa_time.as_secs_f64(),
        single_time.as_secs_f64(),
        total_time.as_secs_f64()
    );
}
