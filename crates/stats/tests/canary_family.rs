//! The audit's promise per canary (docs/statistics.md §8b): a healthy runner's A/A canaries claim
//! a change anywhere at most α of the time, whatever the suite's size, so the runner flag, fed
//! one outcome per canary, rarely fires on it. Simulated canaries: every gated row of an A/A
//! canary is 20 rounds of paired log-ratios of pure noise, judged by the anytime interval at the
//! level each row gets ([`canary_row_alpha`]); the canary claims when any row's interval ever
//! leaves zero (an upper bound on the first-decision rule, which may stop a row at "no change"
//! first). Judged alone, each row at α, a 30-row canary claims about a third of the time.
//!
//! `cargo test -p benchgate-stats --test integration canary_family -- --nocapture` prints the
//! table of docs/statistics.md §8b; the regenerating run with more canaries is `--ignored`.

use crate::normal::Normal;
use benchgate_stats::audit::canary_row_alpha;
use benchgate_stats::flag::claim_rate_flag;
use benchgate_stats::{ConfidenceSequence, MixtureBoundary};

const ALPHA: f64 = 0.05;
/// The flag's lifetime false-alarm bound δ, as the server uses it.
const DELTA: f64 = 0.05;
const ROUNDS: usize = 20;
/// Spread of one pair's log-ratio; the interval is scale-free, so any value gives the same rates.
const SPREAD: f64 = 0.02;

/// How many rows of one simulated A/A canary of `rows` rows claim a change under `boundary`.
fn rows_claiming(rows: usize, boundary: MixtureBoundary, rng: &mut Normal) -> usize {
    (0..rows)
        .filter(|_| {
            let mut cs = ConfidenceSequence::new(boundary, 0.0);
            let mut claimed = false;
            for _ in 0..ROUNDS {
                cs.push(SPREAD * rng.draw()).unwrap();
                claimed |= !cs.running_interval().contains(0.0);
            }
            claimed
        })
        .count()
}

/// The boundary of each row of a `rows`-row canary: at α/rows as a family, else at α.
fn row_boundary(rows: usize, family: bool) -> MixtureBoundary {
    let row_alpha = if family {
        canary_row_alpha(ALPHA, rows)
    } else {
        ALPHA
    };
    MixtureBoundary::tuned(row_alpha, ROUNDS as f64).unwrap()
}

/// Share of `canaries` A/A canaries of `rows` rows that claim, and of their rows.
fn rates(rows: usize, family: bool, canaries: usize, seed: u64) -> (f64, f64) {
    let boundary = row_boundary(rows, family);
    let mut rng = Normal(seed);
    let (mut canary_hits, mut row_hits) = (0usize, 0usize);
    for _ in 0..canaries {
        let hits = rows_claiming(rows, boundary, &mut rng);
        row_hits += hits;
        canary_hits += usize::from(hits > 0);
    }
    (
        canary_hits as f64 / canaries as f64,
        row_hits as f64 / (canaries * rows) as f64,
    )
}

/// Done-when of the audit: 200 healthy runners with a 30-row suite, 1,000 canaries each, are
/// flagged at most 5% of the time; 200 runners whose canaries claim at 3α are flagged at least
/// 95% of the time within the same 1,000.
#[test]
fn a_healthy_runner_with_a_thirty_row_suite_is_rarely_flagged_and_one_at_three_alpha_is_found() {
    let rows = 30;
    let boundary = row_boundary(rows, true);
    let mut flagged = 0;
    let mut claims = 0;
    for runner in 0..200u64 {
        let mut rng = Normal(0x5eed_0000 + runner);
        let outcomes: Vec<bool> = (0..1000)
            .map(|_| rows_claiming(rows, boundary, &mut rng) > 0)
            .collect();
        claims += outcomes.iter().filter(|c| **c).count();
        flagged += usize::from(claim_rate_flag(outcomes, ALPHA, DELTA).fired());
    }
    let per_canary = claims as f64 / 200_000.0;
    eprintln!(
        "30 rows, each at α/30: A/A canaries claiming {:.2}%; healthy runners flagged {flagged} of 200",
        100.0 * per_canary
    );
    assert!(per_canary <= ALPHA, "per canary {per_canary}");
    assert!(flagged <= 10, "{flagged} of 200 healthy runners flagged");

    // A runner whose canaries claim at 3α (a biased machine, whatever its suite): found.
    let mut uniform = Normal(0xb1a5);
    let mut found = 0;
    for _ in 0..200 {
        let outcomes: Vec<bool> = (0..1000)
            .map(|_| uniform.draw().abs() < 0.1891) // P(|Z| < 0.1891) = 0.15 = 3α
            .collect();
        found += usize::from(claim_rate_flag(outcomes, ALPHA, DELTA).fired());
    }
    assert!(found >= 190, "{found} of 200 runners at 3α flagged");
}

/// Judged alone, each row at α, the canary's rate grows with the rows; as one family it stays
/// under α. The figures of docs/statistics.md §8b come from the ignored run below.
#[test]
fn judged_alone_rows_add_up_and_as_a_family_they_do_not() {
    let (alone, _) = rates(30, false, 2000, 7);
    let (family, _) = rates(30, true, 2000, 7);
    assert!(alone > 3.0 * ALPHA, "30 rows judged alone claim {alone}");
    assert!(family <= ALPHA, "30 rows as a family claim {family}");
}

/// The table of docs/statistics.md §8b: per canary and per row, alone and as a family.
#[test]
#[ignore = "regenerates docs/statistics.md §8b's table (seconds; kept out of the default run)"]
fn canary_rates_table() {
    eprintln!(
        "| rows | per canary, rows alone | per row, alone | per canary, as a family | per row, family |"
    );
    eprintln!("|---:|---:|---:|---:|---:|");
    for rows in [1, 3, 10, 30] {
        let (ca, ra) = rates(rows, false, 20_000, rows as u64);
        let (cf, rf) = rates(rows, true, 20_000, rows as u64);
        eprintln!(
            "| {rows} | {:.2}% | {:.2}% | {:.2}% | {:.3}% |",
            100.0 * ca,
            100.0 * ra,
            100.0 * cf,
            100.0 * rf
        );
    }
}
