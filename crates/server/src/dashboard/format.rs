//! How numbers, ages and verdicts read on the dashboard: one place, so every page says
//! "+2.1%" and "3 h ago" the same way.

use benchgate_api::{BenchmarkResult, VerdictKind};
use chrono::{DateTime, Utc};

/// A percent change with its sign, e.g. `+2.13%`, `−0.40%`.
pub fn signed_pct(pct: f64) -> String {
    let digits = if pct.abs() >= 10.0 { 1 } else { 2 };
    if pct < 0.0 {
        format!("−{:.*}%", digits, -pct)
    } else {
        format!("+{pct:.digits$}%")
    }
}

/// An interval in percent; an unbounded side reads as ∞, the whole line as the PR comment
/// says it.
pub fn interval_pct(bounds: [Option<f64>; 2]) -> String {
    match bounds {
        [None, None] => "not bounded yet".into(),
        [Some(lo), Some(hi)] => format!("[{}, {}]", signed_pct(lo), signed_pct(hi)),
        [lo, hi] => format!(
            "[{}, {}]",
            lo.map_or("−∞".to_string(), signed_pct),
            hi.map_or("+∞".to_string(), signed_pct)
        ),
    }
}

/// A log-scale spread as the percent a typical pair moves, `100(e^s − 1)`.
pub fn log_spread_pct(log: f64) -> f64 {
    benchgate_stats::percent_from_log(log)
}

/// A measured value in a readable unit: nanoseconds become µs/ms/s, bytes KiB/MiB/GiB.
pub fn value_with_unit(value: f64, unit: &str) -> String {
    let scaled = |steps: &[(f64, &str)]| {
        let (div, name) = steps
            .iter()
            .rev()
            .find(|(div, _)| value.abs() >= *div)
            .copied()
            .unwrap_or(steps[0]);
        format!("{} {name}", significant(value / div))
    };
    match unit {
        "ns" => scaled(&[(1.0, "ns"), (1e3, "µs"), (1e6, "ms"), (1e9, "s")]),
        "bytes" => scaled(&[
            (1.0, "B"),
            (1024.0, "KiB"),
            (1024.0 * 1024.0, "MiB"),
            (1024.0 * 1024.0 * 1024.0, "GiB"),
        ]),
        "count" => significant(value),
        other => format!("{} {other}", significant(value)),
    }
}

/// Four significant digits, without a trailing `.0` on whole numbers.
fn significant(x: f64) -> String {
    if x == x.trunc() && x.abs() < 1e15 {
        return format!("{x:.0}");
    }
    let magnitude = if x == 0.0 {
        0
    } else {
        x.abs().log10().floor() as i32
    };
    let decimals = (3 - magnitude).clamp(0, 6) as usize;
    format!("{x:.decimals$}")
}

/// "just now", "42 s ago", "5 min ago", "3 h ago", "12 d ago".
pub fn age(then: DateTime<Utc>, now: DateTime<Utc>) -> String {
    let ago = duration_words((now - then).num_seconds().max(0));
    if ago == "0 s" {
        "just now".into()
    } else {
        format!("{ago} ago")
    }
}

/// A number of seconds in the largest unit that fits: "42 s", "5 min", "3 h", "12 d".
pub fn duration_words(secs: i64) -> String {
    match secs {
        s if s < 60 => format!("{s} s"),
        s if s < 3600 => format!("{} min", s / 60),
        s if s < 86_400 => format!("{} h", s / 3600),
        s => format!("{} d", s / 86_400),
    }
}

/// The first 8 characters of a commit sha.
pub fn short_sha(sha: &str) -> &str {
    sha.get(..8).unwrap_or(sha)
}

/// What a verdict says, in the PR comment's words.
pub fn verdict_words(result: &BenchmarkResult) -> String {
    let words: String = match result.verdict {
        VerdictKind::Slower if result.practical => "slower".into(),
        VerdictKind::Slower => "slower (within the practical margin)".into(),
        VerdictKind::Faster if result.practical => "faster".into(),
        VerdictKind::Faster => "faster (within the practical margin)".into(),
        VerdictKind::Equivalent => "no change beyond the margin".into(),
        VerdictKind::NoResultYet => match result.rounds_needed {
            Some(n) => format!("no result yet — needs ~{n} more rounds"),
            None => "no result yet".into(),
        },
        VerdictKind::BelowResolution => "below this runner's resolution".into(),
        VerdictKind::Exact if result.change_pct == 0.0 => "unchanged (exact)".into(),
        VerdictKind::Exact => "changed (exact count)".into(),
    };
    match (result.gated, result.selected, result.verdict) {
        (false, _, _) => format!("{words} (not gated)"),
        (true, false, VerdictKind::Slower) => {
            format!("{words}, not significant across the gated benchmarks (e-BH)")
        }
        _ => words,
    }
}

/// The CSS class of a verdict, for its colour.
pub fn verdict_class(kind: VerdictKind) -> &'static str {
    match kind {
        VerdictKind::Slower => "slower",
        VerdictKind::Faster => "faster",
        VerdictKind::Equivalent | VerdictKind::Exact => "same",
        VerdictKind::NoResultYet | VerdictKind::BelowResolution => "open",
    }
}

/// The change column: the midpoint only when the interval decided something; an undecided
/// interval's midpoint is not a result and is not shown.
pub fn change_words(result: &BenchmarkResult) -> String {
    match result.verdict {
        VerdictKind::NoResultYet | VerdictKind::BelowResolution => "too small to tell yet".into(),
        _ => signed_pct(result.change_pct),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn percentages_carry_their_sign() {
        assert_eq!(signed_pct(2.134), "+2.13%");
        assert_eq!(signed_pct(-0.4), "−0.40%");
        assert_eq!(signed_pct(-12.34), "−12.3%");
        assert_eq!(interval_pct([None, Some(1.0)]), "[−∞, +1.00%]");
    }

    #[test]
    fn values_use_a_readable_unit() {
        assert_eq!(value_with_unit(1_234_567.0, "ns"), "1.235 ms");
        assert_eq!(value_with_unit(512.0, "ns"), "512 ns");
        assert_eq!(value_with_unit(3.0 * 1024.0 * 1024.0, "bytes"), "3 MiB");
        assert_eq!(value_with_unit(12.5, "ops/s"), "12.50 ops/s");
    }

    #[test]
    fn durations_pick_the_largest_unit() {
        assert_eq!(duration_words(42), "42 s");
        assert_eq!(duration_words(301), "5 min");
        assert_eq!(duration_words(3 * 86_400 + 5), "3 d");
    }
}
