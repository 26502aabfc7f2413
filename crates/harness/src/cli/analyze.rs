//! `benchgate analyze BASE HEAD`: benchstat, but honest about what two recordings can say.
//! Each side is a result file, a criterion directory, or a directory of several recordings.
//! Samples inside one run (criterion's iterations, JMH iterations of a fork, pyperf values of a
//! run) are not replicates, so each run counts once; base and head runs were recorded apart,
//! so they are two independent samples, never pairs, and drift between them is not cancelled.

use std::collections::HashMap;
use std::path::{Path, PathBuf};

use benchgate_api::Measurement;
use benchgate_stats::NoiseFloor;

use crate::cli::CliError;
use crate::cli::args::AnalyzeArgs;
use crate::evaluate::{Evaluation, FailOn, Policy, RunsTuning, evaluate, evaluate_runs};
use crate::formats::{self, Format};
use crate::samples::{PairedSamples, RecordedRuns, SeriesKey, recording_runs};
use benchgate_api::agent::ComparisonConfig;

/// What the report says under every unpaired table: what the interval can and cannot cover.
pub const UNPAIRED_NOTE: &str = "Two recordings made at different times: each run counts once \
    and base and head runs are independent samples, not pairs, so drift of the machine between \
    the recordings is not cancelled (benchgate compare interleaves the two and cancels it).";

/// How the interval was tuned: to the recorded runs (no `--n-star`), or to a planned `n*`.
pub const TUNING_NOTES: [&str; 2] = [
    "Tuned for the runs recorded; to add runs later and look again at the same error level, \
     fix --n-star first.",
    "Tuned for --n-star: recording more runs and analysing again keeps the error level.",
];

/// What `analyze` found, before it is printed.
#[derive(Debug)]
pub struct AnalyzeOutcome {
    pub evaluation: Evaluation,
    /// Human-readable warnings (items a parser skipped, rows with one run per side), worded.
    pub warnings: Vec<String>,
    /// How each input was read, e.g. `base.json: read as pyperf (auto-detected), 20 runs`.
    pub formats_read: Vec<String>,
    /// Lines under the table: what two recordings cannot cancel, and how the interval is tuned.
    pub context: Vec<String>,
    /// What fails the gate: the flag, else the suite's `[gate] fail_on`, else `regression`.
    pub fail_on: crate::evaluate::FailOn,
}

/// One recording as read: its measurements, the format used, and what the parser skipped.
#[derive(Debug)]
pub struct ResultsFile {
    pub measurements: Vec<Measurement>,
    pub format: Format,
    /// Whether `format` was detected (`--format auto`) rather than named.
    pub detected: bool,
    /// What the parser skipped, each naming the file.
    pub warnings: Vec<String>,
}

impl ResultsFile {
    /// The line saying how the file was read and how many runs it holds, for stderr.
    pub fn read_as(&self, path: &Path) -> String {
        let how = if self.detected {
            "auto-detected"
        } else {
            "as configured"
        };
        let runs = recording_runs(&self.measurements).len();
        // A harness summary (JMH's `-rf text` table, a mean with its interval) has one
        // aggregate per benchmark and no samples of its own.
        let summary = self
            .measurements
            .iter()
            .all(|m| m.lower.is_some() && m.upper.is_some());
        let runs = match (summary, runs) {
            (true, 1) => "one run, a summary (one aggregate per benchmark, no samples)".to_owned(),
            (true, n) => format!("{n} runs, each a summary (one aggregate per benchmark)"),
            (false, 1) => "one run".to_owned(),
            (false, n) => format!("{n} runs"),
        };
        format!(
            "{}: read as {} ({how}), {runs}",
            path.display(),
            self.format
        )
    }
}

/// Runs the analysis of `args` without printing anything.
pub fn analyze(args: &AnalyzeArgs) -> Result<AnalyzeOutcome, CliError> {
    analyze_with(args, None)
}

/// The policy of `args`, with the rules and gate of the suite `--config` named: its rules
/// always, its `min_effect` and `fail_on` unless a flag says otherwise (as `compare --config`).
fn policy_of(args: &AnalyzeArgs, plan: Option<&ComparisonConfig>) -> (Policy, FailOn) {
    let mut policy = args.policy.policy();
    policy.assume_equal_spread = args.assume_equal_spread;
    let mut fail_on = args.policy.fail_on();
    if let Some(config) = plan {
        if args.policy.min_effect.is_none() {
            policy.min_effect_pct = 100.0 * config.gate.min_effect;
        }
        fail_on = args.policy.fail_on.unwrap_or(config.gate.fail_on);
        policy.rules = config.rules.clone();
        if args.policy.tolerance.is_none() {
            policy.tolerance = config.gate.tolerance;
        }
        if args.policy.rare_slow_runs.is_none() {
            policy.rare_slow_runs = config.gate.rare_slow_runs;
        }
        if args.policy.gate_on.is_none() {
            policy.gate_on = config.gate.gate_on;
        }
    }
    (policy, fail_on)
}

/// [`analyze`] judged by the rules and gate of `plan` (the suite `--config` named).
pub fn analyze_with(
    args: &AnalyzeArgs,
    plan: Option<&ComparisonConfig>,
) -> Result<AnalyzeOutcome, CliError> {
    let (policy, fail_on) = policy_of(args, plan);
    let base = read_side(&args.base_file, args.format)?;
    let head = read_side(&args.head_file, args.format)?;
    let mut formats_read = Vec::new();
    let mut warnings = Vec::new();
    for (path, file) in base.iter().chain(&head) {
        formats_read.push(file.read_as(path));
        warnings.extend(file.warnings.iter().cloned());
    }
    let measurements = |side: &[(PathBuf, ResultsFile)]| -> Vec<Vec<Measurement>> {
        side.iter().map(|(_, f)| f.measurements.clone()).collect()
    };
    let mut runs = RecordedRuns::from_recordings(&measurements(&base), &measurements(&head));
    for (_, file) in base.iter().chain(&head) {
        for m in &file.measurements {
            if formats::counts_exactly(file.format, &m.metric) {
                runs.declare_exact_count(SeriesKey {
                    benchmark: m.benchmark.clone(),
                    metric: m.metric.clone(),
                });
            }
        }
    }
    let count_runs = |side: &Recordings| -> usize {
        side.iter()
            .map(|(_, f)| recording_runs(&f.measurements).len())
            .sum()
    };
    formats_read.push(format!(
        "runs found: base {}, head {}",
        count_runs(&base),
        count_runs(&head)
    ));
    if runs.series().is_empty() {
        return Err(CliError::Input(format!(
            "{} and {} share no benchmark; nothing to compare",
            args.base_file.display(),
            args.head_file.display()
        )));
    }
    for s in runs.inexact_counts() {
        warnings.push(format!(
            "`{}` {}: its harness counts it exactly, but the values disagree between or within \
             runs, so it is analysed like a timing",
            s.key.benchmark, s.key.metric
        ));
    }
    if args.paired {
        return paired(
            args,
            &policy,
            fail_on,
            (&base, &head),
            warnings,
            formats_read,
        );
    }
    let single = runs
        .series()
        .iter()
        .filter(|s| s.base.len() == 1 && s.head.len() == 1 && !runs.is_exact(s))
        .count();
    if single > 0 {
        warnings.push(format!(
            "{single} of {} series have one run per side: no interval without several runs of \
             each; run `benchgate compare`, or record several runs (docs/configuration.md, \
             \"Recording runs for analyze\")",
            runs.series().len()
        ));
    }
    let floors = aa_floors(&args.aa, args.format)?;
    let tuning = match args.policy.n_star {
        Some(_) => RunsTuning::Planned,
        None => RunsTuning::RecordedRuns,
    };
    let evaluation = evaluate_runs(&runs, &policy, &floors, tuning);
    let mut context = vec![
        UNPAIRED_NOTE.to_owned(),
        TUNING_NOTES[usize::from(args.policy.n_star.is_some())].to_owned(),
    ];
    context.extend(fixed_n_lines(&evaluation));
    Ok(AnalyzeOutcome {
        evaluation,
        fail_on,
        warnings,
        formats_read,
        context,
    })
}

/// Rows shown with their fixed-n interval under the table; `--json` has every row's.
const FIXED_N_SHOWN: usize = 10;

/// The fixed-n (Welch t) interval of the gated rows, the ± a hand calculation of the same runs
/// gives, labelled as good for one look only.
fn fixed_n_lines(evaluation: &Evaluation) -> Vec<String> {
    let rows: Vec<String> = evaluation
        .results
        .iter()
        .filter(|r| r.gated)
        .filter_map(benchgate_stats::words::fixed_n)
        .collect();
    if rows.is_empty() {
        return Vec::new();
    }
    let mut lines = vec![format!(
        "Fixed-n t interval (Welch), valid for one look at these runs only, not safe to peek: {}",
        rows.iter()
            .take(FIXED_N_SHOWN)
            .cloned()
            .collect::<Vec<_>>()
            .join("; ")
    )];
    if rows.len() > FIXED_N_SHOWN {
        lines.push(format!(
            "… and {} more rows' fixed-n intervals in --json (fixed_interval_pct)",
            rows.len() - FIXED_N_SHOWN
        ));
    }
    lines
}

/// One side's recordings as read, each with its path.
type Recordings = [(PathBuf, ResultsFile)];

/// What `--paired` says under the table.
pub const PAIRED_NOTE: &str = "Recordings paired run by run (--paired): base run i and head run i \
    were taken one after the other, so drift of the machine is cancelled as in benchgate compare.";

/// `--paired`: base run i and head run i are one pair (recordings made interleaved), analysed
/// with `compare`'s paired interval.
fn paired(
    args: &AnalyzeArgs,
    policy: &Policy,
    fail_on: FailOn,
    (base, head): (&Recordings, &Recordings),
    warnings: Vec<String>,
    formats_read: Vec<String>,
) -> Result<AnalyzeOutcome, CliError> {
    let side_runs = |side: &Recordings| -> Vec<Vec<Measurement>> {
        side.iter()
            .flat_map(|(_, f)| recording_runs(&f.measurements))
            .collect()
    };
    let (base_runs, head_runs) = (side_runs(base), side_runs(head));
    if base_runs.len() != head_runs.len() {
        return Err(CliError::Usage(format!(
            "--paired pairs base run i with head run i, but base has {} runs and head {}: \
             record both sides the same number of times, interleaved, or leave out --paired",
            base_runs.len(),
            head_runs.len()
        )));
    }
    let mut samples = PairedSamples::default();
    for (b, h) in base_runs.iter().zip(&head_runs) {
        samples.push_round(b, h, true);
    }
    if samples.series().is_empty() {
        return Err(CliError::Input(format!(
            "{} and {} share no benchmark; nothing to compare",
            args.base_file.display(),
            args.head_file.display()
        )));
    }
    let floors = aa_floors(&args.aa, args.format)?;
    // As for unpaired recordings: tuned for the pairs recorded unless --n-star fixes it.
    let mut policy = policy.clone();
    if args.policy.n_star.is_none() {
        policy.n_star = (base_runs.len() as f64).max(2.0);
    }
    Ok(AnalyzeOutcome {
        evaluation: evaluate(&samples, &policy, &floors),
        fail_on,
        warnings,
        formats_read,
        context: vec![
            PAIRED_NOTE.to_owned(),
            TUNING_NOTES[usize::from(args.policy.n_star.is_some())].to_owned(),
        ],
    })
}

/// The recordings of one side: a file, a criterion directory, or a directory holding several
/// recordings (files, or criterion directories that each hold the same benchmarks).
pub fn read_side(path: &Path, format: Format) -> Result<Vec<(PathBuf, ResultsFile)>, CliError> {
    let recordings = recordings_in(path)
        .map_err(|e| CliError::Input(format!("cannot read {}: {e}", path.display())))?;
    match recordings {
        Some(paths) => paths
            .into_iter()
            .map(|p| read_results_file(&p, format).map(|f| (p, f)))
            .collect(),
        None => Ok(vec![(path.to_owned(), read_results_file(path, format)?)]),
    }
}

/// The recordings inside `dir` when it holds several, in name order; `None` when `path` is one
/// recording itself (a file or one criterion tree). Hidden entries and READMEs are skipped.
fn recordings_in(path: &Path) -> std::io::Result<Option<Vec<PathBuf>>> {
    if !path.is_dir() {
        return Ok(None);
    }
    let mut entries: Vec<PathBuf> = std::fs::read_dir(path)?
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| {
            p.file_name().and_then(|n| n.to_str()).is_some_and(|n| {
                !n.starts_with('.') && !n.to_ascii_lowercase().starts_with("readme")
            })
        })
        .collect();
    entries.sort();
    if entries.iter().any(|p| p.is_file()) {
        return Ok(Some(entries));
    }
    // Criterion writes only directories; subdirectories that each read as a criterion tree of
    // the same benchmarks are copies of `target/criterion` from several runs.
    if entries.len() < 2 {
        return Ok(None);
    }
    let mut names: Option<Vec<String>> = None;
    for entry in &entries {
        let Ok(ms) = formats::read_criterion_dir(entry, formats::CRITERION_LATEST) else {
            return Ok(None);
        };
        let mut these: Vec<String> = ms.into_iter().map(|m| m.benchmark).collect();
        these.dedup();
        match &names {
            Some(first) if *first != these => return Ok(None),
            Some(_) => {}
            None => names = Some(these),
        }
    }
    Ok(Some(entries))
}

/// Reads one results file and says how it was read (the format, detected or named) and what
/// the parser skipped. Every value must be finite and positive (zero for a counter), and the
/// file must hold at least one benchmark.
pub fn read_results_file(path: &Path, format: Format) -> Result<ResultsFile, CliError> {
    let shown = path.display();
    let detected = format == Format::Auto;
    if format == Format::Command {
        return Err(CliError::Usage(
            "--format command measures processes; analyze reads files: name their format".into(),
        ));
    }
    // criterion keeps its results as a directory tree (target/criterion), not one file.
    let (text, parsed) = if path.is_dir() {
        let parsed = formats::read_results_path(format, path)
            .map_err(|e| CliError::Input(format!("{shown}: {e}")))?;
        (String::new(), parsed)
    } else {
        let text = std::fs::read_to_string(path)
            .map_err(|e| CliError::Input(format!("cannot read {shown}: {e}")))?;
        if text.trim().is_empty() {
            return Err(CliError::Input(format!("{shown} is empty")));
        }
        let format = match format {
            Format::Auto => formats::detect(&text)
                .map_err(|e| CliError::Input(format!("{shown}: cannot tell its format: {e}")))?,
            f => f,
        };
        let parsed = formats::parse_report(format, &text)
            .map_err(|e| CliError::Input(format!("{shown}: {e}")))?;
        (text, parsed)
    };
    let format = parsed.format;
    let measurements = parsed.measurements;
    let warnings = parsed
        .warnings
        .into_iter()
        .map(|w| format!("{shown}: {w}"))
        .collect();
    if measurements.is_empty() {
        return Err(CliError::Input(format!(
            "{shown}: no benchmark results found in it as {format}"
        )));
    }
    let mut seen: HashMap<(&str, &str), usize> = HashMap::new();
    for (i, m) in measurements.iter().enumerate() {
        let nth = seen.entry((&m.benchmark, &m.metric)).or_default();
        *nth += 1;
        // A harness may legitimately report a zero counter (0 B/op); the engine then declines
        // that one series. A number the user wrote as a timing must be positive, and nothing
        // may be negative or non-finite.
        let zero_allowed = format != Format::Raw && m.value == 0.0;
        if !(m.value.is_finite() && (m.value > 0.0 || zero_allowed)) {
            let place = match (format, raw_line(&text, i)) {
                (Format::Raw, Some(line)) => format!("line {line}"),
                _ => format!("benchmark {} {}, sample {}", m.benchmark, m.metric, *nth),
            };
            return Err(CliError::Input(format!(
                "{shown}, {place}: value {} is not a positive number; timings and counters must be > 0",
                m.value
            )));
        }
    }
    Ok(ResultsFile {
        measurements,
        format,
        detected,
        warnings,
    })
}

/// The 1-based line of the `index`-th sample of a `raw` file (blank and `#` lines skipped).
fn raw_line(text: &str, index: usize) -> Option<usize> {
    text.lines()
        .enumerate()
        .filter(|(_, l)| !l.trim().is_empty() && !l.trim().starts_with('#'))
        .nth(index)
        .map(|(i, _)| i + 1)
}

/// Noise floors per series from A/A recordings given in (base, head) pairs, one pair per
/// session; each session's runs are compared unpaired, as the A/B recordings are.
fn aa_floors(
    files: &[PathBuf],
    format: Format,
) -> Result<HashMap<SeriesKey, NoiseFloor>, CliError> {
    if files.len() % 2 == 1 {
        return Err(CliError::Usage(format!(
            "--aa takes recordings in pairs (base and head of one A/A session); got {}",
            files.len()
        )));
    }
    type Session = (Vec<f64>, Vec<f64>);
    let mut sessions: HashMap<SeriesKey, Vec<Session>> = HashMap::new();
    for pair in files.chunks(2) {
        let side = |path: &Path| -> Result<Vec<Vec<Measurement>>, CliError> {
            Ok(read_side(path, format)?
                .into_iter()
                .map(|(_, f)| f.measurements)
                .collect())
        };
        let runs = RecordedRuns::from_recordings(&side(&pair[0])?, &side(&pair[1])?);
        for s in runs.series() {
            sessions
                .entry(s.key.clone())
                .or_default()
                .push((s.base.clone(), s.head.clone()));
        }
    }
    Ok(sessions
        .into_iter()
        .filter_map(|(key, s)| Some((key, NoiseFloor::from_unpaired_sessions(&s).ok()?)))
        .collect())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn raw_lines_skip_blanks_and_comments() {
        let text = "# header\n1.0\n\n2.0\n-3\n";
        assert_eq!(raw_line(text, 0), Some(2));
        assert_eq!(raw_line(text, 2), Some(5));
        assert_eq!(raw_line(text, 3), None);
    }
}
