//! The audit's runner flag over a runner's life, for docs/statistics.md §8b: simulated runners
//! whose A/A canaries claim a change with a fixed rate, each watched after every canary for
//! 1,000 canaries. For a rate at α it prints how often the flag ever fired (the bound is δ = α);
//! for rates above α, how often it fired and after how many canaries. Beside it, the rule it
//! replaced (flag when the exact 95% interval lies above α, looked at after every canary).
//!
//! `cargo run --release -p benchgate-stats --example audit_flag [-- RUNNERS SEED...]`

use benchgate_stats::audit::Rate;
use benchgate_stats::flag::claim_rate_flag;

#[path = "common/rng.rs"]
mod rng;
use rng::Xoshiro256;

const ALPHA: f64 = 0.05;
const CANARIES: usize = 1000;

/// One rate's tally over `runners` runners: flagged by each rule, and when.
fn tally(rate: f64, runners: usize, rng: &mut Xoshiro256) -> (usize, Vec<usize>, usize) {
    let (mut flagged, mut at, mut fixed) = (0, Vec::new(), 0);
    for _ in 0..runners {
        let outcomes: Vec<bool> = (0..CANARIES).map(|_| rng.uniform() < rate).collect();
        let f = claim_rate_flag(outcomes.iter().copied(), ALPHA, ALPHA);
        if let Some(n) = f.fired_at {
            flagged += 1;
            at.push(n);
        }
        // The old rule, looked at after every canary as the page did (its lower end only rises
        // at a claim, so looking there is enough).
        let mut hits = 0;
        let fired = outcomes.iter().enumerate().any(|(i, claimed)| {
            hits += u64::from(*claimed);
            *claimed && Rate::new(hits, i as u64 + 1, ALPHA).credibly_above(ALPHA)
        });
        fixed += usize::from(fired);
    }
    at.sort_unstable();
    (flagged, at, fixed)
}

fn quantile(sorted: &[usize], q: f64) -> String {
    if sorted.is_empty() {
        return "—".to_owned();
    }
    let i = ((sorted.len() - 1) as f64 * q).round() as usize;
    sorted[i].to_string()
}

fn main() {
    let mut args = std::env::args().skip(1);
    let runners: usize = args.next().map_or(2000, |a| a.parse().expect("RUNNERS"));
    let seeds: Vec<u64> = {
        let given: Vec<u64> = args.map(|a| a.parse().expect("SEED")).collect();
        if given.is_empty() {
            vec![1, 2, 3, 4, 5]
        } else {
            given
        }
    };
    println!(
        "{runners} runners per seed, {CANARIES} canaries each, looked at after every canary; \
         alpha = delta = {ALPHA}; seeds {seeds:?}"
    );
    println!(
        "| claim rate | seed | flagged ever | canaries to the flag: median, 90th pct, max | \
         old rule (interval above α) flagged ever |"
    );
    println!("|---|---|---|---|---|");
    for multiple in [1.0, 1.5, 2.0, 3.0] {
        let rate = multiple * ALPHA;
        for &seed in &seeds {
            let mut rng = Xoshiro256::new(seed);
            let (flagged, at, fixed) = tally(rate, runners, &mut rng);
            println!(
                "| {:.1}% ({multiple}·α) | {seed} | {flagged} of {runners} ({:.2}%) | {}, {}, {} | {fixed} of {runners} ({:.1}%) |",
                100.0 * rate,
                100.0 * flagged as f64 / runners as f64,
                quantile(&at, 0.5),
                quantile(&at, 0.9),
                at.last().map_or("—".to_owned(), ToString::to_string),
                100.0 * fixed as f64 / runners as f64,
            );
        }
    }
}
