//! pytest-benchmark `--benchmark-json`.
//!
//! `stats.data`, when present, holds the time of every round divided by its iterations, in
//! seconds: each becomes one `time` measurement in ns. Saved runs keep it only with
//! `--benchmark-save-data`; without it, the mean is the one value.

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
        match stats.get("data") {
            Some(data) => {
                for round in data.items()? {
                    out.push(units::measurement(
                        name,
                        metric::TIME,
                        unit::NS,
                        round.number()? * 1e9,
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
