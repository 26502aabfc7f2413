//! pyperf JSON (`python -m pyperf … -o out.json`, pyperformance's result files).
//!
//! `benchmarks[].runs[].values` are pyperf's samples, already divided by the loop count; each
//! becomes one measurement tagged with its run (pyperf starts a worker process per run), runs in
//! order. Warmups and calibration
//! runs (which have `warmups` but no `values`) are not samples and are left out. The unit comes
//! from the benchmark's metadata, else the suite's (`second` when neither says): seconds become
//! `time` in ns, `byte` (`--track-memory`) `peak_memory` in bytes, `integer` `value` as a count.

use super::json::{self, Node};
use super::units;
use super::{Format, Measurement, ParseError, metric, unit};

/// Parse a pyperf benchmark-suite JSON file.
pub(crate) fn parse(text: &str) -> Result<Vec<Measurement>, ParseError> {
    let value = json::parse(Format::Pyperf, text)?;
    let root = Node::root(Format::Pyperf, &value);
    let suite_meta = root.get("metadata");
    let mut out = Vec::new();
    for bench in root.field("benchmarks")?.items()? {
        let meta = bench.get("metadata");
        let lookup = |key: &str| -> Result<Option<&str>, ParseError> {
            for m in [&meta, &suite_meta].into_iter().flatten() {
                if let Some(v) = m.get(key) {
                    return v.str().map(Some);
                }
            }
            Ok(None)
        };
        let name = lookup("name")?.ok_or_else(|| {
            bench.error("expected a benchmark name in `metadata.name` (of the benchmark or suite)")
        })?;
        let (metric_name, unit_name, factor) = match lookup("unit")?.unwrap_or("second") {
            "second" => (metric::TIME, unit::NS, 1e9),
            "byte" => ("peak_memory", unit::BYTES, 1.0),
            "integer" => (metric::VALUE, unit::COUNT, 1.0),
            other => {
                return Err(bench.error(format!(
                    "expected the unit `second`, `byte` or `integer`, found {other:?}"
                )));
            }
        };
        let mut index = 0;
        for run in bench.field("runs")?.items()? {
            let Some(values) = run.get("values") else {
                continue;
            };
            for v in values.items()? {
                out.push(
                    units::measurement(name, metric_name, unit_name, v.number()? * factor)
                        .in_run(index),
                );
            }
            index += 1;
        }
    }
    Ok(out)
}
