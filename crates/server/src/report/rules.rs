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
/// "rule 2 `parse_*` (not gated): `parse_json`, `parse_xml`".
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
            let effect = rules
                .get(number - 1)
                .map_or_else(String::new, |r| format!(" ({})", r.effect()));
            let pattern = rules.get(number - 1).map_or("?", |r| r.pattern.as_str());
            let mut listed: Vec<String> = names
                .iter()
                .take(NAMES_SHOWN)
                .map(|n| format::code(n))
                .collect();
            if names.len() > NAMES_SHOWN {
                listed.push(format!("and {} more", names.len() - NAMES_SHOWN));
            }
            format!(
                "rule {number} {}{effect}: {}",
                format::code(pattern),
                listed.join(", ")
            )
        })
        .collect()
}
