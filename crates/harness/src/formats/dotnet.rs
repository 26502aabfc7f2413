//! BenchmarkDotNet's JSON exporter (`*-report-full.json` or `*-report-brief.json`).
//!
//! `Statistics.OriginalValues` (full export) are the per-operation times of every measured
//! iteration, in ns: each becomes one `time` measurement. Without them, the `Workload`/`Result`
//! entries of `Measurements` are used, and failing both, the mean with its confidence interval.
//! `Memory.BytesAllocatedPerOperation` becomes `bytes_per_op`.

use super::json::{self, Node};
use super::units;
use super::{Format, Measurement, ParseError, metric, unit};

/// Parse BenchmarkDotNet JSON.
pub(crate) fn parse(text: &str) -> Result<Vec<Measurement>, ParseError> {
    let value = json::parse(Format::Dotnet, text)?;
    let root = Node::root(Format::Dotnet, &value);
    let mut out = Vec::new();
    for bench in root.field("Benchmarks")?.items()? {
        let name = name(&bench)?;
        let stats = bench.field("Statistics").map_err(|_| {
            bench.error(format!(
                "expected `Statistics` for `{name}` (BenchmarkDotNet leaves it null when the \
                 benchmark failed)"
            ))
        })?;
        times(&name, &bench, &stats, &mut out)?;
        if let Some(bytes) = bench
            .get("Memory")
            .and_then(|m| m.get("BytesAllocatedPerOperation"))
        {
            out.push(units::measurement(
                &name,
                metric::BYTES_PER_OP,
                unit::BYTES,
                bytes.number()?,
            ));
        }
    }
    Ok(out)
}

/// `FullName` when exported, else `Namespace.Type.Method`, with `(Parameters)` when there are any.
fn name(bench: &Node<'_>) -> Result<String, ParseError> {
    let mut name = match bench.get("FullName") {
        Some(full) => full.str()?.to_string(),
        None => {
            let mut parts = Vec::new();
            for key in ["Namespace", "Type", "Method"] {
                if let Some(part) = bench.get(key) {
                    parts.push(part.str()?);
                }
            }
            if parts.is_empty() {
                return Err(bench.error("expected `FullName` or `Method`"));
            }
            parts.join(".")
        }
    };
    if let Some(params) = bench.get("Parameters") {
        let params = params.str()?;
        if !params.is_empty() && !name.contains(params) {
            name = format!("{name}({params})");
        }
    }
    Ok(name)
}

fn times(
    name: &str,
    bench: &Node<'_>,
    stats: &Node<'_>,
    out: &mut Vec<Measurement>,
) -> Result<(), ParseError> {
    if let Some(values) = stats.get("OriginalValues") {
        for v in values.items()? {
            out.push(units::measurement(
                name,
                metric::TIME,
                unit::NS,
                v.number()?,
            ));
        }
        return Ok(());
    }
    let mut found = false;
    if let Some(measurements) = bench.get("Measurements") {
        for m in measurements.items()? {
            let mode = m.get("IterationMode").and_then(|n| n.value.as_str());
            let stage = m.get("IterationStage").and_then(|n| n.value.as_str());
            if mode == Some("Workload") && stage == Some("Result") {
                let ns = m.field("Nanoseconds")?.number()?;
                let ops = m.field("Operations")?.number()?;
                if ops <= 0.0 {
                    return Err(m.error(format!("expected a positive `Operations`, found {ops}")));
                }
                out.push(units::measurement(name, metric::TIME, unit::NS, ns / ops));
                found = true;
            }
        }
    }
    if !found {
        let mean = stats.field("Mean")?.number()?;
        let ci = stats.get("ConfidenceInterval");
        match ci
            .as_ref()
            .and_then(|c| Some((c.get("Lower")?, c.get("Upper")?)))
        {
            Some((lo, hi)) => out.push(units::bounded(
                name,
                metric::TIME,
                unit::NS,
                (lo.number()?, mean, hi.number()?),
            )),
            None => out.push(units::measurement(name, metric::TIME, unit::NS, mean)),
        }
    }
    Ok(())
}
