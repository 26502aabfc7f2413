//! `.benchgate.toml`, read from the base branch: which suites to build and run, on which
//! runners, with which per-benchmark rules, and when the check fails. Pure: the file's text in,
//! a validated [`RepoConfig`] or an error that names the line, column, field and valid choices
//! out (the server quotes it in the PR; `benchgate config check` prints it).

mod counts;
mod describe;
mod merge_queue;
mod plan;
mod values;

use serde::Deserialize;

pub use describe::{check_run_name, comment_key};
pub use merge_queue::{DEADLINE_MINUTES, Deadline, MergeQueueConfig};
pub use plan::local_plan;
pub use values::{Labels, NameGlob, NonEmpty, PathGlobs, Percent, Rounds, SuiteName};

/// The file's name at the repository root.
pub const FILE_NAME: &str = ".benchgate.toml";

/// Allowed `rounds` per comparison.
pub const ROUNDS: std::ops::RangeInclusive<u32> = 2..=200;

/// The name of the suite a lone `[benchmark]` defines.
pub const DEFAULT_SUITE: &str = "default";

/// The whole file, resolved: `[benchmark]` becomes one suite named [`DEFAULT_SUITE`].
#[derive(Debug, Clone, PartialEq)]
pub struct RepoConfig {
    /// The suites in file order; never empty, names unique.
    pub suites: Vec<SuiteConfig>,
    /// `[gate]`: when the check run fails, unless a rule says otherwise.
    pub gate: GateConfig,
    /// The file wrote `[benchmark]` rather than `[[suite]]`.
    pub single_benchmark: bool,
    /// `[main]`: the default branch's history.
    pub main: MainConfig,
    /// `[merge_queue]`: the check of a GitHub merge group.
    pub merge_queue: MergeQueueConfig,
}

impl RepoConfig {
    /// Every (suite, runner label): each is one comparison, one PR comment and one check run.
    pub fn comparisons(&self) -> impl Iterator<Item = (&SuiteConfig, &str)> {
        self.suites
            .iter()
            .flat_map(|s| s.runner.iter().map(move |label| (s, label)))
    }

    /// A lone `[benchmark]` on one label: its check run keeps the plain name `benchgate`.
    pub fn is_single_comparison(&self) -> bool {
        self.single_benchmark && self.comparisons().count() == 1
    }
}

/// The file as written.
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct File {
    #[serde(default)]
    benchmark: Option<SuiteConfig>,
    #[serde(default)]
    suite: Vec<SuiteConfig>,
    #[serde(default)]
    gate: GateConfig,
    #[serde(default)]
    main: MainConfig,
    #[serde(default)]
    merge_queue: MergeQueueConfig,
}

/// `[main]`: every push to the default branch compared with the commit before it, creep
/// found by anchor comparisons, regressions raised as issues (off unless asked for).
#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct MainConfig {
    #[serde(default = "yes")]
    pub enabled: bool,
    /// `"30d"` (the newest compared commit at least 30 days old) or `"20 commits"`.
    #[serde(default = "default_anchor")]
    pub anchor: AnchorValue,
    /// How often the anchor comparison runs: `"24h"`, `"7d"`, or `"off"` (on demand only).
    #[serde(default = "default_schedule")]
    pub schedule: ScheduleValue,
    /// Open one issue per regression found on the branch (on GitLab also labelled `benchgate`).
    #[serde(default)]
    pub issues: bool,
    #[serde(default)]
    pub issue_labels: Vec<NonEmpty>,
    /// Search a regression's range of commits (a folded burst, a creep) for the one that did
    /// it, by interleaved probes.
    #[serde(default = "yes")]
    pub bisect: bool,
}

impl Default for MainConfig {
    fn default() -> Self {
        MainConfig {
            enabled: true,
            anchor: default_anchor(),
            schedule: default_schedule(),
            issues: false,
            issue_labels: Vec::new(),
            bisect: true,
        }
    }
}

impl MainConfig {
    /// The settings as a comparison stores them.
    pub fn to_wire(&self) -> benchgate_api::agent::MainSettings {
        benchgate_api::agent::MainSettings {
            enabled: self.enabled,
            anchor: self.anchor.0,
            schedule_hours: self.schedule.0,
            issues: self.issues,
            issue_labels: self
                .issue_labels
                .iter()
                .map(|l| l.as_str().to_owned())
                .collect(),
            bisect: self.bisect,
        }
    }
}

/// `[main] anchor`, checked when the file is read.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize)]
#[serde(try_from = "String")]
pub struct AnchorValue(pub benchgate_api::agent::Anchor);

impl TryFrom<String> for AnchorValue {
    type Error = String;
    fn try_from(s: String) -> Result<Self, String> {
        s.parse().map(AnchorValue)
    }
}

/// `[main] schedule` in hours; `None` for `"off"`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize)]
#[serde(try_from = "String")]
pub struct ScheduleValue(pub Option<u32>);

impl TryFrom<String> for ScheduleValue {
    type Error = String;
    fn try_from(s: String) -> Result<Self, String> {
        let t = s.trim();
        if t == "off" {
            return Ok(ScheduleValue(None));
        }
        let hours = t
            .strip_suffix('h')
            .and_then(|n| n.parse::<u32>().ok())
            .or_else(|| {
                t.strip_suffix('d')
                    .and_then(|n| n.parse::<u32>().ok()?.checked_mul(24))
            });
        match hours {
            Some(h) if h > 0 => Ok(ScheduleValue(Some(h))),
            _ => Err(format!(
                "`{t}` is not a schedule: write hours (\"24h\"), days (\"7d\") or \"off\""
            )),
        }
    }
}

fn default_anchor() -> AnchorValue {
    AnchorValue(benchgate_api::agent::Anchor::Days(30))
}
fn default_schedule() -> ScheduleValue {
    ScheduleValue(Some(24))
}

/// One suite: `[[suite]]`, or the lone `[benchmark]`.
#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct SuiteConfig {
    /// Unique among the suites; shown in check-run names and comment headings.
    #[serde(default)]
    pub name: Option<SuiteName>,
    /// Build command, run once per side before the rounds; none means nothing to build.
    #[serde(default)]
    pub build: Option<String>,
    /// The benchmark command; each round runs it once per side.
    pub run: NonEmpty,
    /// How to read the command's output.
    #[serde(default)]
    pub format: BenchFormat,
    /// Rounds per comparison (each round = one base run and one head run).
    #[serde(default = "default_rounds")]
    pub rounds: Rounds,
    /// Leading rounds discarded as warm-up.
    #[serde(default = "default_warmup")]
    pub warmup: u32,
    /// The runner label(s) jobs go to; one comparison per label.
    #[serde(default)]
    pub runner: Labels,
    /// Globs of files that define the benchmarks; a PR touching them measures different work.
    #[serde(default)]
    pub paths: PathGlobs,
    /// Globs of benchmark files taken from head on both sides: a benchmark the PR adds runs
    /// against the base's code too. Their changes then no longer differ between the sides.
    #[serde(default)]
    pub bench_from_head: PathGlobs,
    /// Globs of files no benchmark depends on (docs, CI config, changelogs): a PR whose
    /// changed files all match passes at once, with no runner time.
    #[serde(default)]
    pub ignore: PathGlobs,
    /// Globs of the build's outputs, relative to a side's work tree (`target/release/deps/
    /// bench-*`): when both sides' files are byte-identical, nothing that runs differs and the
    /// comparison concludes "identical build" without a round. Needs a reproducible build.
    #[serde(default)]
    pub artifacts: PathGlobs,
    /// How long each run measures a benchmark (`"0.5s"`, or `"auto"`: per runner, from its
    /// A/A sessions), put where the run command holds `{measure_secs}`; the two go together.
    /// `compare` says what length would answer soonest.
    #[serde(default)]
    pub measure: Option<values::RunLength>,
    /// The most time a job measures (`"10m"`); then the check concludes with what is known.
    /// Unset: `rounds` alone bounds it.
    #[serde(default)]
    pub budget: Option<values::Budget>,
    /// The runs need the network (a local database, a service): without it a sandboxed run has
    /// loopback only. Builds keep the network either way.
    #[serde(default)]
    pub network: bool,
    /// How a layout calibration salts two builds of one commit so they differ only in code
    /// layout (`RUSTFLAGS=-Cmetadata={salt}`, or `env-padding`); unset: no layout floor.
    #[serde(default)]
    pub layout_salt: Option<values::LayoutSalt>,
    /// The suite reads `BENCHGATE_PLANTED` (a factor of work, e.g. 1.05) and does that much
    /// more: planted canaries then plant real work instead of scaling head's values.
    #[serde(default)]
    pub canary_work: bool,
    /// `"instructions"`: each side also counted twice, apart from the timed rounds.
    #[serde(default)]
    pub counts: Option<benchgate_api::Counts>,
    /// What a counted run runs for one benchmark (`{benchmark}`), a fixed number of times.
    #[serde(default)]
    pub count_run: Option<NonEmpty>,
    /// `[[suite.rule]]`: per-benchmark rules, first match wins.
    #[serde(default)]
    pub rule: Vec<RuleConfig>,
}

impl SuiteConfig {
    /// The suite's name (`default` for a lone `[benchmark]` without one).
    pub fn name(&self) -> &str {
        self.name.as_ref().map_or(DEFAULT_SUITE, SuiteName::as_str)
    }

    /// Whether every one of `changed` matches `ignore`, so nothing the suite measures can
    /// differ. An empty change, or an empty `ignore`, is never "all ignored".
    pub fn all_ignored<'a, I>(&self, changed: I) -> bool
    where
        I: IntoIterator<Item = &'a str>,
    {
        self.ignore.cover(changed)
    }

    /// The changed files under `paths` that base and head run differently: a file the base
    /// takes from head (`bench_from_head`) is the same on both sides.
    pub fn benchmark_files_changed<'a, I>(&self, changed: I) -> Vec<String>
    where
        I: IntoIterator<Item = &'a str>,
    {
        self.paths
            .touched(changed)
            .into_iter()
            .filter(|f| !self.bench_from_head.matches(f))
            .map(str::to_owned)
            .collect()
    }
}

/// `[[suite.rule]]`: what changes for the benchmarks whose name matches `match`.
#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RuleConfig {
    /// Glob on the benchmark name; `*` also crosses `/`.
    #[serde(rename = "match")]
    pub pattern: NameGlob,
    /// The policy floor of M for these benchmarks instead of `[gate] min_effect`.
    #[serde(default)]
    pub min_effect: Option<Percent>,
    /// Which verdict fails the check for these benchmarks instead of `[gate] fail_on`.
    #[serde(default)]
    pub fail_on: Option<FailOn>,
    /// `false`: shown in the report, never fails the check.
    #[serde(default = "yes")]
    pub gate: bool,
    /// `true`: not in the report at all, listed once as ignored.
    #[serde(default)]
    pub ignore: bool,
    /// The metric that gates these benchmarks (e.g. `instructions`) instead of their time.
    #[serde(default)]
    pub metric: Option<NonEmpty>,
}

impl RuleConfig {
    /// The rule in wire form, as the comparison stores it and the gate applies it.
    pub fn to_wire(&self) -> benchgate_api::BenchmarkRule {
        benchgate_api::BenchmarkRule {
            pattern: self.pattern.as_str().to_owned(),
            min_effect: self.min_effect.map(Percent::fraction),
            fail_on: self.fail_on,
            gate: self.gate,
            ignore: self.ignore,
            metric: self.metric.as_ref().map(|m| m.as_str().to_owned()),
        }
    }

    /// The keys an ignored benchmark cannot use, since it is never analysed.
    fn set_beside_ignore(&self) -> Option<&'static str> {
        [
            (self.min_effect.is_some(), "min_effect"),
            (self.fail_on.is_some(), "fail_on"),
            (!self.gate, "gate"),
            (self.metric.is_some(), "metric"),
        ]
        .into_iter()
        .find_map(|(set, key)| set.then_some(key))
    }
}

/// The harness output formats benchgate reads: the wire enum, so the config accepts exactly the
/// names the agent's parsers know.
pub use benchgate_api::Format as BenchFormat;

/// `[gate]`.
#[derive(Debug, Clone, PartialEq, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct GateConfig {
    /// Which verdict fails the check run.
    #[serde(default)]
    pub fail_on: FailOn,
    /// The policy floor for the practical margin M.
    #[serde(default)]
    pub min_effect: Percent,
    /// The slowdown the gate tolerates: a row passes once it is shown not slower than this.
    #[serde(default)]
    pub tolerance: values::Tolerance,
    /// The tail guard: the rarest slow mode of head's runs a pass must have had the runs to
    /// see (`"1 in 20"`, `"5%"`), or `"off"`.
    #[serde(default)]
    pub rare_slow_runs: values::RareSlowRuns,
    /// What the PR description's performance claims do: `report` them (the default) or
    /// `require` each to hold (one not reproduced or opposite fails the check).
    #[serde(default)]
    pub claims: benchgate_api::agent::ClaimsMode,
    /// The check's conclusion when a comparison ends without an answer (its jobs failed, or
    /// its rounds ran out undecided): `neutral` (the default; a required check lets the PR
    /// merge) or `failure` (it blocks the merge: fail closed).
    #[serde(default)]
    pub on_no_answer: benchgate_api::agent::NoAnswerConclusion,
    /// Which tier decides the check: `time` (the default), `instructions` or `both`.
    #[serde(default)]
    pub gate_on: benchgate_api::GateOn,
}

/// When the check run fails: the wire type, so the config, the stored comparison and the gate
/// name the same choices.
pub use benchgate_api::FailOn;

fn default_rounds() -> Rounds {
    Rounds(10)
}
fn default_warmup() -> u32 {
    1
}
fn yes() -> bool {
    true
}

/// Why a `.benchgate.toml` was refused, with where; `Display` is the line the PR comment quotes.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{FILE_NAME}:{line}:{column}: {}{message}", field.as_deref().map(|f| format!("`{f}`: ")).unwrap_or_default())]
pub struct ConfigError {
    /// 1-based line.
    pub line: usize,
    /// 1-based column (in characters).
    pub column: usize,
    /// Dotted key path such as `benchmark.rounds`, when the problem is a field's value or name.
    pub field: Option<String>,
    /// What is wrong.
    pub message: String,
}

impl ConfigError {
    /// The same line for a file read under another name (`benchgate config check ci.toml`).
    pub fn in_file(&self, file: &str) -> String {
        let line = self.to_string();
        match line.strip_prefix(FILE_NAME) {
            Some(rest) => format!("{file}{rest}"),
            None => line,
        }
    }
}

/// Parses and validates a `.benchgate.toml`.
pub fn parse_repo_config(text: &str) -> Result<RepoConfig, ConfigError> {
    let de = toml::Deserializer::parse(text).map_err(|e| error_at(text, None, &e))?;
    let file: File = serde_path_to_error::deserialize(de).map_err(|e| {
        let path = e.path().to_string();
        let field = (path != ".").then_some(path);
        error_at(text, field, e.inner())
    })?;
    let refuse = |offset: usize, field: String, message: String| ConfigError {
        field: Some(field),
        message,
        ..position(text, offset)
    };
    let (suites, single_benchmark, table) = match (file.benchmark, file.suite.is_empty()) {
        (Some(_), false) => {
            return Err(refuse(
                header_offset(text, "suite", 0),
                "suite".to_owned(),
                "use either one `[benchmark]` or `[[suite]]` entries, not both".to_owned(),
            ));
        }
        (Some(benchmark), true) => (vec![benchmark], true, "benchmark"),
        (None, false) => (file.suite, false, "suite"),
        (None, true) => {
            return Err(ConfigError {
                field: None,
                message: "nothing to run: add a `[benchmark]` table or `[[suite]]` entries"
                    .to_owned(),
                ..position(text, 0)
            });
        }
    };
    let mut rules_before = 0;
    for (i, suite) in suites.iter().enumerate() {
        let at = if single_benchmark {
            table.to_owned()
        } else {
            format!("suite[{i}]")
        };
        let start = header_offset(text, table, i);
        match &suite.name {
            None if !single_benchmark => {
                return Err(refuse(
                    start,
                    at,
                    "missing field `name`: every `[[suite]]` needs a unique name".to_owned(),
                ));
            }
            Some(name) if suites[..i].iter().any(|s| s.name() == name.as_str()) => {
                return Err(refuse(
                    key_offset(text, start, "name"),
                    format!("{at}.name"),
                    format!(
                        "suite name `{}` is used twice; suite names must be unique",
                        name.as_str()
                    ),
                ));
            }
            _ => {}
        }
        if suite.warmup >= suite.rounds.get() {
            return Err(refuse(
                key_offset(text, start, "warmup"),
                format!("{at}.warmup"),
                format!(
                    "warmup ({}) must be smaller than rounds ({}), or no round would count",
                    suite.warmup,
                    suite.rounds.get()
                ),
            ));
        }
        let placeholder = suite
            .run
            .as_str()
            .contains(benchgate_api::agent::MEASURE_PLACEHOLDER);
        match (placeholder, suite.measure) {
            (true, None) => {
                return Err(refuse(
                    key_offset(text, start, "run"),
                    format!("{at}.run"),
                    "the run command holds `{measure_secs}` but `measure` is not set: add \
                     `measure = \"1s\"` (how long each run measures a benchmark)"
                        .to_owned(),
                ));
            }
            (false, Some(_)) => {
                return Err(refuse(
                    key_offset(text, start, "measure"),
                    format!("{at}.measure"),
                    "`measure` has no effect: the run command holds no `{measure_secs}` \
                     (e.g. `--measurement-time {measure_secs}` for criterion, \
                     `-benchtime {measure_secs}s` for go)"
                        .to_owned(),
                ));
            }
            (true, Some(values::RunLength::Auto)) if suite.format != BenchFormat::Criterion => {
                return Err(refuse(
                    key_offset(text, start, "measure"),
                    format!("{at}.measure"),
                    format!(
                        "`measure = \"auto\"` needs runs that report their own error at a known \
                         confidence (format = \"criterion\"), to split their spread into what the \
                         run's length shrinks and what it cannot; this suite's format is \"{}\": \
                         set a length such as `measure = \"1s\"`",
                        suite.format.as_str()
                    ),
                ));
            }
            _ => {}
        }
        if let Some((key, message)) = counts::problem(suite, file.gate.gate_on) {
            return Err(refuse(
                key_offset(text, start, key),
                format!("{at}.{key}"),
                message,
            ));
        }
        for (j, rule) in suite.rule.iter().enumerate() {
            if rule.ignore
                && let Some(key) = rule.set_beside_ignore()
            {
                let rule_start = header_offset(text, &format!("{table}.rule"), rules_before + j);
                return Err(refuse(
                    key_offset(text, rule_start, key),
                    format!("{at}.rule[{j}].{key}"),
                    format!(
                        "an ignored benchmark is never analysed, so `{key}` has no effect; \
                         remove `{key}` or `ignore`"
                    ),
                ));
            }
        }
        rules_before += suite.rule.len();
    }
    Ok(RepoConfig {
        suites,
        gate: file.gate,
        single_benchmark,
        main: file.main,
        merge_queue: file.merge_queue,
    })
}

fn error_at(text: &str, field: Option<String>, e: &toml::de::Error) -> ConfigError {
    ConfigError {
        field,
        message: e.message().trim().to_owned(),
        ..position(text, e.span().map_or(0, |s| s.start))
    }
}

/// Where the `n`-th (0-based) `[[table]]` or `[table]` header starts; 0 when not found.
fn header_offset(text: &str, table: &str, n: usize) -> usize {
    let mut offset = 0;
    let mut seen = 0;
    for line in text.split_inclusive('\n') {
        let code = line.split('#').next().unwrap_or_default();
        let squeezed: String = code.chars().filter(|c| !c.is_whitespace()).collect();
        if squeezed == format!("[[{table}]]") || squeezed == format!("[{table}]") {
            if seen == n {
                return offset + (line.len() - line.trim_start().len());
            }
            seen += 1;
        }
        offset += line.len();
    }
    0
}

/// Where `key = ...` starts at or after `from` (for checks that span two fields); `from` when
/// not found.
fn key_offset(text: &str, from: usize, key: &str) -> usize {
    let mut offset = from;
    for line in text[from.min(text.len())..].split_inclusive('\n') {
        let trimmed = line.trim_start();
        if let Some(rest) = trimmed.strip_prefix(key)
            && rest.trim_start().starts_with('=')
        {
            return offset + (line.len() - trimmed.len());
        }
        offset += line.len();
    }
    from
}

/// Line and column of a byte offset (both 1-based), with no field or message yet.
fn position(text: &str, offset: usize) -> ConfigError {
    let before = &text[..offset.min(text.len())];
    let line_start = before.rfind('\n').map_or(0, |i| i + 1);
    ConfigError {
        line: before.matches('\n').count() + 1,
        column: before[line_start..].chars().count() + 1,
        field: None,
        message: String::new(),
    }
}

#[cfg(test)]
mod tests;
