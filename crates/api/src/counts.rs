//! The exact tier in wire form: which count each side's runs are counted in (`[benchmark]
//! counts`), how a harness's benchmark is run a fixed number of times for it (`count_run`),
//! and which tier gates (`[gate] gate_on`).

use serde::{Deserialize, Serialize};

/// Metric name of a counted run's instructions.
pub const INSTRUCTIONS: &str = "instructions";

/// Counted runs per side: two, so a count that differs between runs of one side is seen and
/// the row read as a timing instead of an exact count.
pub const COUNTED_RUNS: u32 = 2;

/// Counted runs per side at most, for a benchmark whose counts differed in the first two: as a
/// timing its interval needs several pairs (the anytime sequence is the whole line below six
/// at the default tuning), and a count that wobbles by a few instructions in a billion then
/// still answers.
pub const MAX_COUNTED_RUNS: u32 = 6;

/// What `count_run` holds where one benchmark's name goes: each benchmark is counted in its
/// own process, which runs only it, a fixed number of times.
pub const BENCHMARK_PLACEHOLDER: &str = "{benchmark}";

/// `[benchmark] counts`: what each side's counted runs count.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Counts {
    /// Instructions retired in user space: `perf stat -e instructions:u` where the runner has
    /// a PMU, Valgrind's cachegrind (instructions only) where it does not.
    Instructions,
}

impl Counts {
    /// The metric its rows carry.
    pub fn metric(self) -> &'static str {
        match self {
            Counts::Instructions => INSTRUCTIONS,
        }
    }
}

impl std::str::FromStr for Counts {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, String> {
        match s.trim() {
            "instructions" => Ok(Counts::Instructions),
            other => Err(format!(
                "`{other}` is not a count benchgate takes: write \"instructions\""
            )),
        }
    }
}

/// `[gate] gate_on`: which tier's rows decide the check.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum GateOn {
    /// Wall time (or the benchmark's own time metric); counts are shown beside it.
    #[default]
    Time,
    /// The counted instructions; time is shown and its rounds stop once the counts decide.
    Instructions,
    /// Both: either one's regression fails the check, and a pass needs both decided.
    Both,
}

impl GateOn {
    /// The value as the file writes it.
    pub fn as_str(self) -> &'static str {
        match self {
            GateOn::Time => "time",
            GateOn::Instructions => "instructions",
            GateOn::Both => "both",
        }
    }

    /// Whether the counts take part in the gate.
    pub fn counts(self) -> bool {
        self != GateOn::Time
    }

    /// Whether time takes part in the gate.
    pub fn time(self) -> bool {
        self != GateOn::Instructions
    }
}

impl std::str::FromStr for GateOn {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, String> {
        match s.trim() {
            "time" => Ok(GateOn::Time),
            "instructions" => Ok(GateOn::Instructions),
            "both" => Ok(GateOn::Both),
            other => Err(format!(
                "`{other}` is not a tier to gate on: write \"time\", \"instructions\" or \"both\""
            )),
        }
    }
}

impl std::fmt::Display for GateOn {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

/// How a harness that picks its own iteration counts is made to run one benchmark a fixed
/// number of times, for `count_run`; `Err` says why it cannot be. The config check and the
/// docs quote it.
pub fn pinning(format: crate::Format) -> Result<&'static str, &'static str> {
    use crate::Format::*;
    match format {
        Command => Ok("the whole process is counted: `count_run` is not needed"),
        Go => Ok("go test -run '^$' -bench '^{benchmark}$' -benchtime 1000x"),
        Google => Ok("--benchmark_filter='^{benchmark}$' --benchmark_min_time=1000x"),
        Divan => Ok("./bench --bench --exact {benchmark} --sample-count 1 --sample-size 100"),
        Libtest | Criterion => Err(
            "criterion and libtest choose each benchmark's iteration count from measured time \
             and take no flag that fixes it (criterion's --profile-time fixes a time, not a \
             count), so a count of one of their runs is not exact; count a program with \
             `format = \"command\"`, or move the benchmark to gungraun, which counts exactly",
        ),
        Gungraun => Err(
            "gungraun already reports each benchmark's exact instruction count: gate on it with \
             a rule's `metric = \"instructions\"` instead of counting its runs again",
        ),
        _ => Ok("the harness's own flags for one benchmark and a fixed iteration count"),
    }
}

/// What `{benchmarks}` stands for in a run command; `count_run` may hold it for the one
/// benchmark counted, as its anchored regular expression.
const BENCHMARKS_PLACEHOLDER: &str = "{benchmarks}";

/// Whether runs of `format` can be counted exactly with `count_run`: the whole process for
/// `command`; one benchmark a fixed number of times otherwise, which needs `count_run` and a
/// harness that can be told the count. The error names the key at fault (`counts` or
/// `count_run`) and says why and what to write.
pub fn check(format: crate::Format, count_run: Option<&str>) -> Result<(), (&'static str, String)> {
    use crate::Format;
    match (pinning(format), count_run) {
        (Err(why), _) => Err((
            "counts",
            format!("cannot count format \"{}\" exactly: {why}", format.as_str()),
        )),
        (Ok(how), None) if format != Format::Command => Err((
            "counts",
            format!(
                "a \"{}\" run holds many benchmarks, each run as often as the harness likes: add \
                 `count_run`, a command that runs one benchmark ({BENCHMARK_PLACEHOLDER}) a fixed \
                 number of times, e.g. `{how}`",
                format.as_str()
            ),
        )),
        (Ok(_), Some(_)) if format == Format::Command => Err((
            "count_run",
            "format \"command\" counts the run command whole; remove `count_run`".to_owned(),
        )),
        (Ok(_), Some(run))
            if !run.contains(BENCHMARK_PLACEHOLDER) && !run.contains(BENCHMARKS_PLACEHOLDER) =>
        {
            Err((
                "count_run",
                format!(
                    "`count_run` must hold {BENCHMARK_PLACEHOLDER} (or {BENCHMARKS_PLACEHOLDER}): \
                     each benchmark is counted in a process of its own that runs only it"
                ),
            ))
        }
        _ => Ok(()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn values_read_as_the_file_writes_them_and_others_say_what_is_allowed() {
        assert_eq!("instructions".parse(), Ok(Counts::Instructions));
        assert!(
            "cycles"
                .parse::<Counts>()
                .unwrap_err()
                .contains("\"instructions\"")
        );
        assert_eq!(" both ".parse(), Ok(GateOn::Both));
        assert_eq!(GateOn::default(), GateOn::Time);
        assert!("count".parse::<GateOn>().unwrap_err().contains("\"time\""));
        assert!(GateOn::Both.counts() && GateOn::Both.time());
        assert!(!GateOn::Instructions.time() && !GateOn::Time.counts());
    }

    #[test]
    fn harnesses_that_cannot_fix_their_iteration_counts_are_refused_with_the_reason() {
        assert!(
            pinning(crate::Format::Criterion)
                .unwrap_err()
                .contains("--profile-time")
        );
        assert!(
            pinning(crate::Format::Gungraun)
                .unwrap_err()
                .contains("metric")
        );
        assert!(
            pinning(crate::Format::Go)
                .unwrap()
                .contains("-benchtime 1000x")
        );
    }
}
