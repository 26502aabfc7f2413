//! Claims pasted as tables or tool output, read line by line: the tools' own output
//! ([`tools`]: benchstat, criterion, hyperfine, pytest-benchmark, Google Benchmark's
//! `compare.py`), Markdown tables with a change column, lists of "`name`: −26% time", and
//! "before -> after" values.

mod columns;
mod tools;

use std::sync::LazyLock;

use regex::Regex;

use crate::comparisons::{NotRead, introduced_comparison};
use crate::{Claim, Metric, Source, factor_to_time_pct, metric_of_unit};

fn re(pattern: &str) -> Regex {
    Regex::new(pattern).expect("a valid pattern")
}

/// A row: the name (may hold spaces: `udiv<uint256, uint32_t>`), the relative change of time
/// and of CPU time as signed fractions, then the four old/new values.
static CPU: LazyLock<Regex> = LazyLock::new(|| re(r"^\s*cpu:\s*(\S.*?)\s*$"));
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
    /// Per line, the sentence that introduced its block as a comparison of two other things
    /// ("to compare the work between A and B"), and what it compares.
    comparison: Vec<Option<(usize, [String; 2])>>,
    claims: Vec<Claim>,
    not_read: Vec<NotRead>,
}

/// Words that introduce sample output rather than results of this change.
const EXAMPLE_WORDS: [&str; 7] = [
    "example",
    // "They can be compared with benchstat later.": what a tool would show, not a result.
    "can be compared",
    "could be compared",
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

/// The claims of the body's tables and tool output, and the blocks introduced as a comparison
/// of two other things (listed once, at the sentence that introduces them).
pub(crate) fn read(lines: &[&str]) -> (Vec<Claim>, Vec<NotRead>) {
    let mut r = Reader {
        lines,
        machine: None,
        example: example_lines(lines),
        comparison: introduced_comparison(lines),
        claims: Vec::new(),
        not_read: Vec::new(),
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
        } else if let Some(next) = r.benchcmp(i) {
            next
        } else if let Some(next) = r.critcmp(i) {
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
    (r.claims, r.not_read)
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
        if let Some((intro, compares)) = &self.comparison[line] {
            if !self.not_read.iter().any(|n| n.line == intro + 1) {
                self.not_read.push(NotRead {
                    line: intro + 1,
                    quote: self.lines[*intro].trim().to_owned(),
                    compares: compares.clone(),
                });
            }
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
        // A block ends at a blank line or where the next section's header starts (benchstat
        // pastes `alloc/op` and `allocs/op` sections without a blank line between).
        while j < self.lines.len()
            && !self.lines[j].trim().is_empty()
            && !tools::starts_section(self.lines[j])
        {
            if let Some((name, pct, runs)) = row(self.lines[j]) {
                self.push(j, Some(name), metric, [pct, pct], runs, source);
            }
            j += 1;
        }
        j
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
        });
        let Some(change) = change else {
            return self.two_columns(i, &header);
        };
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
