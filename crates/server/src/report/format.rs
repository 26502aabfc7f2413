//! How numbers and names are written in the comment: percentages with their sign, values in
//! a readable unit, and Markdown-safe cells.

use benchgate_api::{BenchmarkResult, VerdictKind};

/// `+3.1%`, `-0.42%`, `+12%`: two significant decimals near zero, fewer when large.
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

/// An interval bound; `None` is unbounded.
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
/// interval when it does not (a midpoint of an undecided interval means nothing).
pub fn change(r: &BenchmarkResult) -> String {
    match r.verdict {
        VerdictKind::Slower | VerdictKind::Faster | VerdictKind::Exact => {
            format!("{} {}", percent(r.change_pct), interval(r.interval_pct))
        }
        VerdictKind::Equivalent | VerdictKind::NoResultYet | VerdictKind::BelowResolution => {
            interval(r.interval_pct)
        }
    }
}

/// The verdict column, in words.
pub fn verdict(r: &BenchmarkResult, margin_pct: f64) -> String {
    let m = percent(margin_pct).trim_start_matches('+').to_owned();
    match r.verdict {
        VerdictKind::Slower if r.gated && !r.selected => {
            "slower, but not significant across the gated benchmarks (e-BH); does not fail the check"
                .to_owned()
        }
        VerdictKind::Slower if r.practical => format!("**slower** (beyond ±{m})"),
        VerdictKind::Slower => format!("**slower** (within ±{m})"),
        VerdictKind::Faster if r.practical => format!("**faster** (beyond ±{m})"),
        VerdictKind::Faster => format!("**faster** (within ±{m})"),
        VerdictKind::Equivalent => format!("no change beyond ±{m}"),
        VerdictKind::NoResultYet => match r.rounds_needed {
            Some(n) => format!("no result yet — needs ~{n} more rounds"),
            None => "no result yet".to_owned(),
        },
        VerdictKind::BelowResolution => "below this runner's resolution".to_owned(),
        VerdictKind::Exact if r.change_pct == 0.0 => "unchanged (exact)".to_owned(),
        VerdictKind::Exact => "changed (exact count)".to_owned(),
    }
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
    format!("{} {}", significant(v), cell(unit))
        .trim_end()
        .to_owned()
}

/// Four significant digits, no exponent for everyday magnitudes.
fn significant(v: f64) -> String {
    let a = v.abs();
    let decimals = if a >= 1000.0 || a == 0.0 {
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

/// Text from the benchmarked program or the repository made safe inside a table cell: no
/// pipes, no HTML, no line breaks, no Markdown emphasis.
pub fn cell(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        match c {
            '|' => out.push_str("\\|"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '&' => out.push_str("&amp;"),
            '`' => out.push('\''),
            '*' | '_' | '[' | ']' | '\\' | '#' | '~' => {
                out.push('\\');
                out.push(c);
            }
            '\n' | '\r' => out.push(' '),
            _ => out.push(c),
        }
    }
    out
}

/// Text shown as inline code: backticks cannot end the span early.
pub fn code(text: &str) -> String {
    let clean = text.replace(['\n', '\r'], " ");
    if clean.contains('`') {
        format!("`` {} ``", clean.replace("``", "` `"))
    } else {
        format!("`{clean}`")
    }
}

/// Inline code inside a table cell: GitHub splits cells on `|` even inside code spans unless
/// it is escaped.
pub fn code_cell(text: &str) -> String {
    code(text).replace('|', "\\|")
}

/// "3 minutes ago", "2 days ago".
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
    fn percentages_keep_their_sign_and_sensible_precision() {
        assert_eq!(percent(3.0512), "+3.1%");
        assert_eq!(percent(-0.4219), "-0.42%");
        assert_eq!(percent(12.6), "+13%");
        assert_eq!(interval([None, Some(2.0)]), "[-∞, +2.0%]");
    }

    #[test]
    fn values_scale_to_a_readable_unit() {
        assert_eq!(value(1_234_567.0, "ns"), "1.235 ms");
        assert_eq!(value(0.5, "s"), "500.0 ms");
        assert_eq!(value(2048.0, "bytes"), "2.000 KiB");
        assert_eq!(value(42.0, "allocs"), "42.00 allocs");
    }

    #[test]
    fn cells_cannot_break_the_table_or_inject_html() {
        assert_eq!(cell("a|b<script>"), "a\\|b&lt;script&gt;");
        assert_eq!(code("x`y"), "`` x`y ``");
        assert_eq!(age(7200), "2 hours ago");
    }
}
