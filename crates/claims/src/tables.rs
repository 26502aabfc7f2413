//! Claims pasted as tables or tool output: benchstat (both layouts), criterion's change lines,
//! hyperfine's summary, pytest-benchmark's compare table, Google Benchmark's `compare.py` table, Markdown tables with a change column,
//! lists of "`name`: −26% time", and "before -> after" values.

use std::sync::LazyLock;

use regex::Regex;

use crate::{Claim, Metric, Source, factor_to_time_pct, metric_of_unit};

fn re(pattern: &str) -> Regex {
    Regex::new(pattern).expect("a valid pattern")
}

static CPU: LazyLock<Regex> = LazyLock::new(|| re(r"^\s*cpu:\s*(\S.*?)\s*$"));
static OLD_BENCHSTAT: LazyLock<Regex> = LazyLock::new(|| {
    re(r"(?i)^\s*(?:name|benchmark)\s+old\s+(\S+)\s+new\s+(\S+)\s+(delta|speedup)\s*$")
});
static OLD_ROW: LazyLock<Regex> = LazyLock::new(|| {
    re(r"^\s*(\S+)\s+.*?\s([+-]?\d+(?:\.\d+)?)(%|x)\s*(?:\(p=[\d.]+\s+n=(\d+)(?:\+(\d+))?\))?\s*$")
});
static NEW_ROW: LazyLock<Regex> = LazyLock::new(|| {
    re(r"^\s*(\S+)\s+.*?\s([+-]\d+(?:\.\d+)?)%\s+\(p=[\d.]+\s+n=(\d+)(?:\+(\d+))?\)\s*$")
});
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
/// A row: the name (may hold spaces: `udiv<uint256, uint32_t>`), the relative change of time
/// and of CPU time as signed fractions, then the four old/new values.
static GBENCH_ROW: LazyLock<Regex> = LazyLock::new(|| {
    re(r"^\s*(\S.*?)\s+([+-]\d+(?:\.\d+)?)\s+([+-]\d+(?:\.\d+)?)\s+\S+\s+\S+\s+\S+\s+\S+\s*$")
});
static GBENCH_PVALUE: LazyLock<Regex> =
    LazyLock::new(|| re(r"^\s*(\S.*?)_pvalue\s.*Repetitions:\s*(\d+)\s+vs\s+(\d+)"));
static LIST_ITEM: LazyLock<Regex> = LazyLock::new(|| {
    re(r"(?i)^\s*[-*]\s*`([^`]+)`\s*:\s*([+-]\d+(?:\.\d+)?)\s*%\s*(time|faster|slower)?\s*$")
});
static ARROW: LazyLock<Regex> = LazyLock::new(|| {
    re(
        r"^\s*(?:[-*]\s*)?(?:([^:]{1,60}):\s*)?(\d[\d.,]*)\s*([A-Za-zµμ/]+)\s*(?:->|→|=>)\s*(\d[\d.,]*)\s*([A-Za-zµμ/]+)\s*$",
    )
});
static BEFORE: LazyLock<Regex> =
    LazyLock::new(|| re(r"(?i)^\s*(?:before|old|master|main|baseline)\s*:?\s+(\d.*)$"));
static AFTER: LazyLock<Regex> =
    LazyLock::new(|| re(r"(?i)^\s*(?:after|new|this pr|pr|optimi[sz]ed)\s*:?\s+(\d.*)$"));
static VALUE_UNIT: LazyLock<Regex> =
    LazyLock::new(|| re(r"(\d[\d.,]*)\s*([kKM]?)\s+([A-Za-zµμ]+/?[A-Za-z]*)"));
static PERCENT: LazyLock<Regex> = LazyLock::new(|| re(r"([+\-−]?\d+(?:\.\d+)?)\s*%"));
static FACTOR: LazyLock<Regex> = LazyLock::new(|| re(r"(?i)(\d+(?:\.\d+)?)\s*[x×]\b"));

/// What a table-reading pass carries from line to line.
struct Reader<'a> {
    lines: &'a [&'a str],
    machine: Option<String>,
    /// Per line, whether it belongs to output introduced as an example ("Example results:",
    /// "a table like"): a tool's sample output, not a claim about this change.
    example: Vec<bool>,
    claims: Vec<Claim>,
}

/// Words that introduce sample output rather than results of this change.
const EXAMPLE_WORDS: [&str; 5] = [
    "example",
    "a table like",
    "output like",
    "looks like",
    "sample output",
];

/// Whether one of the three lines above `i` introduces what follows as an example.
fn introduced_as_example(lines: &[&str], i: usize) -> bool {
    lines[i.saturating_sub(3)..i].iter().any(|l| {
        let l = l.to_lowercase();
        EXAMPLE_WORDS.iter().any(|w| l.contains(w))
    })
}

/// Per line, whether it is example output: a whole code block whose fence is introduced as an
/// example, or outside code a paragraph so introduced.
fn example_lines(lines: &[&str]) -> Vec<bool> {
    let mut out = Vec::with_capacity(lines.len());
    let mut block: Option<bool> = None;
    for (i, line) in lines.iter().enumerate() {
        let fence = line.trim_start().starts_with("```") || line.trim_start().starts_with("~~~");
        if fence {
            block = match block {
                Some(_) => None,
                None => Some(introduced_as_example(lines, i)),
            };
            out.push(false);
            continue;
        }
        // A paragraph (a table, a list) is an example when its first line is.
        let continues = i > 0 && !lines[i - 1].trim().is_empty() && !line.trim().is_empty();
        let flag = match block {
            Some(flag) => flag,
            None if continues => out[i - 1] || introduced_as_example(lines, i),
            None => introduced_as_example(lines, i),
        };
        out.push(flag);
    }
    out
}

pub(crate) fn read(lines: &[&str]) -> Vec<Claim> {
    let mut r = Reader {
        lines,
        machine: None,
        example: example_lines(lines),
        claims: Vec::new(),
    };
    let mut i = 0;
    while i < lines.len() {
        let line = lines[i];
        if let Some(c) = CPU.captures(line) {
            r.machine = Some(c[1].to_owned());
        }
        i = if let Some(next) = r.old_benchstat(i) {
            next
        } else if let Some(next) = r.new_benchstat(i) {
            next
        } else if let Some(next) = r.google_benchmark(i) {
            next
        } else if let Some(next) = r.pytest(i) {
            next
        } else if let Some(next) = r.markdown(i) {
            next
        } else {
            r.single_line(i);
            i + 1
        };
    }
    r.criterion();
    r.hyperfine();
    r.before_after();
    r.claims
}

/// A cell or name without Markdown emphasis or code marks.
fn plain(text: &str) -> String {
    text.trim()
        .trim_matches(|c: char| c == '*' || c == '`' || c == '_')
        .trim()
        .to_owned()
}

fn number(text: &str) -> Option<f64> {
    text.replace(',', "").replace('−', "-").parse().ok()
}

/// The percent change of a metric for a speed factor of the work per unit of it.
fn factor_pct(metric: Metric, factor: f64, better: bool) -> f64 {
    match metric {
        Metric::Throughput if better => (factor - 1.0) * 100.0,
        Metric::Throughput => (1.0 / factor - 1.0) * 100.0,
        _ => factor_to_time_pct(factor, better),
    }
}

impl Reader<'_> {
    fn push(
        &mut self,
        line: usize,
        benchmark: Option<String>,
        metric: Metric,
        pct: [f64; 2],
        runs: Option<u32>,
        source: Source,
    ) {
        // A claim of no change is not a claimed change.
        if pct[0] == 0.0 && pct[1] == 0.0 || self.example[line] {
            return;
        }
        self.claims.push(Claim {
            benchmark,
            metric,
            change_pct: pct,
            runs,
            machine: self.machine.clone(),
            source,
            line: line + 1,
            quote: self.lines[line].trim().to_owned(),
        });
    }

    /// The rows after header line `i`, up to a blank line: `row` reads a line's benchmark,
    /// change (percent of `metric`) and runs, `None` for a line that is not a row. Returns the
    /// line after the block.
    fn rows_after(
        &mut self,
        i: usize,
        metric: Metric,
        source: Source,
        row: impl Fn(&str) -> Option<(String, f64, Option<u32>)>,
    ) -> usize {
        let mut j = i + 1;
        while j < self.lines.len() && !self.lines[j].trim().is_empty() {
            if let Some((name, pct, runs)) = row(self.lines[j]) {
                self.push(j, Some(name), metric, [pct, pct], runs, source);
            }
            j += 1;
        }
        j
    }

    /// `name old time/op new time/op delta` and its rows, up to a blank line.
    fn old_benchstat(&mut self, i: usize) -> Option<usize> {
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
    fn new_benchstat(&mut self, i: usize) -> Option<usize> {
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

    /// Google Benchmark's `tools/compare.py` table, up to a blank line: the Time column is the
    /// relative change (−0.12: 12% less time). Without repetitions each side is one run; with
    /// them only the `_mean` rows are read (runs from the U test's `_pvalue` row when shown),
    /// and `OVERALL_GEOMEAN` is a summary of the rows above, not a benchmark.
    fn google_benchmark(&mut self, i: usize) -> Option<usize> {
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
    fn pytest(&mut self, i: usize) -> Option<usize> {
        PYTEST_HEADER.captures(self.lines[i])?;
        Some(self.rows_after(i, Metric::Time, Source::Table, |line| {
            let row = PYTEST_ROW.captures(line)?;
            Some((row[1].to_owned(), number(&row[2])?, None))
        }))
    }

    /// A Markdown table whose header has a change column (improvement, change, delta, diff,
    /// speed-up, slowdown) and a benchmark in its first column.
    fn markdown(&mut self, i: usize) -> Option<usize> {
        let header = cells(self.lines[i])?;
        let rule = cells(self.lines.get(i + 1)?)?;
        if !rule
            .iter()
            .all(|c| c.trim().chars().all(|ch| matches!(ch, '-' | ':' | ' ')))
        {
            return None;
        }
        let names: Vec<String> = header.iter().map(|c| plain(c).to_lowercase()).collect();
        let change = names.iter().position(|n| {
            [
                "improvement",
                "change",
                "delta",
                "diff",
                "speedup",
                "speed-up",
                "slowdown",
                "ratio",
            ]
            .iter()
            .any(|w| n == w || n.starts_with('δ') || n.starts_with(w))
        })?;
        let slowdown = names[change].starts_with("slowdown");
        // A speed-up or slowdown column speaks of time, whatever units the other cells hold.
        let of_time = slowdown || names[change].starts_with("speed");
        let metric_col = names.iter().position(|n| n == "metric");
        let mut current: Option<String> = None;
        let mut j = i + 2;
        while j < self.lines.len() {
            let Some(row) = cells(self.lines[j]) else {
                break;
            };
            let name = row.first().map(|c| plain(c)).unwrap_or_default();
            if !name.is_empty() {
                current = Some(name);
            }
            let metric = metric_col
                .and_then(|k| row.get(k))
                .map(|m| metric_word(&plain(m)))
                .or_else(|| {
                    (!of_time)
                        .then(|| row.iter().find_map(|c| unit_in(c)))
                        .flatten()
                })
                .unwrap_or(Metric::Time);
            if let Some(cell) = row.get(change) {
                let cell = plain(cell);
                let pct = if let Some(p) = PERCENT.captures(&cell) {
                    number(&p[1])
                } else if let Some(f) = FACTOR.captures(&cell) {
                    number(&f[1]).map(|f| factor_pct(metric, f, !slowdown))
                } else {
                    None
                };
                if let Some(pct) = pct {
                    self.push(j, current.clone(), metric, [pct, pct], None, Source::Table);
                }
            }
            j += 1;
        }
        Some(j)
    }

    /// Lines read on their own: "- `decode/x`: -26.6% time", "flate: 590 MB/s -> 1512 MB/s".
    fn single_line(&mut self, i: usize) {
        let line = self.lines[i];
        if let Some(c) = LIST_ITEM.captures(line)
            && let Some(mut v) = number(&c[2])
        {
            if c.get(3)
                .is_some_and(|w| w.as_str().eq_ignore_ascii_case("faster"))
            {
                v = -v.abs();
            }
            self.push(
                i,
                Some(c[1].to_owned()),
                Metric::Time,
                [v, v],
                None,
                Source::Table,
            );
            return;
        }
        if let Some(c) = ARROW.captures(line)
            && c[3] == c[5]
            && let (Some(metric), Some(a), Some(b)) =
                (metric_of_unit(&c[3]), number(&c[2]), number(&c[4]))
            && a > 0.0
        {
            let name = c.get(1).map(|n| plain(n.as_str()));
            let pct = (b / a - 1.0) * 100.0;
            self.push(i, name, metric, [pct, pct], None, Source::BeforeAfter);
        }
    }

    /// criterion's `change: [lo est hi]` after a benchmark's `time:` line, when the next line
    /// says "Performance has improved/regressed" (within noise or no change: no claim).
    fn criterion(&mut self) {
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
    fn hyperfine(&mut self) {
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

    /// Two lines "before 10.5 ms/op 5.14 MB/op" / "after 6.3 ms/op 3.70 MB/op": one claim per
    /// unit both lines give, named by the line above when it ends with a colon.
    fn before_after(&mut self) {
        for i in 0..self.lines.len().saturating_sub(1) {
            let (Some(b), Some(a)) = (
                BEFORE.captures(self.lines[i]),
                AFTER.captures(self.lines[i + 1]),
            ) else {
                continue;
            };
            let name = i
                .checked_sub(1)
                .map(|k| self.lines[k].trim())
                .filter(|l| l.ends_with(':'))
                .and_then(|l| l.split_whitespace().next())
                .map(|n| n.trim_end_matches(':').to_owned());
            let before = values(&b[1]);
            for (unit, after) in values(&a[1]) {
                if let Some((_, old)) = before.iter().find(|(u, _)| *u == unit)
                    && let Some(metric) = metric_of_unit(&unit)
                    && *old > 0.0
                {
                    let pct = (after / old - 1.0) * 100.0;
                    self.push(
                        i + 1,
                        name.clone(),
                        metric,
                        [pct, pct],
                        None,
                        Source::BeforeAfter,
                    );
                }
            }
        }
    }
}

/// The value-unit pairs of a line: "10.5 ms/op 141k allocs/op" → ms/op 10.5, allocs/op 141000.
fn values(text: &str) -> Vec<(String, f64)> {
    VALUE_UNIT
        .captures_iter(text)
        .filter_map(|c| {
            let scale = match &c[2] {
                "k" | "K" => 1e3,
                "M" => 1e6,
                _ => 1.0,
            };
            Some((c[3].to_owned(), number(&c[1])? * scale))
        })
        .collect()
}

fn runs_of(base: Option<regex::Match<'_>>, head: Option<regex::Match<'_>>) -> Option<u32> {
    let base: u32 = base?.as_str().parse().ok()?;
    let head = head.and_then(|h| h.as_str().parse().ok()).unwrap_or(base);
    Some(base.min(head))
}

/// The cells of a Markdown table row (at least two), without the outer pipes.
fn cells(line: &str) -> Option<Vec<&str>> {
    let t = line.trim();
    if !t.contains('|') {
        return None;
    }
    let t = t.strip_prefix('|').unwrap_or(t);
    let t = t.strip_suffix('|').unwrap_or(t);
    let cells: Vec<&str> = t.split('|').collect();
    (cells.len() >= 2).then_some(cells)
}

fn metric_word(word: &str) -> Metric {
    let w = word.to_lowercase();
    if w.contains("alloc") {
        Metric::Allocations
    } else if w.contains("mem") || w.contains("size") || w.contains("bytes") {
        Metric::Memory
    } else if w.contains("throughput") || w.contains("/s") {
        Metric::Throughput
    } else {
        Metric::Time
    }
}

/// The metric of the first "value unit" in a cell ("44.39 ms/op").
fn unit_in(cell: &str) -> Option<Metric> {
    VALUE_UNIT
        .captures(&plain(cell))
        .and_then(|c| metric_of_unit(&c[3]))
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Side {
    Base,
    Head,
}

/// Which side a command's name says it is, by its words.
fn side_of(command: &str) -> Option<Side> {
    let words: Vec<String> = command
        .split(|c: char| !c.is_ascii_alphanumeric())
        .filter(|w| !w.is_empty())
        .map(str::to_ascii_lowercase)
        .collect();
    let has = |list: &[&str]| words.iter().any(|w| list.contains(&w.as_str()));
    let base = has(&[
        "old", "base", "baseline", "main", "master", "before", "orig", "upstream",
    ]);
    let head = has(&[
        "new",
        "head",
        "pr",
        "after",
        "patched",
        "optimized",
        "optimised",
        "candidate",
    ]);
    match (base, head) {
        (true, false) => Some(Side::Base),
        (false, true) => Some(Side::Head),
        _ => None,
    }
}
