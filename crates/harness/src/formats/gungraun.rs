//! gungraun (formerly iai-callgrind) console output:
//!
//! ```text
//! my_bench::group::bench_fibonacci short:10
//!   Instructions:                1734|1650            (+5.09090%) [+1.04844x]
//!   L1 Hits:                     2359|2275            (+3.69230%) [+1.03560x]
//! ```
//!
//! Each `Label: new|old (change)` line becomes one measurement of the **new** value, the run
//! this output belongs to (`old` is the tool's own baseline, which benchgate does not need).
//! The counts are deterministic, so one run per side is a sample; metric names are the labels in
//! snake case (`instructions`, `l1_hits`, `estimated_cycles`), unit `count` (or `bytes` for
//! DHAT's byte counts, `%` for hit and miss rates), lower is better except hit rates. Tools
//! other than callgrind (`======= DHAT ====` sections) prefix their metrics (`dhat_total_bytes`).
//! The older iai-callgrind layout without `|old` (`Instructions: 1734 (No change)`) reads too.

use super::error::column_of;
use super::units::{self, number};
use super::{Format, ParseError, Parsed, unit};
use benchgate_api::metric::Direction;

/// Whether `line` is one of gungraun's metric lines (`  Instructions:   1734|N/A  (…)`).
pub(crate) fn is_metric_line(line: &str) -> bool {
    metric_parts(line).is_some_and(|(_, value)| value_token(value).is_some())
}

/// The label and the text after its colon, for an indented `Label: value…` line.
fn metric_parts(line: &str) -> Option<(&str, &str)> {
    if !line.starts_with(' ') {
        return None;
    }
    let (label, rest) = line.trim_start().split_once(':')?;
    let plain = !label.is_empty()
        && label
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, ' ' | '+' | '-' | '_'));
    plain.then_some((label, rest))
}

/// The new value's text: before `|`, or before the first space in the older layout.
fn value_token(rest: &str) -> Option<&str> {
    let rest = rest.trim_start();
    let token = rest.split_whitespace().next()?;
    let new = token.split('|').next()?;
    let looks_numeric = new == "N/A" || new.chars().next().is_some_and(|c| c.is_ascii_digit());
    // The old layout has `(change)` after the number; a foreign `key: value` line has not.
    let layout = token.contains('|') || rest[token.len()..].trim_start().starts_with('(');
    (looks_numeric && layout).then_some(new)
}

/// Parse gungraun / iai-callgrind output.
pub(crate) fn parse(text: &str) -> Result<Parsed, ParseError> {
    let mut out = Vec::new();
    let mut warnings = Vec::new();
    let mut pending: Vec<&str> = Vec::new();
    let mut benchmark: Option<String> = None;
    let mut tool: Option<String> = None;
    let mut after_metric = true;
    for (i, raw) in text.lines().enumerate() {
        let line = raw.trim_end_matches('\r');
        let line_no = i + 1;
        if line.trim().is_empty() {
            pending.clear();
            after_metric = true;
            continue;
        }
        if !line.starts_with(' ') {
            // A benchmark's name, possibly over several lines (an id whose argument has
            // newlines); other text (`running 0 tests`, summaries) is never followed by metrics.
            if after_metric {
                pending.clear();
                tool = None;
            }
            pending.push(line.trim());
            after_metric = false;
            continue;
        }
        let trimmed = line.trim();
        if let Some(section) = trimmed.strip_prefix("=======") {
            tool = Some(
                section
                    .trim_matches(|c: char| c == '=' || c == ' ')
                    .to_lowercase(),
            );
            continue;
        }
        let Some((label, rest)) = metric_parts(line) else {
            continue;
        };
        let Some(new) = value_token(rest) else {
            continue;
        };
        if !pending.is_empty() {
            benchmark = Some(pending.join(" "));
            pending.clear();
        }
        after_metric = true;
        let Some(name) = benchmark.as_deref() else {
            return Err(ParseError::at_line(
                Format::Gungraun,
                line_no,
                Some(1),
                format!(
                    "expected a benchmark name before the metric `{}`",
                    label.trim()
                ),
            ));
        };
        let metric_name = metric_name(tool.as_deref(), label);
        if new == "N/A" {
            warnings.push(format!(
                "gungraun: `{name}` {metric_name} has no current value (N/A); skipped"
            ));
            continue;
        }
        let value = number(new).ok_or_else(|| {
            ParseError::at_line(
                Format::Gungraun,
                line_no,
                column_of(line, new),
                format!("expected a count before `|`, found {new:?}"),
            )
        })?;
        let lower = label.to_ascii_lowercase();
        let (unit_name, direction) = if lower.ends_with(" rate") {
            let better = if lower.contains("hit") {
                Direction::HigherIsBetter
            } else {
                Direction::LowerIsBetter
            };
            ("%", better)
        } else if lower.contains("bytes") {
            (unit::BYTES, Direction::LowerIsBetter)
        } else {
            (unit::COUNT, Direction::LowerIsBetter)
        };
        out.push(
            units::measurement(name, &metric_name, unit_name, value).with_direction(direction),
        );
    }
    Ok(Parsed {
        format: Format::Gungraun,
        measurements: out,
        warnings,
    })
}

/// `L1 Hits` → `l1_hits`, `Total read+write` → `total_read_write`; prefixed by the tool when it
/// is not callgrind (`dhat_total_bytes`).
fn metric_name(tool: Option<&str>, label: &str) -> String {
    let mut name = String::new();
    if let Some(t) = tool.filter(|t| *t != "callgrind") {
        name.push_str(t);
        name.push('_');
    }
    let mut gap = false;
    for c in label.trim().chars() {
        if c.is_ascii_alphanumeric() {
            if gap && !name.is_empty() && !name.ends_with('_') {
                name.push('_');
            }
            name.push(c.to_ascii_lowercase());
            gap = false;
        } else {
            gap = true;
        }
    }
    name
}
