//! Parsers that turn a benchmark harness's output into measurements.
//!
//! Every parser is pure: it takes the harness's output as `&str` and returns
//! `Result<Vec<Measurement>, ParseError>`. Units are normalised (time to nanoseconds, sizes
//! to bytes) and the unit is kept in each measurement. Where a harness reports several samples
//! of one benchmark (hyperfine runs, criterion samples, `go test -count`), each sample is its
//! own measurement, in the order the harness wrote them. A parser whose harness starts several
//! processes (hyperfine runs, JMH forks, pyperf runs, BenchmarkDotNet launches) tags each sample
//! with its run ([`Measurement::run`]); untagged samples all come from one process, and
//! `crate::samples::run_values` turns each run into one value: iterations are never pairs.

mod benchstat;
mod bmf;
mod catch2;
mod catch2_xml;
pub mod command;
mod criterion;
mod criterion_dir;
mod detect;
mod divan;
mod dotnet;
mod error;
mod go;
mod google;
mod gungraun;
mod hyperfine;
mod jmh;
mod jmh_text;
mod json;
mod libtest;
mod pyperf;
mod pytest;
mod raw;
pub mod runs;
mod units;

pub use benchgate_api::Measurement;
pub use criterion_dir::{
    CRITERION_LATEST, criterion_estimates, criterion_samples, read_criterion_dir, read_results_path,
};
pub use detect::detect;
pub use error::{Location, ParseError};
pub use raw::RAW_BENCHMARK;

/// Metric names shared by every adapter, so that one benchmark's metrics line up across formats.
pub mod metric {
    /// Time per iteration (or per operation), in nanoseconds.
    pub const TIME: &str = "time";
    /// CPU time per iteration, in nanoseconds, where the harness reports it beside wall time.
    pub const CPU_TIME: &str = "cpu_time";
    /// Bytes allocated per operation.
    pub const BYTES_PER_OP: &str = "bytes_per_op";
    /// Allocations per operation.
    pub const ALLOCS_PER_OP: &str = "allocs_per_op";
    /// Work per second: bytes/s, ops/s or elements/s (the unit says which).
    pub const THROUGHPUT: &str = "throughput";
    /// The value of a `raw` line that carries no unit.
    pub const VALUE: &str = "value";
}

/// Unit names used in [`Measurement::unit`].
pub mod unit {
    /// Nanoseconds: every time is normalised to this.
    pub const NS: &str = "ns";
    /// Bytes: every size is normalised to this.
    pub const BYTES: &str = "bytes";
    /// A plain count (allocations, collections).
    pub const COUNT: &str = "count";
    /// Bytes per second.
    pub const BYTES_PER_S: &str = "bytes/s";
    /// Operations per second.
    pub const OPS_PER_S: &str = "ops/s";
    /// Elements per second (criterion's `Throughput::Elements`).
    pub const ELEMS_PER_S: &str = "elem/s";
    /// Items per second (Google Benchmark's `SetItemsProcessed`).
    pub const ITEMS_PER_S: &str = "items/s";
    /// A quantity whose unit the harness did not state.
    pub const NONE: &str = "";
}

pub use benchgate_api::format::{Format, UnknownFormat};

/// Whether `format` counts `metric` deterministically: the same code on the same input gives the
/// same count in every run (Go's `B/op` and `allocs/op`, BenchmarkDotNet's bytes allocated per
/// operation, every gungraun/callgrind count), so one run per side is compared exactly. Values
/// that disagree after all are analysed as timings, and the report says so.
pub fn counts_exactly(format: Format, metric_name: &str) -> bool {
    match format {
        Format::Go => matches!(metric_name, metric::BYTES_PER_OP | metric::ALLOCS_PER_OP),
        Format::Dotnet => metric_name == metric::BYTES_PER_OP,
        Format::Gungraun => true,
        _ => false,
    }
}

/// The confidence of the bounds `format` reports around a run's value, where they are a
/// confidence interval of known level: criterion's `time: [lower estimate upper]` is its 95%
/// bootstrap interval (its default `confidence_level`). Other formats' bounds are spreads
/// (libtest's `+/-` is max − min) or of a level the output does not say.
pub fn bounds_confidence(format: Format) -> Option<f64> {
    match format {
        Format::Criterion => Some(0.95),
        _ => None,
    }
}

/// What a parser found: the measurements, the format it read them as (the detected one for
/// `auto`), and warnings about what it skipped (a failed benchmark, an unreadable row), each
/// naming what it skipped.
#[derive(Debug, Clone, PartialEq)]
pub struct Parsed {
    pub format: Format,
    pub measurements: Vec<Measurement>,
    pub warnings: Vec<String>,
}

impl Parsed {
    /// Measurements read as `format` with nothing skipped.
    pub fn clean(format: Format, measurements: Vec<Measurement>) -> Self {
        Parsed {
            format,
            measurements,
            warnings: Vec::new(),
        }
    }
}

/// Parse `text` written by `format`, keeping the format read and the warnings about what was
/// skipped; callers that show output to people use this one.
pub fn parse_report(format: Format, text: &str) -> Result<Parsed, ParseError> {
    let format = match format {
        Format::Auto => detect(text)?,
        f => f,
    };
    // Parsers that can skip part of their input return `Parsed` themselves; the others are
    // wrapped here.
    let mut parsed = match format {
        Format::Divan => divan::parse(text),
        Format::Dotnet => dotnet::parse(text),
        Format::Gungraun => gungraun::parse(text),
        Format::Jmh if !is_json(text) => jmh_text::parse(text),
        f => return parse(f, text).map(|m| Parsed::clean(f, m)),
    }?;
    parsed.measurements = runs::by_repeats(format, parsed.measurements);
    Ok(parsed)
}

/// Whether `text` is JSON rather than a text report (formats that come in both).
fn is_json(text: &str) -> bool {
    let t = text.trim_start_matches('\u{feff}').trim_start();
    t.starts_with('[') || t.starts_with('{')
}

/// Parse `text` written by the harness `format` into measurements.
///
/// `Format::Auto` detects the format first; `Format::Command` is an error because the runner
/// measures the process itself (see [`command`]).
pub fn parse(format: Format, text: &str) -> Result<Vec<Measurement>, ParseError> {
    let format = match format {
        Format::Auto => detect(text)?,
        f => f,
    };
    parse_one_format(format, text).map(|ms| runs::by_repeats(format, ms))
}

/// [`parse`] for a named format; runs are tagged by the caller.
fn parse_one_format(format: Format, text: &str) -> Result<Vec<Measurement>, ParseError> {
    match format {
        Format::Auto => parse(detect(text)?, text),
        Format::Libtest => libtest::parse(text),
        Format::Criterion => criterion::parse(text),
        Format::Go => go::parse(text),
        Format::Hyperfine => hyperfine::parse(text),
        Format::Google => google::parse(text),
        Format::Pytest => pytest::parse(text),
        Format::Catch2 => {
            if text.trim_start().starts_with('<') {
                catch2_xml::parse(text)
            } else {
                catch2::parse(text)
            }
        }
        Format::Dotnet => dotnet::parse(text).map(|p| p.measurements),
        Format::Jmh if is_json(text) => jmh::parse(text),
        Format::Jmh => jmh_text::parse(text).map(|p| p.measurements),
        Format::Bmf => bmf::parse(text),
        Format::Divan => divan::parse(text).map(|p| p.measurements),
        Format::Pyperf => pyperf::parse(text),
        Format::Gungraun => gungraun::parse(text).map(|p| p.measurements),
        Format::Command => Err(ParseError::new(
            Format::Command,
            Location::Input,
            "the `command` format is measured by the runner (wall time, CPU time, peak RSS); \
             there is no output to parse",
        )),
        Format::Raw => raw::parse(text),
    }
}
