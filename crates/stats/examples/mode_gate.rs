//! The gate under per-process modes (docs/statistics.md §4c): how often it errs and how soon it
//! answers, today's method (every pair, one t-mixture sequence) beside the mode-aware gate
//! (`benchgate_stats::analyze_pairs` with the tail guard), over run shapes a real machine shows.
//! Each session is read after every round, as the service reads it, and stops at its first
//! answer (pass or fail) or at the cap. The error of a cell is a fail for an unchanged mean and
//! a pass for a mean at or beyond the 5% tolerance.
//!
//! `cargo run --release -p benchgate-stats --example mode_gate [-- SESSIONS SEED]`

use benchgate_api::Direction;
use benchgate_stats::{
    AnalysisOptions, ConfidenceSequence, DecisionRule, MixtureBoundary, Verdict, analyze_pairs,
};
use std::time::Instant;

#[path = "common/rng.rs"]
mod rng;
use rng::Xoshiro256;

const ALPHA: f64 = 0.05;
const TOLERANCE: f64 = 0.05;
const CAP: usize = 200;
/// Spread of one run's time within its mode (2%).
const RUN_SPREAD: f64 = 0.02;
/// The guard's smallest slow-mode share: 1 run in 20.
const RARE: f64 = 0.05;

#[derive(Clone, Copy)]
enum Shape {
    Normal,
    LogNormal,
    StudentT3,
    Drift,
    /// Each process of either side slow with probability 1/6, +30%.
    SharedBimodal,
    /// Head's processes slow with probability `p`, `ratio` times slower.
    HeadOnly {
        p: f64,
        ratio: f64,
    },
    /// A slow mode both sides show (1 in 6, +30%) that head hits twice as often.
    SharedMoreOnHead,
}

impl Shape {
    fn name(self) -> String {
        match self {
            Shape::Normal => "normal".into(),
            Shape::LogNormal => "lognormal (skewed)".into(),
            Shape::StudentT3 => "t(3)".into(),
            Shape::Drift => "drift (0.1%/round)".into(),
            Shape::SharedBimodal => "shared bimodal (1 in 6, +30%)".into(),
            Shape::HeadOnly { p, ratio } if ratio < 2.0 => {
                format!(
                    "head-only {:.0}% of runs +{:.0}%",
                    100.0 * p,
                    100.0 * (ratio - 1.0)
                )
            }
            Shape::HeadOnly { p, ratio } => format!("head-only {:.0}% of runs ×{ratio}", 100.0 * p),
            Shape::SharedMoreOnHead => "shared 1 in 6 → 1 in 3 on head (+30%)".into(),
        }
    }

    /// How much of the mean's log change the head's extra slow runs make: the location shift
    /// is the rest.
    fn mode_part(self) -> f64 {
        match self {
            Shape::HeadOnly { p, ratio } => p * ratio.ln(),
            Shape::SharedMoreOnHead => (1.0 / 3.0 - 1.0 / 6.0) * 1.3f64.ln(),
            _ => 0.0,
        }
    }

    /// One run's time factor (within-mode noise and mode) for `head` in round `k`.
    fn run(self, rng: &mut Xoshiro256, head: bool, k: usize) -> f64 {
        let noise = match self {
            Shape::LogNormal => {
                // A standardised lognormal: right-skewed interference, mean 0, sd 1.
                let e = std::f64::consts::E;
                ((rng.normal()).exp() - e.sqrt()) / ((e - 1.0) * e).sqrt()
            }
            Shape::StudentT3 => {
                let z = rng.normal();
                let chi: f64 = (0..3).map(|_| rng.normal().powi(2)).sum();
                z / (chi / 3.0).sqrt() / 3f64.sqrt()
            }
            _ => rng.normal(),
        };
        let mut factor = (1.0 + RUN_SPREAD * noise).max(0.5);
        match self {
            Shape::Drift => factor *= (0.001 * k as f64).exp(),
            Shape::SharedBimodal if rng.uniform() < 1.0 / 6.0 => factor *= 1.3,
            Shape::HeadOnly { p, ratio } if head && rng.uniform() < p => factor *= ratio,
            Shape::SharedMoreOnHead => {
                let p = if head { 1.0 / 3.0 } else { 1.0 / 6.0 };
                if rng.uniform() < p {
                    factor *= 1.3;
                }
            }
            _ => {}
        }
        factor
    }
}

#[derive(Clone, Copy, PartialEq)]
enum Answer {
    Pass,
    Fail,
}

fn is_pass(v: &Verdict) -> bool {
    matches!(
        v,
        Verdict::NotSlower | Verdict::Equivalent | Verdict::Faster { .. }
    )
}

/// Today's gate: every pair in one t-mixture sequence.
fn today(
    base: &[f64],
    head: &[f64],
    rule: &DecisionRule,
    boundary: MixtureBoundary,
) -> Option<Answer> {
    let mut cs = ConfidenceSequence::new(boundary, 0.0);
    for (b, h) in base.iter().zip(head) {
        cs.push((h / b).ln()).ok()?;
    }
    match rule.decide(cs.running_interval())? {
        Verdict::Slower { .. } => Some(Answer::Fail),
        v if is_pass(&v) => Some(Answer::Pass),
        _ => None,
    }
}

fn mode_aware(base: &[f64], head: &[f64], opts: &AnalysisOptions) -> Option<Answer> {
    let a = analyze_pairs(base, head, opts, None).ok()?;
    match a.verdict {
        Verdict::Slower { .. } => Some(Answer::Fail),
        v if is_pass(&v) => Some(Answer::Pass),
        _ => None,
    }
}

struct Cell {
    errors: usize,
    answered: Vec<usize>,
}

fn wilson(k: usize, n: usize) -> (f64, f64) {
    let (k, n) = (k as f64, n as f64);
    let z = 1.96;
    let p = k / n;
    let denom = 1.0 + z * z / n;
    let centre = (p + z * z / (2.0 * n)) / denom;
    let half = z * (p * (1.0 - p) / n + z * z / (4.0 * n * n)).sqrt() / denom;
    ((centre - half).max(0.0), (centre + half).min(1.0))
}

fn median(v: &mut [usize]) -> String {
    if v.is_empty() {
        return "—".into();
    }
    v.sort_unstable();
    v[v.len() / 2].to_string()
}

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let sessions: usize = args.get(1).and_then(|a| a.parse().ok()).unwrap_or(1000);
    let seed: u64 = args.get(2).and_then(|a| a.parse().ok()).unwrap_or(2026);
    let shapes = [
        Shape::Normal,
        Shape::LogNormal,
        Shape::StudentT3,
        Shape::Drift,
        Shape::SharedBimodal,
        Shape::HeadOnly {
            p: 0.10,
            ratio: 1.4,
        },
        Shape::HeadOnly {
            p: 0.05,
            ratio: 2.5,
        },
        Shape::SharedMoreOnHead,
    ];
    let changes: [f64; 4] = [0.0, 0.05, 0.06, 0.08];
    let rule = DecisionRule {
        tolerance: Some(TOLERANCE.ln_1p()),
        ..DecisionRule::new(0.01, Direction::LowerIsBetter)
    };
    let boundary = MixtureBoundary::tuned(ALPHA, 20.0).unwrap();
    let opts = AnalysisOptions {
        tolerance: Some(TOLERANCE),
        rare_slow_runs: Some(RARE),
        ..AnalysisOptions::default()
    };
    let unguarded = AnalysisOptions {
        rare_slow_runs: None,
        ..opts.clone()
    };
    let started = Instant::now();
    println!(
        "{sessions} sessions per cell, read after every round up to {CAP}, seed {seed}; run spread \
         {:.0}% within a mode; tolerance {:.0}%, alpha {ALPHA}, tail guard 1 run in {:.0}",
        100.0 * RUN_SPREAD,
        100.0 * TOLERANCE,
        1.0 / RARE
    );
    println!();
    println!(
        "| runs | true change of the mean | error | today: error [95%] | median rounds | \
         modes, no guard: error [95%] | median rounds | modes + guard: error [95%] | median \
         rounds | no answer at {CAP} |"
    );
    println!("|---|---:|---|---:|---:|---:|---:|---:|---:|---:|");
    for (si, shape) in shapes.iter().enumerate() {
        for (ci, &change) in changes.iter().enumerate() {
            let location = change.ln_1p() - shape.mode_part();
            let mut rng = Xoshiro256::new(seed ^ ((si as u64) << 32) ^ (ci as u64) << 16);
            let wrong = if change == 0.0 {
                Answer::Fail
            } else {
                Answer::Pass
            };
            let mut old = Cell {
                errors: 0,
                answered: Vec::new(),
            };
            let mut bare = Cell {
                errors: 0,
                answered: Vec::new(),
            };
            let mut new = Cell {
                errors: 0,
                answered: Vec::new(),
            };
            let mut open_new = 0;
            for _ in 0..sessions {
                let (mut base, mut head) = (Vec::new(), Vec::new());
                let (mut old_done, mut bare_done, mut new_done) = (false, false, false);
                for k in 0..CAP {
                    // ABBA: the order changes nothing here but is what the service runs.
                    let b = shape.run(&mut rng, false, k);
                    let h = shape.run(&mut rng, true, k) * location.exp();
                    base.push(b);
                    head.push(h);
                    if base.len() < 2 {
                        continue;
                    }
                    if !old_done && let Some(a) = today(&base, &head, &rule, boundary) {
                        old_done = true;
                        old.errors += (a == wrong) as usize;
                        old.answered.push(k + 1);
                    }
                    if !bare_done && let Some(a) = mode_aware(&base, &head, &unguarded) {
                        bare_done = true;
                        bare.errors += (a == wrong) as usize;
                        bare.answered.push(k + 1);
                    }
                    if !new_done && let Some(a) = mode_aware(&base, &head, &opts) {
                        new_done = true;
                        new.errors += (a == wrong) as usize;
                        new.answered.push(k + 1);
                    }
                    if old_done && bare_done && new_done {
                        break;
                    }
                }
                open_new += (!new_done) as usize;
            }
            let show = |c: &Cell| {
                let (lo, hi) = wilson(c.errors, sessions);
                format!(
                    "{:.1}% [{:.1}, {:.1}]",
                    100.0 * c.errors as f64 / sessions as f64,
                    100.0 * lo,
                    100.0 * hi
                )
            };
            println!(
                "| {} | {} | {} | {} | {} | {} | {} | {} | {} | {:.1}% |",
                shape.name(),
                if change == 0.0 {
                    "A/A".to_owned()
                } else {
                    format!("+{:.0}%", 100.0 * change)
                },
                if change == 0.0 { "fail" } else { "pass" },
                show(&old),
                median(&mut old.answered),
                show(&bare),
                median(&mut bare.answered),
                show(&new),
                median(&mut new.answered),
                100.0 * open_new as f64 / sessions as f64
            );
        }
    }
    floor_table(sessions, seed);
    eprintln!("{:.0} s", started.elapsed().as_secs_f64());
}

/// Large changes on a runner with a floor: the round a head 2× slower (or 3× faster) is first
/// called, and how often an unchanged head is called slower when the floor is right and when
/// the machine has become twice as noisy since it was measured (a stale floor).
fn floor_table(sessions: usize, seed: u64) {
    use benchgate_stats::NoiseFloor;
    let floor = NoiseFloor {
        s_aa: 0.03,
        tau_b: 0.0,
        sessions: 1,
        pairs: 30,
        tau_layout: 0.0,
    };
    let opts = AnalysisOptions {
        tolerance: Some(TOLERANCE),
        rare_slow_runs: Some(RARE),
        ..AnalysisOptions::default()
    };
    println!();
    println!(
        "Floor: s_aa 3% per pair from one A/A session of 30 pairs; {sessions} sessions each, \
         up to {CAP} rounds."
    );
    println!();
    println!(
        "| true change | pair spread | with the floor: decided by round 2 / 3 | median round | without: median round | wrong answers (with / without) |"
    );
    println!("|---|---:|---:|---:|---:|---:|");
    let cases: [(&str, f64, f64); 4] = [
        ("2× slower", std::f64::consts::LN_2, 0.03),
        ("3× faster", -(3f64.ln()), 0.03),
        ("A/A", 0.0, 0.03),
        ("A/A, floor stale (machine 2× noisier)", 0.0, 0.06),
    ];
    for (ci, (name, change, spread)) in cases.into_iter().enumerate() {
        let mut rng = Xoshiro256::new(seed ^ 0xF100 ^ ci as u64);
        let (mut by2, mut by3) = (0, 0);
        let (mut with_rounds, mut without_rounds) = (Vec::new(), Vec::new());
        let (mut wrong_with, mut wrong_without) = (0, 0);
        let wrong = |v: &Verdict| match change {
            c if c > 0.0 => !matches!(v, Verdict::Slower { .. }),
            c if c < 0.0 => !matches!(v, Verdict::Faster { .. }),
            _ => matches!(v, Verdict::Slower { .. } | Verdict::Faster { .. }),
        };
        for _ in 0..sessions {
            let (mut base, mut head) = (Vec::new(), Vec::new());
            let (mut done_with, mut done_without) = (false, false);
            for k in 0..CAP {
                let run = spread / std::f64::consts::SQRT_2;
                base.push((run * rng.normal()).exp());
                head.push((change + run * rng.normal()).exp());
                if k == 0 {
                    continue;
                }
                let decided = |v: &Verdict| {
                    matches!(v, Verdict::Slower { .. } | Verdict::Faster { .. }) || is_pass(v)
                };
                if !done_with {
                    let a = analyze_pairs(&base, &head, &opts, Some(&floor)).unwrap();
                    if decided(&a.verdict) {
                        done_with = true;
                        with_rounds.push(k + 1);
                        wrong_with += wrong(&a.verdict) as usize;
                        by2 += (k < 2 && !wrong(&a.verdict)) as usize;
                        by3 += (k < 3 && !wrong(&a.verdict)) as usize;
                    }
                }
                if !done_without {
                    let a = analyze_pairs(&base, &head, &opts, None).unwrap();
                    if decided(&a.verdict) {
                        done_without = true;
                        without_rounds.push(k + 1);
                        wrong_without += wrong(&a.verdict) as usize;
                    }
                }
                if done_with && done_without {
                    break;
                }
            }
        }
        let pct = |k: usize| format!("{:.1}%", 100.0 * k as f64 / sessions as f64);
        println!(
            "| {name} | {:.0}% | {} / {} | {} | {} | {} / {} |",
            100.0 * spread,
            pct(by2),
            pct(by3),
            median(&mut with_rounds),
            median(&mut without_rounds),
            pct(wrong_with),
            pct(wrong_without)
        );
    }
}
