//! The agent protocol: JSON over HTTP under `/api/v1`, bearer runner token, and the admin
//! API's comparison request. Every write from an agent names its lease token; a writer whose
//! lease is gone gets `409 Conflict` and stops.
//!
//! | call | request | answer |
//! |---|---|---|
//! | `POST /api/v1/jobs/claim` | [`ClaimRequest`] | `200` [`ClaimedJob`] or `204` (nothing within `wait_secs`) |
//! | `POST /api/v1/jobs/{id}/heartbeat` | [`HeartbeatRequest`] | [`HeartbeatResponse`] / `409` |
//! | `POST /api/v1/jobs/{id}/rounds` | [`RoundUpload`] | [`UploadReceipt`] / `409` |
//! | `POST /api/v1/jobs/{id}/complete` | [`CompleteRequest`] | `204` / `409` |
//! | `POST /api/v1/jobs/{id}/release` | [`ReleaseRequest`] | `204` / `409` |
//! | `PUT /api/v1/runners/me/fingerprint` | [`FingerprintRequest`] | `204` |
//! | `POST /api/v1/comparisons` (admin token) | [`CreateComparisonRequest`] | `201` [`CreatedComparison`] |
//! | `GET /api/v1/comparisons/{id}` (admin token) | — | [`ComparisonStatus`] |
//!
//! A wrong or revoked runner token gets `401`.

use chrono::{DateTime, Utc};
use serde::{Deserialize, Serialize};

use crate::{AnalysisReport, Measurement, Side};

/// Ask for the next job; the server holds the request up to `wait_secs` (capped at ~25 s).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct ClaimRequest {
    /// Only jobs for these labels (a subset of the runner's registered labels); empty = all of them.
    #[serde(default)]
    pub labels: Vec<String>,
    /// How long the server may wait for a job before answering `204`; `None` = server default.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub wait_secs: Option<u64>,
}

/// What a job measures.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum JobKind {
    /// Rounds of an A/B comparison of `base_sha` and `head_sha`.
    Comparison,
    /// An A/A session: `base_sha == head_sha`; its samples give this runner's noise floor.
    Calibration,
}

/// The repository to check out.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct RepositorySpec {
    /// `owner/name`, or the URL/path itself.
    pub name: String,
    /// Anything `git clone` accepts: a URL or a local path.
    pub clone_url: String,
}

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
}

/// Both sides built to the same bytes: every file `artifacts` names, on each side, has the same
/// path and content. Nothing that runs differs, so nothing is measured.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct IdenticalBuild {
    /// The files compared, relative to a work tree, sorted.
    pub files: Vec<String>,
    /// Their total size.
    pub bytes: u64,
    /// SHA-256 over the sorted `path NUL file-sha256` lines: one digest for the whole build.
    pub sha256: String,
}

impl IdenticalBuild {
    /// "identical build: 2 files (4.1 MiB) byte-identical on both sides (sha256 3f2a…)".
    pub fn describe(&self) -> String {
        let files = match self.files.as_slice() {
            [one] => one.clone(),
            many => format!("{} files", many.len()),
        };
        format!(
            "identical build: {files} ({:.1} MiB) byte-identical on both sides (sha256 {}); nothing \
             that runs differs, so nothing was measured",
            self.bytes as f64 / (1024.0 * 1024.0),
            &self.sha256[..self.sha256.len().min(12)]
        )
    }
}

/// `layout_salt = "env-padding"`: any language, no rebuild.
pub const LAYOUT_ENV_PADDING: &str = "env-padding";

/// The variable `env-padding` sets in each run.
pub const LAYOUT_PAD_VAR: &str = "BENCHGATE_LAYOUT_PAD";

/// The variable a planted canary sets in head's runs: the factor of work to do (`1.05` = 5%
/// more). `benchgate spin` honours it; a suite can too.
pub const PLANTED_VAR: &str = "BENCHGATE_PLANTED";

/// What one side of a layout session gets: build and run environment entries.
pub fn layout_side_env(template: &str, salt: &str) -> Result<SideEnv, String> {
    if template == LAYOUT_ENV_PADDING {
        // A salt-dependent length between 0 and 4095 bytes: the stack moves with it.
        let len = salt
            .bytes()
            .fold(0u32, |h, b| h.wrapping_mul(31).wrapping_add(u32::from(b)))
            % 4096;
        return Ok(SideEnv {
            build: Vec::new(),
            run: vec![format!("{LAYOUT_PAD_VAR}={}", "x".repeat(len as usize))],
        });
    }
    check_layout_salt(template)?;
    Ok(SideEnv {
        build: vec![template.replace("{salt}", salt)],
        run: Vec::new(),
    })
}

/// `layout_salt` is `env-padding` or `NAME=value` whose value holds `{salt}`.
pub fn check_layout_salt(template: &str) -> Result<(), String> {
    if template == LAYOUT_ENV_PADDING {
        return Ok(());
    }
    let valid_name = |n: &str| {
        !n.is_empty()
            && !n.starts_with(|c: char| c.is_ascii_digit())
            && n.chars().all(|c| c.is_ascii_alphanumeric() || c == '_')
    };
    match template.split_once('=') {
        Some((name, value)) if valid_name(name) && value.contains("{salt}") => Ok(()),
        _ => Err(format!(
            "layout_salt must be \"{LAYOUT_ENV_PADDING}\" or NAME=value with {{salt}} in the value \
             (e.g. \"RUSTFLAGS=-Cmetadata={{salt}}\"), found {template:?}"
        )),
    }
}

/// A canary: one commit compared with itself on one runner at the lowest priority, so the
/// runner's audit can count how often its verdicts claim what is not there.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct CanarySpec {
    /// The runner it measures (its jobs go to no other).
    pub runner_id: i64,
    /// `None`: an A/A canary. Otherwise head does this much more work, in percent.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub planted_pct: Option<f64>,
    /// How the planted change is made.
    #[serde(default)]
    pub planted_by: PlantedBy,
}

impl CanarySpec {
    /// Head's factor of work: 1 for an A/A canary.
    pub fn factor(&self) -> f64 {
        1.0 + self.planted_pct.unwrap_or(0.0) / 100.0
    }
}

/// How a canary plants its change.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum PlantedBy {
    /// Head's runs get [`PLANTED_VAR`] and do more work (`benchgate spin`, or a suite that
    /// reads it): real work, real noise.
    #[default]
    Work,
    /// Head's measured values are scaled when the canary is scored: any suite, real noise, an
    /// exact effect.
    Scale,
}

/// The two salts of a layout session: each side is built (or run) with its own.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct LayoutSalts {
    pub base: String,
    pub head: String,
}

/// Environment entries (`NAME=value`) one side gets beyond the suite's own.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
pub struct SideEnv {
    /// For the build.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub build: Vec<String>,
    /// For every run.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub run: Vec<String>,
}

/// What makes the two sides of a job differ beyond their commits (a canary's planted work, a
/// layout session's salts).
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
pub struct SideEnvs {
    #[serde(default)]
    pub base: SideEnv,
    #[serde(default)]
    pub head: SideEnv,
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
    /// What the PR description's performance claims do to the check.
    #[serde(default)]
    pub claims: ClaimsMode,
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

impl Default for GateSpec {
    fn default() -> Self {
        GateSpec {
            fail_on: crate::FailOn::default(),
            min_effect: default_min_effect(),
            tolerance: Some(DEFAULT_TOLERANCE),
            claims: ClaimsMode::Report,
        }
    }
}

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

/// A comparison's stored `config`: what ran and how it is judged, what the server planned
/// before any A/B data, and the pull request's context when GitHub asked for it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct StoredComparisonConfig {
    /// The repository's configuration, as the jobs received it.
    #[serde(flatten)]
    pub config: ComparisonConfig,
    /// Planned pairs n* per benchmark, from the A/A floor of that benchmark's gated metric;
    /// a benchmark missing here uses the comparison's `planned_rounds` or the default.
    #[serde(default, skip_serializing_if = "std::collections::BTreeMap::is_empty")]
    pub n_star: std::collections::BTreeMap<String, i64>,
    /// What the scheduler learnt of the pull request (absent for admin comparisons).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub github: Option<PullRequestContext>,
    /// `[main]` of the file, for a comparison of the default branch's history.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub main: Option<MainSettings>,
    /// The pull request whose merge a step of the default branch compares, as the commit
    /// message names it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub merged_pr: Option<u64>,
    /// Set for a comparison made for GitHub's merge queue.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub merge_group: Option<MergeGroupContext>,
    /// Set for a canary comparison.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub canary: Option<CanarySpec>,
    /// Set for a layout calibration job: each side's salt.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub layout: Option<LayoutSalts>,
}

impl StoredComparisonConfig {
    /// The same suite and plan without what it was made for (pull request, history step, merge
    /// group, canary, layout session): a probe's or canary's workload.
    pub fn without_context(self) -> Self {
        StoredComparisonConfig {
            n_star: self.n_star,
            ..self.config.into()
        }
    }

    /// What each side gets beyond the suite's environment: a planted canary's work on head, a
    /// layout session's salts. `None` when the sides differ only in their commits.
    pub fn side_envs(&self) -> Result<Option<SideEnvs>, String> {
        let mut envs = SideEnvs::default();
        if let Some(canary) = self.canary.as_ref().filter(|c| c.planted_pct.is_some())
            && canary.planted_by == PlantedBy::Work
        {
            envs.head
                .run
                .push(format!("{PLANTED_VAR}={}", canary.factor()));
        }
        if let Some(salts) = &self.layout {
            let template = self
                .config
                .benchmark
                .layout_salt
                .as_deref()
                .ok_or("a layout session of a suite without layout_salt")?;
            let (base, head) = (
                layout_side_env(template, &salts.base)?,
                layout_side_env(template, &salts.head)?,
            );
            envs.base.build.extend(base.build);
            envs.base.run.extend(base.run);
            envs.head.build.extend(head.build);
            envs.head.run.extend(head.run);
        }
        Ok((envs != SideEnvs::default()).then_some(envs))
    }
}

impl From<ComparisonConfig> for StoredComparisonConfig {
    /// The config as given, nothing planned and no pull request (admin API, tests).
    fn from(config: ComparisonConfig) -> Self {
        StoredComparisonConfig {
            config,
            n_star: Default::default(),
            github: None,
            main: None,
            merged_pr: None,
            merge_group: None,
            canary: None,
            layout: None,
        }
    }
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
    pub on_deadline: DeadlineConclusion,
}

impl Default for MergeQueueSettings {
    fn default() -> Self {
        MergeQueueSettings {
            mode: MergeQueueMode::Reuse,
            deadline_minutes: 45,
            on_deadline: DeadlineConclusion::Neutral,
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

/// `[merge_queue] on_deadline`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum DeadlineConclusion {
    /// The queue moves on; GitHub counts a neutral required check as passing.
    Neutral,
    /// The group leaves the queue.
    Failure,
}

impl DeadlineConclusion {
    /// The spelling in `.benchgate.toml`.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Neutral => "neutral",
            Self::Failure => "failure",
        }
    }
}

/// A comparison made for GitHub's merge queue: the group's head against its base, or one of
/// the group's commits against its parent (a step that names the PR that made it slower).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct MergeGroupContext {
    /// The group's ref without `refs/heads/`, e.g. `gh-readonly-queue/main/pr-104-<sha>`.
    pub head_ref: String,
    /// The branch the group merges into.
    pub base_ref: String,
    /// `[merge_queue]` as the base branch had it.
    pub settings: MergeQueueSettings,
    /// The group's commits, oldest first: one per pull request it merges.
    pub prs: Vec<GroupPullRequest>,
    /// Set on a step: the head sha of the group it belongs to.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub step_of: Option<String>,
    /// Set on a step: its rows are judged at α divided by this, the group's PRs sharing one
    /// error budget, so that an innocent PR is named at most α of the time.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub alpha_split: Option<u32>,
}

/// One pull request of a merge group, and the group's commit that merges it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct GroupPullRequest {
    /// The PR's number, as the commit message or the group's ref names it.
    pub number: Option<u64>,
    /// The group's commit that merges it.
    pub sha: String,
    /// That commit's first parent (the base, or the commit merging the PR before it).
    pub parent: String,
}

/// The pull request behind a comparison, as the scheduler saw it.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct PullRequestContext {
    /// Head commits come from another repository: nothing runs before a maintainer approves.
    #[serde(default)]
    pub fork: bool,
    /// Benchmark files (per `[benchmark] paths`) the PR changes.
    #[serde(default)]
    pub benchmark_files_changed: Vec<String>,
    /// Where the PR branched: the comparison's base is this merge base, not the base branch's
    /// tip. `None` for comparisons scheduled before it was recorded.
    #[serde(default)]
    pub branch: Option<PullRequestBranch>,
    /// The PR's description when it was scheduled: its performance claims are read from it
    /// (benchgate-claims) and answered in the comment.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub body: String,
    /// Claims stated in `/benchgate claim` comments, one per benchmark (the newest wins);
    /// later heads of the PR carry them on.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub claimed: Vec<CommentClaim>,
}

/// A `/benchgate claim BENCHMARK CHANGE` comment.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct CommentClaim {
    /// The command's line, as `benchgate_claims::explicit` reads it.
    pub line: String,
    /// The benchmark it names, as written: a later claim on it replaces this one.
    pub benchmark: String,
    /// Who commented, and the comment's id (a retried command adds nothing).
    pub by: String,
    pub comment_id: u64,
}

/// Most comment claims a PR keeps: each is answered in every report.
pub const MAX_COMMENT_CLAIMS: usize = 50;

impl PullRequestContext {
    /// Adds `claim`, replacing an earlier one on the same benchmark; `false` when this comment
    /// was added before or the PR holds [`MAX_COMMENT_CLAIMS`] on other benchmarks.
    pub fn add_claim(&mut self, claim: CommentClaim) -> bool {
        if self
            .claimed
            .iter()
            .any(|c| c.comment_id == claim.comment_id)
        {
            return false;
        }
        self.claimed.retain(|c| c.benchmark != claim.benchmark);
        if self.claimed.len() >= MAX_COMMENT_CLAIMS {
            return false;
        }
        self.claimed.push(claim);
        true
    }
}

/// Which base a PR comparison measures from, and what the base branch did since the PR
/// branched: GitHub's `pull_request.base.sha` is the branch's tip, which may hold commits the
/// PR never saw.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct PullRequestBranch {
    /// The base branch (`main`).
    pub base_ref: String,
    /// The base branch's tip when the PR was scheduled (`pull_request.base.sha`).
    pub base_tip: String,
    /// Commits on the base branch since the merge base: not part of this comparison.
    pub base_ahead_by: u64,
    /// GitHub found no common commit of base and head: the tip is measured instead.
    #[serde(default)]
    pub no_merge_base: bool,
    /// Tree ids of the two commits measured (`None` without a merge base): a merge group is
    /// the same change only when its trees are these.
    #[serde(default)]
    pub trees: Option<MeasuredTrees>,
}

/// Tree ids (the contents, whatever the commit) of a comparison's base and head.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct MeasuredTrees {
    pub base: String,
    pub head: String,
}

/// A job just claimed, under a lease the agent keeps alive with heartbeats.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ClaimedJob {
    /// The job's id (the `{id}` of later calls).
    pub job_id: i64,
    /// Which claim of this job this is (1 for the first); uploads carry it.
    pub attempt: i64,
    /// Proof of holding the lease; every later call names it. Secret: never log it.
    pub lease_token: String,
    /// The lease ends then unless a heartbeat extends it.
    pub lease_expires_at: DateTime<Utc>,
    /// A/B comparison or A/A calibration.
    pub kind: JobKind,
    /// Where the code is.
    pub repository: RepositorySpec,
    /// The base side's commit.
    pub base_sha: String,
    /// The head side's commit (equal to `base_sha` for calibration).
    pub head_sha: String,
    /// What to build and run, and how many rounds.
    pub benchmark: BenchmarkSpec,
    /// Send a heartbeat at least this often.
    pub heartbeat_secs: u64,
    /// Set on a profile job: instead of measured rounds, run each side under a sampling
    /// profiler and upload the stacks (`POST /api/v1/jobs/{id}/profile`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub profile: Option<ProfileRequest>,
    /// Environment each side gets beyond the suite's (a canary's planted work, a layout
    /// session's salts); absent when the sides differ only in their commits.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub sides: Option<SideEnvs>,
    /// End the job (succeeded) once an upload's receipt says the gate has its answer: set for
    /// a pull request's or a canary's comparison that was undecided when claimed, so
    /// `/rebench` on a decided comparison still runs the rounds it asked for.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub stop_when_decided: bool,
}

/// Profiled runs of both sides after a verdict. The profiler changes timings, so these runs are
/// never samples of the comparison: they only say where the time went.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ProfileRequest {
    /// Runs of each side under the profiler; their stacks are merged per side.
    pub runs: u32,
    /// The rows it explains (`benchmark metric`), for the report; the run command is profiled
    /// whole, every benchmark it runs included.
    #[serde(default)]
    pub rows: Vec<String>,
    /// `verdict` (asked by a slower verdict) or the login of who commented `/benchgate profile`.
    pub requested_by: String,
}

/// Largest folded-stacks text per side the server stores; the agent caps below it
/// (`benchgate_profile::Limits::default()`, 256 KiB) and the server refuses more.
pub const PROFILE_SIDE_LIMIT: usize = 512 * 1024;

/// What a profile job produced, uploaded once before the job completes.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ProfileUpload {
    /// The lease held.
    pub lease_token: String,
    /// The sampled event (`cycles`, or `cpu-clock` where hardware counters are absent);
    /// `None` when no profiler could run.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub event: Option<String>,
    /// Why nothing was profiled, one line for the PR comment.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub unavailable: Option<String>,
    /// Profiled runs per side.
    pub runs: u32,
    /// Base's folded stacks (`a;b;c 12` per line).
    #[serde(default)]
    pub base: String,
    /// Head's folded stacks.
    #[serde(default)]
    pub head: String,
}

/// Keep the lease alive and learn whether the job was cancelled.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct HeartbeatRequest {
    /// The lease held.
    pub lease_token: String,
    /// Measured rounds uploaded so far (for progress display).
    #[serde(default)]
    pub rounds_done: u32,
}

/// The extended lease; `cancelled` means stop after the current round and complete the job.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct HeartbeatResponse {
    /// The new end of the lease.
    pub lease_expires_at: DateTime<Utc>,
    /// A newer head or a closed PR cancelled the job.
    pub cancelled: bool,
}

/// One value of one side in an uploaded round.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct UploadedSample {
    /// Which build produced it.
    pub side: Side,
    /// 0 when this side ran first in the round, 1 when second.
    pub position: i64,
    /// The value.
    pub measurement: Measurement,
}

/// One finished measured round (warm-ups are not uploaded); idempotent on
/// (job, attempt, round, side, benchmark, metric), fenced by the lease.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct RoundUpload {
    /// The lease held.
    pub lease_token: String,
    /// The claim's `attempt`.
    pub attempt: i64,
    /// 0-based index of the measured round.
    pub round: i64,
    /// Whether base ran first (positions say the same per sample).
    pub base_first: bool,
    /// Every value of both sides.
    pub samples: Vec<UploadedSample>,
}

/// What an upload stored: re-sent values count as duplicates and keep their first value.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
pub struct UploadReceipt {
    /// Values newly stored.
    pub inserted: u64,
    /// Values already stored by an earlier identical upload.
    pub duplicates: u64,
    /// With this round the comparison's gate has its answer on this runner (passes or fails):
    /// an agent told `stop_when_decided` ends the job.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub decided: bool,
    /// The benchmarks whose gated rows are still undecided on this runner, when some others
    /// are decided: a run command holding `{benchmarks}` runs only these from the next round.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub undecided: Option<Vec<String>>,
}

/// How the agent ended a job.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case", tag = "status")]
pub enum JobOutcome {
    /// Every round ran and was uploaded (or the job was cancelled and stopped cleanly).
    Succeeded {
        /// The end of the agent's log, for the record.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        log_tail: Option<String>,
    },
    /// The build or a run failed.
    Failed {
        /// One line saying what failed.
        reason: String,
        /// The end of the failing command's output.
        #[serde(default)]
        log_tail: String,
    },
    /// Both sides built to byte-identical `artifacts`: no round ran, and none is needed.
    IdenticalBuild { build: IdenticalBuild },
    /// The runner could not finish it for a cause of its own (its work dir was full): the
    /// attempt is used and the job queued again, failed once out of attempts.
    Interrupted {
        /// One line saying what stopped it.
        reason: String,
        #[serde(default)]
        log_tail: String,
    },
}

/// What a failure says when the machine, not the code, ran out of disk.
pub const DISK_FULL: &str = "No space left on device";

/// End a job.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct CompleteRequest {
    /// The lease held.
    pub lease_token: String,
    /// Succeeded or failed with a reason.
    pub outcome: JobOutcome,
}

/// Give a job back to the queue without using up an attempt (agent shutting down).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ReleaseRequest {
    /// The lease held.
    pub lease_token: String,
}

/// The runner's machine fingerprint (CPU, cores, kernel, governor…), stored with the runner.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct FingerprintRequest {
    /// This machine, as the harness reads it, with the agent's isolation.
    pub fingerprint: crate::MachineFingerprint,
}

/// Request a comparison of two revisions without GitHub (tests, scripts, the demo).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct CreateComparisonRequest {
    /// A clone URL or a local path.
    pub repository: String,
    /// Base revision: a sha, or a ref the server resolves with `git rev-parse` for a local path.
    pub base: String,
    /// Head revision, like `base`.
    pub head: String,
    /// Which runners run it.
    pub runner_label: String,
    /// What to build and run; `benchmark.rounds` is the number of rounds.
    pub config: ComparisonConfig,
    /// Split the rounds into this many jobs (so several runners can share them); default 1.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub jobs: Option<u32>,
}

/// A comparison just requested.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct CreatedComparison {
    /// Its id (for `GET /api/v1/comparisons/{id}`).
    pub id: i64,
    /// The resolved base sha.
    pub base_sha: String,
    /// The resolved head sha.
    pub head_sha: String,
    /// Ids of the jobs enqueued.
    pub jobs: Vec<i64>,
    /// Rounds planned from the runner's noise floor (n*), when a floor was known.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub planned_rounds: Option<i64>,
}

/// One runner's results for a comparison, in `benchgate analyze --json`'s shape.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct RunnerReport {
    /// The runner's name.
    pub runner: String,
    /// Whether this runner's series is the comparison's headline (most complete pairs).
    pub headline: bool,
    /// Per benchmark and metric.
    pub report: AnalysisReport,
}

/// A comparison's state and results.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ComparisonStatus {
    /// Its id.
    pub id: i64,
    /// `queued`, `running`, `done`, `failed`, `superseded` or `cancelled`.
    pub state: String,
    /// The repository's name.
    pub repository: String,
    /// Base sha.
    pub base_sha: String,
    /// Head sha.
    pub head_sha: String,
    /// Runner label.
    pub runner_label: String,
    /// n* planned from the floor before any A/B data.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub planned_rounds: Option<i64>,
    /// Results per runner, headline first; samples of two runners are never pooled.
    pub runners: Vec<RunnerReport>,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn benchmark_spec_defaults_fill_a_minimal_config() {
        let spec: BenchmarkSpec = serde_json::from_str(r#"{"run":"./bench"}"#).unwrap();
        assert_eq!(spec.format, "command");
        assert_eq!(spec.schedule, ScheduleKind::Abba);
        assert_eq!((spec.rounds, spec.warmup), (10, 1));
    }

    #[test]
    fn outcome_is_tagged_by_status() {
        let json = serde_json::to_value(JobOutcome::Failed {
            reason: "build failed".into(),
            log_tail: "error[E0425]".into(),
        })
        .unwrap();
        assert_eq!(json["status"], "failed");
        let back: JobOutcome = serde_json::from_str(r#"{"status":"succeeded"}"#).unwrap();
        assert_eq!(back, JobOutcome::Succeeded { log_tail: None });
    }
}
