//! Rounds: each runs the base and the head command once, in the order the schedule gives, and
//! yields both sides' measurements. Warm-up rounds run the same way and are discarded.

use std::time::Duration;

use benchgate_api::{Measurement, Side};
use serde::{Deserialize, Serialize};

use crate::command::BenchCommand;
use crate::env::ScrubbedEnv;
use crate::formats::{self, Format, ParseError};
use crate::process::{Exit, ProcessMeasurement, RunError, RunSpec, run_process};
use crate::quieting::{LoadWait, Quieting, wait_for_load};
use crate::sandbox::Sandbox;
use crate::schedule::{RoundOrders, Schedule};

/// Benchmark name of the `command` format's samples: the whole process is the benchmark.
pub const COMMAND_BENCHMARK: &str = "command";
/// Metric name of instruction counts.
pub const INSTRUCTIONS: &str = benchgate_api::counts::INSTRUCTIONS;

/// How every run of a session is made.
#[derive(Debug, Clone)]
pub struct RunnerConfig {
    /// How samples come out of a run: `command` measures the process, others parse stdout.
    pub format: Format,
    pub env: ScrubbedEnv,
    pub timeout: Option<Duration>,
    pub quieting: Quieting,
    /// How long to wait for the load limit before a round starts anyway.
    pub load_wait_deadline: Duration,
    /// Run each side in a bubblewrap sandbox whose writable directory is the side's `cwd`;
    /// `None`: unsandboxed. Wall time and peak RSS then include bwrap, equally on both sides.
    pub sandbox: Option<Sandbox>,
    /// Resource limits of each run and what it starts; `None`: unlimited.
    pub containment: Option<crate::limits::Containment>,
    /// Seconds each run measures a benchmark for, where the command holds `{measure_secs}`.
    pub measure_secs: Option<f64>,
}

impl Default for RunnerConfig {
    fn default() -> Self {
        RunnerConfig {
            format: Format::Command,
            env: ScrubbedEnv::from_parent(&[]).unwrap_or_default(),
            timeout: Some(Duration::from_secs(600)),
            quieting: Quieting::default(),
            load_wait_deadline: Duration::from_secs(60),
            sandbox: None,
            containment: None,
            measure_secs: None,
        }
    }
}

/// A sandbox needs the side's directory: it is the only one the side may write.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
#[error("the command has no working directory to sandbox it in")]
pub struct NoSandboxDir;

impl RunnerConfig {
    /// `command`'s argv as this session runs it: inside the sandbox when there is one. A tool
    /// that must see the host (perf) wraps this argv from outside.
    pub fn sandboxed_argv(&self, command: &BenchCommand) -> Result<Vec<String>, NoSandboxDir> {
        self.sandboxed(command, false)
    }

    /// [`RunnerConfig::sandboxed_argv`]; `count_leftovers` puts the sandbox's counting pid 1 in
    /// front ([`crate::sandbox::Sandbox::run_argv`]). Warm-up runs only: its wake-up after the
    /// command sits between the command's end and the clock's stop, and under load that
    /// scheduling delay widened measured intervals of short commands many times over.
    fn sandboxed(
        &self,
        command: &BenchCommand,
        count_leftovers: bool,
    ) -> Result<Vec<String>, NoSandboxDir> {
        match (&self.sandbox, &command.cwd) {
            (Some(sandbox), Some(dir)) if count_leftovers => {
                Ok(sandbox.run_argv(dir, &command.argv))
            }
            (Some(sandbox), Some(dir)) => Ok(sandbox.argv(dir, &command.argv)),
            (Some(_), None) => Err(NoSandboxDir),
            (None, _) => Ok(command.argv.clone()),
        }
    }

    /// How `argv` (a side's [`RunnerConfig::sandboxed_argv`], perhaps wrapped) is started: in
    /// `command`'s directory, with the session's environment, timeout and quieting, stdout
    /// piped only when the format reads it.
    pub fn run_spec(&self, command: &BenchCommand, argv: Vec<String>) -> RunSpec {
        let mut env = self.env.clone();
        for (name, value) in &command.env {
            env.set(name, value.clone());
        }
        RunSpec {
            argv,
            cwd: command.cwd.clone(),
            env,
            timeout: self.timeout,
            capture_stdout: reads_stdout(self.format),
            cpus: self.quieting.cpus.clone(),
            disable_aslr: self.quieting.disable_aslr,
            containment: self.containment.clone(),
            ..RunSpec::new(Vec::new())
        }
    }
}

/// Both sides' measurements of one round.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Round {
    /// 0 for the first measured round (warm-ups are not counted).
    pub index: u64,
    pub order: [Side; 2],
    pub base: Vec<Measurement>,
    pub head: Vec<Measurement>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub load_wait: Option<LoadWait>,
}

impl Round {
    /// Whether base ran first.
    pub fn base_first(&self) -> bool {
        self.order[0] == Side::Base
    }
}

/// A run that produced no sample. The session stops: a failing or unparsable command measures
/// nothing, and averaging around it would hide that.
#[derive(Debug, thiserror::Error)]
pub enum MeasurementError {
    /// A sandbox needs the side's directory: it is the only one the side may write.
    #[error("{side} command has no working directory to sandbox it in")]
    Unsandboxable { side: &'static str },
    #[error("{side} command `{command}`: {source}")]
    Run {
        side: &'static str,
        command: String,
        source: RunError,
    },
    #[error(
        "{side} command `{command}` failed ({exit}{contained}); last lines of its stderr:\n{stderr_tail}"
    )]
    Failed {
        side: &'static str,
        command: String,
        exit: Exit,
        /// `: stopped at the memory limit (…)` when a resource limit stopped it.
        contained: String,
        stderr_tail: String,
    },
    #[error("{side} command `{command}`: {}: {source}{truncated}", reading(*format))]
    Parse {
        side: &'static str,
        command: String,
        format: Format,
        source: ParseError,
        truncated: &'static str,
    },
    #[error("{side} command `{command}` printed no benchmark results in format {format}")]
    NoResults {
        side: &'static str,
        command: String,
        format: Format,
    },
    /// A counted run ran but its count could not be read.
    #[error("{side} counted run `{command}`: {why}")]
    Count {
        side: &'static str,
        command: String,
        why: String,
    },
}

impl MeasurementError {
    /// `Failed` when `run` exited unsuccessfully or a resource limit stopped it.
    pub(crate) fn failed(
        side: &'static str,
        command: &str,
        run: &ProcessMeasurement,
    ) -> Option<Self> {
        (!run.exit.success() || run.contained.is_some()).then(|| MeasurementError::Failed {
            side,
            command: command.to_owned(),
            exit: run.exit,
            contained: run
                .contained
                .as_ref()
                .map(|why| format!(": {why}"))
                .unwrap_or_default(),
            stderr_tail: run.stderr.tail_lines(20),
        })
    }
}

/// What a parse error interrupted: reading the named format, or recognising one.
fn reading(format: Format) -> String {
    match format {
        Format::Auto => "cannot recognise its output".to_owned(),
        f => format!("cannot read its output as {f}"),
    }
}

/// The placeholder a run command may hold for the benchmarks a round runs: a regular
/// expression, `.` (all of them) until some are decided, then `^(a|b)$` of the undecided ones.
/// Criterion, Go's `-bench`, Google Benchmark's `--benchmark_filter`, libtest's and divan's
/// filters take it where their names are the ones benchgate reads.
pub const BENCHMARKS_PLACEHOLDER: &str = "{benchmarks}";

/// The regular expression `{benchmarks}` stands for: every benchmark (`None`), or exactly these.
pub fn benchmarks_filter(names: Option<&[String]>) -> String {
    match names {
        None => ".".to_owned(),
        Some(names) => {
            let escaped: Vec<String> = names.iter().map(|n| regex::escape(n)).collect();
            // A plain group: POSIX ERE, RE2, std::regex and Rust's regex all read it.
            format!("^({})$", escaped.join("|"))
        }
    }
}

/// `command` with [`BENCHMARKS_PLACEHOLDER`] replaced by `filter`: shell-quoted inside a
/// `sh -c` line (names come from the benchmark's own output and must never reach the shell as
/// code), as one word elsewhere.
pub fn with_benchmarks(command: &BenchCommand, filter: &str) -> BenchCommand {
    let shell = command.argv.len() == 3 && command.argv[0] == "sh" && command.argv[1] == "-c";
    let mut out = command.clone();
    for (i, word) in out.argv.iter_mut().enumerate() {
        if !word.contains(BENCHMARKS_PLACEHOLDER) {
            continue;
        }
        let value = if shell && i == 2 {
            shlex::try_quote(filter).map_or_else(|_| "'.'".to_owned(), |q| q.into_owned())
        } else {
            filter.to_owned()
        };
        *word = word.replace(BENCHMARKS_PLACEHOLDER, &value);
    }
    out
}

/// `command` with `{measure_secs}` replaced by `secs` (a plain number, safe in a shell line).
pub fn with_measure(command: &BenchCommand, secs: Option<f64>) -> BenchCommand {
    use benchgate_api::agent::{MEASURE_PLACEHOLDER, measure_text};
    let Some(secs) = secs else {
        return command.clone();
    };
    let mut out = command.clone();
    for word in &mut out.argv {
        *word = word.replace(MEASURE_PLACEHOLDER, &measure_text(secs));
    }
    out
}

/// Runs base and head in rounds.
#[derive(Debug)]
pub struct RoundRunner {
    base: BenchCommand,
    head: BenchCommand,
    config: RunnerConfig,
    orders: RoundOrders,
    next_index: u64,
    /// What `{benchmarks}` stands for in the next runs.
    filter: String,
}

impl RoundRunner {
    /// A runner whose measured rounds follow `schedule` from round 0.
    pub fn new(
        base: BenchCommand,
        head: BenchCommand,
        config: RunnerConfig,
        schedule: Schedule,
    ) -> Self {
        RoundRunner {
            base,
            head,
            config,
            orders: schedule.orders(),
            next_index: 0,
            filter: benchmarks_filter(None),
        }
    }

    /// Continues a session that already measured `rounds` rounds: the next round takes the
    /// schedule's order and index for round `rounds`.
    pub fn continue_after(&mut self, rounds: u64) {
        for _ in 0..rounds {
            self.orders.next();
        }
        self.next_index = rounds;
    }

    /// Whether the run command holds [`BENCHMARKS_PLACEHOLDER`], so rounds can be narrowed.
    pub fn can_narrow(&self) -> bool {
        self.base
            .argv
            .iter()
            .chain(&self.head.argv)
            .any(|w| w.contains(BENCHMARKS_PLACEHOLDER))
    }

    /// From the next round on, run only `names` (`None`: every benchmark). Returns the new
    /// `{benchmarks}` filter when it differs from the last round's.
    pub fn run_only(&mut self, names: Option<&[String]>) -> Option<&str> {
        let filter = benchmarks_filter(names);
        if filter == self.filter {
            return None;
        }
        self.filter = filter;
        Some(&self.filter)
    }

    /// Runs `rounds` warm-up rounds (ABBA order) and discards what they measured.
    pub fn warm_up(&mut self, rounds: u32) -> Result<(), MeasurementError> {
        for k in Schedule::Abba.orders().take(rounds as usize) {
            for side in k {
                self.run_side(side, true)?;
            }
        }
        Ok(())
    }

    /// Runs the next measured round.
    pub fn run_round(&mut self) -> Result<Round, MeasurementError> {
        let load_wait = self
            .config
            .quieting
            .max_load
            .map(|limit| wait_for_load(limit, self.config.load_wait_deadline));
        let order = self.orders.next().expect("round orders never end");
        let (mut base, mut head) = (Vec::new(), Vec::new());
        for side in order {
            let measured = self.run_side(side, false)?;
            match side {
                Side::Base => base = measured,
                Side::Head => head = measured,
            }
        }
        let index = self.next_index;
        self.next_index += 1;
        Ok(Round {
            index,
            order,
            base,
            head,
            load_wait,
        })
    }

    /// The command `side` runs, as configured (placeholders not yet filled).
    pub(crate) fn side_command(&self, side: Side) -> &BenchCommand {
        match side {
            Side::Base => &self.base,
            Side::Head => &self.head,
        }
    }

    /// The session's settings.
    pub(crate) fn config(&self) -> &RunnerConfig {
        &self.config
    }

    /// One run of `side`; a warm-up run (`warm`) also says what the command left running.
    fn run_side(&self, side: Side, warm: bool) -> Result<Vec<Measurement>, MeasurementError> {
        let command = &with_measure(
            &with_benchmarks(self.side_command(side), &self.filter),
            self.config.measure_secs,
        );
        let name = side.as_str();
        let display = command.display();
        let argv = self
            .config
            .sandboxed(command, warm)
            .map_err(|NoSandboxDir| MeasurementError::Unsandboxable { side: name })?;
        let spec = self.config.run_spec(command, argv);
        let run = run_process(&spec).map_err(|source| MeasurementError::Run {
            side: name,
            command: display.clone(),
            source,
        })?;
        if let Some(failed) = MeasurementError::failed(name, &display, &run) {
            return Err(failed);
        }
        let measurements =
            extract(self.config.format, &run).map_err(|source| MeasurementError::Parse {
                side: name,
                command: display.clone(),
                format: self.config.format,
                source,
                truncated: if run.stdout.truncated() {
                    " (its output passed the capture cap and was cut)"
                } else {
                    ""
                },
            })?;
        if measurements.is_empty() {
            return Err(MeasurementError::NoResults {
                side: name,
                command: display,
                format: self.config.format,
            });
        }
        Ok(measurements)
    }
}

/// Whether samples of `format` come from the run's stdout; `command` measures the process alone,
/// so its stdout is not even piped.
pub fn reads_stdout(format: Format) -> bool {
    format != Format::Command
}

/// The measurements of one successful run: the process itself for `command`, else its stdout.
pub fn extract(format: Format, run: &ProcessMeasurement) -> Result<Vec<Measurement>, ParseError> {
    if reads_stdout(format) {
        let parsed = formats::parse_report(format, &run.stdout.text())?;
        // What the parser skipped (a failed benchmark) lands in the job log, named.
        for warning in &parsed.warnings {
            tracing::warn!(format = %parsed.format, "{warning}");
        }
        return Ok(parsed.measurements);
    }
    use formats::command::*;
    let sample = |metric: &str, unit: &str, value: f64| Measurement {
        benchmark: COMMAND_BENCHMARK.into(),
        metric: metric.into(),
        unit: unit.into(),
        value,
        lower: None,
        upper: None,
        direction: Default::default(),
        run: None,
    };
    Ok(vec![
        sample(WALL_TIME, WALL_TIME_UNIT, run.wall.as_nanos() as f64),
        sample(
            CPU_TIME,
            CPU_TIME_UNIT,
            (run.user_cpu + run.sys_cpu).as_nanos() as f64,
        ),
        sample(PEAK_RSS, PEAK_RSS_UNIT, run.peak_rss_bytes as f64),
    ])
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_benchmarks_placeholder_is_a_regex_quoted_for_the_shell() {
        assert_eq!(benchmarks_filter(None), ".");
        let names = ["req/req".to_owned(), "uri/(weird)".to_owned()];
        let filter = benchmarks_filter(Some(&names));
        assert_eq!(filter, r"^(req/req|uri/\(weird\))$");
        let line = BenchCommand::shell("cargo bench --bench parse -- {benchmarks}").unwrap();
        let narrowed = with_benchmarks(&line, &filter);
        let words = shlex::split(&narrowed.argv[2]).unwrap();
        assert_eq!(
            words,
            ["cargo", "bench", "--bench", "parse", "--", filter.as_str()]
        );
        // A hostile name stays one word: the shell never runs it.
        let hostile = benchmarks_filter(Some(&["x'; rm -rf ~; echo '".to_owned()]));
        let narrowed = with_benchmarks(&line, &hostile);
        let words = shlex::split(&narrowed.argv[2]).unwrap();
        assert_eq!(words.last().unwrap(), &hostile, "{}", narrowed.argv[2]);
        let argv = BenchCommand::from_words("./bench --benchmark_filter={benchmarks}").unwrap();
        assert_eq!(
            with_benchmarks(&argv, ".").argv,
            ["./bench", "--benchmark_filter=."]
        );
    }

    #[test]
    fn the_measure_placeholder_takes_seconds_as_a_plain_number() {
        let line = BenchCommand::shell(
            "cargo bench -- --measurement-time {measure_secs} --warm-up-time {measure_secs}",
        )
        .unwrap();
        let set = with_measure(&line, Some(0.25));
        assert_eq!(
            set.argv[2],
            "cargo bench -- --measurement-time 0.25 --warm-up-time 0.25"
        );
        let go = BenchCommand::from_words("go test -bench . -benchtime {measure_secs}s").unwrap();
        assert_eq!(with_measure(&go, Some(2.0)).argv.last().unwrap(), "2s");
        assert_eq!(with_measure(&go, None), go, "nothing set: left as written");
    }
}
