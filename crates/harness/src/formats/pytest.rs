//! pytest-benchmark `--benchmark-json`.
//!
//! `stats.data`, when present, holds the time of every round divided by its iterations, in
//! seconds: each becomes one `time` measurement in ns. Saved runs keep it only with
//! `--benchmark-save-data`; without them all, the mean is the one value.

use super::json::{self, Node};
use super::units;
use super::{Format, Measurement, ParseError, metric, unit};

/// Parse pytest-benchmark JSON; benchmarks are named by `fullname` (`file.py::test_x[param]`).
pub(crate) fn parse(text: &str) -> Result<Vec<Measurement>, ParseError> {
    let value = json::parse(Format::Pytest, text)?;
    let root = Node::root(Format::Pytest, &value);
    let mut out = Vec::new();
    for bench in root.field("benchmarks")?.items()? {
        let name = match bench.get("fullname") {
            Some(full) => full.str()?,
            None => bench.field("name")?.str()?,
        };
        let stats = bench.field("stats")?;
        match complete_data(&stats)? {
            Some(rounds) => {
                for seconds in rounds {
                    out.push(units::measurement(
                        name,
                        metric::TIME,
                        unit::NS,
                        seconds * 1e9,
                    ));
                }
            }
            None => {
                let mean = stats.field("mean")?.number()?;
                out.push(units::measurement(name, metric::TIME, unit::NS, mean * 1e9));
            }
        }
    }
    Ok(out)
}

/// The per-round times, when `stats.data` holds all of them. Tools that shrink these files
/// replace the tail with a note (`"... omitted"`); the first rounds alone would be a biased
/// sample, so a list shorter than `stats.rounds` or with non-numbers is not used.
fn complete_data(stats: &Node<'_>) -> Result<Option<Vec<f64>>, ParseError> {
    let Some(data) = stats.get("data") else {
        return Ok(None);
    };
    let items = data.items()?;
    let values: Vec<f64> = items.iter().filter_map(|v| v.value.as_f64()).collect();
    let rounds = stats.get("rounds").and_then(|r| r.value.as_u64());
    let complete = values.len() == items.len()
        && values.iter().all(|v| v.is_finite())
        && rounds.is_none_or(|r| r as usize == values.len());
    Ok(complete.then_some(values))
}
