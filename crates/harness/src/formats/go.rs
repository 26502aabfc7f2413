//! `go test -bench` output (the Go benchmark data format):
//!
//! ```text
//! pkg: index/suffixarray
//! BenchmarkNew/text=opticks/size=100K/bits=32-8    295   4052123 ns/op   24.68 MB/s   401490 B/op   2 allocs/op
//! ```
//!
//! Every result line is one measurement, so `-count=10` gives ten per metric, in order, all of
//! one process. Each test binary prints a header (`goos:`, `goarch:`, `pkg:`, `cpu:`) before its
//! results: a header after results starts the next process, so outputs appended from several
//! `go test` runs (`>> old.txt` in a loop) are read as that many runs.
//! Names are kept as Go prints them, including the `-8` GOMAXPROCS suffix. When the output
//! covers several packages (`go test ./...`), the same benchmark name can occur in two of
//! them, so names are then qualified as `pkg.BenchmarkName`.
//!
//! As golang.org/x/perf's benchfmt does, a name may continue in lower case after `Benchmark`
//! (`Benchmarkuber_zap_dwarf_input_goodness`, written by bent); `go test` itself never writes
//! one, so accepting them loses nothing.

use super::benchstat;
use super::error::column_of;
use super::runs::ProcessRuns;
use super::units::{self, number};
use benchgate_api::Direction;

use super::{Format, Measurement, ParseError, metric, unit};

/// Parse Go benchmark output. Lines that do not look like results are skipped, as Go's own
/// tools do (`goos:`, `PASS`, `ok …`, test logs); a result line that starts well but breaks off
/// is an error.
pub(crate) fn parse(text: &str) -> Result<Vec<Measurement>, ParseError> {
    if benchstat::is_summary(text) {
        return Err(benchstat::summary_error(Format::Go));
    }
    let qualify = distinct_packages(text) > 1;
    let mut package = "";
    let mut runs = ProcessRuns::default();
    let mut out = Vec::new();
    for (i, line) in text.lines().enumerate() {
        if is_header(line) {
            runs.start();
        }
        if let Some(p) = line.strip_prefix("pkg:") {
            package = p.trim();
            continue;
        }
        let Some(fields) = result_fields(line) else {
            continue;
        };
        let name = if qualify && !package.is_empty() {
            format!("{package}.{}", fields[0])
        } else {
            fields[0].to_string()
        };
        let mut these = Vec::new();
        parse_values(i + 1, line, &name, &fields[2..], &mut these)?;
        out.extend(these.into_iter().map(|m| runs.tag(m)));
    }
    Ok(runs.finish(out))
}

/// A line of the header every test binary prints before its results.
fn is_header(line: &str) -> bool {
    ["goos:", "goarch:", "pkg:", "cpu:"]
        .iter()
        .any(|h| line.starts_with(h))
}

/// The whitespace-separated fields of a result line: a name `Benchmark…` and an iteration
/// count (benchfmt's rule; criterion's `Benchmarking name: …` progress lines have no count).
pub(crate) fn result_fields(line: &str) -> Option<Vec<&str>> {
    let fields: Vec<&str> = line.split_whitespace().collect();
    fields.first()?.strip_prefix("Benchmark")?;
    let iterations = fields.get(1)?;
    if !iterations.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    Some(fields)
}

fn distinct_packages(text: &str) -> usize {
    let mut seen: Vec<&str> = text
        .lines()
        .filter_map(|l| l.strip_prefix("pkg:").map(str::trim))
        .collect();
    seen.sort_unstable();
    seen.dedup();
    seen.len()
}

/// The `value unit` pairs after the iteration count.
fn parse_values(
    line_no: usize,
    line: &str,
    name: &str,
    pairs: &[&str],
    out: &mut Vec<Measurement>,
) -> Result<(), ParseError> {
    if pairs.is_empty() {
        return Err(ParseError::at_line(
            Format::Go,
            line_no,
            None,
            "expected a value and unit (such as `325 ns/op`) after the iteration count",
        ));
    }
    for pair in pairs.chunks(2) {
        let value = number(pair[0]).ok_or_else(|| {
            ParseError::at_line(
                Format::Go,
                line_no,
                column_of(line, pair[0]),
                format!("expected a number, found {:?}", pair[0]),
            )
        })?;
        let Some(unit_text) = pair.get(1) else {
            return Err(ParseError::at_line(
                Format::Go,
                line_no,
                column_of(line, pair[0]),
                format!("expected a unit after {}", pair[0]),
            ));
        };
        let m = measurement(name, value, unit_text);
        units::checked_at(Format::Go, line_no, column_of(line, pair[0]), m.value)?;
        out.push(m);
    }
    Ok(())
}

/// Go's standard units get benchgate's metric names and a stated direction; any other unit
/// (from `b.ReportMetric`) is its own metric, with [`Direction::infer`]'s default (higher is
/// better for a `…/s` unit).
fn measurement(name: &str, value: f64, unit_text: &str) -> Measurement {
    use Direction::*;
    if let Some(factor) = unit_text.strip_suffix("/op").and_then(units::ns_per) {
        return units::directed(name, metric::TIME, unit::NS, value * factor, LowerIsBetter);
    }
    match unit_text {
        "B/op" => units::directed(
            name,
            metric::BYTES_PER_OP,
            unit::BYTES,
            value,
            LowerIsBetter,
        ),
        "allocs/op" => units::directed(
            name,
            metric::ALLOCS_PER_OP,
            unit::COUNT,
            value,
            LowerIsBetter,
        ),
        // Go's MB/s is 10^6 bytes per second (testing.B.SetBytes).
        "MB/s" => units::directed(
            name,
            metric::THROUGHPUT,
            unit::BYTES_PER_S,
            value * 1e6,
            HigherIsBetter,
        ),
        other => units::measurement(name, other, other, value),
    }
}
