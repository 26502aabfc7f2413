//! Google Benchmark `--benchmark_format=json` (or `--benchmark_out`).
//!
//! Each `benchmarks[]` entry of run type `iteration` is one repetition: `real_time` becomes
//! `time` and `cpu_time` becomes `cpu_time` (both per iteration, in ns), `bytes_per_second`
//! and `items_per_second` become throughput, and user counters keep their own names.
//! Aggregates (mean, median, stddev, BigO, RMS) are summaries, not samples, and are skipped.

use super::json::{self, Node};
use super::units;
use super::{Format, Measurement, ParseError, metric, unit};

/// Members that describe a run rather than measure it; every other number is a user counter.
const NOT_COUNTERS: &[&str] = &[
    "family_index",
    "per_family_instance_index",
    "repetitions",
    "repetition_index",
    "threads",
    "iterations",
    "real_time",
    "cpu_time",
    "bytes_per_second",
    "items_per_second",
    "cpu_coefficient",
    "real_coefficient",
    "rms",
];

/// Parse Google Benchmark JSON.
pub(crate) fn parse(text: &str) -> Result<Vec<Measurement>, ParseError> {
    let value = json::parse(Format::Google, text)?;
    let root = Node::root(Format::Google, &value);
    let benchmarks = root.field("benchmarks")?;
    let entries = benchmarks.items()?;
    let mut out = Vec::new();
    let mut aggregates = 0;
    for entry in &entries {
        let is_aggregate = entry.get("aggregate_name").is_some()
            || entry
                .get("run_type")
                .is_some_and(|t| t.value.as_str() == Some("aggregate"));
        if is_aggregate {
            aggregates += 1;
            continue;
        }
        parse_run(entry, &mut out)?;
    }
    if out.is_empty() && aggregates > 0 {
        return Err(benchmarks.error(
            "expected individual runs, found only aggregates (mean/median/stddev): \
             run without --benchmark_report_aggregates_only",
        ));
    }
    Ok(out)
}

fn parse_run(entry: &Node<'_>, out: &mut Vec<Measurement>) -> Result<(), ParseError> {
    let name = entry.field("name")?.str()?;
    if entry
        .get("error_occurred")
        .is_some_and(|e| e.value.as_bool() == Some(true))
    {
        let why = entry
            .get("error_message")
            .and_then(|m| m.value.as_str().map(str::to_string))
            .unwrap_or_default();
        return Err(entry.error(format!("benchmark `{name}` reported an error: {why}")));
    }
    let unit_node = entry.get("time_unit");
    let time_unit = match &unit_node {
        Some(u) => u.str()?,
        // Google Benchmark's default unit when the member is absent.
        None => "ns",
    };
    let factor = units::ns_per(time_unit).ok_or_else(|| {
        entry.error(format!(
            "expected `time_unit` to be ns, us, ms or s, found {time_unit:?}"
        ))
    })?;
    let real = entry.field("real_time")?.number()?;
    out.push(units::measurement(
        name,
        metric::TIME,
        unit::NS,
        real * factor,
    ));
    if let Some(cpu) = entry.get("cpu_time") {
        out.push(units::measurement(
            name,
            metric::CPU_TIME,
            unit::NS,
            cpu.number()? * factor,
        ));
    }
    if let Some(b) = entry.get("bytes_per_second") {
        out.push(units::measurement(
            name,
            metric::THROUGHPUT,
            unit::BYTES_PER_S,
            b.number()?,
        ));
    }
    if let Some(items) = entry.get("items_per_second") {
        out.push(units::measurement(
            name,
            "items_per_second",
            "items/s",
            items.number()?,
        ));
    }
    for (key, node) in entry.members()? {
        if node.value.is_number() && !NOT_COUNTERS.contains(&key) {
            out.push(units::measurement(name, key, unit::NONE, node.number()?));
        }
    }
    Ok(())
}
