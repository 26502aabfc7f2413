//! `format = "auto"`: recognise a harness from its output.
//!
//! Each check looks for something only one harness writes; they run most specific first, so a
//! text that two could claim (divan's `│` rules, which benchstat also draws; gungraun's output,
//! which starts with libtest's `running 0 tests`) goes to the one that wrote it. When nothing
//! fits, the error lists every format checked and what it looked for.

use serde_json::Value;

use super::{Format, Location, ParseError, benchstat, divan, go, gungraun, jmh_text};

/// Recognise which harness wrote `text`. JSON is told apart by its members; text by the lines
/// only one harness writes. benchstat summaries are refused here with their own message.
pub fn detect(text: &str) -> Result<Format, ParseError> {
    let trimmed = text.trim_start_matches('\u{feff}').trim_start();
    if trimmed.is_empty() {
        return Err(ParseError::new(
            Format::Auto,
            Location::Input,
            "expected benchmark output, found nothing (empty, or only white space)",
        ));
    }
    if trimmed.starts_with('{') || trimmed.starts_with('[') {
        // Bracketed text that is not JSON still falls through to the text checks: raw output
        // cannot start with a bracket, so this ends in an error that shows the JSON problem.
        return match serde_json::from_str::<Value>(trimmed) {
            Ok(value) => detect_json(&value),
            Err(e) => Err(ParseError::json_syntax(Format::Auto, &e)),
        };
    }
    if trimmed.starts_with('<') {
        return Ok(Format::Catch2);
    }
    let lines = || text.lines().map(|l| l.trim_end_matches('\r'));
    if lines().any(divan::is_header) {
        return Ok(Format::Divan);
    }
    if lines().any(gungraun::is_metric_line) {
        return Ok(Format::Gungraun);
    }
    if lines().any(jmh_text::is_header) {
        return Ok(Format::Jmh);
    }
    if benchstat::is_summary(text) {
        return Err(benchstat::summary_error(Format::Auto));
    }
    if lines().any(|l| go::result_fields(l).is_some()) {
        return Ok(Format::Go);
    }
    if lines().any(|l| l.contains("time:") && l.contains('[') && l.contains(']')) {
        return Ok(Format::Criterion);
    }
    if lines().any(|l| l.starts_with("benchmark name") && l.contains("samples")) {
        return Ok(Format::Catch2);
    }
    let libtest = lines().any(|l| {
        let l = l.trim_start();
        (l.starts_with("test ") && l.contains(" ... bench:"))
            || l.starts_with("running ")
            || l.starts_with("test result:")
    });
    if libtest {
        return Ok(Format::Libtest);
    }
    let not_raw = lines().enumerate().find(|(_, l)| {
        let l = l.trim();
        !(l.is_empty()
            || l.starts_with('#')
            || l.split_whitespace()
                .next()
                .is_some_and(|t| super::units::number(t).is_some()))
    });
    let Some((line_no, line)) = not_raw else {
        return Ok(Format::Raw);
    };
    let shown: String = line.trim().chars().take(40).collect();
    Err(ParseError::new(
        Format::Auto,
        Location::Input,
        format!(
            "expected output of a known harness; checked: divan (no `fastest │ slowest │ median \
             │ mean` header), gungraun (no `  Instructions: N|old` line), jmh (no `Benchmark … \
             Mode … Score … Units` table), go (no `BenchmarkName  N  V ns/op` line), criterion \
             (no `time: [… … …]` line), catch2 (no `benchmark name … samples` header, not XML), \
             libtest (no `test … ... bench:` line), raw (line {} is not a number: {shown:?}), \
             and JSON formats (not JSON); name the format with --format (`format` in \
             .benchgate.toml)",
            line_no + 1
        ),
    ))
}

fn detect_json(value: &Value) -> Result<Format, ParseError> {
    let has = |v: &Value, key: &str| v.get(key).is_some();
    let first_item = |v: &Value, key: &str| v.get(key).and_then(|a| a.as_array()?.first().cloned());
    if let Some(array) = value.as_array() {
        if array
            .iter()
            .any(|run| has(run, "primaryMetric") || has(run, "jmhVersion"))
        {
            return Ok(Format::Jmh);
        }
    } else if has(value, "results")
        && first_item(value, "results").is_none_or(|r| has(&r, "command") || has(&r, "times"))
    {
        return Ok(Format::Hyperfine);
    } else if has(value, "Benchmarks") {
        return Ok(Format::Dotnet);
    } else if has(value, "benchmarks") {
        // pyperf's benchmarks hold `runs`; Google Benchmark's hold `real_time` directly.
        if first_item(value, "benchmarks").is_some_and(|b| has(&b, "runs")) {
            return Ok(Format::Pyperf);
        }
        let pytest = has(value, "machine_info")
            || first_item(value, "benchmarks").is_some_and(|b| has(&b, "stats"));
        return Ok(if pytest {
            Format::Pytest
        } else {
            Format::Google
        });
    } else if let Some(object) = value.as_object() {
        let bmf = !object.is_empty()
            && object.values().all(|measures| {
                measures
                    .as_object()
                    .is_some_and(|m| !m.is_empty() && m.values().all(|v| v.get("value").is_some()))
            });
        if bmf {
            return Ok(Format::Bmf);
        }
    }
    if has(value, "rounds") && has(value, "machine") && has(value, "schedule") {
        return Err(ParseError::new(
            Format::Auto,
            Location::Input,
            "this is a `benchgate compare --record` file: it holds the interleaved rounds of \
             both sides and the report that session printed, not one side's results",
        ));
    }
    let kind = if value.is_array() {
        "an array"
    } else {
        "an object"
    };
    Err(ParseError::new(
        Format::Auto,
        Location::Input,
        format!(
            "expected JSON from a known harness; checked ({kind} found): jmh (no array of runs \
             with `primaryMetric`), hyperfine (no `results[]` with `command`/`times`), dotnet \
             (no `Benchmarks`), pyperf (no `benchmarks[].runs`), pytest and google (no \
             `benchmarks`), bmf (not every member holds measures with a `value`); name the \
             format with --format (`format` in .benchgate.toml)"
        ),
    ))
}
