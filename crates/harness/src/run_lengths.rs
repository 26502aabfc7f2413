//! What a suite's run command says about each benchmark's warm-up and measuring time, read from
//! the harness's own flags, and which lengths that harness takes: criterion before 0.4 reads
//! both flags as whole seconds (its version from the project's Cargo.lock). The run-length
//! advice of `compare` and the warnings of `config check` are built on it
//! (docs/statistics.md §1b).

use std::path::Path;

use benchgate_api::agent::{MEASURE_PLACEHOLDER, measure_text};

use crate::command::BenchCommand;
use crate::formats::Format;

/// The flags with which a harness's command line sets how long each benchmark warms up and
/// measures, and what it does when they are absent. Harnesses without a warm-up flag (go's
/// `-benchtime` ramps up on its own, divan has none) are not listed.
#[derive(Debug, PartialEq)]
pub struct HarnessFlags {
    pub format: Format,
    /// `--warm-up-time`: seconds each benchmark runs before it is measured.
    pub warm_up_flag: &'static str,
    pub warm_up_default: f64,
    /// `--measurement-time`: seconds each benchmark is measured.
    pub measure_flag: &'static str,
    pub measure_default: f64,
    /// The value comes only after `=` (Google Benchmark reads `--flag=value`, never
    /// `--flag value`).
    pub equals_only: bool,
}

/// Every harness whose warm-up the run command sets, from the harness's own source:
/// criterion's `configure_from_args` (defaults `Duration::new(3, 0)` and `(5, 0)` in 0.3–0.5),
/// Google Benchmark's `benchmark.cc` (`benchmark_min_warmup_time` 0, `benchmark_min_time` 0.5,
/// parsed only as `--flag=value`).
pub const HARNESS_FLAGS: &[HarnessFlags] = &[
    HarnessFlags {
        format: Format::Criterion,
        warm_up_flag: "--warm-up-time",
        warm_up_default: 3.0,
        measure_flag: "--measurement-time",
        measure_default: 5.0,
        equals_only: false,
    },
    HarnessFlags {
        format: Format::Google,
        warm_up_flag: "--benchmark_min_warmup_time",
        warm_up_default: 0.0,
        measure_flag: "--benchmark_min_time",
        measure_default: 0.5,
        equals_only: true,
    },
];

/// The other way to a fraction of a second under criterion before 0.4, whose flags take whole
/// seconds: lengths set in the bench's code, which its `configure_from_args` keeps when the run
/// command names no flag (httparse sets 100 ms this way).
pub fn criterion_code_lengths(warm_up: Option<f64>, measure: Option<f64>) -> String {
    let calls: Vec<String> = [("warm_up_time", warm_up), ("measurement_time", measure)]
        .into_iter()
        .filter_map(|(call, secs)| {
            secs.map(|s| format!(".{call}(Duration::from_millis({}))", (s * 1000.0).round()))
        })
        .collect();
    let flags = if calls.len() > 1 { "flags" } else { "flag" };
    format!(
        "any version takes it set in the bench's code (`Criterion::default(){}`) with the {flags} \
         left out of the run command",
        calls.join("")
    )
}

/// One length as the run command sets it.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Length {
    /// A number written in the command: `--warm-up-time 1`.
    Written(f64),
    /// `{measure_secs}`: as long as the suite's `measure`.
    AsMeasured,
    /// Not in the command: the harness's default.
    Default(f64),
}

impl Length {
    /// Seconds, when each benchmark measures `measure_secs`.
    pub fn secs(self, measure_secs: f64) -> f64 {
        match self {
            Length::Written(s) | Length::Default(s) => s,
            Length::AsMeasured => measure_secs,
        }
    }
}

/// What a run command sets for each benchmark: its warm-up and its measuring time. `None`
/// where the flag's value is not a number the command states (`$WARM`, `100x`).
#[derive(Debug, Clone, PartialEq)]
pub struct RunLengths {
    pub flags: &'static HarnessFlags,
    pub warm_up: Option<Length>,
    pub measure: Option<Length>,
}

impl RunLengths {
    /// The lengths `line` (a shell line, as a suite's `run`) sets for `format`; `None` for a
    /// harness with no warm-up flag.
    pub fn of_line(line: &str, format: Format) -> Option<Self> {
        let flags = HARNESS_FLAGS.iter().find(|h| h.format == format)?;
        // A line that does not split (an unbalanced quote) still names its flags word by word.
        let words = shlex::split(line)
            .unwrap_or_else(|| line.split_whitespace().map(str::to_owned).collect());
        let read = |flag: &str, default: f64| match flag_value(&words, flag, flags.equals_only) {
            None => Some(Length::Default(default)),
            Some(value) => parse_length(&value),
        };
        Some(RunLengths {
            flags,
            warm_up: read(flags.warm_up_flag, flags.warm_up_default),
            measure: read(flags.measure_flag, flags.measure_default),
        })
    }

    /// The lengths a side's command sets: the line `sh -c` runs, or its words.
    pub fn of_command(command: &BenchCommand, format: Format) -> Option<Self> {
        match command.argv.as_slice() {
            [sh, c, line] if sh == "sh" && c == "-c" => Self::of_line(line, format),
            _ => Self::of_line(&command.display(), format),
        }
    }

    /// The warm-up as the command would write it: `--warm-up-time 0.2`.
    pub fn warm_up_flag_text(&self, secs: f64) -> String {
        self.warm_up_flag_with(&measure_text(secs))
    }

    /// The warm-up flag with `value`: `--warm-up-time {measure_secs}`.
    pub fn warm_up_flag_with(&self, value: &str) -> String {
        let sep = if self.flags.equals_only { "=" } else { " " };
        format!("{}{sep}{value}", self.flags.warm_up_flag)
    }
}

/// The value of the last `flag` in `words`: `--flag value` or `--flag=value`.
fn flag_value(words: &[String], flag: &str, equals_only: bool) -> Option<String> {
    let mut found = None;
    for (i, word) in words.iter().enumerate() {
        if let Some(value) = word
            .strip_prefix(flag)
            .and_then(|rest| rest.strip_prefix('='))
        {
            found = Some(value.to_owned());
        } else if word == flag && !equals_only {
            found = words.get(i + 1).cloned();
        }
    }
    found
}

/// `1`, `0.5`, `0.5s` (Google Benchmark's suffix) or `{measure_secs}`; anything else unknown.
fn parse_length(value: &str) -> Option<Length> {
    let value = value.trim();
    if value.trim_end_matches('s') == MEASURE_PLACEHOLDER {
        return Some(Length::AsMeasured);
    }
    value
        .strip_suffix('s')
        .unwrap_or(value)
        .parse::<f64>()
        .ok()
        .filter(|s| s.is_finite() && *s >= 0.0)
        .map(Length::Written)
}

/// The warm-up advised, as a share of the measuring it precedes: enough for caches and the
/// harness's estimate of an iteration's time, little enough that measuring is most of a run.
pub const WARM_UP_SHARE: f64 = 0.2;

/// The shortest warm-up advised, in seconds: below it the harness's own estimate of how many
/// iterations fit a sample rests on a few iterations.
pub const WARM_UP_FLOOR: f64 = 0.1;

/// The warm-up advised before measuring `measure_secs`, in a length `steps` takes:
/// [`WARM_UP_SHARE`] of it, [`WARM_UP_FLOOR`] at least. `compare`'s advice and
/// `config check`'s warning both say this one.
pub fn advised_warm_up(measure_secs: f64, steps: &LengthSteps) -> f64 {
    steps.nearest((WARM_UP_SHARE * measure_secs).max(WARM_UP_FLOOR))
}

/// The lengths a harness takes on its command line.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum LengthSteps {
    /// Any number of seconds, as a run command receives `{measure_secs}` (whole milliseconds).
    Fractions,
    /// Whole seconds, one at least: criterion before 0.4 parses `--measurement-time` and
    /// `--warm-up-time` as an unsigned integer (a fraction exits with an error, 0 panics).
    WholeSeconds {
        /// What says so: "criterion 0.3.6 (Cargo.lock)".
        source: String,
    },
}

impl LengthSteps {
    /// The lengths `format` takes in the project whose Cargo.lock reads `cargo_lock`.
    pub fn of(format: Format, cargo_lock: Option<&str>) -> Self {
        let oldest = match (format, cargo_lock) {
            (Format::Criterion, Some(lock)) => criterion_versions(lock).into_iter().min(),
            _ => None,
        };
        match oldest {
            Some(v) if v < CRITERION_FRACTIONS => LengthSteps::WholeSeconds {
                source: format!("criterion {}.{}.{} (Cargo.lock)", v.0, v.1, v.2),
            },
            _ => LengthSteps::Fractions,
        }
    }

    /// The length the harness takes nearest `secs`: whole milliseconds (0.001 s at least), or
    /// whole seconds (1 s at least).
    pub fn nearest(&self, secs: f64) -> f64 {
        match self {
            LengthSteps::Fractions => ((secs * 1000.0).round() / 1000.0).max(0.001),
            LengthSteps::WholeSeconds { .. } => secs.round().max(1.0),
        }
    }

    /// Whether the harness takes `secs` as written.
    pub fn takes(&self, secs: f64) -> bool {
        (self.nearest(secs) - secs).abs() < 1e-9
    }
}

/// `secs` as the harness of every side in `dirs` takes it, and why it changed: a length the
/// server chose (`measure = "auto"`, in milliseconds) that criterion before 0.4 cannot read
/// becomes the nearest whole second (1 s at least). Run as it was, every run would exit with an
/// error and the job would fail without a round.
pub fn length_taken(secs: f64, format: Format, dirs: &[&Path]) -> (f64, Option<String>) {
    for dir in dirs {
        let steps = LengthSteps::of(format, find_cargo_lock(dir).as_deref());
        if steps.takes(secs) {
            continue;
        }
        let taken = steps.nearest(secs);
        let why = match &steps {
            LengthSteps::WholeSeconds { source } => format!(
                "{} s per benchmark is not whole seconds, which {source} refuses; measuring {} s",
                measure_text(secs),
                measure_text(taken)
            ),
            LengthSteps::Fractions => format!(
                "{} s per benchmark measured as {} s (whole milliseconds)",
                measure_text(secs),
                measure_text(taken)
            ),
        };
        return (taken, Some(why));
    }
    (secs, None)
}

/// The first criterion whose `--measurement-time` and `--warm-up-time` are fractional seconds:
/// 0.4.0 reads them with `value_of_t_or_exit` into `Duration::from_secs_f64`, 0.3.6 with
/// `value_t!(…, u64)`.
pub const CRITERION_FRACTIONS: (u64, u64, u64) = (0, 4, 0);

/// The versions of the `criterion` packages a Cargo.lock lists.
pub fn criterion_versions(lock: &str) -> Vec<(u64, u64, u64)> {
    let mut out = Vec::new();
    let mut name_is_criterion = false;
    for line in lock.lines().map(str::trim) {
        if line == "[[package]]" {
            name_is_criterion = false;
        } else if let Some(name) = toml_string(line, "name") {
            name_is_criterion = name == "criterion";
        } else if let Some(version) = toml_string(line, "version")
            && name_is_criterion
            && let Some(v) = semver_triple(version)
        {
            out.push(v);
        }
    }
    out
}

/// `key = "value"` → `value`.
fn toml_string<'a>(line: &'a str, key: &str) -> Option<&'a str> {
    let rest = line
        .strip_prefix(key)?
        .trim_start()
        .strip_prefix('=')?
        .trim();
    rest.strip_prefix('"')?.strip_suffix('"')
}

/// `0.3.6` (or `0.4.0-beta`) → (0, 3, 6).
fn semver_triple(version: &str) -> Option<(u64, u64, u64)> {
    let core = version.split(['-', '+']).next()?;
    let mut parts = core.split('.').map(|p| p.parse::<u64>().ok());
    Some((parts.next()??, parts.next()??, parts.next()??))
}

/// The Cargo.lock that governs `dir`: in it or the nearest directory above, as cargo finds a
/// workspace's root, but never above the repository (`.git`) that holds `dir`.
pub fn find_cargo_lock(dir: &Path) -> Option<String> {
    for dir in dir.ancestors() {
        if let Ok(text) = std::fs::read_to_string(dir.join("Cargo.lock")) {
            return Some(text);
        }
        if dir.join(".git").exists() {
            return None;
        }
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A side on criterion 0.3.6 (its Cargo.lock) cannot take 0.35 s: 1 s is run instead, and
    /// said; on criterion 0.5 the length stays.
    #[test]
    fn a_fraction_criterion_0_3_refuses_becomes_whole_seconds() {
        let root = std::env::temp_dir().join(format!("bg-length-taken-{}", std::process::id()));
        let side = |name: &str, criterion: &str| {
            let dir = root.join(name);
            std::fs::create_dir_all(dir.join(".git")).unwrap();
            std::fs::write(
                dir.join("Cargo.lock"),
                format!("[[package]]\nname = \"criterion\"\nversion = \"{criterion}\"\n"),
            )
            .unwrap();
            dir
        };
        let (old, new) = (side("old", "0.3.6"), side("new", "0.5.1"));
        let (taken, why) = length_taken(0.35, Format::Criterion, &[new.as_path(), old.as_path()]);
        assert_eq!(taken, 1.0);
        assert_eq!(
            why.as_deref(),
            Some(
                "0.35 s per benchmark is not whole seconds, which criterion 0.3.6 (Cargo.lock) refuses; measuring 1 s"
            )
        );
        assert_eq!(
            length_taken(2.4, Format::Criterion, &[old.as_path()]).0,
            2.0
        );
        assert_eq!(
            length_taken(0.35, Format::Criterion, &[new.as_path()]),
            (0.35, None)
        );
        assert_eq!(
            length_taken(3.0, Format::Criterion, &[old.as_path()]),
            (3.0, None)
        );
        assert_eq!(
            length_taken(0.35, Format::Command, &[old.as_path()]),
            (0.35, None)
        );
        let _ = std::fs::remove_dir_all(&root);
    }

    fn lengths(line: &str) -> (Option<Length>, Option<Length>) {
        let l = RunLengths::of_line(line, Format::Criterion).unwrap();
        (l.warm_up, l.measure)
    }

    /// Run commands as the docs and users write them.
    #[test]
    fn criterion_s_flags_are_read_from_the_run_command() {
        use Length::*;
        let table: &[(&str, Option<Length>, Option<Length>)] = &[
            (
                "cargo bench -- --warm-up-time 1 --measurement-time {measure_secs}",
                Some(Written(1.0)),
                Some(AsMeasured),
            ),
            (
                "cargo bench --bench req -- --warm-up-time=0.5 --measurement-time=2",
                Some(Written(0.5)),
                Some(Written(2.0)),
            ),
            (
                "cargo bench -p parser",
                Some(Default(3.0)),
                Some(Default(5.0)),
            ),
            (
                "cargo bench -- --measurement-time {measure_secs} --warm-up-time {measure_secs}",
                Some(AsMeasured),
                Some(AsMeasured),
            ),
            (
                "cd crates/x && cargo bench -- --warm-up-time \"$WARM\" --measurement-time 3",
                None,
                Some(Written(3.0)),
            ),
            // The last of two wins, as it would in a harness that allows both.
            (
                "cargo bench -- --warm-up-time 3 --warm-up-time 0.1",
                Some(Written(0.1)),
                Some(Default(5.0)),
            ),
        ];
        for (line, warm_up, measure) in table {
            assert_eq!(lengths(line), (*warm_up, *measure), "{line}");
        }
    }

    /// Google Benchmark reads only `--flag=value`, and accepts an `s` suffix; `100x` is a count
    /// of iterations, not a length.
    #[test]
    fn google_benchmark_s_flags_take_their_value_after_the_equals_sign() {
        let l = RunLengths::of_line(
            "./bench --benchmark_min_warmup_time=0.5 --benchmark_min_time={measure_secs}s",
            Format::Google,
        )
        .unwrap();
        assert_eq!(l.warm_up, Some(Length::Written(0.5)));
        assert_eq!(l.measure, Some(Length::AsMeasured));
        assert_eq!(l.warm_up_flag_text(0.2), "--benchmark_min_warmup_time=0.2");
        let l = RunLengths::of_line(
            "./bench --benchmark_min_warmup_time 2 --benchmark_min_time=100x",
            Format::Google,
        )
        .unwrap();
        assert_eq!(l.warm_up, Some(Length::Default(0.0)), "not a flag it reads");
        assert_eq!(l.measure, None);
        assert_eq!(RunLengths::of_line("go test -bench .", Format::Go), None);
        assert_eq!(RunLengths::of_line("cargo bench", Format::Divan), None);
    }

    #[test]
    fn a_shell_command_is_read_through_its_line() {
        let c = BenchCommand::shell("cargo bench -- --warm-up-time 2").unwrap();
        let l = RunLengths::of_command(&c, Format::Criterion).unwrap();
        assert_eq!(l.warm_up, Some(Length::Written(2.0)));
        assert_eq!(l.warm_up_flag_text(0.25), "--warm-up-time 0.25");
        let words = BenchCommand::from_words("target/release/bench --warm-up-time 0.3").unwrap();
        let l = RunLengths::of_command(&words, Format::Criterion).unwrap();
        assert_eq!(l.warm_up, Some(Length::Written(0.3)));
    }

    /// The lock file format cargo writes (version 3 and 4 alike).
    const LOCK: &str = r#"# This file is automatically @generated by Cargo.
# It is not intended for manual editing.
version = 3

[[package]]
name = "criterion"
version = "0.3.6"
source = "registry+https://github.com/rust-lang/crates.io-index"
checksum = "b01d6de93b2b6c65e17c634a26653a29d107b3c98c607c765bf38d041531cd8f"
dependencies = [
 "atty",
 "cast",
]

[[package]]
name = "criterion-plot"
version = "0.4.5"
"#;

    #[test]
    fn criterion_before_0_4_takes_whole_seconds() {
        assert_eq!(criterion_versions(LOCK), [(0, 3, 6)]);
        let steps = LengthSteps::of(Format::Criterion, Some(LOCK));
        assert_eq!(
            steps,
            LengthSteps::WholeSeconds {
                source: "criterion 0.3.6 (Cargo.lock)".into()
            }
        );
        assert_eq!(steps.nearest(0.107), 1.0);
        assert_eq!(steps.nearest(2.6), 3.0);
        assert!(!steps.takes(0.5) && steps.takes(2.0));
        let new = LOCK.replace("0.3.6", "0.4.0");
        assert_eq!(
            LengthSteps::of(Format::Criterion, Some(&new)),
            LengthSteps::Fractions
        );
        // Two versions in one workspace: the oldest decides what the flags may say.
        let both = format!("{LOCK}\n[[package]]\nname = \"criterion\"\nversion = \"0.5.1\"\n");
        assert_eq!(criterion_versions(&both), [(0, 3, 6), (0, 5, 1)]);
        assert_ne!(
            LengthSteps::of(Format::Criterion, Some(&both)),
            LengthSteps::Fractions
        );
        assert_eq!(
            LengthSteps::of(Format::Criterion, None),
            LengthSteps::Fractions
        );
        assert_eq!(
            LengthSteps::of(Format::Google, Some(LOCK)),
            LengthSteps::Fractions
        );
        let f = LengthSteps::Fractions;
        assert_eq!(f.nearest(0.10749), 0.107);
        assert!(f.takes(0.25) && !f.takes(0.0001));
    }

    #[test]
    fn this_repository_s_own_lock_names_a_criterion_that_takes_fractions() {
        let lock = find_cargo_lock(Path::new(env!("CARGO_MANIFEST_DIR"))).unwrap();
        let versions = criterion_versions(&lock);
        assert!(
            !versions.is_empty() && versions.iter().all(|v| *v >= CRITERION_FRACTIONS),
            "{versions:?}"
        );
    }
}
