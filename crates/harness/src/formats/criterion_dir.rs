//! criterion.rs's saved results: `target/criterion/<benchmark>/<baseline>/{sample,estimates}.json`.
//!
//! `sample.json` holds every sample criterion took (`iters[i]` iterations in `times[i]` ns), so
//! it gives one measurement per sample. `estimates.json` holds only criterion's summary; it is
//! used when a baseline has no samples.

use std::fs;
use std::path::{Path, PathBuf};

use super::json::{self, Node};
use super::units;
use super::{Format, Location, Measurement, ParseError, metric, unit};

/// Per-iteration times from a criterion `sample.json`, one measurement per sample, in order.
pub fn criterion_samples(benchmark: &str, text: &str) -> Result<Vec<Measurement>, ParseError> {
    let value = json::parse(Format::Criterion, text)?;
    let root = Node::root(Format::Criterion, &value);
    let iters = root.field("iters")?.items()?;
    let times = root.field("times")?.items()?;
    if iters.len() != times.len() {
        return Err(root.field("times")?.error(format!(
            "expected as many times as iters ({}), found {}",
            iters.len(),
            times.len()
        )));
    }
    let mut out = Vec::with_capacity(times.len());
    for (n, t) in iters.iter().zip(&times) {
        let count = n.number()?;
        if count <= 0.0 {
            return Err(n.error(format!(
                "expected a positive iteration count, found {count}"
            )));
        }
        let total = t.number()?;
        out.push(units::measurement(
            benchmark,
            metric::TIME,
            unit::NS,
            total / count,
        ));
    }
    Ok(out)
}

/// criterion's estimate from `estimates.json`: the slope when it sampled linearly (what its
/// console shows), else the mean; with its confidence interval as bounds.
pub fn criterion_estimates(benchmark: &str, text: &str) -> Result<Measurement, ParseError> {
    let value = json::parse(Format::Criterion, text)?;
    let root = Node::root(Format::Criterion, &value);
    let estimate = match root.get("slope") {
        Some(slope) => slope,
        None => root.field("mean")?,
    };
    let point = estimate.field("point_estimate")?.number()?;
    let interval = estimate.field("confidence_interval")?;
    let lower = interval.field("lower_bound")?.number()?;
    let upper = interval.field("upper_bound")?.number()?;
    Ok(units::bounded(
        benchmark,
        metric::TIME,
        unit::NS,
        (lower, point, upper),
    ))
}

/// Read every benchmark under a criterion directory (usually `target/criterion`) for one
/// baseline (`new` for the latest run, or a name given to `--save-baseline`).
///
/// Benchmarks come in path order; each is named by `benchmark.json`'s `full_id` (criterion's
/// own `group/function/value`), or by its directory path when that file is missing.
pub fn read_criterion_dir(root: &Path, baseline: &str) -> Result<Vec<Measurement>, ParseError> {
    let mut dirs = Vec::new();
    collect_baseline_dirs(root, baseline, &mut dirs)?;
    if dirs.is_empty() {
        return Err(ParseError::new(
            Format::Criterion,
            Location::File(root.display().to_string()),
            format!(
                "expected criterion results: no `{baseline}/sample.json` or \
                 `{baseline}/estimates.json` below this directory"
            ),
        ));
    }
    let mut out = Vec::new();
    for dir in dirs {
        let name = benchmark_name(root, &dir)?;
        let samples = dir.join("sample.json");
        if samples.is_file() {
            out.extend(
                criterion_samples(&name, &read(&samples)?).map_err(|e| in_file(e, &samples))?,
            );
        } else {
            let estimates = dir.join("estimates.json");
            out.push(
                criterion_estimates(&name, &read(&estimates)?)
                    .map_err(|e| in_file(e, &estimates))?,
            );
        }
    }
    Ok(out)
}

fn collect_baseline_dirs(
    dir: &Path,
    baseline: &str,
    out: &mut Vec<PathBuf>,
) -> Result<(), ParseError> {
    let entries = fs::read_dir(dir).map_err(|e| io_error(dir, &e))?;
    let mut children: Vec<PathBuf> = entries
        .filter_map(|entry| entry.ok().map(|e| e.path()))
        .filter(|p| p.is_dir())
        .collect();
    children.sort();
    for child in children {
        let is_baseline = child.file_name().is_some_and(|n| n == baseline);
        let has_results =
            child.join("sample.json").is_file() || child.join("estimates.json").is_file();
        if is_baseline && has_results {
            out.push(child);
        } else {
            collect_baseline_dirs(&child, baseline, out)?;
        }
    }
    Ok(())
}

fn benchmark_name(root: &Path, baseline_dir: &Path) -> Result<String, ParseError> {
    let file = baseline_dir.join("benchmark.json");
    if file.is_file() {
        let text = read(&file)?;
        let value = json::parse(Format::Criterion, &text).map_err(|e| in_file(e, &file))?;
        let node = Node::root(Format::Criterion, &value);
        let id = node
            .field("full_id")
            .and_then(|n| n.str())
            .map_err(|e| in_file(e, &file))?;
        return Ok(id.to_string());
    }
    let bench_dir = baseline_dir.parent().unwrap_or(baseline_dir);
    let relative = bench_dir.strip_prefix(root).unwrap_or(bench_dir);
    Ok(relative.to_string_lossy().replace('\\', "/"))
}

fn read(path: &Path) -> Result<String, ParseError> {
    fs::read_to_string(path).map_err(|e| io_error(path, &e))
}

fn io_error(path: &Path, err: &std::io::Error) -> ParseError {
    ParseError::new(
        Format::Criterion,
        Location::File(path.display().to_string()),
        format!("expected a readable file or directory ({err})"),
    )
}

/// Say which file a JSON error came from; the field or line stays in the message.
fn in_file(err: ParseError, path: &Path) -> ParseError {
    ParseError::new(
        err.format,
        Location::File(path.display().to_string()),
        format!("{}: {}", err.location, err.message),
    )
}
