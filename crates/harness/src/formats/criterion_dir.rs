//! criterion.rs's saved results: `target/criterion/<group>/<bench>/<baseline>/{sample,estimates,benchmark}.json`.
//!
//! `sample.json` holds every sample criterion took (`iters[i]` iterations in `times[i]` ns), so
//! it gives one measurement per sample. `estimates.json` holds only criterion's summary; it is
//! used when a baseline has no samples. Criterion 0.3, 0.4 and 0.5 share this layout: `new/` is
//! the latest run, `base/` the one before (or `--save-baseline NAME` gives `NAME/`), `change/`
//! compares the two and `report/` holds HTML; only the baseline asked for is read.

use std::fs;
use std::path::{Path, PathBuf};

use benchgate_api::Direction;

use super::json::{self, Node};
use super::units;
use super::{Format, Location, Measurement, ParseError, Parsed, metric, parse_report, unit};

/// Per-iteration times from a criterion `sample.json`, one measurement per sample, in order.
/// Older criterion wrote the two lists as a bare pair `[[iters…], [times…]]`; both are read.
pub fn criterion_samples(benchmark: &str, text: &str) -> Result<Vec<Measurement>, ParseError> {
    let value = json::parse(Format::Criterion, text)?;
    let root = Node::root(Format::Criterion, &value);
    let (iters_node, times_node) = match root.value.as_array() {
        Some(_) => {
            let pair = root.items()?;
            if pair.len() != 2 {
                return Err(root.error(format!(
                    "expected `iters` and `times` (an object, or a pair of arrays), found {} arrays",
                    pair.len()
                )));
            }
            (pair[0].clone(), pair[1].clone())
        }
        None => (root.field("iters")?, root.field("times")?),
    };
    let iters = iters_node.items()?;
    let times = times_node.items()?;
    if iters.len() != times.len() {
        return Err(times_node.error(format!(
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
        let per_iteration = t.checked(t.quantity()? / count)?;
        out.push(units::directed(
            benchmark,
            metric::TIME,
            unit::NS,
            per_iteration,
            Direction::LowerIsBetter,
        ));
    }
    Ok(out)
}

/// criterion's estimate from `estimates.json`: the slope when it sampled linearly (what its
/// console shows), else the mean; with its confidence interval as bounds.
pub fn criterion_estimates(benchmark: &str, text: &str) -> Result<Measurement, ParseError> {
    let value = json::parse(Format::Criterion, text)?;
    let root = Node::root(Format::Criterion, &value);
    // Criterion before 0.3 capitalised the names (`Slope`, `Mean`).
    let estimate = match root.get("slope").or_else(|| root.get("Slope")) {
        Some(slope) => slope,
        None => match root.get("Mean") {
            Some(mean) => mean,
            None => root.field("mean")?,
        },
    };
    let point = estimate.field("point_estimate")?.quantity()?;
    let interval = estimate.field("confidence_interval")?;
    let lower = interval.field("lower_bound")?.number()?;
    let upper = interval.field("upper_bound")?.number()?;
    Ok(
        units::bounded(benchmark, metric::TIME, unit::NS, (lower, point, upper))
            .with_direction(Direction::LowerIsBetter),
    )
}

/// The baseline `analyze DIR DIR` reads from a criterion directory: the latest run.
pub const CRITERION_LATEST: &str = "new";

/// Read a results path as `analyze` is given it: a file is parsed as `format` (see
/// [`parse_report`]); a directory is criterion's `target/criterion` tree (or one benchmark's
/// part of it), read at baseline [`CRITERION_LATEST`].
pub fn read_results_path(format: Format, path: &Path) -> Result<Parsed, ParseError> {
    if path.is_dir() {
        if !matches!(format, Format::Auto | Format::Criterion) {
            return Err(ParseError::new(
                format,
                Location::File(path.display().to_string()),
                "expected a file: only criterion's results come as a directory \
                 (target/criterion); give the file this harness wrote",
            ));
        }
        let measurements = read_criterion_dir(path, CRITERION_LATEST)?;
        return Ok(Parsed::clean(Format::Criterion, measurements));
    }
    let text = fs::read_to_string(path).map_err(|e| io_error(path, &e))?;
    parse_report(format, &text)
}

/// Read every benchmark under a criterion directory (usually `target/criterion`) for one
/// baseline (`new` for the latest run, or a name given to `--save-baseline`).
///
/// Benchmarks come in path order; each is named by `benchmark.json`'s `full_id` (criterion's
/// own `group/function/value`), or by its directory path when that file is missing.
pub fn read_criterion_dir(root: &Path, baseline: &str) -> Result<Vec<Measurement>, ParseError> {
    let mut dirs = Vec::new();
    if has_results(root) {
        // The path is a baseline directory itself (`…/bench/new`).
        dirs.push(root.to_path_buf());
    } else {
        collect_baseline_dirs(root, baseline, &mut dirs)?;
    }
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
        if is_baseline && has_results(&child) {
            out.push(child);
        } else {
            collect_baseline_dirs(&child, baseline, out)?;
        }
    }
    Ok(())
}

fn has_results(dir: &Path) -> bool {
    dir.join("sample.json").is_file() || dir.join("estimates.json").is_file()
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
    let relative = match bench_dir.strip_prefix(root) {
        Ok(r) if !r.as_os_str().is_empty() => r,
        // The root is the benchmark (or baseline) directory itself: name it by its own name.
        _ => Path::new(bench_dir.file_name().unwrap_or(bench_dir.as_os_str())),
    };
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
