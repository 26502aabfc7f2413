//! How results read: percentages, intervals, values with units, verdict words, ages and short
//! shas. The one vocabulary of the CLI tables, the PR comment, the check run, the issues and
//! the dashboard, so a row says the same thing everywhere. Plain text; the comment adds
//! Markdown and the dashboard HTML around it.

use benchgate_api::{BenchmarkResult, Direction, VerdictKind};

use crate::gate::exact_changed;

/// `+3.1%`, `-0.42%`, `+12%`: two decimals near zero, fewer when large.
pub fn percent(p: f64) -> String {
    let a = p.abs();
    let digits = if a >= 10.0 {
        0
    } else if a >= 1.0 {
        1
    } else {
        2
    };
    let shown = format!("{a:.digits$}");
    // A change that rounds to zero has no sign to show: never "-0.00%".
    let sign = if p >= 0.0 || shown.parse::<f64>() == Ok(0.0) {
        "+"
    } else {
        "-"
    };
    format!("{sign}{shown}%")
}

/// A change in a share, in percentage points with its sign and one decimal: `+6.1 pp`,
/// `-0.4 pp`, and `±0.0 pp` for what rounds to nothing (a profile's function changes).
pub fn percentage_points(pp: f64) -> String {
    let tenths = (pp * 10.0).round();
    if tenths == 0.0 {
        return "±0.0 pp".to_owned();
    }
    let sign = if tenths > 0.0 { "+" } else { "-" };
    format!("{sign}{:.1} pp", tenths.abs() / 10.0)
}

/// A percentage whose direction the words around it say: `1.2%` slower, `0.42%`, with
/// [`percent`]'s precision.
pub fn unsigned_percent(p: f64) -> String {
    percent(p).trim_start_matches(['+', '-']).to_owned()
}

/// A noise floor's spread or bias: `0.42%`, always two decimals, so a list of floors lines up
/// and a quiet runner's floor keeps its digits.
pub fn spread(pct: f64) -> String {
    format!("{pct:.2}%")
}

/// A margin as `±1.0%`.
pub fn margin(m_pct: f64) -> String {
    format!("±{}", unsigned_percent(m_pct))
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

/// An estimate with its interval: `+6.5% [+4.1%, +9.0%]`.
pub fn estimate(p: f64, i: [Option<f64>; 2]) -> String {
    format!("{} {}", percent(p), interval(i))
}

/// The fixed-n diagnostic of a row, beside its anytime interval: `raw time -4.0% [-6.2%,
/// -1.8%]`. Valid for one look at the runs at hand (the ± a hand calculation gives), not for
/// looking again with more. `None` for an exact or unanalysed row.
pub fn fixed_n(r: &BenchmarkResult) -> Option<String> {
    let p = r.change_pct?;
    if r.verdict == VerdictKind::Exact || r.fixed_interval_pct == [None, None] {
        return None;
    }
    Some(format!(
        "{} {} {}",
        r.name,
        metric_label(r),
        estimate(p, r.fixed_interval_pct)
    ))
}

/// The change column: the estimate with its interval when the interval decides, only the
/// interval when it does not (an undecided midpoint means nothing), the values themselves for
/// an exact change from zero, and a dash when there is no analysis.
pub fn change(r: &BenchmarkResult) -> String {
    match r.verdict {
        VerdictKind::Slower | VerdictKind::Faster => match r.change_pct {
            Some(p) => estimate(p, r.interval_pct),
            None => interval(r.interval_pct),
        },
        VerdictKind::Exact => match (r.change_pct, r.base_center, r.head_center) {
            // A count that did not move has no sign to show.
            _ if !exact_changed(r) => "±0 (exact)".to_owned(),
            (Some(p), _, _) => format!("{} (exact)", percent(p)),
            (None, Some(b), Some(h)) => {
                format!("{} → {} (exact)", value(b, &r.unit), value(h, &r.unit))
            }
            _ => "exact".to_owned(),
        },
        VerdictKind::Equivalent
        | VerdictKind::NotSlower
        | VerdictKind::NoResultYet
        | VerdictKind::BelowResolution => interval(r.interval_pct),
        VerdictKind::NotAnalysed | VerdictKind::OnlyInBase | VerdictKind::OnlyInHead => {
            "—".to_owned()
        }
    }
}

/// The verdict in words, for performance (a throughput drop is "slower").
pub fn verdict(r: &BenchmarkResult) -> String {
    let shift = r
        .modes
        .as_ref()
        .and_then(|m| m.shift.map(|s| crate::mode_words::mode_shift(m, s)));
    let typical = r.modes.as_ref().is_some_and(|m| m.typical_run);
    let words = verdict_words(r);
    match (r.verdict, shift) {
        (VerdictKind::Slower | VerdictKind::Faster, Some(shift)) => format!("{words}: {shift}"),
        (
            VerdictKind::Slower
            | VerdictKind::Faster
            | VerdictKind::Equivalent
            | VerdictKind::NotSlower,
            None,
        ) if typical => format!("{words}, in the typical run"),
        (VerdictKind::NoResultYet, _) if r.guard_runs.is_some() => format!(
            "{words} (tail guard: a pass waits for {} runs of head)",
            r.guard_runs.unwrap_or_default()
        ),
        _ => words,
    }
}

fn verdict_words(r: &BenchmarkResult) -> String {
    let m = margin(r.margin_pct);
    // A row whose M holds the runner's layout floor says so: rebuilding alone moves it.
    let layout = if r.layout_pct.is_some() {
        ", layout"
    } else {
        ""
    };
    match r.verdict {
        VerdictKind::Slower if r.gated && !r.selected => match r.tolerance_pct {
            Some(t) if crate::gate::within_tolerance(r) => format!(
                "slower, but not significant across the gated benchmarks (e-BH) and not slower \
                 than +{t:.1}%"
            ),
            _ => "slower, not yet significant across the gated benchmarks (e-BH): more rounds \
                  decide"
                .to_owned(),
        },
        VerdictKind::Slower if r.practical => format!("slower (beyond {m}{layout})"),
        VerdictKind::Slower => format!("slower (within {m}{layout})"),
        VerdictKind::Faster if r.practical => format!("faster (beyond {m}{layout})"),
        VerdictKind::Faster => format!("faster (within {m}{layout})"),
        VerdictKind::Equivalent if r.layout_pct.is_some() => {
            format!("no change beyond {m} (layout)")
        }
        VerdictKind::Equivalent => format!("no change beyond {m}"),
        VerdictKind::NotSlower => match r.tolerance_pct {
            Some(t) => format!("not slower than {}", percent(t)),
            None => "not slower than the tolerance".to_owned(),
        },
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

/// A verdict kind in a word or two, where there is no row to word whole (a filter's menu):
/// the words a count of benchmarks uses wherever a kind has one standing.
pub fn verdict_kind(kind: VerdictKind) -> &'static str {
    match kind {
        VerdictKind::Slower => BenchmarkStanding::Slower.words(),
        VerdictKind::Faster => BenchmarkStanding::Faster.words(),
        VerdictKind::Equivalent => BenchmarkStanding::NoChange.words(),
        VerdictKind::NotSlower => BenchmarkStanding::WithinTolerance.words(),
        VerdictKind::NoResultYet => BenchmarkStanding::NoResultYet.words(),
        VerdictKind::BelowResolution => BenchmarkStanding::BelowResolution.words(),
        VerdictKind::NotAnalysed => BenchmarkStanding::NotAnalysed.words(),
        // Changed or not, only the row knows: `verdict` says which.
        VerdictKind::Exact => "exact count",
        VerdictKind::OnlyInBase => "only in base",
        VerdictKind::OnlyInHead => "only in head",
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
    // A rate (`elem/s`, `B/s`) takes a decimal prefix: 494.5 Melem/s, not 494488625 elem/s.
    if let Some(per) = unit.strip_suffix("/s") {
        const PREFIX: [(&str, f64); 4] = [("G", 1e9), ("M", 1e6), ("k", 1e3), ("", 1.0)];
        let (prefix, scale) = PREFIX
            .iter()
            .find(|(_, s)| v.abs() >= *s)
            .unwrap_or(&PREFIX[3]);
        let per = if per == "bytes" { "B" } else { per };
        return format!("{} {prefix}{per}/s", significant(v / scale));
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

/// Where one benchmark stands, from its gated metrics, worst first: a benchmark whose time is
/// faster and whose instruction count grew is slower. The one count of headings, summaries and
/// progress lines.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum BenchmarkStanding {
    Slower,
    Faster,
    NoResultYet,
    BelowResolution,
    NotAnalysed,
    /// Shown not slower than the gate's tolerance: the gate passes it. A weaker answer than
    /// no change, so a benchmark with both stands here.
    WithinTolerance,
    NoChange,
    /// Only one side ran it (added or removed).
    OneSided,
    /// No gated metric: every one is `gate = false` (or not gated by default).
    NotGated,
}

impl BenchmarkStanding {
    /// The words a count of benchmarks is followed by.
    pub fn words(self) -> &'static str {
        match self {
            BenchmarkStanding::Slower => "slower",
            BenchmarkStanding::Faster => "faster",
            BenchmarkStanding::NoResultYet => "no result yet",
            BenchmarkStanding::BelowResolution => "below resolution",
            BenchmarkStanding::NotAnalysed => "not analysed",
            BenchmarkStanding::NoChange => "no change",
            BenchmarkStanding::WithinTolerance => "within tolerance",
            BenchmarkStanding::OneSided => "on one side only",
            BenchmarkStanding::NotGated => "not gated",
        }
    }

    /// More rounds could still change it.
    pub fn is_open(self) -> bool {
        matches!(
            self,
            BenchmarkStanding::NoResultYet
                | BenchmarkStanding::BelowResolution
                | BenchmarkStanding::NotAnalysed
        )
    }

    /// Every standing, in the order a tally lists them.
    pub const ALL: [BenchmarkStanding; 9] = [
        BenchmarkStanding::Slower,
        BenchmarkStanding::Faster,
        BenchmarkStanding::NoChange,
        BenchmarkStanding::WithinTolerance,
        BenchmarkStanding::NoResultYet,
        BenchmarkStanding::BelowResolution,
        BenchmarkStanding::NotAnalysed,
        BenchmarkStanding::OneSided,
        BenchmarkStanding::NotGated,
    ];
}

/// Where one row stands on its own (gated or not): a grown exact count is slower, an unchanged
/// one no change. A benchmark's standing is the worst of its gated rows'.
pub fn row_standing(r: &BenchmarkResult) -> BenchmarkStanding {
    match r.verdict {
        _ if crate::gate::is_regression_ignoring_gate(r) => BenchmarkStanding::Slower,
        VerdictKind::Slower => BenchmarkStanding::Slower,
        VerdictKind::Faster => BenchmarkStanding::Faster,
        VerdictKind::Exact if exact_changed(r) => BenchmarkStanding::Faster,
        VerdictKind::Exact | VerdictKind::Equivalent => BenchmarkStanding::NoChange,
        VerdictKind::NotSlower => BenchmarkStanding::WithinTolerance,
        VerdictKind::NoResultYet => BenchmarkStanding::NoResultYet,
        VerdictKind::BelowResolution => BenchmarkStanding::BelowResolution,
        VerdictKind::NotAnalysed => BenchmarkStanding::NotAnalysed,
        VerdictKind::OnlyInBase | VerdictKind::OnlyInHead => BenchmarkStanding::OneSided,
    }
}

/// Each benchmark (in the order its first row comes) with its standing; ignored rows are left
/// out, as reports leave them out.
pub fn benchmark_standings(results: &[BenchmarkResult]) -> Vec<(&str, BenchmarkStanding)> {
    let mut out: Vec<(&str, BenchmarkStanding)> = Vec::new();
    let mut rows: Vec<(&str, Vec<&BenchmarkResult>)> = Vec::new();
    let mut index: std::collections::HashMap<&str, usize> = std::collections::HashMap::new();
    for r in results.iter().filter(|r| !r.is_ignored()) {
        let i = *index.entry(r.name.as_str()).or_insert_with(|| {
            rows.push((&r.name, Vec::new()));
            rows.len() - 1
        });
        rows[i].1.push(r);
    }
    for (name, list) in rows {
        let one_sided = |r: &&BenchmarkResult| {
            matches!(r.verdict, VerdictKind::OnlyInBase | VerdictKind::OnlyInHead)
        };
        let standing = if list.iter().all(one_sided) {
            BenchmarkStanding::OneSided
        } else {
            list.iter()
                .filter(|r| r.gated && !one_sided(r))
                .map(|r| row_standing(r))
                .min()
                .unwrap_or(BenchmarkStanding::NotGated)
        };
        out.push((name, standing));
    }
    out
}

/// How many benchmarks stand where, in the order a tally lists them, standings with none left
/// out: the counts of [`tally`], for a page that draws each one.
pub fn standing_counts(results: &[BenchmarkResult]) -> Vec<(BenchmarkStanding, usize)> {
    let standings = benchmark_standings(results);
    BenchmarkStanding::ALL
        .iter()
        .map(|&s| (s, standings.iter().filter(|(_, t)| *t == s).count()))
        .filter(|&(_, n)| n > 0)
        .collect()
}

/// `1 slower, 2 no change, 1 not gated`: benchmarks counted by where they stand, every metric
/// of a benchmark inside its one count; "" when there are none.
pub fn tally(results: &[BenchmarkResult]) -> String {
    standing_counts(results)
        .into_iter()
        .map(|(s, n)| format!("{n} {}", s.words()))
        .collect::<Vec<_>>()
        .join(", ")
}

/// The tally for headings and the check's title, "no results yet" before any row.
pub fn headline(results: &[BenchmarkResult]) -> String {
    let line = tally(results);
    if line.is_empty() {
        "no results yet".to_owned()
    } else {
        line
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

/// What a run's variance split says about run length, for `compare`'s report, `config check`
/// and the runner page: "a run's own error is 2% of its variance (the rest is between runs):
/// runs 6× shorter would need ~1.1× the rounds".
pub fn run_length(split: &crate::run_length::RunSplit) -> String {
    let share = split.within_share();
    let head = if share >= 0.995 {
        "a run's own error is all of its variance (none shows between runs)".to_owned()
    } else {
        format!(
            "a run's own error is {}% of its variance (the rest is between runs)",
            percent_share(share)
        )
    };
    let shortest = split.shortest_length(1.1);
    if shortest <= 0.5 {
        let times = (1.0 / shortest).floor().min(20.0) as u32;
        format!(
            "{head}: runs {times}× shorter would need only ~{:.1}× the rounds",
            split.rounds_factor(1.0 / f64::from(times))
        )
    } else if share >= 0.5 {
        format!(
            "{head}: runs twice as long would need ~{:.1}× the rounds",
            split.rounds_factor(2.0)
        )
    } else {
        format!("{head}: shorter runs would cost rounds")
    }
}

/// A share in [0, 1] as a whole percent, "<1" below one.
fn percent_share(share: f64) -> String {
    if share > 0.0 && share < 0.005 {
        "<1".to_owned()
    } else {
        format!("{:.0}", 100.0 * share)
    }
}

/// How many characters of a commit sha people read: `0d1a26e`, as the PR comment has always
/// shown it. Every short sha (comment, check, issues, CLI, dashboard) is cut here.
pub const SHORT_SHA_LEN: usize = 7;

/// A commit sha as people read it: its first [`SHORT_SHA_LEN`] characters, or all of it when
/// shorter.
pub fn short_sha(sha: &str) -> &str {
    sha.get(..SHORT_SHA_LEN).unwrap_or(sha)
}

/// `n` of a thing, in the plural unless one: "1 row", "3 rows".
pub fn count(n: usize, thing: &str) -> String {
    format!("{n} {thing}{}", if n == 1 { "" } else { "s" })
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

    #[test]
    fn run_length_says_how_much_shorter_runs_would_cost() {
        use crate::run_length::RunSplit;
        let split = |within: f64| RunSplit {
            per_run: 1.0,
            within,
            pairs: 20,
        };
        assert_eq!(
            run_length(&split(0.02)),
            "a run's own error is 2% of its variance (the rest is between runs): runs 6× \
             shorter would need only ~1.1× the rounds"
        );
        assert_eq!(
            run_length(&split(0.8)),
            "a run's own error is 80% of its variance (the rest is between runs): runs twice \
             as long would need ~0.6× the rounds"
        );
        assert_eq!(
            run_length(&split(0.2)),
            "a run's own error is 20% of its variance (the rest is between runs): shorter runs \
             would cost rounds"
        );
        assert!(run_length(&split(0.001)).starts_with("a run's own error is <1%"));
        assert_eq!(
            run_length(&split(1.3)),
            "a run's own error is all of its variance (none shows between runs): runs twice as \
             long would need ~0.5× the rounds"
        );
    }

    #[test]
    fn percentage_points_have_a_sign_and_one_decimal() {
        assert_eq!(percentage_points(6.14), "+6.1 pp");
        assert_eq!(percentage_points(-0.36), "-0.4 pp");
        assert_eq!(percentage_points(0.04), "±0.0 pp");
        assert_eq!(percentage_points(-0.04), "±0.0 pp");
        assert_eq!(percentage_points(33.56), "+33.6 pp");
    }

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
    fn shas_are_cut_to_seven_characters() {
        assert_eq!(
            short_sha("0d1a26e67d8f5eaf1f6ba5c57fc3c7d91ac0fd1c"),
            "0d1a26e"
        );
        assert_eq!(short_sha("abc"), "abc");
    }

    #[test]
    fn estimates_carry_their_interval_and_magnitudes_drop_the_sign() {
        assert_eq!(estimate(6.5, [Some(4.1), None]), "+6.5% [+4.1%, +∞]");
        assert_eq!(estimate(-0.3, [None, None]), "-0.30% not bounded yet");
        assert_eq!(unsigned_percent(-1.234), "1.2%");
        assert_eq!(unsigned_percent(0.4), "0.40%");
        assert_eq!(spread(1.2149), "1.21%");
        assert_eq!(spread(0.1), "0.10%");
    }

    #[test]
    fn a_kind_is_worded_as_its_standing_is() {
        assert_eq!(verdict_kind(VerdictKind::Equivalent), "no change");
        assert_eq!(
            verdict_kind(VerdictKind::BelowResolution),
            "below resolution"
        );
        assert_eq!(verdict_kind(VerdictKind::Exact), "exact count");
        assert_eq!(verdict_kind(VerdictKind::OnlyInHead), "only in head");
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
    fn one_is_singular_and_every_other_count_plural() {
        assert_eq!(
            count(1, "undecided or unchanged row"),
            "1 undecided or unchanged row"
        );
        assert_eq!(count(0, "row"), "0 rows");
        assert_eq!(count(60, "row"), "60 rows");
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
    fn rates_take_a_decimal_prefix() {
        assert_eq!(value(494_488_625.0, "elem/s"), "494.5 Melem/s");
        assert_eq!(value(2_500.0, "B/s"), "2.500 kB/s");
        assert_eq!(value(12.5, "elem/s"), "12.50 elem/s");
    }

    #[test]
    fn an_unchanged_exact_count_shows_no_sign() {
        let mut r = row(VerdictKind::Exact, Direction::LowerIsBetter, Some(0.0));
        (r.base_center, r.head_center) = (Some(1843.0), Some(1843.0));
        assert_eq!(change(&r), "±0 (exact)");
        assert_eq!(verdict(&r), "unchanged (exact)");
        r.head_center = Some(1844.0);
        r.change_pct = Some(0.054);
        assert_eq!(change(&r), "+0.05% (exact)");
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
    fn a_benchmark_is_counted_once_with_its_metrics_inside() {
        let mut time = row(VerdictKind::Faster, Direction::LowerIsBetter, Some(-30.0));
        time.name = "parse".into();
        // A throughput row of the same benchmark: one benchmark, not two.
        let mut thrpt = row(VerdictKind::Faster, Direction::HigherIsBetter, Some(40.0));
        (thrpt.name, thrpt.metric, thrpt.gated) = ("parse".into(), "thrpt".into(), false);
        let mut other = time.clone();
        other.name = "emit".into();
        other.verdict = VerdictKind::NoResultYet;
        let mut emit_thrpt = thrpt.clone();
        emit_thrpt.name = "emit".into();
        assert_eq!(
            headline(&[time.clone(), thrpt.clone(), other, emit_thrpt]),
            "1 faster, 1 no result yet"
        );
        // The worst gated metric is the benchmark's standing; ungated ones do not count.
        let mut instructions = time.clone();
        (instructions.metric, instructions.verdict) = ("instructions".into(), VerdictKind::Slower);
        let mut peak = instructions.clone();
        (peak.metric, peak.gated) = ("peak_rss".into(), false);
        assert_eq!(
            headline(&[time.clone(), instructions, peak.clone()]),
            "1 slower"
        );
        let mut memory_only = peak.clone();
        memory_only.name = "alloc".into();
        let new = BenchmarkResult {
            name: "fresh".into(),
            ..row(VerdictKind::OnlyInHead, Direction::LowerIsBetter, None)
        };
        assert_eq!(
            headline(&[time, memory_only, new]),
            "1 faster, 1 on one side only, 1 not gated"
        );
        assert_eq!(headline(&[]), "no results yet");
        assert_eq!(age(7200), "2 hours ago");
    }
}
