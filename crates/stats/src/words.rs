//! How results read: percentages, intervals, values with units and verdict words. The one
//! vocabulary of the CLI tables, the PR comment and the dashboard, so a row says the same thing
//! everywhere. Plain text; the comment adds Markdown and the dashboard HTML around it.

use benchgate_api::{BenchmarkResult, Direction, VerdictKind};

use crate::gate::exact_changed;

/// `+3.1%`, `-0.42%`, `+12%`: two decimals near zero, fewer when large.
pub fn percent(p: f64) -> String {
    let sign = if p >= 0.0 { "+" } else { "-" };
    let a = p.abs();
    let digits = if a >= 10.0 {
        0
    } else if a >= 1.0 {
        1
    } else {
        2
    };
    format!("{sign}{a:.digits$}%")
}

/// A margin as `±1.0%`.
pub fn margin(m_pct: f64) -> String {
    format!("±{}", percent(m_pct).trim_start_matches(['+', '-']))
}

fn bound(b: Option<f64>, low: bool) -> String {
    match b {
        Some(p) => percent(p),
        None if low => "-∞".to_owned(),
        None => "+∞".to_owned(),
    }
}

/// `[-1.2%, +3.4%]`; "not bounded yet" while the anytime interval is still the whole line
/// (too few rounds for any bound at this error level).
pub fn interval(i: [Option<f64>; 2]) -> String {
    if i == [None, None] {
        return "not bounded yet".to_owned();
    }
    format!("[{}, {}]", bound(i[0], true), bound(i[1], false))
}

/// The change column: the estimate with its interval when the interval decides, only the
/// interval when it does not (an undecided midpoint means nothing), the values themselves for
/// an exact change from zero, and a dash when there is no analysis.
pub fn change(r: &BenchmarkResult) -> String {
    match r.verdict {
        VerdictKind::Slower | VerdictKind::Faster => match r.change_pct {
            Some(p) => format!("{} {}", percent(p), interval(r.interval_pct)),
            None => interval(r.interval_pct),
        },
        VerdictKind::Exact => match (r.change_pct, r.base_center, r.head_center) {
            (Some(p), _, _) => format!("{} (exact)", percent(p)),
            (None, Some(b), Some(h)) => {
                format!("{} → {} (exact)", value(b, &r.unit), value(h, &r.unit))
            }
            _ => "exact".to_owned(),
        },
        VerdictKind::Equivalent | VerdictKind::NoResultYet | VerdictKind::BelowResolution => {
            interval(r.interval_pct)
        }
        VerdictKind::NotAnalysed | VerdictKind::OnlyInBase | VerdictKind::OnlyInHead => {
            "—".to_owned()
        }
    }
}

/// The verdict in words, for performance (a throughput drop is "slower").
pub fn verdict(r: &BenchmarkResult) -> String {
    let m = margin(r.margin_pct);
    match r.verdict {
        VerdictKind::Slower if r.gated && !r.selected => {
            "slower, but not significant across the gated benchmarks (e-BH); does not fail the check"
                .to_owned()
        }
        VerdictKind::Slower if r.practical => format!("slower (beyond {m})"),
        VerdictKind::Slower => format!("slower (within {m})"),
        VerdictKind::Faster if r.practical => format!("faster (beyond {m})"),
        VerdictKind::Faster => format!("faster (within {m})"),
        VerdictKind::Equivalent => format!("no change beyond {m}"),
        VerdictKind::NoResultYet => match r.rounds_needed {
            Some(n) => format!("no result yet — needs ~{n} more {}", more_of(r)),
            None => "no result yet".to_owned(),
        },
        VerdictKind::BelowResolution => "below this runner's resolution".to_owned(),
        VerdictKind::Exact if !exact_changed(r) => "unchanged (exact)".to_owned(),
        VerdictKind::Exact if crate::gate::is_regression_ignoring_gate(r) => {
            "slower (exact count)".to_owned()
        }
        VerdictKind::Exact => "faster (exact count)".to_owned(),
        VerdictKind::NotAnalysed => match &r.reason {
            Some(why) => format!("not analysed: {why}"),
            None => "not analysed".to_owned(),
        },
        VerdictKind::OnlyInBase => "only in base (removed in head)".to_owned(),
        VerdictKind::OnlyInHead => "only in head (new)".to_owned(),
    }
}

/// What a row needs more of: rounds of interleaved pairs, or runs of each side for two
/// recordings compared unpaired.
pub fn more_of(r: &BenchmarkResult) -> &'static str {
    if r.runs.is_some() {
        "runs of each side"
    } else {
        "rounds"
    }
}

/// How much a row rests on: `12` pairs, or `5+6` runs of base and head for two recordings.
pub fn sample_size(r: &BenchmarkResult) -> String {
    match r.runs {
        Some([base, head]) => format!("{base}+{head}"),
        None => r.n.to_string(),
    }
}

/// Whether the verdict words announce a decided performance change (the comment bolds these).
pub fn is_decided_change(r: &BenchmarkResult) -> bool {
    matches!(r.verdict, VerdictKind::Slower | VerdictKind::Faster)
        || (r.verdict == VerdictKind::Exact && exact_changed(r))
}

/// The metric as a row names it: `time`, `cpu_time (not gated)`, and the direction for a
/// higher-is-better metric (`throughput, higher is better`).
pub fn metric_label(r: &BenchmarkResult) -> String {
    let mut label = r.metric.clone();
    if r.direction == Direction::HigherIsBetter {
        label.push_str(", higher is better");
    }
    if !r.gated && r.verdict.is_analysed() {
        label.push_str(" (not gated)");
    }
    label
}

/// A centre value, or a dash when the side has none.
pub fn center(v: Option<f64>, unit: &str) -> String {
    v.map_or_else(|| "—".to_owned(), |v| value(v, unit))
}

/// A measured value in a readable unit: times scale through ns, µs, ms, s; bytes through KiB,
/// MiB, GiB; anything else keeps its unit with four significant digits.
pub fn value(v: f64, unit: &str) -> String {
    const TIME: [(&str, f64); 4] = [("s", 1e9), ("ms", 1e6), ("µs", 1e3), ("ns", 1.0)];
    const BYTES: [(&str, f64); 4] = [
        ("GiB", 1_073_741_824.0),
        ("MiB", 1_048_576.0),
        ("KiB", 1024.0),
        ("B", 1.0),
    ];
    let in_ns = match unit {
        "ns" => Some(v),
        "us" | "µs" => Some(v * 1e3),
        "ms" => Some(v * 1e6),
        "s" => Some(v * 1e9),
        _ => None,
    };
    if let Some(ns) = in_ns {
        let (name, scale) = TIME
            .iter()
            .find(|(_, s)| ns.abs() >= *s)
            .unwrap_or(&TIME[3]);
        return format!("{} {name}", significant(ns / scale));
    }
    if unit == "bytes" || unit == "B" {
        let (name, scale) = BYTES
            .iter()
            .find(|(_, s)| v.abs() >= *s)
            .unwrap_or(&BYTES[3]);
        return format!("{} {name}", significant(v / scale));
    }
    if unit == "count" {
        return significant(v);
    }
    format!("{} {unit}", significant(v)).trim_end().to_owned()
}

/// Four significant digits, no exponent for everyday magnitudes, whole numbers as they are.
fn significant(v: f64) -> String {
    let a = v.abs();
    if v == v.trunc() && a < 1e15 {
        return format!("{v:.0}");
    }
    let decimals = if a >= 1000.0 {
        0
    } else if a >= 100.0 {
        1
    } else if a >= 10.0 {
        2
    } else {
        3
    };
    format!("{v:.decimals$}")
}

/// `1 slower, 2 no change; 2 other metrics are not gated`: the gated rows' verdicts counted, for headings
/// and the check's title (a slower peak memory must not read like a failed gate).
pub fn headline(results: &[BenchmarkResult]) -> String {
    // Ignored rows are left out of the report, so the headline does not count them either.
    let results: Vec<BenchmarkResult> = results
        .iter()
        .filter(|r| !r.is_ignored())
        .cloned()
        .collect();
    if results.is_empty() {
        return "no results yet".to_owned();
    }
    let gated: Vec<&BenchmarkResult> = results
        .iter()
        .filter(|r| {
            r.gated && r.verdict != VerdictKind::OnlyInBase && r.verdict != VerdictKind::OnlyInHead
        })
        .collect();
    let count = |f: &dyn Fn(&BenchmarkResult) -> bool| gated.iter().filter(|r| f(r)).count();
    let exact_worse = |r: &BenchmarkResult| crate::gate::is_regression_ignoring_gate(r);
    let parts: [(usize, &str); 7] = [
        (
            count(&|r| r.verdict == VerdictKind::Slower || exact_worse(r)),
            "slower",
        ),
        (
            count(&|r| r.verdict == VerdictKind::Faster || (exact_changed(r) && !exact_worse(r))),
            "faster",
        ),
        (
            count(&|r| {
                r.verdict == VerdictKind::Equivalent
                    || (r.verdict == VerdictKind::Exact && !exact_changed(r))
            }),
            "no change",
        ),
        (
            count(&|r| r.verdict == VerdictKind::NoResultYet),
            "no result yet",
        ),
        (
            count(&|r| r.verdict == VerdictKind::BelowResolution),
            "below resolution",
        ),
        (
            count(&|r| r.verdict == VerdictKind::NotAnalysed),
            "not analysed",
        ),
        (0, ""),
    ];
    let mut words: Vec<String> = parts
        .iter()
        .filter(|(n, _)| *n > 0)
        .map(|(n, w)| format!("{n} {w}"))
        .collect();
    let one_sided = results
        .iter()
        .filter(|r| matches!(r.verdict, VerdictKind::OnlyInBase | VerdictKind::OnlyInHead))
        .count();
    if one_sided > 0 {
        words.push(format!("{one_sided} on one side only"));
    }
    let parts = words.join(", ");
    let not_gated = results
        .iter()
        .filter(|r| !r.gated && r.verdict.is_analysed())
        .count();
    let metrics = |n: usize| if n == 1 { "metric" } else { "metrics" };
    match not_gated {
        0 => parts,
        1 if parts.is_empty() => "1 metric, not gated".to_owned(),
        n if parts.is_empty() => format!("{n} metrics, none gated"),
        n => {
            let verb = if n == 1 { "is" } else { "are" };
            format!("{parts}; {n} other {} {verb} not gated", metrics(n))
        }
    }
}

/// A duration as a person reads it: `9.1 s`, `1 min 42 s`, `2 h 05 min`.
pub fn elapsed(seconds: f64) -> String {
    let s = if seconds.is_finite() {
        seconds.max(0.0)
    } else {
        0.0
    };
    if s < 60.0 {
        return format!("{s:.1} s");
    }
    let whole = s.round() as u64;
    if whole < 3600 {
        format!("{} min {:02} s", whole / 60, whole % 60)
    } else {
        format!("{} h {:02} min", whole / 3600, whole % 3600 / 60)
    }
}

/// "just now", "3 minutes ago", "2 days ago".
pub fn age(seconds: i64) -> String {
    let s = seconds.max(0);
    let (n, unit) = match s {
        0..60 => return "just now".to_owned(),
        60..3600 => (s / 60, "minute"),
        3600..86_400 => (s / 3600, "hour"),
        _ => (s / 86_400, "day"),
    };
    format!("{n} {unit}{} ago", if n == 1 { "" } else { "s" })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn row(verdict: VerdictKind, direction: Direction, change: Option<f64>) -> BenchmarkResult {
        let mut r = BenchmarkResult::unanalysed(
            "parse",
            "throughput",
            "ops/s",
            direction,
            verdict,
            "why".into(),
        );
        (r.n, r.gated, r.selected, r.practical, r.reason) = (12, true, true, true, None);
        (r.base_center, r.head_center, r.change_pct) = (Some(69.7), Some(11.6), change);
        r.interval_pct = [Some(-85.0), Some(-80.0)];
        r
    }

    #[test]
    fn elapsed_reads_as_seconds_minutes_or_hours() {
        assert_eq!(elapsed(9.14), "9.1 s");
        assert_eq!(elapsed(102.4), "1 min 42 s");
        assert_eq!(elapsed(7500.0), "2 h 05 min");
        assert_eq!(elapsed(f64::NAN), "0.0 s");
    }

    #[test]
    fn percentages_keep_their_sign_and_sensible_precision() {
        assert_eq!(percent(3.0512), "+3.1%");
        assert_eq!(percent(-0.4219), "-0.42%");
        assert_eq!(percent(12.6), "+13%");
        assert_eq!(margin(1.0), "±1.0%");
        assert_eq!(interval([None, Some(2.0)]), "[-∞, +2.0%]");
        assert_eq!(interval([None, None]), "not bounded yet");
    }

    #[test]
    fn values_scale_to_a_readable_unit() {
        assert_eq!(value(1_234_567.0, "ns"), "1.235 ms");
        assert_eq!(value(0.5, "s"), "500 ms");
        assert_eq!(value(2048.0, "bytes"), "2 KiB");
        assert_eq!(value(42.5, "allocs"), "42.50 allocs");
        assert_eq!(value(16.0, "count"), "16");
        assert_eq!(center(None, "ns"), "—");
    }

    #[test]
    fn a_throughput_drop_reads_as_slower_with_its_raw_change() {
        let r = row(VerdictKind::Slower, Direction::HigherIsBetter, Some(-83.4));
        assert_eq!(change(&r), "-83% [-85%, -80%]");
        assert_eq!(verdict(&r), "slower (beyond ±1.0%)");
        assert_eq!(metric_label(&r), "throughput, higher is better");
    }

    #[test]
    fn rows_without_analysis_say_why() {
        let mut r = row(VerdictKind::NotAnalysed, Direction::LowerIsBetter, None);
        r.reason = Some("1 pair; needs 2".into());
        assert_eq!(verdict(&r), "not analysed: 1 pair; needs 2");
        assert_eq!(change(&r), "—");
        let r = row(VerdictKind::OnlyInHead, Direction::LowerIsBetter, None);
        assert_eq!(verdict(&r), "only in head (new)");
    }

    #[test]
    fn an_exact_change_from_zero_shows_both_values() {
        let mut r = row(VerdictKind::Exact, Direction::LowerIsBetter, None);
        (r.unit, r.base_center, r.head_center) = ("bytes".into(), Some(0.0), Some(16.0));
        r.interval_pct = [None, None];
        assert_eq!(change(&r), "0 B → 16 B (exact)");
        assert_eq!(verdict(&r), "slower (exact count)");
        assert_eq!(headline(&[r]), "1 slower");
    }

    #[test]
    fn headline_counts_gated_rows_and_mentions_the_rest() {
        let slower = row(VerdictKind::Slower, Direction::HigherIsBetter, Some(-83.0));
        let mut cpu = row(VerdictKind::Faster, Direction::LowerIsBetter, Some(-3.0));
        cpu.gated = false;
        let new = row(VerdictKind::OnlyInHead, Direction::LowerIsBetter, None);
        assert_eq!(
            headline(&[slower.clone(), cpu.clone(), new]),
            "1 slower, 1 on one side only; 1 other metric is not gated"
        );
        let mut peak = cpu.clone();
        peak.metric = "peak_rss".into();
        assert_eq!(
            headline(&[slower, cpu.clone(), peak.clone()]),
            "1 slower; 2 other metrics are not gated"
        );
        assert_eq!(headline(&[cpu.clone()]), "1 metric, not gated");
        assert_eq!(headline(&[cpu, peak]), "2 metrics, none gated");
        assert_eq!(age(7200), "2 hours ago");
    }
}
