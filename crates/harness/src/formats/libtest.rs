//! `cargo bench` with libtest's built-in harness:
//! `test name ... bench:       3,161 ns/iter (+/- 975)`.
//!
//! Also the lines criterion writes with `--output-format bencher`. libtest's `+/-` is the
//! spread (max − min) of its trimmed samples; it is kept as bounds around the value.

use benchgate_api::Direction;

use super::error::column_of;
use super::units::{self, number};
use super::{Format, Measurement, ParseError, metric, unit};

/// Parse libtest bench output. Tests that were ignored or failed are not measurements and are
/// skipped; text around the results (cargo's `Running …`, summaries) is ignored.
pub(crate) fn parse(text: &str) -> Result<Vec<Measurement>, ParseError> {
    let mut out = Vec::new();
    for (i, line) in text.lines().enumerate() {
        if let Some(m) = parse_line(Format::Libtest, i + 1, line)? {
            out.push(m);
        }
    }
    Ok(out)
}

/// One libtest bench line, or `None` when the line is not one. `format` names the caller
/// (criterion accepts these lines too) in errors.
pub(crate) fn parse_line(
    format: Format,
    line_no: usize,
    line: &str,
) -> Result<Option<Measurement>, ParseError> {
    let Some(rest) = line.trim_start().strip_prefix("test ") else {
        return Ok(None);
    };
    let Some((name, result)) = rest.split_once(" ... bench:") else {
        return Ok(None);
    };
    let name = name.trim();
    let err = |part: &str, message: String| {
        ParseError::at_line(format, line_no, column_of(line, part), message)
    };
    let mut tokens = result.split_whitespace();
    let value_text = tokens.next().unwrap_or(result);
    let value = number(value_text).ok_or_else(|| {
        err(
            value_text,
            format!("expected a number after `bench:`, found {value_text:?}"),
        )
    })?;
    let unit_text = tokens.next().unwrap_or("");
    if unit_text.is_empty() {
        return Err(err(
            result,
            format!("expected a unit such as `ns/iter` after {value_text}"),
        ));
    }
    let spread = match (tokens.next(), tokens.next()) {
        (Some("(+/-"), Some(dev)) => {
            let dev_text = dev.trim_end_matches(')');
            Some(number(dev_text).ok_or_else(|| {
                err(
                    dev,
                    format!("expected a number after `(+/-`, found {dev_text:?}"),
                )
            })?)
        }
        _ => None,
    };
    let (metric_name, unit_name, factor) = normalise(unit_text);
    let value = units::checked_at(format, line_no, column_of(line, value_text), value * factor)?;
    let mut m = units::measurement(name, &metric_name, &unit_name, value);
    if metric_name == metric::TIME {
        m.direction = Direction::LowerIsBetter;
    }
    if let Some(dev) = spread {
        m.lower = Some(value - dev * factor);
        m.upper = Some(value + dev * factor);
    }
    Ok(Some(m))
}

/// `ns/iter` and friends become `time` in ns (lower is better); any other unit (`cycles/iter`,
/// `MS/s`, written by custom harnesses) is kept, named after itself, with
/// [`Direction::infer`]'s default (higher is better for a `…/s` unit).
fn normalise(unit_text: &str) -> (String, String, f64) {
    let per_iter = unit_text.strip_suffix("/iter").unwrap_or(unit_text);
    if let Some(factor) = units::ns_per(per_iter) {
        return (metric::TIME.into(), unit::NS.into(), factor);
    }
    (per_iter.to_string(), per_iter.to_string(), 1.0)
}
