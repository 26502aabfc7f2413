//! How many salted builds the layout floor needs, for docs/statistics.md §3: modelled layout
//! sessions (each a pair of builds whose layouts differ by a draw of spread `tau`, measured over
//! `PAIRS` pairs with `RUN_SPREAD` per pair), read with the point estimate the floor used
//! before and with the lower end of the 95% interval it uses now. A band wider than the true
//! `2·tau` silences real changes up to its width; one of 0 leaves layout moves to be claimed.
//!
//! `cargo run --release -p benchgate-stats --example layout_floor [-- TRIALS SEED]`

use benchgate_stats::floor::{MIN_LAYOUT_SESSIONS, layout_spread_of};

#[path = "common/rng.rs"]
mod rng;
use rng::Xoshiro256;

/// The true layout spread and the noise of one pair (log scale).
const TAU: f64 = 0.01;
const RUN_SPREAD: f64 = 0.02;
/// Pairs per layout session (a calibration's rounds).
const PAIRS: usize = 10;

fn quantile(sorted: &[f64], q: f64) -> f64 {
    sorted[((sorted.len() - 1) as f64 * q).round() as usize]
}

fn main() {
    let mut args = std::env::args().skip(1);
    let trials: usize = args.next().map_or(20_000, |a| a.parse().expect("TRIALS"));
    let seed: u64 = args.next().map_or(2026, |a| a.parse().expect("SEED"));
    let mut rng = Xoshiro256::new(seed);
    println!(
        "true tau_layout {:.1}%, {PAIRS} pairs per session at {:.1}% per pair, {trials} trials, \
         seed {seed}; minimum now {MIN_LAYOUT_SESSIONS}",
        100.0 * TAU,
        100.0 * RUN_SPREAD
    );
    println!(
        "| salted builds | point/tau: median, 90th pct | point ≥ 1.5·tau | lower/tau: median | \
         lower > tau | lower = 0 |"
    );
    println!("|---|---|---|---|---|---|");
    for k in [2, 3, 4, 5, 6, 8, 12] {
        let (mut points, mut lowers) = (Vec::new(), Vec::new());
        for _ in 0..trials {
            let sessions: Vec<Vec<f64>> = (0..k)
                .map(|_| {
                    let layout = TAU * rng.normal();
                    (0..PAIRS)
                        .map(|_| layout + RUN_SPREAD * rng.normal())
                        .collect()
                })
                .collect();
            let point = benchgate_stats::NoiseFloor::from_sessions(&sessions)
                .expect("sessions")
                .tau_b;
            points.push(point / TAU);
            let lower = layout_spread_of(&sessions, 0.05).expect("sessions").lower;
            lowers.push(lower / TAU);
        }
        points.sort_by(f64::total_cmp);
        lowers.sort_by(f64::total_cmp);
        let share = |v: &[f64], f: &dyn Fn(f64) -> bool| {
            100.0 * v.iter().filter(|x| f(**x)).count() as f64 / v.len() as f64
        };
        println!(
            "| {k} | {:.2}, {:.2} | {:.1}% | {:.2} | {:.1}% | {:.1}% |",
            quantile(&points, 0.5),
            quantile(&points, 0.9),
            share(&points, &|x| x >= 1.5),
            quantile(&lowers, 0.5),
            share(&lowers, &|x| x > 1.0),
            share(&lowers, &|x| x == 0.0),
        );
    }
}
