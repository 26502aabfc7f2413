//! BenchmarkDotNet's JSON exporter (`*-report-full.json`, `*-report-full-compressed.json` or
//! `*-report-brief.json`).
//!
//! `Statistics.OriginalValues` (full export) are the per-operation times of every measured
//! iteration, in ns: each becomes one `time` measurement, tagged with the launch (a process of
//! its own: the run) that `Measurements` names for it. Without them, the `Workload`/`Result`
//! entries of `Measurements` are used, and failing both, the mean with its confidence interval.
//! `Memory.BytesAllocatedPerOperation` becomes `bytes_per_op`. Both are lower-is-better.
//!
//! A benchmark is named `Namespace.Type.Method(Param=value, …)`, built from those fields (not
//! `FullName`, which already holds the parameters in another spelling). When a report ran the
//! benchmarks under several jobs (`.NET 8.0` and `.NET 9.0`, say), each job is its own series,
//! named `… [job]` after the job in `DisplayInfo`. A benchmark that failed has no `Statistics`:
//! it is skipped with a warning naming it, and the rest of the report is kept.

use std::collections::BTreeSet;

use benchgate_api::Direction;

use super::json::{self, Node};
use super::units;
use super::{Format, Measurement, ParseError, Parsed, metric, unit};

/// Parse BenchmarkDotNet JSON.
pub(crate) fn parse(text: &str) -> Result<Parsed, ParseError> {
    // BenchmarkDotNet writes a UTF-8 byte-order mark on Windows.
    let value = json::parse(Format::Dotnet, text.trim_start_matches('\u{feff}'))?;
    let root = Node::root(Format::Dotnet, &value);
    let benchmarks = root.field("Benchmarks")?.items()?;
    let jobs: Vec<Option<String>> = benchmarks.iter().map(job).collect();
    let several_jobs = jobs.iter().collect::<BTreeSet<_>>().len() > 1;
    let mut parsed = Parsed::clean(Format::Dotnet, Vec::new());
    for (bench, job) in benchmarks.iter().zip(jobs) {
        let mut name = name(bench)?;
        if several_jobs {
            name = format!("{name} [{}]", job.as_deref().unwrap_or("default job"));
        }
        let Some(stats) = bench.get("Statistics") else {
            parsed.warnings.push(format!(
                "skipped `{name}`: BenchmarkDotNet reported no statistics for it (the \
                 benchmark failed; its log says why)"
            ));
            continue;
        };
        times(&name, bench, &stats, &mut parsed.measurements)?;
        if let Some(bytes) = bench
            .get("Memory")
            .and_then(|m| m.get("BytesAllocatedPerOperation"))
        {
            parsed.measurements.push(units::directed(
                &name,
                metric::BYTES_PER_OP,
                unit::BYTES,
                bytes.quantity()?,
                Direction::LowerIsBetter,
            ));
        }
    }
    Ok(parsed)
}

/// `Namespace.Type.Method(Param=value, …)`, or `FullName` when the parts are missing.
fn name(bench: &Node<'_>) -> Result<String, ParseError> {
    let mut parts = Vec::new();
    for key in ["Namespace", "Type", "Method"] {
        if let Some(part) = bench.get(key) {
            parts.push(part.str()?);
        }
    }
    if bench.get("Method").is_none() {
        return match bench.get("FullName") {
            Some(full) => Ok(full.str()?.to_string()),
            None => Err(bench.error("expected `FullName` or `Method`")),
        };
    }
    let mut name = parts.join(".");
    if let Some(params) = bench.get("Parameters") {
        let params = params.str()?;
        if !params.is_empty() {
            // BenchmarkDotNet joins parameters with `&` (`N=10&Size=100`).
            name = format!("{name}({})", params.replace('&', ", "));
        }
    }
    Ok(name)
}

/// The job a benchmark ran under, from `DisplayInfo` (`Type.Method: .NET 8.0(Runtime=.NET 8.0)
/// [N=10]`). A generated id (`Job-ABCDEF`) changes on every run, so the job's settings in
/// parentheses name it instead.
fn job(bench: &Node<'_>) -> Option<String> {
    let info = bench.get("DisplayInfo")?.value.as_str()?;
    let (_, job) = info.split_once(": ")?;
    let job = match job.rfind(" [") {
        Some(at) if job.ends_with(']') => &job[..at],
        _ => job,
    };
    let generated = job.strip_prefix("Job-").is_some_and(|rest| {
        rest.split('(')
            .next()
            .is_some_and(|id| !id.is_empty() && id.chars().all(|c| c.is_ascii_alphanumeric()))
    });
    let job = match (generated, job.find('(')) {
        (true, Some(open)) => job[open + 1..].trim_end_matches(')'),
        _ => job,
    };
    Some(job.trim().to_string())
}

fn times(
    name: &str,
    bench: &Node<'_>,
    stats: &Node<'_>,
    out: &mut Vec<Measurement>,
) -> Result<(), ParseError> {
    let time =
        |ns: f64| units::directed(name, metric::TIME, unit::NS, ns, Direction::LowerIsBetter);
    // The workload results in launch order: each launch is a process of its own.
    let mut results = Vec::new();
    if let Some(measurements) = bench.get("Measurements") {
        for m in measurements.items()? {
            let mode = m.get("IterationMode").and_then(|n| n.value.as_str());
            let stage = m.get("IterationStage").and_then(|n| n.value.as_str());
            if mode == Some("Workload") && stage == Some("Result") {
                let launch = m
                    .get("LaunchIndex")
                    .and_then(|n| n.value.as_u64())
                    .and_then(|l| u32::try_from(l).ok());
                results.push((m, launch));
            }
        }
    }
    let launches: Vec<Option<u32>> = results.iter().map(|(_, l)| *l).collect();
    if let Some(values) = stats.get("OriginalValues") {
        let values = values.items()?;
        // OriginalValues list the same iterations; their launches are known when the counts agree.
        let tags = (launches.len() == values.len()).then_some(&launches);
        for (i, v) in values.iter().enumerate() {
            let mut m = time(v.quantity()?);
            m.run = tags.and_then(|t| t[i]);
            out.push(m);
        }
        return Ok(());
    }
    let found = !results.is_empty();
    for (m, launch) in results {
        let ns = m.field("Nanoseconds")?.quantity()?;
        let ops = m.field("Operations")?.number()?;
        if ops <= 0.0 {
            return Err(m.error(format!("expected a positive `Operations`, found {ops}")));
        }
        let mut sample = time(m.checked(ns / ops)?);
        sample.run = launch;
        out.push(sample);
    }
    if !found {
        let mean = stats.field("Mean")?.quantity()?;
        let ci = stats.get("ConfidenceInterval");
        let mut m = time(mean);
        if let Some((lo, hi)) = ci
            .as_ref()
            .and_then(|c| Some((c.get("Lower")?, c.get("Upper")?)))
        {
            m.lower = Some(lo.number()?);
            m.upper = Some(hi.number()?);
        }
        out.push(m);
    }
    Ok(())
}
