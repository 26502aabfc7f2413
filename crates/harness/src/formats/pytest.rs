//! pytest-benchmark `--benchmark-json`.
//!
//! `stats.data`, when present, holds the time of every round divided by its iterations, in
//! seconds: each becomes one `time` measurement in ns. Saved runs keep it only with
//! `--benchmark-save-data`; without them all, the mean is the one value. `stats.ops` (rounds per
//! second, the inverse of the mean) becomes `throughput` in ops/s, where higher is better.

use benchgate_api::Direction;

use super::json::{self, Node};
use super::units;
use super::{Format, Measurement, ParseError, metric, unit};

/// Parse pytest-benchmark JSON; benchmarks are named by `fullname` (`file.py::test_x[param]`).
/// Several documents appended to one file are several processes, so several runs.
pub(crate) fn parse(text: &str) -> Result<Vec<Measurement>, ParseError> {
    json::each_document(Format::Pytest, text, parse_document)
}

/// The measurements of one process's JSON document.
fn parse_document(value: &serde_json::Value) -> Result<Vec<Measurement>, ParseError> {
    let root = Node::root(Format::Pytest, value);
    let mut out = Vec::new();
    for bench in root.field("benchmarks")?.items()? {
        let name = match bench.get("fullname") {
            Some(full) => full.str()?,
            None => bench.field("name")?.str()?,
        };
        let stats = bench.field("stats")?;
        let time =
            |ns: f64| units::directed(name, metric::TIME, unit::NS, ns, Direction::LowerIsBetter);
        match complete_data(&stats)? {
            Some(rounds) => {
                for (seconds, node) in rounds {
                    out.push(time(node.checked(seconds * 1e9)?));
                }
            }
            None => {
                let mean = stats.field("mean")?;
                out.push(time(mean.checked(mean.quantity()? * 1e9)?));
            }
        }
        if let Some(ops) = stats.get("ops") {
            out.push(units::directed(
                name,
                metric::THROUGHPUT,
                unit::OPS_PER_S,
                ops.quantity()?,
                Direction::HigherIsBetter,
            ));
        }
    }
    Ok(out)
}

/// The per-round times, when `stats.data` holds all of them. Tools that shrink these files
/// replace the tail with a note (`"... omitted"`); the first rounds alone would be a biased
/// sample, so a list shorter than `stats.rounds` or with non-numbers is not used.
fn complete_data<'a>(stats: &Node<'a>) -> Result<Option<Vec<(f64, Node<'a>)>>, ParseError> {
    let Some(data) = stats.get("data") else {
        return Ok(None);
    };
    let items = data.items()?;
    let rounds = stats.get("rounds").and_then(|r| r.value.as_u64());
    let all_numbers = items.iter().all(|v| v.value.is_number());
    if !all_numbers || rounds.is_some_and(|r| r as usize != items.len()) {
        return Ok(None);
    }
    let mut values = Vec::with_capacity(items.len());
    for item in items {
        values.push((item.quantity()?, item));
    }
    Ok(Some(values))
}
