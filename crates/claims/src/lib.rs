//! benchgate-claims: the performance claims a pull request makes about itself, read from its
//! body, and their answer from a measured interval. Pure: text in, claims out.
//!
//! [`read`] finds claims in the forms PR authors paste: a `benchstat` table (both layouts),
//! criterion's `change:` lines, hyperfine's "N times faster than", a Markdown table with a
//! change column, "before -> after" lines, and sentences ("`parse` is 20% faster", "2× faster",
//! "speeds up X by 30%"). [`explicit`] reads `/benchgate claim BENCHMARK -20%`. A claim keeps
//! the line it came from, so a reader can hold the answer against the author's words.

mod answer;
mod comparisons;
// Real PR bodies (tests/bodies/), in the unit-test binary: one test binary per crate.
#[cfg(test)]
mod body_figures;
#[cfg(test)]
mod body_tests;
#[cfg(test)]
mod forms_tests;
mod names;
mod prose;
mod report;
mod sentence_forms;
mod sentences;
mod tables;

use benchgate_api::markdown::code;
use serde::{Deserialize, Serialize};

pub use answer::{Answer, Measured, answer};
pub use comparisons::NotRead;
pub use names::{Match, match_name};
pub use report::{answer_all, lines};

/// What a claim is about: the metric its number changes.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Metric {
    /// Time per operation or per run: lower is better.
    Time,
    /// Work per second (MB/s, ops/s): higher is better.
    Throughput,
    /// Allocations per operation: a count a harness makes exactly.
    Allocations,
    /// Bytes allocated or held.
    Memory,
}

/// Where a claim was read from.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Source {
    /// A `benchstat` table (`old time/op new time/op delta`, or `│ sec/op │ vs base │`).
    Benchstat,
    /// criterion's `change: [lo est hi]` with "Performance has improved/regressed".
    Criterion,
    /// hyperfine's summary: "A ran N ± e times faster than B".
    Hyperfine,
    /// Google Benchmark's `tools/compare.py` table (Time column: relative change).
    GoogleBenchmark,
    /// `cargo benchcmp`'s table (`diff %` column).
    Benchcmp,
    /// `critcmp`'s table of two baselines (time of each side).
    Critcmp,
    /// A Markdown (or aligned) table with a change, delta or speed-up column.
    Table,
    /// A "before -> after" line of two values.
    BeforeAfter,
    /// A sentence of the description.
    Sentence,
    /// `/benchgate claim BENCHMARK ±N%`.
    Command,
}

/// One claimed change.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Claim {
    /// The benchmark it names as written; `None` when it names none ("25% faster overall").
    pub benchmark: Option<String>,
    pub metric: Metric,
    /// The claimed change of the metric's value in percent, `[low, high]` (equal unless the
    /// author gave a range, "15–25% faster"). Time −20: a fifth less time; throughput +150:
    /// 2.5 times the work per second.
    pub change_pct: [f64; 2],
    /// Runs of each side behind the claim, when its table says (`n=10+10`; criterion's own
    /// comparison is one run against one).
    pub runs: Option<u32>,
    /// The machine its evidence names (benchstat's `cpu:`, "on aarch64/M1").
    pub machine: Option<String>,
    pub source: Source,
    /// 1-based line of the body it was read from, and that line, trimmed.
    pub line: usize,
    pub quote: String,
}

impl Claim {
    /// Whether the claim says the PR makes things better (faster, fewer allocations).
    pub fn improves(&self) -> bool {
        let mid = (self.change_pct[0] + self.change_pct[1]) / 2.0;
        match self.metric {
            Metric::Throughput => mid > 0.0,
            _ => mid < 0.0,
        }
    }
}

/// Longest body read, in characters: GitHub caps a PR body at 65,536; what is past that
/// is not read rather than scanned slowly.
pub const MAX_BODY_CHARS: usize = 262_144;

/// What a body says: its claims in the order they appear, and the lines that look like claims
/// but compare two things neither of which is this change.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Reading {
    pub claims: Vec<Claim>,
    pub not_read: Vec<NotRead>,
}

/// Every claim in a pull request body, in the order they appear. Tables and sentences inside
/// the same line are read once: a line that yields a table row is not read as a sentence.
pub fn read(body: &str) -> Vec<Claim> {
    read_all(body).claims
}

/// Struck-through text (`~~5-20% faster~~`) is withdrawn; a quoted line (`> …`) is someone
/// else's words: neither is read.
static STRUCK: std::sync::LazyLock<regex::Regex> =
    std::sync::LazyLock::new(|| regex::Regex::new(r"~~[^~]*~~").expect("a valid pattern"));

/// The claims of a body and what it compares without claiming ([`read`] keeps the claims).
pub fn read_all(body: &str) -> Reading {
    let body = match body.char_indices().nth(MAX_BODY_CHARS) {
        Some((cut, _)) => &body[..cut],
        None => body,
    };
    let cleaned: Vec<String> = body
        .lines()
        .map(|l| {
            if l.trim_start().starts_with('>') {
                String::new()
            } else {
                STRUCK.replace_all(l, "").into_owned()
            }
        })
        .collect();
    let lines: Vec<&str> = cleaned.iter().map(String::as_str).collect();
    let (mut claims, mut not_read) = tables::read(&lines);
    let taken: std::collections::HashSet<usize> = claims
        .iter()
        .map(|c| c.line)
        .chain(not_read.iter().map(|n| n.line))
        .collect();
    let (prose, compared) = sentences::read(&lines, &taken);
    claims.extend(prose);
    not_read.extend(compared);
    // A description may state its claim as the command would; a malformed one is not read.
    claims.extend(
        lines
            .iter()
            .enumerate()
            .filter_map(|(i, l)| explicit_line(i, l))
            .filter_map(Result::ok),
    );
    let machine = sentences::body_machine(&lines);
    for claim in claims.iter_mut().filter(|c| c.machine.is_none()) {
        claim.machine.clone_from(&machine);
    }
    claims.sort_by_key(|c| c.line);
    not_read.sort_by_key(|n| n.line);
    Reading { claims, not_read }
}

/// The claims of a `/benchgate claim BENCHMARK ±N%` (or `N× faster`) comment, one per line
/// that starts with the command; `Err` says what a malformed one lacks.
pub fn explicit(comment: &str) -> Result<Vec<Claim>, String> {
    comment
        .lines()
        .enumerate()
        .filter_map(|(i, line)| explicit_line(i, line))
        .collect()
}

/// One line's `/benchgate claim`, if it is one.
fn explicit_line(i: usize, line: &str) -> Option<Result<Claim, String>> {
    let rest = line.trim().strip_prefix("/benchgate claim")?;
    let mut words = rest.split_whitespace();
    let (Some(name), Some(size)) = (words.next(), words.next()) else {
        return Some(Err(format!(
            "`/benchgate claim` needs a benchmark and a change, e.g. `/benchgate claim parse \
             -20%` or `/benchgate claim parse 2x faster`; got {}",
            code(line.trim())
        )));
    };
    let rest: Vec<&str> = words.collect();
    let Some(change) = sentences::explicit_change(size, &rest) else {
        return Some(Err(format!(
            "{}: the change reads as a signed percent of time (`-20%`, `+5%`) or a factor \
             (`2x faster`, `1.5x slower`)",
            code(&format!("/benchgate claim {name} {size}"))
        )));
    };
    Some(Ok(Claim {
        benchmark: Some(name.trim_matches('`').to_owned()),
        metric: Metric::Time,
        change_pct: [change, change],
        runs: None,
        machine: None,
        source: Source::Command,
        line: i + 1,
        quote: line.trim().to_owned(),
    }))
}

/// Percent change of time for a speed factor: "2× faster" is −50%, "1.5× slower" +50%.
pub(crate) fn factor_to_time_pct(factor: f64, faster: bool) -> f64 {
    if faster {
        (1.0 / factor - 1.0) * 100.0
    } else {
        (factor - 1.0) * 100.0
    }
}

/// The metric a unit measures: `ns/op`, `sec/op`, `ms` → time; `MB/s` → throughput;
/// `allocs/op` → allocations; `B/op`, `MB` → memory.
pub(crate) fn metric_of_unit(unit: &str) -> Option<Metric> {
    let u = unit.trim().to_ascii_lowercase();
    let u = u.trim_matches(|c: char| c == '*' || c == '`');
    if u.contains("alloc") && !u.contains("b/op") && u != "alloc/op" {
        return Some(Metric::Allocations);
    }
    if u.ends_with("/s") || u == "speed" || u.contains("ops/s") {
        return Some(Metric::Throughput);
    }
    let base = u.split('/').next().unwrap_or("");
    let time = [
        "ns", "µs", "us", "μs", "ms", "s", "sec", "time", "min", "ps",
    ];
    if time.contains(&base) {
        return Some(Metric::Time);
    }
    let memory = [
        "b", "kb", "mb", "gb", "kib", "mib", "gib", "bytes", "alloc", "memory",
    ];
    if memory.contains(&base) {
        return Some(Metric::Memory);
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn units_name_their_metric() {
        for (unit, metric) in [
            ("ns/op", Metric::Time),
            ("sec/op", Metric::Time),
            ("time/op", Metric::Time),
            ("ms", Metric::Time),
            ("MB/s", Metric::Throughput),
            ("B/s", Metric::Throughput),
            ("speed", Metric::Throughput),
            ("allocs/op", Metric::Allocations),
            ("allocs", Metric::Allocations),
            ("B/op", Metric::Memory),
            ("alloc/op", Metric::Memory),
            ("bytes", Metric::Memory),
            ("MiB", Metric::Memory),
        ] {
            assert_eq!(metric_of_unit(unit), Some(metric), "{unit}");
        }
        assert_eq!(metric_of_unit("widgets"), None);
    }

    #[test]
    fn an_explicit_claim_is_a_signed_percent_or_a_factor() {
        let c = explicit("/benchgate claim parse -20%").unwrap();
        assert_eq!(c[0].benchmark.as_deref(), Some("parse"));
        assert_eq!(c[0].change_pct, [-20.0, -20.0]);
        assert_eq!(c[0].source, Source::Command);
        let c = explicit("thanks!\n/benchgate claim `decode/big` 2x faster").unwrap();
        assert_eq!(c[0].benchmark.as_deref(), Some("decode/big"));
        assert_eq!(c[0].change_pct, [-50.0, -50.0]);
        assert_eq!(c[0].line, 2);
        let err = explicit("/benchgate claim parse").unwrap_err();
        assert!(err.contains("needs a benchmark and a change"), "{err}");
        let err = explicit("/benchgate claim parse fast").unwrap_err();
        assert!(err.contains("signed percent"), "{err}");
        assert!(explicit("no command here").unwrap().is_empty());
    }

    #[test]
    fn a_description_may_state_its_claim_as_the_command_does() {
        let claims = read("Faster.\n\n/benchgate claim parse 2x faster\n/benchgate claim x\n");
        assert_eq!(claims.len(), 1, "{claims:?}");
        assert_eq!(claims[0].benchmark.as_deref(), Some("parse"));
        assert_eq!(claims[0].change_pct, [-50.0, -50.0]);
        assert_eq!(claims[0].source, Source::Command);
        assert_eq!(claims[0].line, 3);
    }

    /// The example of docs/configuration.md, "The PR's own claims", reads as it says.
    #[test]
    fn the_documented_example_reads_as_documented() {
        let body = "Avoids a copy in the hot loop: `parse` is about 20% faster.\n\n```\n\
                    cpu: Intel(R) Core(TM) i7-8650U CPU @ 1.90GHz\n\
                    name         old time/op  new time/op  delta\n\
                    Render-8     1.20ms ± 1%  0.96ms ± 2%  -20.00%  (p=0.000 n=10+10)\n\
                    ```\n\n/benchgate claim decode 2x faster\n";
        let claims = read(body);
        assert_eq!(claims.len(), 3, "{claims:#?}");
        assert_eq!(claims[0].benchmark.as_deref(), Some("parse"));
        assert_eq!(
            (claims[0].change_pct, claims[0].source),
            ([-20.0, -20.0], Source::Sentence)
        );
        assert_eq!(claims[1].benchmark.as_deref(), Some("Render-8"));
        assert_eq!(
            (claims[1].source, claims[1].runs),
            (Source::Benchstat, Some(10))
        );
        assert_eq!(
            claims[1].machine.as_deref(),
            Some("Intel(R) Core(TM) i7-8650U CPU @ 1.90GHz")
        );
        assert_eq!(claims[2].benchmark.as_deref(), Some("decode"));
        assert_eq!(
            (claims[2].change_pct, claims[2].source),
            ([-50.0, -50.0], Source::Command)
        );
    }

    #[test]
    fn a_huge_body_is_read_up_to_the_cap_only() {
        let body = format!("{}\n`parse` is 20% faster", "x".repeat(MAX_BODY_CHARS + 10));
        assert!(read(&body).is_empty());
        let body = format!("{}\n`parse` is 20% faster", "x".repeat(100));
        assert_eq!(read(&body).len(), 1);
    }

    /// compare.py with `--benchmark_repetitions`: per-repetition rows, aggregates and the U
    /// test's p-value. Only the `_mean` rows are claims; the p-value row says the runs.
    /// (Made up in compare.py's layout: the real bodies in tests/bodies have no repetitions.)
    #[test]
    fn compare_py_with_repetitions_reads_the_means_and_their_runs() {
        let body = "\
Benchmark                     Time             CPU      Time Old      Time New       CPU Old       CPU New
----------------------------------------------------------------------------------------------------------
BM_parse/64                -0.2000         -0.2000           100            80           100            80
BM_parse/64                -0.1900         -0.1900           100            81           100            81
BM_parse/64_pvalue          0.0002          0.0002      U Test, Repetitions: 9 vs 10
BM_parse/64_mean           -0.1950         -0.1950           100            80           100            80
BM_parse/64_median         -0.1950         -0.1950           100            80           100            80
BM_parse/64_stddev         +0.1000         +0.1000             1             1             1             1
BM_parse/64_cv             +0.1000         +0.1000             0             0             0             0
OVERALL_GEOMEAN            -0.1950         -0.1950             0             0             0             0
";
        let claims = read(body);
        assert_eq!(claims.len(), 1, "{claims:#?}");
        let c = &claims[0];
        assert_eq!(c.benchmark.as_deref(), Some("BM_parse/64"));
        assert!((c.change_pct[0] + 19.5).abs() < 1e-9);
        assert_eq!((c.runs, c.source), (Some(9), Source::GoogleBenchmark));
    }
}
