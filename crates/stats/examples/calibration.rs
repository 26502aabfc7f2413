//! Calibration simulation for docs/statistics.md: how often the engine claims a change when
//! there is none (A/A), however often one looks, beside a naive repeated t interval; and how
//! soon it detects a real 4% change at 2.5% spread per run.
//!
//! `cargo run --release -p benchgate-stats --example calibration [-- RUNS SEED]`

use benchgate_stats::fixed_interval::t_quantile;
use benchgate_stats::{ConfidenceSequence, MixtureBoundary};
use std::time::Instant;

const ALPHA: f64 = 0.05;
const N_STAR: f64 = 20.0;
/// Spread of one run on the log scale (2.5%); a pair's log-ratio has √2 times that.
const RUN_SPREAD: f64 = 0.025;
const MAX_PAIRS: usize = 200;
const SPARSE_LOOKS: [usize; 5] = [10, 20, 30, 40, 50];
const POWER_LOOKS: [usize; 3] = [10, 20, 30];

/// xoshiro256++ seeded through SplitMix64: small, fast and reproducible across platforms.
struct Xoshiro256 {
    s: [u64; 4],
    spare_normal: Option<f64>,
}

impl Xoshiro256 {
    fn new(seed: u64) -> Self {
        let mut x = seed;
        let mut next = || {
            x = x.wrapping_add(0x9E37_79B9_7F4A_7C15);
            let mut z = x;
            z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
            z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
            z ^ (z >> 31)
        };
        Self {
            s: [next(), next(), next(), next()],
            spare_normal: None,
        }
    }

    fn next_u64(&mut self) -> u64 {
        let s = &mut self.s;
        let result = (s[0].wrapping_add(s[3])).rotate_left(23).wrapping_add(s[0]);
        let t = s[1] << 17;
        s[2] ^= s[0];
        s[3] ^= s[1];
        s[1] ^= s[2];
        s[0] ^= s[3];
        s[2] ^= t;
        s[3] = s[3].rotate_left(45);
        result
    }

    /// Uniform on (0, 1), never exactly 0 so the log below is finite.
    fn uniform(&mut self) -> f64 {
        ((self.next_u64() >> 11) as f64 + 0.5) / (1u64 << 53) as f64
    }

    /// Standard normal by the Box–Muller transform, using both outputs.
    fn normal(&mut self) -> f64 {
        if let Some(z) = self.spare_normal.take() {
            return z;
        }
        let r = (-2.0 * self.uniform().ln()).sqrt();
        let theta = std::f64::consts::TAU * self.uniform();
        self.spare_normal = Some(r * theta.sin());
        r * theta.cos()
    }

    /// One pair's log-ratio: two runs, each with log-normal noise of `RUN_SPREAD`.
    fn pair(&mut self, effect: f64) -> f64 {
        let base = RUN_SPREAD * self.normal();
        let head = effect + RUN_SPREAD * self.normal();
        head - base
    }
}

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
            let d = rng.pair(0.0);
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
            let d = rng.pair(effect);
            cs.push(d).unwrap();
            naive.push(d);
            if let Some(i) = POWER_LOOKS.iter().position(|&k| k == n) {
                detected[i] += (cs.running_interval().lower > 0.0) as usize;
                detected_t[i] += naive.excludes_zero(&quantiles) as usize;
            }
        }
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
        "time: A/A {:.1} s, total {:.1} s",
        aa_time.as_secs_f64(),
        total_time.as_secs_f64()
    );
}
