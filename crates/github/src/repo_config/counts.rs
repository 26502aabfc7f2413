//! `counts` and `count_run` checked against the suite's format and `[gate] gate_on`: a count
//! is exact only where each counted process runs a fixed amount of work.

use super::{BenchFormat, SuiteConfig};

/// Why a suite's counting cannot work as written: the key to point at and what to write.
pub(super) fn problem(
    suite: &SuiteConfig,
    gate_on: benchgate_api::GateOn,
) -> Option<(&'static str, String)> {
    let format = suite.format;
    match (&suite.counts, &suite.count_run) {
        (None, Some(_)) => Some((
            "count_run",
            "`count_run` has no effect without `counts = \"instructions\"`".to_owned(),
        )),
        (None, None) if gate_on.counts() && format != BenchFormat::Gungraun => Some((
            "counts",
            format!(
                "`[gate] gate_on = \"{gate_on}\"` needs counts: add `counts = \"instructions\"` \
                 to this suite"
            ),
        )),
        (None, None) => None,
        (Some(_), count_run) => {
            benchgate_api::counts::check(format, count_run.as_ref().map(|r| r.as_str())).err()
        }
    }
}
