//! divan (the Rust benchmarking crate) console output: a tree of groups and benchmarks under a
//! header `name  fastest │ slowest │ median │ mean │ samples │ iters`.
//!
//! Each benchmark's **mean** becomes its `time` (ns). The mean, not the median, because the other
//! harnesses benchgate reads report a mean per round too (criterion's estimate, Google
//! Benchmark's `real_time`, JMH's score, pyperf's per-loop values), so a divan suite pairs and
//! gates like theirs; divan's own median is one column away if a user wants it some day.
//! Counter rows under a benchmark (throughput such as `1.2 GB/s` or `3.5 Mitem/s`, and the
//! `alloc:`/`dealloc:`/`grow:`/`shrink:` counts and sizes of divan's `AllocProfiler`) are read
//! from the same column. Names join the tree path with `/`, starting at the header's root
//! (`example/fibonacci/32`), so two bench targets in one output stay apart.

use super::error::column_of;
use super::units::{self, number};
use super::{Format, Measurement, ParseError, Parsed, metric, unit};
use benchgate_api::metric::Direction;

/// The header cells after the name column, in the order divan prints them.
const COLUMNS: [&str; 6] = ["fastest", "slowest", "median", "mean", "samples", "iters"];
/// The column whose value becomes the measurement (see the module comment).
const MEAN: usize = 3;

/// Whether `line` is a divan table header.
pub(crate) fn is_header(line: &str) -> bool {
    header_columns(line).is_some()
}

/// The character column where the `fastest` cell starts, when `line` is a header.
fn header_columns(line: &str) -> Option<usize> {
    let (name_part, rest) = line.split_once("fastest")?;
    let cells: Vec<&str> = rest.split('\u{2502}').map(str::trim).collect();
    let matches = cells.len() == COLUMNS.len()
        && cells[0].is_empty()
        && cells[1..].iter().zip(&COLUMNS[1..]).all(|(c, w)| c == w);
    matches.then(|| name_part.chars().count())
}

/// One table being read: the root name, where the `fastest` column starts, the open groups.
struct Table {
    fastest_col: usize,
    indent: usize,
    path: Vec<String>,
    /// The benchmark whose counter rows may follow, and the `alloc:`-style label in force.
    last: Option<(String, Option<String>)>,
}

/// Parse divan's console output. Benchmarks that print no values are skipped with a warning.
pub(crate) fn parse(text: &str) -> Result<Parsed, ParseError> {
    let mut out = Vec::new();
    let mut warnings = Vec::new();
    let mut table: Option<Table> = None;
    for (i, raw) in text.lines().enumerate() {
        let line = raw.trim_end_matches('\r');
        let line_no = i + 1;
        if let Some(fastest_col) = header_columns(line) {
            let indent = line.chars().take_while(|c| *c == ' ').count();
            let root = line.trim().split("fastest").next().unwrap_or("").trim();
            table = Some(Table {
                fastest_col,
                indent,
                path: vec![root.to_string()],
                last: None,
            });
            continue;
        }
        let Some(t) = table.as_mut() else { continue };
        if !line.contains('\u{2502}') && !has_marker(line) {
            // Blank or foreign text ends the table: the next one starts with its own header.
            table = None;
            continue;
        }
        read_row(t, line, line_no, &mut out, &mut warnings)?;
    }
    Ok(Parsed {
        format: Format::Divan,
        measurements: out,
        warnings,
    })
}

fn has_marker(line: &str) -> bool {
    line.contains("\u{251c}\u{2500}") || line.contains("\u{2570}\u{2500}")
}

fn read_row(
    t: &mut Table,
    line: &str,
    line_no: usize,
    out: &mut Vec<Measurement>,
    warnings: &mut Vec<String>,
) -> Result<(), ParseError> {
    let chars: Vec<char> = line.chars().collect();
    let split = t.fastest_col.min(chars.len());
    let tree: String = chars[..split].iter().collect();
    let rest: String = chars[split..].iter().collect();
    // The marker `├─ ` / `╰─ ` starts the name; its column gives the depth (3 per level).
    let marker = tree
        .char_indices()
        .find(|(_, c)| *c == '\u{251c}' || *c == '\u{2570}')
        .map(|(b, _)| (tree[..b].chars().count(), b));
    let cells: Vec<&str> = rest.split('\u{2502}').map(str::trim).collect();
    let Some((col, byte)) = marker else {
        return read_counter(t, &rest, line_no, &cells, out);
    };
    let depth = col.saturating_sub(t.indent) / 3 + 1;
    let name = tree[byte..]
        .trim_start_matches(['\u{251c}', '\u{2570}', '\u{2500}'])
        .trim();
    if name.is_empty() {
        return Err(ParseError::at_line(
            Format::Divan,
            line_no,
            Some(col + 1),
            "expected a benchmark or group name after the tree marker",
        ));
    }
    t.path.truncate(depth);
    t.path.push(name.to_string());
    t.last = None;
    if cells.iter().all(|c| c.is_empty()) {
        // A group (or a benchmark with arguments): its children follow.
        return Ok(());
    }
    let benchmark = t.path.join("/");
    if cells.len() != COLUMNS.len() {
        return Err(ParseError::at_line(
            Format::Divan,
            line_no,
            Some(t.fastest_col + 1),
            format!(
                "expected {} cells separated by `│` (fastest … iters), found {}",
                COLUMNS.len(),
                cells.len()
            ),
        ));
    }
    let mean = cells[MEAN];
    if mean.is_empty() {
        warnings.push(format!("divan: `{benchmark}` printed no mean; skipped"));
        return Ok(());
    }
    let ns = time_ns(mean).ok_or_else(|| {
        ParseError::at_line(
            Format::Divan,
            line_no,
            column_of(&rest, mean).map(|c| c + t.fastest_col),
            format!("expected a time such as `1.5 µs` in the mean column, found {mean:?}"),
        )
    })?;
    out.push(units::measurement(&benchmark, metric::TIME, unit::NS, ns));
    t.last = Some((benchmark, None));
    Ok(())
}

/// A row without a tree marker: a counter (throughput, allocations) of the last benchmark.
/// `rest` is the row from the `fastest` column on.
fn read_counter(
    t: &mut Table,
    rest: &str,
    line_no: usize,
    cells: &[&str],
    out: &mut Vec<Measurement>,
) -> Result<(), ParseError> {
    let Some((benchmark, label)) = t.last.as_mut() else {
        return Ok(());
    };
    let first = cells.first().copied().unwrap_or("");
    if let Some(name) = first.strip_suffix(':') {
        // `alloc:`, `max alloc:`, … label the count and size rows below them.
        *label = Some(name.trim().replace(' ', "_"));
        return Ok(());
    }
    let Some(&cell) = cells.get(MEAN) else {
        return Ok(());
    };
    if cell.is_empty() {
        return Ok(());
    }
    let column = column_of(rest, cell).map(|c| c + t.fastest_col);
    let err = |message: String| ParseError::at_line(Format::Divan, line_no, column, message);
    let mut tokens = cell.split_whitespace();
    let value_text = tokens.next().unwrap_or(cell);
    let value = number(value_text)
        .ok_or_else(|| err(format!("expected a number, found {value_text:?}")))?;
    let unit_text = tokens.next();
    let m = match (label.as_deref(), unit_text) {
        (Some(l), None) => units::measurement(benchmark, &format!("{l}_count"), unit::COUNT, value),
        (Some(l), Some(u)) => {
            let factor = units::bytes_per(u)
                .ok_or_else(|| err(format!("expected a size unit such as `KB`, found {u:?}")))?;
            units::measurement(
                benchmark,
                &format!("{l}_bytes"),
                unit::BYTES,
                value * factor,
            )
        }
        (None, Some(u)) => {
            let (metric_name, unit_name, factor) = rate(u).ok_or_else(|| {
                err(format!(
                    "expected a throughput unit such as `MB/s` or `Mitem/s`, found {u:?}"
                ))
            })?;
            units::measurement(benchmark, metric_name, unit_name, value * factor)
                .with_direction(Direction::HigherIsBetter)
        }
        (None, None) => return Err(err(format!("expected a unit after {value_text}"))),
    };
    out.push(m);
    Ok(())
}

/// A divan time such as `1.5 µs`, in nanoseconds.
fn time_ns(cell: &str) -> Option<f64> {
    let (value, time_unit) = cell.split_once(' ')?;
    Some(number(value)? * units::ns_per(time_unit.trim())?)
}

/// A divan throughput unit: bytes (`B/s`, `GB/s`, `KiB/s`) or items (`item/s`, `Mitem/s`,
/// and the older `itps` spelling).
fn rate(rate_unit: &str) -> Option<(&'static str, &'static str, f64)> {
    if let Some((unit::BYTES_PER_S, factor)) = units::throughput(rate_unit) {
        return Some((metric::THROUGHPUT, unit::BYTES_PER_S, factor));
    }
    let prefix = rate_unit
        .strip_suffix("item/s")
        .or_else(|| rate_unit.strip_suffix("itps"))?;
    let factor = match prefix {
        "" => 1.0,
        "K" => 1e3,
        "M" => 1e6,
        "G" => 1e9,
        "T" => 1e12,
        _ => return None,
    };
    // The same metric and unit Google Benchmark's `items_per_second` gets, so suites line up.
    Some(("items_per_second", unit::ITEMS_PER_S, factor))
}
