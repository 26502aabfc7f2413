//! The gate's tolerance keeps both errors at alpha however often one looks (docs/statistics.md
//! §4b): simulated sequences of pairs, the interval read after every round up to 200 rounds.
//! A head truly slower than the tolerance is called "not slower than +T%" at most alpha of the
//! time; an unchanged head is called slower at most alpha of the time, and mostly passes.

use crate::normal::Normal;
use benchgate_api::Direction;
use benchgate_stats::{ConfidenceSequence, DecisionRule, MixtureBoundary, Verdict};

const ALPHA: f64 = 0.05;
const SEQUENCES: usize = 2000;
const MAX_ROUNDS: usize = 200;
/// Spread of one pair's log-ratio: 3%, a noisy runner.
const SPREAD: f64 = 0.03;

/// The first decision of each sequence of pairs whose true log change is `change`, read after
/// every round (as the gate does), as shares: (passed, slower, undecided at the cap), and the
/// median round of the decided ones; with the gate's 5% tolerance, or without (`None`).
fn first_decisions_with(change: f64, seed: u64, tolerance: Option<f64>) -> (f64, f64, f64, usize) {
    let rule = DecisionRule {
        tolerance: tolerance.map(f64::ln_1p),
        ..DecisionRule::new(0.01, Direction::LowerIsBetter)
    };
    let boundary = MixtureBoundary::tuned(ALPHA, 20.0).unwrap();
    let mut rng = Normal(seed);
    let (mut passed, mut failed, mut rounds) = (0, 0, Vec::new());
    for _ in 0..SEQUENCES {
        let mut cs = ConfidenceSequence::new(boundary, 0.0);
        for k in 1..=MAX_ROUNDS {
            cs.push(change + SPREAD * rng.draw()).unwrap();
            match rule.decide(cs.running_interval()) {
                Some(Verdict::NotSlower | Verdict::Equivalent | Verdict::Faster { .. }) => {
                    passed += 1;
                    rounds.push(k);
                    break;
                }
                Some(Verdict::Slower { .. }) => {
                    failed += 1;
                    rounds.push(k);
                    break;
                }
                _ => {}
            }
        }
    }
    rounds.sort_unstable();
    let median = rounds.get(rounds.len() / 2).copied().unwrap_or(MAX_ROUNDS);
    let share = |k: usize| k as f64 / SEQUENCES as f64;
    (
        share(passed),
        share(failed),
        share(SEQUENCES - passed - failed),
        median,
    )
}

fn first_decisions(change: f64, seed: u64) -> (f64, f64, f64) {
    let (passed, failed, open, _) = first_decisions_with(change, seed, Some(0.05));
    (passed, failed, open)
}

#[test]
fn a_head_slower_than_the_tolerance_passes_at_most_alpha_of_the_time() {
    for (slower, seed) in [(1.05f64, 11), (1.06, 12), (1.08, 13)] {
        let (passed, failed, open) = first_decisions(slower.ln(), seed);
        eprintln!(
            "head {:+.0}% slower: passed {:.2}%, failed {:.2}%, undecided {:.2}%",
            100.0 * (slower - 1.0),
            100.0 * passed,
            100.0 * failed,
            100.0 * open
        );
        assert!(passed <= ALPHA, "{slower}: passed {passed}");
    }
}

#[test]
fn an_unchanged_head_fails_at_most_alpha_and_mostly_passes() {
    let (passed, failed, open) = first_decisions(0.0, 21);
    eprintln!(
        "unchanged head: passed {:.2}%, failed {:.2}%, undecided {:.2}%",
        100.0 * passed,
        100.0 * failed,
        100.0 * open
    );
    assert!(failed <= ALPHA, "failed {failed}");
    assert!(passed >= 0.9, "passed {passed}");
    // What the tolerance buys: the median round of an answer, with it and waiting for ±1%.
    let (.., with) = first_decisions_with(0.0, 21, Some(0.05));
    let (passed_without, .., without) = first_decisions_with(0.0, 21, None);
    eprintln!(
        "unchanged head, median rounds to an answer: {with} with a 5% tolerance, {without} \
         waiting for ±1% ({:.1}% answered within {MAX_ROUNDS})",
        100.0 * passed_without
    );
    assert!(with < without, "{with} vs {without}");
}
