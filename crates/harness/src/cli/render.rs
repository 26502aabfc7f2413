//! The report as people read it: a plain table for the terminal and a Markdown table. Every
//! word and number comes from `benchgate_stats::words`, the vocabulary the PR comment and the
//! dashboard use too; when the interval does not decide, no midpoint is shown.

use std::fmt::Write;

use benchgate_api::BenchmarkResult;
use benchgate_stats::{geomean_row, percent_from_log, words};

use crate::evaluate::Evaluation;

/// Column titles of both tables: pairs of interleaved rounds, or runs of two recordings. The
/// rounds still needed are in the verdict ("needs ~22 more rounds"), not a column of their own.
fn headers(eval: &Evaluation) -> [&'static str; 6] {
    let unpaired = eval.results.iter().any(|r| r.runs.is_some());
    [
        "benchmark",
        if unpaired { "runs" } else { "pairs" },
        "base",
        "head",
        "change",
        "verdict",
    ]
}

/// The cells of one row, in [`headers`] order.
fn cells(r: &BenchmarkResult) -> [String; 6] {
    let dash = || "—".to_owned();
    [
        format!("{} {}", r.name, words::metric_label(r)),
        if r.verdict.is_analysed() || r.runs.is_some() {
            words::sample_size(r)
        } else {
            dash()
        },
        words::center(r.base_center, &r.unit),
        words::center(r.head_center, &r.unit),
        words::change(r),
        words::verdict(r),
    ]
}

/// The rows in report order (regressions first, unchanged last), as the PR comment has them.
fn ordered(eval: &Evaluation) -> impl Iterator<Item = &BenchmarkResult> {
    benchgate_stats::report_order(&eval.results)
        .into_iter()
        .map(|i| &eval.results[i])
}

/// A plain aligned table, led by the one-line summary.
pub fn table(eval: &Evaluation) -> String {
    let rows: Vec<[String; 6]> = ordered(eval).map(cells).collect();
    let headers = headers(eval);
    let mut widths = headers.map(|h| h.chars().count());
    for row in &rows {
        for (w, cell) in widths.iter_mut().zip(row) {
            *w = (*w).max(cell.chars().count());
        }
    }
    let mut out = String::new();
    if let Some(summary) = benchgate_stats::order::summary(&eval.results) {
        let _ = writeln!(out, "{summary}\n");
    }
    let line = |out: &mut String, cells: &[String]| {
        let padded: Vec<String> = cells
            .iter()
            .zip(widths)
            .map(|(c, w)| format!("{c:<w$}"))
            .collect();
        let _ = writeln!(out, "{}", padded.join("  ").trim_end());
    };
    line(&mut out, &headers.map(String::from));
    for row in &rows {
        line(&mut out, row);
    }
    out
}

/// A GitHub-flavoured Markdown table.
pub fn markdown(eval: &Evaluation) -> String {
    let headers = headers(eval);
    let mut out = format!(
        "| {} |\n|{}\n",
        headers.join(" | "),
        "---|".repeat(headers.len())
    );
    for row in ordered(eval).map(cells) {
        let escaped: Vec<String> = row.iter().map(|c| c.replace('|', "\\|")).collect();
        let _ = writeln!(out, "| {} |", escaped.join(" | "));
    }
    out
}

/// One line per row for the live progress display: name, change and verdict so far.
pub fn live_line(r: &BenchmarkResult) -> String {
    let c = cells(r);
    if !r.verdict.is_analysed() {
        return format!("{}: collecting pairs", c[0]);
    }
    if crate::evaluate::is_decided(r) {
        return format!("{}: {} — {}", c[0], c[4], c[5]);
    }
    // Undecided: the verdict says how many more rounds; the interval follows, said once.
    if r.interval_pct == [None, None] {
        format!("{}: {} (interval not bounded yet)", c[0], c[5])
    } else {
        format!("{}: {}, interval {}", c[0], c[5], c[4])
    }
}

/// The margin line under a table: what "no change" means here.
pub fn margin_note(eval: &Evaluation) -> Option<String> {
    let a = eval.rows.iter().find_map(|r| r.analysis.as_ref().ok())?;
    let floor = match &a.floor {
        Some(f) => format!(
            "A/A floor: s_aa {}, bias tau_b {} from {} session(s), {} pairs",
            words::spread(percent_from_log(f.s_aa)),
            words::spread(percent_from_log(f.tau_b)),
            f.sessions,
            f.pairs
        ),
        None => "no A/A floor: M is the policy minimum".into(),
    };
    let level = format!("{:.0}%", 100.0 * (1.0 - eval.alpha));
    let intervals = if a.runs.is_some() {
        format!("anytime-valid {level} interval of two independent sets of runs")
    } else {
        format!("anytime-valid {level} confidence sequence (safe to stop at any round)")
    };
    Some(format!(
        "Intervals: {intervals}. Margin M = {} ({floor}).",
        words::margin(a.margin_pct())
    ))
}

/// The geomean line under a table: a summary of the gated time rows, never a verdict.
pub fn geomean_line(results: &[BenchmarkResult]) -> Option<String> {
    let g = geomean_row(results)?;
    Some(format!(
        "Geomean of {} benchmarks' time: {} (a summary, not a verdict; it never gates).",
        g.benchmarks,
        words::percent(g.change_pct)
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
    fn notes_put_gated_rows_first_and_stop_at_the_cap() {
        let row = |name: &str, gated: bool, warnings: usize| BenchmarkResult {
            rule: None,
            name: name.into(),
            metric: "time".into(),
            unit: "ns".into(),
            n: 10,
            base_center: Some(1.0),
            head_center: Some(1.0),
            change_pct: Some(0.0),
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
            direction: Default::default(),
            margin_pct: 1.0,
            layout_pct: None,
            tolerance_pct: None,
            reason: None,
            runners: Vec::new(),
            runs: None,
            modes: None,
            guard_runs: None,
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
