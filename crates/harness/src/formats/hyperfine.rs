//! hyperfine `--export-json`: every entry of `results[].times` is one run of the whole command,
//! in seconds, so each becomes one `wall_time` measurement in nanoseconds tagged with its run,
//! in run order.
//! Peak memory per run (`memory_usage_byte`, hyperfine ≥ 1.19) becomes `peak_rss` in bytes.

use benchgate_api::Direction;

use super::command;
use super::json::{self, Node};
use super::units;
use super::{Format, Measurement, ParseError};

/// Parse hyperfine's JSON export. A run with a non-zero exit code (kept by `--ignore-failure`)
/// is an error: a failed run is not a sample.
pub(crate) fn parse(text: &str) -> Result<Vec<Measurement>, ParseError> {
    let value = json::parse(Format::Hyperfine, text)?;
    let root = Node::root(Format::Hyperfine, &value);
    let mut out = Vec::new();
    for result in root.field("results")?.items()? {
        let name = result.field("command")?.str()?;
        let times = result.field("times")?.items()?;
        if let Some(codes) = result.get("exit_codes") {
            for code in codes.items()? {
                if code.value.as_i64().is_some_and(|c| c != 0) {
                    return Err(code.error(format!(
                        "expected exit code 0, found {}: a failed run of `{name}` is not a sample",
                        code.value
                    )));
                }
            }
        }
        for (run, t) in (0u32..).zip(&times) {
            let ns = t.checked(t.quantity()? * 1e9)?;
            out.push(
                units::directed(
                    name,
                    command::WALL_TIME,
                    command::WALL_TIME_UNIT,
                    ns,
                    Direction::LowerIsBetter,
                )
                .in_run(run),
            );
        }
        if let Some(memory) = result.get("memory_usage_byte") {
            for (run, m) in (0u32..).zip(memory.items()?) {
                out.push(
                    units::directed(
                        name,
                        command::PEAK_RSS,
                        command::PEAK_RSS_UNIT,
                        m.quantity()?,
                        Direction::LowerIsBetter,
                    )
                    .in_run(run),
                );
            }
        }
    }
    Ok(out)
}
