//! Command-line arguments of `benchgate compare` and `benchgate analyze` (clap derive); the
//! binary embeds them as subcommands and calls [`super::run_compare`] / [`super::run_analyze`].

use std::path::PathBuf;

use clap::{Args, Parser, ValueEnum};

use crate::evaluate::{FailOn, Policy};
use crate::formats::Format;

/// `--budget` in seconds, as `[benchmark] budget` reads it.
fn measure_parser(text: &str) -> Result<f64, String> {
    benchgate_api::agent::parse_measure(text)
}

fn budget_parser(text: &str) -> Result<u64, String> {
    benchgate_api::agent::parse_budget(text)
}

/// Exit statuses, shown in `--help` of both commands.
pub const EXIT_CODES_HELP: &str = "Exit status:\n  \
    0  the gate passes: every gated benchmark decided, none a regression (under --fail-on)\n  \
    1  a regression (under --fail-on)\n  \
    2  usage or measurement error (bad arguments, unreadable input, a benchmark command that \
    failed, timed out or printed nothing parsable)\n  \
    3  no answer yet: a gated benchmark is undecided (more rounds or runs would tell), or \
    nothing gates; not a pass";

/// Run a base and a head benchmark interleaved (ABBA) until every benchmark has a verdict.
///
/// Two forms: `--base 'CMD A' --head 'CMD B'`, or `--base-rev REV --head-rev REV
/// [--build 'CMD'] -- CMD…` to benchmark two revisions of the git repository in the current
/// directory, each in its own worktree (kept under .git/benchgate-worktrees, so builds are
/// incremental). The same commit on both sides (an A/A) is built once and both sides run it.
#[derive(Debug, Clone, Parser)]
#[command(after_help = EXIT_CODES_HELP)]
pub struct CompareArgs {
    /// Base command, split into words as a shell would (without running one; see --shell).
    #[arg(long, value_name = "CMD", requires = "head", conflicts_with_all = ["base_rev", "head_rev", "build"])]
    pub base: Option<String>,
    /// Head command, split like --base.
    #[arg(long, value_name = "CMD", requires = "base")]
    pub head: Option<String>,
    /// Run the commands through `sh -c` (pipes, redirections, variables).
    #[arg(long)]
    pub shell: bool,
    /// Base revision of the current git repository (branch, tag, sha, HEAD~1…). A branch that
    /// moved on since head branched from it is measured at the merge base, so its newer
    /// commits are not counted as head's change (see --base-tip).
    #[arg(long, value_name = "REV", requires = "head_rev")]
    pub base_rev: Option<String>,
    /// With a --base-rev branch: measure the branch's tip, not head's merge base with it (the
    /// difference then includes the branch's commits head never saw).
    #[arg(long, requires = "base_rev")]
    pub base_tip: bool,
    /// Head revision of the current git repository.
    #[arg(long, value_name = "REV", requires = "base_rev")]
    pub head_rev: Option<String>,
    /// Build command run (by sh -c) in each revision's worktree before measuring.
    #[arg(long, value_name = "CMD", requires = "base_rev")]
    pub build: Option<String>,
    /// With --base-rev/--head-rev: the repository (default: the current directory's).
    #[arg(long, value_name = "DIR", requires = "base_rev")]
    pub repo: Option<PathBuf>,
    /// With --base-rev/--head-rev: the benchmark command, run in each worktree.
    #[arg(last = true, value_name = "CMD")]
    pub run: Vec<String>,
    /// Run a suite of this `.benchgate.toml` exactly as the service does: its build, run,
    /// format, warm-up, rules and gate (with --base-rev/--head-rev).
    #[arg(long, value_name = "FILE", requires = "base_rev", conflicts_with_all = ["build", "run", "format", "warmup"])]
    pub config: Option<PathBuf>,
    /// With --base-rev/--head-rev: the base side also runs head's version of the files
    /// matching this glob (`**` crosses directories; repeatable), so a benchmark the head adds
    /// is measured against the base's code. With --config, replaces the suite's `bench_from_head`.
    #[arg(long, value_name = "GLOB", requires = "base_rev")]
    pub bench_from_head: Vec<String>,
    /// With --config: the `[[suite]]` to run (needed when the file has several).
    #[arg(long, value_name = "NAME", requires = "config")]
    pub suite: Option<String>,
    /// First run N rounds of the base against itself: an A/A session whose spread and
    /// bias give this machine's floor, so the margin M is what the service's runner floor makes
    /// it (record it with --record and pass it to later sessions with --aa-from).
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u32).range(2..))]
    pub aa_rounds: Option<u32>,
    /// A/A sessions recorded earlier (`--aa-rounds N --record FILE`), pooled with this one's:
    /// two or more sessions measure the bias between sessions that widens M (repeatable).
    #[arg(long, value_name = "FILE")]
    pub aa_from: Vec<PathBuf>,
    /// Stop when the benchmarks whose names match this glob are decided (`*` also crosses
    /// `/`; repeatable), instead of when every gated benchmark is.
    #[arg(long, value_name = "GLOB")]
    pub until: Vec<String>,

    /// How samples come out of a run: `command` measures the whole process; any other format
    /// parses the run's stdout.
    #[arg(long, default_value = "command", value_parser = format_parser(), ignore_case = true)]
    pub format: Format,
    /// Warm-up rounds, run and discarded before measuring.
    #[arg(long, default_value_t = 1, value_name = "N")]
    pub warmup: u32,
    /// Order of base and head inside each round [default: abba].
    #[arg(long, value_enum)]
    pub schedule: Option<ScheduleKind>,
    /// Seed of the random schedule (implies `--schedule random`; default: drawn and reported).
    #[arg(long)]
    pub seed: Option<u64>,
    /// Run exactly N rounds instead of stopping when every benchmark has a verdict.
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u32).range(2..))]
    pub rounds: Option<u32>,
    /// Stop after this many rounds even without a verdict [default: the suite's `rounds` with
    /// --config, else 50].
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u32).range(2..))]
    pub max_rounds: Option<u32>,
    /// Stop measuring after this long even without a verdict ("10m", "90s") [default: the
    /// suite's `budget` with --config, else none]. The report then says what is known.
    #[arg(long, value_name = "DURATION", value_parser = budget_parser)]
    pub budget: Option<u64>,
    /// How long each run measures a benchmark ("0.5s", "300ms"), put where the run command
    /// holds `{measure_secs}` [default: the suite's `measure` with --config]. The report's
    /// run-length line says what length would answer soonest.
    #[arg(long, value_name = "DURATION", value_parser = measure_parser)]
    pub measure_secs: Option<f64>,

    #[command(flatten)]
    pub policy: PolicyArgs,
    #[command(flatten)]
    pub output: OutputArgs,
    #[command(flatten)]
    pub claim: ClaimArgs,

    /// Pass this variable to the benchmark (NAME copies it from here, NAME=VALUE sets it).
    /// Benchmarks otherwise get only PATH, HOME, LANG and TMPDIR.
    #[arg(long = "env", value_name = "NAME[=VALUE]")]
    pub env: Vec<String>,
    /// Kill a run (and its whole process group) after this many seconds.
    #[arg(long, default_value_t = 600.0, value_name = "SECONDS")]
    pub timeout: f64,
    /// Pin benchmark processes to these CPUs, e.g. `2,3` or `4-7`.
    #[arg(long, value_name = "LIST")]
    pub pin_cpus: Option<String>,
    /// Disable address-space layout randomisation for benchmark processes.
    #[arg(long)]
    pub no_aslr: bool,
    /// Before each round, wait (up to a minute) for the 1-minute load average to drop below this.
    #[arg(long, value_name = "LOAD")]
    pub max_load: Option<f64>,
    /// Also count each side, twice, apart from the timed rounds: `instructions` by `perf
    /// stat` where the machine has a PMU, by Valgrind (20–50× slower) where it does not. A
    /// count both runs of each side agree on is exact; one they do not is read as a timing.
    /// The suite's `counts` when --config names one.
    #[arg(long, value_name = "COUNT", value_parser = parse_counts)]
    pub counts: Option<benchgate_api::Counts>,
    /// What a counted run runs for one benchmark, `{benchmark}` (its name, quoted) or
    /// `{benchmarks}` (its anchored regex), a fixed number of times; needed for harness
    /// formats. Unset: the run command, counted whole.
    #[arg(long, value_name = "COMMAND", requires = "counts")]
    pub count_run: Option<String>,

    /// Write every round's raw samples, the machine fingerprint and the settings as JSON here.
    #[arg(long, value_name = "FILE")]
    pub record: Option<PathBuf>,
    /// Continue the session a --record FILE holds: its rounds count, new rounds add to them
    /// (--rounds, --max-rounds and the suite's rounds count them all), and nothing runs when
    /// its rows are already decided. Same machine, commands or commits, format and schedule;
    /// --record may name the same file to keep the whole.
    #[arg(long, value_name = "FILE", conflicts_with = "aa_rounds")]
    pub resume: Option<PathBuf>,
    /// Show no progress on stderr (by default a bar on a terminal, plain lines in a log).
    #[arg(long)]
    pub no_progress: bool,
    /// Last: its help heading applies to every argument after it.
    #[command(flatten)]
    pub profile: ProfileArgs,
}

/// `compare --profile`: where the time went, after the report.
#[derive(Debug, Clone, Args)]
#[command(next_help_heading = "Profile (why it is slower)")]
pub struct ProfileArgs {
    /// After the report, profile both sides with perf: the functions whose share of samples
    /// changed most, and a differential flame graph.
    ///
    /// Runs each side --profile-runs more times under `perf record -g` (these runs are never
    /// samples), prints the functions whose share of samples changed most (self: as the running
    /// function; total: anywhere on the stack; in percentage points, head minus base) and writes
    /// the differential flame graph to --profile-svg. Where perf cannot profile (not installed,
    /// a kernel that forbids it), says why in one line and exits as without --profile. With
    /// --json the profile goes to stderr, keeping stdout JSON.
    #[arg(long)]
    pub profile: bool,
    /// Profiled runs per side; their stacks are added up.
    #[arg(long, default_value_t = 3, value_name = "N", requires = "profile", value_parser = clap::value_parser!(u32).range(1..))]
    pub profile_runs: u32,
    /// Where to write the differential flame graph (SVG: widths are head's samples; red frames
    /// grew, blue ones shrank against base).
    #[arg(
        long,
        default_value = "benchgate-profile.svg",
        value_name = "FILE",
        requires = "profile"
    )]
    pub profile_svg: PathBuf,
}

/// Compare two recordings of benchmark results, anytime-valid (benchstat, but honest about
/// noise). A run (process, JMH fork, pyperf run, BenchmarkDotNet launch) counts once, never
/// its iterations; outputs of several processes appended to one file are several runs, and a
/// `raw` file's lines are whole-program times, one run each. Base and head runs are
/// independent samples unless --paired: drift between the two recordings is not cancelled
/// (`benchgate compare` interleaves and cancels it). One run per side gives no interval, except
/// for counts a harness makes exactly (allocations, instructions), which compare exactly.
#[derive(Debug, Clone, Parser)]
#[command(after_help = EXIT_CODES_HELP, after_long_help = runs_help())]
pub struct AnalyzeArgs {
    /// Results of the base build: a file, a criterion directory, or a directory of recordings
    /// (one file, or one copy of target/criterion, per run).
    pub base_file: PathBuf,
    /// Results of the head build, in the same forms.
    pub head_file: PathBuf,
    /// Format of both sides (`command` measures processes, so it has no files to read).
    #[arg(long, default_value = "auto", value_parser = format_parser(), ignore_case = true)]
    pub format: Format,
    /// The recordings were made interleaved (base, head, base, head…): pair base run i with
    /// head run i and use `compare`'s paired interval, which cancels drift. Both sides must have
    /// the same number of runs.
    #[arg(long)]
    pub paired: bool,
    /// Judge the rows by this `.benchgate.toml`'s rules and gate (which metric gates, its
    /// `min_effect`, `fail_on`), as `compare --config` and the service do.
    #[arg(long, value_name = "FILE")]
    pub config: Option<PathBuf>,
    /// With --config: the `[[suite]]` whose rules apply (needed when the file has several).
    #[arg(long, value_name = "NAME", requires = "config")]
    pub suite: Option<String>,
    /// A/A recordings giving this machine's noise floor, in pairs: base and head of one A/A
    /// session (the same code on both sides, recorded apart as the A/B ones), then the next …
    #[arg(long, value_name = "FILE", num_args = 1..)]
    pub aa: Vec<PathBuf>,
    /// A side with a single run has no spread of its own, so by default its rows give no
    /// interval (exit 3) and say how many more runs would settle them. With this flag they are
    /// judged with the other side's spread: right only if both sides are equally noisy (a
    /// single run from a noisier process then makes false claims).
    #[arg(long)]
    pub assume_equal_spread: bool,
    #[command(flatten)]
    pub policy: PolicyArgs,
    #[command(flatten)]
    pub output: OutputArgs,
    #[command(flatten)]
    pub claim: ClaimArgs,
}

/// The policy minimum of the margin M when neither a flag nor a config sets one, in percent.
pub const DEFAULT_MIN_EFFECT_PCT: f64 = 1.0;

/// The statistics policy, shared by both commands.
#[derive(Debug, Clone, Args)]
pub struct PolicyArgs {
    /// Error level of the intervals.
    #[arg(long, default_value_t = 0.05, value_parser = parse_alpha)]
    pub alpha: f64,
    /// Planned pairs the anytime-valid interval is tuned for [default: 20; compare with an A/A
    /// floor (--aa-rounds, --aa-from): planned per benchmark from the floor, as a runner plans;
    /// analyze: the size of the recordings, mn/(m+n) for m and n runs]. Fix it to add runs later
    /// and look again.
    #[arg(long, value_name = "N")]
    pub n_star: Option<f64>,
    /// Smallest change that matters, in percent (the policy minimum of the margin M): `1` or
    /// `1%` [default: 1, or `[gate] min_effect` of --config].
    #[arg(long, value_name = "PCT", value_parser = parse_percent)]
    pub min_effect: Option<f64>,
    /// What fails the gate (exit status 1): `regression` (a gated benchmark is slower),
    /// `practical-regression` (slower beyond the margin M) or `never` [default: regression, or
    /// `[gate] fail_on` of --config].
    #[arg(long, value_name = "RULE", value_parser = parse_fail_on)]
    pub fail_on: Option<FailOn>,
    /// The slowdown the gate tolerates, in percent, or `off`: a benchmark passes once it is
    /// shown not slower than this ("not slower than +5%"), without waiting for the interval
    /// to fit inside ±M [default: 5, or `[gate] tolerance` of --config].
    #[arg(long, value_name = "PCT", value_parser = parse_tolerance)]
    pub tolerance: Option<Tolerance>,
    /// The tail guard: the rarest slow mode of head's runs a pass must have had the runs to
    /// see, `1 in 20` or `5%`, or `off`. A pass ("not slower", "no change", "faster") waits
    /// until a slow mode that common, big enough to undo it, would have shown (59 runs for a
    /// pass near the tolerance; a large change needs few) [default: 1 in 20, or
    /// `[gate] rare_slow_runs` of --config].
    #[arg(long, value_name = "SHARE", value_parser = parse_rare_slow_runs)]
    pub rare_slow_runs: Option<RareSlowRuns>,
    /// Which tier decides the exit code: `time`, `instructions` (the counted runs'; see
    /// --counts) or `both` [default: time, or `[gate] gate_on` of --config].
    #[arg(long, value_name = "TIER", value_parser = parse_gate_on)]
    pub gate_on: Option<benchgate_api::GateOn>,
}

/// `--rare-slow-runs`: a share of runs, or off.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct RareSlowRuns(pub Option<f64>);

fn parse_rare_slow_runs(s: &str) -> Result<RareSlowRuns, String> {
    benchgate_api::agent::parse_rare_slow_runs(s).map(RareSlowRuns)
}

/// `--tolerance`: a percentage above zero, or off.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Tolerance(pub Option<f64>);

fn parse_tolerance(s: &str) -> Result<Tolerance, String> {
    if s.trim() == "off" {
        return Ok(Tolerance(None));
    }
    match parse_percent(s) {
        Ok(p) if p > 0.0 && p < 100.0 => Ok(Tolerance(Some(p / 100.0))),
        _ => Err(format!(
            "expected a slowdown to tolerate such as 5 or 2.5% (above 0, below 100), or off; \
             got {s:?}"
        )),
    }
}

fn parse_fail_on(s: &str) -> Result<FailOn, String> {
    s.parse()
}

impl PolicyArgs {
    /// The policy the evaluation uses: the flags, else the defaults.
    pub fn policy(&self) -> Policy {
        Policy {
            alpha: self.alpha,
            n_star: self.n_star.unwrap_or(crate::evaluate::DEFAULT_N_STAR),
            min_effect_pct: self.min_effect.unwrap_or(DEFAULT_MIN_EFFECT_PCT),
            tolerance: self
                .tolerance
                .map_or(Some(benchgate_api::agent::DEFAULT_TOLERANCE), |t| t.0),
            rules: Vec::new(),
            planned: Default::default(),
            assume_equal_spread: false,
            rare_slow_runs: self
                .rare_slow_runs
                .map_or(Some(benchgate_api::agent::DEFAULT_RARE_SLOW_RUNS), |r| r.0),
            gate_on: self.gate_on.unwrap_or_default(),
        }
    }

    /// What fails the gate: the flag, else `regression`.
    pub fn fail_on(&self) -> FailOn {
        self.fail_on.unwrap_or_default()
    }
}

/// Output shape, shared by both commands.
#[derive(Debug, Clone, Args)]
pub struct OutputArgs {
    /// Print the stable JSON report (benchgate_api::AnalysisReport) instead of a table.
    #[arg(long, conflicts_with = "markdown")]
    pub json: bool,
    /// Print a Markdown table (for a PR comment or a README).
    #[arg(long)]
    pub markdown: bool,
}

/// Claims to answer beside the report: the author's "20% faster", held against the interval.
#[derive(Debug, Clone, Args)]
pub struct ClaimArgs {
    /// A claimed change to answer: "BENCHMARK -20%" (a signed percent of time), "BENCHMARK 2x
    /// faster" or "BENCHMARK 1.5x slower" (repeatable). Each is answered above the table:
    /// confirmed, smaller or larger than claimed, not shown yet, not reproduced, or opposite.
    #[arg(long = "claim", value_name = "CLAIM")]
    pub claims: Vec<String>,
    /// Answer the claims a PR body makes, saved to FILE (e.g. `gh pr view N --json body -q
    /// .body > pr.md`): pasted benchstat, criterion, hyperfine and pytest-benchmark output,
    /// Markdown tables with a change column, and sentences such as "`parse` is 20% faster".
    #[arg(long, value_name = "FILE")]
    pub claims_from: Option<PathBuf>,
}

/// `--schedule` values.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum ScheduleKind {
    /// Round k runs base first when k is even, head first when odd.
    Abba,
    /// Each round's order is drawn from a seeded generator (the seed is reported).
    Random,
}

/// `--format`'s values and their help, from the one list of formats ([`Format::ALL`]).
/// What a run is in each format's output, from the one list
/// ([`crate::formats::runs::process_rule`]), then the exit codes.
fn runs_help() -> String {
    let mut text = String::from("What one run is, per format (appended outputs are split):\n");
    for f in Format::ALL {
        let rule = crate::formats::runs::process_rule(f);
        if !rule.is_empty() {
            text.push_str(&format!("  {}: {rule}\n", f.as_str()));
        }
    }
    text.push('\n');
    text.push_str(EXIT_CODES_HELP);
    text
}

fn format_parser() -> impl clap::builder::TypedValueParser<Value = Format> {
    use clap::builder::{PossibleValue, PossibleValuesParser, TypedValueParser};
    let values = Format::ALL.map(|f| {
        let aliases = Format::ALIASES
            .iter()
            .filter(move |(_, a)| *a == f)
            .map(|(name, _)| *name);
        PossibleValue::new(f.as_str())
            .help(f.summary())
            .aliases(aliases)
    });
    PossibleValuesParser::new(values).map(|name| {
        name.parse::<Format>()
            .expect("every listed format name parses")
    })
}

fn parse_alpha(s: &str) -> Result<f64, String> {
    match s.parse::<f64>() {
        Ok(a) if a > 0.0 && a < 1.0 => Ok(a),
        _ => Err(format!(
            "expected a number strictly between 0 and 1, got {s:?}"
        )),
    }
}

/// `1`, `1.5` or `1%` → percent; negative or non-finite values are refused.
pub fn parse_percent(s: &str) -> Result<f64, String> {
    let number = s.trim().trim_end_matches('%').trim();
    match number.parse::<f64>() {
        Ok(p) if p.is_finite() && p >= 0.0 => Ok(p),
        _ => Err(format!(
            "expected a percentage such as 1 or 2.5%, got {s:?}"
        )),
    }
}

fn parse_counts(s: &str) -> Result<benchgate_api::Counts, String> {
    s.parse()
}

fn parse_gate_on(s: &str) -> Result<benchgate_api::GateOn, String> {
    s.parse()
}
