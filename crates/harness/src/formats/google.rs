//! Google Benchmark `--benchmark_format=json` (or `--benchmark_out`).
//!
//! Each `benchmarks[]` entry of run type `iteration` is one repetition: `real_time` becomes
//! `time` and `cpu_time` becomes `cpu_time` (both per iteration, in ns), `bytes_per_second`
//! becomes `throughput` in bytes/s and `items_per_second` stays `items_per_second` in items/s
//! (both higher-is-better), and user counters keep their own names (the JSON does not say
//! whether a counter is a rate, so its name decides, by [`Direction::infer`]).
//!
//! Aggregates (`run_type: aggregate`: mean, median, stddev, cv) summarise the repetitions:
//! when a run has repetitions its aggregates are skipped, so the two never mix in one series.
//! A run reported only by its aggregates (`--benchmark_report_aggregates_only`) keeps its
//! `mean` and `median` as series of their own, named as Google names them (`BM_x_mean`);
//! stddev and cv are spreads, not performance, and BigO/RMS are fits: all skipped.

use std::collections::HashSet;

use benchgate_api::Direction;

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

/// Aggregates that estimate a run's typical time, kept when a run has no repetitions.
const LOCATION_AGGREGATES: &[&str] = &["mean", "median"];

/// Parse Google Benchmark JSON: one document per process, each with its `context` block;
/// several appended to one file are several runs.
pub(crate) fn parse(text: &str) -> Result<Vec<Measurement>, ParseError> {
    json::each_document(Format::Google, text, parse_document)
}

/// The measurements of one process's JSON document.
fn parse_document(value: &serde_json::Value) -> Result<Vec<Measurement>, ParseError> {
    let root = Node::root(Format::Google, value);
    let benchmarks = root.field("benchmarks")?;
    let entries = benchmarks.items()?;
    // Runs that have repetitions: their aggregates summarise samples already read.
    let mut repeated = HashSet::new();
    for entry in &entries {
        if !is_aggregate(entry) {
            repeated.insert(run_name(entry)?);
        }
    }
    let mut out = Vec::new();
    let mut aggregates = 0;
    for entry in &entries {
        if is_aggregate(entry) {
            aggregates += 1;
            let kind = entry
                .get("aggregate_name")
                .and_then(|n| n.value.as_str().map(str::to_string));
            let keep = !repeated.contains(&run_name(entry)?)
                && kind
                    .as_deref()
                    .is_some_and(|k| LOCATION_AGGREGATES.contains(&k));
            if keep {
                parse_run(entry, &mut out)?;
            }
            continue;
        }
        parse_run(entry, &mut out)?;
    }
    if out.is_empty() && aggregates > 0 {
        return Err(benchmarks.error(
            "expected individual runs or mean/median aggregates, found only other aggregates \
             (stddev, cv, BigO, RMS)",
        ));
    }
    Ok(out)
}

fn is_aggregate(entry: &Node<'_>) -> bool {
    entry.get("aggregate_name").is_some()
        || entry
            .get("run_type")
            .is_some_and(|t| t.value.as_str() == Some("aggregate"))
}

/// The run an entry belongs to: `run_name` (Google Benchmark ≥ 1.5), else the name without an
/// aggregate's `_mean`-style suffix.
fn run_name(entry: &Node<'_>) -> Result<String, ParseError> {
    if let Some(run) = entry.get("run_name") {
        return Ok(run.str()?.to_string());
    }
    let name = entry.field("name")?.str()?;
    let suffix = entry
        .get("aggregate_name")
        .and_then(|a| a.value.as_str().map(|a| format!("_{a}")));
    Ok(match suffix {
        Some(s) => name.strip_suffix(s.as_str()).unwrap_or(name).to_string(),
        None => name.to_string(),
    })
}

fn parse_run(entry: &Node<'_>, out: &mut Vec<Measurement>) -> Result<(), ParseError> {
    use Direction::*;
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
    let time = |node: Node<'_>| node.checked(node.quantity()? * factor);
    let real = entry.field("real_time")?;
    out.push(units::directed(
        name,
        metric::TIME,
        unit::NS,
        time(real)?,
        LowerIsBetter,
    ));
    if let Some(cpu) = entry.get("cpu_time") {
        out.push(units::directed(
            name,
            metric::CPU_TIME,
            unit::NS,
            time(cpu)?,
            LowerIsBetter,
        ));
    }
    if let Some(b) = entry.get("bytes_per_second") {
        out.push(units::directed(
            name,
            metric::THROUGHPUT,
            unit::BYTES_PER_S,
            b.quantity()?,
            HigherIsBetter,
        ));
    }
    if let Some(items) = entry.get("items_per_second") {
        out.push(units::directed(
            name,
            "items_per_second",
            unit::ITEMS_PER_S,
            items.quantity()?,
            HigherIsBetter,
        ));
    }
    for (key, node) in entry.members()? {
        if node.value.is_number() && !NOT_COUNTERS.contains(&key) {
            out.push(units::measurement(name, key, unit::NONE, node.quantity()?));
        }
    }
    Ok(())
}
