//! JMH's result table, as printed at the end of a run or written by `-rf text`:
//!
//! ```text
//! Benchmark                 (number)   Mode  Cnt         Score        Error  Units
//! Generator.viaIteration          10  thrpt   25  12068269.101 ± 972590.051  ops/s
//! ```
//!
//! Every row is one benchmark named `Class.method [mode] (param=value, …)` (params sorted by
//! name, no parentheses without params), the scheme of the JSON reader, so a suite keeps its series whichever JMH output it is read from. The table has
//! JMH's summary, not its iterations: each row is one measurement (the score, with `± error` as
//! its bounds). `thrpt` becomes `throughput` in ops/s (higher is better); `avgt`, `sample` and
//! `ss` become `time` in ns. Secondary rows (`Class.method:·gc.alloc.rate.norm`) keep their
//! label as the metric (`B/op` becomes `bytes_per_op`). Sample-mode percentile rows
//! (`:method·p0.99`) are skipped with one warning: they describe the distribution whose mean is
//! the `sample` row, and gating eight correlated percentiles would count one change eight times.
//! Rows whose score JMH printed only as a magnitude (`≈ 10⁻⁷`) are skipped with a warning.
//! Columns are found from the header: JMH right-aligns every column but the first.

use super::units::{self, number};
use super::{Format, Measurement, ParseError, Parsed, metric, unit};
use benchgate_api::metric::Direction;

/// Whether `line` is the header of JMH's result table.
pub(crate) fn is_header(line: &str) -> bool {
    let tokens: Vec<&str> = line.split_whitespace().collect();
    tokens.first() == Some(&"Benchmark")
        && tokens.last() == Some(&"Units")
        && tokens.contains(&"Mode")
        && tokens.contains(&"Score")
}

/// A header column: its name and the character column where it ends (exclusive).
struct Column {
    name: String,
    end: usize,
}

/// Parse JMH's text result table.
pub(crate) fn parse(text: &str) -> Result<Parsed, ParseError> {
    let mut out = Vec::new();
    let mut warnings = Vec::new();
    let mut percentiles = 0usize;
    let mut columns: Option<Vec<Column>> = None;
    // JMH separates groups of rows (another parameter set, another class) by a blank line
    // inside one table; a line after a blank that is no row ends the table.
    let mut after_blank = false;
    for (i, raw) in text.lines().enumerate() {
        let line = raw.trim_end_matches('\r');
        if is_header(line) {
            columns = Some(
                spans(line)
                    .into_iter()
                    .map(|(_, end, name)| Column {
                        name: name.to_string(),
                        end,
                    })
                    .collect(),
            );
            continue;
        }
        let Some(cols) = columns.as_ref() else {
            continue;
        };
        if line.trim().is_empty() {
            after_blank = true;
            continue;
        }
        let row = match Row::read(cols, line, i + 1) {
            Ok(row) => row,
            Err(_) if after_blank => {
                columns = None;
                after_blank = false;
                continue;
            }
            Err(e) => return Err(e),
        };
        after_blank = false;
        if is_percentile(row.name) {
            percentiles += 1;
            continue;
        }
        match row.measurement() {
            Ok(m) => out.push(m),
            Err(why) => warnings.push(format!("jmh: `{}`: {why}; skipped", row.series())),
        }
    }
    if percentiles > 0 {
        warnings.insert(
            0,
            format!(
                "jmh: skipped {percentiles} sample-mode percentile row(s) (`·p0.50` … `·p1.00`): \
                 the `sample` row's score is the benchmark"
            ),
        );
    }
    Ok(Parsed {
        format: Format::Jmh,
        measurements: out,
        warnings,
    })
}

/// `Class.method:method·p0.99`. The `·` may have been re-encoded on the way (a Windows console
/// writes it as byte 0xB7, read back as U+FFFD), so any non-alphanumeric separator counts.
fn is_percentile(name: &str) -> bool {
    let Some((_, label)) = name.split_once(':') else {
        return false;
    };
    label.char_indices().any(|(i, c)| {
        c == 'p'
            && label[..i]
                .chars()
                .next_back()
                .is_some_and(|b| !b.is_alphanumeric() && b != '_')
            && number(&label[i + 1..]).is_some()
    })
}

/// Whitespace-separated tokens with their start and end character columns.
fn spans(line: &str) -> Vec<(usize, usize, &str)> {
    let mut out = Vec::new();
    let mut start: Option<(usize, usize)> = None;
    let mut col = 0;
    for (byte, c) in line.char_indices() {
        if c.is_whitespace() {
            if let Some((sc, sb)) = start.take() {
                out.push((sc, col, &line[sb..byte]));
            }
        } else if start.is_none() {
            start = Some((col, byte));
        }
        col += 1;
    }
    if let Some((sc, sb)) = start {
        out.push((sc, col, &line[sb..]));
    }
    out
}

/// One row, its cells assigned to header columns.
struct Row<'a> {
    name: &'a str,
    params: Vec<(String, String)>,
    mode: &'a str,
    score: String,
    error: Option<&'a str>,
    units: &'a str,
}

impl<'a> Row<'a> {
    fn read(cols: &[Column], line: &'a str, line_no: usize) -> Result<Self, ParseError> {
        let tokens = spans(line);
        let err = |col: usize, message: String| {
            ParseError::at_line(Format::Jmh, line_no, Some(col + 1), message)
        };
        let (Some(first), Some(last)) = (tokens.first(), tokens.last()) else {
            return Err(err(0, "expected a result row".into()));
        };
        if tokens.len() < 3 {
            return Err(err(
                first.0,
                format!(
                    "expected a result row (benchmark, mode, score, units), found {:?}",
                    line.trim()
                ),
            ));
        }
        let mut cells: Vec<Vec<&str>> = vec![Vec::new(); cols.len()];
        for &(_, end, token) in &tokens[1..tokens.len() - 1] {
            // Right-aligned: a token belongs to the first column ending at or after it (`±`
            // and `≈` sit in the gap before the number they qualify).
            let Some(at) = cols.iter().skip(1).position(|c| c.end >= end) else {
                return Err(err(
                    end - 1,
                    format!("unexpected {token:?} past the last column"),
                ));
            };
            cells[at + 1].push(token);
        }
        let cell = |name: &str| -> Vec<&'a str> {
            cols.iter()
                .position(|c| c.name == name)
                .map(|i| cells[i].clone())
                .unwrap_or_default()
        };
        let mode = cell("Mode");
        let Some(&mode) = mode.first() else {
            return Err(err(
                first.1,
                format!(
                    "expected a mode (thrpt, avgt, sample, ss) in {:?}",
                    line.trim()
                ),
            ));
        };
        let mut params: Vec<(String, String)> = cols
            .iter()
            .zip(&cells)
            .filter(|(c, v)| c.name.starts_with('(') && !v.is_empty())
            .map(|(c, v)| {
                let key = c.name.trim_start_matches('(').trim_end_matches(')');
                (key.to_string(), v.join(" "))
            })
            .collect();
        // Sorted by name, as the JSON reader sorts them, so both outputs name a run alike.
        params.sort();
        let error = cell("Error")
            .into_iter()
            .rfind(|t| number(t).is_some() || *t == "NaN");
        Ok(Row {
            name: first.2,
            params,
            mode,
            score: cell("Score").join(" "),
            error,
            units: last.2,
        })
    }

    /// `Class.method [mode] (k=v, …)`, plus `:label` for a secondary row's metric source.
    fn series(&self) -> String {
        let base = self.name.split(':').next().unwrap_or(self.name);
        let mut name = format!("{base} [{}]", self.mode);
        if !self.params.is_empty() {
            let pairs: Vec<String> = self
                .params
                .iter()
                .map(|(k, v)| format!("{k}={v}"))
                .collect();
            name.push_str(&format!(" ({})", pairs.join(", ")));
        }
        name
    }

    /// The measurement, or why the row has none (a score shown only as `≈ 10⁻⁷`).
    fn measurement(&self) -> Result<Measurement, String> {
        let score = number(&self.score).ok_or_else(|| {
            format!(
                "its score {:?} is not a number JMH printed in full",
                self.score
            )
        })?;
        let secondary = self
            .name
            .split_once(':')
            .map(|(_, label)| label.trim_start_matches(['\u{b7}', '\u{fffd}', '?']));
        let (metric_name, unit_name, factor, direction) =
            normalise(secondary, self.mode, self.units)
                .ok_or_else(|| format!("unknown unit {:?} for mode {}", self.units, self.mode))?;
        let series = self.series();
        let mut m = units::measurement(&series, &metric_name, &unit_name, score * factor)
            .with_direction(direction);
        if let Some(e) = self.error.and_then(number) {
            m.lower = Some((score - e) * factor);
            m.upper = Some((score + e) * factor);
        }
        Ok(m)
    }
}

/// The metric, unit, factor and direction for a row's units and mode.
fn normalise(
    secondary: Option<&str>,
    mode: &str,
    score_unit: &str,
) -> Option<(String, String, f64, Direction)> {
    if let Some(label) = secondary {
        if score_unit == "B/op" {
            return Some((
                metric::BYTES_PER_OP.into(),
                unit::BYTES.into(),
                1.0,
                Direction::LowerIsBetter,
            ));
        }
        // Profiler metrics (allocation rate, GC count and time) are costs whatever their unit.
        return Some((
            label.to_string(),
            score_unit.to_string(),
            1.0,
            Direction::LowerIsBetter,
        ));
    }
    if mode == "thrpt" {
        let (rate_unit, factor) = units::throughput(score_unit)?;
        return Some((
            metric::THROUGHPUT.into(),
            rate_unit.into(),
            factor,
            Direction::HigherIsBetter,
        ));
    }
    let per_op = score_unit.strip_suffix("/op").and_then(units::ns_per)?;
    Some((
        metric::TIME.into(),
        unit::NS.into(),
        per_op,
        Direction::LowerIsBetter,
    ))
}
