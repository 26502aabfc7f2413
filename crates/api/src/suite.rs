//! A suite's configuration in wire form: what to build and run (`[benchmark]`), when the check
//! fails (`[gate]`), the default branch's history (`[main]`) and the merge queue
//! (`[merge_queue]`), as `.benchgate.toml` is parsed into them and as a job carries them.

use serde::{Deserialize, Serialize};

/// The order of base and head inside each round.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ScheduleKind {
    /// Round k runs base first when k is even, head first when odd.
    #[default]
    Abba,
    /// Seeded random order (`BenchmarkSpec::seed`; the agent picks and reports one when absent).
    Random,
}

fn default_format() -> String {
    "command".to_owned()
}

fn default_rounds() -> u32 {
    10
}

fn default_warmup() -> u32 {
    1
}

/// What to build and run on each side, as `.benchgate.toml`'s `[benchmark]` says.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct BenchmarkSpec {
    /// Shell command run once per side in its worktree before the rounds; `None` = nothing to build.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub build: Option<String>,
    /// Shell command run once per side per round, in the side's worktree.
    pub run: String,
    /// How to read the run's output: `command` (measure the process), `criterion`, `libtest`, …
    #[serde(default = "default_format")]
    pub format: String,
    /// Measured rounds this job runs (warm-ups not counted).
    #[serde(default = "default_rounds")]
    pub rounds: u32,
    /// Leading rounds run and discarded.
    #[serde(default = "default_warmup")]
    pub warmup: u32,
    /// Order of the sides inside rounds.
    #[serde(default)]
    pub schedule: ScheduleKind,
    /// Seed of a `random` schedule.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub seed: Option<u64>,
    /// Per-run timeout; `None` = the agent's default.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub timeout_secs: Option<u64>,
    /// Extra `NAME=value` entries added to the scrubbed environment of benchmarked processes.
    #[serde(default)]
    pub env: Vec<String>,
    /// `bench_from_head`: globs of benchmark files whose head version the base side also runs,
    /// so a benchmark added by the PR is measured against the base's code.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub bench_from_head: Vec<String>,
    /// `ignore`: globs of files no benchmark can depend on (docs, CI config). A change whose
    /// files all match is not measured: nothing it touches can be faster or slower.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub ignore: Vec<String>,
    /// `artifacts`: globs of the build's outputs (relative to a side's work tree) that decide
    /// what runs. When both sides' files are byte-identical the job measures nothing and the
    /// comparison concludes "identical build" exactly.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub artifacts: Vec<String>,
    /// `measure`: seconds each run measures a benchmark for, put where the run command holds
    /// [`MEASURE_PLACEHOLDER`] (criterion's `--measurement-time`, go's `-benchtime`, …).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub measure_secs: Option<f64>,
    /// `measure = "auto"`: `measure_secs` is the reference length; the server sets each
    /// comparison job's length from the claiming runner's A/A sessions of the suite.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub measure_auto: bool,
    /// `budget`: seconds of measuring a job may spend (after its build and warm-up); the job
    /// then ends with the rounds it has, and the check concludes with what they show.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub budget_secs: Option<u64>,
    /// The runs may use the network (a sandboxed run has loopback only otherwise; builds keep
    /// the agent's network either way).
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub network: bool,
    /// `layout_salt`: how a layout calibration makes two builds of one commit differ only in
    /// code layout: `NAME=value` with `{salt}` for the build's environment (e.g.
    /// `RUSTFLAGS=-Cmetadata={salt}`), or `env-padding` (an environment variable of a
    /// salt-dependent length in each run, which moves the stack). `None`: no layout floor.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub layout_salt: Option<String>,
    /// `canary_work`: the suite reads [`PLANTED_VAR`] and does that much more work, so planted
    /// canaries plant real work; otherwise they scale head's values when scored.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub canary_work: bool,
    /// `counts`: each side's run is also counted (twice, apart from the timed rounds) and the
    /// count is a row of its own, exact when both runs of each side agree.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub counts: Option<crate::Counts>,
    /// `count_run`: the command a counted run runs for one benchmark
    /// ([`crate::counts::BENCHMARK_PLACEHOLDER`]) a fixed number of times; `None`: the run
    /// command, counted whole (`format = "command"`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub count_run: Option<String>,
}

/// `[gate]`: when a comparison's check fails.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct GateSpec {
    /// `regression`, `practical-regression` or `never`.
    #[serde(default)]
    pub fail_on: crate::FailOn,
    /// Policy minimum of the practical margin M, as a fraction (0.01 = 1%).
    #[serde(default = "default_min_effect")]
    pub min_effect: f64,
    /// The slowdown the gate tolerates, as a fraction (0.05 = 5%): a row passes once its
    /// anytime-valid bound on the worse side is below it ("not slower than +5%"). `None`:
    /// the gate waits for equivalence within ±M. Comparisons stored before it have none.
    #[serde(default)]
    pub tolerance: Option<f64>,
    /// The tail guard, as the smallest share of head's runs a slow mode may have and still be
    /// seen before a pass (0.05: 1 run in 20): a pass waits for the runs that make such a mode
    /// show with probability 1 − alpha (docs/statistics.md §4c). `None`: no guard; comparisons
    /// stored before it have none.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub rare_slow_runs: Option<f64>,
    /// What the PR description's performance claims do to the check.
    #[serde(default)]
    pub claims: ClaimsMode,
    /// The check's conclusion when the comparison ends without an answer (its jobs failed, or
    /// its rounds ran out undecided): neutral, which a required check lets merge, by default.
    #[serde(default, skip_serializing_if = "is_neutral")]
    pub on_no_answer: NoAnswerConclusion,
    /// Which tier's rows decide the check: time (the default), the counts, or both.
    #[serde(default, skip_serializing_if = "is_time")]
    pub gate_on: crate::GateOn,
}

fn is_time(g: &crate::GateOn) -> bool {
    *g == crate::GateOn::Time
}

fn is_neutral(c: &NoAnswerConclusion) -> bool {
    *c == NoAnswerConclusion::Neutral
}

/// `[gate] claims`: answer the PR's claims in the comment only (`report`, the default), or also
/// fail the check when one is not reproduced or opposite (`require`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum ClaimsMode {
    #[default]
    Report,
    Require,
}

impl std::fmt::Display for ClaimsMode {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            ClaimsMode::Report => "report",
            ClaimsMode::Require => "require",
        })
    }
}

fn default_min_effect() -> f64 {
    0.01
}

/// Shortest and longest time budget a suite may set: below 10 s no round fits, and a day
/// of one job is a configuration mistake.
pub const BUDGET_SECS: std::ops::RangeInclusive<u64> = 10..=24 * 3600;

/// A time budget as people write one (`"10m"`, `"90s"`, `"1h 30m"`), in whole seconds within
/// [`BUDGET_SECS`].
pub fn parse_budget(text: &str) -> Result<u64, String> {
    let secs = humantime::parse_duration(text.trim())
        .map_err(|e| format!("{text:?} is not a duration such as \"10m\" or \"90s\": {e}"))?
        .as_secs();
    if BUDGET_SECS.contains(&secs) {
        Ok(secs)
    } else {
        Err(format!(
            "a budget of {text:?} is outside {} s to {} h",
            BUDGET_SECS.start(),
            BUDGET_SECS.end() / 3600
        ))
    }
}

/// What a run command holds where each run's measuring time goes, in seconds (`0.5`): the
/// suite's `measure`, or the length `compare --measure-secs` sets.
pub const MEASURE_PLACEHOLDER: &str = "{measure_secs}";

/// The run lengths `measure` may set, in seconds.
pub const MEASURE_SECS: std::ops::RangeInclusive<f64> = 0.01..=600.0;

/// Reads a run length such as `"0.5s"`, `"300ms"` or `"2s"` into seconds.
pub fn parse_measure(text: &str) -> Result<f64, String> {
    let secs = humantime::parse_duration(text.trim())
        .map_err(|e| format!("{text:?} is not a duration such as \"0.5s\" or \"300ms\": {e}"))?
        .as_secs_f64();
    if MEASURE_SECS.contains(&secs) {
        Ok(secs)
    } else {
        Err(format!(
            "a run length of {text:?} is outside {} s to {} s",
            MEASURE_SECS.start(),
            MEASURE_SECS.end()
        ))
    }
}

/// The length `measure = "auto"` starts from, and that A/A sessions measure at: 1 s.
pub const AUTO_MEASURE_SECS: f64 = 1.0;

/// How far `measure = "auto"` moves from the length its A/A sessions measured at (either way):
/// the split of a run's variance is measured at one length, and a model extrapolated beyond
/// ten times is a guess.
pub const AUTO_MEASURE_REACH: f64 = 10.0;

/// `secs` as a run command receives it: seconds with at most three decimals (`0.25`, `2`).
pub fn measure_text(secs: f64) -> String {
    let ms = (secs * 1000.0).round() / 1000.0;
    format!("{ms}")
}

/// The tolerance of `[gate]` when the file names none: 5%.
pub const DEFAULT_TOLERANCE: f64 = 0.05;

/// `[gate] rare_slow_runs` when the file names none: a slow mode in 1 run of head in 20.
pub const DEFAULT_RARE_SLOW_RUNS: f64 = 0.05;

/// `"1 in 20"`, `"5%"` or `"off"` as a share of runs (`None` for off), at most 1 in 2: the one
/// reading of `[gate] rare_slow_runs` and of `--rare-slow-runs`.
pub fn parse_rare_slow_runs(s: &str) -> Result<Option<f64>, String> {
    let text = s.trim();
    if text == "off" {
        return Ok(None);
    }
    let bad = || {
        format!(
            "expected the rarest slow mode a pass must have had the runs to see, such as \
             \"1 in 20\" or \"5%\" (at most 1 in 2), or \"off\"; got {s:?}"
        )
    };
    let share = match text.split_once(" in ") {
        Some((one, n)) if one.trim() == "1" => 1.0 / n.trim().parse::<f64>().map_err(|_| bad())?,
        Some(_) => return Err(bad()),
        None => {
            let pct = text.strip_suffix('%').ok_or_else(bad)?;
            pct.trim().parse::<f64>().map_err(|_| bad())? / 100.0
        }
    };
    if share.is_finite() && share > 0.0 && share <= 0.5 {
        Ok(Some(share))
    } else {
        Err(bad())
    }
}

/// Runs of head a pass needs at most under the tail guard for `share` at `alpha`, when the
/// pass is close to its limit: `⌈ln(α/2) / ln(1 − share)⌉` (72 for 1 in 20 at 5%; the guard
/// spends half of alpha, `benchgate_stats::modes::guard_runs`). A comparison that gates plans
/// at least this many rounds, so a pass can be reached.
pub fn guard_rounds(share: f64, alpha: f64) -> u32 {
    if !(share > 0.0 && share < 1.0 && alpha > 0.0 && alpha < 1.0) {
        return 0;
    }
    ((alpha / 2.0).ln() / (1.0 - share).ln())
        .ceil()
        .clamp(1.0, f64::from(u32::MAX)) as u32
}

impl Default for GateSpec {
    fn default() -> Self {
        GateSpec {
            fail_on: crate::FailOn::default(),
            min_effect: default_min_effect(),
            tolerance: Some(DEFAULT_TOLERANCE),
            rare_slow_runs: Some(DEFAULT_RARE_SLOW_RUNS),
            claims: ClaimsMode::Report,
            on_no_answer: NoAnswerConclusion::Neutral,
            gate_on: crate::GateOn::Time,
        }
    }
}

impl ComparisonConfig {
    /// Rounds a pull request's comparison plans: the suite's `rounds`, or the tail guard's when
    /// that is more, so a pass can be reached within them (the job still ends as soon as the
    /// gate has its answer; a clear slowdown ends it early).
    pub fn gate_rounds(&self) -> u32 {
        let guard = self
            .gate
            .rare_slow_runs
            .map_or(0, |share| guard_rounds(share, GATE_ALPHA));
        self.benchmark.rounds.max(guard)
    }
}

/// The error level a pull request's gate decides at.
pub const GATE_ALPHA: f64 = 0.05;

/// A comparison's (and job's) stored `config`: the parsed `.benchgate.toml` in wire form.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ComparisonConfig {
    /// What to build and run.
    pub benchmark: BenchmarkSpec,
    /// When the check fails.
    #[serde(default)]
    pub gate: GateSpec,
    /// The `[[suite]]` name; `None` for a lone `[benchmark]` on one label (check run `benchgate`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub suite: Option<String>,
    /// The suite's per-benchmark rules in file order; the first match wins.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub rules: Vec<crate::BenchmarkRule>,
}

/// `[main]`: how the default branch's history is kept and its regressions raised.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct MainSettings {
    /// Each push to the default branch is compared with the commit before it.
    pub enabled: bool,
    /// What an anchor comparison compares the branch with.
    pub anchor: Anchor,
    /// Hours between scheduled anchor comparisons; `None`: only on demand.
    pub schedule_hours: Option<u32>,
    /// Open a GitHub issue per regression found on the branch.
    pub issues: bool,
    /// Labels of those issues.
    pub issue_labels: Vec<String>,
    /// Search an episode's range of commits for the one that did it.
    #[serde(default = "yes")]
    pub bisect: bool,
}

fn yes() -> bool {
    true
}

impl Default for MainSettings {
    fn default() -> Self {
        MainSettings {
            enabled: true,
            anchor: Anchor::Days(30),
            schedule_hours: Some(24),
            issues: false,
            issue_labels: Vec::new(),
            bisect: true,
        }
    }
}

/// The older commit of an anchor comparison, counted back along the compared commits.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Anchor {
    /// The newest compared commit at least this many days old (else the oldest one).
    Days(u32),
    /// This many compared commits back.
    Commits(u32),
}

impl std::fmt::Display for Anchor {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Anchor::Days(n) => write!(f, "{n}d"),
            Anchor::Commits(1) => write!(f, "1 commit"),
            Anchor::Commits(n) => write!(f, "{n} commits"),
        }
    }
}

impl std::str::FromStr for Anchor {
    type Err = String;

    /// `"30d"` or `"20 commits"`.
    fn from_str(s: &str) -> Result<Self, String> {
        let s = s.trim();
        let refuse =
            || format!("`{s}` is not an anchor: write days (\"30d\") or commits (\"20 commits\")");
        let number = |digits: &str| digits.trim().parse::<u32>().ok().filter(|n| *n > 0);
        if let Some(days) = s.strip_suffix('d') {
            return number(days).map(Anchor::Days).ok_or_else(refuse);
        }
        let commits = s
            .strip_suffix("commits")
            .or_else(|| s.strip_suffix("commit"));
        commits
            .and_then(number)
            .map(Anchor::Commits)
            .ok_or_else(refuse)
    }
}

/// `[merge_queue]`: what the check of a merge group (GitHub's merge queue) measures.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct MergeQueueSettings {
    /// How the group's check is decided.
    pub mode: MergeQueueMode,
    /// Minutes after the group was announced when its check concludes with what was measured,
    /// so a slow or busy runner never stalls the queue (GitHub's own default timeout is 60).
    pub deadline_minutes: u32,
    /// The conclusion of a check that reached its deadline undecided.
    pub on_deadline: NoAnswerConclusion,
}

impl Default for MergeQueueSettings {
    fn default() -> Self {
        MergeQueueSettings {
            mode: MergeQueueMode::Reuse,
            deadline_minutes: 45,
            on_deadline: NoAnswerConclusion::Neutral,
        }
    }
}

/// `[merge_queue] mode`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum MergeQueueMode {
    /// Restate the PR's verdict when the group holds one PR whose last comparison had the
    /// group's base; otherwise measure.
    Reuse,
    /// Always compare the group's head with its base.
    Measure,
    /// A success check saying the group was not measured.
    Skip,
}

impl MergeQueueMode {
    /// The spelling in `.benchgate.toml`.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Reuse => "reuse",
            Self::Measure => "measure",
            Self::Skip => "skip",
        }
    }
}

/// A check's conclusion when benchgate has no answer: a merge group still undecided at its
/// deadline (`[merge_queue] on_deadline`), or a comparison that ended without one, its jobs
/// failed or its rounds spent undecided (`[gate] on_no_answer`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum NoAnswerConclusion {
    /// GitHub counts a neutral required check as passing: the PR may merge, the queue moves on.
    #[default]
    Neutral,
    /// A required check blocks: the PR cannot merge, the group leaves the queue.
    Failure,
}

impl NoAnswerConclusion {
    /// The spelling in `.benchgate.toml`.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Neutral => "neutral",
            Self::Failure => "failure",
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// `[gate] rare_slow_runs` and `--rare-slow-runs`: "1 in N", a share, or off; anything else
    /// is refused with what is expected, and the guard's rounds follow from the share.
    #[test]
    fn rare_slow_runs_reads_one_in_n_a_share_or_off_and_refuses_the_rest() {
        assert_eq!(parse_rare_slow_runs("1 in 20"), Ok(Some(0.05)));
        assert_eq!(parse_rare_slow_runs(" 5% "), Ok(Some(0.05)));
        assert_eq!(parse_rare_slow_runs("off"), Ok(None));
        for bad in [
            "", "2 in 20", "1 in 0", "1 in 1", "60%", "0%", "-5%", "often", "0.05",
        ] {
            let e = parse_rare_slow_runs(bad).unwrap_err();
            assert!(
                e.contains("\"1 in 20\"") && e.contains(bad.trim()),
                "{bad}: {e}"
            );
        }
        assert_eq!(guard_rounds(0.05, 0.05), 72);
        assert_eq!(guard_rounds(0.0, 0.05), 0);
        // A comparison stored before the guard keeps deciding as it did; a new file gets it.
        let stored: GateSpec = serde_json::from_str(r#"{"tolerance": 0.05}"#).unwrap();
        assert_eq!(stored.rare_slow_runs, None);
        assert_eq!(
            GateSpec::default().rare_slow_runs,
            Some(DEFAULT_RARE_SLOW_RUNS)
        );
    }

    #[test]
    fn benchmark_spec_defaults_fill_a_minimal_config() {
        let spec: BenchmarkSpec = serde_json::from_str(r#"{"run":"./bench"}"#).unwrap();
        assert_eq!(spec.format, "command");
        assert_eq!(spec.schedule, ScheduleKind::Abba);
        assert_eq!((spec.rounds, spec.warmup), (10, 1));
    }
}
