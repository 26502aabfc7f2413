//! The report as people read it: a plain table for the terminal and a Markdown table. Both
//! follow one rule from the design: when the interval does not decide, no midpoint is shown.

use std::fmt::Write;

use benchgate_api::BenchmarkResult;
use benchgate_stats::{BenchmarkAnalysis, Verdict, geomean_row, percent_from_log};

use crate::evaluate::{Evaluation, Row};

/// Column titles of both tables.
const HEADERS: [&str; 8] = [
    "benchmark",
    "pairs",
    "base",
    "head",
    "change",
    "interval",
    "verdict",
    "rounds needed",
];

/// The cells of one row, in [`HEADERS`] order.
fn cells(row: &Row) -> [String; 8] {
    let name = if row.gated {
        format!("{} {}", row.key.benchmark, row.key.metric)
    } else {
        format!("{} {} (not gated)", row.key.benchmark, row.key.metric)
    };
    let a = match &row.analysis {
        Ok(a) => a,
        Err(e) => {
            let blank = || "—".to_owned();
            return [
                name,
                blank(),
                blank(),
                blank(),
                blank(),
                blank(),
                format!("not analysed: {e}"),
                blank(),
            ];
        }
    };
    [
        name,
        a.n.to_string(),
        quantity(a.base_center, &row.unit),
        quantity(a.head_center, &row.unit),
        change(a),
        interval(a),
        verdict(a),
        a.verdict
            .rounds_needed()
            .map_or_else(|| "—".to_owned(), |n| format!("~{n} more")),
    ]
}

/// The change, only where the interval decides (design: never report an undecided midpoint).
fn change(a: &BenchmarkAnalysis) -> String {
    match a.verdict {
        Verdict::Slower { .. } | Verdict::Faster { .. } | Verdict::Exact => pct(a.change_pct),
        Verdict::Equivalent => format!("within ±{:.1}%", a.margin_pct()),
        Verdict::NoResultYet { .. } | Verdict::BelowResolution => "too small to tell yet".into(),
    }
}

fn interval(a: &BenchmarkAnalysis) -> String {
    let [lo, hi] = a.interval.to_percent();
    let side = |b: Option<f64>, inf: &str| b.map_or_else(|| inf.to_owned(), pct);
    format!("[{}, {}]", side(lo, "−∞"), side(hi, "+∞"))
}

fn verdict(a: &BenchmarkAnalysis) -> String {
    let margin = a.margin_pct();
    match a.verdict {
        Verdict::Slower { practical: true } => format!("slower (beyond ±{margin:.1}%)"),
        Verdict::Slower { practical: false } => "slower".into(),
        Verdict::Faster { practical: true } => format!("faster (beyond ±{margin:.1}%)"),
        Verdict::Faster { practical: false } => "faster".into(),
        Verdict::Equivalent => format!("no change beyond ±{margin:.1}%"),
        Verdict::NoResultYet { .. } => "no result yet".into(),
        Verdict::BelowResolution => "below this runner's resolution".into(),
        Verdict::Exact if a.mean_log == 0.0 => "exact: unchanged".into(),
        Verdict::Exact => "exact".into(),
    }
}

/// A signed percentage with two decimals.
pub fn pct(p: f64) -> String {
    format!("{p:+.2}%")
}

/// A value in its unit, scaled for reading: times from ns, sizes from bytes.
pub fn quantity(value: f64, unit: &str) -> String {
    const TIME: [(f64, &str); 4] = [(1e9, "s"), (1e6, "ms"), (1e3, "µs"), (1.0, "ns")];
    const SIZE: [(f64, &str); 4] = [
        (1024.0 * 1024.0 * 1024.0, "GiB"),
        (1024.0 * 1024.0, "MiB"),
        (1024.0, "KiB"),
        (1.0, "B"),
    ];
    let scaled = |table: &[(f64, &str)]| {
        let (div, name) = table
            .iter()
            .find(|(div, _)| value.abs() >= *div)
            .unwrap_or(&table[table.len() - 1]);
        format!("{:.3} {name}", value / div)
    };
    match unit {
        "ns" => scaled(&TIME),
        "bytes" => scaled(&SIZE),
        "" | "count" => format!("{value:.4}"),
        other => format!("{value:.4} {other}"),
    }
}

/// A plain aligned table.
pub fn table(eval: &Evaluation) -> String {
    let rows: Vec<[String; 8]> = eval.rows.iter().map(cells).collect();
    let mut widths = HEADERS.map(|h| h.chars().count());
    for row in &rows {
        for (w, cell) in widths.iter_mut().zip(row) {
            *w = (*w).max(cell.chars().count());
        }
    }
    let mut out = String::new();
    let line = |out: &mut String, cells: &[String]| {
        let padded: Vec<String> = cells
            .iter()
            .zip(widths)
            .map(|(c, w)| format!("{c:<w$}"))
            .collect();
        let _ = writeln!(out, "{}", padded.join("  ").trim_end());
    };
    line(&mut out, &HEADERS.map(String::from));
    for row in &rows {
        line(&mut out, row);
    }
    out
}

/// A GitHub-flavoured Markdown table.
pub fn markdown(eval: &Evaluation) -> String {
    let mut out = format!(
        "| {} |\n|{}\n",
        HEADERS.join(" | "),
        "---|".repeat(HEADERS.len())
    );
    for row in eval.rows.iter().map(cells) {
        let escaped: Vec<String> = row.iter().map(|c| c.replace('|', "\\|")).collect();
        let _ = writeln!(out, "| {} |", escaped.join(" | "));
    }
    out
}

/// One line per row for the live progress display: name, interval and verdict so far.
pub fn live_line(row: &Row) -> String {
    let c = cells(row);
    match &row.analysis {
        Ok(_) => format!("{}: {} {} {}", c[0], c[5], c[6], c[7].replace('—', "")),
        Err(_) => format!("{}: collecting pairs", c[0]),
    }
}

/// The margin line under a table: what "no change" means here.
pub fn margin_note(eval: &Evaluation) -> Option<String> {
    let a = eval.rows.iter().find_map(|r| r.analysis.as_ref().ok())?;
    let floor = match &a.floor {
        Some(f) => format!(
            "A/A floor: s_aa {:.2}%, bias tau_b {:.2}% from {} session(s), {} pairs",
            percent_from_log(f.s_aa),
            percent_from_log(f.tau_b),
            f.sessions,
            f.pairs
        ),
        None => "no A/A floor: M is the policy minimum".into(),
    };
    Some(format!(
        "Intervals: anytime-valid {:.0}% confidence sequence (safe to stop at any round). Margin M = ±{:.2}% ({floor}).",
        100.0 * (1.0 - eval.alpha),
        a.margin_pct()
    ))
}

/// The geomean line under a table: a summary of the gated time rows, never a verdict.
pub fn geomean_line(results: &[BenchmarkResult]) -> Option<String> {
    let g = geomean_row(results)?;
    Some(format!(
        "Geomean of {} benchmarks' time: {} (a summary, not a verdict; it never gates).",
        g.benchmarks,
        pct(g.change_pct)
    ))
}

/// At most this many notes are printed under a table; `--json` has every one.
pub const NOTES_SHOWN: usize = 20;

/// The diagnostics under a table, `benchmark metric: note`, gated rows first, at most
/// [`NOTES_SHOWN`] and then how many more there are.
pub fn notes(results: &[BenchmarkResult]) -> Vec<String> {
    let mut all: Vec<(bool, String)> = results
        .iter()
        .flat_map(|r| {
            r.warnings
                .iter()
                .map(move |w| (!r.gated, format!("{} {}: {w}", r.name, r.metric)))
        })
        .collect();
    // Stable: gated rows first, each group in table order.
    all.sort_by_key(|(not_gated, _)| *not_gated);
    let more = all.len().saturating_sub(NOTES_SHOWN);
    let mut lines: Vec<String> = all.into_iter().take(NOTES_SHOWN).map(|(_, l)| l).collect();
    if more > 0 {
        lines.push(format!("… and {more} more (--json lists them all)"));
    }
    lines
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn quantities_scale_to_readable_units() {
        assert_eq!(quantity(20_500_000.0, "ns"), "20.500 ms");
        assert_eq!(quantity(3.0 * 1024.0 * 1024.0, "bytes"), "3.000 MiB");
        assert_eq!(quantity(12.0, "count"), "12.0000");
        assert_eq!(quantity(0.5, "ns"), "0.500 ns");
    }

    #[test]
    fn notes_put_gated_rows_first_and_stop_at_the_cap() {
        let row = |name: &str, gated: bool, warnings: usize| BenchmarkResult {
            name: name.into(),
            metric: "time".into(),
            unit: "ns".into(),
            n: 10,
            base_center: 1.0,
            head_center: 1.0,
            change_pct: 0.0,
            interval_pct: [None, None],
            fixed_interval_pct: [None, None],
            verdict: benchgate_api::VerdictKind::NoResultYet,
            practical: false,
            rounds_needed: Some(3),
            e_value: 1.0,
            gated,
            selected: gated,
            hodges_lehmann: None,
            warnings: vec!["drift: head/base moves +0.40% per round (t = 3.1)".into(); warnings],
        };
        let lines = notes(&[row("memory", false, 1), row("parse", true, 1)]);
        assert_eq!(
            lines,
            [
                "parse time: drift: head/base moves +0.40% per round (t = 3.1)",
                "memory time: drift: head/base moves +0.40% per round (t = 3.1)"
            ]
        );
        let lines = notes(&[row("parse", true, NOTES_SHOWN + 3)]);
        assert_eq!(lines.len(), NOTES_SHOWN + 1);
        assert_eq!(lines[NOTES_SHOWN], "… and 3 more (--json lists them all)");
        assert!(notes(&[row("parse", true, 0)]).is_empty());
    }
}
