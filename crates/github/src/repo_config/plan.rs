//! The run plan of one suite: what its comparisons build, run and judge, in the agent
//! protocol's shape. The scheduler stores it with every comparison and the agent runs it;
//! `benchgate compare --config` runs the same plan on a laptop, so a local run is the CI run.

use std::path::Path;

use benchgate_api::agent::{BenchmarkSpec, ComparisonConfig, GateSpec, ScheduleKind};

use super::{RepoConfig, RuleConfig, SuiteConfig, parse_repo_config};

impl RepoConfig {
    /// The stored config of a suite's comparisons (one per label): the suite in the agent
    /// protocol's shape, the gate and the suite's rules.
    pub fn comparison_config(&self, suite: &SuiteConfig) -> ComparisonConfig {
        ComparisonConfig {
            benchmark: BenchmarkSpec {
                build: suite.build.clone(),
                run: suite.run.as_str().to_owned(),
                // The variant names are the file's spellings, lower-cased.
                format: suite.format.as_str().to_owned(),
                rounds: suite.rounds.get(),
                warmup: suite.warmup,
                schedule: ScheduleKind::Abba,
                seed: None,
                timeout_secs: None,
                env: Vec::new(),
                bench_from_head: suite.bench_from_head.patterns().to_vec(),
                network: suite.network,
                layout_salt: suite.layout_salt.as_ref().map(|s| s.as_str().to_owned()),
                canary_work: suite.canary_work,
                ignore: suite.ignore.patterns().to_vec(),
                artifacts: suite.artifacts.patterns().to_vec(),
                budget_secs: suite.budget.map(|b| b.secs()),
                measure_secs: suite.measure.map(|m| m.secs()),
                measure_auto: suite.measure.is_some_and(|m| m.is_auto()),
                counts: suite.counts,
                count_run: suite.count_run.as_ref().map(|r| r.as_str().to_owned()),
            },
            gate: GateSpec {
                fail_on: self.gate.fail_on,
                min_effect: self.gate.min_effect.fraction(),
                tolerance: self.gate.tolerance.fraction(),
                rare_slow_runs: self.gate.rare_slow_runs.share(),
                claims: self.gate.claims,
                on_no_answer: self.gate.on_no_answer,
                gate_on: self.gate.gate_on,
            },
            suite: self.suite_key(suite).map(str::to_owned),
            rules: suite.rule.iter().map(RuleConfig::to_wire).collect(),
        }
    }

    /// The suite called `name`, or the only one when no name is given.
    pub fn suite_named(&self, name: Option<&str>) -> Result<&SuiteConfig, String> {
        let names: Vec<&str> = self.suites.iter().map(SuiteConfig::name).collect();
        match name {
            Some(wanted) => self
                .suites
                .iter()
                .find(|s| s.name() == wanted)
                .ok_or_else(|| format!("no suite `{wanted}`; the file has {}", names.join(", "))),
            None if self.suites.len() == 1 => Ok(&self.suites[0]),
            None => Err(format!(
                "the file has {} suites ({}); name one with --suite",
                names.len(),
                names.join(", ")
            )),
        }
    }
}

/// Reads the `.benchgate.toml` at `path` and gives the plan of `suite` (or the only one), as
/// the scheduler would store it for a pull request.
pub fn local_plan(path: &Path, suite: Option<&str>) -> Result<ComparisonConfig, String> {
    let text = std::fs::read_to_string(path)
        .map_err(|e| format!("cannot read {}: {e}", path.display()))?;
    let config = parse_repo_config(&text).map_err(|e| e.in_file(&path.display().to_string()))?;
    let suite = config.suite_named(suite)?;
    Ok(config.comparison_config(suite))
}
