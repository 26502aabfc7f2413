//! JMH `-rf json`: an array of benchmark runs.
//!
//! `primaryMetric.rawData` holds the score of every measurement iteration, one array per fork;
//! each becomes one measurement, forks in order. Throughput modes (`ops/ms`, …) become
//! `throughput` in ops/s and time modes (`ns/op`, …) `time` in ns. Without `rawData` (sample
//! mode writes a histogram instead) the score is the one value, with JMH's confidence interval.
//! Secondary metrics (from profilers such as `-prof gc`) follow the same rules under their own
//! names; `·gc.alloc.rate.norm` becomes `bytes_per_op`.

use super::json::{self, Node};
use super::units;
use super::{Format, Measurement, ParseError, metric, unit};

/// Parse JMH JSON. Benchmarks with `@Param`s are named `benchmark:key=value,key=value`.
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

fn name(run: &Node<'_>) -> Result<String, ParseError> {
    let mut name = run.field("benchmark")?.str()?.to_string();
    if let Some(params) = run.get("params") {
        let pairs: Vec<String> = params
            .members()?
            .into_iter()
            .map(|(k, v)| match v.value.as_str() {
                Some(s) => format!("{k}={s}"),
                None => format!("{k}={}", v.value),
            })
            .collect();
        if !pairs.is_empty() {
            name = format!("{name}:{}", pairs.join(","));
        }
    }
    Ok(name)
}

/// The metric name and the factor into its normalised unit, from JMH's `scoreUnit`.
fn normalise(key: Option<&str>, score_unit: &str) -> (String, String, f64) {
    let label = key.map(|k| k.trim_start_matches('\u{b7}').to_string());
    if score_unit == "B/op" {
        return (metric::BYTES_PER_OP.into(), unit::BYTES.into(), 1.0);
    }
    if let Some(per_op) = score_unit.strip_suffix("/op").and_then(units::ns_per) {
        let name = label.unwrap_or_else(|| metric::TIME.into());
        return (name, unit::NS.into(), per_op);
    }
    if let Some((rate_unit, factor)) = units::throughput(score_unit) {
        let name = label.unwrap_or_else(|| metric::THROUGHPUT.into());
        return (name, rate_unit.into(), factor);
    }
    (
        label.unwrap_or_else(|| "score".into()),
        score_unit.into(),
        1.0,
    )
}

fn scores(
    name: &str,
    key: Option<&str>,
    m: &Node<'_>,
    out: &mut Vec<Measurement>,
) -> Result<(), ParseError> {
    let score_unit = m.field("scoreUnit")?.str()?;
    let (metric_name, unit_name, factor) = normalise(key, score_unit);
    if let Some(raw) = m.get("rawData") {
        let forks = raw.items()?;
        if !forks.is_empty() {
            for fork in forks {
                for v in fork.items()? {
                    out.push(units::measurement(
                        name,
                        &metric_name,
                        &unit_name,
                        v.number()? * factor,
                    ));
                }
            }
            return Ok(());
        }
    }
    let score = m.field("score")?.number()? * factor;
    let bounds = m
        .get("scoreConfidence")
        .and_then(|c| c.value.as_array().cloned())
        .and_then(|c| Some((c.first()?.as_f64()?, c.get(1)?.as_f64()?)))
        .filter(|(lo, hi)| lo.is_finite() && hi.is_finite());
    match bounds {
        Some((lo, hi)) => out.push(units::bounded(
            name,
            &metric_name,
            &unit_name,
            (lo * factor, score, hi * factor),
        )),
        None => out.push(units::measurement(name, &metric_name, &unit_name, score)),
    }
    Ok(())
}
