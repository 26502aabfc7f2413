//! Counted runs, the exact tier: each side run [`COUNTED_RUNS`] times under an instruction
//! counter, apart from the timed rounds (a counted run is never timed), in ABBA order, and a
//! benchmark whose counts differed up to [`MAX_COUNTED_RUNS`] times. Each counted run k
//! becomes a [`Round`] with index k holding only the count rows, so a count that differs
//! between the runs of one side shows as spread and the row is read as a timing.

#[cfg(doc)]
use benchgate_api::counts::MAX_COUNTED_RUNS;
use benchgate_api::counts::{BENCHMARK_PLACEHOLDER, COUNTED_RUNS, INSTRUCTIONS};
use benchgate_api::{Measurement, Side};

use crate::command::BenchCommand;
use crate::counter::Counter;
use crate::process::run_process;
use crate::rounds::{
    MeasurementError, NoSandboxDir, Round, RoundRunner, benchmarks_filter, with_benchmarks,
    with_measure,
};

/// How far a counted run may take beyond a timed run's timeout: Valgrind runs 20–50× slower.
const VALGRIND_SLOWDOWN: u32 = 50;

/// What a session counts and how.
#[derive(Debug, Clone)]
pub struct CountPlan {
    pub counter: Counter,
    /// `count_run`: the shell line that runs one benchmark (`{benchmark}`, or `{benchmarks}` as
    /// its anchored regular expression) a fixed number of times; `None`: the run command is
    /// counted whole as the benchmark `command`.
    pub count_run: Option<String>,
}

impl RoundRunner {
    /// Counts each side [`COUNTED_RUNS`] times: the run command whole, or with a
    /// [`CountPlan::count_run`] each of `benchmarks` in a process of its own. A benchmark whose
    /// counts differed between runs of a side is counted again, up to `max_runs` a side, so
    /// its row has the pairs a timing needs. The rounds come back with indexes 0, 1, … and the
    /// count rows only.
    pub fn count_runs(
        &self,
        plan: &CountPlan,
        benchmarks: &[String],
        max_runs: u32,
    ) -> Result<Vec<Round>, MeasurementError> {
        let format = self.config().format;
        let jobs: Vec<(String, [BenchCommand; 2])> = match &plan.count_run {
            None => vec![(
                crate::rounds::COMMAND_BENCHMARK.to_owned(),
                [Side::Base, Side::Head].map(|side| {
                    with_measure(
                        &with_benchmarks(self.side_command(side), &benchmarks_filter(None)),
                        self.config().measure_secs,
                    )
                }),
            )],
            Some(line) => benchmarks
                .iter()
                .map(|name| {
                    let [b, h] = [Side::Base, Side::Head].map(|side| {
                        one_benchmark(line, self.side_command(side), name, format, self.config())
                    });
                    Ok((name.clone(), [b?, h?]))
                })
                .collect::<Result<_, MeasurementError>>()?,
        };
        let mut rounds: Vec<Round> = Vec::new();
        let mut pending: Vec<usize> = (0..jobs.len()).collect();
        for k in 0..u64::from(max_runs.max(COUNTED_RUNS)) {
            if k >= u64::from(COUNTED_RUNS) {
                // Only the benchmarks whose counts differed on a side are counted again.
                pending.retain(|&j| !agrees(&rounds, &jobs[j].0));
                if pending.is_empty() {
                    break;
                }
            }
            let order = if k % 2 == 0 {
                [Side::Base, Side::Head]
            } else {
                [Side::Head, Side::Base]
            };
            let (mut base, mut head) = (Vec::new(), Vec::new());
            for side in order {
                for &j in &pending {
                    let (name, commands) = &jobs[j];
                    let command = &commands[usize::from(side == Side::Head)];
                    let count = self.count_one(plan.counter, side, command)?;
                    let row = Measurement::new(
                        name.clone(),
                        INSTRUCTIONS,
                        crate::formats::unit::COUNT,
                        count as f64,
                    );
                    match side {
                        Side::Base => base.push(row),
                        Side::Head => head.push(row),
                    }
                }
            }
            rounds.push(Round {
                index: k,
                order,
                base,
                head,
                load_wait: None,
            });
        }
        Ok(rounds)
    }

    /// One counted process of `side`: perf wraps the sandbox from outside (the CPU counts the
    /// children it starts); Valgrind runs inside it, writing its counts where the side may
    /// write, and reads back only their summaries.
    fn count_one(
        &self,
        counter: Counter,
        side: Side,
        command: &BenchCommand,
    ) -> Result<u64, MeasurementError> {
        let name = side.as_str();
        let display = command.display();
        let config = self.config();
        let unsandboxable = |NoSandboxDir| MeasurementError::Unsandboxable { side: name };
        let scratch_error = |e: std::io::Error| MeasurementError::Count {
            side: name,
            command: display.clone(),
            why: format!("cannot make a directory for the count: {e}"),
        };
        let (argv, counted) = match counter {
            Counter::Perf => {
                let argv = config.sandboxed_argv(command).map_err(unsandboxable)?;
                let counted = counter
                    .wrap(&argv, &std::env::temp_dir())
                    .map_err(scratch_error)?;
                (counted.argv.clone(), counted)
            }
            Counter::Valgrind => {
                let scratch = match (&config.sandbox, &command.cwd) {
                    (Some(_), Some(dir)) => dir.clone(),
                    _ => std::env::temp_dir(),
                };
                let counted = counter
                    .wrap(&command.argv, &scratch)
                    .map_err(scratch_error)?;
                let wrapped = BenchCommand {
                    argv: counted.argv.clone(),
                    ..command.clone()
                };
                (
                    config.sandboxed_argv(&wrapped).map_err(unsandboxable)?,
                    counted,
                )
            }
        };
        let mut spec = config.run_spec(command, argv);
        spec.capture_stdout = false;
        if counter == Counter::Valgrind {
            spec.timeout = spec.timeout.map(|t| t * VALGRIND_SLOWDOWN);
        }
        let run = run_process(&spec).map_err(|source| MeasurementError::Run {
            side: name,
            command: display.clone(),
            source,
        })?;
        let shown = format!("{display} (counted by {})", counter.name());
        if let Some(failed) = MeasurementError::failed(name, &shown, &run) {
            // The files go either way; the count of a failed run means nothing.
            let _ = counted.count();
            return Err(failed);
        }
        counted.count().map_err(|why| MeasurementError::Count {
            side: name,
            command: display,
            why,
        })
    }
}

/// Whether every counted run of `name` so far gave one count on each side.
fn agrees(rounds: &[Round], name: &str) -> bool {
    let one = |side: fn(&Round) -> &Vec<Measurement>| {
        let mut values = rounds
            .iter()
            .flat_map(side)
            .filter(|m| m.benchmark == name)
            .map(|m| m.value);
        let first = values.next();
        values.all(|v| Some(v) == first)
    };
    one(|r| &r.base) && one(|r| &r.head)
}

/// `count_run` for one benchmark of one side: in the side's directory with its environment,
/// the name shell-quoted where `{benchmark}` stands (divan's `::` path for divan) and its
/// anchored regular expression where `{benchmarks}` does (names come from the benchmark's own
/// output and never reach the shell as code).
fn one_benchmark(
    line: &str,
    side: &BenchCommand,
    name: &str,
    format: crate::formats::Format,
    config: &crate::rounds::RunnerConfig,
) -> Result<BenchCommand, MeasurementError> {
    // divan names a benchmark by its module path (`tr_bench::benches::x`), which benchgate
    // reads from its tree as `tr_bench/benches/x`; its `--exact` wants the path.
    let path = match format {
        crate::formats::Format::Divan => name.replace('/', "::"),
        _ => name.to_owned(),
    };
    let measure_secs = config.measure_secs;
    let quoted = shlex::try_quote(&path).map_err(|_| MeasurementError::Count {
        side: "both",
        command: line.to_owned(),
        why: format!("the benchmark name {name:?} cannot be quoted for the shell"),
    })?;
    let line = line.replace(BENCHMARK_PLACEHOLDER, &quoted);
    let command = BenchCommand::shell(&line).map_err(|e| MeasurementError::Count {
        side: "both",
        command: line.clone(),
        why: e.to_string(),
    })?;
    let command = BenchCommand {
        cwd: side.cwd.clone(),
        env: side.env.clone(),
        ..command
    };
    Ok(with_measure(
        &with_benchmarks(&command, &benchmarks_filter(Some(&[name.to_owned()]))),
        measure_secs,
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_benchmark_name_reaches_count_run_quoted_and_as_divan_writes_its_path() {
        let side = BenchCommand::shell("./bench").unwrap().in_dir("/tmp");
        let config = crate::rounds::RunnerConfig::default();
        let divan = one_benchmark(
            "./b --exact {benchmark}",
            &side,
            "tr_bench/benches/x",
            crate::formats::Format::Divan,
            &config,
        )
        .unwrap();
        assert_eq!(divan.argv[2], "./b --exact tr_bench::benches::x");
        assert_eq!(divan.cwd.as_deref(), Some(std::path::Path::new("/tmp")));
        let hostile = one_benchmark(
            "go test -bench {benchmarks} -run x{benchmark}",
            &side,
            "a'; rm -rf ~; echo '",
            crate::formats::Format::Go,
            &config,
        )
        .unwrap();
        let words = shlex::split(&hostile.argv[2]).unwrap();
        let name = "a'; rm -rf ~; echo '".to_owned();
        assert_eq!(
            words[3],
            benchmarks_filter(Some(std::slice::from_ref(&name)))
        );
        assert_eq!(
            words[5],
            format!("x{name}"),
            "the name stays one word: {words:?}"
        );
        assert_eq!(words.len(), 6, "{words:?}");
    }
}
