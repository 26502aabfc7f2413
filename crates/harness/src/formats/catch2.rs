//! Catch2's console reporter with benchmarks (`BENCHMARK("name") { … }`):
//!
//! ```text
//! benchmark name                            samples       iterations    estimated
//!                                           mean          low mean      high mean
//!                                           std dev       low std dev   high std dev
//! -------------------------------------------------------------------------------
//! Fibonacci 20                                        100             2     8.3712 ms
//!                                              41.731 us      41.25 us     42.622 us
//!                                               3.256 us      2.163 us      5.353 us
//! ```
//!
//! Each benchmark gives one `time` measurement in ns: Catch2's mean, bounded by its low and high
//! mean (a bootstrap interval); Catch2 does not print its individual samples. Benchmark names
//! repeat across test cases, so each is qualified by its test case and sections:
//! `Fibonacci / Fibonacci 20`. A name too long for its column wraps onto the mean line.
//! Catch2 prints long times in minutes (`m`), which are read as such.

use benchgate_api::Direction;

use super::error::column_of;
use super::units::{self, number};
use super::{Format, Measurement, ParseError, metric, unit};

/// Parse Catch2 console output.
pub(crate) fn parse(text: &str) -> Result<Vec<Measurement>, ParseError> {
    let lines: Vec<&str> = text.lines().map(|l| l.trim_end_matches('\r')).collect();
    let mut out = Vec::new();
    let mut test_case = String::new();
    let mut in_table = false;
    let mut i = 0;
    while i < lines.len() {
        let line = lines[i];
        if is_rule(line, '-') && !in_table {
            // A test-case header: its name and sections, up to the closing rule.
            let mut parts = Vec::new();
            i += 1;
            while i < lines.len() && !is_rule(lines[i], '-') {
                if !lines[i].trim().is_empty() {
                    parts.push(lines[i].trim());
                }
                i += 1;
            }
            test_case = parts.join(" / ");
        } else if line.starts_with("benchmark name") {
            // Two more header lines, then the rule that opens the table.
            i += 3;
            in_table = true;
        } else if in_table && (is_rule(line, '-') || is_rule(line, '=')) {
            in_table = false;
            continue;
        } else if in_table && let Some(first) = first_line(line) {
            let mut name = first.to_string();
            let (mean_no, mean_line) = next_nonblank(&lines, i + 1).ok_or_else(|| {
                ParseError::at_line(
                    Format::Catch2,
                    i + 1,
                    None,
                    format!("expected a mean line after benchmark `{}`", name.trim()),
                )
            })?;
            let (prefix, mean) = three_times(mean_no + 1, mean_line)?;
            if !prefix.trim().is_empty() {
                name = format!("{} {}", name.trim(), prefix.trim());
            }
            let full = if test_case.is_empty() {
                name.trim().to_string()
            } else {
                format!("{test_case} / {}", name.trim())
            };
            out.push(
                units::bounded(&full, metric::TIME, unit::NS, (mean.1, mean.0, mean.2))
                    .with_direction(Direction::LowerIsBetter),
            );
            // Skip the standard-deviation line that follows.
            i = mean_no + 2;
            continue;
        }
        i += 1;
    }
    Ok(out)
}

fn is_rule(line: &str, c: char) -> bool {
    let t = line.trim_end();
    t.len() >= 20 && t.chars().all(|x| x == c)
}

fn next_nonblank<'a>(lines: &[&'a str], from: usize) -> Option<(usize, &'a str)> {
    (from..lines.len())
        .map(|j| (j, lines[j]))
        .find(|(_, l)| !l.trim().is_empty())
}

/// The name part of `name   samples iterations estimated unit`, when the line has that shape.
fn first_line(line: &str) -> Option<&str> {
    let tokens: Vec<&str> = line.split_whitespace().collect();
    if tokens.len() < 5 {
        return None;
    }
    let n = tokens.len();
    let integer = |t: &str| t.bytes().all(|b| b.is_ascii_digit());
    let shaped = integer(tokens[n - 4])
        && integer(tokens[n - 3])
        && number(tokens[n - 2]).is_some()
        && units::catch2_ns_per(tokens[n - 1]).is_some();
    if !shaped {
        return None;
    }
    Some(&line[..byte_offset(line, tokens[n - 4])])
}

/// Where `part`, a subslice of `line` (from `split_whitespace`), starts.
fn byte_offset(line: &str, part: &str) -> usize {
    part.as_ptr() as usize - line.as_ptr() as usize
}

/// `[name continuation]  344 ns   341 ns   349 ns` → the prefix, and (mean, low, high) in ns.
fn three_times(line_no: usize, line: &str) -> Result<(&str, (f64, f64, f64)), ParseError> {
    let tokens: Vec<&str> = line.split_whitespace().collect();
    let err = |at: Option<&str>, message: String| {
        ParseError::at_line(
            Format::Catch2,
            line_no,
            at.and_then(|t| column_of(line, t)),
            message,
        )
    };
    if tokens.len() < 6 {
        return Err(err(
            None,
            "expected three times (mean, low mean, high mean) such as `344 ns 341 ns 349 ns`"
                .into(),
        ));
    }
    let n = tokens.len();
    let mut ns = [0.0; 3];
    for (k, slot) in ns.iter_mut().enumerate() {
        let (v, u) = (tokens[n - 6 + 2 * k], tokens[n - 5 + 2 * k]);
        let value =
            number(v).ok_or_else(|| err(Some(v), format!("expected a number, found {v:?}")))?;
        let factor = units::catch2_ns_per(u).ok_or_else(|| {
            err(
                Some(u),
                format!("expected a time unit (ns, us, ms, s, m), found {u:?}"),
            )
        })?;
        *slot = units::checked_at(Format::Catch2, line_no, column_of(line, v), value * factor)?;
    }
    Ok((
        &line[..byte_offset(line, tokens[n - 6])],
        (ns[0], ns[1], ns[2]),
    ))
}
