//! Number and unit normalisation shared by the text parsers: time to nanoseconds, sizes to bytes.

use benchgate_api::Direction;

use super::{Format, Measurement, ParseError, unit};

/// Why a value cannot be a measurement: one rule for the parsers and the server's upload check.
pub(crate) use benchgate_api::sample::implausible;

/// Parse a finite decimal number; `,` thousands separators are allowed (libtest writes them).
///
/// Rejects `inf`, `NaN` and anything that is not plainly a number, which `f64::from_str`
/// would otherwise accept.
pub(crate) fn number(text: &str) -> Option<f64> {
    let cleaned: String = text.chars().filter(|&c| c != ',').collect();
    let plain = !cleaned.is_empty()
        && cleaned
            .chars()
            .all(|c| c.is_ascii_digit() || matches!(c, '.' | '-' | '+' | 'e' | 'E'))
        && cleaned.chars().any(|c| c.is_ascii_digit());
    if !plain {
        return None;
    }
    cleaned.parse::<f64>().ok().filter(|v| v.is_finite())
}

/// `value` when a measurement can hold it, else an error at `line_no` (and `column`).
pub(crate) fn checked_at(
    format: Format,
    line_no: usize,
    column: Option<usize>,
    value: f64,
) -> Result<f64, ParseError> {
    match implausible(value) {
        Some(why) => Err(ParseError::at_line(format, line_no, column, why)),
        None => Ok(value),
    }
}

/// Nanoseconds per one `unit` of time, for the spellings harnesses use.
pub(crate) fn ns_per(time_unit: &str) -> Option<f64> {
    Some(match time_unit {
        "ps" => 1e-3,
        "ns" => 1.0,
        // U+00B5 MICRO SIGN and U+03BC GREEK SMALL LETTER MU both occur in real output.
        "us" | "\u{b5}s" | "\u{3bc}s" => 1e3,
        "ms" => 1e6,
        "s" | "sec" => 1e9,
        _ => return None,
    })
}

/// Bytes per one `unit` of size: SI prefixes are powers of 1000, binary (`KiB`) of 1024.
pub(crate) fn bytes_per(size_unit: &str) -> Option<f64> {
    Some(match size_unit {
        "B" => 1.0,
        "KB" | "kB" => 1e3,
        "MB" => 1e6,
        "GB" => 1e9,
        "TB" => 1e12,
        "KiB" => 1024.0,
        "MiB" => 1024.0 * 1024.0,
        "GiB" => 1024.0 * 1024.0 * 1024.0,
        "TiB" => 1024.0 * 1024.0 * 1024.0 * 1024.0,
        _ => return None,
    })
}

/// A throughput unit such as `MiB/s`, `Kelem/s` or `ops/ms`: the metric's unit and the factor
/// that turns a value into it.
pub(crate) fn throughput(rate_unit: &str) -> Option<(&'static str, f64)> {
    let (amount, per) = rate_unit.split_once('/')?;
    let per_second = 1e9 / ns_per(per)?;
    if let Some(factor) = bytes_per(amount) {
        return Some((unit::BYTES_PER_S, factor * per_second));
    }
    let (scaled_unit, base) = match amount {
        "ops" | "op" => (unit::OPS_PER_S, 1.0),
        "elem" => (unit::ELEMS_PER_S, 1.0),
        "Kelem" => (unit::ELEMS_PER_S, 1e3),
        "Melem" => (unit::ELEMS_PER_S, 1e6),
        "Gelem" => (unit::ELEMS_PER_S, 1e9),
        _ => return None,
    };
    Some((scaled_unit, base * per_second))
}

/// A measurement without bounds, with the default direction for its metric and unit
/// ([`Direction::infer`]); parsers that know the direction use [`directed`].
pub(crate) fn measurement(benchmark: &str, metric: &str, unit: &str, value: f64) -> Measurement {
    Measurement::new(benchmark, metric, unit, value)
}

/// A measurement without bounds whose direction the harness stated.
pub(crate) fn directed(
    benchmark: &str,
    metric: &str,
    unit: &str,
    value: f64,
    direction: Direction,
) -> Measurement {
    Measurement::new(benchmark, metric, unit, value).with_direction(direction)
}

/// The time unit Catch2 prints, which adds minutes (`m`) to the usual ones; only Catch2 uses
/// `m` for minutes (elsewhere it could be metres), so [`ns_per`] does not know it.
pub(crate) fn catch2_ns_per(time_unit: &str) -> Option<f64> {
    match time_unit {
        "m" => Some(60e9),
        other => ns_per(other),
    }
}

/// A measurement with the bounds the harness reported around it.
pub(crate) fn bounded(
    benchmark: &str,
    metric: &str,
    unit: &str,
    (lower, value, upper): (f64, f64, f64),
) -> Measurement {
    Measurement {
        lower: Some(lower),
        upper: Some(upper),
        ..measurement(benchmark, metric, unit, value)
    }
}
