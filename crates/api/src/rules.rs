//! Per-benchmark rules of a suite (`[[suite.rule]]` in `.benchgate.toml`) in wire form: what the
//! stored comparison keeps and what the gate applies, first match by glob on the name winning.

use serde::{Deserialize, Serialize};

use crate::FailOn;

/// One rule: which benchmarks it matches and what it changes for them.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct BenchmarkRule {
    /// Glob on the benchmark name; `*` also crosses `/` (criterion's `group/bench`).
    #[serde(rename = "match")]
    pub pattern: String,
    /// The policy floor of M for these benchmarks, as a fraction (0.01 = 1%).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub min_effect: Option<f64>,
    /// Which verdict fails the check for these benchmarks.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub fail_on: Option<FailOn>,
    /// `false`: shown, never fails the check.
    #[serde(default = "yes")]
    pub gate: bool,
    /// `true`: left out of the report, listed once as ignored.
    #[serde(default)]
    pub ignore: bool,
    /// The metric that gates these benchmarks instead of their time.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub metric: Option<String>,
}

fn yes() -> bool {
    true
}

impl BenchmarkRule {
    /// A rule on `pattern` that changes nothing yet (the file's defaults).
    pub fn matching(pattern: &str) -> Self {
        BenchmarkRule {
            pattern: pattern.to_owned(),
            min_effect: None,
            fail_on: None,
            gate: true,
            ignore: false,
            metric: None,
        }
    }

    /// What the rule changes, in the file's own keys: "not gated, min_effect 2%". The comment
    /// and `benchgate config check` both print this.
    pub fn effect(&self) -> String {
        if self.ignore {
            return "ignored".to_owned();
        }
        let mut parts = Vec::new();
        if !self.gate {
            parts.push("not gated".to_owned());
        }
        if let Some(metric) = &self.metric {
            parts.push(format!("gated on metric {metric}"));
        }
        if let Some(m) = self.min_effect {
            parts.push(format!("min_effect {}%", (m * 1e4).round() / 1e2));
        }
        if let Some(f) = self.fail_on {
            parts.push(format!("fail_on {f}"));
        }
        if parts.is_empty() {
            parts.push("no change".to_owned());
        }
        parts.join(", ")
    }
}

/// The rule the gate applied to a result row, so the report can say which rule decided it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct AppliedRule {
    /// 1-based position of the rule in its suite.
    pub number: usize,
    /// The rule's glob, as written.
    pub pattern: String,
    /// The rule's `fail_on`, when it sets one; the comparison's otherwise.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub fail_on: Option<FailOn>,
    /// `gate = false`.
    #[serde(default)]
    pub not_gated: bool,
    /// `ignore = true`.
    #[serde(default)]
    pub ignored: bool,
}

/// Compiles a rule's glob on benchmark names: `*` matches any characters, `/` included, so
/// `parse_*` matches `parse_json/small`. The config parser and the gate both call this.
pub fn compile_pattern(pattern: &str) -> Result<globset::GlobMatcher, String> {
    globset::GlobBuilder::new(pattern)
        .literal_separator(false)
        .build()
        .map(|g| g.compile_matcher())
        .map_err(|e| format!("invalid glob {pattern:?}: {}", e.kind()))
}

/// A suite's rules, compiled: the first rule whose glob matches a benchmark's name applies.
#[derive(Debug, Clone, Default)]
pub struct RuleSet {
    rules: Vec<(BenchmarkRule, Option<globset::GlobMatcher>)>,
    /// `[gate] gate_on`: which tier gates where no rule names a metric.
    gate_on: crate::GateOn,
}

impl RuleSet {
    /// Compiles `rules`; a glob that does not compile (only possible in a hand-made stored
    /// config, since the parser refuses it) matches nothing.
    pub fn new(rules: &[BenchmarkRule]) -> Self {
        let rules = rules
            .iter()
            .map(|r| (r.clone(), compile_pattern(&r.pattern).ok()))
            .collect();
        Self {
            rules,
            gate_on: crate::GateOn::Time,
        }
    }

    /// The rules of a stored comparison: its suite's rules and its gate's `gate_on`.
    pub fn of(config: &crate::agent::ComparisonConfig) -> Self {
        Self::new(&config.rules).gating(config.gate.gate_on)
    }

    /// The same rules, with `gate_on` deciding which tier gates where no rule names a metric.
    pub fn gating(mut self, gate_on: crate::GateOn) -> Self {
        self.gate_on = gate_on;
        self
    }

    /// Which tier gates where no rule names a metric.
    pub fn gate_on(&self) -> crate::GateOn {
        self.gate_on
    }

    /// The first rule matching `benchmark`, with its 1-based number.
    pub fn first_match(&self, benchmark: &str) -> Option<(usize, &BenchmarkRule)> {
        self.rules
            .iter()
            .enumerate()
            .find(|(_, (_, glob))| glob.as_ref().is_some_and(|g| g.is_match(benchmark)))
            .map(|(i, (rule, _))| (i + 1, rule))
    }

    /// The `min_effect` of the rule that applies to `benchmark`, when it sets one.
    pub fn min_effect(&self, benchmark: &str) -> Option<f64> {
        self.first_match(benchmark).and_then(|(_, r)| r.min_effect)
    }

    /// The rule applied to `benchmark`'s rows, as a row records it.
    pub fn applied(&self, benchmark: &str) -> Option<AppliedRule> {
        self.first_match(benchmark).map(|(number, r)| AppliedRule {
            number,
            pattern: r.pattern.clone(),
            fail_on: r.fail_on,
            not_gated: !r.gate,
            ignored: r.ignore,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_first_matching_rule_wins_and_star_crosses_slashes() {
        let rules = RuleSet::new(&[
            BenchmarkRule::matching("parse_*"),
            BenchmarkRule::matching("*"),
            BenchmarkRule::matching("parse_json"),
        ]);
        assert_eq!(rules.first_match("parse_json/small").map(|m| m.0), Some(1));
        assert_eq!(rules.first_match("render").map(|m| m.0), Some(2));
        assert_eq!(
            RuleSet::new(&[BenchmarkRule::matching("a?c")]).first_match("abd"),
            None
        );
    }
}
