//! Culprit search on modelled samples, for docs/statistics.md ("Which commit"): 64-commit ranges
//! at 2.5% noise per run, each probe an interleaved comparison stopped as soon as its anytime-valid
//! interval answers (or at its round limit), the whole search at α = 5%.
//! - one +3% culprit at a random position: how often it is named, with how many probes and rounds;
//! - no change anywhere: how often a culprit is named anyway;
//! - two +2% culprits, and a creep of +0.5% on 8 consecutive commits: whether a commit that did
//!   not change anything is ever named, and what the search says instead.
//!
//! `cargo run --release -p benchgate-stats --example bisect [-- RUNS SEED]`

use benchgate_stats::bisect::{Bisection, Next, Outcome, Question};
use benchgate_stats::{ConfidenceSequence, MixtureBoundary};

#[path = "common/rng.rs"]
mod rng;
use rng::Xoshiro256;

const ALPHA: f64 = 0.05;
/// Spread of one run on the log scale (2.5%).
const RUN_SPREAD: f64 = 0.025;
const COMMITS: usize = 64;
/// Pairs a probe runs between looks (a job's rounds), and at most in all.
const BATCH: u64 = 5;
const MAX_ROUNDS: u64 = 300;
/// The boundary's tuning: the rounds where it is tightest.
const N_STAR: f64 = 100.0;

/// One search over commits whose own steps (log scale) are `steps[1..]`.
struct Run {
    outcome: Outcome,
    probes: usize,
    rounds: u64,
    /// The question of a probe that ended undecided, if one did.
    stuck: Option<&'static str>,
}

fn search(steps: &[f64], rng: &mut Xoshiro256) -> Run {
    let cumulative: Vec<f64> = steps
        .iter()
        .scan(0.0, |sum, s| {
            *sum += s;
            Some(*sum)
        })
        .collect();
    let mut b = Bisection::new(steps.len() - 1, ALPHA);
    loop {
        match b.next_step() {
            Next::Done(outcome) => {
                let stuck =
                    b.records()
                        .iter()
                        .find(|r| !r.decided)
                        .map(|r| match r.probe.question {
                            Question::Confirm => "confirm",
                            Question::Split { .. } => "split",
                            Question::Verify { .. } => "verify",
                        });
                return Run {
                    outcome,
                    probes: b.records().len(),
                    rounds: b.rounds(),
                    stuck,
                };
            }
            Next::Run(probe) => {
                let effect = cumulative[probe.newer] - cumulative[probe.older];
                let boundary = MixtureBoundary::tuned(probe.alpha, N_STAR).unwrap();
                let mut cs = ConfidenceSequence::new(boundary, 0.0);
                while cs.n() < MAX_ROUNDS {
                    for _ in 0..BATCH {
                        cs.push(rng.pair(effect, RUN_SPREAD)).unwrap();
                    }
                    if probe.decides(cs.running_interval()) {
                        break;
                    }
                }
                b.record(cs.running_interval(), cs.n());
            }
        }
    }
}

/// Steps of a range with `effect` at each of `at` (1-based commits).
fn steps_with(at: &[usize], effect: f64) -> Vec<f64> {
    let mut steps = vec![0.0; COMMITS + 1];
    for &c in at {
        steps[c] = effect;
    }
    steps
}

fn pick(rng: &mut Xoshiro256, from: usize, to: usize) -> usize {
    from + (rng.next_u64() % (to - from + 1) as u64) as usize
}

#[derive(Default)]
struct Tally {
    runs: usize,
    named_right: usize,
    named_wrong: usize,
    spread: usize,
    undecided: usize,
    no_regression: usize,
    probes: Vec<usize>,
    rounds: Vec<u64>,
    stuck: std::collections::BTreeMap<&'static str, usize>,
}

impl Tally {
    fn add(&mut self, run: &Run, culprits: &[usize]) {
        self.runs += 1;
        match &run.outcome {
            Outcome::Culprit { index, .. } if culprits.contains(index) => self.named_right += 1,
            Outcome::Culprit { .. } => self.named_wrong += 1,
            Outcome::Spread { .. } => self.spread += 1,
            Outcome::Undecided { .. } | Outcome::Skipped { .. } => self.undecided += 1,
            Outcome::NoRegression { .. } => self.no_regression += 1,
        }
        self.probes.push(run.probes);
        self.rounds.push(run.rounds);
        if let Some(q) = run.stuck {
            *self.stuck.entry(q).or_default() += 1;
        }
    }

    fn print(&mut self, name: &str) {
        self.rounds.sort_unstable();
        let mean = |v: &[f64]| v.iter().sum::<f64>() / v.len() as f64;
        let probes: Vec<f64> = self.probes.iter().map(|&p| p as f64).collect();
        let rounds: Vec<f64> = self.rounds.iter().map(|&r| r as f64).collect();
        println!(
            "{name}: {} runs; named a culprit {} (a changing commit) / {} (a commit that changed nothing); \
             spread {}; undecided {}; no regression {}; probes mean {:.2}, max {}; rounds mean {:.0}, \
             median {}, 90th {}, mean per probe {:.1}; probes stopped undecided: {:?}",
            self.runs,
            self.named_right,
            self.named_wrong,
            self.spread,
            self.undecided,
            self.no_regression,
            mean(&probes),
            self.probes.iter().max().unwrap_or(&0),
            mean(&rounds),
            self.rounds[self.rounds.len() / 2],
            self.rounds[self.rounds.len() * 9 / 10],
            mean(&rounds) / mean(&probes),
            self.stuck,
        );
    }
}

fn main() {
    let mut args = std::env::args().skip(1);
    let runs: usize = args.next().map_or(100, |a| a.parse().expect("RUNS"));
    let seed: u64 = args.next().map_or(2026, |a| a.parse().expect("SEED"));
    let mut rng = Xoshiro256::new(seed);
    println!(
        "{COMMITS}-commit ranges, {:.1}% noise per run, alpha {ALPHA}, probes stop when decided \
         (looks every {BATCH} rounds, at most {MAX_ROUNDS}); seed {seed}",
        RUN_SPREAD * 100.0
    );

    let mut one = Tally::default();
    for _ in 0..runs {
        let culprit = pick(&mut rng, 1, COMMITS);
        let run = search(&steps_with(&[culprit], 0.03_f64.ln_1p()), &mut rng);
        one.add(&run, &[culprit]);
    }
    one.print("one +3% culprit");

    let mut none = Tally::default();
    for _ in 0..2 * runs {
        let run = search(&steps_with(&[], 0.0), &mut rng);
        none.add(&run, &[]);
    }
    none.print("no change");

    let mut two = Tally::default();
    for _ in 0..runs {
        let a = pick(&mut rng, 1, COMMITS);
        let mut b = pick(&mut rng, 1, COMMITS);
        while b == a {
            b = pick(&mut rng, 1, COMMITS);
        }
        let run = search(&steps_with(&[a, b], 0.02_f64.ln_1p()), &mut rng);
        two.add(&run, &[a, b]);
    }
    two.print("two +2% culprits");

    let mut creep = Tally::default();
    for _ in 0..runs {
        let first = pick(&mut rng, 1, COMMITS - 7);
        let commits: Vec<usize> = (first..first + 8).collect();
        let run = search(&steps_with(&commits, 0.005_f64.ln_1p()), &mut rng);
        // Every commit of a creep changed something, but none alone explains the regression:
        // naming one is the error counted here.
        creep.add(&run, &[]);
    }
    creep.print("creep, +0.5% on 8 commits");
    println!(
        "Pinpoint for comparison: 30 attempts to confirm, 20 per probe (doubling up to 160 when \
         inconclusive), so about {} rounds for a 64-commit range at its minimum.",
        30 + 20 * 7
    );
}
