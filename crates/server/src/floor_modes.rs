//! How often a runner's A/A runs ran in a slow mode, per floor: each session's base and head
//! runs classified apart (`benchgate_stats::modes`), the slow runs summed over the floor's
//! sessions. Stored with the floor and shown beside it on the runner page: a benchmark with a
//! slow mode is bistable on this machine.

use benchgate_api::Direction;
use benchgate_stats::modes::classify;
use benchgate_stats::paired::median;
use benchgate_store::SlowModeTally;

/// Counts the slow runs of A/A sessions given as `(base, head)` run values. A side is
/// classified on the "worse" scale (a throughput's slow mode is its low one); a session with
/// fewer than `modes::MIN_RUNS` runs on a side (or a value that has no log) is not counted.
pub fn tally<S: AsRef<[f64]>>(sessions: &[(S, S)], direction: Direction) -> SlowModeTally {
    let sign = direction.worse_sign();
    let worse_log = |x: &[f64]| -> Vec<f64> { x.iter().map(|v| sign * v.ln()).collect() };
    let (mut slow_runs, mut runs, mut counted) = (0, 0, 0);
    let mut excesses = Vec::new();
    for (base, head) in sessions {
        let (base, head) = (worse_log(base.as_ref()), worse_log(head.as_ref()));
        let (Some(b), Some(h)) = (classify(&base), classify(&head)) else {
            continue;
        };
        counted += 1;
        for (logs, side) in [(&base, &b), (&head, &h)] {
            runs += logs.len();
            for (v, slow) in logs.iter().zip(&side.slow) {
                if *slow {
                    slow_runs += 1;
                    excesses.push(v - side.typical);
                }
            }
        }
    }
    SlowModeTally {
        slow_runs: slow_runs as i64,
        runs: runs as i64,
        sessions: counted,
        excess: median(&excesses),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Twelve runs a side around 1000 ns with a little scatter; the runs at `slow` +30%.
    fn side(offset: usize, slow: &[usize]) -> Vec<f64> {
        (0..12)
            .map(|i| {
                let scatter = 1.0 + 0.002 * (((i + offset) * 7 % 5) as f64 - 2.0);
                let mode = if slow.contains(&i) { 1.3 } else { 1.0 };
                1000.0 * scatter * mode
            })
            .collect()
    }

    #[test]
    fn slow_runs_are_summed_over_sessions_and_both_sides() {
        let sessions = [
            (side(0, &[2, 8]), side(1, &[5, 11])),
            (side(2, &[0, 6]), side(3, &[3, 9])),
        ];
        let t = tally(&sessions, Direction::LowerIsBetter);
        assert_eq!((t.slow_runs, t.runs, t.sessions), (8, 48, 2));
        let excess = t.excess.expect("slow runs have an excess");
        assert!((excess - 1.3f64.ln()).abs() < 0.01, "{excess}");
    }

    #[test]
    fn a_throughput_is_slow_when_low_and_short_sessions_are_not_counted() {
        // Ops per second: the slow mode is 1/1.3 of the typical rate.
        let rate = |v: Vec<f64>| v.iter().map(|x| 1e9 / x).collect::<Vec<f64>>();
        let sessions = [
            (rate(side(0, &[4, 10])), rate(side(1, &[1, 7]))),
            // Five runs a side: too few to tell a mode from scatter.
            (
                rate(side(2, &[0]))[..5].to_vec(),
                rate(side(3, &[]))[..5].to_vec(),
            ),
        ];
        let t = tally(&sessions, Direction::HigherIsBetter);
        assert_eq!((t.slow_runs, t.runs, t.sessions), (4, 24, 1));
        // Read the wrong way, the typical runs are the high ones and nothing is slow.
        assert_eq!(tally(&sessions, Direction::LowerIsBetter).slow_runs, 0);
    }

    #[test]
    fn calm_runs_have_no_slow_run_and_no_excess() {
        let t = tally(&[(side(0, &[]), side(4, &[]))], Direction::LowerIsBetter);
        assert_eq!(
            (t.slow_runs, t.runs, t.sessions, t.excess),
            (0, 24, 1, None)
        );
    }
}
