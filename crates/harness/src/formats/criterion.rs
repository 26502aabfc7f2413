//! criterion.rs console output:
//!
//! ```text
//! file                    time:   [2.0246 ns 2.2311 ns 2.4461 ns]
//!                         thrpt:  [1.2 GiB/s 1.3 GiB/s 1.4 GiB/s]
//! ```
//!
//! The middle number is criterion's estimate and the outer two its confidence interval; they
//! become the value and bounds. A name too long for its column is printed on a line of its
//! own, with `time:` on the next. Lines in libtest's format (`--output-format bencher`) are
//! accepted too.
//!
//! Against a saved baseline criterion adds a `change:` block, on one line
//! (`change: [-1.2% +0.3% +1.9%] (p = 0.61 > 0.05)`) or, with throughput, as `change:` followed
//! by its own `time:` and `thrpt:` lines in percent; then a verdict (`No change in performance
//! detected.`, `Performance has regressed.`) and `Found N outliers …`. Those compare two runs
//! and are not measurements, so they are skipped.

use benchgate_api::Direction;

use super::error::column_of;
use super::units::{self, number};
use super::{Format, Measurement, ParseError, libtest, metric, unit};

/// Parse criterion's stdout.
pub(crate) fn parse(text: &str) -> Result<Vec<Measurement>, ParseError> {
    let mut out = Vec::new();
    // The last line that could be a benchmark name printed on its own.
    let mut previous = "";
    // The benchmark that the latest `time:` line belonged to, for its `thrpt:` line.
    let mut current: Option<String> = None;
    // Inside a multi-line `change:` block, whose `time:`/`thrpt:` lines are percentages.
    let mut in_change = false;
    for (i, line) in text.lines().enumerate() {
        let line_no = i + 1;
        let trimmed = line.trim();
        if let Some(rest) = trimmed.strip_prefix("change:") {
            // The one-line form carries its interval; the block form continues below.
            in_change = rest.trim().is_empty();
            continue;
        }
        let labelled = |label| labelled_interval(line, label);
        if in_change {
            if labelled("time:").is_some() || labelled("thrpt:").is_some() {
                continue;
            }
            in_change = false;
        }
        if let Some(m) = libtest::parse_line(Format::Criterion, line_no, line)? {
            out.push(m);
            continue;
        }
        if let Some((label, interval)) = labelled("time:") {
            if is_percentages(interval) {
                continue;
            }
            let name = if label.trim().is_empty() {
                name_on_own_line(previous)
            } else {
                label.trim()
            };
            if name.is_empty() {
                return Err(ParseError::at_line(
                    Format::Criterion,
                    line_no,
                    Some(1),
                    "expected a benchmark name before `time:`",
                ));
            }
            let (lower, value, upper) = triple(line_no, line, interval)?;
            let ns = (
                time_ns(line_no, line, lower)?,
                time_ns(line_no, line, value)?,
                time_ns(line_no, line, upper)?,
            );
            out.push(
                units::bounded(name, metric::TIME, unit::NS, ns)
                    .with_direction(Direction::LowerIsBetter),
            );
            current = Some(name.to_string());
            continue;
        }
        if let Some((_, interval)) = labelled("thrpt:") {
            if is_percentages(interval) {
                continue;
            }
            let Some(name) = current.clone() else {
                return Err(ParseError::at_line(
                    Format::Criterion,
                    line_no,
                    None,
                    "expected a `time:` line before `thrpt:`",
                ));
            };
            let (lower, value, upper) = triple(line_no, line, interval)?;
            let mut converted = [lower, value, upper].into_iter().map(|(v, u)| {
                let (unit_name, factor) = units::throughput(u).ok_or_else(|| {
                    unit_error(
                        line_no,
                        line,
                        u,
                        "a throughput unit such as MiB/s or Kelem/s",
                    )
                })?;
                let scaled =
                    units::checked_at(Format::Criterion, line_no, column_of(line, u), v * factor)?;
                Ok::<_, ParseError>((scaled, unit_name))
            });
            let (lo, _) = converted.next().expect("three")?;
            let (v, unit_name) = converted.next().expect("three")?;
            let (hi, _) = converted.next().expect("three")?;
            // Criterion prints throughput as work per second: more is better.
            out.push(
                units::bounded(&name, metric::THROUGHPUT, unit_name, (lo, v, hi))
                    .with_direction(Direction::HigherIsBetter),
            );
            continue;
        }
        if !trimmed.is_empty() && !line.starts_with(char::is_whitespace) {
            previous = line;
        }
    }
    Ok(out)
}

/// Whether an interval is a change in percent (`[-1.2% +0.3% +1.9%]`) rather than a quantity.
fn is_percentages(interval: &str) -> bool {
    interval
        .split(']')
        .next()
        .is_some_and(|body| body.contains('%'))
}

/// A name printed alone on the line before `time:`. When criterion's progress lines reach a
/// pipe, that line can be `Benchmarking name: Analyzing`.
fn name_on_own_line(previous: &str) -> &str {
    let trimmed = previous.trim();
    match trimmed.strip_prefix("Benchmarking ") {
        Some(rest) => rest.strip_suffix(": Analyzing").unwrap_or(rest),
        None => trimmed,
    }
}

/// Split `name   time:   [ … ]` into the text before the label and the text inside brackets.
fn labelled_interval<'a>(line: &'a str, label: &str) -> Option<(&'a str, &'a str)> {
    let at = line.find(label)?;
    let after = line[at + label.len()..].trim_start();
    let inside = after.strip_prefix('[')?;
    Some((&line[..at], inside))
}

type Quantity<'a> = (f64, &'a str);

/// `2.0246 ns 2.2311 ns 2.4461 ns]` → three (number, unit) pairs.
fn triple<'a>(
    line_no: usize,
    line: &'a str,
    interval: &'a str,
) -> Result<(Quantity<'a>, Quantity<'a>, Quantity<'a>), ParseError> {
    let Some(body) = interval
        .split(']')
        .next()
        .filter(|_| interval.contains(']'))
    else {
        return Err(ParseError::at_line(
            Format::Criterion,
            line_no,
            column_of(line, interval),
            "expected `]` closing the interval",
        ));
    };
    let tokens: Vec<&str> = body.split_whitespace().collect();
    if tokens.len() != 6 {
        return Err(ParseError::at_line(
            Format::Criterion,
            line_no,
            column_of(line, body),
            format!(
                "expected three values with units inside `[…]`, found {} tokens",
                tokens.len()
            ),
        ));
    }
    let mut pairs = tokens.chunks(2).map(|pair| {
        number(pair[0]).map(|v| (v, pair[1])).ok_or_else(|| {
            ParseError::at_line(
                Format::Criterion,
                line_no,
                column_of(line, pair[0]),
                format!("expected a number, found {:?}", pair[0]),
            )
        })
    });
    let a = pairs.next().expect("three pairs")?;
    let b = pairs.next().expect("three pairs")?;
    let c = pairs.next().expect("three pairs")?;
    Ok((a, b, c))
}

fn time_ns(
    line_no: usize,
    line: &str,
    (value, unit_text): Quantity<'_>,
) -> Result<f64, ParseError> {
    let factor = units::ns_per(unit_text)
        .ok_or_else(|| unit_error(line_no, line, unit_text, "a time unit (ps, ns, µs, ms, s)"))?;
    units::checked_at(
        Format::Criterion,
        line_no,
        column_of(line, unit_text),
        value * factor,
    )
}

fn unit_error(line_no: usize, line: &str, found: &str, expected: &str) -> ParseError {
    ParseError::at_line(
        Format::Criterion,
        line_no,
        column_of(line, found),
        format!("expected {expected}, found {found:?}"),
    )
}
