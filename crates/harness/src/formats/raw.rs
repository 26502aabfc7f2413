//! `raw`: one number per line, written by the user's own benchmark program.
//!
//! A line may end in a unit: a time unit (`12.5 ms`) makes it `time` in ns, a size unit
//! (`4 KiB`) `size` in bytes, and any other unit is kept as written (metric `value`). Empty
//! lines and lines starting with `#` are skipped. Every number is a sample of the benchmark
//! `raw`, in order, and **every line is one run**: the lines are whole-program times, as a
//! script that loops a command and appends its time writes them, so `analyze` counts ten
//! lines as ten runs. (`compare` and the agent average one process's lines, as for any format.)

use super::error::column_of;
use super::runs::ProcessRuns;
use super::units::{self, number};
use super::{Format, Measurement, ParseError, metric, unit};

/// The benchmark name every `raw` sample carries.
pub const RAW_BENCHMARK: &str = "raw";

/// Parse `raw` output.
pub(crate) fn parse(text: &str) -> Result<Vec<Measurement>, ParseError> {
    let mut runs = ProcessRuns::default();
    let mut out = Vec::new();
    for (i, line) in text.lines().enumerate() {
        let trimmed = line.trim();
        if trimmed.is_empty() || trimmed.starts_with('#') {
            continue;
        }
        let mut tokens = trimmed.split_whitespace();
        let value_text = tokens.next().unwrap_or(trimmed);
        let unit_text = tokens.next();
        if let Some(extra) = tokens.next() {
            return Err(ParseError::at_line(
                Format::Raw,
                i + 1,
                column_of(line, extra),
                format!("expected one number and an optional unit, found more: {extra:?}"),
            ));
        }
        let value = number(value_text).ok_or_else(|| {
            ParseError::at_line(
                Format::Raw,
                i + 1,
                column_of(line, value_text),
                format!("expected a number, found {value_text:?}"),
            )
        })?;
        runs.start();
        out.push(runs.tag(measurement(value, unit_text)));
    }
    Ok(runs.finish(out))
}

fn measurement(value: f64, unit_text: Option<&str>) -> Measurement {
    let Some(unit_text) = unit_text else {
        return units::measurement(RAW_BENCHMARK, metric::VALUE, unit::NONE, value);
    };
    if let Some(ns) = units::ns_per(unit_text) {
        return units::measurement(RAW_BENCHMARK, metric::TIME, unit::NS, value * ns);
    }
    if let Some(bytes) = units::bytes_per(unit_text) {
        return units::measurement(RAW_BENCHMARK, "size", unit::BYTES, value * bytes);
    }
    units::measurement(RAW_BENCHMARK, metric::VALUE, unit_text, value)
}
