//! `benchgate config check`: the resolved file in words — suites, the comparisons (and check
//! runs) each label makes, and the rules in the order they are tried.

use std::fmt::Write as _;

use benchgate_api::agent::{AUTO_MEASURE_SECS, MergeQueueMode, NoAnswerConclusion, measure_text};

use super::values::RunLength;
use super::{MergeQueueConfig, RepoConfig, RuleConfig};

/// The name of a comparison's check run (and commit status): `benchgate` for a lone
/// `[benchmark]` on one label, `benchgate / SUITE (LABEL)` otherwise.
pub fn check_run_name(suite: Option<&str>, label: &str) -> String {
    match suite {
        None => "benchgate".to_owned(),
        Some(suite) => format!("benchgate / {suite} ({label})"),
    }
}

/// The key of a comparison's PR comment (its hidden marker): the label for a lone
/// `[benchmark]` on one label, as before suites existed; `SUITE (LABEL)` otherwise.
pub fn comment_key(suite: Option<&str>, label: &str) -> String {
    match suite {
        None => label.to_owned(),
        Some(suite) => format!("{suite} ({label})"),
    }
}

impl RepoConfig {
    /// The suite name a comparison records: `None` when the check run keeps its plain name.
    pub fn suite_key<'a>(&self, suite: &'a super::SuiteConfig) -> Option<&'a str> {
        (!self.is_single_comparison()).then(|| suite.name())
    }

    /// What the file resolves to, as `benchgate config check` prints it.
    pub fn describe(&self) -> String {
        let mut out = String::new();
        let comparisons = self.comparisons().count();
        let _ = writeln!(
            out,
            "valid: {} suite(s), {comparisons} comparison(s) per pull request",
            self.suites.len()
        );
        let _ = writeln!(
            out,
            "gate: fail_on {}, min_effect {}, tolerance {}, rare_slow_runs {}, claims {}, \
             on_no_answer {}{}",
            self.gate.fail_on,
            self.gate.min_effect,
            self.gate.tolerance,
            self.gate.rare_slow_runs,
            self.gate.claims,
            self.gate.on_no_answer.as_str(),
            match self.gate.gate_on {
                benchgate_api::GateOn::Time => String::new(),
                on => format!(", gate_on {on}"),
            }
        );
        let main = &self.main;
        if main.enabled {
            let schedule = match main.schedule.0 {
                Some(h) if h % 24 == 0 => format!("every {}d", h / 24),
                Some(h) => format!("every {h}h"),
                None => "on demand only (schedule = \"off\")".to_owned(),
            };
            let issues = if main.issues {
                "issues opened for regressions"
            } else {
                "no issues (issues = false)"
            };
            let _ = writeln!(
                out,
                "main: each push to the default branch compared with the commit before it; \
                 against the anchor ({} back) {schedule}; {issues}",
                main.anchor.0
            );
        } else {
            let _ = writeln!(out, "main: off (enabled = false)");
        }
        let _ = writeln!(
            out,
            "merge queue: {}",
            describe_merge_queue(&self.merge_queue)
        );
        for suite in &self.suites {
            let _ = writeln!(out, "\nsuite {}", suite.name());
            if let Some(build) = &suite.build {
                let _ = writeln!(out, "  build: {build}");
            }
            let _ = writeln!(out, "  run: {} (format {})", suite.run, suite.format);
            let rounds = suite.rounds.get();
            let guard = self.gate.rare_slow_runs.share().map_or(0, |share| {
                benchgate_api::agent::guard_rounds(share, benchgate_api::agent::GATE_ALPHA)
            });
            let planned = if guard > rounds {
                format!("{rounds} ({guard} for a pull request: the tail guard's)")
            } else {
                rounds.to_string()
            };
            let _ = writeln!(out, "  rounds: {planned}, warmup: {}", suite.warmup);
            if !suite.paths.patterns().is_empty() {
                let _ = writeln!(out, "  paths: {}", suite.paths.patterns().join(", "));
            }
            if !suite.bench_from_head.patterns().is_empty() {
                let _ = writeln!(
                    out,
                    "  bench_from_head: {} (base runs head's version of these files)",
                    suite.bench_from_head.patterns().join(", ")
                );
            }
            if let Some(budget) = suite.budget {
                let _ = writeln!(
                    out,
                    "  budget: {budget} of measuring per job, then the check concludes with what is known"
                );
            }
            if !suite.ignore.patterns().is_empty() {
                let _ = writeln!(
                    out,
                    "  ignore: {} (a change to these files alone is not measured)",
                    suite.ignore.patterns().join(", ")
                );
            }
            if let Some(RunLength::Auto) = suite.measure {
                let _ = writeln!(
                    out,
                    "  measure: auto: each runner measures the length its A/A sessions of this \
                     suite show answers soonest (A/A sessions, and runs before any: {} s)",
                    measure_text(AUTO_MEASURE_SECS)
                );
            } else if let Some(measure) = suite.measure {
                let _ = writeln!(
                    out,
                    "  measure: {measure} per benchmark per run (in place of {{measure_secs}})"
                );
            } else if suite.run.as_str().contains("--measurement-time") {
                let _ = writeln!(
                    out,
                    "  run length: fixed in the run command; `--measurement-time {{measure_secs}}` \
                     with `measure` lets you set it here (compare prints the length that answers soonest)"
                );
            }
            if !suite.artifacts.patterns().is_empty() {
                let _ = writeln!(
                    out,
                    "  artifacts: {} (byte-identical builds conclude \"identical build\", unmeasured)",
                    suite.artifacts.patterns().join(", ")
                );
            }
            if suite.network {
                let _ = writeln!(out, "  network: runs may use the network");
            }
            if let Some(counts) = suite.counts {
                let _ = writeln!(
                    out,
                    "  counts: {} (each side counted twice apart from the timed rounds, by {}; \
                     exact when both runs of a side agree)",
                    counts.metric(),
                    suite.count_run.as_ref().map_or(
                        "the run command, whole".to_owned(),
                        |r| format!("`{}` per benchmark", r.as_str())
                    )
                );
            }
            if let Some(salt) = &suite.layout_salt {
                let _ = writeln!(
                    out,
                    "  layout_salt: {} (layout calibration salts builds with it)",
                    salt.as_str()
                );
            }
            for label in suite.runner.iter() {
                let name = check_run_name(self.suite_key(suite), label);
                let _ = writeln!(out, "  runner {label}: check run \"{name}\"");
            }
            if suite.rule.is_empty() {
                let _ = writeln!(out, "  rules: none");
            } else {
                let _ = writeln!(out, "  rules (first match wins):");
            }
            for (i, rule) in suite.rule.iter().enumerate() {
                let _ = writeln!(
                    out,
                    "    {}. {} — {}",
                    i + 1,
                    rule.pattern.as_str(),
                    RuleConfig::to_wire(rule).effect()
                );
            }
        }
        out
    }
}

/// `[merge_queue]` in one line: what a group's check restates or measures, and its deadline.
fn describe_merge_queue(mq: &MergeQueueConfig) -> String {
    let decided = match mq.mode {
        MergeQueueMode::Reuse => {
            "a group holding one PR whose comparison measured the same code (trees) restates its verdict; \
             otherwise the group's head is compared with its base"
        }
        MergeQueueMode::Measure => {
            "each group's head is compared with its base (mode = \"measure\")"
        }
        MergeQueueMode::Skip => {
            return "groups are not measured; their check succeeds at once (mode = \"skip\")"
                .to_owned();
        }
    };
    let undecided = match mq.on_deadline {
        NoAnswerConclusion::Neutral => "neutral (the queue moves on)",
        NoAnswerConclusion::Failure => "failure (the group leaves the queue)",
    };
    format!("{decided}. Undecided after {}: {undecided}", mq.deadline)
}
