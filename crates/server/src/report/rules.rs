//! What the comment says about the suite's rules: which rule applied to which rows, and which
//! benchmarks were ignored (listed once, never as rows).

use std::collections::BTreeMap;

use benchgate_api::{BenchmarkResult, BenchmarkRule};

use super::format;

/// Names listed per rule before "and N more".
const NAMES_SHOWN: usize = 5;

/// The rows the report shows: every row but those a rule ignores.
pub fn shown(results: &[BenchmarkResult]) -> Vec<BenchmarkResult> {
    results
        .iter()
        .filter(|r| !r.is_ignored())
        .cloned()
        .collect()
}

/// One line per rule that matched a benchmark, in rule order, e.g.
/// "rule 2 `parse_*` (not gated): `parse_json`, `parse_xml`". A rule that gates on a metric
/// some of its benchmarks do not report says so: those benchmarks gate on nothing.
pub fn rule_lines(results: &[BenchmarkResult], rules: &[BenchmarkRule]) -> Vec<String> {
    let mut names: BTreeMap<usize, Vec<&str>> = BTreeMap::new();
    for r in results {
        if let Some(applied) = &r.rule {
            let list = names.entry(applied.number).or_default();
            if !list.contains(&r.name.as_str()) {
                list.push(&r.name);
            }
        }
    }
    names
        .into_iter()
        .map(|(number, names)| {
            let rule = rules.get(number - 1);
            let effect = rule.map_or_else(String::new, |r| format!(" ({})", r.effect()));
            let pattern = rule.map_or("?", |r| r.pattern.as_str());
            let mut line = format!(
                "rule {number} {}{effect}: {}",
                format::code(pattern),
                listed(&names)
            );
            if let Some(metric) = rule.and_then(|r| r.metric.as_deref()) {
                let lacking: Vec<&str> = names
                    .iter()
                    .copied()
                    .filter(|n| !results.iter().any(|r| r.name == *n && r.metric == metric))
                    .collect();
                if !lacking.is_empty() {
                    line.push_str(&format!(
                        " — ⚠ {} not reported by {}, so {} nothing",
                        format::code(metric),
                        listed(&lacking),
                        if lacking.len() == 1 {
                            "it gates on"
                        } else {
                            "they gate on"
                        }
                    ));
                }
            }
            line
        })
        .collect()
}

/// Up to [`NAMES_SHOWN`] names as code, then "and N more".
fn listed(names: &[&str]) -> String {
    let mut shown: Vec<String> = names
        .iter()
        .take(NAMES_SHOWN)
        .map(|n| format::code(n))
        .collect();
    if names.len() > NAMES_SHOWN {
        shown.push(format!("and {} more", names.len() - NAMES_SHOWN));
    }
    shown.join(", ")
}
