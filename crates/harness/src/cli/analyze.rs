//! `benchgate analyze BASE_FILE HEAD_FILE`: benchstat, but paired and honest. Reads two result
//! files in any format the parsers know, pairs each benchmark's samples by order, and reports
//! the anytime-valid interval and verdict of each.

use std::collections::HashMap;
use std::path::Path;

use benchgate_api::Measurement;
use benchgate_stats::NoiseFloor;

use crate::cli::CliError;
use crate::cli::args::AnalyzeArgs;
use crate::evaluate::{Evaluation, evaluate};
use crate::formats::{self, Format};
use crate::samples::{PairedSamples, SeriesKey};

/// What `analyze` found, before it is printed.
#[derive(Debug)]
pub struct AnalyzeOutcome {
    pub evaluation: Evaluation,
    /// Human-readable warnings (unequal sample counts, items a parser skipped), already worded.
    pub warnings: Vec<String>,
    /// How each input file was read, e.g. `base.json: read as pyperf (auto-detected)`.
    pub formats_read: Vec<String>,
}

/// One results file as read: its measurements, the format used, and what the parser skipped.
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
    /// The line saying how the file was read, for stderr.
    pub fn read_as(&self, path: &Path) -> String {
        let how = if self.detected {
            "auto-detected"
        } else {
            "as configured"
        };
        format!("{}: read as {} ({how})", path.display(), self.format)
    }
}

/// Runs the analysis of `args` without printing anything.
pub fn analyze(args: &AnalyzeArgs) -> Result<AnalyzeOutcome, CliError> {
    let base_file = read_results_file(&args.base_file, args.format)?;
    let head_file = read_results_file(&args.head_file, args.format)?;
    let formats_read = vec![
        base_file.read_as(&args.base_file),
        head_file.read_as(&args.head_file),
    ];
    let mut warnings: Vec<String> = base_file.warnings;
    warnings.extend(head_file.warnings);
    let (base, head) = (base_file.measurements, head_file.measurements);
    let (samples, mismatches) = PairedSamples::pair_by_order(&base, &head);
    let pairing_warnings: Vec<String> = mismatches
        .iter()
        .map(|m| {
            format!(
                "{} {}: {} has {} sample(s), {} has {}; pairing the first {}",
                m.key.benchmark,
                m.key.metric,
                args.base_file.display(),
                m.base,
                args.head_file.display(),
                m.head,
                m.base.min(m.head)
            )
        })
        .collect();
    warnings.extend(pairing_warnings);
    if samples.series().is_empty() {
        return Err(CliError::Input(format!(
            "{} and {} share no benchmark; nothing to compare",
            args.base_file.display(),
            args.head_file.display()
        )));
    }
    let floors = aa_floors(&args.aa, args.format)?;
    Ok(AnalyzeOutcome {
        evaluation: evaluate(&samples, &args.policy.policy(), &floors),
        warnings,
        formats_read,
    })
}

/// Reads one results file: every value finite and positive, at least one benchmark.
pub fn read_results(path: &Path, format: Format) -> Result<Vec<Measurement>, CliError> {
    read_results_file(path, format).map(|f| f.measurements)
}

/// Reads one results file and says how it was read (the format, detected or named) and what
/// the parser skipped; the values are checked as [`read_results`] says.
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

/// Noise floors per series from A/A files given in (base, head) pairs, one pair per session.
fn aa_floors(
    files: &[std::path::PathBuf],
    format: Format,
) -> Result<HashMap<SeriesKey, NoiseFloor>, CliError> {
    if files.len() % 2 == 1 {
        return Err(CliError::Usage(format!(
            "--aa takes files in pairs (base and head of one A/A session); got {}",
            files.len()
        )));
    }
    let mut sessions: HashMap<SeriesKey, Vec<Vec<f64>>> = HashMap::new();
    for pair in files.chunks(2) {
        let base = read_results(&pair[0], format)?;
        let head = read_results(&pair[1], format)?;
        let (samples, _) = PairedSamples::pair_by_order(&base, &head);
        for s in samples.series().iter().filter(|s| s.base.len() >= 2) {
            let d = s
                .base
                .iter()
                .zip(&s.head)
                .map(|(b, h)| (h / b).ln())
                .collect();
            sessions.entry(s.key.clone()).or_default().push(d);
        }
    }
    Ok(sessions
        .into_iter()
        .filter_map(|(key, d)| Some((key, NoiseFloor::from_sessions(&d).ok()?)))
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
