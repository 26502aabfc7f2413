//! Claims answered against a comparison's rows: which row each names, its answer, and what
//! the claim's own evidence had, as the comment, the check and `compare` print it.

use benchgate_api::{BenchmarkResult, ClaimAnswer, Direction, VerdictKind};
use benchgate_stats::words;

use crate::{Answer, Claim, Match, Measured, Metric, Source, answer, match_name};

/// The row metrics a claim's metric is answered from, most specific first.
fn metrics_for(metric: Metric) -> &'static [&'static str] {
    match metric {
        Metric::Time => &["time", "wall_time", "cpu_time"],
        Metric::Throughput => &["throughput", "time", "wall_time"],
        Metric::Allocations => &["allocs_per_op", "allocations", "allocs"],
        Metric::Memory => &["bytes_per_op", "bytes", "peak_rss", "memory"],
    }
}

fn source_name(source: Source) -> &'static str {
    match source {
        Source::Benchstat => "benchstat",
        Source::Criterion => "criterion",
        Source::Hyperfine => "hyperfine",
        Source::GoogleBenchmark => "compare.py",
        Source::Benchcmp => "cargo benchcmp",
        Source::Critcmp => "critcmp",
        Source::Table => "table",
        Source::BeforeAfter => "before/after",
        Source::Sentence => "sentence",
        Source::Command => "explicit",
    }
}

/// Each claim answered from `results` (the rows of one comparison); `this_machine` is the
/// measuring machine's one-line summary, to say when a claim came from another.
pub fn answer_all(claims: &[Claim], results: &[BenchmarkResult]) -> Vec<ClaimAnswer> {
    claims.iter().map(|c| answer_one(c, results)).collect()
}

fn answer_one(claim: &Claim, results: &[BenchmarkResult]) -> ClaimAnswer {
    let mut notes = Vec::new();
    match claim.runs {
        Some(1) => notes.push("one run per side: no statistics behind it".to_owned()),
        Some(n) => notes.push(format!("{n} runs per side")),
        None => {}
    }
    if let Some(machine) = &claim.machine {
        notes.push(format!("the author measured on {machine}"));
    }
    let wanted = metrics_for(claim.metric);
    let candidates: Vec<&BenchmarkResult> = results
        .iter()
        .filter(|r| wanted.contains(&r.metric.as_str()))
        .collect();
    let mut names: Vec<&str> = candidates.iter().map(|r| r.name.as_str()).collect();
    names.dedup();
    let matched = match_name(claim.benchmark.as_deref(), &names);
    let row = matched.series().and_then(|name| {
        // The most specific metric the row has.
        wanted.iter().find_map(|m| {
            candidates
                .iter()
                .find(|r| r.name == name && r.metric == *m)
                .copied()
        })
    });
    match &matched {
        Match::Ambiguous(several) => notes.push(format!(
            "names several benchmarks ({}): not answered",
            several.join(", ")
        )),
        Match::Unmatched if claim.benchmark.is_some() => {
            notes.push("names no benchmark of this suite: not answered".to_owned())
        }
        Match::Unmatched => {
            notes.push("names no benchmark, and the suite has several: not answered".to_owned())
        }
        _ => {}
    }
    let mut out = ClaimAnswer {
        claimed_benchmark: claim.benchmark.clone(),
        benchmark: None,
        metric: None,
        claimed_pct: claim.change_pct,
        measured_pct: None,
        answer: None,
        notes,
        source: source_name(claim.source).to_owned(),
        quote: claim.quote.clone(),
    };
    let Some(row) = row else {
        return out;
    };
    let higher_is_better = row.direction == Direction::HigherIsBetter;
    out.benchmark = Some(row.name.clone());
    out.metric = Some(row.metric.clone());
    out.claimed_pct = crate::answer::claimed_in(claim, higher_is_better);
    out.measured_pct = Some(row.interval_pct);
    let [Some(lo), Some(hi)] = row.interval_pct else {
        out.notes
            .push("no interval yet (too few rounds): not answered".to_owned());
        return out;
    };
    out.notes
        .extend(counters_beside(row, claim.improves(), results));
    let measured = Measured {
        interval_pct: [lo, hi],
        higher_is_better,
        equivalent: row.verdict == VerdictKind::Equivalent,
    };
    let a = answer(claim, &measured);
    if a == Answer::NotShownYet
        && let Some(n) = row.rounds_needed
    {
        out.notes.push(format!("an answer needs ~{n} more rounds"));
    }
    out.answer = Some(a.words().to_owned());
    out
}

/// What the benchmark's exact counters (allocations, bytes: rows of one value per side) did
/// beside the timing a claim is answered from: a win from "no longer allocating" must show in
/// allocs/op, and a count that moved the other way is worth a look.
fn counters_beside(
    row: &BenchmarkResult,
    improves: bool,
    results: &[BenchmarkResult],
) -> Vec<String> {
    results
        .iter()
        .filter(|r| r.name == row.name && r.metric != row.metric && r.verdict == VerdictKind::Exact)
        .filter_map(|r| {
            let (base, head) = (r.base_center?, r.head_center?);
            let better = match r.direction {
                Direction::LowerIsBetter => head < base,
                Direction::HigherIsBetter => head > base,
            };
            let value = |v: f64| format!("{}", (v * 1000.0).round() / 1000.0);
            Some(if base == head {
                format!("{} unchanged at {} (exact)", r.metric, value(base))
            } else {
                let moved = if better == improves {
                    "with the claim"
                } else {
                    "against the claim"
                };
                let pct = if base != 0.0 {
                    format!(", {}", words::percent((head / base - 1.0) * 100.0))
                } else {
                    String::new()
                };
                format!(
                    "{} {} → {} (exact{pct}): moved {moved}",
                    r.metric,
                    value(base),
                    value(head)
                )
            })
        })
        .collect()
}

/// One line per answered claim for a terminal: "parse −20% claimed: confirmed, measured
/// −21.3% [−24.0%, −18.2%] (benchstat; 10 runs per side)".
pub fn lines(answers: &[ClaimAnswer]) -> Vec<String> {
    answers
        .iter()
        .map(|a| {
            let [lo, hi] = a.claimed_pct;
            let claimed = if (lo - hi).abs() < 0.05 {
                words::percent(lo)
            } else {
                format!("{} to {}", words::percent(lo), words::percent(hi))
            };
            let name = a
                .benchmark
                .as_deref()
                .or(a.claimed_benchmark.as_deref())
                .unwrap_or("(no benchmark named)");
            let measured = match a.measured_pct {
                Some(m @ [Some(_), Some(_)]) => format!(", measured {}", words::interval(m)),
                _ => String::new(),
            };
            let notes = std::iter::once(a.source.clone())
                .chain(a.notes.iter().cloned())
                .collect::<Vec<_>>()
                .join("; ");
            format!(
                "{name} {claimed} claimed: {}{measured} ({notes})",
                a.answer.as_deref().unwrap_or("not answered")
            )
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn row(name: &str, metric: &str, interval: [f64; 2], verdict: VerdictKind) -> BenchmarkResult {
        let mut r = BenchmarkResult::only_in(
            benchgate_api::Side::Base,
            name,
            metric,
            "ns",
            Direction::LowerIsBetter,
        );
        r.interval_pct = [Some(interval[0]), Some(interval[1])];
        r.verdict = verdict;
        r.rounds_needed = Some(12);
        r
    }

    #[test]
    fn claims_are_answered_from_their_row_with_their_evidence() {
        let results = [
            row(
                "BenchmarkParse-8",
                "time",
                [-24.0, -18.0],
                VerdictKind::Faster,
            ),
            row(
                "BenchmarkParse-8",
                "allocs_per_op",
                [-50.0, -50.0],
                VerdictKind::Faster,
            ),
            row("render", "time", [-35.0, 5.0], VerdictKind::NoResultYet),
        ];
        let claims = crate::read(
            "```\ncpu: AMD EPYC 7B13\nname     old time/op  new time/op  delta\n\
             Parse-8  10.0ns ± 1%  8.0ns ± 2%  -20.00%  (p=0.000 n=10+10)\n\n\
             name     old allocs/op  new allocs/op  delta\n\
             Parse-8  4.00 ± 0%  2.00 ± 0%  -50.00%  (p=0.000 n=10+10)\n```\n\
             `render` is 30% faster, `emit` 2x faster.",
        );
        let answered = answer_all(&claims, &results);
        let words: Vec<Option<&str>> = answered.iter().map(|a| a.answer.as_deref()).collect();
        assert_eq!(
            words,
            [
                Some("confirmed"),
                Some("confirmed"),
                Some("not shown yet"),
                None
            ]
        );
        assert_eq!(answered[0].benchmark.as_deref(), Some("BenchmarkParse-8"));
        assert_eq!(answered[1].metric.as_deref(), Some("allocs_per_op"));
        assert!(answered[0].notes.contains(&"10 runs per side".to_owned()));
        assert_eq!(answered[0].notes[1], "the author measured on AMD EPYC 7B13");
        assert!(
            answered[2]
                .notes
                .contains(&"an answer needs ~12 more rounds".to_owned())
        );
        assert!(
            answered[3]
                .notes
                .contains(&"names no benchmark of this suite: not answered".to_owned())
        );
        let shown = lines(&answered);
        assert_eq!(
            shown[0],
            "BenchmarkParse-8 -20% claimed: confirmed, measured [-24%, -18%] (benchstat; \
             10 runs per side; the author measured on AMD EPYC 7B13)"
        );
    }

    #[test]
    fn a_timing_claim_says_what_the_exact_counters_did() {
        let exact = |metric: &str, base: f64, head: f64| {
            let mut r = row("decode", metric, [0.0, 0.0], VerdictKind::Exact);
            r.base_center = Some(base);
            r.head_center = Some(head);
            r
        };
        let claim = crate::read("`decode` is 30% faster: it no longer allocates per frame.");
        let notes = |results: &[BenchmarkResult]| answer_all(&claim, results)[0].notes.clone();
        let time = row("decode", "time", [-33.0, -27.0], VerdictKind::Faster);
        assert_eq!(
            notes(&[time.clone(), exact("allocs_per_op", 4.0, 1.0)]),
            ["allocs_per_op 4 → 1 (exact, -75%): moved with the claim"]
        );
        assert_eq!(
            notes(&[time.clone(), exact("allocs_per_op", 4.0, 4.0)]),
            ["allocs_per_op unchanged at 4 (exact)"]
        );
        assert_eq!(
            notes(&[time.clone(), exact("bytes_per_op", 512.0, 640.0)]),
            ["bytes_per_op 512 → 640 (exact, +25%): moved against the claim"]
        );
        // A counter of another benchmark, or one with spread, says nothing here.
        let mut other = exact("allocs_per_op", 4.0, 1.0);
        other.name = "encode".into();
        let noisy = row("decode", "instructions", [-5.0, -1.0], VerdictKind::Faster);
        assert!(notes(&[time, other, noisy]).is_empty());
    }
}
