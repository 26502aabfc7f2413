//! Bencher Metric Format: `{ "benchmark": { "measure": { "value", "lower_value", "upper_value" } } }`.
//!
//! Bencher's built-in measures get benchgate's names and units: `latency` (ns) is `time`,
//! `throughput` is ops/s, `file-size` is bytes, `build-time` (seconds) is `build_time` in ns.
//! Any other measure keeps its name, with no unit stated. `throughput` and any measure whose name
//! says per second (`requests-per-second`, `ops/s`) are higher-is-better; the rest lower.

use benchgate_api::Direction;

use super::json::{self, Node};
use super::units;
use super::{Format, Measurement, ParseError, metric, unit};

/// Parse BMF JSON. Benchmarks and measures come in key order.
pub(crate) fn parse(text: &str) -> Result<Vec<Measurement>, ParseError> {
    let value = json::parse(Format::Bmf, text)?;
    let root = Node::root(Format::Bmf, &value);
    let mut out = Vec::new();
    for (benchmark, measures) in root.members()? {
        for (measure, m) in measures.members()? {
            let (metric_name, unit_name, factor) = match measure {
                "latency" => (metric::TIME, unit::NS, 1.0),
                "throughput" => (metric::THROUGHPUT, unit::OPS_PER_S, 1.0),
                "file-size" => ("file_size", unit::BYTES, 1.0),
                "build-time" => ("build_time", unit::NS, 1e9),
                other => (other, unit::NONE, 1.0),
            };
            let scaled = |node: Node<'_>| -> Result<f64, ParseError> {
                node.checked(node.quantity()? * factor)
            };
            let value = scaled(m.field("value")?)?;
            let mut sample =
                units::directed(benchmark, metric_name, unit_name, value, direction(measure));
            if let Some(lower) = m.get("lower_value") {
                sample.lower = Some(scaled(lower)?);
            }
            if let Some(upper) = m.get("upper_value") {
                sample.upper = Some(scaled(upper)?);
            }
            out.push(sample);
        }
    }
    Ok(out)
}

/// Higher is better for `throughput` and for measures named as a rate per second.
fn direction(measure: &str) -> Direction {
    let name = measure.to_ascii_lowercase().replace(['-', ' '], "_");
    let per_second = [
        "throughput",
        "per_second",
        "per_sec",
        "persecond",
        "/s",
        "_ps",
    ];
    if per_second.iter().any(|p| name.contains(p)) {
        Direction::HigherIsBetter
    } else {
        Direction::infer(&name, "")
    }
}
