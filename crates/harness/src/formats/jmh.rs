//! JMH `-rf json`: an array of benchmark runs.
//!
//! `primaryMetric.rawData` holds the score of every measurement iteration, one array per fork;
//! each becomes one measurement tagged with its fork (a JVM of its own: the run), forks in
//! order. Throughput modes (`thrpt`, `ops/ms`, …) become
//! `throughput` in ops/s, higher is better; time modes (`avgt`, `sample`, `ss`: `ns/op`, …)
//! `time` in ns, lower is better. Without `rawData` (sample mode writes a histogram instead)
//! the score is the one value, with JMH's confidence interval. Secondary metrics (from
//! profilers such as `-prof gc`) follow the same rules under their own names;
//! `·gc.alloc.rate.norm` becomes `bytes_per_op`, and the `·gc.*` metrics are lower-is-better
//! even when their unit is a rate (`MB/sec`).
//!
//! One method is often run in several modes and with several `@Param` values; each run is its
//! own series, named `Benchmark.method [mode] (param=value, …)` with the params sorted by name
//! (and the parentheses left out when there are none).

use benchgate_api::Direction;

use super::json::{self, Node};
use super::units;
use super::{Format, Measurement, ParseError, metric, unit};

/// Parse JMH JSON.
pub(crate) fn parse(text: &str) -> Result<Vec<Measurement>, ParseError> {
    let value = json::parse(Format::Jmh, text)?;
    let root = Node::root(Format::Jmh, &value);
    let mut out = Vec::new();
    for run in root.items()? {
        let name = name(&run)?;
        let primary = run.field("primaryMetric")?;
        scores(&name, None, &primary, &mut out)?;
        if let Some(secondary) = run.get("secondaryMetrics") {
            for (key, m) in secondary.members()? {
                // A profiler that saw nothing reports the score as the string "NaN".
                if m.get("score").is_some_and(|s| s.value.is_number()) {
                    scores(&name, Some(key), &m, &mut out)?;
                }
            }
        }
    }
    Ok(out)
}

/// `Benchmark.method [mode] (a=1, b=x)`: mode always, params sorted by name when there are any.
fn name(run: &Node<'_>) -> Result<String, ParseError> {
    let benchmark = run.field("benchmark")?.str()?;
    let mode = match run.get("mode") {
        Some(m) => m.str()?,
        None => "unknown",
    };
    let mut name = format!("{benchmark} [{mode}]");
    if let Some(params) = run.get("params") {
        let mut pairs: Vec<(&str, String)> = params
            .members()?
            .into_iter()
            .map(|(k, v)| match v.value.as_str() {
                Some(s) => (k, s.to_string()),
                None => (k, v.value.to_string()),
            })
            .collect();
        pairs.sort();
        if !pairs.is_empty() {
            let joined: Vec<String> = pairs.iter().map(|(k, v)| format!("{k}={v}")).collect();
            name = format!("{name} ({})", joined.join(", "));
        }
    }
    Ok(name)
}

/// The metric name, normalised unit, factor into it and direction, from JMH's `scoreUnit`.
fn normalise(key: Option<&str>, score_unit: &str) -> (String, String, f64, Direction) {
    use Direction::*;
    let label = key.map(|k| k.trim_start_matches('\u{b7}').to_string());
    // GC profiler metrics cost resources whatever their unit: less is better.
    let gc = label.as_deref().is_some_and(|l| l.starts_with("gc."));
    if score_unit == "B/op" {
        return (
            metric::BYTES_PER_OP.into(),
            unit::BYTES.into(),
            1.0,
            LowerIsBetter,
        );
    }
    if let Some(per_op) = score_unit.strip_suffix("/op").and_then(units::ns_per) {
        let name = label.unwrap_or_else(|| metric::TIME.into());
        return (name, unit::NS.into(), per_op, LowerIsBetter);
    }
    if let Some((rate_unit, factor)) = units::throughput(score_unit) {
        let name = label.unwrap_or_else(|| metric::THROUGHPUT.into());
        let direction = if gc { LowerIsBetter } else { HigherIsBetter };
        return (name, rate_unit.into(), factor, direction);
    }
    let name = label.unwrap_or_else(|| "score".into());
    let direction = if gc {
        LowerIsBetter
    } else {
        Direction::infer(&name, score_unit)
    };
    (name, score_unit.into(), 1.0, direction)
}

fn scores(
    name: &str,
    key: Option<&str>,
    m: &Node<'_>,
    out: &mut Vec<Measurement>,
) -> Result<(), ParseError> {
    let score_unit = m.field("scoreUnit")?.str()?;
    let (metric_name, unit_name, factor, direction) = normalise(key, score_unit);
    let sample = |value: f64| units::directed(name, &metric_name, &unit_name, value, direction);
    if let Some(raw) = m.get("rawData") {
        let forks = raw.items()?;
        if !forks.is_empty() {
            for (index, fork) in (0u32..).zip(forks) {
                for v in fork.items()? {
                    out.push(sample(v.checked(v.quantity()? * factor)?).in_run(index));
                }
            }
            return Ok(());
        }
    }
    let score_node = m.field("score")?;
    let score = score_node.checked(score_node.quantity()? * factor)?;
    // JMH's interval can reach below zero with few iterations; it is kept as reported.
    let bounds = m
        .get("scoreConfidence")
        .and_then(|c| c.value.as_array().cloned())
        .and_then(|c| Some((c.first()?.as_f64()?, c.get(1)?.as_f64()?)))
        .map(|(lo, hi)| (lo * factor, hi * factor))
        .filter(|(lo, hi)| lo.is_finite() && hi.is_finite());
    let mut m = sample(score);
    if let Some((lo, hi)) = bounds {
        m.lower = Some(lo);
        m.upper = Some(hi);
    }
    out.push(m);
    Ok(())
}
