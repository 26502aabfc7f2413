//! The tools' own output: benchstat (both layouts), criterion's change lines, hyperfine's
//! summary, pytest-benchmark's compare table, Google Benchmark's `compare.py` table,
//! `cargo benchcmp` and `critcmp`.

use std::sync::LazyLock;

use regex::Regex;

use super::{Reader, Side, factor_pct, number, re, runs_of, side_of};
use crate::{Metric, Source, factor_to_time_pct, metric_of_unit};

static OLD_BENCHSTAT: LazyLock<Regex> = LazyLock::new(|| {
    re(r"(?i)^\s*(?:name|benchmark)\s+old\s+(\S+)\s+new\s+(\S+)\s+(delta|speedup)\s*$")
});
static OLD_ROW: LazyLock<Regex> = LazyLock::new(|| {
    re(r"^\s*(\S+)\s+.*?\s([+-]?\d+(?:\.\d+)?)(%|x)\s*(?:\(p=[\d.]+\s+n=(\d+)(?:\+(\d+))?\))?\s*$")
});
static NEW_ROW: LazyLock<Regex> = LazyLock::new(|| {
    re(r"^\s*(\S+)\s+.*?\s([+-]\d+(?:\.\d+)?)%\s+\(p=[\d.]+\s+n=(\d+)(?:\+(\d+))?\)\s*$")
});
static BENCHCMP_HEADER: LazyLock<Regex> = LazyLock::new(|| {
    re(r"^\s*name\s+\S+\s+ns/iter\s+\S+\s+ns/iter\s+diff ns/iter\s+diff %(?:\s+speedup)?\s*$")
});
static BENCHCMP_ROW: LazyLock<Regex> = LazyLock::new(|| {
    re(r"^\s*(\S+)\s+.*?\s-?[\d,]+\s+([+-]?\d+(?:\.\d+)?)%(?:\s+x\s*[\d.]+)?\s*$")
});
static CRITCMP_HEADER: LazyLock<Regex> = LazyLock::new(|| re(r"^\s*group\s+(\S+)\s+(\S+)\s*$"));
static CRITCMP_CELL: LazyLock<Regex> =
    LazyLock::new(|| re(r"\d+(?:\.\d+)?\s+(\d+(?:\.\d+)?)±\S*?(ns|µs|μs|us|ms|s)\b"));
static HTML_TAG: LazyLock<Regex> = LazyLock::new(|| re(r"<[^>]*>"));

/// Whether a line starts a tool's next section: a benchstat header of either layout.
pub(super) fn starts_section(line: &str) -> bool {
    OLD_BENCHSTAT.is_match(line)
        || (line.contains('│') && !line.chars().any(|c| c.is_ascii_digit()))
}

static CRITERION_TIME: LazyLock<Regex> =
    LazyLock::new(|| re(r"^(\S.*?)?\s*time:\s+\[[^\]]*\]\s*$"));
static CRITERION_CHANGE: LazyLock<Regex> = LazyLock::new(|| {
    re(r"change:\s*\[\s*([+-]?\d+(?:\.\d+)?)%\s+([+-]?\d+(?:\.\d+)?)%\s+([+-]?\d+(?:\.\d+)?)%\s*\]")
});
static HYPERFINE_RAN: LazyLock<Regex> = LazyLock::new(|| re(r"^\s*'?(.+?)'?\s+ran\s*$"));
static HYPERFINE_FASTER: LazyLock<Regex> = LazyLock::new(|| {
    re(r"^\s*(\d+(?:\.\d+)?)\s*(?:±\s*\d+(?:\.\d+)?)?\s+times faster than\s+'?(.+?)'?\s*$")
});
static HYPERFINE_RUNS: LazyLock<Regex> =
    LazyLock::new(|| re(r"Range \(min … max\):.*\s(\d+) runs"));
static PYTEST_HEADER: LazyLock<Regex> = LazyLock::new(|| re(r"(?i)^\s*Name \(time in (\w+)\).*Δ"));
static PYTEST_ROW: LazyLock<Regex> =
    LazyLock::new(|| re(r"^\s*(\S+)\s+[\d.,]+\s+[\d.,]+\s+([+-]\d+(?:\.\d+)?)%\s*$"));
static GBENCH_HEADER: LazyLock<Regex> = LazyLock::new(|| {
    re(r"^\s*Benchmark\s+Time\s+CPU\s+Time Old\s+Time New\s+CPU Old\s+CPU New\s*$")
});
static GBENCH_ROW: LazyLock<Regex> = LazyLock::new(|| {
    re(r"^\s*(\S.*?)\s+([+-]\d+(?:\.\d+)?)\s+([+-]\d+(?:\.\d+)?)\s+\S+\s+\S+\s+\S+\s+\S+\s*$")
});
static GBENCH_PVALUE: LazyLock<Regex> =
    LazyLock::new(|| re(r"^\s*(\S.*?)_pvalue\s.*Repetitions:\s*(\d+)\s+vs\s+(\d+)"));

impl Reader<'_> {
    /// `name old time/op new time/op delta` and its rows, up to a blank line.
    pub(super) fn old_benchstat(&mut self, i: usize) -> Option<usize> {
        let header = OLD_BENCHSTAT.captures(self.lines[i])?;
        let metric = metric_of_unit(&header[1]).unwrap_or(Metric::Time);
        let speedup = header[3].eq_ignore_ascii_case("speedup");
        Some(self.rows_after(i, metric, Source::Benchstat, |line| {
            let row = OLD_ROW.captures(line)?;
            let v = number(&row[2])?;
            let pct = match (&row[3], speedup) {
                ("x", _) => factor_pct(metric, v, true),
                _ => v,
            };
            Some((row[1].to_owned(), pct, runs_of(row.get(4), row.get(5))))
        }))
    }

    /// benchstat's newer layout: `│ sec/op │ sec/op vs base │`, rows `-2.29% (p=0.011 n=7)`.
    pub(super) fn new_benchstat(&mut self, i: usize) -> Option<usize> {
        let line = self.lines[i];
        if !(line.contains('│') && line.contains("vs base")) {
            return None;
        }
        let unit = line
            .split('│')
            .find(|cell| cell.contains("vs base"))
            .and_then(|cell| cell.split_whitespace().next())
            .unwrap_or("sec/op");
        let metric = metric_of_unit(unit).unwrap_or(Metric::Time);
        Some(self.rows_after(i, metric, Source::Benchstat, |line| {
            let row = NEW_ROW.captures(line)?;
            if &row[1] == "geomean" {
                return None;
            }
            let v = number(&row[2])?;
            Some((row[1].to_owned(), v, runs_of(row.get(3), row.get(4))))
        }))
    }

    /// `cargo benchcmp`: `name  A ns/iter  B ns/iter  diff ns/iter  diff %  [speedup]`, rows
    /// `name  4,534,211  1,742,419  -2,791,792  -61.57%  x 2.60`: the first file is the base.
    pub(super) fn benchcmp(&mut self, i: usize) -> Option<usize> {
        BENCHCMP_HEADER.captures(self.lines[i])?;
        Some(self.rows_after(i, Metric::Time, Source::Benchcmp, |line| {
            let row = BENCHCMP_ROW.captures(line)?;
            Some((row[1].to_owned(), number(&row[2])?, None))
        }))
    }

    /// `critcmp A B`: a `group` header naming two baselines, a rule, and per row each side's
    /// ratio and `time±err`. Which baseline is the base is read from its name (main, before,
    /// new, pr…); a pair whose names do not say is a comparison, not this PR's claim.
    pub(super) fn critcmp(&mut self, i: usize) -> Option<usize> {
        let header_line = HTML_TAG.replace_all(self.lines[i], "");
        let header = CRITCMP_HEADER.captures(&header_line)?;
        let rule = self.lines.get(i + 1)?.trim();
        if !rule.starts_with("-----") {
            return None;
        }
        let (a, b) = (header[1].to_owned(), header[2].to_owned());
        let head_second = match (side_of(&a), side_of(&b)) {
            (Some(Side::Base), _) | (_, Some(Side::Head)) => true,
            (Some(Side::Head), _) | (_, Some(Side::Base)) => false,
            _ => {
                self.not_read.push(super::NotRead {
                    line: i + 1,
                    quote: self.lines[i].trim().to_owned(),
                    compares: [a, b],
                });
                return Some(i + 2);
            }
        };
        Some(
            self.rows_after(i + 1, Metric::Time, Source::Critcmp, |line| {
                let line = HTML_TAG.replace_all(line, "");
                let first = CRITCMP_CELL.find(&line)?;
                let name = line[..first.start()].trim().to_owned();
                let cells: Vec<f64> = CRITCMP_CELL
                    .captures_iter(&line)
                    .filter_map(|c| Some(number(&c[1])? * unit_ns(&c[2])))
                    .collect();
                let [first, second] = cells[..] else {
                    return None;
                };
                let (base, head) = if head_second {
                    (first, second)
                } else {
                    (second, first)
                };
                (base > 0.0).then(|| (name, (head / base - 1.0) * 100.0, None))
            }),
        )
    }

    /// Google Benchmark's `tools/compare.py` table, up to a blank line: the Time column is the
    /// relative change (−0.12: 12% less time). Without repetitions each side is one run; with
    /// them only the `_mean` rows are read (runs from the U test's `_pvalue` row when shown),
    /// and `OVERALL_GEOMEAN` is a summary of the rows above, not a benchmark.
    pub(super) fn google_benchmark(&mut self, i: usize) -> Option<usize> {
        GBENCH_HEADER.captures(self.lines[i])?;
        let end = (i + 1..self.lines.len())
            .find(|&j| self.lines[j].trim().is_empty())
            .unwrap_or(self.lines.len());
        let block = &self.lines[i + 1..end];
        let aggregated = block.iter().any(|l| {
            GBENCH_ROW
                .captures(l)
                .is_some_and(|r| r[1].ends_with("_mean"))
        });
        let repetitions: std::collections::HashMap<String, u32> = block
            .iter()
            .filter_map(|l| {
                let c = GBENCH_PVALUE.captures(l)?;
                let (b, h): (u32, u32) = (c[2].parse().ok()?, c[3].parse().ok()?);
                Some((c[1].to_owned(), b.min(h)))
            })
            .collect();
        Some(
            self.rows_after(i, Metric::Time, Source::GoogleBenchmark, |line| {
                let row = GBENCH_ROW.captures(line)?;
                let name = &row[1];
                let (name, runs) = match name.strip_suffix("_mean") {
                    Some(bare) => (bare, repetitions.get(bare).copied()),
                    None if aggregated || name == "OVERALL_GEOMEAN" => return None,
                    None => (name, Some(1)),
                };
                Some((name.to_owned(), number(&row[2])? * 100.0, runs))
            }),
        )
    }

    /// pytest-benchmark's compare table: `Name (time in ms) … ΔMin` and rows up to its rule.
    pub(super) fn pytest(&mut self, i: usize) -> Option<usize> {
        PYTEST_HEADER.captures(self.lines[i])?;
        Some(self.rows_after(i, Metric::Time, Source::Table, |line| {
            let row = PYTEST_ROW.captures(line)?;
            Some((row[1].to_owned(), number(&row[2])?, None))
        }))
    }

    /// criterion's `change: [lo est hi]` after a benchmark's `time:` line, when the next line
    /// says "Performance has improved/regressed" (within noise or no change: no claim).
    pub(super) fn criterion(&mut self) {
        let mut name: Option<String> = None;
        let mut pending: Option<(usize, f64)> = None;
        for (i, line) in self.lines.iter().enumerate() {
            if let Some(c) = CRITERION_TIME.captures(line) {
                name = match c
                    .get(1)
                    .map(|m| m.as_str().trim())
                    .filter(|n| !n.is_empty())
                {
                    Some(n) => Some(n.to_owned()),
                    // A long name is printed on its own line above `time:`.
                    None => self.lines[..i]
                        .iter()
                        .rev()
                        .find(|l| !l.trim().is_empty())
                        .map(|l| l.trim().to_owned()),
                };
                pending = None;
            } else if let Some(c) = CRITERION_CHANGE.captures(line) {
                pending = number(&c[2]).map(|est| (i, est));
            } else if let Some((at, est)) = pending {
                let verdict = line.trim();
                if verdict.starts_with("Performance has improved")
                    || verdict.starts_with("Performance has regressed")
                {
                    // criterion's own comparison is this run against one saved run.
                    let saved = self.claims.len();
                    self.push(
                        at,
                        name.clone(),
                        Metric::Time,
                        [est, est],
                        Some(1),
                        Source::Criterion,
                    );
                    if let Some(claim) = self.claims.get_mut(saved) {
                        claim.quote =
                            format!("{}: {}", name.as_deref().unwrap_or("?"), claim.quote);
                    }
                }
                if !verdict.is_empty() {
                    pending = None;
                }
            }
        }
    }

    /// hyperfine's summary, "A ran / N times faster than B", when the command names say which
    /// is the base (old, base, baseline, main, master, before) or the head (new, head, pr,
    /// after, patched, optimized); other pairs of commands say nothing about this PR.
    pub(super) fn hyperfine(&mut self) {
        for i in 0..self.lines.len() {
            let Some(ran) = HYPERFINE_RAN.captures(self.lines[i]) else {
                continue;
            };
            let faster = ran[1].to_owned();
            let runs = self.lines[..i]
                .iter()
                .filter_map(|l| HYPERFINE_RUNS.captures(l))
                .filter_map(|c| c[1].parse::<u32>().ok())
                .min();
            for j in i + 1..self.lines.len() {
                let Some(c) = HYPERFINE_FASTER.captures(self.lines[j]) else {
                    break;
                };
                let Some(factor) = number(&c[1]) else {
                    continue;
                };
                let slower = &c[2];
                let head_faster = match (side_of(&faster), side_of(slower)) {
                    (Some(Side::Head), _) | (_, Some(Side::Base)) => true,
                    (Some(Side::Base), _) | (_, Some(Side::Head)) => false,
                    _ => continue,
                };
                let pct = factor_to_time_pct(factor, head_faster);
                self.push(j, None, Metric::Time, [pct, pct], runs, Source::Hyperfine);
                if let Some(claim) = self.claims.last_mut()
                    && claim.line == j + 1
                {
                    claim.quote = format!("{} ran {}", faster, claim.quote);
                }
            }
        }
    }
}

/// Nanoseconds in one of a time unit.
fn unit_ns(unit: &str) -> f64 {
    match unit {
        "s" => 1e9,
        "ms" => 1e6,
        "µs" | "μs" | "us" => 1e3,
        _ => 1.0,
    }
}
